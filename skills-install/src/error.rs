//! The crate's one error type.

use skills_core::Diagnostic;

/// The result of every fallible call in this crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// What fetching, installing, updating or publishing a skill can fail with. Every variant
/// names what was refused and why; an install or update that returns one has left the
/// stores as they were (see [`Installer`](crate::Installer)).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The host's HTTP client failed to complete a request (connection, timeout, TLS).
    #[error("request to `{url}` failed: {message}")]
    Http {
        /// The URL requested.
        url: String,
        /// The client's account of the failure.
        message: String,
    },
    /// A server answered with a status the source does not accept.
    #[error("`{url}` answered HTTP {status}")]
    Status {
        /// The URL requested.
        url: String,
        /// The status code.
        status: u16,
    },
    /// A server refused because of its rate limit (HTTP 429, or 403 with no requests left).
    #[error("`{url}` is rate limited (HTTP {status}){}", retry_hint(*retry_after_secs, *reset_at))]
    RateLimited {
        /// The URL requested.
        url: String,
        /// 403 or 429.
        status: u16,
        /// The `retry-after` header, in seconds, when sent.
        retry_after_secs: Option<u64>,
        /// The `x-ratelimit-reset` header (Unix seconds), when sent.
        reset_at: Option<u64>,
    },
    /// The thing asked for does not exist at the source.
    #[error("{what} was not found")]
    NotFound {
        /// What was looked for (`skill `pdf``, `version 1.2.0 of `pdf``).
        what: String,
    },
    /// Untrusted input over a size or count limit.
    #[error("{what} exceeds the limit of {limit}")]
    TooLarge {
        /// What is too large.
        what: String,
        /// The limit.
        limit: u64,
    },
    /// A file path from a source that breaks the path rules (absolute, `..`, backslash,
    /// control characters, duplicate).
    #[error("refused path `{path}` from {origin}: {reason}")]
    UnsafePath {
        /// The path as received (escaped).
        path: String,
        /// Where it came from.
        origin: String,
        /// Which rule it broke.
        reason: String,
    },
    /// An entry of a kind that is never fetched (symlink, submodule, device).
    #[error("refused `{path}` from {origin}: a {kind} is never fetched")]
    UnsupportedEntry {
        /// The entry's path (escaped).
        path: String,
        /// Where it came from.
        origin: String,
        /// What it is.
        kind: String,
    },
    /// A response or document that could not be read.
    #[error("malformed {what}: {message}")]
    Malformed {
        /// What was being read (`npm metadata`, `GitHub contents listing`).
        what: String,
        /// What was wrong.
        message: String,
    },
    /// A locator, name or option the caller gave that cannot be used.
    #[error("invalid {what} `{value}`: {reason}")]
    InvalidInput {
        /// What it is (`npm package name`, `GitHub locator`).
        what: &'static str,
        /// The value (escaped).
        value: String,
        /// Why.
        reason: &'static str,
    },
    /// A downloaded artifact did not match the checksum its metadata declared.
    #[error("{what} failed its integrity check: expected {expected}, got {actual}")]
    IntegrityMismatch {
        /// The artifact.
        what: String,
        /// The declared checksum.
        expected: String,
        /// The computed checksum.
        actual: String,
    },
    /// A download whose only declared checksum is one this crate cannot compute (SHA-1),
    /// refused unless the source was told to accept it.
    #[error("{what} declares only a {algorithm} checksum, which is not verified; refused")]
    UnverifiableIntegrity {
        /// The artifact.
        what: String,
        /// The algorithm declared.
        algorithm: String,
    },
    /// Reading a portable document or archive failed (skills-catalog's safe import).
    #[error("reading {origin}: {source}")]
    Portable {
        /// Where the document came from.
        origin: String,
        /// The catalog's refusal.
        #[source]
        source: skills_catalog::Error,
    },
    /// A filesystem operation failed.
    #[error("{action} `{path}`: {source}")]
    Io {
        /// What was being done.
        action: &'static str,
        /// Where.
        path: String,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
    /// The package broke the Spec profile: every diagnostic found.
    #[error("`{skill}` is not a valid skill ({} problems): {}", diagnostics.len(), first_errors(diagnostics))]
    Invalid {
        /// The package's name.
        skill: String,
        /// Every diagnostic (errors and warnings), in the order found.
        diagnostics: Vec<Diagnostic>,
    },
    /// The security scan blocked the package and no override was given.
    #[error("`{skill}` was blocked by the security scan (score {score}): {summary}")]
    Blocked {
        /// The package's name.
        skill: String,
        /// The scan's risk score.
        score: u32,
        /// The blocking findings, `category:file:line` each.
        summary: String,
    },
    /// The package's digest is not the one the caller expected.
    #[error("digest mismatch for `{skill}`: expected {expected}, got {actual}")]
    DigestMismatch {
        /// The package's name.
        skill: String,
        /// The digest the caller gave.
        expected: String,
        /// The digest of what was fetched.
        actual: String,
    },
    /// An expected digest that is not `sha256:` and 64 lowercase hex digits.
    #[error("`{value}` is not a digest of the form `sha256:<64 hex digits>`")]
    BadDigest {
        /// The value given.
        value: String,
    },
    /// A package of this name is already installed in the tenant.
    #[error("`{name}` is already installed")]
    AlreadyInstalled {
        /// The package name.
        name: String,
    },
    /// The slug the skill would get is taken by a skill this installer does not manage.
    #[error("the slug `{slug}` is taken by a skill not installed from a package")]
    SlugTaken {
        /// The slug.
        slug: String,
    },
    /// No installed package has this name.
    #[error("`{name}` is not installed")]
    NotInstalled {
        /// The package name.
        name: String,
    },
    /// A version string that is not a semantic version.
    #[error("`{version}` is not a semantic version")]
    BadVersion {
        /// The value.
        version: String,
    },
    /// The same version was fetched again with different content: a moved tag or a
    /// republished version, refused rather than overwritten.
    #[error(
        "version {version} of `{name}` is stored with digest {stored}; the source now serves {fetched}"
    )]
    VersionConflict {
        /// The package.
        name: String,
        /// The version.
        version: String,
        /// The digest stored.
        stored: String,
        /// The digest fetched now.
        fetched: String,
    },
    /// A version that needs approval was asked to become current.
    #[error("version {version} of `{name}` needs approval first")]
    NeedsApproval {
        /// The package.
        name: String,
        /// The version.
        version: String,
    },
    /// A store refused or failed at a named step; what earlier steps wrote was undone.
    #[error("store failed while {step}: {source}")]
    Store {
        /// The step (`creating the skill`, `adding version 1.2.0`).
        step: String,
        /// The store's error.
        #[source]
        source: skills_store_traits::Error,
    },
    /// Undoing a failed step failed too: the stores may hold a partial install, listed here.
    #[error("{original}; undoing it also failed, leaving: {leftovers:?}")]
    Compensation {
        /// The error that started the undo.
        original: Box<Error>,
        /// What could not be removed (`skill <id>`, `package <id>`).
        leftovers: Vec<String>,
    },
    /// Appending the audit record failed; what was written was undone.
    #[error("audit append failed: {0}")]
    Audit(#[from] skills_security::audit::AuditError),
}

