//! Agent skills for [rig](https://docs.rs/rig-core) (rig-core pinned to 0.44.0).
//!
//! | item | what it does |
//! |---|---|
//! | [`RigLlm`] | the orchestrator's `LlmClient` over any rig completion model (`DynModel<Completion>`), so skill selection, instruction steps and synthesis run on whatever provider rig supports |
//! | [`preamble`] | the Agent Skills catalog block (`<available_skills>`) for a rig agent's preamble, within a character or token budget |
//! | [`SkillTools`] | a resolved catalog as rig tools (`use_skill`, `read_skill_file`, and `load_skill` with [`LoadSkillParts`]: scripts approved through the host's `Approvals`, for example over the option runtime, and run in its sandbox), every call decided by the host's `PolicyGate` for the skill it names; `load_skill` asks `authorize` (`SkillAction::Activate`, the content decision; the step's `check` counts the run) on the skill's state at the call before anything runs and records the run's true outcome with `complete` before anything is handed out |
//!
//! The library picks no runtime: rig's model future is awaited on the caller's executor.

mod llm;
mod preamble;
mod tools;

/// The rig guide (`docs/rig.md`), compiled here so its code cannot rot.
#[doc = include_str!("../../docs/rig.md")]
pub mod guide {}

pub use llm::RigLlm;
pub use preamble::{Preamble, preamble};
pub use tools::{LOAD_SKILL, LoadSkillParts, SKILL_CONTENT_SOURCE, SkillTools};
