//! Telephone numbers: North American (`702.289.9674`, `201-774-9863`, `(617) 554-8108`,
//! `+1 313 398 6888`, `+1-415-994-4612`) and international (`+44 20 7946 0667`,
//! `+33 1 88 19 68 63`, `+49 30 46909496`).
//!
//! North American numbers need an area code and exchange starting 2-9. A number shaped like
//! a phone but introduced as an order, invoice or tracking number, or sitting in a URL path
//! (`/orders/303-886-4374`), is not a phone.

use super::text::{WINDOW, at, before, digit_run, is_alnum, last_words, lookback};

const NOT_PHONE: [&[u8]; 22] = [
    b"order",
    b"orders",
    b"invoice",
    b"tracking",
    b"ref",
    b"reference",
    b"part",
    b"sku",
    b"serial",
    b"ticket",
    b"case",
    b"confirmation",
    b"po",
    b"id",
    b"build",
    b"version",
    b"teilenummer",
    b"artikelnummer",
    b"bestellnummer",
    b"auftragsnummer",
    b"rechnungsnummer",
    b"seriennummer",
];

/// True when the words right before `start` say the number is something else.
fn not_a_phone(h: &[u8], start: usize) -> bool {
    if matches!(before(h, start), Some(b'/' | b'#' | b'_')) {
        return true;
    }
    let mut buf = [0u8; WINDOW];
    let w = lookback(h, start, &mut buf);
    let trimmed = w.trim_ascii_end();
    trimmed.last() == Some(&b'#') || last_words(trimmed, 2).any(|word| NOT_PHONE.contains(&word))
}

fn nanp_digit(b: Option<u8>) -> bool {
    matches!(b, Some(b'2'..=b'9'))
}

/// The end of a number, or `None` when it runs on into more digits or letters.
fn closed(h: &[u8], end: usize) -> Option<usize> {
    match at(h, end) {
        Some(b) if is_alnum(b) => None,
        Some(b'-' | b'.') if matches!(at(h, end + 1), Some(b) if b.is_ascii_digit()) => None,
        _ => Some(end),
    }
}

/// `ddd-ddd-dddd` / `ddd.ddd.dddd` at the digit `p`.
pub(crate) fn nanp_at_digit(h: &[u8], p: usize) -> Option<usize> {
    if digit_run(h, p, 3) != 3 {
        return None;
    }
    let sep = at(h, p + 3)?;
    if !matches!(sep, b'-' | b'.')
        || digit_run(h, p + 4, 3) != 3
        || at(h, p + 7) != Some(sep)
        || digit_run(h, p + 8, 4) != 4
    {
        return None;
    }
    if !nanp_digit(at(h, p)) || !nanp_digit(at(h, p + 4)) {
        return None;
    }
    if matches!(before(h, p), Some(b'-' | b'.')) {
        return None;
    }
    let end = closed(h, p + 12)?;
    (!not_a_phone(h, p)).then_some(end)
}

/// `(ddd) ddd-dddd` at the `(` at `p`.
pub(crate) fn at_paren(h: &[u8], p: usize) -> Option<usize> {
    let end = paren_nanp(h, p)?;
    (!not_a_phone(h, p)).then_some(end)
}

fn paren_nanp(h: &[u8], p: usize) -> Option<usize> {
    if digit_run(h, p + 1, 3) != 3 || at(h, p + 4) != Some(b')') || !nanp_digit(at(h, p + 1)) {
        return None;
    }
    let mut i = p + 5;
    if at(h, i) == Some(b' ') {
        i += 1;
    }
    if digit_run(h, i, 3) != 3 || !nanp_digit(at(h, i)) {
        return None;
    }
    if !matches!(at(h, i + 3), Some(b'-' | b'.' | b' ')) || digit_run(h, i + 4, 4) != 4 {
        return None;
    }
    closed(h, i + 8)
}

