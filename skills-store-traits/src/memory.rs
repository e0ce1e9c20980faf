//! Agent memory for the skill memory bridge (seed 000 section 2.2): episodes (what
//! happened), facts (what is known, with a confidence), procedures (skill sequences that
//! worked for a task type) and preferences (per context and key).
//!
//! All of it belongs to a user. The matching and ranking rules are plain functions on the
//! query types ([`EpisodeQuery::rank`], [`FactQuery::rank`]) so every backend can return
//! exactly the same lists; classification and redaction of what a skill may see belong to
//! `skills-security`.

use std::cmp::Reverse;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::{Error, Result, Violation};
use crate::tenancy::{TenantId, UserId, UserScope};
use crate::time::{Timestamp, new_id};

fn required(field: &str, value: &str) -> Result<()> {
    if value.is_empty() {
        return Err(Error::invalid(field, Violation::Empty));
    }
    Ok(())
}

fn lower(text: &str) -> String {
    text.to_lowercase()
}

/// Something that happened (episodic memory).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Episode {
    /// The episode's id (assigned by the store).
    pub id: String,
    /// The tenant.
    pub tenant: TenantId,
    /// The user.
    pub user: UserId,
    /// What kind of event (`skill_execution`).
    pub event_type: String,
    /// A title.
    pub title: String,
    /// What happened.
    pub content: String,
    /// When it happened.
    pub occurred_at: Timestamp,
    /// When the store recorded it.
    pub recorded_at: Timestamp,
    /// Structured context (skill id, task, success, ...).
    pub context: Value,
}

/// An episode to store.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct NewEpisode {
    /// What kind of event (required).
    pub event_type: String,
    /// A title (required).
    pub title: String,
    /// What happened.
    pub content: String,
    /// When it happened; `None` means when it is stored.
    pub occurred_at: Option<Timestamp>,
    /// Structured context.
    pub context: Value,
}

impl NewEpisode {
    /// An episode happening now, with no context.
    pub fn new(
        event_type: impl Into<String>,
        title: impl Into<String>,
        content: impl Into<String>,
    ) -> Self {
        NewEpisode {
            event_type: event_type.into(),
            title: title.into(),
            content: content.into(),
            occurred_at: None,
            context: Value::Null,
        }
    }

    /// Validates and stamps the episode for `scope`, recorded at `now`.
    pub fn into_episode(self, scope: &UserScope, now: Timestamp) -> Result<Episode> {
        required("event_type", &self.event_type)?;
        required("title", &self.title)?;
        Ok(Episode {
            id: new_id(),
            tenant: scope.tenant.clone(),
            user: scope.user.clone(),
            event_type: self.event_type,
            title: self.title,
            content: self.content,
            occurred_at: self.occurred_at.unwrap_or(now),
            recorded_at: now,
            context: self.context,
        })
    }
}

/// A search of a user's episodes.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct EpisodeQuery {
    /// Free text; its terms are the runs of letters and digits, lowercased.
    pub text: String,
    /// Only episodes of this event type.
    pub event_type: Option<String>,
    /// At most this many episodes.
    pub limit: Option<usize>,
}

impl EpisodeQuery {
    /// A search for `text`.
    pub fn new(text: impl Into<String>) -> Self {
        EpisodeQuery {
            text: text.into(),
            ..EpisodeQuery::default()
        }
    }

    /// Only episodes of `event_type`.
    pub fn event_type(mut self, event_type: impl Into<String>) -> Self {
        self.event_type = Some(event_type.into());
        self
    }

    /// At most `limit` episodes.
    pub fn limit(mut self, limit: usize) -> Self {
        self.limit = Some(limit);
        self
    }

    /// The distinct lowercase terms of the text, sorted.
    pub fn terms(&self) -> Vec<String> {
        let mut terms: Vec<String> = lower(&self.text)
            .split(|c: char| !c.is_alphanumeric())
            .filter(|term| !term.is_empty())
            .map(str::to_owned)
            .collect();
        terms.sort();
        terms.dedup();
        terms
    }

    /// How many terms occur (case-insensitively, as substrings) in the episode's title or
    /// content; `None` when the episode is excluded: wrong event type, or terms given and
    /// none found.
    pub fn score(&self, episode: &Episode) -> Option<usize> {
        self.score_terms(&self.terms(), episode)
    }

