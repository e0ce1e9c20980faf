//! Plugin skill contributions (seed 002 section 13): a plugin's skills enter the store on
//! enable, are disabled (assignments kept) on disable, deleted on uninstall, and updated by
//! checksum on upgrade.
//!
//! Threat: a plugin's manifest names files by path inside its install directory; a
//! malicious or broken plugin names `../../etc/passwd`, an absolute path, or a symlink that
//! leads out. Guarantee: every contributed path is checked with the store's path rules and
//! resolved (symlinks included) to a location inside the install directory before anything
//! is read; directory contributions read regular files only and refuse symlinks. Every
//! contribution is read and validated before the first write, so a bad contribution leaves
//! the store untouched. A slug held by an admin skill or by another plugin is a clash of
//! that one contribution: the holder keeps the slug (admin beats plugin, and one plugin
//! cannot take over another's skill), the clash is reported in [`PluginReport::clashes`],
//! and the plugin's other contributions still enable.

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use skills_store_traits::{
    NewAssignment, NewSkill, NewSkillFile, SkillFilter, SkillSourceKind, SkillStore, SkillUpdate,
    StoreLimits, TenantId, validate,
};

use crate::error::{Error, Result, prefixed};
use crate::portable::directory::{read_skill_dir, read_text};
use crate::stored::StoredSkill;

/// One skill a plugin contributes (seed 002's `SkillContribution`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct SkillContribution {
    /// The contribution id; the slug is derived from it.
    pub id: String,
    /// Display name.
    pub name: String,
    /// Description.
    #[serde(default)]
    pub description: Option<String>,
    /// Where the `SKILL.md` comes from.
    pub source: ContributionSource,
    /// Supporting files of an inline skill.
    #[serde(default)]
    pub files: Vec<ContributedFile>,
    /// Tags.
    #[serde(default)]
    pub tags: Vec<String>,
    /// Category.
    #[serde(default)]
    pub category: Option<String>,
    /// Tools the skill expects.
    #[serde(default)]
    pub requires_tools: Vec<String>,
    /// Assign the skill globally when the plugin is enabled.
    #[serde(default)]
    pub default_enabled: bool,
}

impl SkillContribution {
    /// A contribution with no files, tags or category.
    pub fn new(id: impl Into<String>, name: impl Into<String>, source: ContributionSource) -> Self {
        SkillContribution {
            id: id.into(),
            name: name.into(),
            description: None,
            source,
            files: Vec::new(),
            tags: Vec::new(),
            category: None,
            requires_tools: Vec::new(),
            default_enabled: false,
        }
    }
}

/// The three kinds of contribution.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum ContributionSource {
    /// The `SKILL.md` text itself.
    Inline {
        /// The text.
        content: String,
    },
    /// A `SKILL.md` file, relative to the plugin's install directory.
    File {
        /// The path.
        path: String,
    },
    /// A skill directory (`SKILL.md` plus supporting files), relative to the install
    /// directory.
    Directory {
        /// The path.
        path: String,
    },
}

/// A supporting file of an inline contribution.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ContributedFile {
    /// Relative path.
    pub path: String,
    /// Text content.
    pub content: String,
}

/// What enabling or upgrading a plugin did, by slug (each list sorted).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct PluginReport {
    /// New skills.
    pub created: Vec<String>,
    /// Skills whose content or metadata changed: every agent assigned them must re-sync.
    pub changed: Vec<String>,
    /// Skills already identical.
    pub unchanged: Vec<String>,
    /// Skills the plugin no longer contributes, deleted (upgrade only).
    pub removed: Vec<String>,
    /// Global assignments created for `default_enabled` contributions.
    pub assigned: Vec<String>,
    /// Ids of the skills in `changed`, for [`crate::Catalog::resync_skill`].
    pub resync: Vec<String>,
    /// Contributions not applied because an admin skill or another plugin holds their slug
    /// (the holder keeps it), by slug.
    pub clashes: Vec<String>,
}

/// Derives a slug from a contribution id: lowercase, runs of other characters become `-`,
/// trimmed of `-`; it must then be a valid slug.
pub fn slug_for(id: &str) -> String {
    let mut slug = String::with_capacity(id.len());
    for c in id.chars().flat_map(char::to_lowercase) {
        if c.is_ascii_lowercase() || c.is_ascii_digit() {
            slug.push(c);
        } else if !slug.ends_with('-') {
            slug.push('-');
        }
    }
    slug.trim_matches('-').to_owned()
}

