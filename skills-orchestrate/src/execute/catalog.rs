//! [`CatalogSkills`]: a [`SkillProvider`] over the catalog's [`Resolution`] (seed 002's
//! resolver), reading each skill's SKILL.md the way `read_skill_file` does.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::sync::Arc;

use async_trait::async_trait;
use skills_catalog::agent_tools::SkillFileReader;
use skills_catalog::{Resolution, ResolvedSkill, SkillOrigin};
use skills_core::SKILL_MD;
use skills_core::{ParseOptions, SkillMd};
use skills_security::TrustLevel;
use skills_security::autonomy::RiskLevel;
use skills_store_traits::{SkillStore, TenantId};

use super::skills::{ScriptSpec, SkillDefinition, SkillKind, SkillProvider};
use crate::context::Verbosity;
use crate::error::{Error, Result};

type TrustRule = Arc<dyn Fn(&ResolvedSkill) -> TrustLevel + Send + Sync>;

/// The default trust of a resolved skill: the level it carries (an install's decision, an
/// admin's setting), else [`TrustLevel::Community`]. Repo skills carry none: the host says
/// how far it trusts its project's files ([`CatalogSkills::trust_repo_skills`]), or they run
/// as community skills.
pub fn default_trust(skill: &ResolvedSkill) -> TrustLevel {
    TrustLevel::of_skill(skill.trust_level.as_deref())
}

/// Skills as an agent's [`Resolution`] lists them: instruction skills by default, with the
/// host naming which run natively or as scripts, their trust levels and risks.
///
/// The instructions are the SKILL.md body; `metadata.summary_verbosity` (`minimal`,
/// `standard`, `detailed`) sets the summary length; the layer is the one the skill declares
/// ([`ResolvedSkill::layer`]).
///
/// ```
/// use skills_catalog::Resolver;
/// use skills_orchestrate::execute::{CatalogSkills, SkillKind, SkillProvider};
///
/// # futures::executor::block_on(async {
/// let repo = skills_core::Discovery::new(Default::default())
///     .root(concat!(env!("CARGO_MANIFEST_DIR"), "/../examples/skills"))
///     .run()
///     .into_skills();
/// let resolution = Resolver::new().resolve_repo(&repo);
/// let first = resolution.skills[0].id.clone();
/// let skills = CatalogSkills::new(resolution);
/// let skill = skills.skill(&first).await?.expect("listed");
/// assert_eq!(skill.kind, SkillKind::Instruction);
/// assert!(!skill.instructions.is_empty());
/// assert!(skills.skill("no-such-skill").await?.is_none());
/// # Ok::<(), skills_orchestrate::Error>(())
/// # }).unwrap();
/// ```
#[derive(Clone)]
pub struct CatalogSkills {
    resolution: Resolution,
    store: Option<(Arc<dyn SkillStore>, TenantId)>,
    trust: TrustRule,
    risks: BTreeMap<String, RiskLevel>,
    default_risk: Option<RiskLevel>,
    natives: BTreeSet<String>,
    scripts: BTreeMap<String, ScriptSpec>,
}

impl fmt::Debug for CatalogSkills {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CatalogSkills")
            .field("skills", &self.resolution.skills.len())
            .field("store", &self.store.is_some())
            .field("natives", &self.natives)
            .field("scripts", &self.scripts.keys().collect::<Vec<_>>())
            .finish_non_exhaustive()
    }
}

impl CatalogSkills {
    /// Skills of `resolution`; repo skills are read from disk. Trust by [`default_trust`],
    /// risk by [`default_risk`](skills_security::autonomy::default_risk) of that trust.
    pub fn new(resolution: Resolution) -> Self {
        CatalogSkills {
            resolution,
            store: None,
            trust: Arc::new(default_trust),
            risks: BTreeMap::new(),
            default_risk: None,
            natives: BTreeSet::new(),
            scripts: BTreeMap::new(),
        }
    }

    /// Reads stored (admin, plugin) skills from `store` in `tenant`.
    pub fn with_store(mut self, store: Arc<dyn SkillStore>, tenant: TenantId) -> Self {
        self.store = Some((store, tenant));
        self
    }

