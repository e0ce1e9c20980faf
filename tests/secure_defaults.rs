//! Issue 16's defaults, wired as a framework author wires the family: an installed skill runs
//! at the trust its install decided in every path that runs it.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod install_common;

use std::path::Path;
use std::sync::Arc;

use install_common::{Rig, run, scope, skill_md, write_skill};
use skills::catalog::Resolver;
use skills::catalog::agent_tools::SkillFileReader;
use skills::install::{InstallRequest, LocalSource};
use skills::orchestrate::execute::{
    ApprovalAnswer, CatalogSkills, Executor, FixedApprover, ScriptSpec,
};
use skills::orchestrate::orchestrator::{FixedPlanApproval, Orchestrator, TaskRun};
use skills::orchestrate::select::{AgentSkills, SkillCandidate, SkillSelector, Task};
use skills::security::approval::{ApprovalOption, Approvals, NonInteractive};
use skills::security::audit::{AuditTrail, PolicyFlag};
use skills::security::autonomy::Autonomy;
use skills::security::gate::PolicyGate;
use skills::security::permissions::{
    InMemoryRateLimiter, PermissionRule, Permissions, Scope, Target,
};
use skills::security::sandbox::{SandboxConfig, ScriptedSandbox};
use skills::security::{Context, ScriptRunner, SessionScope, TrustLevel};
use skills::store::audit::{AuditQuery, AuditStore};
use skills::store::in_memory::InMemoryTrustStore;
use skills::store::{NewAssignment, SkillStore};

const NOTE: &str = "Call Dana Whitfield (dana.whitfield@northwind.example) about the renewal.";

/// Installs `notes` (a skill with a referenced script) from a local directory, assigns it
/// to every agent, and writes its files where a host would materialize them.
fn installed_notes(rig: &Rig) -> (tempfile::TempDir, std::path::PathBuf) {
    let md = skill_md(
        "notes",
        "Summarises meeting notes.",
        "1.0.0",
        "Run scripts/summarise.py on the notes.\n",
    );
    let files = [
        ("SKILL.md", md.as_str()),
        ("scripts/summarise.py", "print('summary')\n"),
    ];
    let source_root = tempfile::tempdir().unwrap();
    write_skill(source_root.path(), "notes", &files);
    let installer = rig.installer(None);
    let installed = run(installer.install(
        &scope(),
        &LocalSource::new(source_root.path()),
        &InstallRequest::new("notes"),
    ))
    .unwrap();
    assert_eq!(installed.trust_level, TrustLevel::Community);
    let tenant = &scope().tenant;
    let skill = run(rig.skills.find_skill_by_slug(tenant, "notes"))
        .unwrap()
        .unwrap();
    assert_eq!(skill.trust_level.as_deref(), Some("community"));
    run(rig
        .skills
        .create_assignment(tenant, NewAssignment::global(&skill.id)))
    .unwrap();
    let host = tempfile::tempdir().unwrap();
    write_skill(host.path(), "notes", &files);
    let dir = host.path().join("notes");
    (host, dir)
}

fn files_of(dir: &Path) -> Vec<String> {
    vec!["SKILL.md".into(), "scripts/summarise.py".into()]
        .into_iter()
        .filter(|f| dir.join(f).exists())
        .collect()
}

