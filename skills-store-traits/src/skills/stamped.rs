//! Decoded [`ResolvableSkill`]s that a SQL backend keeps between resolutions, each valid for
//! exactly one version of its stored row, named by a *stamp* the database assigns.
//!
//! Why: once resolving read one row per skill (`SkillStore::resolvable_skills`), what was
//! left of a resolution on SQLite and PostgreSQL was decoding those rows (each skill's
//! `SKILL.md` text, listing, tags and metadata copied and parsed on every call) for a
//! catalog that rarely changes between two calls. With stamps, a resolution asks the
//! database only which skills reach the agent, at which stamp, with which assignment fields
//! ([`ReachedSkill`]), and decodes a skill again only when its row changed.
//!
//! **Guarantee.** A cached skill is served only for the exact tenant, id and stamp it was
//! decoded from. The database assigns the stamp itself on every insert and update of the
//! row, from a counter that never repeats (a sequence on PostgreSQL, a counter row on
//! SQLite), in triggers, so SQL run beside the store restamps a row as the store's own
//! writes do. Every field of the projection except the assignment fields is a column of the
//! skill row (the file listing and `skill.json` text are kept there by triggers on the file
//! table), and the assignment fields come from the resolving query itself: a hit equals what
//! decoding the row again would give. A skill that is disabled, deleted or no longer
//! assigned is simply not among the reached rows. Every resolution reads the assignments
//! afresh, and either the stamps or (PostgreSQL) the tenant's *catalog version*, a value the
//! database draws afresh in the same transaction as any write of the tenant's skill rows:
//! while it is unchanged, no skill row of the tenant changed ([`StampedProjections::at_version`]).
//!
//! **What it does not survive.** Writes with the triggers switched off (`DISABLE TRIGGER`,
//! `session_replication_role = replica`, a replica fed by logical replication without the
//! stamp and version columns), and a database restored from a backup under a running store
//! (the counter goes back, so a stamp can come round again with other content): restart the
//! stores, or open them with no budget, in those cases.
//!
//! **Bounded.** At most the budget's bytes of decoded text are held (an estimate: the
//! strings' lengths plus a fixed overhead per skill, per file and per remembered exclusion);
//! past it the least recently used entries are dropped until a quarter of the budget is
//! free. A budget of zero keeps nothing.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{RwLock, RwLockReadGuard, RwLockWriteGuard};

use super::ResolvableSkill;
use super::resolvable::sort_by_slug;

/// One skill reaching an agent as the resolving query returns it: its id, the stamp of its
/// stored row, and the assignment fields of the enabled assignments reaching the agent
/// (grouped with [`group_reached`] when the query returns one row per assignment).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ReachedSkill {
    /// The skill's record id.
    pub id: String,
    /// The database's stamp of the skill row this answer saw.
    pub stamp: i64,
    /// The highest priority among the assignments.
    pub priority: i64,
    /// Whether any of the assignments asks for auto-injection.
    pub auto_inject: bool,
}

impl ReachedSkill {
    /// One reached skill (or one assignment of it, before grouping).
    pub fn new(id: impl Into<String>, stamp: i64, priority: i64, auto_inject: bool) -> Self {
        ReachedSkill {
            id: id.into(),
            stamp,
            priority,
            auto_inject,
        }
    }
}

/// Merges rows of the same skill (one per assignment reaching the agent) into one: the
/// highest priority, any auto-inject. The order of first appearance is kept.
pub fn group_reached(rows: impl IntoIterator<Item = ReachedSkill>) -> Vec<ReachedSkill> {
    let mut grouped: Vec<ReachedSkill> = Vec::new();
    let mut at: HashMap<String, usize> = HashMap::new();
    for row in rows {
        match at.get(&row.id) {
            Some(&index) => {
                let entry = &mut grouped[index];
                entry.priority = entry.priority.max(row.priority);
                entry.auto_inject |= row.auto_inject;
            }
            None => {
                at.insert(row.id.clone(), grouped.len());
                grouped.push(row);
            }
        }
    }
    grouped
}

