//! Launch overhead of the process sandbox, side by side in one run: spawn-to-exit of a
//! trivial program plain (`std::process::Command`), through `ProcessSandbox` on each tier
//! this host offers, and through bubblewrap (`bwrap --unshare-all --die-with-parent`) when
//! it is installed. As root the tiers are `namespaced` and `rlimits_only`; run the bench
//! binary as an unprivileged user (see BENCHMARKS.md) for `user_namespace`.
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use criterion::{Criterion, criterion_group, criterion_main};
use skills::security::TrustLevel;
use skills::security::sandbox::{
    Cgroups, ProcessSandbox, Program, SandboxConfig, SandboxRequest, Status, Tier,
};

fn plain(program: &str, args: &[&Path]) {
    let status = Command::new(program)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .unwrap();
    assert!(status.success());
}

fn bench(c: &mut Criterion) {
    let root = tempfile::tempdir().unwrap();
    std::fs::set_permissions(root.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let skill = root.path().join("skill");
    let scratch = root.path().join("scratch");
    std::fs::create_dir_all(skill.join("scripts")).unwrap();
    std::fs::create_dir_all(&scratch).unwrap();
    let script = skill.join("scripts/true.sh");
    std::fs::write(&script, ":\n").unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o644)).unwrap();
    let mut group = c.benchmark_group("sandbox_launch");
    group.sample_size(50);
    group.bench_function("plain_spawn_true", |b| {
        b.iter(|| plain("/usr/bin/true", &[]))
    });
    group.bench_function("plain_spawn_bash_script", |b| {
        b.iter(|| {
            plain(
                "/bin/bash",
                &[Path::new("--noprofile"), Path::new("--norc"), &script],
            )
        })
    });
    if Path::new("/usr/bin/bwrap").exists() {
        let bwrap_args = [
            "--unshare-all",
            "--die-with-parent",
            "--ro-bind",
            "/usr",
            "/usr",
            "--symlink",
            "usr/lib64",
            "/lib64",
            "--symlink",
            "usr/lib",
            "/lib",
            "--symlink",
            "usr/bin",
            "/bin",
            "--proc",
            "/proc",
            "--dev",
            "/dev",
            "--tmpfs",
            "/tmp",
        ];
        let probe = Command::new("/usr/bin/bwrap")
            .args(bwrap_args)
            .arg("/usr/bin/true")
            .status();
        if probe.is_ok_and(|s| s.success()) {
            group.bench_function("bwrap_unshare_all_true", |b| {
                b.iter(|| {
                    let status = Command::new("/usr/bin/bwrap")
                        .args(bwrap_args)
                        .arg("/usr/bin/true")
                        .stdout(Stdio::null())
                        .status()
                        .unwrap();
                    assert!(status.success());
                })
            });
        } else {
            eprintln!("bwrap is installed but cannot run here; not measured");
        }
    } else {
        eprintln!("bubblewrap is not installed (apt-get install bubblewrap); not measured");
    }
    let config = SandboxConfig::for_trust(TrustLevel::User);
    let system = SandboxRequest {
        program: Program::System(PathBuf::from("/usr/bin/true")),
        ..SandboxRequest::script(&skill, "scripts/true.sh", &scratch, config.clone())
    };
    let shell = SandboxRequest::script(&skill, "scripts/true.sh", &scratch, config);
    // Without a cgroup (a non-root host without delegation) the default refuses; the
    // launch is then measured with the RLIMIT fallback, named in the benchmark's id.
    let mut strongest = ProcessSandbox::new();
    let mut suffix = "";
    if strongest.probe().tier.is_none() {
        strongest = ProcessSandbox::new().cgroups(Cgroups::WhereAvailable);
        suffix = "_rlimit_limits";
    }
    let weakest = ProcessSandbox::new()
        .cgroups(Cgroups::WhereAvailable)
        .limit_landlock_abi(0)
        .allow_rlimits_only();
    let mut tiers: Vec<(String, ProcessSandbox)> = Vec::new();
    if let Some(tier) = strongest.probe().tier {
        tiers.push((format!("{tier}{suffix}"), strongest));
    }
    if weakest.probe().tier == Some(Tier::RlimitsOnly) {
        tiers.push((Tier::RlimitsOnly.to_string(), weakest));
    }
    for (tier, sandbox) in &tiers {
        group.bench_function(format!("sandbox_{tier}_true"), |b| {
            b.iter(|| {
                let out = sandbox.run_blocking(system.clone());
                assert_eq!(out.status, Status::Success, "{out:?}");
            })
        });
        group.bench_function(format!("sandbox_{tier}_bash_script"), |b| {
            b.iter(|| {
                let out = sandbox.run_blocking(shell.clone());
                assert_eq!(out.status, Status::Success, "{out:?}");
            })
        });
    }
    if tiers.is_empty() {
        eprintln!("the process sandbox is unavailable here; only plain spawns measured");
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
