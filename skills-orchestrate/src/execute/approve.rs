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
