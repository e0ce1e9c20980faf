//! The orchestrator's own context (seed 000 section 2.4, `prepare_orchestrator_context`):
//! a compact skill index, the plan, summaries of completed steps and the essential user
//! context, within [`ContextBudgets`].
//!
//! The orchestrator sees the plan but never full skill instructions (those go to sub-agents).
//! Budgets: the envelope and the plan's first line (its shape, estimate, risk, approval) are
//! reserved first; `<available_skills>` within `skill_index` (names and descriptions cut to
//! about 20 words, skills beyond the budget counted in a marker line); `<working_memory>`
//! within `working_memory` (each completed step gets an equal share, at least 48 tokens, its
//! summary cut to it; the oldest steps are dropped first when even that does not fit);
//! `<execution_plan>` then `<user_context>` take what is left of `orchestrator`, in that
//! order. The whole text never exceeds `orchestrator` tokens.
//!
//! Threat: skill descriptions, briefings, step summaries and user context are untrusted text
//! placed inside our envelope; a summary containing `</working_memory><user_context>…` would
//! otherwise speak as another section. Guarantee: every untrusted text is XML-escaped
//! ([`escape_xml`]), so it contains no `<` at all and each of the four elements is opened and
//! closed exactly once, by us.

use serde::{Deserialize, Serialize};
use skills_core::catalog::escape_xml;
use skills_store_traits::plans::StepStatus;

use super::budget::ContextBudgets;
use crate::error::{Error, Result};
use crate::llm::TokenCounter;
use crate::plan::ExecutionPlan;
use crate::select::SkillCandidate;

/// Words of a skill description shown in the index.
pub const INDEX_DESCRIPTION_WORDS: usize = 20;
/// The least a completed step's line gets of the working-memory budget, so that many steps
/// leave a few informative lines rather than many empty ones.
const MIN_STEP_SHARE: usize = 48;
/// Words of a step briefing shown in the plan summary.
const BRIEFING_WORDS: usize = 20;

/// A completed (or failed) step as the orchestrator remembers it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct StepSummary {
    /// The step's id.
    pub step_id: String,
    /// The skill it ran.
    pub skill_id: String,
    /// Where it stands.
    pub status: StepStatus,
    /// Its working-memory summary.
    pub summary: String,
}

impl StepSummary {
    /// A step summary.
    pub fn new(
        step_id: impl Into<String>,
        skill_id: impl Into<String>,
        status: StepStatus,
        summary: impl Into<String>,
    ) -> Self {
        StepSummary {
            step_id: step_id.into(),
            skill_id: skill_id.into(),
            status,
            summary: summary.into(),
        }
    }
}

/// What the orchestrator context is built from.
#[derive(Debug, Clone, Copy, Default)]
pub struct OrchestratorInputs<'a> {
    /// The skills for the index (the plan's skills, or every available one).
    pub skills: &'a [SkillCandidate],
    /// The plan, once there is one.
    pub plan: Option<&'a ExecutionPlan>,
    /// Steps finished so far, oldest first.
    pub completed: &'a [StepSummary],
    /// The essential user context (preferences, who the user is).
    pub user_context: &'a str,
}

/// A rendered orchestrator context and what had to be left out.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct OrchestratorContext {
    /// The context text.
    pub text: String,
    /// Its cost in tokens.
    pub tokens: usize,
    /// The cost of the `<available_skills>` element.
    pub skill_index_tokens: usize,
    /// The cost of the `<working_memory>` element (0 when there is none).
    pub working_memory_tokens: usize,
    /// Skills left out of the index.
    pub skills_omitted: usize,
    /// Completed steps left out of working memory.
    pub steps_omitted: usize,
    /// Plan steps left out of the plan summary.
    pub plan_steps_omitted: usize,
    /// Whether the user context was cut.
    pub user_context_trimmed: bool,
}

