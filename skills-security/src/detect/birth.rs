//! Which dates are dates of birth: a date is one only when birth context introduces it, on
//! the same line right before it, or, in a delimited table, in its column's header
//! ([`table`](super::table)). A date with no such context (a visit, an invoice, a log
//! timestamp) is never a date of birth, whatever its year.
//!
//! The text before the date, after label punctuation (`:`, `=`, quotes, `#`, `：`), a
//! bracketed format hint (`Date of birth (mm/dd/yyyy):`, `DOB [dd.mm.yyyy]`) and up to two
//! English links (`my bday is`, `birthday is on`, `born on the`) are set aside, must end
//! with:
//!
//! * a birth word, as the last one to three words of a label or key, however the key is
//!   cased or joined: `DOB`, `D.O.B.`, `Date of birth`, `Birth date`, `birthday`, `bday`,
//!   `Born`, `"dob"`, `date_of_birth`, `dateOfBirth`, `birthDate`, `patient_dob`,
//!   `Geburtsdatum`, `geb.`, `Date de naissance`, `Fecha de nacimiento`, `F. nacimiento`,
//!   `Data di nascita`, `Data de nascimento`, `Geboortedatum`; or
//! * a phrase with its own link word: `geboren am`, `né le`/`née le`, `nacido el`/`nacida
//!   el`, `nato il`/`nata il`, `nascido em`, `geboren op`, `b.`; or
//! * a CJK label: `生年月日`, `誕生日`/`生日`, `出生日期`, `생년월일`.
//!
//! An XML element's name counts as a label (`<dob>`, `<birthDate>`), and so does a birth
//! label followed by a short owner phrase (`DOB of patient:`, `Date of birth of the
//! insured:`, `fecha de nacimiento del titular:`).

use super::text::{WINDOW, ends_with_word, is_alnum, lookback, trim_filler};

/// Birth words, compared with the last one, two or three words of a label joined and
/// lowercased (so `date_of_birth`, `dateOfBirth` and `Date of Birth` all end in `birth`,
/// and `birth_date`, `birthDate` and `Birth date` join to `birthdate`).
const BIRTH_WORDS: [&[u8]; 17] = [
    b"dob",
    b"birth",
    b"birthdate",
    b"birthday",
    b"bday",
    b"born",
    b"geburtsdatum",
    b"geburtstag",
    b"gebdatum",
    b"geb",
    b"naissance",
    b"nacimiento",
    b"fnacimiento",
    b"nascita",
    b"nascimento",
    b"geboortedatum",
    b"geboren",
];

/// Phrases whose last word is a link (`am`, `le`, `el`...) that is not a label on its own.
/// Compared lowercase as whole words.
const BIRTH_PHRASES: [&str; 15] = [
    "geboren am",
    "geb. am",
    "geboren op",
    "né le",
    "née le",
    "né(e) le",
    "nacido el",
    "nacida el",
    "nato il",
    "nata il",
    "nascido em",
    "nascida em",
    "nacido/a el",
    "b.",
    "geb.",
];

/// CJK labels, matched as a suffix (CJK text has no word boundaries to check).
const CJK_LABELS: [&str; 5] = ["生年月日", "生日", "出生日期", "出生年月日", "생년월일"];

/// English words between a label and its value: `my bday is`, `born on the`.
const LINKS: [&[u8]; 5] = [b"is", b"was", b"on", b"be", b"the"];

