//! The group loop: groups in order, a group's steps concurrently up to the limit, skips
//! propagated along dependencies, completed steps of a stored plan reused, cancellation.
//!
//! Cost per step is independent of the plan's size: steps are found through one index built
//! up front, a step's skip check and input look only at its own dependencies, and a plan's
//! stored working memory is read once per run.

use std::collections::HashMap;
use std::time::Instant;

use futures::future::BoxFuture;
use futures::stream::{self, StreamExt};
use skills_store_traits::plans::{PlanUpdate, StepStatus, WorkingMemoryEntry};
use skills_store_traits::{PlanStore, UserScope, new_id};

use super::executor::{Executor, Run};
use super::memory::MemoryEntry;
use super::result::{ExecutionResult, StepResult, StepState};
use super::retry::{StepError, StepErrorKind};
use super::step::{StepCall, ended_entry};
use crate::error::{Error, Result};
use crate::llm::TokenUsage;
use crate::plan::{ExecutionPlan, PlanStep};
use crate::progress::ProgressEvent;

/// Where each step sits: its index in `plan.steps`, found by id.
struct Layout<'p> {
    index: HashMap<&'p str, usize>,
}

impl<'p> Layout<'p> {
    /// Checks that every step is in exactly one group and after all its dependencies.
    fn new(plan: &'p ExecutionPlan) -> Result<Self> {
        let invalid = |reason: String| Error::Invalid {
            what: format!("plan `{}`", plan.id),
            reason,
        };
        let mut index = HashMap::with_capacity(plan.steps.len());
        for (i, step) in plan.steps.iter().enumerate() {
            if index.insert(step.id.as_str(), i).is_some() {
                return Err(invalid(format!("step `{}` appears twice", step.id)));
            }
        }
        let mut group_of: Vec<Option<usize>> = vec![None; plan.steps.len()];
        for (g, group) in plan.groups.iter().enumerate() {
            for id in group {
                let &i = index
                    .get(id.as_str())
                    .ok_or_else(|| invalid(format!("group {g} names unknown step `{id}`")))?;
                if group_of[i].replace(g).is_some() {
                    return Err(invalid(format!("step `{id}` is in two groups")));
                }
            }
        }
        for (i, step) in plan.steps.iter().enumerate() {
            let g =
                group_of[i].ok_or_else(|| invalid(format!("step `{}` is in no group", step.id)))?;
            for dep in &step.depends_on {
                let before = index
                    .get(dep.as_str())
                    .and_then(|&d| group_of[d])
                    .is_some_and(|d| d < g);
                if !before {
                    return Err(invalid(format!(
                        "step `{}` depends on `{dep}`, which is not in an earlier group",
                        step.id
                    )));
                }
            }
        }
        Ok(Layout { index })
    }
}

/// The stored working memory of `plan_id`, by step number.
async fn stored_steps(
    store: &dyn PlanStore,
    scope: &UserScope,
    plan_id: &str,
) -> Result<HashMap<u32, WorkingMemoryEntry>> {
    match store.list_steps(scope, plan_id).await {
        Ok(steps) => Ok(steps.into_iter().map(|s| (s.step_number, s)).collect()),
        Err(skills_store_traits::Error::NotFound { .. }) => Err(Error::Invalid {
            what: format!("plan `{plan_id}`"),
            reason: "it is not in the plan store; save it before executing it".into(),
        }),
        Err(e) => Err(e.into()),
    }
}

/// A step that did not run: its result and its working-memory entry (`skipped` or
/// `cancelled`), stored when the run is persisted.
async fn not_run(
    executor: &Executor,
    (run, stored): (&Run, Option<&str>),
    step: &PlanStep,
    state: StepState,
    error: StepError,
) -> StepResult {
    let mut result = StepResult::new(&step.id, step.number, &step.skill, state);
    let entry = ended_entry(step, &error);
    executor.store_ended(run, stored, &entry).await;
    result.memory = Some(entry);
    result.error = Some(error);
    result
}

