//! `skills run`: one script a skill references, through approval and the process sandbox
//! (`skills-security`'s `ScriptRunner::run_referenced`).
//!
//! Threat: running a script its skill never mentions, a script nobody approved, or an
//! installed skill that is disabled; a stored skill's files altered on disk. Guarantee:
//! only a script the skill's `SKILL.md` references runs, only after an approval (the
//! terminal prompt, or `--approve-all-scripts`; without a terminal the answer is no), only
//! inside the sandbox configured for the skill's trust level (an installed skill's stored
//! level; `--trust`, default `community`, for a directory); a disabled skill does not run;
//! an installed skill runs from a fresh copy written from the store. Every run is decided by
//! the policy gate over the store (`PolicyGate::authorize`, action `load`: the store's
//! permission rules and caps, the skill's enabled flag as stored now) and recorded on the
//! store's chain before the script is looked at; its true outcome (success, failure with
//! its status) is recorded after it (`PolicyGate::complete`). A denial runs nothing; a
//! record that cannot be written refuses.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use skills_catalog::Materializer;
use skills_core::{LoadOptions, load_skill_dir};
use skills_security::audit::sha256_hex;
use skills_security::autonomy::{Outcome as RunOutcome, RiskLevel};
use skills_security::gate::{
    Access, AccessRequest, DenyCode, PolicyGate, SkillAction, SkillInfo, SkillState,
};
use skills_security::permissions::Principal;
use skills_security::sandbox::Status as SandboxStatus;
use skills_security::{
    Approvals, Outcome, ProcessSandbox, SandboxConfig, ScriptInput, ScriptReport, ScriptRunner,
    SessionScope, TrustLevel,
};
use skills_store_sqlite::SqliteStore;
use skills_store_traits::SkillStore;
use skills_store_traits::audit::AuditRecord;

use crate::approval;
use crate::cli::{Global, RunArgs, TrustArg};
use crate::error::{CliError, Result, Status};
use crate::output::Output;
use crate::store;

/// A directory removed when dropped (the copy of an installed skill).
struct TempDir(PathBuf);

