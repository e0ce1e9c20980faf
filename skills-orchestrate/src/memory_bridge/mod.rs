//! The memory bridge of seed 000 section 2.2: what a skill may know from the user's memory
//! (episodes, facts, procedures, preferences), and what a run teaches it afterwards.
//!
//! Threat: memory is the user's own data; a skill below the data's class must not see it (a
//! community skill reading the user's facts), and memory text must not smuggle values past
//! the sanitizer. Guarantee: every item goes through the skill execution's
//! [`Execution`] (the trust matrix of `skills-security`) as text from the source
//! `memory_episodic`, `memory_semantic`, `memory_procedural` or `memory_preferences`; what the
//! skill may not see is tokenized or redacted exactly as its input would be, and an item left
//! with nothing but one token is withheld (counted, not sent); [`MemoryBridge::context_for`],
//! which sanitizes in a vault of its own, withholds every item the skill may not see in
//! full. With the default source rules
//! memory is internal, so community skills receive no memory at all and verified or user
//! skills receive none of its confidential findings (e-mail addresses, phone numbers...).
//! Hosts classify a source higher with a `SourceRule` on the sanitizer's classifier.
//!
//! Besides a run's learnings the bridge records what each OODA iteration did
//! ([`MemoryBridge::record_action_outcome`], the seed's `record_action_outcome`) and reads
//! back the orchestrator context sizes runs recorded ([`MemoryBridge::context_sizes`]).

use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use skills_security::{Context, DataAccess, DataClass, Execution, Sanitizer, TrustLevel};
use skills_store_traits::memory::{EpisodeQuery, FactQuery, NewEpisode, NewFact, Procedure};
use skills_store_traits::{Clock, MemoryStore, SystemClock, UserScope};

use crate::error::Result;
pub use crate::execute::ExtractedFact;
use crate::select::Task;

mod outcomes;

pub use outcomes::{ACTION_EVENT_TYPE, ActionOutcome, CONTEXT_TOKENS_KEY};

/// The source names memory items are classified under.
pub const MEMORY_SOURCES: [&str; 4] = [
    "memory_episodic",
    "memory_semantic",
    "memory_procedural",
    "memory_preferences",
];

/// The confidence of a fact a skill extracted (the seed's 0.75).
pub const SKILL_FACT_CONFIDENCE: f64 = 0.75;
/// The source recorded on such facts.
pub const SKILL_FACT_SOURCE: &str = "skill_extracted";
/// The event type of a run's episode.
pub const RUN_EVENT_TYPE: &str = "skill_execution";

/// How much memory a skill is offered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct MemoryLimits {
    /// Episodes (default 5, the seed's).
    pub episodes: usize,
    /// Facts (default 10).
    pub facts: usize,
    /// Procedures (default 3).
    pub procedures: usize,
    /// Preferences (default 20).
    pub preferences: usize,
}

impl Default for MemoryLimits {
    fn default() -> Self {
        MemoryLimits {
            episodes: 5,
            facts: 10,
            procedures: 3,
            preferences: 20,
        }
    }
}

/// What a skill is told from memory, each item one sanitized line.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[non_exhaustive]
pub struct SkillMemoryContext {
    /// Past events related to the task (episodic).
    pub relevant_history: Vec<String>,
    /// Facts about the task's entities and topics (semantic).
    pub known_facts: Vec<String>,
    /// Skill sequences that worked for this task type (procedural).
    pub recommended_approach: Vec<String>,
    /// The user's preferences for this task type and in general.
    pub user_preferences: Vec<String>,
    /// Items withheld because the skill may see nothing of them.
    pub withheld: usize,
}

impl SkillMemoryContext {
    /// Whether there is nothing to tell.
    pub fn is_empty(&self) -> bool {
        self.relevant_history.is_empty()
            && self.known_facts.is_empty()
            && self.recommended_approach.is_empty()
            && self.user_preferences.is_empty()
    }

    /// The seed's dictionary shape: `relevant_history`, `known_facts`,
    /// `recommended_approach`, `user_preferences`.
    pub fn to_json(&self) -> Value {
        json!({
            "relevant_history": self.relevant_history,
            "known_facts": self.known_facts,
            "recommended_approach": self.recommended_approach,
            "user_preferences": self.user_preferences,
        })
    }
}

