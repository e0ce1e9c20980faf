//! The one module of the workspace that uses `unsafe`: raw Linux system calls for the
//! sandbox's one-step launch, and the few parent-side calls no safe wrapper offers.
//!
//! # What it does
//!
//! [`spawn`] makes the run's first process with one `clone` (namespaces, a pidfd, no exit
//! signal so no host `waitpid(-1)` can steal it) and, in the child, confines it step by step
//! with raw system calls before the interpreter's own `execve`: signals reset, standard
//! streams, user-namespace maps, `setsid`, parent-death signal, cgroup membership, the
//! private mount view (a size-capped tmpfs on the run directory, the approved script bound
//! read-only over its path), rlimits, capabilities and identity, working directory,
//! `no_new_privs`, Landlock, seccomp, close-on-exec on every inherited descriptor, then
//! `execve`. No helper program runs in between.
//!
//! # Safety argument
//!
//! The clone is fork-like (no `CLONE_VM`, no new stack): the child gets a copy of the
//! parent's address space, in which other threads may have held locks (the allocator's
//! among them) at the moment of the copy. The child therefore runs only
//! [`child_main`], which:
//!
//! * touches only memory prepared before the clone (`ChildSpec`: raw descriptors, C strings,
//!   argument vectors, filter programs, the script's bytes), never allocates, takes no lock,
//!   formats nothing and cannot panic (no indexing, no `unwrap`, only iterators over fixed
//!   slices and checked conversions);
//! * calls the kernel directly through `libc::syscall`, except `sigaction` and
//!   `sigprocmask`, which POSIX lists as async-signal-safe. glibc's `setresuid` and
//!   friends are avoided on purpose: in a copied multi-threaded process they would try to
//!   signal the parent's threads;
//! * ends in `execve` or `exit_group`, never returning into the parent's Rust code. A
//!   failing step writes one fixed-size report (step and `errno`) to the report socket.
//!
//! The parent-side functions pass pointers to live, correctly sized values the kernel
//! fills or reads during the call only, and take ownership of descriptors the kernel
//! returns exactly once.
#![allow(unsafe_code)]

use std::ffi::CStr;
use std::io;
use std::os::fd::{AsRawFd, BorrowedFd, FromRawFd, OwnedFd, RawFd};
use std::time::Duration;

use libc::{c_char, c_int, c_long, c_uint, c_ulong, c_void};

/// A step of the child's confinement, reported with its `errno` when it fails.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub(crate) enum Step {
    Signals = 1,
    Stdio,
    IdMaps,
    Session,
    ParentDeath,
    Cgroup,
    MountPrivate,
    Tmpfs,
    TmpfsAttach,
    Report,
    ScriptCopy,
    ScriptBind,
    Rlimit,
    Capabilities,
    Identity,
    Workdir,
    NoNewPrivs,
    LandlockRule,
    Landlock,
    Seccomp,
    SeccompListener,
    Descriptors,
    Exec,
}

impl Step {
    /// Every step, for decoding a report.
    const ALL: [Step; 23] = [
        Step::Signals,
        Step::Stdio,
        Step::IdMaps,
        Step::Session,
        Step::ParentDeath,
        Step::Cgroup,
        Step::MountPrivate,
        Step::Tmpfs,
        Step::TmpfsAttach,
        Step::Report,
        Step::ScriptCopy,
        Step::ScriptBind,
        Step::Rlimit,
        Step::Capabilities,
        Step::Identity,
        Step::Workdir,
        Step::NoNewPrivs,
        Step::LandlockRule,
        Step::Landlock,
        Step::Seccomp,
        Step::SeccompListener,
        Step::Descriptors,
        Step::Exec,
    ];

    pub(crate) fn from_u8(value: u8) -> Option<Step> {
        Step::ALL.into_iter().find(|s| *s as u8 == value)
    }

    /// What the step does, for messages.
    pub(crate) fn describe(self) -> &'static str {
        match self {
            Step::Signals => "resetting signal dispositions",
            Step::Stdio => "connecting the standard streams",
            Step::IdMaps => "writing the user namespace's id maps",
            Step::Session => "starting a new session",
            Step::ParentDeath => "setting the parent-death signal",
            Step::Cgroup => "joining the run's cgroup",
            Step::MountPrivate => "making the mount namespace private",
            Step::Tmpfs => "creating the scratch tmpfs",
            Step::TmpfsAttach => "mounting the scratch tmpfs",
            Step::Report => "reporting to the supervisor",
            Step::ScriptCopy => "writing the approved script's private copy",
            Step::ScriptBind => "binding the approved script over its path",
            Step::Rlimit => "setting resource limits",
            Step::Capabilities => "dropping capabilities",
            Step::Identity => "switching to the sandbox user",
            Step::Workdir => "entering the scratch directory",
            Step::NoNewPrivs => "setting no_new_privs",
            Step::LandlockRule => "adding a Landlock rule",
            Step::Landlock => "enforcing Landlock",
            Step::Seccomp => "installing a seccomp filter",
            Step::SeccompListener => "installing the exec filter",
            Step::Descriptors => "closing inherited descriptors",
            Step::Exec => "executing the program",
        }
    }

    /// Whether a failure here means isolation is missing (rather than a bad program).
    pub(crate) fn is_isolation(self) -> bool {
        !matches!(self, Step::Exec | Step::Stdio | Step::ScriptCopy)
    }
}

