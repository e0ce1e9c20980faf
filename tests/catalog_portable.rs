//! Portable import/export (JSON and tar.gz), plugin contributions, admin rules and the
//! resolver.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::fs;
use std::os::unix::fs::symlink;

use skills::catalog::plugin::{self, ContributionSource, SkillContribution};
use skills::catalog::portable::{
    self, ExportMetadata, ImportAction, ImportOptions, OnClash, archive,
};
use skills::catalog::resolve::merge;
use skills::catalog::{Error, Resolver, SkillOrigin, admin};
use skills::store::in_memory::InMemorySkillStore;
use skills::store::{
    AssignmentFilter, NewAssignment, NewSkill, SkillFilter, SkillSourceKind, SkillStore,
    SkillUpdate, TenantId, Violation,
};

fn tenant() -> TenantId {
    TenantId::new("acme")
}

async fn directory_skill(store: &InMemorySkillStore) -> skills::store::SkillRecord {
    let mut new = NewSkill::new(
        "Jira Triage",
        "jira-triage",
        "---\nname: jira-triage\ndescription: Triage tickets.\n---\n# Jira Triage\n",
    )
    .with_file("scripts/triage-report.sh", "#!/bin/bash\necho report\n")
    .with_file("references/priority-matrix.md", "# Priority Matrix\n");
    new.description = Some("Triage incoming Jira tickets".into());
    new.category = Some("ops".into());
    new.tags = vec!["jira".into(), "triage".into()];
    new.version = Some("1.0.0".into());
    new.requires_tools = vec!["bash".into()];
    store.create_skill(&tenant(), new).await.unwrap()
}

async fn export_json(store: &InMemorySkillStore, id: &str) -> String {
    let document = portable::export(store, &tenant(), id, ExportMetadata::default())
        .await
        .unwrap();
    portable::to_json(&document).unwrap()
}

#[tokio::test]
async fn json_export_import_export_is_byte_identical_and_never_carries_assignments() {
    let from = InMemorySkillStore::new();
    let skill = directory_skill(&from).await;
    from.create_assignment(&tenant(), NewAssignment::global(&skill.id))
        .await
        .unwrap();
    let json = export_json(&from, &skill.id).await;
    assert!(
        json.starts_with(
            "{\n  \"formatVersion\": 2,\n  \"skill\": {\n    \"name\": \"Jira Triage\""
        )
    );
    assert!(!json.contains("assign"), "assignments are never exported");
    let files_at = json.find("references/priority-matrix.md").unwrap();
    assert!(
        files_at < json.find("scripts/triage-report.sh").unwrap(),
        "files sorted by path"
    );
    assert_eq!(
        json,
        export_json(&from, &skill.id).await,
        "export is deterministic"
    );

    let to = InMemorySkillStore::new();
    let options = ImportOptions::default();
    let document = portable::parse_json(json.as_bytes(), &options).unwrap();
    let imported = portable::import(&to, &tenant(), document, &options)
        .await
        .unwrap();
    assert_eq!(imported.action, ImportAction::Created);
    assert_eq!(imported.skill.source_kind, SkillSourceKind::Admin);
    assert_eq!(export_json(&to, &imported.skill.id).await, json);
    let assignments = to
        .list_assignments(&tenant(), &AssignmentFilter::default())
        .await
        .unwrap();
    assert!(assignments.is_empty());
}

#[tokio::test]
async fn slug_clashes_follow_the_callers_choice() {
    let store = InMemorySkillStore::new();
    let skill = directory_skill(&store).await;
    let json = export_json(&store, &skill.id).await;
    let changed = json.replace("# Priority Matrix", "# Priority Matrix v2");

    let parse = |text: &str, on_clash| {
        let options = ImportOptions::on_clash(on_clash);
        (
            portable::parse_json(text.as_bytes(), &options).unwrap(),
            options,
        )
    };
    let (doc, options) = parse(&changed, OnClash::Error);
    let err = portable::import(&store, &tenant(), doc, &options)
        .await
        .unwrap_err();
    assert!(matches!(err, Error::SlugExists { ref slug } if slug == "jira-triage"));

    let (doc, options) = parse(&changed, OnClash::Skip);
    let skipped = portable::import(&store, &tenant(), doc, &options)
        .await
        .unwrap();
    assert_eq!(skipped.action, ImportAction::Skipped);
    assert_eq!(
        export_json(&store, &skill.id).await,
        json,
        "skip changed nothing"
    );

    let (doc, options) = parse(&changed, OnClash::Overwrite);
    let over = portable::import(&store, &tenant(), doc, &options)
        .await
        .unwrap();
    assert_eq!(over.action, ImportAction::Overwritten);
    assert_eq!(over.skill.id, skill.id);
    assert_eq!(export_json(&store, &skill.id).await, changed);
}

