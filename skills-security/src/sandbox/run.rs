//! One run of [`ProcessSandbox`](super::ProcessSandbox), on a thread of its own: prepare
//! everything in the parent (`prepare`), launch in one step ([`sys::spawn`] running
//! `child::main`), answer the child's handshake (its tmpfs, its liveness, its exec
//! listener: the launch's `execve` let through once), then supervise, measure, clean up and
//! classify.
//!
//! The thread is the run's parent: the child's parent-death signal is tied to it, so it
//! lives until the first process is reaped, and it owns every resource of the run (guards
//! that kill, unmount by closing, and remove on drop), whether the run ends, is killed, or
//! the caller drops the future (the cancel pipe closes).

use std::ffi::{CStr, CString, OsStr};
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use nix::sys::signal::{SigSet, SigmaskHow, pthread_sigmask};
use nix::sys::socket::{AddressFamily, SockFlag, SockType, socketpair};

use super::cgroup::{Hierarchies, LimitMechanism, RunCgroup};
use super::child::{
    self, ChildSpec, Decoy, IdMaps, LandlockSpec, MirrorEntry, Reopen, Step, ViewSpec,
};
use super::policy::{LandlockInputs, landlock_ruleset, seccomp_filters};
use super::prepare::{
    Mirror, check_reachable, check_scratch_root, cstring, env, launch_error, lift, mirror, prepare,
    refused, sealed_copy, unavailable,
};
use super::scratch::RunDir;
use super::supervise::{Child, Facts, Pipes, classify, supervise, wait_readable};
use super::sys::{self, Namespaces};
use super::watch::Observer;
use super::{Enforcement, Outcome, SandboxRequest, Status, Tier, Usage};

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

/// Stages the input files in a scratch directory the parent made (runs without a private
/// view): `inputs/` beneath `home`'s descriptor, files made exclusively without following
/// links, then every mode set read-only through its descriptor.
fn stage_inputs(home: BorrowedFd<'_>, files: &[super::InputFile]) -> Result<(), Status> {
    use nix::fcntl::{OFlag, openat};
    use nix::sys::stat::{Mode, fchmod, mkdirat};
    if files.is_empty() {
        return Ok(());
    }
    let failed = |e: nix::errno::Errno| launch_error(format!("staging the input files: {e}"));
    mkdirat(home, "inputs", Mode::S_IRWXU).map_err(failed)?;
    let dir_flags = OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC;
    let dir = openat(home, "inputs", dir_flags, Mode::empty()).map_err(failed)?;
    let file_flags =
        OFlag::O_CREAT | OFlag::O_EXCL | OFlag::O_WRONLY | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC;
    for input in files {
        let fd = openat(&dir, input.name.as_str(), file_flags, Mode::S_IRUSR).map_err(failed)?;
        let mut file = std::fs::File::from(fd);
        std::io::Write::write_all(&mut file, &input.bytes)
            .map_err(|e| launch_error(format!("staging the input files: {e}")))?;
        fchmod(&file, Mode::from_bits_truncate(0o444)).map_err(failed)?;
    }
    fchmod(&dir, Mode::from_bits_truncate(0o555)).map_err(failed)?;
    Ok(())
}