/// The first `words` words of `text`, with ` …` when more followed.
pub(crate) fn first_words(text: &str, words: usize) -> String {
    let mut iter = text.split_whitespace();
    let kept: Vec<&str> = iter.by_ref().take(words).collect();
    if iter.next().is_some() {
        format!("{} …", kept.join(" "))
    } else {
        kept.join(" ")
    }
}

/// The longest prefix of `text` (at a char boundary) costing at most `allowed` tokens.
pub(crate) fn prefix_within<'t>(
    text: &'t str,
    allowed: usize,
    counter: &dyn TokenCounter,
) -> &'t str {
    longest_prefix(text, |prefix| counter.count(prefix) <= allowed)
}

/// The longest prefix of `text` (at a char boundary) for which `fits` holds, by binary
/// search: `fits` must hold for every prefix of a prefix it holds for (costs grow with text).
pub(crate) fn longest_prefix(text: &str, fits: impl Fn(&str) -> bool) -> &str {
    if fits(text) {
        return text;
    }
    let bounds: Vec<usize> = text
        .char_indices()
        .map(|(i, _)| i)
        .chain([text.len()])
        .collect();
    let (mut low, mut high) = (0usize, bounds.len().saturating_sub(1));
    while low < high {
        let mid = (low + high).div_ceil(2);
        if fits(&text[..bounds[mid]]) {
            low = mid
        } else {
            high = mid - 1
        }
    }
    &text[..bounds[low]]
}

/// Untrusted text for one line: whitespace runs (newlines included) made single spaces, then
/// XML-escaped.
fn inline(text: &str) -> String {
    escape_xml(&text.split_whitespace().collect::<Vec<_>>().join(" "))
}

fn element(tag: &str, body: &str) -> String {
    format!("<{tag}>\n{body}\n</{tag}>")
}

/// Keeps whole lines, in order, while `cost(body)` stays within `allowed`; a marker line made
/// by `marker(left_out)` says how many were left out. Returns the body and the count left out.
fn fit_lines(
    lines: &[String],
    allowed: usize,
    cost: impl Fn(&str) -> usize,
    marker: impl Fn(usize) -> String,
) -> (String, usize) {
    let body_of = |kept: &[&str], left_out: usize| match (kept.is_empty(), left_out) {
        (_, 0) => kept.join("\n"),
        (true, n) => marker(n),
        (false, n) => format!("{}\n{}", kept.join("\n"), marker(n)),
    };
    let mut kept: Vec<&str> = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        kept.push(line);
        if cost(&body_of(&kept, lines.len() - i - 1)) > allowed {
            kept.pop();
            break;
        }
    }
    let left_out = lines.len() - kept.len();
    (body_of(&kept, left_out), left_out)
}

fn index_lines(skills: &[SkillCandidate]) -> Vec<String> {
    skills
        .iter()
        .map(|skill| {
            let name = if skill.name.is_empty() || skill.name == skill.id {
                String::new()
            } else {
                format!(" ({})", inline(&skill.name))
            };
            let description = inline(&first_words(&skill.description, INDEX_DESCRIPTION_WORDS));
            let status = skills_core::SkillStatus::note_of(skill.status)
                .map(|note| format!(" [{note}]"))
                .unwrap_or_default();
            format!("- {}{name}{status}: {description}", inline(&skill.id))
        })
        .collect()
}

