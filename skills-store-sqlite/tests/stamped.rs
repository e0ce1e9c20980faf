//! The decoded skills a store keeps between resolutions (`StampedProjections`) are served
//! only while their rows are unchanged, whoever changes them: another store on the same
//! file (another process, in a deployment), or SQL beside the store. Each write below would
//! be missed by a cache that trusted itself instead of the rows' stamps.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use rusqlite::Connection;
use skills_store_sqlite::{SqliteOptions, SqliteStore};
use skills_store_traits::{
    AgentSkills, NewAssignment, NewSkill, ResolvableSkill, SkillStore, TenantId, conformance,
    resolvable_from,
};

async fn resolve(store: &SqliteStore, t: &TenantId) -> Vec<ResolvableSkill> {
    store.resolvable_skills(t, "agent-1", None).await.unwrap()
}

/// What the full read gives (the reference every backend's projection must equal).
async fn reference(store: &SqliteStore, t: &TenantId) -> Vec<ResolvableSkill> {
    let full: AgentSkills = store
        .assignments_for_agent_with_files(t, "agent-1", None)
        .await
        .unwrap();
    resolvable_from(&full)
}

#[tokio::test]
async fn another_writer_and_sql_beside_the_store_are_seen_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("store.sqlite3");
    let reader = SqliteStore::open(&path).await.unwrap();
    let writer = SqliteStore::open(&path).await.unwrap();
    let t = TenantId::new("acme");
    // Another store's writes (the shared contract), then SQL beside the store.
    let (one_id, quiet_id) =
        conformance::skill_batches::resolvable_follows_another_store(&reader, &writer, &t).await;

    // SQL beside the store: a raw update of the content, then of the trust level alone.
    let raw = Connection::open(&path).unwrap();
    raw.execute(
        "UPDATE skills SET content = 'raw', trust_level = 'user' WHERE id = ?1",
        [&one_id],
    )
    .unwrap();
    let seen = resolve(&reader, &t).await;
    let one = seen.iter().find(|s| s.slug == "one").unwrap();
    assert_eq!(
        (one.content.as_str(), one.trust_level.as_deref()),
        ("raw", Some("user"))
    );
    raw.execute(
        "UPDATE skills SET trust_level = 'verified' WHERE id = ?1",
        [&one_id],
    )
    .unwrap();
    let seen = resolve(&reader, &t).await;
    let one = seen.iter().find(|s| s.slug == "one").unwrap();
    assert_eq!(one.trust_level.as_deref(), Some("verified"));
    // A raw change of a file's type reaches the listing (a trigger) and so the stamp.
    raw.execute(
        "UPDATE skill_files SET content_type = 'text/x-raw' WHERE skill_id = ?1 AND relative_path = 'b.md'",
        [&one_id],
    )
    .unwrap();
    let seen = resolve(&reader, &t).await;
    assert_eq!(seen, reference(&reader, &t).await);
    let one = seen.iter().find(|s| s.slug == "one").unwrap();
    assert_eq!(one.files[1].content_type, "text/x-raw");
    // A raw assignment change needs no stamp: the assignment fields come from the query.
    raw.execute(
        "UPDATE skill_assignments SET priority = 9 WHERE skill_id = ?1",
        [&quiet_id],
    )
    .unwrap();
    let seen = resolve(&reader, &t).await;
    assert_eq!(seen.iter().find(|s| s.slug == "quiet").unwrap().priority, 9);
    // Disabled beside the store: gone at once.
    raw.execute("UPDATE skills SET enabled = 0 WHERE id = ?1", [&one_id])
        .unwrap();
    let seen = resolve(&reader, &t).await;
    assert_eq!(seen.len(), 1, "{seen:?}");
    assert_eq!(seen, reference(&reader, &t).await);
}

/// With no budget nothing is kept, and the answers are the full read's, after every write
/// (the shared contracts, on a store that keeps nothing).
#[tokio::test]
async fn no_budget_reads_every_row_and_answers_the_same() {
    let off = SqliteStore::open_in_memory_with(SqliteOptions::default().projection_budget(0))
        .await
        .unwrap();
    conformance::skill_batches::resolvable_equals_the_full_read(&off).await;
    conformance::skill_batches::resolvable_follows_every_write(&off).await;
}

/// The control: with the restamping trigger dropped, a raw write is *not* seen by a warm
/// reader, so the answers above did come from the decoded skills (and the stamps are what
/// keeps them current), not from reading every row again.
#[tokio::test]
async fn without_restamping_a_warm_reader_answers_from_what_it_decoded() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("store.sqlite3");
    let reader = SqliteStore::open(&path).await.unwrap();
    let t = TenantId::new("acme");
    let skill = reader
        .create_skill(&t, NewSkill::new("One", "one", "# One\n"))
        .await
        .unwrap();
    reader
        .create_assignment(&t, NewAssignment::global(&skill.id))
        .await
        .unwrap();
    assert_eq!(resolve(&reader, &t).await[0].content, "# One\n");
    let raw = Connection::open(&path).unwrap();
    raw.execute_batch("DROP TRIGGER skills_stamp_update")
        .unwrap();
    raw.execute(
        "UPDATE skills SET content = 'raw' WHERE id = ?1",
        [&skill.id],
    )
    .unwrap();
    assert_eq!(resolve(&reader, &t).await[0].content, "# One\n");
    assert_eq!(reference(&reader, &t).await[0].content, "raw");
}
