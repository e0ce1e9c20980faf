//! [`PermissionStore`] on PostgreSQL: permission rules per tenant, with revisions. Writes
//! take the tenant's permissions lock, so a revision is counted once per write whatever
//! the number of processes, and a replacement is atomic.

use std::collections::BTreeMap;

use async_trait::async_trait;
use serde_json::Value;
use skills_store_traits::approvals::{
    ApprovalRecord, ApprovalStatus, NewApproval, check_approval, check_decider,
};
use skills_store_traits::permissions::{
    PermissionRecord, PermissionStore, check_rule, check_rules,
};
use skills_store_traits::{Error as StoreError, Result, TenantId};
use tokio_postgres::types::Json;

use crate::PostgresStore;
use crate::db::{Domain, Shared, Tx};
use crate::error::Outcome;

const GET: &str = "SELECT doc FROM permission_rules WHERE tenant_id = $1 AND id = $2";

async fn save(tx: &Tx, tenant: &str, record: &PermissionRecord) -> Outcome<()> {
    tx.execute(
        "INSERT INTO permission_rules (tenant_id, id, doc) VALUES ($1, $2, $3) \
         ON CONFLICT (tenant_id, id) DO UPDATE SET doc = EXCLUDED.doc",
        &[&tenant, &record.id, &Json(record)],
    )
    .await?;
    Ok(())
}

async fn put(s: Shared, tenant: TenantId, id: String, rule: Value) -> Outcome<PermissionRecord> {
    check_rule(&id, &rule)?;
    let t = tenant.as_str();
    let tx = s.begin_write(t, Domain::Permissions, "").await?;
    let now = s.clock.now();
    let previous: Option<PermissionRecord> = tx.doc_opt(GET, &[&t, &id]).await?;
    let record = PermissionRecord::written(&tenant, &id, rule, previous.as_ref(), now);
    save(&tx, t, &record).await?;
    tx.commit().await?;
    Ok(record)
}

async fn get(s: Shared, tenant: TenantId, id: String) -> Outcome<Option<PermissionRecord>> {
    let tx = s.begin(tenant.as_str()).await?;
    tx.doc_opt(GET, &[&tenant.as_str(), &id]).await
}

async fn list(s: Shared, tenant: TenantId) -> Outcome<Vec<PermissionRecord>> {
    let tx = s.begin(tenant.as_str()).await?;
    tx.docs(
        "SELECT doc FROM permission_rules WHERE tenant_id = $1 ORDER BY id",
        &[&tenant.as_str()],
    )
    .await
}

async fn delete(s: Shared, tenant: TenantId, id: String) -> Outcome<bool> {
    let t = tenant.as_str();
    let tx = s.begin_write(t, Domain::Permissions, "").await?;
    let deleted = tx
        .execute(
            "DELETE FROM permission_rules WHERE tenant_id = $1 AND id = $2",
            &[&t, &id],
        )
        .await?;
    tx.commit().await?;
    Ok(deleted > 0)
}

async fn replace(
    s: Shared,
    tenant: TenantId,
    rules: Vec<(String, Value)>,
) -> Outcome<Vec<PermissionRecord>> {
    check_rules(&rules)?;
    let t = tenant.as_str();
    let tx = s.begin_write(t, Domain::Permissions, "").await?;
    let now = s.clock.now();
    let old: BTreeMap<String, PermissionRecord> = tx
        .docs::<PermissionRecord>(
            "SELECT doc FROM permission_rules WHERE tenant_id = $1",
            &[&t],
        )
        .await?
        .into_iter()
        .map(|record| (record.id.clone(), record))
        .collect();
    tx.execute("DELETE FROM permission_rules WHERE tenant_id = $1", &[&t])
        .await?;
    let mut new = BTreeMap::new();
    for (id, rule) in rules {
        let record = PermissionRecord::written(&tenant, &id, rule, old.get(&id), now);
        new.insert(id, record);
    }
    for record in new.values() {
        save(&tx, t, record).await?;
    }
    tx.commit().await?;
    Ok(new.into_values().collect())
}

const GET_APPROVAL: &str =
    "SELECT doc FROM approvals WHERE tenant_id = $1 AND execution_id = $2 FOR UPDATE";

async fn save_approval(tx: &Tx, tenant: &str, record: &ApprovalRecord) -> Outcome<()> {
    tx.execute(
        "INSERT INTO approvals (tenant_id, execution_id, status, requested_at, doc) \
         VALUES ($1, $2, $3, $4, $5) ON CONFLICT (tenant_id, execution_id) \
         DO UPDATE SET status = EXCLUDED.status, doc = EXCLUDED.doc",
        &[
            &tenant,
            &record.execution_id,
            &record.status.as_str(),
            &record.requested_at,
            &Json(record),
        ],
    )
    .await?;
    Ok(())
}