/// The kind of a report message from the child.
pub(crate) const REPORT_FAILURE: u8 = b'F';
/// The child sends the scratch tmpfs's mount descriptor.
pub(crate) const REPORT_MOUNT: u8 = b'M';
/// The child sends the exec filter's listener.
pub(crate) const REPORT_LISTENER: u8 = b'L';
/// Bytes in one report message: kind, step, two spare, `errno` (little endian).
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
    /// The parent's descriptor.
    pub fd: RawFd,
    /// Its canonical path: reopened without following any symlink and accepted only if it
    /// is the same file (device and inode) as `fd`.
    pub path: &'a CStr,
}

/// The private mount view.
pub(crate) struct MountSpec<'a> {
    /// The run directory (made exclusively by the parent) the tmpfs is mounted on.
    pub run_dir: Reopen<'a>,
    /// tmpfs options as key/value pairs (`size`, `nr_inodes`, `mode`, `uid`, `gid`).
    pub tmpfs: &'a [(&'a CStr, &'a CStr)],
    /// The approved script: its bytes are copied onto the tmpfs and bound read-only
    /// over the script's own file (opened once beneath the skill root and hashed).
    pub script: Option<(Reopen<'a>, &'a [u8])>,
}

/// Landlock, enforced in the child after the mounts exist.
pub(crate) struct LandlockSpec {
    /// A ruleset made by the parent with every rule that needs no run-time path.
    pub ruleset: RawFd,
    /// Rights on the scratch tmpfs's root (added in the child, on the new mount).
    pub scratch_access: u64,
    /// Rights on the approved script's private copy.
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
    pub mounts: Option<MountSpec<'a>>,
    /// `(resource, limit)` pairs; soft and hard set alike.
    pub rlimits: &'a [(c_uint, u64)],
    /// Drop the bounding set up to this capability and clear every other set.
    pub last_cap: Option<u32>,
    /// Root hosts: the fresh uid and gid to become (no supplementary groups).
    pub become_user: Option<(u32, u32)>,
    /// The working directory when there is no tmpfs (the run directory).
    pub workdir: RawFd,
    pub landlock: Option<LandlockSpec>,
    /// seccomp programs installed in order.
    pub filters: &'a [&'a [libc::sock_filter]],
    /// The exec filter, installed last with a listener the parent answers once.
    pub exec_filter: Option<&'a [libc::sock_filter]>,
    /// A descriptor kept open across `execve` (the script copy when no mount view).
    pub keep_fd: Option<RawFd>,
    pub program: &'a CStr,
    /// Null-terminated argument vector.
    pub argv: &'a [*const c_char],
    /// Null-terminated environment.
    pub envp: &'a [*const c_char],
}

/// The namespaces of a run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Namespaces {
    pub user: bool,
    pub mount: bool,
    pub pid: bool,
    pub net: bool,
    pub ipc: bool,
    pub uts: bool,
}

impl Namespaces {
    fn clone_flags(self) -> c_ulong {
        let mut flags = 0;
        for (on, flag) in [
            (self.user, libc::CLONE_NEWUSER),
            (self.mount, libc::CLONE_NEWNS),
            (self.pid, libc::CLONE_NEWPID),
            (self.net, libc::CLONE_NEWNET),
            (self.ipc, libc::CLONE_NEWIPC),
            (self.uts, libc::CLONE_NEWUTS),
        ] {
            if on {
                flags |= flag;
            }
        }
        flags as c_ulong
    }
}

