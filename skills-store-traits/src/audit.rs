//! The audit trail: append-only chains of skill-execution records (seed 000 section 1.6,
//! table `skill_audit_log`).
//!
//! A chain is a named, ordered list of records within a tenant (the seed keeps one chain per
//! user; the chain name is the caller's choice). The store numbers entries 1, 2, 3, ... with no
//! gaps and never updates or deletes one. Computing and checking the hashes is the business of
//! `skills-security`; the store stores `previous_hash` and `entry_hash` verbatim and offers the
//! primitive that logic needs: [`AuditStore::append`] is a compare-and-append on the chain's
//! head, so two concurrent writers can never fork a chain: the loser gets [`Error::Stale`]
//! and retries on the new head.
//!
//! [`Error::Stale`]: crate::Error::Stale

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result, Violation};
use crate::tenancy::{TenantId, UserId};
use crate::time::{Clock, SystemClock, Timestamp, new_id};

/// One audited skill operation: the fields of seed 000's `SkillAuditEntry`.
///
/// The record is hashed by its author before it is appended, so the store keeps it exactly as
/// given (including `id` and `timestamp`); the store's own time is [`AuditEntry::recorded_at`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct AuditRecord {
    /// The record's id, unique within the tenant.
    pub id: String,
    /// When the operation happened, as hashed by the author.
    pub timestamp: Timestamp,
    /// The user the skill ran for.
    pub user_id: UserId,
    /// The skill's id.
    pub skill_id: String,
    /// The skill's path (`anthropics/skills/pdf`).
    pub skill_path: String,
    /// The skill's trust level at execution time.
    pub skill_trust_level: String,
    /// The skill's version.
    pub skill_version: Option<String>,
    /// The task or goal the execution belongs to.
    pub task_id: Option<String>,
    /// The agent that invoked the skill.
    pub agent_id: Option<String>,
    /// Why the skill was used.
    pub trigger_reason: Option<String>,
    /// The data classes the skill asked for.
    pub data_classes_requested: Vec<String>,
    /// The data classes it was given.
    pub data_classes_granted: Vec<String>,
    /// Whether any data was redacted.
    pub data_redacted: bool,
    /// The tokenization tokens used.
    pub tokens_used: Vec<String>,
    /// SHA-256 of the sanitized input.
    pub input_hash: String,
    /// SHA-256 of the output.
    pub output_hash: Option<String>,
    /// How long the execution took.
    pub execution_time_ms: Option<u64>,
    /// Whether it succeeded.
    pub success: bool,
    /// The error, when it failed.
    pub error: Option<String>,
    /// The sandbox configuration used (its shape belongs to `skills-security`).
    pub sandbox_config: serde_json::Value,
    /// Security events during the execution.
    pub security_flags: Vec<String>,
    /// The hash of the previous entry of the chain (the genesis value is the author's choice).
    pub previous_hash: String,
    /// This entry's hash.
    pub entry_hash: String,
}

impl AuditRecord {
    /// A record with a fresh id, the system time, and every optional field empty; set the
    /// rest (at least `entry_hash`) before appending.
    pub fn new(
        user_id: impl Into<UserId>,
        skill_id: impl Into<String>,
        skill_path: impl Into<String>,
        skill_trust_level: impl Into<String>,
        input_hash: impl Into<String>,
        success: bool,
    ) -> Self {
        AuditRecord {
            id: new_id(),
            timestamp: SystemClock.now(),
            user_id: user_id.into(),
            skill_id: skill_id.into(),
            skill_path: skill_path.into(),
            skill_trust_level: skill_trust_level.into(),
            skill_version: None,
            task_id: None,
            agent_id: None,
            trigger_reason: None,
            data_classes_requested: Vec::new(),
            data_classes_granted: Vec::new(),
            data_redacted: false,
            tokens_used: Vec::new(),
            input_hash: input_hash.into(),
            output_hash: None,
            execution_time_ms: None,
            success,
            error: None,
            sandbox_config: serde_json::Value::Null,
            security_flags: Vec::new(),
            previous_hash: String::new(),
            entry_hash: String::new(),
        }
    }

    /// Checks the required fields (the `NOT NULL` columns of `skill_audit_log`), as every
    /// [`AuditStore::append`] does.
    pub fn validate(&self) -> Result<()> {
        let required = [
            ("id", self.id.as_str()),
            ("user_id", self.user_id.as_str()),
            ("skill_id", self.skill_id.as_str()),
            ("skill_path", self.skill_path.as_str()),
            ("skill_trust_level", self.skill_trust_level.as_str()),
            ("input_hash", self.input_hash.as_str()),
            ("entry_hash", self.entry_hash.as_str()),
        ];
        match required.iter().find(|(_, value)| value.is_empty()) {
            Some((field, _)) => Err(Error::invalid(*field, Violation::Empty)),
            None => Ok(()),
        }
    }
}

