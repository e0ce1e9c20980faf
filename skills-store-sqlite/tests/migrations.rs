//! Opening files of other schema versions, and what survives closing and reopening.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use skills_store_sqlite::{Error, SqliteStore};
use skills_store_traits::{NewSkill, SkillStore, TenantId};

fn user_version(path: &std::path::Path) -> i64 {
    let conn = rusqlite::Connection::open(path).unwrap();
    conn.pragma_query_value(None, "user_version", |row| row.get(0))
        .unwrap()
}

#[tokio::test]
async fn a_file_from_a_newer_version_is_refused_and_left_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("future.sqlite3");
    let store = SqliteStore::open(&path).await.unwrap();
    let tenant = TenantId::new("t");
    store
        .create_skill(&tenant, NewSkill::new("Kept", "kept", "# kept\n"))
        .await
        .unwrap();
    drop(store);
    let future = SqliteStore::SCHEMA_VERSION + 1;
    rusqlite::Connection::open(&path)
        .unwrap()
        .pragma_update(None, "user_version", future)
        .unwrap();

    match SqliteStore::open(&path).await {
        Err(error @ Error::SchemaTooNew { found, supported }) => {
            assert_eq!((found, supported), (future, SqliteStore::SCHEMA_VERSION));
            assert!(error.to_string().contains("newer"), "{error}");
        }
        other => panic!("expected SchemaTooNew, got {other:?}"),
    }
    assert_eq!(user_version(&path), future, "the file was not touched");
}

#[tokio::test]
async fn a_new_file_gets_the_latest_schema_and_keeps_its_records() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("new.sqlite3");
    let tenant = TenantId::new("t");
    let created = {
        let store = SqliteStore::open(&path).await.unwrap();
        assert_eq!(store.path(), Some(path.as_path()));
        store
            .create_skill(
                &tenant,
                NewSkill::new("Kept", "kept", "# kept\n").with_file("a.md", "a"),
            )
            .await
            .unwrap()
    };
    assert_eq!(user_version(&path), SqliteStore::SCHEMA_VERSION);
    let store = SqliteStore::open(&path).await.unwrap();
    assert_eq!(
        store.find_skill_by_id(&tenant, &created.id).await.unwrap(),
        Some(created)
    );
    let journal: String = rusqlite::Connection::open(&path)
        .unwrap()
        .pragma_query_value(None, "journal_mode", |row| row.get(0))
        .unwrap();
    assert_eq!(journal, "wal");
}

#[tokio::test]
async fn something_that_is_not_a_database_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("notes.txt");
    std::fs::write(
        &path,
        "these are not the pages you are looking for".repeat(100),
    )
    .unwrap();
    assert!(matches!(
        SqliteStore::open(&path).await,
        Err(Error::Sqlite { .. })
    ));
}
