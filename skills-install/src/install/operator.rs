//! What an operator does to a stored skill by hand: switch it off and on again, set its
//! trust level, assign it to an agent or take it away — each one audit record.
//!
//! Threat: an operator's "off" quietly undone — by an update, an approval, an upgrade or a
//! rollback the installer runs later, by a plugin sync or an import — so a skill someone
//! stopped is served again; an operator's "on" used to run an install nobody approved; an
//! operator's action that leaves no trace on the trail.
//! Guarantee: [`Installer::disable`] places the store's hold
//! ([`SkillRecord::held`]), which every backend keeps disabled on every write until
//! [`Installer::enable`] lifts it; enable switches the skill on only when its current
//! version is approved (an install awaiting approval stays disabled, its hold lifted,
//! until [`Installer::approve`]). Every call appends exactly one record (trigger
//! `operator:<action>`, the caller as its user, `unchanged` among its flags when there was
//! nothing to do); when the append fails, what the call wrote is undone
//! ([`undo`](super::undo)).

use serde_json::Value;
use skills_security::TrustLevel;
use skills_store_traits::packages::{PackageRecord, PackageUpdate};
use skills_store_traits::{
    AssignmentFilter, AssignmentScope, AssignmentUpdate, NewAssignment, SkillAssignment,
    SkillRecord, SkillUpdate, TenantId, UserScope,
};

use super::Installer;
use super::record::{self, Action, AuditFacts, INSTALL_METADATA_KEY};
use super::undo::{Step, Undo};
use crate::error::{Error, Result, shown};

/// What an operator's call did.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Operated {
    /// The skill as it is now.
    pub skill: SkillRecord,
    /// Whether anything was written besides the audit record.
    pub changed: bool,
    /// [`Installer::enable`]: the skill's current version still awaits approval, so the
    /// skill stays disabled (its hold lifted) until [`Installer::approve`].
    pub awaiting_approval: bool,
    /// [`Installer::set_trust`]: the level before (`None`: unknown, which runs as
    /// community).
    pub previous_trust_level: Option<String>,
    /// [`Installer::assign`] and [`Installer::unassign`]: the agent's own assignment of the
    /// skill as it is now (`None`: the skill is not assigned to that agent by name).
    pub assignment: Option<SkillAssignment>,
    /// The audit entry's sequence number.
    pub audit_sequence: u64,
}

/// The skill an operator named, and its package when it was installed from one.
struct Target {
    skill: SkillRecord,
    package: Option<PackageRecord>,
}

/// One operator call's audit facts beyond the skill's own.
struct Done<'a> {
    action: Action,
    changed: bool,
    flags: Vec<String>,
    agent: Option<&'a str>,
}

impl Installer {
    /// Switches the skill (`name` is its slug) off and holds it off: the hold
    /// ([`SkillRecord::held`]) outlasts every update, approval, upgrade and rollback, and
    /// only [`Installer::enable`] lifts it. One audit record (`operator:disable`).
    pub async fn disable(&self, scope: &UserScope, name: &str) -> Result<Operated> {
        let target = self.target(&scope.tenant, name).await?;
        let hold = SkillUpdate {
            held: Some(true),
            enabled: Some(false),
            ..SkillUpdate::default()
        };
        self.set_state(scope, target, Action::Disable, hold, false)
            .await
    }

    /// Lifts the operator's hold and switches the skill on — unless its current version
    /// awaits approval: then the hold is lifted but the skill stays disabled until
    /// [`Installer::approve`] ([`Operated::awaiting_approval`]), so enabling never runs
    /// unapproved scripts. One audit record (`operator:enable`).
    pub async fn enable(&self, scope: &UserScope, name: &str) -> Result<Operated> {
        let tenant = &scope.tenant;
        let target = self.target(tenant, name).await?;
        let awaiting = match &target.package {
            Some(package) => {
                !self
                    .version(tenant, package, &package.current_version)
                    .await?
                    .approved
            }
            None => false,
        };
        let lift = SkillUpdate {
            held: Some(false),
            // Awaiting approval: left as it is (disabled), the approval's to switch on.
            enabled: (!awaiting).then_some(true),
            ..SkillUpdate::default()
        };
        self.set_state(scope, target, Action::Enable, lift, awaiting)
            .await
    }

