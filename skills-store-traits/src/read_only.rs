//! [`ReadOnly`]: a store handle that reads through and refuses every write.
//!
//! **Threat.** Code handed a store (a kernel skill, seed 001's layer 0, which "is read-only at
//! run time") changes records it should only read.
//! **Guarantee.** Every method of [`SkillStore`], [`PlanStore`] and [`MemoryStore`] that
//! creates, changes or deletes a record returns [`Error::ReadOnly`] without calling the
//! wrapped store; reads are forwarded unchanged. The wrapped store is private: nothing reached
//! through the handle gives it back.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;

use async_trait::async_trait;
use serde_json::Value;

use crate::error::{Error, Result};
use crate::memory::{
    Episode, EpisodeQuery, Fact, FactQuery, MemoryStore, NewEpisode, NewFact, Preference, Procedure,
};
use crate::plans::{
    NewPlan, NewStep, PlanFilter, PlanRecord, PlanStore, PlanUpdate, StepUpdate, WorkingMemoryEntry,
};
use crate::skills::{
    AgentSkills, AssignedSkill, AssignmentFilter, AssignmentUpdate, NewAssignment, NewSkill,
    NewSkillFile, ResolvableSkill, SkillAssignment, SkillFileRecord, SkillFileUpdate, SkillFilter,
    SkillRecord, SkillStore, SkillUpdate,
};
use crate::tenancy::{TenantId, UserScope};

/// A read-only view of a store: reads go through, writes are [`Error::ReadOnly`].
///
/// ```
/// use std::sync::Arc;
/// use skills_store_traits::in_memory::InMemoryMemoryStore;
/// use skills_store_traits::memory::{FactQuery, NewFact};
/// use skills_store_traits::{Error, MemoryStore, ReadOnly, UserScope};
///
/// # futures::executor::block_on(async {
/// let store = Arc::new(InMemoryMemoryStore::new());
/// let scope = UserScope::new("acme", "alice");
/// store.add_fact(&scope, NewFact::new("Acme", "uses", "Rust", 0.9, "crm")).await?;
/// let about_acme = FactQuery::new(vec!["Acme".into()], vec![]);
///
/// let view = ReadOnly::new(store.clone() as Arc<dyn MemoryStore>);
/// assert_eq!(view.related_facts(&scope, &about_acme).await?.len(), 1);
/// let refused = view.add_fact(&scope, NewFact::new("Acme", "uses", "Go", 0.9, "crm")).await;
/// assert!(matches!(refused, Err(Error::ReadOnly { operation: "add_fact" })));
/// assert_eq!(store.related_facts(&scope, &about_acme).await?.len(), 1);
/// # Ok::<(), skills_store_traits::Error>(())
/// # }).unwrap();
/// ```
pub struct ReadOnly<S: ?Sized> {
    inner: Arc<S>,
}

impl<S: ?Sized> ReadOnly<S> {
    /// A read-only view of `store`.
    pub fn new(store: Arc<S>) -> Self {
        ReadOnly { inner: store }
    }
}

impl<S: ?Sized> Clone for ReadOnly<S> {
    fn clone(&self) -> Self {
        ReadOnly {
            inner: Arc::clone(&self.inner),
        }
    }
}

impl<S: ?Sized> fmt::Debug for ReadOnly<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ReadOnly(..)")
    }
}

fn refuse<T>(operation: &'static str) -> Result<T> {
    Err(Error::ReadOnly { operation })
}

