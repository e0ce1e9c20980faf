//! The client against a Chat Completions server on the loopback interface: the wire format
//! (streaming off, tool calls, structured output and its fallback), retries (429 with
//! `Retry-After`, 5xx backoff within the budget), and every bad answer as a typed error.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::sync::Arc;
use std::time::{Duration, Instant};

use common::{FakeOpenAi, LoopbackHttp, RecordingTimer, Reply, TokioTimer, completion};
use serde_json::json;
use skills_openai::{
    ChatMessage, ChatRequest, Error, MaxTokensField, OpenAiClient, OpenAiConfig, RetryPolicy,
    StructuredOutput, ToolCall,
};
use skills_orchestrate::llm::{LlmClient, LlmRequest, Message};

const TIMEOUT: Duration = Duration::from_secs(5);

fn client(server: &FakeOpenAi, config: impl FnOnce(OpenAiConfig) -> OpenAiConfig) -> OpenAiClient {
    let config = config(OpenAiConfig::new(&server.url, "test-model").timeout(TIMEOUT));
    OpenAiClient::new(Arc::new(LoopbackHttp), config)
        .unwrap()
        .timer(Arc::new(TokioTimer))
}

fn retrying(server: &FakeOpenAi, retry: RetryPolicy) -> (OpenAiClient, Arc<RecordingTimer>) {
    let timer = RecordingTimer::new(TIMEOUT);
    let client = OpenAiClient::new(
        Arc::new(LoopbackHttp),
        OpenAiConfig::new(&server.url, "test-model")
            .timeout(TIMEOUT)
            .retry(retry),
    )
    .unwrap()
    .timer(timer.clone());
    (client, timer)
}

#[tokio::test]
async fn a_text_answer_goes_over_the_real_wire_format_with_streaming_off() {
    let server = FakeOpenAi::start().await;
    server.push([Reply::ok(completion(json!("Hello there."), None, 21, 4))]);
    let client = client(&server, |c| c.api_key("sk-test-key").temperature(0.0));
    let request = LlmRequest::new("Say hello", 64)
        .system("You are terse.")
        .message(Message::assistant("Earlier answer"))
        .message(Message::user("Again"));
    let answer = client.complete(request).await.unwrap();
    assert_eq!(answer.text, "Hello there.");
    assert_eq!(
        (answer.usage.input_tokens, answer.usage.output_tokens),
        (21, 4)
    );
    assert_eq!(client.usage().total(), 25);

    let seen = server.seen();
    assert_eq!(seen.len(), 1);
    let request = &seen[0];
    assert_eq!(
        (request.method.as_str(), request.path.as_str()),
        ("POST", "/v1/chat/completions")
    );
    assert_eq!(request.header("authorization"), Some("Bearer sk-test-key"));
    assert_eq!(request.header("content-type"), Some("application/json"));
    assert_eq!(
        request.body,
        json!({
            "model": "test-model",
            "stream": false,
            "max_tokens": 64,
            "temperature": 0.0,
            "messages": [
                {"role": "system", "content": "You are terse."},
                {"role": "user", "content": "Say hello"},
                {"role": "assistant", "content": "Earlier answer"},
                {"role": "user", "content": "Again"},
            ],
        })
    );
}

