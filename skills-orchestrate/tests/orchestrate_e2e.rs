//! The `execute_task` facade end to end: a scripted model chooses three native skills, the
//! plan runs in two groups, progress comes in order, the synthesis is shown, learnings land
//! in memory; a refused approval runs nothing.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use futures::executor::block_on;
use serde_json::json;
use skills_orchestrate::execute::{
    Executor, ExtractedFact, InMemorySkills, NativeSkill, SkillDefinition, SkillInput, StepError,
    StepOutput,
};
use skills_orchestrate::llm::ScriptedLlm;
use skills_orchestrate::memory_bridge::MemoryBridge;
use skills_orchestrate::ooda::OodaLoop;
use skills_orchestrate::orchestrator::{
    CANCELLED_BY_USER, FixedPlanApproval, OrchestrationStatus, Orchestrator, TaskRun,
};
use skills_orchestrate::plan::{Planner, SkillRiskTable};
use skills_orchestrate::progress::{CollectingSink, ProgressEvent};
use skills_orchestrate::select::{
    AgentSkills, SELECTION_PROMPT_START, SkillCandidate, SkillSelector, Task,
};
use skills_orchestrate::synthesis::{SYNTHESIS_PROMPT_START, Synthesizer};
use skills_security::TrustLevel;
use skills_security::approval::ApprovalOption;
use skills_store_traits::memory::{EpisodeQuery, FactQuery};
use skills_store_traits::{MemoryStore, UserScope, in_memory::InMemoryMemoryStore};

const SKILLS: [&str; 3] = ["lead-research", "company-profiling", "competitor-analysis"];

/// A native skill that records what it was given and answers from a fixed output.
struct Recorder {
    calls: AtomicUsize,
    inputs: Mutex<Vec<String>>,
    output: StepOutput,
    fail: bool,
}

impl Recorder {
    fn new(output: StepOutput) -> Arc<Self> {
        Arc::new(Recorder {
            calls: AtomicUsize::new(0),
            inputs: Mutex::new(Vec::new()),
            output,
            fail: false,
        })
    }

    fn failing() -> Arc<Self> {
        Arc::new(Recorder {
            calls: AtomicUsize::new(0),
            inputs: Mutex::new(Vec::new()),
            output: StepOutput::default(),
            fail: true,
        })
    }

    fn calls(&self) -> usize {
        self.calls.load(Ordering::SeqCst)
    }

    fn inputs(&self) -> Vec<String> {
        self.inputs.lock().unwrap().clone()
    }
}

#[async_trait]
impl NativeSkill for Recorder {
    async fn run(&self, input: &SkillInput) -> Result<StepOutput, StepError> {
        self.calls.fetch_add(1, Ordering::SeqCst);
        self.inputs.lock().unwrap().push(input.input.clone());
        if self.fail {
            return Err(StepError::failed("the profile source is down"));
        }
        Ok(self.output.clone())
    }
}

struct World {
    orchestrator: Orchestrator,
    natives: Vec<Arc<Recorder>>,
    memory: Arc<InMemoryMemoryStore>,
    selection_model: Arc<ScriptedLlm>,
}

fn selection_answer(approach: &str) -> String {
    json!({
        "skills_needed": true,
        "required_skills": SKILLS.iter().map(|id| json!({"skill_id": id, "reason": format!("{id} is needed"), "critical": true})).collect::<Vec<_>>(),
        "optional_skills": [],
        "execution_approach": approach,
    })
    .to_string()
}

/// A world whose user approves plans once (every plan asks: the planner has no history).
fn world(trust: TrustLevel, fail_profiling: bool) -> World {
    let mut world = world_without_approver(trust, fail_profiling);
    world.orchestrator = world
        .orchestrator
        .approver(Arc::new(FixedPlanApproval(Some(ApprovalOption::YesOnce))));
    world
}

