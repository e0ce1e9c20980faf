//! The batch reads of [`SkillStore`] and their default paths: what a caller that would
//! otherwise make one call per skill (the resolver) reads at once.

use std::collections::BTreeMap;

use super::{AssignedSkill, SkillFileRecord, SkillStore};
use crate::error::Result;
use crate::tenancy::TenantId;

/// Everything resolving an agent's skills reads, as
/// [`SkillStore::assignments_for_agent_with_files`] returns it.
#[derive(Debug, Clone, Default, PartialEq)]
#[non_exhaustive]
pub struct AgentSkills {
    /// Every assignment reaching the agent with its skill, as
    /// [`assignments_for_agent`](SkillStore::assignments_for_agent) lists them.
    pub assigned: Vec<AssignedSkill>,
    /// The files of the skills in `assigned`, as
    /// [`list_files_for_skills`](SkillStore::list_files_for_skills) gives them for those
    /// skills' ids.
    pub files: BTreeMap<String, Vec<SkillFileRecord>>,
}

impl AgentSkills {
    /// The two parts, for backends in other crates.
    pub fn new(
        assigned: Vec<AssignedSkill>,
        files: BTreeMap<String, Vec<SkillFileRecord>>,
    ) -> Self {
        AgentSkills { assigned, files }
    }
}

/// The distinct skill ids of `assigned`, in first-seen order.
pub fn assigned_skill_ids(assigned: &[AssignedSkill]) -> Vec<String> {
    let mut seen = std::collections::BTreeSet::new();
    assigned
        .iter()
        .filter(|a| seen.insert(a.skill.id.as_str()))
        .map(|a| a.skill.id.clone())
        .collect()
}

/// [`SkillStore::assignments_for_agent_with_files`] the default way, two calls
/// (`assignments_for_agent`, then `list_files_for_skills` unless nothing is assigned):
/// for decorators that want it explicitly and tests that compare against it.
pub async fn agent_skills_in_two_calls<S: SkillStore + ?Sized>(
    store: &S,
    tenant: &TenantId,
    agent_id: &str,
    team_id: Option<&str>,
) -> Result<AgentSkills> {
    let assigned = store
        .assignments_for_agent(tenant, agent_id, team_id)
        .await?;
    let ids = assigned_skill_ids(&assigned);
    let files = if ids.is_empty() {
        BTreeMap::new()
    } else {
        store.list_files_for_skills(tenant, &ids).await?
    };
    Ok(AgentSkills { assigned, files })
}

/// [`SkillStore::list_files_for_skills`] the slow way, one
/// [`list_skill_files`](SkillStore::list_skill_files) call per distinct id: the trait's
/// default, for decorators that want it explicitly and tests that compare against it.
pub async fn files_one_by_one<S: SkillStore + ?Sized>(
    store: &S,
    tenant: &TenantId,
    skill_ids: &[String],
) -> Result<BTreeMap<String, Vec<SkillFileRecord>>> {
    let mut out = BTreeMap::new();
    let mut seen = std::collections::BTreeSet::new();
    for id in skill_ids {
        if !seen.insert(id.as_str()) {
            continue;
        }
        let files = store.list_skill_files(tenant, id).await?;
        if !files.is_empty() {
            out.insert(id.clone(), files);
        }
    }
    Ok(out)
}
