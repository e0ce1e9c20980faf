//! Orchestration of agent skills: plan, approve, execute and learn.
//!
//! This crate is where the family meets (seed 000 parts 2 and 3, seed 003 module 5): a task
//! becomes a plan of skills with dependencies, independent steps run in parallel and dependent
//! ones in order, each step sees only what it needs through working memory and stays inside its
//! token budget, progress is shown as it happens, and recurring sequences are learned.
//!
//! | module | what it holds |
//! |---|---|
//! | [`llm`] | the [`LlmClient`](llm::LlmClient) trait hosts implement, token counting, a scripted test double |
//! | [`context`] | token budgets, the sub-agent context, the orchestrator context, compaction |
//! | [`progress`] | progress events, sinks and a stream |
//! | [`memory_bridge`] | memory context for a skill (episodes, facts, procedures, preferences) sanitized for its trust level; learnings stored after a run; OODA action outcomes; recorded context sizes |
//! | [`ooda`] | the OODA loop of section 2.3 composed from the orchestrator's phases, bounded: research in observe, scored options in decide, outcomes recorded in act |
//! | [`orchestrator`] | the `execute_task` facade: select, plan, `plan_created`, approval, execute, synthesis, learnings |
//! | [`synthesis`] | the run's summary, artifacts and next steps (model with a deterministic fallback), the `synthesis` event |
//! | [`select`] | agent types and their skills, skill-need analysis through the model (schema-checked, retried once) or a deterministic fallback |
//! | [`learn`] | recorded runs, detection of recurring sequence, retry and composite patterns, draft composite skills, the pattern review life cycle |
//! | [`plan`] | steps and their dependencies as a DAG, parallel groups, estimates, risk and approval, persistence |
//! | [`execute`] | the executor: groups in order, steps concurrently within a limit, each step resolved, gated, sanitized, isolated, run by kind, leak-checked, audited and kept in working memory; retries, skips, cancellation, resume |

pub mod context;
pub mod error;
pub mod execute;
pub mod learn;
pub mod llm;
pub mod memory_bridge;
pub mod ooda;
pub mod orchestrator;
pub mod plan;
pub mod progress;
pub mod select;
pub mod synthesis;

pub use error::{Error, Result};
pub use execute::{ExecutionResult, Executor, Run};
pub use learn::{DraftSkill, LearningEngine, PatternDetector};
pub use orchestrator::{OrchestrationResult, OrchestrationStatus, Orchestrator, TaskRun};
pub use plan::{ExecutionPlan, PlanStep, Planner, StepSpec};
pub use select::{AgentSkills, Selection, SkillCandidate, SkillSelector, Task};
