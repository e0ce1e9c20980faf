//! Streamable HTTP: rmcp's service behind a bearer-token check, on loopback by default.
//!
//! Threat: another local user or process, a web page (DNS rebinding) or a network peer
//! calling the endpoint, and a token recovered by timing its comparison.
//! Guarantee: [`SkillsMcpServer::bind_http`] refuses a non-loopback address unless
//! [`HttpOptions::allow_non_loopback`] says otherwise; every request without
//! `Authorization: Bearer <token>` equal to the host's token gets `401` before it reaches
//! rmcp (the comparison hashes both sides and compares the digests in constant time, so
//! neither the token's length nor its prefix leaks); rmcp then checks the `Host` header
//! against loopback names (or the host's list) and caps the request body.

use std::net::SocketAddr;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{StatusCode, header};
use axum::middleware::Next;
use axum::response::Response;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use sha2::{Digest, Sha256};
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

use super::SkillsMcpServer;
use crate::error::{Error, Result};

/// The path the MCP endpoint is served at.
pub const MCP_PATH: &str = "/mcp";

/// How the HTTP endpoint listens.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct HttpOptions {
    /// Listen on an address that is not loopback (off by default).
    pub allow_non_loopback: bool,
    /// `Host` header values accepted besides loopback names (a public deployment's name).
    pub allowed_hosts: Vec<String>,
}

impl HttpOptions {
    /// Allows a non-loopback address, accepting `hosts` in the `Host` header.
    #[must_use]
    pub fn non_loopback(hosts: impl IntoIterator<Item = impl Into<String>>) -> Self {
        HttpOptions {
            allow_non_loopback: true,
            allowed_hosts: hosts.into_iter().map(Into::into).collect(),
        }
    }
}

/// A running HTTP endpoint.
#[derive(Debug)]
pub struct HttpHandle {
    local_addr: SocketAddr,
    stop: Option<oneshot::Sender<()>>,
    task: JoinHandle<std::io::Result<()>>,
}

impl HttpHandle {
    /// The address it listens on (the port chosen when `0` was asked for).
    pub fn local_addr(&self) -> SocketAddr {
        self.local_addr
    }

    /// The endpoint's URL, `http://<addr>/mcp`.
    pub fn url(&self) -> String {
        format!("http://{}{MCP_PATH}", self.local_addr)
    }

    /// Stops listening and waits for the server task.
    pub async fn shutdown(mut self) -> Result<()> {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        self.wait().await
    }

    /// Waits until the server stops.
    pub async fn wait(&mut self) -> Result<()> {
        match (&mut self.task).await {
            Ok(result) => result.map_err(|source| Error::Io {
                action: "serving HTTP".into(),
                source,
            }),
            Err(e) => Err(Error::Transport(e.to_string())),
        }
    }
}

/// Constant-time equality of two secrets of any length: their SHA-256 digests are compared
/// with every byte examined.
fn same_secret(given: &[u8], expected: &[u8]) -> bool {
    let (a, b) = (Sha256::digest(given), Sha256::digest(expected));
    a.iter()
        .zip(b.iter())
        .fold(0u8, |acc, (x, y)| acc | (x ^ y))
        == 0
}

async fn require_bearer(
    State(token): State<std::sync::Arc<str>>,
    request: Request,
    next: Next,
) -> Response {
    let given = request
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .unwrap_or_default();
    if same_secret(given.as_bytes(), token.as_bytes()) {
        next.run(request).await
    } else {
        let mut response = Response::new(Body::from("missing or wrong bearer token\n"));
        *response.status_mut() = StatusCode::UNAUTHORIZED;
        response.headers_mut().insert(
            header::WWW_AUTHENTICATE,
            header::HeaderValue::from_static("Bearer"),
        );
        response
    }
}

impl SkillsMcpServer {
    /// Serves over streamable HTTP at `addr` (`http://<addr>/mcp`) until the process ends,
    /// requiring `bearer_token`. Loopback addresses only; see [`bind_http`](Self::bind_http).
    pub async fn serve_http(self, addr: SocketAddr, bearer_token: impl Into<String>) -> Result<()> {
        let mut handle = self
            .bind_http(addr, bearer_token, HttpOptions::default())
            .await?;
        handle.wait().await
    }

    /// Binds the streamable HTTP endpoint and serves it in a background task.
    pub async fn bind_http(
        self,
        addr: SocketAddr,
        bearer_token: impl Into<String>,
        options: HttpOptions,
    ) -> Result<HttpHandle> {
        let token: String = bearer_token.into();
        if token.trim().len() < 16 {
            return Err(Error::Config(
                "the bearer token must have at least 16 characters".into(),
            ));
        }
        if !addr.ip().is_loopback() && !options.allow_non_loopback {
            return Err(Error::Config(format!(
                "{addr} is not a loopback address; pass HttpOptions::non_loopback to listen on it"
            )));
        }
        let mut config = StreamableHttpServerConfig::default();
        if !options.allowed_hosts.is_empty() {
            let mut hosts = config.allowed_hosts.clone();
            hosts.extend(options.allowed_hosts.iter().cloned());
            config = config.with_allowed_hosts(hosts);
        }
        let server = self.clone();
        let service = StreamableHttpService::new(
            move || Ok(server.clone()),
            std::sync::Arc::new(LocalSessionManager::default()),
            config,
        );
        let token: std::sync::Arc<str> = token.into();
        let router = axum::Router::new()
            .nest_service(MCP_PATH, service)
            .layer(axum::middleware::from_fn_with_state(token, require_bearer));
        let listener = tokio::net::TcpListener::bind(addr)
            .await
            .map_err(|source| Error::Io {
                action: format!("binding {addr}"),
                source,
            })?;
        let local_addr = listener.local_addr().map_err(|source| Error::Io {
            action: "reading the bound address".into(),
            source,
        })?;
        let (stop, stopped) = oneshot::channel::<()>();
        let task = tokio::spawn(async move {
            axum::serve(listener, router)
                .with_graceful_shutdown(async move {
                    let _ = stopped.await;
                })
                .await
        });
        Ok(HttpHandle {
            local_addr,
            stop: Some(stop),
            task,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::same_secret;

    #[test]
    fn secrets_compare_by_value_only() {
        assert!(same_secret(b"0123456789abcdef", b"0123456789abcdef"));
        assert!(!same_secret(b"0123456789abcdeX", b"0123456789abcdef"));
        assert!(!same_secret(b"", b"0123456789abcdef"));
        assert!(!same_secret(b"0123456789abcdef0", b"0123456789abcdef"));
    }
}
