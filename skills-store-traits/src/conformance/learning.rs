//! The [`LearningStore`] contract.

use futures::future::join_all;

use super::{assert_invalid, tenant};
use crate::error::{Error, Violation};
use crate::learning::{
    ExecutedStep, LearningPattern, LearningStore, MAX_SEQUENCE_STEPS, NewExecutedSequence,
    NewPattern, PatternKind, PatternStatus,
};
use crate::tenancy::TenantId;

const STATUSES: [PatternStatus; 4] = [
    PatternStatus::Detected,
    PatternStatus::Validated,
    PatternStatus::Converted,
    PatternStatus::Dismissed,
];

fn sequence(task_type: &str, skills: &[&str]) -> NewExecutedSequence {
    let steps = skills
        .iter()
        .enumerate()
        .map(|(i, skill)| ExecutedStep::new(*skill, i % 2 == 0, (i + 1) as u32, 10 * i as u64))
        .collect();
    NewExecutedSequence::new(task_type, steps, true)
}

fn pattern(hash: &str, kind: PatternKind, frequency: u64) -> NewPattern {
    NewPattern::new(
        hash,
        kind,
        vec!["pdf".into(), "summarize".into()],
        vec!["report".into()],
        frequency,
        0.75,
    )
}

/// A fresh pattern brought to `status` through allowed moves.
async fn pattern_in(
    store: &dyn LearningStore,
    t: &TenantId,
    hash: &str,
    status: PatternStatus,
) -> LearningPattern {
    use PatternStatus::{Converted, Detected, Dismissed, Validated};
    let mut record = store
        .upsert_pattern(t, pattern(hash, PatternKind::Sequence, 2))
        .await
        .unwrap();
    let path: &[PatternStatus] = match status {
        Detected => &[],
        Validated => &[Validated],
        Converted => &[Validated, Converted],
        Dismissed => &[Dismissed],
    };
    for &to in path {
        let draft = (to == Converted).then(|| format!("draft-{hash}"));
        record = store
            .set_pattern_status(t, &record.id, record.status, to, draft)
            .await
            .unwrap();
    }
    record
}

/// Runs every learning-store contract.
pub async fn run_all(store: &dyn LearningStore) {
    sequences_record_and_list(store).await;
    sequence_validation(store).await;
    prune_sequences(store).await;
    patterns_upsert(store).await;
    pattern_validation(store).await;
    list_patterns_filters_and_order(store).await;
    status_life_cycle(store).await;
    tenant_isolation(store).await;
    concurrent_writers(store).await;
}

/// Sequences come back as recorded, oldest first and in recording order, filtered by time
/// and limited to the oldest.
pub async fn sequences_record_and_list(store: &dyn LearningStore) {
    let t = tenant();
    assert!(
        store
            .list_sequences(&t, None, None)
            .await
            .unwrap()
            .is_empty()
    );
    let mut recorded = Vec::new();
    for (task, skills) in [
        ("report", &["pdf", "summarize"][..]),
        ("report", &["pdf", "summarize", "email"][..]),
        ("triage", &["jira"][..]),
        ("report", &["pdf"][..]),
    ] {
        let new = sequence(task, skills);
        let record = store.record_sequence(&t, new.clone()).await.unwrap();
        assert!(!record.id.is_empty());
        assert_eq!(record.tenant, t);
        assert_eq!(
            (&record.task_type, &record.steps, record.success),
            (&new.task_type, &new.steps, new.success),
            "recorded as given"
        );
        recorded.push(record);
    }
    let all = store.list_sequences(&t, None, None).await.unwrap();
    assert_eq!(all, recorded, "oldest first, in recording order");
    assert!(all.windows(2).all(|w| w[0].recorded_at <= w[1].recorded_at));

    let since = recorded[2].recorded_at;
    let later = store.list_sequences(&t, Some(since), None).await.unwrap();
    let expected: Vec<_> = recorded
        .iter()
        .filter(|s| s.recorded_at >= since)
        .cloned()
        .collect();
    assert_eq!(later, expected, "`since` is inclusive");
    assert!(later.len() >= 2);

    let first_two = store.list_sequences(&t, None, Some(2)).await.unwrap();
    assert_eq!(first_two, recorded[..2], "`limit` keeps the oldest");
    assert!(
        store
            .list_sequences(&t, None, Some(0))
            .await
            .unwrap()
            .is_empty()
    );
    let future = recorded[3].recorded_at + 1;
    assert!(
        store
            .list_sequences(&t, Some(future), None)
            .await
            .unwrap()
            .is_empty()
    );
}

