//! A directory tree of skills on the local filesystem: `<root>/<name>/SKILL.md`.
//!
//! Threat: a locator that climbs out of the root (`../../home`), a skill directory reached
//! through a symlink, symlinks or special files inside a skill. Guarantee: locators are
//! relative paths under the root checked by [`check_package_path`], no component of the
//! way to the skill may be a symlink, and the skill itself is read by `skills-catalog`'s
//! `package_dir`, which reads regular files only and refuses any symlink below it.

use std::fs;
use std::path::{Path, PathBuf};

use async_trait::async_trait;
use skills_store_traits::StoreLimits;

use super::{SkillSource, declared_version, describe, matches_query};
use crate::error::{Error, Result, shown};
use crate::package::{
    PackageLimits, SkillPackage, SkillRef, SourceIdentity, SourceKind, check_package_path,
};

/// Skills in the directories directly under a root.
///
/// ```
/// # futures::executor::block_on(async {
/// use skills_install::{LocalSource, SkillSource};
///
/// let root = tempfile::tempdir()?;
/// std::fs::create_dir(root.path().join("hello"))?;
/// std::fs::write(root.path().join("hello/SKILL.md"),
///     "---\nname: hello\ndescription: Greets people.\nmetadata:\n  version: 1.0.0\n---\nSay hi.\n")?;
/// let source = LocalSource::new(root.path());
/// let found = source.search("greets").await?;
/// assert_eq!(found[0].locator, "hello");
/// let package = source.fetch("hello", None).await?;
/// assert_eq!(package.version(), Some("1.0.0"));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// # }).unwrap();
/// ```
#[derive(Debug, Clone)]
pub struct LocalSource {
    root: PathBuf,
    limits: PackageLimits,
    store_limits: StoreLimits,
}

impl LocalSource {
    /// Skills under `root`, default limits.
    pub fn new(root: impl Into<PathBuf>) -> Self {
        LocalSource {
            root: root.into(),
            limits: PackageLimits::default(),
            store_limits: StoreLimits::default(),
        }
    }

    /// Other limits.
    #[must_use]
    pub fn with_limits(mut self, limits: PackageLimits) -> Self {
        self.limits = limits;
        self
    }

    fn io(action: &'static str, path: &Path, source: std::io::Error) -> Error {
        Error::Io {
            action,
            path: path.display().to_string(),
            source,
        }
    }

    /// The skill directory for `locator`, refusing unsafe locators and symlinks on the way.
    fn skill_dir(&self, locator: &str) -> Result<PathBuf> {
        check_package_path(locator).map_err(|reason| Error::UnsafePath {
            path: shown(locator),
            origin: format!("local source `{}`", self.root.display()),
            reason,
        })?;
        let mut path = self.root.clone();
        for part in locator.split('/') {
            path.push(part);
            match fs::symlink_metadata(&path) {
                Ok(meta) if meta.file_type().is_symlink() => {
                    return Err(Error::UnsupportedEntry {
                        path: shown(locator),
                        origin: format!("local source `{}`", self.root.display()),
                        kind: "symlink".to_owned(),
                    });
                }
                Ok(_) => {}
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                    return Err(Error::NotFound {
                        what: format!("skill `{}`", shown(locator)),
                    });
                }
                Err(e) => return Err(Self::io("inspect", &path, e)),
            }
        }
        Ok(path)
    }

    /// Reads a skill's SKILL.md and skill.json (when regular files) for listing.
    fn entry_bytes(dir: &Path, limit: u64) -> (Option<Vec<u8>>, Option<Vec<u8>>) {
        let read = |name: &str| {
            let path = dir.join(name);
            let meta = fs::symlink_metadata(&path).ok()?;
            (meta.is_file() && meta.len() <= limit)
                .then(|| fs::read(&path).ok())
                .flatten()
        };
        (read(skills_core::SKILL_MD), read(skills_core::SKILL_JSON))
    }
}

#[async_trait]
impl SkillSource for LocalSource {
    fn kind(&self) -> SourceKind {
        SourceKind::Local
    }

    async fn search(&self, query: &str) -> Result<Vec<SkillRef>> {
        let reader = fs::read_dir(&self.root).map_err(|e| Self::io("list", &self.root, e))?;
        let mut names = Vec::new();
        for (seen, entry) in reader.enumerate() {
            if seen >= self.limits.max_files.saturating_mul(4) {
                return Err(Error::TooLarge {
                    what: format!("the entries under `{}`", self.root.display()),
                    limit: self.limits.max_files.saturating_mul(4) as u64,
                });
            }
            let entry = entry.map_err(|e| Self::io("list", &self.root, e))?;
            let is_dir = entry.file_type().is_ok_and(|t| t.is_dir());
            if let (true, Ok(name)) = (is_dir, entry.file_name().into_string())
                && !name.starts_with('.')
                && check_package_path(&name).is_ok()
            {
                names.push(name);
            }
        }
        names.sort();
        let mut found = Vec::new();
        for name in names {
            let dir = self.root.join(&name);
            let (Some(skill_md), skill_json) = Self::entry_bytes(&dir, self.limits.max_file_bytes)
            else {
                continue;
            };
            let (skill_name, description) = describe(&skill_md);
            let skill_name = skill_name.unwrap_or_else(|| name.clone());
            if !matches_query(query, &skill_name, description.as_deref()) {
                continue;
            }
            let mut reference = SkillRef::new(SourceKind::Local, name, skill_name);
            reference.description = description;
            reference.version = declared_version(&skill_md, skill_json.as_deref());
            found.push(reference);
            if found.len() >= self.limits.max_search_results {
                break;
            }
        }
        Ok(found)
    }

    async fn fetch(&self, locator: &str, version: Option<&str>) -> Result<SkillPackage> {
        let dir = self.skill_dir(locator)?;
        let document =
            skills_catalog::portable::package_dir(&dir, &self.store_limits).map_err(|source| {
                Error::Portable {
                    origin: format!("`{}`", dir.display()),
                    source,
                }
            })?;
        let skill_json = document
            .skill
            .files
            .iter()
            .find(|f| f.path == skills_core::SKILL_JSON)
            .map(|f| f.content.as_bytes());
        let declared = declared_version(document.skill.content.as_bytes(), skill_json);
        if let Some(wanted) = version
            && declared.as_deref() != Some(wanted)
        {
            return Err(Error::NotFound {
                what: format!(
                    "version {} of `{}` (the directory holds {})",
                    shown(wanted),
                    shown(locator),
                    declared.as_deref().unwrap_or("no declared version")
                ),
            });
        }
        let mut document = document;
        document.skill.version = declared;
        let identity = SourceIdentity::new(SourceKind::Local, locator, format!("local/{locator}"));
        let directory = locator.rsplit('/').next().unwrap_or(locator).to_owned();
        Ok(SkillPackage::from_portable(&document, identity, &self.limits)?.in_directory(directory))
    }

    async fn versions(&self, locator: &str) -> Result<Vec<String>> {
        let dir = self.skill_dir(locator)?;
        let (skill_md, skill_json) = Self::entry_bytes(&dir, self.limits.max_file_bytes);
        let Some(skill_md) = skill_md else {
            return Err(Error::NotFound {
                what: format!("skill `{}`", shown(locator)),
            });
        };
        Ok(declared_version(&skill_md, skill_json.as_deref())
            .into_iter()
            .collect())
    }
}
