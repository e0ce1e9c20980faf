//! Telephone numbers, found by shape and context in the one pass and then checked against
//! region metadata ([`phone_region`](super::phone_region), libphonenumber's): a shape alone
//! never makes a phone.
//!
//! * North American (`702.289.9674`, `201-774-9863`, `(617) 554-8108`, `415 555 0134`,
//!   with a trunk or country prefix `1-415-555-0134`, `1 (415) 555-0134`, the prefix inside
//!   the span): an area code and exchange starting 2-9, and a number some region of the
//!   plan issues, or one a phone label introduces. The space-separated form must stand
//!   alone (no digit group right before or after it).
//! * International (`+44 20 7946 0667`, `+33 1 88 19 68 63`, `+49 30 46909496`, `+49
//!   (0)40 7003575`, `+44(0)115 4960914`, `+91-9738918935`, `+4915112345678`): a number some
//!   region of its country code issues.
//! * National, without `+` (`07116 490137`, `0221/453508`, `090-1349-8124`, `(11)
//!   96092-6902`, `22-26591234`, `555 0134`, `0049 30 46909496`: 7 to 15 digits in groups):
//!   after a phone label (`Tel.`, `M:`, `Desk`, `Office`, `Fax`, `Natel`, `電話番号`,
//!   `手机`, `휴대전화`...) when some covered region issues it or it has a local number's
//!   length; or alone on its line in a contact block (a signature, a contact card) when
//!   some covered region issues it.
//!
//! A number shaped like a phone is not one when it sits in a URL path
//! (`/orders/303-886-4374`) or after `#` with no phone word, when its label
//! ([`label`](super::label)) names another identifier nearer than any phone word (`Order
//! ref (legacy system):`, `Tracking number of the returned item:`, `Invoice`, `SKU`...,
//! while `call`, `phone`, `tel`, `mobile`, `fax`... keep it a phone), or when a street name
//! follows it (`221 4567 Baker Road`). Dates and versions never reach it: the date
//! recognizer runs first, and every group of a national number has two digits or more.

use super::phone_context::{alone_on_line, contact_block, not_a_phone, phone_label, street_after};
use super::phone_region::{self, National};
use super::text::{at, before, digit_run, is_alnum};

/// Digit groups from `i` separated by single spaces, dashes, dots or slashes, with `seen`
/// digits already counted: the ends where the number may stop with 7 to 15 digits in
/// all, longest first, that end cleanly. Every group has two digits or more (`5.13.2.232`
/// is a version); a number of one group needs a trunk `0` or 10 to 12 digits (an 8-digit
/// record number is not a phone); the North American and SSN shapes (`ddd-ddd-dddd`
/// with area 2-9, `ddd-dd-dddd`) are left to their own recognizers, which have judged
/// them already (`010 930 2918` is not North American, so it is read here).
fn national_groups(h: &[u8], start: usize, seen: usize, first_max: usize) -> Option<usize> {
    let mut i = start;
    let mut ends = [0usize; 8];
    let mut count = 0;
    let mut total = seen;
    let mut max = first_max;
    let mut groups = 0;
    let mut shape = [0usize; 3];
    let mut seps = 0u8;
    loop {
        let n = digit_run(h, i, max);
        if n < 2 || n > max || total + n > 15 {
            break;
        }
        if let Some(g) = shape.get_mut(groups) {
            *g = n;
        }
        groups += 1;
        total += n;
        i += n;
        let single_ok = groups > 1 || seen > 0 || at(h, start) == Some(b'0') || n >= 9;
        if total >= 7 && single_ok && count < ends.len() {
            ends[count] = i;
            count += 1;
        }
        max = 8;
        match at(h, i) {
            Some(b @ (b' ' | b'-' | b'.' | b'/')) if matches!(at(h, i + 1), Some(b) if b.is_ascii_digit()) =>
            {
                seps |= match b {
                    b' ' => 1,
                    b'-' => 2,
                    b'.' => 4,
                    _ => 8,
                };
                i += 1;
            }
            _ => break,
        }
    }
    let end = ends[..count].iter().rev().find_map(|&e| closed(h, e))?;
    let judged = seen == 0
        && (nanp_digit(at(h, start)) || shape[1] == 2)
        && end == ends[count - 1]
        && groups == 3
        && seps.count_ones() == 1
        && matches!(shape, [3, 3, 4] | [3, 2, 4]);
    (!judged).then_some(end)
}

