//! Issue 18: every catalog edit is one `Catalog` operation that refreshes the cache and syncs
//! exactly the affected entries of the agents it reaches; plugin operations reach sandboxes
//! and the cache; check-only sync status; import materializes; eager materialization.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::BTreeMap;
use std::fs;
use std::path::Path;
use std::sync::Arc;

use async_trait::async_trait;
use skills::catalog::plugin::{ContributionSource, SkillContribution};
use skills::catalog::portable::{self, ExportMetadata, ImportAction, ImportOptions, OnClash};
use skills::catalog::{
    AgentDirectory, AgentRef, Catalog, Error, InMemorySandboxFs, Materializer, MemoryEntry,
    SandboxFs,
};
use skills::store::in_memory::InMemorySkillStore;
use skills::store::{
    AssignmentUpdate, NewAssignment, NewSkill, NewSkillFile, SkillFileUpdate, SkillRecord,
    SkillStore, SkillUpdate, TenantId, Violation,
};

fn tenant() -> TenantId {
    TenantId::new("acme")
}

struct Agents {
    sandboxes: BTreeMap<String, Arc<InMemorySandboxFs>>,
}

#[async_trait]
impl AgentDirectory for Agents {
    async fn agents(&self, _tenant: &TenantId) -> skills::catalog::Result<Vec<AgentRef>> {
        Ok(vec![
            AgentRef::new("ops-1", Some("ops")),
            AgentRef::new("solo", None),
        ])
    }
    async fn sandbox(
        &self,
        _tenant: &TenantId,
        agent: &AgentRef,
    ) -> skills::catalog::Result<Option<Arc<dyn SandboxFs>>> {
        Ok(self
            .sandboxes
            .get(&agent.agent_id)
            .map(|s| Arc::clone(s) as Arc<dyn SandboxFs>))
    }
}

struct Setup {
    store: Arc<InMemorySkillStore>,
    ops1: Arc<InMemorySandboxFs>,
    solo: Arc<InMemorySandboxFs>,
    cache: tempfile::TempDir,
    catalog: Catalog,
}

fn setup() -> Setup {
    let store = Arc::new(InMemorySkillStore::new());
    let ops1 = Arc::new(InMemorySandboxFs::new());
    let solo = Arc::new(InMemorySandboxFs::new());
    let agents = Agents {
        sandboxes: BTreeMap::from([
            ("ops-1".into(), Arc::clone(&ops1)),
            ("solo".into(), Arc::clone(&solo)),
        ]),
    };
    let cache = tempfile::tempdir().unwrap();
    let catalog = Catalog::new(store.clone(), Arc::new(agents))
        .with_cache(Materializer::new(cache.path().join("cache")));
    Setup {
        store,
        ops1,
        solo,
        cache,
        catalog,
    }
}

impl Setup {
    fn cached(&self, id: &str) -> std::path::PathBuf {
        self.cache.path().join("cache").join(id)
    }
}

async fn skill(store: &InMemorySkillStore, slug: &str) -> SkillRecord {
    let new = NewSkill::new(slug, slug, format!("# {slug}\n")).with_file("a.md", "A\n");
    store.create_skill(&tenant(), new).await.unwrap()
}

fn files(sandbox: &InMemorySandboxFs, slug: &str) -> Option<BTreeMap<String, Vec<u8>>> {
    match sandbox.entries().remove(slug) {
        Some(MemoryEntry::Dir(files)) => Some(files),
        _ => None,
    }
}

fn slugs(sandbox: &InMemorySandboxFs) -> Vec<String> {
    sandbox.entries().into_keys().collect()
}

