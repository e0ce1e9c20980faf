//! Saving a plan to a [`PlanStore`] and loading it back (to resume it, or to run it once it
//! is approved).
//!
//! The record's columns hold what the store queries (task, skills, estimates, risk, approval);
//! the steps themselves (id, briefing, dependencies, estimate, risk, approval) travel in the
//! record's `dependency_graph` JSON, and the groups in `parallel_groups`. One working-memory
//! entry per step is inserted, `pending`, numbered like the plan's steps; the executor updates
//! them as the steps run and never has to insert one.
//!
//! Threat: a stored plan edited (or corrupted) so that a step would run before one it depends
//! on, or a step nobody planned appears. Guarantee: [`load_plan`] rebuilds the groups and the
//! numbering from the stored dependencies and refuses ([`Error::Invalid`]) a plan whose stored
//! groups, numbers or skills disagree with them, or whose dependencies are not a DAG.

use serde::{Deserialize, Serialize};
use skills_store_traits::plans::{NewPlan, NewStep, PlanRecord, WorkingMemoryEntry};
use skills_store_traits::{PlanStore, UserScope};

use super::{ExecutionPlan, PlanStep, StepSpec, graph};
use crate::error::{Error, Result};

/// The version of the `dependency_graph` JSON written by [`save_plan`].
pub const PLAN_FORMAT: &str = "skills-orchestrate.plan/1";

#[derive(Serialize, Deserialize)]
struct StoredGraph {
    format: String,
    plan_id: String,
    estimated_tokens: u64,
    steps: Vec<PlanStep>,
}

fn corrupt(reason: impl Into<String>) -> Error {
    Error::Invalid {
        what: "stored plan".into(),
        reason: reason.into(),
    }
}

/// Stores `plan` for the user, with one pending working-memory entry per step; the record's
/// id (the store's) is how [`load_plan`] finds it again. If a step cannot be stored, the plan
/// is deleted again (best effort) and the error returned.
///
/// ```
/// use skills_orchestrate::plan::{Planner, StepSpec, load_plan, save_plan};
/// use skills_store_traits::{UserScope, in_memory::InMemoryPlanStore};
///
/// # futures::executor::block_on(async {
/// let store = InMemoryPlanStore::new();
/// let alice = UserScope::new("acme", "alice");
/// let plan = Planner::new()
///     .plan("Summarize", vec![StepSpec::new("read", "pdf", "Read the PDF")])
///     .await?;
/// let record = save_plan(&store, &alice, &plan).await?;
/// let (loaded, memory) = load_plan(&store, &alice, &record.id).await?.unwrap();
/// assert_eq!(loaded, plan);
/// assert_eq!(memory.len(), 1);
/// # Ok::<(), skills_orchestrate::Error>(())
/// # }).unwrap();
/// ```
pub async fn save_plan(
    store: &dyn PlanStore,
    scope: &UserScope,
    plan: &ExecutionPlan,
) -> Result<PlanRecord> {
    let graph = StoredGraph {
        format: PLAN_FORMAT.into(),
        plan_id: plan.id.clone(),
        estimated_tokens: plan.estimated_tokens,
        steps: plan.steps.clone(),
    };
    let mut new = NewPlan::new(
        plan.task.clone(),
        plan.steps.iter().map(|s| s.skill.clone()).collect(),
        plan.risk,
    );
    new.dependency_graph = serde_json::to_value(&graph).map_err(|e| corrupt(e.to_string()))?;
    new.parallel_groups = serde_json::to_value(&plan.groups).map_err(|e| corrupt(e.to_string()))?;
    new.estimated_duration_ms = Some(plan.estimated_duration_ms);
    new.estimated_cost_level = Some(plan.cost);
    new.approval_required = plan.requires_approval;
    let record = store.create_plan(scope, new).await?;
    for step in &plan.steps {
        let inserted = store
            .insert_step(
                scope,
                &record.id,
                NewStep::new(step.number, step.skill.clone()),
            )
            .await;
        if let Err(error) = inserted {
            // The half-stored plan must not be resumed; the original error matters more than
            // a failed clean-up.
            let _ = store.delete_plan(scope, &record.id).await;
            return Err(error.into());
        }
    }
    Ok(record)
}

