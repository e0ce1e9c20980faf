//! `skill.json` v2 manifests (the Aria skill standard, seed 001).
//!
//! A manifest names the skill `<prefix>-<skill_name>`, places it in a layer (0-4), lists the
//! skills it depends on and the agent focuses it suits, and defines its tools, each with a
//! JSON Schema for its input. Every rule is checked and every problem reported; a manifest is
//! returned only when no rule fails with an error.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::diagnostic::{Diagnostic, Profile, Rule, Sink, has_errors};
use crate::error::Error;
use crate::status::SkillStatus;

mod json;
mod schema;

use schema::{compile_schema, count_patterns};

/// The most characters a tool name may have (the limit MCP and model APIs share).
pub const MAX_TOOL_NAME_CHARS: usize = 64;

/// The keys a v2 manifest must have.
pub const REQUIRED_KEYS: &[&str] = &[
    "name",
    "version",
    "description",
    "author",
    "layer",
    "dependencies",
    "focus_affinity",
    "tools",
];

/// The focuses seed 001 defines.
pub const DEFAULT_FOCUSES: &[&str] = &[
    "orchestrator",
    "devsecops",
    "data",
    "trader",
    "creative",
    "social",
    "journalist",
];

/// How to read `skill.json` manifests.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ManifestOptions {
    /// The naming prefix: manifests are named `<prefix>-<skill_name>`. Default `aria`; empty
    /// means names carry no prefix.
    pub prefix: String,
    /// The focuses `focus_affinity` may name; empty accepts any.
    pub known_focuses: Vec<String>,
    /// The highest layer (default 4).
    pub max_layer: u8,
    /// The most tools one manifest may define (default 128); more is
    /// [`Rule::ManifestLimitExceeded`], and no tool schema is compiled.
    pub max_tools: usize,
    /// The most regular expressions (`pattern` values and `patternProperties` keys) all tool
    /// schemas together may hold (default 256); more is [`Rule::ManifestLimitExceeded`].
    pub max_patterns: usize,
}

impl Default for ManifestOptions {
    fn default() -> Self {
        ManifestOptions {
            prefix: "aria".to_owned(),
            known_focuses: DEFAULT_FOCUSES.iter().map(|s| (*s).to_owned()).collect(),
            max_layer: 4,
            max_tools: 128,
            max_patterns: 256,
        }
    }
}

impl ManifestOptions {
    /// Default options with another naming prefix.
    pub fn with_prefix(prefix: impl Into<String>) -> Self {
        ManifestOptions {
            prefix: prefix.into(),
            ..ManifestOptions::default()
        }
    }
}

/// One tool a skill offers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ToolDefinition {
    /// snake_case, at most 64 characters.
    pub name: String,
    /// What the tool does and when to use it.
    pub description: String,
    /// A JSON Schema object (`"type": "object"`) for the tool's input. Read from
    /// `input_schema`, or from the `parameters` alias.
    pub input_schema: Value,
}

impl ToolDefinition {
    /// A tool definition from its parts.
    pub fn new(
        name: impl Into<String>,
        description: impl Into<String>,
        input_schema: Value,
    ) -> Self {
        ToolDefinition {
            name: name.into(),
            description: description.into(),
            input_schema,
        }
    }
}

/// A `skill.json` v2 manifest.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct SkillManifest {
    /// `<prefix>-<skill_name>`.
    pub name: String,
    /// A semantic version.
    pub version: String,
    /// What the skill does.
    pub description: String,
    /// Author or team.
    pub author: String,
    /// The layer, 0-4.
    pub layer: u8,
    /// The skill names (directory names) this skill depends on.
    pub dependencies: Vec<String>,
    /// The agent focuses this skill suits.
    pub focus_affinity: Vec<String>,
    /// The lifecycle status, when given.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub status: Option<SkillStatus>,
    /// The tools.
    pub tools: Vec<ToolDefinition>,
    /// Every other key, kept.
    #[serde(flatten)]
    pub extra: BTreeMap<String, Value>,
}

/// The outcome of reading a `skill.json`.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct ParsedManifest {
    /// The manifest, when no rule failed with an error.
    pub manifest: Option<SkillManifest>,
    /// The name as written, when it was a string (even if the manifest is invalid).
    pub name: Option<String>,
    /// The description as written, when it was a string.
    pub description: Option<String>,
    /// Every problem found.
    pub diagnostics: Vec<Diagnostic>,
}

