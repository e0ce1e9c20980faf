//! The Model Context Protocol side of the command: `skills serve` and
//! `skills install --mcp URL`.
//!
//! NOT BUILT IN YET. Both live in the `skills-mcp` crate (its server and its MCP
//! `SkillSource`), built beside this one; until it is wired in, these two functions are
//! the only place that changes, and each returns [`CliError::NotBuiltIn`] (exit status 5)
//! after checking its arguments, so scripts can tell "not available" from a failure.

use crate::cli::{Global, InstallArgs, ServeArgs};
use crate::error::{CliError, Result, Status};
use crate::output::Output;

/// `skills serve --stdio [--dir DIR]` / `skills serve --http ADDR --token-env VAR`.
///
/// To wire in: serve `args.dir` (loaded through `skills-core`) or, without it, what
/// `skills-catalog`'s `Resolver` resolves for `args.agent` in the store
/// (`crate::store::open(&crate::store::store_path(global))`), over stdio or streamable
/// HTTP on `args.http` with the bearer token read from `$<args.token_env>`.
pub async fn serve(args: &ServeArgs, global: &Global, _out: Output) -> Result<Status> {
    if let Some(var) = &args.token_env
        && std::env::var_os(var).is_none_or(|v| v.is_empty())
    {
        return Err(CliError::Usage(format!(
            "--token-env names `{var}`, which is not set"
        )));
    }
    if args.http.is_some() && args.token_env.is_none() {
        return Err(CliError::Usage(
            "--http needs --token-env VAR: HTTP clients must present a bearer token".into(),
        ));
    }
    if let Some(dir) = &args.dir
        && !dir.is_dir()
    {
        return Err(CliError::Usage(format!(
            "--dir `{}` is not a directory",
            dir.display()
        )));
    }
    let _ = global;
    Err(CliError::NotBuiltIn {
        what: "`skills serve` (the MCP server)",
    })
}

/// `skills install --mcp URL`.
///
/// To wire in: open the store (`crate::store::open(&crate::store::store_path(global))`),
/// build `crate::commands::install::installer(&store)`, and for each skill the server
/// lists call `Installer::install` with `skills-mcp`'s MCP `SkillSource` (an MCP origin is
/// `community` unless trusted) and the scope
/// `UserScope::new(crate::store::tenant(global)?, crate::commands::install::user())`,
/// printing each with `crate::commands::install::print_installed`.
pub async fn install_from_mcp(
    url: &str,
    _args: &InstallArgs,
    global: &Global,
    _out: Output,
) -> Result<Status> {
    if !(url.starts_with("https://") || url.starts_with("http://")) {
        return Err(CliError::Usage(format!(
            "--mcp must be an http(s) URL, not `{}`",
            url.chars().take(200).collect::<String>()
        )));
    }
    let _ = global;
    Err(CliError::NotBuiltIn {
        what: "`skills install --mcp` (the MCP install source)",
    })
}
