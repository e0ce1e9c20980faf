//! Load-time checks of a tool schema, and a walker over the subschemas of a schema.
//!
//! A schema is checked and compiled once, when the tool is built, so that a bad schema is a
//! load-time error and a call only ever runs a compiled validator.

use serde_json::{Map, Value};

use super::error::ToolError;

/// The deepest JSON nesting (objects and arrays) a tool schema may have.
///
/// Every walker in this module and the validator recurse over a schema; the bound keeps
/// them far from the stack's end whatever built the value.
pub const MAX_SCHEMA_DEPTH: usize = 64;

/// The most JSON values (of any kind, at any depth) one tool schema may hold.
pub const MAX_SCHEMA_NODES: usize = 100_000;

/// The most regular expressions (`pattern` values and `patternProperties` keys) one tool
/// schema may hold; compiling each costs time.
pub const MAX_SCHEMA_PATTERNS: usize = 256;

/// The largest compiled size of one `pattern` regular expression (as for skill.json).
const MAX_PATTERN_BYTES: usize = 256 * 1024;

/// Keywords whose value is one subschema.
const SINGLE: &[&str] = &[
    "additionalItems",
    "additionalProperties",
    "contains",
    "else",
    "if",
    "not",
    "propertyNames",
    "then",
    "unevaluatedItems",
    "unevaluatedProperties",
];

/// Keywords whose value is an array of subschemas.
const LIST: &[&str] = &["allOf", "anyOf", "oneOf", "prefixItems"];

/// Keywords whose value maps names to subschemas.
const MAP: &[&str] = &[
    "$defs",
    "definitions",
    "dependencies",
    "dependentSchemas",
    "patternProperties",
    "properties",
];

/// What a keyword's value holds, for keywords whose value holds subschemas.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Slot {
    /// One subschema (`items` also takes an array in drafts before 2020-12).
    One,
    /// An array of subschemas.
    List,
    /// An object mapping names to subschemas.
    Map,
}

/// What `key`'s value holds, when it holds subschemas.
pub(crate) fn slot(key: &str) -> Option<Slot> {
    if key == "items" || SINGLE.contains(&key) {
        Some(Slot::One)
    } else if LIST.contains(&key) {
        Some(Slot::List)
    } else if MAP.contains(&key) {
        Some(Slot::Map)
    } else {
        None
    }
}

/// The direct subschemas of a schema object.
///
/// Values under `enum`, `const`, `default`, `examples` and unknown keywords are data, not
/// schemas, and are never visited: a property *named* `$id` is not the `$id` keyword.
fn subschemas_mut(map: &mut Map<String, Value>) -> Vec<&mut Value> {
    let mut out = Vec::new();
    for (key, value) in map.iter_mut() {
        match (slot(key), value) {
            (Some(Slot::One | Slot::List), Value::Array(items)) => out.extend(items.iter_mut()),
            (Some(Slot::Map), Value::Object(entries)) => out.extend(entries.values_mut()),
            (Some(Slot::One), value) => out.push(value),
            _ => {}
        }
    }
    out
}

/// Removes `keys` from `schema` and from every subschema in it.
pub(crate) fn strip_keys(schema: &mut Value, keys: &[&str]) {
    if let Value::Object(map) = schema {
        map.retain(|key, _| !keys.contains(&key.as_str()));
        for sub in subschemas_mut(map) {
            strip_keys(sub, keys);
        }
    }
}

/// The nesting depth of a JSON value (a scalar is 0) and how many values it holds, counted
/// without recursion and abandoned as soon as either bound is passed.
pub(crate) fn measure(value: &Value, max_depth: usize, max_nodes: usize) -> (usize, usize) {
    let mut stack = vec![(value, 0usize)];
    let (mut depth, mut nodes) = (0, 0);
    while let Some((value, level)) = stack.pop() {
        nodes += 1;
        depth = depth.max(level);
        if depth > max_depth || nodes > max_nodes {
            break;
        }
        match value {
            Value::Array(items) => stack.extend(items.iter().map(|v| (v, level + 1))),
            Value::Object(map) => stack.extend(map.values().map(|v| (v, level + 1))),
            _ => {}
        }
    }
    (depth, nodes)
}

/// How many regular expressions a value holds (`pattern` strings, `patternProperties` keys).
fn count_patterns(value: &Value) -> usize {
    match value {
        Value::Object(map) => map
            .iter()
            .map(|(key, v)| {
                let own = match (key.as_str(), v) {
                    ("pattern", Value::String(_)) => 1,
                    ("patternProperties", Value::Object(props)) => props.len(),
                    _ => 0,
                };
                own + count_patterns(v)
            })
            .sum(),
        Value::Array(items) => items.iter().map(count_patterns).sum(),
        _ => 0,
    }
}

