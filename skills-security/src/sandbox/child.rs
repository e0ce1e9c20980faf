//! The run's first process, between `clone` and the interpreter's `execve`: it confines
//! itself step by step and reports to the supervisor over a socket.
//!
//! **This code runs in a copy of a multi-threaded process** (see `sys`'s safety argument).
//! Rules for every line here: use only memory in the [`ChildSpec`] (prepared before the
//! clone) and the stack; call the kernel only through `sys`'s wrappers; never allocate,
//! lock, format, index (use iterators and `get`), unwrap or panic; end in `execve` or
//! `sys::exit`.
//!
//! The steps, in order (each failure is reported as its [`Step`] with `errno`, and the
//! process exits 127):
//!
//! 1. signals to their defaults, mask empty; the standard streams;
//! 2. user namespace id maps (non-root hosts); a new session; the run's cgroups;
//! 3. the private view (mount namespace): mounts made private; a size-capped tmpfs mounted
//!    on the run directory (found again here by path, without symlinks, and accepted only if
//!    it is the directory the parent made), its descriptor sent to the supervisor; on it,
//!    `home/` (the writable scratch, owned by the sandbox user) and `skill/`, a mirror of the
//!    skill directory along the script's path: the approved bytes as a read-only file, every
//!    other entry a symlink to the real one, so nothing outside the run can change what the
//!    interpreter opens;
//! 4. capabilities dropped (bounding set, then all sets) and, on root hosts, the fresh
//!    uid/gid with no groups; then the parent-death signal (a credential change clears it)
//!    and a report that proves the parent still lives;
//! 5. the working directory; `no_new_privs`; Landlock; the exec filter, its listener sent
//!    to the supervisor; the other seccomp filters (which refuse any further listener);
//!    close-on-exec on every descriptor above stderr;
//! 6. rlimits, last (so `RLIMIT_NOFILE` never counts the host's descriptors); `execve`.

use std::ffi::CStr;
use std::os::fd::RawFd;

use libc::{c_char, c_int, c_uint};

use super::sys;

/// A step of the child's confinement, reported with its `errno` when it fails.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub(crate) enum Step {
    Signals = 1,
    Stdio,
    IdMaps,
    Session,
    Cgroup,
    MountPrivate,
    RunDir,
    Tmpfs,
    Report,
    Mirror,
    ScriptCopy,
    Home,
    Capabilities,
    Identity,
    ParentDeath,
    Workdir,
    NoNewPrivs,
    LandlockRule,
    Landlock,
    Seccomp,
    SeccompListener,
    Descriptors,
    Rlimit,
    Exec,
    Inputs,
}

impl Step {
    const ALL: [Step; 25] = [
        Step::Signals,
        Step::Stdio,
        Step::IdMaps,
        Step::Session,
        Step::Cgroup,
        Step::MountPrivate,
        Step::RunDir,
        Step::Tmpfs,
        Step::Report,
        Step::Mirror,
        Step::ScriptCopy,
        Step::Home,
        Step::Capabilities,
        Step::Identity,
        Step::ParentDeath,
        Step::Workdir,
        Step::NoNewPrivs,
        Step::LandlockRule,
        Step::Landlock,
        Step::Seccomp,
        Step::SeccompListener,
        Step::Descriptors,
        Step::Rlimit,
        Step::Exec,
        Step::Inputs,
    ];

    /// The step a report names.
    pub(crate) fn from_u8(value: u8) -> Option<Step> {
        Step::ALL.into_iter().find(|s| *s as u8 == value)
    }

