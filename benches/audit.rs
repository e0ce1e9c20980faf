//! Benchmarks of the audit trail (issue 7), all in memory:
//!
//! * `audit/append`: `AuditTrail::append` into an `InMemoryAuditStore` (read the head, hash
//!   the canonical encoding, compare-and-append), one task; throughput in appends.
//! * `audit/entry_hash`: the canonical encoding plus SHA-256 of one typical record.
//! * `audit/verify_1m`: `AuditTrail::verify` over a chain of 1,000,000 entries (entries lent
//!   by the store page by page, every hash recomputed on up to 2 threads, every link
//!   checked); throughput in entries. `audit/verify_1m_one_thread`: the same on the calling
//!   thread only.
//! * `merkle/build_1m`: a Merkle tree over 1,000,000 leaf hashes.
//! * `merkle/inclusion_proof_1m`, `merkle/verify_inclusion_1m`: generating and verifying the
//!   proof of one entry in the 1,000,000-leaf tree (indexes cycle through the tree).
//! * `merkle/consistency_proof_1m`, `merkle/verify_consistency_1m`: between sizes 999,983
//!   and 1,000,000 (the worst shape: neither is a power of two).
//!
//! Proof sizes at one million are printed before the runs.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::hint::black_box;
use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{Criterion, Throughput};
use futures::executor::block_on;
use serde_json::json;
use skills::security::audit::merkle::{
    MerkleTree, leaf_hash, verify_consistency, verify_inclusion,
};
use skills::security::audit::{AuditTrail, GENESIS_HASH, TENANT_CHAIN, entry_hash};
use skills::store::TenantId;
use skills::store::audit::AuditRecord;
use skills::store::in_memory::InMemoryAuditStore;

const MILLION: u64 = 1_000_000;

fn record(i: u64) -> AuditRecord {
    let mut r = AuditRecord::new(
        format!("user-{}", i % 97),
        "pdf",
        "anthropics/skills/pdf",
        "verified",
        "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
        true,
    );
    r.id = format!("rec-{i}");
    r.timestamp = 1_700_000_000_000 + i as i64;
    r.task_id = Some("task-1".into());
    r.agent_id = Some("agent-1".into());
    r.data_classes_requested = vec!["confidential".into(), "internal".into()];
    r.data_classes_granted = vec!["internal".into()];
    r.data_redacted = true;
    r.tokens_used = vec!["[EMAIL_001]".into()];
    r.output_hash = Some("2c26b46b68ffc68ff99b453c1d30413413422d706483bfa0f98a5e886266e7ae".into());
    r.execution_time_ms = Some(120);
    r.sandbox_config = json!({"timeout_seconds": 30, "memory_mb": 64, "network": false});
    r
}

/// The pre-issue-20 verification loop (what `AuditTrail::verify` did on an intact chain):
/// pages of 4,096 cloned by `read_range`, `entry_hash` (allocating) per entry.
fn copied_pages_verify(trail: &AuditTrail, tenant: &TenantId) -> u64 {
    let mut previous = GENESIS_HASH.to_owned();
    let mut expected = 1u64;
    loop {
        let page = block_on(
            trail
                .store()
                .read_range(tenant, TENANT_CHAIN, expected, 4096),
        )
        .unwrap();
        for entry in &page {
            assert!(
                entry.sequence == expected
                    && entry.record.previous_hash == previous
                    && entry_hash(tenant, TENANT_CHAIN, entry.sequence, &entry.record)
                        == entry.record.entry_hash
            );
            previous.clone_from(&entry.record.entry_hash);
            expected += 1;
        }
        if page.len() < 4096 {
            return expected - 1;
        }
    }
}

/// This process's CPU time (user + system, all threads, 10 ms resolution) from
/// `/proc/self/stat`; `None` where there is no such file.
fn process_cpu_seconds() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    let fields: Vec<&str> = stat.rsplit_once(')')?.1.split_whitespace().collect();
    let ticks: f64 = fields.get(11)?.parse::<f64>().ok()? + fields.get(12)?.parse::<f64>().ok()?;
    Some(ticks / 100.0)
}

/// Wall and CPU time of five verifications per variant (medians): on a machine shared with
/// other builds the wall time mostly measures waiting for a core; entries per CPU-second is
/// what the verifying threads did with the time they got.
fn cpu_time_report(trail: &AuditTrail, tenant: &TenantId) {
    let one = trail.clone().with_verify_threads(1);
    let two = trail.clone().with_verify_threads(2);
    type Run<'a> = Box<dyn Fn() -> u64 + 'a>;
    let variants: [(&str, Run); 3] = [
        (
            "copied pages (before)",
            Box::new(|| copied_pages_verify(trail, tenant)),
        ),
        (
            "verify, 1 thread",
            Box::new(|| block_on(one.verify(tenant)).unwrap().checked),
        ),
        (
            "verify, 2 threads",
            Box::new(|| block_on(two.verify(tenant)).unwrap().checked),
        ),
    ];
    for (name, run) in variants {
        let mut walls = Vec::new();
        let mut cpus = Vec::new();
        for _ in 0..5 {
            let cpu = process_cpu_seconds();
            let start = Instant::now();
            assert_eq!(run(), MILLION);
            walls.push(start.elapsed().as_secs_f64());
            if let (Some(before), Some(after)) = (cpu, process_cpu_seconds()) {
                cpus.push(after - before);
            }
        }
        walls.sort_by(f64::total_cmp);
        cpus.sort_by(f64::total_cmp);
        let cpu = cpus.get(cpus.len() / 2).copied().unwrap_or(f64::NAN);
        eprintln!(
            "verify_1m cpu report: {name}: wall {:.3} s ({:.0} entries/s), CPU {:.3} s ({:.0} entries per CPU-second)",
            walls[2],
            MILLION as f64 / walls[2],
            cpu,
            MILLION as f64 / cpu
        );
    }
}

