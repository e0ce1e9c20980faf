//! The in-memory [`LearningStore`].

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, RwLock};

use crate::error::{Error, Result};
use crate::learning::{
    ExecutedSequence, LearningPattern, LearningStore, NewExecutedSequence, NewPattern, PatternKind,
    PatternStatus, apply_status_change, check_status_change, pattern_order,
};
use crate::tenancy::TenantId;
use crate::time::{Clock, SystemClock, Timestamp, new_id};

use super::lock;

/// Sequences and patterns in memory, one entry per tenant. Sequences are kept in the order
/// they were recorded, which breaks ties between equal timestamps.
#[derive(Debug)]
pub struct InMemoryLearningStore {
    clock: Arc<dyn Clock>,
    tenants: RwLock<HashMap<TenantId, Tenant>>,
}

#[derive(Debug, Default)]
struct Tenant {
    sequences: Vec<ExecutedSequence>,
    /// Patterns by id.
    patterns: HashMap<String, LearningPattern>,
    /// Pattern ids by hash.
    by_hash: BTreeMap<String, String>,
}

impl InMemoryLearningStore {
    /// An empty store on the system clock.
    pub fn new() -> Self {
        Self::with_clock(Arc::new(SystemClock))
    }

    /// An empty store stamping times from `clock`.
    pub fn with_clock(clock: Arc<dyn Clock>) -> Self {
        InMemoryLearningStore {
            clock,
            tenants: RwLock::new(HashMap::new()),
        }
    }
}

impl Default for InMemoryLearningStore {
    fn default() -> Self {
        Self::new()
    }
}

#[async_trait::async_trait]
impl LearningStore for InMemoryLearningStore {
    async fn record_sequence(
        &self,
        tenant: &TenantId,
        sequence: NewExecutedSequence,
    ) -> Result<ExecutedSequence> {
        sequence.validate()?;
        let mut tenants = lock::write(&self.tenants)?;
        // The clock is read under the lock, so recording order and time order agree.
        let record = sequence.into_record(new_id(), tenant, self.clock.now());
        tenants
            .entry(tenant.clone())
            .or_default()
            .sequences
            .push(record.clone());
        Ok(record)
    }

    async fn list_sequences(
        &self,
        tenant: &TenantId,
        since: Option<Timestamp>,
        limit: Option<usize>,
    ) -> Result<Vec<ExecutedSequence>> {
        let tenants = lock::read(&self.tenants)?;
        let mut sequences: Vec<ExecutedSequence> = tenants
            .get(tenant)
            .into_iter()
            .flat_map(|t| t.sequences.iter())
            .filter(|s| since.is_none_or(|since| s.recorded_at >= since))
            .cloned()
            .collect();
        drop(tenants);
        // Stable: equal times keep recording order.
        sequences.sort_by_key(|s| s.recorded_at);
        sequences.truncate(limit.unwrap_or(usize::MAX));
        Ok(sequences)
    }

    async fn prune_sequences(&self, tenant: &TenantId, before: Timestamp) -> Result<u64> {
        let mut tenants = lock::write(&self.tenants)?;
        let Some(stored) = tenants.get_mut(tenant) else {
            return Ok(0);
        };
        let kept_before = stored.sequences.len();
        stored.sequences.retain(|s| s.recorded_at >= before);
        Ok((kept_before - stored.sequences.len()) as u64)
    }

    async fn upsert_pattern(
        &self,
        tenant: &TenantId,
        pattern: NewPattern,
    ) -> Result<LearningPattern> {
        pattern.validate()?;
        let mut tenants = lock::write(&self.tenants)?;
        let now = self.clock.now();
        let stored = tenants.entry(tenant.clone()).or_default();
        if let Some(id) = stored.by_hash.get(&pattern.pattern_hash) {
            let existing = stored
                .patterns
                .get_mut(id)
                .ok_or_else(|| Error::backend("learning pattern index out of step"))?;
            pattern.refresh(existing, now)?;
            return Ok(existing.clone());
        }
        let record = pattern.into_record(new_id(), tenant, now);
        stored
            .by_hash
            .insert(record.pattern_hash.clone(), record.id.clone());
        stored.patterns.insert(record.id.clone(), record.clone());
        Ok(record)
    }

