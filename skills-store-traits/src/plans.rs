//! Execution plans for multi-skill tasks and the working memory their steps hand to each
//! other (seed 000 section 5, tables `skill_execution_plans` and `skill_working_memory`).
//!
//! Plans belong to a user: another user's plan, in the same tenant or not, is not found.
//! The dependency graph, parallel groups and step payloads are JSON here because their shape
//! belongs to `skills-orchestrate`; the store keeps them verbatim.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::{Error, Result, Violation};
use crate::tenancy::{TenantId, UserId, UserScope};
use crate::time::Timestamp;

word_enum!(
    /// Where a plan's approval stands.
    ApprovalStatus, "approval_status", "pending, approved, rejected", {
        /// Waiting for the user.
        Pending => "pending",
        /// Approved.
        Approved => "approved",
        /// Rejected.
        Rejected => "rejected",
    }
);

word_enum!(
    /// A plan's estimated cost.
    CostLevel, "estimated_cost_level", "low, medium, high", {
        /// Low.
        Low => "low",
        /// Medium.
        Medium => "medium",
        /// High.
        High => "high",
    }
);

word_enum!(
    /// A plan's risk (seed 000 section 4.1).
    RiskLevel, "risk_level", "low, medium, high, critical", {
        /// Low.
        Low => "low",
        /// Medium.
        Medium => "medium",
        /// High.
        High => "high",
        /// Critical.
        Critical => "critical",
    }
);

word_enum!(
    /// Where a step stands: seed 000's four words, plus the three ways a step ends without
    /// failing itself, so every step of a run leaves an entry that says what became of it.
    StepStatus, "status", "pending, running, complete, failed, denied, skipped, cancelled", {
        /// Not started.
        Pending => "pending",
        /// Running.
        Running => "running",
        /// Finished successfully.
        Complete => "complete",
        /// Failed (after its retries), or its output was blocked.
        Failed => "failed",
        /// Not run: the policy gate denied it or its approval was refused.
        Denied => "denied",
        /// Not run: a step it depends on did not succeed.
        Skipped => "skipped",
        /// Not run: the run was cancelled first.
        Cancelled => "cancelled",
    }
);

/// A stored execution plan.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct PlanRecord {
    /// The plan's id (assigned by the store).
    pub id: String,
    /// The tenant.
    pub tenant: TenantId,
    /// The user the plan belongs to.
    pub user: UserId,
    /// The task the plan carries out.
    pub task_description: String,
    /// The skills it will use.
    pub skills_planned: Vec<String>,
    /// The steps' dependencies (shape owned by `skills-orchestrate`).
    pub dependency_graph: Value,
    /// The groups of steps that may run in parallel (shape owned by `skills-orchestrate`).
    pub parallel_groups: Value,
    /// The estimated duration.
    pub estimated_duration_ms: Option<u64>,
    /// The estimated cost.
    pub estimated_cost_level: Option<CostLevel>,
    /// The plan's risk.
    pub risk_level: RiskLevel,
    /// Whether the user must approve it before it runs.
    pub approval_required: bool,
    /// The approval's state: `Pending` on creation when approval is required, else `None`.
    pub approval_status: Option<ApprovalStatus>,
    /// Who approved or rejected it.
    pub approved_by: Option<UserId>,
    /// When it was approved or rejected (the store's clock).
    pub approved_at: Option<Timestamp>,
    /// When execution started (the store's clock).
    pub execution_started_at: Option<Timestamp>,
    /// When execution finished (the store's clock).
    pub execution_completed_at: Option<Timestamp>,
    /// Whether it succeeded, once finished.
    pub success: Option<bool>,
    /// When it was created.
    pub created_at: Timestamp,
    /// When it last changed.
    pub updated_at: Timestamp,
}

