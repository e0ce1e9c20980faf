//! Source-to-sink data flow inside one script or code block (issue 21): secrets, the
//! environment, credential files, browser stores and the user's own files read, then sent
//! over the network, followed through variables, functions, encodings and files written on
//! the way, in Python, JavaScript/TypeScript and shell.
//!
//! **Threat.** A collector that reads `~/.ssh` into one variable, base64-encodes it in a
//! helper function and posts the result with an ordinary `Content-Type` header shows no line
//! on which a secret meets a request, and the unit-wide signal combination (`signals.rs`)
//! takes any header for authentication. **Guarantee.** Within one unit every assignment,
//! `for`/`with` binding, mutation (`append`, `push`, `write`...), file written (`>`, `tar
//! …f`, `open(…, "w")`) and function return carries the kinds of data that reach it, to a
//! fixed point; a network sink (HTTP clients, sockets, `curl`/`wget`/`nc`/`scp`, mail, DNS
//! lookups) whose arguments carry a source kind is `exfiltration.source_to_sink`: `Critical`
//! for secrets, the environment and credential files, `High` for the user's files. A named
//! secret placed in an authentication position (an `Authorization` header, `token=`, a
//! bearer) is the request's own authentication, judged per occurrence, not per line or unit,
//! so an ordinary header beside the payload excuses nothing. Public keys (`.pub`) and the
//! home directory itself (its configuration files) are not sources; walking or listing it is.
//!
//! This is a lexical approximation, not a parser: names are matched as words, statements
//! are lines joined while brackets are open, and a function's name carries what any of its
//! `return`s carries. It over-approximates within a unit (a tainted name reused for
//! something else stays tainted) and never follows data across files.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::OnceLock;

use regex::bytes::{Regex, RegexBuilder};

use super::context::{Ctx, Layout};
use super::report::{Category, FindingContext, ScanFinding, Severity};
use super::weigh;

/// A named secret (an environment variable whose name says it holds one).
const SECRET: u8 = 1;
/// The whole environment.
const ENV: u8 = 1 << 1;
/// A credential file or store: private keys, cloud and tool credentials, `.env`, browser
/// logins and cookies, wallets, the keychain.
const CRED: u8 = 1 << 2;
/// The user's own files: personal folders, shell history, a walk or listing of the home
/// directory.
const USER: u8 = 1 << 3;
/// The home directory itself (not a source: listing or walking it is).
const HOME: u8 = 1 << 4;
/// Names of secrets (`"GITHUB_TOKEN"`): a secret once looked up in the environment.
const NAME: u8 = 1 << 5;
/// What counts as a source at a sink.
const SOURCES: u8 = SECRET | ENV | CRED | USER;

/// Statements longer than this many lines (an unclosed bracket) are cut.
const MAX_STATEMENT_LINES: usize = 40;
/// Passes over a unit before the taint is taken as settled (each pass only adds).
const MAX_PASSES: usize = 4;
/// Units with more lines than this are not followed (bounded work per file).
const MAX_UNIT_LINES: usize = 5_000;

struct Patterns {
    secret: Regex,
    env_dump: Regex,
    env_option: Regex,
    env_lookup: Regex,
    cred: Regex,
    user: Regex,
    home: Regex,
    walk: Regex,
    name_literal: Regex,
    sink: Regex,
    receiver_def: Regex,
    receiver_use: Regex,
    mutation: Regex,
    write_target: Regex,
    writer_def: Regex,
    auth: Regex,
    word: Regex,
    function_def: Regex,
    binding: Regex,
}

fn build(pattern: &str) -> Option<Regex> {
    RegexBuilder::new(pattern)
        .unicode(false)
        .size_limit(16 * 1024 * 1024)
        .build()
        .ok()
}

