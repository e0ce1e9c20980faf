//! The second half of the demo: a CRM note classified and sanitized, a three-skill task
//! selected by a scripted model, planned, approved and executed (one step a referenced script
//! in the process sandbox), with every progress event printed and every execution audited.

use std::io::Write;
use std::path::Path;
use std::sync::Arc;

use serde_json::json;
use skills::catalog::Resolution;
use skills::orchestrate::execute::{
    ApprovalAnswer, ApprovalPrompt, CatalogSkills, Executor, ScriptSpec, StepApprover,
};
use skills::orchestrate::llm::ScriptedLlm;
use skills::orchestrate::orchestrator::{FixedPlanApproval, Orchestrator, TaskRun};
use skills::orchestrate::plan::{Planner, RiskLevel, SkillRiskTable};
use skills::orchestrate::progress::{CollectingSink, ProgressEvent};
use skills::orchestrate::select::{
    AgentSkills, SELECTION_PROMPT_START, SkillCandidate, SkillSelector, Task,
};
use skills::orchestrate::synthesis::{SYNTHESIS_PROMPT_START, Synthesizer};
use skills::security::approval::{ApprovalOption, Approvals, OptionChannel};
use skills::security::autonomy::Autonomy;
use skills::security::gate::PolicyGate;
use skills::security::hitl::{OptionEvent, OptionEvents, OptionRuntime};
use skills::security::permissions::{InMemoryRateLimiter, Permissions};
use skills::security::sandbox::{InputFile, ProcessSandbox};
use skills::security::time::Timer;
use skills::security::{AuditTrail, Context, Sanitizer, TrustLevel};
use skills::sqlite::SqliteStore;
use skills::store::{SystemClock, UserScope};

/// The user answering the gate's approval requests: yes, once, each shown in the output.
struct UserApproves {
    user: String,
    asked: std::sync::Mutex<Vec<String>>,
}

#[async_trait::async_trait]
impl StepApprover for UserApproves {
    async fn approve(&self, prompt: &ApprovalPrompt) -> ApprovalAnswer {
        if let Ok(mut asked) = self.asked.lock() {
            asked.push(format!(
                "the gate asks about {}: {} -> {} says yes, once",
                prompt.skill_id, prompt.reason, self.user
            ));
        }
        ApprovalAnswer::approved(self.user.clone())
    }
}

use crate::io_error;

/// The note a sales rep left in the CRM: personal data the skills must not see in clear.
pub const CRM_NOTE: &str = "Call with Dana Whitfield (dana.whitfield@northwind.example, \
+1 415 555 0134) on 2026-11-19: Northwind wants the 2.4 release notes and the PDF spec \
reviewed before renewing.";

/// The agent type of the demo and the three skills it may use.
const AGENT: &str = "ReleaseAgent";
const SKILLS: [&str; 3] = ["web-research", "pdf-tools", "changelog-writer"];

/// The scripted model: it picks the three skills, answers the two instruction steps and
/// writes the synthesis. Keyed by what each prompt contains, like a recorded session.
fn scripted_model() -> ScriptedLlm {
    let selection = json!({
        "skills_needed": true,
        "required_skills": [
            {"skill_id": "web-research", "reason": "find what changed in 2.4", "critical": true},
            {"skill_id": "pdf-tools", "reason": "read the attached PDF spec", "critical": true},
            {"skill_id": "changelog-writer", "reason": "write the customer-facing notes", "critical": true}
        ],
        "optional_skills": [],
        "execution_approach": "hybrid"
    });
    let synthesis = json!({
        "summary": "Release notes for 2.4 are drafted from the research and the spec.",
        "next_steps": ["Send the notes to the account owner"]
    });
    ScriptedLlm::new()
        .when(&[SELECTION_PROMPT_START], selection.to_string())
        .when(&[SYNTHESIS_PROMPT_START], synthesis.to_string())
        .when(
            &["# Web research"],
            "2.4 adds SSO and fixes CSV export (sources: release blog, issue tracker).",
        )
        .when(
            &["# Changelog entries"],
            "## 2.4\n### Added\n- Single sign-on.\n### Fixed\n- CSV export of large reports.",
        )
}

