//! Tools as MCP, OpenAI (Chat Completions and Responses) and Anthropic JSON.
//!
//! What each target takes, and what is done to a schema for it:
//!
//! * **Names**, everywhere: `^[A-Za-z0-9_-]{1,64}$`. With [`ExportOptions::skill`] the name
//!   is `skill__tool`, the skill's name mapped by [`skill_prefix`](super::skill_prefix); a
//!   joined name over 64 characters is an error, never truncated. Two tools of one export
//!   with the same final name are an error.
//! * **MCP** (`tools/list` entries): `name`, `title` (when set), `description`,
//!   `inputSchema`, `outputSchema` (when set), `annotations` (when any hint is set). MCP
//!   takes full JSON Schema (2020-12 unless `$schema` says otherwise), so the schemas are
//!   passed through unchanged.
//! * **OpenAI Chat Completions**: `{"type": "function", "function": {"name",
//!   "description", "parameters", "strict"}}`, `strict` present only in strict mode.
//!   **OpenAI Responses**: `{"type": "function", "name", "description", "parameters",
//!   "strict"}`, `strict` always present because the Responses API treats an absent
//!   `strict` as `true`. Without strict mode the schema keeps every keyword except the
//!   meta keywords `$schema` and `$comment` (everywhere) and `$id` (at the root), which
//!   describe the document rather than the input. In strict mode the schema is rewritten
//!   by the rules of [`Tool::strict_input_schema`]. Output schemas, titles and annotations
//!   have no place in these formats and are left out.
//! * **Anthropic**: `{"name", "description", "input_schema"}`, the schema stripped of
//!   the same meta keywords. Anthropic refuses `oneOf`, `anyOf` and `allOf` at the root of
//!   `input_schema`; such a schema is an error ([`ToolError::Unsupported`]) rather than a
//!   silent change of meaning. Output schemas, titles and annotations are left out.

use std::collections::BTreeSet;
use std::fmt;
use std::str::FromStr;

use serde_json::{Map, Value, json};

use super::Tool;
use super::error::ToolError;
use super::names::{check, join_skill_tool};
use super::schema::strip_keys;

/// A model API's tool format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum ToolFormat {
    /// MCP `tools/list` tool objects (`mcp`).
    Mcp,
    /// OpenAI Chat Completions function tools (`openai-chat`).
    OpenAiChat,
    /// OpenAI Responses API function tools (`openai-responses`).
    OpenAiResponses,
    /// Anthropic Messages API tools (`anthropic`).
    Anthropic,
}

impl ToolFormat {
    /// Every format, in a stable order.
    pub const ALL: [ToolFormat; 4] = [
        ToolFormat::Mcp,
        ToolFormat::OpenAiChat,
        ToolFormat::OpenAiResponses,
        ToolFormat::Anthropic,
    ];

    /// The format's name: `mcp`, `openai-chat`, `openai-responses` or `anthropic`.
    pub fn as_str(self) -> &'static str {
        match self {
            ToolFormat::Mcp => "mcp",
            ToolFormat::OpenAiChat => "openai-chat",
            ToolFormat::OpenAiResponses => "openai-responses",
            ToolFormat::Anthropic => "anthropic",
        }
    }
}

impl fmt::Display for ToolFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for ToolFormat {
    type Err = ToolError;

    /// Parses a format's name (ASCII case ignored).
    ///
    /// ```
    /// use skills_core::tools::ToolFormat;
    ///
    /// assert_eq!("openai-responses".parse::<ToolFormat>()?, ToolFormat::OpenAiResponses);
    /// assert!("openai".parse::<ToolFormat>().is_err());
    /// # Ok::<(), skills_core::tools::ToolError>(())
    /// ```
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        ToolFormat::ALL
            .into_iter()
            .find(|f| f.as_str().eq_ignore_ascii_case(s))
            .ok_or_else(|| ToolError::UnknownFormat(s.to_owned()))
    }
}

/// How tools are exported.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct ExportOptions {
    /// The skill the tools belong to: names become `skill__tool`.
    pub skill: Option<String>,
    /// OpenAI strict mode (ignored by the MCP and Anthropic formats).
    pub strict: bool,
}

impl ExportOptions {
    /// Tool names as they are, strict mode off.
    pub fn new() -> Self {
        Self::default()
    }

    /// Names joined with the skill's: `skill__tool`.
    pub fn skill(mut self, skill: impl Into<String>) -> Self {
        self.skill = Some(skill.into());
        self
    }

    /// OpenAI strict mode on or off.
    pub fn strict(mut self, strict: bool) -> Self {
        self.strict = strict;
        self
    }

    fn name(&self, tool: &Tool) -> Result<String, ToolError> {
        match &self.skill {
            Some(skill) => join_skill_tool(skill, tool.name()),
            None => check(tool.name()).map(|()| tool.name().to_owned()),
        }
    }
}