/// Makes the run's first process and confines it (see the module docs). Returns its pid
/// (in the caller's namespace) and a pidfd.
pub(crate) fn spawn(spec: &ChildSpec<'_>, namespaces: Namespaces) -> io::Result<(i32, OwnedFd)> {
    let mut pidfd: c_int = -1;
    let flags = namespaces.clone_flags() | libc::CLONE_PIDFD as c_ulong;
    // SAFETY: a fork-like clone (no CLONE_VM, stack pointer 0 keeps the copied stack); the
    // child runs only `child_main` (see the module's safety argument). `pidfd` outlives the
    // call and the kernel writes one c_int to it.
    let ret = unsafe {
        libc::syscall(
            libc::SYS_clone,
            flags,
            0 as c_ulong,
            &mut pidfd as *mut c_int,
            0 as c_ulong,
            0 as c_ulong,
        )
    };
    if ret < 0 {
        return Err(io::Error::last_os_error());
    }
    if ret == 0 {
        child_main(spec);
    }
    let pid = i32::try_from(ret).map_err(|_| io::Error::from_raw_os_error(libc::EOVERFLOW))?;
    // SAFETY: CLONE_PIDFD stored a new descriptor we now own.
    let pidfd = unsafe { OwnedFd::from_raw_fd(pidfd) };
    Ok((pid, pidfd))
}

fn errno() -> i32 {
    // SAFETY: reads the calling thread's errno.
    unsafe { *libc::__errno_location() }
}

/// Writes a failure report and exits. Never returns.
fn fail(report: RawFd, step: Step, err: i32) -> ! {
    let e = err.to_le_bytes();
    let msg: [u8; REPORT_LEN] = [REPORT_FAILURE, step as u8, 0, 0, e[0], e[1], e[2], e[3]];
    // SAFETY: raw write of a stack buffer, then exit_group.
    unsafe {
        libc::syscall(
            libc::SYS_write,
            report as c_long,
            msg.as_ptr() as *const c_void,
            REPORT_LEN,
        );
        libc::syscall(libc::SYS_exit_group, 127 as c_long);
    }
    #[allow(clippy::empty_loop)]
    loop {}
}

/// Checks a raw syscall's return value: negative fails the step.
fn check(report: RawFd, step: Step, ret: c_long) -> c_long {
    if ret < 0 {
        fail(report, step, errno());
    }
    ret
}

/// Writes all of `bytes` to `fd` (child side). Returns an errno on failure.
fn write_all(fd: RawFd, mut bytes: &[u8]) -> Result<(), i32> {
    while !bytes.is_empty() {
        // SAFETY: raw write from a live slice.
        let n = unsafe {
            libc::syscall(
                libc::SYS_write,
                fd as c_long,
                bytes.as_ptr() as *const c_void,
                bytes.len(),
            )
        };
        if n < 0 {
            let e = errno();
            if e == libc::EINTR {
                continue;
            }
            return Err(e);
        }
        let n = usize::try_from(n).unwrap_or(0);
        if n == 0 {
            return Err(libc::EIO);
        }
        bytes = bytes.get(n..).unwrap_or(&[]);
    }
    Ok(())
}

/// Opens `path` relative to `dir` (child side).
fn openat(dir: RawFd, path: &CStr, flags: c_int, mode: c_uint) -> c_long {
    // SAFETY: raw openat with a NUL-terminated path.
    unsafe {
        libc::syscall(
            libc::SYS_openat,
            dir as c_long,
            path.as_ptr(),
            flags as c_long,
            mode as c_long,
        )
    }
}

fn close(fd: RawFd) {
    // SAFETY: raw close of a descriptor this process owns.
    unsafe {
        libc::syscall(libc::SYS_close, fd as c_long);
    }
}

/// Sends a report carrying one descriptor (child side).
fn send_fd(report: RawFd, kind: u8, fd: RawFd) -> Result<(), i32> {
    let msg: [u8; REPORT_LEN] = [kind, 0, 0, 0, 0, 0, 0, 0];
    let mut iov = libc::iovec {
        iov_base: msg.as_ptr() as *mut c_void,
        iov_len: REPORT_LEN,
    };
    // 8-byte aligned room for one cmsghdr carrying one int.
    let mut control = [0u64; 4];
    // SAFETY: CMSG_SPACE/CMSG_LEN are arithmetic.
    let space = unsafe { libc::CMSG_SPACE(std::mem::size_of::<c_int>() as c_uint) } as usize;
    if space > std::mem::size_of_val(&control) {
        return Err(libc::EINVAL);
    }
    // SAFETY: msghdr is plain data; every field is set below.
    let mut header: libc::msghdr = unsafe { std::mem::zeroed() };
    header.msg_iov = &mut iov;
    header.msg_iovlen = 1;
    header.msg_control = control.as_mut_ptr() as *mut c_void;
    header.msg_controllen = space as _;
    // SAFETY: the control buffer is large enough for one header (checked above), so
    // CMSG_FIRSTHDR is non-null and CMSG_DATA points inside it.
    unsafe {
        let cmsg = libc::CMSG_FIRSTHDR(&header);
        if cmsg.is_null() {
            return Err(libc::EINVAL);
        }
        (*cmsg).cmsg_level = libc::SOL_SOCKET;
        (*cmsg).cmsg_type = libc::SCM_RIGHTS;
        (*cmsg).cmsg_len = libc::CMSG_LEN(std::mem::size_of::<c_int>() as c_uint) as _;
        std::ptr::write_unaligned(libc::CMSG_DATA(cmsg) as *mut c_int, fd);
    }
    // SAFETY: raw sendmsg with the header built above.
    let ret = unsafe {
        libc::syscall(
            libc::SYS_sendmsg,
            report as c_long,
            &header as *const libc::msghdr,
            libc::MSG_NOSIGNAL as c_long,
        )
    };
    if ret < 0 { Err(errno()) } else { Ok(()) }
}

