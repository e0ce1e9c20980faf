//! The one policy gate a framework asks before every skill step.
//!
//! Threat: a step running although the organisation forbids it, its rate is used up, a
//! human has not approved it, or it would see regulated data nobody approved; a decision
//! nobody can reconstruct later. Guarantees: [`PolicyGate::check`] answers
//! [`Decision::Allow`] only when every check passes, in this order:
//!
//! 1. permission to execute (the [permission hierarchy](crate::permissions)); a community
//!    skill (and a skill whose trust nobody established is one) runs only where a rule
//!    explicitly allows it, never on the default;
//! 2. the tool, when the step names one (allow/deny lists);
//! 3. rate limits (the gate's own plus the resolved `max_executions_per_day`);
//! 4. regulated data: a core skill needs a [`RegulatedApproval`] for this execution (one for
//!    another execution denies); other trust levels never see it (the sanitizer withholds
//!    it, per the access matrix) and the decision says so;
//! 5. a rule's `requires_approval`: a [`StepApproval`] for this execution by someone other
//!    than the requester (unless a rule allows self-approval) who, when the rule names
//!    approver roles, holds one of them in the host's [`ApproverDirectory`] (roles never come
//!    from the approval itself);
//! 6. graduated [autonomy](crate::autonomy): a [`StepApproval`] for this execution when the
//!    trust history asks for one (the user approving their own agent's step, as seed 000's
//!    part 4 has it).
//!
//! An approval is bound (see [`StepApproval`]): it carries the step's
//! [`digest`](StepRequest::digest) and its approver, and a step that changed since, an
//! approval naming nobody, one already used for a run, or any check of an execution whose
//! approval was refused ([`record_refusal`](PolicyGate::record_refusal)) is denied
//! ([`DenyCode::ApprovalMismatch`], [`DenyCode::ApprovalUsed`],
//! [`DenyCode::ApprovalRefused`]). An approval is consumed before the gate answers `Allow`;
//! if the decision then cannot be audited the step does not run and the approval stays
//! used (ask again under a new execution id).
//!
//! The only gate that skips these checks is [`PolicyGate::allow_all`], a name that reads as
//! the host's choice; it still audits every decision.
//!
//! The run is counted against the rate limits only when the answer is allow, atomically, so
//! concurrent steps never exceed a limit. Every decision (allow, ask, deny) is appended to
//! the tenant's audit chain before it is returned; if auditing fails the gate returns an
//! error and the step must not run (fail closed). Denials show in the usage log as `denied`.
//!
//! ```
//! use std::sync::Arc;
//! use skills_security::TrustLevel;
//! use skills_security::audit::AuditTrail;
//! use skills_security::autonomy::{Autonomy, RiskLevel};
//! use skills_security::gate::{Decision, PolicyGate, SkillInfo, StepApproval, StepRequest};
//! use skills_security::permissions::{InMemoryRateLimiter, Permissions, Principal};
//! use skills_store_traits::ManualClock;
//! use skills_store_traits::in_memory::{InMemoryAuditStore, InMemoryTrustStore};
//!
//! # futures::executor::block_on(async {
//! let clock = ManualClock::new(0);
//! let gate = PolicyGate::new(
//!     Arc::new(Permissions::new(clock.clone())),
//!     Arc::new(InMemoryRateLimiter::new()),
//!     Autonomy::new(Arc::new(InMemoryTrustStore::new()), clock.clone()),
//!     AuditTrail::new(Arc::new(InMemoryAuditStore::new())),
//!     clock,
//! );
//! let alice = Principal::new("acme", "alice");
//! let pdf = SkillInfo::new("pdf", "anthropics/skills/pdf", TrustLevel::Verified, RiskLevel::Low);
//! let step = StepRequest::new(alice.clone(), pdf.clone(), "exec-1");
//! // The first run of a low-risk skill needs the user's approval...
//! let first = gate.check(&step).await?;
//! assert!(matches!(first, Decision::AskApproval { ref reason, .. } if reason == "Initial approval required"));
//! // ...which the framework passes back for this very execution.
//! let approved = step.clone().with_approval(StepApproval::for_step(&step, "alice"));
//! assert!(matches!(gate.check(&approved).await?, Decision::Allow { .. }));
//! // Once: the same approval again is a replay.
//! assert!(matches!(gate.check(&approved).await?, Decision::Deny { .. }));
//! # Ok::<(), skills_security::gate::GateError>(())
//! # }).unwrap();
//! ```

