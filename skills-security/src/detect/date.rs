//! Dates, and which of them are dates of birth.
//!
//! Every date is parsed (ISO `1961-11-20` and timestamps, `08/17/1988`, `30.12.1947`,
//! `24 Jun 1988`, `May 09, 1983`) so the scanner can step over it in one go, but only a date
//! introduced by birth context (`DOB`, `Date of birth:`, `born on`, a `"dob"` key,
//! `Geburtsdatum`, `date de naissance`, `生年月日`...) right before it is reported. Visit dates,
//! invoice dates and log timestamps are not dates of birth.

use super::text::{
    WINDOW, at, before, digit_run, ends_with_word, is_alnum, lookback, number, trim_filler,
};

/// A parsed date: `start..end` is the date itself, `skip` the end of the whole token
/// (a timestamp's time part included).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct DateHit {
    pub start: usize,
    pub end: usize,
    pub skip: usize,
}

const MONTHS: [&[u8]; 24] = [
    b"jan",
    b"january",
    b"feb",
    b"february",
    b"mar",
    b"march",
    b"apr",
    b"april",
    b"may",
    b"may",
    b"jun",
    b"june",
    b"jul",
    b"july",
    b"aug",
    b"august",
    b"sep",
    b"september",
    b"oct",
    b"october",
    b"nov",
    b"november",
    b"dec",
    b"december",
];

fn is_month(word: &[u8]) -> bool {
    if word.len() > 9 || word.len() < 3 {
        return false;
    }
    let mut buf = [0u8; 9];
    for (o, b) in buf.iter_mut().zip(word) {
        *o = b.to_ascii_lowercase();
    }
    let w = &buf[..word.len()];
    w == b"sept" || MONTHS.contains(&w)
}

fn plausible_year(y: u32) -> bool {
    (1800..=2199).contains(&y)
}

/// A month name ending at `end` (exclusive), with an optional `.`; returns its start.
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
    if s > 0 && is_alnum(h[s - 1]) {
        return None;
    }
    is_month(&h[s..end]).then_some(s)
}

