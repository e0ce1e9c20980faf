//! What a run makes (its cgroups, its scratch directory and tmpfs, its processes) is gone
//! after it, whether the script ended, was killed, or the caller dropped the future
//! mid-run. One test in its own binary: nothing else runs sandboxes beside it, so the
//! host-wide checks (cgroups, processes of the sandbox's uids) see only this test's runs.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod sandbox_common;

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
    assert!(leftover_cgroups().is_empty(), "{:?}", leftover_cgroups());
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
    assert!(
        settled(leftover_cgroups).is_empty(),
        "{:?}",
        leftover_cgroups()
    );
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
}
