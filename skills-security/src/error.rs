//! The crate's error type.

use crate::autonomy::{RiskLevel, UpgradeChoice, UpgradeRefusal};
use crate::sanitize::OutputIssue;

/// Errors from `skills-security`.
///
/// No variant carries a raw sensitive value: a blocked output names the data types and byte
/// positions of what it found, never the text there, so the error can be logged as is.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A data type name is not usable in a token (`[NAME_001]`): it must be 1 to 32
    /// characters of `A-Z`, `0-9` and `_`, starting with a letter.
    #[error(
        "invalid data type name `{name}`: use 1-32 characters of A-Z, 0-9 and _, starting with A-Z"
    )]
    InvalidDataType {
        /// The rejected name (a type name, not data).
        name: String,
    },
    /// A regulated-data approval was given for a different execution than the one it is used in.
    #[error("the regulated-data approval is for execution `{approved}`, not `{execution}`")]
    ApprovalMismatch {
        /// The execution the approval names.
        approved: String,
        /// The execution it was presented to.
        execution: String,
    },
    /// The output of a skill was blocked because it holds data the skill was not cleared for,
    /// or tokens this execution never issued.
    #[error("skill output blocked: {}", describe(issues))]
    OutputBlocked {
        /// What was found, by type and byte position only.
        issues: Vec<OutputIssue>,
    },
    /// An autonomy upgrade option was chosen that the skill's risk level cannot honour
    /// (session trust below high risk, global approval at high risk, either at critical).
    #[error("`{choice}` cannot be granted to a {risk}-risk skill: {refusal}")]
    UpgradeUnavailable {
        /// The option chosen.
        choice: UpgradeChoice,
        /// The skill's risk.
        risk: RiskLevel,
        /// Why it cannot be honoured.
        refusal: UpgradeRefusal,
    },
    /// A store this crate drives (the trust history) failed.
    #[error(transparent)]
    Store(#[from] skills_store_traits::Error),
    /// A skill directory could not be read for scanning (the root is missing, not a
    /// directory, a symbolic link, or its entries cannot be listed).
    #[error("cannot scan `{path}`: {source}")]
    ScanIo {
        /// The directory or file that failed (a path, not content).
        path: String,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
}

fn describe(issues: &[OutputIssue]) -> String {
    let parts: Vec<String> = issues.iter().map(ToString::to_string).collect();
    parts.join("; ")
}
