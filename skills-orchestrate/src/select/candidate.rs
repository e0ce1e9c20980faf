//! What the selector knows about a skill it may pick: id, name, description, tags, trigger
//! phrases, lifecycle status and category.

use serde::{Deserialize, Serialize};
use skills_catalog::ResolvedSkill;
use skills_core::{Skill, SkillStatus};

/// The metadata key (in SKILL.md `metadata`) whose comma-separated value lists a skill's
/// trigger phrases: `metadata: {triggers: "summarize pdf, extract tables"}`.
pub const TRIGGERS_METADATA_KEY: &str = "triggers";

/// The category (or tag) that declares a skill a research skill: one the OODA loop may run
/// while observing, to gather information before it decides (seed 000 section 2.3). Skills
/// say so themselves (`category: research` or a `research` tag in SKILL.md, or the stored
/// category), so the set is not a list of names in the code.
pub const RESEARCH_CATEGORY: &str = "research";

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
    /// Its category (SKILL.md's `category` extension, or the stored skill's), if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub category: Option<String>,
    /// The skill asks to be invoked only by name, never chosen by the model (Claude Code's
    /// `disable-model-invocation: true`, Codex's `allow_implicit_invocation: false`):
    /// automatic selection passes it over, as it does a deprecated one; a
    /// [`Task::requested_skills`](super::Task) request naming it still runs it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub manual_only: bool,
    /// Globs of the files the skill applies to (Claude Code's `paths`); empty: everywhere.
    /// Automatic selection chooses a limited skill only for a task whose
    /// [`Task::files`](super::Task) match; a request naming it still runs it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub paths: Vec<String>,
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

    /// Marks the skill as invoked only by name (see [`manual_only`](Self::manual_only)).
    pub fn manual_only(mut self, manual_only: bool) -> Self {
        self.manual_only = manual_only;
        self
    }

    /// Whether automatic selection (the model or the fallback) may choose it: neither
    /// deprecated nor invoked only by name.
    pub fn auto_selectable(&self) -> bool {
        !self.is_deprecated() && !self.manual_only
    }

    /// Limits the skill to files matching `globs` (see [`paths`](Self::paths); blank ones
    /// dropped).
    pub fn paths<I, S>(mut self, globs: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.paths = phrases(globs);
        self
    }

    /// Whether the skill applies to a task working on `files`: always without
    /// [`paths`](Self::paths), else when one of the files matches one of them.
    pub fn applies_to_files(&self, files: &[String]) -> bool {
        skills_core::extensions::paths_apply(&self.paths, files)
    }

    /// Whether automatic selection may choose it for `task`: [auto-selectable](Self::auto_selectable)
    /// and [applying](Self::applies_to_files) to the task's files.
    pub fn auto_selectable_for(&self, task: &super::Task) -> bool {
        self.auto_selectable() && self.applies_to_files(&task.files)
    }

    /// Sets the category (a blank one clears it).
    pub fn category(mut self, category: impl Into<String>) -> Self {
        let category = category.into().trim().to_owned();
        self.category = (!category.is_empty()).then_some(category);
        self
    }

    /// Whether the skill declares itself a research skill: its category or one of its tags
    /// is [`RESEARCH_CATEGORY`] (ASCII case ignored).
    ///
    /// ```
    /// use skills_orchestrate::select::SkillCandidate;
    ///
    /// assert!(SkillCandidate::new("pubmed", "Search PubMed").category("Research").is_research());
    /// assert!(SkillCandidate::new("news", "Gather news").tags(["research", "news"]).is_research());
    /// assert!(!SkillCandidate::new("pdf", "Read PDFs").tags(["documents"]).is_research());
    /// ```
    pub fn is_research(&self) -> bool {
        self.category
            .iter()
            .chain(&self.tags)
            .any(|word| word.eq_ignore_ascii_case(RESEARCH_CATEGORY))
    }

    /// A loaded skill: its lowercase name as id, its frontmatter tags and category, the
    /// trigger phrases of its [`TRIGGERS_METADATA_KEY`] metadata, and its [status](Skill::status).
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
            manual_only: !skill.model_invocable(),
            paths: front
                .map(|f| phrases(f.claude_code().paths))
                .unwrap_or_default(),
            category: front
                .and_then(|f| f.category.as_deref())
                .map(str::trim)
                .filter(|c| !c.is_empty())
                .map(str::to_owned),
        }
    }
}

impl From<&ResolvedSkill> for SkillCandidate {
    /// A resolved catalog entry, with its category (the store holds no trigger phrases, so
    /// none are set).
    fn from(skill: &ResolvedSkill) -> Self {
        SkillCandidate {
            id: skill.id.clone(),
            name: skill.name.clone(),
            description: skill.description.clone(),
            tags: phrases(skill.tags.iter().cloned()),
            triggers: Vec::new(),
            status: skill.status,
            category: Some(skill.category.trim().to_owned()).filter(|c| !c.is_empty()),
            manual_only: !skill.model_invocable,
            paths: Vec::new(),
        }
    }
}
