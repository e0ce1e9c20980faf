//! [`LearningStore`] on PostgreSQL: executed skill sequences and the patterns found in
//! them. Writes take the tenant's learning lock: the clock is read under it, so recording
//! order (`seq`) and time order agree, and a pattern's status changes are compare-and-set.

use async_trait::async_trait;
use skills_store_traits::learning::{
    ExecutedSequence, LearningPattern, LearningStore, NewExecutedSequence, NewPattern, PatternKind,
    PatternStatus, apply_status_change, check_status_change, pattern_order,
};
use skills_store_traits::{Error, Result, TenantId, Timestamp, new_id};
use tokio_postgres::types::Json;

use crate::PostgresStore;
use crate::db::{Domain, Shared, Tx};
use crate::error::Outcome;

const PATTERN: &str = "SELECT doc FROM learning_patterns WHERE tenant_id = $1 AND id = $2";

async fn save_pattern(tx: &Tx, tenant: &str, record: &LearningPattern) -> Outcome<()> {
    tx.execute(
        "INSERT INTO learning_patterns (tenant_id, id, pattern_hash, doc) \
         VALUES ($1, $2, $3, $4) ON CONFLICT (tenant_id, id) DO UPDATE SET doc = EXCLUDED.doc",
        &[&tenant, &record.id, &record.pattern_hash, &Json(record)],
    )
    .await?;
    Ok(())
}

async fn record_sequence(
    s: Shared,
    tenant: TenantId,
    sequence: NewExecutedSequence,
) -> Outcome<ExecutedSequence> {
    sequence.validate()?;
    let t = tenant.as_str();
    let tx = s.begin_write(t, Domain::Learning, "").await?;
    let record = sequence.into_record(new_id(), &tenant, s.clock.now());
    tx.execute(
        "INSERT INTO learning_sequences (tenant_id, id, recorded_at, doc) \
         VALUES ($1, $2, $3, $4)",
        &[&t, &record.id, &record.recorded_at, &Json(&record)],
    )
    .await?;
    tx.commit().await?;
    Ok(record)
}

async fn list_sequences(
    s: Shared,
    tenant: TenantId,
    since: Option<Timestamp>,
    limit: Option<usize>,
) -> Outcome<Vec<ExecutedSequence>> {
    let tx = s.begin(tenant.as_str()).await?;
    let limit = i64::try_from(limit.unwrap_or(usize::MAX)).unwrap_or(i64::MAX);
    tx.docs(
        "SELECT doc FROM learning_sequences WHERE tenant_id = $1 \
         AND ($2::BIGINT IS NULL OR recorded_at >= $2) ORDER BY recorded_at, seq LIMIT $3",
        &[&tenant.as_str(), &since, &limit],
    )
    .await
}

async fn prune(s: Shared, tenant: TenantId, before: Timestamp) -> Outcome<u64> {
    let t = tenant.as_str();
    let tx = s.begin_write(t, Domain::Learning, "").await?;
    let pruned = tx
        .execute(
            "DELETE FROM learning_sequences WHERE tenant_id = $1 AND recorded_at < $2",
            &[&t, &before],
        )
        .await?;
    tx.commit().await?;
    Ok(pruned)
}

async fn upsert(s: Shared, tenant: TenantId, pattern: NewPattern) -> Outcome<LearningPattern> {
    pattern.validate()?;
    let t = tenant.as_str();
    let tx = s.begin_write(t, Domain::Learning, "").await?;
    let now = s.clock.now();
    let existing: Option<LearningPattern> = tx
        .doc_opt(
            "SELECT doc FROM learning_patterns WHERE tenant_id = $1 AND pattern_hash = $2",
            &[&t, &pattern.pattern_hash],
        )
        .await?;
    let record = match existing {
        Some(mut existing) => {
            pattern.refresh(&mut existing, now)?;
            existing
        }
        None => pattern.into_record(new_id(), &tenant, now),
    };
    save_pattern(&tx, t, &record).await?;
    tx.commit().await?;
    Ok(record)
}

async fn get(s: Shared, tenant: TenantId, id: String) -> Outcome<Option<LearningPattern>> {
    let tx = s.begin(tenant.as_str()).await?;
    tx.doc_opt(PATTERN, &[&tenant.as_str(), &id]).await
}