#[async_trait]
impl<S: SkillStore + ?Sized> SkillStore for ReadOnly<S> {
    async fn create_skill(&self, _: &TenantId, _: NewSkill) -> Result<SkillRecord> {
        refuse("create_skill")
    }
    async fn find_skill_by_id(&self, tenant: &TenantId, id: &str) -> Result<Option<SkillRecord>> {
        self.inner.find_skill_by_id(tenant, id).await
    }
    async fn find_skill_by_slug(
        &self,
        tenant: &TenantId,
        slug: &str,
    ) -> Result<Option<SkillRecord>> {
        self.inner.find_skill_by_slug(tenant, slug).await
    }
    async fn list_skills(
        &self,
        tenant: &TenantId,
        filter: &SkillFilter,
    ) -> Result<Vec<SkillRecord>> {
        self.inner.list_skills(tenant, filter).await
    }
    async fn update_skill(
        &self,
        _: &TenantId,
        _: &str,
        _: SkillUpdate,
    ) -> Result<Option<SkillRecord>> {
        refuse("update_skill")
    }
    async fn delete_skill(&self, _: &TenantId, _: &str) -> Result<bool> {
        refuse("delete_skill")
    }
    async fn is_slug_available(
        &self,
        tenant: &TenantId,
        slug: &str,
        exclude_id: Option<&str>,
    ) -> Result<bool> {
        self.inner.is_slug_available(tenant, slug, exclude_id).await
    }
    async fn create_skill_file(
        &self,
        _: &TenantId,
        _: &str,
        _: NewSkillFile,
    ) -> Result<SkillFileRecord> {
        refuse("create_skill_file")
    }
    async fn list_skill_files(
        &self,
        tenant: &TenantId,
        skill_id: &str,
    ) -> Result<Vec<SkillFileRecord>> {
        self.inner.list_skill_files(tenant, skill_id).await
    }
    async fn list_files_for_skills(
        &self,
        tenant: &TenantId,
        skill_ids: &[String],
    ) -> Result<BTreeMap<String, Vec<SkillFileRecord>>> {
        self.inner.list_files_for_skills(tenant, skill_ids).await
    }
    async fn assignments_for_agent_with_files(
        &self,
        tenant: &TenantId,
        agent_id: &str,
        team_id: Option<&str>,
    ) -> Result<AgentSkills> {
        self.inner
            .assignments_for_agent_with_files(tenant, agent_id, team_id)
            .await
    }
    async fn resolvable_skills(
        &self,
        tenant: &TenantId,
        agent_id: &str,
        team_id: Option<&str>,
    ) -> Result<Vec<ResolvableSkill>> {
        self.inner
            .resolvable_skills(tenant, agent_id, team_id)
            .await
    }
    async fn find_skill_file(
        &self,
        tenant: &TenantId,
        skill_id: &str,
        relative_path: &str,
    ) -> Result<Option<SkillFileRecord>> {
        self.inner
            .find_skill_file(tenant, skill_id, relative_path)
            .await
    }
    async fn update_skill_file(
        &self,
        _: &TenantId,
        _: &str,
        _: SkillFileUpdate,
    ) -> Result<Option<SkillFileRecord>> {
        refuse("update_skill_file")
    }
    async fn delete_skill_file(&self, _: &TenantId, _: &str) -> Result<bool> {
        refuse("delete_skill_file")
    }
    async fn delete_skill_files_by_skill_id(&self, _: &TenantId, _: &str) -> Result<u64> {
        refuse("delete_skill_files_by_skill_id")
    }
    async fn create_assignment(&self, _: &TenantId, _: NewAssignment) -> Result<SkillAssignment> {
        refuse("create_assignment")
    }
    async fn find_assignment(
        &self,
        tenant: &TenantId,
        id: &str,
    ) -> Result<Option<SkillAssignment>> {
        self.inner.find_assignment(tenant, id).await
    }
    async fn list_assignments(
        &self,
        tenant: &TenantId,
        filter: &AssignmentFilter,
    ) -> Result<Vec<SkillAssignment>> {
        self.inner.list_assignments(tenant, filter).await
    }
    async fn assignments_for_agent(
        &self,
        tenant: &TenantId,
        agent_id: &str,
        team_id: Option<&str>,
    ) -> Result<Vec<AssignedSkill>> {
        self.inner
            .assignments_for_agent(tenant, agent_id, team_id)
            .await
    }
    async fn update_assignment(
        &self,
        _: &TenantId,
        _: &str,
        _: AssignmentUpdate,
    ) -> Result<Option<SkillAssignment>> {
        refuse("update_assignment")
    }
    async fn delete_assignment(&self, _: &TenantId, _: &str) -> Result<bool> {
        refuse("delete_assignment")
    }
    async fn skills_with_assignment_counts(
        &self,
        tenant: &TenantId,
    ) -> Result<Vec<(SkillRecord, u64)>> {
        self.inner.skills_with_assignment_counts(tenant).await
    }
    async fn list_categories(&self, tenant: &TenantId) -> Result<Vec<String>> {
        self.inner.list_categories(tenant).await
    }
    async fn agent_ids_for_skill(&self, tenant: &TenantId, skill_id: &str) -> Result<Vec<String>> {
        self.inner.agent_ids_for_skill(tenant, skill_id).await
    }
}

