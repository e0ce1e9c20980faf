//! OpenAPI 3.0 / 3.1 operations (the format of OpenAI Actions) as tools.
//!
//! Each operation under `paths` becomes one tool:
//!
//! * **Name**: the `operationId` with characters outside `A-Za-z0-9_-` replaced by `_`
//!   (runs collapsed, ends trimmed, cut to 64); without one, the method and path
//!   (`get /pets/{id}` → `get_pets_id`). A second operation with the same name is skipped.
//! * **Description**: `summary` and `description` joined by a blank line; `METHOD path`
//!   when both are missing.
//! * **Input schema**: an object whose properties are the path, query and header
//!   parameters (path-level parameters overridden by operation-level ones of the same name
//!   and location; `cookie` parameters are left out), each with its schema and its
//!   description, required when the parameter is (path parameters always are). A JSON
//!   request body (`application/json`, else a `+json` media type) that is a plain object
//!   schema has its properties merged in, when that causes no name clash and does not turn
//!   a property of an optional body into a required one; any other body becomes a property
//!   named `body`. [`OpenApiOperation::locations`] records where each property goes.
//! * **Schemas**: local `$ref`s (`#/...`) are resolved and inlined, for schemas,
//!   parameters and request bodies; a cycle, a remote reference, a chain longer than
//!   [`ImportOptions::max_ref_depth`] or a resolved schema larger than
//!   [`ImportOptions::max_schema_nodes`] makes that operation skipped with an error (and
//!   past [`ImportOptions::max_document_schema_nodes`], every operation after it).
//!   OpenAPI 3.0 keywords become JSON Schema 2020-12: `nullable: true` adds `"null"` to the
//!   `type` (and `null` to an `enum`), boolean `exclusiveMinimum`/`exclusiveMaximum` become
//!   numbers; `discriminator`, `xml`, `externalDocs`, `example` and `x-` extensions are
//!   dropped.
//!
//! A document that is not OpenAPI 3, or whose `paths` is malformed, is an error; a bad
//! operation is reported in [`OpenApiImport::skipped`] and the others are still imported.

use std::collections::BTreeMap;

use serde_json::{Map, Value, json};

use super::resolve::Reader;
use super::{ImportOptions, invalid, read_document, type_name};
use crate::tools::Tool;
use crate::tools::error::{ImportError, join};
use crate::tools::names::sanitize;

const METHODS: [&str; 8] = [
    "get", "put", "post", "delete", "options", "head", "patch", "trace",
];

/// Where an input property goes in the HTTP request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[non_exhaustive]
pub enum ParameterLocation {
    /// A path template variable.
    Path,
    /// A query string parameter.
    Query,
    /// A request header.
    Header,
    /// A property of the JSON request body, merged into the input.
    BodyProperty,
    /// The whole JSON request body (the input property `body`).
    Body,
}

/// One imported operation: the tool, and how to turn its input into a request.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct OpenApiOperation {
    /// The tool.
    pub tool: Tool,
    /// The HTTP method, upper case.
    pub method: String,
    /// The path template, as in the document.
    pub path: String,
    /// Where each input property goes.
    pub locations: BTreeMap<String, ParameterLocation>,
}

/// What an OpenAPI import produced.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct OpenApiImport {
    /// The operations imported, by path then method (get, put, post, delete, options,
    /// head, patch, trace).
    pub operations: Vec<OpenApiOperation>,
    /// Why each operation left out was left out.
    pub skipped: Vec<ImportError>,
}

impl OpenApiImport {
    /// The tools alone.
    pub fn into_tools(self) -> Vec<Tool> {
        self.operations.into_iter().map(|op| op.tool).collect()
    }
}

/// Imports the operations of an OpenAPI 3 document, JSON or YAML.
///
/// # Errors
///
/// [`ImportError`] when the document cannot be read or is not OpenAPI 3; problems of single
/// operations are reported in [`OpenApiImport::skipped`] instead.
///
/// ```
/// use skills_core::tools::import::{ImportOptions, from_openapi};
///
/// let doc = r#"
/// openapi: 3.0.3
/// info: {title: Pets, version: "1"}
/// paths:
///   /pets/{id}:
///     get:
///       operationId: getPet
///       summary: Get a pet by id.
///       parameters:
///         - {name: id, in: path, required: true, schema: {type: integer}}
///         - {name: fields, in: query, schema: {type: string, nullable: true}}
/// "#;
/// let import = from_openapi(doc.as_bytes(), &ImportOptions::default())?;
/// let tool = &import.operations[0].tool;
/// assert_eq!(tool.name(), "getPet");
/// assert_eq!(tool.input_schema()["required"][0], "id");
/// assert_eq!(tool.input_schema()["properties"]["fields"]["type"][1], "null");
/// # Ok::<(), skills_core::tools::ImportError>(())
/// ```
pub fn from_openapi(bytes: &[u8], options: &ImportOptions) -> Result<OpenApiImport, ImportError> {
    let doc = read_document(bytes, options, true)?;
    from_openapi_value(&doc, options)
}

