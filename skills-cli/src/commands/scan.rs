//! `skills scan`: `skills-security`'s static scanner over every skill under each path (the
//! report of `examples/scan.rs`).

use std::path::PathBuf;

use skills_security::sandbox::ProcessSandbox;
use skills_security::scan::{
    DetonationOptions, ReportLine, Scanner, Verdict, find_skills, render_text,
};

use crate::cli::{FailOn, ScanArgs};
use crate::error::{Result, Status};
use crate::output::Output;

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
        out.json(&ReportLine::new(path, &report, detonation.as_ref()));
        let text = render_text(path, &report, detonation.as_ref());
        bar.suspend(|| out.text(&text));
    }
    bar.finish_and_clear();
    out.text(&format!(
        "{} scanned: {blocked} blocked, {review} to review, {clean} clean\n",
        blocked + review + clean
    ));
    Ok(status)
}
