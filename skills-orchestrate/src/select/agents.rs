//! Which skills each agent type may use (seed 000 section 2.1, `AGENT_SKILLS`).
//!
//! The map is configuration: [`AgentSkills::seed_defaults`] is the seed's table, and hosts
//! load their own from JSON (`{"HunterAgent": ["lead-research", ...], ...}`). An agent type
//! that is not in the map may use no skill, as in the seed (`AGENT_SKILLS.get(type, [])`).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// Agent types mapped to the skill ids they may use, each list in configuration order
/// without repeats.
///
/// ```
/// use skills_orchestrate::select::AgentSkills;
///
/// let seed = AgentSkills::seed_defaults();
/// assert!(seed.allows("ScribeAgent", "pdf"));
/// assert!(!seed.allows("ScoutAgent", "pdf"));
/// assert!(seed.skills_for("UnknownAgent").is_empty());
///
/// let custom = AgentSkills::from_json(r#"{"SupportAgent": ["crm-lookup", "email-draft"]}"#)?;
/// assert_eq!(custom.skills_for("SupportAgent"), ["crm-lookup", "email-draft"]);
/// # Ok::<(), skills_orchestrate::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(
    try_from = "BTreeMap<String, Vec<String>>",
    into = "BTreeMap<String, Vec<String>>"
)]
pub struct AgentSkills {
    map: BTreeMap<String, Vec<String>>,
}

const SEED: [(&str, &[&str]); 6] = [
    (
        "HunterAgent",
        &["competitor-analysis", "lead-research", "company-profiling"],
    ),
    (
        "AnalystAgent",
        &[
            "clinical-trial-analysis",
            "pubmed-research",
            "data-visualization",
            "statistical-analysis",
        ],
    ),
    (
        "StrategistAgent",
        &[
            "market-analysis",
            "competitive-positioning",
            "pricing-strategy",
            "launch-strategy",
        ],
    ),
    (
        "ScribeAgent",
        &[
            "pdf",
            "docx",
            "pptx",
            "xlsx",
            "email-sequence",
            "copywriting",
        ],
    ),
    (
        "OperatorAgent",
        &[
            "calendar-management",
            "crm-operations",
            "workflow-automation",
        ],
    ),
    (
        "ScoutAgent",
        &["regulatory-monitor", "news-aggregation", "signal-detection"],
    ),
];

impl AgentSkills {
    /// An empty map: no agent type may use any skill.
    pub fn new() -> Self {
        Self::default()
    }

    /// The seed's `AGENT_SKILLS` table (six agent types).
    pub fn seed_defaults() -> Self {
        SEED.iter().fold(Self::new(), |map, (agent, skills)| {
            map.with(*agent, skills.iter().copied())
        })
    }

    /// Adds (or replaces) the list of `agent_type`. Blank skill ids are dropped and repeats
    /// keep their first position.
    pub fn with<I, S>(mut self, agent_type: impl Into<String>, skills: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.insert(agent_type, skills);
        self
    }

    /// Adds (or replaces) the list of `agent_type`, returning the list it replaced.
    pub fn insert<I, S>(&mut self, agent_type: impl Into<String>, skills: I) -> Option<Vec<String>>
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        let mut list: Vec<String> = Vec::new();
        for skill in skills {
            let skill: String = skill.into().trim().to_owned();
            if !skill.is_empty() && !list.contains(&skill) {
                list.push(skill);
            }
        }
        self.map.insert(agent_type.into(), list)
    }

    /// The skills `agent_type` may use, in configuration order; empty for an unknown type.
    pub fn skills_for(&self, agent_type: &str) -> &[String] {
        self.map
            .get(agent_type)
            .map(Vec::as_slice)
            .unwrap_or_default()
    }

    /// Whether `agent_type` may use `skill_id`.
    pub fn allows(&self, agent_type: &str, skill_id: &str) -> bool {
        self.skills_for(agent_type).iter().any(|s| s == skill_id)
    }

    /// The configured agent types, sorted.
    pub fn agent_types(&self) -> impl Iterator<Item = &str> {
        self.map.keys().map(String::as_str)
    }

    /// Reads a map from JSON: an object of agent type to an array of skill ids.
    pub fn from_json(text: &str) -> Result<Self> {
        serde_json::from_str(text).map_err(|err| Error::Invalid {
            what: "agent skills map".into(),
            reason: err.to_string(),
        })
    }
}

impl TryFrom<BTreeMap<String, Vec<String>>> for AgentSkills {
    type Error = String;

    fn try_from(map: BTreeMap<String, Vec<String>>) -> std::result::Result<Self, String> {
        let mut out = AgentSkills::new();
        for (agent, skills) in map {
            if agent.trim().is_empty() {
                return Err("an agent type is empty".into());
            }
            if let Some(blank) = skills.iter().position(|s| s.trim().is_empty()) {
                return Err(format!("skill {blank} of agent type `{agent}` is empty"));
            }
            out.insert(agent, skills);
        }
        Ok(out)
    }
}

impl From<AgentSkills> for BTreeMap<String, Vec<String>> {
    fn from(skills: AgentSkills) -> Self {
        skills.map
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_seed_table_round_trips_through_json() {
        let seed = AgentSkills::seed_defaults();
        assert_eq!(seed.agent_types().count(), 6);
        assert_eq!(seed.skills_for("AnalystAgent").len(), 4);
        let text = serde_json::to_string(&seed).unwrap();
        assert_eq!(AgentSkills::from_json(&text).unwrap(), seed);
    }

    #[test]
    fn lists_are_cleaned_and_bad_maps_refused() {
        let map = AgentSkills::new().with("A", [" x ", "y", "x", ""]);
        assert_eq!(map.skills_for("A"), ["x", "y"]);
        assert!(AgentSkills::from_json(r#"{"A": ["x", " "]}"#).is_err());
        assert!(AgentSkills::from_json(r#"{"": ["x"]}"#).is_err());
        assert!(AgentSkills::from_json(r#"{"A": "x"}"#).is_err());
    }
}
