//! Detonation: running a skill's scripts in the sandbox with observation on, and turning
//! what they tried into findings that join the static scan's verdict.
//!
//! **Threat.** A script that looks harmless and is not: its payload is assembled, decoded
//! or fetched at run time, so the static rules never see it. **Guarantee.** With
//! [`Scanner::detonate`] each script of the package the sandbox can interpret (those
//! SKILL.md references first, at most [`DetonationOptions::max_scripts`]) runs once with no
//! arguments and empty standard input, in the given [`Sandbox`] with
//! [`SandboxConfig::detonation`] (network cut and observed, decoy credentials in `HOME`,
//! 5 s, 256 MiB). Its [`Observation`]s become findings (rule ids `detonation.*`, context
//! `code`, evidence the observation) that feed the same score and verdict:
//!
//! | observed | finding |
//! |---|---|
//! | a decoy's canary in a DNS name or datagram | critical (`detonation.exfiltration`) |
//! | a credential read (decoy other than `.env`, or a credential path elsewhere) and any network attempt | critical (`detonation.credential_exfiltration`) |
//! | a credential read alone | high (`.env` alone: low) |
//! | `.env` read and a network attempt | high |
//! | a program started from a file the run wrote | high (`detonation.dropped_executable`) |
//! | a write outside scratch: system or other users' paths | high; elsewhere medium; `/tmp` low |
//! | a connect or datagram to a non-loopback address | medium (`detonation.network_connect`) |
//! | a DNS lookup | low (`detonation.dns_lookup`) |
//! | a program started | info (`detonation.program_started`) |
//!
//! A script's exit status is never a finding: a benign script failing without its
//! arguments or network is clean. A run that could not be observed (no isolation here, a
//! sandbox without observation, a launch error) is reported in [`Detonation::state`],
//! never as a clean detonation. What does not hold: a script that waits, wants arguments,
//! checks for decoys or detects the sandbox shows nothing; detonation adds evidence, it
//! does not prove absence.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use serde::Serialize;

use super::report::{Category, FindingContext, ScanFinding, ScanReport, Severity};
use super::{ScanFile, Scanner, dir, scripts};
use crate::sandbox::{
    Interpreter, Observation, Program, Sandbox, SandboxConfig, SandboxRequest, Status, Tier,
};

/// How [`Scanner::detonate`] runs a package's scripts.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct DetonationOptions {
    /// The run's limits and permissions; [`SandboxConfig::detonation`] by default.
    /// Observation is forced on.
    pub config: SandboxConfig,
    /// Most scripts run per package (referenced ones first, then by path).
    pub max_scripts: usize,
    /// Where each run's scratch directory is made (the system's temporary directory by
    /// default).
    pub scratch_root: PathBuf,
}

impl Default for DetonationOptions {
    fn default() -> Self {
        DetonationOptions {
            config: SandboxConfig::detonation(),
            max_scripts: 8,
            scratch_root: std::env::temp_dir(),
        }
    }
}

impl DetonationOptions {
    /// Sets the config (observation stays on).
    #[must_use]
    pub fn config(mut self, config: SandboxConfig) -> Self {
        self.config = config;
        self
    }

    /// Sets where scratch directories are made.
    #[must_use]
    pub fn scratch_root(mut self, root: impl Into<PathBuf>) -> Self {
        self.scratch_root = root.into();
        self
    }

    /// Sets the most scripts run per package.
    #[must_use]
    pub fn max_scripts(mut self, n: usize) -> Self {
        self.max_scripts = n;
        self
    }
}

/// Whether a package's detonation happened.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "state", rename_all = "snake_case")]
#[non_exhaustive]
pub enum DetonationState {
    /// Every selected script ran observed.
    Complete,
    /// The package has no script the sandbox can run.
    NoScripts,
    /// Some scripts ran observed, others did not (each run says why).
    Partial,
    /// No script ran observed: the result is the static scan's alone.
    NotDetonated {
        /// Why (the sandbox's own words for the first failure).
        reason: String,
    },
}

/// One script's observed run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct ScriptRun {
    /// The script's path in the package.
    pub script: String,
    /// How the run ended.
    pub status: Status,
    /// The isolation in force.
    pub tier: Option<Tier>,
    /// Whether the run was observed.
    pub observed: bool,
    /// What it tried.
    pub observations: Vec<Observation>,
    /// Observations past the cap.
    pub observations_dropped: u64,
    /// Wall time of the run, in milliseconds.
    pub duration_ms: u64,
}

