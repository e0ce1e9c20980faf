//! [`PermissionStore`] on PostgreSQL: permission rules per tenant, with revisions. Writes
//! take the tenant's permissions lock, so a revision is counted once per write whatever
//! the number of processes, and a replacement is atomic.

use std::collections::BTreeMap;

use async_trait::async_trait;
use serde_json::Value;
use skills_store_traits::permissions::{
    PermissionRecord, PermissionStore, check_rule, check_rules,
};
use skills_store_traits::{Result, TenantId};
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
}
