//! The planner: specs in, a numbered, grouped, estimated and risk-rated plan out.

use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;

use sha2::{Digest, Sha256};
use skills_security::gate::Decision;

use super::cost::CostRule;
use super::estimate::DurationHistory;
use super::graph;
use super::risk::{ApprovalPolicy, SkillRisk, plan_risk, skill_info_or_unknown};
use super::{ExecutionPlan, PlanStep, RiskLevel, StepSpec};
use crate::error::{Error, Result};

/// The estimate for a skill with no recorded past runs, in milliseconds.
pub const DEFAULT_STEP_ESTIMATE_MS: u64 = 30_000;

/// Makes [`ExecutionPlan`]s from [`StepSpec`]s.
///
/// Configured with builder methods; every part is optional:
/// - [`Planner::history`]: past durations for the step estimates (else
///   [`Planner::default_estimate_ms`], [`DEFAULT_STEP_ESTIMATE_MS`] unless set);
/// - [`Planner::risks`]: each skill's trust level and risk (else every skill is an unreviewed
///   community skill, risk `High`);
/// - [`Planner::policy`]: who decides approval (else every step needs approval, as a skill's
///   first runs do under graduated autonomy; [`GatePreview`](super::GatePreview) previews the
///   gate's answer from the user's history);
/// - [`Planner::cost_rule`]: how the cost level is estimated ([`CostRule`]).
///
/// Planning is O((V + E) log V) in the steps and dependencies; the policy, when there is one,
/// is asked once per step, one step after another, in step order.
///
/// ```
/// use std::sync::Arc;
/// use skills_orchestrate::plan::{DurationSamples, Planner, RiskLevel, SkillRiskTable, StepSpec};
/// use skills_security::TrustLevel;
///
/// # futures::executor::block_on(async {
/// let planner = Planner::new()
///     .history(Arc::new(DurationSamples::new().with("pdf", 2_000).with("xlsx", 500)))
///     .risks(Arc::new(
///         SkillRiskTable::new().skill("pdf", TrustLevel::Verified).skill("xlsx", TrustLevel::Verified),
///     ));
/// let plan = planner
///     .plan(
///         "Compare the report with the sheet",
///         vec![
///             StepSpec::new("read", "pdf", "Read the report"),
///             StepSpec::new("load", "xlsx", "Load the sheet"),
///             StepSpec::new("compare", "xlsx", "Compare").after("read").after("load"),
///         ],
///     )
///     .await?;
/// // Groups run one after another: max(2,000, 500) + 500.
/// assert_eq!(plan.estimated_duration_ms, 2_500);
/// // No approval policy knows the user's history: every step asks, as first runs do.
/// assert_eq!((plan.risk, plan.requires_approval), (RiskLevel::Low, true));
/// # Ok::<(), skills_orchestrate::Error>(())
/// # }).unwrap();
/// ```
#[derive(Clone)]
pub struct Planner {
    history: Option<Arc<dyn DurationHistory>>,
    default_estimate_ms: u64,
    risks: Option<Arc<dyn SkillRisk>>,
    policy: Option<Arc<dyn ApprovalPolicy>>,
    cost: CostRule,
}

impl fmt::Debug for Planner {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Planner")
            .field("history", &self.history.is_some())
            .field("default_estimate_ms", &self.default_estimate_ms)
            .field("risks", &self.risks.is_some())
            .field("policy", &self.policy.is_some())
            .field("cost", &self.cost)
            .finish()
    }
}

impl Default for Planner {
    fn default() -> Self {
        Planner {
            history: None,
            default_estimate_ms: DEFAULT_STEP_ESTIMATE_MS,
            risks: None,
            policy: None,
            cost: CostRule::default(),
        }
    }
}

impl Planner {
    /// A planner without history, risk table or policy.
    pub fn new() -> Self {
        Planner::default()
    }

    /// Estimates steps from `history` (the median of a skill's past durations).
    pub fn history(mut self, history: Arc<dyn DurationHistory>) -> Self {
        self.history = Some(history);
        self
    }

    /// The estimate of a step whose skill has no history.
    pub fn default_estimate_ms(mut self, ms: u64) -> Self {
        self.default_estimate_ms = ms;
        self
    }

    /// Reads each skill's trust level and risk from `risks`.
    pub fn risks(mut self, risks: Arc<dyn SkillRisk>) -> Self {
        self.risks = Some(risks);
        self
    }

    /// Asks `policy` whether each step may run, needs approval or is denied.
    pub fn policy(mut self, policy: Arc<dyn ApprovalPolicy>) -> Self {
        self.policy = Some(policy);
        self
    }

    /// Estimates the cost level by `rule`.
    pub fn cost_rule(mut self, rule: CostRule) -> Self {
        self.cost = rule;
        self
    }

