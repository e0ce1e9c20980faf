//! Who holds which approver role: the host's directory, never the approval itself.
//!
//! Threat: an approver claiming a role they do not hold (the role travelling inside the
//! approval), or the person asking approving their own step. Guarantee: the gate asks an
//! [`ApproverDirectory`] for the approver's roles, and accepts a rule-required approval only
//! from someone other than the requester, unless a rule explicitly allows self-approval.

use std::collections::{BTreeSet, HashMap};
use std::sync::{PoisonError, RwLock};

use async_trait::async_trait;
use skills_store_traits::{Result, TenantId, UserId};

/// The host's directory of approver roles (an identity provider, an org chart).
#[async_trait]
pub trait ApproverDirectory: Send + Sync {
    /// The roles `user` holds in `tenant` (empty: none).
    async fn roles(&self, tenant: &TenantId, user: &UserId) -> Result<Vec<String>>;
}

/// An [`ApproverDirectory`] in memory: roles granted per tenant and user. Empty by default,
/// so no one holds any role until the host says so.
#[derive(Debug, Default)]
pub struct InMemoryApprovers {
    roles: RwLock<HashMap<(TenantId, UserId), BTreeSet<String>>>,
}

impl InMemoryApprovers {
    /// An empty directory.
    pub fn new() -> InMemoryApprovers {
        InMemoryApprovers::default()
    }

    /// `user` holds `role` in `tenant`.
    pub fn grant(
        &self,
        tenant: impl Into<TenantId>,
        user: impl Into<UserId>,
        role: impl Into<String>,
    ) -> &InMemoryApprovers {
        self.roles
            .write()
            .unwrap_or_else(PoisonError::into_inner)
            .entry((tenant.into(), user.into()))
            .or_default()
            .insert(role.into());
        self
    }

    /// `user` no longer holds `role` in `tenant`.
    pub fn revoke(&self, tenant: &TenantId, user: &UserId, role: &str) {
        if let Some(roles) = self
            .roles
            .write()
            .unwrap_or_else(PoisonError::into_inner)
            .get_mut(&(tenant.clone(), user.clone()))
        {
            roles.remove(role);
        }
    }
}

#[async_trait]
impl ApproverDirectory for InMemoryApprovers {
    async fn roles(&self, tenant: &TenantId, user: &UserId) -> Result<Vec<String>> {
        Ok(self
            .roles
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .get(&(tenant.clone(), user.clone()))
            .map(|r| r.iter().cloned().collect())
            .unwrap_or_default())
    }
}
