//! The launch chain of [`ProcessSandbox`](super::ProcessSandbox).
//!
//! `unsafe` is forbidden in this workspace, so nothing runs between `fork` and `exec` in our
//! own code (`pre_exec` is unsafe), and a library cannot count on re-executing its host's
//! binary. The chain therefore uses two safe mechanisms:
//!
//! 1. **A confinement thread.** Namespaces (`unshare` of pid, net, ipc, uts), Landlock and
//!    seccomp filters are attributes of a *thread*, inherited by the children that thread
//!    forks. A dedicated, short-lived OS thread (never a pool thread) applies them to itself
//!    through safe wrappers (`nix`, `landlock`, `seccompiler`), spawns the chain, and stays
//!    parked until the run ends so the parent-death signal fires if the host dies. The
//!    rest of the host is untouched.
//! 2. **util-linux tools, each exec'ing the next** (argv arrays, no shell): `setpriv`
//!    (root hosts: a fresh unprivileged uid/gid, no supplementary groups, empty capability
//!    sets and bounding set, parent-death `SIGKILL`), or `unshare` (non-root hosts: a user
//!    namespace with pid/net/ipc/uts and `--fork`, since a multi-threaded host cannot enter
//!    a user namespace itself); then `prlimit` (CPU, file size, open files, core 0, data
//!    segment, and processes, set after the uid change so it counts only this run), then the
//!    interpreter.
//!
//! bubblewrap is not used: Landlock forbids a landlocked process to mount, so a mount view
//! cannot be built after our Landlock domain exists, and building it first as root is
//! exactly the configuration the design note saw fail. Landlock gives the filesystem view
//! instead (see [`landlock_rules`]).

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::PathBuf;

use landlock::{
    ABI, Access, AccessFs, AccessNet, BitFlags, LandlockStatus, PathBeneath, PathFd, Ruleset,
    RulesetAttr, RulesetCreatedAttr, RulesetStatus, Scope,
};
use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter,
    SeccompRule, TargetArch,
};

use super::{Network, SandboxConfig, Tier};

/// Absolute paths of the tools the chain uses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Tools {
    pub setpriv: Option<PathBuf>,
    pub unshare: Option<PathBuf>,
    pub prlimit: Option<PathBuf>,
    pub setsid: Option<PathBuf>,
}

/// The directories searched for tools and interpreters (the sandbox's own `PATH`).
pub(crate) const SYSTEM_PATH: &[&str] = &["/usr/bin", "/bin", "/usr/sbin", "/sbin"];

/// Finds `name` in `dirs` (never the host's `PATH`).
pub(crate) fn which(dirs: &[PathBuf], name: &str) -> Option<PathBuf> {
    dirs.iter().map(|dir| dir.join(name)).find(|p| p.is_file())
}

impl Tools {
    pub(crate) fn find(dirs: &[PathBuf]) -> Tools {
        Tools {
            setpriv: which(dirs, "setpriv"),
            unshare: which(dirs, "unshare"),
            prlimit: which(dirs, "prlimit"),
            setsid: which(dirs, "setsid"),
        }
    }
}

/// Everything the chain needs for one run.
#[derive(Debug, Clone)]
pub(crate) struct Plan {
    pub tier: Tier,
    /// The uid/gid to drop to (root hosts).
    pub uid: Option<u32>,
    /// The interpreter or system program, absolute.
    pub program: PathBuf,
    /// Its arguments (interpreter flags, script path, script args).
    pub args: Vec<OsString>,
    pub skill_dir: PathBuf,
    pub scratch_dir: PathBuf,
    /// The script file, readable even when the skill directory is not.
    pub script: Option<PathBuf>,
    pub config: SandboxConfig,
    pub tools: Tools,
}

fn tool(tool: &Option<PathBuf>, name: &str) -> Result<PathBuf, String> {
    tool.clone().ok_or_else(|| {
        format!("`{name}` (util-linux) is not installed; the sandbox needs it to launch")
    })
}

fn rlimit_args(config: &SandboxConfig) -> Vec<OsString> {
    let cpu = config.cpu_time.as_millis().div_ceil(1000).max(1);
    let pair = |name: &str, v: u128| OsString::from(format!("--{name}={v}:{v}"));
    vec![
        pair("cpu", cpu),
        pair("fsize", u128::from(config.max_file_bytes)),
        pair("nofile", u128::from(config.max_open_files.max(8))),
        pair("core", 0),
        pair("data", u128::from(config.memory_bytes)),
        pair("nproc", u128::from(config.max_processes.max(1))),
    ]
}

