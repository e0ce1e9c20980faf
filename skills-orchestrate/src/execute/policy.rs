//! Asking the policy gate about a step, and the approver when the gate wants a person.
//!
//! Threat: a step running although the gate denied it or asked for an approval nobody gave;
//! a step seeing regulated data on an approval meant for something else. Guarantee: the
//! skill runs only after [`PolicyGate::check`] answered allow for this execution id; an
//! approval is built here from the approver's yes for exactly that execution and checked by
//! the gate again; a deny, a refusal, a second request for approval, or a gate error (its
//! decision could not be audited) fails the step as denied or audit, never retried. Only
//! when the approval also covers regulated data is the input sanitized again with the
//! regulated-data approval, so the skill sees regulated values only after a person said yes.

use skills_security::gate::{Decision, SkillInfo, StepApproval, StepRequest};
use skills_security::permissions::Principal;
use skills_security::sanitize::Execution;
use skills_security::trust::RegulatedApproval;

use super::approve::{ApprovalAnswer, ApprovalPrompt};
use super::executor::{Executor, Run};
use super::record::Trace;
use super::retry::{StepError, StepErrorKind};
use super::skills::SkillDefinition;
use super::step::StepCall;

/// The principal a run acts as.
pub(super) fn principal(run: &Run) -> Principal {
    let principal = Principal::new(run.scope.tenant.clone(), run.scope.user.clone());
    match &run.agent {
        Some(agent) => principal.agent(agent.clone()),
        None => principal,
    }
}

fn denied(trace: &mut Trace, message: String) -> StepError {
    trace.denied = true;
    StepError::new(StepErrorKind::Denied, message)
}

fn gate_failed(e: impl std::fmt::Display) -> StepError {
    StepError::new(
        StepErrorKind::Audit,
        format!("the policy gate could not decide: {e}"),
    )
}

impl Executor {
    /// Allows the step or says why not; may re-sanitize `input` under a regulated approval.
    pub(super) async fn authorize<'s>(
        &'s self,
        call: &StepCall<'_>,
        skill: &SkillDefinition,
        execution_id: &str,
        execution: &mut Execution<'s>,
        input: &mut String,
        trace: &mut Trace,
    ) -> Result<(), StepError> {
        let gate = &self.parts.gate;
        let mut info = SkillInfo::new(
            skill.id.clone(),
            skill.path.clone(),
            skill.trust,
            skill.risk,
        );
        if let Some(category) = &skill.category {
            info = info.category(category.clone());
        }
        if let Some(version) = &skill.version {
            info = info.version(version.clone());
        }
        let classes = execution.audit().data_classes_requested;
        let request = StepRequest::new(principal(call.run), info, execution_id)
            .task(call.plan.id.clone())
            .data(&classes)
            .input_hash(trace.input_hash.clone())
            .trigger(format!("plan step {}", call.step.id));
        let (reason, options, approver_roles) =
            match gate.check(&request).await.map_err(gate_failed)? {
                Decision::Allow { .. } => return Ok(()),
                Decision::Deny { code, reason, .. } => {
                    return Err(denied(trace, format!("{code}: {reason}")));
                }
                Decision::AskApproval {
                    reason,
                    options,
                    approver_roles,
                    ..
                } => (reason, options, approver_roles),
            };
        let regulated = Self::regulated(execution, skill);
        let prompt = ApprovalPrompt {
            step_id: call.step.id.clone(),
            skill_id: skill.id.clone(),
            execution_id: execution_id.to_owned(),
            briefing: call.step.briefing.clone(),
            reason: reason.clone(),
            options,
            approver_roles,
            regulated,
        };
        let answer = match &self.parts.approver {
            Some(approver) => approver.approve(&prompt).await,
            None => ApprovalAnswer::Refused,
        };
        let by = match answer {
            ApprovalAnswer::Approved { by } => by,
            ApprovalAnswer::Refused => {
                // The approval record (when the gate keeps them) shows the refusal.
                gate.record_refusal(&request, None)
                    .await
                    .map_err(gate_failed)?;
                return Err(denied(trace, format!("approval refused: {reason}")));
            }
        };
        // Who approved; the gate looks up their roles in its directory.
        let approval = StepApproval::for_step(&request, by.clone());
        let mut request = request.with_approval(approval);
        let regulated_approval =
            regulated.then(|| RegulatedApproval::new(execution_id, by.as_str()));
        if let Some(approval) = &regulated_approval {
            request = request.with_regulated_approval(approval.clone());
        }
        match gate.check(&request).await.map_err(gate_failed)? {
            Decision::Allow { .. } => {}
            Decision::Deny { code, reason, .. } => {
                return Err(denied(trace, format!("{code}: {reason}")));
            }
            Decision::AskApproval { reason, .. } => {
                return Err(denied(
                    trace,
                    format!("the approval given was not enough: {reason}"),
                ));
            }
        }
        if let Some(approval) = regulated_approval {
            *execution = self
                .parts
                .sanitizer
                .begin(execution_id.to_owned(), skill.trust, Some(&approval))
                .map_err(|e| StepError::new(StepErrorKind::Invalid, e.to_string()))?;
            *input = self.sanitized_input(call, execution);
            trace.input_hash = skills_security::audit::sha256_hex(input.as_bytes());
        }
        Ok(())
    }
}
