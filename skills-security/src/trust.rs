//! Trust levels and the access matrix (seed 000, section 1.3).
//!
//! Threat: a skill reading data above its standing (a community skill seeing an e-mail
//! address, any skill seeing health data without a human saying so for this run), or a
//! skill claiming a trusted source it does not come from. Guarantee: [`Clearance`] is
//! computed only from the matrix below; regulated data is granted only to core skills and
//! only with a [`RegulatedApproval`] naming the very execution; a source is trusted only
//! when its path segments begin with a configured owner/repository, compared whole.
//!
//! | trust level | may see |
//! |---|---|
//! | core | public, internal, confidential, restricted; regulated with per-execution approval |
//! | verified | public, internal |
//! | community | public |
//! | user | public, internal (their own data) |

use std::fmt;

use serde::Serialize;

use crate::Error;
use crate::classify::DataClass;

/// How far a skill is trusted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum TrustLevel {
    /// Built by the framework's team, fully audited.
    Core,
    /// From a trusted source, security reviewed.
    Verified,
    /// From a public registry, not reviewed.
    Community,
    /// Created by this user or tenant.
    User,
}

impl TrustLevel {
    /// The classes this level may see without any approval: the seed's `TRUST_DATA_ACCESS`.
    pub fn allowed_classes(self) -> &'static [DataClass] {
        use DataClass::*;
        match self {
            TrustLevel::Core => &[Public, Internal, Confidential, Restricted],
            TrustLevel::Verified | TrustLevel::User => &[Public, Internal],
            TrustLevel::Community => &[Public],
        }
    }

    /// The level named `name` (`core`, `verified`, `community`, `user`).
    pub fn parse(name: &str) -> Option<TrustLevel> {
        [
            TrustLevel::Core,
            TrustLevel::Verified,
            TrustLevel::Community,
            TrustLevel::User,
        ]
        .into_iter()
        .find(|level| level.as_str() == name)
    }

    /// The level a stored or resolved skill runs at: the one it carries, and `Community`
    /// (the least) when it carries none or one this crate does not know. Unknown trust is
    /// never the tenant's own.
    pub fn of_skill(stored: Option<&str>) -> TrustLevel {
        stored
            .and_then(TrustLevel::parse)
            .unwrap_or(TrustLevel::Community)
    }

    /// The weaker of `self` and `ceiling`: community below user and verified (which see
    /// and may do the same), both below core; between user and verified, `self`. A host's
    /// configured level caps a skill's own, never raises it.
    pub fn at_most(self, ceiling: TrustLevel) -> TrustLevel {
        let rank = |level: TrustLevel| match level {
            TrustLevel::Community => 0,
            TrustLevel::User | TrustLevel::Verified => 1,
            TrustLevel::Core => 2,
        };
        if rank(ceiling) < rank(self) {
            ceiling
        } else {
            self
        }
    }

    /// The lowercase name (`"core"`).
    pub fn as_str(self) -> &'static str {
        match self {
            TrustLevel::Core => "core",
            TrustLevel::Verified => "verified",
            TrustLevel::Community => "community",
            TrustLevel::User => "user",
        }
    }
}

impl fmt::Display for TrustLevel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A human's approval for one execution of a core skill to see regulated data.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RegulatedApproval {
    execution: String,
    approved_by: String,
}

impl RegulatedApproval {
    /// `approved_by` approves regulated data for the execution `execution` only.
    pub fn new(execution: impl Into<String>, approved_by: impl Into<String>) -> RegulatedApproval {
        RegulatedApproval {
            execution: execution.into(),
            approved_by: approved_by.into(),
        }
    }

    /// The execution it is for.
    pub fn execution(&self) -> &str {
        &self.execution
    }

    /// Who approved.
    pub fn approved_by(&self) -> &str {
        &self.approved_by
    }
}

/// The set of classes someone may see.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Clearance {
    mask: u8,
}

impl Clearance {
    /// Nothing at all.
    pub const NONE: Clearance = Clearance { mask: 0 };
    /// Every class (for the data's owner, or a human recipient entitled to all of it).
    pub const ALL: Clearance = Clearance { mask: 0b1_1111 };

