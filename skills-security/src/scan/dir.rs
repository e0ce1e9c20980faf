//! Reading a skill directory for the scan, bounded and without following links.
//!
//! **Threat.** The directory is the attacker's: a symbolic link to `~/.ssh` or `/dev/zero`, a
//! FIFO that blocks the reader forever, a file that grows while it is read, millions of files
//! or a deep tree to stall the scan.
//! **Guarantee.** Entries are examined with `lstat` and never followed; only regular files are
//! opened, with `O_NOFOLLOW | O_NONBLOCK`, and read up to the per-file cap plus one byte;
//! the walk stops at the depth, file-count and total-byte limits. What is skipped becomes a
//! finding, so a skipped file is never silently "clean".

use std::fs;
use std::io::Read;
use std::path::Path;

use super::ScanLimits;
use super::report::{Category, ScanFinding, Severity};

/// The files read from a directory, in path order, plus findings about what was skipped.
pub(crate) struct Package {
    pub files: Vec<(String, Vec<u8>)>,
    pub findings: Vec<ScanFinding>,
}

/// Reads `root` within `limits`.
pub(crate) fn read_package(root: &Path, limits: &ScanLimits) -> Result<Package, RootError> {
    let meta = fs::symlink_metadata(root).map_err(|e| io_error(root, e))?;
    if !meta.is_dir() {
        return Err(io_error(
            root,
            std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                if meta.file_type().is_symlink() {
                    "it is a symbolic link, not a directory"
                } else {
                    "it is not a directory"
                },
            ),
        ));
    }
    let mut package = Package {
        files: Vec::new(),
        findings: Vec::new(),
    };
    let mut total: u64 = 0;
    // Breadth-first over (relative path, depth); each directory's entries sorted by name so
    // the order is the same on every filesystem.
    let mut queue: std::collections::VecDeque<(String, usize)> =
        std::collections::VecDeque::from([(String::new(), 0)]);
    let mut seen_files = 0usize;
    while let Some((rel_dir, depth)) = queue.pop_front() {
        let dir_path = if rel_dir.is_empty() {
            root.to_path_buf()
        } else {
            root.join(&rel_dir)
        };
        let entries = match fs::read_dir(&dir_path) {
            Ok(entries) => entries,
            Err(e) if rel_dir.is_empty() => return Err(io_error(root, e)),
            Err(e) => {
                package
                    .findings
                    .push(skipped(&rel_dir, format!("cannot list: {e}")));
                continue;
            }
        };
        let mut names: Vec<(String, fs::FileType)> = Vec::new();
        for entry in entries {
            let Ok(entry) = entry else { continue };
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            names.push((entry.file_name().to_string_lossy().into_owned(), kind));
        }
        names.sort_by(|a, b| a.0.cmp(&b.0));
        for (name, kind) in names {
            let rel = if rel_dir.is_empty() {
                name.clone()
            } else {
                format!("{rel_dir}/{name}")
            };
            if kind.is_symlink() {
                let target = fs::read_link(root.join(&rel))
                    .map(|t| t.to_string_lossy().into_owned())
                    .unwrap_or_default();
                package.findings.push(ScanFinding::new(
                    Category::Binary,
                    Severity::Medium,
                    "package.symlink",
                    &rel,
                    0,
                    format!("-> {target}"),
                    "a symbolic link in the package; not followed (it could point at the \
                     user's files once installed)"
                        .to_owned(),
                ));
                continue;
            }
            if kind.is_dir() {
                if depth + 1 > limits.max_depth {
                    package
                        .findings
                        .push(skipped(&rel, "deeper than the scan limit".to_owned()));
                } else if name != ".git" {
                    queue.push_back((rel, depth + 1));
                }
                continue;
            }
            if !kind.is_file() {
                package.findings.push(ScanFinding::new(
                    Category::Binary,
                    Severity::Medium,
                    "package.special_file",
                    &rel,
                    0,
                    String::new(),
                    "a device, FIFO or socket in the package; not read".to_owned(),
                ));
                continue;
            }
            seen_files += 1;
            if seen_files > limits.max_files {
                package.findings.push(ScanFinding::new(
                    Category::Binary,
                    Severity::Medium,
                    "scan.too_many_files",
                    &rel,
                    0,
                    String::new(),
                    format!(
                        "the package has more than {} files; the rest were not scanned",
                        limits.max_files
                    ),
                ));
                return Ok(package);
            }
            let cap = limits
                .max_file_bytes
                .min(limits.max_total_bytes.saturating_sub(total));
            match read_capped(&root.join(&rel), cap) {
                Ok(Some(bytes)) => {
                    total += bytes.len() as u64;
                    package.files.push((rel, bytes));
                }
                Ok(None) => package.findings.push(ScanFinding::new(
                    Category::Binary,
                    Severity::Info,
                    "scan.file_too_large",
                    &rel,
                    0,
                    String::new(),
                    format!("over the scan limit of {cap} bytes; not read"),
                )),
                Err(e) => package
                    .findings
                    .push(skipped(&rel, format!("cannot read: {e}"))),
            }
        }
    }
    Ok(package)
}

/// Reads one regular file within the per-file limit (`None` when it is larger).
pub(crate) fn read_file(path: &Path, limits: &ScanLimits) -> Result<Option<Vec<u8>>, RootError> {
    read_capped(path, limits.max_file_bytes).map_err(|e| io_error(path, e))
}

/// Reads a regular file, or `None` when it holds more than `cap` bytes.
fn read_capped(path: &Path, cap: u64) -> std::io::Result<Option<Vec<u8>>> {
    let mut options = fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NONBLOCK | libc::O_NOFOLLOW);
    }
    let file = options.open(path)?;
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "not a regular file",
        ));
    }
    if meta.len() > cap {
        return Ok(None);
    }
    let mut bytes = Vec::with_capacity(usize::try_from(meta.len()).unwrap_or(0));
    // One byte past the cap tells a file that grew while being read.
    file.take(cap.saturating_add(1)).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > cap {
        return Ok(None);
    }
    Ok(Some(bytes))
}

fn skipped(rel: &str, message: String) -> ScanFinding {
    ScanFinding::new(
        Category::Binary,
        Severity::Low,
        "scan.unreadable",
        rel,
        0,
        String::new(),
        message,
    )
}

/// The skill root itself could not be read.
#[derive(Debug)]
pub(crate) struct RootError {
    pub path: String,
    pub source: std::io::Error,
}

impl RootError {
    /// The crate's error for it.
    pub(crate) fn into_error(self) -> crate::Error {
        crate::Error::ScanIo {
            path: self.path,
            source: self.source,
        }
    }
}

fn io_error(path: &Path, source: std::io::Error) -> RootError {
    RootError {
        path: path.display().to_string(),
        source,
    }
}
