//! Plans: grouping and numbering, dependency errors, estimates, risk and approval, display
//! and persistence.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::sync::Arc;

use async_trait::async_trait;
use futures::executor::block_on;
use skills_orchestrate::Error;
use skills_orchestrate::plan::{
    ApprovalPolicy, CostLevel, CostRule, DurationSamples, ExecutionPlan, GatePreview, Planner,
    RiskLevel, SkillRiskTable, StepSpec, load_plan, plan_from_record, save_plan,
};
use skills_orchestrate::progress::ProgressEvent;
use skills_security::TrustLevel;
use skills_security::audit::AuditTrail;
use skills_security::autonomy::{Autonomy, Outcome};
use skills_security::gate::{Decision, DenyCode, PolicyGate, SkillInfo};
use skills_security::permissions::{
    InMemoryRateLimiter, PermissionRule, Permissions, Principal, Scope, Target,
};
use skills_store_traits::audit::{AuditQuery, AuditRecord};
use skills_store_traits::in_memory::{
    InMemoryAuditStore, InMemoryLearningStore, InMemoryPlanStore, InMemoryTrustStore,
};
use skills_store_traits::learning::{ExecutedStep, NewExecutedSequence};
use skills_store_traits::plans::PlanUpdate;
use skills_store_traits::{AuditStore, LearningStore, ManualClock, PlanStore, TenantId, UserScope};

fn plan(specs: Vec<StepSpec>) -> Result<ExecutionPlan, Error> {
    block_on(Planner::new().plan("the task", specs))
}

fn numbered(plan: &ExecutionPlan) -> Vec<(u32, &str)> {
    plan.steps
        .iter()
        .map(|s| (s.number, s.id.as_str()))
        .collect()
}

fn cycle_of(result: Result<ExecutionPlan, Error>) -> Vec<String> {
    match result {
        Err(Error::Cycle { cycle }) => cycle,
        other => panic!("expected a cycle, got {other:?}"),
    }
}

fn invalid_reason(result: Result<ExecutionPlan, Error>) -> String {
    match result {
        Err(Error::Invalid { reason, .. }) => reason,
        other => panic!("expected Invalid, got {other:?}"),
    }
}

// ---------------------------------------------------------------- groups and numbering

#[test]
fn a_chain_runs_one_step_per_group() {
    let plan = plan(vec![
        StepSpec::new("c", "pptx", "deck").after("b"),
        StepSpec::new("a", "crm", "find"),
        StepSpec::new("b", "xlsx", "figures").after("a"),
    ])
    .unwrap();
    assert_eq!(plan.groups, vec![vec!["a"], vec!["b"], vec!["c"]]);
    assert_eq!(numbered(&plan), vec![(1, "a"), (2, "b"), (3, "c")]);
    assert_eq!(plan.step("c").unwrap().depends_on, vec!["b"]);
    assert_eq!(plan.dependents("a"), vec!["b", "c"]);
    assert_eq!(plan.dependents("c"), Vec::<String>::new());
    assert_eq!(plan.step_by_number(2).unwrap().id, "b");
    assert!(plan.step_by_number(0).is_none() && plan.step_by_number(4).is_none());
}

#[test]
fn a_diamond_keeps_the_given_order_within_a_group() {
    let plan = plan(vec![
        StepSpec::new("top", "crm", "find"),
        StepSpec::new("right", "xlsx", "figures").after("top"),
        StepSpec::new("left", "pdf", "read").after("top"),
        StepSpec::new("bottom", "pptx", "deck")
            .after("left")
            .after("right"),
    ])
    .unwrap();
    assert_eq!(
        plan.groups,
        vec![vec!["top"], vec!["right", "left"], vec!["bottom"]]
    );
    assert_eq!(
        numbered(&plan),
        vec![(1, "top"), (2, "right"), (3, "left"), (4, "bottom")]
    );
    assert_eq!(plan.dependents("right"), vec!["bottom"]);
    assert_eq!(plan.dependents("top"), vec!["bottom", "left", "right"]);
}

