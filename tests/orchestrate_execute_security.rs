//! The executor's security pipeline under attack: a model echoing a hidden value, made-up
//! tokens, a refused approval, a denial, regulated data, script skills through the sandbox,
//! and an audit trail that cannot be written.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod orchestrate_execute_support;

use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use futures::executor::block_on;
use orchestrate_execute_support::{Probe, alice, chain, no_wait, plan};
use skills::orchestrate::execute::{
    ApprovalAnswer, ApprovalPrompt, Executor, InMemorySkills, Run, ScriptSpec, SkillDefinition,
    StepApprover, StepErrorKind, StepOutput, StepState,
};
use skills::orchestrate::llm::ScriptedLlm;
use skills::orchestrate::plan::StepSpec;
use skills::orchestrate::progress::{CollectingSink, ProgressEvent};
use skills::security::approval::{ApprovalOption, Approvals, NonInteractive};
use skills::security::audit::AuditTrail;
use skills::security::autonomy::{Autonomy, RiskLevel};
use skills::security::gate::PolicyGate;
use skills::security::permissions::{
    InMemoryRateLimiter, PermissionRule, Permissions, Scope, Target,
};
use skills::security::sandbox::{ScriptedSandbox, Status};
use skills::security::{Clearance, DataClass, TrustLevel};
use skills::store::audit::{AuditEntry, AuditQuery, AuditRecord, AuditStore, ChainHead};
use skills::store::in_memory::{InMemoryAuditStore, InMemoryTrustStore};
use skills::store::plans::StepStatus;
use skills::store::{ManualClock, TenantId};

const EMAIL: &str = "rbrown@example.com";

fn acme() -> TenantId {
    TenantId::new("acme")
}

async fn records(store: &InMemoryAuditStore) -> Vec<AuditRecord> {
    store
        .query(&acme(), &AuditQuery::new())
        .await
        .unwrap()
        .into_iter()
        .map(|e| e.record)
        .collect()
}

/// The execution records (the gate's own decision records left out).
async fn execution_records(store: &InMemoryAuditStore) -> Vec<AuditRecord> {
    let mut all = records(store).await;
    all.retain(|r| skills::security::audit::PolicyFlag::find(r).is_none());
    all
}

fn writer() -> InMemorySkills {
    InMemorySkills::new()
        .with(
            SkillDefinition::instruction("writer", "Write the e-mail the task asks for.")
                .trust(TrustLevel::Verified),
        )
        .with(SkillDefinition::native("work").trust(TrustLevel::User))
}

fn leak_executor(model: Arc<ScriptedLlm>, audit: Arc<InMemoryAuditStore>) -> Executor {
    Executor::builder(
        Arc::new(writer()),
        skills::security::gate::PolicyGate::allow_all(AuditTrail::new(audit)),
    )
    .llm(model)
    .native("work", Probe::ok())
    .retry(no_wait(3))
    .build()
}

