//! The in-memory [`MemoryStore`].

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, RwLock};

use serde_json::Value;

use crate::error::{Error, Result};
use crate::memory::{
    Episode, EpisodeQuery, Fact, FactQuery, MemoryStore, NewEpisode, NewFact, Preference,
    Procedure, rank_procedures, validate_preference_key, validate_procedure_key,
};
use crate::tenancy::UserScope;
use crate::time::{Clock, SystemClock, new_id};

use super::lock;

/// Agent memory in memory, one compartment per user scope.
#[derive(Debug)]
pub struct InMemoryMemoryStore {
    clock: Arc<dyn Clock>,
    users: RwLock<HashMap<UserScope, UserMemory>>,
}

#[derive(Debug, Default)]
struct UserMemory {
    episodes: HashMap<String, Episode>,
    facts: HashMap<String, Fact>,
    /// Keyed by (task type, skill sequence): the upsert key of a procedure.
    procedures: BTreeMap<(String, Vec<String>), Procedure>,
    preferences: BTreeMap<(String, String), Preference>,
}

impl InMemoryMemoryStore {
    /// An empty store on the system clock.
    pub fn new() -> Self {
        Self::with_clock(Arc::new(SystemClock))
    }

    /// An empty store stamping times from `clock`.
    pub fn with_clock(clock: Arc<dyn Clock>) -> Self {
        InMemoryMemoryStore {
            clock,
            users: RwLock::new(HashMap::new()),
        }
    }

    /// Runs `read` on the user's memory (an empty one when the user has none).
    fn read<T>(&self, scope: &UserScope, read: impl FnOnce(&UserMemory) -> T) -> Result<T> {
        let users = lock::read(&self.users)?;
        Ok(match users.get(scope) {
            Some(memory) => read(memory),
            None => read(&UserMemory::default()),
        })
    }

    /// Runs `write` on the user's memory under the write lock.
    fn write<T>(&self, scope: &UserScope, write: impl FnOnce(&mut UserMemory) -> T) -> Result<T> {
        let mut users = lock::write(&self.users)?;
        Ok(write(users.entry(scope.clone()).or_default()))
    }
}

impl Default for InMemoryMemoryStore {
    fn default() -> Self {
        Self::new()
    }
}

#[async_trait::async_trait]
impl MemoryStore for InMemoryMemoryStore {
    async fn store_episode(&self, scope: &UserScope, episode: NewEpisode) -> Result<Episode> {
        let episode = episode.into_episode(scope, self.clock.now())?;
        self.write(scope, |memory| {
            memory.episodes.insert(episode.id.clone(), episode.clone());
        })?;
        Ok(episode)
    }

    async fn get_episode(&self, scope: &UserScope, episode_id: &str) -> Result<Option<Episode>> {
        self.read(scope, |memory| memory.episodes.get(episode_id).cloned())
    }

    async fn query_episodes(
        &self,
        scope: &UserScope,
        query: &EpisodeQuery,
    ) -> Result<Vec<Episode>> {
        self.read(scope, |memory| {
            query.rank(memory.episodes.values().cloned())
        })
    }

    async fn add_fact(&self, scope: &UserScope, fact: NewFact) -> Result<Fact> {
        let fact = fact.into_fact(scope, self.clock.now())?;
        self.write(scope, |memory| {
            memory.facts.insert(fact.id.clone(), fact.clone());
        })?;
        Ok(fact)
    }

    async fn get_fact(&self, scope: &UserScope, fact_id: &str) -> Result<Option<Fact>> {
        self.read(scope, |memory| memory.facts.get(fact_id).cloned())
    }

    async fn related_facts(&self, scope: &UserScope, query: &FactQuery) -> Result<Vec<Fact>> {
        self.read(scope, |memory| {
            query.rank(memory.facts.values().filter(|f| query.matches(f)).cloned())
        })
    }

