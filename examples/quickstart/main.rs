//! The end-to-end demo: `cargo run --example quickstart`.
//!
//! Discovers the skills shipped in `examples/skills/`, prints what it found (with every
//! diagnostic), registers them beside a native Rust skill, checks the dependency graph and
//! layer rules, initializes everything in dependency order and reports health. Then it puts
//! the same skills into the embedded SQLite store, assigns them, records each store on the
//! tenant's tamper-evident audit chain, resolves them for an agent and syncs them into a
//! temporary sandbox directory. Last ([`orchestrate`]), it classifies and sanitizes a CRM
//! note, lets a scripted model pick three skills for a task, plans them, approves the plan,
//! runs them (one a referenced script in the process sandbox, after its own approval),
//! prints every progress event and verifies the audit chain.
//!
//! The store is a file that outlives the run: `SKILLS_QUICKSTART_DB` if set, otherwise
//! `<target dir>/quickstart/skills.sqlite3`. Run the demo twice and the second run finds the
//! first run's audit records (and re-imports the skills over themselves).

mod orchestrate;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use async_trait::async_trait;
use skills::catalog::portable::{self, ImportOptions, OnClash};
use skills::catalog::{LocalSandboxFs, Resolver, sync_agent};
use skills::core::registry::{BoxError, HealthStatus, NativeSkill, SkillRegistry};
use skills::core::{Discovery, LoadOptions};
use skills::security::AuditTrail;
use skills::sqlite::SqliteStore;
use skills::store::audit::AuditRecord;
use skills::store::{NewAssignment, SkillRecord, SkillStore, TenantId};

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
    if let Err(error) = run(&mut stdout.lock(), &database_path()) {
        eprintln!("quickstart: {error}");
        std::process::exit(1);
    }
}

/// `SKILLS_QUICKSTART_DB`, or `<target dir>/quickstart/skills.sqlite3`: the target directory
/// is three levels above this executable (`<target>/<profile>/examples/quickstart`), which
/// follows `CARGO_TARGET_DIR` wherever it points.
fn database_path() -> PathBuf {
    if let Some(path) = std::env::var_os("SKILLS_QUICKSTART_DB") {
        return path.into();
    }
    let target = std::env::current_exe()
        .ok()
        .and_then(|exe| exe.ancestors().nth(3).map(Path::to_path_buf))
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("target"));
    target.join("quickstart").join("skills.sqlite3")
}

/// The demo, writing to `out` and keeping its store in the SQLite file `database`.
fn run(out: &mut impl Write, database: &Path) -> std::io::Result<()> {
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

    // The process sandbox supervises its children with tokio; everything else runs on any
    // executor.
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    runtime.block_on(catalog(out, &skill_dirs, &root, database))
}

fn io_error(error: impl std::fmt::Display) -> std::io::Error {
    std::io::Error::other(error.to_string())
}

/// Appends an audit record of storing `skill` to the tenant's chain.
async fn audit_stored(
    trail: &AuditTrail,
    tenant: &TenantId,
    skill: &SkillRecord,
) -> std::io::Result<()> {
    let mut record = AuditRecord::new(
        "quickstart",
        &skill.id,
        &skill.slug,
        "admin",
        &skill.checksum,
        true,
    );
    record.agent_id = Some("agent-1".to_owned());
    record.trigger_reason = Some("stored by the quickstart".to_owned());
    trail.append(tenant, record).await.map_err(io_error)?;
    Ok(())
}

