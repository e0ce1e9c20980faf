//! Making untrusted bytes safe to show.
//!
//! Threat: script output (or skill-supplied text on an approval screen) that carries
//! terminal escapes (cursor moves, OSC 52 clipboard writes, hyperlinks), NUL bytes, invalid
//! UTF-8, bidi overrides that reorder what a reader sees, or invisible Unicode tag
//! characters that smuggle instructions to a model. Guarantee: the result holds no C0 or C1
//! control character except `\n` and `\t`, no DEL, no escape sequence (CSI, OSC, DCS and
//! two-byte ESC sequences are removed whole), and no bidi control or tag character: each of
//! those is written visibly as `\u{XXXX}`; invalid UTF-8 becomes U+FFFD.

/// Neutralises `bytes` for display; see the module docs for the guarantee.
pub fn neutralize(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(bytes);
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\u{1b}' => skip_escape(&mut chars),
            // C1 CSI / OSC / DCS introducers: drop the sequence they start.
            '\u{9b}' => skip_csi(&mut chars),
            '\u{9d}' | '\u{90}' | '\u{9e}' | '\u{9f}' => skip_string(&mut chars),
            '\n' | '\t' => out.push(c),
            c if is_hidden(c) => out.push_str(&format!("\\u{{{:04x}}}", c as u32)),
            c => out.push(c),
        }
    }
    out
}

fn is_hidden(c: char) -> bool {
    c.is_control()
        || matches!(c as u32,
            0x061C | 0x200B..=0x200F | 0x202A..=0x202E | 0x2060..=0x2069 | 0xFEFF
            | 0xE0000..=0xE007F)
}

type Chars<'a> = std::iter::Peekable<std::str::Chars<'a>>;

fn skip_escape(chars: &mut Chars<'_>) {
    match chars.next() {
        Some('[') => skip_csi(chars),
        Some(']' | 'P' | 'X' | '^' | '_') => skip_string(chars),
        // Two-byte sequences (ESC c, ESC 7...) and intermediates: drop the next char.
        _ => {}
    }
}

fn skip_csi(chars: &mut Chars<'_>) {
    for c in chars.by_ref() {
        if ('\u{40}'..='\u{7e}').contains(&c) {
            break;
        }
    }
}

/// Skips to BEL, ST (`ESC \`) or the C1 ST.
fn skip_string(chars: &mut Chars<'_>) {
    while let Some(c) = chars.next() {
        match c {
            '\u{7}' | '\u{9c}' => break,
            '\u{1b}' => {
                if chars.peek() == Some(&'\\') {
                    chars.next();
                }
                break;
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::neutralize;

    #[test]
    fn escapes_controls_bidi_and_tags_go() {
        let hostile =
            b"ok\x1b[2J\x1b[1;1HAPPROVE? [y]\x1b]52;c;ZXZpbA==\x07\x00 \xff tab\tend\n".to_vec();
        let text = neutralize(&hostile);
        assert_eq!(text, "okAPPROVE? [y]\\u{0000} \u{fffd} tab\tend\n");
        let bidi = "a\u{202e}b\u{e0041}c\u{7f}".as_bytes();
        assert_eq!(neutralize(bidi), "a\\u{202e}b\\u{e0041}c\\u{007f}");
    }

    #[test]
    fn nothing_hidden_survives() {
        for b in 0u8..=255 {
            let text = neutralize(&[b'x', b, b'[', b'y']);
            assert!(
                !text
                    .chars()
                    .any(|c| c.is_control() && c != '\n' && c != '\t'),
                "{b}: {text:?}"
            );
        }
    }
}
