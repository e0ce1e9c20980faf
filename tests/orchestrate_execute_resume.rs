//! Resuming a stored plan: after a crash (the run's future dropped while a step runs),
//! after a failure, and after a cancellation, completed steps are reused from the plan store
//! and never run again.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod orchestrate_execute_support;

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use futures::channel::oneshot;
use futures::executor::block_on;
use futures::future::{Either, FutureExt, select};
use orchestrate_execute_support::{Probe, alice, chain, natives, no_wait, plan};
use skills::orchestrate::Error;
use skills::orchestrate::execute::{
    CancelToken, Executor, ExtractedFact, NativeSkill, Run, SkillInput, StepError, StepOutput,
    StepState,
};
use skills::orchestrate::plan::{load_plan, save_plan};
use skills::orchestrate::progress::CollectingSink;
use skills::store::PlanStore;
use skills::store::in_memory::InMemoryPlanStore;
use skills::store::plans::StepStatus;

/// Hangs forever on the first call of step `hang`, after telling the test it started;
/// otherwise answers with a summary, an artifact and a fact.
struct Crashy {
    hang: &'static str,
    started: Mutex<Option<oneshot::Sender<()>>>,
    calls: Mutex<BTreeMap<String, usize>>,
    inputs: Mutex<BTreeMap<String, String>>,
}

impl Crashy {
    fn new(hang: &'static str) -> (Arc<Self>, oneshot::Receiver<()>) {
        let (sender, receiver) = oneshot::channel();
        let crashy = Crashy {
            hang,
            started: Mutex::new(Some(sender)),
            calls: Mutex::new(BTreeMap::new()),
            inputs: Mutex::new(BTreeMap::new()),
        };
        (Arc::new(crashy), receiver)
    }

    fn calls(&self) -> BTreeMap<String, usize> {
        self.calls.lock().unwrap().clone()
    }

    fn input(&self, step: &str) -> String {
        self.inputs
            .lock()
            .unwrap()
            .get(step)
            .cloned()
            .unwrap_or_default()
    }
}

#[async_trait]
impl NativeSkill for Crashy {
    async fn run(&self, input: &SkillInput) -> Result<StepOutput, StepError> {
        let call = {
            let mut calls = self.calls.lock().unwrap();
            let n = calls.entry(input.step_id.clone()).or_insert(0);
            *n += 1;
            *n
        };
        self.inputs
            .lock()
            .unwrap()
            .insert(input.step_id.clone(), input.input.clone());
        if input.step_id == self.hang && call == 1 {
            if let Some(started) = self.started.lock().unwrap().take() {
                let _ = started.send(());
            }
            futures::future::pending::<()>().await;
        }
        Ok(StepOutput::text(format!("{} summary", input.step_id))
            .artifact(format!("{}.out", input.step_id))
            .fact(ExtractedFact::new(input.step_id.clone(), "ran", "yes")))
    }
}

async fn statuses(store: &InMemoryPlanStore, plan_id: &str) -> Vec<StepStatus> {
    store
        .list_steps(&alice(), plan_id)
        .await
        .unwrap()
        .iter()
        .map(|s| s.status)
        .collect()
}

