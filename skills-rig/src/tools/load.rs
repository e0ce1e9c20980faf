//! `load_skill` as one governed door: the content decision on the skill's state now, the
//! step, the run, and the run's true outcome on the audit chain before anything is handed out.
//!
//! Threat: the resolution `SkillTools` holds is a snapshot; a skill disabled, removed,
//! re-trusted or changed since would still be loaded from it, its scripts run with no trace
//! of the decision that let them, and the run recorded (if at all) as a success whatever
//! happened, so the autonomy trust history learns from runs that failed. Guarantee, in
//! order: (1) the skill's state is read at the call (a stored skill's record and files from
//! the store, a repo skill's directory from disk) and `PolicyGate::authorize` decides
//! [`SkillAction::Activate`] on it (the content decision; the run's caps, approvals and
//! community rule are the step's, so a load is counted once), recording the decision before
//! it returns; (2) the step is decided by `PolicyGate::check` (and the approver, when the gate asks), as for the other
//! tools; (3) only then does `ScriptRunner::load_skill` read and run anything; (4) the
//! outcome is recorded — `PolicyGate::complete` for a success or a failure (a script that
//! failed, was refused or could not run, an unreadable instruction or reference file), the
//! trail alone for a person declining the scripts, which is no failure of the skill's; (5)
//! only then is the sanitized result handed out. A refusal at (1) or (2) runs nothing; a
//! state that cannot be read, or a record at (1), (2) or (4) that cannot be written, is a
//! tool error and nothing is handed out (fail closed). The execution record never copies a
//! script's output or standard error: it says which script ended how, and hashes what the
//! model was given.

use std::time::Instant;

use rig_core::tool::{ToolExecutionError, ToolOutput};
use skills_catalog::activation::{ReferenceContent, ScriptRun, render_not_found};
use skills_catalog::{ResolvedSkill, StoredSkill};
use skills_core::{LoadOptions, SKILL_MD, Skill};
use skills_security::audit::{DENIED, error_text, execution_record, sha256_hex};
use skills_security::autonomy::{Outcome, default_risk};
use skills_security::gate::{Access, AccessRequest, Permit, SkillAction, SkillInfo, SkillState};
use skills_security::sandbox::{SandboxConfig, Status};
use skills_security::{Context, LoadedSkill, ScriptRunner, TrustLevel};
use skills_store_traits::audit::AuditRecord;

use super::{LOAD_SKILL, LoadSkillParts, SKILL_CONTENT_SOURCE, SkillTools, check_failed, denied};

/// A skill's state at the call, as the gate is asked about it.
struct Current {
    state: SkillState,
    /// Whether the version holds the `SKILL.md` a load hands out.
    catalogued: bool,
}

