//! The trigger automaton re-encoded as a compact table, for the speed a caller sees.
//!
//! Why: `aho-corasick`'s DFA stores each state as a row of 32-bit ids, padded to a power of
//! two columns; for the pass's trigger set that is about a quarter of a megabyte per
//! automaton. A caller detecting one document at a time, with its own work between calls,
//! finds the rows it needs evicted from the L1 cache on every call, and a document of a few
//! hundred bytes walks into a fresh cache line on almost every byte. The same automaton with
//! 16-bit ids and exactly as many columns as it has byte classes is about a sixth of the
//! size (40 KB), so one document's walk touches far fewer lines. The search itself is the one
//! `aho-corasick` runs (unanchored, no prefilter): step byte by byte, remember the last match,
//! stop at the dead state; the tests check it finds exactly what `aho-corasick` finds.
//!
//! Bytes that start only one-byte triggers of the same kind may share one column
//! ([`Compact::new`]'s `same_as`): the pass's ten digits are ten patterns to `aho-corasick`,
//! with ten columns and ten match states, but one trigger to the pass, so the table keeps
//! one of each.
//!
//! An automaton that does not fit 16-bit ids is not re-encoded ([`Compact::new`] answers
//! `None`) and the pass keeps using `aho-corasick` itself.

use std::collections::HashMap;

use aho_corasick::Anchored;
use aho_corasick::automaton::{Automaton, StateID};

/// Every 16-bit id.
const TABLE: usize = 1 << 16;

/// A DFA with 16-bit, premultiplied state ids: a state's id is the offset of its row, so a
/// step is one load. Row 0 is the dead state; the match states come next, so "dead or
/// match" is one comparison.
#[derive(Debug, Clone)]
pub(crate) struct Compact {
    /// The column of each byte.
    classes: [u8; 256],
    /// Rows of `stride` next-state ids. A step's load is bounds-checked: the check is a
    /// branch never taken, beside the chain of dependent loads that sets the walk's pace,
    /// where masking the index to the 16-bit ids (an earlier version) put an instruction on
    /// that chain.
    trans: Box<[u16]>,
    /// How many entries of `trans` the rows use (read by the size test).
    #[cfg_attr(not(test), allow(dead_code))]
    used: usize,
    /// Columns per row (read by the size test; the walk uses `reciprocal`).
    #[cfg_attr(not(test), allow(dead_code))]
    stride: u16,
    /// `2^32 / stride`, rounded up: a match state's row is its id times this, shifted
    /// right by 32 (exact for 16-bit ids), instead of a division on every match.
    reciprocal: u64,
    start: u16,
    /// The highest id of a match state (0 when there is none).
    max_match: u16,
    /// Per match state, in row order from row 1: the pattern it reports and its length.
    matches: Vec<(u32, u16)>,
}

/// `2^32 / stride`, rounded up (see [`row_of_id`]).
fn reciprocal(stride: usize) -> u64 {
    let stride = stride.max(1) as u64;
    (1u64 << 32).div_ceil(stride)
}

/// `id / stride` for a 16-bit `id`, given `stride`'s [`reciprocal`]: exact because the
/// rounding error of the reciprocal, times an id below `2^16`, stays below `1 / stride`
/// when `id * stride < 2^32`.
#[inline(always)]
fn row_of_id(id: usize, reciprocal: u64) -> usize {
    ((id as u64 * reciprocal) >> 32) as usize
}

/// A match: the pattern and its end (exclusive); its start is `end - len`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Hit {
    pub(crate) pattern: usize,
    pub(crate) start: usize,
    pub(crate) end: usize,
}

