//! Phone candidates checked against region metadata: libphonenumber's, through the
//! `phonenumber` crate. The recognizer finds a candidate by its shape and context (cheap,
//! in the one pass); this module says whether its digits are a number some region
//! actually issues: a country calling code that exists, a length that region dials, and
//! the digits matching the region's pattern of valid numbers (leading digits included, so
//! `0000 123456` or `+44 0 1234` is no number).
//!
//! The metadata is read once per process into plain compiled patterns (the crate's own
//! regex cache is a shared lock and a 100-entry LRU, wrong for a hot path), so a check
//! costs a table lookup and one or a few anchored matches on a dozen digits.
//!
//! A number written without its country code is checked against the regions whose
//! languages the recognizers read (English, German, French, Spanish, Italian, Portuguese,
//! Dutch, Japanese, Chinese, Korean): [`NATIONAL_REGIONS`]. It is valid when some of them
//! issues it, its national prefix (`0`, the trunk) stripped or not.

use std::sync::OnceLock;

use regex_automata::dfa::{Automaton, StartKind, dense};
use regex_automata::nfa::thompson;
use regex_automata::util::syntax;
use regex_automata::{Anchored, Input};

/// The regions a number without a country code is checked against.
const NATIONAL_REGIONS: [&str; 31] = [
    "US", "CA", "GB", "IE", "AU", "NZ", "IN", "SG", "ZA", "DE", "AT", "CH", "FR", "BE", "LU", "ES",
    "MX", "AR", "CO", "CL", "PE", "IT", "PT", "BR", "NL", "JP", "CN", "TW", "HK", "KR", "PH",
];

/// What the regions of one calling code, or the covered regions, issue.
struct Issued {
    /// Bit `n` set: some number of `n` digits is issued.
    lengths: u32,
    /// The patterns of every kind of number issued (fixed line, mobile, toll free...:
    /// libphonenumber's own test of validity; the general pattern alone is looser), one
    /// anchored alternation, so a check is one match.
    valid: dense::DFA<Vec<u32>>,
}

impl Issued {
    fn build(patterns: &[String], lengths: u32) -> Option<Issued> {
        if patterns.is_empty() {
            return None;
        }
        // Patterns that do not compile leave their regions out: their numbers are then not
        // valid, which errs toward reporting nothing rather than something wrong.
        let pattern = format!("^(?:{})$", patterns.join("|"));
        let valid = dense::Builder::new()
            .syntax(syntax::Config::new().unicode(false).utf8(false))
            .thompson(thompson::Config::new().utf8(false))
            .configure(
                dense::Config::new()
                    .start_kind(StartKind::Anchored)
                    .minimize(false),
            )
            .build(&pattern)
            .ok()?;

        Some(Issued { lengths, valid })
    }

    fn issues(&self, digits: &[u8]) -> bool {
        let len = digits.len();
        len < 32
            && self.lengths & (1 << len) != 0
            && self
                .valid
                .try_search_fwd(&Input::new(digits).anchored(Anchored::Yes))
                .is_ok_and(|m| m.is_some())
    }
}

struct Regions {
    /// By country calling code (codes are below 1000).
    by_code: Vec<Option<Issued>>,
    /// The regions of [`NATIONAL_REGIONS`], each with its trunk prefix optional (one
    /// automaton per region: together they would determinize into one of megabytes).
    national: Vec<Issued>,
    /// Bit `n` set: `n` digits is the length of a local number (dialled without its area
    /// code) in some covered region.
    local_lengths: u32,
}

fn regions() -> &'static Regions {
    static REGIONS: OnceLock<Regions> = OnceLock::new();
    REGIONS.get_or_init(load)
}

/// Reads the metadata (done on the first detector built, never during a detection).
pub(crate) fn preload() {
    regions();
}

/// A trunk prefix as a pattern: it is digits, but nothing else may pass unescaped.
fn regex_syntax_escape(trunk: &str) -> String {
    trunk
        .chars()
        .map(|c| {
            if c.is_ascii_digit() {
                c.to_string()
            } else {
                format!("\\x{{{:x}}}", u32::from(c))
            }
        })
        .collect()
}

