//! Our server and our client over an in-process pipe: listing, reading, containment, the
//! tools, audit, and an install through the normal pipeline.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::sync::Arc;

use rmcp::model::{
    CallToolRequestParams, ReadResourceDirectoryRequestParams, ReadResourceRequestParams,
    ResourceContents,
};
use skills_install::{InstallRequest, Installer, SkillSource};
use skills_mcp::protocol::{SkillResources, skill_uri};
use skills_mcp::{McpSkillSource, SkillsMcpServer};
use skills_security::audit::AuditTrail;
use skills_security::gate::PolicyGate;
use skills_security::permissions::Principal;
use skills_store_traits::in_memory::{
    InMemoryAuditStore, InMemoryPackageStore, InMemorySkillStore,
};
use skills_store_traits::{NewAssignment, NewSkill, SkillStore, SkillUpdate, TenantId, UserScope};

async fn connect(server: SkillsMcpServer) -> McpSkillSource {
    let (ours, theirs) = tokio::io::duplex(1 << 20);
    tokio::spawn(server.serve_transport(theirs));
    McpSkillSource::connect_stream("test-server", ours)
        .await
        .unwrap()
}

#[tokio::test]
async fn lists_gets_and_reads_a_directory_with_digests() {
    let dir = common::skills_tree();
    let server = common::directory_server(dir.path()).build().await.unwrap();
    assert_eq!(server.skill_names(), ["greeter", "pdf-tools"]);
    let source = connect(server).await;

    let listed = source.list().await.unwrap();
    let names: Vec<&str> = listed.iter().map(|s| s.name()).collect();
    assert_eq!(names, ["greeter", "pdf-tools"]);
    let greeter = &listed[0];
    assert_eq!(greeter.uri, "skill://greeter/SKILL.md");
    // Frontmatter verbatim: keys beyond name and description come through.
    assert_eq!(greeter.frontmatter.extra["metadata"]["version"], "1.0.0");
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
    assert!(files.iter().all(|f| f.digest.starts_with("sha256:")));

    let package = source.fetch("greeter", None).await.unwrap();
    let paths: Vec<&str> = package.files().iter().map(|f| f.path.as_str()).collect();
    assert_eq!(paths, ["SKILL.md", "references/guide.md"]);
    assert_eq!(package.version(), Some("1.0.0"));
    assert_eq!(package.source().trust_path, "mcp/test-server/greeter");

    let dir_listing = source
        .peer()
        .read_resource_directory(ReadResourceDirectoryRequestParams::new("skill://greeter"))
        .await
        .unwrap();
    let children: Vec<&str> = dir_listing
        .resources
        .iter()
        .map(|r| r.uri.as_str())
        .collect();
    assert_eq!(
        children,
        ["skill://greeter/SKILL.md", "skill://greeter/references"]
    );

    let found = source.search("pdf").await.unwrap();
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].locator, "pdf-tools");
}

#[tokio::test]
async fn escaping_and_unknown_uris_are_refused() {
    let dir = common::skills_tree();
    common::write(dir.path(), "secret.txt", "top secret\n");
    let server = common::directory_server(dir.path()).build().await.unwrap();
    let source = connect(server).await;
    for uri in [
        "skill://greeter/../secret.txt",
        "skill://greeter/%2e%2e/secret.txt",
        "skill://greeter//etc/passwd",
        "skill://greeter/references/../../secret.txt",
        "skill://nope/SKILL.md",
        "file:///etc/passwd",
        "skill://greeter/missing.md",
    ] {
        let read = source
            .peer()
            .read_resource(ReadResourceRequestParams::new(uri))
            .await;
        assert!(read.is_err(), "{uri} was served");
    }
}

#[cfg(unix)]
#[tokio::test]
async fn a_symlink_out_of_the_skill_is_not_served() {
    let dir = common::skills_tree();
    let outside = tempfile::tempdir().unwrap();
    common::write(outside.path(), "id_rsa", "PRIVATE KEY\n");
    std::os::unix::fs::symlink(
        outside.path().join("id_rsa"),
        dir.path().join("greeter/references/key.md"),
    )
    .unwrap();
    let server = common::directory_server(dir.path()).build().await.unwrap();
    let source = connect(server).await;
    let entry = source.entry("greeter").await.unwrap();
    let SkillResources::Files(files) = &entry.resources else {
        panic!("a static manifest")
    };
    assert!(files.iter().all(|f| !f.uri.ends_with("key.md")));
    let read = source
        .peer()
        .read_resource(ReadResourceRequestParams::new(
            "skill://greeter/references/key.md",
        ))
        .await;
    assert!(read.is_err());
}

