//! Publishing: an installed version exported as a portable document, with its digest and
//! the publisher's identity, in one JSON bundle another installation can verify and install.
//!
//! Threat: a bundle altered after publication (content changed, files added or dropped)
//! while keeping its announced digest; a bundle too large to parse. Guarantee:
//! [`PublishedPackage::from_json`] caps the input, refuses unknown fields and formats,
//! validates the embedded document with `skills-catalog`'s portable rules, and recomputes
//! the package digest from the embedded files — a bundle whose files do not give its
//! digest is refused. The publisher is a claim, not a signature: it says who published,
//! and the digest (compared with one obtained from the publisher out of band, through
//! [`InstallRequest::expect_digest`](crate::InstallRequest::expect_digest)) says what.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use skills_catalog::portable::{
    ExportMetadata, FORMAT_VERSION, PortableFile, PortableSkill, PortableSkillBody,
};
use skills_core::SKILL_MD;
use skills_store_traits::{StoreLimits, TenantId};

use crate::Installer;
use crate::digest::{file_digest, package_digest};
use crate::error::{Error, Result, shown};
use crate::package::{PackageFile, PackageLimits, SkillPackage, SourceIdentity, SourceKind};

/// The bundle format's name and version.
pub const PUBLISHED_FORMAT: &str = "skills-install.published.v1";

/// The largest bundle [`PublishedPackage::from_json`] reads (16 MiB).
pub const MAX_BUNDLE_BYTES: usize = 16 * 1024 * 1024;

/// A published version: the portable document, its digest and its publisher.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[non_exhaustive]
pub struct PublishedPackage {
    /// Always [`PUBLISHED_FORMAT`].
    pub format: String,
    /// The package (and skill) name.
    pub name: String,
    /// The version published.
    pub version: String,
    /// The package digest of the document's files (`SKILL.md` and every file).
    pub digest: String,
    /// Who published it.
    pub publisher: String,
    /// `sha256:` digest per file path.
    pub file_digests: BTreeMap<String, String>,
    /// The portable document (format version 2).
    pub document: PortableSkill,
}

/// The files of a portable document, `SKILL.md` first.
fn document_files(document: &PortableSkill) -> Vec<PackageFile> {
    let body = &document.skill;
    let mut files = vec![PackageFile::new(SKILL_MD, body.content.as_bytes().to_vec())];
    files.extend(
        body.files
            .iter()
            .map(|f| PackageFile::new(f.path.clone(), f.content.as_bytes().to_vec())),
    );
    files
}

impl PublishedPackage {
    /// Pretty JSON with a trailing newline; the same bundle always gives the same bytes.
    pub fn to_json(&self) -> Result<String> {
        let mut text = serde_json::to_string_pretty(self)
            .map_err(|e| Error::malformed("published package", e.to_string()))?;
        text.push('\n');
        Ok(text)
    }

    /// Reads and verifies a bundle: size, format, the document's portable rules, and the
    /// digest recomputed from its files.
    ///
    /// ```
    /// use skills_install::publish::PublishedPackage;
    ///
    /// let err = PublishedPackage::from_json(br#"{"format": "other"}"#).unwrap_err();
    /// assert_eq!(err.kind(), "malformed");
    /// ```
    pub fn from_json(bytes: &[u8]) -> Result<Self> {
        if bytes.len() > MAX_BUNDLE_BYTES {
            return Err(Error::TooLarge {
                what: format!("the published package ({} bytes)", bytes.len()),
                limit: MAX_BUNDLE_BYTES as u64,
            });
        }
        let bundle: PublishedPackage = serde_json::from_slice(bytes)
            .map_err(|e| Error::malformed("published package", e.to_string()))?;
        bundle.verify()?;
        Ok(bundle)
    }

