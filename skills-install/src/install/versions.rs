//! After install: update from the source, approve, upgrade and roll back between stored
//! versions (deprecation, uninstall and ratings are in [`lifecycle`](super::lifecycle)).
//!
//! Threat: an update that quietly ships new scripts or asks for new tools under a skill a
//! person approved earlier; a moved tag serving different content under a known version;
//! two concurrent upgrades both "winning"; an unapproved version becoming current; an
//! update, approval, upgrade or rollback switching back on a skill an operator switched off.
//! Guarantee: an update whose digest is unchanged writes nothing; a changed one is
//! validated and rescanned like an install, and when its scripts (paths or contents) or
//! requested permissions differ from the current version's, or its scan is not clean, it
//! is stored unapproved and not made current until [`Installer::approve`]; a known version
//! with a different digest is refused ([`Error::VersionConflict`]); the current version
//! moves only by compare-and-set, and only to an approved version; a skill an operator
//! holds ([`Installer::disable`]) stays disabled through all of them (the installer never
//! asks to enable it, and every store keeps a held skill disabled); every operation is
//! audited and undone as a whole on failure ([`undo`](super::undo)).

use skills_security::TrustLevel;
use skills_security::scan::{ScanReport, Verdict};
use skills_store_traits::packages::{
    PackageRecord, PackageUpdate, PackageVersionRecord, version_order,
};
use skills_store_traits::{TenantId, UserScope};

use super::prepare::{self, Prepared};
use super::record::{self, Action, AuditFacts};
use super::undo::{Step, Undo};
use super::{InstallRequest, Installer};
use crate::digest::package_digest;
use crate::error::{Error, Result, shown};
use crate::source::SkillSource;

/// A stored new version, current or awaiting approval.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Updated {
    /// The package as it is now.
    pub package: PackageRecord,
    /// The new version.
    pub version: PackageVersionRecord,
    /// The version that was current before.
    pub previous_version: String,
    /// The scan report of the new version.
    pub report: ScanReport,
    /// The trust level the new version was assigned.
    pub trust_level: TrustLevel,
    /// Scripts were added, removed or changed.
    pub scripts_changed: bool,
    /// Requested permissions changed.
    pub permissions_changed: bool,
    /// The audit entry's sequence number.
    pub audit_sequence: u64,
}

/// What [`Installer::update`] did.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum UpdateOutcome {
    /// The source serves exactly the current content: nothing was written.
    Unchanged {
        /// The current version.
        version: String,
        /// Its digest.
        digest: String,
    },
    /// The new version is stored, approved and current.
    Upgraded(Box<Updated>),
    /// The new version is stored but needs approval before it can become current.
    PendingApproval(Box<Updated>),
    /// The source serves a version already stored with the same digest (it went back to
    /// it): that version was made current as by [`Installer::switch_version`], which
    /// refuses an unapproved one.
    Stored(Box<SwitchOutcome>),
}

/// What a version switch did.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum SwitchOutcome {
    /// The version was already current.
    Unchanged(PackageRecord),
    /// The current version moved.
    Switched {
        /// The package as it is now.
        package: PackageRecord,
        /// The version that was current before.
        previous_version: String,
        /// The audit entry's sequence number.
        audit_sequence: u64,
    },
}

/// Which way a switch may go.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Direction {
    Up,
    Down,
    Any,
}

impl Installer {
    /// The package installed under `name`.
    pub async fn package(&self, tenant: &TenantId, name: &str) -> Result<PackageRecord> {
        self.packages
            .find_package_by_name(tenant, name)
            .await
            .map_err(|e| Error::store("looking up the package", e))?
            .ok_or_else(|| Error::NotInstalled { name: shown(name) })
    }

    /// Every stored version of the package, in semantic-version order.
    pub async fn versions(
        &self,
        tenant: &TenantId,
        name: &str,
    ) -> Result<Vec<PackageVersionRecord>> {
        let package = self.package(tenant, name).await?;
        self.packages
            .list_versions(tenant, &package.id)
            .await
            .map_err(|e| Error::store("listing versions", e))
    }

    pub(super) async fn version(
        &self,
        tenant: &TenantId,
        package: &PackageRecord,
        version: &str,
    ) -> Result<PackageVersionRecord> {
        self.packages
            .get_version(tenant, &package.id, version)
            .await
            .map_err(|e| Error::store("reading a version", e))?
            .ok_or_else(|| Error::NotFound {
                what: format!("version {} of `{}`", shown(version), package.name),
            })
    }

