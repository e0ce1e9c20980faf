//! The in-memory [`PackageStore`].

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, RwLock};

use crate::error::{Error, Result};
use crate::packages::{
    NewPackage, NewPackageVersion, PackageRecord, PackageStore, PackageUpdate,
    PackageVersionRecord, RatingSummary, check_deprecation, check_stars, version_order,
};
use crate::tenancy::{TenantId, UserId, UserScope};
use crate::time::{Clock, SystemClock, new_id};
use crate::validate::StoreLimits;

use super::lock;

/// Packages in memory, one map per tenant, each package with its versions and ratings, so
/// deleting a package drops both. Every call takes the one lock once, which makes each
/// compare-and-set atomic.
#[derive(Debug)]
pub struct InMemoryPackageStore {
    clock: Arc<dyn Clock>,
    limits: StoreLimits,
    tenants: RwLock<HashMap<TenantId, Tenant>>,
}

#[derive(Debug, Default)]
struct Tenant {
    packages: HashMap<String, StoredPackage>,
    by_name: BTreeMap<String, String>,
    by_skill: HashMap<String, String>,
}

#[derive(Debug)]
struct StoredPackage {
    record: PackageRecord,
    versions: HashMap<String, PackageVersionRecord>,
    /// Stars per (version, user).
    ratings: BTreeMap<(String, UserId), u8>,
}

impl InMemoryPackageStore {
    /// An empty store on the system clock with the default limits.
    pub fn new() -> Self {
        Self::with_clock(Arc::new(SystemClock))
    }

    /// An empty store stamping times from `clock`.
    pub fn with_clock(clock: Arc<dyn Clock>) -> Self {
        InMemoryPackageStore {
            clock,
            limits: StoreLimits::default(),
            tenants: RwLock::new(HashMap::new()),
        }
    }

    /// The store with other size limits.
    pub fn with_limits(mut self, limits: StoreLimits) -> Self {
        self.limits = limits;
        self
    }
}

impl Default for InMemoryPackageStore {
    fn default() -> Self {
        Self::new()
    }
}

fn package_not_found(id: &str) -> Error {
    Error::not_found("package", id)
}

fn version_not_found(package_id: &str, version: &str) -> Error {
    Error::not_found("package version", format!("{package_id}@{version}"))
}

impl Tenant {
    fn package_mut(&mut self, id: &str) -> Result<&mut StoredPackage> {
        self.packages
            .get_mut(id)
            .ok_or_else(|| package_not_found(id))
    }
}

impl StoredPackage {
    fn version_mut(&mut self, version: &str) -> Result<&mut PackageVersionRecord> {
        let package_id = &self.record.id;
        self.versions
            .get_mut(version)
            .ok_or_else(|| version_not_found(package_id, version))
    }
}

#[async_trait::async_trait]
impl PackageStore for InMemoryPackageStore {
    async fn create_package(
        &self,
        tenant: &TenantId,
        package: NewPackage,
    ) -> Result<(PackageRecord, PackageVersionRecord)> {
        package.validate(&self.limits)?;
        let now = self.clock.now();
        let mut tenants = lock::write(&self.tenants)?;
        let stored = tenants.entry(tenant.clone()).or_default();
        if stored.by_name.contains_key(&package.name) {
            return Err(Error::conflict("package name", package.name));
        }
        if stored.by_skill.contains_key(&package.skill_id) {
            return Err(Error::conflict("package skill", package.skill_id));
        }
        let (record, version) = package.into_records(tenant, new_id(), new_id(), now);
        stored
            .by_name
            .insert(record.name.clone(), record.id.clone());
        stored
            .by_skill
            .insert(record.skill_id.clone(), record.id.clone());
        stored.packages.insert(
            record.id.clone(),
            StoredPackage {
                record: record.clone(),
                versions: HashMap::from([(version.version.clone(), version.clone())]),
                ratings: BTreeMap::new(),
            },
        );
        Ok((record, version))
    }

    async fn get_package(&self, tenant: &TenantId, id: &str) -> Result<Option<PackageRecord>> {
        let tenants = lock::read(&self.tenants)?;
        Ok(tenants
            .get(tenant)
            .and_then(|t| t.packages.get(id))
            .map(|p| p.record.clone()))
    }

    async fn find_package_by_name(
        &self,
        tenant: &TenantId,
        name: &str,
    ) -> Result<Option<PackageRecord>> {
        let tenants = lock::read(&self.tenants)?;
        Ok(tenants.get(tenant).and_then(|t| {
            t.by_name
                .get(name)
                .and_then(|id| t.packages.get(id))
                .map(|p| p.record.clone())
        }))
    }

    async fn find_package_by_skill(
        &self,
        tenant: &TenantId,
        skill_id: &str,
    ) -> Result<Option<PackageRecord>> {
        let tenants = lock::read(&self.tenants)?;
        Ok(tenants.get(tenant).and_then(|t| {
            t.by_skill
                .get(skill_id)
                .and_then(|id| t.packages.get(id))
                .map(|p| p.record.clone())
        }))
    }

    async fn list_packages(&self, tenant: &TenantId) -> Result<Vec<PackageRecord>> {
        let tenants = lock::read(&self.tenants)?;
        Ok(tenants
            .get(tenant)
            .map(|t| {
                t.by_name
                    .values()
                    .filter_map(|id| t.packages.get(id))
                    .map(|p| p.record.clone())
                    .collect()
            })
            .unwrap_or_default())
    }

