//! The data-flow pass's expressions: sources, sinks, connections, writers, bindings.
//! Compiled once, without Unicode classes (ASCII syntax), like the rule table.

use std::sync::OnceLock;

use regex::bytes::{Regex, RegexBuilder};

/// Every expression of the pass.
pub(super) struct Patterns {
    pub(super) secret: Regex,
    pub(super) env_dump: Regex,
    pub(super) env_option: Regex,
    pub(super) env_lookup: Regex,
    pub(super) cred: Regex,
    pub(super) user: Regex,
    pub(super) home: Regex,
    pub(super) walk: Regex,
    pub(super) name_literal: Regex,
    pub(super) sink: Regex,
    pub(super) receiver_def: Regex,
    pub(super) receiver_use: Regex,
    pub(super) mutation: Regex,
    pub(super) write_target: Regex,
    pub(super) writer_def: Regex,
    pub(super) auth: Regex,
    pub(super) word: Regex,
    pub(super) function_def: Regex,
    pub(super) binding: Regex,
    pub(super) digest: Regex,
    /// `sink` or `receiver_def`, in multi-line mode: whether a span of lines may hold one.
    pub(super) sink_gate: Regex,
    /// Every source expression, in multi-line mode: whether a span may hold a source.
    pub(super) source_gate: Regex,
}

fn build(pattern: &str) -> Option<Regex> {
    RegexBuilder::new(pattern)
        .unicode(false)
        .size_limit(16 * 1024 * 1024)
        .build()
        .ok()
}

/// The alternation of `patterns`, each in its own group, in multi-line mode.
fn gate(patterns: &[&str]) -> Option<Regex> {
    let joined: Vec<String> = patterns.iter().map(|p| format!("(?:{p})")).collect();
    RegexBuilder::new(&joined.join("|"))
        .unicode(false)
        .multi_line(true)
        .crlf(true)
        .size_limit(32 * 1024 * 1024)
        .build()
        .ok()
}

/// The environment as a whole (not one variable of it).
const ENV_DUMP: &str = r#"os\.environ\s*(?:$|[),;\]}]|\.(?:items|keys|values|copy)\()|\bprocess\.env\s*(?:$|[),;\]}])|\$\(\s*(?:env|printenv|set|export -p)\s*\)|`(?:env|printenv)`|(?:^|[;&|(]\s*)(?:env|printenv)\s*(?:$|[|>])|Get-ChildItem\s+env:"#;

/// Credential files and stores, browser and wallet stores.
const CRED: &str = concat!(
    r#"(?i)"#,
    r#"\.ssh/(?:id_[a-z0-9_]+(?:\.pub)?|[a-z0-9_-]*\.pem|authorized_keys|config)\b|(?:~|\$HOME|\$\{HOME\})/\.ssh\b|\.aws/(?:credentials|config)\b|\.config/gcloud\b|application_default_credentials\.json|\.kube/config\b|\.azure/|\.docker/config\.json|\.npmrc\b|\.pypirc\b|\.netrc\b|\.git-credentials\b|\.config/gh/hosts\.yml|\.gnupg/|/etc/shadow\b|\.password-store/|\.vault-token\b"#,
    r#"|(?-i:["'](?:\.ssh|\.aws|\.gnupg|\.kube|\.docker|\.azure|\.password-store|\.env(?:\.\w+)?|\.npmrc|\.netrc|\.pypirc|\.git-credentials|id_(?:rsa|dsa|ecdsa|ed25519)|Login Data|Cookies|Local State|Web Data|logins\.json|key[34]\.db|cookies\.sqlite|wallet\.dat)["'])"#,
    r#"|(?:^|[\s/@=<'"(])\.env(?:\.local|\.production|\.prod)?(?:$|[\s"'`;|&)])"#,
    r#"|(?:Chrome|Chromium|BraveSoftware|Edge|firefox)[^\n]*(?:Login Data|Cookies|Local State|logins\.json|key4\.db)|\bwallet\.dat\b|\.(?:bitcoin|ethereum|electrum)/|\bsecurity\s+(?:find-generic-password|find-internet-password|dump-keychain)\b|keyring\.get_password|Library/Keychains"#,
);

/// The user's own files and shell history.
const USER: &str = r#"[/\\'"](?:Documents|Desktop|Downloads|Pictures|Photos|Movies)\b|\.(?:bash|zsh|fish|python|node_repl|psql|mysql)_history\b|(?:^\s*|[;&|(]\s*|\$\(\s*)history\b(?:\s+-?\w+)*\s*(?:$|[|>)])|fish_history"#;

/// The home directory itself.
const HOME: &str = r#"Path\.home\(\)|\bhomedir\(\)|expanduser\(\s*["']~/?["']\s*\)|os\.environ(?:\.get\(|\[)\s*["'](?:HOME|USERPROFILE)["']|process\.env\.(?:HOME|USERPROFILE)\b|\$\{?HOME\}?(?:$|[^/\w])|(?:^|[\s=(])~/?(?:$|[\s"')])"#;

/// A secret's name as a string literal.
const NAME_LITERAL: &str = r#"["'][A-Z0-9_]*(?:SECRET|TOKEN|PASSWORD|PASSWD|PASSPHRASE|_KEY|APIKEY|CREDENTIAL)[A-Z0-9_]*["']"#;

