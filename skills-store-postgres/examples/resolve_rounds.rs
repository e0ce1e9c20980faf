//! Resolution timings on stores that outlive the run, for comparing two builds (before and
//! after a change) on the same stored data, round after round, and for attaching `perf`
//! without waiting for a fill.
//!
//! ```text
//! source .ci/postgres.sh
//! cargo run --profile bench -p skills-store-postgres --example resolve_rounds -- all resolve 200
//! ```
//!
//! Arguments: the stores (`all`, `mem`, `sqlite`, `pg`), what to time (`all`, `resolve`,
//! `changed`: `resolve` after one of the agent's skills was updated (untimed), `assign`:
//! `assignments_for_agent`, `files`: `list_files_for_skills` of the agent's
//! skills, `full`: `assignments_for_agent_with_files`, the whole records the resolver read
//! before the projection, `proj`: `resolvable_skills`, the projection it reads now) and the
//! number of timed calls (each line prints their median and mean). The data is that
//! of `benches/postgres.rs` (10,000 skills with 2 files each, 100,050 assignments, agent-0
//! in team-0 resolves 228 skills); the SQLite file (`/tmp/rbprof/10k.sqlite3`) and the
//! PostgreSQL schema (`rbprof` in `SKILLS_PG_URL`'s database) are filled on first use and
//! reused afterwards (delete them to start again; a fill that was interrupted is not
//! detected); `RESOLVE_ROUNDS_SQLITE` and `RESOLVE_ROUNDS_SCHEMA` name others (a copy for
//! the build of a later schema version, which migrates what it opens). The in-memory store
//! is filled on every run.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use std::hint::black_box;
use std::time::Instant;

use futures::executor::block_on;
use skills_catalog::Resolver;
use skills_store_postgres::{PgOptions, PostgresStore};
use skills_store_sqlite::{SqliteOptions, SqliteStore, Synchronous};
use skills_store_traits::in_memory::InMemorySkillStore;
use skills_store_traits::{
    NewAssignment, NewSkill, SKILL_CATEGORIES, SkillStore, SkillUpdate, TenantId,
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

async fn fill(store: &dyn SkillStore, tenant: &TenantId) {
    if store
        .find_skill_by_slug(tenant, "skill-09999")
        .await
        .unwrap()
        .is_some()
    {
        return;
    }
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

/// The median and the mean of the samples: the median says what a call usually costs, the
/// mean (what criterion reports) also carries the calls that waited for a core.
struct Timing {
    median: f64,
    mean: f64,
}

impl Timing {
    /// The median and mean of `samples` (µs).
    fn of(mut samples: Vec<f64>) -> Timing {
        let mean = samples.iter().sum::<f64>() / samples.len() as f64;
        samples.sort_by(|a, b| a.partial_cmp(b).unwrap());
        Timing {
            median: samples[samples.len() / 2],
            mean,
        }
    }
}

impl std::fmt::Display for Timing {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:9.1} µs (mean {:9.1} µs)", self.median, self.mean)
    }
}