fn world_without_approver(trust: TrustLevel, fail_profiling: bool) -> World {
    let natives = vec![
        Recorder::new(
            StepOutput::text("Acme has 40 open roles in sales.")
                .fact(ExtractedFact::new("Acme", "hiring", "sales team"))
                .artifact("out/acme-leads.csv"),
        ),
        if fail_profiling {
            Recorder::failing()
        } else {
            Recorder::new(
                StepOutput::text("Acme: 500 staff, Series C.").artifact("out/acme-profile.md"),
            )
        },
        Recorder::new(
            StepOutput::text("Acme trails Globex on price.")
                .hint("Prepare a pricing comparison")
                .artifact("out/acme-profile.md"),
        ),
    ];
    let mut skills = InMemorySkills::new();
    let mut builder_natives = Vec::new();
    for (id, native) in SKILLS.iter().zip(&natives) {
        skills = skills.with(SkillDefinition::native(*id).trust(trust));
        builder_natives.push((*id, native.clone()));
    }
    let provider = Arc::new(skills);
    let mut builder = Executor::builder(
        provider.clone(),
        skills_security::gate::PolicyGate::allow_all(
            skills_security::audit::AuditTrail::in_memory(),
        ),
    )
    .retry(skills_orchestrate::execute::RetryPolicy::never());
    for (id, native) in builder_natives {
        builder = builder.native(id, native);
    }
    let executor = builder.build();
    let selection_model = Arc::new(
        ScriptedLlm::new()
            .when(&[SELECTION_PROMPT_START], selection_answer("hybrid"))
            .when(
                &[SYNTHESIS_PROMPT_START],
                json!({"summary": "Acme is hiring and trails Globex on price.", "next_steps": ["Call Acme"]}).to_string(),
            ),
    );
    let risks = SKILLS
        .iter()
        .fold(SkillRiskTable::new(), |table, id| table.skill(*id, trust));
    let memory = Arc::new(InMemoryMemoryStore::new());
    let orchestrator = Orchestrator::new(
        SkillSelector::new(AgentSkills::seed_defaults()).model(selection_model.clone()),
        SKILLS
            .iter()
            .map(|id| SkillCandidate::new(*id, format!("The {id} skill.")))
            .collect(),
        executor,
    )
    .planner(Planner::new().risks(Arc::new(risks)))
    .synthesizer(Synthesizer::new().model(selection_model.clone()))
    .memory(MemoryBridge::new(memory.clone()))
    .skill_provider(provider);
    World {
        orchestrator,
        natives,
        memory,
        selection_model,
    }
}

fn task() -> Task {
    Task::new("Research Acme as a lead, profile it and compare it with its competitors")
        .task_type("prospecting")
        .entities(["Acme"])
}

fn alice() -> UserScope {
    UserScope::new("acme-tenant", "alice")
}

#[test]
fn a_three_skill_task_runs_in_two_groups_with_events_in_order() {
    let world = world(TrustLevel::Core, false);
    block_on(
        world
            .memory
            .set_preference(&alice(), "prospecting", "tone", json!("formal")),
    )
    .unwrap();
    let sink = Arc::new(CollectingSink::new());
    let run = TaskRun::new(alice(), "HunterAgent")
        .input("Acme is based in Berlin.")
        .progress(sink.clone());
    let result = block_on(world.orchestrator.execute_task(&task(), run)).unwrap();

    assert!(result.success);
    assert_eq!(result.status, OrchestrationStatus::Completed);
    let plan = result.plan.as_ref().unwrap();
    assert_eq!(
        plan.groups,
        vec![
            vec!["lead-research", "company-profiling"],
            vec!["competitor-analysis"]
        ]
    );
    assert!(world.natives.iter().all(|n| n.calls() == 1));

    let names = sink.names();
    assert_eq!(names.first(), Some(&"plan_created"));
    assert_eq!(names.last(), Some(&"synthesis"));
    assert_eq!(names.len(), 1 + 1 + 4 + 1 + 2 + 1, "{names:?}");
    assert_eq!((names[1], names[6]), ("group_starting", "group_starting"));
    assert_eq!(&names[7..9], ["step_starting", "step_complete"]);
    let events = sink.events();
    for step in ["lead-research", "company-profiling"] {
        let at = |name: &str| {
            events[2..6]
                .iter()
                .position(|e| {
                    e.name() == name && serde_json::to_value(e).unwrap()["step_id"] == step
                })
                .unwrap()
        };
        assert!(at("step_starting") < at("step_complete"), "{step}");
    }
    let synthesis = result.synthesis.as_ref().unwrap();
    assert!(synthesis.by_model);
    assert_eq!(events.last(), Some(&synthesis.event()));
    assert_eq!(
        events.last(),
        Some(&ProgressEvent::Synthesis {
            summary: "Acme is hiring and trails Globex on price.".into(),
            artifacts: vec!["out/acme-leads.csv".into(), "out/acme-profile.md".into()],
            next_steps: vec!["Call Acme".into()],
        })
    );

    // The first group saw the task input and the (core-visible) memory; the last step also
    // saw the first group's working memory.
    let first_input = &world.natives[0].inputs()[0];
    assert!(
        first_input.contains("Acme is based in Berlin."),
        "{first_input}"
    );
    assert!(
        first_input.contains("prospecting.tone = formal"),
        "{first_input}"
    );
    let last_input = &world.natives[2].inputs()[0];
    assert!(
        last_input.contains("Acme has 40 open roles") && last_input.contains("500 staff"),
        "{last_input}"
    );

    // The model saw the plan's results through the orchestrator context.
    let synthesis_prompt = world.selection_model.requests().last().unwrap().messages[0]
        .content
        .clone();
    assert!(
        synthesis_prompt.contains("<working_memory>")
            && synthesis_prompt.contains("Acme trails Globex")
    );
    assert!(result.usage.total() > 0);
}

