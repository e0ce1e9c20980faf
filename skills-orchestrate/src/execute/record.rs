//! The execution record every attempt leaves on the audit trail.

use std::time::Duration;

use serde_json::Value;
use skills_security::audit::{UsageFlag, error_text, execution_record, sha256_hex};
use skills_security::autonomy::Outcome;
use skills_security::sanitize::DataAccess;

use super::executor::Executor;
use super::policy::principal;
use super::retry::{StepError, StepErrorKind};
use super::skills::SkillDefinition;
use super::step::{Done, StepCall};
use crate::llm::TokenUsage;

/// What an attempt learned on its way that its record needs.
#[derive(Debug, Default)]
pub(super) struct Trace {
    /// SHA-256 of the sanitized input.
    pub(super) input_hash: String,
    /// The sanitizer's data-access record.
    pub(super) access: Option<DataAccess>,
    /// The sandbox configuration in force (instruction and script skills).
    pub(super) sandbox_config: Value,
    /// The gate denied the step or its approval was refused (not the skill's failure, so
    /// autonomy does not count it).
    pub(super) denied: bool,
    /// The model tokens this attempt used (the skill's answer and its summary).
    pub(super) usage: TokenUsage,
}

impl Executor {
    /// Appends the attempt's execution record through the gate (which also records the
    /// outcome for autonomy), or on its trail when the gate denied the step. A successful
    /// attempt whose record cannot be written fails (fail closed).
    pub(super) async fn record(
        &self,
        call: &StepCall<'_>,
        skill: &SkillDefinition,
        trace: &Trace,
        elapsed: Duration,
        outcome: Result<Done, StepError>,
    ) -> Result<Done, StepError> {
        let gate = &self.parts.gate;
        let trail = gate.trail();
        let Some(access) = &trace.access else {
            return outcome;
        };
        let input_hash = if trace.input_hash.is_empty() {
            sha256_hex(b"")
        } else {
            trace.input_hash.clone()
        };
        let run = call.run;
        let mut record = execution_record(
            access,
            run.scope.user.clone(),
            &skill.id,
            &skill.path,
            &input_hash,
        );
        record.skill_version.clone_from(&skill.version);
        record.task_id = Some(call.plan.id.clone());
        record.agent_id.clone_from(&run.agent);
        record.trigger_reason = Some(format!("plan step {}", call.step.id));
        record.execution_time_ms = Some(u64::try_from(elapsed.as_millis()).unwrap_or(u64::MAX));
        record.sandbox_config = trace.sandbox_config.clone();
        if trace.usage.total() > 0 {
            record.security_flags.push(
                UsageFlag::new(trace.usage.input_tokens, trace.usage.output_tokens).to_flag(),
            );
        }
        match &outcome {
            Ok(done) => {
                record.success = true;
                record.output_hash = Some(sha256_hex(done.output.as_bytes()));
            }
            Err(error) => {
                record.success = false;
                record.error = Some(error_text(error.kind.as_str(), &error.message));
            }
        }
        let written = match gate {
            gate if !trace.denied => {
                let verdict = if outcome.is_ok() {
                    Outcome::Success
                } else {
                    Outcome::Failure
                };
                gate.complete(&principal(run), record, verdict)
                    .await
                    .map(drop)
                    .map_err(|e| e.to_string())
            }
            _ => trail
                .append(&run.scope.tenant, record)
                .await
                .map(drop)
                .map_err(|e| e.to_string()),
        };
        match (outcome, written) {
            (Ok(_), Err(e)) => Err(StepError::new(
                StepErrorKind::Audit,
                format!("the execution record could not be written: {e}"),
            )),
            (outcome, _) => outcome,
        }
    }
}
