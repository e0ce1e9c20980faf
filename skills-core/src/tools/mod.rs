//! Tool definitions: one neutral type, validated calls, and export to model APIs.
//!
//! A [`Tool`] is a name, a description, a JSON Schema for its input, optionally one for its
//! output, and MCP-style [`ToolAnnotations`]. Build one from a skill.json tool
//! ([`Tool::from_definition`], [`skill_tools`]), from a Rust type through `schemars`
//! ([`Tool::from_type`]), from an OpenAPI document or LangChain tool JSON ([`import`]), or
//! from parts ([`Tool::new`]). Building checks and compiles the schemas once, so a bad
//! schema is an error when the tool is built, never when it is called.
//!
//! * [`Tool::validate_input`] reports every violation with its JSON Pointer.
//! * [`ToolHandler`] executes a tool; [`ToolRegistry`] validates input before calling it.
//! * [`export()`] writes tools as MCP, OpenAI Chat Completions, OpenAI Responses or Anthropic
//!   JSON ([`ToolFormat`]), with OpenAI strict mode as an option.
//!
//! ```
//! use schemars::JsonSchema;
//! use serde_json::json;
//! use skills_core::tools::{ExportOptions, Tool, ToolFormat, export};
//!
//! /// Arguments of `search`.
//! #[derive(JsonSchema)]
//! #[allow(dead_code)]
//! struct Search {
//!     /// What to search for.
//!     query: String,
//!     /// How many results.
//!     limit: Option<u32>,
//! }
//!
//! let tool = Tool::from_type::<Search>("search", "Search the web.")?;
//! assert!(tool.validate_input(&json!({"query": "rust"})).is_ok());
//! let bad = tool.validate_input(&json!({"limit": "ten"})).unwrap_err();
//! assert_eq!(bad.len(), 2); // `query` is missing, `limit` is not an integer
//!
//! let options = ExportOptions::new().skill("web-research").strict(true);
//! let tools = export(&[tool], ToolFormat::OpenAiChat, &options)?;
//! assert_eq!(tools[0]["function"]["name"], "web-research__search");
//! assert_eq!(tools[0]["function"]["parameters"]["required"], json!(["limit", "query"]));
//! # Ok::<(), skills_core::tools::ToolError>(())
//! ```

mod error;
pub mod export;
mod handler;
pub mod import;
mod names;
mod schema;
pub mod strict;
mod validate;

use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::{Skill, ToolDefinition};

pub use error::{CallError, ImportError, ToolError};
pub use export::{
    ExportOptions, ToolFormat, export, to_anthropic, to_mcp, to_openai_chat, to_openai_responses,
};
pub use handler::{FnHandler, ToolHandler, ToolRegistry, handler_fn};
pub use names::{
    MAX_TOOL_NAME_LEN, SKILL_TOOL_SEPARATOR, is_valid_tool_name, join_skill_tool, skill_prefix,
};
pub use schema::{MAX_SCHEMA_DEPTH, MAX_SCHEMA_NODES, MAX_SCHEMA_PATTERNS};
pub use validate::{MAX_MESSAGE_CHARS, Violation, Violations};

/// MCP tool annotations: hints about a tool's behaviour for clients, never guarantees.
///
/// Serialized with MCP's camelCase keys; absent hints are left out.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ToolAnnotations {
    /// A human-readable title.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// The tool does not modify its environment.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_only_hint: Option<bool>,
    /// The tool may perform destructive updates (meaningful when not read-only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub destructive_hint: Option<bool>,
    /// Calling the tool again with the same input has no further effect.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idempotent_hint: Option<bool>,
    /// The tool interacts with an open world of external entities (the web, say).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub open_world_hint: Option<bool>,
}

impl ToolAnnotations {
    /// No hints.
    pub fn new() -> Self {
        Self::default()
    }

    /// True when no hint is set.
    pub fn is_empty(&self) -> bool {
        self == &Self::default()
    }

    /// With a title.
    pub fn title(mut self, title: impl Into<String>) -> Self {
        self.title = Some(title.into());
        self
    }

    /// With `readOnlyHint`.
    pub fn read_only(mut self, yes: bool) -> Self {
        self.read_only_hint = Some(yes);
        self
    }

    /// With `destructiveHint`.
    pub fn destructive(mut self, yes: bool) -> Self {
        self.destructive_hint = Some(yes);
        self
    }

    /// With `idempotentHint`.
    pub fn idempotent(mut self, yes: bool) -> Self {
        self.idempotent_hint = Some(yes);
        self
    }

