//! Store traits for agent skills, their in-memory implementations and a conformance suite.
//!
//! Durable records are the source of truth for a skills platform (seed 002 section 3): skills
//! with their supporting files and assignments, the audit trail, trust history, execution
//! plans with their working memory, agent memory, installed packages and what the learning
//! engine remembers. This crate defines one object-safe async trait per kind of record, so a
//! host can back each with its own database:
//!
//! | trait | records |
//! |---|---|
//! | [`SkillStore`] | skills, their files, their assignments (seed 002 sections 2 and 7) |
//! | [`AuditStore`] | append-only audit chains (seed 000 `skill_audit_log`) |
//! | [`TrustStore`] | trust history per user and skill (`skill_trust_history`) |
//! | [`PlanStore`] | execution plans and their working memory |
//! | [`MemoryStore`] | agent memory: episodes, facts, procedures, preferences |
//! | [`PackageStore`] | installed packages: versions with their content, the current one, deprecation, approval, ratings |
//! | [`LearningStore`] | executed skill sequences and the learning patterns found in them |
//! | [`PermissionStore`] | permission rules (seed 003 `ExtensionPermission`), per tenant, with revisions; approval requests and their decisions ([`approvals`]) |
//!
//! Every record belongs to a tenant ([`TenantId`]), and the records of per-user tables to a
//! user ([`UserScope`]); no call reads or changes another tenant's or user's records.
//! Validation (seed 002 section 6.3, limits of 15.9) and uniqueness are part of each trait's
//! contract, so callers cannot forget them; [`in_memory`] has a reference implementation of
//! every trait, and the `conformance` feature exposes the contract tests every backend runs.
//!
//! ```
//! use skills_store_traits::{in_memory::InMemorySkillStore, NewSkill, SkillStore, TenantId};
//!
//! # futures::executor::block_on(async {
//! let store = InMemorySkillStore::new();
//! let tenant = TenantId::new("acme");
//! let skill = store
//!     .create_skill(&tenant, NewSkill::new("Jira Triage", "jira-triage", "# Triage\n"))
//!     .await?;
//! assert_eq!(store.find_skill_by_slug(&tenant, "jira-triage").await?, Some(skill));
//! // Another tenant sees nothing.
//! assert_eq!(store.find_skill_by_slug(&TenantId::new("other"), "jira-triage").await?, None);
//! # Ok::<(), skills_store_traits::Error>(())
//! # }).unwrap();
//! ```

#[macro_use]
mod words;

pub mod approvals;
pub mod audit;
pub mod cache;
pub mod error;
pub mod in_memory;
pub mod learning;
pub mod memory;
pub mod packages;
pub mod permissions;
pub mod plans;
pub mod read_only;
pub mod skills;
pub mod tenancy;
pub mod time;
pub mod trust;
pub mod validate;

#[cfg(feature = "conformance")]
pub mod conformance;

pub use audit::AuditStore;
pub use error::{Error, Result, Violation};
pub use learning::LearningStore;
pub use memory::MemoryStore;
pub use packages::PackageStore;
pub use permissions::PermissionStore;
pub use plans::PlanStore;
pub use read_only::ReadOnly;
pub use skills::{
    AgentSkills, AssignedSkill, AssignmentFilter, AssignmentScope, AssignmentUpdate,
    DEFAULT_PROJECTION_BUDGET, Lookup, MANIFEST_PATH, NewAssignment, NewSkill, NewSkillFile,
    ReachedSkill, ReachingAssignment, ResolvableFile, ResolvableSkill, SKILL_CATEGORIES,
    SkillAssignment, SkillFileRecord, SkillFileUpdate, SkillFilter, SkillRecord, SkillSourceKind,
    SkillStore, SkillUpdate, StampedProjections, StampedRows, TRUST_LEVELS,
    agent_skills_in_two_calls, assigned_skill_ids, assignment_order, group_reached,
    resolvable_from, sort_by_slug,
};
pub use tenancy::{TenantId, UserId, UserScope};
pub use time::{Clock, ManualClock, SystemClock, Timestamp, new_id};
pub use trust::TrustStore;
pub use validate::StoreLimits;
