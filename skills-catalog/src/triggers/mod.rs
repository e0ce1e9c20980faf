//! The sync triggers of seed 002 section 4.3, tied together: every catalog edit is one
//! [`Catalog`] operation that changes the store, refreshes the host cache and then brings
//! exactly the affected entries of exactly the agents the change reaches in line (written
//! through the cache, or removed).
//!
//! | operation | module |
//! |---|---|
//! | assign, update or delete an assignment; `sync_skill`, `sync_status`, `sandbox_created`, `materialize_all` | here |
//! | edit a skill, add / update / remove a file, enable / disable, delete | `edits.rs` |
//! | enable / disable / upgrade / uninstall a plugin, import a portable document | `plugins.rs` |
//!
//! Plugin skills are read-only to every admin operation (content, files, enabled, delete):
//! [`Violation::ReadOnlyPluginSkill`]; only the plugin operations change them.
//!
//! The host tells the catalog which agents exist, their teams, and how to reach each one's
//! skills directory through [`AgentDirectory`]. An agent whose sandbox is not running gets no
//! sync now; it is reported as deferred, and the host calls [`Catalog::sandbox_created`] when
//! the sandbox starts (section 4.5).

mod edits;
mod plugins;

use std::collections::BTreeSet;
use std::sync::Arc;

use async_trait::async_trait;
use serde::Serialize;
use skills_store_traits::{
    AssignmentFilter, AssignmentScope, AssignmentUpdate, NewAssignment, SkillAssignment,
    SkillFilter, SkillStore, TenantId, Violation,
};

use crate::error::{Error, Result};
use crate::materialize::Materializer;
use crate::sandbox::SandboxFs;
use crate::sync::{SyncReport, SyncStatus, sync_agent_via, sync_slug, sync_status};

pub use plugins::PluginSync;

/// An agent as the host knows it.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct AgentRef {
    /// The agent id (the `scope_id` of agent assignments).
    pub agent_id: String,
    /// Its team, if any (the `scope_id` of team assignments).
    pub team_id: Option<String>,
}

impl AgentRef {
    /// An agent in an optional team.
    pub fn new(agent_id: impl Into<String>, team_id: Option<&str>) -> Self {
        AgentRef {
            agent_id: agent_id.into(),
            team_id: team_id.map(str::to_owned),
        }
    }
}

/// The host's agents and their sandboxes.
#[async_trait]
pub trait AgentDirectory: Send + Sync {
    /// Every agent of the tenant.
    async fn agents(&self, tenant: &TenantId) -> Result<Vec<AgentRef>>;
    /// The agent's skills directory, or `None` when its sandbox is not running.
    async fn sandbox(
        &self,
        tenant: &TenantId,
        agent: &AgentRef,
    ) -> Result<Option<Arc<dyn SandboxFs>>>;

    /// Whether `team_id` names a team. The default: some agent belongs to it; override it
    /// when teams can exist before their first agent.
    async fn team_exists(&self, tenant: &TenantId, team_id: &str) -> Result<bool> {
        let agents = self.agents(tenant).await?;
        Ok(agents.iter().any(|a| a.team_id.as_deref() == Some(team_id)))
    }
}

/// The sync outcome for one agent.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct AgentSync {
    /// The agent.
    pub agent: AgentRef,
    /// What the sync did; `None` when the sandbox was not running (deferred).
    pub report: Option<SyncReport>,
    /// Why the sync failed as a whole, if it did.
    pub error: Option<String>,
}

/// Store writes followed by the syncs they trigger.
pub struct Catalog {
    store: Arc<dyn SkillStore>,
    agents: Arc<dyn AgentDirectory>,
    cache: Option<Materializer>,
}

impl std::fmt::Debug for Catalog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Catalog")
            .field("cache", &self.cache)
            .finish_non_exhaustive()
    }
}

/// What [`Catalog::materialize_all`] did.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct MaterializeReport {
    /// Ids of the skills written to the cache, sorted.
    pub written: Vec<String>,
    /// Ids already up to date, sorted.
    pub unchanged: Vec<String>,
    /// One line per skill that failed, sorted.
    pub errors: Vec<String>,
}

/// An affected skill entry: its slug, and the assignments that reach (or reached) it.
#[derive(Debug, Default)]
struct Affected {
    slugs: BTreeSet<String>,
    assignments: Vec<SkillAssignment>,
}

impl Affected {
    fn extend(&mut self, slug: &str, assignments: Vec<SkillAssignment>) {
        self.slugs.insert(slug.to_owned());
        self.assignments.extend(assignments);
    }
}

impl Catalog {
    /// A catalog over `store` syncing the agents `agents` lists.
    pub fn new(store: Arc<dyn SkillStore>, agents: Arc<dyn AgentDirectory>) -> Self {
        Catalog {
            store,
            agents,
            cache: None,
        }
    }

    /// Keeps a host-side cache: syncs read through it (DB → cache → sandbox), edits
    /// invalidate and re-materialize it, deletes remove it.
    pub fn with_cache(mut self, cache: Materializer) -> Self {
        self.cache = Some(cache);
        self
    }

