//! Loading and discovery against real directories: bad bytes, non-files, symlinks, limits,
//! hidden entries and deterministic order. None of these may panic or hang.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{codes, errors, lenient, spec, write_skill, write_skill_file};
use skills::core::registry::SkillRegistry;
use skills::core::{Discovery, Severity, load_path, load_skill_dir};
use std::fs;

const VALID: &str = "---\nname: my-skill\ndescription: A test skill\n---\nBody\n";

fn skill_md(name: &str) -> String {
    format!("---\nname: {name}\ndescription: The {name} skill\n---\nBody\n")
}

// ---- bytes that are not UTF-8 -------------------------------------------------------------

#[test]
fn invalid_utf8_is_an_error_with_a_line() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = write_skill(
        tmp.path(),
        "my-skill",
        b"---\nname: my-skill\ndescription: caf\xe9\n---\n",
    );
    for options in [spec(), lenient()] {
        let report = load_skill_dir(&dir, &options);
        assert_eq!(errors(&report), vec!["encoding-invalid-utf8"]);
        assert_eq!(report.diagnostics[0].line, Some(3));
    }
}

#[test]
fn utf16_is_an_error_not_garbage() {
    let tmp = tempfile::tempdir().unwrap();
    let mut bytes = vec![0xFF, 0xFE];
    bytes.extend(VALID.encode_utf16().flat_map(u16::to_le_bytes));
    let dir = write_skill(tmp.path(), "my-skill", &bytes);
    let report = load_skill_dir(&dir, &lenient());
    assert_eq!(errors(&report), vec!["encoding-utf16"]);
    assert!(report.skill.is_none());
}

#[test]
fn a_bom_is_stripped_with_a_warning() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = write_skill(tmp.path(), "my-skill", format!("\u{feff}{VALID}"));
    let report = load_skill_dir(&dir, &spec());
    assert_eq!(
        codes(&report.diagnostics),
        vec![("encoding-bom", Severity::Warning)]
    );
    assert!(report.is_valid());
}

// ---- SKILL.md that is not a readable file -------------------------------------------------

#[test]
fn a_directory_named_skill_md_is_an_error() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("my-skill");
    fs::create_dir_all(dir.join("SKILL.md")).unwrap();
    assert_eq!(
        errors(&load_skill_dir(&dir, &spec())),
        vec!["skill-md-not-file"]
    );
    // Naming the directory itself as the path to validate gives the same answer.
    let report = load_path(&dir.join("SKILL.md"), &spec());
    assert_eq!(report.reports.len(), 1);
    assert_eq!(errors(&report.reports[0]), vec!["skill-md-not-file"]);
}

#[cfg(unix)]
#[test]
fn a_fifo_named_skill_md_is_refused_without_blocking() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("my-skill");
    fs::create_dir(&dir).unwrap();
    let status = std::process::Command::new("mkfifo")
        .arg(dir.join("SKILL.md"))
        .status()
        .unwrap();
    assert!(status.success());
    // Opening a FIFO for reading blocks until a writer appears; the loader must not.
    assert_eq!(
        errors(&load_skill_dir(&dir, &spec())),
        vec!["skill-md-not-file"]
    );
}

#[cfg(unix)]
#[test]
fn an_unresolvable_symlink_is_unreadable() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("my-skill");
    fs::create_dir(&dir).unwrap();
    // A symlink to itself cannot be opened, whoever runs the test (root included).
    std::os::unix::fs::symlink("SKILL.md", dir.join("SKILL.md")).unwrap();
    assert_eq!(
        errors(&load_skill_dir(&dir, &spec())),
        vec!["skill-md-unreadable"]
    );
}

#[cfg(unix)]
#[test]
fn a_file_without_read_permission_is_unreadable() {
    if common::is_root() {
        common::rerun_as_nobody("a_file_without_read_permission_is_unreadable");
        return;
    }
    use std::os::unix::fs::PermissionsExt;
    let tmp = tempfile::tempdir().unwrap();
    let dir = write_skill(tmp.path(), "my-skill", VALID);
    fs::set_permissions(dir.join("SKILL.md"), fs::Permissions::from_mode(0o000)).unwrap();
    fs::write(dir.join("notes.md"), "x").unwrap();
    fs::set_permissions(dir.join("notes.md"), fs::Permissions::from_mode(0o000)).unwrap();
    let report = load_skill_dir(&dir, &spec());
    assert_eq!(errors(&report), vec!["skill-md-unreadable"]);
    // An unreadable supporting file is left out with a warning.
    let unreadable: Vec<_> = report
        .diagnostics
        .iter()
        .filter(|d| d.code() == "file-unreadable")
        .map(|d| d.file.clone())
        .collect();
    assert_eq!(unreadable, vec![Some("notes.md".to_owned())]);
}

