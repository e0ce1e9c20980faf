//! The unified resolver (seed 002 sections 5 and 10.3): one index of the skills an agent can
//! use, merged from the store (admin and plugin skills assigned to it) and the project's
//! repo skills (from skills-core discovery).
//!
//! Order and precedence: on a slug clash admin beats plugin beats repo; the loser stays
//! visible (the agent can still read it from its own path) but is marked
//! [`shadowed`](ResolvedSkill::shadowed) and comes after the winner. Entries are ordered by
//! source (admin, plugin, repo), then by assignment priority (high first), then by slug, so
//! the winner of every clash is listed first and priority orders within a source. Two repo
//! skills with one slug (a project skill and a user-level one) keep discovery order: the
//! first wins, the second is shadowed and a warning says so.

use std::collections::{BTreeMap, HashSet};
use std::path::PathBuf;

use serde::Serialize;
use serde_json::Value;
use skills_core::{Skill, SkillStatus};
use skills_store_traits::{ResolvableSkill, SkillSourceKind, SkillStore, TenantId};

use crate::error::Result;
use crate::sandbox::DEFAULT_SANDBOX_SKILLS_DIR;

/// Where a resolved skill comes from, in precedence order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum SkillOrigin {
    /// An admin skill from the store (seed 002's `db` source).
    Admin,
    /// A plugin-contributed skill from the store.
    Plugin,
    /// A skill discovered in the project tree.
    Repo,
}

impl SkillOrigin {
    /// `admin`, `plugin` or `repo`.
    pub fn as_str(self) -> &'static str {
        match self {
            SkillOrigin::Admin => "admin",
            SkillOrigin::Plugin => "plugin",
            SkillOrigin::Repo => "repo",
        }
    }
}

/// A supporting file as the resolver lists it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SupportingFile {
    /// Path relative to the skill directory.
    pub relative_path: String,
    /// MIME type.
    pub content_type: String,
}

/// One entry of the merged index (seed 002 section 5.2).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct ResolvedSkill {
    /// The lookup id: the slug for stored skills, the lowercase name for repo skills.
    pub id: String,
    /// Display name.
    pub name: String,
    /// Description.
    pub description: String,
    /// Source.
    pub source: SkillOrigin,
    /// The skill's store id (admin), plugin id (plugin) or directory (repo).
    pub source_ref: String,
    /// Whether it has supporting files.
    pub is_directory: bool,
    /// Supporting files, by path.
    pub supporting_files: Vec<SupportingFile>,
    /// Where a stored skill lives in the sandbox (`<sandbox skills dir>/<slug>`).
    pub sandbox_path: Option<String>,
    /// Where a repo skill lives in the project tree.
    pub absolute_path: Option<PathBuf>,
    /// The file to read first, as the agent sees it: `<sandbox_path>/SKILL.md` for stored
    /// skills, the absolute `SKILL.md` (symlinks resolved) of a repo skill, or its
    /// `skill.json` when it has no `SKILL.md`.
    pub entrypoint: String,
    /// The store's id of a stored skill (admin or plugin); `None` for repo skills.
    pub store_id: Option<String>,
    /// Tags.
    pub tags: Vec<String>,
    /// Category (`general` when a repo skill names none).
    pub category: String,
    /// Always true for resolved entries: disabled skills and assignments are left out.
    pub enabled: bool,
    /// Tools the skill expects.
    pub requires_tools: Vec<String>,
    /// Version.
    pub version: Option<String>,
    /// The highest priority among the assignments that reach the agent (0 for repo skills).
    pub priority: i64,
    /// Whether any reaching assignment asks for the description in the prompt.
    pub auto_inject: bool,
    /// Another source with the same id takes precedence.
    pub shadowed: bool,
    /// The trust level the stored skill carries (`core`, `verified`, `community`, `user`),
    /// as its installer or an admin decided; `None` for repo skills and stored skills nobody
    /// gave one. Consumers treat `None` as `community`, the lowest level.
    pub trust_level: Option<String>,
    /// The lifecycle status (seed 001), when the skill declares one: a repo skill's
    /// [`Skill::status`]; a stored skill's `status` metadata, else its `skill.json`'s
    /// `status`. Catalogs mark `deprecated` and `stub` entries; selection never picks a
    /// `deprecated` one on its own.
    pub status: Option<SkillStatus>,
    /// The layer (seed 001, 0-4), when the skill declares one: a repo skill's manifest; a
    /// stored skill's `layer` metadata, else its `skill.json`'s `layer`. Layer 0 (kernel)
    /// skills run without write access to stores.
    pub layer: Option<u8>,
    /// Whether the model may pick the skill by itself: false for Claude Code's
    /// `disable-model-invocation: true` (and, for repo skills, Codex's
    /// `allow_implicit_invocation: false`). Catalogs shown to a model leave it out; a request
    /// by name (`use_skill`) still finds it.
    pub model_invocable: bool,
    /// Whether a user may invoke it directly (Claude Code's `user-invocable`, true unless
    /// set false).
    pub user_invocable: bool,
    /// Claude Code's `argument-hint`, for a host's command menu.
    pub argument_hint: Option<String>,
    /// Codex's `metadata.short-description` (or the sidecar's `interface.short_description`),
    /// for user-facing lists.
    pub short_description: Option<String>,
}

