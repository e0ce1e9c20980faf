//! [`SkillStore::resolvable_skills`] after every kind of write: a backend that keeps what
//! resolve reads denormalised (a per-skill file listing, the `skill.json` text, assignment
//! flags beside an index) must keep it in step with the files, skills and assignments it
//! derives from. Each step compares the projection with the full read and checks the
//! changed fact outright, in two tenants with the same agent, team, slugs and paths, so a
//! listing that went stale, or that was recomputed from the other tenant's rows, fails.

use super::resolvable::assert_projection;
use super::tenant;
use crate::skills::{
    AssignmentUpdate, NewAssignment, NewSkill, NewSkillFile, ResolvableSkill, SkillFileUpdate,
    SkillStore, SkillUpdate,
};
use crate::tenancy::TenantId;

/// The resolvable skill of `slug` for agent-1 in team-1, if any.
async fn entry(store: &dyn SkillStore, t: &TenantId, slug: &str) -> Option<ResolvableSkill> {
    assert_projection(store, t, "agent-1", Some("team-1")).await;
    store
        .resolvable_skills(t, "agent-1", Some("team-1"))
        .await
        .unwrap()
        .into_iter()
        .find(|s| s.slug == slug)
}

fn paths(skill: &ResolvableSkill) -> Vec<(&str, &str)> {
    skill
        .files
        .iter()
        .map(|f| (f.relative_path.as_str(), f.content_type.as_str()))
        .collect()
}

