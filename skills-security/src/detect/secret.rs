//! Credentials: provider keys found by their prefixes (AWS `AKIA`/`ASIA`, GitHub `ghp_`...
//! and `github_pat_`, GitLab `glpat-`, Slack `xoxb-`... and webhooks, Stripe `sk_live_`,
//! Google `AIza`, OpenAI `sk-`, Anthropic `sk-ant-`), JWTs, PEM private keys, and values
//! assigned to a credential-named key (`DB_PASSWORD=...`, `"api_key": "..."`,
//! `aws_secret_access_key="..."`, `Bearer ...`) when they are random enough to be real.
//!
//! The entropy floor keeps placeholders (`xxxxxxxx`, `********`, `changeme` is kept: it is
//! a real if weak password) and references (`${DB_PASS}`, `os.environ[...]`) out.

use super::text::{at, before, is_alnum};

/// What a prefix introduces.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Prefix {
    Aws,
    GitHub,
    GitHubPat,
    GitLab,
    SlackToken,
    SlackWebhook,
    Stripe,
    Google,
    SkDash,
    Jwt,
    Pem,
}

/// Case-sensitive prefixes and what they introduce.
pub(crate) const PREFIXES: [(&str, Prefix); 29] = [
    ("AKIA", Prefix::Aws),
    ("ASIA", Prefix::Aws),
    ("AGPA", Prefix::Aws),
    ("AIDA", Prefix::Aws),
    ("AROA", Prefix::Aws),
    ("ANPA", Prefix::Aws),
    ("ghp_", Prefix::GitHub),
    ("gho_", Prefix::GitHub),
    ("ghu_", Prefix::GitHub),
    ("ghs_", Prefix::GitHub),
    ("ghr_", Prefix::GitHub),
    ("github_pat_", Prefix::GitHubPat),
    ("glpat-", Prefix::GitLab),
    ("gldt-", Prefix::GitLab),
    ("glrt-", Prefix::GitLab),
    ("xoxb-", Prefix::SlackToken),
    ("xoxp-", Prefix::SlackToken),
    ("xoxa-", Prefix::SlackToken),
    ("xoxr-", Prefix::SlackToken),
    ("xoxs-", Prefix::SlackToken),
    ("hooks.slack.com/services/", Prefix::SlackWebhook),
    ("sk_live_", Prefix::Stripe),
    ("sk_test_", Prefix::Stripe),
    ("rk_live_", Prefix::Stripe),
    ("rk_test_", Prefix::Stripe),
    ("AIza", Prefix::Google),
    ("sk-", Prefix::SkDash),
    ("eyJ", Prefix::Jwt),
    ("-----BEGIN ", Prefix::Pem),
];

/// Key names whose assigned values are credentials (matched inside identifiers, any case).
pub(crate) const KEYWORDS: [&str; 12] = [
    "password",
    "passwd",
    "pwd",
    "secret",
    "token",
    "api_key",
    "apikey",
    "api-key",
    "access_key",
    "private_key",
    "credential",
    "auth_key",
];

fn run(h: &[u8], i: usize, max: usize, ok: impl Fn(u8) -> bool) -> usize {
    let mut n = 0;
    while n < max && h.get(i + n).is_some_and(|&b| ok(b)) {
        n += 1;
    }
    n
}

fn b64url(b: u8) -> bool {
    is_alnum(b) || b == b'_' || b == b'-'
}

/// Closed on the right: the next byte does not continue the token.
fn closed(h: &[u8], end: usize, cont: impl Fn(u8) -> bool) -> Option<usize> {
    (!at(h, end).is_some_and(cont)).then_some(end)
}

