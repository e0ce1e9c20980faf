//! The [`MemoryStore`] contract.

use futures::future::join_all;
use serde_json::{Value, json};

use super::{neighbours, user};
use crate::error::{Error, Violation};
use crate::memory::{EpisodeQuery, FactQuery, MemoryStore, NewEpisode, NewFact};

fn episode(event_type: &str, title: &str, content: &str, at: i64) -> NewEpisode {
    let mut episode = NewEpisode::new(event_type, title, content);
    episode.occurred_at = Some(at);
    episode.context = json!({"at": at});
    episode
}

fn fact(subject: &str, predicate: &str, object: &str, confidence: f64) -> NewFact {
    let mut fact = NewFact::new(subject, predicate, object, confidence, "skill_extracted");
    fact.valid_from = Some(1_000);
    fact
}

fn strings(items: &[&str]) -> Vec<String> {
    items.iter().map(|s| (*s).to_owned()).collect()
}

#[track_caller]
fn assert_invalid<T: std::fmt::Debug>(result: crate::Result<T>, field: &str, contract: &str) {
    assert!(
        matches!(&result, Err(Error::Invalid { field: f, .. }) if f == field),
        "{contract}: expected Invalid `{field}`, got {result:?}"
    );
}

/// Runs every memory-store contract.
pub async fn run_all(store: &dyn MemoryStore) {
    episodes_store_and_rank(store).await;
    facts_validate_and_relate(store).await;
    procedures_upsert_and_rank(store).await;
    preferences_upsert_list_delete(store).await;
    user_and_tenant_isolation(store).await;
    concurrent_writers_lose_nothing(store).await;
}

/// Episodes are stored as given and searched by term matches, then recency, then id.
pub async fn episodes_store_and_rank(store: &dyn MemoryStore) {
    let scope = user();
    let both = store
        .store_episode(
            &scope,
            episode("skill_execution", "PDF report", "Quarterly numbers", 10),
        )
        .await
        .unwrap();
    assert_eq!((&both.tenant, &both.user), (&scope.tenant, &scope.user));
    assert_eq!(
        (both.occurred_at, both.context.clone()),
        (10, json!({"at": 10}))
    );
    assert_eq!(
        store.get_episode(&scope, &both.id).await.unwrap(),
        Some(both.clone())
    );
    let recent_one = store
        .store_episode(&scope, episode("skill_execution", "Executed pdf", "", 30))
        .await
        .unwrap();
    let old_one = store
        .store_episode(&scope, episode("chat", "Talked", "about the REPORT", 20))
        .await
        .unwrap();
    let unrelated = store
        .store_episode(&scope, episode("chat", "Calendar", "moved a meeting", 40))
        .await
        .unwrap();

    let search = |query: EpisodeQuery| {
        let scope = &scope;
        async move { store.query_episodes(scope, &query).await.unwrap() }
    };
    assert_eq!(
        search(EpisodeQuery::new("pdf report")).await,
        vec![both.clone(), recent_one.clone(), old_one.clone()],
        "more matching terms first, then the most recent; non-matching left out"
    );
    assert_eq!(
        search(EpisodeQuery::new("PDF report").limit(2)).await,
        vec![both.clone(), recent_one.clone()],
        "limit"
    );
    assert_eq!(
        search(EpisodeQuery::new("report").event_type("chat")).await,
        vec![old_one.clone()],
        "event type filter"
    );
    assert_eq!(
        search(EpisodeQuery::new("")).await,
        vec![unrelated, recent_one, old_one, both],
        "no terms: every episode, most recent first"
    );
    assert!(search(EpisodeQuery::new("zebra")).await.is_empty());

    assert_invalid(
        store
            .store_episode(&scope, NewEpisode::new("", "t", "c"))
            .await,
        "event_type",
        "store_episode validates",
    );
    assert_invalid(
        store
            .store_episode(&scope, NewEpisode::new("e", "", "c"))
            .await,
        "title",
        "store_episode validates",
    );
    assert_eq!(
        search(EpisodeQuery::new("")).await.len(),
        4,
        "refusals stored nothing"
    );
}

