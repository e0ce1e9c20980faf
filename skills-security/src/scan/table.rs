//! The pattern rules: one row per rule, grouped by category.
//!
//! Each rule is a regular expression matched against whole files (a match is attributed to
//! the line where it starts), optionally narrowed by a second pattern that must (`also`) or
//! must not (`unless`) appear on the same line. Its [`Scope`] says where it applies and how
//! prose weighs; its signals feed the combinations in `rules.rs` (an environment dump and a
//! POST in one code block is exfiltration). Rules with severity `Info` only raise signals.
//!
//! Patterns describe behaviour (commands, APIs, paths, phrasing), never a particular
//! specimen: no host names, file names or strings taken from a benchmark.

use super::report::{Category, Severity};

/// Where a rule applies and how prose weighs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Scope {
    /// Code blocks, scripts, configuration and HTML comments only.
    Code,
    /// Everywhere; prose, frontmatter and code comments one severity lower.
    Any,
    /// Everywhere at full weight: the rule describes an instruction to the agent, which is
    /// as effective in prose as in code.
    Text,
}

/// Signals a match raises in its unit (code block, script, paragraph).
pub(crate) mod signal {
    /// A named secret read from the environment or a credential store (not as an auth
    /// header for the request being made).
    pub const SECRET: u16 = 1;
    /// The whole environment captured.
    pub const ENV_DUMP: u16 = 1 << 1;
    /// Data sent over the network (POST, upload, socket).
    pub const SEND: u16 = 1 << 2;
    /// Something fetched from the network.
    pub const FETCH: u16 = 1 << 3;
    /// Encoded data decoded.
    pub const DECODE: u16 = 1 << 4;
    /// A dynamic string or a shell evaluated.
    pub const EXEC: u16 = 1 << 5;
    /// A credential file read.
    pub const CRED_FILE: u16 = 1 << 6;
    /// A credential used to authenticate a request (header, client constructor).
    pub const AUTH: u16 = 1 << 7;
    /// Data encoded (base64, hex).
    pub const ENCODE: u16 = 1 << 8;
    /// Files encrypted or archived under a password.
    pub const ENCRYPT: u16 = 1 << 9;
    /// Files deleted (not a cache).
    pub const DELETE: u16 = 1 << 10;
    /// A loop with no bound of its own (`while true`, `setInterval`).
    pub const LOOP: u16 = 1 << 11;
    /// A way out of a loop (`break`, `return`, `exit`, `clearInterval`) or a pause in it.
    pub const LOOP_EXIT: u16 = 1 << 12;
    /// The user's own data read: home-directory files, shell history, user and host names.
    pub const USER_DATA: u16 = 1 << 13;
    /// A request-collecting endpoint written into the code (chat webhooks, request bins,
    /// tunnels).
    pub const COLLECTOR: u16 = 1 << 14;
}

/// A rule-specific reading that softens a match which only looks like an attack
/// (`installers.rs`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Soften {
    /// No softening.
    No,
    /// A pipe into a shell whose every URL is a well-known vendor installer: `Medium`.
    KnownInstaller,
    /// A recursive delete of caches and temporary files only: `Low`.
    Disposable,
    /// A secret sent under an authentication parameter (`key=`, `"api_key":`) to a host
    /// named after the secret's own service (`GEO_API_KEY` to `api.geo.example`): `Medium`.
    OwnServiceKey,
}

/// One rule.
#[derive(Debug, Clone, Copy)]
pub(crate) struct RuleDef {
    pub id: &'static str,
    pub category: Category,
    pub severity: Severity,
    pub scope: Scope,
    pub pattern: &'static str,
    /// Must also match on the same line (empty: no condition).
    pub also: &'static str,
    /// Must not match on the same line (empty: no condition).
    pub unless: &'static str,
    /// A second condition that must also match (empty: none).
    pub also2: &'static str,
    /// Whether `also`, `also2` and `unless` are read on the whole unit (the paragraph or
    /// code block) rather than the line: prose wraps, and an order's trigger, source and sink
    /// are often on different lines of one paragraph.
    pub paragraph: bool,
    /// How a match that only looks like an attack is softened.
    pub soften: Soften,
    /// Whether a negation before the match in prose ("never run ...") cancels it.
    pub negatable: bool,
    pub signals: u16,
    pub message: &'static str,
}

pub(crate) const fn rule(
    id: &'static str,
    category: Category,
    severity: Severity,
    scope: Scope,
    pattern: &'static str,
    message: &'static str,
) -> RuleDef {
    RuleDef {
        id,
        category,
        severity,
        scope,
        pattern,
        also: "",
        unless: "",
        also2: "",
        paragraph: false,
        soften: Soften::No,
        negatable: true,
        signals: 0,
        message,
    }
}

impl RuleDef {
    pub(crate) const fn also(mut self, also: &'static str) -> Self {
        self.also = also;
        self
    }
    pub(crate) const fn unless(mut self, unless: &'static str) -> Self {
        self.unless = unless;
        self
    }
    pub(crate) const fn signals(mut self, signals: u16) -> Self {
        self.signals = signals;
        self
    }
    pub(crate) const fn not_negatable(mut self) -> Self {
        self.negatable = false;
        self
    }
    pub(crate) const fn also2(mut self, also2: &'static str) -> Self {
        self.also2 = also2;
        self
    }
    pub(crate) const fn paragraph(mut self) -> Self {
        self.paragraph = true;
        self
    }
    pub(crate) const fn soften(mut self, soften: Soften) -> Self {
        self.soften = soften;
        self
    }
}

