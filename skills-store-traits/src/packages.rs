//! Installed skill packages: where a skill came from, every version it has had, which one is
//! current, and what users think of them (issue 9; seed 003's `MarketplaceExtension`,
//! `ExtensionVersion` and `ExtensionInstallation`, folded into one tenant-scoped record).
//!
//! A package is the install-time history of one stored skill ([`PackageRecord::skill_id`]):
//! each version keeps its full text content, its digests and its scan report, so a rollback
//! can restore exactly what was scanned and approved. Choosing the current version is a
//! compare-and-set ([`PackageStore::set_current_version`]), so two concurrent upgrades
//! cannot both win.
//!
//! Threat: a version whose stored content differs from what was digested and scanned (a
//! caller bug, or content swapped between scan and store), a path in a package that escapes
//! the skill directory on restore, and one tenant reading or changing another's packages.
//! Guarantee: every stored file's content matches its entry in
//! [`PackageVersionRecord::file_digests`] (checked on write), every path passes the relative
//! path rules of `skills-core`, and every call sees only the caller's tenant. The
//! conformance suite attacks all three.

use std::cmp::Ordering;
use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::{Error, Result, Violation};
use crate::tenancy::{TenantId, UserId, UserScope};
use crate::time::Timestamp;
use crate::validate::{StoreLimits, check_name, check_slug};

/// The most files in one package version (skills-core's default walk limit).
pub const MAX_PACKAGE_FILES: usize = 2_000;
/// The most entries in a version's `scripts` or `permissions`.
pub const MAX_PACKAGE_LIST: usize = 2_000;
/// The fewest and most stars a rating may give.
pub const STARS: std::ops::RangeInclusive<u8> = 1..=5;

/// Where a package was installed from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct PackageSource {
    /// The kind of source (`local`, `archive`, `git`, `npm`, ...): `^[a-z][a-z0-9-]*$`.
    pub kind: String,
    /// Where in that source (a directory, an archive path, a repository URL and ref, a
    /// package name); non-empty.
    pub locator: String,
}

impl PackageSource {
    /// A source.
    pub fn new(kind: impl Into<String>, locator: impl Into<String>) -> Self {
        PackageSource {
            kind: kind.into(),
            locator: locator.into(),
        }
    }

    fn validate(&self) -> Result<()> {
        check_slug("source.kind", &self.kind)?;
        if self.locator.is_empty() {
            return Err(Error::invalid("source.locator", Violation::Empty));
        }
        Ok(())
    }
}

/// An installed package: one per stored skill, unique by name and by skill in its tenant.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct PackageRecord {
    /// The package's id (assigned by the store).
    pub id: String,
    /// The tenant.
    pub tenant: TenantId,
    /// The stored skill (a `SkillRecord` id) this package installed.
    pub skill_id: String,
    /// The skill's name, unique in the tenant.
    pub name: String,
    /// Where it came from.
    pub source: PackageSource,
    /// The current version (one of its [`PackageVersionRecord`]s).
    pub current_version: String,
    /// The trust level assigned at install or upgrade (`verified`, `user`, `community`, ...).
    pub trust_level: String,
    /// The current version's digest (copied from it whenever the current version changes).
    pub digest: String,
    /// The current version's scanner verdict (copied likewise).
    pub verdict: String,
    /// Who installed it.
    pub installed_by: Option<UserId>,
    /// When it was installed.
    pub created_at: Timestamp,
    /// When it last changed (a new current version, a new trust level).
    pub updated_at: Timestamp,
}

/// One file of a package version, with its full text content.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct PackageFile {
    /// The path relative to the skill directory (`SKILL.md` included).
    pub path: String,
    /// The content (text; NUL bytes are refused).
    pub content: String,
}

impl PackageFile {
    /// A file.
    pub fn new(path: impl Into<String>, content: impl Into<String>) -> Self {
        PackageFile {
            path: path.into(),
            content: content.into(),
        }
    }
}

