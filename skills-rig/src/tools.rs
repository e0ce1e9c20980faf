//! A resolved catalog as rig tools: `use_skill`, `read_skill_file` and (with
//! [`LoadSkillParts`]) `load_skill`, each call through the host's policy gate for the skill it
//! names (`load_skill`'s content decision, step check and outcome record: `tools/load.rs`).

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use rig_core::message::ToolName;
use rig_core::tool::{DynamicTool, ToolExecutionError, ToolOutput};
use serde_json::Value;
use skills_catalog::Resolution;
use skills_catalog::agent_tools::{
    READ_SKILL_FILE, READ_SKILL_FILE_DESCRIPTION, SkillFileReader, USE_SKILL,
    read_skill_file_schema, use_skill_description, use_skill_schema,
};
use skills_orchestrate::execute::{ApprovalAnswer, ApprovalPrompt, StepApprover};
use skills_security::autonomy::default_risk;
use skills_security::gate::{SkillInfo, StepApproval};
use skills_security::sandbox::Sandbox;
use skills_security::{
    Approvals, Classifier, Context, DataClass, DataType, Decision, PolicyGate, Principal,
    Sanitizer, SessionScope, SourceRule, SourceRules, StepRequest, TrustLevel,
};
use skills_store_traits::{SkillStore, TenantId};

mod load;

/// The source name tool results are classified under: skill text is public as a whole (only
/// what the detectors find in it is hidden).
pub const SKILL_CONTENT_SOURCE: &str = "skill_content";

/// The seed's source rules plus [`SKILL_CONTENT_SOURCE`] as public.
fn default_sanitizer() -> Sanitizer {
    let mut sources = SourceRules::default();
    sources.insert(
        SKILL_CONTENT_SOURCE,
        SourceRule {
            class: DataClass::Public,
            data_type: DataType::GENERAL,
            recorded_as: "skill".to_owned(),
            tokenizable: true,
            retention_days: None,
        },
    );
    Sanitizer::new(Classifier::new().with_sources(sources))
}

/// The name of the `load_skill` tool.
pub const LOAD_SKILL: &str = "load_skill";

/// What `load_skill` needs: the sandbox scripts run in, the approvals that decide them (for
/// the option runtime: `Approvals::new(Arc::new(OptionChannel::new(runtime)))`), the chat the
/// answers belong to, the most trust a skill gets here, and where runs keep scratch files.
#[derive(Clone)]
pub struct LoadSkillParts {
    sandbox: Arc<dyn Sandbox>,
    approvals: Arc<Approvals>,
    scope: SessionScope,
    trust: TrustLevel,
    scratch_root: PathBuf,
}

impl LoadSkillParts {
    /// The parts `ScriptRunner::load_skill` runs with.
    pub fn new(
        sandbox: Arc<dyn Sandbox>,
        approvals: Arc<Approvals>,
        scope: SessionScope,
        trust: TrustLevel,
        scratch_root: impl Into<PathBuf>,
    ) -> Self {
        LoadSkillParts {
            sandbox,
            approvals,
            scope,
            trust,
            scratch_root: scratch_root.into(),
        }
    }
}

/// The catalog's tools for one principal: every call names a skill, and the gate decides
/// for that skill (at the trust level it carries, `community` when none) before anything is
/// read. An `Allow` runs the call; `Deny` refuses it with the gate's reason; `AskApproval`
/// asks the host's [`StepApprover`] (for seed 004's option runtime:
/// `skills_orchestrate::execute::OptionApprover`) when one is set, and the gate decides again
/// with the approver's yes for this very call (its roles, and that nobody approves their own
/// call, are the gate's checks), and refuses without one; a gate that cannot audit its
/// decision refuses too. (Scripts' approvals are `load_skill`'s own.) `load_skill` also asks
/// the gate's content decision on the skill's state at the call before it reads or runs
/// anything, and records the run's true outcome before it hands anything out
/// ([`SkillTools::load_skill`]). Every result passes the sanitizer at the skill's trust level
/// before the model sees it.
#[derive(Clone)]
pub struct SkillTools {
    resolution: Arc<Resolution>,
    gate: Arc<PolicyGate>,
    principal: Principal,
    sandbox_dir: String,
    calls: Arc<AtomicU64>,
    load: Option<LoadSkillParts>,
    sanitizer: Arc<Sanitizer>,
    approver: Option<Arc<dyn StepApprover>>,
    store: Option<(Arc<dyn SkillStore>, TenantId)>,
}