#[tokio::test]
async fn tool_calls_come_back_typed_and_their_results_go_out_in_the_wire_shape() {
    let server = FakeOpenAi::start().await;
    let calls = json!([{"id": "call_7", "type": "function",
        "function": {"name": "use_skill", "arguments": "{\"name\":\"pdf\"}"}}]);
    server.push([
        Reply::ok(completion(json!(null), Some(calls), 30, 9)),
        Reply::ok(completion(json!("The PDF skill is loaded."), None, 50, 6)),
    ]);
    let client = client(&server, |c| {
        c.max_tokens_field(MaxTokensField::MaxCompletionTokens)
    });
    let tool = json!({"type": "function", "function": {"name": "use_skill",
        "description": "Load a skill", "parameters": {"type": "object",
        "properties": {"name": {"type": "string"}}, "required": ["name"]}}});
    let mut messages = vec![ChatMessage::user("Read the PDF")];
    let first = client
        .chat(
            &ChatRequest::new(messages.clone(), 100)
                .tools(vec![tool.clone()])
                .tool_choice(json!("auto")),
        )
        .await
        .unwrap();
    assert_eq!(first.finish_reason.as_deref(), Some("tool_calls"));
    assert_eq!(
        first.tool_calls,
        [ToolCall::new("call_7", "use_skill", "{\"name\":\"pdf\"}")]
    );
    assert_eq!(
        first.tool_calls[0].arguments_json().unwrap(),
        json!({"name": "pdf"})
    );

    messages.push(ChatMessage::assistant_tool_calls(first.tool_calls.clone()));
    messages.push(ChatMessage::tool_result(
        "call_7",
        "<skill_context>...</skill_context>",
    ));
    let second = client
        .chat(&ChatRequest::new(messages, 100).tools(vec![tool]))
        .await
        .unwrap();
    assert_eq!(second.content.as_deref(), Some("The PDF skill is loaded."));
    assert_eq!(client.usage().total(), 95);

    let seen = server.seen();
    assert_eq!(seen[0].body["tool_choice"], "auto");
    assert_eq!(seen[0].body["tools"][0]["function"]["name"], "use_skill");
    assert_eq!(seen[0].body["max_completion_tokens"], 100);
    assert!(seen[0].body.get("max_tokens").is_none());
    assert_eq!(
        seen[1].body["messages"][1],
        json!({"role": "assistant", "content": null, "tool_calls": [{"id": "call_7",
            "type": "function", "function": {"name": "use_skill", "arguments": "{\"name\":\"pdf\"}"}}]})
    );
    assert_eq!(
        seen[1].body["messages"][2],
        json!({"role": "tool", "content": "<skill_context>...</skill_context>", "tool_call_id": "call_7"})
    );
}

#[tokio::test]
async fn a_text_request_answered_with_tool_calls_is_a_typed_error() {
    let server = FakeOpenAi::start().await;
    let calls =
        json!([{"id": "c", "type": "function", "function": {"name": "x", "arguments": "{}"}}]);
    server.push([Reply::ok(completion(json!(null), Some(calls), 1, 1))]);
    let error = client(&server, |c| c)
        .complete(LlmRequest::new("hi", 10))
        .await
        .unwrap_err();
    assert!(error.to_string().contains("tool calls (x)"), "{error}");
}