/// Facts are validated (confidence in 0..=1, validity interval) and related by entity or
/// topic, most confident first.
pub async fn facts_validate_and_relate(store: &dyn MemoryStore) {
    let scope = user();
    for confidence in [-0.01, 1.5, f64::NAN, f64::INFINITY] {
        let result = store
            .add_fact(&scope, fact("a", "b", "c", confidence))
            .await;
        assert!(
            matches!(&result, Err(Error::Invalid { field, violation: Violation::OutOfRange { .. } }) if field == "confidence"),
            "confidence {confidence} is refused: {result:?}"
        );
    }
    let mut backwards = fact("a", "b", "c", 0.5);
    backwards.valid_to = Some(999);
    assert_invalid(
        store.add_fact(&scope, backwards).await,
        "valid_to",
        "valid_to before valid_from",
    );
    for (field, spoil) in [
        (
            "subject",
            (|f: &mut NewFact| f.subject.clear()) as fn(&mut NewFact),
        ),
        ("predicate", |f| f.predicate.clear()),
        ("object", |f| f.object.clear()),
        ("source", |f| f.source.clear()),
    ] {
        let mut new = fact("a", "b", "c", 0.5);
        spoil(&mut new);
        assert_invalid(
            store.add_fact(&scope, new).await,
            field,
            "add_fact validates",
        );
    }

    let uses = store
        .add_fact(&scope, fact("Acme", "uses", "Jira", 0.75))
        .await
        .unwrap();
    assert_eq!(
        (uses.confidence, uses.valid_from, uses.valid_to),
        (0.75, 1_000, None)
    );
    assert_eq!(
        store.get_fact(&scope, &uses.id).await.unwrap(),
        Some(uses.clone())
    );
    let mut expired = fact("Acme", "based in", "Boston", 0.9);
    expired.valid_to = Some(2_000);
    let expired = store.add_fact(&scope, expired).await.unwrap();
    let ceo = store
        .add_fact(&scope, fact("Jane Doe", "leads", "acme", 1.0))
        .await
        .unwrap();
    let unrelated = store
        .add_fact(&scope, fact("Widget", "costs", "5 USD", 1.0))
        .await
        .unwrap();
    let edge = store
        .add_fact(&scope, fact("Acme", "rates", "low", 0.0))
        .await
        .unwrap();

    let related = |query: FactQuery| {
        let scope = &scope;
        async move { store.related_facts(scope, &query).await.unwrap() }
    };
    assert_eq!(
        related(FactQuery::new(strings(&["ACME"]), vec![])).await,
        vec![ceo.clone(), expired.clone(), uses.clone(), edge.clone()],
        "an entity matches subject or object ignoring case; most confident first"
    );
    assert_eq!(
        related(FactQuery::new(vec![], strings(&["jir", "5 usd"]))).await,
        vec![unrelated.clone(), uses.clone()],
        "a topic matches inside subject, predicate or object"
    );
    assert_eq!(
        related(FactQuery::new(strings(&["acme"]), vec![]).valid_at(2_000)).await,
        vec![ceo.clone(), uses.clone(), edge.clone()],
        "valid_at leaves out facts no longer holding"
    );
    assert_eq!(
        related(FactQuery::new(strings(&["acme"]), vec![]).valid_at(999)).await,
        vec![],
        "valid_at leaves out facts not yet holding"
    );
    assert_eq!(
        related(
            FactQuery::new(strings(&["acme"]), vec![])
                .min_confidence(0.8)
                .limit(1)
        )
        .await,
        vec![ceo],
        "min_confidence and limit"
    );
    assert!(
        related(FactQuery::new(vec![], vec![])).await.is_empty(),
        "no entities and no topics relate nothing"
    );
    assert!(
        related(FactQuery::new(strings(&["nobody"]), strings(&["zebra"])))
            .await
            .is_empty()
    );
}