    /// Fetches the package's source again (at `request.version`, or the latest; an empty
    /// `request.locator` means the stored one) and, when the content changed, validates,
    /// rescans and stores it as a new version — current at once, or awaiting approval when
    /// its scan is not clean or its scripts or permissions changed.
    pub async fn update(
        &self,
        scope: &UserScope,
        source: &dyn SkillSource,
        name: &str,
        request: &InstallRequest,
    ) -> Result<UpdateOutcome> {
        let tenant = &scope.tenant;
        let package = self.package(tenant, name).await?;
        if source.kind().as_str() != package.source.kind {
            return Err(Error::InvalidInput {
                what: "update source",
                value: source.kind().as_str().to_owned(),
                reason: "the package was installed from another kind of source",
            });
        }
        let locator = if request.locator.is_empty() {
            package.source.locator.clone()
        } else {
            request.locator.clone()
        };
        let fetched = source.fetch(&locator, request.version.as_deref()).await?;
        let digest = package_digest(fetched.files());
        if let Some(expected) = &request.expected_digest {
            prepare::digest(&fetched, Some(expected))?;
        }
        if digest == package.digest {
            return Ok(UpdateOutcome::Unchanged {
                version: package.current_version,
                digest,
            });
        }
        let (skill_md, _, warnings) = prepare::validate(&fetched, &self.load, &self.limits)?;
        let report = prepare::scan(self.scanner.as_ref(), &fetched, request)?;
        let was_user = package.trust_level == TrustLevel::User.as_str();
        let trust = prepare::trust(
            &self.trusted,
            fetched.source(),
            request.tenant_authored || was_user,
            report.verdict,
        );
        let prepared = prepare::finish(
            &fetched, &skill_md, report, digest, trust, request, warnings,
        )?;
        if prepared.slug != package.name {
            return Err(Error::InvalidInput {
                what: "skill name",
                value: shown(&prepared.slug),
                reason: "an update cannot rename the installed skill",
            });
        }
        if let Some(stored) = self
            .packages
            .get_version(tenant, &package.id, &prepared.version)
            .await
            .map_err(|e| Error::store("reading a version", e))?
        {
            if stored.digest == prepared.digest {
                // The source went back to a version already stored with this very content.
                let switched = self
                    .switch(scope, name, &stored.version, Direction::Any)
                    .await?;
                return Ok(UpdateOutcome::Stored(Box::new(switched)));
            }
            return Err(Error::VersionConflict {
                name: package.name,
                version: prepared.version,
                stored: stored.digest,
                fetched: prepared.digest,
            });
        }
        let current = self
            .version(tenant, &package, &package.current_version)
            .await?;
        self.store_update(scope, package, current, prepared).await
    }

    async fn store_update(
        &self,
        scope: &UserScope,
        package: PackageRecord,
        current: PackageVersionRecord,
        prepared: Prepared,
    ) -> Result<UpdateOutcome> {
        let tenant = &scope.tenant;
        let scripts_changed = scripts_of(&current) != scripts_of_prepared(&prepared);
        let permissions_changed = sorted(&current.permissions) != sorted(&prepared.permissions);
        let approved = !(prepared.needs_approval || scripts_changed || permissions_changed);
        let mut undo = Undo::new(self, tenant);

        let added = self
            .packages
            .add_version(
                tenant,
                &package.id,
                record::new_version(&prepared, approved, scope),
            )
            .await;
        if !matches!(added, Err(skills_store_traits::Error::Conflict { .. })) {
            // Also when the call failed: the version may have landed with its answer lost.
            // A conflict means someone else's version of that name: never ours to remove.
            undo.push(Step::AddedVersion {
                package_id: package.id.clone(),
                version: prepared.version.clone(),
                id: added.as_ref().ok().map(|record| record.id.clone()),
                digest: prepared.digest.clone(),
            });
        }
        let version = match added {
            Ok(version) => version,
            Err(e) => {
                let error = Error::store(format!("adding version {}", prepared.version), e);
                return Err(undo.rollback(error).await);
            }
        };

        let mut now_package = package.clone();
        if approved {
            let update = PackageUpdate::new()
                .trust_level(prepared.trust.as_str())
                .source(record::package_source(&prepared));
            match self
                .move_current(
                    &mut undo,
                    tenant,
                    &package,
                    &version,
                    update,
                    Some(&prepared),
                )
                .await
            {
                Ok(moved) => now_package = moved,
                Err(e) => return Err(undo.rollback(e).await),
            }
        }
        let mut flags = record::flags(&prepared, approved);
        if scripts_changed {
            flags.push("scripts_changed".to_owned());
        }
        if permissions_changed {
            flags.push("permissions_changed".to_owned());
        }
        let facts = AuditFacts {
            action: Action::Update,
            skill_id: &package.skill_id,
            skill_path: &prepared.source.trust_path,
            trust: prepared.trust.as_str(),
            version: Some(&prepared.version),
            digest: &prepared.digest,
            flags,
        };
        let audit_sequence = match self.audit(scope, facts).await {
            Ok(sequence) => sequence,
            Err(e) => return Err(undo.rollback(e).await),
        };
        let updated = Box::new(Updated {
            package: now_package,
            version,
            previous_version: package.current_version,
            report: prepared.report,
            trust_level: prepared.trust,
            scripts_changed,
            permissions_changed,
            audit_sequence,
        });
        Ok(if approved {
            UpdateOutcome::Upgraded(updated)
        } else {
            UpdateOutcome::PendingApproval(updated)
        })
    }

