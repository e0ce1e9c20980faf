//! Skills written in Rust: the [`NativeSkill`] trait and the registry the executor looks
//! them up in.
//!
//! Not to be confused with `skills_core::registry::NativeSkill`, which covers a Rust skill's
//! life cycle (initialization, health); this trait is how one runs as a plan step.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;

use async_trait::async_trait;

use super::memory::StepOutput;
use super::retry::StepError;
use super::skills::SkillDefinition;
use super::stores::SkillStores;

/// What a native skill is given: the same isolated view an instruction skill's model gets.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct SkillInput {
    /// The plan step's id.
    pub step_id: String,
    /// The skill's id.
    pub skill_id: String,
    /// Which attempt this is, from 1.
    pub attempt: u32,
    /// The step's briefing.
    pub briefing: String,
    /// The input data (the task input and the dependencies' working memory), sanitized for
    /// the skill's trust level.
    pub input: String,
    /// The rendered sub-agent context (`<task>`, `<skill_instructions>`, `<input_data>`,
    /// `<output_format>`) within the execution budget.
    pub context: String,
    /// The host's stores ([`NativeSkills::with_stores`]); read-only when the skill sits in
    /// the kernel layer ([`SkillDefinition::is_kernel`]).
    pub stores: SkillStores,
}

/// A skill implemented in Rust, run as a plan step. Object safe; hosts register an
/// `Arc<dyn NativeSkill>` by name with the executor.
///
/// It reaches the host's stores through [`SkillInput::stores`]: a skill in the kernel layer
/// ([`SkillDefinition::layer`] 0) gets them read-only, and its writes fail with
/// [`skills_store_traits::Error::ReadOnly`].
///
/// Its output is checked like any other: a value it was not cleared for, or a made-up
/// token, blocks the step.
///
/// ```
/// use async_trait::async_trait;
/// use skills_orchestrate::execute::{NativeSkill, SkillInput, StepError, StepOutput};
///
/// struct Shout;
///
/// #[async_trait]
/// impl NativeSkill for Shout {
///     async fn run(&self, input: &SkillInput) -> Result<StepOutput, StepError> {
///         Ok(StepOutput::text(input.briefing.to_uppercase()))
///     }
/// }
/// ```
#[async_trait]
pub trait NativeSkill: Send + Sync {
    /// Runs one attempt. Return [`StepError::transient`] for a failure worth retrying.
    async fn run(&self, input: &SkillInput) -> Result<StepOutput, StepError>;
}

/// Native skills by name, and the stores they are handed at run time.
#[derive(Clone, Default)]
pub struct NativeSkills {
    skills: BTreeMap<String, Arc<dyn NativeSkill>>,
    /// Names refused at registration, with why (a step naming one fails saying so).
    refused: BTreeMap<String, String>,
    stores: SkillStores,
}

impl fmt::Debug for NativeSkills {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.skills.keys()).finish()
    }
}

impl NativeSkills {
    /// An empty registry.
    pub fn new() -> Self {
        Self::default()
    }

    /// Registers `skill` under `name` (replacing any earlier one). A name a skill directory
    /// could not carry (seed 001's naming agreement, [`skills_core::native_problems`]) is
    /// not registered: a step naming it fails with the reason. [`try_register`](Self::try_register)
    /// returns the refusal instead.
    pub fn register(&mut self, name: impl Into<String>, skill: Arc<dyn NativeSkill>) {
        let name = name.into();
        if let Err(error) = self.try_register(name.clone(), skill) {
            self.refused.insert(name, error.to_string());
        }
    }

    /// Registers `skill` under `name`, or refuses a name outside the naming agreement with
    /// [`Error::Invalid`](crate::Error::Invalid) listing the rules it breaks.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use async_trait::async_trait;
    /// use skills_orchestrate::execute::{NativeSkill, NativeSkills, SkillInput, StepError, StepOutput};
    ///
    /// struct Noop;
    /// #[async_trait]
    /// impl NativeSkill for Noop {
    ///     async fn run(&self, _: &SkillInput) -> Result<StepOutput, StepError> { Ok(StepOutput::default()) }
    /// }
    /// let mut natives = NativeSkills::new();
    /// assert!(natives.try_register("crm_lookup", Arc::new(Noop)).is_ok());
    /// assert!(natives.try_register("CRM Lookup!", Arc::new(Noop)).is_err());
    /// assert_eq!(natives.names().collect::<Vec<_>>(), ["crm_lookup"]);
    /// ```
    pub fn try_register(
        &mut self,
        name: impl Into<String>,
        skill: Arc<dyn NativeSkill>,
    ) -> crate::error::Result<()> {
        let name = name.into();
        let problems = skills_core::native_problems(&name);
        if !problems.is_empty() {
            let rules: Vec<String> = problems.iter().map(|d| d.rule.code().to_owned()).collect();
            return Err(crate::Error::Invalid {
                what: format!("native skill name `{name}`"),
                reason: format!(
                    "a skill directory could not carry it ({})",
                    rules.join(", ")
                ),
            });
        }
        self.refused.remove(&name);
        self.skills.insert(name, skill);
        Ok(())
    }

    /// Why `name` was refused at registration, if it was.
    pub fn refusal(&self, name: &str) -> Option<&str> {
        self.refused.get(name).map(String::as_str)
    }

    /// The skill registered under `name`.
    pub fn get(&self, name: &str) -> Option<&Arc<dyn NativeSkill>> {
        self.skills.get(name)
    }

    /// The registered names, sorted.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.skills.keys().map(String::as_str)
    }

    /// The stores every native skill is handed in [`SkillInput::stores`] (default: none).
    ///
    /// ```
    /// use std::sync::Arc;
    /// use skills_orchestrate::execute::{NativeSkills, SkillStores};
    /// use skills_store_traits::in_memory::InMemoryMemoryStore;
    ///
    /// let natives = NativeSkills::new()
    ///     .with_stores(SkillStores::new().with_memory(Arc::new(InMemoryMemoryStore::new())));
    /// assert!(natives.stores().memory().is_some());
    /// ```
    pub fn with_stores(mut self, stores: SkillStores) -> Self {
        self.stores = stores;
        self
    }

    /// The stores handed to native skills.
    pub fn stores(&self) -> &SkillStores {
        &self.stores
    }

    /// The stores `skill` gets for one run: read-only when it sits in the kernel layer
    /// (seed 001: layer 0 is read-only at run time), the host's otherwise.
    pub(super) fn stores_for(&self, skill: &SkillDefinition) -> SkillStores {
        if skill.is_kernel() {
            self.stores.read_only()
        } else {
            self.stores.clone()
        }
    }
}