fn time(n: usize, mut f: impl FnMut()) -> Timing {
    for _ in 0..n / 10 + 1 {
        f();
    }
    let mut samples = Vec::with_capacity(n);
    for _ in 0..n {
        let start = Instant::now();
        f();
        samples.push(start.elapsed().as_secs_f64() * 1e6);
    }
    Timing::of(samples)
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let which = args.get(1).cloned().unwrap_or_else(|| "all".into());
    let mode = args.get(2).cloned().unwrap_or_else(|| "all".into());
    let n: usize = args.get(3).and_then(|s| s.parse().ok()).unwrap_or(300);
    let tenant = TenantId::new("bench");
    let mut stores: Vec<(&str, Box<dyn SkillStore>)> = Vec::new();
    if which == "all" || which == "mem" {
        let memory = InMemorySkillStore::new();
        block_on(fill(&memory, &tenant));
        stores.push(("in_memory", Box::new(memory)));
    }
    if which == "all" || which == "sqlite" {
        std::fs::create_dir_all("/tmp/rbprof").unwrap();
        let options = SqliteOptions::default().synchronous(Synchronous::Normal);
        let path = std::env::var("RESOLVE_ROUNDS_SQLITE")
            .unwrap_or_else(|_| "/tmp/rbprof/10k.sqlite3".to_owned());
        let lite = block_on(SqliteStore::open_with(path, options)).unwrap();
        let started = Instant::now();
        block_on(fill(&lite, &tenant));
        eprintln!("sqlite ready in {:.1?}", started.elapsed());
        stores.push(("sqlite", Box::new(lite)));
    }
    if which == "all" || which == "pg" {
        let url = std::env::var("SKILLS_PG_URL").unwrap();
        let options = PgOptions::new(url)
            .schema(std::env::var("RESOLVE_ROUNDS_SCHEMA").unwrap_or_else(|_| "rbprof".to_owned()))
            .synchronous_commit(false);
        let pg = block_on(PostgresStore::open(options)).unwrap();
        let started = Instant::now();
        block_on(fill(&pg, &tenant));
        eprintln!("postgres ready in {:.1?}", started.elapsed());
        stores.push(("postgres", Box::new(pg)));
    }
    let resolver = Resolver::new();
    for (name, store) in &stores {
        let store: &dyn SkillStore = store.as_ref();
        let assigned =
            block_on(store.assignments_for_agent(&tenant, "agent-0", Some("team-0"))).unwrap();
        let mut seen = std::collections::BTreeSet::new();
        let ids: Vec<String> = assigned
            .iter()
            .map(|a| a.skill.id.clone())
            .filter(|i| seen.insert(i.clone()))
            .collect();
        let resolve = || {
            let r = block_on(resolver.resolve_for_agent(
                store,
                &tenant,
                black_box("agent-0"),
                Some("team-0"),
                &[],
            ))
            .unwrap();
            black_box(r.skills.len());
        };
        if mode == "all" || mode == "resolve" {
            let t = time(n, resolve);
            println!("{name:10} resolve            {t}");
        }
        if mode == "all" || mode == "changed" {
            // One reached skill updated (untimed) before each timed resolution: the store
            // reads that skill again by id (the others are reused by stamp).
            let mut samples = Vec::with_capacity(n);
            for i in 0..n {
                let update = SkillUpdate {
                    trust_level: Some(Some(if i % 2 == 0 { "core" } else { "user" }.to_owned())),
                    ..SkillUpdate::default()
                };
                block_on(store.update_skill(&tenant, &ids[i % ids.len()], update)).unwrap();
                let start = Instant::now();
                resolve();
                samples.push(start.elapsed().as_secs_f64() * 1e6);
            }
            let t = Timing::of(samples);
            println!("{name:10} resolve, 1 changed {t}");
        }
        if mode == "all" || mode == "assign" {
            let t = time(n, || {
                black_box(
                    block_on(store.assignments_for_agent(&tenant, "agent-0", Some("team-0")))
                        .unwrap(),
                );
            });
            println!("{name:10} assignments ({:3})  {t}", assigned.len());
        }
        if mode == "all" || mode == "full" {
            let t = time(n, || {
                black_box(
                    block_on(store.assignments_for_agent_with_files(
                        &tenant,
                        "agent-0",
                        Some("team-0"),
                    ))
                    .unwrap(),
                );
            });
            println!("{name:10} full read          {t}");
        }
        if mode == "all" || mode == "proj" {
            let t = time(n, || {
                black_box(
                    block_on(store.resolvable_skills(&tenant, "agent-0", Some("team-0"))).unwrap(),
                );
            });
            println!("{name:10} projection         {t}");
        }
        if mode == "all" || mode == "files" {
            let t = time(n, || {
                black_box(block_on(store.list_files_for_skills(&tenant, &ids)).unwrap());
            });
            println!("{name:10} files ({:3} skills)  {t}", ids.len());
        }
    }
}
