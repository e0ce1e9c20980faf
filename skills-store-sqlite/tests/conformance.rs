//! The whole `skills-store-traits` conformance suite against [`SqliteStore`]: one test per
//! contract of every trait, each on a fresh database file, then every suite's `run_all`
//! (each on its own file with the default `synchronous = FULL`, and all of them at once on
//! one shared file), and the in-memory database.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use skills_store_sqlite::{SqliteOptions, SqliteStore, Synchronous};
use skills_store_traits::conformance;

/// A fresh database file. The per-contract tests run with `synchronous = NORMAL` to keep the
/// suite fast (no fsync per commit); the `run_all` tests use the default, `FULL`.
async fn store(synchronous: Synchronous) -> (tempfile::TempDir, SqliteStore) {
    let dir = tempfile::tempdir().unwrap();
    let options = SqliteOptions::default().synchronous(synchronous);
    let store = SqliteStore::open_with(dir.path().join("store.sqlite3"), options)
        .await
        .unwrap();
    (dir, store)
}

/// One `#[tokio::test]` per contract function, each on a fresh database file.
macro_rules! contracts {
    ($module:ident: $($contract:ident),+ $(,)?) => {
        mod $module {
            use super::*;
            $(
                #[tokio::test]
                async fn $contract() {
                    let (_dir, store) = store(Synchronous::Normal).await;
                    conformance::$module::$contract(&store).await;
                }
            )+

            #[tokio::test]
            async fn run_all() {
                let (_dir, store) = store(Synchronous::Full).await;
                conformance::$module::run_all(&store).await;
            }
        }
    };
}

contracts!(permissions:
    put_get_list_delete,
    replace_is_atomic_and_keeps_revisions,
    validation,
    tenant_isolation,
    concurrent_puts_are_not_lost,
    approvals_are_asked_once_and_decided_once,
    approvals_are_validated_and_kept_per_tenant,
    racing_decisions_decide_once,
);

contracts!(skill_batches:
    files_for_skills_equals_per_item,
    files_for_skills_tenant_isolation,
    files_for_skills_many_ids,
    agent_skills_equals_the_two_calls,
    agent_skills_tenant_isolation,
    resolvable_equals_the_full_read,
    resolvable_tenant_isolation,
    resolvable_follows_every_write,
);

contracts!(skills:
    create_and_find,
    create_with_files_is_atomic,
    validation_rules,
    slug_uniqueness,
    list_filters_and_order,
    update_skill,
    file_crud,
    file_limits,
    assignment_crud_and_uniqueness,
    assignments_for_agent,
    cascades,
    bulk_queries,
    tenant_isolation,
    concurrent_writers,
    trust_levels,
    operator_holds,
);

contracts!(audit:
    append_and_read,
    stale_head_is_refused,
    validation_and_uniqueness,
    query_filters_and_order,
    tenant_isolation,
    concurrent_appenders_never_fork,
    visit_range_lends_what_read_range_returns,
);

contracts!(trust:
    create_get_list_delete,
    changes_apply_as_documented,
    validation,
    user_and_tenant_isolation,
    concurrent_changes_are_not_lost,
);

contracts!(plans:
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

contracts!(memory:
    episodes_store_and_rank,
    facts_validate_and_relate,
    procedures_upsert_and_rank,
    preferences_upsert_list_delete,
    user_and_tenant_isolation,
    concurrent_writers_lose_nothing,
);

/// Every suite at once on one file, from a multi-threaded runtime: the contracts make their
/// own tenants and users, so one store serves all five traits without interference.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_suite_at_once_on_one_shared_file() {
    let (_dir, store) = store(Synchronous::Normal).await;
    futures::join!(
        conformance::skills::run_all(&store),
        conformance::audit::run_all(&store),
        conformance::trust::run_all(&store),
        conformance::plans::run_all(&store),
        conformance::memory::run_all(&store),
        conformance::permissions::run_all(&store),
    );
    assert!(store.integrity_check().await.unwrap().is_empty());
}

/// The in-memory database passes too (it is what tests of other crates may use).
#[tokio::test]
async fn every_suite_in_memory() {
    let store = SqliteStore::open_in_memory().await.unwrap();
    conformance::skills::run_all(&store).await;
    conformance::audit::run_all(&store).await;
    conformance::trust::run_all(&store).await;
    conformance::plans::run_all(&store).await;
    conformance::memory::run_all(&store).await;
    conformance::permissions::run_all(&store).await;
}