use std::fmt;
use std::sync::{Arc, Mutex};

use serde::{Deserialize, Serialize};
use skills_store_traits::audit::{AuditEntry, AuditRecord};
use skills_store_traits::trust::TrustRecord;
use skills_store_traits::{Clock, UserScope};

use crate::audit::{AuditError, AuditTrail, PolicyFlag, Verdict, error_text, sha256_hex};
use crate::autonomy::{Autonomy, Outcome, RiskLevel};
use crate::classify::DataClass;
use crate::permissions::{
    ApproverDirectory, InMemoryApprovers, Permissions, Principal, RateCheck, RateKey, RateLimit,
    RateLimiter, RateScope, ResolvedPermissions, SkillTarget, Window,
};
use crate::trust::{Clearance, RegulatedApproval, TrustLevel};

mod access;
mod approvals;
mod tool_call;

pub use access::{Access, AccessRequest, Permit, SkillAction, SkillState};
pub use approvals::StepApproval;
pub use tool_call::ToolCallRequest;
pub(crate) use tool_call::hash_json;

/// The skill a step runs, as the gate needs to know it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct SkillInfo {
    /// Id, type and category (what permission rules target).
    pub target: SkillTarget,
    /// Its path (`anthropics/skills/pdf`).
    pub path: String,
    /// Its version.
    pub version: Option<String>,
    /// Its trust level.
    pub trust: TrustLevel,
    /// The risk of its operations.
    pub risk: RiskLevel,
}

impl SkillInfo {
    /// A skill of type `skill` without category or version.
    pub fn new(
        id: impl Into<String>,
        path: impl Into<String>,
        trust: TrustLevel,
        risk: RiskLevel,
    ) -> SkillInfo {
        SkillInfo {
            target: SkillTarget::new(id),
            path: path.into(),
            version: None,
            trust,
            risk,
        }
    }

    /// Of `category`.
    pub fn category(mut self, category: impl Into<String>) -> Self {
        self.target = self.target.category(category);
        self
    }

    /// At `version`.
    pub fn version(mut self, version: impl Into<String>) -> Self {
        self.version = Some(version.into());
        self
    }

    /// Its id.
    pub fn id(&self) -> &str {
        &self.target.skill_id
    }
}

/// What the framework asks about one step.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct StepRequest {
    /// Who asks.
    pub principal: Principal,
    /// The skill.
    pub skill: SkillInfo,
    /// The execution (step) id; approvals must name it.
    pub execution_id: String,
    /// The task the step belongs to.
    pub task_id: Option<String>,
    /// The tool the step calls, if any.
    pub tool: Option<String>,
    /// The classes of the data the step would be given.
    pub data_classes: Vec<DataClass>,
    /// SHA-256 of the (sanitized) input, when known.
    pub input_hash: Option<String>,
    /// Why the skill is used.
    pub trigger_reason: Option<String>,
    /// A human's approval of this step.
    pub approval: Option<StepApproval>,
    /// An approval of regulated data for this execution.
    pub regulated_approval: Option<RegulatedApproval>,
}

impl StepRequest {
    /// A step of `skill` for `principal`.
    pub fn new(principal: Principal, skill: SkillInfo, execution_id: impl Into<String>) -> Self {
        StepRequest {
            principal,
            skill,
            execution_id: execution_id.into(),
            task_id: None,
            tool: None,
            data_classes: Vec::new(),
            input_hash: None,
            trigger_reason: None,
            approval: None,
            regulated_approval: None,
        }
    }

    /// Calling `tool`.
    pub fn tool(mut self, tool: impl Into<String>) -> Self {
        self.tool = Some(tool.into());
        self
    }

    /// In task `task`.
    pub fn task(mut self, task: impl Into<String>) -> Self {
        self.task_id = Some(task.into());
        self
    }

    /// Given data of these classes.
    pub fn data(mut self, classes: &[DataClass]) -> Self {
        self.data_classes = classes.to_vec();
        self
    }

    /// With this input hash.
    pub fn input_hash(mut self, hash: impl Into<String>) -> Self {
        self.input_hash = Some(hash.into());
        self
    }

    /// Used because `reason`.
    pub fn trigger(mut self, reason: impl Into<String>) -> Self {
        self.trigger_reason = Some(reason.into());
        self
    }

    /// With a human's approval.
    pub fn with_approval(mut self, approval: StepApproval) -> Self {
        self.approval = Some(approval);
        self
    }

