//! The permission hierarchy's truth table across the five scopes, and the policy gate:
//! every check, every decision audited, denials in the usage log, failing closed.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::sync::Arc;

use skills::security::audit::{AuditFilter, AuditTrail, UsageStatus, Viewer};
use skills::security::autonomy::{Autonomy, Outcome, RiskLevel};
use skills::security::gate::{
    Decision, DenyCode, PolicyGate, SkillInfo, StepApproval, StepRequest,
};
use skills::security::permissions::{
    InMemoryApprovers, InMemoryRateLimiter, Merge, PermissionRule, Permissions, Principal,
    RateLimit, Scope, SkillTarget, Target, Window, resolve,
};
use skills::security::{DataClass, RegulatedApproval, TrustLevel};
use skills::store::audit::{AuditEntry, AuditQuery, AuditRecord, AuditStore, ChainHead};
use skills::store::in_memory::{InMemoryAuditStore, InMemoryTrustStore};
use skills::store::{Error, ManualClock, TenantId};

const SCOPES: [&str; 5] = ["global", "org", "role", "team", "agent"];

fn scope(i: usize) -> Scope {
    match i {
        0 => Scope::Global,
        1 => Scope::Organization,
        2 => Scope::Role("analyst".into()),
        3 => Scope::Team("finance".into()),
        _ => Scope::Agent("bot".into()),
    }
}

fn principal() -> Principal {
    Principal::new("acme", "alice")
        .agent("bot")
        .team("finance")
        .role("analyst")
}

/// Every assignment of unset / allow / deny to the five scopes (3^5 rows), under both merges.
#[test]
fn truth_table_of_execute_across_five_scopes() {
    let skill = SkillTarget::new("pdf");
    for row in 0..243usize {
        let mut settings = [None; 5];
        let mut n = row;
        for s in &mut settings {
            *s = match n % 3 {
                0 => None,
                1 => Some(true),
                _ => Some(false),
            };
            n /= 3;
        }
        let rules: Vec<PermissionRule> = settings
            .iter()
            .enumerate()
            .filter_map(|(i, s)| {
                s.map(|allow| {
                    PermissionRule::new(SCOPES[i], scope(i), Target::Skill("pdf".into()))
                        .execute(allow)
                })
            })
            .collect();
        // Most specific: the highest scope that sets it; nothing set: allowed by default.
        let most = resolve(&rules, &principal(), &skill, Merge::MostSpecific);
        let decider = (0..5).rev().find(|i| settings[*i].is_some());
        assert_eq!(
            most.can_execute.value,
            decider.is_none_or(|i| settings[i] == Some(true)),
            "row {settings:?}"
        );
        assert_eq!(
            most.can_execute.rule.as_deref(),
            decider.map(|i| SCOPES[i]),
            "row {settings:?}"
        );
        // Narrowing: any deny denies, and the most specific deny is named.
        let narrow = resolve(&rules, &principal(), &skill, Merge::Narrowing);
        let deny = (0..5).rev().find(|i| settings[*i] == Some(false));
        assert_eq!(narrow.can_execute.value, deny.is_none(), "row {settings:?}");
        if let Some(i) = deny {
            assert_eq!(narrow.can_execute.rule.as_deref(), Some(SCOPES[i]));
        }
    }
}

#[test]
fn a_deny_beats_an_allow_at_the_same_scope_and_scopes_must_match() {
    let skill = SkillTarget::new("pdf").category("documents");
    let rules = vec![
        PermissionRule::new(
            "team-allow",
            Scope::Team("finance".into()),
            Target::Skill("pdf".into()),
        )
        .execute(true),
        PermissionRule::new(
            "team-deny",
            Scope::Team("finance".into()),
            Target::Category("documents".into()),
        )
        .execute(false),
        PermissionRule::new(
            "other-agent",
            Scope::Agent("someone-else".into()),
            Target::Skill("pdf".into()),
        )
        .execute(true),
        PermissionRule::new(
            "other-role",
            Scope::Role("admin".into()),
            Target::Skill("pdf".into()),
        )
        .execute(true),
        PermissionRule::new(
            "other-skill",
            Scope::Agent("bot".into()),
            Target::Skill("docx".into()),
        )
        .execute(true),
    ];
    let r = resolve(&rules, &principal(), &skill, Merge::MostSpecific);
    assert!(!r.can_execute.value);
    assert_eq!(r.can_execute.rule.as_deref(), Some("team-deny"));
}