impl TempDir {
    fn new() -> Result<TempDir> {
        use std::os::unix::fs::DirBuilderExt;
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        let path =
            std::env::temp_dir().join(format!("skills-run-{}-{nanos:x}", std::process::id()));
        // Readable by the sandbox's unprivileged uid (root hosts drop to a fresh one);
        // `create` fails rather than reuse an existing path.
        std::fs::DirBuilder::new()
            .mode(0o755)
            .create(&path)
            .map_err(|source| CliError::Io {
                action: "create a directory for the skill",
                path: path.clone(),
                source,
            })?;
        Ok(TempDir(path))
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn trust_of(arg: TrustArg) -> TrustLevel {
    match arg {
        TrustArg::Core => TrustLevel::Core,
        TrustArg::Verified => TrustLevel::Verified,
        TrustArg::User => TrustLevel::User,
        TrustArg::Community => TrustLevel::Community,
    }
}

/// Whether the `SKILL` argument names a directory: `.`, `..`, or anything with a slash.
///
/// Threat: a folder planted in the working directory under an installed skill's name
/// (`./pdf-tools`), which would run in its place if a bare name were tried as a path
/// first. Guarantee: a bare name only ever means the installed skill.
fn names_a_path(skill: &str) -> bool {
    skill == "." || skill == ".." || skill.contains('/')
}

/// Where the skill is, the trust it runs at, the store that decides and records, and for an
/// installed skill its stored record (the state the gate sees).
struct Located {
    dir: PathBuf,
    trust: TrustLevel,
    store: SqliteStore,
    record: Option<skills_store_traits::SkillRecord>,
}

/// The skill's directory and trust level: a directory given as a path (recorded on the
/// store's chain, which is created when missing), or an installed skill written out from
/// the store.
async fn locate(args: &RunArgs, global: &Global, copy: &mut Option<TempDir>) -> Result<Located> {
    let tenant = store::tenant(global)?;
    let path = store::store_path(global);
    if names_a_path(&args.skill) {
        let as_path = Path::new(&args.skill);
        if !as_path.is_dir() {
            return Err(CliError::Skill(format!(
                "`{}` is not a skill directory",
                args.skill
            )));
        }
        return Ok(Located {
            dir: as_path.to_path_buf(),
            trust: trust_of(args.trust),
            store: store::open(&path).await?,
            record: None,
        });
    }
    let Some(store) = store::open_existing(&path).await? else {
        return Err(CliError::Skill(format!(
            "`{}` is not installed (no store at {}); a directory is given as a path, `./{}`",
            args.skill,
            path.display(),
            args.skill
        )));
    };
    let Some(record) = store.find_skill_by_slug(&tenant, &args.skill).await? else {
        return Err(CliError::Skill(format!(
            "`{}` is not an installed skill; a directory is given as a path, `./{}`",
            args.skill, args.skill
        )));
    };
    if !record.enabled {
        // Refused by the gate below, on the record: nothing is written out.
        return Ok(Located {
            dir: PathBuf::new(),
            trust: TrustLevel::of_skill(record.trust_level.as_deref()),
            store,
            record: Some(record),
        });
    }
    let dir = TempDir::new()?;
    let materialized = Materializer::new(dir.0.join("skills"))
        .materialize(&store, &tenant, &record.id)
        .await?;
    *copy = Some(dir);
    Ok(Located {
        dir: materialized.path,
        trust: TrustLevel::of_skill(record.trust_level.as_deref()),
        store,
        record: Some(record),
    })
}

/// The gate's decision on running `script` of the located skill; `Err` with the JSON
/// answer and status when it is refused (a disabled skill is `CliError::Disabled`).
async fn decide(
    gate: &PolicyGate,
    principal: &Principal,
    located: &Located,
    skill: Option<&skills_core::Skill>,
    script: &str,
) -> Result<std::result::Result<(), (Status, Value)>> {
    let (id, path, digest, enabled) = match (&located.record, skill) {
        (Some(record), _) => (
            record.slug.clone(),
            record
                .source_ref
                .clone()
                .unwrap_or_else(|| record.slug.clone()),
            format!("sha256:{}", record.checksum),
            record.enabled,
        ),
        (None, Some(skill)) => (
            skill.name().to_owned(),
            located.dir.display().to_string(),
            skill.digest().to_owned(),
            true,
        ),
        (None, None) => return Err(CliError::Skill("no skill to run".into())),
    };
    let catalogued = skill.is_some_and(|skill| {
        let relative = script.strip_prefix("./").unwrap_or(script);
        skill.files().iter().any(|f| f.path == relative)
    });
    let info = SkillInfo::new(id.as_str(), path, located.trust, RiskLevel::Medium);
    let request = AccessRequest::new(principal.clone(), SkillAction::Load, &id, script)
        .state(SkillState::new(info, digest).enabled(enabled))
        .catalogued(catalogued)
        .client(format!("cli:{}", std::process::id()));
    match gate.authorize(&request).await.map_err(audit_failed)? {
        Access::Granted(_) => Ok(Ok(())),
        Access::Denied {
            code: DenyCode::Disabled,
            ..
        } => Err(CliError::Disabled(id)),
        Access::Denied {
            code, reason, rule, ..
        } => Ok(Err((
            Status::Denied,
            json!({"status": "denied", "code": code.as_str(), "detail": reason, "rule": rule,
                   "trust_level": located.trust.as_str(), "script": script}),
        ))),
    }
}

fn audit_failed(e: skills_security::gate::GateError) -> CliError {
    CliError::Skill(format!("refused: the decision could not be recorded: {e}"))
}

/// Records what the run did, as it happened: success only when the script succeeded.
async fn record_outcome(
    gate: &PolicyGate,
    principal: &Principal,
    located: &Located,
    skill: &skills_core::Skill,
    args: &RunArgs,
    value: &Value,
) -> Result<()> {
    let field = |k: &str| value.get(k).and_then(Value::as_str).unwrap_or_default();
    let succeeded = field("status") == "success";
    let mut record = AuditRecord::new(
        principal.user.clone(),
        skill.name(),
        located.dir.display().to_string(),
        located.trust.as_str(),
        sha256_hex(args.args.join("\u{0}").as_bytes()),
        succeeded,
    );
    record.skill_version = Some(skill.digest().to_owned());
    record.trigger_reason = Some(format!("run {}", args.script));
    record.output_hash = value
        .get("stdout")
        .and_then(Value::as_str)
        .map(|out| sha256_hex(out.as_bytes()));
    if !succeeded {
        record.error = Some(
            format!("{} {}", field("status"), field("detail"))
                .trim()
                .to_owned(),
        );
    }
    record.security_flags = vec![format!("cli:run:{}", field("status"))];
    let outcome = if succeeded {
        RunOutcome::Success
    } else {
        RunOutcome::Failure
    };
    gate.complete(principal, record, outcome)
        .await
        .map_err(audit_failed)?;
    Ok(())
}

/// Runs the script; see the module docs. Status 0 when it ran and succeeded, 1 when it ran
/// and failed (or hit a limit), 3 when it was not approved or not allowed, 4 when the
/// sandbox is unavailable here.
pub async fn run(args: &RunArgs, global: &Global, out: Output) -> Result<Status> {
    let mut copy = None;
    let located = locate(args, global, &mut copy).await?;
    let tenant = store::tenant(global)?;
    let (gate, principal) = store::gate(&Arc::new(located.store.clone()), &tenant, None).await?;
    if located.record.as_ref().is_some_and(|r| !r.enabled) {
        // Disabled: the gate refuses it and records why; nothing was written out.
        // `decide` answers a disabled skill with `CliError::Disabled`, after recording it.
        let _recorded = decide(&gate, &principal, &located, None, &args.script).await?;
        return Err(CliError::Disabled(args.skill.clone()));
    }
    let trust = located.trust;
    let dir = located.dir.clone();
    let report = load_skill_dir(&dir, &LoadOptions::default());
    let Some(skill) = report.skill else {
        let problems: Vec<String> = report.diagnostics.iter().map(|d| d.to_string()).collect();
        return Err(CliError::Skill(format!(
            "`{}` is not a valid skill: {}",
            args.skill,
            problems.join("; ")
        )));
    };
    let Some(skill_md) = skill.skill_md() else {
        return Err(CliError::Skill(format!("`{}` has no SKILL.md", args.skill)));
    };
    if let Err((status, value)) =
        decide(&gate, &principal, &located, Some(&skill), &args.script).await?
    {
        out.note(&summary(&value));
        out.json(&value);
        return Ok(status);
    }
    let instructions = skill_md.to_markdown();
    let files: Vec<String> = skill.files().iter().map(|f| f.path.clone()).collect();
    let sandbox = ProcessSandbox::new();
    let approvals = Approvals::new(approval::channel(args.approve_all_scripts))
        .timeout(Duration::from_secs(args.approval_timeout));
    let config = match args.timeout {
        Some(secs) => SandboxConfig::for_trust(trust).with_timeout(Duration::from_secs(secs)),
        None => SandboxConfig::for_trust(trust),
    };
    let input = ScriptInput::new().args(args.args.iter().cloned());
    let runner = ScriptRunner::new(
        &sandbox,
        &approvals,
        SessionScope::new(global.tenant.clone(), "skills-cli"),
        trust,
        std::env::temp_dir(),
    )
    .config(config);
    let result = runner
        .run_referenced(
            skill.name(),
            skill.dir(),
            &instructions,
            &files,
            &args.script,
            &input,
        )
        .await;
    drop(copy);
    let (status, value) = match result {
        Ok(report) => describe(&report, trust),
        Err(rendered) => (
            Status::Denied,
            json!({"status": "unreferenced_script", "detail": rendered, "trust_level": trust.as_str()}),
        ),
    };
    record_outcome(&gate, &principal, &located, &skill, args, &value).await?;
    if let Some(outcome) = value.get("stdout").and_then(Value::as_str) {
        out.text(outcome);
    }
    if let Some(stderr) = value.get("stderr").and_then(Value::as_str)
        && !stderr.is_empty()
    {
        out.note(stderr.trim_end());
    }
    out.note(&summary(&value));
    out.json(&value);
    Ok(status)
}

/// One line for a person on standard error.
fn summary(value: &Value) -> String {
    let field = |k: &str| value.get(k).and_then(Value::as_str).unwrap_or("");
    let mut line = format!("skills: {}", field("status"));
    for key in ["decision", "limit", "detail"] {
        if !field(key).is_empty() {
            line.push_str(&format!(", {key} {}", field(key)));
        }
    }
    if let Some(code) = value.get("exit_code").and_then(Value::as_i64) {
        line.push_str(&format!(", exit code {code}"));
    }
    line
}

/// The exit status and one flat JSON object (keys sorted) for a run.
fn describe(report: &ScriptReport, trust: TrustLevel) -> (Status, Value) {
    let mut value = json!({
        "script": report.script,
        "sha256": report.sha256,
        "decision": report.decision.map(|d| d.as_str()),
        "trust_level": trust.as_str(),
    });
    if let Some(refused) = &report.refused {
        value["status"] = json!("refused");
        value["detail"] = json!(refused.to_string());
        return (Status::Denied, value);
    }
    let Some(outcome) = &report.outcome else {
        value["status"] = json!("not_run");
        return (Status::Denied, value);
    };
    let status = merge_outcome(&mut value, outcome);
    (status, value)
}

fn merge_outcome(value: &mut Value, outcome: &Outcome) -> Status {
    let (name, limit, detail, status) = match &outcome.status {
        SandboxStatus::Success => ("success", None, None, Status::Ok),
        SandboxStatus::Exit { .. } => ("exit", None, None, Status::Failed),
        SandboxStatus::Signal { .. } => ("signal", None, None, Status::Failed),
        SandboxStatus::Timeout => ("limit", Some("timeout"), None, Status::Failed),
        SandboxStatus::CpuLimit => ("limit", Some("cpu"), None, Status::Failed),
        SandboxStatus::MemoryLimit => ("limit", Some("memory"), None, Status::Failed),
        SandboxStatus::FileSizeLimit => ("limit", Some("file_size"), None, Status::Failed),
        SandboxStatus::DiskLimit => ("limit", Some("disk"), None, Status::Failed),
        SandboxStatus::OutputLimit => ("limit", Some("output"), None, Status::Failed),
        SandboxStatus::Refused { reason } => {
            ("refused", None, Some(reason.clone()), Status::Denied)
        }
        SandboxStatus::SandboxUnavailable { reason } => (
            "sandbox_unavailable",
            None,
            Some(reason.clone()),
            Status::Io,
        ),
        SandboxStatus::LaunchError { reason } => {
            ("launch_error", None, Some(reason.clone()), Status::Io)
        }
    };
    value["status"] = json!(name);
    value["limit"] = json!(limit);
    value["detail"] = json!(detail);
    value["exit_code"] = json!(outcome.exit_code);
    value["signal"] = json!(outcome.signal);
    value["tier"] = json!(outcome.tier.map(|t| t.as_str()));
    if outcome.sha256.is_some() {
        value["sha256"] = json!(outcome.sha256);
    }
    value["stdout"] = json!(outcome.stdout.text);
    value["stdout_truncated"] = json!(outcome.stdout.truncated);
    value["stderr"] = json!(outcome.stderr.text);
    value["stderr_truncated"] = json!(outcome.stderr.truncated);
    value["duration_ms"] = json!(outcome.duration.as_millis() as u64);
    status
}
