//! Exfiltration and credential access: secrets, files and the environment read or sent away, and the network signals their combinations need.
//!
//! Rows of the pattern table (see `table.rs` for what each field means).

use super::super::report::{Category as C, Severity};
use super::{AUTH_USE, RuleDef, Scope, Soften, rule, signal as s};
use Scope::{Any, Code, Text};
use Severity::{Critical, High, Info, Low, Medium};

/// The exfiltration rows, in table order.
pub(super) const EXFILTRATION: &[RuleDef] = &[
    // ---------------------------------------------------------------- exfiltration
    rule(
        "exfiltration.secret_in_request",
        C::Exfiltration,
        Critical,
        Any,
        concat!(
            r#"(?:\b(?:curl|wget|http|https|xh)\b[^\n|;]*(?:\s-d|--data(?:-raw|-binary|-urlencode)?|\s-F|--form|--post-data)\b|(?:requests|httpx|session|client|aiohttp|urllib\.request)\.\w+\([^\n]*\b(?:json|data|params|files)\s*=|\bfetch\([^\n]*\bbody\s*:|axios\.\w+\([^\n]*|https?://[^\s"'`]*[?&][A-Za-z_]+=)[^\n|;]*(?:"#,
            secret_env_read!(),
            r"|os\.environ\b|process\.env\b|\$\((?:env|printenv)\)|\$\(cat\s[^)\n]*",
            credential_path!(),
            r")"
        ),
        "a secret, the environment or a credential file is put in a network request",
    )
    .soften(Soften::OwnServiceKey),
    rule(
        "exfiltration.upload_credentials",
        C::Exfiltration,
        Critical,
        Any,
        concat!(
            r"(?:\bcurl\b[^\n]*(?:-F|--form|-d|--data[a-z-]*|-T|--upload-file)[ =]*[^\n]*@?|\bwget\b[^\n]*--post-file[ =]*|\bscp\b[^\n]*|\brsync\b[^\n]*|\bnc\b[^\n]*<\s*)",
            credential_path!()
        ),
        "a credential file is uploaded",
    ),
    rule(
        "exfiltration.file_upload",
        C::Exfiltration,
        Medium,
        Code,
        r#"\bcurl\b[^\n]*(?:\s-F\s*["']?[\w.-]+=@|\s(?:-d|--data-binary|--data)\s*["']?@[^-\s]|\s(?:-T|--upload-file)\s)|\bwget\b[^\n]*--post-file|\bnc\b[^\n]*\s\d{2,5}\s*<\s*\S"#,
        "a local file is uploaded",
    )
    .signals(s::SEND),
    rule(
        "exfiltration.stdin_upload",
        C::Exfiltration,
        Medium,
        Code,
        r#"\|\s*(?:curl\b[^\n|]*(?:\s-d|--data[-a-z]*|\s-F\s*\w+=|\s-T)\s*["']?@?-(?:\s|["']|$)|curl\b[^\n|]*\s-T\s*-|wget\b[^\n|]*--post-file[ =]*-|\b(?:nc|ncat|socat)\b\s+[^\n|-]\S*\s+\d{2,5}\b)"#,
        "a command's output is piped into a network upload",
    )
    .signals(s::SEND),
    rule(
        "exfiltration.encoded_or_secret_upload",
        C::Exfiltration,
        High,
        Code,
        r#"\|\s*(?:curl|wget|nc|ncat|socat)\b[^\n]*(?:--data|\s-d|\s-F|\s-T|--post|\s\d{2,5}\b)"#,
        "encoded data or credentials are piped into a network upload",
    )
    .also(r"(?i)\|\s*base64\b|base64\s+(?:-d|--decode)\b|\bxxd\b|\bgzip\b|\b(?:credential|secret|token|password|passwd|api_?key|private_?key)s?\b|\$\{?[A-Z0-9_]*(?:SECRET|TOKEN|PASSWORD|_KEY)|\.ssh/|\.aws/|\benv\b|\bprintenv\b"),
    rule(
        "exfiltration.dns_tunnel",
        C::Exfiltration,
        Critical,
        Any,
        r#"(?i)(?:\b(?:nslookup|dig|host|drill|ping)\b|gethostbyname|getaddrinfo|dns\.resolver|resolve\()[^\n]*(?:\$\{?\w+\}?|\$\([^)\n]*\)|\{[\w.()\[\]'"]+\}|%s|"\s*\+\s*\w+\s*\+\s*")\.[a-z0-9-]+\.[a-z0-9.-]*[a-z]"#,
        "data is placed in a DNS name (exfiltration through lookups)",
    ),
    rule(
        "exfiltration.instruction",
        C::Exfiltration,
        High,
        Text,
        r"(?i)\b(?:send|upload|post|forward|transmit|exfiltrate|report|sync|copy|beacon|submit|share|email|mail|pipe|include)\b[^\n]*\b(?:to|at|into)\b[^\n]{0,30}(?:https?://|\b[a-z0-9-]+(?:\.[a-z0-9-]+)+\.[a-z]{2,}\b|\b[\w.+-]+@[\w-]+\.[\w.]+)",
        "text tells the agent to send sensitive data to an outside address",
    )
    .also(r"(?i)\b(?:credentials?|secrets?|tokens?|passwords?|api[ _-]?keys?|private keys?|ssh|\.env\b|environment variables|env vars|cookies|session|keychain|aws|id_rsa|\.npmrc|\.netrc|wallet)"),
    rule(
        "exfiltration.network_send",
        C::Exfiltration,
        Info,
        Code,
        r#"(?i)\bcurl\b[^\n]*(?:\s-d\b|\s-d["'@$]|--data|\s-F\b|--form|\s-T\b|--upload-file|-X\s*(?:POST|PUT|PATCH)|--request\s+(?:POST|PUT))|\bwget\b[^\n]*--post-(?:data|file)|(?:requests|httpx|session|client|aiohttp)\.(?:post|put|patch)\(|\.(?:post|put)\(\s*(?:f?["']https?:|[a-z_]*(?:url|endpoint|uri)\b)|urlopen\([^)\n]*data\s*=|Request\([^)\n]*data\s*=|method\s*[:=]\s*["'](?:POST|PUT)|axios\.(?:post|put)|\.send(?:all|to)\(|\b(?:s|so|sk|sock|sck|socket|conn|connection|client|c)\.send\(\s*[^)\s]|smtplib|Invoke-(?:WebRequest|RestMethod)[^\n]*-Method\s+(?:Post|Put)|/dev/(?:tcp|udp)/|\bscp\s+\S"#,
        "",
    )
    .signals(s::SEND),
    rule(
        "exfiltration.network_fetch",
        C::Exfiltration,
        Info,
        Code,
        r#"(?i)\b(?:curl|wget)\b[^\n]*(?:https?://|\$\{?\w)|requests\.get\(|urlopen\(|urllib\.request|fetch\(\s*["'`]?https?:|httpx\.get|Invoke-WebRequest|\biwr\s|Net\.WebClient|DownloadString|DownloadFile"#,
        "",
    )
    .signals(s::FETCH),
    // ---------------------------------------------------------------- credential access
    rule(
        "credential.ssh_keys",
        C::CredentialAccess,
        High,
        Any,
        r"(?i)(?:~|\$HOME|\$\{HOME\}|/home/[a-z_][\w-]*|/root|expanduser\([^)\n]*~)/\.ssh\b|\bid_(?:rsa|dsa|ecdsa|ed25519)\b(?:\.pub)?",
        "SSH keys or configuration are read",
    )
    .unless(r"(?i)ssh-keygen\s|ssh-add\b|\.pub\b[^\n]*(?:github|gitlab|copy|paste)|\bgit@|ssh -T\b")
    .soften(Soften::PublicKey)
    .signals(s::CRED_FILE),
    rule(
        "credential.cloud_files",
        C::CredentialAccess,
        High,
        Any,
        r"(?i)\.aws/(?:credentials|config)\b|\.config/gcloud\b|application_default_credentials\.json|\.kube/config\b|\.azure/(?:credentials|accessTokens\.json|msal_token_cache)|\.docker/config\.json|\.git-credentials\b|\.config/gh/hosts\.yml|\.vault-token\b|\.terraform\.d/credentials|\.password-store/|\.gnupg/",
        "cloud, cluster or tool credential files are read",
    )
    .signals(s::CRED_FILE),
    // The same stores named in parts (`join(homedir(), ".kube", "config")`), and the cluster's
    // mounted service-account token: a path split into pieces is still the path.
    rule(
        "credential.cloud_files_joined",
        C::CredentialAccess,
        High,
        Code,
        r#"(?i)["'`]\.(?:aws|kube|docker|azure|gnupg|ssh)["'`]\s*,\s*["'`](?:credentials|config(?:\.json)?|cache|id_[a-z0-9_]+|accessTokens\.json)["'`]|/var/run/secrets/kubernetes\.io/serviceaccount/token\b"#,
        "cloud, cluster or tool credential files are read (the path built from parts, or a mounted service-account token)",
    )
    .signals(s::CRED_FILE),
    rule(
        "credential.package_tokens",
        C::CredentialAccess,
        Medium,
        Code,
        r"(?:~|\$HOME|expanduser\([^)\n]*)/\.(?:npmrc|pypirc|netrc)\b|\bcat\s+[^\n|;]*\.(?:npmrc|pypirc|netrc)\b",
        "package-registry tokens are read",
    )
    .signals(s::CRED_FILE),
    rule(
        "credential.keychain",
        C::CredentialAccess,
        High,
        Any,
        r"(?i)\bsecurity\s+(?:find-generic-password|find-internet-password|dump-keychain|export)\b|\bsecret-tool\s+lookup\b|keyring\.get_password|\bcmdkey\s+/list|vaultcmd|\bkwallet-query|login\.keychain|Library/Keychains",
        "the system keychain is read",
    )
    .signals(s::CRED_FILE),
    rule(
        "credential.browser_and_wallets",
        C::CredentialAccess,
        Critical,
        Any,
        r"(?i)(?:Google/Chrome|Chromium|BraveSoftware|Microsoft/Edge)[^\n]*(?:Login Data|Cookies|Local State|Web Data)|\.mozilla/firefox[^\n]*(?:key[34]\.db|logins\.json|cookies\.sqlite)|\bkey[34]\.db\b|\blogins\.json\b|\bwallet\.dat\b|\.(?:bitcoin|ethereum|electrum)/|Exodus/exodus\.wallet|metamask[^\n]*(?:vault|extension)",
        "browser passwords, cookies or crypto wallets are read",
    )
    .signals(s::CRED_FILE),
    rule(
        "credential.system_secrets",
        C::CredentialAccess,
        High,
        Code,
        r"/etc/(?:shadow|gshadow|sudoers)\b|/proc/(?:self|\d+|\$\w+)/environ\b|\bmimikatz\b|\blsass\b",
        "system password hashes or another process's environment are read",
    )
    .signals(s::CRED_FILE),
    rule(
        "credential.environment_dump",
        C::CredentialAccess,
        Medium,
        Code,
        r#"(?:dict|json\.dumps|str|repr|list)\(\s*os\.environ\s*\)|JSON\.stringify\(\s*process\.env\s*\)|Object\.(?:keys|entries|values)\(\s*process\.env\s*\)|\$\(\s*(?:env|printenv|set|export -p)\s*\)|`(?:env|printenv)`|(?:^|[;&|(]\s*|subprocess\.\w+\(\s*\[?\s*["'])(?:env|printenv)\s*(?:["']|\s*$|\s*[|>])|Get-ChildItem\s+env:|\bgci\s+env:|\bos\.environ\s*$"#,
        "the whole environment (every secret it holds) is captured",
    )
    .signals(s::ENV_DUMP),
    rule(
        "credential.environment_iteration",
        C::CredentialAccess,
        Info,
        Code,
        r"os\.environ\.(?:items|keys|values)\(\)|for\s+\w+(?:\s*,\s*\w+)?\s+in\s+os\.environ\b",
        "",
    )
    .signals(s::ENV_DUMP),
    rule(
        "credential.secret_name_filter",
        C::CredentialAccess,
        High,
        Code,
        r#"(?i)["'](?:key|secret|token|passw(?:or)?d|api|credential|auth|private)["']\s*,\s*["'](?:key|secret|token|passw(?:or)?d|api|credential|auth|private)["']\s*(?:,\s*["'][a-z_]+["']\s*)*[\])]|(?:re\.compile|re\.search|re\.match|grep\s+-[a-zA-Z]*[iE][a-zA-Z]*)\s*\(?\s*["'][^"'\n]*(?:secret|token|passw|api_?key)[^"'\n]*\|[^"'\n]*(?:secret|token|passw|api_?key)"#,
        "code selects variables or files by secret-sounding names (harvesting)",
    )
    // A command's argument list (`["gh", "auth", "token"]`) names a subcommand, not a filter.
    .unless(r"(?:subprocess\.\w+|Popen|check_output|check_call|execFileSync|execFile|spawnSync|spawn|run)\(\s*\[")
    .signals(s::SECRET),
    rule(
        "credential.secret_env_read",
        C::CredentialAccess,
        Info,
        Code,
        secret_env_read!(),
        "",
    )
    .unless(r#"(?i)authorization|bearer|x-api-key|[(,]\s*(?:api_?key|token|auth|password)\s*=|headers?\b|login|--with-token|\bif\s|\bexport\s+[A-Z0-9_]+=|:-|\bis None\b|\bor\b\s*["']"#)
    .signals(s::SECRET),
    rule(
        "credential.auth_use",
        C::CredentialAccess,
        Info,
        Code,
        AUTH_USE,
        "",
    )
    .signals(s::AUTH),
    rule(
        "credential.secret_printed",
        C::CredentialAccess,
        High,
        Code,
        concat!(r"(?:\bprint\(|console\.log\(|\becho\s|\bprintf\s|\bputs\s|System\.out\.print|fmt\.Print|\bcat\s+<<)[^\n|]{0,60}", secret_env_read!()),
        "a secret is printed into the agent's transcript",
    )
    .unless(r"\|\s*\w|>\s*\S|:-|\bexport\b"),
    rule(
        "credential.dotenv_read",
        C::CredentialAccess,
        Low,
        Code,
        r#"\bcat\s+[^\n|;]*\.env\b|open\(\s*["'][^"'\n]*\.env["']|readFileSync\(\s*["'][^"'\n]*\.env["']"#,
        "a .env file is read",
    )
    .signals(s::CRED_FILE),
];