#[test]
fn fields_resolve_independently_and_tools_follow_their_own_rule() {
    let skill = SkillTarget::new("crm").extension_type("mcp_server");
    let rules = vec![
        PermissionRule::new(
            "org",
            Scope::Organization,
            Target::ExtensionType("mcp_server".into()),
        )
        .max_per_day(100)
        .allow_tools(["read", "search"])
        .deny_tools(["delete"])
        .requires_approval(true, ["manager"]),
        PermissionRule::new(
            "team",
            Scope::Team("finance".into()),
            Target::Skill("crm".into()),
        )
        .max_per_day(500)
        .allow_tools(["write"]),
        PermissionRule::new(
            "agent",
            Scope::Agent("bot".into()),
            Target::Skill("crm".into()),
        )
        .deny_tools(["write"])
        .configure(true),
    ];
    let r = resolve(&rules, &principal(), &skill, Merge::MostSpecific);
    assert_eq!(
        (
            r.max_executions_per_day.value,
            r.max_executions_per_day.rule.as_deref()
        ),
        (Some(500), Some("team"))
    );
    assert_eq!(
        (
            r.requires_approval.value,
            r.requires_approval.rule.as_deref()
        ),
        (true, Some("org"))
    );
    assert_eq!(r.approver_roles.value, ["manager"]);
    assert_eq!(
        (r.can_configure.value, r.can_configure.rule.as_deref()),
        (true, Some("agent"))
    );
    assert_eq!(
        (r.can_install.value, r.can_install.rule.as_deref()),
        (false, None)
    );
    let tool = |t: &str| {
        let d = r.tool(t);
        (d.value, d.rule)
    };
    assert_eq!(tool("write"), (false, Some("agent".into())));
    // The team's allow list decides before the organisation's.
    assert_eq!(tool("read"), (false, Some("team".into())));
    let n = resolve(&rules, &principal(), &skill, Merge::Narrowing);
    assert_eq!(n.max_executions_per_day.value, Some(100));
    assert!(!n.tool("read").value && !n.tool("delete").value && !n.tool("write").value);
    let only_org = resolve(&rules[..1], &principal(), &skill, Merge::MostSpecific);
    assert_eq!(
        (
            only_org.tool("read").value,
            only_org.tool("delete").value,
            only_org.tool("other").value
        ),
        (true, false, false)
    );
    assert!(
        resolve(&[], &principal(), &skill, Merge::MostSpecific)
            .tool("anything")
            .value
    );
}

struct Setup {
    approvers: Arc<InMemoryApprovers>,
    gate: PolicyGate,
    clock: Arc<ManualClock>,
    store: Arc<InMemoryAuditStore>,
    tenant: TenantId,
}

fn setup(rules: Vec<PermissionRule>) -> Setup {
    let clock = ManualClock::new(1_000_000);
    let permissions = Arc::new(Permissions::new(clock.clone()));
    let tenant = TenantId::new("acme");
    permissions.set_rules(&tenant, rules);
    let store = Arc::new(InMemoryAuditStore::new());
    let approvers = Arc::new(InMemoryApprovers::new());
    let gate = PolicyGate::new(
        permissions,
        Arc::new(InMemoryRateLimiter::new()),
        Autonomy::new(Arc::new(InMemoryTrustStore::new()), clock.clone()),
        AuditTrail::new(store.clone()),
        clock.clone(),
    )
    .with_approvers(approvers.clone());
    Setup {
        approvers,
        gate,
        clock,
        store,
        tenant,
    }
}

fn pdf() -> SkillInfo {
    SkillInfo::new(
        "pdf",
        "anthropics/skills/pdf",
        TrustLevel::Verified,
        RiskLevel::Low,
    )
    .category("documents")
}

fn step(id: &str) -> StepRequest {
    StepRequest::new(principal(), pdf(), id)
}

async fn trusted(s: &Setup, skill: &str) {
    let scope = skills::store::UserScope::new("acme", "alice");
    for _ in 0..3 {
        s.gate
            .autonomy()
            .record_outcome(&scope, skill, Outcome::Success)
            .await
            .unwrap();
    }
}

