//! Resolving a script before anyone is asked to approve it (design note step 1).
//!
//! Threat: a path that leaves the skill (absolute, `..`, a symlink to `/etc/shadow` or to
//! a host script), a FIFO or device that blocks the reader, a huge file, an interpreter
//! chosen by a hostile shebang, and a file swapped after a person approved it. Guarantee:
//! [`resolve_script`] accepts only a relative path of plain components without control
//! characters, walks it beneath the canonical skill root refusing every symlink (the
//! equivalent of `openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS)`) with one descriptor
//! per component, opens the last component with `O_NOFOLLOW | O_NONBLOCK`, requires a
//! regular file within the size limit, hashes the bytes it read through that descriptor
//! (SHA-256), and picks the interpreter from the extension only. At launch the sandbox opens
//! the script again the same way, hashes what it read, refuses a mismatch, and runs exactly
//! those bytes (a private read-only copy in the run's own tmpfs).

use std::io::Read;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::path::{Component, Path, PathBuf};

use nix::errno::Errno;
use nix::fcntl::{AtFlags, OFlag, openat};
use nix::sys::stat::{Mode, fstatat};

use serde::Serialize;
use sha2::{Digest, Sha256};

/// How a script is run, by extension.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Interpreter {
    /// `.py`: `python3 -I -B` (isolated mode: no user site, no `PYTHON*` variables).
    Python,
    /// `.sh`, `.bash`: `bash --noprofile --norc`.
    Bash,
    /// `.js`, `.mjs`, `.cjs`: `node` (the environment is cleared, so `NODE_OPTIONS` and
    /// `NODE_PATH` cannot add code; `.mjs` runs as an ES module by its extension).
    Node,
}

impl Interpreter {
    /// The interpreter for `path`'s extension, if it has a supported one.
    pub fn for_path(path: &str) -> Option<Interpreter> {
        let ext = path.rsplit_once('.')?.1.to_ascii_lowercase();
        match ext.as_str() {
            "py" => Some(Interpreter::Python),
            "sh" | "bash" => Some(Interpreter::Bash),
            "js" | "mjs" | "cjs" => Some(Interpreter::Node),
            _ => None,
        }
    }

    /// The program and its fixed leading arguments.
    pub fn command(self) -> (&'static str, &'static [&'static str]) {
        match self {
            Interpreter::Python => ("python3", &["-I", "-B"]),
            Interpreter::Bash => ("bash", &["--noprofile", "--norc"]),
            Interpreter::Node => ("node", &[]),
        }
    }

    /// The command line prefix as shown to a person (`python3 -I -B`).
    pub fn display(self) -> String {
        let (program, args) = self.command();
        std::iter::once(program)
            .chain(args.iter().copied())
            .collect::<Vec<_>>()
            .join(" ")
    }
}

/// Why a script was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error, Serialize)]
#[serde(tag = "error", rename_all = "snake_case")]
#[non_exhaustive]
pub enum ScriptError {
    /// Absolute, `..`, empty, or control characters.
    #[error("refused path: {reason}")]
    InvalidPath {
        /// Why.
        reason: String,
    },
    /// A component is a symlink.
    #[error("refused path: `{component}` is a symbolic link")]
    Symlink {
        /// The offending prefix.
        component: String,
    },
    /// No such file.
    #[error("no such script")]
    NotFound,
    /// A directory, FIFO, socket or device.
    #[error("not a regular file")]
    NotRegular,
    /// Over the size limit.
    #[error("the script is {bytes} bytes; the limit is {limit}")]
    TooLarge {
        /// Its size.
        bytes: u64,
        /// The limit.
        limit: u64,
    },
    /// No interpreter for the extension.
    #[error("no interpreter for this extension (only .py, .sh, .bash, .js, .mjs and .cjs run)")]
    UnsupportedInterpreter,
    /// Another I/O failure.
    #[error("unreadable: {0}")]
    Io(String),
}

/// A script ready to be approved and run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ResolvedScript {
    /// The canonical skill root.
    pub skill_root: PathBuf,
    /// The path relative to the root, as checked.
    pub relative: String,
    /// The absolute path (root joined with `relative`; no symlinks on the way).
    pub path: PathBuf,
    /// SHA-256 of the content, hex.
    pub sha256: String,
    /// Size in bytes.
    pub bytes: u64,
    /// Chosen from the extension.
    pub interpreter: Interpreter,
}