/// The client extension fields of a SKILL.md text (stored skills), read leniently; an
/// unreadable frontmatter gives the defaults.
fn client_fields(content: &str) -> (bool, bool, Option<String>, Option<String>) {
    // Parsing every stored SKILL.md made resolving several times slower; a frontmatter that
    // names none of the fields (and has no escape that could spell one) has the defaults.
    if let Some(front) = frontmatter_text(content)
        && !front.contains('\\')
        && !CLIENT_FIELD_KEYS.iter().any(|key| front.contains(key))
    {
        return (true, true, None, None);
    }
    parsed_client_fields(content)
}

/// [`client_fields`] by parsing the whole `SKILL.md`.
fn parsed_client_fields(content: &str) -> (bool, bool, Option<String>, Option<String>) {
    let parsed = skills_core::SkillMd::parse_str(content, None, &Default::default());
    match parsed.document {
        Some(md) => fields_of(&md.frontmatter),
        None => (true, true, None, None),
    }
}

/// The keys [`fields_of`] reads (`short-description` under `metadata`).
const CLIENT_FIELD_KEYS: [&str; 4] = [
    "disable-model-invocation",
    "user-invocable",
    "argument-hint",
    "short-description",
];

/// The text between a leading `---` line and the next `---` line, when both are there.
fn frontmatter_text(content: &str) -> Option<&str> {
    let rest = content
        .strip_prefix("---\n")
        .or_else(|| content.strip_prefix("---\r\n"))?;
    let end = rest.find("\n---")?;
    Some(&rest[..end])
}

fn fields_of(fm: &skills_core::Frontmatter) -> (bool, bool, Option<String>, Option<String>) {
    let cc = fm.claude_code();
    (
        !cc.disable_model_invocation,
        cc.user_invocable,
        cc.argument_hint,
        fm.short_description().map(str::to_owned),
    )
}

/// The merged index and what was noticed while merging.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct Resolution {
    /// Every entry, winners before the entries they shadow.
    pub skills: Vec<ResolvedSkill>,
    /// Clashes worth telling an operator about.
    pub warnings: Vec<String>,
}

impl Resolution {
    /// The entry `query` names: a case-insensitive match on id (slug) first, then on name;
    /// only winners match, so a shadowed entry is never reached, by its id or by its name.
    pub fn find(&self, query: &str) -> Option<&ResolvedSkill> {
        let query = query.trim().to_lowercase();
        self.winners()
            .find(|s| s.id.to_lowercase() == query)
            .or_else(|| self.winners().find(|s| s.name.to_lowercase() == query))
    }

    /// The entries that are not shadowed.
    pub fn winners(&self) -> impl Iterator<Item = &ResolvedSkill> {
        self.skills.iter().filter(|s| !s.shadowed)
    }
}

/// Resolves skills for agents.
#[derive(Debug, Clone)]
pub struct Resolver {
    sandbox_dir: String,
}

