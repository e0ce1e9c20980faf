//! Attacks on the audit chain: a store double whose rows the test can change, delete,
//! insert, swap and cut, and what verification, checkpoints and proofs report.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::sync::{Arc, Mutex};

use serde_json::json;
use skills::security::audit::{
    AuditError, AuditTrail, BreakKind, ChainBreak, GENESIS_HASH, TENANT_CHAIN, entry_hash,
    verify_entries,
};
use skills::store::audit::{AuditEntry, AuditQuery, AuditRecord, AuditStore, ChainHead};
use skills::store::{Error, Result, TenantId};

/// One tenant's rows, in the order the store presents them, open to tampering.
#[derive(Default)]
struct TamperStore {
    rows: Mutex<Vec<AuditEntry>>,
    /// Lend rows to `visit_range` under the lock (as the in-memory store does) instead of
    /// the trait's default, which visits copies from `read_range`.
    lends: bool,
}

impl TamperStore {
    fn tamper(&self, f: impl FnOnce(&mut Vec<AuditEntry>)) {
        f(&mut self.rows.lock().unwrap());
    }
}

#[async_trait::async_trait]
impl AuditStore for TamperStore {
    async fn append(
        &self,
        _tenant: &TenantId,
        chain: &str,
        record: AuditRecord,
        expected_head: Option<&str>,
    ) -> Result<AuditEntry> {
        let mut rows = self.rows.lock().unwrap();
        let found = rows.last().map(|e| e.record.entry_hash.clone());
        if found.as_deref() != expected_head {
            return Err(Error::Stale {
                what: "audit chain head",
                expected: expected_head.unwrap_or("").into(),
                found: found.unwrap_or_default(),
            });
        }
        let entry = AuditEntry {
            chain: chain.into(),
            sequence: rows.last().map_or(1, |e| e.sequence + 1),
            recorded_at: 0,
            record,
        };
        rows.push(entry.clone());
        Ok(entry)
    }

    async fn head(&self, _tenant: &TenantId, _chain: &str) -> Result<Option<ChainHead>> {
        Ok(self.rows.lock().unwrap().last().map(|e| ChainHead {
            sequence: e.sequence,
            entry_hash: e.record.entry_hash.clone(),
            record_id: e.record.id.clone(),
        }))
    }

    async fn read_range(
        &self,
        _tenant: &TenantId,
        _chain: &str,
        from_sequence: u64,
        limit: usize,
    ) -> Result<Vec<AuditEntry>> {
        // Rows in stored order from the first one numbered at or after `from_sequence`.
        let rows = self.rows.lock().unwrap();
        let start = rows
            .iter()
            .position(|e| e.sequence >= from_sequence)
            .unwrap_or(rows.len());
        Ok(rows[start..].iter().take(limit).cloned().collect())
    }

    async fn visit_range(
        &self,
        tenant: &TenantId,
        chain: &str,
        from_sequence: u64,
        limit: usize,
        visit: &mut (dyn for<'e> FnMut(&'e [AuditEntry]) -> bool + Send),
    ) -> Result<usize> {
        if !self.lends {
            let rows = self.read_range(tenant, chain, from_sequence, limit).await?;
            if !rows.is_empty() {
                visit(&rows);
            }
            return Ok(rows.len());
        }
        // Lent under the lock, in runs of 1,000 (a store may lend a range in pieces).
        let rows = self.rows.lock().unwrap();
        let start = rows
            .iter()
            .position(|e| e.sequence >= from_sequence)
            .unwrap_or(rows.len());
        let mut lent = 0;
        for run in rows[start..(start + limit).min(rows.len())].chunks(1_000) {
            lent += run.len();
            if !visit(run) {
                break;
            }
        }
        Ok(lent)
    }

    async fn get_entry(&self, _tenant: &TenantId, id: &str) -> Result<Option<AuditEntry>> {
        Ok(self
            .rows
            .lock()
            .unwrap()
            .iter()
            .find(|e| e.record.id == id)
            .cloned())
    }

    async fn query(&self, _tenant: &TenantId, query: &AuditQuery) -> Result<Vec<AuditEntry>> {
        Ok(self
            .rows
            .lock()
            .unwrap()
            .iter()
            .filter(|e| query.matches(e))
            .cloned()
            .collect())
    }

    async fn chains(&self, _tenant: &TenantId) -> Result<Vec<String>> {
        Ok(vec![TENANT_CHAIN.into()])
    }
}

