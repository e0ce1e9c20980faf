//! Stored plans (seed 000 part 6): a plan is stored when it is made, its approval or
//! refusal is recorded on it (who, when) and on the audit trail with its risk level, an
//! approved stored plan runs under its own record, and a failed run is audited.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::sync::Arc;

use async_trait::async_trait;
use skills_orchestrate::Error;
use skills_orchestrate::execute::{
    Executor, InMemorySkills, NativeSkill, SkillDefinition, SkillInput, StepError, StepOutput,
};
use skills_orchestrate::orchestrator::{
    FixedPlanApproval, OrchestrationStatus, Orchestrator, TaskRun,
};
use skills_orchestrate::plan::{Planner, SkillRiskTable};
use skills_orchestrate::select::{AgentSkills, SkillCandidate, SkillSelector, Task};
use skills_security::TrustLevel;
use skills_security::approval::ApprovalOption;
use skills_security::audit::{AuditTrail, PlanEvent, PlanFlag};
use skills_security::gate::PolicyGate;
use skills_store_traits::Result as StoreResult;
use skills_store_traits::audit::AuditQuery;
use skills_store_traits::plans::{
    ApprovalStatus, NewPlan, NewStep, PlanFilter, PlanRecord, PlanUpdate, StepUpdate,
    WorkingMemoryEntry,
};
use skills_store_traits::{PlanStore, TenantId, UserScope, in_memory::InMemoryPlanStore};

struct Lookup {
    fail: bool,
}

#[async_trait]
impl NativeSkill for Lookup {
    async fn run(&self, input: &SkillInput) -> Result<StepOutput, StepError> {
        if self.fail {
            return Err(StepError::failed("the CRM is down"));
        }
        Ok(StepOutput::text(format!("looked up for {}", input.step_id)))
    }
}

struct World {
    orchestrator: Orchestrator,
    store: Arc<Yielding>,
    trail: AuditTrail,
}

/// The in-memory plan store, yielding once before each read of a plan (as a database's
/// round trip does), so concurrent calls interleave there.
#[derive(Default)]
struct Yielding(InMemoryPlanStore);

async fn yield_once() {
    let mut yielded = false;
    futures::future::poll_fn(|cx| {
        if yielded {
            std::task::Poll::Ready(())
        } else {
            yielded = true;
            cx.waker().wake_by_ref();
            std::task::Poll::Pending
        }
    })
    .await
}

#[async_trait]
impl PlanStore for Yielding {
    async fn create_plan(&self, scope: &UserScope, plan: NewPlan) -> StoreResult<PlanRecord> {
        self.0.create_plan(scope, plan).await
    }
    async fn get_plan(&self, scope: &UserScope, plan_id: &str) -> StoreResult<Option<PlanRecord>> {
        yield_once().await;
        self.0.get_plan(scope, plan_id).await
    }
    async fn list_plans(
        &self,
        scope: &UserScope,
        filter: &PlanFilter,
    ) -> StoreResult<Vec<PlanRecord>> {
        self.0.list_plans(scope, filter).await
    }
    async fn update_plan(
        &self,
        scope: &UserScope,
        plan_id: &str,
        update: PlanUpdate,
    ) -> StoreResult<PlanRecord> {
        self.0.update_plan(scope, plan_id, update).await
    }
    async fn delete_plan(&self, scope: &UserScope, plan_id: &str) -> StoreResult<()> {
        self.0.delete_plan(scope, plan_id).await
    }
    async fn insert_step(
        &self,
        scope: &UserScope,
        plan_id: &str,
        step: NewStep,
    ) -> StoreResult<WorkingMemoryEntry> {
        self.0.insert_step(scope, plan_id, step).await
    }
    async fn update_step(
        &self,
        scope: &UserScope,
        plan_id: &str,
        number: u32,
        update: StepUpdate,
    ) -> StoreResult<WorkingMemoryEntry> {
        self.0.update_step(scope, plan_id, number, update).await
    }
    async fn get_step(
        &self,
        scope: &UserScope,
        plan_id: &str,
        number: u32,
    ) -> StoreResult<Option<WorkingMemoryEntry>> {
        self.0.get_step(scope, plan_id, number).await
    }
    async fn list_steps(
        &self,
        scope: &UserScope,
        plan_id: &str,
    ) -> StoreResult<Vec<WorkingMemoryEntry>> {
        self.0.list_steps(scope, plan_id).await
    }
}

