//! [`InMemorySkillStore`]: the reference [`SkillStore`].

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::{Arc, RwLock};

use async_trait::async_trait;

use super::lock::{read, write};
use crate::error::{Error, Result};
use crate::skills::{
    AgentSkills, AssignedSkill, AssignmentFilter, AssignmentScope, AssignmentUpdate, NewAssignment,
    NewSkill, NewSkillFile, ResolvableSkill, SkillAssignment, SkillFileRecord, SkillFileUpdate,
    SkillFilter, SkillRecord, SkillSourceKind, SkillStore, SkillUpdate, assigned_skill_ids,
    assignment_order,
};
use crate::tenancy::TenantId;
use crate::time::{Clock, SystemClock, Timestamp, new_id};
use crate::validate::{self, StoreLimits};

mod resolvable;

/// Skills, files and assignments in memory, indexed for the lookups the resolver and sync
/// make (by slug, by skill, by assignment target), behind one lock.
#[derive(Debug)]
pub struct InMemorySkillStore {
    state: RwLock<HashMap<TenantId, Tenant>>,
    clock: Arc<dyn Clock>,
    limits: StoreLimits,
}

type Target = (AssignmentScope, Option<String>);

#[derive(Debug, Default)]
struct Tenant {
    skills: HashMap<String, SkillRecord>,
    slugs: BTreeMap<String, String>,
    /// skill id -> path -> file.
    files: HashMap<String, BTreeMap<String, SkillFileRecord>>,
    /// file id -> (skill id, path).
    file_ids: HashMap<String, (String, String)>,
    assignments: HashMap<String, SkillAssignment>,
    by_target: HashMap<Target, BTreeSet<String>>,
    by_skill: HashMap<String, BTreeSet<String>>,
    unique: HashMap<(String, AssignmentScope, Option<String>), String>,
}

impl Default for InMemorySkillStore {
    fn default() -> Self {
        Self::new()
    }
}

impl InMemorySkillStore {
    /// An empty store on the system clock with the default limits.
    pub fn new() -> Self {
        Self::with_clock(Arc::new(SystemClock))
    }

    /// An empty store reading time from `clock`.
    pub fn with_clock(clock: Arc<dyn Clock>) -> Self {
        InMemorySkillStore {
            state: RwLock::new(HashMap::new()),
            clock,
            limits: StoreLimits::default(),
        }
    }

    /// Replaces the size limits.
    pub fn with_limits(mut self, limits: StoreLimits) -> Self {
        self.limits = limits;
        self
    }
}

fn file_record(skill_id: &str, file: &NewSkillFile, now: Timestamp) -> SkillFileRecord {
    SkillFileRecord {
        id: new_id(),
        skill_id: skill_id.to_owned(),
        relative_path: file.path.clone(),
        content: file.content.clone(),
        content_type: validate::content_type_or_guess(file),
        size_bytes: file.content.len() as u64,
        checksum: validate::checksum(&file.content),
        created_at: now,
        updated_at: now,
    }
}

impl Tenant {
    /// Every assignment reaching the agent with its skill, in [`assignment_order`].
    fn assigned_to(&self, agent_id: &str, team_id: Option<&str>) -> Vec<AssignedSkill> {
        let mut targets = vec![
            (AssignmentScope::Global, None),
            (AssignmentScope::Agent, Some(agent_id.to_owned())),
        ];
        if let Some(team) = team_id {
            targets.push((AssignmentScope::Team, Some(team.to_owned())));
        }
        let mut list: Vec<AssignedSkill> = targets
            .iter()
            .filter_map(|target| self.by_target.get(target))
            .flatten()
            .filter_map(|id| self.assignments.get(id))
            .filter_map(|a| {
                self.skills.get(&a.skill_id).map(|skill| AssignedSkill {
                    assignment: a.clone(),
                    skill: skill.clone(),
                })
            })
            .collect();
        list.sort_by(|a, b| assignment_order(&a.assignment, &b.assignment));
        list
    }

    fn files_bytes(&self, skill_id: &str) -> u64 {
        self.files
            .get(skill_id)
            .map_or(0, |files| files.values().map(|f| f.size_bytes).sum())
    }

    fn replace_files(&mut self, skill_id: &str, files: &[NewSkillFile], now: Timestamp) {
        if let Some(old) = self.files.remove(skill_id) {
            for file in old.values() {
                self.file_ids.remove(&file.id);
            }
        }
        let mut map = BTreeMap::new();
        for file in files {
            let record = file_record(skill_id, file, now);
            self.file_ids
                .insert(record.id.clone(), (skill_id.to_owned(), file.path.clone()));
            map.insert(file.path.clone(), record);
        }
        if !map.is_empty() {
            self.files.insert(skill_id.to_owned(), map);
        }
    }

