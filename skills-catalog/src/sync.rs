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

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;
use skills_store_traits::{SkillStore, TenantId};

use crate::error::Result;
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

/// Syncs every skill assigned to `agent_id` (directly, through `team_id`, or globally) with
/// an enabled assignment and an enabled skill into `sandbox`, and removes everything else
/// that looks like a skill directory.
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
    let assigned = store
        .assignments_for_agent(tenant, agent_id, team_id)
        .await?;
    let mut wanted: BTreeMap<String, skills_store_traits::SkillRecord> = BTreeMap::new();
    for item in assigned {
        if item.assignment.enabled && item.skill.enabled {
            wanted.entry(item.skill.slug.clone()).or_insert(item.skill);
        }
    }
    let entries = sandbox.list().await?;
    let mut report = SyncReport::default();

    for (slug, record) in wanted.iter() {
        if let Err(err) = skills_store_traits::validate::check_slug("slug", slug) {
            report.errors.push(format!("{slug}: {err}"));
            continue;
        }
        let outcome = async {
            let skill = StoredSkill::with_files(store, tenant, record.clone()).await?;
            let fresh = sandbox
                .snapshot(slug)
                .await?
                .is_some_and(|snap| snap.matches(&skill.expected_hashes()));
            if fresh {
                return Ok(false);
            }
            sandbox.replace(slug, &skill.file_bytes()?).await?;
            Ok::<bool, crate::Error>(true)
        }
        .await;
        match outcome {
            Ok(true) => report.synced.push(slug.clone()),
            Ok(false) => report.unchanged.push(slug.clone()),
            Err(err) => report.errors.push(format!("{slug}: {err}")),
        }
    }

    let wanted_names: BTreeSet<&str> = wanted.keys().map(String::as_str).collect();
    for (name, kind) in entries {
        if wanted_names.contains(name.as_str()) {
            continue;
        }
        let leftover = name.starts_with(TEMP_PREFIX) || name.starts_with(OLD_PREFIX);
        let skill_like = matches!(kind, EntryKind::Dir | EntryKind::Symlink)
            && (leftover || skills_store_traits::validate::check_slug("slug", &name).is_ok());
        if !skill_like {
            continue;
        }
        match sandbox.remove(&name).await {
            Ok(_) if leftover => {}
            Ok(_) => report.removed.push(name),
            Err(err) => report.errors.push(format!("{name}: {err}")),
        }
    }
    report.errors.sort();
    Ok(report)
}

/// Removes one skill's directory from a sandbox (seed 002's `removeSkillFromSprite`).
pub async fn remove_from_sandbox(sandbox: &dyn SandboxFs, slug: &str) -> Result<bool> {
    skills_store_traits::validate::check_slug("slug", slug)?;
    sandbox.remove(slug).await
}