#[tokio::test]
async fn permission_and_tool_denials_name_their_rule_and_reach_the_usage_log() {
    let s = setup(vec![
        PermissionRule::new(
            "no-docs",
            Scope::Organization,
            Target::Category("documents".into()),
        )
        .execute(false),
        PermissionRule::new(
            "bot-pdf",
            Scope::Agent("bot".into()),
            Target::Skill("pdf".into()),
        )
        .execute(true)
        .deny_tools(["delete_file"]),
    ]);
    trusted(&s, "pdf").await;
    let tool = s.gate.check(&step("e1").tool("delete_file")).await.unwrap();
    assert_eq!(
        tool,
        Decision::Deny {
            code: DenyCode::ToolDenied,
            reason: "tool `delete_file` is not allowed for `pdf`".into(),
            rule: Some("bot-pdf".into())
        }
    );
    assert!(matches!(
        s.gate.check(&step("e2").tool("read")).await.unwrap(),
        Decision::Allow { .. }
    ));
    let other_agent =
        StepRequest::new(Principal::new("acme", "alice").agent("helper"), pdf(), "e3");
    let denied = s.gate.check(&other_agent).await.unwrap();
    assert!(
        matches!(denied, Decision::Deny { code: DenyCode::NotPermitted, rule: Some(ref r), .. } if r == "no-docs")
    );

    let log = s
        .gate
        .trail()
        .usage_log(&s.tenant, &Viewer::Auditor, &AuditFilter::new())
        .await
        .unwrap();
    let rows: Vec<_> = log
        .iter()
        .map(|r| (r.execution_id.as_str(), r.status, r.error_code.as_deref()))
        .collect();
    assert_eq!(
        rows,
        [
            ("e1", UsageStatus::Denied, Some("tool_denied")),
            ("e3", UsageStatus::Denied, Some("not_permitted"))
        ]
    );
    // Every decision, the allow included, is in the verified chain.
    let v = s.gate.trail().verify(&s.tenant).await.unwrap();
    assert!(v.is_intact());
    assert_eq!(v.checked, 3);
}

#[tokio::test]
async fn daily_caps_and_gate_limits_count_only_allowed_steps() {
    let s = setup(vec![
        PermissionRule::new(
            "cap",
            Scope::Team("finance".into()),
            Target::Skill("pdf".into()),
        )
        .max_per_day(2),
    ]);
    // Not yet trusted: asking does not use up the cap.
    assert!(matches!(
        s.gate.check(&step("e0")).await.unwrap(),
        Decision::AskApproval { .. }
    ));
    let approved = step("e0").with_approval(StepApproval::for_step(&step("e0"), "alice"));
    assert!(matches!(
        s.gate.check(&approved).await.unwrap(),
        Decision::Allow { .. }
    ));
    trusted(&s, "pdf").await;
    assert!(matches!(
        s.gate.check(&step("e1")).await.unwrap(),
        Decision::Allow { .. }
    ));
    let third = s.gate.check(&step("e2")).await.unwrap();
    assert!(
        matches!(
            third,
            Decision::Deny {
                code: DenyCode::RateLimited,
                ..
            }
        ),
        "{third:?}"
    );
    s.clock.advance(86_400_000);
    assert!(matches!(
        s.gate.check(&step("e3")).await.unwrap(),
        Decision::Allow { .. }
    ));

    let s = setup(Vec::new());
    let gate = s
        .gate
        .clone()
        .with_rate_limits(vec![RateLimit::new(1, Window::Minute)]);
    trusted(&s, "pdf").await;
    assert!(matches!(
        gate.check(&step("m1")).await.unwrap(),
        Decision::Allow { .. }
    ));
    assert!(matches!(
        gate.check(&step("m2")).await.unwrap(),
        Decision::Deny {
            code: DenyCode::RateLimited,
            ..
        }
    ));
    // Another agent has its own count.
    let other = StepRequest::new(Principal::new("acme", "alice").agent("other"), pdf(), "m3");
    assert!(matches!(
        gate.check(&other).await.unwrap(),
        Decision::Allow { .. }
    ));

    // An organisation-wide daily cap counts every agent together.
    let s = setup(Vec::new());
    let gate = s
        .gate
        .clone()
        .with_rate_limits(vec![RateLimit::organization(1, Window::Day)]);
    trusted(&s, "pdf").await;
    assert!(matches!(
        gate.check(&step("o1")).await.unwrap(),
        Decision::Allow { .. }
    ));
    let other = StepRequest::new(Principal::new("acme", "alice").agent("other"), pdf(), "o2");
    assert!(matches!(
        gate.check(&other).await.unwrap(),
        Decision::Deny { code: DenyCode::RateLimited, ref reason, .. }
            if reason.contains("whole organisation")
    ));
}

