//! A shared durable store for agent skills: every `skills-store-traits` trait on PostgreSQL.
//!
//! [`PostgresStore`] implements [`SkillStore`], [`AuditStore`], [`TrustStore`],
//! [`PlanStore`], [`MemoryStore`], [`PackageStore`], [`LearningStore`] and
//! [`PermissionStore`] on one PostgreSQL database that any number of processes share. It
//! passes the same conformance suite as the in-memory and SQLite stores.
//!
//! - **Schema.** Versioned migrations embedded in the crate, recorded in
//!   `schema_migrations` and applied on open in one transaction under an advisory lock
//!   (concurrent openers are safe; reopening is a no-op); a database from a newer version is
//!   refused untouched.
//! - **Tenancy in the database.** Every table has forced row-level security keyed on the
//!   tenant: each transaction sets `skills.tenant`, and a row of another tenant is neither
//!   visible nor writable, whatever the SQL. Connect as an ordinary role (superusers and
//!   `BYPASSRLS` roles skip every policy).
//! - **Many processes.** An audit append is a compare-and-append on the chain head inside
//!   one transaction that holds the chain's advisory lock (and `(tenant, chain, sequence)`
//!   is the primary key besides), so concurrent writers in any number of processes produce
//!   one chain with no gap and no fork. Plan steps can be claimed with leases
//!   ([`PostgresStore::claim_step`], `FOR UPDATE SKIP LOCKED`): two workers never hold one
//!   step, and a step whose worker died is claimed again once its lease expires.
//! - **Atomic.** Each call is one transaction; a call that fails, or whose connection is
//!   lost, leaves nothing behind.
//! - **No runtime imposed.** The store runs its connections on a small runtime of its own;
//!   its async methods can be awaited from any executor (tokio, async-std,
//!   `futures::executor`).
//!
//! ```no_run
//! use skills_store_postgres::{PgOptions, PostgresStore};
//! use skills_store_traits::{NewAssignment, NewSkill, SkillStore, TenantId};
//!
//! # futures::executor::block_on(async {
//! let store = PostgresStore::open(PgOptions::new("postgres://skills@localhost/skills")).await?;
//! let acme = TenantId::new("acme");
//! let skill = store
//!     .create_skill(&acme, NewSkill::new("Deploy", "deploy", "# Deploy\n"))
//!     .await?;
//! store.create_assignment(&acme, NewAssignment::team(&skill.id, "ops")).await?;
//! let assigned = store.assignments_for_agent(&acme, "agent-7", Some("ops")).await?;
//! assert_eq!(assigned[0].skill.slug, "deploy");
//! // Another tenant sees nothing, in the database too.
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

#[macro_use]
mod db;
mod agent_skills;
mod audit;
mod error;
mod learning;
mod memory;
mod packages;
mod permissions;
mod plans;
mod resolvable;
mod schema;
mod skills;
mod trust;

use std::fmt;
use std::future::Future;
use std::str::FromStr;
use std::sync::Arc;

use deadpool_postgres::{Manager, ManagerConfig, Pool, RecyclingMethod};
use skills_store_traits::{
    Clock, DEFAULT_PROJECTION_BUDGET, Result, StampedProjections, StoreLimits, SystemClock,
};

pub use error::Error;
pub use plans::ClaimedStep;

use db::Shared;
use error::Outcome;

/// How [`PostgresStore::open`] connects.
#[derive(Clone)]
#[non_exhaustive]
pub struct PgOptions {
    url: String,
    schema: Option<String>,
    pool_size: usize,
    synchronous_commit: bool,
    limits: StoreLimits,
    clock: Arc<dyn Clock>,
    projection_budget: usize,
}

impl fmt::Debug for PgOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // The URL may carry a password: never printed.
        f.debug_struct("PgOptions")
            .field("schema", &self.schema)
            .field("pool_size", &self.pool_size)
            .field("synchronous_commit", &self.synchronous_commit)
            .field("limits", &self.limits)
            .field("projection_budget", &self.projection_budget)
            .finish_non_exhaustive()
    }
}

impl PgOptions {
    /// Options for the database at `url` (a `postgres://` URL or a `key=value` connection
    /// string), with 16 pooled connections, the default limits and the system clock.
    pub fn new(url: impl Into<String>) -> Self {
        PgOptions {
            url: url.into(),
            schema: None,
            pool_size: 16,
            synchronous_commit: true,
            limits: StoreLimits::default(),
            clock: Arc::new(SystemClock),
            projection_budget: DEFAULT_PROJECTION_BUDGET,
        }
    }

    /// Keeps the store's tables in `schema` (created if missing; a lowercase identifier),
    /// set as every pooled connection's `search_path`. Several stores can share one
    /// database this way (tests use a fresh schema each).
    pub fn schema(mut self, schema: impl Into<String>) -> Self {
        self.schema = Some(schema.into());
        self
    }

    /// Sets the number of pooled connections (at least 1).
    pub fn pool_size(mut self, size: usize) -> Self {
        self.pool_size = size.max(1);
        self
    }

