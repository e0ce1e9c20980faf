//! The registry: loaded skills and native Rust skills under one namespace, with their
//! dependency graph, layer rules, load order, initialization and health.

mod graph;
mod native;

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use futures::future::join_all;
use serde::Serialize;

pub use graph::{Gateway, LayerPolicy, RegistryCheck};
pub use native::{BoxError, HealthStatus, NativeSkill};

use crate::diagnostic::{Diagnostic, Profile, Rule};
use crate::error::Error;
use crate::skill::Skill;
use crate::status::SkillStatus;

/// A skill in the registry.
#[derive(Clone)]
pub enum RegisteredSkill {
    /// A skill loaded from a directory.
    Loaded(Box<Skill>),
    /// A skill implemented in Rust.
    Native(Arc<dyn NativeSkill>),
}

impl std::fmt::Debug for RegisteredSkill {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RegisteredSkill::Loaded(skill) => f.debug_tuple("Loaded").field(&skill.name()).finish(),
            RegisteredSkill::Native(skill) => f.debug_tuple("Native").field(&skill.name()).finish(),
        }
    }
}

impl RegisteredSkill {
    /// The skill's name.
    pub fn name(&self) -> &str {
        match self {
            RegisteredSkill::Loaded(skill) => skill.name(),
            RegisteredSkill::Native(skill) => skill.name(),
        }
    }

    /// The skill's layer, if it has one.
    pub fn layer(&self) -> Option<u8> {
        match self {
            RegisteredSkill::Loaded(skill) => skill.layer(),
            RegisteredSkill::Native(skill) => skill.layer(),
        }
    }

    /// The names of the skills it depends on.
    pub fn dependencies(&self) -> Vec<String> {
        match self {
            RegisteredSkill::Loaded(skill) => skill.dependencies().to_vec(),
            RegisteredSkill::Native(skill) => skill.dependencies(),
        }
    }

    /// Its lifecycle status (`None`: active).
    pub fn status(&self) -> Option<SkillStatus> {
        match self {
            RegisteredSkill::Loaded(skill) => skill.status(),
            RegisteredSkill::Native(skill) => skill.status(),
        }
    }

    /// The agent focuses it suits.
    pub fn focus_affinity(&self) -> Vec<String> {
        match self {
            RegisteredSkill::Loaded(skill) => skill.focus_affinity().to_vec(),
            RegisteredSkill::Native(skill) => skill.focus_affinity(),
        }
    }
}

/// What [`SkillRegistry::initialize`] did.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
#[non_exhaustive]
pub struct InitReport {
    /// Skills ready for use, in the order they became ready.
    pub ready: Vec<String>,
    /// Skills not ready: failed, or blocked by a dependency.
    pub not_ready: BTreeSet<String>,
    /// The structural check's diagnostics, then one per failure.
    pub diagnostics: Vec<Diagnostic>,
}

/// Health of every skill and the worst of them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct HealthReport {
    /// The worst status of any skill ([`HealthStatus::Healthy`] when there are none).
    pub overall: HealthStatus,
    /// Each skill's status, by name.
    pub skills: BTreeMap<String, HealthStatus>,
}

/// Loaded and native skills under one namespace.
///
/// ```
/// use std::sync::Arc;
/// use async_trait::async_trait;
/// use skills_core::registry::{BoxError, NativeSkill, SkillRegistry};
///
/// struct Named(&'static str, u8, &'static [&'static str]);
///
/// #[async_trait]
/// impl NativeSkill for Named {
///     fn name(&self) -> &str { self.0 }
///     fn layer(&self) -> Option<u8> { Some(self.1) }
///     fn dependencies(&self) -> Vec<String> { self.2.iter().map(|s| s.to_string()).collect() }
/// }
///
/// let mut registry = SkillRegistry::default();
/// registry.register_native(Arc::new(Named("research", 3, &["api_client"])))?;
/// registry.register_native(Arc::new(Named("api_client", 1, &[])))?;
/// assert_eq!(registry.check().load_order, ["api_client", "research"]);
///
/// let report = futures::executor::block_on(registry.initialize());
/// assert_eq!(report.ready, ["api_client", "research"]);
/// # Ok::<(), skills_core::Error>(())
/// ```
#[derive(Debug, Clone, Default)]
pub struct SkillRegistry {
    skills: BTreeMap<String, RegisteredSkill>,
    policy: LayerPolicy,
}

impl SkillRegistry {
    /// An empty registry applying `policy`.
    pub fn new(policy: LayerPolicy) -> Self {
        SkillRegistry {
            skills: BTreeMap::new(),
            policy,
        }
    }

    /// The layer policy.
    pub fn policy(&self) -> &LayerPolicy {
        &self.policy
    }

