//! Approvals, bound: a [`StepApproval`] is a person's yes to one step as it was shown to
//! them, given once, and a refusal recorded for a step stands.
//!
//! Threat: a yes reused for something the person never saw (the same execution id sent
//! again with other input, another skill version, another tool, for someone else); a yes
//! replayed to run a step twice; a yes arriving after the person (or another approver)
//! said no; a yes nobody can be named for; an approval workflow that loses what it asked
//! (a restart) or shows a step as waiting after it ran.
//!
//! Guarantees:
//! - an approval carries the step's [`digest`](StepRequest::digest) (what was approved:
//!   who asked, the skill, its version, the execution, task, tool, data classes and input
//!   hash) and who approved; the gate denies an approval whose digest is not the step's, or
//!   that names nobody, with [`DenyCode::ApprovalMismatch`], before it looks at anything
//!   else about it (who may approve is the gate's other rules: roles, self-approval);
//! - an approval lets a step run once: the gate consumes it before it answers `Allow`
//!   (atomically: of racing checks one is allowed), and a later check carrying it is denied
//!   with [`DenyCode::ApprovalUsed`]; asking again for an execution that ran with an
//!   approval is denied the same way (an execution id names one run);
//! - after [`record_refusal`](PolicyGate::record_refusal) every later check of that
//!   execution, with or without an approval, is denied with [`DenyCode::ApprovalRefused`];
//! - with a [`PermissionStore`] behind the gate's [`Permissions`], both are durable: the
//!   gate writes a pending record for every `AskApproval`, decides it approved when it
//!   consumes the approval (creating it first if the gate never asked) and refused on
//!   `record_refusal`, and reads it at every check, so a restart or another process over the
//!   same store is bound too. A record is decided approved only by the gate consuming an
//!   approval: an approver's console hands the host a `StepApproval` and never decides a
//!   record itself. Every write happens before the gate answers; a failed one fails the
//!   check (fail closed).
//!
//! Residual: without a store, what was used or refused lives in the gate (shared by its
//! clones) and holds the last 65,536 executions; an older one is forgotten. The
//! gate trusts the host's naming of the approver: it cannot tell who really clicked.
//!
//! [`Permissions`]: crate::Permissions
//! [`DenyCode::ApprovalMismatch`]: super::DenyCode::ApprovalMismatch
//! [`DenyCode::ApprovalUsed`]: super::DenyCode::ApprovalUsed
//! [`DenyCode::ApprovalRefused`]: super::DenyCode::ApprovalRefused

use std::collections::{HashMap, VecDeque};
use std::sync::{Mutex, PoisonError};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use skills_store_traits::approvals::{ApprovalStatus, MAX_APPROVAL_REASON_BYTES, NewApproval};
use skills_store_traits::{Error as StoreError, PermissionStore, TenantId, UserId};

use super::{Decision, DenyCode, GateError, Mode, PolicyGate, StepRequest, ToolCallRequest};
use crate::permissions::{Principal, ResolvedPermissions};

/// How many executions a gate remembers as used or refused (a store remembers them all).
const REMEMBERED: usize = 65_536;

/// A person's approval of one step: which execution, what exactly (the step's digest), and
/// who approved; what roles they hold is the gate's
/// [`ApproverDirectory`](crate::permissions::ApproverDirectory)'s to say.
///
/// Threat: a yes reused for what the person never saw (the same execution id with other
/// input, version, tool or requester), replayed to run a step twice, arriving after a
/// refusal, or given by nobody in particular. Guarantee: [`PolicyGate::check`] denies an
/// approval whose digest is not the step's [`StepRequest::digest`], or that names nobody
/// ([`names_someone`](StepApproval::names_someone)), as
/// [`ApprovalMismatch`](DenyCode::ApprovalMismatch); consumes it before answering `Allow`
/// (of racing checks one is allowed) and denies it afterwards as
/// [`ApprovalUsed`](DenyCode::ApprovalUsed); denies every check of an execution after
/// [`PolicyGate::record_refusal`] as [`ApprovalRefused`](DenyCode::ApprovalRefused). With a
/// permission store both survive a restart and bind other processes over it; without one
/// the gate (and its clones) remembers the last 65,536 executions. The approver's roles and
/// whether they may approve their own step are the gate's rules, never the approval's.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct StepApproval {
    /// The execution it approves.
    pub execution: String,
    /// [`StepRequest::digest`] of the step shown to the approver (for a tool call,
    /// [`ToolCallRequest::digest`]).
    pub digest: String,
    /// Who approved.
    pub approved_by: UserId,
}