/// What a finished run teaches (the seed's `SkillExecution` as `store_skill_learnings`
/// reads it).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct RunLearnings {
    /// The task.
    pub task: Task,
    /// The plan that ran.
    pub plan_id: String,
    /// What happened, for the episode.
    pub summary: String,
    /// Whether every step succeeded.
    pub success: bool,
    /// The skills that ran successfully, in order.
    pub skills_used: Vec<String>,
    /// Facts the steps extracted.
    pub extracted_facts: Vec<ExtractedFact>,
    /// The outcome recorded with the procedure.
    pub outcome: Value,
    /// The highest class of what the run's steps were given: stored with the episode and
    /// the facts, so a later run reads them at least at that class (default `internal`,
    /// the class of data nothing else marks; the orchestrator sets it from working memory).
    #[serde(default = "internal")]
    pub data_class: DataClass,
    /// The size in tokens of the orchestrator context for the run (the synthesis measures
    /// it), kept with the episode so seed 000 part 8's context overhead can be read back
    /// ([`MemoryBridge::context_sizes`]).
    #[serde(default)]
    pub context_tokens: Option<usize>,
}

fn internal() -> DataClass {
    DataClass::Internal
}

impl RunLearnings {
    /// Learnings of a run of `plan_id` for `task`.
    pub fn new(
        task: Task,
        plan_id: impl Into<String>,
        summary: impl Into<String>,
        success: bool,
    ) -> Self {
        RunLearnings {
            task,
            plan_id: plan_id.into(),
            summary: summary.into(),
            success,
            skills_used: Vec::new(),
            extracted_facts: Vec::new(),
            outcome: Value::Null,
            data_class: DataClass::Internal,
            context_tokens: None,
        }
    }

    /// Sets the size of the run's orchestrator context, in tokens.
    pub fn context_tokens(mut self, tokens: Option<usize>) -> Self {
        self.context_tokens = tokens;
        self
    }

    /// Sets the highest class of what the run's steps were given.
    pub fn data_class(mut self, class: DataClass) -> Self {
        self.data_class = class;
        self
    }

    /// Sets the skills used, in order.
    pub fn skills_used<I, S>(mut self, skills: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.skills_used = skills.into_iter().map(Into::into).collect();
        self
    }

    /// Sets the extracted facts.
    pub fn extracted_facts(mut self, facts: Vec<ExtractedFact>) -> Self {
        self.extracted_facts = facts;
        self
    }

    /// Sets the outcome.
    pub fn outcome(mut self, outcome: Value) -> Self {
        self.outcome = outcome;
        self
    }
}

/// What [`MemoryBridge::store_learnings`] stored.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct StoredLearnings {
    /// The run's episode.
    pub episode_id: String,
    /// The facts added.
    pub fact_ids: Vec<String>,
    /// The procedure recorded (successful runs with a task type and at least one skill).
    pub procedure: Option<Procedure>,
}

/// Connects skills to the user's memory.
///
/// ```
/// use std::sync::Arc;
/// use skills_orchestrate::memory_bridge::{MemoryBridge, RunLearnings};
/// use skills_orchestrate::select::Task;
/// use skills_security::TrustLevel;
/// use skills_store_traits::{UserScope, in_memory::InMemoryMemoryStore};
///
/// # futures::executor::block_on(async {
/// let bridge = MemoryBridge::new(Arc::new(InMemoryMemoryStore::new()));
/// let alice = UserScope::new("acme", "alice");
/// let task = Task::new("Summarize the Q3 report").task_type("report");
/// let run = RunLearnings::new(task.clone(), "plan-1", "Summarized the Q3 report", true).skills_used(["pdf"]);
/// bridge.store_learnings(&alice, &run).await?;
///
/// let (core, _) = bridge.context_for(&alice, &task, "exec-1", TrustLevel::Core).await?;
/// assert_eq!(core.recommended_approach, ["for report: pdf (succeeded 1 time)"]);
/// let (community, _) = bridge.context_for(&alice, &task, "exec-2", TrustLevel::Community).await?;
/// assert!(community.is_empty() && community.withheld > 0);
/// # Ok::<(), skills_orchestrate::Error>(())
/// # }).unwrap();
/// ```
#[derive(Clone)]
pub struct MemoryBridge {
    store: Arc<dyn MemoryStore>,
    sanitizer: Sanitizer,
    limits: MemoryLimits,
    clock: Arc<dyn Clock>,
}

impl std::fmt::Debug for MemoryBridge {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MemoryBridge")
            .field("limits", &self.limits)
            .finish_non_exhaustive()
    }
}

/// Whether sanitizing left nothing of `original` but one token or redaction marker.
fn nothing_left(original: &str, sanitized: &str) -> bool {
    let s = sanitized.trim();
    s != original.trim() && s.starts_with('[') && s.ends_with(']') && s[1..].find('[').is_none()
}

