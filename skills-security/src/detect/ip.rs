//! IP addresses: IPv4 with every octet at most 255 (`172.191.37.15`), and IPv6 in full or
//! compressed form (`1391:fc28:2760:1a66:1265:ad66:af26:e128`, `fe80::1`), checked by the
//! standard library's parser, down to the shortest compressed forms (`::1`, `::a1`). A
//! dotted quad introduced as a version, build or firmware (`version 5.13.2.232`, `Upgrade
//! firmware to 2.6.8.130`) is not an address, nor one tagging a name with no space between
//! (`registry.example/worker:7.27.8.112`, `worker:3.5.7.135`: an image tag), unless that
//! name is an address word (`ip:10.0.0.1`, `client_ip:...`, `upstream:...`).

use std::net::Ipv6Addr;

use super::text::{WINDOW, at, before, digit_run, is_alnum, last_words, lookback, number};

const VERSION_WORDS: [&[u8]; 18] = [
    b"deploy",
    b"deployed",
    b"deploying",
    b"rolled",
    b"rollout",
    b"rolling",
    b"version",
    b"ver",
    b"v",
    b"firmware",
    b"release",
    b"build",
    b"upgrade",
    b"update",
    b"rev",
    b"revision",
    b"patch",
    b"app",
];
const LINKS: [&[u8]; 6] = [b"to", b"from", b"is", b"of", b"at", b"out"];

fn is_version_word(w: &[u8]) -> bool {
    VERSION_WORDS.contains(&w) || w.ends_with(b"_version") || w.ends_with(b"version")
}

/// True when the words before `start` introduce a version rather than an address: a
/// version word (`version`, `build`, `release`, `deploy rolled out`), a letter word right
/// before a slash (`ios/8.22.8.32`, a client or package version), or a YAML `value:`
/// under a version name (`- name: APP_VERSION` on the line above).
fn version_context(h: &[u8], start: usize) -> bool {
    // `user@host`: the word before names a user, whatever it is (`ssh deploy@...`).
    if before(h, start) == Some(b'@') {
        return false;
    }
    if before(h, start) == Some(b'/')
        && matches!(start.checked_sub(2).and_then(|i| at(h, i)), Some(b) if b.is_ascii_alphabetic())
    {
        return true;
    }
    let mut buf = [0u8; WINDOW];
    let w = lookback(h, start, &mut buf);
    let mut words = last_words(w, 2);
    match words.next() {
        Some(last) if is_version_word(last) => true,
        Some(last) if LINKS.contains(&last) => words.next().is_some_and(is_version_word),
        Some(b"value") => {
            // The name on the line above (`- name: APP_VERSION`).
            let line = start - w.len();
            let mut prev = [0u8; WINDOW];
            line > 0
                && last_words(lookback(h, line - 1, &mut prev), 1)
                    .next()
                    .is_some_and(is_version_word)
        }
        _ => false,
    }
}

/// The last words of names that introduce an address as `name:address`.
const ADDRESS_NAMES: [&[u8]; 26] = [
    b"ip",
    b"ipv4",
    b"ips",
    b"addr",
    b"address",
    b"host",
    b"server",
    b"src",
    b"dst",
    b"source",
    b"dest",
    b"destination",
    b"client",
    b"remote",
    b"peer",
    b"from",
    b"to",
    b"gateway",
    b"gw",
    b"dns",
    b"proxy",
    b"upstream",
    b"bind",
    b"listen",
    b"for",
    b"origin",
];

/// True when `name:` sits right before `p` (no space) and the name is not an address word:
/// an image or package tag (`worker:7.27.8.112`).
fn tagged_name(h: &[u8], p: usize) -> bool {
    if before(h, p) != Some(b':') {
        return false;
    }
    let colon = p - 1;
    let mut s = colon;
    while s > 0
        && colon - s < 128
        && (is_alnum(h[s - 1]) || matches!(h[s - 1], b'_' | b'-' | b'.' | b'/'))
    {
        s -= 1;
    }
    if s == colon {
        return false;
    }
    let name = &h[s..colon];
    let last = name
        .rsplit(|&b| matches!(b, b'_' | b'-' | b'.' | b'/'))
        .next()
        .unwrap_or(name);
    !ADDRESS_NAMES.iter().any(|a| last.eq_ignore_ascii_case(a))
}

/// An IPv4 address at the digit `p`; returns its end.
pub(crate) fn v4_at_digit(h: &[u8], p: usize) -> Option<usize> {
    if matches!(before(h, p), Some(b'.')) || tagged_name(h, p) {
        return None;
    }
    let mut i = p;
    for k in 0..4 {
        let n = digit_run(h, i, 3);
        if !(1..=3).contains(&n) || (n > 1 && at(h, i) == Some(b'0')) || number(h, i, n) > 255 {
            return None;
        }
        i += n;
        if k < 3 {
            if at(h, i) != Some(b'.') {
                return None;
            }
            i += 1;
        }
    }
    if matches!(at(h, i), Some(b) if is_alnum(b))
        || (at(h, i) == Some(b'.') && matches!(at(h, i + 1), Some(b) if b.is_ascii_digit()))
    {
        return None;
    }
    (!version_context(h, p)).then_some(i)
}