/// A record as stored: its place in its chain and when the store took it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AuditEntry {
    /// The chain it belongs to.
    pub chain: String,
    /// Its position: 1 for the first entry, then contiguous.
    pub sequence: u64,
    /// When the store appended it (the store's clock).
    pub recorded_at: Timestamp,
    /// The record, exactly as appended.
    pub record: AuditRecord,
}

/// The latest entry of a chain. Sequences are contiguous from 1, so `sequence` is also the
/// chain's length.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChainHead {
    /// The head's sequence number.
    pub sequence: u64,
    /// The head's `entry_hash`: what the next append must name as its expected head.
    pub entry_hash: String,
    /// The head's record id.
    pub record_id: String,
}

/// A position in (chain, sequence) order, for paging through [`AuditStore::query`].
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct AuditCursor {
    /// The chain of the last entry seen.
    pub chain: String,
    /// Its sequence.
    pub sequence: u64,
}

impl AuditCursor {
    /// The cursor just after `entry`.
    pub fn after(entry: &AuditEntry) -> Self {
        AuditCursor {
            chain: entry.chain.clone(),
            sequence: entry.sequence,
        }
    }
}

/// Which entries [`AuditStore::query`] returns; every condition set must hold. Built with
/// [`AuditQuery::new`] and the setters.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct AuditQuery {
    /// Only this chain.
    pub chain: Option<String>,
    /// Only records of this user.
    pub user: Option<UserId>,
    /// Only records of this skill.
    pub skill_id: Option<String>,
    /// Only successful (`true`) or failed (`false`) executions.
    pub success: Option<bool>,
    /// Only records whose `timestamp` is at or after this.
    pub from: Option<Timestamp>,
    /// Only records whose `timestamp` is before this.
    pub until: Option<Timestamp>,
    /// Only entries after this position in (chain, sequence) order.
    pub after: Option<AuditCursor>,
    /// At most this many entries.
    pub limit: Option<usize>,
}

impl AuditQuery {
    /// A query matching every entry of the tenant.
    pub fn new() -> Self {
        AuditQuery::default()
    }

    /// Only `chain`.
    pub fn chain(mut self, chain: impl Into<String>) -> Self {
        self.chain = Some(chain.into());
        self
    }

    /// Only records of `user`.
    pub fn user(mut self, user: impl Into<UserId>) -> Self {
        self.user = Some(user.into());
        self
    }

    /// Only records of `skill_id`.
    pub fn skill_id(mut self, skill_id: impl Into<String>) -> Self {
        self.skill_id = Some(skill_id.into());
        self
    }

    /// Only successful or only failed executions.
    pub fn success(mut self, success: bool) -> Self {
        self.success = Some(success);
        self
    }

    /// Only records with `from <= timestamp < until`.
    pub fn between(mut self, from: Timestamp, until: Timestamp) -> Self {
        self.from = Some(from);
        self.until = Some(until);
        self
    }

    /// Only entries after `cursor`.
    pub fn after(mut self, cursor: AuditCursor) -> Self {
        self.after = Some(cursor);
        self
    }

    /// At most `limit` entries.
    pub fn limit(mut self, limit: usize) -> Self {
        self.limit = Some(limit);
        self
    }

    /// Whether `entry` meets every condition but the limit.
    pub fn matches(&self, entry: &AuditEntry) -> bool {
        let record = &entry.record;
        self.chain.as_ref().is_none_or(|c| *c == entry.chain)
            && self.user.as_ref().is_none_or(|u| *u == record.user_id)
            && self.skill_id.as_ref().is_none_or(|s| *s == record.skill_id)
            && self.success.is_none_or(|s| s == record.success)
            && self.from.is_none_or(|from| record.timestamp >= from)
            && self.until.is_none_or(|until| record.timestamp < until)
            && self.after.as_ref().is_none_or(|after| {
                (entry.chain.as_str(), entry.sequence) > (after.chain.as_str(), after.sequence)
            })
    }
}

/// Append-only storage of audit chains. There is no update and no delete.
///
/// ```
/// use skills_store_traits::audit::{AuditQuery, AuditRecord};
/// use skills_store_traits::{AuditStore, Error, TenantId, in_memory::InMemoryAuditStore};
///
/// # futures::executor::block_on(async {
/// let store = InMemoryAuditStore::new();
/// let tenant = TenantId::new("acme");
/// let mut record = AuditRecord::new("alice", "pdf", "anthropics/skills/pdf", "verified", "in#", true);
/// record.previous_hash = "genesis".into();
/// record.entry_hash = "h1".into();
/// let first = store.append(&tenant, "alice", record.clone(), None).await?;
/// assert_eq!(first.sequence, 1);
///
/// // A writer that still believes the chain is empty loses: the chain never forks.
/// record.id = "another-id".into();
/// let lost = store.append(&tenant, "alice", record, None).await;
/// assert!(matches!(lost, Err(Error::Stale { .. })));
///
/// assert_eq!(store.head(&tenant, "alice").await?.map(|h| h.entry_hash), Some("h1".into()));
/// assert_eq!(store.query(&tenant, &AuditQuery::new().user("alice")).await?.len(), 1);
/// # Ok::<(), Error>(())
/// # }).unwrap();
/// ```
#[async_trait::async_trait]
pub trait AuditStore: Send + Sync {
    /// Appends `record` to `chain` if the chain's head is still `expected_head` (the head's
    /// `entry_hash`, or `None` for an empty chain), as the next sequence number.
    ///
    /// Refuses with [`Error::Stale`] when the head moved, [`Error::Conflict`] when the tenant
    /// already has a record with this id, and [`Error::Invalid`] for an empty `chain` or a
    /// record failing [`AuditRecord::validate`]; a refusal appends nothing.
    async fn append(
        &self,
        tenant: &TenantId,
        chain: &str,
        record: AuditRecord,
        expected_head: Option<&str>,
    ) -> Result<AuditEntry>;