/// The whole projection as a SQL backend reads it, one row per assignment: a skill's
/// columns are decoded on its first row only ([`StampedRows::merge`] says whether the
/// skill was seen), the later rows only raise its priority and auto-inject.
#[derive(Debug, Default)]
pub struct StampedRows {
    skills: Vec<(i64, ResolvableSkill)>,
    at: HashMap<String, usize>,
}

impl StampedRows {
    /// Merges one more assignment of skill `id` into it if the skill was seen (`true`);
    /// `false` when it was not, and the caller decodes the row and [`push`](Self::push)es it.
    pub fn merge(&mut self, id: &str, priority: i64, auto_inject: bool) -> bool {
        let Some(&index) = self.at.get(id) else {
            return false;
        };
        let (_, skill) = &mut self.skills[index];
        skill.priority = skill.priority.max(priority);
        skill.auto_inject |= auto_inject;
        true
    }

    /// Adds a skill seen for the first time, at `stamp`, with its first row's assignment
    /// fields.
    pub fn push(
        &mut self,
        stamp: i64,
        mut skill: ResolvableSkill,
        priority: i64,
        auto_inject: bool,
    ) {
        skill.priority = priority;
        skill.auto_inject = auto_inject;
        self.at.insert(skill.id.clone(), self.skills.len());
        self.skills.push((stamp, skill));
    }

    /// The skills with their stamps, ordered by slug.
    pub fn into_sorted(mut self) -> Vec<(i64, ResolvableSkill)> {
        self.skills
            .sort_unstable_by(|(_, a), (_, b)| a.slug.cmp(&b.slug));
        self.skills
    }
}

/// One enabled assignment reaching an agent, as a catalog-version answer reads it (no
/// stamp: see [`StampedProjections::at_version`]).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ReachingAssignment {
    /// The skill it attaches.
    pub skill_id: String,
    /// Its priority.
    pub priority: i64,
    /// Whether it asks for auto-injection.
    pub auto_inject: bool,
}

impl ReachingAssignment {
    /// One assignment.
    pub fn new(skill_id: impl Into<String>, priority: i64, auto_inject: bool) -> Self {
        ReachingAssignment {
            skill_id: skill_id.into(),
            priority,
            auto_inject,
        }
    }
}

/// The default budget of a [`StampedProjections`]: 32 MiB of decoded text.
pub const DEFAULT_PROJECTION_BUDGET: usize = 32 * 1024 * 1024;

/// What a decoded skill is counted as beyond its strings' bytes.
const ENTRY_OVERHEAD: usize = 512;
/// What each listed file is counted as beyond its path and type.
const FILE_OVERHEAD: usize = 64;
/// What each remembered exclusion is counted as beyond its id.
const EXCLUDED_OVERHEAD: usize = 64;

/// What [`StampedProjections::lookup`] found for one tenant: the skills held at their
/// stamps and the reached skills that were not.
#[derive(Debug)]
pub struct Lookup {
    tenant: String,
    hits: Vec<ResolvableSkill>,
    /// The stamp each hit was held at, in the order of `hits`.
    hit_stamps: Vec<i64>,
    misses: Vec<ReachedSkill>,
    /// The catalog version the stamps were read at, and the assigned skills that were
    /// disabled or gone at it ([`StampedProjections::lookup_at_version`]).
    version: Option<(i64, Vec<String>)>,
}

impl Lookup {
    /// Whether every reached skill was held at its stamp.
    pub fn is_complete(&self) -> bool {
        self.misses.is_empty()
    }

    /// The ids of the reached skills that were not held at their stamps, for the backend
    /// to read.
    pub fn missing_ids(&self) -> Vec<String> {
        self.misses.iter().map(|m| m.id.clone()).collect()
    }
}

