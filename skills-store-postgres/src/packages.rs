//! [`PackageStore`] on PostgreSQL: installed packages, their versions and ratings. Writes
//! take the tenant's packages lock, so the checks (name and skill free, the expected
//! current version) see every committed write; versions cascade with their package and
//! ratings with their version.

use async_trait::async_trait;
use skills_store_traits::packages::{
    NewPackage, NewPackageVersion, PackageRecord, PackageStore, PackageUpdate,
    PackageVersionRecord, RatingSummary, check_deprecation, check_stars, version_order,
};
use skills_store_traits::{Error, Result, TenantId, UserScope, new_id};
use tokio_postgres::types::Json;

use crate::PostgresStore;
use crate::db::{Domain, Shared, Tx};
use crate::error::Outcome;

const PACKAGE: &str = "SELECT doc FROM skill_packages WHERE tenant_id = $1 AND id = $2";
const VERSION: &str = "SELECT doc FROM skill_package_versions \
                       WHERE tenant_id = $1 AND package_id = $2 AND version = $3";

fn package_not_found(id: &str) -> Error {
    Error::not_found("package", id)
}

fn version_not_found(package_id: &str, version: &str) -> Error {
    Error::not_found("package version", format!("{package_id}@{version}"))
}

async fn save_package(tx: &Tx, record: &PackageRecord) -> Outcome<()> {
    tx.execute(
        "INSERT INTO skill_packages (tenant_id, id, name, skill_id, doc) \
         VALUES ($1, $2, $3, $4, $5) \
         ON CONFLICT (tenant_id, id) DO UPDATE SET doc = EXCLUDED.doc",
        &[
            &record.tenant.as_str(),
            &record.id,
            &record.name,
            &record.skill_id,
            &Json(record),
        ],
    )
    .await?;
    Ok(())
}

async fn save_version(tx: &Tx, tenant: &str, record: &PackageVersionRecord) -> Outcome<()> {
    tx.execute(
        "INSERT INTO skill_package_versions (tenant_id, package_id, version, doc) \
         VALUES ($1, $2, $3, $4) \
         ON CONFLICT (tenant_id, package_id, version) DO UPDATE SET doc = EXCLUDED.doc",
        &[&tenant, &record.package_id, &record.version, &Json(record)],
    )
    .await?;
    Ok(())
}

async fn package(tx: &Tx, tenant: &str, id: &str) -> Outcome<PackageRecord> {
    tx.doc_opt(PACKAGE, &[&tenant, &id])
        .await?
        .ok_or_else(|| package_not_found(id).into())
}

async fn version(
    tx: &Tx,
    tenant: &str,
    package_id: &str,
    version: &str,
) -> Outcome<PackageVersionRecord> {
    package(tx, tenant, package_id).await?;
    tx.doc_opt(VERSION, &[&tenant, &package_id, &version])
        .await?
        .ok_or_else(|| version_not_found(package_id, version).into())
}

async fn create(
    s: Shared,
    tenant: TenantId,
    new: NewPackage,
) -> Outcome<(PackageRecord, PackageVersionRecord)> {
    new.validate(&s.limits)?;
    let t = tenant.as_str();
    let tx = s.begin_write(t, Domain::Packages, "").await?;
    let now = s.clock.now();
    let by_name = tx
        .query_opt(
            "SELECT 1 FROM skill_packages WHERE tenant_id = $1 AND name = $2",
            &[&t, &new.name],
        )
        .await?;
    if by_name.is_some() {
        return Err(Error::conflict("package name", new.name).into());
    }
    let by_skill = tx
        .query_opt(
            "SELECT 1 FROM skill_packages WHERE tenant_id = $1 AND skill_id = $2",
            &[&t, &new.skill_id],
        )
        .await?;
    if by_skill.is_some() {
        return Err(Error::conflict("package skill", new.skill_id).into());
    }
    let (record, version) = new.into_records(&tenant, new_id(), new_id(), now);
    save_package(&tx, &record).await?;
    save_version(&tx, t, &version).await?;
    tx.commit().await?;
    Ok((record, version))
}