impl StepApproval {
    /// `approved_by` approves execution `execution`, the step whose digest is `digest`
    /// (what a host that showed the step elsewhere passes back).
    pub fn new(
        execution: impl Into<String>,
        digest: impl Into<String>,
        approved_by: impl Into<UserId>,
    ) -> StepApproval {
        StepApproval {
            execution: execution.into(),
            digest: digest.into(),
            approved_by: approved_by.into(),
        }
    }

    /// `approved_by` approves `step` as it is now.
    pub fn for_step(step: &StepRequest, approved_by: impl Into<UserId>) -> StepApproval {
        StepApproval::new(step.execution_id.clone(), step.digest(), approved_by)
    }

    /// `approved_by` approves the tool call `call` as it is now (its
    /// [`approval_id`](ToolCallRequest::approval_id) and digest).
    pub fn for_call(call: &ToolCallRequest, approved_by: impl Into<UserId>) -> StepApproval {
        StepApproval::new(call.approval_id(), call.digest(), approved_by)
    }

    /// Whether it names someone: a non-empty id without surrounding whitespace or control
    /// characters (`"alice "` is not a way to be someone other than `alice`).
    pub fn names_someone(&self) -> bool {
        crate::hitl::names_someone(self.approved_by.as_str())
    }
}

/// Feeds one length-prefixed field.
fn field(hash: &mut Sha256, value: &str) {
    hash.update((value.len() as u64).to_le_bytes());
    hash.update(value.as_bytes());
}

/// Feeds an optional field (absent and empty differ).
fn optional(hash: &mut Sha256, value: Option<&str>) {
    match value {
        Some(value) => {
            hash.update([1]);
            field(hash, value);
        }
        None => hash.update([0]),
    }
}

fn hex(hash: Sha256) -> String {
    hash.finalize().iter().map(|b| format!("{b:02x}")).collect()
}

impl StepRequest {
    /// What an approval of this step approves, as SHA-256 hex over `skills.step.v1`: the
    /// tenant, user and agent who ask; the skill's id, type, category, path, version, trust
    /// and risk; the execution and task; the tool; the data classes (sorted, without
    /// repeats); the input hash. Each field length-prefixed (absent and empty differ). Not
    /// covered: the trigger reason (a description) and the approvals themselves.
    pub fn digest(&self) -> String {
        let mut hash = Sha256::new();
        field(&mut hash, "skills.step.v1");
        field(&mut hash, self.principal.tenant.as_str());
        field(&mut hash, self.principal.user.as_str());
        optional(&mut hash, self.principal.agent.as_deref());
        let target = &self.skill.target;
        field(&mut hash, &target.skill_id);
        field(&mut hash, &target.extension_type);
        optional(&mut hash, target.category.as_deref());
        field(&mut hash, &self.skill.path);
        optional(&mut hash, self.skill.version.as_deref());
        field(&mut hash, self.skill.trust.as_str());
        field(&mut hash, self.skill.risk.as_str());
        field(&mut hash, &self.execution_id);
        optional(&mut hash, self.task_id.as_deref());
        optional(&mut hash, self.tool.as_deref());
        let classes = super::dedup_classes(&self.data_classes);
        hash.update((classes.len() as u64).to_le_bytes());
        for class in classes {
            field(&mut hash, class.as_str());
        }
        optional(&mut hash, self.input_hash.as_deref());
        hex(hash)
    }
}

