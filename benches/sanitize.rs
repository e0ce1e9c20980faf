//! Benchmarks of the sanitizer (`skills::security`). Every group reports
//! `Throughput::Bytes` of input text, so criterion prints MB/s.
//!
//! * `detect/clean_prose`: 1 MiB of generated English prose with nothing to find (the
//!   always-on case: one pass, no allocation).
//! * `detect/corpus_public`: the public labelled corpus (`corpus_public.jsonl` in the folder
//!   `SKILLS_PII_CORPUS_DIR` names, 2,626 documents, 1.0 MB, dense with PII and decoys), one
//!   `detect_into` per document back to back (the tight loop). Falls back to the vendored
//!   sample in `tests/fixtures/pii/sample.jsonl` when the variable is unset.
//! * `detect/corpus_public_per_document`: the same documents as a caller sees them, the
//!   way `examples/sanitize.rs --detect-jsonl` runs: each document's JSON line is parsed, its
//!   findings' offsets turned into code points and its record written out as JSON between two
//!   calls, and only the `detect_into` call is timed (so the detector's tables are no longer
//!   warm in cache for every call).
//! * `sanitize/corpus_public`: the full pipeline (classify, tokenize, redact) over the same
//!   documents for a verified skill.
//! * `sanitize/json_records`: 2,000 customer records as JSON values, classified and
//!   sanitized field by field.
//! * `detect/large_document`: the corpus documents joined into one text of about 8 MB.

// Bench code over fixed inputs: a broken fixture should abort loudly.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use criterion::{Criterion, Throughput};
use serde_json::{Value, json};
use skills::security::{Context, Detector, Findings, Sanitizer, TrustLevel};

#[path = "../examples/support/code_points.rs"]
mod code_points;
use code_points::code_point_spans;

const WORDS: [&str; 64] = [
    "the",
    "of",
    "and",
    "to",
    "in",
    "is",
    "that",
    "for",
    "it",
    "as",
    "was",
    "with",
    "be",
    "by",
    "on",
    "not",
    "he",
    "this",
    "are",
    "or",
    "his",
    "from",
    "at",
    "which",
    "but",
    "have",
    "an",
    "had",
    "they",
    "you",
    "were",
    "their",
    "one",
    "all",
    "we",
    "can",
    "her",
    "has",
    "there",
    "been",
    "if",
    "more",
    "when",
    "will",
    "would",
    "who",
    "so",
    "no",
    "agreement",
    "hope",
    "continue",
    "agency",
    "light",
    "choose",
    "media",
    "front",
    "commercial",
    "morning",
    "development",
    "father",
    "television",
    "season",
    "investment",
    "understand",
];

/// Deterministic prose with no digits, addresses or keywords.
fn prose(bytes: usize) -> String {
    let mut s = String::with_capacity(bytes + 64);
    let mut x: u64 = 0x2545_F491_4F6C_DD1D;
    let mut in_sentence = 0;
    while s.len() < bytes {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let w = WORDS[(x % 64) as usize];
        if in_sentence == 0 {
            let mut c = w.chars();
            if let Some(f) = c.next() {
                s.push(f.to_ascii_uppercase());
                s.push_str(c.as_str());
            }
        } else {
            s.push_str(w);
        }
        in_sentence += 1;
        if in_sentence > 8 + (x % 9) as usize {
            s.push_str(if x.is_multiple_of(5) { ".\n\n" } else { ". " });
            in_sentence = 0;
        } else {
            s.push(if x.is_multiple_of(11) { ',' } else { ' ' });
            if x.is_multiple_of(11) {
                s.push(' ');
            }
        }
    }
    s
}

/// The corpus lines (JSON documents), or the vendored sample's, with where they came from.
fn corpus() -> Option<(Vec<String>, PathBuf)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let candidates = [
        std::env::var_os("PII_CORPUS").map(PathBuf::from),
        skills_testenv::pii_corpus_if_set(),
        Some(root.join("tests/fixtures/pii/sample.jsonl")),
    ];
    for path in candidates.into_iter().flatten() {
        if let Ok(text) = std::fs::read_to_string(&path) {
            let lines: Vec<String> = text
                .lines()
                .filter(|l| !l.trim().is_empty())
                .map(str::to_owned)
                .collect();
            return Some((lines, path));
        }
    }
    None
}

fn document_text(line: &str) -> String {
    let v: Value = serde_json::from_str(line).expect("corpus line");
    v["text"].as_str().expect("text").to_owned()
}

fn records(n: usize) -> Vec<Value> {
    (0..n)
        .map(|i| {
            json!({"customer": {
                "id": format!("{:08x}-40c0-4d4e-818c-a6eaac8d82f0", i * 7919),
                "name": "Beth Nunez",
                "email": format!("user{i}@example.net"),
                "phone": format!("+44 20 7946 {:04}", i % 10_000),
                "ssn": "032-32-3267",
                "created_at": "2024-04-02T15:24:00.129Z",
                "last_ip": format!("151.157.{}.{}", i % 256, (i * 7) % 256),
                "payment": {"card": "4745-2991-2419-0497", "iban": "FR1420041010050500013M02606"},
                "balance": "871,538.80 USD",
                "points": 85356 + i,
                "note": "done. Language firm health game catch throughout."
            }})
        })
        .collect()
}