/// True when the text right before `start` (same line) introduces a date of birth.
pub(crate) fn birth_context(h: &[u8], start: usize) -> bool {
    // The first look, on the text as it is: most dates (log timestamps, visits, invoices)
    // are refused here, before the window is copied and lowercased.
    if !may_name_birth_as_written(h, start) {
        return false;
    }
    let mut buf = [0u8; WINDOW];
    let line = lookback(h, start, &mut buf);
    // `line` is `h[from..start]` lowercased, so a prefix of it has the same length in `h`.
    let from = start - line.len();
    let mut w = trim_filler(line);
    if !may_name_birth(w) {
        return false;
    }
    w = trim_filler(strip_hint(w));
    // An XML element's name is its label: `<dob>`, `<birthDate>`.
    if let Some(rest) = w.strip_suffix(b">") {
        w = rest;
    }
    for _ in 0..3 {
        let original = &h[from..from + w.len()];
        if is_label(w, original) || owner_follows(w, original) {
            return true;
        }
        match strip_link(w) {
            Some(rest) => w = trim_filler(rest),
            None => return false,
        }
    }
    false
}

/// A cheap first look (every date pays it): every birth word and phrase has a `b`
/// (`dob`, `birth`, `bday`, `born`, `geb.`), an `na` (`naissance`, `nacimiento`,
/// `nascita`, `nato`), an `né`, or is CJK (a lead byte of U+5000 or above).
fn may_name_birth(w: &[u8]) -> bool {
    memchr::memchr(b'b', w).is_some()
        || memchr::memchr_iter(b'n', w)
            .any(|i| matches!(w.get(i + 1..), Some([b'a', ..] | [0xC3, 0xA9, ..])))
        || w.iter().any(|&b| b >= 0xE5)
}

/// [`may_name_birth`] on the same line's [`WINDOW`] bytes before `start` as written: any
/// case, before filler is trimmed. Everything [`may_name_birth`] accepts in the lowercased,
/// trimmed window it accepts here (that window is a prefix of this one, lowercased).
fn may_name_birth_as_written(h: &[u8], start: usize) -> bool {
    let end = start.min(h.len());
    let from = end.saturating_sub(WINDOW);
    let mut w = &h[from..end];
    if let Some(nl) = memchr::memrchr(b'\n', w) {
        w = &w[nl + 1..];
    }
    memchr::memchr2(b'b', b'B', w).is_some()
        || memchr::memchr2_iter(b'n', b'N', w)
            .any(|i| matches!(w.get(i + 1..), Some([b'a' | b'A', ..] | [0xC3, 0xA9, ..])))
        || w.iter().any(|&b| b >= 0xE5)
}

/// True when a label or key's text (lowercase `w`, original case `original`) names a
/// date of birth.
fn is_label(w: &[u8], original: &[u8]) -> bool {
    BIRTH_PHRASES
        .iter()
        .any(|p| ends_with_word(w, p.as_bytes()))
        || (w.last().is_some_and(|&b| b >= 0x80)
            && CJK_LABELS.iter().any(|p| w.ends_with(p.as_bytes())))
        || ends_in_key(original, &BIRTH_WORDS)
}

/// Words that join a birth label to whose birth it is: `Date of birth of the insured`,
/// `fecha de nacimiento del titular`, `date de naissance de l'assuré`.
const OWNER_LINKS: [&[u8]; 6] = [b"of", b"del", b"de", b"du", b"von", b"des"];

/// True when the label is a birth label followed by a short owner phrase (a link word,
/// then at most three words).
fn owner_follows(w: &[u8], original: &[u8]) -> bool {
    // Walk back over the last few spaces: the link is one of the four words before the end.
    let mut end = w.len();
    for _ in 0..4 {
        let Some(space) = memchr::memrchr(b' ', &w[..end]) else {
            return false;
        };
        let word_start = memchr::memrchr(b' ', &w[..space]).map_or(0, |i| i + 1);
        if OWNER_LINKS.contains(&&w[word_start..space]) && word_start > 0 {
            let label = word_start - 1;
            if is_label(&w[..label], &original[..label]) {
                return true;
            }
        }
        end = space;
    }
    false
}

