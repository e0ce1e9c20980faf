//! Credentials given by syntax rather than by a prefix: the password of a URL's user, the
//! credentials of an `Authorization: Basic` header, and a password stated in prose. The
//! syntax already says "this is a password", so [`password_like`] judges the value more
//! leniently than an assigned one (no entropy floor for URL passwords), but placeholders,
//! references and documentation stand-ins stay out; prose asks for more (a mix of
//! character classes and the entropy floor), since prose talks about passwords far more
//! often than it gives one. See [`secret`](super::secret) for the rules as a whole.

use super::random::credential_like;
use super::secret::{UNBOUNDED, contains, lowercase_into, run};
use super::text::{WINDOW, at, before, is_alnum, lookback};
use crate::base64::{decode_lenient, strip_padding};

/// Keywords that may introduce a password in prose (see [`prose`]).
pub(crate) const PASSWORD_WORDS: [&str; 6] =
    ["password", "passwd", "pwd", "pw", "passcode", "passphrase"];

/// True when the base64 `v` decodes to text with a `:` (`user:password`).
fn decodes_to_user_pass(v: &[u8]) -> bool {
    decode_lenient(strip_padding(v)).is_some_and(|text| {
        // Credentials are text.
        text.contains(&b':') && !text.iter().any(|&b| b < 0x20 || b == 0x7F)
    })
}

/// The credentials after `Basic ` (keyword ending at `kend`) on an `Authorization` line.
pub(crate) fn basic(h: &[u8], k: usize, kend: usize) -> Option<(usize, usize)> {
    if at(h, kend) != Some(b' ') {
        return None;
    }
    let mut buf = [0u8; WINDOW];
    let w = lookback(h, k, &mut buf);
    super::text::find(w, b"authorization")?;
    let s = kend + 1;
    let n = run(h, s, UNBOUNDED, |b| {
        is_alnum(b) || matches!(b, b'+' | b'/' | b'=' | b'-' | b'_')
    });
    let v = &h[s..s + n];
    (n >= 8 && decodes_to_user_pass(v) && credential_like(v)).then_some((s, s + n))
}

/// The password of a URL's user at the `://` at `p`: `scheme://user:PASSWORD@host`.
pub(crate) fn url_password(h: &[u8], p: usize) -> Option<(usize, usize)> {
    let s = p + 3;
    // The authority ends at the path or anything that ends a URL. A `#` or `?` may sit in
    // an unencoded password (`jdbc:mysql://app:Vq7#pL2m@db`), so they do not end it, but a
    // user part that reads as a query (`?`, `&`, `=`) is not one.
    let n = run(h, s, 512, |b| {
        !b.is_ascii_whitespace() && !matches!(b, b'/' | b'"' | b'\'' | b'`' | b'<' | b'>')
    });
    let authority = &h[s..s + n];
    let at_sign = memchr::memrchr(b'@', authority)?;
    let user_info = &authority[..at_sign];
    if user_info.iter().any(|b| matches!(b, b'?' | b'&' | b'=')) {
        return None;
    }
    let colon = memchr::memchr(b':', user_info)?;
    let (start, end) = (s + colon + 1, s + at_sign);
    let pw = &h[start..end];
    if pw.is_empty() || !password_like(pw) {
        return None;
    }
    Some((start, end))
}

/// A password a URL or prose gives, judged more leniently than an assigned value (the
/// syntax already says it is a password): no placeholder, no reference, at least four
/// bytes, not one repeated character, not a stand-in word of documentation and defaults
/// (`password`, `pass`, `secret`, `user`, `guest`, `test`).
fn password_like(v: &[u8]) -> bool {
    if v.len() < 4 {
        return false;
    }
    let mut buf = [0u8; 512];
    let lower = lowercase_into(v, &mut buf);
    if [
        &b"password"[..],
        b"passwd",
        b"pass",
        b"pwd",
        b"secret",
        b"user",
        b"username",
        b"guest",
        b"test",
        b"changeit",
    ]
    .contains(&lower)
    {
        return false;
    }
    if v.iter().all(|&b| b == v[0]) {
        return false;
    }
    // `xxx` or `XXX` as a stand-in (a random `xXX` inside a real password is kept).
    if contains(v, b"xxx") || contains(v, b"XXX") {
        return false;
    }
    for marker in [
        &b"***"[..],
        b"<",
        b"${",
        b"{{",
        b"%(",
        b"$(",
        b"your",
        b"example",
        b"placeholder",
        b"redacted",
    ] {
        if contains(lower, marker) {
            return false;
        }
    }
    true
}

