//! The skill-store conformance suite against the in-memory backend, one test per contract,
//! plus concurrent use from real threads.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::sync::Arc;

use skills::store::conformance::skills as contract;
use skills::store::in_memory::InMemorySkillStore;
use skills::store::{NewSkill, SkillFilter, SkillStore, TenantId};

macro_rules! contracts {
    ($($name:ident),* $(,)?) => {$(
        #[tokio::test]
        async fn $name() {
            contract::$name(&InMemorySkillStore::new()).await;
        }
    )*};
}

contracts!(
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

/// The batch reads, on their own (they are part of `run_all` too).
#[tokio::test]
async fn batch_reads() {
    use skills::store::conformance::skill_batches as batches;
    let store = InMemorySkillStore::new();
    batches::files_for_skills_equals_per_item(&store).await;
    batches::files_for_skills_tenant_isolation(&store).await;
    batches::files_for_skills_many_ids(&store).await;
    batches::agent_skills_equals_the_two_calls(&store).await;
    batches::agent_skills_tenant_isolation(&store).await;
    batches::resolvable_equals_the_full_read(&store).await;
    batches::resolvable_tenant_isolation(&store).await;
    batches::resolvable_follows_every_write(&store).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn whole_suite_on_one_shared_store() {
    // Every contract creates its own tenants, so the suite can share one store.
    let store = InMemorySkillStore::new();
    contract::run_all(&store).await;
}

#[test]
fn real_threads_lose_nothing() {
    let store = Arc::new(InMemorySkillStore::new());
    let tenant = TenantId::new("threads");
    let handles: Vec<_> = (0..8)
        .map(|thread| {
            let store = Arc::clone(&store);
            let tenant = tenant.clone();
            std::thread::spawn(move || {
                futures::executor::block_on(async {
                    for i in 0..50 {
                        let slug = format!("t{thread}-s{i}");
                        store
                            .create_skill(&tenant, NewSkill::new("S", slug, "# s\n"))
                            .await
                            .unwrap();
                    }
                })
            })
        })
        .collect();
    for handle in handles {
        handle.join().unwrap();
    }
    let all =
        futures::executor::block_on(store.list_skills(&tenant, &SkillFilter::default())).unwrap();
    assert_eq!(all.len(), 400);
}

/// The caching decorator is a `SkillStore` like any other: the whole suite on it, over the
/// in-memory backend and over SQLite.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_caching_decorator_passes_the_suite() {
    use skills::store::cache::CachedSkillStore;
    let clock = Arc::new(skills::store::SystemClock);
    let cached = CachedSkillStore::new(InMemorySkillStore::new(), clock.clone());
    contract::run_all(&cached).await;
    let dir = tempfile::tempdir().unwrap();
    let sqlite = skills::sqlite::SqliteStore::open(dir.path().join("s.sqlite3"))
        .await
        .unwrap();
    contract::run_all(&CachedSkillStore::new(sqlite, clock)).await;
}
