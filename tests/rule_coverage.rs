//! Every rule has a test: each rule's code (or its `Rule::` variant) must appear in a test.
//! A rule added without one fails here.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::Path;

use skills::core::Rule;

/// The test code of a source file: everything from its first `#[cfg(test)]`.
fn test_part(text: &str) -> &str {
    text.find("#[cfg(test)]").map_or("", |i| &text[i..])
}

fn collect(dir: &Path, only_tests: bool, out: &mut String) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            if !path.ends_with("fixtures") && !path.ends_with("snapshots") {
                collect(&path, only_tests, out);
            }
        } else if path.extension().is_some_and(|e| e == "rs") {
            let text = std::fs::read_to_string(&path).unwrap();
            // A module's `tests.rs` (declared `#[cfg(test)] mod tests;`) is test code whole.
            let whole = !only_tests || path.ends_with("tests.rs");
            out.push_str(if whole { &text } else { test_part(&text) });
        }
    }
}

#[test]
fn every_rule_is_exercised_by_a_test() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut tests = String::new();
    collect(&root.join("tests"), false, &mut tests);
    collect(&root.join("skills-core/src"), true, &mut tests);
    collect(&root.join("examples"), true, &mut tests);
    let this_file = include_str!("rule_coverage.rs");
    let tests = tests.replace(this_file, "");
    let missing: Vec<&str> = Rule::ALL
        .iter()
        .filter(|rule| {
            let code = format!("\"{}\"", rule.code());
            let variant = format!("Rule::{rule:?}");
            !tests.contains(&code) && !tests.contains(&variant)
        })
        .map(|rule| rule.code())
        .collect();
    assert!(missing.is_empty(), "rules without a test: {missing:?}");
}
