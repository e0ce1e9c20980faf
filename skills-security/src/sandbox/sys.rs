//! The one module of the workspace that uses `unsafe`: the fork-like `clone` that starts a
//! run, thin wrappers over the raw system calls the child makes before `execve`, and the few
//! parent-side calls no safe wrapper offers (seccomp user notification, `SCM_RIGHTS`).
//!
//! # Safety argument
//!
//! [`spawn`] clones without `CLONE_VM` and without a new stack: the child gets a copy of the
//! parent's address space, in which other threads of the host may have held locks (the
//! allocator's among them) at the moment of the copy, and in which glibc still believes it
//! is multi-threaded. The child therefore runs only `child::main` and never returns into the
//! parent's code: that program (in `child.rs`, safe Rust) touches only memory prepared before
//! the clone, never allocates, takes no lock, formats nothing and cannot panic, and reaches
//! the kernel only through the wrappers below. Each wrapper is one raw `syscall` (glibc's
//! `setresuid` and friends are avoided on purpose: in a copied multi-threaded process they
//! would try to signal the parent's threads), or `sigaction`/`sigprocmask`, which POSIX
//! lists as async-signal-safe. The wrappers take references, slices and C strings, so every
//! pointer the kernel reads or writes is live for the call and correctly sized; descriptors
//! are plain numbers (a wrong one is an error from the kernel, not undefined behaviour).
//!
//! The parent-side functions likewise pass pointers to live, correctly sized values for the
//! duration of one call, and take ownership of each descriptor the kernel returns exactly
//! once.
#![allow(unsafe_code)]

use std::ffi::CStr;
use std::io;
use std::os::fd::{AsRawFd, BorrowedFd, FromRawFd, OwnedFd, RawFd};

use libc::{c_char, c_int, c_long, c_uint, c_ulong, c_void};

use super::child::{self, ChildSpec};

mod notify;
pub(crate) use notify::{Answer, Notification, answer, pidfd_getfd, receive, still_valid};

/// A syscall's result: its return value, or the `errno` it failed with.
pub(crate) type Sys = Result<c_long, i32>;

fn errno() -> i32 {
    // SAFETY: reads the calling thread's errno.
    unsafe { *libc::__errno_location() }
}

fn result(ret: c_long) -> Sys {
    if ret < 0 { Err(errno()) } else { Ok(ret) }
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

/// Makes the run's first process in `namespaces` and runs `child::main(spec)` in it. Returns
/// its pid (in the caller's namespace) and a pidfd. No exit signal: only a waiter that
/// names it (`__WALL` on the pidfd) reaps it, never a host's `waitpid(-1)`.
pub(crate) fn spawn(spec: &ChildSpec<'_>, namespaces: Namespaces) -> io::Result<(i32, OwnedFd)> {
    let mut pidfd: c_int = -1;
    let flags = namespaces.clone_flags() | libc::CLONE_PIDFD as c_ulong;
    // SAFETY: a fork-like clone (no CLONE_VM; stack pointer 0 keeps the copied stack); the
    // child runs only `child::main` (see the module's safety argument). `pidfd` outlives the
    // call; the kernel writes one c_int to it (the parent-tid slot is the third argument on
    // x86_64 and aarch64 alike).
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
        child::main(spec);
    }
    // SAFETY: CLONE_PIDFD stored a new descriptor we now own.
    let pidfd = unsafe { OwnedFd::from_raw_fd(pidfd) };
    let pid = i32::try_from(ret).map_err(|_| io::Error::from_raw_os_error(libc::EOVERFLOW))?;
    Ok((pid, pidfd))
}

// ---- Child-side wrappers: one system call each. ----

/// `write(2)` of all of `bytes`.
pub(crate) fn write_all(fd: RawFd, mut bytes: &[u8]) -> Result<(), i32> {
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
        match result(n) {
            Err(libc::EINTR) => continue,
            Err(e) => return Err(e),
            Ok(0) => return Err(libc::EIO),
            Ok(n) => {
                bytes = bytes
                    .get(usize::try_from(n).unwrap_or(usize::MAX)..)
                    .unwrap_or(&[])
            }
        }
    }
    Ok(())
}