/// Runs the orchestration half and prints what happens.
pub async fn orchestrate(
    out: &mut impl Write,
    trail: &AuditTrail,
    store: &SqliteStore,
    resolution: Resolution,
    skills_root: &Path,
) -> std::io::Result<()> {
    let tenant = skills::store::TenantId::new("demo");
    let scope = UserScope::new("demo", "dana-rep");

    // 1. What the note holds, and what skills of two trust levels would see of it.
    let sanitizer = Sanitizer::default();
    writeln!(out, "\nA CRM note, classified and sanitized:")?;
    for trust in [TrustLevel::User, TrustLevel::Community] {
        let mut execution = sanitizer
            .begin("quickstart-note", trust, None)
            .map_err(io_error)?;
        let sanitized = execution.sanitize_text(CRM_NOTE, &Context::source("crm_note"));
        writeln!(
            out,
            "  class {} ({}); a {trust} skill sees: {}",
            sanitized.classified.classification, sanitized.classified.data_type, sanitized.text
        )?;
    }

    // 2. The orchestrator: scripted model, the resolved skills, pdf-tools as a script.
    let model = Arc::new(scripted_model());
    let pdf_dir = skills_root.join("pdf-tools");
    // The files the script may be referenced among: what the resolver lists for pdf-tools.
    let pdf_files: Vec<String> = resolution
        .skills
        .iter()
        .filter(|skill| skill.id == "pdf-tools")
        .flat_map(|skill| {
            skill
                .supporting_files
                .iter()
                .map(|f| f.relative_path.clone())
        })
        .chain(["SKILL.md".to_owned()])
        .collect();
    let provider = Arc::new(
        CatalogSkills::new(resolution)
            // Running a script is the risky step (the planner below says so too).
            .risk("pdf-tools", skills::security::autonomy::RiskLevel::High)
            .with_store(Arc::new(store.clone()), tenant.clone())
            .script(
                "pdf-tools",
                // The spec the task is about, staged read-only at inputs/ in the script's
                // scratch; the script reads the file, not the step's input.
                ScriptSpec::new(pdf_dir, "scripts/extract_text.py", pdf_files)
                    .args([format!("inputs/{SPEC_PDF_NAME}")])
                    .input_file(InputFile::new(SPEC_PDF_NAME, SPEC_PDF.to_vec()))
                    .without_stdin(),
            ),
    );
    let scratch = tempfile::tempdir()?;
    let sandbox = ProcessSandbox::new();
    // Script approvals go through the option runtime: each is a `hitl-option-request`
    // event, answered by whoever holds the answer (here a task standing in for the user's
    // browser), not by a callback.
    let (events_tx, events_rx) = futures::channel::mpsc::unbounded();
    let runtime = Arc::new(
        OptionRuntime::new(Arc::new(TokioTimer)).events(Arc::new(ForwardEvents(events_tx))),
    );
    let shown = Arc::new(std::sync::Mutex::new(Vec::new()));
    let ui = tokio::spawn(answer_as_user(runtime.clone(), events_rx, shown.clone()));
    let probe = sandbox.probe();
    // The default gate: permissions (none set: user skills may run), rate limits, and
    // graduated autonomy over the store's trust history, every decision on the audit chain.
    // A skill's first runs ask the user; the answers come from `approver`.
    let clock = Arc::new(SystemClock);
    let gate = PolicyGate::new(
        Arc::new(Permissions::new(clock.clone())),
        Arc::new(InMemoryRateLimiter::new()),
        Autonomy::new(Arc::new(store.clone()), clock.clone()),
        trail.clone(),
        clock,
    );
    let approver = Arc::new(UserApproves {
        user: scope.user.to_string(),
        asked: std::sync::Mutex::default(),
    });
    let executor = Executor::builder(provider.clone(), gate)
        .approver(approver.clone())
        .llm(model.clone())
        .sandbox(Arc::new(sandbox))
        .script_approvals(Arc::new(Approvals::new(Arc::new(OptionChannel::new(
            runtime.clone(),
        )))))
        .scratch_dir(scratch.path())
        .build();
    // Running a script is the risky step: it makes the plan need the user's approval.
    let risks = SkillRiskTable::new()
        .skill("web-research", TrustLevel::User)
        .skill_at("pdf-tools", TrustLevel::User, RiskLevel::High)
        .skill("changelog-writer", TrustLevel::User);
    let candidates: Vec<SkillCandidate> = SKILLS
        .iter()
        .map(|id| SkillCandidate::new(*id, format!("The {id} example skill.")))
        .collect();
    let orchestrator = Orchestrator::new(
        SkillSelector::new(AgentSkills::new().with(AGENT, SKILLS)).model(model.clone()),
        candidates,
        executor,
    )
    .planner(Planner::new().risks(Arc::new(risks)))
    // The user approves the plan once; the script's own approval is asked separately.
    .approver(Arc::new(FixedPlanApproval(Some(ApprovalOption::YesOnce))))
    .synthesizer(Synthesizer::new().model(model.clone()))
    .skill_provider(provider);

    let before = trail
        .head(&tenant)
        .await
        .map_err(io_error)?
        .map_or(0, |h| h.sequence);
    let progress = Arc::new(CollectingSink::new());
    let task = Task::new("Draft the 2.4 release notes for Northwind from the web and the PDF spec")
        .task_type("release-notes");
    let result = orchestrator
        .execute_task(
            &task,
            TaskRun::new(scope, AGENT)
                .session("chat-1")
                .input(CRM_NOTE)
                .source(Context::source("crm_note"))
                .progress(progress.clone()),
        )
        .await
        .map_err(io_error)?;

    writeln!(out, "\nOrchestrating \"{}\":", task.description)?;
    match probe.tier {
        Some(tier) => writeln!(out, "  process sandbox tier: {tier}")?,
        None => writeln!(
            out,
            "  process sandbox unavailable here (missing: {}); pdf-tools will fail closed",
            probe.missing.join(", ")
        )?,
    }
    writeln!(
        out,
        "  the user approves the plan (yes_once); the script is asked about again, through the option runtime"
    )?;
    ui.abort();
    for line in shown.lock().map(|s| s.clone()).unwrap_or_default() {
        writeln!(out, "  {line}")?;
    }
    for event in progress.events() {
        writeln!(out, "  {}", describe(&event))?;
    }
    for asked in approver.asked.lock().map(|a| a.clone()).unwrap_or_default() {
        writeln!(out, "  {asked}")?;
    }
    writeln!(out, "  status: {:?} ({})", result.status, result.message)?;
    if let Some(execution) = &result.execution {
        for step in &execution.steps {
            let detail = step
                .error
                .as_ref()
                .map(|e| e.message.clone())
                .or_else(|| step.output.clone())
                .unwrap_or_default();
            let first = detail.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
            writeln!(out, "  {} {}: {}", step.skill, step.state.as_str(), first)?;
            if step.skill == "pdf-tools" && step.state.succeeded() {
                // What the script extracted from the PDF, as the next step saw it.
                // (Form feeds separate pages; the sanitizer shows them escaped.)
                let text = detail.lines().skip(1);
                for line in text.filter(|l| !l.trim().is_empty() && !l.contains("\\u{000c}")) {
                    writeln!(out, "    | {line}")?;
                }
            }
        }
    }

    // 3. Every step was audited on the tenant's chain; the whole chain still verifies.
    let verification = trail.verify(&tenant).await.map_err(io_error)?;
    let after = trail
        .head(&tenant)
        .await
        .map_err(io_error)?
        .map_or(0, |h| h.sequence);
    writeln!(
        out,
        "  audit: {} records from this task, chain of {} verified: {}",
        after - before,
        verification.checked,
        if verification.is_intact() {
            "intact"
        } else {
            "BROKEN"
        }
    )?;
    Ok(())
}

