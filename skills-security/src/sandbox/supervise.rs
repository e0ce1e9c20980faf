//! Supervising a launched run on its own thread: stdin in, both output streams captured up
//! to their caps, the wall clock and CPU time watched, everything killed on a limit or when
//! the caller goes away, and the ending classified.
//!
//! Threat: a script that floods its output, never ends, spins, leaves children holding its
//! pipes, or whose caller drops the future mid-run. Guarantee: each stream keeps at most its
//! cap and an overflow kills the run at once (a flood is never drained); the deadline and
//! the CPU limit (polled every 20 ms, plus `RLIMIT_CPU`) kill through the pidfd (pid 1 of
//! the run's pid namespace: the kernel then kills every other process of the run) and the
//! cgroup; a closed cancel pipe (the caller's future dropped) kills too; the first process
//! is always reaped before the thread returns.

use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::time::{Duration, Instant};

use nix::errno::Errno;
use nix::fcntl::{FcntlArg, OFlag, fcntl};
use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
use nix::sys::wait::{Id, WaitPidFlag, WaitStatus, waitid};

use super::cgroup::RunCgroup;
use super::watch::Observer;
use super::{Observation, Status, UntrustedOutput, sys};

/// How often CPU time is polled.
pub(crate) const POLL: Duration = Duration::from_millis(20);
/// How long output is still read after the first process ended.
const DRAIN_GRACE: Duration = Duration::from_millis(250);

/// The launched run's first process; killed and reaped on drop if not reaped yet.
#[derive(Debug)]
pub(crate) struct Child {
    pub pid: i32,
    pub pidfd: OwnedFd,
    /// Kill the process group too (no pid namespace to take everything down).
    pub group_kill: bool,
    reaped: Option<WaitStatus>,
}

impl Child {
    pub fn new(pid: i32, pidfd: OwnedFd, group_kill: bool) -> Child {
        Child {
            pid,
            pidfd,
            group_kill,
            reaped: None,
        }
    }

    /// `SIGKILL` to the first process (and its group when there is no pid namespace).
    pub fn kill(&self) {
        let _ = sys::pidfd_send_signal(self.pidfd.as_fd(), libc::SIGKILL);
        if self.group_kill && self.pid > 0 {
            let _ = nix::sys::signal::killpg(
                nix::unistd::Pid::from_raw(self.pid),
                nix::sys::signal::Signal::SIGKILL,
            );
        }
    }

    /// Reaps the first process, blocking when `block`.
    pub fn reap(&mut self, block: bool) -> Option<WaitStatus> {
        if self.reaped.is_some() {
            return self.reaped;
        }
        let mut flags = WaitPidFlag::WEXITED | WaitPidFlag::__WALL;
        if !block {
            flags |= WaitPidFlag::WNOHANG;
        }
        loop {
            match waitid(Id::PIDFd(self.pidfd.as_fd()), flags) {
                Ok(WaitStatus::StillAlive) => return None,
                Ok(status) => {
                    self.reaped = Some(status);
                    return self.reaped;
                }
                Err(Errno::EINTR) => continue,
                Err(_) => return None,
            }
        }
    }
}

impl Drop for Child {
    fn drop(&mut self) {
        if self.reaped.is_none() {
            self.kill();
            let _ = self.reap(true);
        }
    }
}

/// Why the supervisor killed the run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum KillReason {
    Timeout,
    Output,
    Cpu,
    Cancelled,
}

/// One captured stream.
struct Stream {
    fd: Option<OwnedFd>,
    bytes: Vec<u8>,
    truncated: bool,
    cap: usize,
}

impl Stream {
    fn new(fd: OwnedFd, cap: usize) -> Stream {
        let _ = fcntl(&fd, FcntlArg::F_SETFL(OFlag::O_NONBLOCK));
        Stream {
            fd: Some(fd),
            bytes: Vec::new(),
            truncated: false,
            cap,
        }
    }

    /// Reads what is there; returns true on overflow.
    fn read(&mut self) -> bool {
        let Some(fd) = &self.fd else { return false };
        let mut chunk = [0u8; 16 * 1024];
        loop {
            match nix::unistd::read(fd, &mut chunk) {
                Ok(0) => {
                    self.fd = None;
                    return false;
                }
                Ok(n) => {
                    let room = self.cap.saturating_sub(self.bytes.len());
                    self.bytes.extend_from_slice(&chunk[..n.min(room)]);
                    if n > room {
                        self.truncated = true;
                        self.fd = None;
                        return true;
                    }
                }
                Err(Errno::EINTR) => continue,
                Err(Errno::EAGAIN) => return false,
                Err(_) => {
                    self.fd = None;
                    return false;
                }
            }
        }
    }