fn retry_hint(retry_after: Option<u64>, reset_at: Option<u64>) -> String {
    match (retry_after, reset_at) {
        (Some(secs), _) => format!("; retry after {secs} s"),
        (None, Some(at)) => format!("; the limit resets at {at} (Unix seconds)"),
        (None, None) => String::new(),
    }
}

fn first_errors(diagnostics: &[Diagnostic]) -> String {
    let errors: Vec<String> = diagnostics
        .iter()
        .filter(|d| d.is_error())
        .take(3)
        .map(ToString::to_string)
        .collect();
    errors.join("; ")
}

impl Error {
    /// A short stable name for the kind of error (`rate_limited`, `digest_mismatch`, ...),
    /// for machine-readable output and audit records.
    pub fn kind(&self) -> &'static str {
        match self {
            Error::Http { .. } => "http",
            Error::Status { .. } => "status",
            Error::RateLimited { .. } => "rate_limited",
            Error::NotFound { .. } => "not_found",
            Error::TooLarge { .. } => "too_large",
            Error::UnsafePath { .. } => "unsafe_path",
            Error::UnsupportedEntry { .. } => "unsupported_entry",
            Error::Malformed { .. } => "malformed",
            Error::InvalidInput { .. } => "invalid_input",
            Error::IntegrityMismatch { .. } => "integrity_mismatch",
            Error::UnverifiableIntegrity { .. } => "unverifiable_integrity",
            Error::Portable { .. } => "portable",
            Error::Io { .. } => "io",
            Error::Invalid { .. } => "invalid",
            Error::Blocked { .. } => "blocked",
            Error::DigestMismatch { .. } => "digest_mismatch",
            Error::BadDigest { .. } => "bad_digest",
            Error::AlreadyInstalled { .. } => "already_installed",
            Error::SlugTaken { .. } => "slug_taken",
            Error::NotInstalled { .. } => "not_installed",
            Error::BadVersion { .. } => "bad_version",
            Error::VersionConflict { .. } => "version_conflict",
            Error::NeedsApproval { .. } => "needs_approval",
            Error::Store { .. } => "store",
            Error::Compensation { .. } => "compensation",
            Error::Audit(_) => "audit",
        }
    }

    pub(crate) fn store(step: impl Into<String>, source: skills_store_traits::Error) -> Error {
        Error::Store {
            step: step.into(),
            source,
        }
    }

    pub(crate) fn malformed(what: impl Into<String>, message: impl Into<String>) -> Error {
        Error::Malformed {
            what: what.into(),
            message: message.into(),
        }
    }
}

/// Untrusted text made safe for an error message (no terminal controls, no bidi tricks).
pub(crate) fn shown(text: &str) -> String {
    skills_core::diagnostic::shown(text).into_owned()
}
