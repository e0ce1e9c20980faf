//! Running skill scripts in a sandbox: the [`Sandbox`] trait, its [`SandboxConfig`]urations
//! (seed 000 section 1.5's `SANDBOX_BY_TRUST` and seed 003's strict preset), the classified
//! [`Outcome`], the Linux [`ProcessSandbox`] and a test double ([`ScriptedSandbox`]).
//!
//! Threat: a skill from a marketplace is untrusted code. Its script may read secrets, write
//! outside its scratch directory, reach the network, signal or trace host processes, leave
//! daemons behind, exhaust CPU, memory, processes, disk or output, or print bytes that forge a
//! prompt. Guarantee: every run goes through one [`Sandbox`]; the [`Outcome`] says what
//! happened in one classified [`Status`], names the isolation [`Tier`] that was actually in
//! force, caps both output streams, and hands the output back as [`UntrustedOutput`] whose
//! text has control characters, escape sequences, bidi and tag characters neutralised. A
//! sandbox that cannot isolate refuses ([`Status::SandboxUnavailable`]) unless the host chose a
//! weaker tier itself; nothing in a request can lower the tier. Every [`Outcome`] also
//! records how its limits were enforced ([`Enforcement`]) and what the run used ([`Usage`]).

use std::fmt;
use std::path::PathBuf;
use std::time::Duration;

use async_trait::async_trait;
use serde::Serialize;

mod cgroup;
mod child;
mod double;
mod neutralize;
mod observe;
mod policy;
mod prepare;
mod presets;
mod process;
mod run;
mod scratch;
mod script;
mod supervise;
mod sys;
#[cfg(test)]
mod tests;
mod watch;

pub use cgroup::LimitMechanism;
pub use double::ScriptedSandbox;
pub use neutralize::neutralize;
pub use observe::{MAX_OBSERVATIONS, Observation, parse_dns_query, parse_sockaddr};
pub use presets::{MAX_SCRIPT_BYTES, SANDBOX_BY_TRUST};
pub use process::{Cgroups, DEFAULT_UID_BASE, Probe, ProcessSandbox};
pub use script::{Interpreter, ResolvedScript, ScriptError, resolve_script};

/// Where a sandbox's program comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Program {
    /// A script inside the skill directory, by its path relative to it. The interpreter is
    /// chosen from the extension ([`Interpreter::for_path`]), never from a shebang.
    Script {
        /// Relative path inside the skill directory.
        path: String,
        /// The SHA-256 (hex) taken when the script was resolved and approved; the sandbox
        /// hashes the file again just before launch and refuses a mismatch.
        sha256: Option<String>,
    },
    /// A system executable (under `/usr` or `/bin`) run directly; for hosts' own tools and
    /// for measuring the launch overhead.
    System(PathBuf),
}

/// One run: a program with its argv, stdin, the read-only skill directory, where its
/// scratch directory is made, and the limits.
#[derive(Debug, Clone)]
pub struct SandboxRequest {
    /// What to run.
    pub program: Program,
    /// Arguments, passed as an array (never joined into a shell string).
    pub args: Vec<String>,
    /// Bytes written to standard input, then closed.
    pub stdin: Vec<u8>,
    /// The skill directory, visible read-only.
    pub skill_dir: PathBuf,
    /// Where the run's scratch directory is made. Each run gets a fresh directory beneath
    /// it (an unpredictable name, mode 0700, made exclusively and never reached through a
    /// symlink), with a size-capped tmpfs mounted on it for the run where the tier has a
    /// mount namespace. It is the only writable place, the working directory, `HOME` and
    /// `TMPDIR`, and it is removed after the run unless [`keep_scratch`](Self::keep_scratch)
    /// asked for its files.
    pub scratch_root: PathBuf,
    /// Whether to keep the scratch directory's files after the run: regular files and
    /// directories (no links, devices or pipes), at most the scratch cap, copied to the path
    /// the script knew as `HOME` ([`Outcome::scratch_dir`]); its parent, the run's
    /// directory, is then the caller's to remove.
    pub keep_scratch: bool,
    /// Files staged read-only for the script: `inputs/<name>` in its working directory
    /// (see [`InputFile`]).
    pub input_files: Vec<InputFile>,
    /// Limits and permissions.
    pub config: SandboxConfig,
}

/// Most input files one run may be given.
pub const MAX_INPUT_FILES: usize = 64;
/// Most bytes of standard input one run may be given.
pub const MAX_STDIN_BYTES: usize = 8 << 20;
/// Most bytes of arguments one run may be given (all of them together).
pub const MAX_ARGS_BYTES: usize = 128 << 10;