    fn output(self) -> UntrustedOutput {
        UntrustedOutput::new(self.bytes, self.truncated)
    }
}

/// What supervision saw.
pub(crate) struct Supervised {
    pub status: Option<WaitStatus>,
    pub killed: Option<KillReason>,
    pub stdout: UntrustedOutput,
    pub stderr: UntrustedOutput,
    pub cpu_ms: u64,
    /// What an observed run tried, and how many observations were past the cap.
    pub observations: Vec<Observation>,
    pub observations_dropped: u64,
}

/// The pipes and limits of a launched run.
pub(crate) struct Pipes {
    pub stdin: OwnedFd,
    pub stdin_bytes: Vec<u8>,
    pub stdout: OwnedFd,
    pub stderr: OwnedFd,
    pub cancel: OwnedFd,
    /// The exec filter's listener: every notification now is refused, unless the run is
    /// observed (then `observer` records and answers it).
    pub listener: Option<OwnedFd>,
    pub observer: Option<Observer>,
}

/// CPU time (ms) of `pids` and their descendants (reaped ones are in `cutime`), bounded to
/// 4,096 processes. With a cgroup the pids are its members; otherwise the tree is walked.
fn cpu_ms(roots: &[i32], walk: bool) -> u64 {
    let mut stack: Vec<i32> = roots.to_vec();
    let mut ticks = 0u64;
    let mut seen = 0;
    while let Some(p) = stack.pop() {
        seen += 1;
        if seen > 4096 {
            break;
        }
        if let Ok(stat) = std::fs::read_to_string(format!("/proc/{p}/stat"))
            && let Some((_, rest)) = stat.rsplit_once(')')
        {
            let fields: Vec<&str> = rest.split_whitespace().collect();
            for i in 11..=14 {
                ticks += fields
                    .get(i)
                    .and_then(|f| f.parse::<u64>().ok())
                    .unwrap_or(0);
            }
        }
        if walk
            && let Ok(children) = std::fs::read_to_string(format!("/proc/{p}/task/{p}/children"))
        {
            stack.extend(
                children
                    .split_whitespace()
                    .filter_map(|c| c.parse::<i32>().ok()),
            );
        }
    }
    // USER_HZ is 100 on Linux.
    ticks * 10
}

fn borrowed(fd: &Option<OwnedFd>) -> Option<BorrowedFd<'_>> {
    fd.as_ref().map(AsFd::as_fd)
}