#[test]
fn a_wide_fan_out_runs_the_leaves_together_and_levels_follow_the_deepest_dependency() {
    let mut specs = vec![StepSpec::new("sink", "pptx", "collect")];
    for leaf in ["l5", "l1", "l4", "l2", "l3"] {
        specs.push(StepSpec::new(leaf, "pdf", "read").after("root"));
        specs[0] = specs[0].clone().after(leaf);
    }
    // `late` depends on the root and on `sink`: its level is sink's + 1, not root's + 1.
    specs.push(
        StepSpec::new("late", "email", "send")
            .after("root")
            .after("sink"),
    );
    specs.push(StepSpec::new("root", "crm", "find"));
    specs.push(StepSpec::new("alone", "research", "look around"));
    let plan = plan(specs).unwrap();
    assert_eq!(
        plan.groups,
        vec![
            vec!["root", "alone"],
            vec!["l5", "l1", "l4", "l2", "l3"],
            vec!["sink"],
            vec!["late"],
        ]
    );
    let ids: Vec<&str> = numbered(&plan).iter().map(|(_, id)| *id).collect();
    assert_eq!(
        ids,
        [
            "root", "alone", "l5", "l1", "l4", "l2", "l3", "sink", "late"
        ]
    );
    assert!(
        plan.steps
            .iter()
            .enumerate()
            .all(|(i, s)| s.number as usize == i + 1)
    );
}

#[test]
fn a_dependency_named_twice_counts_once() {
    let plan = plan(vec![
        StepSpec::new("a", "crm", "find"),
        StepSpec::new("b", "pdf", "read").after("a").after("a"),
    ])
    .unwrap();
    assert_eq!(plan.step("b").unwrap().depends_on, vec!["a"]);
    assert_eq!(plan.groups, vec![vec!["a"], vec!["b"]]);
}

// ---------------------------------------------------------------- errors

#[test]
fn a_two_step_cycle_is_named() {
    let cycle = cycle_of(plan(vec![
        StepSpec::new("b", "pdf", "read").after("a"),
        StepSpec::new("a", "crm", "find").after("b"),
    ]));
    assert_eq!(cycle, ["a", "b", "a"]);
}

#[test]
fn a_three_step_cycle_inside_a_larger_graph_is_found_from_its_smallest_id() {
    let cycle = cycle_of(plan(vec![
        StepSpec::new("start", "crm", "find"),
        StepSpec::new("k2", "x", "").after("k1").after("start"),
        StepSpec::new("k3", "x", "").after("k2"),
        StepSpec::new("k1", "x", "").after("k3"),
        StepSpec::new("after", "x", "").after("k3"),
        // A second, disjoint cycle with larger ids is not the one reported.
        StepSpec::new("z1", "x", "").after("z2"),
        StepSpec::new("z2", "x", "").after("z1"),
        StepSpec::new("free", "x", "").after("start"),
    ]));
    // k1 finishes before k2 (k2 depends on it), k2 before k3, k3 before k1.
    assert_eq!(cycle, ["k1", "k2", "k3", "k1"]);
    let message = Error::Cycle { cycle }.to_string();
    assert!(message.contains("k1 -> k2 -> k3 -> k1"), "{message}");
}

#[test]
fn the_shortest_way_round_is_reported_when_cycles_share_a_step() {
    // a -> b -> a and a -> c -> d -> a share `a`: the two-step one is named.
    let cycle = cycle_of(plan(vec![
        StepSpec::new("a", "x", "").after("b").after("d"),
        StepSpec::new("b", "x", "").after("a"),
        StepSpec::new("c", "x", "").after("a"),
        StepSpec::new("d", "x", "").after("c"),
    ]));
    assert_eq!(cycle, ["a", "b", "a"]);
}

