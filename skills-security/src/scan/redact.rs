//! Evidence redaction: a finding is shown to humans and stored in audit records, so the text
//! it quotes must not carry a secret the skill embedded, a payload long enough to be reused,
//! or invisible characters that would hide what it says.

/// Longest evidence kept, in characters (before the ellipsis).
pub(crate) const MAX_EVIDENCE_CHARS: usize = 160;

/// Runs of token characters at least this long are masked: API keys, encoded payloads and
/// hashes are all at least this long, and ordinary words and paths rarely are.
const MASK_RUN: usize = 24;

/// Redacts a matched text for display.
///
/// * a run of 24 or more letters, digits, `+`, `/`, `=`, `_` or `-` that holds both a
///   letter and a digit becomes its first four characters and `…[N chars]`;
/// * a word after `password`, `secret`, `token` or `key` followed by `=` or `:` becomes
///   `[REDACTED]`;
/// * control, format (zero-width, bidi, tag) and other invisible characters become `<U+XXXX>`;
/// * the result is cut to 160 characters.
pub(crate) fn redact(text: &str) -> String {
    let masked = mask_assignments(text.trim());
    let mut out = String::with_capacity(masked.len().min(MAX_EVIDENCE_CHARS + 16));
    let mut chars = 0usize;
    let mut run = String::new();
    let mut truncated = false;
    for c in masked.chars() {
        if chars >= MAX_EVIDENCE_CHARS {
            truncated = true;
            break;
        }
        if is_token_char(c) {
            run.push(c);
            continue;
        }
        chars += flush_run(&mut run, &mut out);
        if super::unicode::is_invisible(c) || (c.is_control() && c != ' ') {
            let shown = format!("<U+{:04X}>", u32::from(c));
            chars += shown.len();
            out.push_str(&shown);
        } else {
            out.push(c);
            chars += 1;
        }
    }
    flush_run(&mut run, &mut out);
    // A run of token characters is flushed whole; cut what it carried past the cap.
    if out.chars().count() > MAX_EVIDENCE_CHARS {
        out = out.chars().take(MAX_EVIDENCE_CHARS).collect();
        truncated = true;
    }
    if truncated {
        out.push('…');
    }
    out
}

fn is_token_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '+' | '/' | '=' | '_' | '-')
}

/// Appends `run` (masked when it looks like a key or blob) and returns the characters added.
fn flush_run(run: &mut String, out: &mut String) -> usize {
    if run.is_empty() {
        return 0;
    }
    let len = run.chars().count();
    let has_digit = run.bytes().any(|b| b.is_ascii_digit());
    let has_alpha = run.bytes().any(|b| b.is_ascii_alphabetic());
    let added = if len >= MASK_RUN && has_digit && has_alpha {
        let head: String = run.chars().take(4).collect();
        let shown = format!("{head}…[{len} chars]");
        let n = shown.chars().count();
        out.push_str(&shown);
        n
    } else {
        out.push_str(run);
        len
    };
    run.clear();
    added
}

/// Masks the value after a credential-like key (`password=hunter2`, `"token": "abc"`).
fn mask_assignments(text: &str) -> String {
    const KEYS: [&str; 6] = ["password", "passwd", "secret", "token", "api_key", "apikey"];
    let lower = text.to_ascii_lowercase();
    let mut out = String::with_capacity(text.len());
    let mut copied = 0usize;
    let bytes = text.as_bytes();
    for key in KEYS {
        let mut from = 0usize;
        while let Some(pos) = lower.get(from..).and_then(|rest| rest.find(key)) {
            let start = from + pos + key.len();
            from = start;
            let mut i = start;
            // Allow a closing quote and spaces between key and separator.
            while i < bytes.len() && matches!(bytes[i], b'"' | b'\'' | b' ') {
                i += 1;
            }
            if i >= bytes.len() || !matches!(bytes[i], b'=' | b':') {
                continue;
            }
            i += 1;
            while i < bytes.len() && matches!(bytes[i], b'"' | b'\'' | b' ') {
                i += 1;
            }
            let value_start = i;
            while i < bytes.len() && !matches!(bytes[i], b'"' | b'\'' | b' ' | b',' | b';' | b'}') {
                i += 1;
            }
            let value = &text[value_start..i];
            // `$VAR`, `os.environ[...]` and the like name a value, they are not one.
            if value.len() < 4 || value.starts_with('$') || value.contains('(') {
                continue;
            }
            if value_start >= copied {
                out.push_str(&text[copied..value_start]);
                out.push_str("[REDACTED]");
                copied = i;
            }
        }
    }
    out.push_str(&text[copied..]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn masks_keys_and_blobs() {
        let shown = redact("curl -H 'Authorization: sk_live_51HxYzAbCdEfGh1234567890abcd' x");
        assert!(!shown.contains("51HxYzAbCdEfGh1234567890"), "{shown}");
        assert!(shown.contains("sk_l…["), "{shown}");
        let shown = redact("password=hunter2hunter2 rest");
        assert_eq!(shown, "password=[REDACTED] rest");
    }

    #[test]
    fn keeps_ordinary_text_and_names() {
        assert_eq!(redact("cat ~/.ssh/id_rsa"), "cat ~/.ssh/id_rsa");
        assert_eq!(
            redact("token = os.environ.get('X')"),
            "token = os.environ.get('X')"
        );
    }

    #[test]
    fn shows_invisible_characters_and_caps_length() {
        assert_eq!(redact("a\u{200b}b"), "a<U+200B>b");
        let long = "word ".repeat(100);
        let shown = redact(&long);
        assert!(shown.chars().count() <= MAX_EVIDENCE_CHARS + 1);
        assert!(shown.ends_with('…'));
    }
}