    fn touch(&mut self, skill_id: &str, now: Timestamp) {
        if let Some(skill) = self.skills.get_mut(skill_id) {
            skill.updated_at = now;
        }
    }

    fn remove_assignment(&mut self, id: &str) -> Option<SkillAssignment> {
        let assignment = self.assignments.remove(id)?;
        let target = (assignment.scope, assignment.scope_id.clone());
        if let Some(ids) = self.by_target.get_mut(&target) {
            ids.remove(id);
            if ids.is_empty() {
                self.by_target.remove(&target);
            }
        }
        if let Some(ids) = self.by_skill.get_mut(&assignment.skill_id) {
            ids.remove(id);
            if ids.is_empty() {
                self.by_skill.remove(&assignment.skill_id);
            }
        }
        self.unique.remove(&(
            assignment.skill_id.clone(),
            assignment.scope,
            assignment.scope_id.clone(),
        ));
        Some(assignment)
    }
}

#[async_trait]
impl SkillStore for InMemorySkillStore {
    async fn create_skill(&self, tenant: &TenantId, new: NewSkill) -> Result<SkillRecord> {
        validate::check_new_skill(&new, &self.limits)?;
        let now = self.clock.now();
        let mut state = write(&self.state)?;
        let t = state.entry(tenant.clone()).or_default();
        if t.slugs.contains_key(&new.slug) {
            return Err(Error::conflict("skill slug", new.slug));
        }
        let record = SkillRecord {
            id: new_id(),
            tenant: tenant.clone(),
            checksum: validate::checksum(&new.content),
            name: new.name,
            slug: new.slug,
            description: new.description,
            category: new.category.unwrap_or_else(|| "general".to_owned()),
            source_kind: new.source_kind.unwrap_or(SkillSourceKind::Admin),
            plugin_id: new.plugin_id,
            source_ref: new.source_ref,
            content: new.content,
            is_directory: new.is_directory || !new.files.is_empty(),
            version: new.version,
            enabled: new.enabled.unwrap_or(true),
            held: false,
            tags: new.tags,
            requires_tools: new.requires_tools,
            metadata: new.metadata,
            trust_level: new.trust_level,
            created_at: now,
            updated_at: now,
        };
        t.replace_files(&record.id, &new.files, now);
        t.slugs.insert(record.slug.clone(), record.id.clone());
        t.skills.insert(record.id.clone(), record.clone());
        Ok(record)
    }

    async fn find_skill_by_id(&self, tenant: &TenantId, id: &str) -> Result<Option<SkillRecord>> {
        let state = read(&self.state)?;
        Ok(state.get(tenant).and_then(|t| t.skills.get(id)).cloned())
    }

    async fn find_skill_by_slug(
        &self,
        tenant: &TenantId,
        slug: &str,
    ) -> Result<Option<SkillRecord>> {
        let state = read(&self.state)?;
        Ok(state
            .get(tenant)
            .and_then(|t| t.slugs.get(slug).and_then(|id| t.skills.get(id)))
            .cloned())
    }

    async fn list_skills(
        &self,
        tenant: &TenantId,
        filter: &SkillFilter,
    ) -> Result<Vec<SkillRecord>> {
        let state = read(&self.state)?;
        let Some(t) = state.get(tenant) else {
            return Ok(Vec::new());
        };
        Ok(t.slugs
            .values()
            .filter_map(|id| t.skills.get(id))
            .filter(|skill| filter.matches(skill))
            .cloned()
            .collect())
    }

    async fn update_skill(
        &self,
        tenant: &TenantId,
        id: &str,
        update: SkillUpdate,
    ) -> Result<Option<SkillRecord>> {
        let now = self.clock.now();
        let mut state = write(&self.state)?;
        let Some(t) = state.get_mut(tenant) else {
            return Ok(None);
        };
        let Some(current) = t.skills.get(id) else {
            return Ok(None);
        };
        validate::check_update(
            &update,
            current.content.len() as u64,
            t.files_bytes(id),
            &self.limits,
        )?;
        if let Some(files) = &update.files {
            t.replace_files(id, files, now);
        }
        let Some(skill) = t.skills.get_mut(id) else {
            return Ok(None);
        };
        update.apply_to(skill, now);
        Ok(Some(skill.clone()))
    }

