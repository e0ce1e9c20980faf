//! Skill directories on a local filesystem, written and checked without following symlinks.
//!
//! Threat: whoever can write inside the target directory (an agent in its sandbox, another
//! process on the host) plants a symlink so that our write or delete lands outside it, or
//! a crash leaves a half-written skill that looks complete. Guarantee: every entry is
//! examined with `lstat` semantics and never followed; a skill directory is replaced by
//! writing a fresh temporary directory (files opened `O_CREAT | O_EXCL | O_NOFOLLOW`) and
//! renaming it into place, so readers see the old or the new skill, never a mix; deletes
//! remove a symlink itself, never its target. The root itself must be a real directory.
//! Concurrent writers inside the root racing our rename are out of scope: the root is the
//! host's, and a sandboxed agent only sees it read-write through its own mount.

use std::collections::BTreeMap;
use std::fs;
use std::io::{Read, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use crate::error::{Error, Result};

/// Prefix of the temporary directories a replacement writes; leftovers of a crash carry it.
pub const TEMP_PREFIX: &str = ".tmp-";
/// Prefix of a directory being replaced, between the two renames.
pub const OLD_PREFIX: &str = ".old-";

/// The most files examined in one skill directory before it counts as foreign.
const MAX_SNAPSHOT_ENTRIES: usize = 4096;
/// Files larger than this are not hashed: no stored skill file can be that large.
const MAX_SNAPSHOT_FILE_BYTES: u64 = 4 * 1024 * 1024;

/// What a skill directory holds, for comparing with the records.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct DirSnapshot {
    /// Regular files by `/`-separated relative path, with their SHA-256.
    pub files: BTreeMap<String, String>,
    /// Something other than directories and regular files was found (a symlink, a device,
    /// an oversized file, too many entries, a non-UTF-8 name), or the entry itself is not a
    /// directory: the directory must be rewritten.
    pub foreign: bool,
}

impl DirSnapshot {
    /// Whether the directory holds exactly `expected` (path to SHA-256) and nothing foreign.
    pub fn matches(&self, expected: &BTreeMap<String, String>) -> bool {
        !self.foreign && &self.files == expected
    }
}

/// Checks that `root` is a real directory (not a symlink), creating it when `create` is set
/// and it is missing (its parent must exist).
pub fn ensure_root(root: &Path, create: bool) -> Result<()> {
    match fs::symlink_metadata(root) {
        Ok(meta) if meta.file_type().is_symlink() => Err(Error::UnsafePath {
            path: root.to_path_buf(),
            reason: "the skills directory is a symlink",
        }),
        Ok(meta) if meta.is_dir() => Ok(()),
        Ok(_) => Err(Error::UnsafePath {
            path: root.to_path_buf(),
            reason: "the skills directory is not a directory",
        }),
        Err(err) if err.kind() == std::io::ErrorKind::NotFound && create => {
            fs::create_dir(root).map_err(|e| Error::io("create directory", root, e))
        }
        Err(err) => Err(Error::io("inspect", root, err)),
    }
}

/// The kind of an entry directly under a root.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum EntryKind {
    /// A directory.
    Dir,
    /// A regular file.
    File,
    /// A symbolic link (never followed).
    Symlink,
    /// Anything else.
    Other,
}

/// The entries directly under `root`, sorted by name; names that are not UTF-8 are skipped.
pub fn list(root: &Path) -> Result<Vec<(String, EntryKind)>> {
    let mut entries = Vec::new();
    let reader = fs::read_dir(root).map_err(|e| Error::io("list", root, e))?;
    for entry in reader {
        let entry = entry.map_err(|e| Error::io("list", root, e))?;
        let Ok(name) = entry.file_name().into_string() else {
            continue;
        };
        let file_type = entry
            .file_type()
            .map_err(|e| Error::io("inspect", entry.path(), e))?;
        let kind = if file_type.is_symlink() {
            EntryKind::Symlink
        } else if file_type.is_dir() {
            EntryKind::Dir
        } else if file_type.is_file() {
            EntryKind::File
        } else {
            EntryKind::Other
        };
        entries.push((name, kind));
    }
    entries.sort();
    Ok(entries)
}

/// Checks that `name` is one plain path component we may create under a root.
pub fn check_component(root: &Path, name: &str) -> Result<()> {
    let ok = !name.is_empty()
        && name != "."
        && name != ".."
        && name.len() <= 255
        && !name.contains(['/', '\\', '\0']);
    if ok {
        Ok(())
    } else {
        Err(Error::UnsafePath {
            path: root.join(name),
            reason: "not a single plain path component",
        })
    }
}