    /// Sets the trust level the skill runs at (the skill's, its `install` metadata's and
    /// its package's). An update or a version switch decides the trust level again from the
    /// source and the scan, as it always does. One audit record (`operator:trust`, the
    /// level before among its flags as `trust_from:<level>`).
    pub async fn set_trust(
        &self,
        scope: &UserScope,
        name: &str,
        level: TrustLevel,
    ) -> Result<Operated> {
        let tenant = &scope.tenant;
        let Target { skill, package } = self.target(tenant, name).await?;
        let previous = skill.trust_level.clone();
        let level_text = level.as_str();
        let package_moves = package.as_ref().filter(|p| p.trust_level != level_text);
        let skill_moves = previous.as_deref() != Some(level_text);
        let mut undo = Undo::new(self, tenant);
        let mut now = skill.clone();
        if skill_moves {
            let mut metadata = skill.metadata.clone();
            if let Some(Value::Object(install)) = metadata.get_mut(INSTALL_METADATA_KEY) {
                install.insert("trustLevel".to_owned(), level_text.into());
            }
            let update = SkillUpdate {
                trust_level: Some(Some(level_text.to_owned())),
                metadata: Some(metadata),
                ..SkillUpdate::default()
            };
            now = match self.replace(&mut undo, tenant, &skill, update).await {
                Ok(now) => now,
                Err(e) => return Err(undo.rollback(e).await),
            };
        }
        if let Some(package) = package_moves {
            let current = &package.current_version;
            undo.push(Step::MovedCurrent {
                package_id: package.id.clone(),
                from: current.clone(),
                to: current.clone(),
                previous: PackageUpdate::new().trust_level(package.trust_level.clone()),
            });
            let update = PackageUpdate::new().trust_level(level_text);
            if let Err(e) = self
                .packages
                .set_current_version(tenant, &package.id, current, current, update)
                .await
            {
                let error = Error::store("setting the package's trust level", e);
                return Err(undo.rollback(error).await);
            }
        }
        let done = Done {
            action: Action::Trust,
            changed: skill_moves || package_moves.is_some(),
            flags: vec![format!(
                "trust_from:{}",
                previous.as_deref().unwrap_or("unknown")
            )],
            agent: None,
        };
        let audit_sequence = self
            .finish(scope, undo, &now, package.as_ref(), &done)
            .await?;
        Ok(Operated {
            skill: now,
            changed: done.changed,
            awaiting_approval: false,
            previous_trust_level: previous,
            assignment: None,
            audit_sequence,
        })
    }

    /// Assigns the skill to `agent` by name (an enabled agent-scope assignment, created or
    /// switched back on): what the agent resolves, and what `skills serve` serves it. One
    /// audit record (`operator:assign`, the agent as its `agent_id`).
    pub async fn assign(&self, scope: &UserScope, name: &str, agent: &str) -> Result<Operated> {
        let tenant = &scope.tenant;
        check_agent(agent)?;
        let Target { skill, package } = self.target(tenant, name).await?;
        let mut undo = Undo::new(self, tenant);
        let (assignment, changed) = match self.agent_assignment(tenant, &skill.id, agent).await? {
            Some(existing) if existing.enabled => (existing, false),
            Some(existing) => {
                undo.push(Step::AssignmentEnabled {
                    id: existing.id.clone(),
                    was: false,
                });
                let on = AssignmentUpdate {
                    enabled: Some(true),
                    ..AssignmentUpdate::default()
                };
                match self
                    .skills
                    .update_assignment(tenant, &existing.id, on)
                    .await
                {
                    Ok(Some(updated)) => (updated, true),
                    Ok(None) => return Err(Error::NotInstalled { name: shown(name) }),
                    Err(e) => {
                        let error = Error::store("enabling the assignment", e);
                        return Err(undo.rollback(error).await);
                    }
                }
            }
            None => {
                let new = NewAssignment::agent(&skill.id, agent);
                match self.skills.create_assignment(tenant, new).await {
                    Ok(created) => {
                        undo.push(Step::CreatedAssignment {
                            id: created.id.clone(),
                        });
                        (created, true)
                    }
                    Err(e) => return Err(Error::store("assigning the skill", e)),
                }
            }
        };
        let done = Done {
            action: Action::Assign,
            changed,
            flags: Vec::new(),
            agent: Some(agent),
        };
        let audit_sequence = self
            .finish(scope, undo, &skill, package.as_ref(), &done)
            .await?;
        Ok(Operated {
            skill,
            changed,
            awaiting_approval: false,
            previous_trust_level: None,
            assignment: Some(assignment),
            audit_sequence,
        })
    }

