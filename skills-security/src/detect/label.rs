//! The label before a value: the words on the same line right before it, read nearest
//! first, up to a break. Phone and SSN recognizers use it to tell a number introduced as
//! theirs (`Mobile:`, `call`, `SSN#`) from one introduced as something else (`Order ref
//! (legacy system):`, `Tracking number of the returned item:`, `Lab panel code`).
//!
//! A break ends the label: `,`, `;`, `!`, `?`, `|`, a tab (not one right after a colon:
//! `Tel:\t...`), a sentence end (`.` after a word
//! of four letters or more; `No.`, `Tel.`, `Ref.` are abbreviations, not ends), or a word
//! with three digits or more in it (another value sits between; `Q3` is still a word).
//! Words are letters and digits of any script; `_` and punctuation (`—`, `。`) split them,
//! so `customer_phone=` reads as `customer phone`.

use super::text::{WINDOW, lookback};

/// What the nearest cue word of a label says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Cue {
    /// A word of the value's own kind (`phone`, `ssn`).
    Own,
    /// A word naming another kind of identifier (`order`, `ticket`, `code`).
    Other,
}

/// The most words of a label read.
const MAX_WORDS: usize = 6;

/// The character ending at `e` in `w`: its start, and whether it is a letter or digit
/// (ASCII or not). A character cut by the window's start counts as a separator.
#[inline]
fn prev_char(w: &[u8], e: usize) -> (usize, bool) {
    let b = w[e - 1];
    if b < 0x80 {
        return (e - 1, b.is_ascii_alphanumeric());
    }
    let mut s = e - 1;
    while s > 0 && e - s < 4 && (w[s] & 0xC0) == 0x80 {
        s -= 1;
    }
    let letter = std::str::from_utf8(&w[s..e])
        .ok()
        .and_then(|c| c.chars().next())
        .is_some_and(char::is_alphanumeric);
    (s, letter)
}

/// True when the tab at `t` follows a colon (spaces between): `Tel:\t...` is a label and
/// its value, not two cells of a tab-separated row.
fn after_colon(w: &[u8], t: usize) -> bool {
    let mut i = t;
    while i > 0 && w[i - 1] == b' ' {
        i -= 1;
    }
    i > 0 && w[i - 1] == b':'
}

/// A set of cue words, sorted once for binary search: the lists are written in an order that
/// reads well, and a label's every word is looked up in two of them (a walk through a list
/// of a hundred words per word cost more than the rest of the label rule).
#[derive(Debug)]
pub(crate) struct Words {
    sorted: Vec<&'static [u8]>,
    /// Per first byte, the last bytes (their low five bits) of the words starting with it:
    /// most words of a label (and every number) are refused on their first and last byte,
    /// before a binary search whose every step calls out to `memcmp`.
    ends: [u32; 256],
    /// The lengths of the words, one bit each (a word of 64 bytes or more sets bit 63).
    lengths: u64,
}

/// A word's length as a bit of [`Words::lengths`].
fn length_bit(len: usize) -> u64 {
    1 << len.min(63)
}