/// The dynamic half of a detonated scan.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct Detonation {
    /// Whether it happened.
    #[serde(flatten)]
    pub state: DetonationState,
    /// The strongest tier any run had (`None`: nothing ran).
    pub tier: Option<Tier>,
    /// Each script's run.
    pub runs: Vec<ScriptRun>,
}

/// A scan with detonation: the combined report (static and runtime findings, one score and
/// verdict) and what the runs did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct DetonationReport {
    /// Static and runtime findings together.
    pub report: ScanReport,
    /// The runs.
    pub detonation: Detonation,
}

impl Scanner {
    /// Scans `dir` like [`Scanner::scan_dir`], then detonates its scripts in `sandbox` (see
    /// the `detonate` module docs) and adds what they did to the findings.
    ///
    /// # Errors
    ///
    /// As [`Scanner::scan_dir`]; a sandbox that cannot run is not an error but a
    /// [`DetonationState::NotDetonated`].
    pub async fn detonate(
        &self,
        dir: &Path,
        sandbox: &dyn Sandbox,
        options: &DetonationOptions,
    ) -> Result<DetonationReport, crate::Error> {
        // One read of the package: the static scan, the choice of scripts and the digest
        // each run is pinned to come from the same bytes.
        let package = dir::read_package(dir, &self.limits).map_err(dir::RootError::into_error)?;
        let files: Vec<ScanFile<'_>> = package
            .files
            .iter()
            .map(|(path, bytes)| ScanFile::new(path, bytes))
            .collect();
        let name = dir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let static_report = self.scan_inner(&name, &files, package.findings.clone());
        let selected = runnable_scripts(&files, options.max_scripts);
        let config = options.config.clone().with_observation(true);
        let mut runs = Vec::new();
        for script in &selected {
            let mut request =
                SandboxRequest::script(dir, script, &options.scratch_root, config.clone());
            // Run the bytes that were scanned: a file changed on disk since is refused.
            if let (Program::Script { sha256, .. }, Some(file)) = (
                &mut request.program,
                files.iter().find(|f| f.path == script.as_str()),
            ) {
                *sha256 = Some(crate::audit::sha256_hex(file.bytes));
            }
            let outcome = sandbox.run(request).await;
            runs.push(ScriptRun {
                script: script.clone(),
                status: outcome.status.clone(),
                tier: outcome.tier,
                observed: outcome.observed && outcome.status.ran(),
                observations: outcome.observations,
                observations_dropped: outcome.observations_dropped,
                duration_ms: u64::try_from(outcome.duration.as_millis()).unwrap_or(u64::MAX),
            });
        }
        let detonation = summarise(runs);
        let mut findings = static_report.findings;
        for run in &detonation.runs {
            findings.extend(findings_for(run));
        }
        Ok(DetonationReport {
            report: ScanReport::from_findings(findings),
            detonation,
        })
    }
}

/// The scripts to run: those SKILL.md references, then the others, each with an
/// interpreter the sandbox knows and text content.
fn runnable_scripts(files: &[ScanFile<'_>], max: usize) -> Vec<String> {
    let paths: Vec<String> = files.iter().map(|f| f.path.to_owned()).collect();
    let referenced: BTreeSet<String> = files
        .iter()
        .find(|f| f.path.eq_ignore_ascii_case("SKILL.md"))
        .map(|f| {
            let text = String::from_utf8_lossy(f.bytes);
            skills_catalog::activation::referenced_files(&text, &paths)
                .scripts
                .into_iter()
                .collect()
        })
        .unwrap_or_default();
    let runnable = |f: &&ScanFile<'_>| {
        Interpreter::for_path(f.path).is_some() && scripts::binary_kind(f.bytes).is_none()
    };
    let mut out: Vec<String> = files
        .iter()
        .filter(runnable)
        .filter(|f| referenced.contains(f.path))
        .map(|f| f.path.to_owned())
        .collect();
    out.extend(
        files
            .iter()
            .filter(runnable)
            .filter(|f| !referenced.contains(f.path))
            .map(|f| f.path.to_owned()),
    );
    out.truncate(max);
    out
}

fn summarise(runs: Vec<ScriptRun>) -> Detonation {
    let tier = runs
        .iter()
        .filter(|r| r.observed)
        .filter_map(|r| r.tier)
        .min();
    let observed = runs.iter().filter(|r| r.observed).count();
    let state = if runs.is_empty() {
        DetonationState::NoScripts
    } else if observed == runs.len() {
        DetonationState::Complete
    } else if observed > 0 {
        DetonationState::Partial
    } else {
        let reason = runs
            .iter()
            .find_map(|r| match &r.status {
                Status::SandboxUnavailable { reason }
                | Status::Refused { reason }
                | Status::LaunchError { reason } => Some(reason.clone()),
                _ => None,
            })
            .unwrap_or_else(|| "the sandbox does not observe runs".to_owned());
        DetonationState::NotDetonated { reason }
    };
    Detonation { state, tier, runs }
}