    /// Removes the skill's assignment to `agent` by name (a global or team assignment that
    /// reaches the agent is not this one, and stays). One audit record
    /// (`operator:unassign`, the agent as its `agent_id`).
    pub async fn unassign(&self, scope: &UserScope, name: &str, agent: &str) -> Result<Operated> {
        let tenant = &scope.tenant;
        check_agent(agent)?;
        let Target { skill, package } = self.target(tenant, name).await?;
        let mut undo = Undo::new(self, tenant);
        let mut changed = false;
        if let Some(existing) = self.agent_assignment(tenant, &skill.id, agent).await? {
            changed = self
                .skills
                .delete_assignment(tenant, &existing.id)
                .await
                .map_err(|e| Error::store("removing the assignment", e))?;
            if changed {
                // Logged only once deleted: putting back one that was never deleted would
                // collide with it.
                let mut previous = NewAssignment::agent(&skill.id, agent)
                    .priority(existing.priority)
                    .auto_inject(existing.auto_inject);
                previous.enabled = existing.enabled;
                undo.push(Step::DeletedAssignment { previous });
            }
        }
        let done = Done {
            action: Action::Unassign,
            changed,
            flags: Vec::new(),
            agent: Some(agent),
        };
        let audit_sequence = self
            .finish(scope, undo, &skill, package.as_ref(), &done)
            .await?;
        Ok(Operated {
            skill,
            changed,
            awaiting_approval: false,
            previous_trust_level: None,
            assignment: None,
            audit_sequence,
        })
    }

    async fn target(&self, tenant: &TenantId, name: &str) -> Result<Target> {
        let skill = self
            .skills
            .find_skill_by_slug(tenant, name)
            .await
            .map_err(|e| Error::store("looking up the skill", e))?
            .ok_or_else(|| Error::NotInstalled { name: shown(name) })?;
        let package = self
            .packages
            .find_package_by_skill(tenant, &skill.id)
            .await
            .map_err(|e| Error::store("looking up the package", e))?;
        Ok(Target { skill, package })
    }

    async fn agent_assignment(
        &self,
        tenant: &TenantId,
        skill_id: &str,
        agent: &str,
    ) -> Result<Option<SkillAssignment>> {
        let filter = AssignmentFilter {
            skill_id: Some(skill_id.to_owned()),
            scope: Some(AssignmentScope::Agent),
            scope_id: Some(agent.to_owned()),
        };
        let found = self
            .skills
            .list_assignments(tenant, &filter)
            .await
            .map_err(|e| Error::store("reading the assignments", e))?;
        Ok(found.into_iter().next())
    }

