//! The end-to-end demo: `cargo run --example quickstart`.
//!
//! Discovers the skills shipped in `examples/skills/`, prints what it found (with every
//! diagnostic), registers them beside a native Rust skill, checks the dependency graph and
//! layer rules, initializes everything in dependency order and reports health. Then it puts
//! the same skills into a store, assigns them, resolves them for an agent and syncs them into
//! a temporary sandbox directory.

use std::io::Write;
use std::path::Path;
use std::sync::Arc;

use async_trait::async_trait;
use skills::catalog::portable::{self, ImportOptions};
use skills::catalog::{LocalSandboxFs, Resolver, sync_agent};
use skills::core::registry::{BoxError, HealthStatus, NativeSkill, SkillRegistry};
use skills::core::{Discovery, LoadOptions};
use skills::store::in_memory::InMemorySkillStore;
use skills::store::{NewAssignment, SkillStore, TenantId};

/// The layer-1 gateway skill the `web-research` skill depends on, implemented in Rust.
struct ApiClient;

#[async_trait]
impl NativeSkill for ApiClient {
    fn name(&self) -> &str {
        "api_client"
    }

    fn layer(&self) -> Option<u8> {
        Some(1)
    }

    async fn initialize(&self) -> Result<(), BoxError> {
        Ok(())
    }

    async fn health_check(&self) -> HealthStatus {
        HealthStatus::Healthy
    }
}

fn main() {
    let stdout = std::io::stdout();
    if run(&mut stdout.lock()).is_err() {
        std::process::exit(1);
    }
}

/// The demo, writing to `out`.
fn run(out: &mut impl Write) -> std::io::Result<()> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/skills");
    writeln!(out, "Scanning {}\n", root.display())?;
    let report = Discovery::new(LoadOptions::default()).root(&root).run();

    for found in &report.reports {
        let shown = found
            .path
            .strip_prefix(&root)
            .unwrap_or(&found.path)
            .display();
        match &found.skill {
            Some(skill) => {
                writeln!(out, "skill {}  ({shown})", skill.name())?;
                writeln!(out, "  {}", skill.description())?;
                if let Some(md) = skill.skill_md() {
                    let fm = &md.frontmatter;
                    if let Some(license) = &fm.license {
                        writeln!(out, "  license: {license}")?;
                    }
                    let tools = fm.allowed_tools_list();
                    if !tools.is_empty() {
                        writeln!(out, "  allowed tools: {}", tools.join(", "))?;
                    }
                    if !fm.tags.is_empty() {
                        writeln!(out, "  tags: {}", fm.tags.join(", "))?;
                    }
                    writeln!(out, "  body: {} lines", md.body.lines().count())?;
                }
                if let Some(manifest) = skill.manifest() {
                    writeln!(
                        out,
                        "  skill.json: layer {}, depends on [{}], focus [{}]",
                        manifest.layer,
                        manifest.dependencies.join(", "),
                        manifest.focus_affinity.join(", ")
                    )?;
                    for tool in &manifest.tools {
                        writeln!(out, "  tool {}: {}", tool.name, tool.description)?;
                    }
                }
                for file in skill.files() {
                    writeln!(
                        out,
                        "  file {} ({} bytes, {}, sha256 {}..)",
                        file.path,
                        file.size,
                        file.content_type,
                        file.sha256.get(..12).unwrap_or(&file.sha256)
                    )?;
                }
                writeln!(out, "  digest {}", skill.digest())?;
            }
            None => writeln!(out, "invalid {shown}")?,
        }
        for diagnostic in &found.diagnostics {
            writeln!(out, "  {diagnostic}")?;
        }
        writeln!(out)?;
    }

    let skill_dirs: Vec<_> = report.skills().map(|s| s.dir().to_path_buf()).collect();
    let mut registry = SkillRegistry::default();
    if registry.register_native(Arc::new(ApiClient)).is_err() {
        writeln!(out, "api_client was already registered")?;
    }
    for diagnostic in registry.register_all(report.into_skills()) {
        writeln!(out, "{diagnostic}")?;
    }
    let check = registry.check();
    writeln!(out, "Registry: {} skills", registry.len())?;
    writeln!(out, "  load order: {}", check.load_order.join(" -> "))?;
    for diagnostic in &check.diagnostics {
        writeln!(out, "  {diagnostic}")?;
    }

    let init = futures::executor::block_on(registry.initialize());
    writeln!(out, "  initialized: {}", init.ready.join(", "))?;
    let health = futures::executor::block_on(registry.health());
    writeln!(out, "  health: {}", health.overall)?;

    futures::executor::block_on(catalog(out, &skill_dirs))
}

