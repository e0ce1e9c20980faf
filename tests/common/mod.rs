//! Helpers shared by the integration tests.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::{Path, PathBuf};

use skills::core::{Diagnostic, LoadOptions, Profile, Severity, SkillReport};

/// Writes `<root>/<dir>/<file>` with `content`, creating directories; returns the skill dir.
pub fn write_skill_file(root: &Path, dir: &str, file: &str, content: impl AsRef<[u8]>) -> PathBuf {
    let skill_dir = root.join(dir);
    let path = skill_dir.join(file);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(&path, content).unwrap();
    skill_dir
}

/// Writes `<root>/<dir>/SKILL.md`; returns the skill dir.
pub fn write_skill(root: &Path, dir: &str, content: impl AsRef<[u8]>) -> PathBuf {
    write_skill_file(root, dir, "SKILL.md", content)
}

pub fn spec() -> LoadOptions {
    LoadOptions::for_profile(Profile::Spec)
}

pub fn lenient() -> LoadOptions {
    LoadOptions::for_profile(Profile::Lenient)
}

/// `(code, severity)` of every diagnostic.
pub fn codes(diagnostics: &[Diagnostic]) -> Vec<(&'static str, Severity)> {
    diagnostics.iter().map(|d| (d.code(), d.severity)).collect()
}

/// Codes of the error-severity diagnostics.
pub fn errors(report: &SkillReport) -> Vec<&'static str> {
    report
        .diagnostics
        .iter()
        .filter(|d| d.is_error())
        .map(Diagnostic::code)
        .collect()
}

/// The message of the first diagnostic with `code`.
pub fn message<'a>(report: &'a SkillReport, code: &str) -> &'a str {
    report
        .diagnostics
        .iter()
        .find(|d| d.code() == code)
        .map(|d| d.message.as_str())
        .unwrap_or_else(|| panic!("no `{code}` in {:?}", report.diagnostics))
}
