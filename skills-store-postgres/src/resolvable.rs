//! [`SkillStore::resolvable_skills`](skills_store_traits::SkillStore::resolvable_skills):
//! two queries in one `REPEATABLE READ, READ ONLY` transaction (one snapshot), reading only
//! the fields the projection carries, as plain binary columns, in two round trips: BEGIN,
//! the tenant and the skills query; then the files of those skills by id with the COMMIT.
//! (A files query that found the skills again by the same condition, sent in the first
//! round trip, cost the server more than the second round trip costs: it walked the
//! assignments and the skills twice.)
//!
//! Why not the full read: the server rendered every skill, assignment and file document
//! (contents, checksums, ids, timestamps, metadata) as JSON text and the client parsed
//! them, most of a resolution's time, for a few fields of each. Here the assignments are
//! grouped by the server (the highest priority and any auto-inject of the enabled ones),
//! each skill gives the listed fields (`->>` on its document: text, no JSON to parse but
//! the two short arrays and the metadata's `status` and `layer` values), and each file its
//! path and type (the text only for `skill.json`).

use serde_json::Value;
use skills_store_traits::{
    MANIFEST_PATH, ResolvableFile, ResolvableSkill, SkillSourceKind, TenantId, sort_by_slug,
};
use tokio_postgres::Row;
use tokio_postgres::types::{Json, ToSql};

use crate::db::Shared;
use crate::error::{Failure, Outcome};

/// The enabled assignments `a` reaching agent `$2` (in team `$3`, when not NULL) in tenant
/// `$1`, on the `(tenant_id, scope, scope_id)` index (a macro so that `concat!` can build
/// both queries from it).
macro_rules! reaching_enabled {
    () => {
        "a.tenant_id = $1 AND ((a.scope = 'global' AND a.scope_id = '') \
         OR (a.scope = 'agent' AND a.scope_id = $2) \
         OR ($3::TEXT IS NOT NULL AND a.scope = 'team' AND a.scope_id = $3)) \
         AND (a.doc->>'enabled')::BOOLEAN"
    };
}

/// The enabled skills those assignments attach, one row per skill, the grouped assignment
/// fields last.
const SKILLS: &str = concat!(
    "SELECT s.id, s.slug, s.doc->>'name', s.doc->>'description', s.category, \
     s.doc->>'source_kind', s.doc->>'plugin_id', s.doc->>'content', \
     (s.doc->>'is_directory')::BOOLEAN, s.doc->>'version', s.doc->'tags', \
     s.doc->'requires_tools', s.doc->>'trust_level', s.doc->'metadata'->'status', \
     s.doc->'metadata'->'layer', r.priority, r.auto_inject \
     FROM (SELECT a.skill_id, MAX((a.doc->>'priority')::BIGINT) AS priority, \
     bool_or((a.doc->>'auto_inject')::BOOLEAN) AS auto_inject \
     FROM skill_assignments a WHERE ",
    reaching_enabled!(),
    " GROUP BY a.skill_id) r \
     JOIN skills s ON s.tenant_id = $1 AND s.id = r.skill_id WHERE s.enabled"
);

/// The files of the skills `$2` (ids) in (skill, path) order, on the `(tenant_id,
/// skill_id, relative_path)` index; the text only of `$3` (`skill.json`).
const FILES: &str = "SELECT f.skill_id, f.relative_path, f.doc->>'content_type', \
     CASE WHEN f.relative_path = $3 THEN f.doc->>'content' END \
     FROM skill_files f WHERE f.tenant_id = $1 AND f.skill_id = ANY($2) \
     ORDER BY f.skill_id, f.relative_path";

pub(crate) async fn read(
    s: Shared,
    tenant: TenantId,
    agent_id: String,
    team_id: Option<String>,
) -> Outcome<Vec<ResolvableSkill>> {
    let tenant_id = tenant.as_str();
    let tx = s.begin_snapshot(tenant_id).await?;
    let params: &[&(dyn ToSql + Sync)] = &[&tenant_id, &agent_id, &team_id];
    let skill_rows = tx.query(SKILLS, params).await?;
    let mut skills = skill_rows.iter().map(skill).collect::<Outcome<Vec<_>>>()?;
    if skills.is_empty() {
        tx.commit().await?;
        return Ok(skills);
    }
    // The file rows come in skill id order (bytewise: the `C` collation): walk the skills
    // in the same order beside them.
    skills.sort_unstable_by(|a, b| a.id.cmp(&b.id));
    let file_rows = {
        let ids: Vec<&str> = skills.iter().map(|s| s.id.as_str()).collect();
        let params: &[&(dyn ToSql + Sync)] = &[&tenant_id, &ids, &MANIFEST_PATH];
        tx.query_and_commit(FILES, params).await?
    };
    let mut next = skills.iter_mut().peekable();
    for row in &file_rows {
        let skill_id = row.try_get::<_, &str>(0)?;
        while next.next_if(|s| s.id.as_str() < skill_id).is_some() {}
        let Some(entry) = next.peek_mut().filter(|s| s.id == skill_id) else {
            continue;
        };
        entry.files.push(ResolvableFile::new(
            row.try_get::<_, String>(1)?,
            row.try_get::<_, String>(2)?,
        ));
        if let Some(manifest) = row.try_get::<_, Option<String>>(3)? {
            entry.manifest = Some(manifest);
        }
    }
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
    Ok(skill)
}
