//! Streamable HTTP: rmcp's service behind a bearer-token check and per-client limits, on
//! loopback by default.
//!
//! Threat: another local user or process, a web page (DNS rebinding) or a network peer
//! calling the endpoint; a token guessed because it was short or patterned, or recovered by
//! timing its comparison; and a client holding the token (a runaway agent loop, a leaked
//! token) exhausting the host with requests, requests left in flight, or new clients.
//!
//! Guarantee:
//! - [`SkillsMcpServer::bind_http`] refuses a token whose estimated entropy is below
//!   [`MIN_TOKEN_BITS`] (see [`check_bearer_token`] for the estimate), and a non-loopback
//!   address unless [`HttpOptions::allow_non_loopback`] says otherwise.
//! - Every request without `Authorization: Bearer <token>` equal to the host's token gets
//!   `401` before it reaches rmcp. The given value is hashed and its digest compared with the
//!   token's in constant time, with no exit that depends on its length or content, so
//!   neither the token's length nor its prefix leaks.
//! - Each authenticated client gets at most [`HttpOptions::max_requests_per_minute`]
//!   requests a minute (a burst of that many, then refilled evenly) and at most
//!   [`HttpOptions::max_concurrent_requests`] in flight (a request is in flight until its
//!   response body, an SSE stream included, has ended or been dropped); past either the
//!   answer is `429` with `Retry-After`, before rmcp sees the request.
//! - The table of clients holds at most [`HttpOptions::max_tracked_clients`] entries: an
//!   entry is dropped once it is idle (nothing in flight, budget refilled, so forgetting it
//!   loses nothing), and a new client arriving while every entry is busy gets `503` with
//!   `Retry-After`.
//! - rmcp then checks the `Host` header against loopback names (or the host's list) and caps
//!   the request body.
//!
//! A client is its token's SHA-256 digest plus its `Mcp-Session-Id` when rmcp knows that
//! session, else its peer's IP address. Limits of the guarantee: requests without the token
//! are not counted (so nobody without it can spend a client's budget; each costs one
//! hash); a forged or stale session id is charged to the peer address, never given a
//! fresh budget; clients without a session (before `initialize`, or on the stateless
//! `2026-07-28` protocol) share their address's budget, which on loopback means every local
//! client; and work rmcp already started for a request whose connection closed may finish
//! after the request stopped counting.

use std::collections::HashMap;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use axum::body::{Body, HttpBody};
use axum::extract::{ConnectInfo, Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::Response;
use futures::StreamExt;
use rmcp::transport::streamable_http_server::session::SessionManager;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use sha2::{Digest, Sha256};
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

use super::SkillsMcpServer;
use crate::error::{Error, Result};

/// The path the MCP endpoint is served at.
pub const MCP_PATH: &str = "/mcp";

/// The least estimated entropy, in bits, [`SkillsMcpServer::bind_http`] accepts in a bearer
/// token: out of reach of online guessing and of offline search alike.
pub const MIN_TOKEN_BITS: u32 = 128;

/// How a good token is made, quoted in every refusal.
const TOKEN_ADVICE: &str =
    "make one with `openssl rand -hex 32` or `head -c 32 /dev/urandom | base64`";

/// Fewest distinct characters a token may use. A random 32-character hex token uses fewer
/// than 8 of its 16 symbols with odds below 1 in 10^7; a hand-made one often does.
const MIN_DISTINCT_CHARS: usize = 8;

/// The longest token considered (far above the 64 of `openssl rand -hex 32`); it also keeps
/// the pattern checks, quadratic in the length, instantaneous.
const MAX_TOKEN_LEN: usize = 1024;

/// The longest `Mcp-Session-Id` looked up (rmcp's ids are UUIDs); longer ones are charged to
/// the peer address without a lookup.
const MAX_SESSION_ID_LEN: usize = 128;

/// How the HTTP endpoint listens, and what each client may ask of it.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct HttpOptions {
    /// Listen on an address that is not loopback (off by default).
    pub allow_non_loopback: bool,
    /// `Host` header values accepted besides loopback names (a public deployment's name).
    pub allowed_hosts: Vec<String>,
    /// Requests a client may make per minute: a burst of this many, then one every
    /// `60 s / n` (default 600, ten a second: an agent syncing a catalog of hundreds of
    /// files fits in one burst, a loop calling as fast as it can does not). At least 1.
    pub max_requests_per_minute: u32,
    /// Requests a client may have in flight at once, open SSE streams included (default 16:
    /// an agent rarely has more than a few calls and its notification stream open). At
    /// least 1.
    pub max_concurrent_requests: u32,
    /// Clients tracked at once; a new client arriving while every tracked one is busy gets
    /// `503` (default 1024, about a hundred kilobytes of table). At least 1.
    pub max_tracked_clients: usize,
}

