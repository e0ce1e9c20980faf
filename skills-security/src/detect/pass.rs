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
mod tests {
    use super::*;

    #[test]
    fn the_automaton_builds() {
        let s = TriggerPass::new();
        assert!(s.is_built());
        assert!(s.probe.is_some());
        // The compact table is the point of re-encoding: well under half the DFA's size.
        let (Some(dfa), Some(c)) = (&s.dfa, &s.compact) else {
            panic!()
        };
        eprintln!(
            "trigger DFA {} bytes, compact {} bytes (columns, rows: {:?})",
            dfa.memory_usage(),
            c.memory_usage(),
            c.shape()
        );
        assert!(c.memory_usage() * 2 < dfa.memory_usage());
    }

    /// The pass must find exactly what the plain loop finds, whether it probes the rest
    /// of a text (a sparse first stretch) or walks it (a dense one), wherever the findings
    /// fall relative to lane and block boundaries.
    #[test]
    fn lanes_find_what_the_plain_loop_finds() {
        let s = TriggerPass::new();
        let Some(ac) = &s.dfa else { panic!() };
        let Some(probe) = &s.probe else { panic!() };
        let pieces = [
            "a@example.com ",
            "SSN 224-30-8280 ",
            "revenue: $4.2M ",
            "x ",
            "AKIAOJ3MRDZSY265UITA ",
            "word ",
            "DOB: 1961-11-20 ",
            "+44 20 7946 0667 ",
        ];
        for sparse_head in [false, true] {
            let mut text = String::new();
            if sparse_head {
                // One finding in the first stretch, then plain words past it.
                text.push_str("Mail ops@example.org for access. ");
                while text.len() < SAMPLE + 40 {
                    text.push_str("the quiet river runs on ");
                }
            }
            let mut k = 0usize;
            while text.len() < 6000 {
                text.push_str(pieces[k % pieces.len()]);
                // Dense stretches and sparse ones, so some blocks are marked, some not.
                let gap = if (k / 8).is_multiple_of(2) {
                    k * 7 % 13
                } else {
                    90 + k * 11 % 70
                };
                for _ in 0..gap {
                    text.push('y');
                }
                k += 1;
            }
            for cut in [LANES_FROM, 2500, 3001, 4097, text.len()] {
                let t = &text[..cut];
                let mut head = Carried::default();
                s.dispatch_range(ac, t, 0, SAMPLE, &mut head, &mut Vec::new());
                assert_eq!(head.dispatched <= SPARSE_TRIGGERS, sparse_head, "cut {cut}");
                if sparse_head {
                    assert!(lanes::probe(probe, &t.as_bytes()[SAMPLE..], s.max_len).is_some());
                }
                let mut pass = Vec::new();
                s.run(t, &mut pass);
                let mut plain = Vec::new();
                s.dispatch_range(ac, t, 0, t.len(), &mut Carried::default(), &mut plain);
                assert_eq!(pass, plain, "cut {cut}, sparse head {sparse_head}");
                assert!(plain.len() >= 5, "cut {cut}: {}", plain.len());
            }
        }
    }

    /// A currency code is read back from its amount (it is no trigger of its own): every
    /// form `after_code` reads forward is found from the digit or the dollar sign, and a
    /// code that is part of a word, a name in capitals or lower case is not.
    #[test]
    fn currency_codes_are_read_back_from_the_amount() {
        let s = TriggerPass::new();
        let money = |t: &str| -> Vec<String> {
            let mut out = Vec::new();
            s.run(t, &mut out);
            out.iter()
                .filter(|f| f.data_type == DataType::MONEY)
                .map(|f| t[f.start..f.end].to_string())
                .collect()
        };
        for (text, want) in [
            ("paid USD 143.30 today", "USD 143.30"),
            ("paid EUR1,000 today", "EUR1,000"),
            ("paid USD$5 today", "USD$5"),
            ("paid USD$ 5 today", "USD$ 5"),
            ("paid CHF\u{a0}12.50 today", "CHF\u{a0}12.50"),
            ("paid GBP\u{202f}7 today", "GBP\u{202f}7"),
            ("a loss of -SEK 300", "-SEK 300"),
        ] {
            assert_eq!(money(text), [want], "{text}");
        }
        for text in [
            "paid XUSD 5 today",
            "ACME TRADING INR10 LTD",
            "the usd 5 note",
            "ref:ABC 100",
        ] {
            assert!(money(text).is_empty(), "{text}: {:?}", money(text));
        }
    }

