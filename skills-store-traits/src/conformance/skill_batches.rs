//! The contract of the batch reads of [`SkillStore`]: a batch answers exactly what the
//! per-item calls answer, within the caller's tenant.

use std::collections::BTreeMap;

use super::tenant;
use crate::skills::{
    AssignmentUpdate, NewAssignment, NewSkill, SkillFileRecord, SkillStore, SkillUpdate,
    assigned_skill_ids,
};
use crate::tenancy::TenantId;

mod resolvable;
mod resolvable_writes;

pub use resolvable::{resolvable_equals_the_full_read, resolvable_tenant_isolation};
pub use resolvable_writes::{resolvable_follows_another_store, resolvable_follows_every_write};

/// Runs every batch contract.
pub async fn run_all(store: &dyn SkillStore) {
    files_for_skills_equals_per_item(store).await;
    files_for_skills_tenant_isolation(store).await;
    files_for_skills_many_ids(store).await;
    agent_skills_equals_the_two_calls(store).await;
    agent_skills_tenant_isolation(store).await;
    resolvable_equals_the_full_read(store).await;
    resolvable_tenant_isolation(store).await;
    resolvable_follows_every_write(store).await;
}

/// What the per-item calls give for `ids`: the reference every batch answer must equal.
async fn per_item(
    store: &dyn SkillStore,
    tenant: &TenantId,
    ids: &[String],
) -> BTreeMap<String, Vec<SkillFileRecord>> {
    let mut out = BTreeMap::new();
    for id in ids {
        let files = store.list_skill_files(tenant, id).await.unwrap();
        if !files.is_empty() {
            out.insert(id.clone(), files);
        }
    }
    out
}

/// Files of several skills at once: ordered by path (bytewise) within each skill, skills
/// without files, unknown ids and repeated ids handled as the per-item calls would.
pub async fn files_for_skills_equals_per_item(store: &dyn SkillStore) {
    let t = tenant();
    let many = store
        .create_skill(
            &t,
            NewSkill::new("Many", "batch-many", "# Many\n")
                .with_file("z.md", "z")
                .with_file("b/a.txt", "ba")
                .with_file("B.md", "upper first, bytewise")
                .with_file("é.md", "after ascii"),
        )
        .await
        .unwrap();
    let one = store
        .create_skill(
            &t,
            NewSkill::new("One", "batch-one", "# One\n").with_file("run.sh", "echo\n"),
        )
        .await
        .unwrap();
    let none = store
        .create_skill(&t, NewSkill::new("None", "batch-none", "# None\n"))
        .await
        .unwrap();
    // A skill whose only file was deleted: a directory skill with no files.
    let emptied = store
        .create_skill(
            &t,
            NewSkill::new("Emptied", "batch-emptied", "# E\n").with_file("gone.md", "g"),
        )
        .await
        .unwrap();
    let gone = store.list_skill_files(&t, &emptied.id).await.unwrap();
    assert!(store.delete_skill_file(&t, &gone[0].id).await.unwrap());

    let ids: Vec<String> = vec![
        one.id.clone(),
        "no-such-skill".to_owned(),
        many.id.clone(),
        none.id.clone(),
        many.id.clone(),
        emptied.id.clone(),
        String::new(),
    ];
    let batch = store.list_files_for_skills(&t, &ids).await.unwrap();
    assert_eq!(
        batch,
        per_item(store, &t, &ids).await,
        "the batch differs from list_skill_files per id"
    );
    assert_eq!(
        batch.keys().collect::<Vec<_>>(),
        {
            let mut with_files = vec![&many.id, &one.id];
            with_files.sort();
            with_files
        },
        "only skills with files have an entry"
    );
    let paths: Vec<&str> = batch[&many.id]
        .iter()
        .map(|f| f.relative_path.as_str())
        .collect();
    assert_eq!(paths, ["B.md", "b/a.txt", "z.md", "é.md"], "path order");
    assert!(batch[&many.id].iter().all(|f| f.skill_id == many.id));
    assert!(
        store
            .list_files_for_skills(&t, &[])
            .await
            .unwrap()
            .is_empty(),
        "no ids: no entries"
    );
}