#[test]
fn a_model_echoing_a_hidden_value_is_blocked_as_a_leak() {
    let model = Arc::new(ScriptedLlm::new().when(&["Draft"], format!("Sent it to {EMAIL}.")));
    let audit = Arc::new(InMemoryAuditStore::new());
    let executor = leak_executor(model.clone(), audit.clone());
    let plan = block_on(plan(vec![
        StepSpec::new("draft", "writer", "Draft the renewal e-mail"),
        StepSpec::new("send", "work", "Send it").after("draft"),
    ]));
    let sink = Arc::new(CollectingSink::new());
    let run = Run::new(alice())
        .input(format!("Customer contact: {EMAIL}"))
        .progress(sink.clone());
    let result = block_on(executor.execute(&plan, run)).unwrap();

    let draft = result.step("draft").unwrap();
    assert_eq!(
        (draft.state, draft.attempts),
        (StepState::Failed, 1),
        "a leak is never retried"
    );
    assert_eq!(
        draft.error.as_ref().map(|e| e.kind),
        Some(StepErrorKind::Leak)
    );
    assert!(draft.output.is_none());
    // Its working-memory entry says it failed and why, and holds nothing of the output.
    let entry = draft.memory.as_ref().unwrap();
    assert_eq!(entry.status, StepStatus::Failed);
    assert!(
        entry.summary.starts_with("leak: skill output blocked") && !entry.summary.contains(EMAIL),
        "{}",
        entry.summary
    );
    assert!(entry.artifacts.is_empty() && entry.extracted_facts.is_empty());
    assert_eq!(result.memory().count(), 0, "nothing is handed on");
    assert_eq!(result.step("send").unwrap().state, StepState::Skipped);
    // The model only ever saw the token, and nothing shown or recorded holds the address.
    let requests = model.requests();
    assert_eq!(requests.len(), 1);
    let prompt = &requests[0].messages[0].content;
    assert!(
        prompt.contains("[EMAIL_001]") && !prompt.contains(EMAIL),
        "{prompt}"
    );
    let shown = serde_json::to_string(&sink.events()).unwrap();
    assert!(!shown.contains(EMAIL), "{shown}");
    assert!(sink.events().iter().any(|e| matches!(
        e,
        ProgressEvent::StepFailed {
            can_retry: false,
            ..
        }
    )));
    let records = block_on(execution_records(&audit));
    assert_eq!(records.len(), 1);
    let record = &records[0];
    assert!(!record.success);
    assert!(
        record
            .error
            .as_deref()
            .unwrap()
            .starts_with("leak: skill output blocked"),
        "{:?}",
        record.error
    );
    assert!(
        record
            .security_flags
            .iter()
            .any(|f| f.contains("output_blocked")),
        "{:?}",
        record.security_flags
    );
    assert_eq!(record.tokens_used, ["[EMAIL_001]"]);
    assert!(!serde_json::to_string(record).unwrap().contains(EMAIL));
}

#[test]
fn made_up_tokens_are_blocked_and_issued_ones_restored() {
    let model = Arc::new(
        ScriptedLlm::new()
            .when(&["Forge"], "Sent to [EMAIL_002].")
            .when(&["Honest"], "Sent to [EMAIL_001]."),
    );
    let audit = Arc::new(InMemoryAuditStore::new());
    let executor = leak_executor(model, audit.clone());
    let both = block_on(plan(vec![
        StepSpec::new("forge", "writer", "Forge"),
        StepSpec::new("honest", "writer", "Honest"),
    ]));
    let run = Run::new(alice()).input(format!("Contact {EMAIL}"));
    let result = block_on(executor.execute(&both, run.clone())).unwrap();
    assert_eq!(
        result.step("forge").unwrap().error.as_ref().map(|e| e.kind),
        Some(StepErrorKind::Leak)
    );
    let honest = result.step("honest").unwrap();
    assert_eq!(honest.state, StepState::Complete);
    // Restored for the recipient (the user's orchestrator, cleared for everything)...
    assert_eq!(
        honest.output.as_deref(),
        Some("Sent to rbrown@example.com.")
    );
    assert_eq!(
        honest.memory.as_ref().unwrap().summary,
        "Sent to rbrown@example.com."
    );
    // ...and kept as a token for a recipient who may not see contact data.
    let model = Arc::new(ScriptedLlm::new().when(&["Honest"], "Sent to [EMAIL_001]."));
    let executor = Executor::builder(
        Arc::new(writer()),
        skills::security::gate::PolicyGate::allow_all(
            skills::security::audit::AuditTrail::in_memory(),
        ),
    )
    .llm(model)
    .recipient_clearance(Clearance::up_to(DataClass::Internal))
    .build();
    let honest_only = block_on(plan(vec![StepSpec::new("honest", "writer", "Honest")]));
    let result = block_on(executor.execute(&honest_only, run)).unwrap();
    assert_eq!(
        result.step("honest").unwrap().output.as_deref(),
        Some("Sent to [EMAIL_001].")
    );
}

