//! The PostgreSQL store beside the SQLite and in-memory stores, in one run, on the
//! workloads of the root package's `benches/sqlite.rs`:
//!
//! * `insert/skill_with_2_files`: `create_skill` of a skill with 2 supporting files into a
//!   store that grows as the bench runs; PostgreSQL with `synchronous_commit` on (the
//!   default), SQLite with `synchronous = FULL` and `NORMAL`, and in memory.
//! * `audit/append`: `append` of a chained record (compare-and-append on the head).
//! * `list/filtered_10k`: `list_skills` with a category, a tag and `enabled` over 10,000
//!   skills (250 match); `list/all_10k` with no filter.
//! * `resolve/10k_skills_100k_assignments`: `Resolver::resolve_for_agent` for agent-0 in
//!   the data of `benches/catalog.rs` (10,000 skills with 2 files each, 100,050
//!   assignments; agent-0 resolves 228 skills with their file listings).
//!   `postgres_uncached` and `sqlite_uncached`: the same stores opened again with no
//!   projection budget, so every skill is decoded on every call.
//!
//! Needs `SKILLS_PG_URL` (`source .ci/postgres.sh`); each run uses fresh schemas. The
//! 10,000-skill stores are filled once (PostgreSQL with `synchronous_commit` off, SQLite
//! with `NORMAL`); reads do not depend on it.

#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use std::cell::RefCell;
use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{Criterion, Throughput};
use futures::executor::block_on;
use skills_catalog::Resolver;
use skills_store_postgres::{PgOptions, PostgresStore};
use skills_store_sqlite::{SqliteOptions, SqliteStore, Synchronous};
use skills_store_traits::audit::{AuditRecord, AuditStore};
use skills_store_traits::in_memory::{InMemoryAuditStore, InMemorySkillStore};
use skills_store_traits::{
    NewAssignment, NewSkill, SKILL_CATEGORIES, SkillFilter, SkillStore, TenantId,
};

fn new_skill(i: usize) -> NewSkill {
    let slug = format!("skill-{i:05}");
    let mut new = NewSkill::new(
        format!("Skill {i}"),
        slug.clone(),
        format!("---\nname: {slug}\ndescription: Benchmark skill number {i}.\n---\n# Skill {i}\n\nSteps for task {i}.\n"),
    )
    .with_file("references/guide.md", format!("# Guide {i}\n\n{}", "Reference text. ".repeat(20)))
    .with_file("scripts/run.sh", format!("#!/bin/sh\necho {i}\n"));
    new.description = Some(format!("Benchmark skill number {i}."));
    new.category = Some(SKILL_CATEGORIES[i % 8].to_owned());
    new.tags = vec![format!("group-{}", i % 10)];
    new
}

/// The data of `benches/catalog.rs` (as `benches/sqlite.rs` fills it).
async fn fill(store: &dyn SkillStore, tenant: &TenantId) {
    for i in 0..10_000 {
        let skill = store.create_skill(tenant, new_skill(i)).await.unwrap();
        if i < 50 {
            store
                .create_assignment(tenant, NewAssignment::global(&skill.id))
                .await
                .unwrap();
        }
        let team = format!("team-{}", i % 100);
        store
            .create_assignment(tenant, NewAssignment::team(&skill.id, &team))
            .await
            .unwrap();
        for k in 0..9 {
            let agent = format!("agent-{}", (i * 7 + k * 111) % 1000);
            store
                .create_assignment(
                    tenant,
                    NewAssignment::agent(&skill.id, &agent).priority(k as i64),
                )
                .await
                .unwrap();
        }
    }
}

fn filtered() -> SkillFilter {
    SkillFilter {
        category: Some("ops".into()),
        tags: vec!["group-2".into()],
        enabled: Some(true),
        ..SkillFilter::default()
    }
}

fn postgres(url: &str, synchronous_commit: bool) -> PostgresStore {
    let schema = format!("bench_{}", uuid::Uuid::new_v4().simple());
    let options = PgOptions::new(url)
        .schema(schema)
        .synchronous_commit(synchronous_commit);
    block_on(PostgresStore::open(options)).unwrap()
}

/// Another store on `store`'s schema that keeps no decoded skills between resolutions.
fn postgres_uncached(url: &str, store: &PostgresStore) -> PostgresStore {
    let schema = store.schema_name().unwrap().to_owned();
    let options = PgOptions::new(url).schema(schema).projection_budget(0);
    block_on(PostgresStore::open(options)).unwrap()
}

fn sqlite(dir: &tempfile::TempDir, name: &str, synchronous: Synchronous) -> SqliteStore {
    sqlite_with(dir, name, SqliteOptions::default().synchronous(synchronous))
}

fn sqlite_with(dir: &tempfile::TempDir, name: &str, options: SqliteOptions) -> SqliteStore {
    block_on(SqliteStore::open_with(dir.path().join(name), options)).unwrap()
}

