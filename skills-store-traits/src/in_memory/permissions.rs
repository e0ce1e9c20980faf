//! The in-memory [`PermissionStore`].

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, RwLock};

use crate::approvals::{
    ApprovalRecord, ApprovalStatus, NewApproval, check_approval, check_decider,
};
use crate::error::{Error, Result};
use crate::permissions::{PermissionRecord, PermissionStore, check_rule, check_rules};
use crate::tenancy::TenantId;
use crate::time::{Clock, SystemClock};

use super::lock;

/// Permission rules in memory, one map per tenant ordered by id. A replacement happens
/// under one write lock, so it is atomic.
#[derive(Debug)]
pub struct InMemoryPermissionStore {
    clock: Arc<dyn Clock>,
    tenants: RwLock<HashMap<TenantId, BTreeMap<String, PermissionRecord>>>,
    approvals: RwLock<HashMap<TenantId, BTreeMap<String, ApprovalRecord>>>,
}

impl InMemoryPermissionStore {
    /// An empty store on the system clock.
    pub fn new() -> Self {
        Self::with_clock(Arc::new(SystemClock))
    }

    /// An empty store stamping times from `clock`.
    pub fn with_clock(clock: Arc<dyn Clock>) -> Self {
        InMemoryPermissionStore {
            clock,
            tenants: RwLock::new(HashMap::new()),
            approvals: RwLock::new(HashMap::new()),
        }
    }
}

impl Default for InMemoryPermissionStore {
    fn default() -> Self {
        Self::new()
    }
}

#[async_trait::async_trait]
impl PermissionStore for InMemoryPermissionStore {
    async fn put_rule(
        &self,
        tenant: &TenantId,
        id: &str,
        rule: serde_json::Value,
    ) -> Result<PermissionRecord> {
        check_rule(id, &rule)?;
        let now = self.clock.now();
        let mut tenants = lock::write(&self.tenants)?;
        let rules = tenants.entry(tenant.clone()).or_default();
        let record = PermissionRecord::written(tenant, id, rule, rules.get(id), now);
        rules.insert(id.to_owned(), record.clone());
        Ok(record)
    }

    async fn get_rule(&self, tenant: &TenantId, id: &str) -> Result<Option<PermissionRecord>> {
        let tenants = lock::read(&self.tenants)?;
        Ok(tenants.get(tenant).and_then(|rules| rules.get(id)).cloned())
    }

    async fn list_rules(&self, tenant: &TenantId) -> Result<Vec<PermissionRecord>> {
        let tenants = lock::read(&self.tenants)?;
        Ok(tenants
            .get(tenant)
            .map(|rules| rules.values().cloned().collect())
            .unwrap_or_default())
    }

    async fn delete_rule(&self, tenant: &TenantId, id: &str) -> Result<bool> {
        let mut tenants = lock::write(&self.tenants)?;
        Ok(tenants
            .get_mut(tenant)
            .and_then(|rules| rules.remove(id))
            .is_some())
    }

    async fn replace_rules(
        &self,
        tenant: &TenantId,
        rules: Vec<(String, serde_json::Value)>,
    ) -> Result<Vec<PermissionRecord>> {
        check_rules(&rules)?;
        let now = self.clock.now();
        let mut tenants = lock::write(&self.tenants)?;
        let old = tenants.remove(tenant).unwrap_or_default();
        let mut new = BTreeMap::new();
        for (id, rule) in rules {
            let record = PermissionRecord::written(tenant, &id, rule, old.get(&id), now);
            new.insert(id, record);
        }
        let out = new.values().cloned().collect();
        tenants.insert(tenant.clone(), new);
        Ok(out)
    }

    async fn request_approval(
        &self,
        tenant: &TenantId,
        approval: NewApproval,
    ) -> Result<ApprovalRecord> {
        check_approval(&approval)?;
        let now = self.clock.now();
        let mut approvals = lock::write(&self.approvals)?;
        let records = approvals.entry(tenant.clone()).or_default();
        match records.get(&approval.execution_id) {
            Some(existing) if existing.status == ApprovalStatus::Pending => Ok(existing.clone()),
            Some(existing) => Err(Error::conflict("approval", existing.execution_id.clone())),
            None => {
                let record = ApprovalRecord::requested(tenant, approval, now);
                records.insert(record.execution_id.clone(), record.clone());
                Ok(record)
            }
        }
    }

    async fn decide_approval(
        &self,
        tenant: &TenantId,
        execution_id: &str,
        approved: bool,
        by: Option<&str>,
    ) -> Result<ApprovalRecord> {
        check_decider(by)?;
        let now = self.clock.now();
        let mut approvals = lock::write(&self.approvals)?;
        let record = approvals
            .get_mut(tenant)
            .and_then(|records| records.get_mut(execution_id))
            .ok_or_else(|| Error::not_found("approval", execution_id))?;
        let decided = record.clone().decide(approved, by, now)?;
        *record = decided.clone();
        Ok(decided)
    }

    async fn get_approval(
        &self,
        tenant: &TenantId,
        execution_id: &str,
    ) -> Result<Option<ApprovalRecord>> {
        let approvals = lock::read(&self.approvals)?;
        Ok(approvals
            .get(tenant)
            .and_then(|records| records.get(execution_id))
            .cloned())
    }

    async fn list_approvals(
        &self,
        tenant: &TenantId,
        status: Option<ApprovalStatus>,
    ) -> Result<Vec<ApprovalRecord>> {
        let approvals = lock::read(&self.approvals)?;
        let mut list: Vec<ApprovalRecord> = approvals
            .get(tenant)
            .map(|records| {
                records
                    .values()
                    .filter(|r| status.is_none_or(|s| r.status == s))
                    .cloned()
                    .collect()
            })
            .unwrap_or_default();
        list.sort_by(|a, b| {
            (a.requested_at, &a.execution_id).cmp(&(b.requested_at, &b.execution_id))
        });
        Ok(list)
    }
}
