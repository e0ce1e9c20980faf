//! Seed 001 at run time: deprecated skills are never selected automatically but run when
//! requested by name; stubs are marked where skills are listed; a kernel (layer 0) native
//! skill cannot write any store it is handed.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use futures::executor::block_on;
use serde_json::json;
use skills_catalog::Resolver;
use skills_core::SkillStatus;
use skills_orchestrate::Error;
use skills_orchestrate::context::{ContextBudgets, OrchestratorInputs, orchestrator_context};
use skills_orchestrate::execute::{
    CatalogSkills, Executor, InMemorySkills, NativeSkill, NativeSkills, Run, SkillDefinition,
    SkillInput, SkillProvider, SkillStores, StepError, StepErrorKind, StepOutput, StepState,
};
use skills_orchestrate::llm::{EstimatedTokens, ScriptedLlm};
use skills_orchestrate::orchestrator::{
    FixedPlanApproval, OrchestrationStatus, Orchestrator, TaskRun,
};
use skills_orchestrate::plan::{Planner, StepSpec};
use skills_orchestrate::select::{
    AgentSkills, FallbackSelector, SELECTION_PROMPT_START, SelectionSource, SkillCandidate,
    SkillSelector, Task,
};
use skills_security::TrustLevel;
use skills_security::approval::ApprovalOption;
use skills_security::audit::AuditTrail;
use skills_security::gate::PolicyGate;
use skills_store_traits::in_memory::{InMemoryMemoryStore, InMemoryPlanStore, InMemorySkillStore};
use skills_store_traits::memory::{FactQuery, NewFact};
use skills_store_traits::plans::{NewPlan, PlanFilter, RiskLevel};
use skills_store_traits::{
    MemoryStore, NewAssignment, NewSkill, PlanStore, SkillFilter, SkillStore, TenantId, UserScope,
};

fn alice() -> UserScope {
    UserScope::new("acme", "alice")
}

fn acme_facts() -> FactQuery {
    FactQuery::new(vec!["Acme".into()], vec![])
}

/// The stores a host hands its native skills, kept typed so the test can look inside.
struct Stores {
    memory: Arc<InMemoryMemoryStore>,
    skills: Arc<InMemorySkillStore>,
    plans: Arc<InMemoryPlanStore>,
}

impl Stores {
    fn new() -> Self {
        let stores = Stores {
            memory: Arc::new(InMemoryMemoryStore::new()),
            skills: Arc::new(InMemorySkillStore::new()),
            plans: Arc::new(InMemoryPlanStore::new()),
        };
        block_on(stores.memory.add_fact(
            &alice(),
            NewFact::new("Acme", "is", "a customer", 0.9, "crm"),
        ))
        .unwrap();
        stores
    }

    fn handed(&self) -> SkillStores {
        SkillStores::new()
            .with_memory(self.memory.clone())
            .with_skills(self.skills.clone())
            .with_plans(self.plans.clone())
    }

    /// (facts about Acme, skills, plans) as the stores hold them.
    fn counts(&self) -> (usize, usize, usize) {
        block_on(async {
            (
                self.memory
                    .related_facts(&alice(), &acme_facts())
                    .await
                    .unwrap()
                    .len(),
                self.skills
                    .list_skills(&alice().tenant, &SkillFilter::default())
                    .await
                    .unwrap()
                    .len(),
                self.plans
                    .list_plans(&alice(), &PlanFilter::new())
                    .await
                    .unwrap()
                    .len(),
            )
        })
    }
}

/// A native skill that reads memory, then tries one write to each store it was handed and
/// fails the step with the first refusal.
#[derive(Default)]
struct Writer {
    outcomes: Mutex<Vec<String>>,
}