fn patterns() -> Option<&'static Patterns> {
    static P: OnceLock<Option<Patterns>> = OnceLock::new();
    P.get_or_init(|| {
        Some(Patterns {
            secret: build(super::table::SECRET_READ_CAPTURE)?,
            // The environment as a whole (not one variable of it).
            env_dump: build(
                r#"os\.environ\s*(?:$|[),;\]}]|\.(?:items|keys|values|copy)\()|\bprocess\.env\s*(?:$|[),;\]}])|\$\(\s*(?:env|printenv|set|export -p)\s*\)|`(?:env|printenv)`|(?:^|[;&|(]\s*)(?:env|printenv)\s*(?:$|[|>])|Get-ChildItem\s+env:"#,
            )?,
            // `env=os.environ` given to a child process passes it on, it does not collect it.
            env_option: build(r#"\benv\s*[=:]\s*(?:\{[^}\n]*\}|[^,)\n]*)"#)?,
            env_lookup: build(r#"os\.environ|getenv\(|process\.env|\bENV\["#)?,
            cred: build(concat!(
                r#"(?i)"#,
                r#"\.ssh/(?:id_[a-z0-9_]+(?:\.pub)?|[a-z0-9_-]*\.pem|authorized_keys|config)\b|(?:~|\$HOME|\$\{HOME\})/\.ssh\b|\.aws/(?:credentials|config)\b|\.config/gcloud\b|application_default_credentials\.json|\.kube/config\b|\.azure/|\.docker/config\.json|\.npmrc\b|\.pypirc\b|\.netrc\b|\.git-credentials\b|\.config/gh/hosts\.yml|\.gnupg/|/etc/shadow\b|\.password-store/|\.vault-token\b"#,
                r#"|(?-i:["'](?:\.ssh|\.aws|\.gnupg|\.kube|\.docker|\.azure|\.password-store|\.env(?:\.\w+)?|\.npmrc|\.netrc|\.pypirc|\.git-credentials|id_(?:rsa|dsa|ecdsa|ed25519)|Login Data|Cookies|Local State|Web Data|logins\.json|key[34]\.db|cookies\.sqlite|wallet\.dat)["'])"#,
                r#"|(?:^|[\s/@=<'"(])\.env(?:\.local|\.production|\.prod)?(?:$|[\s"'`;|&)])"#,
                r#"|(?:Chrome|Chromium|BraveSoftware|Edge|firefox)[^\n]*(?:Login Data|Cookies|Local State|logins\.json|key4\.db)|\bwallet\.dat\b|\.(?:bitcoin|ethereum|electrum)/|\bsecurity\s+(?:find-generic-password|find-internet-password|dump-keychain)\b|keyring\.get_password|Library/Keychains"#,
            ))?,
            user: build(
                r#"[/\\'"](?:Documents|Desktop|Downloads|Pictures|Photos|Movies)\b|\.(?:bash|zsh|fish|python|node_repl|psql|mysql)_history\b|(?:^\s*|[;&|(]\s*|\$\(\s*)history\b(?:\s+-?\w+)*\s*(?:$|[|>)])|fish_history"#,
            )?,
            home: build(
                r#"Path\.home\(\)|\bhomedir\(\)|expanduser\(\s*["']~/?["']\s*\)|os\.environ(?:\.get\(|\[)\s*["'](?:HOME|USERPROFILE)["']|process\.env\.(?:HOME|USERPROFILE)\b|\$\{?HOME\}?(?:$|[^/\w])|(?:^|[\s=(])~/?(?:$|[\s"')])"#,
            )?,
            walk: build(
                r#"os\.walk\(|os\.listdir\(|os\.scandir\(|\.rglob\(|\.iterdir\(|\bglob\(|readdirSync\(|readdir\(|\bwalk\w*\(|\bfind\s|\bls\s+-[a-zA-Z]*R|\btar\s|\bzip\s+-r"#,
            )?,
            name_literal: build(
                r#"["'][A-Z0-9_]*(?:SECRET|TOKEN|PASSWORD|PASSWD|PASSPHRASE|_KEY|APIKEY|CREDENTIAL)[A-Z0-9_]*["']"#,
            )?,
            sink: build(concat!(
                r#"(?i)\b(?:requests|httpx|session|sess|client|aiohttp|urllib3|http|axios|got|superagent|needle|ky|request)\.(?:post|put|patch|get|request|delete|head|send|fetch)\s*\("#,
                r#"|\bfetch\s*\(|\baxios\s*\(|\burlopen\s*\(|\burllib\.request\.Request\s*\(|\bhttps?\.(?:request|get)\s*\(|\bsendBeacon\s*\(|\bInvoke-(?:WebRequest|RestMethod)\b|\b(?:iwr|irm)\s"#,
                r#"|(?:^\s*|[;&|(`{]\s*|\$\(\s*|["']\s*|\b(?:then|do|else|exec|sudo|xargs)\s+)(?:curl|wget|nc|ncat|netcat|socat|scp|sendmail|mailx?|nslookup|dig|ftp|sftp)(?:\s+[^=\s]|["',)]|\s*$)|/dev/(?:tcp|udp)/|\brsync\b[^\n]*\s\S+:"#,
            ))?,
            receiver_def: build(
                r#"(?i)(?:^|[\s(,])(?:const|let|var|with)?\s*([A-Za-z_$][\w$]*)\s*=\s*(?:await\s+)?(?:https?\.request|net\.(?:connect|createConnection)|new\s+net\.Socket|tls\.connect|socket\.(?:socket|create_connection)|new\s+WebSocket|new\s+XMLHttpRequest|websocket\.create_connection|smtplib\.SMTP(?:_SSL)?|http\.client\.HTTPS?Connection|ftplib\.FTP(?:_TLS)?|aiohttp\.ClientSession|httpx\.(?:Async)?Client|requests\.Session)\s*\(|(?:socket\.(?:socket|create_connection)|smtplib\.SMTP(?:_SSL)?|ftplib\.FTP(?:_TLS)?|httpx\.(?:Async)?Client|requests\.Session|aiohttp\.ClientSession)\s*\([^\n]*\bas\s+([A-Za-z_]\w*)"#,
            )?,
            receiver_use: build(
                r#"\b([A-Za-z_$][\w$]*)\.(?:write|end|send|sendall|sendto|request|sendmail|send_message|storbinary|post|put|patch|get)\s*\("#,
            )?,
            mutation: build(
                r#"\b([A-Za-z_$][\w$]*)\.(?:append|push|extend|update|add|write|writestr|writelines|set|insert|unshift|concat|addfile)\s*\("#,
            )?,
            write_target: build(
                r#"(?:^|[^>&0-9])>>?\s*("[^"\n]+"|'[^'\n]+'|[^\s;&|)]+)|\btar\s+(?:-[a-zA-Z]*\s+)*-?[a-zA-Z]*f\s+("[^"\n]+"|'[^'\n]+'|\S+)|\bzip\s+(?:-\S+\s+)*("[^"\n]+"|'[^'\n]+'|\S+)|\b7z\s+a\s+(?:-\S+\s+)*("[^"\n]+"|\S+)|\bcp\s+(?:-\S+\s+)*\S+\s+("[^"\n]+"|'[^'\n]+'|\S+)\s*$"#,
            )?,
            writer_def: build(
                r#"(?:\b(?:open|ZipFile|TarFile|tarfile\.open|gzip\.open|GzipFile|createWriteStream|BytesIO|StringIO)\s*\(\s*([A-Za-z_]\w*|"[^"\n]*"|'[^'\n]*')[^\n]*?\bas\s+([A-Za-z_]\w*))|(?:\b([A-Za-z_$][\w$]*)\s*=\s*(?:\w+\.)?(?:open|ZipFile|TarFile|tarfile\.open|gzip\.open|GzipFile|createWriteStream)\s*\(\s*([A-Za-z_]\w*|"[^"\n]*"|'[^'\n]*'))"#,
            )?,
            auth: build(
                r#"(?i)authorization|bearer|\bbasic\b|x-api-key|api[_-]?key|apikey|\btoken\b|access_token|\bauth\b|client_secret|password|passwd|--user\b|(?:^|\s)-u\s|login\s*\("#,
            )?,
            word: build(r"[A-Za-z_][A-Za-z0-9_]*")?,
            function_def: build(
                r#"^(\s*)(?:async\s+)?(?:def|function\*?)\s+([A-Za-z_$][\w$]*)\s*\(|^(\s*)(?:export\s+)?(?:async\s+)?function\*?\s+([A-Za-z_$][\w$]*)\s*\(|^(\s*)([A-Za-z_]\w*)\s*\(\s*\)\s*\{"#,
            )?,
            binding: build(
                r#"^\s*(?:for\s*\(?\s*(?:const|let|var)?\s*([^;]*?)\s+(?:in|of)\s+(.+)$|(?:async\s+)?with\s+(.+?)\s+as\s+([\w\s,()]+):\s*$)"#,
            )?,
        })
    })
    .as_ref()
}

/// Words that are never variable names.
const KEYWORDS: &[&str] = &[
    "const",
    "let",
    "var",
    "export",
    "local",
    "readonly",
    "declare",
    "await",
    "async",
    "new",
    "return",
    "self",
    "this",
    "true",
    "false",
    "None",
    "null",
    "undefined",
    "in",
    "of",
    "for",
    "if",
    "else",
    "not",
    "and",
    "or",
    "def",
    "function",
    "import",
    "from",
    "as",
    "with",
    "do",
    "done",
    "then",
    "fi",
    "echo",
    "print",
    "str",
    "int",
    "len",
    "list",
    "dict",
];

/// Whether the word `m` of `code` is a string prefix (`f"…"`, `rb'…'`), not a name.
fn string_prefix(code: &[u8], start: usize, end: usize) -> bool {
    let word = code.get(start..end).unwrap_or(b"");
    let quote = code.get(end).is_some_and(|c| matches!(c, b'"' | b'\''));
    quote && word.len() <= 2 && word.iter().all(|c| b"fFbBrRuU".contains(c))
}

/// One statement: its first line (in the layout) and its text (lines joined).
struct Statement {
    line: usize,
    text: String,
    /// The statement's physical lines, for judging each occurrence separately.
    lines: Vec<String>,
}

/// The flows found in one unit whose lines are `lines` (layout indices, code only).
pub(crate) fn unit_flows(
    path: &str,
    text: &str,
    layout: &Layout,
    lines: &[usize],
    doc: u8,
    line_no: &dyn Fn(usize) -> u32,
) -> Vec<ScanFinding> {
    let Some(p) = patterns() else {
        return Vec::new();
    };
    if lines.is_empty() || lines.len() > MAX_UNIT_LINES {
        return Vec::new();
    }
    // No sink, no flow: most code is skipped after this one pass.
    let any_sink = lines.iter().any(|&i| {
        let l = layout.line_text(text, i).as_bytes();
        p.sink.is_match(l) || p.receiver_def.is_match(l)
    });
    // Nor without anything a source could start from.
    let any_source = any_sink
        && lines
            .iter()
            .any(|&i| direct_sources(p, layout.line_text(text, i)) != 0);
    if !any_source {
        return Vec::new();
    }
    let statements = statements(text, layout, lines);
    let functions = functions(&statements, p);
    let mut taint = Taint::default();
    let mut receivers: BTreeSet<String> = BTreeSet::new();
    let mut writers: BTreeMap<String, String> = BTreeMap::new();
    for s in &statements {
        for caps in p.receiver_def.captures_iter(s.text.as_bytes()) {
            if let Some(name) = caps.get(1).or_else(|| caps.get(2)) {
                receivers.insert(String::from_utf8_lossy(name.as_bytes()).into_owned());
            }
        }
        for caps in p.writer_def.captures_iter(s.text.as_bytes()) {
            let (file, handle) = match (caps.get(1), caps.get(2), caps.get(3), caps.get(4)) {
                (Some(f), Some(h), _, _) => (f, h),
                (_, _, Some(h), Some(f)) => (f, h),
                _ => continue,
            };
            writers.insert(
                String::from_utf8_lossy(handle.as_bytes()).into_owned(),
                String::from_utf8_lossy(file.as_bytes()).into_owned(),
            );
        }
    }
    let mut found: Option<(usize, u8)> = None;
    for _ in 0..MAX_PASSES {
        let before = taint.size();
        found = None;
        for (index, s) in statements.iter().enumerate() {
            let kinds = taint.kinds_of(p, s, false);
            if kinds != 0 {
                for target in assignment_targets(&s.text, p) {
                    taint.add(&target, kinds);
                }
                for target in write_targets(&s.text, p) {
                    taint.add(&target, kinds);
                }
                if let Some((_, name)) = functions
                    .iter()
                    .find(|(span, _)| span.contains(&index) && is_return(&s.text))
                {
                    taint.add(name, kinds);
                }
            }
            // Mutations (`x.append(secret)`) carry what their arguments carry to the receiver,
            // and through a writer to the file or buffer it writes.
            for caps in p.mutation.captures_iter(s.text.as_bytes()) {
                let (Some(whole), Some(recv)) = (caps.get(0), caps.get(1)) else {
                    continue;
                };
                let args = s.text.get(whole.end()..).unwrap_or("");
                let arg_kinds = taint.kinds_in(p, args);
                if arg_kinds != 0 {
                    let recv = String::from_utf8_lossy(recv.as_bytes()).into_owned();
                    if let Some(file) = writers.get(&recv).cloned() {
                        taint.add(file.trim_matches(['"', '\'']), arg_kinds);
                    }
                    taint.add(&recv, arg_kinds);
                }
            }
            // The sink: a network call or a send on a connection, with a source in it.
            // The first sink, unless a later one carries worse (secrets over the user's files).
            let worse = |k: u8| k & (SECRET | ENV | CRED) != 0;
            if found.is_none_or(|(_, k)| !worse(k)) && is_sink(s, p, &receivers) {
                let reaching = taint.kinds_of(p, s, true) & SOURCES;
                if reaching != 0 && found.is_none_or(|_| worse(reaching)) {
                    found = Some((s.line, reaching));
                }
            }
        }
        // A pass that added nothing saw the settled taint: its sink is the answer.
        if taint.size() == before {
            break;
        }
    }
    let Some((line, kinds)) = found else {
        return Vec::new();
    };
    let (severity, what) = if kinds & (SECRET | ENV | CRED) != 0 {
        (
            Severity::Critical,
            "secrets, the environment or credential files",
        )
    } else {
        (Severity::High, "the user's own files")
    };
    let steps = doc.min(3);
    let sev = weigh::lower(severity, steps);
    vec![
        ScanFinding::new(
            Category::Exfiltration,
            sev,
            "exfiltration.source_to_sink",
            path,
            line_no(line),
            layout.line_text(text, line).to_owned(),
            format!("{what} are read and reach a network send in the same code (followed through variables, functions and files)"),
        )
        .in_context(if steps > 0 {
            FindingContext::Documentation
        } else {
            FindingContext::Code
        }),
    ]
}

/// Whether statement `s` sends over the network.
fn is_sink(s: &Statement, p: &Patterns, receivers: &BTreeSet<String>) -> bool {
    if p.sink.is_match(s.text.as_bytes()) {
        return true;
    }
    p.receiver_use.captures_iter(s.text.as_bytes()).any(|c| {
        c.get(1)
            .is_some_and(|r| receivers.contains(String::from_utf8_lossy(r.as_bytes()).as_ref()))
    })
}

fn is_return(text: &str) -> bool {
    let t = text.trim_start();
    t.starts_with("return ") || t.starts_with("return(") || t.starts_with("yield ")
}

/// What each name (a variable, a function, a file path) carries.
#[derive(Default)]
struct Taint {
    names: BTreeMap<String, u8>,
    /// Literal paths written from a source (`/tmp/x.tgz`).
    paths: BTreeMap<String, u8>,
}

impl Taint {
    fn size(&self) -> usize {
        self.names
            .values()
            .map(|k| k.count_ones() as usize)
            .sum::<usize>()
            + self
                .paths
                .values()
                .map(|k| k.count_ones() as usize)
                .sum::<usize>()
    }

    fn add(&mut self, name: &str, kinds: u8) {
        let name = name.trim();
        if name.is_empty() || KEYWORDS.contains(&name) {
            return;
        }
        let is_path = name.contains('/') || name.contains('.');
        let map = if is_path {
            &mut self.paths
        } else {
            &mut self.names
        };
        *map.entry(name.to_owned()).or_insert(0) |= kinds;
    }

    /// The kinds a piece of code carries: its own sources and the names it mentions.
    fn kinds_in(&self, p: &Patterns, code: &str) -> u8 {
        let mut kinds = direct_sources(p, code);
        for m in p.word.find_iter(code.as_bytes()) {
            if string_prefix(code.as_bytes(), m.start(), m.end()) {
                continue;
            }
            if let Some(k) = self
                .names
                .get(String::from_utf8_lossy(m.as_bytes()).as_ref())
            {
                kinds |= *k;
            }
        }
        for (path, k) in &self.paths {
            if code.contains(path.as_str()) {
                kinds |= *k;
            }
        }
        // A secret's name looked up in the environment is the secret.
        if kinds & NAME != 0 && p.env_lookup.is_match(code.as_bytes()) {
            kinds |= SECRET;
        }
        // Walking or listing the home directory reads the user's files.
        if kinds & HOME != 0 && p.walk.is_match(code.as_bytes()) {
            kinds |= USER;
        }
        kinds
    }

    /// The kinds statement `s` carries, line by line: a named secret counts only where it
    /// is not in an authentication position (judged per occurrence). At a sink only the
    /// sources count; elsewhere the markers read on the whole statement (a secret's name and
    /// the environment, the home directory and a walk) on different lines also combine.
    fn kinds_of(&self, p: &Patterns, s: &Statement, at_sink: bool) -> u8 {
        let mut kinds = 0;
        for line in &s.lines {
            let k = self.kinds_in(p, line);
            kinds |= if k & SECRET != 0 && self.only_in_auth(p, line) {
                k & !SECRET
            } else {
                k
            };
        }
        if !at_sink && s.lines.len() > 1 {
            kinds |= self.kinds_in(p, &s.text) & (NAME | HOME | USER);
        }
        kinds
    }

    /// Whether every secret-carrying occurrence on `line` stands in an authentication
    /// position: the argument it belongs to (back to the previous `,`, `(`, `[`, an opening
    /// `{` of a literal, or a shell option) names an authentication scheme or parameter.
    fn only_in_auth(&self, p: &Patterns, line: &str) -> bool {
        let bytes = line.as_bytes();
        let mut any = false;
        let mut occurrences: Vec<(usize, usize)> = Vec::new();
        for m in p.word.find_iter(bytes) {
            if string_prefix(bytes, m.start(), m.end()) {
                continue;
            }
            let name = String::from_utf8_lossy(m.as_bytes());
            if self
                .names
                .get(name.as_ref())
                .is_some_and(|k| k & SECRET != 0)
            {
                occurrences.push((m.start(), m.end()));
            }
        }
        for caps in p.secret.captures_iter(bytes) {
            if let Some(m) = caps.get(0) {
                occurrences.push((m.start(), m.end()));
            }
        }
        for (start, _) in occurrences {
            any = true;
            let argument = argument_before(line, start);
            if !p.auth.is_match(argument.as_bytes()) {
                return false;
            }
        }
        any
    }
}

/// The text of the argument that the byte at `at` belongs to, from its start up to `at`.
fn argument_before(line: &str, at: usize) -> &str {
    let bytes = line.as_bytes();
    let mut i = at.min(bytes.len());
    while i > 0 {
        let c = bytes.get(i - 1).copied().unwrap_or(b' ');
        let next = bytes.get(i).copied().unwrap_or(b' ');
        let delimiter = matches!(c, b',' | b'(' | b'[')
            || (c == b'{' && (next == b' ' || next == b'\'' || next == b'"' || next == b'\n'))
            || (c == b'-' && i >= 2 && bytes.get(i - 2) == Some(&b' '));
        if delimiter {
            break;
        }
        i -= 1;
    }
    line.get(i..at).unwrap_or("")
}

/// The source kinds written directly in `code`.
fn direct_sources(p: &Patterns, code: &str) -> u8 {
    let stripped;
    let code = if p.env_option.is_match(code.as_bytes()) {
        stripped = String::from_utf8_lossy(&p.env_option.replace_all(code.as_bytes(), &b""[..]))
            .into_owned();
        stripped.as_str()
    } else {
        code
    };
    let bytes = code.as_bytes();
    let mut kinds = 0;
    if p.secret.is_match(bytes) {
        kinds |= SECRET;
    }
    if p.env_dump.is_match(bytes) {
        kinds |= ENV;
    }
    // A public key is no secret: a credential match that is a `.pub` file does not count.
    // The whole path token is read: `~/.ssh/id_ed25519.pub` is a public key.
    if p.cred.find_iter(bytes).any(|m| {
        let rest = bytes.get(m.end()..).unwrap_or(b"");
        let tail = rest
            .iter()
            .take_while(|c| c.is_ascii_alphanumeric() || matches!(c, b'_' | b'.' | b'/' | b'-'))
            .count();
        let token = bytes.get(m.start()..m.end() + tail).unwrap_or(b"");
        !token.ends_with(b".pub")
    }) {
        kinds |= CRED;
    }
    if p.user.is_match(bytes) {
        kinds |= USER;
    }
    if p.home.is_match(bytes) {
        kinds |= HOME;
    }
    if p.name_literal.is_match(bytes) {
        kinds |= NAME;
    }
    kinds
}

/// The names an assignment or binding statement defines.
fn assignment_targets(text: &str, p: &Patterns) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(caps) = p.binding.captures(text.as_bytes()) {
        if let Some(targets) = caps.get(1).or_else(|| caps.get(4)) {
            out.extend(words(p, &String::from_utf8_lossy(targets.as_bytes())));
        }
        return out;
    }
    let Some(eq) = top_level_assignment(text) else {
        return out;
    };
    let lhs = text.get(..eq).unwrap_or("");
    let lhs = lhs
        .trim_end_matches(['+', '|', ':', '-', '*', '.', '?'])
        .trim();
    let mut lhs = lhs;
    for keyword in [
        "export ",
        "local ",
        "readonly ",
        "declare ",
        "const ",
        "let ",
        "var ",
    ] {
        if let Some(rest) = lhs.strip_prefix(keyword) {
            lhs = rest.trim_start();
        }
    }
    if lhs.starts_with(['{', '[', '(']) || lhs.contains(',') {
        // Destructuring or a tuple: every name.
        out.extend(words(p, lhs));
        return out;
    }
    // A type annotation (`x: int`, `const x: Foo`) and any subscript or attribute: the base.
    let base = lhs.split([':', '.', '[', ' ']).next().unwrap_or("").trim();
    let valid = !base.is_empty()
        && base
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'$')
        && !base.bytes().next().is_some_and(|b| b.is_ascii_digit());
    // Anything but a name and its annotation before `=` (`curl -d a=b`) is no assignment.
    let rest_ok = lhs.len() == base.len()
        || lhs[base.len()..].starts_with(['.', '[', ':'])
        || lhs[base.len()..].trim_start().starts_with(':');
    if valid && rest_ok {
        out.push(base.trim_start_matches('$').to_owned());
    }
    out
}