/// Sequence rules are named by field; refusals write nothing.
pub async fn sequence_validation(store: &dyn LearningStore) {
    let t = tenant();
    let mut empty_task = sequence("report", &["pdf"]);
    empty_task.task_type.clear();
    assert_invalid(
        store.record_sequence(&t, empty_task).await,
        "task_type",
        |v| *v == Violation::Empty,
    );
    let no_steps = NewExecutedSequence::new("report", Vec::new(), true);
    assert_invalid(store.record_sequence(&t, no_steps).await, "steps", |v| {
        *v == Violation::Empty
    });
    let mut blank = sequence("report", &["pdf", "x"]);
    blank.steps[1].skill_id.clear();
    assert_invalid(
        store.record_sequence(&t, blank).await,
        "steps[1].skill_id",
        |v| *v == Violation::Empty,
    );
    let mut never = sequence("report", &["pdf"]);
    never.steps[0].attempts = 0;
    assert_invalid(
        store.record_sequence(&t, never).await,
        "steps[0].attempts",
        |v| matches!(v, Violation::OutOfRange { .. }),
    );
    let long = vec!["s"; MAX_SEQUENCE_STEPS + 1];
    assert_invalid(
        store.record_sequence(&t, sequence("report", &long)).await,
        "steps",
        |v| matches!(v, Violation::TooMany { .. }),
    );
    let longest = vec!["s"; MAX_SEQUENCE_STEPS];
    store
        .record_sequence(&t, sequence("report", &longest))
        .await
        .unwrap();
    assert_eq!(
        store.list_sequences(&t, None, None).await.unwrap().len(),
        1,
        "only the valid sequence was recorded"
    );
}

/// Pruning deletes exactly the tenant's sequences recorded before the cut.
pub async fn prune_sequences(store: &dyn LearningStore) {
    let t = tenant();
    let mut recorded = Vec::new();
    for i in 0..5 {
        let record = store
            .record_sequence(&t, sequence(&format!("task-{i}"), &["pdf"]))
            .await
            .unwrap();
        recorded.push(record);
    }
    assert_eq!(store.prune_sequences(&t, i64::MIN).await.unwrap(), 0);
    let cut = recorded[3].recorded_at;
    let before = recorded.iter().filter(|s| s.recorded_at < cut).count() as u64;
    assert_eq!(store.prune_sequences(&t, cut).await.unwrap(), before);
    let kept: Vec<_> = recorded
        .iter()
        .filter(|s| s.recorded_at >= cut)
        .cloned()
        .collect();
    assert_eq!(store.list_sequences(&t, None, None).await.unwrap(), kept);
    assert_eq!(
        store.prune_sequences(&t, i64::MAX).await.unwrap(),
        kept.len() as u64
    );
    assert!(
        store
            .list_sequences(&t, None, None)
            .await
            .unwrap()
            .is_empty()
    );
}