/// A batch never reaches another tenant's files, even when the ids are mixed.
pub async fn files_for_skills_tenant_isolation(store: &dyn SkillStore) {
    let owner = tenant();
    let intruder = tenant();
    let secret = store
        .create_skill(
            &owner,
            NewSkill::new("Secret", "batch-secret", "# S\n").with_file("key.md", "k"),
        )
        .await
        .unwrap();
    let own = store
        .create_skill(
            &intruder,
            NewSkill::new("Own", "batch-own", "# O\n").with_file("mine.md", "m"),
        )
        .await
        .unwrap();
    let ids = vec![secret.id.clone(), own.id.clone()];
    let seen = store.list_files_for_skills(&intruder, &ids).await.unwrap();
    assert_eq!(
        seen.keys().collect::<Vec<_>>(),
        [&own.id],
        "a batch from another tenant saw the owner's files"
    );
    assert_eq!(seen, per_item(store, &intruder, &ids).await);
    let owners = store.list_files_for_skills(&owner, &ids).await.unwrap();
    assert_eq!(owners.keys().collect::<Vec<_>>(), [&secret.id]);
    assert_eq!(owners[&secret.id][0].content, "k");
}

/// More ids than SQL backends bind per statement by default (999 in older SQLite): the
/// answer is still complete and exact.
pub async fn files_for_skills_many_ids(store: &dyn SkillStore) {
    let t = tenant();
    let mut ids = Vec::new();
    for i in 0..30 {
        let s = store
            .create_skill(
                &t,
                NewSkill::new(format!("Bulk {i}"), format!("batch-bulk-{i}"), "# B\n")
                    .with_file(format!("f{i}.md"), format!("{i}")),
            )
            .await
            .unwrap();
        ids.push(s.id);
    }
    let known = ids.clone();
    // Unknown ids interleaved, some with characters that need quoting in SQL or JSON.
    for i in 0..1_200 {
        ids.insert((i * 7) % (ids.len() + 1), format!("missing-{i}'\"\\"));
    }
    let batch = store.list_files_for_skills(&t, &ids).await.unwrap();
    assert_eq!(batch.len(), known.len(), "every known skill, nothing else");
    for id in &known {
        assert_eq!(
            batch.get(id),
            Some(&store.list_skill_files(&t, id).await.unwrap())
        );
    }
}

