//! [`SkillStore::resolvable_skills`](skills_store_traits::SkillStore::resolvable_skills):
//! one query, one row per skill, sent with its BEGIN, tenant and COMMIT in **one round
//! trip** ([`Shared::read_snapshot`]), reading only the fields the projection carries as
//! plain binary columns.
//!
//! Why not the full read: the server rendered every skill, assignment and file document
//! (contents, checksums, ids, timestamps, metadata) as JSON text and the client parsed
//! them, most of a resolution's time, for a few fields of each. Here the assignments are
//! grouped by the server (the highest priority and any auto-inject of the enabled ones)
//! from the covering index `idx_skill_assignments_reach` alone (generated columns, schema
//! version 3: no document parsed, no table page visited per assignment once the pages are
//! all-visible), each skill gives the listed fields from stored generated columns (no
//! JSON operator per field; no JSON to parse but the two short arrays and the metadata's
//! `status` and `layer` values) and its file listing and `skill.json` text from its own
//! row (`file_paths`, `file_types`, `manifest`, kept by a trigger on `skill_files`), not
//! from a row per file.

use serde_json::Value;
use skills_store_traits::{
    ResolvableFile, ResolvableSkill, SkillSourceKind, TenantId, sort_by_slug,
};
use tokio_postgres::Row;
use tokio_postgres::types::{Json, ToSql};

use crate::db::Shared;
use crate::error::{Failure, Outcome};

/// One arm per target, each an index-only range of the covering `idx_skill_assignments_reach`
/// (a disjunction would make the server visit the table by bitmap): the enabled
/// assignments reaching agent `$2` (in team `$3`, when not NULL) in tenant `$1`.
macro_rules! arm {
    ($target:literal) => {
        concat!(
            "SELECT a.skill_id, a.priority, a.auto_inject FROM skill_assignments a \
             WHERE a.tenant_id = $1 AND ",
            $target,
            " AND a.enabled"
        )
    };
}

/// The enabled skills those assignments attach, one row per skill: its listed fields
/// (stored generated columns), the grouped assignment fields, then its listing.
const SKILLS: &str = concat!(
    "SELECT s.id, s.slug, s.name, s.description, s.category, s.source_kind, s.plugin_id, \
     s.content, s.is_directory, s.version, s.tags, s.requires_tools, s.trust_level, \
     s.metadata_status, s.metadata_layer, r.priority, r.auto_inject, \
     s.file_paths, s.file_types, s.manifest \
     FROM (SELECT skill_id, MAX(priority) AS priority, bool_or(auto_inject) AS auto_inject \
     FROM (",
    arm!("a.scope = 'global' AND a.scope_id = ''"),
    " UNION ALL ",
    arm!("a.scope = 'agent' AND a.scope_id = $2"),
    " UNION ALL ",
    arm!("a.scope = 'team' AND a.scope_id = $3"),
    ") u GROUP BY skill_id) r \
     JOIN skills s ON s.tenant_id = $1 AND s.id = r.skill_id WHERE s.enabled"
);

pub(crate) async fn read(
    s: Shared,
    tenant: TenantId,
    agent_id: String,
    team_id: Option<String>,
) -> Outcome<Vec<ResolvableSkill>> {
    let tenant_id = tenant.as_str();
    let params: &[&(dyn ToSql + Sync)] = &[&tenant_id, &agent_id, &team_id];
    let answers = s.read_snapshot(tenant_id, &[(SKILLS, params)]).await?;
    let mut skills = answers
        .iter()
        .flatten()
        .map(skill)
        .collect::<Outcome<Vec<_>>>()?;
    sort_by_slug(&mut skills);
    Ok(skills)
}

/// A row of [`SKILLS`].
fn skill(row: &Row) -> Outcome<ResolvableSkill> {
    let mut skill =
        ResolvableSkill::new(row.try_get::<_, String>(0)?, row.try_get::<_, String>(1)?);
    skill.name = row.try_get(2)?;
    skill.description = row.try_get(3)?;
    skill.category = row.try_get(4)?;
    skill.source_kind = match row.try_get::<_, &str>(5)? {
        "admin" => SkillSourceKind::Admin,
        "plugin" => SkillSourceKind::Plugin,
        other => return Err(Failure::Decode(format!("unknown source kind `{other}`"))),
    };
    skill.plugin_id = row.try_get(6)?;
    skill.content = row.try_get(7)?;
    skill.is_directory = row.try_get(8)?;
    skill.version = row.try_get(9)?;
    skill.tags = row.try_get::<_, Json<Vec<String>>>(10)?.0;
    skill.requires_tools = row.try_get::<_, Json<Vec<String>>>(11)?.0;
    skill.trust_level = row.try_get(12)?;
    skill.metadata_status = row.try_get::<_, Option<Json<Value>>>(13)?.map(|j| j.0);
    skill.metadata_layer = row.try_get::<_, Option<Json<Value>>>(14)?.map(|j| j.0);
    skill.priority = row.try_get(15)?;
    skill.auto_inject = row.try_get(16)?;
    let paths = row.try_get::<_, Vec<String>>(17)?;
    let types = row.try_get::<_, Vec<String>>(18)?;
    if paths.len() != types.len() {
        return Err(Failure::Decode(format!(
            "the file listing of skill `{}` has {} paths and {} types",
            skill.id,
            paths.len(),
            types.len()
        )));
    }
    skill.files = paths
        .into_iter()
        .zip(types)
        .map(|(path, content_type)| ResolvableFile::new(path, content_type))
        .collect();
    // The trigger orders the listing by path (the `C` collation: bytewise); put it in that
    // order here too, so a listing written by other means cannot reorder an entry.
    if !skill
        .files
        .is_sorted_by(|a, b| a.relative_path <= b.relative_path)
    {
        skill
            .files
            .sort_by(|a, b| a.relative_path.cmp(&b.relative_path));
    }
    skill.manifest = row.try_get(19)?;
    Ok(skill)
}
