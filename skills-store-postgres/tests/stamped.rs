//! The decoded skills a store keeps between resolutions (`StampedProjections`) are served
//! only while their rows are unchanged, whoever changes them: another store on the same
//! schema (another worker process, in a deployment), or SQL beside the store. Each write
//! below would be missed by a cache that trusted itself instead of the rows' stamps.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use skills_store_postgres::PostgresStore;
use skills_store_traits::{
    NewAssignment, NewSkill, ResolvableSkill, SkillStore, TenantId, conformance, resolvable_from,
};

async fn resolve(store: &PostgresStore, t: &TenantId) -> Vec<ResolvableSkill> {
    store.resolvable_skills(t, "agent-1", None).await.unwrap()
}

/// What the full read gives (the reference every backend's projection must equal).
async fn reference(store: &PostgresStore, t: &TenantId) -> Vec<ResolvableSkill> {
    let full = store
        .assignments_for_agent_with_files(t, "agent-1", None)
        .await
        .unwrap();
    resolvable_from(&full)
}

fn find<'a>(skills: &'a [ResolvableSkill], slug: &str) -> &'a ResolvableSkill {
    skills.iter().find(|s| s.slug == slug).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn another_writer_and_sql_beside_the_store_are_seen_at_once() {
    let Some(url) = common::url() else { return };
    let schema = common::fresh_schema();
    let reader = common::open(&url, &schema, 2).await;
    let writer = common::open(&url, &schema, 2).await;
    let t = TenantId::new("acme");
    // Another store's writes (the shared contract), then SQL beside the store.
    let (one_id, _) =
        conformance::skill_batches::resolvable_follows_another_store(&reader, &writer, &t).await;

    // SQL beside the store, in the tenant (the policies are forced).
    let raw = common::raw(&url, &schema).await;
    let beside = |sql: &'static str| {
        let raw = &raw;
        let id = one_id.clone();
        async move {
            raw.batch_execute("BEGIN; SELECT set_config('skills.tenant', 'acme', true)")
                .await
                .unwrap();
            raw.execute(sql, &[&id]).await.unwrap();
            raw.batch_execute("COMMIT").await.unwrap();
        }
    };
    beside("UPDATE skills SET doc = jsonb_set(doc, '{content}', '\"raw\"') WHERE id = $1").await;
    assert_eq!(find(&resolve(&reader, &t).await, "one").content, "raw");
    // An update that writes a stamp of its own is restamped all the same.
    beside(
        "UPDATE skills SET doc = jsonb_set(doc, '{trust_level}', '\"user\"'), \
         stamp = stamp + 1 WHERE id = $1",
    )
    .await;
    assert_eq!(
        find(&resolve(&reader, &t).await, "one")
            .trust_level
            .as_deref(),
        Some("user")
    );
    // A raw change of a file's type reaches the listing (a trigger) and so the stamp.
    beside(
        "UPDATE skill_files SET doc = jsonb_set(doc, '{content_type}', '\"text/x-raw\"') \
         WHERE skill_id = $1 AND relative_path = 'b.md'",
    )
    .await;
    let seen = resolve(&reader, &t).await;
    assert_eq!(seen, reference(&reader, &t).await);
    assert_eq!(find(&seen, "one").files[1].content_type, "text/x-raw");
    // Disabled beside the store: gone at once.
    beside("UPDATE skills SET enabled = false, doc = jsonb_set(doc, '{enabled}', 'false') WHERE id = $1")
        .await;
    let seen = resolve(&reader, &t).await;
    assert_eq!(seen.len(), 1, "{seen:?}");
    assert_eq!(seen, reference(&reader, &t).await);
}

/// With no budget nothing is kept, and the answers are the full read's, after every write
/// (the shared contracts, on a store that keeps nothing).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_budget_reads_every_row_and_answers_the_same() {
    let Some(url) = common::url() else { return };
    let off = PostgresStore::open(
        skills_store_postgres::PgOptions::new(&url)
            .schema(common::fresh_schema())
            .projection_budget(0),
    )
    .await
    .unwrap();
    conformance::skill_batches::resolvable_equals_the_full_read(&off).await;
    conformance::skill_batches::resolvable_follows_every_write(&off).await;
}

/// The control: with the restamping and catalog-version triggers switched off, a raw write
/// is *not* seen by a warm reader, so the answers above did come from the decoded skills
/// (and the stamps and versions are what keep them current).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_the_triggers_a_warm_reader_answers_from_what_it_decoded() {
    let Some(url) = common::url() else { return };
    let schema = common::fresh_schema();
    let reader = common::open(&url, &schema, 2).await;
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
    assert_eq!(resolve(&reader, &t).await[0].content, "# One\n");
    let raw = common::raw(&url, &schema).await;
    raw.batch_execute(
        "ALTER TABLE skills DISABLE TRIGGER skills_restamp;
         ALTER TABLE skills DISABLE TRIGGER skills_catalog_changed;
         BEGIN; SELECT set_config('skills.tenant', 'acme', true);",
    )
    .await
    .unwrap();
    raw.execute(
        "UPDATE skills SET doc = jsonb_set(doc, '{content}', '\"raw\"') WHERE id = $1",
        &[&skill.id],
    )
    .await
    .unwrap();
    raw.batch_execute("COMMIT").await.unwrap();
    assert_eq!(resolve(&reader, &t).await[0].content, "# One\n");
    assert_eq!(reference(&reader, &t).await[0].content, "raw");
}