#[cfg(unix)]
#[test]
fn an_unreadable_directory_is_reported_and_the_scan_goes_on() {
    if common::is_root() {
        common::rerun_as_nobody("an_unreadable_directory_is_reported_and_the_scan_goes_on");
        return;
    }
    use std::os::unix::fs::PermissionsExt;
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    write_skill(root, "a-locked/inner", skill_md("inner"));
    write_skill(root, "b-open", skill_md("b-open"));
    fs::set_permissions(root.join("a-locked"), fs::Permissions::from_mode(0o000)).unwrap();
    let report = Discovery::new(spec()).root(root).run();
    fs::set_permissions(root.join("a-locked"), fs::Permissions::from_mode(0o755)).unwrap();
    let names: Vec<_> = report.skills().map(|s| s.name().to_owned()).collect();
    assert_eq!(names, vec!["b-open"]);
    assert_eq!(
        codes(&report.diagnostics),
        vec![("scan-directory-unreadable", Severity::Warning)]
    );
}

#[test]
fn a_100_mb_skill_md_is_refused_unread() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = write_skill(tmp.path(), "my-skill", VALID);
    // Sparse: 100 MB on paper, nothing written.
    let file = fs::OpenOptions::new()
        .write(true)
        .open(dir.join("SKILL.md"))
        .unwrap();
    file.set_len(100 * 1024 * 1024).unwrap();
    let report = load_skill_dir(&dir, &lenient());
    assert_eq!(errors(&report), vec!["skill-md-too-large"]);
}

#[test]
fn a_100_mb_document_in_memory_parses_without_panicking() {
    use skills::core::{ParseOptions, Profile, SkillMd};
    let mut text = String::from("---\nname: s\ndescription: d\n---\n");
    text.push_str(&"0123456789abcdef".repeat(100 * 1024 * 1024 / 16));
    let parsed = SkillMd::parse_str(&text, Some("s"), &ParseOptions::for_profile(Profile::Spec));
    assert!(parsed.is_valid());
    assert_eq!(
        codes(&parsed.diagnostics),
        vec![("body-too-many-tokens", Severity::Warning)]
    );
}

// ---- symlinks -----------------------------------------------------------------------------

#[cfg(unix)]
#[test]
fn skill_md_through_a_symlink_out_of_the_skill_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let outside = write_skill(tmp.path(), "elsewhere", VALID);
    let dir = tmp.path().join("my-skill");
    fs::create_dir(&dir).unwrap();
    std::os::unix::fs::symlink(outside.join("SKILL.md"), dir.join("SKILL.md")).unwrap();
    for options in [spec(), lenient()] {
        let report = load_skill_dir(&dir, &options);
        assert_eq!(errors(&report), vec!["skill-md-symlink-escape"]);
        assert!(report.skill.is_none());
    }
}

#[cfg(unix)]
#[test]
fn skill_md_through_a_symlink_inside_the_skill_is_fine() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = write_skill_file(tmp.path(), "my-skill", "docs/main.md", VALID);
    std::os::unix::fs::symlink("docs/main.md", dir.join("SKILL.md")).unwrap();
    assert!(load_skill_dir(&dir, &spec()).is_valid());
}

#[cfg(unix)]
#[test]
fn a_symlinked_skill_directory_keeps_its_link_name() {
    let tmp = tempfile::tempdir().unwrap();
    let real = write_skill(tmp.path(), "store/real-name", skill_md("link-name"));
    let root = tmp.path().join("root");
    fs::create_dir(&root).unwrap();
    std::os::unix::fs::symlink(&real, root.join("link-name")).unwrap();
    let report = Discovery::new(spec()).root(&root).run();
    assert_eq!(report.reports.len(), 1);
    assert!(
        report.reports[0].is_valid(),
        "{:?}",
        report.reports[0].diagnostics
    );
    assert!(report.reports[0].path.ends_with("link-name"));
    // Loaded by its real path, the same skill's name no longer matches.
    assert_eq!(
        errors(&load_skill_dir(&real, &spec())),
        vec!["name-directory-mismatch"]
    );
}

