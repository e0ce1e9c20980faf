//! What a run may touch: the Landlock ruleset (filesystem view, TCP, scoping) and the
//! seccomp programs (the deny-list, the `clone` rules that separate threads from processes,
//! the socket rules, and the exec filter), built in the parent before the launch.
//!
//! Threat: a script reading or writing outside its skill and scratch directories, starting
//! programs when its trust level says it may not (the dynamic loader included: `ld.so
//! /usr/bin/id` needs no Execute right on `id`), reaching the network, or using kernel
//! interfaces no script needs. Guarantee: the ruleset handles every filesystem right of the
//! ABI in force (fully enforced, never best-effort), and grants read on system directories,
//! read on the skill (or only the script), and the scratch rights on the run's own tmpfs.
//! When the config forbids other programs, seccomp refuses `fork`, `vfork` and `clone`
//! without `CLONE_THREAD` (so threads work, processes do not), answers `clone3` with
//! `ENOSYS` (libc falls back to `clone`, whose flags a filter can read), and routes
//! `execve`/`execveat` to a listener the supervisor keeps for the whole run: it lets the
//! launch's own `execve` through and answers every later one `EPERM`. A script cannot add
//! a listener of its own (the kernel allows one per task, and `seccomp` with the listener
//! flag is refused).

use std::collections::BTreeMap;
use std::os::fd::{AsFd, OwnedFd};
use std::path::PathBuf;

use landlock::{
    ABI, Access, AccessFs, AccessNet, BitFlags, CompatLevel, Compatible, PathBeneath, PathFd,
    Ruleset, RulesetAttr, RulesetCreatedAttr, Scope,
};
use seccompiler::{
    SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter, SeccompRule,
    TargetArch,
};

use super::{Network, SandboxConfig};

/// Read-only system locations (read and list; execute only when the config lets the
/// script run other programs).
pub(crate) const SYSTEM_DIRS: &[&str] = &["/usr", "/bin", "/sbin", "/lib", "/lib64", "/lib32"];
/// Single system files interpreters read.
const SYSTEM_FILES: &[&str] = &[
    "/etc/ld.so.cache",
    "/etc/localtime",
    "/etc/passwd",
    "/etc/group",
    "/etc/nsswitch.conf",
    // Node's OpenSSL reads its configuration at start-up and exits when it cannot; the
    // file holds no secret (keys live elsewhere under /etc/ssl, which stays unreadable).
    "/etc/ssl/openssl.cnf",
];
/// Devices a script may read and write.
const DEVICES: &[&str] = &[
    "/dev/null",
    "/dev/zero",
    "/dev/full",
    "/dev/random",
    "/dev/urandom",
];
/// The dynamic loaders the launch's `execve` maps (they need Execute for that).
const LOADERS: &[&str] = &[
    "/lib64/ld-linux-x86-64.so.2",
    "/lib/ld-linux-aarch64.so.1",
    "/lib/ld-linux-x86-64.so.2",
    "/lib/ld-linux.so.2",
];

/// The newest Landlock ABI this build knows how to request.
pub(crate) const NEWEST_LANDLOCK_ABI: u8 = 7;

/// The smallest Landlock ABI a run's guarantees need: 3 (filesystem rights including
/// truncate) when the network is off, since the network namespace and the socket filter
/// then cover TCP and abstract unix sockets, and the pid namespace covers signals; 6
/// (scoping of abstract unix sockets and signals) when the network is allowed and there is
/// no network namespace.
pub(crate) fn minimum_landlock_abi(config: &SandboxConfig) -> u8 {
    match config.network {
        Network::Disabled => 3,
        Network::Allowed(_) => 6,
    }
}

fn abi(version: u8) -> ABI {
    match version {
        0 => ABI::Unsupported,
        1 => ABI::V1,
        2 => ABI::V2,
        3 => ABI::V3,
        4 => ABI::V4,
        5 => ABI::V5,
        6 => ABI::V6,
        _ => ABI::V7,
    }
}

/// A ruleset ready for the child, with the rights it adds itself on the run's tmpfs.
pub(crate) struct Landlock {
    pub ruleset: OwnedFd,
    /// On `home/`, the scratch directory.
    pub home_access: u64,
    /// On the skill mirror (0 when the skill may not be read beyond its script).
    pub mirror_access: u64,
    /// On the approved script's copy.
    pub script_access: u64,
}

