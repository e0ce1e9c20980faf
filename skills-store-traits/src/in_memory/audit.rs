//! The in-memory [`AuditStore`].

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, RwLock};

use crate::audit::{AuditEntry, AuditQuery, AuditRecord, AuditStore, ChainHead};
use crate::error::{Error, Result, Violation};
use crate::tenancy::TenantId;
use crate::time::{Clock, SystemClock};

use super::lock;

/// Audit chains in memory. One lock guards every chain, so the head check and the append of
/// [`AuditStore::append`] are one atomic step.
#[derive(Debug)]
pub struct InMemoryAuditStore {
    clock: Arc<dyn Clock>,
    tenants: RwLock<HashMap<TenantId, TenantAudit>>,
}

#[derive(Debug, Default)]
struct TenantAudit {
    /// Entry `n` of a chain is at index `n - 1`.
    chains: BTreeMap<String, Vec<AuditEntry>>,
    /// Record id to (chain, index), for id uniqueness and [`AuditStore::get_entry`].
    ids: HashMap<String, (String, usize)>,
}

impl InMemoryAuditStore {
    /// An empty store on the system clock.
    pub fn new() -> Self {
        Self::with_clock(Arc::new(SystemClock))
    }

    /// An empty store stamping `recorded_at` from `clock`.
    pub fn with_clock(clock: Arc<dyn Clock>) -> Self {
        InMemoryAuditStore {
            clock,
            tenants: RwLock::new(HashMap::new()),
        }
    }
}

impl Default for InMemoryAuditStore {
    fn default() -> Self {
        Self::new()
    }
}

fn head_of(entries: &[AuditEntry]) -> Option<ChainHead> {
    entries.last().map(|entry| ChainHead {
        sequence: entry.sequence,
        entry_hash: entry.record.entry_hash.clone(),
        record_id: entry.record.id.clone(),
    })
}

#[async_trait::async_trait]
impl AuditStore for InMemoryAuditStore {
    async fn append(
        &self,
        tenant: &TenantId,
        chain: &str,
        record: AuditRecord,
        expected_head: Option<&str>,
    ) -> Result<AuditEntry> {
        if chain.is_empty() {
            return Err(Error::invalid("chain", Violation::Empty));
        }
        record.validate()?;
        let mut tenants = lock::write(&self.tenants)?;
        let audit = tenants.entry(tenant.clone()).or_default();
        let entries = audit.chains.get(chain).map(Vec::as_slice).unwrap_or(&[]);
        let found = entries.last().map(|e| e.record.entry_hash.as_str());
        if found != expected_head {
            return Err(Error::Stale {
                what: "audit chain head",
                expected: expected_head.unwrap_or("<empty chain>").to_owned(),
                found: found.unwrap_or("<empty chain>").to_owned(),
            });
        }
        if audit.ids.contains_key(&record.id) {
            return Err(Error::conflict("audit record id", record.id));
        }
        let index = entries.len();
        let entry = AuditEntry {
            chain: chain.to_owned(),
            sequence: index as u64 + 1,
            recorded_at: self.clock.now(),
            record,
        };
        audit
            .ids
            .insert(entry.record.id.clone(), (chain.to_owned(), index));
        audit
            .chains
            .entry(chain.to_owned())
            .or_default()
            .push(entry.clone());
        Ok(entry)
    }

    async fn head(&self, tenant: &TenantId, chain: &str) -> Result<Option<ChainHead>> {
        let tenants = lock::read(&self.tenants)?;
        Ok(tenants
            .get(tenant)
            .and_then(|audit| audit.chains.get(chain))
            .and_then(|entries| head_of(entries)))
    }

    async fn read_range(
        &self,
        tenant: &TenantId,
        chain: &str,
        from_sequence: u64,
        limit: usize,
    ) -> Result<Vec<AuditEntry>> {
        let tenants = lock::read(&self.tenants)?;
        let Some(entries) = tenants.get(tenant).and_then(|a| a.chains.get(chain)) else {
            return Ok(Vec::new());
        };
        // Sequence n sits at index n - 1; sequence 0 precedes the first entry.
        let start = usize::try_from(from_sequence.saturating_sub(1)).unwrap_or(usize::MAX);
        Ok(entries.iter().skip(start).take(limit).cloned().collect())
    }