#[test]
fn a_crashed_run_resumes_without_running_completed_steps_again() {
    let store = Arc::new(InMemoryPlanStore::new());
    let (crashy, started) = Crashy::new("c");
    let executor = Executor::builder(
        Arc::new(natives(&["work"])),
        skills::security::gate::PolicyGate::allow_all(
            skills::security::audit::AuditTrail::in_memory(),
        ),
    )
    .native("work", crashy.clone())
    .plan_store(store.clone())
    .build();
    let plan = block_on(plan(chain(&["a", "b", "c", "d"], "work")));
    let record = block_on(save_plan(store.as_ref(), &alice(), &plan)).unwrap();

    // The crash: the run's future is dropped while step c is running.
    let run = executor
        .execute(&plan, Run::new(alice()).stored_plan(record.id.clone()))
        .boxed();
    match block_on(select(run, started)) {
        Either::Right((_, unfinished)) => drop(unfinished),
        Either::Left((result, _)) => panic!("the run finished: {result:?}"),
    }
    assert_eq!(
        block_on(statuses(&store, &record.id)),
        [
            StepStatus::Complete,
            StepStatus::Complete,
            StepStatus::Running,
            StepStatus::Pending
        ]
    );

    // After the restart: the plan comes back from the store and runs again.
    let (loaded, _) = block_on(load_plan(store.as_ref(), &alice(), &record.id))
        .unwrap()
        .unwrap();
    let sink = Arc::new(CollectingSink::new());
    let run = Run::new(alice())
        .stored_plan(record.id.clone())
        .progress(sink.clone());
    let result = block_on(executor.execute(&loaded, run)).unwrap();
    assert!(result.success, "{result:?}");
    let states: Vec<StepState> = result.steps.iter().map(|s| s.state).collect();
    assert_eq!(
        states,
        [
            StepState::Resumed,
            StepState::Resumed,
            StepState::Complete,
            StepState::Complete
        ]
    );
    let calls = crashy.calls();
    assert_eq!(
        (calls["a"], calls["b"], calls["c"], calls["d"]),
        (1, 1, 2, 1)
    );
    // c got b's stored working memory, artifacts and facts included.
    let c_input = crashy.input("c");
    assert!(
        c_input.contains("b summary")
            && c_input.contains("Artifacts: b.out")
            && c_input.contains("Fact: b | ran | yes"),
        "{c_input}"
    );
    assert_eq!(
        result.step("b").unwrap().memory.as_ref().unwrap().artifacts,
        ["b.out"]
    );
    // Reused steps show as complete without starting.
    assert_eq!(
        sink.names(),
        [
            "group_starting",
            "step_complete",
            "group_starting",
            "step_complete",
            "group_starting",
            "step_starting",
            "step_complete",
            "group_starting",
            "step_starting",
            "step_complete",
        ]
    );
    assert_eq!(
        block_on(statuses(&store, &record.id)),
        [StepStatus::Complete; 4]
    );
    let stored = block_on(store.get_plan(&alice(), &record.id))
        .unwrap()
        .unwrap();
    assert_eq!(stored.success, Some(true));
    assert!(stored.execution_started_at.is_some() && stored.execution_completed_at.is_some());

    // A third run finds nothing left to do.
    let result =
        block_on(executor.execute(&loaded, Run::new(alice()).stored_plan(record.id.clone())))
            .unwrap();
    assert!(result.steps.iter().all(|s| s.state == StepState::Resumed));
    assert_eq!(crashy.calls().values().sum::<usize>(), 5);
}

#[test]
fn a_failed_step_runs_again_on_resume_and_completed_ones_do_not() {
    let store = Arc::new(InMemoryPlanStore::new());
    let broken = Arc::new(AtomicBool::new(true));
    let flag = broken.clone();
    let probe = Probe::new(move |input, _| {
        if input.step_id == "b" && flag.load(Ordering::SeqCst) {
            Err(StepError::failed("the service is down"))
        } else {
            Ok(StepOutput::text(format!("{} ok", input.step_id)))
        }
    });
    let executor = Executor::builder(
        Arc::new(natives(&["work"])),
        skills::security::gate::PolicyGate::allow_all(
            skills::security::audit::AuditTrail::in_memory(),
        ),
    )
    .native("work", probe.clone())
    .plan_store(store.clone())
    .retry(no_wait(1))
    .build();
    let plan = block_on(plan(chain(&["a", "b", "c"], "work")));
    let record = block_on(save_plan(store.as_ref(), &alice(), &plan)).unwrap();
    let run = || Run::new(alice()).stored_plan(record.id.clone());
    let first = block_on(executor.execute(&plan, run())).unwrap();
    assert!(!first.success);
    // Every step leaves an entry with its status: the failed one says why, the one after it
    // says it was skipped; neither carries output.
    assert_eq!(
        block_on(statuses(&store, &record.id)),
        [
            StepStatus::Complete,
            StepStatus::Failed,
            StepStatus::Skipped
        ]
    );
    let failed = block_on(store.get_step(&alice(), &record.id, 2))
        .unwrap()
        .unwrap();
    assert_eq!(
        failed.summary.as_deref(),
        Some("failed: the service is down")
    );
    assert_eq!(failed.artifacts, serde_json::json!([]));
    let skipped = block_on(store.get_step(&alice(), &record.id, 3))
        .unwrap()
        .unwrap();
    assert_eq!(
        skipped.summary.as_deref(),
        Some("skipped: dependency `b` failed")
    );
    let entries: Vec<(StepStatus, &str)> = first
        .steps
        .iter()
        .map(|s| {
            let entry = s.memory.as_ref().unwrap();
            (entry.status, entry.summary.as_str())
        })
        .collect();
    assert_eq!(
        entries,
        [
            (StepStatus::Complete, "a ok"),
            (StepStatus::Failed, "failed: the service is down"),
            (StepStatus::Skipped, "skipped: dependency `b` failed")
        ]
    );
    assert_eq!(
        first.memory().count(),
        1,
        "only completed entries are handed on"
    );
    assert_eq!(
        block_on(store.get_plan(&alice(), &record.id))
            .unwrap()
            .unwrap()
            .success,
        Some(false)
    );

    broken.store(false, Ordering::SeqCst);
    let second = block_on(executor.execute(&plan, run())).unwrap();
    assert!(second.success);
    assert_eq!(
        (probe.calls("a"), probe.calls("b"), probe.calls("c")),
        (1, 2, 1)
    );
    assert!(
        probe.input("b").contains("a ok"),
        "the reused entry is handed on"
    );
}

