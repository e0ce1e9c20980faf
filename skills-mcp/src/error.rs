//! The one error type of the crate.

/// What serving or fetching skills over MCP can fail with. Messages name URIs and skill
/// names, never the host's filesystem layout.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The transport could not be opened or broke (spawn failure, connection refused, the
    /// peer closed the stream).
    #[error("MCP transport failed: {0}")]
    Transport(String),
    /// A request did not complete in time (a server that never answers, an endless body).
    #[error("{what} did not complete within {seconds} s")]
    Timeout {
        /// The request.
        what: String,
        /// The limit.
        seconds: u64,
    },
    /// Untrusted input over a size or count limit.
    #[error("{what} exceeds the limit of {limit}")]
    TooLarge {
        /// What was too large.
        what: String,
        /// The limit.
        limit: u64,
    },
    /// A message that is not the JSON-RPC / MCP answer expected (malformed JSON, a result of
    /// the wrong shape, an entry that breaks SEP-2640's structural rules).
    #[error("malformed MCP answer for {what}: {message}")]
    Malformed {
        /// What was being read.
        what: String,
        /// What was wrong.
        message: String,
    },
    /// The server answered with a JSON-RPC error.
    #[error("the MCP server refused {what}: {message} (code {code})")]
    Server {
        /// The request.
        what: String,
        /// The JSON-RPC error code.
        code: i32,
        /// Its message.
        message: String,
    },
    /// A URI or path that leaves its skill (`..`, absolute, another skill, another scheme).
    #[error("refused `{uri}`: {reason}")]
    UnsafePath {
        /// The URI or path (escaped).
        uri: String,
        /// Which rule it broke.
        reason: String,
    },
    /// A file whose bytes do not match the manifest's size or digest.
    #[error("`{uri}` does not match its manifest: expected {expected}, got {actual}")]
    DigestMismatch {
        /// The file's URI.
        uri: String,
        /// What the manifest promised.
        expected: String,
        /// What arrived.
        actual: String,
    },
    /// The server does not serve what was asked (no skills extension, unknown skill).
    #[error("{0} was not found")]
    NotFound(String),
    /// Resolving the agent's catalog failed.
    #[error(transparent)]
    Catalog(#[from] skills_catalog::Error),
    /// The install pipeline refused the fetched skill.
    #[error(transparent)]
    Install(#[from] skills_install::Error),
    /// The audit trail could not record a read (reads are refused then).
    #[error("audit failed: {0}")]
    Audit(String),
    /// A listener or file could not be opened.
    #[error("{action}: {source}")]
    Io {
        /// What was being done.
        action: String,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// A host setting that cannot be used (an empty bearer token, a tool that is not a
    /// valid `Tool`).
    #[error("invalid configuration: {0}")]
    Config(String),
}

/// `Result` with this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Untrusted text made safe for an error message (no terminal controls, no bidi tricks),
/// and cut to a readable length.
pub(crate) fn shown(text: &str) -> String {
    let text: String = text.chars().take(200).collect();
    skills_core::diagnostic::shown(&text).into_owned()
}

impl Error {
    /// The same failure in `skills-install`'s terms, for the [`SkillSource`] trait.
    ///
    /// [`SkillSource`]: skills_install::SkillSource
    pub fn into_install(self, origin: &str) -> skills_install::Error {
        use skills_install::Error as I;
        match self {
            Error::Install(e) => e,
            Error::Transport(message) => I::Http {
                url: origin.to_owned(),
                message,
            },
            Error::Timeout { what, seconds } => I::Http {
                url: origin.to_owned(),
                message: format!("{what} did not complete within {seconds} s"),
            },
            Error::TooLarge { what, limit } => I::TooLarge { what, limit },
            Error::Malformed { what, message } => I::Malformed { what, message },
            Error::Server {
                what,
                code,
                message,
            } => I::Malformed {
                what,
                message: format!("server error {code}: {message}"),
            },
            Error::UnsafePath { uri, reason } => I::UnsafePath {
                path: uri,
                origin: origin.to_owned(),
                reason,
            },
            Error::DigestMismatch {
                uri,
                expected,
                actual,
            } => I::IntegrityMismatch {
                what: uri,
                expected,
                actual,
            },
            Error::NotFound(what) => I::NotFound { what },
            other => I::Malformed {
                what: format!("MCP server `{origin}`"),
                message: other.to_string(),
            },
        }
    }
}
