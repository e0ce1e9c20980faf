//! Credentials: provider keys found by their prefixes (AWS `AKIA`/`ASIA`, GitHub `ghp_`...
//! and `github_pat_`, GitLab `glpat-`, Slack `xoxb-`... and webhooks, Stripe `sk_live_`,
//! Google `AIza`, OpenAI `sk-`, Anthropic `sk-ant-`, Mailgun `key-` + 32 hex), JWTs, PEM
//! private keys, and values given to a credential:
//!
//! * assigned to a credential-named key (`DB_PASSWORD=...`, `"api_key": "..."`,
//!   `aws_secret_access_key="..."`, `'password' => '...'`) or held in a credential-named
//!   XML element (`<password>...</password>`, `<apiKey>`, `<secret>`);
//! * after `Bearer `, or, by syntax ([`credential`](super::credential)), on an
//!   `Authorization` line after `Basic ` (the base64 must decode to `user:password`);
//! * the password of a URL's user (`postgresql://app:PASSWORD@db:5432/x`: the password
//!   alone; [`credential`](super::credential));
//! * in free text ([`credential`](super::credential)), after a password word and links (`my password is hunter2-X9!`, `the
//!   prod pw is literally ...`, `PASSWORD IS: ...`, `the password for the admin account
//!   is ...`): the value must also mix at least three of lower case, upper case, digits
//!   and symbols, so `the password is incorrect` is prose.
//!
//! Values must be random enough to be real (an entropy floor): placeholders (`xxxxxxxx`,
//! `********`, `<your-password>`, `YOUR_API_KEY_HERE`) and references (`${DB_PASS}`,
//! `{{ vault }}`, `%(DB_PASS)s`, `os.environ[...]`) stay out; `changeme` is kept, a real
//! if weak password. A token is covered whole however long it is: runs of token
//! characters are read to their end (the scan resumes after them, and a refused value's
//! run is remembered for the keys inside it, [`ValueRun`], so this stays linear); only
//! searches that may fail (a closing quote) are bounded, at 8 KiB.

use super::random::credential_like;
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
    Mailgun,
}

/// Case-sensitive prefixes and what they introduce.
pub(crate) const PREFIXES: [(&str, Prefix); 30] = [
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
    ("key-", Prefix::Mailgun),
];

/// Key names whose assigned values are credentials (matched inside identifiers, any case).
pub(crate) const KEYWORDS: [&str; 17] = [
    "password",
    "passwd",
    "pwd",
    "pw",
    "passcode",
    "passphrase",
    "secret",
    "token",
    "api_key",
    "apikey",
    "api-key",
    "access_key",
    "private_key",
    "credential",
    "auth_key",
    "accountkey",
    "sharedaccesskey",
];

/// The longest search for something that may not come (a closing quote or tag).
pub(crate) const SEARCH: usize = 8192;

/// A run of token bytes is read to its end, whatever its length (see the module docs).
pub(crate) const UNBOUNDED: usize = usize::MAX;

pub(crate) fn run(h: &[u8], i: usize, max: usize, ok: impl Fn(u8) -> bool) -> usize {
    let mut n = 0;
    while n < max && h.get(i + n).is_some_and(|&b| ok(b)) {
        n += 1;
    }
    n
}

pub(crate) fn b64url(b: u8) -> bool {
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
    let found = token_at(h, p, i, kind)?;
    // A placeholder after a real prefix (`sk_live_XXXXXXXXXXXXXXXX`): a run of one
    // repeated character. PEM and JWT bodies are base64 of structured data, where such
    // runs are real.
    if !matches!(kind, Prefix::Pem | Prefix::Jwt) && repeated_run(&h[i.min(found.1)..found.1], 8) {
        return None;
    }
    Some(found)
}

/// True when `v` holds a run of at least `n` copies of one letter or digit.
fn repeated_run(v: &[u8], n: usize) -> bool {
    let mut len = 0;
    let mut prev = 0u8;
    for &b in v {
        len = if b == prev { len + 1 } else { 1 };
        prev = b;
        if len >= n && is_alnum(b) {
            return true;
        }
    }
    false
}