    async fn delete_skill(&self, tenant: &TenantId, id: &str) -> Result<bool> {
        let mut state = write(&self.state)?;
        let Some(t) = state.get_mut(tenant) else {
            return Ok(false);
        };
        let Some(skill) = t.skills.remove(id) else {
            return Ok(false);
        };
        t.slugs.remove(&skill.slug);
        t.replace_files(id, &[], 0);
        let assignments: Vec<String> = t
            .by_skill
            .get(id)
            .map(|ids| ids.iter().cloned().collect())
            .unwrap_or_default();
        for assignment in assignments {
            t.remove_assignment(&assignment);
        }
        Ok(true)
    }

    async fn is_slug_available(
        &self,
        tenant: &TenantId,
        slug: &str,
        exclude_id: Option<&str>,
    ) -> Result<bool> {
        let state = read(&self.state)?;
        let holder = state.get(tenant).and_then(|t| t.slugs.get(slug));
        Ok(match holder {
            None => true,
            Some(id) => exclude_id == Some(id.as_str()),
        })
    }

    async fn create_skill_file(
        &self,
        tenant: &TenantId,
        skill_id: &str,
        file: NewSkillFile,
    ) -> Result<SkillFileRecord> {
        validate::check_file("file", &file, &self.limits)?;
        let now = self.clock.now();
        let mut state = write(&self.state)?;
        let t = state
            .get_mut(tenant)
            .filter(|t| t.skills.contains_key(skill_id))
            .ok_or_else(|| Error::not_found("skill", skill_id))?;
        if t.files
            .get(skill_id)
            .is_some_and(|files| files.contains_key(&file.path))
        {
            return Err(Error::conflict("skill file", file.path));
        }
        let content_bytes = t.skills.get(skill_id).map_or(0, |s| s.content.len() as u64);
        let total = content_bytes
            .saturating_add(t.files_bytes(skill_id))
            .saturating_add(file.content.len() as u64);
        validate::check_total("file.content", total, &self.limits)?;
        let record = file_record(skill_id, &file, now);
        t.file_ids
            .insert(record.id.clone(), (skill_id.to_owned(), file.path.clone()));
        t.files
            .entry(skill_id.to_owned())
            .or_default()
            .insert(file.path, record.clone());
        if let Some(skill) = t.skills.get_mut(skill_id) {
            skill.is_directory = true;
            skill.updated_at = now;
        }
        Ok(record)
    }

    async fn list_skill_files(
        &self,
        tenant: &TenantId,
        skill_id: &str,
    ) -> Result<Vec<SkillFileRecord>> {
        let state = read(&self.state)?;
        Ok(state
            .get(tenant)
            .and_then(|t| t.files.get(skill_id))
            .map(|files| files.values().cloned().collect())
            .unwrap_or_default())
    }

    async fn list_files_for_skills(
        &self,
        tenant: &TenantId,
        skill_ids: &[String],
    ) -> Result<BTreeMap<String, Vec<SkillFileRecord>>> {
        // One read lock for the whole batch: a consistent snapshot, and no per-id locking.
        let state = read(&self.state)?;
        let Some(t) = state.get(tenant) else {
            return Ok(BTreeMap::new());
        };
        Ok(skill_ids
            .iter()
            .filter_map(|id| {
                let files = t.files.get(id).filter(|files| !files.is_empty())?;
                Some((id.clone(), files.values().cloned().collect()))
            })
            .collect())
    }

    async fn find_skill_file(
        &self,
        tenant: &TenantId,
        skill_id: &str,
        relative_path: &str,
    ) -> Result<Option<SkillFileRecord>> {
        let state = read(&self.state)?;
        Ok(state
            .get(tenant)
            .and_then(|t| t.files.get(skill_id))
            .and_then(|files| files.get(relative_path))
            .cloned())
    }