    async fn visit_range(
        &self,
        tenant: &TenantId,
        chain: &str,
        from_sequence: u64,
        limit: usize,
        visit: &mut (dyn for<'e> FnMut(&'e [AuditEntry]) -> bool + Send),
    ) -> Result<usize> {
        // The entries are lent under the read lock: no page is copied (a verification of a
        // long chain spent much of its time cloning pages). Appends wait for the visit.
        let tenants = lock::read(&self.tenants)?;
        let Some(entries) = tenants.get(tenant).and_then(|a| a.chains.get(chain)) else {
            return Ok(0);
        };
        // Sequence n sits at index n - 1; sequence 0 precedes the first entry.
        let start = usize::try_from(from_sequence.saturating_sub(1)).unwrap_or(usize::MAX);
        let lent = entries
            .get(start..)
            .map_or(&[][..], |rest| &rest[..limit.min(rest.len())]);
        if !lent.is_empty() {
            visit(lent);
        }
        Ok(lent.len())
    }

    async fn get_entry(&self, tenant: &TenantId, record_id: &str) -> Result<Option<AuditEntry>> {
        let tenants = lock::read(&self.tenants)?;
        Ok(tenants.get(tenant).and_then(|audit| {
            let (chain, index) = audit.ids.get(record_id)?;
            audit.chains.get(chain)?.get(*index).cloned()
        }))
    }

    async fn query(&self, tenant: &TenantId, query: &AuditQuery) -> Result<Vec<AuditEntry>> {
        let tenants = lock::read(&self.tenants)?;
        let Some(audit) = tenants.get(tenant) else {
            return Ok(Vec::new());
        };
        // BTreeMap order of chains and push order within one give (chain, sequence) order.
        Ok(audit
            .chains
            .values()
            .flatten()
            .filter(|entry| query.matches(entry))
            .take(query.limit.unwrap_or(usize::MAX))
            .cloned()
            .collect())
    }

    async fn chains(&self, tenant: &TenantId) -> Result<Vec<String>> {
        let tenants = lock::read(&self.tenants)?;
        Ok(tenants
            .get(tenant)
            .map(|audit| audit.chains.keys().cloned().collect())
            .unwrap_or_default())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::ManualClock;

    fn record(id: &str, entry_hash: &str) -> AuditRecord {
        let mut record = AuditRecord::new("u", "pdf", "p/pdf", "core", "in", true);
        record.id = id.into();
        record.entry_hash = entry_hash.into();
        record
    }

    #[tokio::test]
    async fn appends_number_entries_and_stamp_the_store_clock() {
        let clock = ManualClock::new(42);
        let store = InMemoryAuditStore::with_clock(clock.clone());
        let t = TenantId::new("t");
        let first = store
            .append(&t, "c", record("a", "h1"), None)
            .await
            .unwrap();
        clock.advance(1);
        let second = store
            .append(&t, "c", record("b", "h2"), Some("h1"))
            .await
            .unwrap();
        assert_eq!((first.sequence, first.recorded_at), (1, 42));
        assert_eq!((second.sequence, second.recorded_at), (2, 43));
        let range = store.read_range(&t, "c", 0, 10).await.unwrap();
        assert_eq!(range, vec![first, second.clone()]);
        assert_eq!(store.get_entry(&t, "b").await.unwrap(), Some(second));
    }

    #[tokio::test]
    async fn a_refused_append_leaves_nothing_behind() {
        let store = InMemoryAuditStore::new();
        let t = TenantId::new("t");
        store
            .append(&t, "c", record("a", "h1"), None)
            .await
            .unwrap();
        let dup = store.append(&t, "c", record("a", "h2"), Some("h1")).await;
        assert!(matches!(dup, Err(Error::Conflict { .. })));
        let empty = store.append(&t, "", record("b", "h2"), Some("h1")).await;
        assert!(matches!(empty, Err(Error::Invalid { .. })));
        assert_eq!(store.head(&t, "c").await.unwrap().unwrap().sequence, 1);
        assert_eq!(store.chains(&t).await.unwrap(), vec!["c".to_owned()]);
    }
}