async fn get(s: Shared, tenant: TenantId, id: String) -> Outcome<Option<PackageRecord>> {
    let tx = s.begin(tenant.as_str()).await?;
    tx.doc_opt(PACKAGE, &[&tenant.as_str(), &id]).await
}

async fn find_by(
    s: Shared,
    tenant: TenantId,
    by_skill: bool,
    key: String,
) -> Outcome<Option<PackageRecord>> {
    let tx = s.begin(tenant.as_str()).await?;
    let sql = if by_skill {
        "SELECT doc FROM skill_packages WHERE tenant_id = $1 AND skill_id = $2"
    } else {
        "SELECT doc FROM skill_packages WHERE tenant_id = $1 AND name = $2"
    };
    tx.doc_opt(sql, &[&tenant.as_str(), &key]).await
}

async fn list(s: Shared, tenant: TenantId) -> Outcome<Vec<PackageRecord>> {
    let tx = s.begin(tenant.as_str()).await?;
    tx.docs(
        "SELECT doc FROM skill_packages WHERE tenant_id = $1 ORDER BY name",
        &[&tenant.as_str()],
    )
    .await
}

async fn add_version(
    s: Shared,
    tenant: TenantId,
    package_id: String,
    new: NewPackageVersion,
) -> Outcome<PackageVersionRecord> {
    new.validate(&s.limits)?;
    let t = tenant.as_str();
    let tx = s.begin_write(t, Domain::Packages, "").await?;
    let now = s.clock.now();
    package(&tx, t, &package_id).await?;
    if tx
        .query_opt(VERSION, &[&t, &package_id, &new.version])
        .await?
        .is_some()
    {
        let key = format!("{package_id}@{}", new.version);
        return Err(Error::conflict("package version", key).into());
    }
    let record = new.into_record(new_id(), package_id, now);
    save_version(&tx, t, &record).await?;
    tx.commit().await?;
    Ok(record)
}

async fn get_version(
    s: Shared,
    tenant: TenantId,
    package_id: String,
    version: String,
) -> Outcome<Option<PackageVersionRecord>> {
    let tx = s.begin(tenant.as_str()).await?;
    tx.doc_opt(VERSION, &[&tenant.as_str(), &package_id, &version])
        .await
}

async fn list_versions(
    s: Shared,
    tenant: TenantId,
    package_id: String,
) -> Outcome<Vec<PackageVersionRecord>> {
    let t = tenant.as_str();
    let tx = s.begin(t).await?;
    package(&tx, t, &package_id).await?;
    let mut versions: Vec<PackageVersionRecord> = tx
        .docs(
            "SELECT doc FROM skill_package_versions WHERE tenant_id = $1 AND package_id = $2",
            &[&t, &package_id],
        )
        .await?;
    versions.sort_by(|a, b| version_order(&a.version, &b.version));
    Ok(versions)
}

async fn set_current(
    s: Shared,
    tenant: TenantId,
    package_id: String,
    target: String,
    expected: String,
    update: PackageUpdate,
) -> Outcome<PackageRecord> {
    update.validate()?;
    let t = tenant.as_str();
    let tx = s.begin_write(t, Domain::Packages, "").await?;
    let now = s.clock.now();
    let target = version(&tx, t, &package_id, &target).await?;
    let mut record = package(&tx, t, &package_id).await?;
    if record.current_version != expected {
        return Err(Error::Stale {
            what: "package current version",
            expected,
            found: record.current_version,
        }
        .into());
    }
    update.apply_to(&mut record, &target, now);
    save_package(&tx, &record).await?;
    tx.commit().await?;
    Ok(record)
}

async fn change_version(
    s: Shared,
    tenant: TenantId,
    package_id: String,
    number: String,
    change: impl FnOnce(&mut PackageVersionRecord) + Send,
) -> Outcome<PackageVersionRecord> {
    let t = tenant.as_str();
    let tx = s.begin_write(t, Domain::Packages, "").await?;
    let mut record = version(&tx, t, &package_id, &number).await?;
    change(&mut record);
    save_version(&tx, t, &record).await?;
    tx.commit().await?;
    Ok(record)
}

