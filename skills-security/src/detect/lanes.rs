//! The interleaved probe: the trigger patterns as a plain DFA stepped over four lanes of a
//! text at once, marking the 64-byte blocks where some trigger ends.
//!
//! Why: a DFA step is one dependent memory load per byte, which caps a single walk at a few
//! hundred MB/s; four independent walks overlap their loads, so clean text is read at
//! several times that. The pass ([`pass`](super::pass)) then runs its leftmost-longest
//! automaton and the recognizers on the marked blocks alone. Only worth it on sparse text:
//! where triggers are dense every block is marked and the text is read twice, so the pass
//! decides from a first stretch whether to probe at all.

use aho_corasick::Anchored;
use aho_corasick::automaton::Automaton;
use aho_corasick::dfa::DFA;

/// The probe's unit: one bit marks 64 bytes.
pub(super) const BLOCK: usize = 64;

/// Marks (one bit per 64-byte block) every block where some pattern ends, stepping
/// four lanes of the text in lockstep. `None` means nothing is marked.
pub(super) fn probe(dfa: &DFA, h: &[u8], max_len: usize) -> Option<Vec<u64>> {
    let n = h.len();
    let Ok(start) = dfa.start_state(Anchored::No) else {
        // Cannot probe: everything is a candidate.
        return Some(vec![u64::MAX; n / BLOCK / 64 + 1]);
    };
    let mut marks: Option<Vec<u64>> = None;
    let mut mark = |p: usize| {
        let m = marks.get_or_insert_with(|| vec![0u64; n / BLOCK / 64 + 1]);
        let b = p / BLOCK;
        if let Some(w) = m.get_mut(b / 64) {
            *w |= 1 << (b % 64);
        }
    };
    let lane = n / 4;
    let begins = [0, lane, 2 * lane, 3 * lane];
    let (l0, rest) = h.split_at(lane);
    let (l1, rest) = rest.split_at(lane);
    let (l2, rest) = rest.split_at(lane);
    let l3 = &rest[..lane];
    let (mut s0, mut s1, mut s2, mut s3) = (start, start, start, start);
    for i in 0..lane {
        s0 = dfa.next_state(Anchored::No, s0, l0[i]);
        s1 = dfa.next_state(Anchored::No, s1, l1[i]);
        s2 = dfa.next_state(Anchored::No, s2, l2[i]);
        s3 = dfa.next_state(Anchored::No, s3, l3[i]);
        if dfa.is_special(s0) | dfa.is_special(s1) | dfa.is_special(s2) | dfa.is_special(s3) {
            for (k, sid) in [s0, s1, s2, s3].into_iter().enumerate() {
                if dfa.is_match(sid) {
                    mark(begins[k] + i);
                }
            }
        }
    }
    let s = [s0, s1, s2, s3];
    // Each lane runs on past its end far enough to finish any pattern that started in
    // it; the last lane runs to the end of the text.
    for k in 0..4 {
        let from = begins[k] + lane;
        let to = if k == 3 {
            n
        } else {
            (begins[k] + lane + max_len).min(n)
        };
        let mut sid = s[k];
        for (p, &b) in h.iter().enumerate().take(to).skip(from) {
            sid = dfa.next_state(Anchored::No, sid, b);
            if dfa.is_match(sid) {
                mark(p);
            }
        }
    }
    marks
}
