//! [`SkillStore::resolvable_skills`](skills_store_traits::SkillStore::resolvable_skills):
//! which skills reach the agent at which stamp ([`REACHED`], one query sent with its BEGIN,
//! tenant and COMMIT in **one round trip**, [`Shared::read_snapshot`]), and only when the
//! store's [`StampedProjections`](skills_store_traits::StampedProjections) does not hold
//! each of them at that stamp, the fields the projection carries as plain binary columns
//! ([`SKILLS`], one more round trip).
//!
//! Why not the full read: the server rendered every skill, assignment and file document
//! (contents, checksums, ids, timestamps, metadata) as JSON text and the client parsed
//! them, most of a resolution's time, for a few fields of each. Here the assignments come
//! from the covering index `idx_skill_assignments_reach` alone (generated columns, schema
//! version 3: no document parsed, no table page visited per assignment once the pages are
//! all-visible) and are grouped by the client (the highest priority and any auto-inject of
//! the enabled ones), each skill gives the listed fields from stored generated columns (no
//! JSON operator per field; no JSON to parse but the two short arrays and the metadata's
//! `status` and `layer` values) and its file listing and `skill.json` text from its own
//! row (`file_paths`, `file_types`, `manifest`, kept by a trigger on `skill_files`), not
//! from a row per file. Schema version 4's stamps let the store skip even those columns
//! for skills whose rows did not change.

