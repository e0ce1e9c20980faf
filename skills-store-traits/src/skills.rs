//! Skills, their supporting files and their assignments (seed 002 sections 2, 6 and 7).
//!
//! The store is the source of truth for skill content: `SKILL.md` is the record's
//! [`content`](SkillRecord::content) and each supporting file a [`SkillFileRecord`]. Every
//! write is validated by the store itself (see [`crate::validate`]), slugs are unique per
//! tenant, and a skill has at most one assignment per scope and scope id. Deleting a skill
//! deletes its files and assignments in the same step (seed 002 sections 3.2 and 17.12).

use std::collections::BTreeMap;

use async_trait::async_trait;
use serde::{Deserialize, Serialize};

use crate::error::Result;
use crate::tenancy::TenantId;
use crate::time::Timestamp;

mod batch;
mod resolvable;
mod stamped;

pub use batch::{AgentSkills, agent_skills_in_two_calls, assigned_skill_ids, files_one_by_one};
pub use resolvable::{
    MANIFEST_PATH, ResolvableFile, ResolvableSkill, resolvable_from, sort_by_slug,
};
pub use stamped::{
    DEFAULT_PROJECTION_BUDGET, Lookup, ReachedSkill, ReachingAssignment, StampedProjections,
    StampedRows, group_reached,
};

/// The trust levels a stored skill may carry (seed 000 section 1.3).
pub const TRUST_LEVELS: &[&str] = &["core", "verified", "community", "user"];

/// The predefined categories (seed 002 section 14.1); `custom` is for everything else.
pub const SKILL_CATEGORIES: &[&str] = &[
    "general", "coding", "ops", "writing", "research", "design", "testing", "security", "custom",
];

/// Where a stored skill came from. Repo skills are never stored: they live in the project.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SkillSourceKind {
    /// Created or imported by an operator.
    Admin,
    /// Contributed by a plugin; its content is the plugin's to change.
    Plugin,
}

impl SkillSourceKind {
    /// `admin` or `plugin`.
    pub fn as_str(self) -> &'static str {
        match self {
            SkillSourceKind::Admin => "admin",
            SkillSourceKind::Plugin => "plugin",
        }
    }
}

/// A stored skill (seed 002's `skills` row) in a tenant.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct SkillRecord {
    /// The record id (a UUID for the in-memory store).
    pub id: String,
    /// The owning tenant.
    pub tenant: TenantId,
    /// Human-readable name, 1-128 characters.
    pub name: String,
    /// Lookup identifier, unique in the tenant: `^[a-z][a-z0-9-]*$`, at most 64 characters.
    pub slug: String,
    /// A short description for catalogs and prompts.
    pub description: Option<String>,
    /// One of [`SKILL_CATEGORIES`].
    pub category: String,
    /// Admin or plugin.
    pub source_kind: SkillSourceKind,
    /// The contributing plugin, for plugin skills.
    pub plugin_id: Option<String>,
    /// The plugin-relative path the skill came from, for plugin skills.
    pub source_ref: Option<String>,
    /// The full `SKILL.md` text.
    pub content: String,
    /// Whether the skill has (or was created to have) supporting files.
    pub is_directory: bool,
    /// A version string, when one is known.
    pub version: Option<String>,
    /// Lowercase hex SHA-256 of `content`, computed by the store.
    pub checksum: String,
    /// The global kill switch.
    pub enabled: bool,
    /// An operator's hold: someone who runs the catalog switched the skill off, and only
    /// lifting the hold (`SkillUpdate::held = Some(false)`) lets it be enabled again. While
    /// held the skill is disabled whatever an update asks ([`SkillUpdate::apply_to`]): no
    /// installer update, approval, version switch, plugin sync or import turns it back on.
    /// (A skill disabled for another reason, such as an install awaiting approval, is not
    /// held.) Records stored before the field existed read as not held.
    #[serde(default)]
    pub held: bool,
    /// Tags for filtering: each `^[a-z0-9-]+$`, at most 20.
    pub tags: Vec<String>,
    /// Tools the skill expects the agent to have (advisory).
    pub requires_tools: Vec<String>,
    /// Free-form metadata.
    pub metadata: serde_json::Map<String, serde_json::Value>,
    /// The trust level the skill runs at (one of [`TRUST_LEVELS`]), as whoever added it
    /// decided (an installer's scan and source, an admin); `None`: unknown, which every
    /// consumer treats as the lowest level (`community`).
    pub trust_level: Option<String>,
    /// When the record was created.
    pub created_at: Timestamp,
    /// When the record or one of its files last changed.
    pub updated_at: Timestamp,
}

