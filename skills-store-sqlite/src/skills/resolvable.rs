//! [`SkillStore::resolvable_skills`](skills_store_traits::SkillStore::resolvable_skills):
//! one statement, one row per skill, reading only the columns the projection carries.
//!
//! Why not the full read: decoding every column of each skill, assignment and file (the
//! files' contents and checksums, ids, timestamps, the whole metadata document) was most of
//! a resolution's time. Here the assignments are grouped in SQL (the highest priority and
//! any auto-inject of the enabled ones) from the covering index `idx_skill_assignments_reach`
//! alone, the skill rows give only the listed columns (of the metadata only its `status`
//! and `layer` values are built), and each skill's file listing and `skill.json` text come
//! from its own row (`files_json`, `manifest`: kept by triggers on `skill_files`, schema
//! version 10), not from a row per file.

use rusqlite::{Connection, Row, params};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Deserializer};
use serde_json::Value;
use skills_store_traits::{Error, ResolvableFile, ResolvableSkill, SkillSourceKind, sort_by_slug};

use crate::error::{Outcome, corrupt};

/// One arm per target, each a range of the covering `(tenant_id, scope, scope_id, enabled,
/// skill_id, priority, auto_inject)` index: the enabled assignments reaching agent `?2`
/// (in team `?3`) in tenant `?1`.
macro_rules! arm {
    ($target:literal) => {
        concat!(
            "SELECT skill_id, priority, auto_inject FROM skill_assignments \
             INDEXED BY idx_skill_assignments_reach WHERE tenant_id = ?1 AND ",
            $target,
            " AND enabled = 1"
        )
    };
}

/// The enabled skills those assignments attach, one row per skill, with the grouped
/// assignment fields last. `CROSS JOIN` keeps the grouped assignments the outer loop and
/// `+s.enabled` keeps the skills lookup on `(tenant_id, id)`: without them SQLite may walk
/// every enabled skill of the tenant (`idx_skills_enabled`) and probe the assignments.
pub(crate) const SKILLS: &str = concat!(
    "SELECT s.id, s.slug, s.name, s.description, s.category, s.source_kind, s.plugin_id, \
     s.content, s.is_directory, s.version, s.tags_json, s.requires_tools_json, \
     s.trust_level, s.metadata_json, r.priority, r.auto_inject, s.files_json, s.manifest \
     FROM (SELECT skill_id, MAX(priority) AS priority, MAX(auto_inject) AS auto_inject FROM (",
    arm!("scope = 'global' AND scope_id IS NULL"),
    " UNION ALL ",
    arm!("scope = 'agent' AND scope_id = ?2"),
    " UNION ALL ",
    arm!("scope = 'team' AND scope_id = ?3"),
    ") GROUP BY skill_id) r \
     CROSS JOIN skills s ON s.tenant_id = ?1 AND s.id = r.skill_id WHERE +s.enabled = 1"
);

/// The resolvable skills of `agent` (in `team`), ordered by slug.
pub(crate) fn read(
    conn: &Connection,
    tenant: &str,
    agent: &str,
    team: Option<&str>,
) -> Outcome<Vec<ResolvableSkill>> {
    let mut statement = conn.prepare_cached(SKILLS)?;
    let mut rows = statement.query(params![tenant, agent, team])?;
    let mut skills = Vec::new();
    while let Some(row) = rows.next()? {
        skills.push(skill(row)?);
    }
    sort_by_slug(&mut skills);
    Ok(skills)
}

/// A row of [`SKILLS`].
fn skill(row: &Row<'_>) -> rusqlite::Result<ResolvableSkill> {
    let mut skill = ResolvableSkill::new(text(row, 0)?, text(row, 1)?);
    skill.name = row.get(2)?;
    skill.description = row.get(3)?;
    skill.category = row.get(4)?;
    skill.source_kind = match text(row, 5)? {
        "admin" => SkillSourceKind::Admin,
        "plugin" => SkillSourceKind::Plugin,
        other => {
            let message = format!("unknown source kind `{other}`");
            return Err(corrupt(5, Error::backend(message)));
        }
    };
    skill.plugin_id = row.get(6)?;
    skill.content = row.get(7)?;
    skill.is_directory = row.get(8)?;
    skill.version = row.get(9)?;
    skill.tags = json(row, 10)?;
    skill.requires_tools = json(row, 11)?;
    skill.trust_level = row.get(12)?;
    let declared: Declared = json(row, 13)?;
    skill.metadata_status = declared.status;
    skill.metadata_layer = declared.layer;
    skill.priority = row.get(14)?;
    skill.auto_inject = row.get(15)?;
    skill.files = listing(text(row, 16)?).map_err(|error| corrupt(16, error))?;
    skill.manifest = row.get(17)?;
    Ok(skill)
}

/// A text column, borrowed from the row.
fn text<'r>(row: &'r Row<'_>, column: usize) -> rusqlite::Result<&'r str> {
    row.get_ref(column)?
        .as_str()
        .map_err(|error| corrupt(column, error))
}

/// A JSON text column, parsed.
fn json<T: DeserializeOwned>(row: &Row<'_>, column: usize) -> rusqlite::Result<T> {
    serde_json::from_str(text(row, column)?).map_err(|error| corrupt(column, error))
}

/// The two keys of a skill's metadata that resolving reads, each `Some` when present
/// (whatever its value, `null` included); the other keys are skipped without being built.
/// (SQLite's `->` operator cost about ten microseconds a call, several times this.)
#[derive(Deserialize)]
struct Declared {
    #[serde(default, deserialize_with = "present")]
    status: Option<Value>,
    #[serde(default, deserialize_with = "present")]
    layer: Option<Value>,
}

fn present<'de, D: Deserializer<'de>>(value: D) -> Result<Option<Value>, D::Error> {
    Value::deserialize(value).map(Some)
}

/// A `files_json` listing: `[path, type]` pairs. The trigger orders them by path; they are
/// put in that order here too (bytewise, as every store lists files), so a listing written
/// by other means cannot reorder an entry.
fn listing(text: &str) -> serde_json::Result<Vec<ResolvableFile>> {
    let pairs: Vec<(String, String)> = serde_json::from_str(text)?;
    let mut files: Vec<ResolvableFile> = pairs
        .into_iter()
        .map(|(path, content_type)| ResolvableFile::new(path, content_type))
        .collect();
    if !files.is_sorted_by(|a, b| a.relative_path <= b.relative_path) {
        files.sort_by(|a, b| a.relative_path.cmp(&b.relative_path));
    }
    Ok(files)
}
