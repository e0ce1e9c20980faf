//! [`PackageStore`] on `skill_packages`, `skill_package_versions` and
//! `skill_package_ratings`.
//!
//! Every statement names the tenant; a version row references its package by (tenant,
//! package) and a rating its version by (tenant, package, version), so deleting a package
//! deletes both by cascade, deleting a version deletes its ratings, and neither can hang
//! off another tenant's package. Each write (a create with its first version, a
//! compare-and-set of the current version, a version delete with its current-version
//! check) is one write transaction, so concurrent writers from this process or another
//! serialize on it.

use rusqlite::{Connection, OptionalExtension, ToSql, params};
use skills_store_traits::packages::{
    NewPackage, NewPackageVersion, PackageRecord, PackageStore, PackageUpdate,
    PackageVersionRecord, RatingSummary, check_deprecation, check_stars, version_order,
};
use skills_store_traits::{Error, Result, TenantId, UserScope, new_id};

use crate::SqliteStore;
use crate::error::Outcome;
use crate::rows::{Field, Kind, columns, decode, field, insert, renamed, update};

/// The `skill_packages` columns, in [`PackageRecord`]'s field order.
const PACKAGE_FIELDS: &[Field] = &[
    field("id", Kind::Text),
    renamed("tenant", "tenant_id", Kind::Text),
    field("skill_id", Kind::Text),
    field("name", Kind::Text),
    renamed("source", "source_json", Kind::Json),
    field("current_version", Kind::Text),
    field("trust_level", Kind::Text),
    field("digest", Kind::Text),
    field("verdict", Kind::Text),
    field("installed_by", Kind::Text),
    field("created_at", Kind::Int),
    field("updated_at", Kind::Int),
];

/// The `skill_package_versions` columns (besides the tenant), in [`PackageVersionRecord`]'s
/// field order.
const VERSION_FIELDS: &[Field] = &[
    field("id", Kind::Text),
    field("package_id", Kind::Text),
    field("version", Kind::Text),
    field("digest", Kind::Text),
    field("verdict", Kind::Text),
    renamed("file_digests", "file_digests_json", Kind::Json),
    renamed("files", "files_json", Kind::Json),
    renamed("scripts", "scripts_json", Kind::Json),
    renamed("permissions", "permissions_json", Kind::Json),
    renamed("scan_report", "scan_report_json", Kind::Json),
    field("publisher", Kind::Text),
    field("changelog", Kind::Text),
    field("deprecated", Kind::Text),
    field("approved", Kind::Bool),
    field("created_at", Kind::Int),
    field("created_by", Kind::Text),
];

fn package_not_found(id: &str) -> Error {
    Error::not_found("package", id)
}

fn version_not_found(package_id: &str, version: &str) -> Error {
    Error::not_found("package version", format!("{package_id}@{version}"))
}

/// The tenant's package whose `column` (`id`, `name` or `skill_id`) is `value`.
fn package_by(
    conn: &Connection,
    tenant: &str,
    column: &str,
    value: &str,
) -> Outcome<Option<PackageRecord>> {
    let sql = format!(
        "SELECT {} FROM skill_packages WHERE tenant_id = ?1 AND {column} = ?2",
        columns(PACKAGE_FIELDS, None)
    );
    Ok(conn
        .prepare_cached(&sql)?
        .query_row(params![tenant, value], |row| decode(row, 0, PACKAGE_FIELDS))
        .optional()?)
}

fn require_package(conn: &Connection, tenant: &str, id: &str) -> Outcome<PackageRecord> {
    package_by(conn, tenant, "id", id)?.ok_or_else(|| package_not_found(id).into())
}

fn version(
    conn: &Connection,
    tenant: &str,
    package_id: &str,
    version: &str,
) -> Outcome<Option<PackageVersionRecord>> {
    let sql = format!(
        "SELECT {} FROM skill_package_versions \
         WHERE tenant_id = ?1 AND package_id = ?2 AND version = ?3",
        columns(VERSION_FIELDS, None)
    );
    Ok(conn
        .prepare_cached(&sql)?
        .query_row(params![tenant, package_id, version], |row| {
            decode(row, 0, VERSION_FIELDS)
        })
        .optional()?)
}

