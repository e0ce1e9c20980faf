//! [`SkillStore`] on the `skills`, `skill_files` and `skill_assignments` tables.
//!
//! Each call validates exactly as the in-memory store does (same functions, same order,
//! same field names), then runs one transaction on the connection thread. Every statement
//! is restricted to the caller's tenant; a child row is reached only through its tenant.

mod assignments;
mod files;
mod records;
pub(crate) mod resolvable;

use std::collections::BTreeMap;

use async_trait::async_trait;
use skills_store_traits::validate;
use skills_store_traits::{
    AgentSkills, AssignedSkill, AssignmentFilter, AssignmentUpdate, NewAssignment, NewSkill,
    NewSkillFile, ResolvableSkill, Result, SkillAssignment, SkillFileRecord, SkillFileUpdate,
    SkillFilter, SkillRecord, SkillStore, SkillUpdate, TenantId, assigned_skill_ids,
};

use crate::SqliteStore;

#[async_trait]
impl SkillStore for SqliteStore {
    async fn create_skill(&self, tenant: &TenantId, new: NewSkill) -> Result<SkillRecord> {
        validate::check_new_skill(&new, &self.limits)?;
        let (tenant, clock) = (tenant.to_string(), self.clock.clone());
        self.worker
            .write(move |conn| records::create(conn, &tenant, &new, clock.now()))
            .await
    }

    async fn find_skill_by_id(&self, tenant: &TenantId, id: &str) -> Result<Option<SkillRecord>> {
        let (tenant, id) = (tenant.to_string(), id.to_owned());
        self.worker
            .read(move |conn| records::by_id(conn, &tenant, &id))
            .await
    }

    async fn find_skill_by_slug(
        &self,
        tenant: &TenantId,
        slug: &str,
    ) -> Result<Option<SkillRecord>> {
        let (tenant, slug) = (tenant.to_string(), slug.to_owned());
        self.worker
            .read(move |conn| records::by_slug(conn, &tenant, &slug))
            .await
    }

    async fn list_skills(
        &self,
        tenant: &TenantId,
        filter: &SkillFilter,
    ) -> Result<Vec<SkillRecord>> {
        let (tenant, filter) = (tenant.to_string(), filter.clone());
        self.worker
            .read(move |conn| records::list(conn, &tenant, &filter))
            .await
    }

    async fn update_skill(
        &self,
        tenant: &TenantId,
        id: &str,
        update: SkillUpdate,
    ) -> Result<Option<SkillRecord>> {
        let (tenant, id) = (tenant.to_string(), id.to_owned());
        let (clock, limits) = (self.clock.clone(), self.limits);
        self.worker
            .write(move |conn| records::update(conn, &tenant, &id, &update, &limits, clock.now()))
            .await
    }

    async fn delete_skill(&self, tenant: &TenantId, id: &str) -> Result<bool> {
        let (tenant, id) = (tenant.to_string(), id.to_owned());
        self.worker
            .write(move |conn| records::delete(conn, &tenant, &id))
            .await
    }

    async fn is_slug_available(
        &self,
        tenant: &TenantId,
        slug: &str,
        exclude_id: Option<&str>,
    ) -> Result<bool> {
        let (tenant, slug) = (tenant.to_string(), slug.to_owned());
        let exclude_id = exclude_id.map(str::to_owned);
        self.worker
            .read(move |conn| {
                let holder = records::slug_holder(conn, &tenant, &slug)?;
                Ok(holder.is_none() || holder == exclude_id)
            })
            .await
    }

    async fn create_skill_file(
        &self,
        tenant: &TenantId,
        skill_id: &str,
        file: NewSkillFile,
    ) -> Result<SkillFileRecord> {
        validate::check_file("file", &file, &self.limits)?;
        let (tenant, skill_id) = (tenant.to_string(), skill_id.to_owned());
        let (clock, limits) = (self.clock.clone(), self.limits);
        self.worker
            .write(move |conn| files::create(conn, &tenant, &skill_id, &file, &limits, clock.now()))
            .await
    }