    fn score_terms(&self, terms: &[String], episode: &Episode) -> Option<usize> {
        if self
            .event_type
            .as_ref()
            .is_some_and(|t| *t != episode.event_type)
        {
            return None;
        }
        if terms.is_empty() {
            return Some(0);
        }
        let haystack = lower(&format!("{}\n{}", episode.title, episode.content));
        let score = terms
            .iter()
            .filter(|t| haystack.contains(t.as_str()))
            .count();
        (score > 0).then_some(score)
    }

    /// The result of the search over `episodes`: the included ones by score (highest
    /// first), then `occurred_at` (latest first), then id, cut to the limit.
    pub fn rank(&self, episodes: impl IntoIterator<Item = Episode>) -> Vec<Episode> {
        let terms = self.terms();
        let mut scored: Vec<(usize, Episode)> = episodes
            .into_iter()
            .filter_map(|episode| Some((self.score_terms(&terms, &episode)?, episode)))
            .collect();
        scored.sort_by(|(sa, a), (sb, b)| {
            (Reverse(*sa), Reverse(a.occurred_at), &a.id).cmp(&(
                Reverse(*sb),
                Reverse(b.occurred_at),
                &b.id,
            ))
        });
        scored
            .into_iter()
            .map(|(_, episode)| episode)
            .take(self.limit.unwrap_or(usize::MAX))
            .collect()
    }
}

/// A fact (semantic memory): subject, predicate, object, held with a confidence over a
/// validity interval.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Fact {
    /// The fact's id (assigned by the store).
    pub id: String,
    /// The tenant.
    pub tenant: TenantId,
    /// The user.
    pub user: UserId,
    /// The subject.
    pub subject: String,
    /// The predicate.
    pub predicate: String,
    /// The object.
    pub object: String,
    /// How sure, from 0 to 1.
    pub confidence: f64,
    /// Where it came from (`skill_extracted`, `user_stated`, ...).
    pub source: String,
    /// When it starts to hold.
    pub valid_from: Timestamp,
    /// When it stops holding (exclusive); `None` while it holds.
    pub valid_to: Option<Timestamp>,
    /// When the store recorded it.
    pub recorded_at: Timestamp,
}

/// A fact to add.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct NewFact {
    /// The subject (required).
    pub subject: String,
    /// The predicate (required).
    pub predicate: String,
    /// The object (required).
    pub object: String,
    /// How sure: a finite number from 0 to 1.
    pub confidence: f64,
    /// Where it came from (required).
    pub source: String,
    /// When it starts to hold; `None` means when it is added.
    pub valid_from: Option<Timestamp>,
    /// When it stops holding; not before `valid_from`.
    pub valid_to: Option<Timestamp>,
}

impl NewFact {
    /// A fact holding from now on.
    pub fn new(
        subject: impl Into<String>,
        predicate: impl Into<String>,
        object: impl Into<String>,
        confidence: f64,
        source: impl Into<String>,
    ) -> Self {
        NewFact {
            subject: subject.into(),
            predicate: predicate.into(),
            object: object.into(),
            confidence,
            source: source.into(),
            valid_from: None,
            valid_to: None,
        }
    }

    /// Validates and stamps the fact for `scope`, recorded at `now`.
    pub fn into_fact(self, scope: &UserScope, now: Timestamp) -> Result<Fact> {
        required("subject", &self.subject)?;
        required("predicate", &self.predicate)?;
        required("object", &self.object)?;
        required("source", &self.source)?;
        if !(0.0..=1.0).contains(&self.confidence) {
            return Err(Error::invalid(
                "confidence",
                Violation::OutOfRange {
                    expected: "a number from 0 to 1",
                },
            ));
        }
        let valid_from = self.valid_from.unwrap_or(now);
        if self.valid_to.is_some_and(|to| to < valid_from) {
            return Err(Error::invalid(
                "valid_to",
                Violation::OutOfRange {
                    expected: "not before valid_from",
                },
            ));
        }
        Ok(Fact {
            id: new_id(),
            tenant: scope.tenant.clone(),
            user: scope.user.clone(),
            subject: self.subject,
            predicate: self.predicate,
            object: self.object,
            confidence: self.confidence,
            source: self.source,
            valid_from,
            valid_to: self.valid_to,
            recorded_at: now,
        })
    }
}

