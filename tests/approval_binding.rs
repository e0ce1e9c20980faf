//! Issue 34, finding 6: an approval is bound to the step it was given for, used once, and
//! a recorded refusal binds. Each test attacks one claim through the facade, as a host
//! calls the gate.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::sync::Arc;

use skills::security::audit::AuditTrail;
use skills::security::autonomy::{Autonomy, RiskLevel};
use skills::security::gate::{
    Decision, DenyCode, PolicyGate, SkillInfo, StepApproval, StepRequest,
};
use skills::security::permissions::{
    InMemoryApprovers, InMemoryRateLimiter, PermissionRule, Permissions, Principal, Scope, Target,
};
use skills::security::{DataClass, TrustLevel};
use skills::store::in_memory::{InMemoryAuditStore, InMemoryPermissionStore, InMemoryTrustStore};
use skills::store::{ManualClock, PermissionStore, TenantId};

/// A gate over `store` (when given), rules `rules`, approvers `approvers`.
fn gate_over(
    store: Option<Arc<dyn PermissionStore>>,
    rules: Vec<PermissionRule>,
    approvers: Arc<InMemoryApprovers>,
) -> PolicyGate {
    let clock = ManualClock::new(1_000_000);
    let mut permissions = Permissions::new(clock.clone());
    if let Some(store) = store {
        permissions = permissions.with_store(store);
    }
    permissions.set_rules(&TenantId::new("acme"), rules);
    PolicyGate::new(
        Arc::new(permissions),
        Arc::new(InMemoryRateLimiter::new()),
        Autonomy::new(Arc::new(InMemoryTrustStore::new()), clock.clone()),
        AuditTrail::new(Arc::new(InMemoryAuditStore::new())),
        clock,
    )
    .with_approvers(approvers)
}

fn gate(store: Option<Arc<dyn PermissionStore>>) -> PolicyGate {
    gate_over(store, Vec::new(), Arc::new(InMemoryApprovers::new()))
}

fn pdf() -> SkillInfo {
    SkillInfo::new(
        "pdf",
        "anthropics/skills/pdf",
        TrustLevel::Verified,
        RiskLevel::Low,
    )
    .version("1.0.0")
}

/// Alice's step `id`: pdf 1.0.0 calling `extract` on input `h1`.
fn step(id: &str) -> StepRequest {
    StepRequest::new(Principal::new("acme", "alice"), pdf(), id)
        .tool("extract")
        .input_hash("h1")
}

/// `step` approved by `who`, the approval made for exactly that step.
fn approved(step: StepRequest, who: &str) -> StepRequest {
    let approval = StepApproval::for_step(&step, who);
    step.with_approval(approval)
}

fn allowed(decision: &Decision) -> bool {
    matches!(decision, Decision::Allow { .. })
}

fn denied(decision: &Decision) -> Option<DenyCode> {
    match decision {
        Decision::Deny { code, .. } => Some(*code),
        _ => None,
    }
}

fn stores() -> [Option<Arc<dyn PermissionStore>>; 2] {
    [None, Some(Arc::new(InMemoryPermissionStore::new()))]
}

#[tokio::test]
async fn a_refusal_recorded_for_a_step_binds_every_later_check_of_it() {
    for store in stores() {
        let with_store = store.is_some();
        let gate = gate(store.clone());
        assert!(matches!(
            gate.check(&step("e1")).await.unwrap(),
            Decision::AskApproval { .. }
        ));
        gate.record_refusal(&step("e1"), Some("carol"))
            .await
            .unwrap();
        // Bob's yes arrives after Carol's no: the no stands.
        let after = gate.check(&approved(step("e1"), "bob")).await.unwrap();
        assert_eq!(
            denied(&after),
            Some(DenyCode::ApprovalRefused),
            "store: {with_store}: {after:?}"
        );
        // Asked again without an approval: still refused, not asked again.
        let again = gate.check(&step("e1")).await.unwrap();
        assert_eq!(denied(&again), Some(DenyCode::ApprovalRefused), "{again:?}");
        // The preview says the same.
        let preview = gate.preview(&approved(step("e1"), "bob")).await.unwrap();
        assert_eq!(denied(&preview), Some(DenyCode::ApprovalRefused));
        // Another execution is not affected.
        assert!(allowed(
            &gate.check(&approved(step("e2"), "bob")).await.unwrap()
        ));
        if let Some(store) = store {
            // A gate in another process (or after a restart) over the same store.
            let restarted = self::gate(Some(store));
            let later = restarted.check(&approved(step("e1"), "bob")).await.unwrap();
            assert_eq!(denied(&later), Some(DenyCode::ApprovalRefused), "{later:?}");
        }
    }
}

#[tokio::test]
async fn a_refusal_reported_before_the_gate_asked_binds_too() {
    let gate = gate(None);
    gate.record_refusal(&step("e1"), None).await.unwrap();
    let after = gate.check(&approved(step("e1"), "alice")).await.unwrap();
    assert_eq!(denied(&after), Some(DenyCode::ApprovalRefused), "{after:?}");
}