    /// What the step does, for messages.
    pub(crate) fn describe(self) -> &'static str {
        match self {
            Step::Signals => "resetting signals",
            Step::Stdio => "connecting the standard streams",
            Step::IdMaps => "writing the user namespace's id maps",
            Step::Session => "starting a new session",
            Step::Cgroup => "joining the run's cgroup",
            Step::MountPrivate => "making the mount namespace private",
            Step::RunDir => "finding the run directory",
            Step::Tmpfs => "mounting the scratch tmpfs",
            Step::Report => "reporting to the supervisor",
            Step::Mirror => "mirroring the skill directory",
            Step::ScriptCopy => "writing the approved script",
            Step::Home => "making the scratch directory",
            Step::Capabilities => "dropping capabilities",
            Step::Identity => "switching to the sandbox user",
            Step::ParentDeath => "setting the parent-death signal",
            Step::Workdir => "entering the scratch directory",
            Step::NoNewPrivs => "setting no_new_privs",
            Step::LandlockRule => "adding a Landlock rule",
            Step::Landlock => "enforcing Landlock",
            Step::Seccomp => "installing a seccomp filter",
            Step::SeccompListener => "installing the exec filter",
            Step::Descriptors => "closing inherited descriptors",
            Step::Rlimit => "setting resource limits",
            Step::Exec => "executing the program",
            Step::Inputs => "staging the input files",
        }
    }

    /// Whether a failure here means isolation is missing (rather than a bad program or a
    /// full disk).
    pub(crate) fn is_isolation(self) -> bool {
        !matches!(
            self,
            Step::Exec
                | Step::Stdio
                | Step::ScriptCopy
                | Step::Mirror
                | Step::RunDir
                | Step::Inputs
        )
    }
}

/// A failure: kind, step, two spare bytes, `errno` (little endian).
pub(crate) const REPORT_FAILURE: u8 = b'F';
/// The scratch tmpfs's mount descriptor.
pub(crate) const REPORT_MOUNT: u8 = b'M';
/// The exec filter's listener.
pub(crate) const REPORT_LISTENER: u8 = b'L';
/// The exec filter's listener by descriptor number (observation: `sendmsg` is routed to the
/// listener itself, so the supervisor takes it with `pidfd_getfd` and acknowledges).
pub(crate) const REPORT_LISTENER_NUMBER: u8 = b'N';
/// The parent-death signal is armed (sent after it, so a dead parent fails the send).
pub(crate) const REPORT_ALIVE: u8 = b'A';
/// Bytes in one report message.
pub(crate) const REPORT_LEN: usize = 8;

/// The user namespace's id maps, written by the child itself (non-root hosts).
pub(crate) struct IdMaps<'a> {
    pub uid_map: &'a [u8],
    pub gid_map: &'a [u8],
}

/// A file or directory the parent opened, to find again in the child's mount namespace
/// (a descriptor from before the clone names a mount of the parent's namespace, which no
/// mount call in the child accepts).
pub(crate) struct Reopen<'a> {
    pub fd: RawFd,
    /// Its canonical path: reopened without following any symlink and accepted only if it
    /// is the same file (device and inode) as `fd`.
    pub path: &'a CStr,
}

/// One entry of the skill mirror, relative to the tmpfs root.
pub(crate) enum MirrorEntry<'a> {
    /// A directory on the way to the script.
    Dir(&'a CStr),
    /// Every other entry: a symlink to the real one.
    Link { path: &'a CStr, target: &'a CStr },
}

/// The input files' directory in the tmpfs (the script sees `inputs/` in its working
/// directory).
pub(crate) const INPUTS_DIR: &CStr = c"home/inputs";

/// The private view of a run with a mount namespace.
pub(crate) struct ViewSpec<'a> {
    pub run_dir: Reopen<'a>,
    /// tmpfs options as key/value pairs (`size`, `nr_inodes`, `mode`).
    pub tmpfs: &'a [(&'a CStr, &'a CStr)],
    /// Who owns `home/` (root hosts: the sandbox user).
    pub home_owner: Option<(u32, u32)>,
    pub mirror: &'a [MirrorEntry<'a>],
    /// The approved script's path in the tmpfs and its bytes.
    pub script: Option<(&'a CStr, &'a [u8])>,
    /// Input files: paths beneath `home/inputs/` in the tmpfs and their bytes (the
    /// directory is made, owned by root and read-only, when there is any).
    pub inputs: &'a [(&'a CStr, &'a [u8])],
    /// Decoys planted in `home/` (observation), parents before children, owned like `home/`.
    pub decoys: &'a [Decoy<'a>],
}

/// One decoy entry, relative to the tmpfs root.
pub(crate) enum Decoy<'a> {
    /// A directory (0700).
    Dir(&'a CStr),
    /// A file (0600) and its bytes.
    File(&'a CStr, &'a [u8]),
}