/// A plan to create; the store assigns the id, owner and times.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct NewPlan {
    /// The task (required).
    pub task_description: String,
    /// The skills it will use (no empty ids).
    pub skills_planned: Vec<String>,
    /// The dependency graph (not `null`).
    pub dependency_graph: Value,
    /// The parallel groups (not `null`).
    pub parallel_groups: Value,
    /// The estimated duration.
    pub estimated_duration_ms: Option<u64>,
    /// The estimated cost.
    pub estimated_cost_level: Option<CostLevel>,
    /// The risk.
    pub risk_level: RiskLevel,
    /// Whether approval is required.
    pub approval_required: bool,
}

impl NewPlan {
    /// A plan with an empty graph (`{}`) and no parallel groups (`[]`), no estimates, and
    /// no approval required.
    pub fn new(
        task_description: impl Into<String>,
        skills_planned: Vec<String>,
        risk_level: RiskLevel,
    ) -> Self {
        NewPlan {
            task_description: task_description.into(),
            skills_planned,
            dependency_graph: Value::Object(serde_json::Map::new()),
            parallel_groups: Value::Array(Vec::new()),
            estimated_duration_ms: None,
            estimated_cost_level: None,
            risk_level,
            approval_required: false,
        }
    }

    /// Checks the plan as [`PlanStore::create_plan`] does.
    pub fn validate(&self) -> Result<()> {
        check_plan_fields(
            Some(&self.task_description),
            Some(&self.skills_planned),
            Some(&self.dependency_graph),
            Some(&self.parallel_groups),
        )
    }
}

fn check_plan_fields(
    task: Option<&String>,
    skills: Option<&Vec<String>>,
    graph: Option<&Value>,
    groups: Option<&Value>,
) -> Result<()> {
    if task.is_some_and(String::is_empty) {
        return Err(Error::invalid("task_description", Violation::Empty));
    }
    if let Some(index) = skills.and_then(|s| s.iter().position(String::is_empty)) {
        return Err(Error::invalid(
            format!("skills_planned[{index}]"),
            Violation::Empty,
        ));
    }
    if graph.is_some_and(Value::is_null) {
        return Err(Error::invalid("dependency_graph", Violation::Empty));
    }
    if groups.is_some_and(Value::is_null) {
        return Err(Error::invalid("parallel_groups", Violation::Empty));
    }
    Ok(())
}

/// Changes to a plan; `None` leaves a field alone.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct PlanUpdate {
    /// A new task description.
    pub task_description: Option<String>,
    /// New planned skills (after replanning).
    pub skills_planned: Option<Vec<String>>,
    /// A new dependency graph.
    pub dependency_graph: Option<Value>,
    /// New parallel groups.
    pub parallel_groups: Option<Value>,
    /// A new duration estimate.
    pub estimated_duration_ms: Option<u64>,
    /// A new cost estimate.
    pub estimated_cost_level: Option<CostLevel>,
    /// A new risk level.
    pub risk_level: Option<RiskLevel>,
    /// Whether approval is required.
    pub approval_required: Option<bool>,
    /// An approval decision: `Approved`/`Rejected` stamp `approved_at` and set `approved_by`;
    /// `Pending` clears both.
    pub approval: Option<(ApprovalStatus, Option<UserId>)>,
    /// Mark execution as started now.
    pub started: bool,
    /// Mark execution as finished now, successfully (`true`) or not.
    pub completed: Option<bool>,
}

impl PlanUpdate {
    /// No changes.
    pub fn new() -> Self {
        PlanUpdate::default()
    }

    /// Records an approval decision by `by`.
    pub fn approval(mut self, status: ApprovalStatus, by: Option<UserId>) -> Self {
        self.approval = Some((status, by));
        self
    }

    /// Marks execution as started.
    pub fn started(mut self) -> Self {
        self.started = true;
        self
    }

    /// Marks execution as finished.
    pub fn completed(mut self, success: bool) -> Self {
        self.completed = Some(success);
        self
    }

