//! Skill-need analysis and planning end to end through the OpenAI-compatible client and a
//! Chat Completions server on the loopback interface: the selector's schema goes out as
//! `response_format`, the server's JSON comes back into a plan, its usage into the selection.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::sync::Arc;

use common::{FakeOpenAi, LoopbackHttp, Reply, TokioTimer, completion};
use serde_json::json;
use skills_openai::{OpenAiClient, OpenAiConfig};
use skills_orchestrate::Planner;
use skills_orchestrate::select::{
    AgentSkills, SELECTION_PROMPT_START, SelectionSource, SkillAnalysis, SkillCandidate,
    SkillSelector, Task,
};

fn candidates() -> Vec<SkillCandidate> {
    vec![
        SkillCandidate::new("lead-research", "Research leads and their companies."),
        SkillCandidate::new("company-profiling", "Build a profile of a company."),
        SkillCandidate::new(
            "competitor-analysis",
            "Compare a company with its competitors.",
        ),
    ]
}

fn analysis(first: &str) -> String {
    json!({
        "skills_needed": true,
        "required_skills": [
            {"skill_id": first, "reason": "find the lead", "critical": true},
            {"skill_id": "company-profiling", "reason": "profile it", "critical": true}
        ],
        "optional_skills": [],
        "execution_approach": "sequential"
    })
    .to_string()
}

async fn run(server: &FakeOpenAi) -> (skills_orchestrate::Selection, Arc<OpenAiClient>) {
    let client = Arc::new(
        OpenAiClient::new(
            Arc::new(LoopbackHttp),
            OpenAiConfig::new(&server.url, "planner"),
        )
        .unwrap()
        .timer(Arc::new(TokioTimer)),
    );
    let selector = SkillSelector::new(AgentSkills::seed_defaults()).model(client.clone());
    let task = Task::new("Research Acme and profile the company");
    let selection = selector
        .select("HunterAgent", &task, &candidates())
        .await
        .unwrap();
    (selection, client)
}

#[tokio::test]
async fn skill_analysis_and_planning_run_through_the_http_client() {
    let server = FakeOpenAi::start().await;
    server.push([Reply::ok(completion(
        json!(analysis("lead-research")),
        None,
        400,
        60,
    ))]);
    let (selection, client) = run(&server).await;
    assert_eq!(selection.source, SelectionSource::Model { attempts: 1 });
    assert_eq!(selection.usage.total(), 460);
    assert_eq!(client.usage().total(), 460);

    let seen = server.seen();
    assert_eq!(seen.len(), 1);
    assert_eq!(
        seen[0].body["response_format"]["json_schema"]["schema"],
        *SkillAnalysis::schema()
    );
    let prompt = seen[0].body["messages"][1]["content"].as_str().unwrap();
    assert!(prompt.starts_with(SELECTION_PROMPT_START), "{prompt}");

    let task = Task::new("Research Acme and profile the company");
    let plan = Planner::new()
        .plan(&task.description, selection.step_specs(&task, false))
        .await
        .unwrap();
    let skills: Vec<&str> = plan.steps.iter().map(|s| s.skill.as_str()).collect();
    assert_eq!(skills, ["lead-research", "company-profiling"]);
    assert_eq!(plan.groups.len(), 2, "sequential: one step per group");
}

#[tokio::test]
async fn a_wrong_answer_gets_the_selectors_corrective_retry_over_the_wire() {
    let server = FakeOpenAi::start().await;
    server.push([
        // A skill the agent does not have: refused, asked again with the reasons.
        Reply::ok(completion(json!(analysis("pdf")), None, 400, 60)),
        Reply::ok(completion(json!(analysis("lead-research")), None, 450, 60)),
    ]);
    let (selection, _) = run(&server).await;
    assert_eq!(selection.source, SelectionSource::Model { attempts: 2 });
    assert_eq!(selection.usage.total(), 970);
    let seen = server.seen();
    assert_eq!(seen.len(), 2);
    let retry = seen[1].body["messages"].to_string();
    assert!(
        retry.contains("pdf"),
        "the retry names the refused skill: {retry}"
    );
}

