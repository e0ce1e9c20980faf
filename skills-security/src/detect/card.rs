//! Payment card numbers: contiguous or in groups separated by spaces or dashes
//! (`5342-3511-6155-9409`, `3769 978213 53219`, `6759 6498 2643`), whose issuer prefix (IIN)
//! and length are those of a card brand, with a valid Luhn check digit where the brand uses
//! one. A 16-digit reference failing Luhn, or a Luhn-valid number under no brand's prefix
//! or at a length the brand never issues, is not a card.
//!
//! | brand | prefixes | lengths |
//! |---|---|---|
//! | Visa | 4 | 13-19 |
//! | Mastercard | 51-55, 2221-2720 | 16 |
//! | Maestro | 50, 56-69 | 12-19 |
//! | JCB | 3528-3589; 1800, 2131 | 16-19; 15-16 |
//! | UnionPay | 62, 81 | 16-19 (Luhn only on newer cards) |
//! | Discover | 6011, 644-649, 65, 622126-622925 | 16-19 |
//! | American Express | 34, 37 | 15 |
//! | Diners Club | 300-305, 3095, 36, 38-39 | 14-19 |
//! | Mir | 2200-2204 | 16-19 |
//!
//! Two forms need more than the number: a 12-digit number (Maestro's shortest) is as often
//! a tracking or account number, so it is a card only when grouped as cards are printed
//! (`6759 6498 2643`) or after a card label; a UnionPay number failing Luhn (older cards
//! have none) only after a card label (`卡号`, `Card no.`).

use super::label::{Cue, WordsOnce, nearest_cue};
use super::text::{at, before, digit_run, is_alnum};

/// The Luhn check over the digits of `s` (other bytes ignored).
pub(crate) fn luhn(s: &[u8]) -> bool {
    let mut sum = 0u32;
    let mut double = false;
    let mut count = 0;
    for &b in s.iter().rev() {
        if !b.is_ascii_digit() {
            continue;
        }
        let mut d = u32::from(b - b'0');
        if double {
            d *= 2;
            if d > 9 {
                d -= 9;
            }
        }
        sum += d;
        double = !double;
        count += 1;
    }
    count > 0 && sum.is_multiple_of(10)
}

/// One brand's issuer range: numbers whose first `digits` digits lie in `low..=high`, of
/// `min..=max` digits in all.
struct Range {
    digits: usize,
    low: u32,
    high: u32,
    min: usize,
    max: usize,
    luhn: Check,
}

/// Whether a brand's numbers carry a Luhn check digit.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Check {
    /// Always.
    Luhn,
    /// Not on every card (older UnionPay): a number failing Luhn needs a card label.
    Sometimes,
}

const fn iin(digits: usize, low: u32, high: u32, min: usize, max: usize) -> Range {
    Range {
        digits,
        low,
        high,
        min,
        max,
        luhn: Check::Luhn,
    }
}

/// The brands' ranges (see the module docs).
const RANGES: [Range; 20] = [
    iin(1, 4, 4, 13, 19),       // Visa
    iin(2, 51, 55, 16, 16),     // Mastercard
    iin(4, 2221, 2720, 16, 16), // Mastercard, 2-series
    iin(2, 50, 50, 12, 19),     // Maestro
    iin(2, 56, 69, 12, 19),     // Maestro
    iin(4, 3528, 3589, 16, 19), // JCB
    iin(4, 1800, 1800, 15, 16), // JCB
    iin(4, 2131, 2131, 15, 16), // JCB
    Range {
        digits: 2,
        low: 62,
        high: 62,
        min: 16,
        max: 19,
        luhn: Check::Sometimes,
    }, // UnionPay
    iin(2, 81, 81, 16, 19),     // UnionPay
    iin(4, 6011, 6011, 16, 19), // Discover
    iin(3, 644, 649, 16, 19),   // Discover
    iin(2, 65, 65, 16, 19),     // Discover
    iin(6, 622126, 622925, 16, 19), // Discover (co-branded UnionPay)
    iin(2, 34, 34, 15, 15),     // American Express
    iin(2, 37, 37, 15, 15),     // American Express
    iin(3, 300, 305, 14, 19),   // Diners Club
    iin(4, 3095, 3095, 14, 19), // Diners Club
    iin(2, 36, 36, 14, 19),     // Diners Club
    iin(2, 38, 39, 14, 19),     // Diners Club
];

