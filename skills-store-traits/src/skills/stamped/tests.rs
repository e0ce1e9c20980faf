use super::*;

/// The answer from the cache alone, when every skill is held at its stamp.
fn hit(
    cache: &StampedProjections,
    tenant: &str,
    reached: &[ReachedSkill],
) -> Option<Vec<ResolvableSkill>> {
    let lookup = cache.lookup(tenant, reached.to_vec());
    if !lookup.is_complete() {
        return None;
    }
    cache.complete(lookup, Vec::new())
}

fn skill(id: &str, slug: &str, content: &str) -> ResolvableSkill {
    let mut skill = ResolvableSkill::new(id, slug);
    skill.content = content.to_owned();
    skill
}

#[test]
fn grouping_keeps_the_highest_priority_and_any_auto_inject() {
    let grouped = group_reached([
        ReachedSkill::new("a", 1, 2, false),
        ReachedSkill::new("b", 5, 0, false),
        ReachedSkill::new("a", 1, 9, false),
        ReachedSkill::new("a", 1, -3, true),
    ]);
    assert_eq!(
        grouped,
        vec![
            ReachedSkill::new("a", 1, 9, true),
            ReachedSkill::new("b", 5, 0, false)
        ]
    );
}

#[test]
fn a_hit_needs_every_skill_at_its_exact_stamp_in_its_tenant() {
    let cache = StampedProjections::new(1 << 20);
    cache.remember(
        "t",
        &[(1, skill("a", "zeta", "A")), (2, skill("b", "alpha", "B"))],
    );
    let both = [
        ReachedSkill::new("a", 1, 4, false),
        ReachedSkill::new("b", 2, 0, true),
    ];
    let answer = hit(&cache, "t", &both).unwrap();
    // Ordered by slug, with the assignment fields of this answer.
    assert_eq!(answer[0].id, "b");
    assert!(answer[0].auto_inject);
    assert_eq!(answer[1].priority, 4);
    assert!(hit(&cache, "t", &[ReachedSkill::new("a", 3, 0, false)]).is_none());
    assert!(hit(&cache, "t", &[ReachedSkill::new("c", 1, 0, false)]).is_none());
    assert!(hit(&cache, "u", &both[..1]).is_none());
    // A newer decode replaces the older one.
    cache.remember("t", &[(3, skill("a", "zeta", "A2"))]);
    let answer = hit(&cache, "t", &[ReachedSkill::new("a", 3, 0, false)]).unwrap();
    assert_eq!(answer[0].content, "A2");
    assert!(hit(&cache, "t", &[ReachedSkill::new("a", 1, 0, false)]).is_none());
    assert_eq!(cache.len(), 2);
}

/// A miss is completed only by its row at exactly the stamp the first answer saw: a
/// row fetched at another stamp (changed between the two reads) or not fetched at all
/// (gone) makes the backend read everything again in one snapshot.
#[test]
fn a_miss_is_completed_only_at_the_stamp_first_seen() {
    let cache = StampedProjections::new(1 << 20);
    cache.remember("t", &[(1, skill("a", "a", "A"))]);
    let reached = vec![
        ReachedSkill::new("a", 1, 0, false),
        ReachedSkill::new("b", 5, 2, true),
    ];
    let lookup = cache.lookup("t", reached.clone());
    assert_eq!(lookup.missing_ids(), ["b"]);
    assert!(
        cache
            .complete(lookup, vec![(6, skill("b", "b", "B"))])
            .is_none()
    );
    let lookup = cache.lookup("t", reached.clone());
    assert!(cache.complete(lookup, Vec::new()).is_none());
    let lookup = cache.lookup("t", reached.clone());
    let done = cache
        .complete(lookup, vec![(5, skill("b", "b", "B"))])
        .unwrap();
    assert_eq!(done.len(), 2);
    assert_eq!((done[1].priority, done[1].auto_inject), (2, true));
    // Remembered: the next answer is all hits.
    assert_eq!(hit(&cache, "t", &reached).unwrap(), done);
}

