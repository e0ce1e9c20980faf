//! The process sandbox on this machine: ordinary runs and the seed 000 permission flags.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod sandbox_common;

use sandbox_common::*;
use skills::security::TrustLevel;
use skills::security::sandbox::{SandboxConfig, Status};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bash_script_runs_with_its_arguments_in_scratch() {
    let Some(fx) = Fixture::new() else { return };
    fx.script(
        "scripts/hello.sh",
        "echo \"hello $1\"; pwd; echo hi > out.txt\n",
    );
    let out = fx
        .run_keeping("scripts/hello.sh", &["world"], config())
        .await;
    assert_eq!(out.status, Status::Success, "{out:?}");
    assert_eq!(out.exit_code, Some(0));
    let kept = out.scratch_dir.clone().unwrap();
    assert_eq!(
        out.stdout.text,
        format!("hello world\n{}\n", kept.display())
    );
    assert!(kept.starts_with(fx.scratch.canonicalize().unwrap()));
    assert_eq!(out.sha256.as_ref().unwrap().len(), 64);
    assert!(out.tier.is_some());
    assert_eq!(
        std::fs::read_to_string(kept.join("out.txt")).unwrap(),
        "hi\n"
    );
    // The kept directory is the script's HOME at the path it had; its parent, the run's
    // directory, is the caller's to remove. Without keep_scratch nothing is left behind.
    std::fs::remove_dir_all(kept.parent().unwrap()).unwrap();
    let out = fx.run("scripts/hello.sh", &["again"], config()).await;
    assert_eq!(out.status, Status::Success, "{out:?}");
    assert!(out.scratch_dir.is_none());
    assert!(
        fx.scratch_leftovers().is_empty(),
        "{:?}",
        fx.scratch_leftovers()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exit_codes_are_reported() {
    let Some(fx) = Fixture::new() else { return };
    fx.script("scripts/fail.sh", "echo oops >&2; exit 3\n");
    let out = fx.run("scripts/fail.sh", &[], config()).await;
    assert_eq!(out.status, Status::Exit { code: 3 });
    assert_eq!(out.stderr.text, "oops\n");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn python_runs_isolated_under_the_strict_preset() {
    let Some(fx) = Fixture::new() else { return };
    fx.script(
        "scripts/p.py",
        "import os, sys\nprint(sys.flags.isolated, os.getuid() != 0, sorted(os.environ))\n",
    );
    let out = fx.run("scripts/p.py", &[], SandboxConfig::strict()).await;
    assert_eq!(out.status, Status::Success, "{out:?}");
    assert!(out.stdout.text.starts_with("1 True ["), "{out:?}");
    assert!(!out.stdout.text.contains("CARGO"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn community_scripts_read_nothing_write_nothing_run_nothing() {
    let Some(fx) = Fixture::new() else { return };
    fx.script(
        "scripts/c.sh",
        // Only builtins and no subshell: without can_execute_code a fork fails too.
        "read -r l < \"$SKILL_DIR/SKILL.md\" 2>/dev/null && echo READ\necho x > \"$HOME/f\" 2>/dev/null && echo WROTE\nshopt -s execfail\nexec /usr/bin/id 2>/dev/null\necho builtin-ok\n",
    );
    let out = fx
        .run(
            "scripts/c.sh",
            &[],
            SandboxConfig::for_trust(TrustLevel::Community),
        )
        .await;
    assert_eq!(out.status, Status::Success, "{out:?}");
    assert_eq!(out.stdout.text, "builtin-ok\n", "{out:?}");
    let user = SandboxConfig::for_trust(TrustLevel::User);
    let out = fx.run("scripts/c.sh", &[], user).await;
    assert_eq!(out.stdout.text, "READ\nWROTE\nbuiltin-ok\n", "{out:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unreachable_skill_directory_is_a_clear_launch_error() {
    use std::os::unix::fs::PermissionsExt;
    let Some(fx) = Fixture::new() else { return };
    if !fx.sandbox.probe().root {
        return; // only root hosts hand the run to another uid
    }
    fx.script("scripts/x.sh", "echo ran\n");
    std::fs::set_permissions(&fx.skill, std::fs::Permissions::from_mode(0o700)).unwrap();
    let out = fx.run("scripts/x.sh", &[], config()).await;
    let Status::LaunchError { reason } = &out.status else {
        panic!("{out:?}")
    };
    assert!(reason.contains("o+x"), "{reason}");
}
