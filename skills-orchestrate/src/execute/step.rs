//! One step: its attempts and retries, and the pipeline each attempt goes through.
//!
//! Threat: a step's skill seeing data above its trust level, handing back data it was not
//! cleared for (or echoing what was hidden from it), or running without the gate's yes.
//! Guarantee, per attempt and in this order: the input is sanitized for the skill's trust
//! level in a vault scoped to this one execution; the gate decides on the classes the input
//! holds before the skill sees anything; the skill sees only the sub-agent envelope; every
//! part of its output (text, artifacts, facts, hints) passes the sanitizer's output check
//! against that vault, or the step fails as a leak, is not retried, and nothing of the
//! output reaches working memory, the store or progress events; every attempt that got as
//! far as resolving its skill leaves an execution record, and a record that cannot be
//! written fails the step (fail closed).

use std::time::Instant;

use skills_security::audit::sha256_hex;
use skills_security::sanitize::Execution;
use skills_security::{Context, DataClass};
use skills_store_traits::plans::{NewStep, StepStatus, StepUpdate};

use super::executor::{Executor, Run};
use super::memory::{
    MemoryEntry, StepOutput, SummaryMode, UNKNOWN_MEMORY_CLASS, truncate_to_tokens,
};
use super::record::Trace;
use super::result::{StepResult, StepState};
use super::retry::{RetryPolicy, StepError, StepErrorKind};
use super::skills::{SkillDefinition, SkillKind};
use super::timer::timeout;
use crate::context::subagent::{SubAgentBrief, subagent_context};
use crate::llm::{LlmRequest, TokenUsage};
use crate::plan::{ExecutionPlan, PlanStep};
use crate::progress::ProgressEvent;

/// One step to run, with what it needs from the run.
pub(super) struct StepCall<'a> {
    pub(super) plan: &'a ExecutionPlan,
    pub(super) step: &'a PlanStep,
    /// The dependencies' working memory, in plan order.
    pub(super) deps: Vec<&'a MemoryEntry>,
    pub(super) run: &'a Run,
    pub(super) nonce: &'a str,
    pub(super) depth: usize,
    /// When the run is persisted: the stored plan's id, and whether the store already has
    /// this step.
    pub(super) stored: Option<(&'a str, bool)>,
}

/// A successful attempt.
pub(super) struct Done {
    /// The checked output, tokens restored for the recipient.
    pub(super) output: String,
    pub(super) memory: MemoryEntry,
}

/// A checked output: every field restored for the recipient, the text also as the skill
/// wrote it (tokens in place), which is what a summarizing model may see.
pub(super) struct Checked {
    pub(super) tokenized: String,
    pub(super) output: StepOutput,
}