fn pipe() -> Result<(OwnedFd, OwnedFd), Status> {
    let (read, write) = nix::unistd::pipe2(nix::fcntl::OFlag::O_CLOEXEC)
        .map_err(|e| launch_error(format!("pipe: {e}")))?;
    Ok((lift(read)?, lift(write)?))
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
    let has_view = isolated || (tier == Tier::RlimitsOnly && plan.root);
    if config.observe && !isolated {
        return Err(unavailable(
            "observation needs an isolated tier (its network namespace cuts what observed sockets could reach); refusing to observe on rlimits_only",
        ));
    }
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
    check_scratch_root(&scratch_root)?;
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
    let ruleset = match landlock.as_ref().map(|l| l.ruleset.try_clone()) {
        Some(Ok(fd)) => Some(lift(fd)?),
        Some(Err(e)) => return Err(launch_error(format!("Landlock ruleset: {e}"))),
        None => None,
    };
    let filters = seccomp_filters(config, memory.is_some()).map_err(unavailable)?;
    // The script: in the private view, a file of the mirror; without one, a sealed memfd.
    let view_mirror: Option<Mirror> = match (&prepared.script, has_view) {
        (Some((parts, _)), true) => Some(mirror(
            &prepared.skill_root,
            prepared.skill_fd.as_fd(),
            parts,
        )?),
        _ => None,
    };
    let memfd = match (&prepared.script, has_view) {
        (Some((_, opened)), false) => {
            Some(lift(sealed_copy(&opened.bytes).map_err(launch_error)?)?)
        }
        _ => None,
    };
    let home = run_dir.home_path();
    let plain_home = if has_view {
        None
    } else {
        let home = lift(run_dir.make_home().map_err(launch_error)?)?;
        stage_inputs(home.as_fd(), &request.input_files)?;
        Some(home)
    };
    // In the private view the child writes them onto its tmpfs (`home/inputs/<name>`).
    let input_paths: Vec<CString> = request
        .input_files
        .iter()
        .map(|f| {
            let mut path = child::INPUTS_DIR.to_bytes().to_vec();
            path.push(b'/');
            path.extend_from_slice(f.name.as_bytes());
            cstring(&path)
        })
        .collect::<Result<_, _>>()?;
    let view_inputs: Vec<(&CStr, &[u8])> = input_paths
        .iter()
        .zip(&request.input_files)
        .map(|(path, f)| (path.as_c_str(), f.bytes.as_slice()))
        .collect();
    // Observation's decoy credentials, written by the child into `home/`.
    let canary = super::observe::canary();
    let decoy_paths: Vec<(CString, Option<Vec<u8>>)> = if config.observe {
        super::observe::decoy_entries(&canary)
            .into_iter()
            .map(|(path, body)| {
                let path = format!("home/{}", path.trim_end_matches('/'));
                Ok((cstring(path.as_bytes())?, body))
            })
            .collect::<Result<_, Status>>()?
    } else {
        Vec::new()
    };
    let decoys: Vec<Decoy<'_>> = decoy_paths
        .iter()
        .map(|(path, body)| match body {
            Some(bytes) => Decoy::File(path, bytes),
            None => Decoy::Dir(path),
        })
        .collect();
    let mirror_root = run_dir.path().join("skill");
    let script_arg: Option<PathBuf> = match (&view_mirror, &memfd) {
        (Some(m), _) => Some(run_dir.path().join(OsStr::from_bytes(m.script.as_bytes()))),
        (None, Some(fd)) => Some(PathBuf::from(format!("/proc/self/fd/{}", fd.as_raw_fd()))),
        (None, None) => None,
    };
    let skill_dir_env = if view_mirror.is_some() {
        mirror_root.as_os_str()
    } else {
        prepared.skill_root.as_os_str()
    };
    let mut argv_c = vec![cstring(prepared.program.as_os_str().as_bytes())?];
    for arg in &prepared.fixed_args {
        argv_c.push(cstring(arg.as_bytes())?);
    }
    if let Some(arg) = &script_arg {
        argv_c.push(cstring(arg.as_os_str().as_bytes())?);
    }
    for arg in &request.args {
        argv_c.push(cstring(arg.as_bytes())?);
    }
    let envp_c = [
        env("PATH", OsStr::new("/usr/bin:/bin"))?,
        env("HOME", home.as_os_str())?,
        env("TMPDIR", home.as_os_str())?,
        env("LANG", OsStr::new("C.UTF-8"))?,
        env("SKILL_DIR", skill_dir_env)?,
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
    let own_uid = nix::unistd::getuid().as_raw();
    let own_gid = nix::unistd::getgid().as_raw();
    let uid_map = format!("{own_uid} {own_uid} 1\n");
    let gid_map = format!("{own_gid} {own_gid} 1\n");
    let size = cstring(config.max_scratch_bytes.max(4096).to_string().as_bytes())?;
    let inodes = cstring(
        (config.max_scratch_bytes / 4096)
            .max(1024)
            .to_string()
            .as_bytes(),
    )?;
    let tmpfs = [
        (c"size", size.as_c_str()),
        (c"nr_inodes", inodes.as_c_str()),
        (c"mode", c"0755"),
    ];
    let run_dir_c = cstring(run_dir.path().as_os_str().as_bytes())?;
    let run_dir_fd = lift(run_dir.fd_clone().map_err(launch_error)?)?;
    let mirror_entries: Vec<MirrorEntry<'_>> = view_mirror
        .iter()
        .flat_map(|m| m.entries.iter())
        .map(|(path, target)| match target {
            Some(target) => MirrorEntry::Link { path, target },
            None => MirrorEntry::Dir(path),
        })
        .collect();
    let (stdin_read, stdin_write) = pipe()?;
    let (stdout_read, stdout_write) = pipe()?;
    let (stderr_read, stderr_write) = pipe()?;
    let (report, report_child) = socketpair(
        AddressFamily::Unix,
        SockType::SeqPacket,
        None,
        SockFlag::SOCK_CLOEXEC,
    )
    .map_err(|e| launch_error(format!("socketpair: {e}")))?;
    let report_child = lift(report_child)?;
    let procs = match &cgroup {
        Some(c) => c.procs_fds().map_err(launch_error)?,
        None => Vec::new(),
    };
    let procs_raw: Vec<i32> = procs.iter().map(AsRawFd::as_raw_fd).collect();
    let programs: Vec<&[libc::sock_filter]> = filters.programs.iter().map(Vec::as_slice).collect();
    let namespaces = Namespaces {
        user: tier == Tier::UserNamespace,
        mount: has_view,
        pid: isolated,
        net: isolated && config.network == super::Network::Disabled,
        ipc: isolated,
        uts: isolated,
    };
    let spec = ChildSpec {
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
        cgroup_procs: &procs_raw,
        view: has_view.then_some(ViewSpec {
            run_dir: Reopen {
                fd: run_dir_fd.as_raw_fd(),
                path: &run_dir_c,
            },
            tmpfs: &tmpfs,
            home_owner: plan.uid.map(|uid| (uid, uid)),
            mirror: &mirror_entries,
            script: view_mirror
                .as_ref()
                .zip(prepared.script.as_ref())
                .map(|(m, (_, opened))| (m.script.as_c_str(), opened.bytes.as_slice())),
            inputs: &view_inputs,
            decoys: &decoys,
        }),
        workdir: plain_home.as_ref().map_or(-1, AsRawFd::as_raw_fd),
        rlimits: &rlimits,
        last_cap: (plan.root || tier == Tier::UserNamespace).then_some(plan.last_cap),
        become_user: plan.uid.map(|uid| (uid, uid)),
        landlock: landlock
            .as_ref()
            .zip(ruleset.as_ref())
            .map(|(l, fd)| LandlockSpec {
                ruleset: fd.as_raw_fd(),
                home_access: l.home_access,
                mirror_access: l.mirror_access,
                script_access: l.script_access,
            }),
        filters: &programs,
        exec_filter: filters.exec.as_deref(),
        listener_by_number: config.observe,
        keep_fd: memfd.as_ref().map(AsRawFd::as_raw_fd),
        program: &program_c,
        argv: &argv,
        envp: &envp,
    };
    // No signal reaches the child before it has reset its dispositions (a host handler
    // must not run in the copy).
    let mut mask = SigSet::empty();
    let _ = pthread_sigmask(
        SigmaskHow::SIG_SETMASK,
        Some(&SigSet::all()),
        Some(&mut mask),
    );
    let spawned = sys::spawn(&spec, namespaces);
    let _ = pthread_sigmask(SigmaskHow::SIG_SETMASK, Some(&mask), None);
    let (pid, pidfd) = spawned.map_err(|e| {
        unavailable(format!(
            "cannot create the run's process and namespaces: {e}"
        ))
    })?;
    let mut child = Child::new(pid, pidfd, !namespaces.pid);
    drop((
        stdin_read,
        stdout_write,
        stderr_write,
        report_child,
        ruleset,
    ));
    drop((landlock, run_dir_fd, procs, plain_home));
    let deadline = started + config.timeout;
    let launched = handshake(&mut child, &report, &cancel, deadline)?;
    if config.observe && launched.listener.is_none() {
        return Err(unavailable("the observation listener was not passed"));
    }
    drop(report);
    let seen = supervise(
        &mut child,
        Pipes {
            stdin: stdin_write,
            stdin_bytes: request.stdin.clone(),
            stdout: stdout_read,
            stderr: stderr_read,
            cancel,
            listener: launched.listener,
            observer: config
                .observe
                .then(|| Observer::new(home.clone(), canary, config.can_execute_code)),
        },
        cgroup.as_ref(),
        deadline,
        config.cpu_time,
        config.max_output_bytes,
    );
    let stats = cgroup.as_ref().map(RunCgroup::stats).unwrap_or_default();
    let tmpfs_root = launched.tmpfs;
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
            memory_full: stats
                .peak_memory_bytes
                .is_some_and(|peak| peak >= config.memory_bytes),
            scratch_full,
        },
    );
    let mut run_dir = run_dir;
    let kept = request.keep_scratch.then(|| {
        let home = tmpfs_root.as_ref().and_then(|root| {
            nix::fcntl::openat(
                root,
                c"home",
                nix::fcntl::OFlag::O_RDONLY
                    | nix::fcntl::OFlag::O_DIRECTORY
                    | nix::fcntl::OFlag::O_NOFOLLOW
                    | nix::fcntl::OFlag::O_CLOEXEC,
                nix::sys::stat::Mode::empty(),
            )
            .ok()
        });
        run_dir.keep(home.as_ref().map(AsFd::as_fd), config.max_scratch_bytes)
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
        scratch_bytes: has_view.then_some(config.max_scratch_bytes),
        exec_blocked: !config.can_execute_code,
    };
    outcome.usage = Usage {
        peak_memory_bytes: stats.peak_memory_bytes,
        task_limit_reached: stats.task_limit_hits > 0,
        scratch_full,
    };
    outcome.scratch_dir = kept;
    outcome.observed = config.observe;
    outcome.observations = seen.observations;
    outcome.observations_dropped = seen.observations_dropped;
    Ok(outcome)
}

