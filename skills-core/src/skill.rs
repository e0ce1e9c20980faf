//! Loading one skill directory.

use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::diagnostic::{Diagnostic, Profile, Rule, Sink, has_errors};
use crate::error::Error;
use crate::files::{self, FileLimits, SkillFile};
use crate::manifest::{ManifestOptions, SkillManifest, ToolDefinition, strip_prefix};
use crate::skill_md::{ParseOptions, SkillMd};
use crate::status::SkillStatus;

/// The entry file's exact name.
pub const SKILL_MD: &str = "SKILL.md";
/// The manifest's exact name.
pub const SKILL_JSON: &str = "skill.json";

/// How to load skills.
///
/// ```
/// use skills_core::{LoadOptions, Profile};
///
/// let options = LoadOptions::for_profile(Profile::Spec);
/// assert_eq!(options.profile(), Profile::Spec);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct LoadOptions {
    /// How to read SKILL.md; its `profile` is the profile of the whole load.
    pub parse: ParseOptions,
    /// How to read skill.json.
    pub manifest: ManifestOptions,
    /// Limits on supporting files.
    pub files: FileLimits,
    /// SKILL.md files larger than this are not read ([`Rule::SkillMdTooLarge`]; 4 MiB).
    pub max_skill_md_bytes: u64,
    /// skill.json files larger than this are not read (1 MiB).
    pub max_manifest_bytes: u64,
}

impl Default for LoadOptions {
    fn default() -> Self {
        LoadOptions::new()
    }
}

impl LoadOptions {
    /// Default options under `profile`.
    pub fn for_profile(profile: Profile) -> Self {
        LoadOptions {
            parse: ParseOptions::for_profile(profile),
            ..LoadOptions::new()
        }
    }

    /// Default options (Lenient).
    pub fn new() -> Self {
        LoadOptions {
            parse: ParseOptions::default(),
            manifest: ManifestOptions::default(),
            files: FileLimits::default(),
            max_skill_md_bytes: 4 * 1024 * 1024,
            max_manifest_bytes: 1024 * 1024,
        }
    }

    /// The profile in force.
    pub fn profile(&self) -> Profile {
        self.parse.profile
    }
}

/// A loaded, valid skill: from a SKILL.md, a skill.json, or both.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Skill {
    name: String,
    description: String,
    dir: PathBuf,
    skill_md_path: Option<PathBuf>,
    skill_md: Option<SkillMd>,
    skill_md_sha256: Option<String>,
    manifest: Option<SkillManifest>,
    files: Vec<SkillFile>,
    digest: String,
    #[serde(skip)]
    openai: Option<crate::extensions::OpenAiSidecar>,
}

/// The largest `agents/openai.yaml` read.
const MAX_SIDECAR_BYTES: u64 = 64 * 1024;

/// Reads Codex's `agents/openai.yaml` when the walk listed it (a contained regular file).
fn read_sidecar(dir: &Path, files: &[SkillFile]) -> Option<crate::extensions::OpenAiSidecar> {
    use std::io::Read;
    let listed = files
        .iter()
        .find(|f| f.path == crate::extensions::OPENAI_SIDECAR)?;
    if listed.size > MAX_SIDECAR_BYTES {
        return None;
    }
    let (file, _) = files::open_regular(&dir.join(crate::extensions::OPENAI_SIDECAR)).ok()?;
    let mut text = String::new();
    file.take(MAX_SIDECAR_BYTES)
        .read_to_string(&mut text)
        .ok()?;
    crate::extensions::OpenAiSidecar::parse(&text)
}

impl Skill {
    /// Codex's `agents/openai.yaml`, when the skill has a readable one.
    pub fn openai_sidecar(&self) -> Option<&crate::extensions::OpenAiSidecar> {
        self.openai.as_ref()
    }

    /// Whether the model may pick the skill by itself: not when its frontmatter sets
    /// `disable-model-invocation: true` or its `agents/openai.yaml` sets
    /// `policy.allow_implicit_invocation: false`. Such a skill stays out of the model's
    /// catalog; a user (or a request by name) still invokes it.
    pub fn model_invocable(&self) -> bool {
        self.skill_md
            .as_ref()
            .is_none_or(|md| md.frontmatter.model_invocable())
            && self
                .openai
                .as_ref()
                .and_then(|o| o.allow_implicit_invocation)
                != Some(false)
    }

