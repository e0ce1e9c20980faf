//! Why a step failed ([`StepError`]) and whether it is tried again ([`RetryPolicy`]).
//!
//! Only failures that another attempt can cure are retried: a model or transport hiccup, a
//! timeout, a native skill's transient error. A denial, a blocked output (a leak) or a
//! malformed request fails the same way every time, and retrying a leak would hand the model
//! the same data again, so those are final.

use std::collections::BTreeSet;
use std::fmt;
use std::time::Duration;

use serde::{Deserialize, Serialize};

/// What kind of failure ended a step attempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum StepErrorKind {
    /// The model call failed (provider, quota, transport).
    Model,
    /// The step passed its time limit.
    Timeout,
    /// A native skill reported a failure worth retrying.
    Transient,
    /// The policy gate denied the step, or its approval was refused.
    Denied,
    /// The output held data the skill was not cleared for, a hidden value, or a made-up
    /// token: blocked before anyone saw it.
    Leak,
    /// The request cannot work: a budget too small, a malformed composite, nesting too deep.
    Invalid,
    /// The skill is not available to this agent, or its kind cannot run here (no model, no
    /// sandbox, no native implementation registered).
    Unavailable,
    /// A script did not succeed in the sandbox (non-zero exit, a limit, refused, unapproved).
    Script,
    /// The skill itself failed for good (a native skill's permanent error, a failed
    /// composite sub-plan).
    Failed,
    /// The plan store failed while recording the step.
    Store,
    /// The decision or the execution record could not be audited (fail closed).
    Audit,
    /// Not run: a step it depends on did not succeed.
    Skipped,
    /// Not run: the run was cancelled first.
    Cancelled,
}

impl StepErrorKind {
    /// The stable code (`model`, `timeout`, ..., `cancelled`), used in audit records.
    pub fn as_str(self) -> &'static str {
        match self {
            StepErrorKind::Model => "model",
            StepErrorKind::Timeout => "timeout",
            StepErrorKind::Transient => "transient",
            StepErrorKind::Denied => "denied",
            StepErrorKind::Leak => "leak",
            StepErrorKind::Invalid => "invalid",
            StepErrorKind::Unavailable => "unavailable",
            StepErrorKind::Script => "script",
            StepErrorKind::Failed => "failed",
            StepErrorKind::Store => "store",
            StepErrorKind::Audit => "audit",
            StepErrorKind::Skipped => "skipped",
            StepErrorKind::Cancelled => "cancelled",
        }
    }
}

impl fmt::Display for StepErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Why a step attempt failed. Messages never carry a hidden value: a blocked output is
/// described by data types and positions only.
///
/// A value in a step's result rather than the crate's [`Error`](crate::Error): a failed step
/// is an outcome of the run, not a failure of the executor.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StepError {
    /// The kind, which decides whether another attempt is made.
    pub kind: StepErrorKind,
    /// What happened.
    pub message: String,
}

impl fmt::Display for StepError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.kind, self.message)
    }
}

impl StepError {
    /// An error of `kind`.
    pub fn new(kind: StepErrorKind, message: impl Into<String>) -> Self {
        StepError {
            kind,
            message: message.into(),
        }
    }

    /// A failure another attempt may cure (for native skills).
    pub fn transient(message: impl Into<String>) -> Self {
        Self::new(StepErrorKind::Transient, message)
    }

    /// A failure that will not go away (for native skills).
    pub fn failed(message: impl Into<String>) -> Self {
        Self::new(StepErrorKind::Failed, message)
    }
}

/// How often a step is tried and how long to wait in between.
///
/// Attempt `n` (from 1) that fails with a retried kind is followed, after
/// `min(initial_backoff * multiplier^(n-1), max_backoff)`, by attempt `n + 1`, up to
/// `max_attempts` in all.
///
/// ```
/// use std::time::Duration;
/// use skills_orchestrate::execute::{RetryPolicy, StepErrorKind};
///
/// let policy = RetryPolicy::new(4).backoff(Duration::from_millis(100), Duration::from_millis(250));
/// assert_eq!(policy.delay(1), Duration::from_millis(100));
/// assert_eq!(policy.delay(2), Duration::from_millis(200));
/// assert_eq!(policy.delay(3), Duration::from_millis(250));
/// assert!(policy.retries(StepErrorKind::Timeout));
/// assert!(!policy.retries(StepErrorKind::Leak));
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct RetryPolicy {
    /// Attempts in all, at least 1.
    pub max_attempts: u32,
    /// The wait after the first failed attempt.
    pub initial_backoff: Duration,
    /// The longest wait.
    pub max_backoff: Duration,
    /// The factor each wait grows by (at least 1).
    pub multiplier: f64,
    /// The kinds of failure that are retried.
    pub retry_on: BTreeSet<StepErrorKind>,
}

