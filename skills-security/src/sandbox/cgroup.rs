//! One cgroup per run: the memory limit (everything the process tree makes resident:
//! private and shared anonymous memory, tmpfs and shm pages; swap off) and the task limit
//! (processes and threads), on cgroup v2 where the host delegates it, on v1's `memory` and
//! `pids` controllers where that is what the host mounts.
//!
//! Threat: a script that makes memory resident without `RLIMIT_DATA` seeing it (shared
//! anonymous maps, tmpfs), floods the task table, or outlives its run. Guarantee: the run's
//! first process joins the cgroups before it is confined (so everything it starts is
//! inside); the limits are written before it joins; the cgroups are nested under the host's
//! own on v1 (the host's limits still hold) and removed when the run ends, its processes
//! killed first, whether the script exited, was killed, or the caller dropped the future.

use std::fs::{self, OpenOptions};
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Serialize;

/// The mechanism that held a limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub enum LimitMechanism {
    /// A cgroup v2 controller (`memory.max`, `pids.max`).
    #[serde(rename = "cgroup-v2")]
    CgroupV2,
    /// A cgroup v1 controller (`memory.limit_in_bytes`, `pids.max`).
    #[serde(rename = "cgroup-v1")]
    CgroupV1,
    /// `RLIMIT_AS`, the memory fallback: counts address space, so thread-heavy programs
    /// reach it early.
    #[serde(rename = "rlimit-as")]
    RlimitAs,
    /// `RLIMIT_NPROC`, the task fallback, counted for the run's own uid or user namespace.
    #[serde(rename = "rlimit-nproc")]
    RlimitNproc,
}

impl LimitMechanism {
    /// `cgroup-v2`, `cgroup-v1`, `rlimit-as`, `rlimit-nproc`.
    pub fn as_str(self) -> &'static str {
        match self {
            LimitMechanism::CgroupV2 => "cgroup-v2",
            LimitMechanism::CgroupV1 => "cgroup-v1",
            LimitMechanism::RlimitAs => "rlimit-as",
            LimitMechanism::RlimitNproc => "rlimit-nproc",
        }
    }
}

/// Where run cgroups can be made, as found on this host.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct Hierarchies {
    /// v1: the host's own cgroup directory in the `memory` hierarchy.
    pub v1_memory: Option<PathBuf>,
    /// v1: the host's own cgroup directory in the `pids` hierarchy.
    pub v1_pids: Option<PathBuf>,
    /// v2: a directory whose children may enable `memory` and `pids`.
    pub v2_parent: Option<PathBuf>,
}

impl Hierarchies {
    /// What holds memory, when anything.
    pub fn memory(&self) -> Option<LimitMechanism> {
        if self.v2_parent.is_some() {
            Some(LimitMechanism::CgroupV2)
        } else if self.v1_memory.is_some() {
            Some(LimitMechanism::CgroupV1)
        } else {
            None
        }
    }

    /// What holds tasks, when anything.
    pub fn tasks(&self) -> Option<LimitMechanism> {
        if self.v2_parent.is_some() {
            Some(LimitMechanism::CgroupV2)
        } else if self.v1_pids.is_some() {
            Some(LimitMechanism::CgroupV1)
        } else {
            None
        }
    }
}

/// One line of `/proc/self/mountinfo`: (mount root, mount point, fs type, super options).
fn mountinfo_line(line: &str) -> Option<(&str, &str, &str, &str)> {
    let (left, right) = line.split_once(" - ")?;
    let mut left = left.split(' ');
    let root = left.nth(3)?;
    let mount_point = left.next()?;
    let mut right = right.split(' ');
    let fs_type = right.next()?;
    let _source = right.next()?;
    let options = right.next().unwrap_or("");
    Some((root, mount_point, fs_type, options))
}