/// The byte offset of the statement's assignment `=` at bracket depth 0, outside quotes
/// (not `==`, `!=`, `<=`, `>=`, `=>`).
fn top_level_assignment(text: &str) -> Option<usize> {
    let bytes = text.as_bytes();
    let mut depth = 0i32;
    let mut quote: Option<u8> = None;
    for (i, &b) in bytes.iter().enumerate() {
        if let Some(q) = quote {
            if b == q && bytes.get(i.wrapping_sub(1)) != Some(&b'\\') {
                quote = None;
            }
            continue;
        }
        match b {
            b'"' | b'\'' | b'`' => quote = Some(b),
            b'(' | b'[' | b'{' => depth += 1,
            b')' | b']' | b'}' => depth -= 1,
            b'=' if depth == 0 => {
                let prev = if i > 0 {
                    bytes.get(i - 1).copied()
                } else {
                    None
                };
                let next = bytes.get(i + 1).copied();
                if matches!(prev, Some(b'=' | b'!' | b'<' | b'>'))
                    || matches!(next, Some(b'=' | b'>'))
                {
                    continue;
                }
                return Some(i);
            }
            b'#' if depth == 0 => return None,
            _ => {}
        }
    }
    None
}

/// Files (or the variables naming them) a statement writes: `> out`, `tar czf out`, `zip
/// out`, `cp src out`.
fn write_targets(text: &str, p: &Patterns) -> Vec<String> {
    let mut out = Vec::new();
    for caps in p.write_target.captures_iter(text.as_bytes()) {
        let Some(m) = (1..=5).find_map(|g| caps.get(g)) else {
            continue;
        };
        let raw = String::from_utf8_lossy(m.as_bytes());
        let target = raw.trim_matches(['"', '\'']);
        if target.starts_with("/dev/") || target == "&2" || target == "&1" {
            continue;
        }
        if let Some(var) = shell_variable(target) {
            out.push(var);
        } else {
            out.push(target.to_owned());
        }
    }
    out
}