/// Mir (2200-2204, 16-19 digits): kept apart so [`RANGES`] reads as the table above.
const MIR: Range = iin(4, 2200, 2204, 16, 19);

/// Words that introduce a card number.
const CARD_WORDS: [&[u8]; 14] = [
    b"card",
    b"cc",
    b"pan",
    b"visa",
    b"maestro",
    b"mastercard",
    b"karte",
    b"kartennummer",
    b"carte",
    b"tarjeta",
    "cartão".as_bytes(),
    b"carta",
    "卡号".as_bytes(),
    "银行卡".as_bytes(),
];

/// The digits of the number in `h[p..e]` (separators skipped): its length and whether its
/// prefix and length are a brand's, and the brand's Luhn rule holds.
fn branded(h: &[u8], p: usize, e: usize, labelled: &mut Option<bool>) -> bool {
    let mut len = 0usize;
    let mut lead = [0u32; 7];
    for &b in &h[p..e] {
        if b.is_ascii_digit() {
            len += 1;
            for (k, v) in lead.iter_mut().enumerate().skip(1) {
                if len <= k {
                    *v = *v * 10 + u32::from(b - b'0');
                }
            }
        }
    }
    let luhn_ok = luhn(&h[p..e]);
    let mut label = || *labelled.get_or_insert_with(|| card_label(h, p));
    RANGES.iter().chain([&MIR]).any(|r| {
        let prefix = lead.get(r.digits).copied().unwrap_or(0);
        if len < r.digits || !(r.low..=r.high).contains(&prefix) || !(r.min..=r.max).contains(&len)
        {
            return false;
        }
        luhn_ok || (r.luhn == Check::Sometimes && label())
    }) && (len > 12 || grouped_like_a_card(h, p, e) || label())
}

/// `dddd dddd dddd` (or with dashes), and no more groups before or after it: the way a
/// 12-digit card is printed (three groups of a longer number are not one).
fn grouped_like_a_card(h: &[u8], p: usize, e: usize) -> bool {
    let group_after = matches!(at(h, e), Some(b' ' | b'-'))
        && matches!(at(h, e + 1), Some(b) if b.is_ascii_digit());
    let group_before = matches!(before(h, p), Some(b' ' | b'-'))
        && matches!(p.checked_sub(2).and_then(|i| at(h, i)), Some(b) if b.is_ascii_digit());
    e - p == 14
        && digit_run(h, p, 4) == 4
        && digit_run(h, p + 5, 4) == 4
        && digit_run(h, p + 10, 4) == 4
        && !group_after
        && !group_before
}

/// True when the nearest cue of the label before `p` is a card word.
fn card_label(h: &[u8], p: usize) -> bool {
    static OWN: WordsOnce = WordsOnce::new(&[&CARD_WORDS]);
    static NONE: WordsOnce = WordsOnce::new(&[]);
    nearest_cue(h, p, OWN.get(), NONE.get()) == Some(Cue::Own)
}

