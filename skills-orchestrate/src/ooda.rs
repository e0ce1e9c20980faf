//! The OODA loop of seed 000 section 2.3 as a thin composition of the orchestrator's parts:
//!
//! | phase | what runs |
//! |---|---|
//! | observe | the memory bridge (first iteration) and the last run's outcome become observations in a [`WorkingContext`], compacted at the budgets' threshold |
//! | orient | skill selection for the goal, with the observations as its context |
//! | decide | planning and, when the plan needs it, the user's approval (`plan_created` is emitted) |
//! | act | execution, synthesis and learnings ([`Orchestrator::act`]); completed steps, artifacts and decisions go back into the context |
//!
//! The loop ends when a run completes, is refused, is cancelled or needs no skill, or after
//! [`OodaLoop::max_iterations`] iterations (default 3): a failed run is observed and the next
//! iteration orients again with its failures in view.

use std::sync::Arc;

use serde::Serialize;
use skills_security::TrustLevel;

use crate::context::{Compactor, ContextBudgets, WorkingContext};
use crate::error::Result;
use crate::execute::StepState;
use crate::llm::{EstimatedTokens, TokenCounter};
use crate::orchestrator::{
    CANCELLED_BY_USER, OrchestrationResult, OrchestrationStatus, Orchestrator, TaskRun,
};
use crate::plan::ExecutionPlan;
use crate::progress::ProgressEvent;
use crate::select::{Selection, Task};

/// Where the loop stands.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct OodaState {
    /// The goal.
    pub goal: Task,
    /// The current iteration, from 1 (0 before the first).
    pub iteration: usize,
    /// Observations, decisions, completed steps and artifacts so far.
    pub context: WorkingContext,
    /// The latest orientation: the skills chosen.
    pub selection: Option<Selection>,
    /// The latest decision: the plan (if any skill is needed).
    pub plan: Option<ExecutionPlan>,
    /// Whether the latest plan may run.
    pub approved: bool,
    /// The latest action's result.
    pub result: Option<OrchestrationResult>,
    /// Whether the loop is finished.
    pub done: bool,
}

impl OodaState {
    /// The state before the first iteration.
    pub fn new(goal: Task) -> Self {
        OodaState {
            goal,
            iteration: 0,
            context: WorkingContext::new(),
            selection: None,
            plan: None,
            approved: false,
            result: None,
            done: false,
        }
    }
}

/// Runs observe, orient, decide and act until the goal is reached or the bound is hit.
///
/// ```
/// use skills_security::audit::AuditTrail;
/// use skills_security::gate::PolicyGate; // the host's gate; allow_all checks nothing
/// use std::sync::Arc;
/// use async_trait::async_trait;
/// use skills_orchestrate::execute::{Executor, InMemorySkills, NativeSkill, SkillDefinition, SkillInput, StepError, StepOutput};
/// use skills_orchestrate::ooda::OodaLoop;
/// use skills_orchestrate::orchestrator::{FixedPlanApproval, Orchestrator, TaskRun};
/// use skills_security::approval::ApprovalOption;
/// use skills_orchestrate::plan::{Planner, SkillRiskTable};
/// use skills_orchestrate::select::{AgentSkills, SkillCandidate, SkillSelector, Task};
/// use skills_security::TrustLevel;
/// use skills_store_traits::UserScope;
///
/// struct Scan;
/// #[async_trait]
/// impl NativeSkill for Scan {
///     async fn run(&self, _input: &SkillInput) -> Result<StepOutput, StepError> {
///         Ok(StepOutput::text("two new filings"))
///     }
/// }
///
/// # futures::executor::block_on(async {
/// let skills = InMemorySkills::new().with(SkillDefinition::native("regulatory-monitor").trust(TrustLevel::Core));
/// let executor = Executor::builder(Arc::new(skills), PolicyGate::allow_all(AuditTrail::in_memory())).native("regulatory-monitor", Arc::new(Scan)).build();
/// let index = vec![SkillCandidate::new("regulatory-monitor", "Watch regulatory filings").tags(["filings"])];
/// let planner = Planner::new().risks(Arc::new(SkillRiskTable::new().skill("regulatory-monitor", TrustLevel::Core)));
/// let orchestrator = Orchestrator::new(SkillSelector::new(AgentSkills::seed_defaults()), index, executor)
///     .planner(planner)
///     .approver(Arc::new(FixedPlanApproval(Some(ApprovalOption::YesOnce))));
/// let run = TaskRun::new(UserScope::new("acme", "alice"), "ScoutAgent");
/// let state = OodaLoop::new(orchestrator).run(Task::new("Check new filings"), &run).await?;
/// assert!(state.done && state.iteration == 1);
/// assert_eq!(state.context.completed_steps, ["regulatory-monitor: two new filings"]);
/// # Ok::<(), skills_orchestrate::Error>(())
/// # }).unwrap();
/// ```
#[derive(Clone)]
pub struct OodaLoop {
    orchestrator: Orchestrator,
    compactor: Compactor,
    budgets: ContextBudgets,
    counter: Arc<dyn TokenCounter>,
    max_iterations: usize,
}