/// Stores the skills in the SQLite file, assigns them, audits each store, resolves them for
/// an agent and syncs its sandbox.
async fn catalog(
    out: &mut impl Write,
    skill_dirs: &[PathBuf],
    skills_root: &Path,
    database: &Path,
) -> std::io::Result<()> {
    if let Some(dir) = database.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let store = SqliteStore::open(database).await.map_err(io_error)?;
    let trail = AuditTrail::new(Arc::new(store.clone()));
    let tenant = TenantId::new("demo");
    // A second run finds the first run's skills: import over them. They are this demo's own
    // skills, so it says they run at `user` trust; an import that says nothing gets
    // `community`, the least.
    let mut options = ImportOptions::on_clash(OnClash::Overwrite);
    options.trust_level = Some(skills::security::TrustLevel::User.as_str().to_owned());
    writeln!(
        out,
        "\nCatalog (SQLite store {}, tenant `demo`):",
        database.display()
    )?;
    let before = trail.head(&tenant).await.map_err(io_error)?;
    let before = before.map_or(0, |head| head.sequence);
    writeln!(out, "  audit records before this run: {before}")?;
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
        let scope = assignment.scope;
        match store.create_assignment(&tenant, assignment).await {
            // Assigned by an earlier run.
            Ok(_) | Err(skills::store::Error::Conflict { .. }) => {}
            Err(error) => return Err(io_error(error)),
        }
        audit_stored(&trail, &tenant, &imported.skill).await?;
        writeln!(
            out,
            "  stored {} ({} files), assigned {}",
            imported.skill.slug,
            store
                .list_skill_files(&tenant, &imported.skill.id)
                .await
                .map_err(io_error)?
                .len(),
            scope.as_str()
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
    let verification = trail.verify(&tenant).await.map_err(io_error)?;
    if !verification.is_intact() {
        return Err(io_error(format!(
            "the audit chain is broken: {:?}",
            verification.broken
        )));
    }
    writeln!(
        out,
        "  audit records so far: {}, chain verified ({0} links and hashes)",
        verification.checked
    )?;
    orchestrate::orchestrate(out, &trail, &store, resolution, skills_root).await
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_demo_loads_registers_and_initializes_everything() {
        // A fresh database of the test's own: never the one `cargo run` keeps.
        let dir = tempfile::tempdir().unwrap();
        let database = dir.path().join("skills.sqlite3");
        let mut out = Vec::new();
        super::run(&mut out, &database).unwrap();
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
        assert!(out.contains("audit records before this run: 0"), "{out}");
        assert!(
            out.contains("audit records so far: 4, chain verified"),
            "{out}"
        );

        // The orchestration half: the note sanitized per trust level, three skills chosen
        // by the scripted model, planned in two groups, approved, run, audited.
        assert!(
            out.contains("a user skill sees: Call with Dana Whitfield ([EMAIL_001], [PHONE_001])"),
            "{out}"
        );
        assert!(
            out.contains("a community skill sees: [GENERAL_001]"),
            "{out}"
        );
        assert!(!out.contains("dana.whitfield@"), "{out}");
        assert!(out.contains("plan_created: 1. web-research, 2. pdf-tools, 3. changelog-writer (approval needed: true)"), "{out}");
        let events: Vec<&str> = out
            .lines()
            .filter_map(|l| l.trim().split([':', ' ']).next())
            .filter(|w| {
                w.starts_with("step_")
                    || w.starts_with("group_")
                    || *w == "synthesis"
                    || *w == "plan_created"
            })
            .collect();
        assert_eq!(events.first(), Some(&"plan_created"), "{out}");
        assert_eq!(events.last(), Some(&"synthesis"), "{out}");
        assert_eq!(
            events.iter().filter(|e| **e == "group_starting").count(),
            2,
            "{out}"
        );
        assert!(out.contains("web-research complete: 2.4 adds SSO"), "{out}");
        assert!(out.contains("changelog-writer complete: ## 2.4"), "{out}");
        let sandboxed = skills::security::sandbox::ProcessSandbox::new()
            .probe()
            .tier
            .is_some();
        if sandboxed {
            // The referenced script really ran, in the sandbox, after its approval through
            // the option runtime, and read the PDF staged for it.
            assert!(
                out.contains("hitl-option-request: Run the scripts of skill pdf-tools? -> dana-rep answers yes_once"),
                "{out}"
            );
            assert!(
                out.contains("input: inputs/northwind-2.4-spec.pdf (889 bytes"),
                "{out}"
            );
            assert!(
                out.contains("pdf-tools complete: Northwind Analytics 2.4 - Product Specification"),
                "{out}"
            );
            assert!(
                out.contains("| 1. Single sign-on with SAML 2.0 and OpenID Connect"),
                "{out}"
            );
            assert!(out.contains("status: Completed"), "{out}");
        } else {
            assert!(out.contains("pdf-tools failed"), "{out}");
        }
        // On the default gate each step's first run asks the user, shown and audited:
        // per step the gate asks, allows on the yes, then the execution record.
        for skill in ["web-research", "pdf-tools", "changelog-writer"] {
            assert!(
                out.contains(&format!("the gate asks about {skill}:")),
                "{out}"
            );
        }
        assert!(
            out.contains("audit: 9 records from this task, chain of 13 verified: intact"),
            "{out}"
        );

        // A second run on the same file sees the first run's records and re-imports the
        // skills without failing.
        let mut again = Vec::new();
        super::run(&mut again, &database).unwrap();
        let again = String::from_utf8(again).unwrap();
        assert!(
            again.contains("stored pdf-tools (2 files), assigned"),
            "{again}"
        );
        assert!(
            again.contains("audit records before this run: 13"),
            "{again}"
        );
        assert!(
            again.contains("audit records so far: 17, chain verified"),
            "{again}"
        );
        assert!(again.contains("chain of 26 verified: intact"), "{again}");
    }
}
