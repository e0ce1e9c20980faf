//! Benchmarks of tool definitions: validating input against a compiled schema, exporting to
//! a model API's format, and building a skill's tools.
//!
//! The `search` tool of `examples/skills/web-research` (two properties, `minimum`/`maximum`,
//! one required):
//!
//! * `tools/validate_valid` and `tools/validate_invalid`: `Tool::validate_input` on a valid
//!   input and on one with two violations (every violation collected with its paths).
//! * `tools/export_openai_chat` and `tools/export_openai_chat_strict`: `export` of the skill's
//!   two tools, plain and in strict mode (the schema rewritten each time).
//! * `tools/skill_tools`: building (checking and compiling) the skill's two tools.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::hint::black_box;
use std::path::Path;

use criterion::Criterion;
use serde_json::json;
use skills::core::tools::{ExportOptions, ToolFormat, export, skill_tools};
use skills::core::{LoadOptions, Skill};

fn main() {
    let mut c = Criterion::default().configure_from_args();
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/skills/web-research");
    let skill = Skill::load(&dir, &LoadOptions::default()).unwrap();
    let tools = skill_tools(&skill).unwrap();
    let search = &tools[0];
    let valid = json!({"query": "rust async traits", "limit": 5});
    let invalid = json!({"query": 1, "limit": 50});
    assert!(search.validate_input(&valid).is_ok());
    assert!(search.validate_input(&invalid).is_err());

    let mut group = c.benchmark_group("tools");
    group.bench_function("validate_valid", |b| {
        b.iter(|| search.validate_input(black_box(&valid)).is_ok())
    });
    group.bench_function("validate_invalid", |b| {
        b.iter(|| search.validate_input(black_box(&invalid)).is_err())
    });
    for (name, strict) in [
        ("export_openai_chat", false),
        ("export_openai_chat_strict", true),
    ] {
        let options = ExportOptions::new().skill(skill.name()).strict(strict);
        group.bench_function(name, |b| {
            b.iter(|| export(black_box(&tools), ToolFormat::OpenAiChat, &options).unwrap())
        });
    }
    group.bench_function("skill_tools", |b| {
        b.iter(|| skill_tools(black_box(&skill)).unwrap())
    });
    group.finish();
    c.final_summary();
}
