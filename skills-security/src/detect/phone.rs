//! Telephone numbers: North American (`702.289.9674`, `201-774-9863`, `(617) 554-8108`,
//! `415 555 0134`, with a trunk or country prefix `1-415-555-0134`, `1 (415) 555-0134`,
//! `+1 313 398 6888`, `+1 415-555-0134`, `+1-415-994-4612`, the prefix inside the span)
//! and international (`+44 20 7946 0667`, `+33 1 88 19 68 63`, `+49 30 46909496`,
//! `+49 (0)40 7003575`, `+91-9738918935`). National numbers without `+` (`07116 490137`,
//! `0221/453508`, `090-1349-8124`, `(11) 96092-6902`, `13653358547`: 7 to 15 digits in
//! groups) only when the nearest cue of their label is a phone word (`Tel.`, `M:`,
//! `Natel`, `電話番号`, `手机`, `휴대전화`...).
//!
//! North American numbers need an area code and exchange starting 2-9; the space-separated
//! form must stand alone (no digit group right before or after it, so it is not a piece of
//! a longer spaced number). A number shaped like a phone is not one when it sits in a URL
//! path (`/orders/303-886-4374`) or after `#` with no phone word, or when its label
//! ([`label`](super::label)) names another identifier nearer than any phone word: `Order
//! ref (legacy system):`, `Tracking number of the returned item:`, `Invoice`, `SKU`,
//! `Ticket`, `Account`... while `call`, `phone`, `tel`, `mobile`, `fax`... keep it a phone
//! (`Order contact phone: ...`).

use super::label::{Cue, nearest_cue};
use super::text::{at, before, digit_run, is_alnum};

/// Words that make a number a phone, whatever else the label says.
const PHONE_WORDS: [&[u8]; 36] = [
    b"phone",
    b"phones",
    b"telephone",
    b"tel",
    b"tele",
    b"telefon",
    b"telefone",
    b"telefono",
    "teléfono".as_bytes(),
    "tél".as_bytes(),
    b"cell",
    b"cellphone",
    b"mobile",
    b"mob",
    b"mobil",
    "móvil".as_bytes(),
    b"movil",
    b"handy",
    b"portable",
    b"fax",
    b"call",
    b"called",
    b"callback",
    b"caller",
    b"ph",
    b"text",
    b"sms",
    b"whatsapp",
    b"dial",
    b"reach",
    b"hotline",
    b"landline",
    b"celular",
    b"cellulare",
    "電話".as_bytes(),
    "携帯".as_bytes(),
];

/// Words that introduce a national number (one written without `+` and country code,
/// `0221/453508`, `090-1349-8124`): the [`PHONE_WORDS`] and [`NATIONAL_EXTRA`]. Such a
/// number needs one as the nearest cue of its label.
const NATIONAL_WORDS: [&[u8]; PHONE_WORDS.len() + NATIONAL_EXTRA.len()] =
    concat(PHONE_WORDS, NATIONAL_EXTRA);

/// The words beyond [`PHONE_WORDS`] that may introduce a national number (`M:`, `Natel`,
/// `電話番号`, `手机`, `휴대전화`...), cues for national numbers only.
const NATIONAL_EXTRA: [&[u8]; 20] = [
    b"m",
    b"t",
    b"tlf",
    b"tfno",
    b"telefoon",
    b"natel",
    b"line",
    b"contact",
    "電話番号".as_bytes(),
    "携帯電話".as_bytes(),
    "手机".as_bytes(),
    "手机号".as_bytes(),
    "电话".as_bytes(),
    "联系电话".as_bytes(),
    "전화".as_bytes(),
    "전화번호".as_bytes(),
    "휴대전화".as_bytes(),
    "휴대폰".as_bytes(),
    "연락처".as_bytes(),
    b"gsm",
];