impl Default for Resolver {
    fn default() -> Self {
        Resolver {
            sandbox_dir: DEFAULT_SANDBOX_SKILLS_DIR.to_owned(),
        }
    }
}

impl Resolver {
    /// A resolver whose sandbox paths are under [`DEFAULT_SANDBOX_SKILLS_DIR`].
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets the skills directory as the agent sees it inside its sandbox.
    pub fn sandbox_dir(mut self, dir: impl Into<String>) -> Self {
        self.sandbox_dir = dir.into().trim_end_matches('/').to_owned();
        self
    }

    /// Resolves everything `agent_id` (in `team_id`) may use: enabled stored skills with an
    /// enabled assignment reaching it, merged with `repo_skills` in discovery order.
    ///
    /// ```
    /// # futures::executor::block_on(async {
    /// use skills_catalog::{Resolver, SkillOrigin};
    /// use skills_store_traits::{in_memory::InMemorySkillStore, NewAssignment, NewSkill, SkillStore, TenantId};
    ///
    /// let store = InMemorySkillStore::new();
    /// let tenant = TenantId::new("acme");
    /// let skill = store.create_skill(&tenant, NewSkill::new("PDF Tools", "pdf-tools", "# PDF\n")).await?;
    /// store.create_assignment(&tenant, NewAssignment::global(&skill.id)).await?;
    /// let repo = skills_core::Discovery::new(Default::default())
    ///     .root(concat!(env!("CARGO_MANIFEST_DIR"), "/../examples/skills"))
    ///     .run()
    ///     .into_skills();
    /// let resolution = Resolver::new().resolve_for_agent(&store, &tenant, "agent-1", None, &repo).await?;
    /// let winner = resolution.find("PDF-TOOLS").unwrap();
    /// assert_eq!(winner.source, SkillOrigin::Admin);
    /// assert_eq!(winner.sandbox_path.as_deref(), Some("/home/sprite/.skills/pdf-tools"));
    /// // The repo skill of the same slug is still listed, after the winner.
    /// assert!(resolution.skills.iter().any(|s| s.id == "pdf-tools" && s.shadowed && s.source == SkillOrigin::Repo));
    /// # Ok::<(), skills_catalog::Error>(())
    /// # }).unwrap();
    /// ```
    pub async fn resolve_for_agent(
        &self,
        store: &dyn SkillStore,
        tenant: &TenantId,
        agent_id: &str,
        team_id: Option<&str>,
        repo_skills: &[Skill],
    ) -> Result<Resolution> {
        // One store call whatever the number of skills, reading only what the entries list
        // (not whole records): the enabled skills an enabled assignment reaching the agent
        // attaches, with their files' paths, from one snapshot (one round trip on
        // PostgreSQL; a store without the method makes two calls and projects them).
        let stored = store
            .resolvable_skills(tenant, agent_id, team_id)
            .await?
            .into_iter()
            .map(|skill| self.stored_entry(skill))
            .collect();
        let repo = repo_skills.iter().map(repo_entry).collect();
        Ok(merge(stored, repo))
    }

    /// The winner for `query` (slug or name, case-insensitive) among what
    /// [`Resolver::resolve_for_agent`] returns.
    pub async fn resolve_by_slug(
        &self,
        store: &dyn SkillStore,
        tenant: &TenantId,
        query: &str,
        agent_id: &str,
        team_id: Option<&str>,
        repo_skills: &[Skill],
    ) -> Result<Option<ResolvedSkill>> {
        let resolution = self
            .resolve_for_agent(store, tenant, agent_id, team_id, repo_skills)
            .await?;
        Ok(resolution.find(query).cloned())
    }

    /// Resolves repo skills alone, without a store (a host with only project skills).
    pub fn resolve_repo(&self, repo_skills: &[Skill]) -> Resolution {
        merge(Vec::new(), repo_skills.iter().map(repo_entry).collect())
    }