/// A supporting file of a stored skill (seed 002's `skill_files` row).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct SkillFileRecord {
    /// The record id.
    pub id: String,
    /// The skill it belongs to.
    pub skill_id: String,
    /// The `/`-separated path under the skill directory.
    pub relative_path: String,
    /// The file's text.
    pub content: String,
    /// A MIME type (given, or guessed from the extension).
    pub content_type: String,
    /// `content.len()`.
    pub size_bytes: u64,
    /// Lowercase hex SHA-256 of `content`, computed by the store.
    pub checksum: String,
    /// When the file was created.
    pub created_at: Timestamp,
    /// When the file last changed.
    pub updated_at: Timestamp,
}

/// A skill to create, with its files: written all at once or not at all.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct NewSkill {
    /// Human-readable name.
    pub name: String,
    /// Unique slug.
    pub slug: String,
    /// Short description.
    pub description: Option<String>,
    /// Category; `None` means `general`.
    pub category: Option<String>,
    /// Source; `None` means admin.
    pub source_kind: Option<SkillSourceKind>,
    /// Contributing plugin.
    pub plugin_id: Option<String>,
    /// Plugin-relative source path.
    pub source_ref: Option<String>,
    /// The `SKILL.md` text (at least one character).
    pub content: String,
    /// Marks a directory skill even before it has files; any file makes it one.
    pub is_directory: bool,
    /// Version.
    pub version: Option<String>,
    /// Disabled skills are kept but never resolved; `None` means enabled.
    pub enabled: Option<bool>,
    /// Tags.
    pub tags: Vec<String>,
    /// Tools the skill expects.
    pub requires_tools: Vec<String>,
    /// Free-form metadata.
    pub metadata: serde_json::Map<String, serde_json::Value>,
    /// The trust level it runs at (one of [`TRUST_LEVELS`]); `None`: unknown (community).
    pub trust_level: Option<String>,
    /// Supporting files.
    pub files: Vec<NewSkillFile>,
}

impl NewSkill {
    /// A simple admin skill in category `general`.
    pub fn new(
        name: impl Into<String>,
        slug: impl Into<String>,
        content: impl Into<String>,
    ) -> Self {
        NewSkill {
            name: name.into(),
            slug: slug.into(),
            content: content.into(),
            ..NewSkill::default()
        }
    }

    /// Adds a supporting file.
    pub fn with_file(mut self, path: impl Into<String>, content: impl Into<String>) -> Self {
        self.files.push(NewSkillFile::new(path, content));
        self
    }
}

/// A supporting file to write.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct NewSkillFile {
    /// Relative path (seed 002 rules: no `..`, not absolute, at most 256 characters).
    pub path: String,
    /// Text content.
    pub content: String,
    /// MIME type; `None` guesses from the extension.
    pub content_type: Option<String>,
}

impl NewSkillFile {
    /// A file whose type is guessed from its extension.
    pub fn new(path: impl Into<String>, content: impl Into<String>) -> Self {
        NewSkillFile {
            path: path.into(),
            content: content.into(),
            content_type: None,
        }
    }
}

/// Changes to a skill; `None` leaves a field as it is. The slug never changes (duplicate the
/// skill to get a new one).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct SkillUpdate {
    /// New name.
    pub name: Option<String>,
    /// New description (`Some(None)` clears it).
    pub description: Option<Option<String>>,
    /// New category.
    pub category: Option<String>,
    /// New `SKILL.md` text.
    pub content: Option<String>,
    /// New version (`Some(None)` clears it).
    pub version: Option<Option<String>>,
    /// New tags.
    pub tags: Option<Vec<String>>,
    /// New required tools.
    pub requires_tools: Option<Vec<String>>,
    /// Enable or disable (a held skill stays disabled: see [`SkillUpdate::held`]).
    pub enabled: Option<bool>,
    /// Place (`true`) or lift (`false`) an operator's hold ([`SkillRecord::held`]). Placing
    /// it disables the skill; lifting it alone leaves `enabled` as it was (set `enabled`
    /// too to switch the skill back on in the same step).
    pub held: Option<bool>,
    /// New metadata.
    pub metadata: Option<serde_json::Map<String, serde_json::Value>>,
    /// New plugin-relative source path (`Some(None)` clears it).
    pub source_ref: Option<Option<String>>,
    /// New trust level (`Some(None)`: unknown, so community).
    pub trust_level: Option<Option<String>>,
    /// Replaces the whole set of supporting files in the same atomic step.
    pub files: Option<Vec<NewSkillFile>>,
}

