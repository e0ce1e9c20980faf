//! Rate limits in fixed windows of a minute, an hour or a UTC day, each counted at one
//! [`RateScope`]: per agent (or user) and skill, per skill across the whole organisation
//! (seed 003's `skill:exec:{orgId}:count:{skillId}` counter with a one-day lifetime), or for
//! the organisation as a whole (every skill, every actor).
//!
//! Threat: a runaway agent or a compromised skill loop running a skill far more often than
//! its organisation allows. Guarantee: [`RateLimiter::acquire`] checks every limit and
//! counts the run in one atomic step, so concurrent callers never exceed a limit within a
//! window; a refused acquisition counts nothing. Fixed windows allow up to twice a limit
//! across one window boundary (the price of one counter per window); the day window is the
//! seed's "executions per day" exactly.

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};

use serde::{Deserialize, Serialize};
use skills_store_traits::{TenantId, Timestamp};

/// A window length.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Window {
    /// 60 seconds, aligned to the epoch.
    Minute,
    /// 60 minutes, aligned to the epoch.
    Hour,
    /// A UTC day.
    Day,
}

impl Window {
    /// The length in milliseconds.
    pub fn millis(self) -> i64 {
        match self {
            Window::Minute => 60_000,
            Window::Hour => 3_600_000,
            Window::Day => 86_400_000,
        }
    }

    /// The start of the window holding `now`.
    pub fn start(self, now: Timestamp) -> Timestamp {
        now.div_euclid(self.millis()) * self.millis()
    }
}

/// Which runs one limit counts together.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize,
)]
#[serde(rename_all = "snake_case")]
pub enum RateScope {
    /// One agent's (or user's) runs of one skill.
    #[default]
    ActorSkill,
    /// Every actor's runs of one skill in the organisation (seed 003's
    /// `skill:exec:{orgId}:count:{skillId}`).
    Skill,
    /// Every run in the organisation, of any skill by anyone.
    Organization,
}

impl RateScope {
    /// The counter `key` falls into at this scope: the fields the scope does not tell apart
    /// become `*` (which no skill id or actor can be: actors are ids or `user:<id>`).
    pub fn counter(self, key: &RateKey) -> RateKey {
        let any = || "*".to_owned();
        match self {
            RateScope::ActorSkill => key.clone(),
            RateScope::Skill => RateKey {
                tenant: key.tenant.clone(),
                actor: any(),
                skill_id: key.skill_id.clone(),
            },
            RateScope::Organization => RateKey {
                tenant: key.tenant.clone(),
                actor: any(),
                skill_id: any(),
            },
        }
    }
}

/// At most `max` runs per `window`, counted at `scope`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct RateLimit {
    /// The most runs allowed in one window.
    pub max: u64,
    /// The window.
    pub window: Window,
    /// Which runs count together (per actor and skill when absent).
    #[serde(default)]
    pub scope: RateScope,
}

impl RateLimit {
    /// `max` per `window` for one actor and one skill.
    pub fn new(max: u64, window: Window) -> RateLimit {
        RateLimit {
            max,
            window,
            scope: RateScope::ActorSkill,
        }
    }

    /// `max` per `window` for one skill across the whole organisation.
    pub fn per_skill(max: u64, window: Window) -> RateLimit {
        RateLimit {
            scope: RateScope::Skill,
            ..RateLimit::new(max, window)
        }
    }

    /// `max` per `window` for the organisation as a whole.
    pub fn organization(max: u64, window: Window) -> RateLimit {
        RateLimit {
            scope: RateScope::Organization,
            ..RateLimit::new(max, window)
        }
    }
}

/// What is counted: runs of one skill by one agent (or user) in one tenant.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct RateKey {
    /// The tenant.
    pub tenant: TenantId,
    /// The agent id, or `user:<id>` when no agent acts.
    pub actor: String,
    /// The skill.
    pub skill_id: String,
}

/// The answer of a rate check.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum RateCheck {
    /// Within every limit.
    Allowed,
    /// `limit` is used up until `retry_at`.
    Limited {
        /// The limit that is used up.
        limit: RateLimit,
        /// When its window ends.
        retry_at: Timestamp,
    },
}

/// Counts runs against limits. The host may back it with a shared store (Redis, a
/// database); [`InMemoryRateLimiter`] serves one process.
#[async_trait::async_trait]
pub trait RateLimiter: Send + Sync {
    /// Whether one more run would be within every limit, counting nothing.
    async fn check(
        &self,
        key: &RateKey,
        limits: &[RateLimit],
        now: Timestamp,
    ) -> skills_store_traits::Result<RateCheck>;

    /// If one more run is within every limit, counts it, atomically; otherwise counts
    /// nothing and says which limit is used up.
    async fn acquire(
        &self,
        key: &RateKey,
        limits: &[RateLimit],
        now: Timestamp,
    ) -> skills_store_traits::Result<RateCheck>;
}

/// Counters in memory: one per (counter key at the limit's scope, window length), reset when
/// its window passes.
#[derive(Debug, Default)]
pub struct InMemoryRateLimiter {
    counters: Mutex<HashMap<(RateKey, Window), (Timestamp, u64)>>,
}

/// Counters kept before stale ones are dropped.
const PRUNE_ABOVE: usize = 100_000;

impl InMemoryRateLimiter {
    /// No runs counted yet.
    pub fn new() -> InMemoryRateLimiter {
        InMemoryRateLimiter::default()
    }

