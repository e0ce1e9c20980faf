//! The executor's scheduling: chain, diamond and wide fan-out plans, the concurrency limit,
//! retries and failure propagation, event order, cancellation, composite skills, timeouts,
//! working-memory summaries, and a property over random plans.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod orchestrate_execute_support;

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use futures::executor::block_on;
use futures::future::{BoxFuture, FutureExt};
use orchestrate_execute_support::{Probe, alice, chain, natives, no_wait, plan};
use proptest::prelude::*;
use skills::orchestrate::context::Verbosity;
use skills::orchestrate::execute::{
    CancelToken, ExecutionResult, Executor, InMemorySkills, Run, SkillDefinition, StepError,
    StepErrorKind, StepOutput, StepState, SummaryMode, TRUNCATION_MARKER, Timer,
};
use skills::orchestrate::llm::{
    EstimatedTokens, LlmClient, LlmRequest, LlmResponse, ScriptedLlm, TokenCounter,
};
use skills::orchestrate::plan::StepSpec;
use skills::orchestrate::progress::{CollectingSink, ProgressEvent};
use skills::security::TrustLevel;

fn executor(skills: InMemorySkills, probe: &Arc<Probe>) -> Executor {
    Executor::builder(
        Arc::new(skills),
        skills::security::gate::PolicyGate::allow_all(
            skills::security::audit::AuditTrail::in_memory(),
        ),
    )
    .native("work", probe.clone())
    .retry(no_wait(1))
    .build()
}

fn states(result: &ExecutionResult) -> Vec<(&str, StepState)> {
    result
        .steps
        .iter()
        .map(|s| (s.step_id.as_str(), s.state))
        .collect()
}

#[test]
fn a_chain_runs_in_order_and_hands_each_step_its_predecessors_summary() {
    let probe = Probe::ok();
    let executor = executor(natives(&["work"]), &probe);
    let plan = block_on(plan(chain(&["a", "b", "c"], "work")));
    let result =
        block_on(executor.execute(&plan, Run::new(alice()).input("the task data"))).unwrap();
    assert!(result.success, "{result:?}");
    assert_eq!(probe.order(), ["a", "b", "c"]);
    assert!(probe.input("a").contains("the task data"));
    assert!(probe.input("b").contains("a done") && probe.input("b").contains("the task data"));
    // Only direct dependencies are handed on.
    assert!(probe.input("c").contains("b done") && !probe.input("c").contains("a done"));
    let memory: Vec<_> = result
        .memory()
        .map(|m| (m.step, m.step_id.as_str(), m.summary.as_str()))
        .collect();
    assert_eq!(
        memory,
        [(1, "a", "a done"), (2, "b", "b done"), (3, "c", "c done")]
    );
    assert!(
        result
            .steps
            .iter()
            .all(|s| s.attempts == 1 && s.error.is_none())
    );
}

#[test]
fn a_diamond_joins_both_branches_in_plan_order() {
    let probe = Probe::ok();
    let executor = executor(natives(&["work"]), &probe);
    let plan = block_on(plan(vec![
        StepSpec::new("a", "work", "start"),
        StepSpec::new("b", "work", "left").after("a"),
        StepSpec::new("c", "work", "right").after("a"),
        StepSpec::new("d", "work", "join").after("c").after("b"),
    ]));
    assert_eq!(plan.groups, vec![vec!["a"], vec!["b", "c"], vec!["d"]]);
    let result = block_on(executor.execute(&plan, Run::new(alice()))).unwrap();
    assert!(result.success);
    let input = probe.input("d");
    let (b, c) = (input.find("b done").unwrap(), input.find("c done").unwrap());
    assert!(b < c, "dependencies in plan order: {input}");
    assert!(!input.contains("a done"));
    assert_eq!(probe.order().last().map(String::as_str), Some("d"));
}