    async fn get_pattern(&self, tenant: &TenantId, id: &str) -> Result<Option<LearningPattern>> {
        let tenants = lock::read(&self.tenants)?;
        Ok(tenants
            .get(tenant)
            .and_then(|t| t.patterns.get(id))
            .cloned())
    }

    async fn find_pattern_by_hash(
        &self,
        tenant: &TenantId,
        pattern_hash: &str,
    ) -> Result<Option<LearningPattern>> {
        let tenants = lock::read(&self.tenants)?;
        Ok(tenants.get(tenant).and_then(|t| {
            t.by_hash
                .get(pattern_hash)
                .and_then(|id| t.patterns.get(id))
                .cloned()
        }))
    }

    async fn list_patterns(
        &self,
        tenant: &TenantId,
        status: Option<PatternStatus>,
        kind: Option<PatternKind>,
    ) -> Result<Vec<LearningPattern>> {
        let tenants = lock::read(&self.tenants)?;
        let mut patterns: Vec<LearningPattern> = tenants
            .get(tenant)
            .into_iter()
            .flat_map(|t| t.patterns.values())
            .filter(|p| status.is_none_or(|s| p.status == s) && kind.is_none_or(|k| p.kind == k))
            .cloned()
            .collect();
        drop(tenants);
        patterns.sort_by(pattern_order);
        Ok(patterns)
    }

    async fn set_pattern_status(
        &self,
        tenant: &TenantId,
        id: &str,
        expected: PatternStatus,
        to: PatternStatus,
        draft_skill_id: Option<String>,
    ) -> Result<LearningPattern> {
        check_status_change(expected, to, draft_skill_id.as_deref())?;
        let mut tenants = lock::write(&self.tenants)?;
        let now = self.clock.now();
        let pattern = tenants
            .get_mut(tenant)
            .and_then(|t| t.patterns.get_mut(id))
            .ok_or_else(|| Error::not_found("learning pattern", id))?;
        apply_status_change(pattern, expected, to, draft_skill_id, now)?;
        Ok(pattern.clone())
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    const STATUSES: [PatternStatus; 4] = [
        PatternStatus::Detected,
        PatternStatus::Validated,
        PatternStatus::Converted,
        PatternStatus::Dismissed,
    ];

    fn status() -> impl Strategy<Value = PatternStatus> {
        prop::sample::select(STATUSES.to_vec())
    }

    proptest! {
        /// Any series of attempted moves leaves the pattern where the life cycle says:
        /// refused transitions are Invalid, moves from a status it no longer has are Stale,
        /// conversion needs a draft, and nothing ever leaves `converted`.
        #[test]
        fn status_walks_follow_the_life_cycle(
            moves in prop::collection::vec((status(), status(), any::<bool>()), 1..40),
        ) {
            futures::executor::block_on(async {
                let store = InMemoryLearningStore::new();
                let tenant = TenantId::new("t");
                let found = NewPattern::new("h", PatternKind::Sequence, vec!["a".into()], vec![], 1, 1.0);
                let id = store.upsert_pattern(&tenant, found).await.unwrap().id;
                let (mut model, mut draft) = (PatternStatus::Detected, None::<String>);
                for (step, (expected, to, with_draft)) in moves.into_iter().enumerate() {
                    let given = with_draft.then(|| format!("draft-{step}"));
                    let result = store
                        .set_pattern_status(&tenant, &id, expected, to, given.clone())
                        .await;
                    let converting_without_draft =
                        to == PatternStatus::Converted && given.is_none() && draft.is_none();
                    if !expected.can_become(to) {
                        prop_assert!(matches!(result, Err(Error::Invalid { .. })), "{:?}", result);
                    } else if expected != model {
                        prop_assert!(matches!(result, Err(Error::Stale { .. })), "{:?}", result);
                    } else if converting_without_draft {
                        prop_assert!(matches!(result, Err(Error::Invalid { .. })), "{:?}", result);
                    } else {
                        let moved = result.unwrap();
                        model = to;
                        draft = given.or(draft);
                        prop_assert_eq!(moved.status, model);
                        prop_assert_eq!(&moved.draft_skill_id, &draft);
                    }
                    let stored = store.get_pattern(&tenant, &id).await.unwrap().unwrap();
                    prop_assert_eq!(stored.status, model);
                }
                Ok(())
            })?;
        }
    }
}