impl ToolCallRequest {
    /// What an approval of this call approves, as SHA-256 hex over `skills.tool-call.v1`:
    /// the tenant, user and agent, the active skill's id and version, the call id, the tool
    /// and its input as canonical JSON.
    pub fn digest(&self) -> String {
        let mut hash = Sha256::new();
        field(&mut hash, "skills.tool-call.v1");
        field(&mut hash, self.principal.tenant.as_str());
        field(&mut hash, self.principal.user.as_str());
        optional(&mut hash, self.principal.agent.as_deref());
        field(&mut hash, self.skill.id());
        optional(&mut hash, self.skill.version.as_deref());
        field(&mut hash, &self.call_id);
        field(&mut hash, &self.call.name);
        field(&mut hash, &self.input_hash());
        hex(hash)
    }
}

/// What became of an execution's approval.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Spent {
    /// A person refused it.
    Refused,
    /// It ran with an approval.
    Used,
}

type Key = (TenantId, String);

/// Executions used or refused, remembered by the gate (the last `REMEMBERED`).
#[derive(Debug, Default)]
pub(super) struct Ledger {
    spent: HashMap<Key, Spent>,
    order: VecDeque<Key>,
}

impl Ledger {
    fn get(&self, key: &Key) -> Option<Spent> {
        self.spent.get(key).copied()
    }

    fn set(&mut self, key: Key, spent: Spent) {
        if self.spent.insert(key.clone(), spent).is_none() {
            self.order.push_back(key);
        }
        while self.order.len() > REMEMBERED {
            if let Some(old) = self.order.pop_front() {
                self.spent.remove(&old);
            }
        }
    }

    fn forget(&mut self, key: &Key) {
        if self.spent.remove(key).is_some() {
            self.order.retain(|k| k != key);
        }
    }
}

fn key(step: &StepRequest) -> Key {
    (step.principal.tenant.clone(), step.execution_id.clone())
}

fn refused(step: &StepRequest) -> Decision {
    Decision::deny(
        DenyCode::ApprovalRefused,
        format!(
            "the approval of execution `{}` was refused: a refused step does not run (a new execution asks again)",
            step.execution_id
        ),
        None,
    )
}

fn used(step: &StepRequest) -> Decision {
    Decision::deny(
        DenyCode::ApprovalUsed,
        format!(
            "execution `{}` already ran with an approval: an approval is for one run",
            step.execution_id
        ),
        None,
    )
}

fn mismatch(reason: String) -> Decision {
    Decision::deny(DenyCode::ApprovalMismatch, reason, None)
}

