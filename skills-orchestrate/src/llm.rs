//! Model access: the [`LlmClient`] trait hosts implement, and [`ScriptedLlm`], a test double
//! keyed by prompt content.
//!
//! The orchestrator asks a model for three things: which skills a task needs (JSON), the
//! output of an instruction skill (text within the step's budget), and summaries. Hosts plug
//! in their provider through [`LlmClient`]; nothing here talks to a network.

use std::collections::VecDeque;
use std::sync::Mutex;

use async_trait::async_trait;
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

pub use skills_catalog::prompt::tokens::{EstimatedTokens, TokenCounter};

/// Who wrote a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// The user (or the orchestrator speaking for the user).
    User,
    /// The model.
    Assistant,
}

/// One message of a conversation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Message {
    /// Who wrote it.
    pub role: Role,
    /// What it says.
    pub content: String,
}

impl Message {
    /// A user message.
    pub fn user(content: impl Into<String>) -> Self {
        Message {
            role: Role::User,
            content: content.into(),
        }
    }

    /// An assistant message.
    pub fn assistant(content: impl Into<String>) -> Self {
        Message {
            role: Role::Assistant,
            content: content.into(),
        }
    }
}

/// The form the answer must take.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
#[non_exhaustive]
pub enum ResponseFormat {
    /// Free text.
    #[default]
    Text,
    /// One JSON value; `schema` (a JSON Schema) when the provider can enforce it. The caller
    /// still validates: providers differ in how strictly they honour schemas.
    Json {
        /// The JSON Schema the answer should satisfy.
        schema: Option<serde_json::Value>,
    },
}

/// One call to a model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct LlmRequest {
    /// The system prompt, when there is one.
    pub system: Option<String>,
    /// The conversation, oldest first.
    pub messages: Vec<Message>,
    /// The most tokens the answer may use.
    pub max_tokens: u32,
    /// Text or JSON.
    pub response_format: ResponseFormat,
}

impl LlmRequest {
    /// A request with one user message, no system prompt, free text, up to `max_tokens`.
    pub fn new(user: impl Into<String>, max_tokens: u32) -> Self {
        LlmRequest {
            system: None,
            messages: vec![Message::user(user)],
            max_tokens,
            response_format: ResponseFormat::Text,
        }
    }

    /// Sets the system prompt.
    pub fn system(mut self, system: impl Into<String>) -> Self {
        self.system = Some(system.into());
        self
    }

    /// Appends a message.
    pub fn message(mut self, message: Message) -> Self {
        self.messages.push(message);
        self
    }

    /// Asks for one JSON value, satisfying `schema` when given.
    pub fn json(mut self, schema: Option<serde_json::Value>) -> Self {
        self.response_format = ResponseFormat::Json { schema };
        self
    }

    /// Every text of the request (system prompt, then messages), for matching and counting.
    pub fn texts(&self) -> impl Iterator<Item = &str> {
        self.system
            .as_deref()
            .into_iter()
            .chain(self.messages.iter().map(|m| m.content.as_str()))
    }
}

/// Tokens a call used, as the provider reports them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct TokenUsage {
    /// Tokens of the prompt.
    pub input_tokens: u64,
    /// Tokens of the answer.
    pub output_tokens: u64,
}

impl TokenUsage {
    /// Input plus output.
    pub fn total(&self) -> u64 {
        self.input_tokens.saturating_add(self.output_tokens)
    }

    /// Adds `other` to this usage.
    pub fn add(&mut self, other: TokenUsage) {
        self.input_tokens = self.input_tokens.saturating_add(other.input_tokens);
        self.output_tokens = self.output_tokens.saturating_add(other.output_tokens);
    }
}

/// A model's answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct LlmResponse {
    /// The text (for a JSON request, the JSON as text).
    pub text: String,
    /// Tokens used.
    pub usage: TokenUsage,
}

impl LlmResponse {
    /// An answer with the given text and usage.
    pub fn new(text: impl Into<String>, usage: TokenUsage) -> Self {
        LlmResponse {
            text: text.into(),
            usage,
        }
    }
}

/// A model the orchestrator can call. Hosts implement it over their provider's SDK.
///
/// Errors are the provider's: return [`Error::Llm`] with its description. Implementations
/// must be safe to call concurrently: parallel plan steps call one client at once.
#[async_trait]
pub trait LlmClient: Send + Sync {
    /// Sends one request and returns the answer.
    async fn complete(&self, request: LlmRequest) -> Result<LlmResponse>;
}

/// One rule of a [`ScriptedLlm`]: when every needle appears in the request, answer with the
/// next queued reply (the last one repeats once the queue is down to one).
#[derive(Debug)]
struct Rule {
    needles: Vec<String>,
    replies: VecDeque<Result<String, String>>,
}

