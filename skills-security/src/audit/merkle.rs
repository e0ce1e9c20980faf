//! A Merkle tree over a chain's entries (RFC 6962 section 2.1, RFC 9162 section 2.1), with
//! inclusion and consistency proofs and the standalone functions that verify them.
//!
//! Threat: a host that shows one auditor a history and another a different one, drops or
//! rewrites entries behind an old checkpoint, or claims an entry is in the log when it is
//! not. Guarantee: a root commits to every leaf and its position; an inclusion proof of
//! `⌈log2 n⌉` hashes convinces anyone holding only the root that the leaf is at that index,
//! and a consistency proof of at most `⌈log2 n⌉ + 1` hashes that a tree of size `m` is a
//! prefix of a tree of size `n`. Leaves and interior nodes are hashed with different
//! prefixes (`0x00`, `0x01`), so an interior node cannot pass as a leaf. The verifying
//! functions take nothing but hashes and sizes, so an auditor needs no store access.
//!
//! The leaves of an audit chain are the 32-byte values of the entries' `entry_hash`es in
//! sequence order: leaf `i` (0-based) is sequence `i + 1`.
//!
//! ```
//! use skills_security::audit::merkle::{MerkleTree, leaf_hash, verify_consistency, verify_inclusion};
//!
//! let mut tree = MerkleTree::new();
//! for i in 0u8..7 {
//!     tree.push(&[i]);
//! }
//! let old_root = tree.root_at(3).unwrap();
//! let root = tree.root();
//! let proof = tree.inclusion_proof(5, 7).unwrap();
//! assert!(verify_inclusion(&leaf_hash(&[5]), 5, 7, &proof, &root));
//! assert!(!verify_inclusion(&leaf_hash(&[6]), 5, 7, &proof, &root));
//! let consistency = tree.consistency_proof(3, 7).unwrap();
//! assert!(verify_consistency(3, 7, &old_root, &root, &consistency));
//! ```

use sha2::{Digest, Sha256};

/// A SHA-256 value.
pub type Hash = [u8; 32];

/// The root of the empty tree: SHA-256 of nothing.
pub fn empty_root() -> Hash {
    Sha256::digest([]).into()
}

/// `SHA-256(0x00 || data)`.
pub fn leaf_hash(data: &[u8]) -> Hash {
    let mut h = Sha256::new();
    h.update([0u8]);
    h.update(data);
    h.finalize().into()
}

/// `SHA-256(0x01 || left || right)`.
pub fn node_hash(left: &Hash, right: &Hash) -> Hash {
    let mut h = Sha256::new();
    h.update([1u8]);
    h.update(left);
    h.update(right);
    h.finalize().into()
}

/// A 64-character hex string as a hash.
pub fn decode_hash(hex_text: &str) -> Option<Hash> {
    let mut out = [0u8; 32];
    hex::decode_to_slice(hex_text, &mut out).ok()?;
    Some(out)
}

/// Why a proof could not be produced.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum MerkleError {
    /// The tree size asked for is larger than the tree.
    #[error("tree size {size} is beyond the tree's {len} leaves")]
    SizeOutOfRange {
        /// The size asked for.
        size: u64,
        /// The leaves the tree holds.
        len: u64,
    },
    /// The leaf index is not below the tree size.
    #[error("leaf index {index} is not below tree size {size}")]
    IndexOutOfRange {
        /// The index.
        index: u64,
        /// The size.
        size: u64,
    },
    /// A consistency proof was asked from a larger tree to a smaller one.
    #[error("old size {old} is larger than new size {new}")]
    OldAfterNew {
        /// The old size.
        old: u64,
        /// The new size.
        new: u64,
    },
}

/// An append-only Merkle tree kept as its complete levels, so roots and proofs for any
/// earlier size take `O(log n)` stored hashes (`O(log² n)` work at most) and appending is
/// amortized `O(1)` hashes. It holds about `2n` hashes (64 MB for a million leaves).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MerkleTree {
    /// `levels[h][i]` is the hash of the complete subtree of leaves `[i·2^h, (i+1)·2^h)`.
    levels: Vec<Vec<Hash>>,
}

fn largest_power_of_two_below(n: usize) -> usize {
    // n >= 2
    1usize << (usize::BITS - 1 - (n - 1).leading_zeros())
}

impl MerkleTree {
    /// An empty tree.
    pub fn new() -> MerkleTree {
        MerkleTree::default()
    }