#[tokio::test]
async fn regulated_data_needs_an_approval_for_this_execution() {
    let s = setup(Vec::new());
    let core = SkillInfo::new("chart", "acme/chart", TrustLevel::Core, RiskLevel::Low);
    let scope = skills::store::UserScope::new("acme", "alice");
    for _ in 0..3 {
        s.gate
            .autonomy()
            .record_outcome(&scope, "chart", Outcome::Success)
            .await
            .unwrap();
    }
    let ask = StepRequest::new(principal(), core.clone(), "r1").data(&[DataClass::Regulated]);
    assert!(matches!(
        s.gate.check(&ask).await.unwrap(),
        Decision::AskApproval { ref reason, .. } if reason == "Regulated data requires approval for this execution"
    ));
    let wrong = ask
        .clone()
        .with_regulated_approval(RegulatedApproval::new("r0", "dr.ortiz"));
    assert!(matches!(
        s.gate.check(&wrong).await.unwrap(),
        Decision::Deny {
            code: DenyCode::ApprovalMismatch,
            ..
        }
    ));
    let right = ask.with_regulated_approval(RegulatedApproval::new("r1", "dr.ortiz"));
    let Decision::Allow { reasons } = s.gate.check(&right).await.unwrap() else {
        panic!()
    };
    assert!(
        reasons.contains(&"regulated data approved by dr.ortiz".to_owned()),
        "{reasons:?}"
    );
    // A verified skill never sees it: allowed, and told it is withheld.
    trusted(&s, "pdf").await;
    let verified = step("r2").data(&[DataClass::Regulated, DataClass::Public]);
    let Decision::Allow { reasons } = s.gate.check(&verified).await.unwrap() else {
        panic!()
    };
    assert!(
        reasons[0].starts_with("regulated data will be tokenized or redacted"),
        "{reasons:?}"
    );
    // The audit records show what was requested and granted.
    let entries = s
        .gate
        .trail()
        .query(&s.tenant, &Viewer::Auditor, &AuditFilter::new())
        .await
        .unwrap();
    let last = &entries.last().unwrap().record;
    assert_eq!(last.data_classes_requested, ["public", "regulated"]);
    assert_eq!(last.data_classes_granted, ["public"]);
}

#[tokio::test]
async fn rule_approvals_need_an_approver_role_and_this_execution() {
    let s = setup(vec![
        PermissionRule::new(
            "pay-approval",
            Scope::Organization,
            Target::Skill("pdf".into()),
        )
        .requires_approval(true, ["manager"]),
    ]);
    trusted(&s, "pdf").await;
    let ask = s.gate.check(&step("a1")).await.unwrap();
    let Decision::AskApproval {
        approver_roles,
        rule,
        options,
        ..
    } = ask
    else {
        panic!("{ask:?}")
    };
    assert_eq!(approver_roles, ["manager"]);
    assert_eq!(rule.as_deref(), Some("pay-approval"));
    assert_eq!(
        options.iter().map(|o| o.id.as_str()).collect::<Vec<_>>(),
        ["once", "no"]
    );
    let no_role = step("a1").with_approval(StepApproval::for_step(&step("a1"), "bob"));
    assert!(matches!(
        s.gate.check(&no_role).await.unwrap(),
        Decision::AskApproval { .. }
    ));
    let other_step = step("a1").with_approval(StepApproval::for_step(&step("a9"), "carol"));
    assert!(matches!(
        s.gate.check(&other_step).await.unwrap(),
        Decision::Deny {
            code: DenyCode::ApprovalMismatch,
            ..
        }
    ));
    // Carol's roles come from the host's directory, not from her approval.
    let carol = step("a1").with_approval(StepApproval::for_step(&step("a1"), "carol"));
    let Decision::AskApproval { reason, .. } = s.gate.check(&carol).await.unwrap() else {
        panic!("carol holds no role yet")
    };
    assert!(
        reason.contains("does not hold the approver roles"),
        "{reason}"
    );
    s.approvers.grant("acme", "carol", "manager");
    assert!(matches!(
        s.gate.check(&carol).await.unwrap(),
        Decision::Allow { .. }
    ));
}