/// A file given to a script: a copy of bytes the host chose, staged in the run's scratch
/// before the script starts, at `inputs/<name>` of its working directory.
///
/// Threat: an input that reaches the host's own files, a name that climbs out of
/// `inputs/` or hides from the person approving, or a script that rewrites what it was given.
/// Guarantee: the script sees a copy (never the host's file); the name is one plain path
/// component (1 to 128 bytes, no `/` or `\\`, nothing `neutralize` would escape, not `.` or
/// `..`), unique in the run; all inputs together count against the scratch cap and at most
/// [`MAX_INPUT_FILES`] are staged; a request breaking any of this is refused before launch.
/// The files are made 0444 in a 0555 directory before the run drops its privileges (the
/// host's umask can only narrow these modes): on root hosts they are root's, so the sandbox
/// user cannot change their bytes. What does not hold: `inputs/` lies in the script's own
/// scratch, so a script may rename it and put other files in its place, and in the
/// user-namespace tier (non-root hosts) it owns the copies and may `chmod` and rewrite
/// them. Either way only its own copy changes; nothing reaches the host's files.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InputFile {
    /// The file's name in `inputs/`.
    pub name: String,
    /// Its content.
    pub bytes: Vec<u8>,
}

impl InputFile {
    /// A file named `name` holding `bytes`.
    pub fn new(name: impl Into<String>, bytes: impl Into<Vec<u8>>) -> InputFile {
        InputFile {
            name: name.into(),
            bytes: bytes.into(),
        }
    }
}

impl SandboxRequest {
    /// A request to run `script` (relative to `skill_dir`) with `config`, its scratch
    /// directory made beneath `scratch_root`.
    pub fn script(
        skill_dir: impl Into<PathBuf>,
        script: impl Into<String>,
        scratch_root: impl Into<PathBuf>,
        config: SandboxConfig,
    ) -> SandboxRequest {
        SandboxRequest {
            program: Program::Script {
                path: script.into(),
                sha256: None,
            },
            args: Vec::new(),
            stdin: Vec::new(),
            skill_dir: skill_dir.into(),
            scratch_root: scratch_root.into(),
            keep_scratch: false,
            input_files: Vec::new(),
            config,
        }
    }

    /// Stages `file` at `inputs/<name>` (see [`InputFile`]).
    pub fn input_file(mut self, file: InputFile) -> SandboxRequest {
        self.input_files.push(file);
        self
    }

    /// Keeps the scratch directory's files after the run (see
    /// [`keep_scratch`](Self::keep_scratch)).
    pub fn keep_scratch(mut self) -> SandboxRequest {
        self.keep_scratch = true;
        self
    }

    /// Sets the arguments.
    pub fn args<I, S>(mut self, args: I) -> SandboxRequest
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.args = args.into_iter().map(Into::into).collect();
        self
    }

    /// Sets standard input.
    pub fn stdin(mut self, bytes: impl Into<Vec<u8>>) -> SandboxRequest {
        self.stdin = bytes.into();
        self
    }

    /// Pins the script's expected SHA-256 (hex).
    pub fn sha256(mut self, hex: impl Into<String>) -> SandboxRequest {
        if let Program::Script { sha256, .. } = &mut self.program {
            *sha256 = Some(hex.into());
        }
        self
    }
}

/// Network access of a run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Network {
    /// No sockets at all (the default for every level but core).
    Disabled,
    /// Network allowed to these domains. `["*"]` is any domain; a narrower list needs a
    /// filtering proxy, which [`ProcessSandbox`] does not have, so it refuses such a run
    /// rather than allow more than asked.
    Allowed(Vec<String>),
}

