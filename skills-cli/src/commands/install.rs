//! `skills install`: `skills-install`'s pipeline (fetch, validate, scan, digest, trust,
//! store, audit) from a directory, an archive, a git host or npm into the SQLite store.
//!
//! Threat: a source argument that is a path, a URL or a package name from anywhere; a
//! remote that answers with anything. Guarantee: the argument only picks which of
//! `skills-install`'s sources runs (they check locators, paths, sizes and digests and write
//! nothing on failure); network sources need their base URL named by the operator (no
//! hidden default host), requests time out, and the HTTP client follows no redirects.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use serde::Serialize;
use skills_http::ReqwestClient;
use skills_install::{
    ArchiveSource, GitHubSource, InstallRequest, Installed, Installer, LocalSource, NpmSource,
    SkillSource,
};
use skills_security::scan::{Verdict, is_skill_dir};
use skills_store_sqlite::SqliteStore;
use skills_store_traits::UserScope;

use crate::cli::{Global, InstallArgs};
use crate::error::{CliError, Result, Status};
use crate::output::Output;
use crate::{mcp, store};

/// What one install printed as JSON; fields in this order.
#[derive(Serialize)]
struct JsonInstalled<'a> {
    name: &'a str,
    slug: &'a str,
    version: &'a str,
    trust_level: &'a str,
    digest: &'a str,
    verdict: Verdict,
    score: u32,
    enabled: bool,
    needs_approval: bool,
    warnings: Vec<String>,
    audit_sequence: u64,
}

/// A failed install of one skill of several, as JSON.
#[derive(Serialize)]
struct JsonFailed<'a> {
    locator: &'a str,
    error: String,
    kind: &'static str,
    exit_code: u8,
}

/// A source and what to fetch from it.
struct Plan {
    source: Box<dyn SkillSource>,
    locators: Vec<String>,
}

/// Splits `name@version` at the last `@` that is not the first character (npm scopes
/// start with one).
fn split_at_version(text: &str) -> (&str, Option<&str>) {
    match text.rfind('@') {
        Some(i) if i > 0 => (&text[..i], Some(&text[i + 1..]).filter(|v| !v.is_empty())),
        _ => (text, None),
    }
}

fn http(args: &InstallArgs) -> Result<Arc<ReqwestClient>> {
    Ok(Arc::new(ReqwestClient::new(Duration::from_secs(
        args.http_timeout,
    ))?))
}

fn required_url<'a>(value: Option<&'a str>, flag: &str, env: &str, what: &str) -> Result<&'a str> {
    let url = value.ok_or_else(|| {
        CliError::Usage(format!(
            "{what} sources need {flag} URL (or ${env}): the command has no default host"
        ))
    })?;
    if !(url.starts_with("https://") || url.starts_with("http://")) {
        return Err(CliError::Usage(format!("{flag} must be an http(s) URL")));
    }
    Ok(url)
}

/// Picks the source for `text` and what to fetch from it; the version, when the argument
/// carries one, is returned too.
async fn plan(args: &InstallArgs, text: &str) -> Result<(Plan, Option<String>)> {
    if let Some(rest) = text.strip_prefix("npm:") {
        let (name, version) = split_at_version(rest);
        let base = required_url(
            args.npm_registry.as_deref(),
            "--npm-registry",
            "SKILLS_NPM_REGISTRY",
            "npm:",
        )?;
        let source = NpmSource::new(http(args)?, base);
        let plan = Plan {
            source: Box::new(source),
            locators: vec![name.to_owned()],
        };
        return Ok((plan, version.map(str::to_owned)));
    }
    if let Some(rest) = text.strip_prefix("git:") {
        let (locator, git_ref) = split_at_version(rest);
        let base = required_url(
            args.git_api.as_deref(),
            "--git-api",
            "SKILLS_GIT_API",
            "git:",
        )?;
        let mut source = GitHubSource::new(http(args)?, base);
        if let Some(var) = &args.git_token_env {
            let token = std::env::var(var).map_err(|_| {
                CliError::Usage(format!("--git-token-env names `{var}`, which is not set"))
            })?;
            source = source.with_token(token);
        }
        let plan = Plan {
            source: Box::new(source),
            locators: vec![locator.to_owned()],
        };
        return Ok((plan, git_ref.map(str::to_owned)));
    }
    let path = PathBuf::from(text);
    let meta = std::fs::metadata(&path).map_err(|source| CliError::Io {
        action: "read the source",
        path: path.clone(),
        source,
    })?;
    if meta.is_file() {
        let source = ArchiveSource::open(&path)?;
        let label = path
            .file_name()
            .map_or_else(|| text.to_owned(), |n| n.to_string_lossy().into_owned());
        let plan = Plan {
            source: Box::new(source),
            locators: vec![label],
        };
        return Ok((plan, None));
    }
    let absolute = std::path::absolute(&path).map_err(|source| CliError::Io {
        action: "resolve the source",
        path: path.clone(),
        source,
    })?;
    if is_skill_dir(&absolute) {
        let (Some(parent), Some(name)) = (absolute.parent(), absolute.file_name()) else {
            return Err(CliError::Usage(format!(
                "`{}` has no parent directory to install from",
                path.display()
            )));
        };
        let plan = Plan {
            source: Box::new(LocalSource::new(parent)),
            locators: vec![name.to_string_lossy().into_owned()],
        };
        return Ok((plan, None));
    }
    // A directory of skill directories: every one directly below it.
    let source = LocalSource::new(&absolute);
    let mut locators: Vec<String> = source
        .search("")
        .await?
        .into_iter()
        .map(|r| r.locator)
        .collect();
    locators.sort();
    if locators.is_empty() {
        return Err(CliError::Skill(format!(
            "no skill in `{}` or the directories directly below it",
            path.display()
        )));
    }
    let plan = Plan {
        source: Box::new(source),
        locators,
    };
    Ok((plan, None))
}

