//! `ReqwestClient` (feature `reqwest`) against a server on the loopback interface: the
//! request goes out as built, a body past the limit is cut one byte after it.
//! Run with `cargo test -p skills-http --features reqwest`.
#![cfg(feature = "reqwest")]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::time::Duration;

use skills_http::{HttpClient, HttpRequest, ReqwestClient};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

/// Answers one connection with `body`, after reading the request (returned).
async fn serve_once(listener: TcpListener, body: Vec<u8>) -> String {
    let (mut stream, _) = listener.accept().await.unwrap();
    let mut raw = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        let n = stream.read(&mut buf).await.unwrap();
        raw.extend_from_slice(&buf[..n]);
        let text = String::from_utf8_lossy(&raw);
        if let Some(end) = text.find("\r\n\r\n") {
            let length: usize = text[..end]
                .lines()
                .find_map(|l| {
                    l.to_ascii_lowercase()
                        .strip_prefix("content-length:")
                        .map(|v| v.trim().to_owned())
                })
                .and_then(|v| v.parse().ok())
                .unwrap_or(0);
            if raw.len() >= end + 4 + length || n == 0 {
                break;
            }
        }
    }
    let head = format!(
        "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nX-Test: yes\r\n\r\n",
        body.len()
    );
    let _ = stream.write_all(head.as_bytes()).await;
    let _ = stream.write_all(&body).await;
    String::from_utf8_lossy(&raw).into_owned()
}

#[tokio::test]
async fn a_post_goes_out_as_built_and_the_answer_comes_back() {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!(
        "http://{}/v1/chat/completions",
        listener.local_addr().unwrap()
    );
    let server = tokio::spawn(serve_once(listener, b"{\"ok\":true}".to_vec()));
    let _ = rustls::crypto::ring::default_provider().install_default();
    let client = ReqwestClient::new(Duration::from_secs(5)).unwrap();
    let response = client
        .request(HttpRequest::post(url, b"{\"q\":1}".to_vec(), 1024).header("x-key", "k"))
        .await
        .unwrap();
    assert_eq!(response.status, 200);
    assert_eq!(response.body, b"{\"ok\":true}");
    assert_eq!(response.header("x-test"), Some("yes"));
    let seen = server.await.unwrap();
    assert!(
        seen.starts_with("POST /v1/chat/completions HTTP/1.1"),
        "{seen}"
    );
    assert!(seen.to_ascii_lowercase().contains("x-key: k"), "{seen}");
    assert!(seen.ends_with("{\"q\":1}"), "{seen}");
}

#[tokio::test]
async fn a_body_past_the_limit_is_cut_one_byte_after_it() {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/big", listener.local_addr().unwrap());
    tokio::spawn(serve_once(listener, vec![b'a'; 4 * 1024 * 1024]));
    let _ = rustls::crypto::ring::default_provider().install_default();
    let client = ReqwestClient::new(Duration::from_secs(5)).unwrap();
    let response = client.request(HttpRequest::get(url, 1000)).await.unwrap();
    assert_eq!(response.body.len(), 1001);
}
