//! What the family's tests need from their environment, decided in one place.
//!
//! Some tests need something a bare clone does not have: the published-skills corpus, the
//! labelled PII corpus, a PostgreSQL server, a Python with the MCP SDKs, or a machine that
//! can isolate a process. Each prerequisite is found through one function here, and each
//! follows one rule:
//!
//! * **Outside CI** a missing prerequisite is announced once per `cargo test` run (one line
//!   naming the group, why it is missing and how to run it), and the function returns
//!   `None`: the caller returns early and the test passes as skipped.
//! * **Under `CI=true`** (and, for the sandbox, `SKILLS_REQUIRE_ISOLATION=1`) a missing
//!   prerequisite fails the test: nothing can pass there without running.
//! * **A prerequisite that is named but wrong** (a `SKILLS_CORPUS_DIR` that is missing or
//!   lacks the expected layout) fails the test everywhere, naming the path and what was
//!   expected: a typo never turns into a silent skip.
//!
//! | group | variable | `.ci/run` sets it to |
//! |---|---|---|
//! | [`corpus`] | `SKILLS_CORPUS_DIR` | `../shared/corpus` (holds `real-skills/`, `malicious-skills/`) |
//! | [`pii_corpus`] | `SKILLS_PII_CORPUS_DIR` | `../shared/bench/pii` (holds `corpus_public.jsonl`) |
//! | [`postgres_url`] | `SKILLS_PG_URL` | a cluster `.ci/postgres.sh` starts |
//! | [`mcp_python`] | `SKILLS_MCP_PYTHON` | a venv `.ci/mcp-interop.sh` fills |
//! | [`isolation_required`] | `SKILLS_REQUIRE_ISOLATION` | `1` |
//!
//! No test names `../shared` itself: the location always comes from the variable.
//!
//! With `SKILLS_TESTENV_LOG` set to a file, every test that found its prerequisite appends
//! one line to it (`group<TAB>test name`), so a run can say how many tests each group ran
//! (`.ci/run` prints that count at its end).
// This crate's job is to fail tests, so it panics by design (never in library code).
#![allow(clippy::panic)]

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// Whether this run is CI's (`CI=true`), where every test must run.
pub fn in_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| v == "true")
}

/// Whether a sandbox test must isolate rather than skip: under CI, or with
/// `SKILLS_REQUIRE_ISOLATION=1`.
pub fn isolation_required() -> bool {
    in_ci() || std::env::var("SKILLS_REQUIRE_ISOLATION").is_ok_and(|v| v == "1")
}

/// A prerequisite of `group` is missing: fails the test when `required`, else announces the
/// group once and returns `None` so the caller can return early.
///
/// `why` says what is missing, `how` how to run the group anyway.
pub fn skip_or_fail<T>(required: bool, group: &str, why: &str, how: &str) -> Option<T> {
    if required {
        panic!("{group}: {why}. These tests must run here (CI=true); {how}");
    }
    announce_once(group, &format!("skipped {group}: {why} ({how})"));
    None
}

/// Records that the current test found `group`'s prerequisite and runs with it: one line
/// `group<TAB>test name` appended to the file `SKILLS_TESTENV_LOG` names, when set.
pub fn ran(group: &str) {
    let Some(log) = std::env::var_os("SKILLS_TESTENV_LOG").filter(|v| !v.is_empty()) else {
        return;
    };
    // The harness names each test's thread after the test.
    let test = std::thread::current()
        .name()
        .unwrap_or("an unnamed test")
        .to_owned();
    if let Ok(mut file) = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(log)
    {
        // One write per line: appends of one short line do not interleave.
        let _ = file.write_all(format!("{group}\t{test}\n").as_bytes());
    }
}

/// [`skip_or_fail`], required under `CI=true`.
pub fn missing<T>(group: &str, why: &str, how: &str) -> Option<T> {
    skip_or_fail(in_ci(), group, why, how)
}

/// Prints `line` on standard error once per `group` for this `cargo test` run.
///
/// The line goes straight to the process's standard error (the test harness captures only
/// the print macros), so it shows in a passing run. Test binaries are separate processes of
/// one cargo: a marker file keyed by the parent process (its pid and start time) keeps a
/// group to one line for the whole run, not one per binary or per test.
pub fn announce_once(group: &str, line: &str) {
    static SEEN: Mutex<Vec<String>> = Mutex::new(Vec::new());
    let mut seen = SEEN.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    if seen.iter().any(|g| g == group) {
        return;
    }
    seen.push(group.to_owned());
    if first_in_run(group) {
        let _ = writeln!(std::io::stderr(), "{line}");
    }
}

/// Whether no other process of this run announced `group` yet (true when that cannot be
/// told: a line too many beats a line missing).
fn first_in_run(group: &str) -> bool {
    let parent = std::os::unix::process::parent_id();
    // Field 22 of /proc/<pid>/stat, the start time: a reused pid is another run.
    let started = std::fs::read_to_string(format!("/proc/{parent}/stat"))
        .ok()
        .and_then(|stat| {
            let after_name = stat.rsplit_once(')')?.1.to_owned();
            after_name.split_whitespace().nth(19).map(str::to_owned)
        })
        .unwrap_or_default();
    let dir = std::env::temp_dir().join(format!("skills-testenv-{parent}-{started}"));
    if std::fs::create_dir_all(&dir).is_err() {
        return true;
    }
    let marker: String = group
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
    match std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(dir.join(marker))
    {
        Ok(_) => true,
        Err(e) => e.kind() != std::io::ErrorKind::AlreadyExists,
    }
}