    /// With `openWorldHint`.
    pub fn open_world(mut self, yes: bool) -> Self {
        self.open_world_hint = Some(yes);
        self
    }
}

/// One tool, in no particular model API's format.
///
/// The name matches `^[A-Za-z0-9_-]{1,64}$`; the input schema (and the output schema, when
/// there is one) is a JSON Schema object with `"type": "object"`, checked and compiled when
/// the tool is built. Cloning is cheap: the compiled validators are shared.
#[derive(Debug, Clone)]
pub struct Tool {
    name: String,
    title: Option<String>,
    description: String,
    input_schema: Value,
    output_schema: Option<Value>,
    annotations: ToolAnnotations,
    input_validator: Arc<jsonschema::Validator>,
    output_validator: Option<Arc<jsonschema::Validator>>,
}

impl PartialEq for Tool {
    /// Tools are equal when their definitions are; the compiled validators follow from them.
    fn eq(&self, other: &Self) -> bool {
        self.name == other.name
            && self.title == other.title
            && self.description == other.description
            && self.input_schema == other.input_schema
            && self.output_schema == other.output_schema
            && self.annotations == other.annotations
    }
}

impl Tool {
    /// A tool from its parts.
    ///
    /// # Errors
    ///
    /// [`ToolError::InvalidName`] for a name outside `^[A-Za-z0-9_-]{1,64}$`;
    /// [`ToolError::InvalidSchema`] for a schema that is not a JSON Schema object with
    /// `"type": "object"`, is too large ([`MAX_SCHEMA_DEPTH`], [`MAX_SCHEMA_NODES`],
    /// [`MAX_SCHEMA_PATTERNS`]), is invalid against its meta-schema, or does not compile
    /// (an unresolvable `$ref`, a regular expression too large).
    ///
    /// ```
    /// use serde_json::json;
    /// use skills_core::tools::Tool;
    ///
    /// let schema = json!({"type": "object", "properties": {"url": {"type": "string"}}});
    /// let tool = Tool::new("fetch_page", "Fetch a web page.", schema)?;
    /// assert_eq!(tool.name(), "fetch_page");
    /// assert!(Tool::new("fetch page", "Fetch.", json!({"type": "object"})).is_err());
    /// assert!(Tool::new("fetch", "Fetch.", json!({"type": "string"})).is_err());
    /// # Ok::<(), skills_core::tools::ToolError>(())
    /// ```
    pub fn new(
        name: impl Into<String>,
        description: impl Into<String>,
        input_schema: Value,
    ) -> Result<Tool, ToolError> {
        let name = name.into();
        names::check(&name)?;
        let validator = schema::compile(&name, "input", &input_schema)?;
        Ok(Tool {
            name,
            title: None,
            description: description.into(),
            input_schema,
            output_schema: None,
            annotations: ToolAnnotations::default(),
            input_validator: Arc::new(validator),
            output_validator: None,
        })
    }

    /// A tool whose input schema is generated from `T` by `schemars` (JSON Schema 2020-12;
    /// doc comments become descriptions, `Option` fields are not required).
    ///
    /// # Errors
    ///
    /// As [`Tool::new`]; in particular `T` must be a struct (its schema an object).
    ///
    /// ```
    /// use schemars::JsonSchema;
    /// use skills_core::tools::Tool;
    ///
    /// #[derive(JsonSchema)]
    /// #[allow(dead_code)]
    /// struct Fetch {
    ///     /// The page to fetch.
    ///     url: String,
    /// }
    ///
    /// let tool = Tool::from_type::<Fetch>("fetch_page", "Fetch a web page.")?;
    /// assert_eq!(tool.input_schema()["required"][0], "url");
    /// # Ok::<(), skills_core::tools::ToolError>(())
    /// ```
    pub fn from_type<T: schemars::JsonSchema>(
        name: impl Into<String>,
        description: impl Into<String>,
    ) -> Result<Tool, ToolError> {
        Tool::new(name, description, schema_of::<T>())
    }

    /// A tool from a skill.json tool definition.
    ///
    /// # Errors
    ///
    /// As [`Tool::new`]. A definition read by [`SkillManifest`](crate::SkillManifest) has
    /// already passed the same checks, so this fails only for definitions built by hand.
    pub fn from_definition(definition: &ToolDefinition) -> Result<Tool, ToolError> {
        Tool::new(
            definition.name.clone(),
            definition.description.clone(),
            definition.input_schema.clone(),
        )
    }

    /// With a human-readable title (MCP's `title`).
    pub fn with_title(mut self, title: impl Into<String>) -> Self {
        self.title = Some(title.into());
        self
    }

