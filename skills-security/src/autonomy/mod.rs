//! Graduated autonomy (seed 000 part 4): trust in a skill grows with successful runs and
//! resets on a bad one, and decides whether a run needs a human's approval.
//!
//! Threat: a skill running unattended before it has earned it, keeping trust after it
//! misbehaved, or a session grant outliving its session. Guarantees, per risk level:
//!
//! | risk | runs without asking when | session trust |
//! |---|---|---|
//! | low | 3 successes since the last reset, or approved for good | n/a |
//! | medium | 10 successes since the last reset, or approved for good | n/a |
//! | high | session trust granted and not expired | yes |
//! | critical | never | no |
//!
//! A failure or negative feedback resets successes, session trust and global approval in
//! one atomic store change and counts the reset; session trust is honoured only before its
//! expiry, read from this service's clock. State lives in the host's [`TrustStore`].
//!
//! | module | what it holds |
//! |---|---|
//! | this one | [`RiskLevel`], [`decide`] (the rule, pure), [`Autonomy`]: approval, outcomes, session trust, global approval |
//! | `upgrade` | the upgrade offer after [`UPGRADE_AFTER`] successes: `session` / `always` / `no`, each marked available at the skill's risk or not ([`UpgradeRefusal`]); applying an unavailable one is an error |
//! | `level` | [`Autonomy::autonomy_level`]: one call for everything the rules read and decide about one skill ([`AutonomyLevel`]) |
//!
//! ```
//! use std::sync::Arc;
//! use skills_security::autonomy::{Autonomy, Outcome, RiskLevel};
//! use skills_store_traits::{ManualClock, UserScope, in_memory::InMemoryTrustStore};
//!
//! # futures::executor::block_on(async {
//! let autonomy = Autonomy::new(Arc::new(InMemoryTrustStore::new()), ManualClock::new(0));
//! let alice = UserScope::new("acme", "alice");
//! let first = autonomy.should_request_approval(&alice, "pdf", RiskLevel::Low).await?;
//! assert!(first.needs_approval);
//! assert_eq!(first.reason.to_string(), "Initial approval required");
//! for _ in 0..3 {
//!     autonomy.record_outcome(&alice, "pdf", Outcome::Success).await?;
//! }
//! let later = autonomy.should_request_approval(&alice, "pdf", RiskLevel::Low).await?;
//! assert!(!later.needs_approval);
//! assert_eq!(later.reason.to_string(), "Auto-approved after 3 successful uses");
//! # Ok::<(), skills_store_traits::Error>(())
//! # }).unwrap();
//! ```

use std::fmt;
use std::sync::Arc;

mod level;
mod upgrade;

pub use level::{AutonomyLevel, UpgradeStatus};
pub use upgrade::{UPGRADE_AFTER, UpgradeChoice, UpgradeOption, UpgradeRefusal, UpgradeRequest};

use serde::{Deserialize, Serialize};
use skills_store_traits::trust::{TrustChange, TrustRecord};
use skills_store_traits::{Clock, Result, Timestamp, TrustStore, UserScope};

/// How risky a skill's operations are (seed 000's `SKILL_RISK_LEVELS`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RiskLevel {
    /// Documents, research (`pdf`, `docx`, `xlsx`, `pptx`, `research`).
    Low,
    /// Acting for the user (`email-sequence`, `calendar-management`, `crm-operations`).
    Medium,
    /// External effects (`external-api-calls`, `payment-processing`).
    High,
    /// Irreversible (`data-deletion`, `financial-transactions`).
    Critical,
}

impl RiskLevel {
    /// Successes after which runs no longer need approval; `None` for always ask.
    pub fn auto_execute_after(self) -> Option<u64> {
        match self {
            RiskLevel::Low => Some(3),
            RiskLevel::Medium => Some(10),
            RiskLevel::High | RiskLevel::Critical => None,
        }
    }

    /// Whether a user may trust a skill of this level for a session.
    pub fn session_trust_allowed(self) -> bool {
        self == RiskLevel::High
    }

    /// Every level asks the first time (`initial_approval_required`).
    pub fn initial_approval_required(self) -> bool {
        true
    }

    /// The lowercase name.
    pub fn as_str(self) -> &'static str {
        match self {
            RiskLevel::Low => "low",
            RiskLevel::Medium => "medium",
            RiskLevel::High => "high",
            RiskLevel::Critical => "critical",
        }
    }
}

