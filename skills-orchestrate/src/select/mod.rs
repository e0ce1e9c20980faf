//! Deciding which skills a task needs (seed 000 section 2.1; seed 003's trigger matching).
//!
//! Agent types map to the skills they may use ([`AgentSkills`]). For a task, a
//! [`SkillSelector`] takes the candidates the agent may use and asks the model for section
//! 2.1's analysis ([`SkillAnalysis`], checked against its schema, retried once when
//! malformed) or, without a model, scores them deterministically ([`FallbackSelector`]). The
//! resulting [`Selection`] becomes plan steps ([`Selection::step_specs`]).
//!
//! ```
//! use skills_orchestrate::select::{AgentSkills, SkillCandidate, SkillSelector, Task};
//!
//! # futures::executor::block_on(async {
//! let agents = AgentSkills::new().with("SupportAgent", ["crm-lookup", "email-draft"]);
//! let candidates = [
//!     SkillCandidate::new("crm-lookup", "Look up an account in the CRM").triggers(["look up"]),
//!     SkillCandidate::new("email-draft", "Draft an email reply").tags(["email"]),
//! ];
//! let task = Task::new("Look up Acme in the CRM and draft an email reply");
//! let selection = SkillSelector::new(agents).select("SupportAgent", &task, &candidates).await?;
//! let steps = selection.step_specs(&task, false);
//! assert_eq!(steps.len(), 2);
//! assert_eq!(steps[1].depends_on, ["crm-lookup"]);
//! # Ok::<(), skills_orchestrate::Error>(())
//! # }).unwrap();
//! ```

mod agents;
mod analysis;
mod candidate;
mod fallback;
mod selector;
mod task;

pub use agents::AgentSkills;
pub use analysis::{ExecutionApproach, OptionalSkill, RequiredSkill, SkillAnalysis};
pub use candidate::{RESEARCH_CATEGORY, SkillCandidate, TRIGGERS_METADATA_KEY};
pub use fallback::{FallbackSelector, MatchReason, ScoredSkill};
pub use selector::{SELECTION_PROMPT_START, Selection, SelectionSource, SkillSelector};
pub use task::Task;
