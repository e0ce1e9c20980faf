//! Approvals as records: with a [`PermissionStore`] behind its [`Permissions`], the gate
//! keeps every approval it asks for as a pending record, and the yes that lets a step run
//! (or the refusal the host reports) as its decision, so a pending approval survives a
//! restart and an approver's console in another process can list what waits.
//!
//! Threat: an approval workflow that loses what it asked (a restart) or shows a step as
//! waiting after it ran. Guarantee: the record is written before the gate answers (a failed
//! write fails the check, like an unaudited decision); a step allowed with an approval has
//! its record decided approved by that approver before the gate answers `Allow`.
//!
//! [`Permissions`]: crate::Permissions

use skills_store_traits::approvals::{MAX_APPROVAL_REASON_BYTES, NewApproval};
use skills_store_traits::{Error as StoreError, PermissionStore};

use super::{Decision, GateError, PolicyGate, StepRequest};

impl PolicyGate {
    /// Writes what `decision` means for `step`'s approval record.
    pub(super) async fn record_approval(
        &self,
        step: &StepRequest,
        decision: &Decision,
    ) -> Result<(), GateError> {
        let Some(store) = self.permissions.store() else {
            return Ok(());
        };
        let tenant = &step.principal.tenant;
        match decision {
            Decision::AskApproval {
                reason,
                approver_roles,
                rule,
                ..
            } => {
                let mut new = NewApproval::new(
                    step.execution_id.clone(),
                    step.skill.id(),
                    step.principal.user.as_str(),
                    bounded(reason),
                )
                .approver_roles(approver_roles.clone());
                if let Some(rule) = rule {
                    new = new.rule(rule.clone());
                }
                match store.request_approval(tenant, new).await {
                    // Decided already (a refusal reported earlier): this check's answer stands.
                    Ok(_) | Err(StoreError::Conflict { .. }) => Ok(()),
                    Err(e) => Err(e.into()),
                }
            }
            Decision::Allow { .. } => match &step.approval {
                Some(approval) => {
                    decide(
                        store.as_ref(),
                        step,
                        true,
                        Some(approval.approved_by.as_str()),
                    )
                    .await
                }
                None => Ok(()),
            },
            Decision::Deny { .. } => Ok(()),
        }
    }

    /// Records that the approval the gate asked for `step` was refused (`by`: who, when the
    /// host knows): its pending record is decided refused. Nothing without a permission
    /// store, or when no approval is pending for the step's execution.
    ///
    /// # Errors
    ///
    /// [`GateError::Store`] when the store fails.
    pub async fn record_refusal(
        &self,
        step: &StepRequest,
        by: Option<&str>,
    ) -> Result<(), GateError> {
        match self.permissions.store() {
            Some(store) => decide(store.as_ref(), step, false, by).await,
            None => Ok(()),
        }
    }
}

/// Decides the step's pending approval, if one is pending: one store call, a missing or
/// already decided record being nothing to do.
async fn decide(
    store: &dyn PermissionStore,
    step: &StepRequest,
    approved: bool,
    by: Option<&str>,
) -> Result<(), GateError> {
    match store
        .decide_approval(&step.principal.tenant, &step.execution_id, approved, by)
        .await
    {
        Ok(_) | Err(StoreError::NotFound { .. } | StoreError::Conflict { .. }) => Ok(()),
        Err(e) => Err(e.into()),
    }
}

/// The reason cut to what a record holds, on a character boundary.
fn bounded(reason: &str) -> String {
    if reason.len() <= MAX_APPROVAL_REASON_BYTES {
        return reason.to_owned();
    }
    let mut end = MAX_APPROVAL_REASON_BYTES;
    while !reason.is_char_boundary(end) {
        end -= 1;
    }
    reason[..end].to_owned()
}
