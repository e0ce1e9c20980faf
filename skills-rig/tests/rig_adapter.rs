//! The rig adapter: `RigLlm` over rig's scripted completion model (the request it builds, the
//! text and usage it returns, errors), skill analysis through it, and the catalog preamble
//! within its budget.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::sync::Arc;

use futures::executor::block_on;
use rig_core::completion::{Message, Usage};
use rig_core::test_utils::{MockCompletionModel, MockTurn};
use serde_json::json;
use skills_catalog::Resolver;
use skills_catalog::prompt::tokens::Budget;
use skills_core::{Discovery, LoadOptions};
use skills_orchestrate::llm::{LlmClient, LlmRequest, Message as OrchMessage};
use skills_orchestrate::select::{
    AgentSkills, SelectionSource, SkillCandidate, SkillSelector, Task,
};
use skills_rig::{RigLlm, preamble};

#[test]
fn the_request_maps_onto_rig_and_text_and_usage_come_back() {
    let mock = MockCompletionModel::from_turns([
        MockTurn::text("Done.").with_usage(Usage::new().input_tokens(40).output_tokens(5))
    ]);
    let model = RigLlm::new(mock.clone());
    let request = LlmRequest::new("first question", 77)
        .system("Be brief.")
        .message(OrchMessage::assistant("first answer"))
        .message(OrchMessage::user("second question"));
    let answer = block_on(model.complete(request)).unwrap();
    assert_eq!(answer.text, "Done.");
    assert_eq!(
        (answer.usage.input_tokens, answer.usage.output_tokens),
        (40, 5)
    );

    let sent = &mock.requests()[0];
    assert_eq!(sent.max_tokens, Some(77));
    assert_eq!(
        sent.chat_history,
        vec![
            Message::system("Be brief."),
            Message::user("first question"),
            Message::assistant("first answer"),
            Message::user("second question"),
        ]
    );
    assert!(sent.output_schema.is_none());
}

