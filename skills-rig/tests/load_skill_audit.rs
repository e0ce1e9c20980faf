//! `load_skill` through the gate (issue 34, finding 7): the content decision
//! (`PolicyGate::authorize` with `SkillAction::Activate`, the skill's state read at the call) is
//! on the audit chain before anything runs; the run's true outcome is recorded after it
//! (`PolicyGate::complete`, which also feeds the autonomy trust history); a refusal runs
//! nothing; and a record that cannot be written refuses the call.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use futures::executor::block_on;
use rig_core::tool::DynamicTool;
use serde_json::json;
use skills_catalog::{Resolution, Resolver};
use skills_core::{Discovery, LoadOptions, Skill};
use skills_orchestrate::execute::{ApprovalAnswer, FixedApprover};
use skills_rig::{LoadSkillParts, SkillTools};
use skills_security::approval::{ApprovalOption, NonInteractive};
use skills_security::audit::AuditTrail;
use skills_security::permissions::{PermissionRule, Scope, Target};
use skills_security::sandbox::{Outcome, Sandbox, SandboxRequest, ScriptedSandbox, Status};
use skills_security::{Approvals, PolicyGate, Principal, SessionScope, TrustLevel};
use skills_store_traits::audit::{AuditEntry, AuditQuery, AuditRecord, AuditStore, ChainHead};
use skills_store_traits::in_memory::{InMemoryAuditStore, InMemorySkillStore};
use skills_store_traits::{
    Clock, NewAssignment, NewSkill, SkillStore, SkillUpdate, SystemClock, TenantId, UserScope,
};

const SKILL_MD: &str = "---\nname: probe\ndescription: Probes.\n---\nRun scripts/run.sh, then read references/notes.md.\n";

/// A repo skill `probe` whose instructions reference one script and one reference file.
fn probe_skill() -> tempfile::TempDir {
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join("probe");
    std::fs::create_dir_all(dir.join("scripts")).unwrap();
    std::fs::create_dir_all(dir.join("references")).unwrap();
    std::fs::write(dir.join("SKILL.md"), SKILL_MD).unwrap();
    std::fs::write(dir.join("scripts/run.sh"), "echo probed\n").unwrap();
    std::fs::write(dir.join("references/notes.md"), "# Notes\n").unwrap();
    root
}

fn resolve(root: &Path) -> Arc<Resolution> {
    let report = Discovery::new(LoadOptions::default()).root(root).run();
    let skills: Vec<_> = report.skills().cloned().collect();
    Arc::new(Resolver::new().resolve_repo(&skills))
}

/// Approvals that say yes to every script, so a referenced script reaches the sandbox.
fn yes() -> Arc<Approvals> {
    Arc::new(Approvals::new(Arc::new(NonInteractive(
        ApprovalOption::YesOnce,
    ))))
}

fn tools(
    resolution: Arc<Resolution>,
    gate: Arc<PolicyGate>,
    sandbox: Arc<dyn Sandbox>,
) -> SkillTools {
    SkillTools::new(resolution, gate, Principal::new("acme", "alice"), "/skills").with_load_skill(
        LoadSkillParts::new(
            sandbox,
            yes(),
            SessionScope::new("world", "chat"),
            TrustLevel::User,
            std::env::temp_dir(),
        ),
    )
}

fn load(tools: &SkillTools) -> DynamicTool {
    tools.load_skill().unwrap()
}

fn records(trail: &AuditTrail) -> Vec<AuditRecord> {
    block_on(
        trail
            .store()
            .query(&TenantId::new("acme"), &AuditQuery::new()),
    )
    .unwrap()
    .into_iter()
    .map(|e| e.record)
    .collect()
}

/// The access decision `load_skill` must ask for: a record flagged `action:activate`.
fn is_load_decision(record: &AuditRecord) -> bool {
    record.security_flags.iter().any(|f| f == "action:activate")
}

/// The run's own record: the skill's, and not a policy decision.
fn execution_records(trail: &AuditTrail, skill: &str) -> Vec<AuditRecord> {
    records(trail)
        .into_iter()
        .filter(|r| r.skill_id == skill)
        .filter(|r| {
            !r.security_flags
                .iter()
                .any(|f| f.contains("policy_decision"))
        })
        .collect()
}

/// A sandbox that, when asked to run, looks at the audit trail first: what the decision
/// record said at that moment is kept for the test.
struct Watching {
    trail: AuditTrail,
    inner: ScriptedSandbox,
    saw: Mutex<Vec<Vec<AuditRecord>>>,
    /// Set when the sandbox runs: the audit store breaks from then on.
    breaks: Option<Arc<AtomicBool>>,
}

