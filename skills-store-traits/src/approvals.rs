//! Approval requests as records (seed 003's approval workflow for restricted skills): what
//! the policy gate asked a person to approve, and who decided, kept in the
//! [`PermissionStore`](crate::PermissionStore) beside the rules so that a pending approval
//! survives a restart and another process (or an approver's console) can list and decide it.
//!
//! One record per (tenant, execution): asking again while it is pending returns the same
//! record; a decision moves it from pending to approved or refused once, and a second
//! decision is a conflict, so two approvers racing cannot both decide.

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result, Violation};
use crate::tenancy::TenantId;
use crate::time::Timestamp;

/// The longest execution, skill, user or role id, in characters.
pub const MAX_APPROVAL_ID_CHARS: usize = 128;
/// The longest reason, in bytes.
pub const MAX_APPROVAL_REASON_BYTES: usize = 4096;
/// The most approver roles one request names.
pub const MAX_APPROVER_ROLES: usize = 32;

/// Where an approval stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum ApprovalStatus {
    /// Asked, not yet decided.
    Pending,
    /// A person said yes.
    Approved,
    /// A person said no, or nobody answered in time.
    Refused,
}

impl ApprovalStatus {
    /// `pending`, `approved` or `refused`.
    pub fn as_str(self) -> &'static str {
        match self {
            ApprovalStatus::Pending => "pending",
            ApprovalStatus::Approved => "approved",
            ApprovalStatus::Refused => "refused",
        }
    }

    /// The status `text` names.
    pub fn parse(text: &str) -> Option<ApprovalStatus> {
        match text {
            "pending" => Some(ApprovalStatus::Pending),
            "approved" => Some(ApprovalStatus::Approved),
            "refused" => Some(ApprovalStatus::Refused),
            _ => None,
        }
    }
}

/// An approval to ask for.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct NewApproval {
    /// The execution it is for (the step's execution id): the record's key.
    pub execution_id: String,
    /// The skill.
    pub skill_id: String,
    /// Who asked for the execution (they may not approve it unless a rule says so).
    pub requested_by: String,
    /// Why an approval is needed (the gate's reason).
    pub reason: String,
    /// Who may approve (empty: anyone the gate accepts).
    pub approver_roles: Vec<String>,
    /// The permission rule that asks, when one does.
    pub rule: Option<String>,
}

impl NewApproval {
    /// An approval of `execution_id` of `skill_id`, asked for by `requested_by` because of
    /// `reason`.
    pub fn new(
        execution_id: impl Into<String>,
        skill_id: impl Into<String>,
        requested_by: impl Into<String>,
        reason: impl Into<String>,
    ) -> NewApproval {
        NewApproval {
            execution_id: execution_id.into(),
            skill_id: skill_id.into(),
            requested_by: requested_by.into(),
            reason: reason.into(),
            approver_roles: Vec::new(),
            rule: None,
        }
    }

    /// Approvable by these roles.
    #[must_use]
    pub fn approver_roles(mut self, roles: Vec<String>) -> NewApproval {
        self.approver_roles = roles;
        self
    }

    /// Asked by this rule.
    #[must_use]
    pub fn rule(mut self, rule: impl Into<String>) -> NewApproval {
        self.rule = Some(rule.into());
        self
    }
}

/// One stored approval.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ApprovalRecord {
    /// The tenant.
    pub tenant: TenantId,
    /// The execution it is for.
    pub execution_id: String,
    /// The skill.
    pub skill_id: String,
    /// Who asked for the execution.
    pub requested_by: String,
    /// Why an approval is needed.
    pub reason: String,
    /// Who may approve.
    pub approver_roles: Vec<String>,
    /// The rule that asks.
    pub rule: Option<String>,
    /// Where it stands.
    pub status: ApprovalStatus,
    /// Who decided (none for a refusal nobody can be named for: a timeout).
    pub decided_by: Option<String>,
    /// When it was asked.
    pub requested_at: Timestamp,
    /// When it was decided.
    pub decided_at: Option<Timestamp>,
}

impl ApprovalRecord {
    /// A pending record as a backend builds it.
    pub fn requested(tenant: &TenantId, new: NewApproval, now: Timestamp) -> ApprovalRecord {
        ApprovalRecord {
            tenant: tenant.clone(),
            execution_id: new.execution_id,
            skill_id: new.skill_id,
            requested_by: new.requested_by,
            reason: new.reason,
            approver_roles: new.approver_roles,
            rule: new.rule,
            status: ApprovalStatus::Pending,
            decided_by: None,
            requested_at: now,
            decided_at: None,
        }
    }

    /// The record decided `approved` (or refused) by `by` at `now`; a conflict unless it is
    /// pending.
    pub fn decide(mut self, approved: bool, by: Option<&str>, now: Timestamp) -> Result<Self> {
        if self.status != ApprovalStatus::Pending {
            return Err(Error::conflict("approval", self.execution_id));
        }
        self.status = if approved {
            ApprovalStatus::Approved
        } else {
            ApprovalStatus::Refused
        };
        self.decided_by = by.map(str::to_owned);
        self.decided_at = Some(now);
        Ok(self)
    }
}

fn check_id(field: &str, value: &str) -> Result<()> {
    if value.is_empty() {
        return Err(Error::invalid(field, Violation::Empty));
    }
    if value.chars().count() > MAX_APPROVAL_ID_CHARS {
        return Err(Error::invalid(
            field,
            Violation::OutOfRange {
                expected: "at most 128 characters",
            },
        ));
    }
    Ok(())
}

/// The checks every backend runs before asking: non-empty ids of at most
/// [`MAX_APPROVAL_ID_CHARS`], a reason of at most [`MAX_APPROVAL_REASON_BYTES`], at most
/// [`MAX_APPROVER_ROLES`] non-empty roles.
pub fn check_approval(new: &NewApproval) -> Result<()> {
    check_id("execution_id", &new.execution_id)?;
    check_id("skill_id", &new.skill_id)?;
    check_id("requested_by", &new.requested_by)?;
    if new.reason.len() > MAX_APPROVAL_REASON_BYTES {
        return Err(Error::invalid(
            "reason",
            Violation::TooLarge {
                bytes: new.reason.len() as u64,
                limit: MAX_APPROVAL_REASON_BYTES as u64,
            },
        ));
    }
    if new.approver_roles.len() > MAX_APPROVER_ROLES {
        return Err(Error::invalid(
            "approver_roles",
            Violation::TooMany {
                count: new.approver_roles.len(),
                limit: MAX_APPROVER_ROLES,
            },
        ));
    }
    for role in &new.approver_roles {
        check_id("approver_roles", role)?;
    }
    if let Some(rule) = &new.rule {
        check_id("rule", rule)?;
    }
    Ok(())
}

/// The check on a decider's name: none, or a non-empty id of at most
/// [`MAX_APPROVAL_ID_CHARS`].
pub fn check_decider(by: Option<&str>) -> Result<()> {
    by.map_or(Ok(()), |by| check_id("decided_by", by))
}
