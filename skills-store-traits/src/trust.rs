//! Trust history per user and skill (seed 000 section 5, table `skill_trust_history`).
//!
//! The autonomy rules of seed 000 part 4 (thresholds per risk level, what a negative outcome
//! does) belong to `skills-security`; this store keeps the counters and flags those rules
//! read, and changes them only through [`TrustChange`]s applied atomically, so concurrent
//! outcomes are never lost to a read-modify-write race. Session trust is stored, not expired:
//! readers compare [`TrustRecord::session_trust_expires`] with their own clock.

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result, Violation};
use crate::tenancy::{TenantId, UserId, UserScope};
use crate::time::{Timestamp, new_id};

/// One user's trust history with one skill. At most one exists per (tenant, user, skill).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct TrustRecord {
    /// The record's id.
    pub id: String,
    /// The tenant.
    pub tenant: TenantId,
    /// The user.
    pub user: UserId,
    /// The skill.
    pub skill_id: String,
    /// Successful executions since the last reset.
    pub successful_executions: u64,
    /// Failed executions, ever (a reset keeps them as history).
    pub failed_executions: u64,
    /// The latest success.
    pub last_success: Option<Timestamp>,
    /// The latest failure.
    pub last_failure: Option<Timestamp>,
    /// Whether the user trusted the skill for a session.
    pub session_trust_granted: bool,
    /// When that session trust ends.
    pub session_trust_expires: Option<Timestamp>,
    /// Whether the user approved the skill for good.
    pub globally_approved: bool,
    /// When they did.
    pub globally_approved_at: Option<Timestamp>,
    /// How many times trust was reset.
    pub trust_reset_count: u64,
    /// When the record was created.
    pub created_at: Timestamp,
    /// When it last changed.
    pub updated_at: Timestamp,
}

impl TrustRecord {
    /// A fresh record: no executions, no trust, stamped `now`.
    pub fn new(scope: &UserScope, skill_id: impl Into<String>, now: Timestamp) -> Self {
        TrustRecord {
            id: new_id(),
            tenant: scope.tenant.clone(),
            user: scope.user.clone(),
            skill_id: skill_id.into(),
            successful_executions: 0,
            failed_executions: 0,
            last_success: None,
            last_failure: None,
            session_trust_granted: false,
            session_trust_expires: None,
            globally_approved: false,
            globally_approved_at: None,
            trust_reset_count: 0,
            created_at: now,
            updated_at: now,
        }
    }

    /// Applies `change` at time `now`. Backends that compute changes in application code
    /// use this so every backend agrees on what a change means.
    pub fn apply(&mut self, change: &TrustChange, now: Timestamp) {
        match change {
            TrustChange::Success => {
                self.successful_executions = self.successful_executions.saturating_add(1);
                self.last_success = Some(now);
            }
            TrustChange::Failure => {
                self.failed_executions = self.failed_executions.saturating_add(1);
                self.last_failure = Some(now);
            }
            TrustChange::GrantSessionTrust { expires_at } => {
                self.session_trust_granted = true;
                self.session_trust_expires = Some(*expires_at);
            }
            TrustChange::RevokeSessionTrust => {
                self.session_trust_granted = false;
                self.session_trust_expires = None;
            }
            TrustChange::ApproveGlobally => {
                if !self.globally_approved {
                    self.globally_approved = true;
                    self.globally_approved_at = Some(now);
                }
            }
            TrustChange::RevokeGlobalApproval => {
                self.globally_approved = false;
                self.globally_approved_at = None;
            }
            TrustChange::Reset => {
                self.successful_executions = 0;
                self.session_trust_granted = false;
                self.session_trust_expires = None;
                self.globally_approved = false;
                self.globally_approved_at = None;
                self.trust_reset_count = self.trust_reset_count.saturating_add(1);
            }
        }
        self.updated_at = now;
    }
}

/// A change to a [`TrustRecord`], applied atomically by [`TrustStore::apply`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
#[non_exhaustive]
pub enum TrustChange {
    /// One more successful execution; `last_success` becomes now.
    Success,
    /// One more failed execution; `last_failure` becomes now. Resets nothing by itself: the
    /// seed's "a negative outcome resets trust" is `[Failure, Reset]` in one call.
    Failure,
    /// Trust for a session ending at `expires_at` (replacing any earlier session trust).
    GrantSessionTrust {
        /// When the session trust ends.
        expires_at: Timestamp,
    },
    /// Session trust withdrawn: not granted, no expiry.
    RevokeSessionTrust,
    /// Approved for good; `globally_approved_at` is set on the first approval and kept by
    /// repeated ones.
    ApproveGlobally,
    /// Global approval withdrawn.
    RevokeGlobalApproval,
    /// Trust starts over: successful executions to 0, session trust and global approval
    /// withdrawn, `trust_reset_count` plus one. Failures and the last-success/failure times
    /// stay, as history.
    Reset,
}