/// Adds, changes and deletes files (`skill.json` included), deletes all of a skill's
/// files, changes and deletes assignments, disables, deletes and recreates a skill, and
/// checks after each write that the projection follows, in this tenant and not the other.
pub async fn resolvable_follows_every_write(store: &dyn SkillStore) {
    let t = tenant();
    let other = tenant();
    let mut ids = Vec::new();
    for tenant in [&t, &other] {
        let skill = store
            .create_skill(
                tenant,
                NewSkill::new("Listed", "res-listed", "# L\n")
                    .with_file("m.md", "m")
                    .with_file("skill.json", r#"{"status": "stub"}"#),
            )
            .await
            .unwrap();
        store
            .create_assignment(
                tenant,
                NewAssignment::agent(&skill.id, "agent-1").priority(1),
            )
            .await
            .unwrap();
        ids.push(skill.id);
    }
    let id = ids[0].clone();
    let before_other = entry(store, &other, "res-listed").await.unwrap();

    // A new file, before the others bytewise.
    let added = store
        .create_skill_file(&t, &id, NewSkillFile::new("A.md", "a"))
        .await
        .unwrap();
    let got = entry(store, &t, "res-listed").await.unwrap();
    assert_eq!(
        paths(&got).iter().map(|p| p.0).collect::<Vec<_>>(),
        ["A.md", "m.md", "skill.json"]
    );
    // A new type and new manifest text.
    let manifest = store
        .find_skill_file(&t, &id, "skill.json")
        .await
        .unwrap()
        .unwrap();
    let retype = SkillFileUpdate {
        content_type: Some("text/x-changed".to_owned()),
        ..SkillFileUpdate::default()
    };
    store
        .update_skill_file(&t, &added.id, retype)
        .await
        .unwrap()
        .unwrap();
    let rewrite = SkillFileUpdate {
        content: Some(r#"{"status": "deprecated", "layer": 2}"#.to_owned()),
        ..SkillFileUpdate::default()
    };
    store
        .update_skill_file(&t, &manifest.id, rewrite)
        .await
        .unwrap()
        .unwrap();
    let got = entry(store, &t, "res-listed").await.unwrap();
    assert!(paths(&got).contains(&("A.md", "text/x-changed")), "{got:?}");
    assert_eq!(
        got.manifest.as_deref(),
        Some(r#"{"status": "deprecated", "layer": 2}"#)
    );
    // The manifest deleted: no text left behind.
    assert!(store.delete_skill_file(&t, &manifest.id).await.unwrap());
    let got = entry(store, &t, "res-listed").await.unwrap();
    assert_eq!(got.manifest, None);
    assert_eq!(
        paths(&got).iter().map(|p| p.0).collect::<Vec<_>>(),
        ["A.md", "m.md"]
    );
    // Every file deleted.
    assert_eq!(
        store.delete_skill_files_by_skill_id(&t, &id).await.unwrap(),
        2
    );
    let got = entry(store, &t, "res-listed").await.unwrap();
    assert!(got.files.is_empty() && got.manifest.is_none(), "{got:?}");
    // A manifest added to a skill that had none.
    store
        .create_skill_file(&t, &id, NewSkillFile::new("skill.json", r#"{"layer": 4}"#))
        .await
        .unwrap();
    let got = entry(store, &t, "res-listed").await.unwrap();
    assert_eq!(got.manifest.as_deref(), Some(r#"{"layer": 4}"#));
    assert_eq!(paths(&got).len(), 1);

    // Assignment changes: priority, auto-inject, enabled, a second target, deletion.
    let assignments = store
        .assignments_for_agent(&t, "agent-1", Some("team-1"))
        .await
        .unwrap();
    let own = assignments[0].assignment.id.clone();
    let change = AssignmentUpdate {
        priority: Some(7),
        auto_inject: Some(true),
        ..AssignmentUpdate::default()
    };
    store.update_assignment(&t, &own, change).await.unwrap();
    let got = entry(store, &t, "res-listed").await.unwrap();
    assert_eq!((got.priority, got.auto_inject), (7, true));
    let team = store
        .create_assignment(&t, NewAssignment::team(&id, "team-1").priority(9))
        .await
        .unwrap();
    assert_eq!(entry(store, &t, "res-listed").await.unwrap().priority, 9);
    let mute = AssignmentUpdate {
        enabled: Some(false),
        ..AssignmentUpdate::default()
    };
    store.update_assignment(&t, &team.id, mute).await.unwrap();
    assert_eq!(entry(store, &t, "res-listed").await.unwrap().priority, 7);
    store.update_assignment(&t, &own, mute).await.unwrap();
    assert!(entry(store, &t, "res-listed").await.is_none());
    let unmute = AssignmentUpdate {
        enabled: Some(true),
        ..AssignmentUpdate::default()
    };
    store.update_assignment(&t, &own, unmute).await.unwrap();
    assert!(store.delete_assignment(&t, &team.id).await.unwrap());
    let got = entry(store, &t, "res-listed").await.unwrap();
    assert_eq!((got.priority, got.auto_inject), (7, true));

    // The skill disabled, then deleted (its files and assignments cascade), then a skill
    // of the same slug and paths created again: nothing of the old one comes back.
    let disable = SkillUpdate {
        enabled: Some(false),
        ..SkillUpdate::default()
    };
    store.update_skill(&t, &id, disable).await.unwrap();
    assert!(entry(store, &t, "res-listed").await.is_none());
    assert!(store.delete_skill(&t, &id).await.unwrap());
    assert!(entry(store, &t, "res-listed").await.is_none());
    let again = store
        .create_skill(
            &t,
            NewSkill::new("Listed", "res-listed", "# L2\n").with_file("z.md", "z"),
        )
        .await
        .unwrap();
    store
        .create_assignment(&t, NewAssignment::agent(&again.id, "agent-1"))
        .await
        .unwrap();
    let got = entry(store, &t, "res-listed").await.unwrap();
    assert_eq!(
        paths(&got).iter().map(|p| p.0).collect::<Vec<_>>(),
        ["z.md"]
    );
    assert_eq!(
        (got.manifest, got.priority, got.auto_inject),
        (None, 0, false)
    );

    // The other tenant's skill, same slug, paths and agent, never moved.
    assert_eq!(
        entry(store, &other, "res-listed").await.unwrap(),
        before_other
    );
    assert_eq!(
        before_other.manifest.as_deref(),
        Some(r#"{"status": "stub"}"#)
    );
    assert_eq!(
        paths(&before_other).iter().map(|p| p.0).collect::<Vec<_>>(),
        ["m.md", "skill.json"]
    );
}

/// Two stores on one database (two processes, in a deployment): `reader` resolves twice,
/// then `writer` changes a skill's content and trust level and adds a file to it, and the
/// reader's next answer shows all of it, equal to its own full read; a backend that keeps
/// decoded skills between calls must not serve them after another store's write. Not in
/// `run_all` (it needs two stores on one database). Returns the ids of the two skills it
/// made in `t` (`one`, assigned globally; `quiet`, assigned to agent-1 at priority 4), for a
/// backend's own tests of SQL written beside the store.
pub async fn resolvable_follows_another_store(
    reader: &dyn SkillStore,
    writer: &dyn SkillStore,
    t: &TenantId,
) -> (String, String) {
    let one = writer
        .create_skill(
            t,
            NewSkill::new("One", "one", "# One\n").with_file("a.md", "a"),
        )
        .await
        .unwrap();
    writer
        .create_assignment(t, NewAssignment::global(&one.id))
        .await
        .unwrap();
    let quiet = writer
        .create_skill(t, NewSkill::new("Quiet", "quiet", "# Quiet\n"))
        .await
        .unwrap();
    writer
        .create_assignment(t, NewAssignment::agent(&quiet.id, "agent-1").priority(4))
        .await
        .unwrap();
    let resolve = || reader.resolvable_skills(t, "agent-1", None);
    let first = resolve().await.unwrap();
    assert_projection(reader, t, "agent-1", None).await;
    assert_eq!(resolve().await.unwrap(), first);

    let update = SkillUpdate {
        content: Some("# One, changed\n".to_owned()),
        trust_level: Some(Some("core".to_owned())),
        ..SkillUpdate::default()
    };
    writer.update_skill(t, &one.id, update).await.unwrap();
    writer
        .create_skill_file(t, &one.id, NewSkillFile::new("b.md", "b"))
        .await
        .unwrap();
    let seen = resolve().await.unwrap();
    let changed = seen.iter().find(|s| s.slug == "one").unwrap();
    assert_eq!(changed.content, "# One, changed\n");
    assert_eq!(changed.trust_level.as_deref(), Some("core"));
    let listed: Vec<&str> = paths(changed).into_iter().map(|(path, _)| path).collect();
    assert_eq!(listed, ["a.md", "b.md"]);
    assert_projection(reader, t, "agent-1", None).await;
    // The unchanged skill is served again, with this answer's assignment fields.
    assert_eq!(resolve().await.unwrap(), seen);
    (one.id, quiet.id)
}
