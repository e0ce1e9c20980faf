//! Shared doubles for the executor tests: a scriptable native skill that records its calls
//! and measures how many of its runs overlap, and plan helpers.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::BTreeMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

use async_trait::async_trait;
use skills::orchestrate::execute::{
    InMemorySkills, NativeSkill, RetryPolicy, SkillDefinition, SkillInput, StepError, StepOutput,
};
use skills::orchestrate::plan::{ExecutionPlan, Planner, StepSpec};
use skills::security::TrustLevel;
use skills::store::UserScope;

type Behaviour = dyn Fn(&SkillInput, usize) -> Result<StepOutput, StepError> + Send + Sync;

/// A native skill whose answer a closure decides (given the input and the 1-based number of
/// the call for that step), that yields to the executor `yields` times mid-run so that runs
/// overlap, and that records every call.
pub struct Probe {
    behaviour: Box<Behaviour>,
    yields: usize,
    in_flight: AtomicUsize,
    max_in_flight: AtomicUsize,
    calls: Mutex<BTreeMap<String, usize>>,
    inputs: Mutex<Vec<SkillInput>>,
}

impl Probe {
    pub fn new(
        behaviour: impl Fn(&SkillInput, usize) -> Result<StepOutput, StepError> + Send + Sync + 'static,
    ) -> Arc<Self> {
        Arc::new(Probe {
            behaviour: Box::new(behaviour),
            yields: 2,
            in_flight: AtomicUsize::new(0),
            max_in_flight: AtomicUsize::new(0),
            calls: Mutex::new(BTreeMap::new()),
            inputs: Mutex::new(Vec::new()),
        })
    }

    /// Answers `"<step> done"`.
    pub fn ok() -> Arc<Self> {
        Probe::new(|input, _| Ok(StepOutput::text(format!("{} done", input.step_id))))
    }

    /// Calls per step id.
    pub fn calls(&self, step: &str) -> usize {
        self.calls.lock().unwrap().get(step).copied().unwrap_or(0)
    }

    /// All calls.
    pub fn total_calls(&self) -> usize {
        self.calls.lock().unwrap().values().sum()
    }

    /// The most runs in flight at once.
    pub fn max_in_flight(&self) -> usize {
        self.max_in_flight.load(Ordering::SeqCst)
    }

    /// The input of the last call of `step`.
    pub fn input(&self, step: &str) -> String {
        let inputs = self.inputs.lock().unwrap();
        inputs
            .iter()
            .rev()
            .find(|i| i.step_id == step)
            .map(|i| i.input.clone())
            .unwrap_or_default()
    }

    /// Step ids in call order.
    pub fn order(&self) -> Vec<String> {
        self.inputs
            .lock()
            .unwrap()
            .iter()
            .map(|i| i.step_id.clone())
            .collect()
    }
}

#[async_trait]
impl NativeSkill for Probe {
    async fn run(&self, input: &SkillInput) -> Result<StepOutput, StepError> {
        let call = {
            let mut calls = self.calls.lock().unwrap();
            let n = calls.entry(input.step_id.clone()).or_insert(0);
            *n += 1;
            *n
        };
        self.inputs.lock().unwrap().push(input.clone());
        let now = self.in_flight.fetch_add(1, Ordering::SeqCst) + 1;
        self.max_in_flight.fetch_max(now, Ordering::SeqCst);
        for _ in 0..self.yields {
            YieldNow(false).await;
        }
        self.in_flight.fetch_sub(1, Ordering::SeqCst);
        (self.behaviour)(input, call)
    }
}

/// Returns `Pending` once (waking itself), so other futures get polled in between.
pub struct YieldNow(pub bool);

impl Future for YieldNow {
    type Output = ();
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if self.0 {
            Poll::Ready(())
        } else {
            self.0 = true;
            cx.waker().wake_by_ref();
            Poll::Pending
        }
    }
}

/// Native skills `names`, each at user trust (it may see internal data) and never retried
/// unless a test says otherwise.
pub fn natives(names: &[&str]) -> InMemorySkills {
    names.iter().fold(InMemorySkills::new(), |skills, name| {
        skills.with(SkillDefinition::native(*name).trust(TrustLevel::User))
    })
}

/// A retry policy without waits.
pub fn no_wait(attempts: u32) -> RetryPolicy {
    RetryPolicy::new(attempts).backoff(std::time::Duration::ZERO, std::time::Duration::ZERO)
}

pub fn alice() -> UserScope {
    UserScope::new("acme", "alice")
}

pub async fn plan(specs: Vec<StepSpec>) -> ExecutionPlan {
    Planner::new().plan("test task", specs).await.unwrap()
}

/// `a -> b -> c -> ...` over `skill`.
pub fn chain(ids: &[&str], skill: &str) -> Vec<StepSpec> {
    ids.iter()
        .enumerate()
        .map(|(i, id)| {
            let spec = StepSpec::new(*id, skill, format!("Do {id}"));
            if i == 0 { spec } else { spec.after(ids[i - 1]) }
        })
        .collect()
}
