//! The tamper-evident audit trail (seed 000 section 1.6, table `skill_audit_log`), beyond
//! the seed: a Merkle tree over each chain, checkpoints, the usage-log view of seed 003 and
//! seed 000 part 8's success metrics computed from it ([`SuccessMetrics`]).
//!
//! Threat: a record of who ran what with which data that the host (or whoever holds the
//! database) can quietly change, delete, insert, reorder or cut short; concurrent writers
//! forking the chain. Guarantees:
//!
//! * every entry's `entry_hash` is SHA-256 over the [canonical encoding](encoding) of the
//!   tenant, the chain, its sequence number and every field, `previous_hash` included, so a
//!   change anywhere breaks a link that [`AuditTrail::verify`] reports with its kind
//!   ([`BreakKind`]);
//! * one chain per tenant ([`TENANT_CHAIN`]); [`AuditTrail::append`] hashes against the
//!   current head and appends with the store's compare-and-append, retrying on
//!   [`Error::Stale`](skills_store_traits::Error::Stale), so any number of concurrent
//!   appends leave one linear chain;
//! * a [`Checkpoint`] (head hash, size and Merkle root) kept outside the store catches a cut
//!   tail and a re-hashed history, and [`merkle`] proofs show one entry's inclusion or the
//!   consistency of two checkpoints with `O(log n)` hashes.
//!
//! What it cannot do: stop the host from refusing to write a record in the first place, or
//! from rewriting everything after the last checkpoint it was made to sign off; take
//! checkpoints often and keep them where the host cannot change them.
//!
//! ```
//! use std::sync::Arc;
//! use skills_security::audit::AuditTrail;
//! use skills_store_traits::{TenantId, audit::AuditRecord, in_memory::InMemoryAuditStore};
//!
//! # futures::executor::block_on(async {
//! let trail = AuditTrail::new(Arc::new(InMemoryAuditStore::new()));
//! let acme = TenantId::new("acme");
//! for user in ["alice", "bob"] {
//!     let record = AuditRecord::new(user, "pdf", "anthropics/skills/pdf", "verified", "in#", true);
//!     trail.append(&acme, record).await?;
//! }
//! let checkpoint = trail.checkpoint(&acme).await?;
//! assert_eq!(checkpoint.size, 2);
//! assert!(trail.verify(&acme).await?.is_intact());
//! assert!(trail.verify_checkpoint(&acme, &checkpoint).await?.is_intact());
//! # Ok::<(), skills_security::audit::AuditError>(())
//! # }).unwrap();
//! ```

mod checkpoint;
pub mod encoding;
pub mod merkle;
mod metrics;
mod query;
mod record;
mod verify;

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use serde::Serialize;
use skills_store_traits::audit::{AuditEntry, AuditRecord, ChainHead};
use skills_store_traits::{AuditStore, TenantId};

pub use checkpoint::{Checkpoint, ConsistencyProof, InclusionProof};
pub use encoding::{
    ENCODING_VERSION, GENESIS_HASH, canonical_bytes, canonical_json, entry_hash, sha256_hex,
};
pub use merkle::{MerkleError, MerkleTree};
pub use metrics::{
    AUTO_APPROVAL_TARGET, CONTEXT_TARGET_TOKENS, ContextOverhead, LATENCY_SHARE_TARGET,
    LATENCY_TARGET_MS, SUCCESS_RATE_TARGET, SuccessMetrics,
};
pub use query::{AuditFilter, UsageLog, UsageLogEntry, UsageStatus, Viewer};
pub use record::{
    DENIED, PLAN_RECORD_SKILL, PlanEvent, PlanFlag, PolicyFlag, TIMEOUT, UsageFlag, Verdict,
    error_text, execution_record, split_error,
};
pub use verify::{BreakKind, ChainBreak, verify_entries};

use encoding::EntryHasher;

/// The name of the one chain each tenant's trail lives in.
pub const TENANT_CHAIN: &str = "audit";

