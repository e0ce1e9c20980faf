//! The governed door, attacked from a client: every request is decided by the policy gate
//! against the skill's current state, recorded (denials too), and only catalogued files
//! are ever served; approvals stay with their connection.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use async_trait::async_trait;
use rmcp::model::{
    CallToolRequestParams, CallToolResult, ContentBlock, GetSkillRequestParams,
    ReadResourceRequestParams,
};
use skills_mcp::content::SnapshotLimits;
use skills_mcp::protocol::{SkillResources, skill_uri};
use skills_mcp::{LoadSkillParts, McpSkillSource, SkillsMcpServer};
use skills_security::audit::AuditTrail;
use skills_security::autonomy::Autonomy;
use skills_security::gate::PolicyGate;
use skills_security::permissions::{
    InMemoryRateLimiter, PermissionRule, Permissions, Principal, Scope, Target,
};
use skills_security::sandbox::ScriptedSandbox;
use skills_security::{
    ApprovalChannel, ApprovalOption, ApprovalRequest, Approvals, SessionScope, TrustLevel,
};
use skills_store_traits::audit::{AuditRecord, AuditStore};
use skills_store_traits::in_memory::{InMemoryAuditStore, InMemorySkillStore, InMemoryTrustStore};
use skills_store_traits::{
    ManualClock, NewAssignment, NewSkill, SkillStore, SkillUpdate, TenantId,
};

async fn connect(server: SkillsMcpServer) -> McpSkillSource {
    let (ours, theirs) = tokio::io::duplex(1 << 20);
    tokio::spawn(server.serve_transport(theirs));
    McpSkillSource::connect_stream("test-server", ours)
        .await
        .unwrap()
}

async fn call(source: &McpSkillSource, tool: &str, args: serde_json::Value) -> CallToolResult {
    let mut call = CallToolRequestParams::new(tool.to_owned());
    call.arguments = args.as_object().cloned();
    source.peer().call_tool(call).await.unwrap()
}

fn text_of(result: &CallToolResult) -> String {
    result
        .content
        .iter()
        .filter_map(|c| match c {
            ContentBlock::Text(t) => Some(t.text.clone()),
            _ => None,
        })
        .collect()
}

async fn read(source: &McpSkillSource, uri: &str) -> Result<String, String> {
    match source
        .peer()
        .read_resource(ReadResourceRequestParams::new(uri))
        .await
    {
        Ok(read) => match &read.contents[0] {
            rmcp::model::ResourceContents::TextResourceContents { text, .. } => Ok(text.clone()),
            other => Err(format!("{other:?}")),
        },
        Err(e) => Err(e.to_string()),
    }
}

/// Every record of the tenant's chains, in order.
async fn records(store: &InMemoryAuditStore, tenant: &TenantId) -> Vec<AuditRecord> {
    let mut out = Vec::new();
    for chain in store.chains(tenant).await.unwrap() {
        for entry in store.read_range(tenant, &chain, 1, 10_000).await.unwrap() {
            out.push(entry.record);
        }
    }
    out
}

/// The decision code a record's policy flag holds (`allowed`, `disabled`, ...).
fn code(record: &AuditRecord) -> String {
    record
        .security_flags
        .iter()
        .find_map(|flag| {
            let value: serde_json::Value = serde_json::from_str(flag).ok()?;
            value["code"].as_str().map(str::to_owned)
        })
        .unwrap_or_default()
}

fn recording_gate() -> (PolicyGate, Arc<InMemoryAuditStore>) {
    let store = Arc::new(InMemoryAuditStore::new());
    (PolicyGate::allow_all(AuditTrail::new(store.clone())), store)
}

fn acme() -> TenantId {
    TenantId::new("acme")
}

