//! A minimal server for tests and for trying the crate before the `skills` command:
//! `skills-mcp-serve --dir <skills> --stdio` or
//! `SKILLS_MCP_TOKEN=<token> skills-mcp-serve --dir <skills> --http 127.0.0.1:8765`.
//! The `skills serve` command of `skills-cli` is the operator's interface; this binary takes
//! only these arguments.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;

use skills_mcp::SkillsMcpServer;
use skills_security::audit::AuditTrail;
use skills_security::gate::PolicyGate;
use skills_security::permissions::Principal;

const USAGE: &str = "usage: skills-mcp-serve --dir <skills> (--stdio | --http <addr>)\n  --http reads the bearer token from SKILLS_MCP_TOKEN and prints `listening <url>`";

enum Mode {
    Stdio,
    Http(SocketAddr),
}

fn parse() -> Result<(PathBuf, Mode), String> {
    let mut args = std::env::args().skip(1);
    let (mut dir, mut mode) = (None, None);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--dir" => dir = args.next().map(PathBuf::from),
            "--stdio" => mode = Some(Mode::Stdio),
            "--http" => {
                let addr = args.next().ok_or("--http needs an address")?;
                mode = Some(Mode::Http(
                    addr.parse()
                        .map_err(|e| format!("bad address `{addr}`: {e}"))?,
                ));
            }
            other => return Err(format!("unknown argument `{other}`")),
        }
    }
    Ok((
        dir.ok_or("--dir is required")?,
        mode.ok_or("--stdio or --http is required")?,
    ))
}

#[tokio::main]
async fn main() -> ExitCode {
    let (dir, mode) = match parse() {
        Ok(parsed) => parsed,
        Err(e) => {
            eprintln!("{e}\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    // A test server: every read allowed and recorded on a trail kept in memory.
    let gate = PolicyGate::allow_all(AuditTrail::in_memory());
    let principal = Principal::new("local", "skills-mcp-serve");
    let server = match SkillsMcpServer::for_directory(dir)
        .gate(gate, principal)
        .build()
        .await
    {
        Ok(server) => server,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::FAILURE;
        }
    };
    for warning in server.warnings() {
        eprintln!("warning: {warning}");
    }
    let outcome = match mode {
        Mode::Stdio => server.serve_stdio().await,
        Mode::Http(addr) => {
            let Ok(token) = std::env::var("SKILLS_MCP_TOKEN") else {
                eprintln!("SKILLS_MCP_TOKEN must hold the bearer token\n{USAGE}");
                return ExitCode::from(2);
            };
            match server
                .bind_http(addr, token, skills_mcp::HttpOptions::default())
                .await
            {
                Ok(mut handle) => {
                    println!("listening {}", handle.url());
                    handle.wait().await
                }
                Err(e) => Err(e),
            }
        }
    };
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("{e}");
            ExitCode::FAILURE
        }
    }
}