/// A new hash is detected; a known one is refreshed (frequency, rate, task types, last
/// seen) keeping its identity and status; a hash reused for another kind or other skills is
/// refused.
pub async fn patterns_upsert(store: &dyn LearningStore) {
    let t = tenant();
    let new = pattern("seq:pdf>summarize", PatternKind::Sequence, 3);
    let created = store.upsert_pattern(&t, new.clone()).await.unwrap();
    assert!(!created.id.is_empty());
    assert_eq!(created.tenant, t);
    assert_eq!(
        created.status,
        PatternStatus::Detected,
        "new patterns are detected"
    );
    assert_eq!(
        (
            &created.pattern_hash,
            created.kind,
            &created.skills,
            &created.task_types
        ),
        (&new.pattern_hash, new.kind, &new.skills, &new.task_types)
    );
    assert_eq!((created.frequency, created.success_rate), (3, 0.75));
    assert_eq!(created.draft_skill_id, None);
    assert_eq!(created.first_seen, created.last_seen);
    assert_eq!(created.updated_at, created.first_seen);
    assert_eq!(
        store.get_pattern(&t, &created.id).await.unwrap(),
        Some(created.clone())
    );
    assert_eq!(
        store
            .find_pattern_by_hash(&t, &new.pattern_hash)
            .await
            .unwrap(),
        Some(created.clone())
    );

    let mut again = new.clone();
    again.frequency = 7;
    again.success_rate = 0.5;
    again.task_types = vec!["digest".into(), "report".into()];
    let refreshed = store.upsert_pattern(&t, again).await.unwrap();
    assert_eq!(refreshed.id, created.id, "same hash, same pattern");
    assert_eq!((refreshed.frequency, refreshed.success_rate), (7, 0.5));
    assert_eq!(refreshed.task_types, ["digest", "report"]);
    assert_eq!(refreshed.first_seen, created.first_seen, "first seen stays");
    assert!(refreshed.last_seen >= created.last_seen);
    assert_eq!(
        store.get_pattern(&t, &created.id).await.unwrap(),
        Some(refreshed.clone())
    );

    let dismissed = store
        .set_pattern_status(
            &t,
            &created.id,
            PatternStatus::Detected,
            PatternStatus::Dismissed,
            None,
        )
        .await
        .unwrap();
    let recurring = store.upsert_pattern(&t, new.clone()).await.unwrap();
    assert_eq!(
        recurring.status,
        PatternStatus::Dismissed,
        "a dismissed pattern stays dismissed however often it recurs"
    );
    assert_eq!(recurring.frequency, 3);
    assert!(recurring.updated_at >= dismissed.updated_at);

    let mut other_kind = new.clone();
    other_kind.kind = PatternKind::Retry;
    let result = store.upsert_pattern(&t, other_kind).await;
    assert!(
        matches!(result, Err(Error::Conflict { .. })),
        "a hash reused for another kind: {result:?}"
    );
    let mut other_skills = new.clone();
    other_skills.skills = vec!["pdf".into()];
    let result = store.upsert_pattern(&t, other_skills).await;
    assert!(
        matches!(result, Err(Error::Conflict { .. })),
        "a hash reused for other skills: {result:?}"
    );
    assert_eq!(
        store.get_pattern(&t, &created.id).await.unwrap(),
        Some(recurring),
        "the clashes changed nothing"
    );
    assert_eq!(store.get_pattern(&t, "missing").await.unwrap(), None);
    assert_eq!(
        store.find_pattern_by_hash(&t, "missing").await.unwrap(),
        None
    );
}

/// Spoils one field of a valid pattern.
type Spoil = fn(&mut NewPattern);

/// Pattern rules are named by field; refusals write nothing.
pub async fn pattern_validation(store: &dyn LearningStore) {
    let t = tenant();
    let cases: [(&str, Spoil); 9] = [
        ("pattern_hash", |p| p.pattern_hash.clear()),
        ("pattern_hash", |p| p.pattern_hash = "h".repeat(129)),
        ("skills", |p| p.skills.clear()),
        ("skills[1]", |p| p.skills[1].clear()),
        ("task_types[0]", |p| p.task_types[0].clear()),
        ("frequency", |p| p.frequency = 0),
        ("success_rate", |p| p.success_rate = -0.01),
        ("success_rate", |p| p.success_rate = 1.01),
        ("success_rate", |p| p.success_rate = f64::NAN),
    ];
    for (field, spoil) in cases {
        let mut new = pattern("h", PatternKind::Composite, 1);
        spoil(&mut new);
        assert_invalid(store.upsert_pattern(&t, new).await, field, |v| {
            matches!(v, Violation::Empty | Violation::OutOfRange { .. })
        });
    }
    assert!(
        store
            .list_patterns(&t, None, None)
            .await
            .unwrap()
            .is_empty(),
        "nothing was written"
    );
    let edge = NewPattern::new(
        "h".repeat(128),
        PatternKind::Retry,
        vec!["a".into()],
        vec![],
        1,
        0.0,
    );
    store.upsert_pattern(&t, edge).await.unwrap();
    let mut full = pattern("full", PatternKind::Retry, u64::MAX);
    full.success_rate = 1.0;
    let stored = store.upsert_pattern(&t, full).await.unwrap();
    assert_eq!(
        store
            .get_pattern(&t, &stored.id)
            .await
            .unwrap()
            .map(|p| p.frequency),
        Some(u64::MAX),
        "frequencies round-trip"
    );
}

