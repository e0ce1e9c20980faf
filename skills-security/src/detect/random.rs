//! Whether a value is random enough to be a credential: not a placeholder
//! (`XXXX...`, `CHANGE_ME`, `${VAR}`, `os.environ[...]`) and above an entropy floor. Shared by
//! the assignment, bearer, prefix, `Basic` and prose recognizers ([`secret`](super::secret),
//! [`credential`](super::credential)).
//!
//! Speed: every credential candidate pays this check, and bearer tokens and JWTs are
//! hundreds of bytes, so both halves read the value once: the placeholder markers are
//! compared only where a byte can start one, and the entropy floor is settled without a
//! logarithm when the min-entropy bound already decides it (the same answers as a search
//! per marker and the exact sum; the tests compare them).

/// Substrings that mark a value as a placeholder, not a credential (lowercase; matched
/// ignoring ASCII case).
const PLACEHOLDERS: [&[u8]; 20] = [
    b"xxxx",
    b"****",
    b"....",
    b"<",
    b"${",
    b"{{",
    b"%(",
    b"example",
    b"placeholder",
    b"your_",
    b"your-",
    b"redacted",
    b"change_me",
    b"change-me",
    b"replace_me",
    b"replace-me",
    b"[hidden]",
    b"os.environ",
    b"process.env",
    b"getenv(",
];

/// Bit `k` of `PLACEHOLDER_FIRST[b]` is set when placeholder `k` starts with byte `b` in
/// either case: a value is read once, and only the markers its bytes can start are compared.
static PLACEHOLDER_FIRST: [u32; 256] = {
    let mut t = [0u32; 256];
    let mut k = 0;
    while k < PLACEHOLDERS.len() {
        let b = PLACEHOLDERS[k][0];
        t[b as usize] |= 1 << k;
        t[b.to_ascii_uppercase() as usize] |= 1 << k;
        k += 1;
    }
    t
};

/// The markers of one byte (no second byte to check).
const PLACEHOLDER_SHORT: u32 = {
    let mut bits = 0;
    let mut k = 0;
    while k < PLACEHOLDERS.len() {
        if PLACEHOLDERS[k].len() == 1 {
            bits |= 1 << k;
        }
        k += 1;
    }
    bits
};

/// Bit `k` of `PLACEHOLDER_SECOND[b]` is set when placeholder `k`'s second byte is `b` in
/// either case, or when it has no second byte.
static PLACEHOLDER_SECOND: [u32; 256] = {
    let mut t = [PLACEHOLDER_SHORT; 256];
    let mut k = 0;
    while k < PLACEHOLDERS.len() {
        if PLACEHOLDERS[k].len() > 1 {
            let b = PLACEHOLDERS[k][1];
            t[b as usize] |= 1 << k;
            t[b.to_ascii_uppercase() as usize] |= 1 << k;
        }
        k += 1;
    }
    t
};

/// True when one of [`PLACEHOLDERS`] occurs in `v`, ignoring ASCII case.
///
/// Why one pass: this runs on every credential candidate (a bearer token or a JWT can be
/// hundreds of bytes), and twenty substring searches over a lowercased copy cost about
/// ten times a single walk that compares only the markers each byte can start.
fn has_placeholder(v: &[u8]) -> bool {
    for (i, &b) in v.iter().enumerate() {
        let mut bits = PLACEHOLDER_FIRST[usize::from(b)];
        if bits == 0 {
            continue;
        }
        // Letters of a token start markers often (`e` of `example`); the byte after
        // them rarely continues one, so the second byte filters before any compare.
        bits &= v
            .get(i + 1)
            .map_or(PLACEHOLDER_SHORT, |&n| PLACEHOLDER_SECOND[usize::from(n)]);
        while bits != 0 {
            let k = bits.trailing_zeros() as usize;
            bits &= bits - 1;
            let m = PLACEHOLDERS[k];
            if v.get(i..i + m.len())
                .is_some_and(|w| w.eq_ignore_ascii_case(m))
            {
                return true;
            }
        }
    }
    false
}

/// Random enough to be a real credential: at least 8 bytes and an entropy of at least
/// `min(3.0, 0.8 * log2(len))` bits per byte over its first 512 bytes (a string of
/// all-distinct characters has `log2(len)`), and not an obvious placeholder (one of
/// [`PLACEHOLDERS`] in those 512 bytes).
pub(crate) fn credential_like(v: &[u8]) -> bool {
    if v.len() < 8 {
        return false;
    }
    let head = &v[..v.len().min(512)];
    if has_placeholder(head) {
        return false;
    }
    random_enough(head)
}

