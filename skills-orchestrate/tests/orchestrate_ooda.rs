//! The OODA loop of seed 000 section 2.3 with a scripted model: observe runs the agent's
//! research skills through the gated path, decide scores its options and records the
//! choice, act records each iteration's outcome in memory.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use futures::executor::block_on;
use serde_json::json;
use skills_orchestrate::execute::{
    ApprovalAnswer, ApprovalPrompt, Executor, InMemorySkills, NativeSkill, RetryPolicy,
    SkillDefinition, SkillInput, StepApprover, StepError, StepOutput,
};
use skills_orchestrate::llm::ScriptedLlm;
use skills_orchestrate::memory_bridge::{ACTION_EVENT_TYPE, MemoryBridge};
use skills_orchestrate::ooda::{OodaLoop, OodaState, OptionKind};
use skills_orchestrate::orchestrator::{
    OrchestrationStatus, Orchestrator, PlanApprovalRequest, PlanApprover, TaskRun,
};
use skills_orchestrate::plan::{Planner, SkillRiskTable};
use skills_orchestrate::select::{
    AgentSkills, SELECTION_PROMPT_START, SkillCandidate, SkillSelector, Task,
};
use skills_security::TrustLevel;
use skills_security::approval::ApprovalOption;
use skills_security::audit::{AuditFilter, AuditTrail, Viewer};
use skills_security::autonomy::Autonomy;
use skills_security::gate::PolicyGate;
use skills_security::permissions::{InMemoryRateLimiter, Permissions};
use skills_store_traits::in_memory::{InMemoryAuditStore, InMemoryMemoryStore, InMemoryTrustStore};
use skills_store_traits::memory::EpisodeQuery;
use skills_store_traits::{ManualClock, MemoryStore, TenantId, UserScope};

const EMAIL: &str = "bob@example.com";

/// Answers from a fixed output (or fails) and keeps every input it was given.
struct Recorder {
    output: Option<&'static str>,
    inputs: Mutex<Vec<String>>,
}

impl Recorder {
    fn new(output: Option<&'static str>) -> Arc<Self> {
        Arc::new(Recorder {
            output,
            inputs: Mutex::new(Vec::new()),
        })
    }

    fn inputs(&self) -> Vec<String> {
        self.inputs.lock().unwrap().clone()
    }
}

#[async_trait]
impl NativeSkill for Recorder {
    async fn run(&self, input: &SkillInput) -> Result<StepOutput, StepError> {
        self.inputs.lock().unwrap().push(input.input.clone());
        match self.output {
            Some(text) => Ok(StepOutput::text(text)),
            None => Err(StepError::failed("the trial database is down")),
        }
    }
}

/// Approves every step and keeps the prompts.
#[derive(Default)]
struct StepYes(Mutex<Vec<ApprovalPrompt>>);

#[async_trait]
impl StepApprover for StepYes {
    async fn approve(&self, prompt: &ApprovalPrompt) -> ApprovalAnswer {
        self.0.lock().unwrap().push(prompt.clone());
        ApprovalAnswer::approved("alice")
    }
}

/// Approves every plan and keeps the requests.
#[derive(Default)]
struct PlanYes(Mutex<Vec<PlanApprovalRequest>>);

#[async_trait]
impl PlanApprover for PlanYes {
    async fn approve_plan(&self, request: &PlanApprovalRequest) -> Option<ApprovalOption> {
        self.0.lock().unwrap().push(request.clone());
        Some(ApprovalOption::YesOnce)
    }
}

struct World {
    orchestrator: Orchestrator,
    pubmed: Arc<Recorder>,
    news: Arc<Recorder>,
    trials: Arc<Recorder>,
    writer: Arc<Recorder>,
    audit: Arc<InMemoryAuditStore>,
    memory: Arc<InMemoryMemoryStore>,
    step_approvals: Arc<StepYes>,
    plan_approvals: Arc<PlanYes>,
}

