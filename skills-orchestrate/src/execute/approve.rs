//! Asking a person when the policy gate wants an approval for a step.
//!
//! Threat: a step running without the approval the gate asked for, or an approval obtained
//! for one execution reused for another. Guarantee: the executor only ever builds the
//! approval it passes back to the gate itself, naming the very execution the gate was asked
//! about, from the approver's yes; no approver, a refusal or an approver that gives no
//! answer fails the step as denied. The gate is asked again with the approval, so its own
//! checks (the approver is not the requester, holds a role the rule names in the gate's
//! directory; rate limits) still decide: an approver's roles never travel in the answer.

use async_trait::async_trait;
use serde::Serialize;
use skills_security::gate::ApprovalOption;
use skills_store_traits::UserId;

/// What the approver is asked.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct ApprovalPrompt {
    /// The plan step.
    pub step_id: String,
    /// The skill.
    pub skill_id: String,
    /// The execution the approval will be for.
    pub execution_id: String,
    /// The step's briefing.
    pub briefing: String,
    /// The gate's reason.
    pub reason: String,
    /// The answers the gate offers.
    pub options: Vec<ApprovalOption>,
    /// Who may approve (empty: the user).
    pub approver_roles: Vec<String>,
    /// Whether the step would see regulated data (a yes then also approves that).
    pub regulated: bool,
}

impl ApprovalPrompt {
    /// A prompt for `execution_id` of `skill_id` (step `step_id`), asked because of `reason`;
    /// no briefing, no options, anyone may approve, no regulated data.
    pub fn new(
        step_id: impl Into<String>,
        skill_id: impl Into<String>,
        execution_id: impl Into<String>,
        reason: impl Into<String>,
    ) -> Self {
        ApprovalPrompt {
            step_id: step_id.into(),
            skill_id: skill_id.into(),
            execution_id: execution_id.into(),
            briefing: String::new(),
            reason: reason.into(),
            options: Vec::new(),
            approver_roles: Vec::new(),
            regulated: false,
        }
    }

    /// With this briefing.
    #[must_use]
    pub fn briefing(mut self, briefing: impl Into<String>) -> Self {
        self.briefing = briefing.into();
        self
    }

    /// Offering these answers (the gate's).
    #[must_use]
    pub fn options(mut self, options: Vec<ApprovalOption>) -> Self {
        self.options = options;
        self
    }

    /// Approvable by these roles (the gate's).
    #[must_use]
    pub fn approver_roles(mut self, roles: Vec<String>) -> Self {
        self.approver_roles = roles;
        self
    }

    /// Whether the step would see regulated data.
    #[must_use]
    pub fn regulated(mut self, regulated: bool) -> Self {
        self.regulated = regulated;
        self
    }
}

/// The approver's answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub enum ApprovalAnswer {
    /// Yes, by `by`.
    Approved {
        /// Who approved.
        by: UserId,
    },
    /// No.
    Refused,
}

impl ApprovalAnswer {
    /// A yes by `by`.
    pub fn approved(by: impl Into<UserId>) -> Self {
        ApprovalAnswer::Approved { by: by.into() }
    }
}

/// The host's way to ask for a step's approval (a UI prompt, a chat message).
#[async_trait]
pub trait StepApprover: Send + Sync {
    /// Asks; a host that cannot ask answers [`ApprovalAnswer::Refused`].
    async fn approve(&self, prompt: &ApprovalPrompt) -> ApprovalAnswer;
}

/// An approver that always gives the same answer (pipelines, tests). Refuses by default.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FixedApprover(pub ApprovalAnswer);

impl Default for FixedApprover {
    fn default() -> Self {
        FixedApprover(ApprovalAnswer::Refused)
    }
}

#[async_trait]
impl StepApprover for FixedApprover {
    async fn approve(&self, _prompt: &ApprovalPrompt) -> ApprovalAnswer {
        self.0.clone()
    }
}

