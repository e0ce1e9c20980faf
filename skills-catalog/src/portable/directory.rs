//! Reading a skill directory from disk into a portable document ("import from directory",
//! seed 002 section 9.5), and the directory reader plugin contributions share.
//!
//! Threat: a directory handed to us may hold symlinks leading out of it, special files, or
//! files too large to be a skill. Guarantee: only regular files are read, symlinks anywhere
//! below the directory are refused, hidden entries are skipped, and sizes, entry counts and
//! depth are capped before reading.

use std::fs;
use std::path::Path;

use skills_store_traits::{NewSkillFile, StoreLimits};

use super::{PortableFile, PortableSkill};
use crate::error::{Error, Result};

/// Packages the skill directory `dir` (its `SKILL.md` and every regular, non-hidden file
/// below it) as a portable document, validated; nothing is written.
///
/// ```
/// let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../examples/skills/pdf-tools");
/// let document = skills_catalog::portable::package_dir(dir.as_ref(), &Default::default())?;
/// assert_eq!(document.skill.slug, "pdf-tools");
/// assert!(document.skill.files.iter().any(|f| f.path == "scripts/extract_text.py"));
/// # Ok::<(), skills_catalog::Error>(())
/// ```
pub fn package_dir(dir: &Path, limits: &StoreLimits) -> Result<PortableSkill> {
    let meta = fs::symlink_metadata(dir).map_err(|e| Error::io("inspect", dir, e))?;
    if !meta.is_dir() {
        return Err(Error::UnsafePath {
            path: dir.to_path_buf(),
            reason: "not a directory (symlinks are not followed)",
        });
    }
    let (content, files) = read_skill_dir(dir, limits)?;
    let files = files
        .into_iter()
        .map(|f| PortableFile {
            content_type: Some(skills_core::files::content_type_for(&f.path).to_owned()),
            path: f.path,
            content: f.content,
        })
        .collect();
    let dir_name = dir.file_name().and_then(|n| n.to_str()).map(str::to_owned);
    super::from_parts(content, files, dir_name, limits)
}

pub(crate) fn read_text(path: &Path, limits: &StoreLimits) -> Result<String> {
    let meta = fs::symlink_metadata(path).map_err(|e| Error::io("inspect", path, e))?;
    if !meta.is_file() {
        return Err(Error::UnsafePath {
            path: path.to_path_buf(),
            reason: "not a regular file",
        });
    }
    if meta.len() > limits.max_skill_bytes {
        return Err(Error::TooLarge {
            what: format!("`{}`", path.display()),
            limit: limits.max_skill_bytes,
        });
    }
    let bytes = fs::read(path).map_err(|e| Error::io("read", path, e))?;
    String::from_utf8(bytes).map_err(|_| {
        Error::invalid(
            path.display().to_string(),
            skills_store_traits::Violation::Binary,
        )
    })
}

/// Reads `SKILL.md` and every regular file under a skill directory; symlinks and special
/// files are refused, hidden entries (`.git`, `.DS_Store`) skipped.
pub(crate) fn read_skill_dir(
    dir: &Path,
    limits: &StoreLimits,
) -> Result<(String, Vec<NewSkillFile>)> {
    let content = read_text(&dir.join(skills_core::SKILL_MD), limits)?;
    let mut files = Vec::new();
    let mut stack = vec![(dir.to_path_buf(), String::new(), 0usize)];
    let mut seen = 0usize;
    while let Some((path, prefix, depth)) = stack.pop() {
        let reader = fs::read_dir(&path).map_err(|e| Error::io("list", &path, e))?;
        for entry in reader {
            let entry = entry.map_err(|e| Error::io("list", &path, e))?;
            seen += 1;
            if seen > 2000 {
                return Err(Error::TooLarge {
                    what: format!("the entries under `{}`", dir.display()),
                    limit: 2000,
                });
            }
            let Ok(name) = entry.file_name().into_string() else {
                return Err(Error::UnsafePath {
                    path: entry.path(),
                    reason: "the name is not UTF-8",
                });
            };
            if name.starts_with('.') {
                continue;
            }
            let relative = if prefix.is_empty() {
                name
            } else {
                format!("{prefix}/{name}")
            };
            let kind = entry
                .file_type()
                .map_err(|e| Error::io("inspect", entry.path(), e))?;
            if kind.is_symlink() {
                return Err(Error::UnsafePath {
                    path: entry.path(),
                    reason: "symlinks in plugin skill directories are refused",
                });
            } else if kind.is_dir() {
                if depth >= 8 {
                    return Err(Error::TooLarge {
                        what: format!("the depth of `{}`", entry.path().display()),
                        limit: 8,
                    });
                }
                stack.push((entry.path(), relative, depth + 1));
            } else if kind.is_file() {
                if relative == skills_core::SKILL_MD {
                    continue;
                }
                let text = read_text(&entry.path(), limits)?;
                files.push(NewSkillFile::new(relative, text));
            } else {
                return Err(Error::UnsafePath {
                    path: entry.path(),
                    reason: "not a regular file or directory",
                });
            }
        }
    }
    files.sort_by(|a, b| a.path.as_bytes().cmp(b.path.as_bytes()));
    Ok((content, files))
}