impl PolicyGate {
    fn ledger(&self) -> std::sync::MutexGuard<'_, Ledger> {
        self.ledger.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The denial the step's approval (or its execution's history) calls for, reading only:
    /// an approval for another step or naming nobody, a refused execution, an approval
    /// already used. `None` when nothing binds.
    pub(super) async fn approval_binding(
        &self,
        step: &StepRequest,
    ) -> Result<Option<Decision>, GateError> {
        if let Some(a) = &step.approval {
            if !a.names_someone() {
                return Ok(Some(mismatch(format!(
                    "the approval of execution `{}` names nobody: an approval says who gave it",
                    step.execution_id
                ))));
            }
            if a.digest != step.digest() {
                return Ok(Some(mismatch(format!(
                    "the approval of execution `{}` was given for another step (its input, tool, skill, version, data or requester changed since)",
                    step.execution_id
                ))));
            }
        }
        Ok(match self.spent(step).await? {
            Some(Spent::Refused) => Some(refused(step)),
            Some(Spent::Used) if step.approval.is_some() => Some(used(step)),
            _ => None,
        })
    }

    /// What the gate, then the store, knows of the execution.
    async fn spent(&self, step: &StepRequest) -> Result<Option<Spent>, GateError> {
        if let Some(spent) = self.ledger().get(&key(step)) {
            return Ok(Some(spent));
        }
        let Some(store) = self.permissions.store() else {
            return Ok(None);
        };
        let record = store
            .get_approval(&step.principal.tenant, &step.execution_id)
            .await?;
        Ok(record.and_then(|r| match r.status {
            ApprovalStatus::Refused => Some(Spent::Refused),
            ApprovalStatus::Approved => Some(Spent::Used),
            _ => None,
        }))
    }

    /// Binds `decision` for `step` before it is audited and returned: an `AskApproval` is
    /// written as a pending record (an execution decided meanwhile is denied instead); an
    /// `Allow` carried by an approval consumes it (one of racing checks wins, the others
    /// are denied).
    pub(super) async fn bind_approval(
        &self,
        step: &StepRequest,
        decision: Decision,
    ) -> Result<Decision, GateError> {
        if self.mode == Mode::AllowAll {
            return Ok(decision);
        }
        match &decision {
            Decision::AskApproval {
                reason,
                approver_roles,
                rule,
                ..
            } => {
                match self.ledger().get(&key(step)) {
                    Some(Spent::Refused) => return Ok(refused(step)),
                    Some(Spent::Used) => return Ok(used(step)),
                    None => {}
                }
                let Some(store) = self.permissions.store() else {
                    return Ok(decision);
                };
                let new = new_approval(step, reason, approver_roles, rule.as_deref());
                match store.request_approval(&step.principal.tenant, new).await {
                    Ok(_) => Ok(decision),
                    Err(StoreError::Conflict { .. }) => Ok(self
                        .decided(store.as_ref(), step)
                        .await?
                        .unwrap_or(decision)),
                    Err(e) => Err(e.into()),
                }
            }
            Decision::Allow { reasons } => match &step.approval {
                Some(approval) => {
                    self.consume(step, approval, reasons, decision.clone())
                        .await
                }
                None => Ok(decision),
            },
            Decision::Deny { .. } => Ok(decision),
        }
    }

    /// Consumes `approval`: `allow` if this check is the one that uses it.
    async fn consume(
        &self,
        step: &StepRequest,
        approval: &StepApproval,
        reasons: &[String],
        allow: Decision,
    ) -> Result<Decision, GateError> {
        let key = key(step);
        {
            let mut ledger = self.ledger();
            match ledger.get(&key) {
                Some(Spent::Refused) => return Ok(refused(step)),
                Some(Spent::Used) => return Ok(used(step)),
                None => ledger.set(key.clone(), Spent::Used),
            }
        }
        let Some(store) = self.permissions.store() else {
            return Ok(allow);
        };
        let by = Some(approval.approved_by.as_str());
        let tenant = &step.principal.tenant;
        let mut outcome = store
            .decide_approval(tenant, &step.execution_id, true, by)
            .await;
        if let Err(StoreError::NotFound { .. }) = outcome {
            // Approved without the gate asking first: the record is made to be decided.
            let new = new_approval(step, &reasons.join("; "), &[], None);
            outcome = match store.request_approval(tenant, new).await {
                Ok(_) => {
                    store
                        .decide_approval(tenant, &step.execution_id, true, by)
                        .await
                }
                Err(e) => Err(e),
            };
        }
        match outcome {
            Ok(_) => Ok(allow),
            Err(StoreError::Conflict { .. }) => {
                // Decided by someone else first: a refusal, or a run that used it.
                Ok(self
                    .decided(store.as_ref(), step)
                    .await?
                    .unwrap_or_else(|| used(step)))
            }
            Err(e) => {
                // Not consumed after all: a retry may use it.
                self.ledger().forget(&key);
                Err(e.into())
            }
        }
    }

    /// The denial an execution the store holds as decided calls for (remembered here too).
    async fn decided(
        &self,
        store: &dyn PermissionStore,
        step: &StepRequest,
    ) -> Result<Option<Decision>, GateError> {
        let record = store
            .get_approval(&step.principal.tenant, &step.execution_id)
            .await?;
        let spent = match record.map(|r| r.status) {
            Some(ApprovalStatus::Refused) => Spent::Refused,
            Some(ApprovalStatus::Approved) => Spent::Used,
            _ => return Ok(None),
        };
        self.ledger().set(key(step), spent);
        Ok(Some(match spent {
            Spent::Refused => refused(step),
            Spent::Used => used(step),
        }))
    }

    /// What is wrong with `approval` for a rule that requires approval: the requester
    /// approving their own step (unless a rule allows it), or an approver without one of
    /// the rule's roles in the host's directory. `None` when it is acceptable or absent.
    pub(super) async fn rule_approval_problem(
        &self,
        principal: &Principal,
        approval: Option<&StepApproval>,
        resolved: &ResolvedPermissions,
    ) -> Result<Option<String>, GateError> {
        let sets = resolved.approver_role_sets();
        Ok(match approval {
            None => None,
            Some(a) if a.approved_by == principal.user && !resolved.self_approval.value => {
                Some(format!(
                    "{} asked for this step and cannot also approve it",
                    a.approved_by
                ))
            }
            Some(_) if sets.is_empty() => None,
            Some(a) => {
                let held = self
                    .approvers
                    .roles(&principal.tenant, &a.approved_by)
                    .await?;
                (!resolved.approver_qualifies(&held)).then(|| {
                    let wanted: Vec<String> = sets.iter().map(|set| set.join(" or ")).collect();
                    format!(
                        "{} does not hold the approver roles ({})",
                        a.approved_by,
                        wanted.join("; and ")
                    )
                })
            }
        })
    }

    /// Records that the approval of `step`'s execution was refused (`by`: who, when the host
    /// knows): every later check of that execution is denied
    /// ([`DenyCode::ApprovalRefused`]). With a permission
    /// store its pending record is decided refused; a record already decided, or none
    /// (the gate never asked), is left as it is, the gate still remembering the refusal.
    ///
    /// # Errors
    ///
    /// [`GateError::Store`] when the store fails (the refusal is remembered by the gate all
    /// the same).
    pub async fn record_refusal(
        &self,
        step: &StepRequest,
        by: Option<&str>,
    ) -> Result<(), GateError> {
        self.ledger().set(key(step), Spent::Refused);
        let Some(store) = self.permissions.store() else {
            return Ok(());
        };
        match store
            .decide_approval(&step.principal.tenant, &step.execution_id, false, by)
            .await
        {
            Ok(_) | Err(StoreError::NotFound { .. } | StoreError::Conflict { .. }) => Ok(()),
            Err(e) => Err(e.into()),
        }
    }
}

/// The record asked for `step`.
fn new_approval(
    step: &StepRequest,
    reason: &str,
    approver_roles: &[String],
    rule: Option<&str>,
) -> NewApproval {
    let mut new = NewApproval::new(
        step.execution_id.clone(),
        step.skill.id(),
        step.principal.user.as_str(),
        bounded(reason),
    )
    .approver_roles(approver_roles.to_vec());
    if let Some(rule) = rule {
        new = new.rule(rule);
    }
    new
}

/// The reason cut to what a record holds, on a character boundary.
fn bounded(reason: &str) -> String {
    if reason.len() <= MAX_APPROVAL_REASON_BYTES {
        return reason.to_owned();
    }
    let mut end = MAX_APPROVAL_REASON_BYTES;
    while !reason.is_char_boundary(end) {
        end -= 1;
    }
    reason[..end].to_owned()
}

/// The gate's memory of used and refused executions, shared by its clones.
pub(super) fn ledger() -> std::sync::Arc<Mutex<Ledger>> {
    std::sync::Arc::new(Mutex::new(Ledger::default()))
}