    /// Makes `version` current: the skill's content and files become the version's, then
    /// the package's current version moves by compare-and-set from what `package` shows.
    /// The skill is enabled when the version is approved, unless an operator holds it
    /// ([`Installer::disable`]): the hold outlasts every update, approval and switch.
    async fn move_current(
        &self,
        undo: &mut Undo<'_>,
        tenant: &TenantId,
        package: &PackageRecord,
        version: &PackageVersionRecord,
        update: PackageUpdate,
        prepared: Option<&Prepared>,
    ) -> Result<PackageRecord> {
        let skill = self
            .skills
            .find_skill_by_id(tenant, &package.skill_id)
            .await
            .map_err(|e| Error::store("reading the skill", e))?
            .ok_or_else(|| Error::NotInstalled {
                name: package.name.clone(),
            })?;
        let files = self
            .skills
            .list_skill_files(tenant, &skill.id)
            .await
            .map_err(|e| Error::store("reading the skill's files", e))?;
        let trust = update
            .trust_level
            .clone()
            .unwrap_or_else(|| package.trust_level.clone());
        let skill_update = match prepared {
            Some(prepared) => {
                let nonce = record::nonce_of(&skill.metadata)
                    .unwrap_or_default()
                    .to_owned();
                let trust_level = prepared.trust;
                record::content_update(
                    prepared,
                    record::metadata(prepared, trust_level, true, &nonce),
                    record::enabled_after(&skill, true),
                )
            }
            None => {
                let mut update = record::version_update(
                    version,
                    record::metadata_for_version(package, version, &trust, &skill.metadata),
                    record::enabled_after(&skill, version.approved),
                );
                update.trust_level = Some(Some(trust.clone()));
                update
            }
        };
        undo.push(Step::ReplacedSkill {
            id: skill.id.clone(),
            previous: Box::new(record::restore_update(&skill, &files)),
        });
        match self
            .skills
            .update_skill(tenant, &skill.id, skill_update)
            .await
        {
            Ok(Some(_)) => {}
            Ok(None) => {
                return Err(Error::NotInstalled {
                    name: package.name.clone(),
                });
            }
            Err(e) => return Err(Error::store("replacing the skill's content", e)),
        }
        let previous = PackageUpdate::new()
            .trust_level(package.trust_level.clone())
            .source(package.source.clone());
        undo.push(Step::MovedCurrent {
            package_id: package.id.clone(),
            from: package.current_version.clone(),
            to: version.version.clone(),
            previous,
        });
        self.packages
            .set_current_version(
                tenant,
                &package.id,
                &version.version,
                &package.current_version,
                update,
            )
            .await
            .map_err(|e| Error::store(format!("making {} current", version.version), e))
    }

    /// Approves a stored version's scripts and permissions. When it is the current version
    /// (an install that needed review) the skill is enabled; when it is newer than the
    /// current one (an update that needed review) it becomes current. An operator's hold
    /// ([`Installer::disable`]) is not lifted: a held skill stays disabled.
    pub async fn approve(
        &self,
        scope: &UserScope,
        name: &str,
        version: &str,
    ) -> Result<PackageRecord> {
        let tenant = &scope.tenant;
        let package = self.package(tenant, name).await?;
        let target = self.version(tenant, &package, version).await?;
        let newer = version_order(&target.version, &package.current_version).is_gt();
        let is_current = target.version == package.current_version;
        let mut undo = Undo::new(self, tenant);
        if !target.approved {
            undo.push(Step::Approved {
                package_id: package.id.clone(),
                version: target.version.clone(),
                was: false,
            });
            let approved = match self
                .packages
                .set_version_approved(tenant, &package.id, &target.version, true)
                .await
            {
                Ok(approved) => approved,
                Err(e) => {
                    return Err(undo
                        .rollback(Error::store("approving the version", e))
                        .await);
                }
            };
            let trust = record::stored_trust(&approved)
                .unwrap_or(&package.trust_level)
                .to_owned();
            let result = if is_current || newer {
                let update = PackageUpdate::new().trust_level(trust.clone());
                self.move_current(&mut undo, tenant, &package, &approved, update, None)
                    .await
                    .map(Some)
            } else {
                Ok(None)
            };
            let moved = match result {
                Ok(moved) => moved,
                Err(e) => return Err(undo.rollback(e).await),
            };
            let facts = AuditFacts {
                action: Action::Approve,
                skill_id: &package.skill_id,
                skill_path: record::stored_trust_path(&target).unwrap_or(&package.source.locator),
                trust: &trust,
                version: Some(&target.version),
                digest: &target.digest,
                flags: vec![format!("scan:{}", target.verdict)],
            };
            if let Err(e) = self.audit(scope, facts).await {
                return Err(undo.rollback(e).await);
            }
            return Ok(moved.unwrap_or(package));
        }
        Ok(package)
    }