/// Supervises `child` until it ends (or is killed), then drains and reaps.
pub(crate) fn supervise(
    child: &mut Child,
    pipes: Pipes,
    cgroup: Option<&RunCgroup>,
    deadline: Instant,
    cpu_limit: Duration,
    max_output: usize,
) -> Supervised {
    let mut out = Stream::new(pipes.stdout, max_output);
    let mut err = Stream::new(pipes.stderr, max_output);
    // Nothing to send: close at once, so a script reading stdin sees its end.
    let mut stdin = (!pipes.stdin_bytes.is_empty()).then_some(pipes.stdin);
    if let Some(fd) = &stdin {
        let _ = fcntl(fd, FcntlArg::F_SETFL(OFlag::O_NONBLOCK));
    }
    let mut listener = pipes.listener;
    let mut observer = pipes.observer;
    let mut written = 0usize;
    let cancel = pipes.cancel;
    let cpu_limit_ms = u64::try_from(cpu_limit.as_millis()).unwrap_or(u64::MAX);
    let mut killed: Option<KillReason> = None;
    let mut cpu_seen = 0u64;
    let mut next_poll = Instant::now() + POLL;
    let kill = |child: &Child, reason: KillReason, killed: &mut Option<KillReason>| {
        if killed.is_none() {
            *killed = Some(reason);
        }
        child.kill();
        if let Some(cgroup) = cgroup {
            cgroup.kill_all();
        }
    };
    loop {
        let now = Instant::now();
        if killed.is_none() && now >= deadline {
            kill(child, KillReason::Timeout, &mut killed);
        }
        if now >= next_poll {
            next_poll = now + POLL;
            let cpu = match cgroup.map(RunCgroup::processes) {
                Some(pids) if !pids.is_empty() => cpu_ms(&pids, false),
                _ => cpu_ms(&[child.pid], true),
            };
            cpu_seen = cpu_seen.max(cpu);
            if killed.is_none() && cpu > cpu_limit_ms {
                kill(child, KillReason::Cpu, &mut killed);
            }
        }
        let until_deadline = if killed.is_some() {
            POLL
        } else {
            deadline.saturating_duration_since(now)
        };
        let wait = until_deadline
            .min(next_poll.saturating_duration_since(now))
            .max(Duration::from_millis(1));
        let pidfd = child.pidfd.as_fd();
        let mut fds = vec![
            PollFd::new(pidfd, PollFlags::POLLIN),
            PollFd::new(cancel.as_fd(), PollFlags::POLLIN),
        ];
        let mut slots = [None; 4];
        for (slot, fd, flags) in [
            (0, borrowed(&out.fd), PollFlags::POLLIN),
            (1, borrowed(&err.fd), PollFlags::POLLIN),
            (2, borrowed(&stdin), PollFlags::POLLOUT),
            (3, borrowed(&listener), PollFlags::POLLIN),
        ] {
            if let Some(fd) = fd {
                slots[slot] = Some(fds.len());
                fds.push(PollFd::new(fd, flags));
            }
        }
        let millis = u16::try_from(wait.as_millis()).unwrap_or(u16::MAX);
        match poll(&mut fds, PollTimeout::from(millis)) {
            Ok(_) | Err(Errno::EINTR) => {}
            Err(_) => std::thread::sleep(Duration::from_millis(1)),
        }
        let ready = |i: usize| {
            fds.get(i)
                .and_then(PollFd::revents)
                .is_some_and(|r| !r.is_empty())
        };
        let exited = ready(0);
        let cancelled = ready(1);
        let out_ready = slots[0].is_some_and(ready);
        let err_ready = slots[1].is_some_and(ready);
        let in_ready = slots[2].is_some_and(ready);
        let exec_attempt = slots[3].and_then(|i| fds.get(i)).and_then(PollFd::revents);
        drop(fds);
        if let Some(events) = exec_attempt {
            if events.contains(PollFlags::POLLIN) {
                if let Some(fd) = &listener {
                    match observer.as_mut() {
                        Some(observer) => drain(fd.as_fd(), observer),
                        None => {
                            let _ = sys::answer_exec(fd.as_fd(), false);
                        }
                    }
                }
            } else if !events.is_empty() {
                listener = None; // every process of the run is gone
            }
        }
        if cancelled && killed.is_none() {
            kill(child, KillReason::Cancelled, &mut killed);
        }
        if (out_ready && out.read()) || (err_ready && err.read()) {
            kill(child, KillReason::Output, &mut killed);
        }
        if in_ready && let Some(fd) = &stdin {
            let rest = pipes.stdin_bytes.get(written..).unwrap_or(&[]);
            match nix::unistd::write(fd, rest) {
                Ok(n) => written += n,
                Err(Errno::EAGAIN | Errno::EINTR) => {}
                Err(_) => written = pipes.stdin_bytes.len(),
            }
            if written >= pipes.stdin_bytes.len() {
                stdin = None;
            }
        }
        if exited {
            break;
        }
    }
    drop(stdin);
    let status = child.reap(true);
    if child.group_kill {
        child.kill_group_after_exit();
    }
    if let Some(cgroup) = cgroup {
        cgroup.kill_all();
    }
    // Drain what is left for a short grace; a child of the script holding a pipe open
    // cannot keep the run alive.
    let grace = Instant::now() + DRAIN_GRACE;
    while (out.fd.is_some() || err.fd.is_some()) && Instant::now() < grace {
        let mut fds = Vec::new();
        for fd in [borrowed(&out.fd), borrowed(&err.fd)].into_iter().flatten() {
            fds.push(PollFd::new(fd, PollFlags::POLLIN));
        }
        let left = grace.saturating_duration_since(Instant::now());
        let millis = u16::try_from(left.as_millis()).unwrap_or(u16::MAX).max(1);
        let _ = poll(&mut fds, PollTimeout::from(millis));
        drop(fds);
        if out.read() || err.read() {
            break;
        }
    }
    let (observations, observations_dropped) =
        observer.map_or((Vec::new(), 0), |o| (o.observations, o.dropped));
    Supervised {
        status,
        killed,
        stdout: out.output(),
        stderr: err.output(),
        cpu_ms: cpu_seen,
        observations,
        observations_dropped,
    }
}

/// Most notifications answered in one turn of the loop (the deadline and the output
/// streams are checked between turns).
const NOTIFICATIONS_PER_TURN: usize = 256;

/// Handles the notifications pending on `listener`, a bounded number at a time.
fn drain(listener: BorrowedFd<'_>, observer: &mut Observer) {
    for _ in 0..NOTIFICATIONS_PER_TURN {
        observer.handle(listener);
        let mut fds = [PollFd::new(listener, PollFlags::POLLIN)];
        let pending = matches!(poll(&mut fds, PollTimeout::ZERO), Ok(n) if n > 0)
            && fds[0]
                .revents()
                .is_some_and(|r| r.contains(PollFlags::POLLIN));
        if !pending {
            break;
        }
    }
}

