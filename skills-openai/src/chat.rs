//! The Chat Completions wire format: [`ChatRequest`] in, [`ChatCompletion`] out.
//!
//! Only what the family uses is modelled: messages (system, user, assistant with tool
//! calls, tool results), tools in OpenAI's function format (as `skills_core`'s tool export
//! writes them), `tool_choice`, `response_format`, and `usage`. `stream` is always `false`.

use serde::Deserialize;
use serde_json::{Map, Value, json};
use skills_orchestrate::llm::TokenUsage;

use crate::config::{MaxTokensField, OpenAiConfig};
use crate::error::{Error, Result};

/// Who wrote a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ChatRole {
    /// The system prompt.
    System,
    /// The user.
    User,
    /// The model.
    Assistant,
    /// A tool's result.
    Tool,
}

impl ChatRole {
    fn as_str(self) -> &'static str {
        match self {
            ChatRole::System => "system",
            ChatRole::User => "user",
            ChatRole::Assistant => "assistant",
            ChatRole::Tool => "tool",
        }
    }
}

/// One tool call the model asked for.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ToolCall {
    /// The call's id (to answer with [`ChatMessage::tool_result`]).
    pub id: String,
    /// The function's name.
    pub name: String,
    /// The arguments as the model wrote them (JSON text, not yet checked).
    pub arguments: String,
}

impl ToolCall {
    /// A tool call.
    pub fn new(
        id: impl Into<String>,
        name: impl Into<String>,
        arguments: impl Into<String>,
    ) -> Self {
        ToolCall {
            id: id.into(),
            name: name.into(),
            arguments: arguments.into(),
        }
    }

    /// The arguments parsed as JSON.
    pub fn arguments_json(&self) -> Result<Value> {
        serde_json::from_str(&self.arguments)
            .map_err(|e| Error::Malformed(format!("tool call `{}` arguments: {e}", self.name)))
    }
}

/// One message.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ChatMessage {
    /// Who wrote it.
    pub role: ChatRole,
    /// Its text (absent for an assistant message that only calls tools).
    pub content: Option<String>,
    /// The tool calls of an assistant message.
    pub tool_calls: Vec<ToolCall>,
    /// The call a tool message answers.
    pub tool_call_id: Option<String>,
}

impl ChatMessage {
    fn new(role: ChatRole, content: impl Into<String>) -> Self {
        ChatMessage {
            role,
            content: Some(content.into()),
            tool_calls: Vec::new(),
            tool_call_id: None,
        }
    }

    /// A system message.
    pub fn system(content: impl Into<String>) -> Self {
        Self::new(ChatRole::System, content)
    }

    /// A user message.
    pub fn user(content: impl Into<String>) -> Self {
        Self::new(ChatRole::User, content)
    }

    /// An assistant message with text.
    pub fn assistant(content: impl Into<String>) -> Self {
        Self::new(ChatRole::Assistant, content)
    }

    /// The assistant's tool calls, to send back before their results.
    pub fn assistant_tool_calls(calls: Vec<ToolCall>) -> Self {
        ChatMessage {
            role: ChatRole::Assistant,
            content: None,
            tool_calls: calls,
            tool_call_id: None,
        }
    }

    /// A tool's result for the call `call_id`.
    pub fn tool_result(call_id: impl Into<String>, content: impl Into<String>) -> Self {
        ChatMessage {
            tool_call_id: Some(call_id.into()),
            ..Self::new(ChatRole::Tool, content)
        }
    }

    fn to_wire(&self) -> Value {
        let mut out = Map::new();
        out.insert("role".into(), json!(self.role.as_str()));
        out.insert(
            "content".into(),
            self.content.as_ref().map_or(Value::Null, |c| json!(c)),
        );
        if !self.tool_calls.is_empty() {
            let calls: Vec<Value> = self
                .tool_calls
                .iter()
                .map(|c| {
                    json!({"id": c.id, "type": "function",
                           "function": {"name": c.name, "arguments": c.arguments}})
                })
                .collect();
            out.insert("tool_calls".into(), Value::Array(calls));
        }
        if let Some(id) = &self.tool_call_id {
            out.insert("tool_call_id".into(), json!(id));
        }
        Value::Object(out)
    }
}

