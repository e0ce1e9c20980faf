//! [`ProcessSandbox`]: real isolation for Linux processes, holding when the host is root.
//!
//! Threat: everything listed on [`Sandbox`](super::Sandbox), with the host running as root
//! (as CI does), where `RLIMIT_NPROC` is ignored, capabilities survive into a naive
//! sandbox and `/proc/sys` is writable. Guarantee, on the strongest tier available (the
//! [`Tier`] is recorded in every [`Outcome`]):
//!
//! * **Identity.** Root hosts run the script as a fresh uid/gid from a reserved range (one
//!   per run), with no supplementary groups, empty capability sets and bounding set
//!   ([`Tier::Namespaced`]); non-root hosts run it in a new user namespace
//!   ([`Tier::UserNamespace`]). Root-owned files and host sysctls stay out of reach
//!   through ordinary permissions as well as Landlock.
//! * **Namespaces.** New pid (the first process is pid 1: when it ends, or is killed, the
//!   kernel kills every process of the run, `setsid` daemons included), network (no
//!   interfaces up; with the socket filter, no packet leaves), ipc and uts namespaces.
//! * **Filesystem.** Landlock: system directories read-only, the skill directory read-only,
//!   the scratch directory the only writable place, nothing else (no `/root`, `/home`,
//!   `/tmp`, `/proc`, `/sys`, `/dev/shm`); TCP bind/connect denied; signals and abstract
//!   unix sockets scoped to the run.
//! * **System calls.** `no_new_privs` and a seccomp deny-list (see the launcher).
//! * **Resources.** rlimits (CPU, file size, open files, no core, data segment, processes,
//!   the last counted only for the run's own uid or namespace), a wall timeout, CPU
//!   polled every 20 ms, and per-stream output caps that kill on overflow.
//! * **Environment.** Empty, then only `PATH=/usr/bin:/bin`, `HOME` and `TMPDIR` (the
//!   scratch directory), `LANG=C.UTF-8` and `SKILL_DIR`.
//!
//! When the tier's mechanisms are unavailable (no Landlock, no user namespaces, a missing
//! tool) the run fails closed with [`Status::SandboxUnavailable`], unless the host called
//! [`ProcessSandbox::allow_rlimits_only`] — then it runs on [`Tier::RlimitsOnly`] and says so.

use std::ffi::OsString;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use async_trait::async_trait;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};
use tokio::sync::Notify;

use super::launcher::{Plan, SYSTEM_PATH, Tools, confine_current_thread, which};
use super::script::{Interpreter, ScriptError, hash_file};
use super::{Network, Outcome, Program, Sandbox, SandboxRequest, Status, Tier, UntrustedOutput};

/// The default first uid of the range root hosts give scripts (one uid per run).
pub const DEFAULT_UID_BASE: u32 = 0x5a00_0000;
const UID_RANGE: u32 = 1_000_000;
const POLL: Duration = Duration::from_millis(20);
const DRAIN_GRACE: Duration = Duration::from_millis(250);

/// What the machine offers, as [`ProcessSandbox::probe`] found it.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Probe {
    /// The host runs as root.
    pub root: bool,
    /// The tier a run would use, or `None` (fail closed).
    pub tier: Option<Tier>,
    /// Landlock ABI version, when available.
    pub landlock_abi: Option<i32>,
    /// What is missing for the isolated tiers.
    pub missing: Vec<String>,
}

/// The Linux process sandbox; see the module docs.
#[derive(Debug)]
pub struct ProcessSandbox {
    dirs: Vec<PathBuf>,
    tools: Tools,
    allow_rlimits_only: bool,
    uid_base: u32,
}

/// Runs started by this process, across all sandboxes: each run gets its own uid.
static RUNS: AtomicU32 = AtomicU32::new(0);

impl Default for ProcessSandbox {
    fn default() -> Self {
        Self::new()
    }
}

fn is_root() -> bool {
    nix::unistd::geteuid().is_root()
}

fn userns_available() -> bool {
    let read = |p: &str| std::fs::read_to_string(p).ok().map(|s| s.trim().to_owned());
    if read("/proc/sys/kernel/unprivileged_userns_clone").is_some_and(|v| v == "0") {
        return false;
    }
    read("/proc/sys/user/max_user_namespaces")
        .and_then(|v| v.parse::<u64>().ok())
        .is_some_and(|n| n > 0)
}

