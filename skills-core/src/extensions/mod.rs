//! Extension fields the agent tools people use define, recognised by what each tool
//! documents (not by what a corpus happens to carry), typed, and grouped in named
//! [`ExtensionSet`]s a host enables.
//!
//! - [`ExtensionSet::Library`]: this library's `tags`, `category`, `requires-tools`, `version`.
//! - [`ExtensionSet::ClaudeCode`]: Claude Code's skill frontmatter (`when_to_use`,
//!   `argument-hint`, `arguments`, `disable-model-invocation`, `user-invocable`,
//!   `disallowed-tools`, `model`, `effort`, `context`, `agent`, `hooks`, `paths`, `shell`),
//!   read by [`ClaudeCodeFields::from_frontmatter`].
//! - [`ExtensionSet::Codex`]: Codex's `metadata.short-description` (inside the standard's
//!   `metadata`, so never an unknown field) and the `agents/openai.yaml` sidecar, read by
//!   [`OpenAiSidecar::parse`].
//!
//! Under the Lenient profile every set is enabled unless the host says otherwise; under Spec
//! none is, and a key of an enabled set is an `extension-field` warning naming its set
//! instead of an `unknown-field` error.

use crate::frontmatter::Frontmatter;
use crate::yaml::YamlValue;

/// A named group of extension fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum ExtensionSet {
    /// This library's fields.
    Library,
    /// Claude Code's skill frontmatter.
    ClaudeCode,
    /// Codex's metadata keys and `agents/openai.yaml`.
    Codex,
}

/// This library's extension keys.
pub const LIBRARY_KEYS: &[&str] = &["tags", "category", "requires-tools", "version"];

/// Claude Code's skill frontmatter keys beyond the standard.
pub const CLAUDE_CODE_KEYS: &[&str] = &[
    "when_to_use",
    "argument-hint",
    "arguments",
    "disable-model-invocation",
    "user-invocable",
    "disallowed-tools",
    "model",
    "effort",
    "context",
    "agent",
    "hooks",
    "paths",
    "shell",
];

/// Codex's key inside `metadata`: a short description for user-facing lists.
pub const CODEX_SHORT_DESCRIPTION: &str = "short-description";

/// Where Codex reads a skill's interface, dependencies and policy.
pub const OPENAI_SIDECAR: &str = "agents/openai.yaml";

impl ExtensionSet {
    /// Every set.
    pub const ALL: &'static [ExtensionSet] = &[
        ExtensionSet::Library,
        ExtensionSet::ClaudeCode,
        ExtensionSet::Codex,
    ];

    /// The set's name in messages (`library`, `claude-code`, `codex`).
    pub fn as_str(self) -> &'static str {
        match self {
            ExtensionSet::Library => "library",
            ExtensionSet::ClaudeCode => "claude-code",
            ExtensionSet::Codex => "codex",
        }
    }

    /// The top-level frontmatter keys the set defines.
    pub fn keys(self) -> &'static [&'static str] {
        match self {
            ExtensionSet::Library => LIBRARY_KEYS,
            ExtensionSet::ClaudeCode => CLAUDE_CODE_KEYS,
            ExtensionSet::Codex => &[],
        }
    }

    /// The set defining top-level `key`, if any.
    pub fn of_key(key: &str) -> Option<ExtensionSet> {
        ExtensionSet::ALL
            .iter()
            .copied()
            .find(|set| set.keys().contains(&key))
    }
}

/// Claude Code's fields of one skill, typed. Values of the wrong shape are left at their
/// defaults (the raw value stays in [`Frontmatter::extra`]).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct ClaudeCodeFields {
    /// When to use the skill, beside its description.
    pub when_to_use: Option<String>,
    /// The hint shown for the skill's arguments (`[file] [format]`).
    pub argument_hint: Option<String>,
    /// Named arguments.
    pub arguments: Vec<String>,
    /// Kept out of the model's catalog: only a user invokes it.
    pub disable_model_invocation: bool,
    /// Whether a user may invoke it directly (`/name`); true unless set false.
    pub user_invocable: bool,
    /// Tools the skill must not use while active.
    pub disallowed_tools: Vec<String>,
    /// The model to run it with.
    pub model: Option<String>,
    /// The reasoning effort to run it with.
    pub effort: Option<String>,
    /// Where it runs (`fork`: a sub-agent context).
    pub context: Option<String>,
    /// The sub-agent type to run it in.
    pub agent: Option<String>,
    /// Hooks, uninterpreted.
    pub hooks: Option<YamlValue>,
    /// Globs of the files the skill applies to; empty: everywhere.
    pub paths: Vec<String>,
    /// The shell for its commands.
    pub shell: Option<String>,
}

