//! Execution (seed 000 section 3.1): an [`ExecutionPlan`](crate::plan::ExecutionPlan) run
//! group by group, the steps of a group concurrently up to a limit, each step isolated.
//!
//! Every attempt of a step goes through one pipeline:
//!
//! 1. **resolve** the skill and its trust level through the host's [`SkillProvider`]
//!    ([`InMemorySkills`], or [`CatalogSkills`] over the catalog's resolver);
//! 2. **build the input** from working memory (the dependencies' [`MemoryEntry`]s, in plan
//!    order, after the task input) and **sanitize** it for the trust level, in a token vault
//!    scoped to this execution: the task input under the run's source, each entry at least at
//!    the class of what produced it (its [`data_class`](MemoryEntry::data_class)), so a value
//!    hidden from one step for where it came from stays hidden from every later step not
//!    cleared for that class;
//! 3. **ask the policy gate** with the classes the input holds; a denial, or an approval the
//!    [`StepApprover`] refuses, fails the step as denied: not retried, dependents skipped,
//!    audited;
//! 4. **build the isolated sub-agent context** (`<task>`, `<skill_instructions>`,
//!    `<input_data>`, `<output_format>`) within the skill-execution budget;
//! 5. **run it by kind** ([`SkillKind`]): an instruction skill through the model within its
//!    trust level's sandbox timeout; a script skill through the sandbox (referenced, approved
//!    scripts only); a native skill through its [`NativeSkill`]; a composite skill as a
//!    nested plan on the same executor, depth-limited;
//! 6. **check the output for leaks** against the execution's vault: a blocked output fails
//!    the step as a leak, not retried, and nothing of it goes further;
//! 7. **append the execution record** (through the gate, or the audit trail), then **write
//!    the working-memory entry** (summary within the skill's verbosity: 300/800/1,500 tokens,
//!    500 when undeclared; by the model or cut; the highest class the input held and its
//!    sources) and persist it through the plan store.
//!
//! Failures are retried per [`RetryPolicy`] (model, transport and timeout errors, with
//! exponential backoff on the host's [`Timer`]); the dependents of a failed step are skipped,
//! transitively; a [`CancelToken`] stops new steps; the [`ExecutionResult`] holds every step's
//! outcome. Re-running a stored plan reuses its completed steps instead of running them again.
//! Nothing here spawns a task or picks a runtime.
//!
//! Progress goes to the run's [`ProgressSink`](crate::progress::ProgressSink) in order:
//! `group_starting` for each group; for each attempt of a step `step_starting`, then
//! `step_complete` or `step_failed` (`can_retry` when another attempt follows);
//! `step_skipped` for a step whose dependency did not succeed or that the cancellation kept
//! from starting. A composite's sub-steps show as `step/sub-step`.
//!
//! ```
//! use skills_security::audit::AuditTrail;
//! use skills_security::gate::PolicyGate; // the host's gate; allow_all checks nothing
//! use std::sync::Arc;
//! use async_trait::async_trait;
//! use skills_orchestrate::execute::{
//!     Executor, InMemorySkills, NativeSkill, Run, SkillDefinition, SkillInput, StepError,
//!     StepOutput, StepState,
//! };
//! use skills_orchestrate::plan::{Planner, StepSpec};
//! use skills_orchestrate::progress::CollectingSink;
//! use skills_security::TrustLevel;
//! use skills_store_traits::UserScope;
//!
//! struct Count;
//!
//! #[async_trait]
//! impl NativeSkill for Count {
//!     async fn run(&self, input: &SkillInput) -> Result<StepOutput, StepError> {
//!         Ok(StepOutput::text(format!("{} saw {} lines", input.step_id, input.input.lines().count())))
//!     }
//! }
//!
//! # futures::executor::block_on(async {
//! let skills = InMemorySkills::new().with(SkillDefinition::native("count").trust(TrustLevel::User));
//! let executor = Executor::builder(Arc::new(skills), PolicyGate::allow_all(AuditTrail::in_memory())).native("count", Arc::new(Count)).build();
//! let plan = Planner::new()
//!     .plan("count twice", vec![
//!         StepSpec::new("first", "count", "Count the input"),
//!         StepSpec::new("second", "count", "Count again").after("first"),
//!     ])
//!     .await?;
//! let progress = Arc::new(CollectingSink::new());
//! let run = Run::new(UserScope::new("acme", "alice")).input("one\ntwo").progress(progress.clone());
//! let result = executor.execute(&plan, run).await?;
//! assert!(result.success);
//! assert_eq!(result.step("second").map(|s| s.state), Some(StepState::Complete));
//! // The first step saw the task input (a header and two lines); the second also saw the
//! // first's working-memory entry (a blank line, a header and its summary).
//! assert_eq!(result.step("first").and_then(|s| s.output.as_deref()), Some("first saw 3 lines"));
//! assert_eq!(result.step("second").and_then(|s| s.output.as_deref()), Some("second saw 6 lines"));
//! assert_eq!(progress.names(), [
//!     "group_starting", "step_starting", "step_complete",
//!     "group_starting", "step_starting", "step_complete",
//! ]);
//! # Ok::<(), skills_orchestrate::Error>(())
//! # }).unwrap();
//! ```

mod approve;
mod cancel;
mod catalog;
mod executor;
mod kinds;
mod memory;
mod native;
mod policy;
mod record;
mod result;
mod retry;
mod schedule;
mod skills;
mod step;
mod stores;
mod timer;

pub use approve::{ApprovalAnswer, ApprovalPrompt, FixedApprover, OptionApprover, StepApprover};
pub use cancel::CancelToken;
pub use catalog::{CatalogSkills, default_trust};
pub use executor::{Executor, ExecutorBuilder, Run};
pub use kinds::SUBAGENT_SYSTEM;
pub use memory::{
    ExtractedFact, MemoryEntry, StepOutput, SummaryMode, TRUNCATION_MARKER, UNKNOWN_MEMORY_CLASS,
    truncate_to_tokens,
};
pub use native::{NativeSkill, NativeSkills, SkillInput};
pub use result::{ExecutionResult, StepResult, StepState};
pub use retry::{RetryPolicy, StepError, StepErrorKind};
pub use skills::{
    DEFAULT_OUTPUT_FORMAT, InMemorySkills, KERNEL_LAYER, ScriptSpec, SkillDefinition, SkillKind,
    SkillProvider,
};
pub use stores::SkillStores;
pub use timer::{ThreadTimer, Timer, timeout};
