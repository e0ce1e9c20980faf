//! The thread that owns the connection.
//!
//! Every store call becomes a job sent over a channel to one thread that owns the SQLite
//! connection; the caller awaits a `oneshot` reply. The caller's executor therefore never
//! waits on the disk, and no async runtime is imposed: any executor can await the reply.
//! Jobs run one at a time in arrival order, so the connection needs no lock, and a write's
//! read-check-write sequence (a compare-and-append, a counter increment) is one transaction.
//!
//! Write jobs run in `BEGIN IMMEDIATE` transactions: the write lock is taken up front, so a
//! transaction never has to upgrade from reading to writing (the upgrade is what fails with
//! `SQLITE_BUSY` without waiting when another process wrote in between). SQLite's busy
//! timeout waits for other processes' locks; a busy error that still escapes is retried here.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::mpsc;
use std::time::Duration;

use futures::channel::oneshot;
use rusqlite::{Connection, TransactionBehavior};
use skills_store_traits::{Error as StoreError, Result};

use crate::error::{Error, Outcome};

/// How often a transaction that hit a busy error is tried again, and the first pause.
const BUSY_RETRIES: u32 = 50;
const FIRST_BACKOFF: Duration = Duration::from_millis(2);
const MAX_BACKOFF: Duration = Duration::from_millis(100);

type Job = Box<dyn FnOnce(&mut Connection) + Send>;

/// A handle on the connection thread; clones share the thread, which ends (closing the
/// connection) when the last handle is dropped.
#[derive(Clone)]
pub(crate) struct Worker {
    jobs: mpsc::Sender<Job>,
}

impl Worker {
    /// Starts the thread, which opens the connection with `open`; resolves once it is open.
    pub(crate) async fn start(
        name: String,
        open: impl FnOnce() -> std::result::Result<Connection, Error> + Send + 'static,
    ) -> std::result::Result<Worker, Error> {
        let (jobs, inbox) = mpsc::channel::<Job>();
        let (ready, opened) = oneshot::channel();
        std::thread::Builder::new()
            .name(name)
            .spawn(move || match open() {
                Ok(mut conn) => {
                    let _ = ready.send(Ok(()));
                    // Ends when every sender is gone; the connection is closed on the way out.
                    while let Ok(job) = inbox.recv() {
                        job(&mut conn);
                    }
                }
                Err(error) => {
                    let _ = ready.send(Err(error));
                }
            })
            .map_err(|error| Error::Worker(error.to_string()))?;
        opened
            .await
            .map_err(|_| Error::Worker("stopped while opening".to_owned()))??;
        Ok(Worker { jobs })
    }

    /// Runs `job` on the connection thread and returns its result.
    async fn run<T: Send + 'static>(
        &self,
        job: impl FnOnce(&mut Connection) -> Result<T> + Send + 'static,
    ) -> Result<T> {
        let (reply, replied) = oneshot::channel();
        let job: Job = Box::new(move |conn| {
            // A panic in a job must not take the thread (and every later call) with it; the
            // transaction it held is rolled back when its guard unwinds.
            let result = catch_unwind(AssertUnwindSafe(|| job(conn)))
                .unwrap_or_else(|_| Err(StoreError::backend("a SQLite store job panicked")));
            let _ = reply.send(result);
        });
        self.jobs
            .send(job)
            .map_err(|_| StoreError::backend("the SQLite worker thread has stopped"))?;
        replied
            .await
            .map_err(|_| StoreError::backend("the SQLite worker thread stopped before replying"))?
    }

    /// Runs `job` in a read transaction, so its statements see one snapshot.
    pub(crate) async fn read<T: Send + 'static>(
        &self,
        job: impl FnMut(&Connection) -> Outcome<T> + Send + 'static,
    ) -> Result<T> {
        self.run(move |conn| transaction(conn, TransactionBehavior::Deferred, job))
            .await
    }

    /// Runs `job` in a write transaction: committed when it returns `Ok`, rolled back (and
    /// nothing written) when it returns `Err`.
    pub(crate) async fn write<T: Send + 'static>(
        &self,
        job: impl FnMut(&Connection) -> Outcome<T> + Send + 'static,
    ) -> Result<T> {
        self.run(move |conn| transaction(conn, TransactionBehavior::Immediate, job))
            .await
    }
}

/// Runs `job` in a transaction, again from the start when SQLite reports the database busy.
pub(crate) fn transaction<T>(
    conn: &mut Connection,
    behavior: TransactionBehavior,
    mut job: impl FnMut(&Connection) -> Outcome<T>,
) -> Result<T> {
    let mut backoff = FIRST_BACKOFF;
    let mut attempt = 0;
    loop {
        let outcome = (|| -> Outcome<T> {
            let tx = conn.transaction_with_behavior(behavior)?;
            let value = job(&tx)?;
            tx.commit()?;
            Ok(value)
        })();
        match outcome {
            Ok(value) => return Ok(value),
            Err(failure) if failure.is_busy() && attempt < BUSY_RETRIES => {
                attempt += 1;
                // Sleeping blocks only this thread, never the caller's executor.
                std::thread::sleep(backoff);
                backoff = (backoff * 2).min(MAX_BACKOFF);
            }
            Err(failure) => return Err(failure.into_store()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Failure;

    async fn worker() -> Worker {
        Worker::start("test".into(), || {
            let conn = Connection::open_in_memory().map_err(|e| Error::sqlite("open", e))?;
            conn.execute_batch("CREATE TABLE t (v INTEGER NOT NULL)")
                .map_err(|e| Error::sqlite("schema", e))?;
            Ok(conn)
        })
        .await
        .unwrap()
    }

    #[test]
    fn a_failed_write_leaves_nothing_and_a_panic_leaves_the_worker_running() {
        futures::executor::block_on(async {
            let worker = worker().await;
            let refused = worker
                .write(|conn| {
                    conn.execute("INSERT INTO t VALUES (1)", [])?;
                    Err::<(), _>(Failure::Store(StoreError::backend("refused")))
                })
                .await;
            assert!(refused.is_err());
            #[allow(clippy::panic)]
            let panicked = worker
                .write(|conn| -> Outcome<()> {
                    conn.execute("INSERT INTO t VALUES (2)", [])?;
                    panic!("boom")
                })
                .await;
            assert!(matches!(panicked, Err(StoreError::Backend { .. })));
            let count = worker
                .read(|conn| {
                    Ok(conn.query_row("SELECT COUNT(*) FROM t", [], |r| r.get::<_, i64>(0))?)
                })
                .await
                .unwrap();
            assert_eq!(count, 0);
        });
    }

    #[test]
    fn open_failures_are_reported() {
        let failed = futures::executor::block_on(Worker::start("test".into(), || {
            Err(Error::Worker("nope".into()))
        }));
        assert!(matches!(failed, Err(Error::Worker(_))));
    }
}