fn benches(c: &mut Criterion) {
    let detector = Detector::new();
    let sanitizer = Sanitizer::default();

    {
        let text = prose(1 << 20);
        assert!(detector.detect(&text).is_empty(), "the prose must be clean");
        let mut group = c.benchmark_group("detect");
        group.throughput(Throughput::Bytes(text.len() as u64));
        let mut findings = Findings::default();
        group.bench_function("clean_prose", |b| {
            b.iter(|| {
                detector.detect_into(black_box(&text), &mut findings);
                black_box(findings.is_empty())
            });
        });
        group.finish();
    }

    match corpus() {
        None => eprintln!(
            "sanitize bench: no corpus found (set PII_CORPUS); skipping the corpus groups"
        ),
        Some((lines, path)) => {
            let docs: Vec<String> = lines.iter().map(|l| document_text(l)).collect();
            eprintln!(
                "sanitize bench: corpus {} ({} documents)",
                path.display(),
                docs.len()
            );
            let bytes: u64 = docs.iter().map(|d| d.len() as u64).sum();
            {
                let mut group = c.benchmark_group("detect");
                group.throughput(Throughput::Bytes(bytes));
                let mut findings = Findings::default();
                group.bench_function("corpus_public", |b| {
                    b.iter(|| {
                        let mut n = 0;
                        for d in &docs {
                            detector.detect_into(black_box(d), &mut findings);
                            n += findings.all().len();
                        }
                        black_box(n)
                    });
                });
                // The caller's view: between two calls, what `--detect-jsonl` does (parse the
                // next line; turn the findings' offsets into code points; write the record
                // with the call's own time as JSON) runs untimed.
                let mut out = Vec::with_capacity(1 << 16);
                group.bench_function("corpus_public_per_document", |b| {
                    b.iter_custom(|iters| {
                        let mut timed = Duration::ZERO;
                        for _ in 0..iters {
                            for line in &lines {
                                let doc: Value = serde_json::from_str(line).expect("corpus line");
                                let text = doc["text"].as_str().expect("text");
                                let start = Instant::now();
                                detector.detect_into(black_box(text), &mut findings);
                                let elapsed = start.elapsed();
                                timed += elapsed;
                                out.clear();
                                let spans = code_point_spans(text, &findings);
                                let record = json!({"id": doc["id"], "spans": spans, "elapsed_s": elapsed.as_secs_f64()});
                                serde_json::to_writer(&mut out, &record).expect("write");
                                out.push(b'\n');
                                black_box(out.len());
                            }
                        }
                        timed
                    });
                });
                group.finish();
            }
            {
                let mut group = c.benchmark_group("sanitize");
                group.throughput(Throughput::Bytes(bytes));
                group.bench_function("corpus_public", |b| {
                    b.iter(|| {
                        let mut run = sanitizer
                            .begin("bench", TrustLevel::Verified, None)
                            .expect("begin");
                        let mut n = 0;
                        for d in &docs {
                            n += run
                                .sanitize_text(black_box(d), &Context::source("bench"))
                                .text
                                .len();
                        }
                        black_box(n)
                    });
                });
                group.finish();
            }
            {
                let mut big = String::new();
                while big.len() < 8 << 20 {
                    for d in &docs {
                        big.push_str(d);
                        big.push('\n');
                    }
                }
                let mut group = c.benchmark_group("detect");
                group.throughput(Throughput::Bytes(big.len() as u64));
                group.sample_size(20);
                let mut findings = Findings::default();
                group.bench_function("large_document", |b| {
                    b.iter(|| {
                        detector.detect_into(black_box(&big), &mut findings);
                        black_box(findings.all().len())
                    });
                });
                group.finish();
            }
        }
    }

    {
        let recs = records(2_000);
        let bytes: u64 = recs.iter().map(|r| r.to_string().len() as u64).sum();
        let mut group = c.benchmark_group("sanitize");
        group.throughput(Throughput::Bytes(bytes));
        group.bench_function("json_records", |b| {
            b.iter(|| {
                let mut run = sanitizer
                    .begin("bench", TrustLevel::Verified, None)
                    .expect("begin");
                let mut n = 0;
                for r in &recs {
                    let out = run.sanitize_json(black_box(r), &Context::source("bench"));
                    n += usize::from(out.value.is_object());
                }
                black_box(n)
            });
        });
        group.finish();
    }
}

fn main() {
    let mut criterion = Criterion::default()
        .measurement_time(Duration::from_secs(5))
        .configure_from_args();
    benches(&mut criterion);
    criterion.final_summary();
}
