//! Learning from what ran (seed 003 module 5): record executed skill sequences, detect the
//! patterns that recur in them, and turn a pattern into a draft composite skill.
//!
//! | piece | seed 003 | what it does |
//! |---|---|---|
//! | [`LearningEngine::record`] | `experience-tracker.ts` | stores one run: task type, steps with outcome, attempts and duration |
//! | [`PatternDetector`] | `pattern-detector.ts` | pure detection of [sequence, retry and composite patterns](detect) at or above a threshold |
//! | [`pattern_hash`] | `patternHash` | the pattern's stable identity: SHA-256 over a [documented encoding](hash) |
//! | [`LearningEngine::detect`] | the detection job | detection over the stored history, upserted into the [`LearningStore`](skills_store_traits::LearningStore) |
//! | [`draft_skill`] | `skill-generator.ts` | a [`DraftSkill`]: a SKILL.md valid under the Spec profile and its plan of [`StepSpec`](crate::plan::StepSpec)s |
//! | [`LearningEngine::validate`], [`convert`](LearningEngine::convert), [`dismiss`](LearningEngine::dismiss), [`reopen`](LearningEngine::reopen) | `status` | the review life cycle, compare-and-set in the store |
//!
//! The executor's results reach the engine as the store's neutral
//! [`ExecutedStep`](skills_store_traits::learning::ExecutedStep)s, so this module does not
//! depend on how steps were run.
//!
//! ```
//! use std::sync::Arc;
//! use skills_orchestrate::learn::{DetectorConfig, LearningEngine};
//! use skills_store_traits::in_memory::InMemoryLearningStore;
//! use skills_store_traits::learning::{ExecutedStep, PatternKind, PatternStatus};
//! use skills_store_traits::TenantId;
//!
//! # futures::executor::block_on(async {
//! let engine = LearningEngine::new(Arc::new(InMemoryLearningStore::new()))
//!     .with_config(DetectorConfig::default().with_threshold(3));
//! let acme = TenantId::new("acme");
//! for _ in 0..3 {
//!     let steps = vec![
//!         ExecutedStep::new("crm-lookup", true, 1, 120),
//!         ExecutedStep::new("draft-email", true, 1, 900),
//!     ];
//!     engine.record(&acme, "follow-up", steps).await?;
//! }
//!
//! let patterns = engine.detect(&acme).await?;
//! let sequence = patterns.iter().find(|p| p.kind == PatternKind::Sequence).unwrap();
//! assert_eq!(sequence.skills, ["crm-lookup", "draft-email"]);
//! assert_eq!(sequence.frequency, 3);
//!
//! // Detecting again counts the same history again: frequencies are set, not added.
//! assert_eq!(engine.detect(&acme).await?[0].frequency, 3);
//!
//! let draft = engine.draft(&acme, &sequence.id).await?;
//! assert_eq!(draft.name, "crm-lookup-then-draft-email");
//! assert_eq!(draft.steps.len(), 2);
//!
//! engine.validate(&acme, &sequence.id).await?;
//! let converted = engine.convert(&acme, &sequence.id, "skill-42").await?;
//! assert_eq!(converted.status, PatternStatus::Converted);
//! assert_eq!(converted.draft_skill_id.as_deref(), Some("skill-42"));
//! # Ok::<(), skills_orchestrate::Error>(())
//! # }).unwrap();
//! ```

pub mod detect;
mod draft;
mod engine;
pub mod hash;

pub use detect::{
    DEFAULT_MAX_SEQUENCE_LEN, DEFAULT_THRESHOLD, DetectedPattern, DetectorConfig, PatternDetector,
    RecordedRun,
};
pub use draft::{DraftSkill, MAX_SHOWN_CHARS, draft_skill};
pub use engine::{LearningEngine, final_outcome};
pub use hash::{PATTERN_HASH_DOMAIN, pattern_hash};
