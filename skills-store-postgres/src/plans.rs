//! [`PlanStore`] on PostgreSQL, and step claims with leases for workers in several
//! processes.
//!
//! **Threat:** two worker processes execute one stored plan; both pick the same pending
//! step and run it twice, or a worker dies in the middle of a step and the plan never
//! finishes. **Guarantee:** [`PostgresStore::claim_step`] takes the next claimable step
//! with `SELECT … FOR UPDATE SKIP LOCKED` and marks it `running` under a lease (the worker's
//! name and an expiry, in the database's clock) in the same transaction: a step is held by
//! one worker at a time, and a concurrent claimer skips it instead of waiting for it. A
//! `running` step whose lease has expired is claimable again, so another process resumes
//! the plan of a worker that was killed. [`PostgresStore::finish_step`] records the outcome
//! only while the worker still holds the lease. A step is run twice only if a live worker
//! outlasts its lease: choose the lease longer than a step takes, or renew it with
//! [`PostgresStore::renew_lease`].

use std::time::Duration;

use async_trait::async_trait;
use skills_store_traits::plans::{
    ApprovalStatus, NewPlan, NewStep, PlanFilter, PlanRecord, PlanStore, PlanUpdate, StepStatus,
    StepUpdate, WorkingMemoryEntry,
};
use skills_store_traits::{Error, Result, Timestamp, UserScope, Violation, new_id};
use tokio_postgres::types::Json;

use crate::PostgresStore;
use crate::db::{Shared, Tx, doc};
use crate::error::Outcome;

const PLAN: &str = "SELECT doc FROM skill_execution_plans \
                    WHERE tenant_id = $1 AND user_id = $2 AND id = $3";
const STEP: &str = "SELECT doc FROM skill_working_memory \
                    WHERE tenant_id = $1 AND user_id = $2 AND plan_id = $3 AND step_number = $4";
/// Milliseconds since the epoch on the database's clock, which every worker shares.
const DB_NOW: &str = "SELECT (EXTRACT(EPOCH FROM clock_timestamp()) * 1000)::BIGINT";

/// A step a worker holds: the entry (now `running`) and when the lease ends.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct ClaimedStep {
    /// The step, marked `running`.
    pub step: WorkingMemoryEntry,
    /// The worker holding it.
    pub worker: String,
    /// When the lease ends (milliseconds since the epoch, database clock); after that
    /// another worker may claim the step.
    pub lease_expires: Timestamp,
}

fn plan_not_found(plan_id: &str) -> Error {
    Error::not_found("plan", plan_id)
}

fn step_not_found(plan_id: &str, step: u32) -> Error {
    Error::not_found("plan step", format!("{plan_id}#{step}"))
}

async fn plan_exists(tx: &Tx, scope: &UserScope, plan_id: &str) -> Outcome<()> {
    let found = tx
        .query_opt(
            "SELECT 1 FROM skill_execution_plans WHERE tenant_id = $1 AND user_id = $2 \
             AND id = $3 FOR KEY SHARE",
            &[&scope.tenant.as_str(), &scope.user.as_str(), &plan_id],
        )
        .await?;
    match found {
        Some(_) => Ok(()),
        None => Err(plan_not_found(plan_id).into()),
    }
}

async fn save_step(tx: &Tx, scope: &UserScope, step: &WorkingMemoryEntry) -> Outcome<()> {
    tx.execute(
        "UPDATE skill_working_memory SET status = $5, doc = $6 \
         WHERE tenant_id = $1 AND user_id = $2 AND plan_id = $3 AND step_number = $4",
        &[
            &scope.tenant.as_str(),
            &scope.user.as_str(),
            &step.plan_id,
            &i64::from(step.step_number),
            &step.status.as_str(),
            &Json(step),
        ],
    )
    .await?;
    Ok(())
}