    /// The store.
    pub fn store(&self) -> &Arc<dyn SkillStore> {
        &self.store
    }

    /// The cache, when one is kept.
    pub fn cache(&self) -> Option<&Materializer> {
        self.cache.as_ref()
    }

    /// Trigger 1 and 4: assign a skill, then sync it to every agent the assignment reaches.
    ///
    /// The scope id must name an agent or team the [`AgentDirectory`] knows (seed 002
    /// section 6.3), refused as [`Violation::UnknownScopeTarget`] otherwise.
    pub async fn assign(
        &self,
        tenant: &TenantId,
        assignment: NewAssignment,
    ) -> Result<(SkillAssignment, Vec<AgentSync>)> {
        let known = match (assignment.scope, assignment.scope_id.as_deref()) {
            (AssignmentScope::Agent, Some(agent)) => self
                .agents
                .agents(tenant)
                .await?
                .iter()
                .any(|a| a.agent_id == agent),
            (AssignmentScope::Team, Some(team)) => self.agents.team_exists(tenant, team).await?,
            _ => true,
        };
        if !known {
            return Err(Error::invalid("scope_id", Violation::UnknownScopeTarget));
        }
        let skill = self.skill(tenant, &assignment.skill_id).await?;
        if let Some(cache) = &self.cache {
            cache
                .materialize(self.store.as_ref(), tenant, &assignment.skill_id)
                .await?;
        }
        let created = self.store.create_assignment(tenant, assignment).await?;
        let mut affected = Affected::default();
        affected.extend(&skill.slug, vec![created.clone()]);
        Ok((created, self.sync_affected(tenant, affected).await?))
    }

    /// An assignment changed (enabled, priority, auto-inject): the skill is written to or
    /// removed from the agents the assignment reaches.
    pub async fn update_assignment(
        &self,
        tenant: &TenantId,
        assignment_id: &str,
        update: AssignmentUpdate,
    ) -> Result<(SkillAssignment, Vec<AgentSync>)> {
        let updated = self
            .store
            .update_assignment(tenant, assignment_id, update)
            .await?
            .ok_or_else(|| skills_store_traits::Error::not_found("assignment", assignment_id))?;
        let skill = self.skill(tenant, &updated.skill_id).await?;
        let mut affected = Affected::default();
        affected.extend(&skill.slug, vec![updated.clone()]);
        Ok((updated, self.sync_affected(tenant, affected).await?))
    }

    /// Trigger 2: remove an assignment, then remove the skill's directory from the agents
    /// it reached (where nothing else assigns it).
    pub async fn unassign(&self, tenant: &TenantId, assignment_id: &str) -> Result<Vec<AgentSync>> {
        let Some(assignment) = self.store.find_assignment(tenant, assignment_id).await? else {
            return Err(skills_store_traits::Error::not_found("assignment", assignment_id).into());
        };
        let skill = self.skill(tenant, &assignment.skill_id).await?;
        self.store.delete_assignment(tenant, assignment_id).await?;
        let mut affected = Affected::default();
        affected.extend(&skill.slug, vec![assignment]);
        self.sync_affected(tenant, affected).await
    }

    /// Brings one skill's entry in one agent's sandbox in line (written through the cache
    /// when stale, removed when nothing reaches it any more), touching no other entry.
    pub async fn sync_skill(
        &self,
        tenant: &TenantId,
        agent: &AgentRef,
        skill_id: &str,
    ) -> Result<AgentSync> {
        let skill = self.skill(tenant, skill_id).await?;
        let slugs = BTreeSet::from([skill.slug]);
        let mut syncs = self
            .sync_agents(tenant, vec![agent.clone()], Some(&slugs))
            .await;
        syncs
            .pop()
            .ok_or_else(|| Error::Host("sync produced no outcome".into()))
    }

    /// What a full sync of `agent` would write and remove, writing nothing (seed 002 section
    /// 17.18); `None` when its sandbox is not running.
    pub async fn sync_status(
        &self,
        tenant: &TenantId,
        agent: &AgentRef,
    ) -> Result<Option<SyncStatus>> {
        let Some(sandbox) = self.agents.sandbox(tenant, agent).await? else {
            return Ok(None);
        };
        let status = sync_status(
            self.store.as_ref(),
            tenant,
            &agent.agent_id,
            agent.team_id.as_deref(),
            sandbox.as_ref(),
        )
        .await?;
        Ok(Some(status))
    }

    /// Trigger 5: a sandbox was created (or started): sync everything assigned to it.
    pub async fn sandbox_created(&self, tenant: &TenantId, agent: &AgentRef) -> Result<AgentSync> {
        let mut syncs = self.sync_agents(tenant, vec![agent.clone()], None).await;
        syncs
            .pop()
            .ok_or_else(|| Error::Host("sync produced no outcome".into()))
    }