    /// The tools the skill needs: its frontmatter's `requires-tools`, then the
    /// `dependencies.tools` of its `agents/openai.yaml` (Codex), each once, in that order.
    pub fn required_tools(&self) -> Vec<String> {
        let from_front = self
            .skill_md
            .as_ref()
            .map(|md| md.frontmatter.requires_tools.as_slice())
            .unwrap_or_default();
        let from_sidecar = self
            .openai
            .as_ref()
            .map(|o| o.dependency_tools.as_slice())
            .unwrap_or_default();
        crate::extensions::merge_tools(from_front, from_sidecar)
    }

    /// Loads the skill in `dir`, or fails with every diagnostic.
    ///
    /// ```no_run
    /// use skills_core::{LoadOptions, Skill};
    ///
    /// let skill = Skill::load("skills/pdf-tools", &LoadOptions::default())?;
    /// println!("{}: {}", skill.name(), skill.description());
    /// # Ok::<(), skills_core::Error>(())
    /// ```
    pub fn load(dir: impl AsRef<Path>, options: &LoadOptions) -> Result<Skill, Error> {
        let report = load_skill_dir(dir.as_ref(), options);
        report.skill.ok_or(Error::Invalid {
            diagnostics: report.diagnostics,
        })
    }

    /// The skill's name (from SKILL.md, else the manifest's `<skill_name>`).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// What the skill does and when to use it.
    pub fn description(&self) -> &str {
        &self.description
    }

    /// The skill directory, as found (not canonicalised).
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The path of SKILL.md, when the skill has one.
    pub fn skill_md_path(&self) -> Option<&Path> {
        self.skill_md_path.as_deref()
    }

    /// The parsed SKILL.md, when the skill has one.
    pub fn skill_md(&self) -> Option<&SkillMd> {
        self.skill_md.as_ref()
    }

    /// Lowercase hex SHA-256 of SKILL.md's bytes as stored, when the skill has one.
    pub fn skill_md_sha256(&self) -> Option<&str> {
        self.skill_md_sha256.as_deref()
    }

    /// The skill.json manifest, when the skill has one.
    pub fn manifest(&self) -> Option<&SkillManifest> {
        self.manifest.as_ref()
    }

    /// Every supporting file (everything but SKILL.md), sorted by path.
    pub fn files(&self) -> &[SkillFile] {
        &self.files
    }

    /// The stable digest of the whole skill; see [`files::skill_digest`].
    pub fn digest(&self) -> &str {
        &self.digest
    }

    /// The layer from the manifest, if any.
    pub fn layer(&self) -> Option<u8> {
        self.manifest.as_ref().map(|m| m.layer)
    }

    /// The skills this one depends on (from the manifest).
    pub fn dependencies(&self) -> &[String] {
        self.manifest
            .as_ref()
            .map_or(&[], |m| m.dependencies.as_slice())
    }

    /// The lifecycle status: the manifest's `status`, else a SKILL.md `metadata.status`
    /// (see [`STATUS_METADATA_KEY`](crate::STATUS_METADATA_KEY)) naming one of the four
    /// statuses; `None` when neither says (an active skill).
    pub fn status(&self) -> Option<SkillStatus> {
        self.manifest.as_ref().and_then(|m| m.status).or_else(|| {
            self.skill_md
                .as_ref()
                .and_then(|md| md.frontmatter.metadata.get(crate::STATUS_METADATA_KEY))
                .and_then(|word| word.parse().ok())
        })
    }

    /// The agent focuses the manifest says this skill suits (seed 001 `focus_affinity`).
    pub fn focus_affinity(&self) -> &[String] {
        self.manifest
            .as_ref()
            .map_or(&[], |m| m.focus_affinity.as_slice())
    }

    /// The tools the manifest defines.
    pub fn tools(&self) -> &[ToolDefinition] {
        self.manifest.as_ref().map_or(&[], |m| m.tools.as_slice())
    }
}

/// What loading one skill directory found.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct SkillReport {
    /// The skill directory examined (or the path given, when there was none).
    pub path: PathBuf,
    /// The scan root it was found under, when it was found by [`Discovery`](crate::Discovery).
    pub root: Option<PathBuf>,
    /// The name as read, when one could be read (even if the skill is invalid).
    pub name: Option<String>,
    /// The description as read, when one could be read.
    pub description: Option<String>,
    /// The skill, present exactly when no diagnostic is an error.
    pub skill: Option<Skill>,
    /// Every diagnostic, in the order found.
    pub diagnostics: Vec<Diagnostic>,
}

impl SkillReport {
    /// A report of one problem about `path`.
    pub(crate) fn problem(path: &Path, rule: Rule, profile: Profile, message: String) -> Self {
        SkillReport {
            path: path.to_path_buf(),
            root: None,
            name: None,
            description: None,
            skill: None,
            diagnostics: vec![Diagnostic::new(rule, profile, message)],
        }
    }

