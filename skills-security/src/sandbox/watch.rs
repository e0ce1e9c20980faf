//! The supervisor's side of observation: each notification of an observed run is read
//! (its arguments from the caller's memory through `/proc/<pid>/mem`), checked still live,
//! recorded, and answered (see the `observe` module for what is answered how and why).
//!
//! Threat: the caller's memory is the script's: pointers to nowhere, lengths in the
//! gigabytes, strings without an end, a flood of calls. Guarantee: every read is bounded
//! ([`MAX_READ_BYTES`], stopping at an unreadable page), a notification whose caller is
//! gone (`SECCOMP_IOCTL_NOTIF_ID_VALID`) is answered but not recorded (its pid may name
//! another process by now), at most [`MAX_OBSERVATIONS`] distinct observations are kept,
//! and every notification is answered, so no caller waits past the run's deadline.

use std::collections::BTreeSet;
use std::fs::File;
use std::os::fd::BorrowedFd;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::FileExt;
use std::path::{Component, Path, PathBuf};

use super::Observation;
use super::observe::{
    MAX_OBSERVATIONS, MAX_READ_BYTES, credential_like, parse_dns_query, parse_sockaddr, shown,
};
use super::sys::{self, Answer, Notification};

/// Most program arguments recorded.
const MAX_ARGV: usize = 32;
/// Most bytes of a payload read (enough for a DNS question and a canary).
const MAX_PAYLOAD: usize = 1_024;
/// Most messages of one `sendmmsg` read.
const MAX_MESSAGES: u64 = 4;
/// Page size assumed for bounded string reads (reads stop at a page end first).
const PAGE: u64 = 4_096;
/// `msghdr` and `mmsghdr` sizes on 64-bit Linux.
const MSGHDR: usize = 56;
const MMSGHDR: u64 = 64;

/// A message's destination address and payload bytes, as far as they were readable.
type Message = (Option<Vec<u8>>, Option<Vec<u8>>);

/// What an observed run's supervisor keeps.
pub(crate) struct Observer {
    /// The run's `HOME` (the same path inside and outside the run).
    home: PathBuf,
    canary: String,
    decoys: BTreeSet<&'static str>,
    allow_exec: bool,
    seen: BTreeSet<Observation>,
    pub observations: Vec<Observation>,
    pub dropped: u64,
}

impl Observer {
    pub fn new(home: PathBuf, canary: String, allow_exec: bool) -> Observer {
        let decoys = super::observe::DECOYS
            .iter()
            .filter(|(p, _)| !p.ends_with('/'))
            .map(|(p, _)| *p)
            .collect();
        Observer {
            home,
            canary,
            decoys,
            allow_exec,
            seen: BTreeSet::new(),
            observations: Vec::new(),
            dropped: 0,
        }
    }

    fn record(&mut self, observation: Observation) {
        if self.seen.contains(&observation) {
            return;
        }
        if self.observations.len() >= MAX_OBSERVATIONS {
            self.dropped += 1;
            return;
        }
        self.seen.insert(observation.clone());
        self.observations.push(observation);
    }

    /// Receives, records and answers one pending notification.
    pub fn handle(&mut self, listener: BorrowedFd<'_>) {
        let Ok(n) = sys::receive(listener) else {
            return;
        };
        let (found, answer) = self.inspect(&n);
        // Read memory belonged to the caller only if it still waits.
        if sys::still_valid(listener, n.id) {
            for observation in found {
                self.record(observation);
            }
        }
        let _ = sys::answer(listener, n.id, answer);
    }