/// Probes Landlock on a throwaway thread (the restriction dies with it).
fn landlock_abi() -> Option<i32> {
    use landlock::{ABI, Access, AccessFs, LandlockStatus, Ruleset, RulesetAttr};
    std::thread::spawn(|| {
        let status = Ruleset::default()
            .handle_access(AccessFs::from_all(ABI::V1))
            .ok()?
            .create()
            .ok()?
            .restrict_self()
            .ok()?;
        match status.landlock {
            LandlockStatus::Available { effective_abi, .. } => Some(match effective_abi {
                ABI::V1 => 1,
                ABI::V2 => 2,
                ABI::V3 => 3,
                ABI::V4 => 4,
                ABI::V5 => 5,
                ABI::V6 => 6,
                _ => 7,
            }),
            _ => None,
        }
    })
    .join()
    .ok()
    .flatten()
}

impl ProcessSandbox {
    /// A sandbox that requires isolation (fails closed without it).
    pub fn new() -> ProcessSandbox {
        let dirs: Vec<PathBuf> = SYSTEM_PATH.iter().map(PathBuf::from).collect();
        ProcessSandbox {
            tools: Tools::find(&dirs),
            dirs,
            allow_rlimits_only: false,
            uid_base: DEFAULT_UID_BASE,
        }
    }

    /// The host's explicit choice to run on [`Tier::RlimitsOnly`] when isolation is
    /// unavailable. Never the default; the outcome records the tier.
    pub fn allow_rlimits_only(mut self) -> ProcessSandbox {
        self.allow_rlimits_only = true;
        self
    }

    /// Where the launch tools (`setpriv`, `unshare`, `prlimit`, `setsid` from util-linux)
    /// and the interpreters are looked up; `/usr/bin`, `/bin`, `/usr/sbin`, `/sbin` by
    /// default. The host's `PATH` is never used.
    pub fn tool_dirs<I, P>(mut self, dirs: I) -> ProcessSandbox
    where
        I: IntoIterator<Item = P>,
        P: Into<PathBuf>,
    {
        self.dirs = dirs.into_iter().map(Into::into).collect();
        self.tools = Tools::find(&self.dirs);
        self
    }

    /// The first uid of the range given to scripts on root hosts (a million uids from it;
    /// no account should use them). Each run gets its own uid, so `RLIMIT_NPROC` counts only
    /// that run's processes.
    pub fn uid_base(mut self, base: u32) -> ProcessSandbox {
        self.uid_base = base.clamp(1, u32::MAX - UID_RANGE - 1);
        self
    }

    /// What this machine offers and the tier a run would get.
    pub fn probe(&self) -> Probe {
        let root = is_root();
        let abi = landlock_abi();
        let mut missing = Vec::new();
        if abi.is_none() {
            missing.push("Landlock".to_owned());
        }
        if self.tools.prlimit.is_none() {
            missing.push("prlimit (util-linux)".to_owned());
        }
        if root && self.tools.setpriv.is_none() {
            missing.push("setpriv (util-linux)".to_owned());
        }
        if !root {
            if self.tools.unshare.is_none() {
                missing.push("unshare (util-linux)".to_owned());
            }
            if !userns_available() {
                missing.push("unprivileged user namespaces".to_owned());
            }
        }
        let tier = if missing.is_empty() {
            Some(if root {
                Tier::Namespaced
            } else {
                Tier::UserNamespace
            })
        } else if self.allow_rlimits_only
            && self.tools.prlimit.is_some()
            && self.tools.setsid.is_some()
        {
            Some(Tier::RlimitsOnly)
        } else {
            None
        };
        Probe {
            root,
            tier,
            landlock_abi: abi,
            missing,
        }
    }

    fn next_uid(&self) -> u32 {
        // Distinct per run within this process (1,000 runs before reuse, by which time the
        // earlier run is long over) and spread by pid across processes. Hosts that run
        // several sandboxing processes at once can give each its own `uid_base`.
        let n = RUNS.fetch_add(1, Ordering::Relaxed) % 1000;
        let offset = (std::process::id() % 1000) * 1000 + n;
        self.uid_base + offset % UID_RANGE
    }