impl Executor {
    pub(super) async fn run_step(&self, call: StepCall<'_>) -> StepResult {
        let StepCall { step, run, .. } = &call;
        if run.cancel.is_cancelled() {
            let reason = "execution cancelled".to_owned();
            run.progress
                .emit(ProgressEvent::StepSkipped {
                    step_id: step.id.clone(),
                    skill_id: step.skill.clone(),
                    reason: reason.clone(),
                })
                .await;
            let mut result =
                StepResult::new(&step.id, step.number, &step.skill, StepState::Cancelled);
            let error = StepError::new(StepErrorKind::Cancelled, reason);
            let entry = ended_entry(step, &error);
            self.store_ended(run, call.stored.map(|(id, _)| id), &entry)
                .await;
            result.memory = Some(entry);
            result.error = Some(error);
            return result;
        }
        let started = Instant::now();
        let mut result = StepResult::new(&step.id, step.number, &step.skill, StepState::Failed);
        loop {
            result.attempts += 1;
            let attempt = result.attempts;
            run.progress
                .emit(ProgressEvent::StepStarting {
                    step_id: step.id.clone(),
                    skill_id: step.skill.clone(),
                    attempt,
                })
                .await;
            let (outcome, skill_policy) = match self.mark_running(&call, attempt).await {
                Ok(()) => self.attempt(&call, attempt, &mut result.usage).await,
                Err(error) => (Err(error), None),
            };
            match outcome {
                Ok(done) => {
                    run.progress
                        .emit(ProgressEvent::StepComplete {
                            step_id: step.id.clone(),
                            skill_id: step.skill.clone(),
                            summary: done.memory.summary.clone(),
                        })
                        .await;
                    result.state = StepState::Complete;
                    result.output = Some(done.output);
                    result.memory = Some(done.memory);
                    break;
                }
                Err(error) => {
                    let policy = self.policy(&step.id, skill_policy.as_ref());
                    let again =
                        policy.another_after(attempt, error.kind) && !run.cancel.is_cancelled();
                    run.progress
                        .emit(ProgressEvent::StepFailed {
                            step_id: step.id.clone(),
                            skill_id: step.skill.clone(),
                            error: error.to_string(),
                            can_retry: again,
                        })
                        .await;
                    if !again {
                        let entry = ended_entry(step, &error);
                        self.store_ended(run, call.stored.map(|(id, _)| id), &entry)
                            .await;
                        result.memory = Some(entry);
                        result.error = Some(error);
                        break;
                    }
                    self.parts.timer.sleep(policy.delay(attempt)).await;
                }
            }
        }
        result.duration = started.elapsed();
        result
    }

    fn policy<'p>(&'p self, step_id: &str, skill: Option<&'p RetryPolicy>) -> &'p RetryPolicy {
        self.parts
            .step_retry
            .get(step_id)
            .or(skill)
            .unwrap_or(&self.parts.retry)
    }

    async fn mark_running(&self, call: &StepCall<'_>, attempt: u32) -> Result<(), StepError> {
        let (Some(store), Some((plan_id, exists))) = (self.parts.store.as_deref(), call.stored)
        else {
            return Ok(());
        };
        if attempt > 1 {
            return Ok(());
        }
        let (scope, number) = (&call.run.scope, call.step.number);
        let written = if exists {
            store
                .update_step(
                    scope,
                    plan_id,
                    number,
                    StepUpdate::new().status(StepStatus::Running),
                )
                .await
                .map(drop)
        } else {
            let mut new = NewStep::new(number, call.step.skill.clone());
            new.status = StepStatus::Running;
            store.insert_step(scope, plan_id, new).await.map(drop)
        };
        written.map_err(|e| {
            StepError::new(
                StepErrorKind::Store,
                format!("recording the step failed: {e}"),
            )
        })
    }

    /// Stores the entry of a step that ended without completing (failed, denied, skipped,
    /// cancelled) in the stored plan `plan_id`, if the run is persisted: the running record
    /// is updated, or the entry inserted whole when there is none (the step never started,
    /// or recording it as running failed). Best effort: the step has ended already, and a
    /// stale or missing entry is re-run on resume just like a `failed` one.
    pub(super) async fn store_ended(&self, run: &Run, plan_id: Option<&str>, entry: &MemoryEntry) {
        let (Some(store), Some(plan_id)) = (self.parts.store.as_deref(), plan_id) else {
            return;
        };
        let scope = &run.scope;
        if let Err(skills_store_traits::Error::NotFound { .. }) = store
            .update_step(scope, plan_id, entry.step, entry.update())
            .await
        {
            let _ = store.insert_step(scope, plan_id, entry.new_step()).await;
        }
    }