/// `entropy(v) >= min(3.0, 0.8 * log2(v.len()))`, the same answer computed more cheaply
/// when it is clear.
///
/// Why: most candidates that get this far are real tokens, far above the floor, and the
/// exact sum costs a `log2` per distinct byte. Shannon entropy is at least the
/// min-entropy, `log2(n / max_count)`; when `n > 8 * max_count` (and `n <= 512`), that is
/// at least `log2(8 + 1/512)`, more than 3.0003 bits, while the floor is exactly 3.0 for 14
/// bytes or more and the float sum errs by less than 1e-11: the exact comparison would say
/// yes too. Anything else takes the exact comparison.
fn random_enough(v: &[u8]) -> bool {
    if (14..=512).contains(&v.len()) {
        let mut counts = [0u16; 256];
        let mut most = 0;
        for &b in v {
            let c = &mut counts[usize::from(b)];
            *c += 1;
            most = most.max(*c);
        }
        if v.len() > 8 * usize::from(most) {
            return true;
        }
    }
    let floor = (0.8 * (v.len() as f64).log2()).min(3.0);
    entropy(v) >= floor
}

/// Shannon entropy in bits per byte.
pub(crate) fn entropy(v: &[u8]) -> f64 {
    let mut counts = [0u32; 256];
    // Which bytes occur, so the sum visits only those (in byte order, as a walk over all
    // 256 counts would: the same terms added in the same order, the same result).
    let mut seen = [0u64; 4];
    for &b in v {
        counts[usize::from(b)] += 1;
        seen[usize::from(b >> 6)] |= 1 << (b & 63);
    }
    let n = v.len() as f64;
    let mut sum = 0.0;
    for (w, &word) in seen.iter().enumerate() {
        let mut bits = word;
        while bits != 0 {
            let c = counts[w * 64 + bits.trailing_zeros() as usize];
            bits &= bits - 1;
            let p = f64::from(c) / n;
            sum += -p * p.log2();
        }
    }
    sum
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::detect::secret::{contains, lowercase_into};

    /// The one-pass placeholder check answers exactly what a substring search for every
    /// marker over the lowercased value answers, for markers at every offset, in both
    /// cases, overlapping and cut short at the end.
    #[test]
    fn placeholder_check_matches_a_search_per_marker() {
        fn reference(v: &[u8]) -> bool {
            let mut buf = [0u8; 512];
            let lower = lowercase_into(v, &mut buf);
            PLACEHOLDERS.iter().any(|m| contains(lower, m))
        }
        let fillers: [&[u8]; 4] = [b"aZ9_-", b"xxx", b"Q", b"\xc3\xa9."];
        let mut checked = 0;
        for m in PLACEHOLDERS {
            let upper = m.to_ascii_uppercase();
            let cut = &m[..m.len() - 1];
            for piece in [m, &upper[..], cut] {
                for f in fillers {
                    for before in 0..3 {
                        let mut v = f.repeat(before);
                        v.extend_from_slice(piece);
                        v.extend_from_slice(f);
                        for tail in [&v[..], &v[..v.len() - f.len()]] {
                            assert_eq!(has_placeholder(tail), reference(tail), "{tail:?}");
                            checked += 1;
                        }
                    }
                }
            }
        }
        assert!(checked > 400);
        assert!(has_placeholder(b"MyPass-CHANGE_ME-now"));
        assert!(!has_placeholder(b"8DbayZAz92gwx8t1eB82PtoSfPPZy4Eb89rU"));
    }

    /// The shortcut answers exactly what the exact comparison answers, on strings built
    /// to sit at and around the min-entropy bound (`n` = 8, 9 and 7 times the most
    /// frequent byte's count), uniform and skewed, and on pseudo-random strings.
    #[test]
    fn random_enough_agrees_with_the_exact_entropy() {
        fn exact(v: &[u8]) -> bool {
            entropy(v) >= (0.8 * (v.len() as f64).log2()).min(3.0)
        }
        let mut cases: Vec<Vec<u8>> = Vec::new();
        for distinct in 1..=20u8 {
            for each in 1..=12usize {
                let uniform: Vec<u8> = (0..distinct)
                    .flat_map(|d| std::iter::repeat_n(b'a' + d, each))
                    .collect();
                cases.push(uniform.clone());
                let mut skewed = uniform.clone();
                skewed.push(b'a');
                cases.push(skewed);
                let mut spread = uniform;
                spread.pop();
                spread.extend_from_slice(b"!#%&");
                cases.push(spread);
            }
        }
        let mut x: u32 = 0x9E37_79B9;
        for len in 8..=520 {
            for alphabet in [4u32, 9, 16, 64] {
                let v: Vec<u8> = (0..len)
                    .map(|_| {
                        x ^= x << 13;
                        x ^= x >> 17;
                        x ^= x << 5;
                        b'0' + (x % alphabet) as u8
                    })
                    .collect();
                cases.push(v);
            }
        }
        let mut shortcut = 0;
        for v in &cases {
            assert_eq!(random_enough(v), exact(v), "{v:?}");
            shortcut += usize::from((14..=512).contains(&v.len()) && exact(v));
        }
        assert!(shortcut > 500);
    }

    #[test]
    fn entropy_of_uniform_strings() {
        assert!(entropy(b"aaaa") < 0.001);
        assert!((entropy(b"abcdefgh") - 3.0).abs() < 1e-9);
    }
}
