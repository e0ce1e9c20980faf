//! Compensation: every write an operation makes is logged here, and a failure later in the
//! operation undoes the logged writes in reverse order. Writes whose reversal is harmless
//! when they did not land (replacing content, moving the current version, approval and
//! deprecation flags) are logged before they are attempted, so a write that landed but
//! whose acknowledgement was lost is undone too; creations are probed for instead (see
//! `Installer::orphan_skill`).
//!
//! Threat: an install that fails half-way (a store error, a crash of the audit backend, a
//! lost race) leaving a skill without its package, a package pointing at a version whose
//! files were never written, or a half-upgraded skill an agent would then run. Guarantee:
//! when an operation returns an error, each write it made has been reversed — created
//! records deleted, replaced content put back, a moved current version moved back — or the
//! error is [`Error::Compensation`] naming exactly what could not be reversed (only when
//! a reversal itself fails). An added version is removed with
//! `PackageStore::delete_version` only when it is ours (its record id, or with a lost
//! answer its digest), so a concurrent writer's version of the same number is never
//! deleted. Reversal cannot bring back record ids the store assigns afresh: a skill's
//! supporting files put back by an undone update are new file records with the old paths
//! and contents.

use skills_store_traits::packages::PackageUpdate;
use skills_store_traits::{AssignmentUpdate, NewAssignment, SkillUpdate, TenantId};

use super::Installer;
use crate::error::Error;

/// One write to reverse.
#[derive(Debug, Clone)]
pub(crate) enum Step {
    /// A skill was created: delete it.
    CreatedSkill { id: String },
    /// A package was created: delete it (with its versions and ratings).
    CreatedPackage { id: String },
    /// A version was (or, when the call failed, may have been) added: remove it if it is
    /// ours — the record `id` when the store answered, else a version with our `digest`.
    AddedVersion {
        package_id: String,
        version: String,
        id: Option<String>,
        digest: String,
    },
    /// A skill's content, files and metadata were replaced: put the previous ones back.
    ReplacedSkill {
        id: String,
        previous: Box<SkillUpdate>,
    },
    /// The current version moved from `from` to `to`: move it back, with the old trust
    /// level and source.
    MovedCurrent {
        package_id: String,
        from: String,
        to: String,
        previous: PackageUpdate,
    },
    /// A version's approval changed from `was`.
    Approved {
        package_id: String,
        version: String,
        was: bool,
    },
    /// A version's deprecation changed from `was`.
    Deprecated {
        package_id: String,
        version: String,
        was: Option<String>,
    },
    /// An assignment was created: delete it.
    CreatedAssignment { id: String },
    /// An assignment's toggle changed from `was`.
    AssignmentEnabled { id: String, was: bool },
    /// An assignment was deleted: create it again (under a new id: the store assigns ids).
    DeletedAssignment { previous: NewAssignment },
}

/// The writes of one operation so far.
pub(crate) struct Undo<'a> {
    installer: &'a Installer,
    tenant: &'a TenantId,
    steps: Vec<Step>,
}

impl<'a> Undo<'a> {
    pub(crate) fn new(installer: &'a Installer, tenant: &'a TenantId) -> Self {
        Undo {
            installer,
            tenant,
            steps: Vec::new(),
        }
    }

    pub(crate) fn push(&mut self, step: Step) {
        self.steps.push(step);
    }

    /// Reverses every logged write, newest first, and returns `original` — or
    /// [`Error::Compensation`] when some write could not be reversed.
    pub(crate) async fn rollback(mut self, original: Error) -> Error {
        let mut leftovers = Vec::new();
        let steps = std::mem::take(&mut self.steps);
        for step in steps.into_iter().rev() {
            if let Err(left) = self.reverse(&step).await {
                leftovers.push(left);
            }
        }
        if leftovers.is_empty() {
            original
        } else {
            Error::Compensation {
                original: Box::new(original),
                leftovers,
            }
        }
    }