const DOTENV: &str = "~/.env";

/// Decoys that tools read on their own as their configuration (a package manager its
/// registry token, an HTTP library `.netrc`, a container client its login), so
/// an ordinary `npm install` or API call opens them before reaching the network. The
/// canary still blocks if it goes out; read and followed by a network attempt they count
/// as a low finding, not as theft.
///
/// Git's stored credentials and the cluster configuration are not among them: git reads its
/// store only when configured to (the decoy home configures no helper) and no ordinary
/// skill drives a cluster, while both grant access wherever they are sent, and a secret sent
/// over HTTP is never seen on the wire (the connect is refused first).
const TOOL_CONFIGURATIONS: &[&str] =
    &["~/.npmrc", "~/.netrc", "~/.pypirc", "~/.docker/config.json"];

/// How much a credential read weighs, least first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum CredentialWeight {
    ToolConfiguration,
    DotEnv,
    Secret,
}

fn credential_weight(path: &str) -> CredentialWeight {
    if path == DOTENV {
        CredentialWeight::DotEnv
    } else if TOOL_CONFIGURATIONS.contains(&path) {
        CredentialWeight::ToolConfiguration
    } else {
        CredentialWeight::Secret
    }
}

fn is_network(o: &Observation) -> bool {
    match o {
        Observation::Connect {
            family,
            address,
            port,
        } => !(is_resolver(family, address, *port)),
        Observation::DnsLookup { .. } | Observation::Send { .. } => true,
        _ => false,
    }
}

/// The default resolver's address (the run cannot read the host's resolver configuration,
/// so the C library asks the loopback address): part of a lookup, not a connection.
fn is_resolver(family: &str, address: &str, port: u16) -> bool {
    port == 53 && is_loopback(family, address)
}

fn is_loopback(family: &str, address: &str) -> bool {
    match family {
        "ipv4" => address.starts_with("127."),
        "ipv6" => address == "::1",
        _ => false,
    }
}

fn finding(
    run: &ScriptRun,
    category: Category,
    severity: Severity,
    rule: &'static str,
    evidence: String,
    message: String,
) -> ScanFinding {
    ScanFinding::new(category, severity, rule, &run.script, 0, evidence, message)
        .in_context(FindingContext::Code)
}

