//! Seed 001's lifecycle in the catalog: what a skill declares reaches the resolution, and
//! every rendering marks `deprecated` and `stub` entries (and only those).

use futures::executor::block_on;
use serde_json::json;
use skills_core::SkillStatus;
use skills_store_traits::in_memory::InMemorySkillStore;
use skills_store_traits::{NewAssignment, NewSkill, SkillStore, TenantId};

use super::*;
use crate::agent_tools::use_skill;
use crate::{Resolution, Resolver};

const DEPRECATED: &str = "deprecated: being phased out, use only when asked for by name";
const STUB: &str = "stub: a placeholder with an in-memory implementation";

fn stored(slug: &str) -> NewSkill {
    let mut skill = NewSkill::new(
        slug,
        slug,
        format!("---\nname: {slug}\ndescription: Does {slug}.\n---\nBody.\n"),
    );
    skill.description = Some(format!("Does {slug}."));
    skill
}

/// Stored skills declaring their status by metadata and by skill.json, one plain, and a repo
/// skill declaring it in its SKILL.md metadata.
fn resolution(repo_dir: &std::path::Path) -> Resolution {
    block_on(async {
        let store = InMemorySkillStore::new();
        let tenant = TenantId::new("acme");
        let mut old = stored("old-search");
        old.metadata.insert("status".into(), json!("deprecated"));
        let placeholder = stored("fake-crm").with_file(
            "skill.json",
            r#"{"name": "aria-fake_crm", "status": "stub", "layer": 0}"#,
        );
        let mut odd = stored("odd-words");
        odd.metadata.insert("status".into(), json!("retired"));
        odd.metadata.insert("layer".into(), json!(300));
        for skill in [old, placeholder, odd, stored("live-search")] {
            let record = store.create_skill(&tenant, skill).await.unwrap();
            store
                .create_assignment(&tenant, NewAssignment::global(&record.id).auto_inject(true))
                .await
                .unwrap();
        }
        let dir = repo_dir.join("legacy-notes");
        std::fs::create_dir(&dir).unwrap();
        std::fs::write(
            dir.join("SKILL.md"),
            "---\nname: legacy-notes\ndescription: Old notes.\nmetadata:\n  status: deprecated\n---\nBody.\n",
        )
        .unwrap();
        let repo = vec![skills_core::Skill::load(&dir, &Default::default()).unwrap()];
        Resolver::new()
            .resolve_for_agent(&store, &tenant, "agent", None, &repo)
            .await
            .unwrap()
    })
}

#[test]
fn declared_status_and_layer_reach_the_resolution() {
    let dir = tempfile::tempdir().unwrap();
    let resolution = resolution(dir.path());
    let of = |id: &str| resolution.find(id).map(|s| (s.status, s.layer));
    assert_eq!(
        of("old-search"),
        Some((Some(SkillStatus::Deprecated), None))
    );
    assert_eq!(of("fake-crm"), Some((Some(SkillStatus::Stub), Some(0))));
    // Words and numbers that are no status or layer count as undeclared.
    assert_eq!(of("odd-words"), Some((None, None)));
    assert_eq!(of("live-search"), Some((None, None)));
    assert_eq!(
        of("legacy-notes"),
        Some((Some(SkillStatus::Deprecated), None))
    );
}

#[test]
fn the_available_skills_section_marks_deprecated_and_stub_entries() {
    let dir = tempfile::tempdir().unwrap();
    let resolution = resolution(dir.path());
    let text = available_skills_section(&resolution.skills, &CatalogOptions::default()).text;
    let line = |id: &str| {
        text.lines()
            .find(|l| l.starts_with(&format!("- **{id}**")))
            .unwrap_or_else(|| panic!("{id} not listed in\n{text}"))
            .to_owned()
    };
    assert!(line("old-search").ends_with(&format!("[admin] [{DEPRECATED}]")));
    assert!(line("fake-crm").ends_with(&format!("[admin] [{STUB}]")));
    assert!(line("legacy-notes").ends_with(&format!("[repo] [{DEPRECATED}]")));
    assert!(line("live-search").ends_with("[admin]"));
    assert!(line("odd-words").ends_with("[admin]"));
    assert!(text.contains(&format!("<skill name=\"old-search\" path=\"/home/sprite/.skills/old-search/SKILL.md\" status=\"{DEPRECATED}\">")));
    assert!(text.contains(
        "<skill name=\"live-search\" path=\"/home/sprite/.skills/live-search/SKILL.md\">"
    ));
}

#[test]
fn the_agent_skills_xml_marks_deprecated_and_stub_entries() {
    let dir = tempfile::tempdir().unwrap();
    let resolution = resolution(dir.path());
    let xml = agent_skills_xml(&resolution.skills);
    let entry = |name: &str| {
        xml.split("<skill>")
            .find(|e| e.starts_with(&format!("\n<name>\n{name}\n")))
            .unwrap_or_else(|| panic!("{name} not in\n{xml}"))
            .to_owned()
    };
    assert!(entry("old-search").contains(&format!(
        "</description>\n<status>\n{DEPRECATED}\n</status>\n<location>"
    )));
    assert!(entry("fake-crm").contains(&format!("<status>\n{STUB}\n</status>")));
    assert!(!entry("live-search").contains("<status>"));
    // The budgeted form renders the same entries.
    let within = agent_skills_xml_within(&resolution.skills, Budget::Chars(100_000));
    assert_eq!(within.listed.len(), resolution.skills.len());
    assert!(
        within
            .text
            .contains(&format!("<status>\n{DEPRECATED}\n</status>"))
    );
}

#[test]
fn use_skill_still_answers_for_a_deprecated_skill_with_its_mark() {
    let dir = tempfile::tempdir().unwrap();
    let resolution = resolution(dir.path());
    let answer = use_skill(&resolution, "old-search").unwrap();
    assert!(answer.starts_with(&format!(
        "Skill: old-search\nStatus: {DEPRECATED}\nLocation: "
    )));
    let answer = use_skill(&resolution, "live-search").unwrap();
    assert!(answer.starts_with("Skill: live-search\nLocation: "));
}
