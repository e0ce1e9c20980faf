//! Materialization, sandbox sync and the sync triggers, including attacks on the sandbox's
//! skills directory.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::BTreeMap;
use std::fs;
use std::os::unix::fs::symlink;
use std::path::Path;
use std::sync::Arc;

use async_trait::async_trait;
use skills::catalog::tree::{DirSnapshot, EntryKind};
use skills::catalog::{
    AgentDirectory, AgentRef, Catalog, Error, InMemorySandboxFs, LocalSandboxFs, Materializer,
    MemoryEntry, SandboxFs, sync_agent,
};
use skills::store::in_memory::InMemorySkillStore;
use skills::store::{
    AssignmentUpdate, NewAssignment, NewSkill, SkillFileUpdate, SkillRecord, SkillStore,
    SkillUpdate, TenantId,
};

fn tenant() -> TenantId {
    TenantId::new("acme")
}

async fn skill(store: &InMemorySkillStore, slug: &str) -> SkillRecord {
    let new = NewSkill::new(slug, slug, format!("# {slug}\n"))
        .with_file("scripts/run.sh", "echo run\n")
        .with_file("references/guide.md", "# Guide\n");
    store.create_skill(&tenant(), new).await.unwrap()
}

fn read(path: impl AsRef<Path>) -> String {
    fs::read_to_string(path).unwrap()
}

#[tokio::test]
async fn materialize_is_lazy_checks_checksums_and_rewrites_stale_caches() {
    let store = InMemorySkillStore::new();
    let s = skill(&store, "cached").await;
    let dir = tempfile::tempdir().unwrap();
    let cache = Materializer::new(dir.path().join("cache"));

    let first = cache.materialize(&store, &tenant(), &s.id).await.unwrap();
    assert!(first.written);
    assert_eq!(first.path, dir.path().join("cache").join(&s.id));
    assert_eq!(read(first.path.join("SKILL.md")), "# cached\n");
    assert_eq!(read(first.path.join("scripts/run.sh")), "echo run\n");
    assert!(
        !cache
            .materialize(&store, &tenant(), &s.id)
            .await
            .unwrap()
            .written
    );

    // A partial write or a hand edit: rewritten from the store.
    fs::write(first.path.join("references/guide.md"), "tampered").unwrap();
    assert!(
        cache
            .materialize(&store, &tenant(), &s.id)
            .await
            .unwrap()
            .written
    );
    assert_eq!(read(first.path.join("references/guide.md")), "# Guide\n");
    // An extra file: rewritten, so the cache holds exactly the skill.
    fs::write(first.path.join("extra.txt"), "x").unwrap();
    assert!(
        cache
            .materialize(&store, &tenant(), &s.id)
            .await
            .unwrap()
            .written
    );
    assert!(!first.path.join("extra.txt").exists());
    // A missing file.
    fs::remove_file(first.path.join("scripts/run.sh")).unwrap();
    assert!(
        cache
            .materialize(&store, &tenant(), &s.id)
            .await
            .unwrap()
            .written
    );
    // The store changed: stale.
    let file = store
        .find_skill_file(&tenant(), &s.id, "scripts/run.sh")
        .await
        .unwrap()
        .unwrap();
    store
        .update_skill_file(&tenant(), &file.id, SkillFileUpdate::content("echo v2\n"))
        .await
        .unwrap();
    assert!(
        cache
            .materialize(&store, &tenant(), &s.id)
            .await
            .unwrap()
            .written
    );
    assert_eq!(read(first.path.join("scripts/run.sh")), "echo v2\n");
    // No temporary directories are left behind.
    let names: Vec<String> = fs::read_dir(dir.path().join("cache"))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    assert_eq!(names, std::slice::from_ref(&s.id));

    assert!(cache.invalidate(&s.id).unwrap());
    assert!(!first.path.exists());
    assert!(!cache.invalidate(&s.id).unwrap());
    assert!(matches!(
        cache.materialize(&store, &tenant(), "../escape").await,
        Err(Error::UnsafePath { .. })
    ));
    assert!(matches!(
        cache.materialize(&store, &tenant(), "missing").await,
        Err(Error::Store(skills::store::Error::NotFound { .. }))
    ));
}