fn world(approver: Option<Option<ApprovalOption>>, fail: bool) -> World {
    let trail = AuditTrail::in_memory();
    let store = Arc::new(Yielding::default());
    let skills =
        InMemorySkills::new().with(SkillDefinition::native("crm-lookup").trust(TrustLevel::User));
    let executor = Executor::builder(Arc::new(skills), PolicyGate::allow_all(trail.clone()))
        .native("crm-lookup", Arc::new(Lookup { fail }))
        .plan_store(store.clone())
        .build();
    let selector = SkillSelector::new(AgentSkills::new().with("SupportAgent", ["crm-lookup"]));
    let index = vec![
        SkillCandidate::new("crm-lookup", "Look up an account in the CRM").triggers(["look up"]),
    ];
    let planner = Planner::new().risks(Arc::new(
        SkillRiskTable::new().skill("crm-lookup", TrustLevel::User),
    ));
    let mut orchestrator = Orchestrator::new(selector, index, executor)
        .planner(planner)
        .plan_store(store.clone());
    if let Some(answer) = approver {
        orchestrator = orchestrator.approver(Arc::new(FixedPlanApproval(answer)));
    }
    World {
        orchestrator,
        store,
        trail,
    }
}

fn alice() -> UserScope {
    UserScope::new("acme", "alice")
}

fn run() -> TaskRun {
    TaskRun::new(alice(), "SupportAgent")
}

/// The plan events on the tenant's chain, in order: (event, plan id, risk, by).
async fn plan_events(trail: &AuditTrail) -> Vec<(PlanEvent, String, String, Option<String>)> {
    let entries = trail
        .store()
        .query(&TenantId::new("acme"), &AuditQuery::new())
        .await
        .unwrap();
    entries
        .iter()
        .filter_map(|e| PlanFlag::find(&e.record))
        .map(|f| (f.event, f.plan_id, f.risk, f.by))
        .collect()
}

#[tokio::test]
async fn an_approved_plan_is_stored_at_creation_and_runs_under_its_own_record() {
    let w = world(Some(Some(ApprovalOption::YesOnce)), false);
    let result = w
        .orchestrator
        .execute_task(&Task::new("Look up Acme"), run())
        .await
        .unwrap();
    assert_eq!(result.status, OrchestrationStatus::Completed);
    let id = result.stored_plan_id.clone().unwrap();
    let plans = w
        .store
        .list_plans(&alice(), &PlanFilter::new())
        .await
        .unwrap();
    assert_eq!(plans.len(), 1, "one record: created, approved and run");
    let record = &plans[0];
    assert_eq!(record.id, id);
    assert_eq!(record.approval_status, Some(ApprovalStatus::Approved));
    assert_eq!(
        record.approved_by.as_ref().map(|u| u.as_str()),
        Some("alice")
    );
    assert!(record.approved_at.is_some() && record.success == Some(true));
    let events = plan_events(&w.trail).await;
    let risk = record.risk_level.as_str().to_owned();
    assert_eq!(
        events,
        vec![
            (PlanEvent::Created, id.clone(), risk.clone(), None),
            (PlanEvent::Approved, id, risk, Some("alice".into())),
        ]
    );
}

#[tokio::test]
async fn a_refused_plan_is_stored_rejected_audited_and_can_never_run() {
    let w = world(Some(Some(ApprovalOption::No)), false);
    let result = w
        .orchestrator
        .execute_task(&Task::new("Look up Acme"), run())
        .await
        .unwrap();
    assert_eq!(result.status, OrchestrationStatus::Refused);
    let id = result.stored_plan_id.clone().unwrap();
    let record = w.store.get_plan(&alice(), &id).await.unwrap().unwrap();
    assert_eq!(record.approval_status, Some(ApprovalStatus::Rejected));
    assert!(record.execution_started_at.is_none());
    let events: Vec<PlanEvent> = plan_events(&w.trail)
        .await
        .into_iter()
        .map(|e| e.0)
        .collect();
    assert_eq!(events, [PlanEvent::Created, PlanEvent::Refused]);
    let run_it = w.orchestrator.run_stored_plan(&id, run()).await;
    assert!(matches!(run_it, Err(Error::PlanState { .. })), "{run_it:?}");
    let approve_late = w.orchestrator.approve_plan(&alice(), &id, "bob").await;
    assert!(matches!(approve_late, Err(Error::PlanState { .. })));
}

