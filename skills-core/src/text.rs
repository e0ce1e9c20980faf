//! Turning the bytes of a text file into normalised text.
//!
//! Rules (from the project's rules table): UTF-8 only; UTF-16 and UTF-32 (with or without a
//! byte-order mark) are reported, never mis-decoded; a UTF-8 BOM is stripped with a warning;
//! CR, LF and CRLF line endings are all accepted and normalised to LF, which keeps every line
//! number the same as in the source.

use std::borrow::Cow;

use crate::diagnostic::{Rule, Sink};

/// Decodes `bytes` as UTF-8 text with LF line endings, reporting into `sink`.
///
/// Returns `None` (after reporting an error) when the bytes are not UTF-8.
pub(crate) fn decode<'a>(bytes: &'a [u8], sink: &mut Sink) -> Option<Cow<'a, str>> {
    if let Some(kind) = wide_encoding(bytes) {
        sink.push(
            Rule::EncodingUtf16,
            None,
            format!("the file is encoded as {kind}; only UTF-8 is accepted"),
        );
        return None;
    }
    let bom_len = if bytes.starts_with(b"\xEF\xBB\xBF") {
        3
    } else {
        0
    };
    let bytes = match bytes.strip_prefix(b"\xEF\xBB\xBF") {
        Some(rest) => {
            sink.push(
                Rule::EncodingBom,
                Some(1),
                "a UTF-8 byte-order mark was stripped",
            );
            rest
        }
        None => bytes,
    };
    let text = match std::str::from_utf8(bytes) {
        Ok(text) => text,
        Err(err) => {
            let offset = err.valid_up_to();
            let line = 1 + count_line_breaks(&bytes[..offset]);
            sink.push(
                Rule::EncodingInvalidUtf8,
                Some(line),
                format!(
                    "the file is not valid UTF-8 (first invalid byte at offset {})",
                    offset + bom_len
                ),
            );
            return None;
        }
    };
    Some(normalize_line_endings(text))
}

/// Line breaks in raw bytes, counting CR, LF and CRLF each as one.
fn count_line_breaks(bytes: &[u8]) -> usize {
    let mut count = 0;
    let mut previous = 0u8;
    for &b in bytes {
        if b == b'\n' && previous != b'\r' || b == b'\r' {
            count += 1;
        }
        previous = b;
    }
    count
}

/// Detects UTF-16 and UTF-32, with a BOM or by the NUL pattern ASCII text takes in them.
fn wide_encoding(bytes: &[u8]) -> Option<&'static str> {
    match bytes {
        [0x00, 0x00, 0xFE, 0xFF, ..] => return Some("UTF-32 (big-endian)"),
        [0xFF, 0xFE, 0x00, 0x00, ..] => return Some("UTF-32 (little-endian)"),
        [0xFE, 0xFF, ..] => return Some("UTF-16 (big-endian)"),
        [0xFF, 0xFE, ..] => return Some("UTF-16 (little-endian)"),
        _ => {}
    }
    // Without a BOM, ASCII in UTF-16 puts a NUL in every other byte. A UTF-8 file never
    // starts that way (SKILL.md starts with `---`), so this is not a guess about real text.
    let head = &bytes[..bytes.len().min(16)];
    if head.len() >= 8 && head.len().is_multiple_of(4) {
        let lanes = |lane: usize| head.iter().skip(lane).step_by(4).all(|&b| b == 0);
        if lanes(0) && lanes(1) && lanes(2) && !lanes(3) {
            return Some("UTF-32 (big-endian, no BOM)");
        }
        if !lanes(0) && lanes(1) && lanes(2) && lanes(3) {
            return Some("UTF-32 (little-endian, no BOM)");
        }
    }
    if head.len() >= 4 && head.len().is_multiple_of(2) {
        let even_nul = head.iter().step_by(2).all(|&b| b == 0);
        let odd_nul = head.iter().skip(1).step_by(2).all(|&b| b == 0);
        let any_text = head.iter().any(|&b| b != 0);
        if any_text && even_nul {
            return Some("UTF-16 (big-endian, no BOM)");
        }
        if any_text && odd_nul {
            return Some("UTF-16 (little-endian, no BOM)");
        }
    }
    None
}

