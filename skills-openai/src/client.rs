//! [`OpenAiClient`]: Chat Completions over the host's [`HttpClient`], with retries on the
//! host's [`Timer`], and the orchestrator's [`LlmClient`] on top.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use async_trait::async_trait;
use serde_json::{Value, json};
use skills_http::{HttpClient, HttpError, HttpRequest};
use skills_orchestrate::execute::{ThreadTimer, Timer, timeout};
use skills_orchestrate::llm::{
    LlmClient, LlmRequest, LlmResponse, ResponseFormat, Role, TokenUsage,
};

use crate::chat::{ChatCompletion, ChatMessage, ChatRequest, error_message, parse_completion};
use crate::config::{OpenAiConfig, StructuredOutput};
use crate::error::{Error, Result, cleaned};
use crate::json_text;
use crate::retry_after::retry_after;

/// An OpenAI-compatible Chat Completions client (OpenAI, vLLM, Ollama's `/v1`, llama.cpp's
/// server): `stream: false`, tools, structured output with a JSON schema where the server
/// takes `response_format: json_schema` and the schema in the prompt where it does not.
///
/// It opens no socket itself: requests go through the host's [`HttpClient`] and every wait
/// (a request's timeout, a retry's backoff) through the host's [`Timer`] ([`ThreadTimer`]
/// unless [`OpenAiClient::timer`] sets one). Answers are read up to
/// [`OpenAiConfig::max_response_bytes`]; anything a server sends ends in an answer or an
/// [`Error`], never a panic. Safe to share between concurrent plan steps.
///
/// ```
/// use std::sync::Arc;
/// use skills_http::{HttpClient, HttpError, HttpRequest, HttpResponse};
/// use skills_openai::{OpenAiClient, OpenAiConfig};
/// use skills_orchestrate::llm::{LlmClient, LlmRequest};
///
/// /// Stands in for the host's real client: answers like a Chat Completions server.
/// struct Canned;
///
/// #[async_trait::async_trait]
/// impl HttpClient for Canned {
///     async fn request(&self, _: HttpRequest) -> Result<HttpResponse, HttpError> {
///         let body = br#"{"choices":[{"message":{"role":"assistant","content":"Hello!"},
///             "finish_reason":"stop"}],"usage":{"prompt_tokens":9,"completion_tokens":2}}"#;
///         Ok(HttpResponse::new(200, Vec::new(), body.to_vec()))
///     }
/// }
///
/// let config = OpenAiConfig::new("https://api.example.com/v1", "some-model").api_key("sk-...");
/// let client = OpenAiClient::new(Arc::new(Canned), config)?;
/// let answer = futures::executor::block_on(client.complete(LlmRequest::new("Hi", 50)))?;
/// assert_eq!(answer.text, "Hello!");
/// assert_eq!(answer.usage.total(), 11);
/// assert_eq!(client.usage().total(), 11);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct OpenAiClient {
    http: Arc<dyn HttpClient>,
    timer: Arc<dyn Timer>,
    config: OpenAiConfig,
    /// Set once the server refused `response_format: json_schema` (mode `Auto`).
    schema_refused: AtomicBool,
    usage: Mutex<TokenUsage>,
}

impl std::fmt::Debug for OpenAiClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OpenAiClient")
            .field("config", &self.config)
            .field(
                "schema_refused",
                &self.schema_refused.load(Ordering::Relaxed),
            )
            .field("usage", &self.usage())
            .finish_non_exhaustive()
    }
}

/// One failed attempt that may be retried.
struct Retryable {
    error: Error,
    /// The wait the server asked for (429).
    wait: Option<Duration>,
}

impl OpenAiClient {
    /// A client over the host's `http`, or [`Error::Config`] when `config` cannot work.
    pub fn new(http: Arc<dyn HttpClient>, config: OpenAiConfig) -> Result<Self> {
        config.check()?;
        Ok(OpenAiClient {
            http,
            timer: Arc::new(ThreadTimer::new()),
            config,
            schema_refused: AtomicBool::new(false),
            usage: Mutex::new(TokenUsage::default()),
        })
    }

