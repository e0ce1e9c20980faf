//! The orchestrator facade (seed 000 section 3.1, `execute_task`): select the skills, plan,
//! show the plan, ask for approval when the plan needs it, execute, synthesize, and store
//! what the run teaches.
//!
//! ```text
//! select ──► plan ──► plan_created ──► approval? ──no──► "Execution cancelled by user" (nothing runs)
//!                                        │yes / not needed
//!                                        ▼
//!                  memory context ──► execute (group_starting, step_* events) ──► synthesis ──► learnings
//! ```
//!
//! Each phase is also a public method ([`Orchestrator::select`], [`Orchestrator::plan`],
//! [`Orchestrator::approve`], [`Orchestrator::act`]) so other loops (the OODA loop of
//! [`crate::ooda`]) compose the same parts.
//!
//! With a plan store, every plan is stored when it is made and its approval is recorded on
//! it and on the audit trail ([`Orchestrator::approve_plan`],
//! [`Orchestrator::reject_plan`], [`Orchestrator::run_stored_plan`]).
//!
//! Threat: a plan that needs approval running without it. Guarantee: when
//! [`ExecutionPlan::requires_approval`] is set, nothing is executed unless the configured
//! [`PlanApprover`] answers yes (or, with a plan store and no approver, until the host
//! approves the stored plan with [`Orchestrator::approve_plan`]); no answer or `no` cancel
//! the run, as does no approver without a plan store. Step-level
//! approvals the policy gate asks for stay the executor's (its `StepApprover`): approving a
//! plan does not approve what the gate later asks about one step.

use std::sync::Arc;

mod plans;

use async_trait::async_trait;
use serde::Serialize;
use serde_json::json;
use skills_security::approval::ApprovalOption;
use skills_security::audit::PlanEvent;
use skills_security::{Context, TrustLevel};
use skills_store_traits::learning::ExecutedStep;
use skills_store_traits::plans::{CostLevel, RiskLevel};
use skills_store_traits::{PlanStore, UserScope};

use crate::error::Result;
use crate::execute::{CancelToken, ExecutionResult, Executor, Run, SkillProvider, StepState};
use crate::learn::LearningEngine;
use crate::llm::TokenUsage;
use crate::memory_bridge::{MemoryBridge, RunLearnings, SkillMemoryContext, StoredLearnings};
use crate::plan::{ExecutionPlan, Planner};
use crate::progress::{NoProgress, PlanDisplay, ProgressEvent, ProgressSink};
use crate::select::{Selection, SkillCandidate, SkillSelector, Task};
use crate::synthesis::{Synthesis, Synthesizer};

/// The message of a run the user refused (the seed's).
pub const CANCELLED_BY_USER: &str = "Execution cancelled by user";

/// What the user is asked before a plan that needs approval runs.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct PlanApprovalRequest {
    /// Whose run it is.
    pub scope: UserScope,
    /// The agent type asking.
    pub agent_type: String,
    /// The task.
    pub task: String,
    /// The plan as shown in `plan_created`.
    pub plan: PlanDisplay,
    /// The plan's risk.
    pub risk: RiskLevel,
    /// The plan's cost.
    pub cost: CostLevel,
    /// The answers offered (`yes_once`, `yes_in_session`, `no`).
    pub options: [ApprovalOption; 3],
}

/// The host's way to ask the user about a plan. `None` (nobody answered) counts as no.
#[async_trait]
pub trait PlanApprover: Send + Sync {
    /// Asks.
    async fn approve_plan(&self, request: &PlanApprovalRequest) -> Option<ApprovalOption>;
}

/// An approver that always answers the same (pipelines, tests).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FixedPlanApproval(pub Option<ApprovalOption>);

#[async_trait]
impl PlanApprover for FixedPlanApproval {
    async fn approve_plan(&self, _request: &PlanApprovalRequest) -> Option<ApprovalOption> {
        self.0
    }
}

