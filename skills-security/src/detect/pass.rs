//! The trigger pass, the detector's single pass over a text: one Aho-Corasick automaton
//! holds every trigger of every built-in recognizer (digits, `@`, `+`, `(`, `:`, `://`,
//! currency symbols and codes, secret prefixes, credential key names, `bearer`, `basic`,
//! keywords); each hit is handed to the recognizer it belongs to, which parses forward (and
//! looks back a bounded window for context) and says where the pass resumes. Nothing is rescanned per recognizer; the state
//! carried along the pass is what it learnt about the delimited table it is in
//! ([`table`](super::table)), so a table's header is read once, and about the last unquoted
//! credential value it read ([`secret::ValueRun`]), so the keys inside a refused value do not
//! read it again.
//!
//! Speed: a DFA step costs one dependent memory load per byte, which caps a plain
//! automaton at a few hundred MB/s. For texts of [`LANES_FROM`] bytes or more whose first
//! [`SAMPLE`] bytes held few triggers, the rest runs first through the interleaved
//! [`lanes`] probe, which only marks the 64-byte blocks where some trigger ends; the
//! leftmost-longest automaton and the recognizers then run on the marked blocks alone.
//! Clean text costs one interleaved pass and no allocation (the block marks are allocated
//! on the first mark); dense text is walked once, not probed and then walked.
//! The leftmost-longest automaton is walked as a [`compact`](super::compact) table, a sixth
//! of the size of `aho-corasick`'s own, so a caller's work between two calls evicts less of
//! it.

use aho_corasick::automaton::Automaton;
use aho_corasick::dfa::DFA;
use aho_corasick::{Input, MatchKind};

use super::compact::Compact;
use super::{digit, lanes};

use super::table::Tables;
use super::{Finding, FindingKind};
use super::{credential, email, ip, keyword, money, phone, phone_region, secret, text};
use crate::classify::{DataClass, DataType};

#[derive(Debug, Clone, Copy, PartialEq)]
enum Trigger {
    Digit,
    At,
    Plus,
    Paren,
    Colon,
    Symbol,
    Prefix(secret::Prefix),
    SecretKey,
    Bearer,
    Basic,
    Url,
    Cli,
    Keyword(keyword::Topic),
}

/// The detector's single pass: every trigger of every built-in recognizer compiled into one
/// automaton, each hit dispatched to its recognizer. (Not the skill scanner,
/// [`crate::scan::Scanner`], which reads whole skill packages.)
#[derive(Debug, Clone)]
pub(crate) struct TriggerPass {
    /// The leftmost-longest automaton of every trigger. `None` only if it could not be
    /// built; scanning then fails closed.
    dfa: Option<DFA>,
    /// The same automaton as a compact table ([`compact`](super::compact)), searched
    /// instead of `dfa` when it could be built (it always is for the built-in triggers).
    compact: Option<Compact>,
    /// The same patterns as a plain DFA for the interleaved probe (`None`: no probe). Left
    /// as `aho-corasick` builds it: its four interleaved walks keep their states in
    /// registers, which the compact table's 16-bit steps did not (clean prose ran 8 %
    /// slower), and a long text's walk keeps its rows in cache anyway.
    probe: Option<DFA>,
    /// The longest pattern, in bytes.
    max_len: usize,
    triggers: Vec<Trigger>,
}

/// What one pass carries from a trigger to the next: what it learnt about the delimited
/// table it is in, and about the last unquoted credential value it read.
#[derive(Debug, Default)]
struct Carried {
    tables: Tables,
    runs: secret::ValueRun,
    /// Triggers handed to a recognizer so far.
    dispatched: usize,
    /// Where the search that found the current trigger began: a currency code read back
    /// from an amount must start here or later (an earlier one was passed over, as part of
    /// what some recognizer read).
    searched_from: usize,
}

/// Texts at least this long may be probed in interleaved lanes ([`lanes`]).
pub(crate) const LANES_FROM: usize = 2048;
/// How much of a long text is walked before deciding whether to probe the rest.
const SAMPLE: usize = 1024;
/// At most this many triggers in the first [`SAMPLE`] bytes (a quarter of its 64-byte
/// blocks) and the rest of the text is probed; more, and it is walked.
const SPARSE_TRIGGERS: usize = SAMPLE / lanes::BLOCK / 4;

const SYMBOLS: [&str; 6] = ["$", "€", "£", "¥", "₹", "₩"];
const DIGITS: [&str; 10] = ["0", "1", "2", "3", "4", "5", "6", "7", "8", "9"];

