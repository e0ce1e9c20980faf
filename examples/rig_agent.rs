//! `cargo run --example rig_agent [-- ARGS]`: the rig agent example, offline on rig's scripted
//! model (see `skills-rig/examples/rig_agent.rs` for what it does and how to point it at a
//! real model).
//!
//! skills-rig is its own Cargo workspace: rig-core turns on serde_json's `preserve_order`,
//! which would reorder the family's JSON in any build of this workspace that compiled it. So
//! this example compiles no rig code; it runs `cargo run --manifest-path
//! skills-rig/Cargo.toml --example rig_agent` with the same arguments and exits with its
//! status.

use std::path::Path;
use std::process::{Command, ExitCode};

fn main() -> ExitCode {
    // `cargo run` sets CARGO to the cargo that runs us; plain `cargo` otherwise.
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR")).join("skills-rig/Cargo.toml");
    let status = Command::new(cargo)
        .arg("run")
        .arg("--quiet")
        .arg("--manifest-path")
        .arg(&manifest)
        .args(["--example", "rig_agent", "--"])
        .args(std::env::args_os().skip(1))
        .status();
    match status {
        Ok(status) if status.success() => ExitCode::SUCCESS,
        Ok(status) => {
            eprintln!("rig_agent: the skills-rig example ended with {status}");
            ExitCode::FAILURE
        }
        Err(error) => {
            eprintln!(
                "rig_agent: could not run cargo for {}: {error}",
                manifest.display()
            );
            ExitCode::FAILURE
        }
    }
}