async fn delete(s: Shared, tenant: TenantId, id: String) -> Outcome<bool> {
    let t = tenant.as_str();
    let tx = s.begin_write(t, Domain::Packages, "").await?;
    let deleted = tx
        .execute(
            "DELETE FROM skill_packages WHERE tenant_id = $1 AND id = $2",
            &[&t, &id],
        )
        .await?;
    tx.commit().await?;
    Ok(deleted > 0)
}

async fn delete_version(
    s: Shared,
    tenant: TenantId,
    package_id: String,
    number: String,
) -> Outcome<bool> {
    let t = tenant.as_str();
    let tx = s.begin_write(t, Domain::Packages, "").await?;
    let record = package(&tx, t, &package_id).await?;
    if tx
        .query_opt(VERSION, &[&t, &package_id, &number])
        .await?
        .is_none()
    {
        return Ok(false);
    }
    if record.current_version == number {
        let key = format!("{package_id}@{number}");
        return Err(Error::conflict("current package version", key).into());
    }
    // Its ratings go with it (ON DELETE CASCADE).
    tx.execute(
        "DELETE FROM skill_package_versions WHERE tenant_id = $1 AND package_id = $2 \
         AND version = $3",
        &[&t, &package_id, &number],
    )
    .await?;
    tx.commit().await?;
    Ok(true)
}

async fn rate(
    s: Shared,
    scope: UserScope,
    package_id: String,
    number: String,
    stars: u8,
) -> Outcome<()> {
    check_stars(stars)?;
    let t = scope.tenant.as_str();
    let tx = s.begin_write(t, Domain::Packages, "").await?;
    version(&tx, t, &package_id, &number).await?;
    tx.execute(
        "INSERT INTO skill_package_ratings (tenant_id, package_id, version, user_id, stars) \
         VALUES ($1, $2, $3, $4, $5) \
         ON CONFLICT (tenant_id, package_id, version, user_id) \
         DO UPDATE SET stars = EXCLUDED.stars",
        &[
            &t,
            &package_id,
            &number,
            &scope.user.as_str(),
            &i32::from(stars),
        ],
    )
    .await?;
    tx.commit().await?;
    Ok(())
}

async fn rating_summary(
    s: Shared,
    tenant: TenantId,
    package_id: String,
    number: Option<String>,
) -> Outcome<RatingSummary> {
    let t = tenant.as_str();
    let tx = s.begin(t).await?;
    match &number {
        Some(number) => drop(version(&tx, t, &package_id, number).await?),
        None => drop(package(&tx, t, &package_id).await?),
    }
    let row = tx
        .query_opt(
            "SELECT COUNT(*), COALESCE(SUM(stars), 0)::BIGINT FROM skill_package_ratings \
             WHERE tenant_id = $1 AND package_id = $2 AND ($3::TEXT IS NULL OR version = $3)",
            &[&t, &package_id, &number],
        )
        .await?;
    let (count, total) = match row {
        Some(row) => (row.try_get::<_, i64>(0)?, row.try_get::<_, i64>(1)?),
        None => (0, 0),
    };
    Ok(RatingSummary::from_total(
        u64::try_from(count).unwrap_or(0),
        u64::try_from(total).unwrap_or(0),
    ))
}

#[async_trait]
impl PackageStore for PostgresStore {
    async fn create_package(
        &self,
        tenant: &TenantId,
        package: NewPackage,
    ) -> Result<(PackageRecord, PackageVersionRecord)> {
        self.call(
            "create_package",
            create(self.shared(), tenant.clone(), package),
        )
        .await
    }

    async fn get_package(&self, tenant: &TenantId, id: &str) -> Result<Option<PackageRecord>> {
        self.call(
            "get_package",
            get(self.shared(), tenant.clone(), id.to_owned()),
        )
        .await
    }

    async fn find_package_by_name(
        &self,
        tenant: &TenantId,
        name: &str,
    ) -> Result<Option<PackageRecord>> {
        let task = find_by(self.shared(), tenant.clone(), false, name.to_owned());
        self.call("find_package_by_name", task).await
    }

