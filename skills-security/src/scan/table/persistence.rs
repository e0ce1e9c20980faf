//! Persistence and runtime dependencies: what outlives the session (cron, shell start-up, hooks, agent configuration, services, keys) and packages fetched at run time.
//!
//! Rows of the pattern table (see `table.rs` for what each field means).

use super::super::report::{Category as C, Severity};
use super::{RuleDef, Scope, Soften, rule};
use Scope::{Any, Code, Text};
use Severity::{Critical, High, Low, Medium};

/// The persistence rows, in table order.
pub(super) const PERSISTENCE: &[RuleDef] = &[
    // ---------------------------------------------------------------- persistence
    rule(
        "persistence.cron",
        C::Persistence,
        High,
        Any,
        r"\bcrontab\s+(?:-[a-zA-Z]\s+\S+\s+)*(?:-\s*$|-\s*[;&|]|[^-\s][^\s]*|<)|\|\s*crontab\b|/etc/cron(?:tab|\.d|\.daily|\.hourly)|/var/spool/cron|@reboot\b|\bschtasks\s+/create\b|Register-ScheduledTask",
        "a scheduled job is installed (cron, scheduled tasks)",
    )
    // A line that only lists or reads the jobs (`crontab -l; sudo ls /etc/cron.d`) installs
    // none; a pipe, a redirection or any other command on the line keeps the finding.
    .unless(r"^\s*(?:\$\s+)?(?:(?:sudo\s+)?(?:crontab\s+-l|ls|cat|stat|head|tail|less)\b[^;&|\n<>]*(?:\s*(?:;|&&)\s*|\s*$))+$"),
    rule(
        "persistence.shell_startup",
        C::Persistence,
        High,
        Any,
        r#"(?:>>?\s*|\btee\s+(?:-a\s+)?|open\(\s*[^)\n]*|write_text\(|appendFile(?:Sync)?\(\s*[^)\n]*|\bsed\s+-i[^\n]*|Add-Content\s+[^\n]*)["']?(?:~|\$HOME|\$\{HOME\}|/root|/home/\w+|os\.path\.expanduser\(\s*["']~)?/?\.(?:bashrc|bash_profile|bash_login|profile|zshrc|zprofile|zshenv|zlogin|config/fish/config\.fish)\b|/etc/(?:profile|bash\.bashrc|environment|zsh/zshrc)\b[^\n]*(?:>>|tee)|\$PROFILE\b[^\n]*(?:Add-Content|>>|Set-Content)"#,
        "a shell start-up file is modified, so code runs in every new shell",
    )
    .soften(Soften::EnvSetup),
    rule(
        "persistence.git_hooks",
        C::Persistence,
        High,
        Any,
        r#"\.git/hooks/[a-z-]+|\bcore\.hooksPath\b|["']\.git["']\s*,\s*["']hooks["']"#,
        "a git hook is installed, so code runs on every commit or checkout",
    )
    // Reading or removing the setting alone installs nothing.
    .unless(r"^\s*(?:\$\s+)?git\s+config\s+(?:--(?:global|system|local)\s+)*--(?:get|get-all|unset|unset-all)\s+core\.hooksPath\s*$"),
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
