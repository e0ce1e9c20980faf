//! The [`SkillStore`] contract.

use futures::future::join_all;

use super::{assert_invalid, tenant};
use crate::error::{Error, Violation};
use crate::skills::{
    AssignmentFilter, AssignmentScope, AssignmentUpdate, NewAssignment, NewSkill, NewSkillFile,
    SkillFileUpdate, SkillFilter, SkillSourceKind, SkillStore, SkillUpdate,
};
use crate::validate::checksum;

mod holds;

pub use holds::operator_holds;

fn skill(slug: &str) -> NewSkill {
    NewSkill::new(format!("Skill {slug}"), slug, format!("# {slug}\n"))
}

/// Runs every skill-store contract.
pub async fn run_all(store: &dyn SkillStore) {
    create_and_find(store).await;
    create_with_files_is_atomic(store).await;
    validation_rules(store).await;
    slug_uniqueness(store).await;
    list_filters_and_order(store).await;
    update_skill(store).await;
    file_crud(store).await;
    file_limits(store).await;
    assignment_crud_and_uniqueness(store).await;
    assignments_for_agent(store).await;
    cascades(store).await;
    bulk_queries(store).await;
    tenant_isolation(store).await;
    concurrent_writers(store).await;
    trust_levels(store).await;
    operator_holds(store).await;
    super::skill_batches::run_all(store).await;
}

/// A skill's trust level round-trips, updates (and clears), and only the four levels pass.
pub async fn trust_levels(store: &dyn SkillStore) {
    let t = tenant();
    let unknown = store.create_skill(&t, skill("trust-none")).await.unwrap();
    assert_eq!(unknown.trust_level, None, "no level given: unknown");
    let mut new = skill("trust-set");
    new.trust_level = Some("community".into());
    let set = store.create_skill(&t, new).await.unwrap();
    assert_eq!(set.trust_level.as_deref(), Some("community"));
    let found = store.find_skill_by_id(&t, &set.id).await.unwrap().unwrap();
    assert_eq!(found.trust_level.as_deref(), Some("community"));
    let raised = store
        .update_skill(
            &t,
            &set.id,
            SkillUpdate {
                trust_level: Some(Some("verified".into())),
                ..SkillUpdate::default()
            },
        )
        .await
        .unwrap()
        .unwrap();
    assert_eq!(raised.trust_level.as_deref(), Some("verified"));
    let cleared = store
        .update_skill(
            &t,
            &set.id,
            SkillUpdate {
                trust_level: Some(None),
                ..SkillUpdate::default()
            },
        )
        .await
        .unwrap()
        .unwrap();
    assert_eq!(cleared.trust_level, None);
    for bad in ["admin", "CORE", "", "root"] {
        let mut new = skill("trust-bad");
        new.trust_level = Some(bad.into());
        assert_invalid(store.create_skill(&t, new).await, "trust_level", |v| {
            *v == Violation::UnknownTrustLevel
        });
        let update = SkillUpdate {
            trust_level: Some(Some(bad.into())),
            ..SkillUpdate::default()
        };
        assert_invalid(
            store.update_skill(&t, &set.id, update).await,
            "trust_level",
            |v| *v == Violation::UnknownTrustLevel,
        );
    }
}

/// Create, then find by id and slug; the store computes checksum, defaults and timestamps.
pub async fn create_and_find(store: &dyn SkillStore) {
    let t = tenant();
    let mut new = skill("alpha");
    new.description = Some("Does alpha things".into());
    new.tags = vec!["x".into(), "y-2".into()];
    let created = store.create_skill(&t, new).await.unwrap();
    assert_eq!(created.slug, "alpha");
    assert_eq!(created.tenant, t);
    assert_eq!(created.category, "general", "default category");
    assert_eq!(
        created.source_kind,
        SkillSourceKind::Admin,
        "default source"
    );
    assert!(created.enabled, "enabled by default");
    assert!(!created.is_directory);
    assert_eq!(created.checksum, checksum("# alpha\n"));
    assert!(!created.id.is_empty());
    assert_eq!(created.created_at, created.updated_at);
    let by_id = store.find_skill_by_id(&t, &created.id).await.unwrap();
    assert_eq!(by_id.as_ref(), Some(&created));
    let by_slug = store.find_skill_by_slug(&t, "alpha").await.unwrap();
    assert_eq!(by_slug.as_ref(), Some(&created));
    assert_eq!(store.find_skill_by_slug(&t, "ALPHA").await.unwrap(), None);
    assert_eq!(store.find_skill_by_id(&t, "missing").await.unwrap(), None);
}

