//! Operator edits with the rules the store alone cannot know: plugin skills are read-only to
//! admins (seed 002 section 10.2) — their content, their files, whether they are enabled,
//! and whether they exist are the plugin's — and duplication copies a skill under a new slug
//! (6.2). [`crate::Catalog`] runs these and then syncs what they changed.

use skills_store_traits::{
    NewSkill, NewSkillFile, SkillFileRecord, SkillFileUpdate, SkillRecord, SkillSourceKind,
    SkillStore, SkillUpdate, TenantId, Violation,
};

use crate::error::{Error, Result};
use crate::stored::StoredSkill;

/// Applies an admin edit; refuses plugin skills with [`Violation::ReadOnlyPluginSkill`].
pub async fn update_skill(
    store: &dyn SkillStore,
    tenant: &TenantId,
    skill_id: &str,
    update: SkillUpdate,
) -> Result<SkillRecord> {
    editable(store, tenant, skill_id).await?;
    store
        .update_skill(tenant, skill_id, update)
        .await?
        .ok_or_else(|| skills_store_traits::Error::not_found("skill", skill_id).into())
}

/// Adds a supporting file to an admin skill; refuses plugin skills.
pub async fn add_file(
    store: &dyn SkillStore,
    tenant: &TenantId,
    skill_id: &str,
    file: NewSkillFile,
) -> Result<SkillFileRecord> {
    editable(store, tenant, skill_id).await?;
    Ok(store.create_skill_file(tenant, skill_id, file).await?)
}

/// Changes a supporting file of an admin skill, named by its path; refuses plugin skills.
pub async fn update_file(
    store: &dyn SkillStore,
    tenant: &TenantId,
    skill_id: &str,
    relative_path: &str,
    update: SkillFileUpdate,
) -> Result<SkillFileRecord> {
    let file = file(store, tenant, skill_id, relative_path).await?;
    store
        .update_skill_file(tenant, &file.id, update)
        .await?
        .ok_or_else(|| skills_store_traits::Error::not_found("file", relative_path).into())
}

/// Removes a supporting file of an admin skill, named by its path; refuses plugin skills.
pub async fn remove_file(
    store: &dyn SkillStore,
    tenant: &TenantId,
    skill_id: &str,
    relative_path: &str,
) -> Result<()> {
    let file = file(store, tenant, skill_id, relative_path).await?;
    if !store.delete_skill_file(tenant, &file.id).await? {
        return Err(skills_store_traits::Error::not_found("file", relative_path).into());
    }
    Ok(())
}

/// Deletes an admin skill (its files and assignments go with it); refuses plugin skills,
/// which only uninstalling their plugin removes.
pub async fn delete_skill(
    store: &dyn SkillStore,
    tenant: &TenantId,
    skill_id: &str,
) -> Result<SkillRecord> {
    let current = editable(store, tenant, skill_id).await?;
    if !store.delete_skill(tenant, skill_id).await? {
        return Err(skills_store_traits::Error::not_found("skill", skill_id).into());
    }
    Ok(current)
}

/// The skill, when it exists and is not a plugin's.
async fn editable(
    store: &dyn SkillStore,
    tenant: &TenantId,
    skill_id: &str,
) -> Result<SkillRecord> {
    let current = store
        .find_skill_by_id(tenant, skill_id)
        .await?
        .ok_or_else(|| skills_store_traits::Error::not_found("skill", skill_id))?;
    refuse_plugin(&current)?;
    Ok(current)
}

async fn file(
    store: &dyn SkillStore,
    tenant: &TenantId,
    skill_id: &str,
    relative_path: &str,
) -> Result<SkillFileRecord> {
    editable(store, tenant, skill_id).await?;
    store
        .find_skill_file(tenant, skill_id, relative_path)
        .await?
        .ok_or_else(|| skills_store_traits::Error::not_found("file", relative_path).into())
}

/// Refuses admin changes to a plugin skill's content.
pub fn refuse_plugin(skill: &SkillRecord) -> Result<()> {
    if skill.source_kind == SkillSourceKind::Plugin {
        return Err(Error::invalid("skill", Violation::ReadOnlyPluginSkill));
    }
    Ok(())
}

/// Copies a skill with its files under `new_slug` (seed 002 `skills.duplicate`). The copy is
/// an admin skill (editable even when the original came from a plugin) and has no
/// assignments.
pub async fn duplicate_skill(
    store: &dyn SkillStore,
    tenant: &TenantId,
    skill_id: &str,
    new_slug: &str,
) -> Result<SkillRecord> {
    let source = StoredSkill::load(store, tenant, skill_id).await?;
    let r = source.record;
    let mut copy = NewSkill::new(r.name, new_slug, r.content);
    copy.description = r.description;
    copy.category = Some(r.category);
    copy.is_directory = r.is_directory;
    copy.version = r.version;
    copy.enabled = Some(r.enabled);
    copy.tags = r.tags;
    copy.requires_tools = r.requires_tools;
    copy.metadata = r.metadata;
    copy.trust_level = r.trust_level;
    copy.files = source
        .files
        .into_iter()
        .map(|f| {
            let mut file = NewSkillFile::new(f.relative_path, f.content);
            file.content_type = Some(f.content_type);
            file
        })
        .collect();
    Ok(store.create_skill(tenant, copy).await?)
}
