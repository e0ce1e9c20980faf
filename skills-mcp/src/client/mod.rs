//! The client side: an MCP server's skills as a `skills-install` source, and its tools as
//! skills-core `Tool`s.
//!
//! Threat: everything a remote server sends — a manifest whose paths escape the skill
//! (`skill://x/../../.bashrc`, another skill's URI), digests that lie, files bigger than
//! promised, millions of entries, one endless message, malformed JSON-RPC, answers that
//! never come. Guarantee: [`McpSkillSource::fetch_checked`] (and the `SkillSource` `fetch`) returns a package only when the
//! `skills/get` entry passes SEP-2640's structural rules (rmcp's `Skill::validate`), every
//! manifest path is inside the skill ([`relative_to_skill`](crate::protocol::relative_to_skill)), the manifest's count and
//! sizes are within [`ClientLimits`] before any file is read, and every file read matches
//! its manifest size and `sha256:` digest; each message is capped (stdio: a line cap that
//! closes the transport; HTTP: rmcp's body and event caps) and each request is bounded in
//! time. Any failure is a typed [`Error`]; nothing is written here at all — the install
//! pipeline writes only after validation, scan and digest, so a refused fetch leaves every
//! store as it was. An MCP origin's trust path is `mcp/<server id>/<skill>`: `community`
//! unless the host's `TrustedSources` lists `mcp/<server id>`.

mod bounded;
mod fetch;
mod tools;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use rmcp::RoleClient;
use rmcp::model::{
    ClientCapabilities, ClientConfig, ExtensionCapabilities, Implementation, JsonObject,
    ProtocolVersion,
};
use rmcp::service::{ClientLifecycleMode, ClientServiceExt, RunningService, ServiceError};
use skills_install::PackageLimits;
use tokio::io::{AsyncRead, AsyncWrite};

pub use fetch::{check_entry, file_bytes};
pub use tools::{McpToolCache, import_tools};

use crate::error::{Error, Result};
use crate::protocol::SKILLS_EXTENSION_ID;
use bounded::LineCap;

/// Bounds on what the client accepts from a server.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct ClientLimits {
    /// Largest single message (one JSON-RPC line on stdio, one body or event on HTTP);
    /// default 16 MiB.
    pub max_message_bytes: usize,
    /// How long one request may take, connection set-up included; default 30 s.
    pub request_timeout: Duration,
    /// Most skills read from `skills/list` (across pages); default 10,000.
    pub max_listed_skills: usize,
    /// Most `skills/list` pages followed; default 100.
    pub max_pages: usize,
    /// File count and size limits of one fetched skill (skills-install's own).
    pub package: PackageLimits,
}

impl Default for ClientLimits {
    fn default() -> Self {
        ClientLimits {
            max_message_bytes: 16 * 1024 * 1024,
            request_timeout: Duration::from_secs(30),
            max_listed_skills: 10_000,
            max_pages: 100,
            package: PackageLimits::default(),
        }
    }
}

/// A connected MCP server as a skill source (see the module docs for what is checked).
/// Cheap to clone; the connection closes when the last clone is dropped.
#[derive(Clone)]
pub struct McpSkillSource {
    server_id: String,
    service: Arc<RunningService<RoleClient, ClientConfig>>,
    limits: ClientLimits,
    tripped: Arc<AtomicBool>,
    /// A child server process, killed when the source is dropped.
    _child: Option<Arc<tokio::sync::Mutex<tokio::process::Child>>>,
}

impl std::fmt::Debug for McpSkillSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpSkillSource")
            .field("server_id", &self.server_id)
            .field("limits", &self.limits)
            .finish_non_exhaustive()
    }
}

/// What this client announces: the skills extension, nothing else.
fn client_config() -> ClientConfig {
    let mut capabilities = ClientCapabilities::default();
    let mut extensions = ExtensionCapabilities::new();
    extensions.insert(SKILLS_EXTENSION_ID.to_owned(), JsonObject::new());
    capabilities.extensions = Some(extensions);
    ClientConfig::new(
        capabilities,
        Implementation::new("skills-mcp", env!("CARGO_PKG_VERSION")),
    )
}

