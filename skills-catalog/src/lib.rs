//! The skill catalog: everything between the durable records of `skills-store-traits` and
//! the directories agents read (seed 002 sections 3-5, 9, 10 and 13).
//!
//! - [`Materializer`]: the host-side cache, `<cache>/<skill-id>/`, written lazily and
//!   atomically, checked against stored checksums.
//! - [`sync_agent`] and the [`SandboxFs`] trait ([`LocalSandboxFs`], [`InMemorySandboxFs`]):
//!   an agent's `<sandbox>/.skills/<slug>/` holds exactly its assigned skills.
//! - [`Catalog`]: every catalog edit as one operation that knows its effect (section 4.3's
//!   triggers: assignments, skill and file edits, enable / disable / delete, plugin enable /
//!   disable / upgrade / uninstall, import, sandbox created), syncing exactly the affected
//!   entries of the agents reached through the cache; `sync_skill`, a check-only
//!   `sync_status` and eager `materialize_all`, over a host [`AgentDirectory`].
//! - [`Resolver`]: admin, plugin and repo skills merged into one index, admin beating plugin
//!   beating repo.
//! - [`portable`]: format version 2 JSON and `.tar.gz` export and import, with a JSON Schema.
//! - [`plugin`]: plugin skill contributions (enable, disable, uninstall, upgrade).
//! - [`admin`]: operator edits (plugin skills are read-only) and duplication.
//!
//! ```
//! # futures::executor::block_on(async {
//! use skills_catalog::{sync_agent, LocalSandboxFs, Resolver};
//! use skills_store_traits::{in_memory::InMemorySkillStore, NewAssignment, NewSkill, SkillStore, TenantId};
//!
//! let store = InMemorySkillStore::new();
//! let tenant = TenantId::new("acme");
//! let skill = store
//!     .create_skill(&tenant, NewSkill::new("Triage", "triage", "# Triage\n").with_file("scripts/t.sh", "echo\n"))
//!     .await?;
//! store.create_assignment(&tenant, NewAssignment::team(&skill.id, "support")).await?;
//!
//! let resolution = Resolver::new().resolve_for_agent(&store, &tenant, "agent-7", Some("support"), &[]).await?;
//! assert_eq!(resolution.skills[0].id, "triage");
//!
//! let home = tempfile::tempdir()?;
//! let sandbox = LocalSandboxFs::new(home.path().join(".skills"));
//! let report = sync_agent(&store, &tenant, "agent-7", Some("support"), &sandbox).await?;
//! assert_eq!(report.synced, ["triage"]);
//! assert!(home.path().join(".skills/triage/scripts/t.sh").is_file());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! # }).unwrap();
//! ```

pub mod activation;
pub mod admin;
pub mod agent_tools;
pub mod error;
pub mod materialize;
pub mod plugin;
pub mod portable;
pub mod prompt;
pub mod resolve;
pub mod sandbox;
pub mod stored;
pub mod sync;
pub mod tree;
pub mod triggers;

pub use error::{Error, Result};
pub use materialize::{Materialized, Materializer};
pub use resolve::{Resolution, ResolvedSkill, Resolver, SkillOrigin, SupportingFile};
pub use sandbox::{
    DEFAULT_SANDBOX_SKILLS_DIR, InMemorySandboxFs, LocalSandboxFs, MemoryEntry, SandboxFs,
};
pub use stored::StoredSkill;
pub use sync::{
    SyncReport, SyncStatus, remove_from_sandbox, sync_agent, sync_agent_via, sync_slug, sync_status,
};
pub use triggers::{AgentDirectory, AgentRef, AgentSync, Catalog, MaterializeReport, PluginSync};
