//! A plan's risk and whether the user must approve it.
//!
//! Threat: a plan that will run a risky or forbidden skill reaching execution without the
//! user seeing an approval request, or a planner that trusts a skill it knows nothing about.
//! Guarantees:
//! - a skill the [`SkillRisk`] lookup does not know is treated as a community skill (not
//!   reviewed), whose default risk is [`RiskLevel::High`];
//! - without an [`ApprovalPolicy`], every step of risk `High` or above needs approval;
//! - with one, a step needs approval when the policy answers [`Decision::AskApproval`], and a
//!   [`Decision::Deny`] fails planning with [`Error::StepDenied`](crate::Error::StepDenied):
//!   a plan that cannot run whole is not offered to the user.
//!
//! Planning only previews the policy. The executor still asks the [`PolicyGate`] before each
//! step (the authoritative, audited, rate-counted decision), so a preview that says "allow"
//! never lets a step skip the gate.

use std::collections::BTreeMap;

use async_trait::async_trait;
use skills_security::autonomy::RiskLevel as SecurityRisk;
use skills_security::gate::{Decision, GateError, PolicyGate, SkillInfo, StepRequest};
use skills_security::permissions::Principal;
use skills_security::trust::TrustLevel;

use super::RiskLevel;
use crate::error::{Error, Result};

/// [`skills_security::autonomy::default_risk`] (the one function that decides it), as the
/// plan store's risk level.
pub fn default_risk(trust: TrustLevel) -> RiskLevel {
    plan_risk(skills_security::autonomy::default_risk(trust))
}

/// The plan store's risk level for the security crate's.
pub fn plan_risk(risk: SecurityRisk) -> RiskLevel {
    match risk {
        SecurityRisk::Low => RiskLevel::Low,
        SecurityRisk::Medium => RiskLevel::Medium,
        SecurityRisk::High => RiskLevel::High,
        SecurityRisk::Critical => RiskLevel::Critical,
    }
}

/// The security crate's risk level for the plan store's.
pub fn security_risk(risk: RiskLevel) -> SecurityRisk {
    match risk {
        RiskLevel::Low => SecurityRisk::Low,
        RiskLevel::Medium => SecurityRisk::Medium,
        RiskLevel::High => SecurityRisk::High,
        RiskLevel::Critical => SecurityRisk::Critical,
    }
}

/// What the host knows about the skills a plan may use: trust level, risk, path and category,
/// as the policy gate sees them.
pub trait SkillRisk: Send + Sync {
    /// The skill's gate description; `None` when the skill is unknown.
    fn skill_info(&self, skill: &str) -> Option<SkillInfo>;
}

/// What the planner assumes about `skill`: the lookup's answer, or an unreviewed community
/// skill at its default risk.
pub(crate) fn skill_info_or_unknown(lookup: Option<&dyn SkillRisk>, skill: &str) -> SkillInfo {
    lookup
        .and_then(|lookup| lookup.skill_info(skill))
        .unwrap_or_else(|| {
            SkillInfo::new(
                skill,
                skill,
                TrustLevel::Community,
                security_risk(default_risk(TrustLevel::Community)),
            )
        })
}

/// A [`SkillRisk`] held in memory.
///
/// ```
/// use skills_orchestrate::plan::{RiskLevel, SkillRisk, SkillRiskTable};
/// use skills_security::TrustLevel;
///
/// let table = SkillRiskTable::new()
///     .skill("pdf", TrustLevel::Verified)
///     .skill_at("payments", TrustLevel::Core, RiskLevel::Critical);
/// assert_eq!(table.skill_info("pdf").map(|s| s.risk.as_str()), Some("low"));
/// assert_eq!(table.skill_info("payments").map(|s| s.risk.as_str()), Some("critical"));
/// assert!(table.skill_info("unknown").is_none());
/// ```
#[derive(Debug, Clone, Default)]
pub struct SkillRiskTable {
    skills: BTreeMap<String, SkillInfo>,
}

impl SkillRiskTable {
    /// An empty table.
    pub fn new() -> Self {
        Self::default()
    }

    /// With `skill` at `trust` and the [`default_risk`] of that trust level.
    pub fn skill(self, skill: impl Into<String>, trust: TrustLevel) -> Self {
        self.skill_at(skill, trust, default_risk(trust))
    }

    /// With `skill` at `trust` and `risk`.
    pub fn skill_at(self, skill: impl Into<String>, trust: TrustLevel, risk: RiskLevel) -> Self {
        let skill = skill.into();
        self.info(SkillInfo::new(
            skill.clone(),
            skill,
            trust,
            security_risk(risk),
        ))
    }

    /// With a full description (path, category, version).
    pub fn info(mut self, info: SkillInfo) -> Self {
        self.skills.insert(info.id().to_owned(), info);
        self
    }
}

impl SkillRisk for SkillRiskTable {
    fn skill_info(&self, skill: &str) -> Option<SkillInfo> {
        self.skills.get(skill).cloned()
    }
}

/// Whether a planned step may run, needs approval, or is refused; asked once per step while
/// planning.
#[async_trait]
pub trait ApprovalPolicy: Send + Sync {
    /// The decision for running `skill` as step `step_id`.
    async fn decide(&self, step_id: &str, skill: &SkillInfo) -> Result<Decision>;
}

/// The [`PolicyGate`]'s answer for one user, previewed without side effects.
///
/// [`PolicyGate::check`] is the decision to run a step: it counts an allowed run against the
/// rate limits and audits every answer. Asking it while planning would count each step twice
/// and audit decisions for steps that may never run, so this asks [`PolicyGate::preview`]:
/// the same decision, read-only. Tools and regulated data depend on the execution and are
/// left to the gate at run time.
#[derive(Debug, Clone)]
pub struct GatePreview {
    gate: PolicyGate,
    principal: Principal,
}

impl GatePreview {
    /// Previews `gate`'s decisions for `principal`.
    pub fn new(gate: PolicyGate, principal: Principal) -> Self {
        GatePreview { gate, principal }
    }
}

#[async_trait]
impl ApprovalPolicy for GatePreview {
    async fn decide(&self, step_id: &str, skill: &SkillInfo) -> Result<Decision> {
        let request = StepRequest::new(
            self.principal.clone(),
            skill.clone(),
            format!("preview:{step_id}"),
        );
        self.gate.preview(&request).await.map_err(|e| match e {
            GateError::Store(e) => Error::Store(e),
            other => Error::Invalid {
                what: "approval preview".into(),
                reason: other.to_string(),
            },
        })
    }
}