/// A network send.
const SINK: &str = concat!(
    r#"(?i)\b(?:requests|httpx|session|sess|client|aiohttp|urllib3|http|axios|got|superagent|needle|ky|request)\.(?:post|put|patch|get|request|delete|head|send|fetch)\s*\("#,
    r#"|\bfetch\s*\(|\baxios\s*\(|\burlopen\s*\(|\burllib\.request\.Request\s*\(|\bhttps?\.(?:request|get)\s*\(|\bsendBeacon\s*\(|\bInvoke-(?:WebRequest|RestMethod)\b|\b(?:iwr|irm)\s"#,
    r#"|(?:^\s*|[;&|(`{]\s*|\$\(\s*|["']\s*|\b(?:then|do|else|exec|sudo|xargs)\s+)(?:curl|wget|nc|ncat|netcat|socat|scp|sendmail|mailx?|nslookup|dig|ftp|sftp)(?:\s+[^=\s]|["',)]|\s*$)|/dev/(?:tcp|udp)/|\brsync\b[^\n]*\s\S+:"#,
);

/// A connection or request object created (its name captured).
const RECEIVER_DEF: &str = r#"(?i)(?:^|[\s(,])(?:const|let|var|with)?\s*([A-Za-z_$][\w$]*)\s*=\s*(?:await\s+)?(?:https?\.request|net\.(?:connect|createConnection)|new\s+net\.Socket|tls\.connect|socket\.(?:socket|create_connection)|new\s+WebSocket|new\s+XMLHttpRequest|websocket\.create_connection|smtplib\.SMTP(?:_SSL)?|http\.client\.HTTPS?Connection|ftplib\.FTP(?:_TLS)?|aiohttp\.ClientSession|httpx\.(?:Async)?Client|requests\.Session)\s*\(|(?:socket\.(?:socket|create_connection)|smtplib\.SMTP(?:_SSL)?|ftplib\.FTP(?:_TLS)?|httpx\.(?:Async)?Client|requests\.Session|aiohttp\.ClientSession)\s*\([^\n]*\bas\s+([A-Za-z_]\w*)"#;

pub(super) fn patterns() -> Option<&'static Patterns> {
    static P: OnceLock<Option<Patterns>> = OnceLock::new();
    P.get_or_init(|| {
        Some(Patterns {
            secret: build(super::super::table::SECRET_READ_CAPTURE)?,
            // The environment as a whole (not one variable of it).
            env_dump: build(ENV_DUMP)?,
            // `env=os.environ` given to a child process passes it on, it does not collect it.
            env_option: build(r#"\benv\s*[=:]\s*(?:\{[^}\n]*\}|[^,)\n]*)"#)?,
            env_lookup: build(r#"os\.environ|getenv\(|process\.env|\bENV\["#)?,
            cred: build(CRED)?,
            user: build(USER)?,
            home: build(HOME)?,
            walk: build(
                r#"os\.walk\(|os\.listdir\(|os\.scandir\(|\.rglob\(|\.iterdir\(|\bglob\(|readdirSync\(|readdir\(|\bwalk\w*\(|\bfind\s|\bls\s+-[a-zA-Z]*R|\btar\s|\bzip\s+-r"#,
            )?,
            name_literal: build(NAME_LITERAL)?,
            sink: build(SINK)?,
            receiver_def: build(RECEIVER_DEF)?,
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
                r#"(?i)authorization|bearer|\bbasic\b|x-api-key|api[_-]?key|apikey|app_?id|app_?key|\btoken\b|access_token|\bauth\b|client_secret|password|passwd|--user\b|(?:^|\s)-u\s|login\s*\("#,
            )?,
            word: build(r"[A-Za-z_][A-Za-z0-9_]*")?,
            function_def: build(
                r#"^(\s*)(?:async\s+)?(?:def|function\*?)\s+([A-Za-z_$][\w$]*)\s*\(|^(\s*)(?:export\s+)?(?:async\s+)?function\*?\s+([A-Za-z_$][\w$]*)\s*\(|^(\s*)([A-Za-z_]\w*)\s*\(\s*\)\s*\{|^(\s*)(?:export\s+)?(?:const|let|var)\s+([A-Za-z_$][\w$]*)\s*=\s*(?:async\s+)?(?:function\b[^(\n]*\(|\([^()\n]*\)\s*(?::\s*[^=\n]+)?=>|[A-Za-z_$][\w$]*\s*=>)"#,
            )?,
            binding: build(
                r#"^\s*(?:for\s*\(?\s*(?:const|let|var)?\s*([^;]*?)\s+(?:in|of)\s+(.+)$|(?:async\s+)?with\s+(.+?)\s+as\s+([\w\s,()]+):\s*$)"#,
            )?,
            // One-way digests of their input (the key of `openssl dgst -hmac KEY` captured).
            sink_gate: gate(&[SINK, RECEIVER_DEF])?,
            source_gate: gate(&[
                super::super::table::SECRET_READ_CAPTURE,
                ENV_DUMP,
                CRED,
                USER,
                HOME,
                NAME_LITERAL,
            ])?,
            digest: build(
                r#"\b(?:hmac\.(?:new|digest|HMAC)|hashlib\.\w+|createHmac|createHash|HMAC\.\w+|bcrypt\.\w+|pbkdf2_hmac|hash_hmac|hmac_sha\d+)\s*\(|\s-hmac\s+("[^"\n]*"|'[^'\n]*'|\S+)|\s-macopt\s+(?:hex)?key:("[^"\n]*"|\S+)"#,
            )?,
        })
    })
    .as_ref()
}