/// The token of `kind` whose prefix is `p..i`.
fn token_at(h: &[u8], p: usize, i: usize, kind: Prefix) -> Option<(usize, usize)> {
    match kind {
        Prefix::Aws => {
            let n = run(h, i, 17, |b| b.is_ascii_uppercase() || b.is_ascii_digit());
            (n == 16).then_some(())?;
            closed(h, i + n, is_alnum).map(|e| (p, e))
        }
        Prefix::GitHub => {
            let n = run(h, i, UNBOUNDED, is_alnum);
            (n >= 30).then_some(())?;
            closed(h, i + n, b64url).map(|e| (p, e))
        }
        Prefix::GitHubPat => {
            let n = run(h, i, UNBOUNDED, |b| is_alnum(b) || b == b'_');
            (n >= 40).then_some(())?;
            closed(h, i + n, b64url).map(|e| (p, e))
        }
        Prefix::GitLab => {
            let n = run(h, i, UNBOUNDED, b64url);
            (n >= 20).then_some(()).map(|_| (p, i + n))
        }
        Prefix::SlackToken => {
            let n = run(h, i, UNBOUNDED, |b| is_alnum(b) || b == b'-');
            (n >= 10).then_some(()).map(|_| (p, i + n))
        }
        Prefix::SlackWebhook => {
            let start = if p >= 8 && h.get(p - 8..p) == Some(b"https://") {
                p - 8
            } else {
                p
            };
            let n = run(h, i, UNBOUNDED, |b| {
                is_alnum(b) || matches!(b, b'/' | b'_' | b'-')
            });
            (n >= 20).then_some(()).map(|_| (start, i + n))
        }
        Prefix::Stripe => {
            let n = run(h, i, UNBOUNDED, is_alnum);
            (n >= 10).then_some(())?;
            closed(h, i + n, b64url).map(|e| (p, e))
        }
        Prefix::Google => {
            let n = run(h, i, 41, b64url);
            (33..=40).contains(&n).then_some(())?;
            closed(h, i + n, b64url).map(|e| (p, e))
        }
        Prefix::SkDash => {
            let n = run(h, i, UNBOUNDED, b64url);
            let body = h.get(i..i + n)?;
            let anthropic = body.starts_with(b"ant-");
            let min = if anthropic { 40 } else { 20 };
            let mixed = body.iter().any(u8::is_ascii_digit)
                && body.iter().any(u8::is_ascii_uppercase)
                && body.iter().any(u8::is_ascii_lowercase);
            (n >= min && mixed).then_some((p, i + n))
        }
        Prefix::Jwt => {
            let a = run(h, p, UNBOUNDED, b64url);
            if a < 10 || at(h, p + a) != Some(b'.') {
                return None;
            }
            let s2 = p + a + 1;
            let b = run(h, s2, UNBOUNDED, b64url);
            if b < 4 || at(h, s2 + b) != Some(b'.') {
                return None;
            }
            let s3 = s2 + b + 1;
            let c = run(h, s3, UNBOUNDED, b64url);
            closed(h, s3 + c, is_alnum).map(|e| (p, e))
        }
        Prefix::Pem => pem(h, p, i),
        Prefix::Mailgun => {
            let n = run(h, i, 33, |b| {
                b.is_ascii_digit() || (b'a'..=b'f').contains(&b)
            });
            (n == 32).then_some(())?;
            closed(h, i + n, b64url).map(|e| (p, e))
        }
    }
}

