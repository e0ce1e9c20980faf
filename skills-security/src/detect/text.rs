//! Byte-level helpers shared by the recognizers: boundaries, digit runs and the look-back
//! window that context rules read. Everything here is bounded and allocation-free.

/// The byte at `i`, if any.
#[inline]
pub(crate) fn at(h: &[u8], i: usize) -> Option<u8> {
    h.get(i).copied()
}

/// The byte before `i`, if any.
#[inline]
pub(crate) fn before(h: &[u8], i: usize) -> Option<u8> {
    i.checked_sub(1).and_then(|j| h.get(j).copied())
}

#[inline]
pub(crate) fn is_alnum(b: u8) -> bool {
    b.is_ascii_alphanumeric()
}

/// True when no ASCII letter or digit touches position `i` from the left.
#[inline]
pub(crate) fn open_before(h: &[u8], i: usize) -> bool {
    !matches!(before(h, i), Some(b) if is_alnum(b))
}

/// The number of ASCII digits starting at `i` (at most `max + 1`, so callers can tell
/// "exactly max" from "more").
#[inline]
pub(crate) fn digit_run(h: &[u8], i: usize, max: usize) -> usize {
    let mut n = 0;
    while n <= max {
        match h.get(i + n) {
            Some(b) if b.is_ascii_digit() => n += 1,
            _ => break,
        }
    }
    n
}

/// The value of `n` digits at `i` (callers have checked they are digits; n <= 9).
#[inline]
pub(crate) fn number(h: &[u8], i: usize, n: usize) -> u32 {
    h.get(i..i + n)
        .map(|d| {
            d.iter()
                .fold(0u32, |acc, &b| acc * 10 + u32::from(b.wrapping_sub(b'0')))
        })
        .unwrap_or(u32::MAX)
}

/// The end of the run of bytes matching `pred` from `i`, at most `max` long.
#[inline]
pub(crate) fn run_end(h: &[u8], i: usize, max: usize, pred: impl Fn(u8) -> bool) -> usize {
    let mut j = i;
    let limit = h.len().min(i.saturating_add(max));
    while j < limit && pred(h[j]) {
        j += 1;
    }
    j
}

/// Moves `i` forward to the next UTF-8 character boundary (for skipping).
#[inline]
pub(crate) fn char_ceil(h: &[u8], mut i: usize) -> usize {
    while i < h.len() && (h[i] & 0xC0) == 0x80 {
        i += 1;
    }
    i.min(h.len())
}

/// Size of the look-back window context rules read.
pub(crate) const WINDOW: usize = 48;

/// The text before `end` on the same line, at most [`WINDOW`] bytes, ASCII-lowercased into
/// `buf`. Multi-byte characters are copied as they are (the window may start mid-character,
/// which only ever makes a keyword at its very start unmatchable).
pub(crate) fn lookback<'b>(h: &[u8], end: usize, buf: &'b mut [u8; WINDOW]) -> &'b [u8] {
    let end = end.min(h.len());
    let start = end.saturating_sub(WINDOW);
    let line_start = memchr::memrchr(b'\n', &h[start..end]).map_or(start, |p| start + p + 1);
    let src = &h[line_start..end];
    let out = &mut buf[..src.len()];
    for (o, &b) in out.iter_mut().zip(src) {
        *o = b.to_ascii_lowercase();
    }
    out
}

/// Strips trailing separators a label and its value sit between: spaces, quotes, `:`, `=`,
/// `-`, `#`, the full-width colon and no-break spaces.
pub(crate) fn trim_filler(mut s: &[u8]) -> &[u8] {
    loop {
        if let Some(rest) = s.strip_suffix("：".as_bytes()) {
            s = rest;
        } else if let Some(rest) = s.strip_suffix("\u{a0}".as_bytes()) {
            s = rest;
        } else if let Some((&last, rest)) = s.split_last() {
            if matches!(
                last,
                b' ' | b'\t' | b':' | b'=' | b'"' | b'\'' | b'-' | b'(' | b'['
            ) {
                s = rest;
            } else {
                return s;
            }
        } else {
            return s;
        }
    }
}

/// True when `s` ends with `word` and the byte before it is not a letter or digit.
pub(crate) fn ends_with_word(s: &[u8], word: &[u8]) -> bool {
    // The last byte first: callers try a list of words against one label, most of which
    // differ there, and a whole-slice comparison calls out to `memcmp` for each.
    word.last().is_none_or(|l| s.last() == Some(l)) && s.ends_with(word) && {
        let i = s.len() - word.len();
        i == 0 || !is_alnum(s[i - 1])
    }
}

/// The last `n` words of `s` (words are runs of ASCII letters, digits and `_`), last first.
pub(crate) fn last_words(s: &[u8], n: usize) -> impl Iterator<Item = &[u8]> {
    s.split(|&b| !(is_alnum(b) || b == b'_'))
        .rev()
        .filter(|w| !w.is_empty())
        .take(n)
}

/// Where `needle` first occurs in `hay`. For the short windows context rules read: unlike
/// `memchr::memmem::find`, it builds no searcher per call (which costs more than the
/// search itself on a few dozen bytes).
#[inline]
pub(crate) fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    let (&first, rest) = needle.split_first()?;
    let last_start = hay.len().checked_sub(needle.len())?;
    let mut from = 0;
    while let Some(i) = memchr::memchr(first, &hay[from..=last_start]) {
        let s = from + i;
        if hay[s + 1..s + needle.len()] == *rest {
            return Some(s);
        }
        from = s + 1;
        if from > last_start {
            break;
        }
    }
    None
}

/// True when `needle` occurs in `hay` as a whole word (ASCII word boundaries).
pub(crate) fn contains_word(hay: &[u8], needle: &[u8]) -> bool {
    let mut from = 0;
    while let Some(p) = find(&hay[from..], needle) {
        let s = from + p;
        let e = s + needle.len();
        if (s == 0 || !is_alnum(hay[s - 1])) && (e == hay.len() || !is_alnum(hay[e])) {
            return true;
        }
        from = s + 1;
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lookback_stops_at_line_start_and_lowercases() {
        let mut buf = [0; WINDOW];
        let h = b"first line DOB\nSSN on file: ";
        assert_eq!(lookback(h, h.len(), &mut buf), b"ssn on file: ");
        assert_eq!(trim_filler(b"ssn on file: "), b"ssn on file");
    }

    #[test]
    fn words_and_boundaries() {
        assert!(ends_with_word(b"the dob", b"dob"));
        assert!(!ends_with_word(b"xdob", b"dob"));
        let w: Vec<&[u8]> = last_words(b"parse_version('", 2).collect();
        assert_eq!(w, vec![&b"parse_version"[..]]);
        assert!(contains_word(b"our ssn is", b"ssn"));
        assert!(!contains_word(b"assn", b"ssn"));
        assert_eq!(find(b"abcabd", b"abd"), Some(3));
        assert_eq!(find(b"ab", b"abc"), None);
        assert_eq!(find(b"abc", b""), None);
        assert_eq!(find(b"xxa", b"a"), Some(2));
    }
}
