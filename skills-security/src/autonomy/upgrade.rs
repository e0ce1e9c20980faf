//! The autonomy upgrade of seed 000 part 4 (`request_autonomy_upgrade`) and part 6
//! (`POST /autonomy/{skill_id}/upgrade`): after a good track record the user is offered
//! `session` ("Yes, for this session"), `always` ("Yes, always") and `no` ("No, keep
//! asking").
//!
//! The seed always offers the three. Not every risk level can honour each: session trust
//! exists only for high-risk skills, global approval only for low and medium ones, and a
//! critical skill asks every time. Rather than dropping an option (a user interface built on
//! the seed's three buttons would silently lose one), every offer lists all three in the
//! seed's order and marks each with whether it is available at this risk and, when not,
//! why ([`UpgradeRefusal`]). Applying an unavailable option is
//! [`Error::UpgradeUnavailable`], never a silent no-op. A critical skill gets no offer at
//! all: only `no` could be honoured, so there is nothing to ask.

use std::fmt;

use serde::{Deserialize, Serialize};
use skills_store_traits::UserScope;
use skills_store_traits::trust::TrustRecord;

use super::{Autonomy, RiskLevel};
use crate::error::Error;

/// Successes after which an upgrade may be requested (the seed's 10).
pub const UPGRADE_AFTER: u64 = 10;

/// What the user chose when offered more autonomy.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum UpgradeChoice {
    /// "Yes, for this session".
    Session,
    /// "Yes, always".
    Always,
    /// "No, keep asking".
    No,
}

impl UpgradeChoice {
    /// The three choices, in the seed's order.
    pub const ALL: [UpgradeChoice; 3] = [
        UpgradeChoice::Session,
        UpgradeChoice::Always,
        UpgradeChoice::No,
    ];

    /// The seed's label.
    pub fn label(self) -> &'static str {
        match self {
            UpgradeChoice::Session => "Yes, for this session",
            UpgradeChoice::Always => "Yes, always",
            UpgradeChoice::No => "No, keep asking",
        }
    }

    /// The seed's id: `session`, `always` or `no`.
    pub fn as_str(self) -> &'static str {
        match self {
            UpgradeChoice::Session => "session",
            UpgradeChoice::Always => "always",
            UpgradeChoice::No => "no",
        }
    }

    /// Why `risk` cannot honour this choice; `None` when it can (`no` always can).
    pub fn refusal(self, risk: RiskLevel) -> Option<UpgradeRefusal> {
        match (self, risk) {
            (UpgradeChoice::No, _) => None,
            (_, RiskLevel::Critical) => Some(UpgradeRefusal::AlwaysAsks),
            (UpgradeChoice::Session, RiskLevel::Low | RiskLevel::Medium) => {
                Some(UpgradeRefusal::NoSessionTrust { risk })
            }
            (UpgradeChoice::Always, RiskLevel::High) => Some(UpgradeRefusal::NoGlobalApproval),
            _ => None,
        }
    }
}

impl fmt::Display for UpgradeChoice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Why a risk level cannot honour an upgrade option.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(tag = "reason", rename_all = "snake_case")]
#[non_exhaustive]
pub enum UpgradeRefusal {
    /// `session` for a low- or medium-risk skill: session trust exists only for high risk;
    /// these earn autonomy by successes or by global approval.
    NoSessionTrust {
        /// The skill's risk.
        risk: RiskLevel,
    },
    /// `always` for a high-risk skill: it is never approved for good, at most trusted for
    /// a session.
    NoGlobalApproval,
    /// `session` or `always` for a critical skill: it asks every time.
    AlwaysAsks,
}

impl fmt::Display for UpgradeRefusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            UpgradeRefusal::NoSessionTrust { risk } => write!(
                f,
                "session trust is for high-risk skills; a {risk}-risk skill runs on its own after {} successful uses or once approved for good",
                risk.auto_execute_after().unwrap_or(0)
            ),
            UpgradeRefusal::NoGlobalApproval => f.write_str(
                "a high-risk skill is never approved for good; it can be trusted for a session",
            ),
            UpgradeRefusal::AlwaysAsks => f.write_str("a critical skill asks every time"),
        }
    }
}

/// One option of an upgrade request.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct UpgradeOption {
    /// `session`, `always` or `no`.
    pub id: UpgradeChoice,
    /// The label shown.
    pub label: String,
    /// Whether the skill's risk level can honour it.
    pub available: bool,
    /// Why not, when it cannot.
    pub unavailable: Option<UpgradeRefusal>,
}

impl UpgradeOption {
    /// The option `id` as offered at `risk`.
    pub fn at(id: UpgradeChoice, risk: RiskLevel) -> UpgradeOption {
        let unavailable = id.refusal(risk);
        UpgradeOption {
            id,
            label: id.label().to_owned(),
            available: unavailable.is_none(),
            unavailable,
        }
    }
}

/// An offer to run a skill with less supervision (seed: after 10 successes).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct UpgradeRequest {
    /// The message to show.
    pub message: String,
    /// `session`, `always` and `no`, in the seed's order, each marked available or not.
    pub options: Vec<UpgradeOption>,
    /// The risk the options were judged at.
    pub risk: RiskLevel,
    /// The successes since the last reset that earned the offer.
    pub successes: u64,
}

impl UpgradeRequest {
    /// The options the user can actually take.
    pub fn available(&self) -> impl Iterator<Item = &UpgradeOption> {
        self.options.iter().filter(|o| o.available)
    }
}

