//! The skill catalog end to end.
//!
//! With no arguments: create skills (a simple one and a directory one), assign them globally,
//! to a team and to an agent, resolve for the agent, sync into a temporary sandbox and list
//! what landed, export one skill and import it into a second store.
//!
//! With `import FILE --into DIR`: import a portable JSON or `.tar.gz` file into a fresh
//! store, materialize it under DIR, and print one JSON object:
//! `{"ok": true, "slug": ..., "path": ..., "files": [...]}` or
//! `{"ok": false, "error": {"kind": ..., "message": ...}}` (exit 1). Exit 2 for usage errors.
//!
//! ```text
//! cargo run --example catalog
//! cargo run --example catalog -- import skill.json --into /tmp/cache
//! ```

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use futures::executor::block_on;
use skills::catalog::portable::{self, ExportMetadata, ImportOptions, archive};
use skills::catalog::{Error, LocalSandboxFs, Materializer, Resolver, sync_agent};
use skills::store::in_memory::InMemorySkillStore;
use skills::store::{NewAssignment, NewSkill, SkillStore, TenantId};
use skills::{Discovery, LoadOptions};

fn main() -> ExitCode {
    let stdout = std::io::stdout();
    let stderr = std::io::stderr();
    let code = run(
        std::env::args().skip(1),
        &mut stdout.lock(),
        &mut stderr.lock(),
    );
    ExitCode::from(code)
}

fn run(args: impl Iterator<Item = String>, out: &mut impl Write, err: &mut impl Write) -> u8 {
    let args: Vec<String> = args.collect();
    match args.as_slice() {
        [] => match block_on(demo(out)) {
            Ok(()) => 0,
            Err(e) => {
                let _ = writeln!(err, "catalog demo failed: {e}");
                1
            }
        },
        [cmd, file, into, dir] if cmd == "import" && into == "--into" => {
            let value = match block_on(import(Path::new(file), Path::new(dir))) {
                Ok(value) => value,
                Err(e) => serde_json::json!({
                    "ok": false,
                    "error": {"kind": e.kind(), "message": e.to_string()},
                }),
            };
            let ok = value["ok"] == true;
            let _ = writeln!(out, "{value}");
            if ok { 0 } else { 1 }
        }
        _ => {
            let _ = writeln!(
                err,
                "usage: catalog                          run the demo\n       catalog import FILE --into DIR   import a portable .json or .tar.gz"
            );
            2
        }
    }
}

/// Imports FILE into a fresh store and materializes it under DIR.
async fn import(file: &Path, dir: &Path) -> Result<serde_json::Value, Error> {
    let options = ImportOptions::default();
    let bytes = read_capped(file, options.max_document_bytes)?;
    let document = if bytes.starts_with(&[0x1f, 0x8b]) {
        archive::from_tar_gz(&bytes, &options)?
    } else {
        portable::parse_json(&bytes, &options)?
    };
    let store = InMemorySkillStore::new();
    let tenant = TenantId::new("import");
    let imported = portable::import(&store, &tenant, document, &options).await?;
    let materialized = Materializer::new(dir)
        .materialize(&store, &tenant, &imported.skill.id)
        .await?;
    let mut files = vec!["SKILL.md".to_owned()];
    files.extend(
        store
            .list_skill_files(&tenant, &imported.skill.id)
            .await?
            .into_iter()
            .map(|f| f.relative_path),
    );
    Ok(serde_json::json!({
        "ok": true,
        "slug": imported.skill.slug,
        "path": materialized.path,
        "files": files,
    }))
}

fn read_capped(file: &Path, limit: u64) -> Result<Vec<u8>, Error> {
    use std::io::Read;
    let handle = std::fs::File::open(file).map_err(|source| Error::Io {
        action: "open",
        path: file.to_path_buf(),
        source,
    })?;
    let mut bytes = Vec::new();
    handle
        .take(limit + 1)
        .read_to_end(&mut bytes)
        .map_err(|source| Error::Io {
            action: "read",
            path: file.to_path_buf(),
            source,
        })?;
    if bytes.len() as u64 > limit {
        return Err(Error::TooLarge {
            what: format!("`{}`", file.display()),
            limit,
        });
    }
    Ok(bytes)
}