    async fn add_version(
        &self,
        tenant: &TenantId,
        package_id: &str,
        version: NewPackageVersion,
    ) -> Result<PackageVersionRecord> {
        version.validate(&self.limits)?;
        let now = self.clock.now();
        let mut tenants = lock::write(&self.tenants)?;
        let package = tenants
            .get_mut(tenant)
            .ok_or_else(|| package_not_found(package_id))?
            .package_mut(package_id)?;
        if package.versions.contains_key(&version.version) {
            let key = format!("{package_id}@{}", version.version);
            return Err(Error::conflict("package version", key));
        }
        let record = version.into_record(new_id(), package_id, now);
        package
            .versions
            .insert(record.version.clone(), record.clone());
        Ok(record)
    }

    async fn get_version(
        &self,
        tenant: &TenantId,
        package_id: &str,
        version: &str,
    ) -> Result<Option<PackageVersionRecord>> {
        let tenants = lock::read(&self.tenants)?;
        Ok(tenants
            .get(tenant)
            .and_then(|t| t.packages.get(package_id))
            .and_then(|p| p.versions.get(version))
            .cloned())
    }

    async fn list_versions(
        &self,
        tenant: &TenantId,
        package_id: &str,
    ) -> Result<Vec<PackageVersionRecord>> {
        let tenants = lock::read(&self.tenants)?;
        let package = tenants
            .get(tenant)
            .and_then(|t| t.packages.get(package_id))
            .ok_or_else(|| package_not_found(package_id))?;
        let mut versions: Vec<PackageVersionRecord> = package.versions.values().cloned().collect();
        drop(tenants);
        versions.sort_by(|a, b| version_order(&a.version, &b.version));
        Ok(versions)
    }

    async fn set_current_version(
        &self,
        tenant: &TenantId,
        package_id: &str,
        version: &str,
        expected_current: &str,
        update: PackageUpdate,
    ) -> Result<PackageRecord> {
        update.validate()?;
        let now = self.clock.now();
        let mut tenants = lock::write(&self.tenants)?;
        let package = tenants
            .get_mut(tenant)
            .ok_or_else(|| package_not_found(package_id))?
            .package_mut(package_id)?;
        let target = package
            .versions
            .get(version)
            .ok_or_else(|| version_not_found(package_id, version))?;
        if package.record.current_version != expected_current {
            return Err(Error::Stale {
                what: "package current version",
                expected: expected_current.to_owned(),
                found: package.record.current_version.clone(),
            });
        }
        update.apply_to(&mut package.record, target, now);
        Ok(package.record.clone())
    }

    async fn deprecate_version(
        &self,
        tenant: &TenantId,
        package_id: &str,
        version: &str,
        message: Option<String>,
    ) -> Result<PackageVersionRecord> {
        check_deprecation(message.as_deref())?;
        let mut tenants = lock::write(&self.tenants)?;
        let record = tenants
            .get_mut(tenant)
            .ok_or_else(|| package_not_found(package_id))?
            .package_mut(package_id)?
            .version_mut(version)?;
        record.deprecated = message;
        Ok(record.clone())
    }

    async fn set_version_approved(
        &self,
        tenant: &TenantId,
        package_id: &str,
        version: &str,
        approved: bool,
    ) -> Result<PackageVersionRecord> {
        let mut tenants = lock::write(&self.tenants)?;
        let record = tenants
            .get_mut(tenant)
            .ok_or_else(|| package_not_found(package_id))?
            .package_mut(package_id)?
            .version_mut(version)?;
        record.approved = approved;
        Ok(record.clone())
    }

    async fn delete_package(&self, tenant: &TenantId, id: &str) -> Result<bool> {
        let mut tenants = lock::write(&self.tenants)?;
        let Some(stored) = tenants.get_mut(tenant) else {
            return Ok(false);
        };
        let Some(package) = stored.packages.remove(id) else {
            return Ok(false);
        };
        stored.by_name.remove(&package.record.name);
        stored.by_skill.remove(&package.record.skill_id);
        Ok(true)
    }

    async fn delete_version(
        &self,
        tenant: &TenantId,
        package_id: &str,
        version: &str,
    ) -> Result<bool> {
        let mut tenants = lock::write(&self.tenants)?;
        let package = tenants
            .get_mut(tenant)
            .ok_or_else(|| package_not_found(package_id))?
            .package_mut(package_id)?;
        if !package.versions.contains_key(version) {
            return Ok(false);
        }
        if package.record.current_version == version {
            let key = format!("{package_id}@{version}");
            return Err(Error::conflict("current package version", key));
        }
        package.versions.remove(version);
        package.ratings.retain(|(rated, _), _| rated != version);
        Ok(true)
    }

    async fn rate(
        &self,
        scope: &UserScope,
        package_id: &str,
        version: &str,
        stars: u8,
    ) -> Result<()> {
        check_stars(stars)?;
        let mut tenants = lock::write(&self.tenants)?;
        let package = tenants
            .get_mut(&scope.tenant)
            .ok_or_else(|| package_not_found(package_id))?
            .package_mut(package_id)?;
        package.version_mut(version)?;
        package
            .ratings
            .insert((version.to_owned(), scope.user.clone()), stars);
        Ok(())
    }

    async fn rating_summary(
        &self,
        tenant: &TenantId,
        package_id: &str,
        version: Option<&str>,
    ) -> Result<RatingSummary> {
        let tenants = lock::read(&self.tenants)?;
        let package = tenants
            .get(tenant)
            .and_then(|t| t.packages.get(package_id))
            .ok_or_else(|| package_not_found(package_id))?;
        if let Some(version) = version
            && !package.versions.contains_key(version)
        {
            return Err(version_not_found(package_id, version));
        }
        let (count, total) = package
            .ratings
            .iter()
            .filter(|((rated, _), _)| version.is_none_or(|v| v == rated))
            .fold((0u64, 0u64), |(count, total), (_, stars)| {
                (count + 1, total + u64::from(*stars))
            });
        Ok(RatingSummary::from_total(count, total))
    }
}
