//! [`MemoryStore`] on `memory_episodes`, `memory_facts`, `memory_procedures` and
//! `memory_preferences`.
//!
//! Matching and ranking use the query types' own functions ([`EpisodeQuery::rank`],
//! [`FactQuery::rank`], [`rank_procedures`]) over the user's rows, so results are exactly
//! the in-memory store's; SQL only narrows the rows where the narrowing is exact (an event
//! type, a validity time, a confidence floor).

use rusqlite::types::Value as Sql;
use rusqlite::{Connection, ToSql, params, params_from_iter};
use serde_json::Value;
use skills_store_traits::memory::{
    Episode, EpisodeQuery, Fact, FactQuery, MemoryStore, NewEpisode, NewFact, Preference,
    Procedure, rank_procedures, validate_preference_key, validate_procedure_key,
};
use skills_store_traits::{Error, Result, UserScope, new_id};

use crate::SqliteStore;
use crate::error::Outcome;
use crate::rows::{
    Field, Kind, build, columns, decode, field, insert, insert_object, json_text, object, renamed,
    update,
};

const EPISODE_FIELDS: &[Field] = &[
    field("id", Kind::Text),
    renamed("tenant", "tenant_id", Kind::Text),
    renamed("user", "user_id", Kind::Text),
    field("event_type", Kind::Text),
    field("title", Kind::Text),
    field("content", Kind::Text),
    field("occurred_at", Kind::Int),
    field("recorded_at", Kind::Int),
    renamed("context", "context_json", Kind::Json),
];

const FACT_FIELDS: &[Field] = &[
    field("id", Kind::Text),
    renamed("tenant", "tenant_id", Kind::Text),
    renamed("user", "user_id", Kind::Text),
    field("subject", Kind::Text),
    field("predicate", Kind::Text),
    field("object", Kind::Text),
    field("confidence", Kind::Real),
    field("source", Kind::Text),
    field("valid_from", Kind::Int),
    field("valid_to", Kind::Int),
    field("recorded_at", Kind::Int),
];

const PROCEDURE_FIELDS: &[Field] = &[
    field("id", Kind::Text),
    renamed("tenant", "tenant_id", Kind::Text),
    renamed("user", "user_id", Kind::Text),
    field("task_type", Kind::Text),
    renamed("skill_sequence", "skill_sequence_json", Kind::Json),
    renamed("outcome", "outcome_json", Kind::Json),
    field("success_count", Kind::UInt),
    field("created_at", Kind::Int),
    field("last_success_at", Kind::Int),
];

const PREFERENCE_FIELDS: &[Field] = &[
    field("id", Kind::Text),
    renamed("tenant", "tenant_id", Kind::Text),
    renamed("user", "user_id", Kind::Text),
    field("context", Kind::Text),
    field("key", Kind::Text),
    renamed("value", "value_json", Kind::Json),
    field("created_at", Kind::Int),
    field("updated_at", Kind::Int),
];

