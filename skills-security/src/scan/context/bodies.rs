//! Detection rule bodies (YARA, Sigma, Semgrep, Snort/Suricata), as files and as fenced
//! blocks of Markdown: their strings are patterns to detect, never commands to run.
//!
//! **Threat.** A rule set that detects stealers names what stealers read and where they send
//! it, and reads as a stealer. **Guarantee.** A text counts as a rule body by its structure
//! (YARA's `rule` with `condition:`, Sigma's `detection:` with `condition:` and `logsource:`,
//! Semgrep's `rules:` with `pattern` keys, every line a Snort action), never by a name or a
//! language tag alone, so calling a script a `.yar` or fencing it as `yara` lowers nothing.

use super::extension;

/// Whether the file at `path` is a rule body (its extension and its structure).
pub(super) fn is_rule_body(path: &str, text: &str) -> bool {
    let lines = || text.lines();
    match extension(path).as_deref() {
        Some("yar" | "yara") => yara(lines()),
        Some("rules") => snort(lines()),
        Some("yml" | "yaml") => semgrep(lines()) || sigma(lines()),
        _ => false,
    }
}

/// Whether the lines of a fenced block are a rule body, by structure alone.
pub(super) fn is_rule_block<'t>(lines: impl Iterator<Item = &'t str> + Clone) -> bool {
    yara(lines.clone())
        || semgrep(lines.clone())
        || sigma(lines.clone())
        || (lines.clone().any(|l| !l.trim().is_empty()) && snort(lines))
}

fn has_line<'t>(mut lines: impl Iterator<Item = &'t str>, prefix: &str) -> bool {
    lines.any(|l| l.trim_start().trim_start_matches("- ").starts_with(prefix))
}

fn yara<'t>(lines: impl Iterator<Item = &'t str> + Clone) -> bool {
    lines.clone().any(|l| {
        let l = l.trim_start();
        l.starts_with("rule ") || l.starts_with("private rule ") || l.starts_with("global rule ")
    }) && has_line(lines, "condition:")
}

fn semgrep<'t>(lines: impl Iterator<Item = &'t str> + Clone) -> bool {
    lines.clone().any(|l| l.trim_end() == "rules:")
        && (has_line(lines.clone(), "pattern")
            || has_line(lines.clone(), "pattern-regex:")
            || has_line(lines, "patterns:"))
}

fn sigma<'t>(lines: impl Iterator<Item = &'t str> + Clone) -> bool {
    has_line(lines.clone(), "detection:")
        && has_line(lines.clone(), "condition:")
        && has_line(lines, "logsource:")
}

fn snort<'t>(lines: impl Iterator<Item = &'t str>) -> bool {
    lines
        .filter(|l| !l.trim().is_empty() && !l.trim_start().starts_with('#'))
        .all(|l| {
            let l = l.trim_start();
            ["alert ", "drop ", "reject ", "pass ", "log "]
                .iter()
                .any(|a| l.starts_with(a))
        })
}