    async fn list_skill_files(
        &self,
        tenant: &TenantId,
        skill_id: &str,
    ) -> Result<Vec<SkillFileRecord>> {
        let (tenant, skill_id) = (tenant.to_string(), skill_id.to_owned());
        self.worker
            .read(move |conn| files::list(conn, &tenant, &skill_id))
            .await
    }

    async fn list_files_for_skills(
        &self,
        tenant: &TenantId,
        skill_ids: &[String],
    ) -> Result<BTreeMap<String, Vec<SkillFileRecord>>> {
        let (tenant, skill_ids) = (tenant.to_string(), skill_ids.to_vec());
        self.worker
            .read(move |conn| files::list_many(conn, &tenant, &skill_ids))
            .await
    }

    async fn find_skill_file(
        &self,
        tenant: &TenantId,
        skill_id: &str,
        relative_path: &str,
    ) -> Result<Option<SkillFileRecord>> {
        let (tenant, skill_id) = (tenant.to_string(), skill_id.to_owned());
        let path = relative_path.to_owned();
        self.worker
            .read(move |conn| files::by_path(conn, &tenant, &skill_id, &path))
            .await
    }

    async fn update_skill_file(
        &self,
        tenant: &TenantId,
        file_id: &str,
        update: SkillFileUpdate,
    ) -> Result<Option<SkillFileRecord>> {
        let (tenant, file_id) = (tenant.to_string(), file_id.to_owned());
        let (clock, limits) = (self.clock.clone(), self.limits);
        self.worker
            .write(move |conn| {
                files::update(conn, &tenant, &file_id, &update, &limits, clock.now())
            })
            .await
    }

    async fn delete_skill_file(&self, tenant: &TenantId, file_id: &str) -> Result<bool> {
        let (tenant, file_id) = (tenant.to_string(), file_id.to_owned());
        let clock = self.clock.clone();
        self.worker
            .write(move |conn| files::delete(conn, &tenant, &file_id, clock.now()))
            .await
    }

    async fn delete_skill_files_by_skill_id(
        &self,
        tenant: &TenantId,
        skill_id: &str,
    ) -> Result<u64> {
        let (tenant, skill_id) = (tenant.to_string(), skill_id.to_owned());
        let clock = self.clock.clone();
        self.worker
            .write(move |conn| files::delete_all(conn, &tenant, &skill_id, clock.now()))
            .await
    }

    async fn create_assignment(
        &self,
        tenant: &TenantId,
        new: NewAssignment,
    ) -> Result<SkillAssignment> {
        validate::check_assignment(&new)?;
        let (tenant, clock) = (tenant.to_string(), self.clock.clone());
        self.worker
            .write(move |conn| assignments::create(conn, &tenant, &new, clock.now()))
            .await
    }

    async fn find_assignment(
        &self,
        tenant: &TenantId,
        id: &str,
    ) -> Result<Option<SkillAssignment>> {
        let (tenant, id) = (tenant.to_string(), id.to_owned());
        self.worker
            .read(move |conn| assignments::by_id(conn, &tenant, &id))
            .await
    }

    async fn list_assignments(
        &self,
        tenant: &TenantId,
        filter: &AssignmentFilter,
    ) -> Result<Vec<SkillAssignment>> {
        let (tenant, filter) = (tenant.to_string(), filter.clone());
        self.worker
            .read(move |conn| assignments::list(conn, &tenant, &filter))
            .await
    }

    async fn assignments_for_agent(
        &self,
        tenant: &TenantId,
        agent_id: &str,
        team_id: Option<&str>,
    ) -> Result<Vec<AssignedSkill>> {
        let (tenant, agent) = (tenant.to_string(), agent_id.to_owned());
        let team = team_id.map(str::to_owned);
        self.worker
            .read(move |conn| assignments::for_agent(conn, &tenant, &agent, team.as_deref()))
            .await
    }

