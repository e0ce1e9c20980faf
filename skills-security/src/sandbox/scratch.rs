//! The run's scratch directory: made fresh for each run beneath the host's scratch root,
//! acted on only through the descriptor the library opened when it made it.
//!
//! Threat: anyone who can write to a shared temporary directory planting a symlink (or a
//! directory of their own) at the name the next run will use, so that the library hands a
//! root-owned directory to the sandbox user, or grants a script write access to it, or
//! removes something else afterwards. Guarantee: the name is unpredictable (128 random
//! bits); the directory is made with `mkdirat` (which fails on anything already there,
//! symlinks included) and opened with `O_NOFOLLOW | O_DIRECTORY` beneath the root's
//! descriptor; its mode is set through that descriptor to 0700; nothing is ever chowned,
//! granted, mounted on or removed by a resolved path. Removal walks beneath the
//! descriptor without following symlinks.

use std::ffi::{CStr, CString};
use std::fs::File;
use std::io::{Read, Write};
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::path::{Path, PathBuf};

use nix::dir::{Dir, Type};
use nix::fcntl::{OFlag, openat};
use nix::sys::stat::{Mode, fchmod, mkdirat};
use nix::unistd::{UnlinkatFlags, unlinkat};

/// Deepest directory nesting copied or removed (a script's tree deeper than this is left).
const MAX_DEPTH: usize = 64;

/// A run directory made by this library.
#[derive(Debug)]
pub(crate) struct RunDir {
    parent: OwnedFd,
    name: CString,
    dir: OwnedFd,
    path: PathBuf,
    keep: bool,
}

fn dir_flags() -> OFlag {
    OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC
}

impl RunDir {
    /// Makes a fresh directory beneath `root` (see the module docs).
    pub fn create(root: &Path) -> Result<RunDir, String> {
        let root = root
            .canonicalize()
            .map_err(|e| format!("the scratch root {}: {e}", root.display()))?;
        let parent = nix::fcntl::open(&root, dir_flags(), Mode::empty())
            .map_err(|e| format!("the scratch root {}: {e}", root.display()))?;
        for _ in 0..8 {
            let name = format!("skills-run-{}", uuid::Uuid::new_v4().simple());
            match mkdirat(&parent, name.as_str(), Mode::S_IRWXU) {
                Ok(()) => {}
                Err(nix::errno::Errno::EEXIST) => continue,
                Err(e) => return Err(format!("cannot make a scratch directory: {e}")),
            }
            let dir = openat(&parent, name.as_str(), dir_flags(), Mode::empty())
                .map_err(|e| format!("cannot open the new scratch directory: {e}"))?;
            fchmod(&dir, Mode::S_IRWXU)
                .map_err(|e| format!("cannot set the scratch directory's mode: {e}"))?;
            let name = CString::new(name).map_err(|e| e.to_string())?;
            let path = root.join(name.to_string_lossy().as_ref());
            return Ok(RunDir {
                parent,
                name,
                dir,
                path,
                keep: false,
            });
        }
        Err("cannot make a scratch directory: every random name was taken".into())
    }

    /// A new descriptor of the directory (above the standard stream numbers).
    pub fn fd_clone(&self) -> Result<OwnedFd, String> {
        self.dir
            .try_clone()
            .map_err(|e| format!("cannot duplicate the scratch directory's descriptor: {e}"))
    }

    /// Its path (the reopen check and the run's paths; never used to act on it).
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Where the script's scratch directory (`HOME`) is: `home/` inside.
    pub fn home_path(&self) -> PathBuf {
        self.path.join("home")
    }

    /// Makes `home/` in the directory itself (runs without a private view) and opens it.
    pub fn make_home(&self) -> Result<OwnedFd, String> {
        mkdirat(&self.dir, c"home", Mode::S_IRWXU)
            .and_then(|()| openat(&self.dir, c"home", dir_flags(), Mode::empty()))
            .map_err(|e| format!("cannot make the scratch directory: {e}"))
    }

    /// Keeps `home/` after the run, with the files copied from `source` (the run's tmpfs
    /// `home/`) when given: regular files and directories only, at most `max_bytes`.
    pub fn keep(&mut self, source: Option<BorrowedFd<'_>>, max_bytes: u64) -> PathBuf {
        self.keep = true;
        if let Some(source) = source {
            let made = match mkdirat(&self.dir, c"home", Mode::S_IRWXU) {
                Ok(()) | Err(nix::errno::Errno::EEXIST) => {
                    openat(&self.dir, c"home", dir_flags(), Mode::empty())
                }
                Err(e) => Err(e),
            };
            if let Ok(home) = made {
                let mut budget = max_bytes;
                let _ = copy_tree(source, home.as_fd(), &mut budget, 0);
            }
        }
        self.home_path()
    }
}

impl Drop for RunDir {
    fn drop(&mut self) {
        if self.keep {
            return;
        }
        remove_tree(self.dir.as_fd(), 0);
        let _ = unlinkat(&self.parent, self.name.as_c_str(), UnlinkatFlags::RemoveDir);
    }
}

fn entries(dir: BorrowedFd<'_>) -> Vec<(CString, Option<Type>)> {
    let Ok(fd) = openat(dir, c".", dir_flags(), Mode::empty()) else {
        return Vec::new();
    };
    let Ok(mut listing) = Dir::from_fd(fd) else {
        return Vec::new();
    };
    listing
        .iter()
        .flatten()
        .filter(|e| {
            let name = e.file_name().to_bytes();
            name != b"." && name != b".."
        })
        .map(|e| (e.file_name().to_owned(), e.file_type()))
        .collect()
}

