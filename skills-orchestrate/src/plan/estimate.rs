//! Step estimates from how long skills took before.
//!
//! The plan store's working memory keeps no timings (a step's `created_at` is when the plan
//! was saved, not when the step started), so past durations come from the records that do
//! keep them: the audit log's `execution_time_ms` ([`DurationSamples::from_audit`]) and the
//! learning store's executed sequences ([`DurationSamples::from_learning`]), or samples the
//! host feeds ([`DurationSamples::record`]).

use std::collections::{BTreeMap, VecDeque};

use skills_store_traits::audit::AuditQuery;
use skills_store_traits::{AuditStore, LearningStore, TenantId, Timestamp};

use crate::error::Result;

/// How long skills took before.
pub trait DurationHistory: Send + Sync {
    /// The median of the recorded durations of `skill`, in milliseconds; `None` when nothing
    /// was recorded.
    fn median_ms(&self, skill: &str) -> Option<u64>;
}

/// Recorded durations per skill, in memory. The most recent [`DurationSamples::MAX_PER_SKILL`]
/// samples of a skill are kept, so a long history cannot grow it without bound.
///
/// ```
/// use skills_orchestrate::plan::{DurationHistory, DurationSamples};
///
/// let history = DurationSamples::new()
///     .with("pdf", 1_000)
///     .with("pdf", 4_000)
///     .with("pdf", 2_000);
/// assert_eq!(history.median_ms("pdf"), Some(2_000));
/// assert_eq!(history.median_ms("xlsx"), None);
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DurationSamples {
    by_skill: BTreeMap<String, VecDeque<u64>>,
}

impl DurationSamples {
    /// The most samples kept per skill (the newest win).
    pub const MAX_PER_SKILL: usize = 1_000;

    /// No samples.
    pub fn new() -> Self {
        Self::default()
    }

    /// Samples from `(skill, duration_ms)` pairs, oldest first.
    pub fn from_samples<I, S>(samples: I) -> Self
    where
        I: IntoIterator<Item = (S, u64)>,
        S: Into<String>,
    {
        let mut history = Self::new();
        for (skill, ms) in samples {
            history.record(skill, ms);
        }
        history
    }

    /// Records that `skill` took `duration_ms`.
    pub fn record(&mut self, skill: impl Into<String>, duration_ms: u64) {
        let samples = self.by_skill.entry(skill.into()).or_default();
        if samples.len() == Self::MAX_PER_SKILL {
            samples.pop_front();
        }
        samples.push_back(duration_ms);
    }

    /// The same, also recording that `skill` took `duration_ms`.
    pub fn with(mut self, skill: impl Into<String>, duration_ms: u64) -> Self {
        self.record(skill, duration_ms);
        self
    }

    /// How many samples `skill` has.
    pub fn count(&self, skill: &str) -> usize {
        self.by_skill.get(skill).map_or(0, VecDeque::len)
    }

    /// The successful executions of the tenant's audit log matching `query` that recorded an
    /// execution time (the policy gate's decision records have none and are passed over).
    pub async fn from_audit(
        store: &dyn AuditStore,
        tenant: &TenantId,
        query: &AuditQuery,
    ) -> Result<Self> {
        let query = query.clone().success(true);
        let entries = store.query(tenant, &query).await?;
        let mut entries: Vec<_> = entries
            .into_iter()
            .filter_map(|entry| {
                let ms = entry.record.execution_time_ms?;
                Some((entry.record.timestamp, entry.record.skill_id, ms))
            })
            .collect();
        // Chains come back one after another; keep "newest wins" true across them.
        entries.sort_by_key(|(timestamp, _, _)| *timestamp);
        Ok(Self::from_samples(
            entries.into_iter().map(|(_, skill, ms)| (skill, ms)),
        ))
    }

    /// The successful steps of the tenant's executed sequences recorded at or after `since`
    /// (at most `limit` sequences). A step's duration covers all its attempts, as a rerun
    /// would.
    pub async fn from_learning(
        store: &dyn LearningStore,
        tenant: &TenantId,
        since: Option<Timestamp>,
        limit: Option<usize>,
    ) -> Result<Self> {
        let sequences = store.list_sequences(tenant, since, limit).await?;
        Ok(Self::from_samples(
            sequences
                .into_iter()
                .flat_map(|sequence| sequence.steps)
                .filter(|step| step.success)
                .map(|step| (step.skill_id, step.duration_ms)),
        ))
    }
}

impl DurationHistory for DurationSamples {
    fn median_ms(&self, skill: &str) -> Option<u64> {
        let mut samples: Vec<u64> = self.by_skill.get(skill)?.iter().copied().collect();
        if samples.is_empty() {
            return None;
        }
        samples.sort_unstable();
        let middle = samples.len() / 2;
        if samples.len() % 2 == 1 {
            return Some(samples[middle]);
        }
        // The mean of the two middle samples, without overflow.
        let (low, high) = (samples[middle - 1], samples[middle]);
        Some(low + (high - low) / 2)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_median_of_an_even_count_is_the_mean_of_the_middle_two() {
        let history = DurationSamples::from_samples([("a", 10), ("a", 40), ("a", 20), ("a", 30)]);
        assert_eq!(history.median_ms("a"), Some(25));
        let history = DurationSamples::from_samples([("b", u64::MAX), ("b", u64::MAX - 2)]);
        assert_eq!(history.median_ms("b"), Some(u64::MAX - 1));
    }

    #[test]
    fn only_the_newest_samples_are_kept() {
        let mut history = DurationSamples::new();
        for _ in 0..DurationSamples::MAX_PER_SKILL {
            history.record("a", 1);
        }
        for _ in 0..=DurationSamples::MAX_PER_SKILL / 2 {
            history.record("a", 100);
        }
        assert_eq!(history.count("a"), DurationSamples::MAX_PER_SKILL);
        assert_eq!(history.median_ms("a"), Some(100));
    }
}
