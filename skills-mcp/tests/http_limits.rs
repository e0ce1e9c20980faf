//! The HTTP endpoint's start-up token check and per-client limits (issue 34, finding 12),
//! driven over raw HTTP/1.1 on 127.0.0.1 so every status and header is seen as sent.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::net::{Ipv4Addr, SocketAddr};
use std::time::Duration;

use skills_mcp::{HttpHandle, HttpOptions};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpSocket, TcpStream};

/// `openssl rand -hex 32`: 256 bits.
const TOKEN: &str = "14c663ac25a060aab4f5a6f96da9538c198e52857ed64908904f7f10edb6f95e";

const PROTOCOL: &str = "2025-06-18";

async fn serve(options: HttpOptions) -> (tempfile::TempDir, HttpHandle) {
    let dir = common::skills_tree();
    let server = common::directory_server(dir.path()).build().await.unwrap();
    let handle = server
        .bind_http("127.0.0.1:0".parse().unwrap(), TOKEN, options)
        .await
        .unwrap();
    (dir, handle)
}

/// One HTTP answer: status, raw head, body (chunked framing left in: tests only search it).
#[derive(Debug)]
struct Answer {
    status: u16,
    head: String,
    body: String,
}

impl Answer {
    fn header(&self, name: &str) -> Option<&str> {
        self.head.lines().skip(1).find_map(|line| {
            let (key, value) = line.split_once(':')?;
            key.trim()
                .eq_ignore_ascii_case(name)
                .then_some(value.trim())
        })
    }

    /// `Retry-After`, which every refusal must carry, in seconds.
    fn retry_after(&self) -> u64 {
        self.header("retry-after")
            .unwrap_or_else(|| panic!("no Retry-After: {self:?}"))
            .parse()
            .unwrap()
    }
}

/// A connection to `addr` from `from` (127.0.0.1 when `None`); `None` when this system
/// cannot bind that loopback address (only Linux routes all of 127/8 by default).
async fn connect(addr: SocketAddr, from: Option<Ipv4Addr>) -> Option<TcpStream> {
    let Some(from) = from else {
        return Some(TcpStream::connect(addr).await.unwrap());
    };
    let socket = TcpSocket::new_v4().unwrap();
    if socket.bind(SocketAddr::from((from, 0))).is_err() {
        eprintln!("skipping the part from {from}: this system cannot bind it");
        return None;
    }
    Some(socket.connect(addr).await.unwrap())
}

/// A JSON-RPC POST's head (without the blank line ending it), with the token.
fn post_head(session: Option<&str>, length: usize, extra: &str) -> String {
    let session = session
        .map(|id| format!("Mcp-Session-Id: {id}\r\nMCP-Protocol-Version: {PROTOCOL}\r\n"))
        .unwrap_or_default();
    format!(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {TOKEN}\r\n\
         Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n\
         {session}{extra}Content-Length: {length}\r\nConnection: close\r\n"
    )
}

/// Sends one request on `stream` and reads the whole answer (the server closes it).
async fn exchange(mut stream: TcpStream, request: String) -> Answer {
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut raw = Vec::new();
    tokio::time::timeout(Duration::from_secs(10), stream.read_to_end(&mut raw))
        .await
        .expect("an answer within 10 s")
        .unwrap();
    let raw = String::from_utf8_lossy(&raw).into_owned();
    let (head, body) = raw.split_once("\r\n\r\n").unwrap_or((raw.as_str(), ""));
    let status = head
        .split(' ')
        .nth(1)
        .and_then(|code| code.parse().ok())
        .unwrap_or_else(|| panic!("not an HTTP answer: {raw:?}"));
    Answer {
        status,
        head: head.to_owned(),
        body: body.to_owned(),
    }
}

/// POSTs `body` from 127.0.0.1, in `session` when given.
async fn post(addr: SocketAddr, session: Option<&str>, body: &str) -> Answer {
    post_from(addr, None, session, body).await.unwrap()
}

async fn post_from(
    addr: SocketAddr,
    from: Option<Ipv4Addr>,
    session: Option<&str>,
    body: &str,
) -> Option<Answer> {
    let stream = connect(addr, from).await?;
    let request = format!("{}\r\n{body}", post_head(session, body.len(), ""));
    Some(exchange(stream, request).await)
}

const PING: &str = r#"{"jsonrpc":"2.0","id":2,"method":"ping"}"#;
const INITIALIZED: &str = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;

/// `initialize` without a session (charged to 127.0.0.1): the new session's id.
async fn initialize(addr: SocketAddr) -> String {
    let body = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"initialize","params":{{"protocolVersion":"{PROTOCOL}","capabilities":{{}},"clientInfo":{{"name":"limits-test","version":"0"}}}}}}"#
    );
    let answer = post(addr, None, &body).await;
    assert_eq!(answer.status, 200, "{answer:?}");
    answer
        .header("mcp-session-id")
        .unwrap_or_else(|| panic!("no session id: {answer:?}"))
        .to_owned()
}