impl Default for HttpOptions {
    fn default() -> Self {
        HttpOptions {
            allow_non_loopback: false,
            allowed_hosts: Vec::new(),
            max_requests_per_minute: 600,
            max_concurrent_requests: 16,
            max_tracked_clients: 1024,
        }
    }
}

impl HttpOptions {
    /// Allows a non-loopback address, accepting `hosts` in the `Host` header.
    #[must_use]
    pub fn non_loopback(hosts: impl IntoIterator<Item = impl Into<String>>) -> Self {
        HttpOptions {
            allow_non_loopback: true,
            allowed_hosts: hosts.into_iter().map(Into::into).collect(),
            ..HttpOptions::default()
        }
    }

    /// Sets [`max_requests_per_minute`](Self::max_requests_per_minute).
    #[must_use]
    pub fn with_max_requests_per_minute(mut self, n: u32) -> Self {
        self.max_requests_per_minute = n;
        self
    }

    /// Sets [`max_concurrent_requests`](Self::max_concurrent_requests).
    #[must_use]
    pub fn with_max_concurrent_requests(mut self, n: u32) -> Self {
        self.max_concurrent_requests = n;
        self
    }

    /// Sets [`max_tracked_clients`](Self::max_tracked_clients).
    #[must_use]
    pub fn with_max_tracked_clients(mut self, n: usize) -> Self {
        self.max_tracked_clients = n;
        self
    }
}

/// A running HTTP endpoint.
#[derive(Debug)]
pub struct HttpHandle {
    local_addr: SocketAddr,
    limiter: Arc<Limiter>,
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

