//! US social security numbers: `224-30-8280`, `521 99 1103` next to "SSN", and
//! `245849631` right after one.
//!
//! Validity rules: no area `000`, `666` or `9xx`, no group `00`, no serial `0000`.
//!
//! * Dashed (`224-30-8280`): an SSN, even with no label at all (an unlabelled number of
//!   this shape is redacted: privacy first), unless its label ([`label`](super::label))
//!   names another identifier nearer than any SSN word (`Part number`, `Order #`, `Lab
//!   panel code`, `MRN`, `Ticket id`, `Form ref`...) or it follows `#` with no label.
//! * Spaced (`521 99 1103`): only with SSN context on its line (`SSN`, `SS#`, `social
//!   security`, `Soc. Sec.`), since the shape is common in other numbering.
//! * Either: the nearest cue word of the label decides first, so `SSN 401 22 7789; claim
//!   id 401-22-7790` is one SSN and one claim id.
//! * Nine bare digits (`245849631`): only when the nearest cue word of its label is an SSN
//!   word (`SSN#`, `Social Security No.`, `Soc. Sec. #`, `"ssn":`, `my social is`).

use super::label::{Cue, WordsOnce, nearest_cue};

static SSN: WordsOnce = WordsOnce::new(&[&SSN_WORDS]);
static NOT: WordsOnce = WordsOnce::new(&[&NOT_SSN]);
use super::text::{WINDOW, at, before, contains_word, digit_run, is_alnum, lookback, number};

/// Words that make a number an SSN when they are the nearest cue of its label.
const SSN_WORDS: [&[u8]; 5] = [b"ssn", b"ssns", b"social", b"soc", b"ss"];

/// Words that, as the nearest cue of its label, make an SSN-shaped number an ID.
const NOT_SSN: [&[u8]; 45] = [
    b"part",
    b"item",
    b"product",
    b"model",
    b"serial",
    b"sku",
    b"order",
    b"invoice",
    b"tracking",
    b"ref",
    b"reference",
    b"ticket",
    b"case",
    b"po",
    b"lot",
    b"batch",
    b"account",
    b"acct",
    b"routing",
    b"version",
    b"code",
    b"panel",
    b"lab",
    b"test",
    b"mrn",
    b"chart",
    b"record",
    b"claim",
    b"policy",
    b"form",
    b"id",
    b"member",
    b"employee",
    b"specimen",
    b"sample",
    b"accession",
    b"rx",
    b"npi",
    b"license",
    b"teilenummer",
    b"artikelnummer",
    b"bestellnummer",
    b"auftragsnummer",
    b"rechnungsnummer",
    b"seriennummer",
];

/// True when the line before `start` names an SSN.
pub(crate) fn ssn_context(h: &[u8], start: usize) -> bool {
    let mut buf = [0u8; WINDOW];
    let w = lookback(h, start, &mut buf);
    contains_word(w, b"ssn")
        || contains_word(w, b"ss#")
        || super::text::find(w, b"social security").is_some()
        || super::text::find(w, b"soc. sec").is_some()
}

fn valid(area: u32, group: u32, serial: u32) -> bool {
    area != 0 && area != 666 && area < 900 && group != 0 && serial != 0
}

/// Nine bare digits at `p` right after an SSN label; returns the end.
fn bare(h: &[u8], p: usize) -> Option<usize> {
    let end = p + 9;
    if digit_run(h, p, 9) != 9
        || matches!(at(h, end), Some(b) if is_alnum(b))
        || (matches!(at(h, end), Some(b'-' | b'.' | b','))
            && matches!(at(h, end + 1), Some(b) if b.is_ascii_digit()))
        || !valid(number(h, p, 3), number(h, p + 3, 2), number(h, p + 5, 4))
    {
        return None;
    }
    (nearest_cue(h, p, SSN.get(), NOT.get()) == Some(Cue::Own)).then_some(end)
}