/// What the ruleset needs from the run.
pub(crate) struct LandlockInputs<'a> {
    pub config: &'a SandboxConfig,
    /// The skill root, opened once (readable when `can_read_files`).
    pub skill_root: &'a OwnedFd,
    /// The programs the launch executes (the interpreter or system program).
    pub program: &'a std::path::Path,
}

/// Builds the ruleset at `version` with every right of that ABI handled and fully
/// enforced; the scratch and script rules are added by the child on the new mounts.
pub(crate) fn landlock_ruleset(
    inputs: &LandlockInputs<'_>,
    version: u8,
) -> Result<Landlock, String> {
    let abi = abi(version);
    let err = |e: &dyn std::fmt::Display| format!("Landlock: {e}");
    let config = inputs.config;
    let mut ruleset = Ruleset::default()
        .set_compatibility(CompatLevel::HardRequirement)
        .handle_access(AccessFs::from_all(abi))
        .map_err(|e| err(&e))?;
    if config.network == Network::Disabled && version >= 4 {
        ruleset = ruleset
            .handle_access(AccessNet::from_all(abi))
            .map_err(|e| err(&e))?;
    }
    if version >= 6 {
        ruleset = ruleset.scope(Scope::from_all(abi)).map_err(|e| err(&e))?;
    }
    let mut created = ruleset.create().map_err(|e| err(&e))?;
    let read_dir = AccessFs::ReadFile | AccessFs::ReadDir;
    let file = AccessFs::from_file(abi);
    let mut rules: Vec<(PathBuf, BitFlags<AccessFs>)> = Vec::new();
    for dir in SYSTEM_DIRS {
        let access = if config.can_execute_code {
            read_dir | AccessFs::Execute
        } else {
            read_dir
        };
        rules.push((PathBuf::from(dir), access));
    }
    for path in SYSTEM_FILES {
        rules.push((PathBuf::from(path), AccessFs::ReadFile.into()));
    }
    for path in LOADERS
        .iter()
        .map(PathBuf::from)
        .chain([inputs.program.to_path_buf()])
    {
        if let Ok(canonical) = path.canonicalize() {
            rules.push((canonical, AccessFs::ReadFile | AccessFs::Execute));
        }
    }
    let device = AccessFs::ReadFile | AccessFs::WriteFile | AccessFs::Truncate | AccessFs::IoctlDev;
    for dev in DEVICES {
        rules.push((PathBuf::from(dev), device & file));
    }
    for (path, access) in rules {
        let Ok(fd) = PathFd::new(&path) else {
            continue; // absent on this system (e.g. /lib32)
        };
        let access = if path.is_dir() { access } else { access & file };
        created = created
            .add_rule(PathBeneath::new(fd, access))
            .map_err(|e| err(&e))?;
    }
    if config.can_read_files {
        created = created
            .add_rule(PathBeneath::new(inputs.skill_root.as_fd(), read_dir))
            .map_err(|e| err(&e))?;
    }
    let home = if config.can_write_files {
        AccessFs::from_all(abi) & !AccessFs::Execute
    } else {
        read_dir
    };
    let ruleset: Option<OwnedFd> = created.into();
    let ruleset = ruleset.ok_or_else(|| "Landlock: no ruleset was created".to_owned())?;
    Ok(Landlock {
        ruleset,
        home_access: home.bits(),
        mirror_access: if config.can_read_files {
            read_dir.bits()
        } else {
            0
        },
        script_access: BitFlags::<AccessFs>::from(AccessFs::ReadFile).bits(),
    })
}

