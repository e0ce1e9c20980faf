//! A skill's supporting files: path rules, size limits, hashes and the skill digest.
//!
//! **Threat.** A skill directory is untrusted. It can hold a symlink to `~/.ssh/id_rsa`, a
//! FIFO that blocks any reader forever, a file name with terminal control characters, a
//! multi-gigabyte file, or millions of files.
//!
//! **Guarantee.** Symlinks whose target lies outside the skill directory are never read
//! ([`Rule::FileSymlinkEscape`]); only regular files are opened (anything else is refused on
//! its metadata, and the open itself is non-blocking and re-checked), so a FIFO or device
//! cannot stall a load or be triggered by opening it; paths that break the rules of
//! [`check_relative_path`] are left out; files are hashed as a stream, so memory does not
//! grow with file size, and a file over [`FileLimits::max_read_bytes`] is not read at all;
//! and the walk stops after [`FileLimits::max_entries`] entries and
//! [`FileLimits::max_depth`] levels, so neither the time spent nor the number of
//! diagnostics grows with what a directory holds. Files that break the store limits (100 KB
//! a file, 1 MB a skill, text only: seed 002 sections 6.3 and 15.9) are kept in the
//! manifest with a warning, because those limits govern what a store accepts, not what an
//! agent may read. (A local process racing to swap files during the walk is outside this
//! threat model.)

use std::fs::{self, File};
use std::io::{self, Read};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::diagnostic::{Rule, Sink};

/// The most characters a relative file path may have.
pub const MAX_PATH_CHARS: usize = 256;

/// Limits on a skill's supporting files.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct FileLimits {
    /// Largest file, in bytes, before [`Rule::FileTooLarge`] (default 100 KB).
    pub max_file_bytes: u64,
    /// Largest total of all files, SKILL.md included, before [`Rule::SkillTooLarge`]
    /// (default 1 MB).
    pub max_skill_bytes: u64,
    /// Most entries (files, directories, links, anything) examined in one skill before
    /// [`Rule::FileWalkLimit`] stops the walk (default 2000).
    pub max_entries: usize,
    /// Files larger than this are not read or hashed; they are left out of the manifest
    /// with [`Rule::FileTooLarge`] (default 16 MiB).
    pub max_read_bytes: u64,
    /// Deepest directory level walked below the skill directory (default 8).
    pub max_depth: usize,
}

impl Default for FileLimits {
    fn default() -> Self {
        FileLimits {
            max_file_bytes: 100 * 1024,
            max_skill_bytes: 1024 * 1024,
            max_entries: 2000,
            max_read_bytes: 16 * 1024 * 1024,
            max_depth: 8,
        }
    }
}

/// One supporting file of a skill.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[non_exhaustive]
pub struct SkillFile {
    /// The path relative to the skill directory, `/`-separated.
    pub path: String,
    /// Size in bytes.
    pub size: u64,
    /// Lowercase hex SHA-256 of the content.
    pub sha256: String,
    /// A MIME type guessed from the extension (`text/markdown`, `text/x-python`, ...).
    pub content_type: String,
}

/// Why a relative path is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum PathProblem {
    /// The path is empty.
    #[error("the path is empty")]
    Empty,
    /// The path is absolute (`/x`, `\x`, `C:x`).
    #[error("the path is absolute")]
    Absolute,
    /// A component is `..`.
    #[error("the path has a `..` component")]
    ParentComponent,
    /// A component is empty or `.`.
    #[error("the path has an empty or `.` component")]
    NotNormalized,
    /// The path is over [`MAX_PATH_CHARS`] characters.
    #[error("the path is {0} characters; the limit is {MAX_PATH_CHARS}")]
    TooLong(usize),
    /// The path has a control character.
    #[error("the path contains a control character")]
    ControlCharacter,
}

