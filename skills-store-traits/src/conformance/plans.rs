//! The [`PlanStore`] contract.

use futures::future::join_all;
use serde_json::{Value, json};

use super::{neighbours, user};
use crate::error::{Error, Violation};
use crate::plans::{
    ApprovalStatus, CostLevel, NewPlan, NewStep, PlanFilter, PlanStore, PlanUpdate, RiskLevel,
    StepStatus, StepUpdate,
};
use crate::tenancy::UserId;

fn plan(task: &str, risk: RiskLevel) -> NewPlan {
    NewPlan::new(task, vec!["pdf".into(), "summarize".into()], risk)
}

/// Spoils one field of a valid input.
type Spoil = fn(&mut NewPlan);

#[track_caller]
fn assert_not_found<T: std::fmt::Debug>(result: crate::Result<T>, contract: &str) {
    assert!(
        matches!(result, Err(Error::NotFound { .. })),
        "{contract}: expected NotFound, got {result:?}"
    );
}

#[track_caller]
fn assert_invalid<T: std::fmt::Debug>(result: crate::Result<T>, field: &str, contract: &str) {
    assert!(
        matches!(&result, Err(Error::Invalid { field: f, violation: Violation::Empty }) if f == field),
        "{contract}: expected Invalid `{field}`, got {result:?}"
    );
}

/// Runs every plan-store contract.
pub async fn run_all(store: &dyn PlanStore) {
    plan_crud(store).await;
    plan_validation(store).await;
    approval_and_lifecycle(store).await;
    list_filters_and_order(store).await;
    steps_crud_and_order(store).await;
    every_step_status_is_kept(store).await;
    delete_cascades_working_memory(store).await;
    user_and_tenant_isolation(store).await;
    concurrent_step_writers(store).await;
}

/// Plans are created with their fields, read back, updated and deleted.
pub async fn plan_crud(store: &dyn PlanStore) {
    let scope = user();
    let mut new = plan("summarize the report", RiskLevel::Medium);
    new.dependency_graph = json!({"summarize": ["pdf"]});
    new.parallel_groups = json!([["pdf"], ["summarize"]]);
    new.estimated_duration_ms = Some(1_500);
    new.estimated_cost_level = Some(CostLevel::Low);
    let created = store.create_plan(&scope, new.clone()).await.unwrap();
    assert!(!created.id.is_empty(), "the store assigns an id");
    assert_eq!(
        (&created.tenant, &created.user),
        (&scope.tenant, &scope.user)
    );
    assert_eq!(created.task_description, new.task_description);
    assert_eq!(created.skills_planned, new.skills_planned);
    assert_eq!(
        created.dependency_graph, new.dependency_graph,
        "JSON is kept verbatim"
    );
    assert_eq!(created.parallel_groups, new.parallel_groups);
    assert_eq!(created.estimated_duration_ms, Some(1_500));
    assert_eq!(created.estimated_cost_level, Some(CostLevel::Low));
    assert_eq!(created.risk_level, RiskLevel::Medium);
    assert_eq!(
        created.approval_status, None,
        "no approval required, no status"
    );
    assert_eq!(
        (created.execution_started_at, created.success),
        (None, None)
    );
    assert_eq!(
        store.get_plan(&scope, &created.id).await.unwrap(),
        Some(created.clone())
    );

    let update = PlanUpdate {
        task_description: Some("summarize both reports".into()),
        skills_planned: Some(vec!["pdf".into()]),
        dependency_graph: Some(json!({})),
        risk_level: Some(RiskLevel::High),
        estimated_cost_level: Some(CostLevel::High),
        ..PlanUpdate::default()
    };
    let updated = store
        .update_plan(&scope, &created.id, update)
        .await
        .unwrap();
    assert_eq!(updated.task_description, "summarize both reports");
    assert_eq!(updated.skills_planned, vec!["pdf".to_owned()]);
    assert_eq!(updated.dependency_graph, json!({}));
    assert_eq!(
        updated.parallel_groups, created.parallel_groups,
        "unset fields stay"
    );
    assert_eq!(
        updated.estimated_duration_ms,
        Some(1_500),
        "unset fields stay"
    );
    assert_eq!(updated.risk_level, RiskLevel::High);
    assert_eq!(
        (updated.id.as_str(), updated.created_at),
        (created.id.as_str(), created.created_at)
    );
    assert!(updated.updated_at >= created.updated_at);
    assert_eq!(
        store.get_plan(&scope, &created.id).await.unwrap(),
        Some(updated)
    );

    store.delete_plan(&scope, &created.id).await.unwrap();
    assert_eq!(
        store.get_plan(&scope, &created.id).await.unwrap(),
        None,
        "deleted"
    );
    assert_not_found(store.delete_plan(&scope, &created.id).await, "delete twice");
    assert_not_found(
        store
            .update_plan(&scope, &created.id, PlanUpdate::new().started())
            .await,
        "update of a deleted plan",
    );
    assert_eq!(store.get_plan(&scope, "missing").await.unwrap(), None);
}