    /// Eager materialization at start (seed 002 section 3.3, the optional mode): writes every
    /// enabled skill of the tenant into the cache. Without a cache there is nothing to do.
    pub async fn materialize_all(&self, tenant: &TenantId) -> Result<MaterializeReport> {
        let mut report = MaterializeReport::default();
        let Some(cache) = &self.cache else {
            return Ok(report);
        };
        let filter = SkillFilter {
            enabled: Some(true),
            ..SkillFilter::default()
        };
        for skill in self.store.list_skills(tenant, &filter).await? {
            match cache
                .materialize(self.store.as_ref(), tenant, &skill.id)
                .await
            {
                Ok(done) if done.written => report.written.push(skill.id),
                Ok(_) => report.unchanged.push(skill.id),
                Err(err) => report.errors.push(format!("{}: {err}", skill.id)),
            }
        }
        report.written.sort();
        report.unchanged.sort();
        report.errors.sort();
        Ok(report)
    }

    async fn skill(
        &self,
        tenant: &TenantId,
        skill_id: &str,
    ) -> Result<skills_store_traits::SkillRecord> {
        Ok(self
            .store
            .find_skill_by_id(tenant, skill_id)
            .await?
            .ok_or_else(|| skills_store_traits::Error::not_found("skill", skill_id))?)
    }

    async fn assignments_of(
        &self,
        tenant: &TenantId,
        skill_id: &str,
    ) -> Result<Vec<SkillAssignment>> {
        let filter = AssignmentFilter {
            skill_id: Some(skill_id.to_owned()),
            ..AssignmentFilter::default()
        };
        Ok(self.store.list_assignments(tenant, &filter).await?)
    }

    /// Re-materializes a changed skill: its cached directory is dropped and written again.
    fn refresh_cache(&self, skill: &crate::stored::StoredSkill) -> Result<()> {
        if let Some(cache) = &self.cache {
            cache.invalidate(&skill.record.id)?;
            cache.materialize_stored(skill)?;
        }
        Ok(())
    }

    fn drop_cache(&self, skill_id: &str) -> Result<()> {
        if let Some(cache) = &self.cache {
            cache.invalidate(skill_id)?;
        }
        Ok(())
    }

    /// Syncs the affected slugs of every agent an affected assignment reaches.
    async fn sync_affected(&self, tenant: &TenantId, affected: Affected) -> Result<Vec<AgentSync>> {
        if affected.slugs.is_empty() {
            return Ok(Vec::new());
        }
        let agents = self.reached(tenant, &affected.assignments).await?;
        Ok(self
            .sync_agents(tenant, agents, Some(&affected.slugs))
            .await)
    }

    /// The agents any of `assignments` reaches, sorted and deduplicated.
    async fn reached(
        &self,
        tenant: &TenantId,
        assignments: &[SkillAssignment],
    ) -> Result<Vec<AgentRef>> {
        let all = self.agents.agents(tenant).await?;
        let mut reached: Vec<AgentRef> = all
            .into_iter()
            .filter(|agent| {
                assignments.iter().any(|a| match a.scope {
                    AssignmentScope::Global => true,
                    AssignmentScope::Team => a.scope_id.is_some() && a.scope_id == agent.team_id,
                    AssignmentScope::Agent => a.scope_id.as_deref() == Some(&agent.agent_id),
                })
            })
            .collect();
        reached.sort();
        reached.dedup();
        Ok(reached)
    }

    /// Syncs each agent: only `slugs` when given, else everything.
    async fn sync_agents(
        &self,
        tenant: &TenantId,
        agents: Vec<AgentRef>,
        slugs: Option<&BTreeSet<String>>,
    ) -> Vec<AgentSync> {
        let mut out = Vec::with_capacity(agents.len());
        for agent in agents {
            let (report, error) = match self.agents.sandbox(tenant, &agent).await {
                Ok(None) => (None, None),
                Ok(Some(sandbox)) => match self
                    .sync_one_agent(tenant, &agent, sandbox.as_ref(), slugs)
                    .await
                {
                    Ok(report) => (Some(report), None),
                    Err(err) => (None, Some(err.to_string())),
                },
                Err(err) => (None, Some(err.to_string())),
            };
            out.push(AgentSync {
                agent,
                report,
                error,
            });
        }
        out
    }

    async fn sync_one_agent(
        &self,
        tenant: &TenantId,
        agent: &AgentRef,
        sandbox: &dyn SandboxFs,
        slugs: Option<&BTreeSet<String>>,
    ) -> Result<SyncReport> {
        let store = self.store.as_ref();
        let cache = self.cache.as_ref();
        let team = agent.team_id.as_deref();
        let Some(slugs) = slugs else {
            return sync_agent_via(store, cache, tenant, &agent.agent_id, team, sandbox).await;
        };
        // Slugs come sorted, so each list of the merged report is sorted too.
        let mut total = SyncReport::default();
        for slug in slugs {
            let one = sync_slug(store, cache, tenant, &agent.agent_id, team, slug, sandbox).await?;
            total.synced.extend(one.synced);
            total.removed.extend(one.removed);
            total.unchanged.extend(one.unchanged);
            total.errors.extend(one.errors);
        }
        Ok(total)
    }
}
