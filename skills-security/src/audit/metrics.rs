//! Seed 000 part 8's success metrics, computed from the usage log (which is itself derived
//! from the audit trail, so the figures are as tamper-evident as the records they count).
//!
//! | metric | seed target | how it is read |
//! |---|---|---|
//! | success rate | > 90 % | successful executions / executions |
//! | P95 latency, executions under 30 s | 95 % under 30 s | nearest-rank 95th percentile of `duration_ms`; share with `duration_ms < 30_000` |
//! | auto-approval rate | 80 %, after trust is established | executions that ran without the gate asking anyone / executions, counted per (user, skill) from the first execution that ran without asking |
//! | context overhead | < 3,000 tokens | the orchestrator context's size per run, as the host recorded it ([`SuccessMetrics::with_context_sizes`]) |
//!
//! An *execution* is a usage-log row of status success, failed or timeout: one attempt that
//! ran (a retried step counts each attempt). Denials are not executions: the gate's denial
//! rows, and execution records with error code [`DENIED`] (a person refused the approval, or
//! the gate denied it), are counted once per execution id in [`SuccessMetrics::denied`].
//!
//! Auto-approval: the gate records an `approval_required` decision before a person is asked,
//! so [`UsageLogEntry::asked_approval`] says whether an execution waited for one. Every
//! skill's first runs ask (graduated autonomy), which says nothing about adoption; the seed
//! measures the rate "after trust established". Trust counts as established for a (user,
//! skill) pair at its first execution that ran without asking (the autonomy threshold,
//! session trust or global approval was reached). From that execution on, each of the
//! pair's executions counts, and those that ran without asking are auto-approved; a reset
//! of trust shows as executions that asked again. Plan-level approvals are not per
//! execution and are not counted.

use std::collections::{HashMap, HashSet};

use serde::{Deserialize, Serialize};

use super::query::{UsageLogEntry, UsageStatus};
use super::record::DENIED;

/// The seed's success-rate target (more than 90 %).
pub const SUCCESS_RATE_TARGET: f64 = 0.9;
/// The seed's latency bound: an execution should take less than 30 s...
pub const LATENCY_TARGET_MS: u64 = 30_000;
/// ...95 % of the time (the P95).
pub const LATENCY_SHARE_TARGET: f64 = 0.95;
/// The seed's auto-approval target after trust is established (80 %).
pub const AUTO_APPROVAL_TARGET: f64 = 0.8;
/// The seed's bound on the orchestrator context (less than 3,000 tokens).
pub const CONTEXT_TARGET_TOKENS: u64 = 3_000;

/// Part 8's metrics over a usage log. Rates are `None` when nothing was counted.
///
/// ```
/// use std::sync::Arc;
/// use skills_security::audit::{AuditFilter, AuditTrail, SuccessMetrics, Viewer};
/// use skills_store_traits::{TenantId, audit::AuditRecord, in_memory::InMemoryAuditStore};
///
/// # futures::executor::block_on(async {
/// let trail = AuditTrail::new(Arc::new(InMemoryAuditStore::new()));
/// let acme = TenantId::new("acme");
/// for (ms, ok) in [(1_000, true), (2_000, true), (40_000, false), (3_000, true)] {
///     let mut record = AuditRecord::new("alice", "pdf", "skills/pdf", "core", "in#", ok);
///     record.execution_time_ms = Some(ms);
///     trail.append(&acme, record).await?;
/// }
/// let log = trail.usage_log(&acme, &Viewer::Auditor, &AuditFilter::new()).await?;
/// let metrics = SuccessMetrics::from_usage_log(&log).with_context_sizes([1_200, 2_400]);
/// assert_eq!(metrics.success_rate, Some(0.75));
/// assert_eq!(metrics.p95_latency_ms, Some(40_000));
/// assert_eq!(metrics.under_30s_rate, Some(0.75));
/// assert_eq!(metrics.auto_approval_rate, Some(1.0)); // nobody was asked
/// assert_eq!(metrics.context.map(|c| c.mean_tokens), Some(1_800.0));
/// # Ok::<(), skills_security::audit::AuditError>(())
/// # }).unwrap();
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct SuccessMetrics {
    /// Executions (success, failed or timeout rows).
    pub executions: u64,
    /// Of those, successful.
    pub successes: u64,
    /// `successes / executions`.
    pub success_rate: Option<f64>,
    /// The nearest-rank 95th percentile of the executions' durations.
    pub p95_latency_ms: Option<u64>,
    /// Executions that took less than [`LATENCY_TARGET_MS`].
    pub under_30s: u64,
    /// `under_30s / executions`.
    pub under_30s_rate: Option<f64>,
    /// Executions denied by the gate or refused by a person (distinct execution ids).
    pub denied: u64,
    /// Executions from the point each (user, skill) pair's trust was established.
    pub after_trust: u64,
    /// Of those, the ones that ran without the gate asking anyone.
    pub auto_approved: u64,
    /// `auto_approved / after_trust`.
    pub auto_approval_rate: Option<f64>,
    /// The orchestrator context's size, when sizes were given.
    pub context: Option<ContextOverhead>,
}