/// Entries read per store call while verifying.
const PAGE: usize = 4096;

/// How many threads [`AuditTrail::verify`] hashes on at most by default (fewer on a machine
/// with fewer cores): verification is CPU-bound SHA-256, and two cores already double it.
pub const DEFAULT_VERIFY_THREADS: usize = 2;

/// What the audit trail can fail with (a broken chain is not an error: it is the answer of
/// a verification).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum AuditError {
    /// The store failed or refused.
    #[error(transparent)]
    Store(#[from] skills_store_traits::Error),
    /// Every attempt to append lost the race for the head.
    #[error("the audit chain head kept moving: gave up after {attempts} attempts")]
    Contention {
        /// How many attempts were made.
        attempts: usize,
    },
    /// A proof was asked for sizes or positions the chain does not have.
    #[error(transparent)]
    Merkle(#[from] MerkleError),
    /// The chain is broken before the entries a proof needs.
    #[error("the chain is broken: {0}")]
    Broken(ChainBreak),
    /// An entry's hash is not 64 hex characters (the chain is broken there; verify it).
    #[error("entry {sequence} has a malformed entry hash")]
    MalformedHash {
        /// The entry.
        sequence: u64,
    },
}

/// The result of a verification: how much was checked, and the first broken link if any.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct Verification {
    /// Entries checked and found intact.
    pub checked: u64,
    /// The hash of the last intact entry checked (the anchor when none was).
    pub last_hash: String,
    /// The first broken link.
    pub broken: Option<ChainBreak>,
}

impl Verification {
    /// True when nothing was found broken.
    pub fn is_intact(&self) -> bool {
        self.broken.is_none()
    }
}

/// The audit trail over a host's [`AuditStore`]: hashing appends, verification, checkpoints,
/// proofs and queries. Cheap to clone; share one per store.
#[derive(Clone)]
pub struct AuditTrail {
    store: Arc<dyn AuditStore>,
    max_attempts: usize,
    verify_threads: usize,
}

impl std::fmt::Debug for AuditTrail {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AuditTrail")
            .field("max_attempts", &self.max_attempts)
            .field("verify_threads", &self.verify_threads)
            .finish_non_exhaustive()
    }
}

/// Where a walk along a chain is: the next sequence expected, how many entries were
/// accepted, and the last accepted entry's hash.
struct Walk {
    expected: u64,
    checked: u64,
    previous: String,
}

/// Yields once to the executor, whichever it is.
struct YieldNow(bool);

impl Future for YieldNow {
    type Output = ();
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if self.0 {
            Poll::Ready(())
        } else {
            self.0 = true;
            cx.waker().wake_by_ref();
            Poll::Pending
        }
    }
}

impl AuditTrail {
    /// A trail over `store`, retrying a contended append up to 10,000 times.
    pub fn new(store: Arc<dyn AuditStore>) -> AuditTrail {
        AuditTrail {
            store,
            max_attempts: 10_000,
            verify_threads: std::thread::available_parallelism()
                .map_or(1, |n| n.get())
                .min(DEFAULT_VERIFY_THREADS),
        }
    }

    /// A trail over a fresh in-memory store (tests, and hosts that keep no audit).
    pub fn in_memory() -> AuditTrail {
        AuditTrail::new(Arc::new(
            skills_store_traits::in_memory::InMemoryAuditStore::new(),
        ))
    }

    /// The same trail giving up after `attempts` lost races per append (at least 1).
    pub fn with_max_attempts(mut self, attempts: usize) -> AuditTrail {
        self.max_attempts = attempts.max(1);
        self
    }

    /// The same trail hashing on up to `threads` threads while verifying (at least 1; 1
    /// hashes on the caller's thread only). The default is the machine's parallelism, at
    /// most [`DEFAULT_VERIFY_THREADS`]. Extra threads are scoped `std` threads that live for
    /// one page of entries: no runtime is involved, and the result is the same whatever the
    /// number.
    pub fn with_verify_threads(mut self, threads: usize) -> AuditTrail {
        self.verify_threads = threads.max(1);
        self
    }