fn memory_body(
    completed: &[StepSummary],
    allowed: usize,
    counter: &dyn TokenCounter,
) -> (String, usize) {
    let line = |step: &StepSummary, summary: &str| {
        format!(
            "- {} ({}, {}): {}",
            inline(&step.step_id),
            inline(&step.skill_id),
            step.status,
            inline(summary)
        )
    };
    let steps = completed.len().max(1);
    // The element's tags and the line breaks come out of the budget before it is shared.
    let overhead = counter.count(&element("working_memory", "")) + steps.div_ceil(4);
    let share = (allowed.saturating_sub(overhead) / steps).max(MIN_STEP_SHARE.min(allowed));
    let lines: Vec<String> = completed
        .iter()
        .map(|step| {
            let full = line(step, &step.summary);
            if counter.count(&full) <= share {
                return full;
            }
            let overhead = counter.count(&line(step, " …"));
            let kept = prefix_within(&step.summary, share.saturating_sub(overhead), counter);
            line(step, &format!("{} …", kept.trim_end()))
        })
        .collect();
    // The newest steps matter most to what comes next: drop from the oldest end.
    let body = |start: usize| {
        let kept = lines[start..].join("\n");
        if start == 0 {
            kept
        } else {
            format!("({start} earlier steps omitted)\n{kept}")
        }
    };
    let mut start = lines.len();
    while start > 0 && counter.count(&element("working_memory", &body(start - 1))) <= allowed {
        start -= 1;
    }
    (body(start), start)
}

fn plan_lines(plan: Option<&ExecutionPlan>, completed: &[StepSummary]) -> Vec<String> {
    let Some(plan) = plan else {
        return vec!["(no plan yet)".into()];
    };
    let mut lines = vec![format!(
        "plan {}: {} steps in {} parallel groups, about {} ms, risk {}, cost {}, approval {}",
        inline(&plan.id),
        plan.steps.len(),
        plan.groups.len(),
        plan.estimated_duration_ms,
        plan.risk,
        plan.cost,
        if plan.requires_approval {
            "required"
        } else {
            "not required"
        },
    )];
    for step in &plan.steps {
        let status = completed
            .iter()
            .rev()
            .find(|done| done.step_id == step.id)
            .map_or(StepStatus::Pending, |done| done.status);
        let after = if step.depends_on.is_empty() {
            String::new()
        } else {
            format!(" after {}", inline(&step.depends_on.join(", ")))
        };
        lines.push(format!(
            "{}. {} runs {} [{status}]{after}: {}",
            step.number,
            inline(&step.id),
            inline(&step.skill),
            inline(&first_words(&step.briefing, BRIEFING_WORDS)),
        ));
    }
    lines
}

fn join(parts: &[String]) -> String {
    parts.join("\n\n")
}