/// Checks `relative`'s shape: relative, normal components, no control characters.
pub(crate) fn check_relative(relative: &str) -> Result<Vec<&str>, ScriptError> {
    let invalid = |reason: &str| ScriptError::InvalidPath {
        reason: reason.to_owned(),
    };
    if relative.is_empty() {
        return Err(invalid("empty"));
    }
    if relative.chars().any(char::is_control) {
        return Err(invalid("control characters"));
    }
    if relative.starts_with('/') {
        return Err(invalid("absolute"));
    }
    let relative = relative.strip_prefix("./").unwrap_or(relative);
    let mut parts = Vec::new();
    for component in Path::new(relative).components() {
        match component {
            Component::Normal(part) => {
                parts.push(part.to_str().ok_or_else(|| invalid("not UTF-8"))?);
            }
            Component::CurDir => {}
            Component::ParentDir => return Err(invalid("`..`")),
            Component::RootDir | Component::Prefix(_) => return Err(invalid("absolute")),
        }
    }
    if parts.is_empty() {
        return Err(invalid("empty"));
    }
    Ok(parts)
}

/// A script read once beneath its skill root through one descriptor: the bytes and their
/// hash. Whatever runs is these bytes.
#[derive(Debug)]
pub(crate) struct OpenedScript {
    /// Its content, as read through the one descriptor.
    pub bytes: Vec<u8>,
    /// SHA-256 of `bytes`, hex.
    pub sha256: String,
}

fn io_error(e: nix::errno::Errno) -> ScriptError {
    ScriptError::Io(std::io::Error::from(e).kind().to_string())
}

fn dir_flags() -> OFlag {
    OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC
}

/// Opens the canonical skill root as a directory.
pub(crate) fn open_root(skill_root: &Path) -> Result<(PathBuf, OwnedFd), ScriptError> {
    let root = skill_root
        .canonicalize()
        .map_err(|e| ScriptError::Io(format!("skill root: {}", e.kind())))?;
    let fd = nix::fcntl::open(&root, dir_flags(), Mode::empty())
        .map_err(|e| ScriptError::Io(format!("skill root: {}", std::io::Error::from(e).kind())))?;
    Ok((root, fd))
}

/// Opens `parts` beneath `root` one component at a time, never following a symlink (the
/// equivalent of `openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS)`), requires a regular
/// file of at most `max_bytes`, and reads and hashes it through that one descriptor.
pub(crate) fn open_beneath(
    root: BorrowedFd<'_>,
    parts: &[&str],
    max_bytes: u64,
) -> Result<OpenedScript, ScriptError> {
    let Some((last, dirs)) = parts.split_last() else {
        return Err(ScriptError::InvalidPath {
            reason: "empty".into(),
        });
    };
    let symlink = |i: usize| ScriptError::Symlink {
        component: parts[..=i].join("/"),
    };
    let mut current: Option<OwnedFd> = None;
    for (i, part) in dirs.iter().enumerate() {
        let dir = current.as_ref().map_or(root, AsFd::as_fd);
        let next = match openat(dir, *part, dir_flags(), Mode::empty()) {
            Ok(fd) => fd,
            Err(Errno::ELOOP) => return Err(symlink(i)),
            Err(Errno::ENOTDIR) => {
                let is_link = fstatat(dir, *part, AtFlags::AT_SYMLINK_NOFOLLOW)
                    .is_ok_and(|st| st.st_mode & libc::S_IFMT == libc::S_IFLNK);
                return Err(if is_link {
                    symlink(i)
                } else {
                    ScriptError::NotFound
                });
            }
            Err(Errno::ENOENT) => return Err(ScriptError::NotFound),
            Err(e) => return Err(io_error(e)),
        };
        current = Some(next);
    }
    let dir = current.as_ref().map_or(root, AsFd::as_fd);
    let file = match openat(
        dir,
        *last,
        OFlag::O_RDONLY | OFlag::O_NOFOLLOW | OFlag::O_NONBLOCK | OFlag::O_CLOEXEC,
        Mode::empty(),
    ) {
        Ok(fd) => fd,
        Err(Errno::ELOOP) => return Err(symlink(dirs.len())),
        Err(Errno::ENOENT) => return Err(ScriptError::NotFound),
        Err(e) => return Err(io_error(e)),
    };
    let reader = std::fs::File::from(file);
    let meta = reader
        .metadata()
        .map_err(|e| ScriptError::Io(e.kind().to_string()))?;
    if !meta.is_file() {
        return Err(ScriptError::NotRegular);
    }
    if meta.len() > max_bytes {
        return Err(ScriptError::TooLarge {
            bytes: meta.len(),
            limit: max_bytes,
        });
    }
    let mut bytes = Vec::with_capacity(usize::try_from(meta.len()).unwrap_or(0));
    (&reader)
        .take(max_bytes + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| ScriptError::Io(e.kind().to_string()))?;
    if bytes.len() as u64 > max_bytes {
        return Err(ScriptError::TooLarge {
            bytes: bytes.len() as u64,
            limit: max_bytes,
        });
    }
    let sha256 = hex::encode(Sha256::digest(&bytes));
    Ok(OpenedScript { bytes, sha256 })
}