impl fmt::Display for RiskLevel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The risk a skill carries when nothing more is known than its trust level: core and
/// verified skills are reviewed (`Low`), a user's own skills act for them unreviewed
/// (`Medium`), community skills come from a public registry unreviewed (`High`). The one
/// place the family decides a default risk.
pub fn default_risk(trust: crate::trust::TrustLevel) -> RiskLevel {
    use crate::trust::TrustLevel;
    match trust {
        TrustLevel::Core | TrustLevel::Verified => RiskLevel::Low,
        TrustLevel::User => RiskLevel::Medium,
        TrustLevel::Community => RiskLevel::High,
    }
}

/// Why [`Autonomy::should_request_approval`] decided as it did; `Display` gives the seed's
/// reason strings.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(tag = "reason", rename_all = "snake_case")]
#[non_exhaustive]
pub enum ApprovalReason {
    /// Critical: "This operation requires explicit approval".
    ExplicitApprovalRequired,
    /// High with live session trust: "Session trust granted".
    SessionTrust,
    /// High without it: "High-risk operation requires approval".
    HighRiskRequiresApproval,
    /// Low/medium past the threshold: "Auto-approved after {threshold} successful uses".
    AutoApproved {
        /// The threshold.
        threshold: u64,
    },
    /// Low/medium approved for good: "User has globally approved this skill".
    GloballyApproved,
    /// Low/medium otherwise: "Initial approval required".
    InitialApprovalRequired,
}

impl fmt::Display for ApprovalReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ApprovalReason::ExplicitApprovalRequired => {
                f.write_str("This operation requires explicit approval")
            }
            ApprovalReason::SessionTrust => f.write_str("Session trust granted"),
            ApprovalReason::HighRiskRequiresApproval => {
                f.write_str("High-risk operation requires approval")
            }
            ApprovalReason::AutoApproved { threshold } => {
                write!(f, "Auto-approved after {threshold} successful uses")
            }
            ApprovalReason::GloballyApproved => {
                f.write_str("User has globally approved this skill")
            }
            ApprovalReason::InitialApprovalRequired => f.write_str("Initial approval required"),
        }
    }
}

/// The answer of [`Autonomy::should_request_approval`]: the seed's `(needs_approval, reason)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ApprovalDecision {
    /// Whether a human must approve the run.
    pub needs_approval: bool,
    /// Why.
    pub reason: ApprovalReason,
}

/// The rule itself, on a trust record read at `now` (no record: no history).
///
/// Follows the seed's order: critical always asks; high runs only on unexpired session
/// trust; low and medium run past their threshold or when approved for good.
pub fn decide(record: Option<&TrustRecord>, risk: RiskLevel, now: Timestamp) -> ApprovalDecision {
    let ask = |reason| ApprovalDecision {
        needs_approval: true,
        reason,
    };
    let run = |reason| ApprovalDecision {
        needs_approval: false,
        reason,
    };
    if risk == RiskLevel::Critical {
        return ask(ApprovalReason::ExplicitApprovalRequired);
    }
    if risk == RiskLevel::High {
        return if record.is_some_and(|r| session_trust_live(r, now)) {
            run(ApprovalReason::SessionTrust)
        } else {
            ask(ApprovalReason::HighRiskRequiresApproval)
        };
    }
    let successes = record.map_or(0, |r| r.successful_executions);
    if let Some(threshold) = risk.auto_execute_after()
        && successes >= threshold
    {
        return run(ApprovalReason::AutoApproved { threshold });
    }
    if record.is_some_and(|r| r.globally_approved) {
        return run(ApprovalReason::GloballyApproved);
    }
    ask(ApprovalReason::InitialApprovalRequired)
}

/// True when `record` holds session trust that has not expired at `now` (a grant without an
/// expiry is not honoured).
pub fn session_trust_live(record: &TrustRecord, now: Timestamp) -> bool {
    record.session_trust_granted && record.session_trust_expires.is_some_and(|end| now < end)
}

/// How a run went.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// It succeeded and nobody complained.
    Success,
    /// It failed.
    Failure,
    /// It succeeded but the user's feedback was negative.
    NegativeFeedback,
}

/// Graduated autonomy over a [`TrustStore`].
#[derive(Clone)]
pub struct Autonomy {
    store: Arc<dyn TrustStore>,
    clock: Arc<dyn Clock>,
    session_length: i64,
}

impl fmt::Debug for Autonomy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Autonomy")
            .field("session_length", &self.session_length)
            .finish_non_exhaustive()
    }
}