/// A search for the facts related to a task.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct FactQuery {
    /// A fact is related when its subject or object equals one of these (ignoring case).
    pub entities: Vec<String>,
    /// ... or when one of these occurs in its subject, predicate or object (ignoring case).
    pub topics: Vec<String>,
    /// Only facts holding at this time (`valid_from <= t < valid_to`).
    pub valid_at: Option<Timestamp>,
    /// Only facts at least this confident.
    pub min_confidence: Option<f64>,
    /// At most this many facts.
    pub limit: Option<usize>,
}

impl FactQuery {
    /// Facts related to `entities` or `topics`; with neither, no fact is related.
    pub fn new(entities: Vec<String>, topics: Vec<String>) -> Self {
        FactQuery {
            entities,
            topics,
            ..FactQuery::default()
        }
    }

    /// Only facts holding at `at`.
    pub fn valid_at(mut self, at: Timestamp) -> Self {
        self.valid_at = Some(at);
        self
    }

    /// Only facts with `confidence >= min`.
    pub fn min_confidence(mut self, min: f64) -> Self {
        self.min_confidence = Some(min);
        self
    }

    /// At most `limit` facts.
    pub fn limit(mut self, limit: usize) -> Self {
        self.limit = Some(limit);
        self
    }

    /// Whether `fact` meets every condition but the limit.
    pub fn matches(&self, fact: &Fact) -> bool {
        let (subject, predicate, object) = (
            lower(&fact.subject),
            lower(&fact.predicate),
            lower(&fact.object),
        );
        let entity = self
            .entities
            .iter()
            .map(|e| lower(e))
            .any(|e| !e.is_empty() && (e == subject || e == object));
        let topic = self.topics.iter().map(|t| lower(t)).any(|t| {
            !t.is_empty() && (subject.contains(&t) || predicate.contains(&t) || object.contains(&t))
        });
        (entity || topic)
            && self
                .valid_at
                .is_none_or(|at| fact.valid_from <= at && fact.valid_to.is_none_or(|to| at < to))
            && self.min_confidence.is_none_or(|min| fact.confidence >= min)
    }

    /// The result of the search over `facts`: the matching ones by confidence (highest
    /// first), then `valid_from` (latest first), then id, cut to the limit.
    pub fn rank(&self, facts: impl IntoIterator<Item = Fact>) -> Vec<Fact> {
        let mut matching: Vec<Fact> = facts.into_iter().filter(|f| self.matches(f)).collect();
        matching.sort_by(|a, b| {
            b.confidence
                .total_cmp(&a.confidence)
                .then(b.valid_from.cmp(&a.valid_from))
                .then_with(|| a.id.cmp(&b.id))
        });
        matching.truncate(self.limit.unwrap_or(usize::MAX));
        matching
    }
}

/// A skill sequence that worked for a task type (procedural memory). At most one exists per
/// (user, task type, skill sequence).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Procedure {
    /// The procedure's id (assigned by the store).
    pub id: String,
    /// The tenant.
    pub tenant: TenantId,
    /// The user.
    pub user: UserId,
    /// The task type.
    pub task_type: String,
    /// The skills, in the order they ran.
    pub skill_sequence: Vec<String>,
    /// The latest successful outcome.
    pub outcome: Value,
    /// How many times it succeeded.
    pub success_count: u64,
    /// When it first succeeded.
    pub created_at: Timestamp,
    /// When it last succeeded.
    pub last_success_at: Timestamp,
}

/// Checks the key of a procedure as [`MemoryStore::record_successful_procedure`] does.
pub fn validate_procedure_key(task_type: &str, skill_sequence: &[String]) -> Result<()> {
    required("task_type", task_type)?;
    if skill_sequence.is_empty() {
        return Err(Error::invalid("skill_sequence", Violation::Empty));
    }
    match skill_sequence.iter().position(String::is_empty) {
        Some(index) => Err(Error::invalid(
            format!("skill_sequence[{index}]"),
            Violation::Empty,
        )),
        None => Ok(()),
    }
}