fn gate(audit: Arc<InMemoryAuditStore>) -> (PolicyGate, Arc<Permissions>) {
    let clock = ManualClock::new(0);
    let permissions = Arc::new(Permissions::new(clock.clone()));
    let gate = PolicyGate::new(
        permissions.clone(),
        Arc::new(InMemoryRateLimiter::new()),
        Autonomy::new(Arc::new(InMemoryTrustStore::new()), clock.clone()),
        AuditTrail::new(audit),
        clock,
    );
    (gate, permissions)
}

/// Answers every prompt the same and keeps the prompts.
struct Recording {
    answer: ApprovalAnswer,
    prompts: Mutex<Vec<ApprovalPrompt>>,
}

impl Recording {
    fn new(answer: ApprovalAnswer) -> Arc<Self> {
        Arc::new(Recording {
            answer,
            prompts: Mutex::new(Vec::new()),
        })
    }

    fn prompts(&self) -> Vec<ApprovalPrompt> {
        self.prompts.lock().unwrap().clone()
    }
}

#[async_trait]
impl StepApprover for Recording {
    async fn approve(&self, prompt: &ApprovalPrompt) -> ApprovalAnswer {
        self.prompts.lock().unwrap().push(prompt.clone());
        self.answer.clone()
    }
}

fn gated(
    approver: Arc<Recording>,
    audit: Arc<InMemoryAuditStore>,
) -> (Executor, Arc<Probe>, Arc<Permissions>) {
    let probe = Probe::ok();
    let (gate, permissions) = gate(audit);
    let skills = InMemorySkills::new().with(
        SkillDefinition::native("work")
            .trust(TrustLevel::User)
            .risk(RiskLevel::Low),
    );
    let executor = Executor::builder(Arc::new(skills), gate)
        .native("work", probe.clone())
        .approver(approver)
        .retry(no_wait(3))
        .build();
    (executor, probe, permissions)
}

#[test]
fn a_refused_approval_denies_the_step_skips_its_dependents_and_is_audited() {
    let audit = Arc::new(InMemoryAuditStore::new());
    let approver = Recording::new(ApprovalAnswer::Refused);
    let (executor, probe, _) = gated(approver.clone(), audit.clone());
    let plan = block_on(plan(chain(&["a", "b"], "work")));
    let result = block_on(executor.execute(&plan, Run::new(alice()).agent("HunterAgent"))).unwrap();

    let a = result.step("a").unwrap();
    assert_eq!((a.state, a.attempts), (StepState::Failed, 1));
    let error = a.error.as_ref().unwrap();
    assert_eq!(error.kind, StepErrorKind::Denied);
    assert_eq!(error.message, "approval refused: Initial approval required");
    assert_eq!(result.step("b").unwrap().state, StepState::Skipped);
    let statuses: Vec<StepStatus> = result.working_memory().map(|m| m.status).collect();
    assert_eq!(statuses, [StepStatus::Denied, StepStatus::Skipped]);
    assert_eq!(probe.total_calls(), 0, "the skill never ran");
    let prompts = approver.prompts();
    assert_eq!(prompts.len(), 1);
    assert_eq!(
        (prompts[0].step_id.as_str(), prompts[0].reason.as_str()),
        ("a", "Initial approval required")
    );

    // The trail shows the gate asking and the step denied, for the same execution.
    let records = block_on(records(&audit));
    let errors: Vec<&str> = records
        .iter()
        .map(|r| r.error.as_deref().unwrap_or(""))
        .collect();
    assert_eq!(
        errors,
        [
            "approval_required: Initial approval required",
            "denied: approval refused: Initial approval required"
        ]
    );
    assert!(records.iter().all(|r| !r.success && r.skill_id == "work"));
    assert_eq!(records[1].id, prompts[0].execution_id);
    assert_eq!(records[1].agent_id.as_deref(), Some("HunterAgent"));
}