/// One version of a package, as it was stored.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct PackageVersionRecord {
    /// The version's id (assigned by the store).
    pub id: String,
    /// The package.
    pub package_id: String,
    /// The semantic version, unique within the package.
    pub version: String,
    /// The package digest (`sha256:<hex>`).
    pub digest: String,
    /// The scanner's verdict on this version (`clean`, `review`, `block`, ...).
    pub verdict: String,
    /// `sha256:<hex>` per path: every stored file, plus any file the package had that is not
    /// stored (a binary the installer dropped).
    pub file_digests: BTreeMap<String, String>,
    /// The files, in the order given.
    pub files: Vec<PackageFile>,
    /// The scripts the version ships (relative paths).
    pub scripts: Vec<String>,
    /// The permissions it requests.
    pub permissions: Vec<String>,
    /// The scanner's report, verbatim (shape owned by `skills-install`).
    pub scan_report: Value,
    /// Who published it.
    pub publisher: Option<String>,
    /// What changed.
    pub changelog: Option<String>,
    /// The deprecation message, when the version is deprecated.
    pub deprecated: Option<String>,
    /// Whether its scripts and permissions were approved.
    pub approved: bool,
    /// When it was stored.
    pub created_at: Timestamp,
    /// Who stored it.
    pub created_by: Option<UserId>,
}

/// A version to store; the store assigns the id and time.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct NewPackageVersion {
    /// The semantic version (canonical form, see [`check_version`]).
    pub version: String,
    /// The package digest (`sha256:<hex>`).
    pub digest: String,
    /// The scanner's verdict (non-empty).
    pub verdict: String,
    /// `sha256:<hex>` per path; must hold every file of `files` with its content's digest.
    pub file_digests: BTreeMap<String, String>,
    /// The files (paths unique and relative, text content within the limits).
    pub files: Vec<PackageFile>,
    /// The scripts it ships (relative paths).
    pub scripts: Vec<String>,
    /// The permissions it requests (no empty entries).
    pub permissions: Vec<String>,
    /// The scanner's report (at most the per-skill byte limit as JSON text).
    pub scan_report: Value,
    /// Who published it (non-empty when given).
    pub publisher: Option<String>,
    /// What changed (at most the per-file byte limit).
    pub changelog: Option<String>,
    /// Whether its scripts and permissions are approved.
    pub approved: bool,
    /// Who stores it.
    pub created_by: Option<UserId>,
}

impl NewPackageVersion {
    /// A version of `files` with their digests computed ([`file_digest`]), the package
    /// digest taken from `digest`, verdict `verdict`, no scripts, permissions or report,
    /// not approved.
    pub fn new(
        version: impl Into<String>,
        digest: impl Into<String>,
        verdict: impl Into<String>,
        files: Vec<PackageFile>,
    ) -> Self {
        let file_digests = files
            .iter()
            .map(|file| (file.path.clone(), file_digest(&file.content)))
            .collect();
        NewPackageVersion {
            version: version.into(),
            digest: digest.into(),
            verdict: verdict.into(),
            file_digests,
            files,
            scripts: Vec::new(),
            permissions: Vec::new(),
            scan_report: Value::Null,
            publisher: None,
            changelog: None,
            approved: false,
            created_by: None,
        }
    }

    /// Checks the version as [`PackageStore::add_version`] does (everything but uniqueness).
    pub fn validate(&self, limits: &StoreLimits) -> Result<()> {
        check_version("version", &self.version)?;
        check_digest("digest", &self.digest)?;
        check_word("verdict", &self.verdict)?;
        self.check_files(limits)?;
        check_count("scripts", self.scripts.len(), MAX_PACKAGE_LIST)?;
        for (index, script) in self.scripts.iter().enumerate() {
            check_path(&format!("scripts[{index}]"), script)?;
        }
        check_count("permissions", self.permissions.len(), MAX_PACKAGE_LIST)?;
        if let Some(index) = self.permissions.iter().position(String::is_empty) {
            return Err(Error::invalid(
                format!("permissions[{index}]"),
                Violation::Empty,
            ));
        }
        let report_bytes = self.scan_report.to_string().len() as u64;
        check_size("scan_report", report_bytes, limits.max_skill_bytes)?;
        if self.publisher.as_ref().is_some_and(String::is_empty) {
            return Err(Error::invalid("publisher", Violation::Empty));
        }
        if let Some(changelog) = &self.changelog {
            check_size("changelog", changelog.len() as u64, limits.max_file_bytes)?;
        }
        Ok(())
    }