/// A month name starting at `i`; returns its end (after an optional `.`).
fn month_after(h: &[u8], i: usize) -> Option<usize> {
    let mut e = i;
    while e < h.len() && h[e].is_ascii_alphabetic() && e - i < 10 {
        e += 1;
    }
    if !is_month(h.get(i..e)?) {
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

/// A date starting at the digit `p` (or, for `May 09, 1983`, whose day starts at `p`).
pub(crate) fn at_digit(h: &[u8], p: usize) -> Option<DateHit> {
    let n = digit_run(h, p, 4);
    // ISO: 1961-11-20, 2024/05/21, 2024-05-21T16:28:56Z.
    if n == 4 {
        let sep = at(h, p + 4)?;
        if matches!(sep, b'-' | b'/' | b'.') {
            let m = digit_run(h, p + 5, 2);
            if (1..=2).contains(&m) && at(h, p + 5 + m) == Some(sep) {
                let d = digit_run(h, p + 6 + m, 2);
                let end = p + 6 + m + d;
                if (1..=2).contains(&d)
                    && plausible_year(number(h, p, 4))
                    && (1..=12).contains(&number(h, p + 5, m))
                    && (1..=31).contains(&number(h, p + 6 + m, d))
                    && !matches!(at(h, end), Some(b) if b.is_ascii_digit())
                {
                    let skip = time_end(h, end);
                    if skip == end && matches!(at(h, end), Some(b) if is_alnum(b)) {
                        return None;
                    }
                    return Some(DateHit {
                        start: p,
                        end,
                        skip,
                    });
                }
            }
        }
        return None;
    }
    if !(1..=2).contains(&n) {
        return None;
    }
    let a = number(h, p, n);
    let sep = at(h, p + n)?;
    // 08/17/1988, 30.12.1947, 17-07-2023.
    if matches!(sep, b'/' | b'.' | b'-') {
        let m = digit_run(h, p + n + 1, 2);
        if (1..=2).contains(&m) && at(h, p + n + 1 + m) == Some(sep) {
            let b = number(h, p + n + 1, m);
            let ys = p + n + 2 + m;
            let end = ys + 4;
            let ok = digit_run(h, ys, 4) == 4
                && plausible_year(number(h, ys, 4))
                && ((a <= 12 && (1..=31).contains(&b)) || (b <= 12 && (1..=31).contains(&a)))
                && a > 0
                && b > 0
                && !matches!(at(h, end), Some(x) if is_alnum(x));
            if ok {
                return Some(DateHit {
                    start: p,
                    end,
                    skip: end,
                });
            }
        }
        return None;
    }
    if !(1..=31).contains(&a) {
        return None;
    }
    // 24 Jun 1988, 06 December 2001.
    if sep == b' '
        && let Some(me) = month_after(h, p + n + 1)
        && at(h, me) == Some(b' ')
        && digit_run(h, me + 1, 4) == 4
    {
        let end = me + 5;
        if plausible_year(number(h, me + 1, 4)) && !matches!(at(h, end), Some(x) if is_alnum(x)) {
            return Some(DateHit {
                start: p,
                end,
                skip: end,
            });
        }
    }
    // May 09, 1983 / May 9 1983: the month precedes the day.
    if before(h, p) == Some(b' ')
        && let Some(ms) = month_before(h, p - 1)
    {
        let mut ys = p + n;
        if at(h, ys) == Some(b',') {
            ys += 1;
        }
        if at(h, ys) == Some(b' ') && digit_run(h, ys + 1, 4) == 4 {
            let end = ys + 5;
            if plausible_year(number(h, ys + 1, 4)) && !matches!(at(h, end), Some(x) if is_alnum(x))
            {
                return Some(DateHit {
                    start: ms,
                    end,
                    skip: end,
                });
            }
        }
    }
    None
}

/// Words that, right before a date, make it a date of birth. Compared lowercase, after the
/// separators between label and value are stripped.
const BIRTH_CONTEXT: [&[u8]; 20] = [
    b"dob",
    b"d.o.b.",
    b"d.o.b",
    b"date of birth",
    b"birth date",
    b"birthdate",
    b"birthday",
    b"born",
    b"born on",
    b"born in",
    b"geburtsdatum",
    b"geboren am",
    b"date de naissance",
    b"fecha de nacimiento",
    b"data di nascita",
    b"birth_date",
    b"date_of_birth",
    "生年月日".as_bytes(),
    "出生日期".as_bytes(),
    "né le".as_bytes(),
];

/// True when the text right before `start` (same line) introduces a date of birth.
pub(crate) fn birth_context(h: &[u8], start: usize) -> bool {
    let mut buf = [0u8; WINDOW];
    let w = trim_filler(lookback(h, start, &mut buf));
    BIRTH_CONTEXT.iter().any(|k| {
        if k.first().is_some_and(|b| b.is_ascii()) {
            ends_with_word(w, k)
        } else {
            w.ends_with(k)
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn date(s: &str) -> Option<&str> {
        let h = s.as_bytes();
        let p = h.iter().position(|b| b.is_ascii_digit())?;
        at_digit(h, p).map(|d| &s[d.start..d.end])
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
    }

    #[test]
    fn not_dates() {
        assert_eq!(date("exp 09/26 ok"), None);
        assert_eq!(date("13/13/2020"), None);
        assert_eq!(date("v 1.2.3"), None);
        assert_eq!(date("2024-13-01"), None);
        assert_eq!(date("Mayday 09, 1983"), None);
    }

    #[test]
    fn timestamps_are_skipped_whole() {
        let h = b"2024-05-21T16:28:56.166Z DEBUG";
        assert_eq!(at_digit(h, 0).map(|d| d.skip), Some(24));
    }

    #[test]
    fn birth_context_is_needed() {
        let ctx = |s: &str| birth_context(s.as_bytes(), s.len());
        assert!(ctx("Patient was born on "));
        assert!(ctx("DOB: "));
        assert!(ctx("\"dob\": \""));
        assert!(ctx("D.O.B. "));
        assert!(ctx("生年月日: "));
        assert!(ctx("date de naissance : "));
        assert!(!ctx("Visit date: "));
        assert!(!ctx("DOB: 1976-01-12    MRN: 1\nVisit date: "));
        assert!(!ctx("Called on "));
        assert!(!ctx("adob: "));
    }
}
