//! The contract of [`SkillStore::resolvable_skills`]: exactly the projection of the full
//! read ([`resolvable_from`] of `assignments_for_agent_with_files`), within the caller's
//! tenant. Backends read it their own way (fewer columns, no whole documents), so every
//! field, filter and grouping rule is compared against the full read and checked outright.

use serde_json::{Value, json};

use super::tenant;
use crate::skills::{
    AssignmentUpdate, NewAssignment, NewSkill, NewSkillFile, SkillSourceKind, SkillStore,
    SkillUpdate, resolvable_from,
};
use crate::tenancy::TenantId;

fn metadata(value: Value) -> serde_json::Map<String, Value> {
    match value {
        Value::Object(map) => map,
        _ => serde_json::Map::new(),
    }
}

/// Asserts the backend's projection equals the full read's for `agent` and `team`.
pub(super) async fn assert_projection(
    store: &dyn SkillStore,
    t: &TenantId,
    agent: &str,
    team: Option<&str>,
) {
    let full = store
        .assignments_for_agent_with_files(t, agent, team)
        .await
        .unwrap();
    let got = store.resolvable_skills(t, agent, team).await.unwrap();
    assert_eq!(
        got,
        resolvable_from(&full),
        "the projection differs from the full read ({agent}, {team:?})"
    );
}