fn tenant() -> TenantId {
    TenantId::new("acme")
}

async fn chain(n: u32) -> (Arc<TamperStore>, AuditTrail) {
    let store = Arc::new(TamperStore::default());
    let trail = AuditTrail::new(store.clone());
    for i in 1..=n {
        let mut r = AuditRecord::new(
            if i % 2 == 0 { "alice" } else { "bob" },
            "pdf",
            "anthropics/skills/pdf",
            "verified",
            format!("input-{i}"),
            true,
        );
        r.timestamp = 1_000 * i64::from(i);
        r.sandbox_config = json!({"timeout_seconds": 30});
        r.tokens_used = vec!["[EMAIL_001]".into()];
        trail.append(&tenant(), r).await.unwrap();
    }
    (store, trail)
}

async fn first_break(trail: &AuditTrail) -> ChainBreak {
    let v = trail.verify(&tenant()).await.unwrap();
    v.broken.expect("tampering went unnoticed")
}

fn at(sequence: u64, kind: BreakKind) -> ChainBreak {
    ChainBreak { sequence, kind }
}

/// Rewrites entry `seq`'s hash as an attacker without a secret can: recompute it.
fn rehash(rows: &mut [AuditEntry], index: usize) {
    let e = &mut rows[index];
    e.record.entry_hash = entry_hash(&tenant(), TENANT_CHAIN, e.sequence, &e.record);
}

#[tokio::test]
async fn an_untouched_chain_verifies() {
    let (_, trail) = chain(10).await;
    let v = trail.verify(&tenant()).await.unwrap();
    assert!(v.is_intact());
    assert_eq!(v.checked, 10);
}

#[tokio::test]
async fn changing_any_field_of_a_record_is_detected_as_modified() {
    type Edit = fn(&mut AuditRecord);
    let edits: Vec<(&str, Edit)> = vec![
        ("id", |r| r.id.push('x')),
        ("timestamp", |r| r.timestamp += 1),
        ("user_id", |r| r.user_id = "mallory".into()),
        ("skill_id", |r| r.skill_id = "docx".into()),
        ("skill_path", |r| r.skill_path.push('x')),
        ("skill_trust_level", |r| r.skill_trust_level = "core".into()),
        ("skill_version", |r| r.skill_version = Some("2".into())),
        ("task_id", |r| r.task_id = Some("t".into())),
        ("agent_id", |r| r.agent_id = Some("a".into())),
        ("trigger_reason", |r| r.trigger_reason = Some("why".into())),
        ("data_classes_requested", |r| {
            r.data_classes_requested.push("regulated".into())
        }),
        ("data_classes_granted", |r| {
            r.data_classes_granted.push("regulated".into())
        }),
        ("data_redacted", |r| r.data_redacted = !r.data_redacted),
        ("tokens_used", |r| r.tokens_used.clear()),
        ("input_hash", |r| r.input_hash.push('x')),
        ("output_hash", |r| r.output_hash = Some("o".into())),
        ("execution_time_ms", |r| r.execution_time_ms = Some(1)),
        ("success", |r| r.success = !r.success),
        ("error", |r| r.error = Some("e".into())),
        ("sandbox_config", |r| {
            r.sandbox_config = json!({"timeout_seconds": 31})
        }),
        ("security_flags", |r| r.security_flags.push("f".into())),
        ("previous_hash", |r| r.previous_hash = GENESIS_HASH.into()),
        ("entry_hash", |r| r.entry_hash = GENESIS_HASH.into()),
    ];
    for (field, edit) in edits {
        let (store, trail) = chain(8).await;
        store.tamper(|rows| edit(&mut rows[4].record));
        let broken = first_break(&trail).await;
        assert_eq!(broken, at(5, BreakKind::Modified), "{field}");
    }
}

