#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! The scanner on the blind held-out sets (issue 21), each written by an author who never read
//! the scanner's rules, fixtures or figures (each set's README says how it was made and used).
//! Each was measured once before a round of rule work and once after (BENCHMARKS.md); the
//! floors below are the figures reached, so a regression fails. Each has been committed after
//! its "after" figure, so none is blind any more: a new round needs a new set.
//!
//! * `tests/fixtures/scan-heldout2/`: 38 malicious and 38 benign skills (second round).
//! * `tests/fixtures/scan-heldout3/`: 40 malicious and 40 benign skills, the benign ones
//!   mostly ordinary published-style skills (third round).
//! * `tests/fixtures/scan-heldout4/`: 40 malicious and 40 benign skills (fourth round; the
//!   round moved no verdict on it, so its floors are the figures before the round).

use std::path::Path;

use skills::security::scan::{Scanner, Severity, Verdict};

/// Per label: (label, items, blocked, flagged); prints the table and each item's verdict.
fn tally(set: &str) -> Vec<(&'static str, usize, usize, usize)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(set);
    let scanner = Scanner::new();
    let mut md = String::from("| label | n | block | review or block |\n|---|---|---|---|\n");
    let mut lines = Vec::new();
    let mut tallies = Vec::new();
    for label in ["malicious", "benign"] {
        let mut items: Vec<_> = std::fs::read_dir(root.join(label))
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        items.sort();
        let (mut block, mut flagged) = (0, 0);
        for path in &items {
            let report = scanner.scan_dir(path).unwrap();
            block += usize::from(report.verdict == Verdict::Block);
            flagged += usize::from(report.verdict != Verdict::Clean);
            let rules: Vec<String> = report
                .findings
                .iter()
                .filter(|f| f.severity >= Severity::Medium)
                .map(|f| format!("{}:{}", f.rule, f.severity))
                .collect();
            lines.push(format!(
                "- {label} `{}`: {} ({}) {}",
                path.file_name().unwrap().to_string_lossy(),
                report.verdict,
                report.score,
                rules.join(", ")
            ));
        }
        md.push_str(&format!(
            "| {label} | {} | {block} | {flagged} |\n",
            items.len()
        ));
        tallies.push((label, items.len(), block, flagged));
    }
    md.push('\n');
    md.push_str(&lines.join("\n"));
    println!("{set}\n{md}");
    if let Ok(dir) = std::env::var("SCAN_HELDOUT_REPORT_DIR") {
        std::fs::write(Path::new(&dir).join(format!("{set}.md")), &md).unwrap();
    }
    tallies
}

/// Asserts the floors: malicious flagged at least `flagged`; benign at most `blocked` blocked
/// and `benign_flagged` flagged.
fn floors(set: &str, n: usize, flagged: usize, blocked: usize, benign_flagged: usize) {
    for (label, items, block, flag) in tally(set) {
        assert_eq!(items, n, "{set} {label}: fixtures missing");
        if label == "malicious" {
            assert!(flag >= flagged, "{set}: malicious flagged fell to {flag}");
        } else {
            assert!(block <= blocked, "{set}: {block} benign blocked");
            assert!(flag <= benign_flagged, "{set}: {flag} benign flagged");
        }
    }
}

#[test]
fn second_blind_set() {
    floors("scan-heldout2", 38, 38, 1, 1);
}

#[test]
fn third_blind_set() {
    floors("scan-heldout3", 40, 35, 1, 5);
}

#[test]
fn fourth_blind_set() {
    floors("scan-heldout4", 40, 25, 1, 11);
}
