//! What a run needs before its launch, prepared in the parent: the program (the script
//! opened once beneath the skill root and hashed, its interpreter), the skill mirror's
//! entries, the reachability checks of root hosts, C strings, and descriptors kept clear of
//! the standard stream numbers.

use std::ffi::{CString, OsStr, OsString};
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use nix::fcntl::{OFlag, openat};
use nix::sys::stat::Mode;

use super::run::RunPlan;
use super::script::{Interpreter, OpenedScript, check_relative, open_beneath, open_root};
use super::{Program, ScriptError, Status};

/// Most entries the mirror of a skill directory may have along a script's path.
pub(crate) const MAX_MIRROR_ENTRIES: usize = 10_000;

pub(crate) fn refused(reason: impl Into<String>) -> Status {
    Status::Refused {
        reason: reason.into(),
    }
}

pub(crate) fn launch_error(reason: impl Into<String>) -> Status {
    Status::LaunchError {
        reason: reason.into(),
    }
}

pub(crate) fn unavailable(reason: impl Into<String>) -> Status {
    Status::SandboxUnavailable {
        reason: reason.into(),
    }
}

/// Finds `name` in `dirs` (never the host's `PATH`).
pub(crate) fn which(dirs: &[PathBuf], name: &str) -> Option<PathBuf> {
    dirs.iter().map(|dir| dir.join(name)).find(|p| p.is_file())
}

/// The program of a run, resolved.
pub(crate) struct Prepared {
    pub skill_root: PathBuf,
    pub skill_fd: OwnedFd,
    pub program: PathBuf,
    /// Interpreter flags, before the script.
    pub fixed_args: Vec<OsString>,
    /// The script's path relative to the skill root, and what was read and hashed.
    pub script: Option<(Vec<String>, OpenedScript)>,
}

/// Checks what the request gives the script besides the program: argument and stdin
/// sizes, and the input files' names, count and total size (see [`super::InputFile`]).
pub(crate) fn check_inputs(request: &super::SandboxRequest) -> Result<(), Status> {
    let args: usize = request.args.iter().map(|a| a.len() + 1).sum();
    if args > super::MAX_ARGS_BYTES {
        return Err(refused(format!(
            "the arguments take {args} bytes; at most {} are allowed",
            super::MAX_ARGS_BYTES
        )));
    }
    if request.stdin.len() > super::MAX_STDIN_BYTES {
        return Err(refused(format!(
            "standard input is {} bytes; at most {} are allowed",
            request.stdin.len(),
            super::MAX_STDIN_BYTES
        )));
    }
    let files = &request.input_files;
    if files.len() > super::MAX_INPUT_FILES {
        return Err(refused(format!(
            "{} input files; at most {} are allowed",
            files.len(),
            super::MAX_INPUT_FILES
        )));
    }
    let mut names = std::collections::BTreeSet::new();
    let mut total: u64 = 0;
    for file in files {
        let name = &file.name;
        // Nothing a person could not see: what `neutralize` would escape (controls, bidi
        // overrides, zero-width and other invisible characters) is refused.
        let plain = !name.is_empty()
            && name.len() <= 128
            && name != "."
            && name != ".."
            && !name
                .chars()
                .any(|c| c == '/' || c == '\\' || c.is_control())
            && super::neutralize(name.as_bytes()) == *name;
        if !plain {
            return Err(refused(format!(
                "the input file name `{}` is not one plain path component",
                super::neutralize(name.as_bytes())
            )));
        }
        if !names.insert(name.as_str()) {
            return Err(refused(format!(
                "the input file name `{}` is given twice",
                super::neutralize(name.as_bytes())
            )));
        }
        total = total.saturating_add(file.bytes.len() as u64);
    }
    // The inputs live on the scratch tmpfs: they must leave the script room to work.
    if total > request.config.max_scratch_bytes / 2 {
        return Err(refused(format!(
            "the input files hold {total} bytes; at most half the scratch cap ({} bytes) is allowed",
            request.config.max_scratch_bytes / 2
        )));
    }
    Ok(())
}