/// How a load ended, for its execution record.
enum Ended {
    /// The instructions, every referenced file and every referenced script came through.
    Succeeded,
    /// Something did not: the first failure's code, and every failure, described.
    Failed { code: &'static str, what: String },
    /// A person declined the scripts (and nothing failed): no failure of the skill's.
    Declined { what: String },
}

impl SkillTools {
    /// `load_skill` for `name`; see the module docs.
    pub(super) async fn load(
        &self,
        parts: &LoadSkillParts,
        name: &str,
    ) -> Result<ToolOutput, ToolExecutionError> {
        let skill = self.resolution.find(name);
        let current = match skill {
            Some(skill) => self.current(skill).await?,
            None => None,
        };
        let id = skill.map_or(name, |s| s.id.as_str());
        let permit = self.authorize_load(parts, id, current.as_ref()).await;
        let (skill, current, permit) = match (skill, current, permit) {
            (Some(skill), Some(current), Ok(permit)) => (skill, current, permit),
            // A name the catalog does not have: the decision is recorded, and the model is
            // told what the catalog does have.
            (None, _, Ok(_) | Err(Refusal::Denied(_))) => {
                return Err(ToolExecutionError::refused(render_not_found(
                    &self.resolution,
                    name,
                )));
            }
            (_, _, Err(Refusal::Denied(reason))) => return Err(denied(id, &reason)),
            (_, _, Err(Refusal::Failed(error))) => return Err(error),
            // Granted without a state cannot happen (the gate refuses what is not served);
            // refused all the same rather than loaded from the snapshot.
            (Some(_), None, Ok(_)) => {
                return Err(denied(id, "its current state could not be established"));
            }
        };
        let info = current.state.info.clone();
        let trust = info.trust;
        let execution_id = format!("rig/{LOAD_SKILL}/{id}/{}", skills_store_traits::new_id());
        self.step(info.clone(), execution_id.clone(), LOAD_SKILL)
            .await?;

        // The skill's trust now caps the runner's, so a skill re-trusted downwards since the
        // resolution runs at its new level, never at the snapshot's.
        let runner = ScriptRunner::new(
            parts.sandbox.as_ref(),
            parts.approvals.as_ref(),
            parts.scope.clone(),
            parts.trust.at_most(trust),
            &parts.scratch_root,
        );
        let started = Instant::now();
        let loaded = runner
            .load_skill(&self.resolution, &self.reader(), &skill.id, None)
            .await;
        let elapsed = started.elapsed();
        let mut ended = ended(&loaded);

        // Sanitized before the record, so the record hashes exactly what the model gets.
        let sanitized =
            self.sanitizer
                .begin(execution_id.clone(), trust, None)
                .map(|mut execution| {
                    let text = execution
                        .sanitize_text(&loaded.rendered, &Context::source(SKILL_CONTENT_SOURCE))
                        .text;
                    (text, execution.audit())
                });
        let input_hash = sha256_hex(name.as_bytes());
        let (text, mut record) = match sanitized {
            Ok((text, access)) => {
                let record = execution_record(
                    &access,
                    self.principal.user.clone(),
                    id,
                    &info.path,
                    &input_hash,
                );
                (Some(text), record)
            }
            Err(e) => {
                ended = Ended::Failed {
                    code: "sanitizer",
                    what: format!("the result could not be sanitized: {e}"),
                };
                let mut record = AuditRecord::new(
                    self.principal.user.clone(),
                    id,
                    info.path.as_str(),
                    trust.as_str(),
                    input_hash,
                    false,
                );
                record.id = execution_id.clone();
                (None, record)
            }
        };
        record.skill_version = Some(current.state.digest.clone());
        record.agent_id.clone_from(&self.principal.agent);
        record.trigger_reason = Some(format!(
            "rig {LOAD_SKILL} (decision #{})",
            permit.sequence()
        ));
        record.execution_time_ms = Some(u64::try_from(elapsed.as_millis()).unwrap_or(u64::MAX));
        if loaded.scripts.values().any(|r| r.outcome.is_some()) {
            // The config a script reached the sandbox under: the level it ran at.
            let ran_at = loaded.skill.as_ref().map_or(trust, |s| s.trust);
            record.sandbox_config =
                serde_json::to_value(SandboxConfig::for_trust(ran_at)).unwrap_or_default();
        }
        record.output_hash = text.as_deref().map(|t| sha256_hex(t.as_bytes()));
        let written = match &ended {
            Ended::Succeeded => {
                record.success = true;
                record.error = None;
                self.complete(record, Outcome::Success).await
            }
            Ended::Failed { code, what } => {
                record.success = false;
                record.error = Some(error_text(code, what));
                self.complete(record, Outcome::Failure).await
            }
            Ended::Declined { what } => {
                record.success = false;
                record.error = Some(error_text(DENIED, what));
                // As the orchestrator records a refused step: on the trail, not against the
                // skill's trust history.
                self.gate
                    .trail()
                    .append(&self.principal.tenant, record)
                    .await
                    .map(drop)
                    .map_err(|e| e.to_string())
            }
        };
        if let Err(e) = written {
            return Err(ToolExecutionError::refused(format!(
                "the outcome of loading `{id}` could not be recorded, so nothing is handed out: {e}"
            )));
        }
        match text {
            Some(text) if loaded.activation.is_some() => Ok(ToolOutput::text(text)),
            // The instructions did not come through: the model gets the catalog's error.
            Some(text) => Err(ToolExecutionError::refused(text)),
            None => Err(ToolExecutionError::refused(
                "the sanitizer failed; nothing is handed out",
            )),
        }
    }

