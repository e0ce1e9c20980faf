//! The catalog's error type.

use std::path::PathBuf;

use skills_store_traits::Violation;

/// What a catalog operation can fail with. Every refusal names what was refused and why;
/// nothing is half-written when one is returned.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The store refused or failed (validation, uniqueness, not found, backend).
    #[error(transparent)]
    Store(#[from] skills_store_traits::Error),
    /// A field of imported or contributed input broke a rule.
    #[error("invalid `{field}`: {violation}")]
    Invalid {
        /// The field (`skill.slug`, `skill.files[3].path`, `archive:scripts/x.sh`).
        field: String,
        /// The rule.
        violation: Violation,
    },
    /// A portable document or archive could not be read.
    #[error("malformed {format}: {message}")]
    Malformed {
        /// `portable JSON` or `tar.gz archive`.
        format: &'static str,
        /// What was wrong.
        message: String,
    },
    /// An archive entry of a kind that is never imported (symlink, hard link, device, FIFO).
    #[error("archive entry `{path}` is a {kind}; only regular files and directories are imported")]
    UnsupportedEntry {
        /// The entry's path as written in the archive (escaped).
        path: String,
        /// What it is.
        kind: &'static str,
    },
    /// Input over a size or count limit.
    #[error("{what} exceeds the limit of {limit}")]
    TooLarge {
        /// What is too large.
        what: String,
        /// The limit.
        limit: u64,
    },
    /// A slug already exists and the caller chose to refuse clashes.
    #[error("a skill with slug `{slug}` already exists")]
    SlugExists {
        /// The slug.
        slug: String,
    },
    /// A path that would leave its root, pass through a symlink, or is not what it should
    /// be (the skills directory is a symlink, a plugin path escapes its install directory).
    #[error("refused unsafe path `{}`: {reason}", path.display())]
    UnsafePath {
        /// The path.
        path: PathBuf,
        /// Why.
        reason: &'static str,
    },
    /// A filesystem operation failed.
    #[error("{action} `{}`: {source}", path.display())]
    Io {
        /// What was being done.
        action: &'static str,
        /// Where.
        path: PathBuf,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
    /// A host callback (sandbox filesystem, agent directory) failed.
    #[error("{0}")]
    Host(String),
}

impl Error {
    /// A short stable name for the kind of error (`invalid`, `slug_exists`, `unsafe_path`,
    /// ...), for machine-readable output.
    pub fn kind(&self) -> &'static str {
        use skills_store_traits::Error as S;
        match self {
            Error::Store(S::Invalid { .. }) | Error::Invalid { .. } => "invalid",
            Error::Store(S::Conflict { .. }) | Error::SlugExists { .. } => "conflict",
            Error::Store(S::NotFound { .. }) => "not_found",
            Error::Store(_) => "store",
            Error::Malformed { .. } => "malformed",
            Error::UnsupportedEntry { .. } => "unsupported_entry",
            Error::TooLarge { .. } => "too_large",
            Error::UnsafePath { .. } => "unsafe_path",
            Error::Io { .. } => "io",
            Error::Host(_) => "host",
        }
    }

    pub(crate) fn io(
        action: &'static str,
        path: impl Into<PathBuf>,
        source: std::io::Error,
    ) -> Self {
        Error::Io {
            action,
            path: path.into(),
            source,
        }
    }

    pub(crate) fn invalid(field: impl Into<String>, violation: Violation) -> Self {
        Error::Invalid {
            field: field.into(),
            violation,
        }
    }
}

/// Re-labels a store validation error with a field prefix (`skill.` for imports).
pub(crate) fn prefixed(prefix: &str, error: skills_store_traits::Error) -> Error {
    match error {
        skills_store_traits::Error::Invalid { field, violation } => Error::Invalid {
            field: format!("{prefix}{field}"),
            violation,
        },
        other => Error::Store(other),
    }
}

/// The catalog's result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;