/// Checks a skill-relative file path against seed 002's rules: not empty, not absolute, no
/// `..` (a `\` counts as a separator too, for paths that reach Windows), no empty or `.`
/// component, at most 256 characters, no control characters.
///
/// ```
/// use skills_core::files::{check_relative_path, PathProblem};
///
/// assert_eq!(check_relative_path("scripts/run.sh"), Ok(()));
/// assert_eq!(check_relative_path("../etc/passwd"), Err(PathProblem::ParentComponent));
/// assert_eq!(check_relative_path("/etc/passwd"), Err(PathProblem::Absolute));
/// ```
pub fn check_relative_path(path: &str) -> Result<(), PathProblem> {
    if path.is_empty() {
        return Err(PathProblem::Empty);
    }
    if path.chars().any(char::is_control) {
        return Err(PathProblem::ControlCharacter);
    }
    let bytes = path.as_bytes();
    let drive = bytes.len() >= 2 && bytes[0].is_ascii_alphabetic() && bytes[1] == b':';
    if path.starts_with(['/', '\\']) || drive {
        return Err(PathProblem::Absolute);
    }
    for component in path.split(['/', '\\']) {
        match component {
            ".." => return Err(PathProblem::ParentComponent),
            "" | "." => return Err(PathProblem::NotNormalized),
            _ => {}
        }
    }
    let chars = path.chars().count();
    if chars > MAX_PATH_CHARS {
        return Err(PathProblem::TooLong(chars));
    }
    Ok(())
}

/// A MIME type for a file name, from its extension.
pub fn content_type_for(path: &str) -> &'static str {
    let name = path.rsplit('/').next().unwrap_or(path);
    let ext = match name.rsplit_once('.') {
        Some((stem, ext)) if !stem.is_empty() => ext.to_ascii_lowercase(),
        _ => {
            return if name == "Makefile" || name == "Dockerfile" {
                "text/plain"
            } else {
                "application/octet-stream"
            };
        }
    };
    match ext.as_str() {
        "md" | "markdown" => "text/markdown",
        "txt" | "text" | "log" => "text/plain",
        "py" => "text/x-python",
        "sh" | "bash" | "zsh" => "text/x-shellscript",
        "js" | "mjs" | "cjs" | "jsx" => "text/javascript",
        "ts" | "tsx" | "mts" => "text/x-typescript",
        "json" => "application/json",
        "yaml" | "yml" => "application/yaml",
        "toml" => "application/toml",
        "html" | "htm" => "text/html",
        "css" => "text/css",
        "csv" => "text/csv",
        "xml" | "xsd" => "application/xml",
        "svg" => "image/svg+xml",
        "rb" => "text/x-ruby",
        "go" => "text/x-go",
        "rs" => "text/x-rust",
        "java" => "text/x-java",
        "kt" => "text/x-kotlin",
        "c" | "h" => "text/x-c",
        "cc" | "cpp" | "hpp" => "text/x-c++",
        "cs" => "text/x-csharp",
        "php" => "text/x-php",
        "sql" => "application/sql",
        "dot" | "gv" => "text/vnd.graphviz",
        "ini" | "cfg" | "conf" | "env" => "text/plain",
        "png" => "image/png",
        "jpg" | "jpeg" => "image/jpeg",
        "gif" => "image/gif",
        "webp" => "image/webp",
        "pdf" => "application/pdf",
        "zip" => "application/zip",
        "ttf" => "font/ttf",
        "otf" => "font/otf",
        "woff" => "font/woff",
        "woff2" => "font/woff2",
        _ => "application/octet-stream",
    }
}

/// What reading a file established.
pub(crate) struct FileFacts {
    pub size: u64,
    pub sha256: String,
    pub is_text: bool,
}

/// Opens `path` for reading without blocking on FIFOs, and only if it is a regular file.
pub(crate) fn open_regular(path: &Path) -> io::Result<(File, u64)> {
    let mut options = fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NONBLOCK);
    }
    let file = options.open(path)?;
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            if meta.is_dir() {
                "it is a directory"
            } else {
                "it is not a regular file"
            },
        ));
    }
    Ok((file, meta.len()))
}

/// Hashes a file as a stream and checks that it is text (UTF-8 without NUL bytes). A file
/// that grows past `max_bytes` while being read is an error.
pub(crate) fn read_facts(path: &Path, max_bytes: u64) -> io::Result<FileFacts> {
    let (mut file, _) = open_regular(path)?;
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; 64 * 1024];
    let mut pending: Vec<u8> = Vec::new();
    let mut is_text = true;
    let mut size = 0u64;
    loop {
        let n = match file.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(err) if err.kind() == io::ErrorKind::Interrupted => continue,
            Err(err) => return Err(err),
        };
        let chunk = &buf[..n];
        hasher.update(chunk);
        size += n as u64;
        if size > max_bytes {
            return Err(io::Error::new(
                io::ErrorKind::FileTooLarge,
                "the file grew past the read limit while being read",
            ));
        }
        if is_text {
            is_text = utf8_continues(&mut pending, chunk);
        }
    }
    Ok(FileFacts {
        size,
        sha256: hex::encode(hasher.finalize()),
        is_text: is_text && pending.is_empty(),
    })
}

