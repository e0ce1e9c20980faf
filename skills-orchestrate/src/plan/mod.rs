//! Plans: a task's skills as a dependency graph, run group by group.
//!
//! A [`Planner`] turns [`StepSpec`]s (a step id, the skill it runs, its briefing and the ids of
//! the steps it needs) into an [`ExecutionPlan`] (seed 000 sections 3.1 and 3.2):
//!
//! - **Graph.** The dependencies must form a DAG (petgraph): a duplicate or empty id, a
//!   dependency on an unknown step or on itself, or an empty plan is
//!   [`Error::Invalid`](crate::Error::Invalid); a cycle is [`Error::Cycle`](crate::Error::Cycle)
//!   naming its steps in order, starting from the smallest id on it.
//! - **Groups and numbers.** A step's group is its topological level (0 without dependencies,
//!   else one more than its deepest dependency); within a group steps keep the order they were
//!   given. [`ExecutionPlan::steps`] lists them group by group, numbered from 1.
//! - **Estimates.** A step's estimate is the median of its skill's past durations
//!   ([`DurationHistory`], [`DurationSamples`] from the audit log, the learning store or the
//!   host), else a default; the plan's is the sum over groups of each group's slowest step.
//! - **Cost.** The model tokens the steps are expected to use, as a level ([`CostRule`]).
//! - **Risk and approval.** A step's risk comes from its skill's trust level and risk
//!   ([`SkillRisk`]; unknown skills count as unreviewed community skills, `High`). Whether it
//!   needs approval comes from an [`ApprovalPolicy`] (the [`PolicyGate`](skills_security::gate::PolicyGate)
//!   previewed by [`GatePreview`]), else from its risk (`High` and above); a denied step fails
//!   planning. The plan's risk is its steps' highest; it needs approval when any step does.
//! - **Display and persistence.** [`ExecutionPlan::display`] is the `plan_created` shape;
//!   [`save_plan`] and [`load_plan`] keep plans in a
//!   [`PlanStore`](skills_store_traits::PlanStore) for approval and resume.
//!
//! ```
//! use skills_orchestrate::plan::{Planner, StepSpec};
//!
//! # futures::executor::block_on(async {
//! let plan = Planner::new()
//!     .plan(
//!         "Prepare the quarterly review",
//!         vec![
//!             StepSpec::new("crm", "crm-lookup", "Find the account"),
//!             StepSpec::new("sheet", "xlsx", "Load the figures"),
//!             StepSpec::new("deck", "pptx", "Build the deck").after("crm").after("sheet"),
//!         ],
//!     )
//!     .await?;
//! assert_eq!(plan.groups, vec![vec!["crm", "sheet"], vec!["deck"]]);
//! assert_eq!(plan.step("deck").map(|s| s.number), Some(3));
//! assert_eq!(plan.dependents("crm"), vec!["deck"]);
//! // Nothing is known about these skills: they count as community skills, high risk.
//! assert!(plan.requires_approval);
//! # Ok::<(), skills_orchestrate::Error>(())
//! # }).unwrap();
//! ```

mod cost;
mod estimate;
mod graph;
mod planner;
mod risk;
mod store;

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

pub use cost::CostRule;
pub use estimate::{DurationHistory, DurationSamples};
pub use planner::{DEFAULT_STEP_ESTIMATE_MS, Planner};
pub use risk::{
    ApprovalPolicy, GatePreview, SkillRisk, SkillRiskTable, default_risk, plan_risk, security_risk,
};
pub use skills_store_traits::plans::{CostLevel, RiskLevel};
pub use store::{PLAN_FORMAT, load_plan, plan_from_record, save_plan};

use crate::progress::{PlanDisplay, PlanStepDisplay};

/// A step as the caller asks for it: what runs, why, and after what.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StepSpec {
    /// The step's id, unique within the plan.
    pub id: String,
    /// The skill it runs.
    pub skill: String,
    /// What the step must do (the sub-agent's briefing).
    pub briefing: String,
    /// The ids of the steps that must finish first.
    pub depends_on: Vec<String>,
}

impl StepSpec {
    /// A step `id` running `skill` with `briefing`, depending on nothing.
    pub fn new(
        id: impl Into<String>,
        skill: impl Into<String>,
        briefing: impl Into<String>,
    ) -> Self {
        StepSpec {
            id: id.into(),
            skill: skill.into(),
            briefing: briefing.into(),
            depends_on: Vec::new(),
        }
    }