async fn demo(out: &mut impl Write) -> Result<(), Box<dyn std::error::Error>> {
    let store = InMemorySkillStore::new();
    let tenant = TenantId::new("acme");

    // A simple skill and a directory skill.
    let mut standup = NewSkill::new(
        "Standup Notes",
        "standup-notes",
        "---\nname: standup-notes\ndescription: Summarise yesterday's work for a standup.\n---\nList what changed, what is next, what blocks.\n",
    );
    standup.description = Some("Summarise yesterday's work for a standup.".into());
    standup.category = Some("writing".into());
    let standup = store.create_skill(&tenant, standup).await?;
    let mut triage = NewSkill::new(
        "Jira Triage",
        "jira-triage",
        "---\nname: jira-triage\ndescription: Triage tickets by priority and severity.\n---\nRead references/priority-matrix.md, then run scripts/report.sh.\n",
    )
    .with_file("references/priority-matrix.md", "# Priority matrix\n\n| impact | urgency | priority |\n")
    .with_file("scripts/report.sh", "#!/bin/sh\necho \"triage report\"\n");
    triage.description = Some("Triage tickets by priority and severity.".into());
    triage.category = Some("ops".into());
    triage.tags = vec!["jira".into(), "triage".into()];
    let triage = store.create_skill(&tenant, triage).await?;
    let mut deploy = NewSkill::new(
        "Deploy Checklist",
        "deploy-checklist",
        "---\nname: deploy-checklist\ndescription: Walk through a production deploy.\n---\nCheck, deploy, verify.\n",
    );
    deploy.description = Some("Walk through a production deploy.".into());
    let deploy = store.create_skill(&tenant, deploy).await?;
    writeln!(out, "Created 3 skills in tenant `{tenant}`")?;

    // Global, team and agent assignments.
    store
        .create_assignment(&tenant, NewAssignment::global(&standup.id))
        .await?;
    store
        .create_assignment(
            &tenant,
            NewAssignment::team(&triage.id, "support")
                .priority(5)
                .auto_inject(true),
        )
        .await?;
    store
        .create_assignment(
            &tenant,
            NewAssignment::agent(&deploy.id, "agent-7").priority(9),
        )
        .await?;
    store
        .create_assignment(&tenant, NewAssignment::agent(&deploy.id, "agent-8"))
        .await?;
    writeln!(
        out,
        "Assigned: standup-notes globally, jira-triage to team support, deploy-checklist to agent-7\n"
    )?;

    // Resolve for agent-7 in team support, with the repo skills of examples/skills.
    let repo_root = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/skills");
    let repo = Discovery::new(LoadOptions::default())
        .root(&repo_root)
        .run()
        .into_skills();
    let resolution = Resolver::new()
        .resolve_for_agent(&store, &tenant, "agent-7", Some("support"), &repo)
        .await?;
    writeln!(out, "Resolved for agent-7 (team support):")?;
    for skill in &resolution.skills {
        let place = skill
            .sandbox_path
            .clone()
            .or_else(|| {
                skill.absolute_path.as_ref().map(|p| {
                    p.strip_prefix(&repo_root)
                        .unwrap_or(p)
                        .display()
                        .to_string()
                })
            })
            .unwrap_or_default();
        writeln!(
            out,
            "  [{}] {:<18} priority {:>2}  {}",
            skill.source.as_str(),
            skill.id,
            skill.priority,
            place
        )?;
    }

    // Sync into a temporary sandbox and list what landed.
    let sandbox_home = tempfile::tempdir()?;
    let skills_dir = sandbox_home.path().join(".skills");
    let sandbox = LocalSandboxFs::new(&skills_dir);
    let report = sync_agent(&store, &tenant, "agent-7", Some("support"), &sandbox).await?;
    writeln!(
        out,
        "\nSync: synced {:?}, removed {:?}, errors {:?}",
        report.synced, report.removed, report.errors
    )?;
    for path in list_files(&skills_dir) {
        writeln!(out, "  .skills/{path}")?;
    }
    let again = sync_agent(&store, &tenant, "agent-7", Some("support"), &sandbox).await?;
    writeln!(out, "Second sync: unchanged {:?}", again.unchanged)?;

    // Export one skill and import it into a second store.
    let document = portable::export(&store, &tenant, &triage.id, ExportMetadata::default()).await?;
    let json = portable::to_json(&document)?;
    writeln!(
        out,
        "\nExported jira-triage: {} bytes of portable JSON (format version 2)",
        json.len()
    )?;
    let second = InMemorySkillStore::new();
    let options = ImportOptions::default();
    let imported = portable::import(
        &second,
        &tenant,
        portable::parse_json(json.as_bytes(), &options)?,
        &options,
    )
    .await?;
    let round_trip = portable::to_json(
        &portable::export(
            &second,
            &tenant,
            &imported.skill.id,
            ExportMetadata::default(),
        )
        .await?,
    )?;
    writeln!(
        out,
        "Imported into a second store as `{}` ({:?}); re-export identical: {}",
        imported.skill.slug,
        imported.action,
        round_trip == json
    )?;
    Ok(())
}

