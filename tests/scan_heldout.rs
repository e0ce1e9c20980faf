#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! The scanner on skills written for this repository (issue 21), not taken from any corpus:
//! `tests/fixtures/scan-heldout/{malicious,benign}/<name>/`, each a small skill package that
//! expresses one behaviour of the issue in its own words (lures, standing orders, ransomware
//! sequences, backdoor accounts, request loops, webhook exfiltration; and the benign
//! look-alikes: security documentation, rule sets, installers, cache clean-ups, example keys,
//! anti-injection guidance).
//!
//! The items are split by a fixed hash of their name (FNV-1a 64, even = `dev`, odd = `test`).
//! Rules were written looking at `dev` only; `test` was written at the same time, before any
//! rule change, and measured once before and once after (BENCHMARKS.md). A second round
//! (source-to-sink flows, standing orders that append a "never", payload catalogues, public
//! keys: the `flow-*`, `standing-never-share`, `docs-*` items) added `dev` items only, named so
//! they hash to `dev`, written before its rules; `test` was not read for it. The test prints the
//! table (`--nocapture`; `SCAN_HELDOUT_REPORT=path` writes it) and asserts the floors the
//! rules reached, so a regression fails.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use skills::security::scan::{Scanner, Verdict};

/// FNV-1a 64 of `name`: the fixed split (`dev` when even).
fn split(name: &str) -> &'static str {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in name.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    if h.is_multiple_of(2) { "dev" } else { "test" }
}

#[derive(Default, Clone, Copy, Debug)]
struct Tally {
    n: usize,
    block: usize,
    flagged: usize,
}

fn items(root: &Path, label: &str) -> Vec<(String, PathBuf)> {
    let mut out: Vec<(String, PathBuf)> = std::fs::read_dir(root.join(label))
        .unwrap()
        .map(|e| e.unwrap())
        .map(|e| (e.file_name().to_string_lossy().into_owned(), e.path()))
        .collect();
    out.sort();
    out
}

#[test]
fn held_out_fixtures() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/scan-heldout");
    let scanner = Scanner::new();
    let mut table: BTreeMap<(&str, &str), Tally> = BTreeMap::new();
    let mut lines = Vec::new();
    for label in ["malicious", "benign"] {
        for (name, path) in items(&root, label) {
            let report = scanner.scan_dir(&path).unwrap();
            let t = table.entry((split(&name), label)).or_default();
            t.n += 1;
            t.block += usize::from(report.verdict == Verdict::Block);
            t.flagged += usize::from(report.verdict != Verdict::Clean);
            let rules: Vec<String> = report
                .findings
                .iter()
                .filter(|f| f.severity >= skills::security::scan::Severity::Medium)
                .map(|f| format!("{}:{}", f.rule, f.severity))
                .collect();
            lines.push(format!(
                "- {} {label} `{name}`: {} ({}) {}",
                split(&name),
                report.verdict,
                report.score,
                rules.join(", ")
            ));
        }
    }
    let mut md =
        String::from("| split | label | n | block | review or block |\n|---|---|---|---|---|\n");
    for ((split, label), t) in &table {
        md.push_str(&format!(
            "| {split} | {label} | {} | {} | {} |\n",
            t.n, t.block, t.flagged
        ));
    }
    md.push('\n');
    md.push_str(&lines.join("\n"));
    md.push('\n');
    println!("{md}");
    if let Ok(path) = std::env::var("SCAN_HELDOUT_REPORT") {
        std::fs::write(path, &md).unwrap();
    }
    assert!(
        table.values().map(|t| t.n).sum::<usize>() >= 40,
        "fixtures missing"
    );
    // The figures the issue-21 rules reached (BENCHMARKS.md): every malicious fixture
    // flagged on both splits; on `dev` no benign one flagged; on `test` (measured once after
    // the rules were written, not tuned on) at most one benign blocked and three flagged.
    for ((split, label), t) in &table {
        let (max_block, max_flagged) = if *split == "dev" { (0, 0) } else { (1, 3) };
        if *label == "malicious" {
            assert_eq!(t.flagged, t.n, "{split}: malicious fixtures missed");
        } else {
            assert!(t.block <= max_block, "{split}: {} benign blocked", t.block);
            assert!(
                t.flagged <= max_flagged,
                "{split}: {} benign flagged",
                t.flagged
            );
        }
    }
}
