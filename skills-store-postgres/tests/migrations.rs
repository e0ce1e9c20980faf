//! Versioned migrations: recorded in `schema_migrations`, idempotent on reopen, safe for
//! concurrent openers, and a database from a newer version is refused untouched.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use skills_store_postgres::{Error, PgOptions, PostgresStore};
use skills_store_traits::{NewAssignment, NewSkill, NewSkillFile, SkillStore, TenantId};

async fn versions(url: &str, schema: &str) -> Vec<i64> {
    let client = common::raw(url, schema).await;
    client
        .query(
            "SELECT version FROM schema_migrations ORDER BY version",
            &[],
        )
        .await
        .unwrap()
        .iter()
        .map(|row| row.get(0))
        .collect()
}

/// Eight stores open one fresh schema at once: it is migrated once, and each works.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_openers_migrate_once_and_reopening_changes_nothing() {
    let Some(url) = common::url() else { return };
    let schema = common::fresh_schema();
    let opened = futures::future::join_all((0..8).map(|_| common::open(&url, &schema, 1))).await;
    let expected: Vec<i64> = (1..=PostgresStore::SCHEMA_VERSION).collect();
    assert_eq!(versions(&url, &schema).await, expected);
    let tenant = TenantId::new("t");
    opened[0]
        .create_skill(&tenant, NewSkill::new("Kept", "kept", "# kept\n"))
        .await
        .unwrap();
    drop(opened);
    let reopened = common::open(&url, &schema, 1).await;
    assert_eq!(versions(&url, &schema).await, expected);
    assert!(
        reopened
            .find_skill_by_slug(&tenant, "kept")
            .await
            .unwrap()
            .is_some()
    );
}

#[tokio::test]
async fn a_database_from_a_newer_version_is_refused() {
    let Some(url) = common::url() else { return };
    let schema = common::fresh_schema();
    drop(common::open(&url, &schema, 1).await);
    let client = common::raw(&url, &schema).await;
    client
        .execute(
            "INSERT INTO schema_migrations (version, name) VALUES (999, 'from the future')",
            &[],
        )
        .await
        .unwrap();
    let refused = PostgresStore::open(PgOptions::new(&url).schema(&schema)).await;
    assert!(
        matches!(refused, Err(Error::SchemaTooNew { found: 999, .. })),
        "{refused:?}"
    );
}

#[tokio::test]
async fn bad_options_are_refused_before_connecting() {
    let schema =
        PostgresStore::open(PgOptions::new("postgres://x@127.0.0.1:1/x").schema("a; DROP"));
    assert!(matches!(schema.await, Err(Error::Config(_))));
    let url = PostgresStore::open(PgOptions::new("not a url at all ://"));
    assert!(matches!(url.await, Err(Error::Config(_))));
}

/// An unreachable server is a typed error naming the operation.
#[tokio::test]
async fn an_unreachable_server_is_a_typed_error() {
    let refused = PostgresStore::open(PgOptions::new("postgres://x@127.0.0.1:1/x")).await;
    match refused {
        Err(error @ Error::Pool { .. }) => {
            assert_eq!(error.operation(), Some("opening the store"));
        }
        other => panic!("expected a pool error, got {other:?}"),
    }
}