impl std::fmt::Debug for OodaLoop {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OodaLoop")
            .field("orchestrator", &self.orchestrator)
            .field("compactor", &self.compactor)
            .field("max_iterations", &self.max_iterations)
            .finish_non_exhaustive()
    }
}

impl OodaLoop {
    /// A loop over `orchestrator`: default budgets, deterministic compaction, estimated token
    /// counts, at most 3 iterations.
    pub fn new(orchestrator: Orchestrator) -> Self {
        let budgets = ContextBudgets::default();
        OodaLoop {
            orchestrator,
            compactor: Compactor::new(budgets),
            budgets,
            counter: Arc::new(EstimatedTokens),
            max_iterations: 3,
        }
    }

    /// Sets the most iterations (at least 1).
    pub fn max_iterations(mut self, iterations: usize) -> Self {
        self.max_iterations = iterations.max(1);
        self
    }

    /// Compacts the working context with `compactor` against `budgets.orchestrator`.
    pub fn compaction(mut self, compactor: Compactor, budgets: ContextBudgets) -> Self {
        self.compactor = compactor;
        self.budgets = budgets;
        self
    }

    /// Counts tokens with `counter`.
    pub fn token_counter(mut self, counter: Arc<dyn TokenCounter>) -> Self {
        self.counter = counter;
        self
    }

    /// OBSERVE: on the first iteration the user's memory (as a user-trusted reader), then the
    /// last result's outcome and failures; the context is compacted when it reaches the
    /// threshold of the orchestrator budget.
    pub async fn observe(&self, state: &mut OodaState, run: &TaskRun) -> Result<()> {
        state.iteration += 1;
        state.context.current_step = format!("iteration {}: observe", state.iteration);
        if state.iteration == 1
            && let Some(bridge) = self.orchestrator.memory_bridge()
        {
            let execution = format!("ooda:{}:observe", state.iteration);
            let (memory, _) = bridge
                .context_for(run.scope(), &state.goal, &execution, TrustLevel::User)
                .await?;
            let lines = memory
                .relevant_history
                .iter()
                .chain(&memory.known_facts)
                .chain(&memory.recommended_approach)
                .chain(&memory.user_preferences);
            state
                .context
                .observations
                .extend(lines.map(|line| format!("memory: {line}")));
        }
        if let Some(result) = &state.result {
            state
                .context
                .observations
                .push(format!("last run: {}", result.message));
            for step in result.execution.iter().flat_map(|e| &e.steps) {
                if matches!(step.state, StepState::Failed | StepState::Skipped) {
                    let why = step
                        .error
                        .as_ref()
                        .map(ToString::to_string)
                        .unwrap_or_default();
                    state.context.observations.push(format!(
                        "step {} ({}) {}: {why}",
                        step.step_id,
                        step.skill,
                        step.state.as_str()
                    ));
                }
            }
        }
        let context = std::mem::take(&mut state.context);
        let compacted = self
            .compactor
            .compact_if_needed(context, self.budgets.orchestrator, self.counter.as_ref())
            .await?;
        state.context = compacted.context;
        Ok(())
    }