    /// Repo skills (the project's own files, which carry no trust level) run at `level`;
    /// stored skills keep theirs. A choice the host makes by name: the default is community.
    pub fn trust_repo_skills(self, level: TrustLevel) -> Self {
        self.trust_with(move |skill| match skill.source {
            SkillOrigin::Repo => level,
            _ => default_trust(skill),
        })
    }

    /// Decides each skill's trust level.
    pub fn trust_with(
        mut self,
        rule: impl Fn(&ResolvedSkill) -> TrustLevel + Send + Sync + 'static,
    ) -> Self {
        self.trust = Arc::new(rule);
        self
    }

    /// The risk of skill `id`.
    pub fn risk(mut self, id: impl Into<String>, risk: RiskLevel) -> Self {
        self.risks.insert(id.into(), risk);
        self
    }

    /// The risk of skills not named by [`risk`](CatalogSkills::risk) (default: the default
    /// risk of each skill's trust level).
    pub fn default_risk(mut self, risk: RiskLevel) -> Self {
        self.default_risk = Some(risk);
        self
    }

    /// Skill `id` runs as the native skill registered under its id.
    pub fn native(mut self, id: impl Into<String>) -> Self {
        self.natives.insert(id.into());
        self
    }

    /// Skill `id` runs `script` (its directory on this host: a repo skill's own, or where
    /// the host materialized a stored one). Empty `files` are filled from the resolution.
    pub fn script(mut self, id: impl Into<String>, script: ScriptSpec) -> Self {
        self.scripts.insert(id.into(), script);
        self
    }

    fn kind(&self, skill: &ResolvedSkill) -> SkillKind {
        if self.natives.contains(&skill.id) {
            return SkillKind::Native {
                name: skill.id.clone(),
            };
        }
        match self.scripts.get(&skill.id) {
            Some(script) => {
                let mut script = script.clone();
                if script.files.is_empty() {
                    script.files = skill
                        .supporting_files
                        .iter()
                        .map(|f| f.relative_path.clone())
                        .collect();
                }
                SkillKind::Script(script)
            }
            None => SkillKind::Instruction,
        }
    }
}

#[async_trait]
impl SkillProvider for CatalogSkills {
    async fn skill(&self, id: &str) -> Result<Option<Arc<SkillDefinition>>> {
        let Some(resolved) = self.resolution.find(id) else {
            return Ok(None);
        };
        let reader = match &self.store {
            Some((store, tenant)) => SkillFileReader::with_store(store.as_ref(), tenant),
            None => SkillFileReader::new(),
        };
        let text = reader
            .read_file(resolved, SKILL_MD)
            .await
            .map_err(|e| Error::Invalid {
                what: format!("skill `{}`", resolved.id),
                reason: e.to_string(),
            })?;
        let parsed = SkillMd::parse_str(&text, None, &ParseOptions::default()).document;
        let (instructions, verbosity, version) = match &parsed {
            Some(md) => (
                md.body.clone(),
                md.frontmatter
                    .metadata
                    .get("summary_verbosity")
                    .map(|v| Verbosity::from_declared(v)),
                md.frontmatter.version.clone(),
            ),
            None => (text.clone(), None, None),
        };
        let trust = (self.trust)(resolved);
        let mut skill = SkillDefinition::instruction(resolved.id.clone(), instructions)
            .trust(trust)
            .risk(
                self.risks
                    .get(&resolved.id)
                    .copied()
                    .or(self.default_risk)
                    .unwrap_or_else(|| skills_security::autonomy::default_risk(trust)),
            )
            .verbosity(verbosity.unwrap_or_default())
            .path(resolved.source_ref.clone())
            .category(resolved.category.clone());
        skill.kind = self.kind(resolved);
        skill.layer = resolved.layer;
        if let Some(version) = version.or_else(|| resolved.version.clone()) {
            skill = skill.version(version);
        }
        Ok(Some(Arc::new(skill)))
    }
}