impl Plan {
    /// The program and argv of the chain (the first element is what is executed).
    pub(crate) fn argv(&self) -> Result<Vec<OsString>, String> {
        let mut argv: Vec<OsString> = Vec::new();
        let net = self.config.network == Network::Disabled;
        match (self.tier, self.uid) {
            (Tier::Namespaced | Tier::RlimitsOnly, Some(uid)) => {
                argv.push(tool(&self.tools.setpriv, "setpriv")?.into());
                argv.extend(
                    [
                        format!("--reuid={uid}"),
                        format!("--regid={uid}"),
                        "--clear-groups".into(),
                        "--inh-caps=-all".into(),
                        "--bounding-set=-all".into(),
                        "--pdeathsig=KILL".into(),
                        "--".into(),
                    ]
                    .map(OsString::from),
                );
            }
            (Tier::Namespaced, None) => {
                return Err("the namespaced tier needs a root host (uid drop)".into());
            }
            (Tier::UserNamespace, _) => {
                argv.push(tool(&self.tools.unshare, "unshare")?.into());
                let mut flags = vec!["--user", "--pid", "--ipc", "--uts"];
                if net {
                    flags.push("--net");
                }
                flags.extend(["--fork", "--kill-child", "--"]);
                argv.extend(flags.into_iter().map(OsString::from));
            }
            (Tier::RlimitsOnly, None) | (Tier::Simulated, _) => {}
        }
        if self.tier == Tier::RlimitsOnly {
            argv.push(tool(&self.tools.setsid, "setsid")?.into());
            argv.push("--".into());
        }
        argv.push(tool(&self.tools.prlimit, "prlimit")?.into());
        argv.extend(rlimit_args(&self.config));
        argv.push("--".into());
        argv.push(self.program.clone().into());
        argv.extend(self.args.iter().cloned());
        Ok(argv)
    }

    /// Files executed along the chain (Landlock `Execute` is granted on these).
    fn executables(&self) -> Vec<PathBuf> {
        let mut files: Vec<PathBuf> = [
            &self.tools.setpriv,
            &self.tools.unshare,
            &self.tools.prlimit,
            &self.tools.setsid,
        ]
        .into_iter()
        .flatten()
        .cloned()
        .collect();
        files.push(self.program.clone());
        files.extend(
            [
                "/lib64/ld-linux-x86-64.so.2",
                "/lib/ld-linux-aarch64.so.1",
                "/lib/ld-linux-x86-64.so.2",
                "/lib/ld-linux.so.2",
            ]
            .map(PathBuf::from),
        );
        files
            .into_iter()
            .filter_map(|p| p.canonicalize().ok())
            .collect()
    }
}

/// Read-only system locations (read and list; execute only when the config lets the
/// script run other programs).
const SYSTEM_DIRS: &[&str] = &["/usr", "/bin", "/sbin", "/lib", "/lib64", "/lib32"];
/// Single system files scripts and the chain read.
const SYSTEM_FILES: &[&str] = &[
    "/etc/ld.so.cache",
    "/etc/localtime",
    "/etc/passwd",
    "/etc/group",
    "/etc/nsswitch.conf",
    // setpriv reads the highest capability number to drop the bounding set.
    "/proc/sys/kernel/cap_last_cap",
];
/// Devices a script may read and write.
const DEVICES: &[&str] = &[
    "/dev/null",
    "/dev/zero",
    "/dev/full",
    "/dev/random",
    "/dev/urandom",
];

/// The filesystem rules, as (path, access) pairs: system dirs read-only, the skill
/// directory read-only (or only the script, when `can_read_files` is false), the scratch
/// directory read-write (read-only when `can_write_files` is false), a few devices, and
/// `Execute` only where [`Plan::executables`] or `can_execute_code` allows. Everything else
/// (`/root`, `/home`, `/tmp`, `/proc`, `/sys`, `/dev/shm`, the rest of `/etc`, the host's
/// sockets) is neither readable nor writable.
pub(crate) fn landlock_rules(plan: &Plan, abi: ABI) -> Vec<(PathBuf, BitFlags<AccessFs>)> {
    let read_dir = AccessFs::ReadFile | AccessFs::ReadDir;
    let read_file: BitFlags<AccessFs> = AccessFs::ReadFile.into();
    let exec = AccessFs::Execute;
    let mut rules = Vec::new();
    for dir in SYSTEM_DIRS {
        let access = if plan.config.can_execute_code {
            read_dir | exec
        } else {
            read_dir
        };
        rules.push((PathBuf::from(dir), access));
    }
    for file in SYSTEM_FILES {
        rules.push((PathBuf::from(file), read_file));
    }
    for file in plan.executables() {
        rules.push((file, read_file | exec));
    }
    let device = AccessFs::ReadFile | AccessFs::WriteFile | AccessFs::Truncate | AccessFs::IoctlDev;
    for dev in DEVICES {
        rules.push((PathBuf::from(dev), device & AccessFs::from_all(abi)));
    }
    if plan.config.can_read_files {
        rules.push((plan.skill_dir.clone(), read_dir));
    } else if let Some(script) = &plan.script {
        rules.push((script.clone(), read_file));
    }
    let scratch = if plan.config.can_write_files {
        AccessFs::from_all(abi) & !AccessFs::Execute
    } else {
        read_dir
    };
    rules.push((plan.scratch_dir.clone(), scratch));
    rules
}

