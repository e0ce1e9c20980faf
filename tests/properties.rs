//! Property tests: SKILL.md and skill.json round-trip (parse, serialise, parse), and no
//! input makes a parser panic.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;

use proptest::prelude::*;
use skills::core::yaml::YamlValue;
use skills::core::{
    Frontmatter, ManifestOptions, ParseOptions, Profile, SkillManifest, SkillMd, ToolDefinition,
};

fn lenient() -> ParseOptions {
    ParseOptions::for_profile(Profile::Lenient)
}

/// Any text, including control characters, quotes, `: `, `#`, line breaks and non-BMP.
fn any_text() -> impl Strategy<Value = String> {
    prop_oneof![
        ".{0,40}",
        "[ -~]{0,40}",
        "[a-z :#'\"\\-\\n\\t\u{85}\u{2028}\u{feff}\u{1}é𝐀]{0,30}",
        Just(String::new()),
        Just("~".to_owned()),
        Just("null".to_owned()),
        Just("1.0".to_owned()),
        Just("no".to_owned()),
        Just("- item".to_owned()),
        Just("key: value".to_owned()),
    ]
}

fn number_text() -> impl Strategy<Value = String> {
    prop_oneof![
        any::<i64>().prop_map(|n| n.to_string()),
        (any::<i32>(), 0u32..1000).prop_map(|(a, b)| format!("{a}.{b}")),
        Just("0x1F".to_owned()),
        Just("1e10".to_owned()),
        Just("-.inf".to_owned()),
    ]
}

fn yaml_value() -> impl Strategy<Value = YamlValue> {
    let leaf = prop_oneof![
        Just(YamlValue::Null),
        any::<bool>().prop_map(YamlValue::Bool),
        number_text().prop_map(YamlValue::Number),
        any_text().prop_map(YamlValue::String),
    ];
    leaf.prop_recursive(4, 32, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..5).prop_map(YamlValue::Sequence),
            prop::collection::btree_map(
                prop_oneof![9 => any_text(), 1 => "[a-z]{1020,1030}"],
                inner,
                0..5
            )
            .prop_map(|m| YamlValue::Mapping(m.into_iter().collect())),
        ]
    })
}

