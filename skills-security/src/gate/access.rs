//! Handing out a skill's content: the decision every door asks before a skill's text, files
//! or scripts reach an agent or a host (an MCP resource or tool, a command, an adapter).
//!
//! Threat: a door that serves a skill without asking policy (a disabled or removed skill,
//! one the caller may not use, a file its catalog does not list, a community skill's
//! scripts) or serves it without a trace. Guarantee: [`PolicyGate::authorize`] is the only
//! constructor of a [`Permit`], so content handed out against a permit was decided here.
//! It refuses, in this order: a skill that is not served (unknown, removed), a disabled one,
//! a target outside the skill version's catalogued files, a principal the permission
//! hierarchy does not let execute the skill, and, for [`SkillAction::Load`] (which runs
//! scripts), a used-up rate limit (counted only when allowed, as [`PolicyGate::check`]
//! counts). A load's scripts still run only after a person approves each (the
//! `ScriptRunner`'s approvals); an agent's autonomous step is [`PolicyGate::check`]'s, which
//! also runs a community skill only by rule. Every decision, allowed or denied, is appended
//! to the tenant's audit chain before it returns, with the action, target, client, the
//! skill's version digest and the deciding rule; an append that fails is an error and
//! nothing may be handed out (fail closed). [`PolicyGate::allow_all`] still refuses what is
//! not served, disabled or not catalogued, and still records.

use serde::{Deserialize, Serialize};
use skills_store_traits::audit::{AuditEntry, AuditRecord};

use super::{DenyCode, GateError, Mode, PolicyGate, RateKey, SkillInfo, rate_denial};
use crate::audit::{PolicyFlag, Verdict, error_text, sha256_hex};
use crate::permissions::{Principal, RateCheck};
use crate::trust::TrustLevel;

/// What a door does with a skill.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum SkillAction {
    /// Its catalog entry or a listing of its files (`skills/get`, a directory read).
    Get,
    /// One of its files (`resources/read`, `read_skill_file`).
    Read,
    /// Its instructions (`use_skill`, activation).
    Activate,
    /// Its instructions and the output of the scripts they reference (`load_skill`, a
    /// script run).
    Load,
}

impl SkillAction {
    /// The stable name (`get`, `read`, `activate`, `load`).
    pub fn as_str(self) -> &'static str {
        match self {
            SkillAction::Get => "get",
            SkillAction::Read => "read",
            SkillAction::Activate => "activate",
            SkillAction::Load => "load",
        }
    }
}

/// The skill as its store (or directory) holds it when the request is made: not a
/// snapshot taken earlier.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct SkillState {
    /// Id, path, version and trust level, as the permission rules target them.
    pub info: SkillInfo,
    /// The kill switch (an operator's hold, an install awaiting approval).
    pub enabled: bool,
    /// The digest of the version served (recorded with every decision).
    pub digest: String,
}

impl SkillState {
    /// An enabled skill at `digest`.
    pub fn new(info: SkillInfo, digest: impl Into<String>) -> SkillState {
        SkillState {
            info,
            enabled: true,
            digest: digest.into(),
        }
    }

    /// With the kill switch as stored.
    pub fn enabled(mut self, enabled: bool) -> SkillState {
        self.enabled = enabled;
        self
    }
}

/// One request to hand out a skill's content.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct AccessRequest {
    /// Who asks (tenant, user, agent).
    pub principal: Principal,
    /// The connection or session it comes through (`mcp:<session>`), when there is one.
    pub client: Option<String>,
    /// The skill as asked for (recorded even when no such skill is served).
    pub skill_id: String,
    /// Its current state; `None` when no such skill is served here (unknown, removed).
    pub state: Option<SkillState>,
    /// What is done.
    pub action: SkillAction,
    /// The file (relative path) or entry asked for.
    pub target: String,
    /// Whether `target` is one of the skill version's catalogued files.
    pub catalogued: bool,
    /// SHA-256 (hex) of the content that would be handed out, when known.
    pub content_hash: Option<String>,
}

/// Longest skill id or target kept in a record: a hostile client's huge name is cut, not
/// written to the chain whole.
const MAX_RECORDED: usize = 256;

fn bounded(text: &str) -> String {
    text.chars()
        .take(MAX_RECORDED)
        .map(|c| if c.is_control() { '\u{fffd}' } else { c })
        .collect()
}

impl AccessRequest {
    /// `principal` asks to `action` `target` of the skill `skill_id`; not served and not
    /// catalogued until [`state`](Self::state) and [`catalogued`](Self::catalogued) say so.
    pub fn new(
        principal: Principal,
        action: SkillAction,
        skill_id: impl AsRef<str>,
        target: impl AsRef<str>,
    ) -> AccessRequest {
        AccessRequest {
            principal,
            client: None,
            skill_id: bounded(skill_id.as_ref()),
            state: None,
            action,
            target: bounded(target.as_ref()),
            catalogued: false,
            content_hash: None,
        }
    }

    /// The skill's current state.
    pub fn state(mut self, state: SkillState) -> Self {
        self.state = Some(state);
        self
    }

    /// Whether the target is catalogued.
    pub fn catalogued(mut self, catalogued: bool) -> Self {
        self.catalogued = catalogued;
        self
    }

    /// Through `client`.
    pub fn client(mut self, client: impl AsRef<str>) -> Self {
        self.client = Some(bounded(client.as_ref()));
        self
    }

    /// Handing out `content` (its hash is recorded).
    pub fn content(mut self, content: &[u8]) -> Self {
        self.content_hash = Some(sha256_hex(content));
        self
    }
}

/// Proof that the gate allowed one access and recorded it. Only
/// [`PolicyGate::authorize`] makes one; doors hand content out against it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Permit {
    skill_id: String,
    action: SkillAction,
    target: String,
    digest: String,
    sequence: u64,
}