async fn create_plan(s: Shared, scope: UserScope, plan: NewPlan) -> Outcome<PlanRecord> {
    plan.validate()?;
    let now = s.clock.now();
    let record = record!(PlanRecord {
        "id": new_id(),
        "tenant": scope.tenant.clone(),
        "user": scope.user.clone(),
        "task_description": plan.task_description,
        "skills_planned": plan.skills_planned,
        "dependency_graph": plan.dependency_graph,
        "parallel_groups": plan.parallel_groups,
        "estimated_duration_ms": plan.estimated_duration_ms,
        "estimated_cost_level": plan.estimated_cost_level,
        "risk_level": plan.risk_level,
        "approval_required": plan.approval_required,
        "approval_status": plan.approval_required.then_some(ApprovalStatus::Pending),
        "approved_by": None::<String>,
        "approved_at": None::<i64>,
        "execution_started_at": None::<i64>,
        "execution_completed_at": None::<i64>,
        "success": None::<bool>,
        "created_at": now,
        "updated_at": now,
    });
    let tx = s.begin(scope.tenant.as_str()).await?;
    tx.execute(
        "INSERT INTO skill_execution_plans (tenant_id, user_id, id, created_at, doc) \
         VALUES ($1, $2, $3, $4, $5)",
        &[
            &scope.tenant.as_str(),
            &scope.user.as_str(),
            &record.id,
            &record.created_at,
            &Json(&record),
        ],
    )
    .await?;
    tx.commit().await?;
    Ok(record)
}

async fn get_plan(s: Shared, scope: UserScope, plan_id: String) -> Outcome<Option<PlanRecord>> {
    let tx = s.begin(scope.tenant.as_str()).await?;
    tx.doc_opt(
        PLAN,
        &[&scope.tenant.as_str(), &scope.user.as_str(), &plan_id],
    )
    .await
}

async fn list_plans(s: Shared, scope: UserScope, filter: PlanFilter) -> Outcome<Vec<PlanRecord>> {
    let tx = s.begin(scope.tenant.as_str()).await?;
    let plans: Vec<PlanRecord> = tx
        .docs(
            "SELECT doc FROM skill_execution_plans WHERE tenant_id = $1 AND user_id = $2 \
             ORDER BY created_at, id",
            &[&scope.tenant.as_str(), &scope.user.as_str()],
        )
        .await?;
    Ok(plans
        .into_iter()
        .filter(|plan| filter.matches(plan))
        .take(filter.limit.unwrap_or(usize::MAX))
        .collect())
}

async fn update_plan(
    s: Shared,
    scope: UserScope,
    plan_id: String,
    update: PlanUpdate,
) -> Outcome<PlanRecord> {
    update.validate()?;
    let (t, u) = (scope.tenant.as_str(), scope.user.as_str());
    let tx = s.begin(t).await?;
    let Some(mut plan) = tx
        .doc_opt::<PlanRecord>(&format!("{PLAN} FOR UPDATE"), &[&t, &u, &plan_id])
        .await?
    else {
        return Err(plan_not_found(&plan_id).into());
    };
    update.apply_to(&mut plan, s.clock.now());
    tx.execute(
        "UPDATE skill_execution_plans SET doc = $4 \
         WHERE tenant_id = $1 AND user_id = $2 AND id = $3",
        &[&t, &u, &plan_id, &Json(&plan)],
    )
    .await?;
    tx.commit().await?;
    Ok(plan)
}

async fn delete_plan(s: Shared, scope: UserScope, plan_id: String) -> Outcome<()> {
    let (t, u) = (scope.tenant.as_str(), scope.user.as_str());
    let tx = s.begin(t).await?;
    // The working memory goes with it (ON DELETE CASCADE).
    let deleted = tx
        .execute(
            "DELETE FROM skill_execution_plans WHERE tenant_id = $1 AND user_id = $2 \
             AND id = $3",
            &[&t, &u, &plan_id],
        )
        .await?;
    if deleted == 0 {
        return Err(plan_not_found(&plan_id).into());
    }
    tx.commit().await?;
    Ok(())
}

async fn insert_step(
    s: Shared,
    scope: UserScope,
    plan_id: String,
    step: NewStep,
) -> Outcome<WorkingMemoryEntry> {
    if step.skill_id.is_empty() {
        return Err(Error::invalid("skill_id", Violation::Empty).into());
    }
    let (t, u) = (scope.tenant.as_str(), scope.user.as_str());
    let tx = s.begin(t).await?;
    plan_exists(&tx, &scope, &plan_id).await?;
    let now = s.clock.now();
    let entry = record!(WorkingMemoryEntry {
        "id": new_id(),
        "plan_id": plan_id.clone(),
        "step_number": step.step_number,
        "skill_id": step.skill_id,
        "status": step.status,
        "summary": step.summary,
        "artifacts": step.artifacts,
        "extracted_facts": step.extracted_facts,
        "next_step_hints": step.next_step_hints,
        "data_class": step.data_class,
        "sources": step.sources,
        "created_at": now,
        "updated_at": now,
    });
    let inserted = tx
        .execute(
            "INSERT INTO skill_working_memory \
             (tenant_id, user_id, plan_id, step_number, status, doc) \
             VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT DO NOTHING",
            &[
                &t,
                &u,
                &plan_id,
                &i64::from(entry.step_number),
                &entry.status.as_str(),
                &Json(&entry),
            ],
        )
        .await?;
    if inserted == 0 {
        return Err(
            Error::conflict("plan step", format!("{plan_id}#{}", entry.step_number)).into(),
        );
    }
    tx.commit().await?;
    Ok(entry)
}