    async fn run_inner(&self, request: SandboxRequest) -> Outcome {
        let config = request.config.clone();
        if let Network::Allowed(domains) = &config.network
            && domains.iter().any(|d| d != "*")
        {
            return Outcome::not_started(Status::Refused {
                reason: "a domain allow-list needs a filtering proxy, which this sandbox does not have; allow \"*\" or no network".into(),
            });
        }
        let probe = self.probe();
        let Some(tier) = probe.tier else {
            return Outcome::not_started(Status::SandboxUnavailable {
                reason: format!(
                    "isolation is unavailable here (missing: {}); refusing to run without it",
                    probe.missing.join(", ")
                ),
            });
        };
        let prepared = match prepare(&request, &self.dirs) {
            Ok(p) => p,
            Err(status) => return Outcome::not_started(status),
        };
        let uid = probe.root.then(|| self.next_uid());
        let mut outcome = self.launch(&request, &prepared, tier, uid).await;
        if matches!(outcome.status, Status::SandboxUnavailable { .. })
            && tier != Tier::RlimitsOnly
            && self.allow_rlimits_only
        {
            outcome = self
                .launch(&request, &prepared, Tier::RlimitsOnly, uid)
                .await;
        }
        outcome.sha256 = prepared.sha256.clone();
        outcome
    }

    async fn launch(
        &self,
        request: &SandboxRequest,
        prepared: &Prepared,
        tier: Tier,
        uid: Option<u32>,
    ) -> Outcome {
        let plan = Plan {
            tier,
            uid,
            program: prepared.program.clone(),
            args: prepared.args.clone(),
            skill_dir: prepared.skill_dir.clone(),
            scratch_dir: prepared.scratch_dir.clone(),
            script: prepared.script.clone(),
            config: request.config.clone(),
            tools: self.tools.clone(),
        };
        let argv = match plan.argv() {
            Ok(argv) => argv,
            Err(reason) => return Outcome::not_started(Status::SandboxUnavailable { reason }),
        };
        let scratch_owner = match uid {
            Some(uid) => match hand_over(prepared, uid, &request.config) {
                Ok(owner) => Some(owner),
                Err(reason) => return Outcome::not_started(Status::LaunchError { reason }),
            },
            None => None,
        };
        let outcome = supervise(plan, argv, request, prepared).await;
        if let Some((owner_uid, owner_gid)) = scratch_owner {
            let _ =
                std::os::unix::fs::chown(&prepared.scratch_dir, Some(owner_uid), Some(owner_gid));
        }
        outcome
    }
}

#[async_trait]
impl Sandbox for ProcessSandbox {
    async fn run(&self, request: SandboxRequest) -> Outcome {
        self.run_inner(request).await
    }
}

/// A request checked and resolved into what the chain runs.
#[derive(Debug, Clone)]
struct Prepared {
    skill_dir: PathBuf,
    scratch_dir: PathBuf,
    script: Option<PathBuf>,
    program: PathBuf,
    args: Vec<OsString>,
    sha256: Option<String>,
}

fn refused(reason: impl Into<String>) -> Status {
    Status::Refused {
        reason: reason.into(),
    }
}

fn prepare(request: &SandboxRequest, dirs: &[PathBuf]) -> Result<Prepared, Status> {
    let dir = |p: &Path, what: &str| {
        p.canonicalize()
            .ok()
            .filter(|c| c.is_dir())
            .ok_or_else(|| Status::LaunchError {
                reason: format!("the {what} directory does not exist or is not a directory"),
            })
    };
    let skill_dir = dir(&request.skill_dir, "skill")?;
    let scratch_dir = dir(&request.scratch_dir, "scratch")?;
    if scratch_dir.starts_with(&skill_dir) || skill_dir.starts_with(&scratch_dir) {
        return Err(refused(
            "the scratch directory and the skill directory must not contain each other",
        ));
    }
    match &request.program {
        Program::Script { path, sha256 } => {
            let resolved =
                super::script::resolve_script(&skill_dir, path, request.config.max_script_bytes)
                    .map_err(|e| {
                        refused(format!(
                            "script `{}`: {e}",
                            super::neutralize(path.as_bytes())
                        ))
                    })?;
            // Hash again right before launch: a file swapped after approval does not run.
            let (_, now) = hash_file(&resolved.path, request.config.max_script_bytes)
                .map_err(|e: ScriptError| refused(e.to_string()))?;
            if now != resolved.sha256
                || sha256
                    .as_ref()
                    .is_some_and(|s| !s.eq_ignore_ascii_case(&now))
            {
                return Err(refused(
                    "the script changed since it was approved (SHA-256 mismatch); it was not run",
                ));
            }
            let interpreter = resolved.interpreter;
            let (name, fixed) = interpreter_command(interpreter);
            let program = which(dirs, name).ok_or_else(|| Status::LaunchError {
                reason: format!("the interpreter `{name}` is not installed"),
            })?;
            let mut args: Vec<OsString> = fixed.iter().map(OsString::from).collect();
            args.push(resolved.path.clone().into());
            args.extend(request.args.iter().map(OsString::from));
            Ok(Prepared {
                skill_dir,
                scratch_dir,
                script: Some(resolved.path),
                program,
                args,
                sha256: Some(now),
            })
        }
        Program::System(path) => {
            let canonical = path
                .canonicalize()
                .map_err(|_| refused("the program does not exist"))?;
            if !(canonical.starts_with("/usr") || canonical.starts_with("/bin"))
                || !canonical.is_file()
            {
                return Err(refused(
                    "only system programs under /usr or /bin run directly",
                ));
            }
            Ok(Prepared {
                skill_dir,
                scratch_dir,
                script: None,
                program: canonical,
                args: request.args.iter().map(OsString::from).collect(),
                sha256: None,
            })
        }
    }
}

