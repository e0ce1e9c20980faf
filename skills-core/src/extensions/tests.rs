#![allow(clippy::unwrap_used, clippy::expect_used)]

use super::*;
use crate::{ParseOptions, Profile, Severity, SkillMd};

const CLAUDE: &str = "---
name: deploy
description: Ship the service.
when_to_use: After a merge to main.
argument-hint: '[environment]'
arguments: [environment, version]
disable-model-invocation: true
user-invocable: false
disallowed-tools: Bash(rm:*), WebFetch
model: opus
effort: high
context: fork
agent: general-purpose
hooks:
  PreToolUse: []
paths:
  - 'services/**/*.rs'
  - Cargo.toml
shell: bash
metadata:
  short-description: Ship it
---
# Deploy
";

#[test]
fn claude_code_fields_are_typed() {
    let parsed = SkillMd::parse_str(CLAUDE, Some("deploy"), &ParseOptions::default());
    assert!(parsed.diagnostics.is_empty(), "{:?}", parsed.diagnostics);
    let fm = parsed.document.unwrap().frontmatter;
    let cc = fm.claude_code();
    assert_eq!(cc.when_to_use.as_deref(), Some("After a merge to main."));
    assert_eq!(cc.argument_hint.as_deref(), Some("[environment]"));
    assert_eq!(cc.arguments, ["environment", "version"]);
    assert!(cc.disable_model_invocation && !cc.user_invocable);
    assert!(!fm.model_invocable());
    assert_eq!(cc.disallowed_tools, ["Bash(rm:*)", "WebFetch"]);
    assert_eq!(
        (
            cc.model.as_deref(),
            cc.effort.as_deref(),
            cc.context.as_deref()
        ),
        (Some("opus"), Some("high"), Some("fork"))
    );
    assert_eq!(cc.agent.as_deref(), Some("general-purpose"));
    assert!(cc.hooks.is_some());
    assert_eq!(cc.shell.as_deref(), Some("bash"));
    assert_eq!(fm.short_description(), Some("Ship it"));
    assert!(cc.applies_to("services/api/src/main.rs"));
    assert!(cc.applies_to("Cargo.toml"));
    assert!(!cc.applies_to("docs/guide.md"));
    assert!(!cc.applies_to("services/api/README.md"));

    let plain = SkillMd::parse_str(
        "---\nname: a\ndescription: b\n---\n",
        Some("a"),
        &ParseOptions::default(),
    );
    let plain = plain.document.unwrap().frontmatter.claude_code();
    assert!(plain.user_invocable && !plain.disable_model_invocation);
    assert!(plain.applies_to("anything/at/all"));
}

#[test]
fn spec_warns_for_an_enabled_set_and_refuses_the_rest() {
    let spec = ParseOptions::for_profile(Profile::Spec);
    let refused = SkillMd::parse_str(CLAUDE, Some("deploy"), &spec);
    assert!(!refused.is_valid());
    assert!(refused.diagnostics.iter().all(|d| {
        d.code() == "unknown-field"
            && d.message
                .contains("claude-code extension set, which is not enabled")
    }));
    let enabled = spec.with_extensions(&[ExtensionSet::ClaudeCode]);
    let parsed = SkillMd::parse_str(CLAUDE, Some("deploy"), &enabled);
    assert!(parsed.is_valid(), "{:?}", parsed.diagnostics);
    assert_eq!(parsed.diagnostics.len(), CLAUDE_CODE_KEYS.len());
    assert!(
        parsed
            .diagnostics
            .iter()
            .all(|d| d.code() == "extension-field" && d.severity == Severity::Warning)
    );
    // A host that narrows Lenient to the library's set sees Claude Code's keys as unknown.
    let narrow = ParseOptions::default().with_extensions(&[ExtensionSet::Library]);
    let parsed = SkillMd::parse_str(CLAUDE, Some("deploy"), &narrow);
    assert!(
        parsed
            .diagnostics
            .iter()
            .any(|d| d.code() == "unknown-field")
    );
}

#[test]
fn every_key_belongs_to_one_set() {
    for set in ExtensionSet::ALL {
        for key in set.keys() {
            assert_eq!(ExtensionSet::of_key(key), Some(*set));
            assert!(!crate::STANDARD_KEYS.contains(key));
        }
    }
    assert_eq!(ExtensionSet::of_key("triggers"), None);
}

#[test]
fn the_openai_sidecar_is_read() {
    let text = "interface:\n  display_name: OpenAI Automation\n  short_description: Automate runs\n  default_prompt: Use $automation\ndependencies:\n  tools:\n    - type: mcp\n      value: openaiDeveloperDocs\npolicy:\n  allow_implicit_invocation: false\n";
    let sidecar = OpenAiSidecar::parse(text).unwrap();
    assert_eq!(sidecar.display_name.as_deref(), Some("OpenAI Automation"));
    assert_eq!(sidecar.short_description.as_deref(), Some("Automate runs"));
    assert_eq!(sidecar.default_prompt.as_deref(), Some("Use $automation"));
    assert_eq!(sidecar.dependency_tools, ["openaiDeveloperDocs"]);
    assert_eq!(sidecar.allow_implicit_invocation, Some(false));
    assert!(OpenAiSidecar::parse("- a list").is_none());
    assert!(OpenAiSidecar::parse("a: [unclosed").is_none());
}

#[test]
fn globs_match_by_segment() {
    assert!(glob_matches("**", "a/b/c"));
    assert!(glob_matches("src/*.rs", "src/lib.rs"));
    assert!(!glob_matches("src/*.rs", "src/a/lib.rs"));
    assert!(glob_matches("src/**/*.rs", "src/lib.rs"));
    assert!(glob_matches("?.md", "a.md"));
    assert!(!glob_matches("?.md", "ab.md"));
    // Many `**` against a long path stays fast (memoized).
    assert!(glob_matches(&"**/".repeat(50), &"a/".repeat(50)));
}

#[test]
fn lenient_loads_a_display_name_under_its_directory_name() {
    let text = "---\nname: OpenAI Automation\ndescription: Automate.\n---\n";
    let lenient = SkillMd::parse_str(text, Some("openai-automation"), &ParseOptions::default());
    assert!(lenient.is_valid(), "{:?}", lenient.diagnostics);
    assert_eq!(lenient.diagnostics.len(), 1);
    assert_eq!(lenient.diagnostics[0].code(), "name-display-form");
    assert_eq!(
        lenient.document.unwrap().frontmatter.name,
        "openai-automation"
    );
    let spec = SkillMd::parse_str(
        text,
        Some("openai-automation"),
        &ParseOptions::for_profile(Profile::Spec),
    );
    assert!(!spec.is_valid());
    // Other breaks are not folded away.
    for bad in ["Open--AI", "-Open AI", "Open_AI Tools"] {
        let text = format!("---\nname: {bad}\ndescription: x\n---\n");
        let parsed = SkillMd::parse_str(&text, None, &ParseOptions::default());
        assert!(!parsed.is_valid(), "{bad}");
    }
    let no_dir = SkillMd::parse_str(text, None, &ParseOptions::default());
    assert_eq!(
        no_dir.document.unwrap().frontmatter.name,
        "openai-automation"
    );
}