/// The mountinfo escape of spaces and the like (`\040`).
fn unescape(path: &str) -> PathBuf {
    let mut out = Vec::with_capacity(path.len());
    let bytes = path.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'\\'
            && let Some(octal) = path.get(i + 1..i + 4)
            && let Ok(value) = u8::from_str_radix(octal, 8)
        {
            out.push(value);
            i += 4;
            continue;
        }
        out.push(bytes[i]);
        i += 1;
    }
    use std::os::unix::ffi::OsStringExt;
    PathBuf::from(std::ffi::OsString::from_vec(out))
}

/// Joins the host's cgroup `own` (from `/proc/self/cgroup`) onto a hierarchy mounted at
/// `mount_point` whose root is `root`.
fn own_dir(mount_point: &Path, root: &str, own: &str) -> Option<PathBuf> {
    let relative = if root == "/" {
        own
    } else {
        own.strip_prefix(root)?
    };
    let relative = relative.trim_start_matches('/');
    if relative.split('/').any(|c| c == "..") {
        return None;
    }
    Some(if relative.is_empty() {
        mount_point.to_path_buf()
    } else {
        mount_point.join(relative)
    })
}

/// Finds the hierarchies from `mountinfo` and `cgroup` (the contents of
/// `/proc/self/mountinfo` and `/proc/self/cgroup`); `v2_parent` is the host's delegated
/// directory when it named one.
pub(crate) fn discover_in(
    mountinfo: &str,
    cgroup: &str,
    v2_parent: Option<&Path>,
    writable: &dyn Fn(&Path) -> bool,
) -> Hierarchies {
    let mut own_v1: Vec<(Vec<&str>, &str)> = Vec::new();
    let mut own_v2 = None;
    for line in cgroup.lines() {
        let mut parts = line.splitn(3, ':');
        let (Some(_), Some(controllers), Some(path)) = (parts.next(), parts.next(), parts.next())
        else {
            continue;
        };
        if controllers.is_empty() {
            own_v2 = Some(path);
        } else {
            own_v1.push((controllers.split(',').collect(), path));
        }
    }
    let mut found = Hierarchies::default();
    for line in mountinfo.lines() {
        let Some((root, mount_point, fs_type, options)) = mountinfo_line(line) else {
            continue;
        };
        let mount_point = unescape(mount_point);
        match fs_type {
            "cgroup" => {
                for controller in ["memory", "pids"] {
                    if !options.split(',').any(|o| o == controller) {
                        continue;
                    }
                    let Some((_, own)) = own_v1.iter().find(|(c, _)| c.contains(&controller))
                    else {
                        continue;
                    };
                    let dir = own_dir(&mount_point, root, own).filter(|d| writable(d));
                    match controller {
                        "memory" => found.v1_memory = found.v1_memory.take().or(dir),
                        _ => found.v1_pids = found.v1_pids.take().or(dir),
                    }
                }
            }
            "cgroup2" if found.v2_parent.is_none() => {
                let parent = match v2_parent {
                    Some(parent) => Some(parent.to_path_buf()),
                    None if own_v2.is_some() => Some(mount_point.join("skills-sandbox")),
                    None => None,
                };
                let usable = parent.filter(|p| {
                    let available = p
                        .parent()
                        .and_then(|up| fs::read_to_string(up.join("cgroup.controllers")).ok())
                        .or_else(|| fs::read_to_string(p.join("cgroup.controllers")).ok())
                        .unwrap_or_default();
                    let words: Vec<&str> = available.split_whitespace().collect();
                    words.contains(&"memory")
                        && words.contains(&"pids")
                        && writable(p.parent().unwrap_or(p))
                });
                found.v2_parent = usable;
            }
            _ => {}
        }
    }
    found
}

/// Finds this host's hierarchies.
pub(crate) fn discover(v2_parent: Option<&Path>) -> Hierarchies {
    let mountinfo = fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
    let cgroup = fs::read_to_string("/proc/self/cgroup").unwrap_or_default();
    discover_in(&mountinfo, &cgroup, v2_parent, &|dir| {
        nix::unistd::access(dir, nix::unistd::AccessFlags::W_OK).is_ok()
    })
}

