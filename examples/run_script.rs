//! Runs one script of a skill through approval and the process sandbox, and prints the
//! outcome as one JSON object.
//!
//! ```text
//! cargo run --example run_script -- --skill DIR --script REL [--trust core|verified|user|community]
//!     [--approve yes_once|yes_in_session|no] [--timeout SECS] [--input FILE]... [-- ARGS...]
//! ```
//!
//! Only a script the skill's `SKILL.md` references runs (seed 004); the approval answer is
//! given on the command line (the default is `no`, the safe non-interactive answer); the
//! sandbox configuration is seed 000's for the trust level (default `community`), with the
//! wall-clock limit replaced by `--timeout`. Each `--input FILE` is staged read-only at
//! `inputs/<file name>` in the script's working directory. The JSON has the status, the exit code or
//! signal, the limit hit, the isolation tier, the script's SHA-256, stdout and stderr as
//! neutralised text with their truncated flags, and the duration. Exit 0 when the script
//! ran and succeeded, 1 otherwise, 2 for usage errors.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use serde_json::{Value, json};
use skills::core::{LoadOptions, load_skill_dir};
use skills::security::sandbox::InputFile;
use skills::security::{
    ApprovalOption, Approvals, NonInteractive, Outcome, ProcessSandbox, SandboxConfig, ScriptInput,
    ScriptReport, ScriptRunner, SessionScope, Status, TrustLevel,
};

const USAGE: &str = "usage: run_script --skill DIR --script REL [--trust core|verified|user|community] [--approve yes_once|yes_in_session|no] [--timeout SECS] [--input FILE]... [-- ARGS...]";

struct Args {
    skill: PathBuf,
    script: String,
    trust: TrustLevel,
    approve: ApprovalOption,
    timeout: Option<Duration>,
    inputs: Vec<PathBuf>,
    args: Vec<String>,
}

fn parse(args: Vec<String>) -> Option<Args> {
    let mut skill = None;
    let mut script = None;
    let mut trust = TrustLevel::Community;
    let mut approve = ApprovalOption::No;
    let mut timeout = None;
    let mut inputs = Vec::new();
    let mut rest = Vec::new();
    let mut iter = args.into_iter();
    while let Some(arg) = iter.next() {
        match arg.as_str() {
            "--skill" => skill = Some(PathBuf::from(iter.next()?)),
            "--script" => script = Some(iter.next()?),
            "--trust" => {
                trust = match iter.next()?.as_str() {
                    "core" => TrustLevel::Core,
                    "verified" => TrustLevel::Verified,
                    "user" => TrustLevel::User,
                    "community" => TrustLevel::Community,
                    _ => return None,
                }
            }
            "--approve" => approve = ApprovalOption::parse(&iter.next()?)?,
            "--timeout" => {
                let secs: f64 = iter.next()?.parse().ok()?;
                if !(secs.is_finite() && secs > 0.0 && secs <= 3600.0) {
                    return None;
                }
                timeout = Some(Duration::from_secs_f64(secs));
            }
            "--input" => inputs.push(PathBuf::from(iter.next()?)),
            "--" => {
                rest.extend(iter.by_ref());
            }
            _ => return None,
        }
    }
    Some(Args {
        skill: skill?,
        script: script?,
        trust,
        approve,
        timeout,
        inputs,
        args: rest,
    })
}

fn main() -> ExitCode {
    let stdout = std::io::stdout();
    let stderr = std::io::stderr();
    ExitCode::from(run(
        std::env::args().skip(1).collect(),
        &mut stdout.lock(),
        &mut stderr.lock(),
    ))
}

fn run(args: Vec<String>, out: &mut impl Write, err: &mut impl Write) -> u8 {
    let Some(args) = parse(args) else {
        let _ = writeln!(err, "{USAGE}");
        return 2;
    };
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            let _ = writeln!(err, "cannot start a runtime: {e}");
            return 1;
        }
    };
    let value = runtime.block_on(execute(&args));
    let ok = value["status"] == "success";
    let _ = writeln!(out, "{value}");
    if ok { 0 } else { 1 }
}

async fn execute(args: &Args) -> Value {
    let report = load_skill_dir(&args.skill, &LoadOptions::default());
    let Some(skill) = report.skill else {
        let problems: Vec<String> = report.diagnostics.iter().map(|d| d.to_string()).collect();
        return json!({"status": "invalid_skill", "problems": problems});
    };
    let Some(skill_md) = skill.skill_md() else {
        return json!({"status": "invalid_skill", "problems": ["the skill has no SKILL.md"]});
    };
    let instructions = skill_md.to_markdown();
    let files: Vec<String> = skill.files().iter().map(|f| f.path.clone()).collect();
    let sandbox = ProcessSandbox::new();
    let approvals = Approvals::new(std::sync::Arc::new(NonInteractive(args.approve)));
    let config = match args.timeout {
        // with_timeout also keeps the CPU limit within the new wall-clock limit.
        Some(timeout) => SandboxConfig::for_trust(args.trust).with_timeout(timeout),
        None => SandboxConfig::for_trust(args.trust),
    };
    let mut input = ScriptInput::new().args(args.args.iter().cloned());
    for path in &args.inputs {
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        match std::fs::read(path) {
            Ok(bytes) => input = input.file(InputFile::new(name, bytes)),
            Err(e) => {
                return json!({"status": "invalid_input", "problems": [format!("{}: {e}", path.display())]});
            }
        }
    }
    let scratch = std::env::temp_dir();
    let runner = ScriptRunner::new(
        &sandbox,
        &approvals,
        SessionScope::new("run_script", "cli"),
        args.trust,
        scratch,
    )
    .config(config);
    match runner
        .run_referenced(
            skill.name(),
            skill.dir(),
            &instructions,
            &files,
            &args.script,
            &input,
        )
        .await
    {
        Ok(report) => describe(&report),
        Err(rendered) => json!({"status": "unreferenced_script", "detail": rendered}),
    }
}

