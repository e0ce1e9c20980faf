//! What the host tells the client: where the server is, which model, the key, the limits.

use std::time::Duration;

/// How a JSON answer is asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum StructuredOutput {
    /// `response_format: json_schema` first; when the server refuses the field (a 400 or 422
    /// naming `response_format` or `json_schema`), the schema in the prompt instead, and that
    /// choice kept for the client's life.
    #[default]
    Auto,
    /// Always `response_format: json_schema` (OpenAI, vLLM, recent Ollama and llama.cpp).
    JsonSchema,
    /// `response_format: json_object` plus the schema in the prompt (older servers).
    JsonObject,
    /// No `response_format`: the schema in the prompt, the JSON taken out of the text.
    Prompted,
}

/// The name of the answer-length field.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum MaxTokensField {
    /// `max_tokens` (vLLM, Ollama, llama.cpp, older OpenAI models).
    #[default]
    MaxTokens,
    /// `max_completion_tokens` (OpenAI's reasoning models require it).
    MaxCompletionTokens,
}

/// Retries: 429 honours `retry-after-ms` / `Retry-After`, 5xx and transport failures back
/// off exponentially, all within `max_attempts` requests and `max_total_wait` of sleeping.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct RetryPolicy {
    /// The most requests per call (1 = no retries).
    pub max_attempts: u32,
    /// The first 5xx backoff; doubled each time.
    pub initial_backoff: Duration,
    /// The longest single backoff.
    pub max_backoff: Duration,
    /// The most time one call may spend sleeping between attempts; a `Retry-After` longer
    /// than what is left ends the call with [`crate::Error::RateLimited`] at once.
    pub max_total_wait: Duration,
}

impl Default for RetryPolicy {
    /// 4 attempts, 500 ms doubling to at most 8 s, 30 s of waiting in all.
    fn default() -> Self {
        RetryPolicy {
            max_attempts: 4,
            initial_backoff: Duration::from_millis(500),
            max_backoff: Duration::from_secs(8),
            max_total_wait: Duration::from_secs(30),
        }
    }
}

impl RetryPolicy {
    /// A policy with `max_attempts` and the given waits.
    pub fn new(
        max_attempts: u32,
        initial_backoff: Duration,
        max_backoff: Duration,
        max_total_wait: Duration,
    ) -> Self {
        RetryPolicy {
            max_attempts,
            initial_backoff,
            max_backoff,
            max_total_wait,
        }
    }

    /// One attempt, no waiting.
    pub fn none() -> Self {
        RetryPolicy::new(1, Duration::ZERO, Duration::ZERO, Duration::ZERO)
    }

    /// The backoff before attempt `attempt + 1` after a 5xx (attempt counts from 1).
    pub(crate) fn backoff(&self, attempt: u32) -> Duration {
        let factor = 1u32
            .checked_shl(attempt.saturating_sub(1))
            .unwrap_or(u32::MAX);
        self.initial_backoff
            .saturating_mul(factor)
            .min(self.max_backoff)
    }
}

/// The client's configuration: base URL, model and key come from the host.
#[derive(Clone, PartialEq)]
#[non_exhaustive]
pub struct OpenAiConfig {
    /// The API root, for example `https://api.example.com/v1` or
    /// `http://127.0.0.1:11434/v1` (Ollama) — requests go to `{base_url}/chat/completions`.
    pub base_url: String,
    /// The model name the server knows.
    pub model: String,
    /// The bearer key, when the server wants one (never shown by `Debug`).
    pub api_key: Option<String>,
    /// How JSON answers are asked for.
    pub structured_output: StructuredOutput,
    /// The answer-length field's name.
    pub max_tokens_field: MaxTokensField,
    /// Sampling temperature, when set.
    pub temperature: Option<f32>,
    /// One request's timeout on the host's `Timer`.
    pub timeout: Duration,
    /// Retries.
    pub retry: RetryPolicy,
    /// The most bytes of an answer's body read (default 4 MiB).
    pub max_response_bytes: u64,
    /// Extra headers sent with every request (an organization, a project).
    pub extra_headers: Vec<(String, String)>,
}

impl std::fmt::Debug for OpenAiConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OpenAiConfig")
            .field("base_url", &self.base_url)
            .field("model", &self.model)
            .field("api_key", &self.api_key.as_ref().map(|_| "<redacted>"))
            .field("structured_output", &self.structured_output)
            .field("max_tokens_field", &self.max_tokens_field)
            .field("temperature", &self.temperature)
            .field("timeout", &self.timeout)
            .field("retry", &self.retry)
            .field("max_response_bytes", &self.max_response_bytes)
            .field(
                "extra_headers",
                &self
                    .extra_headers
                    .iter()
                    .map(|(n, _)| n)
                    .collect::<Vec<_>>(),
            )
            .finish()
    }
}

