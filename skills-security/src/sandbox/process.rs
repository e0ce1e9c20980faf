//! [`ProcessSandbox`]: real isolation for Linux processes, holding when the host is root.
//!
//! Threat: everything listed on [`Sandbox`](super::Sandbox), with the host running as root
//! (as CI does), where `RLIMIT_NPROC` is ignored, capabilities survive into a naive
//! sandbox and `/proc/sys` is writable. Guarantee, on the strongest tier available (the
//! [`Tier`] is recorded in every [`Outcome`]):
//!
//! * **Launch in one step.** One `clone` makes the run's first process in its namespaces;
//!   the process confines itself with system calls and then executes the interpreter. No
//!   helper program runs in between (see the `sys` module, the one place with `unsafe`).
//! * **Identity.** Root hosts run the script as a fresh uid/gid from a reserved range (one
//!   per run), with no supplementary groups and no capabilities (bounding set empty);
//!   non-root hosts run it in a new user namespace with no capabilities.
//! * **Namespaces.** New mount (the scratch tmpfs and the approved script exist only
//!   there), pid (the first process is pid 1: when it ends, or is killed, the kernel kills
//!   every process of the run, `setsid` daemons included), network (when off: no interfaces
//!   up), ipc and uts namespaces.
//! * **Scratch.** A fresh directory per run (see the `scratch` module), with a tmpfs of
//!   `max_scratch_bytes` mounted on it inside the run: the disk is capped as a whole and the
//!   host's disk is untouched.
//! * **The approved bytes run.** The script is opened once beneath the skill root without
//!   following symlinks and hashed from that descriptor; the interpreter runs a read-only
//!   copy of those bytes on the run's own tmpfs, inside `skill/`, a mirror of the skill
//!   directory along the script's path whose other entries link to the real ones (so the
//!   script's own directory and `SKILL_DIR` still find the skill's files). Nothing outside
//!   the run can change what runs.
//! * **Filesystem.** Landlock at the newest ABI the kernel and this build share, fully
//!   enforced, at least ABI 3 (6 when the network is allowed): system directories
//!   read-only, the skill directory read-only (or only the script), the scratch tmpfs the
//!   only writable place, nothing else (`/root`, `/home`, `/tmp`, `/proc`, `/sys`,
//!   `/dev/shm`).
//! * **System calls.** `no_new_privs` and seccomp: a deny-list, socket families (IPv4 and
//!   IPv6 only), namespace creation; without `can_execute_code`, no exec after the launch
//!   (the supervisor keeps the exec listener and refuses every later call) and no new
//!   processes, threads allowed. Foreign architectures and x32 numbers kill.
//! * **Resources.** A cgroup per run for memory (resident, swap off) and tasks, nested under
//!   the host's own on cgroup v1; `RLIMIT_AS`/`RLIMIT_NPROC` where none can be made;
//!   rlimits for CPU, file size, open files and core dumps; a wall timeout, CPU polled every
//!   20 ms, and per-stream output caps that kill on overflow.
//! * **Descriptors.** Everything above stderr is closed at exec.
//! * **Environment.** Empty, then only `PATH=/usr/bin:/bin`, `HOME` and `TMPDIR` (the
//!   scratch directory), `LANG=C.UTF-8` and `SKILL_DIR`.
//!
//! When the tier's mechanisms are unavailable (Landlock below the ABI a run needs, no user
//! namespaces, no seccomp) the run fails closed with [`Status::SandboxUnavailable`] naming
//! each missing mechanism, unless the host called [`ProcessSandbox::allow_rlimits_only`];
//! then it runs on [`Tier::RlimitsOnly`] and says so.
//!
//! ```no_run
//! use skills_security::sandbox::{ProcessSandbox, Sandbox, SandboxConfig, SandboxRequest};
//! use skills_security::TrustLevel;
//!
//! # async fn demo() {
//! let sandbox = ProcessSandbox::new();
//! println!("isolation here: {:?}", sandbox.probe());
//! let request = SandboxRequest::script(
//!     "/srv/skills/pdf",             // the skill directory (read-only to the script)
//!     "scripts/extract.py",          // referenced by its SKILL.md, approved
//!     std::env::temp_dir(),          // a fresh scratch directory is made beneath it
//!     SandboxConfig::for_trust(TrustLevel::Community),
//! )
//! .args(["--pages", "1-3"]);
//! let outcome = sandbox.run(request).await;
//! println!("{:?} on {:?}: {}", outcome.status, outcome.tier, outcome.stdout.text);
//! # }
//! ```

