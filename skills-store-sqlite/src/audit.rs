//! [`AuditStore`] on `skill_audit_log`.
//!
//! An append reads the chain's head and inserts the next entry in one write transaction
//! (`BEGIN IMMEDIATE`), so it is a compare-and-append even between processes: a writer whose
//! expected head is stale gets [`Error::Stale`] and the chain never forks. Once `append`
//! returns, the entry is committed; with the default `synchronous = FULL` it is on disk.
//! Triggers refuse any `UPDATE` or `DELETE` of the table.

use rusqlite::types::Value as Sql;
use rusqlite::{Connection, OptionalExtension, Row, ToSql, params, params_from_iter};
use skills_store_traits::audit::{AuditEntry, AuditQuery, AuditRecord, AuditStore, ChainHead};
use skills_store_traits::{Error, Result, TenantId, Violation};

use crate::SqliteStore;
use crate::error::Outcome;
use crate::rows::{Field, Kind, columns, decode, field, insert, renamed};

/// The record's columns, in [`AuditRecord`]'s field order.
const FIELDS: &[Field] = &[
    field("id", Kind::Text),
    field("timestamp", Kind::Int),
    field("user_id", Kind::Text),
    field("skill_id", Kind::Text),
    field("skill_path", Kind::Text),
    field("skill_trust_level", Kind::Text),
    field("skill_version", Kind::Text),
    field("task_id", Kind::Text),
    field("agent_id", Kind::Text),
    field("trigger_reason", Kind::Text),
    renamed(
        "data_classes_requested",
        "data_classes_requested_json",
        Kind::Json,
    ),
    renamed(
        "data_classes_granted",
        "data_classes_granted_json",
        Kind::Json,
    ),
    field("data_redacted", Kind::Bool),
    renamed("tokens_used", "tokens_used_json", Kind::Json),
    field("input_hash", Kind::Text),
    field("output_hash", Kind::Text),
    field("execution_time_ms", Kind::UInt),
    field("success", Kind::Bool),
    field("error", Kind::Text),
    renamed("sandbox_config", "sandbox_config_json", Kind::Json),
    renamed("security_flags", "security_flags_json", Kind::Json),
    field("previous_hash", Kind::Text),
    field("entry_hash", Kind::Text),
];

fn select() -> String {
    format!(
        "SELECT chain, sequence, recorded_at, {} FROM skill_audit_log",
        columns(FIELDS, None)
    )
}

fn entry(row: &Row<'_>) -> rusqlite::Result<AuditEntry> {
    let sequence: i64 = row.get(1)?;
    Ok(AuditEntry {
        chain: row.get(0)?,
        sequence: u64::try_from(sequence).unwrap_or(0),
        recorded_at: row.get(2)?,
        record: decode(row, 3, FIELDS)?,
    })
}

fn head(conn: &Connection, tenant: &str, chain: &str) -> Outcome<Option<ChainHead>> {
    Ok(conn
        .prepare_cached(
            "SELECT sequence, entry_hash, id FROM skill_audit_log \
             WHERE tenant_id = ?1 AND chain = ?2 ORDER BY sequence DESC LIMIT 1",
        )?
        .query_row(params![tenant, chain], |row| {
            let sequence: i64 = row.get(0)?;
            Ok(ChainHead {
                sequence: u64::try_from(sequence).unwrap_or(0),
                entry_hash: row.get(1)?,
                record_id: row.get(2)?,
            })
        })
        .optional()?)
}

/// Clamps a count or position to SQLite's integer range.
fn int(value: impl TryInto<i64>) -> i64 {
    value.try_into().unwrap_or(i64::MAX)
}

#[async_trait::async_trait]
impl AuditStore for SqliteStore {
    async fn append(
        &self,
        tenant: &TenantId,
        chain: &str,
        record: AuditRecord,
        expected_head: Option<&str>,
    ) -> Result<AuditEntry> {
        if chain.is_empty() {
            return Err(Error::invalid("chain", Violation::Empty));
        }
        record.validate()?;
        let (tenant, chain) = (tenant.to_string(), chain.to_owned());
        let expected = expected_head.map(str::to_owned);
        let clock = self.clock.clone();
        self.worker
            .write(move |conn| {
                let head = head(conn, &tenant, &chain)?;
                let found = head.as_ref().map(|h| h.entry_hash.as_str());
                if found != expected.as_deref() {
                    return Err(Error::Stale {
                        what: "audit chain head",
                        expected: expected.as_deref().unwrap_or("<empty chain>").to_owned(),
                        found: found.unwrap_or("<empty chain>").to_owned(),
                    }
                    .into());
                }
                let taken: Option<i64> = conn
                    .prepare_cached(
                        "SELECT 1 FROM skill_audit_log WHERE tenant_id = ?1 AND id = ?2",
                    )?
                    .query_row(params![tenant, record.id], |row| row.get(0))
                    .optional()?;
                if taken.is_some() {
                    return Err(Error::conflict("audit record id", record.id.clone()).into());
                }
                let sequence = head.map_or(1, |h| h.sequence.saturating_add(1));
                let recorded_at = clock.now();
                let extra: [(&str, &dyn ToSql); 4] = [
                    ("tenant_id", &tenant),
                    ("chain", &chain),
                    ("sequence", &int(sequence)),
                    ("recorded_at", &recorded_at),
                ];
                insert(conn, "skill_audit_log", &extra, FIELDS, &record)?;
                Ok(AuditEntry {
                    chain: chain.clone(),
                    sequence,
                    recorded_at,
                    record: record.clone(),
                })
            })
            .await
    }