/// `read(2)` of one byte (waits for the supervisor's acknowledgement).
pub(crate) fn read_byte(fd: RawFd) -> Sys {
    let mut byte = [0u8; 1];
    loop {
        // SAFETY: raw read into a live one-byte stack buffer.
        let n = result(unsafe {
            libc::syscall(
                libc::SYS_read,
                fd as c_long,
                byte.as_mut_ptr() as *mut c_void,
                1usize,
            )
        });
        match n {
            Err(libc::EINTR) => continue,
            Ok(0) => return Err(libc::EPIPE),
            other => return other,
        }
    }
}

/// `openat(2)`.
pub(crate) fn openat(dir: RawFd, path: &CStr, flags: c_int, mode: c_uint) -> Sys {
    // SAFETY: a NUL-terminated path.
    result(unsafe {
        libc::syscall(
            libc::SYS_openat,
            dir as c_long,
            path.as_ptr(),
            flags as c_long,
            mode as c_long,
        )
    })
}

#[repr(C)]
struct OpenHow {
    flags: u64,
    mode: u64,
    resolve: u64,
}
const RESOLVE_NO_SYMLINKS: u64 = 0x04;

/// `openat2(2)` of an absolute path with `RESOLVE_NO_SYMLINKS`.
pub(crate) fn open_no_symlinks(path: &CStr, flags: c_int) -> Sys {
    let how = OpenHow {
        flags: flags as u64,
        mode: 0,
        resolve: RESOLVE_NO_SYMLINKS,
    };
    // SAFETY: a NUL-terminated path and a stack struct of the size passed.
    result(unsafe {
        libc::syscall(
            libc::SYS_openat2,
            libc::AT_FDCWD as c_long,
            path.as_ptr(),
            &how as *const OpenHow,
            std::mem::size_of::<OpenHow>(),
        )
    })
}

/// `close(2)`.
pub(crate) fn close(fd: RawFd) {
    // SAFETY: closes a number; the caller owns it.
    unsafe {
        libc::syscall(libc::SYS_close, fd as c_long);
    }
}

/// Device and inode of `fd` (`fstat(2)`).
pub(crate) fn identity(fd: RawFd) -> Result<(u64, u64), i32> {
    // SAFETY: fstat into a zeroed stack struct of the kernel's layout.
    unsafe {
        let mut st: libc::stat = std::mem::zeroed();
        result(libc::syscall(
            libc::SYS_fstat,
            fd as c_long,
            &mut st as *mut libc::stat,
        ))?;
        Ok((st.st_dev as u64, st.st_ino as u64))
    }
}

/// A system call whose arguments are all integers (private: a pointer-taking call through
/// it would let a number be read as an address).
fn call(nr: c_long, args: [c_long; 5]) -> Sys {
    // SAFETY: every caller below passes a call that takes no pointer.
    result(unsafe { libc::syscall(nr, args[0], args[1], args[2], args[3], args[4]) })
}

/// `setsid(2)`.
pub(crate) fn setsid() -> Sys {
    call(libc::SYS_setsid, [0; 5])
}

/// `prctl(option, arg, 0, 0, 0)` for integer options.
pub(crate) fn prctl(option: c_int, arg: c_long) -> Sys {
    call(libc::SYS_prctl, [option as c_long, arg, 0, 0, 0])
}

/// `dup3(from, to, 0)`, or clearing close-on-exec when they are the same descriptor.
pub(crate) fn dup_onto(from: RawFd, to: RawFd) -> Sys {
    if from == to {
        set_cloexec(to, false)
    } else {
        call(libc::SYS_dup3, [from as c_long, to as c_long, 0, 0, 0])
    }
}

