//! The [`Executor`], its builder, and one [`Run`]'s parameters.

use std::collections::HashMap;
use std::fmt;
use std::path::PathBuf;
use std::sync::Arc;

use skills_security::approval::Approvals;
use skills_security::gate::PolicyGate;
use skills_security::sandbox::{Sandbox, SandboxConfig};
use skills_security::{Clearance, Context, Sanitizer, TrustLevel};
use skills_store_traits::{PlanStore, UserScope};

use super::approve::StepApprover;
use super::cancel::CancelToken;
use super::memory::SummaryMode;
use super::native::{NativeSkill, NativeSkills};
use super::result::ExecutionResult;
use super::retry::RetryPolicy;
use super::skills::SkillProvider;
use super::timer::{ThreadTimer, Timer};
use crate::context::ContextBudgets;
use crate::error::Result;
use crate::llm::{EstimatedTokens, LlmClient, TokenCounter};
use crate::plan::ExecutionPlan;
use crate::progress::{NoProgress, ProgressSink};

/// Everything the executor was built with; shared by clones and nested runs.
pub(super) struct Parts {
    pub(super) skills: Arc<dyn SkillProvider>,
    pub(super) llm: Option<Arc<dyn LlmClient>>,
    pub(super) natives: NativeSkills,
    pub(super) sandbox: Option<Arc<dyn Sandbox>>,
    pub(super) approvals: Option<Arc<Approvals>>,
    pub(super) scratch_dir: PathBuf,
    pub(super) sandbox_configs: HashMap<TrustLevel, SandboxConfig>,
    pub(super) gate: PolicyGate,
    pub(super) approver: Option<Arc<dyn StepApprover>>,
    pub(super) store: Option<Arc<dyn PlanStore>>,
    pub(super) sanitizer: Sanitizer,
    pub(super) recipient: Clearance,
    pub(super) budgets: ContextBudgets,
    pub(super) counter: Arc<dyn TokenCounter>,
    pub(super) concurrency: usize,
    pub(super) retry: RetryPolicy,
    pub(super) step_retry: HashMap<String, RetryPolicy>,
    pub(super) timer: Arc<dyn Timer>,
    pub(super) summaries: SummaryMode,
    pub(super) max_depth: usize,
    pub(super) max_output_tokens: u32,
}

impl Parts {
    /// The sandbox configuration for `trust`: the host's, else seed 000's preset.
    pub(super) fn sandbox_config(&self, trust: TrustLevel) -> SandboxConfig {
        self.sandbox_configs
            .get(&trust)
            .cloned()
            .unwrap_or_else(|| SandboxConfig::for_trust(trust))
    }
}

/// Runs [`ExecutionPlan`]s: group by group, steps of a group concurrently up to a limit,
/// each step through the security pipeline. See the [module docs](super) for the pipeline
/// and an example. Cheap to clone.
#[derive(Clone)]
pub struct Executor {
    pub(super) parts: Arc<Parts>,
}

impl fmt::Debug for Executor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let p = &self.parts;
        f.debug_struct("Executor")
            .field("natives", &p.natives)
            .field("llm", &p.llm.is_some())
            .field("sandbox", &p.sandbox.is_some())
            .field("gate_checks", &p.gate.checks())
            .field("store", &p.store.is_some())
            .field("concurrency", &p.concurrency)
            .field("retry", &p.retry)
            .field("max_depth", &p.max_depth)
            .finish_non_exhaustive()
    }
}

/// Builds an [`Executor`]. The skill provider and the policy gate are required; see each
/// method for what leaving the rest out means.
pub struct ExecutorBuilder {
    parts: Parts,
}

impl fmt::Debug for ExecutorBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ExecutorBuilder").finish_non_exhaustive()
    }
}

impl Executor {
    /// A builder over the host's skills, asking `gate` before every step (its decisions and
    /// the execution records go to its audit trail). There is no executor without a gate: a
    /// host that wants none says so with [`PolicyGate::allow_all`].
    pub fn builder(skills: Arc<dyn SkillProvider>, gate: PolicyGate) -> ExecutorBuilder {
        ExecutorBuilder {
            parts: Parts {
                skills,
                llm: None,
                natives: NativeSkills::new(),
                sandbox: None,
                approvals: None,
                scratch_dir: std::env::temp_dir(),
                sandbox_configs: HashMap::new(),
                gate,
                approver: None,
                store: None,
                sanitizer: Sanitizer::default(),
                recipient: Clearance::ALL,
                budgets: ContextBudgets::default(),
                counter: Arc::new(EstimatedTokens),
                concurrency: 4,
                retry: RetryPolicy::default(),
                step_retry: HashMap::new(),
                timer: Arc::new(ThreadTimer::new()),
                summaries: SummaryMode::default(),
                max_depth: 4,
                max_output_tokens: 2_000,
            },
        }
    }

