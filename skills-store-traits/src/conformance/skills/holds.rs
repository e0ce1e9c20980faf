//! The operator's hold ([`SkillRecord::held`](crate::SkillRecord::held)): what every
//! backend keeps, whoever writes.

use super::skill;
use crate::skills::{NewAssignment, NewSkillFile, SkillFilter, SkillStore, SkillUpdate};
use crate::tenancy::TenantId;

async fn update(store: &dyn SkillStore, t: &TenantId, id: &str, update: SkillUpdate) -> bool {
    let updated = store
        .update_skill(t, id, update)
        .await
        .unwrap()
        .expect("exists");
    let found = store.find_skill_by_id(t, id).await.unwrap().unwrap();
    assert_eq!(found, updated, "what was returned is what is stored");
    assert!(
        !(found.held && found.enabled),
        "a held skill is stored enabled"
    );
    found.held
}

/// A new skill is not held; placing the hold disables it; while held, no update that sets
/// `enabled` (alone, or with content, files and metadata as an installer's does, or with
/// the hold in the same step) enables it, and unrelated updates keep it; the hold reads
/// back by id, by slug, in lists and in the agent's assignments, and a held skill is never
/// resolvable. Lifting the hold alone leaves the skill disabled; lifting it with `enabled`
/// enables it. Disabling without the hold places none.
pub async fn operator_holds(store: &dyn SkillStore) {
    let t = crate::conformance::tenant();
    let created = store.create_skill(&t, skill("held")).await.unwrap();
    assert!(!created.held && created.enabled, "a new skill is not held");
    store
        .create_assignment(&t, NewAssignment::agent(&created.id, "agent-h"))
        .await
        .unwrap();
    let id = created.id.as_str();

    let plain_off = SkillUpdate {
        enabled: Some(false),
        ..SkillUpdate::default()
    };
    assert!(
        !update(store, &t, id, plain_off).await,
        "disabling is no hold"
    );

    let hold = SkillUpdate {
        held: Some(true),
        ..SkillUpdate::default()
    };
    assert!(update(store, &t, id, hold.clone()).await);
    let on = SkillUpdate {
        enabled: Some(true),
        ..SkillUpdate::default()
    };
    let replace = SkillUpdate {
        content: Some("# held, new content\n".into()),
        enabled: Some(true),
        metadata: Some(serde_json::Map::from_iter([("k".into(), "v".into())])),
        files: Some(vec![NewSkillFile::new("a.md", "a")]),
        ..SkillUpdate::default()
    };
    let rename = SkillUpdate {
        name: Some("Renamed while held".into()),
        ..SkillUpdate::default()
    };
    let both = SkillUpdate {
        held: Some(true),
        enabled: Some(true),
        ..SkillUpdate::default()
    };
    for attempt in [on.clone(), replace, rename, both] {
        assert!(
            update(store, &t, id, attempt.clone()).await,
            "the hold was lost by {attempt:?}"
        );
    }
    let by_slug = store.find_skill_by_slug(&t, "held").await.unwrap().unwrap();
    assert!(by_slug.held && !by_slug.enabled);
    assert_eq!(by_slug.content, "# held, new content\n");
    let enabled_only = SkillFilter {
        enabled: Some(true),
        ..SkillFilter::default()
    };
    let listed = store.list_skills(&t, &enabled_only).await.unwrap();
    assert!(
        listed.iter().all(|s| s.id != id),
        "a held skill listed as enabled"
    );
    let listed = store
        .list_skills(&t, &SkillFilter::default())
        .await
        .unwrap();
    assert!(listed.iter().any(|s| s.id == id && s.held));
    let assigned = store
        .assignments_for_agent(&t, "agent-h", None)
        .await
        .unwrap();
    assert!(assigned.iter().any(|a| a.skill.id == id && a.skill.held));
    let resolvable = store.resolvable_skills(&t, "agent-h", None).await.unwrap();
    assert!(resolvable.is_empty(), "a held skill is resolvable");

    let lift = SkillUpdate {
        held: Some(false),
        ..SkillUpdate::default()
    };
    assert!(!update(store, &t, id, lift).await);
    let lifted = store.find_skill_by_id(&t, id).await.unwrap().unwrap();
    assert!(!lifted.enabled, "lifting the hold alone enabled the skill");
    assert!(update(store, &t, id, hold).await);
    let release = SkillUpdate {
        held: Some(false),
        enabled: Some(true),
        ..SkillUpdate::default()
    };
    assert!(!update(store, &t, id, release).await);
    let released = store.find_skill_by_id(&t, id).await.unwrap().unwrap();
    assert!(released.enabled && !released.held);
    let resolvable = store.resolvable_skills(&t, "agent-h", None).await.unwrap();
    assert_eq!(resolvable.len(), 1, "released, it resolves again");
    assert!(!update(store, &t, id, on).await);
}
