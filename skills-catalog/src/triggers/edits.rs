//! Skill and file edits as [`Catalog`] operations: each is an [`admin`] edit (plugin skills
//! refused) followed by the cache refresh and the sync of that one skill's entry in the
//! sandboxes of the agents assigned it.

use skills_store_traits::{
    NewSkillFile, SkillFileRecord, SkillFileUpdate, SkillRecord, SkillUpdate, TenantId,
};

use super::{Affected, AgentSync, Catalog};
use crate::admin;
use crate::error::Result;
use crate::stored::StoredSkill;

impl Catalog {
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

    /// Enables or disables an admin skill: written to, or removed from, the sandboxes of the
    /// agents assigned it. A plain switch, not an operator's hold: a skill held off
    /// (`SkillRecord::held`) stays disabled here, since only lifting the hold (an `edit`
    /// with `held: Some(false)`, as `skills-install`'s audited `Installer::enable` does)
    /// may switch it back on.
    pub async fn set_enabled(
        &self,
        tenant: &TenantId,
        skill_id: &str,
        enabled: bool,
    ) -> Result<(SkillRecord, Vec<AgentSync>)> {
        let update = SkillUpdate {
            enabled: Some(enabled),
            ..SkillUpdate::default()
        };
        self.edit(tenant, skill_id, update).await
    }

    /// Adds a supporting file, then refreshes the cache and the assigned agents' copies.
    pub async fn add_file(
        &self,
        tenant: &TenantId,
        skill_id: &str,
        file: NewSkillFile,
    ) -> Result<(SkillFileRecord, Vec<AgentSync>)> {
        let record = admin::add_file(self.store.as_ref(), tenant, skill_id, file).await?;
        Ok((record, self.resync_skill(tenant, skill_id).await?))
    }

    /// Changes a supporting file (named by its path), then refreshes the cache and the
    /// assigned agents' copies.
    pub async fn update_file(
        &self,
        tenant: &TenantId,
        skill_id: &str,
        relative_path: &str,
        update: SkillFileUpdate,
    ) -> Result<(SkillFileRecord, Vec<AgentSync>)> {
        let record =
            admin::update_file(self.store.as_ref(), tenant, skill_id, relative_path, update)
                .await?;
        Ok((record, self.resync_skill(tenant, skill_id).await?))
    }

    /// Removes a supporting file (named by its path), then refreshes the cache and the
    /// assigned agents' copies.
    pub async fn remove_file(
        &self,
        tenant: &TenantId,
        skill_id: &str,
        relative_path: &str,
    ) -> Result<Vec<AgentSync>> {
        admin::remove_file(self.store.as_ref(), tenant, skill_id, relative_path).await?;
        self.resync_skill(tenant, skill_id).await
    }

    /// After any content change (an edit, a plugin upgrade): re-materialize the cache and
    /// sync the skill's entry for every agent assigned it.
    pub async fn resync_skill(&self, tenant: &TenantId, skill_id: &str) -> Result<Vec<AgentSync>> {
        let skill = StoredSkill::load(self.store.as_ref(), tenant, skill_id).await?;
        self.refresh_cache(&skill)?;
        let mut affected = Affected::default();
        let assignments = self.assignments_of(tenant, skill_id).await?;
        affected.extend(&skill.record.slug, assignments);
        self.sync_affected(tenant, affected).await
    }

    /// Deletes an admin skill (its files and assignments go with it; plugin skills are
    /// refused), drops its cache, and removes it from the agents that had it.
    pub async fn delete(&self, tenant: &TenantId, skill_id: &str) -> Result<Vec<AgentSync>> {
        let assignments = self.assignments_of(tenant, skill_id).await?;
        let record = admin::delete_skill(self.store.as_ref(), tenant, skill_id).await?;
        self.drop_cache(skill_id)?;
        let mut affected = Affected::default();
        affected.extend(&record.slug, assignments);
        self.sync_affected(tenant, affected).await
    }
}
