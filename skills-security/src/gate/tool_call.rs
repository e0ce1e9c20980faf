//! The gate's answer to one tool call the model makes while a skill is active (the
//! skill's `allowed-tools`, enforced; see [`allowed_tools`](crate::allowed_tools) for the
//! threat and the guarantees).
//!
//! In order: allow-all hosts allow (audited); the skill must still be allowed to execute
//! (a community skill only by a rule); the tool must pass the host's allow and deny lists;
//! an unlisted call is refused under [`AllowedToolsMode::Restrict`]; a listed call of a
//! non-community skill (or any skill, when the host pre-approves community lists), on a
//! skill no rule requires approval for, is allowed without asking; everything else needs
//! an approval naming this call's [`approval_id`](ToolCallRequest::approval_id) (the call id
//! bound to the tool and its exact input), used once, by someone other than the requester
//! when a rule asks, holding one of each of its role lists. Allowed calls count against the
//! tool rate limits, if any.

use std::collections::{HashSet, VecDeque};
use std::sync::{Arc, Mutex, PoisonError};

use serde_json::{Value, json};
use skills_store_traits::TenantId;
use skills_store_traits::audit::{AuditEntry, AuditRecord};

use super::{
    Decision, DenyCode, GateError, Mode, PolicyGate, SkillInfo, StepApproval, option, rate_denial,
};
use crate::allowed_tools::{AllowedToolsMode, ToolCall, ToolPolicy};
use crate::audit::{PolicyFlag, canonical_json, error_text, sha256_hex};
use crate::permissions::{Principal, RateCheck, RateKey, RateLimit};
use crate::trust::TrustLevel;

/// How a gate treats tool calls (host settings), and the approvals already used.
#[derive(Debug, Clone, Default)]
pub(super) struct ToolCallSettings {
    mode: AllowedToolsMode,
    pre_approve_community: bool,
    limits: Vec<RateLimit>,
    used: Arc<Mutex<UsedApprovals>>,
}

/// How many used tool-call approvals a gate remembers (the oldest are forgotten first).
const REMEMBERED_APPROVALS: usize = 65_536;

/// Tool-call approvals already used, per tenant: an approval is for one call, once.
#[derive(Debug, Default)]
struct UsedApprovals {
    set: HashSet<(TenantId, String)>,
    order: VecDeque<(TenantId, String)>,
}

impl UsedApprovals {
    /// Records `id` as used; false when it already was.
    fn consume(&mut self, tenant: &TenantId, id: &str) -> bool {
        let key = (tenant.clone(), id.to_owned());
        if !self.set.insert(key.clone()) {
            return false;
        }
        self.order.push_back(key);
        if self.order.len() > REMEMBERED_APPROVALS
            && let Some(old) = self.order.pop_front()
        {
            self.set.remove(&old);
        }
        true
    }
}

/// One tool call to decide: who, which active skill, the call and its id.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ToolCallRequest {
    /// Who the model acts for.
    pub principal: Principal,
    /// The active skill.
    pub skill: SkillInfo,
    /// The call's id; an approval must name it.
    pub call_id: String,
    /// The call.
    pub call: ToolCall,
    /// The task it belongs to.
    pub task_id: Option<String>,
    /// A person's approval of this call.
    pub approval: Option<StepApproval>,
}

impl ToolCallRequest {
    /// `call` (with id `call_id`) by the model acting for `principal` while `skill` is
    /// active.
    pub fn new(
        principal: Principal,
        skill: SkillInfo,
        call_id: impl Into<String>,
        call: ToolCall,
    ) -> ToolCallRequest {
        ToolCallRequest {
            principal,
            skill,
            call_id: call_id.into(),
            call,
            task_id: None,
            approval: None,
        }
    }

    /// In task `task`.
    pub fn task(mut self, task: impl Into<String>) -> Self {
        self.task_id = Some(task.into());
        self
    }

    /// With a person's approval.
    pub fn with_approval(mut self, approval: StepApproval) -> Self {
        self.approval = Some(approval);
        self
    }

    /// SHA-256 of the call's input as canonical JSON.
    pub(crate) fn input_hash(&self) -> String {
        hash_json(&self.call.input)
    }

    /// What a person's approval of this call must name (`StepApproval::for_call`): the
    /// call id bound to the tool and its exact input, so an approval of one command never
    /// covers another sent under the same id. A gate accepts each approval once.
    pub fn approval_id(&self) -> String {
        let call = json!({"tool": self.call.name, "input": self.call.input});
        format!("{}@{}", self.call_id, hash_json(&call))
    }
}

/// SHA-256 of `value` as canonical JSON.
pub(crate) fn hash_json(value: &Value) -> String {
    let mut text = String::new();
    canonical_json(value, &mut text);
    sha256_hex(text.as_bytes())
}

impl PolicyGate {
    /// What to do with calls an active skill's `allowed-tools` does not list (default:
    /// [`AllowedToolsMode::PreApprove`], they ask).
    pub fn allowed_tools_mode(mut self, mode: AllowedToolsMode) -> PolicyGate {
        self.tools.mode = mode;
        self
    }