impl MemoryBridge {
    /// A bridge over `store`, with the default sanitizer, limits and the system clock.
    pub fn new(store: Arc<dyn MemoryStore>) -> Self {
        MemoryBridge {
            store,
            sanitizer: Sanitizer::default(),
            limits: MemoryLimits::default(),
            clock: Arc::new(SystemClock),
        }
    }

    /// Uses `sanitizer` for [`MemoryBridge::context_for`].
    pub fn sanitizer(mut self, sanitizer: Sanitizer) -> Self {
        self.sanitizer = sanitizer;
        self
    }

    /// Sets the limits.
    pub fn limits(mut self, limits: MemoryLimits) -> Self {
        self.limits = limits;
        self
    }

    /// Uses `clock` (facts are those holding now).
    pub fn clock(mut self, clock: Arc<dyn Clock>) -> Self {
        self.clock = clock;
        self
    }

    /// The memory context for one skill execution, sanitized by `execution` (so tokens it
    /// issues can be restored from that execution's output); an item left with nothing but
    /// one token is withheld.
    pub async fn context_for_skill(
        &self,
        scope: &UserScope,
        task: &Task,
        execution: &mut Execution<'_>,
    ) -> Result<SkillMemoryContext> {
        self.gather(scope, task, execution, false).await
    }

    async fn gather(
        &self,
        scope: &UserScope,
        task: &Task,
        execution: &mut Execution<'_>,
        withhold_partial: bool,
    ) -> Result<SkillMemoryContext> {
        let mut out = SkillMemoryContext::default();
        let mut keep = |lines: Vec<(String, Option<DataClass>)>,
                        source: &str,
                        withheld: &mut usize|
         -> Vec<String> {
            lines
                .into_iter()
                .filter_map(|(line, class)| {
                    // Learned from data of a class: read back at least at that class.
                    let mut context = Context::source(source);
                    if let Some(class) = class {
                        context = context.at_least(class);
                    }
                    let sanitized = execution.sanitize_text(&line, &context).text;
                    let hidden = if withhold_partial {
                        sanitized != line
                    } else {
                        nothing_left(&line, &sanitized)
                    };
                    if hidden {
                        *withheld += 1;
                        None
                    } else {
                        Some(sanitized)
                    }
                })
                .collect()
        };

        let episodes = self
            .store
            .query_episodes(
                scope,
                &EpisodeQuery::new(task.description.clone()).limit(self.limits.episodes),
            )
            .await?;
        let lines = episodes
            .iter()
            .map(|e| {
                let line = if e.content.is_empty() {
                    e.title.clone()
                } else {
                    format!("{}: {}", e.title, e.content)
                };
                let class = e
                    .context
                    .get("data_class")
                    .and_then(Value::as_str)
                    .and_then(DataClass::parse);
                (line, class)
            })
            .collect();
        out.relevant_history = keep(lines, MEMORY_SOURCES[0], &mut out.withheld);

        let query = FactQuery::new(task.entities.clone(), task.topics.clone())
            .valid_at(self.clock.now())
            .limit(self.limits.facts);
        let facts = self.store.related_facts(scope, &query).await?;
        let lines = facts
            .iter()
            .map(|f| {
                let line = format!("{} {} {}", f.subject, f.predicate, f.object);
                (line, fact_class(&f.source))
            })
            .collect();
        out.known_facts = keep(lines, MEMORY_SOURCES[1], &mut out.withheld);

        if let Some(task_type) = task.task_type.as_deref().filter(|t| !t.is_empty()) {
            let mut procedures = self.store.relevant_procedures(scope, task_type).await?;
            procedures.truncate(self.limits.procedures);
            let lines = procedures
                .iter()
                .map(|p| {
                    let times = if p.success_count == 1 {
                        "time"
                    } else {
                        "times"
                    };
                    let line = format!(
                        "for {}: {} (succeeded {} {times})",
                        p.task_type,
                        p.skill_sequence.join(" -> "),
                        p.success_count
                    );
                    (line, None)
                })
                .collect();
            out.recommended_approach = keep(lines, MEMORY_SOURCES[2], &mut out.withheld);
        }

        let mut preferences = self.store.preferences(scope, Some("general")).await?;
        if let Some(task_type) = task
            .task_type
            .as_deref()
            .filter(|t| !t.is_empty() && *t != "general")
        {
            preferences.extend(self.store.preferences(scope, Some(task_type)).await?);
        }
        preferences.truncate(self.limits.preferences);
        let lines = preferences
            .iter()
            .map(|p| {
                let value = p
                    .value
                    .as_str()
                    .map(str::to_owned)
                    .unwrap_or_else(|| p.value.to_string());
                (format!("{}.{} = {value}", p.context, p.key), None)
            })
            .collect();
        out.user_preferences = keep(lines, MEMORY_SOURCES[3], &mut out.withheld);
        Ok(out)
    }

