//! Finding skills under scan roots.
//!
//! **Threat.** Scan roots can hold anything: symlink loops, enormous trees, `node_modules`,
//! and directories a user cannot read.
//!
//! **Guarantee.** The scan is breadth-first and bounded (depth [`Discovery::max_depth`],
//! at most [`Discovery::max_directories`] directories a root); hidden entries, `.git` and
//! `node_modules` are skipped; directory symlinks are followed, but each real directory is
//! visited once, so a loop ends; entries are visited in byte order of name, so the result
//! is the same on every run and filesystem. A bad skill never stops the scan: the result is
//! every skill found plus every diagnostic.

use std::collections::{BTreeSet, VecDeque};
use std::fs;
use std::path::{Path, PathBuf};

use crate::diagnostic::{Diagnostic, Rule};
use crate::skill::{
    LoadOptions, SKILL_JSON, SKILL_MD, Skill, SkillReport, entry_files, load_listed, load_skill_dir,
};

/// The project-relative roots scanned by default.
pub const DEFAULT_PROJECT_ROOTS: &[&str] = &[".agents/skills", "skills"];

/// A configured scan over one or more roots.
///
/// ```
/// use skills_core::{Discovery, LoadOptions};
///
/// let project = tempfile::tempdir()?;
/// let skill = project.path().join(".agents/skills/greet");
/// std::fs::create_dir_all(&skill)?;
/// std::fs::write(skill.join("SKILL.md"), "---\nname: greet\ndescription: Greet people.\n---\n")?;
///
/// let report = Discovery::for_project(project.path(), LoadOptions::default()).run();
/// let names: Vec<&str> = report.skills().map(|s| s.name()).collect();
/// assert_eq!(names, ["greet"]);
/// # Ok::<(), std::io::Error>(())
/// ```
#[derive(Debug, Clone)]
pub struct Discovery {
    roots: Vec<PathBuf>,
    options: LoadOptions,
    max_depth: usize,
    max_directories: usize,
}

/// Everything a scan found.
#[derive(Debug, Clone, Default, PartialEq)]
#[non_exhaustive]
pub struct DiscoveryReport {
    /// One report per skill directory found, valid or not, in scan order.
    pub reports: Vec<SkillReport>,
    /// Diagnostics about the scan itself (missing roots, limits, cycles); each names the
    /// path concerned in [`Diagnostic::file`].
    pub diagnostics: Vec<Diagnostic>,
}

impl DiscoveryReport {
    /// The skills that loaded, in scan order.
    pub fn skills(&self) -> impl Iterator<Item = &Skill> {
        self.reports.iter().filter_map(|r| r.skill.as_ref())
    }

    /// The skills that loaded, by value.
    pub fn into_skills(self) -> Vec<Skill> {
        self.reports.into_iter().filter_map(|r| r.skill).collect()
    }

    /// True when every skill found is valid.
    pub fn all_valid(&self) -> bool {
        self.reports.iter().all(SkillReport::is_valid)
    }
}

impl Discovery {
    /// A scan with no roots yet.
    pub fn new(options: LoadOptions) -> Self {
        Discovery {
            roots: Vec::new(),
            options,
            max_depth: 6,
            max_directories: 2000,
        }
    }

    /// A scan of the default roots under `project` ([`DEFAULT_PROJECT_ROOTS`]).
    pub fn for_project(project: impl AsRef<Path>, options: LoadOptions) -> Self {
        let project = project.as_ref();
        DEFAULT_PROJECT_ROOTS
            .iter()
            .fold(Discovery::new(options), |d, root| {
                d.root(project.join(root))
            })
    }

    /// Adds a root; roots are scanned in the order added.
    #[must_use]
    pub fn root(mut self, path: impl Into<PathBuf>) -> Self {
        self.roots.push(path.into());
        self
    }

    /// The deepest level below a root at which a skill directory is looked for (default 6).
    #[must_use]
    pub fn max_depth(mut self, depth: usize) -> Self {
        self.max_depth = depth;
        self
    }

    /// The most directories visited under one root (default 2000).
    #[must_use]
    pub fn max_directories(mut self, count: usize) -> Self {
        self.max_directories = count;
        self
    }

    /// The roots, in scan order.
    pub fn roots(&self) -> &[PathBuf] {
        &self.roots
    }

    /// Runs the scan.
    pub fn run(&self) -> DiscoveryReport {
        let mut scan = Scan {
            discovery: self,
            visited: BTreeSet::new(),
            report: DiscoveryReport::default(),
        };
        for root in &self.roots {
            scan.root(root);
        }
        scan.report
    }
}

struct Scan<'a> {
    discovery: &'a Discovery,
    visited: BTreeSet<PathBuf>,
    report: DiscoveryReport,
}

