//! The `.tar.gz` alternative (seed 002 section 9.2): the skill directory as it is, under one
//! top-level directory named by the slug.
//!
//! Export is deterministic: entries sorted by path, modes 0644 (0755 for directories),
//! owner 0, modification time 0, and a gzip header without a time or a name.
//!
//! Threat: archives are the classic vehicle for path traversal (`../`, absolute names),
//! link tricks (a symlink or hard link entry, then a file written through it), devices and
//! FIFOs, and decompression bombs. Guarantee: import reads entries into memory only (it
//! never extracts to disk), accepts only regular files and directories, checks every path
//! with the same rules as the JSON format, checks each file's declared size before reading
//! it, stops at a cap on decompressed bytes and on entries, and then goes through the same
//! validation and single store write as a JSON import.

use std::io::{Read, Write};

use flate2::Compression;
use flate2::read::GzDecoder;
use skills_core::SKILL_MD;
use skills_store_traits::Violation;

use super::{ImportOptions, PortableFile, PortableSkill};
use crate::error::{Error, Result};

/// Writes a portable document as a `.tar.gz`: `<slug>/SKILL.md` and `<slug>/<path>` per file.
pub fn to_tar_gz(document: &PortableSkill) -> Result<Vec<u8>> {
    let body = &document.skill;
    let mut entries: Vec<(String, &[u8])> = vec![(SKILL_MD.to_owned(), body.content.as_bytes())];
    for file in &body.files {
        entries.push((file.path.clone(), file.content.as_bytes()));
    }
    entries.sort_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));

    let encoder = flate2::GzBuilder::new()
        .mtime(0)
        .write(Vec::new(), Compression::default());
    let mut builder = tar::Builder::new(encoder);
    builder.mode(tar::HeaderMode::Deterministic);
    let mut dirs = std::collections::BTreeSet::new();
    dirs.insert(body.slug.clone());
    for (path, _) in &entries {
        let mut prefix = body.slug.clone();
        let parts: Vec<&str> = path.split('/').collect();
        for part in &parts[..parts.len().saturating_sub(1)] {
            prefix = format!("{prefix}/{part}");
            dirs.insert(prefix.clone());
        }
    }
    let archive_error = |e: std::io::Error| Error::Malformed {
        format: "tar.gz archive",
        message: e.to_string(),
    };
    for dir in &dirs {
        let mut header = tar::Header::new_gnu();
        header.set_entry_type(tar::EntryType::Directory);
        header.set_mode(0o755);
        header.set_size(0);
        header.set_mtime(0);
        builder
            .append_data(&mut header, format!("{dir}/"), std::io::empty())
            .map_err(archive_error)?;
    }
    for (path, bytes) in entries {
        let mut header = tar::Header::new_gnu();
        header.set_entry_type(tar::EntryType::Regular);
        header.set_mode(0o644);
        header.set_size(bytes.len() as u64);
        header.set_mtime(0);
        builder
            .append_data(&mut header, format!("{}/{path}", body.slug), bytes)
            .map_err(archive_error)?;
    }
    let encoder = builder.into_inner().map_err(archive_error)?;
    let mut out = encoder.finish().map_err(archive_error)?;
    out.flush().map_err(archive_error)?;
    Ok(out)
}

/// Reads a `.tar.gz` skill directory into a portable document (validated, nothing written).
///
/// The directory may sit at the archive root or under one top-level directory. Name,
/// description, tags, category, version and required tools come from `SKILL.md`'s
/// frontmatter; the slug is the frontmatter `name` (which the Agent Skills format already
/// restricts to a slug), or the top-level directory name when there is no usable name.
pub fn from_tar_gz(bytes: &[u8], options: &ImportOptions) -> Result<PortableSkill> {
    let decoder = GzDecoder::new(bytes);
    let capped = CappedReader {
        inner: decoder,
        remaining: options.max_document_bytes,
        limit: options.max_document_bytes,
        exceeded: false,
    };
    let mut archive = tar::Archive::new(capped);
    let malformed = |e: std::io::Error| Error::Malformed {
        format: "tar.gz archive",
        message: e.to_string(),
    };
    let mut files: Vec<(String, String)> = Vec::new();
    let mut count = 0usize;
    let entries = archive.entries().map_err(malformed)?;
    for entry in entries {
        let mut entry = entry.map_err(|e| cap_or_malformed(e, options))?;
        count += 1;
        if count > options.max_entries {
            return Err(Error::TooLarge {
                what: "the number of archive entries".into(),
                limit: options.max_entries as u64,
            });
        }
        let raw = entry.path_bytes().into_owned();
        let shown = skills_core::diagnostic::shown(&String::from_utf8_lossy(&raw)).into_owned();
        let kind = entry.header().entry_type();
        let path = String::from_utf8(raw).map_err(|_| Error::Malformed {
            format: "tar.gz archive",
            message: format!("entry `{shown}` has a name that is not UTF-8"),
        })?;
        let normalized = normalize(&path);
        if kind.is_dir() {
            if !normalized.is_empty() {
                check_path(&normalized, &shown)?;
            }
            continue;
        }
        if !kind.is_file() {
            return Err(Error::UnsupportedEntry {
                path: shown,
                kind: entry_kind_name(kind),
            });
        }
        check_path(&normalized, &shown)?;
        let declared = entry.header().size().map_err(malformed)?;
        if declared > options.limits.max_file_bytes {
            return Err(Error::invalid(
                format!("archive:{shown}"),
                Violation::FileTooLarge {
                    bytes: declared,
                    limit: options.limits.max_file_bytes,
                },
            ));
        }
        let mut content = Vec::with_capacity(usize::try_from(declared).unwrap_or(0));
        (&mut entry)
            .take(options.limits.max_file_bytes + 1)
            .read_to_end(&mut content)
            .map_err(|e| cap_or_malformed(e, options))?;
        let text = String::from_utf8(content)
            .map_err(|_| Error::invalid(format!("archive:{shown}"), Violation::Binary))?;
        files.push((normalized, text));
    }
    assemble(files, options)
}

