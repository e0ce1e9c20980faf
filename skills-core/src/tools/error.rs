//! The errors of the tools module: building and exporting a tool, calling one, importing one.

use super::validate::Violations;

/// Why a tool could not be built or exported.
///
/// Every variant that concerns a schema carries `path`, a JSON Pointer into that schema
/// (`""` is the schema itself), so a caller can show exactly what to change.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ToolError {
    /// The name does not match `^[A-Za-z0-9_-]{1,64}$`.
    #[error("tool name `{name}` must be 1 to 64 characters from A-Z, a-z, 0-9, `_` and `-`")]
    InvalidName {
        /// The name as given (or as joined with its skill's name).
        name: String,
    },
    /// The skill's name and the tool's name joined as `skill__tool` exceed 64 characters.
    #[error("`{name}` ({len} characters) is longer than 64 characters")]
    NameTooLong {
        /// The joined name.
        name: String,
        /// Its length in characters.
        len: usize,
    },
    /// The schema is unusable: not an object, not `"type": "object"` at the root, not valid
    /// JSON Schema, too large, or it cannot be compiled.
    #[error("tool `{tool}`: invalid {which} schema at `{path}`: {message}")]
    InvalidSchema {
        /// The tool's name.
        tool: String,
        /// `input` or `output`.
        which: &'static str,
        /// Where in the schema.
        path: String,
        /// What is wrong.
        message: String,
    },
    /// The input schema cannot be turned into an OpenAI strict-mode schema.
    #[error("tool `{tool}`: schema cannot be made strict at `{path}`: {reason}")]
    NotStrict {
        /// The tool's name.
        tool: String,
        /// Where in the schema.
        path: String,
        /// Why.
        reason: String,
    },
    /// The schema uses something the export target refuses and that cannot be stripped
    /// without changing what the tool accepts.
    #[error("tool `{tool}`: the {target} format does not accept the schema at `{path}`: {reason}")]
    Unsupported {
        /// The tool's name.
        tool: String,
        /// The export format.
        target: &'static str,
        /// Where in the schema.
        path: String,
        /// Why.
        reason: String,
    },
    /// Two tools of one export or one registry share a name.
    #[error("two tools are named `{name}`")]
    DuplicateName {
        /// The name.
        name: String,
    },
    /// A format name that is not one of `mcp`, `openai-chat`, `openai-responses`, `anthropic`.
    #[error("unknown tool format `{0}`: expected mcp, openai-chat, openai-responses or anthropic")]
    UnknownFormat(String),
}

/// Why a tool call failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CallError {
    /// No tool of that name is registered.
    #[error("no tool named `{0}`")]
    UnknownTool(String),
    /// The input does not match the tool's input schema; the handler was not called.
    #[error("invalid input for `{tool}`: {violations}")]
    InvalidInput {
        /// The tool's name.
        tool: String,
        /// Every violation found.
        violations: Violations,
    },
    /// The handler's output does not match the tool's output schema.
    #[error("invalid output from `{tool}`: {violations}")]
    InvalidOutput {
        /// The tool's name.
        tool: String,
        /// Every violation found.
        violations: Violations,
    },
    /// The handler failed.
    #[error("{0}")]
    Failed(String),
    /// The handler failed with an error of its own.
    #[error(transparent)]
    Other(Box<dyn std::error::Error + Send + Sync>),
}

impl CallError {
    /// A handler failure with a message.
    pub fn failed(message: impl Into<String>) -> Self {
        CallError::Failed(message.into())
    }
}

/// Why an OpenAPI or LangChain document could not be imported.
///
/// `path` is a JSON Pointer into the document as read (YAML documents are read into the
/// same tree as JSON), e.g. `/paths/~1pets~1{id}/get/parameters/0`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ImportError {
    /// The document is larger than the configured bound.
    #[error("the document is {len} bytes; at most {max} are read")]
    TooLarge {
        /// Its size in bytes.
        len: usize,
        /// The bound.
        max: usize,
    },
    /// The bytes are not JSON (or YAML) at all.
    #[error("cannot parse the document: {0}")]
    Syntax(String),
    /// A value has the wrong shape.
    #[error("at `{path}`: {message}")]
    Invalid {
        /// Where.
        path: String,
        /// What is wrong.
        message: String,
    },
    /// A `$ref` that is not local (`#/...`), or that names nothing in the document.
    #[error("at `{path}`: cannot resolve `$ref` `{reference}`: {message}")]
    Ref {
        /// Where the `$ref` is.
        path: String,
        /// The reference.
        reference: String,
        /// Why.
        message: String,
    },
    /// A `$ref` that refers, directly or not, to a schema that contains it.
    #[error("at `{path}`: `$ref` `{reference}` is part of a cycle")]
    RefCycle {
        /// Where the `$ref` is.
        path: String,
        /// The reference.
        reference: String,
    },
    /// A bound (operations, nesting, resolved size) was exceeded.
    #[error("at `{path}`: {message}")]
    Limit {
        /// Where.
        path: String,
        /// Which bound.
        message: String,
    },
    /// The tool built from the value at `path` is not a valid tool.
    #[error("at `{path}`: {source}")]
    Tool {
        /// Where the tool's definition is.
        path: String,
        /// Why it is not valid.
        #[source]
        source: ToolError,
    },
}

impl ImportError {
    /// The JSON Pointer the error is about, when it has one.
    pub fn path(&self) -> Option<&str> {
        match self {
            ImportError::Invalid { path, .. }
            | ImportError::Ref { path, .. }
            | ImportError::RefCycle { path, .. }
            | ImportError::Limit { path, .. }
            | ImportError::Tool { path, .. } => Some(path),
            ImportError::TooLarge { .. } | ImportError::Syntax(_) => None,
        }
    }
}

/// Escapes one JSON Pointer reference token (RFC 6901).
pub(crate) fn escape_token(token: &str) -> String {
    token.replace('~', "~0").replace('/', "~1")
}

/// `base` with one more reference token.
pub(crate) fn join(base: &str, token: &str) -> String {
    format!("{base}/{}", escape_token(token))
}
