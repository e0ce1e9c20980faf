//! Hostile scripts against the process sandbox, one per category of the design note, run as
//! root in CI. Each asserts containment and the outcome's classification.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod sandbox_common;

use std::io::ErrorKind;
use std::net::TcpListener;
use std::time::Duration;

use sandbox_common::*;
use skills::security::sandbox::{Network, Sandbox, SandboxConfig, SandboxRequest, Status, Tier};

fn runs(fx: &Fixture) -> bool {
    // On root hosts (CI) the strongest tier must be what runs.
    if is_root() {
        assert_eq!(fx.tier(), Tier::Namespaced);
    }
    true
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reading_secrets_outside_skill_and_scratch_fails() {
    let Some(fx) = Fixture::new() else { return };
    assert!(runs(&fx));
    let secrets = fx.secret_dir();
    fx.script(
        "scripts/read.sh",
        r#"s="$1"
cat "$s/secret.txt" && echo LEAK-direct
ls /root && echo LEAK-root
cat /etc/shadow && echo LEAK-shadow
cat /proc/1/environ && echo LEAK-proc
ls /tmp && echo LEAK-tmp
ln -s "$s/secret.txt" "$HOME/link" && cat "$HOME/link" && echo LEAK-symlink
ln "$s/secret.txt" "$HOME/hard" && cat "$HOME/hard" && echo LEAK-hardlink
cat "$SKILL_DIR/SKILL.md" > /dev/null && echo skill-readable
echo done
"#,
    );
    let out = fx
        .run("scripts/read.sh", &[secrets.to_str().unwrap()], config())
        .await;
    assert_eq!(out.status, Status::Success, "{out:?}");
    assert!(out.stdout.text.contains("skill-readable"), "{out:?}");
    assert!(out.stdout.text.contains("done"));
    assert!(!out.stdout.text.contains("LEAK"), "{}", out.stdout.text);
    assert!(
        !out.stdout.text.contains("TOP-SECRET"),
        "{}",
        out.stdout.text
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn writing_outside_scratch_fails() {
    let Some(fx) = Fixture::new() else { return };
    let secrets = fx.secret_dir();
    let skill_md = std::fs::read(fx.skill.join("SKILL.md")).unwrap();
    fx.script(
        "scripts/write.sh",
        r#"s="$1"
echo pwned > "$SKILL_DIR/SKILL.md" && echo WROTE-skill
echo pwned > "$SKILL_DIR/new.txt" && echo WROTE-skill-new
echo pwned > "$s/secret.txt" && echo WROTE-secret
echo pwned > "$s/new.txt" && echo WROTE-secret-new
echo pwned > /tmp/skills-sandbox-pwned && echo WROTE-tmp
echo pwned > /dev/shm/skills-sandbox-pwned && echo WROTE-shm
echo 0 > /proc/sys/kernel/core_pattern && echo WROTE-sysctl
echo ok > "$HOME/result.txt" && echo wrote-scratch
"#,
    );
    let core_pattern = std::fs::read("/proc/sys/kernel/core_pattern").unwrap();
    let out = fx
        .run_keeping("scripts/write.sh", &[secrets.to_str().unwrap()], config())
        .await;
    assert!(out.status.ran(), "{out:?}");
    assert!(!out.stdout.text.contains("WROTE"), "{}", out.stdout.text);
    assert!(out.stdout.text.contains("wrote-scratch"), "{out:?}");
    assert_eq!(std::fs::read(fx.skill.join("SKILL.md")).unwrap(), skill_md);
    assert!(!fx.skill.join("new.txt").exists());
    assert_eq!(
        std::fs::read_to_string(secrets.join("secret.txt")).unwrap(),
        "TOP-SECRET-VALUE"
    );
    assert!(!secrets.join("new.txt").exists());
    assert!(!std::path::Path::new("/tmp/skills-sandbox-pwned").exists());
    assert!(!std::path::Path::new("/dev/shm/skills-sandbox-pwned").exists());
    assert_eq!(
        std::fs::read("/proc/sys/kernel/core_pattern").unwrap(),
        core_pattern
    );
    assert_eq!(
        std::fs::read_to_string(out.scratch_dir.unwrap().join("result.txt")).unwrap(),
        "ok\n"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_packet_reaches_a_host_listener() {
    let Some(fx) = Fixture::new() else { return };
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let port = listener.local_addr().unwrap().port().to_string();
    let udp = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    udp.set_nonblocking(true).unwrap();
    let udp_port = udp.local_addr().unwrap().port().to_string();
    fx.script(
        "scripts/net.sh",
        r#"(exec 3<>"/dev/tcp/127.0.0.1/$1" && echo hi >&3 && echo CONNECTED-tcp)
(echo hi > "/dev/udp/127.0.0.1/$2" && echo SENT-udp)
(exec 3<>/dev/tcp/1.1.1.1/53 && echo CONNECTED-internet)
echo done
"#,
    );
    let out = fx
        .run("scripts/net.sh", &[&port, &udp_port], config())
        .await;
    assert_eq!(out.status, Status::Success, "{out:?}");
    assert!(!out.stdout.text.contains("CONNECTED"), "{out:?}");
    assert!(!out.stdout.text.contains("SENT"), "{out:?}");
    assert!(out.stdout.text.contains("done"));
    assert_eq!(
        listener.accept().map(|_| ()).unwrap_err().kind(),
        ErrorKind::WouldBlock
    );
    let mut buf = [0u8; 16];
    assert_eq!(
        udp.recv(&mut buf).unwrap_err().kind(),
        ErrorKind::WouldBlock
    );
    if std::path::Path::new("/usr/bin/python3").exists() {
        fx.script(
            "scripts/net.py",
            "import socket, sys\nfor fam, kind in [(socket.AF_INET, socket.SOCK_STREAM), (socket.AF_INET, socket.SOCK_DGRAM), (socket.AF_INET, socket.SOCK_RAW), (socket.AF_UNIX, socket.SOCK_STREAM), (socket.AF_NETLINK, socket.SOCK_RAW)]:\n    try:\n        socket.socket(fam, kind)\n        print('SOCKET', fam, kind)\n    except OSError as e:\n        print('denied', e.errno)\n",
        );
        let out = fx.run("scripts/net.py", &[], config()).await;
        assert_eq!(out.status, Status::Success, "{out:?}");
        assert!(!out.stdout.text.contains("SOCKET"), "{out:?}");
        assert_eq!(out.stdout.text.matches("denied").count(), 5, "{out:?}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_host_environment_does_not_leak() {
    let Some(fx) = Fixture::new() else { return };
    // cargo sets CARGO_MANIFEST_DIR and CARGO_PKG_NAME in this process's environment.
    assert!(std::env::var_os("CARGO_MANIFEST_DIR").is_some());
    fx.script("scripts/env.sh", "export -p\n");
    let out = fx.run("scripts/env.sh", &[], config()).await;
    assert_eq!(out.status, Status::Success, "{out:?}");
    let names: Vec<&str> = out
        .stdout
        .text
        .lines()
        .filter_map(|l| l.strip_prefix("declare -x "))
        .map(|l| l.split('=').next().unwrap())
        .collect();
    let allowed = [
        "HOME",
        "LANG",
        "OLDPWD",
        "PATH",
        "PWD",
        "SHLVL",
        "SKILL_DIR",
        "TMPDIR",
    ];
    for name in &names {
        assert!(allowed.contains(name), "leaked {name}: {names:?}");
    }
    assert!(names.contains(&"PATH") && names.contains(&"SKILL_DIR"));
    assert!(out.stdout.text.contains("PATH=\"/usr/bin:/bin\""));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fork_flood_is_bounded_and_leaves_nothing() {
    let Some(fx) = Fixture::new() else { return };
    fx.script(
        "scripts/bomb.sh",
        "id -u\nfor i in $(seq 1 400); do (sleep 30) & done 2>/dev/null\necho spawned\nwait\n",
    );
    let cfg = config()
        .with_max_tasks(64)
        .with_timeout(Duration::from_secs(2));
    let out = fx.run("scripts/bomb.sh", &[], cfg).await;
    assert_eq!(out.status, Status::Timeout, "{out:?}");
    if fx.has_cgroups() {
        assert!(out.usage.task_limit_reached, "{out:?}");
    }
    let uid: u32 = out
        .stdout
        .text
        .lines()
        .next()
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert_ne!(uid, 0);
    if !is_root() {
        return; // the script keeps the host user's uid: the host's own processes share it
    }
    let survivors = processes_of_uid(uid);
    for pid in &survivors {
        eprintln!(
            "{}",
            std::fs::read_to_string(format!("/proc/{pid}/status"))
                .unwrap_or_default()
                .lines()
                .take(9)
                .collect::<Vec<_>>()
                .join(" | ")
        );
    }
    assert!(survivors.is_empty(), "survivors of uid {uid}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_memory_balloon_hits_the_memory_limit() {
    let Some(fx) = Fixture::new() else { return };
    fx.script(
        "scripts/mem.py",
        "x = bytearray(1024 * 1024 * 1024)\nprint('ALLOCATED')\n",
    );
    // The strict preset's memory limit, with CPU time to spare: on a loaded host Python's
    // start alone can use up the preset's 0.5 s of CPU, and that limit is not under test here
    // (`a_cpu_spin_hits_the_cpu_limit` is).
    let mut config = SandboxConfig::strict();
    config.cpu_time = std::time::Duration::from_secs(10);
    let out = fx.run("scripts/mem.py", &[], config).await;
    assert_eq!(out.status, Status::MemoryLimit, "{out:?}");
    assert!(!out.stdout.text.contains("ALLOCATED"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cpu_spin_hits_the_cpu_limit() {
    let Some(fx) = Fixture::new() else { return };
    fx.script("scripts/spin.sh", "while :; do :; done\n");
    let out = fx
        .run("scripts/spin.sh", &[], SandboxConfig::strict())
        .await;
    assert_eq!(out.status, Status::CpuLimit, "{out:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn host_processes_cannot_be_signalled() {
    let Some(fx) = Fixture::new() else { return };
    let mut victim = std::process::Command::new("sleep")
        .arg("30")
        .spawn()
        .unwrap();
    let pid = victim.id().to_string();
    let host = std::process::id().to_string();
    fx.script(
        "scripts/kill.sh",
        "kill -9 \"$1\" && echo KILLED-victim\nkill -9 \"$2\" && echo KILLED-host\nkill -9 -1\necho after\n",
    );
    let out = fx.run("scripts/kill.sh", &[&pid, &host], config()).await;
    assert!(out.status.ran(), "{out:?}");
    assert!(!out.stdout.text.contains("KILLED"), "{out:?}");
    assert!(
        victim.try_wait().unwrap().is_none(),
        "the host's process was killed"
    );
    victim.kill().unwrap();
    victim.wait().unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_script_is_unprivileged() {
    let Some(fx) = Fixture::new() else { return };
    fx.script(
        "scripts/priv.sh",
        "echo \"uid=$(id -u) gid=$(id -g) groups=$(id -G)\"\nunshare -U true && echo NESTED-userns\nsu -c true root 2>/dev/null && echo SU\nhostname evil 2>/dev/null && echo HOSTNAME\necho end\n",
    );
    let hostname = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap();
    let out = fx.run("scripts/priv.sh", &[], config()).await;
    assert_eq!(out.status, Status::Success, "{out:?}");
    let line = out.stdout.text.lines().next().unwrap();
    let uid: u32 = line.split_whitespace().next().unwrap()[4..]
        .parse()
        .unwrap();
    assert_ne!(uid, 0, "{line}");
    assert!(
        line.ends_with(&format!("groups={uid}")) || fx.tier() == Tier::UserNamespace,
        "{line}"
    );
    assert!(!out.stdout.text.contains("NESTED"), "{out:?}");
    assert!(!out.stdout.text.contains("SU"), "{out:?}");
    assert!(!out.stdout.text.contains("HOSTNAME"), "{out:?}");
    assert_eq!(
        std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap(),
        hostname
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nothing_outlives_the_timeout_or_the_script() {
    let Some(fx) = Fixture::new() else { return };
    fx.script(
        "scripts/daemon.sh",
        "id -u\n(sleep 30) &\nsetsid bash -c 'sleep 30' > /dev/null 2>&1 < /dev/null &\nsleep 100\n",
    );
    let cfg = config().with_timeout(Duration::from_millis(700));
    let out = fx.run("scripts/daemon.sh", &[], cfg.clone()).await;
    assert_eq!(out.status, Status::Timeout, "{out:?}");
    // A background child holding stdout, and a script that exits at once.
    fx.script("scripts/orphan.sh", "id -u\n(sleep 30) &\necho started\n");
    let quick = fx.run("scripts/orphan.sh", &[], cfg).await;
    assert_eq!(quick.status, Status::Success, "{quick:?}");
    assert!(quick.duration < Duration::from_secs(2), "{quick:?}");
    for run in [&out, &quick] {
        let uid: u32 = run
            .stdout
            .text
            .lines()
            .next()
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        if is_root() {
            assert!(
                processes_of_uid(uid).is_empty(),
                "a process of uid {uid} outlived its run"
            );
        }
    }
    assert!(fx.scratch_leftovers().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn output_floods_are_capped_and_hostile_bytes_neutralised() {
    let Some(fx) = Fixture::new() else { return };
    fx.script(
        "scripts/flood.sh",
        "printf 'APPROVE? [y]\\033[2J\\033]52;c;ZXZpbA==\\007\\0\\n'\nyes\n",
    );
    let out = fx
        .run(
            "scripts/flood.sh",
            &[],
            config().with_max_output_bytes(64 * 1024),
        )
        .await;
    assert_eq!(out.status, Status::OutputLimit, "{:?}", out.status);
    assert!(out.stdout.truncated);
    assert_eq!(out.stdout.bytes.len(), 64 * 1024);
    assert!(out.stdout.bytes.contains(&0x1b));
    assert!(
        out.stdout.text.starts_with("APPROVE? [y]\\u{0000}\ny\n"),
        "{:?}",
        &out.stdout.text[..40]
    );
    assert!(!out.stdout.text.contains('\u{1b}'));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn arguments_are_never_a_shell_string() {
    let Some(fx) = Fixture::new() else { return };
    fx.script("scripts/args.sh", "printf '[%s]\\n' \"$@\"\n");
    let out = fx
        .run(
            "scripts/args.sh",
            &["a b", "; touch $HOME/pwned", "$(id)", "--norc"],
            config(),
        )
        .await;
    assert_eq!(out.status, Status::Success);
    assert_eq!(
        out.stdout.text,
        "[a b]\n[; touch $HOME/pwned]\n[$(id)]\n[--norc]\n"
    );
    assert!(!fx.scratch.join("pwned").exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_script_swapped_after_approval_does_not_run() {
    let Some(fx) = Fixture::new() else { return };
    fx.script("scripts/swap.sh", "echo approved\n");
    let approved =
        skills::security::sandbox::resolve_script(&fx.skill, "scripts/swap.sh", 1 << 20).unwrap();
    fx.script("scripts/swap.sh", "echo EVIL\n");
    let request = fx
        .request("scripts/swap.sh", &[], config())
        .sha256(approved.sha256);
    let out = fx.sandbox.run(request).await;
    assert!(matches!(out.status, Status::Refused { .. }), "{out:?}");
    assert!(out.tier.is_none());
    assert!(out.stdout.text.is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn file_size_and_stdin() {
    let Some(fx) = Fixture::new() else { return };
    fx.script("scripts/big.sh", "set -e\nread -r line; echo \"got $line\"; head -c 3000000 /dev/zero > \"$HOME/big\"; echo WROTE\n");
    let cfg = config().with_max_file_bytes(1024 * 1024);
    let out = fx
        .sandbox
        .run(
            fx.request("scripts/big.sh", &[], cfg)
                .stdin("hello\n")
                .keep_scratch(),
        )
        .await;
    assert!(out.stdout.text.starts_with("got hello\n"), "{out:?}");
    assert_eq!(out.status, Status::FileSizeLimit, "{out:?}");
    assert!(!out.stdout.text.contains("WROTE"), "{out:?}");
    let kept = out.scratch_dir.unwrap();
    assert!(std::fs::metadata(kept.join("big")).unwrap().len() <= 1024 * 1024);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_missing_interpreter_is_a_launch_error_and_nothing_runs() {
    let empty = tempfile::tempdir().unwrap();
    let Some(fx) = Fixture::new() else { return };
    fx.script("scripts/x.sh", "echo ran\n");
    let sandbox = sandbox().interpreter_dirs([empty.path()]);
    let out = sandbox.run(fx.request("scripts/x.sh", &[], config())).await;
    let Status::LaunchError { reason } = &out.status else {
        panic!("{out:?}")
    };
    assert!(reason.contains("bash"), "{reason}");
    assert!(out.tier.is_none() && out.stdout.text.is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn requests_it_cannot_honour_are_refused() {
    let Some(fx) = Fixture::new() else { return };
    fx.script("scripts/x.sh", "echo ran\n");
    fx.script("scripts/x.rb", "puts 1\n");
    let domains = config().with_network(Network::Allowed(vec!["api.example.com".into()]));
    let out = fx.run("scripts/x.sh", &[], domains).await;
    assert!(matches!(out.status, Status::Refused { .. }), "{out:?}");
    let out = fx.run("scripts/x.rb", &[], config()).await;
    assert!(matches!(out.status, Status::Refused { .. }), "{out:?}");
    let out = fx.run("../x.sh", &[], config()).await;
    assert!(matches!(out.status, Status::Refused { .. }), "{out:?}");
    let inside = SandboxRequest::script(
        &fx.skill,
        "scripts/x.sh",
        fx.skill.join("scripts"),
        config(),
    );
    assert!(matches!(
        fx.sandbox.run(inside).await.status,
        Status::Refused { .. }
    ));
}