/// Rows of `table` owned by the user, narrowed by `extra` conditions (`column op` and its
/// value), in `order`.
fn owned<T: serde::de::DeserializeOwned>(
    conn: &Connection,
    table: &str,
    fields: &[Field],
    (tenant, user): (&str, &str),
    extra: &[(&str, Sql)],
    order: &str,
) -> Outcome<Vec<T>> {
    let mut conditions = vec!["tenant_id = ?1".to_owned(), "user_id = ?2".to_owned()];
    let mut params = vec![Sql::Text(tenant.to_owned()), Sql::Text(user.to_owned())];
    for (condition, value) in extra {
        params.push(value.clone());
        conditions.push(condition.replace('?', &format!("?{}", params.len())));
    }
    let sql = format!(
        "SELECT {} FROM {table} WHERE {} ORDER BY {order}",
        columns(fields, None),
        conditions.join(" AND ")
    );
    let mut statement = conn.prepare_cached(&sql)?;
    let rows = statement.query_map(params_from_iter(params), |row| decode(row, 0, fields))?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

fn one<T: serde::de::DeserializeOwned>(
    conn: &Connection,
    table: &str,
    fields: &[Field],
    owner: (&str, &str),
    id: &str,
) -> Outcome<Option<T>> {
    let mut found = owned(
        conn,
        table,
        fields,
        owner,
        &[("id = ?", Sql::Text(id.to_owned()))],
        "id",
    )?;
    Ok(found.pop())
}

fn owner(scope: &UserScope) -> (String, String) {
    (scope.tenant.to_string(), scope.user.to_string())
}

#[async_trait::async_trait]
impl MemoryStore for SqliteStore {
    async fn store_episode(&self, scope: &UserScope, episode: NewEpisode) -> Result<Episode> {
        let episode = episode.into_episode(scope, self.clock.now())?;
        self.worker
            .write(move |conn| {
                insert(conn, "memory_episodes", &[], EPISODE_FIELDS, &episode)?;
                Ok(episode.clone())
            })
            .await
    }

    async fn get_episode(&self, scope: &UserScope, episode_id: &str) -> Result<Option<Episode>> {
        let ((tenant, user), id) = (owner(scope), episode_id.to_owned());
        self.worker
            .read(move |conn| {
                one(
                    conn,
                    "memory_episodes",
                    EPISODE_FIELDS,
                    (&tenant, &user),
                    &id,
                )
            })
            .await
    }

    async fn query_episodes(
        &self,
        scope: &UserScope,
        query: &EpisodeQuery,
    ) -> Result<Vec<Episode>> {
        let ((tenant, user), query) = (owner(scope), query.clone());
        self.worker
            .read(move |conn| {
                let extra: Vec<(&str, Sql)> = query
                    .event_type
                    .iter()
                    .map(|t| ("event_type = ?", Sql::Text(t.clone())))
                    .collect();
                let episodes: Vec<Episode> = owned(
                    conn,
                    "memory_episodes",
                    EPISODE_FIELDS,
                    (&tenant, &user),
                    &extra,
                    "id",
                )?;
                Ok(query.rank(episodes))
            })
            .await
    }

    async fn add_fact(&self, scope: &UserScope, fact: NewFact) -> Result<Fact> {
        let fact = fact.into_fact(scope, self.clock.now())?;
        self.worker
            .write(move |conn| {
                insert(conn, "memory_facts", &[], FACT_FIELDS, &fact)?;
                Ok(fact.clone())
            })
            .await
    }

    async fn get_fact(&self, scope: &UserScope, fact_id: &str) -> Result<Option<Fact>> {
        let ((tenant, user), id) = (owner(scope), fact_id.to_owned());
        self.worker
            .read(move |conn| one(conn, "memory_facts", FACT_FIELDS, (&tenant, &user), &id))
            .await
    }

    async fn related_facts(&self, scope: &UserScope, query: &FactQuery) -> Result<Vec<Fact>> {
        let ((tenant, user), query) = (owner(scope), query.clone());
        self.worker
            .read(move |conn| {
                let mut extra = Vec::new();
                if let Some(at) = query.valid_at {
                    extra.push(("valid_from <= ?", Sql::Integer(at)));
                    extra.push(("(valid_to IS NULL OR valid_to > ?)", Sql::Integer(at)));
                }
                let facts: Vec<Fact> = owned(
                    conn,
                    "memory_facts",
                    FACT_FIELDS,
                    (&tenant, &user),
                    &extra,
                    "id",
                )?;
                Ok(query.rank(facts))
            })
            .await
    }

    async fn record_successful_procedure(
        &self,
        scope: &UserScope,
        task_type: &str,
        skill_sequence: &[String],
        outcome: Value,
    ) -> Result<Procedure> {
        validate_procedure_key(task_type, skill_sequence)?;
        let ((tenant, user), clock) = (owner(scope), self.clock.clone());
        let (task_type, sequence) = (task_type.to_owned(), skill_sequence.to_vec());
        self.worker
            .write(move |conn| {
                let now = clock.now();
                // The sequence's JSON text is its key: serde_json writes a list of strings
                // one way only.
                let key = json_text(&sequence)?;
                let conditions = [
                    ("task_type = ?", Sql::Text(task_type.clone())),
                    ("skill_sequence_json = ?", Sql::Text(key)),
                ];
                let found: Option<Procedure> = owned(
                    conn,
                    "memory_procedures",
                    PROCEDURE_FIELDS,
                    (&tenant, &user),
                    &conditions,
                    "id",
                )?
                .pop();
                match found {
                    Some(mut procedure) => {
                        procedure.success_count = procedure.success_count.saturating_add(1);
                        procedure.outcome = outcome.clone();
                        procedure.last_success_at = now;
                        let keys: [(&str, &dyn ToSql); 3] = [
                            ("tenant_id", &tenant),
                            ("user_id", &user),
                            ("id", &procedure.id),
                        ];
                        update(
                            conn,
                            "memory_procedures",
                            PROCEDURE_FIELDS,
                            &procedure,
                            &keys,
                        )?;
                        Ok(procedure)
                    }
                    None => {
                        let procedure = object! {
                            "id" => new_id(),
                            "tenant" => tenant,
                            "user" => user,
                            "task_type" => task_type,
                            "skill_sequence" => sequence,
                            "outcome" => outcome,
                            "success_count" => 1u64,
                            "created_at" => now,
                            "last_success_at" => now,
                        };
                        insert_object(
                            conn,
                            "memory_procedures",
                            &[],
                            PROCEDURE_FIELDS,
                            &procedure,
                        )?;
                        build(Value::Object(procedure))
                    }
                }
            })
            .await
    }

    async fn relevant_procedures(
        &self,
        scope: &UserScope,
        task_type: &str,
    ) -> Result<Vec<Procedure>> {
        let ((tenant, user), task_type) = (owner(scope), task_type.to_owned());
        self.worker
            .read(move |conn| {
                let mut procedures: Vec<Procedure> = owned(
                    conn,
                    "memory_procedures",
                    PROCEDURE_FIELDS,
                    (&tenant, &user),
                    &[("task_type = ?", Sql::Text(task_type.clone()))],
                    "id",
                )?;
                rank_procedures(&mut procedures);
                Ok(procedures)
            })
            .await
    }

    async fn set_preference(
        &self,
        scope: &UserScope,
        context: &str,
        key: &str,
        value: Value,
    ) -> Result<Preference> {
        validate_preference_key(context, key)?;
        let ((tenant, user), clock) = (owner(scope), self.clock.clone());
        let (context, key) = (context.to_owned(), key.to_owned());
        self.worker
            .write(move |conn| {
                let now = clock.now();
                let conditions = [
                    ("context = ?", Sql::Text(context.clone())),
                    ("key = ?", Sql::Text(key.clone())),
                ];
                let found: Option<Preference> = owned(
                    conn,
                    "memory_preferences",
                    PREFERENCE_FIELDS,
                    (&tenant, &user),
                    &conditions,
                    "id",
                )?
                .pop();
                match found {
                    Some(mut preference) => {
                        preference.value = value.clone();
                        preference.updated_at = now;
                        let keys: [(&str, &dyn ToSql); 3] = [
                            ("tenant_id", &tenant),
                            ("user_id", &user),
                            ("id", &preference.id),
                        ];
                        update(
                            conn,
                            "memory_preferences",
                            PREFERENCE_FIELDS,
                            &preference,
                            &keys,
                        )?;
                        Ok(preference)
                    }
                    None => {
                        let preference = object! {
                            "id" => new_id(),
                            "tenant" => tenant,
                            "user" => user,
                            "context" => context,
                            "key" => key,
                            "value" => value,
                            "created_at" => now,
                            "updated_at" => now,
                        };
                        insert_object(
                            conn,
                            "memory_preferences",
                            &[],
                            PREFERENCE_FIELDS,
                            &preference,
                        )?;
                        build(Value::Object(preference))
                    }
                }
            })
            .await
    }

    async fn preferences(
        &self,
        scope: &UserScope,
        context: Option<&str>,
    ) -> Result<Vec<Preference>> {
        let ((tenant, user), context) = (owner(scope), context.map(str::to_owned));
        self.worker
            .read(move |conn| {
                let extra: Vec<(&str, Sql)> = context
                    .iter()
                    .map(|c| ("context = ?", Sql::Text(c.clone())))
                    .collect();
                owned(
                    conn,
                    "memory_preferences",
                    PREFERENCE_FIELDS,
                    (&tenant, &user),
                    &extra,
                    "context, key",
                )
            })
            .await
    }

    async fn delete_preference(&self, scope: &UserScope, context: &str, key: &str) -> Result<()> {
        let (tenant, user) = owner(scope);
        let (context, key) = (context.to_owned(), key.to_owned());
        self.worker
            .write(move |conn| {
                let deleted = conn
                    .prepare_cached(
                        "DELETE FROM memory_preferences \
                         WHERE tenant_id = ?1 AND user_id = ?2 AND context = ?3 AND key = ?4",
                    )?
                    .execute(params![tenant, user, context, key])?;
                if deleted == 0 {
                    return Err(Error::not_found("preference", format!("{context}/{key}")).into());
                }
                Ok(())
            })
            .await
    }
}