/// Replaces CRLF and lone CR with LF; borrows when there is nothing to replace.
pub(crate) fn normalize_line_endings(text: &str) -> Cow<'_, str> {
    if !text.contains('\r') {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\r' {
            if chars.peek() == Some(&'\n') {
                chars.next();
            }
            out.push('\n');
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diagnostic::Profile;

    fn run(bytes: &[u8]) -> (Option<String>, Vec<Rule>) {
        let mut sink = Sink::new(Profile::Spec, None);
        let out = decode(bytes, &mut sink).map(|t| t.into_owned());
        (out, sink.items.iter().map(|d| d.rule).collect())
    }

    #[test]
    fn plain_utf8_is_borrowed_and_clean() {
        let mut sink = Sink::new(Profile::Spec, None);
        let out = decode(b"---\nname: x\n", &mut sink);
        assert!(matches!(out, Some(Cow::Borrowed(_))));
        assert!(sink.items.is_empty());
    }

    #[test]
    fn bom_is_stripped_with_a_warning() {
        let (out, rules) = run(b"\xEF\xBB\xBF---\n");
        assert_eq!(out.as_deref(), Some("---\n"));
        assert_eq!(rules, vec![Rule::EncodingBom]);
    }

    #[test]
    fn utf16_with_and_without_bom_is_an_error() {
        let text = "---\nname: x\n";
        let le: Vec<u8> = text.encode_utf16().flat_map(u16::to_le_bytes).collect();
        let be: Vec<u8> = text.encode_utf16().flat_map(u16::to_be_bytes).collect();
        for bytes in [
            [&[0xFF, 0xFE][..], &le].concat(),
            [&[0xFE, 0xFF][..], &be].concat(),
            le.clone(),
            be.clone(),
        ] {
            let (out, rules) = run(&bytes);
            assert_eq!(out, None);
            assert_eq!(rules, vec![Rule::EncodingUtf16]);
        }
        let (_, rules) = run(&[0xFF, 0xFE, 0, 0, b'-', 0, 0, 0]);
        assert_eq!(rules, vec![Rule::EncodingUtf16]);
    }

    #[test]
    fn invalid_utf8_reports_the_line() {
        let mut sink = Sink::new(Profile::Spec, None);
        assert!(decode(b"---\nname: a\xFFb\n---\n", &mut sink).is_none());
        assert_eq!(sink.items[0].rule, Rule::EncodingInvalidUtf8);
        assert_eq!(sink.items[0].line, Some(2));
    }

    #[test]
    fn invalid_utf8_line_counts_every_kind_of_break() {
        for (bytes, line) in [
            (&b"---\rname: a\xff\r"[..], 2),
            (&b"---\r\nname: a\xff"[..], 2),
            (&b"a\r\r\nb\n\xff"[..], 4),
        ] {
            let mut sink = Sink::new(Profile::Spec, None);
            assert!(decode(bytes, &mut sink).is_none());
            assert_eq!(sink.items[0].line, Some(line), "{bytes:?}");
        }
        // The offset is counted in the file, BOM included.
        let mut sink = Sink::new(Profile::Spec, None);
        assert!(decode(b"\xEF\xBB\xBFab\xff", &mut sink).is_none());
        assert!(
            sink.items[1].message.contains("offset 5"),
            "{}",
            sink.items[1].message
        );
    }

    #[test]
    fn utf32_without_a_bom_is_named_as_such() {
        let le: Vec<u8> = "---\nname"
            .chars()
            .flat_map(|c| (c as u32).to_le_bytes())
            .collect();
        let be: Vec<u8> = "---\nname"
            .chars()
            .flat_map(|c| (c as u32).to_be_bytes())
            .collect();
        for (bytes, label) in [(le, "UTF-32 (little-endian"), (be, "UTF-32 (big-endian")] {
            let mut sink = Sink::new(Profile::Spec, None);
            assert!(decode(&bytes, &mut sink).is_none());
            assert!(
                sink.items[0].message.contains(label),
                "{}",
                sink.items[0].message
            );
        }
    }

    #[test]
    fn line_endings_normalise_without_moving_lines() {
        assert_eq!(normalize_line_endings("a\r\nb\rc\nd"), "a\nb\nc\nd");
        assert_eq!(normalize_line_endings("a\r\r\nb"), "a\n\nb");
        assert_eq!(normalize_line_endings("\r"), "\n");
    }
}
