//! The OODA loop of seed 000 section 2.3 as a thin composition of the orchestrator's parts:
//!
//! | phase | what runs |
//! |---|---|
//! | observe | the memory bridge (first iteration); the agent's research skills when the goal carries a research query (first iteration, through the orchestrator's gated path: `research`); the last run's outcome; the context compacted at the budgets' threshold |
//! | orient | skill selection for the goal, with the observations as its context |
//! | decide | the options (the plan, the plan with its optional skills, the keyword fallback's choice, no skill) scored, the best kept with its confidence, the alternatives considered and the reasoning (`decide`); its plan shown (`plan_created`) and approved when it needs it |
//! | act | execution, synthesis and learnings ([`Orchestrator::act`]); completed steps, artifacts and decisions go back into the context; the iteration's action and result are recorded in memory ([`MemoryBridge::record_action_outcome`](crate::memory_bridge::MemoryBridge::record_action_outcome)) |
//!
//! The loop ends when a run completes, is refused, is cancelled or needs no skill, or after
//! [`OodaLoop::max_iterations`] iterations (default 3): a failed run is observed and the next
//! iteration orients again with its failures in view, and decides with the failed skills
//! counting against every option that uses them.

use std::collections::BTreeSet;
use std::sync::Arc;

use serde::Serialize;
use serde_json::json;
use skills_security::{DataClass, TrustLevel};
use skills_store_traits::new_id;

use crate::context::{Compactor, ContextBudgets, WorkingContext};
use crate::error::Result;
use crate::execute::StepState;
use crate::llm::{EstimatedTokens, TokenCounter};
use crate::memory_bridge::ActionOutcome;
use crate::orchestrator::{
    CANCELLED_BY_USER, OrchestrationResult, OrchestrationStatus, Orchestrator, TaskRun,
};
use crate::plan::ExecutionPlan;
use crate::progress::ProgressEvent;
use crate::select::{Selection, Task};

mod decide;
mod research;

use decide::{Candidate, choose, no_skill, score_plan, skill_base, with_optional};
pub use decide::{OodaDecision, OptionKind, ScoredOption};
pub use research::RESEARCH_REASON;

/// An iteration's action outcome and where it was recorded.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct RecordedOutcome {
    /// What was recorded.
    pub outcome: ActionOutcome,
    /// The memory episode, when the orchestrator has a memory bridge and the write worked.
    pub episode_id: Option<String>,
    /// Why the write failed (the iteration's results stand regardless).
    pub error: Option<String>,
}

/// Where the loop stands.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct OodaState {
    /// The goal.
    pub goal: Task,
    /// The goal's id, stable over its iterations (recorded with each action outcome).
    pub goal_id: String,
    /// The current iteration, from 1 (0 before the first).
    pub iteration: usize,
    /// Observations, decisions, completed steps and artifacts so far.
    pub context: WorkingContext,
    /// The research run of the observe phase, when the goal needed research.
    pub research: Option<OrchestrationResult>,
    /// The latest orientation: the skills chosen (after DECIDE: the chosen option's).
    pub selection: Option<Selection>,
    /// The latest decision: every option scored and the one chosen.
    pub decision: Option<OodaDecision>,
    /// The chosen option's plan (if it runs skills).
    pub plan: Option<ExecutionPlan>,
    /// Whether the latest plan may run.
    pub approved: bool,
    /// The latest action's result.
    pub result: Option<OrchestrationResult>,
    /// Skills whose steps failed (or were denied) in this loop so far.
    pub failed_skills: BTreeSet<String>,
    /// Each iteration's action outcome, in order.
    pub outcomes: Vec<RecordedOutcome>,
    /// Whether the loop is finished.
    pub done: bool,
}

impl OodaState {
    /// The state before the first iteration, with a fresh goal id.
    pub fn new(goal: Task) -> Self {
        OodaState {
            goal,
            goal_id: new_id(),
            iteration: 0,
            context: WorkingContext::new(),
            research: None,
            selection: None,
            decision: None,
            plan: None,
            approved: false,
            result: None,
            failed_skills: BTreeSet::new(),
            outcomes: Vec::new(),
            done: false,
        }
    }