/// A national number (no `+`, often a trunk `0`) at the digit `p`: `07116 490137`,
/// `0221/453508`, `01 05 87 16 97`, `06-32497666`, `090-1349-8124`, `13653358547`; 7 to
/// 15 digits, or one dialled with the international prefix `00` (`0049 30 46909496`).
/// Only after a phone label, or alone on its line in a contact block.
pub(crate) fn national_at_digit(h: &[u8], p: usize) -> Option<usize> {
    if matches!(before(h, p), Some(b'-' | b'.' | b'/' | b'+' | b'$')) {
        return None;
    }
    let end = national_groups(h, p, 0, 12)?;
    national_ok(h, p, p, end).then_some(end)
}

/// Whether the national number from `s` to `end` (its label read before `label_at`) is a
/// phone: a phone label and a number some covered region issues (or one of a local
/// number's length), or a line of its own in a contact block and a number some region
/// issues; never a street number.
fn national_ok(h: &[u8], label_at: usize, s: usize, end: usize) -> bool {
    if street_after(h, end) {
        return false;
    }
    let labelled = phone_label(h, label_at);
    if !labelled && !alone_on_line(h, label_at, end) {
        return false;
    }
    let validity = if h.get(s..s + 2) == Some(b"00") {
        // The international prefix: the country code follows.
        if phone_region::international(h, s + 2, end, None) {
            National::Valid
        } else {
            National::Invalid
        }
    } else {
        phone_region::national(h, s, end)
    };
    match validity {
        National::Invalid => false,
        National::LocalOnly => labelled,
        National::Valid => labelled || contact_block(h, label_at, end),
    }
}

