//! Turning a pattern into a draft composite skill: a SKILL.md and the plan it runs.
//!
//! **Threat.** A draft's text is built from skill ids and task types that the history
//! recorded; task types in particular may come from classifying user requests. Once a
//! person converts the draft, its SKILL.md becomes instructions a model reads, so a value
//! carrying a newline, a `---` fence, a Markdown heading, backticks, terminal escapes or
//! invisible tag characters could smuggle frontmatter keys or instructions into it.
//!
//! **Guarantee.** Every recorded value reaches the SKILL.md only through [`inline`]: one
//! line, no control, bidi or tag character (made visible by the sandbox's `neutralize`), no
//! backtick, at most a bounded number of characters; the frontmatter is written by
//! [`Frontmatter::to_yaml`], which quotes what needs quoting; the name uses only `a-z`, `0-9`
//! and single hyphens. The result is checked with skills-core's parser under
//! [`Profile::Spec`] before it is returned, so a draft that would not load is an error, never
//! a file. The guarantee is about structure, not meaning: the words of a hostile value stay
//! readable on their line, so the reviewer who must validate a pattern before it is converted
//! sees them. The plan keeps the real skill ids: the executor resolves them against the
//! agent's skills, which is where a bogus id is refused.

use skills_core::{Frontmatter, MAX_NAME_CHARS, ParseOptions, Profile, SkillMd, has_errors};
use skills_security::sandbox::neutralize;
use skills_store_traits::learning::{LearningPattern, PatternKind};

use crate::error::{Error, Result};
use crate::plan::StepSpec;

/// The most characters of one skill id or task type shown in a draft's text.
pub const MAX_SHOWN_CHARS: usize = 64;
/// The most skills (or task types) listed by name in a description; more are counted.
const MAX_LISTED: usize = 8;
/// The most attempts a drafted retry step suggests.
const SUGGESTED_ATTEMPTS: u32 = 3;

/// A draft skill for a pattern: what a reviewer reads and what the executor would run.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct DraftSkill {
    /// The skill name (kebab-case, at most 64 characters, derived from the skills).
    pub name: String,
    /// The SKILL.md as a document.
    pub skill_md: SkillMd,
    /// The SKILL.md as text; parses under [`Profile::Spec`] without errors.
    pub markdown: String,
    /// The plan: a chain for a sequence, independent steps for a composite, one step for a
    /// retry. Step ids are `step-1`, `step-2`, ...
    pub steps: Vec<StepSpec>,
    /// The pattern it was drafted from.
    pub pattern_hash: String,
}

/// Drafts a composite skill from `pattern`.
///
/// Errors: [`Error::Invalid`] for a pattern without skills, or (which would be a bug here)
/// a draft skills-core refuses.
///
/// ```
/// use skills_orchestrate::learn::{draft_skill, pattern_hash};
/// use skills_store_traits::learning::{NewPattern, PatternKind};
/// use skills_store_traits::TenantId;
///
/// let skills = vec!["pdf".to_owned(), "summarize".to_owned()];
/// let hash = pattern_hash(PatternKind::Sequence, &skills, None);
/// let pattern = NewPattern::new(hash, PatternKind::Sequence, skills, vec!["report".into()], 4, 0.75)
///     .into_record("p1".into(), &TenantId::new("acme"), 0);
/// let draft = draft_skill(&pattern)?;
/// assert_eq!(draft.name, "pdf-then-summarize");
/// assert_eq!(draft.steps[1].depends_on, ["step-1"]);
/// assert!(draft.markdown.starts_with("---\nname: pdf-then-summarize\n"));
/// # Ok::<(), skills_orchestrate::Error>(())
/// ```
pub fn draft_skill(pattern: &LearningPattern) -> Result<DraftSkill> {
    if pattern.skills.is_empty() {
        return Err(Error::Invalid {
            what: "learning pattern".into(),
            reason: "it names no skills".into(),
        });
    }
    let name = skill_name(pattern);
    let mut frontmatter = Frontmatter::new(name.clone(), description(pattern));
    frontmatter
        .metadata
        .insert("learned-from-pattern".into(), pattern.pattern_hash.clone());
    frontmatter
        .metadata
        .insert("pattern-kind".into(), pattern.kind.as_str().into());
    let skill_md = SkillMd::new(frontmatter, body(pattern));
    let markdown = skill_md.to_markdown();
    check(&markdown)?;
    Ok(DraftSkill {
        name,
        skill_md,
        markdown,
        steps: plan(pattern),
        pattern_hash: pattern.pattern_hash.clone(),
    })
}