impl Autonomy {
    /// Autonomy over `store`, reading the time from `clock`; sessions last 8 hours.
    pub fn new(store: Arc<dyn TrustStore>, clock: Arc<dyn Clock>) -> Autonomy {
        Autonomy {
            store,
            clock,
            session_length: 8 * 60 * 60 * 1000,
        }
    }

    /// The same with sessions of `millis`.
    pub fn with_session_length(mut self, millis: i64) -> Autonomy {
        self.session_length = millis;
        self
    }

    /// The store.
    pub fn store(&self) -> &Arc<dyn TrustStore> {
        &self.store
    }

    /// Whether running `skill_id` for `scope`'s user needs approval, and why.
    pub async fn should_request_approval(
        &self,
        scope: &UserScope,
        skill_id: &str,
        risk: RiskLevel,
    ) -> Result<ApprovalDecision> {
        let record = self.store.get(scope, skill_id).await?;
        Ok(decide(record.as_ref(), risk, self.clock.now()))
    }

    /// Records how a run went: a success adds one; a failure or negative feedback records a
    /// failure and resets trust (successes, session trust, global approval; the reset is
    /// counted), atomically.
    pub async fn record_outcome(
        &self,
        scope: &UserScope,
        skill_id: &str,
        outcome: Outcome,
    ) -> Result<TrustRecord> {
        let changes: &[TrustChange] = match outcome {
            Outcome::Success => &[TrustChange::Success],
            Outcome::Failure | Outcome::NegativeFeedback => {
                &[TrustChange::Failure, TrustChange::Reset]
            }
        };
        self.store.apply_all(scope, skill_id, changes).await
    }

    /// Trusts the skill for a session ending `session_length` from now. Only high-risk
    /// skills use session trust; for the other levels this changes nothing and returns
    /// `Ok(None)`.
    pub async fn grant_session_trust(
        &self,
        scope: &UserScope,
        skill_id: &str,
        risk: RiskLevel,
    ) -> Result<Option<TrustRecord>> {
        if !risk.session_trust_allowed() {
            return Ok(None);
        }
        let expires_at = self.clock.now().saturating_add(self.session_length);
        self.store
            .apply(
                scope,
                skill_id,
                TrustChange::GrantSessionTrust { expires_at },
            )
            .await
            .map(Some)
    }

    /// Approves the skill for good. Only low- and medium-risk skills honour global approval
    /// (high asks every session, critical every time); for those this returns `Ok(None)`.
    pub async fn approve_globally(
        &self,
        scope: &UserScope,
        skill_id: &str,
        risk: RiskLevel,
    ) -> Result<Option<TrustRecord>> {
        if risk.auto_execute_after().is_none() {
            return Ok(None);
        }
        self.store
            .apply(scope, skill_id, TrustChange::ApproveGlobally)
            .await
            .map(Some)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(successes: u64) -> TrustRecord {
        let mut r = TrustRecord::new(&UserScope::new("t", "u"), "s", 0);
        r.successful_executions = successes;
        r
    }

    #[test]
    fn thresholds_both_sides() {
        for (risk, threshold) in [(RiskLevel::Low, 3), (RiskLevel::Medium, 10)] {
            let below = decide(Some(&record(threshold - 1)), risk, 0);
            assert!(below.needs_approval);
            assert_eq!(below.reason, ApprovalReason::InitialApprovalRequired);
            let at = decide(Some(&record(threshold)), risk, 0);
            assert!(!at.needs_approval);
            assert_eq!(
                at.reason.to_string(),
                format!("Auto-approved after {threshold} successful uses")
            );
        }
        for risk in [RiskLevel::High, RiskLevel::Critical] {
            assert!(decide(Some(&record(1000)), risk, 0).needs_approval);
        }
        assert!(decide(None, RiskLevel::Low, 0).needs_approval);
    }

    #[test]
    fn session_trust_expires_and_is_ignored_where_not_allowed() {
        let mut r = record(0);
        r.apply(&TrustChange::GrantSessionTrust { expires_at: 100 }, 0);
        assert!(!decide(Some(&r), RiskLevel::High, 99).needs_approval);
        assert_eq!(
            decide(Some(&r), RiskLevel::High, 100).reason,
            ApprovalReason::HighRiskRequiresApproval
        );
        assert!(decide(Some(&r), RiskLevel::Critical, 0).needs_approval);
        r.apply(&TrustChange::ApproveGlobally, 0);
        assert_eq!(
            decide(Some(&r), RiskLevel::Medium, 0).reason,
            ApprovalReason::GloballyApproved
        );
        assert!(decide(Some(&r), RiskLevel::Critical, 0).needs_approval);
    }
}
