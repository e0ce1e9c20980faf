//! What sources return: references found by a search, and fetched packages.
//!
//! Threat: a package's file list comes from an untrusted server or archive and may name
//! `../../.bashrc`, `/etc/cron.d/x`, `scripts\..\..\x`, the same path twice, or millions of
//! files. Guarantee: a [`SkillPackage`] cannot be built with such a list —
//! [`SkillPackage::new`] refuses every path that fails [`check_package_path`], duplicate
//! paths, more than [`PackageLimits::max_files`] files, a file over
//! [`PackageLimits::max_file_bytes`] and a total over [`PackageLimits::max_total_bytes`];
//! files are kept sorted by path so everything derived from a package is deterministic.

use serde::Serialize;
use skills_catalog::portable::PortableSkill;

use crate::error::{Error, Result, shown};

/// The kind of source a skill came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum SourceKind {
    /// A directory tree on the local filesystem.
    Local,
    /// A portable JSON document or `.tar.gz` archive.
    Archive,
    /// A git host's REST API.
    GitHub,
    /// An npm registry.
    Npm,
    /// A Model Context Protocol server speaking the skills extension (SEP-2640).
    Mcp,
}

impl SourceKind {
    /// `local`, `archive`, `github`, `npm` or `mcp`.
    pub fn as_str(self) -> &'static str {
        match self {
            SourceKind::Local => "local",
            SourceKind::Archive => "archive",
            SourceKind::GitHub => "github",
            SourceKind::Npm => "npm",
            SourceKind::Mcp => "mcp",
        }
    }
}

impl std::fmt::Display for SourceKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A skill a source can fetch, as a search found it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct SkillRef {
    /// The skill's (or repository's, or package's) name.
    pub name: String,
    /// Its description, when the source gave one.
    pub description: Option<String>,
    /// Its latest version, when the source gave one.
    pub version: Option<String>,
    /// The kind of source.
    pub kind: SourceKind,
    /// What to pass to [`SkillSource::fetch`](crate::SkillSource::fetch): a directory name,
    /// `owner/repo[/path]`, an npm package name.
    pub locator: String,
}

impl SkillRef {
    /// A reference.
    pub fn new(kind: SourceKind, locator: impl Into<String>, name: impl Into<String>) -> Self {
        SkillRef {
            name: name.into(),
            description: None,
            version: None,
            kind,
            locator: locator.into(),
        }
    }
}

/// Where a fetched package came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct SourceIdentity {
    /// The kind of source.
    pub kind: SourceKind,
    /// The locator fetched.
    pub locator: String,
    /// The `/`-separated path trust is decided on
    /// ([`TrustedSources`](skills_security::TrustedSources)), beginning with the origin that
    /// served it: `<api host>/owner/repo/path` for a git host (a mirror is another origin),
    /// `<registry host>/<package>` for npm, `local/<dir>` and `archive/<slug>` otherwise.
    pub trust_path: String,
    /// The exact revision fetched (a git ref, an npm version, a tarball URL), when known.
    pub revision: Option<String>,
    /// Whether `revision` names content that cannot change under it: a commit or a release
    /// tag of a git host, a published npm version. A branch or a pull-request ref can, so
    /// content fetched through one is never `verified`, whatever its repository.
    pub immutable: bool,
}

impl SourceIdentity {
    /// An identity.
    pub fn new(
        kind: SourceKind,
        locator: impl Into<String>,
        trust_path: impl Into<String>,
    ) -> Self {
        SourceIdentity {
            kind,
            locator: locator.into(),
            trust_path: trust_path.into(),
            revision: None,
            immutable: false,
        }
    }

    /// Marks the revision as immutable (see [`immutable`](Self::immutable)).
    #[must_use]
    pub fn immutable(mut self) -> Self {
        self.immutable = true;
        self
    }

    /// Sets the revision.
    #[must_use]
    pub fn with_revision(mut self, revision: impl Into<String>) -> Self {
        self.revision = Some(revision.into());
        self
    }
}

/// One file of a package: a relative path and its bytes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PackageFile {
    /// The `/`-separated path under the skill directory (`SKILL.md`, `scripts/run.sh`).
    pub path: String,
    /// The content.
    #[serde(skip)]
    pub bytes: Vec<u8>,
}

impl PackageFile {
    /// A file.
    pub fn new(path: impl Into<String>, bytes: impl Into<Vec<u8>>) -> Self {
        PackageFile {
            path: path.into(),
            bytes: bytes.into(),
        }
    }
}