fn interpreter_command(interpreter: Interpreter) -> (&'static str, &'static [&'static str]) {
    interpreter.command()
}

/// Root hosts: checks the fresh uid can reach what it must, and gives it the scratch
/// directory. Returns the scratch directory's previous owner.
fn hand_over(
    prepared: &Prepared,
    uid: u32,
    config: &super::SandboxConfig,
) -> Result<(u32, u32), String> {
    let other_can =
        |path: &Path, bits: u32| std::fs::metadata(path).is_ok_and(|m| m.mode() & bits == bits);
    let traversable = |path: &Path| path.ancestors().skip(1).all(|a| other_can(a, 0o001));
    let unreachable = |what: &str, path: &Path| {
        format!(
            "the sandbox user cannot reach the {what} {}: every parent directory needs o+x and the {what} o+r (the host is root, the script runs as an unprivileged uid)",
            path.display()
        )
    };
    if !traversable(&prepared.skill_dir) || !other_can(&prepared.skill_dir, 0o001) {
        return Err(unreachable("skill directory", &prepared.skill_dir));
    }
    if config.can_read_files && !other_can(&prepared.skill_dir, 0o005) {
        return Err(unreachable("skill directory", &prepared.skill_dir));
    }
    if let Some(script) = &prepared.script
        && !other_can(script, 0o004)
    {
        return Err(unreachable("script", script));
    }
    if !traversable(&prepared.scratch_dir) {
        return Err(unreachable("scratch directory", &prepared.scratch_dir));
    }
    let meta = std::fs::metadata(&prepared.scratch_dir).map_err(|e| e.to_string())?;
    std::os::unix::fs::chown(&prepared.scratch_dir, Some(uid), Some(uid))
        .map_err(|e| format!("cannot hand the scratch directory to the sandbox user: {e}"))?;
    Ok((meta.uid(), meta.gid()))
}

/// Why the supervisor killed the run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum KillReason {
    Timeout,
    Output,
    Cpu,
}

type Shared = Arc<std::sync::Mutex<(Vec<u8>, bool)>>;

/// Reads `stream` into `buf` up to `cap` bytes; on overflow marks it truncated, notifies
/// and stops reading (a flood is not drained).
async fn capture(
    mut stream: impl AsyncRead + Unpin,
    buf: Shared,
    cap: usize,
    overflow: Arc<Notify>,
) {
    let mut chunk = vec![0u8; 16 * 1024];
    loop {
        let n = match stream.read(&mut chunk).await {
            Ok(0) | Err(_) => return,
            Ok(n) => n,
        };
        let Ok(mut guard) = buf.lock() else { return };
        let room = cap.saturating_sub(guard.0.len());
        guard.0.extend_from_slice(&chunk[..n.min(room)]);
        if n > room {
            guard.1 = true;
            drop(guard);
            overflow.notify_one();
            return;
        }
    }
}

fn take(buf: &Shared) -> UntrustedOutput {
    match buf.lock() {
        Ok(mut guard) => {
            let (bytes, truncated) = std::mem::take(&mut *guard);
            UntrustedOutput::new(bytes, truncated)
        }
        Err(_) => UntrustedOutput::default(),
    }
}

