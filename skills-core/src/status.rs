//! A skill's lifecycle status (seed 001): what catalogs mark and what selection skips.
//!
//! `deprecated` skills stay loadable and runnable when asked for by name, but nothing picks
//! them on its own; `stub` skills are placeholders, listed with a mark so a model does not
//! take them for the real thing. Both marks use the words of [`SkillStatus::note`], so every
//! catalog says the same.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::error::Error;

/// The SKILL.md `metadata` key a skill without a `skill.json` declares its status under
/// (`metadata: {status: deprecated}`); a manifest's own `status` wins over it.
pub const STATUS_METADATA_KEY: &str = "status";

/// A skill's lifecycle status.
///
/// ```
/// use skills_core::SkillStatus;
///
/// let status: SkillStatus = "deprecated".parse().unwrap();
/// assert!(status.is_deprecated());
/// assert_eq!(status.to_string(), "deprecated");
/// assert!(status.note().unwrap().starts_with("deprecated"));
/// assert_eq!(SkillStatus::Active.note(), None);
/// assert!("retired".parse::<SkillStatus>().is_err());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SkillStatus {
    /// Production-ready.
    Active,
    /// A placeholder with an in-memory implementation.
    Stub,
    /// Being phased out.
    Deprecated,
    /// Under development.
    Experimental,
}

impl SkillStatus {
    /// `active`, `stub`, `deprecated` or `experimental`.
    pub fn as_str(self) -> &'static str {
        match self {
            SkillStatus::Active => "active",
            SkillStatus::Stub => "stub",
            SkillStatus::Deprecated => "deprecated",
            SkillStatus::Experimental => "experimental",
        }
    }

    /// The status a word names, exactly as the seed spells it.
    pub(crate) fn parse(text: &str) -> Option<SkillStatus> {
        match text {
            "active" => Some(SkillStatus::Active),
            "stub" => Some(SkillStatus::Stub),
            "deprecated" => Some(SkillStatus::Deprecated),
            "experimental" => Some(SkillStatus::Experimental),
            _ => None,
        }
    }

    /// True for [`SkillStatus::Deprecated`]: never chosen automatically.
    pub fn is_deprecated(self) -> bool {
        self == SkillStatus::Deprecated
    }

    /// The mark a catalog shows beside the skill, for the statuses that need one
    /// (`deprecated`, `stub`); `None` for the others. One line, no markup characters, so it
    /// can go into Markdown, XML text and attributes alike.
    pub fn note(self) -> Option<&'static str> {
        match self {
            SkillStatus::Deprecated => {
                Some("deprecated: being phased out, use only when asked for by name")
            }
            SkillStatus::Stub => Some("stub: a placeholder with an in-memory implementation"),
            SkillStatus::Active | SkillStatus::Experimental => None,
        }
    }

    /// The note of an optional status (see [`SkillStatus::note`]).
    pub fn note_of(status: Option<SkillStatus>) -> Option<&'static str> {
        status.and_then(SkillStatus::note)
    }
}

impl fmt::Display for SkillStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for SkillStatus {
    type Err = Error;

    /// Parses one of the four words; surrounding whitespace and ASCII case are ignored, so
    /// a hand-written `Deprecated ` in metadata still counts.
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        SkillStatus::parse(&text.trim().to_ascii_lowercase()).ok_or_else(|| Error::UnknownStatus {
            word: text.to_owned(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_round_trip_and_only_two_are_marked() {
        for status in [
            SkillStatus::Active,
            SkillStatus::Stub,
            SkillStatus::Deprecated,
            SkillStatus::Experimental,
        ] {
            assert_eq!(status.as_str().parse::<SkillStatus>().ok(), Some(status));
            assert_eq!(
                serde_json::to_value(status).ok(),
                Some(serde_json::json!(status.as_str()))
            );
            let marked = matches!(status, SkillStatus::Stub | SkillStatus::Deprecated);
            assert_eq!(status.note().is_some(), marked, "{status}");
        }
        assert_eq!(" Deprecated ".parse().ok(), Some(SkillStatus::Deprecated));
        assert!("".parse::<SkillStatus>().is_err());
        assert_eq!(SkillStatus::note_of(None), None);
    }

    #[test]
    fn notes_hold_no_markup() {
        for note in [SkillStatus::Stub, SkillStatus::Deprecated]
            .iter()
            .filter_map(|s| s.note())
        {
            assert!(!note.contains(['<', '>', '&', '"', '\'', '[', ']', '*', '\n']));
        }
    }
}
