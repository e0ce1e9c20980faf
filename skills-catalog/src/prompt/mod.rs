//! The catalog a model sees in its system prompt (seed 002 section 8.1, 8.4, and the Agent
//! Skills catalog XML): short entries with paths, so the agent reads the rest on demand.
//!
//! Threat: skill names and descriptions come from skill authors, so they may carry text that
//! breaks out of the catalog's structure (`</skill>`, a fake list item, control characters).
//! Guarantee: descriptions are collapsed to one line with control characters removed, and
//! every value inside XML is escaped; nothing a skill writes can start a new entry.
//!
//! Seed 001's lifecycle: a `deprecated` or `stub` entry carries
//! [`SkillStatus::note`](skills_core::SkillStatus::note) in every form (a bracketed tag in
//! the Available Skills list, a `status` attribute on its auto-inject block, a `<status>`
//! element in the XML), so the model knows not to reach for it unasked.

pub mod tokens;

use crate::resolve::{ResolvedSkill, SkillOrigin};
use crate::sandbox::DEFAULT_SANDBOX_SKILLS_DIR;
use skills_core::SkillStatus;
use skills_core::catalog::escape_xml;
pub use tokens::{Budget, EstimatedTokens, TokenCounter};

/// The most entries the Available Skills list shows (seed 002 section 8.4).
pub const MAX_LISTED: usize = 50;
/// The most characters of auto-injected descriptions in total (seed 002 section 8.4).
pub const AUTO_INJECT_CHARS: usize = 5_000;

/// Settings of the Available Skills section.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CatalogOptions {
    /// Entries listed before the `[n more skills available ...]` line (default 50).
    pub max_listed: usize,
    /// Total characters of auto-injected descriptions (default 5,000).
    pub auto_inject_chars: usize,
    /// The skills directory as the agent sees it (default `/home/sprite/.skills`).
    pub sandbox_dir: String,
    /// The tool the agent reads files with (default `read_file`).
    pub read_tool: String,
}

impl Default for CatalogOptions {
    fn default() -> Self {
        CatalogOptions {
            max_listed: MAX_LISTED,
            auto_inject_chars: AUTO_INJECT_CHARS,
            sandbox_dir: DEFAULT_SANDBOX_SKILLS_DIR.to_owned(),
            read_tool: "read_file".to_owned(),
        }
    }
}

/// Rendered text and what went into it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct RenderedCatalog {
    /// The text to put in the prompt; empty when there is nothing to show.
    pub text: String,
    /// Ids of the entries shown, in the order shown.
    pub listed: Vec<String>,
    /// Ids of the entries left out (over the entry cap or the budget), highest priority
    /// first.
    pub omitted: Vec<String>,
    /// Ids whose description was auto-injected in full.
    pub auto_injected: Vec<String>,
    /// Ids whose auto-injected description was shortened to fit the character total.
    pub truncated: Vec<String>,
    /// Ids whose auto-injected description did not fit at all and was left out.
    pub auto_inject_dropped: Vec<String>,
}

/// Entries by priority (high first); ties keep the resolver's order (admin, plugin, repo;
/// winners before what they shadow).
/// The entries the model may see, highest priority first: a skill the model may not pick by
/// itself ([`ResolvedSkill::model_invocable`]) is never listed.
fn by_priority(skills: &[ResolvedSkill]) -> Vec<&ResolvedSkill> {
    let mut ordered: Vec<&ResolvedSkill> = skills.iter().filter(|s| s.model_invocable).collect();
    ordered.sort_by_key(|s| std::cmp::Reverse(s.priority));
    ordered
}

/// One line, no control characters, whitespace runs collapsed.
pub fn one_line(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for word in text.split(|c: char| c.is_whitespace() || c.is_control()) {
        if word.is_empty() {
            continue;
        }
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(word);
    }
    out
}

fn source_tag(skill: &ResolvedSkill) -> String {
    match skill.source {
        SkillOrigin::Admin => "[admin]".to_owned(),
        SkillOrigin::Plugin => format!("[plugin: {}]", one_line(&skill.source_ref)),
        SkillOrigin::Repo => "[repo]".to_owned(),
    }
}

fn list_line(skill: &ResolvedSkill) -> String {
    let description = one_line(&skill.description);
    let separator = match description.chars().last() {
        None => "",
        Some('.' | '!' | '?') => " ",
        Some(_) => ". ",
    };
    let status = SkillStatus::note_of(skill.status)
        .map(|note| format!(" [{note}]"))
        .unwrap_or_default();
    format!(
        "- **{}** — {description}{separator}Read: {} {}{status}",
        one_line(&skill.id),
        one_line(&skill.entrypoint),
        source_tag(skill)
    )
}