const FSOPEN_CLOEXEC: c_uint = 1;
const FSCONFIG_SET_STRING: c_uint = 1;
const FSCONFIG_CMD_CREATE: c_uint = 6;
const FSMOUNT_CLOEXEC: c_uint = 1;
const MOUNT_ATTR_RDONLY: u64 = 0x1;
const MOUNT_ATTR_NOSUID: u64 = 0x2;
const MOUNT_ATTR_NODEV: u64 = 0x4;
const MOUNT_ATTR_NOEXEC: u64 = 0x8;
const MOVE_MOUNT_F_EMPTY_PATH: c_uint = 0x4;
const MOVE_MOUNT_T_EMPTY_PATH: c_uint = 0x40;
const OPEN_TREE_CLONE: c_uint = 1;
const LANDLOCK_RULE_PATH_BENEATH: c_long = 1;
const LANDLOCK_CREATE_RULESET_VERSION: c_long = 1;
const SECCOMP_SET_MODE_FILTER: c_long = 1;
const LINUX_CAPABILITY_VERSION_3: u32 = 0x2008_0522;

#[repr(C)]
struct MountAttr {
    attr_set: u64,
    attr_clr: u64,
    propagation: u64,
    userns_fd: u64,
}

#[repr(C, packed)]
struct LandlockPathBeneath {
    allowed_access: u64,
    parent_fd: i32,
}

#[repr(C)]
struct CapHeader {
    version: u32,
    pid: c_int,
}

#[repr(C)]
#[derive(Clone, Copy)]
struct CapData {
    effective: u32,
    permitted: u32,
    inheritable: u32,
}

/// The script copy's name on the tmpfs while it is bound (removed right after).
const SCRIPT_COPY: &CStr = c".skills-approved-script";
const EMPTY: &CStr = c"";

fn add_landlock_rule(report: RawFd, ruleset: RawFd, fd: RawFd, access: u64) {
    if access == 0 {
        return;
    }
    let attr = LandlockPathBeneath {
        allowed_access: access,
        parent_fd: fd,
    };
    // SAFETY: raw landlock_add_rule with a live, packed attribute struct.
    let ret = unsafe {
        libc::syscall(
            libc::SYS_landlock_add_rule,
            ruleset as c_long,
            LANDLOCK_RULE_PATH_BENEATH,
            &attr as *const LandlockPathBeneath,
            0 as c_long,
        )
    };
    check(report, Step::LandlockRule, ret);
}

fn install_filter(
    report: RawFd,
    filter: &[libc::sock_filter],
    flags: c_ulong,
    step: Step,
) -> c_long {
    let Ok(len) = u16::try_from(filter.len()) else {
        fail(report, step, libc::E2BIG);
    };
    let program = libc::sock_fprog {
        len,
        filter: filter.as_ptr() as *mut libc::sock_filter,
    };
    // SAFETY: raw seccomp with a program pointing at a live slice.
    let ret = unsafe {
        libc::syscall(
            libc::SYS_seccomp,
            SECCOMP_SET_MODE_FILTER,
            flags as c_long,
            &program as *const libc::sock_fprog,
        )
    };
    check(report, step, ret)
}

const RESOLVE_NO_SYMLINKS: u64 = 0x04;

#[repr(C)]
struct OpenHow {
    flags: u64,
    mode: u64,
    resolve: u64,
}

/// Identity of a file: device and inode (child side).
fn identity(fd: RawFd) -> Result<(u64, u64), i32> {
    // SAFETY: raw fstat into a zeroed stack struct.
    unsafe {
        let mut st: libc::stat = std::mem::zeroed();
        if libc::syscall(libc::SYS_fstat, fd as c_long, &mut st as *mut libc::stat) < 0 {
            return Err(errno());
        }
        Ok((st.st_dev as u64, st.st_ino as u64))
    }
}

