//! Every write of every wrapped trait is refused and leaves the store as it was; reads see
//! what the store holds.

use std::sync::Arc;

use futures::executor::block_on;
use serde_json::json;

use super::ReadOnly;
use crate::error::Error;
use crate::in_memory::{InMemoryMemoryStore, InMemoryPlanStore, InMemorySkillStore};
use crate::memory::{EpisodeQuery, FactQuery, MemoryStore, NewEpisode, NewFact};
use crate::plans::{NewPlan, NewStep, PlanFilter, PlanStore, PlanUpdate, RiskLevel, StepUpdate};
use crate::skills::{
    AssignmentFilter, AssignmentUpdate, NewAssignment, NewSkill, NewSkillFile, SkillFileUpdate,
    SkillFilter, SkillStore, SkillUpdate,
};
use crate::tenancy::{TenantId, UserScope};

fn refused<T: std::fmt::Debug>(result: crate::Result<T>, expected: &str) {
    match result {
        Err(Error::ReadOnly { operation }) => assert_eq!(operation, expected),
        other => panic!("{expected}: {other:?}"),
    }
}

#[test]
fn skill_store_writes_are_refused_and_reads_go_through() {
    block_on(async {
        let tenant = TenantId::new("acme");
        let store = Arc::new(InMemorySkillStore::new());
        let skill = store
            .create_skill(
                &tenant,
                NewSkill::new("Guard", "guard", "# Guard\n").with_file("a.md", "a"),
            )
            .await
            .unwrap();
        let assignment = store
            .create_assignment(&tenant, NewAssignment::global(&skill.id))
            .await
            .unwrap();
        let files = store.list_skill_files(&tenant, &skill.id).await.unwrap();
        let view = ReadOnly::new(store.clone() as Arc<dyn SkillStore>);

        refused(
            view.create_skill(&tenant, NewSkill::new("X", "x", "# X\n"))
                .await,
            "create_skill",
        );
        refused(
            view.update_skill(&tenant, &skill.id, SkillUpdate::default())
                .await,
            "update_skill",
        );
        refused(view.delete_skill(&tenant, &skill.id).await, "delete_skill");
        refused(
            view.create_skill_file(&tenant, &skill.id, NewSkillFile::new("b.md", "b"))
                .await,
            "create_skill_file",
        );
        refused(
            view.update_skill_file(&tenant, &files[0].id, SkillFileUpdate::default())
                .await,
            "update_skill_file",
        );
        refused(
            view.delete_skill_file(&tenant, &files[0].id).await,
            "delete_skill_file",
        );
        refused(
            view.delete_skill_files_by_skill_id(&tenant, &skill.id)
                .await,
            "delete_skill_files_by_skill_id",
        );
        refused(
            view.create_assignment(&tenant, NewAssignment::global(&skill.id))
                .await,
            "create_assignment",
        );
        refused(
            view.update_assignment(&tenant, &assignment.id, AssignmentUpdate::default())
                .await,
            "update_assignment",
        );
        refused(
            view.delete_assignment(&tenant, &assignment.id).await,
            "delete_assignment",
        );

        // Nothing changed, and every read answers as the store does.
        assert_eq!(
            view.find_skill_by_id(&tenant, &skill.id).await.unwrap(),
            Some(skill.clone())
        );
        assert_eq!(
            view.find_skill_by_slug(&tenant, "guard").await.unwrap(),
            Some(skill.clone())
        );
        assert_eq!(
            view.list_skills(&tenant, &SkillFilter::default())
                .await
                .unwrap(),
            vec![skill.clone()]
        );
        assert!(
            !view
                .is_slug_available(&tenant, "guard", None)
                .await
                .unwrap()
        );
        assert_eq!(
            view.list_skill_files(&tenant, &skill.id).await.unwrap(),
            files
        );
        assert_eq!(
            view.find_skill_file(&tenant, &skill.id, "a.md")
                .await
                .unwrap(),
            Some(files[0].clone())
        );
        assert_eq!(
            view.find_assignment(&tenant, &assignment.id).await.unwrap(),
            Some(assignment.clone())
        );
        assert_eq!(
            view.list_assignments(&tenant, &AssignmentFilter::default())
                .await
                .unwrap(),
            vec![assignment]
        );
        assert_eq!(
            view.assignments_for_agent(&tenant, "agent", None)
                .await
                .unwrap()
                .len(),
            1
        );
        assert_eq!(
            view.skills_with_assignment_counts(&tenant).await.unwrap(),
            vec![(skill.clone(), 1)]
        );
        assert_eq!(
            view.list_categories(&tenant).await.unwrap(),
            vec!["general".to_owned()]
        );
        assert!(
            view.agent_ids_for_skill(&tenant, &skill.id)
                .await
                .unwrap()
                .is_empty()
        );
    });
}

