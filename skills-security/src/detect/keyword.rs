//! The seed's keyword classes: health terms make text regulated; financial terms and
//! explicit markers make it restricted; contact context makes it confidential.
//!
//! A keyword marks the text it labels, not itself: in label form (`Diagnosis: Major
//! depressive disorder.`, `Revenue: $4.2M`) the finding covers the value up to the end of the
//! line or sentence, so a pipeline hides `Major depressive disorder` and keeps the label;
//! otherwise it covers the sentence the keyword is in.

use crate::classify::{DataClass, DataType};

use super::text::{at, char_ceil, is_alnum};

/// What a keyword says about the text around it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Topic {
    Health,
    Financial,
    Marker,
    Contact,
}

impl Topic {
    pub(crate) fn data_type(self) -> DataType {
        match self {
            Topic::Health => DataType::HEALTH,
            Topic::Financial => DataType::FINANCIAL,
            Topic::Marker => DataType::MARKED,
            Topic::Contact => DataType::CONTACT,
        }
    }

    pub(crate) fn class(self) -> DataClass {
        match self {
            Topic::Health => DataClass::Regulated,
            Topic::Financial | Topic::Marker => DataClass::Restricted,
            Topic::Contact => DataClass::Confidential,
        }
    }
}

/// Keywords (matched case-insensitively, as whole words) and their topics.
pub(crate) const KEYWORDS: [(&str, Topic); 24] = [
    ("diagnosis", Topic::Health),
    ("diagnoses", Topic::Health),
    ("diagnosed", Topic::Health),
    ("prognosis", Topic::Health),
    ("medication", Topic::Health),
    ("medications", Topic::Health),
    ("prescription", Topic::Health),
    ("patient id", Topic::Health),
    ("medical record", Topic::Health),
    ("medical records", Topic::Health),
    ("medical history", Topic::Health),
    ("revenue", Topic::Financial),
    ("revenues", Topic::Financial),
    ("profit", Topic::Financial),
    ("profits", Topic::Financial),
    ("margin", Topic::Financial),
    ("margins", Topic::Financial),
    ("contract value", Topic::Financial),
    ("deal size", Topic::Financial),
    ("competitor pricing", Topic::Financial),
    ("our pricing", Topic::Financial),
    ("confidential", Topic::Marker),
    ("proprietary", Topic::Marker),
    ("contact", Topic::Contact),
];

const MAX_EXTENT: usize = 300;

fn floor_char(h: &[u8], mut i: usize) -> usize {
    while i > 0 && i < h.len() && (h[i] & 0xC0) == 0x80 {
        i -= 1;
    }
    i
}

/// The end of the sentence or line containing `from`.
fn sentence_end(h: &[u8], from: usize) -> usize {
    let limit = floor_char(h, (from + MAX_EXTENT).min(h.len()));
    let mut i = from;
    while i < limit {
        match h[i] {
            b'\n' | b';' => return i,
            b'.' | b'!' | b'?'
                if matches!(at(h, i + 1), None | Some(b' ' | b'\n' | b'\t' | b'"')) =>
            {
                return i;
            }
            _ => i += 1,
        }
    }
    limit
}

fn sentence_start(h: &[u8], to: usize) -> usize {
    let limit = char_ceil(h, to.saturating_sub(MAX_EXTENT));
    let mut i = to;
    while i > limit {
        match h[i - 1] {
            b'\n' | b';' => return i,
            b'.' | b'!' | b'?' if matches!(at(h, i), Some(b' ' | b'\n' | b'\t')) => return i,
            _ => i -= 1,
        }
    }
    limit
}

fn skip_spaces(h: &[u8], mut i: usize) -> usize {
    while matches!(at(h, i), Some(b' ' | b'\t')) {
        i += 1;
    }
    i
}

/// The labelled value after a keyword ending at `kend`, when a `:` or `=` follows it.
fn label_value(h: &[u8], kend: usize) -> Option<(usize, usize)> {
    let mut i = skip_spaces(h, kend);
    if matches!(at(h, i), Some(b'"' | b'\'')) {
        i += 1;
    }
    i = skip_spaces(h, i);
    if matches!(at(h, i), Some(b':' | b'=')) {
        i += 1;
    } else if h.get(i..i + 3) == Some("：".as_bytes()) {
        i += 3;
    } else {
        return None;
    }
    let s = skip_spaces(h, i);
    let e = sentence_end(h, s);
    let mut e2 = e;
    while e2 > s && matches!(h[e2 - 1], b' ' | b'\t' | b'\r' | b',') {
        e2 -= 1;
    }
    (e2 > s).then_some((s, e2))
}

/// The extent a keyword at `k..kend` marks, or `None` when it marks nothing (a contact
/// keyword without contact details nearby).
pub(crate) fn extent(h: &[u8], k: usize, kend: usize, topic: Topic) -> Option<(usize, usize)> {
    if matches!(super::text::before(h, k), Some(b) if is_alnum(b))
        || matches!(at(h, kend), Some(b) if is_alnum(b))
    {
        return None;
    }
    if let Some(v) = label_value(h, kend) {
        return Some(v);
    }
    if topic == Topic::Contact {
        let line_end = memchr::memchr(b'\n', &h[kend..(kend + 80).min(h.len())])
            .map_or((kend + 80).min(h.len()), |p| kend + p);
        let rest = h[kend..line_end].to_ascii_lowercase();
        let near = [&b"name"[..], b"email", b"e-mail", b"phone"]
            .iter()
            .any(|w| super::text::contains_word(&rest, w));
        if !near {
            return None;
        }
    }
    let start = sentence_start(h, k);
    Some((skip_spaces(h, start).min(k), sentence_end(h, kend)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ext<'a>(s: &'a str, kw: &str, topic: Topic) -> Option<&'a str> {
        let k = s.to_ascii_lowercase().find(kw)?;
        extent(s.as_bytes(), k, k + kw.len(), topic).map(|(a, b)| &s[a..b])
    }

    #[test]
    fn label_form_marks_the_value() {
        assert_eq!(
            ext(
                "x\nDiagnosis: Major depressive disorder.\nNext",
                "diagnosis",
                Topic::Health
            ),
            Some("Major depressive disorder")
        );
        assert_eq!(
            ext("Revenue: $4.2M", "revenue", Topic::Financial),
            Some("$4.2M")
        );
        assert_eq!(
            ext(
                "Emergency contact: Heather Johnson, +1 737 493 3770\n",
                "contact",
                Topic::Contact
            ),
            Some("Heather Johnson, +1 737 493 3770")
        );
    }

    #[test]
    fn otherwise_the_sentence() {
        assert_eq!(
            ext(
                "Hi. Our revenue grew a lot. Bye",
                "revenue",
                Topic::Financial
            ),
            Some("Our revenue grew a lot")
        );
        assert_eq!(
            ext(
                "Please contact me by email soon.",
                "contact",
                Topic::Contact
            ),
            Some("Please contact me by email soon")
        );
    }

    #[test]
    fn near_misses() {
        assert_eq!(ext("We will contact you.", "contact", Topic::Contact), None);
        assert_eq!(ext("marginal gains", "margin", Topic::Financial), None);
        assert_eq!(ext("contactless", "contact", Topic::Contact), None);
    }
}
