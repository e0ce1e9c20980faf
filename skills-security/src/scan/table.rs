//! The pattern rules: the row type and its builders, the shared pattern pieces, and the
//! table assembled from its category modules (`table/*.rs`), one row per rule.
//!
//! Each rule is a regular expression matched against whole files (a match is attributed to
//! the line where it starts), optionally narrowed by a second pattern that must (`also`) or
//! must not (`unless`) appear on the same line. Its [`Scope`] says where it applies and how
//! prose weighs; its signals feed the combinations in `signals.rs` (an environment dump and a
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
    /// A line appended to a shell start-up file that only sets up the environment (`export
    /// PATH=…`, `eval "$(tool shellenv)"`, `source ~/.tool/env`): `Low`
    /// (`installers::only_env_setup`).
    EnvSetup,
    /// SSH paths that name only public keys (`.pub`) or list the `.ssh` directory: no
    /// match at all (`installers::only_public_keys`).
    PublicKey,
    /// A `url.<X>.insteadOf <Y>` rewrite whose two addresses name the same host (SSH for
    /// HTTPS): no match at all (`sinks::same_host_rewrite`).
    SameHost,
    /// A download to run whose every URL is HTTPS on a listed vendor installer (the official
    /// `rustup-init.exe`): `Low` (`installers::only_known_installers`).
    KnownDownload,
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
    /// Whether the paragraph conditions are read as a source (`also`) and a sink (`also2`)
    /// that a negation must not govern (`behaviour::governed_hold`), instead of anywhere in
    /// the unit.
    pub governed: bool,
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
        governed: false,
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
    pub(crate) const fn governed(mut self) -> Self {
        self.governed = true;
        self
    }
    pub(crate) const fn soften(mut self, soften: Soften) -> Self {
        self.soften = soften;
        self
    }
}

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

// The rows, by category. Declared after the macros above, which they use.
mod commands;
mod exfiltration;
mod injection;
mod persistence;

/// Every pattern rule: the table's rows in their fixed order (prompt injection,
/// exfiltration and credential access, obfuscation and dangerous commands, persistence and
/// runtime dependencies), then the behaviour rules (`behaviour.rs`).
pub(crate) static RULES: std::sync::LazyLock<Vec<RuleDef>> = std::sync::LazyLock::new(|| {
    injection::INJECTION
        .iter()
        .chain(exfiltration::EXFILTRATION)
        .chain(commands::COMMANDS)
        .chain(persistence::PERSISTENCE)
        .chain(super::behaviour::BEHAVIOUR_RULES)
        .chain(super::prose::PROSE_RULES)
        .chain(super::sinks::SINK_RULES)
        .copied()
        .collect()
});
