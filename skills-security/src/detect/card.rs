//! Payment card numbers: 13-19 digits, contiguous or in groups separated by spaces or
//! dashes (`5342-3511-6155-9409`, `3769 978213 53219`), with a card-network first digit
//! (2-6) and a valid Luhn check digit. A 16-digit reference failing Luhn is not a card.

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

/// A card number starting at the digit `p`; returns its end.
pub(crate) fn at_digit(h: &[u8], p: usize) -> Option<usize> {
    if !matches!(at(h, p), Some(b'2'..=b'6')) {
        return None;
    }
    if matches!(before(h, p), Some(b'-' | b'.' | b','))
        && matches!(p.checked_sub(2).and_then(|i| at(h, i)), Some(b) if b.is_ascii_digit())
    {
        return None;
    }
    let first = digit_run(h, p, 19);
    if first >= 13 {
        if first > 19 {
            return None;
        }
        let end = p + first;
        if matches!(at(h, end), Some(b) if is_alnum(b)) {
            return None;
        }
        return luhn(&h[p..end]).then_some(end);
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
        .filter(|(i, (_, t))| (13..=19).contains(t) && (*i == last || sep == b' '))
        .find_map(|(_, &(e, _))| {
            let ok = !matches!(at(h, e), Some(b) if is_alnum(b)) && luhn(&h[p..e]);
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
    fn luhn_check() {
        assert!(luhn(b"4539 1488 0343 6467"));
        assert!(!luhn(b"4539 1488 0343 6468"));
        assert!(!luhn(b""));
    }
}