/// Syscalls no script needs and the design note denies: tracing other processes, kernel
/// attack surface (bpf, perf, io_uring, userfaultfd, keyrings), mounts, modules, kexec,
/// accounting, swap, reboot, handle-based opens, namespaces.
fn denied_syscalls() -> Vec<i64> {
    vec![
        libc::SYS_ptrace,
        libc::SYS_process_vm_readv,
        libc::SYS_process_vm_writev,
        libc::SYS_bpf,
        libc::SYS_perf_event_open,
        libc::SYS_keyctl,
        libc::SYS_add_key,
        libc::SYS_request_key,
        libc::SYS_io_uring_setup,
        libc::SYS_io_uring_enter,
        libc::SYS_io_uring_register,
        libc::SYS_userfaultfd,
        libc::SYS_mount,
        libc::SYS_umount2,
        libc::SYS_pivot_root,
        libc::SYS_chroot,
        libc::SYS_fsopen,
        libc::SYS_fsconfig,
        libc::SYS_fsmount,
        libc::SYS_fspick,
        libc::SYS_move_mount,
        libc::SYS_open_tree,
        libc::SYS_mount_setattr,
        libc::SYS_kexec_load,
        libc::SYS_kexec_file_load,
        libc::SYS_init_module,
        libc::SYS_finit_module,
        libc::SYS_delete_module,
        libc::SYS_acct,
        libc::SYS_swapon,
        libc::SYS_swapoff,
        libc::SYS_reboot,
        libc::SYS_syslog,
        libc::SYS_open_by_handle_at,
        libc::SYS_name_to_handle_at,
        libc::SYS_quotactl,
        libc::SYS_pidfd_getfd,
        libc::SYS_unshare,
        libc::SYS_setns,
    ]
}

const NAMESPACE_FLAGS: [u64; 7] = [
    libc::CLONE_NEWUSER as u64,
    libc::CLONE_NEWNS as u64,
    libc::CLONE_NEWPID as u64,
    libc::CLONE_NEWNET as u64,
    libc::CLONE_NEWIPC as u64,
    libc::CLONE_NEWUTS as u64,
    libc::CLONE_NEWCGROUP as u64,
];

/// The seccomp programs of a run, in installation order, and the exec filter when the
/// config forbids other programs.
pub(crate) struct Filters {
    pub programs: Vec<Vec<libc::sock_filter>>,
    pub exec: Option<Vec<libc::sock_filter>>,
}

fn to_libc(program: seccompiler::BpfProgram) -> Vec<libc::sock_filter> {
    program
        .into_iter()
        .map(|i| libc::sock_filter {
            code: i.code,
            jt: i.jt,
            jf: i.jf,
            k: i.k,
        })
        .collect()
}

/// The architecture a filter accepts; every other one (the 32-bit ABI included) kills.
#[cfg(target_arch = "x86_64")]
const AUDIT_ARCH: u32 = 0xc000_003e;
#[cfg(target_arch = "aarch64")]
const AUDIT_ARCH: u32 = 0xc000_00b7;
/// x32 system calls share x86_64's audit architecture with this bit set in the number; a
/// deny-list keyed on x86_64 numbers would not see them.
#[cfg(target_arch = "x86_64")]
const X32_SYSCALL_BIT: u32 = 0x4000_0000;
#[cfg(not(target_arch = "x86_64"))]
const X32_SYSCALL_BIT: u32 = 0;

fn stmt(code: u16, k: u32) -> libc::sock_filter {
    libc::sock_filter {
        code,
        jt: 0,
        jf: 0,
        k,
    }
}

fn jump(code: u16, k: u32, jt: u8, jf: u8) -> libc::sock_filter {
    libc::sock_filter { code, jt, jf, k }
}

const LD_W_ABS: u16 = (libc::BPF_LD | libc::BPF_W | libc::BPF_ABS) as u16;
const JEQ_K: u16 = (libc::BPF_JMP | libc::BPF_JEQ | libc::BPF_K) as u16;
const JSET_K: u16 = (libc::BPF_JMP | libc::BPF_JSET | libc::BPF_K) as u16;
const RET_K: u16 = (libc::BPF_RET | libc::BPF_K) as u16;
/// `seccomp_data.nr` and `.arch` offsets.
const NR: u32 = 0;
const ARCH: u32 = 4;

/// The calls an observed run routes to the listener: programs started, network calls
/// (answered without being made) and opens (continued: Landlock decides).
pub(crate) fn observed_calls() -> Vec<i64> {
    let mut calls = vec![
        libc::SYS_execve,
        libc::SYS_execveat,
        libc::SYS_connect,
        libc::SYS_sendto,
        libc::SYS_sendmsg,
        libc::SYS_sendmmsg,
        libc::SYS_openat,
        libc::SYS_openat2,
    ];
    #[cfg(target_arch = "x86_64")]
    calls.extend([libc::SYS_open, libc::SYS_creat]);
    calls
}