/// CPU time (ms) of `pid` and its live descendants (reaped ones are in `cutime`), and the
/// largest data segment (bytes) among them. Bounded to 4,096 processes.
fn tree_usage(pid: u32) -> (u64, u64) {
    let mut stack = vec![pid];
    let mut cpu_ticks = 0u64;
    let mut data = 0u64;
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
                cpu_ticks += fields
                    .get(i)
                    .and_then(|f| f.parse::<u64>().ok())
                    .unwrap_or(0);
            }
        }
        if let Ok(status) = std::fs::read_to_string(format!("/proc/{p}/status"))
            && let Some(line) = status.lines().find(|l| l.starts_with("VmData:"))
        {
            let kb = line
                .split_whitespace()
                .nth(1)
                .and_then(|v| v.parse::<u64>().ok())
                .unwrap_or(0);
            data = data.max(kb * 1024);
        }
        if let Ok(children) = std::fs::read_to_string(format!("/proc/{p}/task/{p}/children")) {
            stack.extend(
                children
                    .split_whitespace()
                    .filter_map(|c| c.parse::<u32>().ok()),
            );
        }
    }
    // USER_HZ is 100 on Linux.
    (cpu_ticks * 10, data)
}

const MEMORY_MARKERS: &[&str] = &[
    "MemoryError",
    "Cannot allocate memory",
    "cannot allocate memory",
    "out of memory",
    "xmalloc",
];