impl ParsedManifest {
    /// The manifest if valid, or an [`Error::Invalid`] with every diagnostic.
    pub fn into_result(self) -> Result<SkillManifest, Error> {
        match self.manifest {
            Some(manifest) => Ok(manifest),
            None => Err(Error::Invalid {
                diagnostics: self.diagnostics,
            }),
        }
    }
}

impl SkillManifest {
    /// The `<skill_name>` part of the name, if it carries `prefix` (see [`strip_prefix`]).
    pub fn skill_name<'a>(&'a self, prefix: &str) -> Option<&'a str> {
        strip_prefix(&self.name, prefix)
    }

    /// The manifest as pretty-printed JSON (tools under `input_schema`).
    pub fn to_json_pretty(&self) -> String {
        serde_json::to_string_pretty(self).unwrap_or_default()
    }

    /// Reads a manifest from its bytes. `directory` is the name of the directory holding it,
    /// for the naming rule; `None` skips that rule.
    ///
    /// ```
    /// use skills_core::{ManifestOptions, Profile, SkillManifest};
    ///
    /// let json = r#"{
    ///   "name": "aria-web_search", "version": "2.0.0", "description": "Search the web.",
    ///   "author": "Aria Team", "layer": 3, "dependencies": ["api_client"],
    ///   "focus_affinity": ["journalist"],
    ///   "tools": [{"name": "search", "description": "Search.", "parameters": {
    ///     "type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]}}]
    /// }"#;
    /// let parsed = SkillManifest::parse(json.as_bytes(), Some("web_search"),
    ///     &ManifestOptions::default(), Profile::Spec);
    /// // `parameters` is accepted as an alias of `input_schema`, with a warning.
    /// assert_eq!(parsed.diagnostics[0].code(), "tool-parameters-alias");
    /// let manifest = parsed.manifest.unwrap();
    /// assert_eq!(manifest.skill_name("aria"), Some("web_search"));
    /// ```
    pub fn parse(
        bytes: &[u8],
        directory: Option<&str>,
        options: &ManifestOptions,
        profile: Profile,
    ) -> ParsedManifest {
        let mut sink = Sink::new(profile, Some("skill.json"));
        let mut reader = ManifestReader {
            sink: &mut sink,
            options,
            directory,
            name: None,
            description: None,
        };
        let manifest = reader.read(bytes);
        let (name, description) = (reader.name, reader.description);
        let manifest = manifest.filter(|_| !has_errors(&sink.items));
        ParsedManifest {
            manifest,
            name,
            description,
            diagnostics: sink.items,
        }
    }
}

/// The `<skill_name>` of a manifest name `<prefix>-<skill_name>`; with an empty prefix, the
/// whole name.
///
/// ```
/// use skills_core::strip_prefix;
///
/// assert_eq!(strip_prefix("aria-web_search", "aria"), Some("web_search"));
/// assert_eq!(strip_prefix("web_search", "aria"), None);
/// assert_eq!(strip_prefix("web_search", ""), Some("web_search"));
/// ```
pub fn strip_prefix<'a>(name: &'a str, prefix: &str) -> Option<&'a str> {
    if prefix.is_empty() {
        return Some(name);
    }
    name.strip_prefix(prefix)
        .and_then(|rest| rest.strip_prefix('-'))
}

/// `^[a-z0-9]+([_-][a-z0-9]+)*$`: snake_case or kebab-case ASCII.
pub(crate) fn is_skill_name(name: &str) -> bool {
    !name.is_empty()
        && name.split(['_', '-']).all(|part| {
            !part.is_empty()
                && part
                    .bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
        })
}

/// `^[a-z][a-z0-9_]*$`, at most 64 characters.
fn is_tool_name(name: &str) -> bool {
    name.len() <= MAX_TOOL_NAME_CHARS
        && name.bytes().next().is_some_and(|b| b.is_ascii_lowercase())
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
}

fn type_name(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

struct ManifestReader<'a> {
    sink: &'a mut Sink,
    options: &'a ManifestOptions,
    directory: Option<&'a str>,
    name: Option<String>,
    description: Option<String>,
}