#[tokio::test]
async fn file_and_assignment_edits_sync_only_the_entry_they_change() {
    let s = setup();
    let t = tenant();
    let a = skill(&s.store, "alpha").await;
    let b = skill(&s.store, "beta").await;
    let (assignment, _) = s
        .catalog
        .assign(&t, NewAssignment::agent(&a.id, "ops-1"))
        .await
        .unwrap();
    s.catalog
        .assign(&t, NewAssignment::agent(&b.id, "ops-1"))
        .await
        .unwrap();
    // A stale copy of beta that only a full sync would repair: per-entry syncs leave it.
    s.ops1.insert(
        "beta",
        MemoryEntry::Dir(BTreeMap::from([("SKILL.md".into(), b"stale".to_vec())])),
    );

    let (_, syncs) = s
        .catalog
        .add_file(&t, &a.id, NewSkillFile::new("b.md", "B\n"))
        .await
        .unwrap();
    assert_eq!(syncs.len(), 1, "only ops-1 has alpha");
    assert_eq!(syncs[0].report.as_ref().unwrap().synced, ["alpha"]);
    assert_eq!(files(&s.ops1, "alpha").unwrap()["b.md"], b"B\n");
    assert_eq!(fs::read(s.cached(&a.id).join("b.md")).unwrap(), b"B\n");
    assert_eq!(files(&s.ops1, "beta").unwrap()["SKILL.md"], b"stale");

    s.catalog
        .update_file(&t, &a.id, "b.md", SkillFileUpdate::content("B2\n"))
        .await
        .unwrap();
    assert_eq!(files(&s.ops1, "alpha").unwrap()["b.md"], b"B2\n");
    assert_eq!(fs::read(s.cached(&a.id).join("b.md")).unwrap(), b"B2\n");

    s.catalog.remove_file(&t, &a.id, "b.md").await.unwrap();
    assert!(!files(&s.ops1, "alpha").unwrap().contains_key("b.md"));
    assert!(!s.cached(&a.id).join("b.md").exists());

    let off = AssignmentUpdate {
        enabled: Some(false),
        ..AssignmentUpdate::default()
    };
    let (_, syncs) = s
        .catalog
        .update_assignment(&t, &assignment.id, off)
        .await
        .unwrap();
    assert_eq!(syncs[0].report.as_ref().unwrap().removed, ["alpha"]);
    assert_eq!(slugs(&s.ops1), ["beta"]);
    let on = AssignmentUpdate {
        enabled: Some(true),
        ..AssignmentUpdate::default()
    };
    s.catalog
        .update_assignment(&t, &assignment.id, on)
        .await
        .unwrap();
    assert_eq!(slugs(&s.ops1), ["alpha", "beta"]);

    let (_, syncs) = s.catalog.set_enabled(&t, &a.id, false).await.unwrap();
    assert_eq!(syncs[0].report.as_ref().unwrap().removed, ["alpha"]);
    s.catalog.set_enabled(&t, &a.id, true).await.unwrap();
    assert_eq!(slugs(&s.ops1), ["alpha", "beta"]);

    s.catalog.delete(&t, &a.id).await.unwrap();
    assert_eq!(slugs(&s.ops1), ["beta"]);
    assert!(!s.cached(&a.id).exists());
    assert_eq!(files(&s.ops1, "beta").unwrap()["SKILL.md"], b"stale");
    assert!(slugs(&s.solo).is_empty(), "solo was never reached");
}

fn write(path: &Path, text: &str) {
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(path, text).unwrap();
}

fn contribution(id: &str, default_enabled: bool) -> SkillContribution {
    let mut c = SkillContribution::new(id, id, ContributionSource::Directory { path: id.into() });
    c.default_enabled = default_enabled;
    c
}

#[tokio::test]
async fn admin_operations_refuse_plugin_skills_with_a_typed_error() {
    let s = setup();
    let t = tenant();
    let install = tempfile::tempdir().unwrap();
    write(&install.path().join("plug-skill/SKILL.md"), "# p\n");
    write(&install.path().join("plug-skill/a.md"), "A\n");
    s.catalog
        .enable_plugin(
            &t,
            "plug",
            install.path(),
            &[contribution("plug-skill", false)],
        )
        .await
        .unwrap();
    let id = s
        .store
        .find_skill_by_slug(&t, "plug-skill")
        .await
        .unwrap()
        .unwrap()
        .id;
    let read_only = |err: Error| {
        assert!(
            matches!(
                err,
                Error::Invalid {
                    violation: Violation::ReadOnlyPluginSkill,
                    ..
                }
            ),
            "{err:?}"
        );
    };
    let content = SkillUpdate {
        content: Some("# mine\n".into()),
        ..SkillUpdate::default()
    };
    read_only(s.catalog.edit(&t, &id, content).await.unwrap_err());
    read_only(s.catalog.set_enabled(&t, &id, false).await.unwrap_err());
    read_only(
        s.catalog
            .add_file(&t, &id, NewSkillFile::new("x.md", "x"))
            .await
            .unwrap_err(),
    );
    read_only(
        s.catalog
            .update_file(&t, &id, "a.md", SkillFileUpdate::content("x"))
            .await
            .unwrap_err(),
    );
    read_only(s.catalog.remove_file(&t, &id, "a.md").await.unwrap_err());
    read_only(s.catalog.delete(&t, &id).await.unwrap_err());
    let stored = s.store.find_skill_by_id(&t, &id).await.unwrap().unwrap();
    assert_eq!(stored.content, "# p\n");
    assert!(stored.enabled);
}

