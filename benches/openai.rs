//! Benchmarks of the OpenAI-compatible client (issue 23) against a Chat Completions server on
//! the loopback interface that answers at once (a fixed completion, `Connection: close`):
//!
//! * `openai/raw_http`: the same POST through the bench's HTTP client alone (the floor: a
//!   TCP connection, the request, the answer);
//! * `openai/complete_text`, `openai/complete_json`: `LlmClient::complete` through
//!   `OpenAiClient` over that client, a text request and a JSON request carrying the skill
//!   analysis schema (`response_format: json_schema`); the adapter's overhead is the
//!   difference to `raw_http`;
//! * `openai/adapter_in_process`: the adapter alone over an in-process `HttpClient` that
//!   returns the canned answer (request building, encoding, parsing, usage);
//! * `openai/chain8_http`, `openai/chain8_scripted`: the executor running a chain of 8
//!   instruction steps whose model is `OpenAiClient` over loopback HTTP, and the same with
//!   `ScriptedLlm` (no HTTP); per step = median / 8.
//!
//! Runs on a current-thread tokio runtime (the bench's HTTP client and server use tokio).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use criterion::Criterion;
use serde_json::json;
use skills::http::{HttpClient, HttpError, HttpRequest, HttpResponse};
use skills::openai::{OpenAiClient, OpenAiConfig};
use skills::orchestrate::execute::{Executor, InMemorySkills, Run, SkillDefinition};
use skills::orchestrate::llm::{LlmClient, LlmRequest, ScriptedLlm};
use skills::orchestrate::plan::{Planner, StepSpec};
use skills::orchestrate::select::SkillAnalysis;
use skills::security::TrustLevel;
use skills::security::audit::AuditTrail;
use skills::security::gate::PolicyGate;
use skills::store::UserScope;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

fn answer_body() -> Vec<u8> {
    json!({
        "id": "chatcmpl-1", "object": "chat.completion", "created": 1_700_000_000,
        "model": "bench",
        "choices": [{"index": 0, "finish_reason": "stop",
            "message": {"role": "assistant", "content":
                "{\"skills_needed\":false,\"required_skills\":[],\"optional_skills\":[],\"execution_approach\":\"sequential\"}"}}],
        "usage": {"prompt_tokens": 120, "completion_tokens": 30, "total_tokens": 150}
    })
    .to_string()
    .into_bytes()
}

/// Answers every connection's request with the canned completion.
async fn serve(listener: TcpListener, body: Arc<Vec<u8>>) {
    while let Ok((mut stream, _)) = listener.accept().await {
        let body = body.clone();
        tokio::spawn(async move {
            let mut raw = Vec::new();
            let mut buf = [0u8; 16 * 1024];
            loop {
                let Ok(n) = stream.read(&mut buf).await else {
                    return;
                };
                if n == 0 {
                    return;
                }
                raw.extend_from_slice(&buf[..n]);
                if let Some(end) = raw.windows(4).position(|w| w == b"\r\n\r\n") {
                    let head = String::from_utf8_lossy(&raw[..end]).to_ascii_lowercase();
                    let length: usize = head
                        .lines()
                        .find_map(|l| l.strip_prefix("content-length:"))
                        .and_then(|v| v.trim().parse().ok())
                        .unwrap_or(0);
                    if raw.len() >= end + 4 + length {
                        break;
                    }
                }
            }
            let head = format!(
                "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                body.len()
            );
            let _ = stream.write_all(head.as_bytes()).await;
            let _ = stream.write_all(&body).await;
            let _ = stream.shutdown().await;
        });
    }
}

/// HTTP/1.1 over tokio, one connection per request, loopback only, bounded read.
struct LoopbackHttp;

