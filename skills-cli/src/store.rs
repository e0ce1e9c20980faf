//! The embedded SQLite store: where it lives by default, and opening it.
//!
//! Default location, first that applies: `--store PATH`, `$SKILLS_STORE`,
//! `$XDG_DATA_HOME/skills/skills.db`, `$HOME/.local/share/skills/skills.db` (the XDG
//! default), `./.skills/skills.db`. The parent directory is created (mode 0700: the store
//! holds audit trails and skill content) when missing.

use std::path::{Path, PathBuf};

use std::sync::Arc;

use skills_security::audit::AuditTrail;
use skills_security::autonomy::Autonomy;
use skills_security::gate::PolicyGate;
use skills_security::permissions::{InMemoryRateLimiter, Permissions, Principal};
use skills_store_sqlite::SqliteStore;
use skills_store_traits::{Clock, SystemClock, TenantId};

use crate::cli::Global;
use crate::error::{CliError, Result};

/// The store file the flags and environment choose.
pub fn store_path(global: &Global) -> PathBuf {
    if let Some(path) = &global.store {
        return path.clone();
    }
    let non_empty = |var: &str| std::env::var_os(var).filter(|v| !v.is_empty());
    if let Some(data) = non_empty("XDG_DATA_HOME").map(PathBuf::from)
        && data.is_absolute()
    {
        return data.join("skills").join("skills.db");
    }
    if let Some(home) = non_empty("HOME").map(PathBuf::from)
        && home.is_absolute()
    {
        return home.join(".local/share/skills/skills.db");
    }
    PathBuf::from(".skills").join("skills.db")
}

/// The tenant the flags choose, refused when empty.
pub fn tenant(global: &Global) -> Result<TenantId> {
    let id = global.tenant.trim();
    if id.is_empty() || id.len() > 128 || id.chars().any(char::is_control) {
        return Err(CliError::Usage(
            "--tenant must be 1 to 128 printable characters".to_owned(),
        ));
    }
    Ok(TenantId::new(id))
}

/// Opens (creating when missing) the store at `path`.
pub async fn open(path: &Path) -> Result<SqliteStore> {
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty())
        && !parent.exists()
    {
        use std::os::unix::fs::DirBuilderExt;
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(parent)
            .map_err(|source| CliError::Io {
                action: "create the store directory",
                path: parent.to_path_buf(),
                source,
            })?;
    }
    SqliteStore::open(path)
        .await
        .map_err(|source| CliError::OpenStore {
            path: path.to_path_buf(),
            source,
        })
}

/// Opens the store only when its file exists (read commands do not create one).
pub async fn open_existing(path: &Path) -> Result<Option<SqliteStore>> {
    if !path.exists() {
        return Ok(None);
    }
    open(path).await.map(Some)
}

/// The policy gate the command decides with (`skills run`, `skills serve`): the store's
/// permission rules (loaded for `tenant`), its trust history and its audit chain; rate
/// limits in this process. The principal is the invoking user, acting as `agent` when one
/// is given.
pub async fn gate(
    db: &Arc<SqliteStore>,
    tenant: &TenantId,
    agent: Option<&str>,
) -> Result<(PolicyGate, Principal)> {
    let clock: Arc<dyn Clock> = Arc::new(SystemClock);
    let permissions = Permissions::new(clock.clone()).with_store(db.clone());
    permissions
        .load(tenant)
        .await
        .map_err(|e| CliError::Skill(format!("the permission rules could not be read: {e}")))?;
    let gate = PolicyGate::new(
        Arc::new(permissions),
        Arc::new(InMemoryRateLimiter::new()),
        Autonomy::new(db.clone(), clock.clone()),
        AuditTrail::new(db.clone()),
        clock,
    );
    let mut principal = Principal::new(tenant.clone(), crate::commands::install::user());
    if let Some(agent) = agent {
        principal = principal.agent(agent);
    }
    Ok((gate, principal))
}
