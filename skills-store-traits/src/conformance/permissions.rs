//! The [`PermissionStore`] contract.

use futures::future::join_all;
use serde_json::json;

use super::{assert_invalid, tenant};
use crate::approvals::{ApprovalStatus, NewApproval};
use crate::error::{Error, Violation};
use crate::permissions::{MAX_RULE_BYTES, PermissionStore};

/// Runs every permission-store contract.
pub async fn run_all(store: &dyn PermissionStore) {
    put_get_list_delete(store).await;
    replace_is_atomic_and_keeps_revisions(store).await;
    validation(store).await;
    tenant_isolation(store).await;
    concurrent_puts_are_not_lost(store).await;
    approvals_are_asked_once_and_decided_once(store).await;
    approvals_are_validated_and_kept_per_tenant(store).await;
    racing_decisions_decide_once(store).await;
}

/// Rules are created at revision 1, replaced with the revision counting on and the creation
/// time kept, listed by id, and deleted.
pub async fn put_get_list_delete(store: &dyn PermissionStore) {
    let t = tenant();
    assert_eq!(store.get_rule(&t, "b").await.unwrap(), None);
    assert!(store.list_rules(&t).await.unwrap().is_empty());

    let b = store
        .put_rule(&t, "b", json!({"can_execute": false}))
        .await
        .unwrap();
    assert_eq!((b.id.as_str(), b.revision, &b.tenant), ("b", 1, &t));
    assert_eq!(b.rule, json!({"can_execute": false}));
    assert_eq!(store.get_rule(&t, "b").await.unwrap(), Some(b.clone()));

    let b2 = store
        .put_rule(&t, "b", json!({"can_execute": true, "tools": ["x"]}))
        .await
        .unwrap();
    assert_eq!(b2.revision, 2, "a replace counts on");
    assert_eq!(b2.created_at, b.created_at, "creation time kept");
    assert!(b2.updated_at >= b.updated_at);
    assert_eq!(b2.rule, json!({"can_execute": true, "tools": ["x"]}));

    store.put_rule(&t, "a", json!({})).await.unwrap();
    store.put_rule(&t, "B", json!({})).await.unwrap();
    let ids: Vec<String> = store
        .list_rules(&t)
        .await
        .unwrap()
        .into_iter()
        .map(|r| r.id)
        .collect();
    assert_eq!(ids, ["B", "a", "b"], "listed by id, bytewise");

    assert!(store.delete_rule(&t, "a").await.unwrap());
    assert!(!store.delete_rule(&t, "a").await.unwrap());
    assert_eq!(store.get_rule(&t, "a").await.unwrap(), None);
    let again = store.put_rule(&t, "a", json!({})).await.unwrap();
    assert_eq!(again.revision, 1, "a deleted id starts over");
}

/// `replace_rules` makes the given set the whole set, or changes nothing.
pub async fn replace_is_atomic_and_keeps_revisions(store: &dyn PermissionStore) {
    let t = tenant();
    store.put_rule(&t, "keep", json!({"v": 1})).await.unwrap();
    store.put_rule(&t, "drop", json!({"v": 1})).await.unwrap();
    let replaced = store
        .replace_rules(
            &t,
            vec![
                ("new".into(), json!({"v": 1})),
                ("keep".into(), json!({"v": 2})),
            ],
        )
        .await
        .unwrap();
    let summary: Vec<(String, u64)> = replaced
        .iter()
        .map(|r| (r.id.clone(), r.revision))
        .collect();
    assert_eq!(summary, [("keep".to_owned(), 2), ("new".to_owned(), 1)]);
    assert_eq!(store.list_rules(&t).await.unwrap(), replaced);
    assert_eq!(store.get_rule(&t, "drop").await.unwrap(), None);

    // One bad rule, or a repeated id: nothing changes.
    let bad = store
        .replace_rules(&t, vec![("x".into(), json!({})), ("".into(), json!({}))])
        .await;
    assert_invalid(bad, "id", |v| matches!(v, Violation::Empty));
    let repeated = store
        .replace_rules(&t, vec![("x".into(), json!({})), ("x".into(), json!({}))])
        .await;
    assert!(
        matches!(repeated, Err(Error::Conflict { .. })),
        "{repeated:?}"
    );
    assert_eq!(store.list_rules(&t).await.unwrap(), replaced);

    assert!(
        store
            .replace_rules(&t, Vec::new())
            .await
            .unwrap()
            .is_empty()
    );
    assert!(store.list_rules(&t).await.unwrap().is_empty());
}