#[tokio::test]
async fn materialize_replaces_a_planted_symlink_without_following_it() {
    let store = InMemorySkillStore::new();
    let s = skill(&store, "linked").await;
    let dir = tempfile::tempdir().unwrap();
    let outside = dir.path().join("outside");
    fs::create_dir(&outside).unwrap();
    fs::write(outside.join("keep.txt"), "keep").unwrap();
    let root = dir.path().join("cache");
    fs::create_dir(&root).unwrap();
    symlink(&outside, root.join(&s.id)).unwrap();

    let cache = Materializer::new(&root);
    assert!(
        cache
            .materialize(&store, &tenant(), &s.id)
            .await
            .unwrap()
            .written
    );
    assert!(
        !fs::symlink_metadata(root.join(&s.id))
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert_eq!(read(outside.join("keep.txt")), "keep");
    assert!(
        !outside.join("SKILL.md").exists(),
        "wrote through the symlink"
    );
}

#[tokio::test]
async fn sync_writes_assigned_removes_unassigned_and_skips_fresh() {
    let store = InMemorySkillStore::new();
    let t = tenant();
    let a = skill(&store, "alpha").await;
    let b = skill(&store, "beta").await;
    let c = skill(&store, "gamma").await;
    store
        .create_assignment(&t, NewAssignment::global(&a.id))
        .await
        .unwrap();
    store
        .create_assignment(&t, NewAssignment::team(&b.id, "ops"))
        .await
        .unwrap();
    let direct = store
        .create_assignment(&t, NewAssignment::agent(&c.id, "agent-1"))
        .await
        .unwrap();

    let home = tempfile::tempdir().unwrap();
    let root = home.path().join(".skills");
    let sandbox = LocalSandboxFs::new(&root);
    let report = sync_agent(&store, &t, "agent-1", Some("ops"), &sandbox)
        .await
        .unwrap();
    assert_eq!(report.synced, ["alpha", "beta", "gamma"]);
    assert!(report.removed.is_empty() && report.errors.is_empty());
    assert_eq!(read(root.join("beta/scripts/run.sh")), "echo run\n");

    let again = sync_agent(&store, &t, "agent-1", Some("ops"), &sandbox)
        .await
        .unwrap();
    assert_eq!(again.unchanged, ["alpha", "beta", "gamma"]);
    assert!(again.synced.is_empty());

    // Stale: a changed file in the sandbox is rewritten.
    fs::write(root.join("alpha/SKILL.md"), "edited by the agent").unwrap();
    let stale = sync_agent(&store, &t, "agent-1", Some("ops"), &sandbox)
        .await
        .unwrap();
    assert_eq!(stale.synced, ["alpha"]);
    assert_eq!(read(root.join("alpha/SKILL.md")), "# alpha\n");

    // Disabling the assignment, then the skill, removes their directories.
    store
        .update_assignment(
            &t,
            &direct.id,
            AssignmentUpdate {
                enabled: Some(false),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    let disabled = SkillUpdate {
        enabled: Some(false),
        ..Default::default()
    };
    store.update_skill(&t, &b.id, disabled).await.unwrap();
    let removed = sync_agent(&store, &t, "agent-1", Some("ops"), &sandbox)
        .await
        .unwrap();
    assert_eq!(removed.removed, ["beta", "gamma"]);
    assert_eq!(removed.unchanged, ["alpha"]);
    assert!(!root.join("beta").exists() && !root.join("gamma").exists());
    // Leaving the team: only the global skill stays.
    let other = sync_agent(&store, &t, "agent-2", None, &sandbox)
        .await
        .unwrap();
    assert_eq!(other.unchanged, ["alpha"]);
}

#[tokio::test]
async fn sync_never_follows_symlinks_planted_in_the_sandbox() {
    let store = InMemorySkillStore::new();
    let t = tenant();
    let assigned = skill(&store, "deploy").await;
    store
        .create_assignment(&t, NewAssignment::global(&assigned.id))
        .await
        .unwrap();

    let dir = tempfile::tempdir().unwrap();
    let outside = dir.path().join("host-secrets");
    fs::create_dir(&outside).unwrap();
    fs::write(outside.join("id_rsa"), "PRIVATE").unwrap();
    let root = dir.path().join("home/.skills");
    fs::create_dir_all(&root).unwrap();
    // The assigned slug is a symlink to a host directory.
    symlink(&outside, root.join("deploy")).unwrap();
    // An unassigned skill-looking symlink, and one inside a skill-looking directory.
    symlink(&outside, root.join("stale-skill")).unwrap();
    fs::create_dir(root.join("old-skill")).unwrap();
    symlink(outside.join("id_rsa"), root.join("old-skill/SKILL.md")).unwrap();
    // A leftover of a crashed write, and a file the host put there.
    fs::create_dir(root.join(".tmp-deploy-123")).unwrap();
    fs::write(root.join("README.txt"), "host notes").unwrap();

    let report = sync_agent(&store, &t, "agent", None, &LocalSandboxFs::new(&root))
        .await
        .unwrap();
    assert_eq!(report.synced, ["deploy"]);
    assert_eq!(report.removed, ["old-skill", "stale-skill"]);
    assert!(report.errors.is_empty(), "{:?}", report.errors);
    let deploy = fs::symlink_metadata(root.join("deploy")).unwrap();
    assert!(deploy.is_dir() && !deploy.file_type().is_symlink());
    assert_eq!(read(root.join("deploy/SKILL.md")), "# deploy\n");
    // Nothing outside was written or deleted.
    let outside_names: Vec<String> = fs::read_dir(&outside)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    assert_eq!(outside_names, ["id_rsa"]);
    assert_eq!(read(outside.join("id_rsa")), "PRIVATE");
    assert!(!root.join(".tmp-deploy-123").exists());
    assert_eq!(read(root.join("README.txt")), "host notes");

    // A symlinked assigned skill whose target holds a matching copy is still rewritten: a
    // snapshot never looks through a link.
    fs::remove_dir_all(root.join("deploy")).unwrap();
    let copy = dir.path().join("copy");
    fs::create_dir(&copy).unwrap();
    fs::write(copy.join("SKILL.md"), "# deploy\n").unwrap();
    symlink(&copy, root.join("deploy")).unwrap();
    let report = sync_agent(&store, &t, "agent", None, &LocalSandboxFs::new(&root))
        .await
        .unwrap();
    assert_eq!(report.synced, ["deploy"]);
}

#[tokio::test]
async fn a_symlinked_skills_directory_is_refused() {
    let store = InMemorySkillStore::new();
    let t = tenant();
    let s = skill(&store, "x").await;
    store
        .create_assignment(&t, NewAssignment::global(&s.id))
        .await
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let outside = dir.path().join("outside");
    fs::create_dir(&outside).unwrap();
    symlink(&outside, dir.path().join(".skills")).unwrap();
    let result = sync_agent(
        &store,
        &t,
        "a",
        None,
        &LocalSandboxFs::new(dir.path().join(".skills")),
    )
    .await;
    assert!(
        matches!(result, Err(Error::UnsafePath { .. })),
        "{result:?}"
    );
    assert_eq!(fs::read_dir(&outside).unwrap().count(), 0);
}

/// A sandbox that fails to write one slug.
struct Flaky(InMemorySandboxFs, &'static str);

#[async_trait]
impl SandboxFs for Flaky {
    async fn list(&self) -> skills::catalog::Result<Vec<(String, EntryKind)>> {
        self.0.list().await
    }
    async fn snapshot(&self, name: &str) -> skills::catalog::Result<Option<DirSnapshot>> {
        self.0.snapshot(name).await
    }
    async fn replace(
        &self,
        name: &str,
        files: &[(String, Vec<u8>)],
    ) -> skills::catalog::Result<()> {
        if name == self.1 {
            return Err(Error::Host("disk full".into()));
        }
        self.0.replace(name, files).await
    }
    async fn remove(&self, name: &str) -> skills::catalog::Result<bool> {
        self.0.remove(name).await
    }
}

#[tokio::test]
async fn one_bad_skill_is_reported_and_the_rest_still_sync() {
    let store = InMemorySkillStore::new();
    let t = tenant();
    for slug in ["a", "b", "c"] {
        let s = skill(&store, slug).await;
        store
            .create_assignment(&t, NewAssignment::global(&s.id))
            .await
            .unwrap();
    }
    let sandbox = Flaky(InMemorySandboxFs::new(), "b");
    let report = sync_agent(&store, &t, "agent", None, &sandbox)
        .await
        .unwrap();
    assert_eq!(report.synced, ["a", "c"]);
    assert_eq!(report.errors, ["b: disk full"]);
}

#[tokio::test]
async fn in_memory_sandbox_sync_matches_the_local_one() {
    let store = InMemorySkillStore::new();
    let t = tenant();
    let s = skill(&store, "mem").await;
    store
        .create_assignment(&t, NewAssignment::global(&s.id))
        .await
        .unwrap();
    let sandbox = InMemorySandboxFs::new();
    sandbox.insert("gone", MemoryEntry::Dir(BTreeMap::new()));
    sandbox.insert("mem", MemoryEntry::Symlink("/etc".into()));
    sandbox.insert("notes.txt", MemoryEntry::File(b"keep".to_vec()));
    let report = sync_agent(&store, &t, "agent", None, &sandbox)
        .await
        .unwrap();
    assert_eq!(report.synced, ["mem"]);
    assert_eq!(report.removed, ["gone"]);
    let entries = sandbox.entries();
    let Some(MemoryEntry::Dir(files)) = entries.get("mem") else {
        panic!("mem is not a directory: {entries:?}");
    };
    let paths: Vec<&str> = files.keys().map(String::as_str).collect();
    assert_eq!(paths, ["SKILL.md", "references/guide.md", "scripts/run.sh"]);
    assert!(entries.contains_key("notes.txt"));
}

/// Three agents: two in team `ops` (one without a running sandbox), one alone.
struct Agents {
    sandboxes: BTreeMap<String, Arc<InMemorySandboxFs>>,
}

#[async_trait]
impl AgentDirectory for Agents {
    async fn agents(&self, _tenant: &TenantId) -> skills::catalog::Result<Vec<AgentRef>> {
        Ok(vec![
            AgentRef::new("ops-1", Some("ops")),
            AgentRef::new("ops-2", Some("ops")),
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

fn slugs(sandbox: &InMemorySandboxFs) -> Vec<String> {
    sandbox.entries().into_keys().collect()
}

#[tokio::test]
async fn triggers_sync_exactly_the_agents_a_change_reaches() {
    let store = Arc::new(InMemorySkillStore::new());
    let ops1 = Arc::new(InMemorySandboxFs::new());
    let solo = Arc::new(InMemorySandboxFs::new());
    let agents = Agents {
        sandboxes: BTreeMap::from([
            ("ops-1".into(), Arc::clone(&ops1)),
            ("solo".into(), Arc::clone(&solo)),
        ]),
    };
    let dir = tempfile::tempdir().unwrap();
    let catalog = Catalog::new(store.clone(), Arc::new(agents))
        .with_cache(Materializer::new(dir.path().join("cache")));
    let t = tenant();
    let team_skill = skill(&store, "team-skill").await;
    let global_skill = skill(&store, "global-skill").await;

    // Trigger 4: team assignment reaches ops-1 and ops-2 (deferred: no sandbox).
    let (team_assignment, syncs) = catalog
        .assign(&t, NewAssignment::team(&team_skill.id, "ops"))
        .await
        .unwrap();
    let reached: Vec<&str> = syncs.iter().map(|s| s.agent.agent_id.as_str()).collect();
    assert_eq!(reached, ["ops-1", "ops-2"]);
    assert!(
        syncs[1].report.is_none() && syncs[1].error.is_none(),
        "ops-2 is deferred"
    );
    assert_eq!(slugs(&ops1), ["team-skill"]);
    assert!(slugs(&solo).is_empty());
    assert!(
        dir.path()
            .join("cache")
            .join(&team_skill.id)
            .join("SKILL.md")
            .is_file()
    );

    // Scope ids must name a known agent or team.
    for unknown in [
        NewAssignment::agent(&team_skill.id, "ghost"),
        NewAssignment::team(&team_skill.id, "no-such-team"),
    ] {
        let err = catalog.assign(&t, unknown).await.unwrap_err();
        assert!(
            matches!(err, Error::Invalid { ref field, violation: skills::store::Violation::UnknownScopeTarget } if field == "scope_id"),
            "{err:?}"
        );
    }

    // Global reaches everyone.
    let (_, syncs) = catalog
        .assign(&t, NewAssignment::global(&global_skill.id))
        .await
        .unwrap();
    assert_eq!(syncs.len(), 3);
    assert_eq!(slugs(&solo), ["global-skill"]);

    // Trigger 3: an edit re-syncs every agent that has the skill.
    let update = SkillUpdate {
        content: Some("# team skill v2\n".into()),
        ..Default::default()
    };
    let (_, syncs) = catalog.edit(&t, &team_skill.id, update).await.unwrap();
    assert_eq!(syncs[0].report.as_ref().unwrap().synced, ["team-skill"]);
    let Some(MemoryEntry::Dir(files)) = ops1.entries().remove("team-skill") else {
        panic!("team-skill missing")
    };
    assert_eq!(files["SKILL.md"], b"# team skill v2\n");
    let cached = dir
        .path()
        .join("cache")
        .join(&team_skill.id)
        .join("SKILL.md");
    assert_eq!(
        read(cached),
        "# team skill v2\n",
        "the cache was re-materialized"
    );

    // Trigger 2: unassigning removes it.
    let syncs = catalog.unassign(&t, &team_assignment.id).await.unwrap();
    assert_eq!(syncs[0].report.as_ref().unwrap().removed, ["team-skill"]);
    assert_eq!(slugs(&ops1), ["global-skill"]);

    // Trigger 5: a new sandbox gets everything assigned to it.
    let fresh = Arc::new(InMemorySandboxFs::new());
    let agents = Agents {
        sandboxes: BTreeMap::from([("ops-2".into(), Arc::clone(&fresh))]),
    };
    let catalog2 = Catalog::new(store.clone(), Arc::new(agents));
    let outcome = catalog2
        .sandbox_created(&t, &AgentRef::new("ops-2", Some("ops")))
        .await
        .unwrap();
    assert_eq!(outcome.report.unwrap().synced, ["global-skill"]);

    // Delete cascades and cleans every sandbox.
    let syncs = catalog.delete(&t, &global_skill.id).await.unwrap();
    assert_eq!(syncs.len(), 3);
    assert!(slugs(&ops1).is_empty() && slugs(&solo).is_empty());
    assert!(!dir.path().join("cache").join(&global_skill.id).exists());
}