#[test]
fn malformed_specs_are_invalid_and_say_why() {
    let reason = invalid_reason(plan(vec![
        StepSpec::new("a", "crm", "find"),
        StepSpec::new("b", "pdf", "read").after("ghost"),
    ]));
    assert!(reason.contains("unknown step `ghost`"), "{reason}");
    let reason = invalid_reason(plan(vec![
        StepSpec::new("a", "crm", "find"),
        StepSpec::new("a", "pdf", "read"),
    ]));
    assert!(reason.contains("duplicate step id `a`"), "{reason}");
    let reason = invalid_reason(plan(vec![StepSpec::new("a", "crm", "find").after("a")]));
    assert!(reason.contains("depends on itself"), "{reason}");
    let reason = invalid_reason(plan(vec![]));
    assert!(reason.contains("at least one step"), "{reason}");
    let reason = invalid_reason(plan(vec![StepSpec::new("", "crm", "find")]));
    assert!(reason.contains("empty id"), "{reason}");
    let reason = invalid_reason(plan(vec![StepSpec::new("a", "", "find")]));
    assert!(reason.contains("names no skill"), "{reason}");
    let reason = invalid_reason(block_on(
        Planner::new().plan("  ", vec![StepSpec::new("a", "crm", "find")]),
    ));
    assert!(reason.contains("task is empty"), "{reason}");
}

// ---------------------------------------------------------------- estimates and cost

#[test]
fn estimates_come_from_the_median_of_past_durations_and_the_slowest_step_of_each_group() {
    let history = DurationSamples::new()
        .with("crm", 1_000)
        .with("crm", 3_000)
        .with("crm", 2_000)
        .with("pdf", 5_000)
        .with("xlsx", 800);
    let planner = Planner::new()
        .history(Arc::new(history))
        .default_estimate_ms(7_000);
    let plan = block_on(planner.plan(
        "t",
        vec![
            StepSpec::new("find", "crm", ""),
            StepSpec::new("read", "pdf", "").after("find"),
            StepSpec::new("sum", "xlsx", "").after("find"),
            StepSpec::new("deck", "pptx", "").after("read").after("sum"),
        ],
    ))
    .unwrap();
    let estimates: Vec<u64> = plan.steps.iter().map(|s| s.estimated_ms).collect();
    assert_eq!(estimates, [2_000, 5_000, 800, 7_000]);
    // 2,000 (find) + max(5,000, 800) + 7,000 (pptx: no history, the default).
    assert_eq!(plan.estimated_duration_ms, 14_000);
}

#[test]
fn durations_are_read_from_the_audit_log_and_the_learning_store() {
    block_on(async {
        let tenant = TenantId::new("acme");
        let audit = InMemoryAuditStore::new();
        let mut head: Option<String> = None;
        for (i, (skill, ms, success)) in [
            ("pdf", Some(100), true),
            ("pdf", Some(300), true),
            ("pdf", None, true),          // a gate decision: no timing
            ("pdf", Some(99_999), false), // a failure does not count
            ("xlsx", Some(50), true),
        ]
        .into_iter()
        .enumerate()
        {
            let mut record = AuditRecord::new("alice", skill, skill, "verified", "in", success);
            record.execution_time_ms = ms;
            record.previous_hash = head.clone().unwrap_or_else(|| "genesis".into());
            record.entry_hash = format!("h{i}");
            let entry = audit
                .append(&tenant, "alice", record, head.as_deref())
                .await
                .unwrap();
            head = Some(entry.record.entry_hash);
        }
        let from_audit = DurationSamples::from_audit(&audit, &tenant, &AuditQuery::new())
            .await
            .unwrap();
        assert_eq!(from_audit.count("pdf"), 2);
        use skills_orchestrate::plan::DurationHistory;
        assert_eq!(from_audit.median_ms("pdf"), Some(200));
        assert_eq!(from_audit.median_ms("xlsx"), Some(50));

        let learning = InMemoryLearningStore::new();
        learning
            .record_sequence(
                &tenant,
                NewExecutedSequence::new(
                    "report",
                    vec![
                        ExecutedStep::new("crm", true, 1, 400),
                        ExecutedStep::new("crm", false, 3, 9_000),
                        ExecutedStep::new("pptx", true, 2, 1_200),
                    ],
                    true,
                ),
            )
            .await
            .unwrap();
        let from_learning = DurationSamples::from_learning(&learning, &tenant, None, None)
            .await
            .unwrap();
        assert_eq!(from_learning.median_ms("crm"), Some(400));
        assert_eq!(from_learning.median_ms("pptx"), Some(1_200));
        assert_eq!(from_learning.median_ms("pdf"), None);
    });
}

