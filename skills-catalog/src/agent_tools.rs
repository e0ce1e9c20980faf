//! The tools an agent calls to reach its skills: `use_skill` (seed 002 section 8.2) and
//! `read_skill_file`.
//!
//! Threat: a model asks for `../../etc/passwd`, an absolute path, or a file a symlink inside
//! a repo skill leads out of; or error messages hand it the host's filesystem layout.
//! Guarantee: `read_skill_file` serves only regular text files inside the skill's root
//! (after resolving symlinks), under a size cap; stored skills are read from the store, not
//! the disk; error messages name the skill and the relative path only.

use std::io::Read;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

use serde_json::{Value, json};
use skills_core::tools::{Tool, ToolAnnotations, ToolError};
use skills_store_traits::{SkillStore, TenantId};

use crate::resolve::{Resolution, ResolvedSkill};
use crate::sandbox::DEFAULT_SANDBOX_SKILLS_DIR;

/// The `use_skill` tool's name.
pub const USE_SKILL: &str = "use_skill";
/// The `read_skill_file` tool's name.
pub const READ_SKILL_FILE: &str = "read_skill_file";

/// The reply when the agent has no skills at all (seed 002 section 8.2, verbatim).
pub const NO_SKILLS: &str = "No skills available. Skills can be installed by an admin from the skill catalog, contributed by plugins, or discovered from SKILL.md files in project repos.";

/// The largest file `read_skill_file` returns by default (256 KiB).
pub const DEFAULT_MAX_READ_BYTES: u64 = 256 * 1024;

/// `use_skill`'s description (seed 002 section 8.2) for a sandbox skills directory.
pub fn use_skill_description(sandbox_dir: &str) -> String {
    format!(
        "Look up a skill by name and get its location and file listing. For sandbox-installed skills, returns the path to the skill directory in {}/. For project skills, returns the path in the project tree. Use read_file to load the SKILL.md and any supporting files you need.",
        sandbox_dir.trim_end_matches('/')
    )
}

/// `use_skill`'s input schema: `skill_name`, the only (and required) parameter.
pub fn use_skill_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "skill_name": {
                "type": "string",
                "description": "The skill's name or slug (case-insensitive)."
            }
        },
        "required": ["skill_name"],
        "additionalProperties": false
    })
}

/// `read_skill_file`'s description.
pub const READ_SKILL_FILE_DESCRIPTION: &str = "Read a text file of a skill by its path relative to the skill directory (for example SKILL.md or references/guide.md). Paths outside the skill directory are refused.";

/// `read_skill_file`'s input schema.
pub fn read_skill_file_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "skill_name": {
                "type": "string",
                "description": "The skill's name or slug (case-insensitive)."
            },
            "path": {
                "type": "string",
                "description": "The file's path relative to the skill directory."
            }
        },
        "required": ["skill_name", "path"],
        "additionalProperties": false
    })
}

/// `use_skill` as a tool definition a host registers with its model (read-only, idempotent).
///
/// ```
/// let tool = skills_catalog::agent_tools::use_skill_tool("/home/sprite/.skills")?;
/// assert_eq!(tool.name(), "use_skill");
/// assert!(tool.validate_input(&serde_json::json!({"skill_name": "pdf"})).is_ok());
/// assert!(tool.validate_input(&serde_json::json!({})).is_err());
/// # Ok::<(), skills_core::tools::ToolError>(())
/// ```
pub fn use_skill_tool(sandbox_dir: &str) -> Result<Tool, ToolError> {
    Ok(Tool::new(
        USE_SKILL,
        use_skill_description(sandbox_dir),
        use_skill_schema(),
    )?
    .with_annotations(ToolAnnotations::new().read_only(true).idempotent(true)))
}

/// `read_skill_file` as a tool definition (read-only, idempotent).
pub fn read_skill_file_tool() -> Result<Tool, ToolError> {
    Ok(Tool::new(
        READ_SKILL_FILE,
        READ_SKILL_FILE_DESCRIPTION,
        read_skill_file_schema(),
    )?
    .with_annotations(ToolAnnotations::new().read_only(true).idempotent(true)))
}