/// Opens `target.path` in this mount namespace (O_PATH, no symlinks anywhere) and checks it
/// is the file the parent opened (child side).
fn reopen(report: RawFd, step: Step, target: &Reopen<'_>, directory: bool) -> RawFd {
    let mut flags = (libc::O_PATH | libc::O_CLOEXEC | libc::O_NOFOLLOW) as u64;
    if directory {
        flags |= libc::O_DIRECTORY as u64;
    }
    let how = OpenHow {
        flags,
        mode: 0,
        resolve: RESOLVE_NO_SYMLINKS,
    };
    // SAFETY: raw openat2 with a NUL-terminated path and a stack struct.
    let fd = unsafe {
        libc::syscall(
            libc::SYS_openat2,
            libc::AT_FDCWD as c_long,
            target.path.as_ptr(),
            &how as *const OpenHow,
            std::mem::size_of::<OpenHow>(),
        )
    };
    let fd = check(report, step, fd) as RawFd;
    let here = identity(fd).unwrap_or_else(|e| fail(report, step, e));
    let there = identity(target.fd).unwrap_or_else(|e| fail(report, step, e));
    if here != there {
        fail(report, step, libc::ESTALE);
    }
    fd
}

/// Mounts the scratch tmpfs on the run directory, reports its descriptor, and binds the
/// approved script's copy over the script. Returns the tmpfs root and the copy (O_PATH).
fn mount_view(report: RawFd, mounts: &MountSpec<'_>) -> (RawFd, Option<RawFd>) {
    // SAFETY (whole function): raw mount-API syscalls with NUL-terminated strings from
    // `mounts` and stack structs that outlive each call.
    unsafe {
        let ret = libc::syscall(
            libc::SYS_mount,
            c"none".as_ptr(),
            c"/".as_ptr(),
            std::ptr::null::<c_char>(),
            (libc::MS_REC | libc::MS_PRIVATE) as c_ulong,
            std::ptr::null::<c_void>(),
        );
        check(report, Step::MountPrivate, ret);
        let fs = check(
            report,
            Step::Tmpfs,
            libc::syscall(
                libc::SYS_fsopen,
                c"tmpfs".as_ptr(),
                FSOPEN_CLOEXEC as c_long,
            ),
        ) as RawFd;
        for (key, value) in mounts.tmpfs {
            let ret = libc::syscall(
                libc::SYS_fsconfig,
                fs as c_long,
                FSCONFIG_SET_STRING as c_long,
                key.as_ptr(),
                value.as_ptr(),
                0 as c_long,
            );
            check(report, Step::Tmpfs, ret);
        }
        let ret = libc::syscall(
            libc::SYS_fsconfig,
            fs as c_long,
            FSCONFIG_CMD_CREATE as c_long,
            std::ptr::null::<c_char>(),
            std::ptr::null::<c_char>(),
            0 as c_long,
        );
        check(report, Step::Tmpfs, ret);
        let attrs = MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC;
        let root = check(
            report,
            Step::Tmpfs,
            libc::syscall(
                libc::SYS_fsmount,
                fs as c_long,
                FSMOUNT_CLOEXEC as c_long,
                attrs as c_long,
            ),
        ) as RawFd;
        close(fs);
        let run_dir = reopen(report, Step::TmpfsAttach, &mounts.run_dir, true);
        let ret = libc::syscall(
            libc::SYS_move_mount,
            root as c_long,
            EMPTY.as_ptr(),
            run_dir as c_long,
            EMPTY.as_ptr(),
            (MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) as c_long,
        );
        check(report, Step::TmpfsAttach, ret);
        close(run_dir);
        if let Err(e) = send_fd(report, REPORT_MOUNT, root) {
            fail(report, Step::Report, e);
        }
        let Some((script, bytes)) = &mounts.script else {
            return (root, None);
        };
        // The file hashed in the parent, found again here: a file replaced since fails.
        let target = reopen(report, Step::ScriptBind, script, false);
        let copy = check(
            report,
            Step::ScriptCopy,
            openat(
                root,
                SCRIPT_COPY,
                libc::O_CREAT | libc::O_EXCL | libc::O_WRONLY | libc::O_CLOEXEC | libc::O_NOFOLLOW,
                0o444,
            ),
        ) as RawFd;
        if let Err(e) = write_all(copy, bytes) {
            fail(report, Step::ScriptCopy, e);
        }
        close(copy);
        let copy = check(
            report,
            Step::ScriptCopy,
            openat(
                root,
                SCRIPT_COPY,
                libc::O_PATH | libc::O_NOFOLLOW | libc::O_CLOEXEC,
                0,
            ),
        ) as RawFd;
        let tree = check(
            report,
            Step::ScriptBind,
            libc::syscall(
                libc::SYS_open_tree,
                copy as c_long,
                EMPTY.as_ptr(),
                (OPEN_TREE_CLONE as c_int | libc::O_CLOEXEC | libc::AT_EMPTY_PATH) as c_long,
            ),
        ) as RawFd;
        let attr = MountAttr {
            attr_set: MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC,
            attr_clr: 0,
            propagation: 0,
            userns_fd: 0,
        };
        let ret = libc::syscall(
            libc::SYS_mount_setattr,
            tree as c_long,
            EMPTY.as_ptr(),
            libc::AT_EMPTY_PATH as c_long,
            &attr as *const MountAttr,
            std::mem::size_of::<MountAttr>(),
        );
        check(report, Step::ScriptBind, ret);
        let ret = libc::syscall(
            libc::SYS_move_mount,
            tree as c_long,
            EMPTY.as_ptr(),
            target as c_long,
            EMPTY.as_ptr(),
            (MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) as c_long,
        );
        check(report, Step::ScriptBind, ret);
        close(tree);
        close(target);
        // The bind keeps the copy alive; its name in scratch goes.
        let ret = libc::syscall(
            libc::SYS_unlinkat,
            root as c_long,
            SCRIPT_COPY.as_ptr(),
            0 as c_long,
        );
        check(report, Step::ScriptBind, ret);
        (root, Some(copy))
    }
}