impl Child {
    /// After the first process is gone: kill what is left of its process group.
    fn kill_group_after_exit(&self) {
        if self.pid > 0 {
            let _ = nix::sys::signal::killpg(
                nix::unistd::Pid::from_raw(self.pid),
                nix::sys::signal::Signal::SIGKILL,
            );
        }
    }
}

/// Markers of a failed allocation in a script's stderr (the `RLIMIT_AS` fallback).
const MEMORY_MARKERS: &[&str] = &[
    "MemoryError",
    "Cannot allocate memory",
    "cannot allocate memory",
    "out of memory",
    "xmalloc",
];

/// What classification needs besides supervision.
pub(crate) struct Facts {
    pub cpu_time: Duration,
    pub oom_kills: u64,
    pub memory_by_rlimit: bool,
    /// The cgroup's peak usage reached the memory limit.
    pub memory_full: bool,
    pub scratch_full: bool,
}

/// The ending of a run, from what supervision saw and what the cgroup and tmpfs say.
pub(crate) fn classify(seen: &Supervised, facts: &Facts) -> (Status, Option<i32>, Option<i32>) {
    let (exit_code, signal) = match seen.status {
        Some(WaitStatus::Exited(_, code)) => (Some(code), None),
        Some(WaitStatus::Signaled(_, sig, _)) => (None, Some(sig as i32)),
        _ => (None, None),
    };
    let stderr = &seen.stderr.text;
    let memory = facts.oom_kills > 0
        || (facts.memory_by_rlimit && MEMORY_MARKERS.iter().any(|m| stderr.contains(m)));
    let rlimit_cpu_ms = facts.cpu_time.as_millis().div_ceil(1000).max(1) as u64 * 1000;
    let status = match (seen.killed, exit_code, signal) {
        (Some(KillReason::Timeout | KillReason::Cancelled), _, _) => Status::Timeout,
        (Some(KillReason::Output), _, _) => Status::OutputLimit,
        // At its memory limit the kernel reclaims on the run's CPU time; on a loaded host
        // that can reach the CPU limit before the OOM kill. The memory limit is what it hit.
        (Some(KillReason::Cpu), _, _) if facts.memory_full => Status::MemoryLimit,
        (Some(KillReason::Cpu), _, _) => Status::CpuLimit,
        (None, Some(0), _) => Status::Success,
        (None, Some(code), _) => {
            if stderr.contains("File too large")
                || (code == 128 + libc::SIGXFSZ && stderr.contains("File size limit"))
            {
                Status::FileSizeLimit
            } else if memory {
                Status::MemoryLimit
            } else if facts.scratch_full {
                Status::DiskLimit
            } else {
                Status::Exit { code }
            }
        }
        (None, None, Some(sig)) if sig == libc::SIGXCPU => Status::CpuLimit,
        (None, None, Some(sig)) if sig == libc::SIGXFSZ => Status::FileSizeLimit,
        (None, None, Some(_)) if memory => Status::MemoryLimit,
        (None, None, Some(sig)) if sig == libc::SIGKILL && seen.cpu_ms + 200 >= rlimit_cpu_ms => {
            Status::CpuLimit
        }
        (None, None, Some(_)) if facts.scratch_full => Status::DiskLimit,
        (None, None, Some(signal)) => Status::Signal { signal },
        (None, None, None) => Status::LaunchError {
            reason: "the run's status could not be read".into(),
        },
    };
    (status, exit_code, signal)
}

/// Waits until `fd` is readable, the cancel pipe closes, or `deadline` passes. Returns
/// false on cancel or timeout.
pub(crate) fn wait_readable(fd: BorrowedFd<'_>, cancel: BorrowedFd<'_>, deadline: Instant) -> bool {
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return false;
        }
        let millis = u16::try_from(left.as_millis()).unwrap_or(u16::MAX).max(1);
        let mut fds = [
            PollFd::new(fd, PollFlags::POLLIN),
            PollFd::new(cancel, PollFlags::POLLIN),
        ];
        match poll(&mut fds, PollTimeout::from(millis)) {
            Ok(0) | Err(Errno::EINTR) => continue,
            Ok(_) => {}
            Err(_) => return false,
        }
        if fds[1].revents().is_some_and(|r| !r.is_empty()) {
            return false;
        }
        if fds[0].revents().is_some_and(|r| !r.is_empty()) {
            return true;
        }
    }
}