    /// Checks the update as [`PlanStore::update_plan`] does.
    pub fn validate(&self) -> Result<()> {
        check_plan_fields(
            self.task_description.as_ref(),
            self.skills_planned.as_ref(),
            self.dependency_graph.as_ref(),
            self.parallel_groups.as_ref(),
        )
    }

    /// Applies the (validated) update to `plan` at time `now`.
    pub fn apply_to(self, plan: &mut PlanRecord, now: Timestamp) {
        let PlanUpdate {
            task_description,
            skills_planned,
            dependency_graph,
            parallel_groups,
            estimated_duration_ms,
            estimated_cost_level,
            risk_level,
            approval_required,
            approval,
            started,
            completed,
        } = self;
        set(&mut plan.task_description, task_description);
        set(&mut plan.skills_planned, skills_planned);
        set(&mut plan.dependency_graph, dependency_graph);
        set(&mut plan.parallel_groups, parallel_groups);
        set(&mut plan.risk_level, risk_level);
        set(&mut plan.approval_required, approval_required);
        if estimated_duration_ms.is_some() {
            plan.estimated_duration_ms = estimated_duration_ms;
        }
        if estimated_cost_level.is_some() {
            plan.estimated_cost_level = estimated_cost_level;
        }
        if let Some((status, by)) = approval {
            let decided = status != ApprovalStatus::Pending;
            plan.approval_status = Some(status);
            plan.approved_by = if decided { by } else { None };
            plan.approved_at = decided.then_some(now);
        }
        if started {
            plan.execution_started_at = Some(now);
        }
        if let Some(success) = completed {
            plan.execution_completed_at = Some(now);
            plan.success = Some(success);
        }
        plan.updated_at = now;
    }
}

fn set<T>(field: &mut T, value: Option<T>) {
    if let Some(value) = value {
        *field = value;
    }
}

/// Which plans [`PlanStore::list_plans`] returns; every condition set must hold.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct PlanFilter {
    /// Only plans with this approval status.
    pub approval_status: Option<ApprovalStatus>,
    /// Only plans of this risk.
    pub risk_level: Option<RiskLevel>,
    /// Only finished (`true`) or unfinished (`false`) plans.
    pub completed: Option<bool>,
    /// At most this many plans.
    pub limit: Option<usize>,
}

impl PlanFilter {
    /// Every plan of the user.
    pub fn new() -> Self {
        PlanFilter::default()
    }

    /// Only plans with `status`.
    pub fn approval_status(mut self, status: ApprovalStatus) -> Self {
        self.approval_status = Some(status);
        self
    }

    /// Only plans of `risk`.
    pub fn risk_level(mut self, risk: RiskLevel) -> Self {
        self.risk_level = Some(risk);
        self
    }

    /// Only finished or unfinished plans.
    pub fn completed(mut self, completed: bool) -> Self {
        self.completed = Some(completed);
        self
    }

    /// At most `limit` plans.
    pub fn limit(mut self, limit: usize) -> Self {
        self.limit = Some(limit);
        self
    }

    /// Whether `plan` meets every condition but the limit.
    pub fn matches(&self, plan: &PlanRecord) -> bool {
        self.approval_status
            .is_none_or(|s| plan.approval_status == Some(s))
            && self.risk_level.is_none_or(|r| plan.risk_level == r)
            && self
                .completed
                .is_none_or(|c| plan.execution_completed_at.is_some() == c)
    }
}

/// One step's working memory: what it did and what it hands to the next step.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct WorkingMemoryEntry {
    /// The entry's id (assigned by the store).
    pub id: String,
    /// The plan.
    pub plan_id: String,
    /// The step's number, unique within the plan.
    pub step_number: u32,
    /// The skill the step runs.
    pub skill_id: String,
    /// Where the step stands.
    pub status: StepStatus,
    /// A summary for the next step.
    pub summary: Option<String>,
    /// File paths and the like.
    pub artifacts: Value,
    /// Facts learned.
    pub extracted_facts: Value,
    /// Hints for the next step.
    pub next_step_hints: Value,
    /// The highest data class of what produced the entry (`public` to `regulated`): a later
    /// step reads it as data of at least this class. `None` on entries written before it
    /// was kept (read as `internal`, the default source class).
    #[serde(default)]
    pub data_class: Option<String>,
    /// Where that data came from (source names), sorted.
    #[serde(default)]
    pub sources: Vec<String>,
    /// When it was created.
    pub created_at: Timestamp,
    /// When it last changed.
    pub updated_at: Timestamp,
}