/// Seed 002's "Available Skills" section for `skills` (as a [`crate::Resolution`] lists
/// them): sandbox skills, then project skills, at most `max_listed` entries by priority with
/// a `[n more skills available — use use_skill to discover them]` line, then the
/// `auto_inject` descriptions within `auto_inject_chars` characters in total, the
/// lowest-priority ones shortened first. No skills give an empty text.
///
/// ```
/// use skills_catalog::prompt::{available_skills_section, CatalogOptions};
///
/// let rendered = available_skills_section(&[], &CatalogOptions::default());
/// assert!(rendered.text.is_empty());
/// ```
pub fn available_skills_section(
    skills: &[ResolvedSkill],
    options: &CatalogOptions,
) -> RenderedCatalog {
    let ordered = by_priority(skills);
    let cut = ordered.len().min(options.max_listed);
    let (shown, rest) = ordered.split_at(cut);
    render_section(shown, rest, options)
}

/// [`available_skills_section`] within a budget: when the section does not fit, the
/// auto-injected descriptions go first (lowest priority first), then list entries (lowest
/// priority first), each reported in [`RenderedCatalog::omitted`] or
/// [`RenderedCatalog::auto_inject_dropped`]; the `[n more ...]` line counts every entry
/// left out. When not even the heading fits, the text is empty.
pub fn available_skills_section_within(
    skills: &[ResolvedSkill],
    options: &CatalogOptions,
    budget: Budget<'_>,
) -> RenderedCatalog {
    let ordered = by_priority(skills);
    let mut cut = ordered.len().min(options.max_listed);
    let mut inject_limit = usize::MAX;
    loop {
        let (shown, rest) = ordered.split_at(cut);
        let mut rendered = render_section_limited(shown, rest, options, inject_limit);
        if budget.fits(&rendered.text) {
            return rendered;
        }
        let injected = rendered.auto_injected.len() + rendered.truncated.len();
        if injected > 0 && inject_limit > 0 {
            inject_limit = injected - 1;
            continue;
        }
        if cut == 0 {
            rendered.text.clear();
            rendered.listed.clear();
            return rendered;
        }
        cut -= 1;
    }
}

fn render_section(
    shown: &[&ResolvedSkill],
    rest: &[&ResolvedSkill],
    options: &CatalogOptions,
) -> RenderedCatalog {
    render_section_limited(shown, rest, options, usize::MAX)
}

/// Renders with at most `inject_limit` auto-inject blocks (the highest-priority ones).
fn render_section_limited(
    shown: &[&ResolvedSkill],
    rest: &[&ResolvedSkill],
    options: &CatalogOptions,
    inject_limit: usize,
) -> RenderedCatalog {
    let mut out = RenderedCatalog::default();
    if shown.is_empty() && rest.is_empty() {
        return out;
    }
    let mut text = String::from("## Available Skills\n\n");
    text.push_str(&format!(
        "You have the following skills installed in your sandbox. Each skill directory contains a SKILL.md with full instructions and may include supporting files (references, scripts, templates). Use `{}` to read the SKILL.md for any skill you want to use.\n",
        one_line(&options.read_tool)
    ));
    let sandbox: Vec<&&ResolvedSkill> = shown
        .iter()
        .filter(|s| s.source != SkillOrigin::Repo)
        .collect();
    let project: Vec<&&ResolvedSkill> = shown
        .iter()
        .filter(|s| s.source == SkillOrigin::Repo)
        .collect();
    if !sandbox.is_empty() {
        let dir = one_line(options.sandbox_dir.trim_end_matches('/'));
        text.push_str(&format!("\nSandbox skills (in {dir}/):\n"));
        for skill in &sandbox {
            text.push_str(&list_line(skill));
            text.push('\n');
            out.listed.push(skill.id.clone());
        }
    }
    if !project.is_empty() {
        text.push_str("\nProject skills (discovered from repo):\n");
        for skill in &project {
            text.push_str(&list_line(skill));
            text.push('\n');
            out.listed.push(skill.id.clone());
        }
    }
    if !rest.is_empty() {
        text.push_str(&format!(
            "\n[{} more skills available — use use_skill to discover them]\n",
            rest.len()
        ));
        out.omitted = rest.iter().map(|s| s.id.clone()).collect();
    }
    let injected = auto_inject_blocks(shown, options.auto_inject_chars, inject_limit, &mut out);
    if !injected.is_empty() {
        text.push('\n');
        text.push_str(&injected);
    }
    out.text = text;
    out
}