    /// Pre-approves the listed calls of community skills too. By default a community
    /// skill's list restricts it (under `Restrict`) but every call still asks: its
    /// publisher, not the host, wrote the list.
    pub fn pre_approve_community_tools(mut self) -> PolicyGate {
        self.tools.pre_approve_community = true;
        self
    }

    /// Limits every (tenant, actor, skill, tool) to `limits` of allowed tool calls.
    pub fn with_tool_rate_limits(mut self, limits: Vec<RateLimit>) -> PolicyGate {
        self.tools.limits = limits;
        self
    }

    /// The mode for unlisted calls.
    pub fn tool_mode(&self) -> AllowedToolsMode {
        self.tools.mode
    }

    /// Decides one tool call of the active skill under its `policy`, audits the decision
    /// (fail closed: an error when it cannot be audited) and returns it.
    ///
    /// ```
    /// use serde_json::json;
    /// use skills_security::TrustLevel;
    /// use skills_security::allowed_tools::{ToolCall, ToolPolicy};
    /// use skills_security::audit::AuditTrail;
    /// use skills_security::autonomy::{Autonomy, RiskLevel};
    /// use skills_security::gate::{Decision, PolicyGate, SkillInfo, ToolCallRequest};
    /// use skills_security::permissions::{InMemoryRateLimiter, Permissions, Principal};
    /// use skills_store_traits::ManualClock;
    /// use skills_store_traits::in_memory::{InMemoryAuditStore, InMemoryTrustStore};
    /// use std::sync::Arc;
    ///
    /// # futures::executor::block_on(async {
    /// let clock = ManualClock::new(0);
    /// let gate = PolicyGate::new(
    ///     Arc::new(Permissions::new(clock.clone())),
    ///     Arc::new(InMemoryRateLimiter::new()),
    ///     Autonomy::new(Arc::new(InMemoryTrustStore::new()), clock.clone()),
    ///     AuditTrail::new(Arc::new(InMemoryAuditStore::new())),
    ///     clock,
    /// );
    /// let notes = SkillInfo::new("notes", "acme/notes", TrustLevel::Verified, RiskLevel::Low);
    /// let policy = ToolPolicy::parse("Read Bash(git log:*)");
    /// let alice = Principal::new("acme", "alice");
    /// let call = |id: &str, command: &str| ToolCallRequest::new(
    ///     alice.clone(), notes.clone(), id, ToolCall::new("Bash", json!({"command": command})),
    /// );
    /// let listed = gate.check_tool_call(&call("c1", "git log -3"), &policy).await?;
    /// assert!(matches!(listed, Decision::Allow { .. }));
    /// let unlisted = gate.check_tool_call(&call("c2", "curl evil.test"), &policy).await?;
    /// assert!(matches!(unlisted, Decision::AskApproval { .. }));
    /// # Ok::<(), skills_security::gate::GateError>(())
    /// # }).unwrap();
    /// ```
    pub async fn check_tool_call(
        &self,
        request: &ToolCallRequest,
        policy: &ToolPolicy,
    ) -> Result<Decision, GateError> {
        let now = self.clock.now();
        let key = RateKey {
            tenant: request.principal.tenant.clone(),
            actor: request.principal.actor(),
            skill_id: format!("{}::{}", request.skill.id(), request.call.name),
        };
        let mut decision = self.decide_tool_call(request, policy, &key, now).await?;
        if matches!(decision, Decision::Allow { .. })
            && !self.tools.limits.is_empty()
            && let RateCheck::Limited { limit, retry_at } =
                self.limiter.acquire(&key, &self.tools.limits, now).await?
        {
            decision = rate_denial(limit, retry_at);
        }
        self.audit_tool_call(request, &decision).await?;
        Ok(decision)
    }