    /// A tree over these leaf hashes, in order.
    pub fn from_leaf_hashes(leaves: impl IntoIterator<Item = Hash>) -> MerkleTree {
        let mut tree = MerkleTree::new();
        for leaf in leaves {
            tree.push_leaf_hash(leaf);
        }
        tree
    }

    /// Appends the leaf `data` (hashed with [`leaf_hash`]).
    pub fn push(&mut self, data: &[u8]) {
        self.push_leaf_hash(leaf_hash(data));
    }

    /// Appends an already hashed leaf.
    pub fn push_leaf_hash(&mut self, leaf: Hash) {
        let mut level = 0;
        let mut carry = leaf;
        loop {
            if self.levels.len() == level {
                self.levels.push(Vec::new());
            }
            let row = &mut self.levels[level];
            row.push(carry);
            if row.len() % 2 == 1 {
                return;
            }
            let n = row.len();
            carry = node_hash(&row[n - 2], &row[n - 1]);
            level += 1;
        }
    }

    /// The number of leaves.
    pub fn len(&self) -> u64 {
        self.levels.first().map_or(0, |l| l.len() as u64)
    }

    /// True when there are no leaves.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The hash of leaf `index`.
    pub fn leaf(&self, index: u64) -> Option<Hash> {
        let index = usize::try_from(index).ok()?;
        self.levels.first()?.get(index).copied()
    }

    /// The root of the whole tree.
    pub fn root(&self) -> Hash {
        self.root_at(self.len()).unwrap_or_else(|_| empty_root())
    }

    /// The root the tree had when it held `size` leaves.
    pub fn root_at(&self, size: u64) -> Result<Hash, MerkleError> {
        let n = self.check_size(size)?;
        Ok(if n == 0 {
            empty_root()
        } else {
            self.subtree(0, n)
        })
    }

    fn check_size(&self, size: u64) -> Result<usize, MerkleError> {
        let len = self.len();
        if size > len {
            return Err(MerkleError::SizeOutOfRange { size, len });
        }
        Ok(usize::try_from(size).unwrap_or(usize::MAX))
    }

    /// MTH(D[start..end]) for the RFC's subtrees: `start` is a multiple of the largest power
    /// of two below `end - start` (or of `end - start` itself when it is one).
    fn subtree(&self, start: usize, end: usize) -> Hash {
        let n = end - start;
        if n.is_power_of_two() && start.is_multiple_of(n) {
            let h = n.trailing_zeros() as usize;
            if let Some(hash) = self.levels.get(h).and_then(|l| l.get(start >> h)) {
                return *hash;
            }
        }
        if n <= 1 {
            // Not reached for in-range leaves: level 0 holds every leaf.
            return self
                .levels
                .first()
                .and_then(|l| l.get(start))
                .copied()
                .unwrap_or_else(empty_root);
        }
        let k = largest_power_of_two_below(n);
        node_hash(
            &self.subtree(start, start + k),
            &self.subtree(start + k, end),
        )
    }

    /// The audit path of leaf `index` in the tree of size `size` (RFC 6962 `PATH`), leaf to
    /// root.
    pub fn inclusion_proof(&self, index: u64, size: u64) -> Result<Vec<Hash>, MerkleError> {
        let n = self.check_size(size)?;
        if index >= size {
            return Err(MerkleError::IndexOutOfRange { index, size });
        }
        let mut m = usize::try_from(index).unwrap_or(usize::MAX);
        let (mut start, mut end) = (0, n);
        let mut path = Vec::new();
        while end - start > 1 {
            let k = largest_power_of_two_below(end - start);
            if m < k {
                path.push(self.subtree(start + k, end));
                end = start + k;
            } else {
                path.push(self.subtree(start, start + k));
                start += k;
                m -= k;
            }
        }
        path.reverse();
        Ok(path)
    }

    /// The proof that the tree of size `old` is a prefix of the tree of size `new` (RFC 6962
    /// `PROOF`); empty when `old` is 0 or equals `new`.
    pub fn consistency_proof(&self, old: u64, new: u64) -> Result<Vec<Hash>, MerkleError> {
        let n = self.check_size(new)?;
        if old > new {
            return Err(MerkleError::OldAfterNew { old, new });
        }
        let mut m = usize::try_from(old).unwrap_or(usize::MAX);
        if m == 0 || m == n {
            return Ok(Vec::new());
        }
        let (mut start, mut end) = (0, n);
        let mut complete = true;
        let mut proof = Vec::new();
        while m != end - start {
            let k = largest_power_of_two_below(end - start);
            if m <= k {
                proof.push(self.subtree(start + k, end));
                end = start + k;
            } else {
                proof.push(self.subtree(start, start + k));
                start += k;
                m -= k;
                complete = false;
            }
        }
        if !complete {
            proof.push(self.subtree(start, end));
        }
        proof.reverse();
        Ok(proof)
    }
}