impl Compact {
    /// Re-encodes the unanchored part of `dfa` (built without a prefilter), or `None` when
    /// it needs more than 16-bit ids. Each byte `b` steps as the byte `same_as(b)` does:
    /// the caller promises that this changes no match but the pattern reported, and that
    /// the patterns it does report for one another are the same to it.
    pub(crate) fn new(dfa: &impl Automaton, same_as: impl Fn(u8) -> u8) -> Option<Compact> {
        let start = dfa.start_state(Anchored::No).ok()?;
        // Every state reachable from the start, in breadth-first order: the shallow states,
        // where a walk over text spends most of its steps, end up in neighbouring rows.
        let mut states: Vec<StateID> = Vec::new();
        let mut index: HashMap<StateID, usize> = HashMap::new();
        let mut dead = None;
        let mut queue = std::collections::VecDeque::from([start]);
        index.insert(start, 0);
        states.push(start);
        while let Some(s) = queue.pop_front() {
            for b in 0..=255u8 {
                let t = dfa.next_state(Anchored::No, s, same_as(b));
                if dfa.is_dead(t) {
                    dead = Some(t);
                }
                if let std::collections::hash_map::Entry::Vacant(e) = index.entry(t) {
                    e.insert(states.len());
                    states.push(t);
                    queue.push_back(t);
                }
            }
        }
        // Bytes that every state sends to the same place share a column.
        let mut column_of: HashMap<Vec<StateID>, u8> = HashMap::new();
        let mut classes = [0u8; 256];
        let mut representative: Vec<u8> = Vec::new();
        for b in 0..=255u8 {
            let column: Vec<StateID> = states
                .iter()
                .map(|&s| dfa.next_state(Anchored::No, s, same_as(b)))
                .collect();
            let next = column_of.len();
            let class = *column_of.entry(column).or_insert_with(|| {
                representative.push(b);
                next as u8
            });
            classes[usize::from(b)] = class;
        }
        let stride = representative.len();
        // Row order: dead, match states, the rest.
        let mut order: Vec<Option<StateID>> = vec![None];
        order.extend(
            states
                .iter()
                .copied()
                .filter(|&s| dfa.is_match(s))
                .map(Some),
        );
        let matching = order.len() - 1;
        order.extend(
            states
                .iter()
                .copied()
                .filter(|&s| !dfa.is_match(s) && !dfa.is_dead(s))
                .map(Some),
        );
        if order.len().checked_mul(stride)? > TABLE {
            return None;
        }
        let mut row_of: HashMap<StateID, u16> = HashMap::new();
        for (row, s) in order.iter().enumerate() {
            if let Some(s) = s {
                row_of.insert(*s, u16::try_from(row * stride).ok()?);
            }
        }
        if let Some(d) = dead {
            row_of.insert(d, 0);
        }
        let used = order.len() * stride;
        // Every 16-bit id, though fewer are used (measured: an allocation of the exact
        // size missed the cache more; where the allocator puts either is its own choice).
        let mut trans: Box<[u16]> = vec![0u16; TABLE].into_boxed_slice();
        let mut matches = Vec::with_capacity(matching);
        for (row, s) in order.iter().enumerate() {
            let Some(s) = *s else { continue };
            for (class, &b) in representative.iter().enumerate() {
                let t = dfa.next_state(Anchored::No, s, same_as(b));
                *trans.get_mut(row * stride + class)? = *row_of.get(&t)?;
            }
            if dfa.is_match(s) {
                let pattern = dfa.match_pattern(s, 0);
                let len = u16::try_from(dfa.pattern_len(pattern)).ok()?;
                matches.push((pattern.as_u32(), len));
            }
        }
        Some(Compact {
            classes,
            trans,
            used,
            stride: u16::try_from(stride).ok()?,
            reciprocal: reciprocal(stride),
            start: *row_of.get(&start)?,
            max_match: u16::try_from(matching * stride).ok()?,
            matches,
        })
    }

    /// The table's size in bytes.
    #[cfg(test)]
    pub(crate) fn memory_usage(&self) -> usize {
        self.used * 2 + self.matches.len() * 8 + 256
    }

    /// Columns per row and rows (read by the size test).
    #[cfg(test)]
    pub(crate) fn shape(&self) -> (usize, usize) {
        let stride = usize::from(self.stride);
        (stride, self.used / stride)
    }

    /// The state after `b` from `s` (the dead state for an index past the table, which
    /// the rows built above never produce).
    #[inline(always)]
    fn next(&self, s: usize, b: u8) -> usize {
        // A checked load: the check is a branch never taken, off the chain of dependent
        // loads that sets the walk's pace (a mask would be on it).
        self.trans
            .get(s + usize::from(self.classes[usize::from(b)]))
            .map_or(0, |&t| usize::from(t))
    }

    /// True when `s` is dead or a match state.
    #[inline(always)]
    fn is_special(&self, s: usize) -> bool {
        s <= usize::from(self.max_match)
    }

    /// Steps from state `s` over `hay[i..]` until a dead or match state (returned with the
    /// index after the byte that reached it) or the end (returned with `hay.len()`).
    ///
    /// Why a loop of its own: written inline in [`Compact::find`], with the last match
    /// carried along, the compiler kept that match in registers it shuffled on every byte
    /// (twenty instructions a byte); alone, a step is a load of the byte, of its class and
    /// of the next state, and one comparison.
    #[inline(always)]
    fn run(&self, hay: &[u8], mut i: usize, mut s: usize) -> (usize, usize) {
        while let Some(&b) = hay.get(i) {
            s = self.next(s, b);
            i += 1;
            if self.is_special(s) {
                return (s, i);
            }
        }
        (s, i)
    }

