//! The permission hierarchy of seed 003 (module 4 and `ExtensionPermission`): rules from
//! the global defaults down to one agent, resolved field by field, with a cache.
//!
//! Threat: an agent running a skill or tool its organisation, team or role forbids; a rule
//! change not taking effect; a decision nobody can explain. Guarantees: every decision names
//! the rule that made it; at one scope a deny always beats an allow; a rule change through
//! [`Permissions`] drops the cached resolutions it affects before it returns.
//!
//! # Resolution
//!
//! A rule targets a skill, an extension type or a category, and is scoped to one of five
//! levels, most specific first: **agent**, **team**, **role**, **organisation**, **global**
//! (seed 003's order). The rules that apply to a request are those whose target matches the
//! skill and whose scope matches the principal (its agent, its team, any of its roles; the
//! organisation and global scopes always). Then, for each field separately:
//!
//! * [`Merge::MostSpecific`] (the default, the issue's rule): the most specific scope that
//!   sets the field decides; several rules at that scope agree on the strictest value (a
//!   deny beats an allow, the lower daily cap wins, approval required beats not). A more
//!   specific scope may therefore grant what a broader one refused: an agent override.
//! * [`Merge::Narrowing`]: every scope that sets the field takes part and the strictest
//!   value wins, so a more specific scope can only narrow what broader ones allow.
//!
//! Unset everywhere, a field takes the seed's column default: execute yes; configure,
//! install, publish no; no tool restriction, no daily cap, no approval, no self-approval.
//! (The [gate](crate::gate) narrows the execute default: a community skill runs only where a
//! rule sets `can_execute`.)
//!
//! Approver roles are the exception to "one value decides": an approver must hold one role
//! of every list that binds (each rule's at the most specific scope naming any under
//! `MostSpecific`, every scope's under `Narrowing`), so no rule can swap in an easier
//! approver; see [`ResolvedPermissions::approver_qualifies`].
//!
//! A tool is decided per scope from the most specific: denied there (in `denied_tools`) →
//! denied; listed in an `allowed_tools` there → allowed; an `allowed_tools` there that does
//! not list it → denied; otherwise the next scope decides. Under `Narrowing` any scope
//! denying it (by its deny list or its allow list) denies it. No scope deciding → allowed.
//!
//! ```
//! use skills_security::permissions::{Principal, PermissionRule, Permissions, Scope, SkillTarget, Target};
//! use skills_store_traits::ManualClock;
//!
//! let permissions = Permissions::new(ManualClock::new(0));
//! permissions.set_rules(&"acme".into(), vec![
//!     PermissionRule::new("org-no-payments", Scope::Organization, Target::Category("payments".into()))
//!         .execute(false),
//!     PermissionRule::new("billing-bot", Scope::Agent("billing-bot".into()), Target::Skill("stripe".into()))
//!         .execute(true)
//!         .deny_tools(["refund"]),
//! ]);
//! let stripe = SkillTarget::new("stripe").category("payments");
//! let bot = Principal::new("acme", "alice").agent("billing-bot");
//! let other = Principal::new("acme", "alice").agent("helper");
//!
//! let resolved = permissions.resolve(&bot, &stripe);
//! assert!(resolved.can_execute.value);
//! assert_eq!(resolved.can_execute.rule.as_deref(), Some("billing-bot"));
//! assert!(!resolved.tool("refund").value);
//! assert!(!permissions.resolve(&other, &stripe).can_execute.value);
//! ```

mod approvers;
pub mod rate;
mod service;

use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};
use skills_store_traits::{TenantId, UserId};

pub use approvers::{ApproverDirectory, InMemoryApprovers};
pub use rate::{
    InMemoryRateLimiter, RateCheck, RateKey, RateLimit, RateLimiter, RateScope, Window,
};
pub use service::{DEFAULT_PERMISSION_CACHE_ENTRIES, Permissions};

/// Where a rule applies, least to most specific.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(tag = "scope", content = "id", rename_all = "snake_case")]
pub enum Scope {
    /// Everywhere (the product's defaults).
    Global,
    /// The whole organisation (tenant).
    Organization,
    /// Principals holding this role.
    Role(String),
    /// This team.
    Team(String),
    /// This agent.
    Agent(String),
}

impl Scope {
    /// 0 (global) to 4 (agent).
    pub fn rank(&self) -> u8 {
        match self {
            Scope::Global => 0,
            Scope::Organization => 1,
            Scope::Role(_) => 2,
            Scope::Team(_) => 3,
            Scope::Agent(_) => 4,
        }
    }

