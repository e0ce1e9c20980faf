//! Validating a tool's input (or output) against its compiled schema.

use std::fmt;

use serde::Serialize;
use serde_json::Value;

/// The longest message kept for one violation, in characters.
///
/// Messages quote the offending value, and a model can send a megabyte string; the cap
/// keeps an error report small enough to hand back to the model.
pub const MAX_MESSAGE_CHARS: usize = 256;

/// One way an instance fails a schema.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct Violation {
    /// JSON Pointer to the offending value in the instance, e.g. `/items/2/name` (`""` is
    /// the whole input).
    pub instance_path: String,
    /// JSON Pointer to the failing keyword where it is written in the schema, `$ref`s
    /// followed: e.g. `/properties/items/items/required`, or `/$defs/Item/required` when
    /// `items` is `{"$ref": "#/$defs/Item"}`.
    pub schema_path: String,
    /// The failing keyword, e.g. `required`, `type`, `additionalProperties`.
    pub keyword: String,
    /// What is wrong, quoting at most [`MAX_MESSAGE_CHARS`] characters.
    pub message: String,
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let at = if self.instance_path.is_empty() {
            "/"
        } else {
            &self.instance_path
        };
        write!(f, "{at}: {} ({})", self.message, self.keyword)
    }
}

/// Every violation found in one instance, in the validator's order (deterministic for a
/// given schema and instance). Never empty when returned as an error.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(transparent)]
pub struct Violations(pub Vec<Violation>);

impl Violations {
    /// The violations.
    pub fn as_slice(&self) -> &[Violation] {
        &self.0
    }

    /// How many there are.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// True when there are none.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl fmt::Display for Violations {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, violation) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str("; ")?;
            }
            write!(f, "{violation}")?;
        }
        Ok(())
    }
}

/// Runs a compiled validator and collects every violation.
pub(crate) fn run(validator: &jsonschema::Validator, instance: &Value) -> Result<(), Violations> {
    // The cheap check first: a valid call, the common case, never builds an error.
    if validator.is_valid(instance) {
        return Ok(());
    }
    let violations: Vec<Violation> = validator
        .iter_errors(instance)
        .map(|err| Violation {
            instance_path: err.instance_path().as_str().to_owned(),
            schema_path: err.schema_path().as_str().to_owned(),
            keyword: err.kind().keyword().to_owned(),
            message: truncate(&err.to_string(), MAX_MESSAGE_CHARS),
        })
        .collect();
    if violations.is_empty() {
        // `is_valid` and `iter_errors` disagreeing would be a validator bug; still an error.
        return Err(Violations(vec![Violation {
            instance_path: String::new(),
            schema_path: String::new(),
            keyword: String::new(),
            message: "the input does not match the schema".into(),
        }]));
    }
    Err(Violations(violations))
}

fn truncate(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((end, _)) => format!("{}…", &text[..end]),
        None => text.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn validator(schema: Value) -> jsonschema::Validator {
        super::super::schema::compile("t", "input", &schema).unwrap()
    }

    #[test]
    fn reports_every_violation_with_nested_paths() {
        let v = validator(json!({
            "type": "object",
            "properties": {
                "items": {"type": "array", "items": {
                    "type": "object",
                    "properties": {"name": {"type": "string"}},
                    "required": ["name"]
                }},
                "limit": {"type": "integer", "minimum": 1}
            },
            "required": ["items"],
            "additionalProperties": false
        }));
        let input = json!({"items": [{"name": "a"}, {}, {"name": 3}], "limit": 0, "x": 1});
        let errors = run(&v, &input).unwrap_err();
        let mut found: Vec<(&str, &str)> = errors
            .as_slice()
            .iter()
            .map(|e| (e.instance_path.as_str(), e.keyword.as_str()))
            .collect();
        found.sort();
        assert_eq!(
            found,
            vec![
                ("", "additionalProperties"),
                ("/items/1", "required"),
                ("/items/2/name", "type"),
                ("/limit", "minimum"),
            ]
        );
        let name = errors
            .as_slice()
            .iter()
            .find(|e| e.instance_path == "/items/2/name")
            .unwrap();
        assert_eq!(
            name.schema_path,
            "/properties/items/items/properties/name/type"
        );
        assert!(run(&v, &json!({"items": []})).is_ok());
    }

    #[test]
    fn caps_messages() {
        let v = validator(json!({"type": "object", "properties": {"q": {"type": "integer"}}}));
        let errors = run(&v, &json!({"q": "x".repeat(100_000)})).unwrap_err();
        assert!(errors.as_slice()[0].message.chars().count() <= MAX_MESSAGE_CHARS + 1);
        assert_eq!(truncate("héllo", 2), "hé…");
        assert_eq!(truncate("hé", 2), "hé");
    }

    #[test]
    fn displays_paths() {
        let v = validator(json!({"type": "object", "required": ["q"]}));
        let text = run(&v, &json!({})).unwrap_err().to_string();
        assert!(text.starts_with("/: "), "{text}");
    }
}
