//! [`Permissions`]: the rules of each tenant, optionally persisted in a
//! [`PermissionStore`], and a bounded resolved-permission cache with seed 003's 10-minute
//! time-to-live, invalidated per key.
//!
//! Threat: a rule change that does not take effect (a stale cached allow), or a cache that
//! grows without bound under many principals. Guarantee: every change through this handle
//! drops, before it returns, each cached resolution of the tenant whose skill the old or the
//! new rule targets (seed 003's `skill:perm:{orgId}:{skillId}:*`), and leaves the others;
//! the cache holds at most its configured number of entries (the soonest to expire go
//! first). Changes made behind this handle's back (another process writing the store) show
//! after the time-to-live, or at once after [`Permissions::invalidate`] or
//! [`Permissions::load`].

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError, RwLock};

use skills_store_traits::{Clock, PermissionStore, TenantId, Timestamp};

use super::{Merge, PermissionRule, Principal, ResolvedPermissions, SkillTarget, Target, resolve};
use crate::error::Error;

/// How many resolutions [`Permissions`] caches by default.
pub const DEFAULT_PERMISSION_CACHE_ENTRIES: usize = 10_000;

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct CacheKey {
    tenant: TenantId,
    skill: SkillTarget,
    agent: Option<String>,
    team: Option<String>,
    roles: Vec<String>,
}

/// The rules of each tenant and a resolved-permission cache with a time-to-live (seed 003:
/// 10 minutes), invalidated per key by every rule change; with a store, rules are loaded
/// from it and every change writes through it first.
pub struct Permissions {
    rules: RwLock<HashMap<TenantId, Arc<Vec<PermissionRule>>>>,
    cache: Mutex<HashMap<CacheKey, (Arc<ResolvedPermissions>, Timestamp)>>,
    clock: Arc<dyn Clock>,
    store: Option<Arc<dyn PermissionStore>>,
    ttl: i64,
    capacity: usize,
    merge: Merge,
    hits: AtomicU64,
    misses: AtomicU64,
}

impl std::fmt::Debug for Permissions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Permissions")
            .field("ttl", &self.ttl)
            .field("capacity", &self.capacity)
            .field("merge", &self.merge)
            .field("persistent", &self.store.is_some())
            .finish_non_exhaustive()
    }
}

impl Permissions {
    /// No rules, no store; resolutions cached for 10 minutes of `clock`, at most
    /// [`DEFAULT_PERMISSION_CACHE_ENTRIES`]; [`Merge::MostSpecific`].
    pub fn new(clock: Arc<dyn Clock>) -> Permissions {
        Permissions {
            rules: RwLock::new(HashMap::new()),
            cache: Mutex::new(HashMap::new()),
            clock,
            store: None,
            ttl: 10 * 60 * 1000,
            capacity: DEFAULT_PERMISSION_CACHE_ENTRIES,
            merge: Merge::MostSpecific,
            hits: AtomicU64::new(0),
            misses: AtomicU64::new(0),
        }
    }

    /// Persists rules in `store`: [`Permissions::load`] reads a tenant's rules from it and
    /// [`Permissions::put_rule`], [`Permissions::delete_rule`] and
    /// [`Permissions::replace_rules`] write through it before changing memory.
    pub fn with_store(mut self, store: Arc<dyn PermissionStore>) -> Permissions {
        self.store = Some(store);
        self
    }

    /// The store rules persist in (and the gate keeps approval records in), when there is
    /// one.
    pub fn store(&self) -> Option<&Arc<dyn PermissionStore>> {
        self.store.as_ref()
    }

    /// The same caching for `millis` (0: no caching).
    pub fn with_ttl(mut self, millis: i64) -> Permissions {
        self.ttl = millis;
        self
    }

    /// At most `entries` cached resolutions (0: no caching).
    pub fn with_capacity(mut self, entries: usize) -> Permissions {
        self.capacity = entries;
        self
    }

    /// The same merging scopes by `merge`.
    pub fn with_merge(mut self, merge: Merge) -> Permissions {
        self.merge = merge;
        self
    }