    async fn find_package_by_skill(
        &self,
        tenant: &TenantId,
        skill_id: &str,
    ) -> Result<Option<PackageRecord>> {
        let task = find_by(self.shared(), tenant.clone(), true, skill_id.to_owned());
        self.call("find_package_by_skill", task).await
    }

    async fn list_packages(&self, tenant: &TenantId) -> Result<Vec<PackageRecord>> {
        self.call("list_packages", list(self.shared(), tenant.clone()))
            .await
    }

    async fn add_version(
        &self,
        tenant: &TenantId,
        package_id: &str,
        version: NewPackageVersion,
    ) -> Result<PackageVersionRecord> {
        let task = add_version(
            self.shared(),
            tenant.clone(),
            package_id.to_owned(),
            version,
        );
        self.call("add_version", task).await
    }

    async fn get_version(
        &self,
        tenant: &TenantId,
        package_id: &str,
        version: &str,
    ) -> Result<Option<PackageVersionRecord>> {
        let task = get_version(
            self.shared(),
            tenant.clone(),
            package_id.to_owned(),
            version.to_owned(),
        );
        self.call("get_version", task).await
    }

    async fn list_versions(
        &self,
        tenant: &TenantId,
        package_id: &str,
    ) -> Result<Vec<PackageVersionRecord>> {
        let task = list_versions(self.shared(), tenant.clone(), package_id.to_owned());
        self.call("list_versions", task).await
    }

    async fn set_current_version(
        &self,
        tenant: &TenantId,
        package_id: &str,
        version: &str,
        expected_current: &str,
        update: PackageUpdate,
    ) -> Result<PackageRecord> {
        let task = set_current(
            self.shared(),
            tenant.clone(),
            package_id.to_owned(),
            version.to_owned(),
            expected_current.to_owned(),
            update,
        );
        self.call("set_current_version", task).await
    }

    async fn deprecate_version(
        &self,
        tenant: &TenantId,
        package_id: &str,
        version: &str,
        message: Option<String>,
    ) -> Result<PackageVersionRecord> {
        check_deprecation(message.as_deref())?;
        let task = change_version(
            self.shared(),
            tenant.clone(),
            package_id.to_owned(),
            version.to_owned(),
            move |record| record.deprecated = message,
        );
        self.call("deprecate_version", task).await
    }

    async fn set_version_approved(
        &self,
        tenant: &TenantId,
        package_id: &str,
        version: &str,
        approved: bool,
    ) -> Result<PackageVersionRecord> {
        let task = change_version(
            self.shared(),
            tenant.clone(),
            package_id.to_owned(),
            version.to_owned(),
            move |record| record.approved = approved,
        );
        self.call("set_version_approved", task).await
    }

    async fn delete_package(&self, tenant: &TenantId, id: &str) -> Result<bool> {
        self.call(
            "delete_package",
            delete(self.shared(), tenant.clone(), id.to_owned()),
        )
        .await
    }

    async fn delete_version(
        &self,
        tenant: &TenantId,
        package_id: &str,
        version: &str,
    ) -> Result<bool> {
        let task = delete_version(
            self.shared(),
            tenant.clone(),
            package_id.to_owned(),
            version.to_owned(),
        );
        self.call("delete_version", task).await
    }

    async fn rate(
        &self,
        scope: &UserScope,
        package_id: &str,
        version: &str,
        stars: u8,
    ) -> Result<()> {
        let task = rate(
            self.shared(),
            scope.clone(),
            package_id.to_owned(),
            version.to_owned(),
            stars,
        );
        self.call("rate", task).await
    }

    async fn rating_summary(
        &self,
        tenant: &TenantId,
        package_id: &str,
        version: Option<&str>,
    ) -> Result<RatingSummary> {
        let task = rating_summary(
            self.shared(),
            tenant.clone(),
            package_id.to_owned(),
            version.map(str::to_owned),
        );
        self.call("rating_summary", task).await
    }
}
