//! Running a skill by its kind: instruction (the model), native (Rust), script (the
//! sandbox), composite (a nested plan).

use std::sync::Arc;

use async_trait::async_trait;
use skills_catalog::activation::ScriptRun;
use skills_security::approval::{Approvals, SessionScope};
use skills_security::load_skill::{ScriptInput, ScriptRunner};
use skills_security::sandbox::Status;

use super::executor::{Executor, Run};
use super::memory::StepOutput;
use super::native::SkillInput;
use super::record::Trace;
use super::retry::{StepError, StepErrorKind};
use super::skills::{ScriptSpec, SkillDefinition};
use super::step::StepCall;
use super::timer::timeout;
use crate::llm::LlmRequest;
use crate::plan::{Planner, StepSpec};
use crate::progress::{ProgressEvent, ProgressSink};

/// The system prompt of an instruction skill's sub-agent.
pub const SUBAGENT_SYSTEM: &str = "You carry out one step of a larger plan with one skill. Do \
what <task> asks, following <skill_instructions>, using only <input_data>, and answer as \
<output_format> says. Bracketed tokens such as [EMAIL_001] stand for values hidden from you: \
copy them as they are where you need them and never guess what they hide.";

fn unavailable(what: &str) -> StepError {
    StepError::new(StepErrorKind::Unavailable, what)
}

impl Executor {
    pub(super) async fn run_instruction(
        &self,
        skill: &SkillDefinition,
        context: &str,
        trace: &mut Trace,
    ) -> Result<StepOutput, StepError> {
        let Some(llm) = &self.parts.llm else {
            return Err(unavailable(
                "instruction skills need a model and none is configured",
            ));
        };
        let config = self.parts.sandbox_config(skill.trust);
        trace.sandbox_config = serde_json::to_value(&config).unwrap_or_default();
        let limit = skill.timeout.unwrap_or(config.timeout);
        let request =
            LlmRequest::new(context, self.parts.max_output_tokens).system(SUBAGENT_SYSTEM);
        match timeout(self.parts.timer.as_ref(), limit, llm.complete(request)).await {
            None => Err(StepError::new(
                StepErrorKind::Timeout,
                format!("the model gave no answer within {} ms", limit.as_millis()),
            )),
            Some(Err(e)) => Err(StepError::new(StepErrorKind::Model, e.to_string())),
            Some(Ok(answer)) => Ok(StepOutput::from_answer(&answer.text).usage(answer.usage)),
        }
    }

    pub(super) async fn run_native(
        &self,
        call: &StepCall<'_>,
        skill: &SkillDefinition,
        name: &str,
        attempt: u32,
        input: String,
        context: String,
    ) -> Result<StepOutput, StepError> {
        let Some(native) = self.parts.natives.get(name) else {
            return Err(match self.parts.natives.refusal(name) {
                Some(why) => StepError::new(StepErrorKind::Invalid, why),
                None => unavailable(&format!("no native skill is registered as `{name}`")),
            });
        };
        let input = SkillInput {
            step_id: call.step.id.clone(),
            skill_id: skill.id.clone(),
            attempt,
            briefing: call.step.briefing.clone(),
            input,
            context,
            stores: self.parts.natives.stores_for(skill),
        };
        match skill.timeout {
            Some(limit) => timeout(self.parts.timer.as_ref(), limit, native.run(&input))
                .await
                .unwrap_or_else(|| {
                    Err(StepError::new(
                        StepErrorKind::Timeout,
                        format!("no result within {} ms", limit.as_millis()),
                    ))
                }),
            None => native.run(&input).await,
        }
    }

    /// Only a script the instructions reference, approved, in the sandbox. The script gets
    /// its declared arguments and input files and, unless its spec says otherwise, the
    /// step's input (sanitized for its trust, like every step's) on standard input.
    pub(super) async fn run_script(
        &self,
        call: &StepCall<'_>,
        skill: &SkillDefinition,
        script: &ScriptSpec,
        input: &str,
        trace: &mut Trace,
    ) -> Result<StepOutput, StepError> {
        let Some(sandbox) = &self.parts.sandbox else {
            return Err(unavailable(
                "script skills need a sandbox and none is configured",
            ));
        };
        let refuse_all;
        let approvals = match &self.parts.approvals {
            Some(approvals) => approvals.as_ref(),
            None => {
                refuse_all = Approvals::without_channel();
                &refuse_all
            }
        };
        let mut config = self.parts.sandbox_config(skill.trust);
        if let Some(limit) = skill.timeout {
            config = config.with_timeout(limit);
        }
        trace.sandbox_config = serde_json::to_value(&config).unwrap_or_default();
        // The user is part of the session: one user's `yes_in_session` never covers another's
        // run. Without the host's chat the session is this run alone (plan ids repeat).
        let chat = match &call.run.session {
            Some(chat) => format!("{}\u{1f}chat:{chat}", call.run.scope.user),
            None => format!("{}\u{1f}run:{}", call.run.scope.user, call.run.run_id),
        };
        let scope = SessionScope::new(call.run.scope.tenant.as_str(), chat);
        let mut script_input = ScriptInput::new().args(script.args.iter().cloned());
        if script.stdin_input {
            script_input = script_input.stdin(input.as_bytes().to_vec());
        }
        for file in &script.input_files {
            script_input = script_input.file(file.clone());
        }
        let runner = ScriptRunner::new(
            sandbox.as_ref(),
            approvals,
            scope,
            skill.trust,
            &self.parts.scratch_dir,
        )
        .config(config);
        let report = runner
            .run_referenced(
                &skill.id,
                &script.skill_dir,
                &skill.instructions,
                &script.files,
                &script.script,
                &script_input,
            )
            .await
            .map_err(|_| {
                StepError::new(
                    StepErrorKind::Script,
                    format!(
                        "`{}` is not referenced by the skill's instructions",
                        script.script
                    ),
                )
            })?;
        match (&report.outcome, &report.run) {
            (Some(outcome), _) if outcome.succeeded() => {
                Ok(StepOutput::text(outcome.stdout.text.clone()))
            }
            (Some(outcome), _) if outcome.status == Status::Timeout => Err(StepError::new(
                StepErrorKind::Timeout,
                "the script passed its time limit and was stopped",
            )),
            // The script's stderr stays out of the message: it is untrusted and unchecked.
            (_, ScriptRun::Failed { exit_code, .. }) => Err(StepError::new(
                StepErrorKind::Script,
                match exit_code {
                    Some(code) => format!("the script failed with exit code {code}"),
                    None => "the script failed".to_owned(),
                },
            )),
            (_, ScriptRun::NotRun { reason }) => {
                Err(StepError::new(StepErrorKind::Script, reason.clone()))
            }
            _ => Err(StepError::new(
                StepErrorKind::Script,
                "the script did not run",
            )),
        }
    }

