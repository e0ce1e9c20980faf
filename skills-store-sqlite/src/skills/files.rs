//! Supporting-file rows.

use std::collections::BTreeMap;

use rusqlite::{Connection, OptionalExtension, params};
use serde_json::Value;
use skills_store_traits::validate::{self, StoreLimits};
use skills_store_traits::{
    Error, NewSkillFile, SkillFileRecord, SkillFileUpdate, Timestamp, new_id,
};

use super::records;
use crate::error::Outcome;
use crate::rows::{Field, Kind, build, columns, decode, field, insert_object, object};

/// The `skill_files` columns (besides `tenant_id`), in [`SkillFileRecord`]'s field order.
const FIELDS: &[Field] = &[
    field("id", Kind::Text),
    field("skill_id", Kind::Text),
    field("relative_path", Kind::Text),
    field("content", Kind::Text),
    field("content_type", Kind::Text),
    field("size_bytes", Kind::UInt),
    field("checksum", Kind::Text),
    field("created_at", Kind::Int),
    field("updated_at", Kind::Int),
];

/// Writes a file row; sizes, checksums and types are computed here, never taken as given.
pub(crate) fn insert(
    conn: &Connection,
    tenant: &str,
    skill_id: &str,
    file: &NewSkillFile,
    now: Timestamp,
) -> Outcome<SkillFileRecord> {
    let record = object! {
        "id" => new_id(),
        "skill_id" => skill_id,
        "relative_path" => file.path,
        "content" => file.content,
        "content_type" => validate::content_type_or_guess(file),
        "size_bytes" => (file.content.len() as u64),
        "checksum" => validate::checksum(&file.content),
        "created_at" => now,
        "updated_at" => now,
    };
    insert_object(
        conn,
        "skill_files",
        &[("tenant_id", &tenant)],
        FIELDS,
        &record,
    )?;
    build(Value::Object(record))
}

pub(crate) fn create(
    conn: &Connection,
    tenant: &str,
    skill_id: &str,
    file: &NewSkillFile,
    limits: &StoreLimits,
    now: Timestamp,
) -> Outcome<SkillFileRecord> {
    let Some(skill) = records::by_id(conn, tenant, skill_id)? else {
        return Err(Error::not_found("skill", skill_id).into());
    };
    if by_path(conn, tenant, skill_id, &file.path)?.is_some() {
        return Err(Error::conflict("skill file", file.path.clone()).into());
    }
    let total = (skill.content.len() as u64)
        .saturating_add(records::files_bytes(conn, tenant, skill_id)?)
        .saturating_add(file.content.len() as u64);
    validate::check_total("file.content", total, limits)?;
    let record = insert(conn, tenant, skill_id, file, now)?;
    records::touch(conn, tenant, skill_id, now, true)?;
    Ok(record)
}

fn select() -> String {
    columns(FIELDS, None)
}

