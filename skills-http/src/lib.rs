//! The HTTP client the host supplies, shared by every crate of the family that speaks HTTP
//! (`skills-install`'s sources, `skills-openai`'s model client).
//!
//! The family opens no sockets and picks no runtime or TLS stack: the host implements
//! [`HttpClient`] with whatever it already trusts (TLS, proxies, connection pooling). With
//! the feature `reqwest`, `ReqwestClient` is a small ready-made implementation for hosts
//! that want one (it needs a tokio runtime, and a TLS feature of reqwest enabled by the host
//! for `https://` URLs).
//!
//! Threat: a hostile or compromised server answering with an endless or huge body. Guarantee:
//! every request carries the most body bytes the caller will accept
//! ([`HttpRequest::max_body_bytes`]) so a client can stop early, and callers refuse a longer
//! body anyway.
//!
//! ```
//! use skills_http::{HttpClient, HttpError, HttpRequest, HttpResponse};
//!
//! /// A client that answers every request with an empty 204.
//! struct Empty;
//!
//! #[async_trait::async_trait]
//! impl HttpClient for Empty {
//!     async fn request(&self, _request: HttpRequest) -> Result<HttpResponse, HttpError> {
//!         Ok(HttpResponse::new(204, Vec::new(), Vec::new()))
//!     }
//! }
//!
//! let request = HttpRequest::post("https://api.example.com/v1/x", b"{}".to_vec(), 1024)
//!     .header("content-type", "application/json");
//! let response = futures::executor::block_on(Empty.request(request))?;
//! assert_eq!(response.status, 204);
//! # Ok::<(), HttpError>(())
//! ```

use async_trait::async_trait;

#[cfg(feature = "reqwest")]
mod reqwest_client;
#[cfg(feature = "reqwest")]
pub use reqwest_client::ReqwestClient;

/// The methods the family uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Method {
    /// `GET`.
    Get,
    /// `POST`.
    Post,
}

impl Method {
    /// The method's name on the wire.
    pub fn as_str(self) -> &'static str {
        match self {
            Method::Get => "GET",
            Method::Post => "POST",
        }
    }
}

/// One request.
#[derive(Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct HttpRequest {
    /// The method.
    pub method: Method,
    /// The absolute URL.
    pub url: String,
    /// Header names and values, in the order to send them.
    pub headers: Vec<(String, String)>,
    /// The body (empty for a `GET`).
    pub body: Vec<u8>,
    /// The most body bytes the caller accepts; a client may stop reading past it (the
    /// caller refuses a longer body either way).
    pub max_body_bytes: u64,
}

impl std::fmt::Debug for HttpRequest {
    /// Header values are not shown (they may carry credentials), nor the body.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpRequest")
            .field("method", &self.method)
            .field("url", &self.url)
            .field(
                "headers",
                &self.headers.iter().map(|(n, _)| n).collect::<Vec<_>>(),
            )
            .field("body_bytes", &self.body.len())
            .field("max_body_bytes", &self.max_body_bytes)
            .finish()
    }
}

impl HttpRequest {
    /// A `GET` of `url`.
    pub fn get(url: impl Into<String>, max_body_bytes: u64) -> Self {
        HttpRequest {
            method: Method::Get,
            url: url.into(),
            headers: Vec::new(),
            body: Vec::new(),
            max_body_bytes,
        }
    }

    /// A `POST` of `body` to `url`.
    pub fn post(url: impl Into<String>, body: Vec<u8>, max_body_bytes: u64) -> Self {
        HttpRequest {
            method: Method::Post,
            url: url.into(),
            headers: Vec::new(),
            body,
            max_body_bytes,
        }
    }

    /// Adds a header.
    #[must_use]
    pub fn header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.headers.push((name.into(), value.into()));
        self
    }
}

/// One response.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct HttpResponse {
    /// The status code.
    pub status: u16,
    /// Header names and values as received.
    pub headers: Vec<(String, String)>,
    /// The body.
    pub body: Vec<u8>,
}

impl HttpResponse {
    /// A response.
    pub fn new(status: u16, headers: Vec<(String, String)>, body: Vec<u8>) -> Self {
        HttpResponse {
            status,
            headers,
            body,
        }
    }

    /// The first header named `name` (case-insensitive).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

/// Why a client could not complete a request.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum HttpError {
    /// The client could not be built (its TLS or proxy configuration).
    #[error("building the HTTP client: {message}")]
    Client {
        /// The client library's reason.
        message: String,
    },
    /// The request never got an answer: connection refused, reset, DNS, TLS.
    #[error("request failed: {message}")]
    Connect {
        /// The client library's reason.
        message: String,
    },
    /// No answer in time.
    #[error("timed out: {message}")]
    Timeout {
        /// What timed out.
        message: String,
    },
    /// The answer broke off while its body was read.
    #[error("reading the body: {message}")]
    Body {
        /// The client library's reason.
        message: String,
    },
    /// Anything else a host's client reports.
    #[error("{message}")]
    Other {
        /// What went wrong.
        message: String,
    },
}

impl HttpError {
    /// An [`HttpError::Other`] with a message (what a host's own client reports).
    pub fn new(message: impl Into<String>) -> Self {
        HttpError::Other {
            message: message.into(),
        }
    }

    /// Whether sending again may succeed: the request got no answer or timed out (never
    /// for a client that cannot be built).
    pub fn is_transient(&self) -> bool {
        matches!(
            self,
            HttpError::Connect { .. } | HttpError::Timeout { .. } | HttpError::Body { .. }
        )
    }
}

/// The host's HTTP client. Implementations should follow no redirects to other origins,
/// time requests out, and may stop reading a body past [`HttpRequest::max_body_bytes`].
#[async_trait]
pub trait HttpClient: Send + Sync {
    /// Sends `request` and returns the response, whatever its status.
    async fn request(&self, request: HttpRequest) -> Result<HttpResponse, HttpError>;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_hides_header_values_and_the_body() {
        let request = HttpRequest::post("http://127.0.0.1:1/x", b"secret-body".to_vec(), 10)
            .header("Authorization", "Bearer sk-secret");
        let shown = format!("{request:?}");
        assert!(shown.contains("Authorization"));
        assert!(!shown.contains("sk-secret"));
        assert!(!shown.contains("secret-body"));
        assert_eq!(request.method.as_str(), "POST");
    }

    #[test]
    fn only_errors_that_kept_an_answer_from_arriving_are_transient() {
        let message = String::from("x");
        assert!(
            HttpError::Timeout {
                message: message.clone()
            }
            .is_transient()
        );
        assert!(
            HttpError::Connect {
                message: message.clone()
            }
            .is_transient()
        );
        assert!(!HttpError::Client { message }.is_transient());
        assert_eq!(HttpError::new("offline").to_string(), "offline");
    }

    #[test]
    fn headers_are_found_case_insensitively() {
        let response = HttpResponse::new(200, vec![("Retry-After".into(), "3".into())], vec![]);
        assert_eq!(response.header("retry-after"), Some("3"));
        assert_eq!(response.header("x"), None);
    }
}