    async fn record_successful_procedure(
        &self,
        scope: &UserScope,
        task_type: &str,
        skill_sequence: &[String],
        outcome: Value,
    ) -> Result<Procedure> {
        validate_procedure_key(task_type, skill_sequence)?;
        let now = self.clock.now();
        self.write(scope, |memory| {
            let key = (task_type.to_owned(), skill_sequence.to_vec());
            let procedure = memory
                .procedures
                .entry(key)
                .and_modify(|p| p.success_count = p.success_count.saturating_add(1))
                .or_insert_with(|| Procedure {
                    id: new_id(),
                    tenant: scope.tenant.clone(),
                    user: scope.user.clone(),
                    task_type: task_type.to_owned(),
                    skill_sequence: skill_sequence.to_vec(),
                    outcome: Value::Null,
                    success_count: 1,
                    created_at: now,
                    last_success_at: now,
                });
            procedure.outcome = outcome;
            procedure.last_success_at = now;
            procedure.clone()
        })
    }

    async fn relevant_procedures(
        &self,
        scope: &UserScope,
        task_type: &str,
    ) -> Result<Vec<Procedure>> {
        let mut procedures = self.read(scope, |memory| {
            memory
                .procedures
                .values()
                .filter(|p| p.task_type == task_type)
                .cloned()
                .collect::<Vec<_>>()
        })?;
        rank_procedures(&mut procedures);
        Ok(procedures)
    }

    async fn set_preference(
        &self,
        scope: &UserScope,
        context: &str,
        key: &str,
        value: Value,
    ) -> Result<Preference> {
        validate_preference_key(context, key)?;
        let now = self.clock.now();
        self.write(scope, |memory| {
            let preference = memory
                .preferences
                .entry((context.to_owned(), key.to_owned()))
                .or_insert_with(|| Preference {
                    id: new_id(),
                    tenant: scope.tenant.clone(),
                    user: scope.user.clone(),
                    context: context.to_owned(),
                    key: key.to_owned(),
                    value: Value::Null,
                    created_at: now,
                    updated_at: now,
                });
            preference.value = value;
            preference.updated_at = now;
            preference.clone()
        })
    }

    async fn preferences(
        &self,
        scope: &UserScope,
        context: Option<&str>,
    ) -> Result<Vec<Preference>> {
        self.read(scope, |memory| {
            memory
                .preferences
                .values()
                .filter(|p| context.is_none_or(|c| p.context == c))
                .cloned()
                .collect()
        })
    }

    async fn delete_preference(&self, scope: &UserScope, context: &str, key: &str) -> Result<()> {
        let removed = self.write(scope, |memory| {
            memory
                .preferences
                .remove(&(context.to_owned(), key.to_owned()))
        })?;
        removed
            .map(|_| ())
            .ok_or_else(|| Error::not_found("preference", format!("{context}/{key}")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::ManualClock;

    #[tokio::test]
    async fn preferences_upsert_keeps_id_and_creation_time() {
        let clock = ManualClock::new(1);
        let store = InMemoryMemoryStore::with_clock(clock.clone());
        let scope = UserScope::new("t", "u");
        let first = store
            .set_preference(&scope, "email", "tone", "formal".into())
            .await
            .unwrap();
        clock.advance(1);
        let second = store
            .set_preference(&scope, "email", "tone", "casual".into())
            .await
            .unwrap();
        assert_eq!((first.id, first.created_at), (second.id, second.created_at));
        assert_eq!(
            (second.updated_at, second.value),
            (2, Value::from("casual"))
        );
    }

    #[tokio::test]
    async fn episodes_default_to_the_store_time() {
        let store = InMemoryMemoryStore::with_clock(ManualClock::new(7));
        let scope = UserScope::new("t", "u");
        let episode = store
            .store_episode(&scope, NewEpisode::new("e", "title", ""))
            .await
            .unwrap();
        assert_eq!((episode.occurred_at, episode.recorded_at), (7, 7));
    }
}
