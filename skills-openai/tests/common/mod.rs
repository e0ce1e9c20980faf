//! A Chat Completions server on the loopback interface, speaking HTTP/1.1 as OpenAI-compatible
//! servers do, with scripted answers (normal, 429, 5xx, slow, malformed, huge), and a real
//! async HTTP client over tokio to 127.0.0.1 only that stops reading past the request's limit.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use futures::future::{BoxFuture, FutureExt};
use serde_json::{Value, json};
use skills_openai::{HttpClient, HttpError, HttpRequest, HttpResponse};
use skills_orchestrate::execute::Timer;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// What the server answers to one request.
#[derive(Debug, Clone)]
pub enum Reply {
    /// A status, extra headers and a body.
    Status(u16, Vec<(String, String)>, Vec<u8>),
    /// Waits, then answers 200 with the body.
    Slow(Duration, Vec<u8>),
    /// Bytes written as they are (no HTTP framing of ours).
    Raw(Vec<u8>),
}

impl Reply {
    pub fn ok(body: Value) -> Reply {
        Reply::Status(200, Vec::new(), body.to_string().into_bytes())
    }

    pub fn status(status: u16, headers: &[(&str, &str)], body: &str) -> Reply {
        Reply::Status(
            status,
            headers
                .iter()
                .map(|(n, v)| ((*n).to_owned(), (*v).to_owned()))
                .collect(),
            body.as_bytes().to_vec(),
        )
    }
}

/// A chat completion answer with `content`, or with `tool_calls` when `content` is null.
pub fn completion(content: Value, tool_calls: Option<Value>, prompt: u64, out: u64) -> Value {
    let mut message = json!({"role": "assistant", "content": content});
    if let Some(calls) = tool_calls {
        message["tool_calls"] = calls;
    }
    json!({
        "id": "chatcmpl-1", "object": "chat.completion", "created": 1_700_000_000,
        "model": "test-model",
        "choices": [{"index": 0, "message": message,
                     "finish_reason": if message.get("tool_calls").is_some() { "tool_calls" } else { "stop" }}],
        "usage": {"prompt_tokens": prompt, "completion_tokens": out, "total_tokens": prompt + out}
    })
}

/// One request the server read.
#[derive(Debug, Clone)]
pub struct Seen {
    pub method: String,
    pub path: String,
    pub headers: Vec<(String, String)>,
    pub body: Value,
}

impl Seen {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

type Handler = dyn Fn(&Seen) -> Option<Reply> + Send + Sync;

/// The server: scripted replies in order, then `handler` (default: 404).
pub struct FakeOpenAi {
    pub url: String,
    queue: Arc<Mutex<VecDeque<Reply>>>,
    seen: Arc<Mutex<Vec<Seen>>>,
    handler: Arc<Mutex<Option<Box<Handler>>>>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for FakeOpenAi {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl FakeOpenAi {
    pub async fn start() -> FakeOpenAi {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/v1", listener.local_addr().unwrap());
        let queue: Arc<Mutex<VecDeque<Reply>>> = Arc::default();
        let seen: Arc<Mutex<Vec<Seen>>> = Arc::default();
        let handler: Arc<Mutex<Option<Box<Handler>>>> = Arc::default();
        let (q, s, h) = (queue.clone(), seen.clone(), handler.clone());
        let task = tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                let (q, s, h) = (q.clone(), s.clone(), h.clone());
                tokio::spawn(async move {
                    let _ = serve(stream, &q, &s, &h).await;
                });
            }
        });
        FakeOpenAi {
            url,
            queue,
            seen,
            handler,
            task,
        }
    }

    /// Queues replies, answered in order.
    pub fn push(&self, replies: impl IntoIterator<Item = Reply>) {
        self.queue.lock().unwrap().extend(replies);
    }

    /// Answers with `handler` once the queue is empty.
    pub fn handle(&self, handler: impl Fn(&Seen) -> Option<Reply> + Send + Sync + 'static) {
        *self.handler.lock().unwrap() = Some(Box::new(handler));
    }

    pub fn seen(&self) -> Vec<Seen> {
        self.seen.lock().unwrap().clone()
    }
}

