//! An embedded durable store for agent skills: every `skills-store-traits` trait on SQLite.
//!
//! [`SqliteStore`] implements [`SkillStore`], [`AuditStore`], [`TrustStore`], [`PlanStore`],
//! [`MemoryStore`], [`PackageStore`], [`LearningStore`] and [`PermissionStore`] on one SQLite file, with SQLite
//! compiled in (nothing to install). It passes the same conformance suite as the in-memory
//! stores, so it is a drop-in durable replacement for them.
//!
//! - **Schema.** Seed 002 section 2 and seed 000 section 5, with a tenant column everywhere
//!   and a user column on per-user tables, the seeds' indexes and uniqueness (per tenant),
//!   foreign keys with seed 002's cascades, and versioned migrations applied on open
//!   (`PRAGMA user_version`); a file from a newer version is refused, never misread.
//! - **Never blocks your executor.** Every call runs on a dedicated thread that owns the
//!   connection; the async methods await a `oneshot` reply, so any executor (tokio,
//!   async-std, `futures::executor`) works and none is required.
//! - **Atomic and durable.** A skill and its files are one transaction; an audit append is
//!   a compare-and-append on the chain head in one transaction. The database runs in
//!   write-ahead-log mode with `synchronous = FULL` by default, so an acknowledged write
//!   survives a crash or power loss ([`Synchronous::Normal`] trades that last guarantee for
//!   speed).
//! - **Shared files.** Several processes may open one file: writes take the write lock up
//!   front (`BEGIN IMMEDIATE`), wait for each other (busy timeout) and retry when busy.
//!
//! ```
//! use skills_store_sqlite::SqliteStore;
//! use skills_store_traits::audit::AuditRecord;
//! use skills_store_traits::{AuditStore, NewAssignment, NewSkill, SkillStore, TenantId};
//!
//! # futures::executor::block_on(async {
//! let dir = tempfile::tempdir()?;
//! let path = dir.path().join("skills.sqlite3");
//! let acme = TenantId::new("acme");
//! {
//!     let store = SqliteStore::open(&path).await?;
//!     let skill = store
//!         .create_skill(&acme, NewSkill::new("Deploy", "deploy", "# Deploy\n").with_file("run.sh", "echo hi\n"))
//!         .await?;
//!     store.create_assignment(&acme, NewAssignment::team(&skill.id, "ops")).await?;
//!     let mut record = AuditRecord::new("alice", &skill.id, "acme/deploy", "verified", "in#", true);
//!     record.previous_hash = "genesis".into();
//!     record.entry_hash = "h1".into();
//!     store.append(&acme, "alice", record, None).await?;
//! }
//! // Reopened (or opened by another process): everything is still there.
//! let store = SqliteStore::open(&path).await?;
//! let assigned = store.assignments_for_agent(&acme, "agent-7", Some("ops")).await?;
//! assert_eq!(assigned[0].skill.slug, "deploy");
//! assert_eq!(store.head(&acme, "alice").await?.map(|h| h.sequence), Some(1));
//! // Another tenant sees nothing.
//! assert_eq!(store.find_skill_by_slug(&TenantId::new("other"), "deploy").await?, None);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! # }).unwrap();
//! ```
//!
//! [`SkillStore`]: skills_store_traits::SkillStore
//! [`AuditStore`]: skills_store_traits::AuditStore
//! [`TrustStore`]: skills_store_traits::TrustStore
//! [`PlanStore`]: skills_store_traits::PlanStore
//! [`MemoryStore`]: skills_store_traits::MemoryStore
//! [`PackageStore`]: skills_store_traits::PackageStore
//! [`LearningStore`]: skills_store_traits::LearningStore
//! [`PermissionStore`]: skills_store_traits::PermissionStore