async fn supervise(
    plan: Plan,
    argv: Vec<OsString>,
    request: &SandboxRequest,
    prepared: &Prepared,
) -> Outcome {
    let tier = plan.tier;
    let config = request.config.clone();
    let Some((program, rest)) = argv.split_first() else {
        return Outcome::not_started(Status::LaunchError {
            reason: "empty command".into(),
        });
    };
    let mut command = tokio::process::Command::new(program);
    command
        .args(rest)
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .env("HOME", &prepared.scratch_dir)
        .env("TMPDIR", &prepared.scratch_dir)
        .env("LANG", "C.UTF-8")
        .env("SKILL_DIR", &prepared.skill_dir)
        .current_dir(&prepared.scratch_dir)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true);
    if tier != Tier::RlimitsOnly {
        command.process_group(0);
    }
    let Ok(handle) = tokio::runtime::Handle::try_current() else {
        return Outcome::not_started(Status::LaunchError {
            reason: "ProcessSandbox needs a tokio runtime".into(),
        });
    };
    let (spawned_tx, spawned_rx) = tokio::sync::oneshot::channel();
    let (done_tx, done_rx) = std::sync::mpsc::channel::<()>();
    let started = Instant::now();
    let thread = std::thread::Builder::new()
        .name("skills-sandbox-launch".into())
        .spawn(move || {
            let result = confine_current_thread(&plan).and_then(|_| {
                let _runtime = handle.enter();
                command.spawn().map_err(|e| format!("spawn: {e}"))
            });
            let failed = result.is_err();
            let _ = spawned_tx.send(result);
            if !failed {
                // Parked until the run ends: the chain's parent-death signal is tied to this
                // thread, so a host that dies takes the run with it.
                let _ = done_rx.recv();
            }
        });
    if let Err(e) = thread {
        return Outcome::not_started(Status::LaunchError {
            reason: format!("cannot start the launch thread: {e}"),
        });
    }
    let mut child = match spawned_rx.await {
        Ok(Ok(child)) => child,
        Ok(Err(reason)) => {
            let status = if reason.starts_with("spawn") {
                Status::LaunchError { reason }
            } else {
                Status::SandboxUnavailable { reason }
            };
            return Outcome::not_started(status);
        }
        Err(_) => {
            return Outcome::not_started(Status::LaunchError {
                reason: "the launch thread ended without a result".into(),
            });
        }
    };
    let pid = child.id().unwrap_or(0);
    let overflow = Arc::new(Notify::new());
    let out: Shared = Arc::default();
    let err: Shared = Arc::default();
    let mut readers = Vec::new();
    if let Some(stdout) = child.stdout.take() {
        readers.push(tokio::spawn(capture(
            stdout,
            out.clone(),
            config.max_output_bytes,
            overflow.clone(),
        )));
    }
    if let Some(stderr) = child.stderr.take() {
        readers.push(tokio::spawn(capture(
            stderr,
            err.clone(),
            config.max_output_bytes,
            overflow.clone(),
        )));
    }
    if let Some(mut stdin) = child.stdin.take() {
        let bytes = request.stdin.clone();
        tokio::spawn(async move {
            let _ = stdin.write_all(&bytes).await;
            let _ = stdin.shutdown().await;
        });
    }
    let deadline = tokio::time::Instant::now() + config.timeout;
    let cpu_limit_ms = u64::try_from(config.cpu_time.as_millis()).unwrap_or(u64::MAX);
    let mut interval = tokio::time::interval(POLL);
    let mut killed: Option<KillReason> = None;
    let mut cpu_seen = 0u64;
    let mut data_seen = 0u64;
    let status = loop {
        tokio::select! {
            status = child.wait() => break status,
            _ = tokio::time::sleep_until(deadline), if killed.is_none() => {
                killed = Some(KillReason::Timeout);
                kill_all(&mut child, pid, tier);
            }
            _ = overflow.notified(), if killed.is_none() => {
                killed = Some(KillReason::Output);
                kill_all(&mut child, pid, tier);
            }
            _ = interval.tick() => {
                let (cpu, data) = tree_usage(pid);
                cpu_seen = cpu_seen.max(cpu);
                data_seen = data_seen.max(data);
                if killed.is_none() && cpu > cpu_limit_ms {
                    killed = Some(KillReason::Cpu);
                    kill_all(&mut child, pid, tier);
                }
            }
        }
    };
    if tier == Tier::RlimitsOnly {
        let _ = nix::sys::signal::killpg(
            nix::unistd::Pid::from_raw(i32::try_from(pid).unwrap_or(0)),
            nix::sys::signal::Signal::SIGKILL,
        );
    }
    drop(done_tx);
    let drain = futures_join(readers);
    let _ = tokio::time::timeout(DRAIN_GRACE, drain).await;
    let duration = started.elapsed();
    let stdout = take(&out);
    let stderr = take(&err);
    let (exit_code, signal) = match &status {
        Ok(s) => {
            use std::os::unix::process::ExitStatusExt;
            (s.code(), s.signal())
        }
        Err(_) => (None, None),
    };
    let memory_hint = MEMORY_MARKERS.iter().any(|m| stderr.text.contains(m))
        || data_seen >= config.memory_bytes / 10 * 9;
    let rlimit_cpu_ms = config.cpu_time.as_millis().div_ceil(1000).max(1) as u64 * 1000;
    let classified = match (killed, exit_code, signal) {
        (Some(KillReason::Timeout), _, _) => Status::Timeout,
        (Some(KillReason::Output), _, _) => Status::OutputLimit,
        (Some(KillReason::Cpu), _, _) => Status::CpuLimit,
        (None, Some(0), _) => Status::Success,
        (None, Some(code), _) => {
            if stderr.text.contains("File too large")
                || (code == 128 + libc::SIGXFSZ && stderr.text.contains("File size limit"))
            {
                Status::FileSizeLimit
            } else if memory_hint {
                Status::MemoryLimit
            } else {
                Status::Exit { code }
            }
        }
        (None, None, Some(sig)) if sig == libc::SIGXCPU => Status::CpuLimit,
        (None, None, Some(sig)) if sig == libc::SIGXFSZ => Status::FileSizeLimit,
        (None, None, Some(sig)) if sig == libc::SIGKILL && cpu_seen + 200 >= rlimit_cpu_ms => {
            Status::CpuLimit
        }
        (None, None, Some(sig))
            if memory_hint
                && [libc::SIGSEGV, libc::SIGABRT, libc::SIGKILL, libc::SIGBUS].contains(&sig) =>
        {
            Status::MemoryLimit
        }
        (None, None, Some(signal)) => Status::Signal { signal },
        (None, None, None) => Status::LaunchError {
            reason: "the run's status could not be read".into(),
        },
    };
    let mut outcome = Outcome::not_started(classified);
    outcome.tier = Some(tier);
    outcome.exit_code = exit_code;
    outcome.signal = signal;
    outcome.stdout = stdout;
    outcome.stderr = stderr;
    outcome.duration = duration;
    outcome
}

async fn futures_join(handles: Vec<tokio::task::JoinHandle<()>>) {
    for handle in handles {
        let _ = handle.await;
    }
}

/// Kills the run: `SIGKILL` to its first process (pid 1 of its namespace on the isolated
/// tiers, which takes every other process with it) and to its process group.
fn kill_all(child: &mut tokio::process::Child, pid: u32, tier: Tier) {
    let _ = child.start_kill();
    if let Ok(pid) = i32::try_from(pid)
        && pid > 0
    {
        let _ = nix::sys::signal::killpg(
            nix::unistd::Pid::from_raw(pid),
            nix::sys::signal::Signal::SIGKILL,
        );
    }
    let _ = tier;
}
