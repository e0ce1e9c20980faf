//! Dates, parsed so the scanner can step over them in one go; which of them are dates of
//! birth is [`birth`](super::birth)'s call.
//!
//! Formats, all with a plausible year (1800-2199) and closed on both sides:
//!
//! * ISO and year-first: `1961-11-20`, `1984/03/07`, `1984.03.07`, timestamps
//!   (`2024-05-21T16:28:56Z`, skipped whole);
//! * CJK: `1967年5月6日`, `1967년 5월 6일`;
//! * numeric day/month either way round: `08/17/1988`, `30.12.1947`, `7/3/1984`, and with a
//!   two-digit year (`07.03.84`, `03/07/84`), which is reported only when birth context
//!   claims it (otherwise it is left to the other recognizers: too many things look like
//!   `12.10.84`);
//! * day first with a month name, in English, German, French, Spanish, Italian, Portuguese
//!   or Dutch, full or abbreviated: `24 Jun 1988`, `16-Dec-1948`, `2nd of October 1980`,
//!   `13. Mai 1952`, `1er janvier 1980`, `28 de agosto de 1977`, `7 mars 1984`;
//! * an English month name first: `May 09, 1983`, `Mar. 7, 1984`, `October 2nd 1980`.

use super::text::{at, before, digit_run, is_alnum, number};

/// A parsed date: `start..end` is the date itself, `skip` the end of the whole token
/// (a timestamp's time part included).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct DateHit {
    pub start: usize,
    pub end: usize,
    pub skip: usize,
    /// A two-digit year: a date of birth only with birth context, otherwise not a date.
    pub short_year: bool,
}

impl DateHit {
    fn new(start: usize, end: usize) -> DateHit {
        DateHit {
            start,
            end,
            skip: end,
            short_year: false,
        }
    }
}

/// English month names and abbreviations: the only ones accepted before the day, where a
/// short word in another language (`set`, `out`, `ago`) would too often be just a word.
const ENGLISH_MONTHS: [&str; 24] = [
    "jan",
    "january",
    "feb",
    "february",
    "mar",
    "march",
    "apr",
    "april",
    "may",
    "jun",
    "june",
    "jul",
    "july",
    "aug",
    "august",
    "sep",
    "sept",
    "september",
    "oct",
    "october",
    "nov",
    "november",
    "dec",
    "december",
];

/// Month names (lowercase, UTF-8) in German, French, Spanish, Italian, Portuguese and
/// Dutch that are not also English ones; accepted after the day.
const OTHER_MONTHS: [&str; 71] = [
    // German
    "januar",
    "jänner",
    "februar",
    "feber",
    "märz",
    "maerz",
    "mär",
    "mai",
    "juni",
    "juli",
    "okt",
    "oktober",
    "dez",
    "dezember", // French
    "janvier",
    "janv",
    "février",
    "fevrier",
    "févr",
    "fevr",
    "mars",
    "avril",
    "avr",
    "juin",
    "juillet",
    "juil",
    "août",
    "aout",
    "septembre",
    "octobre",
    "novembre",
    "décembre",
    "decembre",
    "déc", // Spanish
    "enero",
    "ene",
    "febrero",
    "marzo",
    "abril",
    "abr",
    "mayo",
    "junio",
    "julio",
    "agosto",
    "ago",
    "setiembre",
    "septiembre",
    "octubre",
    "noviembre",
    "diciembre",
    "dic",
    // Italian
    "gennaio",
    "febbraio",
    "aprile",
    "maggio",
    "giugno",
    "luglio",
    "settembre",
    "ottobre",
    "dicembre", // Portuguese
    "janeiro",
    "fevereiro",
    "março",
    "marco",
    "maio",
    "junho",
    "julho",
    "setembro",
    "outubro",
    "dezembro", // Dutch
    "januari",
];

/// The rest: Dutch, and two Portuguese names (kept apart so each table stays readable).
const MORE_MONTHS: [&str; 6] = ["februari", "maart", "mei", "augustus", "novembro", "fev"];

/// The longest month name in bytes (`septiembre`, `fevereiro`...).
const MONTH_MAX: usize = 12;

/// The end of a run of letters (ASCII, or any non-ASCII byte) from `i`, at most
/// [`MONTH_MAX`] + 1 bytes.
fn letters_end(h: &[u8], i: usize) -> usize {
    let mut e = i;
    while e < h.len() && (h[e].is_ascii_alphabetic() || h[e] >= 0x80) && e - i <= MONTH_MAX {
        e += 1;
    }
    e
}

fn lower_eq(word: &[u8], name: &str) -> bool {
    word.len() == name.len()
        && word
            .iter()
            .zip(name.as_bytes())
            .all(|(a, b)| a.to_ascii_lowercase() == *b)
}

