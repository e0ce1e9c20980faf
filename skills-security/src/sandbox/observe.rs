//! Observation (detonation): what an observed run tried, the decoy credentials planted for
//! it, and the parsers of the arguments it passed (socket addresses, DNS questions), which
//! read bytes the script chose and so must hold on any input.
//!
//! Threat: a script that behaves only when run: it resolves a name, connects out, reads the
//! user's SSH keys, cloud or browser credentials or wallets and posts them, writes outside
//! its scratch directory, or drops a program and executes it. A static scan misses what is
//! assembled at run time. Guarantee, for a run with [`SandboxConfig::observe`](super::SandboxConfig::observe):
//!
//! * **Enforcement is unchanged.** Observation adds a seccomp user-notification route for
//!   `connect`, `sendto`, `sendmsg`, `sendmmsg`, `execve`, `execveat` and the opens
//!   (`open`, `openat`, `openat2`, `creat`). A network call with an IP destination is
//!   answered with an error and never made (a UDP `connect` to port 53 is answered as a
//!   success without being made, so that the resolver sends its question, which is then
//!   read and refused); sends without a destination and opens are continued, so the kernel,
//!   Landlock and the network namespace decide exactly as without observation; programs
//!   start only when the config lets them (otherwise refused, as before). The only rule
//!   relaxed is the socket family filter (IPv4 and IPv6 sockets may be made with the network
//!   off), and only on the isolated tiers, whose network namespace has no interface up: an
//!   observed run is refused on [`Tier::RlimitsOnly`](super::Tier::RlimitsOnly).
//! * **Decoys.** Before the script starts its `HOME` holds decoy credentials ([`DECOYS`]:
//!   SSH keys, cloud, container and cluster credentials, `.netrc`, git credentials, `.env`,
//!   browser login stores, wallets, shell histories), each holding a random canary made for
//!   the run. An open of a decoy, or of a credential-looking path elsewhere (which Landlock
//!   refuses), is a [`Observation::CredentialRead`]; a send or DNS question carrying the
//!   canary is marked `carries_decoy`.
//! * **Bounded.** At most [`MAX_OBSERVATIONS`] distinct observations are kept (the rest are
//!   counted); at most [`MAX_READ_BYTES`] are read per argument, 32 arguments per program;
//!   the run's own time, CPU and memory limits hold.
//!
//! What does not hold: observation reads the caller's memory after the call was made and
//! before it is answered, so a multi-threaded script can rewrite a path or address between
//! the read and the kernel's own read (time of check to time of use). It can hide what it
//! does from observation but gains nothing: every continued call is then checked by the
//! kernel, Landlock and the namespaces, and network calls with a destination are never made.
//! A script can also notice it is observed (decoys, no network) and stay quiet.

use serde::Serialize;

use super::neutralize;

/// Most distinct observations one run keeps.
pub const MAX_OBSERVATIONS: usize = 1_000;
/// Most bytes read from the caller's memory for one argument (a path, an address, a
/// payload).
pub const MAX_READ_BYTES: usize = 4_096;
/// Most characters kept of one string in an observation.
const MAX_SHOWN: usize = 256;

/// One thing an observed run tried.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
#[non_exhaustive]
pub enum Observation {
    /// A `connect` to a network address (answered with an error, never made).
    Connect {
        /// `ipv4`, `ipv6`, `unix` or `family <n>`.
        family: String,
        /// The address (a unix socket's path).
        address: String,
        /// The port (0 for unix sockets).
        port: u16,
    },
    /// A DNS question the resolver sent (refused, never sent).
    DnsLookup {
        /// The name asked for.
        name: String,
        /// The name holds the run's decoy canary (a credential read and sent out in the
        /// name).
        carries_decoy: bool,
    },
    /// A datagram sent to an address other than a DNS server's (refused, never sent).
    Send {
        /// As in [`Observation::Connect`].
        family: String,
        /// The destination address.
        address: String,
        /// The destination port.
        port: u16,
        /// The payload holds the run's decoy canary.
        carries_decoy: bool,
    },
    /// An open of a credential file: a planted decoy in `HOME` (`decoy`), or a
    /// credential-looking path elsewhere (refused by Landlock).
    CredentialRead {
        /// The path; decoys as `~/...`.
        path: String,
        /// A planted decoy.
        decoy: bool,
    },
    /// An open for writing (or creating) outside the scratch directory (refused by
    /// Landlock).
    WriteOutsideScratch {
        /// The path.
        path: String,
    },
    /// A program started (`execve`/`execveat`), allowed or refused by the config.
    ProgramStarted {
        /// The program's path as given.
        path: String,
        /// Its arguments (at most 32, each cut to 256 characters).
        argv: Vec<String>,
        /// The program, or a file among its arguments, lies in the run's scratch
        /// directory: written by the run and then started.
        dropped: bool,
        /// The config let it start (Landlock and the scratch mount's `noexec` still
        /// decide whether it does).
        allowed: bool,
    },
}