#[tokio::test]
async fn short_or_patterned_tokens_are_refused_at_bind() {
    let dir = common::skills_tree();
    let server = common::directory_server(dir.path()).build().await.unwrap();
    for weak in [
        "aaaaaaaaaaaaaaaa",                     // 16 characters, one of them
        "password1234567890",                   // 18 alphanumeric: 107 bits at most
        "5a220db8b55e15a2c7c1eab2dcadaff",      // 31 hex characters: 124 bits
        "wkbmzCXcmSN-62EPeuaXk",                // 21 base64url characters: 126 bits
        "0123456789abcdef0123456789abcdef",     // a repeated block
        "abcdefghijklmnopqrstuvwxyz0123456789", // a run
        "a long passphrase with spaces in it",  // cannot travel in the header as given
    ] {
        let refused = server
            .clone()
            .bind_http("127.0.0.1:0".parse().unwrap(), weak, HttpOptions::default())
            .await;
        let Err(skills_mcp::Error::Config(message)) = refused else {
            panic!("{weak:?} was accepted: {refused:?}")
        };
        assert!(
            message.contains("openssl rand -hex 32") && message.contains("/dev/urandom"),
            "{message}"
        );
        assert!(
            !message.contains(weak),
            "the token is never quoted: {message}"
        );
    }
    for strong in [
        "5a220db8b55e15a2c7c1eab2dcadafff", // 32 hex characters: 128 bits
        "wkbmzCXcmSN-62EPeuaXkg",           // 22 base64url characters: 132
        "rt/1qOokga/47SPapL4jMC+cHe46cngyjVjDeTSaibY=", // head -c 32 /dev/urandom | base64
        TOKEN,
    ] {
        let handle = server
            .clone()
            .bind_http(
                "127.0.0.1:0".parse().unwrap(),
                strong,
                HttpOptions::default(),
            )
            .await
            .unwrap_or_else(|e| panic!("{strong:?} was refused: {e}"));
        handle.shutdown().await.unwrap();
    }
}

#[tokio::test]
async fn a_burst_over_the_rate_gets_429_and_other_clients_are_unaffected() {
    // Six a minute: one request's share refills in 10 s, far longer than this test runs.
    let (_dir, handle) = serve(HttpOptions::default().with_max_requests_per_minute(6)).await;
    let addr = handle.local_addr();
    // Two sessions of the same token; their `initialize` calls are 127.0.0.1's (2 of 6).
    let a = initialize(addr).await;
    let b = initialize(addr).await;
    for session in [&a, &b] {
        assert_eq!(post(addr, Some(session), INITIALIZED).await.status, 202);
    }
    // Session a: the notification and five pings are its six; the seventh is refused.
    for _ in 0..5 {
        let answer = post(addr, Some(&a), PING).await;
        assert_eq!(answer.status, 200, "{answer:?}");
    }
    let over = post(addr, Some(&a), PING).await;
    assert_eq!(over.status, 429, "{over:?}");
    assert!((1..=60).contains(&over.retry_after()), "{over:?}");
    assert!(over.body.starts_with("too many requests"), "{over:?}");
    assert!(
        !over.body.contains("jsonrpc"),
        "refused before rmcp: {over:?}"
    );

    // Session b, same token, is unaffected.
    let answer = post(addr, Some(&b), PING).await;
    assert_eq!(answer.status, 200, "{answer:?}");
    assert!(answer.body.contains("\"result\""), "{answer:?}");

    // Requests without a session are 127.0.0.1's: four more, then refused; a forged
    // session id is charged to the address too, not given a fresh budget.
    for _ in 0..4 {
        assert_ne!(post(addr, None, PING).await.status, 429);
    }
    assert_eq!(post(addr, None, PING).await.status, 429);
    let forged = post(addr, Some("forged-0000-0000-0000"), PING).await;
    assert_eq!(forged.status, 429, "{forged:?}");
    assert_eq!(post(addr, Some(&b), PING).await.status, 200);

    // Another peer address has its own budget.
    let from = Ipv4Addr::new(127, 0, 0, 2);
    if let Some(answer) = post_from(addr, Some(from), None, PING).await {
        assert_ne!(answer.status, 429, "{answer:?}");
    }
    handle.shutdown().await.unwrap();
}