/// Required plan fields are enforced on create and update; refusals write nothing.
pub async fn plan_validation(store: &dyn PlanStore) {
    let scope = user();
    let cases: [(&str, Spoil); 4] = [
        ("task_description", |p| p.task_description.clear()),
        ("skills_planned[1]", |p| p.skills_planned[1].clear()),
        ("dependency_graph", |p| p.dependency_graph = Value::Null),
        ("parallel_groups", |p| p.parallel_groups = Value::Null),
    ];
    for (field, spoil) in cases {
        let mut new = plan("task", RiskLevel::Low);
        spoil(&mut new);
        assert_invalid(
            store.create_plan(&scope, new).await,
            field,
            "create_plan validates",
        );
    }
    assert!(
        store
            .list_plans(&scope, &PlanFilter::new())
            .await
            .unwrap()
            .is_empty(),
        "refused creates wrote nothing"
    );

    let created = store
        .create_plan(&scope, plan("task", RiskLevel::Low))
        .await
        .unwrap();
    let update = PlanUpdate {
        task_description: Some(String::new()),
        risk_level: Some(RiskLevel::Critical),
        ..PlanUpdate::default()
    };
    assert_invalid(
        store.update_plan(&scope, &created.id, update).await,
        "task_description",
        "update_plan validates",
    );
    let update = PlanUpdate {
        parallel_groups: Some(Value::Null),
        ..PlanUpdate::default()
    };
    assert_invalid(
        store.update_plan(&scope, &created.id, update).await,
        "parallel_groups",
        "update_plan validates",
    );
    assert_eq!(
        store.get_plan(&scope, &created.id).await.unwrap(),
        Some(created),
        "a refused update changes nothing"
    );
}

/// Approval starts pending when required; decisions and the execution lifecycle are stamped.
pub async fn approval_and_lifecycle(store: &dyn PlanStore) {
    let scope = user();
    let mut new = plan("pay the invoice", RiskLevel::Critical);
    new.approval_required = true;
    let created = store.create_plan(&scope, new).await.unwrap();
    assert_eq!(created.approval_status, Some(ApprovalStatus::Pending));
    assert_eq!(
        (created.approved_by.clone(), created.approved_at),
        (None, None)
    );

    let approver = UserId::new("approver");
    let update = PlanUpdate::new().approval(ApprovalStatus::Approved, Some(approver.clone()));
    let approved = store
        .update_plan(&scope, &created.id, update)
        .await
        .unwrap();
    assert_eq!(approved.approval_status, Some(ApprovalStatus::Approved));
    assert_eq!(approved.approved_by, Some(approver));
    assert!(approved.approved_at.is_some(), "a decision is stamped");

    let started = store
        .update_plan(&scope, &created.id, PlanUpdate::new().started())
        .await
        .unwrap();
    assert!(started.execution_started_at.is_some());
    assert_eq!(
        (started.execution_completed_at, started.success),
        (None, None)
    );
    assert_eq!(
        started.approved_at, approved.approved_at,
        "unrelated updates keep approval"
    );

    let finished = store
        .update_plan(&scope, &created.id, PlanUpdate::new().completed(false))
        .await
        .unwrap();
    assert!(finished.execution_completed_at.is_some());
    assert_eq!(finished.success, Some(false));
    assert_eq!(finished.execution_started_at, started.execution_started_at);

    let reopened = store
        .update_plan(
            &scope,
            &created.id,
            PlanUpdate::new().approval(ApprovalStatus::Pending, None),
        )
        .await
        .unwrap();
    assert_eq!(reopened.approval_status, Some(ApprovalStatus::Pending));
    assert_eq!(
        (reopened.approved_by, reopened.approved_at),
        (None, None),
        "pending clears the decision"
    );
}

