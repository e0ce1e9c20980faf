//! Caches as decorators over the stores (seed 003's Redis patterns, in process): one
//! [`TtlCache`] type with a time-to-live, a bound on its size and hit/miss counts, and
//! [`CachedSkillStore`], which wraps any [`SkillStore`](crate::SkillStore) backend.
//!
//! | seed 003 key | TTL | here |
//! |---|---|---|
//! | `skill:registry:{orgId}:all` | 5 min ([`REGISTRY_TTL_MS`]) | `CachedSkillStore::list_skills`, per tenant and filter |
//! | `skill:meta:{skillId}` | 30 min ([`METADATA_TTL_MS`]) | `CachedSkillStore::find_skill_by_id` / `_by_slug` |
//! | `mcp:tools:{orgId}:{provider}` | 15 min ([`MCP_TOOLS_TTL_MS`]) | a host's `TtlCache<(TenantId, String), _>` |
//! | `skill:perm:{orgId}:{skillId}:*` | 10 min | `skills-security`'s `Permissions` |
//!
//! Threat: a stale answer after a change (a deleted skill still found, an edit not seen), or
//! a cache growing without bound. Guarantee: a write through the same handle drops, before
//! it returns, exactly the entries it can have changed — the skill's id and slug entries and
//! its tenant's registry lists (seed 003's invalidation table) — and nothing of other
//! tenants; each cache holds at most its capacity (expired entries go first, then the
//! soonest to expire). Writes made to the backend behind the decorator show after the TTL.

mod skills;

use std::collections::HashMap;
use std::hash::Hash;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use crate::time::{Clock, Timestamp};

pub use skills::CachedSkillStore;

/// The registry list's time-to-live (seed 003: 5 minutes).
pub const REGISTRY_TTL_MS: i64 = 5 * 60 * 1000;
/// Skill metadata's time-to-live (seed 003: 30 minutes).
pub const METADATA_TTL_MS: i64 = 30 * 60 * 1000;
/// An MCP provider's tool list's time-to-live (seed 003: 15 minutes).
pub const MCP_TOOLS_TTL_MS: i64 = 15 * 60 * 1000;
/// Entries one cache holds by default.
pub const DEFAULT_CACHE_ENTRIES: usize = 10_000;

/// A map whose entries expire `ttl` milliseconds of the host's clock after they were put,
/// holding at most `capacity` entries.
pub struct TtlCache<K, V> {
    entries: Mutex<HashMap<K, (V, Timestamp)>>,
    clock: Arc<dyn Clock>,
    ttl: i64,
    capacity: usize,
    hits: AtomicU64,
    misses: AtomicU64,
    /// Bumped by every removal, under the lock: a value read from the backend before a
    /// removal is never put back after it ([`TtlCache::insert_if_unchanged`]).
    generation: AtomicU64,
}

impl<K, V> std::fmt::Debug for TtlCache<K, V> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TtlCache")
            .field("ttl", &self.ttl)
            .field("capacity", &self.capacity)
            .finish_non_exhaustive()
    }
}

impl<K: Eq + Hash + Clone, V: Clone> TtlCache<K, V> {
    /// A cache of at most `capacity` entries living `ttl_ms` each (0 for either: nothing is
    /// kept).
    pub fn new(clock: Arc<dyn Clock>, ttl_ms: i64, capacity: usize) -> Self {
        TtlCache {
            entries: Mutex::new(HashMap::new()),
            clock,
            ttl: ttl_ms,
            capacity,
            hits: AtomicU64::new(0),
            misses: AtomicU64::new(0),
            generation: AtomicU64::new(0),
        }
    }

    /// The removal count now; pass it to [`TtlCache::insert_if_unchanged`] with a value
    /// read from the backend after this call.
    pub fn generation(&self) -> u64 {
        self.generation.load(Ordering::Acquire)
    }

    /// [`TtlCache::insert`], unless a removal happened since `generation` was taken (the
    /// value may predate a write that invalidated it).
    pub fn insert_if_unchanged(&self, generation: u64, key: K, value: V) {
        let entries = self.lock();
        if self.generation.load(Ordering::Acquire) == generation {
            self.insert_locked(entries, key, value);
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<K, (V, Timestamp)>> {
        self.entries.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The live value under `key`, counting a hit or a miss.
    pub fn get(&self, key: &K) -> Option<V> {
        let now = self.clock.now();
        let found = self
            .lock()
            .get(key)
            .filter(|(_, expires)| now < *expires)
            .map(|(value, _)| value.clone());
        let counter = if found.is_some() {
            &self.hits
        } else {
            &self.misses
        };
        counter.fetch_add(1, Ordering::Relaxed);
        found
    }

    /// Puts `value` under `key` for the TTL, making room when full.
    pub fn insert(&self, key: K, value: V) {
        let entries = self.lock();
        self.insert_locked(entries, key, value);
    }

    fn insert_locked(
        &self,
        mut entries: std::sync::MutexGuard<'_, HashMap<K, (V, Timestamp)>>,
        key: K,
        value: V,
    ) {
        if self.ttl <= 0 || self.capacity == 0 {
            return;
        }
        let now = self.clock.now();
        if entries.len() >= self.capacity && !entries.contains_key(&key) {
            entries.retain(|_, (_, expires)| now < *expires);
            while entries.len() >= self.capacity {
                let Some(soonest) = entries
                    .iter()
                    .min_by_key(|(_, (_, expires))| *expires)
                    .map(|(k, _)| k.clone())
                else {
                    break;
                };
                entries.remove(&soonest);
            }
        }
        entries.insert(key, (value, now.saturating_add(self.ttl)));
    }

    /// Drops `key`.
    pub fn remove(&self, key: &K) {
        let mut entries = self.lock();
        self.generation.fetch_add(1, Ordering::AcqRel);
        entries.remove(key);
    }

    /// Drops every entry for which `keep(key, value)` is false.
    pub fn retain(&self, keep: impl Fn(&K, &V) -> bool) {
        let mut entries = self.lock();
        self.generation.fetch_add(1, Ordering::AcqRel);
        entries.retain(|key, (value, _)| keep(key, value));
    }

    /// Entries held (expired ones included until they are pushed out).
    pub fn len(&self) -> usize {
        self.lock().len()
    }

    /// Whether nothing is held.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Hits and misses of [`TtlCache::get`] so far.
    pub fn stats(&self) -> (u64, u64) {
        (
            self.hits.load(Ordering::Relaxed),
            self.misses.load(Ordering::Relaxed),
        )
    }
}

#[cfg(test)]
mod tests;
