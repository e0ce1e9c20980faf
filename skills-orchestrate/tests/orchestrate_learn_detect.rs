//! Pattern detection on a recorded history: which patterns are found, how often, and that
//! detecting again or in another order changes nothing.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod orchestrate_learn_fixture;

use std::sync::Arc;

use orchestrate_learn_fixture::{history, ok, run};
use proptest::prelude::*;
use skills_orchestrate::learn::{
    DetectedPattern, DetectorConfig, LearningEngine, PatternDetector, pattern_hash,
};
use skills_store_traits::in_memory::InMemoryLearningStore;
use skills_store_traits::learning::{
    ExecutedStep, NewExecutedSequence, PatternKind, PatternStatus,
};
use skills_store_traits::{LearningStore, ManualClock, TenantId};

/// A pattern as (kind, skills, task types, frequency, successes), for whole-answer asserts.
type Summary = (PatternKind, Vec<String>, Vec<String>, u64, u64);

fn summary(found: &[DetectedPattern]) -> Vec<Summary> {
    found
        .iter()
        .map(|p| {
            (
                p.kind,
                p.skills.clone(),
                p.task_types.clone(),
                p.frequency,
                p.successes,
            )
        })
        .collect()
}

fn expect(kind: PatternKind, skills: &[&str], tasks: &[&str], freq: u64, ok: u64) -> Summary {
    (
        kind,
        skills.iter().map(|s| (*s).to_owned()).collect(),
        tasks.iter().map(|s| (*s).to_owned()).collect(),
        freq,
        ok,
    )
}

fn at(threshold: u64) -> PatternDetector {
    PatternDetector::new(DetectorConfig::default().with_threshold(threshold))
}

use PatternKind::{Composite, Retry, Sequence};

#[test]
fn the_fixed_history_yields_exactly_the_known_patterns() {
    let found = at(3).detect(&history());
    assert_eq!(
        summary(&found),
        vec![
            expect(
                Sequence,
                &["pdf-extract", "summarize"],
                &["digest", "report"],
                6,
                6
            ),
            expect(
                Sequence,
                &["crm-lookup", "enrich"],
                &["follow-up", "misc"],
                5,
                5
            ),
            expect(
                Sequence,
                &["crm-lookup", "enrich", "draft-email"],
                &["follow-up"],
                4,
                3
            ),
            expect(Retry, &["web-fetch"], &["report", "research"], 4, 3),
            expect(
                Composite,
                &["crm-lookup", "draft-email", "enrich"],
                &["follow-up"],
                3,
                2
            ),
            expect(Composite, &["pdf-extract", "summarize"], &["report"], 3, 3),
        ]
    );
    let web_fetch = &found[3];
    assert_eq!(web_fetch.success_rate(), 0.75);
    for pattern in &found {
        let composite_task = (pattern.kind == Composite).then(|| pattern.task_types[0].as_str());
        assert_eq!(
            pattern.pattern_hash,
            pattern_hash(pattern.kind, &pattern.skills, composite_task)
        );
    }
}

#[test]
fn below_threshold_patterns_appear_only_when_the_threshold_drops() {
    let at_three = summary(&at(3).detect(&history()));
    let at_two = summary(&at(2).detect(&history()));
    let extra: Vec<&Summary> = at_two.iter().filter(|p| !at_three.contains(p)).collect();
    assert_eq!(
        extra,
        vec![
            &expect(Sequence, &["web-fetch", "notes"], &["research"], 2, 0),
            &expect(Retry, &["pdf-extract"], &["digest"], 2, 2),
            &expect(Composite, &["notes", "web-fetch"], &["research"], 2, 1),
            &expect(Composite, &["pdf-extract", "summarize"], &["digest"], 2, 2),
        ]
    );
    // Raising the threshold only removes patterns.
    let at_five = summary(&at(5).detect(&history()));
    assert_eq!(
        at_five,
        vec![
            expect(
                Sequence,
                &["pdf-extract", "summarize"],
                &["digest", "report"],
                6,
                6
            ),
            expect(
                Sequence,
                &["crm-lookup", "enrich"],
                &["follow-up", "misc"],
                5,
                5
            ),
        ]
    );
}