    /// The store.
    pub fn store(&self) -> &Arc<dyn AuditStore> {
        &self.store
    }

    /// Appends `record` to `tenant`'s chain: sets `previous_hash` to the head's hash (or
    /// [`GENESIS_HASH`]) and `entry_hash` to [`entry_hash`] at the next sequence, and appends
    /// only if the head has not moved meanwhile; otherwise it re-reads the head and tries
    /// again. Whatever `previous_hash`/`entry_hash` the record held are replaced.
    pub async fn append(
        &self,
        tenant: &TenantId,
        mut record: AuditRecord,
    ) -> Result<AuditEntry, AuditError> {
        for attempt in 0..self.max_attempts {
            if attempt > 0 {
                YieldNow(false).await;
            }
            let head = self.store.head(tenant, TENANT_CHAIN).await?;
            let (sequence, previous) = match &head {
                Some(h) => (h.sequence + 1, h.entry_hash.as_str()),
                None => (1, GENESIS_HASH),
            };
            record.previous_hash = previous.to_owned();
            record.entry_hash = entry_hash(tenant, TENANT_CHAIN, sequence, &record);
            let expected = head.as_ref().map(|h| h.entry_hash.as_str());
            match self
                .store
                .append(tenant, TENANT_CHAIN, record.clone(), expected)
                .await
            {
                Ok(entry) => return Ok(entry),
                Err(skills_store_traits::Error::Stale { .. }) => continue,
                Err(e) => return Err(e.into()),
            }
        }
        Err(AuditError::Contention {
            attempts: self.max_attempts,
        })
    }

    /// The chain's head.
    pub async fn head(&self, tenant: &TenantId) -> Result<Option<ChainHead>, AuditError> {
        Ok(self.store.head(tenant, TENANT_CHAIN).await?)
    }

    /// Verifies the whole chain of `tenant`.
    pub async fn verify(&self, tenant: &TenantId) -> Result<Verification, AuditError> {
        self.verify_range(tenant, 1, u64::MAX).await
    }

    /// Verifies the entries with sequence `from..=to` (`to` beyond the head means up to the
    /// head). The link into the range is checked against entry `from - 1` as the store has
    /// it; verify from 1 to trust nothing before.
    pub async fn verify_range(
        &self,
        tenant: &TenantId,
        from: u64,
        to: u64,
    ) -> Result<Verification, AuditError> {
        self.walk(tenant, from.max(1), to, None).await
    }