    /// With a regulated-data approval.
    pub fn with_regulated_approval(mut self, approval: RegulatedApproval) -> Self {
        self.regulated_approval = Some(approval);
        self
    }
}

/// Why a step was denied.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum DenyCode {
    /// No permission to execute the skill.
    NotPermitted,
    /// The tool is denied.
    ToolDenied,
    /// A rate limit is used up.
    RateLimited,
    /// An approval names another execution, was given for the step as it was before it
    /// changed (its digest), or names nobody.
    ApprovalMismatch,
    /// The approval of this execution was refused; the refusal stands.
    ApprovalRefused,
    /// The approval was already used for a run (a replay).
    ApprovalUsed,
    /// A tool call the active skill's `allowed-tools` does not list, on a host that
    /// restricts skills to their lists.
    NotInAllowedTools,
    /// No such skill is served (unknown, or removed since).
    UnknownSkill,
    /// The skill is disabled.
    Disabled,
    /// The target is not one of the skill version's catalogued files.
    NotCatalogued,
}

impl DenyCode {
    /// The stable code (the usage log's `error_code`).
    pub fn as_str(self) -> &'static str {
        match self {
            DenyCode::NotPermitted => "not_permitted",
            DenyCode::ToolDenied => "tool_denied",
            DenyCode::RateLimited => "rate_limited",
            DenyCode::ApprovalMismatch => "approval_mismatch",
            DenyCode::ApprovalRefused => "approval_refused",
            DenyCode::ApprovalUsed => "approval_used",
            DenyCode::NotInAllowedTools => "not_in_allowed_tools",
            DenyCode::UnknownSkill => "unknown_skill",
            DenyCode::Disabled => "disabled",
            DenyCode::NotCatalogued => "not_catalogued",
        }
    }
}

impl fmt::Display for DenyCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// An answer a human can give to an approval request.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ApprovalOption {
    /// `once`, `session`, `always` or `no`.
    pub id: String,
    /// What to show.
    pub label: String,
}

fn option(id: &str, label: &str) -> ApprovalOption {
    ApprovalOption {
        id: id.into(),
        label: label.into(),
    }
}

/// The gate's answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "decision", rename_all = "snake_case")]
pub enum Decision {
    /// Run the step.
    Allow {
        /// What allowed it and what to know (autonomy's reason, data that will be withheld).
        reasons: Vec<String>,
    },
    /// Ask a human first; pass their answer back as a [`StepApproval`].
    AskApproval {
        /// Why.
        reason: String,
        /// The answers to offer.
        options: Vec<ApprovalOption>,
        /// Who may approve (empty: the user).
        approver_roles: Vec<String>,
        /// The permission rule that asks, when one does.
        rule: Option<String>,
    },
    /// Do not run it.
    Deny {
        /// A stable code.
        code: DenyCode,
        /// Why.
        reason: String,
        /// The permission rule that denied, when one did.
        rule: Option<String>,
    },
}

impl Decision {
    fn verdict(&self) -> Verdict {
        match self {
            Decision::Allow { .. } => Verdict::Allow,
            Decision::AskApproval { .. } => Verdict::AskApproval,
            Decision::Deny { .. } => Verdict::Deny,
        }
    }

    fn deny(code: DenyCode, reason: String, rule: Option<String>) -> Decision {
        Decision::Deny { code, reason, rule }
    }
}

/// The gate could not decide; the step must not run.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum GateError {
    /// The decision could not be audited.
    #[error("the decision could not be audited: {0}")]
    Audit(#[from] AuditError),
    /// The trust history or the rate limiter failed.
    #[error(transparent)]
    Store(#[from] skills_store_traits::Error),
}

/// Whether a gate checks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    Checked,
    AllowAll,
}

/// Permissions, rate limits, the access matrix and autonomy behind one call, audited.
#[derive(Clone)]
pub struct PolicyGate {
    permissions: Arc<Permissions>,
    limiter: Arc<dyn RateLimiter>,
    autonomy: Autonomy,
    trail: AuditTrail,
    clock: Arc<dyn Clock>,
    limits: Vec<RateLimit>,
    approvers: Arc<dyn ApproverDirectory>,
    mode: Mode,
    tools: tool_call::ToolCallSettings,
    ledger: Arc<Mutex<approvals::Ledger>>,
}

impl fmt::Debug for PolicyGate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PolicyGate")
            .field("permissions", &self.permissions)
            .field("autonomy", &self.autonomy)
            .field("trail", &self.trail)
            .field("limits", &self.limits)
            .field("mode", &self.mode)
            .finish_non_exhaustive()
    }
}

