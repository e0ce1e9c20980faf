//! [`MemoryStore`] on PostgreSQL: episodes, facts, procedures and preferences per user.
//! Writes that read first (a procedure's success count, a preference) take the user's
//! memory lock, so concurrent writers in several processes lose no update.

use async_trait::async_trait;
use serde_json::Value;
use skills_store_traits::memory::{
    Episode, EpisodeQuery, Fact, FactQuery, MemoryStore, NewEpisode, NewFact, Preference,
    Procedure, rank_procedures, validate_preference_key, validate_procedure_key,
};
use skills_store_traits::{Error, Result, UserScope, new_id};
use tokio_postgres::types::Json;

use crate::PostgresStore;
use crate::db::{Domain, Shared};
use crate::error::Outcome;

async fn store_episode(s: Shared, scope: UserScope, new: NewEpisode) -> Outcome<Episode> {
    let episode = new.into_episode(&scope, s.clock.now())?;
    let tx = s.begin(scope.tenant.as_str()).await?;
    tx.execute(
        "INSERT INTO memory_episodes (tenant_id, user_id, id, doc) VALUES ($1, $2, $3, $4)",
        &[
            &scope.tenant.as_str(),
            &scope.user.as_str(),
            &episode.id,
            &Json(&episode),
        ],
    )
    .await?;
    tx.commit().await?;
    Ok(episode)
}

async fn get_episode(s: Shared, scope: UserScope, id: String) -> Outcome<Option<Episode>> {
    let tx = s.begin(scope.tenant.as_str()).await?;
    tx.doc_opt(
        "SELECT doc FROM memory_episodes WHERE tenant_id = $1 AND user_id = $2 AND id = $3",
        &[&scope.tenant.as_str(), &scope.user.as_str(), &id],
    )
    .await
}

async fn query_episodes(s: Shared, scope: UserScope, query: EpisodeQuery) -> Outcome<Vec<Episode>> {
    let tx = s.begin(scope.tenant.as_str()).await?;
    let episodes: Vec<Episode> = tx
        .docs(
            "SELECT doc FROM memory_episodes WHERE tenant_id = $1 AND user_id = $2",
            &[&scope.tenant.as_str(), &scope.user.as_str()],
        )
        .await?;
    Ok(query.rank(episodes))
}

async fn add_fact(s: Shared, scope: UserScope, new: NewFact) -> Outcome<Fact> {
    let fact = new.into_fact(&scope, s.clock.now())?;
    let tx = s.begin(scope.tenant.as_str()).await?;
    tx.execute(
        "INSERT INTO memory_facts (tenant_id, user_id, id, doc) VALUES ($1, $2, $3, $4)",
        &[
            &scope.tenant.as_str(),
            &scope.user.as_str(),
            &fact.id,
            &Json(&fact),
        ],
    )
    .await?;
    tx.commit().await?;
    Ok(fact)
}

async fn get_fact(s: Shared, scope: UserScope, id: String) -> Outcome<Option<Fact>> {
    let tx = s.begin(scope.tenant.as_str()).await?;
    tx.doc_opt(
        "SELECT doc FROM memory_facts WHERE tenant_id = $1 AND user_id = $2 AND id = $3",
        &[&scope.tenant.as_str(), &scope.user.as_str(), &id],
    )
    .await
}

async fn related_facts(s: Shared, scope: UserScope, query: FactQuery) -> Outcome<Vec<Fact>> {
    let tx = s.begin(scope.tenant.as_str()).await?;
    let facts: Vec<Fact> = tx
        .docs(
            "SELECT doc FROM memory_facts WHERE tenant_id = $1 AND user_id = $2",
            &[&scope.tenant.as_str(), &scope.user.as_str()],
        )
        .await?;
    Ok(query.rank(facts.into_iter().filter(|f| query.matches(f))))
}