#[test]
fn learnings_are_stored_and_shape_the_next_run() {
    let world = world(TrustLevel::Core, false);
    let result = block_on(
        world
            .orchestrator
            .execute_task(&task(), TaskRun::new(alice(), "HunterAgent")),
    )
    .unwrap();
    let stored = result.learnings.as_ref().unwrap();
    assert_eq!(stored.fact_ids.len(), 1);

    let episodes = block_on(world.memory.query_episodes(
        &alice(),
        &EpisodeQuery::new("").event_type("skill_execution"),
    ))
    .unwrap();
    assert_eq!(episodes.len(), 1);
    assert_eq!(
        episodes[0].title,
        "Executed lead-research, company-profiling, competitor-analysis"
    );
    assert_eq!(
        episodes[0].content,
        "Acme is hiring and trails Globex on price."
    );
    assert_eq!(episodes[0].context["success"], true);
    let facts = block_on(
        world
            .memory
            .related_facts(&alice(), &FactQuery::new(vec!["acme".into()], vec![])),
    )
    .unwrap();
    assert_eq!(
        (
            facts[0].object.as_str(),
            facts[0].confidence,
            facts[0].source.as_str()
        ),
        ("sales team", 0.75, "skill_extracted")
    );
    let procedure = stored.procedure.as_ref().unwrap();
    assert_eq!(procedure.skill_sequence, SKILLS);
    assert_eq!(procedure.success_count, 1);

    // The second run is told what worked and what is known.
    let again = block_on(
        world
            .orchestrator
            .execute_task(&task(), TaskRun::new(alice(), "HunterAgent")),
    )
    .unwrap();
    assert_eq!(again.learnings.unwrap().procedure.unwrap().success_count, 2);
    let memory = again.memory.unwrap();
    assert_eq!(
        memory.recommended_approach,
        [
            "for prospecting: lead-research -> company-profiling -> competitor-analysis (succeeded 1 time)"
        ]
    );
    assert_eq!(memory.known_facts, ["Acme hiring sales team"]);
    assert_eq!(memory.relevant_history.len(), 1);
    assert!(memory.relevant_history[0].starts_with("Executed lead-research"));
    assert!(world.natives[0].inputs()[1].contains("Approaches that worked"));
}

#[test]
fn community_skills_get_no_memory() {
    let world = world(TrustLevel::Community, false);
    block_on(
        world
            .memory
            .set_preference(&alice(), "prospecting", "tone", json!("formal")),
    )
    .unwrap();
    let approver = Arc::new(FixedPlanApproval(Some(ApprovalOption::YesOnce)));
    let orchestrator = world.orchestrator.clone().approver(approver);
    let result =
        block_on(orchestrator.execute_task(&task(), TaskRun::new(alice(), "HunterAgent"))).unwrap();
    assert_eq!(result.status, OrchestrationStatus::Completed);
    let memory = result.memory.unwrap();
    assert!(memory.is_empty());
    assert_eq!(memory.withheld, 1);
    assert!(!world.natives[0].inputs()[0].contains("formal"));
}