/// The command-line options that carry credentials, as scan triggers.
pub(crate) const CLI_OPTIONS: [&str; 4] = ["-u ", "--user ", "--user=", "-p"];

/// The end of a command-line argument value from `i`: to its closing quote when it opens
/// with one (returns the inner span), else to the next whitespace.
fn argument(h: &[u8], i: usize) -> Option<(usize, usize)> {
    match at(h, i) {
        Some(q @ (b'\'' | b'"')) => {
            let s = i + 1;
            let n = run(h, s, 512, |b| b != q && b != b'\n');
            (at(h, s + n) == Some(q)).then_some((s, s + n))
        }
        _ => {
            let n = run(h, i, UNBOUNDED, |b| !b.is_ascii_whitespace());
            Some((i, i + n))
        }
    }
}

/// A password given on a command line, at the option at `p..e` (one of [`CLI_OPTIONS`]):
/// the password of `curl -u user:PASS` or `--user user:PASS`, or of `mysql -pPASS`
/// / `-p'PASS'` (only on a `mysql`/`mariadb` command line: `-p` means a port or a
/// path elsewhere).
pub(crate) fn cli(h: &[u8], p: usize, e: usize) -> Option<(usize, usize)> {
    if !matches!(before(h, p), Some(b' ' | b'\t')) {
        return None;
    }
    let opt = h.get(p..e)?;
    if opt == b"-p" {
        // Attached value only: `-p 3306` and `-P3306` are ports.
        if matches!(at(h, e), None | Some(b' ' | b'\t' | b'\n')) {
            return None;
        }
        let mut buf = [0u8; WINDOW];
        let w = lookback(h, p, &mut buf);
        if !(contains(w, b"mysql") || contains(w, b"mariadb")) {
            return None;
        }
        let (s, end) = argument(h, e)?;
        return password_like(&h[s..end]).then_some((s, end));
    }
    if opt[1] == b'u' && &h[p..e] != b"-u " {
        // `-U` is another option.
        return None;
    }
    let (s, end) = argument(h, e)?;
    let v = &h[s..end];
    let colon = v.iter().position(|&b| b == b':')?;
    let user = &v[..colon];
    if user.is_empty() || user.iter().all(u8::is_ascii_digit) {
        return None;
    }
    let ps = s + colon + 1;
    password_like(&h[ps..end]).then_some((ps, end))
}

/// Words that may sit between a password word and the password in prose.
const LINKS: [&[u8]; 14] = [
    b"is",
    b"was",
    b"now",
    b"literally",
    b"still",
    b"just",
    b"set",
    b"to",
    b"changed",
    b"reset",
    b"updated",
    b"currently",
    b"actually",
    b"temporarily",
];

/// The number of character classes (lower, upper, digit, other) in `v`.
fn classes(v: &[u8]) -> usize {
    let mut c = [false; 4];
    for &b in v {
        let k = if b.is_ascii_lowercase() {
            0
        } else if b.is_ascii_uppercase() {
            1
        } else if b.is_ascii_digit() {
            2
        } else {
            3
        };
        c[k] = true;
    }
    c.iter().filter(|&&x| x).count()
}

/// The position after ` word` at `i` (one space, the word, ASCII case-insensitive, then
/// not a letter or digit).
fn word_after(h: &[u8], i: usize, word: &[u8]) -> Option<usize> {
    let e = i + 1 + word.len();
    (at(h, i) == Some(b' ')
        && h.get(i + 1..e)?.eq_ignore_ascii_case(word)
        && !matches!(at(h, e), Some(b) if is_alnum(b)))
    .then_some(e)
}

