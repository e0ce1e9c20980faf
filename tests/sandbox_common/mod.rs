//! Shared fixtures of the sandbox tests.
//!
//! A machine that cannot isolate skips these tests with a message, except under `CI=true`
//! or `SKILLS_REQUIRE_ISOLATION=1` (which `.ci/run` sets): there a fixture that cannot
//! isolate, or would fall back to a weaker mechanism, fails with the list of what is
//! missing, so no sandbox test can pass without running.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use skills::security::TrustLevel;
use skills::security::sandbox::{
    Cgroups, Outcome, ProcessSandbox, Sandbox, SandboxConfig, SandboxRequest, Tier,
};

pub use skills_testenv::isolation_required;

/// Skips (returns `None`, announcing `what` once) or, when isolation is required, fails
/// naming `missing`.
pub fn unavailable<T>(what: &str, missing: &[String]) -> Option<T> {
    skills_testenv::isolation_unavailable(what, missing)
}

/// A skill directory and a scratch root, both reachable by the sandbox's uid.
pub struct Fixture {
    pub root: tempfile::TempDir,
    pub skill: PathBuf,
    pub scratch: PathBuf,
    pub sandbox: ProcessSandbox,
}

/// A user-trust config that may run other programs, with short limits.
pub fn config() -> SandboxConfig {
    SandboxConfig::for_trust(TrustLevel::User)
        .with_permissions(true, true, true)
        .with_timeout(Duration::from_secs(10))
}

/// Whether this process runs as root.
pub fn is_root() -> bool {
    std::fs::read_to_string("/proc/self/status")
        .unwrap()
        .lines()
        .any(|l| l.starts_with("Uid:") && l.split_whitespace().nth(1) == Some("0"))
}

/// The sandbox the tests use: the default (cgroups required) where isolation is required;
/// elsewhere cgroups where available, so that a non-root machine without a delegated
/// cgroup still runs the tests that do not need one.
pub fn sandbox() -> ProcessSandbox {
    if isolation_required() {
        ProcessSandbox::new()
    } else {
        ProcessSandbox::new().cgroups(Cgroups::WhereAvailable)
    }
}

impl Fixture {
    /// A fixture on [`sandbox()`]; see the module docs for when it is `None`.
    pub fn new() -> Option<Fixture> {
        Fixture::with(sandbox())
    }

    /// A fixture on `sandbox`.
    pub fn with(sandbox: ProcessSandbox) -> Option<Fixture> {
        let probe = sandbox.probe();
        let mut missing = probe.missing.clone();
        if isolation_required() {
            // CI machines have every mechanism: a fallback there is a regression.
            missing.extend(probe.fallbacks.iter().cloned());
        }
        if !Path::new("/usr/bin/python3").exists() {
            missing.push("python3 (.ci/run installs it)".into());
        }
        if probe.tier.is_none() || !missing.is_empty() {
            return unavailable(skills_testenv::SANDBOX, &missing);
        }
        skills_testenv::ran(skills_testenv::SANDBOX);
        if is_root() {
            assert_eq!(
                probe.tier,
                Some(Tier::Namespaced),
                "root hosts get the strongest tier"
            );
        }
        Some(Fixture::in_tempdir(sandbox))
    }

    /// A fixture on `sandbox` without probing it: a skill directory with `scripts/` and a
    /// scratch root in a fresh temporary directory (mode 0755, so a sandbox user can reach
    /// it). For callers that checked the sandbox themselves.
    pub fn in_tempdir(sandbox: ProcessSandbox) -> Fixture {
        let root = tempfile::tempdir().unwrap();
        std::fs::set_permissions(root.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
        let skill = root.path().join("skill");
        let scratch = root.path().join("scratch");
        std::fs::create_dir_all(skill.join("scripts")).unwrap();
        std::fs::create_dir_all(&scratch).unwrap();
        std::fs::write(
            skill.join("SKILL.md"),
            "---\nname: skill\ndescription: d\n---\nbody\n",
        )
        .unwrap();
        Fixture {
            root,
            skill,
            scratch,
            sandbox,
        }
    }

    /// Whether cgroups hold memory and tasks here; when they do not, a test about what
    /// only a cgroup guarantees skips (or fails, when isolation is required).
    pub fn has_cgroups(&self) -> bool {
        use skills::security::sandbox::LimitMechanism::{CgroupV1, CgroupV2};
        let probe = self.sandbox.probe();
        let ok = matches!(probe.memory, Some(CgroupV1 | CgroupV2))
            && matches!(probe.tasks, Some(CgroupV1 | CgroupV2));
        ok || unavailable::<()>("a cgroup for memory and tasks", &probe.fallbacks).is_some()
    }

    pub fn tier(&self) -> Tier {
        self.sandbox.probe().tier.unwrap()
    }

    pub fn script(&self, rel: &str, body: &str) -> PathBuf {
        let path = self.skill.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, body).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        path
    }

