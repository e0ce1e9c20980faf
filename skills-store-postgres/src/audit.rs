//! [`AuditStore`] on PostgreSQL: append-only hash chains, one per (tenant, chain).
//!
//! **Threat:** several processes append to one chain at once; a lost race must not fork the
//! chain (two entries after one head) or leave a gap. **Guarantee:** an append is a
//! compare-and-append in one transaction that first takes the chain's advisory lock, so
//! appenders of one chain run one at a time across every process: the head read is the
//! head committed, the caller's `expected_head` is compared with it, and the entry gets the
//! next sequence. `(tenant_id, chain, sequence)` is the primary key besides, so even a
//! writer that skipped the lock could not fork the chain. Rows cannot be updated or
//! deleted (a trigger refuses it).

use async_trait::async_trait;
use skills_store_traits::audit::{AuditEntry, AuditQuery, AuditRecord, AuditStore, ChainHead};
use skills_store_traits::{Error, Result, TenantId, Violation};
use tokio_postgres::types::Json;

use crate::PostgresStore;
use crate::db::{Domain, Shared};
use crate::error::Outcome;

fn count(n: usize) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

fn seq(n: u64) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

async fn append(
    s: Shared,
    tenant: TenantId,
    chain: String,
    record: AuditRecord,
    expected: Option<String>,
) -> Outcome<AuditEntry> {
    if chain.is_empty() {
        return Err(Error::invalid("chain", Violation::Empty).into());
    }
    record.validate()?;
    let t = tenant.as_str();
    let tx = s.begin_write(t, Domain::Audit, &chain).await?;
    let head = tx
        .query_opt(
            "SELECT sequence, entry_hash FROM skill_audit_log \
             WHERE tenant_id = $1 AND chain = $2 ORDER BY sequence DESC LIMIT 1",
            &[&t, &chain],
        )
        .await?;
    let (last, found) = match &head {
        Some(row) => (
            row.try_get::<_, i64>(0)?,
            Some(row.try_get::<_, String>(1)?),
        ),
        None => (0, None),
    };
    if found.as_deref() != expected.as_deref() {
        return Err(Error::Stale {
            what: "audit chain head",
            expected: expected.unwrap_or_else(|| "<empty chain>".to_owned()),
            found: found.unwrap_or_else(|| "<empty chain>".to_owned()),
        }
        .into());
    }
    let taken = tx
        .query_opt(
            "SELECT 1 FROM skill_audit_log WHERE tenant_id = $1 AND id = $2",
            &[&t, &record.id],
        )
        .await?;
    if taken.is_some() {
        return Err(Error::conflict("audit record id", record.id).into());
    }
    let entry = AuditEntry {
        chain,
        sequence: u64::try_from(last).unwrap_or(0) + 1,
        recorded_at: s.clock.now(),
        record,
    };
    tx.execute(
        "INSERT INTO skill_audit_log (tenant_id, chain, sequence, id, entry_hash, doc) \
         VALUES ($1, $2, $3, $4, $5, $6)",
        &[
            &t,
            &entry.chain,
            &seq(entry.sequence),
            &entry.record.id,
            &entry.record.entry_hash,
            &Json(&entry),
        ],
    )
    .await?;
    tx.commit().await?;
    Ok(entry)
}

async fn head(s: Shared, tenant: TenantId, chain: String) -> Outcome<Option<ChainHead>> {
    let tx = s.begin(tenant.as_str()).await?;
    let row = tx
        .query_opt(
            "SELECT sequence, entry_hash, id FROM skill_audit_log \
             WHERE tenant_id = $1 AND chain = $2 ORDER BY sequence DESC LIMIT 1",
            &[&tenant.as_str(), &chain],
        )
        .await?;
    row.map(|row| {
        Ok(ChainHead {
            sequence: u64::try_from(row.try_get::<_, i64>(0)?).unwrap_or(0),
            entry_hash: row.try_get(1)?,
            record_id: row.try_get(2)?,
        })
    })
    .transpose()
}

async fn read_range(
    s: Shared,
    tenant: TenantId,
    chain: String,
    from: u64,
    limit: usize,
) -> Outcome<Vec<AuditEntry>> {
    let tx = s.begin(tenant.as_str()).await?;
    tx.docs(
        "SELECT doc FROM skill_audit_log WHERE tenant_id = $1 AND chain = $2 \
         AND sequence >= $3 ORDER BY sequence LIMIT $4",
        &[&tenant.as_str(), &chain, &seq(from), &count(limit)],
    )
    .await
}

