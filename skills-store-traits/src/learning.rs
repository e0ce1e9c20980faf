//! What the learning engine remembers (issue 8; seed 003 module 5 and its
//! `SkillLearningPattern`): the skill sequences agents executed, and the recurring patterns
//! found in them on their way to becoming skills.
//!
//! The store keeps history and pattern state; detecting patterns belongs to
//! `skills-orchestrate`. A pattern is identified by its hash in its tenant: the detector
//! upserts what it found ([`LearningStore::upsert_pattern`]) and people move it through its
//! life cycle ([`PatternStatus::can_become`]) with a compare-and-set, so a dismissed pattern
//! stays dismissed however often it recurs, and two reviewers cannot both convert it.

use std::cmp::Ordering;

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result, Violation};
use crate::tenancy::TenantId;
use crate::time::Timestamp;

/// The most steps in one recorded sequence.
pub const MAX_SEQUENCE_STEPS: usize = 1_000;
/// The most characters in a pattern hash (seed 003: `VarChar(64)`, with room for a prefix).
pub const MAX_PATTERN_HASH_CHARS: usize = 128;
/// The most skills or task types in one pattern.
pub const MAX_PATTERN_ENTRIES: usize = 1_000;

word_enum!(
    /// What kind of recurrence a pattern is (seed 003 `patternType`).
    PatternKind, "kind", "sequence, retry, composite", {
        /// The same skills in the same order.
        Sequence => "sequence",
        /// A skill that keeps needing retries.
        Retry => "retry",
        /// Skills that together make a composite skill.
        Composite => "composite",
    }
);

word_enum!(
    /// Where a pattern stands on its way to becoming a skill (seed 003 `status`).
    PatternStatus, "status", "detected, validated, converted, dismissed", {
        /// Found by the detector.
        Detected => "detected",
        /// Confirmed worth a skill by a person (a draft may exist).
        Validated => "validated",
        /// Turned into a skill ([`LearningPattern::draft_skill_id`]); final.
        Converted => "converted",
        /// Not worth a skill; stays dismissed until reopened.
        Dismissed => "dismissed",
    }
);

impl PatternStatus {
    /// Whether the life cycle allows `self -> to`: detected to validated or dismissed,
    /// validated to converted or dismissed, dismissed back to detected (reopened). Nothing
    /// leaves converted, and no status moves to itself.
    pub fn can_become(self, to: PatternStatus) -> bool {
        use PatternStatus::{Converted, Detected, Dismissed, Validated};
        matches!(
            (self, to),
            (Detected, Validated | Dismissed)
                | (Validated, Converted | Dismissed)
                | (Dismissed, Detected)
        )
    }

    /// [`PatternStatus::can_become`] as a check: [`Violation::Transition`] of `status`.
    pub fn check_transition(self, to: PatternStatus) -> Result<()> {
        if !self.can_become(to) {
            return Err(Error::invalid(
                "status",
                Violation::Transition {
                    from: self.as_str(),
                    to: to.as_str(),
                },
            ));
        }
        Ok(())
    }
}

/// One step of an executed sequence.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ExecutedStep {
    /// The skill the step ran (non-empty).
    pub skill_id: String,
    /// Whether it finally succeeded.
    pub success: bool,
    /// How many attempts it took (at least 1).
    pub attempts: u32,
    /// How long it took, all attempts together.
    pub duration_ms: u64,
}

impl ExecutedStep {
    /// A step.
    pub fn new(
        skill_id: impl Into<String>,
        success: bool,
        attempts: u32,
        duration_ms: u64,
    ) -> Self {
        ExecutedStep {
            skill_id: skill_id.into(),
            success,
            attempts,
            duration_ms,
        }
    }
}

