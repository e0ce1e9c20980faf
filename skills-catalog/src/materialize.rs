//! The host-side cache: a stored skill written to `<cache>/<skill-id>/` (seed 002 section 3).
//!
//! Lazy: [`Materializer::materialize`] writes only when the directory is missing or differs
//! from the stored checksums (a partial write, a hand edit, a stale version), and then
//! rewrites it atomically through a temporary directory and a rename (see [`crate::tree`]),
//! so a crash never leaves a half-written skill under its real name. The cache can be
//! deleted at any time; it is rebuilt from the store.
//!
//! Skill ids become directory names, so the store's ids must be unique across the tenants
//! that share one cache root (the in-memory store's UUIDs are); give each tenant its own
//! root otherwise.

use std::path::{Path, PathBuf};

use skills_store_traits::{SkillStore, TenantId};

use crate::error::{Error, Result};
use crate::stored::StoredSkill;
use crate::tree;

/// Writes stored skills into a cache directory.
#[derive(Debug, Clone)]
pub struct Materializer {
    root: PathBuf,
}

/// What [`Materializer::materialize`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Materialized {
    /// `<cache>/<skill-id>`.
    pub path: PathBuf,
    /// Whether the directory was (re)written; `false` when it was already up to date.
    pub written: bool,
}

impl Materializer {
    /// A cache rooted at `root` (created on first use if its parent exists).
    pub fn new(root: impl Into<PathBuf>) -> Self {
        Materializer { root: root.into() }
    }

    /// The cache root.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Where a skill's directory lives, when `skill_id` is a valid directory name.
    pub fn path_for(&self, skill_id: &str) -> Result<PathBuf> {
        check_id(&self.root, skill_id)?;
        Ok(tree::child(&self.root, skill_id))
    }

    /// Ensures `<cache>/<skill-id>/` holds exactly the stored skill, writing it atomically
    /// when missing or stale.
    ///
    /// ```
    /// # futures::executor::block_on(async {
    /// use skills_catalog::Materializer;
    /// use skills_store_traits::{in_memory::InMemorySkillStore, NewSkill, SkillStore, TenantId};
    ///
    /// let store = InMemorySkillStore::new();
    /// let tenant = TenantId::new("acme");
    /// let skill = store.create_skill(&tenant, NewSkill::new("Hi", "hi", "# Hi\n").with_file("a.md", "a")).await?;
    /// let cache = tempfile::tempdir()?;
    /// let materializer = Materializer::new(cache.path().join("skills"));
    /// let first = materializer.materialize(&store, &tenant, &skill.id).await?;
    /// assert!(first.written && first.path.join("a.md").is_file());
    /// let again = materializer.materialize(&store, &tenant, &skill.id).await?;
    /// assert!(!again.written, "up to date: nothing rewritten");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// # }).unwrap();
    /// ```
    pub async fn materialize(
        &self,
        store: &dyn SkillStore,
        tenant: &TenantId,
        skill_id: &str,
    ) -> Result<Materialized> {
        check_id(&self.root, skill_id)?;
        let skill = StoredSkill::load(store, tenant, skill_id).await?;
        self.materialize_stored(&skill)
    }

    /// [`Materializer::materialize`] for a skill already read from the store.
    pub fn materialize_stored(&self, skill: &StoredSkill) -> Result<Materialized> {
        let id = &skill.record.id;
        check_id(&self.root, id)?;
        tree::ensure_root(&self.root, true)?;
        let path = tree::child(&self.root, id);
        let fresh = tree::snapshot(&self.root, id)?
            .is_some_and(|snap| snap.matches(&skill.expected_hashes()));
        if !fresh {
            tree::replace(&self.root, id, &skill.file_bytes()?)?;
        }
        Ok(Materialized {
            path,
            written: !fresh,
        })
    }

    /// The bytes of a stored skill as the cache holds them: materialized first when missing
    /// or stale, then read back from `<cache>/<skill-id>/` and checked against the stored
    /// checksums. This is the middle step of seed 002's DB → cache → sandbox chain.
    pub fn files(&self, skill: &StoredSkill) -> Result<Vec<(String, Vec<u8>)>> {
        self.materialize_stored(skill)?;
        tree::read_checked(&self.root, &skill.record.id, &skill.expected_hashes())
    }

    /// Deletes a skill's cached directory (after an edit or a delete); `false` when there
    /// was none.
    pub fn invalidate(&self, skill_id: &str) -> Result<bool> {
        check_id(&self.root, skill_id)?;
        match std::fs::symlink_metadata(&self.root) {
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(false),
            _ => tree::ensure_root(&self.root, false)?,
        }
        tree::remove(&self.root, skill_id)
    }
}

/// Skill ids are used as directory names: ASCII letters, digits, `-` and `_`, at most 128.
fn check_id(root: &Path, id: &str) -> Result<()> {
    let ok = !id.is_empty()
        && id.len() <= 128
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
    if ok {
        Ok(())
    } else {
        Err(Error::UnsafePath {
            path: root.join(id),
            reason: "a skill id used as a cache directory name must be ASCII letters, digits, `-` or `_`",
        })
    }
}
