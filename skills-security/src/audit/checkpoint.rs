//! Checkpoints and proofs: what a host signs off and stores away from the audit store, and
//! what an auditor checks against it.
//!
//! Threat: cutting the tail of a chain (nothing links *to* the last entry, so a hash chain
//! alone cannot see it is gone), or rewriting history and re-hashing every entry after the
//! change. Guarantee: [`AuditTrail::verify_checkpoint`] reports a chain shorter than a
//! checkpoint as [`BreakKind::Truncated`] and a chain whose entry at the checkpoint's size
//! or whose Merkle root over the first `size` entries differs as
//! [`BreakKind::CheckpointMismatch`]; a [`ConsistencyProof`] shows a newer checkpoint extends
//! an older one without reading the entries.

use serde::{Deserialize, Serialize};
use skills_store_traits::TenantId;

use super::encoding::sha256_hex;
use super::merkle::{self, Hash, MerkleTree, decode_hash, leaf_hash};
use super::{AuditError, AuditTrail, BreakKind, ChainBreak, TENANT_CHAIN, Verification};

/// A signed-off state of a tenant's chain: its size, head hash and Merkle root. The host
/// signs [`Checkpoint::statement`] (with whatever key infrastructure it has) and keeps the
/// checkpoint outside the audit store.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Checkpoint {
    /// The tenant.
    pub tenant: TenantId,
    /// The chain.
    pub chain: String,
    /// How many entries the chain had.
    pub size: u64,
    /// The `entry_hash` of entry `size` ([`GENESIS_HASH`](super::GENESIS_HASH) for 0).
    pub head_hash: String,
    /// The Merkle root over the entries' hashes, hex.
    pub merkle_root: String,
}

impl Checkpoint {
    /// The bytes to sign: `str("skills.audit.checkpoint.v1") str(tenant) str(chain)
    /// u64(size) str(head_hash) str(merkle_root)` in the encoding's primitives.
    pub fn statement(&self) -> Vec<u8> {
        fn put(out: &mut Vec<u8>, text: &str) {
            out.extend_from_slice(&(text.len() as u64).to_be_bytes());
            out.extend_from_slice(text.as_bytes());
        }
        let mut out = Vec::with_capacity(256);
        put(&mut out, "skills.audit.checkpoint.v1");
        put(&mut out, self.tenant.as_str());
        put(&mut out, &self.chain);
        out.extend_from_slice(&self.size.to_be_bytes());
        put(&mut out, &self.head_hash);
        put(&mut out, &self.merkle_root);
        out
    }

    /// SHA-256 of the statement, hex: a short fingerprint to compare.
    pub fn fingerprint(&self) -> String {
        sha256_hex(&self.statement())
    }
}

/// Proof that one entry is in the tree of a checkpoint.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct InclusionProof {
    /// The entry's sequence (leaf `sequence - 1`).
    pub sequence: u64,
    /// The tree size the proof is for.
    pub tree_size: u64,
    /// The entry's `entry_hash`.
    pub entry_hash: String,
    /// The audit path, hex, leaf to root.
    pub path: Vec<String>,
}

impl InclusionProof {
    /// True when the proof shows `entry_hash` at `sequence` under `root` (hex), using only
    /// [`merkle::verify_inclusion`].
    pub fn verify(&self, root: &str) -> bool {
        let (Some(root), Some(leaf), Some(path)) = (
            decode_hash(root),
            decode_hash(&self.entry_hash),
            decode_all(&self.path),
        ) else {
            return false;
        };
        self.sequence >= 1
            && merkle::verify_inclusion(
                &leaf_hash(&leaf),
                self.sequence - 1,
                self.tree_size,
                &path,
                &root,
            )
    }
}

/// Proof that a tree of `old_size` is a prefix of one of `new_size`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ConsistencyProof {
    /// The older size.
    pub old_size: u64,
    /// The newer size.
    pub new_size: u64,
    /// The proof, hex.
    pub path: Vec<String>,
}

impl ConsistencyProof {
    /// True when the proof shows `old` is a prefix of `new` (both checkpoints of the same
    /// chain, at this proof's sizes), using only [`merkle::verify_consistency`].
    pub fn verify(&self, old: &Checkpoint, new: &Checkpoint) -> bool {
        let (Some(r1), Some(r2), Some(path)) = (
            decode_hash(&old.merkle_root),
            decode_hash(&new.merkle_root),
            decode_all(&self.path),
        ) else {
            return false;
        };
        old.tenant == new.tenant
            && old.chain == new.chain
            && old.size == self.old_size
            && new.size == self.new_size
            && merkle::verify_consistency(self.old_size, self.new_size, &r1, &r2, &path)
    }
}

fn decode_all(path: &[String]) -> Option<Vec<Hash>> {
    path.iter().map(|h| decode_hash(h)).collect()
}

fn encode_all(path: &[Hash]) -> Vec<String> {
    path.iter().map(hex::encode).collect()
}