#[async_trait]
impl HttpClient for LoopbackHttp {
    async fn request(&self, request: HttpRequest) -> Result<HttpResponse, HttpError> {
        let rest = request.url.strip_prefix("http://").unwrap();
        let (authority, target) = rest.split_at(rest.find('/').unwrap());
        let io = |e: std::io::Error| HttpError::new(e.to_string());
        let mut stream = TcpStream::connect(authority).await.map_err(io)?;
        stream.set_nodelay(true).map_err(io)?;
        let mut head = format!(
            "{} {target} HTTP/1.1\r\nHost: {authority}\r\nConnection: close\r\nContent-Length: {}\r\n",
            request.method.as_str(),
            request.body.len()
        );
        for (name, value) in &request.headers {
            head.push_str(&format!("{name}: {value}\r\n"));
        }
        head.push_str("\r\n");
        let mut out = head.into_bytes();
        out.extend_from_slice(&request.body);
        stream.write_all(&out).await.map_err(io)?;
        let mut raw = Vec::new();
        (&mut stream)
            .take(request.max_body_bytes + 64 * 1024)
            .read_to_end(&mut raw)
            .await
            .map_err(io)?;
        let split = raw.windows(4).position(|w| w == b"\r\n\r\n").unwrap();
        let status = String::from_utf8_lossy(&raw[9..12]).parse().unwrap();
        Ok(HttpResponse::new(
            status,
            Vec::new(),
            raw[split + 4..].to_vec(),
        ))
    }
}

/// The canned answer without a socket.
struct InProcess(Vec<u8>);

#[async_trait]
impl HttpClient for InProcess {
    async fn request(&self, _: HttpRequest) -> Result<HttpResponse, HttpError> {
        Ok(HttpResponse::new(200, Vec::new(), self.0.clone()))
    }
}

fn chain(n: usize) -> Vec<StepSpec> {
    (0..n)
        .map(|i| {
            let spec = StepSpec::new(format!("s{i}"), "write", "Write one line.");
            if i == 0 {
                spec
            } else {
                spec.after(format!("s{}", i - 1))
            }
        })
        .collect()
}

fn executor(model: Arc<dyn LlmClient>) -> Executor {
    let skills = InMemorySkills::new().with(
        SkillDefinition::instruction("write", "Write what the task asks.").trust(TrustLevel::Core),
    );
    Executor::builder(
        Arc::new(skills),
        PolicyGate::allow_all(AuditTrail::in_memory()),
    )
    .llm(model)
    .build()
}

fn main() {
    let mut c = Criterion::default()
        .sample_size(20)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3))
        .configure_from_args();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let listener = runtime.block_on(TcpListener::bind("127.0.0.1:0")).unwrap();
    let base = format!("http://{}/v1", listener.local_addr().unwrap());
    runtime.spawn(serve(listener, Arc::new(answer_body())));

    let config = OpenAiConfig::new(&base, "bench");
    let client = Arc::new(OpenAiClient::new(Arc::new(LoopbackHttp), config.clone()).unwrap());
    let in_process = OpenAiClient::new(Arc::new(InProcess(answer_body())), config.clone()).unwrap();
    let text = LlmRequest::new("Which skills does this task need? Research Acme.", 256);
    let json = text.clone().json(Some(SkillAnalysis::schema().clone()));
    let raw = HttpRequest::post(
        format!("{base}/chat/completions"),
        serde_json::to_vec(&json!({"model": "bench", "messages": [{"role": "user",
            "content": "Which skills does this task need? Research Acme."}],
            "max_tokens": 256, "stream": false}))
        .unwrap(),
        1 << 20,
    )
    .header("content-type", "application/json");

    let mut group = c.benchmark_group("openai");
    group.bench_function("raw_http", |b| {
        b.iter(|| runtime.block_on(LoopbackHttp.request(raw.clone())).unwrap())
    });
    group.bench_function("complete_text", |b| {
        b.iter(|| runtime.block_on(client.complete(text.clone())).unwrap())
    });
    group.bench_function("complete_json", |b| {
        b.iter(|| runtime.block_on(client.complete(json.clone())).unwrap())
    });
    group.bench_function("adapter_in_process", |b| {
        b.iter(|| runtime.block_on(in_process.complete(json.clone())).unwrap())
    });

    let plan = runtime
        .block_on(Planner::new().plan("bench", chain(8)))
        .unwrap();
    let scope = UserScope::new("acme", "alice");
    let over_http = executor(client.clone());
    let scripted = executor(Arc::new(ScriptedLlm::new().fallback("One line.")));
    for (name, executor) in [("chain8_http", &over_http), ("chain8_scripted", &scripted)] {
        group.bench_function(name, |b| {
            b.iter(|| {
                let result = runtime
                    .block_on(executor.execute(&plan, Run::new(scope.clone())))
                    .unwrap();
                assert!(result.success);
            })
        });
    }
    group.finish();
    c.final_summary();
}