impl Default for RetryPolicy {
    /// Three attempts, 200 ms doubling up to 5 s, retrying model errors, timeouts and
    /// transient failures.
    fn default() -> Self {
        RetryPolicy {
            max_attempts: 3,
            initial_backoff: Duration::from_millis(200),
            max_backoff: Duration::from_secs(5),
            multiplier: 2.0,
            retry_on: [
                StepErrorKind::Model,
                StepErrorKind::Timeout,
                StepErrorKind::Transient,
            ]
            .into_iter()
            .collect(),
        }
    }
}

impl RetryPolicy {
    /// The default policy with `max_attempts` attempts (at least 1).
    pub fn new(max_attempts: u32) -> Self {
        RetryPolicy {
            max_attempts: max_attempts.max(1),
            ..Self::default()
        }
    }

    /// One attempt, never retried.
    pub fn never() -> Self {
        Self::new(1)
    }

    /// Sets the first and the longest wait.
    pub fn backoff(mut self, initial: Duration, max: Duration) -> Self {
        self.initial_backoff = initial;
        self.max_backoff = max.max(initial);
        self
    }

    /// Sets the growth factor (values below 1, and NaN, become 1).
    pub fn multiplier(mut self, factor: f64) -> Self {
        self.multiplier = if factor.is_nan() {
            1.0
        } else {
            factor.max(1.0)
        };
        self
    }

    /// Retries exactly these kinds.
    pub fn retry_on(mut self, kinds: impl IntoIterator<Item = StepErrorKind>) -> Self {
        self.retry_on = kinds.into_iter().collect();
        self
    }

    /// Whether a failure of `kind` is retried (attempts permitting).
    pub fn retries(&self, kind: StepErrorKind) -> bool {
        self.retry_on.contains(&kind)
    }

    /// Whether attempt `attempt` (from 1), failed with `kind`, is followed by another.
    pub fn another_after(&self, attempt: u32, kind: StepErrorKind) -> bool {
        attempt < self.max_attempts.max(1) && self.retries(kind)
    }

    /// The wait after failed attempt `attempt` (from 1).
    pub fn delay(&self, attempt: u32) -> Duration {
        let exponent = attempt.saturating_sub(1).min(64) as i32;
        let factor = self.multiplier.max(1.0).powi(exponent);
        let wait = self.initial_backoff.as_secs_f64() * factor;
        if !wait.is_finite() || wait >= self.max_backoff.as_secs_f64() {
            self.max_backoff
        } else {
            Duration::from_secs_f64(wait)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn final_kinds_are_not_retried_by_default() {
        let policy = RetryPolicy::default();
        for kind in [
            StepErrorKind::Denied,
            StepErrorKind::Leak,
            StepErrorKind::Invalid,
        ] {
            assert!(!policy.another_after(1, kind), "{kind}");
        }
        assert!(policy.another_after(2, StepErrorKind::Model));
        assert!(!policy.another_after(3, StepErrorKind::Model));
        assert!(!RetryPolicy::never().another_after(1, StepErrorKind::Timeout));
    }

    proptest! {
        #[test]
        fn waits_grow_and_stay_within_the_cap(
            initial in 0u64..10_000, cap in 0u64..60_000, factor in 0.0f64..8.0, attempt in 1u32..200,
        ) {
            let policy = RetryPolicy::default()
                .backoff(Duration::from_millis(initial), Duration::from_millis(cap))
                .multiplier(factor);
            let now = policy.delay(attempt);
            prop_assert!(now <= policy.max_backoff);
            prop_assert!(policy.delay(attempt + 1) >= now);
        }
    }
}
