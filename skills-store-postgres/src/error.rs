//! The crate's error type, and how PostgreSQL failures become store errors.

use skills_store_traits::Error as StoreError;

/// What failed in the PostgreSQL store: the operation (a trait method such as
/// `create_skill`, or a step of opening such as `migrating the schema`) and, for a failure
/// the server reported, its SQLSTATE code.
///
/// Store calls return [`skills_store_traits::Error`]; a PostgreSQL failure arrives there as
/// [`skills_store_traits::Error::Backend`] whose `source` is this error, so a caller can
/// downcast it and read [`Error::code`] (a lost connection has no code: the server never
/// answered).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The server refused a statement, or the connection failed while one ran.
    #[error("postgres: {operation} failed{}: {}", code_suffix(.code.as_deref()), detail(.source))]
    Postgres {
        /// The operation that failed.
        operation: &'static str,
        /// The SQLSTATE code the server sent, `None` when it sent none (a lost connection).
        code: Option<String>,
        /// The client's error.
        #[source]
        source: tokio_postgres::Error,
    },
    /// No connection could be taken from the pool (the server is unreachable or refused
    /// the login).
    #[error("postgres: {operation}: no connection: {message}")]
    Pool {
        /// The operation that needed the connection.
        operation: &'static str,
        /// Why the pool had none.
        message: String,
    },
    /// A stored document does not decode: the row was changed behind the store's back.
    #[error("postgres: {operation}: a stored record does not decode: {message}")]
    Corrupt {
        /// The operation that read it.
        operation: &'static str,
        /// The decoder's message.
        message: String,
    },
    /// The connection string or options are not usable.
    #[error("postgres: invalid configuration: {0}")]
    Config(String),
    /// The database was migrated by a newer version of this crate; it is left untouched.
    #[error(
        "the database schema is version {found}, newer than the {supported} this version of \
         skills-store-postgres supports; open it with a newer version"
    )]
    SchemaTooNew {
        /// The newest version in `schema_migrations`.
        found: i64,
        /// The newest version this crate knows.
        supported: i64,
    },
    /// The store's background runtime could not be started or a task on it failed.
    #[error("postgres: {0}")]
    Runtime(String),
}

/// The server's message when it sent one (the client's own text is only "db error").
fn detail(source: &tokio_postgres::Error) -> String {
    match source.as_db_error() {
        Some(db) => format!("{}: {}", db.severity(), db.message()),
        None => source.to_string(),
    }
}

fn code_suffix(code: Option<&str>) -> String {
    code.map(|code| format!(" (SQLSTATE {code})"))
        .unwrap_or_default()
}

impl Error {
    /// The SQLSTATE code of a failure the server reported (for example `23505` for a
    /// unique violation, `42501` for a row-level security refusal).
    pub fn code(&self) -> Option<&str> {
        match self {
            Error::Postgres { code, .. } => code.as_deref(),
            _ => None,
        }
    }

    /// The operation that failed, where there was one.
    pub fn operation(&self) -> Option<&'static str> {
        match self {
            Error::Postgres { operation, .. }
            | Error::Pool { operation, .. }
            | Error::Corrupt { operation, .. } => Some(operation),
            _ => None,
        }
    }

    pub(crate) fn postgres(operation: &'static str, source: tokio_postgres::Error) -> Self {
        Error::Postgres {
            operation,
            code: source.code().map(|code| code.code().to_owned()),
            source,
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

/// What a store task fails with: a refusal made by our own checks, or a failure of the
/// database or the pool (kept apart so constraint violations can be told from the rest).
#[derive(Debug)]
pub(crate) enum Failure {
    Store(StoreError),
    Sql(tokio_postgres::Error),
    Pool(String),
    Decode(String),
}

impl From<StoreError> for Failure {
    fn from(error: StoreError) -> Self {
        Failure::Store(error)
    }
}

impl From<tokio_postgres::Error> for Failure {
    fn from(error: tokio_postgres::Error) -> Self {
        Failure::Sql(error)
    }
}

impl From<serde_json::Error> for Failure {
    fn from(error: serde_json::Error) -> Self {
        Failure::Decode(error.to_string())
    }
}

/// The result of a store task.
pub(crate) type Outcome<T> = std::result::Result<T, Failure>;

impl Failure {
    /// The store error: our refusals as they are, integrity violations (class 23) as
    /// conflicts (the explicit checks name what clashed first; this is the backstop),
    /// anything else as a backend failure whose source is an [`Error`] naming `operation`.
    pub(crate) fn into_store(self, operation: &'static str) -> StoreError {
        match self {
            Failure::Store(error) => error,
            Failure::Sql(error) if error.code().is_some_and(|c| c.code().starts_with("23")) => {
                let detail = error
                    .as_db_error()
                    .map(|db| db.message().to_owned())
                    .unwrap_or_else(|| error.to_string());
                StoreError::conflict("record", format!("{operation}: {detail}"))
            }
            Failure::Sql(error) => Error::postgres(operation, error).into(),
            Failure::Pool(message) => Error::Pool { operation, message }.into(),
            Failure::Decode(message) => Error::Corrupt { operation, message }.into(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refusals_stay_and_other_failures_name_the_operation() {
        let refusal = Failure::Store(StoreError::not_found("skill", "s")).into_store("find");
        assert!(matches!(refusal, StoreError::NotFound { .. }));
        let pool = Failure::Pool("refused".into()).into_store("create_skill");
        let StoreError::Backend { message, source } = pool else {
            panic!("expected a backend error");
        };
        assert!(message.contains("create_skill"), "{message}");
        let source = source.unwrap();
        let error = source.downcast_ref::<Error>().unwrap();
        assert_eq!(error.operation(), Some("create_skill"));
        assert_eq!(error.code(), None);
        let corrupt = Failure::Decode("bad".into()).into_store("list_skills");
        assert!(corrupt.to_string().contains("does not decode"));
    }

    #[test]
    fn open_errors_read_well() {
        let error = Error::SchemaTooNew {
            found: 9,
            supported: 1,
        };
        assert!(error.to_string().contains("version 9, newer than the 1"));
        assert!(matches!(
            StoreError::from(error),
            StoreError::Backend { .. }
        ));
    }
}