    /// With annotations (MCP's `annotations`).
    pub fn with_annotations(mut self, annotations: ToolAnnotations) -> Self {
        self.annotations = annotations;
        self
    }

    /// With an output schema (MCP's `outputSchema`), checked like the input schema.
    ///
    /// # Errors
    ///
    /// [`ToolError::InvalidSchema`] as for [`Tool::new`].
    pub fn with_output_schema(mut self, schema: Value) -> Result<Self, ToolError> {
        let validator = schema::compile(&self.name, "output", &schema)?;
        self.output_schema = Some(schema);
        self.output_validator = Some(Arc::new(validator));
        Ok(self)
    }

    /// With an output schema generated from `T`.
    ///
    /// # Errors
    ///
    /// As [`Tool::with_output_schema`].
    pub fn with_output_type<T: schemars::JsonSchema>(self) -> Result<Self, ToolError> {
        self.with_output_schema(schema_of::<T>())
    }

    /// The name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The title, if any.
    pub fn title(&self) -> Option<&str> {
        self.title.as_deref()
    }

    /// The description.
    pub fn description(&self) -> &str {
        &self.description
    }

    /// The input schema as given.
    pub fn input_schema(&self) -> &Value {
        &self.input_schema
    }

    /// The output schema, if any.
    pub fn output_schema(&self) -> Option<&Value> {
        self.output_schema.as_ref()
    }

    /// The annotations.
    pub fn annotations(&self) -> &ToolAnnotations {
        &self.annotations
    }

    /// Checks an input against the compiled input schema.
    ///
    /// # Errors
    ///
    /// Every violation, each with the JSON Pointer of the offending value and of the
    /// failing schema keyword.
    ///
    /// ```
    /// use serde_json::json;
    /// use skills_core::tools::Tool;
    ///
    /// let tool = Tool::new("t", "d", json!({
    ///     "type": "object",
    ///     "properties": {"items": {"type": "array", "items": {"type": "object", "required": ["name"]}}}
    /// }))?;
    /// let errors = tool.validate_input(&json!({"items": [{"name": "a"}, {}]})).unwrap_err();
    /// assert_eq!(errors.as_slice()[0].instance_path, "/items/1");
    /// assert_eq!(errors.as_slice()[0].keyword, "required");
    /// # Ok::<(), skills_core::tools::ToolError>(())
    /// ```
    pub fn validate_input(&self, input: &Value) -> Result<(), Violations> {
        validate::run(&self.input_validator, input)
    }

    /// The input schema rewritten for OpenAI strict mode.
    ///
    /// Every object gets `"additionalProperties": false` and lists all its properties in
    /// `required`, optional properties becoming nullable; annotations are stripped; what
    /// cannot be strict is an error naming its place. The full rules are in the
    /// documentation of the [`strict`] module.
    ///
    /// # Errors
    ///
    /// [`ToolError::NotStrict`] with the JSON Pointer of the first obstacle, e.g.
    /// `/properties/labels/additionalProperties` for a map.
    ///
    /// ```
    /// use serde_json::json;
    /// use skills_core::tools::{Tool, ToolError};
    ///
    /// let tool = Tool::new("t", "d", json!({
    ///     "type": "object",
    ///     "properties": {"q": {"type": "string"}, "n": {"type": "integer", "default": 5}},
    ///     "required": ["q"]
    /// }))?;
    /// assert_eq!(tool.strict_input_schema()?, json!({
    ///     "type": "object",
    ///     "properties": {"q": {"type": "string"}, "n": {"type": ["integer", "null"]}},
    ///     "required": ["n", "q"],
    ///     "additionalProperties": false
    /// }));
    ///
    /// let map = Tool::new("m", "d", json!({
    ///     "type": "object",
    ///     "properties": {"labels": {"type": "object", "additionalProperties": {"type": "string"}}}
    /// }))?;
    /// match map.strict_input_schema() {
    ///     Err(ToolError::NotStrict { path, .. }) => assert_eq!(path, "/properties/labels/additionalProperties"),
    ///     other => panic!("{other:?}"),
    /// }
    /// # Ok::<(), ToolError>(())
    /// ```
    pub fn strict_input_schema(&self) -> Result<Value, ToolError> {
        strict::strict_schema(&self.input_schema).map_err(|(path, reason)| ToolError::NotStrict {
            tool: self.name.clone(),
            path,
            reason,
        })
    }