/// How a task ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum OrchestrationStatus {
    /// Every step succeeded.
    Completed,
    /// Some step failed or was skipped; the results are partial.
    Failed,
    /// The run was cancelled (its cancel token) before every step ran.
    Cancelled,
    /// The user did not approve the plan; nothing ran.
    Refused,
    /// No skill was needed (or none is available to the agent); nothing ran.
    NoSkillsNeeded,
    /// The plan needs approval and no approver is configured: it is stored `pending`
    /// (its id in [`OrchestrationResult::stored_plan_id`]) for
    /// [`Orchestrator::approve_plan`] and [`Orchestrator::run_stored_plan`]; nothing ran.
    AwaitingApproval,
}

/// The outcome of [`Orchestrator::execute_task`].
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct OrchestrationResult {
    /// Whether the task was carried out in full.
    pub success: bool,
    /// How it ended.
    pub status: OrchestrationStatus,
    /// A one-line message for the user.
    pub message: String,
    /// The skills chosen.
    pub selection: Selection,
    /// The plan, when one was made.
    pub plan: Option<ExecutionPlan>,
    /// The plan store's id of the plan, when it was stored.
    pub stored_plan_id: Option<String>,
    /// Every step's outcome, when the plan ran.
    pub execution: Option<ExecutionResult>,
    /// The synthesis, when the plan ran.
    pub synthesis: Option<Synthesis>,
    /// Memory items offered to the run (and how many were withheld).
    pub memory: Option<SkillMemoryContext>,
    /// What was stored in memory afterwards.
    pub learnings: Option<StoredLearnings>,
    /// Why storing the learnings failed (the run's results stand regardless).
    pub learning_error: Option<String>,
    /// Tokens the model calls used: selection, steps and synthesis.
    pub usage: TokenUsage,
}

impl OrchestrationResult {
    /// The result of a plan the user refused: nothing ran.
    pub fn refused(selection: Selection, message: &str) -> Self {
        Self::without_run(selection, OrchestrationStatus::Refused, message)
    }

    /// The result of a task that needs no skill: nothing ran.
    pub fn no_skills(selection: Selection) -> Self {
        Self::without_run(
            selection,
            OrchestrationStatus::NoSkillsNeeded,
            "No skill is needed for this task",
        )
    }

    fn without_run(selection: Selection, status: OrchestrationStatus, message: &str) -> Self {
        OrchestrationResult {
            success: false,
            status,
            message: message.to_owned(),
            usage: selection.usage,
            selection,
            plan: None,
            stored_plan_id: None,
            execution: None,
            synthesis: None,
            memory: None,
            learnings: None,
            learning_error: None,
        }
    }
}

/// One task's parameters: whose it is, which agent asks, its data, where progress goes.
#[derive(Clone)]
pub struct TaskRun {
    scope: UserScope,
    agent_type: String,
    input: String,
    source: Context,
    progress: Arc<dyn ProgressSink>,
    cancel: CancelToken,
    user_context: String,
    session: Option<String>,
}

impl std::fmt::Debug for TaskRun {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TaskRun")
            .field("scope", &self.scope)
            .field("agent_type", &self.agent_type)
            .field("input_bytes", &self.input.len())
            .field("source", &self.source)
            .finish_non_exhaustive()
    }
}

impl TaskRun {
    /// A run for `scope` by an agent of `agent_type`, without input data or progress.
    pub fn new(scope: UserScope, agent_type: impl Into<String>) -> Self {
        TaskRun {
            scope,
            agent_type: agent_type.into(),
            input: String::new(),
            source: Context::default(),
            progress: Arc::new(NoProgress),
            cancel: CancelToken::new(),
            user_context: String::new(),
            session: None,
        }
    }

    /// The host's chat (or session) id: a script approved `yes_in_session` in one task runs
    /// without asking again in the next task of the same chat, while its digest is
    /// unchanged ([`Run::session`]). Without it, an answer covers one task.
    pub fn session(mut self, chat: impl Into<String>) -> Self {
        self.session = Some(chat.into());
        self
    }

