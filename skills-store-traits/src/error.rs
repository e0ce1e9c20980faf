//! The one error type of every store call.

use std::fmt;

/// What a store call can fail with.
///
/// Validation refusals name the field and the rule ([`Error::Invalid`]); uniqueness clashes
/// name what clashed ([`Error::Conflict`]). A refused call changes nothing.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A field broke a rule; nothing was written.
    #[error("invalid `{field}`: {violation}")]
    Invalid {
        /// The field, as a path into the input (`slug`, `files[2].path`, `tags[0]`).
        field: String,
        /// The rule it broke.
        violation: Violation,
    },
    /// A uniqueness rule refused the write (a slug, an assignment, a file path, a step).
    #[error("{what} `{key}` already exists")]
    Conflict {
        /// What kind of record clashed (`skill slug`, `assignment`, `skill file`, ...).
        what: &'static str,
        /// The key that clashed.
        key: String,
    },
    /// A record the call needs does not exist in the caller's tenant (or for the caller's
    /// user). Another tenant's record is reported exactly like a missing one.
    #[error("{what} `{id}` not found")]
    NotFound {
        /// What kind of record (`skill`, `assignment`, `plan`, ...).
        what: &'static str,
        /// The id or key looked up.
        id: String,
    },
    /// A conditional write lost a race: the state it was conditioned on has moved (for
    /// example an audit chain's head). Retry with the current state.
    #[error("{what} changed concurrently: expected {expected}, found {found}")]
    Stale {
        /// What moved.
        what: &'static str,
        /// The state the caller expected.
        expected: String,
        /// The state the store holds.
        found: String,
    },
    /// The handle is read-only (see [`crate::read_only`]): the write was refused before the
    /// store saw it, so nothing changed.
    #[error("`{operation}` refused: this store handle is read-only")]
    ReadOnly {
        /// The trait method that was called (`add_fact`, `create_skill`, ...).
        operation: &'static str,
    },
    /// The backend failed (I/O, a database error, a poisoned lock).
    #[error("store backend failed: {message}")]
    Backend {
        /// What failed.
        message: String,
        /// The underlying error, when there is one.
        #[source]
        source: Option<Box<dyn std::error::Error + Send + Sync>>,
    },
}

impl Error {
    /// An [`Error::Invalid`] for `field`.
    pub fn invalid(field: impl Into<String>, violation: Violation) -> Self {
        Error::Invalid {
            field: field.into(),
            violation,
        }
    }

    /// An [`Error::NotFound`].
    pub fn not_found(what: &'static str, id: impl Into<String>) -> Self {
        Error::NotFound {
            what,
            id: id.into(),
        }
    }

    /// An [`Error::Conflict`].
    pub fn conflict(what: &'static str, key: impl Into<String>) -> Self {
        Error::Conflict {
            what,
            key: key.into(),
        }
    }

    /// An [`Error::Backend`] without a source.
    pub fn backend(message: impl Into<String>) -> Self {
        Error::Backend {
            message: message.into(),
            source: None,
        }
    }

    /// The violated rule, when this is [`Error::Invalid`].
    pub fn violation(&self) -> Option<&Violation> {
        match self {
            Error::Invalid { violation, .. } => Some(violation),
            _ => None,
        }
    }
}