/// Removes a trailing bracketed hint of at most 24 bytes (`(mm/dd/yyyy)`, `[dd.mm.yyyy]`).
fn strip_hint(w: &[u8]) -> &[u8] {
    let Some(&close) = w.last() else {
        return w;
    };
    let open = match close {
        b')' => b'(',
        b']' => b'[',
        _ => return w,
    };
    let tail = &w[w.len().saturating_sub(24)..w.len() - 1];
    match memchr::memrchr(open, tail) {
        Some(i) => &w[..w.len() - (tail.len() - i) - 1],
        None => w,
    }
}

/// `w` without its last word, when that word is an English link.
fn strip_link(w: &[u8]) -> Option<&[u8]> {
    let s = w
        .iter()
        .rposition(|&b| !b.is_ascii_alphabetic())
        .map_or(0, |i| i + 1);
    LINKS.contains(&&w[s..]).then_some(&w[..s])
}

/// True when the last one to three words of `s` (split at non-alphanumeric bytes and at
/// camel-case humps; non-ASCII bytes count as letters), joined and lowercased, are one of
/// `keys`. Shared with the table-header check.
pub(crate) fn ends_in_key(s: &[u8], keys: &[&[u8]]) -> bool {
    // No key is longer than this: a longer join cannot match, so stop there.
    let mut joined = [0u8; 16];
    let mut len = 0;
    let mut end = s.len();
    for _ in 0..3 {
        let Some((ws, we)) = last_word(s, end) else {
            return false;
        };
        let word = &s[ws..we];
        if len + word.len() > joined.len() {
            return false;
        }
        // Prepend the word.
        joined.copy_within(0..len, word.len());
        for (o, b) in joined.iter_mut().zip(word) {
            *o = b.to_ascii_lowercase();
        }
        len += word.len();
        // The join only grows to the left: once no key ends with it, none will.
        let tail = &joined[..len];
        let mut a_key_ends_so = false;
        for key in keys {
            if key.len() >= len && key.last() == tail.last() && key.ends_with(tail) {
                if key.len() == len {
                    return true;
                }
                a_key_ends_so = true;
            }
        }
        if !a_key_ends_so {
            return false;
        }
        // Only words of the same label: a separator other than `_`, `-`, `.`, a space or
        // a hump ends it.
        if ws > 0 && !matches!(s[ws - 1], b'_' | b'-' | b'.' | b' ') && !is_hump(s, ws) {
            return false;
        }
        end = ws;
    }
    false
}

fn is_word_byte(b: u8) -> bool {
    is_alnum(b) || b >= 0x80
}

/// True when a camel-case word starts at `i` (`dateOfBirth` at `O`, `patientDOB` at `D`,
/// `DOBDate` at the second `D`).
fn is_hump(s: &[u8], i: usize) -> bool {
    if i == 0 || i >= s.len() || !s[i].is_ascii_uppercase() {
        return false;
    }
    let prev = s[i - 1];
    prev.is_ascii_lowercase()
        || prev.is_ascii_digit()
        || (prev.is_ascii_uppercase() && s.get(i + 1).is_some_and(u8::is_ascii_lowercase))
}

/// The last word of `s[..end]`: skips separators back to a word byte, then takes word
/// bytes back to a separator or a camel-case hump.
fn last_word(s: &[u8], end: usize) -> Option<(usize, usize)> {
    let mut e = end;
    while e > 0 && !is_word_byte(s[e - 1]) {
        // Only label punctuation may sit between words of one label.
        if !matches!(s[e - 1], b'_' | b'-' | b'.' | b' ') {
            return None;
        }
        e -= 1;
    }
    if e == 0 {
        return None;
    }
    let mut b = e;
    while b > 0 && is_word_byte(s[b - 1]) {
        b -= 1;
        if is_hump(s, b) {
            break;
        }
    }
    Some((b, e))
}

#[cfg(test)]
mod tests {
    use super::*;

    use proptest::prelude::*;

