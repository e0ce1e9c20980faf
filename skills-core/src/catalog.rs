//! Rendering skills for a model's context.

use std::path::PathBuf;

use crate::skill::{SKILL_JSON, Skill};
use crate::status::SkillStatus;

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
/// A `deprecated` or `stub` skill (see [`Skill::status`]) gets a `<status>` element after
/// its description holding [`SkillStatus::note`](crate::SkillStatus::note), so the model
/// knows not to reach for it unasked (or not to take a stub for the real thing); other
/// skills render exactly as the reference does. A skill the model may not pick by itself
/// ([`Skill::model_invocable`]: Claude Code's `disable-model-invocation`, Codex's
/// `allow_implicit_invocation: false`) is left out.
///
/// ```
/// assert_eq!(
///     skills_core::catalog::available_skills_xml([]),
///     "<available_skills>\n</available_skills>"
/// );
/// ```
pub fn available_skills_xml<'a>(skills: impl IntoIterator<Item = &'a Skill>) -> String {
    let mut lines = vec!["<available_skills>".to_owned()];
    for skill in skills.into_iter().filter(|s| s.model_invocable()) {
        lines.extend([
            "<skill>".to_owned(),
            "<name>".to_owned(),
            escape_xml(skill.name()),
            "</name>".to_owned(),
            "<description>".to_owned(),
            escape_xml(skill.description().trim()),
            "</description>".to_owned(),
        ]);
        if let Some(note) = SkillStatus::note_of(skill.status()) {
            lines.extend([
                "<status>".to_owned(),
                escape_xml(note),
                "</status>".to_owned(),
            ]);
        }
        lines.extend([
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

    fn skill_with(dir: &std::path::Path, name: &str, metadata: &str) -> Skill {
        let path = dir.join(name);
        std::fs::create_dir(&path).unwrap();
        std::fs::write(
            path.join("SKILL.md"),
            format!("---\nname: {name}\ndescription: Does {name}.\n{metadata}---\nBody.\n"),
        )
        .unwrap();
        Skill::load(&path, &crate::LoadOptions::default()).unwrap()
    }

    #[test]
    fn deprecated_and_stub_skills_are_marked_and_others_are_not() {
        let dir = tempfile::tempdir().unwrap();
        let old = skill_with(dir.path(), "old", "metadata:\n  status: deprecated\n");
        let stub = skill_with(dir.path(), "stub", "metadata:\n  status: stub\n");
        let live = skill_with(dir.path(), "live", "metadata:\n  status: active\n");
        let plain = skill_with(dir.path(), "plain", "");
        assert_eq!(old.status(), Some(SkillStatus::Deprecated));
        assert_eq!(plain.status(), None);
        let xml = available_skills_xml([&old, &stub, &live, &plain]);
        let entries: Vec<&str> = xml.split("<skill>").skip(1).collect();
        assert_eq!(entries.len(), 4);
        assert!(entries[0].contains(
            "</description>\n<status>\ndeprecated: being phased out, use only when asked for by name\n</status>\n<location>"
        ));
        assert!(entries[1].contains("<status>\nstub: a placeholder"));
        assert!(!entries[2].contains("<status>"));
        assert!(!entries[3].contains("<status>"));
    }
}
