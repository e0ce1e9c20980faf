//! The approved-bytes guarantee, attacked through the hook after hashing (a seam only
//! tests see): whatever happens to the file then, the approved content runs, from the run's
//! private copy.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::sync::Arc;

use super::{ProcessSandbox, SandboxConfig, SandboxRequest, Status, resolve_script};
use crate::trust::TrustLevel;

/// Whether the sandbox tests must run (CI) rather than skip.
fn required() -> bool {
    skills_testenv::isolation_required()
}

/// The default sandbox where isolation is required, else one that falls back to rlimits
/// where no cgroup can be made (non-root machines).
fn sandbox() -> ProcessSandbox {
    if required() {
        ProcessSandbox::new()
    } else {
        ProcessSandbox::new().cgroups(super::Cgroups::WhereAvailable)
    }
}

fn setup() -> Option<(tempfile::TempDir, std::path::PathBuf, std::path::PathBuf)> {
    let probe = sandbox().probe();
    if probe.tier.is_none() {
        return skills_testenv::isolation_unavailable("the sandbox's unit tests", &probe.missing);
    }
    let root = tempfile::tempdir().ok()?;
    std::fs::set_permissions(root.path(), std::fs::Permissions::from_mode(0o755)).ok()?;
    let skill = root.path().join("skill");
    let scratch = root.path().join("scratch");
    std::fs::create_dir_all(skill.join("scripts")).ok()?;
    std::fs::create_dir_all(&scratch).ok()?;
    Some((root, skill, scratch))
}

fn write_script(path: &Path, body: &str) {
    std::fs::write(path, body).expect("write");
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o644)).expect("chmod");
}

#[test]
fn a_script_swapped_after_the_hash_runs_as_approved_or_not_at_all() {
    let Some((_root, skill, scratch)) = setup() else {
        return;
    };
    let script = skill.join("scripts/s.sh");
    let config = SandboxConfig::for_trust(TrustLevel::User);
    let swaps: Vec<(&str, super::run::Hook)> = vec![
        (
            "overwritten in place",
            Arc::new(|path: &Path| write_script(path, "echo EVIL\n")),
        ),
        (
            "renamed over",
            Arc::new(|path: &Path| {
                let other = path.with_extension("new");
                write_script(&other, "echo EVIL\n");
                std::fs::rename(&other, path).expect("rename");
            }),
        ),
        (
            "replaced by a symlink",
            Arc::new(|path: &Path| {
                let other = path.with_extension("evil");
                write_script(&other, "echo EVIL\n");
                std::fs::remove_file(path).expect("remove");
                std::os::unix::fs::symlink(&other, path).expect("symlink");
            }),
        ),
    ];
    for (what, swap) in swaps {
        write_script(&script, "echo approved\n");
        let _ = std::fs::remove_file(script.with_extension("evil"));
        let approved = resolve_script(&skill, "scripts/s.sh", 1 << 20).expect("resolve");
        let sandbox = sandbox().after_hash(swap);
        let request = SandboxRequest::script(&skill, "scripts/s.sh", &scratch, config.clone())
            .sha256(approved.sha256.clone());
        let out = sandbox.run_blocking(request);
        assert_eq!(out.status, Status::Success, "{what}: {out:?}");
        assert_eq!(out.stdout.text, "approved\n", "{what}: {out:?}");
        assert_eq!(out.sha256.as_deref(), Some(approved.sha256.as_str()));
        // The file the host sees did change: the run used its copy.
        assert!(std::fs::read_to_string(&script).is_ok_and(|s| s.contains("EVIL")));
    }
}