    /// The same with the host's id for the goal.
    pub fn with_goal_id(mut self, goal_id: impl Into<String>) -> Self {
        self.goal_id = goal_id.into();
        self
    }
}

/// The goal with the observations as its context: what ORIENT selects for.
fn oriented_task(state: &OodaState) -> Task {
    let mut task = state.goal.clone();
    let observed = state.context.observations.join("\n");
    if !observed.is_empty() {
        task.context = Some(match task.context.take() {
            Some(given) => format!("{given}\n{observed}"),
            None => observed,
        });
    }
    task
}

/// Runs observe, orient, decide and act until the goal is reached or the bound is hit.
///
/// ```
/// use skills_security::audit::AuditTrail;
/// use skills_security::gate::PolicyGate; // the host's gate; allow_all checks nothing
/// use std::sync::Arc;
/// use async_trait::async_trait;
/// use skills_orchestrate::execute::{Executor, InMemorySkills, NativeSkill, SkillDefinition, SkillInput, StepError, StepOutput};
/// use skills_orchestrate::ooda::{OodaLoop, OptionKind};
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
/// // The plan (the keyword fallback's choice, 0.70) beat answering without skills (0.20).
/// let decision = state.decision.as_ref().unwrap();
/// assert_eq!((decision.selected, decision.confidence, decision.alternatives_considered), (OptionKind::Plan, 0.7, 2));
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

    /// OBSERVE: on the first iteration the user's memory (as a user-trusted reader) and,
    /// when the goal needs research, what the agent's research skills find (run like any
    /// plan: gated, sanitized, approved, audited); then the last result's outcome and
    /// failures; the context is compacted when it reaches the threshold of the orchestrator
    /// budget.
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
        if state.iteration == 1
            && let Some(query) = state.goal.needs_research().map(str::to_owned)
        {
            self.research(state, run, &query).await?;
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
        let task = oriented_task(state);
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

    /// DECIDE: scores the options (see `decide`: the plan, the plan with its optional
    /// skills, the keyword fallback's choice, no skill), keeps the best in `state.decision`
    /// with its confidence, the alternatives considered and the reasoning, and makes its
    /// plan the one to run: shown as `plan_created`, approved when it needs it.
    pub async fn decide(&self, state: &mut OodaState, run: &TaskRun) -> Result<()> {
        state.context.current_step = format!("iteration {}: decide", state.iteration);
        state.plan = None;
        state.approved = false;
        state.decision = None;
        let Some(selection) = state.selection.clone() else {
            return Ok(());
        };
        let candidates = self.options(state, run, &selection).await?;
        let Some((decision, chosen, plan)) = choose(candidates) else {
            return Ok(());
        };
        let mut line = format!(
            "iteration {}: chose {} ({:.2}, {} options)",
            state.iteration,
            decision.selected.as_str(),
            decision.confidence,
            decision.alternatives_considered
        );
        state.selection = Some(chosen);
        state.decision = Some(decision);
        if let Some(plan) = &plan {
            run.progress_sink()
                .emit(ProgressEvent::PlanCreated {
                    plan: plan.display(),
                })
                .await;
            state.approved = self.orchestrator.approve(&state.goal, plan, run).await;
            line.push_str(&format!(
                "; plan {} {}",
                plan.id,
                if state.approved {
                    "approved"
                } else {
                    "refused"
                }
            ));
        }
        state.context.key_decisions.push(line);
        state.plan = plan;
        Ok(())
    }

    /// The options for `selection`, each with its plan, in `decide`'s order.
    async fn options(
        &self,
        state: &OodaState,
        run: &TaskRun,
        selection: &Selection,
    ) -> Result<Vec<Candidate>> {
        let orchestrator = &self.orchestrator;
        let failed = &state.failed_skills;
        let mut candidates = Vec::new();
        let mut plans = vec![(OptionKind::Plan, selection.clone())];
        if let Some(wider) = with_optional(selection) {
            plans.push((OptionKind::WithOptional, wider));
        }
        let available = orchestrator
            .selector()
            .available(run.agent_type(), orchestrator.skills());
        if !available.is_empty() {
            // The goal alone: the observations name the skills that failed, which a keyword
            // match would otherwise pick up.
            let analysis = orchestrator
                .selector()
                .fallback_selector()
                .analyze(&state.goal, &available);
            plans.push((OptionKind::KeywordMatch, Selection::from_analysis(analysis)));
        }
        for (kind, option) in plans {
            if let Some(plan) = orchestrator.plan(&state.goal, &option).await? {
                let base = skill_base(kind, option.source);
                candidates.push(score_plan(kind, base, option, plan, failed));
            }
        }
        let others = candidates.len();
        candidates.push(no_skill(selection, others));
        Ok(candidates)
    }

    /// ACT: runs an approved plan, records the iteration's action outcome in the
    /// orchestrator's memory (when it has a memory bridge), and finishes the loop unless the
    /// run failed and iterations remain.
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
            if step.state == StepState::Failed {
                state.failed_skills.insert(step.skill.clone());
            }
            if let Some(memory) = step.memory.as_ref().filter(|m| m.completed()) {
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
        let recorded = self.record_outcome(state, &result, run).await;
        state.outcomes.push(recorded);
        state.result = Some(result);
        Ok(())
    }

    /// The seed's `record_action_outcome(goal_id, action, result, iteration)`: what this
    /// iteration did and how it went, in the memory store the orchestrator uses.
    async fn record_outcome(
        &self,
        state: &OodaState,
        result: &OrchestrationResult,
        run: &TaskRun,
    ) -> RecordedOutcome {
        let action = match (&state.plan, state.approved) {
            (Some(plan), true) => format!(
                "run plan {}: {}",
                plan.id,
                plan.steps
                    .iter()
                    .map(|s| s.skill.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            (Some(plan), false) => format!("plan {} refused", plan.id),
            (None, _) => "answer without skills".to_owned(),
        };
        let steps: Vec<_> = result
            .execution
            .iter()
            .flat_map(|e| &e.steps)
            .map(|s| {
                json!({
                    "step": s.step_id,
                    "skill": s.skill,
                    "status": s.memory.as_ref().map_or(s.state.as_str(), |m| m.status.as_str()),
                })
            })
            .collect();
        let decision = state.decision.as_ref();
        let details = json!({
            "option": decision.map(|d| d.selected.as_str()),
            "confidence": decision.map(|d| d.confidence),
            "alternatives_considered": decision.map(|d| d.alternatives_considered),
            "plan_id": state.plan.as_ref().map(|p| p.id.as_str()),
            "approved": state.approved,
            "status": result.status,
            "steps": steps,
            "working_context_tokens": self.counter.count(&state.context.render()),
        });
        let class = result
            .execution
            .iter()
            .flat_map(|e| e.memory())
            .map(|m| m.data_class)
            .max()
            .unwrap_or(DataClass::Internal);
        let outcome = ActionOutcome::new(
            state.goal_id.clone(),
            state.goal.clone(),
            state.iteration,
            action,
            result.message.clone(),
            result.success,
        )
        .details(details)
        .data_class(class);
        let (episode_id, error) = match self.orchestrator.memory_bridge() {
            Some(bridge) => match bridge.record_action_outcome(run.scope(), &outcome).await {
                Ok(episode) => (Some(episode.id), None),
                Err(error) => (None, Some(error.to_string())),
            },
            None => (None, None),
        };
        RecordedOutcome {
            outcome,
            episode_id,
            error,
        }
    }

    /// Runs the loop for `goal` and returns the final state.
    pub async fn run(&self, goal: Task, run: &TaskRun) -> Result<OodaState> {
        self.run_state(OodaState::new(goal), run).await
    }

    /// Runs the loop from `state` (a goal with the host's id, say) until it is done.
    pub async fn run_state(&self, mut state: OodaState, run: &TaskRun) -> Result<OodaState> {
        while !state.done {
            self.observe(&mut state, run).await?;
            self.orient(&mut state, run).await?;
            self.decide(&mut state, run).await?;
            self.act(&mut state, run).await?;
        }
        Ok(state)
    }
}