#[test]
fn the_cost_level_follows_the_expected_tokens() {
    let specs = |n: usize| -> Vec<StepSpec> {
        (0..n)
            .map(|i| StepSpec::new(format!("s{i}"), "pdf", ""))
            .collect()
    };
    assert_eq!(plan(specs(3)).unwrap().cost, CostLevel::Low);
    assert_eq!(plan(specs(3)).unwrap().estimated_tokens, 2_000 + 3 * 6_000);
    assert_eq!(plan(specs(4)).unwrap().cost, CostLevel::Medium);
    assert_eq!(plan(specs(11)).unwrap().cost, CostLevel::High);
    let heavy = Planner::new().cost_rule(CostRule::default().skill_tokens("pdf", 100_000));
    assert_eq!(
        block_on(heavy.plan("t", specs(1))).unwrap().cost,
        CostLevel::High
    );
}

// ---------------------------------------------------------------- risk and approval

#[test]
fn without_a_policy_every_step_asks_and_unknown_skills_are_high_risk() {
    let table = SkillRiskTable::new()
        .skill("pdf", TrustLevel::Verified)
        .skill("mine", TrustLevel::User)
        .skill("registry-thing", TrustLevel::Community)
        .skill_at("pay", TrustLevel::Core, RiskLevel::Critical);
    let planner = Planner::new().risks(Arc::new(table));
    // Nothing is known of the user's history: as a skill's first runs do, every step asks.
    let safe = block_on(planner.plan(
        "t",
        vec![
            StepSpec::new("a", "pdf", ""),
            StepSpec::new("b", "mine", ""),
        ],
    ))
    .unwrap();
    assert_eq!(safe.risk, RiskLevel::Medium);
    assert!(safe.requires_approval);
    assert!(safe.steps.iter().all(|s| s.requires_approval));
    assert_eq!(
        safe.steps[0].approval_reason.as_deref(),
        Some("Initial approval required (low risk, no approval policy)")
    );

    for skill in ["registry-thing", "not-in-the-table"] {
        let risky = block_on(planner.plan(
            "t",
            vec![StepSpec::new("a", "pdf", ""), StepSpec::new("b", skill, "")],
        ))
        .unwrap();
        assert_eq!(risky.risk, RiskLevel::High, "{skill}");
        assert!(risky.requires_approval, "{skill}");
        assert_eq!(
            risky.steps[1].approval_reason.as_deref(),
            Some("Initial approval required (high risk, no approval policy)")
        );
    }
    let critical = block_on(planner.plan("t", vec![StepSpec::new("a", "pay", "")])).unwrap();
    assert_eq!(critical.risk, RiskLevel::Critical);
    assert!(critical.requires_approval);
}

struct Gate {
    gate: PolicyGate,
    audit: Arc<InMemoryAuditStore>,
    permissions: Arc<Permissions>,
    autonomy: Autonomy,
}

fn gate() -> Gate {
    let clock = ManualClock::new(0);
    let audit = Arc::new(InMemoryAuditStore::new());
    let permissions = Arc::new(Permissions::new(clock.clone()));
    let autonomy = Autonomy::new(Arc::new(InMemoryTrustStore::new()), clock.clone());
    let gate = PolicyGate::new(
        permissions.clone(),
        Arc::new(InMemoryRateLimiter::new()),
        autonomy.clone(),
        AuditTrail::new(audit.clone()),
        clock,
    );
    Gate {
        gate,
        audit,
        permissions,
        autonomy,
    }
}