    /// The task's data (each step sees it sanitized for its skill).
    pub fn input(mut self, input: impl Into<String>) -> Self {
        self.input = input.into();
        self
    }

    /// Where the data comes from, for classification.
    pub fn source(mut self, source: Context) -> Self {
        self.source = source;
        self
    }

    /// Where progress events go.
    pub fn progress(mut self, sink: Arc<dyn ProgressSink>) -> Self {
        self.progress = sink;
        self
    }

    /// The token that cancels the run.
    pub fn cancel(mut self, token: CancelToken) -> Self {
        self.cancel = token;
        self
    }

    /// The essential user context shown to the orchestrator's model (preferences, role).
    pub fn user_context(mut self, context: impl Into<String>) -> Self {
        self.user_context = context.into();
        self
    }

    /// Whose run it is.
    pub fn scope(&self) -> &UserScope {
        &self.scope
    }

    /// The agent type.
    pub fn agent_type(&self) -> &str {
        &self.agent_type
    }

    /// Where progress events go.
    pub fn progress_sink(&self) -> &Arc<dyn ProgressSink> {
        &self.progress
    }
}

/// Coordinates a task from skill selection to stored learnings.
///
/// ```
/// use skills_security::audit::AuditTrail;
/// use skills_security::gate::PolicyGate; // the host's gate; allow_all checks nothing
/// use std::sync::Arc;
/// use async_trait::async_trait;
/// use skills_orchestrate::execute::{Executor, InMemorySkills, NativeSkill, SkillDefinition, SkillInput, StepError, StepOutput};
/// use skills_orchestrate::orchestrator::{FixedPlanApproval, Orchestrator, OrchestrationStatus, TaskRun};
/// use skills_security::approval::ApprovalOption;
/// use skills_orchestrate::plan::{Planner, SkillRiskTable};
/// use skills_orchestrate::select::{AgentSkills, SkillCandidate, SkillSelector, Task};
/// use skills_security::TrustLevel;
/// use skills_store_traits::UserScope;
///
/// struct Echo;
/// #[async_trait]
/// impl NativeSkill for Echo {
///     async fn run(&self, input: &SkillInput) -> Result<StepOutput, StepError> {
///         Ok(StepOutput::text(format!("looked up for {}", input.step_id)))
///     }
/// }
///
/// # futures::executor::block_on(async {
/// let skills = InMemorySkills::new().with(SkillDefinition::native("crm-lookup").trust(TrustLevel::Core));
/// let executor = Executor::builder(Arc::new(skills), PolicyGate::allow_all(AuditTrail::in_memory())).native("crm-lookup", Arc::new(Echo)).build();
/// let selector = SkillSelector::new(AgentSkills::new().with("SupportAgent", ["crm-lookup"]));
/// let index = vec![SkillCandidate::new("crm-lookup", "Look up an account in the CRM").triggers(["look up"])];
/// let planner = Planner::new().risks(Arc::new(SkillRiskTable::new().skill("crm-lookup", TrustLevel::Core)));
/// // Every plan asks its user first (a skill's first runs need approval); this user says yes.
/// let orchestrator = Orchestrator::new(selector, index, executor)
///     .planner(planner)
///     .approver(Arc::new(FixedPlanApproval(Some(ApprovalOption::YesOnce))));
/// let run = TaskRun::new(UserScope::new("acme", "alice"), "SupportAgent");
/// let result = orchestrator.execute_task(&Task::new("Look up Acme"), run).await?;
/// assert_eq!(result.status, OrchestrationStatus::Completed);
/// assert!(result.synthesis.is_some_and(|s| s.summary.starts_with("Completed 1 of 1")));
/// # Ok::<(), skills_orchestrate::Error>(())
/// # }).unwrap();
/// ```
#[derive(Clone)]
pub struct Orchestrator {
    selector: SkillSelector,
    skills: Vec<SkillCandidate>,
    provider: Option<Arc<dyn SkillProvider>>,
    planner: Planner,
    executor: Executor,
    approver: Option<Arc<dyn PlanApprover>>,
    synthesizer: Synthesizer,
    memory: Option<MemoryBridge>,
    learning: Option<LearningEngine>,
    plan_store: Option<Arc<dyn PlanStore>>,
    include_optional: bool,
    /// Stored plans being decided or run by a call of this orchestrator (or a clone).
    claims: plans::Claims,
}