    /// Reads `tenant`'s rules from the store into memory (replacing what memory held) and
    /// drops the tenant's cached resolutions; returns how many rules were loaded. Without a
    /// store, keeps memory as it is and returns its count.
    pub async fn load(&self, tenant: &TenantId) -> Result<usize, Error> {
        let Some(store) = &self.store else {
            return Ok(self.rules(tenant).len());
        };
        let mut rules = Vec::new();
        for record in store.list_rules(tenant).await? {
            let rule: PermissionRule = serde_json::from_value(record.rule).map_err(|e| {
                skills_store_traits::Error::backend(format!(
                    "stored permission rule `{}` does not decode: {e}",
                    record.id
                ))
            })?;
            rules.push(rule);
        }
        let count = rules.len();
        self.set_rules(tenant, rules);
        Ok(count)
    }

    /// Adds or replaces (by id) one rule: written to the store first (when there is one),
    /// then to memory; the cached resolutions it affects are dropped.
    pub async fn put_rule(&self, tenant: &TenantId, rule: PermissionRule) -> Result<(), Error> {
        if let Some(store) = &self.store {
            store.put_rule(tenant, &rule.id, to_json(&rule)?).await?;
        }
        self.upsert_rule(tenant, rule);
        Ok(())
    }

    /// Removes one rule from the store (when there is one) and memory; true when it existed
    /// in either.
    pub async fn delete_rule(&self, tenant: &TenantId, id: &str) -> Result<bool, Error> {
        let stored = match &self.store {
            Some(store) => store.delete_rule(tenant, id).await?,
            None => false,
        };
        Ok(self.remove_rule(tenant, id) || stored)
    }

    /// Makes `rules` the tenant's whole rule set, in the store atomically (when there is one)
    /// and then in memory.
    pub async fn replace_rules(
        &self,
        tenant: &TenantId,
        rules: Vec<PermissionRule>,
    ) -> Result<(), Error> {
        if let Some(store) = &self.store {
            let records = rules
                .iter()
                .map(|rule| Ok((rule.id.clone(), to_json(rule)?)))
                .collect::<Result<Vec<_>, Error>>()?;
            store.replace_rules(tenant, records).await?;
        }
        self.set_rules(tenant, rules);
        Ok(())
    }

    /// Replaces `tenant`'s rules in memory only; its cached resolutions are dropped.
    pub fn set_rules(&self, tenant: &TenantId, rules: Vec<PermissionRule>) {
        {
            let mut all = self.rules.write().unwrap_or_else(PoisonError::into_inner);
            all.insert(tenant.clone(), Arc::new(rules));
        }
        self.invalidate(tenant);
    }

    /// Adds or replaces (by id) one rule of `tenant` in memory only; the cached resolutions
    /// of skills the old or new rule targets are dropped.
    pub fn upsert_rule(&self, tenant: &TenantId, rule: PermissionRule) {
        let mut targets = vec![rule.target.clone()];
        {
            let mut all = self.rules.write().unwrap_or_else(PoisonError::into_inner);
            let entry = all.entry(tenant.clone()).or_default();
            let rules = Arc::make_mut(entry);
            targets.extend(
                rules
                    .iter()
                    .filter(|r| r.id == rule.id)
                    .map(|r| r.target.clone()),
            );
            rules.retain(|r| r.id != rule.id);
            rules.push(rule);
        }
        self.invalidate_targets(tenant, &targets);
    }

    /// Removes a rule of `tenant` from memory only; true when it existed. The cached
    /// resolutions of skills it targeted are dropped.
    pub fn remove_rule(&self, tenant: &TenantId, id: &str) -> bool {
        let removed: Vec<Target> = {
            let mut all = self.rules.write().unwrap_or_else(PoisonError::into_inner);
            all.get_mut(tenant).map_or_else(Vec::new, |rules| {
                let rules = Arc::make_mut(rules);
                let gone = rules
                    .iter()
                    .filter(|r| r.id == id)
                    .map(|r| r.target.clone())
                    .collect();
                rules.retain(|r| r.id != id);
                gone
            })
        };
        self.invalidate_targets(tenant, &removed);
        !removed.is_empty()
    }

