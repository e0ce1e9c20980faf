//! `skills scan`: `skills-security`'s static scanner over every skill under each path (the
//! report of `examples/scan.rs`).

use std::path::{Path, PathBuf};

use serde::Serialize;
use skills_security::sandbox::ProcessSandbox;
use skills_security::scan::{
    Detonation, DetonationOptions, DetonationState, ScanFinding, ScanReport, Scanner, Verdict,
    find_skills,
};

use crate::cli::{FailOn, ScanArgs};
use crate::error::{Result, Status};
use crate::output::Output;

/// One JSON line per skill; fields in this order.
#[derive(Serialize)]
struct Line<'a> {
    path: String,
    verdict: Verdict,
    score: u32,
    findings: &'a [ScanFinding],
    #[serde(skip_serializing_if = "Option::is_none")]
    detonation: Option<&'a Detonation>,
}

fn detonation_line(d: &Detonation) -> String {
    let state = match &d.state {
        DetonationState::Complete => "complete".to_owned(),
        DetonationState::Partial => "partial".to_owned(),
        DetonationState::NoScripts => "no scripts".to_owned(),
        DetonationState::NotDetonated { reason } => format!("not detonated ({reason})"),
        other => format!("{other:?}"),
    };
    let tier = d.tier.map_or("none".to_owned(), |t| t.to_string());
    format!(
        "    detonation: {state}, tier {tier}, {} script run(s)\n",
        d.runs.len()
    )
}

fn human(path: &Path, report: &ScanReport) -> String {
    let mut out = format!(
        "{:<6} {:>3}  {}\n",
        report.verdict,
        report.score,
        path.display()
    );
    for f in &report.findings {
        let place = if f.line > 0 {
            format!("{}:{}", f.file, f.line)
        } else {
            f.file.clone()
        };
        out.push_str(&format!(
            "    {:<8} {:<18} {:<36} {place} ({}): {}",
            f.severity,
            f.category,
            f.rule,
            f.context.as_str(),
            f.message
        ));
        if !f.evidence.is_empty() {
            out.push_str(&format!("  [{}]", f.evidence));
        }
        out.push('\n');
    }
    out
}

/// Status 3 when any skill is blocked, 1 when one needs review under `--fail-on review`, 4
/// when a path holds no skill or cannot be read, else 0 (the worst applies).
pub fn run(args: &ScanArgs, out: Output) -> Result<Status> {
    let scanner = Scanner::new();
    let sandbox = ProcessSandbox::new();
    let options = DetonationOptions::default();
    // Each run waits on its own thread; a current-thread runtime only awaits it.
    let runtime = if args.detonate {
        Some(
            tokio::runtime::Builder::new_current_thread()
                .build()
                .map_err(|source| crate::error::CliError::Io {
                    action: "start the async runtime for",
                    path: "skills scan".into(),
                    source,
                })?,
        )
    } else {
        None
    };
    let mut status = Status::Ok;
    let mut found: Vec<PathBuf> = Vec::new();
    for root in &args.paths {
        let skills = find_skills(root);
        if skills.is_empty() {
            out.note(&format!("skills: no skill or file at {}", root.display()));
            status = status.max(Status::Io);
        }
        found.extend(skills);
    }
    let (mut blocked, mut review, mut clean) = (0usize, 0usize, 0usize);
    let bar = out.progress(found.len() as u64, "scanning");
    for path in &found {
        bar.inc(1);
        let detonated = runtime
            .as_ref()
            .filter(|_| path.is_dir())
            .map(|rt| rt.block_on(scanner.detonate(path, &sandbox, &options)));
        let (report, detonation) = match detonated {
            Some(Ok(d)) => (Ok(d.report), Some(d.detonation)),
            Some(Err(e)) => (Err(e), None),
            None => (scanner.scan_path(path), None),
        };
        let report = match report {
            Ok(report) => report,
            Err(e) => {
                bar.suspend(|| out.note(&format!("skills: {}: {e}", path.display())));
                status = status.max(Status::Io);
                continue;
            }
        };
        match report.verdict {
            Verdict::Block => {
                blocked += 1;
                status = status.max(Status::Denied);
            }
            Verdict::Review => {
                review += 1;
                if args.fail_on == FailOn::Review {
                    status = status.max(Status::Failed);
                }
            }
            _ => clean += 1,
        }
        out.json(&Line {
            path: path.display().to_string(),
            verdict: report.verdict,
            score: report.score,
            findings: &report.findings,
            detonation: detonation.as_ref(),
        });
        let mut text = human(path, &report);
        if let Some(d) = &detonation {
            text.push_str(&detonation_line(d));
        }
        bar.suspend(|| out.text(&text));
    }
    bar.finish_and_clear();
    out.text(&format!(
        "{} scanned: {blocked} blocked, {review} to review, {clean} clean\n",
        blocked + review + clean
    ));
    Ok(status)
}
