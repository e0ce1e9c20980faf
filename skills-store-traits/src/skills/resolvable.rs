//! What resolving an agent's skills reads ([`SkillStore::resolvable_skills`]): of each
//! skill reaching the agent only the fields the resolver lists, of its files only the path
//! and type (and the text of `skill.json`, which may declare a status and a layer), and of
//! its assignments only the highest priority and whether any asks for auto-injection.
//!
//! Why a projection: reading whole records ([`SkillStore::assignments_for_agent_with_files`])
//! cost the SQL backends most of a resolution (every column of each skill, assignment and
//! file decoded; on PostgreSQL every JSON document rendered as text by the server and
//! parsed by the client) for a few fields of each. [`resolvable_from`] derives this shape
//! from the full read: it is the trait's default and the reference the conformance suite
//! holds every backend's own answer to.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{AgentSkills, SkillFileRecord, SkillRecord, SkillSourceKind};

/// The path of the file whose text a [`ResolvableSkill`] carries as its
/// [`manifest`](ResolvableSkill::manifest) (`skills_core::SKILL_JSON`).
pub const MANIFEST_PATH: &str = skills_core::SKILL_JSON;

/// One enabled skill that at least one enabled assignment reaching an agent attaches, with
/// what resolving it reads. Every field is the stored skill's field of the same name unless
/// said otherwise.
///
/// Built by backends in other crates with [`ResolvableSkill::new`] and field assignment
/// (the type is `#[non_exhaustive]`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ResolvableSkill {
    /// The record id.
    pub id: String,
    /// The slug.
    pub slug: String,
    /// The name.
    pub name: String,
    /// The description.
    pub description: Option<String>,
    /// The category.
    pub category: String,
    /// Admin or plugin.
    pub source_kind: SkillSourceKind,
    /// The contributing plugin.
    pub plugin_id: Option<String>,
    /// The full `SKILL.md` text (the resolver reads its frontmatter).
    pub content: String,
    /// Whether the record is marked a directory skill (the resolver also counts any file).
    pub is_directory: bool,
    /// The version.
    pub version: Option<String>,
    /// The tags.
    pub tags: Vec<String>,
    /// The tools it expects.
    pub requires_tools: Vec<String>,
    /// The trust level.
    pub trust_level: Option<String>,
    /// The value of the metadata's `status` key, when the metadata has that key (any JSON
    /// value, `null` included: a present key is not looked up in `skill.json`).
    pub metadata_status: Option<Value>,
    /// The value of the metadata's `layer` key, when present (as `metadata_status`).
    pub metadata_layer: Option<Value>,
    /// The highest priority among the enabled assignments reaching the agent.
    pub priority: i64,
    /// Whether any of those assignments asks for the description in the prompt.
    pub auto_inject: bool,
    /// Every supporting file, ordered by path (bytewise), as
    /// [`list_skill_files`](super::SkillStore::list_skill_files) orders them.
    pub files: Vec<ResolvableFile>,
    /// The text of the file at [`MANIFEST_PATH`], when the skill has one.
    pub manifest: Option<String>,
}

impl ResolvableSkill {
    /// An admin skill with this id and slug, every other field empty, for backends to fill
    /// in field by field.
    pub fn new(id: impl Into<String>, slug: impl Into<String>) -> Self {
        ResolvableSkill {
            id: id.into(),
            slug: slug.into(),
            name: String::new(),
            description: None,
            category: String::new(),
            source_kind: SkillSourceKind::Admin,
            plugin_id: None,
            content: String::new(),
            is_directory: false,
            version: None,
            tags: Vec::new(),
            requires_tools: Vec::new(),
            trust_level: None,
            metadata_status: None,
            metadata_layer: None,
            priority: 0,
            auto_inject: false,
            files: Vec::new(),
            manifest: None,
        }
    }

    /// The skill's own fields from its record (not the assignment fields, files or
    /// manifest, which start empty): what every backend copies.
    pub fn of_record(skill: &SkillRecord) -> Self {
        ResolvableSkill {
            name: skill.name.clone(),
            description: skill.description.clone(),
            category: skill.category.clone(),
            source_kind: skill.source_kind,
            plugin_id: skill.plugin_id.clone(),
            content: skill.content.clone(),
            is_directory: skill.is_directory,
            version: skill.version.clone(),
            tags: skill.tags.clone(),
            requires_tools: skill.requires_tools.clone(),
            trust_level: skill.trust_level.clone(),
            metadata_status: skill.metadata.get("status").cloned(),
            metadata_layer: skill.metadata.get("layer").cloned(),
            ..ResolvableSkill::new(skill.id.clone(), skill.slug.clone())
        }
    }

    /// Adds a file (in path order); the text of [`MANIFEST_PATH`] becomes the manifest.
    pub fn push_file(&mut self, file: &SkillFileRecord) {
        if file.relative_path == MANIFEST_PATH {
            self.manifest = Some(file.content.clone());
        }
        self.files.push(ResolvableFile::new(
            file.relative_path.clone(),
            file.content_type.clone(),
        ));
    }
}

/// A supporting file as resolving lists it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ResolvableFile {
    /// The `/`-separated path under the skill directory.
    pub relative_path: String,
    /// The MIME type.
    pub content_type: String,
}

impl ResolvableFile {
    /// A file entry.
    pub fn new(relative_path: impl Into<String>, content_type: impl Into<String>) -> Self {
        ResolvableFile {
            relative_path: relative_path.into(),
            content_type: content_type.into(),
        }
    }
}

/// The resolvable skills of a full read: enabled assignments of enabled skills grouped by
/// skill (highest priority, any auto-inject), each with its files, ordered by slug. The
/// trait's default, and what every backend's own answer must equal.
pub fn resolvable_from(read: &AgentSkills) -> Vec<ResolvableSkill> {
    let mut by_id: HashMap<&str, ResolvableSkill> = HashMap::new();
    for item in &read.assigned {
        if !(item.assignment.enabled && item.skill.enabled) {
            continue;
        }
        let entry = by_id.entry(item.skill.id.as_str()).or_insert_with(|| {
            let mut skill = ResolvableSkill::of_record(&item.skill);
            skill.priority = item.assignment.priority;
            skill
        });
        entry.priority = entry.priority.max(item.assignment.priority);
        entry.auto_inject |= item.assignment.auto_inject;
    }
    let mut skills: Vec<ResolvableSkill> = by_id
        .into_iter()
        .map(|(id, mut skill)| {
            for file in read.files.get(id).into_iter().flatten() {
                skill.push_file(file);
            }
            skill
        })
        .collect();
    sort_by_slug(&mut skills);
    skills
}

/// The order of [`SkillStore::resolvable_skills`](super::SkillStore::resolvable_skills):
/// by slug, bytewise (slugs are unique in a tenant, so the order is total).
pub fn sort_by_slug(skills: &mut [ResolvableSkill]) {
    skills.sort_unstable_by(|a, b| a.slug.cmp(&b.slug));
}