/// The version of the tenant's package: [`Error::NotFound`] for the package, then for the
/// version.
fn require_version(
    conn: &Connection,
    tenant: &str,
    package_id: &str,
    number: &str,
) -> Outcome<PackageVersionRecord> {
    require_package(conn, tenant, package_id)?;
    version(conn, tenant, package_id, number)?
        .ok_or_else(|| version_not_found(package_id, number).into())
}

fn insert_version(conn: &Connection, tenant: &str, record: &PackageVersionRecord) -> Outcome<()> {
    let owner: [(&str, &dyn ToSql); 1] = [("tenant_id", &tenant)];
    insert(
        conn,
        "skill_package_versions",
        &owner,
        VERSION_FIELDS,
        record,
    )
}

fn update_version(conn: &Connection, tenant: &str, record: &PackageVersionRecord) -> Outcome<()> {
    let keys: [(&str, &dyn ToSql); 2] = [("tenant_id", &tenant), ("id", &record.id)];
    update(
        conn,
        "skill_package_versions",
        VERSION_FIELDS,
        record,
        &keys,
    )?;
    Ok(())
}

#[async_trait::async_trait]
impl PackageStore for SqliteStore {
    async fn create_package(
        &self,
        tenant: &TenantId,
        package: NewPackage,
    ) -> Result<(PackageRecord, PackageVersionRecord)> {
        package.validate(&self.limits)?;
        let (tenant, clock) = (tenant.clone(), self.clock.clone());
        self.worker
            .write(move |conn| {
                let key = tenant.as_str();
                if package_by(conn, key, "name", &package.name)?.is_some() {
                    return Err(Error::conflict("package name", package.name.clone()).into());
                }
                if package_by(conn, key, "skill_id", &package.skill_id)?.is_some() {
                    return Err(Error::conflict("package skill", package.skill_id.clone()).into());
                }
                let (record, first) =
                    package
                        .clone()
                        .into_records(&tenant, new_id(), new_id(), clock.now());
                insert(conn, "skill_packages", &[], PACKAGE_FIELDS, &record)?;
                insert_version(conn, key, &first)?;
                Ok((record, first))
            })
            .await
    }

    async fn get_package(&self, tenant: &TenantId, id: &str) -> Result<Option<PackageRecord>> {
        let (tenant, id) = (tenant.to_string(), id.to_owned());
        self.worker
            .read(move |conn| package_by(conn, &tenant, "id", &id))
            .await
    }

    async fn find_package_by_name(
        &self,
        tenant: &TenantId,
        name: &str,
    ) -> Result<Option<PackageRecord>> {
        let (tenant, name) = (tenant.to_string(), name.to_owned());
        self.worker
            .read(move |conn| package_by(conn, &tenant, "name", &name))
            .await
    }

    async fn find_package_by_skill(
        &self,
        tenant: &TenantId,
        skill_id: &str,
    ) -> Result<Option<PackageRecord>> {
        let (tenant, skill_id) = (tenant.to_string(), skill_id.to_owned());
        self.worker
            .read(move |conn| package_by(conn, &tenant, "skill_id", &skill_id))
            .await
    }

    async fn list_packages(&self, tenant: &TenantId) -> Result<Vec<PackageRecord>> {
        let tenant = tenant.to_string();
        self.worker
            .read(move |conn| {
                // Names compare with SQLite's default BINARY collation: bytewise, as Rust does.
                let sql = format!(
                    "SELECT {} FROM skill_packages WHERE tenant_id = ?1 ORDER BY name",
                    columns(PACKAGE_FIELDS, None)
                );
                let mut statement = conn.prepare_cached(&sql)?;
                let rows = statement.query_map([&tenant], |row| decode(row, 0, PACKAGE_FIELDS))?;
                Ok(rows.collect::<rusqlite::Result<_>>()?)
            })
            .await
    }

