#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! The scanner on the labelled public corpora (the folder `SKILLS_CORPUS_DIR` names):
//! recall on malicious items, false positives on benign ones and on the real published
//! skills, per source and per attack category. Prints the tables (run with
//! `--nocapture`; `SCAN_CORPUS_REPORT=path` also writes them as Markdown) and asserts loose
//! floors only, so a regression fails but the figures themselves live in the benchmark
//! notes. Outside CI, without the variable, it is skipped with one notice; under `CI=true`
//! it fails.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use skills::security::scan::{ScanFile, ScanReport, Scanner, Verdict};

/// FNV-1a 64 of an item's path relative to the corpus root: the fixed dev/test split of issue 21
/// (`dev` when even).
fn split(path: &Path, root: &Path) -> &'static str {
    let rel = path.strip_prefix(root).unwrap_or(path).to_string_lossy();
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in rel.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    if h.is_multiple_of(2) { "dev" } else { "test" }
}

/// The corpus `SKILLS_CORPUS_DIR` names (required under `CI=true`; skipped with a notice
/// elsewhere).
fn corpus_root() -> Option<PathBuf> {
    skills_testenv::corpus().map(|corpus| corpus.root().to_path_buf())
}

#[derive(Default, Clone, Copy)]
struct Tally {
    n: usize,
    block: usize,
    flagged: usize,
}

impl Tally {
    fn add(&mut self, verdict: Verdict) {
        self.n += 1;
        self.block += usize::from(verdict == Verdict::Block);
        self.flagged += usize::from(verdict != Verdict::Clean);
    }
    fn cell(count: usize, n: usize) -> String {
        if n == 0 {
            return "0".to_owned();
        }
        format!("{count} ({:.1} %)", 100.0 * count as f64 / n as f64)
    }
}

struct Item {
    path: PathBuf,
    label: String,
    category: String,
    source: String,
}

fn items(root: &Path) -> Vec<Item> {
    let labels = std::fs::read_to_string(root.join("malicious-skills/labels.csv")).unwrap();
    let mut out = Vec::new();
    for line in labels.lines().skip(1) {
        let cols: Vec<&str> = line.split(',').collect();
        let [path, label, category, source, _license] = cols[..] else {
            panic!("bad labels.csv row: {line}");
        };
        let mut source = source.split('@').next().unwrap_or(source).to_owned();
        if path.starts_with("skillfortifybench/") {
            let flavour = path.split('/').nth(2).unwrap_or("");
            source = format!("{source} [{flavour}]");
        }
        out.push(Item {
            path: root.join("malicious-skills").join(path),
            label: label.to_owned(),
            category: category.to_owned(),
            source,
        });
    }
    let real = root.join("real-skills");
    let mut collections: Vec<PathBuf> = std::fs::read_dir(&real)
        .map(|d| {
            d.filter_map(Result::ok)
                .map(|e| e.path())
                .filter(|p| p.is_dir())
                .collect()
        })
        .unwrap_or_default();
    collections.sort();
    for collection in collections {
        let mut skills: Vec<PathBuf> = std::fs::read_dir(&collection)
            .unwrap()
            .filter_map(Result::ok)
            .map(|e| e.path())
            .filter(|p| p.join("SKILL.md").is_file())
            .collect();
        skills.sort();
        let name = collection
            .file_name()
            .unwrap()
            .to_string_lossy()
            .into_owned();
        for path in skills {
            out.push(Item {
                path,
                label: "benign".to_owned(),
                category: "real".to_owned(),
                source: format!("real-skills/{name}"),
            });
        }
    }
    out
}

/// The Progent command payloads (not in labels.csv; never used to write rules): each tool
/// call rendered as one line of a `bash` block in a SKILL.md.
fn payloads(root: &Path) -> Vec<(String, bool, String)> {
    let dir = root.join("malicious-skills/progent-skill-injection/payloads");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .map(|d| d.filter_map(Result::ok).map(|e| e.path()).collect())
        .unwrap_or_default();
    files.sort();
    let mut out = Vec::new();
    for file in files {
        let doc: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
        let class = doc["attack_class"]["id"].as_str().unwrap_or("").to_owned();
        for (key, malicious) in [("malicious_payloads", true), ("benign_payloads", false)] {
            for p in doc[key].as_array().into_iter().flatten() {
                let k = &p["kwargs"];
                let s = |f: &str| k[f].as_str().unwrap_or("").to_owned();
                let line = match p["tool_name"].as_str().unwrap_or("") {
                    "run_command" => s("command"),
                    "read_file" => format!("cat {}", s("file_path")),
                    "write_file" => format!("echo \"$CONTENT\" > {}", s("file_path")),
                    "edit_file" => format!("sed -i 's/a/b/' {}", s("file_path")),
                    "list_directory" => format!("ls {}", s("path")),
                    "send_email" => format!(
                        "sendmail {} <<< \"{}: {}\"",
                        s("to"),
                        s("subject"),
                        s("body")
                    ),
                    other => panic!("unknown tool {other}"),
                };
                out.push((class.clone(), malicious, line));
            }
        }
    }
    out
}

fn scan_item(scanner: &Scanner, path: &Path) -> ScanReport {
    scanner.scan_path(path).unwrap()
}