    /// Plans `specs` for `task`; the steps' dependencies must form a DAG.
    ///
    /// Steps are grouped by topological level (a step's level is one more than its deepest
    /// dependency's, 0 without dependencies), listed group by group and, within a group, in
    /// the order they were given, and numbered from 1 in that order. A dependency named twice
    /// counts once.
    ///
    /// # Errors
    /// [`Error::Invalid`] for an empty task or plan, a duplicate or empty step id, a step
    /// without skill, a dependency on an unknown step or on itself; [`Error::Cycle`] naming the
    /// steps of a dependency cycle; [`Error::StepDenied`] when the policy denies a step; the
    /// policy's own errors.
    pub async fn plan(&self, task: &str, specs: Vec<StepSpec>) -> Result<ExecutionPlan> {
        if task.trim().is_empty() {
            return Err(Error::Invalid {
                what: "plan".into(),
                reason: "the task is empty".into(),
            });
        }
        let specs: Vec<StepSpec> = specs.into_iter().map(dedup_dependencies).collect();
        let levels = graph::levels(&specs)?;
        if u32::try_from(specs.len()).is_err() {
            return Err(Error::Invalid {
                what: "plan".into(),
                reason: format!("{} steps are more than a plan can number", specs.len()),
            });
        }
        let mut slots: Vec<Option<StepSpec>> = specs.into_iter().map(Some).collect();
        let mut steps = Vec::with_capacity(slots.len());
        let mut groups: Vec<Vec<String>> = vec![Vec::new(); levels.count];
        let mut group_max_ms: Vec<u64> = vec![0; levels.count];
        let mut estimates: HashMap<String, u64> = HashMap::new();
        for (position, &i) in levels.order.iter().enumerate() {
            let Some(spec) = slots[i].take() else {
                continue;
            };
            let level = levels.level[i];
            let estimated_ms = *estimates
                .entry(spec.skill.clone())
                .or_insert_with(|| self.estimate_ms(&spec.skill));
            group_max_ms[level] = group_max_ms[level].max(estimated_ms);
            groups[level].push(spec.id.clone());
            let (risk, requires_approval, approval_reason) = self.assess(&spec).await?;
            steps.push(PlanStep {
                number: u32::try_from(position + 1).unwrap_or(u32::MAX),
                id: spec.id,
                skill: spec.skill,
                briefing: spec.briefing,
                depends_on: spec.depends_on,
                estimated_ms,
                risk,
                requires_approval,
                approval_reason,
            });
        }
        let estimated_tokens = self.cost.tokens(steps.iter().map(|s| s.skill.as_str()));
        Ok(ExecutionPlan {
            id: plan_id(task, &steps),
            task: task.to_owned(),
            estimated_duration_ms: group_max_ms
                .iter()
                .fold(0u64, |sum, ms| sum.saturating_add(*ms)),
            cost: self.cost.level(estimated_tokens),
            estimated_tokens,
            risk: steps.iter().map(|s| s.risk).max().unwrap_or(RiskLevel::Low),
            requires_approval: steps.iter().any(|s| s.requires_approval),
            steps,
            groups,
        })
    }

    fn estimate_ms(&self, skill: &str) -> u64 {
        self.history
            .as_ref()
            .and_then(|history| history.median_ms(skill))
            .unwrap_or(self.default_estimate_ms)
    }

    /// The step's risk, whether it needs approval, and why.
    async fn assess(&self, spec: &StepSpec) -> Result<(RiskLevel, bool, Option<String>)> {
        let info = skill_info_or_unknown(self.risks.as_deref(), &spec.skill);
        let risk = plan_risk(info.risk);
        let Some(policy) = &self.policy else {
            // Nothing known of the user's history with the skill: seed 000 part 4 asks the
            // first time at every risk level.
            return Ok((
                risk,
                true,
                Some(format!(
                    "Initial approval required ({risk} risk, no approval policy)"
                )),
            ));
        };
        match policy.decide(&spec.id, &info).await? {
            Decision::Allow { .. } => Ok((risk, false, None)),
            Decision::AskApproval { reason, .. } => Ok((risk, true, Some(reason))),
            Decision::Deny { reason, .. } => Err(Error::StepDenied {
                step: spec.id.clone(),
                skill: spec.skill.clone(),
                reason,
            }),
        }
    }
}

/// Drops repeated dependencies, keeping the first mention.
fn dedup_dependencies(mut spec: StepSpec) -> StepSpec {
    let mut seen = std::collections::HashSet::new();
    spec.depends_on.retain(|dep| seen.insert(dep.clone()));
    spec
}

/// A deterministic id: the same task and steps give the same id.
fn plan_id(task: &str, steps: &[PlanStep]) -> String {
    // Length-prefixed parts, so no two different plans hash the same bytes.
    let mut hash = Sha256::new();
    let mut part = |bytes: &[u8]| {
        hash.update((bytes.len() as u64).to_le_bytes());
        hash.update(bytes);
    };
    part(task.as_bytes());
    for step in steps {
        part(step.id.as_bytes());
        part(step.skill.as_bytes());
        part(step.briefing.as_bytes());
        part(&(step.depends_on.len() as u64).to_le_bytes());
        for dep in &step.depends_on {
            part(dep.as_bytes());
        }
    }
    format!("plan-{}", &hex::encode(hash.finalize())[..16])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn planning_can_move_between_threads() {
        fn assert_send<T: Send>(_: &T) {}
        let planner = Planner::new();
        let future = planner.plan("t", vec![StepSpec::new("a", "pdf", "")]);
        assert_send(&future);
        let plan = futures::executor::block_on(future);
        assert_eq!(plan.map(|p| p.steps.len()).ok(), Some(1));
    }

    #[test]
    fn the_plan_id_depends_on_every_part() {
        let step = |id: &str, skill: &str, briefing: &str, deps: &[&str]| PlanStep {
            number: 1,
            id: id.into(),
            skill: skill.into(),
            briefing: briefing.into(),
            depends_on: deps.iter().map(|d| (*d).to_owned()).collect(),
            estimated_ms: 0,
            risk: RiskLevel::Low,
            requires_approval: false,
            approval_reason: None,
        };
        let ids = [
            plan_id("t", &[step("a", "s", "b", &[])]),
            plan_id("t2", &[step("a", "s", "b", &[])]),
            plan_id("t", &[step("a", "s", "b", &["x"])]),
            // Shifting bytes between parts changes the id (length prefixes).
            plan_id("t", &[step("as", "", "b", &[])]),
            plan_id("t", &[step("a", "sb", "", &[])]),
        ];
        let distinct: std::collections::HashSet<_> = ids.iter().collect();
        assert_eq!(distinct.len(), ids.len());
    }
}