impl Executor {
    /// Boxed so composite skills can run nested plans through it.
    pub(super) fn run_plan<'a>(
        &'a self,
        plan: &'a ExecutionPlan,
        run: Run,
        depth: usize,
    ) -> BoxFuture<'a, Result<ExecutionResult>> {
        Box::pin(self.run_groups(plan, run, depth))
    }

    async fn run_groups(
        &self,
        plan: &ExecutionPlan,
        run: Run,
        depth: usize,
    ) -> Result<ExecutionResult> {
        let started = Instant::now();
        let layout = Layout::new(plan)?;
        let store = match (self.parts.store.as_deref(), run.stored_plan.as_deref()) {
            (Some(store), Some(id)) => Some((store, id)),
            _ => None,
        };
        let stored = match store {
            Some((store, id)) => {
                let stored = stored_steps(store, &run.scope, id).await?;
                store
                    .update_plan(&run.scope, id, PlanUpdate::new().started())
                    .await?;
                stored
            }
            None => HashMap::new(),
        };
        // Execution ids must be unique per attempt across runs (audit record ids, approvals).
        let nonce = new_id();
        let mut results: Vec<Option<StepResult>> = vec![None; plan.steps.len()];

        for (g, group) in plan.groups.iter().enumerate() {
            if run.cancel.is_cancelled() {
                break;
            }
            run.progress
                .emit(ProgressEvent::GroupStarting {
                    group: g,
                    steps: group.clone(),
                })
                .await;
            let mut runnable = Vec::with_capacity(group.len());
            for id in group {
                let Some(&i) = layout.index.get(id.as_str()) else {
                    continue;
                };
                let step = &plan.steps[i];
                if let Some(entry) = stored
                    .get(&step.number)
                    .filter(|e| e.status == StepStatus::Complete)
                {
                    let memory = MemoryEntry::from_stored(&step.id, entry);
                    run.progress
                        .emit(ProgressEvent::StepComplete {
                            step_id: step.id.clone(),
                            skill_id: step.skill.clone(),
                            summary: memory.summary.clone(),
                        })
                        .await;
                    let mut result =
                        StepResult::new(&step.id, step.number, &step.skill, StepState::Resumed);
                    result.memory = Some(memory);
                    results[i] = Some(result);
                    continue;
                }
                let blocker = step.depends_on.iter().find_map(|dep| {
                    let state = layout
                        .index
                        .get(dep.as_str())
                        .and_then(|&d| results[d].as_ref())
                        .map_or(StepState::Cancelled, |r| r.state);
                    (!state.succeeded()).then_some((dep, state))
                });
                if let Some((dep, state)) = blocker {
                    let reason = format!("dependency `{dep}` {}", state.as_str());
                    run.progress
                        .emit(ProgressEvent::StepSkipped {
                            step_id: step.id.clone(),
                            skill_id: step.skill.clone(),
                            reason: reason.clone(),
                        })
                        .await;
                    let error = StepError::new(StepErrorKind::Skipped, reason);
                    let stored = store.map(|(_, id)| id);
                    let skipped =
                        not_run(self, (&run, stored), step, StepState::Skipped, error).await;
                    results[i] = Some(skipped);
                    continue;
                }
                runnable.push(i);
            }

            let done: Vec<(usize, StepResult)> = {
                let results = &results;
                let calls = runnable.into_iter().map(|i| {
                    let step = &plan.steps[i];
                    let mut deps: Vec<&MemoryEntry> = step
                        .depends_on
                        .iter()
                        .filter_map(|dep| layout.index.get(dep.as_str()))
                        .filter_map(|&d| results[d].as_ref().and_then(|r| r.memory.as_ref()))
                        .filter(|entry| entry.completed())
                        .collect();
                    deps.sort_by_key(|entry| entry.step);
                    let call = StepCall {
                        plan,
                        step,
                        deps,
                        run: &run,
                        nonce: &nonce,
                        depth,
                        stored: store.map(|(_, id)| (id, stored.contains_key(&step.number))),
                    };
                    async move { (i, self.run_step(call).await) }
                });
                stream::iter(calls)
                    .buffer_unordered(self.parts.concurrency)
                    .collect()
                    .await
            };
            for (i, result) in done {
                results[i] = Some(result);
            }
        }

        let mut steps = Vec::with_capacity(plan.steps.len());
        let mut cancelled = false;
        for (i, slot) in results.into_iter().enumerate() {
            let result = match slot {
                Some(result) => result,
                None => {
                    let step = &plan.steps[i];
                    let reason = "execution cancelled".to_owned();
                    run.progress
                        .emit(ProgressEvent::StepSkipped {
                            step_id: step.id.clone(),
                            skill_id: step.skill.clone(),
                            reason: reason.clone(),
                        })
                        .await;
                    let error = StepError::new(StepErrorKind::Cancelled, reason);
                    let stored = store.map(|(_, id)| id);
                    not_run(self, (&run, stored), step, StepState::Cancelled, error).await
                }
            };
            cancelled |= result.state == StepState::Cancelled;
            steps.push(result);
        }
        let success = steps.iter().all(|s| s.state.succeeded());
        if let Some((store, id)) = store.filter(|_| !cancelled) {
            // Best effort: every step's own record is already stored, and failing here would
            // throw away the results the caller needs.
            let _ = store
                .update_plan(&run.scope, id, PlanUpdate::new().completed(success))
                .await;
        }
        let mut usage = TokenUsage::default();
        for step in &steps {
            usage.add(step.usage);
        }
        Ok(ExecutionResult {
            plan_id: plan.id.clone(),
            steps,
            success,
            cancelled,
            duration: started.elapsed(),
            usage,
        })
    }
}