/// A card number starting at the digit `p`; returns its end.
pub(crate) fn at_digit(h: &[u8], p: usize) -> Option<usize> {
    if !matches!(at(h, p), Some(b'1'..=b'8')) {
        return None;
    }
    if matches!(before(h, p), Some(b'-' | b'.' | b','))
        && matches!(p.checked_sub(2).and_then(|i| at(h, i)), Some(b) if b.is_ascii_digit())
    {
        return None;
    }
    let mut labelled = None;
    let first = digit_run(h, p, 19);
    if first >= 12 {
        if first > 19 {
            return None;
        }
        let end = p + first;
        if matches!(at(h, end), Some(b) if is_alnum(b)) {
            return None;
        }
        return branded(h, p, end, &mut labelled).then_some(end);
    }
    if first != 4 {
        return None;
    }
    let sep = at(h, p + 4)?;
    if !matches!(sep, b' ' | b'-') {
        return None;
    }
    // Groups are taken greedily, then given back one at a time (with spaces only: a
    // space-separated number may be followed by another one) until a valid card remains.
    let mut ends = [(0usize, 0usize); 6];
    let mut total = 4;
    let mut end = p + 4;
    let mut groups = 1;
    while at(h, end) == Some(sep) && groups < 6 {
        let n = digit_run(h, end + 1, 6);
        if !(1..=6).contains(&n) || matches!(at(h, end + 1 + n), Some(b) if b.is_ascii_alphabetic())
        {
            break;
        }
        total += n;
        end += 1 + n;
        if let Some(slot) = ends.get_mut(groups) {
            *slot = (end, total);
        }
        groups += 1;
    }
    let last = groups.saturating_sub(1);
    ends.iter()
        .enumerate()
        .take(groups)
        .skip(1)
        .rev()
        .filter(|(i, (_, t))| (12..=19).contains(t) && (*i == last || sep == b' '))
        .find_map(|(_, &(e, _))| {
            let ok = !matches!(at(h, e), Some(b) if is_alnum(b)) && branded(h, p, e, &mut labelled);
            ok.then_some(e)
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn card(s: &str) -> Option<&str> {
        let h = s.as_bytes();
        let p = h.iter().position(|b| b.is_ascii_digit())?;
        at_digit(h, p).map(|e| &s[p..e])
    }

    #[test]
    fn positives() {
        assert_eq!(
            card("Card on file 5342-3511-6155-9409, exp"),
            Some("5342-3511-6155-9409")
        );
        assert_eq!(card("card=4159357694385613\n"), Some("4159357694385613"));
        assert_eq!(card("\"6011 3998 1829 0900\""), Some("6011 3998 1829 0900"));
        assert_eq!(card("Card 3769 978213 53219,"), Some("3769 978213 53219"));
        assert_eq!(card("card=347559997163081"), Some("347559997163081"));
        assert_eq!(
            card("4539 1488 0343 6467 702.289.9674"),
            Some("4539 1488 0343 6467")
        );
    }

    #[test]
    fn near_misses() {
        assert_eq!(
            card("Tracking reference 5289 8240 4251 4975 (not a card)"),
            None
        );
        assert_eq!(card("ref 4140209210283484"), None);
        assert_eq!(card("12345678901234567890123"), None);
        assert_eq!(card("id 4159357694385613abc"), None);
        assert_eq!(card("7159357694385613"), None);
    }

    #[test]
    fn brand_edges() {
        // Maestro's 12 digits: grouped as a card, or after a card label.
        assert_eq!(card("Card: 6759 4637 2207\n"), Some("6759 4637 2207"));
        assert_eq!(card("maestro=501828644630"), Some("501828644630"));
        assert_eq!(card("tracking 561255882699 out"), None);
        // Nor the first three groups of a longer number failing Luhn.
        assert_eq!(card("ref 5898 9168 3171 5118 x"), None);
        assert_eq!(at_digit(b"ref 4436 6594 5388 2329 x", 9), None);
        // JCB's 15-digit 1800 and 2131 ranges, and 16 digits.
        assert_eq!(card("card 180025767580912."), Some("180025767580912"));
        assert_eq!(card("2131 0543 4091 245 ok"), Some("2131 0543 4091 245"));
        assert_eq!(card("3528914118061562"), Some("3528914118061562"));
        // Mastercard's 2-series, Diners 3095, Mir.
        assert_eq!(card("2221-7299-9915-9653"), Some("2221-7299-9915-9653"));
        assert_eq!(card("2720935533247229"), Some("2720935533247229"));
        assert_eq!(card("30957568216480"), Some("30957568216480"));
        assert_eq!(card("2200 4517 1832 6308"), Some("2200 4517 1832 6308"));
        // UnionPay without a Luhn digit only after a card label.
        assert_eq!(card("卡号：6212345678901234"), Some("6212345678901234"));
        assert_eq!(card("ref 6212345678901234"), None);
        // Luhn-valid, but no brand issues that prefix or length.
        assert_eq!(card("id 123464697265312"), None);
        assert_eq!(card("id 7012029952992402"), None);
        assert_eq!(card("id 2721191189278220"), None);
    }

    #[test]
    fn luhn_check() {
        assert!(luhn(b"4539 1488 0343 6467"));
        assert!(!luhn(b"4539 1488 0343 6468"));
        assert!(!luhn(b""));
    }
}