/// A skill and its files land together; a bad file refuses the whole skill.
pub async fn create_with_files_is_atomic(store: &dyn SkillStore) {
    let t = tenant();
    let new = skill("dir")
        .with_file("scripts/run.sh", "echo hi\n")
        .with_file("references/a.md", "# A\n");
    let created = store.create_skill(&t, new).await.unwrap();
    assert!(created.is_directory);
    let files = store.list_skill_files(&t, &created.id).await.unwrap();
    let paths: Vec<&str> = files.iter().map(|f| f.relative_path.as_str()).collect();
    assert_eq!(
        paths,
        ["references/a.md", "scripts/run.sh"],
        "files ordered by path"
    );
    let run = &files[1];
    assert_eq!(run.size_bytes, 8);
    assert_eq!(run.checksum, checksum("echo hi\n"));
    assert_eq!(
        run.content_type,
        skills_core::files::content_type_for("run.sh")
    );
    assert_eq!(run.skill_id, created.id);

    let bad = skill("dir-bad")
        .with_file("ok.md", "fine")
        .with_file("../escape.md", "nope");
    assert_invalid(store.create_skill(&t, bad).await, "files[1].path", |v| {
        matches!(v, Violation::Path(_))
    });
    assert_eq!(store.find_skill_by_slug(&t, "dir-bad").await.unwrap(), None);
    assert!(store.is_slug_available(&t, "dir-bad", None).await.unwrap());
}

/// Seed 002 section 6.3 and 15.9 rules, each refused with its field and nothing written.
pub async fn validation_rules(store: &dyn SkillStore) {
    let t = tenant();
    let cases: Vec<(NewSkill, &str, fn(&Violation) -> bool)> = vec![
        (skill("Bad"), "slug", |v| *v == Violation::SlugFormat),
        (skill("1bad"), "slug", |v| *v == Violation::SlugFormat),
        (skill("bad_slug"), "slug", |v| *v == Violation::SlugFormat),
        (skill("../x"), "slug", |v| *v == Violation::SlugFormat),
        (skill(&"a".repeat(65)), "slug", |v| {
            *v == Violation::SlugTooLong { chars: 65 }
        }),
        (NewSkill::new("", "empty-name", "x"), "name", |v| {
            *v == Violation::NameLength { chars: 0 }
        }),
        (
            NewSkill::new("n".repeat(129), "long-name", "x"),
            "name",
            |v| *v == Violation::NameLength { chars: 129 },
        ),
        (NewSkill::new("Empty", "empty", ""), "content", |v| {
            *v == Violation::Empty
        }),
        (NewSkill::new("Nul", "nul", "a\0b"), "content", |v| {
            *v == Violation::Binary
        }),
        (
            NewSkill {
                category: Some("gaming".into()),
                ..skill("cat")
            },
            "category",
            |v| *v == Violation::UnknownCategory,
        ),
        (
            NewSkill {
                tags: vec!["ok".into(), "Not-Ok".into()],
                ..skill("tag")
            },
            "tags[1]",
            |v| *v == Violation::TagFormat,
        ),
        (
            NewSkill {
                tags: (0..21).map(|i| format!("t{i}")).collect(),
                ..skill("tags")
            },
            "tags",
            |v| *v == Violation::TooManyTags { count: 21 },
        ),
        (
            skill("abs").with_file("/etc/passwd", "x"),
            "files[0].path",
            |v| matches!(v, Violation::Path(_)),
        ),
        (
            skill("dots").with_file("a/../../b", "x"),
            "files[0].path",
            |v| matches!(v, Violation::Path(_)),
        ),
        (
            skill("long-path").with_file(format!("{}.md", "p".repeat(254)), "x"),
            "files[0].path",
            |v| matches!(v, Violation::Path(_)),
        ),
        (
            skill("reserved").with_file("SKILL.md", "x"),
            "files[0].path",
            |v| *v == Violation::ReservedPath,
        ),
        (
            skill("dup").with_file("a.md", "x").with_file("a.md", "y"),
            "files[1].path",
            |v| *v == Violation::DuplicatePath,
        ),
        (
            skill("bin").with_file("a.bin", "\0\u{1}"),
            "files[0].content",
            |v| *v == Violation::Binary,
        ),
        (
            skill("big").with_file("big.md", "x".repeat(100 * 1024 + 1)),
            "files[0].content",
            |v| matches!(v, Violation::FileTooLarge { .. }),
        ),
        (
            (0..11).fold(skill("total"), |s, i| {
                s.with_file(format!("f{i}.md"), "x".repeat(100 * 1024))
            }),
            "files",
            |v| matches!(v, Violation::SkillTooLarge { .. }),
        ),
    ];
    for (new, field, check) in cases {
        let slug = new.slug.clone();
        assert_invalid(store.create_skill(&t, new).await, field, check);
        assert!(
            store.is_slug_available(&t, &slug, None).await.unwrap(),
            "a refused skill `{slug}` left a record"
        );
    }
    // Limits are inclusive.
    let at_limit = skill("at-limit").with_file("max.md", "x".repeat(100 * 1024));
    store.create_skill(&t, at_limit).await.unwrap();
    assert!(
        store
            .list_skills(&t, &SkillFilter::default())
            .await
            .unwrap()
            .iter()
            .all(|s| s.slug == "at-limit"),
        "only the valid skill exists"
    );
    let s = store.create_skill(&t, skill("scoped")).await.unwrap();
    let mut global_with_id = NewAssignment::global(&s.id);
    global_with_id.scope_id = Some("x".into());
    assert_invalid(
        store.create_assignment(&t, global_with_id).await,
        "scope_id",
        |v| *v == Violation::ScopeIdForbidden,
    );
    let mut team_without = NewAssignment::team(&s.id, "t");
    team_without.scope_id = None;
    assert_invalid(
        store.create_assignment(&t, team_without).await,
        "scope_id",
        |v| *v == Violation::ScopeIdRequired,
    );
    let filter = AssignmentFilter::default();
    assert!(
        store
            .list_assignments(&t, &filter)
            .await
            .unwrap()
            .is_empty()
    );
}