#[tokio::test]
async fn structured_output_sends_the_schema_and_takes_the_json_out_of_the_answer() {
    let server = FakeOpenAi::start().await;
    server.push([Reply::ok(completion(
        json!("```json\n{\"answer\": 42}\n```"),
        None,
        10,
        5,
    ))]);
    let client = client(&server, |c| c);
    let schema = json!({"type": "object", "properties": {"answer": {"type": "integer"}}});
    let answer = client
        .complete(LlmRequest::new("Six times seven?", 50).json(Some(schema.clone())))
        .await
        .unwrap();
    assert_eq!(answer.text, r#"{"answer":42}"#);
    let body = &server.seen()[0].body;
    assert_eq!(
        body["response_format"],
        json!({"type": "json_schema", "json_schema": {"name": "answer", "schema": schema, "strict": false}})
    );
    // The schema is enforced by the server, so the prompt does not carry it.
    assert_eq!(body["messages"].as_array().unwrap().len(), 1);
}

#[tokio::test]
async fn a_server_without_json_schema_gets_the_schema_in_the_prompt_from_then_on() {
    let server = FakeOpenAi::start().await;
    server.handle(|seen| {
        Some(if seen.body.get("response_format").is_some() {
            Reply::status(
                400,
                &[],
                r#"{"error":{"message":"Unsupported parameter: response_format.json_schema"}}"#,
            )
        } else {
            Reply::ok(completion(
                json!("Sure! Here it is: {\"answer\": 42} Hope that helps."),
                None,
                10,
                8,
            ))
        })
    });
    let client = client(&server, |c| c);
    let schema = json!({"type": "object", "required": ["answer"]});
    let request = LlmRequest::new("Six times seven?", 50)
        .system("Be exact.")
        .json(Some(schema));
    let answer = client.complete(request.clone()).await.unwrap();
    assert_eq!(answer.text, r#"{"answer":42}"#);
    assert!(client.schema_refused());
    let seen = server.seen();
    assert_eq!(seen.len(), 2);
    let system = seen[1].body["messages"][0]["content"].as_str().unwrap();
    assert!(
        system.starts_with("Be exact.\n\nAnswer with exactly one JSON value"),
        "{system}"
    );
    assert!(system.contains(r#"{"required":["answer"],"type":"object"}"#));

    // The next JSON call goes straight to the prompt form: one request.
    client.complete(request).await.unwrap();
    assert_eq!(server.seen().len(), 3);

    // Forcing json_schema does not fall back: the 400 is the answer.
    let strict = self::client(&server, |c| {
        c.structured_output(StructuredOutput::JsonSchema)
    });
    let error = strict
        .complete(LlmRequest::new("x", 5).json(Some(json!({"type": "object"}))))
        .await
        .unwrap_err();
    assert!(error.to_string().contains("400"), "{error}");
}

#[tokio::test]
async fn json_object_mode_sends_json_object_and_the_schema_in_the_prompt() {
    let server = FakeOpenAi::start().await;
    server.push([Reply::ok(completion(json!("{\"a\":1}"), None, 1, 1))]);
    let client = client(&server, |c| {
        c.structured_output(StructuredOutput::JsonObject)
    });
    client
        .complete(LlmRequest::new("x", 5).json(Some(json!({"type": "object"}))))
        .await
        .unwrap();
    let body = &server.seen()[0].body;
    assert_eq!(body["response_format"], json!({"type": "json_object"}));
    assert!(
        body["messages"][0]["content"]
            .as_str()
            .unwrap()
            .contains("JSON Schema")
    );
}

#[tokio::test]
async fn a_429_waits_as_long_as_retry_after_says_then_succeeds() {
    let server = FakeOpenAi::start().await;
    server.push([
        Reply::status(
            429,
            &[("Retry-After", "2")],
            r#"{"error":{"message":"slow down"}}"#,
        ),
        Reply::status(429, &[("retry-after-ms", "150")], "{}"),
        Reply::ok(completion(json!("done"), None, 3, 1)),
    ]);
    let (client, timer) = retrying(&server, RetryPolicy::default());
    let answer = client.complete(LlmRequest::new("x", 5)).await.unwrap();
    assert_eq!(answer.text, "done");
    assert_eq!(
        timer.waits(),
        [Duration::from_secs(2), Duration::from_millis(150)]
    );
    assert_eq!(server.seen().len(), 3);
}

#[tokio::test]
async fn a_retry_after_beyond_the_budget_ends_the_call_at_once() {
    let server = FakeOpenAi::start().await;
    server.push([Reply::status(429, &[("Retry-After", "120")], "{}")]);
    let (client, timer) = retrying(&server, RetryPolicy::default());
    let error = client
        .chat(&ChatRequest::new(vec![ChatMessage::user("x")], 5))
        .await
        .unwrap_err();
    assert_eq!(
        error,
        Error::RateLimited {
            attempts: 1,
            retry_after_ms: Some(120_000)
        }
    );
    assert!(timer.waits().is_empty());
    assert_eq!(server.seen().len(), 1);
}

#[tokio::test]
async fn server_errors_back_off_exponentially_within_the_attempt_budget() {
    let server = FakeOpenAi::start().await;
    server.push([
        Reply::status(500, &[], r#"{"error":{"message":"boom"}}"#),
        Reply::status(503, &[], "overloaded"),
        Reply::ok(completion(json!("ok"), None, 1, 1)),
    ]);
    let policy = RetryPolicy::new(
        3,
        Duration::from_millis(100),
        Duration::from_secs(1),
        Duration::from_secs(10),
    );
    let (client, timer) = retrying(&server, policy);
    assert_eq!(
        client.complete(LlmRequest::new("x", 5)).await.unwrap().text,
        "ok"
    );
    assert_eq!(
        timer.waits(),
        [Duration::from_millis(100), Duration::from_millis(200)]
    );

    // Always failing: three attempts, then the last status with the server's message.
    server.handle(|_| {
        Some(Reply::status(
            502,
            &[],
            r#"{"error":{"message":"bad gateway"}}"#,
        ))
    });
    let error = client
        .chat(&ChatRequest::new(vec![ChatMessage::user("x")], 5))
        .await
        .unwrap_err();
    assert_eq!(
        error,
        Error::Status {
            status: 502,
            attempts: 3,
            message: "bad gateway".into()
        }
    );
    assert_eq!(server.seen().len(), 6);
}

#[tokio::test]
async fn the_wait_budget_caps_the_backoff() {
    let server = FakeOpenAi::start().await;
    server.handle(|_| Some(Reply::status(500, &[], "{}")));
    let policy = RetryPolicy::new(
        10,
        Duration::from_millis(400),
        Duration::from_secs(10),
        Duration::from_secs(1),
    );
    let (client, timer) = retrying(&server, policy);
    let error = client
        .chat(&ChatRequest::new(vec![ChatMessage::user("x")], 5))
        .await
        .unwrap_err();
    assert!(
        matches!(
            error,
            Error::Status {
                status: 500,
                attempts: 2,
                ..
            }
        ),
        "{error:?}"
    );
    // 400 ms waited; the next 800 ms would pass the 1 s budget.
    assert_eq!(timer.waits(), [Duration::from_millis(400)]);
}

#[tokio::test]
async fn client_errors_are_not_retried() {
    let server = FakeOpenAi::start().await;
    server.handle(|_| {
        Some(Reply::status(
            401,
            &[],
            r#"{"error":{"message":"bad key \u001b[31m"}}"#,
        ))
    });
    let (client, timer) = retrying(&server, RetryPolicy::default());
    let error = client
        .chat(&ChatRequest::new(vec![ChatMessage::user("x")], 5))
        .await
        .unwrap_err();
    assert_eq!(
        error,
        Error::Status {
            status: 401,
            attempts: 1,
            message: "bad key [31m".into()
        }
    );
    assert!(timer.waits().is_empty());
}

#[tokio::test]
async fn malformed_answers_are_typed_errors_never_panics() {
    let server = FakeOpenAi::start().await;
    let bodies: [&[u8]; 6] = [
        b"not json at all",
        b"{\"choices\": []}",
        b"{\"choices\": [{\"message\": {\"content\": {\"x\": 1}}}]}",
        b"{\"choices\": [{\"message\": {\"role\": \"assistant\"}}]}",
        b"\xff\xfe\x00garbage",
        b"{\"choices\": [{\"message\": {\"content\": null, \"refusal\": \"I cannot help\"}}]}",
    ];
    for body in bodies {
        server.push([Reply::Status(200, Vec::new(), body.to_vec())]);
    }
    let client = client(&server, |c| c.retry(RetryPolicy::none()));
    let mut errors = Vec::new();
    for _ in bodies {
        errors.push(
            client
                .complete(LlmRequest::new("x", 5))
                .await
                .unwrap_err()
                .to_string(),
        );
    }
    assert!(
        errors[..5].iter().all(|e| e.contains("malformed answer")),
        "{errors:?}"
    );
    assert!(errors[5].contains("refused: I cannot help"));
    // Not HTTP at all: the transport says so.
    server.push([Reply::Raw(b"SMTP ready\r\n\r\n".to_vec())]);
    let error = client
        .chat(&ChatRequest::new(vec![ChatMessage::user("x")], 5))
        .await
        .unwrap_err();
    assert!(matches!(error, Error::Transport(_)), "{error:?}");
    assert_eq!(client.usage().total(), 0);
}

#[tokio::test]
async fn a_slow_server_times_out_on_the_hosts_timer() {
    let server = FakeOpenAi::start().await;
    server.push([Reply::Slow(
        Duration::from_secs(5),
        completion(json!("late"), None, 1, 1)
            .to_string()
            .into_bytes(),
    )]);
    let client = client(&server, |c| c.timeout(Duration::from_millis(200)));
    let started = Instant::now();
    let error = client
        .chat(&ChatRequest::new(vec![ChatMessage::user("x")], 5))
        .await
        .unwrap_err();
    assert_eq!(error, Error::Timeout { after_ms: 200 });
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "{:?}",
        started.elapsed()
    );
}

#[tokio::test]
async fn an_oversized_body_is_refused_after_a_bounded_read() {
    let server = FakeOpenAi::start().await;
    let mut huge = br#"{"choices":[{"message":{"content":""#.to_vec();
    huge.extend(std::iter::repeat_n(b'a', 8 * 1024 * 1024));
    huge.extend(br#""}}]}"#);
    server.push([
        Reply::Status(200, Vec::new(), huge.clone()),
        Reply::Status(500, Vec::new(), huge),
    ]);
    let client = client(&server, |c| c.max_response_bytes(64 * 1024));
    for _ in 0..2 {
        let error = client
            .chat(&ChatRequest::new(vec![ChatMessage::user("x")], 5))
            .await
            .unwrap_err();
        assert_eq!(error, Error::TooLarge { limit: 64 * 1024 });
    }
    // Neither was retried.
    assert_eq!(server.seen().len(), 2);
}

#[tokio::test]
async fn concurrent_calls_share_one_client() {
    let server = FakeOpenAi::start().await;
    server.handle(|seen| {
        let text = seen.body["messages"][0]["content"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        Some(Reply::ok(completion(json!(text), None, 2, 3)))
    });
    let client = client(&server, |c| c);
    let answers = futures::future::join_all(
        (0..8).map(|i| client.complete(LlmRequest::new(format!("n{i}"), 5))),
    )
    .await;
    let texts: Vec<String> = answers.into_iter().map(|a| a.unwrap().text).collect();
    assert_eq!(texts, (0..8).map(|i| format!("n{i}")).collect::<Vec<_>>());
    assert_eq!(client.usage().total(), 40);
}
