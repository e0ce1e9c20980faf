//! Load, secure and orchestrate agent skills.
//!
//! `skills` is the facade over the crate family; depend on it for everything, or on the
//! member crates for only what you use:
//!
//! | crate | re-exported as | what it holds |
//! |---|---|---|
//! | `skills-core` | [`core`] | the skill model, SKILL.md and skill.json parsing, validation, discovery, the registry |
//! | `skills-store-traits` | [`store`] | store traits, in-memory stores, the conformance suite |
//! | `skills-store-sqlite` | [`sqlite`] | every store trait on an embedded SQLite database |
//! | `skills-catalog` | [`catalog`] | materialization, sandbox sync, the resolver, portable import/export, plugin skills |
//! | `skills-security` | [`security`] | classification, sanitization, trust, sandboxing, approvals, audit |
//! | `skills-install` | [`install`] | sources, the install pipeline, digests, versions, publishing |
//! | `skills-orchestrate` | [`orchestrate`] | planning, execution, working memory, context budgets |
//! | `skills-http` | [`http`] | the host's HTTP client trait (an optional reqwest client) |
//! | `skills-openai` | [`openai`] | an OpenAI-compatible Chat Completions `LlmClient` |
//!
//! The most used items of `skills-core` are also re-exported at the top level.
//!
//! ```
//! use skills::{Discovery, LoadOptions};
//!
//! let skills_dir = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/skills");
//! let report = Discovery::new(LoadOptions::default()).root(skills_dir).run();
//! assert!(report.skills().any(|s| s.name() == "pdf-tools"));
//! ```

pub use skills_catalog as catalog;
pub use skills_core as core;
pub use skills_http as http;
pub use skills_install as install;
pub use skills_openai as openai;
pub use skills_orchestrate as orchestrate;
pub use skills_security as security;
pub use skills_store_sqlite as sqlite;
pub use skills_store_traits as store;

pub use skills_core::{
    Diagnostic, Discovery, DiscoveryReport, Error, Frontmatter, LoadOptions, Profile, Rule,
    Severity, Skill, SkillManifest, SkillMd, SkillReport, load_path, load_skill_dir,
};
