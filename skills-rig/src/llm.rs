//! [`RigLlm`]: an `LlmClient` over a rig completion model.

use async_trait::async_trait;
use rig_core::DynModel;
use rig_core::completion::{CompletionRequest, Message};
use rig_core::operation::Completion;
use skills_orchestrate::llm::{
    LlmClient, LlmRequest, LlmResponse, ResponseFormat, Role, TokenUsage,
};
use skills_orchestrate::{Error, Result};

/// The orchestrator's [`LlmClient`] over any rig completion model.
///
/// The request's system prompt becomes the rig preamble, its messages the chat history (the
/// last one the prompt), `max_tokens` rig's; a JSON request with a schema sets rig's
/// `output_schema` (providers that cannot enforce it still get the orchestrator's own check).
/// The answer's text parts are joined; rig's usage becomes [`TokenUsage`] (absent counts are
/// zero). A provider error is [`Error::Llm`] with rig's description.
///
/// ```
/// use rig_core::test_utils::MockCompletionModel;
/// use skills_orchestrate::llm::{LlmClient, LlmRequest};
/// use skills_rig::RigLlm;
///
/// let model = RigLlm::new(MockCompletionModel::text("Hello from rig."));
/// let answer = futures::executor::block_on(model.complete(LlmRequest::new("Hi", 50)))?;
/// assert_eq!(answer.text, "Hello from rig.");
/// # Ok::<(), skills_orchestrate::Error>(())
/// ```
#[derive(Debug, Clone)]
pub struct RigLlm {
    model: DynModel<Completion>,
}

impl RigLlm {
    /// A client over `model` (a rig `Model` or an erased `DynModel`).
    pub fn new(model: impl Into<DynModel<Completion>>) -> Self {
        RigLlm {
            model: model.into(),
        }
    }

    /// The rig request for an orchestrator request.
    fn request(request: &LlmRequest) -> Result<CompletionRequest> {
        let mut messages: Vec<Message> = request
            .messages
            .iter()
            .map(|m| match m.role {
                Role::Assistant => Message::assistant(m.content.clone()),
                Role::User => Message::user(m.content.clone()),
            })
            .collect();
        let prompt = messages.pop().ok_or_else(|| Error::Invalid {
            what: "model request".into(),
            reason: "it has no messages".into(),
        })?;
        let mut rig = CompletionRequest::new(prompt)
            .messages(messages)
            .max_tokens(u64::from(request.max_tokens));
        if let Some(system) = &request.system {
            rig = rig.preamble(system.clone());
        }
        if let ResponseFormat::Json {
            schema: Some(schema),
        } = &request.response_format
            && let Ok(schema) = schemars::Schema::try_from(schema.clone())
        {
            rig = rig.output_schema(schema);
        }
        Ok(rig)
    }
}

#[async_trait]
impl LlmClient for RigLlm {
    async fn complete(&self, request: LlmRequest) -> Result<LlmResponse> {
        let rig = Self::request(&request)?;
        let response = self
            .model
            .call(rig)
            .await
            .map_err(|e| Error::Llm(format!("rig model: {e}")))?;
        let usage = TokenUsage {
            input_tokens: response.usage.input_tokens.unwrap_or(0),
            output_tokens: response.usage.output_tokens.unwrap_or(0),
        };
        Ok(LlmResponse::new(response.text(), usage))
    }
}
