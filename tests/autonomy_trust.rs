//! Graduated autonomy (seed 000 part 4) through the trust-history store: both sides of every
//! threshold, resets, session-trust expiry, global approval and the upgrade request.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::sync::Arc;

use skills::security::Error;
use skills::security::autonomy::{
    ApprovalReason, Autonomy, Outcome, RiskLevel, UpgradeChoice, UpgradeRefusal,
};
use skills::store::in_memory::InMemoryTrustStore;
use skills::store::{ManualClock, TrustStore, UserScope};

fn setup() -> (Autonomy, Arc<ManualClock>, UserScope) {
    let clock = ManualClock::new(1_000);
    let autonomy = Autonomy::new(Arc::new(InMemoryTrustStore::new()), clock.clone())
        .with_session_length(60_000);
    (autonomy, clock, UserScope::new("acme", "alice"))
}

async fn succeed(a: &Autonomy, who: &UserScope, skill: &str, times: u64) {
    for _ in 0..times {
        a.record_outcome(who, skill, Outcome::Success)
            .await
            .unwrap();
    }
}

#[tokio::test]
async fn low_and_medium_run_alone_exactly_at_their_thresholds() {
    for (risk, threshold) in [(RiskLevel::Low, 3), (RiskLevel::Medium, 10)] {
        let (a, _, who) = setup();
        succeed(&a, &who, "s", threshold - 1).await;
        let below = a.should_request_approval(&who, "s", risk).await.unwrap();
        assert!(below.needs_approval, "{risk} below");
        assert_eq!(below.reason.to_string(), "Initial approval required");
        succeed(&a, &who, "s", 1).await;
        let at = a.should_request_approval(&who, "s", risk).await.unwrap();
        assert!(!at.needs_approval, "{risk} at");
        assert_eq!(
            at.reason.to_string(),
            format!("Auto-approved after {threshold} successful uses")
        );
    }
}

#[tokio::test]
async fn high_and_critical_always_ask_whatever_the_history() {
    let (a, _, who) = setup();
    succeed(&a, &who, "s", 50).await;
    let high = a
        .should_request_approval(&who, "s", RiskLevel::High)
        .await
        .unwrap();
    assert!(high.needs_approval);
    assert_eq!(
        high.reason.to_string(),
        "High-risk operation requires approval"
    );
    let critical = a
        .should_request_approval(&who, "s", RiskLevel::Critical)
        .await
        .unwrap();
    assert!(critical.needs_approval);
    assert_eq!(
        critical.reason.to_string(),
        "This operation requires explicit approval"
    );
    // Critical takes neither session trust nor global approval.
    assert!(
        a.grant_session_trust(&who, "s", RiskLevel::Critical)
            .await
            .unwrap()
            .is_none()
    );
    assert!(
        a.approve_globally(&who, "s", RiskLevel::Critical)
            .await
            .unwrap()
            .is_none()
    );
    assert!(
        a.should_request_approval(&who, "s", RiskLevel::Critical)
            .await
            .unwrap()
            .needs_approval
    );
}

#[tokio::test]
async fn session_trust_lets_high_risk_run_until_it_expires() {
    let (a, clock, who) = setup();
    a.grant_session_trust(&who, "pay", RiskLevel::High)
        .await
        .unwrap()
        .unwrap();
    let during = a
        .should_request_approval(&who, "pay", RiskLevel::High)
        .await
        .unwrap();
    assert!(!during.needs_approval);
    assert_eq!(during.reason.to_string(), "Session trust granted");
    clock.advance(59_999);
    assert!(
        !a.should_request_approval(&who, "pay", RiskLevel::High)
            .await
            .unwrap()
            .needs_approval
    );
    clock.advance(1);
    let after = a
        .should_request_approval(&who, "pay", RiskLevel::High)
        .await
        .unwrap();
    assert!(after.needs_approval);
    assert_eq!(after.reason, ApprovalReason::HighRiskRequiresApproval);
    // Low and medium do not use session trust.
    assert!(
        a.grant_session_trust(&who, "pdf", RiskLevel::Low)
            .await
            .unwrap()
            .is_none()
    );
}

#[tokio::test]
async fn global_approval_lets_low_and_medium_run() {
    let (a, _, who) = setup();
    a.approve_globally(&who, "crm", RiskLevel::Medium)
        .await
        .unwrap()
        .unwrap();
    let d = a
        .should_request_approval(&who, "crm", RiskLevel::Medium)
        .await
        .unwrap();
    assert!(!d.needs_approval);
    assert_eq!(
        d.reason.to_string(),
        "User has globally approved this skill"
    );
    // Not for high risk: it asks every session.
    assert!(
        a.approve_globally(&who, "pay", RiskLevel::High)
            .await
            .unwrap()
            .is_none()
    );
}