#[tokio::test]
async fn hidden_and_vendored_files_are_never_listed_or_read() {
    let dir = common::skills_tree();
    common::write(dir.path(), "greeter/.env", "API_TOKEN=s3cret\n");
    common::write(
        dir.path(),
        "greeter/.git/config",
        "[remote \"origin\"]\n\turl = https://x:ghp_token@example.invalid/r.git\n",
    );
    common::write(
        dir.path(),
        "greeter/node_modules/left-pad/index.js",
        "module.exports = 1;\n",
    );
    common::write(dir.path(), "greeter/.cache/notes.md", "cached\n");
    let (gate, audit) = recording_gate();
    let server = SkillsMcpServer::for_directory(dir.path())
        .gate(gate, common::principal())
        .build()
        .await
        .unwrap();
    let source = connect(server).await;
    let listed = source.list().await.unwrap();
    let greeter = listed.iter().find(|s| s.name() == "greeter").unwrap();
    let SkillResources::Files(files) = &greeter.resources else {
        panic!("a static manifest")
    };
    let uris: Vec<&str> = files.iter().map(|f| f.uri.as_str()).collect();
    assert_eq!(
        uris,
        [
            "skill://greeter/SKILL.md",
            "skill://greeter/references/guide.md"
        ]
    );
    for path in [
        ".env",
        ".git/config",
        "node_modules/left-pad/index.js",
        ".cache/notes.md",
    ] {
        let served = read(&source, &skill_uri("greeter", path)).await;
        assert!(served.is_err(), "resources/read served {path}");
        let result = call(
            &source,
            "read_skill_file",
            serde_json::json!({"skill_name": "greeter", "path": path}),
        )
        .await;
        assert_eq!(result.is_error, Some(true), "read_skill_file served {path}");
        assert!(!text_of(&result).contains("s3cret") && !text_of(&result).contains("ghp_"));
    }
    let listing = text_of(
        &call(
            &source,
            "use_skill",
            serde_json::json!({"skill_name": "greeter"}),
        )
        .await,
    );
    assert!(
        !listing.contains(".env") && !listing.contains(".git"),
        "{listing}"
    );
    // Eight refusals and the one activation, each on the chain.
    let recorded = records(&audit, &common::principal().tenant).await;
    let refused = recorded.iter().filter(|r| !r.success).count();
    assert_eq!(refused, 8, "{recorded:?}");
    assert!(recorded.iter().all(|r| !r.success || code(r) == "allowed"));
}

#[tokio::test]
async fn a_skill_the_snapshot_left_out_is_not_answered_by_the_tools() {
    let dir = common::skills_tree();
    // pdf-tools has two files; a one-file limit leaves it out of the snapshot.
    let mut limits = SnapshotLimits::default();
    limits.max_files = 1;
    let (gate, audit) = recording_gate();
    let server = SkillsMcpServer::for_directory(dir.path())
        .limits(limits)
        .gate(gate, common::principal())
        .build()
        .await
        .unwrap();
    assert!(!server.skill_names().contains(&"pdf-tools".to_owned()));
    let source = connect(server).await;
    for (tool, args) in [
        ("use_skill", serde_json::json!({"skill_name": "pdf-tools"})),
        (
            "read_skill_file",
            serde_json::json!({"skill_name": "pdf-tools", "path": "scripts/extract.sh"}),
        ),
    ] {
        let result = call(&source, tool, args).await;
        assert_eq!(
            result.is_error,
            Some(true),
            "{tool} answered for a skill not served"
        );
        assert!(
            !text_of(&result).contains("echo extracted"),
            "{}",
            text_of(&result)
        );
    }
    let recorded = records(&audit, &common::principal().tenant).await;
    assert_eq!(recorded.len(), 2);
    assert!(
        recorded
            .iter()
            .all(|r| !r.success && code(r) == "unknown_skill")
    );
}

/// A store with `greeter` assigned to agent-7; the skill's id.
async fn assigned_store() -> (Arc<InMemorySkillStore>, String) {
    let store = Arc::new(InMemorySkillStore::new());
    let skill = store
        .create_skill(
            &acme(),
            NewSkill::new(
                "Greeter",
                "greeter",
                "---\nname: greeter\ndescription: Greets people.\n---\nSay hello.\n",
            )
            .with_file("notes.md", "notes\n"),
        )
        .await
        .unwrap();
    store
        .create_assignment(&acme(), NewAssignment::agent(&skill.id, "agent-7"))
        .await
        .unwrap();
    (store, skill.id)
}

