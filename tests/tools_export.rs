//! Tool export: the example skill's tools in every format (snapshots), each export checked
//! against its format's rules, and OpenAI strict mode checked by walking its output.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::BTreeSet;

use serde_json::{Value, json};
use skills::core::tools::{
    ExportOptions, Tool, ToolAnnotations, ToolError, ToolFormat, export, is_valid_tool_name,
    skill_tools,
};
use skills::core::{LoadOptions, Skill};

const WEB_RESEARCH: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/skills/web-research");

fn web_research() -> (Skill, Vec<Tool>) {
    let skill = Skill::load(WEB_RESEARCH, &LoadOptions::default()).unwrap();
    let tools = skill_tools(&skill).unwrap();
    (skill, tools)
}

fn pretty(value: &Value) -> String {
    serde_json::to_string_pretty(value).unwrap()
}

/// Keys of an object, as a set.
fn keys(value: &Value) -> BTreeSet<&str> {
    value
        .as_object()
        .unwrap_or_else(|| panic!("not an object: {value}"))
        .keys()
        .map(String::as_str)
        .collect()
}

fn subset(value: &Value, allowed: &[&str], required: &[&str]) {
    let found = keys(value);
    for key in &found {
        assert!(allowed.contains(key), "unexpected key `{key}` in {value}");
    }
    for key in required {
        assert!(found.contains(key), "missing key `{key}` in {value}");
    }
}

fn object_schema(schema: &Value) {
    assert_eq!(schema["type"], "object", "{schema}");
}

/// Checks one exported tool against its format's rules; returns its name.
fn check_format(format: ToolFormat, tool: &Value, strict: bool) -> String {
    let (name, schema) = match format {
        ToolFormat::Mcp => {
            subset(
                tool,
                &[
                    "name",
                    "title",
                    "description",
                    "inputSchema",
                    "outputSchema",
                    "annotations",
                ],
                &["name", "inputSchema"],
            );
            if let Some(output) = tool.get("outputSchema") {
                object_schema(output);
            }
            if let Some(annotations) = tool.get("annotations") {
                subset(
                    annotations,
                    &[
                        "title",
                        "readOnlyHint",
                        "destructiveHint",
                        "idempotentHint",
                        "openWorldHint",
                    ],
                    &[],
                );
            }
            (&tool["name"], &tool["inputSchema"])
        }
        ToolFormat::OpenAiChat => {
            subset(tool, &["type", "function"], &["type", "function"]);
            assert_eq!(tool["type"], "function");
            let function = &tool["function"];
            subset(
                function,
                &["name", "description", "parameters", "strict"],
                &["name", "parameters"],
            );
            assert_eq!(
                function.get("strict").cloned(),
                strict.then_some(json!(true))
            );
            (&function["name"], &function["parameters"])
        }
        ToolFormat::OpenAiResponses => {
            subset(
                tool,
                &["type", "name", "description", "parameters", "strict"],
                &["type", "name", "parameters", "strict"],
            );
            assert_eq!(tool["type"], "function");
            assert_eq!(tool["strict"], json!(strict));
            (&tool["name"], &tool["parameters"])
        }
        ToolFormat::Anthropic => {
            subset(
                tool,
                &["name", "description", "input_schema"],
                &["name", "input_schema"],
            );
            let schema = &tool["input_schema"];
            for union in ["anyOf", "oneOf", "allOf"] {
                assert!(schema.get(union).is_none(), "root {union} in {schema}");
            }
            (&tool["name"], schema)
        }
        _ => unreachable!(),
    };
    let name = name.as_str().unwrap();
    assert!(is_valid_tool_name(name), "{name}");
    object_schema(schema);
    if format != ToolFormat::Mcp {
        assert!(schema.get("$schema").is_none() && schema.get("$id").is_none());
    }
    if strict {
        check_strict(schema, "");
    }
    name.to_owned()
}