    /// One attempt: resolve, the pipeline, the execution record, then working memory stored.
    async fn attempt(
        &self,
        call: &StepCall<'_>,
        attempt: u32,
        usage: &mut TokenUsage,
    ) -> (Result<Done, StepError>, Option<RetryPolicy>) {
        let skill = match self.parts.skills.skill(&call.step.skill).await {
            Ok(Some(skill)) => skill,
            Ok(None) => {
                let message = format!("skill `{}` is not available to this agent", call.step.skill);
                return (
                    Err(StepError::new(StepErrorKind::Unavailable, message)),
                    None,
                );
            }
            Err(e) => {
                return (
                    Err(StepError::transient(format!(
                        "the skill provider failed: {e}"
                    ))),
                    None,
                );
            }
        };
        let execution_id = format!("{}/{}/{}#{attempt}", call.plan.id, call.step.id, call.nonce);
        let started = Instant::now();
        let mut trace = Trace::default();
        let before = *usage;
        let outcome = match self
            .parts
            .sanitizer
            .begin(execution_id.clone(), skill.trust, None)
        {
            Ok(mut execution) => {
                let outcome = self
                    .pipeline(
                        call,
                        &skill,
                        (&execution_id, attempt),
                        &mut execution,
                        usage,
                        &mut trace,
                    )
                    .await;
                trace.access = Some(execution.audit());
                trace.usage = TokenUsage {
                    input_tokens: usage.input_tokens.saturating_sub(before.input_tokens),
                    output_tokens: usage.output_tokens.saturating_sub(before.output_tokens),
                };
                outcome
            }
            Err(e) => Err(StepError::new(StepErrorKind::Invalid, e.to_string())),
        };
        // Recorded before it is stored: a step whose record cannot be written must not be
        // reused on resume.
        let outcome = match self
            .record(call, &skill, &trace, started.elapsed(), outcome)
            .await
        {
            Ok(done) => self.persist(call, &done.memory).await.map(|()| done),
            Err(error) => Err(error),
        };
        (outcome, skill.retry.clone())
    }

    /// The task input and the dependencies' working memory, sanitized into `execution`.
    pub(super) fn sanitized_input(
        &self,
        call: &StepCall<'_>,
        execution: &mut Execution<'_>,
    ) -> String {
        let mut parts = Vec::with_capacity(call.deps.len() + 1);
        if !call.run.input.is_empty() {
            let input = execution.sanitize_text(&call.run.input, &call.run.source);
            parts.push(format!("Task input:\n{}", input.text));
        }
        for entry in &call.deps {
            // Each entry at least at the class of what produced it: a value hidden from an
            // earlier step because of where it came from stays hidden from every later step
            // not cleared for that class.
            let memory = Context::default().at_least(entry.data_class);
            parts.push(execution.sanitize_text(&entry.render(), &memory).text);
        }
        parts.join("\n\n")
    }

    /// Where a step's data came from: the run's source when it had task input, and its
    /// dependencies' sources; sorted, without repeats.
    pub(super) fn sources(call: &StepCall<'_>) -> Vec<String> {
        let mut sources: std::collections::BTreeSet<String> = call
            .deps
            .iter()
            .flat_map(|entry| entry.sources.iter().cloned())
            .collect();
        if !call.run.input.is_empty() && !call.run.source.source.is_empty() {
            sources.insert(call.run.source.source.clone());
        }
        sources.into_iter().collect()
    }

    /// The context a composite's sub-steps read their raw input under: the run's source,
    /// raised to the highest class among the dependencies' entries.
    pub(super) fn composite_source(call: &StepCall<'_>) -> Context {
        call.deps
            .iter()
            .map(|entry| entry.data_class)
            .fold(call.run.source.clone(), Context::at_least)
    }

    /// The same input unsanitized, for a composite's sub-steps (each sanitizes for itself,
    /// under [`composite_source`](Self::composite_source)).
    pub(super) fn raw_input(call: &StepCall<'_>) -> String {
        let mut parts = Vec::with_capacity(call.deps.len() + 1);
        if !call.run.input.is_empty() {
            parts.push(call.run.input.clone());
        }
        parts.extend(call.deps.iter().map(|entry| entry.render()));
        parts.join("\n\n")
    }