async fn get_entry(s: Shared, tenant: TenantId, id: String) -> Outcome<Option<AuditEntry>> {
    let tx = s.begin(tenant.as_str()).await?;
    tx.doc_opt(
        "SELECT doc FROM skill_audit_log WHERE tenant_id = $1 AND id = $2",
        &[&tenant.as_str(), &id],
    )
    .await
}

async fn query(s: Shared, tenant: TenantId, query: AuditQuery) -> Outcome<Vec<AuditEntry>> {
    let tx = s.begin(tenant.as_str()).await?;
    let (after_chain, after_seq) = match &query.after {
        Some(cursor) => (Some(cursor.chain.clone()), seq(cursor.sequence)),
        None => (None, 0),
    };
    let user = query.user.as_ref().map(|u| u.as_str().to_owned());
    // Every condition of `AuditQuery::matches` in SQL, so LIMIT can be applied there; the
    // rows are checked with `matches` again, which keeps the semantics identical.
    let entries: Vec<AuditEntry> = tx
        .docs(
            "SELECT doc FROM skill_audit_log WHERE tenant_id = $1 \
             AND ($2::TEXT IS NULL OR chain = $2) \
             AND ($3::TEXT IS NULL OR (chain, sequence) > ($3, $4)) \
             AND ($5::TEXT IS NULL OR doc->'record'->>'user_id' = $5) \
             AND ($6::TEXT IS NULL OR doc->'record'->>'skill_id' = $6) \
             AND ($7::BOOLEAN IS NULL OR (doc->'record'->>'success')::BOOLEAN = $7) \
             AND ($8::BIGINT IS NULL OR (doc->'record'->>'timestamp')::BIGINT >= $8) \
             AND ($9::BIGINT IS NULL OR (doc->'record'->>'timestamp')::BIGINT < $9) \
             ORDER BY chain, sequence LIMIT $10",
            &[
                &tenant.as_str(),
                &query.chain,
                &after_chain,
                &after_seq,
                &user,
                &query.skill_id,
                &query.success,
                &query.from,
                &query.until,
                &count(query.limit.unwrap_or(usize::MAX)),
            ],
        )
        .await?;
    Ok(entries.into_iter().filter(|e| query.matches(e)).collect())
}

async fn chains(s: Shared, tenant: TenantId) -> Outcome<Vec<String>> {
    let tx = s.begin(tenant.as_str()).await?;
    let rows = tx
        .query(
            "SELECT DISTINCT chain FROM skill_audit_log WHERE tenant_id = $1 ORDER BY chain",
            &[&tenant.as_str()],
        )
        .await?;
    rows.iter().map(|row| Ok(row.try_get(0)?)).collect()
}

#[async_trait]
impl AuditStore for PostgresStore {
    async fn append(
        &self,
        tenant: &TenantId,
        chain: &str,
        record: AuditRecord,
        expected_head: Option<&str>,
    ) -> Result<AuditEntry> {
        let task = append(
            self.shared(),
            tenant.clone(),
            chain.to_owned(),
            record,
            expected_head.map(str::to_owned),
        );
        self.call("append", task).await
    }

    async fn head(&self, tenant: &TenantId, chain: &str) -> Result<Option<ChainHead>> {
        self.call(
            "head",
            head(self.shared(), tenant.clone(), chain.to_owned()),
        )
        .await
    }

    async fn read_range(
        &self,
        tenant: &TenantId,
        chain: &str,
        from_sequence: u64,
        limit: usize,
    ) -> Result<Vec<AuditEntry>> {
        let task = read_range(
            self.shared(),
            tenant.clone(),
            chain.to_owned(),
            from_sequence,
            limit,
        );
        self.call("read_range", task).await
    }

    async fn get_entry(&self, tenant: &TenantId, record_id: &str) -> Result<Option<AuditEntry>> {
        let task = get_entry(self.shared(), tenant.clone(), record_id.to_owned());
        self.call("get_entry", task).await
    }

    async fn query(&self, tenant: &TenantId, q: &AuditQuery) -> Result<Vec<AuditEntry>> {
        self.call("query", query(self.shared(), tenant.clone(), q.clone()))
            .await
    }

    async fn chains(&self, tenant: &TenantId) -> Result<Vec<String>> {
        self.call("chains", chains(self.shared(), tenant.clone()))
            .await
    }
}