/// `$NAME` or `${NAME}` as the whole of `token`: `NAME`.
fn shell_variable(token: &str) -> Option<String> {
    let rest = token.strip_prefix('$')?;
    let rest = rest.strip_prefix('{').unwrap_or(rest);
    let name: String = rest
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
        .collect();
    (!name.is_empty()).then_some(name)
}

fn words(p: &Patterns, text: &str) -> Vec<String> {
    p.word
        .find_iter(text.as_bytes())
        .map(|m| String::from_utf8_lossy(m.as_bytes()).into_owned())
        .filter(|w| !KEYWORDS.contains(&w.as_str()))
        .collect()
}

/// The unit's lines joined into statements while a bracket stays open (a block's opening
/// brace does not hold a statement open: only a literal's does).
fn statements(text: &str, layout: &Layout, lines: &[usize]) -> Vec<Statement> {
    let mut out = Vec::new();
    let mut k = 0;
    while let Some(&first) = lines.get(k) {
        let mut depth = 0i32;
        let mut joined = String::new();
        let mut physical = Vec::new();
        let mut taken = 0;
        while let Some(&i) = lines.get(k + taken) {
            let line = layout.line_text(text, i);
            depth += join_delta(line);
            if !joined.is_empty() {
                joined.push(' ');
            }
            joined.push_str(line.trim());
            physical.push(line.to_owned());
            taken += 1;
            if depth <= 0 || taken >= MAX_STATEMENT_LINES {
                break;
            }
        }
        out.push(Statement {
            line: first,
            text: joined,
            lines: physical,
        });
        k += taken.max(1);
    }
    out
}