/// Checks a tool schema and compiles it.
///
/// The schema must be a JSON object with `"type": "object"` at its root, within
/// [`MAX_SCHEMA_DEPTH`], [`MAX_SCHEMA_NODES`] and [`MAX_SCHEMA_PATTERNS`], valid against its
/// meta-schema (the draft its `$schema` names, 2020-12 without one), and compilable: every
/// `$ref` resolves inside the schema (nothing is ever fetched), and every `pattern` compiles
/// within 256 KiB and matches within a million backtracking steps, as for skill.json.
pub(crate) fn compile(
    tool: &str,
    which: &'static str,
    schema: &Value,
) -> Result<jsonschema::Validator, ToolError> {
    let invalid = |path: &str, message: String| ToolError::InvalidSchema {
        tool: tool.to_owned(),
        which,
        path: path.to_owned(),
        message,
    };
    let Value::Object(map) = schema else {
        return Err(invalid("", "the schema must be a JSON object".into()));
    };
    if map.get("type") != Some(&Value::String("object".into())) {
        return Err(invalid(
            "",
            "the schema must have `\"type\": \"object\"`".into(),
        ));
    }
    let (depth, nodes) = measure(schema, MAX_SCHEMA_DEPTH, MAX_SCHEMA_NODES);
    if depth > MAX_SCHEMA_DEPTH {
        return Err(invalid(
            "",
            format!("the schema nests deeper than {MAX_SCHEMA_DEPTH} levels"),
        ));
    }
    if nodes > MAX_SCHEMA_NODES {
        return Err(invalid(
            "",
            format!("the schema holds more than {MAX_SCHEMA_NODES} values"),
        ));
    }
    let patterns = count_patterns(schema);
    if patterns > MAX_SCHEMA_PATTERNS {
        return Err(invalid(
            "",
            format!(
                "the schema holds {patterns} regular expressions; at most {MAX_SCHEMA_PATTERNS} are allowed"
            ),
        ));
    }
    if let Err(err) = jsonschema::meta::validate(schema) {
        return Err(invalid(err.instance_path().as_str(), err.to_string()));
    }
    jsonschema::options()
        .with_pattern_options(
            jsonschema::PatternOptions::fancy_regex()
                .size_limit(MAX_PATTERN_BYTES)
                .dfa_size_limit(MAX_PATTERN_BYTES)
                .backtrack_limit(1_000_000),
        )
        .build(schema)
        .map_err(|err| invalid(err.instance_path().as_str(), err.to_string()))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn error(schema: Value) -> (String, String) {
        match compile("t", "input", &schema) {
            Err(ToolError::InvalidSchema { path, message, .. }) => (path, message),
            other => panic!("expected an invalid schema, got {other:?}"),
        }
    }

    #[test]
    fn compiles_an_object_schema() {
        let schema = json!({"type": "object", "properties": {"q": {"type": "string"}}});
        assert!(compile("t", "input", &schema).is_ok());
    }

    #[test]
    fn refuses_non_objects_and_other_root_types() {
        assert_eq!(error(json!(true)).0, "");
        assert!(
            error(json!({"type": "string"}))
                .1
                .contains("\"type\": \"object\"")
        );
        assert!(
            error(json!({"properties": {}}))
                .1
                .contains("\"type\": \"object\"")
        );
    }

    #[test]
    fn reports_where_a_schema_is_invalid() {
        let (path, _) = error(json!({"type": "object", "properties": {"q": {"type": 5}}}));
        assert_eq!(path, "/properties/q/type");
    }

    #[test]
    fn refuses_unresolvable_refs_at_load_time() {
        let schema = json!({"type": "object", "properties": {"q": {"$ref": "#/$defs/missing"}}});
        assert!(compile("t", "input", &schema).is_err());
        let remote = json!({"type": "object", "properties": {"q": {"$ref": "https://example.invalid/s.json"}}});
        assert!(compile("t", "input", &remote).is_err());
    }

    #[test]
    fn bounds_depth_and_patterns() {
        let mut deep = json!({"type": "string"});
        for _ in 0..40 {
            deep = json!({"type": "object", "properties": {"a": deep}});
        }
        assert!(error(deep).1.contains("deeper"));
        let props: Map<String, Value> = (0..300)
            .map(|i| (format!("p{i}"), json!({"type": "string", "pattern": "^a"})))
            .collect();
        let many = json!({"type": "object", "properties": props});
        assert!(error(many).1.contains("regular expressions"));
    }

    #[test]
    fn refuses_catastrophic_patterns() {
        let schema = json!({"type": "object", "properties": {"q": {"type": "string", "pattern": "((a{100}){100}){100}"}}});
        assert!(compile("t", "input", &schema).is_err());
    }

    #[test]
    fn walks_schema_positions_only() {
        let mut schema = json!({
            "$schema": "x", "type": "object",
            "properties": {"$schema": {"type": "string", "$schema": "y", "default": {"$schema": 1}}},
            "items": [{"$schema": "z"}],
            "anyOf": [{"$schema": "w"}]
        });
        strip_keys(&mut schema, &["$schema"]);
        assert_eq!(
            schema,
            json!({
                "type": "object",
                "properties": {"$schema": {"type": "string", "default": {"$schema": 1}}},
                "items": [{}],
                "anyOf": [{}]
            })
        );
    }

    #[test]
    fn measures_without_recursion() {
        let mut deep = json!(1);
        for _ in 0..1_000 {
            deep = json!([deep]);
        }
        assert_eq!(measure(&deep, 64, 1_000_000).0, 65);
        assert_eq!(measure(&deep, 2_000, 1_000_000), (1_000, 1_001));
    }
}
