//! Published-like collections load as the reference validator says: discovery is exact and
//! stable, every skill loads in the Lenient profile, the Spec profile gives the reference
//! validator's verdicts (skills-ref 0.1.1), the only warnings are the documented size and
//! length ones, every skill round-trips through `to_markdown`, and digests are stable.
//!
//! Each check runs on two sets: `tests/fixtures/collections/` (8 skills we wrote, always) and
//! the 36 published skills of the corpus's `real-skills/` (from three public collections;
//! read from `SKILLS_CORPUS_DIR`, skipped with a notice outside CI when unset).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use common::{lenient, spec};
use skills::core::{Severity, load_path, load_skill_dir};

/// One set of collections and what the reference validator and our rules say of it.
struct Collections {
    root: PathBuf,
    /// Every skill (relative path, in discovery order) and the reference validator's verdict.
    verdicts: &'static [(&'static str, bool)],
    /// The one skill invalid under Spec, for its description of `long_description` characters.
    too_long: &'static str,
    long_description: usize,
    /// Every Lenient diagnostic, sorted.
    warnings: &'static [(&'static str, &'static str)],
}

/// The collections we wrote (`tests/fixtures/collections/README.md` says what each exercises).
fn fixture() -> Collections {
    Collections {
        root: std::fs::canonicalize(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/collections"
        ))
        .unwrap(),
        verdicts: &[
            ("acme-skills/api-reference", false),
            ("acme-skills/brand-voice", true),
            ("acme-skills/release-notes", true),
            ("field-notes/long-workflow", true),
            ("field-notes/plan-writer", true),
            ("field-notes/token-heavy", true),
            ("tool-kit/pdf-notes", true),
            ("tool-kit/sheet-helper", true),
        ],
        too_long: "acme-skills/api-reference",
        long_description: 1068,
        warnings: &[
            ("acme-skills/api-reference", "body-too-many-tokens"),
            ("acme-skills/api-reference", "description-too-long"),
            ("acme-skills/api-reference", "file-too-large"),
            ("acme-skills/api-reference", "skill-md-too-many-lines"),
            ("field-notes/long-workflow", "body-too-many-tokens"),
            ("field-notes/long-workflow", "skill-md-too-many-lines"),
            ("field-notes/token-heavy", "body-too-many-tokens"),
        ],
    }
}

/// The published corpus, when `SKILLS_CORPUS_DIR` names it. Its README: three SKILL.md files
/// exceed 500 lines; claude-api's description is 1068 characters and it ships one file over
/// the 100 KB per-file limit. The body token estimate (characters / 4) flags the four
/// longest bodies.
fn published() -> Option<Collections> {
    let corpus = skills_testenv::corpus()?;
    Some(Collections {
        root: corpus.real_skills(),
        verdicts: REFERENCE_VERDICTS,
        too_long: "anthropics-skills/claude-api",
        long_description: 1068,
        warnings: &[
            ("anthropics-skills/claude-api", "body-too-many-tokens"),
            ("anthropics-skills/claude-api", "description-too-long"),
            ("anthropics-skills/claude-api", "file-too-large"),
            ("anthropics-skills/claude-api", "skill-md-too-many-lines"),
            ("anthropics-skills/skill-creator", "body-too-many-tokens"),
            (
                "obra-superpowers/subagent-driven-development",
                "body-too-many-tokens",
            ),
            (
                "obra-superpowers/subagent-driven-development",
                "skill-md-too-many-lines",
            ),
            ("obra-superpowers/writing-skills", "body-too-many-tokens"),
            ("obra-superpowers/writing-skills", "skill-md-too-many-lines"),
        ],
    })
}

/// The fixture, then the published corpus where it is present.
fn every_set() -> Vec<Collections> {
    std::iter::once(fixture()).chain(published()).collect()
}

/// The published corpus's skills and the reference validator's verdict on each.
const REFERENCE_VERDICTS: &[(&str, bool)] = &[
    ("anthropics-skills/algorithmic-art", true),
    ("anthropics-skills/brand-guidelines", true),
    ("anthropics-skills/canvas-design", true),
    ("anthropics-skills/claude-api", false),
    ("anthropics-skills/frontend-design", true),
    ("anthropics-skills/internal-comms", true),
    ("anthropics-skills/mcp-builder", true),
    ("anthropics-skills/skill-creator", true),
    ("anthropics-skills/slack-gif-creator", true),
    ("anthropics-skills/theme-factory", true),
    ("anthropics-skills/web-artifacts-builder", true),
    ("anthropics-skills/webapp-testing", true),
    ("obra-superpowers/brainstorming", true),
    ("obra-superpowers/dispatching-parallel-agents", true),
    ("obra-superpowers/executing-plans", true),
    ("obra-superpowers/finishing-a-development-branch", true),
    ("obra-superpowers/receiving-code-review", true),
    ("obra-superpowers/requesting-code-review", true),
    ("obra-superpowers/subagent-driven-development", true),
    ("obra-superpowers/systematic-debugging", true),
    ("obra-superpowers/test-driven-development", true),
    ("obra-superpowers/using-git-worktrees", true),
    ("obra-superpowers/using-superpowers", true),
    ("obra-superpowers/verification-before-completion", true),
    ("obra-superpowers/writing-plans", true),
    ("obra-superpowers/writing-skills", true),
    ("openai-skills/create-plan", true),
    ("openai-skills/gh-address-comments", true),
    ("openai-skills/gh-fix-ci", true),
    ("openai-skills/linear", true),
    ("openai-skills/notion-knowledge-capture", true),
    ("openai-skills/notion-meeting-intelligence", true),
    ("openai-skills/notion-research-documentation", true),
    ("openai-skills/notion-spec-to-implementation", true),
    ("openai-skills/skill-creator", true),
    ("openai-skills/skill-installer", true),
];