const STRICT_KEYWORDS: &[&str] = &[
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

/// The strict-mode invariants, at every schema position.
fn check_strict(schema: &Value, path: &str) {
    let map = schema
        .as_object()
        .unwrap_or_else(|| panic!("{path}: a strict schema is an object"));
    for key in map.keys() {
        assert!(
            STRICT_KEYWORDS.contains(&key.as_str()),
            "{path}: `{key}` in a strict schema"
        );
    }
    let is_object = match map.get("type") {
        Some(Value::String(t)) => t == "object",
        Some(Value::Array(ts)) => ts.iter().any(|t| t == "object"),
        _ => map.contains_key("properties"),
    };
    if is_object {
        assert_eq!(
            map.get("additionalProperties"),
            Some(&json!(false)),
            "{path}"
        );
        let properties: BTreeSet<&String> = map["properties"].as_object().unwrap().keys().collect();
        let required: BTreeSet<&String> = map["required"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| match v {
                Value::String(s) => s,
                _ => panic!("{path}: required holds {v}"),
            })
            .collect();
        assert_eq!(properties, required, "{path}: every property is required");
        for (name, sub) in map["properties"].as_object().unwrap() {
            check_strict(sub, &format!("{path}/properties/{name}"));
        }
    }
    if let Some(items) = map.get("items") {
        check_strict(items, &format!("{path}/items"));
    }
    if let Some(branches) = map.get("anyOf") {
        for (i, branch) in branches.as_array().unwrap().iter().enumerate() {
            check_strict(branch, &format!("{path}/anyOf/{i}"));
        }
    }
    for defs in ["$defs", "definitions"] {
        if let Some(entries) = map.get(defs) {
            for (name, sub) in entries.as_object().unwrap() {
                check_strict(sub, &format!("{path}/{defs}/{name}"));
            }
        }
    }
}

#[test]
fn web_research_in_every_format() {
    let (skill, tools) = web_research();
    assert_eq!(tools.len(), 2);
    let options = ExportOptions::new().skill(skill.name());
    for format in ToolFormat::ALL {
        let out = export(&tools, format, &options).unwrap();
        let names: Vec<String> = out
            .as_array()
            .unwrap()
            .iter()
            .map(|t| check_format(format, t, false))
            .collect();
        assert_eq!(
            names,
            ["web-research__search", "web-research__fetch_page"],
            "{format}"
        );
        insta::assert_snapshot!(format!("web_research_{}", format.as_str()), pretty(&out));
    }
}

#[test]
fn web_research_in_strict_mode() {
    let (skill, tools) = web_research();
    let options = ExportOptions::new().skill(skill.name()).strict(true);
    for format in [ToolFormat::OpenAiChat, ToolFormat::OpenAiResponses] {
        let out = export(&tools, format, &options).unwrap();
        for tool in out.as_array().unwrap() {
            check_format(format, tool, true);
        }
        insta::assert_snapshot!(
            format!("web_research_{}_strict", format.as_str()),
            pretty(&out)
        );
    }
    // Strict mode is an OpenAI option; the other formats are unchanged by it.
    for format in [ToolFormat::Mcp, ToolFormat::Anthropic] {
        assert_eq!(
            export(&tools, format, &options).unwrap(),
            export(&tools, format, &options.clone().strict(false)).unwrap()
        );
    }
}

fn rich_tool() -> Tool {
    Tool::new(
        "create_issue",
        "Create an issue.",
        json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "title": "CreateIssue",
            "type": "object",
            "properties": {
                "title": {"type": "string", "description": "One line.", "examples": ["Crash on start"]},
                "body": {"type": "string", "default": ""},
                "labels": {"type": "array", "items": {"type": "string", "enum": ["bug", "docs"]}, "maxItems": 5},
                "assignee": {"$ref": "#/$defs/User", "description": "Who works on it."},
                "reviewer": {"$ref": "#/$defs/User"},
                "due": {"type": "string", "format": "date"},
                "link": {"type": "string", "format": "uri"},
                "priority": {"anyOf": [{"type": "integer", "minimum": 1, "maximum": 4}, {"type": "string", "const": "urgent"}]},
                "steps": {"type": "array", "items": {
                    "type": "object",
                    "properties": {"action": {"type": "string"}, "expected": {"type": "string"}},
                    "required": ["action"]
                }}
            },
            "required": ["title", "assignee"],
            "$defs": {
                "User": {"type": "object", "properties": {"login": {"type": "string", "pattern": "^[a-z0-9-]+$"}, "id": {"type": "integer"}}, "required": ["login"]}
            }
        }),
    )
    .unwrap()
    .with_title("Create issue")
    .with_annotations(ToolAnnotations::new().destructive(false).idempotent(false))
    .with_output_schema(json!({"type": "object", "properties": {"number": {"type": "integer"}}, "required": ["number"]}))
    .unwrap()
}

