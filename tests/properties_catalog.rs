//! Property tests of the portable format: export, import, export is byte-identical for any
//! valid skill, the tar.gz form keeps every file, and no byte string panics either importer.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use futures::executor::block_on;
use proptest::prelude::*;
use skills::catalog::portable::{self, ExportMetadata, ImportOptions, archive};
use skills::store::in_memory::InMemorySkillStore;
use skills::store::{NewSkill, NewSkillFile, SkillStore, TenantId};

fn slug() -> impl Strategy<Value = String> {
    "[a-z][a-z0-9-]{0,20}"
}

/// Any text without NUL: unicode, quotes, control characters, line breaks.
fn text() -> impl Strategy<Value = String> {
    prop_oneof![
        ".{1,60}",
        "[ -~\\n\\t]{1,60}",
        "[é𝐀\"\\\\\u{1}\u{7f}\u{2028}\r\n]{1,20}"
    ]
    .prop_map(|t| t.replace('\0', "_"))
}

fn path() -> impl Strategy<Value = String> {
    prop::collection::vec("[A-Za-z0-9_][A-Za-z0-9_. -]{0,12}", 1..4)
        .prop_map(|parts| parts.join("/"))
}

fn skill() -> impl Strategy<Value = NewSkill> {
    (
        slug(),
        "[A-Za-z0-9 é]{1,30}",
        text(),
        proptest::option::of(text()),
        prop::collection::vec("[a-z0-9-]{1,8}", 0..4),
        prop::collection::btree_map(path(), text(), 0..5),
        proptest::option::of(prop::sample::select(vec![
            "general", "ops", "coding", "custom",
        ])),
    )
        .prop_filter("SKILL.md is reserved", |t| !t.5.contains_key("SKILL.md"))
        .prop_map(
            |(slug, name, content, description, tags, files, category)| {
                let mut new = NewSkill::new(name, slug, content);
                new.description = description;
                new.tags = tags;
                new.category = category.map(str::to_owned);
                new.files = files
                    .into_iter()
                    .map(|(p, c)| NewSkillFile::new(p, c))
                    .collect();
                new
            },
        )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn export_import_export_is_identical(new in skill()) {
        let tenant = TenantId::new("t");
        let (from, to) = (InMemorySkillStore::new(), InMemorySkillStore::new());
        let options = ImportOptions::default();
        block_on(async {
            // Every generated skill is valid by construction.
            let created = from.create_skill(&tenant, new).await.unwrap();
            let json = portable::to_json(
                &portable::export(&from, &tenant, &created.id, ExportMetadata::default()).await.unwrap(),
            )
            .unwrap();
            let document = portable::parse_json(json.as_bytes(), &options).unwrap();
            let imported = portable::import(&to, &tenant, document, &options).await.unwrap();
            let again = portable::to_json(
                &portable::export(&to, &tenant, &imported.skill.id, ExportMetadata::default()).await.unwrap(),
            )
            .unwrap();
            prop_assert_eq!(json, again);
            Ok(())
        })?;
    }

    #[test]
    fn tar_gz_keeps_every_file(new in skill()) {
        let tenant = TenantId::new("t");
        let store = InMemorySkillStore::new();
        block_on(async {
            let created = store.create_skill(&tenant, new).await.unwrap();
            let document = portable::export(&store, &tenant, &created.id, ExportMetadata::default()).await.unwrap();
            let bytes = archive::to_tar_gz(&document).unwrap();
            let back = archive::from_tar_gz(&bytes, &ImportOptions::default()).unwrap();
            prop_assert_eq!(&back.skill.content, &document.skill.content);
            let files = |d: &portable::PortableSkill| {
                d.skill.files.iter().map(|f| (f.path.clone(), f.content.clone())).collect::<Vec<_>>()
            };
            prop_assert_eq!(files(&back), files(&document));
            Ok(())
        })?;
    }

    #[test]
    fn importers_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..2048)) {
        let options = ImportOptions::default();
        let _ = portable::parse_json(&bytes, &options);
        let _ = archive::from_tar_gz(&bytes, &options);
        let mut gz = vec![0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3];
        gz.extend_from_slice(&bytes);
        let _ = archive::from_tar_gz(&gz, &options);
    }
}