/// `list_plans` filters by approval status, risk and completion, oldest first, limited.
pub async fn list_filters_and_order(store: &dyn PlanStore) {
    let scope = user();
    let mut ids = Vec::new();
    for (n, risk) in [
        RiskLevel::Low,
        RiskLevel::High,
        RiskLevel::Low,
        RiskLevel::Critical,
    ]
    .into_iter()
    .enumerate()
    {
        let mut new = plan(&format!("task {n}"), risk);
        new.approval_required = risk != RiskLevel::Low;
        ids.push(store.create_plan(&scope, new).await.unwrap().id);
    }
    store
        .update_plan(
            &scope,
            &ids[1],
            PlanUpdate::new().approval(ApprovalStatus::Rejected, None),
        )
        .await
        .unwrap();
    store
        .update_plan(&scope, &ids[2], PlanUpdate::new().started().completed(true))
        .await
        .unwrap();

    let all = store.list_plans(&scope, &PlanFilter::new()).await.unwrap();
    assert_eq!(all.len(), 4);
    assert!(
        all.windows(2)
            .all(|w| (w[0].created_at, &w[0].id) < (w[1].created_at, &w[1].id)),
        "plans are listed by (created_at, id)"
    );
    let listed = |filter: PlanFilter| {
        let scope = &scope;
        async move {
            let mut ids: Vec<String> = store
                .list_plans(scope, &filter)
                .await
                .unwrap()
                .into_iter()
                .map(|p| p.id)
                .collect();
            ids.sort();
            ids
        }
    };
    let sorted = |mut ids: Vec<String>| {
        ids.sort();
        ids
    };
    assert_eq!(
        listed(PlanFilter::new().risk_level(RiskLevel::Low)).await,
        sorted(vec![ids[0].clone(), ids[2].clone()]),
        "risk filter"
    );
    assert_eq!(
        listed(PlanFilter::new().approval_status(ApprovalStatus::Pending)).await,
        vec![ids[3].clone()],
        "approval filter"
    );
    assert_eq!(
        listed(PlanFilter::new().approval_status(ApprovalStatus::Rejected)).await,
        vec![ids[1].clone()]
    );
    assert_eq!(
        listed(PlanFilter::new().completed(true)).await,
        vec![ids[2].clone()]
    );
    assert_eq!(
        listed(PlanFilter::new().completed(false)).await.len(),
        3,
        "completion filter"
    );
    assert!(
        listed(PlanFilter::new().risk_level(RiskLevel::Medium))
            .await
            .is_empty()
    );
    let limited = store
        .list_plans(&scope, &PlanFilter::new().limit(2))
        .await
        .unwrap();
    assert_eq!(
        limited,
        all[..2].to_vec(),
        "limit keeps the first plans in order"
    );
}

