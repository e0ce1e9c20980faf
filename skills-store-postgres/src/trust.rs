//! [`TrustStore`] on PostgreSQL: trust history per (tenant, user, skill). Writes take the
//! user's trust lock, so concurrent changes from several processes are applied one after
//! the other and none is lost.

use async_trait::async_trait;
use skills_store_traits::trust::{TrustChange, TrustRecord, TrustStore};
use skills_store_traits::{Error, Result, UserScope, Violation};
use tokio_postgres::types::Json;

use crate::PostgresStore;
use crate::db::{Domain, Shared, Tx};
use crate::error::Outcome;

const GET: &str =
    "SELECT doc FROM skill_trust_history WHERE tenant_id = $1 AND user_id = $2 AND skill_id = $3";

fn check_skill_id(skill_id: &str) -> Result<()> {
    if skill_id.is_empty() {
        return Err(Error::invalid("skill_id", Violation::Empty));
    }
    Ok(())
}

async fn save(tx: &Tx, scope: &UserScope, record: &TrustRecord) -> Outcome<()> {
    tx.execute(
        "INSERT INTO skill_trust_history (tenant_id, user_id, skill_id, doc) \
         VALUES ($1, $2, $3, $4) ON CONFLICT (tenant_id, user_id, skill_id) \
         DO UPDATE SET doc = EXCLUDED.doc",
        &[
            &scope.tenant.as_str(),
            &scope.user.as_str(),
            &record.skill_id,
            &Json(record),
        ],
    )
    .await?;
    Ok(())
}

async fn create(s: Shared, scope: UserScope, skill_id: String) -> Outcome<TrustRecord> {
    check_skill_id(&skill_id)?;
    let (t, u) = (scope.tenant.as_str(), scope.user.as_str());
    let tx = s.begin_write(t, Domain::Trust, u).await?;
    if tx.query_opt(GET, &[&t, &u, &skill_id]).await?.is_some() {
        return Err(Error::conflict("trust record", skill_id).into());
    }
    let record = TrustRecord::new(&scope, skill_id, s.clock.now());
    save(&tx, &scope, &record).await?;
    tx.commit().await?;
    Ok(record)
}

async fn apply_all(
    s: Shared,
    scope: UserScope,
    skill_id: String,
    changes: Vec<TrustChange>,
) -> Outcome<TrustRecord> {
    check_skill_id(&skill_id)?;
    let (t, u) = (scope.tenant.as_str(), scope.user.as_str());
    let tx = s.begin_write(t, Domain::Trust, u).await?;
    let now = s.clock.now();
    let mut record = match tx.doc_opt(GET, &[&t, &u, &skill_id]).await? {
        Some(record) => record,
        None => TrustRecord::new(&scope, skill_id, now),
    };
    for change in &changes {
        record.apply(change, now);
    }
    save(&tx, &scope, &record).await?;
    tx.commit().await?;
    Ok(record)
}

async fn get(s: Shared, scope: UserScope, skill_id: String) -> Outcome<Option<TrustRecord>> {
    let tx = s.begin(scope.tenant.as_str()).await?;
    tx.doc_opt(
        GET,
        &[&scope.tenant.as_str(), &scope.user.as_str(), &skill_id],
    )
    .await
}

async fn list(s: Shared, scope: UserScope) -> Outcome<Vec<TrustRecord>> {
    let tx = s.begin(scope.tenant.as_str()).await?;
    tx.docs(
        "SELECT doc FROM skill_trust_history WHERE tenant_id = $1 AND user_id = $2 \
         ORDER BY skill_id",
        &[&scope.tenant.as_str(), &scope.user.as_str()],
    )
    .await
}

async fn delete(s: Shared, scope: UserScope, skill_id: String) -> Outcome<()> {
    let (t, u) = (scope.tenant.as_str(), scope.user.as_str());
    let tx = s.begin_write(t, Domain::Trust, u).await?;
    let deleted = tx
        .execute(
            "DELETE FROM skill_trust_history WHERE tenant_id = $1 AND user_id = $2 \
             AND skill_id = $3",
            &[&t, &u, &skill_id],
        )
        .await?;
    if deleted == 0 {
        return Err(Error::not_found("trust record", skill_id).into());
    }
    tx.commit().await?;
    Ok(())
}

#[async_trait]
impl TrustStore for PostgresStore {
    async fn create(&self, scope: &UserScope, skill_id: &str) -> Result<TrustRecord> {
        self.call(
            "create",
            create(self.shared(), scope.clone(), skill_id.to_owned()),
        )
        .await
    }

    async fn apply_all(
        &self,
        scope: &UserScope,
        skill_id: &str,
        changes: &[TrustChange],
    ) -> Result<TrustRecord> {
        let task = apply_all(
            self.shared(),
            scope.clone(),
            skill_id.to_owned(),
            changes.to_vec(),
        );
        self.call("apply_all", task).await
    }

    async fn apply(
        &self,
        scope: &UserScope,
        skill_id: &str,
        change: TrustChange,
    ) -> Result<TrustRecord> {
        let task = apply_all(
            self.shared(),
            scope.clone(),
            skill_id.to_owned(),
            vec![change],
        );
        self.call("apply", task).await
    }

    async fn get(&self, scope: &UserScope, skill_id: &str) -> Result<Option<TrustRecord>> {
        self.call(
            "get",
            get(self.shared(), scope.clone(), skill_id.to_owned()),
        )
        .await
    }

    async fn list(&self, scope: &UserScope) -> Result<Vec<TrustRecord>> {
        self.call("list", list(self.shared(), scope.clone())).await
    }

    async fn delete(&self, scope: &UserScope, skill_id: &str) -> Result<()> {
        self.call(
            "delete",
            delete(self.shared(), scope.clone(), skill_id.to_owned()),
        )
        .await
    }
}