    /// The memory context for a skill of `trust` in an execution of its own (`execution_id`),
    /// with what its sanitization contributes to the audit record. Tokens from this private
    /// vault could never be restored (and would read as forged tokens in a skill's output),
    /// so here every item the skill may not see in full is withheld; use
    /// [`MemoryBridge::context_for_skill`] to sanitize in the skill's own execution instead.
    pub async fn context_for(
        &self,
        scope: &UserScope,
        task: &Task,
        execution_id: &str,
        trust: TrustLevel,
    ) -> Result<(SkillMemoryContext, DataAccess)> {
        let mut execution = self.sanitizer.begin(execution_id, trust, None)?;
        let context = self.gather(scope, task, &mut execution, true).await?;
        Ok((context, execution.audit()))
    }

    /// Stores what a run teaches: an episode of the run, the facts its steps extracted (at
    /// confidence [`SKILL_FACT_CONFIDENCE`]), and, when it succeeded and the task has a type,
    /// the skill sequence as a successful procedure.
    pub async fn store_learnings(
        &self,
        scope: &UserScope,
        run: &RunLearnings,
    ) -> Result<StoredLearnings> {
        let title = if run.skills_used.is_empty() {
            "Executed no skill".to_owned()
        } else {
            format!("Executed {}", run.skills_used.join(", "))
        };
        let mut episode = NewEpisode::new(RUN_EVENT_TYPE, title, run.summary.clone());
        episode.context = json!({
            "plan_id": run.plan_id,
            "skills": run.skills_used,
            "task": run.task,
            "success": run.success,
            "data_class": run.data_class.as_str(),
            CONTEXT_TOKENS_KEY: run.context_tokens,
        });
        let episode = self.store.store_episode(scope, episode).await?;
        let mut fact_ids = Vec::new();
        for fact in &run.extracted_facts {
            let new = NewFact::new(
                fact.subject.clone(),
                fact.predicate.clone(),
                fact.object.clone(),
                SKILL_FACT_CONFIDENCE,
                fact_source(run.data_class),
            );
            fact_ids.push(self.store.add_fact(scope, new).await?.id);
        }
        let procedure = match run.task.task_type.as_deref() {
            Some(task_type)
                if run.success && !task_type.is_empty() && !run.skills_used.is_empty() =>
            {
                Some(
                    self.store
                        .record_successful_procedure(
                            scope,
                            task_type,
                            &run.skills_used,
                            run.outcome.clone(),
                        )
                        .await?,
                )
            }
            _ => None,
        };
        Ok(StoredLearnings {
            episode_id: episode.id,
            fact_ids,
            procedure,
        })
    }
}

/// The source a fact learned from data of `class` is stored under: [`SKILL_FACT_SOURCE`],
/// with `#<class>` appended above `internal` (facts carry no other field to keep it in).
pub fn fact_source(class: DataClass) -> String {
    if class > DataClass::Internal {
        format!("{SKILL_FACT_SOURCE}#{class}")
    } else {
        SKILL_FACT_SOURCE.to_owned()
    }
}

/// The class a fact's source records, if any (see [`fact_source`]).
fn fact_class(source: &str) -> Option<DataClass> {
    source
        .strip_prefix(SKILL_FACT_SOURCE)?
        .strip_prefix('#')
        .and_then(DataClass::parse)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fact_sources_keep_the_class_above_internal() {
        assert_eq!(fact_source(DataClass::Internal), SKILL_FACT_SOURCE);
        assert_eq!(fact_class(&fact_source(DataClass::Internal)), None);
        for class in [
            DataClass::Confidential,
            DataClass::Restricted,
            DataClass::Regulated,
        ] {
            assert_eq!(fact_class(&fact_source(class)), Some(class));
        }
        assert_eq!(fact_class("user_said#restricted"), None);
    }

    #[test]
    fn only_a_lone_token_counts_as_nothing_left() {
        assert!(nothing_left("Acme uses Jira", "[GENERAL_001]"));
        assert!(nothing_left("a b", "[REDACTED: SSN]"));
        assert!(!nothing_left("mail [x]", "mail [x]"));
        assert!(!nothing_left("mail bob@x.io", "mail [EMAIL_001]"));
        assert!(!nothing_left("a", "[A_001] and [B_001]"));
    }
}