impl SkillUpdate {
    /// Applies every set field except `files` to `skill` (the checksum follows the content,
    /// `is_directory` becomes true when non-empty files are set, a held skill stays
    /// disabled) and stamps `updated_at`: what every backend does once the update has been
    /// validated and the files written.
    pub fn apply_to(&self, skill: &mut SkillRecord, now: Timestamp) {
        if let Some(name) = &self.name {
            skill.name = name.clone();
        }
        if let Some(description) = &self.description {
            skill.description = description.clone();
        }
        if let Some(category) = &self.category {
            skill.category = category.clone();
        }
        if let Some(content) = &self.content {
            skill.checksum = crate::validate::checksum(content);
            skill.content = content.clone();
        }
        if let Some(version) = &self.version {
            skill.version = version.clone();
        }
        if let Some(tags) = &self.tags {
            skill.tags = tags.clone();
        }
        if let Some(tools) = &self.requires_tools {
            skill.requires_tools = tools.clone();
        }
        if let Some(held) = self.held {
            skill.held = held;
        }
        if let Some(enabled) = self.enabled {
            skill.enabled = enabled;
        }
        // The hold outranks whoever else writes `enabled` (an update re-enabling what it
        // replaced, a sync, an import): only lifting the hold itself lets the skill run.
        if skill.held {
            skill.enabled = false;
        }
        if let Some(metadata) = &self.metadata {
            skill.metadata = metadata.clone();
        }
        if let Some(source_ref) = &self.source_ref {
            skill.source_ref = source_ref.clone();
        }
        if let Some(trust_level) = &self.trust_level {
            skill.trust_level = trust_level.clone();
        }
        if self.files.as_ref().is_some_and(|f| !f.is_empty()) {
            skill.is_directory = true;
        }
        skill.updated_at = now;
    }
}

/// Changes to a supporting file.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SkillFileUpdate {
    /// New content.
    pub content: Option<String>,
    /// New MIME type.
    pub content_type: Option<String>,
}

impl SkillFileUpdate {
    /// New content, same type.
    pub fn content(content: impl Into<String>) -> Self {
        SkillFileUpdate {
            content: Some(content.into()),
            content_type: None,
        }
    }
}

/// List filters for skills (seed 002 section 6.1). Every set field must match.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SkillFilter {
    /// Only this source.
    pub source: Option<SkillSourceKind>,
    /// Only this category.
    pub category: Option<String>,
    /// Case-insensitive substring of name or description.
    pub search: Option<String>,
    /// Only enabled (or only disabled) skills.
    pub enabled: Option<bool>,
    /// Only skills carrying every one of these tags.
    pub tags: Vec<String>,
    /// Only skills of this plugin.
    pub plugin_id: Option<String>,
}

impl SkillFilter {
    /// Case-insensitive text search over name and description, the same way every backend
    /// must apply it (Unicode lowercase on both sides).
    pub fn matches_search(&self, skill: &SkillRecord) -> bool {
        let Some(search) = &self.search else {
            return true;
        };
        let needle = search.to_lowercase();
        skill.name.to_lowercase().contains(&needle)
            || skill
                .description
                .as_deref()
                .is_some_and(|d| d.to_lowercase().contains(&needle))
    }

    /// Whether `skill` passes every set field.
    pub fn matches(&self, skill: &SkillRecord) -> bool {
        self.source.is_none_or(|s| s == skill.source_kind)
            && self.category.as_deref().is_none_or(|c| c == skill.category)
            && self.enabled.is_none_or(|e| e == skill.enabled)
            && self
                .plugin_id
                .as_deref()
                .is_none_or(|p| skill.plugin_id.as_deref() == Some(p))
            && self.tags.iter().all(|t| skill.tags.contains(t))
            && self.matches_search(skill)
    }
}

/// Who an assignment attaches a skill to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum AssignmentScope {
    /// Every agent of the tenant.
    Global,
    /// Every agent of one team.
    Team,
    /// One agent.
    Agent,
}