#[tokio::test]
async fn a_disabled_removed_or_retrusted_skill_is_refused_on_the_very_next_request() {
    let (store, id) = assigned_store().await;
    let (gate, audit) = recording_gate();
    let server = SkillsMcpServer::for_agent(store.clone(), acme(), "agent-7")
        .gate(gate, Principal::new(acme(), "alice").agent("agent-7"))
        .build()
        .await
        .unwrap();
    let source = connect(server).await;
    let uri = "skill://greeter/notes.md";
    assert_eq!(read(&source, uri).await.unwrap(), "notes\n");

    // Disabled in the store after the server started: refused at once, by every door.
    let update = |enabled: Option<bool>, trust: Option<&str>| SkillUpdate {
        enabled,
        trust_level: trust.map(|t| Some(t.to_owned())),
        ..SkillUpdate::default()
    };
    store
        .update_skill(&acme(), &id, update(Some(false), None))
        .await
        .unwrap();
    let refused = read(&source, uri).await.unwrap_err();
    assert!(refused.contains("disabled"), "{refused}");
    let tool = call(
        &source,
        "read_skill_file",
        serde_json::json!({"skill_name": "greeter", "path": "notes.md"}),
    )
    .await;
    assert_eq!(tool.is_error, Some(true), "{}", text_of(&tool));
    let get = source
        .peer()
        .get_skill(GetSkillRequestParams::new("skill://greeter/SKILL.md"))
        .await;
    assert!(get.is_err());
    let names: Vec<String> = source
        .list()
        .await
        .unwrap()
        .iter()
        .map(|s| s.name().to_owned())
        .collect();
    assert!(names.is_empty(), "a disabled skill is listed: {names:?}");

    // Enabled again and re-trusted: served, and the decision carries the new trust level.
    store
        .update_skill(&acme(), &id, update(Some(true), Some("verified")))
        .await
        .unwrap();
    assert_eq!(read(&source, uri).await.unwrap(), "notes\n");
    let recorded = records(&audit, &acme()).await;
    let last = recorded.last().unwrap();
    assert!(last.success);
    assert_eq!(last.skill_trust_level, "verified");

    // Removed: refused.
    assert!(store.delete_skill(&acme(), &id).await.unwrap());
    assert!(read(&source, uri).await.is_err());
    let recorded = records(&audit, &acme()).await;
    let codes: Vec<String> = recorded.iter().map(code).collect();
    assert_eq!(
        codes,
        [
            "allowed",
            "disabled",
            "disabled",
            "disabled",
            "allowed",
            "unknown_skill"
        ],
        "one record per decision, denials included"
    );
}

#[tokio::test]
async fn a_permission_rule_binds_the_server() {
    let (store, _) = assigned_store().await;
    let clock = ManualClock::new(0);
    let permissions = Arc::new(Permissions::new(clock.clone()));
    permissions.set_rules(
        &acme(),
        vec![
            PermissionRule::new(
                "no-greeting",
                Scope::Agent("agent-7".into()),
                Target::Skill("greeter".into()),
            )
            .execute(false),
        ],
    );
    let audit = Arc::new(InMemoryAuditStore::new());
    let gate = PolicyGate::new(
        permissions,
        Arc::new(InMemoryRateLimiter::new()),
        Autonomy::new(Arc::new(InMemoryTrustStore::new()), clock.clone()),
        AuditTrail::new(audit.clone()),
        clock,
    );
    let server = SkillsMcpServer::for_agent(store, acme(), "agent-7")
        .gate(gate, Principal::new(acme(), "alice").agent("agent-7"))
        .build()
        .await
        .unwrap();
    let source = connect(server).await;
    let refused = read(&source, "skill://greeter/SKILL.md").await.unwrap_err();
    assert!(refused.contains("not_permitted"), "{refused}");
    let tool = call(
        &source,
        "use_skill",
        serde_json::json!({"skill_name": "greeter"}),
    )
    .await;
    assert_eq!(tool.is_error, Some(true));
    assert!(!text_of(&tool).contains("Say hello"), "{}", text_of(&tool));
    let recorded = records(&audit, &acme()).await;
    assert_eq!(recorded.len(), 2);
    for record in &recorded {
        assert!(!record.success);
        assert_eq!(code(record), "not_permitted");
        assert!(
            record.security_flags[0].contains("no-greeting"),
            "{:?}",
            record.security_flags
        );
        assert_eq!(record.agent_id.as_deref(), Some("agent-7"));
    }
}

#[tokio::test]
async fn hostile_requests_get_an_error_and_a_denial_record() {
    let dir = common::skills_tree();
    common::write(dir.path(), "secret.txt", "top secret\n");
    let (gate, audit) = recording_gate();
    let server = SkillsMcpServer::for_directory(dir.path())
        .gate(gate, common::principal())
        .build()
        .await
        .unwrap();
    let source = connect(server).await;
    let hostile = [
        "skill://greeter/../secret.txt",
        "skill://greeter/%2e%2e/secret.txt",
        "skill://GREETER/SKILL.md",
        "skill://gr\u{0435}eter/SKILL.md",
        "file:///etc/passwd",
    ];
    for uri in hostile {
        let refused = read(&source, uri).await;
        assert!(refused.is_err(), "{uri} was served");
    }
    let long = format!("skill://{}/SKILL.md", "a".repeat(100_000));
    assert!(read(&source, &long).await.is_err());
    let recorded = records(&audit, &common::principal().tenant).await;
    assert_eq!(recorded.len(), hostile.len() + 1);
    assert!(recorded.iter().all(|r| !r.success));
    // A huge name is cut before it reaches the chain.
    assert!(recorded.last().unwrap().skill_id.len() <= 256 * 4);
}

