//! Benchmarks of planning and executing (issue 8), everything in memory, no progress shown:
//!
//! * `orchestrate/wide_10k`: plan and execute 10,000 no-op native steps, one root and 9,999
//!   steps depending on it (two groups; the second runs 9,999 steps at the default
//!   concurrency of 4);
//! * `orchestrate/deep_10k`: plan and execute a chain of 10,000 no-op native steps (10,000
//!   groups of one);
//! * `orchestrate/wide_10k_stored`, `orchestrate/deep_10k_stored`: the same, persisted
//!   (`save_plan` into an `InMemoryPlanStore`, working memory written step by step) and with
//!   every attempt's execution record appended to an `AuditTrail` over an
//!   `InMemoryAuditStore`;
//! * `orchestrate/plan_wide_10k`, `orchestrate/plan_deep_10k`: planning alone.
//!
//! Each step still goes through the whole pipeline: the skill resolved, the input built
//! from working memory and sanitized, the sub-agent context rendered, the native skill
//! called, its output checked against the execution's vault, the working-memory entry built.
//! The per-step overhead is the time over 10,000. Before the runs, one execution per shape at
//! 1,000 and 10,000 steps is timed, to show the cost grows linearly (not quadratically).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;
use std::time::{Duration, Instant};

use async_trait::async_trait;
use criterion::{Criterion, Throughput};
use futures::executor::block_on;
use skills::orchestrate::execute::{
    Executor, InMemorySkills, NativeSkill, Run, SkillDefinition, SkillInput, StepError, StepOutput,
};
use skills::orchestrate::plan::{ExecutionPlan, Planner, StepSpec, save_plan};
use skills::security::TrustLevel;
use skills::security::audit::AuditTrail;
use skills::store::UserScope;
use skills::store::in_memory::{InMemoryAuditStore, InMemoryPlanStore};

const STEPS: usize = 10_000;

struct NoOp;

#[async_trait]
impl NativeSkill for NoOp {
    async fn run(&self, _input: &SkillInput) -> Result<StepOutput, StepError> {
        Ok(StepOutput::text("ok"))
    }
}

fn wide(n: usize) -> Vec<StepSpec> {
    let mut specs = vec![StepSpec::new("root", "noop", "root")];
    specs.extend((1..n).map(|i| StepSpec::new(format!("s{i}"), "noop", "leaf").after("root")));
    specs
}

fn deep(n: usize) -> Vec<StepSpec> {
    (0..n)
        .map(|i| {
            let spec = StepSpec::new(format!("s{i}"), "noop", "link");
            if i == 0 {
                spec
            } else {
                spec.after(format!("s{}", i - 1))
            }
        })
        .collect()
}

fn skills() -> Arc<InMemorySkills> {
    Arc::new(InMemorySkills::new().with(SkillDefinition::native("noop").trust(TrustLevel::User)))
}

fn plain() -> Executor {
    Executor::builder(
        skills(),
        skills::security::gate::PolicyGate::allow_all(
            skills::security::audit::AuditTrail::in_memory(),
        ),
    )
    .native("noop", Arc::new(NoOp))
    .build()
}

async fn plan_and_run(executor: &Executor, specs: Vec<StepSpec>) -> ExecutionPlan {
    let plan = Planner::new().plan("bench", specs).await.unwrap();
    let result = executor
        .execute(&plan, Run::new(UserScope::new("acme", "alice")))
        .await
        .unwrap();
    assert!(result.success);
    plan
}

/// Plan, save, execute persisted and audited, on fresh stores.
async fn plan_and_run_stored(specs: Vec<StepSpec>) {
    let store = Arc::new(InMemoryPlanStore::new());
    let executor = Executor::builder(
        skills(),
        skills::security::gate::PolicyGate::allow_all(AuditTrail::new(Arc::new(
            InMemoryAuditStore::new(),
        ))),
    )
    .native("noop", Arc::new(NoOp))
    .plan_store(store.clone())
    .build();
    let scope = UserScope::new("acme", "alice");
    let plan = Planner::new().plan("bench", specs).await.unwrap();
    let record = save_plan(store.as_ref(), &scope, &plan).await.unwrap();
    let result = executor
        .execute(&plan, Run::new(scope).stored_plan(record.id))
        .await
        .unwrap();
    assert!(result.success);
}

fn once(what: &str, n: usize, run: impl FnOnce()) -> Duration {
    let started = Instant::now();
    run();
    let took = started.elapsed();
    println!(
        "{what} {n:>6} steps: {:>8.1} ms, {:>6.1} µs/step",
        took.as_secs_f64() * 1e3,
        took.as_secs_f64() * 1e6 / n as f64
    );
    took
}

fn main() {
    let mut c = Criterion::default()
        .sample_size(10)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(4))
        .configure_from_args();
    let executor = plain();

    for n in [1_000, STEPS] {
        once("wide", n, || {
            drop(block_on(plan_and_run(&executor, wide(n))))
        });
        once("deep", n, || {
            drop(block_on(plan_and_run(&executor, deep(n))))
        });
    }

    let mut group = c.benchmark_group("orchestrate");
    group.throughput(Throughput::Elements(STEPS as u64));
    group.bench_function("plan_wide_10k", |b| {
        b.iter(|| block_on(Planner::new().plan("bench", wide(STEPS))).unwrap())
    });
    group.bench_function("plan_deep_10k", |b| {
        b.iter(|| block_on(Planner::new().plan("bench", deep(STEPS))).unwrap())
    });
    group.bench_function("wide_10k", |b| {
        b.iter(|| block_on(plan_and_run(&executor, wide(STEPS))))
    });
    group.bench_function("deep_10k", |b| {
        b.iter(|| block_on(plan_and_run(&executor, deep(STEPS))))
    });
    group.bench_function("wide_10k_stored", |b| {
        b.iter(|| block_on(plan_and_run_stored(wide(STEPS))))
    });
    group.bench_function("deep_10k_stored", |b| {
        b.iter(|| block_on(plan_and_run_stored(deep(STEPS))))
    });
    group.finish();
    c.final_summary();
}
