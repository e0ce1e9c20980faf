//! `load_skill` end to end (seed 004): resolve the skill, read `SKILL.md`, find the scripts
//! and references its instructions name, ask a person, run the approved scripts in the
//! sandbox, and render `<skill_context>` with `<active_resources>`.
//!
//! Threat: a model (or a skill) getting a script run that the instructions do not
//! reference, that a person did not approve, that changed after approval, or outside the
//! sandbox; a failure that breaks the caller's loop. Guarantee: only scripts found by
//! [`referenced_files`] in the instructions are considered (seed 004 AD-2a); each is
//! resolved beneath the skill root and hashed ([`resolve_script`]) before the
//! [`Approvals`] gate is asked; only an approved script runs, only through the
//! [`Sandbox`] given here, at the skill's own trust level (what its install decided, capped
//! by the runner's; `community` when it carries none) with that level's sandbox config and
//! the hash pinned (the sandbox refuses a changed file); every failure — missing skill,
//! missing or refused script, declined approval, sandbox error — is a structured result,
//! never a panic or an `Err` the caller must handle.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Serialize;
use skills_catalog::Resolution;
use skills_catalog::activation::{
    Activation, ScriptRun, activate, check_script_referenced, referenced_files, render_activation,
};
use skills_catalog::agent_tools::SkillFileReader;

use crate::allowed_tools::{ActiveSkill, ToolPolicy};
use crate::approval::{ApprovalDecision, ApprovalRequest, ApprovalScript, Approvals, SessionScope};
use crate::gate::SkillInfo;
use crate::permissions::Principal;
use crate::sandbox::{
    InputFile, Outcome, Program, ResolvedScript, Sandbox, SandboxConfig, SandboxRequest,
    ScriptError, Status, resolve_script,
};
use crate::trust::TrustLevel;

/// What happened to one referenced script.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct ScriptReport {
    /// The script's path relative to the skill.
    pub script: String,
    /// SHA-256 when it was resolved.
    pub sha256: Option<String>,
    /// Why it was refused before approval (bad path, symlink, size, interpreter).
    pub refused: Option<ScriptError>,
    /// The approval decision, when one was asked for.
    pub decision: Option<ApprovalDecision>,
    /// The sandbox's outcome, when it was run.
    pub outcome: Option<Outcome>,
    /// What the activation shows.
    #[serde(skip)]
    pub run: ScriptRun,
}

/// The result of [`ScriptRunner::load_skill`].
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct LoadedSkill {
    /// The `<skill_context>` text for the model (a structured error variant when the skill
    /// does not resolve).
    pub rendered: String,
    /// Per referenced script, in path order.
    pub scripts: BTreeMap<String, ScriptReport>,
    /// The activation, when the skill resolved.
    pub activation: Option<Activation>,
    /// The skill as the gate knows it (id, path, category, version, the trust level it ran
    /// at and that level's default risk), when it resolved.
    pub skill: Option<SkillInfo>,
    /// The tool policy its `allowed-tools` declares (undeclared when it has none or did not
    /// resolve): what the gate answers the model's tool calls with while it is active.
    pub tool_policy: ToolPolicy,
    /// The one approval decision for the call's scripts (`None` when none was asked:
    /// no script resolved).
    pub approval: Option<ApprovalDecision>,
}

impl LoadedSkill {
    /// The skill, active for `principal`: what [`GatedTools`](crate::allowed_tools::GatedTools)
    /// checks the model's tool calls against. `None` when the skill did not resolve.
    pub fn activate_for(&self, principal: Principal) -> Option<ActiveSkill> {
        let skill = self.skill.clone()?;
        Some(ActiveSkill::new(principal, skill, self.tool_policy.clone()))
    }
}

/// Scanner findings for a script the person should see (the host's scanner).
pub type Findings<'a> = &'a (dyn Fn(&str, &Path) -> Vec<String> + Send + Sync);

/// Runs a skill's referenced scripts: approval, then the sandbox.
pub struct ScriptRunner<'a> {
    sandbox: &'a dyn Sandbox,
    approvals: &'a Approvals,
    scope: SessionScope,
    trust: TrustLevel,
    repo_trust: Option<TrustLevel>,
    config: SandboxConfig,
    scratch_root: PathBuf,
    findings: Option<Findings<'a>>,
}