#[test]
fn a_refused_approval_runs_nothing() {
    for approver in [
        None,
        Some(FixedPlanApproval(Some(ApprovalOption::No))),
        Some(FixedPlanApproval(None)),
    ] {
        let world = world_without_approver(TrustLevel::Community, false);
        let mut orchestrator = world.orchestrator.clone();
        if let Some(approver) = approver {
            orchestrator = orchestrator.approver(Arc::new(approver));
        }
        let sink = Arc::new(CollectingSink::new());
        let run = TaskRun::new(alice(), "HunterAgent").progress(sink.clone());
        let result = block_on(orchestrator.execute_task(&task(), run)).unwrap();
        assert!(!result.success);
        assert_eq!(result.status, OrchestrationStatus::Refused);
        assert_eq!(result.message, CANCELLED_BY_USER);
        assert!(result.plan.as_ref().unwrap().requires_approval);
        assert!(
            result.execution.is_none() && result.synthesis.is_none() && result.learnings.is_none()
        );
        assert_eq!(sink.names(), ["plan_created"]);
        assert!(world.natives.iter().all(|n| n.calls() == 0));
        let episodes = block_on(
            world
                .memory
                .query_episodes(&alice(), &EpisodeQuery::new("")),
        )
        .unwrap();
        assert!(episodes.is_empty());
    }
    // `yes_in_session` runs it.
    let world = world(TrustLevel::Community, false);
    let orchestrator = world
        .orchestrator
        .clone()
        .approver(Arc::new(FixedPlanApproval(Some(
            ApprovalOption::YesInSession,
        ))));
    let result =
        block_on(orchestrator.execute_task(&task(), TaskRun::new(alice(), "HunterAgent"))).unwrap();
    assert_eq!(result.status, OrchestrationStatus::Completed);
}

#[test]
fn a_failed_step_gives_partial_results_and_no_procedure() {
    let world = world(TrustLevel::Core, true);
    let sink = Arc::new(CollectingSink::new());
    let result = block_on(world.orchestrator.execute_task(
        &task(),
        TaskRun::new(alice(), "HunterAgent").progress(sink.clone()),
    ))
    .unwrap();
    assert_eq!(result.status, OrchestrationStatus::Failed);
    assert_eq!(result.message, "Completed 1 of 3 steps");
    assert!(sink.names().contains(&"step_failed") && sink.names().contains(&"step_skipped"));
    assert_eq!(world.natives[2].calls(), 0, "the dependent step is skipped");
    let stored = result.learnings.unwrap();
    assert!(stored.procedure.is_none());
    let episode = block_on(world.memory.get_episode(&alice(), &stored.episode_id))
        .unwrap()
        .unwrap();
    assert_eq!(episode.context["success"], false);
    assert_eq!(episode.title, "Executed lead-research");
}

#[test]
fn without_a_model_the_fallback_and_deterministic_synthesis_carry_the_task() {
    let world = world(TrustLevel::Core, false);
    let orchestrator = world
        .orchestrator
        .clone()
        .with_selector(SkillSelector::new(AgentSkills::seed_defaults()))
        .synthesizer(Synthesizer::new());
    let task = Task::new("Do lead research on Acme, then company profiling");
    let sink = Arc::new(CollectingSink::new());
    let result = block_on(orchestrator.execute_task(
        &task,
        TaskRun::new(alice(), "HunterAgent").progress(sink.clone()),
    ))
    .unwrap();
    assert_eq!(result.status, OrchestrationStatus::Completed);
    let plan = result.plan.unwrap();
    assert_eq!(
        plan.groups,
        vec![vec!["lead-research"], vec!["company-profiling"]]
    );
    let synthesis = result.synthesis.unwrap();
    assert!(!synthesis.by_model);
    assert!(
        synthesis.summary.starts_with("Completed 2 of 2 steps"),
        "{}",
        synthesis.summary
    );
    assert!(world.selection_model.requests().is_empty());
    assert_eq!(
        sink.names(),
        [
            "plan_created",
            "group_starting",
            "step_starting",
            "step_complete",
            "group_starting",
            "step_starting",
            "step_complete",
            "synthesis"
        ]
    );
}