    /// True when a skill was loaded (no error diagnostics).
    pub fn is_valid(&self) -> bool {
        self.skill.is_some()
    }

    /// The description's length in characters, as the description rule counts it.
    pub fn description_len(&self) -> Option<usize> {
        self.description.as_ref().map(|d| d.chars().count())
    }
}

/// What a directory holds that makes it a skill.
#[derive(Debug, Default)]
pub(crate) struct EntryFiles {
    /// The SKILL.md-like entry (`SKILL.md`, else a case variant such as `skill.md`).
    pub skill_md: Option<String>,
    pub skill_json: bool,
}

impl EntryFiles {
    pub(crate) fn is_skill(&self) -> bool {
        self.skill_md.is_some() || self.skill_json
    }
}

/// Lists `dir` for entry files, by exact name (so a case-insensitive filesystem cannot turn
/// `skill.md` into `SKILL.md`).
pub(crate) fn entry_files(dir: &Path) -> std::io::Result<EntryFiles> {
    let mut found = EntryFiles::default();
    let mut variant: Option<String> = None;
    for entry in fs::read_dir(dir)? {
        let Ok(entry) = entry else { continue };
        let name = entry.file_name();
        let Some(name) = name.to_str() else { continue };
        if name == SKILL_MD {
            found.skill_md = Some(SKILL_MD.to_owned());
        } else if name.eq_ignore_ascii_case(SKILL_MD) {
            variant = Some(variant.map_or(name.to_owned(), |v| v.min(name.to_owned())));
        } else if name == SKILL_JSON {
            found.skill_json = true;
        }
    }
    if found.skill_md.is_none() {
        found.skill_md = variant;
    }
    Ok(found)
}

/// Loads the skill directory `dir`: SKILL.md and/or skill.json, every rule, the supporting
/// files and the digests. Never panics; every problem is a diagnostic in the report.
///
/// ```
/// use skills_core::{load_skill_dir, LoadOptions};
///
/// let dir = tempfile::tempdir()?;
/// let skill_dir = dir.path().join("hello");
/// std::fs::create_dir(&skill_dir)?;
/// std::fs::write(skill_dir.join("SKILL.md"), "---\nname: hello\ndescription: Say hello.\n---\nSay hello.\n")?;
/// let report = load_skill_dir(&skill_dir, &LoadOptions::default());
/// assert!(report.is_valid());
/// assert_eq!(report.skill.unwrap().name(), "hello");
/// # Ok::<(), std::io::Error>(())
/// ```
pub fn load_skill_dir(dir: &Path, options: &LoadOptions) -> SkillReport {
    let profile = options.profile();
    if dir.exists() && !dir.is_dir() {
        return SkillReport::problem(
            dir,
            Rule::NoSkillFound,
            profile,
            format!("`{}` is not a directory", dir.display()),
        );
    }
    let entries = match entry_files(dir) {
        Ok(entries) => entries,
        Err(err) => {
            let rule = if dir.exists() {
                Rule::SkillMdUnreadable
            } else {
                Rule::PathNotFound
            };
            return SkillReport::problem(
                dir,
                rule,
                profile,
                format!(
                    "`{}` cannot be read as a skill directory: {err}",
                    dir.display()
                ),
            );
        }
    };
    if !entries.is_skill() {
        let mut report = SkillReport::problem(
            dir,
            Rule::SkillMdMissing,
            profile,
            "missing required file: SKILL.md".to_owned(),
        );
        report.diagnostics[0].file = Some(SKILL_MD.to_owned());
        return report;
    }
    load_listed(dir, &entries, options)
}

/// Loads a skill directory whose entry files the caller has already listed (discovery does,
/// to decide that it is a skill), so the directory is not listed twice.
pub(crate) fn load_listed(dir: &Path, entries: &EntryFiles, options: &LoadOptions) -> SkillReport {
    Loader::new(dir, options).load(entries)
}

/// With a skill.json beside it, a SKILL.md without frontmatter is seed 001's optional
/// documentation, not a broken Agent Skill.
fn documentation_only(diagnostics: &mut [Diagnostic], profile: Profile) {
    for d in diagnostics.iter_mut() {
        if d.rule == Rule::FrontmatterMissing {
            *d = Diagnostic::new(
                Rule::SkillMdDocumentationOnly,
                profile,
                "SKILL.md has no frontmatter; skill.json defines the skill and SKILL.md is read as its documentation",
            )
            .at_optional_line(d.line);
        }
    }
}