#[tokio::test]
async fn import_validates_everything_before_writing_anything() {
    let store = InMemorySkillStore::new();
    let base = serde_json::json!({
        "formatVersion": 2,
        "skill": {"name": "X", "slug": "x", "content": "# X\n",
                  "files": [{"path": "ok.md", "content": "ok"}]}
    });
    let cases: Vec<(serde_json::Value, &str)> = vec![
        (
            serde_json::json!({"formatVersion": 3, "skill": base["skill"]}),
            "malformed",
        ),
        (serde_json::json!({"skill": base["skill"]}), "malformed"),
        (
            serde_json::json!({"formatVersion": 2, "skill": base["skill"], "assignments": []}),
            "malformed",
        ),
        (patch(&base, "/skill/slug", "../x"), "skill.slug"),
        (
            patch(&base, "/skill/files/0/path", "../../etc/passwd"),
            "skill.files[0].path",
        ),
        (
            patch(&base, "/skill/files/0/path", "/etc/passwd"),
            "skill.files[0].path",
        ),
        (
            patch(&base, "/skill/files/0/path", "SKILL.md"),
            "skill.files[0].path",
        ),
        (
            patch(&base, "/skill/files/0/content", &"x".repeat(100 * 1024 + 1)),
            "skill.files[0].content",
        ),
        (
            patch(&base, "/skill/files/0/content", "bin\u{0}ary"),
            "skill.files[0].content",
        ),
        (patch(&base, "/skill/name", ""), "skill.name"),
        (patch(&base, "/skill/content", ""), "skill.content"),
    ];
    for (document, expected) in cases {
        let bytes = serde_json::to_vec(&document).unwrap();
        let err = portable::parse_json(&bytes, &ImportOptions::default()).unwrap_err();
        match (&err, expected) {
            (Error::Malformed { .. }, "malformed") => {}
            (Error::Invalid { field, .. }, expected) => assert_eq!(field, expected),
            _ => panic!("{expected}: unexpected {err:?}"),
        }
    }
    let duplicate_key = br#"{"formatVersion": 2, "skill": {"name": "X", "slug": "x", "slug": "y", "content": "c"}}"#;
    assert!(matches!(
        portable::parse_json(duplicate_key, &ImportOptions::default()),
        Err(Error::Malformed { .. })
    ));
    let small = ImportOptions {
        max_document_bytes: 64,
        ..ImportOptions::default()
    };
    let bytes = serde_json::to_vec(&base).unwrap();
    assert!(matches!(
        portable::parse_json(&bytes, &small),
        Err(Error::TooLarge { .. })
    ));
    assert!(
        store
            .list_skills(&tenant(), &SkillFilter::default())
            .await
            .unwrap()
            .is_empty()
    );
}

fn patch(base: &serde_json::Value, pointer: &str, value: &str) -> serde_json::Value {
    let mut copy = base.clone();
    *copy.pointer_mut(pointer).unwrap() = serde_json::Value::String(value.to_owned());
    copy
}

#[test]
fn the_json_schema_describes_the_format() {
    let schema = portable::json_schema();
    let required = schema["required"].as_array().unwrap();
    assert!(required.iter().any(|k| k == "formatVersion"));
    assert!(required.iter().any(|k| k == "skill"));
    let text = serde_json::to_string(&schema).unwrap();
    assert!(
        text.contains("^[a-z][a-z0-9-]*$"),
        "slug pattern in the schema"
    );
    assert_eq!(schema["additionalProperties"], false);
}