/// A PEM private-key block from `-----BEGIN` at `p` to the end of its `-----END ...-----`
/// line (or of its base64 body, when the footer is missing).
fn pem(h: &[u8], p: usize, i: usize) -> Option<(usize, usize)> {
    let line_end = memchr::memchr(b'\n', h.get(i..(i + 64).min(h.len()))?)
        .map_or((i + 64).min(h.len()), |x| i + x);
    let label = h.get(i..line_end)?;
    let dash = super::text::find(label, b"-----")?;
    super::text::find(&label[..dash], b"PRIVATE KEY")?;
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

/// `v` ASCII-lowercased into `buf` (truncated to its length).
pub(crate) fn lowercase_into<'b>(v: &[u8], buf: &'b mut [u8; 512]) -> &'b [u8] {
    let n = v.len().min(buf.len());
    for (o, b) in buf.iter_mut().zip(&v[..n]) {
        *o = b.to_ascii_lowercase();
    }
    &buf[..n]
}

/// True when `needle` occurs in `hay`.
pub(crate) fn contains(hay: &[u8], needle: &[u8]) -> bool {
    super::text::find(hay, needle).is_some()
}

/// A value assigned to the credential-named key whose keyword is at `k..kend`, or held in
/// an XML element of that name.
#[cfg(test)]
pub(crate) fn assignment(h: &[u8], k: usize, kend: usize) -> Option<(usize, usize)> {
    assignment_in(h, k, kend, &mut ValueRun::default())
}

/// What the pass learnt about the last unquoted value it read to its end: the value's
/// extent and where in it the bytes the refusal checks look for last occur.
///
/// Threat: an unquoted value is read to its end without a bound (a token is covered whole),
/// and a refused value (`token=token=token=...`, low entropy) holds the next key, whose
/// value runs to the same end: read afresh for every key, a text of such keys costs time
/// quadratic in its length (64 KiB took 0.6 s, 1 MiB minutes). Guarantee: a value starting
/// inside the last one read ends where it ends (the run's bytes are judged one by one), and
/// its checks are answered from the last positions kept here, so every byte is read once
/// per pass; the same findings as reading it afresh (tested).
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct ValueRun {
    /// The run last read, `from..end`; empty before the first.
    from: usize,
    end: usize,
    known: bool,
    /// The last `(`, `[`, `{` or `$` in the run.
    last_open: Option<usize>,
    /// The last byte other than a lowercase letter, `_` or `.`.
    last_other: Option<usize>,
    /// The last `_` or `.`.
    last_dot: Option<usize>,
    /// Bytes read so far (read by the linearity test).
    #[cfg_attr(not(test), allow(dead_code))]
    read: usize,
}

impl ValueRun {
    /// The unquoted value from `start`: its end, and whether it holds an opening bracket or
    /// `$`, and whether it is all lowercase, `_` and `.` with at least one `_` or `.` (a
    /// dotted or snake-case name, not a secret).
    fn value(&mut self, h: &[u8], start: usize) -> (usize, bool, bool) {
        if !(self.known && self.from <= start && start <= self.end) {
            *self = ValueRun {
                from: start,
                end: start,
                known: true,
                read: self.read,
                ..ValueRun::default()
            };
            while let Some(&b) = h.get(self.end) {
                if b.is_ascii_whitespace()
                    || matches!(
                        b,
                        b'"' | b'\'' | b'`' | b',' | b';' | b')' | b']' | b'}' | b'<' | b'>'
                    )
                {
                    break;
                }
                if matches!(b, b'(' | b'[' | b'{' | b'$') {
                    self.last_open = Some(self.end);
                }
                if b == b'_' || b == b'.' {
                    self.last_dot = Some(self.end);
                } else if !b.is_ascii_lowercase() {
                    self.last_other = Some(self.end);
                }
                self.end += 1;
            }
            self.read += self.end - start;
        }
        let open = self.last_open.is_some_and(|i| i >= start);
        let name =
            self.last_other.is_none_or(|i| i < start) && self.last_dot.is_some_and(|i| i >= start);
        (self.end, open, name)
    }
}

