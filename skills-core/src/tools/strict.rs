//! OpenAI strict mode: rewriting a tool's input schema into the subset structured outputs
//! accept, or saying exactly where it cannot be.
//!
//! The rules implemented, applied to the root and recursively through `properties`,
//! `items`, `anyOf`, `$defs` and `definitions`:
//!
//! * The root must be an object schema and not a union (`anyOf` at the root is refused).
//! * Every object schema (one whose `type` is or includes `"object"`, or that has
//!   `properties`) gets `"additionalProperties": false` and lists *all* its properties in
//!   `required`. A property that was optional is made nullable instead: `"null"` is added to
//!   its `type` (and `null` to its `enum`), or, when it has no plain `type` (a `$ref`, an
//!   `anyOf`, a `const`), it is wrapped as `{"anyOf": [schema, {"type": "null"}]}`. A model
//!   then sends `null` for "not given"; `Tool::remove_strict_nulls` turns such input back
//!   into input for the original schema.
//! * `additionalProperties` set to anything but `false` (`true`, or a schema: a map) cannot
//!   be strict and is an error, as is a `required` name missing from `properties`.
//! * Kept: `type`, `properties`, `required`, `additionalProperties`, `items`, `anyOf`,
//!   `$ref` (local: `#` or `#/...`), `$defs`, `definitions`, `enum`, `const`, `description`,
//!   `pattern`, `minimum`, `maximum`, `exclusiveMinimum`, `exclusiveMaximum`, `multipleOf`,
//!   `minItems`, `maxItems`, and `format` when it is one of `date-time`, `time`, `date`,
//!   `duration`, `email`, `hostname`, `ipv4`, `ipv6`, `uuid`.
//! * Stripped, because they are annotations that never change what validates: `$schema`,
//!   `$id`, `$anchor`, `$comment`, `title`, `default`, `examples`, `deprecated`,
//!   `readOnly`, `writeOnly`, `contentEncoding`, `contentMediaType`, other `format`s, and
//!   keywords JSON Schema does not define (`x-...`, `nullable`, `example`).
//! * Refused, because dropping them would change what validates: `allOf`, `oneOf`, `not`,
//!   `if`/`then`/`else`, `dependentRequired`, `dependentSchemas`, `dependencies`,
//!   `patternProperties`, `propertyNames`, `unevaluatedProperties`, `unevaluatedItems`,
//!   `minProperties`, `maxProperties`, `contains`, `minContains`, `maxContains`,
//!   `prefixItems`, `additionalItems`, tuple `items`, `uniqueItems`, `minLength`,
//!   `maxLength`, `$dynamicRef`, `$recursiveRef`, and boolean schemas.
//! * A `$ref` with sibling keywords is replaced by the schema it names with the siblings
//!   merged over it (conflicting values are refused), as OpenAI's own SDK does; inside its
//!   own expansion a `$ref` stays a bare reference.
//! * At most 5,000 properties and 1,000 `enum` values in all.

use serde_json::{Map, Value, json};

use super::error::join;
use super::schema::MAX_SCHEMA_DEPTH;

/// Keywords strict mode keeps.
const KEPT: &[&str] = &[
    "$defs",
    "$ref",
    "additionalProperties",
    "anyOf",
    "const",
    "definitions",
    "description",
    "enum",
    "exclusiveMaximum",
    "exclusiveMinimum",
    "format",
    "items",
    "maxItems",
    "maximum",
    "minItems",
    "minimum",
    "multipleOf",
    "pattern",
    "properties",
    "required",
    "type",
];

/// Assertion keywords strict mode does not support and that cannot be dropped.
const REFUSED: &[&str] = &[
    "$dynamicRef",
    "$recursiveRef",
    "additionalItems",
    "allOf",
    "contains",
    "dependencies",
    "dependentRequired",
    "dependentSchemas",
    "else",
    "if",
    "maxContains",
    "maxLength",
    "maxProperties",
    "minContains",
    "minLength",
    "minProperties",
    "not",
    "oneOf",
    "patternProperties",
    "prefixItems",
    "propertyNames",
    "then",
    "unevaluatedItems",
    "unevaluatedProperties",
    "uniqueItems",
];