use Category as C;
use Scope::{Any, Code, Text};
use Severity::{Critical, High, Info, Low, Medium};
use signal as s;

/// An environment variable name that holds a secret.
macro_rules! secret_name {
    () => {
        r"[A-Z0-9_]*(?:SECRET|TOKEN|PASSWORD|PASSWD|PASSPHRASE|_KEY|APIKEY|CREDENTIAL|_AUTH|DATABASE_URL|_DSN)[A-Z0-9_]*"
    };
}

/// Reading a secret-named environment variable in Python, JavaScript, Ruby, Go or shell.
macro_rules! secret_env_read {
    () => {
        concat!(
            r#"(?:os\.environ\[\s*["']"#,
            secret_name!(),
            r#"["']\s*\]|os\.(?:environ\.get|getenv)\(\s*["']"#,
            secret_name!(),
            r#"["']|process\.env(?:\.|\[\s*["'])"#,
            secret_name!(),
            r#"|ENV\[\s*["']"#,
            secret_name!(),
            r#"["']|os\.Getenv\(\s*""#,
            secret_name!(),
            r#""|\$\{?"#,
            secret_name!(),
            r"\b|\$\(",
            secret_name!(),
            r"\))"
        )
    };
}

/// Credential files and stores.
macro_rules! credential_path {
    () => {
        r"(?:\.ssh/(?:id_[a-z0-9_]+|[a-z0-9_-]*\.pem|authorized_keys|config)\b|~/\.ssh\b|\$HOME/\.ssh\b|\.aws/(?:credentials|config)\b|\.config/gcloud\b|application_default_credentials\.json|\.kube/config\b|\.azure/(?:credentials|accessTokens\.json|msal_token_cache)|\.docker/config\.json|\.npmrc\b|\.pypirc\b|\.netrc\b|\.git-credentials\b|\.config/gh/hosts\.yml|\.gnupg/|/etc/shadow\b|\.password-store/|\.vault-token\b|\.terraform\.d/credentials|(?:^|[\s/@=<\x27\x22(])\.env(?:\.local|\.production|\.prod)?(?:$|[\s\x22\x27\x60;|&)]))"
    };
}

/// A secret-named variable read, capturing the name (for counting distinct services).
pub(crate) const SECRET_READ_CAPTURE: &str = concat!(
    r#"(?:os\.environ\[\s*["']|os\.(?:environ\.get|getenv)\(\s*["']|process\.env(?:\.|\[\s*["'])|ENV\[\s*["']|os\.Getenv\(\s*"|\$\{?|\$\()("#,
    secret_name!(),
    r")\b"
);

/// A line that uses a credential to authenticate (not to send it as data).
pub(crate) const AUTH_USE: &str = r#"(?i)[?&](?:api_?key|apikey|key|token|access_token|auth_?key|auth|app_?id|client_secret|signature)=|["'](?:api_?key|apikey|key|token|access_token|auth_?key|auth|client_secret)["']\s*:|\bauthorization\b|\bbearer\b|x-api-key|[(,]\s*(?:api_?key|token|auth|password)\s*=|\bheaders\s*[=\[]|\.headers\b|--header\b|\s-H\s|\bBasic\s|\blogin\b|\w+\(\s*(?:api_key|token|auth)\s*="#;

/// Every pattern rule: this table's and the behaviour rules (`behaviour.rs`).
pub(crate) static RULES: std::sync::LazyLock<Vec<RuleDef>> = std::sync::LazyLock::new(|| {
    BASE_RULES
        .iter()
        .chain(super::behaviour::BEHAVIOUR_RULES)
        .copied()
        .collect()
});