    /// The chain's latest entry, or `None` for a chain with no entries.
    async fn head(&self, tenant: &TenantId, chain: &str) -> Result<Option<ChainHead>>;

    /// Up to `limit` entries of `chain` with `sequence >= from_sequence`, in sequence order.
    async fn read_range(
        &self,
        tenant: &TenantId,
        chain: &str,
        from_sequence: u64,
        limit: usize,
    ) -> Result<Vec<AuditEntry>>;

    /// Lends `visit` the entries [`read_range`](AuditStore::read_range) would return for
    /// the same arguments, as one or more consecutive slices in sequence order, stopping
    /// after a slice for which it returns `false`; returns how many entries it lent. For
    /// readers of long chains (verification) that look at each entry once: a store keeping
    /// entries in memory lends them instead of copying them, and a slice lets the reader
    /// split its work.
    ///
    /// `visit` may run while the store holds a lock on its entries: it must not call the
    /// store, and appends may wait until it returns.
    ///
    /// The default reads the range with `read_range` and lends the copy, so every store has
    /// it; stores override it when they can avoid the copy.
    async fn visit_range(
        &self,
        tenant: &TenantId,
        chain: &str,
        from_sequence: u64,
        limit: usize,
        visit: &mut (dyn for<'e> FnMut(&'e [AuditEntry]) -> bool + Send),
    ) -> Result<usize> {
        let entries = self.read_range(tenant, chain, from_sequence, limit).await?;
        if !entries.is_empty() {
            visit(&entries);
        }
        Ok(entries.len())
    }

    /// The entry holding the record with this id.
    async fn get_entry(&self, tenant: &TenantId, record_id: &str) -> Result<Option<AuditEntry>>;

    /// The tenant's entries matching `query`, in (chain, sequence) order.
    async fn query(&self, tenant: &TenantId, query: &AuditQuery) -> Result<Vec<AuditEntry>>;

    /// The names of the tenant's non-empty chains, sorted.
    async fn chains(&self, tenant: &TenantId) -> Result<Vec<String>>;
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(chain: &str, sequence: u64, user: &str, timestamp: Timestamp) -> AuditEntry {
        let mut record = AuditRecord::new(user, "pdf", "p/pdf", "core", "in", true);
        record.timestamp = timestamp;
        AuditEntry {
            chain: chain.into(),
            sequence,
            recorded_at: 0,
            record,
        }
    }

    #[test]
    fn validate_names_the_first_empty_required_field() {
        let mut record = AuditRecord::new("u", "pdf", "p/pdf", "core", "in", true);
        let err = record.validate().unwrap_err();
        assert!(
            matches!(err, Error::Invalid { ref field, violation: Violation::Empty } if field == "entry_hash")
        );
        record.entry_hash = "h".into();
        record.skill_path.clear();
        let err = record.validate().unwrap_err();
        assert!(matches!(err, Error::Invalid { ref field, .. } if field == "skill_path"));
    }

    #[test]
    fn query_conditions_combine() {
        let e = entry("c", 3, "bob", 100);
        assert!(AuditQuery::new().matches(&e));
        assert!(AuditQuery::new().chain("c").user("bob").matches(&e));
        assert!(!AuditQuery::new().user("alice").matches(&e));
        assert!(AuditQuery::new().between(100, 101).matches(&e));
        assert!(!AuditQuery::new().between(0, 100).matches(&e));
        let cursor = |chain: &str, sequence| AuditCursor {
            chain: chain.into(),
            sequence,
        };
        assert!(AuditQuery::new().after(cursor("c", 2)).matches(&e));
        assert!(!AuditQuery::new().after(cursor("c", 3)).matches(&e));
        assert!(AuditQuery::new().after(cursor("b", 9)).matches(&e));
        assert!(!AuditQuery::new().after(cursor("d", 0)).matches(&e));
    }

    #[test]
    fn records_round_trip_through_json() {
        let e = entry("c", 1, "bob", 5);
        let text = serde_json::to_string(&e).unwrap();
        assert_eq!(serde_json::from_str::<AuditEntry>(&text).unwrap(), e);
    }
}
