//! Building the stored record from what the pipeline and the gate know, and reading back
//! the conventions the usage log relies on.
//!
//! Two names meet here: the store's [`AuditRecord`] (the full row of seed 000's
//! `skill_audit_log`) and the sanitizer's [`DataAccess`](crate::sanitize::DataAccess)
//! (the data-access part one execution contributes). [`execution_record`] builds the first
//! from the second, so the data-access fields are never typed twice.
//!
//! Conventions (all inside hashed fields, so they are as tamper-evident as the rest):
//!
//! * `error` is `"<code>: <message>"`, the code being `[a-z0-9_.-]+` ([`error_text`],
//!   [`split_error`]); code `timeout` marks a timed-out execution, code `denied` one that
//!   never ran (denied or refused).
//! * a policy decision of the gate is a record whose `security_flags` hold one
//!   `{"flag":"policy_decision",...}` JSON object ([`PolicyFlag`]); execution records hold
//!   the sanitizer's flags as JSON objects (`{"flag":"token_shaped_input","count":1}`) and,
//!   when the attempt called a model, its token usage ([`UsageFlag`]).

use serde::{Deserialize, Serialize};
use skills_store_traits::UserId;
use skills_store_traits::audit::AuditRecord;

use super::encoding::canonical_json;
use crate::sanitize::DataAccess;

/// The error code of a timed-out execution.
pub const TIMEOUT: &str = "timeout";

/// The error code of an execution that never ran: the gate denied it or a person refused
/// its approval (the orchestrator records such attempts with this code).
pub const DENIED: &str = "denied";

/// `"<code>: <message>"`, the form of `AuditRecord::error`.
pub fn error_text(code: &str, message: &str) -> String {
    format!("{code}: {message}")
}

fn is_code(code: &str) -> bool {
    !code.is_empty()
        && code.len() <= 50
        && code
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b"_.-".contains(&b))
}

/// Splits an `error` into its code (when it has one) and message.
pub fn split_error(error: &str) -> (Option<&str>, &str) {
    match error.split_once(": ") {
        Some((code, message)) if is_code(code) => (Some(code), message),
        _ => (None, error),
    }
}

/// The stored record of one execution, its data-access fields taken from the sanitizer.
///
/// The record id is the execution id (one record per execution); `input_hash` is the
/// SHA-256 of the sanitized input ([`sha256_hex`](super::sha256_hex)). Set the outcome
/// (`output_hash`, `execution_time_ms`, `success`, `error`) and the context (`skill_version`,
/// `task_id`, `agent_id`, `trigger_reason`, `sandbox_config`) on the result.
///
/// ```
/// use skills_security::audit::{execution_record, sha256_hex};
/// use skills_security::{Context, Sanitizer, TrustLevel};
///
/// let sanitizer = Sanitizer::default();
/// let mut run = sanitizer.begin("exec-1", TrustLevel::Verified, None)?;
/// let input = run.sanitize_text("Write to rbrown@example.com", &Context::default());
/// let record = execution_record(&run.audit(), "alice", "email", "acme/skills/email", &sha256_hex(input.text.as_bytes()));
/// assert_eq!(record.id, "exec-1");
/// assert_eq!(record.skill_trust_level, "verified");
/// assert_eq!(record.tokens_used, ["[EMAIL_001]"]);
/// assert_eq!(record.data_classes_requested, ["internal", "confidential"]);
/// assert_eq!(record.data_classes_granted, ["internal"]);
/// # Ok::<(), skills_security::Error>(())
/// ```
pub fn execution_record(
    access: &DataAccess,
    user: impl Into<UserId>,
    skill_id: &str,
    skill_path: &str,
    input_hash: &str,
) -> AuditRecord {
    let mut record = AuditRecord::new(
        user,
        skill_id,
        skill_path,
        access.skill_trust_level.as_str(),
        input_hash,
        true,
    );
    record.id = access.execution.clone();
    record.data_classes_requested = access
        .data_classes_requested
        .iter()
        .map(|c| c.as_str().to_owned())
        .collect();
    record.data_classes_granted = access
        .data_classes_granted
        .iter()
        .map(|c| c.as_str().to_owned())
        .collect();
    record.data_redacted = access.data_redacted;
    record.tokens_used = access.tokens_used.clone();
    record.security_flags = access
        .security_flags
        .iter()
        .map(|flag| {
            let mut out = String::new();
            canonical_json(
                &serde_json::to_value(flag).unwrap_or(serde_json::Value::Null),
                &mut out,
            );
            out
        })
        .collect();
    record
}