#[tokio::test]
async fn requests_in_flight_over_the_limit_get_429() {
    let (_dir, handle) = serve(HttpOptions::default().with_max_concurrent_requests(4)).await;
    let addr = handle.local_addr();
    let b = initialize(addr).await;
    assert_eq!(post(addr, Some(&b), INITIALIZED).await.status, 202);

    // Four requests from 127.0.0.1 held open: each sends its head and waits for rmcp to
    // ask for the body (`100 Continue`), which proves it passed the limits and is in flight.
    let mut held = Vec::new();
    for _ in 0..4 {
        let mut stream = connect(addr, None).await.unwrap();
        let head = post_head(None, 64, "Expect: 100-continue\r\n");
        stream
            .write_all(format!("{head}\r\n").as_bytes())
            .await
            .unwrap();
        let mut seen = Vec::new();
        let mut byte = [0u8; 1];
        while !seen.ends_with(b"\r\n\r\n") {
            let n = tokio::time::timeout(Duration::from_secs(10), stream.read(&mut byte))
                .await
                .expect("100 Continue within 10 s")
                .unwrap();
            assert_eq!(n, 1, "closed early: {}", String::from_utf8_lossy(&seen));
            seen.push(byte[0]);
        }
        let seen = String::from_utf8_lossy(&seen);
        assert!(seen.starts_with("HTTP/1.1 100"), "{seen}");
        held.push(stream);
    }

    // A fifth from the same client is refused before rmcp.
    let over = post(addr, None, PING).await;
    assert_eq!(over.status, 429, "{over:?}");
    assert!(over.retry_after() >= 1, "{over:?}");
    assert!(over.body.contains("in flight"), "{over:?}");
    // Session b is another client.
    assert_eq!(post(addr, Some(&b), PING).await.status, 200);

    // One held request ends (its client goes away): a place frees up.
    drop(held.pop());
    let mut freed = false;
    for _ in 0..100 {
        if post(addr, None, PING).await.status != 429 {
            freed = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(freed, "the ended request still counted");
    drop(held);
    handle.shutdown().await.unwrap();

    // A streamed answer is in flight until its stream ends: with one request at a time, a
    // session's open SSE stream (`GET`) refuses its next request until the stream closes.
    let (_dir, handle) = serve(HttpOptions::default().with_max_concurrent_requests(1)).await;
    let addr = handle.local_addr();
    let c = initialize(addr).await;
    assert_eq!(post(addr, Some(&c), INITIALIZED).await.status, 202);
    let mut stream = connect(addr, None).await.unwrap();
    let get = format!(
        "GET /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {TOKEN}\r\n\
         Accept: text/event-stream\r\nMcp-Session-Id: {c}\r\nMCP-Protocol-Version: {PROTOCOL}\r\n\r\n"
    );
    stream.write_all(get.as_bytes()).await.unwrap();
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        let n = tokio::time::timeout(Duration::from_secs(10), stream.read(&mut byte))
            .await
            .expect("the stream's head within 10 s")
            .unwrap();
        assert_eq!(n, 1, "closed early: {}", String::from_utf8_lossy(&head));
        head.push(byte[0]);
    }
    let head = String::from_utf8_lossy(&head);
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    let over = post(addr, Some(&c), PING).await;
    assert_eq!(over.status, 429, "the open stream counts: {over:?}");
    drop(stream);
    let mut freed = false;
    for _ in 0..100 {
        if post(addr, Some(&c), PING).await.status == 200 {
            freed = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(freed, "the closed stream still counted");
    handle.shutdown().await.unwrap();
}

#[tokio::test]
async fn the_table_of_clients_stays_bounded() {
    // Three clients at most, six requests a minute: nobody's budget refills during the test.
    let options = HttpOptions::default()
        .with_max_tracked_clients(3)
        .with_max_requests_per_minute(6);
    let (_dir, handle) = serve(options).await;
    let addr = handle.local_addr();
    let mut sessions = Vec::new();
    for _ in 0..4 {
        sessions.push(initialize(addr).await); // 127.0.0.1 is the first client
    }
    for session in &sessions[..2] {
        assert_eq!(post(addr, Some(session), INITIALIZED).await.status, 202);
    }
    assert_eq!(handle.tracked_clients(), 3);
    // A fourth client finds the table full of clients whose budgets are still refilling.
    for session in &sessions[2..] {
        let refused = post(addr, Some(session), INITIALIZED).await;
        assert_eq!(refused.status, 503, "{refused:?}");
        assert!((1..=60).contains(&refused.retry_after()), "{refused:?}");
        assert!(refused.body.starts_with("too many clients"), "{refused:?}");
    }
    if let Some(refused) = post_from(addr, Some(Ipv4Addr::new(127, 0, 0, 2)), None, PING).await {
        assert_eq!(refused.status, 503, "{refused:?}");
    }
    assert_eq!(handle.tracked_clients(), 3);
    // Tracked clients are still served.
    assert_eq!(post(addr, Some(&sessions[0]), PING).await.status, 200);
    handle.shutdown().await.unwrap();

    // With budgets that refill in 10 ms, idle clients are forgotten to make room: a stream
    // of new clients is served while the table never holds more than two.
    let options = HttpOptions::default()
        .with_max_tracked_clients(2)
        .with_max_requests_per_minute(6000);
    let (_dir, handle) = serve(options).await;
    let addr = handle.local_addr();
    for _ in 0..8 {
        let session = initialize(addr).await;
        tokio::time::sleep(Duration::from_millis(30)).await;
        let answer = post(addr, Some(&session), INITIALIZED).await;
        assert_eq!(answer.status, 202, "{answer:?}");
        assert!(handle.tracked_clients() <= 2);
        tokio::time::sleep(Duration::from_millis(30)).await;
    }
    handle.shutdown().await.unwrap();
}