/// Resolves the request's program (see the module docs).
pub(crate) fn prepare(plan: &RunPlan) -> Result<Prepared, Status> {
    let request = &plan.request;
    check_inputs(request)?;
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
                    ScriptError::UnsupportedInterpreter
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
            if let Some(hook) = &plan.after_hash {
                let mut host_path = skill_root.clone();
                host_path.extend(&parts);
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
                script: Some((parts.iter().map(|p| (*p).to_owned()).collect(), opened)),
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

/// The scratch root may not let anyone else replace the run's directory (or rename it
/// away, which would detach the run's tmpfs): not writable by group or others unless
/// sticky, like `/tmp`.
pub(crate) fn check_scratch_root(root: &Path) -> Result<(), Status> {
    let meta = std::fs::metadata(root)
        .map_err(|e| launch_error(format!("the scratch root {}: {e}", root.display())))?;
    let shared = meta.mode() & 0o022 != 0;
    let sticky = meta.mode() & 0o1000 != 0;
    if shared && !sticky {
        return Err(refused(format!(
            "the scratch root {} is writable by others without the sticky bit (anyone could replace a run's directory); use a private or sticky directory",
            root.display()
        )));
    }
    Ok(())
}

/// Root hosts: the fresh uid must be able to reach the skill and the scratch directory.
pub(crate) fn check_reachable(
    prepared: &Prepared,
    scratch_root: &Path,
    can_read_files: bool,
) -> Result<(), Status> {
    let other_can =
        |path: &Path, bits: u32| std::fs::metadata(path).is_ok_and(|m| m.mode() & bits == bits);
    let traversable = |path: &Path| path.ancestors().all(|a| other_can(a, 0o001));
    let unreachable = |what: &str, path: &Path, extra: &str| {
        launch_error(format!(
            "the sandbox user cannot reach the {what} {}: every directory on the way needs o+x{extra} (the host is root, the script runs as an unprivileged uid)",
            path.display(),
        ))
    };
    if can_read_files
        && (!traversable(&prepared.skill_root) || !other_can(&prepared.skill_root, 0o005))
    {
        return Err(unreachable(
            "skill directory",
            &prepared.skill_root,
            " and the skill directory o+r",
        ));
    }
    if !traversable(scratch_root) {
        return Err(unreachable("scratch directory", scratch_root, ""));
    }
    Ok(())
}

/// The skill mirror (see `child`): owned C strings the child's entries borrow.
pub(crate) struct Mirror {
    /// `(path in the tmpfs, link target)`; no target: a directory.
    pub entries: Vec<(CString, Option<CString>)>,
    /// The approved copy's path in the tmpfs.
    pub script: CString,
}

fn names(dir: BorrowedFd<'_>) -> Result<Vec<Vec<u8>>, Status> {
    let fd = openat(
        dir,
        c".",
        OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_CLOEXEC,
        Mode::empty(),
    )
    .map_err(|e| launch_error(format!("cannot list the skill directory: {e}")))?;
    let mut listing = nix::dir::Dir::from_fd(fd)
        .map_err(|e| launch_error(format!("cannot list the skill directory: {e}")))?;
    let mut names: Vec<Vec<u8>> = listing
        .iter()
        .flatten()
        .map(|e| e.file_name().to_bytes().to_vec())
        .filter(|n| n != b"." && n != b"..")
        .collect();
    names.sort();
    Ok(names)
}

/// Lists the skill directory along the script's path (beneath the root's descriptor,
/// without following symlinks) into mirror entries under `skill/`.
pub(crate) fn mirror(
    skill_root: &Path,
    skill_fd: BorrowedFd<'_>,
    parts: &[String],
) -> Result<Mirror, Status> {
    let too_many = || {
        launch_error(format!(
            "the skill's directories on the script's path hold more than {MAX_MIRROR_ENTRIES} entries"
        ))
    };
    let mut entries = vec![(c"skill".to_owned(), None)];
    let mut inside = b"skill".to_vec();
    let mut host = skill_root.as_os_str().as_bytes().to_vec();
    let mut current: Option<OwnedFd> = None;
    let Some((last, dirs)) = parts.split_last() else {
        return Err(refused("empty script path"));
    };
    for (i, part) in parts.iter().enumerate() {
        let dir = current.as_ref().map_or(skill_fd, AsFd::as_fd);
        for name in names(dir)? {
            if name == part.as_bytes() {
                continue;
            }
            let path = [inside.as_slice(), b"/", &name].concat();
            let target = [host.as_slice(), b"/", &name].concat();
            entries.push((cstring(&path)?, Some(cstring(&target)?)));
            if entries.len() > MAX_MIRROR_ENTRIES {
                return Err(too_many());
            }
        }
        if i < dirs.len() {
            inside.extend_from_slice(b"/");
            inside.extend_from_slice(part.as_bytes());
            host.extend_from_slice(b"/");
            host.extend_from_slice(part.as_bytes());
            entries.push((cstring(&inside)?, None));
            let next = openat(
                dir,
                part.as_str(),
                OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC,
                Mode::empty(),
            )
            .map_err(|e| launch_error(format!("cannot open the skill directory: {e}")))?;
            current = Some(next);
        }
    }
    let script = cstring(&[inside.as_slice(), b"/", last.as_bytes()].concat())?;
    Ok(Mirror { entries, script })
}

pub(crate) fn cstring(bytes: &[u8]) -> Result<CString, Status> {
    CString::new(bytes).map_err(|_| refused("an argument or path contains a NUL byte"))
}

pub(crate) fn env(name: &str, value: &OsStr) -> Result<CString, Status> {
    cstring(&[name.as_bytes(), b"=", value.as_bytes()].concat())
}

/// The highest capability number on this kernel.
pub(crate) fn last_cap() -> u32 {
    std::fs::read_to_string("/proc/sys/kernel/cap_last_cap")
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(63)
}

/// `fd`, moved above the standard stream numbers if it landed on one (a host that closed
/// its stdio): the child connects its own streams to 0-2 and would overwrite it.
pub(crate) fn lift(fd: OwnedFd) -> Result<OwnedFd, Status> {
    if fd.as_raw_fd() > 2 {
        return Ok(fd);
    }
    // F_DUPFD_CLOEXEC from 3.
    fd.try_clone()
        .map_err(|e| launch_error(format!("cannot move a descriptor: {e}")))
}

/// A sealed, read-only in-memory copy of the script (runs without a mount namespace).
pub(crate) fn sealed_copy(bytes: &[u8]) -> Result<OwnedFd, String> {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_mirror_links_every_sibling_and_holds_the_script_path()
    -> Result<(), Box<dyn std::error::Error>> {
        let dir = tempfile::tempdir()?;
        let root = dir.path().canonicalize()?;
        std::fs::create_dir_all(root.join("scripts/lib"))?;
        std::fs::write(root.join("SKILL.md"), "x")?;
        std::fs::write(root.join("scripts/run.sh"), "x")?;
        std::fs::write(root.join("scripts/helper.sh"), "x")?;
        std::fs::create_dir(root.join("references"))?;
        let fd = nix::fcntl::open(&root, OFlag::O_RDONLY | OFlag::O_DIRECTORY, Mode::empty())?;
        let parts = vec!["scripts".to_owned(), "run.sh".to_owned()];
        let mirror = mirror(&root, fd.as_fd(), &parts).map_err(|e| format!("{e:?}"))?;
        let shown: Vec<(String, Option<String>)> = mirror
            .entries
            .iter()
            .map(|(p, t)| {
                (
                    p.to_string_lossy().into_owned(),
                    t.as_ref().map(|t| t.to_string_lossy().into_owned()),
                )
            })
            .collect();
        let r = root.display();
        assert_eq!(
            shown,
            vec![
                ("skill".to_owned(), None),
                ("skill/SKILL.md".to_owned(), Some(format!("{r}/SKILL.md"))),
                (
                    "skill/references".to_owned(),
                    Some(format!("{r}/references"))
                ),
                ("skill/scripts".to_owned(), None),
                (
                    "skill/scripts/helper.sh".to_owned(),
                    Some(format!("{r}/scripts/helper.sh"))
                ),
                (
                    "skill/scripts/lib".to_owned(),
                    Some(format!("{r}/scripts/lib"))
                ),
            ]
        );
        assert_eq!(mirror.script.to_str()?, "skill/scripts/run.sh");
        Ok(())
    }
}