/// An SSN starting at the digit `p`; returns its end.
pub(crate) fn at_digit(h: &[u8], p: usize) -> Option<usize> {
    if digit_run(h, p, 3) != 3 {
        return bare(h, p);
    }
    let sep = at(h, p + 3)?;
    if !matches!(sep, b'-' | b' ') || digit_run(h, p + 4, 2) != 2 || at(h, p + 6) != Some(sep) {
        return None;
    }
    if digit_run(h, p + 7, 4) != 4 {
        return None;
    }
    let end = p + 11;
    // Part of a longer number on either side.
    if matches!(at(h, end), Some(b) if is_alnum(b))
        || (at(h, end) == Some(sep) && matches!(at(h, end + 1), Some(b) if b.is_ascii_digit()))
        || matches!(before(h, p), Some(b'-' | b'.' | b'/') if matches!(p.checked_sub(2).and_then(|i| at(h, i)), Some(b) if b.is_ascii_digit()))
    {
        return None;
    }
    if !valid(number(h, p, 3), number(h, p + 4, 2), number(h, p + 7, 4)) {
        return None;
    }
    match nearest_cue(h, p, SSN.get(), NOT.get()) {
        Some(Cue::Other) => None,
        Some(Cue::Own) => Some(end),
        None if ssn_context(h, p) => Some(end),
        None if sep == b' ' => None,
        None => {
            let mut i = p;
            while i > 0 && h[i - 1] == b' ' {
                i -= 1;
            }
            (before(h, i) != Some(b'#')).then_some(end)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ssn(s: &str) -> Option<&str> {
        let h = s.as_bytes();
        let p = h.iter().position(|b| b.is_ascii_digit())?;
        at_digit(h, p).map(|e| &s[p..e])
    }

    #[test]
    fn positives() {
        assert_eq!(ssn("SSN on file: 224-30-8280\n"), Some("224-30-8280"));
        assert_eq!(ssn("SSN: 521 99 1103"), Some("521 99 1103"));
        assert_eq!(ssn("\"ssn\": \"647 36 9554\""), Some("647 36 9554"));
        assert_eq!(ssn("on file 224-30-8280"), Some("224-30-8280"));
        assert_eq!(ssn("224-30-8280"), Some("224-30-8280"));
        assert_eq!(ssn("SSN# 245849631\n"), Some("245849631"));
        assert_eq!(ssn("Social Security No. 264922049"), Some("264922049"));
        assert_eq!(ssn("Soc. Sec. # 656577711"), Some("656577711"));
        assert_eq!(ssn("\"ssn\": \"437935945\""), Some("437935945"));
        assert_eq!(ssn("my social is 437935945 ok"), Some("437935945"));
    }

    #[test]
    fn validity_rules() {
        for bad in [
            "SSN 000-12-3456",
            "SSN 666-12-3456",
            "SSN 912-12-3456",
            "SSN 123-00-4567",
            "SSN 123-45-0000",
        ] {
            assert_eq!(ssn(bad), None, "{bad}");
        }
    }

    #[test]
    fn near_misses() {
        assert_eq!(ssn("Part number 439-84-6499 is back-ordered"), None);
        assert_eq!(ssn("Order #439-84-6499"), None);
        assert_eq!(ssn("call 521 99 1103"), None);
        assert_eq!(ssn("1224-30-8280"), None);
        assert_eq!(ssn("224-30-82801"), None);
        assert_eq!(ssn("224-30-8280-1"), None);
        assert_eq!(ssn("Lab panel code 296-47-6592 was reordered"), None);
        assert_eq!(ssn("Ticket id 296-47-6592"), None);
        assert_eq!(ssn("MRN 296-47-6592"), None);
        assert_eq!(ssn("Form ref: 296-47-6592"), None);
        assert_eq!(ssn("Ref# 296-47-6592"), None);
        assert_eq!(ssn("#296-47-6592"), None);
        // Nine bare digits need an SSN label right before them.
        assert_eq!(ssn("Order 245849631"), None);
        assert_eq!(ssn("points: 245849631"), None);
        assert_eq!(ssn("SSN on file; routing 245849631"), None);
        assert_eq!(ssn("SSN 2458496310"), None);
        assert_eq!(ssn("SSN 666849631"), None);
    }
}
