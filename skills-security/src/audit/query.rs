//! Reading the trail: by skill, time range and user, and the usage-log view of seed 003
//! (`ExtensionUsageLog`), derived from the audit records rather than stored twice.
//!
//! Threat: a user reading other users' audit records (seed 000's `audit_log_read_own`
//! policy). Guarantee: a [`Viewer::User`] only ever gets records whose `user_id` is their
//! own, whatever the filter asks for; only a [`Viewer::Auditor`] sees the whole tenant.

use std::collections::HashSet;

use serde::{Deserialize, Serialize};
use skills_store_traits::audit::{AuditCursor, AuditEntry, AuditQuery};
use skills_store_traits::{TenantId, Timestamp, UserId};

use super::record::{PolicyFlag, TIMEOUT, Verdict, split_error};
use super::{AuditError, AuditTrail, TENANT_CHAIN};

/// Who is reading.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Viewer {
    /// Sees every record of the tenant (compliance, administrators).
    Auditor,
    /// Sees only their own records.
    User(UserId),
}

/// Which records to read; every condition set must hold.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct AuditFilter {
    /// Only this skill.
    pub skill_id: Option<String>,
    /// Only this user (for a [`Viewer::User`], only when it is themselves).
    pub user: Option<UserId>,
    /// Only records with `timestamp >= from`.
    pub from: Option<Timestamp>,
    /// Only records with `timestamp < until`.
    pub until: Option<Timestamp>,
    /// At most this many.
    pub limit: Option<usize>,
}

impl AuditFilter {
    /// Every record.
    pub fn new() -> AuditFilter {
        AuditFilter::default()
    }

    /// Only `skill_id`.
    pub fn skill(mut self, skill_id: impl Into<String>) -> Self {
        self.skill_id = Some(skill_id.into());
        self
    }

    /// Only `user`.
    pub fn user(mut self, user: impl Into<UserId>) -> Self {
        self.user = Some(user.into());
        self
    }

    /// Only `from <= timestamp < until`.
    pub fn between(mut self, from: Timestamp, until: Timestamp) -> Self {
        self.from = Some(from);
        self.until = Some(until);
        self
    }

    /// At most `limit`.
    pub fn limit(mut self, limit: usize) -> Self {
        self.limit = Some(limit);
        self
    }
}

/// A usage-log status (seed 003).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum UsageStatus {
    /// The execution succeeded.
    Success,
    /// It failed.
    Failed,
    /// It timed out (error code `timeout`).
    Timeout,
    /// The gate denied it.
    Denied,
}

/// One row of seed 003's `ExtensionUsageLog`, computed from an audit entry.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct UsageLogEntry {
    /// The audit record it comes from.
    pub audit_record_id: String,
    /// Its place in the chain.
    pub sequence: u64,
    /// The organisation (tenant).
    pub organization_id: TenantId,
    /// The skill (`extensionId`).
    pub extension_id: String,
    /// The user.
    pub user_id: UserId,
    /// The agent.
    pub agent_id: Option<String>,
    /// The task (`sessionId`).
    pub session_id: Option<String>,
    /// The execution (the record id, or the step a denial was for).
    pub execution_id: String,
    /// What happened.
    pub status: UsageStatus,
    /// How long it took (0 when not recorded, as for denials).
    pub duration_ms: u64,
    /// SHA-256 of the sanitized input.
    pub input_hash: Option<String>,
    /// The error code.
    pub error_code: Option<String>,
    /// The error message.
    pub error_message: Option<String>,
    /// When (the record's timestamp).
    pub created_at: Timestamp,
    /// Whether the gate asked a person before this execution could run: an
    /// `approval_required` decision for the same execution id came earlier in the trail
    /// (the gate records its decisions before the execution record). Only a reading of the
    /// trail can tell ([`AuditTrail::usage_log`], [`UsageLog`]); [`UsageLogEntry::from_entry`]
    /// sees one record and leaves it `false`.
    #[serde(default)]
    pub asked_approval: bool,
}

impl UsageLogEntry {
    /// The usage-log row of `entry`, or `None` for records that are not executions or
    /// denials (an allow or ask-approval decision of the gate, a plan's event).
    pub fn from_entry(tenant: &TenantId, entry: &AuditEntry) -> Option<UsageLogEntry> {
        let r = &entry.record;
        // A plan's own record (its skill id and path say so, as well as its flag): a flag
        // on an execution's record does not hide the execution.
        if r.skill_id == super::record::PLAN_RECORD_SKILL
            && r.skill_path.starts_with("plans/")
            && super::record::PlanFlag::find(r).is_some()
        {
            return None;
        }
        let policy = PolicyFlag::find(r);
        let (status, execution_id, code, message) = match policy {
            Some(flag) if flag.decision == Verdict::Deny => (
                UsageStatus::Denied,
                flag.execution,
                Some(flag.code),
                Some(flag.reason),
            ),
            Some(_) => return None,
            None => {
                let (code, message) = match r.error.as_deref().map(split_error) {
                    Some((code, message)) => (code.map(str::to_owned), Some(message.to_owned())),
                    None => (None, None),
                };
                let status = if r.success {
                    UsageStatus::Success
                } else if code.as_deref() == Some(TIMEOUT) {
                    UsageStatus::Timeout
                } else {
                    UsageStatus::Failed
                };
                (status, r.id.clone(), code, message)
            }
        };
        Some(UsageLogEntry {
            audit_record_id: r.id.clone(),
            sequence: entry.sequence,
            organization_id: tenant.clone(),
            extension_id: r.skill_id.clone(),
            user_id: r.user_id.clone(),
            agent_id: r.agent_id.clone(),
            session_id: r.task_id.clone(),
            execution_id,
            status,
            duration_ms: r.execution_time_ms.unwrap_or(0),
            input_hash: Some(r.input_hash.clone()),
            error_code: code,
            error_message: message,
            created_at: r.timestamp,
            asked_approval: false,
        })
    }
}