/// Resolves `relative` beneath `skill_root` and hashes it; see the module docs.
pub fn resolve_script(
    skill_root: &Path,
    relative: &str,
    max_bytes: u64,
) -> Result<ResolvedScript, ScriptError> {
    let parts = check_relative(relative)?;
    let interpreter = Interpreter::for_path(relative).ok_or(ScriptError::UnsupportedInterpreter)?;
    let (root, root_fd) = open_root(skill_root)?;
    let opened = open_beneath(root_fd.as_fd(), &parts, max_bytes)?;
    let mut path = root.clone();
    path.extend(&parts);
    Ok(ResolvedScript {
        skill_root: root,
        relative: parts.join("/"),
        path,
        sha256: opened.sha256,
        bytes: opened.bytes.len() as u64,
        interpreter,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn path_shapes() {
        assert!(check_relative("scripts/a.sh").is_ok());
        assert!(check_relative("./scripts/a.sh").is_ok());
        for bad in [
            "",
            "/etc/passwd",
            "../x.sh",
            "scripts/../../x.sh",
            "a\nb.sh",
            "a\0.sh",
        ] {
            assert!(check_relative(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn symlinks_fifos_and_sizes_are_refused() -> Result<(), Box<dyn std::error::Error>> {
        let dir = tempfile::tempdir()?;
        let root = dir.path();
        std::fs::create_dir(root.join("scripts"))?;
        std::fs::write(root.join("scripts/ok.sh"), "echo hi\n")?;
        std::os::unix::fs::symlink("/etc/passwd", root.join("scripts/link.sh"))?;
        std::os::unix::fs::symlink(root.join("scripts"), root.join("linkdir"))?;
        std::fs::write(root.join("scripts/big.py"), vec![b'#'; 2048])?;
        std::fs::create_dir(root.join("scripts/dir.sh"))?;
        let ok = resolve_script(root, "scripts/ok.sh", 1024)?;
        assert_eq!(ok.interpreter, Interpreter::Bash);
        assert_eq!(ok.sha256.len(), 64);
        assert!(matches!(
            resolve_script(root, "scripts/link.sh", 1024),
            Err(ScriptError::Symlink { .. })
        ));
        assert!(matches!(
            resolve_script(root, "linkdir/ok.sh", 1024),
            Err(ScriptError::Symlink { .. })
        ));
        assert!(matches!(
            resolve_script(root, "scripts/big.py", 1024),
            Err(ScriptError::TooLarge { .. })
        ));
        assert_eq!(
            resolve_script(root, "scripts/dir.sh", 1024),
            Err(ScriptError::NotRegular)
        );
        assert_eq!(
            resolve_script(root, "scripts/none.sh", 1024),
            Err(ScriptError::NotFound)
        );
        assert_eq!(
            resolve_script(root, "scripts/ok.rb", 1024),
            Err(ScriptError::UnsupportedInterpreter)
        );
        Ok(())
    }
}