impl PolicyGate {
    /// A gate over these parts, reading the time from `clock`.
    pub fn new(
        permissions: Arc<Permissions>,
        limiter: Arc<dyn RateLimiter>,
        autonomy: Autonomy,
        trail: AuditTrail,
        clock: Arc<dyn Clock>,
    ) -> PolicyGate {
        PolicyGate {
            permissions,
            limiter,
            autonomy,
            trail,
            clock,
            limits: Vec::new(),
            approvers: Arc::new(InMemoryApprovers::new()),
            mode: Mode::Checked,
            tools: tool_call::ToolCallSettings::default(),
            ledger: approvals::ledger(),
        }
    }

    /// A gate that allows every step without checking anything (no permissions, rate
    /// limits, approvals or autonomy), still auditing each decision on `trail`. For hosts
    /// that decide elsewhere, and tests: the name is the host's recorded choice.
    pub fn allow_all(trail: AuditTrail) -> PolicyGate {
        let clock: Arc<dyn Clock> = Arc::new(skills_store_traits::SystemClock);
        let mut gate = PolicyGate::new(
            Arc::new(Permissions::new(clock.clone())),
            Arc::new(crate::permissions::InMemoryRateLimiter::new()),
            Autonomy::new(
                Arc::new(skills_store_traits::in_memory::InMemoryTrustStore::new()),
                clock.clone(),
            ),
            trail,
            clock,
        );
        gate.mode = Mode::AllowAll;
        gate
    }

    /// Whether this gate checks (false only for [`allow_all`](PolicyGate::allow_all)).
    pub fn checks(&self) -> bool {
        self.mode == Mode::Checked
    }

    /// The directory that says who holds which approver role (default: an empty one, so
    /// rules naming approver roles can be satisfied by no one until the host provides it).
    pub fn with_approvers(mut self, approvers: Arc<dyn ApproverDirectory>) -> PolicyGate {
        self.approvers = approvers;
        self
    }

    /// The same, also limiting every (tenant, actor, skill) to `limits` (per minute, hour,
    /// day), on top of the rules' daily caps.
    pub fn with_rate_limits(mut self, limits: Vec<RateLimit>) -> PolicyGate {
        self.limits = limits;
        self
    }

    /// The audit trail decisions go to.
    pub fn trail(&self) -> &AuditTrail {
        &self.trail
    }

    /// The autonomy service.
    pub fn autonomy(&self) -> &Autonomy {
        &self.autonomy
    }

    /// The permissions.
    pub fn permissions(&self) -> &Arc<Permissions> {
        &self.permissions
    }

    /// What [`check`](PolicyGate::check) would decide now, without auditing it or counting
    /// it against a rate limit (plans preview approvals with it).
    pub async fn preview(&self, step: &StepRequest) -> Result<Decision, GateError> {
        let now = self.clock.now();
        let resolved = self
            .permissions
            .resolve(&step.principal, &step.skill.target);
        let limits = self.limits_for(&resolved);
        let key = RateKey {
            tenant: step.principal.tenant.clone(),
            actor: step.principal.actor(),
            skill_id: step.skill.id().to_owned(),
        };
        self.decide(step, &resolved, &key, &limits, now).await
    }

    /// Decides whether `step` may run, audits the decision, and returns it.
    pub async fn check(&self, step: &StepRequest) -> Result<Decision, GateError> {
        let now = self.clock.now();
        let resolved = self
            .permissions
            .resolve(&step.principal, &step.skill.target);
        let limits = self.limits_for(&resolved);
        let key = RateKey {
            tenant: step.principal.tenant.clone(),
            actor: step.principal.actor(),
            skill_id: step.skill.id().to_owned(),
        };
        let mut decision = self.decide(step, &resolved, &key, &limits, now).await?;
        if matches!(decision, Decision::Allow { .. })
            && let RateCheck::Limited { limit, retry_at } =
                self.limiter.acquire(&key, &limits, now).await?
        {
            decision = rate_denial(limit, retry_at);
        }
        let decision = self.bind_approval(step, decision).await?;
        self.audit(step, &decision).await?;
        Ok(decision)
    }

    fn limits_for(&self, resolved: &ResolvedPermissions) -> Vec<RateLimit> {
        let mut limits = self.limits.clone();
        if let Some(max) = resolved.max_executions_per_day.value {
            limits.push(RateLimit::new(max, Window::Day));
        }
        limits
    }