#[test]
fn a_wide_fan_out_runs_every_dependent_with_the_roots_summary() {
    let probe = Probe::ok();
    let executor = executor(natives(&["work"]), &probe);
    let mut specs = vec![StepSpec::new("root", "work", "root")];
    specs.extend(
        (0..60).map(|i| StepSpec::new(format!("leaf{i:02}"), "work", "leaf").after("root")),
    );
    let plan = block_on(plan(specs));
    let result = block_on(executor.execute(&plan, Run::new(alice()))).unwrap();
    assert!(result.success);
    assert_eq!(result.steps.len(), 61);
    assert_eq!(probe.total_calls(), 61);
    for i in 0..60 {
        assert!(probe.input(&format!("leaf{i:02}")).contains("root done"));
    }
}

#[test]
fn the_concurrency_limit_is_honoured_and_used() {
    let probe = Probe::ok();
    let executor = Executor::builder(
        Arc::new(natives(&["work"])),
        skills::security::gate::PolicyGate::allow_all(
            skills::security::audit::AuditTrail::in_memory(),
        ),
    )
    .native("work", probe.clone())
    .concurrency(3)
    .build();
    let specs = (0..20)
        .map(|i| StepSpec::new(format!("s{i:02}"), "work", "parallel"))
        .collect();
    let plan = block_on(plan(specs));
    assert_eq!(plan.groups.len(), 1);
    let result = block_on(executor.execute(&plan, Run::new(alice()))).unwrap();
    assert!(result.success);
    assert_eq!(probe.total_calls(), 20);
    assert_eq!(probe.max_in_flight(), 3);

    let serial = Probe::ok();
    let executor = Executor::builder(
        Arc::new(natives(&["work"])),
        skills::security::gate::PolicyGate::allow_all(
            skills::security::audit::AuditTrail::in_memory(),
        ),
    )
    .native("work", serial.clone())
    .concurrency(1)
    .build();
    block_on(executor.execute(&plan, Run::new(alice()))).unwrap();
    assert_eq!(serial.max_in_flight(), 1);
}

#[test]
fn a_step_failing_twice_succeeds_on_its_third_attempt() {
    let probe = Probe::new(|input, call| {
        if input.step_id == "flaky" && call < 3 {
            Err(StepError::transient(format!("hiccup {call}")))
        } else {
            Ok(StepOutput::text(format!(
                "{} done on attempt {}",
                input.step_id, input.attempt
            )))
        }
    });
    let executor = Executor::builder(
        Arc::new(natives(&["work"])),
        skills::security::gate::PolicyGate::allow_all(
            skills::security::audit::AuditTrail::in_memory(),
        ),
    )
    .native("work", probe.clone())
    .retry(no_wait(3))
    .build();
    let plan = block_on(plan(chain(&["flaky", "after"], "work")));
    let sink = Arc::new(CollectingSink::new());
    let result =
        block_on(executor.execute(&plan, Run::new(alice()).progress(sink.clone()))).unwrap();
    assert!(result.success);
    let flaky = result.step("flaky").unwrap();
    assert_eq!((flaky.state, flaky.attempts), (StepState::Complete, 3));
    assert_eq!(flaky.output.as_deref(), Some("flaky done on attempt 3"));
    let retries: Vec<bool> = sink
        .events()
        .iter()
        .filter_map(|e| match e {
            ProgressEvent::StepFailed { can_retry, .. } => Some(*can_retry),
            _ => None,
        })
        .collect();
    assert_eq!(retries, [true, true]);
    let attempts: Vec<u32> = sink
        .events()
        .iter()
        .filter_map(|e| match e {
            ProgressEvent::StepStarting {
                step_id, attempt, ..
            } if step_id == "flaky" => Some(*attempt),
            _ => None,
        })
        .collect();
    assert_eq!(attempts, [1, 2, 3]);
}