/// A database at version 2 holding skills and files is upgraded with every existing skill's
/// file listing filled in. The attack on the first version of migration 3: its backfill ran
/// under the tables' forced row-level security with no tenant set, saw no row, and every
/// skill stored before the upgrade resolved with no files and no `skill.json`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn upgrading_fills_in_the_listings_of_stored_skills() {
    let Some(url) = common::url() else { return };
    let schema = common::fresh_schema();
    let tenant = TenantId::new("t");
    {
        let store = common::open(&url, &schema, 1).await;
        let skill = store
            .create_skill(&tenant, NewSkill::new("Kept", "kept", "# kept\n"))
            .await
            .unwrap();
        for file in [
            NewSkillFile::new("skill.json", "{\"name\": \"kept\"}"),
            NewSkillFile::new("scripts/run.sh", "echo kept"),
        ] {
            store
                .create_skill_file(&tenant, &skill.id, file)
                .await
                .unwrap();
        }
        store
            .create_assignment(&tenant, NewAssignment::global(&skill.id))
            .await
            .unwrap();
    }
    // Back to version 2: what versions 5, 4 and 3 added is dropped (the listing with it)
    // and their rows removed, so reopening runs them again over the stored skills and
    // files.
    common::raw(&url, &schema)
        .await
        .batch_execute(
            "ALTER TABLE skills DROP CONSTRAINT skills_held_is_disabled, DROP COLUMN held;
             DELETE FROM schema_migrations WHERE version = 5;
             DROP TRIGGER skills_catalog_changed ON skills;
             DROP FUNCTION skills_catalog_changed();
             DROP FUNCTION skill_catalog_bump(TEXT);
             DROP TABLE skill_catalog_versions;
             DROP TRIGGER skills_restamp ON skills;
             DROP FUNCTION skills_restamp();
             ALTER TABLE skills DROP COLUMN stamp;
             DROP SEQUENCE skill_stamps;
             DELETE FROM schema_migrations WHERE version = 4;
             DROP TRIGGER skill_files_listing ON skill_files;
             DROP FUNCTION skill_files_listing();
             DROP FUNCTION skill_files_relist(TEXT, TEXT);
             ALTER TABLE skill_assignments
                 DROP COLUMN enabled, DROP COLUMN priority, DROP COLUMN auto_inject;
             CREATE INDEX idx_skill_assignments_target
                 ON skill_assignments (tenant_id, scope, scope_id);
             ALTER TABLE skills DROP COLUMN name, DROP COLUMN description,
                 DROP COLUMN source_kind, DROP COLUMN plugin_id, DROP COLUMN content,
                 DROP COLUMN is_directory, DROP COLUMN version, DROP COLUMN tags,
                 DROP COLUMN requires_tools, DROP COLUMN trust_level,
                 DROP COLUMN metadata_status, DROP COLUMN metadata_layer,
                 DROP COLUMN file_paths, DROP COLUMN file_types, DROP COLUMN manifest;
             DELETE FROM schema_migrations WHERE version = 3;",
        )
        .await
        .unwrap();
    let reopened = common::open(&url, &schema, 1).await;
    assert_eq!(
        versions(&url, &schema).await,
        (1..=PostgresStore::SCHEMA_VERSION).collect::<Vec<_>>()
    );
    let resolvable = reopened
        .resolvable_skills(&tenant, "agent-1", None)
        .await
        .unwrap();
    assert_eq!(resolvable.len(), 1);
    let paths: Vec<&str> = resolvable[0]
        .files
        .iter()
        .map(|f| f.relative_path.as_str())
        .collect();
    assert_eq!(paths, ["scripts/run.sh", "skill.json"]);
    assert_eq!(
        resolvable[0].manifest.as_deref(),
        Some("{\"name\": \"kept\"}")
    );
    // Version 4 gave the stored tenant its catalog version and every skill a stamp (a
    // second resolution answers from them, the same).
    assert_eq!(
        reopened
            .resolvable_skills(&tenant, "agent-1", None)
            .await
            .unwrap(),
        resolvable
    );
    // The policies are forced again: a connection with no tenant sees no skill and no
    // catalog version; in the tenant, the version is there.
    let raw = common::raw(&url, &schema).await;
    for table in ["skills", "skill_catalog_versions"] {
        let seen: i64 = raw
            .query_one(&format!("SELECT count(*) FROM {table}"), &[])
            .await
            .unwrap()
            .get(0);
        assert_eq!(seen, 0, "{table}");
    }
    raw.batch_execute("BEGIN; SELECT set_config('skills.tenant', 't', true)")
        .await
        .unwrap();
    let versions: i64 = raw
        .query_one("SELECT count(*) FROM skill_catalog_versions", &[])
        .await
        .unwrap()
        .get(0);
    raw.batch_execute("COMMIT").await.unwrap();
    assert_eq!(versions, 1);
}

/// A version-4 database whose skill documents predate the hold is upgraded with every
/// stored skill not held, and a held row cannot be enabled from SQL beside the store
/// (through the column or the document).
#[tokio::test]
async fn upgrading_to_holds_keeps_stored_skills_unheld_and_held_rows_disabled() {
    let Some(url) = common::url() else { return };
    let schema = common::fresh_schema();
    let tenant = TenantId::new("t");
    let id = {
        let store = common::open(&url, &schema, 1).await;
        store
            .create_skill(&tenant, NewSkill::new("Kept", "kept", "# kept\n"))
            .await
            .unwrap()
            .id
    };
    let raw = common::raw(&url, &schema).await;
    raw.batch_execute(
        "ALTER TABLE skills DROP CONSTRAINT skills_held_is_disabled, DROP COLUMN held;
         DELETE FROM schema_migrations WHERE version = 5;
         BEGIN;
         SELECT set_config('skills.tenant', 't', true);
         UPDATE skills SET doc = doc - 'held';
         COMMIT;",
    )
    .await
    .unwrap();
    let reopened = common::open(&url, &schema, 1).await;
    assert_eq!(
        versions(&url, &schema).await,
        (1..=PostgresStore::SCHEMA_VERSION).collect::<Vec<_>>()
    );
    let kept = reopened
        .find_skill_by_id(&tenant, &id)
        .await
        .unwrap()
        .unwrap();
    assert!(kept.enabled && !kept.held, "a stored skill became held");
    let hold = skills_store_traits::SkillUpdate {
        held: Some(true),
        ..Default::default()
    };
    let held = reopened
        .update_skill(&tenant, &id, hold)
        .await
        .unwrap()
        .unwrap();
    assert!(held.held && !held.enabled);

    raw.batch_execute("BEGIN; SELECT set_config('skills.tenant', 't', true)")
        .await
        .unwrap();
    let column = raw
        .execute("UPDATE skills SET enabled = true WHERE id = $1", &[&id])
        .await;
    assert!(column.is_err(), "a held row was enabled through its column");
    raw.batch_execute("ROLLBACK; BEGIN; SELECT set_config('skills.tenant', 't', true)")
        .await
        .unwrap();
    let document = raw
        .execute(
            "UPDATE skills SET doc = jsonb_set(doc, '{enabled}', 'true') WHERE id = $1",
            &[&id],
        )
        .await;
    assert!(
        document.is_err(),
        "a held row was enabled through its document"
    );
    raw.batch_execute("ROLLBACK").await.unwrap();
    let after = reopened
        .find_skill_by_id(&tenant, &id)
        .await
        .unwrap()
        .unwrap();
    assert!(after.held && !after.enabled);
}