    fn inspect(&self, n: &Notification) -> (Vec<Observation>, Answer) {
        let memory = Memory::open(n.pid);
        let a = n.args;
        match n.nr {
            libc::SYS_execve => self.exec(&memory, n.pid, None, a[0], a[1]),
            libc::SYS_execveat => self.exec(&memory, n.pid, Some(a[0]), a[1], a[2]),
            libc::SYS_connect => {
                let addr = memory.read(a[1], usize::try_from(a[2]).unwrap_or(0).min(128));
                connect(addr.as_deref())
            }
            libc::SYS_sendto => {
                let payload = memory.read(a[1], usize::try_from(a[2]).unwrap_or(0));
                let dest = (a[4] != 0)
                    .then(|| memory.read(a[4], usize::try_from(a[5]).unwrap_or(0).min(128)))
                    .flatten();
                self.send(&[(dest, payload)], a[4] != 0)
            }
            libc::SYS_sendmsg => {
                let (message, named) = message(&memory, a[1]);
                self.send(&[message], named)
            }
            libc::SYS_sendmmsg => {
                let mut messages = Vec::new();
                let mut named = false;
                for i in 0..a[2].min(MAX_MESSAGES) {
                    let (m, has_name) = message(&memory, a[1].wrapping_add(i * MMSGHDR));
                    named |= has_name;
                    messages.push(m);
                }
                self.send(&messages, named)
            }
            libc::SYS_openat => (
                self.open(&memory, n.pid, Some(a[0]), a[1], a[2]),
                Answer::Continue,
            ),
            libc::SYS_openat2 => {
                let flags = memory
                    .read(a[2], 8)
                    .and_then(|b| <[u8; 8]>::try_from(b.as_slice()).ok())
                    .map_or(0, u64::from_ne_bytes);
                (
                    self.open(&memory, n.pid, Some(a[0]), a[1], flags),
                    Answer::Continue,
                )
            }
            #[cfg(target_arch = "x86_64")]
            libc::SYS_open => (
                self.open(&memory, n.pid, None, a[0], a[1]),
                Answer::Continue,
            ),
            #[cfg(target_arch = "x86_64")]
            libc::SYS_creat => {
                let flags = (libc::O_CREAT | libc::O_WRONLY | libc::O_TRUNC) as u64;
                (
                    self.open(&memory, n.pid, None, a[0], flags),
                    Answer::Continue,
                )
            }
            // Nothing else is routed; refuse whatever it is.
            _ => (Vec::new(), Answer::Error(libc::EPERM)),
        }
    }

    fn exec(
        &self,
        memory: &Memory,
        pid: u32,
        dirfd: Option<u64>,
        path: u64,
        argv: u64,
    ) -> (Vec<Observation>, Answer) {
        let answer = if self.allow_exec {
            Answer::Continue
        } else {
            Answer::Error(libc::EPERM)
        };
        let raw = memory.string(path).unwrap_or_default();
        let resolved = resolve(pid, dirfd, &raw);
        let mut args = Vec::new();
        let mut dropped = resolved.as_deref().is_some_and(|p| self.in_scratch(pid, p));
        let interpreter = resolved.as_deref().is_some_and(is_interpreter);
        let mut script_seen = false;
        for i in 0..MAX_ARGV as u64 {
            let Some(pointer) = memory.pointer(argv.wrapping_add(i * 8)) else {
                break;
            };
            if pointer == 0 {
                break;
            }
            let arg = memory.string(pointer).unwrap_or_default();
            // An interpreter's script (its first operand) is what runs; other programs'
            // arguments are data (`cat ~/notes` reads a file, it does not start it).
            if i > 0 && interpreter && !script_seen && !arg.starts_with(b"-") {
                script_seen = true;
                dropped |= resolve(pid, None, &arg).is_some_and(|p| self.in_scratch(pid, &p));
            }
            args.push(shown(&arg));
        }
        let path = resolved.map_or_else(|| shown(&raw), |p| shown(p.as_os_str().as_bytes()));
        let observation = Observation::ProgramStarted {
            path,
            argv: args,
            dropped,
            allowed: self.allow_exec,
        };
        (vec![observation], answer)
    }

    /// Whether `path` is a regular file strictly beneath the run's `HOME`, as the run sees it.
    fn in_scratch(&self, pid: u32, path: &Path) -> bool {
        let Ok(rel) = path.strip_prefix(&self.home) else {
            return false;
        };
        if rel.as_os_str().is_empty() {
            return false;
        }
        let seen = PathBuf::from(format!("/proc/{pid}/root")).join(rel_to_root(path));
        std::fs::symlink_metadata(seen).is_ok_and(|m| m.is_file())
    }