    /// How many clients the rate and concurrency limits track now (at most
    /// [`HttpOptions::max_tracked_clients`]).
    pub fn tracked_clients(&self) -> usize {
        self.limiter.tracked()
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

/// Checks that `token` is fit to guard the endpoint, as [`SkillsMcpServer::bind_http`] does;
/// the error says why not and how to make a good one, and never quotes the token.
///
/// The estimate is an upper bound on the entropy of whatever generated the token: its length
/// (trailing `=` padding not counted) times log2 of the size of the smallest standard
/// alphabet holding all its characters: decimal (10), lowercase or uppercase hex (16),
/// alphanumeric (62), base64 or base64url (64), printable ASCII without space (94). It must
/// reach [`MIN_TOKEN_BITS`]: 32 hex characters (128 bits) or 22 base64url characters (132)
/// pass, `password1234567890` (18 alphanumeric, 107) does not. The estimate cannot tell a
/// random token from words that happen to be long enough, so tokens that are evidently not
/// random are refused too: fewer than 8 distinct characters, a block repeated, or mostly a
/// run of repeated or consecutive characters (`abcdef…`, `0123…`). The token must be
/// printable ASCII without spaces, since it travels in an HTTP header.
pub fn check_bearer_token(token: &str) -> Result<()> {
    token_strength(token)
        .map(|_| ())
        .map_err(|why| Error::Config(format!("the bearer token {why}; {TOKEN_ADVICE}")))
}

/// The estimated bits of `token`, or why it is refused (a phrase following "the token").
fn token_strength(token: &str) -> std::result::Result<f64, String> {
    if token.len() > MAX_TOKEN_LEN {
        return Err(format!("is longer than {MAX_TOKEN_LEN} characters"));
    }
    if !token.bytes().all(|b| b.is_ascii_graphic()) {
        return Err("must be printable ASCII without spaces or control characters".into());
    }
    let body = token.trim_end_matches('=').as_bytes();
    let mut seen = [false; 128];
    for &b in body {
        if let Some(slot) = seen.get_mut(usize::from(b)) {
            *slot = true;
        }
    }
    let distinct = seen.iter().filter(|s| **s).count();
    if distinct < MIN_DISTINCT_CHARS {
        return Err(format!(
            "uses {distinct} distinct characters, fewer than {MIN_DISTINCT_CHARS}: not a random one"
        ));
    }
    if let Some(period) =
        (1..=body.len() / 2).find(|&p| body.iter().zip(&body[p..]).all(|(a, b)| a == b))
    {
        return Err(format!("repeats a block of {period} characters"));
    }
    // A step of -1, 0 or +1 between neighbours happens about 3 times in 16 in random hex;
    // three quarters or more is a run typed by hand (for a random 32-character hex token the
    // odds are below 1 in 10^11, and lower for larger alphabets).
    let steps = body.len().saturating_sub(1);
    let small = body.windows(2).filter(|w| w[0].abs_diff(w[1]) <= 1).count();
    if steps > 0 && small * 4 >= steps * 3 {
        return Err("is mostly a run of repeated or consecutive characters".into());
    }
    let (name, size) = ALPHABETS
        .iter()
        .find(|(_, _, holds)| body.iter().all(|&b| holds(b)))
        .map_or(("printable ASCII", 94), |(name, size, _)| (*name, *size));
    let length = u32::try_from(body.len()).unwrap_or(u32::MAX);
    let bits = f64::from(length) * f64::from(size).log2();
    if bits < f64::from(MIN_TOKEN_BITS) {
        return Err(format!(
            "carries at most {bits:.0} bits ({} characters of the {name} alphabet of {size}); at least {MIN_TOKEN_BITS} are required",
            body.len()
        ));
    }
    Ok(bits)
}

/// A named alphabet: its name, its size, and whether it holds a byte.
type Alphabet = (&'static str, u32, fn(u8) -> bool);

/// Standard token alphabets, smallest first: the first holding every character sizes the
/// estimate (anything else printable counts as 94 symbols).
const ALPHABETS: &[Alphabet] = &[
    ("decimal", 10, is_decimal),
    ("lowercase hex", 16, is_lower_hex),
    ("uppercase hex", 16, is_upper_hex),
    ("alphanumeric", 62, is_alphanumeric),
    ("base64", 64, is_base64),
    ("base64url", 64, is_base64url),
];

fn is_decimal(b: u8) -> bool {
    b.is_ascii_digit()
}
fn is_lower_hex(b: u8) -> bool {
    b.is_ascii_digit() || (b'a'..=b'f').contains(&b)
}
fn is_upper_hex(b: u8) -> bool {
    b.is_ascii_digit() || (b'A'..=b'F').contains(&b)
}
fn is_alphanumeric(b: u8) -> bool {
    b.is_ascii_alphanumeric()
}
fn is_base64(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'+' || b == b'/'
}
fn is_base64url(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'-' || b == b'_'
}

/// Constant-time equality of two secrets of any length: their SHA-256 digests are compared
/// with every byte examined. The server itself hashes its token once, at bind, and each
/// request's token once, so it calls [`same_digest`] directly.
#[cfg(test)]
fn same_secret(given: &[u8], expected: &[u8]) -> bool {
    same_digest(
        &Sha256::digest(given).into(),
        &Sha256::digest(expected).into(),
    )
}

/// Constant-time equality of two digests: every byte is examined whatever differs first.
fn same_digest(a: &[u8; 32], b: &[u8; 32]) -> bool {
    a.iter()
        .zip(b.iter())
        .fold(0u8, |acc, (x, y)| acc | (x ^ y))
        == 0
}

/// Who is asking, within one token.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum Caller {
    /// An MCP session rmcp knows.
    Session(Arc<str>),
    /// Anything else, by peer IP address (not port: a new connection is no new budget).
    Peer(IpAddr),
}

/// A client the limits are kept for.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct ClientKey {
    token: [u8; 32],
    caller: Caller,
}

#[derive(Debug)]
struct ClientState {
    /// The generic cell rate algorithm's theoretical arrival time: the request budget is
    /// full when this is not after now, and a request is refused when admitting it would put
    /// this more than a whole burst ahead of now.
    tat: Instant,
    in_flight: u32,
}

impl ClientState {
    /// Forgetting an idle client loses nothing: a fresh entry would be the same.
    fn idle(&self, now: Instant) -> bool {
        self.in_flight == 0 && self.tat <= now
    }
}

#[derive(Debug, Default)]
struct Table {
    clients: HashMap<ClientKey, ClientState>,
    /// While the table is full of busy clients, the earliest a sweep could free a place:
    /// new clients before then are refused without scanning the table again.
    full_until: Option<Instant>,
}

/// The per-client request rate and concurrency limits.
#[derive(Debug)]
struct Limiter {
    /// One request's share of the budget: a minute divided by the requests per minute.
    interval: Duration,
    /// A whole budget: `interval` times the requests per minute (at most a minute).
    burst: Duration,
    per_minute: u32,
    max_concurrent: u32,
    max_clients: usize,
    table: Mutex<Table>,
}

/// Why a request was refused before rmcp.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Refusal {
    /// Over the request rate: retry after this long.
    Rate(Duration),
    /// Over the requests in flight.
    Concurrency,
    /// The client table is full of busy clients: retry after this long.
    Full(Duration),
}