#[test]
fn an_approval_given_lets_the_gate_allow_the_step() {
    let audit = Arc::new(InMemoryAuditStore::new());
    let approver = Recording::new(ApprovalAnswer::approved("alice"));
    let (executor, probe, _) = gated(approver.clone(), audit.clone());
    let plan = block_on(plan(chain(&["a", "b"], "work")));
    let result = block_on(executor.execute(&plan, Run::new(alice()))).unwrap();
    assert!(result.success, "{result:?}");
    assert_eq!(probe.total_calls(), 2);
    let records = block_on(records(&audit));
    // Per step: the gate asks, the gate allows with the approval, the execution record.
    let successes: Vec<bool> = records.iter().map(|r| r.success).collect();
    assert_eq!(successes.iter().filter(|s| **s).count(), 4, "{records:#?}");
    assert!(records.iter().any(|r| r.success && r.output_hash.is_some()));
}

#[test]
fn a_denial_by_rule_fails_the_step_without_asking_anyone() {
    let audit = Arc::new(InMemoryAuditStore::new());
    let approver = Recording::new(ApprovalAnswer::approved("alice"));
    let (executor, probe, permissions) = gated(approver.clone(), audit);
    permissions.upsert_rule(
        &acme(),
        PermissionRule::new("no-work", Scope::Global, Target::Skill("work".into())).execute(false),
    );
    let plan = block_on(plan(vec![StepSpec::new("a", "work", "x")]));
    let result = block_on(executor.execute(&plan, Run::new(alice()))).unwrap();
    let error = result.step("a").unwrap().error.clone().unwrap();
    assert_eq!(error.kind, StepErrorKind::Denied);
    assert!(
        error.message.starts_with("not_permitted:"),
        "{}",
        error.message
    );
    assert!(approver.prompts().is_empty());
    assert_eq!(probe.total_calls(), 0);
}

#[test]
fn regulated_data_reaches_a_core_skill_only_after_a_person_approves_it() {
    let input = "Patient DOB: 1961-11-20, follow-up due.";
    let core =
        || InMemorySkills::new().with(SkillDefinition::native("work").trust(TrustLevel::Core));

    // No gate, no approval: the core skill sees a token.
    let probe = Probe::ok();
    let executor = Executor::builder(
        Arc::new(core()),
        skills::security::gate::PolicyGate::allow_all(
            skills::security::audit::AuditTrail::in_memory(),
        ),
    )
    .native("work", probe.clone())
    .build();
    let plan = block_on(plan(vec![StepSpec::new("a", "work", "x")]));
    block_on(executor.execute(&plan, Run::new(alice()).input(input))).unwrap();
    assert!(probe.input("a").contains("[DATE_OF_BIRTH_001]") && !probe.input("a").contains("1961"));

    // The gate asks; a person approves; the skill sees the value.
    let audit = Arc::new(InMemoryAuditStore::new());
    let approver = Recording::new(ApprovalAnswer::approved("dr.ortiz"));
    let probe = Probe::ok();
    let executor = Executor::builder(Arc::new(core()), gate(audit.clone()).0)
        .native("work", probe.clone())
        .approver(approver.clone())
        .build();
    let result = block_on(executor.execute(&plan, Run::new(alice()).input(input))).unwrap();
    assert!(result.success, "{result:?}");
    assert!(approver.prompts()[0].regulated);
    assert!(
        probe.input("a").contains("1961-11-20"),
        "{}",
        probe.input("a")
    );
    let records = block_on(records(&audit));
    let execution = records.last().unwrap();
    assert!(
        execution.success
            && execution
                .data_classes_granted
                .contains(&"regulated".to_owned())
    );
}