    fn send(&self, messages: &[Message], named: bool) -> (Vec<Observation>, Answer) {
        let mut found = Vec::new();
        let mut to_network = false;
        for (dest, payload) in messages {
            let dest = dest.as_deref().and_then(parse_sockaddr);
            let ip = dest
                .as_ref()
                .is_some_and(|(family, _, _)| family == "ipv4" || family == "ipv6");
            to_network |= ip;
            let payload = payload.as_deref().unwrap_or(&[]);
            let carries = self.carries(payload);
            let dns_port = dest.as_ref().is_some_and(|(_, _, port)| *port == 53);
            match (parse_dns_query(payload), dest) {
                (Some(name), d) if d.is_none() || dns_port => {
                    let carries_decoy = carries || name.contains(&self.canary);
                    found.push(Observation::DnsLookup {
                        name,
                        carries_decoy,
                    });
                }
                (_, Some((family, address, port))) if ip => found.push(Observation::Send {
                    family,
                    address,
                    port,
                    carries_decoy: carries,
                }),
                _ => {}
            }
        }
        // A destination named (readable or not), or a DNS question: never sent. Without
        // either (a socket pair) the kernel decides: nothing in the run's network namespace
        // leads out.
        let dns = found
            .iter()
            .any(|o| matches!(o, Observation::DnsLookup { .. }));
        let answer = if to_network || named || dns {
            Answer::Error(libc::ECONNREFUSED)
        } else {
            Answer::Continue
        };
        (found, answer)
    }

    fn carries(&self, payload: &[u8]) -> bool {
        let canary = self.canary.as_bytes();
        !canary.is_empty() && payload.windows(canary.len()).any(|w| w == canary)
    }

    fn open(
        &self,
        memory: &Memory,
        pid: u32,
        dirfd: Option<u64>,
        path: u64,
        flags: u64,
    ) -> Vec<Observation> {
        let Some(raw) = memory.string(path) else {
            return Vec::new();
        };
        let Some(path) = resolve(pid, dirfd, &raw) else {
            return Vec::new();
        };
        let writes =
            (libc::O_WRONLY | libc::O_RDWR | libc::O_CREAT | libc::O_TRUNC | libc::O_APPEND) as u64;
        if let Ok(rel) = path.strip_prefix(&self.home) {
            let rel = rel.to_string_lossy();
            if self.decoys.contains(rel.as_ref()) {
                return vec![Observation::CredentialRead {
                    path: format!("~/{}", shown(rel.as_bytes())),
                    decoy: true,
                }];
            }
            return Vec::new();
        }
        let text = path.to_string_lossy();
        let mut found = Vec::new();
        if credential_like(&text) {
            found.push(Observation::CredentialRead {
                path: shown(text.as_bytes()),
                decoy: false,
            });
        }
        if flags & writes != 0 && !harmless_write(&text) {
            found.push(Observation::WriteOutsideScratch {
                path: shown(text.as_bytes()),
            });
        }
        found
    }
}

/// Whether `program` runs a script given as its first operand.
fn is_interpreter(program: &Path) -> bool {
    let name = program
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let base = name.trim_end_matches(|c: char| c.is_ascii_digit() || c == '.');
    matches!(
        base,
        "sh" | "bash"
            | "dash"
            | "zsh"
            | "ksh"
            | "fish"
            | "python"
            | "perl"
            | "ruby"
            | "node"
            | "php"
            | "lua"
            | "Rscript"
            | "pwsh"
            | "osascript"
            | "tclsh"
    )
}

/// Devices and descriptors any program writes to.
fn harmless_write(path: &str) -> bool {
    matches!(
        path,
        "/dev/null" | "/dev/zero" | "/dev/full" | "/dev/tty" | "/dev/stdout" | "/dev/stderr"
    ) || path.starts_with("/dev/fd/")
        || path.starts_with("/dev/pts/")
        || path.starts_with("/proc/self/fd/")
        || path.starts_with("/proc/thread-self/fd/")
}

