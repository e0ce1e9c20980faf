//! The skills catalog over the Model Context Protocol, on rmcp (the official Rust SDK) and
//! its SEP-2640 skills extension (`io.modelcontextprotocol/skills`).
//!
//! | part | what it does |
//! |---|---|
//! | [`SkillsMcpServer`] | serves one agent's governed catalog (or a directory) over stdio or streamable HTTP: `skills/list`, `skills/get`, `resources/read`, `resources/directory/read` under `skill://<name>/<path>`, and the tools `use_skill`, `read_skill_file`, `load_skill`; every read audited |
//! | [`McpSkillSource`] | `skills-install`'s [`SkillSource`](skills_install::SkillSource) for any MCP server speaking the extension: every file checked against the manifest's digests, then the normal install pipeline |
//! | [`import_tools`] | an MCP server's tools as skills-core [`Tool`](skills_core::tools::Tool)s |
//! | [`protocol`] | the wire vocabulary (rmcp's types) and `skill://` URI rules |
//!
//! No MCP implementation of our own: JSON-RPC, the handshake, the transports and the
//! SEP-2640 types are rmcp's. This crate adds what rmcp's plain `SkillCatalog` does not:
//! per-agent assignment, trust levels, containment and size rules, audit, approvals, and
//! the install pipeline's validation, scan and trust on the client side.
//!
//! ```
//! # tokio::runtime::Builder::new_current_thread().enable_all().build()?.block_on(async {
//! use skills_mcp::{McpSkillSource, SkillsMcpServer};
//! use skills_install::SkillSource;
//!
//! let dir = tempfile::tempdir()?;
//! std::fs::create_dir(dir.path().join("greeter"))?;
//! std::fs::write(
//!     dir.path().join("greeter/SKILL.md"),
//!     "---\nname: greeter\ndescription: Greets people.\n---\nSay hello.\n",
//! )?;
//! // Every request is decided by the host's policy gate and recorded on its audit trail.
//! let trail = skills_security::audit::AuditTrail::in_memory();
//! let gate = skills_security::gate::PolicyGate::allow_all(trail.clone());
//! let me = skills_security::permissions::Principal::new("acme", "alice").agent("agent-7");
//! let server = SkillsMcpServer::for_directory(dir.path())
//!     .gate(gate, me.clone())
//!     .build()
//!     .await?;
//!
//! // A client on the other end of an in-process pipe (a child's stdio or HTTP in practice).
//! let (ours, theirs) = tokio::io::duplex(64 * 1024);
//! tokio::spawn(server.serve_transport(theirs));
//! let source = McpSkillSource::connect_stream("local-test", ours).await?;
//! let package = source.fetch("greeter", None).await?;
//! assert_eq!(package.files()[0].path, "SKILL.md");
//! assert!(trail.verify(&me.tenant).await?.checked >= 1); // the reads are on the chain
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! # })?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

pub mod client;
pub mod content;
mod error;
pub mod protocol;
pub mod server;

pub use client::{ClientLimits, McpSkillSource, McpToolCache, import_tools};
pub use error::{Error, Result};
pub use server::http::{HttpHandle, HttpOptions};
pub use server::{LoadSkillParts, SkillsMcpServer, SkillsMcpServerBuilder};