    /// Uses the host's `timer` for timeouts and backoff.
    #[must_use]
    pub fn timer(mut self, timer: Arc<dyn Timer>) -> Self {
        self.timer = timer;
        self
    }

    /// The configuration.
    pub fn config(&self) -> &OpenAiConfig {
        &self.config
    }

    /// Tokens every successful call so far used, as the server counted them.
    pub fn usage(&self) -> TokenUsage {
        self.usage.lock().map(|u| *u).unwrap_or_default()
    }

    /// Whether JSON answers are now asked for in the prompt because the server refused
    /// `response_format: json_schema`.
    pub fn schema_refused(&self) -> bool {
        self.schema_refused.load(Ordering::Relaxed)
    }

    /// Sends one Chat Completions request (with retries) and returns the first choice.
    pub async fn chat(&self, request: &ChatRequest) -> Result<ChatCompletion> {
        let body = serde_json::to_vec(&request.to_body(&self.config))
            .map_err(|e| Error::Malformed(format!("encoding the request: {e}")))?;
        let policy = self.config.retry;
        let mut waited = Duration::ZERO;
        let mut attempt = 0u32;
        loop {
            attempt += 1;
            let failure = match self.attempt(body.clone(), attempt).await {
                Ok(completion) => {
                    if let Ok(mut total) = self.usage.lock() {
                        total.add(completion.usage);
                    }
                    return Ok(completion);
                }
                Err(Ok(final_error)) => return Err(final_error),
                Err(Err(retryable)) => retryable,
            };
            if attempt >= policy.max_attempts {
                return Err(failure.error);
            }
            let wait = failure.wait.unwrap_or_else(|| policy.backoff(attempt));
            if waited.saturating_add(wait) > policy.max_total_wait {
                return Err(failure.error);
            }
            if !wait.is_zero() {
                self.timer.sleep(wait).await;
            }
            waited = waited.saturating_add(wait);
        }
    }

    /// One request: the answer, a final error (`Err(Ok)`), or one worth retrying (`Err(Err)`).
    async fn attempt(
        &self,
        body: Vec<u8>,
        attempt: u32,
    ) -> std::result::Result<ChatCompletion, std::result::Result<Error, Retryable>> {
        let limit = self.config.max_response_bytes;
        let mut request = HttpRequest::post(self.config.endpoint(), body, limit)
            .header("content-type", "application/json")
            .header("accept", "application/json");
        if let Some(key) = &self.config.api_key {
            request = request.header("authorization", format!("Bearer {key}"));
        }
        for (name, value) in &self.config.extra_headers {
            request = request.header(name.clone(), value.clone());
        }
        let sent = timeout(
            self.timer.as_ref(),
            self.config.timeout,
            self.http.request(request),
        )
        .await;
        let response = match sent {
            None => {
                return Err(Ok(Error::Timeout {
                    after_ms: u64::try_from(self.config.timeout.as_millis()).unwrap_or(u64::MAX),
                }));
            }
            // A client that cannot send at all (its configuration) fails now; anything that
            // kept one answer from arriving is worth another try.
            Some(Err(e)) if !e.is_transient() && !matches!(e, HttpError::Other { .. }) => {
                return Err(Ok(Error::Transport(cleaned(&e.to_string()))));
            }
            Some(Err(e)) => {
                return Err(Err(Retryable {
                    error: Error::Transport(cleaned(&e.to_string())),
                    wait: None,
                }));
            }
            Some(Ok(response)) => response,
        };
        if response.body.len() as u64 > limit {
            return Err(Ok(Error::TooLarge { limit }));
        }
        match response.status {
            200..=299 => parse_completion(&response.body).map_err(Ok),
            429 => {
                let wait = retry_after(&response, SystemTime::now());
                Err(Err(Retryable {
                    error: Error::RateLimited {
                        attempts: attempt,
                        retry_after_ms: wait
                            .map(|w| u64::try_from(w.as_millis()).unwrap_or(u64::MAX)),
                    },
                    wait,
                }))
            }
            status @ 500..=599 => Err(Err(Retryable {
                error: Error::Status {
                    status,
                    attempts: attempt,
                    message: error_message(&response.body),
                },
                wait: None,
            })),
            status => Err(Ok(Error::Status {
                status,
                attempts: attempt,
                message: error_message(&response.body),
            })),
        }
    }