    /// Reads entries `from..=to` page by page, checking each link; leaves of intact entries
    /// go to `tree` when given.
    async fn walk(
        &self,
        tenant: &TenantId,
        from: u64,
        to: u64,
        mut tree: Option<&mut MerkleTree>,
    ) -> Result<Verification, AuditError> {
        let previous = if from <= 1 {
            GENESIS_HASH.to_owned()
        } else {
            match self
                .store
                .read_range(tenant, TENANT_CHAIN, from - 1, 1)
                .await?
                .pop()
            {
                Some(e) if e.sequence == from - 1 => e.record.entry_hash,
                _ => {
                    return Ok(Verification {
                        checked: 0,
                        last_hash: String::new(),
                        broken: Some(ChainBreak {
                            sequence: from - 1,
                            kind: BreakKind::Deleted { missing: 0 },
                        }),
                    });
                }
            }
        };
        let mut walk = Walk {
            expected: from,
            checked: 0,
            previous,
        };
        // Where the next page starts, in the store's own numbering.
        let mut cursor = from;
        let mut hasher = EntryHasher::new();
        let mut flags = Vec::with_capacity(PAGE);
        while walk.expected <= to {
            let want = usize::try_from(to - walk.expected + 1).map_or(PAGE, |n| n.min(PAGE));
            // The fast pass: entries lent by the store, hashed into reused buffers (on up to
            // `verify_threads` threads), links checked in order; it stops at the first entry
            // that is not intact (or whose hash cannot be a leaf).
            let mut stopped: Option<usize> = None;
            let mut last_sequence = None;
            let mut index = 0usize;
            let visited = {
                let walk = &mut walk;
                let tree = &mut tree;
                let hasher = &mut hasher;
                let flags = &mut flags;
                let threads = self.verify_threads;
                let mut visit = |run: &[AuditEntry]| {
                    verify::link_flags(
                        tenant,
                        TENANT_CHAIN,
                        run,
                        &walk.previous,
                        threads,
                        hasher,
                        flags,
                    );
                    let mut accepted = 0usize;
                    for (entry, &linked) in run.iter().zip(flags.iter()) {
                        let intact = linked && entry.sequence == walk.expected;
                        let leaf_ok = match tree.as_deref_mut() {
                            Some(tree) if intact => {
                                match merkle::decode_hash(&entry.record.entry_hash) {
                                    Some(leaf) => {
                                        tree.push(&leaf);
                                        true
                                    }
                                    None => false,
                                }
                            }
                            _ => true,
                        };
                        if !(intact && leaf_ok) {
                            stopped = Some(index);
                            break;
                        }
                        walk.expected += 1;
                        walk.checked += 1;
                        last_sequence = Some(entry.sequence);
                        index += 1;
                        accepted += 1;
                    }
                    // The last accepted entry's hash, copied once per run.
                    if let Some(last) = accepted.checked_sub(1).and_then(|i| run.get(i)) {
                        walk.previous.clone_from(&last.record.entry_hash);
                    }
                    stopped.is_none()
                };
                self.store
                    .visit_range(tenant, TENANT_CHAIN, cursor, want, &mut visit)
                    .await?
            };
            let page_len = match stopped {
                None => {
                    let Some(last) = last_sequence else { break };
                    cursor = last.saturating_add(1).max(cursor + 1);
                    visited
                }
                Some(at) => {
                    // Something is wrong at `at`: read the page as a copy and finish it the
                    // careful way, which names the break with the entries around it exactly
                    // as a page-by-page reader would.
                    let page = self
                        .store
                        .read_range(tenant, TENANT_CHAIN, cursor, want)
                        .await?;
                    let Some(last) = page.last() else { break };
                    cursor = last.sequence.saturating_add(1).max(cursor + 1);
                    let start = at.min(page.len());
                    if let Some(broken) = self
                        .check_page(tenant, to, &mut walk, &page, start, &mut tree)
                        .await?
                    {
                        return Ok(Verification {
                            checked: walk.checked,
                            last_hash: walk.previous,
                            broken: Some(broken),
                        });
                    }
                    page.len()
                }
            };
            if page_len < want {
                break;
            }
        }
        Ok(Verification {
            checked: walk.checked,
            last_hash: walk.previous,
            broken: None,
        })
    }

    /// Checks `page[start..]` entry by entry (the page as the store returned it, `start` the
    /// first entry not yet accepted): the first break found, diagnosed with its context.
    async fn check_page(
        &self,
        tenant: &TenantId,
        to: u64,
        walk: &mut Walk,
        page: &[AuditEntry],
        start: usize,
        tree: &mut Option<&mut MerkleTree>,
    ) -> Result<Option<ChainBreak>, AuditError> {
        for (i, entry) in page.iter().enumerate().skip(start) {
            if walk.expected > to {
                break;
            }
            if !verify::entry_ok(tenant, TENANT_CHAIN, walk.expected, &walk.previous, entry) {
                let broken = self
                    .diagnose(
                        tenant,
                        walk.expected,
                        &walk.previous,
                        entry,
                        &page[..i],
                        &page[i + 1..],
                    )
                    .await?;
                return Ok(Some(broken));
            }
            if let Some(tree) = tree.as_deref_mut() {
                let leaf = merkle::decode_hash(&entry.record.entry_hash).ok_or(
                    AuditError::MalformedHash {
                        sequence: entry.sequence,
                    },
                )?;
                tree.push(&leaf);
            }
            walk.previous.clone_from(&entry.record.entry_hash);
            walk.expected += 1;
            walk.checked += 1;
        }
        Ok(None)
    }

