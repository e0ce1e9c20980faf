//! An OpenAI-compatible [`LlmClient`](skills_orchestrate::llm::LlmClient) for the skills
//! family: Chat Completions as OpenAI, vLLM, Ollama (`/v1`) and llama.cpp's server speak it.
//!
//! | module | what it holds |
//! |---|---|
//! | [`config`] | [`OpenAiConfig`] (base URL, model, key from the host; timeout, retries, limits), [`StructuredOutput`], [`RetryPolicy`] |
//! | [`chat`] | the wire format: [`ChatRequest`] (messages, tools, `response_format`), [`ChatCompletion`] (text, [`ToolCall`]s, usage) |
//! | [`OpenAiClient`] | `chat` with retries and timeouts; `LlmClient::complete` with structured output or the JSON-in-text fallback |
//! | [`Error`] | every way a call ends without an answer, typed |
//!
//! It opens no socket and picks no runtime or TLS stack: HTTP goes through the host's
//! [`HttpClient`] (the trait `skills-install` uses too, from `skills-http`), time through the
//! host's `Timer`. The feature `reqwest` re-exports `skills-http`'s ready-made
//! `ReqwestClient` for hosts that want one.
//!
//! Token usage: each [`LlmResponse`](skills_orchestrate::llm::LlmResponse) carries the
//! server's `usage`, which the orchestrator adds into its run's totals and each step's
//! execution record; [`OpenAiClient::usage`] keeps the client's running total.

pub mod chat;
mod client;
pub mod config;
mod error;
mod json_text;
mod retry_after;

pub use chat::{ChatCompletion, ChatMessage, ChatRequest, ChatRole, ToolCall};
pub use client::OpenAiClient;
pub use config::{MaxTokensField, OpenAiConfig, RetryPolicy, StructuredOutput};
pub use error::{Error, Result};
#[cfg(feature = "reqwest")]
pub use skills_http::ReqwestClient;
pub use skills_http::{HttpClient, HttpError, HttpRequest, HttpResponse};
