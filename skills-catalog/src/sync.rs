//! Sandbox sync (seed 002 section 4): make an agent's skills directory hold exactly the
//! skills assigned to it.
//!
//! Threat: a sandbox is written by the agent it belongs to, which may pre-seed its skills
//! directory with symlinks (`.skills/deploy -> /etc`), odd names, or half-written
//! directories, hoping the host writes or deletes through them. Guarantee: sync only ever
//! names entries directly under the skills directory, by slug; it writes a skill by
//! replacing the whole entry (a symlink in its place is removed, not followed), removes
//! unassigned entries without following them, and leaves plain files it does not own alone.
//! One bad skill is reported in `errors` and never stops the others.
//!
//! The chain is seed 002's DB → cache → sandbox: with a [`Materializer`] the bytes written
//! come from `<cache>/<skill-id>/` (materialized first when missing or stale, and checked
//! against the stored checksums as they are read), without one straight from the store.
//! [`sync_status`] answers what a sync would write and remove without writing anything;
//! [`sync_slug`] brings one skill directory in line and touches no other.

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;
use skills_store_traits::{SkillRecord, SkillStore, TenantId};

use crate::error::Result;
use crate::materialize::Materializer;
use crate::sandbox::SandboxFs;
use crate::stored::StoredSkill;
use crate::tree::{EntryKind, OLD_PREFIX, TEMP_PREFIX};

/// What a sync did (seed 002's `{synced, removed, errors}`, plus what was already right).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct SyncReport {
    /// Slugs written because they were missing or stale, sorted.
    pub synced: Vec<String>,
    /// Entries removed because no enabled assignment reaches them any more, sorted.
    pub removed: Vec<String>,
    /// Slugs already up to date, sorted.
    pub unchanged: Vec<String>,
    /// One line per skill or entry that failed, sorted; the rest still synced.
    pub errors: Vec<String>,
}

/// What a sync would do, computed without writing anything (seed 002 section 17.18: the
/// sync status of an agent's assignments).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct SyncStatus {
    /// Slugs that are missing or stale in the sandbox and would be written, sorted.
    pub write: Vec<String>,
    /// Entries no enabled assignment reaches any more, which would be removed, sorted.
    pub remove: Vec<String>,
    /// Slugs already up to date, sorted.
    pub unchanged: Vec<String>,
    /// One line per skill that could not be checked, sorted.
    pub errors: Vec<String>,
}

impl SyncStatus {
    /// Whether the sandbox already holds exactly what is assigned.
    pub fn in_sync(&self) -> bool {
        self.write.is_empty() && self.remove.is_empty() && self.errors.is_empty()
    }
}

/// Syncs every skill assigned to `agent_id` (directly, through `team_id`, or globally) with
/// an enabled assignment and an enabled skill into `sandbox`, and removes everything else
/// that looks like a skill directory. Bytes come straight from the store; see
/// [`sync_agent_via`] for the DB → cache → sandbox chain.
///
/// Fails as a whole only when the assignments cannot be read or the skills directory cannot
/// be listed; everything per skill lands in [`SyncReport::errors`].
///
/// ```
/// # futures::executor::block_on(async {
/// use skills_catalog::{sync_agent, InMemorySandboxFs};
/// use skills_store_traits::{in_memory::InMemorySkillStore, NewAssignment, NewSkill, SkillStore, TenantId};
///
/// let store = InMemorySkillStore::new();
/// let tenant = TenantId::new("acme");
/// let skill = store.create_skill(&tenant, NewSkill::new("Deploy", "deploy", "# Deploy\n")).await?;
/// store.create_assignment(&tenant, NewAssignment::agent(&skill.id, "agent-1")).await?;
/// let sandbox = InMemorySandboxFs::new();
/// let report = sync_agent(&store, &tenant, "agent-1", None, &sandbox).await?;
/// assert_eq!(report.synced, ["deploy"]);
/// let again = sync_agent(&store, &tenant, "agent-1", None, &sandbox).await?;
/// assert_eq!(again.unchanged, ["deploy"]);
/// # Ok::<(), skills_catalog::Error>(())
/// # }).unwrap();
/// ```
pub async fn sync_agent(
    store: &dyn SkillStore,
    tenant: &TenantId,
    agent_id: &str,
    team_id: Option<&str>,
    sandbox: &dyn SandboxFs,
) -> Result<SyncReport> {
    sync_agent_via(store, None, tenant, agent_id, team_id, sandbox).await
}

/// [`sync_agent`] through the host cache when `cache` is set: each skill to write is
/// materialized (if missing or stale) and its bytes are read back from the cache.
pub async fn sync_agent_via(
    store: &dyn SkillStore,
    cache: Option<&Materializer>,
    tenant: &TenantId,
    agent_id: &str,
    team_id: Option<&str>,
    sandbox: &dyn SandboxFs,
) -> Result<SyncReport> {
    let wanted = wanted(store, tenant, agent_id, team_id).await?;
    let entries = sandbox.list().await?;
    let mut report = SyncReport::default();
    for (slug, record) in &wanted {
        match write_one(store, cache, tenant, slug, record, sandbox).await {
            Ok(true) => report.synced.push(slug.clone()),
            Ok(false) => report.unchanged.push(slug.clone()),
            Err(err) => report.errors.push(format!("{slug}: {err}")),
        }
    }
    for (name, leftover) in unwanted(&wanted, entries) {
        match sandbox.remove(&name).await {
            Ok(_) if leftover => {}
            Ok(_) => report.removed.push(name),
            Err(err) => report.errors.push(format!("{name}: {err}")),
        }
    }
    report.errors.sort();
    Ok(report)
}