    async fn pipeline<'s>(
        &'s self,
        call: &StepCall<'_>,
        skill: &SkillDefinition,
        (execution_id, attempt): (&str, u32),
        execution: &mut Execution<'s>,
        usage: &mut TokenUsage,
        trace: &mut Trace,
    ) -> Result<Done, StepError> {
        let mut input = self.sanitized_input(call, execution);
        trace.input_hash = sha256_hex(input.as_bytes());
        self.authorize(call, skill, execution_id, execution, &mut input, trace)
            .await?;
        let brief = SubAgentBrief {
            task: &call.step.briefing,
            instructions: &skill.instructions,
            input: &input,
            output_format: &skill.output_format,
        };
        let context = subagent_context(
            &brief,
            self.parts.budgets.skill_execution,
            self.parts.counter.as_ref(),
        )
        .map_err(|e| StepError::new(StepErrorKind::Invalid, e.to_string()))?;
        let output = match &skill.kind {
            SkillKind::Instruction => self.run_instruction(skill, &context.text, trace).await,
            SkillKind::Native { name } => {
                self.run_native(call, skill, name, attempt, input, context.text)
                    .await
            }
            SkillKind::Script(script) => self.run_script(call, skill, script, &input, trace).await,
            SkillKind::Composite { steps } => self.run_composite(call, steps).await,
        };
        // A failed attempt may still have used tokens (a timeout does not report them).
        let output = output?;
        usage.add(output.usage);
        let checked = if matches!(skill.kind, SkillKind::Composite { .. }) {
            // Sub-steps were each checked against their own vaults; this step saw nothing.
            Checked {
                tokenized: output.text.clone(),
                output,
            }
        } else {
            self.check_output(execution, output)?
        };
        let summary = self.summarize(skill, &checked, execution, usage).await;
        let requested = execution.audit().data_classes_requested;
        let data_class = requested.iter().copied().max().unwrap_or(DataClass::Public);
        // A class the skill saw raw but the recipient may not: the skill may hand its raw
        // values back (the leak check allows what the skill was cleared for).
        let recipient = self.parts.recipient;
        let exposed = requested
            .iter()
            .copied()
            .filter(|c| execution.clearance().allows(*c) && !recipient.allows(*c))
            .max();
        let mut memory = MemoryEntry {
            step: call.step.number,
            step_id: call.step.id.clone(),
            skill_id: skill.id.clone(),
            status: StepStatus::Complete,
            summary,
            artifacts: checked.output.artifacts,
            extracted_facts: checked.output.extracted_facts,
            next_step_hints: checked.output.next_step_hints,
            data_class,
            sources: Self::sources(call),
        };
        let mut output = checked.output.text;
        if let Some(class) = exposed {
            // Nothing of its output leaves the step (result, progress, working memory, the
            // store): the recipient is not cleared for what the skill saw raw.
            let withheld =
                format!("[WITHHELD: this step saw {class} data the recipient is not cleared for]");
            output.clone_from(&withheld);
            memory.summary = withheld;
            memory.artifacts.clear();
            memory.extracted_facts.clear();
            memory.next_step_hints.clear();
        }
        Ok(Done { output, memory })
    }

    /// Step 5 of the sanitizer on every part of the output.
    fn check_output(
        &self,
        execution: &mut Execution<'_>,
        output: StepOutput,
    ) -> Result<Checked, StepError> {
        let recipient = self.parts.recipient;
        let mut check = |text: &str| {
            execution
                .validate_output(text, recipient)
                .map(|checked| checked.text)
                .map_err(|e| StepError::new(StepErrorKind::Leak, e.to_string()))
        };
        let text = check(&output.text)?;
        let artifacts = output
            .artifacts
            .iter()
            .map(|a| check(a))
            .collect::<Result<Vec<_>, _>>()?;
        let mut facts = Vec::with_capacity(output.extracted_facts.len());
        for fact in &output.extracted_facts {
            facts.push(super::memory::ExtractedFact {
                subject: check(&fact.subject)?,
                predicate: check(&fact.predicate)?,
                object: check(&fact.object)?,
            });
        }
        let hints = output
            .next_step_hints
            .iter()
            .map(|h| check(h))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Checked {
            tokenized: output.text,
            output: StepOutput {
                text,
                artifacts,
                extracted_facts: facts,
                next_step_hints: hints,
                usage: output.usage,
            },
        })
    }

    /// The summary within the skill's verbosity: the output itself when it fits, else the
    /// model's summary of the tokenized output (checked and restored like any output), else
    /// a deterministic cut. The summarizing model sees only what the skill wrote, with the
    /// tokens it was given, never restored values.
    async fn summarize(
        &self,
        skill: &SkillDefinition,
        checked: &Checked,
        execution: &mut Execution<'_>,
        usage: &mut TokenUsage,
    ) -> String {
        let max = skill.verbosity.max_tokens();
        let counter = self.parts.counter.as_ref();
        let text = &checked.output.text;
        if counter.count(text) <= max {
            return text.clone();
        }
        // A composite's text is its sub-steps' restored summaries: no model may see it.
        let composite = matches!(skill.kind, SkillKind::Composite { .. });
        if let (SummaryMode::Model, Some(llm), false) =
            (self.parts.summaries, &self.parts.llm, composite)
        {
            let prompt = format!(
                "Summarize the output of one step of a plan for the steps after it, in at most \
                 {max} tokens. Keep names, figures, artifacts and decisions. Copy bracketed \
                 tokens such as [EMAIL_001] exactly.\n\n<step_output>\n{}\n</step_output>",
                checked.tokenized
            );
            let request = LlmRequest::new(prompt, u32::try_from(max).unwrap_or(u32::MAX));
            let limit = skill
                .timeout
                .unwrap_or_else(|| self.parts.sandbox_config(skill.trust).timeout);
            if let Some(Ok(answer)) =
                timeout(self.parts.timer.as_ref(), limit, llm.complete(request)).await
            {
                usage.add(answer.usage);
                if let Ok(summary) = execution.validate_output(&answer.text, self.parts.recipient) {
                    return truncate_to_tokens(&summary.text, max, counter);
                }
            }
        }
        truncate_to_tokens(text, max, counter)
    }

    async fn persist(&self, call: &StepCall<'_>, memory: &MemoryEntry) -> Result<(), StepError> {
        let (Some(store), Some((plan_id, _))) = (self.parts.store.as_deref(), call.stored) else {
            return Ok(());
        };
        let scope = &call.run.scope;
        let written = match store
            .update_step(scope, plan_id, memory.step, memory.update())
            .await
        {
            Ok(_) => Ok(()),
            // Someone removed the running record meanwhile: write it whole.
            Err(skills_store_traits::Error::NotFound { .. }) => store
                .insert_step(scope, plan_id, memory.new_step())
                .await
                .map(drop),
            Err(e) => Err(e),
        };
        written.map_err(|e| {
            StepError::new(
                StepErrorKind::Store,
                format!("storing working memory failed: {e}"),
            )
        })
    }

    /// Whether the input holds regulated data a core skill could be approved to see.
    pub(super) fn regulated(execution: &Execution<'_>, skill: &SkillDefinition) -> bool {
        skill.trust == skills_security::TrustLevel::Core
            && execution
                .audit()
                .data_classes_requested
                .contains(&DataClass::Regulated)
    }
}

/// The working-memory entry of a step that ended with `error`: `denied`, `skipped` and
/// `cancelled` for those kinds, `failed` for every other. Only a failure may carry a skill's
/// own words (a native skill's error), so only its entry is classed as unknown.
pub(super) fn ended_entry(step: &PlanStep, error: &StepError) -> MemoryEntry {
    let (status, class) = match error.kind {
        StepErrorKind::Denied => (StepStatus::Denied, DataClass::Public),
        StepErrorKind::Skipped => (StepStatus::Skipped, DataClass::Public),
        StepErrorKind::Cancelled => (StepStatus::Cancelled, DataClass::Public),
        _ => (StepStatus::Failed, UNKNOWN_MEMORY_CLASS),
    };
    MemoryEntry::ended(
        step.number,
        &step.id,
        &step.skill,
        status,
        error.to_string(),
        class,
    )
}
