//! Compiling tool input schemas within bounds.

use serde_json::Value;

#[cfg(doc)]
use super::ManifestOptions;

/// How many regular expressions a JSON value holds: `pattern` string values and the keys of
/// `patternProperties` objects, at any depth.
pub(super) fn count_patterns(value: &Value) -> usize {
    match value {
        Value::Object(map) => map
            .iter()
            .map(|(key, v)| {
                let own = match (key.as_str(), v) {
                    ("pattern", Value::String(_)) => 1,
                    ("patternProperties", Value::Object(props)) => props.len(),
                    _ => 0,
                };
                own + count_patterns(v)
            })
            .sum(),
        Value::Array(items) => items.iter().map(count_patterns).sum(),
        _ => 0,
    }
}

/// The largest compiled size of one `pattern` regular expression in a tool schema.
pub(super) const MAX_PATTERN_BYTES: usize = 256 * 1024;

/// Compiles a tool schema with bounded regular expressions.
///
/// **Threat.** A schema's `pattern` such as `((a{100}){100}){100}` compiles to an enormous
/// automaton; a manifest holding many of them would take minutes to load.
///
/// **Guarantee.** Each pattern may compile to at most [`MAX_PATTERN_BYTES`] (compilation
/// stops as soon as it would exceed that, and the schema is reported invalid), matching
/// backtracks at most a million steps, and [`ManifestOptions::max_tools`] and
/// [`ManifestOptions::max_patterns`] bound how many schemas and expressions one manifest
/// compiles. Remote `$ref`s are never fetched (no HTTP client is
/// built in).
pub(super) fn compile_schema(
    schema: &Value,
) -> Result<jsonschema::Validator, jsonschema::ValidationError<'static>> {
    jsonschema::options()
        .with_pattern_options(
            jsonschema::PatternOptions::fancy_regex()
                .size_limit(MAX_PATTERN_BYTES)
                .dfa_size_limit(MAX_PATTERN_BYTES)
                .backtrack_limit(1_000_000),
        )
        .build(schema)
}
