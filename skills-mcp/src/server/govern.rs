//! Every request through the policy gate, against the skill's state at that request.
//!
//! Threat: a client served from a snapshot that no longer holds (a skill disabled, removed,
//! re-trusted or changed in the store after the server started, by this process or
//! another), served a file its catalog does not list, or served without a trace; a denial
//! nobody can see later. Guarantee: [`SkillsMcpServer::govern`] reads a stored skill's
//! record from the store at each request (one point read: the enabled flag, the trust
//! level, the version stamp), rebuilds the snapshot when the record no longer matches the
//! one it was read from, and asks [`PolicyGate::authorize`] with that state, the
//! connection as the client, and whether the target is one of the catalogued files. Content
//! leaves only on [`Access::Granted`], after the decision is on the chain; denials are
//! recorded too; a store or audit failure refuses (fail closed). A skill unassigned from
//! the agent stays served until the snapshot is next rebuilt (any served skill's change, or
//! [`SkillsMcpServer::refresh`]); a disabled or removed one is refused at once.
//!
//! [`PolicyGate::authorize`]: skills_security::gate::PolicyGate::authorize

use std::sync::Arc;

use rmcp::ErrorData;
use skills_security::TrustLevel;
use skills_security::autonomy::RiskLevel;
use skills_security::gate::{
    Access, AccessRequest, DenyCode, Permit, SkillAction, SkillInfo, SkillState,
};
use skills_store_traits::SkillRecord;

use super::{Served, SkillsMcpServer, read_served};
use crate::content::ServedSkill;
use crate::error::Result;
use crate::protocol::directory_uri;

