//! [`LearningStore`] on `learning_sequences` and `learning_patterns`.
//!
//! Sequences keep their recording order in an autoincrement column, which breaks ties
//! between equal timestamps exactly as the in-memory store's insertion order does. Pattern
//! upserts and status changes read the row and write it back in one write transaction, so
//! a status compare-and-set cannot lose a race and concurrent detections make one row.

use rusqlite::types::Value as Sql;
use rusqlite::{Connection, OptionalExtension, ToSql, params, params_from_iter};
use skills_store_traits::learning::{
    ExecutedSequence, LearningPattern, LearningStore, NewExecutedSequence, NewPattern, PatternKind,
    PatternStatus, apply_status_change, check_status_change, pattern_order,
};
use skills_store_traits::{Error, Result, TenantId, Timestamp, new_id};

use crate::SqliteStore;
use crate::error::Outcome;
use crate::rows::{Field, Kind, columns, decode, field, insert, renamed, update};

/// The `learning_sequences` columns, in [`ExecutedSequence`]'s field order.
const SEQUENCE_FIELDS: &[Field] = &[
    field("id", Kind::Text),
    renamed("tenant", "tenant_id", Kind::Text),
    field("task_type", Kind::Text),
    renamed("steps", "steps_json", Kind::Json),
    field("success", Kind::Bool),
    field("recorded_at", Kind::Int),
];

/// The `learning_patterns` columns, in [`LearningPattern`]'s field order.
const PATTERN_FIELDS: &[Field] = &[
    field("id", Kind::Text),
    renamed("tenant", "tenant_id", Kind::Text),
    field("pattern_hash", Kind::Text),
    field("kind", Kind::Text),
    renamed("skills", "skills_json", Kind::Json),
    renamed("task_types", "task_types_json", Kind::Json),
    field("frequency", Kind::UInt),
    field("success_rate", Kind::Real),
    field("status", Kind::Text),
    field("draft_skill_id", Kind::Text),
    field("first_seen", Kind::Int),
    field("last_seen", Kind::Int),
    field("updated_at", Kind::Int),
];

/// The tenant's pattern whose `column` (`id` or `pattern_hash`) is `value`.
fn pattern_by(
    conn: &Connection,
    tenant: &str,
    column: &str,
    value: &str,
) -> Outcome<Option<LearningPattern>> {
    let sql = format!(
        "SELECT {} FROM learning_patterns WHERE tenant_id = ?1 AND {column} = ?2",
        columns(PATTERN_FIELDS, None)
    );
    Ok(conn
        .prepare_cached(&sql)?
        .query_row(params![tenant, value], |row| decode(row, 0, PATTERN_FIELDS))
        .optional()?)
}

fn update_pattern(conn: &Connection, pattern: &LearningPattern) -> Outcome<()> {
    let tenant = pattern.tenant.as_str();
    let keys: [(&str, &dyn ToSql); 2] = [("tenant_id", &tenant), ("id", &pattern.id)];
    update(conn, "learning_patterns", PATTERN_FIELDS, pattern, &keys)?;
    Ok(())
}

#[async_trait::async_trait]
impl LearningStore for SqliteStore {
    async fn record_sequence(
        &self,
        tenant: &TenantId,
        sequence: NewExecutedSequence,
    ) -> Result<ExecutedSequence> {
        sequence.validate()?;
        let (tenant, clock) = (tenant.clone(), self.clock.clone());
        self.worker
            .write(move |conn| {
                let record = sequence.clone().into_record(new_id(), &tenant, clock.now());
                insert(conn, "learning_sequences", &[], SEQUENCE_FIELDS, &record)?;
                Ok(record)
            })
            .await
    }

    async fn list_sequences(
        &self,
        tenant: &TenantId,
        since: Option<Timestamp>,
        limit: Option<usize>,
    ) -> Result<Vec<ExecutedSequence>> {
        let tenant = tenant.to_string();
        let since = since.unwrap_or(Timestamp::MIN);
        let limit = limit.map_or(-1, |l| i64::try_from(l).unwrap_or(i64::MAX));
        self.worker
            .read(move |conn| {
                let sql = format!(
                    "SELECT {} FROM learning_sequences WHERE tenant_id = ?1 AND recorded_at >= ?2 \
                     ORDER BY recorded_at, seq LIMIT ?3",
                    columns(SEQUENCE_FIELDS, None)
                );
                let mut statement = conn.prepare_cached(&sql)?;
                let rows = statement.query_map(params![tenant, since, limit], |row| {
                    decode(row, 0, SEQUENCE_FIELDS)
                })?;
                Ok(rows.collect::<rusqlite::Result<_>>()?)
            })
            .await
    }