/// Patterns are listed most frequent first, ties by hash, filtered by status and kind.
pub async fn list_patterns_filters_and_order(store: &dyn LearningStore) {
    let t = tenant();
    for (hash, kind, frequency) in [
        ("b", PatternKind::Sequence, 5),
        ("a", PatternKind::Retry, 5),
        ("c", PatternKind::Composite, 9),
        ("d", PatternKind::Sequence, 1),
        ("e", PatternKind::Retry, 12),
    ] {
        store
            .upsert_pattern(&t, pattern(hash, kind, frequency))
            .await
            .unwrap();
    }
    let hashes = |patterns: Vec<LearningPattern>| -> Vec<String> {
        patterns.into_iter().map(|p| p.pattern_hash).collect()
    };
    assert_eq!(
        hashes(store.list_patterns(&t, None, None).await.unwrap()),
        ["e", "c", "a", "b", "d"],
        "frequency descending, then hash"
    );
    assert_eq!(
        hashes(
            store
                .list_patterns(&t, None, Some(PatternKind::Retry))
                .await
                .unwrap()
        ),
        ["e", "a"]
    );
    let e = store.find_pattern_by_hash(&t, "e").await.unwrap().unwrap();
    store
        .set_pattern_status(
            &t,
            &e.id,
            PatternStatus::Detected,
            PatternStatus::Dismissed,
            None,
        )
        .await
        .unwrap();
    assert_eq!(
        hashes(
            store
                .list_patterns(&t, Some(PatternStatus::Detected), None)
                .await
                .unwrap()
        ),
        ["c", "a", "b", "d"]
    );
    assert_eq!(
        hashes(
            store
                .list_patterns(&t, Some(PatternStatus::Dismissed), Some(PatternKind::Retry))
                .await
                .unwrap()
        ),
        ["e"]
    );
    assert!(
        store
            .list_patterns(&t, Some(PatternStatus::Converted), None)
            .await
            .unwrap()
            .is_empty()
    );
}

/// Every one of the 16 status pairs: the five allowed moves succeed, the rest are refused
/// naming the transition; a stale expectation, a missing pattern and a conversion without a
/// draft are refused too.
pub async fn status_life_cycle(store: &dyn LearningStore) {
    let t = tenant();
    for from in STATUSES {
        for to in STATUSES {
            let hash = format!("{from}-{to}");
            let record = pattern_in(store, &t, &hash, from).await;
            assert_eq!(record.status, from);
            let draft = Some(format!("skill-{hash}"));
            let result = store
                .set_pattern_status(&t, &record.id, from, to, draft.clone())
                .await;
            if from.can_become(to) {
                let moved = result.unwrap();
                assert_eq!(moved.status, to, "{from} -> {to}");
                assert_eq!(moved.draft_skill_id, draft, "a given draft is stored");
                assert!(moved.updated_at >= record.updated_at);
                assert_eq!(moved.first_seen, record.first_seen);
                assert_eq!(
                    store.get_pattern(&t, &record.id).await.unwrap(),
                    Some(moved)
                );
            } else {
                assert_invalid(result, "status", |v| {
                    *v == Violation::Transition {
                        from: from.as_str(),
                        to: to.as_str(),
                    }
                });
                assert_eq!(
                    store.get_pattern(&t, &record.id).await.unwrap(),
                    Some(record),
                    "a refused move changes nothing"
                );
            }
        }
    }

    let record = pattern_in(store, &t, "stale", PatternStatus::Validated).await;
    let stale = store
        .set_pattern_status(
            &t,
            &record.id,
            PatternStatus::Detected,
            PatternStatus::Dismissed,
            None,
        )
        .await;
    assert!(
        matches!(&stale, Err(Error::Stale { expected, found, .. }) if expected == "detected" && found == "validated"),
        "a stale expectation is refused: {stale:?}"
    );
    let missing = store
        .set_pattern_status(
            &t,
            "missing",
            PatternStatus::Detected,
            PatternStatus::Validated,
            None,
        )
        .await;
    assert!(
        matches!(missing, Err(Error::NotFound { .. })),
        "{missing:?}"
    );
    let illegal_and_missing = store
        .set_pattern_status(
            &t,
            "missing",
            PatternStatus::Converted,
            PatternStatus::Detected,
            None,
        )
        .await;
    assert_invalid(illegal_and_missing, "status", |v| {
        matches!(v, Violation::Transition { .. })
    });

    let no_draft = store
        .set_pattern_status(
            &t,
            &record.id,
            PatternStatus::Validated,
            PatternStatus::Converted,
            None,
        )
        .await;
    assert_invalid(no_draft, "draft_skill_id", |v| *v == Violation::Empty);
    let blank = store
        .set_pattern_status(
            &t,
            &record.id,
            PatternStatus::Validated,
            PatternStatus::Converted,
            Some(String::new()),
        )
        .await;
    assert_invalid(blank, "draft_skill_id", |v| *v == Violation::Empty);
    assert_eq!(
        store.get_pattern(&t, &record.id).await.unwrap(),
        Some(record.clone())
    );

    let reopened = pattern_in(store, &t, "reopen", PatternStatus::Dismissed).await;
    let reopened = store
        .set_pattern_status(
            &t,
            &reopened.id,
            PatternStatus::Dismissed,
            PatternStatus::Detected,
            None,
        )
        .await
        .unwrap();
    assert_eq!(
        reopened.status,
        PatternStatus::Detected,
        "dismissed can be reopened"
    );
    let drafted = store
        .set_pattern_status(
            &t,
            &reopened.id,
            PatternStatus::Detected,
            PatternStatus::Validated,
            Some("draft-7".into()),
        )
        .await
        .unwrap();
    let converted = store
        .set_pattern_status(
            &t,
            &drafted.id,
            PatternStatus::Validated,
            PatternStatus::Converted,
            None,
        )
        .await
        .unwrap();
    assert_eq!(
        converted.draft_skill_id.as_deref(),
        Some("draft-7"),
        "a stored draft satisfies conversion and is kept"
    );
}