impl std::fmt::Debug for ScriptRunner<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ScriptRunner")
            .field("scope", &self.scope)
            .field("trust", &self.trust)
            .field("scratch_root", &self.scratch_root)
            .finish_non_exhaustive()
    }
}

fn run_from_outcome(outcome: &Outcome) -> ScriptRun {
    let detail = |what: &str| {
        let stderr = outcome.stderr.text.trim_end();
        if stderr.is_empty() {
            what.to_owned()
        } else {
            format!("{what}\n{stderr}")
        }
    };
    match &outcome.status {
        Status::Success => ScriptRun::Succeeded {
            stdout: outcome.stdout.text.clone(),
        },
        Status::Timeout => ScriptRun::Failed {
            exit_code: None,
            timed_out: true,
            detail: detail("the script passed its time limit and was stopped"),
        },
        Status::Exit { code } => ScriptRun::Failed {
            exit_code: Some(*code),
            timed_out: false,
            detail: detail(&format!("the script exited with {code}")),
        },
        Status::Signal { signal } => ScriptRun::Failed {
            exit_code: None,
            timed_out: false,
            detail: detail(&format!("the script was killed by signal {signal}")),
        },
        Status::CpuLimit => ScriptRun::Failed {
            exit_code: None,
            timed_out: false,
            detail: detail("the script passed its CPU limit and was stopped"),
        },
        Status::MemoryLimit => ScriptRun::Failed {
            exit_code: outcome.exit_code,
            timed_out: false,
            detail: detail("the script passed its memory limit"),
        },
        Status::FileSizeLimit => ScriptRun::Failed {
            exit_code: outcome.exit_code,
            timed_out: false,
            detail: detail("the script tried to write a file over the size limit"),
        },
        Status::DiskLimit => ScriptRun::Failed {
            exit_code: outcome.exit_code,
            timed_out: false,
            detail: detail("the script filled its scratch space"),
        },
        Status::OutputLimit => ScriptRun::Failed {
            exit_code: None,
            timed_out: false,
            detail: format!(
                "the script's output passed the limit and it was stopped; partial output:\n{}",
                outcome.stdout.text
            ),
        },
        Status::Refused { reason } => ScriptRun::Failed {
            exit_code: None,
            timed_out: false,
            detail: format!("not run: {reason}"),
        },
        Status::SandboxUnavailable { reason } => ScriptRun::NotRun {
            reason: format!("the sandbox is unavailable: {reason}"),
        },
        Status::LaunchError { reason } => ScriptRun::Failed {
            exit_code: None,
            timed_out: false,
            detail: format!("the script could not be started: {reason}"),
        },
    }
}