    /// The Chat Completions request for an orchestrator request, with JSON asked for in
    /// `mode`.
    fn chat_request(&self, request: &LlmRequest, mode: StructuredOutput) -> ChatRequest {
        let schema = match &request.response_format {
            ResponseFormat::Json { schema } => Some(schema.as_ref()),
            _ => None,
        };
        let (format, instruction): (Option<Value>, Option<String>) = match (schema, mode) {
            (None, _) => (None, None),
            (Some(Some(schema)), StructuredOutput::Auto | StructuredOutput::JsonSchema) => (
                Some(json!({"type": "json_schema",
                    "json_schema": {"name": "answer", "schema": schema, "strict": false}})),
                None,
            ),
            (Some(None), StructuredOutput::Auto | StructuredOutput::JsonSchema)
            | (Some(None), StructuredOutput::JsonObject) => {
                (Some(json!({"type": "json_object"})), None)
            }
            (Some(Some(schema)), StructuredOutput::JsonObject) => (
                Some(json!({"type": "json_object"})),
                Some(json_text::instruction(Some(schema))),
            ),
            (Some(schema), _) => (None, Some(json_text::instruction(schema))),
        };
        let system = match (&request.system, instruction) {
            (Some(system), Some(extra)) => Some(format!("{system}\n\n{extra}")),
            (Some(system), None) => Some(system.clone()),
            (None, extra) => extra,
        };
        let mut messages: Vec<ChatMessage> = system.map(ChatMessage::system).into_iter().collect();
        messages.extend(request.messages.iter().map(|m| match m.role {
            Role::Assistant => ChatMessage::assistant(m.content.clone()),
            _ => ChatMessage::user(m.content.clone()),
        }));
        let chat = ChatRequest::new(messages, request.max_tokens);
        match format {
            Some(format) => chat.response_format(format),
            None => chat,
        }
    }
}

/// Whether a 400/422 says the server does not take `response_format: json_schema`.
fn refuses_schema(error: &Error) -> bool {
    match error {
        Error::Status {
            status: 400 | 422,
            message,
            ..
        } => {
            let message = message.to_ascii_lowercase();
            message.contains("response_format") || message.contains("json_schema")
        }
        _ => false,
    }
}

#[async_trait]
impl LlmClient for OpenAiClient {
    async fn complete(&self, request: LlmRequest) -> skills_orchestrate::Result<LlmResponse> {
        let json = matches!(request.response_format, ResponseFormat::Json { .. });
        let mut mode = self.config.structured_output;
        if mode == StructuredOutput::Auto && self.schema_refused() {
            mode = StructuredOutput::Prompted;
        }
        let mut answer = self.chat(&self.chat_request(&request, mode)).await;
        if json
            && mode == StructuredOutput::Auto
            && let Err(error) = &answer
            && refuses_schema(error)
        {
            self.schema_refused.store(true, Ordering::Relaxed);
            answer = self
                .chat(&self.chat_request(&request, StructuredOutput::Prompted))
                .await;
        }
        let answer = answer?;
        let first_call = answer.tool_calls.first();
        let text = match (answer.content, first_call) {
            (Some(text), None) => text,
            (Some(text), Some(_)) if !text.is_empty() => text,
            // Some servers enforce a schema through a forced function call.
            (_, Some(call)) if json => call.arguments.clone(),
            (_, Some(_)) => {
                let names: Vec<&str> = answer.tool_calls.iter().map(|c| c.name.as_str()).collect();
                return Err(Error::UnexpectedToolCalls(cleaned(&names.join(", "))).into());
            }
            (None, None) => {
                return Err(
                    Error::Malformed("the answer has neither text nor tool calls".into()).into(),
                );
            }
        };
        // For JSON the value is taken out of fences and prose; when there is none the text is
        // handed on as it is, for the caller's own check (the orchestrator's corrective retry).
        let text = if json {
            json_text::extract(&text).unwrap_or(text)
        } else {
            text
        };
        Ok(LlmResponse::new(text, answer.usage))
    }
}