/// Landlock, enforced after the view exists.
pub(crate) struct LandlockSpec {
    /// A ruleset the parent made with every rule that needs no run-time path.
    pub ruleset: RawFd,
    /// Rights on `home/`.
    pub home_access: u64,
    /// Rights on the mirror `skill/` (0: none beyond the script).
    pub mirror_access: u64,
    /// Rights on the approved script's copy.
    pub script_access: u64,
}

/// Everything the child needs, prepared before the clone.
pub(crate) struct ChildSpec<'a> {
    /// Read end of stdin, write ends of stdout and stderr.
    pub stdio: [RawFd; 3],
    /// The report socket's child end.
    pub report: RawFd,
    pub id_maps: Option<IdMaps<'a>>,
    /// `cgroup.procs` files to write `0` to.
    pub cgroup_procs: &'a [RawFd],
    pub view: Option<ViewSpec<'a>>,
    /// The scratch directory when there is no view (made by the parent).
    pub workdir: RawFd,
    /// `(resource, limit)` pairs; soft and hard alike.
    pub rlimits: &'a [(c_uint, u64)],
    /// Drop the bounding set up to this capability and clear every other set.
    pub last_cap: Option<u32>,
    /// Root hosts: the fresh uid and gid to become (no supplementary groups).
    pub become_user: Option<(u32, u32)>,
    pub landlock: Option<LandlockSpec>,
    /// seccomp programs installed in order.
    pub filters: &'a [&'a [libc::sock_filter]],
    /// The exec filter, installed before the others, with a listener the supervisor keeps.
    pub exec_filter: Option<&'a [libc::sock_filter]>,
    /// Hand the listener over by number and wait for the acknowledgement (the filter
    /// routes `sendmsg` too, so it cannot travel as `SCM_RIGHTS`).
    pub listener_by_number: bool,
    /// A descriptor kept open across `execve` (the script copy when there is no view).
    pub keep_fd: Option<RawFd>,
    pub program: &'a CStr,
    /// Null-terminated argument vector.
    pub argv: &'a [*const c_char],
    /// Null-terminated environment.
    pub envp: &'a [*const c_char],
}

/// Reports `step` failed with `errno` and exits.
fn fail(report: RawFd, step: Step, errno: i32) -> ! {
    let e = errno.to_le_bytes();
    let message = [REPORT_FAILURE, step as u8, 0, 0, e[0], e[1], e[2], e[3]];
    let _ = sys::send_report(report, &message, None);
    sys::exit(127)
}

/// Reports a descriptor to the supervisor.
fn send(report: RawFd, kind: u8, fd: Option<RawFd>) -> Result<(), i32> {
    sys::send_report(report, &[kind, 0, 0, 0, 0, 0, 0, 0], fd).map(drop)
}

/// A step's result, or the end.
fn ok<T>(report: RawFd, step: Step, result: Result<T, i32>) -> T {
    match result {
        Ok(value) => value,
        Err(errno) => fail(report, step, errno),
    }
}

fn fd(value: libc::c_long) -> RawFd {
    RawFd::try_from(value).unwrap_or(-1)
}

/// Reopens `target` here and checks it is the parent's file.
fn reopen(report: RawFd, step: Step, target: &Reopen<'_>) -> RawFd {
    let flags = libc::O_PATH | libc::O_CLOEXEC | libc::O_NOFOLLOW | libc::O_DIRECTORY;
    let here = fd(ok(report, step, sys::open_no_symlinks(target.path, flags)));
    let same = ok(report, step, sys::identity(here)) == ok(report, step, sys::identity(target.fd));
    if !same {
        fail(report, step, libc::ESTALE);
    }
    here
}

/// The view's descriptors the later steps need.
struct View {
    home: RawFd,
    mirror: RawFd,
    script: RawFd,
}

const O_PATH_DIR: c_int = libc::O_PATH | libc::O_CLOEXEC | libc::O_NOFOLLOW | libc::O_DIRECTORY;