use std::fmt;
use std::path::PathBuf;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU32, Ordering};

use async_trait::async_trait;

use super::cgroup::{self, Hierarchies, LimitMechanism};
use super::policy::{NEWEST_LANDLOCK_ABI, minimum_landlock_abi};
use super::run::{Hook, RunPlan, execute};
use super::{Network, Outcome, Sandbox, SandboxRequest, Status, Tier, sys};

/// The default first uid of the range root hosts give scripts (one uid per run).
pub const DEFAULT_UID_BASE: u32 = 0x5a00_0000;
const UID_RANGE: u32 = 1_000_000;
/// Where interpreters are looked up by default (the host's `PATH` is never used).
const SYSTEM_PATH: &[&str] = &["/usr/bin", "/bin", "/usr/sbin", "/sbin"];

/// How a [`ProcessSandbox`] holds the memory and task limits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum Cgroups {
    /// A cgroup per run (v2 where delegated, else v1's `memory` and `pids`); without one,
    /// nothing runs (`SandboxUnavailable` naming the missing controller). The default.
    #[default]
    Required,
    /// A cgroup where one can be made, else `RLIMIT_AS` and `RLIMIT_NPROC`; the outcome
    /// says which held. A weaker choice where no cgroup can be made: `RLIMIT_AS` counts
    /// address space, so thread-heavy programs reach it early (a 256 MB limit fits about
    /// 30 default-sized thread stacks), and `memfd_create` is refused so that no
    /// in-memory file escapes it.
    WhereAvailable,
    /// Never make cgroups: `RLIMIT_AS` and `RLIMIT_NPROC` only, with the same caveats.
    RlimitsInstead,
}

/// What the machine offers, as [`ProcessSandbox::probe`] found it.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Probe {
    /// The host runs as root.
    pub root: bool,
    /// The tier a run would use, or `None` (fail closed).
    pub tier: Option<Tier>,
    /// The Landlock ABI runs would enforce (the kernel's, capped by this build and by
    /// [`ProcessSandbox::limit_landlock_abi`]).
    pub landlock_abi: Option<u8>,
    /// What would hold the memory limit.
    pub memory: Option<LimitMechanism>,
    /// What would hold the task limit.
    pub tasks: Option<LimitMechanism>,
    /// What is missing for the isolated tiers (each named).
    pub missing: Vec<String>,
    /// Weaker mechanisms runs would use instead of the strongest (each named).
    pub fallbacks: Vec<String>,
}

/// Facts about the host that do not change while it runs.
#[derive(Debug, Clone)]
struct HostFacts {
    root: bool,
    kernel_landlock: Option<u8>,
    userns: bool,
    seccomp: bool,
    last_cap: u32,
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

fn seccomp_available() -> bool {
    std::fs::read_to_string("/proc/self/status").is_ok_and(|s| {
        s.lines()
            .any(|l| l.starts_with("Seccomp_filters:") || l.starts_with("Seccomp:"))
    })
}

/// The Linux process sandbox; see the module docs.
pub struct ProcessSandbox {
    dirs: Vec<PathBuf>,
    allow_rlimits_only: bool,
    uid_base: u32,
    landlock_limit: Option<u8>,
    cgroups: Cgroups,
    cgroup_v2_parent: Option<PathBuf>,
    facts: OnceLock<HostFacts>,
    hierarchies: OnceLock<Hierarchies>,
    after_hash: Option<Hook>,
}

impl fmt::Debug for ProcessSandbox {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ProcessSandbox")
            .field("dirs", &self.dirs)
            .field("allow_rlimits_only", &self.allow_rlimits_only)
            .field("uid_base", &self.uid_base)
            .field("landlock_limit", &self.landlock_limit)
            .field("cgroups", &self.cgroups)
            .field("cgroup_v2_parent", &self.cgroup_v2_parent)
            .finish_non_exhaustive()
    }
}

/// Runs started by this process, across all sandboxes: each run gets its own uid.
static RUNS: AtomicU32 = AtomicU32::new(0);