/// The `format` values strict mode accepts; other formats are annotations and are dropped.
const FORMATS: &[&str] = &[
    "date",
    "date-time",
    "duration",
    "email",
    "hostname",
    "ipv4",
    "ipv6",
    "time",
    "uuid",
];

/// The most properties a strict schema may hold, in all.
pub const MAX_STRICT_PROPERTIES: usize = 5_000;
/// The most `enum` values a strict schema may hold, in all.
pub const MAX_STRICT_ENUM_VALUES: usize = 1_000;
/// How many `$ref`s with siblings one conversion inlines before giving up.
const MAX_INLINES: usize = 256;

/// Where and why a schema cannot be made strict.
pub(crate) type Fail = (String, String);

fn fail<T>(path: &str, reason: impl Into<String>) -> Result<T, Fail> {
    Err((path.to_owned(), reason.into()))
}

struct Strict<'a> {
    root: &'a Value,
    properties: usize,
    enums: usize,
    inlines: usize,
    /// How many schemas deep the conversion is.
    depth: usize,
    /// The `$ref`s being inlined, innermost last.
    active: Vec<String>,
}

/// The strict-mode form of a tool input schema; see the module documentation.
pub(crate) fn strict_schema(schema: &Value) -> Result<Value, Fail> {
    let Value::Object(map) = schema else {
        return fail("", "the root must be an object schema");
    };
    if map.get("type") != Some(&Value::String("object".into())) {
        return fail("", "the root must have `\"type\": \"object\"`");
    }
    if map.contains_key("anyOf") {
        return fail("/anyOf", "the root cannot be a union (`anyOf`)");
    }
    let mut out = schema.clone();
    let mut state = Strict {
        root: schema,
        properties: 0,
        enums: 0,
        inlines: 0,
        depth: 0,
        active: Vec::new(),
    };
    state.node(&mut out, "")?;
    if state.properties > MAX_STRICT_PROPERTIES {
        return fail(
            "",
            format!(
                "{} properties; strict mode allows at most {MAX_STRICT_PROPERTIES}",
                state.properties
            ),
        );
    }
    if state.enums > MAX_STRICT_ENUM_VALUES {
        return fail(
            "",
            format!(
                "{} enum values; strict mode allows at most {MAX_STRICT_ENUM_VALUES}",
                state.enums
            ),
        );
    }
    Ok(out)
}

