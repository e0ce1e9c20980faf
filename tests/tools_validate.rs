//! Tool input validation: every violation with its nested path, load-time schema errors,
//! and the registry that validates before it dispatches.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::{Value, json};
use skills::core::tools::{
    CallError, MAX_MESSAGE_CHARS, Tool, ToolError, ToolRegistry, Violations, handler_fn,
    skill_tools,
};
use skills::core::{LoadOptions, Skill};

fn order_tool() -> Tool {
    Tool::new(
        "place_order",
        "Place an order.",
        json!({
            "type": "object",
            "properties": {
                "customer": {"$ref": "#/$defs/Customer"},
                "items": {
                    "type": "array",
                    "minItems": 1,
                    "items": {
                        "type": "object",
                        "properties": {
                            "name": {"type": "string", "minLength": 1},
                            "qty": {"type": "integer", "minimum": 1},
                            "options": {"type": "object", "additionalProperties": {"type": "string"}}
                        },
                        "required": ["name", "qty"],
                        "additionalProperties": false
                    }
                },
                "coupon": {"type": "string", "pattern": "^[A-Z]{4}[0-9]{2}$"},
                "when": {"enum": ["now", "later"]}
            },
            "required": ["customer", "items"],
            "$defs": {
                "Customer": {
                    "type": "object",
                    "properties": {"email": {"type": "string"}, "vip": {"type": "boolean"}},
                    "required": ["email"]
                }
            }
        }),
    )
    .unwrap()
}

/// `(instance path, keyword)` of every violation, sorted.
fn found(violations: &Violations) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = violations
        .as_slice()
        .iter()
        .map(|v| (v.instance_path.clone(), v.keyword.clone()))
        .collect();
    out.sort();
    out
}

fn pairs(expected: &[(&str, &str)]) -> Vec<(String, String)> {
    expected
        .iter()
        .map(|(a, b)| ((*a).to_owned(), (*b).to_owned()))
        .collect()
}

#[test]
fn a_valid_input_passes() {
    let input = json!({
        "customer": {"email": "a@b.c", "vip": true},
        "items": [{"name": "tea", "qty": 2, "options": {"size": "L"}}],
        "coupon": "SAVE10",
        "when": "now"
    });
    assert!(order_tool().validate_input(&input).is_ok());
}

#[test]
fn every_violation_is_reported_with_its_nested_path() {
    let input = json!({
        "customer": {"vip": "yes"},
        "items": [
            {"name": "tea", "qty": 1},
            {"name": "", "qty": 0},
            {"name": 7, "qty": 1, "options": {"size": 3}},
            {"qty": 1, "gift": true}
        ],
        "coupon": "nope",
        "when": "tomorrow",
        "extra": null
    });
    let errors = order_tool().validate_input(&input).unwrap_err();
    assert_eq!(
        found(&errors),
        pairs(&[
            ("/coupon", "pattern"),
            ("/customer", "required"),
            ("/customer/vip", "type"),
            ("/items/1/name", "minLength"),
            ("/items/1/qty", "minimum"),
            ("/items/2/name", "type"),
            ("/items/2/options/size", "type"),
            ("/items/3", "additionalProperties"),
            ("/items/3", "required"),
            ("/when", "enum"),
        ])
    );
    // `extra` is allowed: the root does not close its properties.
    let by_path = |p: &str| {
        errors
            .as_slice()
            .iter()
            .find(|v| v.instance_path == p)
            .unwrap()
            .clone()
    };
    assert_eq!(
        by_path("/items/2/options/size").schema_path,
        "/properties/items/items/properties/options/additionalProperties/type"
    );
    assert_eq!(
        by_path("/customer/vip").schema_path,
        "/$defs/Customer/properties/vip/type"
    );
    assert!(by_path("/when").message.contains("tomorrow"));
    // The whole report reads as one line per violation, in a stable order.
    let again = order_tool().validate_input(&input).unwrap_err();
    assert_eq!(errors.to_string(), again.to_string());
    assert_eq!(
        serde_json::to_value(&errors).unwrap()[0]
            .as_object()
            .unwrap()
            .len(),
        4
    );
}

#[test]
fn the_root_must_be_an_object() {
    for input in [json!([]), json!("x"), json!(null), json!(1)] {
        let errors = order_tool().validate_input(&input).unwrap_err();
        assert_eq!(found(&errors), pairs(&[("", "type")]), "{input}");
    }
}

