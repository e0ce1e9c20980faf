//! US social security numbers: `224-30-8280`, and `521 99 1103` next to "SSN".
//!
//! Validity rules: no area `000`, `666` or `9xx`, no group `00`, no serial `0000`. A number
//! of the dashed shape is an SSN unless the words before it call it something else (a part,
//! order or serial number); the spaced shape, common in other numbering, needs SSN context.

use super::text::{
    WINDOW, at, before, contains_word, digit_run, is_alnum, last_words, lookback, number,
};

/// Words that, among the last three before the number, make an SSN-shaped number an ID.
const NOT_SSN: [&[u8]; 25] = [
    b"part",
    b"item",
    b"product",
    b"model",
    b"serial",
    b"sku",
    b"order",
    b"invoice",
    b"tracking",
    b"ref",
    b"reference",
    b"ticket",
    b"case",
    b"po",
    b"lot",
    b"batch",
    b"account",
    b"routing",
    b"version",
    b"teilenummer",
    b"artikelnummer",
    b"bestellnummer",
    b"auftragsnummer",
    b"rechnungsnummer",
    b"seriennummer",
];

/// True when the line before `start` names an SSN.
pub(crate) fn ssn_context(h: &[u8], start: usize) -> bool {
    let mut buf = [0u8; WINDOW];
    let w = lookback(h, start, &mut buf);
    contains_word(w, b"ssn")
        || contains_word(w, b"ss#")
        || memchr::memmem::find(w, b"social security").is_some()
        || memchr::memmem::find(w, b"soc. sec").is_some()
}

/// An SSN starting at the digit `p`; returns its end.
pub(crate) fn at_digit(h: &[u8], p: usize) -> Option<usize> {
    if digit_run(h, p, 3) != 3 {
        return None;
    }
    let sep = at(h, p + 3)?;
    if !matches!(sep, b'-' | b' ') || digit_run(h, p + 4, 2) != 2 || at(h, p + 6) != Some(sep) {
        return None;
    }
    if digit_run(h, p + 7, 4) != 4 {
        return None;
    }
    let end = p + 11;
    // Part of a longer number on either side.
    if matches!(at(h, end), Some(b) if is_alnum(b))
        || (at(h, end) == Some(sep) && matches!(at(h, end + 1), Some(b) if b.is_ascii_digit()))
        || matches!(before(h, p), Some(b'-' | b'.' | b'/') if matches!(p.checked_sub(2).and_then(|i| at(h, i)), Some(b) if b.is_ascii_digit()))
    {
        return None;
    }
    let area = number(h, p, 3);
    let group = number(h, p + 4, 2);
    let serial = number(h, p + 7, 4);
    if area == 0 || area == 666 || area >= 900 || group == 0 || serial == 0 {
        return None;
    }
    if ssn_context(h, p) {
        return Some(end);
    }
    if sep == b' ' {
        return None;
    }
    let mut buf = [0u8; WINDOW];
    let w = lookback(h, p, &mut buf);
    if w.last() == Some(&b'#') || last_words(w, 3).any(|word| NOT_SSN.contains(&word)) {
        return None;
    }
    Some(end)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ssn(s: &str) -> Option<&str> {
        let h = s.as_bytes();
        let p = h.iter().position(|b| b.is_ascii_digit())?;
        at_digit(h, p).map(|e| &s[p..e])
    }

    #[test]
    fn positives() {
        assert_eq!(ssn("SSN on file: 224-30-8280\n"), Some("224-30-8280"));
        assert_eq!(ssn("SSN: 521 99 1103"), Some("521 99 1103"));
        assert_eq!(ssn("\"ssn\": \"647 36 9554\""), Some("647 36 9554"));
        assert_eq!(ssn("id 224-30-8280"), Some("224-30-8280"));
    }

    #[test]
    fn validity_rules() {
        for bad in [
            "SSN 000-12-3456",
            "SSN 666-12-3456",
            "SSN 912-12-3456",
            "SSN 123-00-4567",
            "SSN 123-45-0000",
        ] {
            assert_eq!(ssn(bad), None, "{bad}");
        }
    }

    #[test]
    fn near_misses() {
        assert_eq!(ssn("Part number 439-84-6499 is back-ordered"), None);
        assert_eq!(ssn("Order #439-84-6499"), None);
        assert_eq!(ssn("call 521 99 1103"), None);
        assert_eq!(ssn("1224-30-8280"), None);
        assert_eq!(ssn("224-30-82801"), None);
        assert_eq!(ssn("224-30-8280-1"), None);
    }
}
