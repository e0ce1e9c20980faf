//! What the selector knows about a skill it may pick: id, name, description, tags, trigger
//! phrases and lifecycle status.

use serde::{Deserialize, Serialize};
use skills_catalog::ResolvedSkill;
use skills_core::{Skill, SkillStatus};

/// The metadata key (in SKILL.md `metadata`) whose comma-separated value lists a skill's
/// trigger phrases: `metadata: {triggers: "summarize pdf, extract tables"}`.
pub const TRIGGERS_METADATA_KEY: &str = "triggers";

/// A skill the selector may choose, as far as choosing needs.
///
/// ```
/// use skills_orchestrate::select::SkillCandidate;
///
/// let pdf = SkillCandidate::new("pdf", "Extract text and tables from PDF files.")
///     .tags(["documents"])
///     .triggers(["read a pdf"]);
/// assert_eq!(pdf.name, "pdf");
/// assert_eq!(pdf.triggers, ["read a pdf"]);
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[non_exhaustive]
pub struct SkillCandidate {
    /// The id plans name it by (a slug).
    pub id: String,
    /// Its display name.
    pub name: String,
    /// What it does and when to use it.
    pub description: String,
    /// Tags.
    #[serde(default)]
    pub tags: Vec<String>,
    /// Phrases that, found in a task, call for it (seed 003 `triggers`).
    #[serde(default)]
    pub triggers: Vec<String>,
    /// Its lifecycle status (seed 001); `None` is an active skill. A `deprecated` candidate
    /// is never selected automatically (only by a [`Task::requested_skills`](super::Task)
    /// request naming it); `stub` and `deprecated` ones are marked where skills are listed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<SkillStatus>,
}

fn phrases<I, S>(items: I) -> Vec<String>
where
    I: IntoIterator<Item = S>,
    S: Into<String>,
{
    items
        .into_iter()
        .map(|s| s.into().trim().to_owned())
        .filter(|s| !s.is_empty())
        .collect()
}

impl SkillCandidate {
    /// A candidate whose name is its id, without tags or triggers.
    pub fn new(id: impl Into<String>, description: impl Into<String>) -> Self {
        let id = id.into();
        SkillCandidate {
            name: id.clone(),
            id,
            description: description.into(),
            ..Self::default()
        }
    }

    /// Sets the display name.
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.name = name.into();
        self
    }

    /// Sets the tags (blank ones dropped).
    pub fn tags<I, S>(mut self, tags: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.tags = phrases(tags);
        self
    }

    /// Sets the trigger phrases (blank ones dropped).
    pub fn triggers<I, S>(mut self, triggers: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.triggers = phrases(triggers);
        self
    }

    /// Sets the lifecycle status.
    pub fn status(mut self, status: SkillStatus) -> Self {
        self.status = Some(status);
        self
    }

    /// True when its status is `deprecated`: automatic selection passes it over.
    pub fn is_deprecated(&self) -> bool {
        self.status.is_some_and(SkillStatus::is_deprecated)
    }

    /// A loaded skill: its lowercase name as id, its frontmatter tags, and the trigger phrases
    /// of its [`TRIGGERS_METADATA_KEY`] metadata, and its [status](Skill::status).
    pub fn from_skill(skill: &Skill) -> Self {
        let front = skill.skill_md().map(|md| &md.frontmatter);
        let triggers = front
            .and_then(|f| f.metadata.get(TRIGGERS_METADATA_KEY))
            .map(|list| phrases(list.split(',')))
            .unwrap_or_default();
        SkillCandidate {
            id: skill.name().to_lowercase(),
            name: skill.name().to_owned(),
            description: skill.description().to_owned(),
            tags: front
                .map(|f| phrases(f.tags.iter().cloned()))
                .unwrap_or_default(),
            triggers,
            status: skill.status(),
        }
    }
}

impl From<&ResolvedSkill> for SkillCandidate {
    /// A resolved catalog entry (the store holds no trigger phrases, so none are set).
    fn from(skill: &ResolvedSkill) -> Self {
        SkillCandidate {
            id: skill.id.clone(),
            name: skill.name.clone(),
            description: skill.description.clone(),
            tags: phrases(skill.tags.iter().cloned()),
            triggers: Vec::new(),
            status: skill.status,
        }
    }
}