/// Feeds `chunk` to an incremental UTF-8 check; `pending` carries a split character.
fn utf8_continues(pending: &mut Vec<u8>, chunk: &[u8]) -> bool {
    if chunk.contains(&0) {
        return false;
    }
    pending.extend_from_slice(chunk);
    match std::str::from_utf8(pending) {
        Ok(_) => {
            pending.clear();
            true
        }
        Err(err) if err.error_len().is_none() => {
            let rest = pending.split_off(err.valid_up_to());
            *pending = rest;
            true
        }
        Err(_) => false,
    }
}

/// Hex SHA-256 of bytes.
pub(crate) fn sha256_hex(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

/// The stable digest of a whole skill: SHA-256 over `skills-digest-v1\n` followed by one
/// `path \0 size \0 sha256 \n` record per file (SKILL.md included) in byte order of path.
/// Paths cannot hold NUL or newlines (see [`check_relative_path`]), so the encoding is
/// unambiguous; the digest depends on content and names only, never on timestamps,
/// permissions or the order a filesystem lists entries in.
pub fn skill_digest<'a>(files: impl IntoIterator<Item = (&'a str, u64, &'a str)>) -> String {
    let mut records: Vec<(&str, u64, &str)> = files.into_iter().collect();
    records.sort_unstable_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
    let mut hasher = Sha256::new();
    hasher.update(b"skills-digest-v1\n");
    for (path, size, sha) in records {
        hasher.update(path.as_bytes());
        hasher.update(b"\0");
        hasher.update(size.to_string().as_bytes());
        hasher.update(b"\0");
        hasher.update(sha.as_bytes());
        hasher.update(b"\n");
    }
    hex::encode(hasher.finalize())
}

/// Walks the skill directory `root` (whose canonical form is `canonical_root`) and returns
/// every supporting file except those named in `skip` (paths relative to the root).
pub(crate) fn walk(
    root: &Path,
    canonical_root: &Path,
    skip: &[&str],
    limits: &FileLimits,
    sink: &mut Sink,
) -> Vec<SkillFile> {
    let mut walker = Walker {
        canonical_root,
        skip,
        limits,
        sink,
        files: Vec::new(),
        entries: 0,
        stopped: false,
    };
    walker.dir(root, "", 0);
    let mut files = walker.files;
    files.sort_unstable_by(|a, b| a.path.as_bytes().cmp(b.path.as_bytes()));
    files
}

struct Walker<'a> {
    canonical_root: &'a Path,
    skip: &'a [&'a str],
    limits: &'a FileLimits,
    sink: &'a mut Sink,
    files: Vec<SkillFile>,
    entries: usize,
    stopped: bool,
}

