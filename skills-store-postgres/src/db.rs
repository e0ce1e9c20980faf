//! Connections and transactions: every store task runs on the store's own runtime, takes a
//! pooled connection, and works in one transaction scoped to one tenant.
//!
//! A transaction starts with `SET LOCAL`-style `set_config('skills.tenant', $1, true)`: the
//! row-level security policies of every table (see `schema`) compare each row's tenant with
//! that setting, so even a query that forgot its `tenant_id = $1` condition reads and
//! writes only the current tenant's rows. The setting is transaction-local, so a pooled
//! connection never carries one tenant's setting into another's transaction.
//!
//! A transaction that is dropped before [`Tx::commit`] (an error returned with `?`, a
//! panic, a cancelled task) is rolled back: the connection goes back to the pool only after
//! a `ROLLBACK`, and if even that cannot run it is closed (the server rolls back what a
//! closed connection left open). No partial write is ever committed.

use std::future::Future;
use std::sync::{Arc, Mutex};

/// Builds a record of `skills-store-traits` (their types are `#[non_exhaustive]`, so
/// another crate builds them through their serde form) from `"field": value` pairs, in a
/// function returning `Outcome`.
macro_rules! record {
    ($ty:ty { $($key:literal: $value:expr),* $(,)? }) => {{
        let mut object = serde_json::Map::new();
        $( object.insert($key.to_owned(), serde_json::to_value(&$value)?); )*
        serde_json::from_value::<$ty>(serde_json::Value::Object(object))?
    }};
}

use deadpool_postgres::{Object, Pool};
use serde::de::DeserializeOwned;
use skills_store_traits::{Clock, StampedProjections, StoreLimits};
use tokio_postgres::Row;
use tokio_postgres::types::{Json, ToSql};

use crate::error::{Failure, Outcome};

/// What every store task needs: the pool, the clock and the limits. Cheap to clone.
#[derive(Clone)]
pub(crate) struct Shared {
    pub(crate) pool: Pool,
    pub(crate) clock: Arc<dyn Clock>,
    pub(crate) limits: StoreLimits,
    /// Skills decoded by earlier resolutions, by stamp (shared by the store's clones).
    pub(crate) projections: Arc<StampedProjections>,
}

/// Which writers a transaction waits for: writers of the same kind of record in the same
/// tenant (or user), or of the same audit chain. Taken as a transaction-scoped advisory
/// lock, so it is released by the commit or rollback, whichever process holds it.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Domain {
    Skills,
    Audit,
    Trust,
    Memory,
    Packages,
    Learning,
    Permissions,
}

impl Domain {
    fn key(self) -> i32 {
        // Arbitrary constants, distinct per domain and from the migration lock's.
        match self {
            Domain::Skills => 0x5_1001,
            Domain::Audit => 0x5_1002,
            Domain::Trust => 0x5_1003,
            Domain::Memory => 0x5_1004,
            Domain::Packages => 0x5_1005,
            Domain::Learning => 0x5_1006,
            Domain::Permissions => 0x5_1007,
        }
    }
}

impl Shared {
    /// Begins a transaction for `tenant`.
    pub(crate) async fn begin(&self, tenant: &str) -> Outcome<Tx> {
        self.start(tenant, None).await
    }

    /// Begins a transaction for `tenant` and waits for the other writers of `domain` under
    /// `key` (the tenant, a user, a chain) to finish.
    pub(crate) async fn begin_write(&self, tenant: &str, domain: Domain, key: &str) -> Outcome<Tx> {
        self.start(tenant, Some((domain, key))).await
    }