/// Slugs are unique per tenant, free again after delete, and `is_slug_available` honours
/// `exclude_id`.
pub async fn slug_uniqueness(store: &dyn SkillStore) {
    let t = tenant();
    let first = store.create_skill(&t, skill("unique")).await.unwrap();
    match store.create_skill(&t, skill("unique")).await {
        Err(Error::Conflict { key, .. }) => assert_eq!(key, "unique"),
        other => panic!("duplicate slug must conflict, got {other:?}"),
    }
    assert!(!store.is_slug_available(&t, "unique", None).await.unwrap());
    assert!(
        store
            .is_slug_available(&t, "unique", Some(&first.id))
            .await
            .unwrap()
    );
    assert!(store.is_slug_available(&t, "other", None).await.unwrap());
    // The same slug in another tenant is independent.
    store
        .create_skill(&tenant(), skill("unique"))
        .await
        .unwrap();
    assert!(store.delete_skill(&t, &first.id).await.unwrap());
    assert!(store.is_slug_available(&t, "unique", None).await.unwrap());
    store.create_skill(&t, skill("unique")).await.unwrap();
}

/// Filters of seed 002 section 6.1; lists ordered by slug.
pub async fn list_filters_and_order(store: &dyn SkillStore) {
    let t = tenant();
    let mut a = skill("zeta");
    a.category = Some("ops".into());
    a.tags = vec!["deploy".into(), "k8s".into()];
    a.description = Some("Rolls out Kubernetes RELEASES".into());
    let mut b = skill("alpha");
    b.source_kind = Some(SkillSourceKind::Plugin);
    b.plugin_id = Some("plug".into());
    b.tags = vec!["deploy".into()];
    let mut c = skill("mid");
    c.enabled = Some(false);
    c.name = "Ünïcode Writer".into();
    for s in [a, b, c] {
        store.create_skill(&t, s).await.unwrap();
    }
    let t = &t;
    let slugs = |filter: SkillFilter| async move {
        let t = t;
        store
            .list_skills(t, &filter)
            .await
            .unwrap()
            .into_iter()
            .map(|s| s.slug)
            .collect::<Vec<_>>()
    };
    assert_eq!(
        slugs(SkillFilter::default()).await,
        ["alpha", "mid", "zeta"]
    );
    let f = SkillFilter {
        source: Some(SkillSourceKind::Plugin),
        ..Default::default()
    };
    assert_eq!(slugs(f).await, ["alpha"]);
    let f = SkillFilter {
        category: Some("ops".into()),
        ..Default::default()
    };
    assert_eq!(slugs(f).await, ["zeta"]);
    let f = SkillFilter {
        enabled: Some(false),
        ..Default::default()
    };
    assert_eq!(slugs(f).await, ["mid"]);
    let f = SkillFilter {
        search: Some("releases".into()),
        ..Default::default()
    };
    assert_eq!(
        slugs(f).await,
        ["zeta"],
        "search is case-insensitive on description"
    );
    let f = SkillFilter {
        search: Some("ÜNÏCODE".into()),
        ..Default::default()
    };
    assert_eq!(
        slugs(f).await,
        ["mid"],
        "search is Unicode case-insensitive on name"
    );
    let f = SkillFilter {
        tags: vec!["deploy".into()],
        ..Default::default()
    };
    assert_eq!(slugs(f).await, ["alpha", "zeta"]);
    let f = SkillFilter {
        tags: vec!["deploy".into(), "k8s".into()],
        ..Default::default()
    };
    assert_eq!(slugs(f).await, ["zeta"], "every tag must match");
    let f = SkillFilter {
        plugin_id: Some("plug".into()),
        ..Default::default()
    };
    assert_eq!(slugs(f).await, ["alpha"]);
}

