//! The install pipeline: fetch, validate, scan, digest, trust, store, audit — all or
//! nothing.
//!
//! Threat: a package that is invalid, malicious, swapped in transit or half-written; an
//! install that fails midway and leaves a skill an agent can load but nobody approved.
//! Guarantee: nothing is written until the package has passed validation (Spec profile,
//! every diagnostic reported), the scan (a block refuses unless explicitly overridden; a
//! review or an override stores the skill disabled until [`Installer::approve`]), and the
//! digest check; then the skill, the package and the audit record are written in that
//! order, and a failure at any of them undoes the earlier writes ([`undo`]), so a failed
//! install leaves the stores as they were. The trust level is decided here, never taken
//! from the package: a trusted source gives `verified` only when the scan does not block.

mod lifecycle;
mod operator;
mod prepare;
mod record;
pub(crate) mod undo;
mod versions;

use std::sync::Arc;

use serde_json::Value;
use skills_core::{Diagnostic, LoadOptions, Profile};
use skills_security::audit::AuditTrail;
use skills_security::scan::{ScanReport, Scanner};
use skills_security::{TrustLevel, TrustedSources};
use skills_store_traits::packages::{
    NewPackage, PackageRecord, PackageStore, PackageVersionRecord,
};
use skills_store_traits::{
    AuditStore, Clock, NewSkill, SkillRecord, SkillSourceKind, SkillStore, SkillUpdate,
    StoreLimits, SystemClock, TenantId, UserScope, new_id,
};

pub use operator::Operated;
pub use record::INSTALL_METADATA_KEY;
pub use versions::{SwitchOutcome, UpdateOutcome, Updated};

use crate::error::{Error, Result};
use crate::package::SkillPackage;
use crate::scan::PackageScanner;
use crate::source::SkillSource;
use prepare::Prepared;
use record::{Action, AuditFacts};
use undo::{Step, Undo};

/// What to install, and how.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct InstallRequest {
    /// What to fetch: a [`SkillRef::locator`](crate::SkillRef::locator).
    pub locator: String,
    /// The version to fetch; `None` for the source's latest.
    pub version: Option<String>,
    /// The `sha256:` package digest the caller expects (from a lock file, a publisher's
    /// announcement); a different package is refused.
    pub expected_digest: Option<String>,
    /// The tenant wrote this skill itself: it gets the `user` trust level unless its source
    /// is trusted. Only the host can know this; never set it from package content.
    pub tenant_authored: bool,
    /// An administrator's reason to store a package the scan blocked. It is stored disabled
    /// and unapproved, at most `community` (or `user`), and the reason is audited.
    pub override_block: Option<String>,
}

impl InstallRequest {
    /// Install the latest version at `locator`.
    pub fn new(locator: impl Into<String>) -> Self {
        InstallRequest {
            locator: locator.into(),
            ..InstallRequest::default()
        }
    }

    /// A specific version.
    #[must_use]
    pub fn version(mut self, version: impl Into<String>) -> Self {
        self.version = Some(version.into());
        self
    }

    /// Refuse anything but this `sha256:` digest.
    #[must_use]
    pub fn expect_digest(mut self, digest: impl Into<String>) -> Self {
        self.expected_digest = Some(digest.into());
        self
    }

    /// Mark the skill as written by the tenant.
    #[must_use]
    pub fn tenant_authored(mut self) -> Self {
        self.tenant_authored = true;
        self
    }

    /// Let a blocked package through for review, with the administrator's reason.
    #[must_use]
    pub fn override_block(mut self, reason: impl Into<String>) -> Self {
        self.override_block = Some(reason.into());
        self
    }
}

/// A successful install.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Installed {
    /// The stored skill (disabled while it needs approval).
    pub skill: SkillRecord,
    /// The package record.
    pub package: PackageRecord,
    /// The stored version.
    pub version: PackageVersionRecord,
    /// The trust level assigned.
    pub trust_level: TrustLevel,
    /// The scan report.
    pub report: ScanReport,
    /// The package digest, `sha256:<hex>`.
    pub digest: String,
    /// The scan asked for review (or a block was overridden): the skill stays disabled
    /// until [`Installer::approve`].
    pub needs_approval: bool,
    /// Validation warnings (no errors: those refuse the install).
    pub warnings: Vec<Diagnostic>,
    /// The audit entry's sequence number.
    pub audit_sequence: u64,
}

