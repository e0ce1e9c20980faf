//! [`PlanStore`] on `skill_execution_plans` and `skill_working_memory`.
//!
//! Every statement names the plan's owner (tenant and user); a step row references its plan
//! by (tenant, user, plan), so deleting a plan deletes its working memory by cascade, and a
//! step can never hang off another user's plan.

use rusqlite::types::Value as Sql;
use rusqlite::{Connection, OptionalExtension, ToSql, params, params_from_iter};
use serde_json::Value;
use skills_store_traits::plans::{
    ApprovalStatus, NewPlan, NewStep, PlanFilter, PlanRecord, PlanStore, PlanUpdate, StepUpdate,
    WorkingMemoryEntry,
};
use skills_store_traits::{Error, Result, UserScope, Violation, new_id};

use crate::SqliteStore;
use crate::error::Outcome;
use crate::rows::{Field, Kind, build, columns, decode, field, insert_object, object, renamed};

/// The `skill_execution_plans` columns, in [`PlanRecord`]'s field order.
const PLAN_FIELDS: &[Field] = &[
    field("id", Kind::Text),
    renamed("tenant", "tenant_id", Kind::Text),
    renamed("user", "user_id", Kind::Text),
    field("task_description", Kind::Text),
    renamed("skills_planned", "skills_planned_json", Kind::Json),
    renamed("dependency_graph", "dependency_graph_json", Kind::Json),
    renamed("parallel_groups", "parallel_groups_json", Kind::Json),
    field("estimated_duration_ms", Kind::UInt),
    field("estimated_cost_level", Kind::Text),
    field("risk_level", Kind::Text),
    field("approval_required", Kind::Bool),
    field("approval_status", Kind::Text),
    field("approved_by", Kind::Text),
    field("approved_at", Kind::Int),
    field("execution_started_at", Kind::Int),
    field("execution_completed_at", Kind::Int),
    field("success", Kind::Bool),
    field("created_at", Kind::Int),
    field("updated_at", Kind::Int),
];

/// The `skill_working_memory` columns (besides the owner), in [`WorkingMemoryEntry`]'s
/// field order.
const STEP_FIELDS: &[Field] = &[
    field("id", Kind::Text),
    field("plan_id", Kind::Text),
    field("step_number", Kind::Int),
    field("skill_id", Kind::Text),
    field("status", Kind::Text),
    field("summary", Kind::Text),
    renamed("artifacts", "artifacts_json", Kind::Json),
    renamed("extracted_facts", "extracted_facts_json", Kind::Json),
    renamed("next_step_hints", "next_step_hints_json", Kind::Json),
    field("data_class", Kind::Text),
    renamed("sources", "sources_json", Kind::Json),
    field("created_at", Kind::Int),
    field("updated_at", Kind::Int),
];

fn plan_not_found(plan_id: &str) -> Error {
    Error::not_found("plan", plan_id)
}

fn step_not_found(plan_id: &str, step_number: u32) -> Error {
    Error::not_found("plan step", format!("{plan_id}#{step_number}"))
}

/// The owner's columns and a plan id.
struct PlanKey {
    tenant: String,
    user: String,
    plan: String,
}

impl PlanKey {
    fn new(scope: &UserScope, plan_id: &str) -> Self {
        PlanKey {
            tenant: scope.tenant.to_string(),
            user: scope.user.to_string(),
            plan: plan_id.to_owned(),
        }
    }

    fn plan(&self, conn: &Connection) -> Outcome<Option<PlanRecord>> {
        let sql = format!(
            "SELECT {} FROM skill_execution_plans \
             WHERE tenant_id = ?1 AND user_id = ?2 AND id = ?3",
            columns(PLAN_FIELDS, None)
        );
        Ok(conn
            .prepare_cached(&sql)?
            .query_row(params![self.tenant, self.user, self.plan], |row| {
                decode(row, 0, PLAN_FIELDS)
            })
            .optional()?)
    }

    fn require_plan(&self, conn: &Connection) -> Outcome<PlanRecord> {
        self.plan(conn)?
            .ok_or_else(|| plan_not_found(&self.plan).into())
    }