    fn check_files(&self, limits: &StoreLimits) -> Result<()> {
        check_count("files", self.files.len(), MAX_PACKAGE_FILES)?;
        let mut seen = BTreeSet::new();
        let mut total: u64 = 0;
        for (index, file) in self.files.iter().enumerate() {
            let field = format!("files[{index}]");
            check_path(&format!("{field}.path"), &file.path)?;
            if !seen.insert(file.path.as_str()) {
                return Err(Error::invalid(
                    format!("{field}.path"),
                    Violation::DuplicatePath,
                ));
            }
            if file.content.as_bytes().contains(&0) {
                return Err(Error::invalid(
                    format!("{field}.content"),
                    Violation::Binary,
                ));
            }
            let bytes = file.content.len() as u64;
            if bytes > limits.max_file_bytes {
                return Err(Error::invalid(
                    format!("{field}.content"),
                    Violation::FileTooLarge {
                        bytes,
                        limit: limits.max_file_bytes,
                    },
                ));
            }
            total = total.saturating_add(bytes);
            let recorded = self.file_digests.get(&file.path);
            if recorded != Some(&file_digest(&file.content)) {
                return Err(Error::invalid(
                    format!("file_digests[{}]", file.path),
                    Violation::DigestMismatch,
                ));
            }
        }
        if total > limits.max_skill_bytes {
            return Err(Error::invalid(
                "files",
                Violation::SkillTooLarge {
                    bytes: total,
                    limit: limits.max_skill_bytes,
                },
            ));
        }
        check_count("file_digests", self.file_digests.len(), MAX_PACKAGE_FILES)?;
        for (path, digest) in &self.file_digests {
            check_path(&format!("file_digests[{path}]"), path)?;
            check_digest(&format!("file_digests[{path}]"), digest)?;
        }
        Ok(())
    }

    /// The record this version becomes, stamped `now` with `id`, in `package_id`.
    pub fn into_record(
        self,
        id: String,
        package_id: impl Into<String>,
        now: Timestamp,
    ) -> PackageVersionRecord {
        PackageVersionRecord {
            id,
            package_id: package_id.into(),
            version: self.version,
            digest: self.digest,
            verdict: self.verdict,
            file_digests: self.file_digests,
            files: self.files,
            scripts: self.scripts,
            permissions: self.permissions,
            scan_report: self.scan_report,
            publisher: self.publisher,
            changelog: self.changelog,
            deprecated: None,
            approved: self.approved,
            created_at: now,
            created_by: self.created_by,
        }
    }
}

/// A package to install, with its first version (which becomes current).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct NewPackage {
    /// The stored skill it installed (non-empty, unique in the tenant).
    pub skill_id: String,
    /// The skill's name (1 to 128 characters, unique in the tenant).
    pub name: String,
    /// Where it came from.
    pub source: PackageSource,
    /// The trust level assigned (non-empty).
    pub trust_level: String,
    /// Who installs it.
    pub installed_by: Option<UserId>,
    /// The first version.
    pub version: NewPackageVersion,
}

impl NewPackage {
    /// A package installed by nobody in particular.
    pub fn new(
        skill_id: impl Into<String>,
        name: impl Into<String>,
        source: PackageSource,
        trust_level: impl Into<String>,
        version: NewPackageVersion,
    ) -> Self {
        NewPackage {
            skill_id: skill_id.into(),
            name: name.into(),
            source,
            trust_level: trust_level.into(),
            installed_by: None,
            version,
        }
    }

    /// Checks the package as [`PackageStore::create_package`] does (everything but
    /// uniqueness); the first version's fields are named `version.<field>`.
    pub fn validate(&self, limits: &StoreLimits) -> Result<()> {
        if self.skill_id.is_empty() {
            return Err(Error::invalid("skill_id", Violation::Empty));
        }
        check_name("name", &self.name)?;
        self.source.validate()?;
        check_word("trust_level", &self.trust_level)?;
        self.version.validate(limits).map_err(|error| match error {
            Error::Invalid { field, violation } => Error::Invalid {
                field: format!("version.{field}"),
                violation,
            },
            other => other,
        })
    }

    /// The package record and its first version, stamped `now` with the given ids.
    pub fn into_records(
        self,
        tenant: &TenantId,
        package_id: String,
        version_id: String,
        now: Timestamp,
    ) -> (PackageRecord, PackageVersionRecord) {
        let version = self
            .version
            .into_record(version_id, package_id.clone(), now);
        let package = PackageRecord {
            id: package_id,
            tenant: tenant.clone(),
            skill_id: self.skill_id,
            name: self.name,
            source: self.source,
            current_version: version.version.clone(),
            trust_level: self.trust_level,
            digest: version.digest.clone(),
            verdict: version.verdict.clone(),
            installed_by: self.installed_by,
            created_at: now,
            updated_at: now,
        };
        (package, version)
    }
}

