//! Where skills come from (seed 003's `SkillSource`): search, fetch a package, list versions.
//!
//! | source | search | fetch | versions |
//! |---|---|---|---|
//! | [`LocalSource`] | skill directories under a root, by name or description | the directory, through `skills-catalog`'s `package_dir` (regular files only, no symlinks) | the one version the skill declares |
//! | [`ArchiveSource`] | the one skill of a portable JSON or `.tar.gz` archive | the archive, through `skills-catalog`'s safe import | the declared version |
//! | [`GitHubSource`] | repositories by topic | a path at a ref through the contents API | releases, then tags |
//! | [`NpmSource`] | `/-/v1/search?text=` | `dist.tarball`, checked against `dist.integrity` | `versions` and `dist-tags` |
//!
//! Every source treats what it reads as untrusted: responses, files and counts are capped
//! ([`PackageLimits`](crate::PackageLimits)), paths are checked
//! ([`check_package_path`](crate::check_package_path)), links are never followed or
//! fetched.

mod archive;
mod github;
mod local;
mod npm;

use async_trait::async_trait;

pub use archive::ArchiveSource;
pub use github::{DEFAULT_TOPIC, GitHubSource};
pub use local::LocalSource;
pub use npm::NpmSource;

use crate::error::Result;
use crate::package::{SkillPackage, SkillRef, SourceKind};

/// A place skills can be found and fetched from. Object-safe: hold sources as
/// `Arc<dyn SkillSource>`.
#[async_trait]
pub trait SkillSource: Send + Sync {
    /// The kind of source.
    fn kind(&self) -> SourceKind;

    /// Skills matching `query` (the source's own notion of matching), at most the source's
    /// search limit, in a stable order.
    async fn search(&self, query: &str) -> Result<Vec<SkillRef>>;

    /// Fetches the skill at `locator` (a [`SkillRef::locator`]), at `version` or the
    /// latest.
    async fn fetch(&self, locator: &str, version: Option<&str>) -> Result<SkillPackage>;

    /// The versions of the skill at `locator`, semantic versions in precedence order first.
    async fn versions(&self, locator: &str) -> Result<Vec<String>>;
}

/// Text matching for the sources that search locally: every whitespace-separated word of
/// `query` occurs in `name` or `description`, case-insensitively.
pub(crate) fn matches_query(query: &str, name: &str, description: Option<&str>) -> bool {
    let haystack = format!("{} {}", name, description.unwrap_or_default()).to_lowercase();
    query
        .split_whitespace()
        .all(|word| haystack.contains(&word.to_lowercase()))
}

/// The version a skill declares: `metadata.version` in SKILL.md's frontmatter (the Spec
/// profile's place for it), else the `version` extension key, else skill.json's `version`.
pub(crate) fn declared_version(skill_md: &[u8], skill_json: Option<&[u8]>) -> Option<String> {
    let parsed = skills_core::SkillMd::parse(
        skill_md,
        None,
        &skills_core::ParseOptions::for_profile(skills_core::Profile::Lenient),
    );
    let front = parsed.document.map(|d| d.frontmatter);
    front
        .as_ref()
        .and_then(|f| f.metadata.get("version").cloned())
        .or_else(|| front.as_ref().and_then(|f| f.version.clone()))
        .or_else(|| {
            let json: serde_json::Value = serde_json::from_slice(skill_json?).ok()?;
            json.get("version")?.as_str().map(str::to_owned)
        })
        .map(|v| v.trim().to_owned())
        .filter(|v| !v.is_empty())
}

/// Name and description from SKILL.md's frontmatter (Lenient: for listing, not validating).
pub(crate) fn describe(skill_md: &[u8]) -> (Option<String>, Option<String>) {
    let parsed = skills_core::SkillMd::parse(
        skill_md,
        None,
        &skills_core::ParseOptions::for_profile(skills_core::Profile::Lenient),
    );
    match parsed.document {
        Some(doc) => (
            Some(doc.frontmatter.name).filter(|n| !n.is_empty()),
            Some(doc.frontmatter.description).filter(|d| !d.is_empty()),
        ),
        None => (None, None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn query_words_must_all_match() {
        assert!(matches_query("pdf TEXT", "pdf-tools", Some("Extract text")));
        assert!(!matches_query(
            "pdf tables",
            "pdf-tools",
            Some("Extract text")
        ));
        assert!(matches_query("", "anything", None));
    }

    #[test]
    fn declared_version_order() {
        let md =
            b"---\nname: a\ndescription: b\nmetadata:\n  version: 1.2.3\nversion: 9.9.9\n---\n";
        assert_eq!(declared_version(md, None).as_deref(), Some("1.2.3"));
        let md = b"---\nname: a\ndescription: b\n---\n";
        assert_eq!(
            declared_version(md, Some(br#"{"version": "2.0.0"}"#)).as_deref(),
            Some("2.0.0")
        );
        assert_eq!(declared_version(md, None), None);
    }
}
