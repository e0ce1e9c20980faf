//! The pattern review life cycle through the engine: detected → validated → converted, and
//! dismissed, with every refused move refused by the store's compare-and-set.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod orchestrate_learn_fixture;

use std::sync::Arc;

use orchestrate_learn_fixture::{history, ok};
use skills_orchestrate::Error;
use skills_orchestrate::learn::LearningEngine;
use skills_store_traits::in_memory::InMemoryLearningStore;
use skills_store_traits::learning::{LearningPattern, PatternKind, PatternStatus};
use skills_store_traits::{TenantId, Violation};

async fn detected() -> (LearningEngine, TenantId, LearningPattern) {
    let engine = LearningEngine::new(Arc::new(InMemoryLearningStore::new()));
    let acme = TenantId::new("acme");
    for run in history() {
        engine
            .record(&acme, &run.task_type, run.steps)
            .await
            .unwrap();
    }
    let found = engine.detect(&acme).await.unwrap();
    let pattern = found
        .into_iter()
        .find(|p| p.kind == PatternKind::Sequence && p.skills.len() == 3)
        .unwrap();
    assert_eq!(pattern.status, PatternStatus::Detected);
    (engine, acme, pattern)
}

fn is_stale(err: &Error) -> bool {
    matches!(err, Error::Store(skills_store_traits::Error::Stale { .. }))
}

fn is_refused_transition(err: &Error) -> bool {
    matches!(
        err,
        Error::Store(e) if matches!(e.violation(), Some(Violation::Transition { .. }))
    )
}

#[tokio::test]
async fn detected_validated_converted() {
    let (engine, acme, pattern) = detected().await;
    let draft = engine.draft(&acme, &pattern.id).await.unwrap();
    assert_eq!(draft.pattern_hash, pattern.pattern_hash);

    let validated = engine.validate(&acme, &pattern.id).await.unwrap();
    assert_eq!(validated.status, PatternStatus::Validated);
    let converted = engine.convert(&acme, &pattern.id, "skill-7").await.unwrap();
    assert_eq!(converted.status, PatternStatus::Converted);
    assert_eq!(converted.draft_skill_id.as_deref(), Some("skill-7"));

    // Converted is final: every way out is refused and nothing changes.
    let err = engine
        .dismiss(&acme, &pattern.id, PatternStatus::Converted)
        .await
        .unwrap_err();
    assert!(is_refused_transition(&err), "{err}");
    assert!(is_stale(
        &engine.validate(&acme, &pattern.id).await.unwrap_err()
    ));
    assert!(is_stale(
        &engine.reopen(&acme, &pattern.id).await.unwrap_err()
    ));
    // Re-detection keeps it converted.
    engine
        .record(
            &acme,
            "follow-up",
            vec![ok("crm-lookup"), ok("enrich"), ok("draft-email")],
        )
        .await
        .unwrap();
    let again = engine.detect(&acme).await.unwrap();
    let same = again.iter().find(|p| p.id == pattern.id).unwrap();
    assert_eq!(same.status, PatternStatus::Converted);
    assert_eq!(same.draft_skill_id.as_deref(), Some("skill-7"));
    assert_eq!(same.frequency, 5);
}

#[tokio::test]
async fn converting_needs_a_validated_pattern() {
    let (engine, acme, pattern) = detected().await;
    let err = engine
        .convert(&acme, &pattern.id, "skill-7")
        .await
        .unwrap_err();
    assert!(is_stale(&err), "{err}");
    let stored = engine
        .store()
        .get_pattern(&acme, &pattern.id)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(stored.status, PatternStatus::Detected);
    assert_eq!(stored.draft_skill_id, None);
}

#[tokio::test]
async fn dismiss_and_reopen_are_compare_and_set() {
    let (engine, acme, pattern) = detected().await;
    // A reviewer who saw it validated is refused: it is still detected.
    let err = engine
        .dismiss(&acme, &pattern.id, PatternStatus::Validated)
        .await
        .unwrap_err();
    assert!(is_stale(&err), "{err}");

    let dismissed = engine
        .dismiss(&acme, &pattern.id, PatternStatus::Detected)
        .await
        .unwrap();
    assert_eq!(dismissed.status, PatternStatus::Dismissed);
    // Two reviewers dismissing at once: the second loses.
    let err = engine
        .dismiss(&acme, &pattern.id, PatternStatus::Detected)
        .await
        .unwrap_err();
    assert!(is_stale(&err), "{err}");
    // Dismissed cannot be validated without reopening.
    assert!(is_stale(
        &engine.validate(&acme, &pattern.id).await.unwrap_err()
    ));
    let reopened = engine.reopen(&acme, &pattern.id).await.unwrap();
    assert_eq!(reopened.status, PatternStatus::Detected);
    assert_eq!(
        engine.validate(&acme, &pattern.id).await.unwrap().status,
        PatternStatus::Validated
    );
}

#[tokio::test]
async fn another_tenant_cannot_see_or_move_the_pattern() {
    let (engine, acme, pattern) = detected().await;
    let other = TenantId::new("other");
    let err = engine.validate(&other, &pattern.id).await.unwrap_err();
    assert!(
        matches!(
            err,
            Error::Store(skills_store_traits::Error::NotFound { .. })
        ),
        "{err}"
    );
    let err = engine.draft(&other, &pattern.id).await.unwrap_err();
    assert!(
        matches!(
            err,
            Error::Store(skills_store_traits::Error::NotFound { .. })
        ),
        "{err}"
    );
    let stored = engine
        .store()
        .get_pattern(&acme, &pattern.id)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(stored.status, PatternStatus::Detected);
}