    async fn start(&self, tenant: &str, lock: Option<(Domain, &str)>) -> Outcome<Tx> {
        let conn = self
            .pool
            .get()
            .await
            .map_err(|error| Failure::Pool(error.to_string()))?;
        let tx = Tx {
            conn: Some(conn),
            committed: false,
            pending: Mutex::new(None),
            begin: "BEGIN",
        };
        let Some((domain, key)) = lock else {
            // A reader's BEGIN and tenant go out with its first statement.
            *tx.pending()? = Some(tenant.to_owned());
            return Ok(tx);
        };
        let client = tx.client()?;
        let set_tenant = client.prepare_cached(SET_TENANT).await?;
        let take_lock = client
            .prepare_cached("SELECT pg_advisory_xact_lock($1, hashtext($2))")
            .await?;
        // BEGIN, the tenant and the lock go out together (the client pipelines requests
        // polled together, in order): one round trip to the server, not three.
        let lock_key = format!("{tenant}\u{1f}{key}");
        let domain_key = domain.key();
        let tenant_param: [&(dyn ToSql + Sync); 1] = [&tenant];
        let lock_params: [&(dyn ToSql + Sync); 2] = [&domain_key, &lock_key];
        let (begun, set, locked) = futures::join!(
            client.batch_execute("BEGIN"),
            client.execute(&set_tenant, &tenant_param),
            client.execute(&take_lock, &lock_params),
        );
        begun?;
        set?;
        locked?;
        Ok(tx)
    }
}

const SET_TENANT: &str = "SELECT set_config('skills.tenant', $1, true)";

/// How a read that must see one snapshot begins.
const BEGIN_SNAPSHOT: &str = "BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY";

/// The queries of [`Shared::read_snapshot`]: each statement with its parameters.
pub(crate) type Queries<'a> = [(&'a str, &'a [&'a (dyn ToSql + Sync)])];

impl Shared {
    /// Runs read-only `queries` for `tenant` in one transaction that sees one snapshot
    /// (`REPEATABLE READ, READ ONLY`), in one round trip: BEGIN, the tenant, every query and
    /// COMMIT go out together (the client pipelines requests polled together, in order).
    /// The COMMIT ends the transaction whatever happened (after a failed statement it rolls
    /// back), so the connection goes back to the pool idle and nothing is left to roll back.
    pub(crate) async fn read_snapshot(
        &self,
        tenant: &str,
        queries: &Queries<'_>,
    ) -> Outcome<Vec<Vec<Row>>> {
        let conn = self
            .pool
            .get()
            .await
            .map_err(|error| Failure::Pool(error.to_string()))?;
        let set_tenant = conn.prepare_cached(SET_TENANT).await?;
        let mut statements = Vec::with_capacity(queries.len());
        for (sql, _) in queries {
            statements.push(conn.prepare_cached(sql).await?);
        }
        let tenant_param: [&(dyn ToSql + Sync); 1] = [&tenant];
        let answers = futures::future::join_all(
            statements
                .iter()
                .zip(queries)
                .map(|(statement, (_, params))| conn.query(statement, params)),
        );
        let (begun, set, answers, committed) = futures::join!(
            conn.batch_execute(BEGIN_SNAPSHOT),
            conn.execute(&set_tenant, &tenant_param),
            answers,
            conn.batch_execute("COMMIT"),
        );
        begun?;
        set?;
        let rows = answers.into_iter().collect::<Result<Vec<_>, _>>()?;
        committed?;
        Ok(rows)
    }
}

/// One transaction on one pooled connection; rolled back unless committed.
pub(crate) struct Tx {
    conn: Option<Object>,
    committed: bool,
    /// A reader's tenant until its transaction is begun (with its first statement).
    pending: Mutex<Option<String>>,
    /// The statement that begins a reader's transaction.
    begin: &'static str,
}

impl Tx {
    fn client(&self) -> Outcome<&Object> {
        self.conn
            .as_ref()
            .ok_or_else(|| Failure::Pool("the transaction's connection is gone".to_owned()))
    }