    fn matches(&self, p: &Principal) -> bool {
        match self {
            Scope::Global | Scope::Organization => true,
            Scope::Role(role) => p.roles.iter().any(|r| r == role),
            Scope::Team(team) => p.team.as_deref() == Some(team.as_str()),
            Scope::Agent(agent) => p.agent.as_deref() == Some(agent.as_str()),
        }
    }
}

/// What a rule is about.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(tag = "target", content = "id", rename_all = "snake_case")]
pub enum Target {
    /// One skill (extension) by id.
    Skill(String),
    /// Every extension of a type (`skill`, `mcp_server`, ...).
    ExtensionType(String),
    /// Every extension of a category.
    Category(String),
}

impl Target {
    pub(crate) fn matches(&self, s: &SkillTarget) -> bool {
        match self {
            Target::Skill(id) => *id == s.skill_id,
            Target::ExtensionType(t) => *t == s.extension_type,
            Target::Category(c) => s.category.as_deref() == Some(c.as_str()),
        }
    }
}

/// One `ExtensionPermission` row; a field left `None` is not set by this rule.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct PermissionRule {
    /// The rule's id, named by decisions.
    pub id: String,
    /// Where it applies.
    pub scope: Scope,
    /// What it is about.
    pub target: Target,
    /// May run.
    pub can_execute: Option<bool>,
    /// May change the configuration.
    pub can_configure: Option<bool>,
    /// May install.
    pub can_install: Option<bool>,
    /// May publish.
    pub can_publish: Option<bool>,
    /// Only these tools (when set).
    pub allowed_tools: Option<BTreeSet<String>>,
    /// Never these tools.
    pub denied_tools: BTreeSet<String>,
    /// At most this many runs a day.
    pub max_executions_per_day: Option<u64>,
    /// Each run needs approval.
    pub requires_approval: Option<bool>,
    /// Who may approve (holders of any of these roles, as the gate's
    /// [`ApproverDirectory`] says; empty: anyone but the requester).
    pub approver_roles: Option<Vec<String>>,
    /// Whether the requester may approve their own step (never, unless a rule says so).
    pub allow_self_approval: Option<bool>,
}

impl PermissionRule {
    /// A rule setting nothing yet.
    pub fn new(id: impl Into<String>, scope: Scope, target: Target) -> PermissionRule {
        PermissionRule {
            id: id.into(),
            scope,
            target,
            can_execute: None,
            can_configure: None,
            can_install: None,
            can_publish: None,
            allowed_tools: None,
            denied_tools: BTreeSet::new(),
            max_executions_per_day: None,
            requires_approval: None,
            approver_roles: None,
            allow_self_approval: None,
        }
    }

    /// Sets `can_execute`.
    pub fn execute(mut self, allowed: bool) -> Self {
        self.can_execute = Some(allowed);
        self
    }

    /// Sets `can_configure`.
    pub fn configure(mut self, allowed: bool) -> Self {
        self.can_configure = Some(allowed);
        self
    }

    /// Sets `can_install`.
    pub fn install(mut self, allowed: bool) -> Self {
        self.can_install = Some(allowed);
        self
    }

    /// Sets `can_publish`.
    pub fn publish(mut self, allowed: bool) -> Self {
        self.can_publish = Some(allowed);
        self
    }

    /// Allows only these tools.
    pub fn allow_tools<I: IntoIterator<Item = S>, S: Into<String>>(mut self, tools: I) -> Self {
        self.allowed_tools = Some(tools.into_iter().map(Into::into).collect());
        self
    }

    /// Denies these tools.
    pub fn deny_tools<I: IntoIterator<Item = S>, S: Into<String>>(mut self, tools: I) -> Self {
        self.denied_tools.extend(tools.into_iter().map(Into::into));
        self
    }

    /// Caps runs per day.
    pub fn max_per_day(mut self, max: u64) -> Self {
        self.max_executions_per_day = Some(max);
        self
    }

    /// Lets the requester approve their own step (a choice: by default someone else must).
    pub fn self_approval(mut self, allowed: bool) -> Self {
        self.allow_self_approval = Some(allowed);
        self
    }

    /// Requires (or not) approval, by holders of `roles` (empty: anyone but the requester).
    pub fn requires_approval<I: IntoIterator<Item = S>, S: Into<String>>(
        mut self,
        required: bool,
        roles: I,
    ) -> Self {
        self.requires_approval = Some(required);
        let roles: Vec<String> = roles.into_iter().map(Into::into).collect();
        if !roles.is_empty() {
            self.approver_roles = Some(roles);
        }
        self
    }
}

/// Who asks: a user in a tenant, possibly through an agent, in a team, with roles.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Principal {
    /// The organisation.
    pub tenant: TenantId,
    /// The user the work is for.
    pub user: UserId,
    /// The agent acting.
    pub agent: Option<String>,
    /// Its team.
    pub team: Option<String>,
    /// Its roles.
    pub roles: Vec<String>,
}