struct Loader<'a> {
    dir: &'a Path,
    canonical_dir: Option<PathBuf>,
    dir_name: String,
    options: &'a LoadOptions,
    diagnostics: Vec<Diagnostic>,
}

impl<'a> Loader<'a> {
    fn new(dir: &'a Path, options: &'a LoadOptions) -> Self {
        let canonical_dir = fs::canonicalize(dir).ok();
        // The directory's own name as found; `.` and `..` fall back to the real name.
        let dir_name = dir
            .file_name()
            .or_else(|| canonical_dir.as_deref().and_then(Path::file_name))
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        Loader {
            dir,
            canonical_dir,
            dir_name,
            options,
            diagnostics: Vec::new(),
        }
    }

    fn push(&mut self, rule: Rule, file: &str, message: String) {
        self.diagnostics
            .push(Diagnostic::new(rule, self.options.profile(), message).in_file(file));
    }

    fn load(mut self, entries: &EntryFiles) -> SkillReport {
        let profile = self.options.profile();
        let mut skill_md = None;
        let mut skill_md_bytes = None;
        let mut name = None;
        let mut description = None;
        if let Some(file_name) = &entries.skill_md {
            if file_name != SKILL_MD {
                self.push(
                    Rule::SkillMdLowercase,
                    file_name,
                    format!("the entry file must be named exactly `SKILL.md`, not `{file_name}`"),
                );
            }
            if let Some(bytes) = self.read_entry(file_name, self.options.max_skill_md_bytes) {
                let mut parsed = SkillMd::parse(&bytes, Some(&self.dir_name), &self.options.parse);
                if entries.skill_json {
                    documentation_only(&mut parsed.diagnostics, profile);
                }
                for d in parsed.diagnostics {
                    self.diagnostics.push(d.in_file(file_name.as_str()));
                }
                if let Some(doc) = parsed.document {
                    if !doc.frontmatter.name.is_empty() {
                        name = Some(doc.frontmatter.name.clone());
                    }
                    description = Some(doc.frontmatter.description.clone());
                    skill_md = Some(doc);
                }
                skill_md_bytes = Some(bytes);
            }
        }
        let mut manifest = None;
        let manifest_bytes = if entries.skill_json {
            self.read_entry(SKILL_JSON, self.options.max_manifest_bytes)
        } else {
            None
        };
        let manifest_refused = entries.skill_json && manifest_bytes.is_none();
        if let Some(bytes) = manifest_bytes {
            let parsed = SkillManifest::parse(
                &bytes,
                Some(&self.dir_name),
                &self.options.manifest,
                profile,
            );
            self.diagnostics.extend(parsed.diagnostics);
            let prefix = &self.options.manifest.prefix;
            let json_name = parsed
                .name
                .as_deref()
                .map(|n| strip_prefix(n, prefix).unwrap_or(n).to_owned());
            match (&name, &json_name) {
                // Seed 001 names skills in snake_case, the Agent Skills standard in
                // kebab-case: `web_search` and `web-search` are the same skill.
                (Some(md), Some(json)) if md.replace('_', "-") != json.replace('_', "-") => self
                    .push(
                        Rule::ManifestNameDisagrees,
                        SKILL_JSON,
                        format!("SKILL.md names the skill `{md}` but skill.json names it `{json}`"),
                    ),
                (None, Some(json)) if skill_md.is_none() => name = Some(json.clone()),
                _ => {}
            }
            if description.is_none() {
                description.clone_from(&parsed.description);
            }
            manifest = parsed.manifest;
        }

        let mut files = Vec::new();
        if let Some(canonical_dir) = self.canonical_dir.clone() {
            // Entry files are examined (and reported on) once, above.
            let mut skip: Vec<&str> = entries.skill_md.iter().map(String::as_str).collect();
            if entries.skill_json && manifest_refused {
                skip.push(SKILL_JSON);
            }
            let mut sink = Sink::new(profile, None);
            files = files::walk(
                self.dir,
                &canonical_dir,
                &skip,
                &self.options.files,
                &mut sink,
            );
            self.diagnostics.extend(sink.items);
        }
        let skill_md_sha256 = skill_md_bytes.as_deref().map(files::sha256_hex);
        let entry_name = entries.skill_md.clone().unwrap_or_default();
        let mut records: Vec<(&str, u64, &str)> = files
            .iter()
            .map(|f| (f.path.as_str(), f.size, f.sha256.as_str()))
            .collect();
        if let (Some(sha), Some(bytes)) = (&skill_md_sha256, &skill_md_bytes) {
            records.push((entry_name.as_str(), bytes.len() as u64, sha.as_str()));
        }
        let total: u64 = records.iter().map(|r| r.1).sum();
        if total > self.options.files.max_skill_bytes {
            self.push(
                Rule::SkillTooLarge,
                ".",
                format!(
                    "the skill's files total {total} bytes; the per-skill limit is {}",
                    self.options.files.max_skill_bytes
                ),
            );
        }
        let digest = files::skill_digest(records);
        let openai = self
            .canonical_dir
            .as_deref()
            .and_then(|dir| read_sidecar(dir, &files));

        let skill = if has_errors(&self.diagnostics) {
            None
        } else {
            name.clone().map(|skill_name| Skill {
                name: skill_name,
                description: description.clone().unwrap_or_default(),
                dir: self.dir.to_path_buf(),
                skill_md_path: entries.skill_md.as_ref().map(|f| self.dir.join(f)),
                skill_md,
                skill_md_sha256,
                manifest,
                files,
                digest,
                openai,
            })
        };
        SkillReport {
            path: self.dir.to_path_buf(),
            root: None,
            name,
            description,
            skill,
            diagnostics: self.diagnostics,
        }
    }