impl<'a> ScriptRunner<'a> {
    /// A runner in session `scope` at most at `trust`, with seed 000's config for that level;
    /// the sandbox makes each run's scratch directory beneath `scratch_root` (fresh,
    /// unpredictable and exclusive per run, removed after). [`load_skill`](Self::load_skill)
    /// runs a resolved skill at its own level capped by `trust`; [`run_referenced`](Self::run_referenced)
    /// (the host naming the skill's directory itself) at `trust`.
    pub fn new(
        sandbox: &'a dyn Sandbox,
        approvals: &'a Approvals,
        scope: SessionScope,
        trust: TrustLevel,
        scratch_root: impl Into<PathBuf>,
    ) -> ScriptRunner<'a> {
        ScriptRunner {
            sandbox,
            approvals,
            scope,
            trust,
            repo_trust: None,
            config: SandboxConfig::for_trust(trust),
            scratch_root: scratch_root.into(),
            findings: None,
        }
    }

    /// Repo skills (the project's own files, which carry no trust level) run at `level`
    /// (still capped by the runner's level); by default, as community skills.
    pub fn trust_repo_skills(mut self, level: TrustLevel) -> ScriptRunner<'a> {
        self.repo_trust = Some(level);
        self
    }

    /// The level a resolved skill runs at here.
    pub fn trust_of(&self, skill: &skills_catalog::ResolvedSkill) -> TrustLevel {
        let own = match (skill.source, self.repo_trust) {
            (skills_catalog::SkillOrigin::Repo, Some(level)) => level,
            _ => TrustLevel::of_skill(skill.trust_level.as_deref()),
        };
        own.at_most(self.trust)
    }

    /// The config for a run at `trust`: the runner's own at its level, else that level's
    /// seed preset.
    fn config_for(&self, trust: TrustLevel) -> SandboxConfig {
        if trust == self.trust {
            self.config.clone()
        } else {
            SandboxConfig::for_trust(trust)
        }
    }

    /// Replaces the config (the host's choice; nothing a model sends reaches this).
    pub fn config(mut self, config: SandboxConfig) -> ScriptRunner<'a> {
        self.config = config;
        self
    }

    /// Adds scanner findings to approval requests.
    pub fn findings(mut self, findings: Findings<'a>) -> ScriptRunner<'a> {
        self.findings = Some(findings);
        self
    }

    /// Resolves one script beneath the skill root and hashes it; a refusal is a finished
    /// report.
    fn resolve(
        &self,
        dir: &Path,
        script: &str,
        config: &SandboxConfig,
    ) -> Result<(ResolvedScript, ScriptReport), Box<ScriptReport>> {
        let mut report = ScriptReport {
            script: script.to_owned(),
            sha256: None,
            refused: None,
            decision: None,
            outcome: None,
            run: ScriptRun::NotRun {
                reason: String::new(),
            },
        };
        match resolve_script(dir, script, config.max_script_bytes) {
            Ok(resolved) => {
                report.sha256 = Some(resolved.sha256.clone());
                Ok((resolved, report))
            }
            Err(e) => {
                report.run = ScriptRun::Failed {
                    exit_code: None,
                    timed_out: false,
                    detail: format!("refused: {e}"),
                };
                report.refused = Some(e);
                Err(Box::new(report))
            }
        }
    }

    /// What the person sees of one resolved script.
    fn describe(&self, resolved: &ResolvedScript, input: &ScriptInput) -> ApprovalScript {
        let findings = self
            .findings
            .map(|f| f(&resolved.relative, &resolved.path))
            .unwrap_or_default();
        ApprovalScript::new(
            &resolved.path.display().to_string(),
            &resolved.relative,
            &resolved.sha256,
            &resolved.interpreter.display(),
            &input.args,
            &findings,
        )
        .inputs(&input.describe())
    }

    /// Asks once about every resolved script, then runs each (in order) when approved.
    async fn approve_and_run(
        &self,
        (skill, trust): (&str, TrustLevel),
        resolved: Vec<(ResolvedScript, ScriptReport)>,
        input: &ScriptInput,
    ) -> (Option<ApprovalDecision>, Vec<ScriptReport>) {
        if resolved.is_empty() {
            return (None, Vec::new());
        }
        let scripts = resolved
            .iter()
            .map(|(r, _)| self.describe(r, input))
            .collect();
        let request = ApprovalRequest::for_scripts(self.scope.clone(), skill, trust, scripts);
        let decision = self.approvals.decide(&request).await;
        let mut reports = Vec::with_capacity(resolved.len());
        for (script, mut report) in resolved {
            report.decision = Some(decision);
            if !decision.approved() {
                report.run = ScriptRun::NotRun {
                    reason: format!(
                        "not approved ({}); the script was not run",
                        decision.as_str()
                    ),
                };
                reports.push(report);
                continue;
            }
            let request = SandboxRequest {
                program: Program::Script {
                    path: script.relative.clone(),
                    sha256: Some(script.sha256.clone()),
                },
                args: input.args.clone(),
                stdin: input.stdin.clone(),
                skill_dir: script.skill_root.clone(),
                scratch_root: self.scratch_root.clone(),
                keep_scratch: false,
                input_files: input.files.clone(),
                config: self.config_for(trust),
            };
            let outcome = self.sandbox.run(request).await;
            report.run = run_from_outcome(&outcome);
            report.outcome = Some(outcome);
            reports.push(report);
        }
        (Some(decision), reports)
    }

    /// Runs `script` of the skill in `skill_dir` with `input` when its `SKILL.md`
    /// references it (the `run_script` path): otherwise the structured
    /// `unreferenced_script` result. The person is shown the arguments and a description of
    /// the standard input and input files; the sandbox bounds their sizes.
    pub async fn run_referenced(
        &self,
        skill: &str,
        skill_dir: &Path,
        skill_md: &str,
        files: &[String],
        script: &str,
        input: &ScriptInput,
    ) -> Result<ScriptReport, String> {
        let refs = referenced_files(skill_md, files);
        let wanted = script.strip_prefix("./").unwrap_or(script);
        if !refs.scripts.iter().any(|s| s == wanted) {
            return Err(skills_catalog::activation::render_error(
                skill,
                "unreferenced_script",
                "The script is not referenced by the skill's instructions; only scripts the instructions reference can run.",
            ));
        }
        let resolved = match self.resolve(skill_dir, wanted, &self.config_for(self.trust)) {
            Ok(resolved) => resolved,
            Err(report) => return Ok(*report),
        };
        let (_, mut reports) = self
            .approve_and_run((skill, self.trust), vec![resolved], input)
            .await;
        Ok(reports.pop().unwrap_or_else(|| ScriptReport {
            script: wanted.to_owned(),
            sha256: None,
            refused: None,
            decision: None,
            outcome: None,
            run: ScriptRun::NotRun {
                reason: "the script was not run".into(),
            },
        }))
    }

    /// `load_skill`: see the module docs. `skill_dir` is where the skill's files are on
    /// this host (a materialized stored skill); `None` uses a repo skill's own directory.
    /// Every referenced script that resolves is listed in one approval request (seed 004
    /// AD-7); its answer holds for all of them.
    pub async fn load_skill(
        &self,
        resolution: &Resolution,
        reader: &SkillFileReader<'_>,
        skill_name: &str,
        skill_dir: Option<&Path>,
    ) -> LoadedSkill {
        let mut activation = match activate(resolution, reader, skill_name, |_| ScriptRun::NotRun {
            reason: String::new(),
        })
        .await
        {
            Ok(a) => a,
            Err(rendered) => {
                return LoadedSkill {
                    rendered,
                    scripts: BTreeMap::new(),
                    activation: None,
                    skill: None,
                    tool_policy: ToolPolicy::undeclared(),
                    approval: None,
                };
            }
        };
        let resolved = resolution.find(skill_name);
        let dir = skill_dir
            .map(Path::to_path_buf)
            .or_else(|| resolved.and_then(|s| s.absolute_path.clone()));
        // The skill's own level, capped by this runner's (community when it carries none).
        let trust = resolved.map_or(TrustLevel::Community, |s| self.trust_of(s));
        let config = self.config_for(trust);
        let mut scripts = BTreeMap::new();
        let mut runnable = Vec::new();
        let names: Vec<String> = activation.scripts.keys().cloned().collect();
        for script in names {
            if check_script_referenced(&activation, &script).is_err() {
                continue;
            }
            match &dir {
                Some(dir) => match self.resolve(dir, &script, &config) {
                    Ok(resolved) => runnable.push(resolved),
                    Err(report) => {
                        scripts.insert(script, *report);
                    }
                },
                None => {
                    scripts.insert(
                        script.clone(),
                        ScriptReport {
                            script,
                            sha256: None,
                            refused: None,
                            decision: None,
                            outcome: None,
                            run: ScriptRun::NotRun {
                                reason:
                                    "the skill's files are not on this host; scripts cannot run"
                                        .into(),
                            },
                        },
                    );
                }
            }
        }
        let (approval, reports) = self
            .approve_and_run(
                (&activation.skill, trust),
                runnable,
                &ScriptInput::default(),
            )
            .await;
        for report in reports {
            scripts.insert(report.script.clone(), report);
        }
        for (name, report) in &scripts {
            activation.scripts.insert(name.clone(), report.run.clone());
        }
        let tool_policy = ToolPolicy::from_skill_md(&activation.instructions);
        let skill = resolved.map(|s| {
            let mut info = SkillInfo::new(
                s.id.clone(),
                s.source_ref.clone(),
                trust,
                crate::autonomy::default_risk(trust),
            )
            .category(s.category.clone());
            info.version.clone_from(&s.version);
            info
        });
        LoadedSkill {
            rendered: render_activation(&activation),
            scripts,
            activation: Some(activation),
            skill,
            tool_policy,
            approval,
        }
    }
}