    /// The sub-steps as a nested plan on this executor, one level deeper.
    pub(super) async fn run_composite(
        &self,
        call: &StepCall<'_>,
        steps: &[StepSpec],
    ) -> Result<StepOutput, StepError> {
        let depth = call.depth + 1;
        if depth > self.parts.max_depth {
            return Err(StepError::new(
                StepErrorKind::Invalid,
                format!(
                    "composite skills nest deeper than {} levels",
                    self.parts.max_depth
                ),
            ));
        }
        let mut plan = Planner::new()
            .plan(&call.step.briefing, steps.to_vec())
            .await
            .map_err(|e| {
                StepError::new(StepErrorKind::Invalid, format!("the composite's plan: {e}"))
            })?;
        plan.id = format!("{}/{}", call.plan.id, call.step.id);
        let run = Run {
            scope: call.run.scope.clone(),
            input: Self::raw_input(call),
            source: Self::composite_source(call),
            progress: Arc::new(Nested {
                inner: call.run.progress.clone(),
                prefix: call.step.id.clone(),
            }),
            cancel: call.run.cancel.clone(),
            agent: call.run.agent.clone(),
            // The composite step is persisted as one; its sub-steps are not.
            stored_plan: None,
            session: call.run.session.clone(),
            run_id: call.run.run_id,
        };
        let result = self.run_plan(&plan, run, depth).await.map_err(|e| {
            StepError::new(StepErrorKind::Invalid, format!("the composite's plan: {e}"))
        })?;
        if !result.success {
            let failed: Vec<String> = result
                .steps
                .iter()
                .filter(|s| !s.state.succeeded())
                .map(|s| format!("{} {}", s.step_id, s.state.as_str()))
                .collect();
            return Err(StepError::failed(format!(
                "sub-steps did not complete: {}",
                failed.join(", ")
            )));
        }
        let mut output = StepOutput::default().usage(result.usage);
        let mut lines = Vec::new();
        for entry in result.memory() {
            lines.push(format!("{}: {}", entry.step_id, entry.summary));
            output.artifacts.extend(entry.artifacts.iter().cloned());
            output
                .extracted_facts
                .extend(entry.extracted_facts.iter().cloned());
            output
                .next_step_hints
                .extend(entry.next_step_hints.iter().cloned());
        }
        output.text = lines.join("\n");
        Ok(output)
    }
}

/// Shows a nested plan's step events under the composite step (`outer/inner`); its group
/// events would read as the outer plan's, so they are left out.
struct Nested {
    inner: Arc<dyn ProgressSink>,
    prefix: String,
}

#[async_trait]
impl ProgressSink for Nested {
    async fn emit(&self, event: ProgressEvent) {
        let name = |id: String| format!("{}/{id}", self.prefix);
        let event = match event {
            ProgressEvent::StepStarting {
                step_id,
                skill_id,
                attempt,
            } => ProgressEvent::StepStarting {
                step_id: name(step_id),
                skill_id,
                attempt,
            },
            ProgressEvent::StepComplete {
                step_id,
                skill_id,
                summary,
            } => ProgressEvent::StepComplete {
                step_id: name(step_id),
                skill_id,
                summary,
            },
            ProgressEvent::StepFailed {
                step_id,
                skill_id,
                error,
                can_retry,
            } => ProgressEvent::StepFailed {
                step_id: name(step_id),
                skill_id,
                error,
                can_retry,
            },
            ProgressEvent::StepSkipped {
                step_id,
                skill_id,
                reason,
            } => ProgressEvent::StepSkipped {
                step_id: name(step_id),
                skill_id,
                reason,
            },
            _ => return,
        };
        self.inner.emit(event).await;
    }
}
