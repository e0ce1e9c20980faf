//! A plan's cost level, from the model tokens it is expected to use.

use std::collections::BTreeMap;

use super::CostLevel;
use crate::context::budget::ContextBudgets;

/// How a plan's cost level is estimated.
///
/// Each step runs one sub-agent whose context is capped by the per-skill execution budget
/// ([`ContextBudgets::skill_execution`], 6,000 tokens by default), and the orchestrator's own
/// context ([`ContextBudgets::orchestrator`], 2,000) is spent once for planning and synthesis.
/// The plan's estimated tokens are that orchestrator budget plus each step's budget, where a
/// skill known to need more or less (a research skill reading many pages) has its own figure
/// ([`CostRule::skill_tokens`]). The level is `Low` up to [`CostRule::low_up_to`] tokens
/// (20,000: three default steps), `Medium` up to [`CostRule::medium_up_to`] (65,000: ten
/// default steps), and `High` above.
///
/// ```
/// use skills_orchestrate::plan::{CostLevel, CostRule};
///
/// let rule = CostRule::default().skill_tokens("research", 40_000);
/// assert_eq!(rule.level(rule.tokens(["pdf", "xlsx"])), CostLevel::Low);
/// assert_eq!(rule.level(rule.tokens(["pdf", "research"])), CostLevel::Medium);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CostRule {
    /// Tokens spent once per plan (planning and synthesis).
    pub plan_tokens: u64,
    /// Tokens a step uses when its skill has no figure of its own.
    pub step_tokens: u64,
    /// The most tokens of a `Low` plan.
    pub low_up_to: u64,
    /// The most tokens of a `Medium` plan.
    pub medium_up_to: u64,
    per_skill: BTreeMap<String, u64>,
}

impl Default for CostRule {
    fn default() -> Self {
        CostRule::from_budgets(&ContextBudgets::default())
    }
}

impl CostRule {
    /// The rule for these budgets, with the default thresholds.
    pub fn from_budgets(budgets: &ContextBudgets) -> Self {
        CostRule {
            plan_tokens: budgets.orchestrator as u64,
            step_tokens: budgets.skill_execution as u64,
            low_up_to: 20_000,
            medium_up_to: 65_000,
            per_skill: BTreeMap::new(),
        }
    }

    /// The same, with `skill`'s steps using `tokens`.
    pub fn skill_tokens(mut self, skill: impl Into<String>, tokens: u64) -> Self {
        self.per_skill.insert(skill.into(), tokens);
        self
    }

    /// The tokens one step of `skill` is expected to use.
    pub fn step_tokens_for(&self, skill: &str) -> u64 {
        self.per_skill
            .get(skill)
            .copied()
            .unwrap_or(self.step_tokens)
    }

    /// The tokens a plan running these skills is expected to use.
    pub fn tokens<'a>(&self, skills: impl IntoIterator<Item = &'a str>) -> u64 {
        skills.into_iter().fold(self.plan_tokens, |sum, skill| {
            sum.saturating_add(self.step_tokens_for(skill))
        })
    }

    /// The level of a plan expected to use `tokens`.
    pub fn level(&self, tokens: u64) -> CostLevel {
        if tokens <= self.low_up_to {
            CostLevel::Low
        } else if tokens <= self.medium_up_to {
            CostLevel::Medium
        } else {
            CostLevel::High
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_thresholds_fall_between_three_and_four_and_ten_and_eleven_steps() {
        let rule = CostRule::default();
        let level = |n: usize| rule.level(rule.tokens(std::iter::repeat_n("s", n)));
        assert_eq!(level(1), CostLevel::Low);
        assert_eq!(level(3), CostLevel::Low);
        assert_eq!(level(4), CostLevel::Medium);
        assert_eq!(level(10), CostLevel::Medium);
        assert_eq!(level(11), CostLevel::High);
    }
}
