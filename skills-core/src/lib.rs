//! Agent skills: load, validate and discover them, and keep them in a registry.
//!
//! A *skill* is a directory holding a `SKILL.md` (YAML frontmatter, then Markdown
//! instructions), optionally a `skill.json` v2 manifest with layer, dependencies and tool
//! definitions, and supporting files such as `scripts/` and `references/`. This crate reads
//! the skills a framework already has and returns either loaded skills or a precise account
//! of what is wrong with them: every problem, each with a stable rule code, a severity, a
//! message and the line it is on. It never panics and never stops at the first problem.
//!
//! # Profiles
//!
//! * [`Profile::Spec`] applies the Agent Skills standard strictly. Use it to validate.
//! * [`Profile::Lenient`] (the default) follows the standard's client guide so that skills
//!   found in the wild load with warnings instead of vanishing.
//!
//! Every rule and its severity under each profile is listed on [`Rule`].
//!
//! # Quick start
//!
//! ```
//! use skills_core::{Discovery, LoadOptions, Profile};
//!
//! # let project = tempfile::tempdir()?;
//! # let dir = project.path().join("skills/pdf-tools");
//! # std::fs::create_dir_all(&dir)?;
//! # std::fs::write(dir.join("SKILL.md"),
//! #     "---\nname: pdf-tools\ndescription: Extract text from PDFs.\n---\n# PDF tools\n")?;
//! // Scan `<project>/.agents/skills` and `<project>/skills`.
//! let report = Discovery::for_project(project.path(), LoadOptions::default()).run();
//! for skill in report.skills() {
//!     println!("{}: {}", skill.name(), skill.description());
//! }
//! for skill in &report.reports {
//!     for diagnostic in &skill.diagnostics {
//!         eprintln!("{}: {diagnostic}", skill.path.display());
//!     }
//! }
//! # assert_eq!(report.skills().count(), 1);
//! # Ok::<(), std::io::Error>(())
//! ```
//!
//! # Map
//!
//! * [`SkillMd`] reads and writes one SKILL.md; [`Frontmatter`] is its data.
//! * [`SkillManifest`] reads a skill.json v2 manifest.
//! * [`load_skill_dir`] / [`Skill::load`] load one directory; [`files`] has the supporting
//!   file rules and the skill digest.
//! * [`Discovery`] scans roots; [`load_path`] loads whatever a path names.
//! * [`catalog`] renders skills for a model's context.
//! * [`registry::SkillRegistry`] holds loaded and native skills (native names checked
//!   against seed 001's naming agreement), checks their dependency graph and layers,
//!   initializes them in order, and lists them by focus
//!   ([`skills_for_focus`](registry::SkillRegistry::skills_for_focus)).
//! * [`SkillStatus`] is seed 001's lifecycle: catalogs mark `deprecated` and `stub` skills
//!   with [`SkillStatus::note`].

pub mod catalog;
pub mod diagnostic;
mod discovery;
mod error;
pub mod extensions;
pub mod files;
mod framing;
mod frontmatter;
mod manifest;
mod name;
pub mod registry;
mod skill;
mod skill_md;
mod status;
mod text;
pub mod tools;
pub mod yaml;

pub use diagnostic::{Diagnostic, Profile, Rule, Severity, has_errors};
pub use discovery::{DEFAULT_PROJECT_ROOTS, Discovery, DiscoveryReport, load_path};
pub use error::Error;
pub use extensions::{ClaudeCodeFields, ExtensionSet, OpenAiSidecar};
pub use frontmatter::{CLIENT_KEYS, EXTENSION_KEYS, Frontmatter, STANDARD_KEYS};
pub use manifest::{
    DEFAULT_FOCUSES, ManifestOptions, ParsedManifest, SkillManifest, ToolDefinition, strip_prefix,
};
pub use name::{MAX_NAME_CHARS, native_problems};
pub use skill::{LoadOptions, SKILL_JSON, SKILL_MD, Skill, SkillReport, load_skill_dir};
pub use skill_md::{
    MAX_COMPATIBILITY_CHARS, MAX_DESCRIPTION_CHARS, MAX_TAGS, ParseOptions, ParsedSkillMd, SkillMd,
};
pub use status::{STATUS_METADATA_KEY, SkillStatus};
