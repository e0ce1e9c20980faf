//! A rig agent loop with skills, offline: rig's scripted model asks for `use_skill`, the
//! tool runs through the policy gate, the model answers with the skill's instructions in hand.
//!
//! Run: `cargo run --example rig_agent` from the repository root (a launcher that runs this
//! example in skills-rig's own workspace), or `cargo run --manifest-path skills-rig/Cargo.toml
//! --example rig_agent`.
//!
//! To use a real model, build any rig completion model instead of `MockCompletionModel`
//! (rig-core's provider modules with a transport, for example an OpenAI-compatible server at
//! `https://api.example.com/v1`, with a key from the environment) and pass it where `model`
//! is erased below; nothing else changes. The gate here allows everything
//! (`PolicyGate::allow_all`, still audited): a host builds its own from its permissions.

use std::sync::Arc;

use rig_core::completion::{AssistantContent, AssistantMessage, CompletionRequest, Message};
use rig_core::test_utils::{MockCompletionModel, MockTurn};
use serde_json::{Value, json};
use skills_catalog::Resolver;
use skills_catalog::prompt::tokens::Budget;
use skills_core::{Discovery, LoadOptions};
use skills_rig::{SkillTools, preamble};
use skills_security::audit::AuditTrail;
use skills_security::{PolicyGate, Principal};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    for line in futures::executor::block_on(run())? {
        println!("{line}");
    }
    println!(
        "\nThis ran on rig's scripted model. For a real one, build any rig completion model \
         (a provider from rig-core with a transport, e.g. an OpenAI-compatible server at \
         https://api.example.com/v1 with a key from the environment), erase it, and put it \
         where `model` is made in examples/rig_agent.rs; RigLlm::new(model) runs the \
         orchestrator on it too."
    );
    Ok(())
}

/// The agent loop; one line per turn.
async fn run() -> Result<Vec<String>, Box<dyn std::error::Error>> {
    let mut transcript = Vec::new();
    // The repository's example skills, whether built in skills-rig or in the facade.
    let manifest = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let root = [
        manifest.join("examples/skills"),
        manifest.join("../examples/skills"),
    ]
    .into_iter()
    .find(|p| p.join("pdf-tools").is_dir())
    .ok_or("the example skills are missing")?;
    let report = Discovery::new(LoadOptions::default()).root(root).run();
    let skills: Vec<_> = report.skills().cloned().collect();
    let resolution = Arc::new(Resolver::new().resolve_repo(&skills));

    let block = preamble(&resolution.skills, Budget::Chars(4_000));
    let tools = SkillTools::new(
        resolution,
        Arc::new(PolicyGate::allow_all(AuditTrail::in_memory())),
        Principal::new("acme", "alice"),
        "/skills",
    )
    .tools();

    // The fake model: first a tool call, then an answer.
    let model = MockCompletionModel::from_turns([
        MockTurn::tool_call("call_1", "use_skill", json!({"skill_name": "pdf-tools"})),
        MockTurn::text("I loaded pdf-tools and will extract the tables with its script."),
    ])
    .erase();

    let task = "Extract the tables from report.pdf";
    let mut history = vec![Message::user(task)];
    for turn in 1..=4 {
        let prompt = history.pop().ok_or("empty history")?;
        let request = CompletionRequest::new(prompt)
            .messages(history.clone())
            .preamble(block.text.clone())
            .tools(tools.iter().map(|t| t.definition()).collect());
        let request_prompt = request.chat_history.last().cloned();
        history.extend(request_prompt);
        let response = model.call(request).await?;
        let calls: Vec<_> = response
            .choice
            .iter()
            .filter_map(|c| match c {
                AssistantContent::ToolCall(call) => Some(call.clone()),
                _ => None,
            })
            .collect();
        if calls.is_empty() {
            transcript.push(format!("turn {turn}: {}", response.text()));
            break;
        }
        history.push(Message::Assistant(AssistantMessage::new(
            response.choice.clone(),
        )));
        for call in calls {
            let name = call.function.name.clone();
            let tool = tools
                .iter()
                .find(|t| *t.name() == name)
                .ok_or("the model called an unknown tool")?;
            let output = tool
                .execute(Value::Object(call.function.arguments.clone()))
                .await
                .map(|o| o.render())
                .unwrap_or_else(|e| format!("refused: {}", e.message()));
            let first = output.lines().next().unwrap_or_default();
            transcript.push(format!(
                "turn {turn}: {name}({}) -> {first} ...",
                Value::Object(call.function.arguments)
            ));
            history.push(Message::tool_result(call.id, name, output));
        }
    }
    Ok(transcript)
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_agent_calls_use_skill_through_the_gate_then_answers() {
        let transcript = futures::executor::block_on(super::run()).map_err(|e| e.to_string());
        assert_eq!(
            transcript,
            Ok(vec![
                r#"turn 1: use_skill({"skill_name":"pdf-tools"}) -> Skill: pdf-tools ..."#
                    .to_owned(),
                "turn 2: I loaded pdf-tools and will extract the tables with its script."
                    .to_owned(),
            ])
        );
    }
}
