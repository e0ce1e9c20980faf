//! What a server serves: one agent's resolved skills, read once into memory with their
//! SEP-2640 entries (frontmatter and a manifest of `sha256:` digests).
//!
//! Threat: a catalog entry whose files lead out of its skill (a repo skill's symlink to
//! `~/.ssh`, a stored path with `..`), a huge or binary file, a skill the agent is not
//! assigned or that is disabled, and a manifest that describes other bytes than the ones
//! served. Guarantee: the skills are exactly the winners of [`Resolver`]'s resolution for
//! the agent (which leaves out disabled skills and assignments); every file is read through
//! `skills-catalog`'s [`SkillFileReader`] — stored skills from the store, repo skills with
//! the containment, no-symlink-escape and size rules of `read_skill_file` — and kept, so
//! the digests in `skills/list` describe exactly the bytes `resources/read` serves.
//! A skill over [`SnapshotLimits`] or whose entry breaks SEP-2640's rules is left out with
//! a warning, never served in part. Hidden entries (`.env`, `.git/…`) and vendored
//! directories (`node_modules/…`) are never catalogued
//! ([`is_concealed`](skills_catalog::agent_tools::is_concealed)).
//!
//! [`Resolver`]: skills_catalog::Resolver

use std::collections::BTreeMap;
use std::sync::Arc;

use rmcp::model::{Skill, SkillFrontmatter, SkillResource, SkillResources};
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};
use skills_catalog::agent_tools::{SkillFileReader, served_files};
use skills_catalog::{Resolution, ResolvedSkill};
use skills_core::SKILL_MD;

use crate::protocol::skill_uri;

/// Bounds on what one served skill may hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct SnapshotLimits {
    /// Largest file served (default 256 KiB, `read_skill_file`'s cap).
    pub max_file_bytes: u64,
    /// Most files in one skill (default 500).
    pub max_files: usize,
    /// Largest total of one skill's files (default 8 MiB).
    pub max_skill_bytes: u64,
}

impl Default for SnapshotLimits {
    fn default() -> Self {
        SnapshotLimits {
            max_file_bytes: skills_catalog::agent_tools::DEFAULT_MAX_READ_BYTES,
            max_files: 500,
            max_skill_bytes: 8 * 1024 * 1024,
        }
    }
}

/// One served skill.
#[derive(Debug, Clone)]
pub struct ServedSkill {
    /// The catalog's entry.
    pub resolved: ResolvedSkill,
    /// The SEP-2640 entry (`skills/list`, `skills/get`).
    pub entry: Skill,
    /// Every served file by relative path, `SKILL.md` included.
    pub files: BTreeMap<String, Arc<str>>,
    /// The digest of the served version: SHA-256 over every file's path and SHA-256, in
    /// path order (`sha256:<hex>`).
    pub digest: String,
    /// For a stored skill, its record's `updated_at` and checksum when the snapshot was
    /// read: a record that differs later means the snapshot is stale.
    pub stamp: Option<(i64, String)>,
}

impl ServedSkill {
    /// The trust level the skill carries (`community` when none).
    pub fn trust(&self) -> skills_security::TrustLevel {
        skills_security::TrustLevel::of_skill(self.resolved.trust_level.as_deref())
    }
}

/// Every skill one server serves, by id (the skill's name in its URIs).
#[derive(Debug, Clone, Default)]
pub struct Snapshot {
    /// The resolution the skills came from (what the tools answer from).
    pub resolution: Arc<Resolution>,
    /// Served skills by id.
    pub skills: BTreeMap<String, ServedSkill>,
    /// Skills or files left out, and why.
    pub warnings: Vec<String>,
}

impl Snapshot {
    /// Reads every winner of `resolution` through `reader`.
    pub async fn build(
        resolution: Resolution,
        reader: &SkillFileReader<'_>,
        limits: SnapshotLimits,
    ) -> Snapshot {
        let mut skills = BTreeMap::new();
        let mut warnings = resolution.warnings.clone();
        for resolved in resolution.winners() {
            match read_skill(resolved, reader, &limits).await {
                Ok((served, mut skipped)) => {
                    warnings.append(&mut skipped);
                    skills.insert(resolved.id.clone(), served);
                }
                Err(reason) => {
                    warnings.push(format!("skill `{}` is not served: {reason}", resolved.id))
                }
            }
        }
        Snapshot {
            resolution: Arc::new(resolution),
            skills,
            warnings,
        }
    }