/// Turns audit entries, read in chain order, into usage-log rows, remembering which
/// executions the gate asked a person about so their rows say so
/// ([`UsageLogEntry::asked_approval`]).
///
/// An ask is remembered until the execution's own record arrives (each attempt has an
/// execution id of its own), so what is held is bounded by the executions awaiting an
/// answer. A reading that starts after an ask (a `from` time between the decision and the
/// run) does not see it.
#[derive(Debug, Default)]
pub struct UsageLog {
    asked: HashSet<String>,
}

impl UsageLog {
    /// A reading with nothing seen yet.
    pub fn new() -> UsageLog {
        UsageLog::default()
    }

    /// The row of the next `entry`, if it has one (see [`UsageLogEntry::from_entry`]).
    pub fn push(&mut self, tenant: &TenantId, entry: &AuditEntry) -> Option<UsageLogEntry> {
        let flag = PolicyFlag::find(&entry.record);
        if let Some(flag) = &flag
            && flag.decision == Verdict::AskApproval
        {
            self.asked.insert(flag.execution.clone());
            return None;
        }
        let mut row = UsageLogEntry::from_entry(tenant, entry)?;
        row.asked_approval = if flag.is_some() {
            self.asked.contains(&row.execution_id)
        } else {
            self.asked.remove(&row.execution_id)
        };
        Some(row)
    }

    /// The rows of `entries` (in chain order).
    pub fn rows(tenant: &TenantId, entries: &[AuditEntry]) -> Vec<UsageLogEntry> {
        let mut log = UsageLog::new();
        entries
            .iter()
            .filter_map(|entry| log.push(tenant, entry))
            .collect()
    }
}

impl AuditTrail {
    /// The entries `viewer` may see that match `filter`, in chain order.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use skills_security::audit::{AuditFilter, AuditTrail, Viewer};
    /// use skills_store_traits::{TenantId, audit::AuditRecord, in_memory::InMemoryAuditStore};
    ///
    /// # futures::executor::block_on(async {
    /// let trail = AuditTrail::new(Arc::new(InMemoryAuditStore::new()));
    /// let acme = TenantId::new("acme");
    /// for user in ["alice", "bob"] {
    ///     trail.append(&acme, AuditRecord::new(user, "pdf", "p/pdf", "core", "h", true)).await?;
    /// }
    /// let alice = Viewer::User("alice".into());
    /// // Alice asking for Bob's records gets none.
    /// assert!(trail.query(&acme, &alice, &AuditFilter::new().user("bob")).await?.is_empty());
    /// assert_eq!(trail.query(&acme, &alice, &AuditFilter::new()).await?.len(), 1);
    /// assert_eq!(trail.query(&acme, &Viewer::Auditor, &AuditFilter::new().skill("pdf")).await?.len(), 2);
    /// # Ok::<(), skills_security::audit::AuditError>(())
    /// # }).unwrap();
    /// ```
    pub async fn query(
        &self,
        tenant: &TenantId,
        viewer: &Viewer,
        filter: &AuditFilter,
    ) -> Result<Vec<AuditEntry>, AuditError> {
        self.fetch(tenant, viewer, filter, None).await
    }

    /// The usage log (seed 003) of what `viewer` may see, matching `filter`: executions as
    /// success, failed or timeout, and the gate's denials as denied, each execution marked
    /// with whether the gate asked a person first ([`UsageLog`]). The limit applies to the
    /// rows returned.
    pub async fn usage_log(
        &self,
        tenant: &TenantId,
        viewer: &Viewer,
        filter: &AuditFilter,
    ) -> Result<Vec<UsageLogEntry>, AuditError> {
        let limit = filter.limit.unwrap_or(usize::MAX);
        let mut page_filter = filter.clone();
        page_filter.limit = Some(1024);
        let mut rows = Vec::new();
        let mut log = UsageLog::new();
        let mut after: Option<AuditCursor> = None;
        loop {
            let page = self
                .fetch(tenant, viewer, &page_filter, after.take())
                .await?;
            let Some(last) = page.last() else { break };
            after = Some(AuditCursor::after(last));
            for entry in &page {
                if let Some(row) = log.push(tenant, entry) {
                    rows.push(row);
                    if rows.len() >= limit {
                        return Ok(rows);
                    }
                }
            }
            if page.len() < 1024 {
                break;
            }
        }
        Ok(rows)
    }

    async fn fetch(
        &self,
        tenant: &TenantId,
        viewer: &Viewer,
        filter: &AuditFilter,
        after: Option<AuditCursor>,
    ) -> Result<Vec<AuditEntry>, AuditError> {
        let mut query = AuditQuery::new().chain(TENANT_CHAIN);
        query.after = after;
        match (viewer, &filter.user) {
            (Viewer::User(me), Some(asked)) if asked != me => return Ok(Vec::new()),
            (Viewer::User(me), _) => query = query.user(me.clone()),
            (Viewer::Auditor, Some(user)) => query = query.user(user.clone()),
            (Viewer::Auditor, None) => {}
        }
        if let Some(skill) = &filter.skill_id {
            query = query.skill_id(skill.clone());
        }
        query.from = filter.from;
        query.until = filter.until;
        query.limit = filter.limit;
        let entries = self.store().query(tenant, &query).await?;
        // Defence in depth: never hand a user someone else's record, whatever the store did.
        Ok(entries
            .into_iter()
            .filter(|e| {
                e.chain == TENANT_CHAIN
                    && match viewer {
                        Viewer::User(me) => e.record.user_id == *me,
                        Viewer::Auditor => true,
                    }
            })
            .collect())
    }
}