/// The orchestrator context's size over a set of runs, in tokens.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ContextOverhead {
    /// Runs measured.
    pub runs: u64,
    /// The mean size.
    pub mean_tokens: f64,
    /// The nearest-rank 95th percentile.
    pub p95_tokens: u64,
    /// The largest.
    pub max_tokens: u64,
    /// Runs below [`CONTEXT_TARGET_TOKENS`].
    pub within_target: u64,
    /// `within_target / runs`.
    pub within_target_rate: f64,
}

/// `part / whole`, `None` for an empty whole.
fn rate(part: u64, whole: u64) -> Option<f64> {
    // Counts stay far below 2^53, where u64 to f64 is exact.
    (whole > 0).then(|| part as f64 / whole as f64)
}

/// The nearest-rank 95th percentile of `values` (sorted here); `None` when empty.
fn p95(mut values: Vec<u64>) -> Option<u64> {
    values.sort_unstable();
    let rank = (values.len() * 95).div_ceil(100);
    values.get(rank.checked_sub(1)?).copied()
}

impl SuccessMetrics {
    /// The metrics of `log`, in log order (as [`AuditTrail::usage_log`](super::AuditTrail::usage_log)
    /// returns it). See the module docs for what each counts.
    pub fn from_usage_log(log: &[UsageLogEntry]) -> SuccessMetrics {
        let denied_ids: HashSet<&str> = log
            .iter()
            .filter(|row| {
                row.status == UsageStatus::Denied || row.error_code.as_deref() == Some(DENIED)
            })
            .map(|row| row.execution_id.as_str())
            .collect();
        let executions: Vec<&UsageLogEntry> = log
            .iter()
            .filter(|row| {
                row.status != UsageStatus::Denied && row.error_code.as_deref() != Some(DENIED)
            })
            .collect();
        let count = executions.len() as u64;
        let successes = executions
            .iter()
            .filter(|row| row.status == UsageStatus::Success)
            .count() as u64;
        let under_30s = executions
            .iter()
            .filter(|row| row.duration_ms < LATENCY_TARGET_MS)
            .count() as u64;
        let mut trusted: HashMap<(&str, &str), bool> = HashMap::new();
        let (mut after_trust, mut auto_approved) = (0u64, 0u64);
        for row in &executions {
            let pair = (row.user_id.as_str(), row.extension_id.as_str());
            let established = trusted.entry(pair).or_insert(false);
            *established |= !row.asked_approval;
            if *established {
                after_trust += 1;
                auto_approved += u64::from(!row.asked_approval);
            }
        }
        SuccessMetrics {
            executions: count,
            successes,
            success_rate: rate(successes, count),
            p95_latency_ms: p95(executions.iter().map(|row| row.duration_ms).collect()),
            under_30s,
            under_30s_rate: rate(under_30s, count),
            denied: denied_ids.len() as u64,
            after_trust,
            auto_approved,
            auto_approval_rate: rate(auto_approved, after_trust),
            context: None,
        }
    }

    /// Adds the context overhead from the orchestrator context's size per run (tokens), as
    /// recorded where the orchestrator builds it (`skills-orchestrate` keeps it in each run's
    /// synthesis and memory episode). No sizes: `None`.
    pub fn with_context_sizes(mut self, sizes: impl IntoIterator<Item = u64>) -> SuccessMetrics {
        let sizes: Vec<u64> = sizes.into_iter().collect();
        let runs = sizes.len() as u64;
        self.context = p95(sizes.clone()).map(|p95_tokens| {
            let total: u128 = sizes.iter().map(|&s| u128::from(s)).sum();
            let within_target = sizes.iter().filter(|&&s| s < CONTEXT_TARGET_TOKENS).count() as u64;
            ContextOverhead {
                runs,
                mean_tokens: total as f64 / runs as f64,
                p95_tokens,
                max_tokens: sizes.iter().copied().max().unwrap_or(0),
                within_target,
                within_target_rate: rate(within_target, runs).unwrap_or(0.0),
            }
        });
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_p95_is_the_nearest_rank() {
        assert_eq!(p95(vec![]), None);
        assert_eq!(p95(vec![7]), Some(7));
        assert_eq!(p95((1..=20).collect()), Some(19));
        assert_eq!(p95((1..=21).rev().collect()), Some(20));
        assert_eq!(p95((1..=100).collect()), Some(95));
    }
}