mod audit;
mod error;
mod learning;
mod memory;
mod packages;
mod permissions;
mod plans;
mod row_de;
mod rows;
mod schema;
mod skills;
mod trust;
mod worker;

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use skills_store_traits::{
    Clock, DEFAULT_PROJECTION_BUDGET, StampedProjections, StoreLimits, SystemClock,
};

pub use error::Error;
pub use schema::Synchronous;

use worker::Worker;

/// How [`SqliteStore::open_with`] opens a store.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct SqliteOptions {
    /// How commits reach the disk; [`Synchronous::Full`] by default.
    pub synchronous: Synchronous,
    /// How long a write waits for another process's write lock before failing (5 s by
    /// default). Busy errors are retried besides.
    pub busy_timeout: Duration,
    /// The per-file and per-skill size limits (seed 002 section 15.9).
    pub limits: StoreLimits,
    /// Where timestamps come from (the system clock by default).
    pub clock: Arc<dyn Clock>,
    /// The most the connection's page cache holds, in KiB (`PRAGMA cache_size`; 64 MiB by
    /// default, taken only as pages are read). SQLite's own default, 2 MiB, is smaller than
    /// the pages one resolution of a few hundred skills touches in a store of thousands:
    /// every call then read most of them again from the operating system.
    pub cache_kib: u32,
    /// The most decoded text the store keeps between resolutions, in bytes
    /// ([`StampedProjections`]: a skill is decoded again only when its row's stamp changed;
    /// 32 MiB by default, 0 keeps nothing and reads every skill's columns on every call).
    pub projection_budget: usize,
}

impl Default for SqliteOptions {
    fn default() -> Self {
        SqliteOptions {
            synchronous: Synchronous::default(),
            busy_timeout: Duration::from_secs(5),
            limits: StoreLimits::default(),
            clock: Arc::new(SystemClock),
            cache_kib: DEFAULT_CACHE_KIB,
            projection_budget: DEFAULT_PROJECTION_BUDGET,
        }
    }
}

/// The default of [`SqliteOptions::cache_kib`]: 64 MiB.
pub const DEFAULT_CACHE_KIB: u32 = 64 * 1024;

impl SqliteOptions {
    /// Sets the synchronous mode.
    pub fn synchronous(mut self, synchronous: Synchronous) -> Self {
        self.synchronous = synchronous;
        self
    }

    /// Sets the most the page cache holds, in KiB (at least 64).
    pub fn cache_kib(mut self, kib: u32) -> Self {
        self.cache_kib = kib.max(64);
        self
    }

    /// Sets the most decoded text kept between resolutions, in bytes (0: none).
    pub fn projection_budget(mut self, bytes: usize) -> Self {
        self.projection_budget = bytes;
        self
    }

    /// Sets the busy timeout.
    pub fn busy_timeout(mut self, timeout: Duration) -> Self {
        self.busy_timeout = timeout;
        self
    }

    /// Sets the size limits.
    pub fn limits(mut self, limits: StoreLimits) -> Self {
        self.limits = limits;
        self
    }

    /// Sets the clock.
    pub fn clock(mut self, clock: Arc<dyn Clock>) -> Self {
        self.clock = clock;
        self
    }
}

/// Every store trait on one SQLite database. Cheap to clone: clones share the connection
/// thread, which closes the database when the last clone is dropped.
#[derive(Clone)]
pub struct SqliteStore {
    worker: Worker,
    clock: Arc<dyn Clock>,
    limits: StoreLimits,
    path: Option<Arc<PathBuf>>,
    /// Skills decoded by earlier resolutions, by stamp (shared by the clones).
    projections: Arc<StampedProjections>,
}

impl fmt::Debug for SqliteStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SqliteStore")
            .field("path", &self.path)
            .field("limits", &self.limits)
            .finish_non_exhaustive()
    }
}

impl SqliteStore {
    /// The schema version this crate creates and migrates files to.
    pub const SCHEMA_VERSION: i64 = schema::LATEST;