async fn update_step(
    s: Shared,
    scope: UserScope,
    plan_id: String,
    number: u32,
    update: StepUpdate,
) -> Outcome<WorkingMemoryEntry> {
    let (t, u) = (scope.tenant.as_str(), scope.user.as_str());
    let tx = s.begin(t).await?;
    plan_exists(&tx, &scope, &plan_id).await?;
    let Some(mut step) = tx
        .doc_opt::<WorkingMemoryEntry>(
            &format!("{STEP} FOR UPDATE"),
            &[&t, &u, &plan_id, &i64::from(number)],
        )
        .await?
    else {
        return Err(step_not_found(&plan_id, number).into());
    };
    update.apply_to(&mut step, s.clock.now());
    save_step(&tx, &scope, &step).await?;
    tx.commit().await?;
    Ok(step)
}

async fn get_step(
    s: Shared,
    scope: UserScope,
    plan_id: String,
    number: u32,
) -> Outcome<Option<WorkingMemoryEntry>> {
    let tx = s.begin(scope.tenant.as_str()).await?;
    tx.doc_opt(
        STEP,
        &[
            &scope.tenant.as_str(),
            &scope.user.as_str(),
            &plan_id,
            &i64::from(number),
        ],
    )
    .await
}

async fn list_steps(
    s: Shared,
    scope: UserScope,
    plan_id: String,
) -> Outcome<Vec<WorkingMemoryEntry>> {
    let tx = s.begin(scope.tenant.as_str()).await?;
    plan_exists(&tx, &scope, &plan_id).await?;
    tx.docs(
        "SELECT doc FROM skill_working_memory WHERE tenant_id = $1 AND user_id = $2 \
         AND plan_id = $3 ORDER BY step_number",
        &[&scope.tenant.as_str(), &scope.user.as_str(), &plan_id],
    )
    .await
}

fn lease_ms(lease: Duration) -> i64 {
    i64::try_from(lease.as_millis()).unwrap_or(i64::MAX / 2)
}

async fn db_now(tx: &Tx) -> Outcome<i64> {
    match tx.query_opt(DB_NOW, &[]).await? {
        Some(row) => Ok(row.try_get(0)?),
        None => Err(Error::backend("the database returned no time").into()),
    }
}

async fn claim_step(
    s: Shared,
    scope: UserScope,
    plan_id: String,
    worker: String,
    lease: Duration,
) -> Outcome<Option<ClaimedStep>> {
    if worker.is_empty() {
        return Err(Error::invalid("worker", Violation::Empty).into());
    }
    let (t, u) = (scope.tenant.as_str(), scope.user.as_str());
    let tx = s.begin(t).await?;
    plan_exists(&tx, &scope, &plan_id).await?;
    let now = db_now(&tx).await?;
    // A row another claimer holds is skipped, not waited for: two claimers never get one
    // step, and neither blocks the other.
    let row = tx
        .query_opt(
            "SELECT doc FROM skill_working_memory WHERE tenant_id = $1 AND user_id = $2 \
             AND plan_id = $3 AND (status = 'pending' \
             OR (status = 'running' AND lease_expires IS NOT NULL AND lease_expires <= $4)) \
             ORDER BY step_number LIMIT 1 FOR UPDATE SKIP LOCKED",
            &[&t, &u, &plan_id, &now],
        )
        .await?;
    let Some(row) = row else {
        return Ok(None);
    };
    let mut step: WorkingMemoryEntry = doc(&row)?;
    StepUpdate::new()
        .status(StepStatus::Running)
        .apply_to(&mut step, s.clock.now());
    let expires = now.saturating_add(lease_ms(lease));
    tx.execute(
        "UPDATE skill_working_memory SET status = $5, doc = $6, lease_owner = $7, \
         lease_expires = $8 \
         WHERE tenant_id = $1 AND user_id = $2 AND plan_id = $3 AND step_number = $4",
        &[
            &t,
            &u,
            &plan_id,
            &i64::from(step.step_number),
            &step.status.as_str(),
            &Json(&step),
            &worker,
            &expires,
        ],
    )
    .await?;
    tx.commit().await?;
    Ok(Some(ClaimedStep {
        step,
        worker,
        lease_expires: expires,
    }))
}