/// A step to record in a plan's working memory.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct NewStep {
    /// The step's number (unique within the plan).
    pub step_number: u32,
    /// The skill (required).
    pub skill_id: String,
    /// The initial status.
    pub status: StepStatus,
    /// A summary.
    pub summary: Option<String>,
    /// Artifacts.
    pub artifacts: Value,
    /// Extracted facts.
    pub extracted_facts: Value,
    /// Hints for the next step.
    pub next_step_hints: Value,
    /// The highest data class of what produced it.
    pub data_class: Option<String>,
    /// Where that data came from.
    pub sources: Vec<String>,
}

impl NewStep {
    /// A pending step with no summary and `null` payloads.
    pub fn new(step_number: u32, skill_id: impl Into<String>) -> Self {
        NewStep {
            step_number,
            skill_id: skill_id.into(),
            status: StepStatus::Pending,
            summary: None,
            artifacts: Value::Null,
            extracted_facts: Value::Null,
            next_step_hints: Value::Null,
            data_class: None,
            sources: Vec::new(),
        }
    }
}

/// Changes to a step; `None` leaves a field alone.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct StepUpdate {
    /// A new status.
    pub status: Option<StepStatus>,
    /// A new summary.
    pub summary: Option<String>,
    /// New artifacts.
    pub artifacts: Option<Value>,
    /// New extracted facts.
    pub extracted_facts: Option<Value>,
    /// New hints.
    pub next_step_hints: Option<Value>,
    /// A new data class (of what produced the entry).
    pub data_class: Option<String>,
    /// New sources.
    pub sources: Option<Vec<String>>,
}

impl StepUpdate {
    /// No changes.
    pub fn new() -> Self {
        StepUpdate::default()
    }

    /// Sets the status.
    pub fn status(mut self, status: StepStatus) -> Self {
        self.status = Some(status);
        self
    }

    /// Sets the summary.
    pub fn summary(mut self, summary: impl Into<String>) -> Self {
        self.summary = Some(summary.into());
        self
    }

    /// Applies the update to `step` at time `now`.
    pub fn apply_to(self, step: &mut WorkingMemoryEntry, now: Timestamp) {
        set(&mut step.status, self.status);
        if self.summary.is_some() {
            step.summary = self.summary;
        }
        set(&mut step.artifacts, self.artifacts);
        set(&mut step.extracted_facts, self.extracted_facts);
        set(&mut step.next_step_hints, self.next_step_hints);
        if self.data_class.is_some() {
            step.data_class = self.data_class;
        }
        set(&mut step.sources, self.sources);
        step.updated_at = now;
    }
}

/// Execution plans and their working memory, per user.
///
/// ```
/// use skills_store_traits::plans::{NewPlan, NewStep, PlanUpdate, RiskLevel, StepStatus, StepUpdate};
/// use skills_store_traits::{PlanStore, UserScope, in_memory::InMemoryPlanStore};
///
/// # futures::executor::block_on(async {
/// let store = InMemoryPlanStore::new();
/// let alice = UserScope::new("acme", "alice");
/// let plan = store
///     .create_plan(&alice, NewPlan::new("summarize the PDF", vec!["pdf".into()], RiskLevel::Low))
///     .await?;
/// store.insert_step(&alice, &plan.id, NewStep::new(1, "pdf")).await?;
/// store
///     .update_step(&alice, &plan.id, 1, StepUpdate::new().status(StepStatus::Complete))
///     .await?;
/// let plan = store.update_plan(&alice, &plan.id, PlanUpdate::new().completed(true)).await?;
/// assert_eq!(plan.success, Some(true));
///
/// // Bob cannot see Alice's plan.
/// let bob = UserScope::new("acme", "bob");
/// assert_eq!(store.get_plan(&bob, &plan.id).await?, None);
/// # Ok::<(), skills_store_traits::Error>(())
/// # }).unwrap();
/// ```
#[async_trait::async_trait]
pub trait PlanStore: Send + Sync {
    /// Stores a new plan for the user (validated by [`NewPlan::validate`]).
    async fn create_plan(&self, scope: &UserScope, plan: NewPlan) -> Result<PlanRecord>;