/// `use_skill`: the skill's location, entrypoint and file listing (seed 002 section 8.2), or
/// one of its two error messages. Matching is case-insensitive on slug, then name; on a clash
/// the winner answers. A `deprecated` or `stub` skill answers too (asking by name is how a
/// deprecated skill is used), with a `Status:` line holding its mark.
///
/// ```
/// use skills_catalog::{agent_tools::{use_skill, NO_SKILLS}, Resolution};
///
/// assert_eq!(use_skill(&Resolution::default(), "anything"), Err(NO_SKILLS.to_owned()));
/// ```
pub fn use_skill(resolution: &Resolution, skill_name: &str) -> Result<String, String> {
    if resolution.skills.is_empty() {
        return Err(NO_SKILLS.to_owned());
    }
    let Some(skill) = resolution.find(skill_name) else {
        return Err(not_found(resolution, skill_name));
    };
    let location = location(skill);
    let entry_file = skill
        .entrypoint
        .rsplit('/')
        .next()
        .unwrap_or(skills_core::SKILL_MD)
        .to_owned();
    // Asked for by name, a deprecated skill still answers, with its mark.
    let status = skills_core::SkillStatus::note_of(skill.status)
        .map(|note| format!("Status: {note}\n"))
        .unwrap_or_default();
    let mut text = format!(
        "Skill: {}\n{status}Location: {location}/\nEntrypoint: {}\n\nFiles:\n  {entry_file} (entrypoint)\n",
        skill.id, skill.entrypoint
    );
    let mut files: Vec<&str> = served_files(skill).filter(|p| *p != entry_file).collect();
    files.sort_unstable();
    for file in files {
        text.push_str("  ");
        text.push_str(file);
        text.push('\n');
    }
    text.push_str(&format!(
        "\nUse read_file to load the {entry_file} for full instructions."
    ));
    Ok(text)
}

/// Directory names whose content is a dependency tree, not the skill's own: never served.
const VENDORED: &[&str] = &["node_modules", "__pycache__", "site-packages"];

/// Whether `relative` lies in a hidden entry (`.env`, `.git/config`, `.ssh/…`) or a vendored
/// directory (`node_modules/…`).
///
/// Threat: a skill folder that carries a checkout's `.git/config` (a token in its remote
/// URL), an `.env` of secrets or a dependency tree, which a model asks for by path.
/// Guarantee: such paths are never listed by [`use_skill`] nor read by
/// [`SkillFileReader`], whatever the skill's manifest holds.
pub fn is_concealed(relative: &str) -> bool {
    relative
        .split('/')
        .any(|part| part.starts_with('.') || VENDORED.contains(&part))
}

/// The skill's catalogued files that are served: its supporting files less the concealed.
pub fn served_files(skill: &ResolvedSkill) -> impl Iterator<Item = &str> {
    skill
        .supporting_files
        .iter()
        .map(|f| f.relative_path.as_str())
        .filter(|p| !is_concealed(p))
}

/// The entrypoint's file name (`SKILL.md`).
fn entry_file(skill: &ResolvedSkill) -> &str {
    skill
        .entrypoint
        .rsplit('/')
        .next()
        .unwrap_or(skills_core::SKILL_MD)
}

/// Whether `relative` is the entrypoint or one of the served files of `skill`.
pub fn is_catalogued(skill: &ResolvedSkill, relative: &str) -> bool {
    relative == entry_file(skill) || served_files(skill).any(|p| p == relative)
}

/// The `use_skill` answer with the entrypoint's text: [`use_skill`]'s listing, then
/// `content` (or, when it could not be read, the reason in its place).
pub fn use_skill_with_content(
    resolution: &Resolution,
    skill_name: &str,
    content: Result<&str, String>,
) -> Result<String, String> {
    let mut text = use_skill(resolution, skill_name)?;
    let entry = resolution
        .find(skill_name)
        .map_or(skills_core::SKILL_MD, entry_file);
    match content {
        Ok(content) => {
            text.push_str(&format!("\n\n{entry}:\n\n{content}"));
            if !content.ends_with('\n') {
                text.push('\n');
            }
        }
        Err(err) => text.push_str(&format!("\n\n{entry} could not be read: {err}\n")),
    }
    Ok(text)
}

/// The directory of a resolved skill as the agent sees it.
fn location(skill: &ResolvedSkill) -> String {
    match (&skill.sandbox_path, &skill.absolute_path) {
        (Some(sandbox), _) => sandbox.trim_end_matches('/').to_owned(),
        (None, Some(path)) => skill
            .entrypoint
            .rsplit_once('/')
            .map(|(dir, _)| dir.to_owned())
            .unwrap_or_else(|| path.display().to_string()),
        (None, None) => DEFAULT_SANDBOX_SKILLS_DIR.to_owned(),
    }
}