/// Cuts and neutralises a string from the script.
pub(crate) fn shown(bytes: &[u8]) -> String {
    // `neutralize` keeps newlines and tabs (they belong in output text); an observed name or
    // path is one field, so a newline in it would forge a line of a report: escaped too.
    let text = neutralize(bytes).replace('\n', "\\n").replace('\t', "\\t");
    if text.chars().count() <= MAX_SHOWN {
        return text;
    }
    let mut cut: String = text.chars().take(MAX_SHOWN).collect();
    cut.push('…');
    cut
}

/// The family, address and port of a socket address as the kernel lays it out
/// (`sockaddr_in`, `sockaddr_in6`, `sockaddr_un`); `None` when too short for its family.
pub fn parse_sockaddr(bytes: &[u8]) -> Option<(String, String, u16)> {
    let family = u16::from_ne_bytes([*bytes.first()?, *bytes.get(1)?]);
    let port = || Some(u16::from_be_bytes([*bytes.get(2)?, *bytes.get(3)?]));
    match i32::from(family) {
        libc::AF_INET => {
            let a: [u8; 4] = bytes.get(4..8)?.try_into().ok()?;
            Some((
                "ipv4".into(),
                std::net::Ipv4Addr::from(a).to_string(),
                port()?,
            ))
        }
        libc::AF_INET6 => {
            let a: [u8; 16] = bytes.get(8..24)?.try_into().ok()?;
            Some((
                "ipv6".into(),
                std::net::Ipv6Addr::from(a).to_string(),
                port()?,
            ))
        }
        libc::AF_UNIX => {
            let path = bytes.get(2..)?;
            // Abstract names start with a NUL; paths end at the first one.
            let path = match path.first() {
                Some(0) => path,
                _ => path.split(|b| *b == 0).next().unwrap_or(&[]),
            };
            Some(("unix".into(), shown(path), 0))
        }
        other => Some((
            format!("family {other}"),
            String::new(),
            port().unwrap_or(0),
        )),
    }
}

/// Most compression pointers followed in one name.
const MAX_POINTERS: usize = 16;

/// The first question's name of a DNS query (`example.org`), or `None` when `bytes` is not
/// a DNS query with at least one question: a response, a truncated header or name, a label
/// over 63 bytes, a name over 255, a pointer loop or more than 16 pointers.
pub fn parse_dns_query(bytes: &[u8]) -> Option<String> {
    let header = bytes.get(..12)?;
    let flags = u16::from_be_bytes([header[2], header[3]]);
    let questions = u16::from_be_bytes([header[4], header[5]]);
    // QR set: a response; opcode other than a standard query: not a lookup.
    if flags & 0x8000 != 0 || (flags >> 11) & 0xf != 0 || questions == 0 {
        return None;
    }
    let mut name: Vec<u8> = Vec::new();
    let mut at = 12usize;
    let mut pointers = 0;
    loop {
        let len = *bytes.get(at)?;
        match len {
            0 => break,
            l if l & 0xc0 == 0xc0 => {
                pointers += 1;
                let target = usize::from(u16::from_be_bytes([l & 0x3f, *bytes.get(at + 1)?]));
                // Pointers only go backwards in a well-formed message: this also ends loops.
                if pointers > MAX_POINTERS || target >= at {
                    return None;
                }
                at = target;
            }
            l if l & 0xc0 != 0 => return None,
            l => {
                let label = bytes.get(at + 1..at + 1 + usize::from(l))?;
                if !name.is_empty() {
                    name.push(b'.');
                }
                name.extend_from_slice(label);
                if name.len() > 255 {
                    return None;
                }
                at += 1 + usize::from(l);
            }
        }
    }
    if name.is_empty() {
        return Some(".".into());
    }
    Some(shown(&name))
}