/// Imports the operations of an OpenAPI 3 document already parsed.
///
/// # Errors
///
/// As [`from_openapi`].
pub fn from_openapi_value(
    doc: &Value,
    options: &ImportOptions,
) -> Result<OpenApiImport, ImportError> {
    let Value::Object(root) = doc else {
        return Err(invalid(
            "",
            format!("expected an OpenAPI object, found {}", type_name(doc)),
        ));
    };
    match root.get("openapi") {
        Some(Value::String(v)) if v.starts_with("3.") => {}
        Some(other) => {
            return Err(invalid(
                "/openapi",
                format!("expected OpenAPI 3.x, found {other}"),
            ));
        }
        None if root.contains_key("swagger") => {
            return Err(invalid(
                "/swagger",
                "Swagger 2.0 is not supported; convert it to OpenAPI 3",
            ));
        }
        None => return Err(invalid("", "no `openapi` version: not an OpenAPI document")),
    }
    let paths = match root.get("paths") {
        None => {
            return Ok(OpenApiImport {
                operations: Vec::new(),
                skipped: Vec::new(),
            });
        }
        Some(Value::Object(paths)) => paths,
        Some(other) => {
            return Err(invalid(
                "/paths",
                format!("expected an object, found {}", type_name(other)),
            ));
        }
    };
    let count: usize = paths
        .values()
        .filter_map(Value::as_object)
        .map(|item| METHODS.iter().filter(|m| item.contains_key(**m)).count())
        .sum();
    if count > options.max_tools {
        return Err(ImportError::Limit {
            path: "/paths".into(),
            message: format!(
                "{count} operations; at most {} are imported",
                options.max_tools
            ),
        });
    }
    let mut import = OpenApiImport {
        operations: Vec::new(),
        skipped: Vec::new(),
    };
    let mut names = BTreeMap::new();
    let mut reader = Reader {
        doc,
        options,
        nodes: 0,
        total: 0,
    };
    for (template, item) in paths {
        let item_path = join("/paths", template);
        let Value::Object(item) = item else {
            import
                .skipped
                .push(invalid(&item_path, "a path item must be an object"));
            continue;
        };
        for method in METHODS {
            let Some(operation) = item.get(method) else {
                continue;
            };
            let op_path = join(&item_path, method);
            reader.nodes = 0;
            match reader.operation(template, method, item, operation, &op_path) {
                Ok(op) => match names.get(op.tool.name()) {
                    Some(first) => import.skipped.push(invalid(
                        &op_path,
                        format!(
                            "tool name `{}` is already taken by `{first}`",
                            op.tool.name()
                        ),
                    )),
                    None => {
                        names.insert(op.tool.name().to_owned(), op_path);
                        import.operations.push(op);
                    }
                },
                Err(err) => import.skipped.push(err),
            }
        }
    }
    Ok(import)
}

