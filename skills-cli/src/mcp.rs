//! The Model Context Protocol side of the command: `skills serve` (skills-mcp's server) and
//! `skills install --mcp URL` (skills-mcp's `McpSkillSource` through the install pipeline).

use std::net::SocketAddr;
use std::sync::Arc;

use skills_install::{InstallRequest, SkillSource};
use skills_mcp::{ClientLimits, McpSkillSource, SkillsMcpServer};
use skills_store_traits::UserScope;

use crate::cli::{Global, InstallArgs, ServeArgs};
use crate::commands::install::{installer, print_installed, user};
use crate::error::{CliError, Result, Status};
use crate::output::Output;
use crate::store;

/// `skills serve --stdio [--dir DIR]` / `skills serve --http ADDR --token-env VAR`.
///
/// With `--dir`, the skill directories below it (loaded through skills-core); otherwise what
/// the resolver gives `--agent` in the store (only enabled skills assigned to it). Either
/// way every request is decided by the policy gate over the store (its permission rules,
/// trust history and audit chain, which `--dir` creates when missing) and recorded there.
/// Runs until the client closes stdio or the process stops.
pub async fn serve(args: &ServeArgs, global: &Global, out: Output) -> Result<Status> {
    let token = match &args.token_env {
        Some(var) => match std::env::var(var) {
            Ok(token) if !token.is_empty() => Some(token),
            _ => {
                return Err(CliError::Usage(format!(
                    "--token-env names `{var}`, which is not set"
                )));
            }
        },
        None => None,
    };
    let http = match (&args.http, args.stdio) {
        (Some(_), true) => {
            return Err(CliError::Usage("choose one of --stdio and --http".into()));
        }
        (Some(addr), false) => {
            let addr: SocketAddr = addr.parse().map_err(|e| {
                CliError::Usage(format!(
                    "--http `{}` is not an address: {e}",
                    addr.chars().take(100).collect::<String>()
                ))
            })?;
            let Some(token) = token else {
                return Err(CliError::Usage(
                    "--http needs --token-env VAR: HTTP clients must present a bearer token".into(),
                ));
            };
            Some((addr, token))
        }
        (None, true) => None,
        (None, false) => {
            return Err(CliError::Usage("serve needs --stdio or --http ADDR".into()));
        }
    };
    let tenant = store::tenant(global)?;
    let path = store::store_path(global);
    let server = match &args.dir {
        Some(dir) => {
            if !dir.is_dir() {
                return Err(CliError::Usage(format!(
                    "--dir `{}` is not a directory",
                    dir.display()
                )));
            }
            let db = Arc::new(store::open(&path).await?);
            let (gate, principal) = store::gate(&db, &tenant, Some(&args.agent)).await?;
            SkillsMcpServer::for_directory(dir.clone())
                .gate(gate, principal)
                .build()
                .await?
        }
        None => {
            let Some(db) = store::open_existing(&path).await? else {
                return Err(CliError::Usage(format!(
                    "no store at `{}`: install skills first, or serve a directory with --dir",
                    path.display()
                )));
            };
            let db = Arc::new(db);
            let (gate, principal) = store::gate(&db, &tenant, Some(&args.agent)).await?;
            SkillsMcpServer::for_agent(db, tenant, args.agent.clone())
                .gate(gate, principal)
                .build()
                .await?
        }
    };
    // Stdout is the protocol on stdio: notes go to stderr only.
    for warning in server.warnings() {
        out.note(&format!("skills: warning: {warning}"));
    }
    match http {
        None => server.serve_stdio().await?,
        Some((addr, token)) => {
            let mut handle = server
                .bind_http(addr, token, skills_mcp::HttpOptions::default())
                .await?;
            out.note(&format!("skills: serving MCP at {}", handle.url()));
            handle.wait().await?;
        }
    }
    Ok(Status::Ok)
}

/// The server id an MCP URL stands for in trust paths (`mcp/<id>/<skill>`): its host and
/// port, lowercased, other characters dropped.
fn server_id(url: &str) -> Option<String> {
    let rest = url
        .strip_prefix("https://")
        .or_else(|| url.strip_prefix("http://"))?;
    let authority = rest.split(['/', '?', '#']).next()?;
    let host = authority.rsplit('@').next()?;
    let id: String = host
        .to_lowercase()
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '.' | '_' | ':'))
        .take(128)
        .collect();
    (!id.is_empty() && !id.starts_with('.')).then_some(id)
}

/// `skills install --mcp URL`: every skill the server lists, each through the whole install
/// pipeline (manifest digests checked, then validated, scanned, digested; `community` unless
/// the host trusts `mcp/<host:port>`); the worst status of them.
pub async fn install_from_mcp(
    url: &str,
    args: &InstallArgs,
    global: &Global,
    out: Output,
) -> Result<Status> {
    let Some(id) = server_id(url) else {
        return Err(CliError::Usage(format!(
            "--mcp must be an http(s) URL, not `{}`",
            url.chars().take(200).collect::<String>()
        )));
    };
    let token = match &args.mcp_token_env {
        Some(var) => match std::env::var(var) {
            Ok(token) if !token.is_empty() => Some(token),
            _ => {
                return Err(CliError::Usage(format!(
                    "--mcp-token-env names `{var}`, which is not set"
                )));
            }
        },
        None => None,
    };
    let tenant = store::tenant(global)?;
    let source =
        McpSkillSource::connect_http(&id, url, token.as_deref(), ClientLimits::default()).await?;
    let listed = source.search("").await?;
    let db = store::open(&store::store_path(global)).await?;
    let installer = installer(&db);
    let scope = UserScope::new(tenant, user());
    let mut status = Status::Ok;
    let bar = out.progress(listed.len() as u64, "installing");
    for skill in &listed {
        bar.inc(1);
        let mut request = InstallRequest::new(skill.locator.as_str());
        if let Some(digest) = &args.expect_digest {
            request = request.expect_digest(digest);
        }
        match installer.install(&scope, &source, &request).await {
            Ok(installed) => {
                if installed.needs_approval {
                    status = status.max(Status::Denied);
                }
                bar.suspend(|| print_installed(out, &installed));
            }
            Err(e) => {
                let e = CliError::from(e);
                status = status.max(e.status());
                bar.suspend(|| out.note(&format!("skills: {}: {e}", skill.locator)));
            }
        }
    }
    bar.finish_and_clear();
    if listed.is_empty() {
        out.note("skills: the server lists no skills");
    }
    Ok(status)
}

#[cfg(test)]
mod tests {
    #[test]
    fn server_ids_come_from_the_host_and_port() {
        use super::server_id;
        assert_eq!(
            server_id("http://127.0.0.1:8765/mcp").as_deref(),
            Some("127.0.0.1:8765")
        );
        assert_eq!(
            server_id("https://user:pw@Skills.Example.com/mcp?x=1").as_deref(),
            Some("skills.example.com")
        );
        assert_eq!(server_id("ftp://x"), None);
        assert_eq!(server_id("http:///mcp"), None);
    }
}