    /// Asks the gate whether `id` may be loaded in its `current` state (`None`: not served),
    /// through this chat as the client.
    async fn authorize_load(
        &self,
        parts: &LoadSkillParts,
        id: &str,
        current: Option<&Current>,
    ) -> Result<Permit, Refusal> {
        let mut request =
            AccessRequest::new(self.principal.clone(), SkillAction::Activate, id, SKILL_MD)
                .client(format!("rig:{}/{}", parts.scope.world, parts.scope.chat));
        if let Some(current) = current {
            request = request
                .state(current.state.clone())
                .catalogued(current.catalogued);
        }
        match self.gate.authorize(&request).await {
            Ok(Access::Granted(permit)) => Ok(permit),
            Ok(Access::Denied { reason, .. }) => Err(Refusal::Denied(reason)),
            Err(e) => Err(Refusal::Failed(check_failed(&e))),
        }
    }

    /// The skill's state at the call: a stored skill's record and files from the store
    /// (`None` when it is gone or no store is set, so nothing can be read for it), a repo
    /// skill's directory as it is on disk (`None` when it no longer loads). Trust is what
    /// the record says now (a repo skill carries none: `community`); the digest is
    /// skills-core's over every file's path, size and SHA-256. A store that cannot be read
    /// refuses the call.
    async fn current(&self, skill: &ResolvedSkill) -> Result<Option<Current>, ToolExecutionError> {
        let info = |trust: TrustLevel, category: &str, version: Option<&String>| {
            let info = SkillInfo::new(&skill.id, &skill.source_ref, trust, default_risk(trust))
                .category(category);
            match version {
                Some(version) => info.version(version.as_str()),
                None => info,
            }
        };
        let Some(store_id) = &skill.store_id else {
            let Some(dir) = &skill.absolute_path else {
                return Ok(None);
            };
            // The options discovery defaults to; a directory that no longer loads under
            // them (gone, broken, over the limits) is not served.
            let Ok(on_disk) = Skill::load(dir, &LoadOptions::default()) else {
                return Ok(None);
            };
            let trust = TrustLevel::of_skill(skill.trust_level.as_deref());
            let state = SkillState::new(
                info(trust, &skill.category, skill.version.as_ref()),
                format!("sha256:{}", on_disk.digest()),
            );
            return Ok(Some(Current {
                state,
                catalogued: on_disk.skill_md().is_some(),
            }));
        };
        let Some((store, tenant)) = &self.store else {
            return Ok(None);
        };
        let unreadable = |e: &dyn std::fmt::Display| {
            ToolExecutionError::refused(format!(
                "the state of skill `{}` could not be read: {e}",
                skill.id
            ))
        };
        let record = store
            .find_skill_by_id(tenant, store_id)
            .await
            .map_err(|e| unreadable(&e))?;
        let Some(record) = record else {
            return Ok(None);
        };
        let stored = StoredSkill::with_files(store.as_ref(), tenant, record)
            .await
            .map_err(|e| unreadable(&e))?;
        let record = &stored.record;
        let trust = TrustLevel::of_skill(record.trust_level.as_deref());
        let state = SkillState::new(
            info(trust, &record.category, record.version.as_ref()),
            format!("sha256:{}", stored.digest()),
        )
        .enabled(record.enabled);
        // A stored skill's `SKILL.md` is its record's content, always there.
        Ok(Some(Current {
            state,
            catalogued: true,
        }))
    }