/// Four skills: two research skills (one by category, one by tag, the second not available
/// to the agent), a trial analysis that fails when `trials_fail`, and a report writer. The
/// gate is a checked one (every first run asks a person); the model always picks the trial
/// analysis.
fn world(trials_fail: bool) -> World {
    let pubmed = Recorder::new(Some("3 papers on the trial"));
    let news = Recorder::new(Some("2 news items"));
    let trials = Recorder::new(if trials_fail {
        None
    } else {
        Some("effect size 0.4")
    });
    let writer = Recorder::new(Some("report written"));
    let ids = [
        "pubmed-search",
        "news-digest",
        "trial-analysis",
        "report-writer",
    ];
    let trusts = [
        TrustLevel::Verified,
        TrustLevel::Core,
        TrustLevel::Core,
        TrustLevel::Core,
    ];
    let skills = ids
        .iter()
        .zip(trusts)
        .fold(InMemorySkills::new(), |skills, (id, trust)| {
            skills.with(SkillDefinition::native(*id).trust(trust))
        });
    let audit = Arc::new(InMemoryAuditStore::new());
    let clock = ManualClock::new(0);
    let gate = PolicyGate::new(
        Arc::new(Permissions::new(clock.clone())),
        Arc::new(InMemoryRateLimiter::new()),
        Autonomy::new(Arc::new(InMemoryTrustStore::new()), clock.clone()),
        AuditTrail::new(audit.clone()),
        clock,
    );
    let step_approvals = Arc::new(StepYes::default());
    let executor = Executor::builder(Arc::new(skills), gate)
        .native("pubmed-search", pubmed.clone())
        .native("news-digest", news.clone())
        .native("trial-analysis", trials.clone())
        .native("report-writer", writer.clone())
        .approver(step_approvals.clone())
        .retry(RetryPolicy::never())
        .build();
    let model = ScriptedLlm::new().when(
        &[SELECTION_PROMPT_START],
        json!({
            "skills_needed": true,
            "required_skills": [{"skill_id": "trial-analysis", "reason": "the goal is a trial", "critical": true}],
            "optional_skills": [],
            "execution_approach": "sequential"
        })
        .to_string(),
    );
    let agents = AgentSkills::new().with(
        "ScoutAgent",
        ["pubmed-search", "trial-analysis", "report-writer"],
    );
    let index = vec![
        SkillCandidate::new("pubmed-search", "Search PubMed for papers").category("research"),
        SkillCandidate::new("news-digest", "Gather news").tags(["Research"]),
        SkillCandidate::new("trial-analysis", "Statistics on clinical data"),
        SkillCandidate::new("report-writer", "Write reports").triggers(["write a report"]),
    ];
    let risks = ids.iter().fold(SkillRiskTable::new(), |t, id| {
        t.skill(*id, TrustLevel::Core)
    });
    let memory = Arc::new(InMemoryMemoryStore::new());
    let plan_approvals = Arc::new(PlanYes::default());
    let orchestrator = Orchestrator::new(
        SkillSelector::new(agents).model(Arc::new(model)),
        index,
        executor,
    )
    .planner(Planner::new().risks(Arc::new(risks)))
    .approver(plan_approvals.clone())
    .memory(MemoryBridge::new(memory.clone()));
    World {
        orchestrator,
        pubmed,
        news,
        trials,
        writer,
        audit,
        memory,
        step_approvals,
        plan_approvals,
    }
}

fn alice() -> UserScope {
    UserScope::new("acme", "alice")
}

fn goal() -> Task {
    Task::new("Analyze the trial and write a report")
}

#[test]
fn observe_runs_the_agents_research_skills_through_the_gated_path() {
    let w = world(false);
    let run = TaskRun::new(alice(), "ScoutAgent").input(format!("Contact {EMAIL} about it"));
    let ooda = OodaLoop::new(w.orchestrator.clone());
    let mut state = OodaState::new(goal().research("latest trial results"));
    block_on(ooda.observe(&mut state, &run)).unwrap();

    // Only the research skill the agent may use ran; nothing else did.
    assert_eq!(w.pubmed.inputs().len(), 1);
    assert!(w.news.inputs().is_empty(), "not available to the agent");
    assert!(w.trials.inputs().is_empty() && w.writer.inputs().is_empty());
    // Sanitized for its trust level like any step's input.
    let seen = &w.pubmed.inputs()[0];
    assert!(
        seen.contains("[EMAIL_001]") && !seen.contains(EMAIL),
        "{seen}"
    );
    assert!(
        state
            .context
            .observations
            .contains(&"research pubmed-search: 3 papers on the trial".to_owned()),
        "{:?}",
        state.context.observations
    );
    let research = state.research.as_ref().unwrap();
    assert_eq!(research.status, OrchestrationStatus::Completed);

    // Approvals: the plan approver saw the research plan, the step approver its step.
    let plans = w.plan_approvals.0.lock().unwrap().clone();
    assert_eq!(plans.len(), 1);
    assert_eq!(plans[0].task, "latest trial results");
    let prompts = w.step_approvals.0.lock().unwrap().clone();
    assert_eq!(prompts.len(), 1);
    assert_eq!(
        (prompts[0].skill_id.as_str(), prompts[0].reason.as_str()),
        ("pubmed-search", "Initial approval required")
    );

    // The gate decided and the execution is audited, as for any plan step.
    let trail = AuditTrail::new(w.audit.clone());
    let log = block_on(trail.usage_log(
        &TenantId::new("acme"),
        &Viewer::Auditor,
        &AuditFilter::new().skill("pubmed-search"),
    ))
    .unwrap();
    assert_eq!(log.len(), 1, "{log:?}");
    assert!(log[0].asked_approval, "the gate asked before it ran");
    let records = block_on(trail.query(
        &TenantId::new("acme"),
        &Viewer::Auditor,
        &AuditFilter::new(),
    ))
    .unwrap();
    let reasons: Vec<&str> = records
        .iter()
        .map(|e| e.record.error.as_deref().unwrap_or("ok"))
        .collect();
    assert_eq!(
        reasons,
        ["approval_required: Initial approval required", "ok", "ok"]
    );
    assert!(
        records
            .iter()
            .all(|e| e.record.trigger_reason.as_deref() == Some("plan step pubmed-search"))
    );

    // A goal without a research query runs no research skill.
    let w = world(false);
    let mut state = OodaState::new(goal());
    block_on(OodaLoop::new(w.orchestrator.clone()).observe(&mut state, &run)).unwrap();
    assert!(w.pubmed.inputs().is_empty() && state.research.is_none());
}