/// Orders procedures as [`MemoryStore::relevant_procedures`] returns them: most successes
/// first, then most recent success, then id.
pub fn rank_procedures(procedures: &mut [Procedure]) {
    procedures.sort_by(|a, b| {
        (Reverse(a.success_count), Reverse(a.last_success_at), &a.id).cmp(&(
            Reverse(b.success_count),
            Reverse(b.last_success_at),
            &b.id,
        ))
    });
}

/// A user preference: a value per (context, key).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Preference {
    /// The preference's id (assigned by the store, kept across updates).
    pub id: String,
    /// The tenant.
    pub tenant: TenantId,
    /// The user.
    pub user: UserId,
    /// Where it applies (a task type, `general`, ...).
    pub context: String,
    /// What it sets.
    pub key: String,
    /// The value.
    pub value: Value,
    /// When it was first set.
    pub created_at: Timestamp,
    /// When it was last set.
    pub updated_at: Timestamp,
}

/// Checks the key of a preference as [`MemoryStore::set_preference`] does.
pub fn validate_preference_key(context: &str, key: &str) -> Result<()> {
    required("context", context)?;
    required("key", key)
}

/// A user's agent memory.
///
/// ```
/// use skills_store_traits::memory::{EpisodeQuery, FactQuery, NewEpisode, NewFact};
/// use skills_store_traits::{MemoryStore, UserScope, in_memory::InMemoryMemoryStore};
///
/// # futures::executor::block_on(async {
/// let store = InMemoryMemoryStore::new();
/// let alice = UserScope::new("acme", "alice");
/// store
///     .store_episode(&alice, NewEpisode::new("skill_execution", "Executed pdf", "Summarized the Q3 report"))
///     .await?;
/// let found = store.query_episodes(&alice, &EpisodeQuery::new("q3 report").limit(5)).await?;
/// assert_eq!(found.len(), 1);
///
/// store.add_fact(&alice, NewFact::new("Acme", "uses", "Jira", 0.75, "skill_extracted")).await?;
/// let facts = store.related_facts(&alice, &FactQuery::new(vec!["acme".into()], vec![])).await?;
/// assert_eq!(facts[0].object, "Jira");
///
/// let steps = vec!["pdf".to_owned(), "summarize".to_owned()];
/// store.record_successful_procedure(&alice, "report", &steps, serde_json::json!("ok")).await?;
/// let best = store.record_successful_procedure(&alice, "report", &steps, serde_json::json!("ok")).await?;
/// assert_eq!(best.success_count, 2);
/// # Ok::<(), skills_store_traits::Error>(())
/// # }).unwrap();
/// ```
#[async_trait::async_trait]
pub trait MemoryStore: Send + Sync {
    /// Stores an episode (validated by [`NewEpisode::into_episode`]).
    async fn store_episode(&self, scope: &UserScope, episode: NewEpisode) -> Result<Episode>;

    /// The user's episode with this id.
    async fn get_episode(&self, scope: &UserScope, episode_id: &str) -> Result<Option<Episode>>;

    /// The user's episodes as [`EpisodeQuery::rank`] selects and orders them.
    async fn query_episodes(&self, scope: &UserScope, query: &EpisodeQuery)
    -> Result<Vec<Episode>>;

    /// Adds a fact (validated by [`NewFact::into_fact`]).
    async fn add_fact(&self, scope: &UserScope, fact: NewFact) -> Result<Fact>;

    /// The user's fact with this id.
    async fn get_fact(&self, scope: &UserScope, fact_id: &str) -> Result<Option<Fact>>;

    /// The user's facts as [`FactQuery::rank`] selects and orders them.
    async fn related_facts(&self, scope: &UserScope, query: &FactQuery) -> Result<Vec<Fact>>;

    /// Records a success of `skill_sequence` for `task_type`, atomically: creates the
    /// procedure with a count of 1, or adds 1 to its count; either way the outcome and
    /// `last_success_at` become this success's.
    async fn record_successful_procedure(
        &self,
        scope: &UserScope,
        task_type: &str,
        skill_sequence: &[String],
        outcome: Value,
    ) -> Result<Procedure>;