/// What a script is given besides its path: arguments, standard input and files staged
/// read-only at `inputs/<name>` in its working directory. Orchestrated script steps pass
/// the step's input, sanitized for the skill's trust, on standard input; the sandbox
/// refuses inputs past [`MAX_ARGS_BYTES`](crate::sandbox::MAX_ARGS_BYTES),
/// [`MAX_STDIN_BYTES`](crate::sandbox::MAX_STDIN_BYTES) or the file limits of
/// [`InputFile`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct ScriptInput {
    /// Arguments, as an array.
    pub args: Vec<String>,
    /// Standard input.
    pub stdin: Vec<u8>,
    /// Files staged read-only.
    pub files: Vec<InputFile>,
}

impl ScriptInput {
    /// No arguments, no input.
    pub fn new() -> ScriptInput {
        ScriptInput::default()
    }

    /// Sets the arguments.
    pub fn args(mut self, args: impl IntoIterator<Item = impl Into<String>>) -> ScriptInput {
        self.args = args.into_iter().map(Into::into).collect();
        self
    }

    /// Sets standard input.
    pub fn stdin(mut self, bytes: impl Into<Vec<u8>>) -> ScriptInput {
        self.stdin = bytes.into();
        self
    }

    /// Adds a file staged at `inputs/<name>`.
    pub fn file(mut self, file: InputFile) -> ScriptInput {
        self.files.push(file);
        self
    }

