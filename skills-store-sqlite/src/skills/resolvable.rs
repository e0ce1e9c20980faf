//! [`SkillStore::resolvable_skills`](skills_store_traits::SkillStore::resolvable_skills):
//! which skills reach the agent at which stamp ([`REACHED`], from two covering indexes),
//! and, when the store's [`StampedProjections`](skills_store_traits::StampedProjections)
//! does not hold each of them at that stamp, one row per assignment with only the columns
//! the projection carries ([`SKILLS`]).
//!
//! Why not the full read: decoding every column of each skill, assignment and file (the
//! files' contents and checksums, ids, timestamps, the whole metadata document) was most of
//! a resolution's time. Here the assignments come from the covering index
//! `idx_skill_assignments_reach` alone and are grouped in Rust (the highest priority and
//! any auto-inject of the enabled ones), the skill rows give only the listed columns (of
//! the metadata only its `status` and `layer` values are built), and each skill's file
//! listing and `skill.json` text come from its own row (`files_json`, `manifest`: kept by
//! triggers on `skill_files`, schema version 10), not from a row per file. Schema version
//! 11's stamps let the store skip even that decoding for skills whose rows did not change.

use rusqlite::{Connection, Row, params};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Deserializer};
use serde_json::Value;
use skills_store_traits::{
    Error, ReachedSkill, ResolvableFile, ResolvableSkill, SkillSourceKind, StampedRows,
    group_reached,
};

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

/// The enabled skills those assignments attach, one row per assignment (grouped by the
/// caller: SQLite's `GROUP BY` through a temporary b-tree cost about half the statement),
/// with the skill's stamp, read from the covering `idx_skills_reach` alone. `CROSS JOIN`
/// keeps the assignments the outer loop.
pub(crate) const REACHED: &str = concat!(
    "SELECT s.id, s.stamp, r.priority, r.auto_inject FROM (",
    arm!("scope = 'global' AND scope_id IS NULL"),
    " UNION ALL ",
    arm!("scope = 'agent' AND scope_id = ?2"),
    " UNION ALL ",
    arm!("scope = 'team' AND scope_id = ?3"),
    ") r CROSS JOIN skills s INDEXED BY idx_skills_reach \
     ON s.tenant_id = ?1 AND s.id = r.skill_id WHERE s.enabled = 1"
);

/// [`REACHED`] with the listed skill columns after the first four (decoded on a skill's
/// first row only). `+s.enabled` keeps the skills lookup on `(tenant_id, id)`: without it
/// SQLite may walk every enabled skill of the tenant (`idx_skills_enabled`).
pub(crate) const SKILLS: &str = concat!(
    "SELECT s.id, s.stamp, r.priority, r.auto_inject, s.slug, s.name, s.description, \
     s.category, s.source_kind, s.plugin_id, s.content, s.is_directory, s.version, \
     s.tags_json, s.requires_tools_json, s.trust_level, s.metadata_json, s.files_json, \
     s.manifest FROM (",
    arm!("scope = 'global' AND scope_id IS NULL"),
    " UNION ALL ",
    arm!("scope = 'agent' AND scope_id = ?2"),
    " UNION ALL ",
    arm!("scope = 'team' AND scope_id = ?3"),
    ") r CROSS JOIN skills s ON s.tenant_id = ?1 AND s.id = r.skill_id WHERE +s.enabled = 1"
);

/// The listed columns of the skills whose ids are in the JSON array `?2`, in the column
/// order of [`SKILLS`] (the assignment fields as zeros: the caller has them from
/// [`REACHED`]), each with its stamp.
pub(crate) const BY_ID: &str = "SELECT s.id, s.stamp, 0, 0, s.slug, s.name, s.description, \
     s.category, s.source_kind, s.plugin_id, s.content, s.is_directory, s.version, \
     s.tags_json, s.requires_tools_json, s.trust_level, s.metadata_json, s.files_json, \
     s.manifest FROM skills s WHERE s.tenant_id = ?1 AND s.id IN (SELECT value FROM json_each(?2))";

/// The skills of `ids` in `tenant` as they are now, each with its stamp (the caller checks
/// the stamps against the ones [`reached`] saw).
pub(crate) fn by_id(
    conn: &Connection,
    tenant: &str,
    ids: &[String],
) -> Outcome<Vec<(i64, ResolvableSkill)>> {
    let ids = serde_json::to_string(ids).map_err(|error| corrupt(1, error))?;
    let mut statement = conn.prepare_cached(BY_ID)?;
    let mut rows = statement.query(params![tenant, ids])?;
    let mut skills = Vec::new();
    while let Some(row) = rows.next()? {
        skills.push((row.get(1)?, skill(row, text(row, 0)?)?));
    }
    Ok(skills)
}

/// Which skills reach `agent` (in `team`), at which stamp, with their grouped assignment
/// fields.
pub(crate) fn reached(
    conn: &Connection,
    tenant: &str,
    agent: &str,
    team: Option<&str>,
) -> Outcome<Vec<ReachedSkill>> {
    let mut statement = conn.prepare_cached(REACHED)?;
    let mut rows = statement.query(params![tenant, agent, team])?;
    let mut reached = Vec::new();
    while let Some(row) = rows.next()? {
        reached.push(ReachedSkill::new(
            text(row, 0)?,
            row.get(1)?,
            row.get(2)?,
            row.get(3)?,
        ));
    }
    Ok(group_reached(reached))
}

/// The resolvable skills of `agent` (in `team`), each with its row's stamp, ordered by
/// slug.
pub(crate) fn read(
    conn: &Connection,
    tenant: &str,
    agent: &str,
    team: Option<&str>,
) -> Outcome<Vec<(i64, ResolvableSkill)>> {
    let mut statement = conn.prepare_cached(SKILLS)?;
    let mut rows = statement.query(params![tenant, agent, team])?;
    let mut skills = StampedRows::default();
    while let Some(row) = rows.next()? {
        let id = text(row, 0)?;
        let (priority, auto_inject): (i64, bool) = (row.get(2)?, row.get(3)?);
        if !skills.merge(id, priority, auto_inject) {
            skills.push(row.get(1)?, skill(row, id)?, priority, auto_inject);
        }
    }
    Ok(skills.into_sorted())
}

/// The skill columns of a row of [`SKILLS`] (not its assignment fields).
fn skill(row: &Row<'_>, id: &str) -> rusqlite::Result<ResolvableSkill> {
    let mut skill = ResolvableSkill::new(id, text(row, 4)?);
    skill.name = row.get(5)?;
    skill.description = row.get(6)?;
    skill.category = row.get(7)?;
    skill.source_kind = match text(row, 8)? {
        "admin" => SkillSourceKind::Admin,
        "plugin" => SkillSourceKind::Plugin,
        other => {
            let message = format!("unknown source kind `{other}`");
            return Err(corrupt(8, Error::backend(message)));
        }
    };
    skill.plugin_id = row.get(9)?;
    skill.content = row.get(10)?;
    skill.is_directory = row.get(11)?;
    skill.version = row.get(12)?;
    skill.tags = json(row, 13)?;
    skill.requires_tools = json(row, 14)?;
    skill.trust_level = row.get(15)?;
    let declared: Declared = json(row, 16)?;
    skill.metadata_status = declared.status;
    skill.metadata_layer = declared.layer;
    skill.files = listing(text(row, 17)?).map_err(|error| corrupt(17, error))?;
    skill.manifest = row.get(18)?;
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