async fn serve(
    mut stream: TcpStream,
    queue: &Mutex<VecDeque<Reply>>,
    seen: &Mutex<Vec<Seen>>,
    handler: &Mutex<Option<Box<Handler>>>,
) -> std::io::Result<()> {
    let mut raw = Vec::new();
    let mut buf = [0u8; 8192];
    let head_end = loop {
        let n = stream.read(&mut buf).await?;
        if n == 0 {
            return Ok(());
        }
        raw.extend_from_slice(&buf[..n]);
        if let Some(i) = raw.windows(4).position(|w| w == b"\r\n\r\n") {
            break i;
        }
    };
    let head = String::from_utf8_lossy(&raw[..head_end]).into_owned();
    let mut lines = head.split("\r\n");
    let mut request_line = lines.next().unwrap_or_default().split(' ');
    let method = request_line.next().unwrap_or_default().to_owned();
    let path = request_line.next().unwrap_or_default().to_owned();
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_owned(), v.trim().to_owned()))
        .collect();
    let length: usize = headers
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case("content-length"))
        .and_then(|(_, v)| v.parse().ok())
        .unwrap_or(0);
    let mut body = raw[head_end + 4..].to_vec();
    while body.len() < length {
        let n = stream.read(&mut buf).await?;
        if n == 0 {
            break;
        }
        body.extend_from_slice(&buf[..n]);
    }
    let request = Seen {
        method,
        path,
        headers,
        body: serde_json::from_slice(&body).unwrap_or(Value::Null),
    };
    seen.lock().unwrap().push(request.clone());
    let queued = queue.lock().unwrap().pop_front();
    let reply = queued
        .or_else(|| handler.lock().unwrap().as_ref().and_then(|h| h(&request)))
        .unwrap_or_else(|| Reply::status(404, &[], r#"{"error":{"message":"no route"}}"#));
    let (status, extra, body) = match reply {
        Reply::Raw(bytes) => {
            stream.write_all(&bytes).await?;
            return stream.shutdown().await;
        }
        Reply::Slow(wait, body) => {
            tokio::time::sleep(wait).await;
            (200, Vec::new(), body)
        }
        Reply::Status(status, extra, body) => (status, extra, body),
    };
    let mut out = format!(
        "HTTP/1.1 {status} X\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n",
        body.len()
    );
    for (name, value) in extra {
        out.push_str(&format!("{name}: {value}\r\n"));
    }
    out.push_str("\r\n");
    stream.write_all(out.as_bytes()).await?;
    // A peer that stops reading (the body was too large) ends the write with an error.
    stream.write_all(&body).await?;
    stream.shutdown().await
}

/// Plain HTTP/1.1 over tokio to 127.0.0.1 only; reads at most the request's limit plus the
/// head, so a huge body is never buffered whole.
#[derive(Debug, Default, Clone, Copy)]
pub struct LoopbackHttp;

#[async_trait]
impl HttpClient for LoopbackHttp {
    async fn request(&self, request: HttpRequest) -> Result<HttpResponse, HttpError> {
        let rest = request
            .url
            .strip_prefix("http://")
            .ok_or_else(|| HttpError::new("only http:// URLs in tests"))?;
        let (authority, target) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
        if !authority.starts_with("127.0.0.1:") {
            return Err(HttpError::new(format!(
                "refusing non-loopback host {authority}"
            )));
        }
        let mut stream = TcpStream::connect(authority)
            .await
            .map_err(|e| HttpError::new(e.to_string()))?;
        let mut head = format!(
            "{} {target} HTTP/1.1\r\nHost: {authority}\r\nConnection: close\r\nContent-Length: {}\r\n",
            request.method.as_str(),
            request.body.len()
        );
        for (name, value) in &request.headers {
            head.push_str(&format!("{name}: {value}\r\n"));
        }
        head.push_str("\r\n");
        let io = |e: std::io::Error| HttpError::new(e.to_string());
        stream.write_all(head.as_bytes()).await.map_err(io)?;
        stream.write_all(&request.body).await.map_err(io)?;
        let cap = request.max_body_bytes + 64 * 1024 + 1;
        let mut raw = Vec::new();
        (&mut stream)
            .take(cap)
            .read_to_end(&mut raw)
            .await
            .map_err(io)?;
        let split = raw
            .windows(4)
            .position(|w| w == b"\r\n\r\n")
            .ok_or_else(|| HttpError::new("no header end"))?;
        let head = String::from_utf8_lossy(&raw[..split]).into_owned();
        let mut lines = head.split("\r\n");
        let status = lines
            .next()
            .and_then(|l| l.split(' ').nth(1))
            .and_then(|s| s.parse().ok())
            .ok_or_else(|| HttpError::new("bad status line"))?;
        let headers = lines
            .filter_map(|l| l.split_once(':'))
            .map(|(n, v)| (n.trim().to_owned(), v.trim().to_owned()))
            .collect();
        Ok(HttpResponse::new(
            status,
            headers,
            raw[split + 4..].to_vec(),
        ))
    }
}

/// tokio's sleep as the host's timer.
#[derive(Debug, Default, Clone, Copy)]
pub struct TokioTimer;

impl Timer for TokioTimer {
    fn sleep(&self, duration: Duration) -> BoxFuture<'static, ()> {
        tokio::time::sleep(duration).boxed()
    }
}

/// A timer that records every backoff and completes it at once; a sleep as long as the
/// request timeout (the race in `timeout`) is a real tokio sleep.
#[derive(Debug, Default)]
pub struct RecordingTimer {
    pub request_timeout: Duration,
    pub waits: Mutex<Vec<Duration>>,
}

impl RecordingTimer {
    pub fn new(request_timeout: Duration) -> Arc<RecordingTimer> {
        Arc::new(RecordingTimer {
            request_timeout,
            waits: Mutex::default(),
        })
    }

    pub fn waits(&self) -> Vec<Duration> {
        self.waits.lock().unwrap().clone()
    }
}

impl Timer for RecordingTimer {
    fn sleep(&self, duration: Duration) -> BoxFuture<'static, ()> {
        if duration == self.request_timeout {
            return tokio::time::sleep(duration).boxed();
        }
        self.waits.lock().unwrap().push(duration);
        futures::future::ready(()).boxed()
    }
}