/// `fcntl(fd, F_SETFD, FD_CLOEXEC or 0)`.
pub(crate) fn set_cloexec(fd: RawFd, on: bool) -> Sys {
    let flag = if on { libc::FD_CLOEXEC } else { 0 };
    call(
        libc::SYS_fcntl,
        [fd as c_long, libc::F_SETFD as c_long, flag as c_long, 0, 0],
    )
}

/// `setresgid(gid, gid, gid)` (the raw call: only this thread exists in the child).
pub(crate) fn setresgid(gid: u32) -> Sys {
    call(
        libc::SYS_setresgid,
        [gid as c_long, gid as c_long, gid as c_long, 0, 0],
    )
}

/// `setresuid(uid, uid, uid)` (the raw call: only this thread exists in the child).
pub(crate) fn setresuid(uid: u32) -> Sys {
    call(
        libc::SYS_setresuid,
        [uid as c_long, uid as c_long, uid as c_long, 0, 0],
    )
}

/// `fchdir(2)`.
pub(crate) fn fchdir(fd: RawFd) -> Sys {
    call(libc::SYS_fchdir, [fd as c_long, 0, 0, 0, 0])
}

/// `landlock_restrict_self(ruleset, 0)`.
pub(crate) fn landlock_restrict_self(ruleset: RawFd) -> Sys {
    call(
        libc::SYS_landlock_restrict_self,
        [ruleset as c_long, 0, 0, 0, 0],
    )
}

/// `close_range(from, ~0, CLOSE_RANGE_CLOEXEC)`.
pub(crate) fn cloexec_from(from: c_uint) -> Sys {
    call(
        libc::SYS_close_range,
        [
            from as c_long,
            c_uint::MAX as c_long,
            libc::CLOSE_RANGE_CLOEXEC as c_long,
            0,
            0,
        ],
    )
}

/// `fsmount(fs, FSMOUNT_CLOEXEC, attributes)`.
pub(crate) fn fsmount(fs: RawFd, attributes: u64) -> Sys {
    call(
        libc::SYS_fsmount,
        [fs as c_long, 1, attributes as c_long, 0, 0],
    )
}

/// `prlimit64(0, resource, {limit, limit}, NULL)`.
pub(crate) fn set_rlimit(resource: c_uint, limit: u64) -> Sys {
    let value = libc::rlimit64 {
        rlim_cur: limit,
        rlim_max: limit,
    };
    // SAFETY: a stack struct read by the kernel; no old value.
    result(unsafe {
        libc::syscall(
            libc::SYS_prlimit64,
            0 as c_long,
            resource as c_long,
            &value as *const libc::rlimit64,
            std::ptr::null_mut::<libc::rlimit64>(),
        )
    })
}