/// What the confinement thread enforced.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Enforced {
    pub landlock_abi: Option<i32>,
}

fn abi_number(abi: ABI) -> i32 {
    match abi {
        ABI::Unsupported => 0,
        ABI::V1 => 1,
        ABI::V2 => 2,
        ABI::V3 => 3,
        ABI::V4 => 4,
        ABI::V5 => 5,
        ABI::V6 => 6,
        _ => 7,
    }
}

/// Applies Landlock to the calling thread. Fails (closed) unless Landlock is available and
/// the filesystem rules are enforced.
fn apply_landlock(plan: &Plan) -> Result<i32, String> {
    let abi = ABI::V6;
    let err = |e: &dyn std::fmt::Display| format!("Landlock: {e}");
    let mut ruleset = Ruleset::default()
        .handle_access(AccessFs::from_all(abi))
        .map_err(|e| err(&e))?;
    if plan.config.network == Network::Disabled {
        ruleset = ruleset
            .handle_access(AccessNet::from_all(abi))
            .map_err(|e| err(&e))?;
    }
    let ruleset = ruleset.scope(Scope::from_all(abi)).map_err(|e| err(&e))?;
    let mut created = ruleset.create().map_err(|e| err(&e))?;
    for (path, access) in landlock_rules(plan, abi) {
        let Ok(fd) = PathFd::new(&path) else {
            continue; // absent on this system (e.g. /lib32)
        };
        let access = if path.is_dir() {
            access
        } else {
            access & AccessFs::from_file(abi)
        };
        created = created
            .add_rule(PathBeneath::new(fd, access))
            .map_err(|e| err(&e))?;
    }
    let status = created.restrict_self().map_err(|e| err(&e))?;
    let effective = match status.landlock {
        LandlockStatus::Available { effective_abi, .. } => abi_number(effective_abi),
        LandlockStatus::NotEnabled => return Err("Landlock is not enabled in this kernel".into()),
        LandlockStatus::NotImplemented => {
            return Err("Landlock is not built into this kernel".into());
        }
    };
    if status.ruleset == RulesetStatus::NotEnforced || !status.no_new_privs {
        return Err("Landlock rules are not enforced on this kernel".into());
    }
    Ok(effective)
}

/// Syscalls no script needs and the design note denies: tracing other processes, kernel
/// attack surface (bpf, perf, io_uring, userfaultfd, keyrings), mounts, modules, kexec,
/// accounting, swap, reboot, handle-based opens.
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