#[test]
fn a_json_request_carries_its_schema_as_rigs_output_schema() {
    let mock = MockCompletionModel::text(r#"{"a":1}"#);
    let model = RigLlm::new(mock.clone());
    let schema = json!({"type": "object", "properties": {"a": {"type": "integer"}}});
    let answer =
        block_on(model.complete(LlmRequest::new("x", 10).json(Some(schema.clone())))).unwrap();
    assert_eq!(answer.text, r#"{"a":1}"#);
    let sent = mock.requests()[0].output_schema.clone().unwrap();
    assert_eq!(serde_json::to_value(sent).unwrap(), schema);
}

#[test]
fn provider_errors_are_llm_errors() {
    // The script is empty: rig's mock fails the call.
    let model = RigLlm::new(MockCompletionModel::from_turns([]));
    let error = block_on(model.complete(LlmRequest::new("x", 10))).unwrap_err();
    assert!(
        matches!(error, skills_orchestrate::Error::Llm(_)),
        "{error}"
    );
}

#[test]
fn skill_analysis_runs_on_a_rig_model() {
    let analysis = json!({
        "skills_needed": true,
        "required_skills": [{"skill_id": "lead-research", "reason": "r", "critical": true}],
        "optional_skills": [],
        "execution_approach": "sequential"
    });
    let mock = MockCompletionModel::text(analysis.to_string());
    let selector =
        SkillSelector::new(AgentSkills::seed_defaults()).model(Arc::new(RigLlm::new(mock)));
    let candidates = vec![SkillCandidate::new("lead-research", "Research leads.")];
    let selection =
        block_on(selector.select("HunterAgent", &Task::new("Find leads"), &candidates)).unwrap();
    assert_eq!(selection.source, SelectionSource::Model { attempts: 1 });
}

#[test]
fn the_preamble_lists_skills_within_its_budget() {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../examples/skills");
    let report = Discovery::new(LoadOptions::default()).root(root).run();
    let skills: Vec<_> = report.skills().cloned().collect();
    let resolution = Resolver::new().resolve_repo(&skills);
    let all = preamble(&resolution.skills, Budget::Chars(100_000));
    assert!(all.text.starts_with("Skills are available."));
    assert!(all.text.contains("<available_skills>"));
    assert_eq!(all.listed.len(), 4);
    assert!(all.omitted.is_empty());

    let tight = preamble(
        &resolution.skills,
        Budget::Chars(all.text.chars().count() - 1),
    );
    assert!(tight.text.chars().count() < all.text.chars().count());
    assert_eq!(tight.listed.len() + tight.omitted.len(), 4);
    assert!(!tight.omitted.is_empty());
    assert!(
        preamble(&resolution.skills, Budget::Chars(10))
            .text
            .is_empty()
    );
}

mod tools {
    use super::*;
    use skills_rig::SkillTools;
    use skills_security::audit::AuditTrail;
    use skills_security::{PolicyGate, Principal};

    fn tools(gate: PolicyGate) -> SkillTools {
        let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../examples/skills");
        let report = Discovery::new(LoadOptions::default()).root(root).run();
        let skills: Vec<_> = report.skills().cloned().collect();
        let resolution = Arc::new(Resolver::new().resolve_repo(&skills));
        SkillTools::new(
            resolution,
            Arc::new(gate),
            Principal::new("acme", "alice"),
            "/skills",
        )
    }

    #[test]
    fn allowed_calls_return_the_skill_and_its_files_and_are_audited() {
        let trail = AuditTrail::in_memory();
        let tools = tools(PolicyGate::allow_all(trail.clone()));
        let [use_skill, read_file] = <[_; 2]>::try_from(tools.tools()).ok().unwrap();
        assert_eq!(use_skill.name().to_string(), "use_skill");
        let text = block_on(use_skill.execute(json!({"skill_name": "pdf-tools"}))).unwrap();
        assert!(text.render().contains("pdf-tools"), "{}", text.render());
        let file =
            block_on(read_file.execute(json!({"skill_name": "pdf-tools", "path": "SKILL.md"})))
                .unwrap();
        assert!(file.render().starts_with("---"), "{}", file.render());
        let escape = block_on(
            read_file.execute(json!({"skill_name": "pdf-tools", "path": "../../Cargo.toml"})),
        );
        assert!(escape.is_err());
        let records = block_on(trail.store().query(
            &"acme".into(),
            &skills_store_traits::audit::AuditQuery::new(),
        ))
        .unwrap();
        assert!(records.len() >= 3, "every decision is on the trail");
    }

    #[test]
    fn a_gate_that_does_not_allow_refuses_the_call() {
        // The secure default: repo skills are community, and community skills need a rule.
        let clock: Arc<dyn skills_store_traits::Clock> = Arc::new(skills_store_traits::SystemClock);
        let gate = PolicyGate::new(
            Arc::new(skills_security::Permissions::new(clock.clone())),
            Arc::new(skills_security::permissions::rate::InMemoryRateLimiter::new()),
            skills_security::Autonomy::new(
                Arc::new(skills_store_traits::in_memory::InMemoryTrustStore::new()),
                clock.clone(),
            ),
            AuditTrail::in_memory(),
            clock,
        );
        let tools = tools(gate);
        let use_skill = tools.use_skill().unwrap();
        let refused = block_on(use_skill.execute(json!({"skill_name": "pdf-tools"})));
        let error = refused.unwrap_err();
        assert!(
            error.message().contains("`pdf-tools` is denied"),
            "{}",
            error.message()
        );
        let missing = block_on(use_skill.execute(json!({})));
        assert!(missing.is_err());
    }
}

mod gate_approvals {
    use super::*;
    use skills_orchestrate::execute::OptionApprover;
    use skills_rig::SkillTools;
    use skills_security::audit::AuditTrail;
    use skills_security::hitl::OptionRuntime;
    use skills_security::permissions::{PermissionRule, Scope, Target};
    use skills_security::time::{ThreadTimer, Timer};
    use skills_security::{PolicyGate, Principal};
    use skills_store_traits::{Clock, SystemClock, TenantId};

    /// The secure default gate, with one rule letting community `pdf-tools` run with an
    /// approval by someone other than the caller.
    fn asking_gate() -> PolicyGate {
        let clock: Arc<dyn Clock> = Arc::new(SystemClock);
        let permissions = Arc::new(skills_security::Permissions::new(clock.clone()));
        permissions.set_rules(
            &TenantId::new("acme"),
            vec![
                PermissionRule::new(
                    "pdf-ok",
                    Scope::Organization,
                    Target::Skill("pdf-tools".into()),
                )
                .execute(true)
                .requires_approval(true, Vec::<String>::new()),
            ],
        );
        PolicyGate::new(
            permissions,
            Arc::new(skills_security::permissions::rate::InMemoryRateLimiter::new()),
            skills_security::Autonomy::new(
                Arc::new(skills_store_traits::in_memory::InMemoryTrustStore::new()),
                clock.clone(),
            ),
            AuditTrail::in_memory(),
            clock,
        )
    }

    fn tools(approver: Option<Arc<OptionApprover>>) -> SkillTools {
        let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../examples/skills");
        let report = Discovery::new(LoadOptions::default()).root(root).run();
        let skills: Vec<_> = report.skills().cloned().collect();
        let resolution = Arc::new(Resolver::new().resolve_repo(&skills));
        let tools = SkillTools::new(
            resolution,
            Arc::new(asking_gate()),
            Principal::new("acme", "alice"),
            "/skills",
        );
        match approver {
            Some(approver) => tools.with_approver(approver),
            None => tools,
        }
    }

    /// Answers the next request of `world` with `option` by `by`, from another task.
    async fn answer(runtime: &OptionRuntime, option: &str, by: Option<&str>) {
        for _ in 0..5_000 {
            if let Some(event) = runtime.pending("acme").first() {
                match runtime.submit("acme", &event.request_id, option, by) {
                    Ok(()) => {}
                    // An answer nobody is named for is refused and the question stays
                    // open: a named no ends it.
                    Err(skills_security::hitl::HitlError::Unidentified { .. }) if by.is_none() => {
                        runtime
                            .submit("acme", &event.request_id, "no", Some("bob"))
                            .unwrap();
                    }
                    Err(e) => panic!("{e}"),
                }
                return;
            }
            ThreadTimer::new()
                .sleep(std::time::Duration::from_millis(1))
                .await;
        }
        panic!("nobody was asked");
    }

    #[test]
    fn a_call_the_gate_asks_about_is_asked_through_the_option_runtime() {
        let runtime = Arc::new(OptionRuntime::new(Arc::new(ThreadTimer::new())));
        let tools = tools(Some(Arc::new(OptionApprover::new(runtime.clone(), "acme"))));
        let use_skill = tools.use_skill().unwrap();
        let call = || use_skill.execute(json!({"skill_name": "pdf-tools"}));

        // Bob says yes: the gate allows the call with his approval, and the answer carries
        // the skill's SKILL.md text.
        let (ran, ()) = block_on(futures::future::join(
            call(),
            answer(&runtime, "once", Some("bob")),
        ));
        let text = ran.unwrap().render();
        assert!(
            text.contains("Skill: pdf-tools") && text.contains("SKILL.md:"),
            "{text}"
        );

        // No, an answer nobody can be named for, and alice approving her own call all refuse.
        for (option, by, why) in [
            ("no", Some("bob"), "approval refused"),
            ("once", None, "approval refused"),
            ("once", Some("alice"), "not enough"),
        ] {
            let (refused, ()) =
                block_on(futures::future::join(call(), answer(&runtime, option, by)));
            let error = refused.unwrap_err();
            assert!(
                error.message().contains(why),
                "{option} by {by:?}: {}",
                error.message()
            );
        }
    }

    #[test]
    fn without_an_approver_a_call_the_gate_asks_about_is_refused() {
        let tools = tools(None);
        let refused = block_on(
            tools
                .use_skill()
                .unwrap()
                .execute(json!({"skill_name": "pdf-tools"})),
        );
        let error = refused.unwrap_err();
        assert!(
            error.message().contains("needs approval"),
            "{}",
            error.message()
        );
    }
}

mod stored_skills {
    use super::*;
    use skills_rig::SkillTools;
    use skills_security::audit::AuditTrail;
    use skills_security::{PolicyGate, Principal};
    use skills_store_traits::in_memory::InMemorySkillStore;
    use skills_store_traits::{NewAssignment, NewSkill, SkillStore, TenantId};

    #[test]
    fn stored_skills_are_read_from_the_store() {
        let store = Arc::new(InMemorySkillStore::new());
        let tenant = TenantId::new("acme");
        let resolution = block_on(async {
            let skill = NewSkill::new(
                "Triage",
                "triage",
                "---\nname: triage\ndescription: Triage.\n---\nRead references/matrix.md.\n",
            )
            .with_file("references/matrix.md", "# Matrix from the store\n");
            let skill = store.create_skill(&tenant, skill).await.unwrap();
            store
                .create_assignment(&tenant, NewAssignment::global(&skill.id))
                .await
                .unwrap();
            Resolver::new()
                .resolve_for_agent(store.as_ref(), &tenant, "agent", None, &[])
                .await
                .unwrap()
        });
        let tools = SkillTools::new(
            Arc::new(resolution),
            Arc::new(PolicyGate::allow_all(AuditTrail::in_memory())),
            Principal::new("acme", "alice"),
            "/skills",
        );
        let args = json!({"skill_name": "triage", "path": "references/matrix.md"});
        let without = block_on(tools.read_skill_file().unwrap().execute(args.clone()));
        assert!(without.is_err(), "no store, no stored content");
        let tools = tools.with_store(store, tenant);
        let file = block_on(tools.read_skill_file().unwrap().execute(args)).unwrap();
        assert!(
            file.render().contains("Matrix from the store"),
            "{}",
            file.render()
        );
        let skill_md = block_on(
            tools
                .use_skill()
                .unwrap()
                .execute(json!({"skill_name": "triage"})),
        )
        .unwrap();
        assert!(
            skill_md.render().contains("Read references/matrix.md."),
            "{}",
            skill_md.render()
        );
    }
}

mod load_skill {
    use super::*;
    use skills_rig::{LoadSkillParts, SkillTools};
    use skills_security::approval::OptionChannel;
    use skills_security::audit::AuditTrail;
    use skills_security::hitl::OptionRuntime;
    use skills_security::sandbox::ScriptedSandbox;
    use skills_security::time::ThreadTimer;
    use skills_security::{Approvals, PolicyGate, Principal, SessionScope, TrustLevel};

    #[test]
    fn scripts_are_asked_through_the_option_runtime_and_refused_ones_never_run() {
        let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../examples/skills");
        let report = Discovery::new(LoadOptions::default()).root(root).run();
        let skills: Vec<_> = report.skills().cloned().collect();
        let resolution = Arc::new(Resolver::new().resolve_repo(&skills));
        // Nobody answers: the non-interactive runtime gives its default, which is no.
        let runtime = Arc::new(OptionRuntime::new(Arc::new(ThreadTimer::new())).non_interactive());
        let approvals = Arc::new(Approvals::new(Arc::new(OptionChannel::new(runtime))));
        let sandbox = Arc::new(ScriptedSandbox::new());
        let scratch = std::env::temp_dir();
        let tools = SkillTools::new(
            resolution,
            Arc::new(PolicyGate::allow_all(AuditTrail::in_memory())),
            Principal::new("acme", "alice"),
            "/skills",
        )
        .with_load_skill(LoadSkillParts::new(
            sandbox.clone(),
            approvals,
            SessionScope::new("world", "chat"),
            TrustLevel::User,
            scratch,
        ));
        assert_eq!(tools.tools().len(), 3);
        let load = tools.load_skill().unwrap();
        let output = block_on(load.execute(json!({"skill_name": "pdf-tools"}))).unwrap();
        let text = output.render();
        assert!(text.contains("<skill_context"), "{text}");
        assert!(text.contains("scripts/extract_text.py"), "{text}");
        assert!(text.contains("not approved (declined)"), "{text}");
        assert!(
            sandbox.requests().is_empty(),
            "an unapproved script never runs"
        );
        // Without its parts there is no load_skill tool.
        let plain = SkillTools::new(
            Arc::new(Resolver::new().resolve_repo(&skills)),
            Arc::new(PolicyGate::allow_all(AuditTrail::in_memory())),
            Principal::new("acme", "alice"),
            "/skills",
        );
        assert!(plain.load_skill().is_none());
    }

    #[test]
    fn a_yes_submitted_to_the_option_runtime_runs_the_script_in_the_sandbox() {
        let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../examples/skills");
        let report = Discovery::new(LoadOptions::default()).root(root).run();
        let skills: Vec<_> = report.skills().cloned().collect();
        let resolution = Arc::new(Resolver::new().resolve_repo(&skills));
        let runtime = Arc::new(OptionRuntime::new(Arc::new(ThreadTimer::new())));
        let approvals = Arc::new(Approvals::new(Arc::new(OptionChannel::new(
            runtime.clone(),
        ))));
        let sandbox = Arc::new(ScriptedSandbox::new());
        let tools = SkillTools::new(
            resolution,
            Arc::new(PolicyGate::allow_all(AuditTrail::in_memory())),
            Principal::new("acme", "alice"),
            "/skills",
        )
        .with_load_skill(LoadSkillParts::new(
            sandbox.clone(),
            approvals,
            SessionScope::new("world", "chat"),
            TrustLevel::User,
            std::env::temp_dir(),
        ));
        let load = tools.load_skill().unwrap();
        // The person: answers the first request that appears in the world.
        let person = std::thread::spawn(move || {
            for _ in 0..500 {
                if let Some(event) = runtime.pending("world").first() {
                    return runtime
                        .submit("world", &event.request_id, "yes_once", Some("alice"))
                        .is_ok();
                }
                std::thread::sleep(std::time::Duration::from_millis(10));
            }
            false
        });
        let output = block_on(load.execute(json!({"skill_name": "pdf-tools"}))).unwrap();
        assert!(
            person.join().unwrap(),
            "the request reached the option runtime"
        );
        assert_eq!(
            sandbox.requests().len(),
            1,
            "the approved script ran in the sandbox"
        );
        assert!(
            output
                .render()
                .contains("<script_output script=\"scripts/extract_text.py\"")
        );
    }
}

mod sanitized {
    use super::*;
    use skills_rig::SkillTools;
    use skills_security::audit::AuditTrail;
    use skills_security::{PolicyGate, Principal};

    #[test]
    fn tool_results_pass_the_sanitizer_at_the_skills_trust() {
        let dir = tempfile::tempdir().unwrap();
        let skill = dir.path().join("crm-notes");
        std::fs::create_dir_all(&skill).unwrap();
        std::fs::write(
            skill.join("SKILL.md"),
            "---\nname: crm-notes\ndescription: Notes on accounts.\n---\nEscalate to rbrown@example.com or call 415-555-0132.\n",
        )
        .unwrap();
        let report = Discovery::new(LoadOptions::default())
            .root(dir.path())
            .run();
        let skills: Vec<_> = report.skills().cloned().collect();
        // A repo skill carries no trust level: community, cleared for public data only.
        let tools = SkillTools::new(
            Arc::new(Resolver::new().resolve_repo(&skills)),
            Arc::new(PolicyGate::allow_all(AuditTrail::in_memory())),
            Principal::new("acme", "alice"),
            "/skills",
        );
        let read = tools.read_skill_file().unwrap();
        let text = block_on(read.execute(json!({"skill_name": "crm-notes", "path": "SKILL.md"})))
            .unwrap()
            .render();
        assert!(!text.contains("rbrown@example.com"), "{text}");
        assert!(!text.contains("415-555-0132"), "{text}");
        assert!(text.contains("Escalate to"), "{text}");
        let used = block_on(
            tools
                .use_skill()
                .unwrap()
                .execute(json!({"skill_name": "crm-notes"})),
        )
        .unwrap()
        .render();
        assert!(!used.contains("rbrown@example.com"), "{used}");
    }
}
