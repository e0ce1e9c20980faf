//! Checking a chain: the first broken link and why.
//!
//! Threat: someone with write access to the store (a database administrator, a compromised
//! host) changing, deleting, inserting or reordering audit entries. Guarantee: every entry
//! must hash to its `entry_hash` under the canonical encoding (which binds its sequence
//! number), name its predecessor's hash as `previous_hash`, and carry the next sequence
//! number; the first entry that does not is reported with the kind of tampering its links
//! show. What a hash chain alone cannot show (a re-hashed tail, a cut tail) is caught by
//! [`Checkpoint`](super::Checkpoint)s kept outside the store.
//!
//! How the kinds are told apart, at the first entry `e` (expected sequence `s`) that fails:
//!
//! | what the links show | reported |
//! |---|---|
//! | `e` links to an entry presented *after* it | [`BreakKind::Reordered`] at `s` |
//! | the entry after `e` links to `e`'s predecessor | [`BreakKind::Inserted`] at `s` |
//! | `e` links to an earlier entry `j` than its predecessor | [`BreakKind::Inserted`] at `j + 1` |
//! | `e` links to an unknown hash and its sequence skips ahead | [`BreakKind::Deleted`] at `s` |
//! | `e` links to an unknown hash, its own hash is intact | [`BreakKind::Modified`] at `s - 1` (changed and re-hashed) |
//! | `e`'s hash does not match its content | [`BreakKind::Modified`] at `s` |
//! | content and links intact, sequence wrong | [`BreakKind::Misnumbered`] at `s` |

use std::fmt;

use serde::Serialize;
use skills_store_traits::TenantId;
use skills_store_traits::audit::AuditEntry;

use super::encoding::{EntryHasher, entry_hash};

/// What kind of tampering a broken link shows.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
#[non_exhaustive]
pub enum BreakKind {
    /// The entry's content no longer hashes to its `entry_hash` (a field was changed), or it
    /// was changed and re-hashed so its successor's link no longer matches.
    Modified,
    /// Entries are missing here: the entry found names a predecessor that is not there.
    Deleted {
        /// How many, when the sequence numbers show it (0 when they do not).
        missing: u64,
    },
    /// The entry here is not part of the chain: its neighbours link past it.
    Inserted,
    /// The entry here is out of place: it links to an entry that comes after it.
    Reordered {
        /// The sequence of the entry it links to (it belongs right after that one).
        belongs_after: u64,
    },
    /// Content and links are intact but the store numbers the entry wrongly.
    Misnumbered {
        /// The sequence the store gave it.
        found: u64,
    },
    /// The chain is shorter than a checkpoint says it was.
    Truncated {
        /// The checkpoint's size.
        checkpoint_size: u64,
        /// The chain's size now.
        chain_size: u64,
    },
    /// The entry at a checkpoint's size, or the Merkle root over the entries up to it, is not
    /// what the checkpoint recorded: history before the checkpoint was rewritten.
    CheckpointMismatch,
}

/// The first broken link of a chain.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ChainBreak {
    /// The position (sequence number) where the chain breaks.
    pub sequence: u64,
    /// Why.
    pub kind: BreakKind,
}

impl fmt::Display for ChainBreak {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = self.sequence;
        match &self.kind {
            BreakKind::Modified => write!(f, "entry {s} was modified"),
            BreakKind::Deleted { missing: 0 } => write!(f, "entries are missing before {s}"),
            BreakKind::Deleted { missing } => {
                write!(f, "{missing} entries are missing at {s}")
            }
            BreakKind::Inserted => write!(f, "entry {s} was inserted"),
            BreakKind::Reordered { belongs_after } => {
                write!(
                    f,
                    "entry {s} is out of order (it belongs after entry {belongs_after})"
                )
            }
            BreakKind::Misnumbered { found } => {
                write!(f, "entry {s} is numbered {found}")
            }
            BreakKind::Truncated {
                checkpoint_size,
                chain_size,
            } => write!(
                f,
                "the chain was truncated: {chain_size} entries, the checkpoint has {checkpoint_size}"
            ),
            BreakKind::CheckpointMismatch => {
                write!(f, "history up to entry {s} differs from the checkpoint")
            }
        }
    }
}

/// Runs shorter than this are hashed on the calling thread: a thread costs more than it
/// saves on them.
const PARALLEL_MIN: usize = 256;

/// Whether each entry of `run` hashes to its own `entry_hash` (at its own sequence) and
/// names its predecessor's hash (`anchor` for the first, the entry before it in `run` for the
/// others) as `previous_hash`, into `flags` (cleared first). Checking the link right after
/// the hash, while the entry is still in cache, is what makes a long chain cheap to walk.
///
/// With `threads > 1` the run is split into that many parts, each checked on its own scoped
/// thread (the caller's thread takes the first part); a thread that cannot be started, or
/// fails, leaves its part to the caller's thread, so the answer never depends on threads.
pub(crate) fn link_flags(
    tenant: &TenantId,
    chain: &str,
    run: &[AuditEntry],
    anchor: &str,
    threads: usize,
    hasher: &mut EntryHasher,
    flags: &mut Vec<bool>,
) {
    flags.clear();
    let check =
        |hasher: &mut EntryHasher, part: &[AuditEntry], anchor: &str, out: &mut Vec<bool>| {
            let mut previous = anchor;
            out.extend(part.iter().map(|e| {
                let r = &e.record;
                let ok = r.previous_hash == previous
                    && hasher.matches(tenant, chain, e.sequence, r, &r.entry_hash);
                previous = &r.entry_hash;
                ok
            }));
        };
    if threads <= 1 || run.len() < PARALLEL_MIN {
        check(hasher, run, anchor, flags);
        return;
    }
    let size = run.len().div_ceil(threads);
    let (first, rest) = run.split_at(size.min(run.len()));
    std::thread::scope(|scope| {
        let mut workers = Vec::new();
        let mut before = first.last();
        for part in rest.chunks(size) {
            let link = before.map_or(anchor, |e| e.record.entry_hash.as_str());
            let handle = std::thread::Builder::new().spawn_scoped(scope, move || {
                let mut own = EntryHasher::new();
                let mut out = Vec::with_capacity(part.len());
                check(&mut own, part, link, &mut out);
                out
            });
            workers.push((part, link, handle.ok()));
            before = part.last();
        }
        check(hasher, first, anchor, flags);
        for (part, link, handle) in workers {
            match handle.map(|h| h.join()) {
                Some(Ok(out)) if out.len() == part.len() => flags.extend(out),
                _ => check(hasher, part, link, flags),
            }
        }
    });
}