#[cfg(unix)]
#[test]
fn symlink_cycles_end_and_each_skill_is_loaded_once() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("root");
    write_skill(&root, "group/a", skill_md("a"));
    std::os::unix::fs::symlink(&root, root.join("group/loop")).unwrap();
    std::os::unix::fs::symlink(root.join("group/a"), root.join("group/b")).unwrap();
    let report = Discovery::new(spec()).root(&root).run();
    let names: Vec<_> = report.skills().map(|s| s.name().to_owned()).collect();
    assert_eq!(names, vec!["a"]);
    let notes: Vec<_> = report.diagnostics.iter().map(|d| d.code()).collect();
    assert_eq!(notes, vec!["scan-symlink-cycle", "scan-symlink-cycle"]);
}

// ---- scan bounds and skipped entries ------------------------------------------------------

#[test]
fn hidden_git_and_node_modules_are_skipped() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    write_skill(root, "visible", skill_md("visible"));
    write_skill(root, ".hidden/h", skill_md("h"));
    write_skill(root, ".git/g", skill_md("g"));
    write_skill(root, "node_modules/n", skill_md("n"));
    write_skill(root, "pkg/node_modules/m", skill_md("m"));
    let report = Discovery::new(spec()).root(root).run();
    let names: Vec<_> = report.skills().map(|s| s.name().to_owned()).collect();
    assert_eq!(names, vec!["visible"]);
}

#[test]
fn depth_limit_is_six_by_default() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    write_skill(root, "1/2/3/4/5/six", skill_md("six"));
    write_skill(root, "1/2/3/4/5/6/seven", skill_md("seven"));
    let report = Discovery::new(spec()).root(root).run();
    let names: Vec<_> = report.skills().map(|s| s.name().to_owned()).collect();
    assert_eq!(names, vec!["six"]);
    assert_eq!(report.diagnostics[0].code(), "scan-depth-limit");
    let deeper = Discovery::new(spec()).root(root).max_depth(7).run();
    assert_eq!(deeper.skills().count(), 2);
}

#[test]
fn directory_limit_is_2000_a_root_by_default() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    // The root plus 1998 empty directories plus the skill: 2000 visits.
    for i in 0..1998 {
        fs::create_dir(root.join(format!("d{i:04}"))).unwrap();
    }
    write_skill(root, "zz-skill", skill_md("zz-skill"));
    let report = Discovery::new(spec()).root(root).run();
    assert_eq!(report.skills().count(), 1);
    assert!(report.diagnostics.is_empty());
    // One more directory ahead of the skill pushes it past the limit.
    fs::create_dir(root.join("d9999")).unwrap();
    let report = Discovery::new(spec()).root(root).run();
    assert_eq!(report.skills().count(), 0);
    assert_eq!(report.diagnostics[0].code(), "scan-directory-limit");
}

#[test]
fn one_bad_skill_does_not_stop_the_scan() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    write_skill(root, "a-good", skill_md("a-good"));
    write_skill(root, "b-bad", "no frontmatter");
    write_skill(root, "c-good", skill_md("c-good"));
    let report = Discovery::new(spec()).root(root).run();
    let valid: Vec<_> = report.reports.iter().map(|r| r.is_valid()).collect();
    assert_eq!(valid, vec![true, false, true]);
    assert!(!report.all_valid());
}

#[test]
fn order_is_byte_order_of_names_whatever_the_creation_order() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    for name in ["zeta", "alpha", "Mid", "beta", "alpha2"] {
        write_skill(root, name, skill_md(&name.to_lowercase()));
    }
    let paths: Vec<String> = Discovery::new(lenient())
        .root(root)
        .run()
        .reports
        .iter()
        .map(|r| r.path.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    assert_eq!(paths, vec!["Mid", "alpha", "alpha2", "beta", "zeta"]);
}

