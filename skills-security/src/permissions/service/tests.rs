#![allow(clippy::unwrap_used, clippy::expect_used)]

use super::*;
use crate::permissions::Scope;
use skills_store_traits::ManualClock;

#[test]
fn cache_expires_and_rule_changes_invalidate() {
    let clock = ManualClock::new(0);
    let p = Permissions::new(clock.clone()).with_ttl(1000);
    let t = TenantId::new("t");
    let who = Principal::new("t", "u");
    let skill = SkillTarget::new("pdf");
    assert!(p.resolve(&who, &skill).can_execute.value);
    assert_eq!(p.cached(), 1);
    p.upsert_rule(
        &t,
        PermissionRule::new("r", Scope::Organization, Target::Skill("pdf".into())).execute(false),
    );
    assert_eq!(p.cached(), 0);
    assert!(!p.resolve(&who, &skill).can_execute.value);
    assert!(p.remove_rule(&t, "r"));
    assert!(p.resolve(&who, &skill).can_execute.value);
    // A change made behind the cache's back shows after the TTL.
    let stale = p.resolve(&who, &skill);
    assert!(Arc::ptr_eq(&stale, &p.resolve(&who, &skill)));
    clock.advance(1000);
    let fresh = p.resolve(&who, &skill);
    assert!(!Arc::ptr_eq(&stale, &fresh));
}

use skills_store_traits::in_memory::InMemoryPermissionStore;

fn deny(id: &str, skill: &str) -> PermissionRule {
    PermissionRule::new(id, Scope::Organization, Target::Skill(skill.into())).execute(false)
}

#[test]
fn a_rule_change_drops_only_the_resolutions_it_targets() {
    let p = Permissions::new(ManualClock::new(0));
    let t = TenantId::new("t");
    let who = Principal::new("t", "u");
    let (pdf, csv) = (SkillTarget::new("pdf"), SkillTarget::new("csv"));
    let other = Principal::new("other", "u");
    p.resolve(&who, &pdf);
    let kept = p.resolve(&who, &csv);
    let theirs = p.resolve(&other, &pdf);
    assert_eq!(p.cached(), 3);
    p.upsert_rule(&t, deny("r", "pdf"));
    assert_eq!(p.cached(), 2, "only (t, pdf) dropped");
    assert!(Arc::ptr_eq(&kept, &p.resolve(&who, &csv)));
    assert!(Arc::ptr_eq(&theirs, &p.resolve(&other, &pdf)));
    assert!(!p.resolve(&who, &pdf).can_execute.value);
    // Retargeting a rule drops the old target's resolutions too.
    p.upsert_rule(&t, deny("r", "csv"));
    assert!(p.resolve(&who, &pdf).can_execute.value);
    assert!(!p.resolve(&who, &csv).can_execute.value);
    assert!(p.remove_rule(&t, "r"));
    assert!(p.resolve(&who, &csv).can_execute.value);
    p.resolve(&who, &pdf);
    p.invalidate_skill(&t, "pdf");
    let (hits, misses) = p.cache_stats();
    assert!(hits >= 2 && misses >= 6, "{hits} {misses}");
}

#[test]
fn the_cache_is_bounded_and_repeated_checks_hit() {
    let p = Permissions::new(ManualClock::new(0)).with_capacity(4);
    let who = Principal::new("t", "u");
    for i in 0..10 {
        p.resolve(&who, &SkillTarget::new(format!("s{i}")));
        assert!(p.cached() <= 4);
    }
    let p = Permissions::new(ManualClock::new(0));
    let skills: Vec<SkillTarget> = (0..5).map(|i| SkillTarget::new(format!("s{i}"))).collect();
    for _ in 0..20 {
        for skill in &skills {
            p.resolve(&who, skill);
        }
    }
    let (hits, misses) = p.cache_stats();
    assert_eq!(
        (hits, misses),
        (95, 5),
        "seed 003: above 90 % on repeated checks"
    );
}

#[tokio::test]
async fn rules_persist_through_the_store() {
    let store = Arc::new(InMemoryPermissionStore::new());
    let t = TenantId::new("t");
    let who = Principal::new("t", "u");
    let pdf = SkillTarget::new("pdf");
    let first = Permissions::new(ManualClock::new(0)).with_store(store.clone());
    first.put_rule(&t, deny("a", "pdf")).await.unwrap();
    first.put_rule(&t, deny("b", "csv")).await.unwrap();
    assert!(first.delete_rule(&t, "b").await.unwrap());

    // A restart: a fresh handle on the same store.
    let second = Permissions::new(ManualClock::new(0)).with_store(store.clone());
    assert!(
        second.resolve(&who, &pdf).can_execute.value,
        "nothing loaded yet"
    );
    assert_eq!(second.load(&t).await.unwrap(), 1);
    assert_eq!(second.rules(&t), vec![deny("a", "pdf")]);
    assert!(!second.resolve(&who, &pdf).can_execute.value);

    second
        .replace_rules(&t, vec![deny("c", "csv")])
        .await
        .unwrap();
    let third = Permissions::new(ManualClock::new(0)).with_store(store.clone());
    third.load(&t).await.unwrap();
    assert_eq!(third.rules(&t), vec![deny("c", "csv")]);
    assert!(third.resolve(&who, &pdf).can_execute.value);

    // A record that is not a rule is reported, not ignored.
    use skills_store_traits::PermissionStore;
    store
        .put_rule(&t, "bad", serde_json::json!({"scope": 7}))
        .await
        .unwrap();
    assert!(third.load(&t).await.is_err());
}