    async fn add_version(
        &self,
        tenant: &TenantId,
        package_id: &str,
        new: NewPackageVersion,
    ) -> Result<PackageVersionRecord> {
        new.validate(&self.limits)?;
        let (tenant, package_id) = (tenant.to_string(), package_id.to_owned());
        let clock = self.clock.clone();
        self.worker
            .write(move |conn| {
                require_package(conn, &tenant, &package_id)?;
                if version(conn, &tenant, &package_id, &new.version)?.is_some() {
                    let key = format!("{package_id}@{}", new.version);
                    return Err(Error::conflict("package version", key).into());
                }
                let record = new
                    .clone()
                    .into_record(new_id(), package_id.as_str(), clock.now());
                insert_version(conn, &tenant, &record)?;
                Ok(record)
            })
            .await
    }

    async fn get_version(
        &self,
        tenant: &TenantId,
        package_id: &str,
        number: &str,
    ) -> Result<Option<PackageVersionRecord>> {
        let (tenant, package_id) = (tenant.to_string(), package_id.to_owned());
        let number = number.to_owned();
        self.worker
            .read(move |conn| version(conn, &tenant, &package_id, &number))
            .await
    }

    async fn list_versions(
        &self,
        tenant: &TenantId,
        package_id: &str,
    ) -> Result<Vec<PackageVersionRecord>> {
        let (tenant, package_id) = (tenant.to_string(), package_id.to_owned());
        let mut versions: Vec<PackageVersionRecord> = self
            .worker
            .read(move |conn| {
                require_package(conn, &tenant, &package_id)?;
                let sql = format!(
                    "SELECT {} FROM skill_package_versions \
                     WHERE tenant_id = ?1 AND package_id = ?2",
                    columns(VERSION_FIELDS, None)
                );
                let mut statement = conn.prepare_cached(&sql)?;
                let rows = statement.query_map(params![tenant, package_id], |row| {
                    decode(row, 0, VERSION_FIELDS)
                })?;
                Ok(rows.collect::<rusqlite::Result<_>>()?)
            })
            .await?;
        // Semantic-version precedence is not an SQL order; sorted here, off the worker.
        versions.sort_by(|a, b| version_order(&a.version, &b.version));
        Ok(versions)
    }

    async fn set_current_version(
        &self,
        tenant: &TenantId,
        package_id: &str,
        number: &str,
        expected_current: &str,
        change: PackageUpdate,
    ) -> Result<PackageRecord> {
        change.validate()?;
        let (tenant, package_id) = (tenant.to_string(), package_id.to_owned());
        let (number, expected) = (number.to_owned(), expected_current.to_owned());
        let clock = self.clock.clone();
        self.worker
            .write(move |conn| {
                let mut package = require_package(conn, &tenant, &package_id)?;
                let target = version(conn, &tenant, &package_id, &number)?
                    .ok_or_else(|| version_not_found(&package_id, &number))?;
                if package.current_version != expected {
                    return Err(Error::Stale {
                        what: "package current version",
                        expected: expected.clone(),
                        found: package.current_version,
                    }
                    .into());
                }
                change.clone().apply_to(&mut package, &target, clock.now());
                let keys: [(&str, &dyn ToSql); 2] = [("tenant_id", &tenant), ("id", &package.id)];
                update(conn, "skill_packages", PACKAGE_FIELDS, &package, &keys)?;
                Ok(package)
            })
            .await
    }

    async fn deprecate_version(
        &self,
        tenant: &TenantId,
        package_id: &str,
        number: &str,
        message: Option<String>,
    ) -> Result<PackageVersionRecord> {
        check_deprecation(message.as_deref())?;
        let (tenant, package_id) = (tenant.to_string(), package_id.to_owned());
        let number = number.to_owned();
        self.worker
            .write(move |conn| {
                let mut record = require_version(conn, &tenant, &package_id, &number)?;
                record.deprecated = message.clone();
                update_version(conn, &tenant, &record)?;
                Ok(record)
            })
            .await
    }

    async fn set_version_approved(
        &self,
        tenant: &TenantId,
        package_id: &str,
        number: &str,
        approved: bool,
    ) -> Result<PackageVersionRecord> {
        let (tenant, package_id) = (tenant.to_string(), package_id.to_owned());
        let number = number.to_owned();
        self.worker
            .write(move |conn| {
                let mut record = require_version(conn, &tenant, &package_id, &number)?;
                record.approved = approved;
                update_version(conn, &tenant, &record)?;
                Ok(record)
            })
            .await
    }