/// A recorded execution: the skills one task ran, in order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ExecutedSequence {
    /// The record's id (assigned by the store).
    pub id: String,
    /// The tenant.
    pub tenant: TenantId,
    /// The kind of task (the detector's grouping key).
    pub task_type: String,
    /// The steps, in execution order.
    pub steps: Vec<ExecutedStep>,
    /// Whether the task as a whole succeeded.
    pub success: bool,
    /// When it was recorded (the store's clock).
    pub recorded_at: Timestamp,
}

/// A sequence to record.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct NewExecutedSequence {
    /// The kind of task (non-empty).
    pub task_type: String,
    /// The steps (1 to [`MAX_SEQUENCE_STEPS`]).
    pub steps: Vec<ExecutedStep>,
    /// Whether the task succeeded.
    pub success: bool,
}

impl NewExecutedSequence {
    /// A sequence.
    pub fn new(task_type: impl Into<String>, steps: Vec<ExecutedStep>, success: bool) -> Self {
        NewExecutedSequence {
            task_type: task_type.into(),
            steps,
            success,
        }
    }

    /// Checks the sequence as [`LearningStore::record_sequence`] does.
    pub fn validate(&self) -> Result<()> {
        if self.task_type.is_empty() {
            return Err(Error::invalid("task_type", Violation::Empty));
        }
        if self.steps.is_empty() {
            return Err(Error::invalid("steps", Violation::Empty));
        }
        check_count("steps", self.steps.len(), MAX_SEQUENCE_STEPS)?;
        for (index, step) in self.steps.iter().enumerate() {
            if step.skill_id.is_empty() {
                return Err(Error::invalid(
                    format!("steps[{index}].skill_id"),
                    Violation::Empty,
                ));
            }
            if step.attempts == 0 {
                return Err(Error::invalid(
                    format!("steps[{index}].attempts"),
                    Violation::OutOfRange {
                        expected: "at least 1",
                    },
                ));
            }
        }
        Ok(())
    }

    /// The record this sequence becomes.
    pub fn into_record(self, id: String, tenant: &TenantId, now: Timestamp) -> ExecutedSequence {
        ExecutedSequence {
            id,
            tenant: tenant.clone(),
            task_type: self.task_type,
            steps: self.steps,
            success: self.success,
            recorded_at: now,
        }
    }
}

/// A recurring pattern, unique by hash in its tenant.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct LearningPattern {
    /// The record's id (assigned by the store).
    pub id: String,
    /// The tenant.
    pub tenant: TenantId,
    /// The detector's identity for the pattern (stable across detections).
    pub pattern_hash: String,
    /// What kind of pattern.
    pub kind: PatternKind,
    /// The skills involved, in pattern order.
    pub skills: Vec<String>,
    /// The task types it was seen in (as last detected).
    pub task_types: Vec<String>,
    /// How often it occurred (as last detected).
    pub frequency: u64,
    /// The share of its occurrences that succeeded, 0 to 1 (as last detected).
    pub success_rate: f64,
    /// Where it stands.
    pub status: PatternStatus,
    /// The skill drafted from it, once there is one.
    pub draft_skill_id: Option<String>,
    /// When it was first detected.
    pub first_seen: Timestamp,
    /// When it was last detected.
    pub last_seen: Timestamp,
    /// When it last changed (a detection or a status change).
    pub updated_at: Timestamp,
}

/// A detected pattern to record or refresh.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct NewPattern {
    /// The pattern's identity (1 to [`MAX_PATTERN_HASH_CHARS`] characters); derive it from
    /// the kind and the skills, which must not change for a hash.
    pub pattern_hash: String,
    /// What kind of pattern.
    pub kind: PatternKind,
    /// The skills involved (1 or more, none empty).
    pub skills: Vec<String>,
    /// The task types it was seen in (none empty).
    pub task_types: Vec<String>,
    /// How often it occurred (at least 1).
    pub frequency: u64,
    /// The share that succeeded (0 to 1).
    pub success_rate: f64,
}

