//! Stored plans and their approval (seed 000 part 6: `/plans/{id}/approve`).
//!
//! With a plan store, [`Orchestrator::execute_task`] stores each plan when it is made
//! (`pending` when it needs approval), records the approver's answer on it (approved or
//! rejected, by whom, when), and runs it under that same record. A host whose approver is
//! a page, not a callback, leaves the orchestrator without a
//! [`PlanApprover`](super::PlanApprover): the task then
//! ends [`OrchestrationStatus::AwaitingApproval`] with the plan stored, and the host later
//! calls [`Orchestrator::approve_plan`] (or [`reject_plan`](Orchestrator::reject_plan)) and
//! [`Orchestrator::run_stored_plan`].
//!
//! Threat: a stored plan running without approval, approved twice or after a refusal, run
//! twice (two calls at once included), or a plan's fate missing from the audit trail. Guarantee: only a pending plan can
//! be approved or rejected; [`run_stored_plan`](Orchestrator::run_stored_plan) runs only a
//! plan that needs no approval or was approved, and never one that already started; every
//! creation, approval, refusal and failed run is appended to the tenant's audit chain (the
//! executor's gate's trail) with the plan's risk level, and a creation or decision whose
//! record cannot be written fails instead of proceeding (a plan whose creation could not be
//! recorded is deleted again). Deciding and running a stored plan hold a claim on it for
//! the call, shared by the orchestrator's clones: a concurrent call on the same plan is
//! refused. Across processes sharing a store this claim does not reach; there the store
//! must claim (the PostgreSQL backend's `FOR UPDATE SKIP LOCKED`). A plan handed to
//! [`Orchestrator::act`] directly is one its caller approved, and is recorded so.

use std::collections::HashSet;
use std::sync::{Arc, Mutex, PoisonError};

use serde_json::json;
use skills_security::TrustLevel;
use skills_security::audit::{PlanEvent, PlanFlag, sha256_hex};
use skills_store_traits::plans::{ApprovalStatus, PlanRecord, PlanUpdate};
use skills_store_traits::{UserId, UserScope};

use super::{OrchestrationResult, OrchestrationStatus, Orchestrator, TaskRun, most_restrictive};
use crate::error::{Error, Result};
use crate::plan::{ExecutionPlan, load_plan, plan_from_record, save_plan};
use crate::select::{RequiredSkill, Selection, SkillAnalysis, Task};

/// Stored plans a call is deciding or running, shared by an orchestrator's clones: a
/// second call on the same plan meanwhile is refused instead of racing the first. (Across
/// processes the store has to claim; see the PostgreSQL backend's issue.)
#[derive(Clone, Default)]
pub(super) struct Claims(Arc<Mutex<HashSet<String>>>);

/// A plan claimed until dropped.
pub(super) struct Claim {
    claims: Claims,
    plan_id: String,
}

impl Claims {
    fn claim(&self, plan_id: &str) -> Result<Claim> {
        let mut held = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        if !held.insert(plan_id.to_owned()) {
            return Err(state(
                plan_id,
                "is being decided or run by another call; try again when it ends",
            ));
        }
        Ok(Claim {
            claims: self.clone(),
            plan_id: plan_id.to_owned(),
        })
    }
}

impl Drop for Claim {
    fn drop(&mut self) {
        let mut held = self.claims.0.lock().unwrap_or_else(PoisonError::into_inner);
        held.remove(&self.plan_id);
    }
}

/// What the orchestrator did with a plan that needs approval.
pub(super) enum Decision {
    /// Run it.
    Approved,
    /// Do not run it (refused, or nobody to ask and nowhere to keep it).
    Refused,
    /// Stored pending, for the host to approve later.
    Awaiting,
}

fn state(plan_id: &str, reason: &str) -> Error {
    Error::PlanState {
        plan_id: plan_id.to_owned(),
        reason: reason.to_owned(),
    }
}

impl Orchestrator {
    /// The least trusted level among the plan's skills (community when unknown): what the
    /// plan's memory context is sanitized for and its audit records name.
    pub(super) async fn plan_trust(&self, plan: &ExecutionPlan) -> Result<TrustLevel> {
        let mut levels = Vec::new();
        for step in &plan.steps {
            let trust = match &self.provider {
                Some(provider) => provider
                    .skill(&step.skill)
                    .await?
                    .map_or(TrustLevel::Community, |s| s.trust),
                None => TrustLevel::Community,
            };
            levels.push(trust);
        }
        Ok(most_restrictive(levels))
    }