/// Steps are inserted once per number, listed by number, read and updated.
pub async fn steps_crud_and_order(store: &dyn PlanStore) {
    let scope = user();
    let plan_id = store
        .create_plan(&scope, plan("t", RiskLevel::Low))
        .await
        .unwrap()
        .id;
    assert!(store.list_steps(&scope, &plan_id).await.unwrap().is_empty());
    for n in [3, 1, 2] {
        let mut step = NewStep::new(n, format!("skill-{n}"));
        step.artifacts = json!({"files": [format!("out-{n}.txt")]});
        if n == 3 {
            step.data_class = Some("confidential".into());
            step.sources = vec!["crm_deal".into(), "notes".into()];
        }
        let entry = store.insert_step(&scope, &plan_id, step).await.unwrap();
        assert_eq!(
            (entry.plan_id.as_str(), entry.step_number),
            (plan_id.as_str(), n)
        );
        assert_eq!(entry.status, StepStatus::Pending);
    }
    let third = store.get_step(&scope, &plan_id, 3).await.unwrap().unwrap();
    assert_eq!(
        (third.data_class.as_deref(), third.sources.as_slice()),
        (
            Some("confidential"),
            ["crm_deal".to_owned(), "notes".to_owned()].as_slice()
        ),
        "an entry keeps the class and sources of what produced it"
    );
    let second = store.get_step(&scope, &plan_id, 2).await.unwrap().unwrap();
    assert_eq!((second.data_class, second.sources), (None, Vec::new()));
    let numbers: Vec<u32> = store
        .list_steps(&scope, &plan_id)
        .await
        .unwrap()
        .iter()
        .map(|s| s.step_number)
        .collect();
    assert_eq!(numbers, vec![1, 2, 3], "steps are listed by step number");

    let result = store
        .insert_step(&scope, &plan_id, NewStep::new(2, "other"))
        .await;
    assert!(
        matches!(result, Err(Error::Conflict { .. })),
        "(plan, step_number) is unique: {result:?}"
    );
    assert_eq!(
        store
            .get_step(&scope, &plan_id, 2)
            .await
            .unwrap()
            .unwrap()
            .skill_id,
        "skill-2",
        "a refused insert changes nothing"
    );
    assert_invalid(
        store
            .insert_step(&scope, &plan_id, NewStep::new(9, ""))
            .await,
        "skill_id",
        "insert_step validates",
    );
    assert_not_found(
        store
            .insert_step(&scope, "missing", NewStep::new(1, "pdf"))
            .await,
        "insert into a missing plan",
    );

    let update = StepUpdate {
        status: Some(StepStatus::Complete),
        summary: Some("read 3 pages".into()),
        extracted_facts: Some(
            json!([{"subject": "report", "predicate": "has", "object": "3 pages"}]),
        ),
        next_step_hints: Some(json!(["summarize"])),
        data_class: Some("restricted".into()),
        sources: Some(vec!["financial_report".into()]),
        ..StepUpdate::default()
    };
    let updated = store
        .update_step(&scope, &plan_id, 1, update)
        .await
        .unwrap();
    assert_eq!(updated.status, StepStatus::Complete);
    assert_eq!(updated.summary.as_deref(), Some("read 3 pages"));
    assert_eq!(
        updated.artifacts,
        json!({"files": ["out-1.txt"]}),
        "unset fields stay"
    );
    assert_eq!(updated.next_step_hints, json!(["summarize"]));
    assert_eq!(
        (updated.data_class.as_deref(), updated.sources.as_slice()),
        (
            Some("restricted"),
            ["financial_report".to_owned()].as_slice()
        ),
        "an update replaces the class and sources"
    );
    assert_eq!(
        store.get_step(&scope, &plan_id, 1).await.unwrap(),
        Some(updated)
    );
    assert_eq!(store.get_step(&scope, &plan_id, 7).await.unwrap(), None);
    assert_not_found(
        store
            .update_step(&scope, &plan_id, 7, StepUpdate::new())
            .await,
        "update of a missing step",
    );
    assert_not_found(
        store.list_steps(&scope, "missing").await,
        "steps of a missing plan",
    );
}

/// Every status a step can end in is stored and read back, on insert and on update: a
/// failed, denied, skipped or cancelled step leaves an entry that says so.
pub async fn every_step_status_is_kept(store: &dyn PlanStore) {
    let scope = user();
    let plan_id = store
        .create_plan(&scope, plan("t", RiskLevel::Low))
        .await
        .unwrap()
        .id;
    let all = [
        StepStatus::Pending,
        StepStatus::Running,
        StepStatus::Complete,
        StepStatus::Failed,
        StepStatus::Denied,
        StepStatus::Skipped,
        StepStatus::Cancelled,
    ];
    for (n, status) in (1..).zip(all) {
        let mut step = NewStep::new(n, "pdf");
        step.status = status;
        step.summary = Some(format!("{status}: why"));
        let entry = store.insert_step(&scope, &plan_id, step).await.unwrap();
        assert_eq!(entry.status, status, "insert keeps `{status}`");
    }
    let listed: Vec<StepStatus> = store
        .list_steps(&scope, &plan_id)
        .await
        .unwrap()
        .iter()
        .map(|s| s.status)
        .collect();
    assert_eq!(listed, all, "every status reads back");
    for status in all {
        let updated = store
            .update_step(&scope, &plan_id, 2, StepUpdate::new().status(status))
            .await
            .unwrap();
        assert_eq!(updated.status, status, "update sets `{status}`");
        assert_eq!(
            store
                .get_step(&scope, &plan_id, 2)
                .await
                .unwrap()
                .unwrap()
                .status,
            status
        );
    }
}

