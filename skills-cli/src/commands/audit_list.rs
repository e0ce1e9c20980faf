//! `skills audit list`: every record of the tenant's trail, oldest first, as one line each
//! (one JSON object per line under `--json`, the keys always present and in one order).
//!
//! What a line says is read from the record's own hashed fields, never stored beside them:
//! a gate decision is a record with a `policy_decision` flag (`action` what it decided on:
//! the `action:<action>` flag of an access decision, `get`, `read`, `activate`, `load`,
//! else `gate` for a step; `outcome` its verdict, `rule` the permission rule that decided,
//! `code` its code); a plan's event has a `plan_event` flag; an installer's or operator's
//! record names itself in its trigger (`package:<operation>`, `operator:<action>`); a read
//! an earlier MCP server recorded has an `mcp:<method>` flag; anything else is a skill's
//! execution. A missing store is status 4, never an empty list.

use std::collections::HashMap;
use std::sync::Arc;

use serde::Serialize;
use skills_security::audit::{AuditFilter, AuditTrail, PlanFlag, PolicyFlag, Viewer, split_error};
use skills_store_traits::audit::{AuditEntry, AuditRecord};
use skills_store_traits::{SkillFilter, SkillStore};

use crate::cli::Global;
use crate::error::{CliError, Result, Status};
use crate::output::Output;
use crate::store;

/// One record; fields in this order, every one always present (`null` when the record does
/// not say).
#[derive(Serialize)]
struct Line<'a> {
    sequence: u64,
    /// Milliseconds since the Unix epoch, as the record's author stamped it.
    timestamp: i64,
    action: String,
    outcome: String,
    /// The skill's slug while it is stored (the record naming it by id or by name), else
    /// the record's skill path.
    skill: &'a str,
    skill_id: &'a str,
    actor: &'a str,
    agent: Option<&'a str>,
    rule: Option<String>,
    code: Option<String>,
    trust_level: &'a str,
    version: Option<&'a str>,
}

/// What the record was, what came of it, the rule and the code that decided.
struct Reading {
    action: String,
    outcome: String,
    rule: Option<String>,
    code: Option<String>,
}

/// A serde word (`ask_approval`) of a value that serializes as one.
fn word(value: impl Serialize) -> String {
    serde_json::to_value(value)
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_default()
}

fn has_flag(record: &AuditRecord, flag: &str) -> bool {
    record.security_flags.iter().any(|f| f == flag)
}

fn read(record: &AuditRecord) -> Reading {
    let (error_code, _) = match record.error.as_deref().map(split_error) {
        Some((code, message)) => (code.map(str::to_owned), Some(message)),
        None => (None, None),
    };
    let plain = |action: String| {
        let outcome = if !record.success {
            error_code.clone().unwrap_or_else(|| "failed".to_owned())
        } else if has_flag(record, "needs_approval") {
            "needs_approval".to_owned()
        } else if has_flag(record, "awaiting_approval") {
            "awaiting_approval".to_owned()
        } else if has_flag(record, "unchanged") {
            "unchanged".to_owned()
        } else {
            "ok".to_owned()
        };
        Reading {
            action,
            outcome,
            rule: None,
            code: error_code.clone(),
        }
    };
    if let Some(flag) = PolicyFlag::find(record) {
        let access = record
            .security_flags
            .iter()
            .find_map(|f| f.strip_prefix("action:"));
        return Reading {
            action: access.unwrap_or("gate").to_owned(),
            outcome: word(flag.decision),
            rule: flag.rule,
            code: Some(flag.code),
        };
    }
    if let Some(flag) = PlanFlag::find(record) {
        return Reading {
            action: "plan".to_owned(),
            outcome: flag.event.as_str().to_owned(),
            rule: None,
            code: error_code,
        };
    }
    let trigger = record.trigger_reason.as_deref().unwrap_or("");
    if let Some(action) = trigger
        .strip_prefix("package:")
        .or_else(|| trigger.strip_prefix("operator:"))
    {
        return plain(action.to_owned());
    }
    if let Some(read) = record.security_flags.iter().find(|f| f.starts_with("mcp:")) {
        return plain(read.clone());
    }
    plain("execute".to_owned())
}

/// `YYYY-MM-DDTHH:MM:SSZ` (UTC) of a millisecond timestamp, for people.
fn utc(ms: i64) -> String {
    let secs = ms.div_euclid(1000);
    let (days, rest) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    // Howard Hinnant's civil-from-days, in the proleptic Gregorian calendar.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        rest / 3600,
        rest % 3600 / 60,
        rest % 60
    )
}