    /// Appends a plan's event to the tenant's chain.
    pub(super) async fn audit_plan(
        &self,
        scope: &UserScope,
        plan: &ExecutionPlan,
        stored_id: &str,
        (event, by, why): (PlanEvent, Option<&UserId>, Option<&str>),
    ) -> Result<()> {
        let flag = PlanFlag::new(
            event,
            stored_id,
            plan.risk.as_str(),
            by.map(ToString::to_string),
        );
        let shown = serde_json::to_vec(&plan.display()).unwrap_or_default();
        let trust = self.plan_trust(plan).await?;
        let mut record = flag.record(
            scope.user.clone(),
            trust.as_str(),
            &plan.task,
            &sha256_hex(&shown),
            why,
        );
        record.sandbox_config = json!({"plan_steps": plan.steps.len()});
        self.executor
            .audit_trail()
            .append(&scope.tenant, record)
            .await?;
        Ok(())
    }

    /// Stores a new plan (`pending` when it needs approval) and audits its creation; `None`
    /// without a plan store.
    pub(super) async fn store_created(
        &self,
        plan: &ExecutionPlan,
        run: &TaskRun,
    ) -> Result<Option<PlanRecord>> {
        let Some(store) = &self.plan_store else {
            return Ok(None);
        };
        let record = save_plan(store.as_ref(), &run.scope, plan).await?;
        self.audit_plan(
            &run.scope,
            plan,
            &record.id,
            (PlanEvent::Created, None, None),
        )
        .await?;
        Ok(Some(record))
    }

    /// Asks the approver about a plan that needs approval, and records the answer on the
    /// stored plan (approved or rejected by the run's user, who answered through the
    /// approver) and on the trail.
    pub(super) async fn decide(
        &self,
        task: &Task,
        plan: &ExecutionPlan,
        run: &TaskRun,
        stored: Option<&PlanRecord>,
    ) -> Result<Decision> {
        if !plan.requires_approval {
            return Ok(Decision::Approved);
        }
        if self.approver.is_none() && stored.is_some() {
            return Ok(Decision::Awaiting);
        }
        let approved = self.approve(task, plan, run).await;
        if let Some(record) = stored {
            let user = run.scope.user.clone();
            if approved {
                self.record_decision(
                    &run.scope,
                    plan,
                    &record.id,
                    ApprovalStatus::Approved,
                    &user,
                )
                .await?;
            } else {
                self.record_decision(
                    &run.scope,
                    plan,
                    &record.id,
                    ApprovalStatus::Rejected,
                    &user,
                )
                .await?;
            }
        }
        Ok(if approved {
            Decision::Approved
        } else {
            Decision::Refused
        })
    }

    pub(super) async fn record_decision(
        &self,
        scope: &UserScope,
        plan: &ExecutionPlan,
        plan_id: &str,
        status: ApprovalStatus,
        by: &UserId,
    ) -> Result<PlanRecord> {
        let Some(store) = &self.plan_store else {
            return Err(state(
                plan_id,
                "cannot be decided: no plan store is configured",
            ));
        };
        let event = match status {
            ApprovalStatus::Approved => PlanEvent::Approved,
            _ => PlanEvent::Refused,
        };
        // The trail first: a decision that is not on the record does not happen.
        self.audit_plan(scope, plan, plan_id, (event, Some(by), None))
            .await?;
        Ok(store
            .update_plan(
                scope,
                plan_id,
                PlanUpdate::new().approval(status, Some(by.clone())),
            )
            .await?)
    }

    /// The user's stored plan `plan_id`, checked to be pending approval.
    async fn pending(&self, scope: &UserScope, plan_id: &str) -> Result<ExecutionPlan> {
        let Some(store) = &self.plan_store else {
            return Err(state(
                plan_id,
                "cannot be decided: no plan store is configured",
            ));
        };
        let Some(record) = store.get_plan(scope, plan_id).await? else {
            return Err(state(plan_id, "does not exist for this user"));
        };
        if record.approval_status != Some(ApprovalStatus::Pending) {
            return Err(state(plan_id, "is not pending approval"));
        }
        plan_from_record(&record)
    }