/// A text with a value or a near miss of every kind the pass reads (fictitious values).
const WARM_UP: &str = "Contact: Ann Lee, ann.lee@example.com, Tel: +44 20 7946 0667, \
     Mobile (555) 013-4477, Desk: 030 901820, Fax 0161 496 0066, 702.289.9674\n\
     Date of birth: 1961-11-20, born 3 Aug 1961; SSN 224-30-8280; card 4111 1111 1111 1111; \
     IBAN DE89 3704 0044 0532 0130 00; host 192.0.2.10 and 2001:db8::1; \
     revenue: $4.2M, EUR 1,250.00, 300 dollars, ¥500, ₹12; password=Vq8zL2pW9mKx \
     api_key: sk_live_Q7fK2mZp9XcV4bN8rT1wY6hJ Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.Zm9vYmFy Basic dXNlcjpwYXNz \
     https://u:p@example.org -p'secret' --user admin:pw diagnosis: flu, confidential. \
     Part no. | Qty\n123-45-6789 | 4\nOrder #646-804-5439 shipped 08/26/2024.\n\
     s3 = client(aws_access_key_id=\"AKIAQ7FK2MZP9XCV4BN8\", \
     aws_secret_access_key=\"q7Fk2mZp9XcV4bN8rT1wY6hJd3Ls5Gu0Ae2Ri8Ow\")";

/// Class and tokenizability of each built-in value type.
pub(crate) fn builtin(data_type: &DataType) -> (DataClass, bool) {
    match data_type.as_str() {
        "SSN" => (DataClass::Regulated, false),
        "CREDIT_CARD" | "DATE_OF_BIRTH" => (DataClass::Regulated, true),
        "SECRET" => (DataClass::Restricted, false),
        "IBAN" | "MONEY" => (DataClass::Restricted, true),
        _ => (DataClass::Confidential, true),
    }
}

pub(super) fn value(out: &mut Vec<Finding>, start: usize, end: usize, data_type: DataType) {
    let (class, tokenizable) = builtin(&data_type);
    out.push(Finding {
        start,
        end,
        data_type,
        class,
        tokenizable,
        kind: FindingKind::Value,
    });
}