impl std::fmt::Debug for Orchestrator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Orchestrator")
            .field("selector", &self.selector)
            .field("skills", &self.skills.len())
            .field("planner", &self.planner)
            .field("executor", &self.executor)
            .field("approver", &self.approver.is_some())
            .field("synthesizer", &self.synthesizer)
            .field("memory", &self.memory)
            .field("learning", &self.learning.is_some())
            .field("plan_store", &self.plan_store.is_some())
            .field("include_optional", &self.include_optional)
            .finish()
    }
}

/// The most restrictive level: the one cleared for the fewest classes.
fn most_restrictive(levels: impl IntoIterator<Item = TrustLevel>) -> TrustLevel {
    levels
        .into_iter()
        .min_by_key(|level| level.allowed_classes().len())
        .unwrap_or(TrustLevel::Community)
}

/// The steps that ran in this execution, in plan order, as the learning store records them.
fn executed_steps(execution: &ExecutionResult) -> Vec<ExecutedStep> {
    execution
        .steps
        .iter()
        .filter(|step| step.attempts > 0 && step.state != StepState::Resumed)
        .map(|step| {
            let millis = u64::try_from(step.duration.as_millis()).unwrap_or(u64::MAX);
            ExecutedStep::new(
                step.skill.clone(),
                step.state.succeeded(),
                step.attempts,
                millis,
            )
        })
        .collect()
}

fn memory_block(memory: &SkillMemoryContext) -> String {
    let mut out = String::from("Relevant memory:");
    for (title, lines) in [
        ("Past events", &memory.relevant_history),
        ("Known facts", &memory.known_facts),
        ("Approaches that worked", &memory.recommended_approach),
        ("User preferences", &memory.user_preferences),
    ] {
        if !lines.is_empty() {
            out.push_str(&format!("\n{title}:"));
            for line in lines {
                out.push_str(&format!("\n- {line}"));
            }
        }
    }
    out
}

impl Orchestrator {
    /// An orchestrator choosing among `skills` (the index the selector sees) with `selector`,
    /// running plans on `executor`; default planner, deterministic synthesis, no approver
    /// (plans needing approval are refused), no memory, no plan persistence.
    pub fn new(selector: SkillSelector, skills: Vec<SkillCandidate>, executor: Executor) -> Self {
        Orchestrator {
            selector,
            skills,
            provider: None,
            planner: Planner::new(),
            executor,
            approver: None,
            synthesizer: Synthesizer::new(),
            memory: None,
            learning: None,
            plan_store: None,
            include_optional: false,
            claims: plans::Claims::default(),
        }
    }

    /// Records every run's executed steps (skill, outcome, attempts, duration) under the
    /// task's type (`general` when it has none) with `engine`, so recurring sequences can be
    /// detected later (seed 003 module 5). Steps that did not run (skipped, cancelled,
    /// resumed from an earlier run) are left out.
    pub fn learning(mut self, engine: LearningEngine) -> Self {
        self.learning = Some(engine);
        self
    }

    /// Selects skills with `selector` instead.
    pub fn with_selector(mut self, selector: SkillSelector) -> Self {
        self.selector = selector;
        self
    }

    /// Plans with `planner` (history, risk table, approval policy).
    pub fn planner(mut self, planner: Planner) -> Self {
        self.planner = planner;
        self
    }

