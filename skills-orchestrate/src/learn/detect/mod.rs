//! Pattern detection over a recorded history: pure, deterministic, no store.
//!
//! Three kinds of recurrence are found (seed 003 module 5), each counted **once per run**
//! however often it happens inside that run, and reported only when it reaches the
//! [threshold](DetectorConfig::threshold):
//!
//! * [`Sequence`](PatternKind::Sequence) — the same skills in the same contiguous order, two
//!   to [`max_sequence_len`](DetectorConfig::max_sequence_len) steps long. Only maximal
//!   sequences are kept: one whose every occurrence lies inside occurrences of a longer
//!   frequent sequence (which then necessarily occurs in the same runs) is dropped in its
//!   favour. A failed step directly followed by the same skill counts as one step (a retry,
//!   not a two-step sequence). A run succeeds for the pattern when every step of every
//!   occurrence in it succeeded.
//! * [`Retry`](PatternKind::Retry) — a skill that needed more than one attempt, or failed and
//!   later succeeded in the same run. A run succeeds for the pattern when the skill's last
//!   step in it succeeded.
//! * [`Composite`](PatternKind::Composite) — the same set of distinct skills (two or more)
//!   used in runs of one task type, in any order. A run succeeds for the pattern when the
//!   run as a whole succeeded.
//!
//! Output order: by kind (sequence, retry, composite), then most frequent first, then by
//! skills and task types — so equal histories give equal output whatever order their runs
//! were recorded in.

mod composite;
mod retry;
mod sequence;

use std::cmp::Reverse;
use std::collections::BTreeSet;

use skills_store_traits::learning::{
    ExecutedSequence, ExecutedStep, NewExecutedSequence, NewPattern, PatternKind,
};

use super::hash::pattern_hash;

/// The default [`DetectorConfig::threshold`]: a pattern must recur in three runs.
pub const DEFAULT_THRESHOLD: u64 = 3;
/// The default [`DetectorConfig::max_sequence_len`].
pub const DEFAULT_MAX_SEQUENCE_LEN: usize = 8;

/// How patterns are detected.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct DetectorConfig {
    /// The fewest runs a pattern must occur in to be reported (at least 1).
    pub threshold: u64,
    /// The longest sequence considered (at least 2); bounds the work per run to
    /// `steps × (max_sequence_len − 1)` windows.
    pub max_sequence_len: usize,
}

impl Default for DetectorConfig {
    fn default() -> Self {
        DetectorConfig {
            threshold: DEFAULT_THRESHOLD,
            max_sequence_len: DEFAULT_MAX_SEQUENCE_LEN,
        }
    }
}

impl DetectorConfig {
    /// The same configuration with another threshold (0 is taken as 1).
    pub fn with_threshold(mut self, threshold: u64) -> Self {
        self.threshold = threshold.max(1);
        self
    }

    /// The same configuration with another longest sequence (below 2 is taken as 2).
    pub fn with_max_sequence_len(mut self, max_sequence_len: usize) -> Self {
        self.max_sequence_len = max_sequence_len.max(2);
        self
    }
}

/// A run as the detector reads it: its task type, its steps in order, and whether it
/// succeeded. Implemented for the store's [`ExecutedSequence`] and for
/// [`NewExecutedSequence`] (what is about to be recorded).
pub trait RecordedRun {
    /// The kind of task.
    fn task_type(&self) -> &str;
    /// The steps, in execution order.
    fn steps(&self) -> &[ExecutedStep];
    /// Whether the task as a whole succeeded.
    fn succeeded(&self) -> bool;
}

impl RecordedRun for ExecutedSequence {
    fn task_type(&self) -> &str {
        &self.task_type
    }
    fn steps(&self) -> &[ExecutedStep] {
        &self.steps
    }
    fn succeeded(&self) -> bool {
        self.success
    }
}

impl RecordedRun for NewExecutedSequence {
    fn task_type(&self) -> &str {
        &self.task_type
    }
    fn steps(&self) -> &[ExecutedStep] {
        &self.steps
    }
    fn succeeded(&self) -> bool {
        self.success
    }
}