/// What [`sync_agent`] would write and remove for `agent_id`, writing nothing (not even the
/// cache).
pub async fn sync_status(
    store: &dyn SkillStore,
    tenant: &TenantId,
    agent_id: &str,
    team_id: Option<&str>,
    sandbox: &dyn SandboxFs,
) -> Result<SyncStatus> {
    let wanted = wanted(store, tenant, agent_id, team_id).await?;
    let entries = sandbox.list().await?;
    let mut status = SyncStatus::default();
    for (slug, record) in &wanted {
        match stale(store, tenant, slug, record, sandbox).await {
            Ok(Some(_)) => status.write.push(slug.clone()),
            Ok(None) => status.unchanged.push(slug.clone()),
            Err(err) => status.errors.push(format!("{slug}: {err}")),
        }
    }
    status.remove = unwanted(&wanted, entries)
        .into_iter()
        .filter(|(_, leftover)| !*leftover)
        .map(|(name, _)| name)
        .collect();
    status.errors.sort();
    Ok(status)
}

/// Brings the one entry `slug` of an agent's sandbox in line and touches no other: written
/// (through `cache` when set) if an enabled assignment reaches a skill with that slug and the
/// entry is missing or stale, removed if nothing reaches it (the skill was unassigned,
/// disabled or deleted).
pub async fn sync_slug(
    store: &dyn SkillStore,
    cache: Option<&Materializer>,
    tenant: &TenantId,
    agent_id: &str,
    team_id: Option<&str>,
    slug: &str,
    sandbox: &dyn SandboxFs,
) -> Result<SyncReport> {
    skills_store_traits::validate::check_slug("slug", slug)?;
    let wanted = wanted(store, tenant, agent_id, team_id).await?;
    let mut report = SyncReport::default();
    match wanted.get(slug) {
        Some(record) => match write_one(store, cache, tenant, slug, record, sandbox).await {
            Ok(true) => report.synced.push(slug.to_owned()),
            Ok(false) => report.unchanged.push(slug.to_owned()),
            Err(err) => report.errors.push(format!("{slug}: {err}")),
        },
        None => match sandbox.remove(slug).await {
            Ok(true) => report.removed.push(slug.to_owned()),
            Ok(false) => {}
            Err(err) => report.errors.push(format!("{slug}: {err}")),
        },
    }
    Ok(report)
}

/// The skills an agent should hold, by slug: enabled assignments of enabled skills, the
/// first per slug in the store's assignment order.
async fn wanted(
    store: &dyn SkillStore,
    tenant: &TenantId,
    agent_id: &str,
    team_id: Option<&str>,
) -> Result<BTreeMap<String, SkillRecord>> {
    let assigned = store
        .assignments_for_agent(tenant, agent_id, team_id)
        .await?;
    let mut wanted: BTreeMap<String, SkillRecord> = BTreeMap::new();
    for item in assigned {
        if item.assignment.enabled && item.skill.enabled {
            wanted.entry(item.skill.slug.clone()).or_insert(item.skill);
        }
    }
    Ok(wanted)
}

/// The stored skill when the sandbox entry `slug` is missing or stale; `None` when fresh.
async fn stale(
    store: &dyn SkillStore,
    tenant: &TenantId,
    slug: &str,
    record: &SkillRecord,
    sandbox: &dyn SandboxFs,
) -> Result<Option<StoredSkill>> {
    skills_store_traits::validate::check_slug("slug", slug)?;
    let skill = StoredSkill::with_files(store, tenant, record.clone()).await?;
    let fresh = sandbox
        .snapshot(slug)
        .await?
        .is_some_and(|snap| snap.matches(&skill.expected_hashes()));
    Ok((!fresh).then_some(skill))
}

/// Writes one skill when stale; `true` when it was written.
async fn write_one(
    store: &dyn SkillStore,
    cache: Option<&Materializer>,
    tenant: &TenantId,
    slug: &str,
    record: &SkillRecord,
    sandbox: &dyn SandboxFs,
) -> Result<bool> {
    let Some(skill) = stale(store, tenant, slug, record, sandbox).await? else {
        return Ok(false);
    };
    let bytes = match cache {
        Some(cache) => cache.files(&skill)?,
        None => skill.file_bytes()?,
    };
    sandbox.replace(slug, &bytes).await?;
    Ok(true)
}

/// Entries that look like skill directories but are not wanted, with whether each is a
/// leftover of an interrupted replacement.
fn unwanted(
    wanted: &BTreeMap<String, SkillRecord>,
    entries: Vec<(String, EntryKind)>,
) -> Vec<(String, bool)> {
    let wanted_names: BTreeSet<&str> = wanted.keys().map(String::as_str).collect();
    let mut out = Vec::new();
    for (name, kind) in entries {
        if wanted_names.contains(name.as_str()) {
            continue;
        }
        let leftover = name.starts_with(TEMP_PREFIX) || name.starts_with(OLD_PREFIX);
        let skill_like = matches!(kind, EntryKind::Dir | EntryKind::Symlink)
            && (leftover || skills_store_traits::validate::check_slug("slug", &name).is_ok());
        if skill_like {
            out.push((name, leftover));
        }
    }
    out
}

/// Removes one skill's directory from a sandbox (seed 002's `removeSkillFromSprite`).
pub async fn remove_from_sandbox(sandbox: &dyn SandboxFs, slug: &str) -> Result<bool> {
    skills_store_traits::validate::check_slug("slug", slug)?;
    sandbox.remove(slug).await
}
