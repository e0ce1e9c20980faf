//! E-mail addresses, including internationalised ones (`jürgen.müller@beispiel.de`).
//!
//! Found from the `@`: the local part is read backwards, the domain forwards (at least two
//! labels, an alphabetic top-level label). A `@handle` mention has no local part, and the
//! `user@host` of a URL (`postgres://app@db.internal`) is a URL's user, not an address.

/// Latin letters (ASCII and the Latin-1/Extended ranges) count as address characters;
/// other scripts end the address, so `客户：a@b.c` does not swallow the label.
fn is_latin_letter(c: char) -> bool {
    c.is_ascii_alphanumeric() || (('\u{C0}'..='\u{24F}').contains(&c) && c.is_alphabetic())
}

fn is_local_char(c: char) -> bool {
    is_latin_letter(c) || matches!(c, '.' | '_' | '%' | '+' | '-' | '\'')
}

fn is_domain_char(c: char) -> bool {
    is_latin_letter(c) || c == '-'
}

/// The character starting at byte `i` of `s` and its length (`None` at the end).
#[inline]
fn char_at(s: &str, i: usize) -> Option<(char, usize)> {
    match s.as_bytes().get(i)? {
        &b if b < 0x80 => Some((char::from(b), 1)),
        _ => s.get(i..)?.chars().next().map(|c| (c, c.len_utf8())),
    }
}

/// The character ending at byte `i` of `s` and where it starts (`None` at the start).
#[inline]
fn char_before(s: &str, i: usize) -> Option<(char, usize)> {
    match s.as_bytes().get(i.checked_sub(1)?)? {
        &b if b < 0x80 => Some((char::from(b), i - 1)),
        _ => s
            .get(..i)?
            .chars()
            .next_back()
            .map(|c| (c, i - c.len_utf8())),
    }
}

/// An address around the `@` at byte `a`; returns `(start, end)`.
pub(crate) fn at_sign(text: &str, a: usize) -> Option<(usize, usize)> {
    let before = text.get(..a)?;
    let mut start = a;
    // Back over the local part, a byte at a time while it is ASCII (a character is decoded
    // only where one is not: the same walk `char_indices().rev()` makes, cheaper).
    let mut i = a;
    while let Some((c, s)) = char_before(before, i) {
        if !is_local_char(c) || a - s > 64 {
            break;
        }
        start = s;
        i = s;
    }
    while start < a && matches!(text.as_bytes()[start], b'.' | b'\'' | b'-' | b'+') {
        start += 1;
    }
    if start == a || text.as_bytes()[a - 1] == b'.' {
        return None;
    }
    if url_user(text.as_bytes(), start) {
        return None;
    }
    let after = text.get(a + 1..)?;
    let mut end = a + 1;
    let mut labels = 0;
    let mut label_start = end;
    let mut last_label_alpha = false;
    // Forward over the domain's labels, the same way.
    let mut i = 0;
    while let Some((c, len)) = char_at(after, i) {
        let pos = a + 1 + i;
        i += len;
        if is_domain_char(c) {
            end = pos + len;
            continue;
        }
        if c == '.'
            && end == pos
            && pos > label_start
            && char_at(after, i).is_some_and(|(n, _)| is_domain_char(n))
        {
            labels += 1;
            label_start = pos + 1;
            continue;
        }
        break;
    }
    if end > label_start {
        let last = text.get(label_start..end)?;
        last_label_alpha = last.chars().count() >= 2 && last.chars().all(char::is_alphabetic);
        labels += 1;
    }
    if labels < 2 || !last_label_alpha || end - a > 254 {
        return None;
    }
    Some((start, end))
}

/// True when the local part starting at `start` is preceded, in the same token, by `://`.
fn url_user(h: &[u8], start: usize) -> bool {
    let from = start.saturating_sub(256);
    let token = &h[from..start];
    let token_start = token
        .iter()
        .rposition(|b| b.is_ascii_whitespace() || matches!(b, b'"' | b'\'' | b'<' | b'(' | b'='))
        .map_or(0, |p| p + 1);
    super::text::find(&token[token_start..], b"://").is_some()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn email(s: &str) -> Option<&str> {
        let a = s.find('@')?;
        at_sign(s, a).map(|(st, e)| &s[st..e])
    }

    #[test]
    fn positives() {
        assert_eq!(
            email("Email: rbrown@example.com\n"),
            Some("rbrown@example.com")
        );
        assert_eq!(
            email("<jürgen.müller@beispiel.de>"),
            Some("jürgen.müller@beispiel.de")
        );
        assert_eq!(
            email("user=rayerica+news@ware-williams.com src"),
            Some("rayerica+news@ware-williams.com")
        );
        assert_eq!(email("E-Mail: a.b@x.co.uk."), Some("a.b@x.co.uk"));
        assert_eq!(email("客户：x@example.com"), Some("x@example.com"));
        assert_eq!(email("Émile.Zoé@café.fr!"), Some("Émile.Zoé@café.fr"));
        assert_eq!(email("名前x@example.jp"), Some("x@example.jp"));
    }

    #[test]
    fn near_misses() {
        assert_eq!(email("Thanks @sarahblackwell for"), None);
        assert_eq!(email("postgres://app@db.internal:5432/app"), None);
        assert_eq!(email("a@b"), None);
        assert_eq!(email("a@b.c"), None);
        assert_eq!(email("x@1.2"), None);
        assert_eq!(email("@"), None);
        assert_eq!(email("x@例え.jp"), None);
        assert_eq!(email("x@a.日本"), None);
    }
}