fn frontmatter() -> impl Strategy<Value = Frontmatter> {
    (
        "[a-z0-9]{1,10}(-[a-z0-9]{1,10}){0,3}",
        any_text(),
        prop::option::of(any_text()),
        prop::option::of(any_text()),
        prop::collection::btree_map(any_text(), any_text(), 0..4),
        prop::option::of(any_text()),
        prop::collection::vec("[a-z0-9-]{1,12}", 0..5),
        prop::option::of(any_text()),
        prop::collection::vec(any_text(), 0..3),
        prop::option::of(any_text()),
        prop::collection::btree_map(
            prop_oneof!["x-[a-z]{1,8}", "x-[a-z :#]{1000,1100}"],
            yaml_value(),
            0..3,
        ),
    )
        .prop_map(
            |(
                name,
                description,
                license,
                compatibility,
                metadata,
                allowed_tools,
                tags,
                category,
                requires_tools,
                version,
                extra,
            )| {
                let mut fm = Frontmatter::new(name, description);
                fm.license = license;
                fm.compatibility = compatibility;
                fm.metadata = metadata;
                fm.allowed_tools = allowed_tools;
                fm.tags = tags;
                fm.category = category;
                fm.requires_tools = requires_tools;
                fm.version = version;
                fm.extra = extra;
                fm
            },
        )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// Any document serialises to SKILL.md text that parses back to the same document.
    #[test]
    fn skill_md_round_trips(fm in frontmatter(), body in "[^\r]{0,200}") {
        let doc = SkillMd::new(fm, body);
        let text = doc.to_markdown();
        let parsed = SkillMd::parse_str(&text, None, &lenient());
        prop_assert_eq!(parsed.document.as_ref(), Some(&doc), "text:\n{}\ndiagnostics: {:?}", text, parsed.diagnostics);
    }

    /// Parse, serialise, parse: whatever a frontmatter-shaped text parses to survives a
    /// write and a second read unchanged.
    #[test]
    fn parse_serialise_parse_is_stable(
        lines in prop::collection::vec(
            (prop_oneof![Just("name"), Just("description"), Just("license"), Just("metadata"),
                          Just("tags"), Just("version"), Just("allowed-tools"), Just("x-other")],
             prop_oneof![any_text().prop_map(|t| format!("{t:?}")), "[a-z0-9 .:-]{0,12}",
                         Just("[a, b]".to_owned()), Just("{k: v, n: 1.50}".to_owned()),
                         Just("|\n  block\n  text".to_owned()), Just("&a 1".to_owned())]),
            0..8),
        body in "[^\r]{0,50}",
    ) {
        let mut text = String::from("---\n");
        for (key, value) in &lines {
            text.push_str(&format!("{key}: {value}\n"));
        }
        text.push_str("---\n");
        text.push_str(&body);
        if let Some(first) = SkillMd::parse_str(&text, None, &lenient()).document {
            let again = SkillMd::parse_str(&first.to_markdown(), None, &lenient()).document;
            prop_assert_eq!(again, Some(first));
        }
    }

    /// No byte string makes the SKILL.md parser panic, under either profile.
    #[test]
    fn skill_md_never_panics(bytes in prop::collection::vec(any::<u8>(), 0..512)) {
        for profile in [Profile::Spec, Profile::Lenient] {
            let parsed = SkillMd::parse(&bytes, Some("x"), &ParseOptions::for_profile(profile));
            for d in &parsed.diagnostics {
                prop_assert!(d.line.is_none_or(|l| l >= 1));
            }
        }
    }

    /// Same, with a valid frame around arbitrary text, so the YAML parser sees it.
    #[test]
    fn framed_yaml_never_panics(yaml in ".{0,300}") {
        let text = format!("---\n{yaml}\n---\nbody");
        for profile in [Profile::Spec, Profile::Lenient] {
            let _ = SkillMd::parse_str(&text, Some("x"), &ParseOptions::for_profile(profile));
        }
    }

    /// No byte string makes the skill.json reader panic.
    #[test]
    fn skill_json_never_panics(bytes in prop::collection::vec(any::<u8>(), 0..512)) {
        let _ = SkillManifest::parse(&bytes, Some("x"), &ManifestOptions::default(), Profile::Spec);
    }

    /// A valid manifest serialises to JSON that reads back to the same manifest.
    #[test]
    fn skill_json_round_trips(
        skill_name in "[a-z][a-z0-9]{0,8}(_[a-z0-9]{1,6}){0,2}",
        description in "[^\u{0}]{1,40}",
        layer in 2u8..=4,
        dependencies in prop::collection::btree_set("[a-z]{1,8}", 0..4),
        tools in prop::collection::btree_map(
            "[a-z][a-z0-9_]{0,12}",
            prop::collection::btree_map("[a-z]{1,6}", prop_oneof![Just("string"), Just("integer"), Just("boolean")], 0..4),
            0..4),
    ) {
        let tools: Vec<ToolDefinition> = tools
            .into_iter()
            .map(|(name, props)| {
                let required: Vec<&String> = props.keys().take(1).collect();
                let properties: BTreeMap<&String, serde_json::Value> =
                    props.iter().map(|(k, t)| (k, serde_json::json!({"type": t}))).collect();
                ToolDefinition::new(name, "A tool.", serde_json::json!({
                    "type": "object", "properties": properties, "required": required
                }))
            })
            .collect();
        let json = serde_json::json!({
            "name": format!("aria-{skill_name}"),
            "version": "1.2.3",
            "description": if description.trim().is_empty() { "d" } else { &description },
            "author": "someone",
            "layer": layer,
            "dependencies": dependencies.iter().filter(|d| **d != skill_name).collect::<Vec<_>>(),
            "focus_affinity": ["data"],
            "tools": tools,
        });
        let first = SkillManifest::parse(json.to_string().as_bytes(), Some(&skill_name), &ManifestOptions::default(), Profile::Spec);
        prop_assert!(first.diagnostics.is_empty(), "{:?}", first.diagnostics);
        let manifest = first.manifest.unwrap();
        let again = SkillManifest::parse(manifest.to_json_pretty().as_bytes(), Some(&skill_name), &ManifestOptions::default(), Profile::Spec);
        prop_assert_eq!(again.manifest, Some(manifest));
    }
}

/// Found by the `skill_md` fuzz target: a number tag on text that is not a number.
#[test]
fn regression_tagged_non_number_round_trips() {
    let text = "---\nname: a\ndescription: d\nx: !!int true\ny: !!float abc\nz: !!int '7'\n---\n";
    let first = SkillMd::parse_str(text, None, &lenient()).document.unwrap();
    assert_eq!(
        first.frontmatter.extra["x"],
        YamlValue::String("true".into())
    );
    assert_eq!(first.frontmatter.extra["z"], YamlValue::Number("7".into()));
    let again = SkillMd::parse_str(&first.to_markdown(), None, &lenient()).document;
    assert_eq!(again, Some(first));
}
