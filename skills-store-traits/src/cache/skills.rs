//! [`CachedSkillStore`]: any [`SkillStore`] with the registry and metadata caches in front.

use std::collections::BTreeMap;
use std::sync::Arc;

use async_trait::async_trait;

use super::{DEFAULT_CACHE_ENTRIES, METADATA_TTL_MS, REGISTRY_TTL_MS, TtlCache};
use crate::error::Result;
use crate::skills::{
    AgentSkills, AssignedSkill, AssignmentFilter, AssignmentUpdate, NewAssignment, NewSkill,
    NewSkillFile, ResolvableSkill, SkillAssignment, SkillFileRecord, SkillFileUpdate, SkillFilter,
    SkillRecord, SkillStore, SkillUpdate,
};
use crate::tenancy::TenantId;
use crate::time::Clock;

/// A metadata key: a skill by id or by slug.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum Meta {
    Id(String),
    Slug(String),
}

/// A [`SkillStore`] decorator: `list_skills` answers from a registry cache (per tenant and
/// filter, [`REGISTRY_TTL_MS`]), `find_skill_by_id` / `find_skill_by_slug` from a metadata
/// cache ([`METADATA_TTL_MS`], misses included); every other call goes to the backend.
/// Writes through the decorator invalidate per key: the written skill's id and slug entries
/// and its tenant's registry lists (a file write: the skill's entries; a file delete, whose
/// skill the call does not name: the tenant's metadata entries).
///
/// ```
/// # futures::executor::block_on(async {
/// use std::sync::Arc;
/// use skills_store_traits::cache::CachedSkillStore;
/// use skills_store_traits::{in_memory::InMemorySkillStore, NewSkill, SkillStore, SystemClock, TenantId};
///
/// let store = CachedSkillStore::new(InMemorySkillStore::new(), Arc::new(SystemClock));
/// let acme = TenantId::new("acme");
/// let skill = store.create_skill(&acme, NewSkill::new("Hi", "hi", "# Hi\n")).await?;
/// store.find_skill_by_id(&acme, &skill.id).await?;
/// store.find_skill_by_id(&acme, &skill.id).await?;
/// assert_eq!(store.metadata_stats(), (1, 1));
/// # Ok::<(), skills_store_traits::Error>(())
/// # }).unwrap();
/// ```
pub struct CachedSkillStore<S> {
    inner: S,
    registry: TtlCache<(TenantId, String), Vec<SkillRecord>>,
    metadata: TtlCache<(TenantId, Meta), Option<SkillRecord>>,
}

impl<S> std::fmt::Debug for CachedSkillStore<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CachedSkillStore")
            .field("registry", &self.registry)
            .field("metadata", &self.metadata)
            .finish_non_exhaustive()
    }
}

impl<S: SkillStore> CachedSkillStore<S> {
    /// `inner` behind caches with seed 003's TTLs and [`DEFAULT_CACHE_ENTRIES`] each.
    pub fn new(inner: S, clock: Arc<dyn Clock>) -> Self {
        Self::with_limits(
            inner,
            clock,
            REGISTRY_TTL_MS,
            METADATA_TTL_MS,
            DEFAULT_CACHE_ENTRIES,
        )
    }

    /// `inner` behind caches with these TTLs (milliseconds) and at most `capacity` entries
    /// each.
    pub fn with_limits(
        inner: S,
        clock: Arc<dyn Clock>,
        registry_ttl_ms: i64,
        metadata_ttl_ms: i64,
        capacity: usize,
    ) -> Self {
        CachedSkillStore {
            inner,
            registry: TtlCache::new(clock.clone(), registry_ttl_ms, capacity),
            metadata: TtlCache::new(clock, metadata_ttl_ms, capacity),
        }
    }

    /// The backend.
    pub fn inner(&self) -> &S {
        &self.inner
    }

    /// Registry cache hits and misses.
    pub fn registry_stats(&self) -> (u64, u64) {
        self.registry.stats()
    }

    /// Metadata cache hits and misses.
    pub fn metadata_stats(&self) -> (u64, u64) {
        self.metadata.stats()
    }

    /// Drops one skill's metadata entries and its tenant's registry lists (for changes made
    /// to the backend behind the decorator).
    pub fn invalidate_skill(&self, tenant: &TenantId, id: &str, slug: Option<&str>) {
        self.metadata
            .remove(&(tenant.clone(), Meta::Id(id.to_owned())));
        if let Some(slug) = slug {
            self.metadata
                .remove(&(tenant.clone(), Meta::Slug(slug.to_owned())));
        }
        self.invalidate_registry(tenant);
    }

    /// Drops the tenant's registry lists (seed 003's `skill:registry:{orgId}:*`).
    pub fn invalidate_registry(&self, tenant: &TenantId) {
        self.registry.retain(|(t, _), _| t != tenant);
    }

    fn invalidate_record(&self, tenant: &TenantId, record: &SkillRecord) {
        self.invalidate_skill(tenant, &record.id, Some(&record.slug));
    }
}

#[async_trait]
impl<S: SkillStore> SkillStore for CachedSkillStore<S> {
    async fn create_skill(&self, tenant: &TenantId, skill: NewSkill) -> Result<SkillRecord> {
        let created = self.inner.create_skill(tenant, skill).await?;
        self.invalidate_record(tenant, &created);
        Ok(created)
    }

