//! Validate skills: `cargo run --example validate -- [--profile spec|lenient] [--json] PATH...`
//!
//! Each PATH is a skill directory, a SKILL.md, or a root to scan. Every skill found gets one
//! result; a PATH where no skill is found at all still gets one result saying why.
//!
//! * `--profile` picks the rules: `spec` (the default: the Agent Skills standard, strictly)
//!   or `lenient` (what an agent loads).
//! * `--json` prints one JSON object per line:
//!   `{"path", "valid", "name", "description_len", "diagnostics": [{"code", "severity",
//!   "message", "line"}]}`; `valid` means no error-severity diagnostic.
//!
//! Exit status: 0 when every skill is valid, 1 when any is not, 2 on a usage error.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use serde::Serialize;
use skills::core::{Diagnostic, LoadOptions, Profile, SkillReport, load_path};

const USAGE: &str = "usage: validate [--profile spec|lenient] [--json] PATH...";

struct Args {
    profile: Profile,
    json: bool,
    paths: Vec<PathBuf>,
}

fn parse_args(args: impl Iterator<Item = String>) -> Result<Option<Args>, String> {
    let mut parsed = Args {
        profile: Profile::Spec,
        json: false,
        paths: Vec::new(),
    };
    let mut args = args.peekable();
    let mut only_paths = false;
    while let Some(arg) = args.next() {
        if only_paths {
            parsed.paths.push(arg.into());
            continue;
        }
        match arg.as_str() {
            "-h" | "--help" => return Ok(None),
            "--json" => parsed.json = true,
            "--profile" => {
                let value = args
                    .next()
                    .ok_or("--profile needs a value: spec or lenient")?;
                parsed.profile = value.parse()?;
            }
            "--" => only_paths = true,
            other => {
                if let Some(value) = other.strip_prefix("--profile=") {
                    parsed.profile = value.parse()?;
                } else if other.starts_with('-') && other.len() > 1 {
                    return Err(format!("unknown option `{other}`"));
                } else {
                    parsed.paths.push(other.into());
                }
            }
        }
    }
    if parsed.paths.is_empty() {
        return Err("no PATH given".to_owned());
    }
    Ok(Some(parsed))
}

/// One output line; fields in the documented order.
#[derive(Serialize)]
struct JsonLine<'a> {
    path: String,
    valid: bool,
    name: Option<&'a str>,
    description_len: Option<usize>,
    diagnostics: Vec<JsonDiagnostic<'a>>,
}

#[derive(Serialize)]
struct JsonDiagnostic<'a> {
    code: &'static str,
    severity: &'static str,
    message: &'a str,
    line: Option<usize>,
}

fn json_line(report: &SkillReport) -> String {
    let line = JsonLine {
        path: report.path.display().to_string(),
        valid: report.is_valid(),
        name: report.name.as_deref(),
        description_len: report.description_len(),
        diagnostics: report
            .diagnostics
            .iter()
            .map(|d: &Diagnostic| JsonDiagnostic {
                code: d.code(),
                severity: d.severity.as_str(),
                message: &d.message,
                line: d.line,
            })
            .collect(),
    };
    serde_json::to_string(&line).unwrap_or_default()
}

fn human(report: &SkillReport, out: &mut impl Write) -> std::io::Result<()> {
    let mark = if report.is_valid() { "ok  " } else { "FAIL" };
    match &report.name {
        Some(name) => writeln!(out, "{mark} {} ({name})", report.path.display())?,
        None => writeln!(out, "{mark} {}", report.path.display())?,
    }
    for d in &report.diagnostics {
        writeln!(out, "     {d}")?;
    }
    Ok(())
}

/// Runs the command; returns the exit status. Results go to `out`, notes to `err`.
fn run(args: impl Iterator<Item = String>, out: &mut impl Write, err: &mut impl Write) -> u8 {
    let args = match parse_args(args) {
        Ok(Some(args)) => args,
        Ok(None) => {
            let _ = writeln!(out, "{USAGE}");
            return 0;
        }
        Err(message) => {
            let _ = writeln!(err, "error: {message}\n{USAGE}");
            return 2;
        }
    };
    let options = LoadOptions::for_profile(args.profile);
    let mut all_valid = true;
    let (mut valid, mut total) = (0usize, 0usize);
    for path in &args.paths {
        let report = load_path(path, &options);
        for d in &report.diagnostics {
            let _ = writeln!(err, "note: {d}");
        }
        for skill in &report.reports {
            total += 1;
            if skill.is_valid() {
                valid += 1;
            } else {
                all_valid = false;
            }
            let written = if args.json {
                writeln!(out, "{}", json_line(skill))
            } else {
                human(skill, out)
            };
            if written.is_err() {
                // stdout closed (e.g. piped into `head`): stop quietly.
                return u8::from(!all_valid);
            }
        }
    }
    if !args.json {
        let _ = writeln!(
            out,
            "{valid} of {total} valid under the {} profile",
            args.profile.as_str()
        );
    }
    u8::from(!all_valid)
}