impl Watching {
    fn new(trail: AuditTrail) -> Watching {
        let inner = ScriptedSandbox::new();
        inner.push(Status::Success, "probed\n", "");
        Watching {
            trail,
            inner,
            saw: Mutex::new(Vec::new()),
            breaks: None,
        }
    }
}

#[async_trait]
impl Sandbox for Watching {
    async fn run(&self, request: SandboxRequest) -> Outcome {
        let seen = self
            .trail
            .store()
            .query(&TenantId::new("acme"), &AuditQuery::new())
            .await
            .unwrap()
            .into_iter()
            .map(|e| e.record)
            .collect();
        self.saw.lock().unwrap().push(seen);
        if let Some(breaks) = &self.breaks {
            breaks.store(true, Ordering::SeqCst);
        }
        self.inner.run(request).await
    }
}

/// An audit store that refuses every append while `broken` is set.
struct Breakable {
    inner: InMemoryAuditStore,
    broken: Arc<AtomicBool>,
}

#[async_trait]
impl AuditStore for Breakable {
    async fn append(
        &self,
        tenant: &TenantId,
        chain: &str,
        record: AuditRecord,
        expected_head: Option<&str>,
    ) -> skills_store_traits::Result<AuditEntry> {
        if self.broken.load(Ordering::SeqCst) {
            return Err(skills_store_traits::Error::backend(
                "the audit disk is full",
            ));
        }
        self.inner
            .append(tenant, chain, record, expected_head)
            .await
    }

    async fn head(
        &self,
        tenant: &TenantId,
        chain: &str,
    ) -> skills_store_traits::Result<Option<ChainHead>> {
        self.inner.head(tenant, chain).await
    }

    async fn read_range(
        &self,
        tenant: &TenantId,
        chain: &str,
        from_sequence: u64,
        limit: usize,
    ) -> skills_store_traits::Result<Vec<AuditEntry>> {
        self.inner
            .read_range(tenant, chain, from_sequence, limit)
            .await
    }

    async fn get_entry(
        &self,
        tenant: &TenantId,
        record_id: &str,
    ) -> skills_store_traits::Result<Option<AuditEntry>> {
        self.inner.get_entry(tenant, record_id).await
    }

    async fn query(
        &self,
        tenant: &TenantId,
        query: &AuditQuery,
    ) -> skills_store_traits::Result<Vec<AuditEntry>> {
        self.inner.query(tenant, query).await
    }

    async fn chains(&self, tenant: &TenantId) -> skills_store_traits::Result<Vec<String>> {
        self.inner.chains(tenant).await
    }
}

/// The secure default gate with one rule: `probe` may execute, or (`allowed: false`) may not.
fn checked_gate(trail: AuditTrail, allowed: bool) -> PolicyGate {
    let clock: Arc<dyn Clock> = Arc::new(SystemClock);
    let permissions = Arc::new(skills_security::Permissions::new(clock.clone()));
    permissions.set_rules(
        &TenantId::new("acme"),
        vec![
            // One load a day: a load must count once, not once for the content decision
            // and again for the step.
            PermissionRule::new(
                "probe-rule",
                Scope::Organization,
                Target::Skill("probe".into()),
            )
            .execute(allowed)
            .max_per_day(1),
        ],
    );
    PolicyGate::new(
        permissions,
        Arc::new(skills_security::permissions::rate::InMemoryRateLimiter::new()),
        skills_security::Autonomy::new(
            Arc::new(skills_store_traits::in_memory::InMemoryTrustStore::new()),
            clock.clone(),
        ),
        trail,
        clock,
    )
}

#[test]
fn the_load_decision_is_on_the_chain_before_the_script_runs() {
    let root = probe_skill();
    let trail = AuditTrail::in_memory();
    let gate = Arc::new(PolicyGate::allow_all(trail.clone()));
    let sandbox = Arc::new(Watching::new(trail.clone()));
    let tools = tools(resolve(root.path()), gate, sandbox.clone());

    let output = block_on(load(&tools).execute(json!({"skill_name": "probe"}))).unwrap();
    assert!(output.render().contains("probed"), "{}", output.render());

    let saw = sandbox.saw.lock().unwrap().clone();
    assert_eq!(saw.len(), 1, "the referenced script ran once");
    let decision = saw[0]
        .iter()
        .find(|r| is_load_decision(r))
        .expect("the load decision is on the chain when the script starts");
    assert!(decision.success, "it allowed the load");
    assert_eq!(decision.skill_id, "probe");
    // The version decided for: the digest of the skill as it is on disk at the call.
    let on_disk = Skill::load(root.path().join("probe"), &LoadOptions::default()).unwrap();
    assert_eq!(
        decision.skill_version.as_deref(),
        Some(format!("sha256:{}", on_disk.digest()).as_str())
    );
    assert!(
        saw[0].iter().all(|r| r.success),
        "nothing but decisions precede the run"
    );
}

