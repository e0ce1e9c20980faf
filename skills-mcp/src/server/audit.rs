//! One audit record per read the server answers.
//!
//! Threat: an agent (or whoever holds its MCP connection) reading skills with no trace.
//! Guarantee: with an [`ReadAudit`] configured, every `resources/read`, `skills/get` and tool
//! call that serves a skill's content appends a record to the tenant's hash-chained
//! [`AuditTrail`] before the content leaves; when the append fails the read is refused.

use skills_security::audit::{AuditTrail, sha256_hex};
use skills_store_traits::TenantId;
use skills_store_traits::audit::AuditRecord;

use crate::content::ServedSkill;
use crate::error::{Error, Result};

/// Where reads are recorded: the trail, the tenant whose chain it is, and the user id the
/// records carry (the agent or the connection's principal, as the host names it).
#[derive(Clone)]
pub struct ReadAudit {
    trail: AuditTrail,
    tenant: TenantId,
    user: String,
}

impl std::fmt::Debug for ReadAudit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ReadAudit")
            .field("tenant", &self.tenant)
            .field("user", &self.user)
            .finish_non_exhaustive()
    }
}

impl ReadAudit {
    /// Records on `trail` in `tenant`'s chain as `user`.
    pub fn new(trail: AuditTrail, tenant: TenantId, user: impl Into<String>) -> Self {
        ReadAudit {
            trail,
            tenant,
            user: user.into(),
        }
    }

    /// Appends one record: `method` on `target` of `skill`, with the hash of what was served.
    pub(crate) async fn record(
        &self,
        skill: &ServedSkill,
        method: &str,
        target: &str,
        served: &[u8],
        success: bool,
    ) -> Result<()> {
        let mut record = AuditRecord::new(
            self.user.as_str(),
            skill.resolved.id.as_str(),
            target,
            skill.trust().as_str(),
            sha256_hex(format!("{method} {target}").as_bytes()),
            success,
        );
        record.output_hash = Some(sha256_hex(served));
        record.security_flags = vec![format!("mcp:{method}")];
        self.trail
            .append(&self.tenant, record)
            .await
            .map(|_| ())
            .map_err(|e| Error::Audit(e.to_string()))
    }
}