/// A `connect`: recorded, and answered without being made.
fn connect(addr: Option<&[u8]>) -> (Vec<Observation>, Answer) {
    let Some((family, address, port)) = addr.and_then(parse_sockaddr) else {
        return (Vec::new(), Answer::Error(libc::ECONNREFUSED));
    };
    // The resolver connects its UDP socket to the server before it sends: a pretended
    // success lets its question be read from the send that follows.
    let answer = if port == 53 && (family == "ipv4" || family == "ipv6") {
        Answer::Value(0)
    } else if family == "ipv4" || family == "ipv6" {
        Answer::Error(libc::ECONNREFUSED)
    } else {
        Answer::Error(libc::EACCES)
    };
    (
        vec![Observation::Connect {
            family,
            address,
            port,
        }],
        answer,
    )
}

/// One `msghdr` at `at`: its destination and first buffer's bytes, and whether it names a
/// destination.
fn message(memory: &Memory, at: u64) -> (Message, bool) {
    let Some(header) = memory.read(at, MSGHDR).filter(|h| h.len() == MSGHDR) else {
        // Unreadable here: treated as naming a destination (refused, never continued).
        return ((None, None), true);
    };
    let word = |i: usize| {
        header
            .get(i..i + 8)
            .and_then(|b| <[u8; 8]>::try_from(b).ok())
            .map_or(0, u64::from_ne_bytes)
    };
    let (name, name_len, iov, iov_len) = (word(0), word(8) & 0xffff_ffff, word(16), word(24));
    let dest = (name != 0)
        .then(|| memory.read(name, usize::try_from(name_len).unwrap_or(0).min(128)))
        .flatten();
    let payload = (iov != 0 && iov_len > 0)
        .then(|| memory.read(iov, 16))
        .flatten()
        .and_then(|v| {
            let base = u64::from_ne_bytes(<[u8; 8]>::try_from(v.get(..8)?).ok()?);
            let len = u64::from_ne_bytes(<[u8; 8]>::try_from(v.get(8..16)?).ok()?);
            memory.read(base, usize::try_from(len).unwrap_or(0))
        });
    ((dest, payload), name != 0)
}

/// `path` made absolute against the caller's working directory or `dirfd` (as the caller
/// sees them), and normalised without touching the filesystem.
fn resolve(pid: u32, dirfd: Option<u64>, raw: &[u8]) -> Option<PathBuf> {
    let path = Path::new(std::ffi::OsStr::from_bytes(raw));
    let joined = if path.is_absolute() {
        path.to_path_buf()
    } else {
        let dirfd = dirfd.map(|d| d as u32 as i32);
        let base = match dirfd {
            None | Some(libc::AT_FDCWD) => std::fs::read_link(format!("/proc/{pid}/cwd")),
            Some(fd) => std::fs::read_link(format!("/proc/{pid}/fd/{fd}")),
        }
        .ok()?;
        base.join(path)
    };
    let mut out = PathBuf::from("/");
    for part in joined.components() {
        match part {
            Component::Normal(p) => out.push(p),
            Component::ParentDir => {
                out.pop();
            }
            Component::RootDir | Component::CurDir | Component::Prefix(_) => {}
        }
    }
    Some(out)
}

/// `path` without its leading `/`.
fn rel_to_root(path: &Path) -> &Path {
    path.strip_prefix("/").unwrap_or(path)
}

/// The caller's memory, read through `/proc/<pid>/mem` (never written).
struct Memory(Option<File>);

impl Memory {
    fn open(pid: u32) -> Memory {
        Memory(File::open(format!("/proc/{pid}/mem")).ok())
    }