/// Bounds on what a source accepts from untrusted input.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct PackageLimits {
    /// Most files in one package (default 500).
    pub max_files: usize,
    /// Largest single file (default 1 MiB; the store's own, smaller limit is a validation
    /// diagnostic, so a too-large file is reported rather than silently dropped).
    pub max_file_bytes: u64,
    /// Largest total of all files (default 8 MiB).
    pub max_total_bytes: u64,
    /// Largest HTTP response body: a metadata document or a tarball (default 16 MiB).
    pub max_response_bytes: u64,
    /// Most results a search returns (default 50).
    pub max_search_results: usize,
    /// Deepest directory level walked below a skill (default 8).
    pub max_depth: usize,
    /// Most versions listed (default 1000).
    pub max_versions: usize,
}

impl Default for PackageLimits {
    fn default() -> Self {
        PackageLimits {
            max_files: 500,
            max_file_bytes: 1024 * 1024,
            max_total_bytes: 8 * 1024 * 1024,
            max_response_bytes: 16 * 1024 * 1024,
            max_search_results: 50,
            max_depth: 8,
            max_versions: 1000,
        }
    }
}

/// Checks a package file path: the core rules of
/// [`check_relative_path`](skills_core::files::check_relative_path) (not empty, not absolute,
/// no `..`, no empty or `.` component, at most 256 characters, no control characters), and no
/// backslash at all, since a `\` means a separator on some hosts and a name character on
/// others.
///
/// ```
/// use skills_install::check_package_path;
///
/// assert!(check_package_path("scripts/run.sh").is_ok());
/// assert!(check_package_path("../x").is_err());
/// assert!(check_package_path("scripts\\run.sh").is_err());
/// ```
pub fn check_package_path(path: &str) -> std::result::Result<(), String> {
    if path.contains('\\') {
        return Err("the path contains a backslash".to_owned());
    }
    skills_core::files::check_relative_path(path).map_err(|p| p.to_string())
}

/// A fetched skill: its name, version, every file (SKILL.md included) and where it came
/// from. Built only through [`SkillPackage::new`], which enforces the path and size rules.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SkillPackage {
    name: String,
    version: Option<String>,
    directory: Option<String>,
    files: Vec<PackageFile>,
    source: SourceIdentity,
}

impl SkillPackage {
    /// A package, refusing unsafe or duplicate paths and anything over `limits`. Files are
    /// sorted by path (bytewise).
    pub fn new(
        name: impl Into<String>,
        version: Option<String>,
        mut files: Vec<PackageFile>,
        source: SourceIdentity,
        limits: &PackageLimits,
    ) -> Result<Self> {
        let origin = format!("{} `{}`", source.kind, shown(&source.locator));
        if files.len() > limits.max_files {
            return Err(Error::TooLarge {
                what: format!("the number of files from {origin}"),
                limit: limits.max_files as u64,
            });
        }
        let mut total = 0u64;
        for file in &files {
            check_package_path(&file.path).map_err(|reason| Error::UnsafePath {
                path: shown(&file.path),
                origin: origin.clone(),
                reason,
            })?;
            let len = file.bytes.len() as u64;
            if len > limits.max_file_bytes {
                return Err(Error::TooLarge {
                    what: format!("`{}` from {origin}", shown(&file.path)),
                    limit: limits.max_file_bytes,
                });
            }
            total = total.saturating_add(len);
        }
        if total > limits.max_total_bytes {
            return Err(Error::TooLarge {
                what: format!("the files from {origin}"),
                limit: limits.max_total_bytes,
            });
        }
        files.sort_by(|a, b| a.path.as_bytes().cmp(b.path.as_bytes()));
        if let Some(pair) = files.windows(2).find(|w| w[0].path == w[1].path) {
            return Err(Error::UnsafePath {
                path: shown(&pair[0].path),
                origin,
                reason: "the path appears twice".to_owned(),
            });
        }
        Ok(SkillPackage {
            name: name.into(),
            version,
            directory: None,
            files,
            source,
        })
    }

    /// The same package, remembering the name of the directory it was found in (checked by
    /// the Spec profile's name-matches-directory rule).
    #[must_use]
    pub fn in_directory(mut self, directory: impl Into<String>) -> Self {
        self.directory = Some(directory.into());
        self
    }

    /// A package from a portable document: `SKILL.md` from its content, then its files.
    pub fn from_portable(
        document: &PortableSkill,
        source: SourceIdentity,
        limits: &PackageLimits,
    ) -> Result<Self> {
        let body = &document.skill;
        let mut files = vec![PackageFile::new(
            skills_core::SKILL_MD,
            body.content.as_bytes().to_vec(),
        )];
        files.extend(
            body.files
                .iter()
                .map(|f| PackageFile::new(f.path.clone(), f.content.as_bytes().to_vec())),
        );
        SkillPackage::new(
            body.slug.clone(),
            body.version.clone(),
            files,
            source,
            limits,
        )
    }

    /// The same package with another declared version.
    pub(crate) fn with_version(mut self, version: Option<String>) -> Self {
        self.version = version;
        self
    }