impl AssignmentScope {
    /// `global`, `team` or `agent`.
    pub fn as_str(self) -> &'static str {
        match self {
            AssignmentScope::Global => "global",
            AssignmentScope::Team => "team",
            AssignmentScope::Agent => "agent",
        }
    }
}

/// A skill attached to everyone, a team or an agent (seed 002's `skill_assignments` row).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct SkillAssignment {
    /// The record id.
    pub id: String,
    /// The owning tenant.
    pub tenant: TenantId,
    /// The skill.
    pub skill_id: String,
    /// The skill's slug, copied for display and lookup.
    pub skill_slug: String,
    /// Global, team or agent.
    pub scope: AssignmentScope,
    /// The team or agent id; `None` for global.
    pub scope_id: Option<String>,
    /// Higher is listed earlier.
    pub priority: i64,
    /// Whether the skill's description goes into the system prompt.
    pub auto_inject: bool,
    /// The assignment-level toggle.
    pub enabled: bool,
    /// When it was created.
    pub created_at: Timestamp,
    /// When it last changed.
    pub updated_at: Timestamp,
}

/// An assignment to create.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct NewAssignment {
    /// The skill.
    pub skill_id: String,
    /// Global, team or agent.
    pub scope: AssignmentScope,
    /// Required for team and agent, absent for global.
    pub scope_id: Option<String>,
    /// Higher is listed earlier (default 0).
    pub priority: i64,
    /// Inject the description into the prompt (default false).
    pub auto_inject: bool,
    /// Default true.
    pub enabled: bool,
}

impl NewAssignment {
    fn with(skill_id: &str, scope: AssignmentScope, scope_id: Option<&str>) -> Self {
        NewAssignment {
            skill_id: skill_id.to_owned(),
            scope,
            scope_id: scope_id.map(str::to_owned),
            priority: 0,
            auto_inject: false,
            enabled: true,
        }
    }

    /// Attach to every agent.
    pub fn global(skill_id: &str) -> Self {
        Self::with(skill_id, AssignmentScope::Global, None)
    }

    /// Attach to a team's agents.
    pub fn team(skill_id: &str, team_id: &str) -> Self {
        Self::with(skill_id, AssignmentScope::Team, Some(team_id))
    }

    /// Attach to one agent.
    pub fn agent(skill_id: &str, agent_id: &str) -> Self {
        Self::with(skill_id, AssignmentScope::Agent, Some(agent_id))
    }

    /// Sets the priority.
    pub fn priority(mut self, priority: i64) -> Self {
        self.priority = priority;
        self
    }

    /// Sets auto-inject.
    pub fn auto_inject(mut self, auto_inject: bool) -> Self {
        self.auto_inject = auto_inject;
        self
    }
}

/// Changes to an assignment.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct AssignmentUpdate {
    /// Enable or disable.
    pub enabled: Option<bool>,
    /// New priority.
    pub priority: Option<i64>,
    /// Toggle auto-inject.
    pub auto_inject: Option<bool>,
}

/// List filters for assignments. Every set field must match.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct AssignmentFilter {
    /// Only this skill's.
    pub skill_id: Option<String>,
    /// Only this scope.
    pub scope: Option<AssignmentScope>,
    /// Only this team or agent.
    pub scope_id: Option<String>,
}

/// An assignment with its skill, as [`SkillStore::assignments_for_agent`] returns them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct AssignedSkill {
    /// The assignment.
    pub assignment: SkillAssignment,
    /// Its skill.
    pub skill: SkillRecord,
}

impl AssignedSkill {
    /// The pair, for backends that read the two records separately (another crate cannot
    /// build a `#[non_exhaustive]` struct literally, and going through the serde form costs
    /// a copy of both records).
    pub fn new(assignment: SkillAssignment, skill: SkillRecord) -> Self {
        AssignedSkill { assignment, skill }
    }
}

/// The order every backend lists assignments in: priority (high first), then slug, then
/// scope (global, team, agent), then scope id, then id.
pub fn assignment_order(a: &SkillAssignment, b: &SkillAssignment) -> std::cmp::Ordering {
    b.priority
        .cmp(&a.priority)
        .then_with(|| a.skill_slug.cmp(&b.skill_slug))
        .then_with(|| a.scope.cmp(&b.scope))
        .then_with(|| a.scope_id.cmp(&b.scope_id))
        .then_with(|| a.id.cmp(&b.id))
}