/// Locks the step and checks that `worker` holds its lease; the step.
async fn held_step(
    tx: &Tx,
    scope: &UserScope,
    plan_id: &str,
    number: u32,
    worker: &str,
) -> Outcome<WorkingMemoryEntry> {
    let row = tx
        .query_opt(
            "SELECT doc, lease_owner FROM skill_working_memory WHERE tenant_id = $1 \
             AND user_id = $2 AND plan_id = $3 AND step_number = $4 FOR UPDATE",
            &[
                &scope.tenant.as_str(),
                &scope.user.as_str(),
                &plan_id,
                &i64::from(number),
            ],
        )
        .await?;
    let Some(row) = row else {
        return Err(step_not_found(plan_id, number).into());
    };
    let owner: Option<String> = row.try_get(1)?;
    if owner.as_deref() != Some(worker) {
        return Err(Error::Stale {
            what: "plan step lease",
            expected: worker.to_owned(),
            found: owner.unwrap_or_else(|| "<no lease>".to_owned()),
        }
        .into());
    }
    doc(&row)
}

async fn finish_step(
    s: Shared,
    scope: UserScope,
    plan_id: String,
    number: u32,
    worker: String,
    update: StepUpdate,
) -> Outcome<WorkingMemoryEntry> {
    let tx = s.begin(scope.tenant.as_str()).await?;
    let mut step = held_step(&tx, &scope, &plan_id, number, &worker).await?;
    update.apply_to(&mut step, s.clock.now());
    save_step(&tx, &scope, &step).await?;
    tx.execute(
        "UPDATE skill_working_memory SET lease_owner = NULL, lease_expires = NULL \
         WHERE tenant_id = $1 AND user_id = $2 AND plan_id = $3 AND step_number = $4",
        &[
            &scope.tenant.as_str(),
            &scope.user.as_str(),
            &plan_id,
            &i64::from(number),
        ],
    )
    .await?;
    tx.commit().await?;
    Ok(step)
}

async fn renew_lease(
    s: Shared,
    scope: UserScope,
    plan_id: String,
    number: u32,
    worker: String,
    lease: Duration,
) -> Outcome<Timestamp> {
    let tx = s.begin(scope.tenant.as_str()).await?;
    held_step(&tx, &scope, &plan_id, number, &worker).await?;
    let expires = db_now(&tx).await?.saturating_add(lease_ms(lease));
    tx.execute(
        "UPDATE skill_working_memory SET lease_expires = $5 \
         WHERE tenant_id = $1 AND user_id = $2 AND plan_id = $3 AND step_number = $4",
        &[
            &scope.tenant.as_str(),
            &scope.user.as_str(),
            &plan_id,
            &i64::from(number),
            &expires,
        ],
    )
    .await?;
    tx.commit().await?;
    Ok(expires)
}

impl PostgresStore {
    /// Claims the user's next step of `plan_id` for `worker`: the lowest-numbered step that
    /// is `pending`, or `running` under an expired lease, becomes `running` under a lease
    /// of `lease` held by `worker`. `None` when no step is claimable (all done, or held by
    /// live workers). See the module documentation for the guarantee.
    ///
    /// ```no_run
    /// # use std::time::Duration;
    /// # use skills_store_postgres::{PgOptions, PostgresStore};
    /// # use skills_store_traits::plans::{StepStatus, StepUpdate};
    /// # use skills_store_traits::UserScope;
    /// # futures::executor::block_on(async {
    /// # let store = PostgresStore::open(PgOptions::new("postgres://localhost/skills")).await?;
    /// let alice = UserScope::new("acme", "alice");
    /// # let plan_id = "p";
    /// while let Some(claim) = store.claim_step(&alice, plan_id, "worker-1", Duration::from_secs(60)).await? {
    ///     // ... run claim.step.skill_id ...
    ///     let done = StepUpdate::new().status(StepStatus::Complete);
    ///     store.finish_step(&alice, plan_id, claim.step.step_number, "worker-1", done).await?;
    /// }
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// # }).unwrap();
    /// ```
    pub async fn claim_step(
        &self,
        scope: &UserScope,
        plan_id: &str,
        worker: &str,
        lease: Duration,
    ) -> Result<Option<ClaimedStep>> {
        let task = claim_step(
            self.shared(),
            scope.clone(),
            plan_id.to_owned(),
            worker.to_owned(),
            lease,
        );
        self.call("claim_step", task).await
    }

