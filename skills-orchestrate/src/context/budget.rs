//! Token budgets of seed 000 section 2.4, and the summary lengths of working-memory entries.

use serde::{Deserialize, Serialize};

/// How many tokens each part of the context may use. The defaults are section 2.4's.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ContextBudgets {
    /// The orchestrator's whole context (default 2,000).
    pub orchestrator: usize,
    /// The compact skill index inside it (default 600).
    pub skill_index: usize,
    /// Working memory, the summaries handed between steps (default 800).
    pub working_memory: usize,
    /// One sub-agent's context for one skill execution (default 6,000).
    pub skill_execution: usize,
    /// The share of a limit at which a context is compacted (default 0.75).
    pub compaction_threshold: f64,
}

impl Default for ContextBudgets {
    fn default() -> Self {
        ContextBudgets {
            orchestrator: 2_000,
            skill_index: 600,
            working_memory: 800,
            skill_execution: 6_000,
            compaction_threshold: 0.75,
        }
    }
}

impl ContextBudgets {
    /// Sets the orchestrator budget.
    pub fn orchestrator(mut self, tokens: usize) -> Self {
        self.orchestrator = tokens;
        self
    }

    /// Sets the skill-index budget.
    pub fn skill_index(mut self, tokens: usize) -> Self {
        self.skill_index = tokens;
        self
    }

    /// Sets the working-memory budget.
    pub fn working_memory(mut self, tokens: usize) -> Self {
        self.working_memory = tokens;
        self
    }

    /// Sets the per-skill execution budget.
    pub fn skill_execution(mut self, tokens: usize) -> Self {
        self.skill_execution = tokens;
        self
    }

    /// Sets the compaction threshold, clamped to `0.0..=1.0`.
    pub fn compaction_threshold(mut self, share: f64) -> Self {
        self.compaction_threshold = if share.is_nan() {
            0.75
        } else {
            share.clamp(0.0, 1.0)
        };
        self
    }

    /// The token count at which a context of `limit` tokens is compacted.
    pub fn compaction_point(&self, limit: usize) -> usize {
        // Ceil, so a threshold of 0.75 on 100 tokens compacts at 75, not 74.
        (limit as f64 * self.compaction_threshold).ceil() as usize
    }
}

/// How much a skill's working-memory summary may say (a skill declares it; section 2.4).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Verbosity {
    /// About 300 tokens.
    Minimal,
    /// About 800 tokens.
    Standard,
    /// About 1,500 tokens.
    Detailed,
    /// Not declared: about 500 tokens.
    #[default]
    Unspecified,
}

impl Verbosity {
    /// The summary's token limit.
    pub fn max_tokens(self) -> usize {
        match self {
            Verbosity::Minimal => 300,
            Verbosity::Standard => 800,
            Verbosity::Detailed => 1_500,
            Verbosity::Unspecified => 500,
        }
    }

    /// Reads a declared verbosity (`minimal`, `standard`, `detailed`; anything else is
    /// unspecified).
    pub fn from_declared(word: &str) -> Self {
        match word.trim().to_ascii_lowercase().as_str() {
            "minimal" => Verbosity::Minimal,
            "standard" => Verbosity::Standard,
            "detailed" => Verbosity::Detailed,
            _ => Verbosity::Unspecified,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_section_2_4s() {
        let budgets = ContextBudgets::default();
        assert_eq!(
            (
                budgets.orchestrator,
                budgets.skill_index,
                budgets.working_memory,
                budgets.skill_execution
            ),
            (2_000, 600, 800, 6_000)
        );
        assert_eq!(budgets.compaction_point(2_000), 1_500);
        assert_eq!(budgets.compaction_point(101), 76);
        assert_eq!(
            budgets.compaction_threshold(f64::NAN).compaction_threshold,
            0.75
        );
        assert_eq!(budgets.compaction_threshold(3.0).compaction_point(10), 10);
    }

    #[test]
    fn verbosity_sets_the_summary_length() {
        assert_eq!(Verbosity::from_declared("Minimal").max_tokens(), 300);
        assert_eq!(Verbosity::from_declared("standard").max_tokens(), 800);
        assert_eq!(Verbosity::from_declared("detailed").max_tokens(), 1_500);
        assert_eq!(Verbosity::from_declared("chatty").max_tokens(), 500);
    }
}