/// Another tenant sees none of the owner's sequences or patterns and changes none; the
/// same hash in another tenant is another pattern.
pub async fn tenant_isolation(store: &dyn LearningStore) {
    let owner = tenant();
    let sequence_record = store
        .record_sequence(&owner, sequence("report", &["pdf", "summarize"]))
        .await
        .unwrap();
    let record = store
        .upsert_pattern(&owner, pattern("shared-hash", PatternKind::Sequence, 4))
        .await
        .unwrap();
    let intruder = tenant();

    assert!(
        store
            .list_sequences(&intruder, None, None)
            .await
            .unwrap()
            .is_empty()
    );
    assert_eq!(store.prune_sequences(&intruder, i64::MAX).await.unwrap(), 0);
    assert_eq!(
        store.get_pattern(&intruder, &record.id).await.unwrap(),
        None
    );
    assert_eq!(
        store
            .find_pattern_by_hash(&intruder, "shared-hash")
            .await
            .unwrap(),
        None
    );
    assert!(
        store
            .list_patterns(&intruder, None, None)
            .await
            .unwrap()
            .is_empty()
    );
    let result = store
        .set_pattern_status(
            &intruder,
            &record.id,
            PatternStatus::Detected,
            PatternStatus::Dismissed,
            None,
        )
        .await;
    assert!(matches!(result, Err(Error::NotFound { .. })), "{result:?}");

    let mut theirs = pattern("shared-hash", PatternKind::Retry, 99);
    theirs.skills = vec!["other".into()];
    let theirs = store.upsert_pattern(&intruder, theirs).await.unwrap();
    assert_ne!(theirs.id, record.id, "hashes are unique per tenant only");
    assert_eq!(theirs.status, PatternStatus::Detected);

    assert_eq!(
        store.get_pattern(&owner, &record.id).await.unwrap(),
        Some(record)
    );
    assert_eq!(
        store.list_sequences(&owner, None, None).await.unwrap(),
        vec![sequence_record]
    );
}

/// Concurrent writers: no recorded sequence is lost, concurrent upserts of one hash make
/// one pattern, and one of many compare-and-sets from one status wins.
pub async fn concurrent_writers(store: &dyn LearningStore) {
    let t = tenant();
    let t = &t;
    let records =
        (0..64).map(|i| store.record_sequence(t, sequence(&format!("task-{i}"), &["pdf"])));
    assert!(join_all(records).await.iter().all(Result::is_ok));
    let listed = store.list_sequences(t, None, None).await.unwrap();
    assert_eq!(listed.len(), 64, "no concurrent sequence was lost");
    assert!(
        listed
            .windows(2)
            .all(|w| w[0].recorded_at <= w[1].recorded_at)
    );

    let upserts =
        (1..=32).map(|f| store.upsert_pattern(t, pattern("hot", PatternKind::Sequence, f)));
    let results = join_all(upserts).await;
    let ids: std::collections::BTreeSet<String> =
        results.into_iter().map(|r| r.unwrap().id).collect();
    assert_eq!(ids.len(), 1, "one hash, one pattern");
    assert_eq!(store.list_patterns(t, None, None).await.unwrap().len(), 1);

    let id = ids.into_iter().next().unwrap_or_default();
    let id = id.as_str();
    let moves = (0..16).map(|i| {
        let to = if i % 2 == 0 {
            PatternStatus::Validated
        } else {
            PatternStatus::Dismissed
        };
        store.set_pattern_status(t, id, PatternStatus::Detected, to, None)
    });
    let results = join_all(moves).await;
    let winners: Vec<_> = results.iter().filter_map(|r| r.as_ref().ok()).collect();
    assert_eq!(winners.len(), 1, "exactly one move from detected wins");
    assert!(
        results
            .iter()
            .filter_map(|r| r.as_ref().err())
            .all(|e| matches!(e, Error::Stale { .. }))
    );
    let stored = store.get_pattern(t, id).await.unwrap().unwrap();
    assert_eq!(stored.status, winners[0].status);
}
