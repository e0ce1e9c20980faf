//! The [`TrustStore`] contract.

use futures::future::join_all;

use super::{neighbours, user};
use crate::error::{Error, Violation};
use crate::trust::{TrustChange, TrustStore};

/// Runs every trust-store contract.
pub async fn run_all(store: &dyn TrustStore) {
    create_get_list_delete(store).await;
    changes_apply_as_documented(store).await;
    validation(store).await;
    user_and_tenant_isolation(store).await;
    concurrent_changes_are_not_lost(store).await;
}

/// Records are created once per (user, skill), listed by skill id, and deleted.
pub async fn create_get_list_delete(store: &dyn TrustStore) {
    let scope = user();
    assert_eq!(store.get(&scope, "pdf").await.unwrap(), None);
    assert!(store.list(&scope).await.unwrap().is_empty());

    let created = store.create(&scope, "pdf").await.unwrap();
    assert_eq!(
        (&created.tenant, &created.user),
        (&scope.tenant, &scope.user)
    );
    assert_eq!(created.skill_id, "pdf");
    assert_eq!(
        (
            created.successful_executions,
            created.failed_executions,
            created.trust_reset_count
        ),
        (0, 0, 0),
        "a new record starts with no history"
    );
    assert!(!created.session_trust_granted && !created.globally_approved);
    assert_eq!(created.created_at, created.updated_at);
    assert_eq!(
        store.get(&scope, "pdf").await.unwrap(),
        Some(created.clone())
    );

    let result = store.create(&scope, "pdf").await;
    assert!(
        matches!(result, Err(Error::Conflict { .. })),
        "one record per (user, skill): {result:?}"
    );

    store.create(&scope, "xlsx").await.unwrap();
    store
        .apply(&scope, "docx", TrustChange::Success)
        .await
        .unwrap();
    let skills: Vec<String> = store
        .list(&scope)
        .await
        .unwrap()
        .into_iter()
        .map(|r| r.skill_id)
        .collect();
    assert_eq!(
        skills,
        vec!["docx", "pdf", "xlsx"],
        "list is ordered by skill id"
    );

    store.delete(&scope, "pdf").await.unwrap();
    assert_eq!(store.get(&scope, "pdf").await.unwrap(), None, "deleted");
    let result = store.delete(&scope, "pdf").await;
    assert!(
        matches!(result, Err(Error::NotFound { .. })),
        "deleting a missing record is NotFound: {result:?}"
    );
    assert_eq!(store.list(&scope).await.unwrap().len(), 2);
}

/// Every [`TrustChange`] does what its documentation says, and `apply_all` applies a list
/// in order.
pub async fn changes_apply_as_documented(store: &dyn TrustStore) {
    let scope = user();
    let r = store
        .apply(&scope, "pdf", TrustChange::Success)
        .await
        .unwrap();
    assert_eq!(r.successful_executions, 1, "apply creates a missing record");
    assert!(r.last_success.is_some() && r.last_failure.is_none());

    let r = store
        .apply(&scope, "pdf", TrustChange::Failure)
        .await
        .unwrap();
    assert_eq!(
        (r.successful_executions, r.failed_executions),
        (1, 1),
        "failure resets nothing"
    );
    assert!(r.last_failure.is_some());

    let r = store
        .apply(
            &scope,
            "pdf",
            TrustChange::GrantSessionTrust { expires_at: 5_000 },
        )
        .await
        .unwrap();
    assert!(r.session_trust_granted);
    assert_eq!(r.session_trust_expires, Some(5_000));
    let r = store
        .apply(&scope, "pdf", TrustChange::RevokeSessionTrust)
        .await
        .unwrap();
    assert!(!r.session_trust_granted && r.session_trust_expires.is_none());

    let approved = store
        .apply(&scope, "pdf", TrustChange::ApproveGlobally)
        .await
        .unwrap();
    assert!(approved.globally_approved && approved.globally_approved_at.is_some());
    let again = store
        .apply(&scope, "pdf", TrustChange::ApproveGlobally)
        .await
        .unwrap();
    assert_eq!(
        again.globally_approved_at, approved.globally_approved_at,
        "re-approval keeps the first approval time"
    );
    let r = store
        .apply(&scope, "pdf", TrustChange::RevokeGlobalApproval)
        .await
        .unwrap();
    assert!(!r.globally_approved && r.globally_approved_at.is_none());

    store
        .apply_all(
            &scope,
            "pdf",
            &[
                TrustChange::Success,
                TrustChange::GrantSessionTrust { expires_at: 9_000 },
                TrustChange::ApproveGlobally,
            ],
        )
        .await
        .unwrap();
    let before = store.get(&scope, "pdf").await.unwrap().unwrap();
    assert_eq!(before.successful_executions, 2);
    let after = store
        .apply_all(&scope, "pdf", &[TrustChange::Failure, TrustChange::Reset])
        .await
        .unwrap();
    assert_eq!(after.successful_executions, 0, "reset zeroes successes");
    assert_eq!(
        after.failed_executions, 2,
        "reset keeps failures as history"
    );
    assert_eq!(after.trust_reset_count, 1, "reset is counted");
    assert!(!after.session_trust_granted && after.session_trust_expires.is_none());
    assert!(!after.globally_approved && after.globally_approved_at.is_none());
    assert_eq!(
        after.last_success, before.last_success,
        "reset keeps last_success"
    );
    assert_eq!(after.id, before.id, "changes keep the record's identity");
    assert_eq!(after.created_at, before.created_at);
    assert!(after.updated_at >= before.updated_at);
    assert_eq!(store.get(&scope, "pdf").await.unwrap(), Some(after));
}