    /// Reads an entry file, refusing symlinks out of the skill, non-files and oversized files.
    fn read_entry(&mut self, file_name: &str, max_bytes: u64) -> Option<Vec<u8>> {
        let path = self.dir.join(file_name);
        let (too_large, unreadable, not_file) = if file_name == SKILL_JSON {
            (
                Rule::ManifestUnreadable,
                Rule::ManifestUnreadable,
                Rule::ManifestUnreadable,
            )
        } else {
            (
                Rule::SkillMdTooLarge,
                Rule::SkillMdUnreadable,
                Rule::SkillMdNotFile,
            )
        };
        let is_link = fs::symlink_metadata(&path).is_ok_and(|m| m.file_type().is_symlink());
        if is_link {
            let target = match fs::canonicalize(&path) {
                Ok(target) => target,
                Err(err) => {
                    self.push(
                        unreadable,
                        file_name,
                        format!("`{file_name}` is a symlink that cannot be resolved: {err}"),
                    );
                    return None;
                }
            };
            if !self
                .canonical_dir
                .as_ref()
                .is_some_and(|dir| target.starts_with(dir))
            {
                let rule = if file_name == SKILL_JSON {
                    Rule::ManifestUnreadable
                } else {
                    Rule::SkillMdSymlinkEscape
                };
                self.push(
                    rule,
                    file_name,
                    format!(
                        "`{file_name}` is a symlink to `{}`, outside the skill directory; it is not read",
                        target.display()
                    ),
                );
                return None;
            }
        }
        // Refuse non-files on their metadata, before opening them: opening some devices has
        // side effects. `open_regular` checks again on the open file.
        match fs::metadata(&path) {
            Ok(meta) if !meta.is_file() => {
                let what = if meta.is_dir() {
                    "a directory"
                } else {
                    "not a regular file"
                };
                self.push(not_file, file_name, format!("`{file_name}` is {what}"));
                return None;
            }
            _ => {}
        }
        let (file, len) = match files::open_regular(&path) {
            Ok(opened) => opened,
            Err(err) if err.kind() == std::io::ErrorKind::InvalidInput => {
                self.push(
                    not_file,
                    file_name,
                    format!("`{file_name}` is not a readable file: {err}"),
                );
                return None;
            }
            Err(err) => {
                self.push(
                    unreadable,
                    file_name,
                    format!("`{file_name}` could not be read: {err}"),
                );
                return None;
            }
        };
        if len > max_bytes {
            self.push(
                too_large,
                file_name,
                format!("`{file_name}` is {len} bytes; files over {max_bytes} bytes are not read"),
            );
            return None;
        }
        let mut bytes = Vec::with_capacity(usize::try_from(len).unwrap_or(0));
        // The file may grow after the size check; never read past the limit.
        match file
            .take(max_bytes.saturating_add(1))
            .read_to_end(&mut bytes)
        {
            Ok(_) if bytes.len() as u64 > max_bytes => {
                self.push(
                    too_large,
                    file_name,
                    format!("`{file_name}` is over {max_bytes} bytes and is not read"),
                );
                None
            }
            Ok(_) => Some(bytes),
            Err(err) => {
                self.push(
                    unreadable,
                    file_name,
                    format!("`{file_name}` could not be read: {err}"),
                );
                None
            }
        }
    }
}