fn is_v6_byte(b: u8) -> bool {
    b.is_ascii_hexdigit() || b == b':' || b == b'.'
}

/// An IPv6 address starting at `s`; returns its end.
pub(crate) fn v6_at(text: &str, s: usize) -> Option<usize> {
    let h = text.as_bytes();
    if matches!(before(h, s), Some(b) if is_alnum(b) || b == b':') {
        return None;
    }
    let mut e = s;
    while e < h.len() && is_v6_byte(h[e]) && e - s < 45 {
        e += 1;
    }
    // A trailing dot or single colon ends a sentence, not an address.
    while e > s && matches!(h[e - 1], b'.') || (e > s + 1 && h[e - 1] == b':' && h[e - 2] != b':') {
        e -= 1;
    }
    if matches!(at(h, e), Some(b) if is_alnum(b) || b == b':') {
        return None;
    }
    let cand = text.get(s..e)?;
    let colons = cand.bytes().filter(|&b| b == b':').count();
    if colons < 2 || !cand.bytes().any(|b| b.is_ascii_digit()) {
        return None;
    }
    if !cand.contains("::") && colons != 7 && !cand.contains('.') {
        return None;
    }
    let groups = cand.split(':').filter(|g| !g.is_empty()).count();
    // One group only in the shortest forms: `::1`, `::a1`.
    if groups < 2 && !(groups == 1 && cand.starts_with("::")) {
        return None;
    }
    cand.parse::<Ipv6Addr>().ok().map(|_| e)
}

/// The start of a possible IPv6 address whose first group ends at the `:` at `colon`.
pub(crate) fn v6_start_before_colon(h: &[u8], colon: usize) -> usize {
    let mut s = colon;
    while s > 0 && h[s - 1].is_ascii_hexdigit() && colon - s < 4 {
        s -= 1;
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v4(s: &str) -> Option<&str> {
        let h = s.as_bytes();
        let p = h.iter().position(|b| b.is_ascii_digit())?;
        v4_at_digit(h, p).map(|e| &s[p..e])
    }

    #[test]
    fn ipv4() {
        assert_eq!(v4("[http] 172.191.37.15 \"GET"), Some("172.191.37.15"));
        assert_eq!(v4("\"last_ip\": \"10.185.208.57\""), Some("10.185.208.57"));
        assert_eq!(v4("src=192.168.74.236 "), Some("192.168.74.236"));
        assert_eq!(v4("at 10.0.0.1."), Some("10.0.0.1"));
    }

    #[test]
    fn ipv4_near_misses() {
        assert_eq!(v4("version 5.13.2.232 rolled out"), None);
        assert_eq!(v4("Upgrade firmware to 2.6.8.130 before"), None);
        assert_eq!(v4("assert parse_version('4.8.7.268')"), None);
        assert_eq!(v4("x 256.1.1.1"), None);
        assert_eq!(v4("x 1.2.3.4.5"), None);
        assert_eq!(v4("x 01.2.3.4"), None);
        assert_eq!(v4("x 1.2.3"), None);
        assert_eq!(
            v4("image: registry.example.internal/worker:7.27.8.112"),
            None
        );
        assert_eq!(v4("FROM base:3.5.7.135"), None);
        assert_eq!(v4("node:18.16.0.1"), None);
        assert_eq!(v4("ip:10.0.0.1"), Some("10.0.0.1"));
        assert_eq!(v4("client_ip:10.0.0.1"), Some("10.0.0.1"));
        assert_eq!(v4("Client IP: 10.0.0.1"), Some("10.0.0.1"));
    }

    fn v6(s: &str) -> Option<&str> {
        let h = s.as_bytes();
        (0..h.len()).filter(|&c| h[c] == b':').find_map(|c| {
            let st = v6_start_before_colon(h, c);
            v6_at(s, st).map(|e| &s[st..e])
        })
    }

    #[test]
    fn ipv6() {
        assert_eq!(
            v6("src=1391:fc28:2760:1a66:1265:ad66:af26:e128 s"),
            Some("1391:fc28:2760:1a66:1265:ad66:af26:e128")
        );
        assert_eq!(
            v6("\"8f48:dd88:be83:eb94:7060:148a:e78f:3ba\""),
            Some("8f48:dd88:be83:eb94:7060:148a:e78f:3ba")
        );
        assert_eq!(v6("from fe80::1."), Some("fe80::1"));
        assert_eq!(v6("X-Forwarded-For: ::1\n"), Some("::1"));
        assert_eq!(v6("[::1]:8080"), Some("::1"));
    }

    #[test]
    fn ipv6_near_misses() {
        assert_eq!(v6("at 16:28:56.166Z"), None);
        assert_eq!(v6("std::vec"), None);
        assert_eq!(v6("mac 00:1a:2b:3c:4d:5e"), None);
        assert_eq!(v6("Email: x"), None);
        assert_eq!(v6("Foo::1"), None);
        assert_eq!(v6("a ::ff b"), None);
    }
}