    /// ORIENT: which skills would serve the goal, with the observations as the task's context.
    pub async fn orient(&self, state: &mut OodaState, run: &TaskRun) -> Result<()> {
        state.context.current_step = format!("iteration {}: orient", state.iteration);
        let mut task = state.goal.clone();
        let observed = state.context.observations.join("\n");
        if !observed.is_empty() {
            task.context = Some(match task.context.take() {
                Some(given) => format!("{given}\n{observed}"),
                None => observed,
            });
        }
        let selection = self.orchestrator.select(&task, run).await?;
        let chosen: Vec<&str> = selection
            .analysis
            .required_skills
            .iter()
            .map(|s| s.skill_id.as_str())
            .collect();
        state.context.key_decisions.push(if chosen.is_empty() {
            format!("iteration {}: no skill needed", state.iteration)
        } else {
            format!("iteration {}: use {}", state.iteration, chosen.join(", "))
        });
        state.selection = Some(selection);
        Ok(())
    }

    /// DECIDE: the plan for the selection, shown as `plan_created`, and whether it may run.
    pub async fn decide(&self, state: &mut OodaState, run: &TaskRun) -> Result<()> {
        state.context.current_step = format!("iteration {}: decide", state.iteration);
        let Some(selection) = &state.selection else {
            state.plan = None;
            state.approved = false;
            return Ok(());
        };
        state.plan = self.orchestrator.plan(&state.goal, selection).await?;
        state.approved = match &state.plan {
            Some(plan) => {
                run.progress_sink()
                    .emit(ProgressEvent::PlanCreated {
                        plan: plan.display(),
                    })
                    .await;
                let approved = self.orchestrator.approve(&state.goal, plan, run).await;
                state.context.key_decisions.push(format!(
                    "iteration {}: plan {} {}",
                    state.iteration,
                    plan.id,
                    if approved { "approved" } else { "refused" }
                ));
                approved
            }
            None => false,
        };
        Ok(())
    }

    /// ACT: runs an approved plan; finishes the loop unless the run failed and iterations
    /// remain.
    pub async fn act(&self, state: &mut OodaState, run: &TaskRun) -> Result<()> {
        state.context.current_step = format!("iteration {}: act", state.iteration);
        let selection = state
            .selection
            .clone()
            .unwrap_or_else(|| Selection::from_analysis(Default::default()));
        let result = match (state.plan.clone(), state.approved) {
            (Some(plan), true) => {
                self.orchestrator
                    .act(&state.goal, selection, plan, run)
                    .await?
            }
            (Some(plan), false) => {
                let mut refused = OrchestrationResult::refused(selection, CANCELLED_BY_USER);
                refused.plan = Some(plan);
                refused
            }
            (None, _) => OrchestrationResult::no_skills(selection),
        };
        for step in result.execution.iter().flat_map(|e| &e.steps) {
            if let Some(memory) = &step.memory {
                state
                    .context
                    .completed_steps
                    .push(format!("{}: {}", step.step_id, memory.summary));
                for artifact in &memory.artifacts {
                    if !state.context.artifacts.contains(artifact) {
                        state.context.artifacts.push(artifact.clone());
                    }
                }
            }
        }
        state.done =
            result.status != OrchestrationStatus::Failed || state.iteration >= self.max_iterations;
        state.result = Some(result);
        Ok(())
    }

    /// Runs the loop for `goal` and returns the final state.
    pub async fn run(&self, goal: Task, run: &TaskRun) -> Result<OodaState> {
        let mut state = OodaState::new(goal);
        while !state.done {
            self.observe(&mut state, run).await?;
            self.orient(&mut state, run).await?;
            self.decide(&mut state, run).await?;
            self.act(&mut state, run).await?;
        }
        Ok(state)
    }
}
