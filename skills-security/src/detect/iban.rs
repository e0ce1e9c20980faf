//! International bank account numbers, contiguous (`DE31580009631800986331`) or in groups of
//! four (`IT03 Y163 2870 8317 2788 9579 868`).
//!
//! The country code fixes the length, so the parser takes exactly that many characters and
//! never runs on into a following word; the ISO 13616 mod-97 check must then give 1.

use super::text::{before, is_alnum};

/// Country code and IBAN length (ISO 13616 registry).
const LENGTHS: [(&[u8; 2], u8); 89] = [
    (b"AD", 24),
    (b"AE", 23),
    (b"AL", 28),
    (b"AT", 20),
    (b"AZ", 28),
    (b"BA", 20),
    (b"BE", 16),
    (b"BG", 22),
    (b"BH", 22),
    (b"BI", 27),
    (b"BR", 29),
    (b"BY", 28),
    (b"CH", 21),
    (b"CR", 22),
    (b"CY", 28),
    (b"CZ", 24),
    (b"DE", 22),
    (b"DJ", 27),
    (b"DK", 18),
    (b"DO", 28),
    (b"EE", 20),
    (b"EG", 29),
    (b"ES", 24),
    (b"FI", 18),
    (b"FK", 18),
    (b"FO", 18),
    (b"FR", 27),
    (b"GB", 22),
    (b"GE", 22),
    (b"GI", 23),
    (b"GL", 18),
    (b"GR", 27),
    (b"GT", 28),
    (b"HR", 21),
    (b"HU", 28),
    (b"IE", 22),
    (b"IL", 23),
    (b"IQ", 23),
    (b"IS", 26),
    (b"IT", 27),
    (b"JO", 30),
    (b"KW", 30),
    (b"KZ", 20),
    (b"LB", 28),
    (b"LC", 32),
    (b"LI", 21),
    (b"LT", 20),
    (b"LU", 20),
    (b"LV", 21),
    (b"LY", 25),
    (b"MC", 27),
    (b"MD", 24),
    (b"ME", 22),
    (b"MK", 19),
    (b"MN", 20),
    (b"MR", 27),
    (b"MT", 31),
    (b"MU", 30),
    (b"NI", 28),
    (b"NL", 18),
    (b"NO", 15),
    (b"OM", 23),
    (b"PK", 24),
    (b"PL", 28),
    (b"PS", 29),
    (b"PT", 25),
    (b"QA", 29),
    (b"RO", 24),
    (b"RS", 22),
    (b"RU", 33),
    (b"SA", 24),
    (b"SC", 31),
    (b"SD", 18),
    (b"SE", 24),
    (b"SI", 19),
    (b"SK", 24),
    (b"SM", 27),
    (b"SO", 23),
    (b"ST", 25),
    (b"SV", 28),
    (b"TL", 23),
    (b"TN", 24),
    (b"TR", 26),
    (b"UA", 29),
    (b"VA", 22),
    (b"VG", 24),
    (b"XK", 20),
    (b"YE", 30),
    (b"MA", 28),
];

fn length_for(cc: &[u8]) -> Option<usize> {
    LENGTHS
        .iter()
        .find(|(c, _)| c[..] == *cc)
        .map(|&(_, n)| usize::from(n))
}

/// The ISO 7064 mod-97-10 check over the (separator-free) characters.
pub(crate) fn mod97(chars: &[u8]) -> bool {
    if chars.len() < 5 {
        return false;
    }
    let (head, tail) = chars.split_at(4);
    let mut rem = 0u32;
    for &c in tail.iter().chain(head) {
        let v = match c {
            b'0'..=b'9' => u32::from(c - b'0'),
            b'A'..=b'Z' => u32::from(c - b'A') + 10,
            _ => return false,
        };
        rem = if v >= 10 {
            (rem * 100 + v) % 97
        } else {
            (rem * 10 + v) % 97
        };
    }
    rem == 1
}

/// An IBAN whose country code starts at `s`; returns its end.
pub(crate) fn at(h: &[u8], s: usize) -> Option<usize> {
    if matches!(before(h, s), Some(b) if is_alnum(b)) {
        return None;
    }
    let cc = h.get(s..s + 2)?;
    if !cc.iter().all(u8::is_ascii_uppercase) {
        return None;
    }
    let len = length_for(cc)?;
    if !h.get(s + 2..s + 4)?.iter().all(u8::is_ascii_digit) {
        return None;
    }
    let mut chars = [0u8; 34];
    let mut n = 0;
    let mut i = s;
    let mut grouped = false;
    while n < len {
        let b = at_byte(h, i)?;
        if b == b' ' && n % 4 == 0 && n > 0 && (grouped || n == 4) {
            grouped = true;
            i += 1;
            continue;
        }
        if !(b.is_ascii_digit() || b.is_ascii_uppercase()) {
            return None;
        }
        if grouped && n % 4 == 0 && at_byte(h, i - 1) != Some(b' ') {
            return None;
        }
        chars[n] = b;
        n += 1;
        i += 1;
    }
    if matches!(at_byte(h, i), Some(b) if is_alnum(b)) {
        return None;
    }
    mod97(&chars[..n]).then_some(i)
}

fn at_byte(h: &[u8], i: usize) -> Option<u8> {
    super::text::at(h, i)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn iban(s: &str) -> Option<&str> {
        let h = s.as_bytes();
        (0..h.len()).find_map(|q| at(h, q).map(|e| &s[q..e]))
    }

    #[test]
    fn positives() {
        assert_eq!(
            iban("x IT60 X054 2811 1010 0000 0123 456 y"),
            Some("IT60 X054 2811 1010 0000 0123 456")
        );
        assert_eq!(
            iban("x GB82 WEST 1234 5698 7654 32 Amount"),
            Some("GB82 WEST 1234 5698 7654 32")
        );
        assert_eq!(
            iban("IBAN DE89370400440532013000 Amount"),
            Some("DE89370400440532013000")
        );
        assert_eq!(
            iban("\"FR1420041010050500013M02606\""),
            Some("FR1420041010050500013M02606")
        );
    }

    #[test]
    fn near_misses() {
        assert_eq!(iban("x GB82 WEST 1234 5698 7654 33 y"), None);
        assert_eq!(iban("x DE8937040044053201300"), None);
        assert_eq!(iban("x ZZ89370400440532013000"), None);
        assert_eq!(iban("xDE89370400440532013000"), None);
        assert_eq!(iban("x DE89370400440532013000X"), None);
    }

    #[test]
    fn mod97_check() {
        assert!(mod97(b"GB82WEST12345698765432"));
        assert!(!mod97(b"GB82WEST12345698765433"));
        assert!(!mod97(b"GB"));
    }
}