    fn step(&self, conn: &Connection, step_number: u32) -> Outcome<Option<WorkingMemoryEntry>> {
        let sql = format!(
            "SELECT {} FROM skill_working_memory \
             WHERE tenant_id = ?1 AND user_id = ?2 AND plan_id = ?3 AND step_number = ?4",
            columns(STEP_FIELDS, None)
        );
        Ok(conn
            .prepare_cached(&sql)?
            .query_row(
                params![self.tenant, self.user, self.plan, step_number],
                |row| decode(row, 0, STEP_FIELDS),
            )
            .optional()?)
    }
}

#[async_trait::async_trait]
impl PlanStore for SqliteStore {
    async fn create_plan(&self, scope: &UserScope, plan: NewPlan) -> Result<PlanRecord> {
        plan.validate()?;
        let (scope, clock) = (scope.clone(), self.clock.clone());
        self.worker
            .write(move |conn| {
                let now = clock.now();
                let record = object! {
                    "id" => new_id(),
                    "tenant" => scope.tenant,
                    "user" => scope.user,
                    "task_description" => plan.task_description,
                    "skills_planned" => plan.skills_planned,
                    "dependency_graph" => plan.dependency_graph,
                    "parallel_groups" => plan.parallel_groups,
                    "estimated_duration_ms" => plan.estimated_duration_ms,
                    "estimated_cost_level" => plan.estimated_cost_level,
                    "risk_level" => plan.risk_level,
                    "approval_required" => plan.approval_required,
                    "approval_status" => plan.approval_required.then_some(ApprovalStatus::Pending),
                    "approved_by" => Value::Null,
                    "approved_at" => Value::Null,
                    "execution_started_at" => Value::Null,
                    "execution_completed_at" => Value::Null,
                    "success" => Value::Null,
                    "created_at" => now,
                    "updated_at" => now,
                };
                insert_object(conn, "skill_execution_plans", &[], PLAN_FIELDS, &record)?;
                build(Value::Object(record))
            })
            .await
    }

    async fn get_plan(&self, scope: &UserScope, plan_id: &str) -> Result<Option<PlanRecord>> {
        let key = PlanKey::new(scope, plan_id);
        self.worker.read(move |conn| key.plan(conn)).await
    }

    async fn list_plans(&self, scope: &UserScope, filter: &PlanFilter) -> Result<Vec<PlanRecord>> {
        let (tenant, user) = (scope.tenant.to_string(), scope.user.to_string());
        let filter = filter.clone();
        self.worker
            .read(move |conn| {
                let mut conditions = vec!["tenant_id = ?1".to_owned(), "user_id = ?2".to_owned()];
                let mut params = vec![Sql::Text(tenant.clone()), Sql::Text(user.clone())];
                if let Some(status) = filter.approval_status {
                    params.push(Sql::Text(status.as_str().to_owned()));
                    conditions.push(format!("approval_status = ?{}", params.len()));
                }
                if let Some(risk) = filter.risk_level {
                    params.push(Sql::Text(risk.as_str().to_owned()));
                    conditions.push(format!("risk_level = ?{}", params.len()));
                }
                match filter.completed {
                    Some(true) => conditions.push("execution_completed_at IS NOT NULL".into()),
                    Some(false) => conditions.push("execution_completed_at IS NULL".into()),
                    None => {}
                }
                params.push(Sql::Integer(
                    filter
                        .limit
                        .map_or(-1, |l| i64::try_from(l).unwrap_or(i64::MAX)),
                ));
                let sql = format!(
                    "SELECT {} FROM skill_execution_plans WHERE {} \
                     ORDER BY created_at, id LIMIT ?{}",
                    columns(PLAN_FIELDS, None),
                    conditions.join(" AND "),
                    params.len()
                );
                let mut statement = conn.prepare_cached(&sql)?;
                let rows = statement
                    .query_map(params_from_iter(params), |row| decode(row, 0, PLAN_FIELDS))?;
                Ok(rows.collect::<rusqlite::Result<_>>()?)
            })
            .await
    }

    async fn update_plan(
        &self,
        scope: &UserScope,
        plan_id: &str,
        update: PlanUpdate,
    ) -> Result<PlanRecord> {
        update.validate()?;
        let (key, clock) = (PlanKey::new(scope, plan_id), self.clock.clone());
        self.worker
            .write(move |conn| {
                let mut plan = key.require_plan(conn)?;
                update.clone().apply_to(&mut plan, clock.now());
                let keys: [(&str, &dyn ToSql); 3] = [
                    ("tenant_id", &key.tenant),
                    ("user_id", &key.user),
                    ("id", &key.plan),
                ];
                crate::rows::update(conn, "skill_execution_plans", PLAN_FIELDS, &plan, &keys)?;
                Ok(plan)
            })
            .await
    }