#[tokio::test]
async fn script_skills_run_only_referenced_approved_scripts_in_the_sandbox() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("scripts")).unwrap();
    std::fs::write(dir.path().join("scripts/report.sh"), "echo report\n").unwrap();
    std::fs::write(dir.path().join("scripts/other.sh"), "echo other\n").unwrap();
    let files = vec![
        "scripts/report.sh".to_owned(),
        "scripts/other.sh".to_owned(),
    ];
    let instructions = "Run scripts/report.sh to build the report.";
    let skills = InMemorySkills::new()
        .with(
            SkillDefinition::script(
                "report",
                instructions,
                ScriptSpec::new(dir.path(), "scripts/report.sh", files.clone()),
            )
            .trust(TrustLevel::User),
        )
        .with(
            SkillDefinition::script(
                "sneaky",
                instructions,
                ScriptSpec::new(dir.path(), "scripts/other.sh", files),
            )
            .trust(TrustLevel::User),
        );
    let sandbox = Arc::new(ScriptedSandbox::new());
    sandbox.push(Status::Success, "report ready\n", "");
    let scratch = tempfile::tempdir().unwrap();
    let build = |answer: ApprovalOption| {
        Executor::builder(
            Arc::new(skills.clone()),
            skills::security::gate::PolicyGate::allow_all(
                skills::security::audit::AuditTrail::in_memory(),
            ),
        )
        .sandbox(sandbox.clone())
        .script_approvals(Arc::new(Approvals::new(Arc::new(NonInteractive(answer)))))
        .scratch_dir(scratch.path())
        .retry(no_wait(2))
        .build()
    };
    let plan = plan(vec![
        StepSpec::new("r", "report", "Build it"),
        StepSpec::new("s", "sneaky", "Try it"),
    ])
    .await;
    let result = build(ApprovalOption::YesOnce)
        .execute(&plan, Run::new(alice()))
        .await
        .unwrap();
    let report = result.step("r").unwrap();
    assert_eq!(report.state, StepState::Complete);
    assert_eq!(report.output.as_deref(), Some("report ready\n"));
    let sneaky = result.step("s").unwrap();
    assert_eq!(
        sneaky.error.as_ref().map(|e| e.kind),
        Some(StepErrorKind::Script)
    );
    assert!(
        sneaky
            .error
            .as_ref()
            .unwrap()
            .message
            .contains("not referenced")
    );
    let requests = sandbox.requests();
    assert_eq!(
        requests.len(),
        1,
        "only the referenced script reached the sandbox"
    );
    assert_eq!(
        requests[0].config.timeout,
        skills::security::SandboxConfig::for_trust(TrustLevel::User).timeout
    );

    let plan = plan_one("r", "report").await;
    let result = build(ApprovalOption::No)
        .execute(&plan, Run::new(alice()))
        .await
        .unwrap();
    let error = result.step("r").unwrap().error.clone().unwrap();
    assert_eq!(error.kind, StepErrorKind::Script);
    assert!(error.message.contains("not approved"), "{}", error.message);
    assert_eq!(sandbox.requests().len(), 1, "a declined script never runs");
}

/// Counts the questions a script approval asks, answering `yes_in_session`.
struct SessionAnswers(std::sync::atomic::AtomicUsize);

#[async_trait]
impl skills::security::approval::ApprovalChannel for SessionAnswers {
    async fn ask(
        &self,
        _request: &skills::security::approval::ApprovalRequest,
    ) -> Option<ApprovalOption> {
        self.0.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        Some(ApprovalOption::YesInSession)
    }
}

