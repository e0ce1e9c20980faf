//! Amounts of money: a number with a currency symbol (`$`, `€`, `£`, `¥`, `₹`) or ISO code
//! (`USD`, `EUR`...) before or after it, in either grouping convention (`1,446,981.78 USD`,
//! `1.685.143,74 €`, `44,87 €`), with an optional `K`, `M`, `bn`, `thousand`, `million` or
//! `billion`. A number with no currency (`639,720 records`) is not money.

use super::text::{at, digit_run, is_alnum};

/// ISO 4217 codes recognised before or after an amount.
pub(crate) const CODES: [&str; 16] = [
    "USD", "EUR", "GBP", "JPY", "CHF", "CAD", "AUD", "CNY", "INR", "SEK", "NOK", "DKK", "NZD",
    "HKD", "SGD", "MXN",
];

const SYMBOLS: [&str; 6] = ["$", "€", "£", "¥", "₹", "₩"];

const MULTIPLIERS: [&[u8]; 10] = [
    b"thousand",
    b"million",
    b"billion",
    b"trillion",
    b"bn",
    b"mn",
    b"K",
    b"M",
    b"B",
    b"k",
];

/// The end of an amount starting at the digit `i`: digit groups joined by single `,` or
/// `.`, then an optional multiplier.
pub(crate) fn amount_end(h: &[u8], i: usize) -> Option<usize> {
    let first = digit_run(h, i, 24);
    if first == 0 || first > 24 {
        return None;
    }
    let mut e = i + first;
    while matches!(at(h, e), Some(b',' | b'.')) {
        let n = digit_run(h, e + 1, 24);
        if n == 0 {
            break;
        }
        e += 1 + n;
    }
    // Multiplier: directly attached (4.2M) or after one space (4.2 million).
    for skip in [0usize, 1] {
        if skip == 1 && at(h, e) != Some(b' ') {
            break;
        }
        for m in MULTIPLIERS {
            if skip == 1 && m.len() == 1 && m[0].is_ascii_uppercase() {
                continue;
            }
            let s = e + skip;
            if h.get(s..s + m.len()) == Some(m)
                && !matches!(at(h, s + m.len()), Some(b) if is_alnum(b))
            {
                return Some(s + m.len());
            }
        }
    }
    if matches!(at(h, e), Some(b) if is_alnum(b)) {
        return None;
    }
    Some(e)
}

fn space_len(h: &[u8], i: usize) -> usize {
    match at(h, i) {
        Some(b' ') => 1,
        Some(0xC2) if at(h, i + 1) == Some(0xA0) => 2,
        Some(0xE2) if h.get(i + 1..i + 3) == Some(&[0x80, 0xAF]) => 3,
        _ => 0,
    }
}

/// A currency symbol or code right after an amount ending at `e`; returns the new end.
pub(crate) fn suffix(h: &[u8], e: usize) -> Option<usize> {
    let s = e + space_len(h, e);
    for sym in SYMBOLS {
        if sym.len() > 1 && h.get(s..s + sym.len()) == Some(sym.as_bytes()) {
            return Some(s + sym.len());
        }
    }
    if s > e {
        for code in CODES {
            if h.get(s..s + 3) == Some(code.as_bytes())
                && !matches!(at(h, s + 3), Some(b) if is_alnum(b))
            {
                return Some(s + 3);
            }
        }
    }
    None
}

/// An amount after a currency symbol of `len` bytes at `p`; returns the end.
pub(crate) fn after_symbol(h: &[u8], p: usize, len: usize) -> Option<usize> {
    let i = p + len;
    let i = i + space_len(h, i);
    if !matches!(at(h, i), Some(b) if b.is_ascii_digit()) {
        return None;
    }
    amount_end(h, i)
}

/// An amount after the currency code at `p` (`USD 143.30`); returns the end.
pub(crate) fn after_code(h: &[u8], p: usize) -> Option<usize> {
    let code = h.get(p..p + 3)?;
    if !CODES.iter().any(|c| c.as_bytes() == code) {
        return None;
    }
    if matches!(super::text::before(h, p), Some(b) if is_alnum(b)) {
        return None;
    }
    let mut i = p + 3;
    if matches!(at(h, i), Some(b'$')) {
        i += 1;
    }
    let i = i + space_len(h, i);
    if i == p + 3 && !matches!(at(h, i), Some(b) if b.is_ascii_digit()) {
        return None;
    }
    if !matches!(at(h, i), Some(b) if b.is_ascii_digit()) {
        return None;
    }
    amount_end(h, i)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn money(s: &str) -> Option<&str> {
        let h = s.as_bytes();
        for (p, c) in s.char_indices() {
            if SYMBOLS.contains(&&s[p..p + c.len_utf8()]) {
                return after_symbol(h, p, c.len_utf8()).map(|e| &s[p..e]);
            }
            if c.is_ascii_uppercase()
                && let Some(e) = after_code(h, p)
            {
                return Some(&s[p..e]);
            }
            if c.is_ascii_digit() {
                let e = amount_end(h, p)?;
                return suffix(h, e).map(|e| &s[p..e]);
            }
        }
        None
    }

    #[test]
    fn positives() {
        assert_eq!(money("charge of 44,87 €. Card"), Some("44,87 €"));
        assert_eq!(money("amount=$143.23 card"), Some("$143.23"));
        assert_eq!(money("of 104.89 USD."), Some("104.89 USD"));
        assert_eq!(money("amount=EUR 438.713,61 card"), Some("EUR 438.713,61"));
        assert_eq!(money("\"1.685.143,74 €\""), Some("1.685.143,74 €"));
        assert_eq!(money("Amount: ¥160,312,000 x"), Some("¥160,312,000"));
        assert_eq!(money("Revenue: $4.2M."), Some("$4.2M"));
        assert_eq!(money("about $3 million now"), Some("$3 million"));
        assert_eq!(money("Copay £113.62."), Some("£113.62"));
    }

    #[test]
    fn near_misses() {
        assert_eq!(money("processed 639,720 records"), None);
        assert_eq!(money("covers 1,248 units"), None);
        assert_eq!(money("echo $HOME"), None);
        assert_eq!(money("USDT 5"), None);
        assert_eq!(money("5 USDT"), None);
    }
}