/// Two word lists as one, at compile time.
const fn concat<const A: usize, const B: usize, const C: usize>(
    a: [&'static [u8]; A],
    b: [&'static [u8]; B],
) -> [&'static [u8]; C] {
    let mut out: [&'static [u8]; C] = [b""; C];
    let mut i = 0;
    while i < A {
        out[i] = a[i];
        i += 1;
    }
    while i < C {
        out[i] = b[i - A];
        i += 1;
    }
    out
}

/// Words naming identifiers that look like phone numbers.
const NOT_PHONE: [&[u8]; 55] = [
    b"error",
    b"order",
    b"orders",
    b"invoice",
    b"inv",
    b"tracking",
    b"shipment",
    b"parcel",
    b"package",
    b"waybill",
    b"ref",
    b"reference",
    b"part",
    b"sku",
    b"serial",
    b"ticket",
    b"case",
    b"confirmation",
    b"conf",
    b"po",
    b"id",
    b"build",
    b"version",
    b"item",
    b"product",
    b"model",
    b"lot",
    b"batch",
    b"transaction",
    b"txn",
    b"receipt",
    b"booking",
    b"reservation",
    b"claim",
    b"account",
    b"acct",
    b"rma",
    b"teilenummer",
    b"artikelnummer",
    b"bestellnummer",
    b"auftragsnummer",
    b"rechnungsnummer",
    b"seriennummer",
    b"sendungsnummer",
    b"bestellung",
    b"rechnung",
    b"auftrag",
    b"commande",
    b"facture",
    b"suivi",
    b"pedido",
    b"factura",
    b"referencia",
    "référence".as_bytes(),
    b"seguimiento",
];

/// True when the context before `start` says the number is something else.
fn not_a_phone(h: &[u8], start: usize) -> bool {
    if matches!(before(h, start), Some(b'/' | b'_')) {
        return true;
    }
    match nearest_cue(h, start, &PHONE_WORDS, &NOT_PHONE) {
        Some(Cue::Own) => false,
        Some(Cue::Other) => true,
        None => {
            let mut i = start;
            while i > 0 && h[i - 1] == b' ' {
                i -= 1;
            }
            before(h, i) == Some(b'#')
        }
    }
}

/// True when the nearest cue of the label before `start` introduces a phone number.
fn phone_label(h: &[u8], start: usize) -> bool {
    if matches!(before(h, start), Some(b'/' | b'_' | b'#')) {
        return false;
    }
    nearest_cue(h, start, &NATIONAL_WORDS, &NOT_PHONE) == Some(Cue::Own)
}

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
        let single_ok = groups > 1 || seen > 0 || at(h, start) == Some(b'0') || n >= 10;
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

/// A national number (no `+`, often a trunk `0`) at the digit `p`, only after a phone
/// label: `07116 490137`, `0221/453508`, `01 05 87 16 97`, `06-32497666`,
/// `090-1349-8124`, `13653358547`; 7 to 15 digits.
pub(crate) fn national_at_digit(h: &[u8], p: usize) -> Option<usize> {
    if matches!(before(h, p), Some(b'-' | b'.' | b'/' | b'+' | b'$')) {
        return None;
    }
    let end = national_groups(h, p, 0, 12)?;
    phone_label(h, p).then_some(end)
}

/// A national number with a parenthesised area code at the `(` at `p`: `(11) 96092-6902`,
/// `(02) 9034 2011`, only after a phone label.
fn paren_national(h: &[u8], p: usize) -> Option<usize> {
    let n = digit_run(h, p + 1, 5);
    if !(1..=5).contains(&n) || at(h, p + 1 + n) != Some(b')') {
        return None;
    }
    let mut i = p + 2 + n;
    if at(h, i) == Some(b' ') {
        i += 1;
    }
    let end = national_groups(h, i, n, 8)?;
    phone_label(h, p).then_some(end)
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
    (!not_a_phone(h, p)).then_some(end)
}

/// `(ddd) ddd-dddd` at the `(` at `p`.
pub(crate) fn at_paren(h: &[u8], p: usize) -> Option<usize> {
    match paren_nanp(h, p) {
        Some(end) => (!not_a_phone(h, p)).then_some(end),
        None => paren_national(h, p),
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
    // +1: a North American number follows, after a space, dash or dot (or straight
    // into its parenthesised area code).
    if cc == 1 && at(h, p + 1) == Some(b'1') {
        let i = p + 2;
        let sep = at(h, i)?;
        if sep == b'(' {
            return paren_nanp(h, i);
        }
        if !matches!(sep, b' ' | b'-' | b'.') {
            return None;
        }
        if at(h, i + 1) == Some(b'(') {
            return paren_nanp(h, i + 1);
        }
        return nanp_groups(h, i + 1, b"-. ");
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
        // The first group may be a whole national number (`+91-9738918935`).
        let max = if groups == 1 && open == 0 { 12 } else { 8 };
        let n = digit_run(h, end + 1 + open, max);
        if n == 0 || n > max || total + n > 15 || groups >= 7 {
            break;
        }
        if close == 1 && at(h, end + 1 + open + n) != Some(b')') {
            break;
        }
        let mut next = end + 1 + open + n + close;
        // The trunk `(0)` written inside an international number: `+49 (0)40 7003575`.
        if close == 1
            && n == 1
            && at(h, end + 2) == Some(b'0')
            && matches!(at(h, next), Some(b) if b.is_ascii_digit())
        {
            let m = digit_run(h, next, 8);
            if m > 8 || total + 1 + m > 15 {
                break;
            }
            total += m;
            next += m;
        }
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
