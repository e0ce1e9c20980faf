//! Shared fixtures of the sandbox tests.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use skills::security::TrustLevel;
use skills::security::sandbox::{
    Outcome, ProcessSandbox, Sandbox, SandboxConfig, SandboxRequest, Tier,
};

/// A skill directory and a scratch directory, both reachable by the sandbox's uid.
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

impl Fixture {
    /// `None` (with a message) only when the design note's mechanisms are missing here.
    pub fn new() -> Option<Fixture> {
        let sandbox = ProcessSandbox::new();
        let probe = sandbox.probe();
        if probe.tier.is_none() {
            eprintln!(
                "SKIPPED: the process sandbox is unavailable here: {:?}",
                probe.missing
            );
            return None;
        }
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
        Some(Fixture {
            root,
            skill,
            scratch,
            sandbox,
        })
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
}

/// Processes whose real uid is `uid` (scans /proc).
pub fn processes_of_uid(uid: u32) -> Vec<u32> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(status) =
            std::fs::read_to_string(Path::new("/proc").join(pid.to_string()).join("status"))
        else {
            continue;
        };
        if let Some(line) = status.lines().find(|l| l.starts_with("Uid:"))
            && line.split_whitespace().nth(1) == Some(&uid.to_string())
        {
            found.push(pid);
        }
    }
    found
}
