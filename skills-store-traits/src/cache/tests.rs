#![allow(clippy::unwrap_used, clippy::expect_used)]

use super::*;
use crate::in_memory::InMemorySkillStore;
use crate::time::ManualClock;
use crate::{NewSkill, NewSkillFile, SkillFilter, SkillStore, SkillUpdate, TenantId};

#[test]
fn entries_expire_and_the_size_is_bounded() {
    let clock = ManualClock::new(0);
    let cache: TtlCache<u32, &str> = TtlCache::new(clock.clone(), 100, 3);
    cache.insert(1, "a");
    assert_eq!(cache.get(&1), Some("a"));
    clock.advance(100);
    assert_eq!(cache.get(&1), None, "expired at the TTL");
    for k in 0..10 {
        clock.advance(1);
        cache.insert(k, "x");
        assert!(cache.len() <= 3);
    }
    assert_eq!(cache.get(&9), Some("x"), "the newest stays");
    assert_eq!(cache.get(&0), None, "the soonest to expire went first");
    assert_eq!(cache.stats(), (2, 2));

    // A value read before a removal is not put back after it.
    let generation = cache.generation();
    cache.remove(&9);
    cache.insert_if_unchanged(generation, 9, "stale");
    assert_eq!(cache.get(&9), None);
    cache.insert_if_unchanged(cache.generation(), 9, "fresh");
    assert_eq!(cache.get(&9), Some("fresh"));
}

#[tokio::test]
async fn writes_through_the_decorator_invalidate_exactly_their_keys() {
    let clock = ManualClock::new(0);
    let store = CachedSkillStore::new(InMemorySkillStore::new(), clock.clone());
    let (acme, other) = (TenantId::new("acme"), TenantId::new("other"));
    let a = store
        .create_skill(&acme, NewSkill::new("A", "a", "# A\n"))
        .await
        .unwrap();
    let b = store
        .create_skill(&acme, NewSkill::new("B", "b", "# B\n"))
        .await
        .unwrap();
    store
        .create_skill(&other, NewSkill::new("A", "a", "# other\n"))
        .await
        .unwrap();
    let all = SkillFilter::default();
    assert_eq!(store.list_skills(&acme, &all).await.unwrap().len(), 2);
    store.find_skill_by_id(&acme, &a.id).await.unwrap();
    store.find_skill_by_slug(&acme, "b").await.unwrap();
    store.find_skill_by_slug(&other, "a").await.unwrap();
    assert_eq!(store.metadata_stats(), (0, 3));

    // Editing `a` drops a's entries and acme's registry; b's and other's stay.
    let update = SkillUpdate {
        content: Some("# A2\n".into()),
        ..SkillUpdate::default()
    };
    store.update_skill(&acme, &a.id, update).await.unwrap();
    let fresh = store.find_skill_by_id(&acme, &a.id).await.unwrap().unwrap();
    assert_eq!(fresh.content, "# A2\n", "never the stale record");
    store.find_skill_by_slug(&acme, "b").await.unwrap();
    store.find_skill_by_slug(&other, "a").await.unwrap();
    assert_eq!(store.metadata_stats(), (2, 4), "b and other hit, a missed");
    let (_, registry_misses) = store.registry_stats();
    store.list_skills(&acme, &all).await.unwrap();
    assert_eq!(store.registry_stats().1, registry_misses + 1);

    // A file write drops its skill, found by the record its slug entry holds.
    store.find_skill_by_slug(&acme, "b").await.unwrap();
    store
        .create_skill_file(&acme, &b.id, NewSkillFile::new("x.md", "x"))
        .await
        .unwrap();
    let b_now = store.find_skill_by_slug(&acme, "b").await.unwrap().unwrap();
    assert!(b_now.is_directory, "the touched record, not the cached one");

    // A delete is seen at once, a miss is cached until a create names it.
    assert!(store.delete_skill(&acme, &a.id).await.unwrap());
    assert_eq!(store.find_skill_by_id(&acme, &a.id).await.unwrap(), None);
    assert_eq!(store.find_skill_by_slug(&acme, "a").await.unwrap(), None);
    let again = store
        .create_skill(&acme, NewSkill::new("A", "a", "# A3\n"))
        .await
        .unwrap();
    assert_eq!(
        store
            .find_skill_by_slug(&acme, "a")
            .await
            .unwrap()
            .unwrap()
            .id,
        again.id
    );

    // Behind the decorator's back, a change shows after the TTL.
    store.find_skill_by_id(&acme, &b.id).await.unwrap();
    let update = SkillUpdate {
        content: Some("# behind\n".into()),
        ..SkillUpdate::default()
    };
    store
        .inner()
        .update_skill(&acme, &b.id, update)
        .await
        .unwrap();
    let cached = store.find_skill_by_id(&acme, &b.id).await.unwrap().unwrap();
    assert_ne!(cached.content, "# behind\n");
    clock.advance(METADATA_TTL_MS);
    let expired = store.find_skill_by_id(&acme, &b.id).await.unwrap().unwrap();
    assert_eq!(expired.content, "# behind\n");
}