#[tokio::test]
async fn without_an_approver_the_plan_waits_for_approve_plan_then_runs_once() {
    let w = world(None, false);
    let result = w
        .orchestrator
        .execute_task(&Task::new("Look up Acme"), run())
        .await
        .unwrap();
    assert_eq!(result.status, OrchestrationStatus::AwaitingApproval);
    assert!(result.execution.is_none(), "nothing ran");
    let id = result.stored_plan_id.clone().unwrap();
    let pending = w
        .store
        .list_plans(
            &alice(),
            &PlanFilter::new().approval_status(ApprovalStatus::Pending),
        )
        .await
        .unwrap();
    assert_eq!(pending.len(), 1);
    // Not approved: it does not run.
    assert!(matches!(
        w.orchestrator.run_stored_plan(&id, run()).await,
        Err(Error::PlanState { .. })
    ));
    // Another user cannot approve Alice's plan: it is not theirs to see.
    let bob = UserScope::new("acme", "bob");
    assert!(w.orchestrator.approve_plan(&bob, &id, "bob").await.is_err());
    let approved = w
        .orchestrator
        .approve_plan(&alice(), &id, "carol")
        .await
        .unwrap();
    assert_eq!(approved.approval_status, Some(ApprovalStatus::Approved));
    assert_eq!(
        approved.approved_by.as_ref().map(|u| u.as_str()),
        Some("carol")
    );
    assert!(approved.approved_at.is_some());
    // Approving twice is an error, not a second decision.
    assert!(matches!(
        w.orchestrator.approve_plan(&alice(), &id, "carol").await,
        Err(Error::PlanState { .. })
    ));
    let ran = w.orchestrator.run_stored_plan(&id, run()).await.unwrap();
    assert_eq!(ran.status, OrchestrationStatus::Completed);
    assert_eq!(ran.stored_plan_id.as_deref(), Some(id.as_str()));
    let plans = w
        .store
        .list_plans(&alice(), &PlanFilter::new())
        .await
        .unwrap();
    assert_eq!(
        plans.len(),
        1,
        "the stored record was reused, not duplicated"
    );
    assert_eq!(plans[0].success, Some(true));
    // It ran once; running it again is refused.
    assert!(matches!(
        w.orchestrator.run_stored_plan(&id, run()).await,
        Err(Error::PlanState { .. })
    ));
    let events: Vec<(PlanEvent, Option<String>)> = plan_events(&w.trail)
        .await
        .into_iter()
        .map(|e| (e.0, e.3))
        .collect();
    assert_eq!(
        events,
        [
            (PlanEvent::Created, None),
            (PlanEvent::Approved, Some("carol".into()))
        ]
    );

    // A second task's plan, rejected through the API.
    let second = w
        .orchestrator
        .execute_task(&Task::new("Look up Acme again"), run())
        .await
        .unwrap();
    let id2 = second.stored_plan_id.unwrap();
    let rejected = w
        .orchestrator
        .reject_plan(&alice(), &id2, "carol")
        .await
        .unwrap();
    assert_eq!(rejected.approval_status, Some(ApprovalStatus::Rejected));
    assert!(w.orchestrator.run_stored_plan(&id2, run()).await.is_err());
}

