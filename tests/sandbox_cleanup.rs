//! What a run makes (its cgroups, its scratch directory and tmpfs, its processes) is gone
//! after it, whether the script ended, was killed, or the caller dropped the future
//! mid-run. One test in its own binary: nothing else runs sandboxes beside it, so the
//! host-wide checks (cgroups, processes of the sandbox's uids) see only this test's runs.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod sandbox_common;

use std::io::BufRead;
use std::time::{Duration, Instant};

use sandbox_common::*;
use skills::security::sandbox::{LimitMechanism, Sandbox, Status};

fn settled<T>(check: impl Fn() -> Vec<T>) -> Vec<T> {
    let deadline = Instant::now() + Duration::from_secs(3);
    loop {
        let left = check();
        if left.is_empty() || Instant::now() > deadline {
            return left;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn own_mounts_of(path: &std::path::Path) -> Vec<String> {
    std::fs::read_to_string("/proc/self/mountinfo")
        .unwrap()
        .lines()
        .filter(|l| l.contains(&*path.to_string_lossy()))
        .map(str::to_owned)
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn runs_leave_nothing_behind_however_they_end() {
    let Some(fx) = Fixture::new() else { return };
    // Only this test's runs count: a host killed earlier may have left empty cgroups.
    let before = leftover_cgroups();
    let new_cgroups = || {
        let mut now = leftover_cgroups();
        now.retain(|c| !before.contains(c));
        now
    };
    fx.script(
        "scripts/linger.sh",
        "(sleep 60) &\nsetsid bash -c 'sleep 60' </dev/null >/dev/null 2>&1 &\necho x > \"$HOME/f\"\nsleep 60\n",
    );
    // Killed by its timeout.
    let out = fx
        .run(
            "scripts/linger.sh",
            &[],
            config().with_timeout(Duration::from_millis(500)),
        )
        .await;
    assert_eq!(out.status, Status::Timeout, "{out:?}");
    if is_root() {
        assert!(matches!(
            out.enforcement.memory,
            Some(LimitMechanism::CgroupV1 | LimitMechanism::CgroupV2)
        ));
    }
    // The caller drops the future mid-run.
    let dropped = tokio::time::timeout(
        Duration::from_millis(400),
        fx.sandbox
            .run(fx.request("scripts/linger.sh", &[], config())),
    )
    .await;
    assert!(dropped.is_err(), "the run should still be going");
    // The script exits on its own while children linger.
    fx.script("scripts/quick.sh", "(sleep 60) &\necho done\n");
    let out = fx.run("scripts/quick.sh", &[], config()).await;
    assert_eq!(out.status, Status::Success, "{out:?}");
    assert!(settled(new_cgroups).is_empty(), "{:?}", new_cgroups());
    if is_root() {
        assert!(
            settled(sandbox_processes).is_empty(),
            "{:?}",
            sandbox_processes()
        );
    }
    assert!(settled(|| fx.scratch_leftovers()).is_empty());
    assert!(
        own_mounts_of(&fx.scratch).is_empty(),
        "{:?}",
        own_mounts_of(&fx.scratch)
    );

    // The host itself dies mid-run (SIGKILL): the run dies with it.
    let token = format!("{:x}", std::process::id() as u64 * 2_654_435_761);
    let mut host = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "host_that_dies",
            "--exact",
            "--nocapture",
            "--test-threads",
            "1",
        ])
        .env("SKILLS_SANDBOX_TEST_HOST", &token)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut lines = std::io::BufReader::new(host.stdout.take().unwrap()).lines();
    let root = loop {
        let line = lines
            .next()
            .expect("the host ended before its run started")
            .unwrap();
        // libtest's "test host_that_dies ... " may precede it on the line.
        if let Some((_, root)) = line.split_once("RUNNING ") {
            break std::path::PathBuf::from(root);
        }
    };
    assert!(!processes_mentioning(&token).is_empty(), "the run is going");
    host.kill().unwrap();
    host.wait().unwrap();
    let survivors = settled(|| processes_mentioning(&token));
    assert!(
        survivors.is_empty(),
        "the run outlived its host: {survivors:?}"
    );
    // What a killed host leaves: empty cgroups (swept by the next sandbox after ten
    // minutes) and its directories. Removed here so that reruns start clean.
    for dir in new_cgroups() {
        let _ = std::fs::remove_dir(dir);
    }
    let _ = std::fs::remove_dir_all(root);
}

/// Processes whose command line mentions `token`.
fn processes_mentioning(token: &str) -> Vec<u32> {
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| e.file_name().to_string_lossy().parse::<u32>().ok())
        .filter(|pid| *pid != std::process::id())
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/cmdline"))
                .is_ok_and(|c| String::from_utf8_lossy(&c).contains(token))
        })
        .collect()
}

/// The host the test above kills: a no-op unless `SKILLS_SANDBOX_TEST_HOST` is set.
#[test]
fn host_that_dies() {
    let Ok(token) = std::env::var("SKILLS_SANDBOX_TEST_HOST") else {
        return;
    };
    let fx = Fixture::new().unwrap();
    let script = format!("scripts/linger-{token}.sh");
    fx.script(&script, "sleep 60\n");
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let run = fx.sandbox.run(fx.request(&script, &[], config()));
        tokio::pin!(run);
        let _ = tokio::time::timeout(Duration::from_millis(500), &mut run).await;
        println!("RUNNING {}", fx.root.path().display());
        let _ = run.await;
    });
}