#[test]
fn a_failed_script_is_recorded_as_a_failure_with_its_error() {
    for (status, code) in [
        (Status::Exit { code: 3 }, "script_failed"),
        (
            Status::SandboxUnavailable {
                reason: "no Landlock".into(),
            },
            "sandbox_unavailable",
        ),
    ] {
        let root = probe_skill();
        let trail = AuditTrail::in_memory();
        let gate = Arc::new(PolicyGate::allow_all(trail.clone()));
        let sandbox = Arc::new(ScriptedSandbox::new());
        sandbox.push(status.clone(), "", "secret stderr");
        let tools = tools(resolve(root.path()), gate, sandbox.clone());
        let output = block_on(load(&tools).execute(json!({"skill_name": "probe"}))).unwrap();
        assert_eq!(sandbox.requests().len(), 1, "{status:?}");
        // The model still sees what happened.
        assert!(
            output.render().contains("scripts/run.sh"),
            "{}",
            output.render()
        );

        let runs = execution_records(&trail, "probe");
        assert_eq!(runs.len(), 1, "{status:?}: one execution record: {runs:?}");
        let run = &runs[0];
        assert!(!run.success, "{status:?}: a failed run is not a success");
        let error = run.error.as_deref().unwrap_or_default();
        assert!(error.starts_with(code), "{status:?}: {error}");
        assert!(error.contains("scripts/run.sh"), "{status:?}: {error}");
        assert!(
            !error.contains("secret stderr"),
            "the script's own output is not copied into the chain: {error}"
        );
    }

    // The successful run, for contrast: one record, a success, with the output's hash.
    let root = probe_skill();
    let trail = AuditTrail::in_memory();
    let tools = tools(
        resolve(root.path()),
        Arc::new(PolicyGate::allow_all(trail.clone())),
        Arc::new(ScriptedSandbox::new()),
    );
    let output = block_on(load(&tools).execute(json!({"skill_name": "probe"}))).unwrap();
    let runs = execution_records(&trail, "probe");
    assert_eq!(runs.len(), 1, "{runs:?}");
    assert!(runs[0].success && runs[0].error.is_none(), "{runs:?}");
    assert_eq!(
        runs[0].output_hash.as_deref(),
        Some(skills_security::audit::sha256_hex(output.render().as_bytes()).as_str()),
        "the hash of exactly what was handed out"
    );
}

#[test]
fn the_outcome_reaches_the_autonomy_trust_history() {
    let scope = UserScope::new("acme", "alice");
    for (status, successes, failures) in [(Status::Success, 1, 0), (Status::Exit { code: 1 }, 0, 1)]
    {
        let root = probe_skill();
        let gate = Arc::new(PolicyGate::allow_all(AuditTrail::in_memory()));
        let sandbox = Arc::new(ScriptedSandbox::new());
        sandbox.push(status.clone(), "out", "");
        let tools = tools(resolve(root.path()), gate.clone(), sandbox);
        block_on(load(&tools).execute(json!({"skill_name": "probe"}))).unwrap();
        let history = block_on(gate.autonomy().store().get(&scope, "probe"))
            .unwrap()
            .expect("gate.complete recorded the outcome");
        assert_eq!(
            (history.successful_executions, history.failed_executions),
            (successes, failures),
            "{status:?}"
        );
    }
}

#[test]
fn a_gate_denial_runs_nothing_and_is_recorded() {
    let root = probe_skill();
    let trail = AuditTrail::in_memory();
    let gate = Arc::new(checked_gate(trail.clone(), false));
    let sandbox = Arc::new(ScriptedSandbox::new());
    let tools = tools(resolve(root.path()), gate, sandbox.clone());
    let error = block_on(load(&tools).execute(json!({"skill_name": "probe"}))).unwrap_err();
    assert!(error.message().contains("denied"), "{}", error.message());
    assert!(sandbox.requests().is_empty(), "a denied load runs nothing");
    let all = records(&trail);
    let denial = all
        .iter()
        .find(|r| is_load_decision(r))
        .expect("the load's denial is recorded");
    assert!(!denial.success);
    assert!(
        denial
            .error
            .as_deref()
            .unwrap_or_default()
            .starts_with("not_permitted"),
        "{denial:?}"
    );
    assert!(execution_records(&trail, "probe").is_empty(), "nothing ran");
}