#[tokio::test]
async fn a_script_step_gets_its_sanitized_input_and_files_and_the_chat_carries_approvals() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("scripts")).unwrap();
    std::fs::write(dir.path().join("scripts/report.sh"), "cat\n").unwrap();
    let files = vec!["scripts/report.sh".to_owned()];
    let skills = InMemorySkills::new().with(
        SkillDefinition::script(
            "report",
            "Run scripts/report.sh on the data.",
            ScriptSpec::new(dir.path(), "scripts/report.sh", files)
                .args(["--summary"])
                .input_file(skills::security::sandbox::InputFile::new(
                    "deal.pdf",
                    b"%PDF-1.4".to_vec(),
                )),
        )
        .trust(TrustLevel::Community),
    );
    let sandbox = Arc::new(ScriptedSandbox::new());
    for _ in 0..6 {
        sandbox.push(Status::Success, "done\n", "");
    }
    let scratch = tempfile::tempdir().unwrap();
    let channel = Arc::new(SessionAnswers(0.into()));
    let executor = Executor::builder(
        Arc::new(skills),
        skills::security::gate::PolicyGate::allow_all(
            skills::security::audit::AuditTrail::in_memory(),
        ),
    )
    .sandbox(sandbox.clone())
    .script_approvals(Arc::new(Approvals::new(channel.clone())))
    .scratch_dir(scratch.path())
    .retry(no_wait(1))
    .build();
    let input = "Call jane.doe@example.com about the renewal.";
    let run = |chat: &str| Run::new(alice()).input(input).session(chat);
    let plan1 = plan_one("r", "report").await;
    let result = executor.execute(&plan1, run("chat-1")).await.unwrap();
    assert_eq!(result.step("r").unwrap().state, StepState::Complete);
    let requests = sandbox.requests();
    let stdin = String::from_utf8_lossy(&requests[0].stdin).into_owned();
    // The input arrives on stdin, sanitized for a community skill (internal data hidden).
    assert!(stdin.starts_with("Task input:\n[GENERAL_001]"), "{stdin}");
    assert!(!stdin.contains("jane.doe@example.com"), "{stdin}");
    assert_eq!(requests[0].args, ["--summary"]);
    assert_eq!(requests[0].input_files[0].name, "deal.pdf");
    let asked = || channel.0.load(std::sync::atomic::Ordering::SeqCst);
    assert_eq!(asked(), 1);
    // The next task in the same chat (another plan) runs without asking again.
    let plan2 = plan_one("r", "report").await;
    executor.execute(&plan2, run("chat-1")).await.unwrap();
    assert_eq!(
        asked(),
        1,
        "yes_in_session carries to the next task of the chat"
    );
    // Another chat asks.
    let plan3 = plan_one("r", "report").await;
    executor.execute(&plan3, run("chat-2")).await.unwrap();
    assert_eq!(asked(), 2);
    // Another user in a chat with the same id asks: answers are per user.
    let bob = skills::store::UserScope::new("acme", "bob");
    executor
        .execute(&plan3, Run::new(bob).input(input).session("chat-1"))
        .await
        .unwrap();
    assert_eq!(asked(), 3);
    // Without the host's chat an answer covers one run: the same plan run again asks.
    executor
        .execute(&plan3, Run::new(alice()).input(input))
        .await
        .unwrap();
    executor
        .execute(&plan3, Run::new(alice()).input(input))
        .await
        .unwrap();
    assert_eq!(asked(), 5);
    assert_eq!(sandbox.requests().len(), 6);
}

async fn plan_one(id: &str, skill: &str) -> skills::orchestrate::plan::ExecutionPlan {
    plan(vec![StepSpec::new(id, skill, "x")]).await
}

/// An audit store that refuses every write.
struct Broken;

#[async_trait]
impl AuditStore for Broken {
    async fn append(
        &self,
        _: &TenantId,
        _: &str,
        _: AuditRecord,
        _: Option<&str>,
    ) -> skills::store::Result<AuditEntry> {
        Err(skills::store::Error::backend("disk full"))
    }
    async fn head(&self, _: &TenantId, _: &str) -> skills::store::Result<Option<ChainHead>> {
        Ok(None)
    }
    async fn read_range(
        &self,
        _: &TenantId,
        _: &str,
        _: u64,
        _: usize,
    ) -> skills::store::Result<Vec<AuditEntry>> {
        Ok(Vec::new())
    }
    async fn get_entry(&self, _: &TenantId, _: &str) -> skills::store::Result<Option<AuditEntry>> {
        Ok(None)
    }
    async fn query(&self, _: &TenantId, _: &AuditQuery) -> skills::store::Result<Vec<AuditEntry>> {
        Ok(Vec::new())
    }
    async fn chains(&self, _: &TenantId) -> skills::store::Result<Vec<String>> {
        Ok(Vec::new())
    }
}