#[test]
fn huge_values_give_short_messages() {
    let input = json!({"customer": {"email": "x".repeat(1_000_000)}, "items": [], "when": "y".repeat(1_000_000)});
    let errors = order_tool().validate_input(&input).unwrap_err();
    for v in errors.as_slice() {
        assert!(v.message.chars().count() <= MAX_MESSAGE_CHARS + 1);
    }
    assert_eq!(
        found(&errors),
        pairs(&[("/items", "minItems"), ("/when", "enum")])
    );
}

#[test]
fn the_example_skill_validates_its_inputs() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/skills/web-research");
    let skill = Skill::load(dir, &LoadOptions::default()).unwrap();
    let tools = skill_tools(&skill).unwrap();
    let search = &tools[0];
    assert!(search.validate_input(&json!({"query": "rust"})).is_ok());
    let errors = search
        .validate_input(&json!({"query": 1, "limit": 50}))
        .unwrap_err();
    assert_eq!(
        found(&errors),
        pairs(&[("/limit", "maximum"), ("/query", "type")])
    );
}

#[test]
fn bad_schemas_fail_when_the_tool_is_built() {
    let cases = [
        (
            json!({"type": "object", "properties": {"a": {"type": "strin"}}}),
            "/properties/a/type",
        ),
        (
            json!({"type": "object", "properties": {"a": {"minimum": "1"}}}),
            "/properties/a/minimum",
        ),
        (json!({"type": "object", "required": "a"}), "/required"),
        (
            json!({"type": "object", "properties": {"a": {"pattern": "("}}}),
            "",
        ),
        (
            json!({"type": "object", "properties": {"a": {"$ref": "#/$defs/Nope"}}}),
            "",
        ),
        (
            json!({"type": "object", "$schema": "https://example.invalid/schema"}),
            "",
        ),
        (json!({"type": "array"}), ""),
        (json!([]), ""),
    ];
    for (schema, path) in cases {
        match Tool::new("t", "d", schema.clone()) {
            Err(ToolError::InvalidSchema { path: p, which, .. }) => {
                assert_eq!(which, "input");
                if !path.is_empty() {
                    assert_eq!(p, path, "{schema}");
                }
            }
            other => panic!("{schema}: {other:?}"),
        }
    }
}

#[tokio::test]
async fn the_registry_validates_before_it_calls() {
    let calls = Arc::new(AtomicUsize::new(0));
    let counter = calls.clone();
    let mut registry = ToolRegistry::new();
    registry
        .register(
            order_tool()
                .with_output_schema(json!({"type": "object", "required": ["id"]}))
                .unwrap(),
            handler_fn(move |input: Value| {
                let counter = counter.clone();
                async move {
                    counter.fetch_add(1, Ordering::SeqCst);
                    let n = input["items"].as_array().map_or(0, Vec::len);
                    if n > 2 {
                        return Ok(json!({"count": n}));
                    }
                    Ok(json!({"id": format!("order-{n}")}))
                }
            }),
        )
        .unwrap();
    let good = json!({"customer": {"email": "a@b.c"}, "items": [{"name": "tea", "qty": 1}]});
    assert_eq!(
        registry.call("place_order", good).await.unwrap(),
        json!({"id": "order-1"})
    );
    match registry
        .call("place_order", json!({"items": [{"qty": 0}]}))
        .await
    {
        Err(CallError::InvalidInput { tool, violations }) => {
            assert_eq!(tool, "place_order");
            assert_eq!(
                found(&violations),
                pairs(&[
                    ("", "required"),
                    ("/items/0", "required"),
                    ("/items/0/qty", "minimum")
                ])
            );
        }
        other => panic!("{other:?}"),
    }
    let three = json!({"customer": {"email": "a"}, "items": [{"name": "a", "qty": 1}, {"name": "b", "qty": 1}, {"name": "c", "qty": 1}]});
    assert!(matches!(
        registry.call("place_order", three).await,
        Err(CallError::InvalidOutput { .. })
    ));
    assert!(matches!(
        registry.call("nope", json!({})).await,
        Err(CallError::UnknownTool(_))
    ));
    assert_eq!(calls.load(Ordering::SeqCst), 2);
}