impl AuditTrail {
    /// A checkpoint of the chain as it is now, after verifying it; `Ok(Err(break))` when
    /// the chain is already broken (a checkpoint of a broken chain would sign off tampering).
    pub async fn checkpoint_checked(
        &self,
        tenant: &TenantId,
    ) -> Result<Result<Checkpoint, ChainBreak>, AuditError> {
        let (tree, verification) = self.merkle_tree(tenant, None).await?;
        if let Some(broken) = verification.broken {
            return Ok(Err(broken));
        }
        Ok(Ok(Checkpoint {
            tenant: tenant.clone(),
            chain: TENANT_CHAIN.to_owned(),
            size: tree.len(),
            head_hash: verification.last_hash,
            merkle_root: hex::encode(tree.root()),
        }))
    }

    /// A checkpoint of the chain as it is now. A broken chain is checkpointed up to its last
    /// intact entry only; use [`AuditTrail::checkpoint_checked`] to be told about the break.
    pub async fn checkpoint(&self, tenant: &TenantId) -> Result<Checkpoint, AuditError> {
        let (tree, verification) = self.merkle_tree(tenant, None).await?;
        Ok(Checkpoint {
            tenant: tenant.clone(),
            chain: TENANT_CHAIN.to_owned(),
            size: tree.len(),
            head_hash: verification.last_hash,
            merkle_root: hex::encode(tree.root()),
        })
    }

    /// Verifies the chain against a checkpoint taken earlier: the chain must still be intact,
    /// at least `checkpoint.size` long, hold `checkpoint.head_hash` at that size and give the
    /// same Merkle root over its first `size` entries.
    pub async fn verify_checkpoint(
        &self,
        tenant: &TenantId,
        checkpoint: &Checkpoint,
    ) -> Result<Verification, AuditError> {
        let (tree, verification) = self.merkle_tree(tenant, None).await?;
        if verification.broken.is_some() {
            return Ok(verification);
        }
        let mismatch = |sequence, kind| Verification {
            broken: Some(ChainBreak { sequence, kind }),
            ..verification.clone()
        };
        if checkpoint.tenant != *tenant || checkpoint.chain != TENANT_CHAIN {
            return Ok(mismatch(checkpoint.size, BreakKind::CheckpointMismatch));
        }
        if tree.len() < checkpoint.size {
            return Ok(mismatch(
                tree.len() + 1,
                BreakKind::Truncated {
                    checkpoint_size: checkpoint.size,
                    chain_size: tree.len(),
                },
            ));
        }
        let head_matches = match checkpoint.size {
            0 => checkpoint.head_hash == super::GENESIS_HASH,
            n => tree
                .leaf(n - 1)
                .zip(decode_hash(&checkpoint.head_hash))
                .is_some_and(|(leaf, head)| leaf == leaf_hash(&head)),
        };
        let root_matches = tree
            .root_at(checkpoint.size)
            .is_ok_and(|root| hex::encode(root) == checkpoint.merkle_root);
        if !head_matches || !root_matches {
            return Ok(mismatch(checkpoint.size, BreakKind::CheckpointMismatch));
        }
        Ok(verification)
    }

    /// The tree over the first `size` entries; refuses when the chain breaks before them.
    async fn proof_tree(&self, tenant: &TenantId, size: u64) -> Result<MerkleTree, AuditError> {
        let (tree, verification) = self.merkle_tree(tenant, Some(size)).await?;
        match verification.broken {
            Some(broken) if tree.len() < size => Err(AuditError::Broken(broken)),
            _ => Ok(tree),
        }
    }

    /// The inclusion proof of entry `sequence` in the tree of the first `tree_size` entries.
    pub async fn inclusion_proof(
        &self,
        tenant: &TenantId,
        sequence: u64,
        tree_size: u64,
    ) -> Result<InclusionProof, AuditError> {
        let tree = self.proof_tree(tenant, tree_size).await?;
        let index = sequence.saturating_sub(1);
        let path = tree.inclusion_proof(index, tree_size)?;
        let entry_hash = self
            .store()
            .read_range(tenant, TENANT_CHAIN, sequence, 1)
            .await?
            .pop()
            .map(|e| e.record.entry_hash)
            .unwrap_or_default();
        Ok(InclusionProof {
            sequence,
            tree_size,
            entry_hash,
            path: encode_all(&path),
        })
    }

    /// The consistency proof between the trees of the first `old_size` and `new_size`
    /// entries.
    pub async fn consistency_proof(
        &self,
        tenant: &TenantId,
        old_size: u64,
        new_size: u64,
    ) -> Result<ConsistencyProof, AuditError> {
        let tree = self.proof_tree(tenant, new_size).await?;
        let path = tree.consistency_proof(old_size, new_size)?;
        Ok(ConsistencyProof {
            old_size,
            new_size,
            path: encode_all(&path),
        })
    }
}