/// A store with three skills: one assigned and enabled, one assigned but disabled, one not
/// assigned to the agent.
async fn agent_store() -> (Arc<InMemorySkillStore>, TenantId) {
    let store = Arc::new(InMemorySkillStore::new());
    let tenant = TenantId::new("acme");
    let md = |name: &str| {
        format!("---\nname: {name}\ndescription: The {name} skill.\n---\nDo {name}.\n")
    };
    let mut ids = Vec::new();
    for name in ["triage", "billing", "payroll"] {
        let skill = store
            .create_skill(
                &tenant,
                NewSkill::new(name, name, md(name)).with_file("notes.md", "notes\n"),
            )
            .await
            .unwrap();
        ids.push(skill.id);
    }
    store
        .create_assignment(&tenant, NewAssignment::agent(&ids[0], "agent-7"))
        .await
        .unwrap();
    store
        .create_assignment(&tenant, NewAssignment::agent(&ids[1], "agent-7"))
        .await
        .unwrap();
    let disable = SkillUpdate {
        enabled: Some(false),
        ..SkillUpdate::default()
    };
    store.update_skill(&tenant, &ids[1], disable).await.unwrap();
    store
        .create_assignment(&tenant, NewAssignment::agent(&ids[2], "someone-else"))
        .await
        .unwrap();
    (store, tenant)
}

#[tokio::test]
async fn an_agent_sees_only_its_enabled_assigned_skills_and_reads_are_audited() {
    let (store, tenant) = agent_store().await;
    let trail = AuditTrail::new(Arc::new(InMemoryAuditStore::new()));
    let server = SkillsMcpServer::for_agent(store.clone(), tenant.clone(), "agent-7")
        .gate(
            PolicyGate::allow_all(trail.clone()),
            Principal::new(tenant.clone(), "agent-7").agent("agent-7"),
        )
        .build()
        .await
        .unwrap();
    assert_eq!(server.skill_names(), ["triage"]);
    let source = connect(server).await;
    let names: Vec<String> = source
        .list()
        .await
        .unwrap()
        .iter()
        .map(|s| s.name().to_owned())
        .collect();
    assert_eq!(names, ["triage"]);
    for hidden in ["billing", "payroll"] {
        let read = source
            .peer()
            .read_resource(ReadResourceRequestParams::new(skill_uri(
                hidden, "SKILL.md",
            )))
            .await;
        assert!(read.is_err(), "{hidden} was served");
    }
    let read = source
        .peer()
        .read_resource(ReadResourceRequestParams::new("skill://triage/notes.md"))
        .await
        .unwrap();
    let ResourceContents::TextResourceContents { text, .. } = &read.contents[0] else {
        panic!("text")
    };
    assert_eq!(text, "notes\n");
    // Two refusals and one read, each on the chain.
    let head = trail.head(&tenant).await.unwrap().expect("an audit entry");
    assert_eq!(head.sequence, 3);
    assert!(trail.verify(&tenant).await.unwrap().is_intact());

    // The tools answer from the same resolution, audited too.
    let mut call = CallToolRequestParams::new("read_skill_file");
    call.arguments = serde_json::json!({"skill_name": "triage", "path": "notes.md"})
        .as_object()
        .cloned();
    let result = source.peer().call_tool(call).await.unwrap();
    assert_ne!(result.is_error, Some(true));
    let mut call = CallToolRequestParams::new("use_skill");
    call.arguments = serde_json::json!({"skill_name": "payroll"})
        .as_object()
        .cloned();
    let result = source.peer().call_tool(call).await.unwrap();
    assert_eq!(result.is_error, Some(true), "an unassigned skill answered");
    assert_eq!(
        trail.head(&tenant).await.unwrap().map(|h| h.sequence),
        Some(5)
    );
}

#[tokio::test]
async fn installs_from_an_mcp_server_as_community_unless_trusted() {
    let dir = common::skills_tree();
    let server = common::directory_server(dir.path()).build().await.unwrap();
    let source = connect(server).await;
    let scope = UserScope::new("acme", "alice");

    let skills = Arc::new(InMemorySkillStore::new());
    let installer = Installer::builder(
        skills.clone(),
        Arc::new(InMemoryPackageStore::new()),
        Arc::new(InMemoryAuditStore::new()),
    )
    .build();
    let installed = installer
        .install(&scope, &source, &InstallRequest::new("greeter"))
        .await
        .unwrap();
    assert_eq!(installed.trust_level.as_str(), "community");
    assert_eq!(installed.version.version, "1.0.0");

    let trusted = Installer::builder(
        Arc::new(InMemorySkillStore::new()),
        Arc::new(InMemoryPackageStore::new()),
        Arc::new(InMemoryAuditStore::new()),
    )
    .trusted_sources(skills_security::TrustedSources::new(["mcp/test-server"]))
    .build();
    let installed = trusted
        .install(&scope, &source, &InstallRequest::new("greeter"))
        .await
        .unwrap();
    assert_eq!(installed.trust_level.as_str(), "verified");
}