/// The PDF the task is about, shipped with the example (made by `make_spec_pdf.py`).
const SPEC_PDF: &[u8] = include_bytes!("northwind-2.4-spec.pdf");
const SPEC_PDF_NAME: &str = "northwind-2.4-spec.pdf";

/// Forwards each option request to the "browser" task.
struct ForwardEvents(futures::channel::mpsc::UnboundedSender<OptionEvent>);

impl OptionEvents for ForwardEvents {
    fn emit(&self, event: &OptionEvent) {
        let _ = self.0.unbounded_send(event.clone());
    }
}

/// The host's timer, on tokio (the library picks no runtime; the demo binary does).
struct TokioTimer;

impl Timer for TokioTimer {
    fn sleep(&self, duration: std::time::Duration) -> futures::future::BoxFuture<'static, ()> {
        Box::pin(tokio::time::sleep(duration))
    }
}

/// The user's side: every request that arrives is shown and answered `yes_once` with
/// `submit`, from this task; what it showed goes to `shown`.
async fn answer_as_user(
    runtime: Arc<OptionRuntime>,
    mut events: futures::channel::mpsc::UnboundedReceiver<OptionEvent>,
    shown: Arc<std::sync::Mutex<Vec<String>>>,
) {
    while let Some(event) = futures::StreamExt::next(&mut events).await {
        let Ok(mut shown) = shown.lock() else { return };
        let answered = runtime.submit(
            &event.world,
            &event.request_id,
            "yes_once",
            Some("dana-rep"),
        );
        shown.push(format!(
            "{}: {} -> dana-rep answers yes_once{}",
            event.event_type,
            event.title,
            if answered.is_ok() { "" } else { " (too late)" }
        ));
        for line in event.message.lines().skip(1) {
            shown.push(format!("  {line}"));
        }
    }
}

/// One line per event, from its display form.
fn describe(event: &ProgressEvent) -> String {
    match event {
        ProgressEvent::PlanCreated { plan } => {
            let steps: Vec<String> = plan
                .steps
                .iter()
                .map(|s| format!("{}. {}", s.step, s.skill))
                .collect();
            format!(
                "plan_created: {} (approval needed: {})",
                steps.join(", "),
                plan.requires_approval
            )
        }
        ProgressEvent::GroupStarting { group, steps } => {
            format!("group_starting {group}: {}", steps.join(", "))
        }
        ProgressEvent::StepStarting {
            skill_id, attempt, ..
        } => {
            format!("step_starting: {skill_id} (attempt {attempt})")
        }
        ProgressEvent::StepComplete { skill_id, .. } => format!("step_complete: {skill_id}"),
        ProgressEvent::StepFailed {
            skill_id, error, ..
        } => {
            format!("step_failed: {skill_id}: {error}")
        }
        ProgressEvent::StepSkipped {
            skill_id, reason, ..
        } => {
            format!("step_skipped: {skill_id}: {reason}")
        }
        ProgressEvent::Synthesis { summary, .. } => format!("synthesis: {summary}"),
        other => other.name().to_owned(),
    }
}