/// Ids and rules are checked before anything is written.
pub async fn validation(store: &dyn PermissionStore) {
    let t = tenant();
    assert_invalid(store.put_rule(&t, "", json!({})).await, "id", |v| {
        matches!(v, Violation::Empty)
    });
    assert_invalid(
        store.put_rule(&t, &"x".repeat(129), json!({})).await,
        "id",
        |v| matches!(v, Violation::OutOfRange { .. }),
    );
    assert!(
        store
            .put_rule(&t, &"é".repeat(128), json!({}))
            .await
            .is_ok()
    );
    assert_invalid(store.put_rule(&t, "r", json!([1])).await, "rule", |v| {
        matches!(v, Violation::UnknownValue { .. })
    });
    let huge = json!({ "x": "y".repeat(usize::try_from(MAX_RULE_BYTES).unwrap()) });
    assert_invalid(store.put_rule(&t, "r", huge).await, "rule", |v| {
        matches!(v, Violation::TooLarge { .. })
    });
    assert_eq!(store.get_rule(&t, "r").await.unwrap(), None);
}

/// A tenant never sees, changes or deletes another's rules.
pub async fn tenant_isolation(store: &dyn PermissionStore) {
    let (a, b) = (tenant(), tenant());
    store.put_rule(&a, "r", json!({"a": true})).await.unwrap();
    assert_eq!(store.get_rule(&b, "r").await.unwrap(), None);
    assert!(store.list_rules(&b).await.unwrap().is_empty());
    assert!(!store.delete_rule(&b, "r").await.unwrap());
    let theirs = store.put_rule(&b, "r", json!({"b": true})).await.unwrap();
    assert_eq!(theirs.revision, 1);
    store.replace_rules(&b, Vec::new()).await.unwrap();
    let ours = store.get_rule(&a, "r").await.unwrap().unwrap();
    assert_eq!((ours.revision, ours.rule), (1, json!({"a": true})));
}

/// Concurrent writes of one id each count: the revision ends at their number.
pub async fn concurrent_puts_are_not_lost(store: &dyn PermissionStore) {
    let t = tenant();
    let t = &t;
    let puts = (0..50).map(|i| store.put_rule(t, "r", json!({ "i": i })));
    for result in join_all(puts).await {
        result.unwrap();
    }
    assert_eq!(store.get_rule(t, "r").await.unwrap().unwrap().revision, 50);
}

/// An approval is asked once per execution (asking again returns the pending record),
/// decided once (a second decision is a conflict), and listed oldest first, by status.
pub async fn approvals_are_asked_once_and_decided_once(store: &dyn PermissionStore) {
    let t = tenant();
    assert_eq!(store.get_approval(&t, "exec-1").await.unwrap(), None);
    let asked = store
        .request_approval(
            &t,
            NewApproval::new("exec-1", "pdf", "alice", "rule needs-ok asks")
                .approver_roles(vec!["lead".into()])
                .rule("needs-ok"),
        )
        .await
        .unwrap();
    assert_eq!(asked.status, ApprovalStatus::Pending);
    assert_eq!(
        (asked.skill_id.as_str(), asked.requested_by.as_str()),
        ("pdf", "alice")
    );
    assert_eq!(asked.approver_roles, ["lead"]);
    assert_eq!(asked.rule.as_deref(), Some("needs-ok"));
    assert_eq!((asked.decided_by.clone(), asked.decided_at), (None, None));
    let again = store
        .request_approval(
            &t,
            NewApproval::new("exec-1", "pdf", "alice", "asked again"),
        )
        .await
        .unwrap();
    assert_eq!(
        again, asked,
        "asking again returns the pending record unchanged"
    );
    assert_eq!(
        store.get_approval(&t, "exec-1").await.unwrap(),
        Some(asked.clone())
    );

    store
        .request_approval(&t, NewApproval::new("exec-2", "docx", "bob", "autonomy"))
        .await
        .unwrap();
    let approved = store
        .decide_approval(&t, "exec-1", true, Some("carol"))
        .await
        .unwrap();
    assert_eq!(approved.status, ApprovalStatus::Approved);
    assert_eq!(approved.decided_by.as_deref(), Some("carol"));
    assert!(
        approved
            .decided_at
            .is_some_and(|at| at >= asked.requested_at)
    );
    assert_eq!(approved.requested_at, asked.requested_at);
    let twice = store
        .decide_approval(&t, "exec-1", false, Some("dave"))
        .await;
    assert!(matches!(twice, Err(Error::Conflict { .. })), "{twice:?}");
    let reasked = store
        .request_approval(&t, NewApproval::new("exec-1", "pdf", "alice", "again"))
        .await;
    assert!(
        matches!(reasked, Err(Error::Conflict { .. })),
        "{reasked:?}"
    );
    assert_eq!(
        store.get_approval(&t, "exec-1").await.unwrap(),
        Some(approved.clone()),
        "refused writes change nothing"
    );
    let unknown = store
        .decide_approval(&t, "exec-9", true, Some("carol"))
        .await;
    assert!(
        matches!(unknown, Err(Error::NotFound { .. })),
        "{unknown:?}"
    );

    let refused = store
        .decide_approval(&t, "exec-2", false, None)
        .await
        .unwrap();
    assert_eq!(
        (refused.status, refused.decided_by),
        (ApprovalStatus::Refused, None)
    );

    let all: Vec<String> = store
        .list_approvals(&t, None)
        .await
        .unwrap()
        .into_iter()
        .map(|a| a.execution_id)
        .collect();
    assert_eq!(all, ["exec-1", "exec-2"]);
    let approved_only = store
        .list_approvals(&t, Some(ApprovalStatus::Approved))
        .await
        .unwrap();
    assert_eq!(approved_only, [approved]);
    assert!(
        store
            .list_approvals(&t, Some(ApprovalStatus::Pending))
            .await
            .unwrap()
            .is_empty()
    );
}