    fn pending(&self) -> Outcome<std::sync::MutexGuard<'_, Option<String>>> {
        self.pending
            .lock()
            .map_err(|_| Failure::Pool("a store task panicked".to_owned()))
    }

    /// Awaits `request` (a statement on this transaction's connection), first beginning
    /// the transaction if it is a reader's that has not begun: BEGIN, the tenant and the
    /// statement then go out together, one round trip.
    async fn run<T>(
        &self,
        client: &Object,
        request: impl Future<Output = Result<T, tokio_postgres::Error>>,
    ) -> Outcome<T> {
        let tenant = self.pending()?.take();
        let Some(tenant) = tenant else {
            return Ok(request.await?);
        };
        let set_tenant = client.prepare_cached(SET_TENANT).await?;
        let tenant_param: [&(dyn ToSql + Sync); 1] = [&tenant];
        let (begun, set, answer) = futures::join!(
            client.batch_execute(self.begin),
            client.execute(&set_tenant, &tenant_param),
            request,
        );
        begun?;
        set?;
        Ok(answer?)
    }

    /// Runs a statement; the number of rows it touched.
    pub(crate) async fn execute(&self, sql: &str, params: &[&(dyn ToSql + Sync)]) -> Outcome<u64> {
        let client = self.client()?;
        let statement = client.prepare_cached(sql).await?;
        self.run(client, client.execute(&statement, params)).await
    }

    /// Runs a query; its rows.
    pub(crate) async fn query(
        &self,
        sql: &str,
        params: &[&(dyn ToSql + Sync)],
    ) -> Outcome<Vec<Row>> {
        let client = self.client()?;
        let statement = client.prepare_cached(sql).await?;
        self.run(client, client.query(&statement, params)).await
    }

    /// Runs a query expected to return at most one row.
    pub(crate) async fn query_opt(
        &self,
        sql: &str,
        params: &[&(dyn ToSql + Sync)],
    ) -> Outcome<Option<Row>> {
        let client = self.client()?;
        let statement = client.prepare_cached(sql).await?;
        self.run(client, client.query_opt(&statement, params)).await
    }

    /// Runs a query and decodes the JSON document in its first column of each row.
    pub(crate) async fn docs<T: DeserializeOwned>(
        &self,
        sql: &str,
        params: &[&(dyn ToSql + Sync)],
    ) -> Outcome<Vec<T>> {
        self.query(sql, params).await?.iter().map(doc).collect()
    }

    /// [`Tx::docs`] for at most one row.
    pub(crate) async fn doc_opt<T: DeserializeOwned>(
        &self,
        sql: &str,
        params: &[&(dyn ToSql + Sync)],
    ) -> Outcome<Option<T>> {
        self.query_opt(sql, params)
            .await?
            .as_ref()
            .map(doc)
            .transpose()
    }

    /// Commits; the transaction's writes are durable once this returns `Ok` (with the
    /// server's `synchronous_commit`, on by default).
    pub(crate) async fn commit(mut self) -> Outcome<()> {
        if self.pending()?.take().is_some() {
            // Nothing was run: nothing to commit.
            self.committed = true;
            return Ok(());
        }
        self.client()?.batch_execute("COMMIT").await?;
        self.committed = true;
        Ok(())
    }
}

impl Drop for Tx {
    fn drop(&mut self) {
        let begun = self.pending.get_mut().map(|p| p.is_none()).unwrap_or(true);
        if self.committed || !begun {
            // Committed, or never begun: the connection goes back to the pool as it is.
            return;
        }
        let Some(conn) = self.conn.take() else {
            return;
        };
        // Store tasks run on the store's runtime, so there is one to roll back on; the
        // connection returns to the pool only after its ROLLBACK succeeded.
        match tokio::runtime::Handle::try_current() {
            Ok(handle) => {
                handle.spawn(async move {
                    if conn.is_closed() || conn.batch_execute("ROLLBACK").await.is_err() {
                        drop(Object::take(conn));
                    }
                });
            }
            // Closing the connection makes the server roll the transaction back.
            Err(_) => drop(Object::take(conn)),
        }
    }
}

/// The JSON document in a row's first column.
pub(crate) fn doc<T: DeserializeOwned>(row: &Row) -> Outcome<T> {
    Ok(row.try_get::<_, Json<T>>(0)?.0)
}