impl Strict<'_> {
    fn node(&mut self, value: &mut Value, path: &str) -> Result<(), Fail> {
        // Inlining `$ref`s can nest a schema deeper than it was written; bound the recursion.
        self.depth += 1;
        if self.depth > MAX_SCHEMA_DEPTH {
            return fail(
                path,
                format!("the schema nests deeper than {MAX_SCHEMA_DEPTH} levels"),
            );
        }
        let result = self.schema(value, path);
        self.depth -= 1;
        result
    }

    fn schema(&mut self, value: &mut Value, path: &str) -> Result<(), Fail> {
        let Value::Object(map) = value else {
            return fail(path, "boolean schemas cannot be strict");
        };
        self.filter_keywords(map, path)?;
        let mut expanded = 0;
        while map.contains_key("$ref") && map.len() > 1 {
            let Some(reference) = self.expand(map, path)? else {
                break;
            };
            // The guard stays while the expansion's subschemas are converted below.
            self.active.push(reference);
            expanded += 1;
            self.filter_keywords(map, path)?;
        }
        let result = self.convert(map, path);
        for _ in 0..expanded {
            self.active.pop();
        }
        result
    }

    fn convert(&mut self, map: &mut Map<String, Value>, path: &str) -> Result<(), Fail> {
        if let Some(reference) = map.get("$ref") {
            let local = reference
                .as_str()
                .is_some_and(|r| r == "#" || r.starts_with("#/"));
            if !local {
                return fail(
                    &join(path, "$ref"),
                    format!("`{reference}` is not a local reference"),
                );
            }
        }
        if let Some(Value::Array(values)) = map.get("enum") {
            self.enums += values.len();
        }
        if is_object_schema(map) {
            self.object(map, path)?;
        } else if map.contains_key("required") {
            return fail(
                &join(path, "required"),
                "`required` outside an object schema",
            );
        }
        match map.get_mut("items") {
            Some(items @ Value::Object(_)) => self.node(items, &join(path, "items"))?,
            Some(_) => return fail(&join(path, "items"), "tuple or boolean `items`"),
            None => {}
        }
        if let Some(any_of) = map.get_mut("anyOf") {
            let Value::Array(branches) = any_of else {
                return fail(&join(path, "anyOf"), "`anyOf` must be an array");
            };
            for (i, branch) in branches.iter_mut().enumerate() {
                self.node(branch, &format!("{path}/anyOf/{i}"))?;
            }
        }
        for defs in ["$defs", "definitions"] {
            if let Some(Value::Object(entries)) = map.get_mut(defs) {
                for (name, def) in entries.iter_mut() {
                    self.node(def, &join(&join(path, defs), name))?;
                }
            }
        }
        Ok(())
    }

    /// Drops annotations and unknown keywords; refuses what cannot be dropped.
    fn filter_keywords(&self, map: &mut Map<String, Value>, path: &str) -> Result<(), Fail> {
        if let Some(key) = map.keys().find(|k| REFUSED.contains(&k.as_str())) {
            return fail(
                &join(path, key),
                format!("`{key}` is not supported in strict mode"),
            );
        }
        map.retain(|key, value| match key.as_str() {
            "format" => value.as_str().is_some_and(|f| FORMATS.contains(&f)),
            key => KEPT.contains(&key),
        });
        Ok(())
    }

    fn object(&mut self, map: &mut Map<String, Value>, path: &str) -> Result<(), Fail> {
        match map.get("additionalProperties") {
            None | Some(Value::Bool(false)) => {}
            Some(_) => {
                return fail(
                    &join(path, "additionalProperties"),
                    "`additionalProperties` must be false (or absent) in strict mode",
                );
            }
        }
        map.insert("additionalProperties".into(), Value::Bool(false));
        let required: Vec<String> = match map.get("required") {
            None => Vec::new(),
            Some(Value::Array(names)) => names
                .iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect(),
            Some(_) => return fail(&join(path, "required"), "`required` must be an array"),
        };
        let properties = map
            .entry("properties")
            .or_insert_with(|| Value::Object(Map::new()));
        let Value::Object(properties) = properties else {
            return fail(&join(path, "properties"), "`properties` must be an object");
        };
        if let Some(missing) = required.iter().find(|n| !properties.contains_key(*n)) {
            return fail(
                &join(path, "required"),
                format!("required property `{missing}` is not in `properties`"),
            );
        }
        self.properties += properties.len();
        let props_path = join(path, "properties");
        for (name, sub) in properties.iter_mut() {
            self.node(sub, &join(&props_path, name))?;
            if !required.contains(name) {
                make_nullable(sub);
            }
        }
        let all: Vec<Value> = properties.keys().cloned().map(Value::String).collect();
        map.insert("required".into(), Value::Array(all));
        Ok(())
    }

    /// Replaces `{"$ref": r, ...siblings}` in place by the schema `r` names with the
    /// siblings merged over it, and returns `r`. When `r` is already being expanded, the
    /// siblings (annotations by now) are dropped instead and `None` returned.
    fn expand(&mut self, map: &mut Map<String, Value>, path: &str) -> Result<Option<String>, Fail> {
        let Some(Value::String(reference)) = map.get("$ref").cloned() else {
            return fail(&join(path, "$ref"), "`$ref` must be a string");
        };
        if self.active.contains(&reference) {
            if let Some(key) = map
                .keys()
                .find(|k| !matches!(k.as_str(), "$ref" | "description"))
            {
                return fail(
                    &join(path, key),
                    format!("`{key}` beside a recursive `$ref` cannot be strict"),
                );
            }
            map.retain(|k, _| k == "$ref");
            return Ok(None);
        }
        self.inlines += 1;
        if self.inlines > MAX_INLINES {
            return fail(path, "too many `$ref`s with sibling keywords to inline");
        }
        let target = reference
            .strip_prefix('#')
            .and_then(|pointer| self.root.pointer(pointer));
        let Some(Value::Object(target)) = target else {
            return fail(
                &join(path, "$ref"),
                format!("`{reference}` does not name a schema in this document"),
            );
        };
        let mut merged = target.clone();
        for (key, value) in map.iter() {
            if key == "$ref" {
                continue;
            }
            match merged.get(key) {
                Some(existing) if existing != value && key != "description" => {
                    return fail(
                        &join(path, key),
                        format!("`{key}` conflicts with the schema `{reference}` names"),
                    );
                }
                _ => {
                    merged.insert(key.clone(), value.clone());
                }
            }
        }
        *map = merged;
        Ok(Some(reference))
    }
}

