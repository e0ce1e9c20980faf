//! Tools from other formats: OpenAPI 3 operations (OpenAI Actions) and LangChain tool JSON.
//!
//! **Threat.** Both formats arrive from outside: a marketplace, a repository, a user. A
//! document may be huge, nest deeply, hold `$ref` cycles or references that expand
//! exponentially, or simply have the wrong shape.
//!
//! **Guarantee.** The importers never panic. The document's size is bounded before it is
//! parsed ([`ImportOptions::max_bytes`]); JSON nesting is bounded by the parser, YAML by
//! the bounded reader of [`crate::yaml`] (nesting, aliases, nodes, bytes); the number of
//! tools, the length of `$ref` chains and the size of every resolved schema are bounded;
//! `$ref` cycles and non-local references are refused. Every error says where it is, as a
//! JSON Pointer into the document.

mod langchain;
mod openapi;
mod resolve;

use serde_json::Value;

use super::error::ImportError;
use crate::yaml::{self, Fatal, Problem, YamlLimits, YamlValue};

pub use langchain::{from_langchain, from_langchain_value};
pub use openapi::{
    OpenApiImport, OpenApiOperation, ParameterLocation, from_openapi, from_openapi_value,
};

/// Bounds on one import.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct ImportOptions {
    /// The largest document read, in bytes (default 4 MiB).
    pub max_bytes: usize,
    /// The most tools (OpenAPI operations, LangChain tools) one document may define
    /// (default 256); more is an error, not a truncation.
    pub max_tools: usize,
    /// The longest chain of `$ref`s followed while resolving one schema (default 32).
    pub max_ref_depth: usize,
    /// The most schema objects one tool's resolved input schema may hold (default 10,000):
    /// bounds the expansion of schemas that reference others many times.
    pub max_schema_nodes: usize,
    /// The most schema objects all the tools of one document may hold together (default
    /// 100,000): bounds the memory a document of many operations can claim.
    pub max_document_schema_nodes: usize,
}

impl Default for ImportOptions {
    fn default() -> Self {
        ImportOptions {
            max_bytes: 4 * 1024 * 1024,
            max_tools: 256,
            max_ref_depth: 32,
            max_schema_nodes: 10_000,
            max_document_schema_nodes: 100_000,
        }
    }
}

impl ImportOptions {
    /// The defaults.
    pub fn new() -> Self {
        Self::default()
    }
}

/// Reads a document: JSON when its first non-blank character is `{` or `[`, else YAML
/// when `allow_yaml` is true.
pub(crate) fn read_document(
    bytes: &[u8],
    options: &ImportOptions,
    allow_yaml: bool,
) -> Result<Value, ImportError> {
    if bytes.len() > options.max_bytes {
        return Err(ImportError::TooLarge {
            len: bytes.len(),
            max: options.max_bytes,
        });
    }
    let text = std::str::from_utf8(bytes)
        .map_err(|e| ImportError::Syntax(format!("the document is not UTF-8: {e}")))?;
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let json = text.trim_start().starts_with(['{', '[']);
    if json || !allow_yaml {
        return serde_json::from_str(text).map_err(|e| ImportError::Syntax(e.to_string()));
    }
    let limits = YamlLimits {
        // OpenAPI documents nest deeper than frontmatter; JSON's parser allows 128.
        max_depth: 128,
        max_aliases: 256,
        max_nodes: 1_000_000,
        max_bytes: options.max_bytes,
    };
    let document = yaml::read(text, &limits).map_err(|fatal| match fatal {
        Fatal::Syntax { line, message } => ImportError::Syntax(format!("line {line}: {message}")),
        Fatal::Limit { line, message } => ImportError::Limit {
            path: String::new(),
            message: format!("line {line}: {message}"),
        },
    })?;
    if let Some(problem) = document.problems.first() {
        return Err(ImportError::Syntax(match problem {
            Problem::DuplicateKey { key, line, .. } => {
                format!("line {line}: duplicate key `{key}`")
            }
            Problem::NonScalarKey { line } => {
                format!("line {line}: a mapping key must be a scalar")
            }
        }));
    }
    let root = document
        .root
        .ok_or_else(|| ImportError::Syntax("the document is empty".into()))?;
    Ok(YamlValue::from_node(&root).to_json())
}

/// A JSON type's name, for messages.
pub(crate) fn type_name(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

pub(crate) fn invalid(path: &str, message: impl Into<String>) -> ImportError {
    ImportError::Invalid {
        path: path.to_owned(),
        message: message.into(),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn reads_json_and_yaml() {
        let o = ImportOptions::default();
        assert_eq!(
            read_document(b" {\"a\": 1}", &o, true).unwrap(),
            json!({"a": 1})
        );
        assert_eq!(
            read_document(b"a: 1\nb: [x, 2.5]\n'200': ok\n", &o, true).unwrap(),
            json!({"a": 1, "b": ["x", 2.5], "200": "ok"})
        );
        assert!(matches!(
            read_document(b"a: 1", &o, false),
            Err(ImportError::Syntax(_))
        ));
    }

    #[test]
    fn refuses_bad_documents() {
        let o = ImportOptions {
            max_bytes: 10,
            ..ImportOptions::default()
        };
        assert!(matches!(
            read_document(&[b' '; 11], &o, true),
            Err(ImportError::TooLarge { .. })
        ));
        let o = ImportOptions::default();
        assert!(matches!(
            read_document(&[0xff, 0xfe], &o, true),
            Err(ImportError::Syntax(_))
        ));
        assert!(matches!(
            read_document(b"a: 1\na: 2\n", &o, true),
            Err(ImportError::Syntax(_))
        ));
        assert!(matches!(
            read_document(b"", &o, true),
            Err(ImportError::Syntax(_))
        ));
        assert!(read_document(&b"[".repeat(1_000), &o, true).is_err());
        let bomb = "a: &a [x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]\nc: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]\nd: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c]\ne: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d]\nf: &f [*e, *e, *e, *e, *e, *e, *e, *e, *e]\ng: &g [*f, *f, *f, *f, *f, *f, *f, *f, *f]\n";
        assert!(read_document(bomb.as_bytes(), &o, true).is_err());
    }
}