    async fn decide(
        &self,
        step: &StepRequest,
        resolved: &ResolvedPermissions,
        key: &RateKey,
        limits: &[RateLimit],
        now: i64,
    ) -> Result<Decision, GateError> {
        let skill = step.skill.id();
        if self.mode == Mode::AllowAll {
            return Ok(Decision::Allow {
                reasons: vec!["allow_all: the host runs every step unchecked".into()],
            });
        }
        if !resolved.can_execute.value {
            return Ok(Decision::deny(
                DenyCode::NotPermitted,
                format!("not permitted to run `{skill}`"),
                resolved.can_execute.rule.clone(),
            ));
        }
        if resolved.can_execute.rule.is_none() && step.skill.trust == TrustLevel::Community {
            return Ok(Decision::deny(
                DenyCode::NotPermitted,
                format!(
                    "`{skill}` is a community skill (or one whose trust is unknown): it runs only where a permission rule allows it to execute"
                ),
                None,
            ));
        }
        if let Some(tool) = &step.tool {
            let t = resolved.tool(tool);
            if !t.value {
                return Ok(Decision::deny(
                    DenyCode::ToolDenied,
                    format!("tool `{tool}` is not allowed for `{skill}`"),
                    t.rule,
                ));
            }
        }
        if let RateCheck::Limited { limit, retry_at } = self.limiter.check(key, limits, now).await?
        {
            return Ok(rate_denial(limit, retry_at));
        }
        for approval in [
            step.approval.as_ref().map(|a| a.execution.as_str()),
            step.regulated_approval.as_ref().map(|a| a.execution()),
        ]
        .into_iter()
        .flatten()
        {
            if approval != step.execution_id {
                return Ok(Decision::deny(
                    DenyCode::ApprovalMismatch,
                    format!(
                        "the approval is for execution `{approval}`, not `{}`",
                        step.execution_id
                    ),
                    None,
                ));
            }
        }
        if let Some(denial) = self.approval_binding(step).await? {
            return Ok(denial);
        }
        let mut reasons = Vec::new();
        let clearance = Clearance::for_skill(
            step.skill.trust,
            &step.execution_id,
            step.regulated_approval.as_ref(),
        )
        .unwrap_or(Clearance::NONE);
        if step.data_classes.contains(&DataClass::Regulated) {
            if step.skill.trust == TrustLevel::Core && !clearance.allows(DataClass::Regulated) {
                return Ok(Decision::AskApproval {
                    reason: "Regulated data requires approval for this execution".into(),
                    options: vec![option("once", "Yes, this time"), option("no", "No")],
                    approver_roles: Vec::new(),
                    rule: None,
                });
            }
            if let Some(a) = &step.regulated_approval
                && clearance.allows(DataClass::Regulated)
            {
                reasons.push(format!("regulated data approved by {}", a.approved_by()));
            }
        }
        let withheld: Vec<&str> = dedup_classes(&step.data_classes)
            .into_iter()
            .filter(|c| !clearance.allows(*c))
            .map(DataClass::as_str)
            .collect();
        if !withheld.is_empty() {
            reasons.push(format!(
                "{} data will be tokenized or redacted for a {} skill",
                withheld.join(", "),
                step.skill.trust
            ));
        }
        if resolved.requires_approval.value {
            let roles = &resolved.approver_roles.value;
            let problem = self
                .rule_approval_problem(&step.principal, step.approval.as_ref(), resolved)
                .await?;
            if step.approval.is_none() || problem.is_some() {
                let base = match &resolved.requires_approval.rule {
                    Some(rule) => format!("Approval required by rule `{rule}`"),
                    None => "Approval required".into(),
                };
                return Ok(Decision::AskApproval {
                    reason: match problem {
                        Some(problem) => format!("{base}: {problem}"),
                        None => base,
                    },
                    options: vec![option("once", "Yes, this time"), option("no", "No")],
                    approver_roles: roles.clone(),
                    rule: resolved.requires_approval.rule.clone(),
                });
            }
            if let Some(a) = &step.approval {
                reasons.push(format!("approved by {}", a.approved_by));
            }
        }
        let scope = UserScope {
            tenant: step.principal.tenant.clone(),
            user: step.principal.user.clone(),
        };
        let autonomy = self
            .autonomy
            .should_request_approval(&scope, skill, step.skill.risk)
            .await?;
        if autonomy.needs_approval {
            match &step.approval {
                Some(a) => reasons.push(format!(
                    "{}; approved by {}",
                    autonomy.reason, a.approved_by
                )),
                None => {
                    return Ok(Decision::AskApproval {
                        reason: autonomy.reason.to_string(),
                        options: autonomy_options(step.skill.risk),
                        approver_roles: Vec::new(),
                        rule: None,
                    });
                }
            }
        } else {
            reasons.push(autonomy.reason.to_string());
        }
        Ok(Decision::Allow { reasons })
    }