/// Stores skills, their supporting files and their assignments, per tenant: every
/// repository function of seed 002 section 7.
///
/// Contract (checked by `conformance::skills`):
/// - every write validates its input ([`crate::validate`]) and refuses with
///   [`Error::Invalid`](crate::Error::Invalid) naming the field and rule, changing nothing;
/// - slugs are unique per tenant ([`Error::Conflict`](crate::Error::Conflict)); so is
///   (skill, scope, scope id) for assignments and (skill, path) for files;
/// - checksums, sizes, ids and timestamps are computed by the store, never taken from input;
/// - a skill and its files are written in one atomic step; deleting a skill deletes its
///   files and assignments;
/// - no call sees or changes another tenant's records: they are absent (`None`, `false`,
///   [`Error::NotFound`](crate::Error::NotFound)).
/// - lists are ordered: skills by slug, files by path (bytewise), assignments by
///   [`assignment_order`].
///
/// ```
/// use skills_store_traits::{in_memory::InMemorySkillStore, NewAssignment, NewSkill, SkillStore, TenantId};
///
/// # futures::executor::block_on(async {
/// let store = InMemorySkillStore::new();
/// let acme = TenantId::new("acme");
/// let skill = store
///     .create_skill(&acme, NewSkill::new("Deploy", "deploy", "# Deploy\n").with_file("scripts/run.sh", "echo hi\n"))
///     .await?;
/// store.create_assignment(&acme, NewAssignment::team(&skill.id, "ops")).await?;
/// let assigned = store.assignments_for_agent(&acme, "agent-1", Some("ops")).await?;
/// assert_eq!(assigned[0].skill.slug, "deploy");
/// assert_eq!(store.list_skill_files(&acme, &skill.id).await?[0].relative_path, "scripts/run.sh");
/// # Ok::<(), skills_store_traits::Error>(())
/// # }).unwrap();
/// ```
#[async_trait]
pub trait SkillStore: Send + Sync {
    /// Creates a skill with its files, all or nothing.
    async fn create_skill(&self, tenant: &TenantId, skill: NewSkill) -> Result<SkillRecord>;
    /// The skill with this id.
    async fn find_skill_by_id(&self, tenant: &TenantId, id: &str) -> Result<Option<SkillRecord>>;
    /// The skill with this slug (exact match).
    async fn find_skill_by_slug(
        &self,
        tenant: &TenantId,
        slug: &str,
    ) -> Result<Option<SkillRecord>>;
    /// Skills passing `filter`, ordered by slug.
    async fn list_skills(
        &self,
        tenant: &TenantId,
        filter: &SkillFilter,
    ) -> Result<Vec<SkillRecord>>;
    /// Applies `update`; `None` when the skill does not exist.
    async fn update_skill(
        &self,
        tenant: &TenantId,
        id: &str,
        update: SkillUpdate,
    ) -> Result<Option<SkillRecord>>;
    /// Deletes a skill with its files and assignments; `false` when it did not exist.
    async fn delete_skill(&self, tenant: &TenantId, id: &str) -> Result<bool>;
    /// Whether `slug` is free, ignoring the skill `exclude_id`.
    async fn is_slug_available(
        &self,
        tenant: &TenantId,
        slug: &str,
        exclude_id: Option<&str>,
    ) -> Result<bool>;

    /// Adds a supporting file; the skill becomes a directory skill.
    async fn create_skill_file(
        &self,
        tenant: &TenantId,
        skill_id: &str,
        file: NewSkillFile,
    ) -> Result<SkillFileRecord>;
    /// A skill's files, ordered by path.
    async fn list_skill_files(
        &self,
        tenant: &TenantId,
        skill_id: &str,
    ) -> Result<Vec<SkillFileRecord>>;
    /// The files of several skills in one call, for callers that would otherwise call
    /// [`list_skill_files`](SkillStore::list_skill_files) once per skill (the resolver):
    /// keyed by skill id, each list exactly what `list_skill_files` returns for that id
    /// (ordered by path). Ids of skills without files, unknown ids and ids of another
    /// tenant's skills have no entry; a repeated id counts once.
    ///
    /// The default calls `list_skill_files` once per distinct id, so every backend has it;
    /// backends override it to answer in a number of queries that does not grow with the
    /// number of ids, and decorators forward it.
    async fn list_files_for_skills(
        &self,
        tenant: &TenantId,
        skill_ids: &[String],
    ) -> Result<BTreeMap<String, Vec<SkillFileRecord>>> {
        files_one_by_one(self, tenant, skill_ids).await
    }
    /// One file by path.
    async fn find_skill_file(
        &self,
        tenant: &TenantId,
        skill_id: &str,
        relative_path: &str,
    ) -> Result<Option<SkillFileRecord>>;
    /// Changes a file; `None` when it does not exist.
    async fn update_skill_file(
        &self,
        tenant: &TenantId,
        file_id: &str,
        update: SkillFileUpdate,
    ) -> Result<Option<SkillFileRecord>>;
    /// Deletes a file; `false` when it did not exist.
    async fn delete_skill_file(&self, tenant: &TenantId, file_id: &str) -> Result<bool>;
    /// Deletes every file of a skill; returns how many.
    async fn delete_skill_files_by_skill_id(
        &self,
        tenant: &TenantId,
        skill_id: &str,
    ) -> Result<u64>;

