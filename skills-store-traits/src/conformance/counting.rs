//! [`CountingSkillStore`]: a [`SkillStore`] decorator that counts the calls reaching it, for
//! tests that bound how many store round trips an operation makes.

use std::collections::BTreeMap;
use std::sync::Mutex;

use async_trait::async_trait;

use crate::error::Result;
use crate::skills::{
    AgentSkills, AssignedSkill, AssignmentFilter, AssignmentUpdate, NewAssignment, NewSkill,
    NewSkillFile, ResolvableSkill, SkillAssignment, SkillFileRecord, SkillFileUpdate, SkillFilter,
    SkillRecord, SkillStore, SkillUpdate, agent_skills_in_two_calls, files_one_by_one,
    resolvable_from,
};
use crate::tenancy::TenantId;

/// Forwards every call to `inner` and counts it by method name. With
/// [`one_by_one`](CountingSkillStore::one_by_one), `list_files_for_skills`,
/// `assignments_for_agent_with_files` and `resolvable_skills` take the trait's default
/// paths (one counted `list_skill_files` per id; a counted `assignments_for_agent` and
/// files call), which is what a backend that overrides none of them costs.
///
/// ```
/// # futures::executor::block_on(async {
/// use skills_store_traits::conformance::counting::CountingSkillStore;
/// use skills_store_traits::{in_memory::InMemorySkillStore, SkillStore, TenantId};
///
/// let store = CountingSkillStore::new(InMemorySkillStore::new());
/// store.list_files_for_skills(&TenantId::new("t"), &["a".into(), "b".into()]).await.unwrap();
/// assert_eq!(store.total(), 1);
/// # });
/// ```
#[derive(Debug)]
pub struct CountingSkillStore<S> {
    inner: S,
    one_by_one: bool,
    calls: Mutex<BTreeMap<&'static str, u64>>,
}

impl<S: SkillStore> CountingSkillStore<S> {
    /// Counts the calls to `inner`.
    pub fn new(inner: S) -> Self {
        CountingSkillStore {
            inner,
            one_by_one: false,
            calls: Mutex::new(BTreeMap::new()),
        }
    }

    /// Answers `list_files_for_skills`, `assignments_for_agent_with_files` and
    /// `resolvable_skills` with the trait's defaults (per-id calls).
    pub fn one_by_one(mut self) -> Self {
        self.one_by_one = true;
        self
    }

    /// The calls so far, by method name.
    pub fn calls(&self) -> BTreeMap<&'static str, u64> {
        self.calls.lock().map(|c| c.clone()).unwrap_or_default()
    }

    /// How many calls so far.
    pub fn total(&self) -> u64 {
        self.calls().values().sum()
    }

    /// Forgets the calls so far.
    pub fn reset(&self) {
        if let Ok(mut calls) = self.calls.lock() {
            calls.clear();
        }
    }

    fn count(&self, method: &'static str) {
        if let Ok(mut calls) = self.calls.lock() {
            *calls.entry(method).or_default() += 1;
        }
    }
}