    proptest! {
        /// The first look on the text as written never refuses what the look on the
        /// trimmed, lowercased window accepts.
        #[test]
        fn the_first_look_refuses_nothing_the_window_accepts(
            parts in proptest::collection::vec(
                prop_oneof![
                    Just("b"), Just("B"), Just("n"), Just("N"), Just("a"), Just("A"),
                    Just("é"), Just("É"), Just("生"), Just("：\u{a0}"), Just(" "), Just(":"),
                    Just("\n"), Just("x"), Just("\""), Just("-"), Just("("),
                ],
                0..70,
            )
        ) {
            let text = parts.concat();
            let h = text.as_bytes();
            for start in (0..=h.len()).filter(|&i| text.is_char_boundary(i)) {
                let mut buf = [0u8; WINDOW];
                let window = trim_filler(lookback(h, start, &mut buf));
                prop_assert!(!may_name_birth(window) || may_name_birth_as_written(h, start));
            }
        }
    }

    fn ctx(s: &str) -> bool {
        birth_context(s.as_bytes(), s.len())
    }

    #[test]
    fn labels_and_keys() {
        for yes in [
            "Patient was born on ",
            "Born the ",
            "born on the ",
            "DOB: ",
            "\"dob\": \"",
            "D.O.B. ",
            "D.O.B.: ",
            "Date of Birth: ",
            "Date of birth (mm/dd/yyyy): ",
            "DOB [dd.mm.yyyy] ",
            "Birth date: ",
            "Born: ",
            "[09:34] Margot: my bday is ",
            "her birthday is on ",
            "\"dateOfBirth\": \"",
            "\"birthDate\": \"",
            "date_of_birth=",
            "patientDOB: ",
            "  birth_date: ",
            "生年月日：",
            "誕生日: ",
            "date de naissance : ",
            "Née le ",
            "Né le ",
            "Geboren am ",
            "Geburtsdatum: ",
            "geb. ",
            "F. nacimiento: ",
            "Fecha de nacimiento: ",
            "Nacida el ",
            "nato il ",
            "Data di nascita: ",
            "Jane Roe, b. ",
            "geb. am ",
            "生日：",
            "<dob>",
            "<birthDate>",
            "Date of birth of the insured: ",
            "DOB of patient: ",
            "Fecha de nacimiento del titular: ",
        ] {
            assert!(ctx(yes), "{yes:?}");
        }
    }

    #[test]
    fn not_birth_context() {
        for no in [
            "Visit date: ",
            "DOB: 1976-01-12    MRN: 1\nVisit date: ",
            "Called on ",
            "adob: ",
            "Birthday party on ",
            "Date of Service: ",
            "\"created_at\": \"",
            "Policy start: ",
            "is ",
            "",
            "Birth certificate issued: ",
            "Plan b2 ",
            "Date of issue of the birth certificate: ",
            "Name of the person born in Rome and the date of the visit: ",
        ] {
            assert!(!ctx(no), "{no:?}");
        }
    }

    #[test]
    fn the_first_look_lets_every_birth_word_through() {
        for word in BIRTH_WORDS {
            assert!(may_name_birth(word), "{:?}", String::from_utf8_lossy(word));
        }
        for phrase in BIRTH_PHRASES.iter().chain(&CJK_LABELS) {
            assert!(may_name_birth(phrase.as_bytes()), "{phrase}");
        }
        assert!(may_name_birth(b"d.o.b."));
        assert!(!may_name_birth(b"visit date"));
    }

    #[test]
    fn keys_split_at_humps_and_separators() {
        let keys: [&[u8]; 2] = [b"dob", b"birthdate"];
        assert!(ends_in_key(b"patient_dob", &keys));
        assert!(ends_in_key(b"PatientDOB", &keys));
        assert!(ends_in_key(b"birthDate", &keys));
        assert!(ends_in_key(b"Birth date", &keys));
        assert!(!ends_in_key(b"adob", &keys));
        assert!(!ends_in_key(b"birth, date", &keys));
    }
}