async fn by_hash(s: Shared, tenant: TenantId, hash: String) -> Outcome<Option<LearningPattern>> {
    let tx = s.begin(tenant.as_str()).await?;
    tx.doc_opt(
        "SELECT doc FROM learning_patterns WHERE tenant_id = $1 AND pattern_hash = $2",
        &[&tenant.as_str(), &hash],
    )
    .await
}

async fn list(
    s: Shared,
    tenant: TenantId,
    status: Option<PatternStatus>,
    kind: Option<PatternKind>,
) -> Outcome<Vec<LearningPattern>> {
    let tx = s.begin(tenant.as_str()).await?;
    let all: Vec<LearningPattern> = tx
        .docs(
            "SELECT doc FROM learning_patterns WHERE tenant_id = $1",
            &[&tenant.as_str()],
        )
        .await?;
    let mut patterns: Vec<LearningPattern> = all
        .into_iter()
        .filter(|p| status.is_none_or(|s| p.status == s) && kind.is_none_or(|k| p.kind == k))
        .collect();
    patterns.sort_by(pattern_order);
    Ok(patterns)
}

async fn set_status(
    s: Shared,
    tenant: TenantId,
    id: String,
    expected: PatternStatus,
    to: PatternStatus,
    draft: Option<String>,
) -> Outcome<LearningPattern> {
    check_status_change(expected, to, draft.as_deref())?;
    let t = tenant.as_str();
    let tx = s.begin_write(t, Domain::Learning, "").await?;
    let now = s.clock.now();
    let Some(mut pattern) = tx.doc_opt::<LearningPattern>(PATTERN, &[&t, &id]).await? else {
        return Err(Error::not_found("learning pattern", id).into());
    };
    apply_status_change(&mut pattern, expected, to, draft, now)?;
    save_pattern(&tx, t, &pattern).await?;
    tx.commit().await?;
    Ok(pattern)
}

#[async_trait]
impl LearningStore for PostgresStore {
    async fn record_sequence(
        &self,
        tenant: &TenantId,
        sequence: NewExecutedSequence,
    ) -> Result<ExecutedSequence> {
        let task = record_sequence(self.shared(), tenant.clone(), sequence);
        self.call("record_sequence", task).await
    }

    async fn list_sequences(
        &self,
        tenant: &TenantId,
        since: Option<Timestamp>,
        limit: Option<usize>,
    ) -> Result<Vec<ExecutedSequence>> {
        let task = list_sequences(self.shared(), tenant.clone(), since, limit);
        self.call("list_sequences", task).await
    }

    async fn prune_sequences(&self, tenant: &TenantId, before: Timestamp) -> Result<u64> {
        self.call(
            "prune_sequences",
            prune(self.shared(), tenant.clone(), before),
        )
        .await
    }

    async fn upsert_pattern(
        &self,
        tenant: &TenantId,
        pattern: NewPattern,
    ) -> Result<LearningPattern> {
        self.call(
            "upsert_pattern",
            upsert(self.shared(), tenant.clone(), pattern),
        )
        .await
    }

    async fn get_pattern(&self, tenant: &TenantId, id: &str) -> Result<Option<LearningPattern>> {
        self.call(
            "get_pattern",
            get(self.shared(), tenant.clone(), id.to_owned()),
        )
        .await
    }

    async fn find_pattern_by_hash(
        &self,
        tenant: &TenantId,
        pattern_hash: &str,
    ) -> Result<Option<LearningPattern>> {
        let task = by_hash(self.shared(), tenant.clone(), pattern_hash.to_owned());
        self.call("find_pattern_by_hash", task).await
    }

    async fn list_patterns(
        &self,
        tenant: &TenantId,
        status: Option<PatternStatus>,
        kind: Option<PatternKind>,
    ) -> Result<Vec<LearningPattern>> {
        self.call(
            "list_patterns",
            list(self.shared(), tenant.clone(), status, kind),
        )
        .await
    }

    async fn set_pattern_status(
        &self,
        tenant: &TenantId,
        id: &str,
        expected: PatternStatus,
        to: PatternStatus,
        draft_skill_id: Option<String>,
    ) -> Result<LearningPattern> {
        let task = set_status(
            self.shared(),
            tenant.clone(),
            id.to_owned(),
            expected,
            to,
            draft_skill_id,
        );
        self.call("set_pattern_status", task).await
    }
}
