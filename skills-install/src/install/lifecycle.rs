//! The rest of a package's life: a version deprecated (and the mark cleared), the package
//! uninstalled, versions rated.
//!
//! Threat: a removal or a mark that leaves no trace; a half-removed skill an agent can
//! still load. Guarantee: deprecation is audited and undone as a whole when its record
//! cannot be written; uninstall deletes the skill first (with its files and assignments,
//! so nothing can load it), then the package, then audits it, and can be repeated after a
//! failure.

use skills_store_traits::packages::{PackageVersionRecord, RatingSummary};
use skills_store_traits::{TenantId, UserScope};

use super::Installer;
use super::record::{self, Action, AuditFacts};
use super::undo::{Step, Undo};
use crate::error::{Error, Result};

impl Installer {
    /// Marks a version deprecated with `message`, or clears the mark with `None`.
    pub async fn deprecate(
        &self,
        scope: &UserScope,
        name: &str,
        version: &str,
        message: Option<String>,
    ) -> Result<PackageVersionRecord> {
        let tenant = &scope.tenant;
        let package = self.package(tenant, name).await?;
        let target = self.version(tenant, &package, version).await?;
        let mut undo = Undo::new(self, tenant);
        undo.push(Step::Deprecated {
            package_id: package.id.clone(),
            version: target.version.clone(),
            was: target.deprecated.clone(),
        });
        let changed = match self
            .packages
            .deprecate_version(tenant, &package.id, &target.version, message.clone())
            .await
        {
            Ok(changed) => changed,
            Err(e) => {
                return Err(undo
                    .rollback(Error::store("deprecating the version", e))
                    .await);
            }
        };
        let facts = AuditFacts {
            action: Action::Deprecate,
            skill_id: &package.skill_id,
            skill_path: record::stored_trust_path(&target).unwrap_or(&package.source.locator),
            trust: &package.trust_level,
            version: Some(&target.version),
            digest: &target.digest,
            flags: vec![if message.is_some() {
                "deprecated".to_owned()
            } else {
                "undeprecated".to_owned()
            }],
        };
        match self.audit(scope, facts).await {
            Ok(_) => Ok(changed),
            Err(e) => Err(undo.rollback(e).await),
        }
    }

    /// Removes the skill (with its files and assignments) and the package (with its
    /// versions and ratings), then audits it. Deleted records cannot be put back with their
    /// ids, so this is not undone on failure; it can be repeated instead: the skill goes
    /// first, so a repeat still finds the package.
    pub async fn uninstall(&self, scope: &UserScope, name: &str) -> Result<u64> {
        let tenant = &scope.tenant;
        let package = self.package(tenant, name).await?;
        self.skills
            .delete_skill(tenant, &package.skill_id)
            .await
            .map_err(|e| Error::store("deleting the skill", e))?;
        self.packages
            .delete_package(tenant, &package.id)
            .await
            .map_err(|e| Error::store("deleting the package", e))?;
        let facts = AuditFacts {
            action: Action::Uninstall,
            skill_id: &package.skill_id,
            skill_path: &package.source.locator,
            trust: &package.trust_level,
            version: Some(&package.current_version),
            digest: &package.digest,
            flags: Vec::new(),
        };
        self.audit(scope, facts).await
    }

    /// Records the user's rating (1 to 5 stars) of one version.
    pub async fn rate(
        &self,
        scope: &UserScope,
        name: &str,
        version: &str,
        stars: u8,
    ) -> Result<()> {
        let package = self.package(&scope.tenant, name).await?;
        self.packages
            .rate(scope, &package.id, version, stars)
            .await
            .map_err(|e| Error::store("rating", e))
    }

    /// The count and mean of the ratings of one version, or of all versions with `None`.
    pub async fn ratings(
        &self,
        tenant: &TenantId,
        name: &str,
        version: Option<&str>,
    ) -> Result<RatingSummary> {
        let package = self.package(tenant, name).await?;
        self.packages
            .rating_summary(tenant, &package.id, version)
            .await
            .map_err(|e| Error::store("reading ratings", e))
    }
}