    fn stored_entry(&self, skill: ResolvableSkill) -> ResolvedSkill {
        let source = match skill.source_kind {
            SkillSourceKind::Admin => SkillOrigin::Admin,
            SkillSourceKind::Plugin => SkillOrigin::Plugin,
        };
        let source_ref = match source {
            SkillOrigin::Plugin => skill.plugin_id.clone().unwrap_or_else(|| skill.id.clone()),
            _ => skill.id.clone(),
        };
        let sandbox_path = format!("{}/{}", self.sandbox_dir, skill.slug);
        let (status, layer) = declared(&skill);
        let (model_invocable, user_invocable, argument_hint, short_description) =
            client_fields(&skill.content);
        ResolvedSkill {
            status,
            layer,
            model_invocable,
            user_invocable,
            argument_hint,
            short_description,
            entrypoint: format!("{sandbox_path}/{}", skills_core::SKILL_MD),
            store_id: Some(skill.id.clone()),
            sandbox_path: Some(sandbox_path),
            id: skill.slug,
            name: skill.name,
            description: skill.description.unwrap_or_default(),
            source,
            source_ref,
            is_directory: skill.is_directory || !skill.files.is_empty(),
            supporting_files: skill
                .files
                .into_iter()
                .map(|f| SupportingFile {
                    relative_path: f.relative_path,
                    content_type: f.content_type,
                })
                .collect(),
            absolute_path: None,
            tags: skill.tags,
            category: skill.category,
            enabled: true,
            requires_tools: skill.requires_tools,
            trust_level: skill.trust_level,
            version: skill.version,
            priority: skill.priority,
            auto_inject: skill.auto_inject,
            shadowed: false,
        }
    }
}

/// The status and layer a stored skill declares: its metadata's `status` / `layer` (a
/// present key counts whatever its value), else those of its `skill.json` file. A word or
/// number that is not a status or a layer counts as undeclared, so a malformed file cannot
/// fail a resolution.
fn declared(skill: &ResolvableSkill) -> (Option<SkillStatus>, Option<u8>) {
    let manifest: Option<Value> = skill
        .manifest
        .as_deref()
        .and_then(|text| serde_json::from_str(text).ok());
    let field = |key: &str| manifest.as_ref().and_then(|m| m.get(key));
    let status = skill
        .metadata_status
        .as_ref()
        .or_else(|| field("status"))
        .and_then(Value::as_str)
        .and_then(|word| word.parse().ok());
    let layer = skill
        .metadata_layer
        .as_ref()
        .or_else(|| field("layer"))
        .and_then(Value::as_u64)
        .and_then(|n| u8::try_from(n).ok());
    (status, layer)
}

fn repo_entry(skill: &Skill) -> ResolvedSkill {
    let front = skill.skill_md().map(|md| &md.frontmatter);
    let (_, user_invocable, argument_hint, short_description) =
        front.map_or((true, true, None, None), fields_of);
    let sidecar_short = skill
        .openai_sidecar()
        .and_then(|o| o.short_description.clone());
    ResolvedSkill {
        model_invocable: skill.model_invocable(),
        user_invocable,
        argument_hint,
        short_description: short_description.or(sidecar_short),
        id: skill.name().to_lowercase(),
        name: skill.name().to_owned(),
        description: skill.description().to_owned(),
        source: SkillOrigin::Repo,
        source_ref: skill.dir().display().to_string(),
        is_directory: !skill.files().is_empty(),
        supporting_files: skill
            .files()
            .iter()
            .map(|f| SupportingFile {
                relative_path: f.path.clone(),
                content_type: f.content_type.clone(),
            })
            .collect(),
        sandbox_path: None,
        absolute_path: Some(skill.dir().to_path_buf()),
        entrypoint: skills_core::catalog::skill_location(skill)
            .to_string_lossy()
            .into_owned(),
        store_id: None,
        tags: front.map(|f| f.tags.clone()).unwrap_or_default(),
        category: front
            .and_then(|f| f.category.clone())
            .unwrap_or_else(|| "general".to_owned()),
        enabled: true,
        requires_tools: front.map(|f| f.requires_tools.clone()).unwrap_or_default(),
        trust_level: None,
        status: skill.status(),
        layer: skill.layer(),
        version: front.and_then(|f| f.version.clone()),
        priority: 0,
        auto_inject: false,
        shadowed: false,
    }
}