/// The child: confine, then exec. Never returns.
fn child_main(spec: &ChildSpec<'_>) -> ! {
    let report = spec.report;
    // SAFETY (whole function): raw syscalls on values prepared before the clone; see the
    // module's safety argument. sigaction and sigprocmask are async-signal-safe.
    unsafe {
        // Signals: an empty mask and default dispositions (ignored ones survive execve).
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        if libc::sigprocmask(libc::SIG_SETMASK, &set, std::ptr::null_mut()) != 0 {
            fail(report, Step::Signals, errno());
        }
        for signal in 1..32 {
            if signal != libc::SIGKILL && signal != libc::SIGSTOP {
                libc::signal(signal, libc::SIG_DFL);
            }
        }
        // Standard streams.
        for (target, &source) in spec.stdio.iter().enumerate() {
            let target = target as c_long;
            let ret = if source as c_long == target {
                libc::syscall(
                    libc::SYS_fcntl,
                    target,
                    libc::F_SETFD as c_long,
                    0 as c_long,
                )
            } else {
                libc::syscall(libc::SYS_dup3, source as c_long, target, 0 as c_long)
            };
            check(report, Step::Stdio, ret);
        }
        if let Some(maps) = &spec.id_maps {
            for (path, content) in [
                (c"/proc/self/setgroups", b"deny".as_slice()),
                (c"/proc/self/uid_map", maps.uid_map),
                (c"/proc/self/gid_map", maps.gid_map),
            ] {
                let fd = check(
                    report,
                    Step::IdMaps,
                    openat(libc::AT_FDCWD, path, libc::O_WRONLY | libc::O_CLOEXEC, 0),
                ) as RawFd;
                if let Err(e) = write_all(fd, content) {
                    fail(report, Step::IdMaps, e);
                }
                close(fd);
            }
        }
        check(report, Step::Session, libc::syscall(libc::SYS_setsid));
        let ret = libc::syscall(
            libc::SYS_prctl,
            libc::PR_SET_PDEATHSIG as c_long,
            libc::SIGKILL as c_long,
            0 as c_long,
            0 as c_long,
            0 as c_long,
        );
        check(report, Step::ParentDeath, ret);
        for &procs in spec.cgroup_procs {
            if let Err(e) = write_all(procs, b"0") {
                fail(report, Step::Cgroup, e);
            }
        }
        let (workdir, script_copy) = match &spec.mounts {
            Some(mounts) => mount_view(report, mounts),
            None => (spec.workdir, None),
        };
        for &(resource, limit) in spec.rlimits {
            let value = libc::rlimit64 {
                rlim_cur: limit,
                rlim_max: limit,
            };
            let ret = libc::syscall(
                libc::SYS_prlimit64,
                0 as c_long,
                resource as c_long,
                &value as *const libc::rlimit64,
                std::ptr::null_mut::<libc::rlimit64>(),
            );
            check(report, Step::Rlimit, ret);
        }
        if let Some(last) = spec.last_cap {
            for cap in 0..=last {
                let ret = libc::syscall(
                    libc::SYS_prctl,
                    libc::PR_CAPBSET_DROP as c_long,
                    cap as c_long,
                    0 as c_long,
                    0 as c_long,
                    0 as c_long,
                );
                // EINVAL: a capability this kernel does not know.
                if ret < 0 && errno() != libc::EINVAL {
                    fail(report, Step::Capabilities, errno());
                }
            }
        }
        if let Some((uid, gid)) = spec.become_user {
            let ret = libc::syscall(
                libc::SYS_setgroups,
                0 as c_long,
                std::ptr::null::<libc::gid_t>(),
            );
            check(report, Step::Identity, ret);
            let ret = libc::syscall(
                libc::SYS_setresgid,
                gid as c_long,
                gid as c_long,
                gid as c_long,
            );
            check(report, Step::Identity, ret);
            let ret = libc::syscall(
                libc::SYS_setresuid,
                uid as c_long,
                uid as c_long,
                uid as c_long,
            );
            check(report, Step::Identity, ret);
        }
        if spec.last_cap.is_some() {
            let header = CapHeader {
                version: LINUX_CAPABILITY_VERSION_3,
                pid: 0,
            };
            let data = [CapData {
                effective: 0,
                permitted: 0,
                inheritable: 0,
            }; 2];
            let ret = libc::syscall(libc::SYS_capset, &header as *const CapHeader, data.as_ptr());
            check(report, Step::Capabilities, ret);
        }
        check(
            report,
            Step::Workdir,
            libc::syscall(libc::SYS_fchdir, workdir as c_long),
        );
        let ret = libc::syscall(
            libc::SYS_prctl,
            libc::PR_SET_NO_NEW_PRIVS as c_long,
            1 as c_long,
            0 as c_long,
            0 as c_long,
            0 as c_long,
        );
        check(report, Step::NoNewPrivs, ret);
        if let Some(landlock) = &spec.landlock {
            add_landlock_rule(report, landlock.ruleset, workdir, landlock.scratch_access);
            if let Some(copy) = script_copy {
                add_landlock_rule(report, landlock.ruleset, copy, landlock.script_access);
            }
            let ret = libc::syscall(
                libc::SYS_landlock_restrict_self,
                landlock.ruleset as c_long,
                0 as c_long,
            );
            check(report, Step::Landlock, ret);
        }
        for filter in spec.filters {
            install_filter(report, filter, 0, Step::Seccomp);
        }
        // Close-on-exec on everything above stderr: nothing the host opened reaches the
        // program, while the report socket still works until execve.
        let ret = libc::syscall(
            libc::SYS_close_range,
            3 as c_long,
            c_uint::MAX as c_long,
            libc::CLOSE_RANGE_CLOEXEC as c_long,
        );
        check(report, Step::Descriptors, ret);
        if let Some(fd) = spec.keep_fd {
            let ret = libc::syscall(
                libc::SYS_fcntl,
                fd as c_long,
                libc::F_SETFD as c_long,
                0 as c_long,
            );
            check(report, Step::Descriptors, ret);
        }
        if let Some(filter) = spec.exec_filter {
            let listener = install_filter(
                report,
                filter,
                libc::SECCOMP_FILTER_FLAG_NEW_LISTENER,
                Step::SeccompListener,
            ) as RawFd;
            if let Err(e) = send_fd(report, REPORT_LISTENER, listener) {
                fail(report, Step::Report, e);
            }
            close(listener);
        }
        // Last: the script's path must still lead to the private copy (a rename in the
        // host detaches a bind in every namespace; then nothing runs).
        if let (Some(copy), Some(mounts)) = (script_copy, &spec.mounts)
            && let Some((script, _)) = &mounts.script
        {
            let mut st: libc::stat = std::mem::zeroed();
            let ret = libc::syscall(
                libc::SYS_newfstatat,
                libc::AT_FDCWD as c_long,
                script.path.as_ptr(),
                &mut st as *mut libc::stat,
                libc::AT_SYMLINK_NOFOLLOW as c_long,
            );
            check(report, Step::ScriptBind, ret);
            let expected = identity(copy).unwrap_or_else(|e| fail(report, Step::ScriptBind, e));
            if (st.st_dev as u64, st.st_ino as u64) != expected {
                fail(report, Step::ScriptBind, libc::ESTALE);
            }
        }
        // With the exec filter this blocks until the supervisor lets this one call through.
        libc::syscall(
            libc::SYS_execve,
            spec.program.as_ptr(),
            spec.argv.as_ptr(),
            spec.envp.as_ptr(),
        );
        fail(report, Step::Exec, errno())
    }
}

