//! Tool names as model APIs take them: `^[A-Za-z0-9_-]{1,64}$`.
//!
//! OpenAI (function names), Anthropic (tool names) and MCP all accept this set; MCP allows a
//! little more (`.` and up to 128 characters), so a name that passes here passes everywhere.

use super::error::ToolError;

/// The longest tool name, in characters.
pub const MAX_TOOL_NAME_LEN: usize = 64;

/// The separator between a skill's name and its tool's name in an exported name.
pub const SKILL_TOOL_SEPARATOR: &str = "__";

fn allowed(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_' || c == '-'
}

/// True when `name` matches `^[A-Za-z0-9_-]{1,64}$`.
///
/// ```
/// use skills_core::tools::is_valid_tool_name;
///
/// assert!(is_valid_tool_name("fetch_page"));
/// assert!(!is_valid_tool_name("fetch.page"));
/// assert!(!is_valid_tool_name(&"a".repeat(65)));
/// ```
pub fn is_valid_tool_name(name: &str) -> bool {
    !name.is_empty() && name.len() <= MAX_TOOL_NAME_LEN && name.chars().all(allowed)
}

/// Checks a name; the error names it.
pub(crate) fn check(name: &str) -> Result<(), ToolError> {
    if is_valid_tool_name(name) {
        Ok(())
    } else {
        Err(ToolError::InvalidName {
            name: name.to_owned(),
        })
    }
}

/// A skill's name as it appears in front of `__`: every character outside `A-Za-z0-9_-`
/// becomes `_` (so `pdf-tools` stays `pdf-tools` and `pdf.tools` becomes `pdf_tools`).
///
/// The mapping is one character to one character, so it never changes a name's length and
/// two skills whose names differ only in such characters map to the same prefix.
pub fn skill_prefix(skill: &str) -> String {
    skill
        .chars()
        .map(|c| if allowed(c) { c } else { '_' })
        .collect()
}

/// `skill__tool`, with the skill's name mapped by [`skill_prefix`].
///
/// # Errors
///
/// [`ToolError::InvalidName`] when `tool` is not a valid name or `skill` is empty;
/// [`ToolError::NameTooLong`] when the joined name exceeds 64 characters.
///
/// ```
/// use skills_core::tools::join_skill_tool;
///
/// assert_eq!(join_skill_tool("web-research", "search").unwrap(), "web-research__search");
/// assert_eq!(join_skill_tool("web research", "search").unwrap(), "web_research__search");
/// assert!(join_skill_tool(&"s".repeat(60), "search").is_err());
/// ```
pub fn join_skill_tool(skill: &str, tool: &str) -> Result<String, ToolError> {
    check(tool)?;
    if skill.is_empty() {
        return Err(ToolError::InvalidName {
            name: format!("{SKILL_TOOL_SEPARATOR}{tool}"),
        });
    }
    let joined = format!("{}{SKILL_TOOL_SEPARATOR}{tool}", skill_prefix(skill));
    let len = joined.chars().count();
    if len > MAX_TOOL_NAME_LEN {
        return Err(ToolError::NameTooLong { name: joined, len });
    }
    Ok(joined)
}

/// A tool name made from arbitrary text (an OpenAPI `operationId`, a method and path):
/// characters outside the allowed set become `_`, runs of `_` collapse, `_` is trimmed from
/// both ends, and the result is cut to 64 characters. `None` when nothing is left.
pub(crate) fn sanitize(text: &str) -> Option<String> {
    let mut out = String::new();
    for c in text.chars() {
        let c = if allowed(c) { c } else { '_' };
        if c == '_' && (out.is_empty() || out.ends_with('_')) {
            continue;
        }
        out.push(c);
    }
    let out: String = out
        .trim_end_matches('_')
        .chars()
        .take(MAX_TOOL_NAME_LEN)
        .collect();
    let out = out.trim_end_matches('_').to_owned();
    (!out.is_empty()).then_some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_name_rule() {
        for good in ["a", "A-b_9", &"x".repeat(64)] {
            assert!(is_valid_tool_name(good), "{good}");
        }
        for bad in ["", "a b", "a.b", "é", &"x".repeat(65), "a/b"] {
            assert!(!is_valid_tool_name(bad), "{bad}");
        }
    }

    #[test]
    fn joins_skill_and_tool() {
        assert_eq!(join_skill_tool("a", "b").unwrap(), "a__b");
        assert_eq!(join_skill_tool("a.b c", "t").unwrap(), "a_b_c__t");
        assert_eq!(join_skill_tool("données", "t").unwrap(), "donn_es__t");
        let exact = "s".repeat(61);
        assert_eq!(join_skill_tool(&exact, "t").unwrap().len(), 64);
        let over = "s".repeat(62);
        assert!(matches!(
            join_skill_tool(&over, "t"),
            Err(ToolError::NameTooLong { len: 65, .. })
        ));
        assert!(matches!(
            join_skill_tool("s", "bad name"),
            Err(ToolError::InvalidName { .. })
        ));
        assert!(join_skill_tool("", "t").is_err());
    }

    #[test]
    fn sanitizes_free_text() {
        assert_eq!(
            sanitize("get /pets/{petId}").as_deref(),
            Some("get_pets_petId")
        );
        assert_eq!(sanitize("listPets").as_deref(), Some("listPets"));
        assert_eq!(sanitize("__a..b__").as_deref(), Some("a_b"));
        assert_eq!(sanitize("/// {}"), None);
        assert_eq!(sanitize(&"a".repeat(100)).map(|s| s.len()), Some(64));
        assert_eq!(
            sanitize(&format!("{}_b", "a".repeat(63))).as_deref(),
            Some("a".repeat(63).as_str())
        );
    }
}
