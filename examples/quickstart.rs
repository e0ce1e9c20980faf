//! The end-to-end demo: `cargo run --example quickstart`.
//!
//! Discovers the skills shipped in `examples/skills/`, prints what it found (with every
//! diagnostic), registers them beside a native Rust skill, checks the dependency graph and
//! layer rules, initializes everything in dependency order and reports health.

use std::io::Write;
use std::path::Path;
use std::sync::Arc;

use async_trait::async_trait;
use skills::core::registry::{BoxError, HealthStatus, NativeSkill, SkillRegistry};
use skills::core::{Discovery, LoadOptions};

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
    }
}
