//! What a run returns: every step's outcome, complete or not.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::memory::MemoryEntry;
use super::retry::StepError;
use crate::llm::TokenUsage;

/// Where a step ended up.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum StepState {
    /// It ran and its output passed every check.
    Complete,
    /// It had completed in an earlier run of the same stored plan; its stored working
    /// memory was reused and it did not run again.
    Resumed,
    /// It failed (after its retries), was denied, or its output was blocked.
    Failed,
    /// A step it depends on failed or was skipped.
    Skipped,
    /// The run was cancelled before it started.
    Cancelled,
}

impl StepState {
    /// Whether its working memory is available (complete or resumed).
    pub fn succeeded(self) -> bool {
        matches!(self, StepState::Complete | StepState::Resumed)
    }

    /// `complete`, `resumed`, `failed`, `skipped` or `cancelled`.
    pub fn as_str(self) -> &'static str {
        match self {
            StepState::Complete => "complete",
            StepState::Resumed => "resumed",
            StepState::Failed => "failed",
            StepState::Skipped => "skipped",
            StepState::Cancelled => "cancelled",
        }
    }
}

/// One step's outcome.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct StepResult {
    /// The step's id.
    pub step_id: String,
    /// Its number in the plan.
    pub number: u32,
    /// The skill it runs.
    pub skill: String,
    /// Where it ended up.
    pub state: StepState,
    /// Attempts made in this run (0 when it did not run).
    pub attempts: u32,
    /// Wall time over all attempts and waits.
    pub duration: Duration,
    /// The checked output, tokens restored for the executor's recipient clearance.
    pub output: Option<String>,
    /// Its working-memory entry with its status: the output's when it succeeded; the reason
    /// when it failed, was denied, skipped or cancelled (`None` only for results built by
    /// hand).
    pub memory: Option<MemoryEntry>,
    /// Why it failed, or why it was skipped or cancelled.
    pub error: Option<StepError>,
    /// Tokens used over all attempts (summaries included).
    pub usage: TokenUsage,
}

impl StepResult {
    pub(crate) fn new(step_id: &str, number: u32, skill: &str, state: StepState) -> Self {
        StepResult {
            step_id: step_id.to_owned(),
            number,
            skill: skill.to_owned(),
            state,
            attempts: 0,
            duration: Duration::ZERO,
            output: None,
            memory: None,
            error: None,
            usage: TokenUsage::default(),
        }
    }
}

/// A run's outcome: partial when steps failed, were skipped or cancelled.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ExecutionResult {
    /// The plan's id.
    pub plan_id: String,
    /// Every step, in plan order.
    pub steps: Vec<StepResult>,
    /// Whether every step completed (now or in an earlier run).
    pub success: bool,
    /// Whether the run was cancelled before every step was decided.
    pub cancelled: bool,
    /// Wall time of the run.
    pub duration: Duration,
    /// Tokens used, over all steps.
    pub usage: TokenUsage,
}

impl ExecutionResult {
    /// The outcome of step `id`.
    pub fn step(&self, id: &str) -> Option<&StepResult> {
        self.steps.iter().find(|step| step.step_id == id)
    }

    /// The working memory of the steps that succeeded (complete entries), in plan order.
    pub fn memory(&self) -> impl Iterator<Item = &MemoryEntry> {
        self.working_memory().filter(|entry| entry.completed())
    }

    /// Every step's working-memory entry, whatever its status, in plan order.
    pub fn working_memory(&self) -> impl Iterator<Item = &MemoryEntry> {
        self.steps.iter().filter_map(|step| step.memory.as_ref())
    }

    /// The steps in `state`, in plan order.
    pub fn in_state(&self, state: StepState) -> impl Iterator<Item = &StepResult> {
        self.steps.iter().filter(move |step| step.state == state)
    }
}