/// One flat JSON object for a person or a pipeline.
fn describe(report: &ScriptReport) -> Value {
    let mut value = json!({
        "script": report.script,
        "sha256": report.sha256,
        "decision": report.decision.map(|d| d.as_str()),
    });
    if let Some(refused) = &report.refused {
        value["status"] = json!("refused");
        value["detail"] = json!(refused.to_string());
        return value;
    }
    let Some(outcome) = &report.outcome else {
        value["status"] = json!("not_run");
        return value;
    };
    merge_outcome(&mut value, outcome);
    value
}

fn merge_outcome(value: &mut Value, outcome: &Outcome) {
    let (status, limit, detail) = match &outcome.status {
        Status::Success => ("success", None, None),
        Status::Exit { .. } => ("exit", None, None),
        Status::Signal { .. } => ("signal", None, None),
        Status::Timeout => ("limit", Some("timeout"), None),
        Status::CpuLimit => ("limit", Some("cpu"), None),
        Status::MemoryLimit => ("limit", Some("memory"), None),
        Status::FileSizeLimit => ("limit", Some("file_size"), None),
        Status::DiskLimit => ("limit", Some("disk"), None),
        Status::OutputLimit => ("limit", Some("output"), None),
        Status::Refused { reason } => ("refused", None, Some(reason.clone())),
        Status::SandboxUnavailable { reason } => {
            ("sandbox_unavailable", None, Some(reason.clone()))
        }
        Status::LaunchError { reason } => ("launch_error", None, Some(reason.clone())),
    };
    value["status"] = json!(status);
    value["limit"] = json!(limit);
    value["detail"] = json!(detail);
    value["exit_code"] = json!(outcome.exit_code);
    value["signal"] = json!(outcome.signal);
    value["tier"] = json!(outcome.tier.map(|t| t.as_str()));
    value["enforcement"] = json!(outcome.enforcement);
    value["usage"] = json!(outcome.usage);
    if outcome.sha256.is_some() {
        value["sha256"] = json!(outcome.sha256);
    }
    value["stdout"] = json!(outcome.stdout.text);
    value["stdout_truncated"] = json!(outcome.stdout.truncated);
    value["stderr"] = json!(outcome.stderr.text);
    value["stderr_truncated"] = json!(outcome.stderr.truncated);
    value["duration_ms"] = json!(outcome.duration.as_secs_f64() * 1000.0);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(args: &[&str]) -> (u8, Value) {
        let (mut out, mut err) = (Vec::new(), Vec::new());
        let code = run(
            args.iter().map(|a| (*a).to_owned()).collect(),
            &mut out,
            &mut err,
        );
        let text = String::from_utf8(out).unwrap();
        (
            code,
            serde_json::from_str(text.trim()).unwrap_or(Value::Null),
        )
    }

    #[test]
    fn usage_errors_exit_2() {
        assert_eq!(call(&[]).0, 2);
        assert_eq!(call(&["--skill", "x"]).0, 2);
        assert_eq!(
            call(&["--skill", "x", "--script", "y", "--trust", "root"]).0,
            2
        );
        assert_eq!(
            call(&["--skill", "x", "--script", "y", "--timeout", "-1"]).0,
            2
        );
    }

    #[test]
    fn no_approval_means_no_run_and_unreferenced_scripts_never_run() {
        let dir = tempfile::tempdir().unwrap();
        let skill = dir.path().join("hello");
        std::fs::create_dir_all(skill.join("scripts")).unwrap();
        std::fs::write(
            skill.join("SKILL.md"),
            "---\nname: hello\ndescription: Says hello.\n---\nRun scripts/hi.sh.\n",
        )
        .unwrap();
        std::fs::write(skill.join("scripts/hi.sh"), "echo hi\n").unwrap();
        std::fs::write(skill.join("scripts/other.sh"), "echo other\n").unwrap();
        let dir_arg = skill.to_str().unwrap();
        let (code, value) = call(&["--skill", dir_arg, "--script", "scripts/hi.sh"]);
        assert_eq!(code, 1);
        assert_eq!(value["decision"], "declined", "{value}");
        assert_eq!(value["status"], "not_run", "{value}");
        assert!(
            value["sha256"].as_str().is_some_and(|s| s.len() == 64),
            "{value}"
        );
        let (code, value) = call(&[
            "--skill",
            dir_arg,
            "--script",
            "scripts/other.sh",
            "--approve",
            "yes_once",
        ]);
        assert_eq!(code, 1);
        assert_eq!(value["status"], "unreferenced_script", "{value}");
        let (code, value) = call(&[
            "--skill",
            dir_arg,
            "--script",
            "scripts/hi.sh",
            "--approve",
            "yes_once",
            "--timeout",
            "10",
        ]);
        match value["status"].as_str() {
            Some("success") => {
                assert_eq!(code, 0);
                assert_eq!(value["stdout"], "hi\n", "{value}");
                assert!(value["tier"].is_string(), "{value}");
            }
            // Isolation unavailable on this machine: it must say so, never run unconfined.
            Some("sandbox_unavailable") => assert_eq!(code, 1),
            other => panic!("unexpected {other:?}: {value}"),
        }
    }
}
