//! What the executor needs to know about a skill, and where it learns it: the host's
//! [`SkillProvider`], with [`InMemorySkills`] for tests and small hosts.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use skills_security::TrustLevel;
use skills_security::autonomy::RiskLevel;
use skills_security::sandbox::InputFile;

use super::retry::RetryPolicy;
use crate::context::Verbosity;
use crate::error::Result;
use crate::plan::StepSpec;

/// A script skill: which referenced script runs, from which directory.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ScriptSpec {
    /// The skill's directory on this host (read-only inside the sandbox).
    pub skill_dir: PathBuf,
    /// The script, relative to the skill directory; it must be referenced by the skill's
    /// instructions.
    pub script: String,
    /// Its arguments (an array, never a shell string).
    pub args: Vec<String>,
    /// The skill's files, relative paths (what the instructions may reference).
    pub files: Vec<String>,
    /// Whether the step's input (sanitized for the skill's trust) is written to the
    /// script's standard input (the default).
    pub stdin_input: bool,
    /// Files the host stages read-only at `inputs/<name>` in the script's working directory
    /// (an attachment the task is about). They are the host's choice and are not
    /// sanitized: stage only what a skill of this trust may see.
    pub input_files: Vec<InputFile>,
}

impl ScriptSpec {
    /// Runs `script` of the skill in `skill_dir`; `files` lists the skill's files.
    pub fn new(
        skill_dir: impl Into<PathBuf>,
        script: impl Into<String>,
        files: Vec<String>,
    ) -> Self {
        ScriptSpec {
            skill_dir: skill_dir.into(),
            script: script.into(),
            args: Vec::new(),
            files,
            stdin_input: true,
            input_files: Vec::new(),
        }
    }

    /// Keeps the step's input off the script's standard input (it then reads nothing).
    pub fn without_stdin(mut self) -> Self {
        self.stdin_input = false;
        self
    }

    /// Stages `file` at `inputs/<name>` for every run of the script.
    pub fn input_file(mut self, file: InputFile) -> Self {
        self.input_files.push(file);
        self
    }

    /// Sets the arguments.
    pub fn args(mut self, args: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.args = args.into_iter().map(Into::into).collect();
        self
    }
}

/// How a skill runs.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum SkillKind {
    /// Its instructions are followed by the model, in an isolated sub-agent context.
    Instruction,
    /// A script its instructions reference runs in the sandbox, after approval.
    Script(ScriptSpec),
    /// A [`NativeSkill`](super::NativeSkill) registered with the executor under `name`.
    Native {
        /// The registered name.
        name: String,
    },
    /// A nested plan of other skills, run by the same executor (depth-limited).
    Composite {
        /// The sub-steps.
        steps: Vec<StepSpec>,
    },
}

/// A skill as the executor runs it.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct SkillDefinition {
    /// The id plans name it by.
    pub id: String,
    /// Its path or source (`owner/repo/skill`), for audit records and the gate.
    pub path: String,
    /// Its version.
    pub version: Option<String>,
    /// Its category (permission rules may target it).
    pub category: Option<String>,
    /// How far it is trusted: decides what data it sees and its sandbox limits.
    pub trust: TrustLevel,
    /// The risk of what it does (the gate's autonomy check).
    pub risk: RiskLevel,
    /// How long its working-memory summary may be.
    pub verbosity: Verbosity,
    /// How it runs.
    pub kind: SkillKind,
    /// Its instructions (the SKILL.md body).
    pub instructions: String,
    /// What its answer must look like (the sub-agent's `<output_format>`).
    pub output_format: String,
    /// A time limit overriding the sandbox configuration's for its trust level; native
    /// skills have none unless set here.
    pub timeout: Option<Duration>,
    /// A retry policy overriding the executor's.
    pub retry: Option<RetryPolicy>,
    /// Its layer (seed 001, 0-4), when known. A native skill in layer 0 ([`KERNEL_LAYER`])
    /// gets its [stores](super::SkillStores) read-only: seed 001's kernel is read-only at run
    /// time.
    pub layer: Option<u8>,
}

/// Seed 001's kernel layer: identity and security skills, read-only at run time.
pub const KERNEL_LAYER: u8 = 0;

/// The output format asked of instruction skills unless the skill declares its own.
pub const DEFAULT_OUTPUT_FORMAT: &str = "Answer in plain text. Optionally answer with one JSON \
object instead: {\"summary\": text, \"artifacts\": [paths], \"extracted_facts\": [{\"subject\", \
\"predicate\", \"object\"}], \"next_step_hints\": [text]}.";

impl SkillDefinition {
    fn with_kind(id: impl Into<String>, kind: SkillKind) -> Self {
        let id = id.into();
        SkillDefinition {
            path: id.clone(),
            id,
            version: None,
            category: None,
            trust: TrustLevel::Community,
            risk: skills_security::autonomy::default_risk(TrustLevel::Community),
            verbosity: Verbosity::default(),
            kind,
            instructions: String::new(),
            output_format: DEFAULT_OUTPUT_FORMAT.to_owned(),
            timeout: None,
            retry: None,
            layer: None,
        }
    }