    /// Checks the format, the document's portable rules and every digest.
    pub fn verify(&self) -> Result<()> {
        if self.format != PUBLISHED_FORMAT {
            return Err(Error::malformed(
                "published package",
                format!("format `{}` is not {PUBLISHED_FORMAT}", shown(&self.format)),
            ));
        }
        skills_catalog::portable::to_new_skill(&self.document, &StoreLimits::default()).map_err(
            |source| Error::Portable {
                origin: format!("published package `{}`", shown(&self.name)),
                source,
            },
        )?;
        let files = document_files(&self.document);
        let actual = package_digest(&files);
        if actual != self.digest {
            return Err(Error::IntegrityMismatch {
                what: format!("published package `{}`", shown(&self.name)),
                expected: shown(&self.digest),
                actual,
            });
        }
        let per_file: BTreeMap<String, String> = files
            .iter()
            .map(|f| (f.path.clone(), file_digest(&f.bytes)))
            .collect();
        if per_file != self.file_digests {
            return Err(Error::IntegrityMismatch {
                what: format!("the file digests of `{}`", shown(&self.name)),
                expected: "the digest of every file".to_owned(),
                actual: "a different set".to_owned(),
            });
        }
        Ok(())
    }

    /// The bundle as a package to install (source kind archive, trust path
    /// `archive/<name>`): pass it to [`Installer::install_package`] with the digest the
    /// publisher announced.
    pub fn to_package(&self) -> Result<SkillPackage> {
        self.verify()?;
        let identity = SourceIdentity::new(
            SourceKind::Archive,
            format!("{}@{}", self.name, self.version),
            format!("archive/{}", self.name),
        )
        .with_revision(self.digest.clone());
        let package = SkillPackage::new(
            self.name.clone(),
            Some(self.version.clone()),
            document_files(&self.document),
            identity,
            &PackageLimits::default(),
        )?;
        Ok(package.in_directory(self.name.clone()))
    }
}

impl Installer {
    /// Exports `version` (or the current version) of the package `name` for publishing,
    /// naming `publisher`. The stored content must still give the stored digest.
    pub async fn publish(
        &self,
        tenant: &TenantId,
        name: &str,
        version: Option<&str>,
        publisher: &str,
    ) -> Result<PublishedPackage> {
        let package = self.package(tenant, name).await?;
        let wanted = version.unwrap_or(&package.current_version);
        let stored = self
            .packages
            .get_version(tenant, &package.id, wanted)
            .await
            .map_err(|e| Error::store("reading the version", e))?
            .ok_or_else(|| Error::NotFound {
                what: format!("version {} of `{}`", shown(wanted), package.name),
            })?;
        let mut content = None;
        let mut files = Vec::new();
        let mut digests = BTreeMap::new();
        let mut package_files = Vec::new();
        for file in &stored.files {
            digests.insert(file.path.clone(), file_digest(file.content.as_bytes()));
            package_files.push(PackageFile::new(
                file.path.clone(),
                file.content.as_bytes().to_vec(),
            ));
            if file.path == SKILL_MD {
                content = Some(file.content.clone());
            } else {
                files.push(PortableFile {
                    content_type: Some(skills_core::files::content_type_for(&file.path).to_owned()),
                    path: file.path.clone(),
                    content: file.content.clone(),
                });
            }
        }
        files.sort_by(|a, b| a.path.as_bytes().cmp(b.path.as_bytes()));
        let digest = package_digest(&package_files);
        if digest != stored.digest {
            return Err(Error::IntegrityMismatch {
                what: format!("stored version {} of `{}`", stored.version, package.name),
                expected: stored.digest,
                actual: digest,
            });
        }
        let content = content.ok_or_else(|| Error::NotFound {
            what: format!(
                "SKILL.md of version {} of `{}`",
                stored.version, package.name
            ),
        })?;
        let description = skills_core::SkillMd::parse_str(
            &content,
            None,
            &skills_core::ParseOptions::for_profile(skills_core::Profile::Lenient),
        )
        .document
        .map(|d| d.frontmatter.description)
        .filter(|d| !d.is_empty());
        let document = PortableSkill {
            format_version: FORMAT_VERSION,
            skill: PortableSkillBody {
                name: package.name.clone(),
                slug: package.name.clone(),
                description,
                category: None,
                tags: Vec::new(),
                version: Some(stored.version.clone()),
                requires_tools: Vec::new(),
                content,
                files,
            },
            metadata: ExportMetadata {
                exported_at: None,
                exported_from: Some("skills-install".to_owned()),
                author: Some(publisher.to_owned()),
            },
        };
        Ok(PublishedPackage {
            format: PUBLISHED_FORMAT.to_owned(),
            name: package.name,
            version: stored.version,
            digest,
            publisher: publisher.to_owned(),
            file_digests: digests,
            document,
        })
    }
}