/// The gate's verdict as recorded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// The step may run.
    Allow,
    /// The step needs a human's approval first.
    AskApproval,
    /// The step may not run.
    Deny,
}

/// The security flag recording a policy decision (serialized as canonical JSON with
/// `"flag":"policy_decision"`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct PolicyFlag {
    /// The verdict.
    pub decision: Verdict,
    /// The execution (step) the decision was for.
    pub execution: String,
    /// A stable code (`not_permitted`, `tool_denied`, `rate_limited`, ...).
    pub code: String,
    /// The reason shown to people.
    pub reason: String,
    /// The permission rule that decided, when one did.
    pub rule: Option<String>,
}

impl PolicyFlag {
    /// A flag.
    pub fn new(
        decision: Verdict,
        execution: impl Into<String>,
        code: impl Into<String>,
        reason: impl Into<String>,
        rule: Option<String>,
    ) -> PolicyFlag {
        PolicyFlag {
            decision,
            execution: execution.into(),
            code: code.into(),
            reason: reason.into(),
            rule,
        }
    }

    /// The flag as the security-flag string (canonical JSON).
    pub fn to_flag(&self) -> String {
        let mut value = serde_json::to_value(self).unwrap_or(serde_json::Value::Null);
        if let serde_json::Value::Object(map) = &mut value {
            map.insert("flag".into(), "policy_decision".into());
        }
        let mut out = String::new();
        canonical_json(&value, &mut out);
        out
    }

    /// The policy flag among a record's security flags, if it has one.
    pub fn find(record: &AuditRecord) -> Option<PolicyFlag> {
        record.security_flags.iter().find_map(|flag| {
            if !flag.starts_with('{') || !flag.contains("\"policy_decision\"") {
                return None;
            }
            let value: serde_json::Value = serde_json::from_str(flag).ok()?;
            if value.get("flag")?.as_str()? != "policy_decision" {
                return None;
            }
            serde_json::from_value(value).ok()
        })
    }
}

/// What happened to a plan (seed 000 part 6: creation, approval, refusal, failure).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum PlanEvent {
    /// The plan was made and stored (pending approval when it needs one).
    Created,
    /// A person approved it.
    Approved,
    /// A person refused it (or nobody approved it).
    Refused,
    /// It ran and did not complete.
    Failed,
}

impl PlanEvent {
    /// The snake_case name.
    pub fn as_str(self) -> &'static str {
        match self {
            PlanEvent::Created => "created",
            PlanEvent::Approved => "approved",
            PlanEvent::Refused => "refused",
            PlanEvent::Failed => "failed",
        }
    }
}

/// The `skill_id` of a plan's records: they are about a plan, not one skill.
pub const PLAN_RECORD_SKILL: &str = "plan";

/// The security flag of a plan's record (canonical JSON with `"flag":"plan_event"`): the
/// event, the plan, its risk level and who decided. The usage log leaves these records out.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct PlanFlag {
    /// What happened.
    pub event: PlanEvent,
    /// The plan store's id of the plan.
    pub plan_id: String,
    /// The plan's risk level (`low` to `critical`).
    pub risk: String,
    /// Who approved or refused it, when a person did.
    pub by: Option<String>,
}

impl PlanFlag {
    /// A flag.
    pub fn new(
        event: PlanEvent,
        plan_id: impl Into<String>,
        risk: impl Into<String>,
        by: Option<String>,
    ) -> PlanFlag {
        PlanFlag {
            event,
            plan_id: plan_id.into(),
            risk: risk.into(),
            by,
        }
    }

    /// The flag as the security-flag string (canonical JSON).
    pub fn to_flag(&self) -> String {
        let mut value = serde_json::to_value(self).unwrap_or(serde_json::Value::Null);
        if let serde_json::Value::Object(map) = &mut value {
            map.insert("flag".into(), "plan_event".into());
        }
        let mut out = String::new();
        canonical_json(&value, &mut out);
        out
    }

    /// The plan flag among a record's security flags, if it has one.
    pub fn find(record: &AuditRecord) -> Option<PlanFlag> {
        record.security_flags.iter().find_map(|flag| {
            if !flag.starts_with('{') || !flag.contains("\"plan_event\"") {
                return None;
            }
            let value: serde_json::Value = serde_json::from_str(flag).ok()?;
            if value.get("flag")?.as_str()? != "plan_event" {
                return None;
            }
            serde_json::from_value(value).ok()
        })
    }

