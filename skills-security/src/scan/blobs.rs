//! Encoded payloads: base64 and hex runs are decoded and the decoded text is scanned with
//! the same rules, so `echo Y3VybCAuLi4gfCBzaA== | base64 -d | sh` is seen as the
//! `curl ... | sh` it is, and a URL hidden in base64 is named.
//!
//! Random data (hashes, keys, images) does not decode to text, so only blobs that decode to
//! at least 90 % printable characters are rescanned; what the rescan finds is reported once
//! per blob as `obfuscation.encoded_payload`, a severity above the worst inner finding.

use super::context::{FileKind, Layout};
use super::report::{Category, FindingContext, ScanFinding, Severity};
use super::rules::RuleSet;
use crate::base64::{decode_lenient, strip_padding};

/// Shortest run considered: shorter ones are identifiers and words.
const MIN_BASE64: usize = 20;
const MIN_HEX: usize = 32;
/// Longest run decoded (longer ones are decoded up to this length).
const MAX_DECODE: usize = 64 * 1024;
/// Blobs decoded per file at most: a file of blobs costs a bounded amount of work.
const MAX_BLOBS_PER_FILE: usize = 64;

/// Findings for encoded blobs in `text`.
///
/// `doc_of` gives the documentation level of each line (`rules::RuleSet::scan_layout`): a blob
/// that stands in documentation (a payload catalogue's encoded example) is lowered by as many
/// steps as a plain match there, never dropped, so an encoded payload an attack guide shows
/// is not weighed as one the skill runs, and one in code keeps its full weight.
pub(crate) fn scan_blobs(
    rules: &RuleSet,
    path: &str,
    text: &str,
    layout: &Layout,
    line_no: &dyn Fn(usize) -> u32,
    doc_of: &dyn Fn(usize) -> u8,
    depth: u8,
) -> Vec<ScanFinding> {
    let mut out = Vec::new();
    let bytes = text.as_bytes();
    let mut i = 0usize;
    let mut decoded_count = 0usize;
    while i < bytes.len() && decoded_count < MAX_BLOBS_PER_FILE {
        if !is_b64(bytes[i]) {
            i += 1;
            continue;
        }
        let start = i;
        while i < bytes.len() && is_b64(bytes[i]) {
            i += 1;
        }
        let run = &bytes[start..i];
        let Some(decoded) = decode_run(run) else {
            continue;
        };
        decoded_count += 1;
        let Ok(decoded) = String::from_utf8(decoded) else {
            continue;
        };
        if !mostly_printable(&decoded) {
            continue;
        }
        let line = layout.line_of(start);
        let (inner, _) = rules.scan_layout(path, &decoded, FileKind::Script, None, depth + 1);
        let worst = inner.iter().map(|f| f.severity).max();
        let has_url = decoded.contains("://");
        let (severity, what) = match worst {
            Some(Severity::Critical | Severity::High) => (Severity::Critical, "a payload"),
            Some(Severity::Medium) => (Severity::High, "a payload"),
            _ if has_url => (Severity::High, "a URL"),
            _ => continue,
        };
        let mut rules_found: Vec<&str> = inner
            .iter()
            .filter(|f| f.severity >= Severity::Medium)
            .map(|f| f.rule)
            .collect();
        rules_found.sort_unstable();
        rules_found.dedup();
        let message = if rules_found.is_empty() {
            format!("encoded data hides {what}")
        } else {
            format!("encoded data hides {what}: {}", rules_found.join(", "))
        };
        let doc = doc_of(line);
        let severity = (0..doc).fold(severity, |s, _| s.lowered());
        let finding = ScanFinding::new(
            Category::Obfuscation,
            severity,
            "obfuscation.encoded_payload",
            path,
            line_no(line),
            format!("decodes to: {decoded}"),
            message,
        );
        out.push(if doc > 0 {
            finding.in_context(FindingContext::Documentation)
        } else {
            finding
        });
    }
    out
}

fn is_b64(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'+' | b'/' | b'=' | b'-' | b'_')
}

/// Decodes a run as hex or base64 when it plausibly is one.
fn decode_run(run: &[u8]) -> Option<Vec<u8>> {
    let run = &run[..run.len().min(MAX_DECODE)];
    if run.len() >= MIN_HEX && run.len().is_multiple_of(2) && run.iter().all(u8::is_ascii_hexdigit)
    {
        return decode_hex(run);
    }
    if run.len() < MIN_BASE64 {
        return None;
    }
    // Words, paths and identifiers are runs too; base64 of text mixes cases and digits.
    let upper = run.iter().filter(|b| b.is_ascii_uppercase()).count();
    let lower = run.iter().filter(|b| b.is_ascii_lowercase()).count();
    let digits = run.iter().filter(|b| b.is_ascii_digit()).count();
    if upper == 0 || lower == 0 || (digits == 0 && !run.contains(&b'=')) {
        return None;
    }
    // Separators in the middle mean a path or identifier, not base64.
    let body = strip_padding(run);
    if body.contains(&b'=') || (body.contains(&b'/') && body.contains(&b'_')) {
        return None;
    }
    decode_lenient(body)
}

fn decode_hex(run: &[u8]) -> Option<Vec<u8>> {
    let value = |b: u8| -> Option<u8> {
        match b {
            b'0'..=b'9' => Some(b - b'0'),
            b'a'..=b'f' => Some(b - b'a' + 10),
            b'A'..=b'F' => Some(b - b'A' + 10),
            _ => None,
        }
    };
    run.chunks_exact(2)
        .map(|pair| Some(value(pair[0])? << 4 | value(pair[1])?))
        .collect()
}

fn mostly_printable(s: &str) -> bool {
    let total = s.chars().count();
    if total < 8 {
        return false;
    }
    let printable = s
        .chars()
        .filter(|c| !c.is_control() || matches!(c, '\n' | '\t' | '\r'))
        .filter(|c| *c != '\u{FFFD}')
        .count();
    printable * 10 >= total * 9
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_base64_and_hex() {
        assert_eq!(
            crate::base64::decode_lenient(b"aGVsbG8gd29ybGQ").as_deref(),
            Some(&b"hello world"[..])
        );
        assert_eq!(decode_hex(b"6869").as_deref(), Some(&b"hi"[..]));
        assert_eq!(decode_run(b"node_modules/some_package/index"), None);
    }
}