#[tokio::test]
async fn tar_gz_export_is_deterministic_and_imports_back() {
    let store = InMemorySkillStore::new();
    let skill = directory_skill(&store).await;
    let document = portable::export(&store, &tenant(), &skill.id, ExportMetadata::default())
        .await
        .unwrap();
    let tarball = archive::to_tar_gz(&document).unwrap();
    assert_eq!(tarball, archive::to_tar_gz(&document).unwrap());
    let options = ImportOptions::default();
    let back = archive::from_tar_gz(&tarball, &options).unwrap();
    assert_eq!(back.skill.slug, "jira-triage");
    assert_eq!(back.skill.content, document.skill.content);
    assert_eq!(back.skill.files.len(), 2);
    assert_eq!(back.skill.files[0].path, "references/priority-matrix.md");
    assert_eq!(back.skill.description.as_deref(), Some("Triage tickets."));

    let other = InMemorySkillStore::new();
    let imported = portable::import(&other, &tenant(), back, &options)
        .await
        .unwrap();
    let files = other
        .list_skill_files(&tenant(), &imported.skill.id)
        .await
        .unwrap();
    assert_eq!(files[1].content, "#!/bin/bash\necho report\n");
}

/// One raw archive entry: name, kind, data, and a declared size when it should lie.
type RawEntry<'a> = (&'a str, tar::EntryType, &'a [u8], Option<u64>);