/// A test double for [`LlmClient`]: answers are keyed by what the prompt contains.
///
/// Rules are tried in the order they were added; the first whose needles all occur in the
/// request's texts answers. A rule may hold a sequence of replies (for example a malformed
/// answer and then a valid one, to exercise a retry); its last reply repeats. A request no
/// rule matches gets the fallback, or an [`Error::Llm`] naming the start of the prompt.
/// Every request is recorded, so tests can assert what the model was shown.
///
/// ```
/// use skills_orchestrate::llm::{LlmClient, LlmRequest, ScriptedLlm};
///
/// # futures::executor::block_on(async {
/// let model = ScriptedLlm::new().when(&["weather"], "It is sunny.");
/// let answer = model.complete(LlmRequest::new("What is the weather?", 100)).await?;
/// assert_eq!(answer.text, "It is sunny.");
/// assert_eq!(model.requests().len(), 1);
/// # Ok::<(), skills_orchestrate::Error>(())
/// # }).unwrap();
/// ```
#[derive(Debug, Default)]
pub struct ScriptedLlm {
    rules: Mutex<Vec<Rule>>,
    fallback: Option<String>,
    seen: Mutex<Vec<LlmRequest>>,
}

impl ScriptedLlm {
    /// A double with no rules and no fallback.
    pub fn new() -> Self {
        Self::default()
    }

    /// Answers `reply` to requests containing every one of `needles`.
    pub fn when(self, needles: &[&str], reply: impl Into<String>) -> Self {
        self.when_sequence(needles, vec![Ok(reply.into())])
    }

    /// Fails requests containing every one of `needles` with [`Error::Llm`]`(message)`.
    pub fn failing_when(self, needles: &[&str], message: impl Into<String>) -> Self {
        self.when_sequence(needles, vec![Err(message.into())])
    }

    /// Answers requests containing every one of `needles` with `replies` in turn (`Err` fails
    /// the call); the last reply repeats.
    pub fn when_sequence(self, needles: &[&str], replies: Vec<Result<String, String>>) -> Self {
        if let Ok(mut rules) = self.rules.lock() {
            rules.push(Rule {
                needles: needles.iter().map(|n| (*n).to_owned()).collect(),
                replies: replies.into(),
            });
        }
        self
    }

    /// Answers `reply` when no rule matches.
    pub fn fallback(mut self, reply: impl Into<String>) -> Self {
        self.fallback = Some(reply.into());
        self
    }

    /// Every request received so far, in order.
    pub fn requests(&self) -> Vec<LlmRequest> {
        self.seen
            .lock()
            .map(|seen| seen.clone())
            .unwrap_or_default()
    }

    fn reply_for(&self, request: &LlmRequest) -> Option<Result<String, String>> {
        let mut rules = self.rules.lock().ok()?;
        let rule = rules.iter_mut().find(|rule| {
            rule.needles
                .iter()
                .all(|needle| request.texts().any(|text| text.contains(needle)))
        })?;
        if rule.replies.len() > 1 {
            rule.replies.pop_front()
        } else {
            rule.replies.front().cloned()
        }
    }
}

#[async_trait]
impl LlmClient for ScriptedLlm {
    async fn complete(&self, request: LlmRequest) -> Result<LlmResponse> {
        if let Ok(mut seen) = self.seen.lock() {
            seen.push(request.clone());
        }
        let counter = EstimatedTokens;
        let input: usize = request.texts().map(|text| counter.count(text)).sum();
        let text = match self.reply_for(&request) {
            Some(Ok(text)) => text,
            Some(Err(message)) => return Err(Error::Llm(message)),
            None => match &self.fallback {
                Some(text) => text.clone(),
                None => {
                    let start: String = request
                        .texts()
                        .last()
                        .unwrap_or_default()
                        .chars()
                        .take(80)
                        .collect();
                    return Err(Error::Llm(format!("no scripted reply for: {start}")));
                }
            },
        };
        let usage = TokenUsage {
            input_tokens: input as u64,
            output_tokens: counter.count(&text) as u64,
        };
        Ok(LlmResponse { text, usage })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures::executor::block_on;

    #[test]
    fn the_first_matching_rule_answers_and_sequences_advance() {
        let model = ScriptedLlm::new()
            .when_sequence(&["plan"], vec![Ok("not json".into()), Ok("{}".into())])
            .when(&["plan", "other"], "never reached");
        let ask = |text: &str| block_on(model.complete(LlmRequest::new(text, 10)));
        assert_eq!(
            ask("plan other").map(|r| r.text).ok(),
            Some("not json".into())
        );
        assert_eq!(ask("plan").map(|r| r.text).ok(), Some("{}".into()));
        assert_eq!(ask("plan").map(|r| r.text).ok(), Some("{}".into()));
        assert!(matches!(ask("unrelated"), Err(Error::Llm(_))));
        assert_eq!(model.requests().len(), 4);
    }

    #[test]
    fn the_system_prompt_counts_for_matching_and_failures_are_errors() {
        let model = ScriptedLlm::new().failing_when(&["secret"], "quota");
        let request = LlmRequest::new("hello", 10).system("secret rules");
        assert!(matches!(block_on(model.complete(request)), Err(Error::Llm(m)) if m == "quota"));
        let model = ScriptedLlm::new().fallback("ok");
        let answer = block_on(model.complete(LlmRequest::new("two words", 10))).ok();
        assert_eq!(
            answer.map(|a| (a.text, a.usage.input_tokens > 0)),
            Some(("ok".into(), true))
        );
    }
}