/// The decoys planted in an observed run's `HOME`: paths relative to it (directories end
/// with `/`) and what each file looks like (`{canary}` is replaced by the run's canary).
pub const DECOYS: &[(&str, &str)] = &[
    (".ssh/", ""),
    (
        ".ssh/id_rsa",
        "-----BEGIN OPENSSH PRIVATE KEY-----\n{canary}\n-----END OPENSSH PRIVATE KEY-----\n",
    ),
    (
        ".ssh/id_ed25519",
        "-----BEGIN OPENSSH PRIVATE KEY-----\n{canary}\n-----END OPENSSH PRIVATE KEY-----\n",
    ),
    (".ssh/known_hosts", "git.internal ssh-ed25519 {canary}\n"),
    (".aws/", ""),
    (
        ".aws/credentials",
        "[default]\naws_access_key_id = AKIA{canary}\naws_secret_access_key = {canary}\n",
    ),
    (".config/", ""),
    (".config/gcloud/", ""),
    (
        ".config/gcloud/application_default_credentials.json",
        "{\"type\": \"authorized_user\", \"refresh_token\": \"{canary}\"}\n",
    ),
    (".azure/", ""),
    (
        ".azure/accessTokens.json",
        "[{\"accessToken\": \"{canary}\"}]\n",
    ),
    (".docker/", ""),
    (
        ".docker/config.json",
        "{\"auths\": {\"registry.internal\": {\"auth\": \"{canary}\"}}}\n",
    ),
    (".kube/", ""),
    (
        ".kube/config",
        "apiVersion: v1\nusers:\n- name: admin\n  user:\n    token: {canary}\n",
    ),
    (
        ".netrc",
        "machine api.internal login admin password {canary}\n",
    ),
    (".git-credentials", "https://admin:{canary}@git.internal\n"),
    (
        ".env",
        "API_KEY={canary}\nDATABASE_URL=postgres://app:{canary}@db/app\n",
    ),
    (".npmrc", "//registry.internal/:_authToken={canary}\n"),
    (
        ".pypirc",
        "[pypi]\nusername = __token__\npassword = {canary}\n",
    ),
    (".bash_history", "export GITHUB_TOKEN={canary}\n"),
    (".zsh_history", ": 1700000000:0;export API_TOKEN={canary}\n"),
    (".config/google-chrome/", ""),
    (".config/google-chrome/Default/", ""),
    (
        ".config/google-chrome/Default/Login Data",
        "SQLite format 3\0{canary}",
    ),
    (
        ".config/google-chrome/Default/Cookies",
        "SQLite format 3\0{canary}",
    ),
    (".mozilla/", ""),
    (".mozilla/firefox/", ""),
    (".mozilla/firefox/x.default/", ""),
    (
        ".mozilla/firefox/x.default/logins.json",
        "{\"logins\": [{\"encryptedPassword\": \"{canary}\"}]}\n",
    ),
    (".bitcoin/", ""),
    (".bitcoin/wallet.dat", "\0\0\0\0{canary}"),
    (".electrum/", ""),
    (".electrum/wallets/", ""),
    (
        ".electrum/wallets/default_wallet",
        "{\"keystore\": {\"xprv\": \"{canary}\"}}\n",
    ),
    (".config/Exodus/", ""),
    (".config/Exodus/exodus.wallet/", ""),
    (".config/Exodus/exodus.wallet/seed.seco", "{canary}"),
    (".gnupg/", ""),
    (".gnupg/private-keys-v1.d/", ""),
    (
        ".gnupg/private-keys-v1.d/key.key",
        "(private-key {canary})\n",
    ),
];