fn check(markdown: &str) -> Result<()> {
    let parsed = SkillMd::parse_str(markdown, None, &ParseOptions::for_profile(Profile::Spec));
    if parsed.document.is_some() && !has_errors(&parsed.diagnostics) {
        return Ok(());
    }
    let reasons: Vec<String> = parsed.diagnostics.iter().map(ToString::to_string).collect();
    Err(Error::Invalid {
        what: "draft skill".into(),
        reason: reasons.join("; "),
    })
}

/// The skill name: the skills' slugs joined by the kind's connective, cut to the name limit
/// with the pattern hash's first eight characters keeping cut names apart.
fn skill_name(pattern: &LearningPattern) -> String {
    let slugs: Vec<String> = pattern.skills.iter().map(|s| slug(s)).collect();
    let full = match pattern.kind {
        PatternKind::Sequence => slugs.join("-then-"),
        PatternKind::Retry => format!("{}-with-retries", slugs.join("-")),
        PatternKind::Composite => match pattern.task_types.first() {
            Some(task) => format!("{}-for-{}", slugs.join("-and-"), slug(task)),
            None => slugs.join("-and-"),
        },
    };
    if full.len() <= MAX_NAME_CHARS {
        return full;
    }
    let suffix: String = pattern
        .pattern_hash
        .chars()
        .filter(char::is_ascii_alphanumeric)
        .take(8)
        .collect::<String>()
        .to_ascii_lowercase();
    let keep = MAX_NAME_CHARS - suffix.len() - 1;
    // The slug is ASCII, so byte and character positions agree.
    let head = full[..keep].trim_end_matches('-');
    if suffix.is_empty() {
        head.to_owned()
    } else {
        format!("{head}-{suffix}")
    }
}

/// `a-z0-9` runs of `text` joined by single hyphens (`skill` when none).
fn slug(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c.to_ascii_lowercase());
        } else if !out.is_empty() && !out.ends_with('-') {
            out.push('-');
        }
    }
    let trimmed = out.trim_end_matches('-');
    if trimmed.is_empty() {
        "skill".to_owned()
    } else {
        trimmed.to_owned()
    }
}

/// `text` made safe for one line of Markdown (see the module's guarantee).
fn inline(text: &str) -> String {
    let visible = neutralize(text.as_bytes());
    let mut out = String::with_capacity(visible.len());
    for c in visible.chars() {
        let c = if c.is_whitespace() { ' ' } else { c };
        if c == '`' || (c == ' ' && (out.is_empty() || out.ends_with(' '))) {
            continue;
        }
        out.push(c);
    }
    let out = out.trim_end();
    if out.chars().count() <= MAX_SHOWN_CHARS {
        return out.to_owned();
    }
    let mut cut: String = out.chars().take(MAX_SHOWN_CHARS - 1).collect();
    cut.push('…');
    cut
}

fn code(text: &str) -> String {
    format!("`{}`", inline(text))
}

/// `a, b and c`, with at most [`MAX_LISTED`] named.
fn listing(items: &[String], last_joiner: &str) -> String {
    let shown: Vec<String> = items.iter().take(MAX_LISTED).map(|s| inline(s)).collect();
    let more = items.len().saturating_sub(MAX_LISTED);
    match (shown.as_slice(), more) {
        ([], _) => String::new(),
        ([only], 0) => only.clone(),
        (_, 0) => {
            let (last, rest) = shown
                .split_last()
                .map_or((String::new(), &[][..]), |(l, r)| (l.clone(), r));
            format!("{}{last_joiner}{last}", rest.join(", "))
        }
        (_, more) => format!("{} and {more} more", shown.join(", ")),
    }
}

fn percent(rate: f64) -> String {
    format!("{:.0}%", (rate * 100.0).clamp(0.0, 100.0))
}

fn seen_in(pattern: &LearningPattern) -> String {
    let runs = if pattern.frequency == 1 {
        "run"
    } else {
        "runs"
    };
    let tasks = listing(&pattern.task_types, " and ");
    let tasks = if tasks.is_empty() {
        String::new()
    } else {
        format!(" of {tasks}")
    };
    format!(
        "{} {runs}{tasks}, {} of them successful",
        pattern.frequency,
        percent(pattern.success_rate)
    )
}

