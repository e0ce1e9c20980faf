//! Benchmarks of skills-mcp (issue 19):
//!
//! * `mcp/list_1000/*`: one `skills/list` answering 1,000 skills (each a `SKILL.md` and one
//!   reference file), from our server and from rmcp's plain `SkillCatalog` serving the same
//!   directory, both over an in-process duplex pipe (the same newline-delimited JSON-RPC
//!   codec as stdio, without the process boundary), and from our server over real stdio
//!   (the `skills-mcp-serve` binary as a child process);
//! * `mcp/read/*`: one `resources/read` of a reference file, the same three ways;
//! * `mcp/gate/*` (issue 34): the decision every request pays, `PolicyGate::authorize` of one
//!   read with its audit record, on a checked gate over an in-memory trail and over an
//!   SQLite file (a durable append per decision); and one `read_skill_file` tool call over
//!   the duplex pipe, gate and record included (compare `mcp/read/rmcp_skill_catalog_duplex`,
//!   which checks and records nothing);
//! * `mcp/install_one`: installing one skill from our server through `McpSkillSource` and
//!   the full install pipeline (validate, scan, digest, trust, store, audit) into fresh
//!   in-memory stores.
//!
//! Runs on a current-thread tokio runtime; `cargo bench -p skills-mcp --bench mcp`.

#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use std::sync::Arc;
use std::time::Duration;

use criterion::Criterion;
use rmcp::handler::server::skill_catalog::SkillCatalog;
use rmcp::model::CallToolRequestParams;
use rmcp::model::{
    ListSkillsResult, PaginatedRequestParams, ReadResourceRequestParams, ReadResourceResponse,
    ServerCapabilities, ServerConfig,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};
use skills_install::{InstallRequest, Installer};
use skills_mcp::{ClientLimits, McpSkillSource, SkillsMcpServer};
use skills_security::TrustLevel;
use skills_security::audit::AuditTrail;
use skills_security::autonomy::{Autonomy, RiskLevel};
use skills_security::gate::{
    Access, AccessRequest, PolicyGate, SkillAction, SkillInfo, SkillState,
};
use skills_security::permissions::{InMemoryRateLimiter, Permissions, Principal};
use skills_store_traits::UserScope;
use skills_store_traits::in_memory::InMemoryTrustStore;
use skills_store_traits::in_memory::{
    InMemoryAuditStore, InMemoryPackageStore, InMemorySkillStore,
};

const SKILLS: usize = 1000;

fn tree() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for i in 0..SKILLS {
        let name = format!("skill-{i:04}");
        let root = dir.path().join(&name);
        std::fs::create_dir_all(root.join("references")).unwrap();
        std::fs::write(
            root.join("SKILL.md"),
            format!(
                "---\nname: {name}\ndescription: Benchmark skill number {i}, which does one thing well.\nmetadata:\n  version: 1.0.{i}\n---\n# {name}\n\nRead [the guide](references/guide.md).\n"
            ),
        )
        .unwrap();
        std::fs::write(root.join("references/guide.md"), "A guide.\n".repeat(50)).unwrap();
    }
    dir
}

/// rmcp's plain directory catalog as a server (its documented wiring).
#[derive(Clone)]
struct Plain {
    catalog: Arc<SkillCatalog>,
}

impl ServerHandler for Plain {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_resources()
                .enable_skills_with_directory_read()
                .build(),
        )
    }

    async fn list_skills(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListSkillsResult, ErrorData> {
        Ok(self.catalog.list_skills())
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        self.catalog
            .read_resource(&request.uri)
            .map(Into::into)
            .ok_or_else(|| ErrorData::resource_not_found(request.uri, None))
    }
}

async fn connect_ours(server: SkillsMcpServer) -> McpSkillSource {
    let (ours, theirs) = tokio::io::duplex(1 << 20);
    tokio::spawn(server.serve_transport(theirs));
    McpSkillSource::connect_stream("bench", ours).await.unwrap()
}

async fn connect_plain(plain: Plain) -> McpSkillSource {
    let (ours, theirs) = tokio::io::duplex(1 << 20);
    tokio::spawn(async move {
        if let Ok(running) = plain.serve(theirs).await {
            let _ = running.waiting().await;
        }
    });
    McpSkillSource::connect_stream("bench", ours).await.unwrap()
}

async fn connect_stdio(dir: &std::path::Path) -> McpSkillSource {
    let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_skills-mcp-serve"));
    command.arg("--dir").arg(dir).arg("--stdio");
    McpSkillSource::connect_command("bench", command, ClientLimits::default())
        .await
        .unwrap()
}

