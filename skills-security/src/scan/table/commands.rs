//! Obfuscation and dangerous commands: decoded or computed code, pipes into shells, destructive deletes, reverse shells, privilege changes, disabled controls.
//!
//! Rows of the pattern table (see `table.rs` for what each field means).

use super::super::report::{Category as C, Severity};
use super::{RuleDef, Scope, Soften, rule, signal as s};
use Scope::{Any, Code, Text};
use Severity::{Critical, High, Info, Medium};

/// The commands rows, in table order.
pub(super) const COMMANDS: &[RuleDef] = &[
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
        r#"(?i)\b(?:curl|wget|fetch|iwr|irm|Invoke-WebRequest|Invoke-RestMethod)\b[^\n|]*\|\s*(?:sudo\s+(?:-\S+\s+)*)?(?:(?:ba|z|da|k|fi)?sh|python[23]?|perl|ruby|node|php|iex|Invoke-Expression)\b(?:\s+-s\b|\s+-(?:\s|$)|\s*$|\s*[;&|)"'`]|\s+-c\s*$)|(?:ba|z)?sh\s+(?:-c\s+)?["']?(?:<\(|\$\()\s*(?:curl|wget)\b|(?:\bsource|^\s*\.)\s+<\(\s*(?:curl|wget)\b|python[23]?\s+-c\s+["']?\$\(\s*(?:curl|wget)|\beval\s+["']?\$\(\s*(?:curl|wget)\b|(?:exec|eval)\s*\(\s*(?:requests\.get|urlopen|urllib\.request\.urlopen|httpx\.get)\("#,
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
    // Package installs, or a line on which every `sudo` only reads (lists, prints, searches
    // logs): an audit runbook's inspection changes nothing, and what it reads is judged by
    // the credential rules.
    .unless(r"\bsudo\s+(?:apt(?:-get)?|dnf|yum|apk|pacman|zypper|brew|snap|port)\s+(?:install|update|upgrade)\b|^(?:[^s]|s(?:[^u]|$)|su(?:[^d]|$)|sud(?:[^o]|$)|sudo\s+(?:-[a-zA-Z]+\s+)*(?:ls|cat|head|tail|less|grep|zgrep|journalctl|stat|lsof|ss|netstat|ps|du|df|dmesg|last|lastlog|who|id|getent|crontab\s+-l|systemctl\s+(?:status|list-\S+|is-\S+)|ufw\s+status|iptables\s+-[LS]|nft\s+list)\b)*$"),
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
        r#"(?i)\bsetenforce\s+0\b|\bufw\s+disable\b|\biptables\s+-F\b|systemctl\s+(?:stop|disable|mask)\s+(?:firewalld|apparmor|auditd|selinux|ufw)|Set-MpPreference\s+-Disable|Add-MpPreference\s+-Exclusion\w*|\bEnableLUA\b[^\n]*\b0\b|\bspctl\s+--master-disable|csrutil\s+disable|PYTHONHTTPSVERIFY\s*=\s*["']?0|NODE_TLS_REJECT_UNAUTHORIZED\s*=\s*["']?0|GIT_SSL_NO_VERIFY\s*=\s*["']?(?:1|true)|http\.sslVerify\s+false|StrictHostKeyChecking\s*=?\s*no|\bverify\s*=\s*False\b|rejectUnauthorized\s*:\s*false|--dangerously-skip-permissions|--no-sandbox\b|--disable-web-security|CURL_CA_BUNDLE\s*=\s*["']{2}"#,
        "a security control (firewall, TLS verification, sandbox, permission prompts) is turned off",
    ),
    rule(
        "dangerous.quarantine_removal",
        C::DangerousCommand,
        Medium,
        Any,
        r"\bxattr\s+(?:-[a-z]+\s+)*-[a-z]*d[a-z]*\s+(?:-[a-z]+\s+)*com\.apple\.quarantine",
        "the quarantine mark is removed so the operating system does not check a downloaded program",
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
];