/// The result of every store call.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// A validation rule a field broke (seed 002 sections 6.3 and 15.9, plus the record rules of
/// the other stores).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Violation {
    /// A slug must match `^[a-z][a-z0-9-]*$`.
    SlugFormat,
    /// A slug may have at most 64 characters.
    SlugTooLong {
        /// Its length in characters.
        chars: usize,
    },
    /// A name must have 1 to 128 characters.
    NameLength {
        /// Its length in characters.
        chars: usize,
    },
    /// A required text is empty (SKILL.md content, an id, a scope id).
    Empty,
    /// A category outside the predefined set.
    UnknownCategory,
    /// A trust level outside [`TRUST_LEVELS`](crate::TRUST_LEVELS).
    UnknownTrustLevel,
    /// A tag must match `^[a-z0-9-]+$`.
    TagFormat,
    /// At most 20 tags.
    TooManyTags {
        /// How many were given.
        count: usize,
    },
    /// `team` and `agent` assignments need a scope id.
    ScopeIdRequired,
    /// A `global` assignment takes no scope id.
    ScopeIdForbidden,
    /// A relative path broke a path rule (absolute, `..`, empty component, over 256 chars,
    /// control characters).
    Path(skills_core::files::PathProblem),
    /// `SKILL.md` is the skill's content, not a supporting file.
    ReservedPath,
    /// The same path twice in one write.
    DuplicatePath,
    /// Content that is not text (NUL bytes): binary files are not stored.
    Binary,
    /// A supporting file over the per-file limit (100 KB by default).
    FileTooLarge {
        /// Its size in bytes.
        bytes: u64,
        /// The limit.
        limit: u64,
    },
    /// A skill over the per-skill total (1 MB by default, SKILL.md included).
    SkillTooLarge {
        /// The total in bytes.
        bytes: u64,
        /// The limit.
        limit: u64,
    },
    /// A number outside its allowed range (a confidence outside 0..=1, a negative count).
    OutOfRange {
        /// The allowed range, for the message.
        expected: &'static str,
    },
    /// A value outside a fixed set of words (a status, a level).
    UnknownValue {
        /// The allowed values, for the message.
        expected: &'static str,
    },
    /// A plugin skill's content belongs to its plugin: admin edits are refused.
    ReadOnlyPluginSkill,
    /// A team or agent id that names no team or agent the host knows (checked where the
    /// host's directory is available, e.g. `skills-catalog`'s `Catalog::assign`).
    UnknownScopeTarget,
    /// A version that is not a canonical semantic version (`1.2.3`, `2.0.0-rc.1+build.5`;
    /// no leading `v`, no leading zeros).
    Version,
    /// A digest that is not `sha256:` followed by 64 lowercase hex digits.
    DigestFormat,
    /// A digest that does not match the content it describes.
    DigestMismatch,
    /// A list with more entries than its limit (files of a package version, steps of a
    /// sequence).
    TooMany {
        /// How many were given.
        count: usize,
        /// The limit.
        limit: usize,
    },
    /// A value (a changelog, a scan report) over its size limit.
    TooLarge {
        /// Its size in bytes.
        bytes: u64,
        /// The limit.
        limit: u64,
    },
    /// A status change the record's life cycle does not allow (a converted learning pattern
    /// going back to detected).
    Transition {
        /// The status the change starts from.
        from: &'static str,
        /// The status it asked for.
        to: &'static str,
    },
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Violation::SlugFormat => {
                f.write_str("must start with a-z and hold only a-z, 0-9 and `-`")
            }
            Violation::SlugTooLong { chars } => {
                write!(f, "is {chars} characters; the limit is 64")
            }
            Violation::NameLength { chars } => {
                write!(f, "is {chars} characters; it must be 1 to 128")
            }
            Violation::Empty => f.write_str("must not be empty"),
            Violation::UnknownCategory => write!(
                f,
                "must be one of {}",
                crate::skills::SKILL_CATEGORIES.join(", ")
            ),
            Violation::TagFormat => f.write_str("must hold only a-z, 0-9 and `-`"),
            Violation::TooManyTags { count } => write!(f, "has {count} tags; the limit is 20"),
            Violation::ScopeIdRequired => f.write_str("is required for team and agent scope"),
            Violation::ScopeIdForbidden => f.write_str("must be absent for global scope"),
            Violation::Path(problem) => write!(f, "{problem}"),
            Violation::ReservedPath => {
                f.write_str("`SKILL.md` is the skill's content, not a supporting file")
            }
            Violation::DuplicatePath => f.write_str("appears more than once"),
            Violation::UnknownTrustLevel => {
                f.write_str("is not a trust level (core, verified, community, user)")
            }
            Violation::Binary => f.write_str("is binary (holds NUL bytes); only text is stored"),
            Violation::FileTooLarge { bytes, limit } => {
                write!(f, "is {bytes} bytes; the per-file limit is {limit}")
            }
            Violation::SkillTooLarge { bytes, limit } => {
                write!(f, "totals {bytes} bytes; the per-skill limit is {limit}")
            }
            Violation::OutOfRange { expected } => write!(f, "must be {expected}"),
            Violation::UnknownValue { expected } => write!(f, "must be one of {expected}"),
            Violation::ReadOnlyPluginSkill => {
                f.write_str("belongs to a plugin skill, which only its plugin may change")
            }
            Violation::UnknownScopeTarget => f.write_str("names no known team or agent"),
            Violation::Version => f.write_str(
                "must be a semantic version such as 1.2.3 (no leading `v`, no leading zeros)",
            ),
            Violation::DigestFormat => {
                f.write_str("must be `sha256:` followed by 64 lowercase hex digits")
            }
            Violation::DigestMismatch => f.write_str("does not match the content"),
            Violation::TooMany { count, limit } => {
                write!(f, "has {count} entries; the limit is {limit}")
            }
            Violation::TooLarge { bytes, limit } => {
                write!(f, "is {bytes} bytes; the limit is {limit}")
            }
            Violation::Transition { from, to } => {
                write!(f, "cannot change from `{from}` to `{to}`")
            }
        }
    }
}