/// `Skill "{name}" not found. Available skills: {list}` (seed 002 section 8.2).
pub fn not_found(resolution: &Resolution, skill_name: &str) -> String {
    let mut names: Vec<&str> = Vec::new();
    for skill in resolution.winners() {
        if !names.contains(&skill.id.as_str()) {
            names.push(&skill.id);
        }
    }
    format!(
        "Skill \"{}\" not found. Available skills: {}",
        crate::prompt::one_line(skill_name),
        names.join(", ")
    )
}

/// Why `read_skill_file` refused. Messages name the skill and the relative path only.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ReadSkillFileError {
    /// No skill matches the name.
    #[error("{0}")]
    UnknownSkill(String),
    /// The path is malformed or leaves the skill directory.
    #[error("refused path `{path}`: {reason}")]
    InvalidPath {
        /// The path as asked.
        path: String,
        /// Why.
        reason: String,
    },
    /// No such file in the skill.
    #[error("the skill `{skill}` has no file `{path}`")]
    NotFound {
        /// The skill.
        skill: String,
        /// The path.
        path: String,
    },
    /// Over the size cap.
    #[error("`{path}` is {bytes} bytes; files over {limit} bytes are not returned")]
    TooLarge {
        /// The path.
        path: String,
        /// Its size.
        bytes: u64,
        /// The cap.
        limit: u64,
    },
    /// Not text (invalid UTF-8 or NUL bytes).
    #[error("`{path}` is not a text file")]
    NotText {
        /// The path.
        path: String,
    },
    /// The skill's files could not be reached (store or filesystem failure).
    #[error("the skill's files are unavailable: {0}")]
    Unavailable(String),
}

/// Reads skill files for `read_skill_file`: stored skills from the store (the source of
/// truth), repo skills from their directory on disk.
pub struct SkillFileReader<'a> {
    store: Option<(&'a dyn SkillStore, &'a TenantId)>,
    max_bytes: u64,
}

impl std::fmt::Debug for SkillFileReader<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SkillFileReader")
            .field("max_bytes", &self.max_bytes)
            .finish_non_exhaustive()
    }
}

impl<'a> SkillFileReader<'a> {
    /// A reader for repo skills only.
    pub fn new() -> Self {
        SkillFileReader {
            store: None,
            max_bytes: DEFAULT_MAX_READ_BYTES,
        }
    }

    /// A reader that serves stored skills from `store` in `tenant` too.
    pub fn with_store(store: &'a dyn SkillStore, tenant: &'a TenantId) -> Self {
        SkillFileReader {
            store: Some((store, tenant)),
            max_bytes: DEFAULT_MAX_READ_BYTES,
        }
    }

    /// Sets the size cap.
    pub fn max_bytes(mut self, max_bytes: u64) -> Self {
        self.max_bytes = max_bytes;
        self
    }

    /// `use_skill` with the entrypoint's text: [`use_skill`]'s listing followed by the
    /// `SKILL.md` content, for every source (stored skills from the store, repo skills from
    /// their directory, under the same containment and size rules as `read_skill_file`).
    /// When the text cannot be read the listing still answers, with the reason in place of
    /// the content.
    pub async fn use_skill(
        &self,
        resolution: &Resolution,
        skill_name: &str,
    ) -> Result<String, String> {
        // The listing first: it carries the unknown-skill answers.
        use_skill(resolution, skill_name)?;
        let Some(skill) = resolution.find(skill_name) else {
            return Err(not_found(resolution, skill_name));
        };
        let content = self
            .read_file(skill, entry_file(skill))
            .await
            .map_err(|e| e.to_string());
        use_skill_with_content(
            resolution,
            skill_name,
            content.as_deref().map_err(Clone::clone),
        )
    }

    /// `read_skill_file`: the text of `path` in the skill `skill_name` names.
    pub async fn read(
        &self,
        resolution: &Resolution,
        skill_name: &str,
        path: &str,
    ) -> Result<String, ReadSkillFileError> {
        if resolution.skills.is_empty() {
            return Err(ReadSkillFileError::UnknownSkill(NO_SKILLS.to_owned()));
        }
        let skill = resolution
            .find(skill_name)
            .ok_or_else(|| ReadSkillFileError::UnknownSkill(not_found(resolution, skill_name)))?;
        self.read_file(skill, path).await
    }