    async fn delete_plan(&self, scope: &UserScope, plan_id: &str) -> Result<()> {
        let key = PlanKey::new(scope, plan_id);
        self.worker
            .write(move |conn| {
                // The plan's working memory goes with it: the foreign key cascades.
                let deleted = conn
                    .prepare_cached(
                        "DELETE FROM skill_execution_plans \
                         WHERE tenant_id = ?1 AND user_id = ?2 AND id = ?3",
                    )?
                    .execute(params![key.tenant, key.user, key.plan])?;
                if deleted == 0 {
                    return Err(plan_not_found(&key.plan).into());
                }
                Ok(())
            })
            .await
    }

    async fn insert_step(
        &self,
        scope: &UserScope,
        plan_id: &str,
        step: NewStep,
    ) -> Result<WorkingMemoryEntry> {
        if step.skill_id.is_empty() {
            return Err(Error::invalid("skill_id", Violation::Empty));
        }
        let (key, clock) = (PlanKey::new(scope, plan_id), self.clock.clone());
        self.worker
            .write(move |conn| {
                key.require_plan(conn)?;
                if key.step(conn, step.step_number)?.is_some() {
                    let what = format!("{}#{}", key.plan, step.step_number);
                    return Err(Error::conflict("plan step", what).into());
                }
                let now = clock.now();
                let entry = object! {
                    "id" => new_id(),
                    "plan_id" => key.plan,
                    "step_number" => step.step_number,
                    "skill_id" => step.skill_id,
                    "status" => step.status,
                    "summary" => step.summary,
                    "artifacts" => step.artifacts,
                    "extracted_facts" => step.extracted_facts,
                    "next_step_hints" => step.next_step_hints,
                    "data_class" => step.data_class,
                    "sources" => step.sources,
                    "created_at" => now,
                    "updated_at" => now,
                };
                let owner: [(&str, &dyn ToSql); 2] =
                    [("tenant_id", &key.tenant), ("user_id", &key.user)];
                insert_object(conn, "skill_working_memory", &owner, STEP_FIELDS, &entry)?;
                build(Value::Object(entry))
            })
            .await
    }

    async fn update_step(
        &self,
        scope: &UserScope,
        plan_id: &str,
        step_number: u32,
        update: StepUpdate,
    ) -> Result<WorkingMemoryEntry> {
        let (key, clock) = (PlanKey::new(scope, plan_id), self.clock.clone());
        self.worker
            .write(move |conn| {
                key.require_plan(conn)?;
                let mut step = key
                    .step(conn, step_number)?
                    .ok_or_else(|| step_not_found(&key.plan, step_number))?;
                update.clone().apply_to(&mut step, clock.now());
                let keys: [(&str, &dyn ToSql); 4] = [
                    ("tenant_id", &key.tenant),
                    ("user_id", &key.user),
                    ("plan_id", &key.plan),
                    ("step_number", &step_number),
                ];
                crate::rows::update(conn, "skill_working_memory", STEP_FIELDS, &step, &keys)?;
                Ok(step)
            })
            .await
    }

    async fn get_step(
        &self,
        scope: &UserScope,
        plan_id: &str,
        step_number: u32,
    ) -> Result<Option<WorkingMemoryEntry>> {
        let key = PlanKey::new(scope, plan_id);
        self.worker
            .read(move |conn| key.step(conn, step_number))
            .await
    }

    async fn list_steps(
        &self,
        scope: &UserScope,
        plan_id: &str,
    ) -> Result<Vec<WorkingMemoryEntry>> {
        let key = PlanKey::new(scope, plan_id);
        self.worker
            .read(move |conn| {
                key.require_plan(conn)?;
                let sql = format!(
                    "SELECT {} FROM skill_working_memory \
                     WHERE tenant_id = ?1 AND user_id = ?2 AND plan_id = ?3 ORDER BY step_number",
                    columns(STEP_FIELDS, None)
                );
                let mut statement = conn.prepare_cached(&sql)?;
                let rows = statement.query_map(params![key.tenant, key.user, key.plan], |row| {
                    decode(row, 0, STEP_FIELDS)
                })?;
                Ok(rows.collect::<rusqlite::Result<_>>()?)
            })
            .await
    }
}
