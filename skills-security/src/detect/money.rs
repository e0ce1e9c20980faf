//! Amounts of money: a number with a currency symbol (`$`, `€`, `£`, `¥`, `₹`, `₩`, and
//! after the number `円`, `元`, `원`), an ISO code (`USD`, `EUR`...) or a currency word
//! (`dollars`, `euros`, `yen`, `francs`...) before or after it, with an optional `K`, `M`,
//! `bn`, `thousand`, `million` or `billion` (`3.5 million euros`, `$1.2M`).
//!
//! Grouping: `,` and `.` either way round (`1,446,981.78 USD`, `1.685.143,74 €`), and,
//! for three-digit groups only, a space, a no-break space, a narrow no-break space or a
//! thin space (`51 032,92 €`) or an apostrophe (`CHF 69'026.85`, `CHF 69’026.85`); spaced
//! groups are joined only when the amount has its currency, so `2019 500 users` is not
//! swallowed.
//!
//! The span takes in a letter prefix of the dollar sign (`A$`, `AU$`, `CA$`, `C$`, `US$`,
//! `R$`, `HK$`, `NZ$`, `S$`, `NT$`, `MX$`) and a leading minus sign (`-$1,234.56`,
//! `−€5`). Accounting parentheses are left out of the span: `($25)` is as often an aside
//! as a negative, and the amount inside is covered either way.
//!
//! A number with no currency (`639,720 records`, `45K users`) is not money. `pounds` alone
//! is a weight as often as money (`weighs 180 pounds`), so it counts only after a
//! multiplier (`3 million pounds`) or as `pounds sterling`.

use super::text::{at, before, digit_run, is_alnum};

/// ISO 4217 codes recognised before or after an amount.
pub(crate) const CODES: [&str; 16] = [
    "USD", "EUR", "GBP", "JPY", "CHF", "CAD", "AUD", "CNY", "INR", "SEK", "NOK", "DKK", "NZD",
    "HKD", "SGD", "MXN",
];

/// Symbols after an amount (the one-byte `$` is not: `5$` is rarer than a stray `$`).
const SUFFIX_SYMBOLS: [&str; 9] = ["€", "£", "¥", "₹", "₩", "円", "元", "원", "₽"];

/// Currency words after an amount, compared ASCII case-insensitively.
const WORDS: [&str; 30] = [
    "us dollars",
    "u.s. dollars",
    "canadian dollars",
    "australian dollars",
    "hong kong dollars",
    "singapore dollars",
    "new zealand dollars",
    "swiss francs",
    "pounds sterling",
    "dollars",
    "dollar",
    "euros",
    "euro",
    "yen",
    "francs",
    "franc",
    "rupees",
    "rupee",
    "yuan",
    "renminbi",
    "pesos",
    "peso",
    "reais",
    "kronor",
    "kroner",
    "krona",
    "krone",
    "bucks",
    "kr",
    "zł",
];

/// Bit `k` of `WORDS_BY_INITIAL[b]` is set when `WORDS[k]` starts with the byte `b`: an
/// amount followed by a word (most often not a currency) compares only the words with its
/// initial.
static WORDS_BY_INITIAL: [u32; 256] = {
    let mut t = [0u32; 256];
    let mut k = 0;
    while k < WORDS.len() {
        t[WORDS[k].as_bytes()[0] as usize] |= 1 << k;
        k += 1;
    }
    t
};

/// Letters that may prefix a `$` (`A$`, `CA$`, `US$`), longest first.
const DOLLAR_PREFIXES: [&[u8]; 11] = [
    b"US", b"AU", b"CA", b"NZ", b"HK", b"SG", b"NT", b"MX", b"A", b"C", b"R",
];

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

/// The length of a space that may sit between groups or between an amount and its
/// currency: ASCII, no-break (U+00A0), narrow no-break (U+202F) or thin (U+2009).
fn space_len(h: &[u8], i: usize) -> usize {
    match at(h, i) {
        Some(b' ') => 1,
        Some(0xC2) if at(h, i + 1) == Some(0xA0) => 2,
        Some(0xE2) if matches!(h.get(i + 1..i + 3), Some([0x80, 0xAF | 0x89])) => 3,
        _ => 0,
    }
}

/// The length of a group separator at `i` followed by exactly three digits: a space (see
/// [`space_len`]) when `spaces`, or an apostrophe (`'` or `’`).
fn group_sep(h: &[u8], i: usize, spaces: bool) -> usize {
    let n = match at(h, i) {
        Some(b'\'') => 1,
        Some(0xE2) if h.get(i + 1..i + 3) == Some(&[0x80, 0x99]) => 3,
        _ if spaces => space_len(h, i),
        _ => 0,
    };
    if n > 0 && digit_run(h, i + n, 3) == 3 {
        n
    } else {
        0
    }
}