/// Brackets a line leaves open for joining: parentheses, square brackets and the braces of
/// literals, but not a trailing brace that opens a block (after `)`, `=>`, `else`, a type).
fn join_delta(line: &str) -> i32 {
    let (open, close) = brackets(line, b"([{", b")]}");
    let mut delta = open - close;
    let trimmed = line.trim_end();
    if let Some(before) = trimmed.strip_suffix('{') {
        let before = before.trim_end();
        let literal = before.ends_with(['=', '(', ',', ':', '[', '{', '?'])
            || before.ends_with("return")
            || before.is_empty();
        if !literal {
            delta -= 1;
        }
    }
    delta
}

/// Braces a line opens minus those it closes (block depth).
fn block_delta(line: &str) -> i32 {
    let (open, close) = brackets(line, b"{", b"}");
    open - close
}

/// Opening and closing brackets of the given kinds on a line, outside quotes and comments.
fn brackets(line: &str, opening: &[u8], closing: &[u8]) -> (i32, i32) {
    let (mut open, mut close) = (0, 0);
    let mut quote: Option<u8> = None;
    let bytes = line.as_bytes();
    for (i, &b) in bytes.iter().enumerate() {
        if let Some(q) = quote {
            if b == q && (i == 0 || bytes.get(i - 1) != Some(&b'\\')) {
                quote = None;
            }
            continue;
        }
        if b == b'"' || b == b'\'' {
            quote = Some(b);
        } else if opening.contains(&b) {
            open += 1;
        } else if closing.contains(&b) {
            close += 1;
        } else if b == b'#' && (i == 0 || bytes.get(i - 1) == Some(&b' ')) {
            break;
        }
    }
    (open, close)
}

