//! A lost connection in the middle of a multi-statement write leaves no partial write, and
//! the error is typed: it names the operation (and the server's code when it sent one).
//!
//! To kill the backend at a known point, the test holds a table lock the write needs half
//! way through (after its first statements, before its last), waits until the store's
//! backend is blocked on it, and terminates that backend with `pg_terminate_backend` from
//! another connection.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::time::{Duration, Instant};

use skills_store_postgres::{Error as PgError, PostgresStore};
use skills_store_traits::{Error, NewSkill, NewSkillFile, SkillStore, SkillUpdate, TenantId};

/// Waits until a backend of the store is blocked by `blocker_pid` (this test's lock holder,
/// so never another test's backend) in a statement starting with `statement`, and
/// terminates it.
async fn kill_blocked_backend(killer: &tokio_postgres::Client, blocker_pid: i32, statement: &str) {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        assert!(
            Instant::now() < deadline,
            "the write never blocked on the lock"
        );
        let pattern = format!("{statement}%");
        let row = killer
            .query_opt(
                "SELECT pid FROM pg_stat_activity WHERE application_name = \
                 'skills-store-postgres' AND wait_event_type = 'Lock' AND query LIKE $1 \
                 AND $2 = ANY(pg_blocking_pids(pid))",
                &[&pattern, &blocker_pid],
            )
            .await
            .unwrap();
        if let Some(row) = row {
            let pid: i32 = row.get(0);
            let killed: bool = killer
                .query_one("SELECT pg_terminate_backend($1)", &[&pid])
                .await
                .unwrap()
                .get(0);
            if killed {
                return;
            }
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// The error of a write whose connection was killed: a backend failure whose source is the
/// crate's error, naming the operation.
fn assert_lost_connection(error: &Error, operation: &str) {
    let Error::Backend { source, message } = error else {
        panic!("expected a backend error, got {error:?}");
    };
    let source = source.as_ref().expect("the cause is kept");
    let pg = source
        .downcast_ref::<PgError>()
        .expect("a skills-store-postgres error");
    assert_eq!(pg.operation(), Some(operation), "{message}");
    assert!(matches!(pg, PgError::Postgres { .. }), "{pg:?}");
    // The server says why when it can (57P01: terminated by an administrator); a
    // connection cut before it spoke has no code.
    if let Some(code) = pg.code() {
        assert_eq!(code, "57P01", "{message}");
        assert!(message.contains("57P01"), "{message}");
    }
}

fn big_skill(slug: &str, files: usize) -> NewSkill {
    (0..files).fold(NewSkill::new(slug, slug, "# big\n"), |skill, i| {
        skill.with_file(format!("f{i}.md"), format!("file {i}\n"))
    })
}

/// `create_skill` is killed after inserting the skill row and before its files: no skill,
/// no file, and the store carries on with a new connection.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_create_killed_mid_transaction_leaves_nothing() {
    let Some(url) = common::url() else { return };
    let schema = common::fresh_schema();
    let store: PostgresStore = common::open(&url, &schema, 2).await;
    let tenant = TenantId::new("t");
    let mut blocker = common::raw(&url, &schema).await;
    let killer = common::raw(&url, &schema).await;
    let lock = blocker.transaction().await.unwrap();
    lock.batch_execute("LOCK TABLE skill_files IN SHARE MODE")
        .await
        .unwrap();
    let blocker_pid: i32 = lock
        .query_one("SELECT pg_backend_pid()", &[])
        .await
        .unwrap()
        .get(0);
    let write = tokio::spawn({
        let store = store.clone();
        let tenant = tenant.clone();
        async move { store.create_skill(&tenant, big_skill("doomed", 5)).await }
    });
    kill_blocked_backend(&killer, blocker_pid, "INSERT INTO skill_files").await;
    lock.rollback().await.unwrap();
    let error = write.await.unwrap().unwrap_err();
    assert_lost_connection(&error, "create_skill");
    assert_eq!(
        store.find_skill_by_slug(&tenant, "doomed").await.unwrap(),
        None
    );
    let n: i64 = killer
        .query_one(
            "SELECT (SELECT COUNT(*) FROM skills) + (SELECT COUNT(*) FROM skill_files)",
            &[],
        )
        .await
        .unwrap()
        .get(0);
    assert_eq!(n, 0, "nothing of the killed write is stored");
    // The pool replaced the dead connection: the same write now succeeds.
    let skill = store
        .create_skill(&tenant, big_skill("doomed", 5))
        .await
        .unwrap();
    assert_eq!(
        store
            .list_skill_files(&tenant, &skill.id)
            .await
            .unwrap()
            .len(),
        5
    );
}

/// `update_skill` replacing a skill's files is killed after deleting the old files and
/// inserting the new ones, before the skill row is rewritten: the old files and the old
/// content are all still there.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_update_killed_mid_transaction_keeps_the_old_skill_whole() {
    let Some(url) = common::url() else { return };
    let schema = common::fresh_schema();
    let store = common::open(&url, &schema, 2).await;
    let tenant = TenantId::new("t");
    let old = store
        .create_skill(&tenant, big_skill("kept", 3))
        .await
        .unwrap();
    let mut blocker = common::raw(&url, &schema).await;
    let killer = common::raw(&url, &schema).await;
    let lock = blocker.transaction().await.unwrap();
    // A key-share lock on the skill's row: the file replacement's own updates of that row
    // (the file-listing trigger changes no key column) pass it, the final upsert (which
    // sets the slug, a key) waits on it. A table lock would stop the write at its first
    // file statement, since every file write updates the skill's listing.
    lock.execute("SELECT set_config('skills.tenant', 't', true)", &[])
        .await
        .unwrap();
    let locked = lock
        .execute(
            "SELECT 1 FROM skills WHERE id = $1 FOR KEY SHARE",
            &[&old.id],
        )
        .await
        .unwrap();
    assert_eq!(locked, 1);
    let blocker_pid: i32 = lock
        .query_one("SELECT pg_backend_pid()", &[])
        .await
        .unwrap()
        .get(0);
    let write = tokio::spawn({
        let (store, tenant, id) = (store.clone(), tenant.clone(), old.id.clone());
        async move {
            let update = SkillUpdate {
                content: Some("# replaced\n".into()),
                files: Some(vec![NewSkillFile::new("new.md", "new")]),
                ..SkillUpdate::default()
            };
            store.update_skill(&tenant, &id, update).await
        }
    });
    kill_blocked_backend(&killer, blocker_pid, "INSERT INTO skills").await;
    lock.rollback().await.unwrap();
    let error = write.await.unwrap().unwrap_err();
    assert_lost_connection(&error, "update_skill");
    let skill = store
        .find_skill_by_id(&tenant, &old.id)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(skill, old, "the skill row is the old one");
    let files = store.list_skill_files(&tenant, &old.id).await.unwrap();
    let paths: Vec<&str> = files.iter().map(|f| f.relative_path.as_str()).collect();
    assert_eq!(
        paths,
        ["f0.md", "f1.md", "f2.md"],
        "the old files are all there"
    );
}