#[async_trait]
impl<S: PlanStore + ?Sized> PlanStore for ReadOnly<S> {
    async fn create_plan(&self, _: &UserScope, _: NewPlan) -> Result<PlanRecord> {
        refuse("create_plan")
    }
    async fn get_plan(&self, scope: &UserScope, plan_id: &str) -> Result<Option<PlanRecord>> {
        self.inner.get_plan(scope, plan_id).await
    }
    async fn list_plans(&self, scope: &UserScope, filter: &PlanFilter) -> Result<Vec<PlanRecord>> {
        self.inner.list_plans(scope, filter).await
    }
    async fn update_plan(&self, _: &UserScope, _: &str, _: PlanUpdate) -> Result<PlanRecord> {
        refuse("update_plan")
    }
    async fn delete_plan(&self, _: &UserScope, _: &str) -> Result<()> {
        refuse("delete_plan")
    }
    async fn insert_step(&self, _: &UserScope, _: &str, _: NewStep) -> Result<WorkingMemoryEntry> {
        refuse("insert_step")
    }
    async fn update_step(
        &self,
        _: &UserScope,
        _: &str,
        _: u32,
        _: StepUpdate,
    ) -> Result<WorkingMemoryEntry> {
        refuse("update_step")
    }
    async fn get_step(
        &self,
        scope: &UserScope,
        plan_id: &str,
        step_number: u32,
    ) -> Result<Option<WorkingMemoryEntry>> {
        self.inner.get_step(scope, plan_id, step_number).await
    }
    async fn list_steps(
        &self,
        scope: &UserScope,
        plan_id: &str,
    ) -> Result<Vec<WorkingMemoryEntry>> {
        self.inner.list_steps(scope, plan_id).await
    }
}

#[async_trait]
impl<S: MemoryStore + ?Sized> MemoryStore for ReadOnly<S> {
    async fn store_episode(&self, _: &UserScope, _: NewEpisode) -> Result<Episode> {
        refuse("store_episode")
    }
    async fn get_episode(&self, scope: &UserScope, episode_id: &str) -> Result<Option<Episode>> {
        self.inner.get_episode(scope, episode_id).await
    }
    async fn query_episodes(
        &self,
        scope: &UserScope,
        query: &EpisodeQuery,
    ) -> Result<Vec<Episode>> {
        self.inner.query_episodes(scope, query).await
    }
    async fn add_fact(&self, _: &UserScope, _: NewFact) -> Result<Fact> {
        refuse("add_fact")
    }
    async fn get_fact(&self, scope: &UserScope, fact_id: &str) -> Result<Option<Fact>> {
        self.inner.get_fact(scope, fact_id).await
    }
    async fn related_facts(&self, scope: &UserScope, query: &FactQuery) -> Result<Vec<Fact>> {
        self.inner.related_facts(scope, query).await
    }
    async fn record_successful_procedure(
        &self,
        _: &UserScope,
        _: &str,
        _: &[String],
        _: Value,
    ) -> Result<Procedure> {
        refuse("record_successful_procedure")
    }
    async fn relevant_procedures(
        &self,
        scope: &UserScope,
        task_type: &str,
    ) -> Result<Vec<Procedure>> {
        self.inner.relevant_procedures(scope, task_type).await
    }
    async fn set_preference(
        &self,
        _: &UserScope,
        _: &str,
        _: &str,
        _: Value,
    ) -> Result<Preference> {
        refuse("set_preference")
    }
    async fn preferences(
        &self,
        scope: &UserScope,
        context: Option<&str>,
    ) -> Result<Vec<Preference>> {
        self.inner.preferences(scope, context).await
    }
    async fn delete_preference(&self, _: &UserScope, _: &str, _: &str) -> Result<()> {
        refuse("delete_preference")
    }
}

#[cfg(test)]
mod tests;