#[async_trait]
impl NativeSkill for Writer {
    async fn run(&self, input: &SkillInput) -> Result<StepOutput, StepError> {
        let stores = &input.stores;
        let scope = alice();
        let memory = stores.memory().expect("memory handed");
        let known = memory.related_facts(&scope, &acme_facts()).await;
        let read = known.map(|facts| facts.len()).map_err(|e| e.to_string());
        let writes = [
            memory
                .add_fact(&scope, NewFact::new("Acme", "is", "a target", 1.0, "guard"))
                .await
                .map(|_| ()),
            stores
                .skills()
                .expect("skills handed")
                .create_skill(&scope.tenant, NewSkill::new("Planted", "planted", "# P\n"))
                .await
                .map(|_| ()),
            stores
                .plans()
                .expect("plans handed")
                .create_plan(&scope, NewPlan::new("planted", vec![], RiskLevel::Low))
                .await
                .map(|_| ()),
        ];
        let mut outcomes = self.outcomes.lock().unwrap();
        outcomes.push(format!("read {read:?}"));
        let mut refused = None;
        for write in writes {
            match write {
                Ok(()) => outcomes.push("written".into()),
                Err(e) => {
                    outcomes.push(e.to_string());
                    refused.get_or_insert(e);
                }
            }
        }
        match refused {
            Some(e) => Err(StepError::new(StepErrorKind::Store, e.to_string())),
            None => Ok(StepOutput::text("wrote to every store")),
        }
    }
}

fn run_writer(provider: Arc<dyn SkillProvider>, stores: &Stores) -> (StepState, Vec<String>) {
    let writer = Arc::new(Writer::default());
    let mut natives = NativeSkills::new().with_stores(stores.handed());
    natives.register("input-guard", writer.clone());
    let executor = Executor::builder(provider, PolicyGate::allow_all(AuditTrail::in_memory()))
        .natives(natives)
        .retry(skills_orchestrate::execute::RetryPolicy::never())
        .build();
    let plan = block_on(Planner::new().plan(
        "guard the input",
        vec![StepSpec::new("guard", "input-guard", "Check the input")],
    ))
    .unwrap();
    let result = block_on(executor.execute(&plan, Run::new(alice()).input("hello"))).unwrap();
    let state = result.step("guard").map(|s| s.state).unwrap();
    let outcomes = writer.outcomes.lock().unwrap().clone();
    (state, outcomes)
}

fn in_memory(layer: Option<u8>) -> Arc<dyn SkillProvider> {
    let mut skill = SkillDefinition::native("input-guard").trust(TrustLevel::Core);
    if let Some(layer) = layer {
        skill = skill.layer(layer);
    }
    Arc::new(InMemorySkills::new().with(skill))
}

#[test]
fn a_kernel_native_skill_cannot_write_any_store_it_is_handed() {
    let stores = Stores::new();
    let (state, outcomes) = run_writer(in_memory(Some(0)), &stores);
    assert_eq!(state, StepState::Failed);
    // It read what was there; each of its three writes was refused.
    assert_eq!(outcomes[0], "read Ok(1)");
    for (write, operation) in outcomes[1..]
        .iter()
        .zip(["add_fact", "create_skill", "create_plan"])
    {
        assert_eq!(
            *write,
            format!("`{operation}` refused: this store handle is read-only")
        );
    }
    assert_eq!(stores.counts(), (1, 0, 0), "nothing was written");
}

#[test]
fn an_executor_native_registered_under_a_name_no_directory_could_carry_never_runs() {
    let writer = Arc::new(Writer::default());
    let mut natives = NativeSkills::new();
    natives.register("Input Guard!", writer.clone());
    assert!(natives.names().next().is_none(), "the name was refused");
    assert!(natives.try_register("input_guard", writer.clone()).is_ok());
    let provider = Arc::new(
        InMemorySkills::new().with(SkillDefinition::native("Input Guard!").trust(TrustLevel::Core)),
    );
    let executor = Executor::builder(provider, PolicyGate::allow_all(AuditTrail::in_memory()))
        .natives(natives)
        .retry(skills_orchestrate::execute::RetryPolicy::never())
        .build();
    let plan = block_on(Planner::new().plan(
        "guard",
        vec![StepSpec::new("guard", "Input Guard!", "Check the input")],
    ))
    .unwrap();
    let result = block_on(executor.execute(&plan, Run::new(alice()))).unwrap();
    let step = result.step("guard").unwrap();
    assert_eq!(step.state, StepState::Failed);
    let message = &step.error.as_ref().unwrap().message;
    assert!(message.contains("could not carry it"), "{message}");
    assert!(writer.outcomes.lock().unwrap().is_empty(), "it never ran");
}

