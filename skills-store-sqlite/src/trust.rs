//! [`TrustStore`] on `skill_trust_history`.
//!
//! Changes are applied with [`TrustRecord::apply`] (the meaning every backend shares) to the
//! row read inside the same write transaction, so concurrent outcomes, from this process or
//! another, are never lost to a read-modify-write race.

use rusqlite::{Connection, OptionalExtension, ToSql, params};
use skills_store_traits::trust::{TrustChange, TrustRecord, TrustStore};
use skills_store_traits::{Error, Result, UserScope, Violation};

use crate::SqliteStore;
use crate::error::Outcome;
use crate::rows::{Field, Kind, columns, decode, field, insert, renamed, update};

/// The `skill_trust_history` columns, in [`TrustRecord`]'s field order.
const FIELDS: &[Field] = &[
    field("id", Kind::Text),
    renamed("tenant", "tenant_id", Kind::Text),
    renamed("user", "user_id", Kind::Text),
    field("skill_id", Kind::Text),
    field("successful_executions", Kind::UInt),
    field("failed_executions", Kind::UInt),
    field("last_success", Kind::Int),
    field("last_failure", Kind::Int),
    field("session_trust_granted", Kind::Bool),
    field("session_trust_expires", Kind::Int),
    field("globally_approved", Kind::Bool),
    field("globally_approved_at", Kind::Int),
    field("trust_reset_count", Kind::UInt),
    field("created_at", Kind::Int),
    field("updated_at", Kind::Int),
];

/// The same refusal as the in-memory store's.
fn check_skill_id(skill_id: &str) -> Result<()> {
    if skill_id.is_empty() {
        return Err(Error::invalid("skill_id", Violation::Empty));
    }
    Ok(())
}

/// The owner of a scope, as its two column values.
fn owner(scope: &UserScope) -> (String, String) {
    (scope.tenant.to_string(), scope.user.to_string())
}

fn get(
    conn: &Connection,
    (tenant, user): &(String, String),
    skill_id: &str,
) -> Outcome<Option<TrustRecord>> {
    let sql = format!(
        "SELECT {} FROM skill_trust_history \
         WHERE tenant_id = ?1 AND user_id = ?2 AND skill_id = ?3",
        columns(FIELDS, None)
    );
    Ok(conn
        .prepare_cached(&sql)?
        .query_row(params![tenant, user, skill_id], |row| {
            decode(row, 0, FIELDS)
        })
        .optional()?)
}

#[async_trait::async_trait]
impl TrustStore for SqliteStore {
    async fn create(&self, scope: &UserScope, skill_id: &str) -> Result<TrustRecord> {
        check_skill_id(skill_id)?;
        let (scope, skill_id, clock) = (scope.clone(), skill_id.to_owned(), self.clock.clone());
        self.worker
            .write(move |conn| {
                if get(conn, &owner(&scope), &skill_id)?.is_some() {
                    return Err(Error::conflict("trust record", skill_id.clone()).into());
                }
                let record = TrustRecord::new(&scope, skill_id.clone(), clock.now());
                insert(conn, "skill_trust_history", &[], FIELDS, &record)?;
                Ok(record)
            })
            .await
    }

    async fn apply_all(
        &self,
        scope: &UserScope,
        skill_id: &str,
        changes: &[TrustChange],
    ) -> Result<TrustRecord> {
        check_skill_id(skill_id)?;
        let (scope, skill_id, clock) = (scope.clone(), skill_id.to_owned(), self.clock.clone());
        let changes = changes.to_vec();
        self.worker
            .write(move |conn| {
                let now = clock.now();
                let (tenant, user) = owner(&scope);
                let existing = get(conn, &(tenant.clone(), user.clone()), &skill_id)?;
                let found = existing.is_some();
                let mut record =
                    existing.unwrap_or_else(|| TrustRecord::new(&scope, skill_id.clone(), now));
                for change in &changes {
                    record.apply(change, now);
                }
                if found {
                    let keys: [(&str, &dyn ToSql); 3] = [
                        ("tenant_id", &tenant),
                        ("user_id", &user),
                        ("id", &record.id),
                    ];
                    update(conn, "skill_trust_history", FIELDS, &record, &keys)?;
                } else {
                    insert(conn, "skill_trust_history", &[], FIELDS, &record)?;
                }
                Ok(record)
            })
            .await
    }

    async fn get(&self, scope: &UserScope, skill_id: &str) -> Result<Option<TrustRecord>> {
        let (owner, skill_id) = (owner(scope), skill_id.to_owned());
        self.worker
            .read(move |conn| get(conn, &owner, &skill_id))
            .await
    }

    async fn list(&self, scope: &UserScope) -> Result<Vec<TrustRecord>> {
        let (tenant, user) = owner(scope);
        self.worker
            .read(move |conn| {
                let sql = format!(
                    "SELECT {} FROM skill_trust_history WHERE tenant_id = ?1 AND user_id = ?2 \
                     ORDER BY skill_id",
                    columns(FIELDS, None)
                );
                let mut statement = conn.prepare_cached(&sql)?;
                let rows =
                    statement.query_map(params![tenant, user], |row| decode(row, 0, FIELDS))?;
                Ok(rows.collect::<rusqlite::Result<_>>()?)
            })
            .await
    }

    async fn delete(&self, scope: &UserScope, skill_id: &str) -> Result<()> {
        let ((tenant, user), skill_id) = (owner(scope), skill_id.to_owned());
        self.worker
            .write(move |conn| {
                let deleted = conn
                    .prepare_cached(
                        "DELETE FROM skill_trust_history \
                         WHERE tenant_id = ?1 AND user_id = ?2 AND skill_id = ?3",
                    )?
                    .execute(params![tenant, user, skill_id])?;
                if deleted == 0 {
                    return Err(Error::not_found("trust record", skill_id.clone()).into());
                }
                Ok(())
            })
            .await
    }
}
