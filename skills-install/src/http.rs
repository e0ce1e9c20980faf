//! The HTTP client the host supplies (the trait lives in `skills-http`, shared with
//! `skills-openai`), and the bounded helpers the sources call it through.
//!
//! This crate opens no sockets: the host implements [`HttpClient`] with whatever stack it
//! already trusts (TLS, proxies, connection pooling). Timeouts are the client's business —
//! a request that never completes is the host's to abandon.
//!
//! Threat: a hostile or compromised server answering with an endless or huge body, a
//! redirect to an internal address, or error statuses meant to confuse. Guarantee: every
//! request carries the most body bytes the caller will accept
//! ([`HttpRequest::max_body_bytes`]) so a client can stop early, and the crate's bounded `get` refuses a
//! longer body anyway; callers accept only the statuses they expect; the npm source refuses
//! tarball URLs outside its registry's origin.

use crate::error::{Error, Result, shown};

pub use skills_http::{HttpClient, HttpError, HttpRequest, HttpResponse, Method};

/// Sends `request`, maps rate limiting to [`Error::RateLimited`], a 404 to
/// [`Error::NotFound`] naming `what`, any other status but 200 to [`Error::Status`], and a
/// body over the request's limit to [`Error::TooLarge`].
pub(crate) async fn get(
    client: &dyn HttpClient,
    request: HttpRequest,
    what: &str,
) -> Result<HttpResponse> {
    let url = request.url.clone();
    let limit = request.max_body_bytes;
    let response = client.request(request).await.map_err(|e| Error::Http {
        url: shown(&url),
        message: e.to_string(),
    })?;
    if let Some(error) = rate_limited(&url, &response) {
        return Err(error);
    }
    match response.status {
        200 => {}
        404 => {
            return Err(Error::NotFound {
                what: what.to_owned(),
            });
        }
        status => {
            return Err(Error::Status {
                url: shown(&url),
                status,
            });
        }
    }
    if response.body.len() as u64 > limit {
        return Err(Error::TooLarge {
            what: format!("the response from `{}`", shown(&url)),
            limit,
        });
    }
    Ok(response)
}

/// HTTP 429, or 403 with `x-ratelimit-remaining: 0` (how git hosts signal an exhausted
/// quota), as a typed error with the retry hints the server sent.
fn rate_limited(url: &str, response: &HttpResponse) -> Option<Error> {
    let exhausted = response
        .header("x-ratelimit-remaining")
        .is_some_and(|v| v.trim() == "0");
    let limited = response.status == 429
        || (response.status == 403 && (exhausted || response.header("retry-after").is_some()));
    limited.then(|| Error::RateLimited {
        url: shown(url),
        status: response.status,
        retry_after_secs: response
            .header("retry-after")
            .and_then(|v| v.trim().parse().ok()),
        reset_at: response
            .header("x-ratelimit-reset")
            .and_then(|v| v.trim().parse().ok()),
    })
}

/// Parses a JSON body, naming `what` on failure.
pub(crate) fn json(response: &HttpResponse, what: &str) -> Result<serde_json::Value> {
    serde_json::from_slice(&response.body).map_err(|e| Error::malformed(what, e.to_string()))
}

/// Percent-encodes `text` for a URL path segment or query value (RFC 3986 unreserved
/// characters pass through).
pub(crate) fn encode_component(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for byte in text.bytes() {
        if byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'.' | b'_' | b'~') {
            out.push(char::from(byte));
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

/// The `scheme://host[:port]` part of an absolute URL, lowercased.
pub(crate) fn origin(url: &str) -> Option<String> {
    let (scheme, rest) = url.split_once("://")?;
    let authority = rest.split(['/', '?', '#']).next()?;
    if scheme.is_empty() || authority.is_empty() || authority.contains('@') {
        return None;
    }
    Some(format!(
        "{}://{}",
        scheme.to_ascii_lowercase(),
        authority.to_ascii_lowercase()
    ))
}

/// A base URL without trailing slashes.
pub(crate) fn trim_base(base: &str) -> String {
    base.trim_end_matches('/').to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn components_are_encoded() {
        assert_eq!(encode_component("a b/c?d&e"), "a%20b%2Fc%3Fd%26e");
        assert_eq!(encode_component("@scope/pkg"), "%40scope%2Fpkg");
        assert_eq!(encode_component("plain-1.0_x~"), "plain-1.0_x~");
    }

    #[test]
    fn origins() {
        assert_eq!(
            origin("http://127.0.0.1:8080/a/b?x").as_deref(),
            Some("http://127.0.0.1:8080")
        );
        assert_eq!(
            origin("HTTPS://Registry.Example/x").as_deref(),
            Some("https://registry.example")
        );
        assert_eq!(origin("http://user@evil.example/x"), None);
        assert_eq!(origin("/relative"), None);
    }

    #[test]
    fn rate_limits_are_recognised() {
        let limited = HttpResponse::new(
            403,
            vec![
                ("X-RateLimit-Remaining".into(), "0".into()),
                ("x-ratelimit-reset".into(), "1700000000".into()),
            ],
            Vec::new(),
        );
        assert!(matches!(
            rate_limited("u", &limited),
            Some(Error::RateLimited {
                reset_at: Some(1_700_000_000),
                ..
            })
        ));
        let forbidden = HttpResponse::new(403, Vec::new(), Vec::new());
        assert!(rate_limited("u", &forbidden).is_none());
        let too_many = HttpResponse::new(429, vec![("Retry-After".into(), "7".into())], vec![]);
        assert!(matches!(
            rate_limited("u", &too_many),
            Some(Error::RateLimited {
                retry_after_secs: Some(7),
                status: 429,
                ..
            })
        ));
    }
}