#[async_trait]
impl<S: SkillStore> SkillStore for CountingSkillStore<S> {
    async fn create_skill(&self, t: &TenantId, s: NewSkill) -> Result<SkillRecord> {
        self.count("create_skill");
        self.inner.create_skill(t, s).await
    }
    async fn find_skill_by_id(&self, t: &TenantId, id: &str) -> Result<Option<SkillRecord>> {
        self.count("find_skill_by_id");
        self.inner.find_skill_by_id(t, id).await
    }
    async fn find_skill_by_slug(&self, t: &TenantId, slug: &str) -> Result<Option<SkillRecord>> {
        self.count("find_skill_by_slug");
        self.inner.find_skill_by_slug(t, slug).await
    }
    async fn list_skills(&self, t: &TenantId, f: &SkillFilter) -> Result<Vec<SkillRecord>> {
        self.count("list_skills");
        self.inner.list_skills(t, f).await
    }
    async fn update_skill(
        &self,
        t: &TenantId,
        id: &str,
        u: SkillUpdate,
    ) -> Result<Option<SkillRecord>> {
        self.count("update_skill");
        self.inner.update_skill(t, id, u).await
    }
    async fn delete_skill(&self, t: &TenantId, id: &str) -> Result<bool> {
        self.count("delete_skill");
        self.inner.delete_skill(t, id).await
    }
    async fn is_slug_available(&self, t: &TenantId, s: &str, e: Option<&str>) -> Result<bool> {
        self.count("is_slug_available");
        self.inner.is_slug_available(t, s, e).await
    }
    async fn create_skill_file(
        &self,
        t: &TenantId,
        id: &str,
        f: NewSkillFile,
    ) -> Result<SkillFileRecord> {
        self.count("create_skill_file");
        self.inner.create_skill_file(t, id, f).await
    }
    async fn list_skill_files(&self, t: &TenantId, id: &str) -> Result<Vec<SkillFileRecord>> {
        self.count("list_skill_files");
        self.inner.list_skill_files(t, id).await
    }
    async fn list_files_for_skills(
        &self,
        t: &TenantId,
        ids: &[String],
    ) -> Result<BTreeMap<String, Vec<SkillFileRecord>>> {
        if self.one_by_one {
            return files_one_by_one(self, t, ids).await;
        }
        self.count("list_files_for_skills");
        self.inner.list_files_for_skills(t, ids).await
    }
    async fn assignments_for_agent_with_files(
        &self,
        t: &TenantId,
        agent: &str,
        team: Option<&str>,
    ) -> Result<AgentSkills> {
        if self.one_by_one {
            return agent_skills_in_two_calls(self, t, agent, team).await;
        }
        self.count("assignments_for_agent_with_files");
        self.inner
            .assignments_for_agent_with_files(t, agent, team)
            .await
    }
    async fn resolvable_skills(
        &self,
        t: &TenantId,
        agent: &str,
        team: Option<&str>,
    ) -> Result<Vec<ResolvableSkill>> {
        if self.one_by_one {
            let read = agent_skills_in_two_calls(self, t, agent, team).await?;
            return Ok(resolvable_from(&read));
        }
        self.count("resolvable_skills");
        self.inner.resolvable_skills(t, agent, team).await
    }
    async fn find_skill_file(
        &self,
        t: &TenantId,
        id: &str,
        p: &str,
    ) -> Result<Option<SkillFileRecord>> {
        self.count("find_skill_file");
        self.inner.find_skill_file(t, id, p).await
    }
    async fn update_skill_file(
        &self,
        t: &TenantId,
        id: &str,
        u: SkillFileUpdate,
    ) -> Result<Option<SkillFileRecord>> {
        self.count("update_skill_file");
        self.inner.update_skill_file(t, id, u).await
    }
    async fn delete_skill_file(&self, t: &TenantId, id: &str) -> Result<bool> {
        self.count("delete_skill_file");
        self.inner.delete_skill_file(t, id).await
    }
    async fn delete_skill_files_by_skill_id(&self, t: &TenantId, id: &str) -> Result<u64> {
        self.count("delete_skill_files_by_skill_id");
        self.inner.delete_skill_files_by_skill_id(t, id).await
    }
    async fn create_assignment(&self, t: &TenantId, a: NewAssignment) -> Result<SkillAssignment> {
        self.count("create_assignment");
        self.inner.create_assignment(t, a).await
    }
    async fn find_assignment(&self, t: &TenantId, id: &str) -> Result<Option<SkillAssignment>> {
        self.count("find_assignment");
        self.inner.find_assignment(t, id).await
    }
    async fn list_assignments(
        &self,
        t: &TenantId,
        f: &AssignmentFilter,
    ) -> Result<Vec<SkillAssignment>> {
        self.count("list_assignments");
        self.inner.list_assignments(t, f).await
    }
    async fn assignments_for_agent(
        &self,
        t: &TenantId,
        agent: &str,
        team: Option<&str>,
    ) -> Result<Vec<AssignedSkill>> {
        self.count("assignments_for_agent");
        self.inner.assignments_for_agent(t, agent, team).await
    }
    async fn update_assignment(
        &self,
        t: &TenantId,
        id: &str,
        u: AssignmentUpdate,
    ) -> Result<Option<SkillAssignment>> {
        self.count("update_assignment");
        self.inner.update_assignment(t, id, u).await
    }
    async fn delete_assignment(&self, t: &TenantId, id: &str) -> Result<bool> {
        self.count("delete_assignment");
        self.inner.delete_assignment(t, id).await
    }
    async fn skills_with_assignment_counts(&self, t: &TenantId) -> Result<Vec<(SkillRecord, u64)>> {
        self.count("skills_with_assignment_counts");
        self.inner.skills_with_assignment_counts(t).await
    }
    async fn list_categories(&self, t: &TenantId) -> Result<Vec<String>> {
        self.count("list_categories");
        self.inner.list_categories(t).await
    }
    async fn agent_ids_for_skill(&self, t: &TenantId, id: &str) -> Result<Vec<String>> {
        self.count("agent_ids_for_skill");
        self.inner.agent_ids_for_skill(t, id).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::in_memory::InMemorySkillStore;

    #[tokio::test]
    async fn the_default_batch_passes_the_batch_contract() {
        // The trait's default (what a backend without an override runs) meets the contract.
        let store = CountingSkillStore::new(InMemorySkillStore::new()).one_by_one();
        super::super::skill_batches::run_all(&store).await;
        assert_eq!(store.calls().get("list_files_for_skills"), None);
        assert!(store.calls()["list_skill_files"] > 1_000);
    }

    #[tokio::test]
    async fn decorators_forward_the_batch() {
        use crate::ReadOnly;
        use crate::cache::CachedSkillStore;
        use std::sync::Arc;
        let counted = Arc::new(CountingSkillStore::new(InMemorySkillStore::new()));
        let t = TenantId::new("t");
        let ids: Vec<String> = (0..50).map(|i| format!("id-{i}")).collect();
        let view = ReadOnly::new(Arc::clone(&counted));
        view.list_files_for_skills(&t, &ids).await.unwrap();
        assert_eq!(counted.total(), 1, "ReadOnly fell back to per-id calls");
        let cached = CachedSkillStore::new(
            CountingSkillStore::new(InMemorySkillStore::new()),
            Arc::new(crate::SystemClock),
        );
        cached.list_files_for_skills(&t, &ids).await.unwrap();
        assert_eq!(
            cached.inner().total(),
            1,
            "CachedSkillStore fell back to per-id calls"
        );
    }

    #[tokio::test]
    async fn decorators_forward_the_agent_read_and_the_default_meets_its_contract() {
        use crate::ReadOnly;
        use crate::cache::CachedSkillStore;
        use std::sync::Arc;
        let counted = Arc::new(CountingSkillStore::new(InMemorySkillStore::new()));
        let t = TenantId::new("t");
        let view = ReadOnly::new(Arc::clone(&counted));
        view.assignments_for_agent_with_files(&t, "a", Some("team"))
            .await
            .unwrap();
        assert_eq!(
            counted.calls().get("assignments_for_agent_with_files"),
            Some(&1),
            "ReadOnly fell back to the two calls"
        );
        assert_eq!(counted.total(), 1);
        let cached = CachedSkillStore::new(
            CountingSkillStore::new(InMemorySkillStore::new()),
            Arc::new(crate::SystemClock),
        );
        cached
            .assignments_for_agent_with_files(&t, "a", None)
            .await
            .unwrap();
        assert_eq!(
            cached.inner().total(),
            1,
            "CachedSkillStore did not forward"
        );
        // The trait's default (two calls) meets the same contract as the overrides.
        let default = CountingSkillStore::new(InMemorySkillStore::new()).one_by_one();
        super::super::skill_batches::agent_skills_equals_the_two_calls(&default).await;
        super::super::skill_batches::agent_skills_tenant_isolation(&default).await;
        assert_eq!(
            default.calls().get("assignments_for_agent_with_files"),
            None
        );
        assert!(default.calls()["assignments_for_agent"] > 0);
    }

    #[tokio::test]
    async fn decorators_forward_the_resolvable_read_and_the_default_meets_its_contract() {
        use crate::ReadOnly;
        use crate::cache::CachedSkillStore;
        use std::sync::Arc;
        let counted = Arc::new(CountingSkillStore::new(InMemorySkillStore::new()));
        let t = TenantId::new("t");
        let view = ReadOnly::new(Arc::clone(&counted));
        view.resolvable_skills(&t, "a", Some("team")).await.unwrap();
        assert_eq!(
            counted.calls().into_iter().collect::<Vec<_>>(),
            [("resolvable_skills", 1)],
            "ReadOnly did not forward"
        );
        let cached = CachedSkillStore::new(
            CountingSkillStore::new(InMemorySkillStore::new()),
            Arc::new(crate::SystemClock),
        );
        cached.resolvable_skills(&t, "a", None).await.unwrap();
        assert_eq!(
            cached.inner().calls().into_iter().collect::<Vec<_>>(),
            [("resolvable_skills", 1)],
            "CachedSkillStore did not forward"
        );
        // The trait's default (the full read, projected) meets the same contract.
        let default = CountingSkillStore::new(InMemorySkillStore::new()).one_by_one();
        super::super::skill_batches::resolvable_equals_the_full_read(&default).await;
        super::super::skill_batches::resolvable_tenant_isolation(&default).await;
        assert_eq!(default.calls().get("resolvable_skills"), None);
        assert!(default.calls()["assignments_for_agent"] > 0);
    }
}