/// Limits and permissions of a run (seed 000 section 1.5, seed 003's strict preset).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct SandboxConfig {
    /// Wall-clock limit; everything the script started is killed when it passes.
    pub timeout: Duration,
    /// Memory limit in bytes: everything the run's process tree makes resident (private and
    /// shared anonymous memory, tmpfs and shm pages, the scratch tmpfs included), swap off,
    /// enforced by a cgroup made for the run; `RLIMIT_AS` where no cgroup can be made
    /// ([`Enforcement::memory`] says which).
    pub memory_bytes: u64,
    /// CPU time limit. Enforced by polling to about 20 ms and by `RLIMIT_CPU` (whole
    /// seconds, rounded up) per process.
    pub cpu_time: Duration,
    /// Seed 000's `cpu_limit_percent`: recorded, not enforced (no CPU controller here).
    pub cpu_limit_percent: u8,
    /// Network access.
    pub network: Network,
    /// Seed 000's `filesystem_enabled`/`can_read_files`: whether the script may read the
    /// skill directory beyond its own file. The script itself is always readable.
    pub can_read_files: bool,
    /// Seed 000's `can_write_files`: whether the scratch directory is writable.
    pub can_write_files: bool,
    /// Seed 000's `can_execute_code`: whether the script may start other programs. When
    /// false, no `execve`/`execveat` succeeds once the interpreter runs (the dynamic loader
    /// included) and no new process can be made (`fork`, `vfork`, `clone` without
    /// `CLONE_THREAD`); threads still work, up to [`max_tasks`](Self::max_tasks).
    pub can_execute_code: bool,
    /// Seed 000's `can_make_api_calls`: recorded for the host's tool proxy.
    pub can_make_api_calls: bool,
    /// Largest script accepted (seed 003: 1 MB).
    pub max_script_bytes: u64,
    /// Largest file the script may write (`RLIMIT_FSIZE`).
    pub max_file_bytes: u64,
    /// Size of the scratch tmpfs (all files together; inodes are capped at one per 4 KiB).
    /// Its pages also count against `memory_bytes`.
    pub max_scratch_bytes: u64,
    /// Per-stream output cap; more kills the run ([`Status::OutputLimit`]).
    pub max_output_bytes: usize,
    /// Tasks (processes and threads) the run may have at once: the cgroup's `pids.max`, or
    /// `RLIMIT_NPROC` counted for the run's own uid or user namespace.
    pub max_tasks: u64,
    /// Open files per process (`RLIMIT_NOFILE`).
    pub max_open_files: u64,
    /// Observation (detonation): the run's network, file, and program calls are reported
    /// in [`Outcome::observations`], decoy credentials are planted in its `HOME`, and the
    /// network stays cut. Off by default. Needs an isolated tier (a network namespace):
    /// on [`Tier::RlimitsOnly`] an observed run is refused. See the `observe` module docs
    /// for what holds.
    pub observe: bool,
}

/// The isolation actually in force for a run, strongest first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Tier {
    /// Host is root: a fresh unprivileged uid/gid with no groups and no capabilities; new
    /// mount (a size-capped tmpfs scratch, the approved script bound read-only), pid (the
    /// script is pid 1), network (when off), ipc and uts namespaces; a cgroup; rlimits;
    /// Landlock (ABI 3 or newer); `no_new_privs`; seccomp.
    Namespaced,
    /// Host is not root: the same, in a new user namespace, the script keeping the host
    /// user's uid with no capabilities.
    UserNamespace,
    /// Chosen explicitly by the host, never by default: empty environment, own session,
    /// rlimits, a cgroup where one can be made, `no_new_privs`, seccomp (so the exec and
    /// process rules hold), an unprivileged uid and a mount namespace when root. No
    /// filesystem, network or signal isolation.
    RlimitsOnly,
    /// The test double: nothing ran.
    Simulated,
}

impl Tier {
    /// `namespaced`, `user_namespace`, `rlimits_only`, `simulated`.
    pub fn as_str(self) -> &'static str {
        match self {
            Tier::Namespaced => "namespaced",
            Tier::UserNamespace => "user_namespace",
            Tier::RlimitsOnly => "rlimits_only",
            Tier::Simulated => "simulated",
        }
    }
}

impl fmt::Display for Tier {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// How a run ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum Status {
    /// Exit code 0.
    Success,
    /// A non-zero exit code.
    Exit {
        /// The code.
        code: i32,
    },
    /// Killed by a signal the supervisor did not send and no limit explains.
    Signal {
        /// The signal number.
        signal: i32,
    },
    /// The wall-clock limit passed; everything was killed.
    Timeout,
    /// The CPU-time limit passed.
    CpuLimit,
    /// The memory limit stopped it.
    MemoryLimit,
    /// It tried to write a file larger than the limit.
    FileSizeLimit,
    /// It failed with its scratch tmpfs full (bytes or inodes).
    DiskLimit,
    /// A stream passed its cap; everything was killed.
    OutputLimit,
    /// Refused before launch: the request asks for something this sandbox will not do
    /// (a script that changed since approval, an unknown interpreter, a domain allow-list).
    Refused {
        /// Why.
        reason: String,
    },
    /// The isolation the sandbox requires is not available here; nothing ran.
    SandboxUnavailable {
        /// What is missing.
        reason: String,
    },
    /// The launch failed for another reason (a missing interpreter, an unreadable skill
    /// directory); nothing ran.
    LaunchError {
        /// What failed.
        reason: String,
    },
}

impl Status {
    /// Whether the program ran at all.
    pub fn ran(&self) -> bool {
        !matches!(
            self,
            Status::Refused { .. } | Status::SandboxUnavailable { .. } | Status::LaunchError { .. }
        )
    }
}

/// Output of a run: the bytes as produced (up to the cap) and a neutralised text form, both
/// untrusted: show the text, never interpret it.
#[derive(Clone, Default, PartialEq, Eq, Serialize)]
pub struct UntrustedOutput {
    /// The raw bytes, at most the configured cap.
    #[serde(skip)]
    pub bytes: Vec<u8>,
    /// [`neutralize`]d text of `bytes`.
    pub text: String,
    /// Whether more was produced than kept.
    pub truncated: bool,
}