/// Decoded resolvable skills by tenant, id and stamp (see the module documentation for what
/// a hit guarantees). Shared by the clones of one store; `Send + Sync`.
#[derive(Debug)]
pub struct StampedProjections {
    budget: usize,
    state: RwLock<Cached>,
    /// The use counter entries are marked with (least recently used goes first).
    clock: AtomicU64,
}

#[derive(Debug, Default)]
struct Cached {
    tenants: HashMap<String, Held>,
    bytes: usize,
}

/// What is held for one tenant.
#[derive(Debug, Default)]
struct Held {
    skills: HashMap<String, Entry>,
    /// Assigned skills seen disabled or gone, by the catalog version they were seen at.
    excluded: HashMap<String, i64>,
    /// Whether any entry was ever seen at a catalog version.
    versioned: bool,
}

#[derive(Debug)]
struct Entry {
    stamp: i64,
    /// The catalog version at which the stamp was last seen current, if any.
    verified: Option<i64>,
    /// The skill with its assignment fields zeroed.
    skill: ResolvableSkill,
    bytes: usize,
    /// When it was last kept or served (a value of the cache's clock).
    used: AtomicU64,
}

impl StampedProjections {
    /// A cache holding at most `budget` bytes of decoded text (zero: nothing).
    pub fn new(budget: usize) -> Self {
        StampedProjections {
            budget,
            state: RwLock::new(Cached::default()),
            clock: AtomicU64::new(0),
        }
    }

    /// Whether this cache keeps anything (a budget above zero). A backend asks the
    /// database for stamps only when it does.
    pub fn enabled(&self) -> bool {
        self.budget > 0
    }

    /// Splits `reached` into the skills held at exactly their stamps (copied, with the
    /// assignment fields of `reached`) and the misses, whose rows the backend then reads
    /// by id and hands to [`StampedProjections::complete`].
    ///
    /// ```
    /// use skills_store_traits::{ResolvableSkill, ReachedSkill, StampedProjections};
    ///
    /// let cache = StampedProjections::new(1 << 20);
    /// cache.remember("acme", &[(7, ResolvableSkill::new("id-1", "pdf"))]);
    /// let reached = vec![ReachedSkill::new("id-1", 7, 3, true), ReachedSkill::new("id-2", 9, 0, false)];
    /// let lookup = cache.lookup("acme", reached);
    /// assert_eq!(lookup.missing_ids(), ["id-2"]);
    /// // The backend reads the missing row (here: at the stamp the first answer saw).
    /// let fetched = vec![(9, ResolvableSkill::new("id-2", "csv"))];
    /// let skills = cache.complete(lookup, fetched).unwrap();
    /// assert_eq!((skills[1].slug.as_str(), skills[1].priority, skills[1].auto_inject), ("pdf", 3, true));
    /// // Another stamp (the row changed) or another tenant is a miss.
    /// assert!(!cache.lookup("acme", vec![ReachedSkill::new("id-1", 8, 3, true)]).is_complete());
    /// assert!(!cache.lookup("other", vec![ReachedSkill::new("id-1", 7, 3, true)]).is_complete());
    /// ```
    pub fn lookup(&self, tenant: &str, reached: Vec<ReachedSkill>) -> Lookup {
        let mut lookup = Lookup {
            tenant: tenant.to_owned(),
            hits: Vec::with_capacity(reached.len()),
            hit_stamps: Vec::with_capacity(reached.len()),
            misses: Vec::new(),
            version: None,
        };
        let state = self.read();
        let held = state.as_ref().and_then(|state| state.tenants.get(tenant));
        let now = self.tick();
        for one in reached {
            match held.and_then(|held| held.skills.get(one.id.as_str())) {
                Some(entry) if entry.stamp == one.stamp => {
                    entry.used.store(now, Ordering::Relaxed);
                    lookup
                        .hits
                        .push(with_fields(&entry.skill, one.priority, one.auto_inject));
                    lookup.hit_stamps.push(one.stamp);
                }
                _ => lookup.misses.push(one),
            }
        }
        lookup
    }