/// The seccomp programs: the deny-list (`EPERM`), and `clone3` answered `ENOSYS` (its
/// flags live in memory a filter cannot read; libc falls back to `clone`, whose flags it
/// can). With `deny_namespaces`, `unshare`, `setns` and `clone` with any namespace flag
/// are denied too. Without network, `socket` is denied outright (`socketpair` stays);
/// with network, only unix, IPv4 and IPv6 sockets may be created (no raw packet or
/// netlink families).
pub(crate) fn seccomp_programs(
    config: &SandboxConfig,
    deny_namespaces: bool,
) -> Result<Vec<BpfProgram>, String> {
    let err = |e: &dyn std::fmt::Display| format!("seccomp: {e}");
    let arch = TargetArch::try_from(std::env::consts::ARCH).map_err(|e| err(&e))?;
    let cond = |arg: u8, op: SeccompCmpOp, value: u64| {
        SeccompCondition::new(arg, SeccompCmpArgLen::Qword, op, value).map_err(|e| err(&e))
    };
    let mut rules: BTreeMap<i64, Vec<SeccompRule>> = BTreeMap::new();
    for sys in denied_syscalls() {
        rules.insert(sys, Vec::new());
    }
    if deny_namespaces {
        rules.insert(libc::SYS_unshare, Vec::new());
        rules.insert(libc::SYS_setns, Vec::new());
        let mut clone_rules = Vec::new();
        for flag in NAMESPACE_FLAGS {
            clone_rules.push(
                SeccompRule::new(vec![cond(0, SeccompCmpOp::MaskedEq(flag), flag)?])
                    .map_err(|e| err(&e))?,
            );
        }
        rules.insert(libc::SYS_clone, clone_rules);
    }
    match &config.network {
        Network::Disabled => {
            rules.insert(libc::SYS_socket, Vec::new());
        }
        Network::Allowed(_) => {
            let rule = SeccompRule::new(vec![
                cond(0, SeccompCmpOp::Ne, libc::AF_UNIX as u64)?,
                cond(0, SeccompCmpOp::Ne, libc::AF_INET as u64)?,
                cond(0, SeccompCmpOp::Ne, libc::AF_INET6 as u64)?,
            ])
            .map_err(|e| err(&e))?;
            rules.insert(libc::SYS_socket, vec![rule]);
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
    let deny: BpfProgram = deny.try_into().map_err(|e| err(&e))?;
    let clone3: BpfProgram = clone3.try_into().map_err(|e| err(&e))?;
    Ok(vec![deny, clone3])
}

/// Confines the calling thread for `plan.tier`: namespaces (root hosts), Landlock, then
/// `no_new_privs` and the seccomp programs. Call only on a dedicated thread that spawns
/// the chain and then does nothing else.
pub(crate) fn confine_current_thread(plan: &Plan) -> Result<Enforced, String> {
    match plan.tier {
        Tier::Namespaced => {
            use nix::sched::CloneFlags;
            let mut flags =
                CloneFlags::CLONE_NEWPID | CloneFlags::CLONE_NEWIPC | CloneFlags::CLONE_NEWUTS;
            if plan.config.network == Network::Disabled {
                flags |= CloneFlags::CLONE_NEWNET;
            }
            nix::sched::unshare(flags).map_err(|e| format!("unshare(pid, net, ipc, uts): {e}"))?;
            let abi = apply_landlock(plan)?;
            for program in seccomp_programs(&plan.config, true)? {
                seccompiler::apply_filter(&program).map_err(|e| format!("seccomp: {e}"))?;
            }
            Ok(Enforced {
                landlock_abi: Some(abi),
            })
        }
        Tier::UserNamespace => {
            let abi = apply_landlock(plan)?;
            for program in seccomp_programs(&plan.config, false)? {
                seccompiler::apply_filter(&program).map_err(|e| format!("seccomp: {e}"))?;
            }
            Ok(Enforced {
                landlock_abi: Some(abi),
            })
        }
        Tier::RlimitsOnly | Tier::Simulated => Ok(Enforced { landlock_abi: None }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(tier: Tier, uid: Option<u32>) -> Plan {
        Plan {
            tier,
            uid,
            program: PathBuf::from("/usr/bin/python3"),
            args: vec!["-I".into(), "x.py".into(), "a b; rm -rf /".into()],
            skill_dir: PathBuf::from("/skill"),
            scratch_dir: PathBuf::from("/scratch"),
            script: None,
            config: SandboxConfig::strict(),
            tools: Tools {
                setpriv: Some("/usr/bin/setpriv".into()),
                unshare: Some("/usr/bin/unshare".into()),
                prlimit: Some("/usr/bin/prlimit".into()),
                setsid: Some("/usr/bin/setsid".into()),
            },
        }
    }

    #[test]
    fn the_chain_passes_argv_as_an_array() -> Result<(), String> {
        let argv = plan(Tier::Namespaced, Some(1234)).argv()?;
        assert_eq!(argv[0], "/usr/bin/setpriv");
        assert!(argv.contains(&OsString::from("--reuid=1234")));
        assert!(argv.contains(&OsString::from("--clear-groups")));
        assert!(argv.contains(&OsString::from("--cpu=1:1")));
        assert!(argv.contains(&OsString::from("--nproc=16:16")));
        assert_eq!(argv.last(), Some(&OsString::from("a b; rm -rf /")));
        let user = plan(Tier::UserNamespace, None).argv()?;
        assert_eq!(user[0], "/usr/bin/unshare");
        assert!(user.contains(&OsString::from("--net")));
        assert!(plan(Tier::Namespaced, None).argv().is_err());
        Ok(())
    }

    #[test]
    fn missing_tools_are_named() {
        let mut p = plan(Tier::Namespaced, Some(1));
        p.tools.setpriv = None;
        assert!(p.argv().is_err_and(|e| e.contains("setpriv")));
    }

    #[test]
    fn the_seccomp_programs_compile() -> Result<(), String> {
        assert_eq!(seccomp_programs(&SandboxConfig::strict(), true)?.len(), 2);
        let net = SandboxConfig::strict().with_network(Network::Allowed(vec!["*".into()]));
        assert_eq!(seccomp_programs(&net, false)?.len(), 2);
        Ok(())
    }
}
