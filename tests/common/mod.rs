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

/// True when this process runs as root (which reads files whatever their permissions).
pub fn is_root() -> bool {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|status| {
            status
                .lines()
                .find(|l| l.starts_with("Uid:"))
                .map(|l| l.split_whitespace().nth(1) == Some("0"))
        })
        .unwrap_or(false)
}

/// Runs the named test of this test binary again as `nobody` (uid 65534), from a copy of the
/// binary in a world-readable temporary directory, and asserts that it passed. Tests about
/// unreadable files call this when they run as root, so that CI (which runs as root) still
/// exercises the unreadable path.
pub fn rerun_as_nobody(test: &str) {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let exe = dir.path().join("test-binary");
    std::fs::copy(std::env::current_exe().unwrap(), &exe).unwrap();
    std::fs::set_permissions(&exe, std::fs::Permissions::from_mode(0o755)).unwrap();
    // Retried while the copy is "busy": a sandbox run of another test in this binary may be
    // between its `clone` and its `execve`, holding the copy's write descriptor
    // (close-on-exec only closes at the exec).
    for attempt in 0..20 {
        let output = std::process::Command::new("setpriv")
            .args(["--reuid=65534", "--regid=65534", "--clear-groups"])
            .arg(&exe)
            .args(["--exact", test, "--test-threads=1"])
            .current_dir(dir.path())
            .env("TMPDIR", "/tmp")
            .output()
            .expect("setpriv (util-linux) is needed to run this test as root");
        let stdout = String::from_utf8_lossy(&output.stdout);
        let stderr = String::from_utf8_lossy(&output.stderr);
        if stderr.contains("Text file busy") && attempt < 19 {
            std::thread::sleep(std::time::Duration::from_millis(100));
            continue;
        }
        assert!(
            output.status.success() && stdout.contains("1 passed"),
            "the unprivileged run of {test} failed:\n{stdout}\n{stderr}"
        );
        return;
    }
}