#[test]
fn skills_outside_the_kernel_write_through_the_same_stores() {
    for layer in [Some(1), Some(3), None] {
        let stores = Stores::new();
        let (state, outcomes) = run_writer(in_memory(layer), &stores);
        assert_eq!(state, StepState::Complete, "{layer:?}: {outcomes:?}");
        assert_eq!(stores.counts(), (2, 1, 1), "{layer:?}");
    }
}

#[test]
fn a_stored_skill_declaring_layer_zero_runs_as_a_kernel_skill() {
    // The layer comes from the skill's own skill.json through the resolver and the catalog.
    let tenant = TenantId::new("acme");
    let catalog = InMemorySkillStore::new();
    let resolution = block_on(async {
        let skill = NewSkill::new(
            "Input guard",
            "input-guard",
            "---\nname: input-guard\ndescription: Guards input.\n---\nCheck the input.\n",
        )
        .with_file("skill.json", r#"{"name": "aria-input_guard", "layer": 0}"#);
        let record = catalog.create_skill(&tenant, skill).await.unwrap();
        catalog
            .create_assignment(&tenant, NewAssignment::global(&record.id))
            .await
            .unwrap();
        Resolver::new()
            .resolve_for_agent(&catalog, &tenant, "agent", None, &[])
            .await
            .unwrap()
    });
    let provider = CatalogSkills::new(resolution)
        .with_store(Arc::new(catalog), tenant)
        .trust_with(|_| TrustLevel::Core)
        .native("input-guard");
    let definition = block_on(provider.skill("input-guard")).unwrap().unwrap();
    assert_eq!(definition.layer, Some(0));
    let stores = Stores::new();
    let (state, _) = run_writer(Arc::new(provider), &stores);
    assert_eq!(state, StepState::Failed);
    assert_eq!(stores.counts(), (1, 0, 0));
}

fn candidates() -> Vec<SkillCandidate> {
    vec![
        SkillCandidate::new("pdf", "Extract text and tables from PDF files.")
            .triggers(["read a pdf"]),
        SkillCandidate::new("docx", "Write Word documents.")
            .triggers(["read a pdf", "word document"])
            .status(SkillStatus::Deprecated),
        SkillCandidate::new("pptx", "Build slide decks from an outline.")
            .triggers(["slide deck"])
            .status(SkillStatus::Stub),
    ]
}

fn task() -> Task {
    Task::new("Read a PDF of the proposal, turn it into a Word document and a slide deck")
}

#[test]
fn the_fallback_never_picks_a_deprecated_skill() {
    let selector = SkillSelector::new(AgentSkills::seed_defaults());
    let selection = block_on(selector.select("ScribeAgent", &task(), &candidates())).unwrap();
    assert_eq!(selection.source, SelectionSource::Fallback);
    let required: Vec<&str> = selection
        .analysis
        .required_skills
        .iter()
        .map(|s| s.skill_id.as_str())
        .collect();
    // `docx` matches best (two triggers) but is deprecated; the stub still counts.
    assert_eq!(required, ["pdf", "pptx"]);
    assert!(
        selection
            .analysis
            .optional_skills
            .iter()
            .all(|s| s.skill_id != "docx")
    );
    // Directly too: ranking leaves deprecated candidates out.
    let ranked = FallbackSelector::new().rank(&task(), &candidates());
    assert!(ranked.iter().all(|s| s.skill_id != "docx"));
    let available = selector.available("ScribeAgent", &candidates());
    assert_eq!(available.len(), 2);
    assert_eq!(selector.permitted("ScribeAgent", &candidates()).len(), 3);
}

#[test]
fn a_skill_invoked_only_by_name_is_never_chosen_automatically_but_runs_when_named() {
    let mut with_manual = candidates();
    with_manual.push(
        SkillCandidate::new("deploy", "Deploy the release to production.")
            .triggers(["read a pdf", "slide deck", "word document"])
            .manual_only(true),
    );
    let selector = SkillSelector::new(
        AgentSkills::new().with("ScribeAgent", ["pdf", "docx", "pptx", "deploy"]),
    );
    let selection = block_on(selector.select("ScribeAgent", &task(), &with_manual)).unwrap();
    let chosen: Vec<&str> = selection
        .analysis
        .required_skills
        .iter()
        .map(|s| s.skill_id.as_str())
        .chain(
            selection
                .analysis
                .optional_skills
                .iter()
                .map(|s| s.skill_id.as_str()),
        )
        .collect();
    assert!(!chosen.contains(&"deploy"), "{chosen:?}");
    assert!(
        FallbackSelector::new()
            .rank(&task(), &with_manual)
            .iter()
            .all(|s| s.skill_id != "deploy")
    );
    assert!(
        selector
            .available("ScribeAgent", &with_manual)
            .iter()
            .all(|c| c.id != "deploy")
    );
    let named = task().request_skills(["deploy"]);
    let selection = block_on(selector.select("ScribeAgent", &named, &with_manual)).unwrap();
    assert_eq!(selection.analysis.required_skills[0].skill_id, "deploy");
}

#[test]
fn a_skill_limited_to_paths_is_chosen_only_for_work_on_matching_files() {
    let mut with_limited = candidates();
    with_limited.push(
        SkillCandidate::new("rust-lint", "Lint Rust sources.")
            .triggers(["read a pdf", "slide deck", "word document"])
            .paths(["src/**/*.rs", "Cargo.toml"]),
    );
    let selector = SkillSelector::new(
        AgentSkills::new().with("ScribeAgent", ["pdf", "docx", "pptx", "rust-lint"]),
    );
    let chosen = |task: &Task| -> Vec<String> {
        let selection = block_on(selector.select("ScribeAgent", task, &with_limited)).unwrap();
        selection
            .analysis
            .required_skills
            .iter()
            .map(|s| s.skill_id.clone())
            .chain(
                selection
                    .analysis
                    .optional_skills
                    .iter()
                    .map(|s| s.skill_id.clone()),
            )
            .collect()
    };
    // No files, or files it is not limited to: never chosen, by the fallback either.
    for task in [task(), task().files(["docs/guide.md", "./README.md"])] {
        assert!(
            !chosen(&task).contains(&"rust-lint".to_owned()),
            "{:?}",
            task.files
        );
        assert!(
            FallbackSelector::new()
                .rank(&task, &with_limited)
                .iter()
                .all(|s| s.skill_id != "rust-lint")
        );
    }
    // Work on a matching file: chosen like any other skill.
    let on_sources = task().files(["docs/guide.md", "./src/db/pool.rs"]);
    assert_eq!(on_sources.files, ["docs/guide.md", "src/db/pool.rs"]);
    assert!(chosen(&on_sources).contains(&"rust-lint".to_owned()));
    // Named, it runs wherever the work is.
    let named = task().request_skills(["rust-lint"]);
    assert_eq!(chosen(&named), ["rust-lint"]);
}

#[test]
fn a_skill_md_paths_field_limits_its_candidate() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("rust-lint");
    std::fs::create_dir_all(&root).unwrap();
    std::fs::write(
        root.join("SKILL.md"),
        "---\nname: rust-lint\ndescription: Lint Rust sources.\npaths:\n  - \"src/**/*.rs\"\n---\nRun clippy.\n",
    )
    .unwrap();
    let skill = skills_core::Skill::load(&root, &skills_core::LoadOptions::default()).unwrap();
    let candidate = SkillCandidate::from_skill(&skill);
    assert_eq!(candidate.paths, ["src/**/*.rs"]);
    assert!(candidate.applies_to_files(&["src/main.rs".to_owned()]));
    assert!(!candidate.applies_to_files(&["README.md".to_owned()]));
}