/// One admitted request: counts as in flight until dropped.
#[derive(Debug)]
struct Permit {
    limiter: Arc<Limiter>,
    key: ClientKey,
}

impl Drop for Permit {
    fn drop(&mut self) {
        let now = Instant::now();
        let mut table = self.limiter.lock();
        let (idle, done) = match table.clients.get_mut(&self.key) {
            Some(state) => {
                state.in_flight = state.in_flight.saturating_sub(1);
                (state.idle(now), state.in_flight == 0)
            }
            None => (false, false),
        };
        if idle {
            table.clients.remove(&self.key);
        } else if done {
            // It turns idle when its budget refills, maybe before the date a full table gave:
            // let the next newcomer look again.
            table.full_until = None;
        }
    }
}

impl Limiter {
    fn new(options: &HttpOptions) -> Result<Limiter> {
        let minute = Duration::from_secs(60);
        let interval = minute
            .checked_div(options.max_requests_per_minute)
            .filter(|_| options.max_concurrent_requests > 0 && options.max_tracked_clients > 0)
            .ok_or_else(|| {
                Error::Config(
                    "HttpOptions: max_requests_per_minute, max_concurrent_requests and max_tracked_clients must be at least 1".into(),
                )
            })?;
        Ok(Limiter {
            interval,
            burst: interval
                .checked_mul(options.max_requests_per_minute)
                .unwrap_or(minute),
            per_minute: options.max_requests_per_minute,
            max_concurrent: options.max_concurrent_requests,
            max_clients: options.max_tracked_clients,
            table: Mutex::new(Table::default()),
        })
    }

    /// The table, even after a panic elsewhere while it was held: its entries stay
    /// consistent (each update is a single assignment), so refusing all traffic would be
    /// worse than carrying on.
    fn lock(&self) -> std::sync::MutexGuard<'_, Table> {
        self.table.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn tracked(&self) -> usize {
        self.lock().clients.len()
    }

    /// Admits one request of `key` at `now`, or says why not. A refused request costs the
    /// client nothing, so retrying after `Retry-After` always succeeds if it waited alone.
    fn admit(
        self: &Arc<Self>,
        key: ClientKey,
        now: Instant,
    ) -> std::result::Result<Permit, Refusal> {
        let mut table = self.lock();
        if !table.clients.contains_key(&key) && table.clients.len() >= self.max_clients {
            if let Some(until) = table.full_until.filter(|until| now < *until) {
                return Err(Refusal::Full(until.saturating_duration_since(now)));
            }
            table.clients.retain(|_, state| !state.idle(now));
            if table.clients.len() >= self.max_clients {
                // The first entry with nothing in flight turns idle when its budget has
                // refilled; entries with requests in flight give no date, so say a second.
                let wait = table
                    .clients
                    .values()
                    .filter(|state| state.in_flight == 0)
                    .map(|state| state.tat.saturating_duration_since(now))
                    .min()
                    .unwrap_or(Duration::from_secs(1));
                table.full_until = now.checked_add(wait);
                return Err(Refusal::Full(wait));
            }
            table.full_until = None;
        }
        let state = table.clients.entry(key.clone()).or_insert(ClientState {
            tat: now,
            in_flight: 0,
        });
        if state.in_flight >= self.max_concurrent {
            return Err(Refusal::Concurrency);
        }
        let Some(next) = state.tat.max(now).checked_add(self.interval) else {
            return Err(Refusal::Rate(self.burst));
        };
        let ahead = next.saturating_duration_since(now);
        if ahead > self.burst {
            return Err(Refusal::Rate(ahead.saturating_sub(self.burst)));
        }
        state.tat = next;
        state.in_flight += 1;
        Ok(Permit {
            limiter: Arc::clone(self),
            key,
        })
    }
}