/// What else changes when the current version does; `None` leaves a field alone. The
/// digest and verdict always follow the new current version.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct PackageUpdate {
    /// A new trust level (non-empty).
    pub trust_level: Option<String>,
    /// A new source (an upgrade from another ref or registry).
    pub source: Option<PackageSource>,
}

impl PackageUpdate {
    /// No changes besides the version.
    pub fn new() -> Self {
        PackageUpdate::default()
    }

    /// Sets the trust level.
    pub fn trust_level(mut self, trust_level: impl Into<String>) -> Self {
        self.trust_level = Some(trust_level.into());
        self
    }

    /// Sets the source.
    pub fn source(mut self, source: PackageSource) -> Self {
        self.source = Some(source);
        self
    }

    /// Checks the update as [`PackageStore::set_current_version`] does.
    pub fn validate(&self) -> Result<()> {
        if let Some(trust_level) = &self.trust_level {
            check_word("trust_level", trust_level)?;
        }
        if let Some(source) = &self.source {
            source.validate()?;
        }
        Ok(())
    }

    /// Makes `version` the current version of `package` at `now`, with this update.
    pub fn apply_to(
        self,
        package: &mut PackageRecord,
        version: &PackageVersionRecord,
        now: Timestamp,
    ) {
        package.current_version = version.version.clone();
        package.digest = version.digest.clone();
        package.verdict = version.verdict.clone();
        if let Some(trust_level) = self.trust_level {
            package.trust_level = trust_level;
        }
        if let Some(source) = self.source {
            package.source = source;
        }
        package.updated_at = now;
    }
}

/// How many ratings and their mean.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct RatingSummary {
    /// How many ratings.
    pub count: u64,
    /// Their mean in stars; 0 when there are none.
    pub mean: f64,
}

impl RatingSummary {
    /// The summary of `count` ratings totalling `total` stars (how every backend computes
    /// it, so the means agree to the bit).
    pub fn from_total(count: u64, total: u64) -> Self {
        let mean = if count == 0 {
            0.0
        } else {
            total as f64 / count as f64
        };
        RatingSummary { count, mean }
    }
}

/// `sha256:` and the lowercase hex SHA-256 of `content`: a file's entry in
/// [`PackageVersionRecord::file_digests`].
pub fn file_digest(content: &str) -> String {
    format!("sha256:{}", crate::validate::checksum(content))
}

/// Checks a version: a canonical semantic version (its parsed form prints back the same).
pub fn check_version(field: &str, version: &str) -> Result<semver::Version> {
    match semver::Version::parse(version) {
        Ok(parsed) if parsed.to_string() == version => Ok(parsed),
        _ => Err(Error::invalid(field, Violation::Version)),
    }
}

/// Checks a digest: `sha256:` and 64 lowercase hex digits.
pub fn check_digest(field: &str, digest: &str) -> Result<()> {
    let ok = digest.strip_prefix("sha256:").is_some_and(|hex| {
        hex.len() == 64
            && hex
                .bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
    });
    if !ok {
        return Err(Error::invalid(field, Violation::DigestFormat));
    }
    Ok(())
}

/// Checks stars: 1 to 5.
pub fn check_stars(stars: u8) -> Result<()> {
    if !STARS.contains(&stars) {
        return Err(Error::invalid(
            "stars",
            Violation::OutOfRange { expected: "1 to 5" },
        ));
    }
    Ok(())
}

/// The order of [`PackageStore::list_versions`]: semantic-version precedence, then (for
/// versions differing only in build metadata) the version text bytewise. Versions that do
/// not parse (never stored by a conforming backend) sort last, by text.
pub fn version_order(a: &str, b: &str) -> Ordering {
    match (semver::Version::parse(a), semver::Version::parse(b)) {
        (Ok(x), Ok(y)) => x.cmp_precedence(&y).then_with(|| a.cmp(b)),
        (Ok(_), Err(_)) => Ordering::Less,
        (Err(_), Ok(_)) => Ordering::Greater,
        (Err(_), Err(_)) => a.cmp(b),
    }
}

