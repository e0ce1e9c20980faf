//! Resolving a script before anyone is asked to approve it (design note step 1).
//!
//! Threat: a path that leaves the skill (absolute, `..`, a symlink to `/etc/shadow` or to
//! a host script), a FIFO or device that blocks the reader, a huge file, an interpreter
//! chosen by a hostile shebang, and a file swapped after a person approved it. Guarantee:
//! [`resolve_script`] accepts only a relative path of plain components without control
//! characters, walks it beneath the canonical skill root refusing every symlink (the
//! equivalent of `openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS)`), opens the last
//! component with `O_NOFOLLOW | O_NONBLOCK`, requires a regular file within the size
//! limit, hashes the bytes it read (SHA-256), and picks the interpreter from the extension
//! only. The sandbox hashes again just before launch and refuses a mismatch.

use std::fs::OpenOptions;
use std::io::Read;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Component, Path, PathBuf};

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
}

impl Interpreter {
    /// The interpreter for `path`'s extension, if it has a supported one.
    pub fn for_path(path: &str) -> Option<Interpreter> {
        let ext = path.rsplit_once('.')?.1.to_ascii_lowercase();
        match ext.as_str() {
            "py" => Some(Interpreter::Python),
            "sh" | "bash" => Some(Interpreter::Bash),
            _ => None,
        }
    }

    /// The program and its fixed leading arguments.
    pub fn command(self) -> (&'static str, &'static [&'static str]) {
        match self {
            Interpreter::Python => ("python3", &["-I", "-B"]),
            Interpreter::Bash => ("bash", &["--noprofile", "--norc"]),
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
    #[error("no interpreter for this extension (only .py, .sh and .bash run)")]
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

/// Resolves `relative` beneath `skill_root` and hashes it; see the module docs.
pub fn resolve_script(
    skill_root: &Path,
    relative: &str,
    max_bytes: u64,
) -> Result<ResolvedScript, ScriptError> {
    let parts = check_relative(relative)?;
    let interpreter = Interpreter::for_path(relative).ok_or(ScriptError::UnsupportedInterpreter)?;
    let root = skill_root
        .canonicalize()
        .map_err(|e| ScriptError::Io(format!("skill root: {}", e.kind())))?;
    let mut path = root.clone();
    for (i, part) in parts.iter().enumerate() {
        path.push(part);
        let meta = match std::fs::symlink_metadata(&path) {
            Ok(meta) => meta,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(ScriptError::NotFound);
            }
            Err(e) => return Err(ScriptError::Io(e.kind().to_string())),
        };
        if meta.file_type().is_symlink() {
            return Err(ScriptError::Symlink {
                component: parts[..=i].join("/"),
            });
        }
        if i + 1 < parts.len() && !meta.is_dir() {
            return Err(ScriptError::NotFound);
        }
    }
    let (bytes, sha256) = hash_file(&path, max_bytes)?;
    Ok(ResolvedScript {
        skill_root: root,
        relative: parts.join("/"),
        path,
        sha256,
        bytes,
        interpreter,
    })
}

/// Opens `path` without following a final symlink and without blocking, requires a
/// regular file of at most `max_bytes`, and returns its size and SHA-256 (hex).
pub(crate) fn hash_file(path: &Path, max_bytes: u64) -> Result<(u64, String), ScriptError> {
    let file = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC)
        .open(path)
        .map_err(|e| match e.raw_os_error() {
            Some(libc::ELOOP) => ScriptError::Symlink {
                component: path
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default(),
            },
            Some(libc::ENOENT) => ScriptError::NotFound,
            _ => ScriptError::Io(e.kind().to_string()),
        })?;
    let meta = file
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
    let mut hasher = Sha256::new();
    let mut total = 0u64;
    let mut buf = [0u8; 16 * 1024];
    let mut reader = file.take(max_bytes + 1);
    loop {
        let n = reader
            .read(&mut buf)
            .map_err(|e| ScriptError::Io(e.kind().to_string()))?;
        if n == 0 {
            break;
        }
        total += n as u64;
        hasher.update(&buf[..n]);
    }
    if total > max_bytes {
        return Err(ScriptError::TooLarge {
            bytes: total,
            limit: max_bytes,
        });
    }
    Ok((total, hex::encode(hasher.finalize())))
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