/// Deleting a plan deletes its working memory; other plans keep theirs.
pub async fn delete_cascades_working_memory(store: &dyn PlanStore) {
    let scope = user();
    let doomed = store
        .create_plan(&scope, plan("a", RiskLevel::Low))
        .await
        .unwrap()
        .id;
    let kept = store
        .create_plan(&scope, plan("b", RiskLevel::Low))
        .await
        .unwrap()
        .id;
    for n in 1..=3 {
        store
            .insert_step(&scope, &doomed, NewStep::new(n, "pdf"))
            .await
            .unwrap();
        store
            .insert_step(&scope, &kept, NewStep::new(n, "pdf"))
            .await
            .unwrap();
    }
    store.delete_plan(&scope, &doomed).await.unwrap();
    assert_eq!(
        store.get_step(&scope, &doomed, 1).await.unwrap(),
        None,
        "steps went with the plan"
    );
    assert_not_found(
        store.list_steps(&scope, &doomed).await,
        "steps of a deleted plan",
    );
    assert_not_found(
        store
            .insert_step(&scope, &doomed, NewStep::new(4, "pdf"))
            .await,
        "insert into a deleted plan",
    );
    assert_eq!(
        store.list_steps(&scope, &kept).await.unwrap().len(),
        3,
        "other plans keep theirs"
    );
}

/// Another user of the tenant, or the same user id in another tenant, can neither see nor
/// change the owner's plans and steps.
pub async fn user_and_tenant_isolation(store: &dyn PlanStore) {
    let owner = user();
    let mut new = plan("private", RiskLevel::High);
    new.approval_required = true;
    let original = store.create_plan(&owner, new).await.unwrap();
    let id = original.id.clone();
    let step = store
        .insert_step(&owner, &id, NewStep::new(1, "pdf"))
        .await
        .unwrap();

    for intruder in neighbours(&owner) {
        assert_eq!(
            store.get_plan(&intruder, &id).await.unwrap(),
            None,
            "get_plan is per user"
        );
        assert!(
            store
                .list_plans(&intruder, &PlanFilter::new())
                .await
                .unwrap()
                .is_empty()
        );
        let approve =
            PlanUpdate::new().approval(ApprovalStatus::Approved, Some(intruder.user.clone()));
        assert_not_found(
            store.update_plan(&intruder, &id, approve).await,
            "update_plan of another's plan",
        );
        assert_not_found(
            store.delete_plan(&intruder, &id).await,
            "delete_plan of another's plan",
        );
        assert_not_found(
            store
                .insert_step(&intruder, &id, NewStep::new(2, "x"))
                .await,
            "insert_step into another's plan",
        );
        assert_not_found(
            store
                .update_step(
                    &intruder,
                    &id,
                    1,
                    StepUpdate::new().status(StepStatus::Failed),
                )
                .await,
            "update_step of another's plan",
        );
        assert_eq!(
            store.get_step(&intruder, &id, 1).await.unwrap(),
            None,
            "get_step is per user"
        );
        assert_not_found(
            store.list_steps(&intruder, &id).await,
            "list_steps of another's plan",
        );
    }
    assert_eq!(
        store.get_plan(&owner, &id).await.unwrap(),
        Some(original),
        "plan untouched"
    );
    assert_eq!(
        store.list_steps(&owner, &id).await.unwrap(),
        vec![step],
        "steps untouched"
    );
}

/// Concurrent step inserts all land, and concurrent inserts of one step number make exactly
/// one.
pub async fn concurrent_step_writers(store: &dyn PlanStore) {
    let scope = user();
    let scope = &scope;
    let plan_id = store
        .create_plan(scope, plan("t", RiskLevel::Low))
        .await
        .unwrap()
        .id;
    let plan_id = plan_id.as_str();
    let inserts = (0..32).map(|n| store.insert_step(scope, plan_id, NewStep::new(n, "pdf")));
    for result in join_all(inserts).await {
        result.unwrap();
    }
    assert_eq!(
        store.list_steps(scope, plan_id).await.unwrap().len(),
        32,
        "no insert was lost"
    );

    let racing = (0..16).map(|_| store.insert_step(scope, plan_id, NewStep::new(100, "pdf")));
    let results = join_all(racing).await;
    let won = results.iter().filter(|r| r.is_ok()).count();
    let conflicts = results
        .iter()
        .filter(|r| matches!(r, Err(Error::Conflict { .. })))
        .count();
    assert_eq!(
        (won, conflicts),
        (1, 15),
        "exactly one insert of a step number wins"
    );

    let plans = (0..16).map(|n| store.create_plan(scope, plan(&format!("p{n}"), RiskLevel::Low)));
    for result in join_all(plans).await {
        result.unwrap();
    }
    assert_eq!(
        store
            .list_plans(scope, &PlanFilter::new())
            .await
            .unwrap()
            .len(),
        17,
        "concurrent plan creates all land"
    );
}
