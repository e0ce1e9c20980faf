//! LangChain-style tool JSON as tools.
//!
//! Accepted, one object or an array of them:
//!
//! * `{"name", "description", "args_schema" | "parameters" | "args"}`: `args_schema` and
//!   `parameters` are a JSON Schema object (what Pydantic's `model_json_schema()` gives);
//!   `args` is either such a schema or, as LangChain's `BaseTool.args` returns it, the map
//!   of properties alone, in which case a property without a `default` is taken as
//!   required. No schema at all means no input (`{"type": "object", "properties": {}}`).
//! * `{"type": "function", "function": {"name", "description", "parameters"}}`, the shape
//!   LangChain's `convert_to_openai_tool` emits.
//!
//! A schema without `type` but with `properties` gets `"type": "object"`. The name must
//! already be a valid tool name (it is what the host will be called with); `description`
//! may be missing (empty). Local `$ref`s (`#/$defs/...`, `#/definitions/...`) stay as they
//! are and are resolved by the validator; anything else unresolvable is an error.

use std::collections::BTreeSet;

use serde_json::{Map, Value, json};

use super::{ImportOptions, invalid, read_document, type_name};
use crate::tools::Tool;
use crate::tools::error::{ImportError, ToolError, join};

/// Imports LangChain tool JSON (one tool object or an array of them).
///
/// # Errors
///
/// [`ImportError`] for a document that cannot be read, a tool of the wrong shape (with its
/// path), an invalid name or schema, two tools with one name, or more than
/// [`ImportOptions::max_tools`] tools.
///
/// ```
/// use skills_core::tools::import::{ImportOptions, from_langchain};
///
/// let json = r#"[
///   {"name": "multiply", "description": "Multiply two integers.",
///    "args_schema": {"title": "MultiplyInput", "type": "object",
///                    "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
///                    "required": ["a", "b"]}},
///   {"type": "function", "function": {"name": "search", "description": "Search.",
///    "parameters": {"type": "object", "properties": {"q": {"type": "string"}}}}}
/// ]"#;
/// let tools = from_langchain(json.as_bytes(), &ImportOptions::default())?;
/// assert_eq!(tools[0].name(), "multiply");
/// assert_eq!(tools[1].name(), "search");
/// # Ok::<(), skills_core::tools::ImportError>(())
/// ```
pub fn from_langchain(bytes: &[u8], options: &ImportOptions) -> Result<Vec<Tool>, ImportError> {
    let value = read_document(bytes, options, false)?;
    from_langchain_value(&value, options)
}

/// Imports LangChain tool JSON already parsed.
///
/// # Errors
///
/// As [`from_langchain`].
pub fn from_langchain_value(
    value: &Value,
    options: &ImportOptions,
) -> Result<Vec<Tool>, ImportError> {
    let items: Vec<(String, &Value)> = match value {
        Value::Array(items) => items
            .iter()
            .enumerate()
            .map(|(i, item)| (format!("/{i}"), item))
            .collect(),
        other => vec![(String::new(), other)],
    };
    if items.len() > options.max_tools {
        return Err(ImportError::Limit {
            path: String::new(),
            message: format!(
                "{} tools; at most {} are imported",
                items.len(),
                options.max_tools
            ),
        });
    }
    let mut names = BTreeSet::new();
    let mut tools = Vec::with_capacity(items.len());
    for (path, item) in items {
        let tool = tool(item, &path)?;
        if !names.insert(tool.name().to_owned()) {
            return Err(invalid(
                &path,
                format!("a tool named `{}` is already defined", tool.name()),
            ));
        }
        tools.push(tool);
    }
    Ok(tools)
}

