//! Benchmarks of the embedded SQLite store, beside the in-memory store for comparison.
//!
//! * `insert/skill_with_2_files`: [`SkillStore::create_skill`] of a skill with 2 supporting
//!   files into a store that grows as the bench runs; SQLite with `synchronous = FULL` (the
//!   default: every commit synced to disk) and `NORMAL`, and the in-memory store.
//! * `list/filtered_10k`: [`SkillStore::list_skills`] with a category, a tag and `enabled`
//!   over 10,000 skills (250 match), and `list/all_10k` with no filter (every skill, content
//!   included).
//! * `resolve/10k_skills_100k_assignments`: [`Resolver::resolve_for_agent`] for one agent in
//!   the data of `benches/catalog.rs` (10,000 skills with 2 files each, 100,050
//!   assignments; the agent resolves 228 skills with their file listings): two store calls
//!   (assignments, then every file listing in one batch). `sqlite_one_call_per_skill` runs
//!   the same resolution through the trait's default batch (one `list_skill_files` call per
//!   skill, 229 calls), which is how resolving worked before the batch read.
//! * `audit/append`: [`AuditStore::append`] of a chained record; appends per second.
//!
//! The 10,000-skill store is a file in a temporary directory (set `SQLITE_BENCH_DIR` to put
//! it elsewhere, for example on a tmpfs), filled once with `synchronous = NORMAL`; reads do
//! not depend on the synchronous mode.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::cell::RefCell;
use std::hint::black_box;
use std::time::Duration;

use criterion::{Criterion, Throughput};
use futures::executor::block_on;
use skills::catalog::Resolver;
use skills::sqlite::{SqliteOptions, SqliteStore, Synchronous};
use skills::store::audit::{AuditRecord, AuditStore};
use skills::store::conformance::counting::CountingSkillStore;
use skills::store::in_memory::{InMemoryAuditStore, InMemorySkillStore};
use skills::store::{NewAssignment, NewSkill, SkillFilter, SkillStore, TenantId};

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
    // For the filtered listing: 8 categories and 10 tag groups (all enabled, so resolving
    // sees the data of benches/catalog.rs).
    new.category = Some(skills::store::SKILL_CATEGORIES[i % 8].to_owned());
    new.tags = vec![format!("group-{}", i % 10)];
    new
}

/// The data of `benches/catalog.rs`: 10,000 skills, 50 global assignments, one team
/// assignment per skill over 100 teams, nine agent assignments per skill over 1,000 agents.
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

fn bench_dir() -> tempfile::TempDir {
    match std::env::var_os("SQLITE_BENCH_DIR") {
        Some(dir) => tempfile::tempdir_in(dir).unwrap(),
        None => tempfile::tempdir().unwrap(),
    }
}

fn open(dir: &tempfile::TempDir, name: &str, synchronous: Synchronous) -> SqliteStore {
    let options = SqliteOptions::default().synchronous(synchronous);
    block_on(SqliteStore::open_with(dir.path().join(name), options)).unwrap()
}

fn filtered() -> SkillFilter {
    SkillFilter {
        category: Some("ops".into()),
        tags: vec!["group-2".into()],
        enabled: Some(true),
        ..SkillFilter::default()
    }
}

fn main() {
    let mut c = Criterion::default()
        .measurement_time(Duration::from_secs(8))
        .configure_from_args();
    let dir = bench_dir();
    let tenant = TenantId::new("bench");

    // Inserts: each iteration stores the next skill.
    let mut group = c.benchmark_group("insert");
    group.throughput(Throughput::Elements(1));
    group.sample_size(30);
    let full = open(&dir, "insert-full.sqlite3", Synchronous::Full);
    let normal = open(&dir, "insert-normal.sqlite3", Synchronous::Normal);
    let memory = InMemorySkillStore::new();
    let stores: [(&str, &dyn SkillStore); 3] = [
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
    drop((full, normal, memory));

    // The 10,000-skill stores, SQLite and in memory, with the same data.
    let started = std::time::Instant::now();
    let sqlite = open(&dir, "10k.sqlite3", Synchronous::Normal);
    block_on(fill(&sqlite, &tenant));
    eprintln!("filled the SQLite store in {:.1?}", started.elapsed());
    let memory = InMemorySkillStore::new();
    block_on(fill(&memory, &tenant));
    let stores: [(&str, &dyn SkillStore); 2] = [("sqlite", &sqlite), ("in_memory", &memory)];

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
                let all = block_on(store.list_skills(&tenant, &SkillFilter::default())).unwrap();
                black_box(all.len())
            })
        });
    }
    group.finish();

    let resolver = Resolver::new();
    let mut group = c.benchmark_group("resolve");
    group.throughput(Throughput::Elements(1));
    // The resolver as it was before the batch read: one `list_skill_files` per skill (the
    // trait's default, which a backend without the override still runs).
    let per_skill = CountingSkillStore::new(sqlite.clone()).one_by_one();
    let stores_and_per_skill: [(&str, &dyn SkillStore); 3] = [
        ("sqlite", &sqlite),
        ("in_memory", &memory),
        ("sqlite_one_call_per_skill", &per_skill),
    ];
    for (name, store) in stores_and_per_skill {
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
    drop((sqlite, memory, per_skill));

    // Audit appends: each iteration appends the next record of one chain.
    let mut group = c.benchmark_group("audit");
    group.throughput(Throughput::Elements(1));
    group.sample_size(30);
    let full = open(&dir, "audit-full.sqlite3", Synchronous::Full);
    let normal = open(&dir, "audit-normal.sqlite3", Synchronous::Normal);
    let memory = InMemoryAuditStore::new();
    let stores: [(&str, &dyn AuditStore); 3] = [
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
    c.final_summary();
}