    async fn delete_package(&self, tenant: &TenantId, id: &str) -> Result<bool> {
        let (tenant, id) = (tenant.to_string(), id.to_owned());
        self.worker
            .write(move |conn| {
                // Versions and their ratings go with the package: the foreign keys cascade.
                let deleted = conn
                    .prepare_cached("DELETE FROM skill_packages WHERE tenant_id = ?1 AND id = ?2")?
                    .execute(params![tenant, id])?;
                Ok(deleted > 0)
            })
            .await
    }

    async fn delete_version(
        &self,
        tenant: &TenantId,
        package_id: &str,
        number: &str,
    ) -> Result<bool> {
        let (tenant, package_id) = (tenant.to_string(), package_id.to_owned());
        let number = number.to_owned();
        self.worker
            .write(move |conn| {
                let package = require_package(conn, &tenant, &package_id)?;
                if version(conn, &tenant, &package_id, &number)?.is_none() {
                    return Ok(false);
                }
                if package.current_version == number {
                    let key = format!("{package_id}@{number}");
                    return Err(Error::conflict("current package version", key).into());
                }
                // The version's ratings go with it: their foreign key cascades.
                let deleted = conn
                    .prepare_cached(
                        "DELETE FROM skill_package_versions \
                         WHERE tenant_id = ?1 AND package_id = ?2 AND version = ?3",
                    )?
                    .execute(params![tenant, package_id, number])?;
                Ok(deleted > 0)
            })
            .await
    }

    async fn rate(
        &self,
        scope: &UserScope,
        package_id: &str,
        number: &str,
        stars: u8,
    ) -> Result<()> {
        check_stars(stars)?;
        let (tenant, user) = (scope.tenant.to_string(), scope.user.to_string());
        let (package_id, number) = (package_id.to_owned(), number.to_owned());
        let clock = self.clock.clone();
        self.worker
            .write(move |conn| {
                require_version(conn, &tenant, &package_id, &number)?;
                conn.prepare_cached(
                    "INSERT INTO skill_package_ratings \
                     (tenant_id, package_id, version, user_id, stars, rated_at) \
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6) \
                     ON CONFLICT (tenant_id, package_id, version, user_id) \
                     DO UPDATE SET stars = excluded.stars, rated_at = excluded.rated_at",
                )?
                .execute(params![
                    tenant,
                    package_id,
                    number,
                    user,
                    stars,
                    clock.now()
                ])?;
                Ok(())
            })
            .await
    }

    async fn rating_summary(
        &self,
        tenant: &TenantId,
        package_id: &str,
        number: Option<&str>,
    ) -> Result<RatingSummary> {
        let (tenant, package_id) = (tenant.to_string(), package_id.to_owned());
        let number = number.map(str::to_owned);
        self.worker
            .read(move |conn| {
                match &number {
                    Some(number) => {
                        require_version(conn, &tenant, &package_id, number)?;
                    }
                    None => {
                        require_package(conn, &tenant, &package_id)?;
                    }
                }
                summary(conn, &tenant, &package_id, number.as_deref())
            })
            .await
    }
}

/// Count and total of the ratings, of one version or all; the mean is computed as every
/// backend computes it.
fn summary(
    conn: &Connection,
    tenant: &str,
    package_id: &str,
    number: Option<&str>,
) -> Outcome<RatingSummary> {
    let (count, total): (i64, i64) = conn
        .prepare_cached(
            "SELECT COUNT(*), IFNULL(SUM(stars), 0) FROM skill_package_ratings \
             WHERE tenant_id = ?1 AND package_id = ?2 AND (?3 IS NULL OR version = ?3)",
        )?
        .query_row(params![tenant, package_id, number], |row| {
            Ok((row.get(0)?, row.get(1)?))
        })?;
    Ok(RatingSummary::from_total(
        u64::try_from(count).unwrap_or(0),
        u64::try_from(total).unwrap_or(0),
    ))
}