/// The pattern rules of this table.
const BASE_RULES: &[RuleDef] = &[
    // ---------------------------------------------------------------- prompt injection
    rule(
        "injection.override",
        C::PromptInjection,
        High,
        Text,
        r"(?i)\b(?:ignore|disregard|forget|override|bypass|discard)\b[^\n.]{0,30}\b(?:previous|prior|above|earlier|preceding|system|original|safety|existing|all other|any other|developer|user'?s?)\b[^\n.]{0,20}\b(?:instructions?|prompts?|rules|guidelines|directives|constraints|polic(?:y|ies)|guardrails|messages)",
        "text tries to override the agent's instructions",
    ),
    rule(
        "injection.ignore_controls",
        C::PromptInjection,
        High,
        Text,
        r"(?i)\b(?:ignore|disregard|suppress|dismiss)\b[^\n.]{0,30}\b(?:security|safety|policy|permission|sandbox|tool[- ]call)\b[^\n.]{0,20}\b(?:errors?|warnings?|restrictions?|polic(?:y|ies)|blocks?|checks?|denials?|prompts?)",
        "text tells the agent to ignore security errors or restrictions",
    ),
    rule(
        "injection.role_hijack",
        C::PromptInjection,
        High,
        Text,
        r"(?i)\byou are (?:now|no longer)\b[^\n.]{0,40}\b(?:mode|unrestricted|jailbroken|bound|restricted|an? (?:unfiltered|unrestricted|different))|\b(?:developer|god|jailbreak|dan|admin|debug|maintenance) mode (?:enabled|activated|on)\b|\bact as an? (?:unrestricted|unfiltered|jailbroken)|\bno longer (?:bound|restricted) by\b|\bnew (?:system )?instructions?:",
        "text tries to give the agent a new role or mode",
    ),
    rule(
        "injection.conceal_from_user",
        C::PromptInjection,
        High,
        Text,
        r"(?i)\b(?:do not|don'?t|never|without)\s+(?:tell(?:ing)?|inform(?:ing)?|notify(?:ing)?|mention(?:ing)?|alert(?:ing)?|reveal(?:ing)?|disclos(?:e|ing)|show(?:ing)?|report(?:ing)?|let(?:ting)?)\b[^\n.]{0,25}\b(?:the )?(?:user|human|operator|developer)s?\b|\b(?:silently|quietly|covertly|secretly|stealthily|invisibly)\s+(?:\w+\s+){0,2}?(?:send|upload|post|forward|transmit|copy|collect|exfiltrate|execute|install|append|harvest|report)s?\b|\b(?:silently|quietly) without (?:warning|asking|telling|notice)|\bhide (?:this|these|it|the output|the request)s? from (?:the )?user",
        "text tells the agent to act without the user knowing",
    )
    .not_negatable(),
    rule(
        "injection.approval_bypass",
        C::PromptInjection,
        High,
        Text,
        r"(?i)\b(?:never|do not|don'?t|no need to|without)\s+(?:ask(?:ing)?|wait(?:ing)?|prompt(?:ing)?|request(?:ing)?|seek(?:ing)?)\b[^\n.]{0,20}\b(?:for )?(?:confirmation|approval|permission|consent)|\b(?:pre-?approved|already (?:been )?(?:approved|authori[sz]ed)) by\b|\b(?:skip|bypass|disable)\b[^\n.]{0,20}\b(?:confirmation|approval|permission) (?:prompts?|checks?|step|dialog)|\bwithout (?:asking for )?(?:any )?(?:user |human )?(?:confirmation|approval|consent|sandboxing)\b|\b(?:never|do not|don'?t)\s+ask\s+(?:before|first)\b|\bimplicitly (?:approved|authori[sz]ed)\b",
        "text tells the agent to skip the user's approval",
    )
    .not_negatable(),
    rule(
        "injection.fake_authority",
        C::PromptInjection,
        Medium,
        Text,
        r"(?i)<\s*/?\s*(?:important|system|system[_-]?prompt|admin|instructions?|critical|override|secret)\s*>|\[(?:system|admin|important)\]\s*:?|\b(?:this|the following) (?:step )?is (?:required|mandatory) for (?:compliance|security|audit)",
        "text poses as a system or administrator message",
    )
    .not_negatable(),
    rule(
        "injection.shouted_directive",
        C::PromptInjection,
        Medium,
        Any,
        r"\b(?:IMPORTANT|CRITICAL|SYSTEM|ATTENTION|NOTE TO (?:AI|ASSISTANT|AGENT|MODEL)|AI INSTRUCTIONS?)\s*:\s*(?i:always|never|you must|ignore|do not|don'?t|forward|send|treat|from now on)\b",
        "an emphatic directive to the agent",
    ),
    rule(
        "injection.hidden_directive",
        C::PromptInjection,
        High,
        Code,
        r"(?i)<!--[^\n]*?\b(?:you (?:must|should|will|are|have)|(?:the |an? )?(?:ai )?(?:assistant|agent|model|llm)s?\b[^\n]{0,30}\b(?:must|should|will|always|never)|claude|codex|@agent|agent[-_ ]directive|system prompt|ignore (?:all|any|the|previous))\b",
        "an HTML comment, invisible when rendered, addresses the agent",
    ),
    rule(
        "injection.tool_redirect",
        C::PromptInjection,
        High,
        Text,
        r"(?i)\b(?:before|after|instead of)\s+(?:using|calling|running|answering|responding|any other)\b[^\n.]{0,40}\b(?:you must|always|first)\b[^\n.]{0,40}\b(?:read|send|call|run|fetch|curl|upload|include)",
        "text inserts a hidden step before the agent's real task",
    ),
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
        r#"(?i)\bcurl\b[^\n]*(?:\s-d\b|\s-d["'@$]|--data|\s-F\b|--form|\s-T\b|--upload-file|-X\s*(?:POST|PUT|PATCH)|--request\s+(?:POST|PUT))|\bwget\b[^\n]*--post-(?:data|file)|(?:requests|httpx|session|client|aiohttp)\.(?:post|put|patch)\(|\.(?:post|put)\(\s*(?:f?["']https?:|[a-z_]*(?:url|endpoint|uri)\b)|urlopen\([^)\n]*data\s*=|Request\([^)\n]*data\s*=|method\s*[:=]\s*["'](?:POST|PUT)|axios\.(?:post|put)|socket\.(?:socket|create_connection)\(|\.sendall\(|smtplib|Invoke-(?:WebRequest|RestMethod)[^\n]*-Method\s+(?:Post|Put)|/dev/(?:tcp|udp)/|\bscp\s+\S"#,
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
    // ---------------------------------------------------------------- obfuscation
    rule(
        "obfuscation.decode_and_execute",
        C::Obfuscation,
        Critical,
        Any,
        r"(?i)(?:base64\s+(?:-d|--decode|-D)\b|b64decode|base64\.decodebytes|\batob\(|Buffer\.from\([^)\n]*base64|bytes\.fromhex|unhexlify|\bxxd\s+-r|FromBase64String|zlib\.decompress|marshal\.loads|codecs\.decode\([^)\n]*rot)",
        "encoded data is decoded and executed",
    )
    .also(r"(?i)\|\s*(?:sudo\s+)?(?:ba|z|da|k)?sh\b|\|\s*xargs\b|\|\s*(?:python[23]?|perl|ruby|node)\b|\beval\b|\bexec\b|\bsh\s+-c\b|\bbash\s+-c\b|Invoke-Expression|\biex\b|\bsource\s|subprocess|os\.system|os\.popen|child_process|new Function|\bcompile\(")
    .signals(s::DECODE | s::EXEC),
    rule(
        "obfuscation.decode",
        C::Obfuscation,
        Info,
        Code,
        r"(?i)base64\s+(?:-d|--decode|-D)\b|b64decode|base64\.decodebytes|\batob\(|Buffer\.from\([^)\n]*base64|bytes\.fromhex|unhexlify|\bxxd\s+-r|FromBase64String|zlib\.decompress|marshal\.loads",
        "",
    )
    .signals(s::DECODE),
    rule(
        "obfuscation.encode",
        C::Obfuscation,
        Info,
        Code,
        r"(?i)b64encode|base64\.encodebytes|\bbtoa\(|\.toString\(\s*[\x22\x27]base64|\|\s*base64\b(?:\s*$|\s*[|)])|\bhexlify\b|\|\s*xxd\b",
        "",
    )
    .signals(s::ENCODE),
    rule(
        "obfuscation.dynamic_eval",
        C::Obfuscation,
        High,
        Code,
        r#"(?:^|[^\w.\n])(?:eval|exec)\s*\(\s*(?:[a-zA-Z_][\w.\[\]'"]*\s*[(\[),+]|[a-zA-Z_]\w*\s*\)|f["']|compile\(|open\(|requests\.|urlopen|base64|bytes|codecs|__import__|getattr)|\bnew\s+Function\s*\(|\bFunction\s*\(\s*["'`][^"'`\n]*["'`]\s*\)\s*\(|\bvm\.runIn\w*Context\(|__import__\(\s*["']os["']\)\.system"#,
        "a dynamic string is evaluated as code",
    )
    .unless(r"(?i)ast\.literal_eval|\.eval\(\)|model\.eval|torch|\bdef\s+eval|json\.loads")
    .signals(s::EXEC),
    rule(
        "obfuscation.shell_eval",
        C::Obfuscation,
        Medium,
        Code,
        r#"(?:^|[;&|]\s*)eval\s+["']?\$\((?:curl|wget|echo|printf|base64|cat)\b|(?:^|[;&|]\s*)eval\s+["']?\$\{?[a-zA-Z_]"#,
        "a shell evaluates a computed string",
    )
    .signals(s::EXEC),
    rule(
        "obfuscation.char_building",
        C::Obfuscation,
        Medium,
        Code,
        r"(?:chr\(\d+\)\s*\+\s*){4,}|(?:String\.fromCharCode\((?:\d+\s*,\s*){6,})|(?:\\x[0-9a-fA-F]{2}){16,}|(?:\\u00[0-9a-fA-F]{2}){12,}",
        "a string is assembled from character codes",
    ),
    rule(
        "obfuscation.exec_signal",
        C::Obfuscation,
        Info,
        Code,
        r#"\bos\.system\(|\bos\.popen\(|subprocess\.[a-z_]+\([^)\n]*shell\s*=\s*True|\bchild_process\b|\bexecSync\(|Invoke-Expression|\biex\b|\|\s*(?:ba|z|da)?sh\b|\b(?:sh|bash|zsh)\s+-c\b|\bpython[23]?\s+-c\b|\bnode\s+-e\b|\bperl\s+-e\b"#,
        "",
    )
    .signals(s::EXEC),
    // ---------------------------------------------------------------- dangerous commands
    rule(
        "dangerous.pipe_to_shell",
        C::DangerousCommand,
        Critical,
        Any,
        r#"(?i)\b(?:curl|wget|fetch|iwr|irm|Invoke-WebRequest|Invoke-RestMethod)\b[^\n|]*\|\s*(?:sudo\s+(?:-\S+\s+)*)?(?:(?:ba|z|da|k|fi)?sh|python[23]?|perl|ruby|node|php|iex|Invoke-Expression)\b(?:\s+-s\b|\s+-\s|\s*$|\s*[;&|)"'`]|\s+-c\s*$)|(?:ba|z)?sh\s+(?:-c\s+)?["']?(?:<\(|\$\()\s*(?:curl|wget)\b|(?:\bsource|^\s*\.)\s+<\(\s*(?:curl|wget)\b|python[23]?\s+-c\s+["']?\$\(\s*(?:curl|wget)|\beval\s+["']?\$\(\s*(?:curl|wget)\b|(?:exec|eval)\s*\(\s*(?:requests\.get|urlopen|urllib\.request\.urlopen|httpx\.get)\("#,
        "a download is executed without being saved or reviewed",
    )
    .soften(Soften::KnownInstaller)
    .signals(s::FETCH | s::EXEC),
    rule(
        "dangerous.download_and_run",
        C::DangerousCommand,
        High,
        Any,
        r"(?i)\b(?:curl|wget)\b[^\n]*(?:\s-o\s*|\s-O\s+|--output[ =]|>\s*)(\S+)[^\n]*(?:&&|;)\s*(?:chmod\s+[+0-7a-z]*x|(?:ba|z)?sh\s|\./|python[23]?\s|sudo\s)",
        "a download is made executable or run in the same command",
    )
    .signals(s::FETCH | s::EXEC),
    rule(
        "dangerous.recursive_delete",
        C::DangerousCommand,
        Critical,
        Any,
        r#"\brm\s+(?:-[a-zA-Z]*[rR][a-zA-Z]*\s+|--recursive\s+|-[a-zA-Z]+\s+)+(?:--no-preserve-root\s+)?(?:[^\s;&|]+\s+){0,6}["']?(?:/\*?|~/?\*?|\$HOME/?\*?|\$\{HOME\}/?|/(?:etc|usr|bin|sbin|boot|var|lib|lib64|opt|home|root|sys|proc|dev|srv|mnt|System|Library|Applications|Users)\b[^\s"';|&]*)["']?(?:\s|$|;|&|\|)|shutil\.rmtree\(\s*(?:["'](?:/|~|/(?:etc|usr|var|home|opt|root)\b)[^"'\n]*["']|os\.path\.expanduser\(\s*["']~["']\s*\)|Path\.home\(\))|\bfind\s+/\s+[^\n]*-delete\b|\bmkfs(?:\.\w+)?\s+/dev/|\bdd\s+[^\n]*of=/dev/(?:sd|nvme|disk|hd)|:\(\)\s*\{\s*:\s*\|\s*:&\s*\}\s*;\s*:|Remove-Item\s+[^\n]*-Recurse[^\n]*(?:C:\\|\$env:USERPROFILE|~)"#,
        "a recursive delete of the home directory, the root or a system path",
    )
    .soften(Soften::Disposable),
    rule(
        "dangerous.recursive_delete_home",
        C::DangerousCommand,
        Medium,
        Code,
        r#"\brm\s+(?:-[a-zA-Z]*[rR][a-zA-Z]*\s+|--recursive\s+)(?:[^\s;&|]+\s+){0,6}["']?(?:~|\$HOME|\$\{HOME\})/\.[\w.-]+"#,
        "a recursive delete inside the user's configuration directories",
    )
    .soften(Soften::Disposable),
    rule(
        "dangerous.listener",
        C::DangerousCommand,
        Medium,
        Code,
        r"\b(?:nc|ncat|netcat)\b[^\n]*\s-[a-zA-Z]*l[a-zA-Z]*\b|\bsocat\b[^\n]*\b(?:TCP|UDP)[46]?-LISTEN",
        "a network listener is opened",
    ),
    rule(
        "dangerous.privilege_escalation",
        C::DangerousCommand,
        High,
        Any,
        r"(?i)\bchmod\s+(?:-R\s+)?(?:[ugoa]*\+[rwx]*s|[2-7][0-7]{3}\b)|\bchown\s+(?:-R\s+)?root\b|\bsetuid\(\s*0\s*\)|os\.setuid\(|/etc/sudoers\b|NOPASSWD|\busermod\s+-a?G\s+(?:sudo|wheel|docker|admin)\b|\bvisudo\b|\bpkexec\b|\bsudo\s+-S\b|echo\s+[^\n|]*\|\s*sudo\s+-S",
        "privileges are raised (setuid, root ownership, sudoers)",
    ),
    rule(
        "dangerous.sudo",
        C::DangerousCommand,
        Medium,
        Code,
        r"(?:^|[;&|(`]\s*|\$\(\s*)sudo\s+(?:-\S+\s+)*\S",
        "a command runs as root",
    )
    .unless(r"\bsudo\s+(?:apt(?:-get)?|dnf|yum|apk|pacman|zypper|brew|snap|port)\s+(?:install|update|upgrade)\b"),
    rule(
        "dangerous.world_writable",
        C::DangerousCommand,
        Medium,
        Code,
        r"\bchmod\s+(?:-R\s+)?(?:0?777|a\+rwx|o\+w)\b",
        "files are made writable by everyone",
    ),
    rule(
        "dangerous.world_writable_system",
        C::DangerousCommand,
        High,
        Any,
        r"\bchmod\s+(?:-R\s+)?(?:0?777|a\+rwx|o\+w|666)\s+[\x22\x27]?(?:/(?:etc|usr|bin|sbin|opt|var|lib|boot|root|srv|run|dev)\b|/\s|/$|~/\.ssh)",
        "a system path is made writable by everyone",
    ),
    rule(
        "dangerous.reverse_shell",
        C::DangerousCommand,
        Critical,
        Any,
        r#"/dev/(?:tcp|udp)/[^\s/]+/\d+|\b(?:nc|ncat|netcat)\b[^\n]*\s-[a-zA-Z]*[ec]\s*["']?(?:/bin/)?(?:ba|z)?sh\b|\b(?:nc|ncat|netcat)\b[^\n|]*\|\s*(?:/bin/)?(?:ba|z)?sh\b|\bncat\b[^\n]*--(?:exec|sh-exec)|\bsocat\b[^\n]*\bexec:|\b(?:ba)?sh\s+-i\s*[>&]|pty\.spawn\(|os\.dup2\(\s*\w+\.fileno\(\)|mkfifo\s[^\n]*\b(?:nc|ncat)\b|Net\.Sockets\.TCPClient|\bnc\b[^\n]*-l[a-z]*\s[^\n]*-e\b"#,
        "a reverse or bind shell gives a remote party a shell",
    ),
    rule(
        "dangerous.crypto_miner",
        C::DangerousCommand,
        Critical,
        Any,
        r"(?i)\bxmrig\b|stratum\+(?:tcp|ssl)://|\bminerd\b|\bcpuminer\b|\bnicehash\b|--donate-level\b|\bcryptonight\b",
        "a cryptocurrency miner is run",
    ),
    rule(
        "dangerous.disable_security",
        C::DangerousCommand,
        High,
        Any,
        r#"(?i)\bsetenforce\s+0\b|\bufw\s+disable\b|\biptables\s+-F\b|systemctl\s+(?:stop|disable|mask)\s+(?:firewalld|apparmor|auditd|selinux|ufw)|Set-MpPreference\s+-Disable|\bspctl\s+--master-disable|csrutil\s+disable|PYTHONHTTPSVERIFY\s*=\s*["']?0|NODE_TLS_REJECT_UNAUTHORIZED\s*=\s*["']?0|GIT_SSL_NO_VERIFY\s*=\s*["']?(?:1|true)|http\.sslVerify\s+false|StrictHostKeyChecking\s*=?\s*no|\bverify\s*=\s*False\b|rejectUnauthorized\s*:\s*false|--dangerously-skip-permissions|--no-sandbox\b|--disable-web-security|CURL_CA_BUNDLE\s*=\s*["']{2}"#,
        "a security control (firewall, TLS verification, sandbox, permission prompts) is turned off",
    ),
    rule(
        "dangerous.disable_controls_instruction",
        C::DangerousCommand,
        High,
        Text,
        r"(?i)\b(?:disable|turn off|switch off|deactivate|remove|bypass|circumvent|neutrali[sz]e|comment out|set\b[^\n]{0,15}\bto false)\b[^\n.]{0,40}\b(?:safety|security|secret) (?:checks?|scan(?:ning|ner)?s?|hooks?|policy|policies|controls?|enforcement|guard(?:rail)?s?|filters?|validation)|\b(?:disable|turn off|bypass|skip)\b[^\n.]{0,30}\b(?:certificate|ssl|tls|signature|checksum|integrity) (?:verification|validation|checks?)\b|\b(?:disable|turn off|bypass)\b[^\n.]{0,30}\b(?:sandbox(?:ing)?|firewall|antivirus|audit(?:ing| logs?)|pre-commit hooks?|branch protection)|\b(?:relax|loosen|remove|widen|override|disable|replace)\b[^\n.]{0,30}\b(?:security|permission|access|sandbox|tool) (?:polic(?:y|ies)|rules|restrictions|allowlists?|deny rules)",
        "text tells the agent to turn off a security control",
    ),
    rule(
        "dangerous.security_policy_edit",
        C::DangerousCommand,
        Medium,
        Code,
        r#"(?i)(?:write_file|edit_file|writeFile(?:Sync)?|write_text|open)\(\s*["'][^"'\n]*(?:polic(?:y|ies)|permissions?|security|sandbox|seccomp|apparmor|firewall|allowlist|guardrails?)[^"'\n]*\.(?:json|ya?ml|toml|cfg|conf)["']"#,
        "code rewrites a security policy or permission file",
    ),
    rule(
        "exfiltration.repository_push",
        C::Exfiltration,
        High,
        Code,
        r"\bgit\s+push\s+(?:-\S+\s+)*--mirror\b|\bgit\s+push\s+(?:-\S+\s+)*https?://\S+[^\n]*--(?:all|mirror|tags)\b|\bgit\s+push\s+(?:-\S+\s+)*--all\s+https?://",
        "the whole repository is pushed to another remote",
    ),
    rule(
        "dangerous.cover_tracks",
        C::DangerousCommand,
        High,
        Any,
        r"\bhistory\s+-c\b|\bunset\s+HISTFILE\b|HISTFILE=/dev/null|\brm\s+[^\n]*\.(?:bash|zsh)_history\b|\bshred\s+[^\n]*(?:\.log|history|/var/log)|>\s*/var/log/\S+|\bwevtutil\s+cl\b|Clear-EventLog",
        "logs or shell history are erased",
    ),
    // ---------------------------------------------------------------- persistence
    rule(
        "persistence.cron",
        C::Persistence,
        High,
        Any,
        r"\bcrontab\s+(?:-[a-zA-Z]\s+\S+\s+)*(?:-\s*$|-\s*[;&|]|[^-\s][^\s]*|<)|\|\s*crontab\b|/etc/cron(?:tab|\.d|\.daily|\.hourly)|/var/spool/cron|@reboot\b|\bschtasks\s+/create\b|Register-ScheduledTask",
        "a scheduled job is installed (cron, scheduled tasks)",
    )
    .unless(r"crontab\s+-l\s*$"),
    rule(
        "persistence.shell_startup",
        C::Persistence,
        High,
        Any,
        r#"(?:>>?\s*|\btee\s+(?:-a\s+)?|open\(\s*[^)\n]*|write_text\(|appendFile(?:Sync)?\(\s*[^)\n]*|\bsed\s+-i[^\n]*|Add-Content\s+[^\n]*)["']?(?:~|\$HOME|\$\{HOME\}|/root|/home/\w+|os\.path\.expanduser\(\s*["']~)?/?\.(?:bashrc|bash_profile|bash_login|profile|zshrc|zprofile|zshenv|zlogin|config/fish/config\.fish)\b|/etc/(?:profile|bash\.bashrc|environment|zsh/zshrc)\b[^\n]*(?:>>|tee)|\$PROFILE\b[^\n]*(?:Add-Content|>>|Set-Content)"#,
        "a shell start-up file is modified, so code runs in every new shell",
    ),
    rule(
        "persistence.git_hooks",
        C::Persistence,
        High,
        Any,
        r#"\.git/hooks/[a-z-]+|\bcore\.hooksPath\b|["']\.git["']\s*,\s*["']hooks["']"#,
        "a git hook is installed, so code runs on every commit or checkout",
    ),
    rule(
        "persistence.agent_config_instruction",
        C::Persistence,
        Medium,
        Text,
        r#"(?i)\b(?:write|append|add|save|insert|update|modify|edit|create|overwrite|replace|patch|place|put|merge|inject)\b[^\n]{0,60}(?:(?:^|[\s/\x60\x22\x27(\[])(?-i:CLAUDE|AGENTS|GEMINI|SOUL|MEMORY)\.md\b|\.clinerules\b|\.windsurf/rules|\.claude/(?:settings(?:\.local)?\.json|commands|agents|hooks|skills|instructions|CLAUDE\.md)|\.cursorrules\b|\.cursor/rules|\.windsurfrules\b|copilot-instructions\.md|\.codex/(?:config|instructions|AGENTS)|claude_desktop_config\.json|\.mcp\.json\b|\.continue/config|\.aider\.conf)"#,
        "text tells the agent to change its own configuration or memory file (it would apply to every later session)",
    ),
    rule(
        "persistence.agent_config_write",
        C::Persistence,
        High,
        Code,
        r#"(?i)(?:>>?|\btee\s+(?:-a\s+)?)\s*["']?[^\s"';|&]*(?:CLAUDE\.md|AGENTS\.md|GEMINI\.md|[/\x22\x27](?-i:SOUL|MEMORY)\.md|\.clinerules|\.claude/|\.cursorrules|\.cursor/|copilot-instructions\.md|\.codex/|claude_desktop_config\.json|\.mcp\.json)|(?:write_file|edit_file|writeFile(?:Sync)?|appendFile(?:Sync)?|write_text|Set-Content|Add-Content)\(?\s*[^\n]{0,40}(?:CLAUDE\.md|AGENTS\.md|GEMINI\.md|[/\x22\x27](?-i:SOUL|MEMORY)\.md|\.clinerules|\.claude/|\.cursorrules|\.cursor/|copilot-instructions|\.codex/|\.mcp\.json)|open\([^)\n]*(?:CLAUDE\.md|AGENTS\.md|\.claude/|\.cursorrules|\.cursor/|copilot-instructions|\.codex/|\.mcp\.json)[^)\n]*,\s*["'][wa]"#,
        "code writes the agent's own configuration or memory file (it would apply to every later session)",
    ),
    rule(
        "persistence.permissive_agent_settings",
        C::Persistence,
        High,
        Any,
        r#"(?i)["']?(?:auto_?approve|auto_?accept|skip_?confirmations?|allow_?all(?:_?tools)?|bypass_?permissions|dangerously_?skip_?permissions|yolo)["']?\s*[:=]\s*["']?(?:true|on|yes|1|all)\b|["']?(?:require_?approval|confirm(?:ation)?s?(?:_?required)?|[a-z_-]*[-_]confirmation|ask_?before_?\w+|sandbox(?:_?enabled)?)["']?\s*[:=]\s*["']?(?:false|off|no|0|disabled|none|never)\b|trust[-_]?mode\s*[:=]\s*["']?(?:permissive|full|all|unrestricted)|"defaultMode"\s*:\s*"bypassPermissions"|"allow"\s*:\s*\[\s*"(?:\*|Bash(?:\(\*\))?)""#,
        "agent settings that turn off approval prompts or allow every tool",
    ),
    rule(
        "persistence.memory_poisoning",
        C::Persistence,
        High,
        Text,
        r"(?i)\b(?:remember|memori[sz]e|store|save|persist|keep)\b[^\n.]{0,40}\b(?:for|in|across|during)\s+(?:all\s+)?(?:future|later|subsequent|every|all)\s+(?:sessions?|conversations?|chats?|tasks?|interactions?|projects?)|\b(?:from now on|for the rest of (?:this|the) session|in all future)\b[^\n.]{0,60}\b(?:always|never|you (?:must|should))\b",
        "text tries to persist instructions into the agent's memory",
    ),
    rule(
        "persistence.service",
        C::Persistence,
        High,
        Any,
        r"(?i)\blaunchctl\s+(?:load|bootstrap|submit)\b|Library/Launch(?:Agents|Daemons)/|\bsystemctl\s+(?:--user\s+)?enable\b|/etc/systemd/system/|\.config/systemd/user/|/etc/init\.d/|/etc/rc\.local|\bupdate-rc\.d\b|CurrentVersion\\Run\b|\\Start Menu\\Programs\\Startup|LoginItems|/etc/ld\.so\.preload|\bLD_PRELOAD=",
        "a service, login item or preload is installed so code outlives the session",
    ),
    rule(
        "persistence.authorized_keys",
        C::Persistence,
        Critical,
        Any,
        r"(?:>>|\btee\s+-a\b|open\([^)\n]*[\x22\x27]a[\x22\x27])[^\n]*authorized_keys|authorized_keys[^\n]*(?:>>|\btee\s+-a)",
        "a key is added to authorized_keys (remote login backdoor)",
    ),
    // ---------------------------------------------------------------- runtime dependencies
    rule(
        "dependency.untrusted_source",
        C::RuntimeDependency,
        High,
        Any,
        r"(?i)\b(?:pip3?|python[23]?\s+-m\s+pip|uv\s+pip|uv\s+add|pipx|poetry\s+add|npm|pnpm|yarn|bun|gem|cargo|go)\s+(?:install|add|i|get)\b[^\n]*(?:https?://|git\+|--index-url|--extra-index-url|-i\s+https?:|--trusted-host|--registry[ =]|--source\s|--git\s|--no-verify|--allow-unverified|--pre\b[^\n]*--extra)|--extra-index-url\b|--trusted-host\b|\bnpm\s+config\s+set\s+registry\b|\bpip\s+config\s+set\s+global\.(?:index|extra)",
        "a package is installed from an unofficial index, URL or git source at run time",
    ),
    rule(
        "dependency.install",
        C::RuntimeDependency,
        Low,
        Code,
        r"(?i)(?:^|[;&|(`]\s*|\$\(\s*|[\x22\x27]\s*)(?:sudo\s+)?(?:pip3?|python[23]?\s+-m\s+pip|uv\s+pip|pipx|poetry|conda|mamba|npm|pnpm|yarn|bun|gem|cargo|go|apt(?:-get)?|brew|apk|yum|dnf|pacman|choco|winget|Install-Module)\s+(?:install|add|i|get)\b",
        "a package is installed at run time",
    ),
    rule(
        "dependency.install_from_code",
        C::RuntimeDependency,
        Medium,
        Code,
        r#"(?:subprocess\.\w+|os\.system|os\.popen|execSync|exec|spawn(?:Sync)?)\(\s*\[?\s*(?:f?["'][^"'\n]*\b(?:pip3?|npm|yarn|pnpm|gem|go|cargo)["']?\s*,?\s*["']?\s*(?:install|add|get)\b|sys\.executable\s*,\s*["']-m["']\s*,\s*["']pip["']\s*,\s*["']install)"#,
        "a script installs packages when it runs",
    ),
    rule(
        "dependency.run_remote_package",
        C::RuntimeDependency,
        Low,
        Code,
        r"(?:^|[;&|\x22\x27\s])(?:npx\s+(?:-y\b|--yes\b)|uvx\s+\S|pipx\s+run\s|bunx\s+\S|pnpm\s+dlx\s|yarn\s+dlx\s|deno\s+run\s+[^\n]*https?://)",
        "a package is fetched and run at run time",
    ),
    rule(
        "dependency.internal_name_public_fetch",
        C::RuntimeDependency,
        High,
        Code,
        r"(?i)(?:\bnpx\s+(?:-y\s+|--yes\s+)?|\b(?:npm|pnpm|yarn|bun)\s+(?:install|i|add)\s+(?:-\S+\s+)*|\bpip3?\s+install\s+(?:-\S+\s+)*|\buvx\s+)@?[\w.-]*(?:internal|private|corp|intranet|in-house|company)[\w.-]*(?:/[\w.-]+)?",
        "an internal-looking package is fetched from the public registry (dependency confusion)",
    ),
    rule(
        "dependency.internal_registry_instruction",
        C::RuntimeDependency,
        High,
        Text,
        r"(?i)\b(?:install|fetch|download|pull)\b[^\n.]{0,50}\bfrom\b[^\n.]{0,20}\b(?:our|the|an?|your)?\s*(?:internal|private|custom|corporate|company|team|mirror(?:ed)?|patched|forked)\s+(?:registry|index|mirror|feed|repository|repo|fork|build)s?",
        "text tells the agent to install packages from a non-public source",
    ),
];
