//! Versioned migrations: recorded in `schema_migrations`, idempotent on reopen, safe for
//! concurrent openers, and a database from a newer version is refused untouched.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use skills_store_postgres::{Error, PgOptions, PostgresStore};
use skills_store_traits::{NewSkill, SkillStore, TenantId};

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