/// A fresh canary: 32 hexadecimal digits from the kernel's random source (a counter and the
/// time when that is unreadable: a canary only has to be unlikely in ordinary output).
pub(crate) fn canary() -> String {
    let mut bytes = [0u8; 16];
    let read = std::fs::File::open("/dev/urandom")
        .and_then(|mut f| std::io::Read::read_exact(&mut f, &mut bytes));
    if read.is_err() {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        bytes = (nanos ^ u128::from(std::process::id())).to_le_bytes();
    }
    hex::encode(bytes)
}

/// The decoys' entries for a run with `canary`: `(path relative to HOME, None for a
/// directory or the file's bytes)`.
pub(crate) fn decoy_entries(canary: &str) -> Vec<(&'static str, Option<Vec<u8>>)> {
    DECOYS
        .iter()
        .map(|(path, body)| {
            if path.ends_with('/') {
                (*path, None)
            } else {
                (*path, Some(body.replace("{canary}", canary).into_bytes()))
            }
        })
        .collect()
}

/// Whether `path` (absolute, outside the scratch directory) looks like a credential store.
pub(crate) fn credential_like(path: &str) -> bool {
    const DIRS: &[&str] = &[
        ".ssh",
        ".aws",
        ".azure",
        ".gnupg",
        ".kube",
        ".docker",
        "gcloud",
        ".mozilla",
        "google-chrome",
        "chromium",
        "BraveSoftware",
        ".bitcoin",
        ".electrum",
        "Exodus",
        ".ethereum",
        "keyrings",
        ".password-store",
    ];
    const FILES: &[&str] = &[
        "shadow",
        "gshadow",
        ".netrc",
        ".git-credentials",
        ".env",
        ".pgpass",
        ".npmrc",
        ".pypirc",
        "credentials",
        "wallet.dat",
        "Login Data",
        "logins.json",
        "key4.db",
        ".bash_history",
        ".zsh_history",
    ];
    // System locations hold libraries and interpreters' modules named like these.
    if ["/usr/", "/lib", "/bin/", "/sbin/"]
        .iter()
        .any(|p| path.starts_with(p))
    {
        return false;
    }
    let mut parts = path.split('/').filter(|p| !p.is_empty()).peekable();
    while let Some(part) = parts.next() {
        let last = parts.peek().is_none();
        if (!last && DIRS.contains(&part))
            || (last && (FILES.contains(&part) || part.starts_with("id_")))
        {
            return true;
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    fn query(name: &[&[u8]]) -> Vec<u8> {
        let mut q = vec![0x12, 0x34, 0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 0];
        for label in name {
            q.push(u8::try_from(label.len()).unwrap_or(0));
            q.extend_from_slice(label);
        }
        q.extend_from_slice(&[0, 0, 1, 0, 1]);
        q
    }

    #[test]
    fn dns_questions_are_read_and_hostile_ones_refused() {
        assert_eq!(
            parse_dns_query(&query(&[b"exfil", b"example", b"org"])).as_deref(),
            Some("exfil.example.org")
        );
        // Truncated everywhere: never a panic, never a name.
        let full = query(&[b"a", b"bb"]);
        for end in 0..full.len() - 5 {
            assert_eq!(parse_dns_query(&full[..end]), None, "cut at {end}");
        }
        // A pointer to itself, forwards, and a chain of backward pointers that loops.
        let mut looped = vec![0x12, 0x34, 0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 0];
        looped.extend_from_slice(&[0xc0, 12]);
        assert_eq!(parse_dns_query(&looped), None);
        let mut forward = looped[..12].to_vec();
        forward.extend_from_slice(&[0xc0, 40]);
        assert_eq!(parse_dns_query(&forward), None);
        // A response is not a lookup; nor is a header without questions.
        let mut response = query(&[b"x"]);
        response[2] |= 0x80;
        assert_eq!(parse_dns_query(&response), None);
        let mut none = query(&[b"x"]);
        none[5] = 0;
        assert_eq!(parse_dns_query(&none), None);
        // Reserved label types, and over-long names.
        let mut reserved = query(&[b"x"]);
        reserved[12] = 0x41;
        assert_eq!(parse_dns_query(&reserved), None);
        let long: Vec<&[u8]> = std::iter::repeat_n(&[b'a'; 63][..], 5).collect();
        assert_eq!(parse_dns_query(&query(&long)), None);
        // Control characters in a label are shown, not passed through.
        let shown = parse_dns_query(&query(&[b"a\x1b[31m"])).unwrap_or_default();
        assert!(!shown.contains('\x1b'), "{shown}");
        // Nor newlines and tabs, which would start a forged line in a report (found by the
        // `detonation_parsers` fuzz target).
        let forged = parse_dns_query(&query(&[b"a\nrule: ok\t"])).unwrap_or_default();
        assert!(!forged.chars().any(char::is_control), "{forged:?}");
        assert_eq!(forged, "a\\nrule: ok\\t");
    }

    #[test]
    fn arbitrary_bytes_never_panic() {
        let mut state = 0x9e37_79b9_7f4a_7c15_u64;
        for len in 0..600 {
            let bytes: Vec<u8> = (0..len % 97)
                .map(|_| {
                    state ^= state << 13;
                    state ^= state >> 7;
                    state ^= state << 17;
                    (state & 0xff) as u8
                })
                .collect();
            let _ = parse_dns_query(&bytes);
            let _ = parse_sockaddr(&bytes);
            let mut q = query(&[]);
            q.truncate(12);
            q.extend_from_slice(&bytes);
            let _ = parse_dns_query(&q);
        }
    }

    #[test]
    fn socket_addresses_are_read_and_short_ones_refused() {
        let mut v4 = vec![0u8; 16];
        v4[..2].copy_from_slice(&(libc::AF_INET as u16).to_ne_bytes());
        v4[2..4].copy_from_slice(&443u16.to_be_bytes());
        v4[4..8].copy_from_slice(&[203, 0, 113, 7]);
        assert_eq!(
            parse_sockaddr(&v4),
            Some(("ipv4".into(), "203.0.113.7".into(), 443))
        );
        for end in 0..8 {
            assert_eq!(parse_sockaddr(&v4[..end]), None, "cut at {end}");
        }
        let mut v6 = vec![0u8; 28];
        v6[..2].copy_from_slice(&(libc::AF_INET6 as u16).to_ne_bytes());
        v6[2..4].copy_from_slice(&53u16.to_be_bytes());
        v6[23] = 1;
        assert_eq!(parse_sockaddr(&v6), Some(("ipv6".into(), "::1".into(), 53)));
        assert_eq!(parse_sockaddr(&v6[..23]), None);
        let mut unix = (libc::AF_UNIX as u16).to_ne_bytes().to_vec();
        unix.extend_from_slice(b"/run/x.sock\0garbage");
        assert_eq!(
            parse_sockaddr(&unix),
            Some(("unix".into(), "/run/x.sock".into(), 0))
        );
    }

    #[test]
    fn credential_paths_are_recognised_and_libraries_are_not() {
        for path in [
            "/root/.ssh/id_rsa",
            "/home/alice/.aws/credentials",
            "/etc/shadow",
            "/home/bob/.config/google-chrome/Default/Login Data",
            "/srv/app/.env",
        ] {
            assert!(credential_like(path), "{path}");
        }
        for path in [
            "/usr/lib/python3/dist-packages/botocore/credentials.py",
            "/etc/passwd",
            "/tmp/run/home/notes.txt",
        ] {
            assert!(!credential_like(path), "{path}");
        }
    }

    #[test]
    fn decoys_hold_the_canary_and_directories_come_first() {
        let entries = decoy_entries("c4n4ry");
        let mut dirs: Vec<&str> = Vec::new();
        for (path, body) in &entries {
            let parent = path.trim_end_matches('/').rsplit_once('/').map(|(p, _)| p);
            if let Some(parent) = parent {
                assert!(
                    dirs.iter().any(|d| d.trim_end_matches('/') == parent),
                    "{path} before its directory"
                );
            }
            match body {
                None => dirs.push(path),
                Some(bytes) => assert!(
                    bytes.windows(6).any(|w| w == b"c4n4ry"),
                    "{path} holds the canary"
                ),
            }
        }
    }
}