fn check_path(field: &str, path: &str) -> Result<()> {
    skills_core::files::check_relative_path(path)
        .map_err(|problem| Error::invalid(field, Violation::Path(problem)))
}

fn check_word(field: &str, word: &str) -> Result<()> {
    if word.is_empty() {
        return Err(Error::invalid(field, Violation::Empty));
    }
    Ok(())
}

fn check_count(field: &str, count: usize, limit: usize) -> Result<()> {
    if count > limit {
        return Err(Error::invalid(field, Violation::TooMany { count, limit }));
    }
    Ok(())
}

fn check_size(field: &str, bytes: u64, limit: u64) -> Result<()> {
    if bytes > limit {
        return Err(Error::invalid(field, Violation::TooLarge { bytes, limit }));
    }
    Ok(())
}

/// The message of a deprecation: `None` un-deprecates; `Some` must not be empty.
pub fn check_deprecation(message: Option<&str>) -> Result<()> {
    if message.is_some_and(str::is_empty) {
        return Err(Error::invalid("message", Violation::Empty));
    }
    Ok(())
}

/// Installed packages, their versions and ratings, per tenant.
///
/// ```
/// use skills_store_traits::packages::{
///     NewPackage, NewPackageVersion, PackageFile, PackageSource, PackageUpdate, file_digest,
/// };
/// use skills_store_traits::{PackageStore, TenantId, UserScope, in_memory::InMemoryPackageStore};
///
/// # futures::executor::block_on(async {
/// let store = InMemoryPackageStore::new();
/// let acme = TenantId::new("acme");
/// let files = |body: &str| vec![PackageFile::new("SKILL.md", body)];
/// let v1 = NewPackageVersion::new("1.0.0", file_digest("v1"), "clean", files("# v1\n"));
/// let source = PackageSource::new("git", "git.example/acme/pdf#v1.0.0");
/// let (package, _) = store
///     .create_package(&acme, NewPackage::new("skill-1", "pdf", source, "community", v1))
///     .await?;
///
/// // Upgrade: store 1.1.0, then move the current version from 1.0.0 (compare-and-set).
/// let v2 = NewPackageVersion::new("1.1.0", file_digest("v2"), "clean", files("# v2\n"));
/// store.add_version(&acme, &package.id, v2).await?;
/// let upgraded = store
///     .set_current_version(&acme, &package.id, "1.1.0", "1.0.0", PackageUpdate::new())
///     .await?;
/// assert_eq!(upgraded.current_version, "1.1.0");
///
/// // Rollback is the same call the other way; the old content is all there.
/// let old = store.get_version(&acme, &package.id, "1.0.0").await?.unwrap();
/// assert_eq!(old.files[0].content, "# v1\n");
///
/// store.rate(&UserScope::new("acme", "alice"), &package.id, "1.1.0", 5).await?;
/// assert_eq!(store.rating_summary(&acme, &package.id, None).await?.count, 1);
/// // Another tenant sees nothing.
/// assert_eq!(store.get_package(&TenantId::new("other"), &package.id).await?, None);
/// # Ok::<(), skills_store_traits::Error>(())
/// # }).unwrap();
/// ```
#[async_trait::async_trait]
pub trait PackageStore: Send + Sync {
    /// Stores a package and its first version, which becomes current (validated by
    /// [`NewPackage::validate`] with the store's limits); [`Error::Conflict`] when the
    /// tenant already has a package of this name or this skill.
    async fn create_package(
        &self,
        tenant: &TenantId,
        package: NewPackage,
    ) -> Result<(PackageRecord, PackageVersionRecord)>;

    /// The tenant's package with this id.
    async fn get_package(&self, tenant: &TenantId, id: &str) -> Result<Option<PackageRecord>>;

    /// The tenant's package with this name.
    async fn find_package_by_name(
        &self,
        tenant: &TenantId,
        name: &str,
    ) -> Result<Option<PackageRecord>>;

    /// The tenant's package that installed this skill.
    async fn find_package_by_skill(
        &self,
        tenant: &TenantId,
        skill_id: &str,
    ) -> Result<Option<PackageRecord>>;

    /// The tenant's packages, by name (bytewise).
    async fn list_packages(&self, tenant: &TenantId) -> Result<Vec<PackageRecord>>;

    /// Stores another version of the package (validated by [`NewPackageVersion::validate`]);
    /// the current version does not change. [`Error::Conflict`] when the version exists,
    /// [`Error::NotFound`] when the tenant has no such package.
    async fn add_version(
        &self,
        tenant: &TenantId,
        package_id: &str,
        version: NewPackageVersion,
    ) -> Result<PackageVersionRecord>;