    /// Exactly these classes.
    pub fn of(classes: &[DataClass]) -> Clearance {
        Clearance {
            mask: classes.iter().fold(0, |m, c| m | (1 << c.index())),
        }
    }

    /// Every class up to and including `class`.
    pub fn up_to(class: DataClass) -> Clearance {
        Clearance {
            mask: (1u8 << (class.index() + 1)) - 1,
        }
    }

    /// What a skill of `level` may see in execution `execution`, with an optional approval.
    ///
    /// Regulated data is added only for [`TrustLevel::Core`] with an approval for this very
    /// execution; an approval for another execution is an error, and one given to a
    /// non-core skill grants nothing (the matrix does not allow it).
    ///
    /// ```
    /// use skills_security::{Clearance, DataClass, RegulatedApproval, TrustLevel};
    ///
    /// let approval = RegulatedApproval::new("exec-7", "dr.ortiz");
    /// let core = Clearance::for_skill(TrustLevel::Core, "exec-7", Some(&approval)).unwrap();
    /// assert!(core.allows(DataClass::Regulated));
    /// let community = Clearance::for_skill(TrustLevel::Community, "exec-7", Some(&approval)).unwrap();
    /// assert!(!community.allows(DataClass::Internal));
    /// assert!(Clearance::for_skill(TrustLevel::Core, "exec-8", Some(&approval)).is_err());
    /// ```
    pub fn for_skill(
        level: TrustLevel,
        execution: &str,
        approval: Option<&RegulatedApproval>,
    ) -> Result<Clearance, Error> {
        let mut c = Clearance::of(level.allowed_classes());
        if let Some(a) = approval {
            if a.execution != execution {
                return Err(Error::ApprovalMismatch {
                    approved: a.execution.clone(),
                    execution: execution.to_owned(),
                });
            }
            if level == TrustLevel::Core {
                c.mask |= 1 << DataClass::Regulated.index();
            }
        }
        Ok(c)
    }

    /// True when `class` may be seen.
    pub fn allows(self, class: DataClass) -> bool {
        self.mask & (1 << class.index()) != 0
    }

    /// The classes allowed, least sensitive first.
    pub fn classes(self) -> impl Iterator<Item = DataClass> {
        DataClass::ALL.into_iter().filter(move |c| self.allows(*c))
    }
}

/// The seed's trusted sources: skills from these repositories, served by the public git
/// host's API (`api.github.com`, the origin a trust path begins with), are verified when
/// fetched at an immutable reference. The same repositories through another origin (a
/// mirror) are not.
pub const DEFAULT_TRUSTED_SOURCES: [&str; 5] = [
    "api.github.com/anthropics/skills",
    "api.github.com/vercel-labs/agent-skills",
    "api.github.com/supabase/agent-skills",
    "api.github.com/expo/skills",
    "api.github.com/better-auth/skills",
];

/// Sources whose skills get [`TrustLevel::Verified`] automatically.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TrustedSources {
    sources: Vec<Vec<String>>,
}

impl Default for TrustedSources {
    fn default() -> Self {
        TrustedSources::new(DEFAULT_TRUSTED_SOURCES)
    }
}

fn segments(path: &str) -> Option<Vec<String>> {
    let path = path.trim_matches('/');
    let segs: Vec<String> = path.split('/').map(str::to_ascii_lowercase).collect();
    let bad = segs.iter().any(|s| {
        s.is_empty() || s == "." || s == ".." || s.chars().any(|c| c.is_control() || c == '\\')
    });
    (!bad && !segs.is_empty()).then_some(segs)
}