/// One Chat Completions request.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct ChatRequest {
    /// The conversation, system prompt first.
    pub messages: Vec<ChatMessage>,
    /// Tools in OpenAI's Chat format (`{"type":"function","function":{...}}`), for example
    /// from `skills_core::tools` exported with `ToolFormat::OpenAiChat`.
    pub tools: Vec<Value>,
    /// `tool_choice` as the wire wants it (`"auto"`, `"required"`, a named function).
    pub tool_choice: Option<Value>,
    /// The most tokens the answer may use.
    pub max_tokens: u32,
    /// `response_format` as the wire wants it, when set.
    pub response_format: Option<Value>,
}

impl ChatRequest {
    /// A request for `messages`, no tools, up to `max_tokens`.
    pub fn new(messages: Vec<ChatMessage>, max_tokens: u32) -> Self {
        ChatRequest {
            messages,
            tools: Vec::new(),
            tool_choice: None,
            max_tokens,
            response_format: None,
        }
    }

    /// Offers `tools` (OpenAI Chat format).
    #[must_use]
    pub fn tools(mut self, tools: Vec<Value>) -> Self {
        self.tools = tools;
        self
    }

    /// Sets `tool_choice`.
    #[must_use]
    pub fn tool_choice(mut self, choice: Value) -> Self {
        self.tool_choice = Some(choice);
        self
    }

    /// Sets `response_format`.
    #[must_use]
    pub fn response_format(mut self, format: Value) -> Self {
        self.response_format = Some(format);
        self
    }

    /// The request body for `config`'s model.
    pub fn to_body(&self, config: &OpenAiConfig) -> Value {
        let mut body = Map::new();
        body.insert("model".into(), json!(config.model));
        body.insert(
            "messages".into(),
            Value::Array(self.messages.iter().map(ChatMessage::to_wire).collect()),
        );
        let field = match config.max_tokens_field {
            MaxTokensField::MaxTokens => "max_tokens",
            MaxTokensField::MaxCompletionTokens => "max_completion_tokens",
        };
        body.insert(field.into(), json!(self.max_tokens));
        body.insert("stream".into(), json!(false));
        if let Some(t) = config.temperature {
            body.insert("temperature".into(), json!(t));
        }
        if !self.tools.is_empty() {
            body.insert("tools".into(), Value::Array(self.tools.clone()));
        }
        if let Some(choice) = &self.tool_choice {
            body.insert("tool_choice".into(), choice.clone());
        }
        if let Some(format) = &self.response_format {
            body.insert("response_format".into(), format.clone());
        }
        Value::Object(body)
    }
}

/// The first choice of an answer.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct ChatCompletion {
    /// The text, when there is one.
    pub content: Option<String>,
    /// The tool calls the model asked for.
    pub tool_calls: Vec<ToolCall>,
    /// Why the model stopped (`stop`, `length`, `tool_calls`), as the server said.
    pub finish_reason: Option<String>,
    /// Tokens the server counted (zero when it sent no `usage`).
    pub usage: TokenUsage,
    /// The model that answered, as the server named it.
    pub model: Option<String>,
}

#[derive(Deserialize)]
struct WireResponse {
    #[serde(default)]
    model: Option<String>,
    choices: Vec<WireChoice>,
    #[serde(default)]
    usage: Option<WireUsage>,
}

#[derive(Deserialize)]
struct WireChoice {
    message: WireMessage,
    #[serde(default)]
    finish_reason: Option<String>,
}

#[derive(Deserialize)]
struct WireMessage {
    #[serde(default)]
    content: Option<Value>,
    #[serde(default)]
    refusal: Option<String>,
    #[serde(default)]
    tool_calls: Option<Vec<WireToolCall>>,
}

#[derive(Deserialize)]
struct WireToolCall {
    #[serde(default)]
    id: Option<String>,
    function: WireFunction,
}

#[derive(Deserialize)]
struct WireFunction {
    name: String,
    #[serde(default)]
    arguments: Option<Value>,
}

#[derive(Deserialize)]
struct WireUsage {
    #[serde(default)]
    prompt_tokens: Option<u64>,
    #[serde(default)]
    completion_tokens: Option<u64>,
}