/// Merges entries of every source: sorts by (source, priority high first, id), keeping the
/// given order among equals (repo discovery order), and marks every entry after the first
/// with the same id as shadowed.
///
/// Exposed so hosts with other skill sources (a plugin runtime that does not store its
/// skills) can merge their own entries with the same rules.
pub fn merge(stored: Vec<ResolvedSkill>, repo: Vec<ResolvedSkill>) -> Resolution {
    let mut skills: Vec<ResolvedSkill> = stored.into_iter().chain(repo).collect();
    skills.sort_by(|a, b| {
        a.source
            .cmp(&b.source)
            .then_with(|| b.priority.cmp(&a.priority))
            .then_with(|| {
                if a.source == SkillOrigin::Repo {
                    std::cmp::Ordering::Equal
                } else {
                    a.id.cmp(&b.id)
                }
            })
    });
    let mut seen: HashSet<String> = HashSet::new();
    let mut winners: BTreeMap<String, SkillOrigin> = BTreeMap::new();
    let mut warnings = Vec::new();
    for skill in &mut skills {
        if seen.insert(skill.id.clone()) {
            winners.insert(skill.id.clone(), skill.source);
        } else {
            skill.shadowed = true;
            let winner = winners.get(&skill.id).copied().unwrap_or(skill.source);
            warnings.push(format!(
                "{} skill `{}` ({}) is shadowed by the {} skill of the same slug",
                skill.source.as_str(),
                skill.id,
                skill.source_ref,
                winner.as_str()
            ));
        }
    }
    Resolution { skills, warnings }
}

#[cfg(test)]
mod tests {
    use super::{client_fields, merge, parsed_client_fields, repo_entry};

    #[test]
    fn a_shadowed_entry_is_not_found_by_its_name() {
        let dir = std::env::temp_dir().join(format!("resolve-shadow-{}", std::process::id()));
        for (sub, body) in [("a/notes", "The winner."), ("b/notes", "The shadowed one.")] {
            let skill_dir = dir.join(sub);
            std::fs::create_dir_all(&skill_dir).ok();
            std::fs::write(
                skill_dir.join("SKILL.md"),
                format!("---\nname: notes\ndescription: {body}\n---\nx\n"),
            )
            .ok();
        }
        let load = |sub: &str| {
            skills_core::Skill::load(dir.join(sub), &skills_core::LoadOptions::default())
                .map(|skill| repo_entry(&skill))
        };
        let (Ok(winner), Ok(mut other)) = (load("a/notes"), load("b/notes")) else {
            panic!("the skills load");
        };
        // A host's entry whose name differs from its id, shadowed by the winner's id.
        other.name = "legacy-notes".into();
        let resolution = merge(Vec::new(), vec![winner, other]);
        assert!(resolution.skills.iter().any(|s| s.shadowed));
        assert_eq!(
            resolution.find("notes").map(|s| s.description.as_str()),
            Some("The winner.")
        );
        assert!(
            resolution.find("legacy-notes").is_none(),
            "the shadowed entry answered"
        );
        std::fs::remove_dir_all(&dir).ok();
    }

    #[test]
    fn the_fast_path_answers_what_parsing_answers() {
        let samples = [
            "---\nname: a\ndescription: b\n---\nBody mentions disable-model-invocation.\n",
            "---\nname: a\ndescription: b\ndisable-model-invocation: true\n---\nx\n",
            "---\r\nname: a\r\ndescription: b\r\nuser-invocable: false\r\n---\r\nx\r\n",
            "---\nname: a\ndescription: b\nargument-hint: \"[file]\"\n---\n",
            "---\nname: a\ndescription: b\nmetadata:\n  short-description: S\n---\n",
            "---\nname: a\ndescription: b\n\"disable\\u002dmodel-invocation\": true\n---\n",
            "no frontmatter at all",
            "---\nname: a\ndescription: unterminated",
            "",
        ];
        for sample in samples {
            assert_eq!(
                client_fields(sample),
                parsed_client_fields(sample),
                "{sample:?}"
            );
        }
        assert_eq!(
            client_fields(samples[1]),
            (false, true, None, None),
            "the field is read"
        );
    }
}