    /// The warm-up text must reach every recognizer, or the first caller's document pays
    /// for the ones it misses.
    #[test]
    fn the_warm_up_reaches_every_kind() {
        let s = TriggerPass::new();
        let mut out = Vec::new();
        s.run(WARM_UP, &mut out);
        for kind in [
            DataType::EMAIL,
            DataType::PHONE,
            DataType::SSN,
            DataType::CREDIT_CARD,
            DataType::IBAN,
            DataType::IP_ADDRESS,
            DataType::DATE_OF_BIRTH,
            DataType::MONEY,
            DataType::SECRET,
        ] {
            assert!(out.iter().any(|f| f.data_type == kind), "{kind:?}");
        }
        assert!(out.iter().any(|f| f.kind == FindingKind::Context));
    }

    /// The compact table must find exactly what the DFA it was built from finds: the
    /// same stretch, the same trigger (the pattern differs only among the digits, which
    /// the table reads as one).
    #[test]
    fn the_compact_table_finds_what_the_dfa_finds() {
        let s = TriggerPass::new();
        let Some(dfa) = &s.dfa else { panic!() };
        assert!(s.compact.is_some());
        let trigger = |m: Option<(usize, usize, usize)>| {
            m.map(|(pattern, p, e)| (s.triggers.get(pattern).copied(), p, e))
        };
        let mut texts = vec![
            "Tel: +44 20 7946 0667, mail a@b.co; PASSWORD=hunter2 api-key: x \
             $4.2M or 5 USD, ghp_abc https://u:p@h -p'x' diagnosis: flu \
             €12 ₹3 -----BEGIN KEY eyJhbGc Bearer t Basic dQ== é 日本 0123456789"
                .to_owned(),
            WARM_UP.to_owned(),
        ];
        let corpus = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../shared/bench/pii/corpus_public.jsonl");
        match std::fs::read_to_string(&corpus) {
            Ok(lines) => texts.extend(lines.lines().filter_map(|l| {
                let v: serde_json::Value = serde_json::from_str(l).ok()?;
                Some(v.get("text")?.as_str()?.to_owned())
            })),
            Err(e) if std::env::var("CI").is_ok_and(|v| v == "true") => {
                panic!(
                    "{}: {e} (the corpus is required under CI)",
                    corpus.display()
                )
            }
            Err(_) => {}
        }
        for text in &texts {
            let h = text.as_bytes();
            for from in 0..h.len() {
                // Every start, and windows ending short of the text as the lanes cut them.
                for to in [h.len(), h.len().min(from + 70)] {
                    let want = dfa
                        .try_find(&Input::new(h).span(from..to))
                        .unwrap()
                        .map(|m| (m.pattern().as_usize(), m.start(), m.end()));
                    assert_eq!(
                        trigger(s.find(dfa, h, from, to)),
                        trigger(want),
                        "{from}..{to} of {text:?}"
                    );
                }
            }
        }
    }

    #[test]
    fn fails_closed_without_an_automaton() {
        let s = TriggerPass {
            dfa: None,
            compact: None,
            probe: None,
            max_len: 1,
            triggers: Vec::new(),
        };
        let mut out = Vec::new();
        s.run("hello", &mut out);
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].class, DataClass::Regulated);
        assert!(!out[0].tokenizable);
    }
}
