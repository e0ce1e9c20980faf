#![no_main]
//! The skill scanner on arbitrary packages: no panic, findings point inside the package (a
//! file it was given, a line that file has), evidence stays short, and the verdict agrees with
//! the score.

use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use skills_security::scan::{ScanFile, Scanner};

fn scanner() -> &'static Scanner {
    static S: OnceLock<Scanner> = OnceLock::new();
    S.get_or_init(Scanner::new)
}

fuzz_target!(|data: &[u8]| {
    // Files are separated by a NUL line; each starts with its path up to the first newline.
    let mut owned = Vec::new();
    for chunk in data.split(|b| *b == 0).take(8) {
        let (path, bytes) = match chunk.iter().position(|b| *b == b'\n') {
            Some(at) => (String::from_utf8_lossy(&chunk[..at]).into_owned(), &chunk[at + 1..]),
            None => ("SKILL.md".to_owned(), chunk),
        };
        owned.push((path, bytes));
    }
    let files: Vec<ScanFile<'_>> =
        owned.iter().map(|(path, bytes)| ScanFile::new(path, bytes)).collect();
    let report = scanner().scan_files("fuzz-skill", &files);
    assert!(report.score <= 100);
    for finding in &report.findings {
        // Package-level findings (a spoofed name, no SKILL.md) name the skill, not a file.
        let file = owned.iter().find(|(path, _)| *path == finding.file);
        if let Some((_, bytes)) = file {
            let lines = bytes.split(|b| *b == b'\n').count() as u32;
            assert!(finding.line <= lines.max(1), "{finding:?}");
        }
        assert!(finding.evidence.chars().count() <= 400, "{finding:?}");
    }
});
