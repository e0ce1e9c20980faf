//! The crate's error type.

use thiserror::Error;

/// Everything that can go wrong while selecting skills, planning, executing or learning.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum Error {
    /// The model client failed (transport, provider refusal, quota); the text is the
    /// client's own description.
    #[error("model call failed: {0}")]
    Llm(String),
    /// The model's output did not match the JSON shape asked for, even after a retry.
    #[error("model output for {what} was malformed after {attempts} attempts: {reason}")]
    MalformedModelOutput {
        /// What was being asked for (for example `skill analysis`).
        what: &'static str,
        /// How many calls were made.
        attempts: u32,
        /// Why the last output was refused (parse error or schema violations).
        reason: String,
    },
    /// The plan's dependencies form a cycle; the steps on it, in order, first repeated last.
    #[error("the plan's dependencies form a cycle: {}", .cycle.join(" -> "))]
    Cycle {
        /// The step ids on the cycle.
        cycle: Vec<String>,
    },
    /// A plan or request is not well formed (a duplicate step id, a dependency on a step that
    /// does not exist, an empty task, a budget of zero).
    #[error("invalid {what}: {reason}")]
    Invalid {
        /// What was invalid.
        what: String,
        /// Why.
        reason: String,
    },
    /// A skill named by a plan is not available to the agent.
    #[error("skill `{0}` is not available to this agent")]
    UnknownSkill(String),
    /// Execution was cancelled before it finished.
    #[error("execution was cancelled")]
    Cancelled,
    /// A store failed.
    #[error(transparent)]
    Store(#[from] skills_store_traits::Error),
    /// A security component failed (sanitizer, sandbox, gate, audit).
    #[error(transparent)]
    Security(#[from] skills_security::Error),
    /// The catalog failed (resolution, materialization).
    #[error(transparent)]
    Catalog(#[from] skills_catalog::Error),
    /// The policy denies a planned step, so the plan cannot run.
    #[error("step `{step}` (skill `{skill}`) is denied: {reason}")]
    StepDenied {
        /// The step's id.
        step: String,
        /// The skill it would run.
        skill: String,
        /// The policy's reason.
        reason: String,
    },
    /// A plan's event could not be written to the audit trail (nothing it would have
    /// recorded happened).
    #[error(transparent)]
    Audit(#[from] skills_security::audit::AuditError),
    /// A stored plan is not in the state the call needs (approving a decided plan,
    /// running one that is not approved or already finished).
    #[error("plan `{plan_id}` {reason}")]
    PlanState {
        /// The plan store's id.
        plan_id: String,
        /// What is wrong.
        reason: String,
    },
    // Helpers: add new variants above this line, one str_replace each.
}

/// The crate's result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;