#[tokio::test]
async fn a_modified_and_rehashed_entry_is_still_found() {
    let (store, trail) = chain(8).await;
    store.tamper(|rows| {
        rows[4].record.success = false;
        rehash(rows, 4);
    });
    assert_eq!(first_break(&trail).await, at(5, BreakKind::Modified));
}

#[tokio::test]
async fn deleting_entries_is_detected() {
    let (store, trail) = chain(8).await;
    store.tamper(|rows| {
        rows.remove(4);
    });
    assert_eq!(
        first_break(&trail).await,
        at(5, BreakKind::Deleted { missing: 1 })
    );

    let (store, trail) = chain(8).await;
    store.tamper(|rows| {
        rows.drain(0..2);
    });
    assert_eq!(
        first_break(&trail).await,
        at(1, BreakKind::Deleted { missing: 2 })
    );
}

#[tokio::test]
async fn inserting_an_entry_is_detected() {
    // A forgery linked properly to its predecessor, the rest renumbered.
    let (store, trail) = chain(8).await;
    store.tamper(|rows| {
        let mut forged = rows[3].clone();
        forged.record.id = "forged".into();
        forged.record.previous_hash = rows[3].record.entry_hash.clone();
        forged.sequence = 5;
        rows.insert(4, forged);
        for (i, row) in rows.iter_mut().enumerate() {
            row.sequence = i as u64 + 1;
        }
        rehash(rows, 4);
    });
    assert_eq!(first_break(&trail).await, at(5, BreakKind::Inserted));

    // A forgery with a made-up link, numbered like its neighbour.
    let (store, trail) = chain(8).await;
    store.tamper(|rows| {
        let mut forged = rows[3].clone();
        forged.record.id = "forged".into();
        forged.record.previous_hash = "ab".repeat(32);
        forged.sequence = 5;
        rows.insert(4, forged);
        rehash(rows, 4);
    });
    assert_eq!(first_break(&trail).await, at(5, BreakKind::Inserted));
}

#[tokio::test]
async fn swapping_entries_is_detected_as_reordered() {
    let (store, trail) = chain(8).await;
    store.tamper(|rows| rows.swap(3, 4));
    assert_eq!(
        first_break(&trail).await,
        at(4, BreakKind::Reordered { belongs_after: 4 })
    );
    // Far apart, and renumbered to look tidy.
    let (store, trail) = chain(8).await;
    store.tamper(|rows| {
        rows.swap(1, 6);
        for (i, row) in rows.iter_mut().enumerate() {
            row.sequence = i as u64 + 1;
        }
    });
    let broken = first_break(&trail).await;
    assert_eq!(broken.sequence, 2);
    assert!(
        matches!(broken.kind, BreakKind::Reordered { .. }),
        "{broken:?}"
    );
}

#[tokio::test]
async fn a_wrong_sequence_number_is_detected() {
    let (store, trail) = chain(4).await;
    store.tamper(|rows| rows[2].sequence = 30);
    let broken = first_break(&trail).await;
    assert_eq!(broken.sequence, 3);
    assert!(
        matches!(broken.kind, BreakKind::Misnumbered { found: 30 }),
        "{broken:?}"
    );
}

#[tokio::test]
async fn cutting_the_tail_is_caught_by_a_checkpoint() {
    let (store, trail) = chain(10).await;
    let checkpoint = trail.checkpoint(&tenant()).await.unwrap();
    assert_eq!(checkpoint.size, 10);
    store.tamper(|rows| rows.truncate(7));
    // The chain alone still looks fine...
    assert!(trail.verify(&tenant()).await.unwrap().is_intact());
    // ...the checkpoint does not.
    let v = trail
        .verify_checkpoint(&tenant(), &checkpoint)
        .await
        .unwrap();
    assert_eq!(
        v.broken,
        Some(at(
            8,
            BreakKind::Truncated {
                checkpoint_size: 10,
                chain_size: 7
            }
        ))
    );
}