/// Every file under `root`, relative, sorted.
fn list_files(root: &Path) -> Vec<String> {
    let mut files = Vec::new();
    let mut stack: Vec<PathBuf> = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else if let Ok(relative) = path.strip_prefix(root) {
                files.push(relative.display().to_string());
            }
        }
    }
    files.sort();
    files
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(args: &[&str]) -> (u8, String) {
        let (mut out, mut err) = (Vec::new(), Vec::new());
        let code = run(args.iter().map(|a| (*a).to_owned()), &mut out, &mut err);
        (code, String::from_utf8(out).unwrap())
    }

    #[test]
    fn the_demo_assigns_resolves_syncs_and_round_trips() {
        let (code, out) = call(&[]);
        assert_eq!(code, 0, "{out}");
        assert!(
            out.contains("[admin] deploy-checklist   priority  9"),
            "{out}"
        );
        assert!(out.contains("[repo] pdf-tools"), "{out}");
        assert!(
            out.contains(".skills/jira-triage/scripts/report.sh"),
            "{out}"
        );
        assert!(
            out.contains("synced [\"deploy-checklist\", \"jira-triage\", \"standup-notes\"]"),
            "{out}"
        );
        assert!(
            out.contains("unchanged [\"deploy-checklist\", \"jira-triage\", \"standup-notes\"]"),
            "{out}"
        );
        assert!(out.contains("re-export identical: true"), "{out}");
    }

    #[test]
    fn import_prints_one_json_object() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("skill.json");
        let document = serde_json::json!({
            "formatVersion": 2,
            "skill": {"name": "Hello", "slug": "hello", "content": "# Hello\n",
                      "files": [{"path": "docs/a.md", "content": "a"}]}
        });
        std::fs::write(&file, document.to_string()).unwrap();
        let cache = dir.path().join("cache");
        let (code, out) = call(&[
            "import",
            file.to_str().unwrap(),
            "--into",
            cache.to_str().unwrap(),
        ]);
        assert_eq!(code, 0, "{out}");
        let value: serde_json::Value = serde_json::from_str(&out).unwrap();
        assert_eq!(value["slug"], "hello");
        assert_eq!(value["files"], serde_json::json!(["SKILL.md", "docs/a.md"]));
        let path = PathBuf::from(value["path"].as_str().unwrap());
        assert!(path.starts_with(&cache) && path.join("docs/a.md").is_file());

        let bad = dir.path().join("bad.json");
        std::fs::write(&bad, r#"{"formatVersion":2,"skill":{"name":"x","slug":"x","content":"c","files":[{"path":"../../x","content":"x"}]}}"#).unwrap();
        let (code, out) = call(&[
            "import",
            bad.to_str().unwrap(),
            "--into",
            cache.to_str().unwrap(),
        ]);
        assert_eq!(code, 1);
        let value: serde_json::Value = serde_json::from_str(&out).unwrap();
        assert_eq!(value["ok"], false);
        assert_eq!(value["error"]["kind"], "invalid");
        assert!(
            value["error"]["message"]
                .as_str()
                .unwrap()
                .contains("skill.files[0].path")
        );
        assert_eq!(call(&["import", "x"]).0, 2);
    }
}