    /// [`StampedProjections::lookup`] for stamps read in the same snapshot as the tenant's
    /// catalog version `version` (a value the database draws afresh, in the same
    /// transaction, whenever any skill row of the tenant is written), with `excluded`, the
    /// assigned skills that were disabled or gone in that snapshot. Completing it records
    /// that every reached skill's stamp, and every exclusion, held at that version, which
    /// is what [`StampedProjections::at_version`] answers from.
    pub fn lookup_at_version(
        &self,
        tenant: &str,
        version: i64,
        reached: Vec<ReachedSkill>,
        excluded: Vec<String>,
    ) -> Lookup {
        let mut lookup = self.lookup(tenant, reached);
        lookup.version = Some((version, excluded));
        lookup
    }

    /// The whole answer: `lookup`'s hits and its misses from `fetched` (the rows the
    /// backend read by id in the lookup's tenant, each with its stamp), with the assignment
    /// fields of the first answer, ordered by slug; the fetched skills are remembered.
    /// `None` when a miss was not fetched at exactly the stamp the first answer saw (the
    /// row changed, or went, between the two reads): the backend then answers from one
    /// read of every column.
    pub fn complete(
        &self,
        lookup: Lookup,
        fetched: Vec<(i64, ResolvableSkill)>,
    ) -> Option<Vec<ResolvableSkill>> {
        let Lookup {
            tenant,
            mut hits,
            hit_stamps,
            misses,
            version,
        } = lookup;
        let mut by_id: HashMap<&str, &(i64, ResolvableSkill)> = fetched
            .iter()
            .map(|entry| (entry.1.id.as_str(), entry))
            .collect();
        let mut found = Vec::with_capacity(misses.len());
        for miss in &misses {
            let (stamp, skill) = by_id.remove(miss.id.as_str())?;
            if *stamp != miss.stamp {
                return None;
            }
            found.push(with_fields(skill, miss.priority, miss.auto_inject));
        }
        self.keep(&tenant, &fetched, version.as_ref().map(|(v, _)| *v));
        if let Some((version, excluded)) = &version {
            self.verify(&tenant, *version, &hits, &hit_stamps, excluded);
        }
        hits.append(&mut found);
        sort_by_slug(&mut hits);
        Some(hits)
    }

    /// The answer from the cache alone when the tenant's catalog version is still
    /// `version` and every skill `assignments` attach was seen at it (held, or excluded):
    /// no skill row of the tenant can have changed since, so no stamp needs reading. The
    /// assignments themselves are the caller's fresh read. `None` otherwise.
    pub fn at_version(
        &self,
        tenant: &str,
        version: i64,
        assignments: &[ReachingAssignment],
    ) -> Option<Vec<ResolvableSkill>> {
        let state = self.read()?;
        let held = state.tenants.get(tenant)?;
        let now = self.tick();
        let mut at: HashMap<&str, usize> = HashMap::new();
        let mut skills: Vec<ResolvableSkill> = Vec::new();
        for one in assignments {
            let id = one.skill_id.as_str();
            if let Some(&index) = at.get(id) {
                let skill = &mut skills[index];
                skill.priority = skill.priority.max(one.priority);
                skill.auto_inject |= one.auto_inject;
                continue;
            }
            match held.skills.get(id) {
                Some(entry) if entry.verified == Some(version) => {
                    entry.used.store(now, Ordering::Relaxed);
                    at.insert(id, skills.len());
                    skills.push(with_fields(&entry.skill, one.priority, one.auto_inject));
                }
                _ if held.excluded.get(id) == Some(&version) => {}
                _ => return None,
            }
        }
        drop(state);
        sort_by_slug(&mut skills);
        Some(skills)
    }