fn bench(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let dir = tree();
    let (ours, plain, stdio) = rt.block_on(async {
        // Every read decided by a gate and recorded (in memory), as a host serves them.
        let gate = skills_security::gate::PolicyGate::allow_all(
            skills_security::audit::AuditTrail::in_memory(),
        );
        let server = SkillsMcpServer::for_directory(dir.path())
            .gate(
                gate,
                skills_security::permissions::Principal::new("bench", "bench"),
            )
            .build()
            .await
            .unwrap();
        assert_eq!(server.skill_names().len(), SKILLS);
        let plain = Plain {
            catalog: Arc::new(SkillCatalog::from_dir(dir.path()).unwrap()),
        };
        (
            connect_ours(server).await,
            connect_plain(plain).await,
            connect_stdio(dir.path()).await,
        )
    });
    let read_uri = "skill://skill-0500/references/guide.md";

    let mut group = c.benchmark_group("mcp/list_1000");
    group
        .sample_size(20)
        .measurement_time(Duration::from_secs(8));
    for (name, source) in [
        ("skills_mcp_duplex", &ours),
        ("rmcp_skill_catalog_duplex", &plain),
        ("skills_mcp_stdio", &stdio),
    ] {
        group.bench_function(name, |b| {
            b.to_async(&rt).iter(|| async {
                let listed = source.peer().list_skills(None).await.unwrap();
                assert_eq!(listed.skills.len(), SKILLS);
            })
        });
    }
    group.finish();

    let mut group = c.benchmark_group("mcp/read");
    group.measurement_time(Duration::from_secs(5));
    for (name, source) in [
        ("skills_mcp_duplex", &ours),
        ("rmcp_skill_catalog_duplex", &plain),
        ("skills_mcp_stdio", &stdio),
    ] {
        group.bench_function(name, |b| {
            b.to_async(&rt).iter(|| async {
                let read = source
                    .peer()
                    .read_resource(ReadResourceRequestParams::new(read_uri))
                    .await
                    .unwrap();
                assert_eq!(read.contents.len(), 1);
            })
        });
    }
    group.finish();

    let mut group = c.benchmark_group("mcp/gate");
    group.measurement_time(Duration::from_secs(5));
    let sqlite_dir = tempfile::tempdir().unwrap();
    let sqlite = rt.block_on(async {
        Arc::new(
            skills_store_sqlite::SqliteStore::open(sqlite_dir.path().join("audit.db"))
                .await
                .unwrap(),
        )
    });
    let trails: [(&str, AuditTrail); 2] = [
        ("authorize_in_memory", AuditTrail::in_memory()),
        ("authorize_sqlite", AuditTrail::new(sqlite)),
    ];
    for (name, trail) in trails {
        let clock: Arc<dyn skills_store_traits::Clock> = Arc::new(skills_store_traits::SystemClock);
        let gate = PolicyGate::new(
            Arc::new(Permissions::new(clock.clone())),
            Arc::new(InMemoryRateLimiter::new()),
            Autonomy::new(Arc::new(InMemoryTrustStore::new()), clock.clone()),
            trail,
            clock,
        );
        let info = SkillInfo::new(
            "skill-0500",
            "skill-0500",
            TrustLevel::Verified,
            RiskLevel::Low,
        );
        let request = AccessRequest::new(
            Principal::new("bench", "alice").agent("agent-7"),
            SkillAction::Read,
            "skill-0500",
            "references/guide.md",
        )
        .state(SkillState::new(info, "sha256:00"))
        .catalogued(true)
        .client("mcp:bench")
        .content(b"Read the guide.\n");
        group.bench_function(name, |b| {
            b.to_async(&rt).iter(|| async {
                let access = gate.authorize(&request).await.unwrap();
                assert!(matches!(access, Access::Granted(_)));
            })
        });
    }
    group.bench_function("read_skill_file_duplex", |b| {
        b.to_async(&rt).iter(|| async {
            let mut call = CallToolRequestParams::new("read_skill_file");
            call.arguments =
                serde_json::json!({"skill_name": "skill-0500", "path": "references/guide.md"})
                    .as_object()
                    .cloned();
            let result = ours.peer().call_tool(call).await.unwrap();
            assert_ne!(result.is_error, Some(true));
        })
    });
    group.finish();

    let mut group = c.benchmark_group("mcp");
    group
        .sample_size(30)
        .measurement_time(Duration::from_secs(8));
    let scope = UserScope::new("acme", "alice");
    group.bench_function("install_one", |b| {
        b.to_async(&rt).iter(|| async {
            let installer = Installer::builder(
                Arc::new(InMemorySkillStore::new()),
                Arc::new(InMemoryPackageStore::new()),
                Arc::new(InMemoryAuditStore::new()),
            )
            .build();
            let installed = installer
                .install(&scope, &ours, &InstallRequest::new("skill-0500"))
                .await
                .unwrap();
            assert_eq!(installed.trust_level.as_str(), "community");
        })
    });
    group.finish();
}

fn main() {
    let mut criterion = Criterion::default().configure_from_args();
    bench(&mut criterion);
    criterion.final_summary();
}