#[tokio::test]
async fn skills_get_is_recorded() {
    let dir = common::skills_tree();
    let (gate, audit) = recording_gate();
    let server = SkillsMcpServer::for_directory(dir.path())
        .gate(gate, common::principal())
        .build()
        .await
        .unwrap();
    let source = connect(server).await;
    let got = source
        .peer()
        .get_skill(GetSkillRequestParams::new("skill://greeter/SKILL.md"))
        .await
        .unwrap();
    assert_eq!(got.skill.uri, "skill://greeter/SKILL.md");
    let recorded = records(&audit, &common::principal().tenant).await;
    assert_eq!(recorded.len(), 1);
    assert!(recorded[0].success);
    assert!(recorded[0].security_flags.iter().any(|f| f == "action:get"));
    assert!(
        recorded[0]
            .security_flags
            .iter()
            .any(|f| f.starts_with("client:mcp:"))
    );
    assert!(
        recorded[0]
            .skill_version
            .as_deref()
            .is_some_and(|v| v.starts_with("sha256:"))
    );
}

/// A store that refuses every append.
struct Broken;

#[async_trait]
impl AuditStore for Broken {
    async fn append(
        &self,
        _: &TenantId,
        _: &str,
        _: AuditRecord,
        _: Option<&str>,
    ) -> skills_store_traits::Result<skills_store_traits::audit::AuditEntry> {
        Err(skills_store_traits::Error::Backend {
            message: "disk full".into(),
            source: None,
        })
    }
    async fn head(
        &self,
        _: &TenantId,
        _: &str,
    ) -> skills_store_traits::Result<Option<skills_store_traits::audit::ChainHead>> {
        Ok(None)
    }
    async fn read_range(
        &self,
        _: &TenantId,
        _: &str,
        _: u64,
        _: usize,
    ) -> skills_store_traits::Result<Vec<skills_store_traits::audit::AuditEntry>> {
        Ok(Vec::new())
    }
    async fn get_entry(
        &self,
        _: &TenantId,
        _: &str,
    ) -> skills_store_traits::Result<Option<skills_store_traits::audit::AuditEntry>> {
        Ok(None)
    }
    async fn query(
        &self,
        _: &TenantId,
        _: &skills_store_traits::audit::AuditQuery,
    ) -> skills_store_traits::Result<Vec<skills_store_traits::audit::AuditEntry>> {
        Ok(Vec::new())
    }
    async fn chains(&self, _: &TenantId) -> skills_store_traits::Result<Vec<String>> {
        Ok(Vec::new())
    }
}

#[tokio::test]
async fn nothing_is_served_when_the_decision_cannot_be_recorded() {
    let dir = common::skills_tree();
    let server = SkillsMcpServer::for_directory(dir.path())
        .gate(
            PolicyGate::allow_all(AuditTrail::new(Arc::new(Broken))),
            common::principal(),
        )
        .build()
        .await
        .unwrap();
    let source = connect(server).await;
    assert!(read(&source, "skill://greeter/SKILL.md").await.is_err());
    let mut request = CallToolRequestParams::new("read_skill_file");
    request.arguments = serde_json::json!({"skill_name": "greeter", "path": "references/guide.md"})
        .as_object()
        .cloned();
    let refused = source.peer().call_tool(request).await.unwrap_err();
    assert!(
        refused.to_string().contains("could not be audited"),
        "{refused}"
    );
}

#[tokio::test]
async fn a_server_without_a_gate_is_not_built() {
    let dir = common::skills_tree();
    let built = SkillsMcpServer::for_directory(dir.path()).build().await;
    let message = built.unwrap_err().to_string();
    assert!(message.contains("policy gate"), "{message}");
}

/// Answers "yes, in this session" to the first question and "no" to every later one.
struct YesOnceForTheSession(AtomicUsize);

#[async_trait]
impl ApprovalChannel for YesOnceForTheSession {
    async fn ask(&self, _request: &ApprovalRequest) -> Option<ApprovalOption> {
        Some(if self.0.fetch_add(1, Ordering::SeqCst) == 0 {
            ApprovalOption::YesInSession
        } else {
            ApprovalOption::No
        })
    }
}

