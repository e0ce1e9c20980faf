//! `skills audit verify`: `skills-security`'s chain verification over the store's audit log;
//! `skills audit list`: the trail's records, one line each ([`super::audit_list`]).
//!
//! Threat: someone with write access to the database file changing, deleting, inserting or
//! reordering audit entries. Guarantee: every entry of the tenant's chain is re-hashed and
//! its links checked from the first entry (`AuditTrail::verify`); the first broken link is
//! reported and the status is 1. A missing store is status 4 (`no store at …`), never
//! "intact". (What a hash chain alone cannot show — a re-hashed or cut
//! tail — needs checkpoints kept outside the store.)

use std::sync::Arc;

use serde::Serialize;
use serde_json::Value;
use skills_security::audit::{AuditTrail, ChainBreak};

use crate::cli::{AuditCommand, Global};
use crate::error::{CliError, Result, Status};
use crate::output::Output;
use crate::store;

/// The verification; fields in this order.
#[derive(Serialize)]
struct JsonVerify<'a> {
    tenant: &'a str,
    intact: bool,
    checked: u64,
    last_hash: &'a str,
    broken: Option<JsonBreak>,
}

/// The first broken link, flattened: `kind` is one word (`modified`, `deleted`,
/// `inserted`, `reordered`, `misnumbered`, ...), `message` says it for a person.
#[derive(Serialize)]
struct JsonBreak {
    sequence: u64,
    kind: String,
    message: String,
}

fn json_break(broken: &ChainBreak) -> JsonBreak {
    let kind = serde_json::to_value(&broken.kind)
        .ok()
        .and_then(|v| v.get("kind").and_then(Value::as_str).map(str::to_owned))
        .unwrap_or_default();
    JsonBreak {
        sequence: broken.sequence,
        kind,
        message: broken.to_string(),
    }
}

/// Runs an audit subcommand.
pub async fn run(command: &AuditCommand, global: &Global, out: Output) -> Result<Status> {
    match command {
        AuditCommand::Verify => verify(global, out).await,
        AuditCommand::List => super::audit_list::list(global, out).await,
    }
}

async fn verify(global: &Global, out: Output) -> Result<Status> {
    let tenant = store::tenant(global)?;
    let path = store::store_path(global);
    // No store is no evidence: saying "intact" of a chain nobody can read would let a
    // deleted (or mistyped) database pass a check.
    let Some(store) = store::open_existing(&path).await? else {
        return Err(CliError::NoStore(path));
    };
    let trail = AuditTrail::new(Arc::new(store));
    let verification = trail.verify(&tenant).await?;
    out.json(&JsonVerify {
        tenant: tenant.as_str(),
        intact: verification.is_intact(),
        checked: verification.checked,
        last_hash: &verification.last_hash,
        broken: verification.broken.as_ref().map(json_break),
    });
    match &verification.broken {
        None => {
            out.text(&format!(
                "audit chain of `{}` intact: {} entries checked\n",
                tenant.as_str(),
                verification.checked
            ));
            Ok(Status::Ok)
        }
        Some(broken) => {
            out.text(&format!(
                "audit chain of `{}` BROKEN: {broken} ({} entries intact before it)\n",
                tenant.as_str(),
                verification.checked
            ));
            Ok(Status::Failed)
        }
    }
}