#[tokio::test]
async fn sync_status_writes_nothing_and_sync_skill_touches_one_entry() {
    let s = setup();
    let t = tenant();
    let a = skill(&s.store, "alpha").await;
    let b = skill(&s.store, "beta").await;
    for id in [&a.id, &b.id] {
        s.store
            .create_assignment(&t, NewAssignment::agent(id, "ops-1"))
            .await
            .unwrap();
    }
    s.ops1.insert("gone", MemoryEntry::Dir(BTreeMap::new()));
    let before = s.ops1.entries();
    let agent = AgentRef::new("ops-1", Some("ops"));

    let status = s.catalog.sync_status(&t, &agent).await.unwrap().unwrap();
    assert_eq!(status.write, ["alpha", "beta"]);
    assert_eq!(status.remove, ["gone"]);
    assert!(!status.in_sync());
    assert_eq!(s.ops1.entries(), before, "check-only");
    assert!(!s.cache.path().join("cache").exists(), "not even the cache");

    let outcome = s.catalog.sync_skill(&t, &agent, &a.id).await.unwrap();
    assert_eq!(outcome.report.unwrap().synced, ["alpha"]);
    assert_eq!(slugs(&s.ops1), ["alpha", "gone"], "beta and gone untouched");
    assert!(
        s.cached(&a.id).join("a.md").is_file(),
        "written through the cache"
    );

    s.catalog.sandbox_created(&t, &agent).await.unwrap();
    let status = s.catalog.sync_status(&t, &agent).await.unwrap().unwrap();
    assert!(status.in_sync(), "{status:?}");
    assert_eq!(status.unchanged, ["alpha", "beta"]);
}

#[tokio::test]
async fn sync_reads_through_the_cache() {
    let s = setup();
    let t = tenant();
    let a = skill(&s.store, "alpha").await;
    s.store
        .create_assignment(&t, NewAssignment::agent(&a.id, "ops-1"))
        .await
        .unwrap();
    // The cache root is a plain file: a sync that goes through the cache cannot write.
    fs::write(s.cache.path().join("cache"), "not a directory").unwrap();
    let agent = AgentRef::new("ops-1", Some("ops"));
    let outcome = s.catalog.sandbox_created(&t, &agent).await.unwrap();
    let report = outcome.report.unwrap();
    assert!(
        report.synced.is_empty() && report.errors.len() == 1,
        "{report:?}"
    );
    fs::remove_file(s.cache.path().join("cache")).unwrap();
    let outcome = s.catalog.sandbox_created(&t, &agent).await.unwrap();
    assert_eq!(outcome.report.unwrap().synced, ["alpha"]);
    assert!(s.cached(&a.id).join("SKILL.md").is_file());
}