async fn request_approval(
    s: Shared,
    tenant: TenantId,
    approval: NewApproval,
) -> Outcome<ApprovalRecord> {
    check_approval(&approval)?;
    let t = tenant.as_str();
    // One asker at a time per tenant: the first creates, the others find it.
    let tx = s.begin_write(t, Domain::Permissions, "approvals").await?;
    let existing: Option<ApprovalRecord> = tx
        .doc_opt(GET_APPROVAL, &[&t, &approval.execution_id])
        .await?;
    let record = match existing {
        Some(existing) if existing.status == ApprovalStatus::Pending => existing,
        Some(existing) => {
            return Err(StoreError::conflict("approval", existing.execution_id).into());
        }
        None => {
            let record = ApprovalRecord::requested(&tenant, approval, s.clock.now());
            save_approval(&tx, t, &record).await?;
            record
        }
    };
    tx.commit().await?;
    Ok(record)
}

async fn decide_approval(
    s: Shared,
    tenant: TenantId,
    execution_id: String,
    approved: bool,
    by: Option<String>,
) -> Outcome<ApprovalRecord> {
    check_decider(by.as_deref())?;
    let t = tenant.as_str();
    let tx = s.begin(t).await?;
    // The row lock makes racing deciders take turns; the second finds it decided.
    let record: ApprovalRecord = tx
        .doc_opt(GET_APPROVAL, &[&t, &execution_id])
        .await?
        .ok_or_else(|| StoreError::not_found("approval", execution_id.clone()))?;
    let decided = record.decide(approved, by.as_deref(), s.clock.now())?;
    save_approval(&tx, t, &decided).await?;
    tx.commit().await?;
    Ok(decided)
}

async fn get_approval(
    s: Shared,
    tenant: TenantId,
    execution_id: String,
) -> Outcome<Option<ApprovalRecord>> {
    let tx = s.begin(tenant.as_str()).await?;
    tx.doc_opt(
        "SELECT doc FROM approvals WHERE tenant_id = $1 AND execution_id = $2",
        &[&tenant.as_str(), &execution_id],
    )
    .await
}

async fn list_approvals(
    s: Shared,
    tenant: TenantId,
    status: Option<ApprovalStatus>,
) -> Outcome<Vec<ApprovalRecord>> {
    let tx = s.begin(tenant.as_str()).await?;
    tx.docs(
        "SELECT doc FROM approvals WHERE tenant_id = $1 \
         AND ($2::TEXT IS NULL OR status = $2) ORDER BY requested_at, execution_id",
        &[&tenant.as_str(), &status.map(ApprovalStatus::as_str)],
    )
    .await
}

#[async_trait]
impl PermissionStore for PostgresStore {
    async fn put_rule(&self, tenant: &TenantId, id: &str, rule: Value) -> Result<PermissionRecord> {
        self.call(
            "put_rule",
            put(self.shared(), tenant.clone(), id.to_owned(), rule),
        )
        .await
    }

    async fn get_rule(&self, tenant: &TenantId, id: &str) -> Result<Option<PermissionRecord>> {
        self.call(
            "get_rule",
            get(self.shared(), tenant.clone(), id.to_owned()),
        )
        .await
    }

    async fn list_rules(&self, tenant: &TenantId) -> Result<Vec<PermissionRecord>> {
        self.call("list_rules", list(self.shared(), tenant.clone()))
            .await
    }

    async fn delete_rule(&self, tenant: &TenantId, id: &str) -> Result<bool> {
        self.call(
            "delete_rule",
            delete(self.shared(), tenant.clone(), id.to_owned()),
        )
        .await
    }

    async fn replace_rules(
        &self,
        tenant: &TenantId,
        rules: Vec<(String, Value)>,
    ) -> Result<Vec<PermissionRecord>> {
        self.call(
            "replace_rules",
            replace(self.shared(), tenant.clone(), rules),
        )
        .await
    }

    async fn request_approval(
        &self,
        tenant: &TenantId,
        approval: NewApproval,
    ) -> Result<ApprovalRecord> {
        self.call(
            "request_approval",
            request_approval(self.shared(), tenant.clone(), approval),
        )
        .await
    }

    async fn decide_approval(
        &self,
        tenant: &TenantId,
        execution_id: &str,
        approved: bool,
        by: Option<&str>,
    ) -> Result<ApprovalRecord> {
        self.call(
            "decide_approval",
            decide_approval(
                self.shared(),
                tenant.clone(),
                execution_id.to_owned(),
                approved,
                by.map(str::to_owned),
            ),
        )
        .await
    }

    async fn get_approval(
        &self,
        tenant: &TenantId,
        execution_id: &str,
    ) -> Result<Option<ApprovalRecord>> {
        self.call(
            "get_approval",
            get_approval(self.shared(), tenant.clone(), execution_id.to_owned()),
        )
        .await
    }

    async fn list_approvals(
        &self,
        tenant: &TenantId,
        status: Option<ApprovalStatus>,
    ) -> Result<Vec<ApprovalRecord>> {
        self.call(
            "list_approvals",
            list_approvals(self.shared(), tenant.clone(), status),
        )
        .await
    }
}