    /// The run's record through the gate: appended, and its outcome given to autonomy.
    async fn complete(&self, record: AuditRecord, outcome: Outcome) -> Result<(), String> {
        self.gate
            .complete(&self.principal, record, outcome)
            .await
            .map(drop)
            .map_err(|e| e.to_string())
    }
}

/// Why the gate did not grant a load.
enum Refusal {
    /// It decided no, with this reason.
    Denied(String),
    /// It could not decide or record (fail closed).
    Failed(ToolExecutionError),
}

/// How `loaded` ended. Only what the adapter can state without the scripts' own output:
/// which script ended how, which file could not be read.
fn ended(loaded: &LoadedSkill) -> Ended {
    let Some(activation) = &loaded.activation else {
        return Ended::Failed {
            code: "unreadable",
            what: "the skill's instructions could not be read".to_owned(),
        };
    };
    let mut failures: Vec<(&'static str, String)> = Vec::new();
    let mut declined = Vec::new();
    for (path, report) in &loaded.scripts {
        let status = report.outcome.as_ref().map(|o| &o.status);
        if let Some(refused) = &report.refused {
            failures.push(("script_refused", format!("`{path}` was refused: {refused}")));
            continue;
        }
        match (&report.run, status) {
            (ScriptRun::Succeeded { .. }, _) => {}
            (_, Some(Status::SandboxUnavailable { reason })) => failures.push((
                "sandbox_unavailable",
                format!("`{path}` did not run: the sandbox is unavailable: {reason}"),
            )),
            (ScriptRun::Failed { .. }, Some(status)) => {
                failures.push(("script_failed", format!("`{path}` {}", ending(status))));
            }
            (ScriptRun::Failed { .. }, None) => {
                failures.push(("script_failed", format!("`{path}` failed")));
            }
            (ScriptRun::NotRun { reason }, _) => match report.decision {
                Some(decision) if !decision.approved() => {
                    declined.push(format!("`{path}` was not approved ({})", decision.as_str()))
                }
                _ => failures.push(("script_not_run", format!("`{path}` did not run: {reason}"))),
            },
            // A kind of ending this adapter does not know: not a success it can vouch for.
            _ => failures.push(("script_failed", format!("`{path}` did not complete"))),
        }
    }
    for path in &activation.missing_scripts {
        failures.push((
            "missing_script",
            format!("`{path}` is referenced but the skill has no such script"),
        ));
    }
    for (path, content) in &activation.references {
        if let ReferenceContent::Unreadable(why) = content {
            failures.push((
                "unreadable_file",
                format!("`{path}` could not be read: {why}"),
            ));
        }
    }
    if let Some((code, _)) = failures.first() {
        let what = failures
            .iter()
            .map(|(_, what)| what.as_str())
            .collect::<Vec<_>>()
            .join("; ");
        return Ended::Failed { code, what };
    }
    if declined.is_empty() {
        Ended::Succeeded
    } else {
        Ended::Declined {
            what: declined.join("; "),
        }
    }
}

/// How a run that did not succeed ended, in words; the sandbox's own reasons are the host's,
/// never the script's output.
fn ending(status: &Status) -> String {
    match status {
        Status::Success => "succeeded".to_owned(),
        Status::Exit { code } => format!("exited with {code}"),
        Status::Signal { signal } => format!("was killed by signal {signal}"),
        Status::Timeout => "passed its time limit".to_owned(),
        Status::CpuLimit => "passed its CPU limit".to_owned(),
        Status::MemoryLimit => "passed its memory limit".to_owned(),
        Status::FileSizeLimit => "wrote a file over the size limit".to_owned(),
        Status::DiskLimit => "filled its scratch space".to_owned(),
        Status::OutputLimit => "passed the output limit".to_owned(),
        Status::Refused { reason } => format!("was refused by the sandbox: {reason}"),
        Status::SandboxUnavailable { reason } => {
            format!("did not run: the sandbox is unavailable: {reason}")
        }
        Status::LaunchError { reason } => format!("could not be started: {reason}"),
    }
}
