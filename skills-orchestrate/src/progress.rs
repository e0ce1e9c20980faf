//! Progress events (seed 000 section 3.2): what the orchestrator tells the user while it works.
//!
//! Events are plain serializable values. They reach the host through a [`ProgressSink`]
//! (a WebSocket, a log, a UI) or as a [`futures::Stream`] from [`progress_channel`]. Each event
//! also has the display form of section 3.2 ([`ProgressEvent::display`]), the JSON a client
//! renders.

use std::pin::Pin;
use std::sync::Mutex;
use std::task::{Context, Poll};

use async_trait::async_trait;
use futures::Stream;
use futures::channel::mpsc;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// One step of a plan as the user sees it when the plan is created.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PlanStepDisplay {
    /// The step's number, from 1.
    pub step: u32,
    /// The step's id.
    pub step_id: String,
    /// The skill it runs.
    pub skill: String,
    /// What it does.
    pub description: String,
    /// The ids of the steps that may run at the same time (same parallel group), at most
    /// [`MAX_PARALLEL_SHOWN`](crate::plan::MAX_PARALLEL_SHOWN) of them.
    pub can_parallelize: Vec<String>,
    /// How many steps may run at the same time as this one, named or not.
    #[serde(default)]
    pub parallel_count: usize,
}

/// A plan as the user sees it (the `plan_created` shape of section 3.2).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PlanDisplay {
    /// The plan's id.
    pub plan_id: String,
    /// Its steps, in execution order.
    pub steps: Vec<PlanStepDisplay>,
    /// The estimated wall-clock time, in milliseconds.
    pub estimated_duration_ms: u64,
    /// Whether the user must approve before anything runs.
    pub requires_approval: bool,
}

/// What happened, in the order it happened.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
#[non_exhaustive]
pub enum ProgressEvent {
    /// A plan was made.
    PlanCreated {
        /// The plan as shown to the user.
        plan: PlanDisplay,
    },
    /// A parallel group is about to run.
    GroupStarting {
        /// The group's index, from 0.
        group: usize,
        /// The ids of its steps.
        steps: Vec<String>,
    },
    /// A step is about to run.
    StepStarting {
        /// The step's id.
        step_id: String,
        /// The skill it runs.
        skill_id: String,
        /// Which attempt this is, from 1.
        attempt: u32,
    },
    /// A step finished.
    StepComplete {
        /// The step's id.
        step_id: String,
        /// The skill it ran.
        skill_id: String,
        /// Its working-memory summary.
        summary: String,
    },
    /// A step failed (after its retries, or a retry is coming when `can_retry`).
    StepFailed {
        /// The step's id.
        step_id: String,
        /// The skill it ran.
        skill_id: String,
        /// Why.
        error: String,
        /// Whether another attempt follows.
        can_retry: bool,
    },
    /// A step was not run (a dependency failed or was skipped, or execution was cancelled).
    StepSkipped {
        /// The step's id.
        step_id: String,
        /// The skill it would have run.
        skill_id: String,
        /// Why it was skipped.
        reason: String,
    },
    /// The results were synthesized.
    Synthesis {
        /// The summary for the user.
        summary: String,
        /// Artifacts the steps produced.
        artifacts: Vec<String>,
        /// Suggested next steps.
        next_steps: Vec<String>,
    },
}

impl ProgressEvent {
    /// The event's name: `plan_created`, `group_starting`, `step_starting`, `step_complete`,
    /// `step_failed`, `step_skipped` or `synthesis`.
    pub fn name(&self) -> &'static str {
        match self {
            ProgressEvent::PlanCreated { .. } => "plan_created",
            ProgressEvent::GroupStarting { .. } => "group_starting",
            ProgressEvent::StepStarting { .. } => "step_starting",
            ProgressEvent::StepComplete { .. } => "step_complete",
            ProgressEvent::StepFailed { .. } => "step_failed",
            ProgressEvent::StepSkipped { .. } => "step_skipped",
            ProgressEvent::Synthesis { .. } => "synthesis",
        }
    }

    /// The display form of seed 000 section 3.2 (`type` plan, progress or complete).
    pub fn display(&self) -> Value {
        match self {
            ProgressEvent::PlanCreated { plan } => json!({
                "type": "plan",
                "message": "I'll need to use these skills:",
                "steps": plan.steps.iter().map(|s| json!({
                    "step": s.step,
                    "skill": s.skill,
                    "description": s.description,
                    "can_parallelize": s.can_parallelize,
                    "parallel_count": s.parallel_count,
                })).collect::<Vec<_>>(),
                "estimated_time": plan.estimated_duration_ms,
                "requires_approval": plan.requires_approval,
            }),
            ProgressEvent::GroupStarting { group, steps } => json!({
                "type": "progress", "group": group, "steps": steps, "status": "starting",
            }),
            ProgressEvent::StepStarting {
                step_id, skill_id, ..
            } => json!({
                "type": "progress", "step": step_id, "skill": skill_id, "status": "running",
                "message": format!("Running {skill_id}..."),
            }),
            ProgressEvent::StepComplete {
                step_id,
                skill_id,
                summary,
            } => json!({
                "type": "progress", "step": step_id, "skill": skill_id, "status": "complete",
                "summary": summary,
            }),
            ProgressEvent::StepFailed {
                step_id,
                skill_id,
                error,
                can_retry,
            } => json!({
                "type": "progress", "step": step_id, "skill": skill_id, "status": "failed",
                "error": error, "can_retry": can_retry,
            }),
            ProgressEvent::StepSkipped {
                step_id,
                skill_id,
                reason,
            } => json!({
                "type": "progress", "step": step_id, "skill": skill_id, "status": "skipped",
                "reason": reason,
            }),
            ProgressEvent::Synthesis {
                summary,
                artifacts,
                next_steps,
            } => json!({
                "type": "complete", "message": summary, "artifacts": artifacts,
                "next_steps": next_steps,
            }),
        }
    }
}