    /// The entries of `skills/list`, ordered by URI.
    pub fn entries(&self) -> Vec<Skill> {
        self.skills.values().map(|s| s.entry.clone()).collect()
    }
}

/// One skill's files and entry; a skill that cannot be served whole is an `Err`.
async fn read_skill(
    resolved: &ResolvedSkill,
    reader: &SkillFileReader<'_>,
    limits: &SnapshotLimits,
) -> Result<(ServedSkill, Vec<String>), String> {
    if !resolved.entrypoint.ends_with(SKILL_MD) {
        return Err("it has no SKILL.md".into());
    }
    let mut paths: Vec<&str> = vec![SKILL_MD];
    paths.extend(served_files(resolved).filter(|path| *path != SKILL_MD));
    paths.sort_unstable();
    paths.dedup();
    if paths.len() > limits.max_files {
        return Err(format!("it has more than {} files", limits.max_files));
    }
    let mut files = BTreeMap::new();
    let mut skipped = Vec::new();
    let mut total = 0u64;
    for path in paths {
        match reader.read_file(resolved, path).await {
            Ok(text) => {
                total = total.saturating_add(text.len() as u64);
                if text.len() as u64 > limits.max_file_bytes {
                    skipped.push(format!(
                        "`{}/{path}` is not served: over {} bytes",
                        resolved.id, limits.max_file_bytes
                    ));
                    continue;
                }
                files.insert(path.to_owned(), Arc::<str>::from(text));
            }
            Err(e) if path == SKILL_MD => return Err(format!("its SKILL.md cannot be read: {e}")),
            Err(e) => skipped.push(format!("`{}/{path}` is not served: {e}", resolved.id)),
        }
    }
    if total > limits.max_skill_bytes {
        return Err(format!("its files exceed {} bytes", limits.max_skill_bytes));
    }
    let skill_md = files
        .get(SKILL_MD)
        .cloned()
        .unwrap_or_else(|| Arc::from(""));
    let frontmatter = frontmatter_of(&skill_md, resolved);
    let manifest = files
        .iter()
        .map(|(path, text)| {
            SkillResource::from_bytes(skill_uri(&resolved.id, path), text.as_bytes())
        })
        .collect();
    let entry = Skill::new(
        skill_uri(&resolved.id, SKILL_MD),
        frontmatter,
        SkillResources::Files(manifest),
    );
    entry.validate().map_err(|e| e.to_string())?;
    let digest = version_digest(&files);
    Ok((
        ServedSkill {
            resolved: resolved.clone(),
            entry,
            files,
            digest,
            stamp: None,
        },
        skipped,
    ))
}

/// `sha256:` of every file's path and SHA-256, in path order.
fn version_digest(files: &BTreeMap<String, Arc<str>>) -> String {
    let mut hasher = Sha256::new();
    for (path, text) in files {
        hasher.update(path.as_bytes());
        hasher.update([0]);
        hasher.update(Sha256::digest(text.as_bytes()));
    }
    format!("sha256:{}", hex::encode(hasher.finalize()))
}

/// The frontmatter as written (every key, through skills-core's reader), or — for a stored
/// skill whose SKILL.md has none — the catalog's name and description.
fn frontmatter_of(skill_md: &str, resolved: &ResolvedSkill) -> SkillFrontmatter {
    let parsed = skills_core::SkillMd::parse_str(skill_md, None, &Default::default());
    let mut map: Map<String, Value> = parsed
        .document
        .and_then(|doc| match serde_json::to_value(&doc.frontmatter) {
            Ok(Value::Object(map)) => Some(map),
            _ => None,
        })
        .unwrap_or_default();
    let take = |map: &mut Map<String, Value>, key: &str| match map.remove(key) {
        Some(Value::String(s)) if !s.is_empty() => Some(s),
        _ => None,
    };
    let name = take(&mut map, "name").unwrap_or_else(|| resolved.id.clone());
    let description = take(&mut map, "description").unwrap_or_else(|| resolved.description.clone());
    let mut frontmatter = SkillFrontmatter::new(name, description);
    frontmatter.extra = map;
    frontmatter
}