fn is_object_schema(map: &Map<String, Value>) -> bool {
    match map.get("type") {
        Some(Value::String(t)) => t == "object",
        Some(Value::Array(types)) => types.iter().any(|t| t == "object"),
        _ => map.contains_key("properties"),
    }
}

fn admits_null(map: &Map<String, Value>) -> bool {
    match map.get("type") {
        Some(Value::String(t)) if t == "null" => return true,
        Some(Value::Array(types)) if types.iter().any(|t| t == "null") => return true,
        _ => {}
    }
    if let Some(Value::Array(branches)) = map.get("anyOf") {
        return branches
            .iter()
            .any(|b| b.as_object().is_some_and(admits_null));
    }
    false
}

/// Makes a property schema accept `null` as well.
fn make_nullable(schema: &mut Value) {
    let Value::Object(map) = schema else {
        return;
    };
    if admits_null(map) {
        return;
    }
    let plain_type =
        !map.contains_key("$ref") && !map.contains_key("anyOf") && !map.contains_key("const");
    match map.get_mut("type") {
        Some(Value::String(t)) if plain_type => {
            let t = std::mem::take(t);
            map.insert("type".into(), json!([t, "null"]));
        }
        Some(Value::Array(types)) if plain_type => types.push(json!("null")),
        _ => {
            let union_only =
                map.contains_key("anyOf") && map.keys().all(|k| k == "anyOf" || k == "description");
            if union_only {
                if let Some(Value::Array(branches)) = map.get_mut("anyOf") {
                    branches.push(json!({"type": "null"}));
                }
                return;
            }
            let description = map.remove("description");
            let inner = Value::Object(std::mem::take(map));
            map.insert("anyOf".into(), json!([inner, {"type": "null"}]));
            if let Some(d) = description {
                map.insert("description".into(), d);
            }
            return;
        }
    }
    if let Some(Value::Array(values)) = map.get_mut("enum")
        && !values.contains(&Value::Null)
    {
        values.push(Value::Null);
    }
}

