//! The audit trail on the in-memory store: 10,000 appends from 16 concurrent tasks leave one
//! valid chain; Merkle proofs for any size, index and older size (proptest against a
//! brute-force reference); queries by skill, time and user; the usage-log view.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::HashSet;
use std::sync::Arc;

use proptest::prelude::*;
use skills::security::audit::merkle::{
    Hash, MerkleTree, empty_root, leaf_hash, node_hash, verify_consistency, verify_inclusion,
};
use skills::security::audit::{
    AuditFilter, AuditTrail, TENANT_CHAIN, TIMEOUT, UsageStatus, Viewer, error_text,
    execution_record, sha256_hex,
};
use skills::security::{Context, Sanitizer, TrustLevel};
use skills::store::TenantId;
use skills::store::audit::{AuditRecord, AuditStore};
use skills::store::in_memory::InMemoryAuditStore;

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn ten_thousand_appends_from_sixteen_tasks_make_one_chain() {
    let store = Arc::new(InMemoryAuditStore::new());
    let trail = AuditTrail::new(store.clone());
    let tenant = TenantId::new("acme");
    let tasks: Vec<_> = (0..16)
        .map(|task| {
            let trail = trail.clone();
            let tenant = tenant.clone();
            tokio::spawn(async move {
                for i in 0..625 {
                    let mut r = AuditRecord::new(
                        format!("user-{task}"),
                        "pdf",
                        "p/pdf",
                        "core",
                        format!("{task}-{i}"),
                        true,
                    );
                    r.id = format!("{task}-{i}");
                    trail.append(&tenant, r).await.unwrap();
                }
            })
        })
        .collect();
    for t in tasks {
        t.await.unwrap();
    }
    let v = trail.verify(&tenant).await.unwrap();
    assert!(v.is_intact(), "{v:?}");
    assert_eq!(v.checked, 10_000);
    assert_eq!(
        store.chains(&tenant).await.unwrap(),
        vec![TENANT_CHAIN.to_owned()]
    );
    let all = store
        .read_range(&tenant, TENANT_CHAIN, 1, 20_000)
        .await
        .unwrap();
    let ids: HashSet<_> = all.iter().map(|e| e.record.id.clone()).collect();
    assert_eq!(ids.len(), 10_000);
    assert!(
        all.iter()
            .enumerate()
            .all(|(i, e)| e.sequence == i as u64 + 1)
    );
}

/// RFC 6962's MTH, straight from the definition.
fn reference_root(leaves: &[Hash]) -> Hash {
    match leaves.len() {
        0 => empty_root(),
        1 => leaves[0],
        n => {
            let mut k = 1;
            while k * 2 < n {
                k *= 2;
            }
            node_hash(&reference_root(&leaves[..k]), &reference_root(&leaves[k..]))
        }
    }
}

fn leaves(n: usize) -> Vec<Hash> {
    (0..n as u32).map(|i| leaf_hash(&i.to_be_bytes())).collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn inclusion_proofs_hold_for_any_size_and_index(n in 1usize..300, pick in any::<prop::sample::Index>(), flip in any::<prop::sample::Index>()) {
        let leaves = leaves(n);
        let tree = MerkleTree::from_leaf_hashes(leaves.iter().copied());
        let root = reference_root(&leaves);
        prop_assert_eq!(tree.root(), root);
        let index = pick.index(n) as u64;
        let proof = tree.inclusion_proof(index, n as u64).unwrap();
        prop_assert!(proof.len() as u32 <= 64 - (n as u64 - 1).leading_zeros().min(64));
        prop_assert!(verify_inclusion(&leaves[index as usize], index, n as u64, &proof, &root));
        // Forgeries: another leaf, another index, a flipped byte in the path.
        let other = leaf_hash(b"not in the tree");
        prop_assert!(!verify_inclusion(&other, index, n as u64, &proof, &root));
        if n > 1 {
            let wrong = (index + 1) % n as u64;
            prop_assert!(!verify_inclusion(&leaves[index as usize], wrong, n as u64, &proof, &root));
            let mut bad = proof.clone();
            let at = flip.index(bad.len());
            bad[at][0] ^= 1;
            prop_assert!(!verify_inclusion(&leaves[index as usize], index, n as u64, &bad, &root));
        }
    }

    #[test]
    fn consistency_proofs_hold_for_any_old_size(n in 1usize..300, pick in any::<prop::sample::Index>(), flip in any::<prop::sample::Index>()) {
        let leaves = leaves(n);
        let tree = MerkleTree::from_leaf_hashes(leaves.iter().copied());
        let old = pick.index(n + 1) as u64;
        let old_root = reference_root(&leaves[..old as usize]);
        prop_assert_eq!(tree.root_at(old).unwrap(), old_root);
        let new_root = tree.root();
        let proof = tree.consistency_proof(old, n as u64).unwrap();
        prop_assert!(proof.len() <= 2 + 64 - (n as u64).leading_zeros() as usize);
        prop_assert!(verify_consistency(old, n as u64, &old_root, &new_root, &proof));
        if !proof.is_empty() {
            let mut bad = proof.clone();
            let at = flip.index(bad.len());
            bad[at][31] ^= 0x80;
            prop_assert!(!verify_consistency(old, n as u64, &old_root, &new_root, &bad));
            // A different history of the same old size is not consistent.
            let mut other = leaves[..old as usize].to_vec();
            other[0] = leaf_hash(b"rewritten");
            prop_assert!(!verify_consistency(old, n as u64, &reference_root(&other), &new_root, &proof));
        }
    }
}