#[test]
fn the_model_is_never_offered_a_deprecated_skill_and_stubs_are_marked() {
    let answer = |id: &str| {
        json!({"skills_needed": true,
               "required_skills": [{"skill_id": id, "reason": "best match", "critical": true}],
               "optional_skills": [], "execution_approach": "sequential"})
        .to_string()
    };
    // A model insisting on the deprecated skill is refused both times.
    let model = Arc::new(ScriptedLlm::new().when(&[SELECTION_PROMPT_START], answer("docx")));
    let selector = SkillSelector::new(AgentSkills::seed_defaults()).model(model.clone());
    let refused = block_on(selector.select("ScribeAgent", &task(), &candidates()));
    assert!(matches!(
        refused,
        Err(Error::MalformedModelOutput { attempts: 2, .. })
    ));
    let prompt = &model.requests()[0].messages[0].content;
    assert!(prompt.contains("- pdf: Extract text"));
    assert!(
        prompt.contains(
            "- pptx [stub: a placeholder with an in-memory implementation]: Build slide decks"
        ),
        "{prompt}"
    );
    assert!(!prompt.contains("docx"), "{prompt}");

    let model = Arc::new(ScriptedLlm::new().when(&[SELECTION_PROMPT_START], answer("pptx")));
    let selector = SkillSelector::new(AgentSkills::seed_defaults()).model(model);
    let selection = block_on(selector.select("ScribeAgent", &task(), &candidates())).unwrap();
    assert_eq!(selection.analysis.required_skills[0].skill_id, "pptx");
}