fn is_month(word: &[u8], any_language: bool) -> bool {
    if word.len() < 3 || word.len() > MONTH_MAX {
        return false;
    }
    ENGLISH_MONTHS.iter().any(|m| lower_eq(word, m))
        || (any_language
            && (OTHER_MONTHS.iter().any(|m| lower_eq(word, m))
                || MORE_MONTHS.iter().any(|m| lower_eq(word, m))))
}

fn plausible_year(y: u32) -> bool {
    (1800..=2199).contains(&y)
}

/// An English month name ending at `end` (exclusive), with an optional `.`; returns its
/// start.
fn month_before(h: &[u8], end: usize) -> Option<usize> {
    let end = if before(h, end) == Some(b'.') {
        end - 1
    } else {
        end
    };
    let mut s = end;
    while s > 0 && h[s - 1].is_ascii_alphabetic() && end - s < 10 {
        s -= 1;
    }
    if s > 0 && (is_alnum(h[s - 1]) || h[s - 1] >= 0x80) {
        return None;
    }
    is_month(&h[s..end], false).then_some(s)
}

/// A month name in any supported language starting at `i`; returns its end (after an
/// optional `.`).
fn month_after(h: &[u8], i: usize) -> Option<usize> {
    // Every month name in the tables starts with one of these.
    if !matches!(
        at(h, i).map(|b| b.to_ascii_lowercase()),
        Some(b'a' | b'd' | b'e' | b'f' | b'g' | b'j' | b'l' | b'm' | b'n' | b'o' | b's')
    ) {
        return None;
    }
    let e = letters_end(h, i);
    if !is_month(h.get(i..e)?, true) {
        return None;
    }
    Some(if at(h, e) == Some(b'.') { e + 1 } else { e })
}

/// The end of a time of day after an ISO date (`T16:28:56.166Z`, ` 10:23:08+02:00`).
fn time_end(h: &[u8], i: usize) -> usize {
    let sep = at(h, i);
    if !matches!(sep, Some(b'T' | b't' | b' '))
        || digit_run(h, i + 1, 2) != 2
        || at(h, i + 3) != Some(b':')
    {
        return i;
    }
    let mut j = i + 1;
    while j < h.len() && (h[j].is_ascii_digit() || h[j] == b':' || h[j] == b'.') && j - i < 20 {
        j += 1;
    }
    match at(h, j) {
        Some(b'Z' | b'z') => j + 1,
        Some(b'+' | b'-') if digit_run(h, j + 1, 2) == 2 => {
            let mut k = j + 3;
            if at(h, k) == Some(b':') {
                k += 1;
            }
            k + digit_run(h, k, 2).min(2)
        }
        _ => j,
    }
}

/// True when a letter or digit continues the token at `end`.
fn runs_on(h: &[u8], end: usize) -> bool {
    matches!(at(h, end), Some(b) if is_alnum(b))
}

/// True when `sep` and a digit continue the token at `end` (`1.2.3.4`, `12-10-84-1`).
fn continues(h: &[u8], end: usize) -> bool {
    matches!(at(h, end), Some(b'.' | b'-' | b'/'))
        && matches!(at(h, end + 1), Some(b) if b.is_ascii_digit())
}

/// A date starting at the digit `p` (or, for `May 09, 1983`, whose day starts at `p`).
pub(crate) fn at_digit(h: &[u8], p: usize) -> Option<DateHit> {
    let n = digit_run(h, p, 4);
    if n == 4 {
        return year_first(h, p).or_else(|| cjk(h, p));
    }
    if !(1..=2).contains(&n) {
        return None;
    }
    if let Some(d) = numeric(h, p, n) {
        return Some(d);
    }
    let day = number(h, p, n);
    if !(1..=31).contains(&day) {
        return None;
    }
    day_first(h, p, n).or_else(|| month_first(h, p, n))
}

/// ISO: 1961-11-20, 2024/05/21, 2024-05-21T16:28:56Z.
fn year_first(h: &[u8], p: usize) -> Option<DateHit> {
    let sep = at(h, p + 4)?;
    if !matches!(sep, b'-' | b'/' | b'.') {
        return None;
    }
    let m = digit_run(h, p + 5, 2);
    if !(1..=2).contains(&m) || at(h, p + 5 + m) != Some(sep) {
        return None;
    }
    let d = digit_run(h, p + 6 + m, 2);
    let end = p + 6 + m + d;
    if !(1..=2).contains(&d)
        || !plausible_year(number(h, p, 4))
        || !(1..=12).contains(&number(h, p + 5, m))
        || !(1..=31).contains(&number(h, p + 6 + m, d))
        || matches!(at(h, end), Some(b) if b.is_ascii_digit())
    {
        return None;
    }
    let skip = time_end(h, end);
    if skip == end && (runs_on(h, end) || continues(h, end)) {
        return None;
    }
    Some(DateHit {
        start: p,
        end,
        skip,
        short_year: false,
    })
}

