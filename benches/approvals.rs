//! What asking costs, apart from the person: an option request answered by `submit` from
//! another future (the runtime's round trip: id, event, pending registry, wake), one
//! `load_skill`-style approval of three scripts covered by an earlier `yes_in_session`, and
//! the same request asked through the option runtime and answered at once.
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::sync::Arc;

use criterion::{Criterion, criterion_group, criterion_main};
use futures::executor::block_on;
use skills::security::TrustLevel;
use skills::security::approval::{
    ApprovalOption, ApprovalRequest, ApprovalScript, Approvals, NonInteractive, OptionChannel,
    SessionScope,
};
use skills::security::hitl::{OptionRequest, OptionRuntime};
use skills::security::time::ThreadTimer;

fn request() -> ApprovalRequest {
    let scripts = (0..3)
        .map(|i| {
            ApprovalScript::new(
                &format!("/skills/report/scripts/s{i}.py"),
                &format!("scripts/s{i}.py"),
                &format!("{i:064x}"),
                "python3 -I -B",
                &["--fast".to_owned()],
                &[],
            )
        })
        .collect();
    ApprovalRequest::for_scripts(
        SessionScope::new("acme", "chat-1"),
        "report",
        TrustLevel::User,
        scripts,
    )
}

/// Asks and answers from a second future on the same thread, polling `pending`.
async fn ask_and_answer(runtime: &OptionRuntime, ask: impl std::future::Future) {
    let answer = async {
        loop {
            if let Some(event) = runtime.pending("acme").first() {
                runtime
                    .submit("acme", &event.request_id, "yes_once", Some("alice"))
                    .unwrap();
                return;
            }
            futures::pending!();
        }
    };
    futures::join!(ask, answer);
}

fn bench(c: &mut Criterion) {
    let mut group = c.benchmark_group("approvals");
    let runtime = OptionRuntime::new(Arc::new(ThreadTimer::new()));
    group.bench_function("option_request_submit", |b| {
        b.iter(|| {
            block_on(ask_and_answer(
                &runtime,
                runtime.request(OptionRequest::approval("acme", "Run?", "details")),
            ))
        })
    });
    let cached = Approvals::new(Arc::new(NonInteractive(ApprovalOption::YesInSession)));
    let req = request();
    block_on(cached.decide(&req));
    group.bench_function("decide_three_scripts_session_cached", |b| {
        b.iter(|| assert!(block_on(cached.decide(&req)).approved()))
    });
    let runtime = Arc::new(OptionRuntime::new(Arc::new(ThreadTimer::new())));
    let through = Approvals::new(Arc::new(OptionChannel::new(runtime.clone())));
    group.bench_function("decide_three_scripts_through_runtime", |b| {
        b.iter(|| block_on(ask_and_answer(&runtime, through.decide(&req))))
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