/// Exports tools as a JSON array in `format`.
///
/// # Errors
///
/// [`ToolError::NameTooLong`] or [`ToolError::InvalidName`] for a name the target refuses;
/// [`ToolError::DuplicateName`] when two tools end up with one name;
/// [`ToolError::NotStrict`] in strict mode for a schema that cannot be made strict;
/// [`ToolError::Unsupported`] for a schema the target refuses.
///
/// ```
/// use skills_core::tools::{ExportOptions, ToolFormat, export, skill_tools};
/// use skills_core::{LoadOptions, Skill};
///
/// let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../examples/skills/web-research");
/// let skill = Skill::load(dir, &LoadOptions::default())?;
/// let tools = skill_tools(&skill)?;
/// let options = ExportOptions::new().skill(skill.name());
/// let json = export(&tools, "anthropic".parse::<ToolFormat>()?, &options)?;
/// assert_eq!(json[0]["name"], "web-research__search");
/// assert_eq!(json[0]["input_schema"]["required"][0], "query");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn export(
    tools: &[Tool],
    format: ToolFormat,
    options: &ExportOptions,
) -> Result<Value, ToolError> {
    let mut names = BTreeSet::new();
    let mut out = Vec::with_capacity(tools.len());
    for tool in tools {
        let name = options.name(tool)?;
        if !names.insert(name.clone()) {
            return Err(ToolError::DuplicateName { name });
        }
        out.push(match format {
            ToolFormat::Mcp => mcp(tool, name),
            ToolFormat::OpenAiChat => openai_chat(tool, name, options.strict)?,
            ToolFormat::OpenAiResponses => openai_responses(tool, name, options.strict)?,
            ToolFormat::Anthropic => anthropic(tool, name)?,
        });
    }
    Ok(Value::Array(out))
}

/// One tool as an MCP tool object.
///
/// # Errors
///
/// As [`export`].
pub fn to_mcp(tool: &Tool, options: &ExportOptions) -> Result<Value, ToolError> {
    Ok(mcp(tool, options.name(tool)?))
}

/// One tool as an OpenAI Chat Completions function tool.
///
/// # Errors
///
/// As [`export`].
pub fn to_openai_chat(tool: &Tool, options: &ExportOptions) -> Result<Value, ToolError> {
    openai_chat(tool, options.name(tool)?, options.strict)
}

/// One tool as an OpenAI Responses API function tool.
///
/// # Errors
///
/// As [`export`].
pub fn to_openai_responses(tool: &Tool, options: &ExportOptions) -> Result<Value, ToolError> {
    openai_responses(tool, options.name(tool)?, options.strict)
}

/// One tool as an Anthropic tool.
///
/// # Errors
///
/// As [`export`].
pub fn to_anthropic(tool: &Tool, options: &ExportOptions) -> Result<Value, ToolError> {
    anthropic(tool, options.name(tool)?)
}

fn mcp(tool: &Tool, name: String) -> Value {
    let mut out = Map::new();
    out.insert("name".into(), Value::String(name));
    if let Some(title) = tool.title() {
        out.insert("title".into(), Value::String(title.to_owned()));
    }
    out.insert("description".into(), tool.description().into());
    out.insert("inputSchema".into(), tool.input_schema().clone());
    if let Some(schema) = tool.output_schema() {
        out.insert("outputSchema".into(), schema.clone());
    }
    if !tool.annotations().is_empty() {
        out.insert("annotations".into(), json!(tool.annotations()));
    }
    Value::Object(out)
}

/// The OpenAI `parameters` and the `strict` flag.
fn openai_parameters(tool: &Tool, strict: bool) -> Result<Value, ToolError> {
    if strict {
        tool.strict_input_schema()
    } else {
        Ok(without_meta(tool.input_schema()))
    }
}

fn openai_chat(tool: &Tool, name: String, strict: bool) -> Result<Value, ToolError> {
    let mut function = Map::new();
    function.insert("name".into(), Value::String(name));
    function.insert("description".into(), tool.description().into());
    function.insert("parameters".into(), openai_parameters(tool, strict)?);
    if strict {
        function.insert("strict".into(), Value::Bool(true));
    }
    Ok(json!({"type": "function", "function": function}))
}

fn openai_responses(tool: &Tool, name: String, strict: bool) -> Result<Value, ToolError> {
    Ok(json!({
        "type": "function",
        "name": name,
        "description": tool.description(),
        "parameters": openai_parameters(tool, strict)?,
        "strict": strict,
    }))
}