fn io_error(error: skills::catalog::Error) -> std::io::Error {
    std::io::Error::other(error.to_string())
}

/// Stores the skills, assigns them, resolves them for an agent and syncs its sandbox.
async fn catalog(out: &mut impl Write, skill_dirs: &[std::path::PathBuf]) -> std::io::Result<()> {
    let store = InMemorySkillStore::new();
    let tenant = TenantId::new("demo");
    let options = ImportOptions::default();
    writeln!(out, "\nCatalog (in-memory store, tenant `demo`):")?;
    for (index, dir) in skill_dirs.iter().enumerate() {
        let document = portable::package_dir(dir, &options.limits).map_err(io_error)?;
        let imported = portable::import(&store, &tenant, document, &options)
            .await
            .map_err(io_error)?;
        // Half the skills go to everyone, the rest to the team `research`.
        let assignment = if index % 2 == 0 {
            NewAssignment::global(&imported.skill.id)
        } else {
            NewAssignment::team(&imported.skill.id, "research")
        };
        let assignment = store
            .create_assignment(&tenant, assignment)
            .await
            .map_err(|e| std::io::Error::other(e.to_string()))?;
        writeln!(
            out,
            "  stored {} ({} files), assigned {}",
            imported.skill.slug,
            store
                .list_skill_files(&tenant, &imported.skill.id)
                .await
                .map_err(|e| std::io::Error::other(e.to_string()))?
                .len(),
            assignment.scope.as_str()
        )?;
    }
    let resolution = Resolver::new()
        .resolve_for_agent(&store, &tenant, "agent-1", Some("research"), &[])
        .await
        .map_err(io_error)?;
    let resolved: Vec<&str> = resolution.skills.iter().map(|s| s.id.as_str()).collect();
    writeln!(out, "  resolved for agent-1: {}", resolved.join(", "))?;
    let home = tempfile::tempdir()?;
    let sandbox = LocalSandboxFs::new(home.path().join(".skills"));
    let report = sync_agent(&store, &tenant, "agent-1", Some("research"), &sandbox)
        .await
        .map_err(io_error)?;
    writeln!(
        out,
        "  synced into the sandbox: {}",
        report.synced.join(", ")
    )?;
    let outsider = sync_agent(&store, &tenant, "agent-2", None, &sandbox)
        .await
        .map_err(io_error)?;
    writeln!(
        out,
        "  agent-2 (no team) keeps {} and loses {}",
        outsider.unchanged.join(", "),
        outsider.removed.join(", ")
    )?;
    Ok(())
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_demo_loads_registers_and_initializes_everything() {
        let mut out = Vec::new();
        super::run(&mut out).unwrap();
        let out = String::from_utf8(out).unwrap();
        for name in [
            "changelog-writer",
            "git-commit-helper",
            "pdf-tools",
            "web-research",
        ] {
            assert!(out.contains(&format!("skill {name}")), "{out}");
        }
        assert!(!out.contains("invalid"), "{out}");
        assert!(out.contains("file scripts/extract_text.py"));
        assert!(out.contains("tool search:"));
        assert!(out.contains("Registry: 5 skills"));
        assert!(out.contains("load order: api_client -> web-research"));
        assert!(out.contains(
            "initialized: api_client, changelog-writer, git-commit-helper, pdf-tools, web-research"
        ));
        assert!(out.contains("health: healthy"));
        assert!(out.contains("stored pdf-tools (2 files)"), "{out}");
        assert!(out.contains("synced into the sandbox: changelog-writer, git-commit-helper, pdf-tools, web-research"), "{out}");
        assert!(out.contains("agent-2 (no team) keeps changelog-writer, pdf-tools and loses git-commit-helper, web-research"), "{out}");
    }
}
