//! What a scan returns: findings, their categories and severities, the score and verdict.

use std::collections::BTreeSet;

use serde::Serialize;

use super::redact::redact;
use super::score;

/// What kind of risk a finding is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Category {
    /// Text that tries to override the agent's instructions, or hides instructions from the
    /// human reader (HTML comments, zero-width, bidi and Unicode tag characters).
    PromptInjection,
    /// Sending files, environment or credentials to a network destination (HTTP, raw
    /// sockets, DNS lookups carrying data).
    Exfiltration,
    /// Reading credentials: SSH keys, cloud credential files, keychains, environment dumps.
    CredentialAccess,
    /// Encoded payloads decoded and executed, and evaluation of dynamic strings.
    Obfuscation,
    /// Downloads piped into a shell, recursive deletes of system paths, privilege escalation,
    /// reverse shells.
    DangerousCommand,
    /// Writing cron entries, shell start-up files, git hooks, agent configuration or service
    /// units, so the skill outlives its run.
    Persistence,
    /// A name that imitates a known skill's.
    NameSpoofing,
    /// A script shipped in the package that the instructions never mention.
    UnreferencedScript,
    /// A compiled binary or otherwise non-text file, and files the scan could not read.
    Binary,
    /// Installing packages at run time.
    RuntimeDependency,
    /// Text that gets the user or the agent to fetch and run something from outside the
    /// package: a password-protected archive, a downloaded executable, a command from a
    /// paste site.
    Lure,
}

impl Category {
    /// The snake_case name used in JSON.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Self::PromptInjection => "prompt_injection",
            Self::Exfiltration => "exfiltration",
            Self::CredentialAccess => "credential_access",
            Self::Obfuscation => "obfuscation",
            Self::DangerousCommand => "dangerous_command",
            Self::Persistence => "persistence",
            Self::NameSpoofing => "name_spoofing",
            Self::UnreferencedScript => "unreferenced_script",
            Self::Binary => "binary",
            Self::RuntimeDependency => "runtime_dependency",
            Self::Lure => "lure",
        }
    }
}

impl std::fmt::Display for Category {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// How much a finding weighs, from `Info` (recorded, no weight) to `Critical` (blocks alone).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Severity {
    /// Worth recording; adds nothing to the score.
    Info,
    /// Common in benign skills; a little weight.
    Low,
    /// Needs a reason; several together ask for review.
    Medium,
    /// Rarely benign; asks for review alone.
    High,
    /// An attack pattern; blocks alone.
    Critical,
}

impl Severity {
    /// The snake_case name used in JSON.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Info => "info",
            Self::Low => "low",
            Self::Medium => "medium",
            Self::High => "high",
            Self::Critical => "critical",
        }
    }

    /// One step lower (`Info` stays `Info`): used when a pattern appears in prose rather
    /// than in code.
    #[must_use]
    pub fn lowered(self) -> Self {
        match self {
            Self::Critical => Self::High,
            Self::High => Self::Medium,
            Self::Medium => Self::Low,
            Self::Low | Self::Info => Self::Info,
        }
    }
}

impl std::fmt::Display for Severity {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What to do with a scanned skill.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// Nothing above `Low` weight: may be installed at its trust level.
    Clean,
    /// Suspicious: a human should look before it is installed, and it is not marked verified.
    Review,
    /// An attack pattern: refuse unless an administrator overrides.
    Block,
}

impl Verdict {
    /// The snake_case name used in JSON.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Clean => "clean",
            Self::Review => "review",
            Self::Block => "block",
        }
    }
}

impl std::fmt::Display for Verdict {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Where a finding stands, which decides part of its weight: the same words are an order in
/// a skill's instructions, a pattern being shown in documentation, and behaviour in code.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum FindingContext {
    /// Prose or frontmatter of the SKILL.md: an instruction to the agent or the user.
    Instruction,
    /// A fenced block, a script or a configuration file: code that runs or is run.
    Code,
    /// An HTML comment: invisible when rendered.
    Hidden,
    /// Documentation of a pattern: a reference file, a block introduced as an example or a
    /// bad pattern, quoted text, a code comment, a rule body (YARA, Semgrep). Weighs less.
    Documentation,
    /// The file or the package as a whole (a binary, a missing script, a name).
    Package,
}

impl FindingContext {
    /// The snake_case name used in JSON.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Instruction => "instruction",
            Self::Code => "code",
            Self::Hidden => "hidden",
            Self::Documentation => "documentation",
            Self::Package => "package",
        }
    }
}

/// One thing the scanner found.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct ScanFinding {
    /// What kind of risk.
    pub category: Category,
    /// How much it weighs (already lowered when the match is prose rather than code).
    pub severity: Severity,
    /// The rule's stable identifier (`dangerous.pipe_to_shell`).
    pub rule: &'static str,
    /// The file inside the package, `/`-separated.
    pub file: String,
    /// The 1-based line, or 0 for a finding about the whole file or package.
    pub line: u32,
    /// The matched text, redacted: secrets and long encoded blobs masked, invisible
    /// characters shown as `<U+200B>`, at most 160 characters.
    pub evidence: String,
    /// What the rule means, for a human.
    pub message: String,
    /// Where the finding stands (instruction, code, documentation...).
    pub context: FindingContext,
}

impl ScanFinding {
    /// A finding; `evidence` is redacted here, so raw matches can be passed in.
    #[must_use]
    pub fn new(
        category: Category,
        severity: Severity,
        rule: &'static str,
        file: &str,
        line: u32,
        evidence: String,
        message: String,
    ) -> Self {
        Self {
            category,
            severity,
            rule,
            file: file.to_owned(),
            line,
            evidence: redact(&evidence),
            message,
            context: FindingContext::Package,
        }
    }

    /// The same finding, standing in `context`.
    #[must_use]
    pub fn in_context(mut self, context: FindingContext) -> Self {
        self.context = context;
        self
    }

    fn sort_key(&self) -> (&str, u32, Category, &'static str, &str) {
        (
            &self.file,
            self.line,
            self.category,
            self.rule,
            &self.evidence,
        )
    }
}

/// The result of scanning one skill.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct ScanReport {
    /// Every finding, sorted by file, line, category and rule; duplicates removed.
    pub findings: Vec<ScanFinding>,
    /// The risk score, 0 (nothing found) to 100.
    pub score: u32,
    /// What to do with the skill.
    pub verdict: Verdict,
}

impl ScanReport {
    /// A report from findings in any order: sorted, deduplicated, scored.
    #[must_use]
    pub fn from_findings(mut findings: Vec<ScanFinding>) -> Self {
        findings.sort_by(|a, b| a.sort_key().cmp(&b.sort_key()));
        findings.dedup_by(|a, b| a.sort_key() == b.sort_key());
        let score = score::score(&findings);
        let verdict = score::verdict(&findings, score);
        Self {
            findings,
            score,
            verdict,
        }
    }

    /// Whether the verdict is [`Verdict::Block`].
    #[must_use]
    pub fn is_blocked(&self) -> bool {
        self.verdict == Verdict::Block
    }

    /// The categories of the findings that carry weight (above `Info`).
    #[must_use]
    pub fn categories(&self) -> BTreeSet<Category> {
        self.findings
            .iter()
            .filter(|f| f.severity > Severity::Info)
            .map(|f| f.category)
            .collect()
    }

    /// The highest severity found, if any finding carries weight.
    #[must_use]
    pub fn max_severity(&self) -> Option<Severity> {
        self.findings
            .iter()
            .map(|f| f.severity)
            .filter(|s| *s > Severity::Info)
            .max()
    }
}
