//! Context management (seed 000 section 2.4): budgets, the orchestrator's context, the
//! isolated sub-agent context, and compaction.

pub mod budget;
pub mod compaction;
pub mod orchestrator;
pub mod subagent;

pub use budget::{ContextBudgets, Verbosity};
pub use compaction::{COMPACTION_PROMPT_START, Compaction, Compactor, Summarizer, WorkingContext};
pub use orchestrator::{
    OrchestratorContext, OrchestratorInputs, StepSummary, orchestrator_context,
};
pub use subagent::{SubAgentBrief, SubAgentContext, subagent_context};