impl Reader<'_> {
    fn operation(
        &mut self,
        template: &str,
        method: &str,
        item: &Map<String, Value>,
        operation: &Value,
        path: &str,
    ) -> Result<OpenApiOperation, ImportError> {
        let Value::Object(op) = operation else {
            return Err(invalid(path, "an operation must be an object"));
        };
        let name = match op.get("operationId") {
            Some(Value::String(id)) => sanitize(id),
            Some(other) => {
                return Err(invalid(
                    &join(path, "operationId"),
                    format!("expected a string, found {}", type_name(other)),
                ));
            }
            None => sanitize(&format!("{method} {template}")),
        }
        .ok_or_else(|| invalid(path, "no usable tool name in the operationId or the path"))?;
        let text = |key: &str| {
            op.get(key)
                .and_then(Value::as_str)
                .map(str::trim)
                .filter(|s| !s.is_empty())
        };
        let description = match (text("summary"), text("description")) {
            (Some(s), Some(d)) if s != d => format!("{s}\n\n{d}"),
            (Some(s), _) => s.to_owned(),
            (None, Some(d)) => d.to_owned(),
            (None, None) => format!("{} {template}", method.to_uppercase()),
        };

        let mut properties = Map::new();
        let mut required = Vec::new();
        let mut locations = BTreeMap::new();
        for (param_path, param) in self.parameters(item, op, path)? {
            let Some((name, location, schema, is_required)) =
                self.parameter(&param, &param_path)?
            else {
                continue;
            };
            if locations.contains_key(&name) {
                return Err(invalid(
                    &param_path,
                    format!("parameter `{name}` appears in two locations"),
                ));
            }
            if is_required {
                required.push(name.clone());
            }
            properties.insert(name.clone(), schema);
            locations.insert(name, location);
        }
        if let Some(body) = op.get("requestBody") {
            self.body(
                body,
                &join(path, "requestBody"),
                &mut properties,
                &mut required,
                &mut locations,
            )?;
        }
        let mut schema = Map::new();
        schema.insert("type".into(), json!("object"));
        schema.insert("properties".into(), Value::Object(properties));
        if !required.is_empty() {
            required.sort();
            required.dedup();
            schema.insert("required".into(), json!(required));
        }
        let tool = Tool::new(name, description, Value::Object(schema)).map_err(|source| {
            ImportError::Tool {
                path: path.to_owned(),
                source,
            }
        })?;
        Ok(OpenApiOperation {
            tool,
            method: method.to_uppercase(),
            path: template.to_owned(),
            locations,
        })
    }

    /// Path-level then operation-level parameters, resolved, the latter overriding the
    /// former by name and location.
    fn parameters(
        &mut self,
        item: &Map<String, Value>,
        op: &Map<String, Value>,
        path: &str,
    ) -> Result<Vec<(String, Value)>, ImportError> {
        let mut out: Vec<(String, Value)> = Vec::new();
        let item_path = path.rsplit_once('/').map_or("", |(base, _)| base);
        for (list, base) in [
            (item.get("parameters"), item_path),
            (op.get("parameters"), path),
        ] {
            let Some(list) = list else { continue };
            let base = join(base, "parameters");
            let Value::Array(list) = list else {
                return Err(invalid(
                    &base,
                    format!("expected an array, found {}", type_name(list)),
                ));
            };
            for (i, param) in list.iter().enumerate() {
                let at = format!("{base}/{i}");
                let (param, at) = self.deref(param, &at, 0)?;
                let key = |p: &Value| (p.get("name").cloned(), p.get("in").cloned());
                out.retain(|(_, existing)| key(existing) != key(&param));
                out.push((at, param));
            }
        }
        Ok(out)
    }

    /// One parameter: its name, location, schema and whether it is required; `None` for
    /// cookie parameters.
    #[allow(clippy::type_complexity)]
    fn parameter(
        &mut self,
        param: &Value,
        path: &str,
    ) -> Result<Option<(String, ParameterLocation, Value, bool)>, ImportError> {
        let Value::Object(param) = param else {
            return Err(invalid(path, "a parameter must be an object"));
        };
        let Some(Value::String(name)) = param.get("name") else {
            return Err(invalid(
                &join(path, "name"),
                "a parameter needs a string `name`",
            ));
        };
        let location = match param.get("in").and_then(Value::as_str) {
            Some("path") => ParameterLocation::Path,
            Some("query") => ParameterLocation::Query,
            Some("header") => ParameterLocation::Header,
            Some("cookie") => return Ok(None),
            _ => {
                return Err(invalid(
                    &join(path, "in"),
                    "`in` must be path, query, header or cookie",
                ));
            }
        };
        let (schema, schema_path) = match (param.get("schema"), param.get("content")) {
            (Some(schema), _) => (schema, join(path, "schema")),
            (None, Some(Value::Object(content))) => match content.iter().next() {
                Some((media, entry)) if content.len() == 1 => {
                    let at = join(&join(&join(path, "content"), media), "schema");
                    match entry.get("schema") {
                        Some(schema) => (schema, at),
                        None => return Err(invalid(&at, "the media type has no schema")),
                    }
                }
                _ => {
                    return Err(invalid(
                        &join(path, "content"),
                        "`content` must hold exactly one media type",
                    ));
                }
            },
            _ => return Err(invalid(path, "a parameter needs a `schema` or a `content`")),
        };
        let mut schema = self.schema(schema, &schema_path, 0, &mut Vec::new())?;
        if let (Value::Object(map), Some(Value::String(d))) =
            (&mut schema, param.get("description"))
        {
            map.entry("description").or_insert_with(|| json!(d));
        }
        let required = location == ParameterLocation::Path
            || param.get("required") == Some(&Value::Bool(true));
        Ok(Some((name.clone(), location, schema, required)))
    }

    fn body(
        &mut self,
        body: &Value,
        path: &str,
        properties: &mut Map<String, Value>,
        required: &mut Vec<String>,
        locations: &mut BTreeMap<String, ParameterLocation>,
    ) -> Result<(), ImportError> {
        let (body, path) = self.deref(body, path, 0)?;
        let Some(Value::Object(content)) = body.get("content") else {
            return Err(invalid(&path, "a request body needs a `content` object"));
        };
        let media = content
            .keys()
            .find(|m| m.as_str() == "application/json")
            .or_else(|| content.keys().find(|m| m.ends_with("+json")))
            .ok_or_else(|| {
                let found: Vec<&str> = content.keys().map(String::as_str).collect();
                invalid(
                    &join(&path, "content"),
                    format!("no JSON media type (found {})", found.join(", ")),
                )
            })?;
        let at = join(&join(&join(&path, "content"), media), "schema");
        let schema = match content.get(media).and_then(|m| m.get("schema")) {
            Some(schema) => self.schema(schema, &at, 0, &mut Vec::new())?,
            None => json!({}),
        };
        let body_required = body.get("required") == Some(&Value::Bool(true));
        if let Some((props, inner_required)) = plain_object(&schema)
            && props.keys().all(|k| !properties.contains_key(k))
            && (body_required || inner_required.is_empty())
        {
            for (name, sub) in props {
                properties.insert(name.clone(), sub.clone());
                locations.insert(name.clone(), ParameterLocation::BodyProperty);
            }
            required.extend(inner_required);
            return Ok(());
        }
        if properties.contains_key("body") {
            return Err(invalid(
                &path,
                "the request body cannot be named `body`: a parameter is",
            ));
        }
        properties.insert("body".into(), schema);
        locations.insert("body".into(), ParameterLocation::Body);
        if body_required {
            required.push("body".into());
        }
        Ok(())
    }
}