/// Two scopes each naming approver roles: under `Narrowing` the approver must satisfy
/// both (one role of each), and at one scope two rules' lists both bind; a more specific
/// scope's list can never swap in an easier approver.
#[tokio::test]
async fn every_binding_role_list_must_be_satisfied() {
    let rules = vec![
        PermissionRule::new("org-sec", Scope::Organization, Target::Skill("pdf".into()))
            .requires_approval(true, ["security"]),
        PermissionRule::new(
            "team-lead",
            Scope::Team("finance".into()),
            Target::Skill("pdf".into()),
        )
        .requires_approval(true, ["team-lead"]),
    ];
    let clock = ManualClock::new(1_000_000);
    let permissions = Arc::new(Permissions::new(clock.clone()).with_merge(Merge::Narrowing));
    permissions.set_rules(&TenantId::new("acme"), rules);
    let approvers = Arc::new(InMemoryApprovers::new());
    let gate = PolicyGate::new(
        permissions,
        Arc::new(InMemoryRateLimiter::new()),
        Autonomy::new(Arc::new(InMemoryTrustStore::new()), clock.clone()),
        AuditTrail::new(Arc::new(InMemoryAuditStore::new())),
        clock,
    )
    .with_approvers(approvers.clone());
    let scope = skills::store::UserScope::new("acme", "alice");
    for _ in 0..3 {
        gate.autonomy()
            .record_outcome(&scope, "pdf", Outcome::Success)
            .await
            .unwrap();
    }
    approvers.grant("acme", "bob", "team-lead");
    let bob = step("n1").with_approval(StepApproval::for_step(&step("n1"), "bob"));
    let Decision::AskApproval { reason, .. } = gate.check(&bob).await.unwrap() else {
        panic!("bob holds only the team's role, not the organisation's")
    };
    assert!(reason.contains("team-lead; and security"), "{reason}");
    approvers.grant("acme", "bob", "security");
    assert!(matches!(
        gate.check(&bob).await.unwrap(),
        Decision::Allow { .. }
    ));

    // Two rules at one scope: both lists bind (most specific merge).
    let s = setup(vec![
        PermissionRule::new("a-sec", Scope::Organization, Target::Skill("pdf".into()))
            .requires_approval(true, ["security"]),
        PermissionRule::new("b-lead", Scope::Organization, Target::Skill("pdf".into()))
            .requires_approval(true, ["team-lead"]),
    ]);
    trusted(&s, "pdf").await;
    s.approvers.grant("acme", "carol", "team-lead");
    let carol = step("n2").with_approval(StepApproval::for_step(&step("n2"), "carol"));
    assert!(matches!(
        s.gate.check(&carol).await.unwrap(),
        Decision::AskApproval { .. }
    ));
}

#[tokio::test]
async fn nobody_approves_their_own_step_unless_a_rule_says_so() {
    let rule = || {
        PermissionRule::new("needs-ok", Scope::Organization, Target::Skill("pdf".into()))
            .requires_approval(true, Vec::<String>::new())
    };
    let s = setup(vec![rule()]);
    trusted(&s, "pdf").await;
    // Alice asked for the step (she is the principal); her own yes is not enough.
    let own = step("s1").with_approval(StepApproval::for_step(&step("s1"), "alice"));
    let Decision::AskApproval { reason, .. } = s.gate.check(&own).await.unwrap() else {
        panic!("self-approval accepted")
    };
    assert!(reason.contains("cannot also approve it"), "{reason}");
    // Anyone else's is (the rule names no roles).
    let bob = step("s1").with_approval(StepApproval::for_step(&step("s1"), "bob"));
    assert!(matches!(
        s.gate.check(&bob).await.unwrap(),
        Decision::Allow { .. }
    ));
    // A rule may allow it, explicitly.
    let lenient = setup(vec![rule().self_approval(true)]);
    trusted(&lenient, "pdf").await;
    assert!(matches!(
        lenient.gate.check(&own).await.unwrap(),
        Decision::Allow { .. }
    ));
}