/// `server/discover` at `2026-07-28`, the revision the skills extension is defined for
/// (FastMCP 4 and rmcp 3.11 serve skills only there). No fallback to the legacy handshake:
/// rmcp's automatic fallback races discovery against a fixed 10 s, and a slow-starting
/// server's late answer then collides with the fallback's request; a legacy-only server is
/// a typed `Transport` error instead.
fn lifecycle() -> ClientLifecycleMode {
    ClientLifecycleMode::Discover {
        preferred_versions: vec![ProtocolVersion::V_2026_07_28],
    }
}

/// Checks a server id: it becomes a trust-path segment, so `a-z 0-9 - . _ :` only.
fn check_server_id(id: &str) -> Result<()> {
    let ok = !id.is_empty()
        && id.len() <= 128
        && !id.starts_with('.')
        && id.bytes().all(|b| {
            b.is_ascii_lowercase() || b.is_ascii_digit() || matches!(b, b'-' | b'.' | b'_' | b':')
        });
    if ok {
        Ok(())
    } else {
        Err(Error::Config(format!(
            "server id `{}` must be 1-128 characters of a-z, 0-9, `-`, `.`, `_`, `:`",
            crate::error::shown(id)
        )))
    }
}

impl McpSkillSource {
    /// Connects over a byte stream (a socket, an in-process pipe) with default limits.
    /// `server_id` names the server in trust paths (`mcp/<server_id>/<skill>`).
    pub async fn connect_stream<S>(server_id: &str, stream: S) -> Result<Self>
    where
        S: AsyncRead + AsyncWrite + Send + Unpin + 'static,
    {
        Self::connect_stream_with(server_id, stream, ClientLimits::default()).await
    }

    /// [`connect_stream`](Self::connect_stream) with other limits.
    pub async fn connect_stream_with<S>(
        server_id: &str,
        stream: S,
        limits: ClientLimits,
    ) -> Result<Self>
    where
        S: AsyncRead + AsyncWrite + Send + Unpin + 'static,
    {
        let (read, write) = tokio::io::split(stream);
        Self::connect_pipes(server_id, read, write, limits, None).await
    }

    /// Spawns `command` (a stdio MCP server) and connects to its standard input and output;
    /// its standard error is discarded and the process is killed when the source is dropped.
    pub async fn connect_command(
        server_id: &str,
        mut command: tokio::process::Command,
        limits: ClientLimits,
    ) -> Result<Self> {
        check_server_id(server_id)?;
        command
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .kill_on_drop(true);
        let mut child = command
            .spawn()
            .map_err(|e| Error::Transport(format!("cannot start the server: {e}")))?;
        let (Some(stdout), Some(stdin)) = (child.stdout.take(), child.stdin.take()) else {
            return Err(Error::Transport("the server's pipes are missing".into()));
        };
        let child = Arc::new(tokio::sync::Mutex::new(child));
        Self::connect_pipes(server_id, stdout, stdin, limits, Some(child)).await
    }

    /// Connects to a streamable HTTP endpoint (`http://127.0.0.1:8765/mcp`), sending
    /// `bearer_token` when given. (rmcp's reqwest client: a build with reqwest's
    /// `rustls-no-provider` must install a rustls crypto provider first, as the `skills`
    /// command does.)
    pub async fn connect_http(
        server_id: &str,
        url: &str,
        bearer_token: Option<&str>,
        limits: ClientLimits,
    ) -> Result<Self> {
        use rmcp::transport::StreamableHttpClientTransport;
        use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
        check_server_id(server_id)?;
        let mut config = StreamableHttpClientTransportConfig::with_uri(url.to_owned());
        if let Some(token) = bearer_token {
            config = config.auth_header(token.to_owned());
        }
        config.max_sse_event_size = limits.max_message_bytes;
        let transport = StreamableHttpClientTransport::from_config(config);
        let service = tokio::time::timeout(
            limits.request_timeout,
            client_config().serve_with_lifecycle(transport, lifecycle()),
        )
        .await
        .map_err(|_| Error::Timeout {
            what: "connecting".into(),
            seconds: limits.request_timeout.as_secs(),
        })?
        .map_err(|e| Error::Transport(e.to_string()))?;
        Ok(McpSkillSource {
            server_id: server_id.to_owned(),
            service: Arc::new(service),
            limits,
            tripped: Arc::new(AtomicBool::new(false)),
            _child: None,
        })
    }