/// The catalog-version answer: served only at exactly the version every assigned skill
/// was seen at (held or excluded), never for a skill remembered without a version, an
/// unknown skill, or an entry another resolution replaced after it was looked up.
#[test]
fn a_version_answer_needs_every_assigned_skill_seen_at_that_version() {
    let cache = StampedProjections::new(1 << 20);
    cache.remember("t", &[(1, skill("a", "a", "A"))]);
    let reached = vec![
        ReachedSkill::new("a", 1, 0, false),
        ReachedSkill::new("b", 2, 0, false),
    ];
    let assigned = [
        ReachingAssignment::new("b", 1, false),
        ReachingAssignment::new("a", 5, false),
        ReachingAssignment::new("x", 9, true),
        ReachingAssignment::new("b", 7, true),
    ];
    // Remembered without a version: no version answer yet.
    assert!(cache.at_version("t", 10, &assigned).is_none());
    assert!(!cache.has_versions("t"));
    let lookup = cache.lookup_at_version("t", 10, reached.clone(), vec!["x".to_owned()]);
    cache
        .complete(lookup, vec![(2, skill("b", "b", "B"))])
        .unwrap();
    assert!(cache.has_versions("t"));
    let answer = cache.at_version("t", 10, &assigned).unwrap();
    let fields: Vec<_> = answer
        .iter()
        .map(|s| (s.id.as_str(), s.priority, s.auto_inject))
        .collect();
    assert_eq!(fields, [("a", 5, false), ("b", 7, true)]);
    // Another version, another tenant, or an unseen skill: no answer.
    assert!(cache.at_version("t", 11, &assigned).is_none());
    assert!(cache.at_version("u", 10, &assigned).is_none());
    let unseen = [ReachingAssignment::new("c", 0, false)];
    assert!(cache.at_version("t", 10, &unseen).is_none());
    // Replaced by another resolution between lookup and completion: not verified.
    let lookup = cache.lookup_at_version("t", 12, reached, Vec::new());
    cache.remember("t", &[(3, skill("a", "a", "A3"))]);
    cache.complete(lookup, Vec::new()).unwrap();
    let only_a = [ReachingAssignment::new("a", 0, false)];
    assert!(cache.at_version("t", 12, &only_a).is_none());
    let only_b = [ReachingAssignment::new("b", 0, false)];
    assert!(cache.at_version("t", 12, &only_b).is_some());
}

#[test]
fn the_budget_bounds_what_is_held_and_keeps_the_recently_used() {
    let size = ENTRY_OVERHEAD + 1000 + 2 * 4;
    let cache = StampedProjections::new(8 * size);
    for i in 0..100 {
        let id = format!("s{i:02}");
        cache.remember("t", &[(i, skill(&id, &id, &"x".repeat(1000)))]);
        assert!(cache.bytes() <= 8 * size, "{} bytes", cache.bytes());
        // `s00` is used between every two insertions: it is never the one dropped.
        assert!(
            hit(&cache, "t", &[ReachedSkill::new("s00", 0, 0, false)]).is_some(),
            "after {i}"
        );
    }
    assert!(cache.len() <= 8 && cache.len() >= 6, "{}", cache.len());
    // Larger than the whole budget: not kept.
    cache.remember("t", &[(1000, skill("huge", "huge", &"x".repeat(1 << 20)))]);
    assert!(hit(&cache, "t", &[ReachedSkill::new("huge", 1000, 0, false)]).is_none());
    let off = StampedProjections::new(0);
    off.remember("t", &[(1, skill("a", "a", "A"))]);
    assert!(off.is_empty());
    assert!(
        !off.lookup("t", vec![ReachedSkill::new("a", 1, 0, false)])
            .is_complete()
    );
}

/// The byte count follows what is held: a skill disabled and enabled again, over and
/// over, and exclusions coming and going, leave it where it started.
#[test]
fn the_byte_count_does_not_drift() {
    let cache = StampedProjections::new(1 << 20);
    cache.remember("t", &[(1, skill("a", "a", "A"))]);
    let start = cache.bytes();
    for round in 0..50 {
        let version = 2 * round;
        let lookup = cache.lookup_at_version("t", version, Vec::new(), vec!["a".to_owned()]);
        cache.complete(lookup, Vec::new()).unwrap();
        let reached = vec![ReachedSkill::new("a", version + 1, 0, false)];
        let lookup = cache.lookup_at_version("t", version + 1, reached, Vec::new());
        cache
            .complete(lookup, vec![(version + 1, skill("a", "a", "A"))])
            .unwrap();
        assert_eq!(cache.bytes(), start, "round {round}");
    }
}

/// A panic while the lock was held (poisoning it) costs misses, never a wrong answer: reads
/// miss until the next write starts the cache over, and caching then works again.
#[test]
fn a_poisoned_lock_misses_then_starts_over() {
    let cache = StampedProjections::new(1 << 20);
    cache.remember("t", &[(1, skill("a", "a", "A"))]);
    let reached = [ReachedSkill::new("a", 1, 0, false)];
    assert!(hit(&cache, "t", &reached).is_some());
    let poisoned = std::thread::scope(|scope| {
        scope
            .spawn(|| {
                let _held = cache.state.write();
                panic!("a panic while the cache is locked");
            })
            .join()
    });
    assert!(poisoned.is_err());
    assert!(cache.state.is_poisoned());
    assert!(hit(&cache, "t", &reached).is_none());
    cache.remember("t", &[(2, skill("a", "a", "A2"))]);
    assert!(!cache.state.is_poisoned());
    let answer = hit(&cache, "t", &[ReachedSkill::new("a", 2, 0, false)]).unwrap();
    assert_eq!(answer[0].content, "A2");
    assert_eq!(cache.len(), 1);
}
