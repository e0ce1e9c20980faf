//! `skills`: the operator's command for agent skills — validate, render for a prompt, scan,
//! install into the embedded SQLite store, list, assign to agents, switch off and on, set
//! trust, remove, run a referenced script through approval and the sandbox, list and
//! verify the audit trail, and (with `skills-mcp`) serve over MCP.
//!
//! Every command takes `--json` (stable key order), `--quiet`, `--store PATH` and
//! `--tenant ID`; exit statuses are listed in `skills --help` (see [`cli::EXIT_CODES`]).
//! Every argument is untrusted: malformed ones are usage errors (status 2), failures are
//! typed [`error::CliError`]s with their own status, and nothing here panics on input.

mod approval;
mod cli;
mod commands;
mod error;
mod mcp;
mod output;
mod store;

use std::process::ExitCode;

use clap::{CommandFactory, Parser};
use serde::Serialize;

use cli::{Cli, Command};
use error::{CliError, Result, Status};
use output::Output;

/// A failure under `--json`; fields in this order.
#[derive(Serialize)]
struct JsonError<'a> {
    error: String,
    kind: &'a str,
    exit_code: u8,
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            // --help and --version print and succeed; anything else is a usage error (2).
            let _ = e.print();
            return ExitCode::from(if e.use_stderr() {
                Status::Usage.code()
            } else {
                Status::Ok.code()
            });
        }
    };
    let out = Output {
        json: cli.global.json,
        quiet: cli.global.quiet,
    };
    let status = match dispatch(&cli, out) {
        Ok(status) => status,
        Err(e) => {
            let status = e.status();
            if out.json {
                out.json(&JsonError {
                    error: e.to_string(),
                    kind: e.kind(),
                    exit_code: status.code(),
                });
            }
            // Errors are printed even under --quiet: the status alone rarely says why.
            eprintln_safe(&format!("skills: error: {e}"));
            status
        }
    };
    ExitCode::from(status.code())
}

fn eprintln_safe(text: &str) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr().lock(), "{text}");
}

fn dispatch(cli: &Cli, out: Output) -> Result<Status> {
    match &cli.command {
        Command::Validate(args) => commands::validate::run(args, out),
        Command::ToPrompt(args) => commands::to_prompt::run(args, out),
        Command::Scan(args) => commands::scan::run(args, out),
        Command::Completions(args) => {
            let mut command = Cli::command();
            let mut buffer = Vec::new();
            clap_complete::generate(args.shell, &mut command, "skills", &mut buffer);
            output::write_out(&String::from_utf8_lossy(&buffer));
            Ok(Status::Ok)
        }
        command => {
            // The commands that touch the store or the network run on tokio.
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .map_err(|source| CliError::Io {
                    action: "start the async runtime for",
                    path: "skills".into(),
                    source,
                })?;
            runtime.block_on(dispatch_async(command, &cli.global, out))
        }
    }
}

async fn dispatch_async(command: &Command, global: &cli::Global, out: Output) -> Result<Status> {
    match command {
        Command::Install(args) => {
            // reqwest's rustls needs a process-wide crypto provider; a second install is
            // a no-op error.
            let _ = rustls::crypto::ring::default_provider().install_default();
            commands::install::run(args, global, out).await
        }
        Command::List => commands::list::run(global, out).await,
        Command::Assign(args) => commands::operator::assign(args, global, out, true).await,
        Command::Unassign(args) => commands::operator::assign(args, global, out, false).await,
        Command::Enable(args) => commands::operator::enable(args, global, out, true).await,
        Command::Disable(args) => commands::operator::enable(args, global, out, false).await,
        Command::Trust(args) => commands::operator::trust(args, global, out).await,
        Command::Remove(args) => commands::operator::remove(args, global, out).await,
        Command::Run(args) => commands::run::run(args, global, out).await,
        Command::Audit(command) => commands::audit::run(command, global, out).await,
        Command::Serve(args) => mcp::serve(args, global, out).await,
        Command::Validate(_)
        | Command::ToPrompt(_)
        | Command::Scan(_)
        | Command::Completions(_) => Err(CliError::Usage("not an async command".into())),
    }
}