#[test]
fn a_step_whose_record_cannot_be_written_fails_closed() {
    let probe = Probe::new(|_, _| Ok(StepOutput::text("done")));
    let skills =
        InMemorySkills::new().with(SkillDefinition::native("work").trust(TrustLevel::User));
    let executor = Executor::builder(
        Arc::new(skills),
        skills::security::gate::PolicyGate::allow_all(AuditTrail::new(Arc::new(Broken))),
    )
    .native("work", probe.clone())
    .build();
    let plan = block_on(plan(chain(&["a", "b"], "work")));
    let result = block_on(executor.execute(&plan, Run::new(alice()))).unwrap();
    let a = result.step("a").unwrap();
    assert_eq!(a.error.as_ref().map(|e| e.kind), Some(StepErrorKind::Audit));
    assert!(a.output.is_none());
    assert_eq!(result.step("b").unwrap().state, StepState::Skipped);
}

const DEAL: &str = "Acme renewal at 1.2M, closing in May";

/// A native skill that hands on everything it was shown (tokens and all), as a model
/// summarizing its input would.
fn echo() -> Arc<Probe> {
    Probe::new(|input, _| Ok(StepOutput::text(format!("saw {}", input.input))))
}

fn class_chain() -> InMemorySkills {
    InMemorySkills::new()
        .with(SkillDefinition::native("echo").trust(TrustLevel::Verified))
        .with(SkillDefinition::native("community-echo").trust(TrustLevel::Community))
}

#[test]
fn data_keeps_its_class_across_steps_and_reaches_only_cleared_recipients() {
    let probe = echo();
    let executor = Executor::builder(
        Arc::new(class_chain()),
        PolicyGate::allow_all(AuditTrail::in_memory()),
    )
    .native("echo", probe.clone())
    .native("community-echo", probe.clone())
    .retry(no_wait(1))
    .build();
    // A confidential source -> a verified step -> a verified step -> a community step.
    let plan = block_on(plan(vec![
        StepSpec::new("read", "echo", "read the deal"),
        StepSpec::new("review", "echo", "review it").after("read"),
        StepSpec::new("share", "community-echo", "share it").after("review"),
    ]));
    let run = Run::new(alice())
        .input(DEAL)
        .source(skills::security::Context::source("crm_deal"));
    let result = block_on(executor.execute(&plan, run)).unwrap();
    assert!(result.success, "{result:?}");
    for step in ["read", "review", "share"] {
        let seen = probe.input(step);
        assert!(
            !seen.contains("Acme") && !seen.contains("1.2M"),
            "`{step}` is not cleared for confidential data but saw: {seen}"
        );
    }
    // What `read` handed on holds the deal (its output restored for the user); `review`
    // got it back as data of the class it came from, not as fresh internal text.
    let memory: Vec<_> = result.memory().collect();
    assert!(memory[0].summary.contains(DEAL), "{}", memory[0].summary);
    for entry in &memory {
        assert_eq!(
            entry.data_class,
            DataClass::Confidential,
            "{}",
            entry.step_id
        );
        assert_eq!(entry.sources, ["crm_deal"], "{}", entry.step_id);
    }
    // The recipient, the user's own orchestrator, sees the raw value at the end.
    let last = result
        .steps
        .last()
        .and_then(|s| s.output.as_deref())
        .unwrap();
    assert!(last.contains(DEAL), "{last}");
    let task = skills::orchestrate::Task::new("share the deal review");
    let synthesis =
        skills::orchestrate::synthesis::Synthesizer::new().deterministic(&task, &plan, &result);
    assert!(synthesis.summary.contains("Acme"), "{}", synthesis.summary);
}