/// Step 3: the tmpfs, the mirror, the approved copy and `home/`.
fn build_view(report: RawFd, view: &ViewSpec<'_>) -> View {
    ok(report, Step::MountPrivate, sys::make_mounts_private());
    let run_dir = reopen(report, Step::RunDir, &view.run_dir);
    let fs = fd(ok(report, Step::Tmpfs, sys::fsopen_tmpfs()));
    for (key, value) in view.tmpfs {
        ok(report, Step::Tmpfs, sys::fsconfig_string(fs, key, value));
    }
    ok(report, Step::Tmpfs, sys::fsconfig_create(fs));
    const NOSUID_NODEV_NOEXEC: u64 = 0x2 | 0x4 | 0x8;
    let root = fd(ok(
        report,
        Step::Tmpfs,
        sys::fsmount(fs, NOSUID_NODEV_NOEXEC),
    ));
    sys::close(fs);
    ok(report, Step::Tmpfs, sys::move_mount(root, run_dir));
    sys::close(run_dir);
    ok(report, Step::Report, send(report, REPORT_MOUNT, Some(root)));
    for entry in view.mirror {
        let made = match entry {
            MirrorEntry::Dir(path) => sys::mkdirat(root, path, 0o755),
            MirrorEntry::Link { path, target } => sys::symlinkat(target, root, path),
        };
        ok(report, Step::Mirror, made);
    }
    let mut script = -1;
    if let Some((path, bytes)) = view.script {
        let flags =
            libc::O_CREAT | libc::O_EXCL | libc::O_WRONLY | libc::O_CLOEXEC | libc::O_NOFOLLOW;
        let copy = fd(ok(
            report,
            Step::ScriptCopy,
            sys::openat(root, path, flags, 0o444),
        ));
        ok(report, Step::ScriptCopy, sys::write_all(copy, bytes));
        sys::close(copy);
        let flags = libc::O_PATH | libc::O_CLOEXEC | libc::O_NOFOLLOW;
        script = fd(ok(
            report,
            Step::ScriptCopy,
            sys::openat(root, path, flags, 0),
        ));
    }
    ok(report, Step::Home, sys::mkdirat(root, c"home", 0o700));
    if let Some((uid, gid)) = view.home_owner {
        ok(report, Step::Home, sys::chown_at(root, c"home", uid, gid));
    }
    for decoy in view.decoys {
        let (path, made) = match decoy {
            Decoy::Dir(path) => (*path, sys::mkdirat(root, path, 0o700)),
            Decoy::File(path, bytes) => {
                let flags = libc::O_CREAT
                    | libc::O_EXCL
                    | libc::O_WRONLY
                    | libc::O_CLOEXEC
                    | libc::O_NOFOLLOW;
                let file = fd(ok(
                    report,
                    Step::Home,
                    sys::openat(root, path, flags, 0o600),
                ));
                let written = sys::write_all(file, bytes);
                sys::close(file);
                (*path, written.map(|()| 0))
            }
        };
        ok(report, Step::Home, made);
        if let Some((uid, gid)) = view.home_owner {
            ok(report, Step::Home, sys::chown_at(root, path, uid, gid));
        }
    }
    if !view.inputs.is_empty() {
        // Made before the identity change, so owned by root (on root hosts) and read-only:
        // the script reads its inputs and cannot change them.
        ok(report, Step::Inputs, sys::mkdirat(root, INPUTS_DIR, 0o555));
        for (path, bytes) in view.inputs {
            let flags =
                libc::O_CREAT | libc::O_EXCL | libc::O_WRONLY | libc::O_CLOEXEC | libc::O_NOFOLLOW;
            let file = fd(ok(
                report,
                Step::Inputs,
                sys::openat(root, path, flags, 0o444),
            ));
            ok(report, Step::Inputs, sys::write_all(file, bytes));
            sys::close(file);
        }
    }
    let home = fd(ok(
        report,
        Step::Home,
        sys::openat(root, c"home", O_PATH_DIR, 0),
    ));
    let mirror = if view.mirror.is_empty() {
        -1
    } else {
        fd(ok(
            report,
            Step::Mirror,
            sys::openat(root, c"skill", O_PATH_DIR, 0),
        ))
    };
    View {
        home,
        mirror,
        script,
    }
}