/// `1967年5月6日` / `1967년 5월 6일` at the year's first digit `p`.
fn cjk(h: &[u8], p: usize) -> Option<DateHit> {
    let units: [[&[u8]; 3]; 2] = [
        ["年".as_bytes(), "月".as_bytes(), "日".as_bytes()],
        ["년".as_bytes(), "월".as_bytes(), "일".as_bytes()],
    ];
    'units: for unit in units {
        let mut i = p + 4;
        let mut parts = [0u32; 2];
        for (k, u) in unit.iter().enumerate() {
            if !h.get(i..)?.starts_with(u) {
                continue 'units;
            }
            i += u.len();
            if k == 2 {
                break;
            }
            if at(h, i) == Some(b' ') {
                i += 1;
            }
            let d = digit_run(h, i, 2);
            if !(1..=2).contains(&d) {
                continue 'units;
            }
            parts[k] = number(h, i, d);
            i += d;
        }
        if plausible_year(number(h, p, 4))
            && (1..=12).contains(&parts[0])
            && (1..=31).contains(&parts[1])
        {
            return Some(DateHit::new(p, i));
        }
    }
    None
}

/// 08/17/1988, 30.12.1947, 17-07-2023, and with a two-digit year 07.03.84.
fn numeric(h: &[u8], p: usize, n: usize) -> Option<DateHit> {
    let sep = at(h, p + n)?;
    if !matches!(sep, b'/' | b'.' | b'-') {
        return None;
    }
    let m = digit_run(h, p + n + 1, 2);
    if !(1..=2).contains(&m) || at(h, p + n + 1 + m) != Some(sep) {
        return None;
    }
    let a = number(h, p, n);
    let b = number(h, p + n + 1, m);
    let ys = p + n + 2 + m;
    let y = digit_run(h, ys, 4);
    let day_month = a > 0
        && b > 0
        && ((a <= 12 && (1..=31).contains(&b)) || (b <= 12 && (1..=31).contains(&a)));
    if !day_month {
        return None;
    }
    let end = ys + y;
    let short_year = match y {
        4 if plausible_year(number(h, ys, 4)) => false,
        2 => true,
        _ => return None,
    };
    if runs_on(h, end) || continues(h, end) {
        return None;
    }
    Some(DateHit {
        short_year,
        ..DateHit::new(p, end)
    })
}

/// The end of an ordinal suffix after a day number ending at `i` (`st`, `nd`, `rd`, `th`,
/// French `er`/`re`, `º`, `°`), or `i`.
fn ordinal_end(h: &[u8], i: usize) -> usize {
    for suffix in ["st", "nd", "rd", "th", "er", "re"] {
        if let Some(w) = h.get(i..i + 2)
            && lower_eq(w, suffix)
            && !matches!(at(h, i + 2), Some(b) if b.is_ascii_alphabetic())
        {
            return i + 2;
        }
    }
    for suffix in ["º", "°"] {
        if h.get(i..).is_some_and(|r| r.starts_with(suffix.as_bytes())) {
            return i + suffix.len();
        }
    }
    i
}

/// A four-digit plausible year at `i` that ends the date; returns its end.
fn year_at(h: &[u8], i: usize) -> Option<usize> {
    (digit_run(h, i, 4) == 4 && plausible_year(number(h, i, 4)) && !runs_on(h, i + 4))
        .then_some(i + 4)
}

/// The end of `word` followed by one space at `i` (ASCII case-insensitive), or `i`.
fn skip_word(h: &[u8], i: usize, word: &str) -> usize {
    let n = word.len();
    match h.get(i..i + n + 1) {
        Some(w) if lower_eq(&w[..n], word) && w[n] == b' ' => i + n + 1,
        _ => i,
    }
}

/// Day first, then a month name: `24 Jun 1988`, `16-Dec-1948`, `2nd of October, 1980`,
/// `13. Mai 1952`, `28 de agosto de 1977`.
fn day_first(h: &[u8], p: usize, n: usize) -> Option<DateHit> {
    // What may follow a day: a separator, an ordinal's letter, `º`/`°`.
    let next = at(h, p + n)?;
    if !matches!(next, b' ' | b'-' | b'/' | b'.' | 0xC2) && !next.is_ascii_alphabetic() {
        return None;
    }
    let mut i = if next.is_ascii_alphabetic() || next == 0xC2 {
        ordinal_end(h, p + n)
    } else {
        p + n
    };
    let ordinal = i > p + n;
    // `16-Dec-1948`, `16/Dec/1948`: one separator, the same both sides.
    if !ordinal && let Some(sep @ (b'-' | b'/')) = at(h, i) {
        let me = month_after(h, i + 1)?;
        if at(h, me) != Some(sep) {
            return None;
        }
        let end = year_at(h, me + 1)?;
        return (!continues(h, end)).then(|| DateHit::new(p, end));
    }
    // German `13. Mai`.
    if !ordinal && at(h, i) == Some(b'.') {
        i += 1;
    }
    if at(h, i) != Some(b' ') {
        return None;
    }
    i += 1;
    if matches!(at(h, i), Some(b'o' | b'O' | b'd' | b'D')) {
        for word in ["of", "de", "di"] {
            i = skip_word(h, i, word);
        }
    }
    let me = month_after(h, i)?;
    let mut j = me;
    if at(h, j) == Some(b',') {
        j += 1;
    }
    if at(h, j) != Some(b' ') {
        return None;
    }
    j += 1;
    for word in ["de", "del"] {
        j = skip_word(h, j, word);
    }
    let end = year_at(h, j)?;
    Some(DateHit::new(p, end))
}