/// Installs, updates and removes skill packages. Cheap to share (`Arc` inside).
///
/// ```
/// # futures::executor::block_on(async {
/// use std::sync::Arc;
/// use skills_install::{InstallRequest, Installer, LocalSource};
/// use skills_store_traits::in_memory::{InMemoryAuditStore, InMemoryPackageStore, InMemorySkillStore};
/// use skills_store_traits::{SkillStore, UserScope};
///
/// let root = tempfile::tempdir()?;
/// std::fs::create_dir(root.path().join("greeter"))?;
/// std::fs::write(
///     root.path().join("greeter/SKILL.md"),
///     "---\nname: greeter\ndescription: Greets people by name.\nmetadata:\n  version: 1.0.0\n---\nSay hello.\n",
/// )?;
///
/// let skills = Arc::new(InMemorySkillStore::new());
/// let installer = Installer::builder(
///     skills.clone(),
///     Arc::new(InMemoryPackageStore::new()),
///     Arc::new(InMemoryAuditStore::new()),
/// )
/// .build();
/// let scope = UserScope::new("acme", "alice");
/// let installed = installer
///     .install(&scope, &LocalSource::new(root.path()), &InstallRequest::new("greeter"))
///     .await?;
/// assert_eq!(installed.trust_level.as_str(), "community");
/// assert_eq!(installed.version.version, "1.0.0");
/// assert!(installed.digest.starts_with("sha256:"));
/// assert!(skills.find_skill_by_slug(&scope.tenant, "greeter").await?.unwrap().enabled);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// # }).unwrap();
/// ```
#[derive(Clone)]
pub struct Installer {
    pub(crate) skills: Arc<dyn SkillStore>,
    pub(crate) packages: Arc<dyn PackageStore>,
    pub(crate) audit: AuditTrail,
    pub(crate) scanner: Arc<dyn PackageScanner>,
    pub(crate) trusted: TrustedSources,
    pub(crate) clock: Arc<dyn Clock>,
    pub(crate) load: LoadOptions,
    pub(crate) limits: StoreLimits,
}

impl std::fmt::Debug for Installer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Installer")
            .field("trusted", &self.trusted)
            .field("profile", &self.load.profile())
            .finish_non_exhaustive()
    }
}

/// Builds an [`Installer`].
#[must_use]
pub struct InstallerBuilder {
    installer: Installer,
}

impl InstallerBuilder {
    /// Scans with `scanner` instead of the default `skills_security::scan::Scanner`.
    pub fn scanner(mut self, scanner: Arc<dyn PackageScanner>) -> Self {
        self.installer.scanner = scanner;
        self
    }

    /// Sources whose skills are `verified` (default: seed 000's list).
    pub fn trusted_sources(mut self, trusted: TrustedSources) -> Self {
        self.installer.trusted = trusted;
        self
    }

    /// The clock audit records are stamped with (default: the system clock).
    pub fn clock(mut self, clock: Arc<dyn Clock>) -> Self {
        self.installer.clock = clock;
        self
    }

    /// Appends audit records through this trail (default: a trail over the audit store).
    pub fn audit_trail(mut self, trail: AuditTrail) -> Self {
        self.installer.audit = trail;
        self
    }

    /// Validation options (default: the Spec profile's).
    pub fn load_options(mut self, load: LoadOptions) -> Self {
        self.installer.load = load;
        self
    }

    /// The limits the skill store enforces (default: the store defaults), checked during
    /// validation so an unstorable package is reported, not half-written.
    pub fn store_limits(mut self, limits: StoreLimits) -> Self {
        self.installer.limits = limits;
        self
    }

    /// The installer.
    pub fn build(self) -> Installer {
        self.installer
    }
}

