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
//! The most used items of `skills-core` are also re-exported at the top level. The task
//! guides (how to embed the library in an agent loop, stores, the sandbox, policy, MCP, the
//! command, installing, backends) are [`guides`]; start with [`guides::embedding`].
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

/// Task guides (the `docs/` folder), compiled here so their code cannot rot: every Rust
/// block in them is a doctest of this crate.
pub mod guides {
    #[doc = include_str!("../docs/embedding.md")]
    pub mod embedding {}
    #[doc = include_str!("../docs/stores.md")]
    pub mod stores {}
    #[doc = include_str!("../docs/sandbox.md")]
    pub mod sandbox {}
    #[doc = include_str!("../docs/policy.md")]
    pub mod policy {}
    #[doc = include_str!("../docs/mcp.md")]
    pub mod mcp {}
    #[doc = include_str!("../docs/cli.md")]
    pub mod cli {}
    #[doc = include_str!("../docs/install-and-scan.md")]
    pub mod install_and_scan {}
    #[doc = include_str!("../docs/backends.md")]
    pub mod backends {}
}

/// The README's code, compiled and run as doctests (not part of the API).
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
