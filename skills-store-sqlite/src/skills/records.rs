//! Skill rows.

use rusqlite::types::Value as Sql;
use rusqlite::{Connection, OptionalExtension, params, params_from_iter};
use serde_json::Value;
use skills_store_traits::validate::{self, StoreLimits};
use skills_store_traits::{
    Error, NewSkill, SkillFilter, SkillRecord, SkillSourceKind, SkillUpdate, Timestamp, new_id,
};

use super::files;
use crate::error::Outcome;
use crate::rows::{Field, Kind, build, columns, decode, field, insert_object, object, renamed};

/// The `skills` columns, in [`SkillRecord`]'s field order.
pub(crate) const FIELDS: &[Field] = &[
    field("id", Kind::Text),
    renamed("tenant", "tenant_id", Kind::Text),
    field("name", Kind::Text),
    field("slug", Kind::Text),
    field("description", Kind::Text),
    field("category", Kind::Text),
    field("source_kind", Kind::Text),
    field("plugin_id", Kind::Text),
    field("source_ref", Kind::Text),
    field("content", Kind::Text),
    field("is_directory", Kind::Bool),
    field("version", Kind::Text),
    field("checksum", Kind::Text),
    field("enabled", Kind::Bool),
    field("held", Kind::Bool),
    renamed("tags", "tags_json", Kind::Json),
    renamed("requires_tools", "requires_tools_json", Kind::Json),
    renamed("metadata", "metadata_json", Kind::Json),
    field("trust_level", Kind::Text),
    field("created_at", Kind::Int),
    field("updated_at", Kind::Int),
];

pub(crate) fn create(
    conn: &Connection,
    tenant: &str,
    new: &NewSkill,
    now: Timestamp,
) -> Outcome<SkillRecord> {
    if slug_holder(conn, tenant, &new.slug)?.is_some() {
        return Err(Error::conflict("skill slug", new.slug.clone()).into());
    }
    let id = new_id();
    let record = object! {
        "id" => id,
        "tenant" => tenant,
        "name" => new.name,
        "slug" => new.slug,
        "description" => new.description,
        "category" => new.category.as_deref().unwrap_or("general"),
        "source_kind" => new.source_kind.unwrap_or(SkillSourceKind::Admin),
        "plugin_id" => new.plugin_id,
        "source_ref" => new.source_ref,
        "content" => new.content,
        "is_directory" => (new.is_directory || !new.files.is_empty()),
        "version" => new.version,
        "checksum" => validate::checksum(&new.content),
        "enabled" => new.enabled.unwrap_or(true),
        "held" => false,
        "tags" => new.tags,
        "requires_tools" => new.requires_tools,
        "metadata" => new.metadata,
        "trust_level" => new.trust_level,
        "created_at" => now,
        "updated_at" => now,
    };
    insert_object(conn, "skills", &[], FIELDS, &record)?;
    for file in &new.files {
        files::insert(conn, tenant, &id, file, now)?;
    }
    build(Value::Object(record))
}

/// The id of the tenant's skill with `slug`.
pub(crate) fn slug_holder(conn: &Connection, tenant: &str, slug: &str) -> Outcome<Option<String>> {
    Ok(conn
        .prepare_cached("SELECT id FROM skills WHERE tenant_id = ?1 AND slug = ?2")?
        .query_row(params![tenant, slug], |row| row.get(0))
        .optional()?)
}

fn select(alias: Option<&str>) -> String {
    columns(FIELDS, alias)
}

pub(crate) fn by_id(conn: &Connection, tenant: &str, id: &str) -> Outcome<Option<SkillRecord>> {
    let sql = format!(
        "SELECT {} FROM skills WHERE tenant_id = ?1 AND id = ?2",
        select(None)
    );
    Ok(conn
        .prepare_cached(&sql)?
        .query_row(params![tenant, id], |row| decode(row, 0, FIELDS))
        .optional()?)
}

pub(crate) fn by_slug(conn: &Connection, tenant: &str, slug: &str) -> Outcome<Option<SkillRecord>> {
    let sql = format!(
        "SELECT {} FROM skills WHERE tenant_id = ?1 AND slug = ?2",
        select(None)
    );
    Ok(conn
        .prepare_cached(&sql)?
        .query_row(params![tenant, slug], |row| decode(row, 0, FIELDS))
        .optional()?)
}

