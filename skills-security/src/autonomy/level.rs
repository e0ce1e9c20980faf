//! One call for a skill's autonomy level (seed 000 part 6, `GET /autonomy/{skill_id}`):
//! everything the rules of part 4 read and decide for one user and skill, from one read of
//! the trust record and one reading of the clock, so the parts never disagree.

use serde::{Deserialize, Serialize};
use skills_store_traits::{Timestamp, UserScope};

use super::upgrade::{UPGRADE_AFTER, offer};
use super::{ApprovalDecision, Autonomy, RiskLevel, decide, session_trust_live};

/// Whether an autonomy upgrade can be offered now.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "status", rename_all = "snake_case")]
#[non_exhaustive]
pub enum UpgradeStatus {
    /// [`Autonomy::request_autonomy_upgrade`] returns an offer.
    Offerable,
    /// Not enough successes since the last reset yet.
    NotYet {
        /// Successes since the last reset.
        successes: u64,
        /// Successes an offer needs ([`UPGRADE_AFTER`]).
        needed: u64,
    },
    /// A critical skill: nothing but `no` could be honoured, so none is offered.
    NothingToGrant,
}

/// A skill's autonomy level for one user: the answer of [`Autonomy::autonomy_level`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct AutonomyLevel {
    /// The skill.
    pub skill_id: String,
    /// The risk it was judged at.
    pub risk: RiskLevel,
    /// Successful runs since the last reset.
    pub successful_executions: u64,
    /// Failed runs, ever.
    pub failed_executions: u64,
    /// How often trust was reset.
    pub trust_reset_count: u64,
    /// Successes after which runs stop asking at this risk (`None`: always asks).
    pub auto_execute_after: Option<u64>,
    /// Successes still missing before that (`Some(0)` once reached; `None` where successes
    /// never suffice).
    pub successes_needed: Option<u64>,
    /// Whether this risk level uses session trust at all.
    pub session_trust_allowed: bool,
    /// When the session trust in force ends: `None` when there is none, it has expired, or
    /// this risk level ignores it.
    pub session_trust_expires: Option<Timestamp>,
    /// Whether the user approved the skill for good (honoured at low and medium risk only).
    pub globally_approved: bool,
    /// Whether the next run needs approval, and why (exactly what
    /// [`Autonomy::should_request_approval`] answers now).
    pub next_run: ApprovalDecision,
    /// Whether an upgrade can be offered now.
    pub upgrade: UpgradeStatus,
    /// When this was read (the service's clock).
    pub as_of: Timestamp,
}

impl AutonomyLevel {
    /// Whether [`Autonomy::request_autonomy_upgrade`] would make an offer now.
    pub fn can_offer_upgrade(&self) -> bool {
        self.upgrade == UpgradeStatus::Offerable
    }
}