    async fn assignments_for_agent_with_files(
        &self,
        tenant: &TenantId,
        agent_id: &str,
        team_id: Option<&str>,
    ) -> Result<AgentSkills> {
        let (tenant, agent) = (tenant.to_string(), agent_id.to_owned());
        let team = team_id.map(str::to_owned);
        // One job, one read transaction: both statements see one snapshot.
        self.worker
            .read(move |conn| {
                let assigned = assignments::for_agent(conn, &tenant, &agent, team.as_deref())?;
                let files = files::list_many(conn, &tenant, &assigned_skill_ids(&assigned))?;
                Ok(AgentSkills::new(assigned, files))
            })
            .await
    }

    async fn resolvable_skills(
        &self,
        tenant: &TenantId,
        agent_id: &str,
        team_id: Option<&str>,
    ) -> Result<Vec<ResolvableSkill>> {
        let (tenant, agent) = (tenant.to_string(), agent_id.to_owned());
        let team = team_id.map(str::to_owned);
        // Which skills reach the agent at which stamp, from two covering indexes; the
        // skills decoded before are reused, and only the others are read, by id.
        if self.projections.enabled() {
            let (t, a, m) = (tenant.clone(), agent.clone(), team.clone());
            let reached = self
                .worker
                .read(move |conn| resolvable::reached(conn, &t, &a, m.as_deref()))
                .await?;
            let lookup = self.projections.lookup(&tenant, reached);
            let fetched = if lookup.is_complete() {
                Vec::new()
            } else {
                let (t, ids) = (tenant.clone(), lookup.missing_ids());
                self.worker
                    .read(move |conn| resolvable::by_id(conn, &t, &ids))
                    .await?
            };
            // `None` when a missing row changed between the two reads: read it all again.
            if let Some(skills) = self.projections.complete(lookup, fetched) {
                return Ok(skills);
            }
        }
        // One job, one read transaction: one snapshot, whatever the first answer saw.
        let key = tenant.clone();
        let stamped = self
            .worker
            .read(move |conn| resolvable::read(conn, &tenant, &agent, team.as_deref()))
            .await?;
        self.projections.remember(&key, &stamped);
        Ok(stamped.into_iter().map(|(_, skill)| skill).collect())
    }

    async fn update_assignment(
        &self,
        tenant: &TenantId,
        id: &str,
        update: AssignmentUpdate,
    ) -> Result<Option<SkillAssignment>> {
        let (tenant, id) = (tenant.to_string(), id.to_owned());
        let clock = self.clock.clone();
        self.worker
            .write(move |conn| assignments::update(conn, &tenant, &id, update, clock.now()))
            .await
    }

    async fn delete_assignment(&self, tenant: &TenantId, id: &str) -> Result<bool> {
        let (tenant, id) = (tenant.to_string(), id.to_owned());
        self.worker
            .write(move |conn| assignments::delete(conn, &tenant, &id))
            .await
    }

    async fn skills_with_assignment_counts(
        &self,
        tenant: &TenantId,
    ) -> Result<Vec<(SkillRecord, u64)>> {
        let tenant = tenant.to_string();
        self.worker
            .read(move |conn| records::with_assignment_counts(conn, &tenant))
            .await
    }

    async fn list_categories(&self, tenant: &TenantId) -> Result<Vec<String>> {
        let tenant = tenant.to_string();
        self.worker
            .read(move |conn| records::categories(conn, &tenant))
            .await
    }

    async fn agent_ids_for_skill(&self, tenant: &TenantId, skill_id: &str) -> Result<Vec<String>> {
        let (tenant, skill_id) = (tenant.to_string(), skill_id.to_owned());
        self.worker
            .read(move |conn| assignments::agent_ids(conn, &tenant, &skill_id))
            .await
    }
}