#[test]
fn noise_makes_no_pattern() {
    let noise: Vec<NewExecutedSequence> = history().split_off(14);
    assert!(at(2).detect(&noise).is_empty());
    // Nor does noise added to the history change what the history finds.
    let mut without_noise = history();
    without_noise.truncate(14);
    without_noise.push(run(
        "misc",
        vec![ok("crm-lookup"), ok("enrich"), ok("notes")],
    ));
    assert_eq!(
        summary(&at(3).detect(&without_noise)),
        summary(&at(3).detect(&history()))
    );
}

#[test]
fn a_pattern_is_counted_once_per_run() {
    let looping = run(
        "loop",
        vec![ok("a"), ok("b"), ok("a"), ok("b"), ok("a"), ok("b")],
    );
    let found = at(1).detect(std::slice::from_ref(&looping));
    assert!(found.iter().all(|p| p.frequency == 1));
    // Two runs: still 2, however many repeats each holds.
    let found = at(2).detect(&[looping.clone(), looping]);
    let sequences: Vec<&DetectedPattern> = found.iter().filter(|p| p.kind == Sequence).collect();
    assert_eq!(
        sequences.len(),
        1,
        "only the maximal sequence: {sequences:?}"
    );
    assert_eq!(sequences[0].skills, ["a", "b", "a", "b", "a", "b"]);
    assert_eq!(sequences[0].frequency, 2);
}

#[test]
fn max_sequence_len_bounds_the_sequences() {
    let long = run(
        "long",
        ["s1", "s2", "s3", "s4", "s5"]
            .iter()
            .map(|s| ok(s))
            .collect(),
    );
    let history = vec![long.clone(), long.clone(), long];
    let config = DetectorConfig::default()
        .with_threshold(3)
        .with_max_sequence_len(3);
    let sequences: Vec<Vec<String>> = PatternDetector::new(config)
        .detect(&history)
        .into_iter()
        .filter(|p| p.kind == Sequence)
        .map(|p| p.skills)
        .collect();
    assert_eq!(
        sequences,
        vec![
            vec!["s1", "s2", "s3"],
            vec!["s2", "s3", "s4"],
            vec!["s3", "s4", "s5"]
        ]
    );
}

fn store() -> Arc<InMemoryLearningStore> {
    Arc::new(InMemoryLearningStore::with_clock(ManualClock::new(1_000)))
}

async fn record_all(engine: &LearningEngine, tenant: &TenantId, runs: Vec<NewExecutedSequence>) {
    for r in runs {
        engine.record(tenant, &r.task_type, r.steps).await.unwrap();
    }
}

#[tokio::test]
async fn detection_through_the_store_is_idempotent() {
    let store = store();
    let engine = LearningEngine::new(store.clone());
    let acme = TenantId::new("acme");
    record_all(&engine, &acme, history()).await;

    let first = engine.detect(&acme).await.unwrap();
    assert_eq!(first.len(), 6);
    let second = engine.detect(&acme).await.unwrap();
    let frequencies = |ps: &[skills_store_traits::learning::LearningPattern]| {
        ps.iter()
            .map(|p| (p.pattern_hash.clone(), p.id.clone(), p.frequency))
            .collect::<Vec<_>>()
    };
    assert_eq!(frequencies(&first), frequencies(&second));
    assert_eq!(
        store.list_patterns(&acme, None, None).await.unwrap().len(),
        6
    );

    // One more follow-up run: the three-step sequence is now seen in 5 runs, not 4 + 5.
    engine
        .record(
            &acme,
            "follow-up",
            vec![ok("crm-lookup"), ok("enrich"), ok("draft-email")],
        )
        .await
        .unwrap();
    let third = engine.detect(&acme).await.unwrap();
    let chain = third
        .iter()
        .find(|p| p.kind == Sequence && p.skills.len() == 3)
        .unwrap();
    assert_eq!(chain.frequency, 5);
    assert_eq!(chain.success_rate, 0.8);
    let same = first
        .iter()
        .find(|p| p.pattern_hash == chain.pattern_hash)
        .unwrap();
    assert_eq!(same.id, chain.id, "the same record, refreshed");
    // Other tenants learn nothing from acme.
    assert!(
        engine
            .detect(&TenantId::new("other"))
            .await
            .unwrap()
            .is_empty()
    );
}