impl ClaudeCodeFields {
    /// Reads the fields from a frontmatter's other keys.
    pub fn from_frontmatter(fm: &Frontmatter) -> ClaudeCodeFields {
        let get = |key: &str| fm.extra.get(key);
        let text = |key: &str| {
            get(key)
                .and_then(YamlValue::as_scalar_text)
                .map(str::to_owned)
        };
        let flag = |key: &str, default: bool| match get(key) {
            Some(YamlValue::Bool(b)) => *b,
            Some(YamlValue::String(s)) if s.eq_ignore_ascii_case("true") => true,
            Some(YamlValue::String(s)) if s.eq_ignore_ascii_case("false") => false,
            _ => default,
        };
        ClaudeCodeFields {
            when_to_use: text("when_to_use"),
            argument_hint: text("argument-hint"),
            arguments: list(get("arguments")),
            disable_model_invocation: flag("disable-model-invocation", false),
            user_invocable: flag("user-invocable", true),
            disallowed_tools: list(get("disallowed-tools")),
            model: text("model"),
            effort: text("effort"),
            context: text("context"),
            agent: text("agent"),
            hooks: get("hooks").cloned(),
            paths: list(get("paths")),
            shell: text("shell"),
        }
    }

    /// Whether the skill applies to `path` (relative, `/`-separated): always when `paths`
    /// is empty, else when a glob matches (`*` within a segment, `**` across segments, `?`
    /// one character).
    pub fn applies_to(&self, path: &str) -> bool {
        self.paths.is_empty() || self.paths.iter().any(|glob| glob_matches(glob, path))
    }
}

/// Whether a skill limited to `globs` (Claude Code's `paths`) applies to work on `files`
/// (relative, `/`-separated): always when `globs` is empty; otherwise only when one of the
/// files matches one of the globs, so a limited skill never applies to work that names no
/// file.
///
/// ```
/// use skills_core::extensions::paths_apply;
///
/// let globs = vec!["src/**/*.rs".to_owned()];
/// assert!(paths_apply(&globs, &["src/db/pool.rs".to_owned()]));
/// assert!(!paths_apply(&globs, &["docs/guide.md".to_owned()]));
/// assert!(!paths_apply(&globs, &[]));
/// assert!(paths_apply(&[], &[]));
/// ```
pub fn paths_apply(globs: &[String], files: &[String]) -> bool {
    globs.is_empty()
        || files
            .iter()
            .any(|file| globs.iter().any(|glob| glob_matches(glob, file)))
}

/// A list written as a YAML sequence, or as one string split on commas and whitespace
/// outside parentheses (`Bash(rm:*), Write` gives two entries).
fn list(value: Option<&YamlValue>) -> Vec<String> {
    match value {
        Some(YamlValue::Sequence(items)) => items
            .iter()
            .filter_map(YamlValue::as_scalar_text)
            .map(str::to_owned)
            .collect(),
        Some(value) => value.as_scalar_text().map(split_list).unwrap_or_default(),
        None => Vec::new(),
    }
}

fn split_list(text: &str) -> Vec<String> {
    let mut items = Vec::new();
    let mut current = String::new();
    let mut depth = 0usize;
    for c in text.chars() {
        match c {
            '(' => depth += 1,
            ')' => depth = depth.saturating_sub(1),
            c if (c == ',' || c.is_whitespace()) && depth == 0 => {
                if !current.is_empty() {
                    items.push(std::mem::take(&mut current));
                }
                continue;
            }
            _ => {}
        }
        current.push(c);
    }
    if !current.is_empty() {
        items.push(current);
    }
    items
}

/// Glob matching over `/`-separated segments; bounded by the lengths (memoized DP).
fn glob_matches(glob: &str, path: &str) -> bool {
    let pattern: Vec<&str> = glob.trim_start_matches("./").split('/').collect();
    let segments: Vec<&str> = path.trim_start_matches("./").split('/').collect();
    // done[i][j]: pattern[i..] against segments[j..] already known to fail.
    let mut failed = vec![vec![false; segments.len() + 1]; pattern.len() + 1];
    matches_from(&pattern, &segments, 0, 0, &mut failed)
}