pub(crate) fn list(
    conn: &Connection,
    tenant: &str,
    skill_id: &str,
) -> Outcome<Vec<SkillFileRecord>> {
    // BINARY collation compares UTF-8 bytes: the bytewise path order the trait promises.
    let sql = format!(
        "SELECT {} FROM skill_files WHERE tenant_id = ?1 AND skill_id = ?2 \
         ORDER BY relative_path",
        select()
    );
    let mut statement = conn.prepare_cached(&sql)?;
    let rows = statement.query_map(params![tenant, skill_id], |row| decode(row, 0, FIELDS))?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

/// The files of every skill in `skill_ids`, grouped by skill: one statement whatever the
/// number of ids. The ids travel as one JSON array parameter (read back with `json_each`),
/// so the statement text (and its cached preparation) never changes and SQLite's limit on
/// bound variables never applies.
pub(crate) fn list_many(
    conn: &Connection,
    tenant: &str,
    skill_ids: &[String],
) -> Outcome<BTreeMap<String, Vec<SkillFileRecord>>> {
    if skill_ids.is_empty() {
        return Ok(BTreeMap::new());
    }
    let ids = Value::from(skill_ids.to_vec()).to_string();
    // The (tenant_id, skill_id, relative_path) index serves both the lookup and the order.
    let sql = format!(
        "SELECT {} FROM skill_files WHERE tenant_id = ?1 \
         AND skill_id IN (SELECT value FROM json_each(?2)) \
         ORDER BY skill_id, relative_path",
        select()
    );
    let mut statement = conn.prepare_cached(&sql)?;
    let rows = statement.query_map(params![tenant, ids], |row| {
        decode::<SkillFileRecord>(row, 0, FIELDS)
    })?;
    let mut out: BTreeMap<String, Vec<SkillFileRecord>> = BTreeMap::new();
    for row in rows {
        let file = row?;
        out.entry(file.skill_id.clone()).or_default().push(file);
    }
    Ok(out)
}

pub(crate) fn by_path(
    conn: &Connection,
    tenant: &str,
    skill_id: &str,
    path: &str,
) -> Outcome<Option<SkillFileRecord>> {
    let sql = format!(
        "SELECT {} FROM skill_files WHERE tenant_id = ?1 AND skill_id = ?2 \
         AND relative_path = ?3",
        select()
    );
    Ok(conn
        .prepare_cached(&sql)?
        .query_row(params![tenant, skill_id, path], |row| {
            decode(row, 0, FIELDS)
        })
        .optional()?)
}

fn by_id(conn: &Connection, tenant: &str, id: &str) -> Outcome<Option<SkillFileRecord>> {
    let sql = format!(
        "SELECT {} FROM skill_files WHERE tenant_id = ?1 AND id = ?2",
        select()
    );
    Ok(conn
        .prepare_cached(&sql)?
        .query_row(params![tenant, id], |row| decode(row, 0, FIELDS))
        .optional()?)
}

pub(crate) fn update(
    conn: &Connection,
    tenant: &str,
    id: &str,
    update: &SkillFileUpdate,
    limits: &StoreLimits,
    now: Timestamp,
) -> Outcome<Option<SkillFileRecord>> {
    let Some(mut file) = by_id(conn, tenant, id)? else {
        return Ok(None);
    };
    if let Some(content) = &update.content {
        let probe = NewSkillFile::new(file.relative_path.clone(), content.clone());
        validate::check_file("file", &probe, limits)?;
        let skill_bytes = records::by_id(conn, tenant, &file.skill_id)?
            .map_or(0, |skill| skill.content.len() as u64);
        let others =
            records::files_bytes(conn, tenant, &file.skill_id)?.saturating_sub(file.size_bytes);
        let total = skill_bytes
            .saturating_add(others)
            .saturating_add(content.len() as u64);
        validate::check_total("file.content", total, limits)?;
        file.size_bytes = content.len() as u64;
        file.checksum = validate::checksum(content);
        file.content = content.clone();
    }
    if let Some(content_type) = &update.content_type {
        file.content_type = content_type.clone();
    }
    file.updated_at = now;
    crate::rows::update(
        conn,
        "skill_files",
        FIELDS,
        &file,
        &[("tenant_id", &tenant), ("id", &id)],
    )?;
    records::touch(conn, tenant, &file.skill_id, now, false)?;
    Ok(Some(file))
}

pub(crate) fn delete(conn: &Connection, tenant: &str, id: &str, now: Timestamp) -> Outcome<bool> {
    let skill_id: Option<String> = conn
        .prepare_cached(
            "DELETE FROM skill_files WHERE tenant_id = ?1 AND id = ?2 RETURNING skill_id",
        )?
        .query_row(params![tenant, id], |row| row.get(0))
        .optional()?;
    match skill_id {
        Some(skill_id) => {
            records::touch(conn, tenant, &skill_id, now, false)?;
            Ok(true)
        }
        None => Ok(false),
    }
}

/// Deletes the skill's file rows without touching the skill.
pub(crate) fn delete_rows(conn: &Connection, tenant: &str, skill_id: &str) -> Outcome<u64> {
    let deleted = conn
        .prepare_cached("DELETE FROM skill_files WHERE tenant_id = ?1 AND skill_id = ?2")?
        .execute(params![tenant, skill_id])?;
    Ok(deleted as u64)
}

pub(crate) fn delete_all(
    conn: &Connection,
    tenant: &str,
    skill_id: &str,
    now: Timestamp,
) -> Outcome<u64> {
    let deleted = delete_rows(conn, tenant, skill_id)?;
    if deleted > 0 {
        records::touch(conn, tenant, skill_id, now, false)?;
    }
    Ok(deleted)
}