#[test]
fn project_roots_default_to_agents_skills_and_skills() {
    let tmp = tempfile::tempdir().unwrap();
    write_skill(tmp.path(), ".agents/skills/one", skill_md("one"));
    write_skill(tmp.path(), "skills/two", skill_md("two"));
    write_skill(tmp.path(), "elsewhere/three", skill_md("three"));
    let report = Discovery::for_project(tmp.path(), lenient()).run();
    let names: Vec<_> = report.skills().map(|s| s.name().to_owned()).collect();
    assert_eq!(names, vec!["one", "two"]);
    let roots: Vec<_> = report
        .reports
        .iter()
        .map(|r| r.root.clone().unwrap())
        .collect();
    assert_eq!(
        roots,
        vec![tmp.path().join(".agents/skills"), tmp.path().join("skills")]
    );
    let missing = Discovery::for_project(tmp.path().join("nope"), lenient()).run();
    let notes: Vec<_> = missing
        .diagnostics
        .iter()
        .map(|d| (d.code(), d.severity))
        .collect();
    assert_eq!(
        notes,
        vec![
            ("scan-root-missing", Severity::Info),
            ("scan-root-missing", Severity::Info)
        ]
    );
}

#[test]
fn duplicate_names_across_roots_are_reported_by_the_registry() {
    let tmp = tempfile::tempdir().unwrap();
    write_skill(tmp.path(), "a/same", skill_md("same"));
    write_skill(tmp.path(), "b/same", skill_md("same"));
    let report = Discovery::new(lenient())
        .root(tmp.path().join("a"))
        .root(tmp.path().join("b"))
        .run();
    assert_eq!(report.skills().count(), 2);
    let mut registry = SkillRegistry::default();
    let diagnostics = registry.register_all(report.into_skills());
    assert_eq!(registry.len(), 1);
    assert_eq!(
        codes(&diagnostics),
        vec![("duplicate-skill-name", Severity::Error)]
    );
    assert!(diagnostics[0].file.as_deref().unwrap().ends_with("b/same"));
}

// ---- skill.json ---------------------------------------------------------------------------

fn manifest(name: &str) -> String {
    format!(
        r#"{{"name": "{name}", "version": "1.0.0", "description": "A skill.", "author": "me",
            "layer": 3, "dependencies": [], "focus_affinity": ["data"], "tools": []}}"#
    )
}

#[test]
fn a_skill_json_only_directory_is_a_skill() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = write_skill_file(
        tmp.path(),
        "data_pipeline",
        "skill.json",
        manifest("aria-data_pipeline"),
    );
    let report = load_skill_dir(&dir, &spec());
    let skill = report.skill.unwrap();
    assert_eq!(skill.name(), "data_pipeline");
    assert_eq!(skill.layer(), Some(3));
    assert!(skill.skill_md().is_none());
    let found = Discovery::new(spec()).root(tmp.path()).run();
    assert_eq!(found.skills().count(), 1);
}

#[test]
fn skill_md_and_skill_json_must_agree_on_the_name() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = write_skill(tmp.path(), "web-search", skill_md("web-search"));
    fs::write(dir.join("skill.json"), manifest("aria-web-search")).unwrap();
    let report = load_skill_dir(&dir, &spec());
    assert!(report.is_valid(), "{:?}", report.diagnostics);
    assert!(report.skill.unwrap().manifest().is_some());

    fs::write(dir.join("skill.json"), manifest("aria-web-fetch")).unwrap();
    let report = load_skill_dir(&dir, &lenient());
    assert_eq!(errors(&report), vec!["skill-json-name-disagrees"]);
    // The directory mismatch is a warning in Lenient; the disagreement is not.
    assert!(report.diagnostics.iter().any(
        |d| d.code() == "skill-json-name-directory-mismatch" && d.severity == Severity::Warning
    ));
}

// ---- supporting files ---------------------------------------------------------------------