impl Installer {
    /// An installer over these stores, with the default scanner, trusted sources, clock and
    /// Spec-profile validation.
    pub fn builder(
        skills: Arc<dyn SkillStore>,
        packages: Arc<dyn PackageStore>,
        audit: Arc<dyn AuditStore>,
    ) -> InstallerBuilder {
        InstallerBuilder {
            installer: Installer {
                skills,
                packages,
                audit: AuditTrail::new(audit),
                scanner: Arc::new(Scanner::new()),
                trusted: TrustedSources::default(),
                clock: Arc::new(SystemClock),
                load: LoadOptions::for_profile(Profile::Spec),
                limits: StoreLimits::default(),
            },
        }
    }

    /// Fetches `request.locator` from `source` and installs it.
    pub async fn install(
        &self,
        scope: &UserScope,
        source: &dyn SkillSource,
        request: &InstallRequest,
    ) -> Result<Installed> {
        let package = source
            .fetch(&request.locator, request.version.as_deref())
            .await?;
        self.install_package(scope, &package, request).await
    }

    /// Installs a package already fetched.
    pub async fn install_package(
        &self,
        scope: &UserScope,
        package: &SkillPackage,
        request: &InstallRequest,
    ) -> Result<Installed> {
        let prepared = prepare::prepare(package, request, self)?;
        let tenant = &scope.tenant;
        let slug = prepared.slug.clone();
        let existing = self
            .packages
            .find_package_by_name(tenant, &slug)
            .await
            .map_err(|e| Error::store("looking up the package", e))?;
        if existing.is_some() {
            return Err(Error::AlreadyInstalled { name: slug });
        }
        let taken = self
            .skills
            .find_skill_by_slug(tenant, &slug)
            .await
            .map_err(|e| Error::store("looking up the slug", e))?;
        if taken.is_some() {
            return Err(Error::SlugTaken { slug });
        }

        let approved = !prepared.needs_approval;
        let trust = prepared.trust;
        let nonce = new_id();
        let mut undo = Undo::new(self, tenant);

        let skill = match self
            .skills
            .create_skill(tenant, new_skill(&prepared, approved, &nonce))
            .await
        {
            Ok(skill) => skill,
            Err(e) => {
                let error = Error::store("creating the skill", e);
                return Err(self.orphan_skill(tenant, &slug, &nonce, error).await);
            }
        };
        undo.push(Step::CreatedSkill {
            id: skill.id.clone(),
        });

        let mut new_package = NewPackage::new(
            skill.id.clone(),
            slug.clone(),
            record::package_source(&prepared),
            trust.as_str(),
            record::new_version(&prepared, approved, scope),
        );
        new_package.installed_by = Some(scope.user.clone());
        let (package_record, version) =
            match self.packages.create_package(tenant, new_package).await {
                Ok(created) => created,
                Err(e) => {
                    let error = Error::store("creating the package", e);
                    let error = self.orphan_package(tenant, &skill.id, error).await;
                    return Err(undo.rollback(error).await);
                }
            };
        undo.push(Step::CreatedPackage {
            id: package_record.id.clone(),
        });

        let facts = AuditFacts {
            action: Action::Install,
            skill_id: &skill.id,
            skill_path: &prepared.source.trust_path,
            trust: trust.as_str(),
            version: Some(&prepared.version),
            digest: &prepared.digest,
            flags: record::flags(&prepared, approved),
        };
        let sequence = match self.audit(scope, facts).await {
            Ok(sequence) => sequence,
            Err(e) => return Err(undo.rollback(e).await),
        };
        // Only now, audited, may it run: a crash before this leaves a disabled skill.
        let skill = if approved {
            self.enable_installed(tenant, skill).await?
        } else {
            skill
        };
        Ok(Installed {
            skill,
            package: package_record,
            version,
            trust_level: trust,
            report: prepared.report,
            digest: prepared.digest,
            needs_approval: !approved,
            warnings: prepared.warnings,
            audit_sequence: sequence,
        })
    }

    /// Enables a just-installed, audited skill. A failed call whose write landed anyway (only
    /// its answer was lost) counts as done; otherwise the install stands, disabled.
    async fn enable_installed(&self, tenant: &TenantId, skill: SkillRecord) -> Result<SkillRecord> {
        let enable = SkillUpdate {
            enabled: Some(true),
            ..SkillUpdate::default()
        };
        let error = match self.skills.update_skill(tenant, &skill.id, enable).await {
            Ok(Some(enabled)) => return Ok(enabled),
            Ok(None) => skills_store_traits::Error::not_found("skill", skill.id.clone()),
            Err(e) => e,
        };
        match self.skills.find_skill_by_id(tenant, &skill.id).await {
            Ok(Some(landed)) if landed.enabled => Ok(landed),
            _ => Err(Error::store(
                "enabling the installed skill (installed and audited, left disabled)",
                error,
            )),
        }
    }