    /// What the approval request shows of the standard input and files: sizes and
    /// digests, never their content.
    pub fn describe(&self) -> Vec<String> {
        let mut lines = Vec::new();
        if !self.stdin.is_empty() {
            lines.push(format!("stdin: {} bytes", self.stdin.len()));
        }
        for file in &self.files {
            let digest = crate::audit::sha256_hex(&file.bytes);
            lines.push(format!(
                "inputs/{} ({} bytes, sha256 {})",
                file.name,
                file.bytes.len(),
                digest.get(..16).unwrap_or(&digest)
            ));
        }
        lines
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::approval::{ApprovalOption, NonInteractive};
    use crate::sandbox::ScriptedSandbox;
    use std::sync::Arc;

    fn skill_dir() -> tempfile::TempDir {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::create_dir(dir.path().join("scripts")).expect("mkdir");
        std::fs::write(dir.path().join("scripts/a.sh"), "echo a\n").expect("write");
        std::fs::write(dir.path().join("scripts/b.sh"), "echo b\n").expect("write");
        dir
    }

    #[tokio::test]
    async fn only_referenced_scripts_run_and_only_when_approved() {
        let dir = skill_dir();
        let sandbox = ScriptedSandbox::new();
        let approvals = Approvals::new(Arc::new(NonInteractive(ApprovalOption::YesOnce)));
        let scratch = tempfile::tempdir().expect("tempdir");
        let runner = ScriptRunner::new(
            &sandbox,
            &approvals,
            SessionScope::new("w", "c"),
            TrustLevel::User,
            scratch.path(),
        );
        let md = "Run scripts/a.sh.";
        let files = vec!["scripts/a.sh".to_owned(), "scripts/b.sh".to_owned()];
        let report = runner
            .run_referenced(
                "s",
                dir.path(),
                md,
                &files,
                "scripts/a.sh",
                &ScriptInput::new(),
            )
            .await
            .expect("referenced");
        assert_eq!(report.decision, Some(ApprovalDecision::ApprovedOnce));
        assert!(matches!(report.run, ScriptRun::Succeeded { .. }));
        let unreferenced = runner
            .run_referenced(
                "s",
                dir.path(),
                md,
                &files,
                "scripts/b.sh",
                &ScriptInput::new(),
            )
            .await;
        assert!(unreferenced.is_err_and(|e| e.contains("unreferenced_script")));
        assert_eq!(sandbox.requests().len(), 1);
        let no = Approvals::new(Arc::new(NonInteractive::default()));
        let runner = ScriptRunner::new(
            &sandbox,
            &no,
            SessionScope::new("w", "c"),
            TrustLevel::User,
            scratch.path(),
        );
        let report = runner
            .run_referenced(
                "s",
                dir.path(),
                md,
                &files,
                "scripts/a.sh",
                &ScriptInput::new(),
            )
            .await
            .expect("referenced");
        assert_eq!(report.decision, Some(ApprovalDecision::Declined));
        assert!(matches!(report.run, ScriptRun::NotRun { .. }));
        assert_eq!(
            sandbox.requests().len(),
            1,
            "a declined script never reaches the sandbox"
        );
    }

    #[test]
    fn outcomes_map_to_script_runs() {
        let timeout = Outcome::not_started(Status::Timeout);
        assert!(matches!(
            run_from_outcome(&timeout),
            ScriptRun::Failed {
                timed_out: true,
                ..
            }
        ));
        let unavailable = Outcome::not_started(Status::SandboxUnavailable {
            reason: "no Landlock".into(),
        });
        assert!(matches!(
            run_from_outcome(&unavailable),
            ScriptRun::NotRun { .. }
        ));
    }
}
