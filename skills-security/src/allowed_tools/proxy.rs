//! The permission proxy (seed 003's `callTool`): every tool call the model makes while a
//! skill is active goes through the gate, and only an allowed one reaches its handler.
//!
//! Threat: a call reaching a tool's handler without the gate's yes, or leaving no trace.
//! Guarantee: [`GatedTools::call`] asks [`PolicyGate::check_tool_call`] first (which audits
//! the decision, or fails and nothing runs); only on allow is the call forwarded to the
//! [`ToolRegistry`] (which validates the input against the tool's schema before the handler
//! sees it); the forwarded call's outcome (success or the error, the output's hash, the
//! time it took) is appended to the audit trail before it is returned.

use std::time::Instant;

use serde_json::Value;
use skills_core::tools::{CallError, ToolRegistry};

use super::{ToolCall, ToolPolicy};
use crate::gate::{
    ApprovalOption, Decision, DenyCode, GateError, PolicyGate, SkillInfo, StepApproval,
    ToolCallRequest,
};
use crate::permissions::Principal;

/// A skill the model is working under: who it acts for, the skill as the gate knows it,
/// and the tool policy its activation declared.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ActiveSkill {
    principal: Principal,
    skill: SkillInfo,
    policy: ToolPolicy,
    task_id: Option<String>,
}

impl ActiveSkill {
    /// `skill`, active for `principal` under `policy`.
    pub fn new(principal: Principal, skill: SkillInfo, policy: ToolPolicy) -> ActiveSkill {
        ActiveSkill {
            principal,
            skill,
            policy,
            task_id: None,
        }
    }

    /// In task `task` (for the audit records).
    pub fn task(mut self, task: impl Into<String>) -> ActiveSkill {
        self.task_id = Some(task.into());
        self
    }

    /// Who the model acts for.
    pub fn principal(&self) -> &Principal {
        &self.principal
    }

    /// The skill.
    pub fn skill(&self) -> &SkillInfo {
        &self.skill
    }

    /// Its tool policy.
    pub fn policy(&self) -> &ToolPolicy {
        &self.policy
    }
}

/// What became of one tool call.
#[derive(Debug)]
#[non_exhaustive]
pub enum ToolCallOutcome {
    /// The gate allowed it and the handler answered.
    Completed {
        /// The handler's output (valid against the tool's output schema, if it has one).
        output: Value,
        /// Why it was allowed.
        reasons: Vec<String>,
    },
    /// The gate allowed it and the call failed (unknown tool, invalid input or output, or
    /// the handler's own error).
    Failed {
        /// The error.
        error: CallError,
        /// Why it was allowed.
        reasons: Vec<String>,
    },
    /// A person must approve this call first; call again with the same id and input and
    /// their `StepApproval::new(approval_id, digest, who)`.
    NeedsApproval {
        /// What the approval must name: the call id bound to the tool and its input.
        approval_id: String,
        /// What the approval must carry: the call's digest (`ToolCallRequest::digest`).
        digest: String,
        /// Why.
        reason: String,
        /// The answers to offer.
        options: Vec<ApprovalOption>,
        /// Who may approve (empty: the user).
        approver_roles: Vec<String>,
    },
    /// Refused; the handler was not called.
    Denied {
        /// A stable code.
        code: DenyCode,
        /// Why.
        reason: String,
        /// The permission rule that denied, if one did.
        rule: Option<String>,
    },
}

/// A [`ToolRegistry`] behind the [`PolicyGate`]: see the module docs.
///
/// ```
/// use serde_json::json;
/// use skills_core::tools::{Tool, ToolRegistry, handler_fn};
/// use skills_security::TrustLevel;
/// use skills_security::allowed_tools::{ActiveSkill, GatedTools, ToolCallOutcome, ToolPolicy};
/// use skills_security::audit::AuditTrail;
/// use skills_security::autonomy::RiskLevel;
/// use skills_security::gate::{PolicyGate, SkillInfo};
/// use skills_security::permissions::Principal;
///
/// # futures::executor::block_on(async {
/// let mut registry = ToolRegistry::new();
/// let bash = Tool::new("Bash", "Run a command.", json!({
///     "type": "object", "properties": {"command": {"type": "string"}}, "required": ["command"]
/// }))?;
/// registry.register(bash, handler_fn(|input| async move { Ok(json!({"ran": input["command"]})) }))?;
/// // `allow_all` only to keep the example short: a real host passes its checked gate.
/// let tools = GatedTools::new(PolicyGate::allow_all(AuditTrail::in_memory()), registry);
/// let skill = SkillInfo::new("notes", "acme/notes", TrustLevel::Verified, RiskLevel::Low);
/// let active = ActiveSkill::new(Principal::new("acme", "alice"), skill, ToolPolicy::parse("Bash(git log:*)"));
/// let outcome = tools.call(&active, "call-1", "Bash", json!({"command": "git log"}), None).await?;
/// assert!(matches!(outcome, ToolCallOutcome::Completed { ref output, .. } if output["ran"] == "git log"));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// # }).unwrap();
/// ```
#[derive(Debug, Clone)]
pub struct GatedTools {
    gate: PolicyGate,
    registry: ToolRegistry,
}

impl GatedTools {
    /// `registry`'s tools, reachable only through `gate`.
    pub fn new(gate: PolicyGate, registry: ToolRegistry) -> GatedTools {
        GatedTools { gate, registry }
    }

    /// The tools (for listing them to the model).
    pub fn registry(&self) -> &ToolRegistry {
        &self.registry
    }

    /// The gate.
    pub fn gate(&self) -> &PolicyGate {
        &self.gate
    }

    /// Decides the call `name(input)` with id `call_id` while `active` is active and, when
    /// allowed, forwards it to the tool's handler; audited either way.
    ///
    /// # Errors
    ///
    /// [`GateError`] when the decision or the outcome cannot be audited (or a store behind
    /// the gate fails): the call did not run, or (for the outcome) its result is withheld.
    pub async fn call(
        &self,
        active: &ActiveSkill,
        call_id: &str,
        name: &str,
        input: Value,
        approval: Option<StepApproval>,
    ) -> Result<ToolCallOutcome, GateError> {
        let mut request = ToolCallRequest::new(
            active.principal.clone(),
            active.skill.clone(),
            call_id,
            ToolCall::new(name, input),
        );
        request.task_id.clone_from(&active.task_id);
        request.approval = approval;
        let reasons = match self.gate.check_tool_call(&request, &active.policy).await? {
            Decision::Allow { reasons } => reasons,
            Decision::AskApproval {
                reason,
                options,
                approver_roles,
                ..
            } => {
                return Ok(ToolCallOutcome::NeedsApproval {
                    approval_id: request.approval_id(),
                    digest: request.digest(),
                    reason,
                    options,
                    approver_roles,
                });
            }
            Decision::Deny { code, reason, rule } => {
                return Ok(ToolCallOutcome::Denied { code, reason, rule });
            }
        };
        let started = Instant::now();
        let result = self.registry.call(name, request.call.input.clone()).await;
        let mut record = self.gate.tool_record(&request, result.is_ok());
        record.execution_time_ms =
            Some(u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX));
        match &result {
            Ok(output) => record.output_hash = Some(crate::gate::hash_json(output)),
            Err(error) => record.error = Some(error.to_string()),
        }
        self.gate
            .trail()
            .append(&active.principal.tenant, record)
            .await?;
        Ok(match result {
            Ok(output) => ToolCallOutcome::Completed { output, reasons },
            Err(error) => ToolCallOutcome::Failed { error, reasons },
        })
    }
}