    /// Attaches a skill.
    async fn create_assignment(
        &self,
        tenant: &TenantId,
        assignment: NewAssignment,
    ) -> Result<SkillAssignment>;
    /// One assignment.
    async fn find_assignment(&self, tenant: &TenantId, id: &str)
    -> Result<Option<SkillAssignment>>;
    /// Assignments passing `filter`, in [`assignment_order`].
    async fn list_assignments(
        &self,
        tenant: &TenantId,
        filter: &AssignmentFilter,
    ) -> Result<Vec<SkillAssignment>>;
    /// Every assignment reaching an agent (global, its team's, its own), enabled or not,
    /// with its skill, in [`assignment_order`].
    async fn assignments_for_agent(
        &self,
        tenant: &TenantId,
        agent_id: &str,
        team_id: Option<&str>,
    ) -> Result<Vec<AssignedSkill>>;
    /// [`assignments_for_agent`](SkillStore::assignments_for_agent) and the files of every
    /// skill it returns ([`list_files_for_skills`](SkillStore::list_files_for_skills)) in
    /// one call: what the resolver reads. Backends answer it from one snapshot, so a skill
    /// never comes with the files of another version of it, in a number of queries that
    /// does not grow with the number of skills (one round trip on PostgreSQL).
    ///
    /// The default makes the two calls (two snapshots); decorators forward it.
    async fn assignments_for_agent_with_files(
        &self,
        tenant: &TenantId,
        agent_id: &str,
        team_id: Option<&str>,
    ) -> Result<AgentSkills> {
        agent_skills_in_two_calls(self, tenant, agent_id, team_id).await
    }
    /// What resolving the agent's skills reads, and nothing more: the enabled skills that
    /// an enabled assignment reaching the agent (global, its team's, its own) attaches,
    /// each with the fields the resolver lists, its files' paths and types, the text of its
    /// `skill.json`, and the highest priority and any auto-inject of those assignments;
    /// ordered by slug. Exactly [`resolvable_from`] of
    /// [`assignments_for_agent_with_files`](SkillStore::assignments_for_agent_with_files)
    /// (the conformance suite compares them), from one snapshot, in a number of queries
    /// that does not grow with the number of skills.
    ///
    /// The default derives it from that full read; backends override it to read only the
    /// fields it carries, and decorators forward it.
    async fn resolvable_skills(
        &self,
        tenant: &TenantId,
        agent_id: &str,
        team_id: Option<&str>,
    ) -> Result<Vec<ResolvableSkill>> {
        let read = self
            .assignments_for_agent_with_files(tenant, agent_id, team_id)
            .await?;
        Ok(resolvable_from(&read))
    }
    /// Changes an assignment; `None` when it does not exist.
    async fn update_assignment(
        &self,
        tenant: &TenantId,
        id: &str,
        update: AssignmentUpdate,
    ) -> Result<Option<SkillAssignment>>;
    /// Removes an assignment; `false` when it did not exist.
    async fn delete_assignment(&self, tenant: &TenantId, id: &str) -> Result<bool>;

    /// Every skill with its number of assignments, ordered by slug.
    async fn skills_with_assignment_counts(
        &self,
        tenant: &TenantId,
    ) -> Result<Vec<(SkillRecord, u64)>>;
    /// The distinct categories in use, sorted.
    async fn list_categories(&self, tenant: &TenantId) -> Result<Vec<String>>;
    /// The agents a skill is assigned to directly (agent scope), sorted. Team and global
    /// reach depends on team membership, which the host knows.
    async fn agent_ids_for_skill(&self, tenant: &TenantId, skill_id: &str) -> Result<Vec<String>>;
}