/// An empty skill id is refused by every writing call.
pub async fn validation(store: &dyn TrustStore) {
    let scope = user();
    let is_empty_skill = |result: &crate::Result<_>| matches!(result, Err(Error::Invalid { field, violation: Violation::Empty }) if field == "skill_id");
    let result = store.create(&scope, "").await;
    assert!(
        is_empty_skill(&result),
        "create refuses an empty skill id: {result:?}"
    );
    let result = store.apply(&scope, "", TrustChange::Success).await;
    assert!(
        is_empty_skill(&result),
        "apply refuses an empty skill id: {result:?}"
    );
    assert!(
        store.list(&scope).await.unwrap().is_empty(),
        "nothing was written"
    );
}

/// Another user of the tenant, or the same user id in another tenant, sees and changes
/// nothing of the owner's records.
pub async fn user_and_tenant_isolation(store: &dyn TrustStore) {
    let owner = user();
    store
        .apply(&owner, "pdf", TrustChange::Success)
        .await
        .unwrap();
    store
        .apply(&owner, "pdf", TrustChange::ApproveGlobally)
        .await
        .unwrap();
    let original = store.get(&owner, "pdf").await.unwrap().unwrap();

    for intruder in neighbours(&owner) {
        assert_eq!(
            store.get(&intruder, "pdf").await.unwrap(),
            None,
            "get is per user"
        );
        assert!(
            store.list(&intruder).await.unwrap().is_empty(),
            "list is per user"
        );
        let result = store.delete(&intruder, "pdf").await;
        assert!(
            matches!(result, Err(Error::NotFound { .. })),
            "delete of another's record is NotFound: {result:?}"
        );
        let own = store
            .apply_all(
                &intruder,
                "pdf",
                &[TrustChange::Failure, TrustChange::Reset],
            )
            .await
            .unwrap();
        assert_eq!(
            (
                own.successful_executions,
                own.failed_executions,
                own.trust_reset_count
            ),
            (0, 1, 1),
            "apply changes the caller's own record"
        );
        assert_eq!((&own.tenant, &own.user), (&intruder.tenant, &intruder.user));
        assert_ne!(own.id, original.id);
        let result = store.create(&intruder, "xlsx").await;
        assert!(result.is_ok(), "uniqueness is per user: {result:?}");
    }
    assert_eq!(
        store.get(&owner, "pdf").await.unwrap(),
        Some(original),
        "the owner's record is untouched"
    );
    assert_eq!(store.list(&owner).await.unwrap().len(), 1);
}

/// Concurrent changes are all applied: 100 successes count 100, and concurrent creates of
/// one record make exactly one.
pub async fn concurrent_changes_are_not_lost(store: &dyn TrustStore) {
    let scope = user();
    let scope = &scope;
    let successes = (0..100).map(|_| store.apply(scope, "pdf", TrustChange::Success));
    for result in join_all(successes).await {
        result.unwrap();
    }
    let record = store.get(scope, "pdf").await.unwrap().unwrap();
    assert_eq!(
        record.successful_executions, 100,
        "no concurrent success was lost"
    );

    let mixed = (0..60).map(|n| {
        let change = if n % 3 == 0 {
            TrustChange::Failure
        } else {
            TrustChange::Success
        };
        async move { store.apply(scope, "xlsx", change).await }
    });
    for result in join_all(mixed).await {
        result.unwrap();
    }
    let record = store.get(scope, "xlsx").await.unwrap().unwrap();
    assert_eq!(
        (record.successful_executions, record.failed_executions),
        (40, 20),
        "concurrent successes and failures are all counted"
    );

    let creates = (0..16).map(|_| store.create(scope, "docx"));
    let results = join_all(creates).await;
    let created = results.iter().filter(|r| r.is_ok()).count();
    let conflicts = results
        .iter()
        .filter(|r| matches!(r, Err(Error::Conflict { .. })))
        .count();
    assert_eq!(
        (created, conflicts),
        (1, 15),
        "exactly one concurrent create wins"
    );
}