#[test]
fn supporting_files_are_listed_hashed_and_digested() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = write_skill(tmp.path(), "my-skill", VALID);
    fs::create_dir_all(dir.join("scripts")).unwrap();
    fs::write(dir.join("scripts/run.sh"), "echo hi\n").unwrap();
    fs::write(dir.join("REFERENCE.md"), "# Ref\n").unwrap();
    let skill = load_skill_dir(&dir, &spec()).skill.unwrap();
    let files: Vec<(&str, u64, &str)> = skill
        .files()
        .iter()
        .map(|f| (f.path.as_str(), f.size, f.content_type.as_str()))
        .collect();
    assert_eq!(
        files,
        vec![
            ("REFERENCE.md", 6, "text/markdown"),
            ("scripts/run.sh", 8, "text/x-shellscript")
        ]
    );
    // Computed independently: `printf -- '<VALID>' | sha256sum`.
    assert_eq!(
        skill.skill_md_sha256().unwrap(),
        "61e9d6aaf910f6e68e1dd4730bdcb7f8b87aa7cf76b5b4a450aa909439d97579"
    );
    let digest = skill.digest().to_owned();
    // The digest covers content: change one byte, and it changes.
    fs::write(dir.join("scripts/run.sh"), "echo ho\n").unwrap();
    let changed = load_skill_dir(&dir, &spec()).skill.unwrap();
    assert_ne!(changed.digest(), digest);
    // It does not cover timestamps.
    fs::write(dir.join("scripts/run.sh"), "echo hi\n").unwrap();
    assert_eq!(
        load_skill_dir(&dir, &spec()).skill.unwrap().digest(),
        digest
    );
}

#[test]
fn file_limits_are_warnings_when_loading() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = write_skill(tmp.path(), "my-skill", VALID);
    fs::write(dir.join("at-limit.md"), vec![b'a'; 100 * 1024]).unwrap();
    fs::write(dir.join("over-limit.md"), vec![b'a'; 100 * 1024 + 1]).unwrap();
    fs::write(dir.join("font.ttf"), [0u8, 1, 0, 0]).unwrap();
    let report = load_skill_dir(&dir, &spec());
    assert!(report.is_valid());
    let found: Vec<(&str, Option<&str>)> = report
        .diagnostics
        .iter()
        .map(|d| (d.code(), d.file.as_deref()))
        .collect();
    assert_eq!(
        found,
        vec![
            ("file-binary", Some("font.ttf")),
            ("file-too-large", Some("over-limit.md"))
        ]
    );
    // Past 1 MB in total, the skill as a whole is flagged.
    for i in 0..10 {
        fs::write(dir.join(format!("part{i}.md")), vec![b'b'; 100 * 1024]).unwrap();
    }
    let report = load_skill_dir(&dir, &spec());
    assert!(
        report
            .diagnostics
            .iter()
            .any(|d| d.code() == "skill-too-large")
    );
}

#[cfg(unix)]
#[test]
fn file_names_with_control_characters_are_left_out() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = write_skill(tmp.path(), "my-skill", VALID);
    fs::write(dir.join("evil\u{1b}[2J.md"), "x").unwrap();
    fs::write(dir.join("fine.md"), "x").unwrap();
    let report = load_skill_dir(&dir, &spec());
    assert_eq!(errors(&report), vec!["file-path-invalid"]);
    let lenient_report = load_skill_dir(&dir, &lenient());
    assert_eq!(errors(&lenient_report), vec!["file-path-invalid"]);
}

// ---- entry-file limits and skill.json reads ------------------------------------------------

#[test]
fn skill_md_size_limit_boundary() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = write_skill(tmp.path(), "my-skill", VALID);
    let file = fs::OpenOptions::new()
        .write(true)
        .open(dir.join("SKILL.md"))
        .unwrap();
    // Exactly 4 MiB is read (the padding is NUL bytes, which are valid UTF-8).
    file.set_len(4 * 1024 * 1024).unwrap();
    let report = load_skill_dir(&dir, &lenient());
    assert!(errors(&report).is_empty(), "{:?}", report.diagnostics);
    file.set_len(4 * 1024 * 1024 + 1).unwrap();
    assert_eq!(
        errors(&load_skill_dir(&dir, &lenient())),
        vec!["skill-md-too-large"]
    );
}