/// An international number at the `+` at `p`.
pub(crate) fn at_plus(h: &[u8], p: usize) -> Option<usize> {
    if !matches!(
        before(h, p),
        None | Some(
            b' ' | b'\t'
                | b'\n'
                | b'"'
                | b'\''
                | b'('
                | b':'
                | b','
                | b'='
                | b'<'
                | b'>'
                | b';'
                | b'/'
                | b'['
        )
    ) && !matches!(before(h, p), Some(b) if b >= 0x80)
    {
        return None;
    }
    if at(h, p + 1) == Some(b'0') {
        return None;
    }
    // +4915112345678: one run of digits (E.164 without separators).
    let whole = digit_run(h, p + 1, 15);
    if whole > 3 {
        return if (10..=15).contains(&whole) {
            closed(h, p + 1 + whole)
        } else {
            None
        };
    }
    let cc = whole;
    if cc == 0 {
        return None;
    }
    // +1: a North American number follows.
    if cc == 1 && at(h, p + 1) == Some(b'1') {
        let i = p + 2;
        let sep = at(h, i)?;
        if !matches!(sep, b' ' | b'-' | b'.') {
            return None;
        }
        if at(h, i + 1) == Some(b'(') {
            return paren_nanp(h, i + 1);
        }
        let a = i + 1;
        if digit_run(h, a, 3) == 3
            && at(h, a + 3) == Some(sep)
            && digit_run(h, a + 4, 3) == 3
            && at(h, a + 7) == Some(sep)
            && digit_run(h, a + 8, 4) == 4
            && nanp_digit(at(h, a))
        {
            return closed(h, a + 12);
        }
        return None;
    }
    // Groups of digits separated by single spaces, dashes or dots: 8 to 15 digits in all.
    // Groups are taken greedily, then given back one at a time until the number ends
    // cleanly (so `+44 20 7946 0667 172.191.37.15` is a phone, then an address).
    let mut ends = [(0usize, 0usize); 8];
    let mut total = cc;
    let mut end = p + 1 + cc;
    let mut groups = 1;
    while let Some(b' ' | b'-' | b'.') = at(h, end) {
        let (open, close) = if at(h, end + 1) == Some(b'(') {
            (1, 1)
        } else {
            (0, 0)
        };
        let n = digit_run(h, end + 1 + open, 8);
        if n == 0 || n > 8 || total + n > 15 || groups >= 7 {
            break;
        }
        if close == 1 && at(h, end + 1 + open + n) != Some(b')') {
            break;
        }
        let next = end + 1 + open + n + close;
        if matches!(at(h, next), Some(b) if b.is_ascii_alphabetic()) {
            break;
        }
        total += n;
        end = next;
        if let Some(slot) = ends.get_mut(groups) {
            *slot = (end, total);
        }
        groups += 1;
    }
    ends.iter()
        .take(groups)
        .skip(1)
        .rev()
        .filter(|(_, t)| (8..=15).contains(t))
        .find_map(|&(e, _)| closed(h, e))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn phone(s: &str) -> Option<&str> {
        let h = s.as_bytes();
        let p = h
            .iter()
            .position(|b| b.is_ascii_digit() || *b == b'+' || *b == b'(')?;
        let end = match h[p] {
            b'+' => at_plus(h, p),
            b'(' => at_paren(h, p),
            _ => nanp_at_digit(h, p),
        }?;
        Some(&s[p..end])
    }

    #[test]
    fn north_american() {
        assert_eq!(phone("Phone: 702.289.9674\n"), Some("702.289.9674"));
        assert_eq!(phone("phone=773-236-0130 name"), Some("773-236-0130"));
        assert_eq!(phone("contact: (617) 554-8108"), Some("(617) 554-8108"));
        assert_eq!(phone("x +1 313 398 6888\n"), Some("+1 313 398 6888"));
        assert_eq!(phone("\"+1-415-994-4612\""), Some("+1-415-994-4612"));
    }

    #[test]
    fn international() {
        assert_eq!(phone("Tel: +44 20 7946 0667\n"), Some("+44 20 7946 0667"));
        assert_eq!(
            phone("电话：+33 1 88 19 68 63 🚀"),
            Some("+33 1 88 19 68 63")
        );
        assert_eq!(phone("Tel: +49 30 46909496."), Some("+49 30 46909496"));
        assert_eq!(phone("at +44 7489 171744 or"), Some("+44 7489 171744"));
        assert_eq!(phone("+4915112345678"), Some("+4915112345678"));
        assert_eq!(
            phone("+44 20 7946 0667 172.191.37.15"),
            Some("+44 20 7946 0667")
        );
    }

    #[test]
    fn near_misses() {
        assert_eq!(phone("Order #646-804-5439 was shipped"), None);
        assert_eq!(phone("GET /api/v2/orders/303-886-4374 HTTP/1.1"), None);
        assert_eq!(phone("Your order # 919-328-2417 has shipped"), None);
        assert_eq!(phone("code 123-456-7890"), None);
        assert_eq!(phone("a+44 20 7946 0667"), None);
        assert_eq!(phone("3 +4 5"), None);
        assert_eq!(phone("1702.289.96745"), None);
    }
}
