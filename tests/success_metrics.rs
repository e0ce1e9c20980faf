//! Seed 000 part 8's success metrics on a hand-built audit trail: every figure fixed, and
//! each one shown to depend on what the trail says (asks, denials, durations).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::sync::Arc;

use skills::security::audit::{
    AuditFilter, AuditTrail, PolicyFlag, SuccessMetrics, Verdict, Viewer, error_text,
};
use skills::store::TenantId;
use skills::store::audit::AuditRecord;
use skills::store::in_memory::InMemoryAuditStore;

/// A gate decision for `execution`, recorded as the gate does (a policy flag).
fn decision(user: &str, skill: &str, execution: &str, verdict: Verdict) -> AuditRecord {
    let code = match verdict {
        Verdict::Allow => "allowed",
        Verdict::AskApproval => "approval_required",
        Verdict::Deny => "not_permitted",
    };
    let allowed = verdict == Verdict::Allow;
    let mut record = AuditRecord::new(
        user,
        skill,
        format!("skills/{skill}"),
        "core",
        "in",
        allowed,
    );
    if !allowed {
        record.error = Some(error_text(code, "why"));
    }
    record.security_flags = vec![PolicyFlag::new(verdict, execution, code, "why", None).to_flag()];
    record
}

/// The execution record of `execution`: `error` as `(code, message)` for a failure.
fn execution(
    user: &str,
    skill: &str,
    execution: &str,
    ms: u64,
    error: Option<(&str, &str)>,
) -> AuditRecord {
    let mut record = AuditRecord::new(
        user,
        skill,
        format!("skills/{skill}"),
        "core",
        "in",
        error.is_none(),
    );
    record.id = execution.to_owned();
    record.execution_time_ms = Some(ms);
    record.error = error.map(|(code, message)| error_text(code, message));
    record
}

/// The trail, in order:
///
/// | execution | user / skill | gate | outcome | ms |
/// |---|---|---|---|---|
/// | e1, e2 | alice / pdf | asked, approved | success | 1,000; 2,000 |
/// | e3 | alice / pdf | allowed without asking (trust established) | success | 3,000 |
/// | e4 | alice / pdf | allowed | timeout | 45,000 |
/// | e5 | alice / pdf | asked again (trust was reset) | success | 5,000 |
/// | e6 | alice / crm | asked, the person refused | denied | — |
/// | e7 | bob / pdf | allowed (trust established) | success | 500 |
/// | e8 | bob / pdf | denied by rule | denied | — |
/// | e9 | bob / pdf | allowed | failed | 2,500 |
/// | e10 | carol / pdf | asked, approved | success | 29,999 |
fn trail_records() -> Vec<AuditRecord> {
    use Verdict::{Allow, AskApproval, Deny};
    let asked_then_ran = |user, skill, id, ms, error| {
        vec![
            decision(user, skill, id, AskApproval),
            decision(user, skill, id, Allow),
            execution(user, skill, id, ms, error),
        ]
    };
    let ran = |user, skill, id, ms, error| {
        vec![
            decision(user, skill, id, Allow),
            execution(user, skill, id, ms, error),
        ]
    };
    let timeout = Some(("timeout", "after 45s"));
    let failed = Some(("failed", "the service is down"));
    [
        asked_then_ran("alice", "pdf", "e1", 1_000, None),
        asked_then_ran("alice", "pdf", "e2", 2_000, None),
        ran("alice", "pdf", "e3", 3_000, None),
        ran("alice", "pdf", "e4", 45_000, timeout),
        asked_then_ran("alice", "pdf", "e5", 5_000, None),
        vec![
            decision("alice", "crm", "e6", AskApproval),
            execution(
                "alice",
                "crm",
                "e6",
                0,
                Some(("denied", "approval refused")),
            ),
        ],
        ran("bob", "pdf", "e7", 500, None),
        vec![
            decision("bob", "pdf", "e8", Deny),
            execution(
                "bob",
                "pdf",
                "e8",
                0,
                Some(("denied", "not_permitted: why")),
            ),
        ],
        ran("bob", "pdf", "e9", 2_500, failed),
        asked_then_ran("carol", "pdf", "e10", 29_999, None),
    ]
    .concat()
}

async fn trail() -> (AuditTrail, TenantId) {
    let trail = AuditTrail::new(Arc::new(InMemoryAuditStore::new()));
    let acme = TenantId::new("acme");
    for record in trail_records() {
        trail.append(&acme, record).await.unwrap();
    }
    (trail, acme)
}

#[tokio::test]
async fn the_metrics_of_a_known_log_are_exactly_these() {
    let (trail, acme) = trail().await;
    let log = trail
        .usage_log(&acme, &Viewer::Auditor, &AuditFilter::new())
        .await
        .unwrap();
    // The usage log marks the executions the gate asked a person about.
    let asked: Vec<(&str, bool)> = log
        .iter()
        .map(|row| (row.execution_id.as_str(), row.asked_approval))
        .collect();
    assert_eq!(
        asked,
        [
            ("e1", true),
            ("e2", true),
            ("e3", false),
            ("e4", false),
            ("e5", true),
            ("e6", true),
            ("e7", false),
            ("e8", false),
            ("e8", false),
            ("e9", false),
            ("e10", true),
        ]
    );

    let metrics =
        SuccessMetrics::from_usage_log(&log).with_context_sizes([1_200, 2_400, 3_600, 2_000]);
    // Executions: e1-e5, e7, e9, e10 (e6 and e8 never ran).
    assert_eq!((metrics.executions, metrics.successes), (8, 6));
    assert_eq!(metrics.success_rate, Some(0.75));
    assert_eq!(metrics.denied, 2);
    // 500 1,000 2,000 2,500 3,000 5,000 29,999 45,000: rank ceil(0.95 x 8) = 8.
    assert_eq!(metrics.p95_latency_ms, Some(45_000));
    assert_eq!(
        (metrics.under_30s, metrics.under_30s_rate),
        (7, Some(0.875))
    );
    // After trust: alice/pdf from e3 (e3, e4 unasked; e5 asked), bob/pdf from e7 (e7, e9);
    // carol was asked on her only run, so her trust is not established.
    assert_eq!((metrics.after_trust, metrics.auto_approved), (5, 4));
    assert_eq!(metrics.auto_approval_rate, Some(0.8));
    let context = metrics.context.unwrap();
    assert_eq!(
        (
            context.runs,
            context.mean_tokens,
            context.p95_tokens,
            context.max_tokens,
            context.within_target,
            context.within_target_rate
        ),
        (4, 2_300.0, 3_600, 3_600, 3, 0.75)
    );

    // A user sees the metrics of their own records only.
    let alice = trail
        .usage_log(&acme, &Viewer::User("alice".into()), &AuditFilter::new())
        .await
        .unwrap();
    let mine = SuccessMetrics::from_usage_log(&alice);
    assert_eq!((mine.executions, mine.successes, mine.denied), (5, 4, 1));
    assert_eq!((mine.after_trust, mine.auto_approved), (3, 2));
    assert_eq!(mine.context, None);
}

#[test]
fn an_empty_log_has_no_rates() {
    let metrics = SuccessMetrics::from_usage_log(&[]).with_context_sizes([]);
    assert_eq!(metrics.executions, 0);
    assert_eq!(
        (
            metrics.success_rate,
            metrics.p95_latency_ms,
            metrics.under_30s_rate,
            metrics.auto_approval_rate
        ),
        (None, None, None, None)
    );
    assert_eq!(metrics.context, None);
}
