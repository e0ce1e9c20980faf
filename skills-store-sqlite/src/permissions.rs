//! [`PermissionStore`] on `permission_rules`: one row per (tenant, id), the rule as JSON
//! text. A put reads the previous row and writes the next revision in one write
//! transaction, so concurrent puts are never lost; a replacement is one transaction.

use rusqlite::{Connection, OptionalExtension, params};
use skills_store_traits::permissions::{
    PermissionRecord, PermissionStore, check_rule, check_rules,
};
use skills_store_traits::{Result, TenantId, Timestamp};

use crate::SqliteStore;
use crate::error::{Outcome, corrupt};

const COLUMNS: &str = "id, rule, revision, created_at, updated_at";

fn decode(tenant: &TenantId, row: &rusqlite::Row<'_>) -> rusqlite::Result<PermissionRecord> {
    let id: String = row.get(0)?;
    let text: String = row.get(1)?;
    let rule = serde_json::from_str(&text).map_err(|e| corrupt(1, e))?;
    let revision: i64 = row.get(2)?;
    let created_at: Timestamp = row.get(3)?;
    // `PermissionRecord` is `#[non_exhaustive]`: built as new, then given the row's values.
    let mut record = PermissionRecord::written(tenant, &id, rule, None, created_at);
    record.revision = u64::try_from(revision).map_err(|e| corrupt(2, e))?;
    record.updated_at = row.get(4)?;
    Ok(record)
}

fn get(conn: &Connection, tenant: &TenantId, id: &str) -> Outcome<Option<PermissionRecord>> {
    let sql = format!("SELECT {COLUMNS} FROM permission_rules WHERE tenant_id = ?1 AND id = ?2");
    Ok(conn
        .prepare_cached(&sql)?
        .query_row(params![tenant.as_str(), id], |row| decode(tenant, row))
        .optional()?)
}

fn list(conn: &Connection, tenant: &TenantId) -> Outcome<Vec<PermissionRecord>> {
    let sql = format!("SELECT {COLUMNS} FROM permission_rules WHERE tenant_id = ?1 ORDER BY id");
    let mut statement = conn.prepare_cached(&sql)?;
    let rows = statement.query_map(params![tenant.as_str()], |row| decode(tenant, row))?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

fn write(conn: &Connection, record: &PermissionRecord) -> Outcome<()> {
    let revision = i64::try_from(record.revision).unwrap_or(i64::MAX);
    conn.prepare_cached(
        "INSERT INTO permission_rules (tenant_id, id, rule, revision, created_at, updated_at) \
         VALUES (?1, ?2, ?3, ?4, ?5, ?6) \
         ON CONFLICT (tenant_id, id) DO UPDATE SET rule = excluded.rule, \
         revision = excluded.revision, updated_at = excluded.updated_at",
    )?
    .execute(params![
        record.tenant.as_str(),
        record.id,
        record.rule.to_string(),
        revision,
        record.created_at,
        record.updated_at
    ])?;
    Ok(())
}

#[async_trait::async_trait]
impl PermissionStore for SqliteStore {
    async fn put_rule(
        &self,
        tenant: &TenantId,
        id: &str,
        rule: serde_json::Value,
    ) -> Result<PermissionRecord> {
        check_rule(id, &rule)?;
        let (tenant, id, clock) = (tenant.clone(), id.to_owned(), self.clock.clone());
        self.worker
            .write(move |conn| {
                let previous = get(conn, &tenant, &id)?;
                let record = PermissionRecord::written(
                    &tenant,
                    &id,
                    rule.clone(),
                    previous.as_ref(),
                    clock.now(),
                );
                write(conn, &record)?;
                Ok(record)
            })
            .await
    }

    async fn get_rule(&self, tenant: &TenantId, id: &str) -> Result<Option<PermissionRecord>> {
        let (tenant, id) = (tenant.clone(), id.to_owned());
        self.worker.read(move |conn| get(conn, &tenant, &id)).await
    }

    async fn list_rules(&self, tenant: &TenantId) -> Result<Vec<PermissionRecord>> {
        let tenant = tenant.clone();
        self.worker.read(move |conn| list(conn, &tenant)).await
    }

    async fn delete_rule(&self, tenant: &TenantId, id: &str) -> Result<bool> {
        let (tenant, id) = (tenant.clone(), id.to_owned());
        self.worker
            .write(move |conn| {
                let deleted = conn
                    .prepare_cached(
                        "DELETE FROM permission_rules WHERE tenant_id = ?1 AND id = ?2",
                    )?
                    .execute(params![tenant.as_str(), id])?;
                Ok(deleted > 0)
            })
            .await
    }

    async fn replace_rules(
        &self,
        tenant: &TenantId,
        rules: Vec<(String, serde_json::Value)>,
    ) -> Result<Vec<PermissionRecord>> {
        check_rules(&rules)?;
        let (tenant, clock) = (tenant.clone(), self.clock.clone());
        self.worker
            .write(move |conn| {
                let now = clock.now();
                let old = list(conn, &tenant)?;
                conn.prepare_cached("DELETE FROM permission_rules WHERE tenant_id = ?1")?
                    .execute(params![tenant.as_str()])?;
                for (id, rule) in &rules {
                    let previous = old.iter().find(|r| &r.id == id);
                    let record =
                        PermissionRecord::written(&tenant, id, rule.clone(), previous, now);
                    write(conn, &record)?;
                }
                list(conn, &tenant)
            })
            .await
    }
}