#[test]
fn a_skill_disabled_or_removed_since_the_resolution_is_refused_and_recorded() {
    // A stored skill, resolved while enabled, then disabled in the store.
    let store = Arc::new(InMemorySkillStore::new());
    let tenant = TenantId::new("acme");
    let (resolution, id) = block_on(async {
        let skill = NewSkill::new("Triage", "triage", SKILL_MD.replace("probe", "triage"))
            .with_file("references/notes.md", "# Notes from the store\n");
        let skill = store.create_skill(&tenant, skill).await.unwrap();
        store
            .create_assignment(&tenant, NewAssignment::global(&skill.id))
            .await
            .unwrap();
        let resolution = Resolver::new()
            .resolve_for_agent(store.as_ref(), &tenant, "agent", None, &[])
            .await
            .unwrap();
        (resolution, skill.id)
    });
    let trail = AuditTrail::in_memory();
    let sandbox = Arc::new(ScriptedSandbox::new());
    let tools = tools(
        Arc::new(resolution),
        Arc::new(PolicyGate::allow_all(trail.clone())),
        sandbox.clone(),
    )
    .with_store(store.clone(), tenant.clone());
    let update = SkillUpdate {
        enabled: Some(false),
        ..SkillUpdate::default()
    };
    block_on(store.update_skill(&tenant, &id, update)).unwrap();
    let refused = block_on(load(&tools).execute(json!({"skill_name": "triage"})));
    let error = refused.expect_err("a disabled skill's instructions are not handed out");
    assert!(error.message().contains("disabled"), "{}", error.message());
    let denial = records(&trail)
        .into_iter()
        .find(is_load_decision)
        .expect("the refusal is recorded");
    assert!(!denial.success);
    assert!(
        denial
            .error
            .as_deref()
            .unwrap_or_default()
            .starts_with("disabled"),
        "{denial:?}"
    );

    // A repo skill whose directory is gone: not served any more, nothing runs.
    let root = probe_skill();
    let trail = AuditTrail::in_memory();
    let tools = tools_for_repo(root.path(), &trail, sandbox.clone());
    std::fs::remove_dir_all(root.path().join("probe")).unwrap();
    let refused = block_on(load(&tools).execute(json!({"skill_name": "probe"})));
    assert!(refused.is_err(), "a removed skill is refused");
    assert!(sandbox.requests().is_empty());
    let denial = records(&trail)
        .into_iter()
        .find(is_load_decision)
        .expect("the refusal is recorded");
    assert!(!denial.success, "{denial:?}");
}

fn tools_for_repo(root: &Path, trail: &AuditTrail, sandbox: Arc<dyn Sandbox>) -> SkillTools {
    tools(
        resolve(root),
        Arc::new(PolicyGate::allow_all(trail.clone())),
        sandbox,
    )
}

#[test]
fn an_audit_store_that_fails_refuses_the_call() {
    // Failing from the start: the decision cannot be recorded, so nothing runs.
    let root = probe_skill();
    let broken = Arc::new(AtomicBool::new(true));
    let trail = AuditTrail::new(Arc::new(Breakable {
        inner: InMemoryAuditStore::new(),
        broken: broken.clone(),
    }));
    let sandbox = Arc::new(ScriptedSandbox::new());
    let tools = tools_for_repo(root.path(), &trail, sandbox.clone());
    let refused = block_on(load(&tools).execute(json!({"skill_name": "probe"})));
    assert!(refused.is_err(), "no decision record, no load");
    assert!(sandbox.requests().is_empty(), "nothing ran");

    // Failing once the script ran: the outcome cannot be recorded, so nothing is handed out.
    let broken = Arc::new(AtomicBool::new(false));
    let trail = AuditTrail::new(Arc::new(Breakable {
        inner: InMemoryAuditStore::new(),
        broken: broken.clone(),
    }));
    let mut watching = Watching::new(trail.clone());
    watching.breaks = Some(broken.clone());
    let sandbox = Arc::new(watching);
    let tools = tools_for_repo(root.path(), &trail, sandbox.clone());
    let refused = block_on(load(&tools).execute(json!({"skill_name": "probe"})));
    assert_eq!(sandbox.saw.lock().unwrap().len(), 1, "the script ran");
    let error = refused.expect_err("an unrecorded outcome hands nothing out");
    assert!(
        !error.message().contains("probed"),
        "the script's output is not handed out: {}",
        error.message()
    );
}