#[test]
fn plan_store_writes_are_refused_and_reads_go_through() {
    block_on(async {
        let scope = UserScope::new("acme", "alice");
        let store = Arc::new(InMemoryPlanStore::new());
        let plan = store
            .create_plan(
                &scope,
                NewPlan::new("task", vec!["guard".into()], RiskLevel::Low),
            )
            .await
            .unwrap();
        let step = store
            .insert_step(&scope, &plan.id, NewStep::new(1, "guard"))
            .await
            .unwrap();
        let view = ReadOnly::new(store.clone() as Arc<dyn PlanStore>);

        refused(
            view.create_plan(&scope, NewPlan::new("t", vec![], RiskLevel::Low))
                .await,
            "create_plan",
        );
        refused(
            view.update_plan(&scope, &plan.id, PlanUpdate::new().started())
                .await,
            "update_plan",
        );
        refused(view.delete_plan(&scope, &plan.id).await, "delete_plan");
        refused(
            view.insert_step(&scope, &plan.id, NewStep::new(2, "guard"))
                .await,
            "insert_step",
        );
        refused(
            view.update_step(&scope, &plan.id, 1, StepUpdate::new().summary("x"))
                .await,
            "update_step",
        );

        assert_eq!(
            view.get_plan(&scope, &plan.id).await.unwrap(),
            Some(plan.clone())
        );
        assert_eq!(
            view.list_plans(&scope, &PlanFilter::new()).await.unwrap(),
            vec![plan.clone()]
        );
        assert_eq!(
            view.get_step(&scope, &plan.id, 1).await.unwrap(),
            Some(step.clone())
        );
        assert_eq!(view.list_steps(&scope, &plan.id).await.unwrap(), vec![step]);
    });
}

#[test]
fn memory_store_writes_are_refused_and_reads_go_through() {
    block_on(async {
        let scope = UserScope::new("acme", "alice");
        let store = Arc::new(InMemoryMemoryStore::new());
        let fact = store
            .add_fact(&scope, NewFact::new("Acme", "uses", "Rust", 0.9, "crm"))
            .await
            .unwrap();
        let episode = store
            .store_episode(
                &scope,
                NewEpisode::new("outreach", "wrote to Acme", "sent the mail"),
            )
            .await
            .unwrap();
        store
            .record_successful_procedure(&scope, "outreach", &["guard".into()], json!({}))
            .await
            .unwrap();
        let preference = store
            .set_preference(&scope, "mail", "tone", json!("dry"))
            .await
            .unwrap();
        let view = ReadOnly::new(store.clone() as Arc<dyn MemoryStore>);

        refused(
            view.store_episode(&scope, NewEpisode::new("x", "y", "z"))
                .await,
            "store_episode",
        );
        refused(
            view.add_fact(&scope, NewFact::new("Acme", "uses", "Go", 0.9, "x"))
                .await,
            "add_fact",
        );
        refused(
            view.record_successful_procedure(&scope, "outreach", &[], json!({}))
                .await,
            "record_successful_procedure",
        );
        refused(
            view.set_preference(&scope, "mail", "tone", json!("warm"))
                .await,
            "set_preference",
        );
        refused(
            view.delete_preference(&scope, "mail", "tone").await,
            "delete_preference",
        );

        let acme = FactQuery::new(vec!["Acme".into()], vec![]);
        assert_eq!(
            view.related_facts(&scope, &acme).await.unwrap(),
            vec![fact.clone()]
        );
        assert_eq!(view.get_fact(&scope, &fact.id).await.unwrap(), Some(fact));
        assert_eq!(
            view.get_episode(&scope, &episode.id).await.unwrap(),
            Some(episode.clone())
        );
        assert_eq!(
            view.query_episodes(&scope, &EpisodeQuery::new("wrote"))
                .await
                .unwrap()
                .len(),
            1
        );
        assert_eq!(
            view.relevant_procedures(&scope, "outreach")
                .await
                .unwrap()
                .len(),
            1
        );
        assert_eq!(
            view.preferences(&scope, None).await.unwrap(),
            vec![preference]
        );
    });
}
