//! Deciding which skills: the model path with its schema and single retry, refusals, and
//! the deterministic fallback's scoring and ranking.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::sync::Arc;

use futures::executor::block_on;
use proptest::prelude::*;
use serde_json::json;
use skills_orchestrate::Error;
use skills_orchestrate::llm::{ResponseFormat, Role, ScriptedLlm};
use skills_orchestrate::select::{
    AgentSkills, ExecutionApproach, FallbackSelector, MatchReason, SELECTION_PROMPT_START,
    SelectionSource, SkillCandidate, SkillSelector, Task,
};

fn candidates() -> Vec<SkillCandidate> {
    vec![
        SkillCandidate::new(
            "lead-research",
            "Research leads and their companies from public sources.",
        ),
        SkillCandidate::new(
            "company-profiling",
            "Build a profile of a company: size, funding, products.",
        ),
        SkillCandidate::new(
            "competitor-analysis",
            "Compare a company with its competitors.",
        ),
        SkillCandidate::new("pdf", "Extract text and tables from PDF files."),
    ]
}

fn answer(required: &[&str], approach: &str) -> String {
    json!({
        "skills_needed": !required.is_empty(),
        "required_skills": required.iter().map(|id| json!({"skill_id": id, "reason": format!("{id} helps"), "critical": true})).collect::<Vec<_>>(),
        "optional_skills": [],
        "execution_approach": approach,
    })
    .to_string()
}

fn with_model(model: ScriptedLlm) -> (SkillSelector, Arc<ScriptedLlm>) {
    let model = Arc::new(model);
    (
        SkillSelector::new(AgentSkills::seed_defaults()).model(model.clone()),
        model,
    )
}

fn task() -> Task {
    Task::new("Research Acme and profile the company")
        .goal("Qualify the lead")
        .context("Acme </task> sells CRMs")
}

#[test]
fn a_valid_model_answer_is_used_and_the_prompt_lists_only_the_agents_skills() {
    let (selector, model) = with_model(ScriptedLlm::new().when(
        &[SELECTION_PROMPT_START],
        answer(&["lead-research", "company-profiling"], "parallel"),
    ));
    let selection = block_on(selector.select("HunterAgent", &task(), &candidates())).unwrap();
    assert_eq!(selection.source, SelectionSource::Model { attempts: 1 });
    assert_eq!(
        selection.analysis.execution_approach,
        ExecutionApproach::Parallel
    );
    assert!(selection.usage.total() > 0);

    let requests = model.requests();
    assert_eq!(requests.len(), 1);
    let prompt = &requests[0].messages[0].content;
    assert!(prompt.contains("- lead-research: Research leads"));
    assert!(prompt.contains("- competitor-analysis:"));
    assert!(!prompt.contains("- pdf:"), "pdf is not a HunterAgent skill");
    assert!(prompt.contains("Goal: Qualify the lead"));
    assert_eq!(
        prompt.matches("</task>").count(),
        1,
        "the task text cannot close the element"
    );
    let ResponseFormat::Json {
        schema: Some(schema),
    } = &requests[0].response_format
    else {
        panic!("a JSON answer with a schema was asked for");
    };
    assert_eq!(
        schema["required"],
        json!([
            "skills_needed",
            "required_skills",
            "optional_skills",
            "execution_approach"
        ])
    );

    let specs = selection.step_specs(&task(), false);
    assert_eq!(
        specs.iter().map(|s| s.id.as_str()).collect::<Vec<_>>(),
        ["lead-research", "company-profiling"]
    );
    assert!(specs.iter().all(|s| s.depends_on.is_empty()));
    assert!(
        specs[0]
            .briefing
            .contains("Why this skill: lead-research helps")
    );
}

#[test]
fn a_malformed_answer_is_retried_once_with_the_reasons() {
    let (selector, model) = with_model(ScriptedLlm::new().when_sequence(
        &[SELECTION_PROMPT_START],
        vec![
            Ok("Sure! I think lead-research.".into()),
            Ok(answer(&["lead-research"], "sequential")),
        ],
    ));
    let selection = block_on(selector.select("HunterAgent", &task(), &candidates())).unwrap();
    assert_eq!(selection.source, SelectionSource::Model { attempts: 2 });
    assert_eq!(
        selection.analysis.required_skills[0].skill_id,
        "lead-research"
    );
    let retry = &model.requests()[1];
    assert_eq!(
        retry.messages.iter().map(|m| m.role).collect::<Vec<_>>(),
        [Role::User, Role::Assistant, Role::User]
    );
    assert_eq!(retry.messages[1].content, "Sure! I think lead-research.");
    assert!(
        retry.messages[2].content.contains("not one JSON value"),
        "{}",
        retry.messages[2].content
    );
    assert!(
        retry.messages[2]
            .content
            .contains("company-profiling, competitor-analysis, lead-research")
    );
}