impl Default for ProcessSandbox {
    fn default() -> Self {
        Self::new()
    }
}

impl ProcessSandbox {
    /// A sandbox that requires isolation (fails closed without it).
    pub fn new() -> ProcessSandbox {
        ProcessSandbox {
            dirs: SYSTEM_PATH.iter().map(PathBuf::from).collect(),
            allow_rlimits_only: false,
            uid_base: DEFAULT_UID_BASE,
            landlock_limit: None,
            cgroups: Cgroups::default(),
            cgroup_v2_parent: None,
            facts: OnceLock::new(),
            hierarchies: OnceLock::new(),
            after_hash: None,
        }
    }

    /// The host's explicit choice to run on [`Tier::RlimitsOnly`] when isolation is
    /// unavailable. Never the default; the outcome records the tier.
    pub fn allow_rlimits_only(mut self) -> ProcessSandbox {
        self.allow_rlimits_only = true;
        self
    }

    /// Where interpreters (`python3`, `bash`) are looked up; `/usr/bin`, `/bin`,
    /// `/usr/sbin`, `/sbin` by default. The host's `PATH` is never used.
    pub fn interpreter_dirs<I, P>(mut self, dirs: I) -> ProcessSandbox
    where
        I: IntoIterator<Item = P>,
        P: Into<PathBuf>,
    {
        self.dirs = dirs.into_iter().map(Into::into).collect();
        self
    }

    /// The first uid of the range given to scripts on root hosts (a million uids from it;
    /// no account should use them). Each run gets its own uid, so `RLIMIT_NPROC` (the
    /// fallback) counts only that run's tasks.
    pub fn uid_base(mut self, base: u32) -> ProcessSandbox {
        self.uid_base = base.clamp(1, u32::MAX - UID_RANGE - 1);
        self
    }

    /// Never uses a Landlock ABI above `abi`, whatever the kernel offers: pins behaviour
    /// across kernels, and shows what a host with an older kernel gets (a run whose
    /// guarantees need more fails closed).
    pub fn limit_landlock_abi(mut self, abi: u8) -> ProcessSandbox {
        self.landlock_limit = Some(abi);
        self
    }

    /// How the memory and task limits are held ([`Cgroups::Required`] by default).
    pub fn cgroups(mut self, cgroups: Cgroups) -> ProcessSandbox {
        self.cgroups = cgroups;
        self.hierarchies = OnceLock::new();
        self
    }

    /// A cgroup v2 directory delegated to this host (it must be able to enable `memory`
    /// and `pids` for its children). By default v2 runs go under `skills-sandbox` at the
    /// root of the v2 hierarchy when that has the controllers.
    pub fn cgroup_v2_parent(mut self, dir: impl Into<PathBuf>) -> ProcessSandbox {
        self.cgroup_v2_parent = Some(dir.into());
        self.hierarchies = OnceLock::new();
        self
    }

    #[cfg(test)]
    pub(crate) fn after_hash(mut self, hook: Hook) -> ProcessSandbox {
        self.after_hash = Some(hook);
        self
    }

    fn facts(&self) -> &HostFacts {
        self.facts.get_or_init(|| HostFacts {
            root: nix::unistd::geteuid().is_root(),
            kernel_landlock: sys::landlock_abi(),
            userns: userns_available(),
            seccomp: seccomp_available(),
            last_cap: super::prepare::last_cap(),
        })
    }

    fn hierarchies(&self) -> Option<&Hierarchies> {
        if self.cgroups == Cgroups::RlimitsInstead {
            return None;
        }
        Some(self.hierarchies.get_or_init(|| {
            let found = cgroup::discover(self.cgroup_v2_parent.as_deref());
            cgroup::sweep_stale(&found, std::time::Duration::from_secs(600));
            found
        }))
    }

    /// The Landlock ABI runs enforce.
    fn landlock_abi(&self) -> Option<u8> {
        let kernel = self.facts().kernel_landlock?;
        let abi = kernel
            .min(NEWEST_LANDLOCK_ABI)
            .min(self.landlock_limit.unwrap_or(u8::MAX));
        (abi > 0).then_some(abi)
    }

