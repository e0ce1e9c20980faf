//! The identity of a learning pattern: a SHA-256 over a canonical encoding.
//!
//! The store keeps one pattern per hash and tenant, so the hash must not depend on anything
//! but what the pattern *is*: its kind and its skills (and, for a composite, its task type).
//! In particular it must not depend on the order runs were recorded in, on how often the
//! pattern occurred, or on how well it went.
//!
//! # Encoding `skills.learn.pattern.v1`
//!
//! The SHA-256 input is the concatenation of:
//!
//! 1. the bytes `skills.learn.pattern.v1` and one `0x00` byte;
//! 2. the kind's stored word (`sequence`, `retry`, `composite`) and one `0x00` byte;
//! 3. the number of skills as a big-endian `u64`, then each skill as a big-endian `u64`
//!    byte length followed by its UTF-8 bytes; a composite's skills are first sorted
//!    bytewise and deduplicated, a sequence's and a retry's are taken in pattern order;
//! 4. for a composite, one `0x01` byte, then the task type as a big-endian `u64` byte length
//!    followed by its bytes; for the other kinds, one `0x00` byte.
//!
//! The digest is written as 64 lowercase hexadecimal characters. Length prefixes make the
//! encoding injective: `["ab", "c"]` and `["a", "bc"]` cannot collide by construction.

use sha2::{Digest, Sha256};
use skills_store_traits::learning::PatternKind;

/// The domain tag at the start of every hashed encoding; a new encoding gets a new tag.
pub const PATTERN_HASH_DOMAIN: &str = "skills.learn.pattern.v1";

/// The stable hash of a pattern (see the [module docs](self) for the exact encoding).
///
/// `task_type` is part of a composite's identity (the same skills used together for another
/// kind of task are another composite); for sequences and retries it is ignored, since the
/// task types they were seen in are context that changes as history grows.
///
/// ```
/// use skills_orchestrate::learn::pattern_hash;
/// use skills_store_traits::learning::PatternKind;
///
/// let skills = ["pdf".to_owned(), "summarize".to_owned()];
/// let reversed = ["summarize".to_owned(), "pdf".to_owned()];
/// let hash = pattern_hash(PatternKind::Sequence, &skills, None);
/// assert_eq!(hash.len(), 64);
/// // Order is identity for a sequence, not for a composite.
/// assert_ne!(hash, pattern_hash(PatternKind::Sequence, &reversed, None));
/// assert_eq!(
///     pattern_hash(PatternKind::Composite, &skills, Some("report")),
///     pattern_hash(PatternKind::Composite, &reversed, Some("report")),
/// );
/// ```
pub fn pattern_hash(kind: PatternKind, skills: &[String], task_type: Option<&str>) -> String {
    let mut hasher = Sha256::new();
    hasher.update(PATTERN_HASH_DOMAIN.as_bytes());
    hasher.update([0u8]);
    hasher.update(kind.as_str().as_bytes());
    hasher.update([0u8]);
    let mut ordered: Vec<&str> = skills.iter().map(String::as_str).collect();
    if kind == PatternKind::Composite {
        ordered.sort_unstable();
        ordered.dedup();
    }
    hasher.update(length_prefix(ordered.len()));
    for skill in ordered {
        hasher.update(length_prefix(skill.len()));
        hasher.update(skill.as_bytes());
    }
    match (kind, task_type) {
        (PatternKind::Composite, Some(task_type)) => {
            hasher.update([1u8]);
            hasher.update(length_prefix(task_type.len()));
            hasher.update(task_type.as_bytes());
        }
        _ => hasher.update([0u8]),
    }
    hex::encode(hasher.finalize())
}

fn length_prefix(len: usize) -> [u8; 8] {
    u64::try_from(len).unwrap_or(u64::MAX).to_be_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn owned(items: &[&str]) -> Vec<String> {
        items.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn length_prefixes_keep_boundaries_apart() {
        let a = pattern_hash(PatternKind::Sequence, &owned(&["ab", "c"]), None);
        let b = pattern_hash(PatternKind::Sequence, &owned(&["a", "bc"]), None);
        assert_ne!(a, b);
    }

    #[test]
    fn kind_and_task_type_are_identity() {
        let skills = owned(&["a", "b"]);
        let sequence = pattern_hash(PatternKind::Sequence, &skills, None);
        let composite = pattern_hash(PatternKind::Composite, &skills, None);
        assert_ne!(sequence, composite);
        assert_ne!(
            pattern_hash(PatternKind::Composite, &skills, Some("x")),
            pattern_hash(PatternKind::Composite, &skills, Some("y"))
        );
        // Ignored for a sequence.
        assert_eq!(
            sequence,
            pattern_hash(PatternKind::Sequence, &skills, Some("x"))
        );
    }

    #[test]
    fn the_encoding_is_pinned() {
        // Recomputed by hand from the documented encoding, so a silent change of the
        // encoding (which would orphan every stored pattern) fails here.
        let mut input = Vec::new();
        input.extend_from_slice(b"skills.learn.pattern.v1\0retry\0");
        input.extend_from_slice(&1u64.to_be_bytes());
        input.extend_from_slice(&3u64.to_be_bytes());
        input.extend_from_slice(b"pdf");
        input.push(0);
        let expected = hex::encode(Sha256::digest(&input));
        assert_eq!(
            pattern_hash(PatternKind::Retry, &owned(&["pdf"]), None),
            expected
        );
    }
}