/// What a request asks for within a skill.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Target<'a> {
    /// A file by relative path.
    File(&'a str),
    /// A directory by relative path (`""`: the skill's root).
    Directory(&'a str),
    /// Something no skill catalogues (an unparseable URI, a non-entry `skills/get`).
    Nothing(&'a str),
}

impl Target<'_> {
    fn text(&self) -> &str {
        match self {
            Target::File(t) | Target::Directory(t) | Target::Nothing(t) => t,
        }
    }
}

/// A granted request: the snapshot it was decided against, the skill's id in it, the
/// file's text (for file targets) and the gate's permit.
pub(crate) struct Granted {
    pub(crate) served: Arc<Served>,
    pub(crate) id: String,
    pub(crate) text: Option<Arc<str>>,
    /// The decision the content was handed out under (held with it, never made up: only
    /// the gate constructs one).
    #[allow(dead_code)]
    pub(crate) permit: Permit,
}

impl Granted {
    /// The granted skill.
    pub(crate) fn skill(&self) -> Option<&ServedSkill> {
        self.served.snapshot.skills.get(&self.id)
    }
}

/// The gate's answer for one request.
pub(crate) enum Governed {
    /// Serve it.
    Granted(Granted),
    /// Refuse it, with the code and the reason for the caller.
    Denied(DenyCode, String),
}

fn internal(what: &str, e: impl std::fmt::Display) -> ErrorData {
    ErrorData::internal_error(format!("{what}: {e}"), None)
}

impl SkillsMcpServer {
    /// Decides `action` on `target` of the skill `id` (its id in the served catalog, as a
    /// URI names it) against the skill's current state; see the module docs.
    pub(crate) async fn govern(
        &self,
        action: SkillAction,
        id: &str,
        target: Target<'_>,
    ) -> std::result::Result<Governed, ErrorData> {
        let (served, state) = self.current_state(id).await?;
        let skill = served.snapshot.skills.get(id);
        let text = match (skill, target) {
            (Some(skill), Target::File(path)) => skill.files.get(path).cloned(),
            _ => None,
        };
        let catalogued = match (skill, target) {
            (Some(_), Target::File(_)) => text.is_some(),
            (Some(_), Target::Directory(dir)) => {
                served.directories.contains_key(&directory_uri(id, dir))
            }
            _ => false,
        };
        let mut request =
            AccessRequest::new(self.inner.principal.clone(), action, id, target.text())
                .client(format!("mcp:{}", self.connection))
                .catalogued(catalogued);
        if let Some(state) = state {
            request = request.state(state);
        }
        if let Some(text) = &text {
            request = request.content(text.as_bytes());
        }
        let access = self
            .inner
            .gate
            .authorize(&request)
            .await
            .map_err(|e| internal("the decision could not be made or recorded", e))?;
        Ok(match access {
            Access::Granted(permit) => Governed::Granted(Granted {
                served,
                id: id.to_owned(),
                text,
                permit,
            }),
            Access::Denied { code, reason, .. } => Governed::Denied(code, reason),
        })
    }

    /// The snapshot to serve `id` from and the skill's state now: a stored skill's record
    /// read from the store (the snapshot rebuilt first when the record changed), a
    /// directory or repo skill as the snapshot holds it; `None` when no such skill is
    /// served.
    async fn current_state(
        &self,
        id: &str,
    ) -> std::result::Result<(Arc<Served>, Option<SkillState>), ErrorData> {
        let mut served = self.current();
        let Some(skill) = served.snapshot.skills.get(id) else {
            return self.unserved_state(served, id).await;
        };
        let (Some((store, tenant)), Some(store_id)) = (&self.inner.store, &skill.resolved.store_id)
        else {
            let state = SkillState::new(info_of(skill, skill.trust()), skill.digest.clone());
            return Ok((served, Some(state)));
        };
        let store_id = store_id.clone();
        let record = store
            .find_skill_by_id(tenant, &store_id)
            .await
            .map_err(|e| internal("the skill's state could not be read", e))?;
        let Some(record) = record else {
            // Removed: refused now; the next snapshot leaves it out.
            self.refresh_quietly().await;
            return Ok((served, None));
        };
        let stamp = Some((record.updated_at, record.checksum.clone()));
        if skill.stamp != stamp {
            self.refresh_quietly().await;
            served = self.current();
        }
        let trust = TrustLevel::of_skill(record.trust_level.as_deref());
        let state = match served.snapshot.skills.get(id) {
            Some(skill) => SkillState::new(info_of(skill, trust), skill.digest.clone()),
            // Left out of the new resolution (disabled, unassigned).
            None => {
                served.note_absent(id, stamp_of(&record));
                return Ok((served.clone(), absent_state(id, &record)));
            }
        }
        .enabled(record.enabled);
        Ok((served, Some(state)))
    }

    /// The state of a skill the snapshot does not serve. In store mode a record of that
    /// slug which changed since it was last seen absent (re-enabled, newly assigned) makes
    /// the snapshot be read again, once per change of the record; a disabled one is refused
    /// as disabled; anything else is not served.
    async fn unserved_state(
        &self,
        served: Arc<Served>,
        id: &str,
    ) -> std::result::Result<(Arc<Served>, Option<SkillState>), ErrorData> {
        let Some((store, tenant)) = &self.inner.store else {
            return Ok((served, None));
        };
        let record = store
            .find_skill_by_slug(tenant, id)
            .await
            .map_err(|e| internal("the skill's state could not be read", e))?;
        let Some(record) = record else {
            return Ok((served, None));
        };
        let stamp = stamp_of(&record);
        if served.was_absent(id, &stamp) {
            return Ok((served, absent_state(id, &record)));
        }
        self.refresh_quietly().await;
        let served = self.current();
        if served.snapshot.skills.contains_key(id) {
            return Box::pin(self.current_state(id)).await;
        }
        served.note_absent(id, stamp);
        Ok((served, absent_state(id, &record)))
    }

    /// Whether any stored skill's record differs from the snapshot's (or is gone): then
    /// the snapshot is rebuilt. For listings, which must not show what a request would
    /// refuse.
    pub(crate) async fn refresh_if_stale(&self) -> std::result::Result<(), ErrorData> {
        let Some((store, tenant)) = &self.inner.store else {
            return Ok(());
        };
        let served = self.current();
        for skill in served.snapshot.skills.values() {
            let Some(store_id) = &skill.resolved.store_id else {
                continue;
            };
            let record = store
                .find_skill_by_id(tenant, store_id)
                .await
                .map_err(|e| internal("the skill's state could not be read", e))?;
            let current = record.map(|r| (r.updated_at, r.checksum));
            if current != skill.stamp || current.is_none() {
                return self
                    .refresh()
                    .await
                    .map_err(|e| internal("the catalog could not be read again", e));
            }
        }
        Ok(())
    }

    /// Resolves the catalog again and serves the new snapshot from the next request on.
    pub async fn refresh(&self) -> Result<()> {
        let inner = &self.inner;
        let served = read_served(&inner.source, &inner.limits, &inner.load_options).await?;
        match inner.served.write() {
            Ok(mut slot) => *slot = Arc::new(served),
            Err(poisoned) => *poisoned.into_inner() = Arc::new(served),
        }
        Ok(())
    }

    /// [`refresh`](Self::refresh) where a failure keeps the old snapshot: the request at
    /// hand is decided on the record it read either way.
    async fn refresh_quietly(&self) {
        let _ = self.refresh().await;
    }
}

/// A record's version stamp.
fn stamp_of(record: &SkillRecord) -> (i64, String) {
    (record.updated_at, record.checksum.clone())
}

/// A stored skill the snapshot does not serve: refused as disabled when it is, else as not
/// served (`None`).
fn absent_state(id: &str, record: &SkillRecord) -> Option<SkillState> {
    (!record.enabled).then(|| {
        let trust = TrustLevel::of_skill(record.trust_level.as_deref());
        SkillState::new(
            SkillInfo::new(id, id, trust, RiskLevel::Low),
            format!("sha256:{}", record.checksum),
        )
        .enabled(false)
    })
}

/// The gate's view of a served skill at `trust`.
fn info_of(skill: &ServedSkill, trust: TrustLevel) -> SkillInfo {
    let info = SkillInfo::new(
        skill.resolved.id.as_str(),
        skill.resolved.source_ref.as_str(),
        trust,
        RiskLevel::Low,
    )
    .category(skill.resolved.category.as_str());
    match &skill.resolved.version {
        Some(version) => info.version(version.as_str()),
        None => info,
    }
}