use serde_json::Value;
use skills_store_traits::{
    ReachedSkill, ReachingAssignment, ResolvableFile, ResolvableSkill, SkillSourceKind,
    StampedRows, TenantId, group_reached,
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

/// The tenant's catalog version (schema version 4: a fresh value whenever any of its skill
/// rows is written).
const VERSION: &str = "SELECT version FROM skill_catalog_versions WHERE tenant_id = $1";

/// The enabled assignments reaching the agent, from the covering index alone.
const ASSIGNMENTS: &str = concat!(
    arm!("a.scope = 'global' AND a.scope_id = ''"),
    " UNION ALL ",
    arm!("a.scope = 'agent' AND a.scope_id = $2"),
    " UNION ALL ",
    arm!("a.scope = 'team' AND a.scope_id = $3"),
);

/// Those assignments with their skill's stamp and enabled flag (NULL when the skill is
/// gone), one row per assignment (grouped by the caller), from the covering
/// `idx_skills_reach`.
const REACHED: &str = concat!(
    "SELECT u.skill_id, u.priority, u.auto_inject, s.stamp, s.enabled FROM (",
    arm!("a.scope = 'global' AND a.scope_id = ''"),
    " UNION ALL ",
    arm!("a.scope = 'agent' AND a.scope_id = $2"),
    " UNION ALL ",
    arm!("a.scope = 'team' AND a.scope_id = $3"),
    ") u LEFT JOIN skills s ON s.tenant_id = $1 AND s.id = u.skill_id"
);

/// The enabled skills the assignments attach with the listed skill fields (stored
/// generated columns) and the skill's listing after the stamp and the assignment fields,
/// one row per assignment, the skill decoded on its first row only.
const SKILLS: &str = concat!(
    "SELECT s.id, s.stamp, u.priority, u.auto_inject, s.slug, s.name, s.description, \
     s.category, s.source_kind, s.plugin_id, s.content, s.is_directory, s.version, s.tags, \
     s.requires_tools, s.trust_level, s.metadata_status, s.metadata_layer, \
     s.file_paths, s.file_types, s.manifest FROM (",
    arm!("a.scope = 'global' AND a.scope_id = ''"),
    " UNION ALL ",
    arm!("a.scope = 'agent' AND a.scope_id = $2"),
    " UNION ALL ",
    arm!("a.scope = 'team' AND a.scope_id = $3"),
    ") u JOIN skills s ON s.tenant_id = $1 AND s.id = u.skill_id WHERE s.enabled"
);

/// The listed columns of the skills whose ids are in `$2`, in the column order of
/// [`SKILLS`] (the assignment fields as placeholders: the caller has them from
/// [`REACHED`]), each with its stamp.
const BY_ID: &str = "SELECT s.id, s.stamp, 0::BIGINT, false, s.slug, s.name, s.description, \
     s.category, s.source_kind, s.plugin_id, s.content, s.is_directory, s.version, s.tags, \
     s.requires_tools, s.trust_level, s.metadata_status, s.metadata_layer, \
     s.file_paths, s.file_types, s.manifest FROM skills s \
     WHERE s.tenant_id = $1 AND s.id = ANY($2)";

/// The skills of `ids` in `tenant` as they are now, each with its stamp (the caller checks
/// the stamps against the ones [`reached`] saw): one round trip.
pub(crate) async fn by_id(
    s: Shared,
    tenant: TenantId,
    ids: Vec<String>,
) -> Outcome<Vec<(i64, ResolvableSkill)>> {
    let tenant_id = tenant.as_str();
    let params: &[&(dyn ToSql + Sync)] = &[&tenant_id, &ids];
    let answers = s.read_snapshot(tenant_id, &[(BY_ID, params)]).await?;
    answers
        .iter()
        .flatten()
        .map(|row| Ok((row.try_get(1)?, skill(row, row.try_get(0)?)?)))
        .collect()
}

/// The tenant's catalog version and the enabled assignments reaching `agent_id` (in
/// `team_id`), from one snapshot in one round trip: what
/// [`StampedProjections::at_version`](skills_store_traits::StampedProjections::at_version)
/// answers from without reading a skill row.
pub(crate) async fn assignments(
    s: Shared,
    tenant: TenantId,
    agent_id: String,
    team_id: Option<String>,
) -> Outcome<(Option<i64>, Vec<ReachingAssignment>)> {
    let tenant_id = tenant.as_str();
    let params: &[&(dyn ToSql + Sync)] = &[&tenant_id, &agent_id, &team_id];
    let queries = [(VERSION, &params[..1]), (ASSIGNMENTS, params)];
    let answers = s.read_snapshot(tenant_id, &queries).await?;
    let version = version_of(&answers)?;
    let assignments = answers
        .get(1)
        .into_iter()
        .flatten()
        .map(|row| {
            Ok(ReachingAssignment::new(
                row.try_get::<_, String>(0)?,
                row.try_get(1)?,
                row.try_get(2)?,
            ))
        })
        .collect::<Outcome<Vec<_>>>()?;
    Ok((version, assignments))
}

/// What [`reached`] answers: the catalog version, the enabled skills reaching the agent
/// with their stamps and grouped assignment fields, and the assigned skills that are
/// disabled or gone.
pub(crate) struct Reached {
    pub(crate) version: Option<i64>,
    pub(crate) skills: Vec<ReachedSkill>,
    pub(crate) excluded: Vec<String>,
}

/// Which skills reach `agent_id` (in `team_id`) at which stamp, with the tenant's catalog
/// version, from one snapshot in one round trip. The caller serves them from the store's
/// decoded skills when each is held at that stamp, reads the others with [`by_id`], and
/// falls back to [`read`].
pub(crate) async fn reached(
    s: Shared,
    tenant: TenantId,
    agent_id: String,
    team_id: Option<String>,
) -> Outcome<Reached> {
    let tenant_id = tenant.as_str();
    let params: &[&(dyn ToSql + Sync)] = &[&tenant_id, &agent_id, &team_id];
    let queries = [(VERSION, &params[..1]), (REACHED, params)];
    let answers = s.read_snapshot(tenant_id, &queries).await?;
    let version = version_of(&answers)?;
    let mut skills = Vec::new();
    let mut excluded = Vec::new();
    for row in answers.get(1).into_iter().flatten() {
        let id = row.try_get::<_, String>(0)?;
        match (
            row.try_get::<_, Option<i64>>(3)?,
            row.try_get::<_, Option<bool>>(4)?,
        ) {
            (Some(stamp), Some(true)) => {
                skills.push(ReachedSkill::new(
                    id,
                    stamp,
                    row.try_get(1)?,
                    row.try_get(2)?,
                ));
            }
            _ => excluded.push(id),
        }
    }
    Ok(Reached {
        version,
        skills: group_reached(skills),
        excluded,
    })
}

/// The version in the first answer of a snapshot (none before the tenant's first skill).
fn version_of(answers: &[Vec<Row>]) -> Outcome<Option<i64>> {
    match answers.first().and_then(|rows| rows.first()) {
        Some(row) => Ok(Some(row.try_get(0)?)),
        None => Ok(None),
    }
}

/// The resolvable skills of `agent_id` (in `team_id`) with every listed column, one round
/// trip, one snapshot; remembered in the store's decoded skills by stamp.
pub(crate) async fn read(
    s: Shared,
    tenant: TenantId,
    agent_id: String,
    team_id: Option<String>,
) -> Outcome<Vec<ResolvableSkill>> {
    let tenant_id = tenant.as_str();
    let params: &[&(dyn ToSql + Sync)] = &[&tenant_id, &agent_id, &team_id];
    let answers = s.read_snapshot(tenant_id, &[(SKILLS, params)]).await?;
    let mut skills = StampedRows::default();
    for row in answers.iter().flatten() {
        let id: &str = row.try_get(0)?;
        let (priority, auto_inject): (i64, bool) = (row.try_get(2)?, row.try_get(3)?);
        if !skills.merge(id, priority, auto_inject) {
            skills.push(row.try_get(1)?, skill(row, id)?, priority, auto_inject);
        }
    }
    let skills = skills.into_sorted();
    s.projections.remember(tenant_id, &skills);
    Ok(skills.into_iter().map(|(_, skill)| skill).collect())
}

/// The skill columns of a row of [`SKILLS`] (not its assignment fields).
fn skill(row: &Row, id: &str) -> Outcome<ResolvableSkill> {
    let mut skill = ResolvableSkill::new(id, row.try_get::<_, String>(4)?);
    skill.name = row.try_get(5)?;
    skill.description = row.try_get(6)?;
    skill.category = row.try_get(7)?;
    skill.source_kind = match row.try_get::<_, &str>(8)? {
        "admin" => SkillSourceKind::Admin,
        "plugin" => SkillSourceKind::Plugin,
        other => return Err(Failure::Decode(format!("unknown source kind `{other}`"))),
    };
    skill.plugin_id = row.try_get(9)?;
    skill.content = row.try_get(10)?;
    skill.is_directory = row.try_get(11)?;
    skill.version = row.try_get(12)?;
    skill.tags = row.try_get::<_, Json<Vec<String>>>(13)?.0;
    skill.requires_tools = row.try_get::<_, Json<Vec<String>>>(14)?.0;
    skill.trust_level = row.try_get(15)?;
    skill.metadata_status = row.try_get::<_, Option<Json<Value>>>(16)?.map(|j| j.0);
    skill.metadata_layer = row.try_get::<_, Option<Json<Value>>>(17)?.map(|j| j.0);
    let paths = row.try_get::<_, Vec<String>>(18)?;
    let types = row.try_get::<_, Vec<String>>(19)?;
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
    skill.manifest = row.try_get(20)?;
    Ok(skill)
}
