//! `load_skill` over MCP: a referenced script runs only after approval, through the host's
//! sandbox (skills-security's `ScriptRunner`, the same path as every other adapter).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::os::unix::fs::PermissionsExt;
use std::sync::Arc;

use async_trait::async_trait;
use rmcp::model::{CallToolRequestParams, ContentBlock};
use skills_mcp::{LoadSkillParts, McpSkillSource};
use skills_security::sandbox::ScriptedSandbox;
use skills_security::{
    ApprovalChannel, ApprovalOption, ApprovalRequest, Approvals, NonInteractive, SessionScope,
    TrustLevel,
};

struct Always(ApprovalOption);

#[async_trait]
impl ApprovalChannel for Always {
    async fn ask(&self, _request: &ApprovalRequest) -> Option<ApprovalOption> {
        Some(self.0)
    }
}

async fn load(approvals: Approvals) -> (String, Arc<ScriptedSandbox>) {
    let dir = common::skills_tree();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let scratch = tempfile::tempdir().unwrap();
    let sandbox = Arc::new(ScriptedSandbox::new());
    let parts = LoadSkillParts::new(
        sandbox.clone(),
        Arc::new(approvals),
        SessionScope::new("acme", "chat-1"),
        TrustLevel::User,
        scratch.path(),
    );
    let server = common::directory_server(dir.path())
        .load_skill(parts)
        .build()
        .await
        .unwrap();
    let (ours, theirs) = tokio::io::duplex(1 << 20);
    tokio::spawn(server.serve_transport(theirs));
    let source = McpSkillSource::connect_stream("test", ours).await.unwrap();
    let tools = source.peer().list_tools(None).await.unwrap();
    assert!(tools.tools.iter().any(|t| t.name == "load_skill"));
    let mut call = CallToolRequestParams::new("load_skill");
    call.arguments = serde_json::json!({"skill_name": "pdf-tools"})
        .as_object()
        .cloned();
    let result = source.peer().call_tool(call).await.unwrap();
    let text: String = result
        .content
        .iter()
        .filter_map(|c| match c {
            ContentBlock::Text(t) => Some(t.text.clone()),
            _ => None,
        })
        .collect();
    drop(dir);
    (text, sandbox)
}

#[tokio::test]
async fn a_declined_approval_runs_nothing() {
    let (text, sandbox) = load(Approvals::new(Arc::new(NonInteractive::default()))).await;
    assert!(text.contains("<skill_context"), "{text}");
    assert!(
        sandbox.requests().is_empty(),
        "a script ran without approval"
    );
}

#[tokio::test]
async fn an_approved_script_runs_in_the_sandbox() {
    let (text, sandbox) = load(Approvals::new(Arc::new(Always(ApprovalOption::YesOnce)))).await;
    assert_eq!(sandbox.requests().len(), 1, "{text}");
    assert!(text.contains("scripts/extract.sh"), "{text}");
}