    /// Up to `len` bytes (at most [`MAX_PAYLOAD`]) at `at`; `None` when nothing is readable.
    fn read(&self, at: u64, len: usize) -> Option<Vec<u8>> {
        let file = self.0.as_ref()?;
        let len = len.min(MAX_PAYLOAD).min(MAX_READ_BYTES);
        if at == 0 || len == 0 {
            return None;
        }
        let mut buf = vec![0u8; len];
        let n = match file.read_at(&mut buf, at) {
            Ok(n) => n,
            // The range runs into an unmapped page: what lies before it may still be read.
            Err(_) => {
                let to_page_end = usize::try_from(PAGE - at % PAGE).unwrap_or(len).min(len);
                file.read_at(&mut buf[..to_page_end], at).ok()?
            }
        };
        buf.truncate(n);
        (!buf.is_empty()).then_some(buf)
    }

    fn pointer(&self, at: u64) -> Option<u64> {
        let bytes = self.read(at, 8)?;
        Some(u64::from_ne_bytes(
            <[u8; 8]>::try_from(bytes.as_slice()).ok()?,
        ))
    }

    /// A NUL-terminated string at `at`, at most [`MAX_READ_BYTES`], read a page at a time so
    /// an unmapped page after the string does not fail the read.
    fn string(&self, at: u64) -> Option<Vec<u8>> {
        let file = self.0.as_ref()?;
        if at == 0 {
            return None;
        }
        let mut out = Vec::new();
        let mut cursor = at;
        while out.len() < MAX_READ_BYTES {
            let to_page_end = PAGE - cursor % PAGE;
            let want = usize::try_from(to_page_end)
                .unwrap_or(MAX_READ_BYTES)
                .min(MAX_READ_BYTES - out.len());
            let mut buf = vec![0u8; want];
            let n = match file.read_at(&mut buf, cursor) {
                Ok(0) | Err(_) => break,
                Ok(n) => n,
            };
            if let Some(end) = buf[..n].iter().position(|b| *b == 0) {
                out.extend_from_slice(&buf[..end]);
                return Some(out);
            }
            out.extend_from_slice(&buf[..n]);
            cursor = cursor.checked_add(n as u64)?;
        }
        (!out.is_empty()).then_some(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_are_normalised_without_the_filesystem() {
        let p = resolve(std::process::id(), None, b"/home/x/../../etc/./shadow");
        assert_eq!(p, Some(PathBuf::from("/etc/shadow")));
        let p = resolve(std::process::id(), None, b"/../../..");
        assert_eq!(p, Some(PathBuf::from("/")));
    }

    #[test]
    fn own_memory_reads_are_bounded_and_stop_at_unmapped_pages() {
        let memory = Memory::open(std::process::id());
        let text = b"hello\0world".to_vec();
        let at = text.as_ptr() as u64;
        assert_eq!(memory.string(at), Some(b"hello".to_vec()));
        assert_eq!(memory.read(1, 16), None, "page zero is unmapped");
        assert_eq!(memory.string(8), None);
        let big = vec![7u8; 3 * MAX_READ_BYTES];
        let read = memory
            .read(big.as_ptr() as u64, big.len())
            .unwrap_or_default();
        assert!(read.len() <= MAX_READ_BYTES);
        let unterminated = vec![b'a'; 3 * MAX_READ_BYTES];
        let s = memory
            .string(unterminated.as_ptr() as u64)
            .unwrap_or_default();
        assert_eq!(s.len(), MAX_READ_BYTES);
    }

    #[test]
    fn the_flood_keeps_at_most_the_cap() {
        let mut observer = Observer::new(PathBuf::from("/run/home"), "c".repeat(32), false);
        for port in 0..(MAX_OBSERVATIONS as u16 + 500) {
            observer.record(Observation::Connect {
                family: "ipv4".into(),
                address: "203.0.113.7".into(),
                port,
            });
        }
        observer.record(Observation::Connect {
            family: "ipv4".into(),
            address: "203.0.113.7".into(),
            port: 0,
        });
        assert_eq!(observer.observations.len(), MAX_OBSERVATIONS);
        assert_eq!(observer.dropped, 500);
    }
}