/// The end of an amount starting at the digit `i`: digit groups joined by single `,` or
/// `.`, three-digit groups by an apostrophe or (when `spaces`) a space, then an optional
/// multiplier.
pub(crate) fn amount_end(h: &[u8], i: usize, spaces: bool) -> Option<usize> {
    let first = digit_run(h, i, 24);
    if first == 0 || first > 24 {
        return None;
    }
    let mut e = i + first;
    let grouped = first <= 3;
    loop {
        if let Some(sep @ (b',' | b'.')) = at(h, e) {
            let n = digit_run(h, e + 1, 24);
            let more = at(h, e + 1 + n) == Some(sep)
                && matches!(at(h, e + 2 + n), Some(b) if b.is_ascii_digit());
            if grouped && (n == 3 || (n == 2 && sep == b',' && more)) {
                // A thousands group (or an Indian two-digit group: `12,34,567`).
                e += 1 + n;
                continue;
            }
            if (1..=2).contains(&n) || (sep == b'.' && n >= 3) {
                // The decimals: the amount ends with them.
                e += 1 + n;
                break;
            }
            // `1001,2025`: two fields of a row, not one amount.
            break;
        }
        // Space and apostrophe grouping: only three-digit groups after a first group of
        // at most three digits.
        let sep = if first <= 3 {
            group_sep(h, e, spaces)
        } else {
            0
        };
        if sep == 0 {
            break;
        }
        e += sep + 3;
    }
    // Multiplier: directly attached (4.2M) or after one space (4.2 million).
    let letter_next = matches!(at(h, e), Some(b) if b.is_ascii_alphabetic())
        || (at(h, e) == Some(b' ') && matches!(at(h, e + 1), Some(b) if b.is_ascii_alphabetic()));
    for skip in [0usize, 1] {
        if !letter_next {
            break;
        }
        if skip == 1 && at(h, e) != Some(b' ') {
            break;
        }
        for m in MULTIPLIERS {
            if skip == 1 && m.len() == 1 && m[0].is_ascii_uppercase() {
                continue;
            }
            let s = e + skip;
            // The first byte first: most amounts meet a word that is no multiplier, and
            // comparing whole slices calls out to `memcmp` for every one.
            if at(h, s) == m.first().copied()
                && h.get(s..s + m.len()) == Some(m)
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

fn lower_starts(h: &[u8], i: usize, word: &str) -> bool {
    h.get(i..i + word.len()).is_some_and(|w| {
        w.iter()
            .zip(word.as_bytes())
            .all(|(a, b)| a.to_ascii_lowercase() == *b)
    })
}

/// A currency symbol, code or word right after an amount ending at `e` (the amount itself
/// starting at `s`, for the multiplier test); returns the new end.
pub(crate) fn suffix(h: &[u8], s: usize, e: usize) -> Option<usize> {
    let gap = space_len(h, e);
    let i = e + gap;
    let first = at(h, i)?;
    if first >= 0x80
        && let Some(sym) = SUFFIX_SYMBOLS
            .iter()
            .find(|sym| h.get(i..i + sym.len()) == Some(sym.as_bytes()))
    {
        return Some(i + sym.len());
    }
    if gap == 0 || !first.is_ascii_alphabetic() {
        return None;
    }
    if first.is_ascii_uppercase()
        && let Some(code) = h.get(i..i + 3)
        && CODES
            .iter()
            .any(|c| c.as_bytes().first() == code.first() && c.as_bytes() == code)
        && !matches!(at(h, i + 3), Some(b) if is_alnum(b))
    {
        return Some(i + 3);
    }
    // Currency words: compared whole, and only those with the right initial.
    let len = h[i..]
        .iter()
        .take_while(|&&b| b.is_ascii_alphabetic() || b >= 0x80)
        .take(13)
        .count();
    if len > 12 {
        return None;
    }
    let word = &h[i..i + len];
    let mut candidates = WORDS_BY_INITIAL[usize::from(first.to_ascii_lowercase())];
    while candidates != 0 {
        let w = WORDS[candidates.trailing_zeros() as usize];
        candidates &= candidates - 1;
        let wb = w.as_bytes();
        let end = i + wb.len();
        if wb.len() >= len
            && wb.get(len).is_none_or(|&b| b == b' ' || b == b'.')
            && lower_starts(h, i, w)
            && !matches!(at(h, end), Some(b) if is_alnum(b) || b >= 0x80)
        {
            return Some(end);
        }
    }
    // `pounds` only as money: after a multiplier word.
    let multiplied = h
        .get(s..e)
        .is_some_and(|a| a.last().is_some_and(u8::is_ascii_alphabetic));
    (multiplied
        && ["pounds", "pound", "quid"]
            .iter()
            .any(|w| word.eq_ignore_ascii_case(w.as_bytes())))
    .then_some(i + len)
}

/// The start of a money span whose currency or digits start at `p`: a `$`'s letter prefix
/// (`CA$`) and a leading minus sign are taken in.
pub(crate) fn span_start(h: &[u8], p: usize) -> usize {
    let mut s = p;
    if at(h, p) == Some(b'$') {
        for pre in DOLLAR_PREFIXES {
            if p >= pre.len()
                && h.get(p - pre.len()..p) == Some(pre)
                && !matches!(before(h, p - pre.len()), Some(b) if is_alnum(b))
            {
                s = p - pre.len();
                break;
            }
        }
    }
    let minus = if before(h, s) == Some(b'-') {
        1
    } else if s >= 3 && h.get(s - 3..s) == Some("−".as_bytes()) {
        3
    } else {
        0
    };
    if minus > 0
        && !matches!(before(h, s - minus), Some(b) if is_alnum(b) || b == b'-' || b == b'.')
    {
        s -= minus;
    }
    s
}

/// An amount after a currency symbol of `len` bytes at `p`; returns the end.
pub(crate) fn after_symbol(h: &[u8], p: usize, len: usize) -> Option<usize> {
    let i = p + len;
    let i = i + space_len(h, i);
    if !matches!(at(h, i), Some(b) if b.is_ascii_digit()) {
        return None;
    }
    amount_end(h, i, true)
}

/// True when the word of `len` bytes or more of ASCII capitals ends at `e` (the byte before
/// `e` is its last) with no letter or digit before it.
fn capital_word_ends(h: &[u8], e: usize, len: usize) -> bool {
    let mut s = e;
    while s > 0 && h[s - 1].is_ascii_uppercase() {
        s -= 1;
    }
    e - s >= len && !matches!(before(h, s), Some(b) if is_alnum(b))
}

/// True when the code at `p`, glued to its number ending at `e` (`INR10`), is one more word
/// of a name in capitals (`ACME TRADING INR10`, `INR10 LTD`): a word of capitals right
/// before or after it, one space away.
fn inside_capitals(h: &[u8], p: usize, e: usize) -> bool {
    let word_before = before(h, p) == Some(b' ') && capital_word_ends(h, p - 1, 2);
    let word_after = at(h, e) == Some(b' ') && {
        let n = h[e + 1..]
            .iter()
            .take_while(|b| b.is_ascii_uppercase())
            .count();
        n >= 2 && !matches!(at(h, e + 1 + n), Some(b) if is_alnum(b))
    };
    word_before || word_after
}

/// An amount after the currency code at `p` (`USD 143.30`); returns the end. A code glued
/// to its number inside a name in capitals (`ACME TRADING INR10`) is part of the name.
pub(crate) fn after_code(h: &[u8], p: usize) -> Option<usize> {
    let code = h.get(p..p + 3)?;
    if !CODES.iter().any(|c| c.as_bytes() == code) {
        return None;
    }
    if matches!(before(h, p), Some(b) if is_alnum(b)) {
        return None;
    }
    let mut i = p + 3;
    if matches!(at(h, i), Some(b'$')) {
        i += 1;
    }
    let i = i + space_len(h, i);
    if !matches!(at(h, i), Some(b) if b.is_ascii_digit()) {
        return None;
    }
    let end = amount_end(h, i, true)?;
    (i > p + 3 || !inside_capitals(h, p, end)).then_some(end)
}

/// The currency code written just before the digit or dollar sign at `q` (`USD 143.30`,
/// `EUR1,000`, `USD$5`), read back over what [`after_code`] reads forward (one space, then
/// an optional `$`): the code's start and the amount's end, when [`after_code`] takes the
/// amount from there and the code starts at or after `from`.
pub(crate) fn code_before(h: &[u8], q: usize, from: usize) -> Option<(usize, usize)> {
    // This runs at every digit: each step below refuses on one or two byte compares.
    let mut i = q;
    if at(h, q) != Some(b'$') {
        i -= match (q.checked_sub(3).and_then(|k| h.get(k..q)), before(h, q)?) {
            (_, b' ') => 1,
            (Some([_, 0xC2, 0xA0]), _) => 2,
            (Some([0xE2, 0x80, 0xAF | 0x89]), _) => 3,
            (_, b) if b.is_ascii_uppercase() || b == b'$' => 0,
            _ => return None,
        };
        if before(h, i) == Some(b'$') {
            i -= 1;
        }
    }
    if !before(h, i)?.is_ascii_uppercase() {
        return None;
    }
    let p = i.checked_sub(3)?;
    if p < from || !h[p..i].iter().all(u8::is_ascii_uppercase) {
        return None;
    }
    after_code(h, p).map(|end| (p, end))
}

/// An amount starting at the digit `p` followed by its currency; returns its span, or
/// `Err` with where the number (without currency) ends, for the scanner to skip to.
pub(crate) fn at_digit(h: &[u8], p: usize) -> Result<(usize, usize), Option<usize>> {
    let plain = amount_end(h, p, false);
    if let Some(e) = plain
        && group_sep(h, e, true) > 0
        && let Some(spaced) = amount_end(h, p, true)
        && spaced != e
        && let Some(end) = suffix(h, p, spaced)
    {
        return Ok((span_start(h, p), end));
    }
    match plain {
        Some(e) => match suffix(h, p, e) {
            Some(end) => Ok((span_start(h, p), end)),
            None => Err(Some(e)),
        },
        None => Err(None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SYMBOLS: [&str; 6] = ["$", "€", "£", "¥", "₹", "₩"];

    /// The first amount in `s`, found the way the scanner finds it.
    fn money(s: &str) -> Option<&str> {
        let h = s.as_bytes();
        for (p, c) in s.char_indices() {
            if SYMBOLS.contains(&&s[p..p + c.len_utf8()]) {
                return after_symbol(h, p, c.len_utf8()).map(|e| &s[span_start(h, p)..e]);
            }
            if c.is_ascii_uppercase()
                && let Some(e) = after_code(h, p)
            {
                return Some(&s[span_start(h, p)..e]);
            }
            if c.is_ascii_digit() {
                return at_digit(h, p).ok().map(|(a, e)| &s[a..e]);
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
    fn grouping_and_suffixes() {
        assert_eq!(money("Montant dû : 51 032,92 €\n"), Some("51 032,92 €"));
        assert_eq!(
            money("dû : 51\u{a0}032,92\u{a0}€"),
            Some("51\u{a0}032,92\u{a0}€")
        );
        assert_eq!(money("dû : 51\u{202f}032,92 €"), Some("51\u{202f}032,92 €"));
        assert_eq!(money("Budget: CHF 69'026.85\n"), Some("CHF 69'026.85"));
        assert_eq!(money("請求額：737,360円"), Some("737,360円"));
        assert_eq!(
            money("amount=6.5 million euros card"),
            Some("6.5 million euros")
        );
        assert_eq!(
            money("send the remaining 68125 dollars to"),
            Some("68125 dollars")
        );
        assert_eq!(money("about 300 Swiss francs."), Some("300 Swiss francs"));
        assert_eq!(money("a 2 billion pound deal"), Some("2 billion pound"));
        assert_eq!(money("€ 12 345,67 due"), Some("€ 12 345,67"));
    }

    #[test]
    fn prefixes_and_signs() {
        assert_eq!(money("Budget: A$33,774.70\n"), Some("A$33,774.70"));
        assert_eq!(money("Deposit: CA$7,938.44\n"), Some("CA$7,938.44"));
        assert_eq!(money("billed US$ 10,556 twice"), Some("US$ 10,556"));
        assert_eq!(money("Amount: R$ 13.213,90\n"), Some("R$ 13.213,90"));
        assert_eq!(money("Budget: -$89,840.91\n"), Some("-$89,840.91"));
        assert_eq!(money("net −€5.00"), Some("−€5.00"));
        assert_eq!(money("delta -1.234,56 € x"), Some("-1.234,56 €"));
        // Not a prefix or a sign: part of a word or a range.
        assert_eq!(money("XA$5"), Some("$5"));
        assert_eq!(money("from 10-$20"), None);
        assert_eq!(money("($25)"), Some("$25"));
    }

    #[test]
    fn near_misses() {
        assert_eq!(money("processed 639,720 records"), None);
        assert_eq!(money("covers 1,248 units"), None);
        assert_eq!(money("echo $HOME"), None);
        assert_eq!(money("USDT 5"), None);
        assert_eq!(money("5 USDT"), None);
        assert_eq!(money("3.5 million downloads"), None);
        assert_eq!(money("45K users"), None);
        assert_eq!(money("weighs 180 pounds"), None);
        assert_eq!(money("in 2019 500 users"), None);
        assert_eq!(money("12 345 units"), None);
        // A code glued to a number inside a name in capitals.
        assert_eq!(money("Supplier: ACME TRADING INR10 LTD"), None);
        assert_eq!(money("Vendor INR10 LTD"), None);
        assert_eq!(money("paid INR10 today"), Some("INR10"));
        assert_eq!(money("ACME TRADING INR 10"), Some("INR 10"));
    }
}