/// What the middleware needs: the token's digest, the limits, and rmcp's sessions (to tell
/// a real session id from a forged one).
struct Gate {
    token_digest: [u8; 32],
    limiter: Arc<Limiter>,
    sessions: Arc<LocalSessionManager>,
}

/// A short plain-text answer refusing the request.
fn refusal(status: StatusCode, body: String, retry_after: Option<Duration>) -> Response {
    let mut response = Response::new(Body::from(body));
    *response.status_mut() = status;
    if let Some(wait) = retry_after {
        // Whole seconds, rounded up and at least one, so a client honouring it is admitted.
        let secs = (wait.as_secs() + u64::from(wait.subsec_nanos() > 0)).max(1);
        response
            .headers_mut()
            .insert(header::RETRY_AFTER, HeaderValue::from(secs));
    }
    response
}

async fn guard(State(gate): State<Arc<Gate>>, request: Request, next: Next) -> Response {
    // A missing or malformed header hashes the empty string: the same work as any token.
    let given = request
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .unwrap_or_default();
    let given: [u8; 32] = Sha256::digest(given.as_bytes()).into();
    if !same_digest(&given, &gate.token_digest) {
        let mut response = refusal(
            StatusCode::UNAUTHORIZED,
            "missing or wrong bearer token\n".into(),
            None,
        );
        response
            .headers_mut()
            .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
        return response;
    }
    let caller = match request
        .headers()
        .get("mcp-session-id")
        .and_then(|v| v.to_str().ok())
        .filter(|id| id.len() <= MAX_SESSION_ID_LEN)
    {
        Some(id) if known_session(&gate.sessions, id).await => Caller::Session(id.into()),
        _ => Caller::Peer(
            request
                .extensions()
                .get::<ConnectInfo<SocketAddr>>()
                .map_or(IpAddr::V4(Ipv4Addr::UNSPECIFIED), |info| {
                    info.0.ip().to_canonical()
                }),
        ),
    };
    let key = ClientKey {
        token: given,
        caller,
    };
    let permit = match gate.limiter.admit(key, Instant::now()) {
        Ok(permit) => permit,
        Err(Refusal::Rate(wait)) => {
            return refusal(
                StatusCode::TOO_MANY_REQUESTS,
                format!(
                    "too many requests: at most {} a minute per client\n",
                    gate.limiter.per_minute
                ),
                Some(wait),
            );
        }
        Err(Refusal::Concurrency) => {
            return refusal(
                StatusCode::TOO_MANY_REQUESTS,
                format!(
                    "too many requests in flight: at most {} at once per client\n",
                    gate.limiter.max_concurrent
                ),
                Some(Duration::from_secs(1)),
            );
        }
        Err(Refusal::Full(wait)) => {
            return refusal(
                StatusCode::SERVICE_UNAVAILABLE,
                format!(
                    "too many clients: at most {} are served at once\n",
                    gate.limiter.max_clients
                ),
                Some(wait),
            );
        }
    };
    let response = next.run(request).await;
    let (parts, body) = response.into_parts();
    if body.size_hint().exact().is_some() {
        // A body of known size is already made: the request is done once its head is.
        drop(permit);
        return Response::from_parts(parts, body);
    }
    // A streamed body (rmcp's SSE) carries the work: the request stays in flight until the
    // stream ends or the client goes away, when the stream and its permit are dropped.
    let body = body.into_data_stream().map(move |chunk| {
        let _in_flight = &permit;
        chunk
    });
    Response::from_parts(parts, Body::from_stream(body))
}

