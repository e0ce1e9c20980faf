//! Shared helpers: skill trees, the Python interop environment.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
#![allow(dead_code)]

use std::path::{Path, PathBuf};

/// Writes `path` below `root`, creating parents.
pub fn write(root: &Path, path: &str, text: &str) {
    let path = root.join(path);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// Two skills: `greeter` with a reference file, `pdf-tools` with a script.
pub fn skills_tree() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(
        root,
        "greeter/SKILL.md",
        "---\nname: greeter\ndescription: Greets people by name.\nmetadata:\n  version: 1.0.0\n---\n# Greeter\n\nSee [the guide](references/guide.md).\n",
    );
    write(root, "greeter/references/guide.md", "Say hello politely.\n");
    write(
        root,
        "pdf-tools/SKILL.md",
        "---\nname: pdf-tools\ndescription: Extract text from PDF files.\nlicense: MIT\n---\n# PDF\n\nRun `scripts/extract.sh`.\n",
    );
    write(
        root,
        "pdf-tools/scripts/extract.sh",
        "#!/bin/sh\necho extracted\n",
    );
    dir
}

/// The Python with `fastmcp` and `mcp` installed (`.ci/mcp-interop.sh` exports it as
/// `SKILLS_MCP_PYTHON`). `None` (after printing why) when it is missing outside CI; a
/// panic under `CI=true`, where the interop tests must run.
pub fn python() -> Option<PathBuf> {
    skills_testenv::mcp_python()
}

/// The tests' Python scripts.
pub fn script(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/python")
        .join(name)
}

/// The `skills-mcp-serve` test server binary (serves a directory over stdio or HTTP).
pub fn serve_bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_skills-mcp-serve"))
}

/// A gate that allows what is served and enabled, recording on an in-memory trail (the
/// trail is returned for the tests that read it).
pub fn allow_all() -> (
    skills_security::gate::PolicyGate,
    skills_security::audit::AuditTrail,
) {
    let trail = skills_security::audit::AuditTrail::in_memory();
    (
        skills_security::gate::PolicyGate::allow_all(trail.clone()),
        trail,
    )
}

/// The principal the tests' servers serve.
pub fn principal() -> skills_security::permissions::Principal {
    skills_security::permissions::Principal::new("acme", "alice").agent("agent-7")
}

/// A server builder for `dir` behind [`allow_all`]'s gate.
pub fn directory_server(dir: &Path) -> skills_mcp::SkillsMcpServerBuilder {
    skills_mcp::SkillsMcpServer::for_directory(dir).gate(allow_all().0, principal())
}