#[tokio::test]
async fn failure_and_negative_feedback_reset_everything_and_count_the_reset() {
    for bad in [Outcome::Failure, Outcome::NegativeFeedback] {
        let (a, _, who) = setup();
        succeed(&a, &who, "s", 12).await;
        a.approve_globally(&who, "s", RiskLevel::Low).await.unwrap();
        a.grant_session_trust(&who, "s", RiskLevel::High)
            .await
            .unwrap();
        let record = a.record_outcome(&who, "s", bad).await.unwrap();
        assert_eq!(record.successful_executions, 0);
        assert_eq!(record.failed_executions, 1);
        assert_eq!(record.trust_reset_count, 1);
        assert!(!record.globally_approved && !record.session_trust_granted);
        for risk in [RiskLevel::Low, RiskLevel::Medium, RiskLevel::High] {
            assert!(
                a.should_request_approval(&who, "s", risk)
                    .await
                    .unwrap()
                    .needs_approval
            );
        }
        // Trust grows back from zero.
        succeed(&a, &who, "s", 3).await;
        assert!(
            !a.should_request_approval(&who, "s", RiskLevel::Low)
                .await
                .unwrap()
                .needs_approval
        );
    }
}

#[tokio::test]
async fn the_upgrade_request_comes_after_ten_successes_with_the_seed_options() {
    let (a, clock, who) = setup();
    succeed(&a, &who, "crm", 9).await;
    assert!(
        a.request_autonomy_upgrade(&who, "crm", RiskLevel::Medium)
            .await
            .unwrap()
            .is_none()
    );
    succeed(&a, &who, "crm", 1).await;
    let offer = a
        .request_autonomy_upgrade(&who, "crm", RiskLevel::Medium)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        offer.message,
        "I've successfully used crm 10 times without issues. Would you like me to handle this automatically in the future?"
    );
    // All three of the seed's options, in its order; the one medium risk cannot honour is
    // marked, not dropped.
    let ids: Vec<_> = offer
        .options
        .iter()
        .map(|o| (o.id, o.label.as_str(), o.available))
        .collect();
    assert_eq!(
        ids,
        [
            (UpgradeChoice::Session, "Yes, for this session", false),
            (UpgradeChoice::Always, "Yes, always", true),
            (UpgradeChoice::No, "No, keep asking", true)
        ]
    );
    assert_eq!(
        offer.options[0].unavailable,
        Some(UpgradeRefusal::NoSessionTrust {
            risk: RiskLevel::Medium
        })
    );
    let wrong = a
        .apply_upgrade_choice(&who, "crm", RiskLevel::Medium, UpgradeChoice::Session)
        .await;
    assert!(
        matches!(
            wrong,
            Err(Error::UpgradeUnavailable {
                choice: UpgradeChoice::Session,
                risk: RiskLevel::Medium,
                refusal: UpgradeRefusal::NoSessionTrust { .. }
            })
        ),
        "{wrong:?}"
    );
    assert!(
        !a.store()
            .get(&who, "crm")
            .await
            .unwrap()
            .unwrap()
            .session_trust_granted,
        "nothing changed"
    );

    succeed(&a, &who, "pay", 10).await;
    let high = a
        .request_autonomy_upgrade(&who, "pay", RiskLevel::High)
        .await
        .unwrap()
        .unwrap();
    let ids: Vec<_> = high.options.iter().map(|o| (o.id, o.available)).collect();
    assert_eq!(
        ids,
        [
            (UpgradeChoice::Session, true),
            (UpgradeChoice::Always, false),
            (UpgradeChoice::No, true)
        ]
    );
    assert!(matches!(
        a.apply_upgrade_choice(&who, "pay", RiskLevel::High, UpgradeChoice::Always)
            .await,
        Err(Error::UpgradeUnavailable {
            refusal: UpgradeRefusal::NoGlobalApproval,
            ..
        })
    ));
    a.apply_upgrade_choice(&who, "pay", RiskLevel::High, UpgradeChoice::Session)
        .await
        .unwrap();
    assert!(
        !a.should_request_approval(&who, "pay", RiskLevel::High)
            .await
            .unwrap()
            .needs_approval
    );
    clock.advance(60_000);
    assert!(
        a.should_request_approval(&who, "pay", RiskLevel::High)
            .await
            .unwrap()
            .needs_approval
    );

    succeed(&a, &who, "wipe", 10).await;
    assert!(
        a.request_autonomy_upgrade(&who, "wipe", RiskLevel::Critical)
            .await
            .unwrap()
            .is_none()
    );
    assert!(
        a.apply_upgrade_choice(&who, "crm", RiskLevel::Medium, UpgradeChoice::No)
            .await
            .unwrap()
            .is_none()
    );
}

#[tokio::test]
async fn trust_is_per_user_and_persists_in_the_store() {
    let store = Arc::new(InMemoryTrustStore::new());
    let clock = ManualClock::new(0);
    let a = Autonomy::new(store.clone(), clock.clone());
    let alice = UserScope::new("acme", "alice");
    succeed(&a, &alice, "pdf", 3).await;
    // A fresh service over the same store remembers; Bob starts from nothing.
    let again = Autonomy::new(store.clone(), clock);
    assert!(
        !again
            .should_request_approval(&alice, "pdf", RiskLevel::Low)
            .await
            .unwrap()
            .needs_approval
    );
    let bob = UserScope::new("acme", "bob");
    assert!(
        again
            .should_request_approval(&bob, "pdf", RiskLevel::Low)
            .await
            .unwrap()
            .needs_approval
    );
    assert_eq!(
        store
            .get(&alice, "pdf")
            .await
            .unwrap()
            .unwrap()
            .successful_executions,
        3
    );
}