#[tokio::test]
async fn http_needs_the_bearer_token_and_loopback() {
    // reqwest's `rustls-no-provider` is on in the workspace's build (skills-cli's TLS).
    let _ = rustls::crypto::ring::default_provider().install_default();
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let dir = common::skills_tree();
    let server = common::directory_server(dir.path()).build().await.unwrap();
    let token = "782b86f04b87a71a3df96dc65be02cf7eeeba33b741fa2505664b0046dd05850";

    // Not loopback, or a short token: refused before binding.
    let public = server
        .clone()
        .bind_http(
            "0.0.0.0:0".parse().unwrap(),
            token,
            skills_mcp::HttpOptions::default(),
        )
        .await;
    assert!(matches!(public, Err(skills_mcp::Error::Config(_))));
    let short = server
        .clone()
        .bind_http(
            "127.0.0.1:0".parse().unwrap(),
            "short",
            skills_mcp::HttpOptions::default(),
        )
        .await;
    assert!(matches!(short, Err(skills_mcp::Error::Config(_))));

    let handle = server
        .bind_http(
            "127.0.0.1:0".parse().unwrap(),
            token,
            skills_mcp::HttpOptions::default(),
        )
        .await
        .unwrap();
    let body = r#"{"jsonrpc":"2.0","id":1,"method":"skills/list","params":{}}"#;
    for auth in [
        "",
        "Authorization: Bearer wrong-token-0123456789\r\n",
        "Authorization: 782b86f04b87a71a3df96dc65be02cf7eeeba33b741fa2505664b0046dd05850\r\n",
    ] {
        let mut stream = tokio::net::TcpStream::connect(handle.local_addr())
            .await
            .unwrap();
        let request = format!(
            "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n{auth}Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        );
        stream.write_all(request.as_bytes()).await.unwrap();
        let mut answer = Vec::new();
        tokio::time::timeout(
            std::time::Duration::from_secs(10),
            stream.read_to_end(&mut answer),
        )
        .await
        .unwrap()
        .unwrap();
        let answer = String::from_utf8_lossy(&answer);
        assert!(answer.starts_with("HTTP/1.1 401"), "{auth:?}: {answer}");
        assert!(!answer.contains("greeter"), "{auth:?}: {answer}");
    }
    // With the token, our client lists the skills over HTTP.
    let source = McpSkillSource::connect_http(
        "http-test",
        &handle.url(),
        Some(token),
        skills_mcp::ClientLimits::default(),
    )
    .await
    .unwrap();
    assert_eq!(source.list().await.unwrap().len(), 2);
    handle.shutdown().await.unwrap();
}

/// Seed 003's MCP-tools cache: a server's tools are imported once per tenant and server,
/// kept for 15 minutes, and imported afresh after the connection changes or the time ends.
#[tokio::test]
async fn imported_tools_are_cached_per_tenant_and_server_for_fifteen_minutes() {
    use skills_mcp::McpToolCache;
    use skills_store_traits::ManualClock;

    let dir = common::skills_tree();
    let server = common::directory_server(dir.path()).build().await.unwrap();
    let source = connect(server).await;
    let clock = ManualClock::new(1_000_000);
    let cache = McpToolCache::new(clock.clone());
    let (acme, other) = (TenantId::new("acme"), TenantId::new("other"));

    let first = cache.tools(&acme, &source, 100).await.unwrap();
    let names: Vec<&str> = first.iter().map(|t| t.name()).collect();
    assert!(names.contains(&"use_skill"), "{names:?}");
    let again = cache.tools(&acme, &source, 100).await.unwrap();
    assert!(std::sync::Arc::ptr_eq(&first, &again), "the kept list");
    assert_eq!(cache.stats(), (1, 1));
    // Another tenant has its own entry.
    cache.tools(&other, &source, 100).await.unwrap();
    assert_eq!(cache.stats(), (1, 2));
    // The connection changed: imported afresh.
    cache.connection_changed(&acme, source.server_id());
    let fresh = cache.tools(&acme, &source, 100).await.unwrap();
    assert!(!std::sync::Arc::ptr_eq(&first, &fresh));
    assert_eq!(cache.stats(), (1, 3));
    // Fifteen minutes later: imported afresh.
    clock.advance(15 * 60 * 1000);
    let later = cache.tools(&acme, &source, 100).await.unwrap();
    assert!(!std::sync::Arc::ptr_eq(&fresh, &later));
    assert_eq!(cache.stats(), (1, 4));
    // An import that fails (more tools than allowed) keeps nothing.
    cache.connection_changed(&acme, source.server_id());
    assert!(cache.tools(&acme, &source, 0).await.is_err());
    cache.tools(&acme, &source, 100).await.unwrap();
    assert_eq!(cache.stats(), (1, 6), "the failed import left no entry");
}