/// The user's stored plan with the store's id `plan_id`, and its working memory by step
/// number; `None` when the user has no such plan.
///
/// The task, duration, cost, risk and approval come from the record's columns (so an update
/// through the store shows), the steps and the plan's own id from the JSON [`save_plan`]
/// wrote.
///
/// # Errors
/// [`Error::Invalid`] when the record was not written by [`save_plan`] or its steps, groups
/// and dependencies disagree (see the module documentation); the store's errors.
pub async fn load_plan(
    store: &dyn PlanStore,
    scope: &UserScope,
    plan_id: &str,
) -> Result<Option<(ExecutionPlan, Vec<WorkingMemoryEntry>)>> {
    let Some(record) = store.get_plan(scope, plan_id).await? else {
        return Ok(None);
    };
    let plan = plan_from_record(&record)?;
    let memory = store.list_steps(scope, plan_id).await?;
    Ok(Some((plan, memory)))
}

/// Rebuilds and checks the plan a [`save_plan`] record holds.
pub fn plan_from_record(record: &PlanRecord) -> Result<ExecutionPlan> {
    let graph: StoredGraph = serde_json::from_value(record.dependency_graph.clone())
        .map_err(|e| corrupt(format!("dependency_graph: {e}")))?;
    if graph.format != PLAN_FORMAT {
        return Err(corrupt(format!(
            "dependency_graph format `{}`, expected `{PLAN_FORMAT}`",
            graph.format
        )));
    }
    let groups: Vec<Vec<String>> = serde_json::from_value(record.parallel_groups.clone())
        .map_err(|e| corrupt(format!("parallel_groups: {e}")))?;
    check_consistent(&graph.steps, &groups, &record.skills_planned)?;
    let Some(estimated_duration_ms) = record.estimated_duration_ms else {
        return Err(corrupt("no estimated duration"));
    };
    let Some(cost) = record.estimated_cost_level else {
        return Err(corrupt("no cost level"));
    };
    Ok(ExecutionPlan {
        id: graph.plan_id,
        task: record.task_description.clone(),
        steps: graph.steps,
        groups,
        estimated_duration_ms,
        estimated_tokens: graph.estimated_tokens,
        cost,
        risk: record.risk_level,
        requires_approval: record.approval_required,
    })
}

/// The stored steps must be in the order planning gives their dependencies, numbered from 1,
/// grouped by level, and run the planned skills.
fn check_consistent(steps: &[PlanStep], groups: &[Vec<String>], skills: &[String]) -> Result<()> {
    let specs: Vec<StepSpec> = steps
        .iter()
        .map(|s| StepSpec {
            id: s.id.clone(),
            skill: s.skill.clone(),
            briefing: s.briefing.clone(),
            depends_on: s.depends_on.clone(),
        })
        .collect();
    let levels = graph::levels(&specs).map_err(|e| corrupt(e.to_string()))?;
    if levels.order.iter().enumerate().any(|(i, &at)| i != at) {
        return Err(corrupt("the steps are not in dependency order"));
    }
    if let Some(step) = steps
        .iter()
        .enumerate()
        .find(|(i, s)| usize::try_from(s.number).ok() != Some(i + 1))
    {
        return Err(corrupt(format!("step `{}` is misnumbered", step.1.id)));
    }
    let mut expected: Vec<Vec<String>> = vec![Vec::new(); levels.count];
    for (i, step) in steps.iter().enumerate() {
        expected[levels.level[i]].push(step.id.clone());
    }
    if expected != groups {
        return Err(corrupt("the parallel groups do not match the dependencies"));
    }
    if !steps.iter().map(|s| &s.skill).eq(skills.iter()) {
        return Err(corrupt("the steps' skills do not match the planned skills"));
    }
    Ok(())
}
