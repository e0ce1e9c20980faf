//! The operator's commands on stored skills: `assign` / `unassign` (what `skills serve`
//! serves an agent), `enable` / `disable` (the hold), `trust`, `remove` — each one call of
//! `skills-install`'s `Installer`, which writes one audit record per call.
//!
//! Threat: a command that runs against a mistyped store path and quietly creates an empty
//! store (so the operator believes a skill is off, or removed, somewhere it never was); a
//! skill name that matches nothing treated as done. Guarantee: these commands open only a
//! store that exists (else status 4, `no store at …`, and no file is created); an unknown
//! skill is status 1; the hold, the approval rule and the audit record are the library's
//! (`Installer::disable`, `enable`, `set_trust`, `assign`, `unassign`, `uninstall`).

use serde::Serialize;
use skills_install::{Installer, Operated};
use skills_security::TrustLevel;
use skills_store_traits::UserScope;

use crate::cli::{AssignArgs, Global, LevelArg, SkillArgs, TrustArgs};
use crate::commands::install::{installer, user};
use crate::error::{CliError, Result, Status};
use crate::output::Output;
use crate::store;

/// `enable` / `disable`; fields in this order.
#[derive(Serialize)]
struct JsonState<'a> {
    slug: &'a str,
    enabled: bool,
    held: bool,
    awaiting_approval: bool,
    changed: bool,
    audit_sequence: u64,
}

/// `assign` / `unassign`; fields in this order.
#[derive(Serialize)]
struct JsonAssignment<'a> {
    slug: &'a str,
    agent: &'a str,
    assigned: bool,
    changed: bool,
    audit_sequence: u64,
}

/// `trust`; fields in this order.
#[derive(Serialize)]
struct JsonTrust<'a> {
    slug: &'a str,
    trust_level: &'a str,
    previous_trust_level: Option<&'a str>,
    changed: bool,
    audit_sequence: u64,
}

/// `remove`; fields in this order.
#[derive(Serialize)]
struct JsonRemoved<'a> {
    slug: &'a str,
    removed: bool,
    audit_sequence: u64,
}

/// The installer over the existing store, and the operator's scope. A missing store is
/// an error (status 4): these commands never create one.
async fn open(global: &Global) -> Result<(Installer, UserScope)> {
    let tenant = store::tenant(global)?;
    let path = store::store_path(global);
    let Some(db) = store::open_existing(&path).await? else {
        return Err(CliError::NoStore(path));
    };
    Ok((installer(&db), UserScope::new(tenant, user())))
}

/// `skills enable NAME` (`on`) / `skills disable NAME`.
pub async fn enable(args: &SkillArgs, global: &Global, out: Output, on: bool) -> Result<Status> {
    let (installer, scope) = open(global).await?;
    let done: Operated = if on {
        installer.enable(&scope, &args.name).await?
    } else {
        installer.disable(&scope, &args.name).await?
    };
    let skill = &done.skill;
    out.json(&JsonState {
        slug: &skill.slug,
        enabled: skill.enabled,
        held: skill.held,
        awaiting_approval: done.awaiting_approval,
        changed: done.changed,
        audit_sequence: done.audit_sequence,
    });
    let slug = &skill.slug;
    let text = match (on, done.awaiting_approval, done.changed) {
        (true, true, _) => format!(
            "{slug}: hold lifted, still disabled: version {} awaits approval\n",
            skill.version.as_deref().unwrap_or("-")
        ),
        (true, false, true) => format!("{slug}: enabled\n"),
        (true, false, false) => format!("{slug}: already enabled\n"),
        (false, _, true) => format!("{slug}: disabled and held until `skills enable {slug}`\n"),
        (false, _, false) => format!("{slug}: already disabled and held\n"),
    };
    out.text(&text);
    // Still off: the same status as an install that awaits approval.
    Ok(if done.awaiting_approval {
        Status::Denied
    } else {
        Status::Ok
    })
}

/// `skills assign NAME --agent ID` (`assign`) / `skills unassign NAME --agent ID`.
pub async fn assign(
    args: &AssignArgs,
    global: &Global,
    out: Output,
    assign: bool,
) -> Result<Status> {
    let (installer, scope) = open(global).await?;
    let done = if assign {
        installer.assign(&scope, &args.name, &args.agent).await?
    } else {
        installer.unassign(&scope, &args.name, &args.agent).await?
    };
    let slug = &done.skill.slug;
    out.json(&JsonAssignment {
        slug,
        agent: &args.agent,
        assigned: done.assignment.is_some(),
        changed: done.changed,
        audit_sequence: done.audit_sequence,
    });
    let agent = &args.agent;
    out.text(&match (assign, done.changed) {
        (true, true) => format!("{slug}: assigned to agent `{agent}`\n"),
        (true, false) => format!("{slug}: already assigned to agent `{agent}`\n"),
        (false, true) => format!("{slug}: unassigned from agent `{agent}`\n"),
        (false, false) => format!("{slug}: was not assigned to agent `{agent}`\n"),
    });
    Ok(Status::Ok)
}

fn level(arg: LevelArg) -> TrustLevel {
    match arg {
        LevelArg::Core => TrustLevel::Core,
        LevelArg::Verified => TrustLevel::Verified,
        LevelArg::Community => TrustLevel::Community,
        LevelArg::User => TrustLevel::User,
    }
}

/// `skills trust NAME LEVEL`.
pub async fn trust(args: &TrustArgs, global: &Global, out: Output) -> Result<Status> {
    let (installer, scope) = open(global).await?;
    let level = level(args.level);
    let done = installer.set_trust(&scope, &args.name, level).await?;
    let slug = &done.skill.slug;
    let previous = done.previous_trust_level.as_deref();
    out.json(&JsonTrust {
        slug,
        trust_level: level.as_str(),
        previous_trust_level: previous,
        changed: done.changed,
        audit_sequence: done.audit_sequence,
    });
    out.text(&format!(
        "{slug}: trust {} -> {}\n",
        previous.unwrap_or("unknown"),
        level.as_str()
    ));
    Ok(Status::Ok)
}

/// `skills remove NAME`.
pub async fn remove(args: &SkillArgs, global: &Global, out: Output) -> Result<Status> {
    let (installer, scope) = open(global).await?;
    let audit_sequence = installer.uninstall(&scope, &args.name).await?;
    out.json(&JsonRemoved {
        slug: &args.name,
        removed: true,
        audit_sequence,
    });
    out.text(&format!("removed {}\n", args.name));
    Ok(Status::Ok)
}