/// The findings for one observed run.
pub(crate) fn findings_for(run: &ScriptRun) -> Vec<ScanFinding> {
    let mut out = Vec::new();
    let network: Vec<&Observation> = run.observations.iter().filter(|o| is_network(o)).collect();
    let credentials: Vec<&str> = run
        .observations
        .iter()
        .filter_map(|o| match o {
            Observation::CredentialRead { path, .. } => Some(path.as_str()),
            _ => None,
        })
        .collect();
    let weight = credentials
        .iter()
        .map(|p| credential_weight(p))
        .max()
        .unwrap_or(CredentialWeight::ToolConfiguration);
    if let Some(first) = network.first()
        && !credentials.is_empty()
    {
        let (severity, rule) = match weight {
            CredentialWeight::Secret => (Severity::Critical, "detonation.credential_exfiltration"),
            CredentialWeight::DotEnv => (Severity::High, "detonation.dotenv_then_network"),
            CredentialWeight::ToolConfiguration => {
                (Severity::Low, "detonation.tool_configuration_then_network")
            }
        };
        out.push(finding(
            run,
            Category::Exfiltration,
            severity,
            rule,
            format!("{} then {}", credentials.join(", "), describe(first)),
            "when run, the script read credentials and then tried to reach the network".into(),
        ));
    }
    for o in &run.observations {
        match o {
            Observation::DnsLookup {
                name,
                carries_decoy: true,
            } => out.push(finding(
                run,
                Category::Exfiltration,
                Severity::Critical,
                "detonation.exfiltration",
                format!("DNS lookup of {name}"),
                "when run, the script sent a planted credential out in a DNS name".into(),
            )),
            Observation::Send {
                carries_decoy: true,
                ..
            } => out.push(finding(
                run,
                Category::Exfiltration,
                Severity::Critical,
                "detonation.exfiltration",
                describe(o),
                "when run, the script sent a planted credential to the network".into(),
            )),
            Observation::DnsLookup { name, .. } => out.push(finding(
                run,
                Category::Exfiltration,
                Severity::Low,
                "detonation.dns_lookup",
                format!("DNS lookup of {name}"),
                "when run, the script resolved a name (answered with no address)".into(),
            )),
            Observation::Connect {
                family, address, ..
            }
            | Observation::Send {
                family, address, ..
            } if is_network(o) => {
                let severity = if is_loopback(family, address) {
                    Severity::Low
                } else {
                    Severity::Medium
                };
                out.push(finding(
                    run,
                    Category::Exfiltration,
                    severity,
                    "detonation.network_connect",
                    describe(o),
                    "when run, the script tried to reach a network address (refused)".into(),
                ));
            }
            Observation::CredentialRead { path, decoy } => {
                let severity = match (credential_weight(path), decoy) {
                    (CredentialWeight::Secret, _) | (_, false) => Severity::High,
                    _ => Severity::Low,
                };
                let message = if *decoy {
                    "when run, the script opened a credential file (a planted decoy)"
                } else {
                    "when run, the script tried to open a credential file outside its scratch directory (refused)"
                };
                out.push(finding(
                    run,
                    Category::CredentialAccess,
                    severity,
                    "detonation.credential_read",
                    path.clone(),
                    message.into(),
                ));
            }
            Observation::WriteOutsideScratch { path } => {
                let (category, severity) = write_weight(path);
                out.push(finding(
                    run,
                    category,
                    severity,
                    "detonation.write_outside_scratch",
                    path.clone(),
                    "when run, the script tried to write outside its scratch directory (refused)"
                        .into(),
                ));
            }
            Observation::ProgramStarted {
                path,
                argv,
                dropped,
                ..
            } => {
                let evidence = format!(
                    "{path} {}",
                    argv.iter().skip(1).cloned().collect::<Vec<_>>().join(" ")
                );
                if *dropped {
                    out.push(finding(
                        run,
                        Category::DangerousCommand,
                        Severity::High,
                        "detonation.dropped_executable",
                        evidence,
                        "when run, the script started a file it had written".into(),
                    ));
                } else {
                    out.push(finding(
                        run,
                        Category::DangerousCommand,
                        Severity::Info,
                        "detonation.program_started",
                        evidence,
                        "when run, the script started a program".into(),
                    ));
                }
            }
            _ => {}
        }
    }
    if run.observations_dropped > 0 {
        out.push(finding(
            run,
            Category::DangerousCommand,
            Severity::Low,
            "detonation.flood",
            format!("{} more observations", run.observations_dropped),
            "when run, the script made more observable calls than are kept".into(),
        ));
    }
    out
}

/// Where a refused write points: start-up and scheduler files are persistence; system and
/// other users' paths are high; the shared temporary directories low.
fn write_weight(path: &str) -> (Category, Severity) {
    const PERSIST: &[&str] = &[
        "/etc/cron",
        "/var/spool/cron",
        "/etc/systemd",
        "/etc/profile",
        "/etc/rc",
        "/etc/init",
        "/etc/sudoers",
        "/etc/ld.so.preload",
    ];
    let name = path.rsplit('/').next().unwrap_or(path);
    let startup = [
        ".bashrc",
        ".profile",
        ".bash_profile",
        ".zshrc",
        "authorized_keys",
    ];
    if PERSIST.iter().any(|p| path.starts_with(p)) || startup.contains(&name) {
        return (Category::Persistence, Severity::High);
    }
    if path.starts_with("/tmp/") || path.starts_with("/var/tmp/") || path.starts_with("/dev/shm/") {
        return (Category::DangerousCommand, Severity::Low);
    }
    let system = [
        "/etc/", "/usr/", "/bin/", "/sbin/", "/lib", "/boot/", "/root/", "/home/", "/var/",
        "/opt/", "/srv/", "/proc/", "/sys/",
    ];
    if system.iter().any(|p| path.starts_with(p)) {
        return (Category::DangerousCommand, Severity::High);
    }
    (Category::DangerousCommand, Severity::Medium)
}

fn describe(o: &Observation) -> String {
    match o {
        Observation::Connect {
            family,
            address,
            port,
        } => format!("connect to {address} port {port} ({family})"),
        Observation::Send {
            family,
            address,
            port,
            ..
        } => format!("datagram to {address} port {port} ({family})"),
        Observation::DnsLookup { name, .. } => format!("DNS lookup of {name}"),
        other => format!("{other:?}"),
    }
}

#[cfg(test)]
mod tests;