/// The group of the tests over the published-skills corpus.
pub const CORPUS: &str = "the published-skills corpus tests";
/// The group of the tests over the labelled PII corpus.
pub const PII_CORPUS: &str = "the labelled PII corpus tests";
/// The group of the PostgreSQL tests.
pub const POSTGRES: &str = "the PostgreSQL tests";
/// The group of the MCP interop tests.
pub const MCP_INTEROP: &str = "the MCP interop tests (FastMCP, the Python MCP SDK)";

/// Every skill folder of a folder of collections (`<root>/<collection>/<skill>/SKILL.md`),
/// sorted: the layout of the published corpus's `real-skills/` and of the fixture
/// `tests/fixtures/collections/`. Fails when `root` cannot be read.
pub fn skill_dirs(root: &Path) -> Vec<PathBuf> {
    let read = |dir: &Path| -> Vec<PathBuf> {
        let entries = std::fs::read_dir(dir)
            .unwrap_or_else(|e| panic!("{} cannot be read: {e}", dir.display()));
        entries.flatten().map(|entry| entry.path()).collect()
    };
    let mut dirs: Vec<PathBuf> = read(root)
        .into_iter()
        .filter(|collection| collection.is_dir())
        .flat_map(|collection| read(&collection))
        .filter(|skill| skill.join("SKILL.md").is_file())
        .collect();
    dirs.sort();
    dirs
}

/// The group of the tests that run scripts in the process sandbox.
pub const SANDBOX: &str = "the process sandbox tests";

/// The published-skills corpus: `real-skills/` (36 skills from three public collections)
/// and `malicious-skills/` (labelled malicious and benign skills).
#[derive(Debug, Clone)]
pub struct Corpus {
    root: PathBuf,
}

impl Corpus {
    /// The folder `SKILLS_CORPUS_DIR` names.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// `real-skills/`: the 36 published skills, one folder per collection.
    pub fn real_skills(&self) -> PathBuf {
        self.root.join("real-skills")
    }

    /// `malicious-skills/`: the labelled scanner corpus (`labels.csv` at its top).
    pub fn malicious_skills(&self) -> PathBuf {
        self.root.join("malicious-skills")
    }
}

/// The published-skills corpus from `SKILLS_CORPUS_DIR`, canonicalized.
///
/// Unset: `None` after one announcement outside CI, a failure under `CI=true`. Set to a
/// folder that is missing or lacks `real-skills/` and `malicious-skills/labels.csv`: a
/// failure everywhere, naming the path and what was expected.
pub fn corpus() -> Option<Corpus> {
    let found = corpus_if_set();
    if found.is_some() {
        ran(CORPUS);
    }
    found.or_else(|| {
        missing(
            CORPUS,
            "SKILLS_CORPUS_DIR is not set",
            "export SKILLS_CORPUS_DIR=<the shared corpus folder> to run them",
        )
    })
}

/// [`corpus`] for benchmarks and examples, which fall back to fixtures: `None` when the
/// variable is unset, whatever the environment; a wrong value still fails.
pub fn corpus_if_set() -> Option<Corpus> {
    let dir = named_dir("SKILLS_CORPUS_DIR")?;
    check_layout(
        "SKILLS_CORPUS_DIR",
        &dir,
        &["real-skills", "malicious-skills/labels.csv"],
    );
    Some(Corpus { root: dir })
}

/// The labelled PII corpus's `corpus_public.jsonl`, from `SKILLS_PII_CORPUS_DIR` (the
/// folder holding it), with [`corpus`]'s rules.
pub fn pii_corpus() -> Option<PathBuf> {
    let found = pii_corpus_if_set();
    if found.is_some() {
        ran(PII_CORPUS);
    }
    found.or_else(|| {
        missing(
            PII_CORPUS,
            "SKILLS_PII_CORPUS_DIR is not set",
            "export SKILLS_PII_CORPUS_DIR=<the folder holding corpus_public.jsonl> to run them",
        )
    })
}

/// [`pii_corpus`] with [`corpus_if_set`]'s rules.
pub fn pii_corpus_if_set() -> Option<PathBuf> {
    let dir = named_dir("SKILLS_PII_CORPUS_DIR")?;
    check_layout("SKILLS_PII_CORPUS_DIR", &dir, &["corpus_public.jsonl"]);
    Some(dir.join("corpus_public.jsonl"))
}

/// The folder `var` names, canonicalized; `None` when unset or empty, a failure when it
/// names no folder.
fn named_dir(var: &str) -> Option<PathBuf> {
    dir_of(var, std::env::var_os(var))
}