/// A credential at the prefix `prefix` (matched case-insensitively at `p`); returns its span.
pub(crate) fn at_prefix(h: &[u8], p: usize, prefix: &str, kind: Prefix) -> Option<(usize, usize)> {
    let pl = prefix.len();
    if h.get(p..p + pl)? != prefix.as_bytes() {
        return None;
    }
    if kind != Prefix::SlackWebhook
        && kind != Prefix::Pem
        && matches!(before(h, p), Some(b) if b64url(b))
    {
        return None;
    }
    let i = p + pl;
    match kind {
        Prefix::Aws => {
            let n = run(h, i, 17, |b| b.is_ascii_uppercase() || b.is_ascii_digit());
            (n == 16).then_some(())?;
            closed(h, i + n, is_alnum).map(|e| (p, e))
        }
        Prefix::GitHub => {
            let n = run(h, i, 255, is_alnum);
            (n >= 30).then_some(())?;
            closed(h, i + n, b64url).map(|e| (p, e))
        }
        Prefix::GitHubPat => {
            let n = run(h, i, 255, |b| is_alnum(b) || b == b'_');
            (n >= 40).then_some(())?;
            closed(h, i + n, b64url).map(|e| (p, e))
        }
        Prefix::GitLab => {
            let n = run(h, i, 255, b64url);
            (n >= 20).then_some(()).map(|_| (p, i + n))
        }
        Prefix::SlackToken => {
            let n = run(h, i, 255, |b| is_alnum(b) || b == b'-');
            (n >= 10).then_some(()).map(|_| (p, i + n))
        }
        Prefix::SlackWebhook => {
            let start = if p >= 8 && h.get(p - 8..p) == Some(b"https://") {
                p - 8
            } else {
                p
            };
            let n = run(h, i, 255, |b| {
                is_alnum(b) || matches!(b, b'/' | b'_' | b'-')
            });
            (n >= 20).then_some(()).map(|_| (start, i + n))
        }
        Prefix::Stripe => {
            let n = run(h, i, 255, is_alnum);
            (n >= 10).then_some(())?;
            closed(h, i + n, b64url).map(|e| (p, e))
        }
        Prefix::Google => {
            let n = run(h, i, 41, b64url);
            (33..=40).contains(&n).then_some(())?;
            closed(h, i + n, b64url).map(|e| (p, e))
        }
        Prefix::SkDash => {
            let n = run(h, i, 512, b64url);
            let body = h.get(i..i + n)?;
            let anthropic = body.starts_with(b"ant-");
            let min = if anthropic { 40 } else { 20 };
            let mixed = body.iter().any(u8::is_ascii_digit)
                && body.iter().any(u8::is_ascii_uppercase)
                && body.iter().any(u8::is_ascii_lowercase);
            (n >= min && mixed).then_some((p, i + n))
        }
        Prefix::Jwt => {
            let a = run(h, p, 4096, b64url);
            if a < 10 || at(h, p + a) != Some(b'.') {
                return None;
            }
            let s2 = p + a + 1;
            let b = run(h, s2, 8192, b64url);
            if b < 4 || at(h, s2 + b) != Some(b'.') {
                return None;
            }
            let s3 = s2 + b + 1;
            let c = run(h, s3, 4096, b64url);
            closed(h, s3 + c, is_alnum).map(|e| (p, e))
        }
        Prefix::Pem => pem(h, p, i),
    }
}

/// A PEM private-key block from `-----BEGIN` at `p` to the end of its `-----END ...-----`
/// line (or of its base64 body, when the footer is missing).
fn pem(h: &[u8], p: usize, i: usize) -> Option<(usize, usize)> {
    let line_end = memchr::memchr(b'\n', h.get(i..(i + 64).min(h.len()))?)
        .map_or((i + 64).min(h.len()), |x| i + x);
    let label = h.get(i..line_end)?;
    let dash = memchr::memmem::find(label, b"-----")?;
    memchr::memmem::find(&label[..dash], b"PRIVATE KEY")?;
    let body = i + dash + 5;
    let limit = (body + 65_536).min(h.len());
    if let Some(e) = memchr::memmem::find(h.get(body..limit)?, b"-----END ") {
        let footer = body + e + 9;
        let close = memchr::memmem::find(h.get(footer..(footer + 64).min(h.len()))?, b"-----")?;
        return Some((p, footer + close + 5));
    }
    let mut end = body;
    while end < limit && (is_alnum(h[end]) || matches!(h[end], b'+' | b'/' | b'=' | b'\n' | b'\r'))
    {
        end += 1;
    }
    while end > body && matches!(h[end - 1], b'\n' | b'\r') {
        end -= 1;
    }
    (end > body).then_some((p, end))
}

fn is_ident(b: u8) -> bool {
    is_alnum(b) || b == b'_' || b == b'-' || b == b'.'
}

