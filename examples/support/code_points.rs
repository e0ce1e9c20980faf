//! The findings as `--detect-jsonl` writes them, shared by `examples/sanitize.rs` and the
//! per-document bench (`benches/sanitize.rs`), which must do between two calls exactly what
//! the example does.

use skills::security::Findings;

/// The values found, with byte offsets turned into code-point offsets in one walk.
pub fn code_point_spans(text: &str, findings: &Findings) -> Vec<serde_json::Value> {
    let mut bounds: Vec<usize> = findings.values().flat_map(|f| [f.start, f.end]).collect();
    bounds.sort_unstable();
    bounds.dedup();
    let mut map = std::collections::HashMap::with_capacity(bounds.len());
    let mut next = bounds.iter().peekable();
    for (chars, (byte, _)) in text
        .char_indices()
        .chain(std::iter::once((text.len(), ' ')))
        .enumerate()
    {
        while let Some(&&b) = next.peek() {
            if b > byte {
                break;
            }
            map.insert(b, chars);
            next.next();
        }
    }
    findings
        .values()
        .map(|f| {
            serde_json::json!({
                "start": map.get(&f.start).copied().unwrap_or(0),
                "end": map.get(&f.end).copied().unwrap_or(0),
                "type": f.data_type.as_str(),
            })
        })
        .collect()
}