impl Principal {
    /// A user with no agent, team or role.
    pub fn new(tenant: impl Into<TenantId>, user: impl Into<UserId>) -> Principal {
        Principal {
            tenant: tenant.into(),
            user: user.into(),
            agent: None,
            team: None,
            roles: Vec::new(),
        }
    }

    /// Acting through `agent`.
    pub fn agent(mut self, agent: impl Into<String>) -> Self {
        self.agent = Some(agent.into());
        self
    }

    /// In `team`.
    pub fn team(mut self, team: impl Into<String>) -> Self {
        self.team = Some(team.into());
        self
    }

    /// With `role`.
    pub fn role(mut self, role: impl Into<String>) -> Self {
        self.roles.push(role.into());
        self
    }

    /// What rate limits count: the agent, or `user:<id>`.
    pub fn actor(&self) -> String {
        match &self.agent {
            Some(agent) => agent.clone(),
            None => format!("user:{}", self.user),
        }
    }
}

/// The skill a rule may target.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[non_exhaustive]
pub struct SkillTarget {
    /// Its id.
    pub skill_id: String,
    /// Its extension type (`skill` by default).
    pub extension_type: String,
    /// Its category.
    pub category: Option<String>,
}

impl SkillTarget {
    /// A skill of type `skill` with no category.
    pub fn new(skill_id: impl Into<String>) -> SkillTarget {
        SkillTarget {
            skill_id: skill_id.into(),
            extension_type: "skill".into(),
            category: None,
        }
    }

    /// Of `category`.
    pub fn category(mut self, category: impl Into<String>) -> Self {
        self.category = Some(category.into());
        self
    }

    /// Of extension type `extension_type`.
    pub fn extension_type(mut self, extension_type: impl Into<String>) -> Self {
        self.extension_type = extension_type.into();
        self
    }
}

/// How the scopes combine; see the module documentation.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Merge {
    /// The most specific scope setting a field decides it.
    #[default]
    MostSpecific,
    /// The strictest value of any scope wins.
    Narrowing,
}

/// A resolved value and the rule that set it (`None`: the built-in default).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Resolved<T> {
    /// The value.
    pub value: T,
    /// The deciding rule's id.
    pub rule: Option<String>,
}

/// The tool lists of one scope level.
#[derive(Debug, Clone, PartialEq, Eq)]
struct ToolLevel {
    denied: Vec<(String, BTreeSet<String>)>,
    allowed: Vec<(String, BTreeSet<String>)>,
}

/// Every field of the permission, resolved, each with its deciding rule.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ResolvedPermissions {
    /// May run.
    pub can_execute: Resolved<bool>,
    /// May configure.
    pub can_configure: Resolved<bool>,
    /// May install.
    pub can_install: Resolved<bool>,
    /// May publish.
    pub can_publish: Resolved<bool>,
    /// The daily cap.
    pub max_executions_per_day: Resolved<Option<u64>>,
    /// Approval per run.
    pub requires_approval: Resolved<bool>,
    /// Who may approve.
    pub approver_roles: Resolved<Vec<String>>,
    /// Whether the requester may approve their own step.
    pub self_approval: Resolved<bool>,
    /// Every role list an approver must satisfy (one role of each): under
    /// `Merge::MostSpecific` the lists of the most specific scope that names any, under
    /// `Merge::Narrowing` those of every scope; empty lists narrow nothing.
    approver_role_sets: Vec<Vec<String>>,
    merge: Merge,
    /// Most specific level first.
    tools: Vec<ToolLevel>,
}

impl ResolvedPermissions {
    /// The role lists an approver must each hold one role of (empty: anyone but the
    /// requester, unless self-approval is allowed).
    pub fn approver_role_sets(&self) -> &[Vec<String>] {
        &self.approver_role_sets
    }

    /// Whether someone holding `held` satisfies every role list.
    pub fn approver_qualifies(&self, held: &[String]) -> bool {
        self.approver_role_sets
            .iter()
            .all(|set| set.iter().any(|role| held.contains(role)))
    }

    /// Whether `tool` may be used, and the rule that said so (`None`: no rule restricts it).
    pub fn tool(&self, tool: &str) -> Resolved<bool> {
        let deny = |rule: &str| Resolved {
            value: false,
            rule: Some(rule.to_owned()),
        };
        let mut allowed_by: Option<String> = None;
        for level in &self.tools {
            if let Some((rule, _)) = level.denied.iter().find(|(_, t)| t.contains(tool)) {
                return deny(rule);
            }
            if let Some((rule, _)) = level.allowed.iter().find(|(_, t)| t.contains(tool)) {
                if self.merge == Merge::MostSpecific {
                    return Resolved {
                        value: true,
                        rule: Some(rule.clone()),
                    };
                }
                allowed_by.get_or_insert_with(|| rule.clone());
            } else if let Some((rule, _)) = level.allowed.first() {
                return deny(rule);
            }
        }
        Resolved {
            value: true,
            rule: allowed_by,
        }
    }
}

