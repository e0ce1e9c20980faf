//! The in-memory [`PlanStore`].

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, RwLock};

use crate::error::{Error, Result, Violation};
use crate::plans::{
    ApprovalStatus, NewPlan, NewStep, PlanFilter, PlanRecord, PlanStore, PlanUpdate, StepUpdate,
    WorkingMemoryEntry,
};
use crate::tenancy::UserScope;
use crate::time::{Clock, SystemClock, new_id};

use super::lock;

/// Plans in memory, keyed by owner, each with its steps, so a plan and its working memory
/// go together (deleting a plan drops its steps) and another user's plan is unreachable.
#[derive(Debug)]
pub struct InMemoryPlanStore {
    clock: Arc<dyn Clock>,
    users: RwLock<HashMap<UserScope, HashMap<String, StoredPlan>>>,
}

#[derive(Debug)]
struct StoredPlan {
    plan: PlanRecord,
    steps: BTreeMap<u32, WorkingMemoryEntry>,
}

impl InMemoryPlanStore {
    /// An empty store on the system clock.
    pub fn new() -> Self {
        Self::with_clock(Arc::new(SystemClock))
    }

    /// An empty store stamping times from `clock`.
    pub fn with_clock(clock: Arc<dyn Clock>) -> Self {
        InMemoryPlanStore {
            clock,
            users: RwLock::new(HashMap::new()),
        }
    }
}

impl Default for InMemoryPlanStore {
    fn default() -> Self {
        Self::new()
    }
}

fn plan_not_found(plan_id: &str) -> Error {
    Error::not_found("plan", plan_id)
}

#[async_trait::async_trait]
impl PlanStore for InMemoryPlanStore {
    async fn create_plan(&self, scope: &UserScope, plan: NewPlan) -> Result<PlanRecord> {
        plan.validate()?;
        let now = self.clock.now();
        let record = PlanRecord {
            id: new_id(),
            tenant: scope.tenant.clone(),
            user: scope.user.clone(),
            task_description: plan.task_description,
            skills_planned: plan.skills_planned,
            dependency_graph: plan.dependency_graph,
            parallel_groups: plan.parallel_groups,
            estimated_duration_ms: plan.estimated_duration_ms,
            estimated_cost_level: plan.estimated_cost_level,
            risk_level: plan.risk_level,
            approval_required: plan.approval_required,
            approval_status: plan.approval_required.then_some(ApprovalStatus::Pending),
            approved_by: None,
            approved_at: None,
            execution_started_at: None,
            execution_completed_at: None,
            success: None,
            created_at: now,
            updated_at: now,
        };
        let mut users = lock::write(&self.users)?;
        users.entry(scope.clone()).or_default().insert(
            record.id.clone(),
            StoredPlan {
                plan: record.clone(),
                steps: BTreeMap::new(),
            },
        );
        Ok(record)
    }

    async fn get_plan(&self, scope: &UserScope, plan_id: &str) -> Result<Option<PlanRecord>> {
        let users = lock::read(&self.users)?;
        Ok(users
            .get(scope)
            .and_then(|plans| plans.get(plan_id))
            .map(|stored| stored.plan.clone()))
    }

    async fn list_plans(&self, scope: &UserScope, filter: &PlanFilter) -> Result<Vec<PlanRecord>> {
        let users = lock::read(&self.users)?;
        let mut plans: Vec<PlanRecord> = users
            .get(scope)
            .into_iter()
            .flat_map(HashMap::values)
            .map(|stored| &stored.plan)
            .filter(|plan| filter.matches(plan))
            .cloned()
            .collect();
        drop(users);
        plans.sort_by(|a, b| (a.created_at, &a.id).cmp(&(b.created_at, &b.id)));
        plans.truncate(filter.limit.unwrap_or(usize::MAX));
        Ok(plans)
    }

    async fn update_plan(
        &self,
        scope: &UserScope,
        plan_id: &str,
        update: PlanUpdate,
    ) -> Result<PlanRecord> {
        update.validate()?;
        let now = self.clock.now();
        let mut users = lock::write(&self.users)?;
        let stored = users
            .get_mut(scope)
            .and_then(|plans| plans.get_mut(plan_id))
            .ok_or_else(|| plan_not_found(plan_id))?;
        update.apply_to(&mut stored.plan, now);
        Ok(stored.plan.clone())
    }