    /// Removes from an input the `null`s a strict-mode model sends for properties the
    /// input schema leaves optional and does not allow to be `null`, so that it validates
    /// against [`Tool::input_schema`]. Follows `properties` and `items`, not `$ref`s.
    ///
    /// ```
    /// use serde_json::json;
    /// use skills_core::tools::Tool;
    ///
    /// let tool = Tool::new("t", "d", json!({
    ///     "type": "object",
    ///     "properties": {"q": {"type": "string"}, "n": {"type": "integer"}},
    ///     "required": ["q"]
    /// }))?;
    /// let mut input = json!({"q": "rust", "n": null});
    /// tool.remove_strict_nulls(&mut input);
    /// assert_eq!(input, json!({"q": "rust"}));
    /// assert!(tool.validate_input(&input).is_ok());
    /// # Ok::<(), skills_core::tools::ToolError>(())
    /// ```
    pub fn remove_strict_nulls(&self, input: &mut Value) {
        strict::remove_nulls(&self.input_schema, input);
    }

    /// Checks an output against the compiled output schema; `Ok` when there is none.
    ///
    /// # Errors
    ///
    /// As [`Tool::validate_input`].
    pub fn validate_output(&self, output: &Value) -> Result<(), Violations> {
        match &self.output_validator {
            Some(validator) => validate::run(validator, output),
            None => Ok(()),
        }
    }
}

/// The tools a skill's skill.json defines, in manifest order.
///
/// # Errors
///
/// As [`Tool::from_definition`] (not expected for a loaded skill).
///
/// ```
/// use skills_core::{LoadOptions, Skill};
/// use skills_core::tools::skill_tools;
///
/// let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../examples/skills/web-research");
/// let skill = Skill::load(dir, &LoadOptions::default())?;
/// let tools = skill_tools(&skill)?;
/// assert_eq!(tools[0].name(), "search");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn skill_tools(skill: &Skill) -> Result<Vec<Tool>, ToolError> {
    skill.tools().iter().map(Tool::from_definition).collect()
}

fn schema_of<T: schemars::JsonSchema>() -> Value {
    schemars::SchemaGenerator::default()
        .into_root_schema_for::<T>()
        .to_value()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[derive(schemars::JsonSchema)]
    #[allow(dead_code)]
    struct Args {
        /// The query.
        query: String,
        tags: Vec<Tag>,
        limit: Option<u8>,
    }

    #[derive(schemars::JsonSchema)]
    #[allow(dead_code)]
    struct Tag {
        name: String,
    }

    #[test]
    fn builds_from_a_type_with_defs() {
        let tool = Tool::from_type::<Args>("search", "Search.").unwrap();
        let schema = tool.input_schema();
        assert_eq!(schema["type"], "object");
        assert_eq!(schema["required"], json!(["query", "tags"]));
        assert!(schema["$defs"]["Tag"].is_object());
        let errors = tool
            .validate_input(&json!({"query": "q", "tags": [{"name": "a"}, {"name": 1}]}))
            .unwrap_err();
        assert_eq!(errors.as_slice()[0].instance_path, "/tags/1/name");
        assert!(
            tool.validate_input(&json!({"query": "q", "tags": [], "limit": 3}))
                .is_ok()
        );
    }

    #[test]
    fn refuses_non_object_types() {
        assert!(matches!(
            Tool::from_type::<String>("s", "d"),
            Err(ToolError::InvalidSchema { .. })
        ));
    }

    #[test]
    fn output_schemas_are_checked_and_used() {
        let tool = Tool::new("t", "d", json!({"type": "object"}))
            .unwrap()
            .with_output_schema(json!({"type": "object", "required": ["ok"]}))
            .unwrap();
        assert!(tool.validate_output(&json!({"ok": true})).is_ok());
        assert!(tool.validate_output(&json!({})).is_err());
        let bad = Tool::new("t", "d", json!({"type": "object"}))
            .unwrap()
            .with_output_schema(json!({"type": "array"}));
        assert!(matches!(
            bad,
            Err(ToolError::InvalidSchema {
                which: "output",
                ..
            })
        ));
    }

    #[test]
    fn annotations_serialize_as_mcp_does() {
        let a = ToolAnnotations::new()
            .title("T")
            .read_only(true)
            .open_world(false);
        assert_eq!(
            serde_json::to_value(&a).unwrap(),
            json!({"title": "T", "readOnlyHint": true, "openWorldHint": false})
        );
        assert!(ToolAnnotations::new().is_empty());
    }

    #[test]
    fn equality_ignores_validators() {
        let a = Tool::new("t", "d", json!({"type": "object"})).unwrap();
        let b = Tool::new("t", "d", json!({"type": "object"})).unwrap();
        assert_eq!(a, b);
        assert_ne!(a, b.with_title("x"));
    }
}