fn main() -> ExitCode {
    let stdout = std::io::stdout();
    let stderr = std::io::stderr();
    let code = run(
        std::env::args().skip(1),
        &mut stdout.lock(),
        &mut stderr.lock(),
    );
    ExitCode::from(code)
}

#[cfg(test)]
mod tests {
    use super::*;

    const EXAMPLES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/skills");
    /// Eight skills we wrote, shaped like published collections (one invalid under Spec).
    const COLLECTIONS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/collections");

    fn call(args: &[&str]) -> (u8, String, String) {
        let (mut out, mut err) = (Vec::new(), Vec::new());
        let code = run(args.iter().map(|a| (*a).to_owned()), &mut out, &mut err);
        (
            code,
            String::from_utf8(out).unwrap(),
            String::from_utf8(err).unwrap(),
        )
    }

    #[test]
    fn usage_errors_exit_2() {
        assert_eq!(call(&[]).0, 2);
        assert_eq!(call(&["--json"]).0, 2);
        assert_eq!(call(&["--profile"]).0, 2);
        assert_eq!(call(&["--profile", "strict", "x"]).0, 2);
        assert_eq!(call(&["--bogus", "x"]).0, 2);
        assert_eq!(call(&["--help"]).0, 0);
    }

    #[test]
    fn all_valid_exits_0_any_invalid_exits_1() {
        let web = format!("{EXAMPLES}/web-research");
        assert_eq!(call(&[&web]).0, 0);
        // Under Spec, the extension fields of changelog-writer are unknown keys.
        assert_eq!(call(&[EXAMPLES]).0, 1);
        assert_eq!(call(&["--profile", "lenient", EXAMPLES]).0, 0);
        assert_eq!(call(&["--profile=lenient", COLLECTIONS]).0, 0);
        assert_eq!(call(&[COLLECTIONS]).0, 1);
    }

    #[test]
    fn json_has_one_line_per_skill_with_the_documented_fields() {
        let long = format!("{COLLECTIONS}/acme-skills/api-reference/SKILL.md");
        let (code, out, _) = call(&["--json", &long, "/no/such/path"]);
        assert_eq!(code, 1);
        let lines: Vec<serde_json::Value> = out
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(lines.len(), 2);
        let keys: Vec<&str> = lines[0]
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        let mut expected = vec!["path", "valid", "name", "description_len", "diagnostics"];
        expected.sort_unstable();
        let mut keys_sorted = keys.clone();
        keys_sorted.sort_unstable();
        assert_eq!(keys_sorted, expected);
        assert_eq!(lines[0]["valid"], false);
        assert_eq!(lines[0]["name"], "api-reference");
        assert_eq!(lines[0]["description_len"], 1068);
        let error = lines[0]["diagnostics"]
            .as_array()
            .unwrap()
            .iter()
            .find(|d| d["severity"] == "error")
            .unwrap();
        assert_eq!(error["code"], "description-too-long");
        assert_eq!(error["line"], 3);
        assert!(error["message"].as_str().unwrap().contains("1068"));
        // A path with no skill still gets its line, saying why.
        assert_eq!(lines[1]["valid"], false);
        assert_eq!(lines[1]["name"], serde_json::Value::Null);
        assert_eq!(lines[1]["diagnostics"][0]["code"], "path-not-found");
    }

    #[test]
    fn a_root_without_skills_gets_one_line() {
        let empty = tempfile::tempdir().unwrap();
        let (code, out, _) = call(&["--json", empty.path().to_str().unwrap()]);
        assert_eq!(code, 1);
        assert_eq!(out.lines().count(), 1);
        assert!(out.contains("no-skill-found"));
    }

    /// Lines and valid lines of `--json` over `root`.
    fn json_counts(root: &str) -> (usize, usize) {
        let (_, out, _) = call(&["--json", root]);
        let valid = out.lines().filter(|l| l.contains("\"valid\":true")).count();
        (out.lines().count(), valid)
    }

    #[test]
    fn a_whole_folder_of_collections_in_json() {
        assert_eq!(json_counts(COLLECTIONS), (8, 7));
        // The published corpus (`SKILLS_CORPUS_DIR`): 36 skills, 35 valid under Spec.
        if let Some(corpus) = skills_testenv::corpus() {
            let real = corpus.real_skills();
            assert_eq!(json_counts(real.to_str().unwrap()), (36, 35));
            assert_eq!(call(&["--profile=lenient", real.to_str().unwrap()]).0, 0);
        }
    }
}