    /// Makes a newer stored, approved version current.
    pub async fn upgrade(
        &self,
        scope: &UserScope,
        name: &str,
        version: &str,
    ) -> Result<SwitchOutcome> {
        self.switch(scope, name, version, Direction::Up).await
    }

    /// Makes an earlier stored, approved version current again, restoring its files in the
    /// skill store.
    pub async fn rollback(
        &self,
        scope: &UserScope,
        name: &str,
        version: &str,
    ) -> Result<SwitchOutcome> {
        self.switch(scope, name, version, Direction::Down).await
    }

    /// Makes any stored, approved version current.
    pub async fn switch_version(
        &self,
        scope: &UserScope,
        name: &str,
        version: &str,
    ) -> Result<SwitchOutcome> {
        self.switch(scope, name, version, Direction::Any).await
    }

    async fn switch(
        &self,
        scope: &UserScope,
        name: &str,
        version: &str,
        direction: Direction,
    ) -> Result<SwitchOutcome> {
        let tenant = &scope.tenant;
        let package = self.package(tenant, name).await?;
        let target = self.version(tenant, &package, version).await?;
        if target.version == package.current_version {
            return Ok(SwitchOutcome::Unchanged(package));
        }
        let order = version_order(&target.version, &package.current_version);
        let allowed = match direction {
            Direction::Up => order.is_gt(),
            Direction::Down => order.is_lt(),
            Direction::Any => true,
        };
        if !allowed {
            return Err(Error::InvalidInput {
                what: "version",
                value: shown(version),
                reason: match direction {
                    Direction::Up => "an upgrade needs a version newer than the current one",
                    _ => "a rollback needs a version older than the current one",
                },
            });
        }
        if !target.approved {
            return Err(Error::NeedsApproval {
                name: package.name,
                version: target.version,
            });
        }
        let trust = match record::stored_trust(&target) {
            Some(trust) => trust.to_owned(),
            None => package.trust_level.clone(),
        };
        let trust = if target.verdict == Verdict::Block.as_str() && trust == "verified" {
            TrustLevel::Community.as_str().to_owned()
        } else {
            trust
        };
        let mut undo = Undo::new(self, tenant);
        let update = PackageUpdate::new().trust_level(trust.clone());
        let moved = match self
            .move_current(&mut undo, tenant, &package, &target, update, None)
            .await
        {
            Ok(moved) => moved,
            Err(e) => return Err(undo.rollback(e).await),
        };
        let facts = AuditFacts {
            action: Action::Switch,
            skill_id: &package.skill_id,
            skill_path: record::stored_trust_path(&target).unwrap_or(&package.source.locator),
            trust: &trust,
            version: Some(&target.version),
            digest: &target.digest,
            flags: vec![format!("from_version:{}", package.current_version)],
        };
        match self.audit(scope, facts).await {
            Ok(audit_sequence) => Ok(SwitchOutcome::Switched {
                package: moved,
                previous_version: package.current_version,
                audit_sequence,
            }),
            Err(e) => Err(undo.rollback(e).await),
        }
    }
}

/// Script path to content digest.
fn scripts_of(version: &PackageVersionRecord) -> Vec<(String, Option<String>)> {
    let mut out: Vec<(String, Option<String>)> = version
        .scripts
        .iter()
        .map(|path| (path.clone(), version.file_digests.get(path).cloned()))
        .collect();
    out.sort();
    out
}

fn scripts_of_prepared(prepared: &Prepared) -> Vec<(String, Option<String>)> {
    let mut out: Vec<(String, Option<String>)> = prepared
        .scripts
        .iter()
        .map(|path| (path.clone(), prepared.file_digests.get(path).cloned()))
        .collect();
    out.sort();
    out
}

fn sorted(items: &[String]) -> Vec<String> {
    let mut items = items.to_vec();
    items.sort();
    items.dedup();
    items
}