/// Procedures are upserted by (task type, skill sequence), counted, and ranked by count.
pub async fn procedures_upsert_and_rank(store: &dyn MemoryStore) {
    let scope = user();
    let short = strings(&["pdf"]);
    let long = strings(&["pdf", "summarize"]);
    let first = store
        .record_successful_procedure(&scope, "report", &long, json!("v1"))
        .await
        .unwrap();
    assert_eq!(
        (first.success_count, first.task_type.as_str()),
        (1, "report")
    );
    assert_eq!((&first.tenant, &first.user), (&scope.tenant, &scope.user));
    let again = store
        .record_successful_procedure(&scope, "report", &long, json!("v2"))
        .await
        .unwrap();
    assert_eq!(again.id, first.id, "the same key is the same procedure");
    assert_eq!(
        (again.success_count, again.outcome.clone()),
        (2, json!("v2")),
        "count and latest outcome"
    );
    assert_eq!(again.created_at, first.created_at);
    assert!(again.last_success_at >= first.last_success_at);

    let reversed = strings(&["summarize", "pdf"]);
    let other = store
        .record_successful_procedure(&scope, "report", &reversed, Value::Null)
        .await
        .unwrap();
    assert_ne!(
        other.id, first.id,
        "the sequence's order is part of the key"
    );
    store
        .record_successful_procedure(&scope, "email", &short, Value::Null)
        .await
        .unwrap();

    let relevant = store.relevant_procedures(&scope, "report").await.unwrap();
    assert_eq!(
        relevant,
        vec![again, other],
        "exact task type, most successes first"
    );
    assert!(
        store
            .relevant_procedures(&scope, "Report")
            .await
            .unwrap()
            .is_empty()
    );

    assert_invalid(
        store
            .record_successful_procedure(&scope, "", &short, Value::Null)
            .await,
        "task_type",
        "record_successful_procedure validates",
    );
    assert_invalid(
        store
            .record_successful_procedure(&scope, "t", &[], Value::Null)
            .await,
        "skill_sequence",
        "record_successful_procedure validates",
    );
    assert_invalid(
        store
            .record_successful_procedure(&scope, "t", &strings(&["a", ""]), Value::Null)
            .await,
        "skill_sequence[1]",
        "record_successful_procedure validates",
    );
    assert!(
        store
            .relevant_procedures(&scope, "t")
            .await
            .unwrap()
            .is_empty()
    );
}

/// Preferences are upserted by (context, key), listed by (context, key), and deleted.
pub async fn preferences_upsert_list_delete(store: &dyn MemoryStore) {
    let scope = user();
    let tone = store
        .set_preference(&scope, "email", "tone", json!("formal"))
        .await
        .unwrap();
    store
        .set_preference(&scope, "email", "length", json!(200))
        .await
        .unwrap();
    store
        .set_preference(&scope, "calendar", "start", json!("09:00"))
        .await
        .unwrap();
    let retoned = store
        .set_preference(&scope, "email", "tone", json!("casual"))
        .await
        .unwrap();
    assert_eq!(
        (retoned.id.as_str(), retoned.created_at),
        (tone.id.as_str(), tone.created_at),
        "upsert keeps identity"
    );
    assert_eq!(retoned.value, json!("casual"));

    let keys = |prefs: Vec<crate::memory::Preference>| -> Vec<(String, String)> {
        prefs.into_iter().map(|p| (p.context, p.key)).collect()
    };
    assert_eq!(
        keys(store.preferences(&scope, Some("email")).await.unwrap()),
        vec![
            ("email".into(), "length".into()),
            ("email".into(), "tone".into())
        ],
        "one context, by key"
    );
    assert_eq!(
        keys(store.preferences(&scope, None).await.unwrap()),
        vec![
            ("calendar".into(), "start".into()),
            ("email".into(), "length".into()),
            ("email".into(), "tone".into()),
        ],
        "every context, by (context, key)"
    );
    assert!(
        store
            .preferences(&scope, Some("chat"))
            .await
            .unwrap()
            .is_empty()
    );

    store
        .delete_preference(&scope, "email", "tone")
        .await
        .unwrap();
    let result = store.delete_preference(&scope, "email", "tone").await;
    assert!(
        matches!(result, Err(Error::NotFound { .. })),
        "delete twice: {result:?}"
    );
    assert_eq!(
        store
            .preferences(&scope, Some("email"))
            .await
            .unwrap()
            .len(),
        1
    );

    assert_invalid(
        store.set_preference(&scope, "", "k", json!(1)).await,
        "context",
        "set_preference validates",
    );
    assert_invalid(
        store.set_preference(&scope, "c", "", json!(1)).await,
        "key",
        "set_preference validates",
    );
}

