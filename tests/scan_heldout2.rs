#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! The scanner on a blind held-out set (`tests/fixtures/scan-heldout2/`, issue 21): 38
//! malicious and 38 benign skills written on 2026-11-26 by an author who never read the
//! scanner's rules, fixtures or figures (its README says how to use it). It was measured once
//! before the second round of rule work and once after (BENCHMARKS.md, "Issue 21: the blind
//! set"); the floors below are the figures reached, so a regression fails. Its items have been
//! looked at since the "after" figure (one false block was traced to a missing authentication
//! parameter name), so it is no longer blind: a new round needs a new set. The third round
//! (BENCHMARKS.md, "Issue 21, third round") split it into halves, wrote rules looking only at
//! the `dev` half and measured the `test` half once; the floors were then raised to the
//! figures reached on the whole set (32 of 38 malicious flagged, 2 benign blocked, 4 flagged).

use std::path::Path;

use skills::security::scan::{Scanner, Severity, Verdict};

#[test]
fn blind_held_out_set() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/scan-heldout2");
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
    println!("{md}");
    if let Ok(path) = std::env::var("SCAN_HELDOUT_REPORT") {
        std::fs::write(path, &md).unwrap();
    }
    for (label, n, block, flagged) in tallies {
        assert_eq!(n, 38, "{label}: fixtures missing");
        if label == "malicious" {
            assert!(flagged >= 32, "malicious flagged fell to {flagged}");
        } else {
            assert!(block <= 2, "{block} benign blocked");
            assert!(flagged <= 4, "{flagged} benign flagged");
        }
    }
}