impl Walker<'_> {
    fn report(&mut self, rule: Rule, path: &str, message: String) {
        self.sink.push(rule, None, message);
        if let Some(last) = self.sink.items.pop() {
            self.sink.items.push(last.in_file(path));
        }
    }

    fn dir(&mut self, dir: &Path, prefix: &str, depth: usize) {
        let mut entries: Vec<(std::ffi::OsString, PathBuf)> = match fs::read_dir(dir) {
            Ok(entries) => entries
                .filter_map(Result::ok)
                .map(|e| (e.file_name(), e.path()))
                .collect(),
            Err(err) => {
                let shown = if prefix.is_empty() { "." } else { prefix };
                self.report(
                    Rule::FileUnreadable,
                    shown,
                    format!("directory `{shown}` could not be listed: {err}"),
                );
                return;
            }
        };
        entries.sort_unstable_by(|a, b| a.0.as_encoded_bytes().cmp(b.0.as_encoded_bytes()));
        for (name, path) in entries {
            if self.stopped {
                return;
            }
            let Some(name) = name.to_str() else {
                let shown = format!("{prefix}{}", name.to_string_lossy());
                self.report(
                    Rule::FilePathInvalid,
                    &shown,
                    format!("`{shown}` is not valid UTF-8 and is left out"),
                );
                continue;
            };
            if name == ".git" || name == "node_modules" {
                continue;
            }
            let relative = format!("{prefix}{name}");
            self.entry(&path, relative, depth);
        }
    }

    fn entry(&mut self, path: &Path, relative: String, depth: usize) {
        if self.skip.contains(&relative.as_str()) {
            return;
        }
        self.entries += 1;
        if self.entries > self.limits.max_entries {
            self.report(
                Rule::FileWalkLimit,
                &relative,
                format!(
                    "the skill has more than {} entries; the rest are left out",
                    self.limits.max_entries
                ),
            );
            self.stopped = true;
            return;
        }
        let Ok(link_meta) = fs::symlink_metadata(path) else {
            self.report(
                Rule::FileUnreadable,
                &relative,
                format!("`{relative}` could not be examined and is left out"),
            );
            return;
        };
        let mut meta = link_meta.clone();
        if link_meta.file_type().is_symlink() {
            match fs::canonicalize(path) {
                Ok(target) if target.starts_with(self.canonical_root) => {
                    // A link to a directory inside the skill would list files twice (or
                    // loop); the files are reached through their real path instead.
                    match fs::metadata(&target) {
                        Ok(target_meta) if target_meta.is_dir() => return,
                        Ok(target_meta) => meta = target_meta,
                        Err(_) => {}
                    }
                }
                Ok(_) => {
                    self.report(
                        Rule::FileSymlinkEscape,
                        &relative,
                        format!(
                            "`{relative}` is a symlink that leads outside the skill; it is not read"
                        ),
                    );
                    return;
                }
                Err(_) => {
                    self.report(
                        Rule::FileUnreadable,
                        &relative,
                        format!("`{relative}` is a broken symlink and is left out"),
                    );
                    return;
                }
            }
        }
        if meta.is_dir() {
            if depth + 1 > self.limits.max_depth {
                self.report(
                    Rule::FileWalkLimit,
                    &relative,
                    format!(
                        "`{relative}` is deeper than {} levels; its contents are left out",
                        self.limits.max_depth
                    ),
                );
                return;
            }
            self.dir(path, &format!("{relative}/"), depth + 1);
            return;
        }
        if let Err(problem) = check_relative_path(&relative) {
            let shown = relative.escape_debug().to_string();
            self.report(
                Rule::FilePathInvalid,
                &shown,
                format!("`{shown}` is left out: {problem}"),
            );
            return;
        }
        if !meta.is_file() {
            self.report(
                Rule::FileUnreadable,
                &relative,
                format!("`{relative}` is not a regular file (a FIFO, socket or device) and is not opened"),
            );
            return;
        }
        if meta.len() > self.limits.max_read_bytes {
            self.report(
                Rule::FileTooLarge,
                &relative,
                format!(
                    "`{relative}` is {} bytes, over the {}-byte read limit; it is not read and is left out",
                    meta.len(),
                    self.limits.max_read_bytes
                ),
            );
            return;
        }
        match read_facts(path, self.limits.max_read_bytes) {
            Ok(facts) => {
                if facts.size > self.limits.max_file_bytes {
                    self.report(
                        Rule::FileTooLarge,
                        &relative,
                        format!(
                            "`{relative}` is {} bytes; the per-file limit is {}",
                            facts.size, self.limits.max_file_bytes
                        ),
                    );
                }
                if !facts.is_text {
                    self.report(
                        Rule::FileBinary,
                        &relative,
                        format!("`{relative}` is not UTF-8 text; skills should hold text only"),
                    );
                }
                self.files.push(SkillFile {
                    content_type: content_type_for(&relative).to_owned(),
                    path: relative,
                    size: facts.size,
                    sha256: facts.sha256,
                });
            }
            Err(err) => self.report(
                Rule::FileUnreadable,
                &relative,
                format!("`{relative}` could not be read and is left out: {err}"),
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diagnostic::Profile;

    #[test]
    fn path_rules_both_sides() {
        assert_eq!(check_relative_path("a"), Ok(()));
        assert_eq!(check_relative_path("references/a..b.md"), Ok(()));
        assert_eq!(check_relative_path(""), Err(PathProblem::Empty));
        assert_eq!(
            check_relative_path("a/../b"),
            Err(PathProblem::ParentComponent)
        );
        assert_eq!(
            check_relative_path("..\\b"),
            Err(PathProblem::ParentComponent)
        );
        assert_eq!(check_relative_path("\\srv\\x"), Err(PathProblem::Absolute));
        assert_eq!(check_relative_path("C:x"), Err(PathProblem::Absolute));
        assert_eq!(check_relative_path("c:\\x"), Err(PathProblem::Absolute));
        // Only a letter before the colon makes a drive.
        assert_eq!(check_relative_path("1:notes.md"), Ok(()));
        assert_eq!(check_relative_path("a:b"), Err(PathProblem::Absolute));
        assert_eq!(check_relative_path("a//b"), Err(PathProblem::NotNormalized));
        assert_eq!(check_relative_path("./a"), Err(PathProblem::NotNormalized));
        assert_eq!(
            check_relative_path("a\nb"),
            Err(PathProblem::ControlCharacter)
        );
        assert_eq!(
            check_relative_path("a\u{1b}[31m"),
            Err(PathProblem::ControlCharacter)
        );
        let at_limit = "a".repeat(MAX_PATH_CHARS);
        assert_eq!(check_relative_path(&at_limit), Ok(()));
        let over = "é".repeat(MAX_PATH_CHARS + 1);
        assert_eq!(check_relative_path(&over), Err(PathProblem::TooLong(257)));
    }

    #[test]
    fn utf8_check_survives_chunk_boundaries() {
        let text = "héllo wörld ✓".as_bytes();
        for split in 0..text.len() {
            let mut pending = Vec::new();
            assert!(utf8_continues(&mut pending, &text[..split]));
            assert!(utf8_continues(&mut pending, &text[split..]));
            assert!(pending.is_empty(), "split at {split}");
        }
        let mut pending = Vec::new();
        assert!(!utf8_continues(&mut pending, b"a\0b"));
        let mut pending = Vec::new();
        assert!(!utf8_continues(&mut pending, b"\xff"));
    }

    #[test]
    fn digest_is_order_independent_and_content_sensitive() {
        let a = skill_digest([("SKILL.md", 3, "aa"), ("b.md", 1, "bb")]);
        let b = skill_digest([("b.md", 1, "bb"), ("SKILL.md", 3, "aa")]);
        assert_eq!(a, b);
        assert_ne!(a, skill_digest([("SKILL.md", 3, "aa"), ("b.md", 1, "bc")]));
        assert_ne!(a, skill_digest([("SKILL.md", 3, "aa"), ("c.md", 1, "bb")]));
        assert_eq!(a.len(), 64);
    }

    #[test]
    fn content_types() {
        assert_eq!(content_type_for("scripts/run.sh"), "text/x-shellscript");
        assert_eq!(content_type_for("a/REF.MD"), "text/markdown");
        assert_eq!(content_type_for(".env"), "application/octet-stream");
        assert_eq!(content_type_for("Makefile"), "text/plain");
    }

    #[test]
    fn walk_hashes_skips_and_limits() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        fs::create_dir_all(root.join("scripts")).unwrap();
        fs::create_dir_all(root.join(".git")).unwrap();
        fs::write(root.join("SKILL.md"), "x").unwrap();
        fs::write(root.join("scripts/run.sh"), "echo hi\n").unwrap();
        fs::write(root.join(".git/config"), "x").unwrap();
        fs::write(root.join("big.txt"), vec![b'a'; 2048]).unwrap();
        fs::write(root.join("logo.png"), [0x89, b'P', b'N', b'G', 0, 0]).unwrap();
        let limits = FileLimits {
            max_file_bytes: 1024,
            ..FileLimits::default()
        };
        let mut sink = Sink::new(Profile::Spec, None);
        let canonical = fs::canonicalize(root).unwrap();
        let files = walk(root, &canonical, &["SKILL.md"], &limits, &mut sink);
        let paths: Vec<&str> = files.iter().map(|f| f.path.as_str()).collect();
        assert_eq!(paths, vec!["big.txt", "logo.png", "scripts/run.sh"]);
        assert_eq!(files[2].sha256, sha256_hex(b"echo hi\n"));
        assert_eq!(files[2].size, 8);
        let rules: Vec<Rule> = sink.items.iter().map(|d| d.rule).collect();
        assert_eq!(rules, vec![Rule::FileTooLarge, Rule::FileBinary]);
        assert_eq!(sink.items[0].file.as_deref(), Some("big.txt"));
    }

    #[test]
    fn walk_stops_at_file_and_depth_limits() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        fs::create_dir_all(root.join("a/b/c")).unwrap();
        fs::write(root.join("a/b/c/deep.md"), "x").unwrap();
        for i in 0..5 {
            fs::write(root.join(format!("f{i}.md")), "x").unwrap();
        }
        let canonical = fs::canonicalize(root).unwrap();
        // Entries in order: a, a/b, a/b/c (too deep), f0, f1, f2 (the 6th entry)...
        let limits = FileLimits {
            max_entries: 6,
            max_depth: 2,
            ..FileLimits::default()
        };
        let mut sink = Sink::new(Profile::Spec, None);
        let files = walk(root, &canonical, &[], &limits, &mut sink);
        let paths: Vec<&str> = files.iter().map(|f| f.path.as_str()).collect();
        assert_eq!(paths, vec!["f0.md", "f1.md", "f2.md"]);
        let rules: Vec<(Rule, Option<&str>)> = sink
            .items
            .iter()
            .map(|d| (d.rule, d.file.as_deref()))
            .collect();
        assert_eq!(
            rules,
            vec![
                (Rule::FileWalkLimit, Some("a/b/c")),
                (Rule::FileWalkLimit, Some("f3.md"))
            ]
        );
    }

    #[test]
    fn entries_that_are_not_files_count_toward_the_limit() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        for i in 0..50 {
            fs::create_dir(root.join(format!("d{i:02}"))).unwrap();
        }
        let canonical = fs::canonicalize(root).unwrap();
        let limits = FileLimits {
            max_entries: 10,
            ..FileLimits::default()
        };
        let mut sink = Sink::new(Profile::Spec, None);
        walk(root, &canonical, &[], &limits, &mut sink);
        // One diagnostic, not one per entry.
        assert_eq!(sink.items.len(), 1);
        assert_eq!(sink.items[0].rule, Rule::FileWalkLimit);
    }

    #[test]
    fn files_over_the_read_limit_are_not_read() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let big = fs::File::create(root.join("huge.bin")).unwrap();
        // Sparse: reading it would take minutes; it must not be read at all.
        big.set_len(1 << 40).unwrap();
        fs::write(root.join("small.md"), "x").unwrap();
        let canonical = fs::canonicalize(root).unwrap();
        let mut sink = Sink::new(Profile::Spec, None);
        let files = walk(root, &canonical, &[], &FileLimits::default(), &mut sink);
        assert_eq!(files.len(), 1);
        assert_eq!(files[0].path, "small.md");
        assert_eq!(sink.items[0].rule, Rule::FileTooLarge);
        assert!(sink.items[0].message.contains("not read"));
    }

    #[test]
    fn files_are_sorted_by_full_path() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        fs::create_dir(root.join("a")).unwrap();
        fs::write(root.join("a/x"), "x").unwrap();
        fs::write(root.join("a-b"), "x").unwrap();
        let canonical = fs::canonicalize(root).unwrap();
        let mut sink = Sink::new(Profile::Spec, None);
        let files = walk(root, &canonical, &[], &FileLimits::default(), &mut sink);
        let paths: Vec<&str> = files.iter().map(|f| f.path.as_str()).collect();
        assert_eq!(paths, vec!["a-b", "a/x"]);
    }

    #[cfg(unix)]
    #[test]
    fn symlinks_out_of_the_skill_and_fifos_are_never_read() {
        let outside = tempfile::tempdir().unwrap();
        fs::write(outside.path().join("secret"), "id_rsa").unwrap();
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        fs::write(root.join("inside.md"), "x").unwrap();
        std::os::unix::fs::symlink(outside.path().join("secret"), root.join("leak")).unwrap();
        std::os::unix::fs::symlink(outside.path(), root.join("leakdir")).unwrap();
        std::os::unix::fs::symlink(root.join("inside.md"), root.join("alias.md")).unwrap();
        std::os::unix::fs::symlink(root, root.join("loop")).unwrap();
        let fifo = root.join("pipe");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status();
        let canonical = fs::canonicalize(root).unwrap();
        let mut sink = Sink::new(Profile::Spec, None);
        let files = walk(root, &canonical, &[], &FileLimits::default(), &mut sink);
        let paths: Vec<&str> = files.iter().map(|f| f.path.as_str()).collect();
        assert_eq!(paths, vec!["alias.md", "inside.md"]);
        let mut rules: Vec<(Rule, String)> = sink
            .items
            .iter()
            .map(|d| (d.rule, d.file.clone().unwrap_or_default()))
            .collect();
        rules.sort();
        let mut expected = vec![
            (Rule::FileSymlinkEscape, "leak".to_owned()),
            (Rule::FileSymlinkEscape, "leakdir".to_owned()),
        ];
        if made.is_ok_and(|s| s.success()) {
            expected.push((Rule::FileUnreadable, "pipe".to_owned()));
        }
        expected.sort();
        assert_eq!(rules, expected);
    }
}