/// `setgroups(0, NULL)`.
pub(crate) fn clear_groups() -> Sys {
    // SAFETY: an empty list.
    result(unsafe {
        libc::syscall(
            libc::SYS_setgroups,
            0 as c_long,
            std::ptr::null::<libc::gid_t>(),
        )
    })
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

/// `capset(2)` with every set empty.
pub(crate) fn drop_all_capabilities() -> Sys {
    let header = CapHeader {
        version: 0x2008_0522, // _LINUX_CAPABILITY_VERSION_3
        pid: 0,
    };
    let data = [CapData {
        effective: 0,
        permitted: 0,
        inheritable: 0,
    }; 2];
    // SAFETY: version 3 reads two data structs.
    result(unsafe { libc::syscall(libc::SYS_capset, &header as *const CapHeader, data.as_ptr()) })
}

#[repr(C, packed)]
struct LandlockPathBeneath {
    allowed_access: u64,
    parent_fd: i32,
}

/// `landlock_add_rule(ruleset, LANDLOCK_RULE_PATH_BENEATH, {access, fd}, 0)`.
pub(crate) fn landlock_add_rule(ruleset: RawFd, fd: RawFd, access: u64) -> Sys {
    let attr = LandlockPathBeneath {
        allowed_access: access,
        parent_fd: fd,
    };
    // SAFETY: a live, packed attribute struct (the kernel's 12-byte layout).
    result(unsafe {
        libc::syscall(
            libc::SYS_landlock_add_rule,
            ruleset as c_long,
            1 as c_long,
            &attr as *const LandlockPathBeneath,
            0 as c_long,
        )
    })
}

/// `seccomp(SECCOMP_SET_MODE_FILTER, flags, program)`; with the listener flag, returns it.
pub(crate) fn seccomp_filter(filter: &[libc::sock_filter], flags: c_ulong) -> Sys {
    let len = u16::try_from(filter.len()).map_err(|_| libc::E2BIG)?;
    let program = libc::sock_fprog {
        len,
        filter: filter.as_ptr() as *mut libc::sock_filter,
    };
    // SAFETY: the program points at a live slice of `len` instructions.
    result(unsafe {
        libc::syscall(
            libc::SYS_seccomp,
            1 as c_long,
            flags as c_long,
            &program as *const libc::sock_fprog,
        )
    })
}

/// `mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL)`: nothing mounted later propagates.
pub(crate) fn make_mounts_private() -> Sys {
    // SAFETY: constant NUL-terminated strings and null pointers.
    result(unsafe {
        libc::syscall(
            libc::SYS_mount,
            c"none".as_ptr(),
            c"/".as_ptr(),
            std::ptr::null::<c_char>(),
            (libc::MS_REC | libc::MS_PRIVATE) as c_ulong,
            std::ptr::null::<c_void>(),
        )
    })
}

/// `fsopen("tmpfs", FSOPEN_CLOEXEC)`.
pub(crate) fn fsopen_tmpfs() -> Sys {
    // SAFETY: a constant NUL-terminated string.
    result(unsafe { libc::syscall(libc::SYS_fsopen, c"tmpfs".as_ptr(), 1 as c_long) })
}

/// `fsconfig(fs, FSCONFIG_SET_STRING, key, value, 0)`.
pub(crate) fn fsconfig_string(fs: RawFd, key: &CStr, value: &CStr) -> Sys {
    // SAFETY: NUL-terminated strings.
    result(unsafe {
        libc::syscall(
            libc::SYS_fsconfig,
            fs as c_long,
            1 as c_long,
            key.as_ptr(),
            value.as_ptr(),
            0 as c_long,
        )
    })
}

/// `fsconfig(fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0)`.
pub(crate) fn fsconfig_create(fs: RawFd) -> Sys {
    // SAFETY: null pointers are what this command takes.
    result(unsafe {
        libc::syscall(
            libc::SYS_fsconfig,
            fs as c_long,
            6 as c_long,
            std::ptr::null::<c_char>(),
            std::ptr::null::<c_char>(),
            0 as c_long,
        )
    })
}

/// `move_mount(from, "", to, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH)`.
pub(crate) fn move_mount(from: RawFd, to: RawFd) -> Sys {
    // SAFETY: constant empty NUL-terminated strings.
    result(unsafe {
        libc::syscall(
            libc::SYS_move_mount,
            from as c_long,
            c"".as_ptr(),
            to as c_long,
            c"".as_ptr(),
            (0x4 | 0x40) as c_long,
        )
    })
}

/// `mkdirat(2)`.
pub(crate) fn mkdirat(dir: RawFd, path: &CStr, mode: c_uint) -> Sys {
    // SAFETY: a NUL-terminated path.
    result(unsafe {
        libc::syscall(
            libc::SYS_mkdirat,
            dir as c_long,
            path.as_ptr(),
            mode as c_long,
        )
    })
}

/// `symlinkat(2)`.
pub(crate) fn symlinkat(target: &CStr, dir: RawFd, path: &CStr) -> Sys {
    // SAFETY: NUL-terminated strings.
    result(unsafe {
        libc::syscall(
            libc::SYS_symlinkat,
            target.as_ptr(),
            dir as c_long,
            path.as_ptr(),
        )
    })
}

/// `fchownat(dir, path, uid, gid, AT_SYMLINK_NOFOLLOW)`.
pub(crate) fn chown_at(dir: RawFd, path: &CStr, uid: u32, gid: u32) -> Sys {
    // SAFETY: a NUL-terminated path.
    result(unsafe {
        libc::syscall(
            libc::SYS_fchownat,
            dir as c_long,
            path.as_ptr(),
            uid as c_long,
            gid as c_long,
            libc::AT_SYMLINK_NOFOLLOW as c_long,
        )
    })
}

/// `sendmsg(2)` of one report message, with one descriptor when given.
pub(crate) fn send_report(socket: RawFd, message: &[u8], fd: Option<RawFd>) -> Sys {
    let mut iov = libc::iovec {
        iov_base: message.as_ptr() as *mut c_void,
        iov_len: message.len(),
    };
    // 8-byte aligned room for one cmsghdr carrying one int.
    let mut control = [0u64; 4];
    // SAFETY (whole block): a zeroed msghdr whose pointers are set to live stack buffers;
    // CMSG_SPACE/LEN are arithmetic, and the control buffer is checked to hold one header
    // before CMSG_FIRSTHDR/CMSG_DATA are written through.
    unsafe {
        let mut header: libc::msghdr = std::mem::zeroed();
        header.msg_iov = &mut iov;
        header.msg_iovlen = 1;
        if let Some(fd) = fd {
            let space = libc::CMSG_SPACE(std::mem::size_of::<c_int>() as c_uint) as usize;
            if space > std::mem::size_of_val(&control) {
                return Err(libc::EINVAL);
            }
            header.msg_control = control.as_mut_ptr() as *mut c_void;
            header.msg_controllen = space as _;
            let cmsg = libc::CMSG_FIRSTHDR(&header);
            if cmsg.is_null() {
                return Err(libc::EINVAL);
            }
            (*cmsg).cmsg_level = libc::SOL_SOCKET;
            (*cmsg).cmsg_type = libc::SCM_RIGHTS;
            (*cmsg).cmsg_len = libc::CMSG_LEN(std::mem::size_of::<c_int>() as c_uint) as _;
            std::ptr::write_unaligned(libc::CMSG_DATA(cmsg) as *mut c_int, fd);
        }
        result(libc::syscall(
            libc::SYS_sendmsg,
            socket as c_long,
            &header as *const libc::msghdr,
            libc::MSG_NOSIGNAL as c_long,
        ))
    }
}

/// Default dispositions for every signal, then an empty mask (the parent blocked them all
/// around the clone, so none ran a host handler in the child).
pub(crate) fn reset_signals() -> Sys {
    // SAFETY: sigaction/sigprocmask are async-signal-safe; the set is a zeroed stack value.
    unsafe {
        for signal in 1..=64 {
            if signal != libc::SIGKILL && signal != libc::SIGSTOP {
                // glibc reserves two real-time signals and refuses them: nothing to reset.
                libc::signal(signal, libc::SIG_DFL);
            }
        }
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        result(libc::sigprocmask(libc::SIG_SETMASK, &set, std::ptr::null_mut()) as c_long)
    }
}

/// `execve(2)`; returns only on failure.
pub(crate) fn execve(program: &CStr, argv: &[*const c_char], envp: &[*const c_char]) -> i32 {
    if argv.last().is_none_or(|p| !p.is_null()) || envp.last().is_none_or(|p| !p.is_null()) {
        return libc::EINVAL;
    }
    // SAFETY: NUL-terminated program; both vectors end with a null pointer (checked) and
    // point at C strings that live as long as the spec.
    unsafe {
        libc::syscall(
            libc::SYS_execve,
            program.as_ptr(),
            argv.as_ptr(),
            envp.as_ptr(),
        );
    }
    errno()
}

/// `exit_group(2)`.
pub(crate) fn exit(code: c_int) -> ! {
    // SAFETY: ends the process.
    unsafe {
        libc::syscall(libc::SYS_exit_group, code as c_long);
    }
    #[allow(clippy::empty_loop)]
    loop {}
}

// ---- Parent side. ----

/// The kernel's Landlock ABI version, or `None` when Landlock is unavailable.
pub(crate) fn landlock_abi() -> Option<u8> {
    // SAFETY: landlock_create_ruleset(NULL, 0, LANDLOCK_CREATE_RULESET_VERSION) only returns
    // a number.
    let ret = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<c_void>(),
            0 as c_long,
            1 as c_long,
        )
    };
    u8::try_from(ret).ok().filter(|v| *v > 0)
}