impl Words {
    /// The words of `lists`, sorted.
    pub(crate) fn new(lists: &[&[&'static [u8]]]) -> Words {
        let mut sorted: Vec<&'static [u8]> = lists.iter().flat_map(|l| l.iter().copied()).collect();
        sorted.sort_unstable();
        sorted.dedup();
        let mut ends = [0u32; 256];
        let mut lengths = 0;
        for w in &sorted {
            if let (Some(&first), Some(&last)) = (w.first(), w.last()) {
                ends[usize::from(first)] |= 1 << (last & 31);
            }
            lengths |= length_bit(w.len());
        }
        Words {
            sorted,
            ends,
            lengths,
        }
    }

    /// True when `word` is one of them.
    pub(crate) fn contains(&self, word: &[u8]) -> bool {
        let (Some(&first), Some(&last)) = (word.first(), word.last()) else {
            return false;
        };
        self.lengths & length_bit(word.len()) != 0
            && self.ends[usize::from(first)] >> (last & 31) & 1 == 1
            && self.sorted.binary_search(&word).is_ok()
    }
}

/// A lazily built [`Words`]: `static NAME: WordsOnce = WordsOnce::new(&[&LIST...]);`.
pub(crate) struct WordsOnce {
    lists: &'static [&'static [&'static [u8]]],
    words: std::sync::OnceLock<Words>,
}

impl WordsOnce {
    pub(crate) const fn new(lists: &'static [&'static [&'static [u8]]]) -> WordsOnce {
        WordsOnce {
            lists,
            words: std::sync::OnceLock::new(),
        }
    }

    pub(crate) fn get(&self) -> &Words {
        self.words.get_or_init(|| Words::new(self.lists))
    }
}

/// The nearest word before `start` (same line, within the look-back window and up to a
/// break) that is in `own` or `other`.
pub(crate) fn nearest_cue(h: &[u8], start: usize, own: &Words, other: &Words) -> Option<Cue> {
    let mut buf = [0u8; WINDOW];
    let w = lookback(h, start, &mut buf);
    let mut e = w.len();
    for _ in 0..MAX_WORDS {
        // Separators back to the previous word; stop at a break.
        loop {
            if e == 0 {
                return None;
            }
            let (s, letter) = prev_char(w, e);
            if letter {
                break;
            }
            let b = w[e - 1];
            if matches!(b, b',' | b';' | b'!' | b'?' | b'|')
                || (b == b'\t' && !after_colon(w, e - 1))
            {
                return None;
            }
            if b == b'.' && w.get(e) == Some(&b' ') {
                let mut k = e - 1;
                while k > 0 && w[k - 1].is_ascii_alphabetic() {
                    k -= 1;
                }
                if e - 1 - k >= 4 {
                    return None;
                }
            }
            e = s;
        }
        let mut s = e;
        while s > 0 {
            let (c, letter) = prev_char(w, s);
            if !letter {
                break;
            }
            s = c;
        }
        let word = &w[s..e];
        // Another value (`12345`, `#4622`) between the label and the number.
        if word.iter().filter(|b| b.is_ascii_digit()).count() >= 3 {
            return None;
        }
        // Text in a script without spaces runs straight into a Latin label
        // (`ありがとうPart number`): its ASCII tail is a word of its own.
        let tail = word
            .iter()
            .rposition(|&b| b >= 0x80)
            .map_or(word, |i| &word[i + 1..]);
        let candidates: &[&[u8]] = if tail.len() == word.len() {
            &[word]
        } else {
            &[word, tail]
        };
        for &candidate in candidates {
            if own.contains(candidate) {
                return Some(Cue::Own);
            }
            if other.contains(candidate) {
                return Some(Cue::Other);
            }
        }
        e = s;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    const OWN: [&[u8]; 2] = [b"phone", b"call"];
    const OTHER: [&[u8]; 3] = [b"order", b"tracking", b"ref"];
    static OWN_WORDS: WordsOnce = WordsOnce::new(&[&OWN]);
    static OTHER_WORDS: WordsOnce = WordsOnce::new(&[&OTHER]);

    fn cue(s: &str) -> Option<Cue> {
        nearest_cue(s.as_bytes(), s.len(), OWN_WORDS.get(), OTHER_WORDS.get())
    }

    /// The first- and last-byte filter and the length filter only refuse what the
    /// search would refuse: words that share a first byte, a last byte's low bits or a
    /// length with a member are still told apart.
    #[test]
    fn words_are_found_exactly() {
        let w = Words::new(&[&[b"ssn", b"phone", b"a", b"tel."]]);
        for yes in [&b"ssn"[..], b"phone", b"a", b"tel."] {
            assert!(w.contains(yes), "{yes:?}");
        }
        for no in [
            &b""[..],
            b"sun",
            b"ssN",
            b"phono",
            b"phonE",
            b"A",
            b"!",
            b"tel",
            b"tel.n",
            b"sss",
            b"phonephone",
        ] {
            assert!(!w.contains(no), "{no:?}");
        }
    }

    #[test]
    fn nearest_word_wins() {
        assert_eq!(cue("Order ref (legacy system): "), Some(Cue::Other));
        assert_eq!(
            cue("Tracking number of the returned item: "),
            Some(Cue::Other)
        );
        assert_eq!(cue("Order contact phone: "), Some(Cue::Own));
        assert_eq!(cue("customer_phone="), Some(Cue::Own));
        assert_eq!(cue("Phone #"), Some(Cue::Own));
        assert_eq!(cue("ありがとう。Order number "), Some(Cue::Other));
        assert_eq!(cue("ありがとうOrder number "), Some(Cue::Other));
        assert_eq!(cue("Our order for the Q3 restock — "), Some(Cue::Other));
        // `téléphone` ends in `phone`.
        assert_eq!(cue("Téléphone : "), Some(Cue::Own));
        assert_eq!(cue("Numéro : "), None);
    }

    #[test]
    fn breaks_end_the_label() {
        assert_eq!(cue("Order 12345 shipped to "), None);
        assert_eq!(cue("Order shipped, reach me at "), None);
        assert_eq!(cue("See the order. Reach me at "), None);
        assert_eq!(cue("Order No. "), Some(Cue::Other));
        assert_eq!(cue("order\nMobile "), None);
        assert_eq!(cue("phone\t"), None);
        assert_eq!(cue("Phone:\t"), Some(Cue::Own));
    }
}