    /// The user's plan with this id.
    async fn get_plan(&self, scope: &UserScope, plan_id: &str) -> Result<Option<PlanRecord>>;

    /// The user's plans matching `filter`, oldest first (by creation time, then id).
    async fn list_plans(&self, scope: &UserScope, filter: &PlanFilter) -> Result<Vec<PlanRecord>>;

    /// Applies `update` (validated by [`PlanUpdate::validate`]) to the user's plan.
    async fn update_plan(
        &self,
        scope: &UserScope,
        plan_id: &str,
        update: PlanUpdate,
    ) -> Result<PlanRecord>;

    /// Deletes the user's plan and all its working memory.
    async fn delete_plan(&self, scope: &UserScope, plan_id: &str) -> Result<()>;

    /// Records a step of the user's plan; [`Error::Conflict`] if the plan already has one
    /// with this number, [`Error::NotFound`] if the user has no such plan.
    async fn insert_step(
        &self,
        scope: &UserScope,
        plan_id: &str,
        step: NewStep,
    ) -> Result<WorkingMemoryEntry>;

    /// Applies `update` to a step of the user's plan.
    async fn update_step(
        &self,
        scope: &UserScope,
        plan_id: &str,
        step_number: u32,
        update: StepUpdate,
    ) -> Result<WorkingMemoryEntry>;

    /// A step of the user's plan.
    async fn get_step(
        &self,
        scope: &UserScope,
        plan_id: &str,
        step_number: u32,
    ) -> Result<Option<WorkingMemoryEntry>>;

    /// The steps of the user's plan by step number; [`Error::NotFound`] if the user has no
    /// such plan.
    async fn list_steps(&self, scope: &UserScope, plan_id: &str)
    -> Result<Vec<WorkingMemoryEntry>>;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_round_trip_and_unknown_words_are_refused() {
        for status in [
            StepStatus::Pending,
            StepStatus::Running,
            StepStatus::Complete,
            StepStatus::Failed,
            StepStatus::Denied,
            StepStatus::Skipped,
            StepStatus::Cancelled,
        ] {
            assert_eq!(status.as_str().parse::<StepStatus>().unwrap(), status);
            let json = serde_json::to_string(&status).unwrap();
            assert_eq!(json, format!("\"{status}\""));
        }
        let err = "done".parse::<StepStatus>().unwrap_err();
        assert!(
            matches!(err, Error::Invalid { ref field, violation: Violation::UnknownValue { .. } } if field == "status")
        );
        assert!("Critical".parse::<RiskLevel>().is_err());
    }

    #[test]
    fn validation_names_the_field() {
        let mut plan = NewPlan::new("t", vec!["a".into(), String::new()], RiskLevel::Low);
        let err = plan.validate().unwrap_err();
        assert!(matches!(err, Error::Invalid { ref field, .. } if field == "skills_planned[1]"));
        plan.skills_planned.pop();
        plan.parallel_groups = Value::Null;
        let err = plan.validate().unwrap_err();
        assert!(matches!(err, Error::Invalid { ref field, .. } if field == "parallel_groups"));
        let update = PlanUpdate {
            task_description: Some(String::new()),
            ..PlanUpdate::default()
        };
        assert!(update.validate().is_err());
    }
}