    async fn head(&self, tenant: &TenantId, chain: &str) -> Result<Option<ChainHead>> {
        let (tenant, chain) = (tenant.to_string(), chain.to_owned());
        self.worker
            .read(move |conn| head(conn, &tenant, &chain))
            .await
    }

    async fn read_range(
        &self,
        tenant: &TenantId,
        chain: &str,
        from_sequence: u64,
        limit: usize,
    ) -> Result<Vec<AuditEntry>> {
        let (tenant, chain) = (tenant.to_string(), chain.to_owned());
        self.worker
            .read(move |conn| {
                let sql = format!(
                    "{} WHERE tenant_id = ?1 AND chain = ?2 AND sequence >= ?3 \
                     ORDER BY sequence LIMIT ?4",
                    select()
                );
                let mut statement = conn.prepare_cached(&sql)?;
                let rows = statement.query_map(
                    params![tenant, chain, int(from_sequence), int(limit)],
                    entry,
                )?;
                Ok(rows.collect::<rusqlite::Result<_>>()?)
            })
            .await
    }

    async fn get_entry(&self, tenant: &TenantId, record_id: &str) -> Result<Option<AuditEntry>> {
        let (tenant, id) = (tenant.to_string(), record_id.to_owned());
        self.worker
            .read(move |conn| {
                let sql = format!("{} WHERE tenant_id = ?1 AND id = ?2", select());
                Ok(conn
                    .prepare_cached(&sql)?
                    .query_row(params![tenant, id], entry)
                    .optional()?)
            })
            .await
    }

    async fn query(&self, tenant: &TenantId, query: &AuditQuery) -> Result<Vec<AuditEntry>> {
        let (tenant, query) = (tenant.to_string(), query.clone());
        self.worker
            .read(move |conn| {
                let mut conditions = vec!["tenant_id = ?1".to_owned()];
                let mut params = vec![Sql::Text(tenant.clone())];
                // `?` in a condition stands for its parameter.
                let mut condition = |sql: &str, value: Sql| {
                    params.push(value);
                    conditions.push(sql.replace('?', &format!("?{}", params.len())));
                };
                if let Some(chain) = &query.chain {
                    condition("chain = ?", Sql::Text(chain.clone()));
                }
                if let Some(user) = &query.user {
                    condition("user_id = ?", Sql::Text(user.to_string()));
                }
                if let Some(skill) = &query.skill_id {
                    condition("skill_id = ?", Sql::Text(skill.clone()));
                }
                if let Some(success) = query.success {
                    condition("success = ?", Sql::Integer(i64::from(success)));
                }
                if let Some(from) = query.from {
                    condition("timestamp >= ?", Sql::Integer(from));
                }
                if let Some(until) = query.until {
                    condition("timestamp < ?", Sql::Integer(until));
                }
                if let Some(after) = &query.after {
                    // Row-value comparison: (chain, sequence) order, as the cursor means.
                    params.push(Sql::Text(after.chain.clone()));
                    params.push(Sql::Integer(int(after.sequence)));
                    conditions.push(format!(
                        "(chain, sequence) > (?{}, ?{})",
                        params.len() - 1,
                        params.len()
                    ));
                }
                params.push(Sql::Integer(query.limit.map_or(-1, int)));
                let sql = format!(
                    "{} WHERE {} ORDER BY chain, sequence LIMIT ?{}",
                    select(),
                    conditions.join(" AND "),
                    params.len()
                );
                let mut statement = conn.prepare_cached(&sql)?;
                let rows = statement.query_map(params_from_iter(params), entry)?;
                Ok(rows.collect::<rusqlite::Result<_>>()?)
            })
            .await
    }

    async fn chains(&self, tenant: &TenantId) -> Result<Vec<String>> {
        let tenant = tenant.to_string();
        self.worker
            .read(move |conn| {
                let mut statement = conn.prepare_cached(
                    "SELECT DISTINCT chain FROM skill_audit_log WHERE tenant_id = ?1 \
                     ORDER BY chain",
                )?;
                let rows = statement.query_map(params![tenant], |row| row.get(0))?;
                Ok(rows.collect::<rusqlite::Result<_>>()?)
            })
            .await
    }
}