/// Sends `signal` through a pidfd (no pid reuse race).
pub(crate) fn pidfd_send_signal(pidfd: BorrowedFd<'_>, signal: c_int) -> io::Result<()> {
    // SAFETY: no siginfo.
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

/// Receives one pending exec notification on the run's listener and answers it: `allow`
/// lets the call proceed (the launch's own `execve`), otherwise it fails with `EPERM`.
/// Returns the system call number the notification was for.
pub(crate) fn answer_exec(listener: BorrowedFd<'_>, allow: bool) -> io::Result<i64> {
    // SAFETY: the kernel requires a zeroed seccomp_notif and fills it.
    let mut notif: libc::seccomp_notif = unsafe { std::mem::zeroed() };
    // SAFETY: a live struct of the size the ioctl number encodes.
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
    let response = libc::seccomp_notif_resp {
        id: notif.id,
        val: 0,
        error: if allow { 0 } else { -libc::EPERM },
        flags: if allow {
            libc::SECCOMP_USER_NOTIF_FLAG_CONTINUE as u32
        } else {
            0
        },
    };
    // SAFETY: a live struct of the size the ioctl number encodes.
    let ret = unsafe {
        libc::ioctl(
            listener.as_raw_fd(),
            libc::SECCOMP_IOCTL_NOTIF_SEND as _,
            &response as *const libc::seccomp_notif_resp,
        )
    };
    // ENOENT: the caller died or was killed before the answer; nothing to do.
    if ret < 0 && errno() != libc::ENOENT {
        return Err(io::Error::last_os_error());
    }
    Ok(i64::from(notif.data.nr))
}

/// Receives one report from the child: `None` at end of stream (the child executed its
/// program, or died), else the message and the descriptor it carried, if any.
pub(crate) fn recv_report(
    socket: BorrowedFd<'_>,
) -> io::Result<(Option<[u8; child::REPORT_LEN]>, Option<OwnedFd>)> {
    let mut message = [0u8; child::REPORT_LEN];
    let mut iov = libc::iovec {
        iov_base: message.as_mut_ptr() as *mut c_void,
        iov_len: child::REPORT_LEN,
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
    let mut fds = Vec::new();
    // SAFETY: the kernel filled at most msg_controllen bytes of `control`; CMSG_* walk
    // them, and each SCM_RIGHTS int is a new descriptor of this process, ours to own.
    unsafe {
        let mut cmsg = libc::CMSG_FIRSTHDR(&header);
        while !cmsg.is_null() {
            if (*cmsg).cmsg_level == libc::SOL_SOCKET && (*cmsg).cmsg_type == libc::SCM_RIGHTS {
                let data = libc::CMSG_DATA(cmsg) as *const c_int;
                let header_len = libc::CMSG_LEN(0) as usize;
                let count = ((*cmsg).cmsg_len as usize).saturating_sub(header_len)
                    / std::mem::size_of::<c_int>();
                for i in 0..count {
                    fds.push(OwnedFd::from_raw_fd(std::ptr::read_unaligned(data.add(i))));
                }
            }
            cmsg = libc::CMSG_NXTHDR(&header, cmsg);
        }
    }
    // Only the child writes here, one descriptor at a time; extra ones close on drop.
    let fd = fds.into_iter().next();
    if n == 0 {
        return Ok((None, fd));
    }
    Ok((Some(message), fd))
}