    /// What this machine offers and the tier a run would get.
    pub fn probe(&self) -> Probe {
        let facts = self.facts().clone();
        let abi = self.landlock_abi();
        let mut isolation = Vec::new();
        match abi {
            None => isolation.push("Landlock (not enabled in this kernel)".to_owned()),
            Some(v) if v < 3 => isolation.push(format!(
                "Landlock ABI 3 (filesystem rules including truncate); ABI {v} is in force"
            )),
            Some(_) => {}
        }
        if !facts.seccomp {
            isolation.push("seccomp".to_owned());
        }
        if !facts.root && !facts.userns {
            isolation.push("unprivileged user namespaces".to_owned());
        }
        let hierarchies = self.hierarchies();
        let memory = hierarchies.and_then(Hierarchies::memory);
        let tasks = hierarchies.and_then(Hierarchies::tasks);
        let mut limits = Vec::new();
        let mut fallbacks = Vec::new();
        for (held, controller, fallback) in [
            (memory, "memory", "memory limited by RLIMIT_AS"),
            (tasks, "pids", "tasks limited by RLIMIT_NPROC"),
        ] {
            if held.is_some() {
                continue;
            }
            if self.cgroups == Cgroups::Required {
                limits.push(format!(
                    "a writable cgroup with the {controller} controller (or choose Cgroups::WhereAvailable)"
                ));
            } else {
                fallbacks.push(format!("{fallback} (no writable {controller} cgroup)"));
            }
        }
        let tier = if !limits.is_empty() {
            None
        } else if isolation.is_empty() {
            Some(if facts.root {
                Tier::Namespaced
            } else {
                Tier::UserNamespace
            })
        } else if self.allow_rlimits_only && facts.seccomp {
            Some(Tier::RlimitsOnly)
        } else {
            None
        };
        let mut missing = isolation;
        missing.extend(limits);
        Probe {
            root: facts.root,
            tier,
            landlock_abi: abi,
            memory: Some(memory.unwrap_or(LimitMechanism::RlimitAs)),
            tasks: Some(tasks.unwrap_or(LimitMechanism::RlimitNproc)),
            missing,
            fallbacks,
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

    /// The tier for `request`, or why nothing may run.
    fn tier_for(&self, request: &SandboxRequest) -> Result<Tier, Status> {
        if let Network::Allowed(domains) = &request.config.network
            && domains.iter().any(|d| d != "*")
        {
            return Err(Status::Refused {
                reason: "a domain allow-list needs a filtering proxy, which this sandbox does not have; allow \"*\" or no network".into(),
            });
        }
        let probe = self.probe();
        let Some(tier) = probe.tier else {
            return Err(Status::SandboxUnavailable {
                reason: format!(
                    "isolation is unavailable here (missing: {}); refusing to run without it",
                    probe.missing.join(", ")
                ),
            });
        };
        let needed = minimum_landlock_abi(&request.config);
        if tier != Tier::RlimitsOnly && probe.landlock_abi.unwrap_or(0) < needed {
            if self.allow_rlimits_only {
                return Ok(Tier::RlimitsOnly);
            }
            return Err(Status::SandboxUnavailable {
                reason: format!(
                    "this run needs Landlock ABI {needed} ({}); ABI {} is in force; refusing to run without it",
                    if needed >= 6 {
                        "scoping of abstract unix sockets and signals, since the network is allowed"
                    } else {
                        "filesystem rules including truncate"
                    },
                    probe.landlock_abi.unwrap_or(0)
                ),
            });
        }
        Ok(tier)
    }

    fn plan(&self, tier: Tier, request: SandboxRequest) -> RunPlan {
        let facts = self.facts();
        RunPlan {
            tier,
            root: facts.root,
            uid: facts.root.then(|| self.next_uid()),
            landlock_abi: self.landlock_abi(),
            hierarchies: self.hierarchies().cloned(),
            require_cgroups: self.cgroups == Cgroups::Required,
            last_cap: facts.last_cap,
            interpreter_dirs: self.dirs.clone(),
            request,
            after_hash: self.after_hash.clone(),
        }
    }

    /// Runs `request` on the calling thread, blocking until it ends (no async runtime
    /// needed). The calling thread becomes the run's parent: its exit kills the run.
    pub fn run_blocking(&self, request: SandboxRequest) -> Outcome {
        let tier = match self.tier_for(&request) {
            Ok(tier) => tier,
            Err(status) => return Outcome::not_started(status),
        };
        let once = |tier: Tier, request: SandboxRequest| match nix::unistd::pipe2(
            nix::fcntl::OFlag::O_CLOEXEC,
        ) {
            Ok((cancel, writer)) => {
                let outcome = execute(self.plan(tier, request), cancel);
                drop(writer);
                outcome
            }
            Err(e) => Outcome::not_started(Status::LaunchError {
                reason: format!("cannot create a pipe: {e}"),
            }),
        };
        let outcome = once(tier, request.clone());
        if self.falls_back(tier, &outcome) {
            return once(Tier::RlimitsOnly, request);
        }
        outcome
    }

    /// Whether a run that found isolation missing at launch is retried on the weaker tier
    /// the host chose.
    fn falls_back(&self, tier: Tier, outcome: &Outcome) -> bool {
        matches!(outcome.status, Status::SandboxUnavailable { .. })
            && tier != Tier::RlimitsOnly
            && self.allow_rlimits_only
    }

    async fn run_on_thread(&self, plan: RunPlan) -> Outcome {
        let (cancel, cancel_writer) = match nix::unistd::pipe2(nix::fcntl::OFlag::O_CLOEXEC) {
            Ok(pair) => pair,
            Err(e) => {
                return Outcome::not_started(Status::LaunchError {
                    reason: format!("cannot create a pipe: {e}"),
                });
            }
        };
        let (tx, rx) = futures::channel::oneshot::channel();
        let spawned = std::thread::Builder::new()
            .name("skills-sandbox-run".into())
            .spawn(move || {
                let _ = tx.send(execute(plan, cancel));
            });
        if let Err(e) = spawned {
            return Outcome::not_started(Status::LaunchError {
                reason: format!("cannot start the run's thread: {e}"),
            });
        }
        // Dropping this future drops `cancel_writer`: the run's thread sees the pipe close,
        // kills the run and cleans up.
        let outcome = rx.await;
        drop(cancel_writer);
        outcome.unwrap_or_else(|_| {
            Outcome::not_started(Status::LaunchError {
                reason: "the run's thread ended without an outcome".into(),
            })
        })
    }
}

#[async_trait]
impl Sandbox for ProcessSandbox {
    async fn run(&self, request: SandboxRequest) -> Outcome {
        let tier = match self.tier_for(&request) {
            Ok(tier) => tier,
            Err(status) => return Outcome::not_started(status),
        };
        let outcome = self.run_on_thread(self.plan(tier, request.clone())).await;
        if self.falls_back(tier, &outcome) {
            return self
                .run_on_thread(self.plan(Tier::RlimitsOnly, request))
                .await;
        }
        outcome
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn without_cgroups(cgroups: Cgroups) -> ProcessSandbox {
        let sandbox = ProcessSandbox::new().cgroups(cgroups);
        let _ = sandbox.hierarchies.set(Hierarchies::default());
        sandbox
    }

    #[test]
    fn without_a_cgroup_the_default_fails_closed_naming_the_controllers() {
        let probe = without_cgroups(Cgroups::Required).probe();
        assert_eq!(probe.tier, None);
        assert!(
            probe
                .missing
                .iter()
                .any(|m| m.contains("memory controller")),
            "{probe:?}"
        );
        assert!(probe.missing.iter().any(|m| m.contains("pids controller")));
        let config = super::super::SandboxConfig::strict();
        let request = SandboxRequest::script("/nonexistent", "s.sh", "/tmp", config);
        let out = without_cgroups(Cgroups::Required).run_blocking(request);
        let Status::SandboxUnavailable { reason } = &out.status else {
            panic!("{out:?}")
        };
        assert!(reason.contains("memory controller"), "{reason}");
        // Chosen by name, the fallback is reported, not hidden.
        let probe = without_cgroups(Cgroups::WhereAvailable).probe();
        assert_eq!(probe.memory, Some(LimitMechanism::RlimitAs));
        assert_eq!(probe.tasks, Some(LimitMechanism::RlimitNproc));
        assert_eq!(probe.fallbacks.len(), 2, "{probe:?}");
    }
}