    /// The package's name as the source knows it.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The version the source declared, when it declared one.
    pub fn version(&self) -> Option<&str> {
        self.version.as_deref()
    }

    /// The directory name the skill was found in, when it had one.
    pub fn directory(&self) -> Option<&str> {
        self.directory.as_deref()
    }

    /// Every file, SKILL.md included, sorted by path.
    pub fn files(&self) -> &[PackageFile] {
        &self.files
    }

    /// The file at `path`.
    pub fn file(&self, path: &str) -> Option<&PackageFile> {
        self.files
            .binary_search_by(|f| f.path.as_bytes().cmp(path.as_bytes()))
            .ok()
            .and_then(|i| self.files.get(i))
    }

    /// Where it came from.
    pub fn source(&self) -> &SourceIdentity {
        &self.source
    }

    /// The total size of all files.
    pub fn total_bytes(&self) -> u64 {
        self.files.iter().map(|f| f.bytes.len() as u64).sum()
    }
}

/// Sorts version strings: semantic versions first in precedence order (a leading `v`
/// allowed), then everything else bytewise; duplicates removed.
pub(crate) fn sort_versions(mut versions: Vec<String>) -> Vec<String> {
    versions.sort_by(|a, b| {
        match (parse_version(a), parse_version(b)) {
            (Some(x), Some(y)) => x.cmp(&y),
            (Some(_), None) => std::cmp::Ordering::Less,
            (None, Some(_)) => std::cmp::Ordering::Greater,
            (None, None) => std::cmp::Ordering::Equal,
        }
        .then_with(|| a.as_bytes().cmp(b.as_bytes()))
    });
    versions.dedup();
    versions
}

/// A semantic version, allowing one leading `v` (`v1.2.3`, as git tags are often written).
pub(crate) fn parse_version(text: &str) -> Option<semver::Version> {
    let text = text.trim();
    let text = text.strip_prefix('v').unwrap_or(text);
    semver::Version::parse(text).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn identity() -> SourceIdentity {
        SourceIdentity::new(SourceKind::Local, "x", "local/x")
    }

    #[test]
    fn unsafe_paths_are_refused() {
        for bad in [
            "../x",
            "/etc/passwd",
            "a\\..\\b",
            "a//b",
            "./a",
            "C:x",
            "a\u{1b}b",
            "",
        ] {
            let files = vec![PackageFile::new(bad, b"x".to_vec())];
            let err = SkillPackage::new("x", None, files, identity(), &PackageLimits::default());
            assert!(
                matches!(err, Err(Error::UnsafePath { .. })),
                "{bad:?}: {err:?}"
            );
        }
    }

    #[test]
    fn duplicates_and_limits_are_refused() {
        let files = vec![
            PackageFile::new("a", b"1".to_vec()),
            PackageFile::new("a", b"2".to_vec()),
        ];
        assert!(matches!(
            SkillPackage::new("x", None, files, identity(), &PackageLimits::default()),
            Err(Error::UnsafePath { .. })
        ));
        let limits = PackageLimits {
            max_files: 1,
            ..PackageLimits::default()
        };
        let files = vec![
            PackageFile::new("a", b"1".to_vec()),
            PackageFile::new("b", b"2".to_vec()),
        ];
        assert!(matches!(
            SkillPackage::new("x", None, files, identity(), &limits),
            Err(Error::TooLarge { .. })
        ));
        let limits = PackageLimits {
            max_total_bytes: 3,
            ..PackageLimits::default()
        };
        let files = vec![
            PackageFile::new("a", b"12".to_vec()),
            PackageFile::new("b", b"34".to_vec()),
        ];
        assert!(matches!(
            SkillPackage::new("x", None, files, identity(), &limits),
            Err(Error::TooLarge { .. })
        ));
    }

    #[test]
    fn files_are_sorted_and_found() {
        let files = vec![
            PackageFile::new("z", b"1".to_vec()),
            PackageFile::new("SKILL.md", b"2".to_vec()),
            PackageFile::new("a/b", b"3".to_vec()),
        ];
        let p = SkillPackage::new("x", None, files, identity(), &PackageLimits::default()).unwrap();
        let paths: Vec<&str> = p.files().iter().map(|f| f.path.as_str()).collect();
        assert_eq!(paths, ["SKILL.md", "a/b", "z"]);
        assert_eq!(p.file("a/b").unwrap().bytes, b"3");
        assert!(p.file("nope").is_none());
    }

    #[test]
    fn versions_sort_semver_first() {
        let sorted = sort_versions(vec![
            "v1.10.0".into(),
            "1.2.0".into(),
            "main".into(),
            "1.2.0".into(),
            "0.9.0-beta.1".into(),
            "0.9.0".into(),
        ]);
        assert_eq!(
            sorted,
            ["0.9.0-beta.1", "0.9.0", "1.2.0", "v1.10.0", "main"]
        );
    }
}