/// The kernel's Landlock ABI version, or `None` when Landlock is unavailable.
pub(crate) fn landlock_abi() -> Option<u8> {
    // SAFETY: landlock_create_ruleset(NULL, 0, VERSION) only returns a number.
    let ret = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<c_void>(),
            0 as c_long,
            LANDLOCK_CREATE_RULESET_VERSION,
        )
    };
    u8::try_from(ret).ok().filter(|v| *v > 0)
}

/// Sends `signal` through a pidfd (no pid reuse race).
pub(crate) fn pidfd_send_signal(pidfd: BorrowedFd<'_>, signal: c_int) -> io::Result<()> {
    // SAFETY: raw pidfd_send_signal with no siginfo.
    let ret = unsafe {
        libc::syscall(
            libc::SYS_pidfd_send_signal,
            pidfd.as_raw_fd() as c_long,
            signal as c_long,
            std::ptr::null::<libc::siginfo_t>(),
            0 as c_long,
        )
    };
    if ret < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

/// Lets exactly one `execve` through the exec filter (the child's own launch of the
/// program), then closes the listener: every later `execve` or `execveat` fails with
/// `ENOSYS`. Returns an error when the child went away first or the call was not the
/// expected `execve`.
pub(crate) fn allow_one_exec(listener: OwnedFd, timeout: Duration) -> io::Result<()> {
    use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
    let millis = u16::try_from(timeout.as_millis()).unwrap_or(u16::MAX);
    let mut fds = [PollFd::new(
        std::os::fd::AsFd::as_fd(&listener),
        PollFlags::POLLIN,
    )];
    let ready = poll(&mut fds, PollTimeout::from(millis)).map_err(io::Error::from)?;
    let revents = fds[0].revents().unwrap_or(PollFlags::empty());
    if ready == 0 || !revents.contains(PollFlags::POLLIN) {
        return Err(io::Error::new(
            io::ErrorKind::TimedOut,
            "the launch never reached execve",
        ));
    }
    // SAFETY: the kernel requires a zeroed seccomp_notif and fills it.
    let mut notif: libc::seccomp_notif = unsafe { std::mem::zeroed() };
    // SAFETY: ioctl on the listener with a live, correctly sized struct.
    let ret = unsafe {
        libc::ioctl(
            listener.as_raw_fd(),
            libc::SECCOMP_IOCTL_NOTIF_RECV as _,
            &mut notif as *mut libc::seccomp_notif,
        )
    };
    if ret < 0 {
        return Err(io::Error::last_os_error());
    }
    let expected = i64::from(notif.data.nr) == libc::SYS_execve;
    let response = libc::seccomp_notif_resp {
        id: notif.id,
        val: 0,
        error: if expected { 0 } else { -libc::EPERM },
        flags: if expected {
            libc::SECCOMP_USER_NOTIF_FLAG_CONTINUE as u32
        } else {
            0
        },
    };
    // SAFETY: ioctl on the listener with a live, correctly sized struct.
    let ret = unsafe {
        libc::ioctl(
            listener.as_raw_fd(),
            libc::SECCOMP_IOCTL_NOTIF_SEND as _,
            &response as *const libc::seccomp_notif_resp,
        )
    };
    if ret < 0 {
        return Err(io::Error::last_os_error());
    }
    drop(listener);
    if expected {
        Ok(())
    } else {
        Err(io::Error::other(
            "the first exec was not the launch's execve",
        ))
    }
}

/// Receives one report from the child: `None` at end of stream (the child executed its
/// program, or died), else the message and the descriptor it carried, if any.
pub(crate) fn recv_report(
    socket: BorrowedFd<'_>,
) -> io::Result<(Option<[u8; REPORT_LEN]>, Option<OwnedFd>)> {
    let mut message = [0u8; REPORT_LEN];
    let mut iov = libc::iovec {
        iov_base: message.as_mut_ptr() as *mut c_void,
        iov_len: REPORT_LEN,
    };
    let mut control = [0u64; 4];
    // SAFETY: msghdr is plain data; the fields used are set below.
    let mut header: libc::msghdr = unsafe { std::mem::zeroed() };
    header.msg_iov = &mut iov;
    header.msg_iovlen = 1;
    header.msg_control = control.as_mut_ptr() as *mut c_void;
    header.msg_controllen = std::mem::size_of_val(&control) as _;
    let n = loop {
        // SAFETY: recvmsg into buffers that outlive the call.
        let n = unsafe { libc::recvmsg(socket.as_raw_fd(), &mut header, libc::MSG_CMSG_CLOEXEC) };
        if n < 0 {
            let e = io::Error::last_os_error();
            if e.raw_os_error() == Some(libc::EINTR) {
                continue;
            }
            return Err(e);
        }
        break n;
    };
    let mut fd = None;
    // SAFETY: the kernel filled `control` with at most msg_controllen bytes; CMSG_* walk it.
    unsafe {
        let mut cmsg = libc::CMSG_FIRSTHDR(&header);
        while !cmsg.is_null() {
            if (*cmsg).cmsg_level == libc::SOL_SOCKET && (*cmsg).cmsg_type == libc::SCM_RIGHTS {
                let raw = std::ptr::read_unaligned(libc::CMSG_DATA(cmsg) as *const c_int);
                // Each SCM_RIGHTS descriptor is new in this process and ours to own.
                let owned = OwnedFd::from_raw_fd(raw);
                if fd.is_none() {
                    fd = Some(owned);
                }
            }
            cmsg = libc::CMSG_NXTHDR(&header, cmsg);
        }
    }
    if n == 0 {
        return Ok((None, fd));
    }
    Ok((Some(message), fd))
}
