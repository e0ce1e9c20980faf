//! `skills list`: the tenant's skills in the store, with trust level, version and source.

use serde::Serialize;
use serde_json::Value;
use skills_install::install_metadata;
use skills_store_traits::{SkillFilter, SkillRecord, SkillStore};

use crate::cli::Global;
use crate::error::{Result, Status};
use crate::output::Output;
use crate::store;

/// One skill; fields in this order.
#[derive(Serialize)]
struct JsonSkill<'a> {
    slug: &'a str,
    name: &'a str,
    version: Option<&'a str>,
    trust_level: Option<&'a str>,
    enabled: bool,
    source: Option<String>,
    digest: Option<&'a str>,
}

/// The whole listing.
#[derive(Serialize)]
struct JsonList<'a> {
    store: String,
    tenant: &'a str,
    skills: Vec<JsonSkill<'a>>,
}

fn entry(record: &SkillRecord) -> JsonSkill<'_> {
    let install = install_metadata(record);
    let text = |key: &str| install.and_then(|m| m.get(key)).and_then(Value::as_str);
    let source = install.and_then(|m| m.get("source")).and_then(|s| {
        let kind = s.get("kind")?.as_str()?;
        let locator = s.get("locator").and_then(Value::as_str).unwrap_or("");
        Some(format!("{kind}:{locator}"))
    });
    JsonSkill {
        slug: &record.slug,
        name: &record.name,
        version: record.version.as_deref().or_else(|| text("version")),
        trust_level: record.trust_level.as_deref(),
        enabled: record.enabled,
        source,
        digest: text("digest"),
    }
}

/// Lists the skills (none when the store file does not exist yet: listing creates
/// nothing).
pub async fn run(global: &Global, out: Output) -> Result<Status> {
    let tenant = store::tenant(global)?;
    let path = store::store_path(global);
    let records = match store::open_existing(&path).await? {
        Some(store) => store.list_skills(&tenant, &SkillFilter::default()).await?,
        None => Vec::new(),
    };
    let skills: Vec<JsonSkill<'_>> = records.iter().map(entry).collect();
    let mut text = String::new();
    for s in &skills {
        text.push_str(&format!(
            "{:<32} {:<10} {:<10} {:<8} {}\n",
            s.slug,
            s.version.unwrap_or("-"),
            s.trust_level.unwrap_or("-"),
            if s.enabled { "enabled" } else { "disabled" },
            s.source.as_deref().unwrap_or("-"),
        ));
    }
    if skills.is_empty() {
        text.push_str(&format!("no skills installed in {}\n", path.display()));
    }
    out.text(&text);
    out.json(&JsonList {
        store: path.display().to_string(),
        tenant: tenant.as_str(),
        skills,
    });
    Ok(Status::Ok)
}