fn matches_from(
    pattern: &[&str],
    segments: &[&str],
    i: usize,
    j: usize,
    failed: &mut [Vec<bool>],
) -> bool {
    if failed[i][j] {
        return false;
    }
    let ok = match pattern.get(i) {
        None => j == segments.len(),
        Some(&"**") => {
            (j..=segments.len()).any(|k| matches_from(pattern, segments, i + 1, k, failed))
        }
        Some(p) => {
            j < segments.len()
                && segment_matches(p.as_bytes(), segments[j].as_bytes())
                && matches_from(pattern, segments, i + 1, j + 1, failed)
        }
    };
    if !ok {
        failed[i][j] = true;
    }
    ok
}

fn segment_matches(p: &[u8], s: &[u8]) -> bool {
    // Classic wildcard matching with one back-tracking point (linear for `*` and `?`).
    let (mut pi, mut si) = (0, 0);
    let (mut star, mut mark) = (None, 0);
    while si < s.len() {
        if pi < p.len() && (p[pi] == b'?' || p[pi] == s[si]) {
            pi += 1;
            si += 1;
        } else if pi < p.len() && p[pi] == b'*' {
            star = Some(pi);
            mark = si;
            pi += 1;
        } else if let Some(st) = star {
            pi = st + 1;
            mark += 1;
            si = mark;
        } else {
            return false;
        }
    }
    p[pi..].iter().all(|&c| c == b'*')
}

/// Codex's `agents/openai.yaml`: how the skill shows, what it needs, and whether the model
/// may pick it by itself.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct OpenAiSidecar {
    /// `interface.display_name`.
    pub display_name: Option<String>,
    /// `interface.short_description`.
    pub short_description: Option<String>,
    /// `interface.default_prompt`.
    pub default_prompt: Option<String>,
    /// The `value` (or `type` when there is none) of each `dependencies.tools` entry.
    pub dependency_tools: Vec<String>,
    /// `policy.allow_implicit_invocation`: false keeps the skill out of the model's catalog.
    pub allow_implicit_invocation: Option<bool>,
    /// The whole document, uninterpreted.
    pub raw: YamlValue,
}

impl OpenAiSidecar {
    /// Reads the sidecar from its YAML text with the bounded reader; `None` when it is not
    /// a YAML mapping.
    pub fn parse(text: &str) -> Option<OpenAiSidecar> {
        let raw = crate::yaml::parse_value(text)?;
        let YamlValue::Mapping(_) = &raw else {
            return None;
        };
        let at = |path: &[&str]| -> Option<&YamlValue> {
            path.iter().try_fold(&raw, |value, key| match value {
                YamlValue::Mapping(entries) => {
                    entries.iter().find(|(k, _)| k == key).map(|(_, v)| v)
                }
                _ => None,
            })
        };
        let text = |path: &[&str]| {
            at(path)
                .and_then(YamlValue::as_scalar_text)
                .map(str::to_owned)
        };
        let dependency_tools = match at(&["dependencies", "tools"]) {
            Some(YamlValue::Sequence(items)) => items
                .iter()
                .filter_map(|item| match item {
                    YamlValue::Mapping(entries) => entries
                        .iter()
                        .find(|(k, _)| k == "value")
                        .or_else(|| entries.iter().find(|(k, _)| k == "type"))
                        .and_then(|(_, v)| v.as_scalar_text())
                        .map(str::to_owned),
                    other => other.as_scalar_text().map(str::to_owned),
                })
                .collect(),
            _ => Vec::new(),
        };
        let allow_implicit_invocation = match at(&["policy", "allow_implicit_invocation"]) {
            Some(YamlValue::Bool(b)) => Some(*b),
            _ => None,
        };
        Some(OpenAiSidecar {
            display_name: text(&["interface", "display_name"]),
            short_description: text(&["interface", "short_description"]),
            default_prompt: text(&["interface", "default_prompt"]),
            dependency_tools,
            allow_implicit_invocation,
            raw,
        })
    }
}

/// `first`, then those of `second` not already there, each once (blank ones dropped): the
/// tools a skill needs from its frontmatter and from its Codex sidecar.
pub fn merge_tools(first: &[String], second: &[String]) -> Vec<String> {
    let mut tools: Vec<String> = Vec::new();
    for tool in first.iter().chain(second) {
        let tool = tool.trim();
        if !tool.is_empty() && !tools.iter().any(|t| t == tool) {
            tools.push(tool.to_owned());
        }
    }
    tools
}

#[cfg(test)]
mod tests;