#[tokio::test]
async fn a_community_skill_runs_only_where_a_rule_allows_it() {
    let s = setup(Vec::new());
    let community = SkillInfo::new(
        "scraper",
        "someone/scraper",
        TrustLevel::Community,
        RiskLevel::Low,
    );
    let req = StepRequest::new(principal(), community.clone(), "c1");
    let Decision::Deny { code, reason, rule } = s.gate.check(&req).await.unwrap() else {
        panic!("a community skill ran on the default")
    };
    assert_eq!(code, DenyCode::NotPermitted);
    assert!(rule.is_none() && reason.contains("community"), "{reason}");
    let allowed = setup(vec![
        PermissionRule::new(
            "ok-scraper",
            Scope::Organization,
            Target::Skill("scraper".into()),
        )
        .execute(true),
    ]);
    assert!(
        matches!(
            allowed.gate.check(&req).await.unwrap(),
            Decision::AskApproval { .. }
        ),
        "allowed to run, it still asks the first time"
    );
    // Other trust levels keep the default.
    let user = SkillInfo::new("mine", "acme/mine", TrustLevel::User, RiskLevel::Low);
    assert!(matches!(
        s.gate
            .check(&StepRequest::new(principal(), user, "u1"))
            .await
            .unwrap(),
        Decision::AskApproval { .. }
    ));
}

#[tokio::test]
async fn allow_all_is_a_named_choice_that_still_audits() {
    let store = Arc::new(InMemoryAuditStore::new());
    let gate = PolicyGate::allow_all(AuditTrail::new(store.clone()));
    assert!(!gate.checks());
    let community = SkillInfo::new(
        "scraper",
        "someone/scraper",
        TrustLevel::Community,
        RiskLevel::Critical,
    );
    let decision = gate
        .check(&StepRequest::new(principal(), community, "z1"))
        .await
        .unwrap();
    assert!(matches!(decision, Decision::Allow { .. }), "{decision:?}");
    let entries = gate
        .trail()
        .query(
            &TenantId::new("acme"),
            &Viewer::Auditor,
            &AuditFilter::new(),
        )
        .await
        .unwrap();
    assert_eq!(entries.len(), 1);
}

#[tokio::test]
async fn autonomy_asks_with_options_fit_for_the_risk_and_complete_records_outcomes() {
    let s = setup(Vec::new());
    let pay = SkillInfo::new("pay", "acme/pay", TrustLevel::Core, RiskLevel::High);
    let req = StepRequest::new(principal(), pay, "p1");
    let Decision::AskApproval {
        reason, options, ..
    } = s.gate.check(&req).await.unwrap()
    else {
        panic!()
    };
    assert_eq!(reason, "High-risk operation requires approval");
    assert_eq!(
        options.iter().map(|o| o.id.as_str()).collect::<Vec<_>>(),
        ["once", "session", "no"]
    );
    let Decision::AskApproval { options, .. } = s.gate.check(&step("p2")).await.unwrap() else {
        panic!()
    };
    assert_eq!(
        options.iter().map(|o| o.id.as_str()).collect::<Vec<_>>(),
        ["once", "always", "no"]
    );

    // Three successful executions later, low risk runs alone.
    for i in 0..3 {
        let mut record = AuditRecord::new(
            "alice",
            "pdf",
            "anthropics/skills/pdf",
            "verified",
            "h",
            true,
        );
        record.id = format!("run-{i}");
        s.gate
            .complete(&principal(), record, Outcome::Success)
            .await
            .unwrap();
    }
    let Decision::Allow { reasons } = s.gate.check(&step("p3")).await.unwrap() else {
        panic!()
    };
    assert_eq!(reasons, ["Auto-approved after 3 successful uses"]);
    let mut failed = AuditRecord::new(
        "alice",
        "pdf",
        "anthropics/skills/pdf",
        "verified",
        "h",
        false,
    );
    failed.id = "run-bad".into();
    let (_, trust) = s
        .gate
        .complete(&principal(), failed, Outcome::Failure)
        .await
        .unwrap();
    assert_eq!(trust.trust_reset_count, 1);
    assert!(matches!(
        s.gate.check(&step("p4")).await.unwrap(),
        Decision::AskApproval { .. }
    ));
    let log = s
        .gate
        .trail()
        .usage_log(&s.tenant, &Viewer::Auditor, &AuditFilter::new())
        .await
        .unwrap();
    let statuses: Vec<_> = log.iter().map(|r| r.status).collect();
    assert_eq!(
        statuses,
        [
            UsageStatus::Success,
            UsageStatus::Success,
            UsageStatus::Success,
            UsageStatus::Failed
        ]
    );
    assert!(s.gate.trail().verify(&s.tenant).await.unwrap().is_intact());
    assert_eq!(
        s.store
            .head(&s.tenant, "audit")
            .await
            .unwrap()
            .unwrap()
            .sequence,
        8
    );
}

