//! The crate's error type.

use thiserror::Error;

/// Everything a call to an OpenAI-compatible server can end in, besides an answer.
///
/// Messages carry statuses, sizes and the server's own error text (cut to 300 characters,
/// control characters removed), never the API key or the prompt.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum Error {
    /// The configuration cannot work (an empty model or base URL, a zero limit).
    #[error("invalid configuration: {0}")]
    Config(String),
    /// The host's HTTP client could not complete the request (connection refused, reset).
    #[error("transport failed: {0}")]
    Transport(String),
    /// No answer within the configured timeout (measured on the host's `Timer`).
    #[error("no answer within {after_ms} ms")]
    Timeout {
        /// The timeout that passed, in milliseconds.
        after_ms: u64,
    },
    /// The server kept answering 429 and the retry budget is spent (or the wait it asked for
    /// is longer than what is left of the budget).
    #[error("rate limited after {attempts} attempts (retry after {retry_after_ms:?} ms)")]
    RateLimited {
        /// How many requests were sent.
        attempts: u32,
        /// The wait the server asked for last, in milliseconds, when it said.
        retry_after_ms: Option<u64>,
    },
    /// The server answered with an error status (a 4xx other than 429, or a 5xx after the
    /// retry budget).
    #[error("the server answered {status} after {attempts} attempts: {message}")]
    Status {
        /// The HTTP status.
        status: u16,
        /// How many requests were sent.
        attempts: u32,
        /// The server's error message, cut and cleaned.
        message: String,
    },
    /// The answer's body was longer than `max_response_bytes`.
    #[error("the answer is larger than {limit} bytes")]
    TooLarge {
        /// The limit in bytes.
        limit: u64,
    },
    /// The answer is not a Chat Completions response (not JSON, no choices, wrong types).
    #[error("malformed answer: {0}")]
    Malformed(String),
    /// The model declined to answer (the `refusal` field).
    #[error("the model refused: {0}")]
    Refused(String),
    /// The model asked to call tools although the request offered none it could call.
    #[error("the model asked for tool calls ({0}) where text was expected")]
    UnexpectedToolCalls(String),
}

/// The crate's result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl From<Error> for skills_orchestrate::Error {
    fn from(error: Error) -> Self {
        skills_orchestrate::Error::Llm(error.to_string())
    }
}

/// Server-supplied text made safe for a message: control characters dropped, 300 characters.
pub(crate) fn cleaned(text: &str) -> String {
    text.chars()
        .filter(|c| !c.is_control() || *c == ' ')
        .take(300)
        .collect()
}