    /// Registers a loaded skill; a name already taken is refused.
    pub fn register_skill(&mut self, skill: Skill) -> Result<(), Error> {
        self.insert(RegisteredSkill::Loaded(Box::new(skill)))
    }

    /// Registers a native skill. A name a skill directory could not carry (seed 001's
    /// naming agreement: snake_case like `api_client`, or an Agent Skills name, canonical and
    /// at most 64 characters) is refused with [`Error::InvalidName`] naming every rule it
    /// breaks; a name already taken with [`Error::DuplicateSkill`].
    ///
    /// ```
    /// use std::sync::Arc;
    /// use async_trait::async_trait;
    /// use skills_core::registry::{NativeSkill, SkillRegistry};
    ///
    /// struct Named(&'static str);
    /// #[async_trait]
    /// impl NativeSkill for Named {
    ///     fn name(&self) -> &str { self.0 }
    /// }
    ///
    /// let mut registry = SkillRegistry::default();
    /// assert!(registry.register_native(Arc::new(Named("input_guard"))).is_ok());
    /// let refused = registry.register_native(Arc::new(Named("InputGuard")));
    /// assert!(matches!(refused, Err(skills_core::Error::InvalidName { .. })));
    /// assert_eq!(registry.len(), 1);
    /// ```
    pub fn register_native(&mut self, skill: Arc<dyn NativeSkill>) -> Result<(), Error> {
        let diagnostics = crate::name::native_problems(skill.name());
        if !diagnostics.is_empty() {
            return Err(Error::InvalidName {
                name: skill.name().to_owned(),
                diagnostics,
            });
        }
        self.insert(RegisteredSkill::Native(skill))
    }

    /// Registers many loaded skills; each one whose name is taken is refused with a
    /// [`Rule::DuplicateSkillName`] diagnostic, and the first one registered wins.
    pub fn register_all(&mut self, skills: impl IntoIterator<Item = Skill>) -> Vec<Diagnostic> {
        let mut diagnostics = Vec::new();
        for skill in skills {
            let dir = skill.dir().display().to_string();
            if let Err(Error::DuplicateSkill { name }) = self.register_skill(skill) {
                diagnostics.push(
                    Diagnostic::new(
                        Rule::DuplicateSkillName,
                        Profile::Spec,
                        format!("a skill named `{name}` is already registered; `{dir}` is skipped"),
                    )
                    .in_file(dir),
                );
            }
        }
        diagnostics
    }

    fn insert(&mut self, skill: RegisteredSkill) -> Result<(), Error> {
        let name = skill.name().to_owned();
        if self.skills.contains_key(&name) {
            return Err(Error::DuplicateSkill { name });
        }
        self.skills.insert(name, skill);
        Ok(())
    }

    /// Removes a skill by name.
    pub fn remove(&mut self, name: &str) -> Result<RegisteredSkill, Error> {
        self.skills.remove(name).ok_or_else(|| Error::UnknownSkill {
            name: name.to_owned(),
        })
    }

    /// A skill by name.
    pub fn get(&self, name: &str) -> Option<&RegisteredSkill> {
        self.skills.get(name)
    }

    /// Every skill, by name.
    pub fn iter(&self) -> impl Iterator<Item = &RegisteredSkill> {
        self.skills.values()
    }

    /// The skills whose `focus_affinity` names `focus` (seed 001's agent focuses:
    /// `orchestrator`, `devsecops`, `data`, ...), loaded and native alike, in name order.
    /// Focuses compare trimmed and ASCII case-insensitively. Deprecated skills are listed
    /// too (with their [`status`](RegisteredSkill::status)): this is a listing, not a
    /// choice; selection leaves them out.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use async_trait::async_trait;
    /// use skills_core::registry::{NativeSkill, SkillRegistry};
    /// use skills_core::SkillStatus;
    ///
    /// struct Focused(&'static str, &'static [&'static str], Option<SkillStatus>);
    /// #[async_trait]
    /// impl NativeSkill for Focused {
    ///     fn name(&self) -> &str { self.0 }
    ///     fn focus_affinity(&self) -> Vec<String> { self.1.iter().map(|f| f.to_string()).collect() }
    ///     fn status(&self) -> Option<SkillStatus> { self.2 }
    /// }
    ///
    /// let mut registry = SkillRegistry::default();
    /// registry.register_native(Arc::new(Focused("social", &["creative", "social"], None)))?;
    /// registry.register_native(Arc::new(Focused("memeothy", &["creative", "social"], None)))?;
    /// registry.register_native(Arc::new(Focused("market_data", &["trader"], None)))?;
    /// registry.register_native(Arc::new(Focused("old_poster", &["social"], Some(SkillStatus::Deprecated))))?;
    ///
    /// let social: Vec<&str> = registry.skills_for_focus("social").iter().map(|s| s.name()).collect();
    /// assert_eq!(social, ["memeothy", "old_poster", "social"]);
    /// assert_eq!(registry.skills_for_focus("Trader")[0].name(), "market_data");
    /// assert!(registry.skills_for_focus("journalist").is_empty());
    /// # Ok::<(), skills_core::Error>(())
    /// ```
    pub fn skills_for_focus(&self, focus: &str) -> Vec<&RegisteredSkill> {
        let focus = focus.trim();
        if focus.is_empty() {
            return Vec::new();
        }
        self.skills
            .values()
            .filter(|skill| {
                skill
                    .focus_affinity()
                    .iter()
                    .any(|f| f.trim().eq_ignore_ascii_case(focus))
            })
            .collect()
    }