/// Removes run cgroups (`skills-run-*`) older than `age` that a host killed mid-run left
/// behind. A cgroup with processes refuses removal, so a live run is never touched; the
/// age keeps a concurrent host's freshly made, not yet joined cgroup out of reach.
pub(crate) fn sweep_stale(hierarchies: &Hierarchies, age: Duration) {
    let parents = [
        &hierarchies.v1_memory,
        &hierarchies.v1_pids,
        &hierarchies.v2_parent,
    ];
    for parent in parents.into_iter().flatten() {
        let Ok(entries) = fs::read_dir(parent) else {
            continue;
        };
        for entry in entries.flatten() {
            let stale = entry
                .file_name()
                .to_string_lossy()
                .starts_with("skills-run-")
                && entry
                    .metadata()
                    .and_then(|m| m.modified())
                    .is_ok_and(|t| t.elapsed().is_ok_and(|e| e > age));
            if stale {
                let _ = fs::remove_dir(entry.path());
            }
        }
    }
}

/// What a run's cgroups measured.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct CgroupStats {
    pub peak_memory_bytes: Option<u64>,
    pub oom_kills: u64,
    pub task_limit_hits: u64,
}

/// The cgroups of one run; removed on drop (their processes killed first).
#[derive(Debug)]
pub(crate) struct RunCgroup {
    memory: Option<(LimitMechanism, PathBuf)>,
    pids: Option<(LimitMechanism, PathBuf)>,
    created: Vec<PathBuf>,
    procs: Vec<OwnedFd>,
}

fn write(path: &Path, value: &str) -> Result<(), String> {
    fs::write(path, value).map_err(|e| format!("cannot write {}: {e}", path.display()))
}

fn open_procs(dir: &Path) -> Result<OwnedFd, String> {
    let file = OpenOptions::new()
        .write(true)
        .open(dir.join("cgroup.procs"))
        .map_err(|e| format!("cannot open {}/cgroup.procs: {e}", dir.display()))?;
    Ok(OwnedFd::from(file))
}

fn keyed(path: &Path, key: &str) -> Option<u64> {
    fs::read_to_string(path).ok()?.lines().find_map(|l| {
        let (k, v) = l.split_once(' ')?;
        (k == key).then(|| v.trim().parse().ok()).flatten()
    })
}

fn number(path: &Path) -> Option<u64> {
    fs::read_to_string(path).ok()?.trim().parse().ok()
}