/// Requests are checked before anything is written, and a tenant never sees, asks over or
/// decides another's approvals.
pub async fn approvals_are_validated_and_kept_per_tenant(store: &dyn PermissionStore) {
    let (a, b) = (tenant(), tenant());
    assert_invalid(
        store
            .request_approval(&a, NewApproval::new("", "pdf", "alice", "r"))
            .await,
        "execution_id",
        |v| matches!(v, Violation::Empty),
    );
    assert_invalid(
        store
            .request_approval(&a, NewApproval::new("e", "pdf", "alice", "r".repeat(5_000)))
            .await,
        "reason",
        |v| matches!(v, Violation::TooLarge { .. }),
    );
    assert_invalid(
        store
            .request_approval(
                &a,
                NewApproval::new("e", "pdf", "alice", "r").approver_roles(vec![String::new()]),
            )
            .await,
        "approver_roles",
        |v| matches!(v, Violation::Empty),
    );
    assert!(store.list_approvals(&a, None).await.unwrap().is_empty());

    store
        .request_approval(&a, NewApproval::new("e", "pdf", "alice", "r"))
        .await
        .unwrap();
    assert_invalid(
        store.decide_approval(&a, "e", true, Some("")).await,
        "decided_by",
        |v| matches!(v, Violation::Empty),
    );
    assert_eq!(store.get_approval(&b, "e").await.unwrap(), None);
    assert!(store.list_approvals(&b, None).await.unwrap().is_empty());
    let theirs = store.decide_approval(&b, "e", true, Some("mallory")).await;
    assert!(matches!(theirs, Err(Error::NotFound { .. })), "{theirs:?}");
    let own = store
        .request_approval(&b, NewApproval::new("e", "other", "bob", "r"))
        .await
        .unwrap();
    assert_eq!(own.skill_id, "other");
    let ours = store.get_approval(&a, "e").await.unwrap().unwrap();
    assert_eq!(
        (ours.status, ours.skill_id.as_str()),
        (ApprovalStatus::Pending, "pdf")
    );
}

/// Of many concurrent decisions on one approval exactly one wins.
pub async fn racing_decisions_decide_once(store: &dyn PermissionStore) {
    let t = tenant();
    let t = &t;
    store
        .request_approval(t, NewApproval::new("race", "pdf", "alice", "r"))
        .await
        .unwrap();
    let deciders: Vec<String> = (0..20).map(|i| format!("approver-{i}")).collect();
    let decisions = deciders
        .iter()
        .enumerate()
        .map(|(i, by)| store.decide_approval(t, "race", i % 2 == 0, Some(by)));
    let results = join_all(decisions).await;
    let won: Vec<_> = results.iter().filter_map(|r| r.as_ref().ok()).collect();
    assert_eq!(won.len(), 1, "{results:?}");
    assert!(
        results
            .iter()
            .filter(|r| r.is_err())
            .all(|r| matches!(r, Err(Error::Conflict { .. })))
    );
    assert_eq!(
        store.get_approval(t, "race").await.unwrap().as_ref(),
        Some(won[0])
    );
}