    /// The user's procedures for exactly `task_type`, ordered by [`rank_procedures`].
    async fn relevant_procedures(
        &self,
        scope: &UserScope,
        task_type: &str,
    ) -> Result<Vec<Procedure>>;

    /// Sets the preference (context, key), creating it or replacing its value.
    async fn set_preference(
        &self,
        scope: &UserScope,
        context: &str,
        key: &str,
        value: Value,
    ) -> Result<Preference>;

    /// The user's preferences in `context`, or in every context, by (context, key).
    async fn preferences(
        &self,
        scope: &UserScope,
        context: Option<&str>,
    ) -> Result<Vec<Preference>>;

    /// Deletes the preference (context, key); [`Error::NotFound`] if it is not set.
    async fn delete_preference(&self, scope: &UserScope, context: &str, key: &str) -> Result<()>;
}

#[cfg(test)]
mod tests {
    use super::*;

    fn episode(title: &str, content: &str, at: Timestamp) -> Episode {
        let scope = UserScope::new("t", "u");
        let mut new = NewEpisode::new("e", title, content);
        new.occurred_at = Some(at);
        new.into_episode(&scope, at).unwrap()
    }

    #[test]
    fn episodes_rank_by_terms_then_recency() {
        let old_both = episode("PDF report", "quarterly", 1);
        let new_one = episode("pdf", "", 5);
        let old_one = episode("notes", "a PDF", 2);
        let none = episode("calendar", "", 9);
        let query = EpisodeQuery::new("pdf, Report!");
        assert_eq!(query.terms(), vec!["pdf", "report"]);
        let ranked = query.rank([
            none.clone(),
            old_one.clone(),
            new_one.clone(),
            old_both.clone(),
        ]);
        assert_eq!(ranked, vec![old_both, new_one, old_one]);
        let everything = EpisodeQuery::new("  ")
            .limit(1)
            .rank([ranked[0].clone(), none.clone()]);
        assert_eq!(everything, vec![none]);
    }

    #[test]
    fn facts_are_validated() {
        let scope = UserScope::new("t", "u");
        for confidence in [-0.1, 1.01, f64::NAN, f64::INFINITY] {
            let err = NewFact::new("a", "b", "c", confidence, "s")
                .into_fact(&scope, 0)
                .unwrap_err();
            assert!(matches!(err, Error::Invalid { ref field, .. } if field == "confidence"));
        }
        let mut fact = NewFact::new("a", "b", "c", 1.0, "s");
        fact.valid_to = Some(5);
        let err = fact.clone().into_fact(&scope, 6).unwrap_err();
        assert!(matches!(err, Error::Invalid { ref field, .. } if field == "valid_to"));
        assert!(fact.into_fact(&scope, 5).is_ok());
    }

    #[test]
    fn facts_match_entities_topics_and_validity() {
        let scope = UserScope::new("t", "u");
        let mut new = NewFact::new("Acme Corp", "uses", "Jira", 0.5, "s");
        new.valid_to = Some(10);
        let fact = new.into_fact(&scope, 0).unwrap();
        let q = |e: &[&str], t: &[&str]| {
            FactQuery::new(
                e.iter().map(|s| s.to_string()).collect(),
                t.iter().map(|s| s.to_string()).collect(),
            )
        };
        assert!(q(&["jira"], &[]).matches(&fact));
        assert!(!q(&["acme"], &[]).matches(&fact));
        assert!(q(&[], &["ACME"]).matches(&fact));
        assert!(!q(&[], &[]).matches(&fact));
        assert!(!q(&[""], &[""]).matches(&fact));
        assert!(q(&["jira"], &[]).valid_at(9).matches(&fact));
        assert!(!q(&["jira"], &[]).valid_at(10).matches(&fact));
        assert!(!q(&["jira"], &[]).min_confidence(0.6).matches(&fact));
    }

    #[test]
    fn procedure_keys_are_validated() {
        assert!(validate_procedure_key("t", &["a".into()]).is_ok());
        assert!(validate_procedure_key("", &["a".into()]).is_err());
        assert!(validate_procedure_key("t", &[]).is_err());
        let err = validate_procedure_key("t", &["a".into(), String::new()]).unwrap_err();
        assert!(matches!(err, Error::Invalid { ref field, .. } if field == "skill_sequence[1]"));
    }
}