#[test]
fn the_ooda_loop_retries_a_failed_run_within_its_bound() {
    let world = world(TrustLevel::Core, true);
    let sink = Arc::new(CollectingSink::new());
    let run = TaskRun::new(alice(), "HunterAgent").progress(sink.clone());
    let state = block_on(
        OodaLoop::new(world.orchestrator.clone())
            .max_iterations(2)
            .run(task(), &run),
    )
    .unwrap();
    assert!(state.done);
    assert_eq!(state.iteration, 2);
    assert_eq!(world.natives[1].calls(), 2);
    assert_eq!(
        sink.names()
            .iter()
            .filter(|n| **n == "plan_created")
            .count(),
        2
    );
    assert!(
        state
            .context
            .observations
            .iter()
            .any(|o| o.contains("step company-profiling (company-profiling) failed"))
    );
    assert_eq!(
        state.context.key_decisions.len(),
        4,
        "{:?}",
        state.context.key_decisions
    );
    assert_eq!(state.result.unwrap().status, OrchestrationStatus::Failed);
}

#[test]
fn plans_are_stored_before_they_run_when_a_plan_store_is_given() {
    use skills_store_traits::PlanStore;
    use skills_store_traits::in_memory::InMemoryPlanStore;
    use skills_store_traits::plans::StepStatus;

    let store = Arc::new(InMemoryPlanStore::new());
    let native = Recorder::new(StepOutput::text("done"));
    let skills = Arc::new(
        InMemorySkills::new().with(SkillDefinition::native("pdf").trust(TrustLevel::Core)),
    );
    let executor = Executor::builder(
        skills,
        skills_security::gate::PolicyGate::allow_all(
            skills_security::audit::AuditTrail::in_memory(),
        ),
    )
    .native("pdf", native.clone())
    .plan_store(store.clone())
    .build();
    let orchestrator = Orchestrator::new(
        SkillSelector::new(AgentSkills::seed_defaults()),
        vec![SkillCandidate::new("pdf", "Read PDF files.")],
        executor,
    )
    .planner(Planner::new().risks(Arc::new(
        SkillRiskTable::new().skill("pdf", TrustLevel::Core),
    )))
    .approver(Arc::new(FixedPlanApproval(Some(ApprovalOption::YesOnce))))
    .plan_store(store.clone());
    let result = block_on(orchestrator.execute_task(
        &Task::new("Read the PDF"),
        TaskRun::new(alice(), "ScribeAgent"),
    ))
    .unwrap();
    assert_eq!(result.status, OrchestrationStatus::Completed);
    let id = result.stored_plan_id.unwrap();
    let steps = block_on(store.list_steps(&alice(), &id)).unwrap();
    assert_eq!(
        steps.iter().map(|s| s.status).collect::<Vec<_>>(),
        [StepStatus::Complete]
    );
    assert_eq!(native.calls(), 1);
}

#[test]
fn memory_is_sanitized_for_each_trust_level() {
    use skills_security::{Clearance, Sanitizer};
    use skills_store_traits::memory::NewFact;

    let store = Arc::new(InMemoryMemoryStore::new());
    let bridge = MemoryBridge::new(store.clone());
    block_on(store.add_fact(
        &alice(),
        NewFact::new("Acme", "contact", "rbrown@example.com", 0.9, "user_stated"),
    ))
    .unwrap();
    block_on(store.add_fact(
        &alice(),
        NewFact::new("Acme", "uses", "Jira", 0.8, "user_stated"),
    ))
    .unwrap();
    let task = Task::new("Email Acme").entities(["Acme"]);

    let (core, _) = block_on(bridge.context_for(&alice(), &task, "e1", TrustLevel::Core)).unwrap();
    assert_eq!(
        core.known_facts,
        ["Acme contact rbrown@example.com", "Acme uses Jira"]
    );

    // A verified skill may not see the (confidential) address: in its own execution it gets
    // a token it can hand back; in a private vault the fact is withheld whole.
    let sanitizer = Sanitizer::default();
    let mut execution = sanitizer.begin("e2", TrustLevel::Verified, None).unwrap();
    let verified = block_on(bridge.context_for_skill(&alice(), &task, &mut execution)).unwrap();
    assert_eq!(
        verified.known_facts,
        ["Acme contact [EMAIL_001]", "Acme uses Jira"]
    );
    let restored = execution
        .validate_output("Wrote to [EMAIL_001].", Clearance::ALL)
        .unwrap();
    assert_eq!(restored.text, "Wrote to rbrown@example.com.");
    let (private, access) =
        block_on(bridge.context_for(&alice(), &task, "e3", TrustLevel::Verified)).unwrap();
    assert_eq!(
        (private.known_facts.as_slice(), private.withheld),
        (["Acme uses Jira".to_owned()].as_slice(), 1)
    );
    assert!(access.data_redacted || !access.tokens_used.is_empty());

    let (community, _) =
        block_on(bridge.context_for(&alice(), &task, "e4", TrustLevel::Community)).unwrap();
    assert!(community.is_empty());
    assert_eq!(community.withheld, 2);
}

