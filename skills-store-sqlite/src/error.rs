//! Why opening a store failed, and how SQLite failures become store errors.

use skills_store_traits::Error as StoreError;

/// Why [`SqliteStore::open`](crate::SqliteStore::open) failed. Store calls themselves return
/// [`skills_store_traits::Error`].
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The file was written by a newer version of this crate: its schema is ahead of the
    /// migrations this version knows, so it is left untouched rather than misread.
    #[error(
        "the database schema is version {found}, newer than the {supported} this version of \
         skills-store-sqlite supports; open it with a newer version"
    )]
    SchemaTooNew {
        /// The file's `user_version`.
        found: i64,
        /// The newest version this crate migrates to.
        supported: i64,
    },
    /// The file's `user_version` is no version this crate ever wrote (it is negative).
    #[error("the database's schema version {found} is not one of skills-store-sqlite's")]
    UnknownSchema {
        /// The file's `user_version`.
        found: i64,
    },
    /// The database cannot be used the way the store needs it (for example, write-ahead
    /// logging is unavailable on its filesystem).
    #[error("the SQLite store cannot run here: {0}")]
    Unsupported(String),
    /// SQLite refused to open, configure or migrate the database.
    #[error("could not open the SQLite store: {message}")]
    Sqlite {
        /// What failed.
        message: String,
        /// The SQLite error.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// The thread that owns the connection could not be started, or stopped while opening.
    #[error("the SQLite worker thread failed: {0}")]
    Worker(String),
}

impl Error {
    pub(crate) fn sqlite(message: &str, source: rusqlite::Error) -> Self {
        Error::Sqlite {
            message: format!("{message}: {source}"),
            source: Box::new(source),
        }
    }
}

/// Opening failures surface as backend failures where a caller only deals in store errors.
impl From<Error> for StoreError {
    fn from(error: Error) -> Self {
        StoreError::Backend {
            message: error.to_string(),
            source: Some(Box::new(error)),
        }
    }
}

/// What a job on the worker thread fails with: a store refusal made by our own checks, or a
/// SQLite failure (kept apart so busy errors can be retried and constraints told apart).
#[derive(Debug)]
pub(crate) enum Failure {
    Store(StoreError),
    Sql(rusqlite::Error),
}

impl From<StoreError> for Failure {
    fn from(error: StoreError) -> Self {
        Failure::Store(error)
    }
}

impl From<rusqlite::Error> for Failure {
    fn from(error: rusqlite::Error) -> Self {
        Failure::Sql(error)
    }
}

/// The result of a job on the worker thread.
pub(crate) type Outcome<T> = std::result::Result<T, Failure>;

impl Failure {
    /// Whether another connection held a lock SQLite would not wait for: worth a retry.
    pub(crate) fn is_busy(&self) -> bool {
        matches!(
            self,
            Failure::Sql(error) if matches!(
                error.sqlite_error_code(),
                Some(rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked)
            )
        )
    }

    /// The store error: our refusals as they are, constraint violations as conflicts (the
    /// explicit checks name what clashed first; this is the backstop), anything else as a
    /// backend failure with its source.
    pub(crate) fn into_store(self) -> StoreError {
        match self {
            Failure::Store(error) => error,
            Failure::Sql(error)
                if error.sqlite_error_code() == Some(rusqlite::ErrorCode::ConstraintViolation) =>
            {
                StoreError::conflict("record", error.to_string())
            }
            Failure::Sql(error) => StoreError::Backend {
                message: format!("sqlite: {error}"),
                source: Some(Box::new(error)),
            },
        }
    }
}

/// A column that does not decode (bad JSON, an unknown word): the file was changed behind
/// the store's back.
pub(crate) fn corrupt(
    column: usize,
    error: impl std::error::Error + Send + Sync + 'static,
) -> rusqlite::Error {
    rusqlite::Error::FromSqlConversionFailure(column, rusqlite::types::Type::Text, Box::new(error))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn constraint_violations_are_conflicts_and_the_rest_backend_failures() {
        let conn = rusqlite::Connection::open_in_memory().unwrap();
        conn.execute_batch("CREATE TABLE t (k TEXT PRIMARY KEY); INSERT INTO t VALUES ('a');")
            .unwrap();
        let clash = conn.execute("INSERT INTO t VALUES ('a')", []).unwrap_err();
        assert!(matches!(
            Failure::from(clash).into_store(),
            StoreError::Conflict { .. }
        ));
        let bad = conn
            .execute("INSERT INTO missing VALUES (1)", [])
            .unwrap_err();
        let failure = Failure::from(bad);
        assert!(!failure.is_busy());
        match failure.into_store() {
            StoreError::Backend { source, .. } => assert!(source.is_some()),
            other => panic!("expected Backend, got {other:?}"),
        }
    }

    #[test]
    fn open_errors_read_well() {
        let error = Error::SchemaTooNew {
            found: 9,
            supported: 3,
        };
        assert!(error.to_string().contains("version 9, newer than the 3"));
        assert!(matches!(
            StoreError::from(error),
            StoreError::Backend { .. }
        ));
    }
}