    async fn update_skill_file(
        &self,
        tenant: &TenantId,
        file_id: &str,
        update: SkillFileUpdate,
    ) -> Result<Option<SkillFileRecord>> {
        let now = self.clock.now();
        let mut state = write(&self.state)?;
        let Some(t) = state.get_mut(tenant) else {
            return Ok(None);
        };
        let Some((skill_id, path)) = t.file_ids.get(file_id).cloned() else {
            return Ok(None);
        };
        if let Some(content) = &update.content {
            let probe = NewSkillFile::new(path.clone(), content.clone());
            validate::check_file("file", &probe, &self.limits)?;
            let old = t
                .files
                .get(&skill_id)
                .and_then(|files| files.get(&path))
                .map_or(0, |f| f.size_bytes);
            let content_bytes = t
                .skills
                .get(&skill_id)
                .map_or(0, |s| s.content.len() as u64);
            let total = content_bytes
                .saturating_add(t.files_bytes(&skill_id) - old)
                .saturating_add(content.len() as u64);
            validate::check_total("file.content", total, &self.limits)?;
        }
        let Some(file) = t.files.get_mut(&skill_id).and_then(|f| f.get_mut(&path)) else {
            return Ok(None);
        };
        if let Some(content) = update.content {
            file.size_bytes = content.len() as u64;
            file.checksum = validate::checksum(&content);
            file.content = content;
        }
        if let Some(content_type) = update.content_type {
            file.content_type = content_type;
        }
        file.updated_at = now;
        let record = file.clone();
        t.touch(&skill_id, now);
        Ok(Some(record))
    }

    async fn delete_skill_file(&self, tenant: &TenantId, file_id: &str) -> Result<bool> {
        let now = self.clock.now();
        let mut state = write(&self.state)?;
        let Some(t) = state.get_mut(tenant) else {
            return Ok(false);
        };
        let Some((skill_id, path)) = t.file_ids.remove(file_id) else {
            return Ok(false);
        };
        if let Some(files) = t.files.get_mut(&skill_id) {
            files.remove(&path);
            if files.is_empty() {
                t.files.remove(&skill_id);
            }
        }
        t.touch(&skill_id, now);
        Ok(true)
    }

    async fn delete_skill_files_by_skill_id(
        &self,
        tenant: &TenantId,
        skill_id: &str,
    ) -> Result<u64> {
        let now = self.clock.now();
        let mut state = write(&self.state)?;
        let Some(t) = state.get_mut(tenant) else {
            return Ok(0);
        };
        let count = t.files.get(skill_id).map_or(0, |f| f.len() as u64);
        t.replace_files(skill_id, &[], now);
        if count > 0 {
            t.touch(skill_id, now);
        }
        Ok(count)
    }

    async fn create_assignment(
        &self,
        tenant: &TenantId,
        new: NewAssignment,
    ) -> Result<SkillAssignment> {
        validate::check_assignment(&new)?;
        let now = self.clock.now();
        let mut state = write(&self.state)?;
        let t = state
            .get_mut(tenant)
            .filter(|t| t.skills.contains_key(&new.skill_id))
            .ok_or_else(|| Error::not_found("skill", new.skill_id.clone()))?;
        let key = (new.skill_id.clone(), new.scope, new.scope_id.clone());
        if t.unique.contains_key(&key) {
            return Err(Error::conflict(
                "assignment",
                format!(
                    "{} {} {}",
                    new.skill_id,
                    new.scope.as_str(),
                    new.scope_id.as_deref().unwrap_or("-")
                ),
            ));
        }
        let slug = t
            .skills
            .get(&new.skill_id)
            .map(|s| s.slug.clone())
            .unwrap_or_default();
        let assignment = SkillAssignment {
            id: new_id(),
            tenant: tenant.clone(),
            skill_id: new.skill_id,
            skill_slug: slug,
            scope: new.scope,
            scope_id: new.scope_id,
            priority: new.priority,
            auto_inject: new.auto_inject,
            enabled: new.enabled,
            created_at: now,
            updated_at: now,
        };
        t.unique.insert(key, assignment.id.clone());
        t.by_target
            .entry((assignment.scope, assignment.scope_id.clone()))
            .or_default()
            .insert(assignment.id.clone());
        t.by_skill
            .entry(assignment.skill_id.clone())
            .or_default()
            .insert(assignment.id.clone());
        t.assignments
            .insert(assignment.id.clone(), assignment.clone());
        Ok(assignment)
    }

    async fn find_assignment(
        &self,
        tenant: &TenantId,
        id: &str,
    ) -> Result<Option<SkillAssignment>> {
        let state = read(&self.state)?;
        Ok(state
            .get(tenant)
            .and_then(|t| t.assignments.get(id))
            .cloned())
    }