fn description(pattern: &LearningPattern) -> String {
    let text = match pattern.kind {
        PatternKind::Sequence => format!(
            "Runs {} in this order as one skill. Learned from a sequence seen in {}. Use when a \
             task needs these steps one after another.",
            listing(&pattern.skills, ", then "),
            seen_in(pattern)
        ),
        PatternKind::Composite => format!(
            "Runs {} together, in any order, as one skill. Learned from the skills used together \
             in {}. Use for tasks of that kind.",
            listing(&pattern.skills, " and "),
            seen_in(pattern)
        ),
        PatternKind::Retry => format!(
            "Runs {} with retries. Learned from a skill that needed more than one attempt in {}. \
             Use instead of the plain skill when it is unreliable.",
            listing(&pattern.skills, " and "),
            seen_in(pattern)
        ),
    };
    // The pieces are bounded, but the standard's limit is checked here, not assumed.
    text.chars()
        .take(skills_core::MAX_DESCRIPTION_CHARS)
        .collect()
}

fn title(pattern: &LearningPattern) -> String {
    let shown: Vec<String> = pattern.skills.iter().map(|s| inline(s)).collect();
    match pattern.kind {
        PatternKind::Sequence => shown.join(", then "),
        PatternKind::Composite => shown.join(" with "),
        PatternKind::Retry => format!("{} with retries", shown.join(", ")),
    }
}

fn body(pattern: &LearningPattern) -> String {
    let short_hash: String = inline(&pattern.pattern_hash).chars().take(16).collect();
    let mut out = format!(
        "# {}\n\nDrafted by the learning engine from a recurring {} pattern (`{short_hash}`), \
         seen in {}. Review it before enabling it.\n\n## Steps\n\n",
        title(pattern),
        pattern.kind,
        seen_in(pattern)
    );
    if pattern.kind == PatternKind::Composite {
        out.push_str(
            "The recorded runs used these skills in varying order; they do not depend on \
             each other.\n\n",
        );
    }
    for (index, skill) in pattern.skills.iter().enumerate() {
        let number = index + 1;
        let line = match pattern.kind {
            PatternKind::Sequence if index > 0 => format!(
                "{number}. Use the {} skill on the result of step {index}.\n",
                code(skill)
            ),
            PatternKind::Retry => format!(
                "{number}. Use the {} skill. If it fails, try again, up to \
                 {SUGGESTED_ATTEMPTS} attempts, before reporting the failure.\n",
                code(skill)
            ),
            _ => format!("{number}. Use the {} skill.\n", code(skill)),
        };
        out.push_str(&line);
    }
    out
}

fn plan(pattern: &LearningPattern) -> Vec<StepSpec> {
    let total = pattern.skills.len();
    pattern
        .skills
        .iter()
        .enumerate()
        .map(|(index, skill)| {
            let id = format!("step-{}", index + 1);
            let briefing = match pattern.kind {
                PatternKind::Sequence if index > 0 => format!(
                    "Step {} of {total}: run `{skill}` on the result of step-{index}.",
                    index + 1
                ),
                PatternKind::Sequence => format!("Step 1 of {total}: run `{skill}`."),
                PatternKind::Composite => {
                    format!("Run `{skill}`; it does not depend on the other steps.")
                }
                PatternKind::Retry => format!(
                    "Run `{skill}`; it often needs more than one attempt (allow up to \
                     {SUGGESTED_ATTEMPTS})."
                ),
            };
            let step = StepSpec::new(id, skill.clone(), briefing);
            if pattern.kind == PatternKind::Sequence && index > 0 {
                step.after(format!("step-{index}"))
            } else {
                step
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slugs_keep_only_ascii_words() {
        assert_eq!(slug("CRM Lookup_v2"), "crm-lookup-v2");
        assert_eq!(slug("--a--b--"), "a-b");
        assert_eq!(slug("日本語"), "skill");
    }

    #[test]
    fn inline_text_is_one_line_without_backticks() {
        let shown = inline("a\n---\nname: evil `x`\u{1b}[2J\u{e0041}");
        assert!(!shown.contains('\n'));
        assert!(!shown.contains('`'));
        assert!(!shown.contains('\u{1b}'));
        assert!(!shown.contains('\u{e0041}'));
        assert!(inline(&"x".repeat(500)).chars().count() <= MAX_SHOWN_CHARS);
    }

    #[test]
    fn listing_names_a_bounded_number() {
        let items: Vec<String> = (0..12).map(|i| format!("s{i}")).collect();
        assert!(listing(&items, " and ").ends_with("and 4 more"));
        assert_eq!(listing(&items[..3], ", then "), "s0, s1, then s2");
        assert_eq!(listing(&items[..1], " and "), "s0");
    }
}