#[test]
fn a_rich_schema_made_strict() {
    let tool = rich_tool();
    let strict = tool.strict_input_schema().unwrap();
    check_strict(&strict, "");
    // The `$ref` with a description is inlined; the bare optional one becomes nullable.
    assert_eq!(
        strict["properties"]["assignee"]["description"],
        "Who works on it."
    );
    assert_eq!(
        strict["properties"]["reviewer"]["anyOf"][1],
        json!({"type": "null"})
    );
    insta::assert_snapshot!("rich_strict_schema", pretty(&strict));
    // The same in all four formats passes each format's rules.
    for format in ToolFormat::ALL {
        for strict in [false, true] {
            let options = ExportOptions::new().skill("issues").strict(strict);
            let out = export(std::slice::from_ref(&tool), format, &options).unwrap();
            let strict =
                strict && matches!(format, ToolFormat::OpenAiChat | ToolFormat::OpenAiResponses);
            check_format(format, &out[0], strict);
        }
    }
    let mcp = export(&[tool], ToolFormat::Mcp, &ExportOptions::new()).unwrap();
    insta::assert_snapshot!("rich_mcp", pretty(&mcp));
}

#[test]
fn a_strict_model_input_validates_after_its_nulls_are_removed() {
    let tool = rich_tool();
    let mut input = json!({
        "title": "t", "body": null, "labels": null, "assignee": {"login": "ann", "id": null},
        "reviewer": null, "due": null, "link": null, "priority": null, "steps": [{"action": "a", "expected": null}]
    });
    assert!(tool.validate_input(&input).is_err());
    tool.remove_strict_nulls(&mut input);
    assert_eq!(
        input,
        json!({"title": "t", "assignee": {"login": "ann", "id": null}, "steps": [{"action": "a"}]})
    );
    // `$ref`s are not followed, so `assignee.id` keeps its null and still fails.
    let errors = tool.validate_input(&input).unwrap_err();
    assert_eq!(errors.as_slice()[0].instance_path, "/assignee/id");
}

#[test]
fn what_cannot_be_strict_is_an_error_with_its_path() {
    let cases = [
        (
            json!({"type": "object", "properties": {"env": {"type": "object", "additionalProperties": {"type": "string"}}}}),
            "/properties/env/additionalProperties",
        ),
        (
            json!({"type": "object", "properties": {"m": {"type": "object", "patternProperties": {"^x-": {"type": "string"}}}}}),
            "/properties/m/patternProperties",
        ),
        (
            json!({"type": "object", "properties": {"a": {"type": "array", "items": {"type": "string"}, "uniqueItems": true}}}),
            "/properties/a/uniqueItems",
        ),
        (
            json!({"type": "object", "properties": {"a": {"allOf": [{"type": "string"}]}}}),
            "/properties/a/allOf",
        ),
        (
            json!({"type": "object", "$defs": {"X": {"type": "string", "maxLength": 3}}}),
            "/$defs/X/maxLength",
        ),
    ];
    for (schema, path) in cases {
        let tool = Tool::new("t", "d", schema.clone()).unwrap();
        for format in [ToolFormat::OpenAiChat, ToolFormat::OpenAiResponses] {
            match export(
                std::slice::from_ref(&tool),
                format,
                &ExportOptions::new().strict(true),
            ) {
                Err(ToolError::NotStrict { path: p, tool, .. }) => {
                    assert_eq!(p, path, "{schema}");
                    assert_eq!(tool, "t");
                }
                other => panic!("{schema}: {other:?}"),
            }
        }
        // Without strict mode the same schemas export as they are.
        assert!(export(&[tool], ToolFormat::OpenAiChat, &ExportOptions::new()).is_ok());
    }
}

#[test]
fn names_are_checked_and_joined() {
    let (_, tools) = web_research();
    let joined = |skill: &str| {
        export(
            &tools,
            ToolFormat::Anthropic,
            &ExportOptions::new().skill(skill),
        )
    };
    let out = joined("Web Research (beta)").unwrap();
    assert_eq!(out[0]["name"], "Web_Research__beta___search");
    // 64 characters exactly for the longer tool name, one more fails.
    let fits = "s".repeat(64 - "__fetch_page".len());
    assert!(joined(&fits).is_ok());
    match joined(&format!("{fits}s")) {
        Err(ToolError::NameTooLong { name, len }) => {
            assert_eq!(len, 65);
            assert!(name.ends_with("__fetch_page"));
        }
        other => panic!("{other:?}"),
    }
    assert!(matches!(
        "openai".parse::<ToolFormat>(),
        Err(ToolError::UnknownFormat(_))
    ));
}