/// The agent's read in one call answers what the two calls answer: every assignment
/// reaching the agent (disabled ones and disabled skills included) with its skill, in
/// assignment order, and the files of exactly those skills.
pub async fn agent_skills_equals_the_two_calls(store: &dyn SkillStore) {
    let t = tenant();
    let make = |slug: &str, files: &[(&str, &str)]| {
        let mut new = NewSkill::new(slug, slug, format!("# {slug}\n"));
        for (path, content) in files {
            new = new.with_file(*path, *content);
        }
        new
    };
    let global = store
        .create_skill(&t, make("agent-global", &[("z.md", "z"), ("a/b.md", "ab")]))
        .await
        .unwrap();
    let team = store
        .create_skill(&t, make("agent-team", &[]))
        .await
        .unwrap();
    let own = store
        .create_skill(&t, make("agent-own", &[("skill.json", r#"{"layer": 1}"#)]))
        .await
        .unwrap();
    let off = store
        .create_skill(&t, make("agent-off", &[("off.md", "o")]))
        .await
        .unwrap();
    let quiet = store
        .create_skill(&t, make("agent-quiet", &[("q.md", "q")]))
        .await
        .unwrap();
    let other = store
        .create_skill(&t, make("agent-other", &[("other.md", "x")]))
        .await
        .unwrap();
    store
        .create_assignment(&t, NewAssignment::global(&global.id))
        .await
        .unwrap();
    store
        .create_assignment(&t, NewAssignment::agent(&global.id, "agent-1").priority(5))
        .await
        .unwrap();
    store
        .create_assignment(&t, NewAssignment::team(&team.id, "team-1"))
        .await
        .unwrap();
    store
        .create_assignment(&t, NewAssignment::agent(&own.id, "agent-1").priority(-1))
        .await
        .unwrap();
    store
        .create_assignment(&t, NewAssignment::agent(&off.id, "agent-1"))
        .await
        .unwrap();
    let update = SkillUpdate {
        enabled: Some(false),
        ..SkillUpdate::default()
    };
    store.update_skill(&t, &off.id, update).await.unwrap();
    let muted = store
        .create_assignment(&t, NewAssignment::team(&quiet.id, "team-1"))
        .await
        .unwrap();
    let mute = AssignmentUpdate {
        enabled: Some(false),
        ..AssignmentUpdate::default()
    };
    store.update_assignment(&t, &muted.id, mute).await.unwrap();
    store
        .create_assignment(&t, NewAssignment::agent(&other.id, "agent-2"))
        .await
        .unwrap();

    for team_id in [Some("team-1"), None, Some("no-such-team")] {
        let got = store
            .assignments_for_agent_with_files(&t, "agent-1", team_id)
            .await
            .unwrap();
        let assigned = store
            .assignments_for_agent(&t, "agent-1", team_id)
            .await
            .unwrap();
        assert_eq!(got.assigned, assigned, "assignments differ ({team_id:?})");
        let files = store
            .list_files_for_skills(&t, &assigned_skill_ids(&assigned))
            .await
            .unwrap();
        assert_eq!(got.files, files, "files differ ({team_id:?})");
    }
    let got = store
        .assignments_for_agent_with_files(&t, "agent-1", Some("team-1"))
        .await
        .unwrap();
    assert_eq!(
        got.assigned.len(),
        6,
        "two for the global skill, one each else"
    );
    let mut with_files = vec![&global.id, &own.id, &off.id, &quiet.id];
    with_files.sort();
    assert_eq!(
        got.files.keys().collect::<Vec<_>>(),
        with_files,
        "the files of every assigned skill with files, disabled ones included"
    );
    let paths: Vec<&str> = got.files[&global.id]
        .iter()
        .map(|f| f.relative_path.as_str())
        .collect();
    assert_eq!(paths, ["a/b.md", "z.md"], "path order");
    assert_eq!(
        got.files[&own.id][0].content, r#"{"layer": 1}"#,
        "with content"
    );
    let nobody = store
        .assignments_for_agent_with_files(&t, "agent-9", None)
        .await
        .unwrap();
    assert_eq!(nobody.assigned.len(), 1, "the global assignment only");
    assert_eq!(nobody.files.keys().collect::<Vec<_>>(), [&global.id]);
}

/// The agent's read never reaches another tenant's assignments or files, even for the
/// same agent and team names.
pub async fn agent_skills_tenant_isolation(store: &dyn SkillStore) {
    let owner = tenant();
    let intruder = tenant();
    let secret = store
        .create_skill(
            &owner,
            NewSkill::new("Secret", "agent-secret", "# S\n").with_file("key.md", "k"),
        )
        .await
        .unwrap();
    store
        .create_assignment(&owner, NewAssignment::global(&secret.id))
        .await
        .unwrap();
    store
        .create_assignment(&owner, NewAssignment::agent(&secret.id, "agent-1"))
        .await
        .unwrap();
    let seen = store
        .assignments_for_agent_with_files(&intruder, "agent-1", Some("team-1"))
        .await
        .unwrap();
    assert!(
        seen.assigned.is_empty() && seen.files.is_empty(),
        "{seen:?}"
    );
    let own = store
        .create_skill(
            &intruder,
            NewSkill::new("Own", "agent-secret", "# O\n").with_file("mine.md", "m"),
        )
        .await
        .unwrap();
    store
        .create_assignment(&intruder, NewAssignment::global(&own.id))
        .await
        .unwrap();
    let seen = store
        .assignments_for_agent_with_files(&intruder, "agent-1", None)
        .await
        .unwrap();
    assert_eq!(seen.assigned.len(), 1);
    assert_eq!(seen.assigned[0].skill.id, own.id);
    assert_eq!(seen.files.keys().collect::<Vec<_>>(), [&own.id]);
    let owners = store
        .assignments_for_agent_with_files(&owner, "agent-1", None)
        .await
        .unwrap();
    assert_eq!(owners.assigned.len(), 2);
    assert_eq!(owners.files[&secret.id][0].content, "k");
}