fn cap_or_malformed(error: std::io::Error, options: &ImportOptions) -> Error {
    if error.kind() == std::io::ErrorKind::FileTooLarge {
        Error::TooLarge {
            what: "the decompressed archive".into(),
            limit: options.max_document_bytes,
        }
    } else {
        Error::Malformed {
            format: "tar.gz archive",
            message: error.to_string(),
        }
    }
}

fn entry_kind_name(kind: tar::EntryType) -> &'static str {
    match kind {
        tar::EntryType::Symlink => "symlink",
        tar::EntryType::Link => "hard link",
        tar::EntryType::Char => "character device",
        tar::EntryType::Block => "block device",
        tar::EntryType::Fifo => "FIFO",
        tar::EntryType::GNUSparse => "sparse file",
        _ => "special entry",
    }
}

/// Strips `./` prefixes and one trailing `/`; everything else is checked, not repaired.
fn normalize(path: &str) -> String {
    let mut rest = path;
    while let Some(stripped) = rest.strip_prefix("./") {
        rest = stripped;
    }
    if rest == "." {
        rest = "";
    }
    rest.strip_suffix('/').unwrap_or(rest).to_owned()
}

fn check_path(path: &str, shown: &str) -> Result<()> {
    skills_core::files::check_relative_path(path)
        .map_err(|problem| Error::invalid(format!("archive:{shown}"), Violation::Path(problem)))
}

fn assemble(mut files: Vec<(String, String)>, options: &ImportOptions) -> Result<PortableSkill> {
    files.sort_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
    let top = single_top_dir(&files);
    let prefix = top.as_ref().map(|t| format!("{t}/")).unwrap_or_default();
    let mut content = None;
    let mut rest = Vec::new();
    for (path, text) in files {
        let relative = path.strip_prefix(&prefix).unwrap_or(&path).to_owned();
        if relative == SKILL_MD {
            content = Some(text);
        } else {
            rest.push(PortableFile {
                content_type: Some(skills_core::files::content_type_for(&relative).to_owned()),
                path: relative,
                content: text,
            });
        }
    }
    let Some(content) = content else {
        return Err(Error::Malformed {
            format: "tar.gz archive",
            message: "no SKILL.md at the archive root or under a single top-level directory".into(),
        });
    };
    super::from_parts(content, rest, top, &options.limits)
}

/// The one directory every file sits under, when `<dir>/SKILL.md` exists and there is no
/// `SKILL.md` at the root.
fn single_top_dir(files: &[(String, String)]) -> Option<String> {
    if files.iter().any(|(p, _)| p == SKILL_MD) {
        return None;
    }
    let first = files.first()?.0.split('/').next()?.to_owned();
    let all_under = files
        .iter()
        .all(|(p, _)| p.starts_with(&format!("{first}/")));
    let has_entry = files
        .iter()
        .any(|(p, _)| *p == format!("{first}/{SKILL_MD}"));
    (all_under && has_entry).then_some(first)
}

/// A reader that fails with `FileTooLarge` once more than `limit` bytes came through.
struct CappedReader<R> {
    inner: R,
    remaining: u64,
    limit: u64,
    exceeded: bool,
}

impl<R: Read> Read for CappedReader<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.exceeded {
            return Err(std::io::Error::new(
                std::io::ErrorKind::FileTooLarge,
                format!("decompressed data exceeds {} bytes", self.limit),
            ));
        }
        let read = self.inner.read(buf)?;
        if read as u64 > self.remaining {
            self.exceeded = true;
            return Err(std::io::Error::new(
                std::io::ErrorKind::FileTooLarge,
                format!("decompressed data exceeds {} bytes", self.limit),
            ));
        }
        self.remaining -= read as u64;
        Ok(read)
    }
}
