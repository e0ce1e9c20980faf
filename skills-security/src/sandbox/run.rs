//! One run of [`ProcessSandbox`](super::ProcessSandbox), on a thread of its own: prepare
//! everything in the parent (the script opened once and hashed, the scratch directory, the
//! cgroup, the Landlock ruleset, the seccomp programs, argv and environment), launch in one
//! step ([`sys::spawn`]), answer the child's handshake (its tmpfs, its exec filter), then
//! supervise, measure, clean up and classify.
//!
//! The thread is the run's parent: the child's parent-death signal is tied to it, so it
//! lives until the first process is reaped, and it owns every resource of the run (guards
//! that kill, unmount by closing, and remove on drop), whether the run ends, is killed, or
//! the caller drops the future (the cancel pipe closes).

use std::ffi::{CString, OsStr, OsString};
use std::os::fd::{AsFd, AsRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use nix::sys::socket::{AddressFamily, SockFlag, SockType, socketpair};

use super::cgroup::{Hierarchies, LimitMechanism, RunCgroup};
use super::policy::{LandlockInputs, landlock_ruleset, seccomp_filters};
use super::scratch::RunDir;
use super::script::{Interpreter, OpenedScript, check_relative, open_beneath, open_root};
use super::supervise::{Child, Facts, Pipes, classify, supervise, wait_readable};
use super::sys::{self, ChildSpec, IdMaps, LandlockSpec, MountSpec, Namespaces, Reopen, Step};
use super::{Enforcement, Outcome, Program, SandboxRequest, Status, Tier, Usage};

/// A hook called with the script's host path right after it was hashed (tests swap the
/// file there).
pub(crate) type Hook = Arc<dyn Fn(&Path) + Send + Sync>;

/// Everything a run needs from its [`ProcessSandbox`](super::ProcessSandbox).
pub(crate) struct RunPlan {
    pub tier: Tier,
    pub root: bool,
    /// Root hosts: the fresh uid (and gid) the script runs as.
    pub uid: Option<u32>,
    /// The Landlock ABI to enforce (isolated tiers).
    pub landlock_abi: Option<u8>,
    /// Where cgroups are made; `None` when the host turned them off.
    pub hierarchies: Option<Hierarchies>,
    pub require_cgroups: bool,
    pub last_cap: u32,
    pub interpreter_dirs: Vec<PathBuf>,
    pub request: SandboxRequest,
    pub after_hash: Option<Hook>,
}

fn refused(reason: impl Into<String>) -> Status {
    Status::Refused {
        reason: reason.into(),
    }
}

fn launch_error(reason: impl Into<String>) -> Status {
    Status::LaunchError {
        reason: reason.into(),
    }
}

fn unavailable(reason: impl Into<String>) -> Status {
    Status::SandboxUnavailable {
        reason: reason.into(),
    }
}

/// Finds `name` in `dirs` (never the host's `PATH`).
pub(crate) fn which(dirs: &[PathBuf], name: &str) -> Option<PathBuf> {
    dirs.iter().map(|dir| dir.join(name)).find(|p| p.is_file())
}

/// The program of a run, resolved.
struct Prepared {
    skill_root: PathBuf,
    skill_fd: OwnedFd,
    program: PathBuf,
    /// Interpreter flags (before the script) and the request's arguments (after it).
    fixed_args: Vec<OsString>,
    script: Option<(PathBuf, OpenedScript)>,
}

fn prepare(plan: &RunPlan) -> Result<Prepared, Status> {
    let request = &plan.request;
    let (skill_root, skill_fd) = open_root(&request.skill_dir)
        .map_err(|_| launch_error("the skill directory does not exist or is not a directory"))?;
    match &request.program {
        Program::Script { path, sha256 } => {
            let shown = super::neutralize(path.as_bytes());
            let parts =
                check_relative(path).map_err(|e| refused(format!("script `{shown}`: {e}")))?;
            let interpreter = Interpreter::for_path(path).ok_or_else(|| {
                refused(format!(
                    "script `{shown}`: {}",
                    super::ScriptError::UnsupportedInterpreter
                ))
            })?;
            let opened = open_beneath(skill_fd.as_fd(), &parts, request.config.max_script_bytes)
                .map_err(|e| refused(format!("script `{shown}`: {e}")))?;
            if sha256
                .as_ref()
                .is_some_and(|s| !s.eq_ignore_ascii_case(&opened.sha256))
            {
                return Err(refused(
                    "the script changed since it was approved (SHA-256 mismatch); it was not run",
                ));
            }
            let mut host_path = skill_root.clone();
            host_path.extend(&parts);
            if let Some(hook) = &plan.after_hash {
                hook(&host_path);
            }
            let (name, fixed) = interpreter.command();
            let program = which(&plan.interpreter_dirs, name).ok_or_else(|| {
                launch_error(format!("the interpreter `{name}` is not installed"))
            })?;
            Ok(Prepared {
                skill_root,
                skill_fd,
                program,
                fixed_args: fixed.iter().map(OsString::from).collect(),
                script: Some((host_path, opened)),
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
                skill_root,
                skill_fd,
                program: canonical,
                fixed_args: Vec::new(),
                script: None,
            })
        }
    }
}

/// Root hosts: the fresh uid must be able to reach the skill and the scratch directory.
fn check_reachable(
    prepared: &Prepared,
    scratch_root: &Path,
    can_read_files: bool,
) -> Result<(), Status> {
    let other_can =
        |path: &Path, bits: u32| std::fs::metadata(path).is_ok_and(|m| m.mode() & bits == bits);
    let traversable = |path: &Path| path.ancestors().all(|a| other_can(a, 0o001));
    let unreachable = |what: &str, path: &Path| {
        launch_error(format!(
            "the sandbox user cannot reach the {what} {}: every directory on the way needs o+x{} (the host is root, the script runs as an unprivileged uid)",
            path.display(),
            if what == "skill directory" && can_read_files {
                " and the skill directory o+r"
            } else {
                ""
            },
        ))
    };
    let skill_ok = traversable(&prepared.skill_root)
        && (!can_read_files || other_can(&prepared.skill_root, 0o005));
    if !skill_ok {
        return Err(unreachable("skill directory", &prepared.skill_root));
    }
    if let Some((path, _)) = &prepared.script
        && let Some(parent) = path.parent()
        && !traversable(parent)
    {
        return Err(unreachable("script", path));
    }
    if !traversable(scratch_root) {
        return Err(unreachable("scratch directory", scratch_root));
    }
    Ok(())
}

fn cstring(bytes: &[u8]) -> Result<CString, Status> {
    CString::new(bytes).map_err(|_| refused("an argument or path contains a NUL byte"))
}

fn env(name: &str, value: &OsStr) -> Result<CString, Status> {
    let mut bytes = name.as_bytes().to_vec();
    bytes.push(b'=');
    bytes.extend_from_slice(value.as_bytes());
    cstring(&bytes)
}

fn read_last_cap() -> u32 {
    std::fs::read_to_string("/proc/sys/kernel/cap_last_cap")
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(63)
}

/// The highest capability number on this kernel.
pub(crate) fn last_cap() -> u32 {
    read_last_cap()
}

/// Runs `plan` to its end on the calling thread; `cancel` reports the caller gone.
pub(crate) fn execute(plan: RunPlan, cancel: OwnedFd) -> Outcome {
    let started = Instant::now();
    let mut outcome = match launch_and_supervise(&plan, cancel, started) {
        Ok(outcome) => outcome,
        Err(status) => Outcome::not_started(status),
    };
    outcome.duration = started.elapsed();
    outcome
}

fn launch_and_supervise(
    plan: &RunPlan,
    cancel: OwnedFd,
    started: Instant,
) -> Result<Outcome, Status> {
    let request = &plan.request;
    let config = &request.config;
    let tier = plan.tier;
    let isolated = matches!(tier, Tier::Namespaced | Tier::UserNamespace);
    let mount_ns = isolated || (tier == Tier::RlimitsOnly && plan.root);
    let prepared = prepare(plan)?;
    let scratch_root = request
        .scratch_root
        .canonicalize()
        .ok()
        .filter(|p| p.is_dir())
        .ok_or_else(|| launch_error("the scratch root does not exist or is not a directory"))?;
    if scratch_root.starts_with(&prepared.skill_root) {
        return Err(refused(
            "the scratch root must not be inside the skill directory",
        ));
    }
    if plan.uid.is_some() {
        check_reachable(&prepared, &scratch_root, config.can_read_files)?;
    }
    let run_dir = RunDir::create(&scratch_root).map_err(launch_error)?;
    let cgroup = match &plan.hierarchies {
        Some(h) if h.memory().is_some() || h.tasks().is_some() => {
            match RunCgroup::create(h, config.memory_bytes, config.max_tasks) {
                Ok(c) => Some(c),
                Err(e) if plan.require_cgroups => return Err(unavailable(e)),
                Err(_) => None,
            }
        }
        _ if plan.require_cgroups => {
            return Err(unavailable(
                "no writable cgroup with the memory and pids controllers (cgroups are required)",
            ));
        }
        _ => None,
    };
    let memory = cgroup.as_ref().and_then(RunCgroup::memory);
    let tasks = cgroup.as_ref().and_then(RunCgroup::tasks);
    if plan.require_cgroups && (memory.is_none() || tasks.is_none()) {
        return Err(unavailable(
            "the memory and pids cgroup controllers are both required",
        ));
    }
    let mut rlimits: Vec<(libc::c_uint, u64)> = vec![
        (
            libc::RLIMIT_CPU as libc::c_uint,
            u64::try_from(config.cpu_time.as_millis().div_ceil(1000).max(1)).unwrap_or(u64::MAX),
        ),
        (libc::RLIMIT_FSIZE as libc::c_uint, config.max_file_bytes),
        (
            libc::RLIMIT_NOFILE as libc::c_uint,
            config.max_open_files.max(8),
        ),
        (libc::RLIMIT_CORE as libc::c_uint, 0),
    ];
    if memory.is_none() {
        rlimits.push((libc::RLIMIT_AS as libc::c_uint, config.memory_bytes));
    }
    if tasks.is_none() {
        rlimits.push((libc::RLIMIT_NPROC as libc::c_uint, config.max_tasks.max(1)));
    }
    let landlock = match (isolated, plan.landlock_abi) {
        (true, Some(abi)) => Some(
            landlock_ruleset(
                &LandlockInputs {
                    config,
                    skill_root: &prepared.skill_fd,
                    program: &prepared.program,
                },
                abi,
            )
            .map_err(unavailable)?,
        ),
        (true, None) => return Err(unavailable("Landlock is unavailable")),
        _ => None,
    };
    let filters = seccomp_filters(config, memory.is_some()).map_err(unavailable)?;
    // The script: bound over its own path in a mount namespace, else a sealed memfd.
    let memfd = match (&prepared.script, mount_ns) {
        (Some((_, opened)), false) => Some(sealed_copy(&opened.bytes).map_err(launch_error)?),
        _ => None,
    };
    let script_arg: Option<OsString> = match (&prepared.script, &memfd) {
        (Some(_), Some(fd)) => Some(format!("/proc/self/fd/{}", fd.as_raw_fd()).into()),
        (Some((path, _)), None) => Some(path.clone().into_os_string()),
        (None, _) => None,
    };
    let mut argv_c = vec![cstring(prepared.program.as_os_str().as_bytes())?];
    for arg in &prepared.fixed_args {
        argv_c.push(cstring(arg.as_bytes())?);
    }
    if let Some(arg) = &script_arg {
        argv_c.push(cstring(arg.as_bytes())?);
    }
    for arg in &request.args {
        argv_c.push(cstring(arg.as_bytes())?);
    }
    let home = run_dir.path().as_os_str();
    let envp_c = [
        env("PATH", OsStr::new("/usr/bin:/bin"))?,
        env("HOME", home)?,
        env("TMPDIR", home)?,
        env("LANG", OsStr::new("C.UTF-8"))?,
        env("SKILL_DIR", prepared.skill_root.as_os_str())?,
    ];
    let program_c = cstring(prepared.program.as_os_str().as_bytes())?;
    let argv: Vec<*const libc::c_char> = argv_c
        .iter()
        .map(|c| c.as_ptr())
        .chain([std::ptr::null()])
        .collect();
    let envp: Vec<*const libc::c_char> = envp_c
        .iter()
        .map(|c| c.as_ptr())
        .chain([std::ptr::null()])
        .collect();
    // Identity and the tmpfs owner.
    let own_uid = nix::unistd::getuid().as_raw();
    let own_gid = nix::unistd::getgid().as_raw();
    let (owner_uid, owner_gid) = match plan.uid {
        Some(uid) => (uid, uid),
        None => (own_uid, own_gid),
    };
    let uid_map = format!("{own_uid} {own_uid} 1\n");
    let gid_map = format!("{own_gid} {own_gid} 1\n");
    let size = cstring(config.max_scratch_bytes.max(4096).to_string().as_bytes())?;
    let inodes = cstring(
        (config.max_scratch_bytes / 4096)
            .max(1024)
            .to_string()
            .as_bytes(),
    )?;
    let uid_c = cstring(owner_uid.to_string().as_bytes())?;
    let gid_c = cstring(owner_gid.to_string().as_bytes())?;
    let tmpfs = [
        (c"size", size.as_c_str()),
        (c"nr_inodes", inodes.as_c_str()),
        (c"mode", c"0700"),
        (c"uid", uid_c.as_c_str()),
        (c"gid", gid_c.as_c_str()),
    ];
    let run_dir_c = cstring(run_dir.path().as_os_str().as_bytes())?;
    let script_c = match &prepared.script {
        Some((path, _)) => Some(cstring(path.as_os_str().as_bytes())?),
        None => None,
    };
    let (stdin_read, stdin_write) = pipe().map_err(launch_error)?;
    let (stdout_read, stdout_write) = pipe().map_err(launch_error)?;
    let (stderr_read, stderr_write) = pipe().map_err(launch_error)?;
    let (report, report_child) = socketpair(
        AddressFamily::Unix,
        SockType::SeqPacket,
        None,
        SockFlag::SOCK_CLOEXEC,
    )
    .map_err(|e| launch_error(format!("socketpair: {e}")))?;
    let procs = cgroup
        .as_ref()
        .map(RunCgroup::procs_fds)
        .unwrap_or_default();
    let programs: Vec<&[libc::sock_filter]> = filters.programs.iter().map(Vec::as_slice).collect();
    let namespaces = Namespaces {
        user: tier == Tier::UserNamespace,
        mount: mount_ns,
        pid: isolated,
        net: isolated && config.network == super::Network::Disabled,
        ipc: isolated,
        uts: isolated,
    };
    let spec =
        ChildSpec {
            stdio: [
                stdin_read.as_raw_fd(),
                stdout_write.as_raw_fd(),
                stderr_write.as_raw_fd(),
            ],
            report: report_child.as_raw_fd(),
            id_maps: (tier == Tier::UserNamespace).then_some(IdMaps {
                uid_map: uid_map.as_bytes(),
                gid_map: gid_map.as_bytes(),
            }),
            cgroup_procs: &procs,
            mounts: mount_ns.then(|| MountSpec {
                run_dir: Reopen {
                    fd: run_dir.fd(),
                    path: &run_dir_c,
                },
                tmpfs: &tmpfs,
                script: prepared.script.as_ref().zip(script_c.as_deref()).map(
                    |((_, opened), path)| {
                        (
                            Reopen {
                                fd: opened.file.as_raw_fd(),
                                path,
                            },
                            opened.bytes.as_slice(),
                        )
                    },
                ),
            }),
            rlimits: &rlimits,
            last_cap: (plan.root || tier == Tier::UserNamespace).then_some(plan.last_cap),
            become_user: plan.uid.map(|uid| (uid, uid)),
            workdir: run_dir.fd(),
            landlock: landlock.as_ref().map(|l| LandlockSpec {
                ruleset: l.ruleset.as_raw_fd(),
                scratch_access: l.scratch_access,
                script_access: l.script_access,
            }),
            filters: &programs,
            exec_filter: filters.exec.as_deref(),
            keep_fd: memfd.as_ref().map(AsRawFd::as_raw_fd),
            program: &program_c,
            argv: &argv,
            envp: &envp,
        };
    let (pid, pidfd) = sys::spawn(&spec, namespaces).map_err(|e| {
        unavailable(format!(
            "cannot create the run's process and namespaces: {e}"
        ))
    })?;
    let mut child = Child::new(pid, pidfd, !namespaces.pid);
    drop((stdin_read, stdout_write, stderr_write, report_child));
    drop(landlock);
    let deadline = started + config.timeout;
    let tmpfs_root = handshake(&mut child, &report, &cancel, deadline)?;
    drop(report);
    let seen = supervise(
        &mut child,
        Pipes {
            stdin: stdin_write,
            stdin_bytes: request.stdin.clone(),
            stdout: stdout_read,
            stderr: stderr_read,
            cancel,
        },
        cgroup.as_ref(),
        deadline,
        config.cpu_time,
        config.max_output_bytes,
    );
    let stats = cgroup.as_ref().map(RunCgroup::stats).unwrap_or_default();
    let scratch_full = tmpfs_root.as_ref().is_some_and(|fd| {
        nix::sys::statfs::fstatfs(fd)
            .is_ok_and(|s| s.blocks_available() == 0 || s.files_free() == 0)
    });
    let (status, exit_code, signal) = classify(
        &seen,
        &Facts {
            cpu_time: config.cpu_time,
            oom_kills: stats.oom_kills,
            memory_by_rlimit: memory.is_none(),
            scratch_full,
        },
    );
    let mut run_dir = run_dir;
    let kept = request.keep_scratch.then(|| {
        run_dir.keep(
            tmpfs_root.as_ref().map(AsFd::as_fd),
            config.max_scratch_bytes,
        )
    });
    drop(tmpfs_root);
    drop(cgroup);
    drop(run_dir);
    let mut outcome = Outcome::not_started(status);
    outcome.tier = Some(tier);
    outcome.exit_code = exit_code;
    outcome.signal = signal;
    outcome.stdout = seen.stdout;
    outcome.stderr = seen.stderr;
    outcome.sha256 = prepared.script.as_ref().map(|(_, o)| o.sha256.clone());
    outcome.enforcement = Enforcement {
        landlock_abi: if isolated { plan.landlock_abi } else { None },
        memory: Some(memory.unwrap_or(LimitMechanism::RlimitAs)),
        tasks: Some(tasks.unwrap_or(LimitMechanism::RlimitNproc)),
        scratch_bytes: mount_ns.then_some(config.max_scratch_bytes),
        exec_blocked: !config.can_execute_code,
    };
    outcome.usage = Usage {
        peak_memory_bytes: stats.peak_memory_bytes,
        task_limit_reached: stats.task_limit_hits > 0,
        scratch_full,
    };
    outcome.scratch_dir = kept;
    Ok(outcome)
}

fn pipe() -> Result<(OwnedFd, OwnedFd), String> {
    nix::unistd::pipe2(nix::fcntl::OFlag::O_CLOEXEC).map_err(|e| format!("pipe: {e}"))
}

/// A sealed, read-only in-memory copy of the script (runs without a mount namespace).
fn sealed_copy(bytes: &[u8]) -> Result<OwnedFd, String> {
    use nix::fcntl::{FcntlArg, SealFlag, fcntl};
    use nix::sys::memfd::{MFdFlags, memfd_create};
    use std::io::Write;
    let fd = memfd_create(
        c"skills-script",
        MFdFlags::MFD_CLOEXEC | MFdFlags::MFD_ALLOW_SEALING,
    )
    .map_err(|e| format!("memfd: {e}"))?;
    let mut file = std::fs::File::from(fd);
    file.write_all(bytes).map_err(|e| format!("memfd: {e}"))?;
    let fd = OwnedFd::from(file);
    fcntl(
        &fd,
        FcntlArg::F_ADD_SEALS(
            SealFlag::F_SEAL_SEAL
                | SealFlag::F_SEAL_SHRINK
                | SealFlag::F_SEAL_GROW
                | SealFlag::F_SEAL_WRITE,
        ),
    )
    .map_err(|e| format!("memfd seals: {e}"))?;
    Ok(fd)
}

/// Reads the child's reports until it has executed the program (the report socket closes
/// on exec): its tmpfs, its exec listener (let through once), or a failure.
fn handshake(
    child: &mut Child,
    report: &OwnedFd,
    cancel: &OwnedFd,
    deadline: Instant,
) -> Result<Option<OwnedFd>, Status> {
    let mut tmpfs = None;
    loop {
        if !wait_readable(report.as_fd(), cancel.as_fd(), deadline) {
            child.kill();
            let _ = child.reap(true);
            return Err(Status::Timeout);
        }
        let Ok((message, fd)) = sys::recv_report(report.as_fd()) else {
            return Ok(tmpfs);
        };
        let Some(message) = message else {
            return Ok(tmpfs); // closed on exec (or the child died: supervision sees it)
        };
        match message[0] {
            sys::REPORT_MOUNT => tmpfs = fd,
            sys::REPORT_LISTENER => {
                let Some(listener) = fd else { continue };
                let left = deadline.saturating_duration_since(Instant::now());
                if sys::allow_one_exec(listener, left).is_err() {
                    child.kill();
                }
            }
            _ => {
                let step = Step::from_u8(message[1]);
                let errno = i32::from_le_bytes([message[4], message[5], message[6], message[7]]);
                let _ = child.reap(true);
                return Err(failure(step, errno));
            }
        }
    }
}

fn failure(step: Option<Step>, errno: i32) -> Status {
    let error = std::io::Error::from_raw_os_error(errno);
    let Some(step) = step else {
        return launch_error(format!("the launch failed: {error}"));
    };
    match (step, errno) {
        (Step::ScriptBind, libc::ENOENT | libc::ESTALE) => {
            refused("the script was replaced after it was hashed; it was not run")
        }
        (Step::Exec, _) => launch_error(format!("{}: {error}", step.describe())),
        _ if step.is_isolation() => unavailable(format!("{}: {error}", step.describe())),
        _ => launch_error(format!("{}: {error}", step.describe())),
    }
}
