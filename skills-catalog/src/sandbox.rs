//! Where sandbox sync writes: an agent's skills directory (`<sandbox>/.skills/`), behind a
//! trait so hosts can target remote sandboxes.
//!
//! Every method names a skill directory by one path component (a slug, or a leftover
//! temporary name); implementations must refuse anything else, must never follow a symlink
//! inside the skills directory, and must replace a skill directory atomically. The
//! [`LocalSandboxFs`] implementation holds these guarantees on a local directory (see
//! [`crate::tree`]); [`InMemorySandboxFs`] is for tests and for hosts that ship files some
//! other way.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use async_trait::async_trait;
use sha2::{Digest, Sha256};

use crate::error::{Error, Result};
use crate::tree::{self, DirSnapshot, EntryKind};

/// The default sandbox path of the skills directory (seed 002 section 4.2).
pub const DEFAULT_SANDBOX_SKILLS_DIR: &str = "/home/sprite/.skills";

/// An agent's skills directory.
#[async_trait]
pub trait SandboxFs: Send + Sync {
    /// The entries directly under the skills directory, sorted by name; creates the skills
    /// directory when it is missing.
    async fn list(&self) -> Result<Vec<(String, EntryKind)>>;
    /// What the skill directory `name` holds, or `None` when there is nothing there.
    async fn snapshot(&self, name: &str) -> Result<Option<DirSnapshot>>;
    /// Replaces the skill directory `name` with exactly `files`, atomically.
    async fn replace(&self, name: &str, files: &[(String, Vec<u8>)]) -> Result<()>;
    /// Removes the entry `name` (a directory with its contents, or a symlink itself);
    /// `false` when there was nothing.
    async fn remove(&self, name: &str) -> Result<bool>;
}

/// A skills directory on the local filesystem (for example a sandbox's bind-mounted home).
#[derive(Debug, Clone)]
pub struct LocalSandboxFs {
    root: PathBuf,
}

impl LocalSandboxFs {
    /// The skills directory `root` (usually `<sandbox home>/.skills`). It is created on first
    /// use if its parent exists; if it is a symlink every call is refused.
    pub fn new(root: impl Into<PathBuf>) -> Self {
        LocalSandboxFs { root: root.into() }
    }

    /// The skills directory.
    pub fn root(&self) -> &Path {
        &self.root
    }
}

#[async_trait]
impl SandboxFs for LocalSandboxFs {
    async fn list(&self) -> Result<Vec<(String, EntryKind)>> {
        tree::ensure_root(&self.root, true)?;
        tree::list(&self.root)
    }

    async fn snapshot(&self, name: &str) -> Result<Option<DirSnapshot>> {
        tree::ensure_root(&self.root, true)?;
        tree::snapshot(&self.root, name)
    }

    async fn replace(&self, name: &str, files: &[(String, Vec<u8>)]) -> Result<()> {
        tree::ensure_root(&self.root, true)?;
        tree::replace(&self.root, name, files)
    }

    async fn remove(&self, name: &str) -> Result<bool> {
        tree::ensure_root(&self.root, true)?;
        tree::remove(&self.root, name)
    }
}

/// One entry of an [`InMemorySandboxFs`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MemoryEntry {
    /// A skill directory: relative path to bytes.
    Dir(BTreeMap<String, Vec<u8>>),
    /// A symlink to the given target (never followed).
    Symlink(String),
    /// A plain file.
    File(Vec<u8>),
}

/// A skills directory in memory.
#[derive(Debug, Default)]
pub struct InMemorySandboxFs {
    entries: Mutex<BTreeMap<String, MemoryEntry>>,
}

impl InMemorySandboxFs {
    /// An empty skills directory.
    pub fn new() -> Self {
        Self::default()
    }

    /// Puts an entry in place directly (to seed a test).
    pub fn insert(&self, name: impl Into<String>, entry: MemoryEntry) {
        if let Ok(mut entries) = self.entries.lock() {
            entries.insert(name.into(), entry);
        }
    }

    /// A copy of every entry.
    pub fn entries(&self) -> BTreeMap<String, MemoryEntry> {
        self.entries.lock().map(|e| e.clone()).unwrap_or_default()
    }

    fn lock(&self) -> Result<std::sync::MutexGuard<'_, BTreeMap<String, MemoryEntry>>> {
        self.entries
            .lock()
            .map_err(|_| Error::Host("in-memory sandbox lock poisoned".into()))
    }
}

fn check_name(name: &str) -> Result<()> {
    tree::check_component(Path::new("."), name)
}

#[async_trait]
impl SandboxFs for InMemorySandboxFs {
    async fn list(&self) -> Result<Vec<(String, EntryKind)>> {
        Ok(self
            .lock()?
            .iter()
            .map(|(name, entry)| {
                let kind = match entry {
                    MemoryEntry::Dir(_) => EntryKind::Dir,
                    MemoryEntry::Symlink(_) => EntryKind::Symlink,
                    MemoryEntry::File(_) => EntryKind::File,
                };
                (name.clone(), kind)
            })
            .collect())
    }

    async fn snapshot(&self, name: &str) -> Result<Option<DirSnapshot>> {
        check_name(name)?;
        Ok(self.lock()?.get(name).map(|entry| match entry {
            MemoryEntry::Dir(files) => DirSnapshot {
                files: files
                    .iter()
                    .map(|(path, bytes)| (path.clone(), hex::encode(Sha256::digest(bytes))))
                    .collect(),
                foreign: false,
            },
            _ => DirSnapshot {
                files: BTreeMap::new(),
                foreign: true,
            },
        }))
    }

    async fn replace(&self, name: &str, files: &[(String, Vec<u8>)]) -> Result<()> {
        check_name(name)?;
        for (path, _) in files {
            skills_core::files::check_relative_path(path).map_err(|_| Error::UnsafePath {
                path: PathBuf::from(path),
                reason: "not a safe relative path",
            })?;
        }
        let dir = files.iter().cloned().collect();
        self.lock()?.insert(name.to_owned(), MemoryEntry::Dir(dir));
        Ok(())
    }

    async fn remove(&self, name: &str) -> Result<bool> {
        check_name(name)?;
        Ok(self.lock()?.remove(name).is_some())
    }
}