/// Enables a plugin: creates or updates its contributed skills (source `plugin`, enabled),
/// and creates a global assignment for `default_enabled` ones that have none.
pub async fn enable_plugin(
    store: &dyn SkillStore,
    tenant: &TenantId,
    plugin_id: &str,
    install_dir: &Path,
    contributions: &[SkillContribution],
) -> Result<PluginReport> {
    apply(store, tenant, plugin_id, install_dir, contributions, false).await
}

/// Upgrades a plugin: re-reads every contribution, updates the skills whose content changed
/// (by checksum), creates new ones and deletes the ones no longer contributed. The report's
/// `resync` lists what the host must re-sync.
pub async fn upgrade_plugin(
    store: &dyn SkillStore,
    tenant: &TenantId,
    plugin_id: &str,
    install_dir: &Path,
    contributions: &[SkillContribution],
) -> Result<PluginReport> {
    apply(store, tenant, plugin_id, install_dir, contributions, true).await
}

/// Disables a plugin's skills; assignments stay for re-enable. Returns their slugs.
pub async fn disable_plugin(
    store: &dyn SkillStore,
    tenant: &TenantId,
    plugin_id: &str,
) -> Result<Vec<String>> {
    let mut slugs = Vec::new();
    for skill in plugin_skills(store, tenant, plugin_id).await? {
        let update = SkillUpdate {
            enabled: Some(false),
            ..SkillUpdate::default()
        };
        store.update_skill(tenant, &skill.id, update).await?;
        slugs.push(skill.slug);
    }
    Ok(slugs)
}

/// Uninstalls a plugin: deletes its skills (their files and assignments go with them).
/// Returns the deleted skills' ids, for cache invalidation and sandbox cleanup.
pub async fn uninstall_plugin(
    store: &dyn SkillStore,
    tenant: &TenantId,
    plugin_id: &str,
) -> Result<Vec<String>> {
    let mut ids = Vec::new();
    for skill in plugin_skills(store, tenant, plugin_id).await? {
        if store.delete_skill(tenant, &skill.id).await? {
            ids.push(skill.id);
        }
    }
    Ok(ids)
}

async fn plugin_skills(
    store: &dyn SkillStore,
    tenant: &TenantId,
    plugin_id: &str,
) -> Result<Vec<skills_store_traits::SkillRecord>> {
    let filter = SkillFilter {
        source: Some(SkillSourceKind::Plugin),
        plugin_id: Some(plugin_id.to_owned()),
        ..SkillFilter::default()
    };
    Ok(store.list_skills(tenant, &filter).await?)
}

async fn apply(
    store: &dyn SkillStore,
    tenant: &TenantId,
    plugin_id: &str,
    install_dir: &Path,
    contributions: &[SkillContribution],
    remove_missing: bool,
) -> Result<PluginReport> {
    let limits = StoreLimits::default();
    // Read and validate everything first: a bad contribution writes nothing.
    let mut prepared = Vec::with_capacity(contributions.len());
    let mut slugs = BTreeSet::new();
    let mut clashes = Vec::new();
    for (index, contribution) in contributions.iter().enumerate() {
        let new = prepare(plugin_id, install_dir, contribution, &limits)
            .map_err(|e| relabel(index, e))?;
        if !slugs.insert(new.slug.clone()) {
            return Err(Error::invalid(
                format!("contributions[{index}].id"),
                skills_store_traits::Violation::DuplicatePath,
            ));
        }
        if let Some(existing) = store.find_skill_by_slug(tenant, &new.slug).await? {
            let ours = existing.source_kind == SkillSourceKind::Plugin
                && existing.plugin_id.as_deref() == Some(plugin_id);
            if !ours {
                clashes.push(new.slug);
                continue;
            }
        }
        prepared.push((new, contribution.default_enabled));
    }

    let mut report = PluginReport {
        clashes,
        ..PluginReport::default()
    };
    for (new, default_enabled) in prepared {
        let slug = new.slug.clone();
        let skill_id = match store.find_skill_by_slug(tenant, &slug).await? {
            None => {
                let created = store.create_skill(tenant, new).await?;
                report.created.push(slug.clone());
                created.id
            }
            Some(existing) => {
                let current = StoredSkill::with_files(store, tenant, existing).await?;
                if same_content(&current, &new) {
                    report.unchanged.push(slug.clone());
                } else {
                    let update = SkillUpdate {
                        name: Some(new.name),
                        description: Some(new.description),
                        category: Some(new.category.unwrap_or_else(|| "general".to_owned())),
                        content: Some(new.content),
                        tags: Some(new.tags),
                        requires_tools: Some(new.requires_tools),
                        source_ref: Some(new.source_ref),
                        enabled: Some(true),
                        files: Some(new.files),
                        ..SkillUpdate::default()
                    };
                    store
                        .update_skill(tenant, &current.record.id, update)
                        .await?;
                    report.changed.push(slug.clone());
                    report.resync.push(current.record.id.clone());
                }
                current.record.id
            }
        };
        if default_enabled {
            match store
                .create_assignment(tenant, NewAssignment::global(&skill_id))
                .await
            {
                Ok(_) => report.assigned.push(slug),
                Err(skills_store_traits::Error::Conflict { .. }) => {}
                Err(other) => return Err(other.into()),
            }
        }
    }
    if remove_missing {
        for skill in plugin_skills(store, tenant, plugin_id).await? {
            if !slugs.contains(&skill.slug) && store.delete_skill(tenant, &skill.id).await? {
                report.removed.push(skill.slug);
            }
        }
    }
    for list in [
        &mut report.created,
        &mut report.changed,
        &mut report.unchanged,
        &mut report.removed,
        &mut report.assigned,
        &mut report.resync,
        &mut report.clashes,
    ] {
        list.sort();
    }
    Ok(report)
}