    /// An instruction skill. Like every constructor: community trust (the least), the
    /// [default risk](skills_security::autonomy::default_risk) of its trust level,
    /// unspecified verbosity, path = id.
    pub fn instruction(id: impl Into<String>, instructions: impl Into<String>) -> Self {
        let mut skill = Self::with_kind(id, SkillKind::Instruction);
        skill.instructions = instructions.into();
        skill
    }

    /// A native skill run by the implementation registered under its own id.
    pub fn native(id: impl Into<String>) -> Self {
        let id = id.into();
        Self::with_kind(id.clone(), SkillKind::Native { name: id })
    }

    /// A script skill; `instructions` must reference the script.
    pub fn script(
        id: impl Into<String>,
        instructions: impl Into<String>,
        script: ScriptSpec,
    ) -> Self {
        let mut skill = Self::with_kind(id, SkillKind::Script(script));
        skill.instructions = instructions.into();
        skill
    }

    /// A composite skill running `steps` as a nested plan.
    pub fn composite(id: impl Into<String>, steps: Vec<StepSpec>) -> Self {
        Self::with_kind(id, SkillKind::Composite { steps })
    }

    /// Sets the trust level. A risk still at the previous level's default follows to the
    /// new level's default; a risk set with [`risk`](Self::risk) stays.
    pub fn trust(mut self, trust: TrustLevel) -> Self {
        use skills_security::autonomy::default_risk;
        if self.risk == default_risk(self.trust) {
            self.risk = default_risk(trust);
        }
        self.trust = trust;
        self
    }

    /// Sets the risk.
    pub fn risk(mut self, risk: RiskLevel) -> Self {
        self.risk = risk;
        self
    }

    /// Sets the summary verbosity.
    pub fn verbosity(mut self, verbosity: Verbosity) -> Self {
        self.verbosity = verbosity;
        self
    }

    /// Sets the path.
    pub fn path(mut self, path: impl Into<String>) -> Self {
        self.path = path.into();
        self
    }

    /// Sets the version.
    pub fn version(mut self, version: impl Into<String>) -> Self {
        self.version = Some(version.into());
        self
    }

    /// Sets the category.
    pub fn category(mut self, category: impl Into<String>) -> Self {
        self.category = Some(category.into());
        self
    }

    /// Sets the output format.
    pub fn output_format(mut self, format: impl Into<String>) -> Self {
        self.output_format = format.into();
        self
    }

    /// Sets a time limit.
    pub fn timeout(mut self, limit: Duration) -> Self {
        self.timeout = Some(limit);
        self
    }

    /// Sets a retry policy.
    pub fn retry(mut self, policy: RetryPolicy) -> Self {
        self.retry = Some(policy);
        self
    }

    /// Sets the layer (see [`SkillDefinition::layer`]).
    pub fn layer(mut self, layer: u8) -> Self {
        self.layer = Some(layer);
        self
    }

    /// True when it sits in the kernel layer ([`KERNEL_LAYER`]).
    pub fn is_kernel(&self) -> bool {
        self.layer == Some(KERNEL_LAYER)
    }
}

/// Where the executor looks skills up. Hosts implement it over their catalog (see
/// [`CatalogSkills`](super::CatalogSkills)) or use [`InMemorySkills`].
#[async_trait]
pub trait SkillProvider: Send + Sync {
    /// The skill `id` names, or `None` when this agent has no such skill.
    async fn skill(&self, id: &str) -> Result<Option<Arc<SkillDefinition>>>;
}

/// Skills held in memory, by id.
///
/// ```
/// use skills_orchestrate::execute::{InMemorySkills, SkillDefinition, SkillProvider};
///
/// # futures::executor::block_on(async {
/// let skills = InMemorySkills::new().with(SkillDefinition::native("count"));
/// assert!(skills.skill("count").await?.is_some());
/// assert!(skills.skill("other").await?.is_none());
/// # Ok::<(), skills_orchestrate::Error>(())
/// # }).unwrap();
/// ```
#[derive(Debug, Clone, Default)]
pub struct InMemorySkills {
    skills: BTreeMap<String, Arc<SkillDefinition>>,
}

impl InMemorySkills {
    /// No skills.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds (or replaces) a skill.
    pub fn with(mut self, skill: SkillDefinition) -> Self {
        self.insert(skill);
        self
    }

    /// Adds (or replaces) a skill.
    pub fn insert(&mut self, skill: SkillDefinition) {
        self.skills.insert(skill.id.clone(), Arc::new(skill));
    }
}

#[async_trait]
impl SkillProvider for InMemorySkills {
    async fn skill(&self, id: &str) -> Result<Option<Arc<SkillDefinition>>> {
        Ok(self.skills.get(id).cloned())
    }
}