/// An English month name before the day at `p`: `May 09, 1983`, `October 2nd 1980`.
fn month_first(h: &[u8], p: usize, n: usize) -> Option<DateHit> {
    if before(h, p) != Some(b' ') {
        return None;
    }
    let ms = month_before(h, p - 1)?;
    let mut ys = ordinal_end(h, p + n);
    if at(h, ys) == Some(b',') {
        ys += 1;
    }
    if at(h, ys) != Some(b' ') {
        return None;
    }
    let end = year_at(h, ys + 1)?;
    Some(DateHit::new(ms, end))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn date(s: &str) -> Option<&str> {
        let h = s.as_bytes();
        let p = h.iter().position(|b| b.is_ascii_digit())?;
        at_digit(h, p)
            .filter(|d| !d.short_year)
            .map(|d| &s[d.start..d.end])
    }

    #[test]
    fn formats() {
        assert_eq!(date("DOB: 1961-11-20 x"), Some("1961-11-20"));
        assert_eq!(date("on 08/17/1988."), Some("08/17/1988"));
        assert_eq!(date("on 30.12.1947"), Some("30.12.1947"));
        assert_eq!(date("born 24 Jun 1988 ok"), Some("24 Jun 1988"));
        assert_eq!(date("with DOB May 09, 1983."), Some("May 09, 1983"));
        assert_eq!(
            date("Date of birth: December 06, 2001"),
            Some("December 06, 2001")
        );
        assert_eq!(date("x 2024-05-21T16:28:56.166Z y"), Some("2024-05-21"));
        assert_eq!(date("x 1984/03/07 y"), Some("1984/03/07"));
    }

    #[test]
    fn month_names_and_ordinals() {
        for d in [
            "16-Dec-1948",
            "16/dec/1948",
            "2nd of October 1980",
            "21st of January, 1961",
            "3rd March 1990",
            "13. Mai 1952",
            "7. März 1984",
            "26 juillet 1985",
            "1er janvier 1980",
            "12 févr. 1975",
            "28 de agosto de 1977",
            "5 de março de 1966",
            "9 ottobre 1955",
            "14 augustus 1971",
        ] {
            assert_eq!(date(&format!("x {d}, y")), Some(d), "{d}");
        }
        assert_eq!(date("x October 2nd 1980."), Some("October 2nd 1980"));
        assert_eq!(date("x Mar. 7, 1984"), Some("Mar. 7, 1984"));
    }

    #[test]
    fn cjk_dates() {
        assert_eq!(date("生年月日：1967年5月6日 電話"), Some("1967年5月6日"));
        assert_eq!(date("생년월일: 1967년 5월 6일"), Some("1967년 5월 6일"));
        assert_eq!(date("1967年13月6日"), None);
    }

    #[test]
    fn two_digit_years_are_marked() {
        let h = b"DOB 07.03.84 x";
        let d = at_digit(h, 4);
        assert_eq!(
            d.map(|d| (d.start, d.end, d.short_year)),
            Some((4, 12, true))
        );
        assert_eq!(at_digit(b"12.10.84.1", 0), None);
    }

    #[test]
    fn not_dates() {
        assert_eq!(date("exp 09/26 ok"), None);
        assert_eq!(date("13/13/2020"), None);
        assert_eq!(date("v 1.2.3"), None);
        assert_eq!(date("2024-13-01"), None);
        assert_eq!(date("Mayday 09, 1983"), None);
        assert_eq!(date("set 12, 1990"), None);
        assert_eq!(date("16-Dec-19488"), None);
        assert_eq!(date("12 Maine 1990"), None);
        assert_eq!(date("1.2.3.4"), None);
    }

    #[test]
    fn timestamps_are_skipped_whole() {
        let h = b"2024-05-21T16:28:56.166Z DEBUG";
        assert_eq!(at_digit(h, 0).map(|d| d.skip), Some(24));
    }
}