    async fn prune_sequences(&self, tenant: &TenantId, before: Timestamp) -> Result<u64> {
        let tenant = tenant.to_string();
        self.worker
            .write(move |conn| {
                let deleted = conn
                    .prepare_cached(
                        "DELETE FROM learning_sequences WHERE tenant_id = ?1 AND recorded_at < ?2",
                    )?
                    .execute(params![tenant, before])?;
                Ok(deleted as u64)
            })
            .await
    }

    async fn upsert_pattern(
        &self,
        tenant: &TenantId,
        pattern: NewPattern,
    ) -> Result<LearningPattern> {
        pattern.validate()?;
        let (tenant, clock) = (tenant.clone(), self.clock.clone());
        self.worker
            .write(move |conn| {
                let now = clock.now();
                match pattern_by(conn, tenant.as_str(), "pattern_hash", &pattern.pattern_hash)? {
                    Some(mut existing) => {
                        pattern.clone().refresh(&mut existing, now)?;
                        update_pattern(conn, &existing)?;
                        Ok(existing)
                    }
                    None => {
                        let record = pattern.clone().into_record(new_id(), &tenant, now);
                        insert(conn, "learning_patterns", &[], PATTERN_FIELDS, &record)?;
                        Ok(record)
                    }
                }
            })
            .await
    }

    async fn get_pattern(&self, tenant: &TenantId, id: &str) -> Result<Option<LearningPattern>> {
        let (tenant, id) = (tenant.to_string(), id.to_owned());
        self.worker
            .read(move |conn| pattern_by(conn, &tenant, "id", &id))
            .await
    }

    async fn find_pattern_by_hash(
        &self,
        tenant: &TenantId,
        pattern_hash: &str,
    ) -> Result<Option<LearningPattern>> {
        let (tenant, hash) = (tenant.to_string(), pattern_hash.to_owned());
        self.worker
            .read(move |conn| pattern_by(conn, &tenant, "pattern_hash", &hash))
            .await
    }

    async fn list_patterns(
        &self,
        tenant: &TenantId,
        status: Option<PatternStatus>,
        kind: Option<PatternKind>,
    ) -> Result<Vec<LearningPattern>> {
        let tenant = tenant.to_string();
        let mut patterns: Vec<LearningPattern> = self
            .worker
            .read(move |conn| {
                let mut conditions = vec!["tenant_id = ?1".to_owned()];
                let mut params = vec![Sql::Text(tenant.clone())];
                if let Some(status) = status {
                    params.push(Sql::Text(status.as_str().to_owned()));
                    conditions.push(format!("status = ?{}", params.len()));
                }
                if let Some(kind) = kind {
                    params.push(Sql::Text(kind.as_str().to_owned()));
                    conditions.push(format!("kind = ?{}", params.len()));
                }
                let sql = format!(
                    "SELECT {} FROM learning_patterns WHERE {}",
                    columns(PATTERN_FIELDS, None),
                    conditions.join(" AND ")
                );
                let mut statement = conn.prepare_cached(&sql)?;
                let rows = statement.query_map(params_from_iter(params), |row| {
                    decode(row, 0, PATTERN_FIELDS)
                })?;
                Ok(rows.collect::<rusqlite::Result<_>>()?)
            })
            .await?;
        // Frequencies are stored bit for bit as u64, which SQL would order as signed; the
        // shared order is applied here instead.
        patterns.sort_by(pattern_order);
        Ok(patterns)
    }

    async fn set_pattern_status(
        &self,
        tenant: &TenantId,
        id: &str,
        expected: PatternStatus,
        to: PatternStatus,
        draft_skill_id: Option<String>,
    ) -> Result<LearningPattern> {
        check_status_change(expected, to, draft_skill_id.as_deref())?;
        let (tenant, id, clock) = (tenant.to_string(), id.to_owned(), self.clock.clone());
        self.worker
            .write(move |conn| {
                let mut pattern = pattern_by(conn, &tenant, "id", &id)?
                    .ok_or_else(|| Error::not_found("learning pattern", id.clone()))?;
                apply_status_change(
                    &mut pattern,
                    expected,
                    to,
                    draft_skill_id.clone(),
                    clock.now(),
                )?;
                update_pattern(conn, &pattern)?;
                Ok(pattern)
            })
            .await
    }
}
