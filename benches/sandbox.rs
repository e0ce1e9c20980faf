//! Launch overhead of the process sandbox: spawn-to-exit of a trivial program, plain and
//! through the full sandbox (uid drop, namespaces, Landlock, seccomp, rlimits, supervision).
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;

use criterion::{Criterion, criterion_group, criterion_main};
use skills::security::TrustLevel;
use skills::security::sandbox::{
    ProcessSandbox, Program, Sandbox, SandboxConfig, SandboxRequest, Status,
};

fn bench(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let root = tempfile::tempdir().unwrap();
    std::fs::set_permissions(root.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let skill = root.path().join("skill");
    let scratch = root.path().join("scratch");
    std::fs::create_dir_all(skill.join("scripts")).unwrap();
    std::fs::create_dir_all(&scratch).unwrap();
    std::fs::write(skill.join("scripts/true.sh"), ":\n").unwrap();
    std::fs::set_permissions(
        skill.join("scripts/true.sh"),
        std::fs::Permissions::from_mode(0o644),
    )
    .unwrap();
    let mut group = c.benchmark_group("sandbox_launch");
    group.sample_size(30);
    group.bench_function("plain_spawn_true", |b| {
        b.iter(|| {
            rt.block_on(async {
                tokio::process::Command::new("/bin/true")
                    .status()
                    .await
                    .unwrap()
            })
        })
    });
    group.bench_function("plain_spawn_bash_script", |b| {
        b.iter(|| {
            rt.block_on(async {
                tokio::process::Command::new("/bin/bash")
                    .args(["--noprofile", "--norc"])
                    .arg(skill.join("scripts/true.sh"))
                    .status()
                    .await
                    .unwrap()
            })
        })
    });
    let sandbox = ProcessSandbox::new();
    let Some(tier) = sandbox.probe().tier else {
        eprintln!("the process sandbox is unavailable here; only plain spawns measured");
        return;
    };
    let config = SandboxConfig::for_trust(TrustLevel::User);
    let system = SandboxRequest {
        program: Program::System(PathBuf::from("/usr/bin/true")),
        ..SandboxRequest::script(&skill, "scripts/true.sh", &scratch, config.clone())
    };
    group.bench_function(format!("sandbox_{tier}_true"), |b| {
        b.iter(|| {
            let out = rt.block_on(sandbox.run(system.clone()));
            assert_eq!(out.status, Status::Success);
        })
    });
    let script = SandboxRequest::script(&skill, "scripts/true.sh", &scratch, config);
    group.bench_function(format!("sandbox_{tier}_bash_script"), |b| {
        b.iter(|| {
            let out = rt.block_on(sandbox.run(script.clone()));
            assert_eq!(out.status, Status::Success);
        })
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