#[test]
fn the_gate_preview_decides_approval_without_auditing_or_counting() {
    block_on(async {
        let g = gate();
        let alice = Principal::new("acme", "alice");
        let scope = UserScope::new("acme", "alice");
        let table = SkillRiskTable::new()
            .skill("pdf", TrustLevel::Verified)
            .skill("xlsx", TrustLevel::Verified);
        let planner = Planner::new()
            .risks(Arc::new(table))
            .policy(Arc::new(GatePreview::new(g.gate.clone(), alice.clone())));
        let specs = || {
            vec![
                StepSpec::new("read", "pdf", ""),
                StepSpec::new("sum", "xlsx", "").after("read"),
            ]
        };

        // First runs ask (autonomy's initial approval).
        let first = planner.plan("t", specs()).await.unwrap();
        assert!(first.requires_approval);
        assert_eq!(
            first.steps[0].approval_reason.as_deref(),
            Some("Initial approval required")
        );

        // Three successes of pdf make it auto-approved; xlsx still asks.
        for _ in 0..3 {
            g.autonomy
                .record_outcome(&scope, "pdf", Outcome::Success)
                .await
                .unwrap();
        }
        let later = planner.plan("t", specs()).await.unwrap();
        assert!(!later.steps[0].requires_approval);
        assert!(later.steps[1].requires_approval);
        assert!(later.requires_approval);
        for _ in 0..3 {
            g.autonomy
                .record_outcome(&scope, "xlsx", Outcome::Success)
                .await
                .unwrap();
        }
        let trusted = planner.plan("t", specs()).await.unwrap();
        assert!(!trusted.requires_approval);
        assert_eq!(trusted.risk, RiskLevel::Low);

        // A rule asking for approval wins over autonomy.
        g.permissions.upsert_rule(
            &TenantId::new("acme"),
            PermissionRule::new(
                "xlsx-needs-ok",
                Scope::Organization,
                Target::Skill("xlsx".into()),
            )
            .requires_approval(true, ["manager"]),
        );
        let ruled = planner.plan("t", specs()).await.unwrap();
        assert!(ruled.requires_approval);
        assert_eq!(
            ruled.steps[1].approval_reason.as_deref(),
            Some("Approval required by rule `xlsx-needs-ok`")
        );

        // Planning left no trace in the audit log (the executor's gate check will).
        let entries = g
            .audit
            .query(&TenantId::new("acme"), &AuditQuery::new())
            .await
            .unwrap();
        assert!(entries.is_empty());
    });
}

#[test]
fn a_denied_step_fails_planning() {
    block_on(async {
        let g = gate();
        g.permissions.upsert_rule(
            &TenantId::new("acme"),
            PermissionRule::new("no-pay", Scope::Organization, Target::Skill("pay".into()))
                .execute(false),
        );
        // Both skills are known (an unknown skill is community: denied by default too).
        let known = SkillRiskTable::new()
            .skill("pdf", TrustLevel::Verified)
            .skill("pay", TrustLevel::Verified);
        let planner = Planner::new()
            .risks(Arc::new(known))
            .policy(Arc::new(GatePreview::new(
                g.gate.clone(),
                Principal::new("acme", "alice"),
            )));
        let result = planner
            .plan(
                "t",
                vec![
                    StepSpec::new("read", "pdf", ""),
                    StepSpec::new("pay", "pay", "").after("read"),
                ],
            )
            .await;
        match result {
            Err(Error::StepDenied {
                step,
                skill,
                reason,
            }) => {
                assert_eq!((step.as_str(), skill.as_str()), ("pay", "pay"));
                assert!(reason.contains("not permitted"), "{reason}");
            }
            other => panic!("expected StepDenied, got {other:?}"),
        }
        // Bob's plan in another tenant is not affected by acme's rule.
        let bob = Planner::new()
            .risks(Arc::new(
                SkillRiskTable::new().skill("pay", TrustLevel::Verified),
            ))
            .policy(Arc::new(GatePreview::new(
                g.gate.clone(),
                Principal::new("other", "bob"),
            )));
        assert!(
            bob.plan("t", vec![StepSpec::new("pay", "pay", "")])
                .await
                .is_ok()
        );
    });
}