/// [`assignment`], remembering the unquoted value read in `runs` for the keys inside it.
pub(crate) fn assignment_in(
    h: &[u8],
    k: usize,
    kend: usize,
    runs: &mut ValueRun,
) -> Option<(usize, usize)> {
    let mut e = kend;
    while e < h.len() && is_ident(h[e]) && e - kend < 48 {
        e += 1;
    }
    let mut s = k;
    while s > 0 && is_ident(h[s - 1]) && k - s < 48 {
        s -= 1;
    }
    if at(h, e) == Some(b'>') && before(h, s) == Some(b'<') {
        return element(h, e + 1);
    }
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
    let end = match quote {
        Some(q) => {
            let limit = (start + SEARCH).min(h.len());
            // SIMD search: a run of unclosed quotes costs little even at the bound.
            let n = memchr::memchr2(q, b'\n', &h[start..limit])?;
            if h[start + n] != q {
                return None;
            }
            start + n
        }
        None => {
            let (end, open, name) = runs.value(h, start);
            if open || name {
                return None;
            }
            end
        }
    };
    credential_like(&h[start..end]).then_some((start, end))
}

/// The text of an XML element from `start` (after its opening tag) to its closing tag.
fn element(h: &[u8], start: usize) -> Option<(usize, usize)> {
    let limit = (start + SEARCH).min(h.len());
    let n = memchr::memchr2(b'<', b'\n', &h[start..limit])?;
    let end = start + n;
    if h.get(end..end + 2) != Some(b"</") {
        return None;
    }
    credential_like(&h[start..end]).then_some((start, end))
}

/// The token after `Bearer ` (keyword at `k..kend`).
pub(crate) fn bearer(h: &[u8], kend: usize) -> Option<(usize, usize)> {
    if at(h, kend) != Some(b' ') {
        return None;
    }
    let s = kend + 1;
    let n = run(h, s, UNBOUNDED, |b| {
        b64url(b) || matches!(b, b'.' | b'~' | b'+' | b'/' | b'=')
    });
    (n >= 16 && credential_like(&h[s..s + n])).then_some((s, s + n))
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
            "key-aa6768fda8aeb44f5cb9d8cd11e019e6",
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
        assert_eq!(prefixed("key-value store"), None);
        assert_eq!(prefixed("key-aa6768fda8aeb44f5cb9d8cd11e019e"), None);
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

    /// `token=token=...` (every value refused, each holding the next key) is read once, not
    /// once per key; and remembering the run finds what reading each value afresh finds.
    #[test]
    fn keys_inside_a_refused_value_do_not_reread_it() {
        let text = "token=".repeat(20_000);
        let h = text.as_bytes();
        let mut runs = ValueRun::default();
        let mut k = 0;
        while let Some(p) = text[k..].find("token") {
            let s = k + p;
            assert_eq!(assignment_in(h, s, s + 5, &mut runs), None);
            k = s + 5;
        }
        assert!(
            runs.read <= h.len(),
            "{} bytes read for {}",
            runs.read,
            h.len()
        );
        let mixed = "a=x key=Zq9fKx2Lm8Tw4Rb7 key=a_b.c password=ab(cd)efgh token=Zq9f_Kx2Lm8Tw4Rb7 \
                     secret=zq.9fkx2lm8tw4rb7key=Zq9fKx2Lm8Tw4Rb7$x api_key=abc_def.ghi";
        let h = mixed.as_bytes();
        let mut runs = ValueRun::default();
        for s in 0..h.len() {
            for e in s + 1..=(s + 8).min(h.len()) {
                assert_eq!(
                    assignment_in(h, s, e, &mut runs),
                    assignment(h, s, e),
                    "{s}..{e}"
                );
            }
        }
    }

    #[test]
    fn credential_elements() {
        let h = b"<password>0A%I8qMPuzZa3+vL-k</password>";
        assert_eq!(assignment(h, 1, 9), Some((10, 28)));
        let h = b"<password>********</password>";
        assert_eq!(assignment(h, 1, 9), None);
        // A closing tag is not an opening one.
        let h = b"</password>0A%I8qMPuzZa3+vL-k";
        assert_eq!(assignment(h, 2, 10), None);
    }
}