impl std::fmt::Debug for SkillTools {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SkillTools")
            .field("skills", &self.resolution.skills.len())
            .field("sandbox_dir", &self.sandbox_dir)
            .finish_non_exhaustive()
    }
}

impl SkillTools {
    /// Tools over `resolution` for `principal`, decided by `gate`; `sandbox_dir` is where
    /// `use_skill`'s description says skills are mounted.
    pub fn new(
        resolution: Arc<Resolution>,
        gate: Arc<PolicyGate>,
        principal: Principal,
        sandbox_dir: impl Into<String>,
    ) -> Self {
        SkillTools {
            resolution,
            gate,
            principal,
            sandbox_dir: sandbox_dir.into(),
            calls: Arc::new(AtomicU64::new(0)),
            load: None,
            sanitizer: Arc::new(default_sanitizer()),
            approver: None,
            store: None,
        }
    }

    /// Sanitizes tool results with `sanitizer` (default: the seed's rules with
    /// [`SKILL_CONTENT_SOURCE`] public). Results are classified as from
    /// [`SKILL_CONTENT_SOURCE`]: without a rule for it, the sanitizer's default class applies
    /// to the whole result, and a skill not cleared for it gets one token.
    #[must_use]
    pub fn with_sanitizer(mut self, sanitizer: Sanitizer) -> Self {
        self.sanitizer = Arc::new(sanitizer);
        self
    }

    /// Serves stored skills (those the resolution found in a store) from `store` in
    /// `tenant`, the store being their source of truth; without it only repo skills' files
    /// can be read, and stored ones answer that their content is unavailable.
    #[must_use]
    pub fn with_store(mut self, store: Arc<dyn SkillStore>, tenant: TenantId) -> Self {
        self.store = Some((store, tenant));
        self
    }