    /// Disable and enable: the skill's hold and enabled flag as `update` sets them.
    async fn set_state(
        &self,
        scope: &UserScope,
        target: Target,
        action: Action,
        update: SkillUpdate,
        awaiting_approval: bool,
    ) -> Result<Operated> {
        let tenant = &scope.tenant;
        let Target { skill, package } = target;
        let mut after = skill.clone();
        update.apply_to(&mut after, skill.updated_at);
        let changed = (after.enabled, after.held) != (skill.enabled, skill.held);
        let mut undo = Undo::new(self, tenant);
        let now = if changed {
            match self.replace(&mut undo, tenant, &skill, update).await {
                Ok(now) => now,
                Err(e) => return Err(undo.rollback(e).await),
            }
        } else {
            skill
        };
        let done = Done {
            action,
            changed,
            flags: if awaiting_approval {
                vec!["awaiting_approval".to_owned()]
            } else {
                Vec::new()
            },
            agent: None,
        };
        let audit_sequence = self
            .finish(scope, undo, &now, package.as_ref(), &done)
            .await?;
        Ok(Operated {
            skill: now,
            changed,
            awaiting_approval,
            previous_trust_level: None,
            assignment: None,
            audit_sequence,
        })
    }

    /// Writes `update` to `skill`, logging first how to put back what it sets.
    async fn replace(
        &self,
        undo: &mut Undo<'_>,
        tenant: &TenantId,
        skill: &SkillRecord,
        update: SkillUpdate,
    ) -> Result<SkillRecord> {
        undo.push(Step::ReplacedSkill {
            id: skill.id.clone(),
            previous: Box::new(SkillUpdate {
                enabled: update.enabled.map(|_| skill.enabled),
                held: update.held.map(|_| skill.held),
                trust_level: update
                    .trust_level
                    .as_ref()
                    .map(|_| skill.trust_level.clone()),
                metadata: update.metadata.as_ref().map(|_| skill.metadata.clone()),
                ..SkillUpdate::default()
            }),
        });
        match self.skills.update_skill(tenant, &skill.id, update).await {
            Ok(Some(now)) => Ok(now),
            Ok(None) => Err(Error::NotInstalled {
                name: skill.slug.clone(),
            }),
            Err(e) => Err(Error::store("updating the skill", e)),
        }
    }

    /// Appends the call's one audit record; when that fails, undoes what the call wrote.
    async fn finish(
        &self,
        scope: &UserScope,
        undo: Undo<'_>,
        skill: &SkillRecord,
        package: Option<&PackageRecord>,
        done: &Done<'_>,
    ) -> Result<u64> {
        let install = skill.metadata.get(INSTALL_METADATA_KEY);
        let text = |value: Option<&Value>| value.and_then(Value::as_str).map(str::to_owned);
        let path = text(install.and_then(|m| m.get("source")?.get("trustPath")))
            .filter(|path| !path.is_empty())
            .unwrap_or_else(|| skill.slug.clone());
        let digest = package
            .map(|p| p.digest.clone())
            .or_else(|| text(install.and_then(|m| m.get("digest"))))
            .unwrap_or_default();
        let mut flags = done.flags.clone();
        if !done.changed {
            flags.push("unchanged".to_owned());
        }
        let facts = AuditFacts {
            action: done.action,
            skill_id: &skill.id,
            skill_path: &path,
            trust: skill
                .trust_level
                .as_deref()
                .unwrap_or(TrustLevel::Community.as_str()),
            version: skill.version.as_deref(),
            digest: &digest,
            flags,
        };
        let mut record = record::audit_record(scope, self.clock.now(), facts);
        record.agent_id = done.agent.map(str::to_owned);
        match self.append(scope, record).await {
            Ok(sequence) => Ok(sequence),
            Err(e) => Err(undo.rollback(e).await),
        }
    }
}

/// An agent id as an assignment stores it: 1 to 128 printable characters.
fn check_agent(agent: &str) -> Result<()> {
    if agent.is_empty() || agent.chars().count() > 128 || agent.chars().any(char::is_control) {
        return Err(Error::InvalidInput {
            what: "agent id",
            value: shown(agent),
            reason: "an agent id is 1 to 128 printable characters",
        });
    }
    Ok(())
}