fn anthropic(tool: &Tool, name: String) -> Result<Value, ToolError> {
    let schema = without_meta(tool.input_schema());
    if let Some(key) = ["allOf", "anyOf", "oneOf"]
        .into_iter()
        .find(|k| schema.get(k).is_some())
    {
        return Err(ToolError::Unsupported {
            tool: tool.name().to_owned(),
            target: ToolFormat::Anthropic.as_str(),
            path: format!("/{key}"),
            reason: format!("`{key}` at the root of `input_schema`"),
        });
    }
    Ok(json!({
        "name": name,
        "description": tool.description(),
        "input_schema": schema,
    }))
}

/// The schema without the keywords that describe the document rather than the input.
fn without_meta(schema: &Value) -> Value {
    let mut out = schema.clone();
    strip_keys(&mut out, &["$schema", "$comment"]);
    if let Value::Object(map) = &mut out {
        map.remove("$id");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tool() -> Tool {
        Tool::new(
            "search",
            "Search.",
            json!({
                "$schema": "https://json-schema.org/draft/2020-12/schema",
                "$id": "urn:x",
                "type": "object",
                "properties": {"q": {"type": "string", "$comment": "c"}, "n": {"type": "integer", "default": 5}},
                "required": ["q"]
            }),
        )
        .unwrap()
    }

    #[test]
    fn formats_parse_and_print() {
        for format in ToolFormat::ALL {
            assert_eq!(format.as_str().parse::<ToolFormat>().unwrap(), format);
            assert_eq!(format.to_string(), format.as_str());
        }
        assert!(matches!("MCP".parse::<ToolFormat>(), Ok(ToolFormat::Mcp)));
        assert!(matches!(
            "gemini".parse::<ToolFormat>(),
            Err(ToolError::UnknownFormat(_))
        ));
    }

    #[test]
    fn mcp_keeps_the_schema_and_adds_metadata() {
        let t = tool()
            .with_title("Search")
            .with_annotations(super::super::ToolAnnotations::new().read_only(true));
        let out = to_mcp(&t, &ExportOptions::new()).unwrap();
        assert_eq!(out["inputSchema"], *t.input_schema());
        assert_eq!(out["title"], "Search");
        assert_eq!(out["annotations"], json!({"readOnlyHint": true}));
        assert!(
            to_mcp(&tool(), &ExportOptions::new())
                .unwrap()
                .get("annotations")
                .is_none()
        );
    }

    #[test]
    fn openai_and_anthropic_drop_meta_keywords() {
        let chat = to_openai_chat(&tool(), &ExportOptions::new()).unwrap();
        let params = &chat["function"]["parameters"];
        assert!(params.get("$schema").is_none() && params.get("$id").is_none());
        assert!(params["properties"]["q"].get("$comment").is_none());
        assert_eq!(params["properties"]["n"]["default"], 5);
        assert!(chat["function"].get("strict").is_none());
        let responses = to_openai_responses(&tool(), &ExportOptions::new()).unwrap();
        assert_eq!(responses["strict"], false);
        let anthropic = to_anthropic(&tool(), &ExportOptions::new()).unwrap();
        assert!(anthropic["input_schema"].get("$schema").is_none());
    }

    #[test]
    fn strict_mode_rewrites_and_flags() {
        let options = ExportOptions::new().strict(true);
        let chat = to_openai_chat(&tool(), &options).unwrap();
        assert_eq!(chat["function"]["strict"], true);
        assert_eq!(
            chat["function"]["parameters"]["required"],
            json!(["n", "q"])
        );
        let responses = to_openai_responses(&tool(), &options).unwrap();
        assert_eq!(responses["strict"], true);
        let map = Tool::new(
            "m",
            "d",
            json!({"type": "object", "additionalProperties": {"type": "string"}}),
        )
        .unwrap();
        assert!(matches!(
            to_openai_chat(&map, &options),
            Err(ToolError::NotStrict { .. })
        ));
    }

    #[test]
    fn anthropic_refuses_root_unions() {
        let t = Tool::new(
            "u",
            "d",
            json!({"type": "object", "anyOf": [{"required": ["a"]}, {"required": ["b"]}]}),
        )
        .unwrap();
        assert!(matches!(
            to_anthropic(&t, &ExportOptions::new()),
            Err(ToolError::Unsupported { .. })
        ));
        assert!(to_mcp(&t, &ExportOptions::new()).is_ok());
    }

    #[test]
    fn names_are_joined_checked_and_unique() {
        let options = ExportOptions::new().skill("my.skill");
        let out = export(&[tool()], ToolFormat::Anthropic, &options).unwrap();
        assert_eq!(out[0]["name"], "my_skill__search");
        let long = ExportOptions::new().skill("s".repeat(60));
        assert!(matches!(
            export(&[tool()], ToolFormat::Mcp, &long),
            Err(ToolError::NameTooLong { .. })
        ));
        assert!(matches!(
            export(&[tool(), tool()], ToolFormat::Mcp, &ExportOptions::new()),
            Err(ToolError::DuplicateName { .. })
        ));
    }
}
