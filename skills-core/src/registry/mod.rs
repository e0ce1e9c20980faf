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

    /// Registers a native skill; a name already taken is refused.
    pub fn register_native(&mut self, skill: Arc<dyn NativeSkill>) -> Result<(), Error> {
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
mod tests {
    use super::*;
    use async_trait::async_trait;
    use futures::executor::block_on;
    use std::sync::Mutex;

    struct Probe {
        name: &'static str,
        layer: Option<u8>,
        deps: Vec<String>,
        fail: bool,
        health: HealthStatus,
        log: Arc<Mutex<Vec<String>>>,
    }

    #[async_trait]
    impl NativeSkill for Probe {
        fn name(&self) -> &str {
            self.name
        }
        fn layer(&self) -> Option<u8> {
            self.layer
        }
        fn dependencies(&self) -> Vec<String> {
            self.deps.clone()
        }
        async fn initialize(&self) -> Result<(), BoxError> {
            self.log.lock().unwrap().push(self.name.to_owned());
            if self.fail {
                Err("boom".into())
            } else {
                Ok(())
            }
        }
        async fn health_check(&self) -> HealthStatus {
            self.health.clone()
        }
    }

    fn probe(
        log: &Arc<Mutex<Vec<String>>>,
        name: &'static str,
        layer: u8,
        deps: &[&str],
        fail: bool,
    ) -> Arc<Probe> {
        Arc::new(Probe {
            name,
            layer: Some(layer),
            deps: deps.iter().map(|d| (*d).to_owned()).collect(),
            fail,
            health: HealthStatus::Healthy,
            log: Arc::clone(log),
        })
    }

    #[test]
    fn duplicates_are_refused() {
        let log = Arc::default();
        let mut registry = SkillRegistry::default();
        registry
            .register_native(probe(&log, "a", 3, &[], false))
            .unwrap();
        let err = registry
            .register_native(probe(&log, "a", 3, &[], false))
            .unwrap_err();
        assert!(matches!(err, Error::DuplicateSkill { name } if name == "a"));
        assert_eq!(registry.len(), 1);
        assert!(registry.remove("a").is_ok());
        assert!(matches!(
            registry.remove("a"),
            Err(Error::UnknownSkill { .. })
        ));
    }

    #[test]
    fn initialization_follows_dependencies_and_stops_at_failures() {
        let log = Arc::new(Mutex::new(Vec::new()));
        let mut registry = SkillRegistry::default();
        for skill in [
            probe(&log, "schedule", 4, &["research"], false),
            probe(&log, "research", 3, &["llm"], false),
            probe(&log, "llm", 2, &["api_client"], true),
            probe(&log, "api_client", 1, &[], false),
            probe(&log, "guard", 0, &[], false),
        ] {
            registry.register_native(skill).unwrap();
        }
        let report = block_on(registry.initialize());
        // Ties go to the lower layer.
        assert_eq!(report.ready, vec!["guard", "api_client"]);
        assert_eq!(
            report.not_ready.iter().collect::<Vec<_>>(),
            vec!["llm", "research", "schedule"]
        );
        // `llm` ran and failed; nothing that depends on it was started.
        assert_eq!(*log.lock().unwrap(), vec!["guard", "api_client", "llm"]);
        let rules: Vec<Rule> = report.diagnostics.iter().map(|d| d.rule).collect();
        assert_eq!(
            rules,
            vec![
                Rule::InitializationFailed,
                Rule::DependencyUnavailable,
                Rule::DependencyUnavailable
            ]
        );
    }

    #[test]
    fn health_is_the_worst_of_all() {
        let log: Arc<Mutex<Vec<String>>> = Arc::default();
        let mut registry = SkillRegistry::default();
        assert_eq!(block_on(registry.health()).overall, HealthStatus::Healthy);
        let statuses = [
            ("a", HealthStatus::Healthy),
            ("b", HealthStatus::Degraded("slow".into())),
            ("c", HealthStatus::Healthy),
        ];
        for (name, health) in statuses {
            registry
                .register_native(Arc::new(Probe {
                    name,
                    layer: None,
                    deps: vec![],
                    fail: false,
                    health,
                    log: Arc::clone(&log),
                }))
                .unwrap();
        }
        let report = block_on(registry.health());
        assert_eq!(report.overall, HealthStatus::Degraded("slow".into()));
        registry
            .register_native(probe(&log, "d", 3, &["ghost"], false))
            .unwrap();
        let report = block_on(registry.health());
        assert!(matches!(report.overall, HealthStatus::Unhealthy(_)));
        assert!(matches!(report.skills["d"], HealthStatus::Unhealthy(_)));
    }
}