impl Permit {
    /// The skill it is for.
    pub fn skill_id(&self) -> &str {
        &self.skill_id
    }

    /// The action it allows.
    pub fn action(&self) -> SkillAction {
        self.action
    }

    /// The target it allows.
    pub fn target(&self) -> &str {
        &self.target
    }

    /// The version digest it was decided for.
    pub fn digest(&self) -> &str {
        &self.digest
    }

    /// The audit record of the decision.
    pub fn sequence(&self) -> u64 {
        self.sequence
    }
}

/// The gate's answer to an [`AccessRequest`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Access {
    /// Hand it out.
    Granted(Permit),
    /// Refuse it.
    Denied {
        /// A stable code.
        code: DenyCode,
        /// Why, for the caller.
        reason: String,
        /// The permission rule that denied, when one did.
        rule: Option<String>,
        /// The audit record of the decision.
        sequence: u64,
    },
}

type Refusal = (DenyCode, String, Option<String>);

impl PolicyGate {
    /// Decides whether `request` may be handed out, records the decision, and returns it.
    ///
    /// Refused, in this order: a skill not served (`unknown_skill`), a disabled one
    /// (`disabled`), a target the skill version does not catalogue (`not_catalogued`), a
    /// principal the permission rules do not let execute it (`not_permitted`, with the
    /// rule), and for [`SkillAction::Load`] a used-up cap (`rate_limited`, counted only when
    /// allowed). Every decision is appended to the tenant's audit chain before it returns;
    /// an append that fails is an error, and nothing may be handed out.
    pub async fn authorize(&self, request: &AccessRequest) -> Result<Access, GateError> {
        let decided = self.decide_access(request).await?;
        let entry = self.audit_access(request, &decided).await?;
        Ok(match decided {
            Ok(()) => Access::Granted(Permit {
                skill_id: request.skill_id.clone(),
                action: request.action,
                target: request.target.clone(),
                digest: request
                    .state
                    .as_ref()
                    .map(|s| s.digest.clone())
                    .unwrap_or_default(),
                sequence: entry.sequence,
            }),
            Err((code, reason, rule)) => Access::Denied {
                code,
                reason,
                rule,
                sequence: entry.sequence,
            },
        })
    }

    async fn decide_access(
        &self,
        request: &AccessRequest,
    ) -> Result<Result<(), Refusal>, GateError> {
        let id = &request.skill_id;
        let Some(state) = &request.state else {
            return Ok(Err((
                DenyCode::UnknownSkill,
                format!("no skill `{id}` is served here"),
                None,
            )));
        };
        if !state.enabled {
            return Ok(Err((
                DenyCode::Disabled,
                format!("`{id}` is disabled"),
                None,
            )));
        }
        if !request.catalogued {
            return Ok(Err((
                DenyCode::NotCatalogued,
                format!("`{}` is not one of `{id}`'s files", request.target),
                None,
            )));
        }
        if self.mode == Mode::AllowAll {
            return Ok(Ok(()));
        }
        let resolved = self
            .permissions
            .resolve(&request.principal, &state.info.target);
        if !resolved.can_execute.value {
            return Ok(Err((
                DenyCode::NotPermitted,
                format!("not permitted to use `{id}`"),
                resolved.can_execute.rule.clone(),
            )));
        }
        if request.action != SkillAction::Load {
            return Ok(Ok(()));
        }
        let key = RateKey {
            tenant: request.principal.tenant.clone(),
            actor: request.principal.actor(),
            skill_id: state.info.id().to_owned(),
        };
        let limits = self.limits_for(&resolved);
        if let RateCheck::Limited { limit, retry_at } = self
            .limiter
            .acquire(&key, &limits, self.clock.now())
            .await?
            && let super::Decision::Deny { code, reason, rule } = rate_denial(limit, retry_at)
        {
            return Ok(Err((code, reason, rule)));
        }
        Ok(Ok(()))
    }

    async fn audit_access(
        &self,
        request: &AccessRequest,
        decided: &Result<(), Refusal>,
    ) -> Result<AuditEntry, GateError> {
        let (verdict, code, reason, rule) = match decided {
            Ok(()) => (Verdict::Allow, "allowed".to_owned(), String::new(), None),
            Err((code, reason, rule)) => (
                Verdict::Deny,
                code.as_str().to_owned(),
                reason.clone(),
                rule.clone(),
            ),
        };
        let action = request.action.as_str();
        let (path, trust, version) = match &request.state {
            Some(state) => (
                state.info.path.clone(),
                state.info.trust,
                Some(state.digest.clone()),
            ),
            None => (request.skill_id.clone(), TrustLevel::Community, None),
        };
        let mut record = AuditRecord::new(
            request.principal.user.clone(),
            request.skill_id.as_str(),
            path,
            trust.as_str(),
            sha256_hex(format!("{action} {}", request.target).as_bytes()),
            decided.is_ok(),
        );
        record.timestamp = self.clock.now();
        record.skill_version = version;
        record.agent_id.clone_from(&request.principal.agent);
        record.output_hash.clone_from(&request.content_hash);
        record.trigger_reason = Some(format!("{action} {}", request.target));
        if decided.is_err() {
            record.error = Some(error_text(&code, &reason));
        }
        let mut flags = vec![
            PolicyFlag::new(
                verdict,
                format!("{action}:{}", request.target),
                code,
                reason,
                rule,
            )
            .to_flag(),
            format!("action:{action}"),
        ];
        if let Some(client) = &request.client {
            flags.push(format!("client:{client}"));
        }
        record.security_flags = flags;
        Ok(self.trail.append(&request.principal.tenant, record).await?)
    }
}