    async fn delete_plan(&self, scope: &UserScope, plan_id: &str) -> Result<()> {
        let mut users = lock::write(&self.users)?;
        users
            .get_mut(scope)
            .and_then(|plans| plans.remove(plan_id))
            .map(|_| ())
            .ok_or_else(|| plan_not_found(plan_id))
    }

    async fn insert_step(
        &self,
        scope: &UserScope,
        plan_id: &str,
        step: NewStep,
    ) -> Result<WorkingMemoryEntry> {
        if step.skill_id.is_empty() {
            return Err(Error::invalid("skill_id", Violation::Empty));
        }
        let now = self.clock.now();
        let mut users = lock::write(&self.users)?;
        let stored = users
            .get_mut(scope)
            .and_then(|plans| plans.get_mut(plan_id))
            .ok_or_else(|| plan_not_found(plan_id))?;
        if stored.steps.contains_key(&step.step_number) {
            return Err(Error::conflict(
                "plan step",
                format!("{plan_id}#{}", step.step_number),
            ));
        }
        let entry = WorkingMemoryEntry {
            id: new_id(),
            plan_id: plan_id.to_owned(),
            step_number: step.step_number,
            skill_id: step.skill_id,
            status: step.status,
            summary: step.summary,
            artifacts: step.artifacts,
            extracted_facts: step.extracted_facts,
            next_step_hints: step.next_step_hints,
            data_class: step.data_class,
            sources: step.sources,
            created_at: now,
            updated_at: now,
        };
        stored.steps.insert(entry.step_number, entry.clone());
        Ok(entry)
    }

    async fn update_step(
        &self,
        scope: &UserScope,
        plan_id: &str,
        step_number: u32,
        update: StepUpdate,
    ) -> Result<WorkingMemoryEntry> {
        let now = self.clock.now();
        let mut users = lock::write(&self.users)?;
        let stored = users
            .get_mut(scope)
            .and_then(|plans| plans.get_mut(plan_id))
            .ok_or_else(|| plan_not_found(plan_id))?;
        let step = stored
            .steps
            .get_mut(&step_number)
            .ok_or_else(|| Error::not_found("plan step", format!("{plan_id}#{step_number}")))?;
        update.apply_to(step, now);
        Ok(step.clone())
    }

    async fn get_step(
        &self,
        scope: &UserScope,
        plan_id: &str,
        step_number: u32,
    ) -> Result<Option<WorkingMemoryEntry>> {
        let users = lock::read(&self.users)?;
        Ok(users
            .get(scope)
            .and_then(|plans| plans.get(plan_id))
            .and_then(|stored| stored.steps.get(&step_number))
            .cloned())
    }

    async fn list_steps(
        &self,
        scope: &UserScope,
        plan_id: &str,
    ) -> Result<Vec<WorkingMemoryEntry>> {
        let users = lock::read(&self.users)?;
        users
            .get(scope)
            .and_then(|plans| plans.get(plan_id))
            .map(|stored| stored.steps.values().cloned().collect())
            .ok_or_else(|| plan_not_found(plan_id))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plans::RiskLevel;
    use crate::time::ManualClock;

    #[tokio::test]
    async fn approval_and_lifecycle_are_stamped_from_the_store_clock() {
        let clock = ManualClock::new(100);
        let store = InMemoryPlanStore::with_clock(clock.clone());
        let scope = UserScope::new("t", "u");
        let mut new = NewPlan::new("task", vec!["pdf".into()], RiskLevel::High);
        new.approval_required = true;
        let plan = store.create_plan(&scope, new).await.unwrap();
        assert_eq!(plan.approval_status, Some(ApprovalStatus::Pending));
        clock.advance(1);
        let update = PlanUpdate::new()
            .approval(ApprovalStatus::Approved, Some("boss".into()))
            .started();
        let plan = store.update_plan(&scope, &plan.id, update).await.unwrap();
        assert_eq!(plan.approved_at, Some(101));
        assert_eq!(plan.execution_started_at, Some(101));
        assert_eq!(plan.approved_by.as_ref().map(|u| u.as_str()), Some("boss"));
        let update = PlanUpdate::new().approval(ApprovalStatus::Pending, Some("x".into()));
        let plan = store.update_plan(&scope, &plan.id, update).await.unwrap();
        assert_eq!((plan.approved_by, plan.approved_at), (None, None));
    }
}