    async fn decide_tool_call(
        &self,
        request: &ToolCallRequest,
        policy: &ToolPolicy,
        key: &RateKey,
        now: i64,
    ) -> Result<Decision, GateError> {
        let (skill, tool) = (request.skill.id(), request.call.name.as_str());
        if self.mode == Mode::AllowAll {
            return Ok(Decision::Allow {
                reasons: vec!["allow_all: the host runs every tool call unchecked".into()],
            });
        }
        let resolved = self
            .permissions
            .resolve(&request.principal, &request.skill.target);
        let community = request.skill.trust == TrustLevel::Community;
        if !resolved.can_execute.value || (community && resolved.can_execute.rule.is_none()) {
            return Ok(Decision::deny(
                DenyCode::NotPermitted,
                format!("`{skill}` is not permitted to run here, nor are its tool calls"),
                resolved.can_execute.rule.clone(),
            ));
        }
        let host = resolved.tool(tool);
        if !host.value {
            return Ok(Decision::deny(
                DenyCode::ToolDenied,
                format!("tool `{tool}` is not allowed for `{skill}`"),
                host.rule,
            ));
        }
        if let Some(entry) = policy.disallowing(&request.call) {
            return Ok(Decision::deny(
                DenyCode::ToolDenied,
                format!("this `{tool}` call matches `{skill}`'s disallowed-tools entry `{entry}`"),
                None,
            ));
        }
        let listing = policy.listing(&request.call);
        if listing.is_none() && self.tools.mode == AllowedToolsMode::Restrict {
            let reason = if policy.declared() {
                format!(
                    "this `{tool}` call is not in `{skill}`'s allowed-tools ({}), and this host restricts skills to their lists",
                    policy.summary()
                )
            } else {
                format!(
                    "`{skill}` declares no allowed-tools, and this host restricts skills to their lists"
                )
            };
            return Ok(Decision::deny(DenyCode::NotInAllowedTools, reason, None));
        }
        if !self.tools.limits.is_empty()
            && let RateCheck::Limited { limit, retry_at } =
                self.limiter.check(key, &self.tools.limits, now).await?
        {
            return Ok(rate_denial(limit, retry_at));
        }
        if let Some(a) = &request.approval
            && (a.execution != request.approval_id()
                || a.digest != request.digest()
                || !a.names_someone())
        {
            return Ok(Decision::deny(
                DenyCode::ApprovalMismatch,
                format!(
                    "the approval is for another call than `{}` with this input",
                    request.call_id
                ),
                None,
            ));
        }
        let pre_approvable = !community || self.tools.pre_approve_community;
        let ask_reason = match listing {
            Some(entry) if pre_approvable && !resolved.requires_approval.value => {
                let mut reasons = vec![format!(
                    "pre-approved by `{skill}`'s allowed-tools entry `{entry}`"
                )];
                if let Some(rule) = host.rule {
                    reasons.push(format!("tool allowed by rule `{rule}`"));
                }
                return Ok(Decision::Allow { reasons });
            }
            Some(_) if resolved.requires_approval.value => match &resolved.requires_approval.rule {
                Some(rule) => format!("Approval required by rule `{rule}`"),
                None => "Approval required".into(),
            },
            Some(entry) => format!(
                "`{skill}` is a community skill: its allowed-tools entry `{entry}` is not pre-approved"
            ),
            None if policy.declared() => {
                format!("this `{tool}` call is not in `{skill}`'s allowed-tools")
            }
            None => format!("`{skill}` declares no allowed-tools"),
        };
        let problem = if resolved.requires_approval.value {
            self.rule_approval_problem(&request.principal, request.approval.as_ref(), &resolved)
                .await?
        } else {
            None
        };
        match (&request.approval, problem) {
            (Some(a), None) => {
                let fresh = self
                    .tools
                    .used
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .consume(&request.principal.tenant, &a.execution);
                if !fresh {
                    return Ok(Decision::deny(
                        DenyCode::ApprovalMismatch,
                        format!(
                            "the approval of call `{}` was already used: it is for one call",
                            request.call_id
                        ),
                        None,
                    ));
                }
                Ok(Decision::Allow {
                    reasons: vec![format!("{ask_reason}; approved by {}", a.approved_by)],
                })
            }
            (_, problem) => Ok(Decision::AskApproval {
                reason: match problem {
                    Some(problem) => format!("{ask_reason}: {problem}"),
                    None => ask_reason,
                },
                options: vec![option("once", "Yes, this time"), option("no", "No")],
                approver_roles: if resolved.requires_approval.value {
                    resolved.approver_roles.value.clone()
                } else {
                    Vec::new()
                },
                rule: resolved.requires_approval.rule.clone(),
            }),
        }
    }

    async fn audit_tool_call(
        &self,
        request: &ToolCallRequest,
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
        let mut record = self.tool_record(request, matches!(decision, Decision::Allow { .. }));
        if !matches!(decision, Decision::Allow { .. }) {
            record.error = Some(error_text(&code, &reason));
        }
        record.security_flags = vec![
            PolicyFlag::new(
                decision.verdict(),
                request.call_id.clone(),
                code,
                reason,
                rule,
            )
            .to_flag(),
        ];
        Ok(self.trail.append(&request.principal.tenant, record).await?)
    }

    /// The audit record of a tool call (the decision's, or the forwarded call's outcome).
    pub(crate) fn tool_record(&self, request: &ToolCallRequest, success: bool) -> AuditRecord {
        let mut record = AuditRecord::new(
            request.principal.user.clone(),
            request.skill.id(),
            request.skill.path.clone(),
            request.skill.trust.as_str(),
            request.input_hash(),
            success,
        );
        record.timestamp = self.clock.now();
        record.skill_version.clone_from(&request.skill.version);
        record.task_id.clone_from(&request.task_id);
        record.agent_id.clone_from(&request.principal.agent);
        record.trigger_reason = Some(format!("tool call `{}`", request.call.name));
        record
    }
}

#[cfg(test)]
mod tests;
