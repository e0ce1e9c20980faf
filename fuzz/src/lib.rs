//! Shared checks for the fuzz targets in `fuzz_targets/`.
//!
//! Every check panics when an invariant is broken: a panic is what libFuzzer reports as a
//! crash, so the panic message names the invariant and carries enough state to debug it.

use std::sync::OnceLock;

use skills_core::{
    Diagnostic, ManifestOptions, ParseOptions, ParsedSkillMd, Profile, SkillManifest, SkillMd,
    has_errors,
};

fn stats_enabled() -> bool {
    static STATS: OnceLock<bool> = OnceLock::new();
    *STATS.get_or_init(|| std::env::var("SKILLS_FUZZ_STATS").is_ok_and(|v| v == "1"))
}

/// The directory name passed to `SkillMd::parse` when the selector byte is odd.
pub const MD_DIRECTORY: &str = "x";
/// The directory name passed to `SkillManifest::parse` when the selector byte is odd
/// (the seed manifests are named `aria-web_search`).
pub const JSON_DIRECTORY: &str = "web_search";

/// With `SKILLS_FUZZ_STATS=1`, prints one `FUZZSTAT <what>` line to stderr each time a
/// round-trip comparison is made, so a corpus replay can count how many inputs reach it.
fn stat(what: &str) {
    if stats_enabled() {
        eprintln!("FUZZSTAT {what}");
    }
}

/// Splits a fuzz input into (directory selector, payload): the first byte is consumed and
/// chooses `Some(directory)` when odd, `None` when even (or when the input is empty).
pub fn split_selector<'a>(
    data: &'a [u8],
    directory: &'static str,
) -> (Option<&'static str>, &'a [u8]) {
    match data.split_first() {
        Some((&selector, rest)) => ((selector & 1 == 1).then_some(directory), rest),
        None => (None, data),
    }
}

/// (b): every diagnostic line, when present, is 1-based.
fn check_lines(diagnostics: &[Diagnostic], context: &str) {
    for d in diagnostics {
        if let Some(line) = d.line {
            assert!(
                line >= 1,
                "{context}: diagnostic with line {line} (< 1): {d:?}"
            );
        }
    }
}

/// All SKILL.md invariants for one payload and one directory choice.
///
/// (a) `SkillMd::parse` never panics, under either profile;
/// (b) every diagnostic line is >= 1 (both profiles, and the re-parse);
/// (c) under `Profile::Lenient`, when a document comes back with no error-severity
///     diagnostic, `to_markdown()` parsed again (Lenient, same directory) gives an equal
///     document.
pub fn check_skill_md(bytes: &[u8], directory: Option<&str>) {
    let spec = SkillMd::parse(bytes, directory, &ParseOptions::for_profile(Profile::Spec));
    check_lines(&spec.diagnostics, "Spec parse");

    let lenient_options = ParseOptions::for_profile(Profile::Lenient);
    let lenient = SkillMd::parse(bytes, directory, &lenient_options);
    check_lines(&lenient.diagnostics, "Lenient parse");

    let ParsedSkillMd {
        document: Some(document),
        diagnostics,
        ..
    } = lenient
    else {
        return;
    };
    if has_errors(&diagnostics) {
        return;
    }
    stat("skill_md round-trip");
    let markdown = document.to_markdown();
    let again = SkillMd::parse(markdown.as_bytes(), directory, &lenient_options);
    check_lines(&again.diagnostics, "Lenient re-parse of to_markdown()");
    if again.document.as_ref() != Some(&document) {
        panic!(
            "SKILL.md round trip failed (Lenient, directory {directory:?})\n\
             --- input ---\n{input:?}\n\
             --- first document ---\n{document:#?}\n\
             --- first diagnostics ---\n{diagnostics:#?}\n\
             --- to_markdown() ---\n{markdown:?}\n\
             --- re-parsed document ---\n{again_doc:#?}\n\
             --- re-parse diagnostics ---\n{again_diags:#?}",
            input = String::from_utf8_lossy(bytes),
            again_doc = again.document,
            again_diags = again.diagnostics,
        );
    }
}

/// All skill.json invariants for one payload and one directory choice, under both profiles:
/// `SkillManifest::parse` never panics, every diagnostic line is >= 1, and when a manifest
/// comes back, `to_json_pretty()` parsed again (same directory, options and profile) gives an
/// equal manifest.
pub fn check_skill_json(bytes: &[u8], directory: Option<&str>) {
    let options = ManifestOptions::default();
    for profile in [Profile::Spec, Profile::Lenient] {
        let parsed = SkillManifest::parse(bytes, directory, &options, profile);
        check_lines(&parsed.diagnostics, "manifest parse");
        let Some(manifest) = parsed.manifest else {
            continue;
        };
        stat(&format!("skill_json round-trip {profile:?}"));
        let json = manifest.to_json_pretty();
        let again = SkillManifest::parse(json.as_bytes(), directory, &options, profile);
        check_lines(&again.diagnostics, "manifest re-parse of to_json_pretty()");
        if again.manifest.as_ref() != Some(&manifest) {
            panic!(
                "skill.json round trip failed ({profile:?}, directory {directory:?})\n\
                 --- input ---\n{input:?}\n\
                 --- first manifest ---\n{manifest:#?}\n\
                 --- to_json_pretty() ---\n{json}\n\
                 --- re-parsed manifest ---\n{again_manifest:#?}\n\
                 --- re-parse diagnostics ---\n{again_diags:#?}",
                input = String::from_utf8_lossy(bytes),
                again_manifest = again.manifest,
                again_diags = again.diagnostics,
            );
        }
    }
}