impl fmt::Debug for UntrustedOutput {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("UntrustedOutput")
            .field("bytes", &self.bytes.len())
            .field("text", &self.text)
            .field("truncated", &self.truncated)
            .finish()
    }
}

impl UntrustedOutput {
    /// Wraps captured bytes.
    pub fn new(bytes: Vec<u8>, truncated: bool) -> UntrustedOutput {
        let text = neutralize(&bytes);
        UntrustedOutput {
            bytes,
            text,
            truncated,
        }
    }
}

/// How a run's isolation and limits were enforced.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct Enforcement {
    /// The Landlock ABI the ruleset was enforced at (fully, never best-effort).
    pub landlock_abi: Option<u8>,
    /// What held the memory limit.
    pub memory: Option<LimitMechanism>,
    /// What held the task limit.
    pub tasks: Option<LimitMechanism>,
    /// The scratch tmpfs's size, when scratch was a capped tmpfs.
    pub scratch_bytes: Option<u64>,
    /// Whether `execve` and new processes were refused after the launch.
    pub exec_blocked: bool,
}

/// What a run used, measured from outside it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct Usage {
    /// The cgroup's peak memory (bytes), when a cgroup held memory.
    pub peak_memory_bytes: Option<u64>,
    /// Whether the task limit refused a new task.
    pub task_limit_reached: bool,
    /// Whether the scratch tmpfs was full when the run ended.
    pub scratch_full: bool,
}

/// The classified result of a run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct Outcome {
    /// How it ended.
    #[serde(flatten)]
    pub status: Status,
    /// The isolation in force; `None` when nothing was launched.
    pub tier: Option<Tier>,
    /// Exit code when it exited.
    pub exit_code: Option<i32>,
    /// Signal number when it was killed by one.
    pub signal: Option<i32>,
    /// Standard output.
    pub stdout: UntrustedOutput,
    /// Standard error.
    pub stderr: UntrustedOutput,
    /// Wall time from launch to the end of supervision.
    pub duration: Duration,
    /// The script's SHA-256 (hex) as run.
    pub sha256: Option<String>,
    /// How isolation and limits were enforced.
    pub enforcement: Enforcement,
    /// What the run used.
    pub usage: Usage,
    /// The kept scratch directory (the script's `HOME`, at the same path), when the request
    /// asked for it; remove its parent when done.
    pub scratch_dir: Option<PathBuf>,
    /// What an observed run ([`SandboxConfig::observe`]) tried, in order, each distinct
    /// observation once, at most [`MAX_OBSERVATIONS`]; empty when not observed.
    pub observations: Vec<Observation>,
    /// Observations past the cap, not kept.
    pub observations_dropped: u64,
    /// Whether the run was observed (observation was asked for and in force).
    pub observed: bool,
}

impl Outcome {
    /// An outcome for a run that never started.
    pub fn not_started(status: Status) -> Outcome {
        Outcome {
            status,
            tier: None,
            exit_code: None,
            signal: None,
            stdout: UntrustedOutput::default(),
            stderr: UntrustedOutput::default(),
            duration: Duration::ZERO,
            sha256: None,
            enforcement: Enforcement::default(),
            usage: Usage::default(),
            scratch_dir: None,
            observations: Vec::new(),
            observations_dropped: 0,
            observed: false,
        }
    }

    /// A finished outcome, for sandboxes other than this crate's.
    pub fn finished(
        status: Status,
        tier: Tier,
        stdout: UntrustedOutput,
        stderr: UntrustedOutput,
    ) -> Outcome {
        let exit_code = match &status {
            Status::Success => Some(0),
            Status::Exit { code } => Some(*code),
            _ => None,
        };
        Outcome {
            status,
            tier: Some(tier),
            exit_code,
            signal: None,
            stdout,
            stderr,
            duration: Duration::ZERO,
            sha256: None,
            enforcement: Enforcement::default(),
            usage: Usage::default(),
            scratch_dir: None,
            observations: Vec::new(),
            observations_dropped: 0,
            observed: false,
        }
    }

    /// Whether it exited 0.
    pub fn succeeded(&self) -> bool {
        self.status == Status::Success
    }
}

/// Runs programs in isolation. Object safe: hosts hold a `Box<dyn Sandbox>` or
/// `Arc<dyn Sandbox>` and may supply their own (a container, a VM).
///
/// Implementations never panic and never return early without an [`Outcome`]: every failure
/// is a [`Status`]. A run never proceeds with less isolation than the implementation's
/// configured minimum.
#[async_trait]
pub trait Sandbox: Send + Sync {
    /// Runs `request` and classifies how it ended.
    async fn run(&self, request: SandboxRequest) -> Outcome;
}