/// A pattern found in a history, before it is stored.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct DetectedPattern {
    /// Its identity ([`pattern_hash`]).
    pub pattern_hash: String,
    /// What kind of pattern.
    pub kind: PatternKind,
    /// The skills: in order for a sequence, the one skill for a retry, sorted for a
    /// composite.
    pub skills: Vec<String>,
    /// The task types of the runs it occurred in, sorted (one for a composite).
    pub task_types: Vec<String>,
    /// How many runs it occurred in.
    pub frequency: u64,
    /// How many of those runs succeeded for it (see the [module docs](self)).
    pub successes: u64,
}

impl DetectedPattern {
    /// The share of its runs that succeeded for it, 0 to 1.
    pub fn success_rate(&self) -> f64 {
        if self.frequency == 0 {
            return 0.0;
        }
        // Frequencies are run counts, far below 2^52, so the division is exact enough.
        self.successes as f64 / self.frequency as f64
    }

    /// The store's input for this detection.
    pub fn to_new_pattern(&self) -> NewPattern {
        NewPattern::new(
            self.pattern_hash.clone(),
            self.kind,
            self.skills.clone(),
            self.task_types.clone(),
            self.frequency,
            self.success_rate(),
        )
    }
}

/// Finds recurring sequences, retry patterns and composite patterns in a history.
///
/// ```
/// use skills_orchestrate::learn::{DetectorConfig, PatternDetector};
/// use skills_store_traits::learning::{ExecutedStep, NewExecutedSequence, PatternKind};
///
/// let run = |skills: &[&str]| {
///     let steps = skills.iter().map(|s| ExecutedStep::new(*s, true, 1, 10)).collect();
///     NewExecutedSequence::new("report", steps, true)
/// };
/// let history = vec![run(&["pdf", "summarize"]), run(&["pdf", "summarize"]), run(&["email"])];
/// let found = PatternDetector::new(DetectorConfig::default().with_threshold(2)).detect(&history);
/// assert_eq!(found[0].kind, PatternKind::Sequence);
/// assert_eq!(found[0].skills, ["pdf", "summarize"]);
/// assert_eq!(found[0].frequency, 2);
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PatternDetector {
    config: DetectorConfig,
}

impl PatternDetector {
    /// A detector with `config`.
    pub fn new(config: DetectorConfig) -> Self {
        PatternDetector { config }
    }

    /// Its configuration.
    pub fn config(&self) -> &DetectorConfig {
        &self.config
    }

    /// Every pattern in `history` at or above the threshold, in the documented order.
    pub fn detect<R: RecordedRun>(&self, history: &[R]) -> Vec<DetectedPattern> {
        let mut found = sequence::detect(history, &self.config);
        found.extend(retry::detect(history, &self.config));
        found.extend(composite::detect(history, &self.config));
        found.sort_by(|a, b| {
            (a.kind, Reverse(a.frequency), &a.skills, &a.task_types).cmp(&(
                b.kind,
                Reverse(b.frequency),
                &b.skills,
                &b.task_types,
            ))
        });
        found
    }
}

/// The runs one candidate pattern occurred in.
#[derive(Debug, Default)]
struct Tally<'a> {
    /// Indexes into the history, ascending, each once.
    runs: Vec<usize>,
    successes: u64,
    task_types: BTreeSet<&'a str>,
}

impl<'a> Tally<'a> {
    /// Counts run `run` (called at most once per run, in ascending run order).
    fn add(&mut self, run: usize, task_type: &'a str, success: bool) {
        self.runs.push(run);
        self.successes += u64::from(success);
        self.task_types.insert(task_type);
    }

    fn frequency(&self) -> u64 {
        u64::try_from(self.runs.len()).unwrap_or(u64::MAX)
    }

    fn reaches(&self, config: &DetectorConfig) -> bool {
        self.frequency() >= config.threshold
    }

    fn into_pattern(
        self,
        kind: PatternKind,
        skills: &[&str],
        composite_task_type: Option<&str>,
    ) -> DetectedPattern {
        let skills: Vec<String> = skills.iter().map(|s| (*s).to_owned()).collect();
        DetectedPattern {
            pattern_hash: pattern_hash(kind, &skills, composite_task_type),
            kind,
            frequency: self.frequency(),
            successes: self.successes,
            task_types: self.task_types.iter().map(|t| (*t).to_owned()).collect(),
            skills,
        }
    }
}