#[test]
fn a_checked_gate_allows_a_permitted_load_and_records_both_decisions() {
    let root = probe_skill();
    let trail = AuditTrail::in_memory();
    let gate = Arc::new(checked_gate(trail.clone(), true));
    let sandbox = Arc::new(ScriptedSandbox::new());
    let tools = tools(resolve(root.path()), gate, sandbox.clone())
        .with_approver(Arc::new(FixedApprover(ApprovalAnswer::approved("bob"))));
    let output = block_on(load(&tools).execute(json!({"skill_name": "probe"}))).unwrap();
    assert!(
        output.render().contains("<skill_context"),
        "{}",
        output.render()
    );
    assert_eq!(sandbox.requests().len(), 1);
    let all = records(&trail);
    assert!(all.iter().any(is_load_decision), "the content decision");
    assert_eq!(execution_records(&trail, "probe").len(), 1, "the outcome");
}

#[test]
fn an_unreadable_file_or_a_missing_script_is_a_failure_and_a_declined_script_is_a_denial() {
    // A referenced file that is not text; a referenced script the skill does not have; a
    // script removed after the catalog was resolved (its file no longer resolves).
    let garble =
        |dir: &Path| std::fs::write(dir.join("references/notes.md"), [0xff, 0xfe, 0x00]).unwrap();
    let unscript = |dir: &Path| std::fs::remove_file(dir.join("scripts/run.sh")).unwrap();
    for (setup, after_resolving, code) in [
        (garble as fn(&Path), false, "unreadable_file"),
        (unscript as fn(&Path), false, "missing_script"),
        (unscript as fn(&Path), true, "script_refused"),
    ] {
        let root = probe_skill();
        let dir = root.path().join("probe");
        if !after_resolving {
            setup(&dir);
        }
        let resolution = resolve(root.path());
        if after_resolving {
            setup(&dir);
        }
        let trail = AuditTrail::in_memory();
        let gate = Arc::new(PolicyGate::allow_all(trail.clone()));
        let tools = tools(resolution, gate.clone(), Arc::new(ScriptedSandbox::new()));
        block_on(load(&tools).execute(json!({"skill_name": "probe"}))).unwrap();
        let runs = execution_records(&trail, "probe");
        assert_eq!(runs.len(), 1, "{code}: {runs:?}");
        assert!(!runs[0].success, "{code}");
        let error = runs[0].error.as_deref().unwrap_or_default();
        assert!(error.starts_with(code), "{code}: {error}");
        let history = block_on(
            gate.autonomy()
                .store()
                .get(&UserScope::new("acme", "alice"), "probe"),
        )
        .unwrap()
        .unwrap();
        assert_eq!(history.failed_executions, 1, "{code}");
    }

    // A person says no: the scripts never run, the record says `denied`, and the skill's
    // trust history is not charged with a failure it did not cause.
    let root = probe_skill();
    let trail = AuditTrail::in_memory();
    let gate = Arc::new(PolicyGate::allow_all(trail.clone()));
    let sandbox = Arc::new(ScriptedSandbox::new());
    let tools = SkillTools::new(
        resolve(root.path()),
        gate.clone(),
        Principal::new("acme", "alice"),
        "/skills",
    )
    .with_load_skill(LoadSkillParts::new(
        sandbox.clone(),
        Arc::new(Approvals::new(Arc::new(NonInteractive(ApprovalOption::No)))),
        SessionScope::new("world", "chat"),
        TrustLevel::User,
        std::env::temp_dir(),
    ));
    let output = block_on(load(&tools).execute(json!({"skill_name": "probe"}))).unwrap();
    assert!(
        output.render().contains("not approved"),
        "{}",
        output.render()
    );
    assert!(sandbox.requests().is_empty());
    let runs = execution_records(&trail, "probe");
    assert_eq!(runs.len(), 1, "{runs:?}");
    assert!(!runs[0].success);
    assert!(
        runs[0]
            .error
            .as_deref()
            .unwrap_or_default()
            .starts_with("denied"),
        "{runs:?}"
    );
    let history = block_on(
        gate.autonomy()
            .store()
            .get(&UserScope::new("acme", "alice"), "probe"),
    )
    .unwrap();
    assert!(history.is_none(), "{history:?}");
}