// Script approvals time out through tokio (issue 17 moves them onto the host's timer).
#[tokio::test]
async fn an_installed_community_skill_runs_as_community_everywhere() {
    let rig = Rig::new();
    let (_host, dir) = installed_notes(&rig);
    let tenant = scope().tenant;
    let resolution = Resolver::new()
        .resolve_for_agent(rig.skills.as_ref(), &tenant, "NotesAgent", None, &[])
        .await
        .unwrap();
    let resolved = resolution.find("notes").unwrap();
    assert_eq!(resolved.trust_level.as_deref(), Some("community"));

    // 1. Through the orchestrator, on a real gate: a rule lets the community skill run at
    // all, and its first run asks the user, who says yes.
    let sandbox = Arc::new(ScriptedSandbox::new());
    let audit = Arc::new(skills::store::in_memory::InMemoryAuditStore::new());
    let clock = skills::store::ManualClock::new(0);
    let permissions = Arc::new(Permissions::new(clock.clone()));
    permissions.set_rules(
        &tenant,
        vec![
            PermissionRule::new(
                "notes-ok",
                Scope::Organization,
                Target::Skill("notes".into()),
            )
            .execute(true),
        ],
    );
    let gate = PolicyGate::new(
        permissions,
        Arc::new(InMemoryRateLimiter::new()),
        Autonomy::new(Arc::new(InMemoryTrustStore::new()), clock.clone()),
        AuditTrail::new(audit.clone()),
        clock,
    );
    let provider = Arc::new(
        CatalogSkills::new(resolution.clone())
            .with_store(rig.skills.clone(), tenant.clone())
            .script(
                "notes",
                ScriptSpec::new(&dir, "scripts/summarise.py", files_of(&dir)),
            ),
    );
    let scratch = tempfile::tempdir().unwrap();
    let executor = Executor::builder(provider.clone(), gate)
        .sandbox(sandbox.clone())
        .script_approvals(Arc::new(Approvals::new(Arc::new(NonInteractive(
            ApprovalOption::YesOnce,
        )))))
        .approver(Arc::new(FixedApprover(ApprovalAnswer::approved("alice"))))
        .scratch_dir(scratch.path())
        .build();
    let orchestrator = Orchestrator::new(
        SkillSelector::new(AgentSkills::new().with("NotesAgent", ["notes"])),
        vec![SkillCandidate::new("notes", "Summarises meeting notes.").triggers(["notes"])],
        executor,
    )
    .approver(Arc::new(FixedPlanApproval(Some(ApprovalOption::YesOnce))))
    .skill_provider(provider);
    let result = orchestrator
        .execute_task(
            &Task::new("Summarise the meeting notes"),
            TaskRun::new(scope(), "NotesAgent")
                .input(NOTE)
                .source(Context::source("crm_note")),
        )
        .await
        .unwrap();
    assert!(result.success, "{result:?}");
    let requests = sandbox.requests();
    assert_eq!(requests.len(), 1);
    assert_eq!(
        requests[0].config,
        SandboxConfig::for_trust(TrustLevel::Community),
        "the community sandbox"
    );
    let records: Vec<_> = audit
        .query(&tenant, &AuditQuery::new())
        .await
        .unwrap()
        .into_iter()
        .map(|e| e.record)
        .filter(|r| PolicyFlag::find(r).is_none())
        .collect();
    let execution = records.last().unwrap();
    assert_eq!(execution.skill_trust_level, "community");
    assert_eq!(
        execution.data_classes_granted,
        Vec::<String>::new(),
        "community clearance: the confidential note is not granted ({execution:?})"
    );
    assert!(
        execution
            .data_classes_requested
            .contains(&"confidential".to_owned())
    );

    // 2. Through load_skill, by a runner whose host level is user: the skill's own,
    // lower level wins, with its sandbox preset.
    let direct = ScriptedSandbox::new();
    let approvals = Approvals::new(Arc::new(NonInteractive(ApprovalOption::YesOnce)));
    let runner = ScriptRunner::new(
        &direct,
        &approvals,
        SessionScope::new("acme", "chat-1"),
        TrustLevel::User,
        scratch.path(),
    );
    assert_eq!(
        runner.trust_of(resolution.find("notes").unwrap()),
        TrustLevel::Community
    );
    let reader = SkillFileReader::with_store(rig.skills.as_ref(), &tenant);
    let loaded = runner
        .load_skill(&resolution, &reader, "notes", Some(&dir))
        .await;
    assert_eq!(loaded.scripts.len(), 1, "{}", loaded.rendered);
    let requests = direct.requests();
    assert_eq!(requests.len(), 1);
    assert_eq!(
        requests[0].config,
        SandboxConfig::for_trust(TrustLevel::Community)
    );
}