    /// Opens (creating it if missing) the database at `path` with the default options,
    /// migrating its schema to [`SqliteStore::SCHEMA_VERSION`].
    pub async fn open(path: impl AsRef<Path>) -> Result<Self, Error> {
        Self::open_with(path, SqliteOptions::default()).await
    }

    /// Opens the database at `path` with `options`.
    pub async fn open_with(path: impl AsRef<Path>, options: SqliteOptions) -> Result<Self, Error> {
        Self::start(Some(path.as_ref().to_path_buf()), options).await
    }

    /// A private database in memory, gone when the store is dropped (for tests).
    pub async fn open_in_memory() -> Result<Self, Error> {
        Self::start(None, SqliteOptions::default()).await
    }

    /// [`SqliteStore::open_in_memory`] with `options`.
    pub async fn open_in_memory_with(options: SqliteOptions) -> Result<Self, Error> {
        Self::start(None, options).await
    }

    async fn start(path: Option<PathBuf>, options: SqliteOptions) -> Result<Self, Error> {
        let SqliteOptions {
            synchronous,
            busy_timeout,
            limits,
            clock,
            cache_kib,
            projection_budget,
        } = options;
        let opened = path.clone();
        let worker = Worker::start("skills-sqlite".to_owned(), move || {
            schema::open(opened.as_deref(), synchronous, busy_timeout, cache_kib)
        })
        .await?;
        Ok(SqliteStore {
            worker,
            clock,
            limits,
            path: path.map(Arc::new),
            projections: Arc::new(StampedProjections::new(projection_budget)),
        })
    }

    /// The database file, or `None` for an in-memory store.
    pub fn path(&self) -> Option<&Path> {
        self.path.as_deref().map(PathBuf::as_path)
    }

    /// Runs SQLite's `integrity_check` over the whole database: the problems found, none
    /// when the file is sound.
    pub async fn integrity_check(&self) -> skills_store_traits::Result<Vec<String>> {
        self.worker
            .read(|conn| {
                let mut statement = conn.prepare("PRAGMA integrity_check")?;
                let lines = statement
                    .query_map([], |row| row.get::<_, String>(0))?
                    .collect::<rusqlite::Result<Vec<_>>>()?;
                Ok(lines.into_iter().filter(|line| line != "ok").collect())
            })
            .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use skills_store_traits::audit::{AuditRecord, AuditStore};
    use skills_store_traits::{SkillStore, TenantId};

    /// A file written by the first version of the schema (skills only) is migrated when
    /// opened: its records stay, and the tables of later versions work.
    #[test]
    fn an_old_version_file_is_upgraded_on_open() {
        futures::executor::block_on(async {
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join("old.sqlite3");
            {
                let mut conn = rusqlite::Connection::open(&path).unwrap();
                schema::migrate_to(&mut conn, 1).unwrap();
                conn.execute(
                    "INSERT INTO skills (id, tenant_id, name, slug, source_kind, content, \
                     checksum, created_at, updated_at) \
                     VALUES ('s1', 't', 'Old', 'old', 'admin', '# old', 'c', 1, 1)",
                    [],
                )
                .unwrap();
                assert_eq!(schema::version(&conn).unwrap(), 1);
            }
            let store = SqliteStore::open(&path).await.unwrap();
            let tenant = TenantId::new("t");
            let old = store
                .find_skill_by_slug(&tenant, "old")
                .await
                .unwrap()
                .unwrap();
            assert_eq!((old.id.as_str(), old.tags.len()), ("s1", 0));
            let mut record = AuditRecord::new("u", "s1", "t/old", "core", "in", true);
            record.entry_hash = "h".into();
            assert_eq!(
                store
                    .append(&tenant, "c", record, None)
                    .await
                    .unwrap()
                    .sequence,
                1
            );
            drop(store);
            let conn = rusqlite::Connection::open(&path).unwrap();
            assert_eq!(schema::version(&conn).unwrap(), SqliteStore::SCHEMA_VERSION);
        });
    }
}