    async fn connect_pipes<R, W>(
        server_id: &str,
        read: R,
        write: W,
        limits: ClientLimits,
        child: Option<Arc<tokio::sync::Mutex<tokio::process::Child>>>,
    ) -> Result<Self>
    where
        R: AsyncRead + Send + Unpin + 'static,
        W: AsyncWrite + Send + Unpin + 'static,
    {
        check_server_id(server_id)?;
        let (read, tripped) = LineCap::new(read, limits.max_message_bytes);
        let transport = rmcp::transport::async_rw::AsyncRwTransport::new_client(read, write)
            .with_max_line_length(limits.max_message_bytes.saturating_add(1));
        let connected = tokio::time::timeout(
            limits.request_timeout,
            client_config().serve_with_lifecycle(transport, lifecycle()),
        )
        .await;
        let service = match connected {
            Err(_) => {
                return Err(Error::Timeout {
                    what: "connecting".into(),
                    seconds: limits.request_timeout.as_secs(),
                });
            }
            Ok(Err(_)) if tripped.load(Ordering::Relaxed) => {
                return Err(Error::TooLarge {
                    what: "a message from the server".into(),
                    limit: limits.max_message_bytes as u64,
                });
            }
            Ok(Err(e)) => return Err(Error::Transport(e.to_string())),
            Ok(Ok(service)) => service,
        };
        Ok(McpSkillSource {
            server_id: server_id.to_owned(),
            service: Arc::new(service),
            limits,
            tripped,
            _child: child,
        })
    }

    /// The server id trust paths begin with (`mcp/<id>`).
    pub fn server_id(&self) -> &str {
        &self.server_id
    }

    /// The limits in force.
    pub fn limits(&self) -> &ClientLimits {
        &self.limits
    }

    /// Runs one request under the timeout, mapping rmcp's errors to this crate's.
    pub(crate) async fn request<T, F>(&self, what: &str, future: F) -> Result<T>
    where
        F: std::future::Future<Output = std::result::Result<T, ServiceError>>,
    {
        let outcome = tokio::time::timeout(self.limits.request_timeout, future).await;
        match outcome {
            Err(_) => Err(Error::Timeout {
                what: what.to_owned(),
                seconds: self.limits.request_timeout.as_secs(),
            }),
            Ok(Ok(value)) => Ok(value),
            Ok(Err(_)) if self.tripped.load(Ordering::Relaxed) => Err(Error::TooLarge {
                what: format!("the answer to {what}"),
                limit: self.limits.max_message_bytes as u64,
            }),
            Ok(Err(ServiceError::McpError(e))) => Err(Error::Server {
                what: what.to_owned(),
                code: e.code.0,
                message: crate::error::shown(&e.message),
            }),
            Ok(Err(ServiceError::UnexpectedResponse)) => Err(Error::Malformed {
                what: what.to_owned(),
                message: "the result has the wrong shape".into(),
            }),
            Ok(Err(e)) => Err(Error::Transport(crate::error::shown(&e.to_string()))),
        }
    }

    /// The rmcp peer, for requests this type does not wrap (their answers are rmcp's,
    /// unchecked by this crate; only the timeouts and message cap still apply).
    pub fn peer(&self) -> &rmcp::Peer<RoleClient> {
        self.service.peer()
    }
}