#[test]
fn runs_are_recorded_for_learning_and_their_sequence_is_detected() {
    use skills_orchestrate::learn::LearningEngine;
    use skills_store_traits::in_memory::InMemoryLearningStore;
    use skills_store_traits::learning::PatternKind;

    let world = world(TrustLevel::Core, false);
    let engine = LearningEngine::new(Arc::new(InMemoryLearningStore::new()));
    let orchestrator = world.orchestrator.learning(engine.clone());
    for _ in 0..3 {
        let run = TaskRun::new(alice(), "HunterAgent").input("Acme is based in Berlin.");
        let result = block_on(orchestrator.execute_task(&task(), run)).unwrap();
        assert!(result.success);
        assert_eq!(result.learning_error, None);
    }
    let tenant = alice().tenant;
    let recorded = block_on(engine.store().list_sequences(&tenant, None, None)).unwrap();
    assert_eq!(recorded.len(), 3);
    assert!(
        recorded
            .iter()
            .all(|r| r.task_type == "prospecting" && r.success)
    );
    assert_eq!(
        recorded[0]
            .steps
            .iter()
            .map(|s| s.skill_id.as_str())
            .collect::<Vec<_>>(),
        SKILLS
    );
    let patterns = block_on(engine.detect(&tenant)).unwrap();
    let sequence = patterns
        .iter()
        .find(|p| p.kind == PatternKind::Sequence)
        .expect("the three-skill sequence recurs");
    assert_eq!(sequence.skills, SKILLS);
    assert_eq!(sequence.frequency, 3);
}

/// What a run learned from confidential data keeps that class: a later run's verified skill
/// (not cleared for it) never sees it raw, a core skill does.
#[test]
fn learnings_keep_the_class_of_the_data_they_came_from() {
    use skills_orchestrate::execute::ExtractedFact;
    use skills_orchestrate::memory_bridge::RunLearnings;
    use skills_security::DataClass;

    let store = Arc::new(InMemoryMemoryStore::new());
    let bridge = MemoryBridge::new(store.clone());
    let task = Task::new("Review the Acme renewal").entities(["Acme"]);
    let learnings = RunLearnings::new(
        task.clone(),
        "plan-1",
        "Acme renewal at 1.2M, closing in May",
        true,
    )
    .skills_used(["deal-review"])
    .extracted_facts(vec![ExtractedFact::new("Acme", "renews at", "1.2M in May")])
    .data_class(DataClass::Confidential);
    block_on(bridge.store_learnings(&alice(), &learnings)).unwrap();

    let (verified, _) =
        block_on(bridge.context_for(&alice(), &task, "r2", TrustLevel::Verified)).unwrap();
    let shown = format!("{verified:?}");
    assert!(!shown.contains("1.2M"), "{shown}");
    assert_eq!(verified.withheld, 2, "{shown}");
    let (core, _) = block_on(bridge.context_for(&alice(), &task, "r3", TrustLevel::Core)).unwrap();
    assert!(
        core.relevant_history.iter().any(|l| l.contains("1.2M"))
            && core.known_facts.iter().any(|l| l.contains("1.2M")),
        "{core:?}"
    );
}
