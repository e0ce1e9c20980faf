//! What a package ships besides its instructions: binaries (detected by magic number or by
//! NUL bytes, never decoded), scripts the instructions never mention, and scripts the
//! instructions run but the package does not contain.
//!
//! A script nobody references is not run by `load_skill` (seed 004 runs referenced scripts
//! only), but it is installed with the skill and another skill, a hook or a user can run it;
//! a script the instructions run but the package lacks is whatever a file of that name in
//! the working directory happens to be. Both are worth a reviewer's look.

use std::collections::BTreeSet;

use super::ScanFile;
use super::context::{SCRIPT_EXTENSIONS, extension};
use super::report::{Category, ScanFinding, Severity};

/// What kind of non-text file `bytes` is, if it is one.
pub(crate) fn binary_kind(bytes: &[u8]) -> Option<BinaryKind> {
    const MAGIC: &[(&[u8], BinaryKind)] = &[
        (b"\x7fELF", BinaryKind::Executable("ELF executable")),
        (
            b"\xfe\xed\xfa\xce",
            BinaryKind::Executable("Mach-O executable"),
        ),
        (
            b"\xfe\xed\xfa\xcf",
            BinaryKind::Executable("Mach-O executable"),
        ),
        (
            b"\xce\xfa\xed\xfe",
            BinaryKind::Executable("Mach-O executable"),
        ),
        (
            b"\xcf\xfa\xed\xfe",
            BinaryKind::Executable("Mach-O executable"),
        ),
        (
            b"\xca\xfe\xba\xbe",
            BinaryKind::Executable("Mach-O universal binary or Java class"),
        ),
        (b"\0asm", BinaryKind::Executable("WebAssembly module")),
        (b"dex\n", BinaryKind::Executable("Android DEX")),
        (
            b"PK\x03\x04",
            BinaryKind::Archive("ZIP archive (or jar, wheel, docx)"),
        ),
        (b"\x1f\x8b", BinaryKind::Archive("gzip archive")),
        (b"7z\xbc\xaf\x27\x1c", BinaryKind::Archive("7z archive")),
        (b"Rar!", BinaryKind::Archive("RAR archive")),
        (b"\xfd7zXZ\0", BinaryKind::Archive("xz archive")),
        (b"BZh", BinaryKind::Archive("bzip2 archive")),
        (b"\x89PNG", BinaryKind::Media("PNG image")),
        (b"\xff\xd8\xff", BinaryKind::Media("JPEG image")),
        (b"GIF8", BinaryKind::Media("GIF image")),
        (b"%PDF", BinaryKind::Media("PDF document")),
        (b"RIFF", BinaryKind::Media("RIFF media")),
        (b"wOFF", BinaryKind::Media("web font")),
        (b"wOF2", BinaryKind::Media("web font")),
        (b"\0\x01\0\0", BinaryKind::Media("TrueType font")),
        (b"OTTO", BinaryKind::Media("OpenType font")),
        (b"\0\0\x01\0", BinaryKind::Media("icon")),
        (b"SQLite format 3\0", BinaryKind::Archive("SQLite database")),
    ];
    for (magic, kind) in MAGIC {
        if bytes.starts_with(magic) {
            return Some(*kind);
        }
    }
    // A PE file starts with `MZ` and names the offset of its `PE\0\0` header at 0x3C.
    if bytes.starts_with(b"MZ") {
        let pe = bytes
            .get(0x3C..0x40)
            .and_then(|b| <[u8; 4]>::try_from(b).ok())
            .map(u32::from_le_bytes)
            .and_then(|off| usize::try_from(off).ok())
            .and_then(|off| bytes.get(off..off.checked_add(4)?));
        if pe == Some(b"PE\0\0") || bytes.len() < 0x40 {
            return Some(BinaryKind::Executable("Windows PE executable"));
        }
    }
    if bytes.len() >= 4 && bytes[..3] == [0x42, 0x0d, 0x0d] || is_pyc(bytes) {
        return Some(BinaryKind::Executable("compiled Python bytecode"));
    }
    let head = &bytes[..bytes.len().min(8192)];
    let nul = memchr::memchr_iter(0, head).count();
    // UTF-16 text has NULs too, but skills-core already refuses it; here it is data.
    if nul > 0 && (nul * 100 >= head.len() || nul >= 16) {
        return Some(BinaryKind::Unknown);
    }
    None
}