/// Another user of the tenant, or the same user id in another tenant, sees and changes
/// nothing of the owner's memory.
pub async fn user_and_tenant_isolation(store: &dyn MemoryStore) {
    let owner = user();
    let sequence = strings(&["pdf"]);
    let ep = store
        .store_episode(&owner, episode("chat", "secret plan", "secret", 1))
        .await
        .unwrap();
    let fa = store
        .add_fact(&owner, fact("Acme", "owes", "money", 0.9))
        .await
        .unwrap();
    let proc = store
        .record_successful_procedure(&owner, "report", &sequence, Value::Null)
        .await
        .unwrap();
    let pref = store
        .set_preference(&owner, "email", "tone", json!("formal"))
        .await
        .unwrap();

    for intruder in neighbours(&owner) {
        assert_eq!(
            store.get_episode(&intruder, &ep.id).await.unwrap(),
            None,
            "get_episode is per user"
        );
        assert!(
            store
                .query_episodes(&intruder, &EpisodeQuery::new("secret"))
                .await
                .unwrap()
                .is_empty()
        );
        assert!(
            store
                .query_episodes(&intruder, &EpisodeQuery::new(""))
                .await
                .unwrap()
                .is_empty()
        );
        assert_eq!(
            store.get_fact(&intruder, &fa.id).await.unwrap(),
            None,
            "get_fact is per user"
        );
        let query = FactQuery::new(strings(&["acme"]), strings(&["money"]));
        assert!(
            store
                .related_facts(&intruder, &query)
                .await
                .unwrap()
                .is_empty()
        );
        assert!(
            store
                .relevant_procedures(&intruder, "report")
                .await
                .unwrap()
                .is_empty()
        );
        assert!(store.preferences(&intruder, None).await.unwrap().is_empty());
        let result = store.delete_preference(&intruder, "email", "tone").await;
        assert!(
            matches!(result, Err(Error::NotFound { .. })),
            "delete of another's preference is NotFound: {result:?}"
        );
        let own = store
            .record_successful_procedure(&intruder, "report", &sequence, Value::Null)
            .await
            .unwrap();
        assert_eq!(own.success_count, 1, "the same key counts per user");
        assert_ne!(own.id, proc.id);
        let own = store
            .set_preference(&intruder, "email", "tone", json!("rude"))
            .await
            .unwrap();
        assert_ne!(own.id, pref.id, "the same preference key is per user");
    }
    assert_eq!(store.get_episode(&owner, &ep.id).await.unwrap(), Some(ep));
    assert_eq!(store.get_fact(&owner, &fa.id).await.unwrap(), Some(fa));
    assert_eq!(
        store.relevant_procedures(&owner, "report").await.unwrap(),
        vec![proc]
    );
    assert_eq!(store.preferences(&owner, None).await.unwrap(), vec![pref]);
}

/// Concurrent upserts of one procedure count every success; concurrent writes of
/// different records all land.
pub async fn concurrent_writers_lose_nothing(store: &dyn MemoryStore) {
    let scope = user();
    let scope = &scope;
    let sequence = strings(&["pdf", "summarize"]);
    let sequence = sequence.as_slice();
    let upserts =
        (0..50).map(|_| store.record_successful_procedure(scope, "report", sequence, Value::Null));
    for result in join_all(upserts).await {
        result.unwrap();
    }
    let procedures = store.relevant_procedures(scope, "report").await.unwrap();
    assert_eq!(procedures.len(), 1, "concurrent upserts make one procedure");
    assert_eq!(
        procedures[0].success_count, 50,
        "no concurrent success was lost"
    );

    let episodes =
        (0..32).map(|n| store.store_episode(scope, episode("e", &format!("t{n}"), "", n)));
    for result in join_all(episodes).await {
        result.unwrap();
    }
    let stored = store
        .query_episodes(scope, &EpisodeQuery::new(""))
        .await
        .unwrap();
    assert_eq!(stored.len(), 32, "concurrent episodes all land");

    let keys: Vec<String> = (0..32).map(|n| format!("k{n:02}")).collect();
    let prefs = keys
        .iter()
        .enumerate()
        .map(|(n, key)| store.set_preference(scope, "c", key, json!(n)));
    for result in join_all(prefs).await {
        result.unwrap();
    }
    assert_eq!(store.preferences(scope, Some("c")).await.unwrap().len(), 32);
}