    async fn audit(
        &self,
        step: &StepRequest,
        decision: &Decision,
    ) -> Result<AuditEntry, GateError> {
        let (code, reason, rule) = match decision {
            Decision::Allow { reasons } => ("allowed".to_owned(), reasons.join("; "), None),
            Decision::AskApproval { reason, rule, .. } => {
                ("approval_required".to_owned(), reason.clone(), rule.clone())
            }
            Decision::Deny { code, reason, rule } => {
                (code.as_str().to_owned(), reason.clone(), rule.clone())
            }
        };
        let input_hash = step.input_hash.clone().unwrap_or_else(|| sha256_hex(b""));
        let mut record = AuditRecord::new(
            step.principal.user.clone(),
            step.skill.id(),
            step.skill.path.clone(),
            step.skill.trust.as_str(),
            input_hash,
            matches!(decision, Decision::Allow { .. }),
        );
        record.timestamp = self.clock.now();
        record.skill_version.clone_from(&step.skill.version);
        record.task_id.clone_from(&step.task_id);
        record.agent_id.clone_from(&step.principal.agent);
        record.trigger_reason.clone_from(&step.trigger_reason);
        let classes = dedup_classes(&step.data_classes);
        let clearance = Clearance::for_skill(
            step.skill.trust,
            &step.execution_id,
            step.regulated_approval.as_ref(),
        )
        .unwrap_or(Clearance::NONE);
        record.data_classes_granted = classes
            .iter()
            .filter(|c| clearance.allows(**c))
            .map(|c| c.as_str().to_owned())
            .collect();
        record.data_classes_requested = classes.iter().map(|c| c.as_str().to_owned()).collect();
        if !matches!(decision, Decision::Allow { .. }) {
            record.error = Some(error_text(&code, &reason));
        }
        record.security_flags = vec![
            PolicyFlag::new(
                decision.verdict(),
                step.execution_id.clone(),
                code,
                reason,
                rule,
            )
            .to_flag(),
        ];
        Ok(self.trail.append(&step.principal.tenant, record).await?)
    }

    /// After a step ran: appends its execution record and records its outcome for autonomy.
    pub async fn complete(
        &self,
        principal: &Principal,
        record: AuditRecord,
        outcome: Outcome,
    ) -> Result<(AuditEntry, TrustRecord), GateError> {
        let skill_id = record.skill_id.clone();
        let entry = self.trail.append(&principal.tenant, record).await?;
        let scope = UserScope {
            tenant: principal.tenant.clone(),
            user: principal.user.clone(),
        };
        let trust = self
            .autonomy
            .record_outcome(&scope, &skill_id, outcome)
            .await?;
        Ok((entry, trust))
    }
}

fn dedup_classes(classes: &[DataClass]) -> Vec<DataClass> {
    let mut classes = classes.to_vec();
    classes.sort();
    classes.dedup();
    classes
}

fn rate_denial(limit: RateLimit, retry_at: i64) -> Decision {
    let window = match limit.window {
        Window::Minute => "minute",
        Window::Hour => "hour",
        Window::Day => "day",
    };
    let scope = match limit.scope {
        RateScope::ActorSkill => "",
        RateScope::Skill => " for this skill across the organisation",
        RateScope::Organization => " for the whole organisation",
    };
    Decision::deny(
        DenyCode::RateLimited,
        format!(
            "rate limit of {} per {window}{scope} reached; retry at {retry_at}",
            limit.max
        ),
        None,
    )
}

/// The answers an autonomy approval offers at `risk`.
fn autonomy_options(risk: RiskLevel) -> Vec<ApprovalOption> {
    let mut options = vec![option("once", "Yes, this time")];
    if risk.session_trust_allowed() {
        options.push(option("session", "Yes, for this session"));
    }
    if risk.auto_execute_after().is_some() {
        options.push(option("always", "Yes, always"));
    }
    options.push(option("no", "No"));
    options
}
