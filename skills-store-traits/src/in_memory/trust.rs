//! The in-memory [`TrustStore`].

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, RwLock};

use crate::error::{Error, Result};
use crate::tenancy::UserScope;
use crate::time::{Clock, SystemClock};
use crate::trust::{TrustChange, TrustRecord, TrustStore, check_skill_id};

use super::lock;

/// Trust records in memory, one map per user scope. Changes are applied under the write
/// lock, which makes each [`TrustStore::apply_all`] atomic.
#[derive(Debug)]
pub struct InMemoryTrustStore {
    clock: Arc<dyn Clock>,
    users: RwLock<HashMap<UserScope, BTreeMap<String, TrustRecord>>>,
}

impl InMemoryTrustStore {
    /// An empty store on the system clock.
    pub fn new() -> Self {
        Self::with_clock(Arc::new(SystemClock))
    }

    /// An empty store stamping times from `clock`.
    pub fn with_clock(clock: Arc<dyn Clock>) -> Self {
        InMemoryTrustStore {
            clock,
            users: RwLock::new(HashMap::new()),
        }
    }
}

impl Default for InMemoryTrustStore {
    fn default() -> Self {
        Self::new()
    }
}

#[async_trait::async_trait]
impl TrustStore for InMemoryTrustStore {
    async fn create(&self, scope: &UserScope, skill_id: &str) -> Result<TrustRecord> {
        check_skill_id(skill_id)?;
        let mut users = lock::write(&self.users)?;
        let records = users.entry(scope.clone()).or_default();
        if records.contains_key(skill_id) {
            return Err(Error::conflict("trust record", skill_id));
        }
        let record = TrustRecord::new(scope, skill_id, self.clock.now());
        records.insert(skill_id.to_owned(), record.clone());
        Ok(record)
    }

    async fn apply_all(
        &self,
        scope: &UserScope,
        skill_id: &str,
        changes: &[TrustChange],
    ) -> Result<TrustRecord> {
        check_skill_id(skill_id)?;
        let now = self.clock.now();
        let mut users = lock::write(&self.users)?;
        let record = users
            .entry(scope.clone())
            .or_default()
            .entry(skill_id.to_owned())
            .or_insert_with(|| TrustRecord::new(scope, skill_id, now));
        for change in changes {
            record.apply(change, now);
        }
        Ok(record.clone())
    }

    async fn get(&self, scope: &UserScope, skill_id: &str) -> Result<Option<TrustRecord>> {
        let users = lock::read(&self.users)?;
        Ok(users
            .get(scope)
            .and_then(|records| records.get(skill_id))
            .cloned())
    }

    async fn list(&self, scope: &UserScope) -> Result<Vec<TrustRecord>> {
        let users = lock::read(&self.users)?;
        Ok(users
            .get(scope)
            .map(|records| records.values().cloned().collect())
            .unwrap_or_default())
    }

    async fn delete(&self, scope: &UserScope, skill_id: &str) -> Result<()> {
        let mut users = lock::write(&self.users)?;
        users
            .get_mut(scope)
            .and_then(|records| records.remove(skill_id))
            .map(|_| ())
            .ok_or_else(|| Error::not_found("trust record", skill_id))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::ManualClock;

    #[tokio::test]
    async fn apply_creates_then_updates_with_store_times() {
        let clock = ManualClock::new(10);
        let store = InMemoryTrustStore::with_clock(clock.clone());
        let scope = UserScope::new("t", "u");
        let first = store
            .apply(&scope, "pdf", TrustChange::Success)
            .await
            .unwrap();
        clock.advance(5);
        let second = store
            .apply(&scope, "pdf", TrustChange::Failure)
            .await
            .unwrap();
        assert_eq!(first.id, second.id);
        assert_eq!((second.created_at, second.updated_at), (10, 15));
        assert_eq!(
            (second.last_success, second.last_failure),
            (Some(10), Some(15))
        );
        assert!(matches!(
            store.create(&scope, "pdf").await,
            Err(Error::Conflict { .. })
        ));
        assert!(matches!(
            store.apply(&scope, "", TrustChange::Success).await,
            Err(Error::Invalid { .. })
        ));
    }
}