/// Builds a tar.gz with raw headers, so hostile names and kinds can be written.
fn raw_tar(entries: &[RawEntry<'_>]) -> Vec<u8> {
    let mut out = Vec::new();
    {
        let encoder = flate2::write::GzEncoder::new(&mut out, flate2::Compression::fast());
        let mut builder = tar::Builder::new(encoder);
        for (name, kind, data, declared) in entries {
            let mut header = tar::Header::new_gnu();
            let bytes = name.as_bytes();
            header.as_gnu_mut().unwrap().name[..bytes.len()].copy_from_slice(bytes);
            header.set_entry_type(*kind);
            header.set_mode(0o644);
            header.set_size(declared.unwrap_or(data.len() as u64));
            if *kind == tar::EntryType::Symlink || *kind == tar::EntryType::Link {
                header.set_link_name("/etc/passwd").unwrap();
            }
            header.set_cksum();
            builder.append(&header, *data).unwrap();
        }
        builder.into_inner().unwrap().finish().unwrap();
    }
    out
}

const SKILL_MD: &[u8] = b"---\nname: evil\ndescription: d\n---\nbody\n";

#[test]
fn hostile_archives_are_refused() {
    use tar::EntryType::{Block, Char, Fifo, Link, Regular, Symlink};
    let options = ImportOptions::default();
    let ok = ("evil/SKILL.md", Regular, SKILL_MD, None);
    let cases: Vec<(Vec<RawEntry<'_>>, &str)> = vec![
        (
            vec![ok, ("evil/../../etc/cron.d/x", Regular, b"x", None)],
            "invalid",
        ),
        (vec![ok, ("/etc/passwd", Regular, b"x", None)], "invalid"),
        (
            vec![ok, ("evil/link", Symlink, b"", None)],
            "unsupported_entry",
        ),
        (
            vec![ok, ("evil/hard", Link, b"", None)],
            "unsupported_entry",
        ),
        (vec![ok, ("evil/dev", Char, b"", None)], "unsupported_entry"),
        (
            vec![ok, ("evil/blk", Block, b"", None)],
            "unsupported_entry",
        ),
        (
            vec![ok, ("evil/fifo", Fifo, b"", None)],
            "unsupported_entry",
        ),
        (
            vec![ok, ("evil/big.md", Regular, b"", Some(100 * 1024 + 1))],
            "invalid",
        ),
        (
            vec![ok, ("evil/bin.dat", Regular, b"\xff\xfe\x00", None)],
            "invalid",
        ),
        (
            vec![("evil/readme.md", Regular, b"no skill", None)],
            "malformed",
        ),
    ];
    for (entries, kind) in cases {
        let err = archive::from_tar_gz(&raw_tar(&entries), &options).unwrap_err();
        assert_eq!(err.kind(), kind, "{entries:?}: {err}");
    }
    assert!(archive::from_tar_gz(b"not gzip at all", &options).is_err());
}

#[test]
fn decompression_bombs_stop_at_the_cap() {
    // 120 files of 100 KiB each: 12 MiB decompressed, a few tens of KiB compressed.
    let content = vec![b'x'; 100 * 1024];
    let names: Vec<String> = (0..120).map(|i| format!("s/f{i:03}.md")).collect();
    let mut bomb: Vec<RawEntry<'_>> = vec![("s/SKILL.md", tar::EntryType::Regular, SKILL_MD, None)];
    for name in &names {
        bomb.push((name, tar::EntryType::Regular, &content, None));
    }
    let bytes = raw_tar(&bomb);
    assert!(bytes.len() < 512 * 1024, "{} bytes", bytes.len());
    let err = archive::from_tar_gz(&bytes, &ImportOptions::default()).unwrap_err();
    assert!(
        matches!(err, Error::TooLarge { ref what, .. } if what.contains("decompressed")),
        "{err:?}"
    );
    let many: Vec<(String, Vec<u8>)> = (0..30)
        .map(|i| (format!("s/f{i}.md"), b"x".to_vec()))
        .collect();
    let mut entries: Vec<RawEntry<'_>> =
        vec![("s/SKILL.md", tar::EntryType::Regular, SKILL_MD, None)];
    for (name, data) in &many {
        entries.push((name, tar::EntryType::Regular, data, None));
    }
    let few = ImportOptions {
        max_entries: 10,
        ..ImportOptions::default()
    };
    assert!(matches!(
        archive::from_tar_gz(&raw_tar(&entries), &few),
        Err(Error::TooLarge { .. })
    ));
}

#[tokio::test]
async fn duplicate_gets_a_new_slug_and_plugin_skills_are_read_only_to_admins() {
    let store = InMemorySkillStore::new();
    let t = tenant();
    let original = directory_skill(&store).await;
    let copy = admin::duplicate_skill(&store, &t, &original.id, "jira-triage-copy")
        .await
        .unwrap();
    assert_ne!(copy.id, original.id);
    assert_eq!(copy.content, original.content);
    assert_eq!(store.list_skill_files(&t, &copy.id).await.unwrap().len(), 2);
    assert!(matches!(
        admin::duplicate_skill(&store, &t, &original.id, "jira-triage").await,
        Err(Error::Store(skills::store::Error::Conflict { .. }))
    ));

    let mut plugin_skill = NewSkill::new("P", "from-plugin", "# P\n");
    plugin_skill.source_kind = Some(SkillSourceKind::Plugin);
    plugin_skill.plugin_id = Some("plug".into());
    let p = store.create_skill(&t, plugin_skill).await.unwrap();
    let edit = SkillUpdate {
        content: Some("# hijacked\n".into()),
        ..Default::default()
    };
    let err = admin::update_skill(&store, &t, &p.id, edit)
        .await
        .unwrap_err();
    assert!(matches!(
        err,
        Error::Invalid {
            violation: Violation::ReadOnlyPluginSkill,
            ..
        }
    ));
    // Import may not overwrite a plugin skill either.
    let mut doc = portable::export(&store, &t, &p.id, ExportMetadata::default())
        .await
        .unwrap();
    doc.skill.content = "# hijacked\n".into();
    let options = ImportOptions::on_clash(OnClash::Overwrite);
    assert!(portable::import(&store, &t, doc, &options).await.is_err());
    assert_eq!(
        store
            .find_skill_by_id(&t, &p.id)
            .await
            .unwrap()
            .unwrap()
            .content,
        "# P\n"
    );
}

fn write(path: &std::path::Path, text: &str) {
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(path, text).unwrap();
}

#[tokio::test]
async fn plugin_lifecycle_enable_disable_upgrade_uninstall() {
    let store = InMemorySkillStore::new();
    let t = tenant();
    let install = tempfile::tempdir().unwrap();
    write(&install.path().join("skills/lint/SKILL.md"), "# Lint\n");
    write(
        &install.path().join("skills/lint/scripts/lint.sh"),
        "lint\n",
    );
    write(&install.path().join("docs/FORMAT.md"), "# Format\n");
    let mut inline = SkillContribution::new(
        "Inline Helper",
        "Inline",
        ContributionSource::Inline {
            content: "# Inline\n".into(),
        },
    );
    inline.files = vec![plugin::ContributedFile {
        path: "a.md".into(),
        content: "a".into(),
    }];
    inline.default_enabled = true;
    let file = SkillContribution::new(
        "format",
        "Format",
        ContributionSource::File {
            path: "docs/FORMAT.md".into(),
        },
    );
    let dir = SkillContribution::new(
        "lint",
        "Lint",
        ContributionSource::Directory {
            path: "skills/lint".into(),
        },
    );
    let contributions = vec![inline, file, dir];

    let report = plugin::enable_plugin(&store, &t, "plug", install.path(), &contributions)
        .await
        .unwrap();
    assert_eq!(report.created, ["format", "inline-helper", "lint"]);
    assert_eq!(report.assigned, ["inline-helper"]);
    let lint = store.find_skill_by_slug(&t, "lint").await.unwrap().unwrap();
    assert_eq!(lint.source_kind, SkillSourceKind::Plugin);
    assert_eq!(lint.plugin_id.as_deref(), Some("plug"));
    assert!(lint.is_directory);
    let lint_files = store.list_skill_files(&t, &lint.id).await.unwrap();
    assert_eq!(lint_files[0].relative_path, "scripts/lint.sh");

    // Enabling again changes nothing.
    let again = plugin::enable_plugin(&store, &t, "plug", install.path(), &contributions)
        .await
        .unwrap();
    assert_eq!(again.unchanged, ["format", "inline-helper", "lint"]);
    assert!(again.created.is_empty() && again.changed.is_empty() && again.assigned.is_empty());

    // Disable keeps assignments.
    let disabled = plugin::disable_plugin(&store, &t, "plug").await.unwrap();
    assert_eq!(disabled.len(), 3);
    let helper = store
        .find_skill_by_slug(&t, "inline-helper")
        .await
        .unwrap()
        .unwrap();
    assert!(!helper.enabled);
    let kept = store
        .list_assignments(&t, &AssignmentFilter::default())
        .await
        .unwrap();
    assert_eq!(kept.len(), 1);

    // Upgrade: lint changed on disk, format dropped.
    write(
        &install.path().join("skills/lint/scripts/lint.sh"),
        "lint v2\n",
    );
    let upgraded = vec![contributions[0].clone(), contributions[2].clone()];
    let report = plugin::upgrade_plugin(&store, &t, "plug", install.path(), &upgraded)
        .await
        .unwrap();
    assert_eq!(
        report.changed,
        ["inline-helper", "lint"],
        "lint by checksum, helper re-enabled"
    );
    assert_eq!(report.removed, ["format"]);
    assert!(report.resync.contains(&lint.id));
    let lint_now = store
        .find_skill_file(&t, &lint.id, "scripts/lint.sh")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(lint_now.content, "lint v2\n");

    let removed = plugin::uninstall_plugin(&store, &t, "plug").await.unwrap();
    assert_eq!(removed.len(), 2);
    assert!(
        store
            .list_skills(&t, &SkillFilter::default())
            .await
            .unwrap()
            .is_empty()
    );
    assert!(
        store
            .list_assignments(&t, &AssignmentFilter::default())
            .await
            .unwrap()
            .is_empty()
    );
}

#[tokio::test]
async fn plugin_paths_cannot_escape_and_admin_slugs_win() {
    let store = InMemorySkillStore::new();
    let t = tenant();
    let root = tempfile::tempdir().unwrap();
    let install = root.path().join("plugin");
    write(&root.path().join("secret/SKILL.md"), "# secret\n");
    write(&install.join("ok/SKILL.md"), "# ok\n");
    symlink(root.path().join("secret"), install.join("escape")).unwrap();
    write(&install.join("linked/SKILL.md"), "# linked\n");
    symlink(
        root.path().join("secret/SKILL.md"),
        install.join("linked/leak.md"),
    )
    .unwrap();

    let cases = [
        ContributionSource::File {
            path: "../secret/SKILL.md".into(),
        },
        ContributionSource::File {
            path: "/etc/passwd".into(),
        },
        ContributionSource::Directory {
            path: "escape".into(),
        },
        ContributionSource::Directory {
            path: "linked".into(),
        },
    ];
    for source in cases {
        let ok = SkillContribution::new(
            "ok",
            "Ok",
            ContributionSource::Directory { path: "ok".into() },
        );
        let bad = SkillContribution::new("bad", "Bad", source.clone());
        let result = plugin::enable_plugin(&store, &t, "plug", &install, &[ok, bad]).await;
        assert!(result.is_err(), "{source:?} was accepted");
        assert!(
            store
                .list_skills(&t, &SkillFilter::default())
                .await
                .unwrap()
                .is_empty(),
            "{source:?}: a refused plugin wrote something"
        );
    }
    store
        .create_skill(&t, NewSkill::new("Ok", "ok", "# admin\n"))
        .await
        .unwrap();
    let ok = SkillContribution::new(
        "ok",
        "Ok",
        ContributionSource::Directory { path: "ok".into() },
    );
    let report = plugin::enable_plugin(&store, &t, "plug", &install, &[ok])
        .await
        .unwrap();
    assert_eq!(report.clashes, ["ok"], "the admin skill keeps its slug");
    assert!(report.created.is_empty());
    assert_eq!(
        plugin::slug_for("My Plugin::Skill_v2"),
        "my-plugin-skill-v2"
    );
}

#[tokio::test]
async fn resolver_merges_sources_by_precedence_and_priority() {
    let store = InMemorySkillStore::new();
    let t = tenant();
    let mut ids = Vec::new();
    for (slug, source) in [
        ("pdf-tools", SkillSourceKind::Admin),
        ("low", SkillSourceKind::Admin),
        ("high", SkillSourceKind::Admin),
        ("plugged", SkillSourceKind::Plugin),
        ("off", SkillSourceKind::Admin),
    ] {
        let mut new = NewSkill::new(format!("Name {slug}"), slug, "# s\n");
        new.source_kind = Some(source);
        if source == SkillSourceKind::Plugin {
            new.plugin_id = Some("plug".into());
        }
        ids.push(store.create_skill(&t, new).await.unwrap().id);
    }
    store
        .create_assignment(&t, NewAssignment::global(&ids[0]))
        .await
        .unwrap();
    store
        .create_assignment(&t, NewAssignment::global(&ids[1]).priority(1))
        .await
        .unwrap();
    store
        .create_assignment(&t, NewAssignment::team(&ids[2], "ops").priority(9))
        .await
        .unwrap();
    store
        .create_assignment(
            &t,
            NewAssignment::agent(&ids[2], "me")
                .priority(3)
                .auto_inject(true),
        )
        .await
        .unwrap();
    store
        .create_assignment(&t, NewAssignment::global(&ids[3]).priority(100))
        .await
        .unwrap();
    let mut off = NewAssignment::global(&ids[4]);
    off.enabled = false;
    store.create_assignment(&t, off).await.unwrap();

    let repo = skills::Discovery::new(Default::default())
        .root(concat!(env!("CARGO_MANIFEST_DIR"), "/examples/skills"))
        .run()
        .into_skills();
    let resolution = Resolver::new()
        .sandbox_dir("/sandbox/.skills/")
        .resolve_for_agent(&store, &t, "me", Some("ops"), &repo)
        .await
        .unwrap();
    let order: Vec<(&str, SkillOrigin, bool)> = resolution
        .skills
        .iter()
        .map(|s| (s.id.as_str(), s.source, s.shadowed))
        .collect();
    assert_eq!(
        &order[..4],
        [
            ("high", SkillOrigin::Admin, false),
            ("low", SkillOrigin::Admin, false),
            ("pdf-tools", SkillOrigin::Admin, false),
            ("plugged", SkillOrigin::Plugin, false),
        ]
    );
    assert!(
        order.iter().all(|(id, ..)| *id != "off"),
        "disabled assignments are left out"
    );
    let high = resolution.find("HIGH").unwrap();
    assert_eq!(high.priority, 9, "the highest reaching priority");
    assert!(high.auto_inject);
    assert_eq!(high.sandbox_path.as_deref(), Some("/sandbox/.skills/high"));
    let repo_pdf = resolution
        .skills
        .iter()
        .find(|s| s.id == "pdf-tools" && s.source == SkillOrigin::Repo)
        .unwrap();
    assert!(
        repo_pdf.shadowed && repo_pdf.absolute_path.is_some() && repo_pdf.sandbox_path.is_none()
    );
    assert!(!repo_pdf.supporting_files.is_empty());
    assert!(resolution.warnings.iter().any(|w| w.contains("pdf-tools")));
    assert_eq!(
        resolution.find("pdf-tools").unwrap().source,
        SkillOrigin::Admin
    );
    assert_eq!(
        resolution.find("name plugged").unwrap().id,
        "plugged",
        "by name too"
    );
    assert!(resolution.find("nothing").is_none());

    // The pure merge: admin beats plugin beats repo, whatever the input order.
    let mut entries = resolution.skills.clone();
    entries.reverse();
    for e in &mut entries {
        e.shadowed = false;
        e.id = "same".into();
    }
    let merged = merge(entries, Vec::new());
    assert_eq!(merged.skills[0].source, SkillOrigin::Admin);
    assert!(merged.skills[1..].iter().all(|s| s.shadowed));
    let first_plugin = merged
        .skills
        .iter()
        .position(|s| s.source == SkillOrigin::Plugin)
        .unwrap();
    let first_repo = merged
        .skills
        .iter()
        .position(|s| s.source == SkillOrigin::Repo)
        .unwrap();
    assert!(first_plugin < first_repo);
}
