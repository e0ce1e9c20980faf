//! The whole `skills-store-traits` conformance suite against [`PostgresStore`]: one test
//! per contract of every trait, each on a fresh schema, then every suite's `run_all`, and
//! all of them at once on one shared schema.
//!
//! The server comes from `SKILLS_PG_URL` (`.ci/postgres.sh` starts one); without it the
//! tests say they were skipped, and fail under `CI=true`.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use skills_store_traits::conformance;

/// One `#[tokio::test]` per contract function, each on a fresh schema.
macro_rules! contracts {
    ($module:ident: $($contract:ident),+ $(,)?) => {
        mod $module {
            use super::*;
            $(
                #[tokio::test]
                async fn $contract() {
                    let Some(store) = common::store().await else { return };
                    conformance::$module::$contract(&store).await;
                }
            )+

            #[tokio::test]
            async fn run_all() {
                let Some(store) = common::store().await else { return };
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
    trust_levels,
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
    operator_holds,
);

contracts!(audit:
    append_and_read,
    stale_head_is_refused,
    validation_and_uniqueness,
    query_filters_and_order,
    tenant_isolation,
    concurrent_appenders_never_fork,
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

contracts!(packages:
    create_and_find,
    uniqueness,
    validation_rules,
    versions_and_order,
    upgrade_and_rollback,
    deprecation_and_approval,
    ratings,
    delete_cascades,
    delete_one_version,
    tenant_isolation,
    concurrent_writers,
    concurrent_version_deletes,
);

contracts!(learning:
    sequences_record_and_list,
    sequence_validation,
    prune_sequences,
    patterns_upsert,
    pattern_validation,
    list_patterns_filters_and_order,
    status_life_cycle,
    tenant_isolation,
    concurrent_writers,
);

/// Every suite at once on one schema, from a multi-threaded runtime: the contracts make
/// their own tenants and users, so one store serves all eight traits without interference.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_suite_at_once_on_one_shared_schema() {
    let Some(store) = common::store().await else {
        return;
    };
    futures::join!(
        conformance::skills::run_all(&store),
        conformance::audit::run_all(&store),
        conformance::trust::run_all(&store),
        conformance::plans::run_all(&store),
        conformance::memory::run_all(&store),
        conformance::permissions::run_all(&store),
        conformance::packages::run_all(&store),
        conformance::learning::run_all(&store),
    );
}

/// The store's futures need no tokio runtime of the caller's: the suite passes from
/// `futures::executor`.
#[test]
fn any_executor_drives_the_store() {
    futures::executor::block_on(async {
        let Some(store) = common::store().await else {
            return;
        };
        conformance::audit::run_all(&store).await;
        conformance::permissions::run_all(&store).await;
    });
}

/// `SkillStore::list_files_for_skills` on PostgreSQL (one query) answers exactly what one
/// `list_skill_files` call per id answers.
#[tokio::test]
async fn files_of_many_skills_in_one_query_match_one_call_per_skill() {
    use skills_store_traits::{NewSkill, SkillStore, TenantId};
    let Some(store) = common::store().await else {
        return;
    };
    let (acme, other) = (TenantId::new("acme"), TenantId::new("other"));
    let mut ids = Vec::new();
    for (i, files) in [2, 0, 3].into_iter().enumerate() {
        let new = (0..files).fold(NewSkill::new("S", format!("s{i}"), "# s\n"), |n, f| {
            n.with_file(format!("z{f}.md"), "x")
        });
        ids.push(store.create_skill(&acme, new).await.unwrap().id);
    }
    let foreign = store
        .create_skill(
            &other,
            NewSkill::new("F", "f", "# f\n").with_file("a.md", "x"),
        )
        .await
        .unwrap()
        .id;
    let asked: Vec<String> =
        [ids.clone(), vec![ids[0].clone(), foreign, "missing".into()]].concat();
    let batch = store.list_files_for_skills(&acme, &asked).await.unwrap();
    let keys: Vec<&String> = batch.keys().collect();
    let mut expected_keys = vec![&ids[0], &ids[2]];
    expected_keys.sort();
    assert_eq!(keys, expected_keys);
    for id in [&ids[0], &ids[2]] {
        assert_eq!(batch[id], store.list_skill_files(&acme, id).await.unwrap());
    }
}