impl TriggerPass {
    pub(crate) fn new() -> TriggerPass {
        // The phone metadata is read here, once per process, so no detection pays for it.
        phone_region::preload();
        let mut patterns: Vec<&str> = Vec::new();
        let mut triggers = Vec::new();
        let mut add = |p: &'static str, t: Trigger| {
            patterns.push(p);
            triggers.push(t);
        };
        for d in DIGITS {
            add(d, Trigger::Digit);
        }
        add("@", Trigger::At);
        add("+", Trigger::Plus);
        add("(", Trigger::Paren);
        add(":", Trigger::Colon);
        for s in SYMBOLS {
            add(s, Trigger::Symbol);
        }
        for (p, kind) in secret::PREFIXES {
            add(p, Trigger::Prefix(kind));
        }
        for k in secret::KEYWORDS {
            add(k, Trigger::SecretKey);
        }
        add("bearer", Trigger::Bearer);
        add("basic", Trigger::Basic);
        add("://", Trigger::Url);
        for o in credential::CLI_OPTIONS {
            add(o, Trigger::Cli);
        }
        for (k, topic) in keyword::KEYWORDS {
            add(k, Trigger::Keyword(topic));
        }
        let dfa = DFA::builder()
            .match_kind(MatchKind::LeftmostLongest)
            .ascii_case_insensitive(true)
            .prefilter(false)
            .build(&patterns)
            .ok();
        // The ten digits are one trigger: the table steps every digit as `0` (one column,
        // one match state) while each digit is a trigger of its own, a `Digit`, and no
        // other trigger holds one, which would tell them apart.
        let digits_alike = patterns.iter().zip(&triggers).all(|(p, t)| {
            !p.bytes().any(|b| b.is_ascii_digit()) || (p.len() == 1 && *t == Trigger::Digit)
        }) && (b'0'..=b'9')
            .all(|d| patterns.iter().any(|p| p.as_bytes() == [d]));
        let compact = dfa.as_ref().and_then(|dfa| {
            Compact::new(dfa, |b| {
                if digits_alike && b.is_ascii_digit() {
                    b'0'
                } else {
                    b
                }
            })
        });
        let probe = DFA::builder()
            .match_kind(MatchKind::Standard)
            .ascii_case_insensitive(true)
            .prefilter(false)
            .build(&patterns)
            .ok();
        let max_len = patterns.iter().map(|p| p.len()).max().unwrap_or(1);
        let pass = TriggerPass {
            dfa,
            compact,
            probe,
            max_len,
            triggers,
        };
        // One pass over a text that reaches every recognizer, so the first document a
        // caller hands over does not pay for the first run of their code (page faults on
        // its pages, cold tables): measured, the first three documents of a run cost
        // about 130 µs more than the rest, as much as fifty documents.
        pass.run(WARM_UP, &mut Vec::new());
        pass
    }

    #[cfg(test)]
    pub(crate) fn is_built(&self) -> bool {
        self.dfa.is_some()
    }

    /// The leftmost-longest trigger in `h[from..to]`: its index, start and end.
    #[inline]
    fn find(&self, dfa: &DFA, h: &[u8], from: usize, to: usize) -> Option<(usize, usize, usize)> {
        match &self.compact {
            Some(c) => c.find(h, from, to).map(|m| (m.pattern, m.start, m.end)),
            None => dfa
                .try_find(&Input::new(h).span(from..to))
                .ok()
                .flatten()
                .map(|m| (m.pattern().as_usize(), m.start(), m.end())),
        }
    }

    /// Appends every built-in finding in `text` to `out` (unsorted, possibly overlapping).
    pub(crate) fn run(&self, text: &str, out: &mut Vec<Finding>) {
        let Some(ac) = &self.dfa else {
            // Fail closed: without the automaton nothing can be told apart, so the whole
            // text is treated as the most sensitive class.
            if !text.is_empty() {
                out.push(Finding {
                    start: 0,
                    end: text.len(),
                    data_type: DataType::GENERAL,
                    class: DataClass::Regulated,
                    tokenizable: false,
                    kind: FindingKind::Context,
                });
            }
            return;
        };
        let h = text.as_bytes();
        let mut carried = Carried::default();
        let Some(dfa) = self.probe.as_ref().filter(|_| h.len() >= LANES_FROM) else {
            self.dispatch_range(ac, text, 0, h.len(), &mut carried, out);
            return;
        };
        // The probe pays only on sparse text: on text where triggers are dense it marks
        // nearly every block, and the walk then reads the text a second time (on a
        // document timed cold, dense text ran at 80 MB/s through the probe against 140
        // without it). So the first stretch is walked, and the rest is probed only when
        // the stretch held few triggers.
        let head = self.dispatch_range(ac, text, 0, SAMPLE, &mut carried, out);
        if carried.dispatched > SPARSE_TRIGGERS {
            self.dispatch_range(ac, text, head, h.len(), &mut carried, out);
            return;
        }
        let Some(rest) = h.get(head..) else {
            return;
        };
        let Some(marks) = lanes::probe(dfa, rest, self.max_len) else {
            return;
        };
        let mut pos = head;
        for (w, &word) in marks.iter().enumerate() {
            let mut bits = word;
            while bits != 0 {
                let b = w * 64 + bits.trailing_zeros() as usize;
                bits &= bits - 1;
                let block_start = head + b * lanes::BLOCK;
                let block_end = (block_start + lanes::BLOCK).min(h.len());
                let from = pos.max(block_start.saturating_sub(self.max_len));
                if from >= block_end {
                    continue;
                }
                let to = (block_end + self.max_len).min(h.len());
                pos = self.dispatch_range(ac, text, from, to, &mut carried, out);
            }
        }
    }

    /// The leftmost-longest automaton and the recognizers over `from..to`; returns where
    /// the next search may start.
    fn dispatch_range(
        &self,
        ac: &DFA,
        text: &str,
        from: usize,
        to: usize,
        carried: &mut Carried,
        out: &mut Vec<Finding>,
    ) -> usize {
        let h = text.as_bytes();
        let mut pos = from;
        while pos < to {
            let Some((pattern, p, e)) = self.find(ac, h, pos, to) else {
                // Every pattern starting early enough to end by `to` would have been
                // found, so the next search may skip those starts.
                return pos.max((to + 1).saturating_sub(self.max_len));
            };
            let trigger = self
                .triggers
                .get(pattern)
                .copied()
                .unwrap_or(Trigger::Digit);
            carried.dispatched += 1;
            carried.searched_from = pos;
            let next = self.dispatch(text, p, e, trigger, carried, out);
            // Always make progress, and always resume on a character boundary.
            pos = text::char_ceil(h, next.max(p + 1));
        }
        pos
    }

    fn dispatch(
        &self,
        text: &str,
        p: usize,
        e: usize,
        trigger: Trigger,
        carried: &mut Carried,
        out: &mut Vec<Finding>,
    ) -> usize {
        let h = text.as_bytes();
        match trigger {
            Trigger::Digit => {
                // An amount after its currency code (`USD 143.30`, `EUR1,000`): the code
                // is read back from the digit rather than being a trigger of its own, so
                // the automaton holds no three-letter words that every stretch of prose
                // would walk into (codes are capitals; the automaton is case-blind).
                if let Some((s, end)) = money::code_before(h, p, carried.searched_from) {
                    value(out, money::span_start(h, s), end, DataType::MONEY);
                    return end;
                }
                digit::at_digit(text, h, p, &mut carried.tables, out)
            }
            Trigger::At => match email::at_sign(text, p) {
                Some((s, end)) => {
                    value(out, s, end, DataType::EMAIL);
                    end
                }
                None => e,
            },
            Trigger::Plus => match phone::at_plus(h, p) {
                Some(end) => {
                    value(out, p, end, DataType::PHONE);
                    end
                }
                None => e,
            },
            Trigger::Paren => match phone::at_paren(h, p) {
                Some(end) => {
                    value(out, p, end, DataType::PHONE);
                    end
                }
                None => e,
            },
            Trigger::Colon => {
                let s = if matches!(text::before(h, p), Some(b) if b.is_ascii_hexdigit()) {
                    ip::v6_start_before_colon(h, p)
                } else if text::at(h, p + 1) == Some(b':') {
                    p
                } else {
                    return e;
                };
                match ip::v6_at(text, s) {
                    Some(end) => {
                        value(out, s, end, DataType::IP_ADDRESS);
                        end
                    }
                    None => e,
                }
            }
            Trigger::Symbol => {
                // `USD$5`: the code before the dollar sign is part of the amount.
                if text::at(h, p) == Some(b'$')
                    && let Some((s, end)) = money::code_before(h, p, carried.searched_from)
                {
                    value(out, money::span_start(h, s), end, DataType::MONEY);
                    return end;
                }
                match money::after_symbol(h, p, e - p) {
                    Some(end) => {
                        value(out, money::span_start(h, p), end, DataType::MONEY);
                        end
                    }
                    None => e,
                }
            }
            Trigger::Prefix(kind) => {
                let prefix = text.get(p..e).unwrap_or("");
                let prefix = secret::PREFIXES
                    .iter()
                    .find(|(s, _)| s.eq_ignore_ascii_case(prefix))
                    .map_or("", |(s, _)| *s);
                match secret::at_prefix(h, p, prefix, kind) {
                    Some((s, end)) => {
                        value(out, s, end, DataType::SECRET);
                        end
                    }
                    None => e,
                }
            }
            Trigger::SecretKey => {
                let found = secret::assignment_in(h, p, e, &mut carried.runs).or_else(|| {
                    let key = h.get(p..e).unwrap_or_default();
                    credential::PASSWORD_WORDS
                        .iter()
                        .any(|w| key.eq_ignore_ascii_case(w.as_bytes()))
                        .then(|| credential::prose(h, p, e))
                        .flatten()
                });
                match found {
                    Some((s, end)) => {
                        value(out, s, end, DataType::SECRET);
                        end
                    }
                    None => e,
                }
            }
            Trigger::Bearer => match secret::bearer(h, e) {
                Some((s, end)) if text::open_before(h, p) => {
                    value(out, s, end, DataType::SECRET);
                    end
                }
                _ => e,
            },
            Trigger::Basic => match credential::basic(h, p, e) {
                Some((s, end)) if text::open_before(h, p) => {
                    value(out, s, end, DataType::SECRET);
                    end
                }
                _ => e,
            },
            Trigger::Url => match credential::url_password(h, p) {
                Some((s, end)) => {
                    value(out, s, end, DataType::SECRET);
                    end
                }
                None => e,
            },
            Trigger::Cli => match credential::cli(h, p, e) {
                Some((s, end)) => {
                    value(out, s, end, DataType::SECRET);
                    end
                }
                // Resume right after the `-`: a keyword may start there (`db-password`).
                None => p + 1,
            },
            Trigger::Keyword(topic) => {
                if let Some((s, end)) = keyword::extent(h, p, e, topic) {
                    out.push(Finding {
                        start: s,
                        end,
                        data_type: topic.data_type(),
                        class: topic.class(),
                        tokenizable: true,
                        kind: FindingKind::Context,
                    });
                }
                e
            }
        }
    }
}

#[cfg(test)]
mod tests;
