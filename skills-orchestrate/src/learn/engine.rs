//! The learning engine: records runs, detects patterns into the store, drafts skills and
//! moves patterns through their review.

use std::collections::BTreeMap;
use std::sync::Arc;

use skills_store_traits::learning::{
    ExecutedSequence, ExecutedStep, LearningPattern, NewExecutedSequence, PatternStatus,
};
use skills_store_traits::{LearningStore, TenantId, Timestamp};

use super::detect::{DetectorConfig, PatternDetector};
use super::draft::{DraftSkill, draft_skill};
use crate::error::{Error, Result};

/// Whether a run of `steps` succeeded: every skill's last step did (an empty run did not).
///
/// ```
/// use skills_orchestrate::learn::final_outcome;
/// use skills_store_traits::learning::ExecutedStep;
///
/// let retried = [ExecutedStep::new("a", false, 1, 5), ExecutedStep::new("a", true, 1, 5)];
/// assert!(final_outcome(&retried));
/// assert!(!final_outcome(&[ExecutedStep::new("a", true, 1, 5), ExecutedStep::new("b", false, 2, 5)]));
/// ```
pub fn final_outcome(steps: &[ExecutedStep]) -> bool {
    let mut last: BTreeMap<&str, bool> = BTreeMap::new();
    for step in steps {
        last.insert(&step.skill_id, step.success);
    }
    !last.is_empty() && last.values().all(|ok| *ok)
}

/// Records executed sequences and learns from them, through a [`LearningStore`].
///
/// Detection reads the history and **sets** each pattern's frequency to what it counts (the
/// store's upsert refreshes, it does not add), so detecting twice over the same history
/// changes nothing but `last_seen`. Status changes are compare-and-set: each method names
/// the status it expects, and the store refuses with
/// [`skills_store_traits::Error::Stale`] (wrapped in [`Error::Store`]) when someone moved
/// the pattern first, or with [`skills_store_traits::Error::Invalid`] when the life cycle
/// does not allow the move ([`PatternStatus::can_become`]).
#[derive(Clone)]
pub struct LearningEngine {
    store: Arc<dyn LearningStore>,
    detector: PatternDetector,
}

impl std::fmt::Debug for LearningEngine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LearningEngine")
            .field("detector", &self.detector)
            .finish_non_exhaustive()
    }
}

impl LearningEngine {
    /// An engine over `store` with the default [`DetectorConfig`].
    pub fn new(store: Arc<dyn LearningStore>) -> Self {
        LearningEngine {
            store,
            detector: PatternDetector::default(),
        }
    }

    /// The same engine detecting with `config`.
    pub fn with_config(mut self, config: DetectorConfig) -> Self {
        self.detector = PatternDetector::new(config);
        self
    }

    /// The store it records into.
    pub fn store(&self) -> &Arc<dyn LearningStore> {
        &self.store
    }

    /// Its detector.
    pub fn detector(&self) -> &PatternDetector {
        &self.detector
    }

    /// Records that a task of `task_type` ran `steps`, in order; the task succeeded when
    /// every skill's last step did ([`final_outcome`]: a failure that a later run of the same
    /// skill made good does not fail the task). A host with another notion of success
    /// records through [`LearningStore::record_sequence`] directly.
    pub async fn record(
        &self,
        tenant: &TenantId,
        task_type: &str,
        steps: Vec<ExecutedStep>,
    ) -> Result<ExecutedSequence> {
        let success = final_outcome(&steps);
        let sequence = NewExecutedSequence::new(task_type, steps, success);
        Ok(self.store.record_sequence(tenant, sequence).await?)
    }

    /// Detects patterns in the tenant's whole history and upserts them; see
    /// [`LearningEngine::detect_since`].
    pub async fn detect(&self, tenant: &TenantId) -> Result<Vec<LearningPattern>> {
        self.detect_since(tenant, None).await
    }

    /// Detects patterns in the tenant's runs recorded at or after `since` and upserts each:
    /// new ones become [`PatternStatus::Detected`], known ones keep their status (a
    /// dismissed pattern stays dismissed) with frequency, success rate and task types
    /// replaced by this detection's. Returns the stored patterns in detection order.
    ///
    /// The whole window is read into memory; hosts bound it with `since` or by pruning old
    /// runs ([`LearningStore::prune_sequences`]).
    pub async fn detect_since(
        &self,
        tenant: &TenantId,
        since: Option<Timestamp>,
    ) -> Result<Vec<LearningPattern>> {
        let history = self.store.list_sequences(tenant, since, None).await?;
        let found = self.detector.detect(&history);
        let mut stored = Vec::with_capacity(found.len());
        for pattern in &found {
            stored.push(
                self.store
                    .upsert_pattern(tenant, pattern.to_new_pattern())
                    .await?,
            );
        }
        Ok(stored)
    }

    /// Drafts a composite skill from the tenant's pattern `pattern_id` ([`draft_skill`]).
    pub async fn draft(&self, tenant: &TenantId, pattern_id: &str) -> Result<DraftSkill> {
        let pattern = self
            .store
            .get_pattern(tenant, pattern_id)
            .await?
            .ok_or_else(|| {
                Error::Store(skills_store_traits::Error::not_found(
                    "learning pattern",
                    pattern_id,
                ))
            })?;
        draft_skill(&pattern)
    }

    /// A reviewer confirmed the pattern is worth a skill: detected → validated.
    pub async fn validate(&self, tenant: &TenantId, pattern_id: &str) -> Result<LearningPattern> {
        self.transition(
            tenant,
            pattern_id,
            PatternStatus::Detected,
            PatternStatus::Validated,
            None,
        )
        .await
    }

    /// The draft became the skill `draft_skill_id`: validated → converted (final).
    pub async fn convert(
        &self,
        tenant: &TenantId,
        pattern_id: &str,
        draft_skill_id: impl Into<String>,
    ) -> Result<LearningPattern> {
        self.transition(
            tenant,
            pattern_id,
            PatternStatus::Validated,
            PatternStatus::Converted,
            Some(draft_skill_id.into()),
        )
        .await
    }

    /// Not worth a skill: `seen` (detected or validated, as the reviewer saw it) →
    /// dismissed. Later detections keep it dismissed.
    pub async fn dismiss(
        &self,
        tenant: &TenantId,
        pattern_id: &str,
        seen: PatternStatus,
    ) -> Result<LearningPattern> {
        self.transition(tenant, pattern_id, seen, PatternStatus::Dismissed, None)
            .await
    }

    /// Reconsider a dismissed pattern: dismissed → detected.
    pub async fn reopen(&self, tenant: &TenantId, pattern_id: &str) -> Result<LearningPattern> {
        self.transition(
            tenant,
            pattern_id,
            PatternStatus::Dismissed,
            PatternStatus::Detected,
            None,
        )
        .await
    }

    async fn transition(
        &self,
        tenant: &TenantId,
        pattern_id: &str,
        expected: PatternStatus,
        to: PatternStatus,
        draft_skill_id: Option<String>,
    ) -> Result<LearningPattern> {
        Ok(self
            .store
            .set_pattern_status(tenant, pattern_id, expected, to, draft_skill_id)
            .await?)
    }
}