/// Resolves the rules that apply to `principal` and `skill`; see the module documentation.
pub fn resolve(
    rules: &[PermissionRule],
    principal: &Principal,
    skill: &SkillTarget,
    merge: Merge,
) -> ResolvedPermissions {
    let mut applicable: Vec<&PermissionRule> = rules
        .iter()
        .filter(|r| r.scope.matches(principal) && r.target.matches(skill))
        .collect();
    // Most specific scope first; rule id breaks ties so results never depend on rule order.
    applicable.sort_by(|a, b| b.scope.rank().cmp(&a.scope.rank()).then(a.id.cmp(&b.id)));
    let mut groups: Vec<Vec<&PermissionRule>> = Vec::new();
    for rule in applicable {
        match groups.last_mut() {
            Some(g) if g[0].scope.rank() == rule.scope.rank() => g.push(rule),
            _ => groups.push(vec![rule]),
        }
    }
    let flag = |get: fn(&PermissionRule) -> Option<bool>, default: bool| {
        field(&groups, merge, get, |a: &bool, b: &bool| !*a && *b, default)
    };
    let tools = groups
        .iter()
        .map(|g| ToolLevel {
            denied: g
                .iter()
                .filter(|r| !r.denied_tools.is_empty())
                .map(|r| (r.id.clone(), r.denied_tools.clone()))
                .collect(),
            allowed: g
                .iter()
                .filter_map(|r| Some((r.id.clone(), r.allowed_tools.clone()?)))
                .collect(),
        })
        .collect();
    ResolvedPermissions {
        can_execute: flag(|r| r.can_execute, true),
        can_configure: flag(|r| r.can_configure, false),
        can_install: flag(|r| r.can_install, false),
        can_publish: flag(|r| r.can_publish, false),
        max_executions_per_day: field(
            &groups,
            merge,
            |r| r.max_executions_per_day.map(Some),
            |a: &Option<u64>, b: &Option<u64>| a < b,
            None,
        ),
        requires_approval: field(
            &groups,
            merge,
            |r| r.requires_approval,
            |a: &bool, b: &bool| *a && !*b,
            false,
        ),
        approver_roles: field(
            &groups,
            merge,
            |r| r.approver_roles.clone(),
            |a: &Vec<String>, b: &Vec<String>| a.len() < b.len(),
            Vec::new(),
        ),
        self_approval: field(
            &groups,
            merge,
            |r| r.allow_self_approval,
            |a: &bool, b: &bool| !*a && *b,
            false,
        ),
        approver_role_sets: role_sets(&groups, merge),
        merge,
        tools,
    }
}

/// Every non-empty approver-role list that binds: each deciding rule's (all scopes under
/// `Narrowing`, the most specific scope naming any under `MostSpecific`), without repeats.
fn role_sets(groups: &[Vec<&PermissionRule>], merge: Merge) -> Vec<Vec<String>> {
    let mut sets: Vec<Vec<String>> = Vec::new();
    for group in groups {
        let mut named = false;
        for rule in group {
            if let Some(roles) = &rule.approver_roles {
                named = true;
                if !roles.is_empty() && !sets.contains(roles) {
                    sets.push(roles.clone());
                }
            }
        }
        if merge == Merge::MostSpecific && named {
            break;
        }
    }
    sets
}

/// One field: the strictest value among the deciding rules (`stricter(a, b)`: `a` is
/// stricter than `b`); the first such rule in (specificity, id) order names the decision.
fn field<T: Clone>(
    groups: &[Vec<&PermissionRule>],
    merge: Merge,
    get: impl Fn(&PermissionRule) -> Option<T>,
    stricter: impl Fn(&T, &T) -> bool,
    default: T,
) -> Resolved<T> {
    let mut best: Option<(T, &str)> = None;
    for group in groups {
        for rule in group {
            if let Some(value) = get(rule) {
                match &best {
                    Some((b, _)) if !stricter(&value, b) => {}
                    _ => best = Some((value, &rule.id)),
                }
            }
        }
        if merge == Merge::MostSpecific && best.is_some() {
            break;
        }
    }
    match best {
        Some((value, rule)) => Resolved {
            value,
            rule: Some(rule.to_owned()),
        },
        None => Resolved {
            value: default,
            rule: None,
        },
    }
}