/// Shannon entropy in bits per byte.
pub(crate) fn entropy(v: &[u8]) -> f64 {
    let mut counts = [0u32; 256];
    for &b in v {
        counts[usize::from(b)] += 1;
    }
    let n = v.len() as f64;
    counts
        .iter()
        .filter(|&&c| c > 0)
        .map(|&c| {
            let p = f64::from(c) / n;
            -p * p.log2()
        })
        .sum()
}

/// Random enough to be a real credential: at least 8 bytes and an entropy of at least
/// `min(3.0, 0.8 * log2(len))` bits per byte (a string of all-distinct characters has
/// `log2(len)`), and not an obvious placeholder.
pub(crate) fn credential_like(v: &[u8]) -> bool {
    if v.len() < 8 || v.len() > 512 {
        return false;
    }
    let lower = v.to_ascii_lowercase();
    for marker in [
        &b"xxxx"[..],
        b"****",
        b"....",
        b"<",
        b"${",
        b"{{",
        b"%(",
        b"example",
        b"placeholder",
        b"your_",
        b"your-",
        b"redacted",
    ] {
        if memchr::memmem::find(&lower, marker).is_some() {
            return false;
        }
    }
    let floor = (0.8 * (v.len() as f64).log2()).min(3.0);
    entropy(v) >= floor
}

/// A value assigned to the credential-named key whose keyword is at `k..kend`.
pub(crate) fn assignment(h: &[u8], k: usize, kend: usize) -> Option<(usize, usize)> {
    let mut e = kend;
    while e < h.len() && is_ident(h[e]) && e - kend < 48 {
        e += 1;
    }
    let mut s = k;
    while s > 0 && is_ident(h[s - 1]) && k - s < 48 {
        s -= 1;
    }
    let _ = s;
    // Closing quote of a quoted key, spaces, the operator, spaces, an opening quote.
    let mut i = e;
    if matches!(at(h, i), Some(b'"' | b'\'' | b'`')) {
        i += 1;
    }
    while matches!(at(h, i), Some(b' ' | b'\t')) {
        i += 1;
    }
    match (at(h, i), at(h, i + 1)) {
        (Some(b':'), Some(b'=')) | (Some(b'='), Some(b'>')) => i += 2,
        (Some(b'='), Some(b'=')) | (Some(b':'), Some(b':')) => return None,
        (Some(b'=' | b':'), _) => i += 1,
        _ => return None,
    }
    while matches!(at(h, i), Some(b' ' | b'\t')) {
        i += 1;
    }
    let quote = match at(h, i) {
        Some(q @ (b'"' | b'\'' | b'`')) => {
            i += 1;
            Some(q)
        }
        _ => None,
    };
    let start = i;
    let mut end = i;
    match quote {
        Some(q) => {
            while end < h.len() && h[end] != q && h[end] != b'\n' && end - start < 512 {
                end += 1;
            }
            if at(h, end) != Some(q) {
                return None;
            }
        }
        None => {
            while end < h.len()
                && !h[end].is_ascii_whitespace()
                && !matches!(
                    h[end],
                    b'"' | b'\'' | b'`' | b',' | b';' | b')' | b']' | b'}' | b'<' | b'>'
                )
                && end - start < 512
            {
                end += 1;
            }
            let v = &h[start..end];
            if v.iter().any(|b| matches!(b, b'(' | b'[' | b'{' | b'$'))
                || (v
                    .iter()
                    .all(|&b| b.is_ascii_lowercase() || b == b'_' || b == b'.')
                    && v.iter().any(|&b| b == b'_' || b == b'.'))
            {
                return None;
            }
        }
    }
    credential_like(&h[start..end]).then_some((start, end))
}

