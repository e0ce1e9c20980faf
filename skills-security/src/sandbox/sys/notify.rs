//! Parent-side calls of observation (detonation): receiving any seccomp notification with
//! its arguments, answering it (continue, a value, or an error), checking a notification is
//! still live, and taking a descriptor from the child (`pidfd_getfd`).
//!
//! The module's safety argument is the parent module's: each call passes pointers to live,
//! correctly sized values for the duration of one call, and takes ownership of a descriptor
//! the kernel returns exactly once.

use std::io;
use std::os::fd::{AsRawFd, BorrowedFd, FromRawFd, OwnedFd, RawFd};

use libc::c_long;

/// One received notification: who made which call with which raw arguments.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Notification {
    pub id: u64,
    /// The caller's pid in the supervisor's pid namespace.
    pub pid: u32,
    pub nr: i64,
    pub args: [u64; 6],
}

/// How a notification is answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Answer {
    /// The call proceeds in the kernel (every other check, Landlock among them, still applies).
    Continue,
    /// The call is not made; it returns this value (0 for a pretended success).
    Value(i64),
    /// The call is not made; it fails with this `errno`.
    Error(i32),
}

/// Receives one pending notification (blocks when none is pending: poll first).
pub(crate) fn receive(listener: BorrowedFd<'_>) -> io::Result<Notification> {
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
    Ok(Notification {
        id: notif.id,
        pid: notif.pid,
        nr: i64::from(notif.data.nr),
        args: notif.data.args,
    })
}

/// Answers notification `id`. A caller that died meanwhile (`ENOENT`) is not an error.
pub(crate) fn answer(listener: BorrowedFd<'_>, id: u64, answer: Answer) -> io::Result<()> {
    let (val, error, flags) = match answer {
        Answer::Continue => (0, 0, libc::SECCOMP_USER_NOTIF_FLAG_CONTINUE as u32),
        Answer::Value(v) => (v, 0, 0),
        Answer::Error(e) => (0, -e.abs(), 0),
    };
    let response = libc::seccomp_notif_resp {
        id,
        val,
        error,
        flags,
    };
    // SAFETY: a live struct of the size the ioctl number encodes.
    let ret = unsafe {
        libc::ioctl(
            listener.as_raw_fd(),
            libc::SECCOMP_IOCTL_NOTIF_SEND as _,
            &response as *const libc::seccomp_notif_resp,
        )
    };
    if ret < 0 {
        let e = io::Error::last_os_error();
        if e.raw_os_error() != Some(libc::ENOENT) {
            return Err(e);
        }
    }
    Ok(())
}

/// Whether notification `id` is still pending: its caller still waits, so memory read from
/// its pid since it was received was the caller's (the pid was not reused).
pub(crate) fn still_valid(listener: BorrowedFd<'_>, id: u64) -> bool {
    // SAFETY: the ioctl reads one u64 from a live stack value.
    let ret = unsafe {
        libc::ioctl(
            listener.as_raw_fd(),
            libc::SECCOMP_IOCTL_NOTIF_ID_VALID as _,
            &id as *const u64,
        )
    };
    ret == 0
}

/// A copy of descriptor `fd` of the process behind `pidfd` (`pidfd_getfd(2)`, close-on-exec).
pub(crate) fn pidfd_getfd(pidfd: BorrowedFd<'_>, fd: RawFd) -> io::Result<OwnedFd> {
    // SAFETY: integer arguments only.
    let ret = unsafe {
        libc::syscall(
            libc::SYS_pidfd_getfd,
            pidfd.as_raw_fd() as c_long,
            fd as c_long,
            0 as c_long,
        )
    };
    if ret < 0 {
        return Err(io::Error::last_os_error());
    }
    let fd = RawFd::try_from(ret).map_err(|_| io::Error::from_raw_os_error(libc::EBADF))?;
    // SAFETY: pidfd_getfd returned a new descriptor of this process, ours to own.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}