/// What `<root>/<name>` holds, or `None` when there is nothing there.
pub fn snapshot(root: &Path, name: &str) -> Result<Option<DirSnapshot>> {
    check_component(root, name)?;
    let dir = root.join(name);
    let meta = match fs::symlink_metadata(&dir) {
        Ok(meta) => meta,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(err) => return Err(Error::io("inspect", dir, err)),
    };
    let mut snap = DirSnapshot::default();
    if !meta.is_dir() || meta.file_type().is_symlink() {
        snap.foreign = true;
        return Ok(Some(snap));
    }
    let mut stack = vec![(dir.clone(), String::new())];
    let mut seen = 0usize;
    while let Some((path, prefix)) = stack.pop() {
        let reader = fs::read_dir(&path).map_err(|e| Error::io("list", &path, e))?;
        for entry in reader {
            let entry = entry.map_err(|e| Error::io("list", &path, e))?;
            seen += 1;
            if seen > MAX_SNAPSHOT_ENTRIES {
                snap.foreign = true;
                return Ok(Some(snap));
            }
            let Ok(file_name) = entry.file_name().into_string() else {
                snap.foreign = true;
                continue;
            };
            let relative = if prefix.is_empty() {
                file_name
            } else {
                format!("{prefix}/{file_name}")
            };
            let file_type = entry
                .file_type()
                .map_err(|e| Error::io("inspect", entry.path(), e))?;
            if file_type.is_dir() {
                stack.push((entry.path(), relative));
            } else if file_type.is_file() {
                match hash_regular(&entry.path())? {
                    Some(sha) => {
                        snap.files.insert(relative, sha);
                    }
                    None => snap.foreign = true,
                }
            } else {
                snap.foreign = true;
            }
        }
    }
    Ok(Some(snap))
}

/// SHA-256 of a regular file opened without following a final symlink; `None` when the file
/// is too large to be a stored skill file or is no longer a regular file.
fn hash_regular(path: &Path) -> Result<Option<String>> {
    let file = fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path);
    let mut file = match file {
        Ok(file) => file,
        Err(err) if err.raw_os_error() == Some(libc::ELOOP) => return Ok(None),
        Err(err) => return Err(Error::io("open", path, err)),
    };
    let meta = file.metadata().map_err(|e| Error::io("inspect", path, e))?;
    if !meta.is_file() || meta.len() > MAX_SNAPSHOT_FILE_BYTES {
        return Ok(None);
    }
    let mut hasher = Sha256::new();
    let mut buffer = [0u8; 16 * 1024];
    loop {
        let read = file
            .read(&mut buffer)
            .map_err(|e| Error::io("read", path, e))?;
        if read == 0 {
            break;
        }
        hasher.update(&buffer[..read]);
    }
    Ok(Some(hex::encode(hasher.finalize())))
}

/// Reads the files `expected` lists (relative path to SHA-256) from `<root>/<name>`, each
/// opened without following a final symlink and checked against its hash: what comes back
/// is exactly what the records say, or an error (a file changed under us, a symlink in its
/// place, a file missing or too large).
pub fn read_checked(
    root: &Path,
    name: &str,
    expected: &BTreeMap<String, String>,
) -> Result<Vec<(String, Vec<u8>)>> {
    check_component(root, name)?;
    let dir = root.join(name);
    let mut out = Vec::with_capacity(expected.len());
    for (relative, sha) in expected {
        skills_core::files::check_relative_path(relative).map_err(|_| Error::UnsafePath {
            path: PathBuf::from(relative),
            reason: "not a safe relative path",
        })?;
        let path = dir.join(relative);
        let mut file = fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
            .open(&path)
            .map_err(|e| Error::io("open", &path, e))?;
        let meta = file
            .metadata()
            .map_err(|e| Error::io("inspect", &path, e))?;
        if !meta.is_file() || meta.len() > MAX_SNAPSHOT_FILE_BYTES {
            return Err(Error::UnsafePath {
                path,
                reason: "not a regular file of a stored skill's size",
            });
        }
        let mut bytes = Vec::with_capacity(usize::try_from(meta.len()).unwrap_or(0));
        (&mut file)
            .take(MAX_SNAPSHOT_FILE_BYTES + 1)
            .read_to_end(&mut bytes)
            .map_err(|e| Error::io("read", &path, e))?;
        if hex::encode(Sha256::digest(&bytes)) != *sha {
            return Err(Error::UnsafePath {
                path,
                reason: "the cached file no longer matches the stored checksum",
            });
        }
        out.push((relative.clone(), bytes));
    }
    Ok(out)
}