/// Updates change what they set, recompute the checksum, replace files atomically, and a
/// refused update changes nothing.
pub async fn update_skill(store: &dyn SkillStore) {
    let t = tenant();
    let created = store
        .create_skill(&t, skill("upd").with_file("a.md", "a"))
        .await
        .unwrap();
    let update = SkillUpdate {
        name: Some("Renamed".into()),
        content: Some("# new\n".into()),
        description: Some(Some("now described".into())),
        tags: Some(vec!["n".into()]),
        enabled: Some(false),
        files: Some(vec![NewSkillFile::new("b.md", "b")]),
        ..Default::default()
    };
    let updated = store
        .update_skill(&t, &created.id, update)
        .await
        .unwrap()
        .expect("exists");
    assert_eq!(updated.name, "Renamed");
    assert_eq!(updated.slug, "upd", "slug never changes");
    assert_eq!(updated.checksum, checksum("# new\n"));
    assert!(!updated.enabled);
    assert!(updated.updated_at >= created.updated_at);
    let files = store.list_skill_files(&t, &created.id).await.unwrap();
    assert_eq!(files.len(), 1);
    assert_eq!(files[0].relative_path, "b.md");
    assert_eq!(
        store
            .find_skill_file(&t, &created.id, "a.md")
            .await
            .unwrap(),
        None
    );

    let bad = SkillUpdate {
        content: Some("changed".into()),
        files: Some(vec![NewSkillFile::new("../x", "x")]),
        ..Default::default()
    };
    assert_invalid(
        store.update_skill(&t, &created.id, bad).await,
        "files[0].path",
        |v| matches!(v, Violation::Path(_)),
    );
    let after = store
        .find_skill_by_id(&t, &created.id)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(after, updated, "a refused update changed the skill");
    assert_eq!(
        store.list_skill_files(&t, &created.id).await.unwrap(),
        files
    );
    let missing = store
        .update_skill(&t, "missing", SkillUpdate::default())
        .await
        .unwrap();
    assert_eq!(missing, None);
}