    /// Approves the user's pending plan `plan_id` on behalf of `approver` (seed 000's
    /// `POST /plans/{id}/approve`): recorded on the plan (who, when) and on the audit trail
    /// with its risk level. Run it with [`run_stored_plan`](Self::run_stored_plan).
    ///
    /// The host authenticates: `scope` must be the plan owner's, taken from the
    /// authenticated session (never from the request), and `approver` who is answering.
    /// No roles are checked here (the plan is the user's own task; step approvals the gate
    /// asks for keep their approver roles).
    ///
    /// # Errors
    /// [`Error::PlanState`] when there is no plan store, no such plan for the user, or the
    /// plan is not pending (already approved, rejected, or needing no approval); the
    /// trail's and the store's errors.
    pub async fn approve_plan(
        &self,
        scope: &UserScope,
        plan_id: &str,
        approver: impl Into<UserId>,
    ) -> Result<PlanRecord> {
        let _claim = self.claims.claim(plan_id)?;
        let plan = self.pending(scope, plan_id).await?;
        self.record_decision(
            scope,
            &plan,
            plan_id,
            ApprovalStatus::Approved,
            &approver.into(),
        )
        .await
    }

    /// Rejects the user's pending plan `plan_id` on behalf of `by`; it can never run.
    ///
    /// # Errors
    /// As [`approve_plan`](Self::approve_plan).
    pub async fn reject_plan(
        &self,
        scope: &UserScope,
        plan_id: &str,
        by: impl Into<UserId>,
    ) -> Result<PlanRecord> {
        let _claim = self.claims.claim(plan_id)?;
        let plan = self.pending(scope, plan_id).await?;
        self.record_decision(scope, &plan, plan_id, ApprovalStatus::Rejected, &by.into())
            .await
    }

    /// Runs the stored plan `plan_id` of `run`'s user under its own record (its working
    /// memory, its completion), as [`act`](Self::act) runs a fresh one: memory context,
    /// execution, synthesis, learnings. A plan that needs approval runs only once approved.
    ///
    /// # Errors
    /// [`Error::PlanState`] when there is no plan store or no such plan, when it needs
    /// approval and is not approved, or when it already started; [`Error::Invalid`] when
    /// the stored plan is corrupt; the executor's errors.
    pub async fn run_stored_plan(
        &self,
        plan_id: &str,
        run: TaskRun,
    ) -> Result<OrchestrationResult> {
        let Some(store) = &self.plan_store else {
            return Err(state(plan_id, "cannot run: no plan store is configured"));
        };
        // Held until the run ends: a second call meanwhile is refused, and one after it
        // finds the plan started.
        let _claim = self.claims.claim(plan_id)?;
        let Some(record) = store.get_plan(&run.scope, plan_id).await? else {
            return Err(state(plan_id, "does not exist for this user"));
        };
        if record.approval_required && record.approval_status != Some(ApprovalStatus::Approved) {
            return Err(state(plan_id, "needs approval and is not approved"));
        }
        if record.execution_started_at.is_some() {
            return Err(state(
                plan_id,
                "already started (resume it with the executor's stored-plan run)",
            ));
        }
        let Some((plan, _)) = load_plan(store.as_ref(), &run.scope, plan_id).await? else {
            return Err(state(plan_id, "does not exist for this user"));
        };
        let task = Task::new(plan.task.clone());
        let mut analysis = SkillAnalysis {
            skills_needed: true,
            ..SkillAnalysis::default()
        };
        for step in &plan.steps {
            analysis.required_skills.push(RequiredSkill {
                skill_id: step.skill.clone(),
                reason: "stored plan".into(),
                critical: true,
            });
        }
        let selection = Selection::from_analysis(analysis);
        self.act_on(&task, selection, plan, &run, Some(record.id))
            .await
    }
}

/// The result of a plan left pending for the host to approve.
pub(super) fn awaiting(
    selection: Selection,
    plan: ExecutionPlan,
    id: String,
) -> OrchestrationResult {
    let mut result = OrchestrationResult::without_run(
        selection,
        OrchestrationStatus::AwaitingApproval,
        "The plan is stored and awaits approval",
    );
    result.plan = Some(plan);
    result.stored_plan_id = Some(id);
    result
}