#[tokio::test]
async fn import_materializes_and_eager_materialization_writes_enabled_skills() {
    let s = setup();
    let t = tenant();
    let from = InMemorySkillStore::new();
    let source = skill(&from, "imported").await;
    let document = portable::export(&from, &t, &source.id, ExportMetadata::default())
        .await
        .unwrap();
    let options = ImportOptions::on_clash(OnClash::Overwrite);
    let (imported, _) = s
        .catalog
        .import(&t, document.clone(), &options)
        .await
        .unwrap();
    assert_eq!(imported.action, ImportAction::Created);
    assert!(s.cached(&imported.skill.id).join("a.md").is_file());

    // An overwrite reaches the agents assigned the skill.
    s.catalog
        .assign(&t, NewAssignment::global(&imported.skill.id))
        .await
        .unwrap();
    let mut changed = document;
    changed.skill.content = "# imported v2\n".into();
    let (again, syncs) = s.catalog.import(&t, changed, &options).await.unwrap();
    assert_eq!(again.action, ImportAction::Overwritten);
    assert_eq!(syncs.len(), 2);
    assert_eq!(
        files(&s.solo, "imported").unwrap()["SKILL.md"],
        b"# imported v2\n"
    );

    let on = skill(&s.store, "on").await;
    let off = skill(&s.store, "off").await;
    s.store
        .update_skill(
            &t,
            &off.id,
            SkillUpdate {
                enabled: Some(false),
                ..SkillUpdate::default()
            },
        )
        .await
        .unwrap();
    let report = s.catalog.materialize_all(&t).await.unwrap();
    assert_eq!(report.written, [on.id.as_str()]);
    assert_eq!(report.unchanged, [imported.skill.id.as_str()]);
    assert!(s.cached(&on.id).is_dir() && !s.cached(&off.id).exists());
}

#[tokio::test]
async fn plugin_operations_reach_the_sandboxes_and_the_cache() {
    let s = setup();
    let t = tenant();
    let install = tempfile::tempdir().unwrap();
    let dir = install.path();
    for id in ["one", "two", "taken"] {
        write(&dir.join(format!("{id}/SKILL.md")), &format!("# {id}\n"));
    }
    let admin = skill(&s.store, "taken").await;
    let contributions = [
        contribution("one", true),
        contribution("two", true),
        contribution("taken", true),
    ];

    // A clash is per slug: the admin skill keeps `taken`, the rest enable and reach everyone.
    let enabled = s
        .catalog
        .enable_plugin(&t, "plug", dir, &contributions)
        .await
        .unwrap();
    assert_eq!(enabled.report.clashes, ["taken"]);
    assert_eq!(enabled.report.created, ["one", "two"]);
    assert_eq!(enabled.syncs.len(), 2);
    assert_eq!(slugs(&s.ops1), ["one", "two"]);
    assert_eq!(slugs(&s.solo), ["one", "two"]);
    let taken = s
        .store
        .find_skill_by_slug(&t, "taken")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(taken.id, admin.id);
    let one = s
        .store
        .find_skill_by_slug(&t, "one")
        .await
        .unwrap()
        .unwrap();
    let two = s
        .store
        .find_skill_by_slug(&t, "two")
        .await
        .unwrap()
        .unwrap();
    assert!(s.cached(&one.id).is_dir() && s.cached(&two.id).is_dir());

    // Upgrade: `one` changes, `two` is no longer contributed.
    write(&dir.join("one/SKILL.md"), "# one v2\n");
    let upgraded = s
        .catalog
        .upgrade_plugin(&t, "plug", dir, &contributions[..1])
        .await
        .unwrap();
    assert_eq!(upgraded.report.changed, ["one"]);
    assert_eq!(upgraded.report.removed, ["two"]);
    assert_eq!(files(&s.solo, "one").unwrap()["SKILL.md"], b"# one v2\n");
    assert_eq!(slugs(&s.ops1), ["one"]);
    assert_eq!(
        fs::read(s.cached(&one.id).join("SKILL.md")).unwrap(),
        b"# one v2\n"
    );
    assert!(!s.cached(&two.id).exists());

    // Disable: gone from every sandbox, assignments kept; enabling brings it back.
    let disabled = s.catalog.disable_plugin(&t, "plug").await.unwrap();
    assert_eq!(disabled.report.changed, ["one"]);
    assert!(slugs(&s.ops1).is_empty() && slugs(&s.solo).is_empty());
    s.catalog
        .enable_plugin(&t, "plug", dir, &contributions[..1])
        .await
        .unwrap();
    assert_eq!(slugs(&s.solo), ["one"]);

    // Uninstall: deleted, dropped from the cache and every sandbox.
    let gone = s.catalog.uninstall_plugin(&t, "plug").await.unwrap();
    assert_eq!(gone.report.removed, ["one"]);
    assert!(slugs(&s.ops1).is_empty() && slugs(&s.solo).is_empty());
    assert!(!s.cached(&one.id).exists());
}
