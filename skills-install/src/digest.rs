//! Integrity digests of files and packages, written `sha256:<64 lowercase hex digits>`.
//!
//! # The package encoding (`skills-install.package.v1`)
//!
//! A package digest is SHA-256 over:
//!
//! ```text
//! "skills-install.package.v1" 0x00
//! u64-be(number of files)
//! for each file, in bytewise order of its path:
//!     u64-be(len(path)) path-bytes u64-be(len(content)) content-bytes
//! ```
//!
//! Threat: a package swapped, extended or trimmed between the moment someone reviewed it and
//! the moment it is installed; two different packages encoded to the same bytes. Guarantee:
//! every length is written before its bytes, so no choice of paths and contents encodes two
//! different file sets alike (a file cannot be "moved" into its neighbour's path or
//! content); the order files arrive in does not matter; and any change to any byte of any
//! path or content, or adding or removing a file, changes the digest (up to SHA-256
//! collisions). Timestamps, modes and owners are never part of it.

use sha2::{Digest as _, Sha256};

use crate::error::{Error, Result, shown};
use crate::package::PackageFile;

/// The domain tag the package encoding starts with.
pub const PACKAGE_ENCODING: &str = "skills-install.package.v1";

/// The prefix every digest carries.
pub const DIGEST_PREFIX: &str = "sha256:";

/// `sha256:<hex>` of one file's bytes.
///
/// ```
/// assert_eq!(
///     skills_install::digest::file_digest(b""),
///     "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
/// );
/// ```
pub fn file_digest(bytes: &[u8]) -> String {
    format!("{DIGEST_PREFIX}{}", hex::encode(Sha256::digest(bytes)))
}

/// `sha256:<hex>` of a whole package in the `skills-install.package.v1` encoding; the
/// order of `files` does not matter.
///
/// ```
/// use skills_install::{PackageFile, digest::package_digest};
///
/// let a = [PackageFile::new("SKILL.md", "x"), PackageFile::new("b.md", "y")];
/// let b = [PackageFile::new("b.md", "y"), PackageFile::new("SKILL.md", "x")];
/// assert_eq!(package_digest(&a), package_digest(&b));
/// assert!(package_digest(&a).starts_with("sha256:"));
/// ```
pub fn package_digest(files: &[PackageFile]) -> String {
    let mut sorted: Vec<&PackageFile> = files.iter().collect();
    sorted.sort_by(|a, b| a.path.as_bytes().cmp(b.path.as_bytes()));
    let mut hasher = Sha256::new();
    hasher.update(PACKAGE_ENCODING.as_bytes());
    hasher.update([0u8]);
    hasher.update((sorted.len() as u64).to_be_bytes());
    for file in sorted {
        hasher.update((file.path.len() as u64).to_be_bytes());
        hasher.update(file.path.as_bytes());
        hasher.update((file.bytes.len() as u64).to_be_bytes());
        hasher.update(&file.bytes);
    }
    format!("{DIGEST_PREFIX}{}", hex::encode(hasher.finalize()))
}

/// The npm `dist.integrity` string of a tarball: `sha512-<base64>` (Subresource Integrity),
/// for publishing a skill to an npm registry — and what [`NpmSource`](crate::NpmSource)
/// checks a downloaded tarball against.
///
/// ```
/// assert!(skills_install::digest::npm_integrity(b"x").starts_with("sha512-"));
/// ```
pub fn npm_integrity(tarball: &[u8]) -> String {
    format!(
        "sha512-{}",
        crate::base64::encode(&sha2::Sha512::digest(tarball))
    )
}

/// Checks that `text` is `sha256:` and 64 hex digits, and returns it lowercased.
///
/// ```
/// let d = skills_install::digest::parse_digest(&format!("sha256:{}", "AB".repeat(32))).unwrap();
/// assert_eq!(d, format!("sha256:{}", "ab".repeat(32)));
/// assert!(skills_install::digest::parse_digest("md5:00").is_err());
/// ```
pub fn parse_digest(text: &str) -> Result<String> {
    let bad = || Error::BadDigest { value: shown(text) };
    let hex_part = text.trim().strip_prefix(DIGEST_PREFIX).ok_or_else(bad)?;
    if hex_part.len() != 64 || !hex_part.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(bad());
    }
    Ok(format!("{DIGEST_PREFIX}{}", hex_part.to_ascii_lowercase()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lengths_keep_neighbours_apart() {
        let a = [PackageFile::new("ab", "c")];
        let b = [PackageFile::new("a", "bc")];
        assert_ne!(package_digest(&a), package_digest(&b));
        let empty: [PackageFile; 0] = [];
        let one_empty = [PackageFile::new("a", "")];
        assert_ne!(package_digest(&empty), package_digest(&one_empty));
    }

    #[test]
    fn known_answer() {
        // Pinned so the encoding cannot drift silently: stored digests depend on it.
        let files = [PackageFile::new("SKILL.md", "hi\n")];
        let mut expected = Sha256::new();
        expected.update(b"skills-install.package.v1\0");
        expected.update(1u64.to_be_bytes());
        expected.update(8u64.to_be_bytes());
        expected.update(b"SKILL.md");
        expected.update(3u64.to_be_bytes());
        expected.update(b"hi\n");
        assert_eq!(
            package_digest(&files),
            format!("sha256:{}", hex::encode(expected.finalize()))
        );
    }
}