#[tokio::test]
async fn a_rehashed_tail_is_caught_by_a_checkpoint() {
    let (store, trail) = chain(10).await;
    let checkpoint = trail.checkpoint(&tenant()).await.unwrap();
    store.tamper(|rows| {
        // Rewrite entry 9 and re-link entry 10: the chain verifies again.
        rows[8].record.user_id = "mallory".into();
        rehash(rows, 8);
        rows[9].record.previous_hash = rows[8].record.entry_hash.clone();
        rehash(rows, 9);
    });
    assert!(trail.verify(&tenant()).await.unwrap().is_intact());
    let v = trail
        .verify_checkpoint(&tenant(), &checkpoint)
        .await
        .unwrap();
    assert_eq!(v.broken, Some(at(10, BreakKind::CheckpointMismatch)));
}

#[tokio::test]
async fn later_checkpoints_extend_earlier_ones() {
    let (_, trail) = chain(5).await;
    let old = trail.checkpoint(&tenant()).await.unwrap();
    for i in 0..6 {
        let r = AuditRecord::new("alice", "docx", "p/docx", "core", format!("more-{i}"), true);
        trail.append(&tenant(), r).await.unwrap();
    }
    let new = trail.checkpoint(&tenant()).await.unwrap();
    assert!(
        trail
            .verify_checkpoint(&tenant(), &old)
            .await
            .unwrap()
            .is_intact()
    );
    assert!(
        trail
            .verify_checkpoint(&tenant(), &new)
            .await
            .unwrap()
            .is_intact()
    );
    let proof = trail.consistency_proof(&tenant(), 5, 11).await.unwrap();
    assert!(proof.verify(&old, &new));
    assert!(!proof.verify(&new, &old));
    let mut forged = proof.clone();
    forged.path[0] = "00".repeat(32);
    assert!(!forged.verify(&old, &new));
    let mut other = old.clone();
    other.merkle_root = new.merkle_root.clone();
    assert!(!proof.verify(&other, &new));
}

#[tokio::test]
async fn inclusion_proofs_verify_and_forgeries_do_not() {
    let (store, trail) = chain(11).await;
    let checkpoint = trail.checkpoint(&tenant()).await.unwrap();
    for seq in 1..=11 {
        let proof = trail.inclusion_proof(&tenant(), seq, 11).await.unwrap();
        assert!(proof.verify(&checkpoint.merkle_root), "entry {seq}");
        assert!(proof.path.len() <= 4);
        let mut wrong_place = proof.clone();
        wrong_place.sequence = seq % 11 + 1;
        assert!(!wrong_place.verify(&checkpoint.merkle_root));
        let mut wrong_entry = proof.clone();
        wrong_entry.entry_hash = "11".repeat(32);
        assert!(!wrong_entry.verify(&checkpoint.merkle_root));
    }
    // A forged entry cannot be proven into a checkpoint taken before it.
    let mut proof = trail.inclusion_proof(&tenant(), 4, 11).await.unwrap();
    store.tamper(|rows| {
        rows[3].record.skill_id = "forged".into();
        rehash(rows, 3);
    });
    proof.entry_hash = store.rows.lock().unwrap()[3].record.entry_hash.clone();
    assert!(!proof.verify(&checkpoint.merkle_root));
    // And no proof is produced over a broken chain.
    assert!(matches!(
        trail.inclusion_proof(&tenant(), 4, 11).await,
        Err(AuditError::Broken(ChainBreak { sequence: 4, .. }))
    ));
    assert!(trail.inclusion_proof(&tenant(), 12, 11).await.is_err());
}