/// A store that refuses every write.
struct Broken;

#[async_trait::async_trait]
impl AuditStore for Broken {
    async fn append(
        &self,
        _: &TenantId,
        _: &str,
        _: AuditRecord,
        _: Option<&str>,
    ) -> skills::store::Result<AuditEntry> {
        Err(Error::Backend {
            message: "disk full".into(),
            source: None,
        })
    }
    async fn head(&self, _: &TenantId, _: &str) -> skills::store::Result<Option<ChainHead>> {
        Ok(None)
    }
    async fn read_range(
        &self,
        _: &TenantId,
        _: &str,
        _: u64,
        _: usize,
    ) -> skills::store::Result<Vec<AuditEntry>> {
        Ok(Vec::new())
    }
    async fn get_entry(&self, _: &TenantId, _: &str) -> skills::store::Result<Option<AuditEntry>> {
        Ok(None)
    }
    async fn query(&self, _: &TenantId, _: &AuditQuery) -> skills::store::Result<Vec<AuditEntry>> {
        Ok(Vec::new())
    }
    async fn chains(&self, _: &TenantId) -> skills::store::Result<Vec<String>> {
        Ok(Vec::new())
    }
}

#[tokio::test]
async fn a_decision_that_cannot_be_audited_is_an_error() {
    let clock = ManualClock::new(0);
    let gate = PolicyGate::new(
        Arc::new(Permissions::new(clock.clone())),
        Arc::new(InMemoryRateLimiter::new()),
        Autonomy::new(Arc::new(InMemoryTrustStore::new()), clock.clone()),
        AuditTrail::new(Arc::new(Broken)),
        clock,
    );
    let approved = step("x").with_approval(StepApproval::for_step(&step("x"), "alice"));
    assert!(gate.check(&approved).await.is_err());
}

/// With a permission store, the approvals the gate asks for are records: pending when asked
/// (and still there after a restart), approved by whoever's yes let the step run, refused
/// when the host reports a refusal; the console lists what waits.
#[tokio::test]
async fn approvals_the_gate_asks_for_are_kept_as_records_that_survive_a_restart() {
    use skills::store::PermissionStore;
    use skills::store::approvals::ApprovalStatus;

    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("gate.sqlite3");
    let tenant = TenantId::new("acme");
    let rule = PermissionRule::new("needs-ok", Scope::Organization, Target::Skill("pdf".into()))
        .requires_approval(true, Vec::<String>::new());
    let gate = |store: Arc<skills::sqlite::SqliteStore>| {
        let clock = ManualClock::new(1_000_000);
        let permissions = Permissions::new(clock.clone()).with_store(store);
        permissions.set_rules(&tenant, vec![rule.clone()]);
        PolicyGate::new(
            Arc::new(permissions),
            Arc::new(InMemoryRateLimiter::new()),
            Autonomy::new(Arc::new(InMemoryTrustStore::new()), clock.clone()),
            AuditTrail::in_memory(),
            clock,
        )
    };

    let store = Arc::new(skills::sqlite::SqliteStore::open(&path).await.unwrap());
    let first = gate(store.clone());
    for id in ["e1", "e2"] {
        assert!(matches!(
            first.check(&step(id)).await.unwrap(),
            Decision::AskApproval { .. }
        ));
    }
    // Asking again for the same execution keeps one pending record.
    first.check(&step("e1")).await.unwrap();
    let pending = store
        .list_approvals(&tenant, Some(ApprovalStatus::Pending))
        .await
        .unwrap();
    let ids: Vec<&str> = pending.iter().map(|a| a.execution_id.as_str()).collect();
    assert_eq!(ids, ["e1", "e2"]);
    assert_eq!(
        (
            pending[0].requested_by.as_str(),
            pending[0].skill_id.as_str()
        ),
        ("alice", "pdf")
    );
    assert_eq!(pending[0].rule.as_deref(), Some("needs-ok"));
    drop((first, store));

    // A restart: the store reopened, a new gate; what waited still waits.
    let store = Arc::new(skills::sqlite::SqliteStore::open(&path).await.unwrap());
    let second = gate(store.clone());
    assert_eq!(
        store
            .list_approvals(&tenant, Some(ApprovalStatus::Pending))
            .await
            .unwrap()
            .len(),
        2
    );
    let approved = step("e1").with_approval(StepApproval::for_step(&step("e1"), "bob"));
    assert!(matches!(
        second.check(&approved).await.unwrap(),
        Decision::Allow { .. }
    ));
    let e1 = store.get_approval(&tenant, "e1").await.unwrap().unwrap();
    assert_eq!(e1.status, ApprovalStatus::Approved);
    assert_eq!(e1.decided_by.as_deref(), Some("bob"));
    second
        .record_refusal(&step("e2"), Some("carol"))
        .await
        .unwrap();
    let e2 = store.get_approval(&tenant, "e2").await.unwrap().unwrap();
    assert_eq!(
        (e2.status, e2.decided_by.as_deref()),
        (ApprovalStatus::Refused, Some("carol"))
    );
    // A refusal reported twice, or for a step nobody asked about, changes nothing.
    second.record_refusal(&step("e2"), None).await.unwrap();
    second.record_refusal(&step("e9"), None).await.unwrap();
    assert!(
        store
            .list_approvals(&tenant, Some(ApprovalStatus::Pending))
            .await
            .unwrap()
            .is_empty()
    );
}