    /// Whether a commit waits for its write-ahead log record to reach the disk (the
    /// server's `synchronous_commit`; on by default, so an acknowledged write, an audit
    /// append included, survives a crash of the server's machine). Off trades the last
    /// commits on a crash for speed (the database stays consistent): for bulk loads and
    /// benchmarks' setup.
    pub fn synchronous_commit(mut self, on: bool) -> Self {
        self.synchronous_commit = on;
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

    /// Sets the most decoded text the store keeps between resolutions, in bytes
    /// ([`StampedProjections`]: a skill's columns are read and decoded again only when its
    /// row's stamp changed; 32 MiB by default; 0 keeps nothing and reads every skill's
    /// columns on every call).
    pub fn projection_budget(mut self, bytes: usize) -> Self {
        self.projection_budget = bytes;
        self
    }
}

/// Owns the store's runtime; shuts it down without blocking when the last store handle is
/// dropped (which may happen inside another runtime's task).
struct Runtime(Option<tokio::runtime::Runtime>);

impl Drop for Runtime {
    fn drop(&mut self) {
        if let Some(runtime) = self.0.take() {
            runtime.shutdown_background();
        }
    }
}

/// Every store trait on one PostgreSQL database. Cheap to clone: clones share the pool
/// and the runtime.
#[derive(Clone)]
pub struct PostgresStore {
    shared: Shared,
    runtime: Arc<Runtime>,
    handle: tokio::runtime::Handle,
    schema: Option<Arc<str>>,
}

impl fmt::Debug for PostgresStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PostgresStore")
            .field("schema", &self.schema)
            .field("limits", &self.shared.limits)
            .finish_non_exhaustive()
    }
}

impl PostgresStore {
    /// The schema version this crate creates and migrates databases to.
    pub const SCHEMA_VERSION: i64 = schema::LATEST;

    /// Connects, migrates the schema to [`PostgresStore::SCHEMA_VERSION`] and returns the
    /// store.
    pub async fn open(options: PgOptions) -> Result<Self, Error> {
        let PgOptions {
            url,
            schema,
            pool_size,
            synchronous_commit,
            limits,
            clock,
            projection_budget,
        } = options;
        let mut config = tokio_postgres::Config::from_str(&url)
            .map_err(|e| Error::Config(format!("the connection string: {e}")))?;
        // Session settings of every pooled connection, after the URL's own.
        let mut settings: Vec<String> = config
            .get_options()
            .map(str::to_owned)
            .into_iter()
            .collect();
        if let Some(schema) = &schema {
            if !schema::is_identifier(schema) {
                return Err(Error::Config(format!(
                    "schema `{schema}` is not a lowercase identifier"
                )));
            }
            settings.push(format!("-c search_path={schema}"));
        }
        if !synchronous_commit {
            settings.push("-c synchronous_commit=off".to_owned());
        }
        if !settings.is_empty() {
            config.options(settings.join(" "));
        }
        // A server that never answers fails the call instead of hanging it.
        if config.get_connect_timeout().is_none() {
            config.connect_timeout(std::time::Duration::from_secs(10));
        }
        if config.get_application_name().is_none() {
            config.application_name("skills-store-postgres");
        }
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name("skills-postgres")
            .enable_all()
            .build()
            .map_err(|e| Error::Runtime(format!("starting the runtime: {e}")))?;
        let handle = runtime.handle().clone();
        let runtime = Arc::new(Runtime(Some(runtime)));
        let manager = Manager::from_config(
            config,
            tokio_postgres::NoTls,
            ManagerConfig {
                recycling_method: RecyclingMethod::Fast,
            },
        );
        let pool = Pool::builder(manager)
            .max_size(pool_size)
            .build()
            .map_err(|e| Error::Config(format!("the pool: {e}")))?;
        let migrating = pool.clone();
        let schema_name = schema.clone();
        handle
            .spawn(async move {
                let mut conn = migrating.get().await.map_err(|e| Error::Pool {
                    operation: "opening the store",
                    message: e.to_string(),
                })?;
                schema::migrate(&mut conn, schema_name.as_deref()).await
            })
            .await
            .map_err(|e| Error::Runtime(format!("migrating: {e}")))??;
        Ok(PostgresStore {
            shared: Shared {
                pool,
                clock,
                limits,
                projections: Arc::new(StampedProjections::new(projection_budget)),
            },
            runtime,
            handle,
            schema: schema.map(Arc::from),
        })
    }

    /// The schema the store's tables are in, if one was set.
    pub fn schema_name(&self) -> Option<&str> {
        self.schema.as_deref()
    }

    /// The shared state a task needs.
    fn shared(&self) -> Shared {
        self.shared.clone()
    }

    /// Runs `task` on the store's runtime; its failures become store errors naming
    /// `operation`.
    async fn call<T: Send + 'static>(
        &self,
        operation: &'static str,
        task: impl Future<Output = Outcome<T>> + Send + 'static,
    ) -> Result<T> {
        // The runtime is kept alive by `self` until the task's result is in.
        let _runtime = &self.runtime;
        match self.handle.spawn(task).await {
            Ok(outcome) => outcome.map_err(|failure| failure.into_store(operation)),
            Err(join) => {
                Err(Error::Runtime(format!("the task of `{operation}` failed: {join}")).into())
            }
        }
    }
}