/// The token after `Bearer ` (keyword at `k..kend`).
pub(crate) fn bearer(h: &[u8], kend: usize) -> Option<(usize, usize)> {
    if at(h, kend) != Some(b' ') {
        return None;
    }
    let s = kend + 1;
    let n = run(h, s, 8192, |b| {
        b64url(b) || matches!(b, b'.' | b'~' | b'+' | b'/' | b'=')
    });
    (n >= 16 && credential_like(&h[s..s + n.min(512)])).then_some((s, s + n))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn prefixed(s: &str) -> Option<&str> {
        let h = s.as_bytes();
        for p in 0..h.len() {
            for (pre, kind) in PREFIXES {
                if h[p..].starts_with(pre.as_bytes())
                    && let Some((a, b)) = at_prefix(h, p, pre, kind)
                {
                    return Some(&s[a..b]);
                }
            }
        }
        None
    }

    #[test]
    fn provider_keys() {
        for key in [
            "AKIAOJ3MRDZSY265UITA",
            "ghp_8DbayZAz92gwx8t1eB82PtoSfPPZy4Eb89rU",
            "github_pat_H8gQmp47PjseNQND294DUf_fHa3gTSyCSYDs80myd1qINa3LHvMjCgqoRAKXrEqMnOtXEyS8HILnTGA",
            "glpat-xR3bN8kQ2mV7pL1sT9wZ",
            "xoxb-18344049639-1919541987635-YeP0tGZtBQIumAzqNGDQWJl4",
            "https://hooks.slack.com/services/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",
            "sk_live_evbLJoLoaeTOdoe5c3veGprQ",
            "AIzaVDXBh0bHjUggsMjEVdRYpjlEXaitXs8CclZ",
            "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",
            "sk-ant-api03-9BxLSWEsri9lexspIhBzG96TFBX4DTKRJe0-mAsDnm0_YJ5OFFTWWFvvx5bZ8_6-EeNxOh54erB3lgH2DXFsclSMWjqjGAA",
            "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.aX2fBIGhgpL5s5BBV-_1CyCkYiJncF18pXfqBVSAAxQ",
            "-----BEGIN RSA PRIVATE KEY-----\nMIIEow+abc/def=\n-----END RSA PRIVATE KEY-----",
        ] {
            let text = format!("key = '{key}'\n");
            assert_eq!(prefixed(&text), Some(key), "{key}");
        }
    }

    #[test]
    fn prefix_near_misses() {
        assert_eq!(prefixed("AKIA is a prefix"), None);
        assert_eq!(prefixed("task-list-item"), None);
        assert_eq!(prefixed("sk-learn"), None);
        assert_eq!(
            prefixed("-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----"),
            None
        );
        assert_eq!(prefixed("xAKIAOJ3MRDZSY265UITA"), None);
        assert_eq!(prefixed("eyJhbGciOiJIUzI1NiJ9 alone"), None);
    }

    fn assigned(s: &str) -> Option<&str> {
        let h = s.as_bytes();
        let lower = s.to_ascii_lowercase();
        for kw in KEYWORDS {
            if let Some(k) = lower.find(kw) {
                return assignment(h, k, k + kw.len()).map(|(a, b)| &s[a..b]);
            }
        }
        None
    }

    #[test]
    fn assignments() {
        assert_eq!(
            assigned("DB_PASSWORD=4m5pkheWOiqh4\n"),
            Some("4m5pkheWOiqh4")
        );
        assert_eq!(assigned("DB_PASSWORD=80#uJu6DWBDu\n"), Some("80#uJu6DWBDu"));
        assert_eq!(
            assigned("aws_secret_access_key=\"kDIxqDyJIEcG8lNw+rbSkyTKmLo2plktGsO0lYwE\","),
            Some("kDIxqDyJIEcG8lNw+rbSkyTKmLo2plktGsO0lYwE")
        );
        assert_eq!(
            assigned("'openai_api_key': 'sk-abcDEF123456789012345'"),
            Some("sk-abcDEF123456789012345")
        );
        assert_eq!(
            assigned("{\"password\": \"Tr0ub4dor&3x\"}"),
            Some("Tr0ub4dor&3x")
        );
    }

    #[test]
    fn assignment_near_misses() {
        assert_eq!(assigned("password=xxxxxxxxxxxx"), None);
        assert_eq!(assigned("password = ********"), None);
        assert_eq!(assigned("password=${DB_PASS}"), None);
        assert_eq!(assigned("password = os.environ['X']"), None);
        assert_eq!(assigned("password = db_password"), None);
        assert_eq!(assigned("the password is hunter2hunter"), None);
        assert_eq!(assigned("token == expected_tokens"), None);
        assert_eq!(assigned("password: short"), None);
        assert_eq!(assigned("password: aaaaaaaaaaaaaaaa"), None);
    }

    #[test]
    fn entropy_of_uniform_strings() {
        assert!(entropy(b"aaaa") < 0.001);
        assert!((entropy(b"abcdefgh") - 3.0).abs() < 1e-9);
    }
}