/// A [`StepApprover`] that asks through seed 004's option runtime: the gate's answers become
/// the request's options (`no` the default, offered even if the gate left it out), the
/// prompt goes out as a `hitl-option-request` in `world`, and whoever answers from any task
/// (`OptionRuntime::submit`) decides.
///
/// Threat: a step approved by nobody in particular (a timeout, a non-interactive runtime,
/// an answer the host could not attribute) or by an answer to another question. Guarantee:
/// only a person's answer, named by the host (`submit(.., Some(user))`), to this very
/// request, choosing an option other than `no`, is a yes, and then by that person (the gate
/// still checks their roles and that they are not the requester); everything else refuses.
///
/// ```
/// use std::sync::Arc;
/// use skills_orchestrate::execute::{OptionApprover, StepApprover};
/// use skills_security::hitl::OptionRuntime;
/// use skills_security::time::ThreadTimer;
///
/// let runtime = Arc::new(OptionRuntime::new(Arc::new(ThreadTimer::new())));
/// let approver: Arc<dyn StepApprover> = Arc::new(OptionApprover::new(runtime, "acme"));
/// # let _ = approver;
/// ```
#[derive(Clone)]
pub struct OptionApprover {
    runtime: std::sync::Arc<skills_security::hitl::OptionRuntime>,
    world: String,
    timeout: Option<std::time::Duration>,
}

impl std::fmt::Debug for OptionApprover {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OptionApprover")
            .field("world", &self.world)
            .field("timeout", &self.timeout)
            .finish_non_exhaustive()
    }
}

impl OptionApprover {
    /// Asks through `runtime`, in `world` (the tenant or workspace the UI shows).
    pub fn new(
        runtime: std::sync::Arc<skills_security::hitl::OptionRuntime>,
        world: impl Into<String>,
    ) -> Self {
        OptionApprover {
            runtime,
            world: world.into(),
            timeout: None,
        }
    }

    /// How long a person has (default: the runtime's, two minutes); then `no`.
    #[must_use]
    pub fn timeout(mut self, timeout: std::time::Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }

    fn request(&self, prompt: &ApprovalPrompt) -> skills_security::hitl::OptionRequest {
        use skills_security::hitl::{OptionChoice, OptionRequest};
        let mut options: Vec<OptionChoice> = prompt
            .options
            .iter()
            .map(|o| OptionChoice::new(o.id.clone(), o.label.clone()))
            .collect();
        if !options.iter().any(|o| o.id == REFUSE) {
            options.push(OptionChoice::new(REFUSE, "No"));
        }
        let who = if prompt.approver_roles.is_empty() {
            String::new()
        } else {
            format!(" (approver: {})", prompt.approver_roles.join(" or "))
        };
        let regulated = if prompt.regulated {
            " It will see regulated data."
        } else {
            ""
        };
        let message = format!(
            "Skill `{}` wants to run step `{}`: {}. Why approval is needed: {}.{regulated}{who}",
            prompt.skill_id, prompt.step_id, prompt.briefing, prompt.reason
        );
        let mut request = OptionRequest::new(
            self.world.clone(),
            format!("Approve skill `{}`?", prompt.skill_id),
            message,
            options,
            REFUSE,
        )
        .context(serde_json::to_value(prompt).unwrap_or(serde_json::Value::Null));
        if let Some(timeout) = self.timeout {
            request = request.timeout(timeout);
        }
        request
    }
}

/// The option that refuses (the gate's and seed 004's id).
const REFUSE: &str = "no";