fn relabel(index: usize, error: Error) -> Error {
    match error {
        Error::Invalid { field, violation } => Error::Invalid {
            field: format!("contributions[{index}].{field}"),
            violation,
        },
        other => other,
    }
}

/// Whether the stored skill already holds what `new` would write (enabled, same content,
/// same metadata, same files by checksum).
fn same_content(current: &StoredSkill, new: &NewSkill) -> bool {
    let r = &current.record;
    let files_now: Vec<(&str, String)> = current
        .files
        .iter()
        .map(|f| (f.relative_path.as_str(), f.checksum.clone()))
        .collect();
    let mut files_new: Vec<(&str, String)> = new
        .files
        .iter()
        .map(|f| (f.path.as_str(), validate::checksum(&f.content)))
        .collect();
    files_new.sort_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
    r.enabled
        && r.checksum == validate::checksum(&new.content)
        && r.name == new.name
        && r.description == new.description
        && Some(&r.category)
            == new
                .category
                .as_ref()
                .or(Some(&"general".to_owned()))
                .as_ref()
                .copied()
        && r.tags == new.tags
        && r.requires_tools == new.requires_tools
        && r.source_ref == new.source_ref
        && files_now == files_new
}

fn prepare(
    plugin_id: &str,
    install_dir: &Path,
    contribution: &SkillContribution,
    limits: &StoreLimits,
) -> Result<NewSkill> {
    let slug = slug_for(&contribution.id);
    validate::check_slug("id", &slug).map_err(Error::Store)?;
    let (content, files, source_ref) = match &contribution.source {
        ContributionSource::Inline { content } => {
            let files = contribution
                .files
                .iter()
                .map(|f| NewSkillFile::new(f.path.clone(), f.content.clone()))
                .collect();
            (content.clone(), files, None)
        }
        ContributionSource::File { path } => {
            let file = contained(install_dir, path, "source.path")?;
            (read_text(&file, limits)?, Vec::new(), Some(path.clone()))
        }
        ContributionSource::Directory { path } => {
            let dir = contained(install_dir, path, "source.path")?;
            let (content, files) = read_skill_dir(&dir, limits)?;
            (content, files, Some(path.clone()))
        }
    };
    let mut new = NewSkill::new(contribution.name.clone(), slug, content);
    new.description = contribution.description.clone();
    new.category = contribution.category.clone();
    new.tags = contribution.tags.clone();
    new.requires_tools = contribution.requires_tools.clone();
    new.source_kind = Some(SkillSourceKind::Plugin);
    new.plugin_id = Some(plugin_id.to_owned());
    new.source_ref = source_ref;
    new.is_directory =
        !files.is_empty() || matches!(contribution.source, ContributionSource::Directory { .. });
    new.files = files;
    validate::check_new_skill(&new, limits).map_err(|e| prefixed("", e))?;
    Ok(new)
}

/// Resolves `relative` under `root`, refusing anything that lands outside it.
fn contained(root: &Path, relative: &str, field: &str) -> Result<PathBuf> {
    validate::check_relative_path(field, relative)
        .or_else(|e| match e.violation() {
            // A directory contribution may legitimately be named like anything but SKILL.md
            // rules do not apply to plugin paths; only path-shape problems do.
            Some(skills_store_traits::Violation::ReservedPath) => Ok(()),
            _ => Err(e),
        })
        .map_err(Error::Store)?;
    let root_real = fs::canonicalize(root).map_err(|e| Error::io("resolve", root, e))?;
    let target = root.join(relative);
    let real = fs::canonicalize(&target).map_err(|e| Error::io("resolve", &target, e))?;
    if !real.starts_with(&root_real) {
        return Err(Error::UnsafePath {
            path: target,
            reason: "resolves outside the plugin's install directory",
        });
    }
    Ok(real)
}