    async fn find_skill_by_id(&self, tenant: &TenantId, id: &str) -> Result<Option<SkillRecord>> {
        let key = (tenant.clone(), Meta::Id(id.to_owned()));
        if let Some(hit) = self.metadata.get(&key) {
            return Ok(hit);
        }
        let generation = self.metadata.generation();
        let found = self.inner.find_skill_by_id(tenant, id).await?;
        self.metadata
            .insert_if_unchanged(generation, key, found.clone());
        Ok(found)
    }

    async fn find_skill_by_slug(
        &self,
        tenant: &TenantId,
        slug: &str,
    ) -> Result<Option<SkillRecord>> {
        let key = (tenant.clone(), Meta::Slug(slug.to_owned()));
        if let Some(hit) = self.metadata.get(&key) {
            return Ok(hit);
        }
        let generation = self.metadata.generation();
        let found = self.inner.find_skill_by_slug(tenant, slug).await?;
        self.metadata
            .insert_if_unchanged(generation, key, found.clone());
        Ok(found)
    }

    async fn list_skills(
        &self,
        tenant: &TenantId,
        filter: &SkillFilter,
    ) -> Result<Vec<SkillRecord>> {
        let key = (tenant.clone(), format!("{filter:?}"));
        if let Some(hit) = self.registry.get(&key) {
            return Ok(hit);
        }
        let generation = self.registry.generation();
        let listed = self.inner.list_skills(tenant, filter).await?;
        self.registry
            .insert_if_unchanged(generation, key, listed.clone());
        Ok(listed)
    }

    async fn update_skill(
        &self,
        tenant: &TenantId,
        id: &str,
        update: SkillUpdate,
    ) -> Result<Option<SkillRecord>> {
        let result = self.inner.update_skill(tenant, id, update).await;
        match &result {
            Ok(Some(record)) => self.invalidate_record(tenant, record),
            _ => self.invalidate_skill(tenant, id, None),
        }
        result
    }

    async fn delete_skill(&self, tenant: &TenantId, id: &str) -> Result<bool> {
        let before = self.inner.find_skill_by_id(tenant, id).await?;
        let deleted = self.inner.delete_skill(tenant, id).await;
        self.invalidate_skill(tenant, id, before.as_ref().map(|r| r.slug.as_str()));
        deleted
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
        tenant: &TenantId,
        skill_id: &str,
        file: NewSkillFile,
    ) -> Result<SkillFileRecord> {
        let result = self.inner.create_skill_file(tenant, skill_id, file).await;
        self.touch(tenant, skill_id);
        result
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
        // Not cached: resolution reads assignments, which the caches do not hold.
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
        // Not cached either, for the same reason.
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
        tenant: &TenantId,
        file_id: &str,
        update: SkillFileUpdate,
    ) -> Result<Option<SkillFileRecord>> {
        let result = self.inner.update_skill_file(tenant, file_id, update).await;
        match &result {
            Ok(Some(file)) => self.touch(tenant, &file.skill_id),
            _ => self.forget_tenant_metadata(tenant),
        }
        result
    }

    async fn delete_skill_file(&self, tenant: &TenantId, file_id: &str) -> Result<bool> {
        let result = self.inner.delete_skill_file(tenant, file_id).await;
        self.forget_tenant_metadata(tenant);
        result
    }

    async fn delete_skill_files_by_skill_id(
        &self,
        tenant: &TenantId,
        skill_id: &str,
    ) -> Result<u64> {
        let result = self
            .inner
            .delete_skill_files_by_skill_id(tenant, skill_id)
            .await;
        self.touch(tenant, skill_id);
        result
    }

    async fn create_assignment(
        &self,
        tenant: &TenantId,
        assignment: NewAssignment,
    ) -> Result<SkillAssignment> {
        self.inner.create_assignment(tenant, assignment).await
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
        tenant: &TenantId,
        id: &str,
        update: AssignmentUpdate,
    ) -> Result<Option<SkillAssignment>> {
        self.inner.update_assignment(tenant, id, update).await
    }

    async fn delete_assignment(&self, tenant: &TenantId, id: &str) -> Result<bool> {
        self.inner.delete_assignment(tenant, id).await
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

impl<S: SkillStore> CachedSkillStore<S> {
    /// A file write changes its skill's record (`updated_at`, `is_directory`): drop the
    /// entries of that skill (its id key, and any key whose record is that skill) and the
    /// tenant's registry.
    fn touch(&self, tenant: &TenantId, skill_id: &str) {
        self.metadata.retain(|(t, meta), record| {
            let ours = matches!(meta, Meta::Id(id) if id == skill_id)
                || record.as_ref().is_some_and(|r| r.id == skill_id);
            t != tenant || !ours
        });
        self.invalidate_registry(tenant);
    }

    /// A write whose skill the call does not name (deleting a file by its id): the tenant's
    /// metadata entries and registry.
    fn forget_tenant_metadata(&self, tenant: &TenantId) {
        self.metadata.retain(|(t, _), _| t != tenant);
        self.invalidate_registry(tenant);
    }
}