impl NewPattern {
    /// A pattern.
    pub fn new(
        pattern_hash: impl Into<String>,
        kind: PatternKind,
        skills: Vec<String>,
        task_types: Vec<String>,
        frequency: u64,
        success_rate: f64,
    ) -> Self {
        NewPattern {
            pattern_hash: pattern_hash.into(),
            kind,
            skills,
            task_types,
            frequency,
            success_rate,
        }
    }

    /// Checks the pattern as [`LearningStore::upsert_pattern`] does.
    pub fn validate(&self) -> Result<()> {
        let chars = self.pattern_hash.chars().count();
        if chars == 0 {
            return Err(Error::invalid("pattern_hash", Violation::Empty));
        }
        if chars > MAX_PATTERN_HASH_CHARS {
            return Err(Error::invalid(
                "pattern_hash",
                Violation::OutOfRange {
                    expected: "at most 128 characters",
                },
            ));
        }
        if self.skills.is_empty() {
            return Err(Error::invalid("skills", Violation::Empty));
        }
        check_list("skills", &self.skills)?;
        check_list("task_types", &self.task_types)?;
        if self.frequency == 0 {
            return Err(Error::invalid(
                "frequency",
                Violation::OutOfRange {
                    expected: "at least 1",
                },
            ));
        }
        if !(0.0..=1.0).contains(&self.success_rate) {
            return Err(Error::invalid(
                "success_rate",
                Violation::OutOfRange {
                    expected: "between 0 and 1",
                },
            ));
        }
        Ok(())
    }

    /// A new record for this pattern: detected, first and last seen `now`.
    pub fn into_record(self, id: String, tenant: &TenantId, now: Timestamp) -> LearningPattern {
        LearningPattern {
            id,
            tenant: tenant.clone(),
            pattern_hash: self.pattern_hash,
            kind: self.kind,
            skills: self.skills,
            task_types: self.task_types,
            frequency: self.frequency,
            success_rate: self.success_rate,
            status: PatternStatus::Detected,
            draft_skill_id: None,
            first_seen: now,
            last_seen: now,
            updated_at: now,
        }
    }

    /// Refreshes `existing` (same hash) with this detection at `now`: frequency, success
    /// rate, task types and last seen change; identity, status and draft stay.
    /// [`Error::Conflict`] when the kind or the skills differ from the stored ones (two
    /// patterns hashed alike).
    pub fn refresh(self, existing: &mut LearningPattern, now: Timestamp) -> Result<()> {
        if self.kind != existing.kind || self.skills != existing.skills {
            return Err(Error::conflict("pattern hash", self.pattern_hash));
        }
        existing.task_types = self.task_types;
        existing.frequency = self.frequency;
        existing.success_rate = self.success_rate;
        existing.last_seen = now;
        existing.updated_at = now;
        Ok(())
    }
}

/// Checks a status change before any lookup: the transition ([`PatternStatus::can_become`])
/// and the draft (non-empty when given).
pub fn check_status_change(
    expected: PatternStatus,
    to: PatternStatus,
    draft_skill_id: Option<&str>,
) -> Result<()> {
    expected.check_transition(to)?;
    if draft_skill_id.is_some_and(str::is_empty) {
        return Err(Error::invalid("draft_skill_id", Violation::Empty));
    }
    Ok(())
}

/// Applies a status change to `pattern` at `now`, after the compare-and-set: [`Error::Stale`]
/// when its status is not `expected`; a given draft replaces the stored one; converting
/// needs a draft, given or stored ([`Violation::Empty`] of `draft_skill_id`).
pub fn apply_status_change(
    pattern: &mut LearningPattern,
    expected: PatternStatus,
    to: PatternStatus,
    draft_skill_id: Option<String>,
    now: Timestamp,
) -> Result<()> {
    if pattern.status != expected {
        return Err(Error::Stale {
            what: "learning pattern status",
            expected: expected.to_string(),
            found: pattern.status.to_string(),
        });
    }
    let draft = draft_skill_id.or_else(|| pattern.draft_skill_id.clone());
    if to == PatternStatus::Converted && draft.is_none() {
        return Err(Error::invalid("draft_skill_id", Violation::Empty));
    }
    pattern.status = to;
    pattern.draft_skill_id = draft;
    pattern.updated_at = now;
    Ok(())
}