/// File create, conflict on path, find, update (checksum and size), delete.
pub async fn file_crud(store: &dyn SkillStore) {
    let t = tenant();
    let s = store.create_skill(&t, skill("files")).await.unwrap();
    assert!(!s.is_directory);
    let f = store
        .create_skill_file(&t, &s.id, NewSkillFile::new("notes/x.md", "hello"))
        .await
        .unwrap();
    assert_eq!(f.content_type, "text/markdown");
    assert!(
        store
            .find_skill_by_id(&t, &s.id)
            .await
            .unwrap()
            .unwrap()
            .is_directory,
        "a file makes a directory skill"
    );
    match store
        .create_skill_file(&t, &s.id, NewSkillFile::new("notes/x.md", "again"))
        .await
    {
        Err(Error::Conflict { .. }) => {}
        other => panic!("duplicate path must conflict, got {other:?}"),
    }
    assert_invalid(
        store
            .create_skill_file(&t, &s.id, NewSkillFile::new("../up.md", "x"))
            .await,
        "file.path",
        |v| matches!(v, Violation::Path(_)),
    );
    match store
        .create_skill_file(&t, "missing", NewSkillFile::new("a.md", "x"))
        .await
    {
        Err(Error::NotFound { .. }) => {}
        other => panic!("a file for a missing skill must be NotFound, got {other:?}"),
    }
    let found = store
        .find_skill_file(&t, &s.id, "notes/x.md")
        .await
        .unwrap();
    assert_eq!(found.as_ref(), Some(&f));
    let updated = store
        .update_skill_file(&t, &f.id, SkillFileUpdate::content("hello, world"))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(updated.size_bytes, 12);
    assert_eq!(updated.checksum, checksum("hello, world"));
    assert_eq!(updated.relative_path, "notes/x.md");
    assert_eq!(
        store
            .update_skill_file(&t, "missing", SkillFileUpdate::content("x"))
            .await
            .unwrap(),
        None
    );
    assert!(store.delete_skill_file(&t, &f.id).await.unwrap());
    assert!(!store.delete_skill_file(&t, &f.id).await.unwrap());
    assert!(store.list_skill_files(&t, &s.id).await.unwrap().is_empty());
    for i in 0..3 {
        store
            .create_skill_file(&t, &s.id, NewSkillFile::new(format!("f{i}.md"), "x"))
            .await
            .unwrap();
    }
    assert_eq!(
        store
            .delete_skill_files_by_skill_id(&t, &s.id)
            .await
            .unwrap(),
        3
    );
    assert!(store.list_skill_files(&t, &s.id).await.unwrap().is_empty());
}

/// The per-file and per-skill limits hold for single-file writes too.
pub async fn file_limits(store: &dyn SkillStore) {
    let t = tenant();
    let s = store.create_skill(&t, skill("limits")).await.unwrap();
    assert_invalid(
        store
            .create_skill_file(
                &t,
                &s.id,
                NewSkillFile::new("big.md", "x".repeat(100 * 1024 + 1)),
            )
            .await,
        "file.content",
        |v| matches!(v, Violation::FileTooLarge { .. }),
    );
    let mut last = None;
    for i in 0..10 {
        last = Some(
            store
                .create_skill_file(
                    &t,
                    &s.id,
                    NewSkillFile::new(format!("f{i}.md"), "x".repeat(100 * 1024)),
                )
                .await
                .unwrap(),
        );
    }
    // 10 x 100 KiB + SKILL.md fits under 1 MiB; one more file does not.
    assert_invalid(
        store
            .create_skill_file(
                &t,
                &s.id,
                NewSkillFile::new("more.md", "x".repeat(48 * 1024)),
            )
            .await,
        "file.content",
        |v| matches!(v, Violation::SkillTooLarge { .. }),
    );
    let last = last.unwrap();
    assert_invalid(
        store
            .update_skill_file(
                &t,
                &last.id,
                SkillFileUpdate::content("y".repeat(100 * 1024 + 1)),
            )
            .await,
        "file.content",
        |v| matches!(v, Violation::FileTooLarge { .. }),
    );
    assert_invalid(
        store
            .update_skill(
                &t,
                &s.id,
                SkillUpdate {
                    content: Some("z".repeat(60 * 1024)),
                    ..Default::default()
                },
            )
            .await,
        "content",
        |v| matches!(v, Violation::SkillTooLarge { .. }),
    );
    assert_eq!(store.list_skill_files(&t, &s.id).await.unwrap().len(), 10);
}

