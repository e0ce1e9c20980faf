//! Escaped text: a text that arrives JSON- or C-escaped (a log line holding a JSON string,
//! a note copied out of a JSON field) writes a line break as the two characters `\n`, so
//! `Mobile: 0161 496 0066\nFax: ...` has no line break for a label to stop at and a number
//! glued to a letter `n`. Each escape is read as the separator it stands for.
//!
//! How, without moving a single offset: when a text holds a backslash, the pass runs over a
//! copy of the same length in which every escape is overwritten in place, byte for byte,
//! with ASCII: `\n` becomes a space and a line feed, `\t` a space and a tab, `\r` a space and
//! a carriage return, `\"` `\'` `\/` a space and the quote or slash, `\b` and `\f` two spaces;
//! `\uXXXX` becomes five spaces and the separator when it stands for a space or a control
//! character (`\u000a` ends a line), five spaces and the character for ASCII punctuation, and
//! six `x` otherwise (a letter in a word stays a letter in a word). `\\` is an escaped
//! backslash and is kept, so `\\n` is a backslash and an `n`. Anything else stays as it is.
//! Only ASCII bytes are ever written over ASCII bytes, so the copy is valid UTF-8 with the
//! same character boundaries, and every finding's offsets are offsets into the original.

/// The copy the pass reads when a text holds an escape, kept between calls so escaped texts
/// allocate once. Its `Debug` shows no text.
#[derive(Clone, Default)]
pub(crate) struct EscapeBuffer(Vec<u8>);

impl std::fmt::Debug for EscapeBuffer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EscapeBuffer")
            .field("capacity", &self.0.capacity())
            .finish()
    }
}

impl EscapeBuffer {
    /// `text` with its escapes read as separators (see the module docs): `text` itself when
    /// it holds no backslash, else the same-length copy in this buffer.
    pub(crate) fn unescaped<'a>(&'a mut self, text: &'a str) -> &'a str {
        let h = text.as_bytes();
        let Some(first) = memchr::memchr(b'\\', h) else {
            return text;
        };
        self.0.clear();
        self.0.extend_from_slice(h);
        let out = &mut self.0;
        let mut i = first;
        while let Some(k) = memchr::memchr(b'\\', &h[i..]) {
            i += k;
            i += rewrite(h, i, out);
        }
        // Only ASCII was written over ASCII, so this cannot fail; should it, the original
        // text is read as it is (escapes then simply stay unread).
        std::str::from_utf8(&self.0).unwrap_or(text)
    }
}

/// Overwrites the escape at the backslash at `i` in `out`; returns how many bytes it spans
/// (at least 1).
fn rewrite(h: &[u8], i: usize, out: &mut [u8]) -> usize {
    let Some(&c) = h.get(i + 1) else {
        return 1;
    };
    let second = match c {
        b'n' => b'\n',
        b't' => b'\t',
        b'r' => b'\r',
        b'"' | b'\'' | b'/' => c,
        b'b' | b'f' => b' ',
        b'\\' => return 2,
        b'u' => return unicode(h, i, out),
        _ => return 1,
    };
    if let Some(pair) = out.get_mut(i..i + 2) {
        pair.copy_from_slice(&[b' ', second]);
    }
    2
}

/// `\uXXXX` at `i`; returns the bytes it spans (1 when it is not one).
fn unicode(h: &[u8], i: usize, out: &mut [u8]) -> usize {
    let Some(hex) = h.get(i + 2..i + 6) else {
        return 1;
    };
    let Some(v) = hex.iter().try_fold(0u32, |acc, &b| {
        char::from(b).to_digit(16).map(|d| acc * 16 + d)
    }) else {
        return 1;
    };
    let Some(slot) = out.get_mut(i..i + 6) else {
        return 1;
    };
    let ch = char::from_u32(v);
    let last = match ch {
        Some('\n') => b'\n',
        Some('\t') => b'\t',
        Some('\r') => b'\r',
        Some(c) if c.is_whitespace() || c.is_control() => b' ',
        Some(c) if c.is_ascii_punctuation() => c as u8,
        // A letter, digit or symbol of any script (or half of a surrogate pair): part of
        // the word it sits in.
        _ => {
            slot.fill(b'x');
            return 6;
        }
    };
    slot.fill(b' ');
    slot[5] = last;
    6
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unescape(s: &str) -> String {
        let mut buf = EscapeBuffer::default();
        let out = buf.unescaped(s).to_owned();
        assert_eq!(out.len(), s.len());
        out
    }

    #[test]
    fn escapes_become_their_separators_in_place() {
        assert_eq!(unescape(r"a\nb\tc\rd"), "a \nb \tc \rd");
        assert_eq!(unescape(r#"say \"hi\" \/x"#), "say  \"hi \"  /x");
        assert_eq!(unescape(r"Fax\u000a0161"), "Fax     \n0161");
        assert_eq!(unescape(r"a\u00A0b"), "a      b");
        assert_eq!(unescape(r"Caf\u00e9 ok"), "Cafxxxxxx ok");
        assert_eq!(unescape(r"x\u0040y"), "x     @y");
    }

    #[test]
    fn escaped_backslashes_and_broken_escapes_stay() {
        assert_eq!(unescape(r"C:\\new"), r"C:\\new");
        assert_eq!(unescape(r"\\\n"), "\\\\ \n");
        assert_eq!(unescape(r"\u12"), r"\u12");
        assert_eq!(unescape(r"\uZZZZ\q\"), r"\uZZZZ\q\");
        assert_eq!(unescape("é\\né"), "é \né");
    }

    #[test]
    fn text_without_a_backslash_is_not_copied() {
        let mut buf = EscapeBuffer::default();
        let text = "no escapes here";
        assert!(std::ptr::eq(buf.unescaped(text), text));
        assert_eq!(buf.0.capacity(), 0);
    }
}