    /// Runs `plan`. Returns the outcome of every step, also when some failed (partial
    /// results); fails only when the run cannot start (the plan's groups do not match its
    /// steps, or, for a [stored](Run::stored_plan) run, the plan store cannot be read or does
    /// not hold the plan).
    pub async fn execute(&self, plan: &ExecutionPlan, run: Run) -> Result<ExecutionResult> {
        self.run_plan(plan, run, 0).await
    }

    /// The audit trail the gate writes to (where the orchestrator records plans' events).
    pub fn audit_trail(&self) -> &skills_security::audit::AuditTrail {
        self.parts.gate.trail()
    }
}

impl ExecutorBuilder {
    /// The model for instruction skills and for summaries. Without one, instruction skills
    /// fail as unavailable and long outputs are truncated.
    pub fn llm(mut self, llm: Arc<dyn LlmClient>) -> Self {
        self.parts.llm = Some(llm);
        self
    }

    /// Registers a native skill under `name` (what [`SkillKind::Native`](super::SkillKind)
    /// names).
    pub fn native(mut self, name: impl Into<String>, skill: Arc<dyn NativeSkill>) -> Self {
        self.parts.natives.register(name, skill);
        self
    }

    /// Replaces the native-skill registry.
    pub fn natives(mut self, natives: NativeSkills) -> Self {
        self.parts.natives = natives;
        self
    }

    /// The sandbox for script skills. Without one, script skills fail as unavailable.
    pub fn sandbox(mut self, sandbox: Arc<dyn Sandbox>) -> Self {
        self.parts.sandbox = Some(sandbox);
        self
    }

    /// Who approves scripts. Without it no script is approved, so none runs. (Approval
    /// timeouts run on the `Approvals`' own timer: no runtime is needed.)
    pub fn script_approvals(mut self, approvals: Arc<Approvals>) -> Self {
        self.parts.approvals = Some(approvals);
        self
    }

    /// Where script runs get their scratch directories (default: the system temp dir).
    pub fn scratch_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.parts.scratch_dir = dir.into();
        self
    }

    /// Overrides the sandbox configuration (limits, timeout) for skills of `trust`.
    pub fn sandbox_config(mut self, trust: TrustLevel, config: SandboxConfig) -> Self {
        self.parts.sandbox_configs.insert(trust, config);
        self
    }

    /// Who answers the gate's approval requests. Without one they are refused.
    pub fn approver(mut self, approver: Arc<dyn StepApprover>) -> Self {
        self.parts.approver = Some(approver);
        self
    }

    /// The plan store: runs given a [`Run::stored_plan`] id persist working memory step by
    /// step there, and a re-run reuses the steps already complete.
    pub fn plan_store(mut self, store: Arc<dyn PlanStore>) -> Self {
        self.parts.store = Some(store);
        self
    }

    /// The sanitizer (default: the default classifier).
    pub fn sanitizer(mut self, sanitizer: Sanitizer) -> Self {
        self.parts.sanitizer = sanitizer;
        self
    }

    /// Which tokens are restored in checked outputs and working memory (default: all; the
    /// recipient is the user's own orchestrator, and every step's input is sanitized again
    /// for that step's skill). A step whose skill saw raw data of a class the recipient is
    /// not cleared for hands back nothing but a `[WITHHELD: ...]` marker (its output,
    /// summary, artifacts, facts and hints), since it may return those raw values; what the
    /// skill saw only as tokens stays tokens.
    pub fn recipient_clearance(mut self, clearance: Clearance) -> Self {
        self.parts.recipient = clearance;
        self
    }

    /// The token budgets (the sub-agent context uses `skill_execution`).
    pub fn budgets(mut self, budgets: ContextBudgets) -> Self {
        self.parts.budgets = budgets;
        self
    }

    /// The token counter (default: [`EstimatedTokens`]).
    pub fn token_counter(mut self, counter: Arc<dyn TokenCounter>) -> Self {
        self.parts.counter = counter;
        self
    }

    /// How many steps of one group run at once (default 4, at least 1).
    pub fn concurrency(mut self, limit: usize) -> Self {
        self.parts.concurrency = limit.max(1);
        self
    }

    /// The default retry policy.
    pub fn retry(mut self, policy: RetryPolicy) -> Self {
        self.parts.retry = policy;
        self
    }

    /// The retry policy of the step with id `step_id` (over the skill's and the default).
    pub fn step_retry(mut self, step_id: impl Into<String>, policy: RetryPolicy) -> Self {
        self.parts.step_retry.insert(step_id.into(), policy);
        self
    }

    /// The timer for backoff and timeouts (default: [`ThreadTimer`]).
    pub fn timer(mut self, timer: Arc<dyn Timer>) -> Self {
        self.parts.timer = timer;
        self
    }

    /// How over-long outputs are summarized (default: by the model when there is one).
    pub fn summaries(mut self, mode: SummaryMode) -> Self {
        self.parts.summaries = mode;
        self
    }

    /// How deeply composite skills may nest (default 4).
    pub fn max_depth(mut self, depth: usize) -> Self {
        self.parts.max_depth = depth;
        self
    }

    /// The most tokens an instruction skill's answer may use (default 2,000).
    pub fn max_output_tokens(mut self, tokens: u32) -> Self {
        self.parts.max_output_tokens = tokens;
        self
    }

    /// The executor.
    pub fn build(self) -> Executor {
        Executor {
            parts: Arc::new(self.parts),
        }
    }
}