fn kind(dir: BorrowedFd<'_>, name: &CStr, reported: Option<Type>) -> Option<Type> {
    reported.or_else(|| {
        let stat =
            nix::sys::stat::fstatat(dir, name, nix::fcntl::AtFlags::AT_SYMLINK_NOFOLLOW).ok()?;
        Some(match stat.st_mode & libc::S_IFMT {
            libc::S_IFDIR => Type::Directory,
            libc::S_IFREG => Type::File,
            _ => Type::Symlink,
        })
    })
}

/// Removes everything beneath `dir` without following symlinks.
fn remove_tree(dir: BorrowedFd<'_>, depth: usize) {
    for (name, reported) in entries(dir) {
        if kind(dir, &name, reported) == Some(Type::Directory) && depth < MAX_DEPTH {
            if let Ok(child) = openat(dir, name.as_c_str(), dir_flags(), Mode::empty()) {
                // A read-only directory (the staged `inputs/`, or one a script made 0500)
                // would keep its entries from its owner; through the descriptor, so nothing
                // else is touched.
                let _ = fchmod(child.as_fd(), Mode::S_IRWXU);
                remove_tree(child.as_fd(), depth + 1);
            }
            let _ = unlinkat(dir, name.as_c_str(), UnlinkatFlags::RemoveDir);
        } else {
            let _ = unlinkat(dir, name.as_c_str(), UnlinkatFlags::NoRemoveDir);
        }
    }
}

/// Copies regular files and directories from `source` into `target`.
fn copy_tree(
    source: BorrowedFd<'_>,
    target: BorrowedFd<'_>,
    budget: &mut u64,
    depth: usize,
) -> nix::Result<()> {
    for (name, reported) in entries(source) {
        match kind(source, &name, reported) {
            Some(Type::Directory) if depth < MAX_DEPTH => {
                let from = openat(source, name.as_c_str(), dir_flags(), Mode::empty())?;
                mkdirat(target, name.as_c_str(), Mode::S_IRWXU)?;
                let to = openat(target, name.as_c_str(), dir_flags(), Mode::empty())?;
                copy_tree(from.as_fd(), to.as_fd(), budget, depth + 1)?;
            }
            Some(Type::File) => {
                let from = openat(
                    source,
                    name.as_c_str(),
                    OFlag::O_RDONLY | OFlag::O_NOFOLLOW | OFlag::O_NONBLOCK | OFlag::O_CLOEXEC,
                    Mode::empty(),
                )?;
                let from = File::from(from);
                if !from.metadata().is_ok_and(|m| m.is_file()) {
                    continue;
                }
                let to = openat(
                    target,
                    name.as_c_str(),
                    OFlag::O_WRONLY
                        | OFlag::O_CREAT
                        | OFlag::O_EXCL
                        | OFlag::O_NOFOLLOW
                        | OFlag::O_CLOEXEC,
                    Mode::S_IRUSR | Mode::S_IWUSR,
                )?;
                let mut to = File::from(to);
                let copied = std::io::copy(&mut from.take(*budget), &mut to).unwrap_or(0);
                let _ = to.flush();
                *budget = budget.saturating_sub(copied);
            }
            _ => {}
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_run_gets_a_fresh_private_directory_and_planted_names_are_never_used()
    -> Result<(), Box<dyn std::error::Error>> {
        use std::os::unix::fs::PermissionsExt;
        let root = tempfile::tempdir()?;
        let victim = tempfile::tempdir()?;
        std::fs::write(victim.path().join("keep.txt"), "victim")?;
        std::os::unix::fs::symlink(victim.path(), root.path().join("skills-run-0"))?;
        let a = RunDir::create(root.path())?;
        let b = RunDir::create(root.path())?;
        assert_ne!(a.path(), b.path());
        let meta = std::fs::symlink_metadata(a.path())?;
        assert!(meta.is_dir());
        assert_eq!(meta.permissions().mode() & 0o777, 0o700);
        std::fs::write(a.path().join("f"), "x")?;
        std::fs::create_dir(a.path().join("d"))?;
        std::os::unix::fs::symlink(victim.path(), a.path().join("d/escape"))?;
        let path = a.path().to_path_buf();
        drop(a);
        assert!(!path.exists());
        assert_eq!(
            std::fs::read_to_string(victim.path().join("keep.txt"))?,
            "victim"
        );
        drop(b);
        Ok(())
    }

    #[test]
    fn kept_copies_take_files_and_directories_but_not_links()
    -> Result<(), Box<dyn std::error::Error>> {
        let root = tempfile::tempdir()?;
        let source = tempfile::tempdir()?;
        std::fs::write(source.path().join("out.txt"), "result")?;
        std::fs::create_dir(source.path().join("sub"))?;
        std::fs::write(source.path().join("sub/big"), vec![b'x'; 4096])?;
        std::os::unix::fs::symlink("/etc/passwd", source.path().join("link"))?;
        let mut run = RunDir::create(root.path())?;
        let from = nix::fcntl::open(source.path(), dir_flags(), Mode::empty())?;
        let kept = run.keep(Some(from.as_fd()), 100);
        assert!(kept.ends_with("home"));
        drop(run);
        let small = std::fs::read(kept.join("out.txt"))?;
        let big = std::fs::read(kept.join("sub/big"))?;
        assert!(small.is_empty() || small == b"result");
        assert_eq!(small.len() + big.len(), 100, "the budget bounds the copy");
        assert!(std::fs::symlink_metadata(kept.join("link")).is_err());
        Ok(())
    }
}
