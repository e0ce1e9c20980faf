//! The skill-need analysis of seed 000 section 2.1: the JSON shape the model returns, its
//! schema (generated with schemars), and the checks an answer must pass before it is used.
//!
//! Threat: the model's answer is untrusted text (a prompt-injected task or skill description
//! can steer it). Guarantee: an analysis is accepted only when it is one JSON object that
//! satisfies [`SkillAnalysis::schema`] and names only skills available to the agent, each at
//! most once; anything else is refused with the list of reasons.

use std::collections::BTreeSet;
use std::sync::OnceLock;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// How the chosen skills should run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ExecutionApproach {
    /// One after another, each after the one before.
    #[default]
    Sequential,
    /// All at once, independent of each other.
    Parallel,
    /// All but the last at once; the last after all of them (gather, then combine).
    Hybrid,
}

/// A skill the task cannot do without.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct RequiredSkill {
    /// The skill's id, one of the available skills.
    #[schemars(length(min = 1))]
    pub skill_id: String,
    /// Why it is needed.
    pub reason: String,
    /// Whether the task fails without it.
    pub critical: bool,
}

/// A skill that would help but is not needed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct OptionalSkill {
    /// The skill's id, one of the available skills.
    #[schemars(length(min = 1))]
    pub skill_id: String,
    /// Why it could help.
    pub reason: String,
    /// What it would add.
    pub benefit: String,
}

/// Which skills a task needs: the JSON the model is asked for, exactly section 2.1's shape.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
pub struct SkillAnalysis {
    /// Whether any skill is needed.
    pub skills_needed: bool,
    /// The skills needed, in the order they should run.
    pub required_skills: Vec<RequiredSkill>,
    /// Skills that would help.
    pub optional_skills: Vec<OptionalSkill>,
    /// How the required skills should run.
    pub execution_approach: ExecutionApproach,
}

impl SkillAnalysis {
    /// The JSON Schema an answer must satisfy (draft 2020-12, generated from this type).
    pub fn schema() -> &'static Value {
        static SCHEMA: OnceLock<Value> = OnceLock::new();
        SCHEMA.get_or_init(|| {
            schemars::SchemaGenerator::default()
                .into_root_schema_for::<SkillAnalysis>()
                .to_value()
        })
    }

    /// Every skill id the analysis names, required first, in order.
    pub fn skill_ids(&self) -> impl Iterator<Item = &str> {
        self.required_skills
            .iter()
            .map(|s| s.skill_id.as_str())
            .chain(self.optional_skills.iter().map(|s| s.skill_id.as_str()))
    }

    /// Parses and checks a model's answer against the schema and the available skills.
    /// On refusal, every reason found (schema violations with their JSON pointers, unknown
    /// or repeated skills, an inconsistent `skills_needed`), in a stable order.
    pub fn parse(text: &str, available: &BTreeSet<String>) -> Result<SkillAnalysis, Vec<String>> {
        let value: Value = serde_json::from_str(strip_fence(text))
            .map_err(|err| vec![format!("the answer is not one JSON value: {err}")])?;
        let violations = schema_violations(&value);
        if !violations.is_empty() {
            return Err(violations);
        }
        let analysis: SkillAnalysis = serde_json::from_value(value).map_err(|err| {
            vec![format!(
                "the answer does not have the required shape: {err}"
            )]
        })?;
        let mut problems = Vec::new();
        let mut seen = BTreeSet::new();
        for id in analysis.skill_ids() {
            if !available.contains(id) {
                problems.push(format!("skill `{id}` is not one of the available skills"));
            } else if !seen.insert(id) {
                problems.push(format!("skill `{id}` is listed more than once"));
            }
        }
        match (analysis.skills_needed, analysis.required_skills.is_empty()) {
            (true, true) => {
                problems.push("skills_needed is true but required_skills is empty".into())
            }
            (false, false) => {
                problems.push("skills_needed is false but required_skills is not empty".into())
            }
            _ => {}
        }
        if problems.is_empty() {
            Ok(analysis)
        } else {
            Err(problems)
        }
    }
}

/// Models often wrap JSON in a Markdown fence even when told not to; the fence is not part of
/// the answer, so it is dropped before parsing (nothing else is).
fn strip_fence(text: &str) -> &str {
    let trimmed = text.trim();
    let Some(rest) = trimmed.strip_prefix("```") else {
        return trimmed;
    };
    let rest = rest.strip_prefix("json").unwrap_or(rest);
    rest.strip_suffix("```").map(str::trim).unwrap_or(trimmed)
}

fn schema_violations(value: &Value) -> Vec<String> {
    static VALIDATOR: OnceLock<Option<jsonschema::Validator>> = OnceLock::new();
    let Some(validator) =
        VALIDATOR.get_or_init(|| jsonschema::validator_for(SkillAnalysis::schema()).ok())
    else {
        // The schema is generated from a fixed type; failing to compile it is a build-level
        // bug, reported rather than letting unchecked answers through.
        return vec!["the analysis schema could not be compiled".into()];
    };
    validator
        .iter_errors(value)
        .map(|err| {
            let at = err.instance_path().as_str().to_owned();
            let at = if at.is_empty() { "/".to_owned() } else { at };
            format!("at {at}: {err}")
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn available() -> BTreeSet<String> {
        ["pdf", "docx"].into_iter().map(String::from).collect()
    }

    #[test]
    fn the_schema_requires_section_2_1s_fields() {
        let schema = SkillAnalysis::schema();
        let required: Vec<&str> = schema["required"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(Value::as_str)
            .collect();
        assert_eq!(
            required,
            [
                "skills_needed",
                "required_skills",
                "optional_skills",
                "execution_approach"
            ]
        );
    }

    #[test]
    fn a_fenced_valid_answer_is_accepted() {
        let answer = json!({
            "skills_needed": true,
            "required_skills": [{"skill_id": "pdf", "reason": "read it", "critical": true}],
            "optional_skills": [],
            "execution_approach": "sequential"
        });
        let text = format!("```json\n{answer}\n```");
        let analysis = SkillAnalysis::parse(&text, &available()).unwrap();
        assert_eq!(analysis.required_skills[0].skill_id, "pdf");
    }

    #[test]
    fn every_problem_is_reported() {
        let wrong = json!({"skills_needed": "yes", "required_skills": [{"skill_id": ""}]});
        let problems = SkillAnalysis::parse(&wrong.to_string(), &available()).unwrap_err();
        assert!(problems.len() >= 3, "{problems:?}");
        assert!(
            problems.iter().any(|p| p.contains("/skills_needed")),
            "{problems:?}"
        );
        let unknown = json!({
            "skills_needed": true,
            "required_skills": [
                {"skill_id": "pdf", "reason": "", "critical": true},
                {"skill_id": "pdf", "reason": "", "critical": false},
                {"skill_id": "rm-rf", "reason": "", "critical": false}
            ],
            "optional_skills": [],
            "execution_approach": "parallel"
        });
        let problems = SkillAnalysis::parse(&unknown.to_string(), &available()).unwrap_err();
        assert_eq!(
            problems,
            [
                "skill `pdf` is listed more than once",
                "skill `rm-rf` is not one of the available skills"
            ]
        );
        assert!(SkillAnalysis::parse("no json here", &available()).is_err());
    }
}