#[tokio::test]
async fn exported_entries_verify_without_a_store() {
    let (store, _) = chain(6).await;
    let rows = store.rows.lock().unwrap().clone();
    let last = verify_entries(&tenant(), TENANT_CHAIN, 1, GENESIS_HASH, &rows).unwrap();
    assert_eq!(last, rows[5].record.entry_hash);
    // From the middle, anchored on the hash before.
    let anchor = rows[2].record.entry_hash.clone();
    assert!(verify_entries(&tenant(), TENANT_CHAIN, 4, &anchor, &rows[3..]).is_ok());
    // Another tenant's hashes do not verify here.
    assert!(
        verify_entries(
            &TenantId::new("other"),
            TENANT_CHAIN,
            1,
            GENESIS_HASH,
            &rows
        )
        .is_err()
    );
    let broken = verify_entries(&tenant(), TENANT_CHAIN, 1, GENESIS_HASH, &rows[1..]).unwrap_err();
    assert_eq!(broken.to_string(), "1 entries are missing at 1");
}

#[tokio::test]
async fn ranges_verify_on_their_own_and_find_breaks_inside() {
    let (store, trail) = chain(10).await;
    store.tamper(|rows| rows[7].record.success = false);
    let early = trail.verify_range(&tenant(), 2, 6).await.unwrap();
    assert!(early.is_intact());
    assert_eq!(early.checked, 5);
    let late = trail.verify_range(&tenant(), 6, 10).await.unwrap();
    assert_eq!(late.broken, Some(at(8, BreakKind::Modified)));
    assert_eq!(late.checked, 2);
}

/// The same tampering, verified through lent rows and through copies, over a chain longer
/// than one verification page (4,096 entries) with the damage on either side of the page
/// boundary: identical answers, and the answers an auditor gets from the exported rows.
#[tokio::test]
async fn lent_and_copied_pages_report_the_same_breaks() {
    type Tamper = fn(&mut Vec<AuditEntry>);
    let tampers: Vec<(&str, Tamper)> = vec![
        ("intact", |_| {}),
        ("modified at the end of page 1", |rows| {
            rows[4095].record.success = false
        }),
        ("modified at the start of page 2", |rows| {
            rows[4096].record.success = false
        }),
        ("deleted across the boundary", |rows| {
            rows.drain(4094..4098);
        }),
        ("swapped across the boundary", |rows| rows.swap(4095, 4096)),
        ("misnumbered in page 2", |rows| rows[4100].sequence = 9_999),
        ("rehashed in page 1", |rows| {
            rows[10].record.success = false;
            rehash(rows, 10);
        }),
        ("bad hash text", |rows| {
            rows[4097].record.entry_hash = "zz".into()
        }),
    ];
    let (template, _) = chain(4_110).await;
    let rows = template.rows.lock().unwrap().clone();
    for (what, tamper) in tampers {
        let mut tampered = rows.clone();
        tamper(&mut tampered);
        let mut results = Vec::new();
        for lends in [false, true] {
            let store = Arc::new(TamperStore {
                rows: Mutex::new(tampered.clone()),
                lends,
            });
            let trail = AuditTrail::new(store);
            let whole = trail.verify(&tenant()).await.unwrap();
            let part = trail.verify_range(&tenant(), 4_000, 4_105).await.unwrap();
            let tree = trail.merkle_tree(&tenant(), None).await;
            let tree = tree.map(|(t, v)| (t.root(), v)).map_err(|e| e.to_string());
            results.push((whole, part, tree));
        }
        assert_eq!(results[0], results[1], "{what}");
        let exported = verify_entries(&tenant(), TENANT_CHAIN, 1, GENESIS_HASH, &tampered);
        match (&results[0].0.broken, exported.clone().err()) {
            // A swap across the page boundary: the paged reader looks for the next entry by
            // sequence after the page, and the swapped-back entry's sequence is lower, so it
            // calls the break a deletion where the whole export shows a reordering. The
            // position is the same; the paged reader has always done this.
            (Some(paged), Some(whole)) if what == "swapped across the boundary" => {
                assert_eq!(paged.sequence, whole.sequence, "{what}");
                assert_eq!(paged.kind, BreakKind::Deleted { missing: 1 }, "{what}");
            }
            (paged, whole) => assert_eq!(paged, &whole, "{what}"),
        }
        assert_eq!(results[0].0.is_intact(), what == "intact", "{what}");
        if let Ok(last) = exported {
            assert_eq!(results[0].0.last_hash, last);
            assert_eq!(results[0].0.checked, 4_110);
        }
    }
}