impl Scan<'_> {
    fn note(&mut self, rule: Rule, path: &Path, message: String) {
        self.report.diagnostics.push(
            Diagnostic::new(rule, self.discovery.options.profile(), message)
                .in_file(path.display().to_string()),
        );
    }

    fn root(&mut self, root: &Path) {
        if !root.is_dir() {
            self.note(
                Rule::ScanRootMissing,
                root,
                format!("scan root `{}` is not a directory; skipped", root.display()),
            );
            return;
        }
        let mut queue = VecDeque::from([(root.to_path_buf(), 0usize)]);
        let mut directories = 0usize;
        let mut depth_noted = false;
        while let Some((dir, depth)) = queue.pop_front() {
            directories += 1;
            if directories > self.discovery.max_directories {
                self.note(
                    Rule::ScanDirectoryLimit,
                    root,
                    format!(
                        "stopped after {} directories under `{}`",
                        self.discovery.max_directories,
                        root.display()
                    ),
                );
                return;
            }
            let real = match fs::canonicalize(&dir) {
                Ok(real) => real,
                Err(err) => {
                    self.note(
                        Rule::ScanDirectoryUnreadable,
                        &dir,
                        format!("`{}` could not be resolved: {err}", dir.display()),
                    );
                    continue;
                }
            };
            if !self.visited.insert(real) {
                self.note(
                    Rule::ScanSymlinkCycle,
                    &dir,
                    format!(
                        "`{}` was already scanned by another path; skipped",
                        dir.display()
                    ),
                );
                continue;
            }
            match entry_files(&dir) {
                Ok(entries) if entries.is_skill() => {
                    let mut report = load_listed(&dir, &entries, &self.discovery.options);
                    report.root = Some(root.to_path_buf());
                    self.report.reports.push(report);
                    continue;
                }
                Ok(_) => {}
                Err(err) => {
                    self.note(
                        Rule::ScanDirectoryUnreadable,
                        &dir,
                        format!("`{}` could not be listed: {err}", dir.display()),
                    );
                    continue;
                }
            }
            for child in subdirectories(&dir) {
                if depth + 1 > self.discovery.max_depth {
                    if !depth_noted {
                        depth_noted = true;
                        self.note(
                            Rule::ScanDepthLimit,
                            &child,
                            format!(
                                "`{}` is deeper than {} levels below its root; not scanned",
                                child.display(),
                                self.discovery.max_depth
                            ),
                        );
                    }
                    continue;
                }
                queue.push_back((child, depth + 1));
            }
        }
    }
}

/// The subdirectories of `dir` worth scanning (directory symlinks included), in byte order
/// of name.
fn subdirectories(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut children: Vec<(std::ffi::OsString, PathBuf)> = entries
        .filter_map(Result::ok)
        .filter(|e| {
            let name = e.file_name();
            let name = name.as_encoded_bytes();
            !name.starts_with(b".") && name != b"node_modules"
        })
        .map(|e| (e.file_name(), e.path()))
        .filter(|(_, path)| path.is_dir())
        .collect();
    children.sort_unstable_by(|a, b| a.0.as_encoded_bytes().cmp(b.0.as_encoded_bytes()));
    children.into_iter().map(|(_, path)| path).collect()
}

/// Loads whatever `path` names: a skill directory, a `SKILL.md` (or `skill.json`) inside
/// one, or a root to scan. A path where no skill is found at all still gets one report
/// saying why, so every path given is accounted for.
///
/// ```
/// use skills_core::{load_path, LoadOptions};
///
/// let empty = tempfile::tempdir()?;
/// let report = load_path(empty.path(), &LoadOptions::default());
/// assert_eq!(report.reports.len(), 1);
/// assert_eq!(report.reports[0].diagnostics[0].code(), "no-skill-found");
/// # Ok::<(), std::io::Error>(())
/// ```
pub fn load_path(path: &Path, options: &LoadOptions) -> DiscoveryReport {
    let profile = options.profile();
    let single = |report| DiscoveryReport {
        reports: vec![report],
        diagnostics: Vec::new(),
    };
    let file_name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
    let names_entry = file_name.eq_ignore_ascii_case(SKILL_MD) || file_name == SKILL_JSON;
    if fs::symlink_metadata(path).is_err() {
        return single(SkillReport::problem(
            path,
            Rule::PathNotFound,
            profile,
            format!("path does not exist: {}", path.display()),
        ));
    }
    if names_entry {
        let parent = match path.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        };
        return single(load_skill_dir(&parent, options));
    }
    if !path.is_dir() {
        return single(SkillReport::problem(
            path,
            Rule::NoSkillFound,
            profile,
            format!(
                "`{}` is neither a skill directory, a SKILL.md, nor a directory to scan",
                path.display()
            ),
        ));
    }
    if let Ok(entries) = entry_files(path)
        && entries.is_skill()
    {
        return single(load_listed(path, &entries, options));
    }
    let mut report = Discovery::new(options.clone()).root(path).run();
    if report.reports.is_empty() {
        report.reports.push(SkillReport::problem(
            path,
            Rule::NoSkillFound,
            profile,
            format!("no SKILL.md or skill.json found under `{}`", path.display()),
        ));
    }
    report
}