/// The `<skill name=.. path=..>` blocks of listed `auto_inject` skills, in priority order,
/// with descriptions fitted to `limit` characters in total: the lowest-priority
/// descriptions are shortened (ending in `…`) or dropped first.
fn auto_inject_blocks(
    shown: &[&ResolvedSkill],
    limit: usize,
    inject_limit: usize,
    out: &mut RenderedCatalog,
) -> String {
    let candidates: Vec<(&ResolvedSkill, String)> = shown
        .iter()
        .filter(|s| s.auto_inject)
        .map(|s| (*s, one_line(&s.description)))
        .collect();
    let mut kept: Vec<(&ResolvedSkill, String, bool)> = Vec::new();
    for (index, (skill, description)) in candidates.into_iter().enumerate() {
        if index >= inject_limit {
            out.auto_inject_dropped.push(skill.id.clone());
        } else {
            kept.push((skill, description, false));
        }
    }
    let mut total: usize = kept.iter().map(|(_, d, _)| d.chars().count()).sum();
    for entry in kept.iter_mut().rev() {
        if total <= limit {
            break;
        }
        let len = entry.1.chars().count();
        let excess = total - limit;
        let keep = len.saturating_sub(excess);
        if keep >= 2 {
            let mut shortened: String = entry.1.chars().take(keep - 1).collect();
            shortened.push('…');
            entry.1 = shortened;
            entry.2 = true;
            total -= len - keep;
        } else {
            total -= len;
            entry.1.clear();
        }
    }
    let mut text = String::new();
    for (skill, description, truncated) in kept {
        if description.is_empty() {
            out.auto_inject_dropped.push(skill.id.clone());
            continue;
        }
        if truncated {
            out.truncated.push(skill.id.clone());
        } else {
            out.auto_injected.push(skill.id.clone());
        }
        let status = SkillStatus::note_of(skill.status)
            .map(|note| format!(" status=\"{}\"", escape_xml(note)))
            .unwrap_or_default();
        text.push_str(&format!(
            "<skill name=\"{}\" path=\"{}\"{status}>\n{}\nRead the full SKILL.md at the path above for detailed instructions.\n</skill>\n",
            escape_xml(&skill.id),
            escape_xml(&skill.entrypoint),
            escape_xml(&description)
        ));
    }
    text
}

/// The Agent Skills catalog XML (the reference validator's `to-prompt` shape) for resolved
/// skills, in the given order: `<available_skills>` with one `<skill>` per entry holding
/// `<name>`, `<description>` (trimmed) and `<location>` (the entrypoint), each value on its
/// own line and escaped. No skills give the two tags alone, as the reference does. A
/// `deprecated` or `stub` entry also holds a `<status>` element (its note) after the
/// description, as `skills_core::catalog::available_skills_xml` writes it. Entries the model
/// may not pick by itself are left out, as there.
pub fn agent_skills_xml(skills: &[ResolvedSkill]) -> String {
    let mut text = String::from("<available_skills>");
    for skill in skills.iter().filter(|s| s.model_invocable) {
        text.push('\n');
        text.push_str(&xml_entry(skill));
    }
    text.push_str("\n</available_skills>");
    text
}

fn xml_entry(skill: &ResolvedSkill) -> String {
    let status = SkillStatus::note_of(skill.status)
        .map(|note| format!("<status>\n{}\n</status>\n", escape_xml(note)))
        .unwrap_or_default();
    format!(
        "<skill>\n<name>\n{}\n</name>\n<description>\n{}\n</description>\n{status}<location>\n{}\n</location>\n</skill>",
        escape_xml(&skill.name),
        escape_xml(skill.description.trim()),
        escape_xml(&skill.entrypoint)
    )
}

/// [`agent_skills_xml`] within a budget: entries are taken in priority order (ties in the
/// given order) and the first entry that does not fit ends the list; it and every entry
/// after it are reported in [`RenderedCatalog::omitted`]. The shown entries keep priority
/// order.
pub fn agent_skills_xml_within(skills: &[ResolvedSkill], budget: Budget<'_>) -> RenderedCatalog {
    let ordered = by_priority(skills);
    let mut out = RenderedCatalog::default();
    let frame = "<available_skills>\n</available_skills>";
    let mut used = budget.cost(frame);
    let mut entries: Vec<String> = Vec::new();
    let mut stop = ordered.len();
    for (index, skill) in ordered.iter().enumerate() {
        let entry = xml_entry(skill);
        // Each entry adds itself and one newline.
        let cost = budget.cost(&entry) + budget.cost("\n");
        if used + cost > budget.limit() {
            stop = index;
            break;
        }
        used += cost;
        entries.push(entry);
        out.listed.push(skill.id.clone());
    }
    out.omitted = ordered[stop..].iter().map(|s| s.id.clone()).collect();
    let mut text = String::from("<available_skills>");
    for entry in &entries {
        text.push('\n');
        text.push_str(entry);
    }
    text.push_str("\n</available_skills>");
    // Token counts are not always additive; trim until the whole really fits.
    while !budget.fits(&text) && !entries.is_empty() {
        entries.pop();
        if let Some(id) = out.listed.pop() {
            out.omitted.insert(0, id);
        }
        text = String::from("<available_skills>");
        for entry in &entries {
            text.push('\n');
            text.push_str(entry);
        }
        text.push_str("\n</available_skills>");
    }
    out.text = if budget.fits(&text) {
        text
    } else {
        String::new()
    };
    out
}

#[cfg(test)]
mod tests;
