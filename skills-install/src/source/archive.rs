//! One skill in a portable archive: a format-2 JSON document or a `.tar.gz` of the skill
//! directory.
//!
//! Threat: everything an archive can carry (traversal, links, devices, decompression bombs,
//! binary or oversized content). Guarantee: the bytes go through `skills-catalog`'s
//! portable import — `parse_json` or `archive::from_tar_gz`, which reads entries into
//! memory only, accepts regular files and directories only, checks every path, and caps
//! entries and decompressed bytes — and then through [`SkillPackage::new`]'s rules. This
//! source does not re-implement any of that.

use std::io::Read;
use std::path::Path;

use async_trait::async_trait;
use skills_catalog::portable::{self, ImportOptions, PortableSkill};

use super::{SkillSource, declared_version, describe, matches_query};
use crate::error::{Error, Result, shown};
use crate::package::{PackageLimits, SkillPackage, SkillRef, SourceIdentity, SourceKind};

/// The two archive formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ArchiveFormat {
    /// A portable JSON document (format version 2).
    Json,
    /// A gzip-compressed tar of the skill directory.
    TarGz,
}

impl ArchiveFormat {
    /// Gzip's magic bytes mean a tarball; anything else is read as JSON.
    pub fn sniff(bytes: &[u8]) -> ArchiveFormat {
        if bytes.starts_with(&[0x1f, 0x8b]) {
            ArchiveFormat::TarGz
        } else {
            ArchiveFormat::Json
        }
    }
}

/// A source holding exactly one archived skill.
///
/// ```
/// # futures::executor::block_on(async {
/// use skills_install::{ArchiveSource, SkillSource};
///
/// let json = r#"{"formatVersion": 2, "skill": {"name": "hello", "slug": "hello",
///   "version": "1.0.0", "content": "---\nname: hello\ndescription: Greets.\n---\nHi.\n"}}"#;
/// let source = ArchiveSource::from_bytes("hello.json", json.as_bytes().to_vec());
/// assert_eq!(source.versions("hello").await?, ["1.0.0"]);
/// let package = source.fetch("hello", None).await?;
/// assert_eq!(package.files()[0].path, "SKILL.md");
/// # Ok::<(), skills_install::Error>(())
/// # }).unwrap();
/// ```
#[derive(Debug, Clone)]
pub struct ArchiveSource {
    label: String,
    bytes: Vec<u8>,
    format: ArchiveFormat,
    import: ImportOptions,
    limits: PackageLimits,
}

impl ArchiveSource {
    /// An archive held in memory; `label` names it in errors and identities (a file name).
    pub fn from_bytes(label: impl Into<String>, bytes: Vec<u8>) -> Self {
        ArchiveSource {
            label: label.into(),
            format: ArchiveFormat::sniff(&bytes),
            bytes,
            import: ImportOptions::default(),
            limits: PackageLimits::default(),
        }
    }

    /// Reads an archive file, refusing one larger than the default response limit.
    pub fn open(path: &Path) -> Result<Self> {
        let limit = PackageLimits::default().max_response_bytes;
        let io = |source| Error::Io {
            action: "read",
            path: path.display().to_string(),
            source,
        };
        let file = std::fs::File::open(path).map_err(io)?;
        let mut bytes = Vec::new();
        file.take(limit + 1).read_to_end(&mut bytes).map_err(io)?;
        if bytes.len() as u64 > limit {
            return Err(Error::TooLarge {
                what: format!("`{}`", path.display()),
                limit,
            });
        }
        let label = path.file_name().map_or_else(
            || path.display().to_string(),
            |n| n.to_string_lossy().into_owned(),
        );
        Ok(ArchiveSource::from_bytes(label, bytes))
    }

    /// Other import options (entry and decompressed-size caps, store limits).
    #[must_use]
    pub fn with_import_options(mut self, import: ImportOptions) -> Self {
        self.import = import;
        self
    }

    /// The format detected.
    pub fn format(&self) -> ArchiveFormat {
        self.format
    }

    fn document(&self) -> Result<PortableSkill> {
        let read = match self.format {
            ArchiveFormat::Json => portable::parse_json(&self.bytes, &self.import),
            ArchiveFormat::TarGz => portable::archive::from_tar_gz(&self.bytes, &self.import),
        };
        let mut document = read.map_err(|source| Error::Portable {
            origin: format!("archive `{}`", shown(&self.label)),
            source,
        })?;
        if document.skill.version.is_none() {
            let skill_json = document
                .skill
                .files
                .iter()
                .find(|f| f.path == skills_core::SKILL_JSON)
                .map(|f| f.content.as_bytes());
            document.skill.version =
                declared_version(document.skill.content.as_bytes(), skill_json);
        }
        Ok(document)
    }

    fn checked(&self, locator: &str) -> Result<PortableSkill> {
        let document = self.document()?;
        if locator != document.skill.slug && locator != self.label {
            return Err(Error::NotFound {
                what: format!(
                    "skill `{}` in archive `{}`",
                    shown(locator),
                    shown(&self.label)
                ),
            });
        }
        Ok(document)
    }
}

#[async_trait]
impl SkillSource for ArchiveSource {
    fn kind(&self) -> SourceKind {
        SourceKind::Archive
    }

    async fn search(&self, query: &str) -> Result<Vec<SkillRef>> {
        let document = self.document()?;
        let body = &document.skill;
        let description = body
            .description
            .clone()
            .or_else(|| describe(body.content.as_bytes()).1);
        if !matches_query(query, &body.slug, description.as_deref()) {
            return Ok(Vec::new());
        }
        let mut reference =
            SkillRef::new(SourceKind::Archive, body.slug.clone(), body.name.clone());
        reference.description = description;
        reference.version = body.version.clone();
        Ok(vec![reference])
    }

    async fn fetch(&self, locator: &str, version: Option<&str>) -> Result<SkillPackage> {
        let document = self.checked(locator)?;
        let body = &document.skill;
        if let Some(wanted) = version
            && body.version.as_deref() != Some(wanted)
        {
            return Err(Error::NotFound {
                what: format!(
                    "version {} of `{}` in archive `{}`",
                    shown(wanted),
                    shown(&body.slug),
                    shown(&self.label)
                ),
            });
        }
        let identity = SourceIdentity::new(
            SourceKind::Archive,
            self.label.clone(),
            format!("archive/{}", body.slug),
        );
        let directory = body.slug.clone();
        Ok(SkillPackage::from_portable(&document, identity, &self.limits)?.in_directory(directory))
    }

    async fn versions(&self, locator: &str) -> Result<Vec<String>> {
        Ok(self.checked(locator)?.skill.version.into_iter().collect())
    }
}