fn mask(lengths: &[u16]) -> u32 {
    lengths
        .iter()
        .filter(|&&n| n < 32)
        .fold(0, |m, &n| m | (1 << n))
}

fn load() -> Regions {
    let database = &*phonenumber::metadata::DATABASE;
    let mut by_code: Vec<(Vec<String>, u32)> = vec![(Vec::new(), 0); 1000];
    let mut national = Vec::new();
    let mut local_lengths = 0u32;
    let mut ids: Vec<&str> = database.iter().map(|m| m.id()).collect();
    // The database is a hash map: sorted, the tables are the same on every run.
    ids.sort_unstable();
    for id in ids {
        let Some(meta) = database.by_id(id) else {
            continue;
        };
        let descriptors = meta.descriptors();
        let kinds: Vec<String> = kinds(descriptors)
            .into_iter()
            .skip(1)
            .flatten()
            .map(|k| format!("(?x:{})", k.national_number().as_str()))
            .collect();
        if kinds.is_empty() {
            continue;
        }
        let pattern = format!("(?:{})", kinds.join("|"));
        let issued = mask(&lengths(descriptors, |d| d.possible_length()));
        if let Some((patterns, code_lengths)) = by_code.get_mut(usize::from(meta.country_code())) {
            patterns.push(pattern.clone());
            *code_lengths |= issued;
        }
        if NATIONAL_REGIONS.contains(&id) {
            let trunk = meta.national_prefix().unwrap_or("");
            let with_trunk = format!("(?:{})?{pattern}", regex_syntax_escape(trunk));
            national.extend(Issued::build(
                &[with_trunk],
                issued | (issued << trunk.len()),
            ));
            local_lengths |= mask(&lengths(descriptors, |d| d.possible_local_length()));
        }
    }
    Regions {
        by_code: by_code
            .into_iter()
            .map(|(patterns, lengths)| Issued::build(&patterns, lengths))
            .collect(),
        national,
        local_lengths,
    }
}

/// The general description of a region's numbers, then one per kind it issues.
fn kinds(
    d: &phonenumber::metadata::Descriptors,
) -> [Option<&phonenumber::metadata::Descriptor>; 10] {
    [
        Some(d.general()),
        d.fixed_line(),
        d.mobile(),
        d.toll_free(),
        d.premium_rate(),
        d.shared_cost(),
        d.personal_number(),
        d.voip(),
        d.pager(),
        d.uan(),
    ]
}

/// The lengths one field gives over every kind of number a region issues (the general
/// description often leaves them to the kinds).
fn lengths(
    d: &phonenumber::metadata::Descriptors,
    field: impl Fn(&phonenumber::metadata::Descriptor) -> &[u16],
) -> Vec<u16> {
    let mut out: Vec<u16> = kinds(d)
        .into_iter()
        .flatten()
        .flat_map(|k| field(k).iter().copied())
        .collect();
    out.sort_unstable();
    out.dedup();
    out
}

/// The digits of `h[s..e]` (everything else skipped, and the digit at `skip`) into `buf`;
/// `None` past 17 digits.
fn digits_of<'b>(
    h: &[u8],
    s: usize,
    e: usize,
    skip: Option<usize>,
    buf: &'b mut [u8; 17],
) -> Option<&'b [u8]> {
    let mut n = 0;
    for (i, &b) in h.get(s..e)?.iter().enumerate() {
        if b.is_ascii_digit() && skip != Some(s + i) {
            *buf.get_mut(n)? = b;
            n += 1;
        }
    }
    Some(&buf[..n])
}