/// Whether rmcp has the session `id` open (lookup errors count as no).
async fn known_session(sessions: &LocalSessionManager, id: &str) -> bool {
    sessions.has_session(&id.into()).await.unwrap_or(false)
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
    ///
    /// Refuses (with [`Error::Config`], before binding) a token [`check_bearer_token`]
    /// refuses, a non-loopback `addr` without [`HttpOptions::allow_non_loopback`], and a
    /// limit of 0 in `options`.
    pub async fn bind_http(
        self,
        addr: SocketAddr,
        bearer_token: impl Into<String>,
        options: HttpOptions,
    ) -> Result<HttpHandle> {
        let token: String = bearer_token.into();
        check_bearer_token(&token)?;
        if !addr.ip().is_loopback() && !options.allow_non_loopback {
            return Err(Error::Config(format!(
                "{addr} is not a loopback address; pass HttpOptions::non_loopback to listen on it"
            )));
        }
        let limiter = Arc::new(Limiter::new(&options)?);
        let mut config = StreamableHttpServerConfig::default();
        if !options.allowed_hosts.is_empty() {
            let mut hosts = config.allowed_hosts.clone();
            hosts.extend(options.allowed_hosts.iter().cloned());
            config = config.with_allowed_hosts(hosts);
        }
        let server = self.clone();
        let sessions = Arc::new(LocalSessionManager::default());
        let service = StreamableHttpService::new(
            // One handler per MCP session: what a client is granted stays with its session.
            move || Ok(server.new_connection()),
            Arc::clone(&sessions),
            config,
        );
        let gate = Arc::new(Gate {
            token_digest: Sha256::digest(token.as_bytes()).into(),
            limiter: Arc::clone(&limiter),
            sessions,
        });
        let router = axum::Router::new()
            .nest_service(MCP_PATH, service)
            .layer(axum::middleware::from_fn_with_state(gate, guard));
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
            // The peer address is the client's identity when it has no session.
            axum::serve(
                listener,
                router.into_make_service_with_connect_info::<SocketAddr>(),
            )
            .with_graceful_shutdown(async move {
                let _ = stopped.await;
            })
            .await
        });
        Ok(HttpHandle {
            local_addr,
            limiter,
            stop: Some(stop),
            task,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_compare_by_value_only() {
        assert!(same_secret(b"0123456789abcdef", b"0123456789abcdef"));
        assert!(!same_secret(b"0123456789abcdeX", b"0123456789abcdef"));
        assert!(!same_secret(b"", b"0123456789abcdef"));
        assert!(!same_secret(b"0123456789abcdef0", b"0123456789abcdef"));
    }

    #[test]
    fn token_entropy_is_estimated_from_length_and_alphabet() {
        // 32 lowercase hex characters: exactly 128 bits.
        assert_eq!(
            token_strength("5a220db8b55e15a2c7c1eab2dcadafff"),
            Ok(128.0)
        );
        // 22 base64url characters: 132 bits.
        let bits = token_strength("wkbmzCXcmSN-62EPeuaXkg").unwrap();
        assert!((bits - 132.0).abs() < 1e-9, "{bits}");
        // base64 with its padding: the `=` count for nothing.
        let padded = token_strength("rt/1qOokga/47SPapL4jMC+cHe46cngyjVjDeTSaibY=").unwrap();
        assert!((padded - 43.0 * 6.0).abs() < 1e-9, "{padded}");
        for (token, why) in [
            ("aaaaaaaaaaaaaaaa", "distinct"),
            ("password1234567890", "107 bits"),
            ("5a220db8b55e15a2c7c1eab2dcadaff", "124 bits"),
            ("wkbmzCXcmSN-62EPeuaXk", "126 bits"),
            ("0123456789abcdef0123456789abcdef", "block of 16"),
            ("abcdefghijklmnopqrstuvwxyz012345", "run"),
            ("5a220db8b55e15a2 c7c1eab2dcadafff", "printable"),
            ("5a220db8b55e15a2c7c1eab2dcadafff\n", "printable"),
            ("", "distinct"),
            (
                &"5a220db8b55e15a2c7c1eab2dcadafff".repeat(40),
                "longer than 1024",
            ),
        ] {
            let err = token_strength(token).unwrap_err();
            assert!(err.contains(why), "{token:?}: {err}");
        }
        let message = check_bearer_token("password1234567890")
            .unwrap_err()
            .to_string();
        assert!(message.contains("openssl rand -hex 32"), "{message}");
        assert!(
            !message.contains("password"),
            "never quotes the token: {message}"
        );
    }

    fn key(n: u8) -> ClientKey {
        ClientKey {
            token: [7; 32],
            caller: Caller::Peer(IpAddr::V4(Ipv4Addr::new(127, 0, 0, n))),
        }
    }

    fn limiter(per_minute: u32, concurrent: u32, clients: usize) -> Arc<Limiter> {
        let options = HttpOptions::default()
            .with_max_requests_per_minute(per_minute)
            .with_max_concurrent_requests(concurrent)
            .with_max_tracked_clients(clients);
        Arc::new(Limiter::new(&options).unwrap())
    }

    #[test]
    fn a_burst_of_the_minute_budget_then_one_per_interval() {
        let limiter = limiter(6, 100, 10);
        let t0 = Instant::now();
        let mut held = Vec::new();
        for _ in 0..6 {
            held.push(limiter.admit(key(1), t0).unwrap());
        }
        assert_eq!(
            limiter.admit(key(1), t0).unwrap_err(),
            Refusal::Rate(Duration::from_secs(10))
        );
        // Another client is unaffected; the refused request cost nothing.
        held.push(limiter.admit(key(2), t0).unwrap());
        assert_eq!(
            limiter
                .admit(key(1), t0 + Duration::from_secs(4))
                .unwrap_err(),
            Refusal::Rate(Duration::from_secs(6))
        );
        held.push(limiter.admit(key(1), t0 + Duration::from_secs(10)).unwrap());
        assert!(limiter.admit(key(1), t0 + Duration::from_secs(10)).is_err());
    }

    #[test]
    fn requests_in_flight_are_capped_until_their_permit_drops() {
        let limiter = limiter(1000, 2, 10);
        let now = Instant::now();
        let a = limiter.admit(key(1), now).unwrap();
        let _b = limiter.admit(key(1), now).unwrap();
        assert_eq!(
            limiter.admit(key(1), now).unwrap_err(),
            Refusal::Concurrency
        );
        drop(a);
        assert!(limiter.admit(key(1), now).is_ok());
    }

    #[test]
    fn the_table_is_bounded_and_forgets_only_idle_clients() {
        // One request a minute: no budget refills while the test runs, whatever its speed.
        let limiter = limiter(1, 10, 2);
        let t0 = Instant::now();
        drop(limiter.admit(key(1), t0).unwrap());
        drop(limiter.admit(key(2), t0).unwrap());
        assert_eq!(limiter.tracked(), 2, "budgets not yet refilled are kept");
        assert_eq!(
            limiter.admit(key(3), t0).unwrap_err(),
            Refusal::Full(Duration::from_secs(60))
        );
        assert_eq!(limiter.tracked(), 2);
        // A minute on, both budgets have refilled: they are forgotten, the newcomer served.
        let t1 = t0 + Duration::from_secs(60);
        let _held = limiter.admit(key(3), t1).unwrap();
        assert_eq!(limiter.tracked(), 1);
        // Clients with a request in flight are never forgotten, however long it runs.
        let _other = limiter.admit(key(4), t1).unwrap();
        let t2 = t1 + Duration::from_secs(3600);
        assert_eq!(
            limiter.admit(key(5), t2).unwrap_err(),
            Refusal::Full(Duration::from_secs(1))
        );
        assert_eq!(limiter.tracked(), 2);
    }

    #[test]
    fn an_idle_client_leaves_when_its_last_request_ends() {
        let limiter = limiter(60, 10, 2);
        // A request two minutes ago: its budget has refilled by the time the permit drops.
        let past = Instant::now()
            .checked_sub(Duration::from_secs(120))
            .unwrap();
        let permit = limiter.admit(key(1), past).unwrap();
        assert_eq!(limiter.tracked(), 1, "kept while in flight");
        drop(permit);
        assert_eq!(limiter.tracked(), 0);
    }

    #[test]
    fn zero_limits_are_refused() {
        for options in [
            HttpOptions::default().with_max_requests_per_minute(0),
            HttpOptions::default().with_max_concurrent_requests(0),
            HttpOptions::default().with_max_tracked_clients(0),
        ] {
            assert!(matches!(Limiter::new(&options), Err(Error::Config(_))));
        }
    }
}