/// The order of [`LearningStore::list_patterns`]: most frequent first, then by hash
/// (bytewise).
pub fn pattern_order(a: &LearningPattern, b: &LearningPattern) -> Ordering {
    b.frequency
        .cmp(&a.frequency)
        .then_with(|| a.pattern_hash.cmp(&b.pattern_hash))
}

fn check_count(field: &str, count: usize, limit: usize) -> Result<()> {
    if count > limit {
        return Err(Error::invalid(field, Violation::TooMany { count, limit }));
    }
    Ok(())
}

fn check_list(field: &str, entries: &[String]) -> Result<()> {
    check_count(field, entries.len(), MAX_PATTERN_ENTRIES)?;
    if let Some(index) = entries.iter().position(String::is_empty) {
        return Err(Error::invalid(
            format!("{field}[{index}]"),
            Violation::Empty,
        ));
    }
    Ok(())
}

/// Executed sequences and learning patterns, per tenant.
///
/// ```
/// use skills_store_traits::learning::{
///     ExecutedStep, NewExecutedSequence, NewPattern, PatternKind, PatternStatus,
/// };
/// use skills_store_traits::{LearningStore, TenantId, in_memory::InMemoryLearningStore};
///
/// # futures::executor::block_on(async {
/// let store = InMemoryLearningStore::new();
/// let acme = TenantId::new("acme");
/// let steps = vec![ExecutedStep::new("pdf", true, 1, 40), ExecutedStep::new("summarize", true, 1, 90)];
/// store.record_sequence(&acme, NewExecutedSequence::new("report", steps, true)).await?;
/// assert_eq!(store.list_sequences(&acme, None, None).await?.len(), 1);
///
/// let skills = vec!["pdf".to_owned(), "summarize".to_owned()];
/// let found = NewPattern::new("seq:pdf>summarize", PatternKind::Sequence, skills, vec!["report".into()], 3, 1.0);
/// let pattern = store.upsert_pattern(&acme, found).await?;
/// assert_eq!(pattern.status, PatternStatus::Detected);
///
/// let pattern = store
///     .set_pattern_status(&acme, &pattern.id, PatternStatus::Detected, PatternStatus::Dismissed, None)
///     .await?;
/// assert_eq!(pattern.status, PatternStatus::Dismissed);
/// // Converting needs a validated pattern: the life cycle refuses the jump.
/// let refused = store
///     .set_pattern_status(&acme, &pattern.id, PatternStatus::Dismissed, PatternStatus::Converted, None)
///     .await;
/// assert!(refused.is_err());
/// # Ok::<(), skills_store_traits::Error>(())
/// # }).unwrap();
/// ```
#[async_trait::async_trait]
pub trait LearningStore: Send + Sync {
    /// Records an executed sequence (validated by [`NewExecutedSequence::validate`]), stamped
    /// with the store's clock.
    async fn record_sequence(
        &self,
        tenant: &TenantId,
        sequence: NewExecutedSequence,
    ) -> Result<ExecutedSequence>;

    /// The tenant's sequences recorded at or after `since`, oldest first (by `recorded_at`,
    /// then in the order they were recorded), at most `limit` of them (the oldest).
    async fn list_sequences(
        &self,
        tenant: &TenantId,
        since: Option<Timestamp>,
        limit: Option<usize>,
    ) -> Result<Vec<ExecutedSequence>>;

    /// Deletes the tenant's sequences recorded before `before` (retention); how many went.
    async fn prune_sequences(&self, tenant: &TenantId, before: Timestamp) -> Result<u64>;