/// Replaces `<root>/<name>` with a directory holding exactly `files` (relative path to
/// bytes): written into a fresh temporary directory, then renamed into place.
pub fn replace(root: &Path, name: &str, files: &[(String, Vec<u8>)]) -> Result<()> {
    check_component(root, name)?;
    let suffix = uuid::Uuid::new_v4().simple().to_string();
    let temp = root.join(format!("{TEMP_PREFIX}{name}-{suffix}"));
    fs::create_dir(&temp).map_err(|e| Error::io("create directory", &temp, e))?;
    if let Err(err) = write_all(&temp, files) {
        let _ = fs::remove_dir_all(&temp);
        return Err(err);
    }
    let target = root.join(name);
    let old = root.join(format!("{OLD_PREFIX}{name}-{suffix}"));
    let had_old = match fs::symlink_metadata(&target) {
        Ok(_) => {
            fs::rename(&target, &old).map_err(|e| {
                let _ = fs::remove_dir_all(&temp);
                Error::io("move aside", &target, e)
            })?;
            true
        }
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => false,
        Err(err) => {
            let _ = fs::remove_dir_all(&temp);
            return Err(Error::io("inspect", &target, err));
        }
    };
    if let Err(err) = fs::rename(&temp, &target) {
        if had_old {
            let _ = fs::rename(&old, &target);
        }
        let _ = fs::remove_dir_all(&temp);
        return Err(Error::io("rename into place", &target, err));
    }
    if had_old {
        remove_path(&old)?;
    }
    Ok(())
}

fn write_all(dir: &Path, files: &[(String, Vec<u8>)]) -> Result<()> {
    for (relative, bytes) in files {
        skills_core::files::check_relative_path(relative).map_err(|_| Error::UnsafePath {
            path: PathBuf::from(relative),
            reason: "not a safe relative path",
        })?;
        let path = dir.join(relative);
        if let Some(parent) = path.parent() {
            create_dirs_nofollow(dir, parent)?;
        }
        let mut file = fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .custom_flags(libc::O_NOFOLLOW)
            .open(&path)
            .map_err(|e| Error::io("create file", &path, e))?;
        file.write_all(bytes)
            .map_err(|e| Error::io("write", &path, e))?;
    }
    Ok(())
}

/// Creates the directories from `base` down to `target`, refusing any existing component
/// that is not a real directory.
fn create_dirs_nofollow(base: &Path, target: &Path) -> Result<()> {
    let Ok(relative) = target.strip_prefix(base) else {
        return Err(Error::UnsafePath {
            path: target.to_path_buf(),
            reason: "outside the directory being written",
        });
    };
    let mut current = base.to_path_buf();
    for component in relative.components() {
        current.push(component);
        match fs::symlink_metadata(&current) {
            Ok(meta) if meta.is_dir() && !meta.file_type().is_symlink() => {}
            Ok(_) => {
                return Err(Error::UnsafePath {
                    path: current,
                    reason: "a path component is not a directory",
                });
            }
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => {
                fs::create_dir(&current).map_err(|e| Error::io("create directory", &current, e))?;
            }
            Err(err) => return Err(Error::io("inspect", &current, err)),
        }
    }
    Ok(())
}

/// Removes `<root>/<name>`: a directory with everything under it (symlinks inside are
/// removed, not followed), or a symlink or file itself. `false` when nothing was there.
pub fn remove(root: &Path, name: &str) -> Result<bool> {
    check_component(root, name)?;
    let path = root.join(name);
    match fs::symlink_metadata(&path) {
        Ok(_) => remove_path(&path).map(|()| true),
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => Ok(false),
        Err(err) => Err(Error::io("inspect", path, err)),
    }
}

fn remove_path(path: &Path) -> Result<()> {
    let meta = fs::symlink_metadata(path).map_err(|e| Error::io("inspect", path, e))?;
    if meta.is_dir() && !meta.file_type().is_symlink() {
        // std's remove_dir_all does not follow symlinks (CVE-2022-21658 fix).
        fs::remove_dir_all(path).map_err(|e| Error::io("remove", path, e))
    } else {
        fs::remove_file(path).map_err(|e| Error::io("remove", path, e))
    }
}

/// The expected snapshot of a skill: `SKILL.md` plus its files, path to SHA-256.
pub fn expected_hashes<'a>(
    content_sha256: &str,
    files: impl IntoIterator<Item = (&'a str, &'a str)>,
) -> BTreeMap<String, String> {
    let mut map: BTreeMap<String, String> = files
        .into_iter()
        .map(|(path, sha)| (path.to_owned(), sha.to_owned()))
        .collect();
    map.insert(skills_core::SKILL_MD.to_owned(), content_sha256.to_owned());
    map
}

/// Joins `root` and a name already checked by [`check_component`].
pub fn child(root: &Path, name: &str) -> PathBuf {
    root.join(name)
}