    fn run(&self, key: &RateKey, limits: &[RateLimit], now: Timestamp, count: bool) -> RateCheck {
        let mut counters = self.counters.lock().unwrap_or_else(PoisonError::into_inner);
        if counters.len() > PRUNE_ABOVE {
            counters.retain(|(_, window), (start, _)| *start == window.start(now));
        }
        let mut sorted: Vec<&RateLimit> = limits.iter().collect();
        sorted.sort_by_key(|l| (l.window, l.scope, l.max));
        for limit in &sorted {
            let start = limit.window.start(now);
            let used = match counters.get(&(limit.scope.counter(key), limit.window)) {
                Some((s, n)) if *s == start => *n,
                _ => 0,
            };
            if used >= limit.max {
                return RateCheck::Limited {
                    limit: **limit,
                    retry_at: start + limit.window.millis(),
                };
            }
        }
        if count {
            let mut slots: Vec<(Window, RateScope)> =
                sorted.iter().map(|l| (l.window, l.scope)).collect();
            slots.dedup();
            for (window, scope) in slots {
                let start = window.start(now);
                let slot = counters
                    .entry((scope.counter(key), window))
                    .or_insert((start, 0));
                if slot.0 != start {
                    *slot = (start, 0);
                }
                slot.1 += 1;
            }
        }
        RateCheck::Allowed
    }
}

#[async_trait::async_trait]
impl RateLimiter for InMemoryRateLimiter {
    async fn check(
        &self,
        key: &RateKey,
        limits: &[RateLimit],
        now: Timestamp,
    ) -> skills_store_traits::Result<RateCheck> {
        Ok(self.run(key, limits, now, false))
    }

    async fn acquire(
        &self,
        key: &RateKey,
        limits: &[RateLimit],
        now: Timestamp,
    ) -> skills_store_traits::Result<RateCheck> {
        Ok(self.run(key, limits, now, true))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(skill: &str) -> RateKey {
        RateKey {
            tenant: TenantId::new("t"),
            actor: "agent-1".into(),
            skill_id: skill.into(),
        }
    }

    #[tokio::test]
    async fn limits_hold_within_a_window_and_reset_after() {
        let limiter = InMemoryRateLimiter::new();
        let limits = [
            RateLimit::new(2, Window::Minute),
            RateLimit::new(3, Window::Day),
        ];
        let k = key("pdf");
        assert_eq!(
            limiter.acquire(&k, &limits, 0).await.unwrap(),
            RateCheck::Allowed
        );
        assert_eq!(
            limiter.acquire(&k, &limits, 1).await.unwrap(),
            RateCheck::Allowed
        );
        let limited = limiter.acquire(&k, &limits, 59_999).await.unwrap();
        assert_eq!(
            limited,
            RateCheck::Limited {
                limit: limits[0],
                retry_at: 60_000
            }
        );
        // A refused acquisition counted nothing; the next minute allows one more, then the
        // day limit holds.
        assert_eq!(
            limiter.acquire(&k, &limits, 60_000).await.unwrap(),
            RateCheck::Allowed
        );
        assert!(matches!(
            limiter.acquire(&k, &limits, 120_000).await.unwrap(),
            RateCheck::Limited { limit, retry_at: 86_400_000 } if limit.window == Window::Day
        ));
        assert_eq!(
            limiter.acquire(&k, &limits, 86_400_000).await.unwrap(),
            RateCheck::Allowed
        );
        // Other skills are counted apart, and check counts nothing.
        let other = key("docx");
        for _ in 0..5 {
            assert_eq!(
                limiter.check(&other, &limits, 0).await.unwrap(),
                RateCheck::Allowed
            );
        }
    }

    #[tokio::test]
    async fn organisation_and_per_skill_limits_count_every_actor() {
        let limiter = InMemoryRateLimiter::new();
        let limits = [
            RateLimit::new(10, Window::Day),
            RateLimit::per_skill(3, Window::Day),
            RateLimit::organization(4, Window::Day),
        ];
        let by = |actor: &str, skill: &str| RateKey {
            tenant: TenantId::new("t"),
            actor: actor.into(),
            skill_id: skill.into(),
        };
        for actor in ["a", "b", "c"] {
            assert_eq!(
                limiter
                    .acquire(&by(actor, "pdf"), &limits, 0)
                    .await
                    .unwrap(),
                RateCheck::Allowed
            );
        }
        // The skill's organisation-wide cap holds for a fourth actor.
        assert!(matches!(
            limiter.acquire(&by("d", "pdf"), &limits, 0).await.unwrap(),
            RateCheck::Limited { limit, .. } if limit.scope == RateScope::Skill
        ));
        // Another skill is free of it, until the organisation's cap.
        assert_eq!(
            limiter.acquire(&by("d", "csv"), &limits, 0).await.unwrap(),
            RateCheck::Allowed
        );
        assert!(matches!(
            limiter.acquire(&by("e", "docx"), &limits, 1).await.unwrap(),
            RateCheck::Limited { limit, retry_at: 86_400_000 } if limit.scope == RateScope::Organization
        ));
        // Another organisation, and the next day, start again.
        let other = RateKey {
            tenant: TenantId::new("u"),
            ..by("a", "pdf")
        };
        assert_eq!(
            limiter.acquire(&other, &limits, 1).await.unwrap(),
            RateCheck::Allowed
        );
        assert_eq!(
            limiter
                .acquire(&by("d", "pdf"), &limits, 86_400_000)
                .await
                .unwrap(),
            RateCheck::Allowed
        );
    }

    #[test]
    fn windows_align_to_the_epoch() {
        assert_eq!(Window::Hour.start(3_600_001), 3_600_000);
        assert_eq!(Window::Day.start(-1), -86_400_000);
    }
}
