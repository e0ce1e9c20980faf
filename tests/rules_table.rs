//! Every row of the rules table in `design/agent-skills-spec.md`, under both profiles, with
//! both sides of every boundary. (The filesystem rows: file name, unreadable bytes,
//! directories named SKILL.md, symlinks, are in `filesystem.rs`.)
#![allow(clippy::unwrap_used, clippy::expect_used)]

use skills::core::Severity::{Error as E, Warning as W};
use skills::core::{Frontmatter, ParseOptions, ParsedSkillMd, Profile, Severity, SkillMd};

type Found = Vec<(&'static str, Severity)>;

fn parse(profile: Profile, dir: &str, text: &str) -> ParsedSkillMd {
    SkillMd::parse_str(text, Some(dir), &ParseOptions::for_profile(profile))
}

fn found(profile: Profile, dir: &str, text: &str) -> Found {
    parse(profile, dir, text)
        .diagnostics
        .iter()
        .map(|d| (d.code(), d.severity))
        .collect()
}

/// Diagnostics under (Spec, Lenient) for a skill in directory `dir`.
fn both(dir: &str, text: &str) -> (Found, Found) {
    (
        found(Profile::Spec, dir, text),
        found(Profile::Lenient, dir, text),
    )
}

fn fm(profile: Profile, text: &str) -> Frontmatter {
    parse(profile, "s", text).document.unwrap().frontmatter
}

/// A SKILL.md for skill `s` with extra frontmatter lines.
fn with(extra: &str) -> String {
    format!("---\nname: s\ndescription: d\n{extra}---\nbody\n")
}

const NONE: (Found, Found) = (Vec::new(), Vec::new());

// ---- frontmatter framing ------------------------------------------------------------------

#[test]
fn framing_fences_and_line_endings() {
    assert_eq!(
        both("s", "---  \nname: s\ndescription: d\n---\t \nbody"),
        NONE
    );
    assert_eq!(
        both("s", "---x\nname: s\n---\n"),
        (
            vec![("frontmatter-missing", E)],
            vec![("frontmatter-missing", E)]
        )
    );
    assert_eq!(
        both("s", "---\nname: s\ndescription: d\n---x\n"),
        (
            vec![("frontmatter-unclosed", E)],
            vec![("frontmatter-unclosed", E)]
        )
    );
    // `---` inside a value or at the start of a longer line never closes the frontmatter.
    let doc = fm(
        Profile::Spec,
        "---\nname: s\ndescription: a---b\n---trailing: x\n---\n",
    );
    assert_eq!(doc.description, "a---b");
    for ending in ["\n", "\r\n", "\r"] {
        let text = with("").replace('\n', ending);
        assert_eq!(both("s", &text), NONE, "{ending:?}");
    }
}

#[test]
fn framing_bom_is_stripped_with_a_warning() {
    let text = format!("\u{feff}{}", with(""));
    assert_eq!(
        both("s", &text),
        (vec![("encoding-bom", W)], vec![("encoding-bom", W)])
    );
    assert_eq!(fm(Profile::Spec, &text).name, "s");
}

#[test]
fn framing_diagnostic_lines_count_from_the_file_start() {
    let parsed = parse(
        Profile::Spec,
        "s",
        "---\nname: s\ndescription: d\n\n\nbogus: 1\n---\n",
    );
    assert_eq!(parsed.diagnostics[0].line, Some(6));
    let crlf = parse(
        Profile::Spec,
        "s",
        "---\r\nname: s\r\ndescription: d\r\nbogus: 1\r\n---\r\n",
    );
    assert_eq!(crlf.diagnostics[0].line, Some(4));
}

// ---- YAML ---------------------------------------------------------------------------------

#[test]
fn yaml_full_syntax_is_accepted() {
    // Flow maps and lists, anchors and aliases, tags, block scalars: all valid YAML.
    let text = "---\nname: &n s\ndescription: !!str >\n  folded\n  text\nmetadata: {a: x, b: *n}\nallowed-tools: \"Read Write\"\n---\n";
    assert_eq!(both("s", text), NONE);
    let doc = fm(Profile::Spec, text);
    assert_eq!(doc.description, "folded text\n");
    assert_eq!(doc.metadata["b"], "s");
}

#[test]
fn yaml_duplicate_keys_are_errors_in_both() {
    let text = "---\nname: s\ndescription: d\nname: s\n---\n";
    assert_eq!(
        both("s", text),
        (
            vec![("yaml-duplicate-key", E)],
            vec![("yaml-duplicate-key", E)]
        )
    );
    assert_eq!(parse(Profile::Spec, "s", text).diagnostics[0].line, Some(4));
}

#[test]
fn yaml_null_and_tilde_are_null() {
    for value in ["~", "null", "Null", "NULL", ""] {
        let text = format!("---\nname: s\ndescription: {value}\n---\n");
        assert_eq!(
            both("s", &text),
            (
                vec![("description-missing", E)],
                vec![("description-missing", E)]
            ),
            "{value:?}"
        );
    }
    // Quoted, they are strings.
    assert_eq!(
        fm(Profile::Spec, "---\nname: s\ndescription: '~'\n---\n").description,
        "~"
    );
}

#[test]
fn yaml_numbers_and_booleans_keep_their_source_text() {
    let doc = fm(
        Profile::Lenient,
        "---\nname: 123\ndescription: true\nversion: 1.0\nlicense: 0x10\n---\n",
    );
    assert_eq!(doc.name, "123");
    assert_eq!(doc.description, "true");
    assert_eq!(doc.version.as_deref(), Some("1.0"));
    assert_eq!(doc.license.as_deref(), Some("0x10"));
    assert_eq!(
        fm(
            Profile::Spec,
            "---\nname: s\ndescription: d\nmetadata:\n  v: 1.10\n  b: false\n---\n"
        )
        .metadata
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect::<Vec<_>>(),
        vec![("b", "false"), ("v", "1.10")]
    );
}

#[test]
fn yaml_limits_stop_a_bomb_in_both_profiles() {
    let mut text =
        String::from("---\nname: s\ndescription: d\na0: &a0 [x, x, x, x, x, x, x, x, x, x]\n");
    for i in 1..12 {
        let refs = vec![format!("*a{}", i - 1); 10].join(", ");
        text.push_str(&format!("a{i}: &a{i} [{refs}]\n"));
    }
    text.push_str("---\n");
    let (spec, lenient) = both("s", &text);
    assert_eq!(spec, vec![("yaml-limit-exceeded", E)]);
    assert_eq!(lenient, vec![("yaml-limit-exceeded", E)]);
    let deep = format!(
        "---\nname: s\ndescription: d\nx: {}\n---\n",
        "[".repeat(200) + &"]".repeat(200)
    );
    assert_eq!(
        found(Profile::Spec, "s", &deep),
        vec![("yaml-limit-exceeded", E)]
    );
    // Depth 32 (the top mapping is 1) is fine; 33 is not.
    let nest = |n: usize| {
        format!(
            "---\nname: s\ndescription: d\nx: {}{}\n---\n",
            "[".repeat(n),
            "]".repeat(n)
        )
    };
    let limit = |found: Found| found.iter().any(|(code, _)| *code == "yaml-limit-exceeded");
    assert!(!limit(found(Profile::Spec, "s", &nest(31))));
    assert!(limit(found(Profile::Spec, "s", &nest(32))));
    assert_eq!(
        found(Profile::Lenient, "s", &nest(32)),
        vec![("yaml-limit-exceeded", E)]
    );
    // Large strings repeated through aliases count against the byte budget.
    let big = "x".repeat(1024 * 1024);
    let refs = ["*a"; 8].join(", ");
    let bytes = format!("---\nname: s\ndescription: d\nbig: &a {big}\nlist: [{refs}]\n---\n");
    assert_eq!(
        found(Profile::Lenient, "s", &bytes),
        vec![("yaml-limit-exceeded", E)]
    );
}

#[test]
fn yaml_lenient_retries_once_after_quoting() {
    let text = "---\nname: s\ndescription: Use when: the user asks\n---\n";
    assert_eq!(
        both("s", text),
        (vec![("yaml-syntax", E)], vec![("yaml-retried-quoted", W)])
    );
    // Lines inside a block scalar are content: they are not quoted, whatever they hold.
    let block = "---\nname: s\ndescription: |\n  Use when: asked: twice\n  Example: k: v\nx-hint: a: b # note\n---\n";
    let doc = fm(Profile::Lenient, block);
    assert_eq!(doc.description, "Use when: asked: twice\nExample: k: v\n");
    assert_eq!(
        doc.extra["x-hint"],
        skills::core::yaml::YamlValue::String("a: b".into())
    );
    // A file the quoting does not repair still fails in Lenient, with the original error.
    let broken = "---\nname: s\ndescription: a: b\nx: [unclosed\n---\n";
    assert_eq!(
        found(Profile::Lenient, "s", broken),
        vec![("yaml-syntax", E)]
    );
}

#[test]
fn yaml_non_scalar_keys_are_errors_in_both() {
    let text = "---\nname: s\ndescription: d\n? [a, b]\n: x\n---\n";
    assert_eq!(
        both("s", text),
        (
            vec![("yaml-non-scalar-key", E)],
            vec![("yaml-non-scalar-key", E)]
        )
    );
}

// ---- unknown keys -------------------------------------------------------------------------

#[test]
fn unknown_keys_error_in_spec_warn_in_lenient_and_are_kept() {
    let text = with("x-custom: [1, 2]\n");
    assert_eq!(
        both("s", &text),
        (vec![("unknown-field", E)], vec![("unknown-field", W)])
    );
    let doc = fm(Profile::Lenient, &text);
    assert_eq!(doc.extra["x-custom"].to_json(), serde_json::json!([1, 2]));
}

#[test]
fn known_extension_and_client_keys_are_silent_in_lenient_only() {
    for key in [
        "tags: [a]",
        "category: c",
        "requires-tools: [git]",
        "version: 1.0",
        "argument-hint: '[file]'",
        "disable-model-invocation: true",
        "user-invocable: false",
        "model: some-model",
    ] {
        let text = with(&format!("{key}\n"));
        assert_eq!(
            both("s", &text),
            (vec![("unknown-field", E)], vec![]),
            "{key}"
        );
    }
}

// ---- name characters ----------------------------------------------------------------------

#[test]
fn name_length_boundary_in_both_profiles() {
    let at = "a".repeat(64);
    assert_eq!(
        both(&at, &format!("---\nname: {at}\ndescription: d\n---\n")),
        NONE
    );
    let over = "a".repeat(65);
    assert_eq!(
        both(&over, &format!("---\nname: {over}\ndescription: d\n---\n")),
        (vec![("name-too-long", E)], vec![("name-too-long", W)])
    );
    // Counted in characters after trimming.
    let cyr = "ж".repeat(64);
    assert_eq!(
        both(
            &cyr,
            &format!("---\nname: '  {cyr}  '\ndescription: d\n---\n")
        ),
        NONE
    );
}

#[test]
fn name_character_rules_are_errors_in_both_profiles() {
    for (name, code) in [
        ("My-skill", "name-not-lowercase"),
        ("-s", "name-hyphen-edge"),
        ("s-", "name-hyphen-edge"),
        ("a--b", "name-consecutive-hyphens"),
        ("a_b", "name-invalid-characters"),
        ("a.b", "name-invalid-characters"),
        ("ｓ", "name-lookalike"),
        ("𝐬", "name-lookalike"),
        ("s²", "name-lookalike"),
        ("ⅰ", "name-lookalike"),
        ("ﬁ", "name-lookalike"),
    ] {
        let text = format!("---\nname: {name}\ndescription: d\n---\n");
        assert_eq!(
            both(name, &text),
            (vec![(code, E)], vec![(code, E)]),
            "{name}"
        );
    }
    for name in ["a", "a-b", "a1", "技能", "мой-навык", "ü"] {
        let text = format!("---\nname: {name}\ndescription: d\n---\n");
        assert_eq!(both(name, &text), NONE, "{name}");
    }
}

#[test]
fn a_name_that_is_a_list_or_map_is_an_error_in_both() {
    for value in ["[s]", "{a: s}"] {
        let text = format!("---\nname: {value}\ndescription: d\n---\n");
        assert_eq!(
            both("s", &text),
            (vec![("name-not-string", E)], vec![("name-not-string", E)]),
            "{value}"
        );
    }
}

// ---- extension fields ---------------------------------------------------------------------

#[test]
fn extension_fields_are_checked_and_bad_values_dropped_with_warnings() {
    let ok = "tags: [pdf, docs-2]\ncategory: writing\nrequires-tools: [git, jq]\nversion: 1.2.0\n";
    assert_eq!(found(Profile::Lenient, "s", &with(ok)), vec![]);
    let doc = fm(Profile::Lenient, &with(ok));
    assert_eq!(doc.tags, vec!["pdf", "docs-2"]);
    assert_eq!(doc.requires_tools, vec!["git", "jq"]);
    // A comma-separated string is read as a list.
    assert_eq!(
        fm(Profile::Lenient, &with("tags: a, b\n")).tags,
        vec!["a", "b"]
    );
    for bad in [
        "tags: [Bad Tag, ok]\n",
        "tags: {a: b}\n",
        "category: [a]\n",
        "version: {major: 1}\n",
        "requires-tools: [[git]]\n",
    ] {
        assert_eq!(
            found(Profile::Lenient, "s", &with(bad)),
            vec![("extension-field-invalid", W)],
            "{bad}"
        );
    }
    assert_eq!(
        fm(Profile::Lenient, &with("tags: [Bad Tag, ok]\n")).tags,
        vec!["ok"]
    );
    assert_eq!(
        found(Profile::Lenient, "s", &with("tags: ['', ok]\n")),
        vec![("extension-field-invalid", W)]
    );
    // At most 20 tags: 20 is fine, 21 keeps 20 with a warning.
    let twenty: Vec<String> = (0..20).map(|i| format!("t{i}")).collect();
    assert_eq!(
        found(
            Profile::Lenient,
            "s",
            &with(&format!("tags: [{}]\n", twenty.join(", ")))
        ),
        vec![]
    );
    let many = with(&format!("tags: [{}, t20]\n", twenty.join(", ")));
    assert_eq!(
        found(Profile::Lenient, "s", &many),
        vec![("extension-field-invalid", W)]
    );
    assert_eq!(fm(Profile::Lenient, &many).tags.len(), 20);
}

// ---- name vs directory --------------------------------------------------------------------

#[test]
fn name_matches_directory_after_nfc() {
    assert_eq!(
        both("café", "---\nname: cafe\u{301}\ndescription: d\n---\n"),
        NONE
    );
    assert_eq!(
        both("cafe\u{301}", "---\nname: café\ndescription: d\n---\n"),
        NONE
    );
    assert_eq!(
        both("other", "---\nname: s\ndescription: d\n---\n"),
        (
            vec![("name-directory-mismatch", E)],
            vec![("name-directory-mismatch", W)]
        )
    );
    // NFKC is not applied: a fullwidth directory does not match an ASCII name.
    assert_eq!(
        found(Profile::Spec, "ｓ", "---\nname: s\ndescription: d\n---\n"),
        vec![("name-directory-mismatch", E)]
    );
}

// ---- description --------------------------------------------------------------------------

#[test]
fn description_length_counts_the_parsed_value() {
    let at = "x".repeat(1024);
    assert_eq!(
        both("s", &format!("---\nname: s\ndescription: {at}\n---\n")),
        NONE
    );
    let over = "x".repeat(1025);
    assert_eq!(
        both("s", &format!("---\nname: s\ndescription: {over}\n---\n")),
        (
            vec![("description-too-long", E)],
            vec![("description-too-long", W)]
        )
    );
    // A `|` block keeps its trailing newline, which counts.
    let block_at = format!(
        "---\nname: s\ndescription: |\n  {}\n---\n",
        "x".repeat(1023)
    );
    assert_eq!(both("s", &block_at), NONE);
    let block_over = format!(
        "---\nname: s\ndescription: |\n  {}\n---\n",
        "x".repeat(1024)
    );
    assert_eq!(
        found(Profile::Spec, "s", &block_over),
        vec![("description-too-long", E)]
    );
    // Characters, not bytes.
    let wide = "é".repeat(1024);
    assert_eq!(
        both("s", &format!("---\nname: s\ndescription: {wide}\n---\n")),
        NONE
    );
}

#[test]
fn description_missing_or_blank_is_an_error_in_both() {
    for text in [
        "---\nname: s\n---\n",
        "---\nname: s\ndescription: '   '\n---\n",
        "---\nname: s\ndescription:\n---\n",
    ] {
        assert_eq!(
            both("s", text),
            (
                vec![("description-missing", E)],
                vec![("description-missing", E)]
            ),
            "{text:?}"
        );
    }
    assert_eq!(
        both("s", "---\nname: s\ndescription: [a]\n---\n"),
        (
            vec![("description-not-string", E)],
            vec![("description-not-string", E)]
        )
    );
}

// ---- compatibility ------------------------------------------------------------------------

#[test]
fn compatibility_is_a_string_of_1_to_500_characters() {
    assert_eq!(both("s", &with("compatibility: x\n")), NONE);
    assert_eq!(
        both("s", &with(&format!("compatibility: {}\n", "x".repeat(500)))),
        NONE
    );
    assert_eq!(
        both("s", &with(&format!("compatibility: {}\n", "x".repeat(501)))),
        (
            vec![("compatibility-too-long", E)],
            vec![("compatibility-too-long", E)]
        )
    );
    assert_eq!(
        both("s", &with("compatibility: ''\n")),
        (
            vec![("compatibility-empty", E)],
            vec![("compatibility-empty", E)]
        )
    );
    assert_eq!(
        both("s", &with("compatibility: [linux]\n")),
        (
            vec![("compatibility-not-string", E)],
            vec![("compatibility-not-string", W)]
        )
    );
    assert_eq!(
        fm(Profile::Lenient, &with("compatibility: [linux]\n")).compatibility,
        None
    );
    // Absent or null is fine.
    assert_eq!(both("s", &with("compatibility: ~\n")), NONE);
}

// ---- metadata -----------------------------------------------------------------------------

#[test]
fn metadata_is_a_map_of_scalars() {
    assert_eq!(
        both("s", &with("metadata:\n  a: x\n  b: 2\n  c: true\n")),
        NONE
    );
    // `metadata:` with no value is the same as absent.
    assert_eq!(both("s", &with("metadata:\n")), NONE);
    assert_eq!(
        both("s", &with("metadata:\n  a: ~\n")),
        (
            vec![("metadata-null-value", W)],
            vec![("metadata-null-value", W)]
        )
    );
    assert!(
        !fm(Profile::Spec, &with("metadata:\n  a: ~\n  b: x\n"))
            .metadata
            .contains_key("a")
    );
    for bad in ["metadata: [a, b]\n", "metadata: text\n"] {
        assert_eq!(
            both("s", &with(bad)),
            (vec![("metadata-not-map", E)], vec![("metadata-not-map", W)]),
            "{bad}"
        );
    }
    assert_eq!(
        both("s", &with("metadata:\n  a: {b: c}\n  d: [e]\n  f: ok\n")),
        (
            vec![("metadata-nested-value", E), ("metadata-nested-value", E)],
            vec![("metadata-nested-value", W), ("metadata-nested-value", W)]
        )
    );
    let kept = fm(Profile::Lenient, &with("metadata:\n  a: {b: c}\n  f: ok\n")).metadata;
    assert_eq!(kept.len(), 1);
    assert_eq!(kept["f"], "ok");
}

// ---- license and allowed-tools ------------------------------------------------------------

#[test]
fn license_and_allowed_tools_are_strings_lenient_accepts_lists() {
    assert_eq!(
        both("s", &with("license: [MIT, Apache-2.0]\n")),
        (vec![("license-list", E)], vec![("license-list", W)])
    );
    assert_eq!(
        fm(Profile::Lenient, &with("license: [MIT, Apache-2.0]\n"))
            .license
            .as_deref(),
        Some("MIT, Apache-2.0")
    );
    assert_eq!(
        both("s", &with("allowed-tools: [Read, Write]\n")),
        (
            vec![("allowed-tools-list", E)],
            vec![("allowed-tools-list", W)]
        )
    );
    assert_eq!(
        fm(
            Profile::Lenient,
            &with("allowed-tools:\n  - Read\n  - Bash(git:*)\n")
        )
        .allowed_tools
        .as_deref(),
        Some("Read Bash(git:*)")
    );
    for bad in ["license: {a: b}\n", "license: [[MIT]]\n"] {
        assert_eq!(
            both("s", &with(bad)),
            (
                vec![("license-not-string", E)],
                vec![("license-not-string", E)]
            ),
            "{bad}"
        );
    }
    assert_eq!(
        both("s", &with("allowed-tools: {Read: true}\n")),
        (
            vec![("allowed-tools-not-string", E)],
            vec![("allowed-tools-not-string", E)]
        )
    );
}

// ---- size ---------------------------------------------------------------------------------

#[test]
fn size_warnings_at_500_lines_and_5000_tokens() {
    let header = "---\nname: s\ndescription: d\n---\n";
    // 4 header lines + 496 body lines = 500 lines: fine; one more: a warning.
    let at = format!("{header}{}", "x\n".repeat(496));
    assert_eq!(both("s", &at), NONE);
    let over = format!("{header}{}", "x\n".repeat(497));
    assert_eq!(
        both("s", &over),
        (
            vec![("skill-md-too-many-lines", W)],
            vec![("skill-md-too-many-lines", W)]
        )
    );
    // 20 000 characters is 5000 estimated tokens: fine; one more: a warning.
    let tokens_at = format!("{header}{}", "x".repeat(20_000));
    assert_eq!(both("s", &tokens_at), NONE);
    let tokens_over = format!("{header}{}", "x".repeat(20_001));
    assert_eq!(
        both("s", &tokens_over),
        (
            vec![("body-too-many-tokens", W)],
            vec![("body-too-many-tokens", W)]
        )
    );
}

// ---- all problems, never only the first ---------------------------------------------------

#[test]
fn every_problem_is_reported_with_its_line() {
    let text = "---\nname: Bad_Name--\ndescription: ''\ncompatibility: ''\nmetadata: [x]\nlicense: {a: b}\nother: 1\n---\n";
    let parsed = parse(Profile::Spec, "dir", text);
    let got: Vec<(&str, Option<usize>)> = parsed
        .diagnostics
        .iter()
        .map(|d| (d.code(), d.line))
        .collect();
    assert_eq!(
        got,
        vec![
            ("name-not-lowercase", Some(2)),
            ("name-hyphen-edge", Some(2)),
            ("name-consecutive-hyphens", Some(2)),
            ("name-invalid-characters", Some(2)),
            ("name-directory-mismatch", Some(2)),
            ("description-missing", Some(3)),
            ("compatibility-empty", Some(4)),
            ("metadata-not-map", Some(5)),
            ("license-not-string", Some(6)),
            ("unknown-field", Some(7)),
        ]
    );
}