/// Kills on a foreign architecture and on x32 numbers; routes the `routes` calls to the
/// user-notification listener (none: allows everything else).
fn guard_filter(routes: &[i64]) -> Vec<libc::sock_filter> {
    let kill = libc::SECCOMP_RET_KILL_PROCESS;
    let allow = libc::SECCOMP_RET_ALLOW;
    let mut program = vec![
        stmt(LD_W_ABS, ARCH),
        jump(JEQ_K, AUDIT_ARCH, 1, 0),
        stmt(RET_K, kill),
        stmt(LD_W_ABS, NR),
    ];
    if X32_SYSCALL_BIT != 0 {
        program.push(jump(JSET_K, X32_SYSCALL_BIT, 0, 1));
        program.push(stmt(RET_K, kill));
    }
    let n = routes.len().min(200);
    for (i, nr) in routes.iter().take(n).enumerate() {
        let nr = u32::try_from(*nr).unwrap_or(u32::MAX);
        // Past the remaining jumps and the allow: the notification return.
        let to_notify = u8::try_from(n - i).unwrap_or(u8::MAX);
        program.push(jump(JEQ_K, nr, to_notify, 0));
    }
    program.push(stmt(RET_K, allow));
    if n > 0 {
        program.push(stmt(RET_K, libc::SECCOMP_RET_USER_NOTIF));
    }
    program
}