    /// The same step, also running after `dep`.
    pub fn after(mut self, dep: impl Into<String>) -> Self {
        self.depends_on.push(dep.into());
        self
    }
}

/// A planned step.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlanStep {
    /// Its number, from 1, in execution order (group by group).
    pub number: u32,
    /// Its id.
    pub id: String,
    /// The skill it runs.
    pub skill: String,
    /// What it must do.
    pub briefing: String,
    /// The ids of the steps that must finish first, as given.
    pub depends_on: Vec<String>,
    /// Its estimated duration, in milliseconds.
    pub estimated_ms: u64,
    /// Its risk.
    pub risk: RiskLevel,
    /// Whether it needs the user's approval before it runs.
    pub requires_approval: bool,
    /// Why it needs approval (the policy's reason), when it does.
    pub approval_reason: Option<String>,
}

/// A plan: numbered steps, parallel groups and the estimates shown to the user.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExecutionPlan {
    /// The plan's id.
    pub id: String,
    /// The task it carries out.
    pub task: String,
    /// Its steps in execution order: group by group, stable within a group.
    pub steps: Vec<PlanStep>,
    /// The step ids of each parallel group (topological level), in execution order.
    pub groups: Vec<Vec<String>>,
    /// The estimated wall-clock duration: the sum over groups of the group's longest step
    /// (groups run one after another, a group's steps at the same time).
    pub estimated_duration_ms: u64,
    /// The model tokens the plan is expected to use ([`CostRule::tokens`]).
    pub estimated_tokens: u64,
    /// The estimated cost ([`CostRule::level`] of the estimated tokens).
    pub cost: CostLevel,
    /// The highest risk of its steps.
    pub risk: RiskLevel,
    /// Whether any step needs the user's approval.
    pub requires_approval: bool,
}

impl ExecutionPlan {
    /// The step with this id (a linear search; see [`ExecutionPlan::steps_by_id`] for many
    /// lookups).
    pub fn step(&self, id: &str) -> Option<&PlanStep> {
        self.steps.iter().find(|step| step.id == id)
    }

    /// The step numbered `number` (from 1).
    pub fn step_by_number(&self, number: u32) -> Option<&PlanStep> {
        let index = usize::try_from(number).ok()?.checked_sub(1)?;
        self.steps.get(index).filter(|step| step.number == number)
    }

    /// Every step by id, for many lookups.
    pub fn steps_by_id(&self) -> HashMap<&str, &PlanStep> {
        self.steps
            .iter()
            .map(|step| (step.id.as_str(), step))
            .collect()
    }

    /// The ids of every step that (transitively) depends on `id`, sorted. O(V + E) per call.
    pub fn dependents(&self, id: &str) -> Vec<String> {
        graph::transitive_dependents(&self.steps, id)
    }

    /// The plan as the user sees it (`plan_created`, seed 000 section 3.2): each step lists
    /// the other steps of its group as the ones it can run in parallel with (so the display
    /// of a group of `k` steps holds `k * (k - 1)` ids).
    pub fn display(&self) -> PlanDisplay {
        let group_of: HashMap<&str, &Vec<String>> = self
            .groups
            .iter()
            .flat_map(|group| group.iter().map(move |id| (id.as_str(), group)))
            .collect();
        let steps = self
            .steps
            .iter()
            .map(|step| {
                let group = group_of.get(step.id.as_str());
                let parallel_count = group.map_or(0, |group| group.len().saturating_sub(1));
                // A group of k steps would list k(k-1) ids in all; past the cap the count
                // says how many there are, so a wide plan's display stays linear in size.
                let can_parallelize = group
                    .map(|group| {
                        group
                            .iter()
                            .filter(|id| **id != step.id)
                            .take(MAX_PARALLEL_SHOWN)
                            .cloned()
                            .collect()
                    })
                    .unwrap_or_default();
                PlanStepDisplay {
                    step: step.number,
                    step_id: step.id.clone(),
                    skill: step.skill.clone(),
                    description: step.briefing.clone(),
                    can_parallelize,
                    parallel_count,
                }
            })
            .collect();
        PlanDisplay {
            plan_id: self.id.clone(),
            steps,
            estimated_duration_ms: self.estimated_duration_ms,
            requires_approval: self.requires_approval,
        }
    }
}

/// How many of a step's parallel siblings [`ExecutionPlan::display`] names; the rest are
/// counted in [`PlanStepDisplay::parallel_count`].
pub const MAX_PARALLEL_SHOWN: usize = 16;