    /// Whether anything of `tenant` was ever seen at a catalog version (so
    /// [`StampedProjections::at_version`] can answer at all).
    pub fn has_versions(&self, tenant: &str) -> bool {
        self.read()
            .is_some_and(|state| state.tenants.get(tenant).is_some_and(|held| held.versioned))
    }

    /// Keeps `skills` (each with the stamp of the row it was decoded from) for `tenant`,
    /// replacing what was held for the same ids.
    pub fn remember(&self, tenant: &str, skills: &[(i64, ResolvableSkill)]) {
        self.keep(tenant, skills, None);
    }

    /// Keeps `skills`, seen at catalog version `verified` if given; past the budget the
    /// least recently used entries go (a skill larger than the whole budget is not kept).
    fn keep(&self, tenant: &str, skills: &[(i64, ResolvableSkill)], verified: Option<i64>) {
        let Some(mut state) = self.write() else {
            return;
        };
        let now = self.tick();
        for (stamp, skill) in skills {
            let bytes = estimated_bytes(skill);
            if bytes > self.budget {
                continue;
            }
            let entry = Entry {
                stamp: *stamp,
                verified,
                skill: with_fields(skill, 0, false),
                bytes,
                used: AtomicU64::new(now),
            };
            let Cached {
                tenants,
                bytes: total,
            } = &mut *state;
            let held = tenants.entry(tenant.to_owned()).or_default();
            held.versioned |= verified.is_some();
            if held.excluded.remove(skill.id.as_str()).is_some() {
                *total = total.saturating_sub(excluded_bytes(&skill.id));
            }
            if let Some(old) = held.skills.insert(skill.id.clone(), entry) {
                *total = total.saturating_sub(old.bytes);
            }
            *total = total.saturating_add(bytes);
        }
        self.evict(&mut state);
    }

    /// Records that `hits` (at `stamps`) and `excluded` held at `version`. An entry that
    /// another resolution replaced meanwhile (another stamp) is left unverified.
    fn verify(
        &self,
        tenant: &str,
        version: i64,
        hits: &[ResolvableSkill],
        stamps: &[i64],
        excluded: &[String],
    ) {
        if hits.is_empty() && excluded.is_empty() {
            return;
        }
        let Some(mut state) = self.write() else {
            return;
        };
        let Cached { tenants, bytes } = &mut *state;
        let held = tenants.entry(tenant.to_owned()).or_default();
        held.versioned = true;
        for (hit, stamp) in hits.iter().zip(stamps) {
            if let Some(entry) = held.skills.get_mut(hit.id.as_str())
                && entry.stamp == *stamp
            {
                entry.verified = Some(version);
            }
        }
        for id in excluded {
            if let Some(old) = held.skills.remove(id.as_str()) {
                *bytes = bytes.saturating_sub(old.bytes);
            }
            if held.excluded.insert(id.clone(), version).is_none() {
                *bytes = bytes.saturating_add(excluded_bytes(id));
            }
        }
        self.evict(&mut state);
    }

    /// Past the budget, drops the least recently used entries (and then exclusions) until
    /// a quarter of the budget is free: one sort per quarter budget of new entries.
    fn evict(&self, state: &mut Cached) {
        if state.bytes <= self.budget {
            return;
        }
        let target = self.budget - self.budget / 4;
        let mut by_use: Vec<(u64, String, String)> = state
            .tenants
            .iter()
            .flat_map(|(tenant, held)| {
                held.skills.iter().map(move |(id, entry)| {
                    (
                        entry.used.load(Ordering::Relaxed),
                        tenant.clone(),
                        id.clone(),
                    )
                })
            })
            .collect();
        by_use.sort_unstable();
        for (_, tenant, id) in by_use {
            if state.bytes <= target {
                break;
            }
            if let Some(held) = state.tenants.get_mut(&tenant)
                && let Some(old) = held.skills.remove(&id)
            {
                state.bytes = state.bytes.saturating_sub(old.bytes);
            }
        }
        if state.bytes > target {
            // What is left is exclusions: they are cheap to learn again.
            for held in state.tenants.values_mut() {
                held.excluded.clear();
            }
            state.bytes = state
                .tenants
                .values()
                .flat_map(|held| held.skills.values())
                .map(|entry| entry.bytes)
                .sum();
        }
        state
            .tenants
            .retain(|_, held| !held.skills.is_empty() || !held.excluded.is_empty());
    }

