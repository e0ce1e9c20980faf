//! What the OODA loop's act phase records after each iteration (seed 000 section 2.3's
//! `record_action_outcome`), and reading back the orchestrator context sizes runs recorded
//! (seed 000 part 8's context overhead).
//!
//! An action outcome is an episode of [`ACTION_EVENT_TYPE`] in the user's memory: its title
//! names the iteration and the action, its content how it went, and its context holds the
//! goal id, the goal, the iteration, the action, the result and the class of the data the
//! action's steps were given (so a later reader treats it at least at that class, as with a
//! run's own episode). Nothing of a step's output is in it: step states, not summaries.

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use skills_security::DataClass;
use skills_store_traits::UserScope;
use skills_store_traits::memory::{Episode, EpisodeQuery, NewEpisode};

use super::{MemoryBridge, RUN_EVENT_TYPE};
use crate::error::Result;
use crate::select::Task;

/// The event type of an OODA iteration's action outcome.
pub const ACTION_EVENT_TYPE: &str = "action_outcome";

/// The key, in a run's episode context, of the orchestrator context's size in tokens.
pub const CONTEXT_TOKENS_KEY: &str = "context_tokens";

/// What one iteration of a goal did and how it went.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ActionOutcome {
    /// The goal the loop pursues (stable over its iterations).
    pub goal_id: String,
    /// The goal.
    pub goal: Task,
    /// The iteration, from 1.
    pub iteration: usize,
    /// What was done, in one line (`run plan p-1: crm-lookup`, `answer without skills`).
    pub action: String,
    /// How it went, in one line (the run's message).
    pub result: String,
    /// Whether the action reached its goal.
    pub success: bool,
    /// The action and result as structured data (plan id, skills, confidence, step states).
    pub details: Value,
    /// The highest class of the data the action's steps were given (at least `internal`).
    pub data_class: DataClass,
}

impl ActionOutcome {
    /// The outcome of `iteration` of `goal_id`, with no details, internal data.
    pub fn new(
        goal_id: impl Into<String>,
        goal: Task,
        iteration: usize,
        action: impl Into<String>,
        result: impl Into<String>,
        success: bool,
    ) -> Self {
        ActionOutcome {
            goal_id: goal_id.into(),
            goal,
            iteration,
            action: action.into(),
            result: result.into(),
            success,
            details: Value::Null,
            data_class: DataClass::Internal,
        }
    }

    /// Sets the structured details.
    pub fn details(mut self, details: Value) -> Self {
        self.details = details;
        self
    }

    /// Sets the class of the data the action's steps were given (never below `internal`).
    pub fn data_class(mut self, class: DataClass) -> Self {
        self.data_class = class.max(DataClass::Internal);
        self
    }
}

impl MemoryBridge {
    /// Records `outcome` as an episode of [`ACTION_EVENT_TYPE`] (see the module docs) and
    /// returns it.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use skills_orchestrate::memory_bridge::{ACTION_EVENT_TYPE, ActionOutcome, MemoryBridge};
    /// use skills_orchestrate::select::Task;
    /// use skills_store_traits::{UserScope, in_memory::InMemoryMemoryStore};
    ///
    /// # futures::executor::block_on(async {
    /// let bridge = MemoryBridge::new(Arc::new(InMemoryMemoryStore::new()));
    /// let outcome = ActionOutcome::new("goal-7", Task::new("Check filings"), 2, "run plan p-1: monitor", "Completed all 1 steps", true);
    /// let episode = bridge.record_action_outcome(&UserScope::new("acme", "alice"), &outcome).await?;
    /// assert_eq!(episode.event_type, ACTION_EVENT_TYPE);
    /// assert_eq!(episode.title, "Iteration 2: run plan p-1: monitor");
    /// assert_eq!(episode.context["goal_id"], "goal-7");
    /// # Ok::<(), skills_orchestrate::Error>(())
    /// # }).unwrap();
    /// ```
    pub async fn record_action_outcome(
        &self,
        scope: &UserScope,
        outcome: &ActionOutcome,
    ) -> Result<Episode> {
        let mut episode = NewEpisode::new(
            ACTION_EVENT_TYPE,
            format!("Iteration {}: {}", outcome.iteration, outcome.action),
            outcome.result.clone(),
        );
        episode.context = json!({
            "goal_id": outcome.goal_id,
            "goal": outcome.goal,
            "iteration": outcome.iteration,
            "action": outcome.action,
            "result": outcome.result,
            "success": outcome.success,
            "details": outcome.details,
            "data_class": outcome.data_class.as_str(),
        });
        Ok(self.store.store_episode(scope, episode).await?)
    }

    /// The orchestrator context sizes (tokens) the user's latest `limit` runs recorded with
    /// their episodes, newest first; runs that recorded none are left out. Feed them to
    /// `skills_security::audit::SuccessMetrics::with_context_sizes`.
    pub async fn context_sizes(&self, scope: &UserScope, limit: usize) -> Result<Vec<u64>> {
        let query = EpisodeQuery::new("")
            .event_type(RUN_EVENT_TYPE)
            .limit(limit);
        let episodes = self.store.query_episodes(scope, &query).await?;
        Ok(episodes
            .iter()
            .filter_map(|e| e.context.get(CONTEXT_TOKENS_KEY).and_then(Value::as_u64))
            .collect())
    }
}