impl OpenAiConfig {
    /// A configuration for `model` at `base_url`, no key, structured output `Auto`, a 60 s
    /// timeout, the default retries and a 4 MiB answer limit.
    pub fn new(base_url: impl Into<String>, model: impl Into<String>) -> Self {
        OpenAiConfig {
            base_url: base_url.into(),
            model: model.into(),
            api_key: None,
            structured_output: StructuredOutput::Auto,
            max_tokens_field: MaxTokensField::MaxTokens,
            temperature: None,
            timeout: Duration::from_secs(60),
            retry: RetryPolicy::default(),
            max_response_bytes: 4 * 1024 * 1024,
            extra_headers: Vec::new(),
        }
    }

    /// Sets the bearer key.
    #[must_use]
    pub fn api_key(mut self, key: impl Into<String>) -> Self {
        self.api_key = Some(key.into());
        self
    }

    /// Sets how JSON answers are asked for.
    #[must_use]
    pub fn structured_output(mut self, mode: StructuredOutput) -> Self {
        self.structured_output = mode;
        self
    }

    /// Sets the answer-length field's name.
    #[must_use]
    pub fn max_tokens_field(mut self, field: MaxTokensField) -> Self {
        self.max_tokens_field = field;
        self
    }

    /// Sets the temperature.
    #[must_use]
    pub fn temperature(mut self, temperature: f32) -> Self {
        self.temperature = Some(temperature);
        self
    }

    /// Sets one request's timeout.
    #[must_use]
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// Sets the retry policy.
    #[must_use]
    pub fn retry(mut self, retry: RetryPolicy) -> Self {
        self.retry = retry;
        self
    }

    /// Sets the answer limit in bytes.
    #[must_use]
    pub fn max_response_bytes(mut self, limit: u64) -> Self {
        self.max_response_bytes = limit;
        self
    }

    /// Adds a header sent with every request.
    #[must_use]
    pub fn header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.extra_headers.push((name.into(), value.into()));
        self
    }

    /// `{base_url}/chat/completions`.
    pub fn endpoint(&self) -> String {
        format!("{}/chat/completions", self.base_url.trim_end_matches('/'))
    }

    pub(crate) fn check(&self) -> crate::Result<()> {
        let problem = if self.model.trim().is_empty() {
            Some("the model name is empty")
        } else if !(self.base_url.starts_with("http://") || self.base_url.starts_with("https://")) {
            Some("the base URL must start with http:// or https://")
        } else if self.max_response_bytes == 0 {
            Some("max_response_bytes is zero")
        } else if self.retry.max_attempts == 0 {
            Some("max_attempts is zero")
        } else {
            None
        };
        problem.map_or(Ok(()), |p| Err(crate::Error::Config(p.to_owned())))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_up_to_its_cap() {
        let policy = RetryPolicy::new(
            9,
            Duration::from_millis(100),
            Duration::from_millis(500),
            Duration::from_secs(5),
        );
        let waits: Vec<u128> = (1..=5).map(|a| policy.backoff(a).as_millis()).collect();
        assert_eq!(waits, [100, 200, 400, 500, 500]);
        assert_eq!(policy.backoff(200), Duration::from_millis(500));
    }

    #[test]
    fn debug_never_shows_the_key() {
        let config = OpenAiConfig::new("http://127.0.0.1:1/v1", "m")
            .api_key("sk-very-secret")
            .header("OpenAI-Project", "proj-secret");
        let shown = format!("{config:?}");
        assert!(!shown.contains("sk-very-secret"));
        assert!(!shown.contains("proj-secret"));
        assert_eq!(config.endpoint(), "http://127.0.0.1:1/v1/chat/completions");
    }

    #[test]
    fn bad_configurations_are_refused() {
        assert!(OpenAiConfig::new("http://x/v1", " ").check().is_err());
        assert!(OpenAiConfig::new("ftp://x", "m").check().is_err());
        assert!(
            OpenAiConfig::new("http://x", "m")
                .max_response_bytes(0)
                .check()
                .is_err()
        );
        assert!(OpenAiConfig::new("http://x", "m").check().is_ok());
    }
}