/// True when `h[s..e]`, a number written with its country code (the `+` left out of the
/// range), is one some region of that code issues. `trunk` is where a trunk `0` written
/// inside it sits (`+49 (0)40 7003575`): it is not dialled from abroad, so not counted.
pub(crate) fn international(h: &[u8], s: usize, e: usize, trunk: Option<usize>) -> bool {
    let mut buf = [0u8; 17];
    let Some(digits) = digits_of(h, s, e, trunk, &mut buf) else {
        return false;
    };
    let regions = regions();
    // Country calling codes are prefix-free: at most one of the first three splits is one.
    (1..=3).any(|k| {
        let Some((code, nsn)) = split_code(digits, k) else {
            return false;
        };
        regions
            .by_code
            .get(code)
            .and_then(Option::as_ref)
            .is_some_and(|issued| issued.issues(nsn))
    })
}

fn split_code(digits: &[u8], k: usize) -> Option<(usize, &[u8])> {
    let (code, nsn) = (digits.get(..k)?, digits.get(k..)?);
    let code = code
        .iter()
        .fold(0usize, |acc, &b| acc * 10 + usize::from(b - b'0'));
    Some((code, nsn))
}

/// What the metadata says of a number written without a country code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum National {
    /// Some region issues it.
    Valid,
    /// It has the length of a number dialled without its area code in some region
    /// (`555 0134`): possible, but only a label can say it is a phone.
    LocalOnly,
    /// No region issues it.
    Invalid,
}

/// Checks `h[s..e]`, a number written without a country code, against the regions of
/// [`NATIONAL_REGIONS`].
pub(crate) fn national(h: &[u8], s: usize, e: usize) -> National {
    let mut buf = [0u8; 17];
    let Some(digits) = digits_of(h, s, e, None, &mut buf) else {
        return National::Invalid;
    };
    let regions = regions();
    if regions.national.iter().any(|n| n.issues(digits)) {
        return National::Valid;
    }
    let len = digits.len();
    if len < 32
        && regions.local_lengths & (1 << len) != 0
        && !matches!(digits.first(), Some(b'0' | b'1'))
    {
        National::LocalOnly
    } else {
        National::Invalid
    }
}

/// True when `h[s..e]`, a North American number (its trunk `1` optional), is one a region
/// of the plan (+1) issues.
pub(crate) fn north_american(h: &[u8], s: usize, e: usize) -> bool {
    let mut buf = [0u8; 17];
    let Some(digits) = digits_of(h, s, e, None, &mut buf) else {
        return false;
    };
    let nsn = match digits {
        [b'1', rest @ ..] if rest.len() == 10 => rest,
        _ => digits,
    };
    regions()
        .by_code
        .get(1)
        .and_then(Option::as_ref)
        .is_some_and(|issued| issued.issues(nsn))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn intl(s: &str) -> bool {
        let h = s.as_bytes();
        let trunk = s.find("(0)").map(|i| i + 1);
        international(h, 1, h.len(), trunk)
    }

    fn nat(s: &str) -> National {
        national(s.as_bytes(), 0, s.len())
    }

    #[test]
    fn international_numbers_by_their_country_code() {
        assert!(intl("+44 20 7946 0667"));
        assert!(intl("+49 30 46909496"));
        assert!(intl("+49 (0)40 7003575"));
        assert!(intl("+1 415-555-0134") || intl("+1 212 555 0144"));
        assert!(intl("+91-9738918935"));
        assert!(intl("+33 1 88 19 68 63"));
        assert!(!intl("+999 1234 5678"));
        assert!(!intl("+44 0000 000000"));
    }

    #[test]
    fn national_numbers_by_the_covered_regions() {
        assert_eq!(nat("0221/453508"), National::Valid);
        assert_eq!(nat("090-1349-8124"), National::Valid);
        assert_eq!(nat("(11) 96092-6902"), National::Valid);
        assert_eq!(nat("01 05 87 16 97"), National::Valid);
        assert_eq!(nat("13653358547"), National::Valid);
        assert_ne!(nat("555 0134"), National::Invalid);
        assert_eq!(nat("0000 000"), National::Invalid);
        assert_eq!(nat("1234567890123456"), National::Invalid);
    }
}