async fn record_procedure(
    s: Shared,
    scope: UserScope,
    task_type: String,
    sequence: Vec<String>,
    outcome: Value,
) -> Outcome<Procedure> {
    validate_procedure_key(&task_type, &sequence)?;
    let (t, u) = (scope.tenant.as_str(), scope.user.as_str());
    let tx = s.begin_write(t, Domain::Memory, u).await?;
    let now = s.clock.now();
    let key = Json(&sequence);
    let existing: Option<Procedure> = tx
        .doc_opt(
            "SELECT doc FROM memory_procedures WHERE tenant_id = $1 AND user_id = $2 \
             AND task_type = $3 AND skill_sequence = $4",
            &[&t, &u, &task_type, &key],
        )
        .await?;
    let mut procedure = match existing {
        Some(mut p) => {
            p.success_count = p.success_count.saturating_add(1);
            p
        }
        None => record!(Procedure {
            "id": new_id(),
            "tenant": scope.tenant.clone(),
            "user": scope.user.clone(),
            "task_type": task_type.clone(),
            "skill_sequence": sequence.clone(),
            "outcome": Value::Null,
            "success_count": 1,
            "created_at": now,
            "last_success_at": now,
        }),
    };
    procedure.outcome = outcome;
    procedure.last_success_at = now;
    tx.execute(
        "INSERT INTO memory_procedures (tenant_id, user_id, task_type, skill_sequence, doc) \
         VALUES ($1, $2, $3, $4, $5) \
         ON CONFLICT (tenant_id, user_id, task_type, skill_sequence) \
         DO UPDATE SET doc = EXCLUDED.doc",
        &[&t, &u, &task_type, &key, &Json(&procedure)],
    )
    .await?;
    tx.commit().await?;
    Ok(procedure)
}

async fn relevant_procedures(
    s: Shared,
    scope: UserScope,
    task_type: String,
) -> Outcome<Vec<Procedure>> {
    let tx = s.begin(scope.tenant.as_str()).await?;
    let mut procedures: Vec<Procedure> = tx
        .docs(
            "SELECT doc FROM memory_procedures WHERE tenant_id = $1 AND user_id = $2 \
             AND task_type = $3",
            &[&scope.tenant.as_str(), &scope.user.as_str(), &task_type],
        )
        .await?;
    rank_procedures(&mut procedures);
    Ok(procedures)
}

async fn set_preference(
    s: Shared,
    scope: UserScope,
    context: String,
    key: String,
    value: Value,
) -> Outcome<Preference> {
    validate_preference_key(&context, &key)?;
    let (t, u) = (scope.tenant.as_str(), scope.user.as_str());
    let tx = s.begin_write(t, Domain::Memory, u).await?;
    let now = s.clock.now();
    let existing: Option<Preference> = tx
        .doc_opt(
            "SELECT doc FROM memory_preferences WHERE tenant_id = $1 AND user_id = $2 \
             AND context = $3 AND key = $4",
            &[&t, &u, &context, &key],
        )
        .await?;
    let mut preference = match existing {
        Some(preference) => preference,
        None => record!(Preference {
            "id": new_id(),
            "tenant": scope.tenant.clone(),
            "user": scope.user.clone(),
            "context": context.clone(),
            "key": key.clone(),
            "value": Value::Null,
            "created_at": now,
            "updated_at": now,
        }),
    };
    preference.value = value;
    preference.updated_at = now;
    tx.execute(
        "INSERT INTO memory_preferences (tenant_id, user_id, context, key, doc) \
         VALUES ($1, $2, $3, $4, $5) \
         ON CONFLICT (tenant_id, user_id, context, key) DO UPDATE SET doc = EXCLUDED.doc",
        &[&t, &u, &context, &key, &Json(&preference)],
    )
    .await?;
    tx.commit().await?;
    Ok(preference)
}

async fn preferences(
    s: Shared,
    scope: UserScope,
    context: Option<String>,
) -> Outcome<Vec<Preference>> {
    let tx = s.begin(scope.tenant.as_str()).await?;
    tx.docs(
        "SELECT doc FROM memory_preferences WHERE tenant_id = $1 AND user_id = $2 \
         AND ($3::TEXT IS NULL OR context = $3) ORDER BY context, key",
        &[&scope.tenant.as_str(), &scope.user.as_str(), &context],
    )
    .await
}