    /// The record of this event for `user`'s plan: `skill_id` [`PLAN_RECORD_SKILL`],
    /// `skill_path` `plans/<id>`, the plan's lowest trust level, `task_id` the plan id,
    /// `trigger_reason` the task, `input_hash` the SHA-256 of the plan as shown to the
    /// approver, `success` false for refusal and failure (with `error` `plan_<event>: why`).
    pub fn record(
        &self,
        user: impl Into<UserId>,
        trust: &str,
        task: &str,
        plan_hash: &str,
        error: Option<&str>,
    ) -> AuditRecord {
        let failed = matches!(self.event, PlanEvent::Refused | PlanEvent::Failed);
        let mut record = AuditRecord::new(
            user,
            PLAN_RECORD_SKILL,
            format!("plans/{}", self.plan_id),
            trust,
            plan_hash,
            !failed,
        );
        record.task_id = Some(self.plan_id.clone());
        record.trigger_reason = Some(task.to_owned());
        if failed {
            record.error = Some(error_text(
                &format!("plan_{}", self.event.as_str()),
                error.unwrap_or(self.event.as_str()),
            ));
        }
        record.security_flags = vec![self.to_flag()];
        record
    }
}

/// The model tokens one execution used, kept in its record's `security_flags` as one
/// `{"flag":"model_usage","input_tokens":..,"output_tokens":..}` JSON object (canonical JSON,
/// hashed with the rest of the record). The orchestrator writes it on every execution record
/// whose attempt called a model; usage logs and metrics ignore it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[non_exhaustive]
pub struct UsageFlag {
    /// Tokens of the prompts, as the provider counted them.
    pub input_tokens: u64,
    /// Tokens of the answers.
    pub output_tokens: u64,
}

impl UsageFlag {
    /// The usage of one execution.
    pub fn new(input_tokens: u64, output_tokens: u64) -> Self {
        UsageFlag {
            input_tokens,
            output_tokens,
        }
    }

    /// The flag as the security-flag string (canonical JSON).
    pub fn to_flag(&self) -> String {
        let value = serde_json::json!({
            "flag": "model_usage",
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
        });
        let mut out = String::new();
        canonical_json(&value, &mut out);
        out
    }

    /// The usage flag among a record's security flags, if it has one.
    pub fn find(record: &AuditRecord) -> Option<UsageFlag> {
        record.security_flags.iter().find_map(|flag| {
            if !flag.starts_with('{') || !flag.contains("\"model_usage\"") {
                return None;
            }
            let value: serde_json::Value = serde_json::from_str(flag).ok()?;
            if value.get("flag")?.as_str()? != "model_usage" {
                return None;
            }
            serde_json::from_value(value).ok()
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_split_into_code_and_message() {
        assert_eq!(
            split_error(&error_text("timeout", "after 5s")),
            (Some("timeout"), "after 5s")
        );
        assert_eq!(split_error("Bad thing: x"), (None, "Bad thing: x"));
        assert_eq!(split_error("plain"), (None, "plain"));
    }

    #[test]
    fn policy_flags_round_trip() {
        let flag = PolicyFlag::new(
            Verdict::Deny,
            "e1",
            "rate_limited",
            "10 a day",
            Some("r".into()),
        );
        let text = flag.to_flag();
        assert_eq!(
            text,
            r#"{"code":"rate_limited","decision":"deny","execution":"e1","flag":"policy_decision","reason":"10 a day","rule":"r"}"#
        );
        let mut record = AuditRecord::new("u", "s", "p", "core", "h", false);
        record.security_flags = vec!["other".into(), text];
        assert_eq!(PolicyFlag::find(&record), Some(flag));
        record.security_flags = vec![r#"{"flag":"json_too_deep"}"#.into()];
        assert_eq!(PolicyFlag::find(&record), None);
    }

    #[test]
    fn usage_flags_round_trip_through_a_record() {
        let mut record = AuditRecord::new("u", "s", "p", "core", "h", true);
        assert_eq!(UsageFlag::find(&record), None);
        let flag = UsageFlag::new(120, 7);
        record.security_flags = vec!["other".into(), flag.to_flag()];
        assert_eq!(
            record.security_flags[1],
            r#"{"flag":"model_usage","input_tokens":120,"output_tokens":7}"#
        );
        assert_eq!(UsageFlag::find(&record), Some(flag));
        assert_eq!(PolicyFlag::find(&record), None);
    }
}