#[tokio::test]
async fn queries_by_skill_time_and_user_and_users_see_only_their_own() {
    let trail = AuditTrail::new(Arc::new(InMemoryAuditStore::new()));
    let t = TenantId::new("acme");
    for (i, (user, skill)) in [
        ("alice", "pdf"),
        ("bob", "pdf"),
        ("alice", "docx"),
        ("bob", "xlsx"),
    ]
    .into_iter()
    .enumerate()
    {
        let mut r = AuditRecord::new(user, skill, format!("p/{skill}"), "core", "h", true);
        r.timestamp = 100 * i as i64;
        trail.append(&t, r).await.unwrap();
    }
    let ids = |entries: Vec<skills::store::audit::AuditEntry>| -> Vec<u64> {
        entries.iter().map(|e| e.sequence).collect()
    };
    let auditor = Viewer::Auditor;
    assert_eq!(
        ids(trail
            .query(&t, &auditor, &AuditFilter::new().skill("pdf"))
            .await
            .unwrap()),
        [1, 2]
    );
    assert_eq!(
        ids(trail
            .query(&t, &auditor, &AuditFilter::new().between(100, 300))
            .await
            .unwrap()),
        [2, 3]
    );
    assert_eq!(
        ids(trail
            .query(&t, &auditor, &AuditFilter::new().user("bob"))
            .await
            .unwrap()),
        [2, 4]
    );
    let alice = Viewer::User("alice".into());
    assert_eq!(
        ids(trail.query(&t, &alice, &AuditFilter::new()).await.unwrap()),
        [1, 3]
    );
    assert!(
        trail
            .query(&t, &alice, &AuditFilter::new().user("bob"))
            .await
            .unwrap()
            .is_empty()
    );
    assert_eq!(
        ids(trail
            .query(&t, &alice, &AuditFilter::new().skill("pdf"))
            .await
            .unwrap()),
        [1]
    );
    assert!(
        trail
            .query(&TenantId::new("other"), &auditor, &AuditFilter::new())
            .await
            .unwrap()
            .is_empty()
    );
    assert_eq!(
        trail
            .usage_log(&t, &alice, &AuditFilter::new())
            .await
            .unwrap()
            .len(),
        2
    );
}

#[tokio::test]
async fn the_usage_log_is_derived_from_execution_records() {
    let trail = AuditTrail::new(Arc::new(InMemoryAuditStore::new()));
    let t = TenantId::new("acme");
    let sanitizer = Sanitizer::default();
    let mut run = sanitizer
        .begin("exec-1", TrustLevel::Verified, None)
        .unwrap();
    let input = run.sanitize_text("mail rbrown@example.com", &Context::default());
    let input_hash = sha256_hex(input.text.as_bytes());
    let mut ok = execution_record(&run.audit(), "alice", "email", "acme/email", &input_hash);
    ok.execution_time_ms = Some(42);
    ok.agent_id = Some("agent-7".into());
    trail.append(&t, ok).await.unwrap();

    let mut failed = AuditRecord::new("alice", "email", "acme/email", "verified", "h2", false);
    failed.id = "exec-2".into();
    failed.error = Some(error_text("smtp_down", "connection refused"));
    trail.append(&t, failed).await.unwrap();

    let mut slow = AuditRecord::new("alice", "email", "acme/email", "core", "h3", false);
    slow.id = "exec-3".into();
    slow.execution_time_ms = Some(5000);
    slow.error = Some(error_text(TIMEOUT, "after 5000 ms"));
    trail.append(&t, slow).await.unwrap();

    let log = trail
        .usage_log(&t, &Viewer::Auditor, &AuditFilter::new())
        .await
        .unwrap();
    let rows: Vec<_> = log
        .iter()
        .map(|r| {
            (
                r.execution_id.as_str(),
                r.status,
                r.duration_ms,
                r.error_code.as_deref(),
            )
        })
        .collect();
    assert_eq!(
        rows,
        [
            ("exec-1", UsageStatus::Success, 42, None),
            ("exec-2", UsageStatus::Failed, 0, Some("smtp_down")),
            ("exec-3", UsageStatus::Timeout, 5000, Some("timeout")),
        ]
    );
    assert_eq!(log[0].input_hash.as_deref(), Some(input_hash.as_str()));
    assert_eq!(log[0].agent_id.as_deref(), Some("agent-7"));
    assert_eq!(log[1].error_message.as_deref(), Some("connection refused"));
    // The stored record carries no hidden value: only classes, token names and flags.
    let stored = serde_json::to_string(
        &trail
            .query(&t, &Viewer::Auditor, &AuditFilter::new())
            .await
            .unwrap(),
    )
    .unwrap();
    assert!(!stored.contains("rbrown@example.com"));
    assert!(stored.contains("[EMAIL_001]"));
    assert_eq!(
        trail
            .usage_log(&t, &Viewer::Auditor, &AuditFilter::new().limit(2))
            .await
            .unwrap()
            .len(),
        2
    );
}