    async fn reverse(&self, step: &Step) -> Result<(), String> {
        let skills = self.installer.skills.as_ref();
        let packages = self.installer.packages.as_ref();
        let tenant = self.tenant;
        match step {
            Step::CreatedSkill { id } => skills
                .delete_skill(tenant, id)
                .await
                .map(drop)
                .map_err(|e| format!("skill {id} ({e})")),
            Step::CreatedPackage { id } => packages
                .delete_package(tenant, id)
                .await
                .map(drop)
                .map_err(|e| format!("package {id} ({e})")),
            Step::AddedVersion {
                package_id,
                version,
                id,
                digest,
            } => {
                let stored = packages
                    .get_version(tenant, package_id, version)
                    .await
                    .map_err(|e| {
                        format!("possibly version {version} of package {package_id} ({e})")
                    })?;
                let ours = stored.is_some_and(|stored| match id {
                    Some(id) => stored.id == *id,
                    None => stored.digest == *digest,
                });
                if !ours {
                    // Never landed, or another writer's version of that number: not ours.
                    return Ok(());
                }
                // `Conflict` means it is current: our own move could not be put back.
                packages
                    .delete_version(tenant, package_id, version)
                    .await
                    .map(drop)
                    .map_err(|e| format!("version {version} of package {package_id} ({e})"))
            }
            Step::ReplacedSkill { id, previous } => {
                match skills.update_skill(tenant, id, (**previous).clone()).await {
                    Ok(Some(_)) => Ok(()),
                    Ok(None) => Err(format!("skill {id} (gone before its content was restored)")),
                    Err(e) => Err(format!("skill {id} content ({e})")),
                }
            }
            Step::MovedCurrent {
                package_id,
                from,
                to,
                previous,
            } => match packages
                .set_current_version(tenant, package_id, from, to, previous.clone())
                .await
            {
                // The move never landed, or another writer has moved on since: either way
                // there is nothing of ours to put back.
                Ok(_) | Err(skills_store_traits::Error::Stale { .. }) => Ok(()),
                Err(e) => Err(format!(
                    "current version {to} of package {package_id} ({e})"
                )),
            },
            Step::Approved {
                package_id,
                version,
                was,
            } => packages
                .set_version_approved(tenant, package_id, version, *was)
                .await
                .map(drop)
                .map_err(|e| format!("approval of {version} of package {package_id} ({e})")),
            Step::Deprecated {
                package_id,
                version,
                was,
            } => packages
                .deprecate_version(tenant, package_id, version, was.clone())
                .await
                .map(drop)
                .map_err(|e| format!("deprecation of {version} of package {package_id} ({e})")),
            Step::CreatedAssignment { id } => skills
                .delete_assignment(tenant, id)
                .await
                .map(drop)
                .map_err(|e| format!("assignment {id} ({e})")),
            Step::AssignmentEnabled { id, was } => {
                let update = AssignmentUpdate {
                    enabled: Some(*was),
                    ..AssignmentUpdate::default()
                };
                skills
                    .update_assignment(tenant, id, update)
                    .await
                    .map(drop)
                    .map_err(|e| format!("assignment {id} ({e})"))
            }
            Step::DeletedAssignment { previous } => skills
                .create_assignment(tenant, previous.clone())
                .await
                .map(drop)
                .map_err(|e| format!("assignment of skill {} ({e})", previous.skill_id)),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use skills_store_traits::in_memory::{
        InMemoryAuditStore, InMemoryPackageStore, InMemorySkillStore,
    };
    use skills_store_traits::packages::{
        NewPackage, NewPackageVersion, PackageFile, PackageSource, PackageStore, file_digest,
    };

    use super::*;

    fn version(number: &str, body: &str) -> NewPackageVersion {
        let files = vec![PackageFile::new("SKILL.md", body)];
        NewPackageVersion::new(number, file_digest(body), "clean", files)
    }

    /// A package at 1.0.0 with 1.1.0 stored by "someone else"; the installer over it.
    async fn world() -> (Installer, Arc<InMemoryPackageStore>, TenantId, String) {
        let packages = Arc::new(InMemoryPackageStore::new());
        let installer = Installer::builder(
            Arc::new(InMemorySkillStore::new()),
            packages.clone(),
            Arc::new(InMemoryAuditStore::new()),
        )
        .build();
        let tenant = TenantId::new("acme");
        let source = PackageSource::new("local", "pdf");
        let new = NewPackage::new("skill-1", "pdf", source, "community", version("1.0.0", "a"));
        let (package, _) = packages.create_package(&tenant, new).await.unwrap();
        packages
            .add_version(&tenant, &package.id, version("1.1.0", "theirs"))
            .await
            .unwrap();
        (installer, packages, tenant, package.id)
    }

    fn failure() -> Error {
        Error::NotInstalled { name: "pdf".into() }
    }

    /// Threat: an ambiguous `add_version` failure while another writer stored the same
    /// version number; undoing ours must not delete theirs.
    #[test]
    fn another_writers_version_of_the_same_number_is_left_alone() {
        futures::executor::block_on(async {
            let (installer, packages, tenant, id) = world().await;
            let theirs = packages.get_version(&tenant, &id, "1.1.0").await.unwrap();
            for (record_id, digest) in [
                (None, file_digest("ours")),
                (Some("another-record".to_owned()), file_digest("theirs")),
            ] {
                let mut undo = Undo::new(&installer, &tenant);
                undo.push(Step::AddedVersion {
                    package_id: id.clone(),
                    version: "1.1.0".into(),
                    id: record_id,
                    digest,
                });
                let error = undo.rollback(failure()).await;
                assert!(matches!(error, Error::NotInstalled { .. }), "{error}");
                let now = packages.get_version(&tenant, &id, "1.1.0").await.unwrap();
                assert_eq!(now, theirs);
            }
        });
    }

    /// Ours — by record id, or by digest when the store's answer was lost — is deleted.
    #[test]
    fn our_version_is_deleted_by_id_or_digest() {
        futures::executor::block_on(async {
            for by_id in [true, false] {
                let (installer, packages, tenant, id) = world().await;
                let ours = packages
                    .add_version(&tenant, &id, version("1.2.0", "ours"))
                    .await
                    .unwrap();
                let mut undo = Undo::new(&installer, &tenant);
                undo.push(Step::AddedVersion {
                    package_id: id.clone(),
                    version: "1.2.0".into(),
                    id: by_id.then(|| ours.id.clone()),
                    digest: ours.digest.clone(),
                });
                let error = undo.rollback(failure()).await;
                assert!(matches!(error, Error::NotInstalled { .. }), "{error}");
                let left = packages.list_versions(&tenant, &id).await.unwrap();
                let numbers: Vec<&str> = left.iter().map(|v| v.version.as_str()).collect();
                assert_eq!(numbers, ["1.0.0", "1.1.0"], "by id: {by_id}");
            }
        });
    }

    /// A version still current (its move could not be put back) is reported, not hidden.
    #[test]
    fn a_version_left_current_is_reported() {
        futures::executor::block_on(async {
            let (installer, packages, tenant, id) = world().await;
            let update = skills_store_traits::packages::PackageUpdate::new();
            packages
                .set_current_version(&tenant, &id, "1.1.0", "1.0.0", update)
                .await
                .unwrap();
            let mut undo = Undo::new(&installer, &tenant);
            undo.push(Step::AddedVersion {
                package_id: id.clone(),
                version: "1.1.0".into(),
                id: None,
                digest: file_digest("theirs"),
            });
            match undo.rollback(failure()).await {
                Error::Compensation { leftovers, .. } => {
                    assert_eq!(leftovers.len(), 1, "{leftovers:?}");
                    assert!(leftovers[0].contains("version 1.1.0"), "{leftovers:?}");
                }
                other => panic!("expected Compensation, got {other}"),
            }
        });
    }
}