#[test]
fn exhausted_retries_fail_the_step_and_skip_its_dependents_transitively() {
    let probe = Probe::new(|input, _| {
        if input.step_id == "bad" {
            Err(StepError::transient("down"))
        } else {
            Ok(StepOutput::text("fine"))
        }
    });
    let executor = Executor::builder(
        Arc::new(natives(&["work"])),
        skills::security::gate::PolicyGate::allow_all(
            skills::security::audit::AuditTrail::in_memory(),
        ),
    )
    .native("work", probe.clone())
    .retry(no_wait(3))
    .build();
    let plan = block_on(plan(vec![
        StepSpec::new("bad", "work", "fails"),
        StepSpec::new("other", "work", "independent"),
        StepSpec::new("child", "work", "needs bad").after("bad"),
        StepSpec::new("grandchild", "work", "needs child").after("child"),
        StepSpec::new("sibling", "work", "needs other").after("other"),
    ]));
    let sink = Arc::new(CollectingSink::new());
    let result =
        block_on(executor.execute(&plan, Run::new(alice()).progress(sink.clone()))).unwrap();
    assert!(!result.success && !result.cancelled);
    let bad = result.step("bad").unwrap();
    assert_eq!((bad.state, bad.attempts), (StepState::Failed, 3));
    assert_eq!(
        bad.error.as_ref().map(|e| e.kind),
        Some(StepErrorKind::Transient)
    );
    assert_eq!(result.step("child").unwrap().state, StepState::Skipped);
    assert_eq!(result.step("grandchild").unwrap().state, StepState::Skipped);
    assert_eq!(
        result
            .step("grandchild")
            .unwrap()
            .error
            .as_ref()
            .map(|e| e.message.as_str()),
        Some("dependency `child` skipped")
    );
    assert_eq!(result.step("sibling").unwrap().state, StepState::Complete);
    assert_eq!((probe.calls("child"), probe.calls("grandchild")), (0, 0));
    let skipped: Vec<String> = sink
        .events()
        .into_iter()
        .filter_map(|e| match e {
            ProgressEvent::StepSkipped {
                step_id, reason, ..
            } => Some(format!("{step_id}: {reason}")),
            _ => None,
        })
        .collect();
    assert_eq!(
        skipped,
        [
            "child: dependency `bad` failed",
            "grandchild: dependency `child` skipped"
        ]
    );
}

#[test]
fn final_failures_are_not_retried() {
    let probe = Probe::new(|_, _| Err(StepError::failed("broken for good")));
    let executor = Executor::builder(
        Arc::new(natives(&["work"])),
        skills::security::gate::PolicyGate::allow_all(
            skills::security::audit::AuditTrail::in_memory(),
        ),
    )
    .native("work", probe.clone())
    .retry(no_wait(5))
    .build();
    let plan = block_on(plan(vec![StepSpec::new("x", "work", "x")]));
    let result = block_on(executor.execute(&plan, Run::new(alice()))).unwrap();
    assert_eq!(result.step("x").unwrap().attempts, 1);
    assert_eq!(probe.calls("x"), 1);

    // A per-step policy overrides the default.
    let probe = Probe::new(|_, _| Err(StepError::transient("again")));
    let executor = Executor::builder(
        Arc::new(natives(&["work"])),
        skills::security::gate::PolicyGate::allow_all(
            skills::security::audit::AuditTrail::in_memory(),
        ),
    )
    .native("work", probe.clone())
    .retry(no_wait(5))
    .step_retry("x", no_wait(2))
    .build();
    let result = block_on(executor.execute(&plan, Run::new(alice()))).unwrap();
    assert_eq!(result.step("x").unwrap().attempts, 2);
}

#[test]
fn a_chain_emits_its_events_in_order() {
    let probe = Probe::ok();
    let executor = executor(natives(&["work"]), &probe);
    let plan = block_on(plan(chain(&["a", "b", "c"], "work")));
    let sink = Arc::new(CollectingSink::new());
    block_on(executor.execute(&plan, Run::new(alice()).progress(sink.clone()))).unwrap();
    let shown: Vec<String> = sink
        .events()
        .iter()
        .map(|e| match e {
            ProgressEvent::GroupStarting { group, .. } => format!("group_starting {group}"),
            ProgressEvent::StepStarting { step_id, .. }
            | ProgressEvent::StepComplete { step_id, .. }
            | ProgressEvent::StepFailed { step_id, .. }
            | ProgressEvent::StepSkipped { step_id, .. } => format!("{} {step_id}", e.name()),
            other => other.name().to_owned(),
        })
        .collect();
    assert_eq!(
        shown,
        [
            "group_starting 0",
            "step_starting a",
            "step_complete a",
            "group_starting 1",
            "step_starting b",
            "step_complete b",
            "group_starting 2",
            "step_starting c",
            "step_complete c",
        ]
    );
}