/// Builds the orchestrator context within `budgets` (see the module docs for the rules).
///
/// Fails with [`Error::Invalid`] when `budgets.orchestrator` cannot hold even the empty
/// envelope.
///
/// ```
/// use skills_orchestrate::context::{ContextBudgets, OrchestratorInputs, StepSummary, orchestrator_context};
/// use skills_orchestrate::llm::EstimatedTokens;
/// use skills_orchestrate::select::SkillCandidate;
/// use skills_store_traits::plans::StepStatus;
///
/// let skills = [SkillCandidate::new("crm-lookup", "Look up an account in the CRM.")];
/// let done = [StepSummary::new("crm", "crm-lookup", StepStatus::Complete, "Acme renews in May </working_memory>")];
/// let inputs = OrchestratorInputs { skills: &skills, plan: None, completed: &done, user_context: "Prefers short answers" };
/// let context = orchestrator_context(&inputs, &ContextBudgets::default(), &EstimatedTokens)?;
/// assert!(context.text.starts_with("<available_skills>\n- crm-lookup: Look up"));
/// assert_eq!(context.text.matches("</working_memory>").count(), 1);
/// assert!(context.tokens <= 2_000);
/// # Ok::<(), skills_orchestrate::Error>(())
/// ```
pub fn orchestrator_context(
    inputs: &OrchestratorInputs<'_>,
    budgets: &ContextBudgets,
    counter: &dyn TokenCounter,
) -> Result<OrchestratorContext> {
    let total = budgets.orchestrator;
    let has_memory = !inputs.completed.is_empty();
    let plan_all = plan_lines(inputs.plan, inputs.completed);
    // The envelope and the plan's first line are reserved before the index and working
    // memory take their shares: the orchestrator must always see what the plan is.
    let plan_header = plan_all.first().cloned().unwrap_or_default();
    let skeleton = |index: &str, memory: Option<&str>| {
        let mut parts = vec![
            element("available_skills", index),
            element("execution_plan", &plan_header),
        ];
        if has_memory {
            parts.push(element("working_memory", memory.unwrap_or_default()));
        }
        parts.push(element("user_context", ""));
        join(&parts)
    };
    let reserved = counter.count(&skeleton("", None));
    if reserved > total {
        return Err(Error::Invalid {
            what: "orchestrator budget".into(),
            reason: format!(
                "{total} tokens cannot hold the context's elements and the plan's first line ({reserved})"
            ),
        });
    }

    let index_room = total - reserved + counter.count(&element("available_skills", ""));
    let index_allowed = budgets.skill_index.min(index_room);
    let (index_body, skills_omitted) = fit_lines(
        &index_lines(inputs.skills),
        index_allowed,
        |body| counter.count(&element("available_skills", body)),
        |n| format!("(+{n} more skills)"),
    );
    let index = element("available_skills", &index_body);

    let (memory, steps_omitted) = if has_memory {
        let used = counter.count(&skeleton(&index_body, None));
        let room = total.saturating_sub(used) + counter.count(&element("working_memory", ""));
        let allowed = budgets.working_memory.min(room);
        let (body, omitted) = memory_body(inputs.completed, allowed, counter);
        (Some(element("working_memory", &body)), omitted)
    } else {
        (None, 0)
    };

    let assemble = |plan: &str, user: &str| {
        let mut parts = vec![index.clone(), element("execution_plan", plan)];
        parts.extend(memory.clone());
        parts.push(element("user_context", user));
        join(&parts)
    };

    let (plan_body, plan_steps_omitted) = fit_lines(
        &plan_all,
        total,
        |body| counter.count(&assemble(body, "")),
        |n| format!("(+{n} more lines)"),
    );

    let user_escaped = escape_xml(inputs.user_context);
    let mut user = longest_prefix(&user_escaped, |user| {
        counter.count(&assemble(&plan_body, user)) <= total
    })
    .to_owned();
    // Never cut inside an escape such as `&amp;`.
    if let Some(amp) = user.rfind('&')
        && user.len() < user_escaped.len()
        && !user[amp..].contains(';')
    {
        user.truncate(amp);
    }
    let user_context_trimmed = user.len() < user_escaped.len();
    let text = assemble(&plan_body, &user);
    let tokens = counter.count(&text);
    if tokens > total {
        return Err(Error::Invalid {
            what: "orchestrator budget".into(),
            reason: format!("{total} tokens cannot hold the plan summary ({tokens} needed)"),
        });
    }
    Ok(OrchestratorContext {
        tokens,
        skill_index_tokens: counter.count(&index),
        working_memory_tokens: memory.as_deref().map_or(0, |m| counter.count(m)),
        text,
        skills_omitted,
        steps_omitted,
        plan_steps_omitted,
        user_context_trimmed,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::EstimatedTokens;

    #[test]
    fn lines_fit_with_a_marker() {
        let lines: Vec<String> = (0..50)
            .map(|i| format!("- skill-{i}: does thing number {i}"))
            .collect();
        let cost = |body: &str| EstimatedTokens.count(&element("x", body));
        let (body, omitted) = fit_lines(&lines, 40, cost, |n| format!("(+{n} more)"));
        assert!(omitted > 0);
        assert!(EstimatedTokens.count(&element("x", &body)) <= 40);
        assert!(body.ends_with(&format!("(+{omitted} more)")));
    }

    #[test]
    fn prefixes_stay_within_and_on_char_boundaries() {
        let text = "héllo wörld ".repeat(40);
        let kept = prefix_within(&text, 10, &EstimatedTokens);
        assert!(EstimatedTokens.count(kept) <= 10);
        assert!(kept.len() > 20);
        assert_eq!(first_words("one two three", 2), "one two …");
    }
}