    /// The reader for this adapter's skills: the store's when one is set.
    fn reader(&self) -> SkillFileReader<'_> {
        match &self.store {
            Some((store, tenant)) => SkillFileReader::with_store(store.as_ref(), tenant),
            None => SkillFileReader::new(),
        }
    }

    /// Asks `approver` when the gate wants an approval for a call (default: none, and such
    /// calls are refused with the gate's reason).
    #[must_use]
    pub fn with_approver(mut self, approver: Arc<dyn StepApprover>) -> Self {
        self.approver = Some(approver);
        self
    }

    /// Adds the `load_skill` tool, running referenced scripts with `parts`.
    #[must_use]
    pub fn with_load_skill(mut self, parts: LoadSkillParts) -> Self {
        self.load = Some(parts);
        self
    }

    /// The tools, for a rig agent's tool set: `use_skill`, `read_skill_file`, and
    /// `load_skill` when [`SkillTools::with_load_skill`] gave its parts.
    pub fn tools(&self) -> Vec<DynamicTool> {
        [self.use_skill(), self.read_skill_file(), self.load_skill()]
            .into_iter()
            .flatten()
            .collect()
    }

    /// `use_skill`: the skill's listing and its `SKILL.md` text (seed 002's response and
    /// error messages).
    pub fn use_skill(&self) -> Option<DynamicTool> {
        let this = self.clone();
        let name = ToolName::new(USE_SKILL).ok()?;
        Some(DynamicTool::new(
            name,
            use_skill_description(&self.sandbox_dir),
            use_skill_schema(),
            move |args: Value| {
                let this = this.clone();
                Box::pin(async move {
                    let skill_name = string_arg(&args, "skill_name")?;
                    let trust = this.guard(&skill_name, USE_SKILL).await?;
                    let text = this
                        .reader()
                        .use_skill(&this.resolution, &skill_name)
                        .await
                        .map_err(ToolExecutionError::refused)?;
                    Ok(ToolOutput::text(this.clean(&text, trust, USE_SKILL)?))
                })
            },
        ))
    }

    /// `read_skill_file`: a text file of a skill, contained in its directory (repo skills)
    /// or read from the store (stored skills, with [`SkillTools::with_store`]).
    pub fn read_skill_file(&self) -> Option<DynamicTool> {
        let this = self.clone();
        let name = ToolName::new(READ_SKILL_FILE).ok()?;
        Some(DynamicTool::new(
            name,
            READ_SKILL_FILE_DESCRIPTION,
            read_skill_file_schema(),
            move |args: Value| {
                let this = this.clone();
                Box::pin(async move {
                    let skill_name = string_arg(&args, "skill_name")?;
                    let path = string_arg(&args, "path")?;
                    let trust = this.guard(&skill_name, READ_SKILL_FILE).await?;
                    let text = this
                        .reader()
                        .read(&this.resolution, &skill_name, &path)
                        .await
                        .map_err(|e| ToolExecutionError::refused(e.to_string()))?;
                    Ok(ToolOutput::text(this.clean(
                        &text,
                        trust,
                        READ_SKILL_FILE,
                    )?))
                })
            },
        ))
    }

    /// `load_skill`: seed 004's activation (`<skill_context>`): the instructions, the
    /// referenced files, and the output of each referenced script, run in the sandbox after
    /// one approval for the call (asked through the configured [`Approvals`]). `None` without
    /// [`LoadSkillParts`].
    ///
    /// Threat: instructions, files or script output handed to the model for a skill that is
    /// disabled, removed or not permitted now (the resolution is a snapshot), with no trace
    /// of the decision before the scripts ran, or with a run recorded as a success whatever
    /// happened. Guarantee: before anything is read or run, the gate decides
    /// [`SkillAction::Activate`](skills_security::gate::SkillAction::Activate) on the skill's state
    /// read at the call (a stored skill's record in the store, a repo skill's directory on
    /// disk: enabled, trust, version digest) and records it (`PolicyGate::authorize`), and
    /// then decides the step (`PolicyGate::check`, with the approver when it asks); a denial
    /// is a tool error and nothing runs. After the run, its true outcome (success only when
    /// the instructions, every referenced file and every referenced script came through) is
    /// recorded with `PolicyGate::complete`, which also feeds the autonomy trust history; a
    /// person declining the scripts is recorded as `denied` on the trail, not held against
    /// the skill. A record that cannot be written refuses the call: nothing is handed out.
    pub fn load_skill(&self) -> Option<DynamicTool> {
        let parts = self.load.clone()?;
        let this = self.clone();
        let name = ToolName::new(LOAD_SKILL).ok()?;
        Some(DynamicTool::new(
            name,
            "Load a skill: its instructions, the files they reference, and the output of the \
             scripts they reference (each run in a sandbox after approval).",
            use_skill_schema(),
            move |args: Value| {
                let (this, parts) = (this.clone(), parts.clone());
                Box::pin(async move {
                    let skill_name = string_arg(&args, "skill_name")?;
                    this.load(&parts, &skill_name).await
                })
            },
        ))
    }

    /// The gate's decision for the skill `name` names, and its trust level; a name that
    /// resolves to nothing passes (the tool answers with the catalog's not-found message) at
    /// `community`.
    async fn guard(&self, name: &str, tool: &str) -> Result<TrustLevel, ToolExecutionError> {
        match self.resolution.find(name) {
            Some(skill) => {
                let trust = TrustLevel::of_skill(skill.trust_level.as_deref());
                let info = SkillInfo::new(&skill.id, &skill.source_ref, trust, default_risk(trust));
                // Unique beyond this process: a store keeps used approvals across restarts,
                // and a counter alone would repeat an id that already ran.
                let call = skills_store_traits::new_id();
                self.step(info, format!("rig/{tool}/{}#{call}", skill.id), tool)
                    .await?;
                Ok(trust)
            }
            None => Ok(TrustLevel::Community),
        }
    }

    /// `text` through the sanitizer at `trust`: whatever the skill may not see reaches the
    /// model only as tokens (or redacted), never as the value.
    fn clean(
        &self,
        text: &str,
        trust: TrustLevel,
        tool: &str,
    ) -> Result<String, ToolExecutionError> {
        let call = self.calls.fetch_add(1, Ordering::Relaxed);
        let mut execution = self
            .sanitizer
            .begin(format!("rig/{tool}/result#{call}"), trust, None)
            .map_err(|e| ToolExecutionError::refused(format!("the sanitizer failed: {e}")))?;
        Ok(execution
            .sanitize_text(text, &Context::source(SKILL_CONTENT_SOURCE))
            .text)
    }

    /// The gate's decision for the step `execution_id` running the skill `info` describes;
    /// anything but `Allow` (after the approver's yes, when the gate asks) refuses the call.
    async fn step(
        &self,
        info: SkillInfo,
        execution_id: String,
        tool: &str,
    ) -> Result<(), ToolExecutionError> {
        let skill_id = info.id().to_owned();
        let call = self.calls.fetch_add(1, Ordering::Relaxed);
        let mut request = StepRequest::new(self.principal.clone(), info, execution_id.clone());
        request.tool = Some(tool.to_owned());
        let (reason, options, approver_roles) = match self.gate.check(&request).await {
            Ok(Decision::Allow { .. }) => return Ok(()),
            Ok(Decision::AskApproval {
                reason,
                options,
                approver_roles,
                ..
            }) => (reason, options, approver_roles),
            Ok(Decision::Deny { reason, .. }) => return Err(denied(&skill_id, &reason)),
            Err(e) => return Err(check_failed(&e)),
        };
        let Some(approver) = &self.approver else {
            return Err(ToolExecutionError::refused(format!(
                "skill `{}` needs approval: {reason}",
                skill_id
            )));
        };
        let prompt = ApprovalPrompt::new(
            format!("{tool}#{call}"),
            skill_id.clone(),
            execution_id.clone(),
            reason.clone(),
        )
        .briefing(format!("the model calls `{tool}` for skill `{}`", skill_id))
        .options(options)
        .approver_roles(approver_roles);
        let by = match approver.approve(&prompt).await {
            ApprovalAnswer::Approved { by } => by,
            _ => {
                // The gate's approval record (when it keeps them) shows the refusal.
                if let Err(e) = self.gate.record_refusal(&request, None).await {
                    return Err(check_failed(&e));
                }
                return Err(ToolExecutionError::refused(format!(
                    "skill `{}`: approval refused ({reason})",
                    skill_id
                )));
            }
        };
        // The approval names this call's execution; the gate checks who gave it.
        let approval = StepApproval::for_step(&request, by);
        let request = request.with_approval(approval);
        match self.gate.check(&request).await {
            Ok(Decision::Allow { .. }) => Ok(()),
            Ok(Decision::AskApproval { reason, .. }) => Err(ToolExecutionError::refused(format!(
                "skill `{}`: the approval given was not enough: {reason}",
                skill_id
            ))),
            Ok(Decision::Deny { reason, .. }) => Err(denied(&skill_id, &reason)),
            Err(e) => Err(check_failed(&e)),
        }
    }
}

fn denied(skill: &str, reason: &str) -> ToolExecutionError {
    ToolExecutionError::refused(format!("skill `{skill}` is denied: {reason}"))
}

fn check_failed(error: &dyn std::fmt::Display) -> ToolExecutionError {
    ToolExecutionError::refused(format!("the policy check failed: {error}"))
}

fn string_arg(args: &Value, key: &str) -> Result<String, ToolExecutionError> {
    args.get(key)
        .and_then(Value::as_str)
        .map(str::to_owned)
        .ok_or_else(|| {
            ToolExecutionError::new(
                rig_core::tool::ToolErrorKind::InvalidArgs,
                format!("`{key}` must be a string"),
            )
        })
}