/// A host policy: a fixed answer per skill.
struct FixedPolicy;

#[async_trait]
impl ApprovalPolicy for FixedPolicy {
    async fn decide(
        &self,
        _step_id: &str,
        skill: &SkillInfo,
    ) -> skills_orchestrate::Result<Decision> {
        Ok(match skill.id() {
            "ask" => Decision::AskApproval {
                reason: "ask me".into(),
                options: vec![],
                approver_roles: vec![],
                rule: None,
            },
            "deny" => Decision::Deny {
                code: DenyCode::NotPermitted,
                reason: "never".into(),
                rule: None,
            },
            _ => Decision::Allow { reasons: vec![] },
        })
    }
}

#[test]
fn a_host_policy_overrides_the_risk_rule() {
    let planner = Planner::new().policy(Arc::new(FixedPolicy));
    // Unknown skills are high risk, but the policy allows them: no approval.
    let allowed = block_on(planner.plan("t", vec![StepSpec::new("a", "other", "")])).unwrap();
    assert_eq!(allowed.risk, RiskLevel::High);
    assert!(!allowed.requires_approval);
    let asked = block_on(planner.plan(
        "t",
        vec![
            StepSpec::new("a", "other", ""),
            StepSpec::new("b", "ask", ""),
        ],
    ))
    .unwrap();
    assert!(asked.requires_approval);
    assert_eq!(asked.steps[1].approval_reason.as_deref(), Some("ask me"));
    let denied = block_on(planner.plan("t", vec![StepSpec::new("a", "deny", "")]));
    assert!(matches!(denied, Err(Error::StepDenied { .. })));
}

// ---------------------------------------------------------------- display

fn sample_plan() -> ExecutionPlan {
    let table = SkillRiskTable::new()
        .skill("crm-lookup", TrustLevel::Verified)
        .skill("xlsx", TrustLevel::Verified)
        .skill("pptx", TrustLevel::Verified)
        .skill("email-sequence", TrustLevel::Community);
    let history = DurationSamples::new()
        .with("crm-lookup", 1_500)
        .with("xlsx", 2_500)
        .with("pptx", 4_000);
    let planner = Planner::new()
        .risks(Arc::new(table))
        .history(Arc::new(history))
        .default_estimate_ms(3_000);
    block_on(planner.plan(
        "Prepare the quarterly review and send it",
        vec![
            StepSpec::new("account", "crm-lookup", "Find the account and its contacts"),
            StepSpec::new("figures", "xlsx", "Load the quarter's figures"),
            StepSpec::new("deck", "pptx", "Build the review deck")
                .after("account")
                .after("figures"),
            StepSpec::new("send", "email-sequence", "Send the deck to the contacts")
                .after("deck")
                .after("account"),
        ],
    ))
    .unwrap()
}

#[test]
fn the_display_has_the_plan_created_shape() {
    let plan = sample_plan();
    let display = plan.display();
    assert_eq!(display.steps[0].can_parallelize, vec!["figures"]);
    assert_eq!(display.steps[1].can_parallelize, vec!["account"]);
    assert!(display.steps[2].can_parallelize.is_empty());
    assert_eq!(display.estimated_duration_ms, 2_500 + 4_000 + 3_000);
    insta::assert_snapshot!(
        "plan_display",
        serde_json::to_string_pretty(&display).unwrap()
    );
    let event = ProgressEvent::PlanCreated { plan: display };
    insta::assert_snapshot!(
        "plan_created_event",
        serde_json::to_string_pretty(&event.display()).unwrap()
    );
}

// ---------------------------------------------------------------- persistence

