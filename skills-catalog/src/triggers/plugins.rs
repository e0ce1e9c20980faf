//! Plugin life-cycle operations and portable import as [`Catalog`] operations (seed 002
//! sections 9.3 and 13): each runs the [`plugin`] or [`portable`] step on the store, then
//! refreshes the cache (created and changed skills re-materialized, deleted ones dropped) and
//! syncs the touched slugs of every agent an assignment of them reaches, before or after.

use std::collections::BTreeSet;
use std::path::Path;

use serde::Serialize;
use skills_store_traits::{SkillAssignment, SkillFilter, SkillRecord, SkillSourceKind, TenantId};

use super::{Affected, AgentSync, Catalog};
use crate::error::Result;
use crate::plugin::{self, PluginReport, SkillContribution};
use crate::portable::{self, ImportAction, ImportOptions, Imported, PortableSkill};
use crate::stored::StoredSkill;

/// What a plugin operation did to the store, and the syncs it triggered.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct PluginSync {
    /// The store side: for disable, `changed` lists the disabled skills; for uninstall,
    /// `removed` the deleted ones.
    pub report: PluginReport,
    /// One outcome per agent the touched skills reach (or reached).
    pub syncs: Vec<AgentSync>,
}

type PluginState = Vec<(SkillRecord, Vec<SkillAssignment>)>;

impl Catalog {
    /// Enables a plugin ([`plugin::enable_plugin`]): new and changed skills are materialized
    /// and synced to the agents assigned them (a `default_enabled` one reaches everyone);
    /// clashing slugs stay with their holder and are reported.
    pub async fn enable_plugin(
        &self,
        tenant: &TenantId,
        plugin_id: &str,
        install_dir: &Path,
        contributions: &[SkillContribution],
    ) -> Result<PluginSync> {
        let before = self.plugin_state(tenant, plugin_id).await?;
        let report = plugin::enable_plugin(
            self.store.as_ref(),
            tenant,
            plugin_id,
            install_dir,
            contributions,
        )
        .await?;
        self.after_plugin(tenant, plugin_id, before, report).await
    }

    /// Upgrades a plugin ([`plugin::upgrade_plugin`]): changed skills are re-materialized and
    /// re-synced, skills no longer contributed are dropped from the cache and the sandboxes.
    pub async fn upgrade_plugin(
        &self,
        tenant: &TenantId,
        plugin_id: &str,
        install_dir: &Path,
        contributions: &[SkillContribution],
    ) -> Result<PluginSync> {
        let before = self.plugin_state(tenant, plugin_id).await?;
        let report = plugin::upgrade_plugin(
            self.store.as_ref(),
            tenant,
            plugin_id,
            install_dir,
            contributions,
        )
        .await?;
        self.after_plugin(tenant, plugin_id, before, report).await
    }

    /// Disables a plugin's skills (assignments kept) and removes them from every sandbox
    /// that had them.
    pub async fn disable_plugin(&self, tenant: &TenantId, plugin_id: &str) -> Result<PluginSync> {
        let before = self.plugin_state(tenant, plugin_id).await?;
        let mut changed = plugin::disable_plugin(self.store.as_ref(), tenant, plugin_id).await?;
        changed.sort();
        let report = PluginReport {
            changed,
            ..PluginReport::default()
        };
        self.after_plugin(tenant, plugin_id, before, report).await
    }

    /// Uninstalls a plugin: its skills are deleted, their cached directories dropped and
    /// their entries removed from every sandbox that had them.
    pub async fn uninstall_plugin(&self, tenant: &TenantId, plugin_id: &str) -> Result<PluginSync> {
        let before = self.plugin_state(tenant, plugin_id).await?;
        let ids = plugin::uninstall_plugin(self.store.as_ref(), tenant, plugin_id).await?;
        let mut removed: Vec<String> = before
            .iter()
            .filter(|(skill, _)| ids.contains(&skill.id))
            .map(|(skill, _)| skill.slug.clone())
            .collect();
        removed.sort();
        let report = PluginReport {
            removed,
            ..PluginReport::default()
        };
        self.after_plugin(tenant, plugin_id, before, report).await
    }

    /// Imports a portable document ([`portable::import`]) and materializes it (seed 002
    /// section 9.3 step 4); an overwrite is re-synced to the agents assigned the skill.
    pub async fn import(
        &self,
        tenant: &TenantId,
        document: PortableSkill,
        options: &ImportOptions,
    ) -> Result<(Imported, Vec<AgentSync>)> {
        let imported = portable::import(self.store.as_ref(), tenant, document, options).await?;
        let syncs = match imported.action {
            ImportAction::Skipped => Vec::new(),
            ImportAction::Created | ImportAction::Overwritten => {
                self.resync_skill(tenant, &imported.skill.id).await?
            }
        };
        Ok((imported, syncs))
    }

    async fn plugin_state(&self, tenant: &TenantId, plugin_id: &str) -> Result<PluginState> {
        let filter = SkillFilter {
            source: Some(SkillSourceKind::Plugin),
            plugin_id: Some(plugin_id.to_owned()),
            ..SkillFilter::default()
        };
        let mut state = Vec::new();
        for skill in self.store.list_skills(tenant, &filter).await? {
            let assignments = self.assignments_of(tenant, &skill.id).await?;
            state.push((skill, assignments));
        }
        Ok(state)
    }

    async fn after_plugin(
        &self,
        tenant: &TenantId,
        plugin_id: &str,
        before: PluginState,
        report: PluginReport,
    ) -> Result<PluginSync> {
        let touched: BTreeSet<&str> = [
            &report.created,
            &report.changed,
            &report.removed,
            &report.assigned,
        ]
        .into_iter()
        .flatten()
        .map(String::as_str)
        .collect();
        let after = self.plugin_state(tenant, plugin_id).await?;
        let mut affected = Affected::default();
        for (skill, assignments) in before {
            if touched.contains(skill.slug.as_str()) {
                if !after.iter().any(|(now, _)| now.id == skill.id) {
                    self.drop_cache(&skill.id)?;
                }
                affected.extend(&skill.slug, assignments);
            }
        }
        for (skill, assignments) in after {
            if touched.contains(skill.slug.as_str()) {
                let fresh =
                    report.created.contains(&skill.slug) || report.changed.contains(&skill.slug);
                if fresh && skill.enabled {
                    let stored =
                        StoredSkill::with_files(self.store.as_ref(), tenant, skill.clone()).await?;
                    self.refresh_cache(&stored)?;
                }
                affected.extend(&skill.slug, assignments);
            }
        }
        let syncs = self.sync_affected(tenant, affected).await?;
        Ok(PluginSync { report, syncs })
    }
}
