//! `skills validate`: the report of `examples/validate.rs`, on `skills-core`'s `load_path`.

use serde::Serialize;
use skills_core::{Diagnostic, LoadOptions, Profile, SkillReport, load_path};

use crate::cli::{ProfileArg, ValidateArgs};
use crate::error::{Result, Status};
use crate::output::Output;

/// One JSON line per skill; fields in this order.
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

fn json_line(report: &SkillReport) -> JsonLine<'_> {
    JsonLine {
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
    }
}

fn human(report: &SkillReport) -> String {
    let mark = if report.is_valid() { "ok  " } else { "FAIL" };
    let mut text = match &report.name {
        Some(name) => format!("{mark} {} ({name})\n", report.path.display()),
        None => format!("{mark} {}\n", report.path.display()),
    };
    for d in &report.diagnostics {
        text.push_str(&format!("     {d}\n"));
    }
    text
}

/// Status 0 when every skill found is valid, 1 otherwise (a path with no skill counts as
/// one invalid result).
pub fn run(args: &ValidateArgs, out: Output) -> Result<Status> {
    let profile = match args.profile {
        ProfileArg::Spec => Profile::Spec,
        ProfileArg::Lenient => Profile::Lenient,
    };
    let options = LoadOptions::for_profile(profile);
    let (mut valid, mut total) = (0usize, 0usize);
    for path in &args.paths {
        let report = load_path(path, &options);
        for d in &report.diagnostics {
            out.note(&format!("note: {d}"));
        }
        for skill in &report.reports {
            total += 1;
            valid += usize::from(skill.is_valid());
            out.json(&json_line(skill));
            out.text(&human(skill));
        }
    }
    out.text(&format!(
        "{valid} of {total} valid under the {} profile\n",
        profile.as_str()
    ));
    Ok(if valid == total {
        Status::Ok
    } else {
        Status::Failed
    })
}