pub(crate) fn check_skill_id(skill_id: &str) -> Result<()> {
    if skill_id.is_empty() {
        return Err(Error::invalid("skill_id", Violation::Empty));
    }
    Ok(())
}

/// Trust history per user and skill.
///
/// ```
/// use skills_store_traits::trust::TrustChange;
/// use skills_store_traits::{TrustStore, UserScope, in_memory::InMemoryTrustStore};
///
/// # futures::executor::block_on(async {
/// let store = InMemoryTrustStore::new();
/// let alice = UserScope::new("acme", "alice");
/// store.apply(&alice, "pdf", TrustChange::Success).await?;
/// let record = store.apply(&alice, "pdf", TrustChange::Success).await?;
/// assert_eq!(record.successful_executions, 2);
///
/// // A negative outcome: a failure and a reset, atomically.
/// let record = store
///     .apply_all(&alice, "pdf", &[TrustChange::Failure, TrustChange::Reset])
///     .await?;
/// assert_eq!((record.successful_executions, record.trust_reset_count), (0, 1));
///
/// // Bob, in the same tenant, has no history with the skill.
/// assert_eq!(store.get(&UserScope::new("acme", "bob"), "pdf").await?, None);
/// # Ok::<(), skills_store_traits::Error>(())
/// # }).unwrap();
/// ```
#[async_trait::async_trait]
pub trait TrustStore: Send + Sync {
    /// Creates the empty record of (user, skill); [`Error::Conflict`] if it exists.
    async fn create(&self, scope: &UserScope, skill_id: &str) -> Result<TrustRecord>;

    /// Applies `changes` in order, as one atomic step, creating the record first when it does
    /// not exist; returns the record after the changes. Every change of one call is stamped
    /// with the same time, from the store's clock.
    async fn apply_all(
        &self,
        scope: &UserScope,
        skill_id: &str,
        changes: &[TrustChange],
    ) -> Result<TrustRecord>;

    /// Applies one change; see [`TrustStore::apply_all`].
    async fn apply(
        &self,
        scope: &UserScope,
        skill_id: &str,
        change: TrustChange,
    ) -> Result<TrustRecord> {
        self.apply_all(scope, skill_id, std::slice::from_ref(&change))
            .await
    }

    /// The record of (user, skill).
    async fn get(&self, scope: &UserScope, skill_id: &str) -> Result<Option<TrustRecord>>;

    /// The user's records, by skill id.
    async fn list(&self, scope: &UserScope) -> Result<Vec<TrustRecord>>;

    /// Deletes the record of (user, skill); [`Error::NotFound`] if there is none.
    async fn delete(&self, scope: &UserScope, skill_id: &str) -> Result<()>;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reset_keeps_failures_and_times_as_history() {
        let scope = UserScope::new("t", "u");
        let mut record = TrustRecord::new(&scope, "pdf", 1);
        record.apply(&TrustChange::Success, 2);
        record.apply(&TrustChange::GrantSessionTrust { expires_at: 99 }, 3);
        record.apply(&TrustChange::ApproveGlobally, 4);
        record.apply(&TrustChange::ApproveGlobally, 5);
        assert_eq!(record.globally_approved_at, Some(4));
        record.apply(&TrustChange::Failure, 6);
        record.apply(&TrustChange::Reset, 6);
        assert_eq!(record.successful_executions, 0);
        assert_eq!(record.failed_executions, 1);
        assert_eq!(
            (record.last_success, record.last_failure),
            (Some(2), Some(6))
        );
        assert!(!record.session_trust_granted && record.session_trust_expires.is_none());
        assert!(!record.globally_approved && record.globally_approved_at.is_none());
        assert_eq!((record.trust_reset_count, record.updated_at), (1, 6));
    }

    #[test]
    fn changes_serialize_with_a_kind_tag() {
        let change = TrustChange::GrantSessionTrust { expires_at: 7 };
        let text = serde_json::to_string(&change).unwrap();
        assert_eq!(text, r#"{"kind":"grant_session_trust","expires_at":7}"#);
        assert_eq!(serde_json::from_str::<TrustChange>(&text).unwrap(), change);
    }
}