/// Each function's statements (by index) and its name: Python by indentation, brace
/// languages by depth.
fn functions(statements: &[Statement], p: &Patterns) -> Vec<(std::ops::Range<usize>, String)> {
    let mut out = Vec::new();
    for (index, s) in statements.iter().enumerate() {
        let Some(first) = s.lines.first() else {
            continue;
        };
        let Some(caps) = p.function_def.captures(first.as_bytes()) else {
            continue;
        };
        let (Some(indent), Some(name)) = (
            caps.get(1).or_else(|| caps.get(3)).or_else(|| caps.get(5)),
            caps.get(2).or_else(|| caps.get(4)).or_else(|| caps.get(6)),
        ) else {
            continue;
        };
        let indent = indent.len();
        let name = String::from_utf8_lossy(name.as_bytes()).into_owned();
        let mut end = index + 1;
        let mut depth = block_delta(&s.text);
        if depth > 0 {
            while depth > 0 {
                let Some(next) = statements.get(end) else {
                    break;
                };
                depth += block_delta(&next.text);
                end += 1;
            }
        } else {
            while let Some(next) = statements.get(end) {
                let line = next.lines.first().map_or("", String::as_str);
                let blank = line.trim().is_empty();
                let deeper = line.len() - line.trim_start().len() > indent;
                if !blank && !deeper {
                    break;
                }
                end += 1;
            }
        }
        out.push((index..end, name));
    }
    out
}

/// The code units of a laid-out file: for each unit, its code lines (comments left out) and
/// its documentation level.
pub(crate) fn code_units(layout: &Layout) -> Vec<(Vec<usize>, u8)> {
    let mut units: BTreeMap<u32, (Vec<usize>, u8)> = BTreeMap::new();
    for (i, ctx) in layout.ctx.iter().enumerate() {
        if *ctx != Ctx::Code {
            continue;
        }
        let unit = layout.unit.get(i).copied().unwrap_or(0);
        let doc = layout.doc.get(i).copied().unwrap_or(0);
        let entry = units.entry(unit).or_default();
        entry.0.push(i);
        entry.1 = entry.1.max(doc);
    }
    units.into_values().collect()
}

#[cfg(test)]
mod tests;