/// Assignment CRUD; one assignment per (skill, scope, scope id).
pub async fn assignment_crud_and_uniqueness(store: &dyn SkillStore) {
    let t = tenant();
    let s = store.create_skill(&t, skill("assigned")).await.unwrap();
    let a = store
        .create_assignment(&t, NewAssignment::agent(&s.id, "agent-1").priority(5))
        .await
        .unwrap();
    assert_eq!(a.skill_slug, "assigned");
    assert_eq!(a.scope, AssignmentScope::Agent);
    assert!(a.enabled && !a.auto_inject);
    match store
        .create_assignment(&t, NewAssignment::agent(&s.id, "agent-1"))
        .await
    {
        Err(Error::Conflict { .. }) => {}
        other => panic!("a second (skill, agent, agent-1) must conflict, got {other:?}"),
    }
    store
        .create_assignment(&t, NewAssignment::agent(&s.id, "agent-2"))
        .await
        .unwrap();
    store
        .create_assignment(&t, NewAssignment::global(&s.id))
        .await
        .unwrap();
    match store
        .create_assignment(&t, NewAssignment::global(&s.id))
        .await
    {
        Err(Error::Conflict { .. }) => {}
        other => panic!("a second global assignment must conflict, got {other:?}"),
    }
    store
        .create_assignment(&t, NewAssignment::team(&s.id, "team-1"))
        .await
        .unwrap();
    match store
        .create_assignment(&t, NewAssignment::global("missing"))
        .await
    {
        Err(Error::NotFound { .. }) => {}
        other => panic!("assigning a missing skill must be NotFound, got {other:?}"),
    }
    let all = store
        .list_assignments(&t, &AssignmentFilter::default())
        .await
        .unwrap();
    assert_eq!(all.len(), 4);
    assert_eq!(all[0].id, a.id, "highest priority first");
    let agents = store
        .list_assignments(
            &t,
            &AssignmentFilter {
                scope: Some(AssignmentScope::Agent),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(agents.len(), 2);
    let one = store
        .list_assignments(
            &t,
            &AssignmentFilter {
                skill_id: Some(s.id.clone()),
                scope_id: Some("team-1".into()),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(one.len(), 1);
    assert_eq!(one[0].scope, AssignmentScope::Team);
    let changed = store
        .update_assignment(
            &t,
            &a.id,
            AssignmentUpdate {
                enabled: Some(false),
                priority: Some(-1),
                auto_inject: Some(true),
            },
        )
        .await
        .unwrap()
        .unwrap();
    assert!(!changed.enabled && changed.auto_inject && changed.priority == -1);
    assert_eq!(
        store.find_assignment(&t, &a.id).await.unwrap(),
        Some(changed)
    );
    assert!(store.delete_assignment(&t, &a.id).await.unwrap());
    assert!(!store.delete_assignment(&t, &a.id).await.unwrap());
    // Deleted: the same key may be assigned again.
    store
        .create_assignment(&t, NewAssignment::agent(&s.id, "agent-1"))
        .await
        .unwrap();
}

/// An agent gets global, its team's and its own assignments, in assignment order.
pub async fn assignments_for_agent(store: &dyn SkillStore) {
    let t = tenant();
    let mut ids = Vec::new();
    for slug in ["g", "team-a", "team-b", "mine", "theirs"] {
        ids.push(store.create_skill(&t, skill(slug)).await.unwrap().id);
    }
    store
        .create_assignment(&t, NewAssignment::global(&ids[0]))
        .await
        .unwrap();
    store
        .create_assignment(&t, NewAssignment::team(&ids[1], "a").priority(3))
        .await
        .unwrap();
    store
        .create_assignment(&t, NewAssignment::team(&ids[2], "b"))
        .await
        .unwrap();
    store
        .create_assignment(&t, NewAssignment::agent(&ids[3], "me").priority(3))
        .await
        .unwrap();
    store
        .create_assignment(&t, NewAssignment::agent(&ids[4], "you"))
        .await
        .unwrap();
    let t = &t;
    let slugs = |agent: &'static str, team: Option<&'static str>| async move {
        let t = t;
        store
            .assignments_for_agent(t, agent, team)
            .await
            .unwrap()
            .into_iter()
            .map(|a| {
                assert_eq!(a.assignment.skill_id, a.skill.id);
                a.skill.slug
            })
            .collect::<Vec<_>>()
    };
    assert_eq!(slugs("me", Some("a")).await, ["mine", "team-a", "g"]);
    assert_eq!(slugs("me", None).await, ["mine", "g"]);
    assert_eq!(slugs("you", Some("b")).await, ["g", "team-b", "theirs"]);
    assert_eq!(slugs("nobody", Some("c")).await, ["g"]);
}

/// Deleting a skill deletes its files and assignments (seed 002 sections 3.2, 17.12).
pub async fn cascades(store: &dyn SkillStore) {
    let t = tenant();
    let s = store
        .create_skill(&t, skill("doomed").with_file("a.md", "a"))
        .await
        .unwrap();
    let keep = store.create_skill(&t, skill("kept")).await.unwrap();
    let file = store.list_skill_files(&t, &s.id).await.unwrap().remove(0);
    let a = store
        .create_assignment(&t, NewAssignment::global(&s.id))
        .await
        .unwrap();
    store
        .create_assignment(&t, NewAssignment::agent(&s.id, "x"))
        .await
        .unwrap();
    let kept = store
        .create_assignment(&t, NewAssignment::global(&keep.id))
        .await
        .unwrap();
    assert!(store.delete_skill(&t, &s.id).await.unwrap());
    assert!(!store.delete_skill(&t, &s.id).await.unwrap());
    assert_eq!(store.find_skill_by_id(&t, &s.id).await.unwrap(), None);
    assert!(store.list_skill_files(&t, &s.id).await.unwrap().is_empty());
    assert_eq!(
        store.find_skill_file(&t, &s.id, "a.md").await.unwrap(),
        None
    );
    assert!(!store.delete_skill_file(&t, &file.id).await.unwrap());
    assert_eq!(store.find_assignment(&t, &a.id).await.unwrap(), None);
    let left = store
        .list_assignments(&t, &AssignmentFilter::default())
        .await
        .unwrap();
    assert_eq!(
        left,
        vec![kept],
        "only the other skill's assignment remains"
    );
    assert!(
        store
            .agent_ids_for_skill(&t, &s.id)
            .await
            .unwrap()
            .is_empty()
    );
}

/// Counts, categories and agent ids.
pub async fn bulk_queries(store: &dyn SkillStore) {
    let t = tenant();
    let mut a = skill("counted");
    a.category = Some("ops".into());
    let a = store.create_skill(&t, a).await.unwrap();
    let mut b = skill("lonely");
    b.category = Some("coding".into());
    store.create_skill(&t, b).await.unwrap();
    store.create_skill(&t, skill("plain")).await.unwrap();
    for agent in ["z-agent", "a-agent"] {
        store
            .create_assignment(&t, NewAssignment::agent(&a.id, agent))
            .await
            .unwrap();
    }
    store
        .create_assignment(&t, NewAssignment::team(&a.id, "team"))
        .await
        .unwrap();
    let counts: Vec<(String, u64)> = store
        .skills_with_assignment_counts(&t)
        .await
        .unwrap()
        .into_iter()
        .map(|(s, n)| (s.slug, n))
        .collect();
    assert_eq!(
        counts,
        [
            ("counted".to_owned(), 3),
            ("lonely".to_owned(), 0),
            ("plain".to_owned(), 0)
        ]
    );
    assert_eq!(
        store.list_categories(&t).await.unwrap(),
        ["coding", "general", "ops"]
    );
    assert_eq!(
        store.agent_ids_for_skill(&t, &a.id).await.unwrap(),
        ["a-agent", "z-agent"]
    );
}

/// No call reads or changes another tenant's records.
pub async fn tenant_isolation(store: &dyn SkillStore) {
    let owner = tenant();
    let intruder = tenant();
    let s = store
        .create_skill(&owner, skill("private").with_file("secret.md", "s"))
        .await
        .unwrap();
    let file = store
        .list_skill_files(&owner, &s.id)
        .await
        .unwrap()
        .remove(0);
    let a = store
        .create_assignment(&owner, NewAssignment::agent(&s.id, "agent"))
        .await
        .unwrap();
    store.create_skill(&intruder, skill("own")).await.unwrap();

    let i = &intruder;
    assert_eq!(store.find_skill_by_id(i, &s.id).await.unwrap(), None);
    assert_eq!(store.find_skill_by_slug(i, "private").await.unwrap(), None);
    let listed = store.list_skills(i, &SkillFilter::default()).await.unwrap();
    assert!(listed.iter().all(|x| x.slug == "own"));
    assert!(store.is_slug_available(i, "private", None).await.unwrap());
    let update = SkillUpdate {
        content: Some("pwned".into()),
        ..Default::default()
    };
    assert_eq!(store.update_skill(i, &s.id, update).await.unwrap(), None);
    assert!(!store.delete_skill(i, &s.id).await.unwrap());
    assert!(matches!(
        store
            .create_skill_file(i, &s.id, NewSkillFile::new("x.md", "x"))
            .await,
        Err(Error::NotFound { .. })
    ));
    assert!(store.list_skill_files(i, &s.id).await.unwrap().is_empty());
    assert_eq!(
        store.find_skill_file(i, &s.id, "secret.md").await.unwrap(),
        None
    );
    assert_eq!(
        store
            .update_skill_file(i, &file.id, SkillFileUpdate::content("pwned"))
            .await
            .unwrap(),
        None
    );
    assert!(!store.delete_skill_file(i, &file.id).await.unwrap());
    assert_eq!(
        store
            .delete_skill_files_by_skill_id(i, &s.id)
            .await
            .unwrap(),
        0
    );
    assert!(matches!(
        store
            .create_assignment(i, NewAssignment::global(&s.id))
            .await,
        Err(Error::NotFound { .. })
    ));
    assert_eq!(store.find_assignment(i, &a.id).await.unwrap(), None);
    assert!(
        store
            .list_assignments(i, &AssignmentFilter::default())
            .await
            .unwrap()
            .is_empty()
    );
    assert!(
        store
            .assignments_for_agent(i, "agent", None)
            .await
            .unwrap()
            .is_empty()
    );
    let update = AssignmentUpdate {
        enabled: Some(false),
        ..Default::default()
    };
    assert_eq!(
        store.update_assignment(i, &a.id, update).await.unwrap(),
        None
    );
    assert!(!store.delete_assignment(i, &a.id).await.unwrap());
    assert!(
        store
            .agent_ids_for_skill(i, &s.id)
            .await
            .unwrap()
            .is_empty()
    );
    let counts = store.skills_with_assignment_counts(i).await.unwrap();
    assert!(counts.iter().all(|(x, _)| x.slug == "own"));

    // The owner's records are untouched.
    let still = store
        .find_skill_by_id(&owner, &s.id)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(still, s);
    let files = store.list_skill_files(&owner, &s.id).await.unwrap();
    assert_eq!(files, vec![file]);
    assert_eq!(store.find_assignment(&owner, &a.id).await.unwrap(), Some(a));
}

/// Concurrent writers lose nothing, and uniqueness holds under races.
pub async fn concurrent_writers(store: &dyn SkillStore) {
    let t = tenant();
    let creates = (0..64).map(|i| store.create_skill(&t, skill(&format!("c{i:02}"))));
    let created = join_all(creates).await;
    assert!(
        created.iter().all(Result::is_ok),
        "a concurrent create failed"
    );
    let all = store
        .list_skills(&t, &SkillFilter::default())
        .await
        .unwrap();
    assert_eq!(all.len(), 64, "concurrent creates lost a skill");

    let racers = (0..32).map(|_| store.create_skill(&t, skill("contested")));
    let results = join_all(racers).await;
    let winners = results.iter().filter(|r| r.is_ok()).count();
    assert_eq!(
        winners, 1,
        "exactly one create of a contested slug succeeds"
    );
    assert!(
        results
            .iter()
            .filter_map(|r| r.as_ref().err())
            .all(|e| matches!(e, Error::Conflict { .. }))
    );

    let target = all[0].id.clone();
    let assigns = (0..32).map(|_| store.create_assignment(&t, NewAssignment::global(&target)));
    let results = join_all(assigns).await;
    assert_eq!(results.iter().filter(|r| r.is_ok()).count(), 1);

    let files = (0..48)
        .map(|i| store.create_skill_file(&t, &target, NewSkillFile::new(format!("f/{i}.md"), "x")));
    let results = join_all(files).await;
    assert!(results.iter().all(Result::is_ok));
    assert_eq!(store.list_skill_files(&t, &target).await.unwrap().len(), 48);

    let agents = (0..48).map(|i| {
        let target = target.clone();
        let t = t.clone();
        async move {
            store
                .create_assignment(&t, NewAssignment::agent(&target, &format!("agent-{i}")))
                .await
        }
    });
    assert!(join_all(agents).await.iter().all(Result::is_ok));
    assert_eq!(
        store.agent_ids_for_skill(&t, &target).await.unwrap().len(),
        48
    );
}