impl ManifestReader<'_> {
    fn push(&mut self, rule: Rule, message: impl Into<String>) {
        self.sink.push(rule, None, message);
    }

    fn read(&mut self, bytes: &[u8]) -> Option<SkillManifest> {
        // The same decoding as SKILL.md: BOM, UTF-16/32 and invalid UTF-8 are reported alike.
        let text = crate::text::decode(bytes, self.sink)?;
        let value: Value = match json::read(&text) {
            Ok((value, duplicates)) => {
                for (pointer, line) in duplicates {
                    self.sink.push(
                        Rule::ManifestDuplicateKey,
                        Some(line),
                        format!("key `{pointer}` appears more than once; the last value is used"),
                    );
                }
                value
            }
            Err(err) => {
                self.sink.push(
                    Rule::ManifestSyntax,
                    Some(err.line().max(1)),
                    format!("skill.json is not valid JSON: {err}"),
                );
                return None;
            }
        };
        let Value::Object(object) = value else {
            self.push(
                Rule::ManifestNotObject,
                format!(
                    "skill.json must be a JSON object, not {}",
                    type_name(&value)
                ),
            );
            return None;
        };
        self.object(object)
    }

    fn object(&mut self, mut object: Map<String, Value>) -> Option<SkillManifest> {
        for key in REQUIRED_KEYS {
            if !object.contains_key(*key) {
                self.push(
                    Rule::ManifestMissingKey,
                    format!("skill.json is missing the required key `{key}`"),
                );
            }
        }
        let name = self.name(object.remove("name"));
        let version = self.version(object.remove("version"));
        let description = self.text("description", object.remove("description"));
        self.description.clone_from(&description);
        let author = self.text("author", object.remove("author"));
        let layer = self.layer(object.remove("layer"));
        let dependencies = self.dependencies(object.remove("dependencies"), name.as_deref());
        let focus_affinity = self.focus_affinity(object.remove("focus_affinity"));
        let status = self.status(object.remove("status"));
        let tools = self.tools(object.remove("tools"));
        let extra: BTreeMap<String, Value> = object.into_iter().collect();
        for key in extra.keys() {
            self.push(
                Rule::ManifestUnknownKey,
                format!("`{key}` is not a skill.json v2 key; it is kept"),
            );
        }
        Some(SkillManifest {
            name: name?,
            version: version?,
            description: description?,
            author: author?,
            layer: layer?,
            dependencies: dependencies?,
            focus_affinity: focus_affinity?,
            status,
            tools: tools?,
            extra,
        })
    }

    fn wrong_type(&mut self, key: &str, expected: &str, got: &Value) {
        self.push(
            Rule::ManifestWrongType,
            format!("`{key}` must be {expected}, not {}", type_name(got)),
        );
    }

    fn string(&mut self, key: &str, value: Option<Value>) -> Option<String> {
        match value? {
            Value::String(s) => Some(s),
            other => {
                self.wrong_type(key, "a string", &other);
                None
            }
        }
    }

    /// A required non-blank string.
    fn text(&mut self, key: &str, value: Option<Value>) -> Option<String> {
        let text = self.string(key, value)?;
        if text.trim().is_empty() {
            self.push(
                Rule::ManifestWrongType,
                format!("`{key}` must be a non-empty string"),
            );
        }
        Some(text)
    }

    fn name(&mut self, value: Option<Value>) -> Option<String> {
        let name = self.string("name", value)?;
        self.name = Some(name.clone());
        let prefix = &self.options.prefix;
        let skill_name = strip_prefix(&name, prefix);
        match skill_name {
            Some(skill_name) if is_skill_name(skill_name) => {
                if let Some(directory) = self.directory
                    && directory != skill_name {
                        self.push(
                            Rule::ManifestNameDirectoryMismatch,
                            format!(
                                "manifest name `{name}` names skill `{skill_name}`, but its directory is `{directory}`"
                            ),
                        );
                    }
            }
            _ => self.push(
                Rule::ManifestNameFormat,
                if prefix.is_empty() {
                    format!("manifest name `{name}` must be a snake_case skill name")
                } else {
                    format!(
                        "manifest name `{name}` must be `{prefix}-<skill_name>` with a snake_case skill name"
                    )
                },
            ),
        }
        Some(name)
    }

    fn version(&mut self, value: Option<Value>) -> Option<String> {
        let version = self.string("version", value)?;
        if let Err(err) = semver::Version::parse(&version) {
            self.push(
                Rule::ManifestVersionInvalid,
                format!("version `{version}` is not a semantic version: {err}"),
            );
        }
        Some(version)
    }

    fn layer(&mut self, value: Option<Value>) -> Option<u8> {
        let value = value?;
        let Value::Number(number) = &value else {
            self.wrong_type("layer", "an integer from 0 to the highest layer", &value);
            return None;
        };
        let max = self.options.max_layer;
        match number.as_u64() {
            Some(layer) if layer <= u64::from(max) => u8::try_from(layer).ok(),
            _ => {
                self.push(
                    Rule::ManifestLayerInvalid,
                    format!("layer {number} is not an integer from 0 to {max}"),
                );
                None
            }
        }
    }

    fn string_array(&mut self, key: &str, value: Option<Value>) -> Option<Vec<String>> {
        let value = value?;
        let Value::Array(items) = value else {
            self.wrong_type(key, "an array of strings", &value);
            return None;
        };
        let mut out = Vec::with_capacity(items.len());
        let mut ok = true;
        for (i, item) in items.into_iter().enumerate() {
            match item {
                Value::String(s) => out.push(s),
                other => {
                    self.wrong_type(&format!("{key}[{i}]"), "a string", &other);
                    ok = false;
                }
            }
        }
        ok.then_some(out)
    }

    fn dependencies(&mut self, value: Option<Value>, name: Option<&str>) -> Option<Vec<String>> {
        let dependencies = self.string_array("dependencies", value)?;
        let own = name.and_then(|n| strip_prefix(n, &self.options.prefix));
        let mut seen = BTreeSet::new();
        for dependency in &dependencies {
            let problem = if dependency.trim().is_empty() {
                Some("a dependency is blank".to_owned())
            } else if !seen.insert(dependency.as_str()) {
                Some(format!("dependency `{dependency}` is listed twice"))
            } else if Some(dependency.as_str()) == own {
                Some(format!("the skill depends on itself (`{dependency}`)"))
            } else {
                None
            };
            if let Some(message) = problem {
                self.push(Rule::ManifestDependencyInvalid, message);
            }
        }
        Some(dependencies)
    }

    fn focus_affinity(&mut self, value: Option<Value>) -> Option<Vec<String>> {
        let focuses = self.string_array("focus_affinity", value)?;
        if !self.options.known_focuses.is_empty() {
            for focus in &focuses {
                if !self.options.known_focuses.contains(focus) {
                    let known = self.options.known_focuses.join(", ");
                    self.push(
                        Rule::ManifestFocusUnknown,
                        format!("focus `{focus}` is not one of: {known}"),
                    );
                }
            }
        }
        Some(focuses)
    }

    fn status(&mut self, value: Option<Value>) -> Option<SkillStatus> {
        let status = self.string("status", value)?;
        let parsed = SkillStatus::parse(&status);
        if parsed.is_none() {
            self.push(
                Rule::ManifestStatusInvalid,
                format!("status `{status}` is not one of active, stub, deprecated, experimental"),
            );
        }
        parsed
    }

    fn tools(&mut self, value: Option<Value>) -> Option<Vec<ToolDefinition>> {
        let value = value?;
        let Value::Array(items) = value else {
            self.wrong_type("tools", "an array of tool objects", &value);
            return None;
        };
        // Compiling a schema costs time (regular expressions above all): bound the number.
        if items.len() > self.options.max_tools {
            self.push(
                Rule::ManifestLimitExceeded,
                format!(
                    "skill.json defines {} tools; at most {} are allowed",
                    items.len(),
                    self.options.max_tools
                ),
            );
            return None;
        }
        let patterns: usize = items.iter().map(count_patterns).sum();
        if patterns > self.options.max_patterns {
            self.push(
                Rule::ManifestLimitExceeded,
                format!(
                    "the tool schemas hold {patterns} regular expressions; at most {} are allowed",
                    self.options.max_patterns
                ),
            );
            return None;
        }
        let mut tools = Vec::with_capacity(items.len());
        let mut names = BTreeSet::new();
        let mut ok = true;
        for (i, item) in items.into_iter().enumerate() {
            match self.tool(i, item, &mut names) {
                Some(tool) => tools.push(tool),
                None => ok = false,
            }
        }
        ok.then_some(tools)
    }

    fn tool(
        &mut self,
        index: usize,
        item: Value,
        names: &mut BTreeSet<String>,
    ) -> Option<ToolDefinition> {
        let Value::Object(mut tool) = item else {
            self.wrong_type(&format!("tools[{index}]"), "an object", &item);
            return None;
        };
        let at = format!("tools[{index}]");
        let name = match tool.remove("name") {
            Some(Value::String(name)) => {
                if !is_tool_name(&name) {
                    self.push(
                        Rule::ToolNameInvalid,
                        format!(
                            "{at}: tool name `{name}` must be snake_case ([a-z][a-z0-9_]*), at most {MAX_TOOL_NAME_CHARS} characters"
                        ),
                    );
                } else if !names.insert(name.clone()) {
                    self.push(
                        Rule::ToolNameDuplicate,
                        format!("{at}: a tool named `{name}` is already defined"),
                    );
                }
                Some(name)
            }
            Some(other) => {
                self.push(
                    Rule::ToolNameInvalid,
                    format!(
                        "{at}: tool name must be a string, not {}",
                        type_name(&other)
                    ),
                );
                None
            }
            None => {
                self.push(Rule::ToolNameInvalid, format!("{at}: the tool has no name"));
                None
            }
        };
        let label = match &name {
            Some(name) => format!("tool `{name}`"),
            None => at.clone(),
        };
        let description = match tool.remove("description") {
            Some(Value::String(d)) if !d.trim().is_empty() => Some(d),
            _ => {
                self.push(
                    Rule::ToolDescriptionMissing,
                    format!("{label} needs a non-empty `description` string"),
                );
                None
            }
        };
        let schema = match (tool.remove("input_schema"), tool.remove("parameters")) {
            (Some(schema), None) => Some(schema),
            (None, Some(schema)) => {
                self.push(
                    Rule::ToolParametersAlias,
                    format!("{label} uses `parameters`; prefer `input_schema`"),
                );
                Some(schema)
            }
            (Some(_), Some(_)) => {
                self.push(
                    Rule::ToolSchemaConflict,
                    format!("{label} has both `input_schema` and `parameters`; keep one"),
                );
                None
            }
            (None, None) => {
                self.push(
                    Rule::ToolSchemaMissing,
                    format!("{label} has no `input_schema`"),
                );
                None
            }
        };
        let schema_ok = schema
            .as_ref()
            .is_some_and(|schema| self.schema(&label, schema));
        Some(ToolDefinition {
            name: name?,
            description: description?,
            input_schema: schema.filter(|_| schema_ok)?,
        })
    }

    /// Checks a tool's input schema; true when it passes.
    fn schema(&mut self, label: &str, schema: &Value) -> bool {
        let Value::Object(object) = schema else {
            self.push(
                Rule::ToolSchemaNotObject,
                format!(
                    "{label}: the input schema must be a JSON object, not {}",
                    type_name(schema)
                ),
            );
            return false;
        };
        let mut ok = true;
        if object.get("type") != Some(&Value::String("object".into())) {
            self.push(
                Rule::ToolSchemaNotObject,
                format!("{label}: the input schema must have `\"type\": \"object\"`"),
            );
            ok = false;
        }
        if let Err(err) = jsonschema::meta::validate(schema) {
            self.push(
                Rule::ToolSchemaInvalid,
                format!(
                    "{label}: the input schema is not a valid JSON Schema: {err} (at `{}`)",
                    err.instance_path()
                ),
            );
            return false;
        }
        if let Err(err) = compile_schema(schema) {
            self.push(
                Rule::ToolSchemaInvalid,
                format!("{label}: the input schema cannot be compiled: {err}"),
            );
            return false;
        }
        if let Some(Value::Array(required)) = object.get("required") {
            let properties = object.get("properties").and_then(Value::as_object);
            for name in required.iter().filter_map(Value::as_str) {
                if !properties.is_some_and(|p| p.contains_key(name)) {
                    self.push(
                        Rule::ToolRequiredUnknown,
                        format!("{label}: required property `{name}` is not in `properties`"),
                    );
                    ok = false;
                }
            }
        }
        ok
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn base() -> Value {
        json!({
            "name": "aria-web_search",
            "version": "2.0.0",
            "description": "Search the web.",
            "author": "Aria Team",
            "layer": 3,
            "dependencies": ["api_client"],
            "focus_affinity": ["journalist"],
            "tools": [{
                "name": "search",
                "description": "Search.",
                "input_schema": {
                    "type": "object",
                    "properties": {"q": {"type": "string"}},
                    "required": ["q"]
                }
            }]
        })
    }

    fn parse_value(value: &Value, profile: Profile) -> ParsedManifest {
        SkillManifest::parse(
            value.to_string().as_bytes(),
            Some("web_search"),
            &ManifestOptions::default(),
            profile,
        )
    }

    fn codes(value: &Value) -> Vec<&'static str> {
        parse_value(value, Profile::Spec)
            .diagnostics
            .iter()
            .map(Diagnostic::code)
            .collect()
    }

    fn with(path: &str, new: Value) -> Value {
        let mut v = base();
        *v.pointer_mut(path).unwrap() = new;
        v
    }

    fn without(key: &str) -> Value {
        let mut v = base();
        v.as_object_mut().unwrap().remove(key);
        v
    }

    #[test]
    fn the_seed_example_is_valid() {
        let parsed = parse_value(&base(), Profile::Spec);
        assert!(parsed.diagnostics.is_empty(), "{:?}", parsed.diagnostics);
        let manifest = parsed.manifest.unwrap();
        assert_eq!(manifest.layer, 3);
        assert_eq!(manifest.tools[0].name, "search");
        let again = SkillManifest::parse(
            manifest.to_json_pretty().as_bytes(),
            Some("web_search"),
            &ManifestOptions::default(),
            Profile::Spec,
        );
        assert_eq!(again.manifest.as_ref(), Some(&manifest));
    }

    #[test]
    fn every_missing_key_is_reported() {
        for key in REQUIRED_KEYS {
            assert_eq!(
                codes(&without(key)),
                vec!["skill-json-missing-key"],
                "{key}"
            );
        }
        let empty = SkillManifest::parse(b"{}", None, &ManifestOptions::default(), Profile::Spec);
        assert_eq!(empty.diagnostics.len(), REQUIRED_KEYS.len());
        assert!(empty.manifest.is_none());
    }

    #[test]
    fn wrong_types() {
        for (key, bad) in [
            ("/name", json!(1)),
            ("/version", json!(2)),
            ("/description", json!(["x"])),
            ("/author", json!(null)),
            ("/layer", json!("3")),
            ("/dependencies", json!("api_client")),
            ("/dependencies/0", json!(1)),
            ("/focus_affinity", json!({})),
            ("/tools", json!({})),
            ("/tools/0", json!("search")),
        ] {
            assert_eq!(
                codes(&with(key, bad)),
                vec!["skill-json-wrong-type"],
                "{key}"
            );
        }
        assert_eq!(
            codes(&with("/author", json!("  "))),
            vec!["skill-json-wrong-type"]
        );
    }

    #[test]
    fn duplicate_keys_and_bom() {
        let text = "{\"name\": \"aria-web_search\",\n \"layer\": 0,\n \"layer\": 4, \"tools\": [{\"name\": \"a\", \"name\": \"b\"}]}";
        let p = SkillManifest::parse(
            text.as_bytes(),
            None,
            &ManifestOptions::default(),
            Profile::Lenient,
        );
        let dups: Vec<(&str, Option<usize>)> = p
            .diagnostics
            .iter()
            .filter(|d| d.rule == Rule::ManifestDuplicateKey)
            .map(|d| (d.message.as_str(), d.line))
            .collect();
        assert_eq!(dups.len(), 2, "{dups:?}");
        assert!(dups[0].0.contains("`/layer`"));
        assert_eq!(dups[0].1, Some(3));
        assert!(dups[1].0.contains("`/tools/0/name`"));
        let with_bom = [&b"\xEF\xBB\xBF"[..], base().to_string().as_bytes()].concat();
        let p = SkillManifest::parse(
            &with_bom,
            Some("web_search"),
            &ManifestOptions::default(),
            Profile::Spec,
        );
        assert_eq!(codes_of(&p), vec!["encoding-bom"]);
        assert!(p.manifest.is_some());
    }

    fn codes_of(p: &ParsedManifest) -> Vec<&'static str> {
        p.diagnostics.iter().map(Diagnostic::code).collect()
    }

    #[test]
    fn syntax_and_shape() {
        let p = SkillManifest::parse(
            b"{\n\"name\": }",
            None,
            &ManifestOptions::default(),
            Profile::Spec,
        );
        assert_eq!(p.diagnostics[0].code(), "skill-json-syntax");
        assert_eq!(p.diagnostics[0].line, Some(2));
        let p = SkillManifest::parse(b"[1]", None, &ManifestOptions::default(), Profile::Spec);
        assert_eq!(p.diagnostics[0].code(), "skill-json-not-object");
        let p = SkillManifest::parse(
            b"{\n\xff}",
            None,
            &ManifestOptions::default(),
            Profile::Spec,
        );
        assert_eq!(p.diagnostics[0].code(), "encoding-invalid-utf8");
        assert_eq!(p.diagnostics[0].line, Some(2));
        let utf16: Vec<u8> = "{}".encode_utf16().flat_map(u16::to_le_bytes).collect();
        let p = SkillManifest::parse(
            &[&[0xFF, 0xFE][..], &utf16].concat(),
            None,
            &ManifestOptions::default(),
            Profile::Spec,
        );
        assert_eq!(p.diagnostics[0].code(), "encoding-utf16");
    }

    #[test]
    fn naming_rules_and_a_configurable_prefix() {
        assert_eq!(
            codes(&with("/name", json!("web_search"))),
            vec!["skill-json-name-format"]
        );
        assert_eq!(
            codes(&with("/name", json!("aria-"))),
            vec!["skill-json-name-format"]
        );
        assert_eq!(
            codes(&with("/name", json!("aria-Web"))),
            vec!["skill-json-name-format"]
        );
        assert_eq!(
            codes(&with("/name", json!("aria-web__search"))),
            vec!["skill-json-name-format"]
        );
        assert_eq!(
            codes(&with("/name", json!("aria-other"))),
            vec!["skill-json-name-directory-mismatch"]
        );
        let acme = SkillManifest::parse(
            with("/name", json!("acme-web_search"))
                .to_string()
                .as_bytes(),
            Some("web_search"),
            &ManifestOptions::with_prefix("acme"),
            Profile::Spec,
        );
        assert!(acme.diagnostics.is_empty(), "{:?}", acme.diagnostics);
        let bare = SkillManifest::parse(
            with("/name", json!("web_search")).to_string().as_bytes(),
            Some("web_search"),
            &ManifestOptions::with_prefix(""),
            Profile::Spec,
        );
        assert!(bare.diagnostics.is_empty(), "{:?}", bare.diagnostics);
        assert_eq!(bare.manifest.unwrap().skill_name(""), Some("web_search"));
    }

    #[test]
    fn layer_boundaries() {
        for ok in [0, 4] {
            assert_eq!(codes(&with("/layer", json!(ok))), Vec::<&str>::new());
        }
        for bad in [json!(5), json!(-1), json!(2.5)] {
            assert_eq!(
                codes(&with("/layer", bad)),
                vec!["skill-json-layer-invalid"]
            );
        }
    }

    #[test]
    fn version_status_focus_and_dependencies() {
        assert_eq!(
            codes(&with("/version", json!("2.0"))),
            vec!["skill-json-version-invalid"]
        );
        let mut v = base();
        v["status"] = json!("active");
        assert_eq!(codes(&v), Vec::<&str>::new());
        v["status"] = json!("retired");
        assert_eq!(codes(&v), vec!["skill-json-status-invalid"]);
        assert_eq!(
            codes(&with("/focus_affinity", json!(["journalist", "astronaut"]))),
            vec!["skill-json-focus-unknown"]
        );
        assert_eq!(
            codes(&with("/dependencies", json!(["a", "a", "", "web_search"]))),
            vec![
                "skill-json-dependency-invalid",
                "skill-json-dependency-invalid",
                "skill-json-dependency-invalid"
            ]
        );
        let mut v = base();
        v["homepage"] = json!("x");
        assert_eq!(codes(&v), vec!["skill-json-unknown-key"]);
        assert_eq!(
            parse_value(&v, Profile::Spec).diagnostics[0].severity,
            crate::Severity::Warning
        );
        let parsed = parse_value(&v, Profile::Lenient);
        assert_eq!(parsed.diagnostics[0].rule, Rule::ManifestUnknownKey);
        assert_eq!(parsed.diagnostics[0].severity, crate::Severity::Info);
        assert_eq!(parsed.manifest.unwrap().extra["homepage"], json!("x"));
    }

    #[test]
    fn tool_rules() {
        let schema = |s: Value| with("/tools/0/input_schema", s);
        assert_eq!(
            codes(&with("/tools/0/name", json!("Search"))),
            vec!["tool-name-invalid"]
        );
        assert_eq!(
            codes(&with("/tools/0/name", json!("a".repeat(64)))),
            Vec::<&str>::new()
        );
        assert_eq!(
            codes(&with("/tools/0/name", json!("a".repeat(65)))),
            vec!["tool-name-invalid"]
        );
        assert_eq!(
            codes(&with("/tools/0/description", json!(""))),
            vec!["tool-description-missing"]
        );
        assert_eq!(codes(&schema(json!(true))), vec!["tool-schema-not-object"]);
        assert_eq!(
            codes(&schema(json!({"type": "string"}))),
            vec!["tool-schema-not-object"]
        );
        assert_eq!(
            codes(&schema(
                json!({"type": "object", "properties": {"q": {"type": "strin"}}})
            )),
            vec!["tool-schema-invalid"]
        );
        assert_eq!(
            codes(&schema(
                json!({"type": "object", "properties": {"q": {"type": "string", "pattern": "("}}})
            )),
            vec!["tool-schema-invalid"]
        );
        assert_eq!(
            codes(&schema(
                json!({"type": "object", "properties": {"q": {}}, "required": ["q", "r"]})
            )),
            vec!["tool-required-unknown"]
        );
        assert_eq!(
            codes(&schema(json!({"type": "object", "required": ["q"]}))),
            vec!["tool-required-unknown"]
        );
        let mut v = base();
        let schema = v["tools"][0]["input_schema"].take();
        v["tools"][0]
            .as_object_mut()
            .unwrap()
            .remove("input_schema");
        v["tools"][0]["parameters"] = schema;
        let parsed = parse_value(&v, Profile::Spec);
        assert_eq!(codes(&v), vec!["tool-parameters-alias"]);
        assert_eq!(parsed.diagnostics[0].severity, crate::Severity::Warning);
        assert!(parsed.manifest.unwrap().tools[0].input_schema["required"] == json!(["q"]));
        let mut v = base();
        v["tools"][0]["parameters"] = json!({"type": "object"});
        assert_eq!(codes(&v), vec!["tool-schema-conflict"]);
        let mut v = base();
        v["tools"][0]
            .as_object_mut()
            .unwrap()
            .remove("input_schema");
        assert_eq!(codes(&v), vec!["tool-schema-missing"]);
        let mut v = base();
        let tool = v["tools"][0].clone();
        v["tools"].as_array_mut().unwrap().push(tool);
        assert_eq!(codes(&v), vec!["tool-name-duplicate"]);
    }

    #[test]
    fn tool_count_is_bounded() {
        let options = ManifestOptions {
            max_tools: 2,
            ..ManifestOptions::default()
        };
        let tool = base()["tools"][0].clone();
        let mut v = base();
        let mut second = tool.clone();
        second["name"] = json!("other");
        v["tools"] = json!([tool.clone(), second.clone()]);
        let ok = SkillManifest::parse(
            v.to_string().as_bytes(),
            Some("web_search"),
            &options,
            Profile::Spec,
        );
        assert!(ok.diagnostics.is_empty(), "{:?}", ok.diagnostics);
        let mut third = tool;
        third["name"] = json!("third");
        v["tools"] = json!([v["tools"][0].clone(), second, third]);
        let over = SkillManifest::parse(
            v.to_string().as_bytes(),
            Some("web_search"),
            &options,
            Profile::Spec,
        );
        assert_eq!(over.diagnostics[0].rule, Rule::ManifestLimitExceeded);
        assert!(over.manifest.is_none());
    }

    #[test]
    fn an_explosive_pattern_is_refused_quickly() {
        let schema = json!({"type": "object", "properties": {"q": {"type": "string", "pattern": "((a{100}){100}){100}"}}});
        let started = std::time::Instant::now();
        let mut v = base();
        v["tools"] = json!((0..100).map(|i| json!({"name": format!("t{i}"), "description": "d", "input_schema": schema.clone()})).collect::<Vec<_>>());
        let options = ManifestOptions {
            max_patterns: 100,
            ..ManifestOptions::default()
        };
        let parsed = SkillManifest::parse(
            v.to_string().as_bytes(),
            Some("web_search"),
            &options,
            Profile::Spec,
        );
        assert_eq!(parsed.diagnostics.len(), 100);
        assert!(
            parsed
                .diagnostics
                .iter()
                .all(|d| d.rule == Rule::ToolSchemaInvalid)
        );
        // Not a timing assertion: a report of what it took, for a person reading the log.
        println!("100 explosive patterns refused in {:?}", started.elapsed());
        // One more expression than allowed, and nothing is compiled.
        let mut one_more = v.clone();
        one_more["tools"][0]["input_schema"]["patternProperties"] = json!({"^x": {}});
        let over = SkillManifest::parse(
            one_more.to_string().as_bytes(),
            Some("web_search"),
            &options,
            Profile::Spec,
        );
        assert_eq!(over.diagnostics.len(), 1);
        assert_eq!(over.diagnostics[0].rule, Rule::ManifestLimitExceeded);
    }

    #[test]
    fn an_unknown_meta_schema_is_an_error_not_a_panic() {
        assert_eq!(
            codes(&with(
                "/tools/0/input_schema",
                json!({"$schema": "https://example.invalid/meta", "type": "object"})
            )),
            vec!["tool-schema-invalid"]
        );
    }
}
