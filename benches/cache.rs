//! The caches of issue 18 (seed 003), measured without criterion so the run is short:
//!
//! * the hit rate of repeated permission checks (`Permissions::resolve`, 20 principals × 10
//!   skills, each pair asked 50 times): seed 003's verification asks for more than 90 %;
//! * what a metadata hit costs against a miss with SQLite behind `CachedSkillStore`
//!   (`find_skill_by_id`, 1,000 skills, `synchronous = NORMAL`, a file on disk): the median
//!   of 7 rounds of 2,000 lookups each.
//!
//! `cargo bench --bench cache`

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;
use std::time::Instant;

use futures::executor::block_on;
use skills::security::permissions::{Permissions, Principal, SkillTarget};
use skills::sqlite::{SqliteOptions, SqliteStore, Synchronous};
use skills::store::cache::CachedSkillStore;
use skills::store::{NewSkill, SkillStore, SystemClock, TenantId};

fn median(mut samples: Vec<f64>) -> f64 {
    samples.sort_by(f64::total_cmp);
    samples[samples.len() / 2]
}

fn main() {
    let permissions = Permissions::new(Arc::new(SystemClock));
    for _ in 0..50 {
        for p in 0..20 {
            let who = Principal::new("acme", format!("user-{p}")).agent(format!("agent-{p}"));
            for s in 0..10 {
                permissions.resolve(&who, &SkillTarget::new(format!("skill-{s}")));
            }
        }
    }
    let (hits, misses) = permissions.cache_stats();
    println!(
        "permission checks: {hits} hits, {misses} misses, hit rate {:.1} %",
        100.0 * hits as f64 / (hits + misses) as f64
    );

    let dir = tempfile::tempdir().unwrap();
    let options = SqliteOptions::default().synchronous(Synchronous::Normal);
    let sqlite = block_on(SqliteStore::open_with(
        dir.path().join("bench.sqlite3"),
        options,
    ))
    .unwrap();
    let tenant = TenantId::new("acme");
    let ids: Vec<String> = (0..1_000)
        .map(|i| {
            let slug = format!("skill-{i}");
            block_on(sqlite.create_skill(&tenant, NewSkill::new(&slug, &slug, "# Skill\n")))
                .unwrap()
                .id
        })
        .collect();
    let store = CachedSkillStore::new(sqlite, Arc::new(SystemClock));
    let lookups = 2_000;
    let (mut miss_ns, mut hit_ns) = (Vec::new(), Vec::new());
    for _ in 0..7 {
        let start = Instant::now();
        for i in 0..lookups {
            block_on(store.inner().find_skill_by_id(&tenant, &ids[i % ids.len()])).unwrap();
        }
        miss_ns.push(start.elapsed().as_nanos() as f64 / lookups as f64);
        for id in &ids {
            block_on(store.find_skill_by_id(&tenant, id)).unwrap();
        }
        let start = Instant::now();
        for i in 0..lookups {
            block_on(store.find_skill_by_id(&tenant, &ids[i % ids.len()])).unwrap();
        }
        hit_ns.push(start.elapsed().as_nanos() as f64 / lookups as f64);
    }
    let (miss, hit) = (median(miss_ns), median(hit_ns));
    println!(
        "find_skill_by_id on SQLite: miss {:.1} µs, hit {:.2} µs ({:.0}× faster)",
        miss / 1_000.0,
        hit / 1_000.0,
        miss / hit
    );
}