/// The filter's exact-match fields narrow the rows in SQL (on the indexes); every field,
/// the Unicode-lowercase search included, is then applied by [`SkillFilter::matches`], so
/// the result is exactly what the in-memory store returns.
pub(crate) fn list(
    conn: &Connection,
    tenant: &str,
    filter: &SkillFilter,
) -> Outcome<Vec<SkillRecord>> {
    let mut conditions = vec!["tenant_id = ?1".to_owned()];
    let mut params = vec![Sql::Text(tenant.to_owned())];
    // `?` in a condition stands for its parameter.
    let mut condition = |sql: &str, value: Sql| {
        params.push(value);
        conditions.push(sql.replace('?', &format!("?{}", params.len())));
    };
    if let Some(source) = filter.source {
        condition("source_kind = ?", Sql::Text(source.as_str().to_owned()));
    }
    if let Some(category) = &filter.category {
        condition("category = ?", Sql::Text(category.clone()));
    }
    if let Some(enabled) = filter.enabled {
        condition("enabled = ?", Sql::Integer(i64::from(enabled)));
    }
    if let Some(plugin) = &filter.plugin_id {
        condition("plugin_id = ?", Sql::Text(plugin.clone()));
    }
    for tag in &filter.tags {
        condition(
            "EXISTS (SELECT 1 FROM json_each(tags_json) WHERE json_each.value = ?)",
            Sql::Text(tag.clone()),
        );
    }
    let sql = format!(
        "SELECT {} FROM skills WHERE {} ORDER BY slug",
        select(None),
        conditions.join(" AND ")
    );
    let mut statement = conn.prepare_cached(&sql)?;
    let rows = statement.query_map(params_from_iter(params), |row| decode(row, 0, FIELDS))?;
    let mut skills = Vec::new();
    for skill in rows {
        let skill: SkillRecord = skill?;
        if filter.matches(&skill) {
            skills.push(skill);
        }
    }
    Ok(skills)
}

/// Total bytes of the skill's files.
pub(crate) fn files_bytes(conn: &Connection, tenant: &str, skill_id: &str) -> Outcome<u64> {
    let total: i64 = conn
        .prepare_cached(
            "SELECT IFNULL(SUM(size_bytes), 0) FROM skill_files \
             WHERE tenant_id = ?1 AND skill_id = ?2",
        )?
        .query_row(params![tenant, skill_id], |row| row.get(0))?;
    Ok(u64::try_from(total).unwrap_or(0))
}

pub(crate) fn update(
    conn: &Connection,
    tenant: &str,
    id: &str,
    update: &SkillUpdate,
    limits: &StoreLimits,
    now: Timestamp,
) -> Outcome<Option<SkillRecord>> {
    let Some(mut skill) = by_id(conn, tenant, id)? else {
        return Ok(None);
    };
    validate::check_update(
        update,
        skill.content.len() as u64,
        files_bytes(conn, tenant, id)?,
        limits,
    )?;
    if let Some(new_files) = &update.files {
        files::delete_rows(conn, tenant, id)?;
        for file in new_files {
            files::insert(conn, tenant, id, file, now)?;
        }
    }
    update.apply_to(&mut skill, now);
    crate::rows::update(
        conn,
        "skills",
        FIELDS,
        &skill,
        &[("tenant_id", &tenant), ("id", &id)],
    )?;
    Ok(Some(skill))
}

/// Files and assignments go with the skill: the foreign keys cascade.
pub(crate) fn delete(conn: &Connection, tenant: &str, id: &str) -> Outcome<bool> {
    let deleted = conn
        .prepare_cached("DELETE FROM skills WHERE tenant_id = ?1 AND id = ?2")?
        .execute(params![tenant, id])?;
    Ok(deleted > 0)
}

/// Marks a change to the skill's files.
pub(crate) fn touch(
    conn: &Connection,
    tenant: &str,
    id: &str,
    now: Timestamp,
    is_directory: bool,
) -> Outcome<()> {
    conn.prepare_cached(
        "UPDATE skills SET updated_at = ?3, is_directory = MAX(is_directory, ?4) \
         WHERE tenant_id = ?1 AND id = ?2",
    )?
    .execute(params![tenant, id, now, is_directory])?;
    Ok(())
}

pub(crate) fn with_assignment_counts(
    conn: &Connection,
    tenant: &str,
) -> Outcome<Vec<(SkillRecord, u64)>> {
    let sql = format!(
        "SELECT {}, (SELECT COUNT(*) FROM skill_assignments a \
         WHERE a.tenant_id = s.tenant_id AND a.skill_id = s.id) \
         FROM skills s WHERE s.tenant_id = ?1 ORDER BY s.slug",
        select(Some("s"))
    );
    let mut statement = conn.prepare_cached(&sql)?;
    let rows = statement.query_map(params![tenant], |row| {
        let count: i64 = row.get(FIELDS.len())?;
        Ok((decode(row, 0, FIELDS)?, u64::try_from(count).unwrap_or(0)))
    })?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

pub(crate) fn categories(conn: &Connection, tenant: &str) -> Outcome<Vec<String>> {
    let mut statement = conn.prepare_cached(
        "SELECT DISTINCT category FROM skills WHERE tenant_id = ?1 ORDER BY category",
    )?;
    let rows = statement.query_map(params![tenant], |row| row.get(0))?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}