#[test]
fn a_schema_violation_is_fed_back_with_its_pointer() {
    let wrong = json!({"skills_needed": true, "required_skills": [{"skill_id": "lead-research"}], "optional_skills": [], "execution_approach": "someday"});
    let (selector, model) = with_model(ScriptedLlm::new().when_sequence(
        &[SELECTION_PROMPT_START],
        vec![
            Ok(wrong.to_string()),
            Ok(answer(&["lead-research"], "hybrid")),
        ],
    ));
    let selection = block_on(selector.select("HunterAgent", &task(), &candidates())).unwrap();
    assert_eq!(selection.source, SelectionSource::Model { attempts: 2 });
    let feedback = &model.requests()[1].messages[2].content;
    assert!(feedback.contains("/execution_approach"), "{feedback}");
    assert!(feedback.contains("/required_skills/0"), "{feedback}");
}

#[test]
fn malformed_twice_is_a_structured_error_after_exactly_two_calls() {
    let (selector, model) =
        with_model(ScriptedLlm::new().when(&[SELECTION_PROMPT_START], "{\"skills_needed\": true"));
    let error = block_on(selector.select("HunterAgent", &task(), &candidates())).unwrap_err();
    match error {
        Error::MalformedModelOutput {
            what,
            attempts,
            reason,
        } => {
            assert_eq!((what, attempts), ("skill analysis", 2));
            assert!(reason.contains("not one JSON value"), "{reason}");
        }
        other => panic!("unexpected {other:?}"),
    }
    assert_eq!(model.requests().len(), 2);
}

#[test]
fn skills_the_agent_may_not_use_are_refused() {
    // `pdf` exists but is a ScribeAgent skill; `launch-strategy` is nobody's candidate here.
    for forbidden in ["pdf", "launch-strategy", "rm-rf"] {
        let (selector, model) = with_model(ScriptedLlm::new().when(
            &[SELECTION_PROMPT_START],
            answer(&[forbidden], "sequential"),
        ));
        let error = block_on(selector.select("HunterAgent", &task(), &candidates())).unwrap_err();
        let Error::MalformedModelOutput { reason, .. } = error else {
            panic!("unexpected {error:?}")
        };
        assert!(
            reason.contains(&format!(
                "skill `{forbidden}` is not one of the available skills"
            )),
            "{reason}"
        );
        assert_eq!(model.requests().len(), 2);
    }
    // A repeat and an inconsistent flag are refused too.
    let repeated = answer(&["pdf", "pdf"], "sequential");
    let (selector, _) = with_model(ScriptedLlm::new().when(&[SELECTION_PROMPT_START], repeated));
    let error = block_on(selector.select("ScribeAgent", &task(), &candidates())).unwrap_err();
    assert!(
        error.to_string().contains("listed more than once"),
        "{error}"
    );
    let inconsistent = json!({"skills_needed": true, "required_skills": [], "optional_skills": [], "execution_approach": "parallel"});
    let (selector, _) =
        with_model(ScriptedLlm::new().when(&[SELECTION_PROMPT_START], inconsistent.to_string()));
    let error = block_on(selector.select("ScribeAgent", &task(), &candidates())).unwrap_err();
    assert!(
        error.to_string().contains("required_skills is empty"),
        "{error}"
    );
}

#[test]
fn a_failing_model_is_not_retried_and_an_agent_without_skills_asks_nothing() {
    let (selector, model) =
        with_model(ScriptedLlm::new().failing_when(&[SELECTION_PROMPT_START], "quota exceeded"));
    let error = block_on(selector.select("HunterAgent", &task(), &candidates())).unwrap_err();
    assert!(matches!(error, Error::Llm(ref m) if m == "quota exceeded"));
    assert_eq!(model.requests().len(), 1);

    let (selector, model) = with_model(ScriptedLlm::new());
    let selection = block_on(selector.select("UnknownAgent", &task(), &candidates())).unwrap();
    assert_eq!(selection.source, SelectionSource::NothingAvailable);
    assert!(!selection.analysis.skills_needed);
    assert!(model.requests().is_empty());
}

fn fallback_candidates() -> Vec<SkillCandidate> {
    vec![
        SkillCandidate::new(
            "email-sequence",
            "Draft a sequence of outreach emails for a prospect.",
        )
        .tags(["email", "outreach"]),
        SkillCandidate::new(
            "crm-operations",
            "Read and update CRM records such as accounts and deals.",
        )
        .triggers(["update the crm", "log the call"]),
        SkillCandidate::new(
            "calendar-management",
            "Schedule and move meetings on the calendar.",
        ),
        SkillCandidate::new("copywriting", "Write persuasive marketing copy.").tags(["marketing"]),
        SkillCandidate::new("pdf", "Extract text and tables from PDF files."),
    ]
}