/// Verifies an inclusion proof (RFC 9162 section 2.1.3.2): `leaf` (a [`leaf_hash`]) is leaf
/// `index` of the tree of size `size` whose root is `root`.
pub fn verify_inclusion(leaf: &Hash, index: u64, size: u64, proof: &[Hash], root: &Hash) -> bool {
    if index >= size {
        return false;
    }
    let (mut f, mut s) = (index, size - 1);
    let mut r = *leaf;
    for p in proof {
        if s == 0 {
            return false;
        }
        if f & 1 == 1 || f == s {
            r = node_hash(p, &r);
            while f & 1 == 0 && f != 0 {
                f >>= 1;
                s >>= 1;
            }
        } else {
            r = node_hash(&r, p);
        }
        f >>= 1;
        s >>= 1;
    }
    s == 0 && r == *root
}

/// Verifies a consistency proof (RFC 9162 section 2.1.4.2): the tree of size `old` with root
/// `old_root` is a prefix of the tree of size `new` with root `new_root`.
///
/// Equal sizes need an empty proof and equal roots; an old size of 0 needs an empty proof
/// (the empty tree is a prefix of every tree).
pub fn verify_consistency(
    old: u64,
    new: u64,
    old_root: &Hash,
    new_root: &Hash,
    proof: &[Hash],
) -> bool {
    if old > new {
        return false;
    }
    if old == new {
        return proof.is_empty() && old_root == new_root;
    }
    if old == 0 {
        return proof.is_empty();
    }
    let Some((first, rest)) = proof.split_first() else {
        return false;
    };
    let mut path: Vec<&Hash> = Vec::with_capacity(proof.len() + 1);
    if old.is_power_of_two() {
        path.push(old_root);
    }
    path.push(first);
    path.extend(rest);
    let (mut f, mut s) = (old - 1, new - 1);
    while f & 1 == 1 {
        f >>= 1;
        s >>= 1;
    }
    let (mut fr, mut sr) = (*path[0], *path[0]);
    for c in &path[1..] {
        if s == 0 {
            return false;
        }
        if f & 1 == 1 || f == s {
            fr = node_hash(c, &fr);
            sr = node_hash(c, &sr);
            while f & 1 == 0 && f != 0 {
                f >>= 1;
                s >>= 1;
            }
        } else {
            sr = node_hash(&sr, c);
        }
        f >>= 1;
        s >>= 1;
    }
    fr == *old_root && sr == *new_root && s == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    /// RFC 6962's reference tree (certificate-transparency `merkle_tree_test.cc`).
    const LEAVES: [&str; 8] = [
        "",
        "00",
        "10",
        "2021",
        "3031",
        "40414243",
        "5051525354555657",
        "606162636465666768696a6b6c6d6e6f",
    ];
    const ROOTS: [&str; 8] = [
        "6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d",
        "fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125",
        "aeb6bcfe274b70a14fb067a5e5578264db0fa9b51af5e0ba159158f329e06e77",
        "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7",
        "4e3bbb1f7b478dcfe71fb631631519a3bca12c9aefca1612bfce4c13a86264d4",
        "76e67dadbcdf1e10e1b74ddc608abd2f98dfb16fbce75277b5232a127f2087ef",
        "ddb89be403809e325750d3d263cd78929c2942b7942a34b77e122c9594a74c8c",
        "5dc9da79a70659a9ad559cb701ded9a2ab9d823aad2f4960cfe370eff4604328",
    ];

    fn h(s: &str) -> Hash {
        decode_hash(s).unwrap()
    }

    fn reference() -> MerkleTree {
        let mut t = MerkleTree::new();
        for leaf in LEAVES {
            t.push(&hex::decode(leaf).unwrap());
        }
        t
    }

    #[test]
    fn roots_match_the_reference_vectors() {
        let t = reference();
        assert_eq!(
            hex::encode(t.root_at(0).unwrap()),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
        for (i, root) in ROOTS.iter().enumerate() {
            assert_eq!(hex::encode(t.root_at(i as u64 + 1).unwrap()), *root);
        }
        assert!(t.root_at(9).is_err());
    }

    #[test]
    fn paths_match_the_reference_vectors() {
        let t = reference();
        // (0-based leaf, size, path) from kSHA256Paths (which counts leaves from 1).
        let cases: [(u64, u64, &[&str]); 4] = [
            (
                0,
                8,
                &[
                    "96a296d224f285c67bee93c30f8a309157f0daa35dc5b87e410b78630a09cfc7",
                    "5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e",
                    "6b47aaf29ee3c2af9af889bc1fb9254dabd31177f16232dd6aab035ca39bf6e4",
                ],
            ),
            (
                5,
                8,
                &[
                    "bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b",
                    "ca854ea128ed050b41b35ffc1b87b8eb2bde461e9e3b5596ece6b9d5975a0ae0",
                    "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7",
                ],
            ),
            (
                2,
                3,
                &["fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125"],
            ),
            (
                1,
                5,
                &[
                    "6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d",
                    "5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e",
                    "bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b",
                ],
            ),
        ];
        for (index, size, expected) in cases {
            let path = t.inclusion_proof(index, size).unwrap();
            let expected: Vec<Hash> = expected.iter().map(|s| h(s)).collect();
            assert_eq!(path, expected, "leaf {index} of {size}");
            let leaf = t.leaf(index).unwrap();
            let root = h(ROOTS[size as usize - 1]);
            assert!(verify_inclusion(&leaf, index, size, &path, &root));
            assert!(!verify_inclusion(&leaf, index + 1, size, &path, &root));
            assert!(!verify_inclusion(&leaf, index, size * 2, &path, &root));
            assert!(!verify_inclusion(&leaf, index, size, &path, &empty_root()));
            let mut longer = path.clone();
            longer.push(root);
            assert!(!verify_inclusion(&leaf, index, size, &longer, &root));
        }
        assert_eq!(t.inclusion_proof(0, 1).unwrap(), Vec::<Hash>::new());
        assert!(t.inclusion_proof(8, 8).is_err());
    }

    #[test]
    fn consistency_matches_the_reference_vectors() {
        let t = reference();
        let cases: [(u64, u64, &[&str]); 4] = [
            (1, 1, &[]),
            (
                1,
                8,
                &[
                    "96a296d224f285c67bee93c30f8a309157f0daa35dc5b87e410b78630a09cfc7",
                    "5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e",
                    "6b47aaf29ee3c2af9af889bc1fb9254dabd31177f16232dd6aab035ca39bf6e4",
                ],
            ),
            (
                6,
                8,
                &[
                    "0ebc5d3437fbe2db158b9f126a1d118e308181031d0a949f8dededebc558ef6a",
                    "ca854ea128ed050b41b35ffc1b87b8eb2bde461e9e3b5596ece6b9d5975a0ae0",
                    "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7",
                ],
            ),
            (
                2,
                5,
                &[
                    "5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e",
                    "bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b",
                ],
            ),
        ];
        for (old, new, expected) in cases {
            let proof = t.consistency_proof(old, new).unwrap();
            let expected: Vec<Hash> = expected.iter().map(|s| h(s)).collect();
            assert_eq!(proof, expected, "{old} -> {new}");
            let (r1, r2) = (h(ROOTS[old as usize - 1]), h(ROOTS[new as usize - 1]));
            assert!(verify_consistency(old, new, &r1, &r2, &proof));
            if !proof.is_empty() {
                assert!(!verify_consistency(old, new, &r2, &r1, &proof));
                assert!(!verify_consistency(old + 1, new, &r1, &r2, &proof));
                assert!(!verify_consistency(old, new, &r1, &r2, &proof[1..]));
                assert!(!verify_consistency(old, new, &r1, &r2, &[]));
            }
        }
    }

    #[test]
    fn trivial_consistency_cases() {
        let e = empty_root();
        assert!(verify_consistency(0, 0, &e, &e, &[]));
        assert!(verify_consistency(0, 5, &e, &e, &[]));
        assert!(!verify_consistency(0, 5, &e, &e, &[e]));
        assert!(!verify_consistency(2, 1, &e, &e, &[]));
        assert!(!verify_consistency(1, 2, &e, &e, &[]));
        assert!(!verify_inclusion(&e, 0, 0, &[], &e));
    }
}