impl Autonomy {
    /// The seed's autonomy upgrade request once the user has [`UPGRADE_AFTER`] successes
    /// with the skill: the message and all three options, each marked available at `risk`
    /// or not, with why (see the module docs). `None` before that, and for critical skills
    /// (nothing but `no` could be honoured).
    ///
    /// ```
    /// use std::sync::Arc;
    /// use skills_security::autonomy::{Autonomy, Outcome, RiskLevel, UpgradeChoice, UpgradeRefusal};
    /// use skills_security::Error;
    /// use skills_store_traits::{ManualClock, UserScope, in_memory::InMemoryTrustStore};
    ///
    /// # futures::executor::block_on(async {
    /// let autonomy = Autonomy::new(Arc::new(InMemoryTrustStore::new()), ManualClock::new(0));
    /// let alice = UserScope::new("acme", "alice");
    /// for _ in 0..10 {
    ///     autonomy.record_outcome(&alice, "crm", Outcome::Success).await?;
    /// }
    /// let offer = autonomy.request_autonomy_upgrade(&alice, "crm", RiskLevel::Medium).await?.unwrap();
    /// let shown: Vec<_> = offer.options.iter().map(|o| (o.id, o.available)).collect();
    /// assert_eq!(shown, [(UpgradeChoice::Session, false), (UpgradeChoice::Always, true), (UpgradeChoice::No, true)]);
    /// assert_eq!(offer.options[0].unavailable, Some(UpgradeRefusal::NoSessionTrust { risk: RiskLevel::Medium }));
    /// // Choosing what the risk level cannot honour is an error, not a silent no-op.
    /// let refused = autonomy.apply_upgrade_choice(&alice, "crm", RiskLevel::Medium, UpgradeChoice::Session).await;
    /// assert!(matches!(refused, Err(Error::UpgradeUnavailable { .. })));
    /// let record = autonomy.apply_upgrade_choice(&alice, "crm", RiskLevel::Medium, UpgradeChoice::Always).await?;
    /// assert!(record.is_some_and(|r| r.globally_approved));
    /// # Ok::<(), skills_security::Error>(())
    /// # }).unwrap();
    /// ```
    pub async fn request_autonomy_upgrade(
        &self,
        scope: &UserScope,
        skill_id: &str,
        risk: RiskLevel,
    ) -> skills_store_traits::Result<Option<UpgradeRequest>> {
        let successes = self
            .store
            .get(scope, skill_id)
            .await?
            .map_or(0, |r| r.successful_executions);
        Ok(offer(skill_id, risk, successes))
    }

    /// Applies the user's answer to an upgrade request at `risk`: `session` grants session
    /// trust, `always` approves the skill for good, `no` changes nothing (`Ok(None)`).
    /// Returns the changed record. An option `risk` cannot honour is
    /// [`Error::UpgradeUnavailable`] naming why; a store failure is [`Error::Store`].
    pub async fn apply_upgrade_choice(
        &self,
        scope: &UserScope,
        skill_id: &str,
        risk: RiskLevel,
        choice: UpgradeChoice,
    ) -> Result<Option<TrustRecord>, Error> {
        if let Some(refusal) = choice.refusal(risk) {
            return Err(Error::UpgradeUnavailable {
                choice,
                risk,
                refusal,
            });
        }
        Ok(match choice {
            UpgradeChoice::Session => self.grant_session_trust(scope, skill_id, risk).await?,
            UpgradeChoice::Always => self.approve_globally(scope, skill_id, risk).await?,
            UpgradeChoice::No => None,
        })
    }
}

/// The offer for `successes` at `risk`, if one may be made.
pub(super) fn offer(skill_id: &str, risk: RiskLevel, successes: u64) -> Option<UpgradeRequest> {
    if successes < UPGRADE_AFTER || risk == RiskLevel::Critical {
        return None;
    }
    Some(UpgradeRequest {
        message: format!(
            "I've successfully used {skill_id} {successes} times without issues. \
             Would you like me to handle this automatically in the future?"
        ),
        options: UpgradeChoice::ALL
            .into_iter()
            .map(|id| UpgradeOption::at(id, risk))
            .collect(),
        risk,
        successes,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_offer_lists_all_three_and_marks_what_its_risk_cannot_honour() {
        let marks = |risk| -> Vec<(UpgradeChoice, Option<UpgradeRefusal>)> {
            offer("s", risk, UPGRADE_AFTER)
                .map(|o| o.options.iter().map(|o| (o.id, o.unavailable)).collect())
                .unwrap_or_default()
        };
        for risk in [RiskLevel::Low, RiskLevel::Medium] {
            assert_eq!(
                marks(risk),
                [
                    (
                        UpgradeChoice::Session,
                        Some(UpgradeRefusal::NoSessionTrust { risk })
                    ),
                    (UpgradeChoice::Always, None),
                    (UpgradeChoice::No, None)
                ]
            );
        }
        assert_eq!(
            marks(RiskLevel::High),
            [
                (UpgradeChoice::Session, None),
                (
                    UpgradeChoice::Always,
                    Some(UpgradeRefusal::NoGlobalApproval)
                ),
                (UpgradeChoice::No, None)
            ]
        );
        assert!(offer("s", RiskLevel::Critical, 1_000).is_none());
        assert!(offer("s", RiskLevel::Low, UPGRADE_AFTER - 1).is_none());
        let option = UpgradeOption::at(UpgradeChoice::Always, RiskLevel::High);
        assert_eq!(
            (option.label.as_str(), option.available),
            ("Yes, always", false)
        );
        assert_eq!(
            UpgradeChoice::Session
                .refusal(RiskLevel::Low)
                .map(|r| r.to_string())
                .as_deref(),
            Some(
                "session trust is for high-risk skills; a low-risk skill runs on its own after 3 successful uses or once approved for good"
            )
        );
        assert_eq!(
            UpgradeChoice::Always.refusal(RiskLevel::Critical),
            Some(UpgradeRefusal::AlwaysAsks)
        );
    }
}