    /// Asks `approver` when a plan needs approval.
    pub fn approver(mut self, approver: Arc<dyn PlanApprover>) -> Self {
        self.approver = Some(approver);
        self
    }

    /// Synthesizes with `synthesizer`.
    pub fn synthesizer(mut self, synthesizer: Synthesizer) -> Self {
        self.synthesizer = synthesizer;
        self
    }

    /// Gives runs memory context and stores their learnings through `bridge`.
    pub fn memory(mut self, bridge: MemoryBridge) -> Self {
        self.memory = Some(bridge);
        self
    }

    /// Looks up skills' trust levels in `provider` (the executor's), so memory context is
    /// sanitized for the least trusted skill of the plan; without it every plan counts as
    /// community-trusted for memory.
    pub fn skill_provider(mut self, provider: Arc<dyn SkillProvider>) -> Self {
        self.provider = Some(provider);
        self
    }

    /// Stores each plan before it runs (the executor needs the same store to persist steps
    /// and resume).
    pub fn plan_store(mut self, store: Arc<dyn PlanStore>) -> Self {
        self.plan_store = Some(store);
        self
    }

    /// Also runs the optional skills the selection names (after the required ones).
    pub fn include_optional(mut self, include: bool) -> Self {
        self.include_optional = include;
        self
    }

    /// The skill index.
    pub fn skills(&self) -> &[SkillCandidate] {
        &self.skills
    }

    /// The memory bridge, if any.
    pub fn memory_bridge(&self) -> Option<&MemoryBridge> {
        self.memory.as_ref()
    }

    /// The selector (which skills each agent type may use).
    pub fn selector(&self) -> &SkillSelector {
        &self.selector
    }

    /// Phase 1a: the skills `task` needs, among those the run's agent may use.
    pub async fn select(&self, task: &Task, run: &TaskRun) -> Result<Selection> {
        self.selector
            .select(&run.agent_type, task, &self.skills)
            .await
    }

    /// Phase 1b: the plan for a selection (`None` when it needs no skill).
    pub async fn plan(&self, task: &Task, selection: &Selection) -> Result<Option<ExecutionPlan>> {
        let specs = selection.step_specs(task, self.include_optional);
        if specs.is_empty() {
            return Ok(None);
        }
        Ok(Some(self.planner.plan(&task.description, specs).await?))
    }

    /// Phase 1c: whether `plan` may run: yes when it needs no approval, else the approver's
    /// answer (no approver or no answer is no).
    pub async fn approve(&self, task: &Task, plan: &ExecutionPlan, run: &TaskRun) -> bool {
        if !plan.requires_approval {
            return true;
        }
        let Some(approver) = &self.approver else {
            return false;
        };
        let request = PlanApprovalRequest {
            scope: run.scope.clone(),
            agent_type: run.agent_type.clone(),
            task: task.description.clone(),
            plan: plan.display(),
            risk: plan.risk,
            cost: plan.cost,
            options: ApprovalOption::ALL,
        };
        matches!(
            approver.approve_plan(&request).await,
            Some(ApprovalOption::YesOnce | ApprovalOption::YesInSession)
        )
    }

    /// The memory context for `plan`, sanitized for its least trusted skill.
    pub async fn memory_context(
        &self,
        task: &Task,
        plan: &ExecutionPlan,
        run: &TaskRun,
    ) -> Result<Option<SkillMemoryContext>> {
        let Some(bridge) = &self.memory else {
            return Ok(None);
        };
        let trust = self.plan_trust(plan).await?;
        let execution = format!("{}:memory", plan.id);
        let (context, _) = bridge
            .context_for(&run.scope, task, &execution, trust)
            .await?;
        Ok(Some(context))
    }

    /// Phase 2 and 3: runs an approved `plan` (with memory context and persistence when
    /// configured), synthesizes, emits `synthesis`, and stores the learnings.
    pub async fn act(
        &self,
        task: &Task,
        selection: Selection,
        plan: ExecutionPlan,
        run: &TaskRun,
    ) -> Result<OrchestrationResult> {
        self.act_on(task, selection, plan, run, None).await
    }