#[tokio::test]
async fn an_approval_does_not_cover_a_step_that_changed_after_it_was_given() {
    let gate = gate(None);
    let shown = step("e1");
    let approval = StepApproval::for_step(&shown, "alice");
    assert_eq!(approval.digest, shown.digest());
    // The same execution id, with something else than what the person saw.
    let changed: Vec<(&str, StepRequest)> = vec![
        ("input", step("e1").input_hash("h2")),
        ("tool", step("e1").tool("delete")),
        (
            "version",
            StepRequest::new(
                Principal::new("acme", "alice"),
                pdf().version("2.0.0"),
                "e1",
            )
            .tool("extract")
            .input_hash("h1"),
        ),
        (
            "skill",
            StepRequest::new(
                Principal::new("acme", "alice"),
                SkillInfo::new("pay", "acme/pay", TrustLevel::Verified, RiskLevel::Low)
                    .version("1.0.0"),
                "e1",
            )
            .tool("extract")
            .input_hash("h1"),
        ),
        ("data", step("e1").data(&[DataClass::Confidential])),
        (
            "requester",
            StepRequest::new(Principal::new("acme", "mallory"), pdf(), "e1")
                .tool("extract")
                .input_hash("h1"),
        ),
    ];
    for (what, step) in changed {
        assert_ne!(step.digest(), shown.digest(), "{what}");
        let decision = gate
            .check(&step.with_approval(approval.clone()))
            .await
            .unwrap();
        assert_eq!(
            denied(&decision),
            Some(DenyCode::ApprovalMismatch),
            "{what}: {decision:?}"
        );
    }
    // A bare claim naming the execution but no step is no approval.
    let bare = StepApproval::new("e1", "", "alice");
    let decision = gate.check(&step("e1").with_approval(bare)).await.unwrap();
    assert_eq!(denied(&decision), Some(DenyCode::ApprovalMismatch));
    // What was shown, approved: allowed.
    let decision = gate.check(&shown.with_approval(approval)).await.unwrap();
    assert!(allowed(&decision), "{decision:?}");
}

#[tokio::test]
async fn an_approval_is_used_for_one_run() {
    for store in stores() {
        let with_store = store.is_some();
        let gate = gate(store.clone());
        assert!(matches!(
            gate.check(&step("e1")).await.unwrap(),
            Decision::AskApproval { .. }
        ));
        let yes = approved(step("e1"), "alice");
        assert!(allowed(&gate.check(&yes).await.unwrap()));
        // The same approval again: a replay, refused.
        let replay = gate.check(&yes).await.unwrap();
        assert_eq!(
            denied(&replay),
            Some(DenyCode::ApprovalUsed),
            "store: {with_store}: {replay:?}"
        );
        // A clone of the gate shares what was used.
        let replay = gate.clone().check(&yes).await.unwrap();
        assert_eq!(denied(&replay), Some(DenyCode::ApprovalUsed));
        if let Some(store) = store {
            let restarted = self::gate(Some(store));
            let replay = restarted.check(&yes).await.unwrap();
            assert_eq!(denied(&replay), Some(DenyCode::ApprovalUsed), "{replay:?}");
        }
        // An approval the gate never asked for is used once too.
        let unasked = approved(step("e2"), "alice");
        assert!(allowed(&gate.check(&unasked).await.unwrap()));
        assert_eq!(
            denied(&gate.check(&unasked).await.unwrap()),
            Some(DenyCode::ApprovalUsed)
        );
    }
}

#[tokio::test]
async fn two_racing_checks_with_one_approval_run_the_step_once() {
    for store in stores() {
        let gate = gate(store);
        let yes = approved(step("race"), "alice");
        let checks: Vec<_> = (0..8)
            .map(|_| {
                let gate = gate.clone();
                let yes = yes.clone();
                tokio::spawn(async move { gate.check(&yes).await.unwrap() })
            })
            .collect();
        let mut allows = 0;
        for check in checks {
            if allowed(&check.await.unwrap()) {
                allows += 1;
            }
        }
        assert_eq!(allows, 1);
    }
}

#[tokio::test]
async fn an_approval_names_who_gave_it_and_they_must_be_entitled() {
    let gate = gate(None);
    // Nobody named: no approval.
    for nobody in ["", "  "] {
        let decision = gate.check(&approved(step("e1"), nobody)).await.unwrap();
        assert!(!allowed(&decision), "{nobody:?}: {decision:?}");
    }
    // A rule asking for a manager: the requester and a non-manager are refused even with an
    // approval bound to the step; a manager's is accepted.
    let approvers = Arc::new(InMemoryApprovers::new());
    approvers.grant("acme", "carol", "manager");
    let gate = gate_over(
        None,
        vec![
            PermissionRule::new("pay-ok", Scope::Organization, Target::Skill("pdf".into()))
                .requires_approval(true, ["manager"]),
        ],
        approvers,
    );
    for who in ["alice", "bob"] {
        let decision = gate.check(&approved(step("e2"), who)).await.unwrap();
        assert!(!allowed(&decision), "{who}: {decision:?}");
    }
    let decision = gate.check(&approved(step("e2"), "carol")).await.unwrap();
    assert!(allowed(&decision), "{decision:?}");
    // A rule asking for anyone but the requester: the requester under a padded name is
    // still the requester, not someone else.
    let gate = gate_over(
        None,
        vec![
            PermissionRule::new("needs-ok", Scope::Organization, Target::Skill("pdf".into()))
                .requires_approval(true, Vec::<String>::new()),
        ],
        Arc::new(InMemoryApprovers::new()),
    );
    for alias in ["alice ", " alice", "alice\n", "alice\u{0}"] {
        let decision = gate.check(&approved(step("e3"), alias)).await.unwrap();
        assert!(!allowed(&decision), "{alias:?}: {decision:?}");
    }
    let decision = gate.check(&approved(step("e3"), "bob")).await.unwrap();
    assert!(allowed(&decision), "{decision:?}");
}
