//! The attacks that got through the first sandbox (issue 15), each run as an attacker would,
//! as root in CI: a planted link at the scratch directory's name, memory the data-segment
//! limit does not see, a disk filled file by file, the dynamic loader as a program
//! launcher, inherited descriptors, a weaker kernel than the guarantees need; and the benign
//! work the old limits broke (a pool of 500 threads).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod sandbox_common;

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use sandbox_common::*;
use skills::security::sandbox::{
    Cgroups, LimitMechanism, Network, Sandbox, SandboxConfig, Status, Tier,
};
use skills::security::{
    ApprovalOption, Approvals, NonInteractive, ScriptRunner, SessionScope, TrustLevel,
};

const MB: u64 = 1024 * 1024;

/// Owner, group, mode and every entry (name, owner, mode, content) of a directory.
fn snapshot(dir: &Path) -> Vec<String> {
    let meta = std::fs::symlink_metadata(dir).unwrap();
    let mut lines = vec![format!("{} {} {:o}", meta.uid(), meta.gid(), meta.mode())];
    let mut entries: Vec<_> = std::fs::read_dir(dir).unwrap().flatten().collect();
    entries.sort_by_key(|e| e.file_name());
    for entry in entries {
        let m = std::fs::symlink_metadata(entry.path()).unwrap();
        let content = std::fs::read(entry.path()).unwrap_or_default();
        lines.push(format!(
            "{:?} {} {} {:o} {:?}",
            entry.file_name(),
            m.uid(),
            m.gid(),
            m.mode(),
            content
        ));
    }
    lines
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn links_planted_at_scratch_names_change_nothing_outside() {
    let Some(fx) = Fixture::new() else { return };
    let victim = fx.root.path().join("victim");
    std::fs::create_dir(&victim).unwrap();
    std::fs::set_permissions(&victim, std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::write(victim.join("keep.txt"), "victim").unwrap();
    let before = snapshot(&victim);
    // Every name the first version could choose for this process, and a few hundred
    // guesses at the new shape.
    let pid = std::process::id();
    let mut planted = Vec::new();
    for n in 0..300 {
        planted.push(fx.scratch.join(format!("skill-run-{pid}-{n}")));
    }
    for n in 0..300u64 {
        let guess = format!("{:032x}", n.wrapping_mul(0x9e37_79b9_7f4a_7c15));
        planted.push(fx.scratch.join(format!("skills-run-{guess}")));
    }
    for link in &planted {
        std::os::unix::fs::symlink(&victim, link).unwrap();
    }
    let body = "echo pwned > \"$HOME/pwned\"\necho pwned > \"$TMPDIR/pwned2\"\necho pwned > pwned3\nfor l in \"$HOME\"/../skill*-run-*; do echo pwned > \"$l/pwned4\"; done 2>/dev/null\necho wrote\n";
    fx.script("scripts/w.sh", body);
    let md = "Run scripts/w.sh.";
    let files = vec!["scripts/w.sh".to_owned()];
    let approvals = Approvals::new(Arc::new(NonInteractive(ApprovalOption::YesOnce)));
    for level in [TrustLevel::Core, TrustLevel::Verified, TrustLevel::User] {
        let config = SandboxConfig::for_trust(level).with_timeout(Duration::from_secs(10));
        assert!(config.can_write_files, "{level:?} may write");
        let out = fx.run("scripts/w.sh", &[], config.clone()).await;
        assert_eq!(out.status, Status::Success, "{level:?}: {out:?}");
        assert!(out.stdout.text.contains("wrote"));
        let runner = ScriptRunner::new(
            &fx.sandbox,
            &approvals,
            SessionScope::new("w", "c"),
            level,
            &fx.scratch,
        )
        .config(config);
        let report = runner
            .run_referenced(
                "skill",
                &fx.skill,
                md,
                &files,
                "scripts/w.sh",
                &skills::security::ScriptInput::new(),
            )
            .await
            .unwrap();
        assert_eq!(
            report.outcome.as_ref().map(|o| o.status.clone()),
            Some(Status::Success),
            "{report:?}"
        );
    }
    assert_eq!(snapshot(&victim), before, "the planted target changed");
    for link in &planted {
        let meta = std::fs::symlink_metadata(link).unwrap();
        assert!(
            meta.file_type().is_symlink(),
            "{} was replaced",
            link.display()
        );
    }
    let leftovers: Vec<_> = fx
        .scratch_leftovers()
        .into_iter()
        .filter(|p| !planted.contains(p))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

/// A Python script touching `size` bytes of memory of one kind, page by page.
const TOUCH: &str = r#"import mmap, os, sys
kind, size = sys.argv[1], int(sys.argv[2])
step = 4096
if kind == "shared":
    m = mmap.mmap(-1, size, flags=mmap.MAP_SHARED)
    for i in range(0, size, step):
        m[i] = 1
elif kind == "memfd":
    # Many in-memory files (each under the file-size limit): tmpfs pages.
    chunk = b"x" * (1 << 20)
    fds = []
    for i in range(size >> 20):
        if i % 32 == 0:
            fds.append(os.memfd_create("balloon"))
        os.write(fds[-1], chunk)
print("TOUCHED", kind, flush=True)
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shared_and_tmpfs_memory_count_against_the_limit() {
    let Some(fx) = Fixture::new() else { return };
    if !fx.has_cgroups() {
        return; // RLIMIT_AS, the fallback, does not see tmpfs pages
    }
    fx.script("scripts/touch.py", TOUCH);
    let community = SandboxConfig::for_trust(TrustLevel::Community);
    let limit = community.memory_bytes;
    assert_eq!(limit, 256 * MB);
    for kind in ["shared", "memfd"] {
        let size = (1024 * MB).to_string();
        let out = fx
            .run("scripts/touch.py", &[kind, &size], community.clone())
            .await;
        assert_eq!(out.status, Status::MemoryLimit, "{kind}: {out:?}");
        assert!(!out.stdout.text.contains("TOUCHED"), "{kind}: {out:?}");
        assert!(
            matches!(
                out.enforcement.memory,
                Some(LimitMechanism::CgroupV1 | LimitMechanism::CgroupV2)
            ),
            "{out:?}"
        );
        let peak = out.usage.peak_memory_bytes.unwrap();
        assert!(
            peak < 2 * limit,
            "{kind}: peak {peak} against a limit of {limit}"
        );
    }
    // Within the limit the same script succeeds.
    let small = (64 * MB).to_string();
    let out = fx
        .run("scripts/touch.py", &["shared", &small], community)
        .await;
    assert_eq!(out.status, Status::Success, "{out:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_rlimit_fallback_is_a_named_choice_and_says_so() {
    let Some(fx) = Fixture::new() else { return };
    fx.script("scripts/touch.py", TOUCH);
    let fallback = sandbox().cgroups(Cgroups::RlimitsInstead);
    let probe = fallback.probe();
    assert_eq!(probe.memory, Some(LimitMechanism::RlimitAs));
    assert!(!probe.fallbacks.is_empty(), "{probe:?}");
    let community = SandboxConfig::for_trust(TrustLevel::Community);
    let big = (1024 * MB).to_string();
    let out = fallback
        .run(fx.request("scripts/touch.py", &["shared", &big], community.clone()))
        .await;
    assert_eq!(out.status, Status::MemoryLimit, "{out:?}");
    assert_eq!(out.enforcement.memory, Some(LimitMechanism::RlimitAs));
    assert_eq!(out.enforcement.tasks, Some(LimitMechanism::RlimitNproc));
    // RLIMIT_AS does not see an in-memory file's pages, so none can be made.
    let small = (8 * MB).to_string();
    let out = fallback
        .run(fx.request("scripts/touch.py", &["memfd", &small], community))
        .await;
    assert!(matches!(out.status, Status::Exit { .. }), "{out:?}");
    assert!(out.stderr.text.contains("PermissionError"), "{out:?}");
    // Nor System V segments (touched through a mapping, then detached).
    fx.script(
        "scripts/shm.py",
        "import ctypes\nlibc = ctypes.CDLL(None, use_errno=True)\nprint(libc.shmget(0, 1 << 20, 0o1600), ctypes.get_errno())\n",
    );
    let community = SandboxConfig::for_trust(TrustLevel::Community);
    let out = fallback
        .run(fx.request("scripts/shm.py", &[], community.clone()))
        .await;
    assert_eq!(out.stdout.text, "-1 1\n", "{out:?}");
    if fx.has_cgroups() {
        let out = fx.run("scripts/shm.py", &[], community).await;
        assert!(
            !out.stdout.text.starts_with("-1"),
            "with a memory cgroup they count: {out:?}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn scratch_is_capped_as_a_whole_and_the_host_disk_is_untouched() {
    let Some(fx) = Fixture::new() else { return };
    fx.script(
        "scripts/fill.py",
        r#"import os, sys
mode = sys.argv[1]
n = 0
try:
    if mode == "small":
        while True:
            with open(f"f{n}", "wb") as f:
                f.write(b"x" * 100)
            n += 1
    else:
        while True:
            with open(f"big{n}", "wb") as f:
                for _ in range(8):
                    f.write(b"x" * (1 << 20))
            n += 1
except OSError as e:
    print("stopped", mode, n, e.errno, flush=True)
    sys.exit(1)
"#,
    );
    let cap = 16 * MB;
    let config = SandboxConfig::for_trust(TrustLevel::User)
        .with_timeout(Duration::from_secs(20))
        .with_max_scratch_bytes(cap);
    let free_before = free_bytes(&fx.scratch);
    for mode in ["small", "large"] {
        let out = fx.run("scripts/fill.py", &[mode], config.clone()).await;
        assert_eq!(out.status, Status::DiskLimit, "{mode}: {out:?}");
        assert!(out.usage.scratch_full, "{out:?}");
        assert_eq!(out.enforcement.scratch_bytes, Some(cap));
        assert!(
            out.stdout.text.contains(&format!("stopped {mode}"))
                && out.stdout.text.contains(" 28\n"),
            "ENOSPC expected: {out:?}"
        );
        if mode == "large" {
            // Two 8 MiB files at most fit in 16 MiB (the first one, then a partial).
            assert!(
                out.stdout.text.starts_with("stopped large 1 ")
                    || out.stdout.text.starts_with("stopped large 2 "),
                "{out:?}"
            );
        }
    }
    assert!(fx.scratch_leftovers().is_empty());
    let free_after = free_bytes(&fx.scratch);
    assert!(
        free_after + 8 * MB > free_before,
        "the host disk lost {} bytes",
        free_before.saturating_sub(free_after)
    );
}

fn free_bytes(path: &Path) -> u64 {
    let stat = nix::sys::statvfs::statvfs(path).unwrap();
    stat.blocks_available() as u64 * stat.fragment_size() as u64
}

/// The dynamic loader of this machine.
fn loader() -> Option<&'static str> {
    ["/lib64/ld-linux-x86-64.so.2", "/lib/ld-linux-aarch64.so.1"]
        .into_iter()
        .find(|p| Path::new(p).exists())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_program_starts_where_none_may_the_loader_included() {
    let Some(fx) = Fixture::new() else { return };
    let Some(loader) = loader() else {
        panic!("no dynamic loader found at the usual paths");
    };
    fx.script(
        "scripts/launch.py",
        r#"import os, subprocess, sys
loader = sys.argv[1]
for name, attempt in [
    ("execv-loader", lambda: os.execv(loader, [loader, "/usr/bin/id"])),
    ("execv-id", lambda: os.execv("/usr/bin/id", ["id"])),
    ("fexecve", lambda: os.execve(os.open("/usr/bin/id", os.O_RDONLY), ["id"], {})),
    ("spawn-loader", lambda: subprocess.run([loader, "/usr/bin/id"])),
    ("fork", lambda: os.fork()),
    ("posix_spawn", lambda: os.posix_spawn("/usr/bin/id", ["id"], {})),
]:
    try:
        r = attempt()
        if r == 0:
            os._exit(0)
        print("RAN", name, r, flush=True)
    except OSError as e:
        print("refused", name, e.errno, flush=True)
print("done", flush=True)
"#,
    );
    for level in [TrustLevel::Community, TrustLevel::Verified] {
        let config = SandboxConfig::for_trust(level);
        assert!(!config.can_execute_code);
        let out = fx.run("scripts/launch.py", &[loader], config).await;
        assert_eq!(out.status, Status::Success, "{level:?}: {out:?}");
        assert!(out.enforcement.exec_blocked);
        assert!(!out.stdout.text.contains("RAN"), "{level:?}: {out:?}");
        assert!(!out.stdout.text.contains("uid="), "{level:?}: {out:?}");
        assert_eq!(out.stdout.text.matches("refused").count(), 6, "{out:?}");
        assert!(out.stdout.text.ends_with("done\n"), "{out:?}");
    }
    // Core may start programs: the same script runs them.
    let core = SandboxConfig::for_trust(TrustLevel::Core);
    let out = fx.run("scripts/launch.py", &[loader], core).await;
    assert!(out.stdout.text.contains("uid="), "{out:?}");
    assert!(!out.enforcement.exec_blocked);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pool_of_500_threads_completes_under_community_defaults() {
    let Some(fx) = Fixture::new() else { return };
    if !fx.has_cgroups() {
        return; // RLIMIT_AS, the fallback, counts every thread's stack reservation
    }
    fx.script(
        "scripts/pool.py",
        r#"import threading
N = 500
barrier = threading.Barrier(N + 1)
def work():
    barrier.wait()
threads = [threading.Thread(target=work) for _ in range(N)]
for t in threads:
    t.start()
barrier.wait()
for t in threads:
    t.join()
print("threads", N, threading.active_count())
"#,
    );
    let config = SandboxConfig::for_trust(TrustLevel::Community);
    let out = fx.run("scripts/pool.py", &[], config).await;
    assert_eq!(out.status, Status::Success, "{out:?}");
    assert_eq!(out.stdout.text, "threads 500 1\n", "{out:?}");
    assert!(!out.usage.task_limit_reached);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn inherited_descriptors_never_reach_the_script() {
    use nix::fcntl::{OFlag, open};
    use nix::sys::socket::{AddressFamily, SockFlag, SockType, socket};
    use nix::sys::stat::Mode;
    let Some(fx) = Fixture::new() else { return };
    let secret = fx.secret_dir().join("secret.txt");
    // Opened by the host without close-on-exec.
    let file = open(&secret, OFlag::O_RDONLY, Mode::empty()).unwrap();
    let sock = socket(
        AddressFamily::Inet,
        SockType::Stream,
        SockFlag::empty(),
        None,
    )
    .unwrap();
    let flags = nix::fcntl::fcntl(&file, nix::fcntl::FcntlArg::F_GETFD).unwrap();
    assert_eq!(
        flags & libc_fd_cloexec(),
        0,
        "the host's file is inheritable"
    );
    fx.script(
        "scripts/fds.py",
        "import os\nopen_fds = []\nfor fd in range(3, 1025):\n    try:\n        os.fstat(fd)\n        open_fds.append(fd)\n    except OSError:\n        pass\nprint('open', open_fds)\n",
    );
    for config in [config(), SandboxConfig::for_trust(TrustLevel::Community)] {
        let out = fx.run("scripts/fds.py", &[], config).await;
        assert_eq!(out.status, Status::Success, "{out:?}");
        assert_eq!(out.stdout.text, "open []\n", "{out:?}");
    }
    drop((file, sock));
}

fn libc_fd_cloexec() -> i32 {
    1 // FD_CLOEXEC
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn below_the_landlock_abi_a_run_needs_it_fails_closed() {
    let Some(fx) = Fixture::new() else { return };
    fx.script("scripts/x.sh", "echo ran\n");
    let kernel = fx.sandbox.probe().landlock_abi.unwrap();
    let out = fx.run("scripts/x.sh", &[], config()).await;
    assert_eq!(out.status, Status::Success, "{out:?}");
    assert_eq!(out.enforcement.landlock_abi, Some(kernel));
    // A kernel with ABI 2: no isolated tier at all.
    let old = sandbox().limit_landlock_abi(2);
    let probe = old.probe();
    assert_eq!(probe.tier, None);
    assert!(
        probe.missing.iter().any(|m| m.contains("Landlock ABI 3")),
        "{probe:?}"
    );
    let out = old.run(fx.request("scripts/x.sh", &[], config())).await;
    let Status::SandboxUnavailable { reason } = &out.status else {
        panic!("{out:?}")
    };
    assert!(reason.contains("Landlock ABI 3"), "{reason}");
    assert!(out.stdout.text.is_empty() && out.tier.is_none());
    // ABI 5: enough without network, not with it (abstract unix scoping needs 6).
    if kernel >= 5 {
        let five = sandbox().limit_landlock_abi(5);
        let out = five.run(fx.request("scripts/x.sh", &[], config())).await;
        assert_eq!(out.status, Status::Success, "{out:?}");
        assert_eq!(out.enforcement.landlock_abi, Some(5));
        let networked = config().with_network(Network::Allowed(vec!["*".into()]));
        let out = five.run(fx.request("scripts/x.sh", &[], networked)).await;
        let Status::SandboxUnavailable { reason } = &out.status else {
            panic!("{out:?}")
        };
        assert!(reason.contains("Landlock ABI 6"), "{reason}");
    }
    // The weaker tier runs only when the host chose it by name, and says so.
    let weak = sandbox().limit_landlock_abi(2).allow_rlimits_only();
    let out = weak.run(fx.request("scripts/x.sh", &[], config())).await;
    assert_eq!(out.status, Status::Success, "{out:?}");
    assert_eq!(out.tier, Some(Tier::RlimitsOnly));
    assert_eq!(out.enforcement.landlock_abi, None);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_new_privs_holds_on_every_tier() {
    let Some(fx) = Fixture::new() else { return };
    fx.script(
        "scripts/nnp.py",
        "import ctypes\nlibc = ctypes.CDLL(None, use_errno=True)\nprint('nnp', libc.prctl(39, 0, 0, 0, 0))\n",
    );
    let weak = sandbox().limit_landlock_abi(0).allow_rlimits_only();
    for (sandbox, tier) in [(&fx.sandbox, fx.tier()), (&weak, Tier::RlimitsOnly)] {
        let out = sandbox
            .run(fx.request("scripts/nnp.py", &[], config()))
            .await;
        assert_eq!(out.status, Status::Success, "{tier:?}: {out:?}");
        assert_eq!(out.tier, Some(tier));
        assert_eq!(out.stdout.text, "nnp 1\n", "{tier:?}: {out:?}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn foreign_syscall_numbers_kill_the_run() {
    let Some(fx) = Fixture::new() else { return };
    if !cfg!(target_arch = "x86_64") {
        return;
    }
    // getpid through the x32 ABI: a deny-list keyed on x86_64 numbers would not see it.
    fx.script(
        "scripts/x32.py",
        "import ctypes\nlibc = ctypes.CDLL(None, use_errno=True)\nprint('x32', libc.syscall(0x40000000 | 39), flush=True)\n",
    );
    let out = fx
        .run(
            "scripts/x32.py",
            &[],
            SandboxConfig::for_trust(TrustLevel::Community),
        )
        .await;
    assert_eq!(out.status, Status::Signal { signal: 31 }, "{out:?}");
    assert!(!out.stdout.text.contains("x32"), "{out:?}");
}

/// The review's bypass: the script installs a seccomp filter with a listener of its own
/// and answers its own exec notification with CONTINUE.
const OWN_LISTENER: &str = r#"import ctypes, os, struct, sys, threading
libc = ctypes.CDLL(None, use_errno=True)
loader = sys.argv[1]
SYS_SECCOMP, SYS_EXECVE = 317, 59
program = b"".join(struct.pack("<HBBI", *i) for i in [
    (0x20, 0, 0, 0),                 # ld nr
    (0x15, 0, 1, SYS_EXECVE),        # jeq execve
    (0x06, 0, 0, 0x7fc00000),        # ret USER_NOTIF
    (0x06, 0, 0, 0x7fff0000),        # ret ALLOW
])
buf = ctypes.create_string_buffer(program)
class Prog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]
prog = Prog(4, ctypes.addressof(buf))
fd = libc.syscall(SYS_SECCOMP, 1, 8, ctypes.byref(prog))
if fd < 0:
    print("listener refused", ctypes.get_errno(), flush=True)
else:
    def answer():
        notif = ctypes.create_string_buffer(80)
        if libc.ioctl(fd, 0xc0502100, notif) == 0:
            nid = struct.unpack_from("<Q", notif, 0)[0]
            libc.ioctl(fd, 0xc0182101, ctypes.create_string_buffer(struct.pack("<QqiI", nid, 0, 0, 1)))
    threading.Thread(target=answer, daemon=True).start()
try:
    os.execv(loader, [loader, "/usr/bin/id"])
except OSError as e:
    print("exec refused", e.errno, flush=True)
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_script_cannot_answer_its_own_exec_notifications() {
    let Some(fx) = Fixture::new() else { return };
    if !cfg!(target_arch = "x86_64") {
        return; // the exploit's syscall numbers are x86_64's
    }
    let loader = loader().unwrap();
    fx.script("scripts/own.py", OWN_LISTENER);
    let out = fx
        .run("scripts/own.py", &[loader], SandboxConfig::strict())
        .await;
    assert_eq!(out.status, Status::Success, "{out:?}");
    assert!(out.stdout.text.contains("listener refused"), "{out:?}");
    assert!(out.stdout.text.contains("exec refused"), "{out:?}");
    assert!(!out.stdout.text.contains("uid="), "{out:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_script_reading_stdin_sees_its_end_when_there_is_none() {
    let Some(fx) = Fixture::new() else { return };
    fx.script(
        "scripts/stdin.py",
        "import sys\nprint('eof', len(sys.stdin.read()))\n",
    );
    let config = config().with_timeout(Duration::from_secs(5));
    let out = fx.run("scripts/stdin.py", &[], config).await;
    assert_eq!(out.status, Status::Success, "{out:?}");
    assert_eq!(out.stdout.text, "eof 0\n");
    assert!(out.duration < Duration::from_secs(3), "{out:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_network_allowed_host_unix_sockets_stay_out_of_reach() {
    let Some(fx) = Fixture::new() else { return };
    let socket = fx.root.path().join("host.sock");
    let listener = std::os::unix::net::UnixListener::bind(&socket).unwrap();
    std::fs::set_permissions(&socket, std::fs::Permissions::from_mode(0o777)).unwrap();
    listener.set_nonblocking(true).unwrap();
    fx.script(
        "scripts/unix.py",
        "import socket, sys\ntry:\n    s = socket.socket(socket.AF_UNIX)\n    s.connect(sys.argv[1])\n    print('CONNECTED')\nexcept OSError as e:\n    print('refused', e.errno)\na, b = socket.socketpair()\na.send(b'x')\nprint('pair', b.recv(1))\n",
    );
    let core = SandboxConfig::for_trust(TrustLevel::Core);
    assert!(matches!(core.network, Network::Allowed(_)));
    let out = fx
        .run("scripts/unix.py", &[socket.to_str().unwrap()], core)
        .await;
    assert_eq!(out.status, Status::Success, "{out:?}");
    assert!(!out.stdout.text.contains("CONNECTED"), "{out:?}");
    assert!(out.stdout.text.contains("pair b'x'"), "{out:?}");
    assert!(
        listener.accept().is_err(),
        "the host socket saw a connection"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_host_with_many_open_descriptors_still_launches() {
    let Some(fx) = Fixture::new() else { return };
    // More than the strict preset's 64 open files, held by the host.
    let held: Vec<std::fs::File> = (0..200)
        .map(|_| std::fs::File::open("/dev/null").unwrap())
        .collect();
    fx.script("scripts/x.py", "print('ran')\n");
    let out = fx.run("scripts/x.py", &[], SandboxConfig::strict()).await;
    assert_eq!(out.status, Status::Success, "{out:?}");
    assert_eq!(out.stdout.text, "ran\n");
    drop(held);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_script_renamed_over_and_over_during_launches_never_runs_unapproved() {
    let Some(fx) = Fixture::new() else { return };
    let script = fx.script("scripts/flip.sh", "echo approved\n");
    let approved = skills::security::sandbox::resolve_script(&fx.skill, "scripts/flip.sh", 1 << 20)
        .unwrap()
        .sha256;
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let flipper = {
        let stop = stop.clone();
        let script = script.clone();
        std::thread::spawn(move || {
            let mut n = 0u64;
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                let body = if n.is_multiple_of(2) {
                    "echo EVIL\n"
                } else {
                    "echo approved\n"
                };
                let tmp = script.with_extension(format!("tmp{n}"));
                std::fs::write(&tmp, body).unwrap();
                std::fs::set_permissions(&tmp, std::fs::Permissions::from_mode(0o644)).unwrap();
                std::fs::rename(&tmp, &script).unwrap();
                n += 1;
            }
        })
    };
    let (mut ran, mut refused) = (0, 0);
    for _ in 0..40 {
        let request = fx
            .request("scripts/flip.sh", &[], config())
            .sha256(approved.clone());
        let out = fx.sandbox.run(request).await;
        assert!(!out.stdout.text.contains("EVIL"), "{out:?}");
        match out.status {
            Status::Success => {
                assert_eq!(out.stdout.text, "approved\n");
                ran += 1;
            }
            Status::Refused { .. } => refused += 1,
            other => panic!("{other:?}"),
        }
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    flipper.join().unwrap();
    assert_eq!(ran + refused, 40);
}