    /// Classifies a failure with context: the entries around it, reading more from the
    /// store when the page ends too soon.
    async fn diagnose(
        &self,
        tenant: &TenantId,
        expected: u64,
        previous: &str,
        entry: &AuditEntry,
        earlier: &[AuditEntry],
        later: &[AuditEntry],
    ) -> Result<ChainBreak, AuditError> {
        let mut after: Vec<AuditEntry> = later.to_vec();
        if after.len() < PAGE {
            let next = after.last().map_or(entry.sequence, |e| e.sequence) + 1;
            let more = self
                .store
                .read_range(tenant, TENANT_CHAIN, next, PAGE - after.len())
                .await?;
            after.extend(more);
        }
        let mut before: Vec<AuditEntry> = earlier.to_vec();
        if before.len() < PAGE && expected > 1 {
            let start = expected.saturating_sub(PAGE as u64).max(1);
            let first_known = before.first().map_or(expected, |e| e.sequence);
            if start < first_known {
                let mut more = self
                    .store
                    .read_range(
                        tenant,
                        TENANT_CHAIN,
                        start,
                        usize::try_from(first_known - start).unwrap_or(PAGE),
                    )
                    .await?;
                more.append(&mut before);
                before = more;
            }
        }
        Ok(verify::classify(
            tenant,
            TENANT_CHAIN,
            expected,
            previous,
            entry,
            &before,
            &after,
        ))
    }

    /// The Merkle tree over the first `size` entries (the whole chain for `None`), checking
    /// the chain on the way; a broken chain is reported as [`Verification::broken`] and the
    /// tree then holds the entries before the break.
    pub async fn merkle_tree(
        &self,
        tenant: &TenantId,
        size: Option<u64>,
    ) -> Result<(MerkleTree, Verification), AuditError> {
        let mut tree = MerkleTree::new();
        let verification = self
            .walk(tenant, 1, size.unwrap_or(u64::MAX), Some(&mut tree))
            .await?;
        Ok((tree, verification))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use skills_store_traits::in_memory::InMemoryAuditStore;

    fn rec(user: &str, i: u32) -> AuditRecord {
        let mut r = AuditRecord::new(user, "pdf", "p/pdf", "core", format!("in{i}"), true);
        r.timestamp = i64::from(i);
        r
    }

    #[tokio::test]
    async fn appends_link_and_verify_across_pages() {
        let trail = AuditTrail::new(Arc::new(InMemoryAuditStore::new()));
        let t = TenantId::new("t");
        for i in 0..(PAGE as u32 + 10) {
            trail.append(&t, rec("u", i)).await.unwrap();
        }
        let v = trail.verify(&t).await.unwrap();
        assert!(v.is_intact(), "{v:?}");
        assert_eq!(v.checked, PAGE as u64 + 10);
        let part = trail.verify_range(&t, 100, 200).await.unwrap();
        assert_eq!((part.checked, part.broken), (101, None));
        let first = trail
            .store()
            .read_range(&t, TENANT_CHAIN, 1, 1)
            .await
            .unwrap();
        assert_eq!(first[0].record.previous_hash, GENESIS_HASH);
        let empty = trail.verify(&TenantId::new("none")).await.unwrap();
        assert_eq!((empty.checked, empty.is_intact()), (0, true));
    }

    #[tokio::test]
    async fn tenants_have_separate_chains() {
        let trail = AuditTrail::new(Arc::new(InMemoryAuditStore::new()));
        let (a, b) = (TenantId::new("a"), TenantId::new("b"));
        trail.append(&a, rec("u", 1)).await.unwrap();
        let e = trail.append(&b, rec("u", 1)).await.unwrap();
        assert_eq!(e.sequence, 1);
        assert!(trail.verify(&a).await.unwrap().is_intact());
    }
}