    /// Appends one audit record; its sequence number. The append is the operation's commit
    /// point: when it fails, the record is looked up by id, and if it landed (only its
    /// acknowledgement was lost) the operation stands.
    pub(crate) async fn audit(&self, scope: &UserScope, facts: AuditFacts<'_>) -> Result<u64> {
        let record = record::audit_record(scope, self.clock.now(), facts);
        self.append(scope, record).await
    }

    /// Appends `record` as [`Installer::audit`] does (the commit point, its landing checked
    /// when the append fails).
    pub(crate) async fn append(
        &self,
        scope: &UserScope,
        record: skills_store_traits::audit::AuditRecord,
    ) -> Result<u64> {
        let id = record.id.clone();
        match self.audit.append(&scope.tenant, record).await {
            Ok(entry) => Ok(entry.sequence),
            Err(error) => match self.audit.store().get_entry(&scope.tenant, &id).await {
                Ok(Some(entry)) => Ok(entry.sequence),
                _ => Err(Error::Audit(error)),
            },
        }
    }

    /// After a failed `create_skill` whose outcome is unknown (the write may have landed
    /// and only its answer been lost): deletes the skill with this slug if, and only if, it
    /// carries this install's nonce.
    async fn orphan_skill(
        &self,
        tenant: &TenantId,
        slug: &str,
        nonce: &str,
        error: Error,
    ) -> Error {
        match self.skills.find_skill_by_slug(tenant, slug).await {
            Ok(Some(skill)) if record::nonce_of(&skill.metadata) == Some(nonce) => {
                match self.skills.delete_skill(tenant, &skill.id).await {
                    Ok(_) => error,
                    Err(e) => compensation(error, format!("skill {} ({e})", skill.id)),
                }
            }
            Ok(_) => error,
            Err(e) => compensation(error, format!("possibly a skill with slug {slug} ({e})")),
        }
    }

    /// After a failed `create_package` whose outcome is unknown: deletes the package that
    /// names this install's new skill, if one was written.
    async fn orphan_package(&self, tenant: &TenantId, skill_id: &str, error: Error) -> Error {
        match self.packages.find_package_by_skill(tenant, skill_id).await {
            Ok(Some(package)) => match self.packages.delete_package(tenant, &package.id).await {
                Ok(_) => error,
                Err(e) => compensation(error, format!("package {} ({e})", package.id)),
            },
            Ok(None) => error,
            Err(e) => compensation(
                error,
                format!("possibly a package for skill {skill_id} ({e})"),
            ),
        }
    }
}

fn compensation(original: Error, leftover: String) -> Error {
    Error::Compensation {
        original: Box::new(original),
        leftovers: vec![leftover],
    }
}

/// The skill an install creates: always disabled, so that nothing can run it before the
/// install's audit record exists; [`Installer::install_package`] enables it after.
fn new_skill(prepared: &Prepared, approved: bool, nonce: &str) -> NewSkill {
    let mut skill = NewSkill::new(
        prepared.slug.clone(),
        prepared.slug.clone(),
        prepared.content.clone(),
    );
    skill.description = Some(prepared.description.clone());
    skill.version = Some(prepared.version.clone());
    skill.requires_tools = prepared.requires_tools.clone();
    skill.source_kind = Some(SkillSourceKind::Admin);
    skill.enabled = Some(false);
    skill.metadata = record::metadata(prepared, prepared.trust, approved, nonce);
    // The trust the install decided is the trust the skill runs at, everywhere.
    skill.trust_level = Some(prepared.trust.as_str().to_owned());
    skill.files = record::skill_files(&prepared.files);
    skill.is_directory = !skill.files.is_empty();
    skill
}

/// The `install` metadata of a stored skill, when it was installed from a package.
pub fn install_metadata(skill: &SkillRecord) -> Option<&Value> {
    skill.metadata.get(INSTALL_METADATA_KEY)
}