    /// `tenant`'s rules.
    pub fn rules(&self, tenant: &TenantId) -> Vec<PermissionRule> {
        let all = self.rules.read().unwrap_or_else(PoisonError::into_inner);
        all.get(tenant)
            .map(|r| r.as_ref().clone())
            .unwrap_or_default()
    }

    /// Drops all of `tenant`'s cached resolutions (for hosts whose rules change elsewhere).
    pub fn invalidate(&self, tenant: &TenantId) {
        let mut cache = self.cache.lock().unwrap_or_else(PoisonError::into_inner);
        cache.retain(|key, _| key.tenant != *tenant);
    }

    /// Drops `tenant`'s cached resolutions for one skill (seed 003's
    /// `skill:perm:{orgId}:{skillId}:*`).
    pub fn invalidate_skill(&self, tenant: &TenantId, skill_id: &str) {
        self.invalidate_targets(tenant, &[Target::Skill(skill_id.to_owned())]);
    }

    fn invalidate_targets(&self, tenant: &TenantId, targets: &[Target]) {
        let mut cache = self.cache.lock().unwrap_or_else(PoisonError::into_inner);
        cache.retain(|key, _| {
            key.tenant != *tenant || !targets.iter().any(|t| t.matches(&key.skill))
        });
    }

    /// How many resolutions are cached.
    pub fn cached(&self) -> usize {
        self.cache
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .len()
    }

    /// Cache hits and misses of [`Permissions::resolve`] so far.
    pub fn cache_stats(&self) -> (u64, u64) {
        (
            self.hits.load(Ordering::Relaxed),
            self.misses.load(Ordering::Relaxed),
        )
    }

    /// The resolved permissions of `principal` for `skill`, from the cache when fresh.
    pub fn resolve(&self, principal: &Principal, skill: &SkillTarget) -> Arc<ResolvedPermissions> {
        let now = self.clock.now();
        let mut roles = principal.roles.clone();
        roles.sort();
        roles.dedup();
        let key = CacheKey {
            tenant: principal.tenant.clone(),
            skill: skill.clone(),
            agent: principal.agent.clone(),
            team: principal.team.clone(),
            roles,
        };
        let caching = self.ttl > 0 && self.capacity > 0;
        if caching {
            let cache = self.cache.lock().unwrap_or_else(PoisonError::into_inner);
            if let Some((resolved, expires)) = cache.get(&key)
                && now < *expires
            {
                self.hits.fetch_add(1, Ordering::Relaxed);
                return resolved.clone();
            }
        }
        self.misses.fetch_add(1, Ordering::Relaxed);
        // Resolve under the rules' read lock so a concurrent change cannot slip between the
        // read and the cache insert unnoticed: changes invalidate after releasing the write
        // lock, and this insert happens before that invalidation can run.
        let all = self.rules.read().unwrap_or_else(PoisonError::into_inner);
        let rules = all.get(&principal.tenant).cloned().unwrap_or_default();
        let resolved = Arc::new(resolve(&rules, principal, skill, self.merge));
        if caching {
            let mut cache = self.cache.lock().unwrap_or_else(PoisonError::into_inner);
            if cache.len() >= self.capacity && !cache.contains_key(&key) {
                cache.retain(|_, (_, expires)| now < *expires);
                while cache.len() >= self.capacity {
                    let Some(soonest) = cache
                        .iter()
                        .min_by_key(|(_, (_, expires))| *expires)
                        .map(|(k, _)| k.clone())
                    else {
                        break;
                    };
                    cache.remove(&soonest);
                }
            }
            cache.insert(key, (resolved.clone(), now.saturating_add(self.ttl)));
        }
        drop(all);
        resolved
    }
}

fn to_json(rule: &PermissionRule) -> Result<serde_json::Value, Error> {
    serde_json::to_value(rule).map_err(|e| {
        Error::Store(skills_store_traits::Error::backend(format!(
            "permission rule `{}` does not encode: {e}",
            rule.id
        )))
    })
}

#[cfg(test)]
mod tests;
