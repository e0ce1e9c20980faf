//! The sync triggers of seed 002 section 4.3, tied together: a [`Catalog`] changes the store
//! and then syncs every agent the change reaches.
//!
//! The host tells the catalog which agents exist, their teams, and how to reach each one's
//! skills directory through [`AgentDirectory`]. An agent whose sandbox is not running gets no
//! sync now; it is reported as deferred, and the host calls [`Catalog::sandbox_created`] when
//! the sandbox starts (section 4.5).

use std::sync::Arc;

use async_trait::async_trait;
use serde::Serialize;
use skills_store_traits::{
    AssignmentScope, NewAssignment, SkillAssignment, SkillRecord, SkillStore, SkillUpdate,
    TenantId, Violation,
};

use crate::admin;
use crate::error::{Error, Result};
use crate::materialize::Materializer;
use crate::sandbox::SandboxFs;
use crate::sync::{SyncReport, sync_agent};

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

impl Catalog {
    /// A catalog over `store` syncing the agents `agents` lists.
    pub fn new(store: Arc<dyn SkillStore>, agents: Arc<dyn AgentDirectory>) -> Self {
        Catalog {
            store,
            agents,
            cache: None,
        }
    }

    /// Keeps a host-side cache: edits invalidate and re-materialize it, deletes remove it.
    pub fn with_cache(mut self, cache: Materializer) -> Self {
        self.cache = Some(cache);
        self
    }

    /// The store.
    pub fn store(&self) -> &Arc<dyn SkillStore> {
        &self.store
    }

    /// Trigger 1 and 4: assign a skill, then sync every agent the assignment reaches.
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
        if let Some(cache) = &self.cache {
            cache
                .materialize(self.store.as_ref(), tenant, &assignment.skill_id)
                .await?;
        }
        let created = self.store.create_assignment(tenant, assignment).await?;
        let agents = self.reached(tenant, std::slice::from_ref(&created)).await?;
        Ok((created, self.sync_all(tenant, agents).await))
    }

    /// Trigger 2: remove an assignment, then sync the agents it reached (removing the
    /// skill's directory where nothing else assigns it).
    pub async fn unassign(&self, tenant: &TenantId, assignment_id: &str) -> Result<Vec<AgentSync>> {
        let Some(assignment) = self.store.find_assignment(tenant, assignment_id).await? else {
            return Err(skills_store_traits::Error::not_found("assignment", assignment_id).into());
        };
        self.store.delete_assignment(tenant, assignment_id).await?;
        let agents = self.reached(tenant, &[assignment]).await?;
        Ok(self.sync_all(tenant, agents).await)
    }

    /// Trigger 3: an admin edit (refused for plugin skills), cache invalidation and
    /// re-materialization, then a sync of every agent assigned the skill.
    pub async fn edit(
        &self,
        tenant: &TenantId,
        skill_id: &str,
        update: SkillUpdate,
    ) -> Result<(SkillRecord, Vec<AgentSync>)> {
        let record = admin::update_skill(self.store.as_ref(), tenant, skill_id, update).await?;
        let syncs = self.resync_skill(tenant, skill_id).await?;
        Ok((record, syncs))
    }

    /// After any content change (an edit, a plugin upgrade): refresh the cache and sync every
    /// agent assigned the skill.
    pub async fn resync_skill(&self, tenant: &TenantId, skill_id: &str) -> Result<Vec<AgentSync>> {
        if let Some(cache) = &self.cache {
            cache.invalidate(skill_id)?;
            cache
                .materialize(self.store.as_ref(), tenant, skill_id)
                .await?;
        }
        let filter = skills_store_traits::AssignmentFilter {
            skill_id: Some(skill_id.to_owned()),
            ..Default::default()
        };
        let assignments = self.store.list_assignments(tenant, &filter).await?;
        let agents = self.reached(tenant, &assignments).await?;
        Ok(self.sync_all(tenant, agents).await)
    }

    /// Deletes a skill (its files and assignments go with it), drops its cache, and syncs the
    /// agents that had it.
    pub async fn delete(&self, tenant: &TenantId, skill_id: &str) -> Result<Vec<AgentSync>> {
        let filter = skills_store_traits::AssignmentFilter {
            skill_id: Some(skill_id.to_owned()),
            ..Default::default()
        };
        let assignments = self.store.list_assignments(tenant, &filter).await?;
        if !self.store.delete_skill(tenant, skill_id).await? {
            return Err(skills_store_traits::Error::not_found("skill", skill_id).into());
        }
        if let Some(cache) = &self.cache {
            cache.invalidate(skill_id)?;
        }
        let agents = self.reached(tenant, &assignments).await?;
        Ok(self.sync_all(tenant, agents).await)
    }

    /// Trigger 5: a sandbox was created (or started): sync everything assigned to it.
    pub async fn sandbox_created(&self, tenant: &TenantId, agent: &AgentRef) -> Result<AgentSync> {
        let mut syncs = self.sync_all(tenant, vec![agent.clone()]).await;
        syncs
            .pop()
            .ok_or_else(|| Error::Host("sync produced no outcome".into()))
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

    async fn sync_all(&self, tenant: &TenantId, agents: Vec<AgentRef>) -> Vec<AgentSync> {
        let mut out = Vec::with_capacity(agents.len());
        for agent in agents {
            let outcome = match self.agents.sandbox(tenant, &agent).await {
                Ok(None) => AgentSync {
                    agent,
                    report: None,
                    error: None,
                },
                Ok(Some(sandbox)) => {
                    let result = sync_agent(
                        self.store.as_ref(),
                        tenant,
                        &agent.agent_id,
                        agent.team_id.as_deref(),
                        sandbox.as_ref(),
                    )
                    .await;
                    match result {
                        Ok(report) => AgentSync {
                            agent,
                            report: Some(report),
                            error: None,
                        },
                        Err(err) => AgentSync {
                            agent,
                            report: None,
                            error: Some(err.to_string()),
                        },
                    }
                }
                Err(err) => AgentSync {
                    agent,
                    report: None,
                    error: Some(err.to_string()),
                },
            };
            out.push(outcome);
        }
        out
    }
}
