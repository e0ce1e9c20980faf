//! The task an agent was given: what the selector, the memory bridge and the orchestrator
//! read (seed 000 sections 2.1 and 2.2: description, goal, context, type, entities, topics).

use serde::{Deserialize, Serialize};

/// A task to run with skills.
///
/// Every field but the description is optional; the memory bridge uses `task_type` to find
/// past procedures and `entities`/`topics` to find facts.
///
/// ```
/// use skills_orchestrate::select::Task;
///
/// let task = Task::new("Research Acme and draft an email")
///     .goal("Book a meeting")
///     .task_type("outreach")
///     .entities(["Acme"]);
/// assert_eq!(task.task_type.as_deref(), Some("outreach"));
/// assert!(task.text().contains("Book a meeting"));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Task {
    /// What to do.
    pub description: String,
    /// Why: the outcome wanted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub goal: Option<String>,
    /// Anything else the agent knows about it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context: Option<String>,
    /// The kind of task (`outreach`, `report`), the key of procedural memory.
    #[serde(default, rename = "type", skip_serializing_if = "Option::is_none")]
    pub task_type: Option<String>,
    /// Entities the task is about (companies, people), the key of semantic memory.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub entities: Vec<String>,
    /// Topics the task is about.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub topics: Vec<String>,
    /// Skills asked for by name (by the user or the host), in the order to run them. When
    /// set, [`SkillSelector::select`](super::SkillSelector::select) chooses exactly these
    /// (a `deprecated` skill too: asking by name is how one is used) instead of choosing.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub requested_skills: Vec<String>,
    /// What to find out before acting (seed 000 section 2.3's `research_query`): when set,
    /// the task needs research, and the OODA loop's observe phase runs the agent's research
    /// skills on it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub research_query: Option<String>,
    /// The files the task works on (relative, `/`-separated). A skill limited to some paths
    /// (Claude Code's `paths`) is chosen automatically only when one of these matches.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub files: Vec<String>,
}

impl Task {
    /// A task with only a description.
    pub fn new(description: impl Into<String>) -> Self {
        Task {
            description: description.into(),
            ..Task::default()
        }
    }

    /// Sets the goal.
    pub fn goal(mut self, goal: impl Into<String>) -> Self {
        self.goal = Some(goal.into());
        self
    }

    /// Sets the context.
    pub fn context(mut self, context: impl Into<String>) -> Self {
        self.context = Some(context.into());
        self
    }

    /// Sets the task type.
    pub fn task_type(mut self, task_type: impl Into<String>) -> Self {
        self.task_type = Some(task_type.into());
        self
    }

    /// Sets the entities.
    pub fn entities<I, S>(mut self, entities: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.entities = entities.into_iter().map(Into::into).collect();
        self
    }

    /// Sets the topics.
    pub fn topics<I, S>(mut self, topics: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.topics = topics.into_iter().map(Into::into).collect();
        self
    }

    /// Asks for these skills by id, in this order (blank ids dropped, repeats kept once).
    pub fn request_skills<I, S>(mut self, skills: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        let mut requested: Vec<String> = Vec::new();
        for skill in skills {
            let skill = skill.into().trim().to_owned();
            if !skill.is_empty() && !requested.contains(&skill) {
                requested.push(skill);
            }
        }
        self.requested_skills = requested;
        self
    }

    /// Sets the files the task works on (blank ones dropped, a leading `./` removed).
    pub fn files<I, S>(mut self, files: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.files = files
            .into_iter()
            .map(|f| {
                let f = f.into();
                f.trim().trim_start_matches("./").to_owned()
            })
            .filter(|f| !f.is_empty())
            .collect();
        self
    }

    /// Sets what to research before acting.
    pub fn research(mut self, query: impl Into<String>) -> Self {
        self.research_query = Some(query.into());
        self
    }

    /// The research query, when the task needs research (set and not blank).
    pub fn needs_research(&self) -> Option<&str> {
        self.research_query
            .as_deref()
            .map(str::trim)
            .filter(|q| !q.is_empty())
    }

    /// Description, goal and context, one per line: the text skills are matched against.
    pub fn text(&self) -> String {
        [
            Some(self.description.as_str()),
            self.goal.as_deref(),
            self.context.as_deref(),
        ]
        .into_iter()
        .flatten()
        .filter(|part| !part.trim().is_empty())
        .collect::<Vec<_>>()
        .join("\n")
    }
}