mod full_run {
    use super::*;
    use skills_orchestrate::execute::{Executor, InMemorySkills, SkillDefinition};
    use skills_orchestrate::orchestrator::{FixedPlanApproval, Orchestrator, TaskRun};
    use skills_orchestrate::synthesis::{SYNTHESIS_PROMPT_START, Synthesizer};
    use skills_security::TrustLevel;
    use skills_security::approval::ApprovalOption;
    use skills_security::audit::{AuditTrail, UsageFlag};
    use skills_security::gate::PolicyGate;
    use skills_store_traits::UserScope;
    use skills_store_traits::audit::AuditQuery;

    /// Answers the selection, each instruction step and the synthesis by what the prompt
    /// holds, each with its own usage.
    fn answer(seen: &common::Seen) -> Option<Reply> {
        let text = seen.body["messages"].to_string();
        Some(Reply::ok(if text.contains(SELECTION_PROMPT_START) {
            completion(json!(analysis("lead-research")), None, 400, 60)
        } else if text.contains(SYNTHESIS_PROMPT_START) {
            completion(
                json!(r#"{"summary": "Acme is a lead.", "next_steps": ["Call Acme"]}"#),
                None,
                300,
                30,
            )
        } else {
            completion(json!("Acme sells CRMs in Berlin."), None, 200, 20)
        }))
    }

    #[tokio::test]
    async fn a_task_runs_over_http_and_each_execution_record_carries_its_token_usage() {
        let server = FakeOpenAi::start().await;
        server.handle(answer);
        let client = Arc::new(
            OpenAiClient::new(Arc::new(LoopbackHttp), OpenAiConfig::new(&server.url, "m"))
                .unwrap()
                .timer(Arc::new(TokioTimer)),
        );
        let skills = ["lead-research", "company-profiling"].into_iter().fold(
            InMemorySkills::new(),
            |s, id| {
                s.with(
                    SkillDefinition::instruction(id, format!("Do {id}.")).trust(TrustLevel::Core),
                )
            },
        );
        let executor = Executor::builder(
            Arc::new(skills),
            PolicyGate::allow_all(AuditTrail::in_memory()),
        )
        .llm(client.clone())
        .timer(Arc::new(TokioTimer))
        .build();
        let trail = executor.audit_trail().clone();
        let orchestrator = Orchestrator::new(
            SkillSelector::new(AgentSkills::seed_defaults()).model(client.clone()),
            candidates(),
            executor,
        )
        .synthesizer(Synthesizer::new().model(client.clone()))
        .approver(Arc::new(FixedPlanApproval(Some(ApprovalOption::YesOnce))));
        let scope = UserScope::new("acme", "alice");
        let result = orchestrator
            .execute_task(
                &Task::new("Research Acme and profile the company"),
                TaskRun::new(scope.clone(), "HunterAgent"),
            )
            .await
            .unwrap();
        assert!(result.success, "{}", result.message);
        // Selection 460 + two steps of 220 + synthesis 330.
        assert_eq!(result.usage.total(), 460 + 2 * 220 + 330);
        assert_eq!(client.usage().total(), result.usage.total());

        let records: Vec<_> = trail
            .store()
            .query(&scope.tenant, &AuditQuery::new())
            .await
            .unwrap()
            .into_iter()
            .map(|e| e.record)
            .filter_map(|r| UsageFlag::find(&r).map(|u| (r.skill_id.clone(), u)))
            .collect();
        assert_eq!(
            records,
            [
                ("lead-research".to_owned(), UsageFlag::new(200, 20)),
                ("company-profiling".to_owned(), UsageFlag::new(200, 20)),
            ]
        );
    }
}