/// Reads a 200 answer's body.
pub(crate) fn parse_completion(body: &[u8]) -> Result<ChatCompletion> {
    let wire: WireResponse = serde_json::from_slice(body)
        .map_err(|e| Error::Malformed(format!("not a chat completion: {e}")))?;
    let choice = wire
        .choices
        .into_iter()
        .next()
        .ok_or_else(|| Error::Malformed("no choices".into()))?;
    if let Some(refusal) = choice.message.refusal.filter(|r| !r.is_empty()) {
        return Err(Error::Refused(crate::error::cleaned(&refusal)));
    }
    let content = match choice.message.content {
        None | Some(Value::Null) => None,
        Some(Value::String(text)) => Some(text),
        // Some servers send content parts: join the text ones.
        Some(Value::Array(parts)) => Some(
            parts
                .iter()
                .filter_map(|p| p.get("text").and_then(Value::as_str))
                .collect::<String>(),
        ),
        Some(_) => return Err(Error::Malformed("content is neither text nor parts".into())),
    };
    let tool_calls = choice
        .message
        .tool_calls
        .unwrap_or_default()
        .into_iter()
        .enumerate()
        .map(|(i, call)| ToolCall {
            id: call.id.unwrap_or_else(|| format!("call_{i}")),
            name: call.function.name,
            // OpenAI sends a JSON string; some servers send the object itself.
            arguments: match call.function.arguments {
                Some(Value::String(text)) => text,
                Some(other) => other.to_string(),
                None => "{}".into(),
            },
        })
        .collect();
    let usage = wire.usage.map_or_else(TokenUsage::default, |u| TokenUsage {
        input_tokens: u.prompt_tokens.unwrap_or(0),
        output_tokens: u.completion_tokens.unwrap_or(0),
    });
    Ok(ChatCompletion {
        content,
        tool_calls,
        finish_reason: choice.finish_reason,
        usage,
        model: wire.model,
    })
}

/// The server's error message from an error body (`{"error":{"message":..}}`, or
/// `{"error":"..."}`, or the text itself), cleaned.
pub(crate) fn error_message(body: &[u8]) -> String {
    let parsed: Option<Value> = serde_json::from_slice(body).ok();
    let message = parsed.as_ref().and_then(|v| {
        let error = v.get("error")?;
        error
            .get("message")
            .and_then(Value::as_str)
            .or_else(|| error.as_str())
            .map(str::to_owned)
    });
    crate::error::cleaned(&message.unwrap_or_else(|| String::from_utf8_lossy(body).into_owned()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_answer_with_tool_calls_and_usage_is_read() -> Result<()> {
        let body = br#"{"id":"x","object":"chat.completion","model":"m",
            "choices":[{"index":0,"finish_reason":"tool_calls","message":{"role":"assistant",
            "content":null,"tool_calls":[{"id":"call_1","type":"function",
            "function":{"name":"use_skill","arguments":"{\"name\":\"pdf\"}"}}]}}],
            "usage":{"prompt_tokens":12,"completion_tokens":5,"total_tokens":17}}"#;
        let answer = parse_completion(body)?;
        assert_eq!(answer.content, None);
        assert_eq!(answer.tool_calls[0].name, "use_skill");
        assert_eq!(answer.tool_calls[0].arguments_json()?["name"], "pdf");
        assert_eq!(answer.usage.total(), 17);
        assert_eq!(answer.finish_reason.as_deref(), Some("tool_calls"));
        Ok(())
    }

    #[test]
    fn malformed_answers_are_typed_errors() {
        for body in [
            &b"not json"[..],
            b"{}",
            br#"{"choices":[]}"#,
            br#"{"choices":[{"message":{"content":7}}]}"#,
            br#"{"choices":[{"message":{"tool_calls":[{"function":{}}]}}]}"#,
        ] {
            assert!(matches!(parse_completion(body), Err(Error::Malformed(_))));
        }
        let refused = br#"{"choices":[{"message":{"content":null,"refusal":"no"}}]}"#;
        assert_eq!(parse_completion(refused), Err(Error::Refused("no".into())));
    }

    #[test]
    fn error_messages_are_cut_and_cleaned() {
        assert_eq!(
            error_message(br#"{"error":{"message":"bad\u001b[31m"}}"#),
            "bad[31m"
        );
        assert_eq!(error_message(br#"{"error":"plain"}"#), "plain");
        assert_eq!(error_message(&[b'x'; 1000]).len(), 300);
    }
}
