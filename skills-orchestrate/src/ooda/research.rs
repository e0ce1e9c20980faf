//! OBSERVE's skill-assisted research (seed 000 section 2.3: "if relevant skills available,
//! execute them for observation").
//!
//! Which skills: those the run's agent may use ([`crate::select::SkillSelector::available`])
//! that declare themselves research skills ([`SkillCandidate::is_research`]: category or tag
//! `research`), never a list of names. When: the goal carries a research query
//! ([`Task::needs_research`]), on the loop's first iteration (the answers do not change by
//! asking again within one goal).
//!
//! Threat: observation as a side door, running skills on the user's data without the checks
//! a plan's steps get. Guarantee: the research skills run as one plan of parallel steps
//! through exactly the orchestrator's own phases: planned (risk, approval policy),
//! `plan_created` shown, the plan approver asked when the plan needs it (a refusal runs
//! nothing), then [`Orchestrator::act`], whose executor sanitizes each step's input for its
//! skill, asks the policy gate (and the step approver when the gate wants a person), checks
//! the output for leaks and audits every attempt. The observations are the steps' checked
//! working-memory summaries.

use super::{OodaLoop, OodaState};
use crate::error::Result;
use crate::execute::StepState;
use crate::orchestrator::{CANCELLED_BY_USER, OrchestrationResult, Orchestrator, TaskRun};
use crate::progress::ProgressEvent;
use crate::select::{
    ExecutionApproach, RequiredSkill, Selection, SkillAnalysis, SkillCandidate, Task,
};

/// Why each research step runs (its briefing's "Why this skill").
pub const RESEARCH_REASON: &str = "research for the observe phase";

/// The task the research skills are given: the query, for the goal, with its type
/// `research` and the goal's entities and topics (so memory context finds what it knows).
fn research_task(goal: &Task, query: &str) -> Task {
    let mut task = Task::new(query)
        .goal(goal.description.clone())
        .task_type("research");
    task.entities.clone_from(&goal.entities);
    task.topics.clone_from(&goal.topics);
    task
}

/// The research skills the run's agent may use, in the agent map's order.
pub(super) fn research_skills(orchestrator: &Orchestrator, run: &TaskRun) -> Vec<SkillCandidate> {
    orchestrator
        .selector()
        .available(run.agent_type(), orchestrator.skills())
        .into_iter()
        .filter(SkillCandidate::is_research)
        .collect()
}

impl OodaLoop {
    /// Runs the agent's research skills on `query` and adds what they found (or why they
    /// could not) to the observations; the run is kept in `state.research`.
    pub(super) async fn research(
        &self,
        state: &mut OodaState,
        run: &TaskRun,
        query: &str,
    ) -> Result<()> {
        let orchestrator = &self.orchestrator;
        let skills = research_skills(orchestrator, run);
        if skills.is_empty() {
            state
                .context
                .observations
                .push("research: no research skill is available to this agent".into());
            return Ok(());
        }
        let task = research_task(&state.goal, query);
        let selection = Selection::from_analysis(SkillAnalysis {
            skills_needed: true,
            required_skills: skills
                .iter()
                .map(|s| RequiredSkill {
                    skill_id: s.id.clone(),
                    reason: RESEARCH_REASON.into(),
                    critical: false,
                })
                .collect(),
            optional_skills: Vec::new(),
            execution_approach: ExecutionApproach::Parallel,
        });
        let Some(plan) = orchestrator.plan(&task, &selection).await? else {
            return Ok(());
        };
        run.progress_sink()
            .emit(ProgressEvent::PlanCreated {
                plan: plan.display(),
            })
            .await;
        if !orchestrator.approve(&task, &plan, run).await {
            state
                .context
                .observations
                .push(format!("research: plan {} was refused", plan.id));
            let mut refused = OrchestrationResult::refused(selection, CANCELLED_BY_USER);
            refused.plan = Some(plan);
            state.research = Some(refused);
            return Ok(());
        }
        let result = orchestrator.act(&task, selection, plan, run).await?;
        for step in result.execution.iter().flat_map(|e| &e.steps) {
            let line = match &step.memory {
                Some(entry) if entry.completed() => {
                    format!("research {}: {}", step.skill, entry.summary)
                }
                _ => {
                    if step.state == StepState::Failed {
                        state.failed_skills.insert(step.skill.clone());
                    }
                    let why = step
                        .error
                        .as_ref()
                        .map(ToString::to_string)
                        .unwrap_or_default();
                    format!("research {} {}: {why}", step.skill, step.state.as_str())
                }
            };
            state.context.observations.push(line);
        }
        let ids: Vec<&str> = skills.iter().map(|s| s.id.as_str()).collect();
        state.context.key_decisions.push(format!(
            "iteration {}: researched with {}",
            state.iteration,
            ids.join(", ")
        ));
        state.research = Some(result);
        Ok(())
    }
}