fn tool(item: &Value, path: &str) -> Result<Tool, ImportError> {
    let Value::Object(map) = item else {
        return Err(invalid(
            path,
            format!("expected a tool object, found {}", type_name(item)),
        ));
    };
    let (map, path) = match (map.get("type"), map.get("function")) {
        (Some(Value::String(t)), Some(Value::Object(function))) if t == "function" => {
            (function, join(path, "function"))
        }
        (Some(Value::String(t)), _) if t == "function" => {
            return Err(invalid(
                &join(path, "function"),
                "a function tool needs a `function` object",
            ));
        }
        _ => (map, path.to_owned()),
    };
    let name = match map.get("name") {
        Some(Value::String(name)) => name.clone(),
        Some(other) => {
            return Err(invalid(
                &join(&path, "name"),
                format!("expected a string, found {}", type_name(other)),
            ));
        }
        None => return Err(invalid(&path, "a tool needs a `name`")),
    };
    let description = match map.get("description") {
        None | Some(Value::Null) => String::new(),
        Some(Value::String(d)) => d.clone(),
        Some(other) => {
            return Err(invalid(
                &join(&path, "description"),
                format!("expected a string, found {}", type_name(other)),
            ));
        }
    };
    let present: Vec<&str> = ["args_schema", "parameters", "args"]
        .into_iter()
        .filter(|k| map.get(*k).is_some_and(|v| !v.is_null()))
        .collect();
    let schema = match present.as_slice() {
        [] => json!({"type": "object", "properties": {}}),
        [key] => {
            let at = join(&path, key);
            match map.get(*key) {
                Some(Value::Object(schema)) if *key == "args" && !is_schema(schema) => {
                    properties_only(schema)
                }
                Some(Value::Object(schema)) => with_object_type(schema),
                Some(other) => {
                    return Err(invalid(
                        &at,
                        format!("expected a JSON Schema object, found {}", type_name(other)),
                    ));
                }
                None => json!({"type": "object", "properties": {}}),
            }
        }
        keys => {
            return Err(invalid(
                &path,
                format!("give one of {}, not several", keys.join(", ")),
            ));
        }
    };
    Tool::new(name, description, schema).map_err(|source| {
        let at = match (&source, present.first()) {
            (ToolError::InvalidName { .. }, _) => join(&path, "name"),
            (_, Some(key)) => join(&path, key),
            (_, None) => path.clone(),
        };
        ImportError::Tool { path: at, source }
    })
}

/// True when the object looks like a whole schema rather than a map of properties.
fn is_schema(map: &Map<String, Value>) -> bool {
    map.get("type") == Some(&json!("object")) || map.contains_key("properties")
}

fn with_object_type(schema: &Map<String, Value>) -> Value {
    let mut schema = schema.clone();
    if !schema.contains_key("type") && schema.contains_key("properties") {
        schema.insert("type".into(), json!("object"));
    }
    Value::Object(schema)
}

fn properties_only(properties: &Map<String, Value>) -> Value {
    let required: Vec<&String> = properties
        .iter()
        .filter(|(_, p)| p.get("default").is_none())
        .map(|(name, _)| name)
        .collect();
    let mut schema = json!({"type": "object", "properties": properties});
    if !required.is_empty() {
        schema["required"] = json!(required);
    }
    schema
}

#[cfg(test)]
mod tests {
    use super::*;

    fn import(value: Value) -> Result<Vec<Tool>, ImportError> {
        from_langchain_value(&value, &ImportOptions::default())
    }

    #[test]
    fn reads_each_shape() {
        let tools = import(json!([
            {"name": "a", "description": "A.", "args_schema": {"properties": {"x": {"type": "integer"}}, "required": ["x"]}},
            {"name": "b", "description": "B.", "parameters": {"type": "object", "properties": {}}},
            {"name": "c", "args": {"q": {"type": "string"}, "n": {"type": "integer", "default": 3}}},
            {"type": "function", "function": {"name": "d", "description": "D.", "parameters": {"type": "object", "properties": {"y": {"$ref": "#/$defs/Y"}}, "$defs": {"Y": {"type": "string"}}}}},
            {"name": "e", "description": "E."}
        ]))
        .unwrap();
        let names: Vec<&str> = tools.iter().map(Tool::name).collect();
        assert_eq!(names, ["a", "b", "c", "d", "e"]);
        assert_eq!(tools[0].input_schema()["type"], "object");
        assert_eq!(tools[2].input_schema()["required"], json!(["q"]));
        assert_eq!(tools[2].description(), "");
        assert!(tools[3].validate_input(&json!({"y": 1})).is_err());
        assert_eq!(
            tools[4].input_schema(),
            &json!({"type": "object", "properties": {}})
        );
    }

    #[test]
    fn errors_say_where() {
        let cases = [
            (json!([{"name": "a"}, 5]), "/1"),
            (json!([{"name": 5}]), "/0/name"),
            (json!({"type": "function"}), "/function"),
            (
                json!({"type": "function", "function": {"name": "a", "parameters": {"type": "array"}}}),
                "/function/parameters",
            ),
            (json!({"name": "a b"}), "/name"),
            (
                json!({"name": "a", "args_schema": {}, "parameters": {}}),
                "",
            ),
            (json!({"name": "a", "args": "x"}), "/args"),
            (json!({"name": "a", "description": 1}), "/description"),
            (json!([{"name": "a"}, {"name": "a"}]), "/1"),
        ];
        for (value, path) in cases {
            let err = import(value.clone()).unwrap_err();
            assert_eq!(err.path(), Some(path), "{value}: {err}");
        }
    }

    #[test]
    fn bounds_the_number_of_tools() {
        let many: Vec<Value> = (0..300).map(|i| json!({"name": format!("t{i}")})).collect();
        assert!(matches!(
            import(json!(many)),
            Err(ImportError::Limit { .. })
        ));
    }
}
