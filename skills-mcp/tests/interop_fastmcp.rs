//! Interoperability with code nobody here wrote: FastMCP's skills client (PyPI `fastmcp`)
//! against our server over stdio and HTTP, our client installing from FastMCP's skills
//! server, and the official Python SDK (`mcp`) calling our tools. The Python comes from
//! `.ci/mcp-interop.sh` (`SKILLS_MCP_PYTHON`); without it these fail under `CI=true` and
//! skip otherwise.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;
use skills_install::{InstallRequest, Installer, SkillSource};
use skills_mcp::{ClientLimits, HttpOptions, McpSkillSource};
use skills_store_traits::in_memory::{
    InMemoryAuditStore, InMemoryPackageStore, InMemorySkillStore,
};
use skills_store_traits::{SkillStore, UserScope};

/// Runs a Python script to completion (bounded) and parses its last stdout line as JSON.
async fn run_python(python: &std::path::Path, args: &[&str]) -> Value {
    let output = tokio::time::timeout(
        Duration::from_secs(120),
        tokio::process::Command::new(python)
            .args(args)
            .stdin(Stdio::null())
            .kill_on_drop(true)
            .output(),
    )
    .await
    .expect("the Python client finished in time")
    .expect("the Python client ran");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "python {args:?} failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let last = stdout.lines().last().unwrap_or_default();
    serde_json::from_str(last).unwrap_or_else(|e| panic!("not JSON ({e}): {stdout}"))
}

fn check_listing(answer: &Value) {
    assert_eq!(answer["protocol_version"], "2026-07-28");
    let skills = answer["skills"].as_array().expect("skills");
    let names: Vec<&str> = skills.iter().filter_map(|s| s["name"].as_str()).collect();
    assert_eq!(names, ["greeter", "pdf-tools"]);
    assert_eq!(
        skills[0]["files"],
        serde_json::json!(["SKILL.md", "references/guide.md"])
    );
    assert_eq!(skills[0]["frontmatter"]["metadata"]["version"], "1.0.0");
    assert_eq!(skills[1]["frontmatter"]["license"], "MIT");
}

#[tokio::test]
async fn fastmcp_skills_client_reads_our_server_over_stdio() {
    let Some(python) = common::python() else {
        return;
    };
    let dir = common::skills_tree();
    let serve = common::serve_bin();
    let answer = run_python(
        &python,
        &[
            common::script("fastmcp_skills_client.py").to_str().unwrap(),
            "stdio",
            serve.to_str().unwrap(),
            "--dir",
            dir.path().to_str().unwrap(),
            "--stdio",
        ],
    )
    .await;
    check_listing(&answer);
}

#[tokio::test]
async fn fastmcp_skills_client_reads_our_server_over_http_with_the_token() {
    let Some(python) = common::python() else {
        return;
    };
    let dir = common::skills_tree();
    let token = "8110926e16e2f22d13891665ae12a043ee565ebbb28e1582bb6a359df113ffb2";
    let server = common::directory_server(dir.path()).build().await.unwrap();
    let handle = server
        .bind_http(
            "127.0.0.1:0".parse().unwrap(),
            token,
            HttpOptions::default(),
        )
        .await
        .unwrap();
    let url = handle.url();
    let script = common::script("fastmcp_skills_client.py");
    let answer = run_python(&python, &[script.to_str().unwrap(), "http", &url, token]).await;
    check_listing(&answer);

    // The wrong token is refused before anything is served.
    let refused = tokio::process::Command::new(&python)
        .args([
            script.to_str().unwrap(),
            "http",
            &url,
            "not-the-token-at-all",
        ])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .status()
        .await
        .unwrap();
    assert!(!refused.success());
    handle.shutdown().await.unwrap();
}

#[tokio::test]
async fn official_python_sdk_calls_our_tools() {
    let Some(python) = common::python() else {
        return;
    };
    let dir = common::skills_tree();
    let serve = common::serve_bin();
    let answer = run_python(
        &python,
        &[
            common::script("mcp_sdk_tools.py").to_str().unwrap(),
            serve.to_str().unwrap(),
            "--dir",
            dir.path().to_str().unwrap(),
            "--stdio",
        ],
    )
    .await;
    let tools: Vec<&str> = answer["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert_eq!(tools, ["read_skill_file", "use_skill"]);
    assert_eq!(answer["use_skill"]["is_error"], false);
    assert!(
        answer["use_skill"]["text"]
            .as_str()
            .unwrap()
            .contains("Skill: greeter")
    );
    assert_eq!(answer["read_skill_file"]["is_error"], false);
    assert_eq!(answer["read_skill_file"]["text"], "Say hello politely.\n");
    assert_eq!(answer["escape"]["is_error"], true);
    assert!(!answer["escape"]["text"].as_str().unwrap().contains("root:"));
}

#[tokio::test]
async fn our_client_installs_from_fastmcps_skills_server() {
    let Some(python) = common::python() else {
        return;
    };
    let dir = common::skills_tree();
    let mut command = tokio::process::Command::new(&python);
    command.args([
        common::script("fastmcp_skills_server.py").to_str().unwrap(),
        dir.path().to_str().unwrap(),
    ]);
    // Python and FastMCP's imports can take many seconds on a loaded machine.
    let mut limits = ClientLimits::default();
    limits.request_timeout = Duration::from_secs(120);
    let source = McpSkillSource::connect_command("fastmcp-local", command, limits)
        .await
        .unwrap();
    let found = source.search("").await.unwrap();
    let names: Vec<&str> = found.iter().map(|r| r.name.as_str()).collect();
    assert_eq!(names, ["greeter", "pdf-tools"]);

    let skills = Arc::new(InMemorySkillStore::new());
    let installer = Installer::builder(
        skills.clone(),
        Arc::new(InMemoryPackageStore::new()),
        Arc::new(InMemoryAuditStore::new()),
    )
    .build();
    let scope = UserScope::new("acme", "alice");
    let installed = installer
        .install(&scope, &source, &InstallRequest::new("greeter"))
        .await
        .unwrap();
    assert_eq!(installed.trust_level.as_str(), "community");
    assert_eq!(installed.version.version, "1.0.0");
    let stored = skills
        .find_skill_by_slug(&scope.tenant, "greeter")
        .await
        .unwrap()
        .expect("stored");
    assert!(stored.content.contains("# Greeter"));

    // An MCP server's tools import as skills-core tools.
    let tools = skills_mcp::import_tools(&source, 100).await.unwrap();
    let add = tools
        .iter()
        .find(|t| t.name() == "add")
        .expect("the add tool");
    assert!(
        add.validate_input(&serde_json::json!({"a": 1, "b": 2}))
            .is_ok()
    );
    assert!(add.validate_input(&serde_json::json!({"a": "x"})).is_err());
}