/// `authorize`, the door every content read asks: a rule that forbids the skill binds reads
/// and loads alike; a daily cap counts only loads; a disabled skill is refused even by a
/// rule that allows it; each decision is one record.
#[tokio::test]
async fn authorize_reads_freely_but_loads_only_by_rule_and_within_the_cap() {
    use skills::security::gate::{Access, AccessRequest, SkillAction, SkillState};
    let community = SkillInfo::new(
        "notes",
        "community/notes",
        TrustLevel::Community,
        RiskLevel::Low,
    );
    let state = SkillState::new(community.clone(), "sha256:00");
    let ask = |action| {
        AccessRequest::new(principal(), action, "notes", "SKILL.md")
            .state(state.clone())
            .catalogued(true)
            .client("mcp:test")
    };
    let code = |access: &Access| match access {
        Access::Granted(_) => "granted".to_owned(),
        Access::Denied { code, .. } => code.as_str().to_owned(),
    };
    let s = setup(vec![
        PermissionRule::new(
            "no-notes",
            Scope::Agent("bot".into()),
            Target::Skill("notes".into()),
        )
        .execute(false),
    ]);
    for action in [SkillAction::Read, SkillAction::Load] {
        let refused = s.gate.authorize(&ask(action)).await.unwrap();
        assert_eq!(code(&refused), "not_permitted");
        assert!(matches!(refused, Access::Denied { rule: Some(ref r), .. } if r == "no-notes"));
    }
    let s = setup(vec![
        PermissionRule::new(
            "notes-ok",
            Scope::Organization,
            Target::Skill("notes".into()),
        )
        .execute(true)
        .max_per_day(1),
    ]);
    let granted = s.gate.authorize(&ask(SkillAction::Load)).await.unwrap();
    let Access::Granted(permit) = &granted else {
        panic!("{granted:?}")
    };
    assert_eq!((permit.skill_id(), permit.digest()), ("notes", "sha256:00"));
    assert_eq!(
        code(&s.gate.authorize(&ask(SkillAction::Load)).await.unwrap()),
        "rate_limited"
    );
    // Reads are not loads: the cap does not touch them.
    assert_eq!(
        code(&s.gate.authorize(&ask(SkillAction::Read)).await.unwrap()),
        "granted"
    );
    let disabled = AccessRequest::new(principal(), SkillAction::Read, "notes", "SKILL.md")
        .state(state.clone().enabled(false))
        .catalogued(true);
    assert_eq!(
        code(&s.gate.authorize(&disabled).await.unwrap()),
        "disabled"
    );
    let uncatalogued = ask(SkillAction::Read).catalogued(false);
    assert_eq!(
        code(&s.gate.authorize(&uncatalogued).await.unwrap()),
        "not_catalogued"
    );
    let chain = s.store.chains(&s.tenant).await.unwrap();
    let entries = s
        .store
        .read_range(&s.tenant, &chain[0], 1, 100)
        .await
        .unwrap();
    assert_eq!(entries.len(), 5, "one record per decision");
    assert!(
        entries[0]
            .record
            .security_flags
            .iter()
            .any(|f| f == "client:mcp:test")
    );
    assert_eq!(
        entries[0].record.skill_version.as_deref(),
        Some("sha256:00")
    );
    assert!(!entries[1].record.success && entries[1].record.error.is_some());
}