fn line<'a>(entry: &'a AuditEntry, slugs: &'a HashMap<String, String>) -> Line<'a> {
    let r = &entry.record;
    let reading = read(r);
    Line {
        sequence: entry.sequence,
        timestamp: r.timestamp,
        action: reading.action,
        outcome: reading.outcome,
        skill: slugs.get(&r.skill_id).map_or(&r.skill_path, |s| s),
        skill_id: &r.skill_id,
        actor: r.user_id.as_str(),
        agent: r.agent_id.as_deref(),
        rule: reading.rule,
        code: reading.code,
        trust_level: &r.skill_trust_level,
        version: r.skill_version.as_deref(),
    }
}

/// Prints the trail of the tenant.
pub async fn list(global: &Global, out: Output) -> Result<Status> {
    let tenant = store::tenant(global)?;
    let path = store::store_path(global);
    // No store is not an empty trail: say so, as `audit verify` does.
    let Some(db) = store::open_existing(&path).await? else {
        return Err(CliError::NoStore(path));
    };
    // A record names its skill by the store's id (the installer's, the operator's) or by
    // the skill's name (the gate's access decisions): both lead to the slug.
    let slugs: HashMap<String, String> = db
        .list_skills(&tenant, &SkillFilter::default())
        .await?
        .into_iter()
        .flat_map(|s| [(s.id, s.slug.clone()), (s.slug.clone(), s.slug)])
        .collect();
    let trail = AuditTrail::new(Arc::new(db));
    let entries = trail
        .query(&tenant, &Viewer::Auditor, &AuditFilter::new())
        .await?;
    let mut text = String::new();
    for entry in &entries {
        let line = line(entry, &slugs);
        out.json(&line);
        let mut row = format!(
            "{:>6}  {}  {:<16} {:<20} {:<24} {}",
            line.sequence,
            utc(line.timestamp),
            line.actor,
            line.action,
            line.skill,
            line.outcome
        );
        if let Some(agent) = line.agent {
            row.push_str(&format!(" agent={agent}"));
        }
        if let Some(rule) = &line.rule {
            row.push_str(&format!(" rule={rule}"));
        }
        text.push_str(row.trim_end());
        text.push('\n');
    }
    if entries.is_empty() {
        text.push_str(&format!(
            "no audit records for tenant `{}`\n",
            tenant.as_str()
        ));
    }
    out.text(&text);
    Ok(Status::Ok)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utc_formats_known_instants() {
        assert_eq!(utc(0), "1970-01-01T00:00:00Z");
        assert_eq!(utc(951_782_400_000), "2000-02-29T00:00:00Z");
        assert_eq!(utc(1_700_000_000_123), "2023-11-14T22:13:20Z");
        assert_eq!(utc(-1), "1969-12-31T23:59:59Z");
    }

    #[test]
    fn records_read_as_their_flags_and_triggers_say() {
        let base = || AuditRecord::new("ops", "s1", "p/s1", "community", "h", true);
        let mut gate = base();
        gate.security_flags = vec![
            PolicyFlag::new(
                skills_security::audit::Verdict::Deny,
                "exec-1",
                "tool_denied",
                "no",
                Some("rule-7".into()),
            )
            .to_flag(),
        ];
        let reading = read(&gate);
        assert_eq!(
            (reading.action.as_str(), reading.outcome.as_str()),
            ("gate", "deny")
        );
        assert_eq!(reading.rule.as_deref(), Some("rule-7"));
        assert_eq!(reading.code.as_deref(), Some("tool_denied"));
        // An access decision names what it decided on.
        gate.security_flags.push("action:read".into());
        assert_eq!(read(&gate).action, "read");

        let mut held = base();
        held.trigger_reason = Some("operator:disable".into());
        held.security_flags = vec!["unchanged".into()];
        let reading = read(&held);
        assert_eq!(
            (reading.action.as_str(), reading.outcome.as_str()),
            ("disable", "unchanged")
        );

        let mut install = base();
        install.trigger_reason = Some("package:install".into());
        install.security_flags = vec!["scan:review".into(), "needs_approval".into()];
        assert_eq!(read(&install).outcome, "needs_approval");

        let mut timed_out = base();
        timed_out.success = false;
        timed_out.error = Some("timeout: too slow".into());
        let reading = read(&timed_out);
        assert_eq!(
            (reading.action.as_str(), reading.outcome.as_str()),
            ("execute", "timeout")
        );

        let mut served = base();
        served.security_flags = vec!["mcp:resources/read".into()];
        assert_eq!(read(&served).action, "mcp:resources/read");
    }
}
