//! Resolving makes a bounded number of store calls, whatever the number of skills: each
//! call is a database round trip on SQL backends, so one call per skill made a resolution
//! of a few hundred skills 25 times slower on SQLite than in memory.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;

use skills_catalog::Resolver;
use skills_store_traits::conformance::counting::CountingSkillStore;
use skills_store_traits::in_memory::InMemorySkillStore;
use skills_store_traits::{NewAssignment, NewSkill, ReadOnly, SkillStore, TenantId};

/// A store with `n` skills reaching agent-1 (global, team and agent assignments; every
/// other skill with files, one declaring its status in `skill.json`), and one skill that
/// reaches nobody.
async fn store_with(n: usize) -> (Arc<InMemorySkillStore>, TenantId) {
    let store = Arc::new(InMemorySkillStore::new());
    let t = TenantId::new("acme");
    for i in 0..n {
        let slug = format!("skill-{i:04}");
        let mut new = NewSkill::new(format!("Skill {i}"), slug.clone(), format!("# {slug}\n"));
        if i % 2 == 0 {
            new = new
                .with_file("scripts/run.sh", format!("echo {i}\n"))
                .with_file("references/guide.md", "guide");
        }
        if i % 5 == 0 {
            new = new.with_file("skill.json", r#"{"status": "deprecated", "layer": 2}"#);
        }
        let skill = store.create_skill(&t, new).await.unwrap();
        let assignment = match i % 3 {
            0 => NewAssignment::global(&skill.id),
            1 => NewAssignment::team(&skill.id, "team-1"),
            _ => NewAssignment::agent(&skill.id, "agent-1").priority(i as i64),
        };
        store.create_assignment(&t, assignment).await.unwrap();
    }
    let other = store
        .create_skill(
            &t,
            NewSkill::new("Other", "other", "# o\n").with_file("x.md", "x"),
        )
        .await
        .unwrap();
    store
        .create_assignment(&t, NewAssignment::agent(&other.id, "agent-2"))
        .await
        .unwrap();
    (store, t)
}

#[tokio::test]
async fn resolving_makes_at_most_two_store_calls_at_any_size() {
    for n in [0, 1, 10, 300] {
        let (inner, t) = store_with(n).await;
        let store = CountingSkillStore::new(ReadOnly::new(inner));
        let resolution = Resolver::new()
            .resolve_for_agent(&store, &t, "agent-1", Some("team-1"), &[])
            .await
            .unwrap();
        assert_eq!(resolution.skills.len(), n);
        assert!(
            store.total() <= 2,
            "{n} skills took {} store calls: {:?}",
            store.total(),
            store.calls()
        );
    }
}

#[tokio::test]
async fn the_batched_resolution_equals_the_one_by_one_resolution() {
    let (inner, t) = store_with(60).await;
    let batched = CountingSkillStore::new(ReadOnly::new(Arc::clone(&inner)));
    let one_by_one = CountingSkillStore::new(ReadOnly::new(inner)).one_by_one();
    let resolver = Resolver::new();
    let a = resolver
        .resolve_for_agent(&batched, &t, "agent-1", Some("team-1"), &[])
        .await
        .unwrap();
    let b = resolver
        .resolve_for_agent(&one_by_one, &t, "agent-1", Some("team-1"), &[])
        .await
        .unwrap();
    assert_eq!(a, b);
    // The per-id path really was per id (the default a backend without the batch gets).
    assert_eq!(one_by_one.calls()["list_skill_files"], 60);
    let deprecated = a.find("skill-0005").unwrap();
    assert_eq!(deprecated.layer, Some(2));
    assert_eq!(deprecated.supporting_files.len(), 1);
    assert!(a.find("other").is_none(), "another agent's skill");
    // Another tenant resolves nothing from these ids.
    let stranger = resolver
        .resolve_for_agent(
            &batched,
            &TenantId::new("x"),
            "agent-1",
            Some("team-1"),
            &[],
        )
        .await
        .unwrap();
    assert!(stranger.skills.is_empty());
}

#[tokio::test]
async fn resolving_is_one_store_call_when_the_store_reads_the_agent_at_once() {
    for n in [0, 1, 10, 300] {
        let (inner, t) = store_with(n).await;
        let store = CountingSkillStore::new(ReadOnly::new(inner));
        let resolution = Resolver::new()
            .resolve_for_agent(&store, &t, "agent-1", Some("team-1"), &[])
            .await
            .unwrap();
        assert_eq!(resolution.skills.len(), n);
        assert_eq!(
            store.calls().into_iter().collect::<Vec<_>>(),
            [("resolvable_skills", 1)],
            "{n} skills"
        );
    }
}