#[test]
fn cancellation_lets_running_steps_finish_and_starts_nothing_new() {
    let token = CancelToken::new();
    let handle = token.clone();
    let probe = Probe::new(move |input, _| {
        if input.step_id == "a" {
            handle.cancel();
        }
        Ok(StepOutput::text("done"))
    });
    let executor = executor(natives(&["work"]), &probe);
    let chained = block_on(plan(chain(&["a", "b", "c"], "work")));
    let sink = Arc::new(CollectingSink::new());
    let run = Run::new(alice()).cancel(token).progress(sink.clone());
    let result = block_on(executor.execute(&chained, run)).unwrap();
    assert!(result.cancelled && !result.success);
    assert_eq!(
        states(&result),
        [
            ("a", StepState::Complete),
            ("b", StepState::Cancelled),
            ("c", StepState::Cancelled)
        ]
    );
    assert_eq!(probe.total_calls(), 1);
    assert_eq!(
        sink.names(),
        [
            "group_starting",
            "step_starting",
            "step_complete",
            "step_skipped",
            "step_skipped"
        ]
    );

    // Within a group: one at a time, the first cancels, the other nine never start.
    let token = CancelToken::new();
    let handle = token.clone();
    let probe = Probe::new(move |_, _| {
        handle.cancel();
        Ok(StepOutput::text("done"))
    });
    let executor = Executor::builder(
        Arc::new(natives(&["work"])),
        skills::security::gate::PolicyGate::allow_all(
            skills::security::audit::AuditTrail::in_memory(),
        ),
    )
    .native("work", probe.clone())
    .concurrency(1)
    .build();
    let group = block_on(plan(
        (0..10)
            .map(|i| StepSpec::new(format!("p{i}"), "work", "p"))
            .collect(),
    ));
    let result = block_on(executor.execute(&group, Run::new(alice()).cancel(token))).unwrap();
    assert_eq!(probe.total_calls(), 1);
    assert_eq!(result.in_state(StepState::Cancelled).count(), 9);
    assert_eq!(result.in_state(StepState::Complete).count(), 1);
}