/// The properties and required names of a schema that is a plain object: `type` object,
/// `properties`, and nothing else that constrains it.
fn plain_object(schema: &Value) -> Option<(&Map<String, Value>, Vec<String>)> {
    let map = schema.as_object()?;
    if map.get("type") != Some(&json!("object")) {
        return None;
    }
    let allowed = ["type", "properties", "required", "description", "title"];
    if map.keys().any(|k| !allowed.contains(&k.as_str())) {
        return None;
    }
    let properties = map.get("properties")?.as_object()?;
    let required = match map.get("required") {
        None => Vec::new(),
        Some(Value::Array(names)) => names
            .iter()
            .filter_map(Value::as_str)
            .map(str::to_owned)
            .collect(),
        Some(_) => return None,
    };
    Some((properties, required))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn import(doc: Value) -> OpenApiImport {
        from_openapi_value(&doc, &ImportOptions::default()).unwrap()
    }

    fn doc(paths: Value) -> Value {
        json!({"openapi": "3.0.3", "info": {"title": "t", "version": "1"}, "paths": paths,
        "components": {"schemas": {
            "Pet": {"type": "object", "properties": {"name": {"type": "string"}, "tag": {"$ref": "#/components/schemas/Tag"}}, "required": ["name"]},
            "Tag": {"type": "string", "nullable": true, "example": "x"},
            "Loop": {"type": "object", "properties": {"next": {"$ref": "#/components/schemas/Loop"}}}
        }}})
    }

    #[test]
    fn merges_parameters_and_body() {
        let out = import(doc(json!({"/pets/{id}": {
            "parameters": [{"name": "id", "in": "path", "schema": {"type": "integer"}}, {"name": "v", "in": "query", "schema": {"type": "string"}}],
            "put": {
                "operationId": "update pet!",
                "summary": "Update a pet.",
                "parameters": [{"name": "v", "in": "query", "required": true, "description": "Version.", "schema": {"type": "integer", "minimum": 0, "exclusiveMinimum": true}},
                               {"name": "session", "in": "cookie", "schema": {"type": "string"}}],
                "requestBody": {"required": true, "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Pet"}}}}
            }
        }})));
        assert!(out.skipped.is_empty(), "{:?}", out.skipped);
        let op = &out.operations[0];
        assert_eq!(op.tool.name(), "update_pet");
        assert_eq!(op.method, "PUT");
        assert_eq!(
            op.tool.input_schema(),
            &json!({"type": "object", "properties": {
                "id": {"type": "integer"},
                "v": {"type": "integer", "exclusiveMinimum": 0, "description": "Version."},
                "name": {"type": "string"},
                "tag": {"type": ["string", "null"]}
            }, "required": ["id", "name", "v"]})
        );
        assert_eq!(op.locations["name"], ParameterLocation::BodyProperty);
        assert_eq!(op.locations["v"], ParameterLocation::Query);
    }

    #[test]
    fn nests_bodies_that_cannot_merge() {
        let out = import(doc(json!({"/pets": {"post": {
            "requestBody": {"content": {"application/vnd.api+json": {"schema": {"$ref": "#/components/schemas/Pet"}}}}
        }}})));
        let op = &out.operations[0];
        assert_eq!(op.tool.name(), "post_pets");
        assert_eq!(op.tool.description(), "POST /pets");
        assert_eq!(op.locations["body"], ParameterLocation::Body);
        assert!(op.tool.input_schema().get("required").is_none());
    }

    #[test]
    fn skips_bad_operations_and_keeps_the_rest() {
        let out = import(doc(json!({
            "/a": {"get": {"operationId": "loop", "requestBody": {"required": true, "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Loop"}}}}}},
            "/b": {"get": {"operationId": "remote", "parameters": [{"name": "x", "in": "query", "schema": {"$ref": "https://example.com/s.json"}}]}},
            "/c": {"get": {"operationId": "ok"}},
            "/d": {"get": {"operationId": "ok"}},
            "/e": {"post": {"operationId": "form", "requestBody": {"content": {"multipart/form-data": {}}}}},
            "/f": {"get": {"operationId": "badin", "parameters": [{"name": "x", "in": "body"}]}}
        })));
        assert_eq!(out.operations.len(), 1);
        let kinds: Vec<String> = out.skipped.iter().map(|e| format!("{}", e)).collect();
        assert!(
            matches!(out.skipped[0], ImportError::RefCycle { .. }),
            "{kinds:?}"
        );
        assert!(
            matches!(out.skipped[1], ImportError::Ref { .. }),
            "{kinds:?}"
        );
        assert_eq!(out.skipped[2].path(), Some("/paths/~1d/get"));
        assert_eq!(
            out.skipped[3].path(),
            Some("/paths/~1e/post/requestBody/content")
        );
        assert_eq!(
            out.skipped[4].path(),
            Some("/paths/~1f/get/parameters/0/in")
        );
    }

    #[test]
    fn bounds_exponential_references() {
        let mut schemas = Map::new();
        schemas.insert("S0".into(), json!({"type": "string"}));
        for i in 1..30 {
            let prev = format!("#/components/schemas/S{}", i - 1);
            schemas.insert(
                format!("S{i}"),
                json!({"type": "object", "properties": {"a": {"$ref": prev}, "b": {"$ref": prev}}}),
            );
        }
        let doc = json!({"openapi": "3.1.0", "paths": {"/x": {"post": {"requestBody": {"content": {"application/json": {"schema": {"$ref": "#/components/schemas/S29"}}}}}}},
                         "components": {"schemas": schemas}});
        let out = import(doc);
        assert!(
            matches!(out.skipped[0], ImportError::Limit { .. }),
            "{:?}",
            out.skipped
        );
    }

    #[test]
    fn bounds_the_whole_document_too() {
        let paths: Map<String, Value> = (0..10)
            .map(|i| {
                let param = json!({"name": "q", "in": "query", "schema": {"type": "object", "properties": {"a": {}, "b": {}}}});
                (format!("/p{i}"), json!({"get": {"parameters": [param]}}))
            })
            .collect();
        let options = ImportOptions {
            max_document_schema_nodes: 10,
            ..ImportOptions::default()
        };
        let out = from_openapi_value(&doc(Value::Object(paths)), &options).unwrap();
        // Three schema objects an operation: three operations fit in ten.
        assert_eq!(out.operations.len(), 3);
        assert_eq!(out.skipped.len(), 7);
        assert!(matches!(out.skipped[0], ImportError::Limit { .. }));
    }

    #[test]
    fn refuses_what_is_not_openapi_3() {
        let o = ImportOptions::default();
        for (doc, path) in [
            (json!({"swagger": "2.0"}), "/swagger"),
            (json!({"openapi": 3}), "/openapi"),
            (json!([]), ""),
            (json!({"openapi": "3.0.0", "paths": []}), "/paths"),
        ] {
            assert_eq!(from_openapi_value(&doc, &o).unwrap_err().path(), Some(path));
        }
        let many: Map<String, Value> = (0..300)
            .map(|i| (format!("/p{i}"), json!({"get": {}})))
            .collect();
        let err = from_openapi_value(&json!({"openapi": "3.0.0", "paths": many}), &o).unwrap_err();
        assert!(matches!(err, ImportError::Limit { .. }));
    }
}