/// The user the audit trail records: `$USER` when it is a plain name, else `cli`.
pub fn user() -> String {
    std::env::var("USER")
        .ok()
        .filter(|u| {
            !u.is_empty()
                && u.len() <= 64
                && u.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
        })
        .unwrap_or_else(|| "cli".to_owned())
}

/// The installer over the SQLite store (skills, packages and audit trail in one file); the
/// MCP install source uses the same one.
pub(crate) fn installer(store: &SqliteStore) -> Installer {
    Installer::builder(
        Arc::new(store.clone()),
        Arc::new(store.clone()),
        Arc::new(store.clone()),
    )
    .build()
}

fn describe(installed: &Installed) -> String {
    let mut line = format!(
        "installed {} {} ({} trust, scan {} {}, {})",
        installed.skill.slug,
        installed.version.version,
        installed.trust_level.as_str(),
        installed.report.verdict,
        installed.report.score,
        installed.digest
    );
    if installed.needs_approval {
        line.push_str(": disabled until approved");
    }
    line.push('\n');
    for warning in &installed.warnings {
        line.push_str(&format!("    warning: {warning}\n"));
    }
    line
}

/// Prints one installed skill: a JSON line under `--json`, else a line of text (shared with
/// the MCP install source).
pub(crate) fn print_installed(out: Output, installed: &Installed) {
    out.json(&JsonInstalled {
        name: &installed.skill.name,
        slug: &installed.skill.slug,
        version: &installed.version.version,
        trust_level: installed.trust_level.as_str(),
        digest: &installed.digest,
        verdict: installed.report.verdict,
        score: installed.report.score,
        enabled: installed.skill.enabled,
        needs_approval: installed.needs_approval,
        warnings: installed.warnings.iter().map(|w| w.to_string()).collect(),
        audit_sequence: installed.audit_sequence,
    });
    out.text(&describe(installed));
}

/// Installs every skill the source names; the worst status of them.
pub async fn run(args: &InstallArgs, global: &Global, out: Output) -> Result<Status> {
    if let Some(url) = &args.mcp {
        return mcp::install_from_mcp(url, args, global, out).await;
    }
    let Some(text) = args.source.as_deref() else {
        return Err(CliError::Usage(
            "install needs a SOURCE or --mcp URL".into(),
        ));
    };
    let tenant = store::tenant(global)?;
    let (plan, version) = plan(args, text).await?;
    let store = store::open(&store::store_path(global)).await?;
    let installer = installer(&store);
    let scope = UserScope::new(tenant, user());
    let mut status = Status::Ok;
    let bar = out.progress(plan.locators.len() as u64, "installing");
    let single = plan.locators.len() == 1;
    for locator in &plan.locators {
        bar.inc(1);
        let mut request = InstallRequest::new(locator.as_str());
        if let Some(version) = args.version.as_deref().or(version.as_deref()) {
            request = request.version(version);
        }
        if let Some(digest) = &args.expect_digest {
            request = request.expect_digest(digest);
        }
        match installer
            .install(&scope, plan.source.as_ref(), &request)
            .await
        {
            Ok(installed) => {
                if installed.needs_approval {
                    status = status.max(Status::Denied);
                }
                bar.suspend(|| print_installed(out, &installed));
            }
            Err(e) if single => return Err(e.into()),
            Err(e) => {
                let e = CliError::from(e);
                status = status.max(e.status());
                out.json(&JsonFailed {
                    locator,
                    error: e.to_string(),
                    kind: e.kind(),
                    exit_code: e.status().code(),
                });
                bar.suspend(|| out.note(&format!("skills: {locator}: {e}")));
            }
        }
    }
    bar.finish_and_clear();
    Ok(status)
}