/// Removes from `input` the `null`s a strict-mode model sends for properties the original
/// `schema` leaves optional and does not allow to be `null`, so that the input validates
/// against the original schema. Follows `properties` and `items` (not `$ref`s).
pub(crate) fn remove_nulls(schema: &Value, input: &mut Value) {
    let Some(map) = schema.as_object() else {
        return;
    };
    match input {
        Value::Object(fields) => {
            let Some(Value::Object(properties)) = map.get("properties") else {
                return;
            };
            let required: Vec<&str> = map
                .get("required")
                .and_then(Value::as_array)
                .map(|r| r.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            fields.retain(|name, value| {
                !(value.is_null()
                    && !required.contains(&name.as_str())
                    && properties
                        .get(name)
                        .and_then(Value::as_object)
                        .is_some_and(|p| !admits_null(p)))
            });
            for (name, value) in fields.iter_mut() {
                if let Some(sub) = properties.get(name) {
                    remove_nulls(sub, value);
                }
            }
        }
        Value::Array(items) => {
            if let Some(sub @ Value::Object(_)) = map.get("items") {
                for item in items {
                    remove_nulls(sub, item);
                }
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strict(schema: Value) -> Value {
        strict_schema(&schema).unwrap()
    }

    fn refused(schema: Value) -> Fail {
        strict_schema(&schema).unwrap_err()
    }

    #[test]
    fn closes_objects_and_requires_everything() {
        let out = strict(json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "title": "Args",
            "type": "object",
            "properties": {
                "q": {"type": "string", "description": "Query."},
                "n": {"type": "integer", "default": 5, "minimum": 1},
                "mode": {"type": "string", "enum": ["a", "b"]},
                "tags": {"type": "array", "items": {"type": "object", "properties": {"k": {"type": "string"}}}},
                "url": {"type": "string", "format": "uri"},
                "when": {"type": "string", "format": "date-time"}
            },
            "required": ["q"]
        }));
        assert_eq!(
            out,
            json!({
                "type": "object",
                "additionalProperties": false,
                "properties": {
                    "mode": {"type": ["string", "null"], "enum": ["a", "b", null]},
                    "n": {"type": ["integer", "null"], "minimum": 1},
                    "q": {"type": "string", "description": "Query."},
                    "tags": {"type": ["array", "null"], "items": {
                        "type": "object", "additionalProperties": false,
                        "properties": {"k": {"type": ["string", "null"]}}, "required": ["k"]
                    }},
                    "url": {"type": ["string", "null"]},
                    "when": {"type": ["string", "null"], "format": "date-time"}
                },
                "required": ["mode", "n", "q", "tags", "url", "when"]
            })
        );
    }

    #[test]
    fn wraps_refs_and_extends_unions() {
        let out = strict(json!({
            "type": "object",
            "properties": {
                "a": {"$ref": "#/$defs/A"},
                "b": {"anyOf": [{"type": "string"}, {"type": "integer"}], "description": "B"},
                "c": {"const": "x"},
                "d": {"type": ["string", "null"]}
            },
            "$defs": {"A": {"type": "object", "properties": {"x": {"type": "string"}}, "required": ["x"]}}
        }));
        assert_eq!(
            out["properties"]["a"],
            json!({"anyOf": [{"$ref": "#/$defs/A"}, {"type": "null"}]})
        );
        assert_eq!(out["properties"]["b"]["anyOf"][2], json!({"type": "null"}));
        assert_eq!(
            out["properties"]["c"],
            json!({"anyOf": [{"const": "x"}, {"type": "null"}]})
        );
        assert_eq!(out["properties"]["d"], json!({"type": ["string", "null"]}));
        assert_eq!(out["$defs"]["A"]["additionalProperties"], json!(false));
    }

    #[test]
    fn inlines_refs_with_siblings() {
        let out = strict(json!({
            "type": "object",
            "properties": {"a": {"$ref": "#/$defs/A", "description": "The A."}},
            "required": ["a"],
            "$defs": {"A": {"type": "object", "properties": {"x": {"type": "string"}}, "required": ["x"]}}
        }));
        assert_eq!(
            out["properties"]["a"],
            json!({"type": "object", "description": "The A.", "additionalProperties": false,
                   "properties": {"x": {"type": "string"}}, "required": ["x"]})
        );
    }

    #[test]
    fn recursive_refs_stay_references() {
        let out = strict(json!({
            "type": "object",
            "properties": {"root": {"$ref": "#/$defs/Node", "description": "Root."}},
            "required": ["root"],
            "$defs": {"Node": {"type": "object", "properties": {
                "children": {"type": "array", "items": {"$ref": "#/$defs/Node", "description": "Child."}}
            }, "required": ["children"]}}
        }));
        assert_eq!(
            out["properties"]["root"]["properties"]["children"]["items"],
            json!({"$ref": "#/$defs/Node"})
        );
    }

    #[test]
    fn names_the_path_of_what_cannot_be_strict() {
        let cases = [
            (
                json!({"type": "object", "additionalProperties": {"type": "string"}}),
                "/additionalProperties",
            ),
            (
                json!({"type": "object", "additionalProperties": true}),
                "/additionalProperties",
            ),
            (
                json!({"type": "object", "properties": {"m": {"type": "object", "patternProperties": {"^x": {}}}}}),
                "/properties/m/patternProperties",
            ),
            (
                json!({"type": "object", "properties": {"s": {"type": "string", "minLength": 1}}}),
                "/properties/s/minLength",
            ),
            (
                json!({"type": "object", "properties": {"s": {"oneOf": [{"type": "string"}]}}}),
                "/properties/s/oneOf",
            ),
            (
                json!({"type": "object", "properties": {"s": true}}),
                "/properties/s",
            ),
            (
                json!({"type": "object", "properties": {"t": {"type": "array", "items": [{"type": "string"}]}}}),
                "/properties/t/items",
            ),
            (
                json!({"type": "object", "properties": {"r": {"$ref": "other.json"}}}),
                "/properties/r/$ref",
            ),
            (
                json!({"type": "object", "required": ["ghost"]}),
                "/required",
            ),
            (
                json!({"type": "object", "anyOf": [{"type": "object"}]}),
                "/anyOf",
            ),
            (json!({"type": "array"}), ""),
            (
                json!({"type": "object", "$defs": {"a/b": {"not": {}}}}),
                "/$defs/a~1b/not",
            ),
        ];
        for (schema, path) in cases {
            assert_eq!(refused(schema.clone()).0, path, "{schema}");
        }
    }

    #[test]
    fn bounds_the_depth_of_inlined_refs() {
        // Each definition inlines the next: 100 levels once expanded.
        let mut defs = Map::new();
        for i in 0..100 {
            defs.insert(
                format!("D{i}"),
                json!({"type": "object", "properties": {"a": {"$ref": format!("#/$defs/D{}", i + 1), "description": "next"}}}),
            );
        }
        defs.insert("D100".into(), json!({"type": "string"}));
        let schema = json!({"type": "object", "properties": {"a": {"$ref": "#/$defs/D0", "description": "d"}}, "$defs": defs});
        assert!(refused(schema).1.contains("deeper"));
    }

    #[test]
    fn bounds_enum_values() {
        let values: Vec<Value> = (0..1_001).map(|i| json!(i)).collect();
        let schema =
            json!({"type": "object", "properties": {"e": {"enum": values}}, "required": ["e"]});
        assert!(refused(schema).1.contains("enum values"));
    }

    #[test]
    fn removes_the_nulls_strict_mode_adds() {
        let schema = json!({
            "type": "object",
            "properties": {
                "q": {"type": "string"},
                "n": {"type": "integer"},
                "z": {"type": ["integer", "null"]},
                "list": {"type": "array", "items": {"type": "object", "properties": {"k": {"type": "string"}}}}
            },
            "required": ["q"]
        });
        let mut input = json!({"q": "x", "n": null, "z": null, "list": [{"k": null}]});
        remove_nulls(&schema, &mut input);
        assert_eq!(input, json!({"q": "x", "z": null, "list": [{}]}));
    }
}