#[test]
fn a_composite_skill_runs_its_sub_plan_and_hands_on_the_result() {
    let probe = Probe::ok();
    let skills = natives(&["work"]).with(
        SkillDefinition::composite(
            "bundle",
            vec![
                StepSpec::new("x", "work", "first part"),
                StepSpec::new("y", "work", "second part").after("x"),
            ],
        )
        .trust(TrustLevel::User),
    );
    let executor = executor(skills, &probe);
    let plan = block_on(plan(vec![
        StepSpec::new("prep", "work", "prepare"),
        StepSpec::new("pack", "bundle", "bundle it").after("prep"),
        StepSpec::new("last", "work", "finish").after("pack"),
    ]));
    let sink = Arc::new(CollectingSink::new());
    let result =
        block_on(executor.execute(&plan, Run::new(alice()).progress(sink.clone()))).unwrap();
    assert!(result.success, "{result:?}");
    assert_eq!(probe.order(), ["prep", "x", "y", "last"]);
    // The sub-steps saw the composite step's input; the next step saw the composite's output.
    assert!(probe.input("x").contains("prep done"));
    assert!(probe.input("last").contains("x: x done") && probe.input("last").contains("y: y done"));
    let names: Vec<String> = sink
        .events()
        .iter()
        .filter_map(|e| match e {
            ProgressEvent::StepComplete { step_id, .. } => Some(step_id.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(names, ["prep", "pack/x", "pack/y", "pack", "last"]);
}

#[test]
fn composite_nesting_is_depth_limited() {
    let probe = Probe::ok();
    // A composite that runs itself: a recursion bomb.
    let skills = natives(&["work"]).with(
        SkillDefinition::composite("bomb", vec![StepSpec::new("again", "bomb", "again")])
            .trust(TrustLevel::User),
    );
    let executor = Executor::builder(
        Arc::new(skills),
        skills::security::gate::PolicyGate::allow_all(
            skills::security::audit::AuditTrail::in_memory(),
        ),
    )
    .native("work", probe)
    .max_depth(3)
    .retry(no_wait(1))
    .build();
    let plan = block_on(plan(vec![StepSpec::new("start", "bomb", "go")]));
    let result = block_on(executor.execute(&plan, Run::new(alice()))).unwrap();
    let start = result.step("start").unwrap();
    assert_eq!(start.state, StepState::Failed);
    assert_eq!(
        start.error.as_ref().map(|e| e.kind),
        Some(StepErrorKind::Failed)
    );
    // The innermost level hit the limit; every level above reports its sub-plan failed.
    let error = &start.error.as_ref().unwrap().message;
    assert!(error.contains("again failed"), "{error}");
}

/// A model that never answers.
struct Silent;

#[async_trait]
impl LlmClient for Silent {
    async fn complete(&self, _request: LlmRequest) -> skills::orchestrate::Result<LlmResponse> {
        futures::future::pending().await
    }
}

#[test]
fn an_instruction_skill_whose_model_never_answers_times_out() {
    let skills = InMemorySkills::new().with(
        SkillDefinition::instruction("think", "Think hard.")
            .trust(TrustLevel::User)
            .timeout(Duration::from_millis(20)),
    );
    let executor = Executor::builder(
        Arc::new(skills),
        skills::security::gate::PolicyGate::allow_all(
            skills::security::audit::AuditTrail::in_memory(),
        ),
    )
    .llm(Arc::new(Silent))
    .retry(no_wait(2))
    .build();
    let plan = block_on(plan(chain(&["t", "u"], "think")));
    let result = block_on(executor.execute(&plan, Run::new(alice()))).unwrap();
    let t = result.step("t").unwrap();
    assert_eq!(
        (t.state, t.attempts),
        (StepState::Failed, 2),
        "timeouts are retried"
    );
    assert_eq!(
        t.error.as_ref().map(|e| e.kind),
        Some(StepErrorKind::Timeout)
    );
    assert_eq!(result.step("u").unwrap().state, StepState::Skipped);
}

/// A timer on tokio, as a tokio host would plug in.
struct TokioTimer;

impl Timer for TokioTimer {
    fn sleep(&self, duration: Duration) -> BoxFuture<'static, ()> {
        tokio::time::sleep(duration).boxed()
    }
}

#[tokio::test]
async fn the_host_timer_bounds_instruction_skills_on_tokio() {
    let skills = InMemorySkills::new()
        .with(SkillDefinition::instruction("think", "Think.").trust(TrustLevel::User));
    let executor = Executor::builder(
        Arc::new(skills),
        skills::security::gate::PolicyGate::allow_all(
            skills::security::audit::AuditTrail::in_memory(),
        ),
    )
    .llm(Arc::new(Silent))
    .timer(Arc::new(TokioTimer))
    .sandbox_config(
        TrustLevel::User,
        skills::security::SandboxConfig::for_trust(TrustLevel::User)
            .with_timeout(Duration::from_millis(10)),
    )
    .retry(no_wait(1))
    .build();
    let plan = plan(vec![StepSpec::new("t", "think", "x")]).await;
    let result = executor.execute(&plan, Run::new(alice())).await.unwrap();
    assert_eq!(
        result.step("t").unwrap().error.as_ref().map(|e| e.kind),
        Some(StepErrorKind::Timeout)
    );
}

#[test]
fn instruction_skills_answer_through_the_model_with_structured_output() {
    let answer = r#"{"summary": "ACME renews in May", "artifacts": ["renewals.csv"],
        "extracted_facts": [{"subject": "ACME", "predicate": "renews_in", "object": "May"}],
        "next_step_hints": ["draft the renewal email"]}"#;
    let model = Arc::new(ScriptedLlm::new().when(&["Find renewals"], answer));
    let skills = InMemorySkills::new().with(
        SkillDefinition::instruction("crm", "Look up renewals in the CRM notes.")
            .trust(TrustLevel::User),
    );
    let executor = Executor::builder(
        Arc::new(skills),
        skills::security::gate::PolicyGate::allow_all(
            skills::security::audit::AuditTrail::in_memory(),
        ),
    )
    .llm(model.clone())
    .build();
    let plan = block_on(plan(vec![StepSpec::new("find", "crm", "Find renewals")]));
    let result =
        block_on(executor.execute(&plan, Run::new(alice()).input("notes: renewal talk"))).unwrap();
    let memory = result.step("find").unwrap().memory.clone().unwrap();
    assert_eq!(memory.summary, "ACME renews in May");
    assert_eq!(memory.artifacts, ["renewals.csv"]);
    assert_eq!(memory.extracted_facts[0].object, "May");
    assert_eq!(memory.next_step_hints, ["draft the renewal email"]);
    assert!(result.usage.total() > 0);
    // The model saw the isolated envelope and nothing else.
    let request = &model.requests()[0];
    let prompt = &request.messages[0].content;
    for tag in [
        "<task>",
        "<skill_instructions>",
        "<input_data>",
        "<output_format>",
    ] {
        assert!(prompt.contains(tag), "{tag}");
    }
    assert!(prompt.contains("notes: renewal talk") && prompt.contains("Look up renewals"));
}

#[test]
fn summaries_stay_within_the_skills_verbosity() {
    let long = "word ".repeat(3_000);
    let counter = EstimatedTokens;
    for (verbosity, max) in [
        (Verbosity::Minimal, 300),
        (Verbosity::Standard, 800),
        (Verbosity::Detailed, 1_500),
        (Verbosity::Unspecified, 500),
    ] {
        let text = long.clone();
        let probe = Probe::new(move |_, _| Ok(StepOutput::text(text.clone())));
        let skills = InMemorySkills::new().with(
            SkillDefinition::native("work")
                .trust(TrustLevel::User)
                .verbosity(verbosity),
        );
        let executor = Executor::builder(
            Arc::new(skills),
            skills::security::gate::PolicyGate::allow_all(
                skills::security::audit::AuditTrail::in_memory(),
            ),
        )
        .native("work", probe)
        .summaries(SummaryMode::Truncate)
        .build();
        let plan = block_on(plan(vec![StepSpec::new("s", "work", "x")]));
        let result = block_on(executor.execute(&plan, Run::new(alice()))).unwrap();
        let step = result.step("s").unwrap();
        let summary = &step.memory.as_ref().unwrap().summary;
        assert!(
            counter.count(summary) <= max,
            "{verbosity:?}: {}",
            counter.count(summary)
        );
        assert!(
            counter.count(summary) > max - 10,
            "{verbosity:?} uses its room"
        );
        assert!(summary.ends_with(TRUNCATION_MARKER));
        assert_eq!(
            step.output.as_deref(),
            Some(long.as_str()),
            "the full output is kept"
        );
    }

    // With a model, a long output is summarized by it (and a short one left alone).
    let model = Arc::new(ScriptedLlm::new().when(&["Summarize the output"], "The gist."));
    let text = long.clone();
    let probe = Probe::new(move |input, _| {
        Ok(StepOutput::text(if input.step_id == "long" {
            text.clone()
        } else {
            "short".into()
        }))
    });
    let skills = InMemorySkills::new().with(
        SkillDefinition::native("work")
            .trust(TrustLevel::User)
            .verbosity(Verbosity::Minimal),
    );
    let executor = Executor::builder(
        Arc::new(skills),
        skills::security::gate::PolicyGate::allow_all(
            skills::security::audit::AuditTrail::in_memory(),
        ),
    )
    .native("work", probe)
    .llm(model.clone())
    .build();
    let plan = block_on(plan(vec![
        StepSpec::new("long", "work", "x"),
        StepSpec::new("short", "work", "y"),
    ]));
    let result = block_on(executor.execute(&plan, Run::new(alice()))).unwrap();
    assert_eq!(
        result
            .step("long")
            .unwrap()
            .memory
            .as_ref()
            .unwrap()
            .summary,
        "The gist."
    );
    assert_eq!(
        result
            .step("short")
            .unwrap()
            .memory
            .as_ref()
            .unwrap()
            .summary,
        "short"
    );
    assert_eq!(model.requests().len(), 1);
}

#[test]
fn unknown_skills_and_unregistered_natives_fail_as_unavailable() {
    let executor = Executor::builder(
        Arc::new(natives(&["ghost"])),
        skills::security::gate::PolicyGate::allow_all(
            skills::security::audit::AuditTrail::in_memory(),
        ),
    )
    .retry(no_wait(3))
    .build();
    let plan = block_on(plan(vec![
        StepSpec::new("a", "missing", "x"),
        StepSpec::new("b", "ghost", "y"),
    ]));
    let result = block_on(executor.execute(&plan, Run::new(alice()))).unwrap();
    for id in ["a", "b"] {
        let step = result.step(id).unwrap();
        assert_eq!((step.state, step.attempts), (StepState::Failed, 1));
        assert_eq!(
            step.error.as_ref().map(|e| e.kind),
            Some(StepErrorKind::Unavailable)
        );
    }
}

#[test]
fn the_execute_future_is_send() {
    fn assert_send<T: Send>(_: &T) {}
    let executor = Executor::builder(
        Arc::new(InMemorySkills::new()),
        skills::security::gate::PolicyGate::allow_all(
            skills::security::audit::AuditTrail::in_memory(),
        ),
    )
    .build();
    let plan = block_on(plan(vec![StepSpec::new("a", "x", "y")]));
    let future = executor.execute(&plan, Run::new(alice()));
    assert_send(&future);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    /// On any DAG with any set of failing steps: a step runs exactly once iff all its
    /// dependencies succeeded; it then completes unless it fails itself; otherwise it is
    /// skipped. Nothing runs twice, and the concurrency limit holds.
    #[test]
    fn skips_follow_dependencies_on_random_plans(
        edges in proptest::collection::vec((0usize..12, 0usize..12), 0..30),
        failing in proptest::collection::btree_set(0usize..12, 0..4),
        limit in 1usize..5,
    ) {
        let n = 12;
        let failing_ids: BTreeSet<String> = failing.iter().map(|i| format!("s{i:02}")).collect();
        let shared = failing_ids.clone();
        let probe = Probe::new(move |input, _| {
            if shared.contains(&input.step_id) { Err(StepError::failed("no")) } else { Ok(StepOutput::text("ok")) }
        });
        let mut specs: Vec<StepSpec> = (0..n).map(|i| StepSpec::new(format!("s{i:02}"), "work", "x")).collect();
        let mut deps = vec![BTreeSet::new(); n];
        for (a, b) in edges {
            // Only forward edges: a DAG by construction.
            let (from, to) = (a.min(b), a.max(b));
            if from != to && deps[to].insert(from) {
                specs[to] = specs[to].clone().after(format!("s{from:02}"));
            }
        }
        let executor = Executor::builder(Arc::new(natives(&["work"])), skills::security::gate::PolicyGate::allow_all(skills::security::audit::AuditTrail::in_memory()))
            .native("work", probe.clone())
            .concurrency(limit)
            .retry(no_wait(1))
            .build();
        let plan = block_on(plan(specs));
        let result = block_on(executor.execute(&plan, Run::new(alice()))).unwrap();
        let mut succeeded = vec![false; n];
        for i in 0..n {
            let id = format!("s{i:02}");
            let step = result.step(&id).unwrap();
            let ready = deps[i].iter().all(|&d| succeeded[d]);
            prop_assert_eq!(probe.calls(&id), usize::from(ready));
            let expected = match (ready, failing_ids.contains(&id)) {
                (false, _) => StepState::Skipped,
                (true, true) => StepState::Failed,
                (true, false) => StepState::Complete,
            };
            prop_assert_eq!(step.state, expected);
            succeeded[i] = expected == StepState::Complete;
        }
        prop_assert!(probe.max_in_flight() <= limit);
    }
}
