//! Benchmarks of the skill catalog on the in-memory store.
//!
//! * `resolve/10k_skills_100k_assignments`: [`Resolver::resolve_for_agent`] for one agent in
//!   a store of 10,000 skills (each with 2 supporting files) and 100,050 assignments: 50
//!   global, one team assignment per skill over 100 teams, nine agent assignments per skill
//!   over 1,000 agents. The agent is reached by 50 global, 100 team and about 90 agent
//!   assignments. Throughput is resolves per second.
//! * `sync_1000/empty` and `sync_1000/up_to_date`: [`sync_agent`] of 1,000 assigned skills
//!   (SKILL.md plus 2 files each, 3,000 files) into a local skills directory on disk that is
//!   empty (a fresh temporary directory per iteration) or already holds every skill (every
//!   file hashed and compared, nothing written). Throughput is skills per second. Set
//!   `CATALOG_BENCH_DIR` to put the sandboxes on another filesystem (for example a tmpfs)
//!   to separate our cost from the disk's.
//! * `prompt_10k/*`: rendering the catalog of 10,000 resolved skills (descriptions of about
//!   60 characters, priorities spread): the Agent Skills XML in full, the same within 8,000
//!   estimated tokens, and the Available Skills section (50-entry cap, auto-inject for one
//!   in ten) within 20,000 characters. Throughput is renders per second.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::hint::black_box;
use std::time::Duration;

use criterion::{BatchSize, Criterion, Throughput};
use futures::executor::block_on;
use skills::catalog::prompt::{
    Budget, CatalogOptions, EstimatedTokens, agent_skills_xml, agent_skills_xml_within,
    available_skills_section_within,
};
use skills::catalog::{LocalSandboxFs, Resolver, sync_agent};
use skills::store::in_memory::InMemorySkillStore;
use skills::store::{NewAssignment, NewSkill, SkillStore, TenantId};

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
    new
}

fn resolve_store() -> (InMemorySkillStore, TenantId) {
    let store = InMemorySkillStore::new();
    let tenant = TenantId::new("bench");
    block_on(async {
        for i in 0..10_000 {
            let skill = store.create_skill(&tenant, new_skill(i)).await.unwrap();
            if i < 50 {
                store
                    .create_assignment(&tenant, NewAssignment::global(&skill.id))
                    .await
                    .unwrap();
            }
            let team = format!("team-{}", i % 100);
            store
                .create_assignment(&tenant, NewAssignment::team(&skill.id, &team))
                .await
                .unwrap();
            for k in 0..9 {
                let agent = format!("agent-{}", (i * 7 + k * 111) % 1000);
                store
                    .create_assignment(
                        &tenant,
                        NewAssignment::agent(&skill.id, &agent).priority(k as i64),
                    )
                    .await
                    .unwrap();
            }
        }
    });
    (store, tenant)
}

fn sync_store() -> (InMemorySkillStore, TenantId) {
    let store = InMemorySkillStore::new();
    let tenant = TenantId::new("bench");
    block_on(async {
        for i in 0..1_000 {
            let skill = store.create_skill(&tenant, new_skill(i)).await.unwrap();
            store
                .create_assignment(&tenant, NewAssignment::global(&skill.id))
                .await
                .unwrap();
        }
    });
    (store, tenant)
}

fn sandbox_home() -> tempfile::TempDir {
    match std::env::var_os("CATALOG_BENCH_DIR") {
        Some(dir) => tempfile::tempdir_in(dir).unwrap(),
        None => tempfile::tempdir().unwrap(),
    }
}

fn main() {
    let mut c = Criterion::default()
        .measurement_time(Duration::from_secs(8))
        .configure_from_args();

    let (store, tenant) = resolve_store();
    let resolver = Resolver::new();
    let reached =
        block_on(resolver.resolve_for_agent(&store, &tenant, "agent-0", Some("team-0"), &[]))
            .unwrap()
            .skills
            .len();
    eprintln!("resolve: agent-0 resolves {reached} skills");
    let mut group = c.benchmark_group("resolve");
    group.throughput(Throughput::Elements(1));
    group.bench_function("10k_skills_100k_assignments", |b| {
        b.iter(|| {
            let resolution = block_on(resolver.resolve_for_agent(
                &store,
                &tenant,
                black_box("agent-0"),
                Some("team-0"),
                &[],
            ))
            .unwrap();
            black_box(resolution.skills.len())
        })
    });
    group.finish();
    drop(store);

    let (store, tenant) = sync_store();
    let mut group = c.benchmark_group("sync_1000");
    group.throughput(Throughput::Elements(1_000));
    group.sample_size(10);
    group.bench_function("empty", |b| {
        b.iter_batched(
            sandbox_home,
            |home| {
                let sandbox = LocalSandboxFs::new(home.path().join(".skills"));
                let report =
                    block_on(sync_agent(&store, &tenant, "agent", None, &sandbox)).unwrap();
                assert_eq!(report.synced.len(), 1_000);
                home
            },
            BatchSize::PerIteration,
        )
    });
    let home = sandbox_home();
    let sandbox = LocalSandboxFs::new(home.path().join(".skills"));
    block_on(sync_agent(&store, &tenant, "agent", None, &sandbox)).unwrap();
    group.bench_function("up_to_date", |b| {
        b.iter(|| {
            let report = block_on(sync_agent(&store, &tenant, "agent", None, &sandbox)).unwrap();
            assert_eq!(report.unchanged.len(), 1_000);
            black_box(report)
        })
    });
    group.finish();
    drop(store);

    let (store, tenant) = {
        let store = InMemorySkillStore::new();
        let tenant = TenantId::new("bench");
        block_on(async {
            for i in 0..10_000 {
                let mut new = NewSkill::new(format!("Skill {i}"), format!("skill-{i:05}"), "# s\n");
                new.description = Some(format!(
                    "Handles task family {i} end to end; use it when the user asks."
                ));
                let skill = store.create_skill(&tenant, new).await.unwrap();
                let assignment = NewAssignment::global(&skill.id)
                    .priority((i % 97) as i64)
                    .auto_inject(i % 10 == 0);
                store.create_assignment(&tenant, assignment).await.unwrap();
            }
        });
        (store, tenant)
    };
    let resolved = block_on(resolver.resolve_for_agent(&store, &tenant, "agent", None, &[]))
        .unwrap()
        .skills;
    assert_eq!(resolved.len(), 10_000);
    let options = CatalogOptions::default();
    let mut group = c.benchmark_group("prompt_10k");
    group.throughput(Throughput::Elements(1));
    group.bench_function("agent_skills_xml_full", |b| {
        b.iter(|| black_box(agent_skills_xml(&resolved)).len())
    });
    group.bench_function("agent_skills_xml_8k_tokens", |b| {
        b.iter(|| {
            let rendered =
                agent_skills_xml_within(&resolved, Budget::Tokens(8_000, &EstimatedTokens));
            black_box(rendered.listed.len())
        })
    });
    group.bench_function("available_skills_20k_chars", |b| {
        b.iter(|| {
            let rendered =
                available_skills_section_within(&resolved, &options, Budget::Chars(20_000));
            black_box(rendered.text.len())
        })
    });
    group.finish();
    c.final_summary();
}