#[async_trait]
impl StepApprover for OptionApprover {
    async fn approve(&self, prompt: &ApprovalPrompt) -> ApprovalAnswer {
        use skills_security::hitl::AnsweredBy;
        match self.runtime.request(self.request(prompt)).await {
            Ok(answer) if answer.option != REFUSE => match answer.answered_by {
                AnsweredBy::Person { by: Some(by) } if !by.is_empty() => {
                    ApprovalAnswer::approved(by)
                }
                _ => ApprovalAnswer::Refused,
            },
            _ => ApprovalAnswer::Refused,
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::time::Duration;

    use skills_security::gate::ApprovalOption;
    use skills_security::hitl::OptionRuntime;
    use skills_security::time::{ThreadTimer, Timer};

    use super::*;

    fn prompt() -> ApprovalPrompt {
        ApprovalPrompt {
            step_id: "s1".into(),
            skill_id: "pdf-tools".into(),
            execution_id: "exec-1".into(),
            briefing: "extract the text".into(),
            reason: "high risk".into(),
            options: vec![
                ApprovalOption {
                    id: "once".into(),
                    label: "Yes, this time".into(),
                },
                ApprovalOption {
                    id: "no".into(),
                    label: "No".into(),
                },
            ],
            approver_roles: vec![],
            regulated: false,
        }
    }

    fn runtime() -> Arc<OptionRuntime> {
        Arc::new(OptionRuntime::new(Arc::new(ThreadTimer::new())))
    }

    /// Waits for the one pending request of `world` and answers it.
    async fn answer(runtime: &OptionRuntime, world: &str, option: &str, by: Option<&str>) {
        for _ in 0..2_000 {
            if let Some(event) = runtime.pending(world).first() {
                match runtime.submit(world, &event.request_id, option, by) {
                    Ok(()) => {}
                    // The runtime refuses an answer nobody is named for (the question
                    // still waits); a named `no` then ends it.
                    Err(skills_security::hitl::HitlError::Unidentified { .. }) => runtime
                        .submit(world, &event.request_id, "no", Some("bob"))
                        .unwrap_or_else(|e| panic!("submit: {e}")),
                    Err(e) => panic!("submit: {e}"),
                }
                return;
            }
            ThreadTimer::new().sleep(Duration::from_millis(1)).await;
        }
        panic!("no request was asked");
    }

    #[test]
    fn a_named_yes_approves_as_that_person() {
        let runtime = runtime();
        let approver = OptionApprover::new(runtime.clone(), "acme");
        let (got, ()) = futures::executor::block_on(futures::future::join(
            approver.approve(&prompt()),
            answer(&runtime, "acme", "once", Some("bob")),
        ));
        assert_eq!(got, ApprovalAnswer::approved("bob"));
    }

    #[test]
    fn no_an_anonymous_yes_a_timeout_and_a_non_interactive_runtime_refuse() {
        let runtime = runtime();
        let approver = OptionApprover::new(runtime.clone(), "acme");
        for (option, by) in [("no", Some("bob")), ("once", None), ("once", Some(""))] {
            let (got, ()) = futures::executor::block_on(futures::future::join(
                approver.approve(&prompt()),
                answer(&runtime, "acme", option, by),
            ));
            assert_eq!(got, ApprovalAnswer::Refused, "{option} by {by:?}");
        }
        let timed_out = OptionApprover::new(runtime, "acme").timeout(Duration::from_millis(5));
        assert_eq!(
            futures::executor::block_on(timed_out.approve(&prompt())),
            ApprovalAnswer::Refused
        );
        let batch = OptionApprover::new(
            Arc::new(OptionRuntime::new(Arc::new(ThreadTimer::new())).non_interactive()),
            "acme",
        );
        assert_eq!(
            futures::executor::block_on(batch.approve(&prompt())),
            ApprovalAnswer::Refused
        );
    }

    #[test]
    fn the_request_offers_the_gates_answers_and_defaults_to_no() {
        let mut without_no = prompt();
        without_no.options.retain(|o| o.id != "no");
        let request = OptionApprover::new(runtime(), "acme").request(&without_no);
        let ids: Vec<&str> = request.options.iter().map(|o| o.id.as_str()).collect();
        assert_eq!(ids, ["once", "no"]);
        assert_eq!(request.default_option, "no");
        assert!(request.message.contains("pdf-tools") && request.message.contains("high risk"));
    }
}