    async fn list_assignments(
        &self,
        tenant: &TenantId,
        filter: &AssignmentFilter,
    ) -> Result<Vec<SkillAssignment>> {
        let state = read(&self.state)?;
        let Some(t) = state.get(tenant) else {
            return Ok(Vec::new());
        };
        let candidates: Box<dyn Iterator<Item = &SkillAssignment>> = match &filter.skill_id {
            Some(skill) => Box::new(
                t.by_skill
                    .get(skill)
                    .into_iter()
                    .flatten()
                    .filter_map(|id| t.assignments.get(id)),
            ),
            None => Box::new(t.assignments.values()),
        };
        let mut list: Vec<SkillAssignment> = candidates
            .filter(|a| filter.scope.is_none_or(|s| s == a.scope))
            .filter(|a| {
                filter
                    .scope_id
                    .as_deref()
                    .is_none_or(|id| a.scope_id.as_deref() == Some(id))
            })
            .cloned()
            .collect();
        list.sort_by(assignment_order);
        Ok(list)
    }

    async fn assignments_for_agent(
        &self,
        tenant: &TenantId,
        agent_id: &str,
        team_id: Option<&str>,
    ) -> Result<Vec<AssignedSkill>> {
        let state = read(&self.state)?;
        Ok(state
            .get(tenant)
            .map(|t| t.assigned_to(agent_id, team_id))
            .unwrap_or_default())
    }

    async fn assignments_for_agent_with_files(
        &self,
        tenant: &TenantId,
        agent_id: &str,
        team_id: Option<&str>,
    ) -> Result<AgentSkills> {
        // One read lock for both parts: one snapshot.
        let state = read(&self.state)?;
        let Some(t) = state.get(tenant) else {
            return Ok(AgentSkills::default());
        };
        let assigned = t.assigned_to(agent_id, team_id);
        let files = assigned_skill_ids(&assigned)
            .into_iter()
            .filter_map(|id| {
                let files = t.files.get(&id).filter(|files| !files.is_empty())?;
                Some((id, files.values().cloned().collect()))
            })
            .collect();
        Ok(AgentSkills::new(assigned, files))
    }

    async fn resolvable_skills(
        &self,
        tenant: &TenantId,
        agent_id: &str,
        team_id: Option<&str>,
    ) -> Result<Vec<ResolvableSkill>> {
        let state = read(&self.state)?;
        Ok(state
            .get(tenant)
            .map(|t| t.resolvable(agent_id, team_id))
            .unwrap_or_default())
    }

    async fn update_assignment(
        &self,
        tenant: &TenantId,
        id: &str,
        update: AssignmentUpdate,
    ) -> Result<Option<SkillAssignment>> {
        let now = self.clock.now();
        let mut state = write(&self.state)?;
        let Some(a) = state
            .get_mut(tenant)
            .and_then(|t| t.assignments.get_mut(id))
        else {
            return Ok(None);
        };
        if let Some(enabled) = update.enabled {
            a.enabled = enabled;
        }
        if let Some(priority) = update.priority {
            a.priority = priority;
        }
        if let Some(auto_inject) = update.auto_inject {
            a.auto_inject = auto_inject;
        }
        a.updated_at = now;
        Ok(Some(a.clone()))
    }

    async fn delete_assignment(&self, tenant: &TenantId, id: &str) -> Result<bool> {
        let mut state = write(&self.state)?;
        Ok(state
            .get_mut(tenant)
            .and_then(|t| t.remove_assignment(id))
            .is_some())
    }

    async fn skills_with_assignment_counts(
        &self,
        tenant: &TenantId,
    ) -> Result<Vec<(SkillRecord, u64)>> {
        let state = read(&self.state)?;
        let Some(t) = state.get(tenant) else {
            return Ok(Vec::new());
        };
        Ok(t.slugs
            .values()
            .filter_map(|id| t.skills.get(id))
            .map(|s| {
                let count = t.by_skill.get(&s.id).map_or(0, |ids| ids.len() as u64);
                (s.clone(), count)
            })
            .collect())
    }

    async fn list_categories(&self, tenant: &TenantId) -> Result<Vec<String>> {
        let state = read(&self.state)?;
        let categories: BTreeSet<String> = state
            .get(tenant)
            .map(|t| t.skills.values().map(|s| s.category.clone()).collect())
            .unwrap_or_default();
        Ok(categories.into_iter().collect())
    }

    async fn agent_ids_for_skill(&self, tenant: &TenantId, skill_id: &str) -> Result<Vec<String>> {
        let state = read(&self.state)?;
        let Some(t) = state.get(tenant) else {
            return Ok(Vec::new());
        };
        let agents: BTreeSet<String> = t
            .by_skill
            .get(skill_id)
            .into_iter()
            .flatten()
            .filter_map(|id| t.assignments.get(id))
            .filter(|a| a.scope == AssignmentScope::Agent)
            .filter_map(|a| a.scope_id.clone())
            .collect();
        Ok(agents.into_iter().collect())
    }
}
