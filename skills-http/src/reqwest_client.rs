//! [`ReqwestClient`]: the optional ready-made [`HttpClient`] (feature `reqwest`).

use std::time::Duration;

use async_trait::async_trait;

use crate::{HttpClient, HttpError, HttpRequest, HttpResponse, Method};

/// An [`HttpClient`] over `reqwest`: no redirects followed, a per-request timeout, and the
/// body read chunk by chunk and abandoned one byte past [`HttpRequest::max_body_bytes`] (so
/// the caller sees it was too large, and nothing larger is ever buffered).
///
/// It runs on tokio (reqwest's requirement). For `https://` URLs enable a TLS feature of
/// reqwest in the host's own `Cargo.toml` (for example `reqwest = { version = "0.13",
/// features = ["rustls"] }`); this crate enables none.
///
/// ```no_run
/// use std::time::Duration;
/// use skills_http::{HttpClient, HttpRequest, ReqwestClient};
///
/// # async fn run() -> Result<(), skills_http::HttpError> {
/// let client = ReqwestClient::new(Duration::from_secs(30))?;
/// let response = client
///     .request(HttpRequest::get("http://127.0.0.1:8080/v1/models", 1 << 20))
///     .await?;
/// println!("{}", response.status);
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone)]
pub struct ReqwestClient {
    client: reqwest::Client,
}

impl ReqwestClient {
    /// A client whose requests time out after `timeout` (connect and answer together).
    pub fn new(timeout: Duration) -> Result<Self, HttpError> {
        let client = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .timeout(timeout)
            .build()
            .map_err(|e| HttpError::Client {
                message: e.to_string(),
            })?;
        Ok(ReqwestClient { client })
    }

    /// A client over a `reqwest::Client` the host configured itself.
    pub fn from_client(client: reqwest::Client) -> Self {
        ReqwestClient { client }
    }
}

#[async_trait]
impl HttpClient for ReqwestClient {
    async fn request(&self, request: HttpRequest) -> Result<HttpResponse, HttpError> {
        let method = match request.method {
            Method::Get => reqwest::Method::GET,
            Method::Post => reqwest::Method::POST,
        };
        let mut builder = self.client.request(method, &request.url);
        for (name, value) in &request.headers {
            builder = builder.header(name.as_str(), value.as_str());
        }
        if !request.body.is_empty() {
            builder = builder.body(request.body);
        }
        let mut response = builder.send().await.map_err(|e| sent(&e))?;
        let status = response.status().as_u16();
        let headers = response
            .headers()
            .iter()
            .filter_map(|(n, v)| Some((n.as_str().to_owned(), v.to_str().ok()?.to_owned())))
            .collect();
        let limit = request.max_body_bytes;
        let mut body = Vec::new();
        while let Some(chunk) = response.chunk().await.map_err(|e| match sent(&e) {
            HttpError::Connect { message } => HttpError::Body { message },
            other => other,
        })? {
            let room = usize::try_from(limit.saturating_add(1))
                .unwrap_or(usize::MAX)
                .saturating_sub(body.len());
            body.extend_from_slice(&chunk[..chunk.len().min(room)]);
            if chunk.len() >= room {
                // One byte past the limit tells the caller the body was too large.
                break;
            }
        }
        Ok(HttpResponse::new(status, headers, body))
    }
}

/// A reqwest error as the family's: timeouts apart from everything else that kept an answer
/// from arriving.
fn sent(error: &reqwest::Error) -> HttpError {
    let message = error.to_string();
    if error.is_timeout() {
        HttpError::Timeout { message }
    } else {
        HttpError::Connect { message }
    }
}
