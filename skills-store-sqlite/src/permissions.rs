//! [`PermissionStore`] on `permission_rules`: one row per (tenant, id), the rule as JSON
//! text. A put reads the previous row and writes the next revision in one write
//! transaction, so concurrent puts are never lost; a replacement is one transaction.

use rusqlite::{Connection, OptionalExtension, params};
use skills_store_traits::Error;
use skills_store_traits::approvals::{
    ApprovalRecord, ApprovalStatus, NewApproval, check_approval, check_decider,
};
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

    async fn request_approval(
        &self,
        tenant: &TenantId,
        approval: NewApproval,
    ) -> Result<ApprovalRecord> {
        check_approval(&approval)?;
        let (tenant, clock) = (tenant.clone(), self.clock.clone());
        self.worker
            .write(move |conn| {
                match get_approval(conn, &tenant, &approval.execution_id)? {
                    Some(existing) if existing.status == ApprovalStatus::Pending => {
                        return Ok(existing);
                    }
                    Some(existing) => {
                        return Err(Error::conflict("approval", existing.execution_id).into());
                    }
                    None => {}
                }
                let record = ApprovalRecord::requested(&tenant, approval.clone(), clock.now());
                write_approval(conn, &record)?;
                Ok(record)
            })
            .await
    }

    async fn decide_approval(
        &self,
        tenant: &TenantId,
        execution_id: &str,
        approved: bool,
        by: Option<&str>,
    ) -> Result<ApprovalRecord> {
        check_decider(by)?;
        let (tenant, execution_id, clock) =
            (tenant.clone(), execution_id.to_owned(), self.clock.clone());
        let by = by.map(str::to_owned);
        self.worker
            .write(move |conn| {
                let record = get_approval(conn, &tenant, &execution_id)?
                    .ok_or_else(|| Error::not_found("approval", execution_id.clone()))?;
                let decided = record.decide(approved, by.as_deref(), clock.now())?;
                write_approval(conn, &decided)?;
                Ok(decided)
            })
            .await
    }

    async fn get_approval(
        &self,
        tenant: &TenantId,
        execution_id: &str,
    ) -> Result<Option<ApprovalRecord>> {
        let (tenant, execution_id) = (tenant.clone(), execution_id.to_owned());
        self.worker
            .read(move |conn| get_approval(conn, &tenant, &execution_id))
            .await
    }

    async fn list_approvals(
        &self,
        tenant: &TenantId,
        status: Option<ApprovalStatus>,
    ) -> Result<Vec<ApprovalRecord>> {
        let tenant = tenant.clone();
        self.worker
            .read(move |conn| {
                let sql = format!(
                    "SELECT {APPROVAL_COLUMNS} FROM approvals WHERE tenant_id = ?1 \
                     AND (?2 IS NULL OR status = ?2) ORDER BY requested_at, execution_id"
                );
                let mut statement = conn.prepare_cached(&sql)?;
                let rows = statement.query_map(
                    params![tenant.as_str(), status.map(ApprovalStatus::as_str)],
                    |row| decode_approval(&tenant, row),
                )?;
                Ok(rows.collect::<rusqlite::Result<_>>()?)
            })
            .await
    }
}

const APPROVAL_COLUMNS: &str = "execution_id, skill_id, requested_by, reason, approver_roles, \
     rule, status, decided_by, requested_at, decided_at";

fn decode_approval(tenant: &TenantId, row: &rusqlite::Row<'_>) -> rusqlite::Result<ApprovalRecord> {
    let roles: String = row.get(4)?;
    let roles: Vec<String> = serde_json::from_str(&roles).map_err(|e| corrupt(4, e))?;
    let status: String = row.get(6)?;
    let status = ApprovalStatus::parse(&status).ok_or_else(|| corrupt(6, UnknownStatus))?;
    let new = NewApproval::new(
        row.get::<_, String>(0)?,
        row.get::<_, String>(1)?,
        row.get::<_, String>(2)?,
        row.get::<_, String>(3)?,
    )
    .approver_roles(roles);
    let new = match row.get::<_, Option<String>>(5)? {
        Some(rule) => new.rule(rule),
        None => new,
    };
    // `ApprovalRecord` is `#[non_exhaustive]`: built as requested, then given the row's values.
    let mut record = ApprovalRecord::requested(tenant, new, row.get(8)?);
    record.status = status;
    record.decided_by = row.get(7)?;
    record.decided_at = row.get(9)?;
    Ok(record)
}

/// A status this crate never writes.
#[derive(Debug)]
struct UnknownStatus;

impl std::fmt::Display for UnknownStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("unknown approval status")
    }
}

impl std::error::Error for UnknownStatus {}

fn get_approval(
    conn: &Connection,
    tenant: &TenantId,
    execution_id: &str,
) -> Outcome<Option<ApprovalRecord>> {
    let sql = format!(
        "SELECT {APPROVAL_COLUMNS} FROM approvals WHERE tenant_id = ?1 AND execution_id = ?2"
    );
    Ok(conn
        .prepare_cached(&sql)?
        .query_row(params![tenant.as_str(), execution_id], |row| {
            decode_approval(tenant, row)
        })
        .optional()?)
}

fn write_approval(conn: &Connection, record: &ApprovalRecord) -> Outcome<()> {
    let roles = serde_json::to_string(&record.approver_roles).unwrap_or_else(|_| "[]".into());
    conn.prepare_cached(
        "INSERT INTO approvals (tenant_id, execution_id, skill_id, requested_by, reason, \
         approver_roles, rule, status, decided_by, requested_at, decided_at) \
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11) \
         ON CONFLICT (tenant_id, execution_id) DO UPDATE SET status = excluded.status, \
         decided_by = excluded.decided_by, decided_at = excluded.decided_at",
    )?
    .execute(params![
        record.tenant.as_str(),
        record.execution_id,
        record.skill_id,
        record.requested_by,
        record.reason,
        roles,
        record.rule,
        record.status.as_str(),
        record.decided_by,
        record.requested_at,
        record.decided_at
    ])?;
    Ok(())
}