    /// [`act`](Self::act) under the stored record `stored` when there is one (else the plan
    /// is stored now, when a store is configured); a run that fails is audited as the
    /// plan's failure.
    async fn act_on(
        &self,
        task: &Task,
        selection: Selection,
        plan: ExecutionPlan,
        run: &TaskRun,
        stored: Option<String>,
    ) -> Result<OrchestrationResult> {
        let memory = self.memory_context(task, &plan, run).await?;
        let mut input = run.input.clone();
        if let Some(memory) = memory.as_ref().filter(|m| !m.is_empty()) {
            if !input.is_empty() {
                input.push_str("\n\n");
            }
            input.push_str(&memory_block(memory));
        }
        let stored_plan_id = match (stored, &self.plan_store) {
            (Some(id), _) => Some(id),
            (None, Some(_)) => {
                // A plan handed to `act` is one its caller approved: stored and audited as
                // such, so the store and the trail say what ran.
                let record = self.store_created(&plan, run).await?;
                if let Some(record) = &record
                    && plan.requires_approval
                {
                    self.record_decision(
                        &run.scope,
                        &plan,
                        &record.id,
                        skills_store_traits::plans::ApprovalStatus::Approved,
                        &run.scope.user,
                    )
                    .await?;
                }
                record.map(|r| r.id)
            }
            (None, None) => None,
        };
        let mut exec_run = Run::new(run.scope.clone())
            .input(input)
            .source(run.source.clone())
            .progress(run.progress.clone())
            .cancel(run.cancel.clone())
            .agent(run.agent_type.clone());
        if let Some(id) = &stored_plan_id {
            exec_run = exec_run.stored_plan(id.clone());
        }
        if let Some(chat) = &run.session {
            exec_run = exec_run.session(chat.clone());
        }
        let execution = match self.executor.execute(&plan, exec_run).await {
            Ok(execution) => execution,
            Err(error) => {
                if let Some(id) = &stored_plan_id {
                    let why = error.to_string();
                    self.audit_plan(&run.scope, &plan, id, (PlanEvent::Failed, None, Some(&why)))
                        .await?;
                }
                return Err(error);
            }
        };
        if !execution.success
            && let Some(id) = &stored_plan_id
        {
            let failed: Vec<String> = execution
                .steps
                .iter()
                .filter(|s| !s.state.succeeded())
                .map(|s| format!("{} {}", s.step_id, s.state.as_str()))
                .collect();
            let why = format!("steps not completed: {}", failed.join(", "));
            self.audit_plan(&run.scope, &plan, id, (PlanEvent::Failed, None, Some(&why)))
                .await?;
        }

        let synthesis = self
            .synthesizer
            .synthesize(task, &plan, &execution, &self.skills, &run.user_context)
            .await;
        run.progress.emit(synthesis.event()).await;

        let (learnings, mut learning_error) = match &self.memory {
            Some(bridge) => {
                let skills_used: Vec<String> = execution
                    .steps
                    .iter()
                    .filter(|s| s.state.succeeded())
                    .map(|s| s.skill.clone())
                    .collect();
                let facts = execution
                    .memory()
                    .flat_map(|m| m.extracted_facts.iter().cloned())
                    .collect();
                let learnings = RunLearnings::new(
                    task.clone(),
                    plan.id.clone(),
                    synthesis.summary.clone(),
                    execution.success,
                )
                .skills_used(skills_used)
                .extracted_facts(facts)
                .data_class(
                    execution
                        .memory()
                        .map(|m| m.data_class)
                        .max()
                        .unwrap_or(skills_security::DataClass::Internal)
                        .max(skills_security::DataClass::Internal),
                )
                .outcome(json!({"summary": synthesis.summary, "artifacts": synthesis.artifacts}))
                .context_tokens(synthesis.context_tokens);
                match bridge.store_learnings(&run.scope, &learnings).await {
                    Ok(stored) => (Some(stored), None),
                    Err(error) => (None, Some(error.to_string())),
                }
            }
            None => (None, None),
        };
        if let Some(engine) = &self.learning {
            let steps = executed_steps(&execution);
            if !steps.is_empty() {
                let task_type = task.task_type.as_deref().unwrap_or("general");
                if let Err(error) = engine.record(&run.scope.tenant, task_type, steps).await {
                    let recorded = format!("recording the run for learning: {error}");
                    learning_error = Some(match learning_error {
                        Some(earlier) => format!("{earlier}; {recorded}"),
                        None => recorded,
                    });
                }
            }
        }

        let status = if execution.success {
            OrchestrationStatus::Completed
        } else if execution.cancelled
            || execution
                .steps
                .iter()
                .any(|s| s.state == StepState::Cancelled)
        {
            OrchestrationStatus::Cancelled
        } else {
            OrchestrationStatus::Failed
        };
        let done = execution
            .steps
            .iter()
            .filter(|s| s.state.succeeded())
            .count();
        let message = match status {
            OrchestrationStatus::Completed => format!("Completed all {done} steps"),
            OrchestrationStatus::Cancelled => {
                format!("Cancelled after {done} of {} steps", plan.steps.len())
            }
            _ => format!("Completed {done} of {} steps", plan.steps.len()),
        };
        let mut usage = selection.usage;
        usage.add(execution.usage);
        usage.add(synthesis.usage);
        Ok(OrchestrationResult {
            success: execution.success,
            status,
            message,
            selection,
            plan: Some(plan),
            stored_plan_id,
            execution: Some(execution),
            synthesis: Some(synthesis),
            memory,
            learnings,
            learning_error,
            usage,
        })
    }