    /// How many skills are registered.
    pub fn len(&self) -> usize {
        self.skills.len()
    }

    /// True when nothing is registered.
    pub fn is_empty(&self) -> bool {
        self.skills.is_empty()
    }

    /// Checks the dependency graph and layer rules and computes the load order.
    pub fn check(&self) -> RegistryCheck {
        let dependencies: Vec<(String, Option<u8>, Vec<String>)> = self
            .skills
            .values()
            .map(|s| (s.name().to_owned(), s.layer(), s.dependencies()))
            .collect();
        let nodes: Vec<graph::Node<'_>> = dependencies
            .iter()
            .map(|(name, layer, deps)| graph::Node {
                name,
                layer: *layer,
                dependencies: deps.clone(),
            })
            .collect();
        graph::check(&nodes, &self.policy)
    }

    /// Initializes native skills in dependency order: each wave of skills whose dependencies
    /// are all ready runs concurrently, and a skill whose dependency failed is not started.
    /// Loaded skills are data and are ready as soon as their dependencies are.
    pub async fn initialize(&self) -> InitReport {
        let check = self.check();
        let mut report = InitReport {
            diagnostics: check.diagnostics,
            not_ready: check.unavailable,
            ready: Vec::new(),
        };
        let mut ready: BTreeSet<&str> = BTreeSet::new();
        let mut pending: Vec<&str> = check.load_order.iter().map(String::as_str).collect();
        while !pending.is_empty() {
            let (wave, rest): (Vec<&str>, Vec<&str>) = pending.iter().partition(|name| {
                self.skills
                    .get(**name)
                    .is_some_and(|s| s.dependencies().iter().all(|d| ready.contains(d.as_str())))
            });
            if wave.is_empty() {
                // Everything left waits on something that failed.
                for name in rest {
                    report.not_ready.insert(name.to_owned());
                    report.diagnostics.push(Diagnostic::new(
                        Rule::DependencyUnavailable,
                        Profile::Spec,
                        format!("skill `{name}` was not initialized because a dependency failed"),
                    ));
                }
                break;
            }
            let results = join_all(wave.iter().map(|name| async move {
                match self.skills.get(*name) {
                    Some(RegisteredSkill::Native(skill)) => skill.initialize().await,
                    _ => Ok(()),
                }
            }))
            .await;
            for (name, result) in wave.iter().zip(results) {
                match result {
                    Ok(()) => {
                        ready.insert(name);
                        report.ready.push((*name).to_owned());
                    }
                    Err(err) => {
                        report.not_ready.insert((*name).to_owned());
                        report.diagnostics.push(Diagnostic::new(
                            Rule::InitializationFailed,
                            Profile::Spec,
                            format!("skill `{name}` failed to initialize: {err}"),
                        ));
                    }
                }
            }
            pending = rest;
        }
        report
    }

    /// Asks every native skill for its health (concurrently) and aggregates. Loaded skills
    /// are healthy; a skill the structural check leaves unavailable is unhealthy.
    pub async fn health(&self) -> HealthReport {
        let unavailable = self.check().unavailable;
        let statuses = join_all(self.skills.values().map(|skill| {
            let unavailable = unavailable.contains(skill.name());
            async move {
                if unavailable {
                    return HealthStatus::Unhealthy(
                        "unavailable: see the registry check's diagnostics".to_owned(),
                    );
                }
                match skill {
                    RegisteredSkill::Native(native) => native.health_check().await,
                    RegisteredSkill::Loaded(_) => HealthStatus::Healthy,
                }
            }
        }))
        .await;
        let skills: BTreeMap<String, HealthStatus> =
            self.skills.keys().cloned().zip(statuses).collect();
        let overall = skills
            .values()
            .max()
            .cloned()
            .unwrap_or(HealthStatus::Healthy);
        HealthReport { overall, skills }
    }
}

#[cfg(test)]
mod tests;