fn main() {
    let Ok(url) = std::env::var("SKILLS_PG_URL") else {
        eprintln!("SKILLS_PG_URL is not set: source .ci/postgres.sh first");
        return;
    };
    let mut c = Criterion::default()
        .measurement_time(Duration::from_secs(8))
        .configure_from_args();
    let dir = tempfile::tempdir().unwrap();
    let tenant = TenantId::new("bench");

    let mut group = c.benchmark_group("insert");
    group.throughput(Throughput::Elements(1));
    group.sample_size(30);
    let pg = postgres(&url, true);
    let full = sqlite(&dir, "insert-full.sqlite3", Synchronous::Full);
    let normal = sqlite(&dir, "insert-normal.sqlite3", Synchronous::Normal);
    let memory = InMemorySkillStore::new();
    let stores: [(&str, &dyn SkillStore); 4] = [
        ("skill_with_2_files/postgres", &pg),
        ("skill_with_2_files/sqlite_full", &full),
        ("skill_with_2_files/sqlite_normal", &normal),
        ("skill_with_2_files/in_memory", &memory),
    ];
    for (name, store) in stores {
        let next = RefCell::new(0);
        group.bench_function(name, |b| {
            b.iter(|| {
                let i = next.replace_with(|i| *i + 1);
                black_box(block_on(store.create_skill(&tenant, new_skill(i))).unwrap())
            })
        });
    }
    group.finish();
    drop((pg, full, normal, memory));

    let mut group = c.benchmark_group("audit");
    group.throughput(Throughput::Elements(1));
    group.sample_size(30);
    let pg = postgres(&url, true);
    let full = sqlite(&dir, "audit-full.sqlite3", Synchronous::Full);
    let normal = sqlite(&dir, "audit-normal.sqlite3", Synchronous::Normal);
    let memory = InMemoryAuditStore::new();
    let stores: [(&str, &dyn AuditStore); 4] = [
        ("append/postgres", &pg),
        ("append/sqlite_full", &full),
        ("append/sqlite_normal", &normal),
        ("append/in_memory", &memory),
    ];
    for (name, store) in stores {
        let head: RefCell<Option<String>> = RefCell::new(None);
        group.bench_function(name, |b| {
            b.iter(|| {
                let mut record =
                    AuditRecord::new("alice", "pdf", "skills/pdf", "verified", "in", true);
                let previous = head.borrow().clone();
                record.previous_hash = previous.clone().unwrap_or_else(|| "genesis".into());
                record.entry_hash = record.id.clone();
                let entry =
                    block_on(store.append(&tenant, "bench", record, previous.as_deref())).unwrap();
                *head.borrow_mut() = Some(entry.record.entry_hash);
            })
        });
    }
    group.finish();
    drop((pg, full, normal, memory));

    let started = Instant::now();
    let pg = postgres(&url, false);
    block_on(fill(&pg, &tenant));
    eprintln!("filled the PostgreSQL store in {:.1?}", started.elapsed());
    let started = Instant::now();
    let lite = sqlite(&dir, "10k.sqlite3", Synchronous::Normal);
    block_on(fill(&lite, &tenant));
    eprintln!("filled the SQLite store in {:.1?}", started.elapsed());
    let memory = InMemorySkillStore::new();
    block_on(fill(&memory, &tenant));
    let stores: [(&str, &dyn SkillStore); 3] =
        [("postgres", &pg), ("sqlite", &lite), ("in_memory", &memory)];
    // The same data through stores that decode every skill on every resolution (what a
    // resolution costs when every skill changed since the last one; a miss costs this
    // plus the stamp query).
    let pg_uncached = postgres_uncached(&url, &pg);
    let lite_uncached = sqlite_with(
        &dir,
        "10k.sqlite3",
        SqliteOptions::default()
            .synchronous(Synchronous::Normal)
            .projection_budget(0),
    );

    let mut group = c.benchmark_group("list");
    group.throughput(Throughput::Elements(1));
    for (name, store) in stores {
        let matched = block_on(store.list_skills(&tenant, &filtered()))
            .unwrap()
            .len();
        eprintln!("list: the filter matches {matched} skills ({name})");
        group.bench_function(format!("filtered_10k/{name}"), |b| {
            b.iter(|| black_box(block_on(store.list_skills(&tenant, &filtered())).unwrap()))
        });
        group.bench_function(format!("all_10k/{name}"), |b| {
            b.iter(|| {
                black_box(
                    block_on(store.list_skills(&tenant, &SkillFilter::default()))
                        .unwrap()
                        .len(),
                )
            })
        });
    }
    group.finish();

    let resolver = Resolver::new();
    let mut group = c.benchmark_group("resolve");
    group.throughput(Throughput::Elements(1));
    let uncached: [(&str, &dyn SkillStore); 2] = [
        ("postgres_uncached", &pg_uncached),
        ("sqlite_uncached", &lite_uncached),
    ];
    for (name, store) in stores.into_iter().chain(uncached) {
        let reached =
            block_on(resolver.resolve_for_agent(store, &tenant, "agent-0", Some("team-0"), &[]))
                .unwrap()
                .skills
                .len();
        eprintln!("resolve: agent-0 resolves {reached} skills ({name})");
        group.bench_function(format!("10k_skills_100k_assignments/{name}"), |b| {
            b.iter(|| {
                let resolution = block_on(resolver.resolve_for_agent(
                    store,
                    &tenant,
                    black_box("agent-0"),
                    Some("team-0"),
                    &[],
                ))
                .unwrap();
                black_box(resolution.skills.len())
            })
        });
    }
    group.finish();
    c.final_summary();
}