    /// One version of the tenant's package.
    async fn get_version(
        &self,
        tenant: &TenantId,
        package_id: &str,
        version: &str,
    ) -> Result<Option<PackageVersionRecord>>;

    /// Every version of the tenant's package in [`version_order`]; [`Error::NotFound`] when
    /// the tenant has no such package.
    async fn list_versions(
        &self,
        tenant: &TenantId,
        package_id: &str,
    ) -> Result<Vec<PackageVersionRecord>>;

    /// Makes `version` current (an upgrade or a rollback) if the current version is still
    /// `expected_current`, applying `update` (validated by [`PackageUpdate::validate`]); the
    /// package's digest and verdict become the version's. Checks in this order:
    /// [`Error::NotFound`] for the package, then for the version, then [`Error::Stale`] when
    /// the current version is not `expected_current`. Deprecated or unapproved versions are
    /// accepted: that policy belongs to the caller. `version == expected_current` changes
    /// only what `update` sets.
    async fn set_current_version(
        &self,
        tenant: &TenantId,
        package_id: &str,
        version: &str,
        expected_current: &str,
        update: PackageUpdate,
    ) -> Result<PackageRecord>;

    /// Deprecates a version with `message`, or un-deprecates it with `None` (checked by
    /// [`check_deprecation`]); [`Error::NotFound`] for a missing package or version.
    async fn deprecate_version(
        &self,
        tenant: &TenantId,
        package_id: &str,
        version: &str,
        message: Option<String>,
    ) -> Result<PackageVersionRecord>;

    /// Records whether a version's scripts and permissions are approved; [`Error::NotFound`]
    /// for a missing package or version.
    async fn set_version_approved(
        &self,
        tenant: &TenantId,
        package_id: &str,
        version: &str,
        approved: bool,
    ) -> Result<PackageVersionRecord>;

    /// Deletes the tenant's package with its versions and ratings; `false` when there was
    /// none.
    async fn delete_package(&self, tenant: &TenantId, id: &str) -> Result<bool>;

    /// Deletes one version of the tenant's package with its ratings; `false` when there was
    /// none. Refuses with [`Error::Conflict`] to delete the current version (delete the
    /// package instead), and reports [`Error::NotFound`] when the tenant has no such
    /// package, as the other version calls do. Checks and deletes in one atomic step, so of
    /// concurrent deletes of one version exactly one returns `true`, and a version cannot
    /// become current while it is being deleted. Lets an installer undo an
    /// [`add_version`](PackageStore::add_version) whose operation failed later.
    async fn delete_version(
        &self,
        tenant: &TenantId,
        package_id: &str,
        version: &str,
    ) -> Result<bool>;

    /// The user's rating of one version (checked by [`check_stars`] first); rating again
    /// replaces the user's earlier rating of that version. [`Error::NotFound`] for a missing
    /// package or version in the user's tenant.
    async fn rate(
        &self,
        scope: &UserScope,
        package_id: &str,
        version: &str,
        stars: u8,
    ) -> Result<()>;

    /// The ratings of one version, or with `None` of every version of the package (computed
    /// with [`RatingSummary::from_total`]); [`Error::NotFound`] for a missing package or
    /// version.
    async fn rating_summary(
        &self,
        tenant: &TenantId,
        package_id: &str,
        version: Option<&str>,
    ) -> Result<RatingSummary>;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_are_canonical_and_ordered_by_precedence() {
        for good in ["0.0.0", "1.2.3", "1.0.0-rc.1", "1.0.0+build.5", "10.20.30"] {
            assert!(check_version("version", good).is_ok(), "{good}");
        }
        for bad in ["", "1", "1.2", "v1.2.3", "01.2.3", "1.2.3 ", "1.2.3-", "x"] {
            assert_eq!(
                check_version("version", bad).unwrap_err().violation(),
                Some(&Violation::Version),
                "{bad:?}"
            );
        }
        let mut versions = vec![
            "1.0.0",
            "1.0.0-rc.1",
            "0.9.0",
            "1.0.0+b",
            "1.0.0+a",
            "1.0.0-alpha",
            "1.10.0",
            "1.2.0",
        ];
        versions.sort_by(|a, b| version_order(a, b));
        assert_eq!(
            versions,
            [
                "0.9.0",
                "1.0.0-alpha",
                "1.0.0-rc.1",
                "1.0.0",
                "1.0.0+a",
                "1.0.0+b",
                "1.2.0",
                "1.10.0"
            ]
        );
    }

