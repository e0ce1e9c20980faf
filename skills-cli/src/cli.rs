//! The command line: every subcommand, flag and value, parsed by clap.
//!
//! Everything here is untrusted input; clap turns malformed arguments into usage errors
//! (exit 2) before any command runs, and every value that reaches a command is typed.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

/// The exit statuses, shown at the end of `--help` and in `docs/cli.md`.
pub const EXIT_CODES: &str = "\
Exit status:
  0  success
  1  a check failed: an invalid skill, a scan at --fail-on review, a broken audit chain,
     a script that ran and failed, an install refused as invalid or already installed,
     an unknown skill named
  2  usage error (unknown flag, missing or malformed argument)
  3  blocked or denied: the scanner blocked a skill, an approval was declined, a digest
     did not match, the skill is disabled until approved (enable included)
  4  store, I/O or network error (an MCP server that cannot be reached included)";

/// Load, check, install and run agent skills.
///
/// The store is an embedded SQLite file: `--store`, else `$SKILLS_STORE`, else
/// `$XDG_DATA_HOME/skills/skills.db`, else `$HOME/.local/share/skills/skills.db`, else
/// `./.skills/skills.db`.
#[derive(Debug, Parser)]
#[command(name = "skills", version, after_help = EXIT_CODES)]
pub struct Cli {
    /// Flags every command takes.
    #[command(flatten)]
    pub global: Global,
    /// The command.
    #[command(subcommand)]
    pub command: Command,
}

/// Flags every command takes.
#[derive(Debug, Clone, Args)]
pub struct Global {
    /// The SQLite store file (created on first use).
    #[arg(long, global = true, env = "SKILLS_STORE", value_name = "PATH")]
    pub store: Option<PathBuf>,
    /// The tenant whose skills and audit chain are used.
    #[arg(
        long,
        global = true,
        env = "SKILLS_TENANT",
        default_value = "default",
        value_name = "ID"
    )]
    pub tenant: String,
    /// Machine-readable output: one JSON document, or one JSON object per line for
    /// per-item commands (validate, scan, audit list), keys in a fixed order.
    #[arg(long, global = true)]
    pub json: bool,
    /// Print nothing but errors (the exit status tells the result).
    #[arg(long, short, global = true)]
    pub quiet: bool,
}

/// The commands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Check skills against the Agent Skills specification.
    Validate(ValidateArgs),
    /// Print the `<available_skills>` block for skill directories (as the reference
    /// validator's `to-prompt` does, byte for byte).
    ToPrompt(ToPromptArgs),
    /// Scan skills with the static security scanner.
    Scan(ScanArgs),
    /// Install a skill into the store: validate, scan, digest, assign trust, audit.
    Install(InstallArgs),
    /// List the skills installed in the store.
    List,
    /// Assign a stored skill to an agent by name: what `skills serve --agent ID` serves.
    Assign(AssignArgs),
    /// Take a skill's assignment to an agent away (a skill stays installed).
    Unassign(AssignArgs),
    /// Lift the hold `disable` placed and switch the skill on (an install still awaiting
    /// approval stays off until approved: status 3).
    Enable(SkillArgs),
    /// Switch a skill off and hold it off: updates, approvals, upgrades and rollbacks keep
    /// it off until `enable`.
    Disable(SkillArgs),
    /// Set the trust level a stored skill runs at.
    Trust(TrustArgs),
    /// Remove an installed skill: its files, versions and assignments.
    Remove(SkillArgs),
    /// Run a script a skill references, after approval, in the sandbox.
    Run(RunArgs),
    /// The audit trail.
    #[command(subcommand)]
    Audit(AuditCommand),
    /// Serve skills over the Model Context Protocol.
    Serve(ServeArgs),
    /// Print a shell completion script.
    Completions(CompletionsArgs),
}

/// The rules `validate` applies.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ProfileArg {
    /// The Agent Skills standard, strictly.
    Spec,
    /// What an agent loads.
    Lenient,
}

/// `skills validate`.
#[derive(Debug, Args)]
pub struct ValidateArgs {
    /// Which rules.
    #[arg(long, value_enum, default_value_t = ProfileArg::Spec)]
    pub profile: ProfileArg,
    /// Skill directories, SKILL.md files, or roots to search.
    #[arg(required = true, value_name = "PATH")]
    pub paths: Vec<PathBuf>,
}

/// `skills to-prompt`.
#[derive(Debug, Args)]
pub struct ToPromptArgs {
    /// Skill directories or their SKILL.md files.
    #[arg(required = true, value_name = "PATH")]
    pub paths: Vec<PathBuf>,
}

/// The verdict at which `scan` fails with status 1 (a block always exits 3).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum FailOn {
    /// Fail on review (and block).
    Review,
    /// Fail only on block (the default).
    Block,
}

/// `skills scan`.
#[derive(Debug, Args)]
pub struct ScanArgs {
    /// Also fail (status 1) when a skill needs review.
    #[arg(long, value_enum, default_value_t = FailOn::Block)]
    pub fail_on: FailOn,
    /// Also run each skill directory's scripts in the process sandbox, observed (network
    /// cut, decoy credentials), and add what they did to the findings. A skill that cannot
    /// be detonated here keeps its static verdict and says so.
    #[arg(long)]
    pub detonate: bool,
    /// Skill directories, single files, or trees to search for skills.
    #[arg(required = true, value_name = "PATH")]
    pub paths: Vec<PathBuf>,
}