/// True when `entry` is the intact successor of `previous_hash` at `expected`.
pub(crate) fn entry_ok(
    tenant: &TenantId,
    chain: &str,
    expected: u64,
    previous_hash: &str,
    entry: &AuditEntry,
) -> bool {
    entry.sequence == expected
        && entry.record.previous_hash == previous_hash
        && entry_hash(tenant, chain, entry.sequence, &entry.record) == entry.record.entry_hash
}

/// Classifies the failure of `entry` at `expected`, whose predecessor's hash is
/// `previous_hash`; `earlier` are accepted entries before it, `later` the entries presented
/// after it.
pub(crate) fn classify(
    tenant: &TenantId,
    chain: &str,
    expected: u64,
    previous_hash: &str,
    entry: &AuditEntry,
    earlier: &[AuditEntry],
    later: &[AuditEntry],
) -> ChainBreak {
    let record = &entry.record;
    let at = |kind| ChainBreak {
        sequence: expected,
        kind,
    };
    let content_ok = entry_hash(tenant, chain, entry.sequence, record) == record.entry_hash;
    if record.previous_hash != previous_hash {
        if let Some(j) = later
            .iter()
            .find(|l| l.record.entry_hash == record.previous_hash)
        {
            return at(BreakKind::Reordered {
                belongs_after: j.sequence,
            });
        }
        if later
            .first()
            .is_some_and(|next| next.record.previous_hash == previous_hash)
        {
            return at(BreakKind::Inserted);
        }
        if let Some(j) = earlier
            .iter()
            .rev()
            .find(|e| e.record.entry_hash == record.previous_hash)
        {
            return ChainBreak {
                sequence: j.sequence + 1,
                kind: BreakKind::Inserted,
            };
        }
        if entry.sequence > expected {
            return at(BreakKind::Deleted {
                missing: entry.sequence - expected,
            });
        }
        if content_ok && expected > 1 {
            return ChainBreak {
                sequence: expected - 1,
                kind: BreakKind::Modified,
            };
        }
        return at(BreakKind::Modified);
    }
    if !content_ok {
        if entry.sequence != expected
            && entry_hash(tenant, chain, expected, record) == record.entry_hash
        {
            return at(BreakKind::Misnumbered {
                found: entry.sequence,
            });
        }
        return at(BreakKind::Modified);
    }
    at(BreakKind::Misnumbered {
        found: entry.sequence,
    })
}

/// Verifies `entries` as the consecutive part of `chain` starting at sequence `first`,
/// whose predecessor's hash is `anchor` ([`GENESIS_HASH`](super::GENESIS_HASH) when `first`
/// is 1). Returns the last entry's hash (the anchor itself for no entries) or the first
/// break. This works on exported entries alone: an auditor needs no store.
///
/// ```
/// use skills_security::audit::{GENESIS_HASH, entry_hash, verify_entries};
/// use skills_store_traits::{TenantId, audit::{AuditEntry, AuditRecord}};
///
/// let tenant = TenantId::new("acme");
/// let mut record = AuditRecord::new("alice", "pdf", "p/pdf", "core", "in", true);
/// record.previous_hash = GENESIS_HASH.into();
/// record.entry_hash = entry_hash(&tenant, "audit", 1, &record);
/// let entry = AuditEntry { chain: "audit".into(), sequence: 1, recorded_at: 0, record };
/// assert!(verify_entries(&tenant, "audit", 1, GENESIS_HASH, &[entry.clone()]).is_ok());
///
/// let mut forged = entry;
/// forged.record.success = false;
/// let broken = verify_entries(&tenant, "audit", 1, GENESIS_HASH, &[forged]).unwrap_err();
/// assert_eq!(broken.to_string(), "entry 1 was modified");
/// ```
pub fn verify_entries(
    tenant: &TenantId,
    chain: &str,
    first: u64,
    anchor: &str,
    entries: &[AuditEntry],
) -> Result<String, ChainBreak> {
    let mut previous = anchor;
    for (i, entry) in entries.iter().enumerate() {
        let expected = first + i as u64;
        if !entry_ok(tenant, chain, expected, previous, entry) {
            return Err(classify(
                tenant,
                chain,
                expected,
                previous,
                entry,
                &entries[..i],
                &entries[i + 1..],
            ));
        }
        previous = &entry.record.entry_hash;
    }
    Ok(previous.to_owned())
}