    /// Runs `task` from start to end (see the module docs). Fails only when a phase cannot
    /// proceed at all: the model's selection is malformed twice, planning fails, the plan or
    /// memory store fails before the run, or the executor cannot start; failed steps are a
    /// result ([`OrchestrationStatus::Failed`]), not an error.
    pub async fn execute_task(&self, task: &Task, run: TaskRun) -> Result<OrchestrationResult> {
        let selection = self.select(task, &run).await?;
        let Some(plan) = self.plan(task, &selection).await? else {
            return Ok(OrchestrationResult::no_skills(selection));
        };
        let stored = self.store_created(&plan, &run).await?;
        run.progress
            .emit(ProgressEvent::PlanCreated {
                plan: plan.display(),
            })
            .await;
        match self.decide(task, &plan, &run, stored.as_ref()).await? {
            plans::Decision::Approved => {}
            plans::Decision::Awaiting => {
                let id = stored.map(|r| r.id).unwrap_or_default();
                return Ok(plans::awaiting(selection, plan, id));
            }
            plans::Decision::Refused => {
                let mut result = OrchestrationResult::refused(selection, CANCELLED_BY_USER);
                result.plan = Some(plan);
                result.stored_plan_id = stored.map(|r| r.id);
                return Ok(result);
            }
        }
        self.act_on(task, selection, plan, &run, stored.map(|r| r.id))
            .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_least_cleared_level_wins() {
        assert_eq!(
            most_restrictive([TrustLevel::Core, TrustLevel::Community]),
            TrustLevel::Community
        );
        assert_eq!(
            most_restrictive([TrustLevel::Core, TrustLevel::User]),
            TrustLevel::User
        );
        assert_eq!(most_restrictive([]), TrustLevel::Community);
    }

    #[test]
    fn the_memory_block_lists_only_what_is_there() {
        let memory = SkillMemoryContext {
            known_facts: vec!["Acme uses Jira".into()],
            ..Default::default()
        };
        assert_eq!(
            memory_block(&memory),
            "Relevant memory:\nKnown facts:\n- Acme uses Jira"
        );
    }
}
