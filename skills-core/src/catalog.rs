//! Rendering skills for a model's context.

use std::path::PathBuf;

use crate::skill::{SKILL_JSON, Skill};

/// Escapes `& < > " '` as `&amp; &lt; &gt; &quot; &#x27;` (what the reference validator's
/// `html.escape` produces).
pub fn escape_xml(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#x27;"),
            c => out.push(c),
        }
    }
    out
}

/// The file a catalog entry points the model at: SKILL.md (symlinks resolved, absolute), or
/// skill.json for a skill without one.
pub fn skill_location(skill: &Skill) -> PathBuf {
    let path = skill
        .skill_md_path()
        .map_or_else(|| skill.dir().join(SKILL_JSON), PathBuf::from);
    std::fs::canonicalize(&path)
        .or_else(|_| std::path::absolute(&path))
        .unwrap_or(path)
}

/// The `<available_skills>` block of the Agent Skills reference implementation: one
/// `<skill>` with `<name>`, `<description>` (trimmed) and `<location>` (the absolute path of
/// SKILL.md, symlinks resolved) per skill, every value on its own line and XML-escaped. The
/// reference leaves `<location>` unescaped, which lets a directory name close the element;
/// here it is escaped like the rest. No skills gives the two tags alone.
///
/// ```
/// assert_eq!(
///     skills_core::catalog::available_skills_xml([]),
///     "<available_skills>\n</available_skills>"
/// );
/// ```
pub fn available_skills_xml<'a>(skills: impl IntoIterator<Item = &'a Skill>) -> String {
    let mut lines = vec!["<available_skills>".to_owned()];
    for skill in skills {
        lines.extend([
            "<skill>".to_owned(),
            "<name>".to_owned(),
            escape_xml(skill.name()),
            "</name>".to_owned(),
            "<description>".to_owned(),
            escape_xml(skill.description().trim()),
            "</description>".to_owned(),
            "<location>".to_owned(),
            escape_xml(&skill_location(skill).to_string_lossy()),
            "</location>".to_owned(),
            "</skill>".to_owned(),
        ]);
    }
    lines.push("</available_skills>".to_owned());
    lines.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_the_five_characters() {
        assert_eq!(
            escape_xml(r#"<foo> & "bar" 'baz'"#),
            "&lt;foo&gt; &amp; &quot;bar&quot; &#x27;baz&#x27;"
        );
    }
}