    /// Applies `update` to a step `worker` holds and releases the lease;
    /// [`Error::Stale`] if the worker no longer holds it (its lease expired and another
    /// worker claimed the step).
    pub async fn finish_step(
        &self,
        scope: &UserScope,
        plan_id: &str,
        step_number: u32,
        worker: &str,
        update: StepUpdate,
    ) -> Result<WorkingMemoryEntry> {
        let task = finish_step(
            self.shared(),
            scope.clone(),
            plan_id.to_owned(),
            step_number,
            worker.to_owned(),
            update,
        );
        self.call("finish_step", task).await
    }

    /// Extends the lease `worker` holds on a step to `lease` from now; the new expiry.
    /// [`Error::Stale`] if the worker no longer holds it.
    pub async fn renew_lease(
        &self,
        scope: &UserScope,
        plan_id: &str,
        step_number: u32,
        worker: &str,
        lease: Duration,
    ) -> Result<Timestamp> {
        let task = renew_lease(
            self.shared(),
            scope.clone(),
            plan_id.to_owned(),
            step_number,
            worker.to_owned(),
            lease,
        );
        self.call("renew_lease", task).await
    }
}

#[async_trait]
impl PlanStore for PostgresStore {
    async fn create_plan(&self, scope: &UserScope, plan: NewPlan) -> Result<PlanRecord> {
        self.call(
            "create_plan",
            create_plan(self.shared(), scope.clone(), plan),
        )
        .await
    }

    async fn get_plan(&self, scope: &UserScope, plan_id: &str) -> Result<Option<PlanRecord>> {
        let task = get_plan(self.shared(), scope.clone(), plan_id.to_owned());
        self.call("get_plan", task).await
    }

    async fn list_plans(&self, scope: &UserScope, filter: &PlanFilter) -> Result<Vec<PlanRecord>> {
        let task = list_plans(self.shared(), scope.clone(), filter.clone());
        self.call("list_plans", task).await
    }

    async fn update_plan(
        &self,
        scope: &UserScope,
        plan_id: &str,
        update: PlanUpdate,
    ) -> Result<PlanRecord> {
        let task = update_plan(self.shared(), scope.clone(), plan_id.to_owned(), update);
        self.call("update_plan", task).await
    }

    async fn delete_plan(&self, scope: &UserScope, plan_id: &str) -> Result<()> {
        let task = delete_plan(self.shared(), scope.clone(), plan_id.to_owned());
        self.call("delete_plan", task).await
    }

    async fn insert_step(
        &self,
        scope: &UserScope,
        plan_id: &str,
        step: NewStep,
    ) -> Result<WorkingMemoryEntry> {
        let task = insert_step(self.shared(), scope.clone(), plan_id.to_owned(), step);
        self.call("insert_step", task).await
    }

    async fn update_step(
        &self,
        scope: &UserScope,
        plan_id: &str,
        step_number: u32,
        update: StepUpdate,
    ) -> Result<WorkingMemoryEntry> {
        let task = update_step(
            self.shared(),
            scope.clone(),
            plan_id.to_owned(),
            step_number,
            update,
        );
        self.call("update_step", task).await
    }

    async fn get_step(
        &self,
        scope: &UserScope,
        plan_id: &str,
        step_number: u32,
    ) -> Result<Option<WorkingMemoryEntry>> {
        let task = get_step(
            self.shared(),
            scope.clone(),
            plan_id.to_owned(),
            step_number,
        );
        self.call("get_step", task).await
    }

    async fn list_steps(
        &self,
        scope: &UserScope,
        plan_id: &str,
    ) -> Result<Vec<WorkingMemoryEntry>> {
        let task = list_steps(self.shared(), scope.clone(), plan_id.to_owned());
        self.call("list_steps", task).await
    }
}
