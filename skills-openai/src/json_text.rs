//! The JSON-in-text fallback: the schema goes into the prompt, and the JSON value comes out
//! of whatever the model wrapped it in (a code fence, a sentence before it).

use serde_json::Value;

/// The instruction appended to the system prompt when the server cannot enforce a schema.
pub(crate) fn instruction(schema: Option<&Value>) -> String {
    match schema {
        Some(schema) => format!(
            "Answer with exactly one JSON value and nothing else: no prose, no code fence. \
             It must satisfy this JSON Schema:\n{schema}"
        ),
        None => "Answer with exactly one JSON value and nothing else: no prose, no code fence."
            .to_owned(),
    }
}

/// The first JSON object or array in `text` that parses, as compact JSON text; `None` when
/// there is none. Tried in order: the whole text, the first fenced block, then each `{` or
/// `[` with its balanced end (strings and escapes respected), at most 64 starts.
pub(crate) fn extract(text: &str) -> Option<String> {
    let trimmed = text.trim();
    if let Ok(value) = serde_json::from_str::<Value>(trimmed)
        && (value.is_object() || value.is_array())
    {
        return Some(value.to_string());
    }
    if let Some(inside) = fenced(trimmed)
        && let Ok(value) = serde_json::from_str::<Value>(inside.trim())
    {
        return Some(value.to_string());
    }
    let bytes = trimmed.as_bytes();
    let starts = bytes
        .iter()
        .enumerate()
        .filter(|(_, b)| matches!(b, b'{' | b'['))
        .map(|(i, _)| i)
        .take(64);
    for start in starts {
        if let Some(end) = balanced_end(&bytes[start..])
            && let Some(candidate) = trimmed.get(start..start + end)
            && let Ok(value) = serde_json::from_str::<Value>(candidate)
        {
            return Some(value.to_string());
        }
    }
    None
}

/// The text inside the first ```` ``` ```` fence (an info string such as `json` skipped).
fn fenced(text: &str) -> Option<&str> {
    let open = text.find("```")?;
    let after = &text[open + 3..];
    let body_start = after.find('\n')? + 1;
    let body = &after[body_start..];
    let close = body.find("```")?;
    Some(&body[..close])
}

/// The length of the balanced `{..}` / `[..]` at the start of `bytes`.
fn balanced_end(bytes: &[u8]) -> Option<usize> {
    let mut depth = 0usize;
    let mut in_string = false;
    let mut escaped = false;
    for (i, &b) in bytes.iter().enumerate() {
        if in_string {
            match (escaped, b) {
                (true, _) => escaped = false,
                (false, b'\\') => escaped = true,
                (false, b'"') => in_string = false,
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'{' | b'[' => depth += 1,
            b'}' | b']' => {
                depth = depth.checked_sub(1)?;
                if depth == 0 {
                    return Some(i + 1);
                }
            }
            _ => {}
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_is_found_wherever_the_model_put_it() {
        assert_eq!(extract(r#" {"a": 1} "#).as_deref(), Some(r#"{"a":1}"#));
        assert_eq!(
            extract("Here you go:\n```json\n{\"a\": [1, 2]}\n```\nDone.").as_deref(),
            Some(r#"{"a":[1,2]}"#)
        );
        assert_eq!(
            extract(r#"Sure! {"text": "a } inside \" quote", "n": {"m": 2}} trailing"#).as_deref(),
            Some(r#"{"n":{"m":2},"text":"a } inside \" quote"}"#)
        );
        assert_eq!(extract("{ broken then [1,2]").as_deref(), Some("[1,2]"));
        assert_eq!(extract("no json here"), None);
        assert_eq!(extract("}}}]]"), None);
        assert_eq!(extract(&"{".repeat(10_000)), None);
    }

    #[test]
    fn the_instruction_carries_the_schema() {
        let schema = serde_json::json!({"type": "object"});
        assert!(instruction(Some(&schema)).contains(r#"{"type":"object"}"#));
        assert!(instruction(None).contains("one JSON value"));
    }
}