#[tokio::test]
async fn a_session_approval_stays_with_its_connection() {
    use std::os::unix::fs::PermissionsExt;
    let dir = common::skills_tree();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let scratch = tempfile::tempdir().unwrap();
    let sandbox = Arc::new(ScriptedSandbox::new());
    let asked = Arc::new(YesOnceForTheSession(AtomicUsize::new(0)));
    let parts = LoadSkillParts::new(
        sandbox.clone(),
        Arc::new(Approvals::new(asked.clone())),
        SessionScope::new("acme", "chat-1"),
        TrustLevel::User,
        scratch.path(),
    );
    let server = common::directory_server(dir.path())
        .load_skill(parts)
        .build()
        .await
        .unwrap();
    let load = serde_json::json!({"skill_name": "pdf-tools"});
    // Client A says "yes for this session": its script runs, and runs again unasked.
    let a = connect(server.clone()).await;
    call(&a, "load_skill", load.clone()).await;
    call(&a, "load_skill", load.clone()).await;
    assert_eq!(sandbox.requests().len(), 2);
    assert_eq!(asked.0.load(Ordering::SeqCst), 1);
    // Client B of the same server is asked itself, and its "no" runs nothing.
    let b = connect(server).await;
    call(&b, "load_skill", load).await;
    assert_eq!(
        asked.0.load(Ordering::SeqCst),
        2,
        "client B was never asked"
    );
    assert_eq!(
        sandbox.requests().len(),
        2,
        "client A's session approval ran B's script"
    );
}

/// Every door of the server, in one table: for a skill disabled in the store after the
/// server started, each refuses and each writes one denial record.
#[tokio::test]
async fn every_door_refuses_a_disabled_skill_and_records_it() {
    let (store, id) = assigned_store().await;
    let (gate, audit) = recording_gate();
    let scratch = tempfile::tempdir().unwrap();
    let sandbox = Arc::new(ScriptedSandbox::new());
    let always = Arc::new(YesOnceForTheSession(AtomicUsize::new(0)));
    let parts = LoadSkillParts::new(
        sandbox.clone(),
        Arc::new(Approvals::new(always)),
        SessionScope::new("acme", "chat-1"),
        TrustLevel::User,
        scratch.path(),
    );
    let server = SkillsMcpServer::for_agent(store.clone(), acme(), "agent-7")
        .gate(gate, Principal::new(acme(), "alice").agent("agent-7"))
        .load_skill(parts)
        .build()
        .await
        .unwrap();
    let source = connect(server).await;
    let off = SkillUpdate {
        enabled: Some(false),
        ..SkillUpdate::default()
    };
    store.update_skill(&acme(), &id, off).await.unwrap();

    type Door = fn(&McpSkillSource) -> futures::future::BoxFuture<'_, bool>;
    // Each door answers whether it refused.
    let doors: [(&str, Door); 6] = [
        ("skills/get", |s| {
            Box::pin(async move {
                s.peer()
                    .get_skill(GetSkillRequestParams::new("skill://greeter/SKILL.md"))
                    .await
                    .is_err()
            })
        }),
        ("resources/read", |s| {
            Box::pin(async move { read(s, "skill://greeter/notes.md").await.is_err() })
        }),
        ("resources/directory/read", |s| {
            Box::pin(async move {
                s.peer()
                    .read_resource_directory(rmcp::model::ReadResourceDirectoryRequestParams::new(
                        "skill://greeter",
                    ))
                    .await
                    .is_err()
            })
        }),
        ("use_skill", |s| {
            Box::pin(async move {
                call(s, "use_skill", serde_json::json!({"skill_name": "greeter"}))
                    .await
                    .is_error
                    == Some(true)
            })
        }),
        ("read_skill_file", |s| {
            Box::pin(async move {
                call(
                    s,
                    "read_skill_file",
                    serde_json::json!({"skill_name": "greeter", "path": "notes.md"}),
                )
                .await
                .is_error
                    == Some(true)
            })
        }),
        ("load_skill", |s| {
            Box::pin(async move {
                call(
                    s,
                    "load_skill",
                    serde_json::json!({"skill_name": "greeter"}),
                )
                .await
                .is_error
                    == Some(true)
            })
        }),
    ];
    for (door, refused) in doors {
        let before = records(&audit, &acme()).await.len();
        assert!(refused(&source).await, "{door} served a disabled skill");
        let recorded = records(&audit, &acme()).await;
        assert_eq!(recorded.len(), before + 1, "{door} wrote no record");
        let last = recorded.last().unwrap();
        assert!(
            !last.success && code(last) == "disabled",
            "{door}: {last:?}"
        );
    }
    assert!(
        sandbox.requests().is_empty(),
        "a disabled skill's script ran"
    );
}