fn main() {
    let mut c = Criterion::default().configure_from_args();
    let tenant = TenantId::new("acme");

    {
        let mut g = c.benchmark_group("audit");
        g.throughput(Throughput::Elements(1));
        g.bench_function("append", |b| {
            b.iter_custom(|iters| {
                let trail = AuditTrail::new(Arc::new(InMemoryAuditStore::new()));
                let records: Vec<AuditRecord> = (0..iters).map(record).collect();
                let start = Instant::now();
                block_on(async {
                    for r in records {
                        trail.append(&tenant, r).await.unwrap();
                    }
                });
                start.elapsed()
            });
        });
        let mut one = record(1);
        one.previous_hash = "0".repeat(64);
        g.bench_function("entry_hash", |b| {
            b.iter(|| entry_hash(black_box(&tenant), TENANT_CHAIN, 7, black_box(&one)));
        });
        g.finish();
    }

    // One chain of a million entries, built once.
    let store = Arc::new(InMemoryAuditStore::new());
    let trail = AuditTrail::new(store);
    let start = Instant::now();
    block_on(async {
        for i in 0..MILLION {
            trail.append(&tenant, record(i)).await.unwrap();
        }
    });
    eprintln!("built a 1,000,000-entry chain in {:.1?}", start.elapsed());
    {
        let mut g = c.benchmark_group("audit");
        g.sample_size(10).measurement_time(Duration::from_secs(30));
        g.throughput(Throughput::Elements(MILLION));
        g.bench_function("verify_1m", |b| {
            b.iter(|| {
                let v = block_on(trail.verify(&tenant)).unwrap();
                assert!(v.is_intact() && v.checked == MILLION);
            });
        });
        let one_thread = trail.clone().with_verify_threads(1);
        g.bench_function("verify_1m_one_thread", |b| {
            b.iter(|| {
                let v = block_on(one_thread.verify(&tenant)).unwrap();
                assert!(v.is_intact() && v.checked == MILLION);
            });
        });
        // The verification as it was before issue 20, for comparison in the same run: every
        // page copied out of the store (`read_range`), every hash rebuilt as a new string.
        g.bench_function("verify_1m_copied_pages", |b| {
            b.iter(|| assert_eq!(copied_pages_verify(&trail, &tenant), MILLION));
        });
        g.finish();
        cpu_time_report(&trail, &tenant);
    }
    drop(trail);

    let leaves: Vec<[u8; 32]> = (0..MILLION).map(|i| leaf_hash(&i.to_be_bytes())).collect();
    let tree = MerkleTree::from_leaf_hashes(leaves.iter().copied());
    let root = tree.root();
    let (old, new) = (999_983, MILLION);
    let old_root = tree.root_at(old).unwrap();
    let consistency = tree.consistency_proof(old, new).unwrap();
    let sample = tree.inclusion_proof(123_456, new).unwrap();
    eprintln!(
        "at 1,000,000 leaves: inclusion proof {} hashes ({} bytes), consistency proof {}→{} {} hashes ({} bytes)",
        sample.len(),
        sample.len() * 32,
        old,
        new,
        consistency.len(),
        consistency.len() * 32
    );
    let mut g = c.benchmark_group("merkle");
    g.sample_size(10);
    g.throughput(Throughput::Elements(MILLION));
    g.bench_function("build_1m", |b| {
        b.iter(|| MerkleTree::from_leaf_hashes(black_box(&leaves).iter().copied()).len());
    });
    g.sample_size(100);
    g.throughput(Throughput::Elements(1));
    let mut index = 0u64;
    g.bench_function("inclusion_proof_1m", |b| {
        b.iter(|| {
            index = (index + 7_919) % MILLION;
            tree.inclusion_proof(black_box(index), new).unwrap()
        });
    });
    let proofs: Vec<(u64, Vec<[u8; 32]>)> = (0..64u64)
        .map(|k| {
            let i = k * 15_601 % MILLION;
            (i, tree.inclusion_proof(i, new).unwrap())
        })
        .collect();
    let mut k = 0usize;
    g.bench_function("verify_inclusion_1m", |b| {
        b.iter(|| {
            k = (k + 1) % proofs.len();
            let (i, proof) = &proofs[k];
            assert!(verify_inclusion(
                &leaves[*i as usize],
                *i,
                new,
                proof,
                &root
            ));
        });
    });
    g.bench_function("consistency_proof_1m", |b| {
        b.iter(|| tree.consistency_proof(black_box(old), new).unwrap());
    });
    g.bench_function("verify_consistency_1m", |b| {
        b.iter(|| {
            assert!(verify_consistency(
                old,
                new,
                &old_root,
                &root,
                black_box(&consistency)
            ))
        });
    });
    g.finish();
    c.final_summary();
}
