//! Assignment rows.

use rusqlite::types::Value as Sql;
use rusqlite::{Connection, OptionalExtension, params, params_from_iter};
use serde_json::Value;
use skills_store_traits::{
    AssignedSkill, AssignmentFilter, AssignmentScope, AssignmentUpdate, Error, NewAssignment,
    SkillAssignment, Timestamp, assignment_order, new_id,
};

use super::records;
use crate::error::Outcome;
use crate::rows::{
    Field, Kind, build, columns, decode, decode_parts, field, insert_object, object, renamed,
};

/// The `skill_assignments` columns, in [`SkillAssignment`]'s field order.
const FIELDS: &[Field] = &[
    field("id", Kind::Text),
    renamed("tenant", "tenant_id", Kind::Text),
    field("skill_id", Kind::Text),
    field("skill_slug", Kind::Text),
    field("scope", Kind::Text),
    field("scope_id", Kind::Text),
    field("priority", Kind::Int),
    field("auto_inject", Kind::Bool),
    field("enabled", Kind::Bool),
    field("created_at", Kind::Int),
    field("updated_at", Kind::Int),
];

pub(crate) fn create(
    conn: &Connection,
    tenant: &str,
    new: &NewAssignment,
    now: Timestamp,
) -> Outcome<SkillAssignment> {
    let Some(skill) = records::by_id(conn, tenant, &new.skill_id)? else {
        return Err(Error::not_found("skill", new.skill_id.clone()).into());
    };
    let taken: Option<i64> = conn
        .prepare_cached(
            "SELECT 1 FROM skill_assignments WHERE tenant_id = ?1 AND skill_id = ?2 \
             AND scope = ?3 AND IFNULL(scope_id, '') = IFNULL(?4, '')",
        )?
        .query_row(
            params![tenant, new.skill_id, new.scope.as_str(), new.scope_id],
            |row| row.get(0),
        )
        .optional()?;
    if taken.is_some() {
        let key = format!(
            "{} {} {}",
            new.skill_id,
            new.scope.as_str(),
            new.scope_id.as_deref().unwrap_or("-")
        );
        return Err(Error::conflict("assignment", key).into());
    }
    let record = object! {
        "id" => new_id(),
        "tenant" => tenant,
        "skill_id" => new.skill_id,
        "skill_slug" => skill.slug,
        "scope" => new.scope,
        "scope_id" => new.scope_id,
        "priority" => new.priority,
        "auto_inject" => new.auto_inject,
        "enabled" => new.enabled,
        "created_at" => now,
        "updated_at" => now,
    };
    insert_object(conn, "skill_assignments", &[], FIELDS, &record)?;
    build(Value::Object(record))
}

pub(crate) fn by_id(conn: &Connection, tenant: &str, id: &str) -> Outcome<Option<SkillAssignment>> {
    let sql = format!(
        "SELECT {} FROM skill_assignments WHERE tenant_id = ?1 AND id = ?2",
        columns(FIELDS, None)
    );
    Ok(conn
        .prepare_cached(&sql)?
        .query_row(params![tenant, id], |row| decode(row, 0, FIELDS))
        .optional()?)
}

pub(crate) fn list(
    conn: &Connection,
    tenant: &str,
    filter: &AssignmentFilter,
) -> Outcome<Vec<SkillAssignment>> {
    let mut conditions = vec!["tenant_id = ?1".to_owned()];
    let mut params = vec![Sql::Text(tenant.to_owned())];
    let filters = [
        ("skill_id", filter.skill_id.clone()),
        ("scope", filter.scope.map(|s| s.as_str().to_owned())),
        ("scope_id", filter.scope_id.clone()),
    ];
    for (column, value) in filters {
        if let Some(value) = value {
            params.push(Sql::Text(value));
            conditions.push(format!("{column} = ?{}", params.len()));
        }
    }
    let sql = format!(
        "SELECT {} FROM skill_assignments WHERE {}",
        columns(FIELDS, None),
        conditions.join(" AND ")
    );
    let mut statement = conn.prepare_cached(&sql)?;
    let rows = statement.query_map(params_from_iter(params), |row| decode(row, 0, FIELDS))?;
    let mut list: Vec<SkillAssignment> = rows.collect::<rusqlite::Result<_>>()?;
    list.sort_by(assignment_order);
    Ok(list)
}

/// Global assignments, the team's and the agent's own, each found on the scope index.
pub(crate) fn for_agent(
    conn: &Connection,
    tenant: &str,
    agent: &str,
    team: Option<&str>,
) -> Outcome<Vec<AssignedSkill>> {
    let select = format!(
        "SELECT {}, {} FROM skill_assignments a \
         JOIN skills s ON s.tenant_id = a.tenant_id AND s.id = a.skill_id \
         WHERE a.tenant_id = ?1 AND a.scope = ",
        columns(FIELDS, Some("a")),
        columns(records::FIELDS, Some("s"))
    );
    let sql = format!(
        "{select}'global' UNION ALL {select}'agent' AND a.scope_id = ?2 \
         UNION ALL {select}'team' AND a.scope_id = ?3"
    );
    let mut statement = conn.prepare_cached(&sql)?;
    let parts = [
        ("assignment", 0, FIELDS),
        ("skill", FIELDS.len(), records::FIELDS),
    ];
    let rows = statement.query_map(params![tenant, agent, team], |row| {
        decode_parts::<AssignedSkill>(row, &parts)
    })?;
    let mut list: Vec<AssignedSkill> = rows.collect::<rusqlite::Result<_>>()?;
    list.sort_by(|a, b| assignment_order(&a.assignment, &b.assignment));
    Ok(list)
}

pub(crate) fn update(
    conn: &Connection,
    tenant: &str,
    id: &str,
    update: AssignmentUpdate,
    now: Timestamp,
) -> Outcome<Option<SkillAssignment>> {
    let Some(mut assignment) = by_id(conn, tenant, id)? else {
        return Ok(None);
    };
    if let Some(enabled) = update.enabled {
        assignment.enabled = enabled;
    }
    if let Some(priority) = update.priority {
        assignment.priority = priority;
    }
    if let Some(auto_inject) = update.auto_inject {
        assignment.auto_inject = auto_inject;
    }
    assignment.updated_at = now;
    crate::rows::update(
        conn,
        "skill_assignments",
        FIELDS,
        &assignment,
        &[("tenant_id", &tenant), ("id", &id)],
    )?;
    Ok(Some(assignment))
}

pub(crate) fn delete(conn: &Connection, tenant: &str, id: &str) -> Outcome<bool> {
    let deleted = conn
        .prepare_cached("DELETE FROM skill_assignments WHERE tenant_id = ?1 AND id = ?2")?
        .execute(params![tenant, id])?;
    Ok(deleted > 0)
}

pub(crate) fn agent_ids(conn: &Connection, tenant: &str, skill_id: &str) -> Outcome<Vec<String>> {
    let mut statement = conn.prepare_cached(
        "SELECT DISTINCT scope_id FROM skill_assignments \
         WHERE tenant_id = ?1 AND skill_id = ?2 AND scope = ?3 AND scope_id IS NOT NULL \
         ORDER BY scope_id",
    )?;
    let rows = statement.query_map(
        params![tenant, skill_id, AssignmentScope::Agent.as_str()],
        |row| row.get(0),
    )?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}