/// What the handshake hands to supervision.
struct Launched {
    tmpfs: Option<OwnedFd>,
    listener: Option<OwnedFd>,
}

/// Reads the child's reports until it has executed the program (the report socket closes
/// on exec): its tmpfs, its liveness, its exec listener (the launch's `execve` let
/// through), or a failure.
fn handshake(
    child: &mut Child,
    report: &OwnedFd,
    cancel: &OwnedFd,
    deadline: Instant,
) -> Result<Launched, Status> {
    let mut launched = Launched {
        tmpfs: None,
        listener: None,
    };
    let give_up = |child: &mut Child, status: Status| {
        child.kill();
        let _ = child.reap(true);
        Err(status)
    };
    loop {
        if !wait_readable(report.as_fd(), cancel.as_fd(), deadline) {
            return give_up(child, Status::Timeout);
        }
        let (message, fd) = match sys::recv_report(report.as_fd()) {
            Ok(received) => received,
            Err(e) => return give_up(child, launch_error(format!("the launch report: {e}"))),
        };
        let Some(message) = message else {
            return Ok(launched); // closed on exec (or the child died: supervision sees it)
        };
        match message[0] {
            child::REPORT_MOUNT => launched.tmpfs = fd,
            child::REPORT_ALIVE => {}
            kind @ (child::REPORT_LISTENER | child::REPORT_LISTENER_NUMBER) => {
                let listener = if kind == child::REPORT_LISTENER_NUMBER {
                    // Observation: taken from the child (its sendmsg is routed to this very
                    // listener), then acknowledged so that it may close its copy.
                    let number =
                        i32::from_le_bytes([message[4], message[5], message[6], message[7]]);
                    let taken = sys::pidfd_getfd(child.pidfd.as_fd(), number)
                        .map_err(|e| format!("taking the observation listener: {e}"))
                        .and_then(|fd| lift(fd).map_err(|_| "lifting the listener".to_owned()));
                    let acked = nix::unistd::write(report, &[1u8]).is_ok();
                    match taken {
                        Ok(fd) if acked => Some(fd),
                        Ok(_) => None,
                        Err(e) => return give_up(child, unavailable(e)),
                    }
                } else {
                    fd
                };
                let Some(listener) = listener else {
                    return give_up(child, launch_error("the exec listener was not passed"));
                };
                if !wait_readable(listener.as_fd(), cancel.as_fd(), deadline) {
                    return give_up(child, Status::Timeout);
                }
                match sys::answer_exec(listener.as_fd(), true) {
                    Ok(nr) if nr == libc::SYS_execve => {}
                    Ok(_) | Err(_) => {
                        return give_up(
                            child,
                            launch_error("the launch's exec was not the expected call"),
                        );
                    }
                }
                launched.listener = Some(listener);
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
        (Step::RunDir, _) => {
            refused("the run's scratch directory was replaced before the launch; nothing ran")
        }
        (Step::Mirror | Step::ScriptCopy | Step::Home, libc::ENOSPC) => launch_error(format!(
            "{}: the scratch space is too small for the skill's mirror",
            step.describe()
        )),
        _ if step.is_isolation() => unavailable(format!("{}: {error}", step.describe())),
        _ => launch_error(format!("{}: {error}", step.describe())),
    }
}
