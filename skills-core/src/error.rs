//! The crate's error type, for the APIs that return `Result` rather than a report.

use std::path::PathBuf;

use crate::diagnostic::{Diagnostic, shown};

/// Errors from `skills-core`.
///
/// Loading and validation report problems as [`Diagnostic`]s rather than failing; this type
/// is for the convenience APIs that turn a report into a `Result`, and for the registry.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The subject is invalid; every diagnostic found is attached.
    #[error("invalid skill: {}", summarize(diagnostics))]
    Invalid {
        /// Every diagnostic, errors and warnings alike.
        diagnostics: Vec<Diagnostic>,
    },
    /// A file or directory could not be read or written.
    #[error("{}: {source}", path.display())]
    Io {
        /// The path concerned.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
    /// A skill with this name is already registered.
    #[error("a skill named `{name}` is already registered")]
    DuplicateSkill {
        /// The name.
        name: String,
    },
    /// No skill with this name is registered.
    #[error("no skill named `{name}` is registered")]
    UnknownSkill {
        /// The name.
        name: String,
    },
    /// A native skill's name breaks the naming agreement: it is not a name a skill directory
    /// could carry. Nothing was registered.
    #[error(
        "native skill name `{}` is invalid: {}",
        shown(name),
        summarize(diagnostics)
    )]
    InvalidName {
        /// The name as given.
        name: String,
        /// The name rules it breaks.
        diagnostics: Vec<Diagnostic>,
    },
    /// A word that is not one of seed 001's statuses (`active`, `stub`, `deprecated`,
    /// `experimental`).
    #[error(
        "`{}` is not one of active, stub, deprecated, experimental",
        shown(word)
    )]
    UnknownStatus {
        /// The word as given.
        word: String,
    },
}

fn summarize(diagnostics: &[Diagnostic]) -> String {
    let errors: Vec<String> = diagnostics
        .iter()
        .filter(|d| d.is_error())
        .map(ToString::to_string)
        .collect();
    if errors.is_empty() {
        "no usable document".to_owned()
    } else {
        errors.join("; ")
    }
}