#[test]
fn a_saved_plan_loads_back_equal_with_one_pending_entry_per_step() {
    let plan = sample_plan();
    block_on(async {
        let store = InMemoryPlanStore::new();
        let alice = UserScope::new("acme", "alice");
        let record = save_plan(&store, &alice, &plan).await.unwrap();
        assert_eq!(record.task_description, plan.task);
        assert_eq!(
            record.skills_planned,
            ["crm-lookup", "xlsx", "pptx", "email-sequence"]
        );
        assert_eq!(
            record.estimated_duration_ms,
            Some(plan.estimated_duration_ms)
        );
        assert_eq!(record.risk_level, RiskLevel::High);
        assert!(record.approval_required);

        let (loaded, memory) = load_plan(&store, &alice, &record.id)
            .await
            .unwrap()
            .unwrap();
        assert_eq!(loaded, plan);
        let numbers: Vec<u32> = memory.iter().map(|m| m.step_number).collect();
        assert_eq!(numbers, [1, 2, 3, 4]);
        assert!(
            memory
                .iter()
                .zip(&plan.steps)
                .all(|(m, s)| m.skill_id == s.skill
                    && m.status == skills_store_traits::plans::StepStatus::Pending)
        );

        // Another user does not see it.
        let bob = UserScope::new("acme", "bob");
        assert!(load_plan(&store, &bob, &record.id).await.unwrap().is_none());
        assert!(
            load_plan(&store, &alice, "no-such-plan")
                .await
                .unwrap()
                .is_none()
        );
    });
}

#[test]
fn a_tampered_stored_plan_is_refused() {
    let plan = sample_plan();
    block_on(async {
        let store = InMemoryPlanStore::new();
        let alice = UserScope::new("acme", "alice");
        let record = save_plan(&store, &alice, &plan).await.unwrap();

        // Running `send` together with the first group would skip its dependencies.
        let mut groups = plan.groups.clone();
        let send = groups[2].pop().unwrap();
        groups[0].push(send);
        groups.pop();
        let mut update = PlanUpdate::new();
        update.parallel_groups = Some(serde_json::to_value(&groups).unwrap());
        let edited = store.update_plan(&alice, &record.id, update).await.unwrap();
        let error = plan_from_record(&edited).unwrap_err();
        assert!(error.to_string().contains("parallel groups"), "{error}");
        assert!(load_plan(&store, &alice, &record.id).await.is_err());

        // A dependency removed from the graph changes the levels: refused too.
        let mut graph = record.dependency_graph.clone();
        graph["steps"][3]["depends_on"] = serde_json::json!([]);
        let mut update = PlanUpdate::new();
        update.dependency_graph = Some(graph);
        update.parallel_groups = Some(record.parallel_groups.clone());
        let edited = store.update_plan(&alice, &record.id, update).await.unwrap();
        assert!(plan_from_record(&edited).is_err());

        // A cycle smuggled into the graph is refused.
        let mut graph = record.dependency_graph.clone();
        graph["steps"][0]["depends_on"] = serde_json::json!(["send"]);
        let mut update = PlanUpdate::new();
        update.dependency_graph = Some(graph);
        let edited = store.update_plan(&alice, &record.id, update).await.unwrap();
        assert!(
            plan_from_record(&edited)
                .unwrap_err()
                .to_string()
                .contains("cycle")
        );

        // A record not written by save_plan is refused.
        let mut update = PlanUpdate::new();
        update.dependency_graph = Some(serde_json::json!({}));
        let edited = store.update_plan(&alice, &record.id, update).await.unwrap();
        assert!(plan_from_record(&edited).is_err());
    });
}

#[test]
fn the_plan_id_is_deterministic() {
    let a = sample_plan();
    let b = sample_plan();
    assert_eq!(a.id, b.id);
    assert!(a.id.starts_with("plan-"));
    let other = plan(vec![StepSpec::new("account", "crm-lookup", "x")]).unwrap();
    assert_ne!(a.id, other.id);
}

/// A plan store whose `insert_step` fails from step 2 on.
struct FailingSteps(InMemoryPlanStore);