    pub fn request(&self, rel: &str, args: &[&str], config: SandboxConfig) -> SandboxRequest {
        SandboxRequest::script(&self.skill, rel, &self.scratch, config).args(args.iter().copied())
    }

    pub async fn run(&self, rel: &str, args: &[&str], config: SandboxConfig) -> Outcome {
        self.sandbox.run(self.request(rel, args, config)).await
    }

    /// Runs and keeps the scratch directory's files (`outcome.scratch_dir`).
    pub async fn run_keeping(&self, rel: &str, args: &[&str], config: SandboxConfig) -> Outcome {
        self.sandbox
            .run(self.request(rel, args, config).keep_scratch())
            .await
    }

    /// A directory outside the skill and scratch holding a secret file.
    pub fn secret_dir(&self) -> PathBuf {
        let dir = self.root.path().join("host-secrets");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
        let file = dir.join("secret.txt");
        std::fs::write(&file, "TOP-SECRET-VALUE").unwrap();
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).unwrap();
        dir
    }

    /// What is left in the scratch root (runs that did not keep theirs leave nothing).
    pub fn scratch_leftovers(&self) -> Vec<PathBuf> {
        std::fs::read_dir(&self.scratch)
            .unwrap()
            .flatten()
            .map(|e| e.path())
            .collect()
    }
}

/// The uid a process runs as, from `/proc/<pid>/status`.
fn uid_of(pid: u32) -> Option<u32> {
    let status =
        std::fs::read_to_string(Path::new("/proc").join(pid.to_string()).join("status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("Uid:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

fn all_pids() -> Vec<u32> {
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| e.file_name().to_string_lossy().parse::<u32>().ok())
        .collect()
}

/// Processes whose real uid is `uid` (scans /proc).
pub fn processes_of_uid(uid: u32) -> Vec<u32> {
    all_pids()
        .into_iter()
        .filter(|pid| uid_of(*pid) == Some(uid))
        .collect()
}

/// Processes running as any uid of the sandbox's range.
pub fn sandbox_processes() -> Vec<u32> {
    let base = skills::security::sandbox::DEFAULT_UID_BASE;
    all_pids()
        .into_iter()
        .filter(|pid| uid_of(*pid).is_some_and(|u| u >= base && u < base + 1_000_000))
        .collect()
}

/// Run cgroups (`skills-run-*`) left under the host's own cgroups.
pub fn leftover_cgroups() -> Vec<PathBuf> {
    let mut left = Vec::new();
    let cgroup = std::fs::read_to_string("/proc/self/cgroup").unwrap_or_default();
    for line in cgroup.lines() {
        let mut parts = line.splitn(3, ':');
        let (Some(_), Some(controllers), Some(path)) = (parts.next(), parts.next(), parts.next())
        else {
            continue;
        };
        for controller in ["memory", "pids"] {
            if controllers.split(',').any(|c| c == controller) {
                let dir = Path::new("/sys/fs/cgroup")
                    .join(controller)
                    .join(path.trim_start_matches('/'));
                if let Ok(entries) = std::fs::read_dir(&dir) {
                    left.extend(entries.flatten().map(|e| e.path()).filter(|p| {
                        p.file_name()
                            .is_some_and(|n| n.to_string_lossy().starts_with("skills-run-"))
                    }));
                }
            }
        }
    }
    left
}