/// `skills install`.
#[derive(Debug, Args)]
pub struct InstallArgs {
    /// What to install: a skill directory, a directory of skill directories, an archive
    /// (`.tar.gz`, `.tgz`, portable `.json`), `git:OWNER/REPO[/PATH][@REF]` or
    /// `npm:PACKAGE[@VERSION]`.
    #[arg(
        value_name = "SOURCE",
        required_unless_present = "mcp",
        conflicts_with = "mcp"
    )]
    pub source: Option<String>,
    /// Install every skill an MCP server lists (its streamable HTTP endpoint, e.g.
    /// `http://127.0.0.1:8765/mcp`); the skills are `community` unless trusted.
    #[arg(long, value_name = "URL")]
    pub mcp: Option<String>,
    /// The environment variable holding the bearer token for `--mcp`.
    #[arg(long, value_name = "VAR", requires = "mcp")]
    pub mcp_token_env: Option<String>,
    /// The version to fetch (a release tag or ref for git, a version or dist-tag for npm).
    #[arg(long, value_name = "VERSION")]
    pub version: Option<String>,
    /// Refuse anything but this package digest (`sha256:<hex>`).
    #[arg(long, value_name = "DIGEST")]
    pub expect_digest: Option<String>,
    /// The git host's REST API base for `git:` sources.
    #[arg(long, env = "SKILLS_GIT_API", value_name = "URL")]
    pub git_api: Option<String>,
    /// A token for the git host's API (read from this environment variable).
    #[arg(long, value_name = "VAR")]
    pub git_token_env: Option<String>,
    /// The npm registry base URL for `npm:` sources.
    #[arg(long, env = "SKILLS_NPM_REGISTRY", value_name = "URL")]
    pub npm_registry: Option<String>,
    /// Seconds each HTTP request may take.
    #[arg(long, default_value_t = 30, value_parser = clap::value_parser!(u64).range(1..=600))]
    pub http_timeout: u64,
}

/// The trust level a skill run from a directory gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum TrustArg {
    /// Shipped with the platform.
    Core,
    /// From a trusted source, scanned clean.
    Verified,
    /// Written by the tenant.
    User,
    /// Anything else (the default).
    Community,
}

/// `skills run`.
#[derive(Debug, Args)]
pub struct RunArgs {
    /// An installed skill's slug, or a skill directory given as a path (`./dir`, or any
    /// argument with a slash): a bare name always means the installed skill.
    #[arg(value_name = "SKILL")]
    pub skill: String,
    /// The script, relative to the skill (its SKILL.md must reference it).
    #[arg(value_name = "SCRIPT")]
    pub script: String,
    /// Arguments for the script.
    #[arg(
        value_name = "ARGS",
        trailing_var_arg = true,
        allow_hyphen_values = true
    )]
    pub args: Vec<String>,
    /// Answer the approval question with yes (once) without asking: the choice to run
    /// every script this invocation is asked about.
    #[arg(long)]
    pub approve_all_scripts: bool,
    /// The trust level for a skill run from a directory (installed skills run at their
    /// stored level).
    #[arg(long, value_enum, default_value_t = TrustArg::Community)]
    pub trust: TrustArg,
    /// Wall-clock seconds the script may run (the trust level's limit by default).
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..=3600))]
    pub timeout: Option<u64>,
    /// Seconds the approval question waits for an answer before declining.
    #[arg(long, default_value_t = 120, value_parser = clap::value_parser!(u64).range(1..=86400))]
    pub approval_timeout: u64,
}

/// `skills enable`, `disable`, `remove`: the skill.
#[derive(Debug, Args)]
pub struct SkillArgs {
    /// The stored skill's slug.
    #[arg(value_name = "NAME")]
    pub name: String,
}

/// `skills assign`, `unassign`.
#[derive(Debug, Args)]
pub struct AssignArgs {
    /// The stored skill's slug.
    #[arg(value_name = "NAME")]
    pub name: String,
    /// The agent (as `skills serve --agent` names it).
    #[arg(long, value_name = "ID", default_value = "default")]
    pub agent: String,
}

/// A trust level, as `skills-security` spells them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum LevelArg {
    /// Shipped with the platform, fully audited.
    Core,
    /// From a trusted source, security reviewed.
    Verified,
    /// Not reviewed (what anything untrusted runs at).
    Community,
    /// Written by this user or tenant.
    User,
}

/// `skills trust`.
#[derive(Debug, Args)]
pub struct TrustArgs {
    /// The stored skill's slug.
    #[arg(value_name = "NAME")]
    pub name: String,
    /// The level it runs at from now on.
    #[arg(value_enum, value_name = "LEVEL")]
    pub level: LevelArg,
}

/// `skills audit`.
#[derive(Debug, Subcommand)]
pub enum AuditCommand {
    /// Check the tenant's hash chain from its first entry; status 1 when it is broken.
    Verify,
    /// Every record of the tenant's trail, oldest first: who did what to which skill, and
    /// what came of it.
    List,
}

/// `skills serve`.
#[derive(Debug, Args)]
#[command(group(clap::ArgGroup::new("transport").required(true).args(["stdio", "http"])))]
pub struct ServeArgs {
    /// Speak MCP over standard input and output.
    #[arg(long)]
    pub stdio: bool,
    /// Listen for streamable HTTP on this address (loopback unless told otherwise).
    #[arg(long, value_name = "ADDR")]
    pub http: Option<String>,
    /// The environment variable holding the bearer token HTTP clients must present.
    #[arg(long, value_name = "VAR", requires = "http")]
    pub token_env: Option<String>,
    /// Serve the skills under this directory instead of the store's.
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
    /// The agent whose assigned skills are served (store mode).
    #[arg(long, value_name = "ID", default_value = "default")]
    pub agent: String,
}

/// `skills completions`.
#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// The shell.
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    #[test]
    fn the_command_definition_is_consistent() {
        // clap's own checks (unique names, valid groups) run here, not at a user's first call.
        super::Cli::command().debug_assert();
    }
}