    /// How many skills are held (for tests and diagnostics).
    pub fn len(&self) -> usize {
        self.read().map_or(0, |state| {
            state.tenants.values().map(|h| h.skills.len()).sum()
        })
    }

    /// Whether nothing is held.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The bytes held, as counted against the budget (for tests and diagnostics).
    pub fn bytes(&self) -> usize {
        self.read().map_or(0, |state| state.bytes)
    }

    fn tick(&self) -> u64 {
        self.clock.fetch_add(1, Ordering::Relaxed)
    }

    /// The state to read, unless the cache is off. A lock poisoned by a panic elsewhere
    /// is a miss (the rows are decoded again) until a writer starts the cache over.
    fn read(&self) -> Option<RwLockReadGuard<'_, Cached>> {
        if !self.enabled() {
            return None;
        }
        self.state.read().ok()
    }

    /// The state to change, unless the cache is off. A poisoned lock is recovered by
    /// starting over (a panic may have left the byte count wrong, never an entry at a
    /// stamp it was not decoded from: entries are inserted whole).
    fn write(&self) -> Option<RwLockWriteGuard<'_, Cached>> {
        if !self.enabled() {
            return None;
        }
        Some(self.state.write().unwrap_or_else(|poisoned| {
            self.state.clear_poison();
            let mut state = poisoned.into_inner();
            *state = Cached::default();
            state
        }))
    }
}

impl Default for StampedProjections {
    /// A cache with [`DEFAULT_PROJECTION_BUDGET`].
    fn default() -> Self {
        StampedProjections::new(DEFAULT_PROJECTION_BUDGET)
    }
}

/// A copy of `skill` with these assignment fields.
fn with_fields(skill: &ResolvableSkill, priority: i64, auto_inject: bool) -> ResolvableSkill {
    let mut skill = skill.clone();
    skill.priority = priority;
    skill.auto_inject = auto_inject;
    skill
}

/// The bytes a remembered exclusion is counted as.
fn excluded_bytes(id: &str) -> usize {
    id.len().saturating_add(EXCLUDED_OVERHEAD)
}

/// The bytes a decoded skill is counted as.
fn estimated_bytes(skill: &ResolvableSkill) -> usize {
    let strings = [
        skill.id.len(),
        skill.slug.len(),
        skill.name.len(),
        skill.description.as_ref().map_or(0, String::len),
        skill.category.len(),
        skill.plugin_id.as_ref().map_or(0, String::len),
        skill.content.len(),
        skill.version.as_ref().map_or(0, String::len),
        skill.trust_level.as_ref().map_or(0, String::len),
        skill.manifest.as_ref().map_or(0, String::len),
        skill.tags.iter().map(String::len).sum(),
        skill.requires_tools.iter().map(String::len).sum(),
        skill
            .files
            .iter()
            .map(|f| f.relative_path.len() + f.content_type.len() + FILE_OVERHEAD)
            .sum(),
        // The metadata values are small JSON values; counted by their text.
        skill
            .metadata_status
            .as_ref()
            .map_or(0, |v| v.to_string().len()),
        skill
            .metadata_layer
            .as_ref()
            .map_or(0, |v| v.to_string().len()),
    ];
    strings
        .iter()
        .fold(ENTRY_OVERHEAD, |sum, n| sum.saturating_add(*n))
}

#[cfg(test)]
mod tests;