    /// The leftmost(-longest, when the source automaton was built so) match in
    /// `h[from..to]`, as `aho-corasick`'s unanchored search without a prefilter reports it.
    #[inline]
    pub(crate) fn find(&self, h: &[u8], from: usize, to: usize) -> Option<Hit> {
        let hay = h.get(from..to)?;
        let mut s = usize::from(self.start);
        let mut i = 0;
        let mut last: Option<(usize, usize)> = None;
        while i < hay.len() {
            (s, i) = self.run(hay, i, s);
            if !self.is_special(s) || s == 0 {
                // The end of the text, or the dead state: nothing longer can match.
                break;
            }
            last = Some((s, from + i));
        }
        let (s, end) = last?;
        let row = row_of_id(s, self.reciprocal);
        let &(pattern, len) = self.matches.get(row.checked_sub(1)?)?;
        Some(Hit {
            pattern: pattern as usize,
            start: end - usize::from(len),
            end,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use aho_corasick::dfa::DFA;
    use aho_corasick::{AhoCorasick, AhoCorasickKind, Input, MatchKind};

    const PATTERNS: [&str; 9] = [
        "0", "1", "@", "usd", "password", "pw", "://", "€", "sk_live_",
    ];

    #[test]
    fn finds_what_aho_corasick_finds() {
        let ac = AhoCorasick::builder()
            .match_kind(MatchKind::LeftmostLongest)
            .ascii_case_insensitive(true)
            .kind(Some(AhoCorasickKind::DFA))
            .build(PATTERNS)
            .unwrap();
        let dfa = DFA::builder()
            .match_kind(MatchKind::LeftmostLongest)
            .ascii_case_insensitive(true)
            .prefilter(false)
            .build(PATTERNS)
            .unwrap();
        let c = Compact::new(&dfa, |b| b).unwrap();
        assert!(c.memory_usage() < dfa.memory_usage());
        let text = "PassWord=pw1 x@y.z 10 USD €5 https://a sk_live_0 passwor pw€ é";
        let h = text.as_bytes();
        for from in 0..h.len() {
            for to in from..=h.len() {
                let want = ac
                    .find(Input::new(h).span(from..to))
                    .map(|m| (m.pattern().as_usize(), m.start(), m.end()));
                let got = c.find(h, from, to).map(|m| (m.pattern, m.start, m.end));
                assert_eq!(got, want, "{from}..{to}");
            }
        }
    }

    /// Bytes stepped as another byte share its column and its match state: the digits
    /// read as `0` report `0`'s pattern, at the places `aho-corasick` reports theirs, and
    /// the table is smaller by their columns and rows.
    #[test]
    fn bytes_stepped_alike_share_a_column() {
        let patterns = ["0", "1", "2", "ab", "b"];
        let ac = AhoCorasick::builder()
            .match_kind(MatchKind::LeftmostLongest)
            .build(patterns)
            .unwrap();
        let dfa = DFA::builder()
            .match_kind(MatchKind::LeftmostLongest)
            .prefilter(false)
            .build(patterns)
            .unwrap();
        let plain = Compact::new(&dfa, |b| b).unwrap();
        let alike = Compact::new(&dfa, |b| if b.is_ascii_digit() { b'0' } else { b }).unwrap();
        assert_eq!(alike.shape().0 + 2, plain.shape().0);
        assert_eq!(alike.shape().1 + 2, plain.shape().1);
        let h = b"x12ab0 b2a1";
        for from in 0..h.len() {
            let want = ac
                .find(Input::new(h).span(from..h.len()))
                .map(|m| (m.pattern().as_usize(), m.start(), m.end()));
            let want = want.map(|(p, s, e)| (if p <= 2 { 0 } else { p }, s, e));
            let got = alike
                .find(h, from, h.len())
                .map(|m| (m.pattern, m.start, m.end));
            assert_eq!(got, want, "from {from}");
        }
    }

    /// The row of every 16-bit id, by the reciprocal, is its row by division, for every
    /// stride a table can have (at most 256 columns).
    #[test]
    fn rows_by_reciprocal_are_rows_by_division() {
        for stride in 1..=256usize {
            let r = reciprocal(stride);
            for id in 0..=usize::from(u16::MAX) {
                assert_eq!(row_of_id(id, r), id / stride, "{id} / {stride}");
            }
        }
    }
}