async fn delete_preference(
    s: Shared,
    scope: UserScope,
    context: String,
    key: String,
) -> Outcome<()> {
    let (t, u) = (scope.tenant.as_str(), scope.user.as_str());
    let tx = s.begin_write(t, Domain::Memory, u).await?;
    let deleted = tx
        .execute(
            "DELETE FROM memory_preferences WHERE tenant_id = $1 AND user_id = $2 \
             AND context = $3 AND key = $4",
            &[&t, &u, &context, &key],
        )
        .await?;
    if deleted == 0 {
        return Err(Error::not_found("preference", format!("{context}/{key}")).into());
    }
    tx.commit().await?;
    Ok(())
}

#[async_trait]
impl MemoryStore for PostgresStore {
    async fn store_episode(&self, scope: &UserScope, episode: NewEpisode) -> Result<Episode> {
        self.call(
            "store_episode",
            store_episode(self.shared(), scope.clone(), episode),
        )
        .await
    }

    async fn get_episode(&self, scope: &UserScope, episode_id: &str) -> Result<Option<Episode>> {
        let task = get_episode(self.shared(), scope.clone(), episode_id.to_owned());
        self.call("get_episode", task).await
    }

    async fn query_episodes(
        &self,
        scope: &UserScope,
        query: &EpisodeQuery,
    ) -> Result<Vec<Episode>> {
        let task = query_episodes(self.shared(), scope.clone(), query.clone());
        self.call("query_episodes", task).await
    }

    async fn add_fact(&self, scope: &UserScope, fact: NewFact) -> Result<Fact> {
        self.call("add_fact", add_fact(self.shared(), scope.clone(), fact))
            .await
    }

    async fn get_fact(&self, scope: &UserScope, fact_id: &str) -> Result<Option<Fact>> {
        let task = get_fact(self.shared(), scope.clone(), fact_id.to_owned());
        self.call("get_fact", task).await
    }

    async fn related_facts(&self, scope: &UserScope, query: &FactQuery) -> Result<Vec<Fact>> {
        let task = related_facts(self.shared(), scope.clone(), query.clone());
        self.call("related_facts", task).await
    }

    async fn record_successful_procedure(
        &self,
        scope: &UserScope,
        task_type: &str,
        skill_sequence: &[String],
        outcome: Value,
    ) -> Result<Procedure> {
        let task = record_procedure(
            self.shared(),
            scope.clone(),
            task_type.to_owned(),
            skill_sequence.to_vec(),
            outcome,
        );
        self.call("record_successful_procedure", task).await
    }

    async fn relevant_procedures(
        &self,
        scope: &UserScope,
        task_type: &str,
    ) -> Result<Vec<Procedure>> {
        let task = relevant_procedures(self.shared(), scope.clone(), task_type.to_owned());
        self.call("relevant_procedures", task).await
    }

    async fn set_preference(
        &self,
        scope: &UserScope,
        context: &str,
        key: &str,
        value: Value,
    ) -> Result<Preference> {
        let task = set_preference(
            self.shared(),
            scope.clone(),
            context.to_owned(),
            key.to_owned(),
            value,
        );
        self.call("set_preference", task).await
    }

    async fn preferences(
        &self,
        scope: &UserScope,
        context: Option<&str>,
    ) -> Result<Vec<Preference>> {
        let task = preferences(self.shared(), scope.clone(), context.map(str::to_owned));
        self.call("preferences", task).await
    }

    async fn delete_preference(&self, scope: &UserScope, context: &str, key: &str) -> Result<()> {
        let task = delete_preference(
            self.shared(),
            scope.clone(),
            context.to_owned(),
            key.to_owned(),
        );
        self.call("delete_preference", task).await
    }
}