fn is_pyc(bytes: &[u8]) -> bool {
    // Magic: two version bytes then `\r\n`, then flags, for every CPython 3.x.
    bytes.len() >= 16 && bytes[2] == b'\r' && bytes[3] == b'\n' && bytes[1] == 0x0d
}

/// A non-text file's kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum BinaryKind {
    /// Runs on some machine: ELF, Mach-O, PE, WebAssembly, bytecode.
    Executable(&'static str),
    /// Holds files the scan cannot see.
    Archive(&'static str),
    /// Images, documents and fonts: ordinary assets.
    Media(&'static str),
    /// Not text, no known format.
    Unknown,
}

/// The finding for a binary file.
pub(crate) fn binary_finding(path: &str, kind: BinaryKind) -> ScanFinding {
    let (severity, rule, message) = match kind {
        BinaryKind::Executable(what) => (
            Severity::High,
            "binary.executable",
            format!("{what} shipped in the package; its behaviour cannot be reviewed"),
        ),
        BinaryKind::Archive(what) => (
            Severity::Medium,
            "binary.archive",
            format!("{what} shipped in the package; its contents were not scanned"),
        ),
        BinaryKind::Media(what) => (
            Severity::Info,
            "binary.media",
            format!("{what}; not scanned"),
        ),
        BinaryKind::Unknown => (
            Severity::Medium,
            "binary.unknown",
            "binary data of no known format; not scanned".to_owned(),
        ),
    };
    ScanFinding::new(
        Category::Binary,
        severity,
        rule,
        path,
        0,
        String::new(),
        message,
    )
}

fn is_script(path: &str, bytes: &[u8]) -> bool {
    let ext = extension(path);
    bytes.starts_with(b"#!")
        || ext
            .as_ref()
            .is_some_and(|e| SCRIPT_EXTENSIONS.contains(&e.as_str()))
        || (path.starts_with("scripts/") && ext.is_none())
}

/// Scripts no instruction mentions, and scripts the instructions run that are missing.
///
/// `texts` are the package's text files. A script counts as referenced when `SKILL.md`
/// names it (the same rule `load_skill` uses); a script only named by another file of the
/// package (a module another script imports) is reported `Low`, one named nowhere `Medium`.
pub(crate) fn unreferenced(files: &[ScanFile<'_>], texts: &[(&str, &str)]) -> Vec<ScanFinding> {
    let mut out = Vec::new();
    let Some(skill_md) = texts
        .iter()
        .find(|(p, _)| p.eq_ignore_ascii_case("SKILL.md"))
        .map(|(_, t)| *t)
    else {
        return out;
    };
    let paths: Vec<String> = files.iter().map(|f| f.path.to_owned()).collect();
    let refs = skills_catalog::activation::referenced_files(skill_md, &paths);
    let referenced: BTreeSet<&str> = refs.scripts.iter().map(String::as_str).collect();
    for file in files {
        if !is_script(file.path, file.bytes) || referenced.contains(file.path) {
            continue;
        }
        let name = file.path.rsplit('/').next().unwrap_or(file.path);
        let stem = name.rsplit_once('.').map_or(name, |(s, _)| s);
        if skill_md.contains(name) {
            continue;
        }
        let elsewhere = texts.iter().any(|(p, t)| {
            *p != file.path && (t.contains(name) || (stem.len() >= 3 && mentions_module(t, stem)))
        });
        let (severity, message) = if elsewhere {
            (
                Severity::Low,
                "a script SKILL.md never mentions; only other package files name it",
            )
        } else {
            (
                Severity::Medium,
                "a script shipped in the package that no instruction or file mentions",
            )
        };
        out.push(ScanFinding::new(
            Category::UnreferencedScript,
            severity,
            "script.unreferenced",
            file.path,
            0,
            String::new(),
            message.to_owned(),
        ));
    }
    let mut missing: BTreeSet<String> = refs.missing_scripts.iter().cloned().collect();
    missing.extend(executed_but_missing(skill_md, &paths));
    for script in missing.iter().take(MAX_MISSING) {
        out.push(ScanFinding::new(
            Category::UnreferencedScript,
            Severity::Medium,
            "script.missing",
            "SKILL.md",
            line_of(skill_md, script),
            script.clone(),
            "the instructions run a script the package does not contain (what runs cannot be reviewed)".to_owned(),
        ));
    }
    out
}

/// Missing scripts reported at most (the rest add nothing).
const MAX_MISSING: usize = 5;

/// Local scripts that code blocks of `skill_md` execute (`./x.sh`, `bash x.sh`, `source
/// env.sh`, `python tool.py`) but `paths` does not hold. Placeholder names (`your_...`,
/// `my_...`, `example...`) are skipped.
fn executed_but_missing(skill_md: &str, paths: &[String]) -> Vec<String> {
    use std::sync::OnceLock;
    static RUN: OnceLock<Option<regex::Regex>> = OnceLock::new();
    let Some(run) = RUN
        .get_or_init(|| {
            regex::Regex::new(
                r"(?:^|[;&|(]\s*|\b(?:ba|z)?sh\s+|\bsource\s+|^\s*\.\s+|\bpython[23]?\s+|\bnode\s+)(?:\./)?([A-Za-z0-9_][A-Za-z0-9_./-]*\.(?:sh|bash|py|js|mjs|rb|pl|ps1))\b|(?:^|[;&|]\s*)\./([A-Za-z0-9_][A-Za-z0-9_.-]*)",
            )
            .ok()
        })
        .as_ref()
    else {
        return Vec::new();
    };
    let layout = super::context::layout(super::context::FileKind::Markdown, skill_md);
    let mut out = Vec::new();
    for i in 0..layout.starts.len() {
        if layout.ctx.get(i) != Some(&super::context::Ctx::Code) {
            continue;
        }
        let line = layout.line_text(skill_md, i);
        // After `cd`, a relative name is the project's file, not the package's.
        if line.contains("cd ") {
            continue;
        }
        for caps in run.captures_iter(line) {
            let Some(script) = caps.get(1).or_else(|| caps.get(2)) else {
                continue;
            };
            let script = script.as_str().trim_start_matches("./");
            // Paths with directories are the project's files; `scripts/...` ones are
            // checked by `referenced_files`.
            if script.contains('/') {
                continue;
            }
            let base = script.rsplit('/').next().unwrap_or(script);
            let lower = base.to_ascii_lowercase();
            if ["your", "my_", "my-", "example", "foo", "test_", "path"]
                .iter()
                .any(|p| lower.starts_with(p))
            {
                continue;
            }
            let shipped = paths
                .iter()
                .any(|p| p == script || p.rsplit('/').next() == Some(base));
            if !shipped {
                out.push(script.to_owned());
            }
        }
    }
    out
}

/// Whether `text` imports or requires a module named `stem`.
fn mentions_module(text: &str, stem: &str) -> bool {
    text.match_indices(stem).any(|(pos, _)| {
        let before = text[..pos].trim_end();
        before.ends_with("import")
            || before.ends_with("from")
            || before.ends_with("require(\"")
            || before.ends_with("require('")
            || before.ends_with("./")
            || before.ends_with('.')
    })
}

fn line_of(text: &str, needle: &str) -> u32 {
    text.find(needle).map_or(0, |pos| {
        u32::try_from(memchr::memchr_iter(b'\n', &text.as_bytes()[..pos]).count() + 1)
            .unwrap_or(u32::MAX)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn magic_numbers() {
        assert!(matches!(
            binary_kind(b"\x7fELF\x02\x01"),
            Some(BinaryKind::Executable(_))
        ));
        assert!(matches!(
            binary_kind(b"\x89PNG\r\n\x1a\n"),
            Some(BinaryKind::Media(_))
        ));
        assert_eq!(binary_kind(b"plain text\n"), None);
        assert_eq!(binary_kind(&[0u8; 64]), Some(BinaryKind::Unknown));
    }

    #[test]
    fn unreferenced_and_indirect_scripts() {
        let md = "---\nname: x\ndescription: y\n---\nRun `scripts/run.py`.\n";
        let run = b"import helper\n";
        let files = [
            ScanFile::new("SKILL.md", md.as_bytes()),
            ScanFile::new("scripts/run.py", run),
            ScanFile::new("scripts/helper.py", b"x = 1\n"),
            ScanFile::new("scripts/stray.sh", b"echo hi\n"),
        ];
        let texts = [
            ("SKILL.md", md),
            ("scripts/run.py", "import helper\n"),
            ("scripts/helper.py", "x = 1\n"),
            ("scripts/stray.sh", "echo hi\n"),
        ];
        let f = unreferenced(&files, &texts);
        let got: Vec<(&str, Severity)> = f.iter().map(|f| (f.file.as_str(), f.severity)).collect();
        assert_eq!(
            got,
            vec![
                ("scripts/helper.py", Severity::Low),
                ("scripts/stray.sh", Severity::Medium)
            ]
        );
    }
}