impl TrustedSources {
    /// Exactly these sources (owner/repository paths; invalid ones are ignored).
    pub fn new<I, S>(sources: I) -> TrustedSources
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        TrustedSources {
            sources: sources
                .into_iter()
                .filter_map(|s| segments(s.as_ref()))
                .collect(),
        }
    }

    /// True when `skill_path` (`api.github.com/anthropics/skills/pdf`: the origin, then
    /// owner, repository and path) lies under a trusted source.
    ///
    /// Segments are compared whole and case-insensitively (GitHub owners and repositories
    /// are), so `anthropics/skills-evil/x` and `anthropics/skills/../../evil/x` are not
    /// trusted, and neither is the same repository through another origin.
    ///
    /// ```
    /// use skills_security::{TrustLevel, TrustedSources};
    ///
    /// let trusted = TrustedSources::default();
    /// assert_eq!(trusted.level_for("api.github.com/anthropics/skills/pdf"), TrustLevel::Verified);
    /// assert_eq!(trusted.level_for("api.github.com/anthropics/skills-evil/pdf"), TrustLevel::Community);
    /// assert_eq!(trusted.level_for("mirror.example/anthropics/skills/pdf"), TrustLevel::Community);
    /// assert_eq!(trusted.level_for("anthropics/skills/pdf"), TrustLevel::Community);
    /// ```
    pub fn is_trusted(&self, skill_path: &str) -> bool {
        let Some(path) = segments(skill_path) else {
            return false;
        };
        self.sources
            .iter()
            .any(|src| path.len() > src.len() && path[..src.len()] == src[..])
    }

    /// Verified when trusted, community otherwise.
    pub fn level_for(&self, skill_path: &str) -> TrustLevel {
        if self.is_trusted(skill_path) {
            TrustLevel::Verified
        } else {
            TrustLevel::Community
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use DataClass::*;

    #[test]
    fn the_matrix_exactly() {
        let expect = [
            (
                TrustLevel::Core,
                vec![Public, Internal, Confidential, Restricted],
            ),
            (TrustLevel::Verified, vec![Public, Internal]),
            (TrustLevel::Community, vec![Public]),
            (TrustLevel::User, vec![Public, Internal]),
        ];
        for (level, classes) in expect {
            let c = Clearance::for_skill(level, "e", None).unwrap();
            assert_eq!(c.classes().collect::<Vec<_>>(), classes, "{level}");
        }
    }

    #[test]
    fn regulated_needs_core_and_this_execution() {
        let a = RegulatedApproval::new("e1", "alice");
        assert!(
            Clearance::for_skill(TrustLevel::Core, "e1", Some(&a))
                .unwrap()
                .allows(Regulated)
        );
        assert!(
            !Clearance::for_skill(TrustLevel::Core, "e1", None)
                .unwrap()
                .allows(Regulated)
        );
        for level in [
            TrustLevel::Verified,
            TrustLevel::Community,
            TrustLevel::User,
        ] {
            assert!(
                !Clearance::for_skill(level, "e1", Some(&a))
                    .unwrap()
                    .allows(Regulated)
            );
        }
        assert!(matches!(
            Clearance::for_skill(TrustLevel::Core, "e2", Some(&a)),
            Err(Error::ApprovalMismatch { .. })
        ));
    }

    #[test]
    fn trusted_source_spoofing_is_refused() {
        let t = TrustedSources::default();
        assert!(t.is_trusted("api.github.com/anthropics/skills/pdf"));
        assert!(t.is_trusted("API.GitHub.com/Anthropics/Skills/pdf"));
        assert!(t.is_trusted("/api.github.com/vercel-labs/agent-skills/x/"));
        for bad in [
            "anthropics/skills/pdf",
            "mirror.example/anthropics/skills/pdf",
            "api.github.com/anthropics/skills",
            "anthropics/skills-evil/pdf",
            "anthropics/skillsx/pdf",
            "evil/anthropics/skills/pdf",
            "anthropics/skills/../../evil/x",
            "anthropics//skills/pdf",
            "anthropics\\skills\\pdf",
            "",
        ] {
            assert!(!t.is_trusted(bad), "{bad:?}");
        }
        let custom = TrustedSources::new(["acme/skills"]);
        assert!(custom.is_trusted("acme/skills/a"));
        assert!(!custom.is_trusted("anthropics/skills/pdf"));
    }

    #[test]
    fn up_to_and_of() {
        assert_eq!(
            Clearance::up_to(Internal),
            Clearance::of(&[Public, Internal])
        );
        assert!(Clearance::ALL.allows(Regulated));
        assert!(!Clearance::NONE.allows(Public));
    }
}