#[tokio::test]
async fn a_failed_run_is_audited_as_the_plans_failure_with_its_risk() {
    let w = world(Some(Some(ApprovalOption::YesOnce)), true);
    let result = w
        .orchestrator
        .execute_task(&Task::new("Look up Acme"), run())
        .await
        .unwrap();
    assert_eq!(result.status, OrchestrationStatus::Failed);
    let id = result.stored_plan_id.unwrap();
    let events = plan_events(&w.trail).await;
    let last = events.last().unwrap();
    assert_eq!(last.0, PlanEvent::Failed);
    assert_eq!(last.1, id);
    let record = w.store.get_plan(&alice(), &id).await.unwrap().unwrap();
    assert_eq!(last.2, record.risk_level.as_str());
    // The failure record says why, and the usage log leaves plan records out.
    let entries = w
        .trail
        .store()
        .query(&TenantId::new("acme"), &AuditQuery::new())
        .await
        .unwrap();
    let failure = entries
        .iter()
        .find(|e| PlanFlag::find(&e.record).is_some_and(|f| f.event == PlanEvent::Failed))
        .unwrap();
    assert!(
        failure
            .record
            .error
            .as_deref()
            .unwrap()
            .starts_with("plan_failed: steps not completed"),
        "{:?}",
        failure.record.error
    );
    let usage: Vec<_> = entries
        .iter()
        .filter_map(|e| {
            skills_security::audit::UsageLogEntry::from_entry(&TenantId::new("acme"), e)
        })
        .collect();
    assert!(
        usage.iter().all(|u| u.extension_id == "crm-lookup"),
        "{usage:?}"
    );
}

#[tokio::test]
async fn two_concurrent_runs_of_one_stored_plan_run_it_once() {
    let w = world(None, false);
    let result = w
        .orchestrator
        .execute_task(&Task::new("Look up Acme"), run())
        .await
        .unwrap();
    let id = result.stored_plan_id.unwrap();
    w.orchestrator
        .approve_plan(&alice(), &id, "carol")
        .await
        .unwrap();
    let twin = w.orchestrator.clone();
    let (first, second) = futures::join!(
        w.orchestrator.run_stored_plan(&id, run()),
        twin.run_stored_plan(&id, run())
    );
    let outcomes = [first.is_ok(), second.is_ok()];
    assert_eq!(
        outcomes.iter().filter(|ok| **ok).count(),
        1,
        "{first:?} {second:?}"
    );
    let refused = if first.is_ok() { second } else { first };
    assert!(matches!(refused, Err(Error::PlanState { .. })));
    // While one call decides, another cannot decide the same plan either.
    let third = w
        .orchestrator
        .execute_task(&Task::new("Look up Acme once more"), run())
        .await
        .unwrap();
    let id3 = third.stored_plan_id.unwrap();
    let scope = alice();
    let (a, r) = futures::join!(
        w.orchestrator.approve_plan(&scope, &id3, "carol"),
        twin.reject_plan(&scope, &id3, "dave")
    );
    assert!(a.is_ok() != r.is_ok(), "exactly one decision: {a:?} {r:?}");
}

#[tokio::test]
async fn a_plan_handed_to_act_is_stored_and_audited_as_its_callers_approval() {
    let w = world(None, false);
    let task = Task::new("Look up Acme");
    let selection = w.orchestrator.select(&task, &run()).await.unwrap();
    let plan = w
        .orchestrator
        .plan(&task, &selection)
        .await
        .unwrap()
        .unwrap();
    assert!(plan.requires_approval);
    let result = w
        .orchestrator
        .act(&task, selection, plan, &run())
        .await
        .unwrap();
    let id = result.stored_plan_id.unwrap();
    let record = w.store.get_plan(&alice(), &id).await.unwrap().unwrap();
    assert_eq!(record.approval_status, Some(ApprovalStatus::Approved));
    let events: Vec<PlanEvent> = plan_events(&w.trail)
        .await
        .into_iter()
        .map(|e| e.0)
        .collect();
    assert_eq!(events, [PlanEvent::Created, PlanEvent::Approved]);
}

#[test]
fn a_plan_flag_on_an_execution_record_does_not_hide_it_from_the_usage_log() {
    let mut record = skills_store_traits::audit::AuditRecord::new(
        "alice",
        "crm-lookup",
        "acme/crm-lookup",
        "user",
        "in",
        true,
    );
    record.security_flags = vec![PlanFlag::new(PlanEvent::Created, "p1", "low", None).to_flag()];
    let entry = skills_store_traits::audit::AuditEntry {
        chain: "tenant".into(),
        sequence: 1,
        recorded_at: record.timestamp,
        record,
    };
    assert!(
        skills_security::audit::UsageLogEntry::from_entry(&TenantId::new("acme"), &entry).is_some()
    );
}