/// The child: confine, then exec. Never returns.
pub(crate) fn main(spec: &ChildSpec<'_>) -> ! {
    let report = spec.report;
    ok(report, Step::Signals, sys::reset_signals());
    for (target, &source) in (0..).zip(spec.stdio.iter()) {
        ok(report, Step::Stdio, sys::dup_onto(source, target));
    }
    if let Some(maps) = &spec.id_maps {
        for (path, content) in [
            (c"/proc/self/setgroups", b"deny".as_slice()),
            (c"/proc/self/uid_map", maps.uid_map),
            (c"/proc/self/gid_map", maps.gid_map),
        ] {
            let file = fd(ok(
                report,
                Step::IdMaps,
                sys::openat(libc::AT_FDCWD, path, libc::O_WRONLY | libc::O_CLOEXEC, 0),
            ));
            ok(report, Step::IdMaps, sys::write_all(file, content));
            sys::close(file);
        }
    }
    ok(report, Step::Session, sys::setsid());
    for &procs in spec.cgroup_procs {
        ok(report, Step::Cgroup, sys::write_all(procs, b"0"));
    }
    let view = spec.view.as_ref().map(|v| build_view(report, v));
    if let Some(last) = spec.last_cap {
        for cap in 0..=last {
            // EINVAL: a capability this kernel does not know.
            match sys::prctl(libc::PR_CAPBSET_DROP, libc::c_long::from(cap)) {
                Ok(_) | Err(libc::EINVAL) => {}
                Err(e) => fail(report, Step::Capabilities, e),
            }
        }
    }
    if let Some((uid, gid)) = spec.become_user {
        ok(report, Step::Identity, sys::clear_groups());
        ok(report, Step::Identity, sys::setresgid(gid));
        ok(report, Step::Identity, sys::setresuid(uid));
    }
    if spec.last_cap.is_some() {
        ok(report, Step::Capabilities, sys::drop_all_capabilities());
    }
    // After every credential change (each clears it), then proven: a dead parent fails the
    // send, and a parent that dies later takes this process with it.
    ok(
        report,
        Step::ParentDeath,
        sys::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL as libc::c_long),
    );
    ok(report, Step::ParentDeath, send(report, REPORT_ALIVE, None));
    let home = view.as_ref().map_or(spec.workdir, |v| v.home);
    ok(report, Step::Workdir, sys::fchdir(home));
    ok(
        report,
        Step::NoNewPrivs,
        sys::prctl(libc::PR_SET_NO_NEW_PRIVS, 1),
    );
    if let Some(landlock) = &spec.landlock {
        let mut rules = [(home, landlock.home_access), (-1, 0), (-1, 0)];
        if let Some(view) = &view {
            rules[1] = (view.mirror, landlock.mirror_access);
            rules[2] = (view.script, landlock.script_access);
        }
        for (target, access) in rules {
            if target >= 0 && access != 0 {
                ok(
                    report,
                    Step::LandlockRule,
                    sys::landlock_add_rule(landlock.ruleset, target, access),
                );
            }
        }
        ok(
            report,
            Step::Landlock,
            sys::landlock_restrict_self(landlock.ruleset),
        );
    }
    // The exec filter first: the deny-list after it refuses any further listener.
    if let Some(filter) = spec.exec_filter {
        let listener = fd(ok(
            report,
            Step::SeccompListener,
            sys::seccomp_filter(filter, libc::SECCOMP_FILTER_FLAG_NEW_LISTENER),
        ));
        if spec.listener_by_number {
            let n = listener.to_le_bytes();
            let message = [REPORT_LISTENER_NUMBER, 0, 0, 0, n[0], n[1], n[2], n[3]];
            ok(report, Step::Report, sys::write_all(report, &message));
            ok(report, Step::Report, sys::read_byte(report));
        } else {
            ok(
                report,
                Step::Report,
                send(report, REPORT_LISTENER, Some(listener)),
            );
        }
        sys::close(listener);
    }
    for filter in spec.filters {
        ok(report, Step::Seccomp, sys::seccomp_filter(filter, 0));
    }
    ok(report, Step::Descriptors, sys::cloexec_from(3));
    if let Some(keep) = spec.keep_fd {
        ok(report, Step::Descriptors, sys::set_cloexec(keep, false));
    }
    for &(resource, limit) in spec.rlimits {
        ok(report, Step::Rlimit, sys::set_rlimit(resource, limit));
    }
    // With the exec filter this waits until the supervisor lets this one call through.
    let errno = sys::execve(spec.program, spec.argv, spec.envp);
    fail(report, Step::Exec, errno)
}