#[test]
fn a_deprecated_skill_requested_by_name_is_selected_without_asking_the_model() {
    let model = Arc::new(ScriptedLlm::new());
    let selector = SkillSelector::new(AgentSkills::seed_defaults()).model(model.clone());
    let task = task().request_skills(["docx", " pdf ", "docx", ""]);
    assert_eq!(task.requested_skills, ["docx", "pdf"]);
    let selection = block_on(selector.select("ScribeAgent", &task, &candidates())).unwrap();
    assert_eq!(selection.source, SelectionSource::Requested);
    let specs = selection.step_specs(&task, false);
    assert_eq!(
        specs.iter().map(|s| s.skill.as_str()).collect::<Vec<_>>(),
        ["docx", "pdf"]
    );
    assert_eq!(specs[1].depends_on, ["docx"]);
    assert!(model.requests().is_empty());
    // Only skills the agent may use can be requested.
    let other = Task::new("x").request_skills(["lead-research"]);
    assert!(matches!(
        block_on(selector.select("ScribeAgent", &other, &candidates())),
        Err(Error::UnknownSkill(id)) if id == "lead-research"
    ));
}

#[test]
fn the_orchestrator_context_marks_deprecated_and_stub_skills() {
    let skills = candidates();
    let inputs = OrchestratorInputs {
        skills: &skills,
        plan: None,
        completed: &[],
        user_context: "",
    };
    let context =
        orchestrator_context(&inputs, &ContextBudgets::default(), &EstimatedTokens).unwrap();
    assert!(context.text.contains("- pdf: Extract"));
    assert!(context.text.contains(
        "- docx [deprecated: being phased out, use only when asked for by name]: Write Word"
    ));
    assert!(context.text.contains("- pptx [stub: a placeholder"));
}

/// A native skill that says which skill it is.
struct Named(&'static str);

#[async_trait]
impl NativeSkill for Named {
    async fn run(&self, _: &SkillInput) -> Result<StepOutput, StepError> {
        Ok(StepOutput::text(format!("{} ran", self.0)))
    }
}

#[test]
fn the_orchestrator_runs_a_deprecated_skill_only_when_asked_for_by_name() {
    let mut skills = InMemorySkills::new();
    let mut natives = NativeSkills::new();
    for id in ["pdf", "docx", "pptx"] {
        skills.insert(SkillDefinition::native(id).trust(TrustLevel::Core));
        natives.register(id, Arc::new(Named(id)));
    }
    let provider = Arc::new(skills);
    let executor = Executor::builder(
        provider.clone(),
        PolicyGate::allow_all(AuditTrail::in_memory()),
    )
    .natives(natives)
    .build();
    let orchestrator = Orchestrator::new(
        SkillSelector::new(AgentSkills::seed_defaults()),
        candidates(),
        executor,
    )
    .approver(Arc::new(FixedPlanApproval(Some(ApprovalOption::YesOnce))))
    .skill_provider(provider);
    let ran = |task: &Task| -> Vec<String> {
        let result =
            block_on(orchestrator.execute_task(task, TaskRun::new(alice(), "ScribeAgent")))
                .unwrap();
        assert_eq!(result.status, OrchestrationStatus::Completed);
        result
            .execution
            .unwrap()
            .steps
            .iter()
            .map(|s| s.output.clone().unwrap_or_default())
            .collect()
    };
    assert_eq!(ran(&task()), ["pdf ran", "pptx ran"]);
    assert_eq!(ran(&task().request_skills(["docx"])), ["docx ran"]);
}