#[test]
fn a_resumed_entry_keeps_its_class_for_later_steps_and_composite_sub_steps() {
    use skills::orchestrate::plan::save_plan;
    use skills::store::PlanStore;
    use skills::store::in_memory::InMemoryPlanStore;
    use skills::store::plans::{StepStatus, StepUpdate};

    let probe = echo();
    let skills = class_chain().with(
        SkillDefinition::composite("bundle", vec![StepSpec::new("inner", "echo", "look")])
            .trust(TrustLevel::Verified),
    );
    let store = Arc::new(InMemoryPlanStore::new());
    let executor = Executor::builder(
        Arc::new(skills),
        PolicyGate::allow_all(AuditTrail::in_memory()),
    )
    .native("echo", probe.clone())
    .plan_store(store.clone())
    .retry(no_wait(1))
    .build();
    let plan = block_on(plan(vec![
        StepSpec::new("read", "echo", "read the deal"),
        StepSpec::new("review", "echo", "review it").after("read"),
        StepSpec::new("pack", "bundle", "bundle it").after("read"),
    ]));
    let record = block_on(save_plan(store.as_ref(), &alice(), &plan)).unwrap();
    // `read` completed in an earlier process, on confidential data; the resumed run has no
    // input of its own, so nothing but the stored class says what the entry holds.
    let mut done = StepUpdate::new()
        .status(StepStatus::Complete)
        .summary(format!("saw {DEAL}"));
    done.data_class = Some("confidential".into());
    done.sources = Some(vec!["crm_deal".into()]);
    block_on(store.update_step(&alice(), &record.id, 1, done)).unwrap();

    let run = Run::new(alice()).stored_plan(record.id.clone());
    let result = block_on(executor.execute(&plan, run)).unwrap();
    assert!(result.success, "{result:?}");
    assert_eq!(probe.calls("read"), 0, "reused, not run again");
    for step in ["review", "inner"] {
        let seen = probe.input(step);
        assert!(
            !seen.is_empty() && !seen.contains("Acme"),
            "`{step}` saw: {seen}"
        );
    }
    let stored = block_on(store.get_step(&alice(), &record.id, 2))
        .unwrap()
        .unwrap();
    assert_eq!(
        (stored.data_class.as_deref(), stored.sources.as_slice()),
        (Some("confidential"), ["crm_deal".to_owned()].as_slice()),
        "the class and sources travel on, persisted"
    );
}

#[test]
fn a_recipient_not_cleared_for_a_steps_data_gets_none_of_its_output() {
    let probe = echo();
    let skills = InMemorySkills::new()
        .with(SkillDefinition::native("echo").trust(TrustLevel::Core))
        .with(SkillDefinition::native("after").trust(TrustLevel::Core));
    let sink = Arc::new(CollectingSink::new());
    let executor = Executor::builder(
        Arc::new(skills),
        PolicyGate::allow_all(AuditTrail::in_memory()),
    )
    .native("echo", probe.clone())
    .native("after", probe.clone())
    .recipient_clearance(Clearance::up_to(DataClass::Internal))
    .retry(no_wait(1))
    .build();
    let plan = block_on(plan(vec![
        StepSpec::new("read", "echo", "read the deal"),
        StepSpec::new("next", "after", "go on").after("read"),
    ]));
    let run = Run::new(alice())
        .input(DEAL)
        .source(skills::security::Context::source("crm_deal"))
        .progress(sink.clone());
    let result = block_on(executor.execute(&plan, run)).unwrap();
    assert!(result.success, "{result:?}");
    // The core skill saw the deal (it is cleared for confidential data)...
    assert!(probe.input("read").contains("Acme"));
    // ...but nothing of it reaches a recipient cleared for internal data only.
    let shown = format!(
        "{:?} {:?} {:?}",
        result.steps.iter().map(|s| &s.output).collect::<Vec<_>>(),
        result.memory().collect::<Vec<_>>(),
        sink.events()
    );
    assert!(
        !shown.contains("Acme") && !shown.contains("1.2M"),
        "{shown}"
    );
    assert!(shown.contains("WITHHELD"), "{shown}");
}