/// One run's parameters: whose it is, its input, where progress goes, how to stop it.
#[derive(Clone)]
pub struct Run {
    pub(super) scope: UserScope,
    pub(super) input: String,
    pub(super) source: Context,
    pub(super) progress: Arc<dyn ProgressSink>,
    pub(super) cancel: CancelToken,
    pub(super) agent: Option<String>,
    /// The plan store's id of the plan, when the run is persisted.
    pub(super) stored_plan: Option<String>,
    /// The host's chat or session id: what a script approval's `yes_in_session` covers.
    pub(super) session: Option<String>,
    /// This run, unique in the process: the session of a run without the host's chat.
    pub(super) run_id: u64,
}

/// Numbers runs (see [`Run::session`]): a `yes_in_session` without the host's chat covers
/// one run, and the approvals cache lives in this process.
static RUNS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);

impl fmt::Debug for Run {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Run")
            .field("scope", &self.scope)
            .field("input_bytes", &self.input.len())
            .field("source", &self.source)
            .field("cancelled", &self.cancel.is_cancelled())
            .field("agent", &self.agent)
            .field("stored_plan", &self.stored_plan)
            .field("session", &self.session)
            .finish_non_exhaustive()
    }
}

impl Run {
    /// A run for `scope` with no input, no progress shown and a fresh cancel token.
    pub fn new(scope: UserScope) -> Self {
        Run {
            scope,
            input: String::new(),
            source: Context::default(),
            progress: Arc::new(NoProgress),
            cancel: CancelToken::new(),
            agent: None,
            stored_plan: None,
            session: None,
            run_id: RUNS.fetch_add(1, std::sync::atomic::Ordering::Relaxed),
        }
    }

    /// The task's input data (each step sees it sanitized for its skill).
    pub fn input(mut self, input: impl Into<String>) -> Self {
        self.input = input.into();
        self
    }

    /// Where the input comes from, for classification (`crm_deal` is confidential).
    pub fn source(mut self, source: Context) -> Self {
        self.source = source;
        self
    }

    /// Where progress events go.
    pub fn progress(mut self, sink: Arc<dyn ProgressSink>) -> Self {
        self.progress = sink;
        self
    }

    /// The token that cancels the run.
    pub fn cancel(mut self, token: CancelToken) -> Self {
        self.cancel = token;
        self
    }

    /// Persists the run under `plan_id`, the id the plan store gave the plan
    /// ([`save_plan`](crate::plan::save_plan)'s record id): each step's working memory is
    /// written as it completes, and the steps already complete there (from an earlier,
    /// interrupted run) are reused instead of run again (a reused step shows as
    /// `step_complete` with its stored summary, without `step_starting`). Needs a plan store
    /// on the executor; without this call nothing is persisted.
    pub fn stored_plan(mut self, plan_id: impl Into<String>) -> Self {
        self.stored_plan = Some(plan_id.into());
        self
    }

    /// The agent acting (for the gate and the audit records).
    pub fn agent(mut self, agent: impl Into<String>) -> Self {
        self.agent = Some(agent.into());
        self
    }

    /// The host's chat (or session) id: a script approved `yes_in_session` runs again
    /// without asking in later runs of the same user's chat, while what was approved is
    /// unchanged. The answer is keyed on the tenant, the user and this id, so a chat id
    /// shared between users never carries one user's answer to another. Without it, an
    /// answer covers only this run.
    pub fn session(mut self, chat: impl Into<String>) -> Self {
        self.session = Some(chat.into());
        self
    }
}