fn relative(set: &Collections, path: &Path) -> String {
    path.strip_prefix(&set.root)
        .unwrap()
        .to_string_lossy()
        .replace('\\', "/")
}

#[test]
fn discovery_finds_exactly_the_skills_in_a_stable_order() {
    for set in every_set() {
        let report = load_path(&set.root, &lenient());
        assert!(report.diagnostics.is_empty(), "{:?}", report.diagnostics);
        let found: Vec<String> = report
            .reports
            .iter()
            .map(|r| relative(&set, &r.path))
            .collect();
        let expected: Vec<String> = set.verdicts.iter().map(|(p, _)| (*p).to_owned()).collect();
        assert_eq!(found, expected);
        let again: Vec<String> = load_path(&set.root, &lenient())
            .reports
            .iter()
            .map(|r| relative(&set, &r.path))
            .collect();
        assert_eq!(again, found);
    }
}

#[test]
fn all_load_in_the_lenient_profile() {
    for set in every_set() {
        let report = load_path(&set.root, &lenient());
        assert_eq!(report.skills().count(), set.verdicts.len());
        for skill in &report.reports {
            let errors: Vec<_> = skill.diagnostics.iter().filter(|d| d.is_error()).collect();
            assert!(errors.is_empty(), "{}: {errors:?}", skill.path.display());
        }
        let long = report
            .reports
            .iter()
            .find(|r| relative(&set, &r.path) == set.too_long)
            .unwrap();
        let warning = long
            .diagnostics
            .iter()
            .find(|d| d.code() == "description-too-long")
            .unwrap();
        assert_eq!(warning.severity, Severity::Warning);
        assert!(warning.message.contains(&set.long_description.to_string()));
        assert_eq!(long.description_len(), Some(set.long_description));
    }
}

#[test]
fn spec_profile_gives_the_reference_verdicts() {
    for set in every_set() {
        let verdicts: BTreeMap<String, bool> = load_path(&set.root, &spec())
            .reports
            .iter()
            .map(|r| (relative(&set, &r.path), r.is_valid()))
            .collect();
        let expected: BTreeMap<String, bool> = set
            .verdicts
            .iter()
            .map(|(p, v)| ((*p).to_owned(), *v))
            .collect();
        assert_eq!(verdicts, expected);
    }
}

#[test]
fn the_long_description_fails_spec_alone() {
    for set in every_set() {
        let report = load_skill_dir(&set.root.join(set.too_long), &spec());
        let errors: Vec<_> = report
            .diagnostics
            .iter()
            .filter(|d| d.is_error())
            .map(|d| (d.code(), d.line))
            .collect();
        assert_eq!(errors, vec![("description-too-long", Some(3))]);
    }
}

#[test]
fn the_only_warnings_are_the_documented_size_and_length_ones() {
    for set in every_set() {
        let mut warnings: Vec<(String, &'static str)> = Vec::new();
        for skill in &load_path(&set.root, &lenient()).reports {
            for d in &skill.diagnostics {
                warnings.push((relative(&set, &skill.path), d.code()));
            }
        }
        warnings.sort();
        let expected: Vec<(String, &str)> = set
            .warnings
            .iter()
            .map(|(p, c)| ((*p).to_owned(), *c))
            .collect();
        assert_eq!(warnings, expected);
    }
}

#[test]
fn every_skill_round_trips_through_to_markdown() {
    use skills::core::{ParseOptions, Profile, SkillMd};
    for set in every_set() {
        for skill in load_path(&set.root, &lenient()).skills() {
            let doc = skill.skill_md().unwrap();
            let text = doc.to_markdown();
            let again = SkillMd::parse_str(
                &text,
                Some(skill.name()),
                &ParseOptions::for_profile(Profile::Lenient),
            )
            .document
            .unwrap();
            assert_eq!(&again, doc, "{}", skill.name());
        }
    }
}

#[test]
fn digests_are_stable_and_distinct() {
    for set in every_set() {
        let digests = || -> Vec<String> {
            load_path(&set.root, &lenient())
                .skills()
                .map(|s| s.digest().to_owned())
                .collect()
        };
        let first = digests();
        assert_eq!(first, digests());
        let distinct: BTreeSet<&String> = first.iter().collect();
        assert_eq!(distinct.len(), set.verdicts.len());
    }
}