#[tokio::test]
async fn a_dismissed_pattern_stays_dismissed_when_it_recurs() {
    let engine = LearningEngine::new(store());
    let acme = TenantId::new("acme");
    record_all(&engine, &acme, history()).await;
    let found = engine.detect(&acme).await.unwrap();
    let retry = found.iter().find(|p| p.kind == Retry).unwrap();
    engine
        .dismiss(&acme, &retry.id, PatternStatus::Detected)
        .await
        .unwrap();

    engine
        .record(
            &acme,
            "research",
            vec![ExecutedStep::new("web-fetch", true, 4, 10)],
        )
        .await
        .unwrap();
    let again = engine.detect(&acme).await.unwrap();
    let retry = again.iter().find(|p| p.kind == Retry).unwrap();
    assert_eq!(retry.status, PatternStatus::Dismissed);
    assert_eq!(retry.frequency, 5);
}

#[tokio::test]
async fn detect_since_reads_only_the_window() {
    let clock = ManualClock::new(0);
    let store = Arc::new(InMemoryLearningStore::with_clock(clock.clone()));
    let engine = LearningEngine::new(store);
    let acme = TenantId::new("acme");
    record_all(&engine, &acme, history()).await;
    clock.set(10_000);
    record_all(&engine, &acme, vec![run("late", vec![ok("x"), ok("y")]); 3]).await;
    let recent = engine.detect_since(&acme, Some(10_000)).await.unwrap();
    let skills: Vec<(PatternKind, Vec<String>)> =
        recent.iter().map(|p| (p.kind, p.skills.clone())).collect();
    assert_eq!(
        skills,
        vec![
            (Sequence, vec!["x".to_owned(), "y".to_owned()]),
            (Composite, vec!["x".to_owned(), "y".to_owned()])
        ]
    );
}

fn arb_step() -> impl Strategy<Value = ExecutedStep> {
    (
        prop::sample::select(vec!["a", "b", "c", "d"]),
        any::<bool>(),
        1u32..4,
    )
        .prop_map(|(skill, success, attempts)| ExecutedStep::new(skill, success, attempts, 1))
}

fn arb_run() -> impl Strategy<Value = NewExecutedSequence> {
    (
        prop::sample::select(vec!["t1", "t2"]),
        prop::collection::vec(arb_step(), 1..7),
        any::<bool>(),
    )
        .prop_map(|(task, steps, success)| NewExecutedSequence::new(task, steps, success))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    /// The order runs were recorded in changes no pattern: not its hash, frequency,
    /// successes or task types.
    #[test]
    fn detection_is_independent_of_record_order(
        (original, shuffled) in prop::collection::vec(arb_run(), 0..24)
            .prop_flat_map(|runs| (Just(runs.clone()), Just(runs).prop_shuffle())),
        threshold in 1u64..4,
    ) {
        let detector = at(threshold);
        prop_assert_eq!(detector.detect(&original), detector.detect(&shuffled));
    }

    /// A composite is the same pattern whatever order its skills ran in, and every
    /// reported pattern is within its bounds.
    #[test]
    fn composites_ignore_step_order(runs in prop::collection::vec(arb_run(), 0..24)) {
        let reversed: Vec<NewExecutedSequence> = runs
            .iter()
            .map(|r| {
                let mut steps = r.steps.clone();
                steps.reverse();
                NewExecutedSequence::new(r.task_type.clone(), steps, r.success)
            })
            .collect();
        let composites = |found: Vec<DetectedPattern>| -> Vec<DetectedPattern> {
            found.into_iter().filter(|p| p.kind == Composite).collect()
        };
        let detector = at(2);
        let found = detector.detect(&runs);
        for p in &found {
            prop_assert!(p.frequency >= 2 && p.frequency <= runs.len() as u64);
            prop_assert!(p.successes <= p.frequency);
            prop_assert_eq!(p.pattern_hash.len(), 64);
        }
        prop_assert_eq!(composites(found), composites(detector.detect(&reversed)));
    }
}