impl Autonomy {
    /// The autonomy level of `skill_id` for `scope`'s user at `risk`: its counters, session
    /// trust, global approval, whether the next run needs approval and why, and whether an
    /// upgrade can be offered. A user with no history gets the level of a first run.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use skills_security::autonomy::{ApprovalReason, Autonomy, Outcome, RiskLevel, UpgradeChoice, UpgradeStatus};
    /// use skills_store_traits::{ManualClock, UserScope, in_memory::InMemoryTrustStore};
    ///
    /// # futures::executor::block_on(async {
    /// let clock = ManualClock::new(1_000);
    /// let autonomy = Autonomy::new(Arc::new(InMemoryTrustStore::new()), clock.clone()).with_session_length(60_000);
    /// let alice = UserScope::new("acme", "alice");
    /// let first = autonomy.autonomy_level(&alice, "pay", RiskLevel::High).await?;
    /// assert!(first.next_run.needs_approval);
    /// assert_eq!(first.upgrade, UpgradeStatus::NotYet { successes: 0, needed: 10 });
    ///
    /// for _ in 0..10 {
    ///     autonomy.record_outcome(&alice, "pay", Outcome::Success).await?;
    /// }
    /// assert!(autonomy.autonomy_level(&alice, "pay", RiskLevel::High).await?.can_offer_upgrade());
    /// autonomy.apply_upgrade_choice(&alice, "pay", RiskLevel::High, UpgradeChoice::Session).await?;
    /// let level = autonomy.autonomy_level(&alice, "pay", RiskLevel::High).await?;
    /// assert_eq!(level.successful_executions, 10);
    /// assert_eq!(level.session_trust_expires, Some(61_000));
    /// assert!(!level.next_run.needs_approval);
    /// assert_eq!(level.next_run.reason, ApprovalReason::SessionTrust);
    /// assert_eq!(level.successes_needed, None, "high risk never runs on successes alone");
    ///
    /// clock.advance(60_000);
    /// let later = autonomy.autonomy_level(&alice, "pay", RiskLevel::High).await?;
    /// assert_eq!(later.session_trust_expires, None, "the session is over");
    /// assert!(later.next_run.needs_approval);
    /// # Ok::<(), skills_security::Error>(())
    /// # }).unwrap();
    /// ```
    pub async fn autonomy_level(
        &self,
        scope: &UserScope,
        skill_id: &str,
        risk: RiskLevel,
    ) -> skills_store_traits::Result<AutonomyLevel> {
        let record = self.store.get(scope, skill_id).await?;
        let now = self.clock.now();
        let successes = record.as_ref().map_or(0, |r| r.successful_executions);
        let threshold = risk.auto_execute_after();
        let session_trust_expires = record
            .as_ref()
            .filter(|r| risk.session_trust_allowed() && session_trust_live(r, now))
            .and_then(|r| r.session_trust_expires);
        let upgrade = if risk == RiskLevel::Critical {
            UpgradeStatus::NothingToGrant
        } else if offer(skill_id, risk, successes).is_some() {
            UpgradeStatus::Offerable
        } else {
            UpgradeStatus::NotYet {
                successes,
                needed: UPGRADE_AFTER,
            }
        };
        Ok(AutonomyLevel {
            skill_id: skill_id.to_owned(),
            risk,
            successful_executions: successes,
            failed_executions: record.as_ref().map_or(0, |r| r.failed_executions),
            trust_reset_count: record.as_ref().map_or(0, |r| r.trust_reset_count),
            auto_execute_after: threshold,
            successes_needed: threshold.map(|t| t.saturating_sub(successes)),
            session_trust_allowed: risk.session_trust_allowed(),
            session_trust_expires,
            globally_approved: record.as_ref().is_some_and(|r| r.globally_approved),
            next_run: decide(record.as_ref(), risk, now),
            upgrade,
            as_of: now,
        })
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use skills_store_traits::ManualClock;
    use skills_store_traits::in_memory::InMemoryTrustStore;

    use super::*;
    use crate::autonomy::{ApprovalReason, Outcome};

    #[test]
    fn the_level_agrees_with_each_rule_it_reports() {
        futures::executor::block_on(async {
            let autonomy = Autonomy::new(Arc::new(InMemoryTrustStore::new()), ManualClock::new(5));
            let bob = UserScope::new("acme", "bob");
            for _ in 0..2 {
                autonomy
                    .record_outcome(&bob, "pdf", Outcome::Success)
                    .await
                    .unwrap();
            }
            let low = autonomy
                .autonomy_level(&bob, "pdf", RiskLevel::Low)
                .await
                .unwrap();
            assert_eq!(
                (low.successful_executions, low.successes_needed, low.as_of),
                (2, Some(1), 5)
            );
            assert_eq!(
                low.next_run,
                autonomy
                    .should_request_approval(&bob, "pdf", RiskLevel::Low)
                    .await
                    .unwrap()
            );
            autonomy
                .record_outcome(&bob, "pdf", Outcome::Success)
                .await
                .unwrap();
            let earned = autonomy
                .autonomy_level(&bob, "pdf", RiskLevel::Low)
                .await
                .unwrap();
            assert_eq!(earned.successes_needed, Some(0));
            assert_eq!(
                earned.next_run.reason,
                ApprovalReason::AutoApproved { threshold: 3 }
            );
            assert_eq!(
                earned.upgrade,
                UpgradeStatus::NotYet {
                    successes: 3,
                    needed: UPGRADE_AFTER
                }
            );
            autonomy
                .record_outcome(&bob, "pdf", Outcome::Failure)
                .await
                .unwrap();
            let reset = autonomy
                .autonomy_level(&bob, "pdf", RiskLevel::Low)
                .await
                .unwrap();
            assert_eq!(
                (
                    reset.successful_executions,
                    reset.failed_executions,
                    reset.trust_reset_count
                ),
                (0, 1, 1)
            );
            assert!(reset.next_run.needs_approval);
            let critical = autonomy
                .autonomy_level(&bob, "wipe", RiskLevel::Critical)
                .await
                .unwrap();
            assert_eq!(critical.upgrade, UpgradeStatus::NothingToGrant);
            assert_eq!(
                (critical.auto_execute_after, critical.session_trust_allowed),
                (None, false)
            );
        });
    }
}