    /// Records a detection (validated by [`NewPattern::validate`]): a new hash becomes a
    /// [`PatternStatus::Detected`] pattern; a known one is refreshed by
    /// [`NewPattern::refresh`], keeping its status, so a dismissed pattern stays dismissed.
    async fn upsert_pattern(
        &self,
        tenant: &TenantId,
        pattern: NewPattern,
    ) -> Result<LearningPattern>;

    /// The tenant's pattern with this id.
    async fn get_pattern(&self, tenant: &TenantId, id: &str) -> Result<Option<LearningPattern>>;

    /// The tenant's pattern with this hash.
    async fn find_pattern_by_hash(
        &self,
        tenant: &TenantId,
        pattern_hash: &str,
    ) -> Result<Option<LearningPattern>>;

    /// The tenant's patterns with the given status and kind (`None`: any), in
    /// [`pattern_order`].
    async fn list_patterns(
        &self,
        tenant: &TenantId,
        status: Option<PatternStatus>,
        kind: Option<PatternKind>,
    ) -> Result<Vec<LearningPattern>>;

    /// Moves a pattern from `expected` to `to`: first [`check_status_change`] (an
    /// [`Error::Invalid`] naming a transition the life cycle refuses), then
    /// [`Error::NotFound`] for a missing pattern, then [`apply_status_change`]
    /// ([`Error::Stale`] when its status is no longer `expected`).
    async fn set_pattern_status(
        &self,
        tenant: &TenantId,
        id: &str,
        expected: PatternStatus,
        to: PatternStatus,
        draft_skill_id: Option<String>,
    ) -> Result<LearningPattern>;
}

#[cfg(test)]
mod tests {
    use super::*;

    const ALL: [PatternStatus; 4] = [
        PatternStatus::Detected,
        PatternStatus::Validated,
        PatternStatus::Converted,
        PatternStatus::Dismissed,
    ];

    #[test]
    fn the_life_cycle_allows_exactly_five_moves() {
        let allowed: Vec<(PatternStatus, PatternStatus)> = ALL
            .iter()
            .flat_map(|&from| ALL.iter().map(move |&to| (from, to)))
            .filter(|(from, to)| from.can_become(*to))
            .collect();
        use PatternStatus::*;
        assert_eq!(
            allowed,
            [
                (Detected, Validated),
                (Detected, Dismissed),
                (Validated, Converted),
                (Validated, Dismissed),
                (Dismissed, Detected)
            ]
        );
        let err = Converted.check_transition(Detected).unwrap_err();
        assert_eq!(
            err.violation(),
            Some(&Violation::Transition {
                from: "converted",
                to: "detected"
            })
        );
    }

    #[test]
    fn words_round_trip() {
        for status in ALL {
            assert_eq!(status.as_str().parse::<PatternStatus>().unwrap(), status);
        }
        for kind in [
            PatternKind::Sequence,
            PatternKind::Retry,
            PatternKind::Composite,
        ] {
            assert_eq!(kind.as_str().parse::<PatternKind>().unwrap(), kind);
            assert_eq!(serde_json::to_string(&kind).unwrap(), format!("\"{kind}\""));
        }
        assert!("Sequence".parse::<PatternKind>().is_err());
    }

    #[test]
    fn validation_names_the_field() {
        let step = |s: &str| ExecutedStep::new(s, true, 1, 1);
        let mut seq = NewExecutedSequence::new("t", vec![step("a"), step("")], true);
        let err = seq.validate().unwrap_err();
        assert!(matches!(err, Error::Invalid { ref field, .. } if field == "steps[1].skill_id"));
        seq.steps[1] = ExecutedStep::new("b", true, 0, 1);
        let err = seq.validate().unwrap_err();
        assert!(matches!(err, Error::Invalid { ref field, .. } if field == "steps[1].attempts"));
        let mut p = NewPattern::new("h", PatternKind::Retry, vec!["a".into()], vec![], 1, 0.5);
        assert!(p.validate().is_ok());
        p.success_rate = f64::NAN;
        assert!(p.validate().is_err());
        p.success_rate = 1.5;
        assert!(p.validate().is_err());
    }
}
