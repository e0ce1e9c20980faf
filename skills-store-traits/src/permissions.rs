//! Permission rules as records (seed 003's `ExtensionPermission`): what `skills-security`'s
//! `Permissions` loads at start and writes through on every change, so rules survive a
//! restart.
//!
//! The store keeps each rule as a JSON object under its id, per tenant, opaque to the store:
//! the meaning of a rule (scopes, targets, fields, how rules merge) belongs to
//! `skills-security`, which serializes its `PermissionRule` into [`PermissionRecord::rule`].
//! Every write bumps the record's `revision`, so a reader can tell a changed rule from the
//! one it cached.

use async_trait::async_trait;
use serde::{Deserialize, Serialize};

use crate::approvals::{ApprovalRecord, ApprovalStatus, NewApproval};
use crate::error::{Error, Result, Violation};
use crate::tenancy::TenantId;
use crate::time::Timestamp;

/// The longest rule id, in characters.
pub const MAX_RULE_ID_CHARS: usize = 128;
/// The largest rule, as compact JSON, in bytes.
pub const MAX_RULE_BYTES: u64 = 64 * 1024;
/// The most rules one `replace_rules` call may write.
pub const MAX_RULES_PER_TENANT: usize = 10_000;

/// One stored permission rule.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct PermissionRecord {
    /// The rule's id, unique in its tenant.
    pub id: String,
    /// The tenant.
    pub tenant: TenantId,
    /// The rule itself (a JSON object, the owner's serialization).
    pub rule: serde_json::Value,
    /// 1 when created, one more on every write of the same id.
    pub revision: u64,
    /// When the id was first written.
    pub created_at: Timestamp,
    /// When it was last written.
    pub updated_at: Timestamp,
}

impl PermissionRecord {
    /// A record as a backend builds it: a new id at revision 1, or `previous` replaced.
    pub fn written(
        tenant: &TenantId,
        id: &str,
        rule: serde_json::Value,
        previous: Option<&PermissionRecord>,
        now: Timestamp,
    ) -> PermissionRecord {
        PermissionRecord {
            id: id.to_owned(),
            tenant: tenant.clone(),
            rule,
            revision: previous.map_or(1, |p| p.revision.saturating_add(1)),
            created_at: previous.map_or(now, |p| p.created_at),
            updated_at: now,
        }
    }
}

/// The checks every backend runs before a write: a non-empty id of at most
/// [`MAX_RULE_ID_CHARS`] characters, and a rule that is a JSON object of at most
/// [`MAX_RULE_BYTES`].
pub fn check_rule(id: &str, rule: &serde_json::Value) -> Result<()> {
    if id.is_empty() {
        return Err(Error::invalid("id", Violation::Empty));
    }
    if id.chars().count() > MAX_RULE_ID_CHARS {
        return Err(Error::invalid(
            "id",
            Violation::OutOfRange {
                expected: "at most 128 characters",
            },
        ));
    }
    if !rule.is_object() {
        return Err(Error::invalid(
            "rule",
            Violation::UnknownValue {
                expected: "a JSON object",
            },
        ));
    }
    let bytes = rule.to_string().len() as u64;
    if bytes > MAX_RULE_BYTES {
        return Err(Error::invalid(
            "rule",
            Violation::TooLarge {
                bytes,
                limit: MAX_RULE_BYTES,
            },
        ));
    }
    Ok(())
}

/// [`check_rule`] on each rule of a replacement, plus distinct ids and the count limit.
pub fn check_rules(rules: &[(String, serde_json::Value)]) -> Result<()> {
    if rules.len() > MAX_RULES_PER_TENANT {
        return Err(Error::invalid(
            "rules",
            Violation::TooMany {
                count: rules.len(),
                limit: MAX_RULES_PER_TENANT,
            },
        ));
    }
    let mut seen = std::collections::BTreeSet::new();
    for (id, rule) in rules {
        check_rule(id, rule)?;
        if !seen.insert(id.as_str()) {
            return Err(Error::conflict("permission rule", id.clone()));
        }
    }
    Ok(())
}

/// Durable permission rules, per tenant.
///
/// Contract (checked by `conformance::permissions`): writes validate with [`check_rule`]
/// before touching anything; `put_rule` creates at revision 1 or replaces, keeping
/// `created_at` and adding one to the revision; lists are ordered by id (bytewise);
/// `replace_rules` is atomic (all or nothing; ids it no longer names are deleted, the
/// revisions of ids it keeps go on counting); a tenant never sees another's rules.
///
/// Approvals (checked by the same suite): `request_approval` validates with
/// [`check_approval`](crate::approvals::check_approval) and creates a pending record keyed by
/// execution, or returns the pending one already there (a decided one is a conflict);
/// `decide_approval` moves a pending record to approved or refused exactly once (atomically:
/// of two racing decisions one wins, the other is a conflict; an unknown execution is not
/// found); lists are ordered by request time, then execution id, optionally by status.
#[async_trait]
pub trait PermissionStore: Send + Sync {
    /// Creates or replaces the rule `id`.
    async fn put_rule(
        &self,
        tenant: &TenantId,
        id: &str,
        rule: serde_json::Value,
    ) -> Result<PermissionRecord>;
    /// One rule.
    async fn get_rule(&self, tenant: &TenantId, id: &str) -> Result<Option<PermissionRecord>>;
    /// Every rule of the tenant, by id.
    async fn list_rules(&self, tenant: &TenantId) -> Result<Vec<PermissionRecord>>;
    /// Deletes a rule; `false` when there was none.
    async fn delete_rule(&self, tenant: &TenantId, id: &str) -> Result<bool>;
    /// Makes `rules` the tenant's whole rule set, atomically; returns it by id.
    async fn replace_rules(
        &self,
        tenant: &TenantId,
        rules: Vec<(String, serde_json::Value)>,
    ) -> Result<Vec<PermissionRecord>>;
    /// Asks for an approval: a pending record, or the pending one already asked for the same
    /// execution.
    async fn request_approval(
        &self,
        tenant: &TenantId,
        approval: NewApproval,
    ) -> Result<ApprovalRecord>;
    /// Decides the pending approval of `execution_id`: approved or refused, by `by`.
    async fn decide_approval(
        &self,
        tenant: &TenantId,
        execution_id: &str,
        approved: bool,
        by: Option<&str>,
    ) -> Result<ApprovalRecord>;
    /// The approval of one execution.
    async fn get_approval(
        &self,
        tenant: &TenantId,
        execution_id: &str,
    ) -> Result<Option<ApprovalRecord>>;
    /// The tenant's approvals (those with `status`, when given), oldest request first.
    async fn list_approvals(
        &self,
        tenant: &TenantId,
        status: Option<ApprovalStatus>,
    ) -> Result<Vec<ApprovalRecord>>;
}