/// [`named_dir`] on the variable's `value`.
fn dir_of(var: &str, value: Option<std::ffi::OsString>) -> Option<PathBuf> {
    let value = value.filter(|v| !v.is_empty())?;
    let path = PathBuf::from(&value);
    match std::fs::canonicalize(&path) {
        Ok(dir) if dir.is_dir() => Some(dir),
        Ok(_) => panic!("{var}={} is not a folder", path.display()),
        Err(e) => panic!("{var}={} cannot be opened: {e}", path.display()),
    }
}

/// Fails, naming `dir` and every entry of `expected` it lacks.
fn check_layout(var: &str, dir: &Path, expected: &[&str]) {
    let absent: Vec<&str> = expected
        .iter()
        .copied()
        .filter(|entry| !dir.join(entry).exists())
        .collect();
    if !absent.is_empty() {
        panic!(
            "{var}={} does not have the expected layout: it lacks {} (expected {})",
            dir.display(),
            absent.join(", "),
            expected.join(" and ")
        );
    }
}

/// The PostgreSQL server's URL from `SKILLS_PG_URL` (`source .ci/postgres.sh` starts one and
/// sets it), with the [`missing`] rule.
pub fn postgres_url() -> Option<String> {
    match std::env::var("SKILLS_PG_URL") {
        Ok(url) if !url.is_empty() => {
            ran(POSTGRES);
            Some(url)
        }
        _ => missing(
            POSTGRES,
            "SKILLS_PG_URL is not set",
            "`source .ci/postgres.sh` starts a server and sets it",
        ),
    }
}

/// The Python with `fastmcp` and `mcp` installed, from `SKILLS_MCP_PYTHON` (`source
/// .ci/mcp-interop.sh` fills a venv and sets it), with the [`missing`] rule. A value that
/// names no file fails everywhere.
pub fn mcp_python() -> Option<PathBuf> {
    let Some(value) = std::env::var_os("SKILLS_MCP_PYTHON").filter(|v| !v.is_empty()) else {
        return missing(
            MCP_INTEROP,
            "SKILLS_MCP_PYTHON is not set",
            "`source .ci/mcp-interop.sh` installs them in a venv and sets it",
        );
    };
    let path = PathBuf::from(value);
    if !path.is_file() {
        panic!(
            "SKILLS_MCP_PYTHON={} is not a file (expected a Python with fastmcp and mcp)",
            path.display()
        );
    }
    ran(MCP_INTEROP);
    Some(path)
}

/// A sandbox prerequisite (`what`, with the mechanisms it lacks) is missing: fails when
/// [`isolation_required`], else announces `what` once and returns `None`.
pub fn isolation_unavailable<T>(what: &str, missing: &[String]) -> Option<T> {
    skip_or_fail(
        isolation_required(),
        what,
        &format!("this machine lacks {}", missing.join(", ")),
        "run as root on Linux with Landlock, namespaces, seccomp and cgroups; \
         SKILLS_REQUIRE_ISOLATION=1 makes this a failure",
    )
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn a_missing_layout_names_the_path_and_what_lacks() {
        let dir = std::env::temp_dir().join(format!("testenv-layout-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("real-skills")).unwrap();
        let message = std::panic::catch_unwind(|| {
            check_layout("X", &dir, &["real-skills", "malicious-skills/labels.csv"])
        })
        .unwrap_err();
        let message = message.downcast_ref::<String>().unwrap();
        assert!(message.contains(&dir.display().to_string()), "{message}");
        assert!(
            message.contains("lacks malicious-skills/labels.csv"),
            "{message}"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// The message of the panic `f` raises.
    fn panic_message(f: impl FnOnce() + std::panic::UnwindSafe) -> String {
        let payload = std::panic::catch_unwind(f).unwrap_err();
        payload.downcast_ref::<String>().unwrap().clone()
    }

    #[test]
    fn a_variable_naming_no_folder_fails_naming_it() {
        let message = panic_message(|| {
            dir_of("SKILLS_CORPUS_DIR", Some("/no/such/corpus".into()));
        });
        assert!(
            message.starts_with("SKILLS_CORPUS_DIR=/no/such/corpus cannot be opened"),
            "{message}"
        );
        let file = std::env::current_exe().unwrap();
        let message = panic_message(|| {
            dir_of("SKILLS_CORPUS_DIR", Some(file.clone().into()));
        });
        assert!(message.ends_with("is not a folder"), "{message}");
        // Unset or empty: no folder, no failure (the caller decides to skip or fail).
        assert_eq!(dir_of("X", None), None);
        assert_eq!(dir_of("X", Some("".into())), None);
    }

    #[test]
    fn a_group_is_announced_once_per_run() {
        let group = format!("group-{}", std::process::id());
        assert!(first_in_run(&group));
        assert!(!first_in_run(&group));
    }

    #[test]
    fn a_required_prerequisite_fails() {
        let failed = std::panic::catch_unwind(|| skip_or_fail::<()>(true, "g", "why", "how"));
        let message = failed.unwrap_err();
        let message = message.downcast_ref::<String>().unwrap();
        assert!(message.starts_with("g: why."), "{message}");
    }
}