/// A password given in prose after the password word at `k..kend`: `my password is
/// hunter2-X9!`, `the prod pw is literally ...`.
pub(crate) fn prose(h: &[u8], k: usize, kend: usize) -> Option<(usize, usize)> {
    if matches!(before(h, k), Some(b) if is_alnum(b))
        || matches!(at(h, kend), Some(b) if is_alnum(b))
    {
        return None;
    }
    let mut i = kend;
    let mut links = 0;
    // `password for the admin account is ...`: what the password is for, up to five
    // words, then a link.
    if let Some(after_for) = word_after(h, i, b"for") {
        let mut j = after_for;
        for _ in 0..5 {
            let sp = run(h, j, 2, |b| b == b' ');
            let w = run(h, j + sp, 24, |b| {
                b.is_ascii_alphanumeric() || b == b'_' || b == b'-'
            });
            if sp == 0 || w == 0 {
                break;
            }
            let word = &h[j + sp..j + sp + w];
            if word.eq_ignore_ascii_case(b"is") || word.eq_ignore_ascii_case(b"was") {
                i = j;
                break;
            }
            j += sp + w;
            if at(h, j) == Some(b':') {
                i = j;
                break;
            }
        }
        if i == kend {
            return None;
        }
    }
    loop {
        let sp = run(h, i, 4, |b| b == b' ' || b == b':' || b == b'=');
        if sp == 0 {
            return None;
        }
        i += sp;
        let w = run(h, i, 16, |b| b.is_ascii_alphabetic());
        let word = &h[i..i + w];
        if links < 4
            && w > 0
            && LINKS.iter().any(|l| word.eq_ignore_ascii_case(l))
            && matches!(at(h, i + w), Some(b' ' | b':' | b'='))
        {
            i += w;
            links += 1;
            continue;
        }
        break;
    }
    let start = i + usize::from(matches!(at(h, i), Some(b'"' | b'\'' | b'`')));
    let mut end = start + run(h, start, 129, |b| b.is_ascii_graphic());
    while end > start
        && matches!(
            h[end - 1],
            b'.' | b',' | b';' | b':' | b')' | b'"' | b'\'' | b'`'
        )
    {
        end -= 1;
    }
    let v = &h[start..end];
    if !(8..=128).contains(&v.len())
        || contains(v, b"://")
        || classes(v) < 3
        || !password_like(v)
        || !credential_like(v)
    {
        return None;
    }
    Some((start, end))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn said(s: &str) -> Option<&str> {
        let h = s.as_bytes();
        let lower = s.to_ascii_lowercase();
        PASSWORD_WORDS.iter().find_map(|kw| {
            let k = lower.find(kw)?;
            prose(h, k, k + kw.len()).map(|(a, b)| &s[a..b])
        })
    }

    #[test]
    fn passwords_in_prose() {
        assert_eq!(said("my password is hunter2-X9! ok"), Some("hunter2-X9!"));
        assert_eq!(
            said("the prod pw is literally bQf+vyb2!kl7rA"),
            Some("bQf+vyb2!kl7rA")
        );
        assert_eq!(said("PASSWORD IS: Zx8#kLm2Pq"), Some("Zx8#kLm2Pq"));
        assert_eq!(
            said("The password for the admin account is Qw3rty!234."),
            Some("Qw3rty!234")
        );
        assert_eq!(said("passcode for the vault: 7Hq!x92Lm"), Some("7Hq!x92Lm"));
        for no in [
            "the password is incorrect, I tried twice",
            "the password is case-sensitive.",
            "password was changed on 2024-01-01",
            "password is set to expire",
            "the password for the account is required",
            "passwords are hashed",
            "upward is 7Hq!x92Lm",
            "password is https://reset.example.com/Ab1?x=2",
        ] {
            assert_eq!(said(no), None, "{no}");
        }
    }

    #[test]
    fn credentials_in_urls_and_headers() {
        let url = |s: &str| {
            let p = s.find("://")?;
            url_password(s.as_bytes(), p).map(|(a, b)| s[a..b].to_owned())
        };
        assert_eq!(
            url("postgresql://app:Qsy8Xu@db:5432/x").as_deref(),
            Some("Qsy8Xu")
        );
        assert_eq!(
            url("jdbc:mysql://a:Vq7#pL2m@db/x").as_deref(),
            Some("Vq7#pL2m")
        );
        assert_eq!(url("postgres://user:password@localhost/db"), None);
        assert_eq!(url("https://host/p?u=a:b@c"), None);
        assert_eq!(url("https://host:8080/path"), None);
        assert_eq!(url("amqp://guest:guest@localhost/"), None);
        let b = b"Authorization: Basic c3ZjX2pmZ2FjOkREa35vM1NuOFBXNn5Yd1V2TFE=";
        assert_eq!(basic(b, 15, 20), Some((21, b.len())));
        // Base64 that does not decode to `user:password`.
        let b = b"Authorization: Basic QmFzaWNQbGFuVGllcjI=";
        assert_eq!(basic(b, 15, 20), None);
    }
}