#[test]
fn a_cancelled_run_resumes_where_it_stopped() {
    let store = Arc::new(InMemoryPlanStore::new());
    let token = CancelToken::new();
    let handle = token.clone();
    let probe = Probe::new(move |input, _| {
        if input.step_id == "b" {
            handle.cancel();
        }
        Ok(StepOutput::text(format!("{} ok", input.step_id)))
    });
    let executor = Executor::builder(
        Arc::new(natives(&["work"])),
        skills::security::gate::PolicyGate::allow_all(
            skills::security::audit::AuditTrail::in_memory(),
        ),
    )
    .native("work", probe.clone())
    .plan_store(store.clone())
    .build();
    let plan = block_on(plan(chain(&["a", "b", "c", "d"], "work")));
    let record = block_on(save_plan(store.as_ref(), &alice(), &plan)).unwrap();
    let first = block_on(
        executor.execute(
            &plan,
            Run::new(alice())
                .stored_plan(record.id.clone())
                .cancel(token),
        ),
    )
    .unwrap();
    assert!(first.cancelled);
    assert_eq!(first.in_state(StepState::Cancelled).count(), 2);
    assert_eq!(
        block_on(statuses(&store, &record.id)),
        [
            StepStatus::Complete,
            StepStatus::Complete,
            StepStatus::Cancelled,
            StepStatus::Cancelled
        ],
        "steps never started say so"
    );
    let stored = block_on(store.get_plan(&alice(), &record.id))
        .unwrap()
        .unwrap();
    assert_eq!(
        stored.execution_completed_at, None,
        "a cancelled run is not finished"
    );

    let second =
        block_on(executor.execute(&plan, Run::new(alice()).stored_plan(record.id.clone())))
            .unwrap();
    assert!(second.success);
    assert_eq!(
        probe.total_calls(),
        4,
        "every step ran exactly once over both runs"
    );
}

#[test]
fn a_stored_run_of_a_plan_the_store_does_not_hold_is_refused() {
    let store = Arc::new(InMemoryPlanStore::new());
    let probe = Probe::ok();
    let executor = Executor::builder(
        Arc::new(natives(&["work"])),
        skills::security::gate::PolicyGate::allow_all(
            skills::security::audit::AuditTrail::in_memory(),
        ),
    )
    .native("work", probe.clone())
    .plan_store(store)
    .build();
    let plan = block_on(plan(chain(&["a"], "work")));
    let error =
        block_on(executor.execute(&plan, Run::new(alice()).stored_plan("nope"))).unwrap_err();
    assert!(matches!(error, Error::Invalid { .. }), "{error}");
    assert_eq!(probe.total_calls(), 0);
    // Without a stored id the same executor runs the plan unpersisted.
    assert!(
        block_on(executor.execute(&plan, Run::new(alice())))
            .unwrap()
            .success
    );
}