/// The seccomp programs for `config`: the deny-list (`EPERM`, with the socket and `clone`
/// rules, and `memfd_create` when no cgroup holds memory: `RLIMIT_AS` does not see an
/// in-memory file's pages), `clone3` answered `ENOSYS`, the architecture guard, and, when
/// the config forbids other programs, the exec filter.
pub(crate) fn seccomp_filters(
    config: &SandboxConfig,
    memory_by_cgroup: bool,
) -> Result<Filters, String> {
    let err = |e: &dyn std::fmt::Display| format!("seccomp: {e}");
    let arch = TargetArch::try_from(std::env::consts::ARCH).map_err(|e| err(&e))?;
    let cond = |arg: u8, op: SeccompCmpOp, value: u64| {
        SeccompCondition::new(arg, SeccompCmpArgLen::Qword, op, value).map_err(|e| err(&e))
    };
    let rule = |conditions| SeccompRule::new(conditions).map_err(|e| err(&e));
    let mut rules: BTreeMap<i64, Vec<SeccompRule>> = BTreeMap::new();
    for sys in denied_syscalls() {
        rules.insert(sys, Vec::new());
    }
    if !memory_by_cgroup {
        // Pages RLIMIT_AS never counts: in-memory files, and System V segments touched
        // through a mapping that is then detached.
        for sys in [libc::SYS_memfd_create, libc::SYS_shmget, libc::SYS_shmat] {
            rules.insert(sys, Vec::new());
        }
    }
    // A second listener would let the script answer its own exec notifications (the
    // kernel allows one per task, and the supervisor keeps the first anyway).
    let listener = libc::SECCOMP_FILTER_FLAG_NEW_LISTENER;
    rules.insert(
        libc::SYS_seccomp,
        vec![rule(vec![cond(
            1,
            SeccompCmpOp::MaskedEq(listener),
            listener,
        )?])?],
    );
    let mut clone_rules = Vec::new();
    for flag in NAMESPACE_FLAGS {
        clone_rules.push(rule(vec![cond(0, SeccompCmpOp::MaskedEq(flag), flag)?])?);
    }
    if !config.can_execute_code {
        // A new process is a clone without CLONE_THREAD; threads keep working.
        let thread = libc::CLONE_THREAD as u64;
        clone_rules.push(rule(vec![cond(0, SeccompCmpOp::MaskedEq(thread), 0)?])?);
        #[cfg(target_arch = "x86_64")]
        {
            rules.insert(libc::SYS_fork, Vec::new());
            rules.insert(libc::SYS_vfork, Vec::new());
        }
    }
    rules.insert(libc::SYS_clone, clone_rules);
    match &config.network {
        // Observed runs get IPv4 and IPv6 sockets so their connects and sends can be seen:
        // each is answered without being made, and the network namespace (observation
        // needs an isolated tier) has no interface up either way.
        Network::Disabled if !config.observe => {
            rules.insert(libc::SYS_socket, Vec::new());
        }
        Network::Disabled | Network::Allowed(_) => {
            // IPv4 and IPv6 only: not unix sockets (a path-named one, such as a session
            // bus, reaches services outside the sandbox; Landlock does not cover
            // connecting to it), not raw packets or netlink. `socketpair` stays.
            let families = rule(vec![
                cond(0, SeccompCmpOp::Ne, libc::AF_INET as u64)?,
                cond(0, SeccompCmpOp::Ne, libc::AF_INET6 as u64)?,
            ])?;
            rules.insert(libc::SYS_socket, vec![families]);
        }
    }
    let deny = SeccompFilter::new(
        rules,
        SeccompAction::Allow,
        SeccompAction::Errno(libc::EPERM as u32),
        arch,
    )
    .map_err(|e| err(&e))?;
    let clone3 = SeccompFilter::new(
        BTreeMap::from([(libc::SYS_clone3, Vec::new())]),
        SeccompAction::Allow,
        SeccompAction::Errno(libc::ENOSYS as u32),
        arch,
    )
    .map_err(|e| err(&e))?;
    let deny: seccompiler::BpfProgram = deny.try_into().map_err(|e| err(&e))?;
    let clone3: seccompiler::BpfProgram = clone3.try_into().map_err(|e| err(&e))?;
    let mut programs = vec![to_libc(deny), to_libc(clone3)];
    let exec = if config.observe {
        Some(guard_filter(&observed_calls()))
    } else if config.can_execute_code {
        programs.push(guard_filter(&[]));
        None
    } else {
        Some(guard_filter(&[libc::SYS_execve, libc::SYS_execveat]))
    };
    Ok(Filters { programs, exec })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_filters_compile_for_every_preset() -> Result<(), String> {
        let strict = seccomp_filters(&SandboxConfig::strict(), true)?;
        assert_eq!(strict.programs.len(), 2);
        assert!(strict.exec.is_some(), "strict forbids other programs");
        let open = SandboxConfig::strict()
            .with_network(Network::Allowed(vec!["*".into()]))
            .with_permissions(true, true, true);
        let open = seccomp_filters(&open, false)?;
        assert_eq!(open.programs.len(), 3);
        assert!(open.exec.is_none());
        Ok(())
    }

    #[test]
    fn the_guard_kills_foreign_architectures_and_routes_exec() {
        let guard = guard_filter(&[libc::SYS_execve, libc::SYS_execveat]);
        assert_eq!(guard[0].k, ARCH);
        assert_eq!(guard[1].k, AUDIT_ARCH);
        assert_eq!(guard[2].k, libc::SECCOMP_RET_KILL_PROCESS);
        assert_eq!(
            guard.last().map(|i| i.k),
            Some(libc::SECCOMP_RET_USER_NOTIF)
        );
    }

    #[test]
    fn observation_routes_network_and_file_calls_and_keeps_the_socket_rule() -> Result<(), String> {
        let observed = SandboxConfig::detonation();
        let filters = seccomp_filters(&observed, true)?;
        let guard = filters
            .exec
            .ok_or("observation installs the listener filter")?;
        for nr in observed_calls() {
            let nr = u32::try_from(nr).map_err(|e| e.to_string())?;
            assert!(
                guard.iter().any(|i| i.code == JEQ_K && i.k == nr),
                "call {nr} is routed"
            );
        }
        // The deny-list is unchanged apart from the socket family rule: the same length
        // as a run with the network allowed, which has the same family rule.
        let allowed = SandboxConfig::detonation()
            .with_observation(false)
            .with_network(Network::Allowed(vec!["*".into()]));
        let allowed = seccomp_filters(&allowed, true)?;
        assert_eq!(filters.programs[0].len(), allowed.programs[0].len());
        let off = seccomp_filters(&SandboxConfig::detonation().with_observation(false), true)?;
        assert!(off.exec.is_none(), "without observation nothing is routed");
        Ok(())
    }

    #[test]
    fn the_minimum_abi_follows_the_network() {
        let off = SandboxConfig::strict();
        assert_eq!(minimum_landlock_abi(&off), 3);
        let on = off.with_network(Network::Allowed(vec!["*".into()]));
        assert_eq!(minimum_landlock_abi(&on), 6);
    }
}