#[async_trait]
impl PlanStore for FailingSteps {
    async fn create_plan(
        &self,
        scope: &UserScope,
        plan: skills_store_traits::plans::NewPlan,
    ) -> skills_store_traits::Result<skills_store_traits::plans::PlanRecord> {
        self.0.create_plan(scope, plan).await
    }
    async fn get_plan(
        &self,
        scope: &UserScope,
        plan_id: &str,
    ) -> skills_store_traits::Result<Option<skills_store_traits::plans::PlanRecord>> {
        self.0.get_plan(scope, plan_id).await
    }
    async fn list_plans(
        &self,
        scope: &UserScope,
        filter: &skills_store_traits::plans::PlanFilter,
    ) -> skills_store_traits::Result<Vec<skills_store_traits::plans::PlanRecord>> {
        self.0.list_plans(scope, filter).await
    }
    async fn update_plan(
        &self,
        scope: &UserScope,
        plan_id: &str,
        update: PlanUpdate,
    ) -> skills_store_traits::Result<skills_store_traits::plans::PlanRecord> {
        self.0.update_plan(scope, plan_id, update).await
    }
    async fn delete_plan(
        &self,
        scope: &UserScope,
        plan_id: &str,
    ) -> skills_store_traits::Result<()> {
        self.0.delete_plan(scope, plan_id).await
    }
    async fn insert_step(
        &self,
        scope: &UserScope,
        plan_id: &str,
        step: skills_store_traits::plans::NewStep,
    ) -> skills_store_traits::Result<skills_store_traits::plans::WorkingMemoryEntry> {
        if step.step_number >= 2 {
            return Err(skills_store_traits::Error::backend("disk full"));
        }
        self.0.insert_step(scope, plan_id, step).await
    }
    async fn update_step(
        &self,
        scope: &UserScope,
        plan_id: &str,
        step_number: u32,
        update: skills_store_traits::plans::StepUpdate,
    ) -> skills_store_traits::Result<skills_store_traits::plans::WorkingMemoryEntry> {
        self.0
            .update_step(scope, plan_id, step_number, update)
            .await
    }
    async fn get_step(
        &self,
        scope: &UserScope,
        plan_id: &str,
        step_number: u32,
    ) -> skills_store_traits::Result<Option<skills_store_traits::plans::WorkingMemoryEntry>> {
        self.0.get_step(scope, plan_id, step_number).await
    }
    async fn list_steps(
        &self,
        scope: &UserScope,
        plan_id: &str,
    ) -> skills_store_traits::Result<Vec<skills_store_traits::plans::WorkingMemoryEntry>> {
        self.0.list_steps(scope, plan_id).await
    }
}

#[test]
fn a_plan_whose_steps_cannot_be_stored_is_not_left_behind() {
    let plan = sample_plan();
    block_on(async {
        let store = FailingSteps(InMemoryPlanStore::new());
        let alice = UserScope::new("acme", "alice");
        let error = save_plan(&store, &alice, &plan).await.unwrap_err();
        assert!(error.to_string().contains("disk full"), "{error}");
        let left = store
            .list_plans(&alice, &skills_store_traits::plans::PlanFilter::new())
            .await
            .unwrap();
        assert!(left.is_empty());
    });
}

#[test]
fn a_wide_group_is_displayed_in_linear_size() {
    use skills_orchestrate::plan::MAX_PARALLEL_SHOWN;
    let specs: Vec<StepSpec> = (0..500)
        .map(|i| StepSpec::new(format!("s{i:03}"), "noop", "no-op"))
        .collect();
    let plan = block_on(Planner::new().plan("wide", specs)).unwrap();
    let display = plan.display();
    assert_eq!(display.steps.len(), 500);
    for step in &display.steps {
        assert_eq!(step.parallel_count, 499);
        assert_eq!(step.can_parallelize.len(), MAX_PARALLEL_SHOWN);
        assert!(!step.can_parallelize.contains(&step.step_id));
    }
}
