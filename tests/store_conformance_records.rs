//! The record stores' conformance suite (audit, trust, plans, memory, permissions) run against the
//! in-memory backends: each contract on its own store, all of them on one shared store at
//! once, and concurrent use from real threads.

use skills::store::audit::{AuditRecord, AuditStore};
use skills::store::conformance::{audit, memory, permissions, plans, trust};
use skills::store::in_memory::{
    InMemoryAuditStore, InMemoryMemoryStore, InMemoryPermissionStore, InMemoryPlanStore,
    InMemoryTrustStore,
};
use skills::store::trust::{TrustChange, TrustStore};
use skills::store::{Error, TenantId, UserScope};

/// One `#[tokio::test]` per contract function, each on a fresh store.
macro_rules! contracts {
    ($tests:ident, $module:ident, $store:ty: $($contract:ident),+ $(,)?) => {
        mod $tests {
            use super::*;
            $(
                #[tokio::test]
                async fn $contract() {
                    $module::$contract(&<$store>::new()).await;
                }
            )+
        }
    };
}

contracts!(audit_contracts, audit, InMemoryAuditStore:
    append_and_read,
    stale_head_is_refused,
    validation_and_uniqueness,
    query_filters_and_order,
    tenant_isolation,
    concurrent_appenders_never_fork,
    visit_range_lends_what_read_range_returns,
);

contracts!(trust_contracts, trust, InMemoryTrustStore:
    create_get_list_delete,
    changes_apply_as_documented,
    validation,
    user_and_tenant_isolation,
    concurrent_changes_are_not_lost,
);

contracts!(permissions_contracts, permissions, InMemoryPermissionStore:
    put_get_list_delete,
    replace_is_atomic_and_keeps_revisions,
    validation,
    tenant_isolation,
    concurrent_puts_are_not_lost,
);

contracts!(plans_contracts, plans, InMemoryPlanStore:
    plan_crud,
    plan_validation,
    approval_and_lifecycle,
    list_filters_and_order,
    steps_crud_and_order,
    every_step_status_is_kept,
    delete_cascades_working_memory,
    user_and_tenant_isolation,
    concurrent_step_writers,
);

contracts!(memory_contracts, memory, InMemoryMemoryStore:
    episodes_store_and_rank,
    facts_validate_and_relate,
    procedures_upsert_and_rank,
    preferences_upsert_list_delete,
    user_and_tenant_isolation,
    concurrent_writers_lose_nothing,
);

/// Every suite twice, concurrently, on one store per kind: the contracts make their own
/// tenants and users, so they must not disturb each other.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn run_all_suites_concurrently_on_shared_stores() {
    let audit_store = InMemoryAuditStore::new();
    let trust_store = InMemoryTrustStore::new();
    let plan_store = InMemoryPlanStore::new();
    let memory_store = InMemoryMemoryStore::new();
    futures::join!(
        audit::run_all(&audit_store),
        audit::run_all(&audit_store),
        trust::run_all(&trust_store),
        trust::run_all(&trust_store),
        plans::run_all(&plan_store),
        plans::run_all(&plan_store),
        memory::run_all(&memory_store),
        memory::run_all(&memory_store),
    );
}

fn chained(previous: &str, writer: usize, n: usize) -> AuditRecord {
    let mut record = AuditRecord::new("alice", "pdf", "skills/pdf", "core", "in", true);
    record.previous_hash = previous.to_owned();
    record.entry_hash = format!("{writer}-{n}-{}", record.id);
    record
}

/// Eight OS threads append to one audit chain and count trust successes on one record, each
/// driving its own executor: nothing is lost and the chain never forks.
#[test]
fn in_memory_stores_are_safe_across_threads() {
    const THREADS: usize = 8;
    const EACH: usize = 50;
    let audit_store = InMemoryAuditStore::new();
    let trust_store = InMemoryTrustStore::new();
    let tenant = TenantId::new("threads");
    let scope = UserScope::new("threads", "alice");

    std::thread::scope(|threads| {
        for writer in 0..THREADS {
            let (audit_store, trust_store, tenant, scope) =
                (&audit_store, &trust_store, &tenant, &scope);
            threads.spawn(move || {
                futures::executor::block_on(async {
                    for n in 0..EACH {
                        loop {
                            let head = audit_store.head(tenant, "c").await.unwrap();
                            let head = head.map(|h| h.entry_hash);
                            let record = chained(head.as_deref().unwrap_or(""), writer, n);
                            match audit_store
                                .append(tenant, "c", record, head.as_deref())
                                .await
                            {
                                Ok(_) => break,
                                Err(Error::Stale { .. }) => continue,
                                Err(other) => panic!("append failed: {other}"),
                            }
                        }
                        trust_store
                            .apply(scope, "pdf", TrustChange::Success)
                            .await
                            .unwrap();
                    }
                });
            });
        }
    });

    futures::executor::block_on(async {
        let entries = audit_store
            .read_range(&tenant, "c", 1, THREADS * EACH + 1)
            .await
            .unwrap();
        assert_eq!(entries.len(), THREADS * EACH, "every append landed once");
        let mut previous = String::new();
        for (index, entry) in entries.iter().enumerate() {
            assert_eq!(entry.sequence, index as u64 + 1);
            assert_eq!(
                entry.record.previous_hash, previous,
                "the chain never forks"
            );
            previous = entry.record.entry_hash.clone();
        }
        let record = trust_store.get(&scope, "pdf").await.unwrap().unwrap();
        assert_eq!(record.successful_executions, (THREADS * EACH) as u64);
    });
}