#[test]
fn skill_size_limit_boundary() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = write_skill(tmp.path(), "my-skill", VALID);
    let rest = 1024 * 1024 - VALID.len();
    // SKILL.md plus 1 MiB minus its size in supporting files: exactly 1 MiB in all.
    fs::write(dir.join("a.md"), vec![b'a'; 100 * 1024]).unwrap();
    let mut left = rest - 100 * 1024;
    let mut i = 0;
    while left > 0 {
        let n = left.min(100 * 1024);
        fs::write(dir.join(format!("p{i:02}.md")), vec![b'b'; n]).unwrap();
        left -= n;
        i += 1;
    }
    let report = load_skill_dir(&dir, &spec());
    assert!(report.diagnostics.is_empty(), "{:?}", report.diagnostics);
    fs::write(dir.join("one-more.md"), "x").unwrap();
    let report = load_skill_dir(&dir, &spec());
    assert_eq!(
        codes(&report.diagnostics),
        vec![("skill-too-large", Severity::Warning)]
    );
}

#[cfg(unix)]
#[test]
fn skill_json_through_a_symlink_out_of_the_skill_is_refused_once() {
    let tmp = tempfile::tempdir().unwrap();
    let outside = write_skill_file(
        tmp.path(),
        "elsewhere",
        "skill.json",
        manifest("aria-my_skill"),
    );
    let dir = tmp.path().join("my_skill");
    fs::create_dir(&dir).unwrap();
    std::os::unix::fs::symlink(outside.join("skill.json"), dir.join("skill.json")).unwrap();
    let report = load_skill_dir(&dir, &lenient());
    assert_eq!(
        codes(&report.diagnostics),
        vec![("skill-json-unreadable", Severity::Error)]
    );
}

#[test]
fn skill_json_that_is_too_large_or_not_a_file_is_unreadable() {
    let tmp = tempfile::tempdir().unwrap();
    let big = tmp.path().join("big_one");
    fs::create_dir(&big).unwrap();
    let padded = format!("{}{}", manifest("aria-big_one"), " ".repeat(1024 * 1024));
    fs::write(big.join("skill.json"), padded).unwrap();
    assert_eq!(
        errors(&load_skill_dir(&big, &lenient())),
        vec!["skill-json-unreadable"]
    );
    let dir = tmp.path().join("dir_one");
    fs::create_dir_all(dir.join("skill.json")).unwrap();
    assert_eq!(
        errors(&load_skill_dir(&dir, &lenient())),
        vec!["skill-json-unreadable"]
    );
}

// ---- seed 001 layouts -------------------------------------------------------------------------

#[test]
fn a_snake_case_skill_with_skill_md_loads_in_lenient() {
    let tmp = tempfile::tempdir().unwrap();
    // Seed 001 names directories in snake_case; the standard names skills in kebab-case.
    let dir = write_skill(tmp.path(), "web_search", skill_md("web-search"));
    fs::write(dir.join("skill.json"), manifest("aria-web_search")).unwrap();
    let report = load_skill_dir(&dir, &lenient());
    assert!(report.is_valid(), "{:?}", report.diagnostics);
    assert_eq!(
        codes(&report.diagnostics),
        vec![("name-directory-mismatch", Severity::Warning)]
    );
    // The standard, strictly, still wants the directory named like the skill.
    assert_eq!(
        errors(&load_skill_dir(&dir, &spec())),
        vec!["name-directory-mismatch"]
    );
}

#[test]
fn a_documentation_only_skill_md_beside_skill_json_is_a_warning() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = write_skill(
        tmp.path(),
        "data_pipeline",
        "# Data pipeline\n\nHow to use it.\n",
    );
    fs::write(dir.join("skill.json"), manifest("aria-data_pipeline")).unwrap();
    for options in [spec(), lenient()] {
        let report = load_skill_dir(&dir, &options);
        assert_eq!(
            codes(&report.diagnostics),
            vec![("skill-md-documentation-only", Severity::Warning)]
        );
        let skill = report.skill.unwrap();
        assert_eq!(skill.name(), "data_pipeline");
        assert!(skill.skill_md().is_none());
        assert!(skill.skill_md_sha256().is_some());
    }
    // Without a skill.json, the same file is simply not a skill.
    fs::remove_file(dir.join("skill.json")).unwrap();
    assert_eq!(
        errors(&load_skill_dir(&dir, &lenient())),
        vec!["frontmatter-missing"]
    );
}

#[test]
fn loading_a_file_as_a_skill_directory_says_so() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("notes.txt");
    fs::write(&file, "x").unwrap();
    let report = load_skill_dir(&file, &spec());
    assert_eq!(errors(&report), vec!["no-skill-found"]);
}