impl RunCgroup {
    /// Makes the run's cgroups under `hierarchies` with the limits written; `None` parts
    /// fall back to rlimits (the caller records which).
    pub fn create(
        hierarchies: &Hierarchies,
        memory_bytes: u64,
        max_tasks: u64,
    ) -> Result<RunCgroup, String> {
        let name = format!("skills-run-{}", uuid::Uuid::new_v4().simple());
        let mut run = RunCgroup {
            memory: None,
            pids: None,
            created: Vec::new(),
            procs: Vec::new(),
        };
        let memory = memory_bytes.to_string();
        let tasks = max_tasks.max(1).to_string();
        if let Some(parent) = &hierarchies.v2_parent {
            if !parent.exists() {
                match fs::create_dir(parent) {
                    Ok(()) => {}
                    Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
                    Err(e) => return Err(format!("cannot create {}: {e}", parent.display())),
                }
            }
            if let Some(up) = parent.parent() {
                // The root cgroup may have processes; enabling is idempotent.
                let _ = write(&up.join("cgroup.subtree_control"), "+memory +pids");
            }
            write(&parent.join("cgroup.subtree_control"), "+memory +pids")?;
            let dir = parent.join(&name);
            fs::create_dir(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
            run.created.push(dir.clone());
            write(&dir.join("memory.max"), &memory)?;
            if dir.join("memory.swap.max").exists() {
                write(&dir.join("memory.swap.max"), "0")?;
            }
            write(&dir.join("pids.max"), &tasks)?;
            run.procs.push(open_procs(&dir)?);
            run.memory = Some((LimitMechanism::CgroupV2, dir.clone()));
            run.pids = Some((LimitMechanism::CgroupV2, dir));
            return Ok(run);
        }
        if let Some(parent) = &hierarchies.v1_memory {
            let dir = parent.join(&name);
            fs::create_dir(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
            run.created.push(dir.clone());
            write(&dir.join("memory.limit_in_bytes"), &memory)?;
            if dir.join("memory.memsw.limit_in_bytes").exists() {
                // Memory plus swap equal to memory: nothing may be swapped out.
                write(&dir.join("memory.memsw.limit_in_bytes"), &memory)?;
            } else {
                write(&dir.join("memory.swappiness"), "0")?;
            }
            run.procs.push(open_procs(&dir)?);
            run.memory = Some((LimitMechanism::CgroupV1, dir));
        }
        if let Some(parent) = &hierarchies.v1_pids {
            let dir = parent.join(&name);
            fs::create_dir(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
            run.created.push(dir.clone());
            write(&dir.join("pids.max"), &tasks)?;
            run.procs.push(open_procs(&dir)?);
            run.pids = Some((LimitMechanism::CgroupV1, dir));
        }
        Ok(run)
    }

    /// New descriptors of the `cgroup.procs` files the child writes `0` to (above the
    /// standard stream numbers).
    pub fn procs_fds(&self) -> Result<Vec<OwnedFd>, String> {
        self.procs
            .iter()
            .map(|fd| fd.try_clone().map_err(|e| format!("cgroup.procs: {e}")))
            .collect()
    }

    /// What holds memory, when a cgroup does.
    pub fn memory(&self) -> Option<LimitMechanism> {
        self.memory.as_ref().map(|(m, _)| *m)
    }

    /// What holds tasks, when a cgroup does.
    pub fn tasks(&self) -> Option<LimitMechanism> {
        self.pids.as_ref().map(|(m, _)| *m)
    }

    /// The run's processes (host pids).
    pub fn processes(&self) -> Vec<i32> {
        let dir = self
            .pids
            .as_ref()
            .or(self.memory.as_ref())
            .map(|(_, d)| d.clone());
        let Some(dir) = dir else { return Vec::new() };
        fs::read_to_string(dir.join("cgroup.procs"))
            .unwrap_or_default()
            .lines()
            .filter_map(|l| l.trim().parse().ok())
            .collect()
    }

    /// Kills every process in the run's cgroups.
    pub fn kill_all(&self) {
        if let Some((LimitMechanism::CgroupV2, dir)) = &self.pids
            && write(&dir.join("cgroup.kill"), "1").is_ok()
        {
            return;
        }
        for pid in self.processes() {
            let _ = nix::sys::signal::kill(
                nix::unistd::Pid::from_raw(pid),
                nix::sys::signal::Signal::SIGKILL,
            );
        }
    }

    /// Peak memory, OOM kills and task-limit hits so far.
    pub fn stats(&self) -> CgroupStats {
        let mut stats = CgroupStats::default();
        match &self.memory {
            Some((LimitMechanism::CgroupV2, dir)) => {
                stats.peak_memory_bytes = number(&dir.join("memory.peak"));
                stats.oom_kills = keyed(&dir.join("memory.events"), "oom_kill").unwrap_or(0);
            }
            Some((_, dir)) => {
                stats.peak_memory_bytes = number(&dir.join("memory.max_usage_in_bytes"));
                stats.oom_kills = keyed(&dir.join("memory.oom_control"), "oom_kill").unwrap_or(0);
            }
            None => {}
        }
        if let Some((_, dir)) = &self.pids {
            stats.task_limit_hits = keyed(&dir.join("pids.events"), "max").unwrap_or(0);
        }
        stats
    }
}

impl Drop for RunCgroup {
    fn drop(&mut self) {
        self.procs.clear();
        for attempt in 0..50 {
            // EBUSY: processes are still leaving; anything else will not change by waiting.
            self.created.retain(|dir| match fs::remove_dir(dir) {
                Ok(()) => false,
                Err(e) => e.raw_os_error() == Some(libc::EBUSY),
            });
            if self.created.is_empty() {
                return;
            }
            self.kill_all();
            std::thread::sleep(Duration::from_millis(if attempt < 10 { 2 } else { 20 }));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MOUNTINFO: &str = "\
25 30 0:22 / /sys/fs/cgroup rw,nosuid - tmpfs tmpfs rw,mode=755
31 25 0:27 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory
32 25 0:28 / /sys/fs/cgroup/pids rw,relatime - cgroup cgroup rw,pids
33 25 0:29 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw
";
    const CGROUP: &str = "8:pids:/\n4:memory:/process_api/abc\n0::/\n";

    #[test]
    fn v1_dirs_nest_under_the_hosts_own_cgroup() {
        let found = discover_in(MOUNTINFO, CGROUP, None, &|_| true);
        assert_eq!(
            found.v1_memory,
            Some(PathBuf::from("/sys/fs/cgroup/memory/process_api/abc"))
        );
        assert_eq!(found.v1_pids, Some(PathBuf::from("/sys/fs/cgroup/pids")));
        assert_eq!(found.memory(), Some(LimitMechanism::CgroupV1));
        let none = discover_in(MOUNTINFO, CGROUP, None, &|_| false);
        assert_eq!(none.memory(), None);
        assert_eq!(none.tasks(), None);
    }

    #[test]
    fn a_v2_hierarchy_without_controllers_is_not_used() {
        // /sys/fs/cgroup/unified/cgroup.controllers does not exist in the test's view.
        let found = discover_in(MOUNTINFO, CGROUP, None, &|_| true);
        assert_eq!(found.v2_parent, None);
    }

    #[test]
    fn a_delegated_v2_parent_is_used_and_written_like_the_kernel_expects()
    -> Result<(), Box<dyn std::error::Error>> {
        let fake = tempfile::tempdir()?;
        let mount = fake.path();
        fs::write(mount.join("cgroup.controllers"), "cpu io memory pids\n")?;
        fs::write(mount.join("cgroup.subtree_control"), "")?;
        let parent = mount.join("delegated");
        fs::create_dir(&parent)?;
        fs::write(parent.join("cgroup.controllers"), "memory pids\n")?;
        fs::write(parent.join("cgroup.subtree_control"), "")?;
        let mountinfo = format!(
            "33 25 0:29 / {} rw,relatime - cgroup2 cgroup2 rw\n",
            mount.display()
        );
        let found = discover_in(&mountinfo, "0::/\n", Some(&parent), &|_| true);
        assert_eq!(found.v2_parent.as_deref(), Some(parent.as_path()));
        // A plain directory lacks the kernel's cgroup.procs, so creation stops there,
        // after writing the limits.
        let created = RunCgroup::create(&found, 1 << 20, 512);
        assert!(created.is_err_and(|e| e.contains("cgroup.procs")));
        let dir = fs::read_dir(&parent)?
            .flatten()
            .map(|e| e.path())
            .find(|p| p.is_dir())
            .ok_or("no run directory")?;
        let run = (
            fs::read_to_string(dir.join("memory.max"))?,
            fs::read_to_string(dir.join("pids.max"))?,
        );
        assert_eq!(run.0, "1048576");
        assert_eq!(run.1, "512");
        assert_eq!(
            fs::read_to_string(parent.join("cgroup.subtree_control"))?,
            "+memory +pids"
        );
        Ok(())
    }

    #[test]
    fn mountinfo_escapes_and_foreign_roots() {
        assert_eq!(unescape("/a\\040b"), PathBuf::from("/a b"));
        assert_eq!(
            own_dir(Path::new("/m"), "/docker/x", "/docker/x/sub"),
            Some(PathBuf::from("/m/sub"))
        );
        assert_eq!(own_dir(Path::new("/m"), "/docker/x", "/other"), None);
        assert_eq!(own_dir(Path::new("/m"), "/", "/../x"), None);
    }
}
