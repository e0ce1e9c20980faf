//! Who a record belongs to: every record has a tenant, and the records of per-user tables a
//! user too.
//!
//! Threat: one tenant (or user) reading or changing another's records through a shared
//! store. Guarantee: every store call takes the caller's [`TenantId`] (or [`UserScope`]) and
//! sees only records stamped with it; a record of another tenant or user is reported as not
//! found, never returned, changed or counted. The conformance suite attacks this for every
//! call.

use std::fmt;

use serde::{Deserialize, Serialize};

/// A tenant: the isolation boundary of every store.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct TenantId(String);

impl TenantId {
    /// A tenant id. Any string works; hosts usually pass their tenant's UUID.
    pub fn new(id: impl Into<String>) -> Self {
        TenantId(id.into())
    }

    /// The id as text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for TenantId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl From<&str> for TenantId {
    fn from(id: &str) -> Self {
        TenantId::new(id)
    }
}

impl From<String> for TenantId {
    fn from(id: String) -> Self {
        TenantId(id)
    }
}

/// A user within a tenant.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct UserId(String);

impl UserId {
    /// A user id.
    pub fn new(id: impl Into<String>) -> Self {
        UserId(id.into())
    }

    /// The id as text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for UserId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl From<&str> for UserId {
    fn from(id: &str) -> Self {
        UserId::new(id)
    }
}

impl From<String> for UserId {
    fn from(id: String) -> Self {
        UserId(id)
    }
}

/// A user in a tenant: the scope of seed 000's per-user tables (trust history, plans and
/// their working memory, agent memory, a user's own audit records).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct UserScope {
    /// The tenant.
    pub tenant: TenantId,
    /// The user.
    pub user: UserId,
}

impl UserScope {
    /// A user scope.
    pub fn new(tenant: impl Into<TenantId>, user: impl Into<UserId>) -> Self {
        UserScope {
            tenant: tenant.into(),
            user: user.into(),
        }
    }
}
