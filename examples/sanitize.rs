//! The sanitizer from the command line.
//!
//! * `sanitize --detect-jsonl FILE` reads a corpus in the format of the labelled PII
//!   corpus's `CONTRACT.md` (one `{"id", "text", ...}` per line; `-` for stdin)
//!   and writes one detection line per document: spans in Unicode code points (the
//!   contract's default unit), typed with the corpus' names, with the detection time of each
//!   document, then a `meta` line. Score it with
//!   `python3 score.py --gold corpus_public.jsonl --pred PRED.jsonl`.
//! * `sanitize [--trust core|verified|community|user]` sanitizes stdin for a skill of that
//!   trust level (default verified) and prints what the skill would see, with the audit
//!   summary on stderr.

use std::io::{self, BufRead, Read, Write};
use std::process::ExitCode;
use std::time::Instant;

use skills::security::{Context, Detector, Findings, Sanitizer, TrustLevel};

#[path = "support/code_points.rs"]
mod code_points;
use code_points::code_point_spans;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.as_slice() {
        [flag, file] if flag == "--detect-jsonl" => detect_jsonl(file),
        [] => sanitize_stdin(TrustLevel::Verified),
        [flag, level] if flag == "--trust" => match parse_trust(level) {
            Some(t) => sanitize_stdin(t),
            None => Err(format!("unknown trust level `{level}`")),
        },
        _ => Err(
            "usage: sanitize [--detect-jsonl FILE | --trust core|verified|community|user]"
                .to_owned(),
        ),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("sanitize: {e}");
            ExitCode::FAILURE
        }
    }
}

fn parse_trust(s: &str) -> Option<TrustLevel> {
    Some(match s {
        "core" => TrustLevel::Core,
        "verified" => TrustLevel::Verified,
        "community" => TrustLevel::Community,
        "user" => TrustLevel::User,
        _ => return None,
    })
}

fn sanitize_stdin(trust: TrustLevel) -> Result<(), String> {
    let mut text = String::new();
    io::stdin()
        .read_to_string(&mut text)
        .map_err(|e| format!("reading stdin: {e}"))?;
    let sanitizer = Sanitizer::default();
    let mut run = sanitizer
        .begin("cli", trust, None)
        .map_err(|e| e.to_string())?;
    let out = run.sanitize_text(&text, &Context::default());
    print!("{}", out.text);
    let audit = run.audit();
    eprintln!(
        "\n-- {} skill: class {} ({}); granted {:?}; tokens {}; redactions {:?}",
        trust,
        out.classified.classification,
        out.classified.data_type,
        audit
            .data_classes_granted
            .iter()
            .map(|c| c.as_str())
            .collect::<Vec<_>>(),
        audit.tokens_used.len(),
        audit
            .redactions
            .iter()
            .map(|(t, n)| format!("{t}={n}"))
            .collect::<Vec<_>>(),
    );
    Ok(())
}

fn detect_jsonl(file: &str) -> Result<(), String> {
    let input: Box<dyn BufRead> = if file == "-" {
        Box::new(io::BufReader::new(io::stdin()))
    } else {
        Box::new(io::BufReader::new(
            std::fs::File::open(file).map_err(|e| format!("{file}: {e}"))?,
        ))
    };
    let detector = Detector::new();
    let mut findings = Findings::default();
    let stdout = io::stdout();
    let mut out = io::BufWriter::new(stdout.lock());
    let mut total = 0.0f64;
    let mut docs = 0usize;
    for (n, line) in input.lines().enumerate() {
        let line = line.map_err(|e| format!("{file}: {e}"))?;
        if line.trim().is_empty() {
            continue;
        }
        let doc: serde_json::Value =
            serde_json::from_str(&line).map_err(|e| format!("{file}:{}: {e}", n + 1))?;
        let (Some(id), Some(text)) = (doc.get("id"), doc.get("text").and_then(|t| t.as_str()))
        else {
            return Err(format!(
                "{file}:{}: a document needs `id` and `text`",
                n + 1
            ));
        };
        let t0 = Instant::now();
        detector.detect_into(text, &mut findings);
        let elapsed = t0.elapsed().as_secs_f64();
        total += elapsed;
        docs += 1;
        let spans = code_point_spans(text, &findings);
        let record = serde_json::json!({"id": id, "spans": spans, "elapsed_s": elapsed});
        writeln!(out, "{record}").map_err(|e| e.to_string())?;
    }
    let meta = serde_json::json!({"meta": {"tool": concat!("skills-security ", env!("CARGO_PKG_VERSION")), "analyze_s": total, "docs": docs}});
    writeln!(out, "{meta}").map_err(|e| e.to_string())?;
    out.flush().map_err(|e| e.to_string())
}