#[test]
fn corpus_recall_and_false_positives() {
    let Some(root) = corpus_root() else {
        return;
    };
    let scanner = Scanner::new();
    let mut by_source: BTreeMap<(String, String), Tally> = BTreeMap::new();
    let mut by_category: BTreeMap<(String, String), Tally> = BTreeMap::new();
    let mut totals: BTreeMap<String, Tally> = BTreeMap::new();
    let mut benign_hits = Vec::new();
    let mut by_split: BTreeMap<(&str, String), Tally> = BTreeMap::new();
    for item in items(&root) {
        let report = scan_item(&scanner, &item.path);
        by_split
            .entry((split(&item.path, &root), item.label.clone()))
            .or_default()
            .add(report.verdict);
        by_source
            .entry((item.source.clone(), item.label.clone()))
            .or_default()
            .add(report.verdict);
        totals
            .entry(item.label.clone())
            .or_default()
            .add(report.verdict);
        if item.label == "malicious" {
            let source = item.source.split(" [").next().unwrap_or("").to_owned();
            by_category
                .entry((source, item.category.clone()))
                .or_default()
                .add(report.verdict);
        } else if report.verdict != Verdict::Clean {
            let rules: Vec<&str> = report
                .findings
                .iter()
                .filter(|f| f.severity >= skills::security::scan::Severity::Medium)
                .map(|f| f.rule)
                .collect();
            benign_hits.push(format!(
                "- {} `{}` ({}): {}",
                report.verdict,
                item.path
                    .strip_prefix(&root)
                    .unwrap_or(&item.path)
                    .display(),
                report.score,
                rules.join(", ")
            ));
        }
    }
    let mut md =
        String::from("| corpus | label | n | block | review or block |\n|---|---|---|---|---|\n");
    for ((source, label), t) in &by_source {
        md.push_str(&format!(
            "| {source} | {label} | {} | {} | {} |\n",
            t.n,
            Tally::cell(t.block, t.n),
            Tally::cell(t.flagged, t.n)
        ));
    }
    for (label, t) in &totals {
        md.push_str(&format!(
            "| **all** | {label} | {} | {} | {} |\n",
            t.n,
            Tally::cell(t.block, t.n),
            Tally::cell(t.flagged, t.n)
        ));
    }
    md.push_str("\n| corpus | category | n | block | review or block |\n|---|---|---|---|---|\n");
    for ((source, category), t) in &by_category {
        md.push_str(&format!(
            "| {source} | {category} | {} | {} | {} |\n",
            t.n, t.block, t.flagged
        ));
    }
    md.push_str("\nIssue 21's fixed split (FNV-1a 64 of the path under the corpus root):\n\n| split | label | n | block | review or block |\n|---|---|---|---|---|\n");
    for ((split, label), t) in &by_split {
        md.push_str(&format!(
            "| {split} | {label} | {} | {} | {} |\n",
            t.n,
            Tally::cell(t.block, t.n),
            Tally::cell(t.flagged, t.n)
        ));
    }
    md.push_str("\nBenign items not clean:\n\n");
    md.push_str(&benign_hits.join("\n"));
    md.push('\n');

    let mut held_out: BTreeMap<(String, bool), Tally> = BTreeMap::new();
    for (class, malicious, line) in payloads(&root) {
        let text = format!("---\nname: payload\ndescription: d\n---\n```bash\n{line}\n```\n");
        let report = scanner.scan_files("payload", &[ScanFile::new("SKILL.md", text.as_bytes())]);
        held_out
            .entry((class, malicious))
            .or_default()
            .add(report.verdict);
    }
    md.push_str("\nProgent command payloads (held out), one line of a bash block each:\n\n| class | label | n | block | review or block |\n|---|---|---|---|---|\n");
    let mut payload_totals: BTreeMap<bool, Tally> = BTreeMap::new();
    for ((class, malicious), t) in &held_out {
        let label = if *malicious { "malicious" } else { "benign" };
        md.push_str(&format!(
            "| {class} | {label} | {} | {} | {} |\n",
            t.n, t.block, t.flagged
        ));
        let total = payload_totals.entry(*malicious).or_default();
        total.n += t.n;
        total.block += t.block;
        total.flagged += t.flagged;
    }
    for (malicious, t) in &payload_totals {
        let label = if *malicious { "malicious" } else { "benign" };
        md.push_str(&format!(
            "| **all** | {label} | {} | {} | {} |\n",
            t.n,
            Tally::cell(t.block, t.n),
            Tally::cell(t.flagged, t.n)
        ));
    }
    println!("{md}");
    if let Ok(path) = std::env::var("SCAN_CORPUS_REPORT") {
        std::fs::write(path, &md).unwrap();
    }

    let malicious = totals["malicious"];
    let benign = totals["benign"];
    let recall = malicious.flagged as f64 / malicious.n as f64;
    let block_fp = benign.block as f64 / benign.n as f64;
    let review_fp = benign.flagged as f64 / benign.n as f64;
    assert!(
        malicious.n >= 300 && benign.n >= 300,
        "corpus shrank: {} / {}",
        malicious.n,
        benign.n
    );
    assert!(
        recall >= 0.85,
        "recall (review or block) fell to {recall:.3}"
    );
    assert!(block_fp <= 0.05, "benign items blocked: {block_fp:.3}");
    assert!(review_fp <= 0.10, "benign items flagged: {review_fp:.3}");
}
