//! What the resolver reads (`SkillStore::assignments_for_agent_with_files`), in one round
//! trip and one snapshot.

use std::collections::BTreeMap;

use skills_store_traits::{
    AgentSkills, AssignedSkill, SkillAssignment, SkillFileRecord, SkillRecord, TenantId,
    assignment_order,
};
use tokio_postgres::Row;
use tokio_postgres::types::{Json, ToSql};

use crate::db::Shared;
use crate::error::Outcome;

/// The condition on the assignments `a` reaching agent `$2` (in team `$3`, when not NULL)
/// in tenant `$1` (a macro so that `concat!` can build both queries from it).
macro_rules! reaching {
    () => {
        "a.tenant_id = $1 AND ((a.scope = 'global' AND a.scope_id = '') \
         OR (a.scope = 'agent' AND a.scope_id = $2) \
         OR ($3::TEXT IS NOT NULL AND a.scope = 'team' AND a.scope_id = $3))"
    };
}

/// One query, whatever the number of skills: the assignments of the three targets with
/// their skills.
pub(crate) const ASSIGNED: &str = concat!(
    "SELECT a.doc, s.doc FROM skill_assignments a \
     JOIN skills s ON s.tenant_id = a.tenant_id AND s.id = a.skill_id WHERE ",
    reaching!()
);

/// The files of every skill those assignments reach, in (skill, path) order; the skills
/// are found by the same condition in the same snapshot, so this query does not wait for
/// the first one's answer.
const FILES: &str = concat!(
    "SELECT f.doc FROM skill_files f WHERE f.tenant_id = $1 AND f.skill_id IN \
     (SELECT a.skill_id FROM skill_assignments a WHERE ",
    reaching!(),
    ") ORDER BY f.skill_id, f.relative_path"
);

/// Assignment rows (`a.doc`, `s.doc`) as pairs in [`assignment_order`]. Each document is
/// parsed straight into its record: no JSON tree in between, and no copy of both records
/// through their serde form to pair them.
pub(crate) fn assigned(rows: &[Row]) -> Outcome<Vec<AssignedSkill>> {
    let mut list = rows
        .iter()
        .map(|row| {
            let assignment = row.try_get::<_, Json<SkillAssignment>>(0)?.0;
            let skill = row.try_get::<_, Json<SkillRecord>>(1)?.0;
            Ok(AssignedSkill::new(assignment, skill))
        })
        .collect::<Outcome<Vec<_>>>()?;
    list.sort_by(|a, b| assignment_order(&a.assignment, &b.assignment));
    Ok(list)
}

/// File rows grouped by skill, each group in path order.
pub(crate) fn grouped(files: Vec<SkillFileRecord>) -> BTreeMap<String, Vec<SkillFileRecord>> {
    let mut out: BTreeMap<String, Vec<SkillFileRecord>> = BTreeMap::new();
    for file in files {
        out.entry(file.skill_id.clone()).or_default().push(file);
    }
    out
}

pub(crate) async fn read(
    s: Shared,
    tenant: TenantId,
    agent_id: String,
    team_id: Option<String>,
) -> Outcome<AgentSkills> {
    let tenant_id = tenant.as_str();
    let params: &[&(dyn ToSql + Sync)] = &[&tenant_id, &agent_id, &team_id];
    let answers = s
        .read_snapshot(tenant_id, &[(ASSIGNED, params), (FILES, params)])
        .await?;
    let [assignments, files] = <[Vec<Row>; 2]>::try_from(answers)
        .map_err(|_| crate::error::Failure::Decode("a query's answer is missing".to_owned()))?;
    let files = files
        .iter()
        .map(crate::db::doc::<SkillFileRecord>)
        .collect::<Outcome<Vec<_>>>()?;
    Ok(AgentSkills::new(assigned(&assignments)?, grouped(files)))
}