    /// The text of `path` in an already resolved skill: only its entrypoint and its served
    /// files ([`is_catalogued`]); hidden and vendored paths are refused ([`is_concealed`]).
    pub async fn read_file(
        &self,
        skill: &ResolvedSkill,
        path: &str,
    ) -> Result<String, ReadSkillFileError> {
        let relative = path.strip_prefix("./").unwrap_or(path);
        skills_core::files::check_relative_path(relative).map_err(|problem| {
            ReadSkillFileError::InvalidPath {
                path: crate::prompt::one_line(path),
                reason: problem.to_string(),
            }
        })?;
        if is_concealed(relative) {
            return Err(ReadSkillFileError::InvalidPath {
                path: crate::prompt::one_line(path),
                reason: "hidden files and vendored directories are not served".into(),
            });
        }
        if !is_catalogued(skill, relative) {
            return Err(ReadSkillFileError::NotFound {
                skill: skill.id.clone(),
                path: crate::prompt::one_line(relative),
            });
        }
        match (&skill.store_id, &skill.absolute_path) {
            (Some(id), _) => self.read_stored(skill, id, relative).await,
            (None, Some(root)) => read_contained(root, relative, &skill.id, self.max_bytes),
            (None, None) => Err(ReadSkillFileError::Unavailable(
                "the skill has neither a store record nor a directory".into(),
            )),
        }
    }

    async fn read_stored(
        &self,
        skill: &ResolvedSkill,
        id: &str,
        relative: &str,
    ) -> Result<String, ReadSkillFileError> {
        let Some((store, tenant)) = self.store else {
            return Err(ReadSkillFileError::Unavailable(
                "stored skills need a reader with a store".into(),
            ));
        };
        let unavailable =
            |e: skills_store_traits::Error| ReadSkillFileError::Unavailable(e.to_string());
        let text = if relative == skills_core::SKILL_MD {
            store
                .find_skill_by_id(tenant, id)
                .await
                .map_err(unavailable)?
                .map(|r| r.content)
        } else {
            store
                .find_skill_file(tenant, id, relative)
                .await
                .map_err(unavailable)?
                .map(|f| f.content)
        };
        let text = text.ok_or_else(|| ReadSkillFileError::NotFound {
            skill: skill.id.clone(),
            path: relative.to_owned(),
        })?;
        let bytes = text.len() as u64;
        if bytes > self.max_bytes {
            return Err(ReadSkillFileError::TooLarge {
                path: relative.to_owned(),
                bytes,
                limit: self.max_bytes,
            });
        }
        Ok(text)
    }
}

impl Default for SkillFileReader<'_> {
    fn default() -> Self {
        Self::new()
    }
}

/// Reads `root/relative` when it resolves (symlinks included) to a regular file inside
/// `root`, is at most `max_bytes`, and is text.
fn read_contained(
    root: &Path,
    relative: &str,
    skill: &str,
    max_bytes: u64,
) -> Result<String, ReadSkillFileError> {
    let not_found = || ReadSkillFileError::NotFound {
        skill: skill.to_owned(),
        path: relative.to_owned(),
    };
    let root_real = std::fs::canonicalize(root)
        .map_err(|_| ReadSkillFileError::Unavailable("the skill directory is gone".into()))?;
    let real = std::fs::canonicalize(root.join(relative)).map_err(|_| not_found())?;
    if !real.starts_with(&root_real) {
        return Err(ReadSkillFileError::InvalidPath {
            path: relative.to_owned(),
            reason: "it leads outside the skill directory".into(),
        });
    }
    // The resolved path has no symlinks left; O_NOFOLLOW refuses one swapped in since.
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(&real)
        .map_err(|_| not_found())?;
    let meta = file.metadata().map_err(|_| not_found())?;
    if !meta.is_file() {
        return Err(not_found());
    }
    if meta.len() > max_bytes {
        return Err(ReadSkillFileError::TooLarge {
            path: relative.to_owned(),
            bytes: meta.len(),
            limit: max_bytes,
        });
    }
    let mut bytes = Vec::new();
    file.take(max_bytes + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| ReadSkillFileError::Unavailable(e.kind().to_string()))?;
    if bytes.len() as u64 > max_bytes {
        return Err(ReadSkillFileError::TooLarge {
            path: relative.to_owned(),
            bytes: bytes.len() as u64,
            limit: max_bytes,
        });
    }
    if bytes.contains(&0) {
        return Err(ReadSkillFileError::NotText {
            path: relative.to_owned(),
        });
    }
    String::from_utf8(bytes).map_err(|_| ReadSkillFileError::NotText {
        path: relative.to_owned(),
    })
}