/// A national number with a parenthesised area code at the `(` at `p`: `(11) 96092-6902`,
/// `(02) 9034 2011`, `(0121)4960293`, as [`national_at_digit`] has it.
fn paren_national(h: &[u8], p: usize) -> Option<usize> {
    let n = digit_run(h, p + 1, 5);
    if !(1..=5).contains(&n) || at(h, p + 1 + n) != Some(b')') {
        return None;
    }
    let mut i = p + 2 + n;
    if matches!(at(h, i), Some(b' ' | b'-' | b'.')) {
        i += 1;
    }
    let end = national_groups(h, i, n, 9)?;
    national_ok(h, p, p + 1, end).then_some(end)
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

/// `ddd-ddd-dddd`, `ddd.ddd.dddd` or `ddd ddd dddd` starting at `a`, its two separators
/// alike; returns the end.
fn nanp_groups(h: &[u8], a: usize, seps: &[u8]) -> Option<usize> {
    let sep = at(h, a + 3)?;
    if !seps.contains(&sep)
        || digit_run(h, a, 3) != 3
        || digit_run(h, a + 4, 3) != 3
        || at(h, a + 7) != Some(sep)
        || digit_run(h, a + 8, 4) != 4
        || !nanp_digit(at(h, a))
        || !nanp_digit(at(h, a + 4))
    {
        return None;
    }
    let end = closed(h, a + 12)?;
    // A spaced number must not run on into another digit group.
    if sep == b' '
        && at(h, end) == Some(b' ')
        && matches!(at(h, end + 1), Some(b) if b.is_ascii_digit())
    {
        return None;
    }
    Some(end)
}

/// A North American number at the digit `p`: `ddd-ddd-dddd`, `ddd.ddd.dddd`, `ddd ddd
/// dddd`, or any of them or `(ddd) ddd-dddd` after a trunk `1` and a separator.
pub(crate) fn nanp_at_digit(h: &[u8], p: usize) -> Option<usize> {
    if matches!(before(h, p), Some(b'-' | b'.')) {
        return None;
    }
    // Part of a longer spaced number (`07 415 555 0134`, `12 345 678 9012`).
    let spaced_run_before = before(h, p) == Some(b' ')
        && matches!(p.checked_sub(2).and_then(|i| at(h, i)), Some(b) if b.is_ascii_digit());
    let end = if at(h, p) == Some(b'1') && digit_run(h, p, 2) == 1 {
        let sep = at(h, p + 1)?;
        if !matches!(sep, b' ' | b'-' | b'.') || spaced_run_before {
            return None;
        }
        if sep == b' ' && at(h, p + 2) == Some(b'(') {
            paren_nanp(h, p + 2)?
        } else {
            let seps: &[u8] = if sep == b' ' { b"-. " } else { &[sep] };
            nanp_groups(h, p + 2, seps)?
        }
    } else {
        let seps: &[u8] = if spaced_run_before { b"-." } else { b"-. " };
        nanp_groups(h, p, seps)?
    };
    (!not_a_phone(h, p) && nanp_ok(h, p, end)).then_some(end)
}

/// A North American number some region of the plan issues, or one a phone label
/// introduces (`Callback number: 957.691.1934`: an area code not yet assigned is still
/// written as a phone); never a street number.
fn nanp_ok(h: &[u8], p: usize, end: usize) -> bool {
    (phone_region::north_american(h, p, end) || phone_label(h, p)) && !street_after(h, end)
}

/// `(ddd) ddd-dddd` at the `(` at `p`.
pub(crate) fn at_paren(h: &[u8], p: usize) -> Option<usize> {
    match paren_nanp(h, p) {
        Some(end) if nanp_ok(h, p, end) => (!not_a_phone(h, p)).then_some(end),
        _ => paren_national(h, p),
    }
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

/// An international number at the `+` at `p`: the country code and groups of digits
/// separated by single spaces, dashes or dots (a group may be a parenthesised area code,
/// and a trunk `(0)` may follow the country code: `+44(0)115 4960914`, `+49 (0)40
/// 7003575`), 8 to 15 digits in all, or one run of 10 to 15 (E.164). Groups are taken
/// greedily, then given back one at a time until the number ends cleanly and its country's
/// metadata says some region there issues it (so `+44 20 7946 0667 172.191.37.15` is a
/// phone, then an address).
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
    let first = digit_run(h, p + 1, 15);
    if first == 0 || first > 15 {
        return None;
    }
    let mut end = p + 1 + first;
    let mut ends = [0usize; 8];
    // +4915112345678: one run of digits is a whole number from 10 digits on.
    if (10..=15).contains(&first) {
        ends[0] = end;
    }
    let mut total = first;
    let mut groups = 1;
    let mut trunk = None;
    loop {
        // The trunk `(0)` right after the country code, with or without a space before it.
        let gap = usize::from(matches!(at(h, end), Some(b' ' | b'-' | b'.')));
        if groups == 1 && h.get(end + gap..end + gap + 3) == Some(b"(0)") {
            trunk = Some(end + gap + 1);
            end += gap + 3;
            if at(h, end) == Some(b' ') {
                end += 1;
            }
            let n = digit_run(h, end, 8);
            if n == 0 || n > 8 || total + n > 15 {
                break;
            }
            end += n;
            total += n;
        } else {
            let open = usize::from(at(h, end + gap) == Some(b'('));
            if gap + open == 0 {
                break;
            }
            // The first group may be a whole national number (`+91-9738918935`).
            let max = if groups == 1 && open == 0 { 12 } else { 8 };
            let n = digit_run(h, end + gap + open, max);
            if n == 0 || n > max || total + n > 15 || groups >= 7 {
                break;
            }
            if open == 1 && at(h, end + gap + 1 + n) != Some(b')') {
                break;
            }
            let next = end + gap + open + n + open;
            if matches!(at(h, next), Some(b) if b.is_ascii_alphabetic()) {
                break;
            }
            total += n;
            end = next;
        }
        if let Some(slot) = ends.get_mut(groups) {
            *slot = if (8..=15).contains(&total) { end } else { 0 };
        }
        groups += 1;
        if groups >= ends.len() {
            break;
        }
    }
    ends.iter()
        .take(groups)
        .rev()
        .filter(|&&e| e > 0)
        .find_map(|&e| closed(h, e).filter(|&e| phone_region::international(h, p + 1, e, trunk)))
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