    #[test]
    fn digests_and_stars() {
        assert!(check_digest("d", &file_digest("x")).is_ok());
        for bad in [
            "",
            "sha256:",
            "sha1:00",
            &format!("sha256:{}", "A".repeat(64)),
            &format!("sha256:{}", "a".repeat(63)),
        ] {
            assert!(check_digest("d", bad).is_err(), "{bad:?}");
        }
        assert!(check_stars(0).is_err() && check_stars(6).is_err());
        assert!(STARS.clone().all(|s| check_stars(s).is_ok()));
        assert_eq!(RatingSummary::from_total(0, 0).mean, 0.0);
        assert_eq!(RatingSummary::from_total(2, 9).mean, 4.5);
    }

    #[test]
    fn a_file_whose_digest_disagrees_is_refused_with_its_path() {
        let limits = StoreLimits::default();
        let files = vec![PackageFile::new("SKILL.md", "# a\n")];
        let mut version = NewPackageVersion::new("1.0.0", file_digest("p"), "clean", files);
        assert!(version.validate(&limits).is_ok());
        version.files[0].content.push('!');
        let err = version.validate(&limits).unwrap_err();
        assert!(
            matches!(&err, Error::Invalid { field, violation: Violation::DigestMismatch } if field == "file_digests[SKILL.md]"),
            "{err:?}"
        );
    }
    mod properties {
        use proptest::prelude::*;

        use super::*;

        fn version_text() -> impl Strategy<Value = String> {
            let pre = prop::option::of(prop::sample::select(vec![
                "alpha", "alpha.1", "beta", "rc.1", "rc.2", "1", "10",
            ]));
            let build =
                prop::option::of(prop::sample::select(vec!["b", "b.2", "b.10", "001", "x-y"]));
            (0u64..3, 0u64..12, 0u64..3, pre, build).prop_map(
                |(major, minor, patch, pre, build)| {
                    let mut text = format!("{major}.{minor}.{patch}");
                    if let Some(pre) = pre {
                        text.push('-');
                        text.push_str(pre);
                    }
                    if let Some(build) = build {
                        text.push('+');
                        text.push_str(build);
                    }
                    text
                },
            )
        }

        fn safe_path() -> impl Strategy<Value = String> {
            prop::collection::vec("[a-z0-9_-]{1,8}", 1..4).prop_map(|parts| parts.join("/"))
        }

        proptest! {
            /// `version_order` is a total order that refines semantic-version precedence and
            /// ties only identical texts, so every backend lists versions identically.
            #[test]
            fn version_order_refines_precedence(a in version_text(), b in version_text()) {
                let (x, y) = (check_version("v", &a).unwrap(), check_version("v", &b).unwrap());
                let order = version_order(&a, &b);
                prop_assert_eq!(order, version_order(&b, &a).reverse());
                prop_assert_eq!(order == Ordering::Equal, a == b);
                if x.cmp_precedence(&y) != Ordering::Equal {
                    prop_assert_eq!(order, x.cmp_precedence(&y));
                }
            }

            /// Changing any byte of any stored file after its digest was taken is refused,
            /// naming that file.
            #[test]
            fn tampered_content_is_always_refused(
                files in prop::collection::btree_map(safe_path(), "[ -~]{0,40}", 1..6),
                pick in any::<prop::sample::Index>(),
                extra in "[ -~]{1,4}",
            ) {
                let files: Vec<PackageFile> =
                    files.into_iter().map(|(path, content)| PackageFile::new(path, content)).collect();
                let mut version = NewPackageVersion::new("1.0.0", file_digest("p"), "clean", files);
                let limits = StoreLimits::default();
                prop_assert!(version.validate(&limits).is_ok());
                let index = pick.index(version.files.len());
                version.files[index].content.push_str(&extra);
                let field = format!("file_digests[{}]", version.files[index].path);
                let err = version.validate(&limits).unwrap_err();
                prop_assert!(
                    matches!(&err, Error::Invalid { field: f, violation: Violation::DigestMismatch } if *f == field),
                    "{:?}", err
                );
            }
        }
    }
}