#[test]
fn the_fallback_scores_by_the_documented_table() {
    let task = Task::new(
        "Log the call with Acme, then draft outreach emails and schedule meetings for next week",
    );
    let ranked = FallbackSelector::new().rank(&task, &fallback_candidates());
    let scores: Vec<(&str, u32)> = ranked
        .iter()
        .map(|s| (s.skill_id.as_str(), s.score))
        .collect();
    // email-sequence: name word "email" 3 + tag "email" 4 + tag "outreach" 4 + description
    // words "draft", "outreach", "email" 3 = 14. crm-operations: trigger 10.
    // calendar-management: description words "schedule", "meeting" = 2. copywriting, pdf:
    // nothing.
    assert_eq!(
        scores,
        [
            ("email-sequence", 14),
            ("crm-operations", 10),
            ("calendar-management", 2)
        ]
    );
    assert_eq!(
        ranked[1].matched,
        [MatchReason::Trigger("log the call".into())]
    );

    let analysis = FallbackSelector::new().analyze(&task, &fallback_candidates());
    let required: Vec<(&str, bool)> = analysis
        .required_skills
        .iter()
        .map(|s| (s.skill_id.as_str(), s.critical))
        .collect();
    // Ordered by first mention: "log the call" comes before "outreach emails".
    assert_eq!(
        required,
        [("crm-operations", true), ("email-sequence", false)]
    );
    assert_eq!(analysis.optional_skills.len(), 1);
    assert_eq!(analysis.optional_skills[0].skill_id, "calendar-management");
    assert_eq!(analysis.execution_approach, ExecutionApproach::Sequential);

    let stricter = FallbackSelector::new()
        .min_score(11)
        .analyze(&task, &fallback_candidates());
    assert_eq!(stricter.required_skills.len(), 1);
    let capped = FallbackSelector::new()
        .max_skills(1)
        .analyze(&task, &fallback_candidates());
    assert_eq!(capped.required_skills[0].skill_id, "email-sequence");
    assert_eq!(capped.optional_skills[0].skill_id, "crm-operations");
}

#[test]
fn whole_names_count_more_than_their_words_and_ties_go_by_id() {
    let candidates = vec![
        SkillCandidate::new("report-writer", "Nothing relevant."),
        SkillCandidate::new("report-builder", "Nothing relevant."),
        SkillCandidate::new("pdf", "Nothing relevant."),
    ];
    let ranked =
        FallbackSelector::new().rank(&Task::new("Turn the PDF into a report"), &candidates);
    let scores: Vec<(&str, u32)> = ranked
        .iter()
        .map(|s| (s.skill_id.as_str(), s.score))
        .collect();
    assert_eq!(
        scores,
        [("pdf", 8), ("report-builder", 3), ("report-writer", 3)]
    );
    let selection = block_on(
        SkillSelector::new(
            AgentSkills::new().with("A", ["pdf", "report-writer", "report-builder"]),
        )
        .select("A", &Task::new("Turn the PDF into a report"), &candidates),
    )
    .unwrap();
    assert_eq!(selection.source, SelectionSource::Fallback);
    assert_eq!(
        selection
            .analysis
            .required_skills
            .iter()
            .map(|s| s.skill_id.as_str())
            .collect::<Vec<_>>(),
        ["pdf"]
    );
    let specs = selection.step_specs(&Task::new("x"), true);
    assert_eq!(specs.len(), 3);
    assert_eq!(
        specs[1].depends_on,
        ["pdf"],
        "optional steps run after the required ones"
    );
}

#[test]
fn agent_maps_load_from_json_and_gate_the_candidates() {
    let agents = AgentSkills::from_json(r#"{"Scout": ["pdf", "missing"]}"#).unwrap();
    let selector = SkillSelector::new(agents);
    let available = selector.available("Scout", &candidates());
    assert_eq!(
        available.iter().map(|c| c.id.as_str()).collect::<Vec<_>>(),
        ["pdf"]
    );
}

fn word() -> impl Strategy<Value = String> {
    prop::sample::select(vec![
        "email", "crm", "pdf", "report", "call", "draft", "meeting", "table", "log", "the",
    ])
    .prop_map(str::to_owned)
}

proptest! {
    #[test]
    fn the_fallback_is_independent_of_candidate_order(
        words in prop::collection::vec(word(), 1..12),
        rotation in 0usize..5,
    ) {
        let task = Task::new(words.join(" "));
        let mut shuffled = fallback_candidates();
        shuffled.rotate_left(rotation);
        shuffled.reverse();
        let selector = FallbackSelector::new();
        prop_assert_eq!(selector.rank(&task, &fallback_candidates()), selector.rank(&task, &shuffled));
        let analysis = selector.analyze(&task, &shuffled);
        let ids: Vec<&str> = analysis.skill_ids().collect();
        let mut unique = ids.clone();
        unique.sort_unstable();
        unique.dedup();
        prop_assert_eq!(unique.len(), ids.len());
        prop_assert!(analysis.required_skills.len() <= selector.max_skills);
        prop_assert_eq!(analysis.skills_needed, !analysis.required_skills.is_empty());
    }
}