/// Where progress events go. Emitting must not fail the run: a sink that cannot deliver drops
/// the event (and may log it).
#[async_trait]
pub trait ProgressSink: Send + Sync {
    /// Delivers one event.
    async fn emit(&self, event: ProgressEvent);
}

/// A sink that drops everything (progress not shown).
#[derive(Debug, Clone, Copy, Default)]
pub struct NoProgress;

#[async_trait]
impl ProgressSink for NoProgress {
    async fn emit(&self, _event: ProgressEvent) {}
}

/// A sink that keeps every event in memory, for tests and for hosts that show progress after
/// the fact.
#[derive(Debug, Default)]
pub struct CollectingSink {
    events: Mutex<Vec<ProgressEvent>>,
}

impl CollectingSink {
    /// An empty sink.
    pub fn new() -> Self {
        Self::default()
    }

    /// The events so far, in order.
    pub fn events(&self) -> Vec<ProgressEvent> {
        self.events
            .lock()
            .map(|events| events.clone())
            .unwrap_or_default()
    }

    /// The names of the events so far, in order.
    pub fn names(&self) -> Vec<&'static str> {
        self.events().iter().map(ProgressEvent::name).collect()
    }
}

#[async_trait]
impl ProgressSink for CollectingSink {
    async fn emit(&self, event: ProgressEvent) {
        if let Ok(mut events) = self.events.lock() {
            events.push(event);
        }
    }
}

/// The sending half of [`progress_channel`].
#[derive(Debug, Clone)]
pub struct ChannelSink {
    sender: mpsc::UnboundedSender<ProgressEvent>,
}

#[async_trait]
impl ProgressSink for ChannelSink {
    async fn emit(&self, event: ProgressEvent) {
        // A dropped receiver means nobody is watching; the run goes on.
        let _ = self.sender.unbounded_send(event);
    }
}

/// The receiving half of [`progress_channel`]: a stream of events that ends when every
/// [`ChannelSink`] is dropped.
#[derive(Debug)]
pub struct ProgressStream {
    receiver: mpsc::UnboundedReceiver<ProgressEvent>,
}

impl Stream for ProgressStream {
    type Item = ProgressEvent;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<ProgressEvent>> {
        Pin::new(&mut self.receiver).poll_next(cx)
    }
}

/// A sink and the stream of what is emitted into it. Unbounded, so a slow reader never
/// stalls execution; events are small and a plan emits a few per step.
///
/// ```
/// use futures::StreamExt;
/// use skills_orchestrate::progress::{ProgressEvent, ProgressSink, progress_channel};
///
/// # futures::executor::block_on(async {
/// let (sink, stream) = progress_channel();
/// sink.emit(ProgressEvent::GroupStarting { group: 0, steps: vec!["a".into()] }).await;
/// drop(sink);
/// let names: Vec<_> = stream.map(|event| event.name()).collect().await;
/// assert_eq!(names, ["group_starting"]);
/// # });
/// ```
pub fn progress_channel() -> (ChannelSink, ProgressStream) {
    let (sender, receiver) = mpsc::unbounded();
    (ChannelSink { sender }, ProgressStream { receiver })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_plan_display_has_the_section_3_2_shape() {
        let event = ProgressEvent::PlanCreated {
            plan: PlanDisplay {
                plan_id: "p".into(),
                steps: vec![PlanStepDisplay {
                    step: 1,
                    step_id: "s1".into(),
                    skill: "crm-lookup".into(),
                    description: "Find the account".into(),
                    can_parallelize: vec!["s2".into()],
                    parallel_count: 1,
                }],
                estimated_duration_ms: 1500,
                requires_approval: true,
            },
        };
        let shown = event.display();
        assert_eq!(shown["type"], "plan");
        assert_eq!(shown["steps"][0]["skill"], "crm-lookup");
        assert_eq!(shown["steps"][0]["can_parallelize"][0], "s2");
        assert_eq!(shown["estimated_time"], 1500);
        assert_eq!(shown["requires_approval"], true);
        let round: ProgressEvent = serde_json::from_value(
            serde_json::to_value(&event).unwrap_or_default(),
        )
        .unwrap_or(ProgressEvent::GroupStarting {
            group: 9,
            steps: vec![],
        });
        assert_eq!(round, event);
    }
}
