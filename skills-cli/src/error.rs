//! The command's one error type and the exit status each error means.

use std::path::PathBuf;

/// An exit status (see [`crate::cli::EXIT_CODES`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Status {
    /// 0: success.
    Ok = 0,
    /// 1: a check failed.
    Failed = 1,
    /// 2: usage error.
    Usage = 2,
    /// 3: blocked or denied.
    Denied = 3,
    /// 4: store, I/O or network error.
    Io = 4,
}

impl Status {
    /// The process exit code.
    pub fn code(self) -> u8 {
        self as u8
    }

    /// The worse of two statuses (a higher code is worse).
    pub fn max(self, other: Status) -> Status {
        std::cmp::max(self, other)
    }
}

/// Why a command could not do its work.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CliError {
    /// An argument that parses but makes no sense (an unknown source kind, a missing
    /// registry URL).
    #[error("{0}")]
    Usage(String),
    /// A file or directory could not be read or written.
    #[error("cannot {action} `{}`: {source}", path.display())]
    Io {
        /// What was being done.
        action: &'static str,
        /// Where.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The SQLite store could not be opened.
    #[error("cannot open the store `{}`: {source}", path.display())]
    OpenStore {
        /// The file.
        path: PathBuf,
        /// Why.
        source: skills_store_sqlite::Error,
    },
    /// A command that reads the store found no store file there (read commands never
    /// create one).
    #[error("no store at `{}`", .0.display())]
    NoStore(PathBuf),
    /// A store operation failed.
    #[error("store: {0}")]
    Store(#[from] skills_store_traits::Error),
    /// The install pipeline refused or failed.
    #[error(transparent)]
    Install(#[from] skills_install::Error),
    /// Reading the audit trail failed.
    #[error("audit: {0}")]
    Audit(#[from] skills_security::audit::AuditError),
    /// Materializing a stored skill failed.
    #[error("catalog: {0}")]
    Catalog(#[from] skills_catalog::Error),
    /// The HTTP client could not be built.
    #[error("http: {0}")]
    Http(#[from] skills_http::HttpError),
    /// A skill was not found or could not be loaded.
    #[error("{0}")]
    Skill(String),
    /// The skill is disabled (its install awaits approval, or an administrator turned it
    /// off).
    #[error("`{0}` is disabled (an install awaiting approval, or switched off)")]
    Disabled(String),
    /// The MCP server or client failed.
    #[error("mcp: {0}")]
    Mcp(#[from] skills_mcp::Error),
}

impl CliError {
    /// The exit status this error means.
    pub fn status(&self) -> Status {
        match self {
            CliError::Usage(_) => Status::Usage,
            CliError::Io { .. }
            | CliError::OpenStore { .. }
            | CliError::NoStore(_)
            | CliError::Store(_)
            | CliError::Audit(_)
            | CliError::Catalog(_)
            | CliError::Http(_) => Status::Io,
            CliError::Skill(_) => Status::Failed,
            CliError::Disabled(_) => Status::Denied,
            CliError::Mcp(e) => match e {
                skills_mcp::Error::Install(e) => install_status(e),
                skills_mcp::Error::UnsafePath { .. }
                | skills_mcp::Error::DigestMismatch { .. }
                | skills_mcp::Error::TooLarge { .. } => Status::Denied,
                skills_mcp::Error::Config(_) => Status::Usage,
                skills_mcp::Error::NotFound(_) => Status::Failed,
                _ => Status::Io,
            },
            CliError::Install(e) => install_status(e),
        }
    }

    /// A short machine-readable name for `--json` error documents.
    pub fn kind(&self) -> &'static str {
        match self {
            CliError::Usage(_) => "usage",
            CliError::Io { .. } => "io",
            CliError::OpenStore { .. } | CliError::NoStore(_) | CliError::Store(_) => "store",
            CliError::Install(_) => "install",
            CliError::Audit(_) => "audit",
            CliError::Catalog(_) => "catalog",
            CliError::Http(_) => "http",
            CliError::Skill(_) => "skill",
            CliError::Disabled(_) => "disabled",
            CliError::Mcp(_) => "mcp",
        }
    }
}

/// A command's result: its exit status, or an error (which carries its own).
pub type Result<T> = std::result::Result<T, CliError>;

/// The exit status an install error means.
fn install_status(e: &skills_install::Error) -> Status {
    use skills_install::Error as I;
    match e {
        I::Blocked { .. }
        | I::DigestMismatch { .. }
        | I::IntegrityMismatch { .. }
        | I::UnverifiableIntegrity { .. }
        | I::UnsafePath { .. }
        | I::UnsupportedEntry { .. } => Status::Denied,
        I::Http { .. }
        | I::Status { .. }
        | I::RateLimited { .. }
        | I::Io { .. }
        | I::Store { .. }
        | I::Compensation { .. }
        | I::Audit(_) => Status::Io,
        I::BadDigest { .. } => Status::Usage,
        _ => Status::Failed,
    }
}