#[test]
fn decide_scores_its_options_and_turns_from_a_failed_skill_and_act_records_each_iteration() {
    let w = world(true);
    let run = TaskRun::new(alice(), "ScoutAgent");
    let state = OodaState::new(goal()).with_goal_id("goal-1");
    let state = block_on(
        OodaLoop::new(w.orchestrator.clone())
            .max_iterations(3)
            .run_state(state, &run),
    )
    .unwrap();

    assert!(state.done);
    assert_eq!(state.iteration, 2);
    assert_eq!(
        w.trials.inputs().len(),
        1,
        "the failed skill was not chosen again"
    );
    assert_eq!(w.writer.inputs().len(), 1);
    assert_eq!(
        state.result.as_ref().unwrap().status,
        OrchestrationStatus::Completed
    );
    assert!(state.failed_skills.contains("trial-analysis"));

    // Iteration 2: the model still picks the trial analysis, but it failed in iteration 1.
    let decision = state.decision.as_ref().unwrap();
    assert_eq!(decision.selected, OptionKind::KeywordMatch);
    assert_eq!(decision.skills, ["report-writer"]);
    assert_eq!(decision.confidence, 0.6);
    assert_eq!(decision.alternatives_considered, 3);
    let scored: Vec<(OptionKind, f64)> =
        decision.options.iter().map(|o| (o.kind, o.score)).collect();
    assert_eq!(
        scored,
        [
            (OptionKind::Plan, 0.4),
            (OptionKind::KeywordMatch, 0.6),
            (OptionKind::NoSkill, 0.2)
        ]
    );
    assert_eq!(
        decision.options[0].reasons,
        [
            "the model chose it (0.8)",
            "-0.4: 1 of 1 skills failed earlier (trial-analysis)"
        ]
    );
    assert_eq!(
        decision.reasoning,
        "chose keyword match [report-writer] (0.60: a keyword match on the goal (0.6)) over \
         plan [trial-analysis] (0.40), no skill (0.20)"
    );
    assert!(
        state.context.key_decisions[0].starts_with("iteration 1: use trial-analysis"),
        "{:?}",
        state.context.key_decisions
    );
    assert!(
        state.context.key_decisions[1]
            .starts_with("iteration 1: chose plan (0.80, 3 options); plan "),
        "{:?}",
        state.context.key_decisions
    );

    // Act recorded each iteration's outcome in the orchestrator's memory store.
    assert_eq!(state.outcomes.len(), 2);
    assert!(
        state
            .outcomes
            .iter()
            .all(|o| o.episode_id.is_some() && o.error.is_none())
    );
    let mut episodes = block_on(w.memory.query_episodes(
        &alice(),
        &EpisodeQuery::new("").event_type(ACTION_EVENT_TYPE),
    ))
    .unwrap();
    episodes.sort_by_key(|e| e.context["iteration"].as_u64());
    let seen: Vec<_> = episodes
        .iter()
        .map(|e| {
            (
                e.context["goal_id"].as_str().unwrap().to_owned(),
                e.context["iteration"].as_u64().unwrap(),
                e.context["details"]["option"].as_str().unwrap().to_owned(),
                e.context["details"]["steps"][0]["status"]
                    .as_str()
                    .unwrap()
                    .to_owned(),
                e.context["success"].as_bool().unwrap(),
                e.content.clone(),
            )
        })
        .collect();
    assert_eq!(
        seen,
        [
            (
                "goal-1".to_owned(),
                1,
                "plan".to_owned(),
                "failed".to_owned(),
                false,
                "Completed 0 of 1 steps".to_owned()
            ),
            (
                "goal-1".to_owned(),
                2,
                "keyword_match".to_owned(),
                "complete".to_owned(),
                true,
                "Completed all 1 steps".to_owned()
            ),
        ]
    );
    assert!(
        episodes[1].title.starts_with("Iteration 2: run plan ")
            && episodes[1].title.ends_with(": report-writer"),
        "{}",
        episodes[1].title
    );

    // Each run's orchestrator context size was kept and reads back (part 8's overhead).
    let bridge = w.orchestrator.memory_bridge().unwrap();
    let sizes = block_on(bridge.context_sizes(&alice(), 10)).unwrap();
    let expected = state
        .result
        .as_ref()
        .and_then(|r| r.synthesis.as_ref())
        .and_then(|s| s.context_tokens)
        .unwrap();
    assert_eq!(sizes.len(), 2);
    assert!(sizes.contains(&(expected as u64)) && sizes.iter().all(|s| *s > 0));
}