#[test]
fn a_skill_nobody_gave_a_trust_level_runs_as_community() {
    // A repo skill (the project's files) carries none.
    let repo = skills::core::Discovery::new(Default::default())
        .root(concat!(env!("CARGO_MANIFEST_DIR"), "/examples/skills"))
        .run()
        .into_skills();
    let resolution = Resolver::new().resolve_repo(&repo);
    let first = resolution.skills[0].clone();
    assert_eq!(first.trust_level, None);
    assert_eq!(
        skills::orchestrate::execute::default_trust(&first),
        TrustLevel::Community
    );
    // The host may say how far it trusts its own project, by name.
    let provider = CatalogSkills::new(resolution.clone()).trust_repo_skills(TrustLevel::User);
    let skill = run(skills::orchestrate::execute::SkillProvider::skill(
        &provider, &first.id,
    ))
    .unwrap()
    .unwrap();
    assert_eq!(skill.trust, TrustLevel::User);
    let defaulted = run(skills::orchestrate::execute::SkillProvider::skill(
        &CatalogSkills::new(resolution),
        &first.id,
    ))
    .unwrap()
    .unwrap();
    assert_eq!(defaulted.trust, TrustLevel::Community);
    assert_eq!(
        defaulted.risk,
        skills::security::autonomy::default_risk(TrustLevel::Community)
    );
}

/// An audit store that, when an install appends its record, notes whether the skill is
/// already enabled (what a crash at that instant would leave), then fails.
struct CrashAtAudit {
    skills: Arc<skills::store::in_memory::InMemorySkillStore>,
    enabled_at_audit: std::sync::Mutex<Option<bool>>,
}

#[async_trait::async_trait]
impl AuditStore for CrashAtAudit {
    async fn append(
        &self,
        t: &skills::store::TenantId,
        _chain: &str,
        _r: skills::store::audit::AuditRecord,
        _head: Option<&str>,
    ) -> skills::store::Result<skills::store::audit::AuditEntry> {
        let skill = self.skills.find_skill_by_slug(t, "notes").await?;
        *self.enabled_at_audit.lock().unwrap() = skill.map(|s| s.enabled);
        Err(skills::store::Error::backend("the host crashed"))
    }
    async fn head(
        &self,
        _t: &skills::store::TenantId,
        _chain: &str,
    ) -> skills::store::Result<Option<skills::store::audit::ChainHead>> {
        Ok(None)
    }
    async fn read_range(
        &self,
        _t: &skills::store::TenantId,
        _chain: &str,
        _from: u64,
        _limit: usize,
    ) -> skills::store::Result<Vec<skills::store::audit::AuditEntry>> {
        Ok(Vec::new())
    }
    async fn get_entry(
        &self,
        _t: &skills::store::TenantId,
        _id: &str,
    ) -> skills::store::Result<Option<skills::store::audit::AuditEntry>> {
        Ok(None)
    }
    async fn query(
        &self,
        _t: &skills::store::TenantId,
        _q: &AuditQuery,
    ) -> skills::store::Result<Vec<skills::store::audit::AuditEntry>> {
        Ok(Vec::new())
    }
    async fn chains(&self, _t: &skills::store::TenantId) -> skills::store::Result<Vec<String>> {
        Ok(Vec::new())
    }
}

#[test]
fn an_install_is_disabled_until_its_audit_record_exists() {
    let skills_store = Arc::new(skills::store::in_memory::InMemorySkillStore::new());
    let audit = Arc::new(CrashAtAudit {
        skills: skills_store.clone(),
        enabled_at_audit: std::sync::Mutex::default(),
    });
    let installer = skills::install::Installer::builder(
        skills_store.clone(),
        Arc::new(skills::store::in_memory::InMemoryPackageStore::new()),
        audit.clone(),
    )
    .build();
    let md = skill_md(
        "notes",
        "Summarises meeting notes.",
        "1.0.0",
        "Summarise.\n",
    );
    let source_root = tempfile::tempdir().unwrap();
    write_skill(source_root.path(), "notes", &[("SKILL.md", md.as_str())]);
    let result = run(installer.install(
        &scope(),
        &LocalSource::new(source_root.path()),
        &InstallRequest::new("notes"),
    ));
    assert!(result.is_err(), "the audit append failed");
    assert_eq!(
        *audit.enabled_at_audit.lock().unwrap(),
        Some(false),
        "a crash at the audit append would have left an enabled, unaudited skill"
    );
    let left = run(skills_store.find_skill_by_slug(&scope().tenant, "notes")).unwrap();
    assert!(left.is_none_or(|s| !s.enabled));
}