/// Every field of the projection, enabled filtering of skills and assignments, grouping of
/// several assignments of one skill, the manifest, file order and metadata keys that are
/// present but not strings all match the full read.
pub async fn resolvable_equals_the_full_read(store: &dyn SkillStore) {
    let t = tenant();
    let mut rich = NewSkill::new(
        "Rich — ünïcode",
        "res-rich",
        "---\r\nname: res-rich\r\ndescription: d\r\nuser-invocable: false\r\n---\r\nBody\r\n",
    )
    .with_file("z.md", "z")
    .with_file("a/b.md", "ab")
    .with_file("skill.json", r#"{"status": "stub", "layer": 3}"#)
    .with_file("B.md", "upper first, bytewise");
    rich.description = Some("A skill with every field".to_owned());
    rich.category = Some("ops".to_owned());
    rich.version = Some("1.2.3".to_owned());
    rich.tags = vec!["alpha".to_owned(), "beta-2".to_owned()];
    rich.requires_tools = vec!["bash".to_owned(), "read_file".to_owned()];
    rich.trust_level = Some("verified".to_owned());
    rich.metadata = metadata(json!({"status": "deprecated", "layer": 2, "other": {"deep": [1]}}));
    rich.files[0].content_type = Some("text/x-custom".to_owned());
    let rich = store.create_skill(&t, rich).await.unwrap();

    let mut plugin = NewSkill::new("Plugin", "res-plugin", "# P\n");
    plugin.source_kind = Some(SkillSourceKind::Plugin);
    plugin.plugin_id = Some("plug-1".to_owned());
    plugin.source_ref = Some("skills/p".to_owned());
    plugin.is_directory = true;
    // Present but null or not a string: not looked up in skill.json.
    plugin.metadata = metadata(json!({"status": null, "layer": "two"}));
    plugin.files = vec![NewSkillFile::new("skill.json", r#"{"status": "stub"}"#)];
    let plugin = store.create_skill(&t, plugin).await.unwrap();

    let mut odd = NewSkill::new("Odd", "res-odd", "no frontmatter");
    odd.metadata = metadata(json!({"layer": 1.5, "status": ["x"]}));
    let odd = store.create_skill(&t, odd).await.unwrap();
    let off = store
        .create_skill(
            &t,
            NewSkill::new("Off", "res-off", "# O\n").with_file("o.md", "o"),
        )
        .await
        .unwrap();
    let muted = store
        .create_skill(&t, NewSkill::new("Muted", "res-muted", "# M\n"))
        .await
        .unwrap();
    let mixed = store
        .create_skill(&t, NewSkill::new("Mixed", "res-mixed", "# X\n"))
        .await
        .unwrap();
    let elsewhere = store
        .create_skill(&t, NewSkill::new("Elsewhere", "res-elsewhere", "# E\n"))
        .await
        .unwrap();

    let tr = &t;
    let assign = |a: NewAssignment| async move { store.create_assignment(tr, a).await.unwrap() };
    let mute = AssignmentUpdate {
        enabled: Some(false),
        ..AssignmentUpdate::default()
    };
    assign(NewAssignment::global(&rich.id).priority(1)).await;
    assign(NewAssignment::agent(&rich.id, "agent-1").priority(5)).await;
    assign(
        NewAssignment::team(&rich.id, "team-1")
            .priority(3)
            .auto_inject(true),
    )
    .await;
    assign(NewAssignment::team(&plugin.id, "team-1").priority(-4)).await;
    assign(NewAssignment::agent(&odd.id, "agent-1")).await;
    assign(NewAssignment::global(&off.id)).await;
    let silent = assign(NewAssignment::agent(&muted.id, "agent-1")).await;
    store.update_assignment(&t, &silent.id, mute).await.unwrap();
    // A disabled assignment's higher priority and auto-inject do not count.
    let loud = assign(
        NewAssignment::global(&mixed.id)
            .priority(9)
            .auto_inject(true),
    )
    .await;
    store.update_assignment(&t, &loud.id, mute).await.unwrap();
    assign(NewAssignment::agent(&mixed.id, "agent-1").priority(2)).await;
    assign(NewAssignment::agent(&elsewhere.id, "agent-2")).await;
    let disable = SkillUpdate {
        enabled: Some(false),
        ..SkillUpdate::default()
    };
    store.update_skill(&t, &off.id, disable).await.unwrap();

    for agent in ["agent-1", "agent-2", "agent-9"] {
        for team in [Some("team-1"), None, Some("no-such-team")] {
            assert_projection(store, &t, agent, team).await;
        }
    }

    // The same facts outright, so a reference that drifted would be caught too.
    let got = store
        .resolvable_skills(&t, "agent-1", Some("team-1"))
        .await
        .unwrap();
    let slugs: Vec<&str> = got.iter().map(|s| s.slug.as_str()).collect();
    assert_eq!(
        slugs,
        ["res-mixed", "res-odd", "res-plugin", "res-rich"],
        "enabled skills with an enabled assignment, by slug"
    );
    let [mixed_got, odd_got, plugin_got, rich_got] = &got[..] else {
        panic!("{got:?}");
    };
    assert_eq!((mixed_got.priority, mixed_got.auto_inject), (2, false));
    assert_eq!((rich_got.priority, rich_got.auto_inject), (5, true));
    assert_eq!(rich_got.id, rich.id);
    assert_eq!(rich_got.name, "Rich — ünïcode");
    assert_eq!(rich_got.content, rich.content);
    assert_eq!(rich_got.category, "ops");
    assert_eq!(rich_got.version.as_deref(), Some("1.2.3"));
    assert_eq!(rich_got.tags, ["alpha", "beta-2"]);
    assert_eq!(rich_got.requires_tools, ["bash", "read_file"]);
    assert_eq!(rich_got.trust_level.as_deref(), Some("verified"));
    assert_eq!(rich_got.metadata_status, Some(json!("deprecated")));
    assert_eq!(rich_got.metadata_layer, Some(json!(2)));
    let paths: Vec<(&str, &str)> = rich_got
        .files
        .iter()
        .map(|f| (f.relative_path.as_str(), f.content_type.as_str()))
        .collect();
    assert_eq!(
        paths.iter().map(|p| p.0).collect::<Vec<_>>(),
        ["B.md", "a/b.md", "skill.json", "z.md"],
        "path order, bytewise"
    );
    assert!(paths.contains(&("z.md", "text/x-custom")), "{paths:?}");
    assert_eq!(
        rich_got.manifest.as_deref(),
        Some(r#"{"status": "stub", "layer": 3}"#)
    );
    assert_eq!(plugin_got.source_kind, SkillSourceKind::Plugin);
    assert_eq!(plugin_got.plugin_id.as_deref(), Some("plug-1"));
    assert!(plugin_got.is_directory);
    assert_eq!(plugin_got.description, None);
    assert_eq!(plugin_got.metadata_status, Some(Value::Null));
    assert_eq!(plugin_got.metadata_layer, Some(json!("two")));
    assert_eq!(odd_got.metadata_layer, Some(json!(1.5)));
    assert_eq!(odd_got.metadata_status, Some(json!(["x"])));
    assert!(odd_got.files.is_empty() && odd_got.manifest.is_none());
    let nobody = store.resolvable_skills(&t, "agent-9", None).await.unwrap();
    assert_eq!(
        nobody.iter().map(|s| s.slug.as_str()).collect::<Vec<_>>(),
        ["res-rich"],
        "the global assignments of enabled skills only"
    );
    assert_eq!(nobody[0].priority, 1);
    assert!(!nobody[0].auto_inject);
}

/// The projection never reaches another tenant's skills or files, even for the same agent,
/// team and slug.
pub async fn resolvable_tenant_isolation(store: &dyn SkillStore) {
    let owner = tenant();
    let intruder = tenant();
    let secret = store
        .create_skill(
            &owner,
            NewSkill::new("Secret", "res-secret", "# S\n")
                .with_file("skill.json", r#"{"status": "stub"}"#),
        )
        .await
        .unwrap();
    for a in [
        NewAssignment::global(&secret.id),
        NewAssignment::agent(&secret.id, "agent-1"),
        NewAssignment::team(&secret.id, "team-1"),
    ] {
        store.create_assignment(&owner, a).await.unwrap();
    }
    let seen = store
        .resolvable_skills(&intruder, "agent-1", Some("team-1"))
        .await
        .unwrap();
    assert!(seen.is_empty(), "{seen:?}");
    let own = store
        .create_skill(
            &intruder,
            NewSkill::new("Own", "res-secret", "# O\n").with_file("mine.md", "m"),
        )
        .await
        .unwrap();
    store
        .create_assignment(&intruder, NewAssignment::global(&own.id))
        .await
        .unwrap();
    let seen = store
        .resolvable_skills(&intruder, "agent-1", Some("team-1"))
        .await
        .unwrap();
    assert_eq!(seen.len(), 1);
    assert_eq!(seen[0].id, own.id);
    assert_eq!(seen[0].files.len(), 1);
    assert_eq!(seen[0].manifest, None, "not the owner's skill.json");
    assert_projection(store, &intruder, "agent-1", Some("team-1")).await;
    let owners = store
        .resolvable_skills(&owner, "agent-1", Some("team-1"))
        .await
        .unwrap();
    assert_eq!(owners.len(), 1);
    assert_eq!(owners[0].id, secret.id);
    assert_eq!(owners[0].manifest.as_deref(), Some(r#"{"status": "stub"}"#));
    assert_projection(store, &owner, "agent-1", Some("team-1")).await;
}
