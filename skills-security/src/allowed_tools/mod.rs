//! A skill's `allowed-tools`, enforced: the [`ToolPolicy`] an activated skill declares, the
//! [gate](crate::gate::PolicyGate::check_tool_call) answering each tool call the model makes
//! while the skill is active, and [`GatedTools`], the permission proxy that forwards a
//! checked call to its handler in a [`ToolRegistry`](skills_core::tools::ToolRegistry).
//!
//! Threat: a skill's instructions steering the model into tool calls the user never meant
//! to allow (a shell command, a write outside the project, a fetch to an attacker's host),
//! or its own declaration widening what runs without asking. Guarantees:
//!
//! * a call the skill lists is pre-approved (no prompt), but never beyond the host's
//!   permissions: the skill must be allowed to execute, the tool must pass the host's
//!   allow and deny lists, and a host rule requiring approval still asks;
//! * a community skill's list is not pre-approved unless the host says so
//!   ([`PolicyGate::pre_approve_community_tools`](crate::gate::PolicyGate::pre_approve_community_tools)):
//!   whoever published it wrote the list;
//! * an unlisted call asks ([`AllowedToolsMode::PreApprove`], the default) or, when the
//!   host chooses [`AllowedToolsMode::Restrict`], is refused with the reason; under
//!   `Restrict` a skill that declares no `allowed-tools` gets no tools;
//! * every decision, and every forwarded call's outcome, is appended to the audit trail
//!   first (a decision that cannot be audited is an error, and the call does not run);
//! * entries are read as [`ToolPattern`] says: hostile or malformed ones grant nothing and
//!   are listed in [`ToolPolicy::refused`].
//!
//! ```
//! use serde_json::json;
//! use skills_security::allowed_tools::{ToolCall, ToolPolicy};
//!
//! let skill_md = "---\nname: release-notes\ndescription: Drafts release notes.\n\
//!                 allowed-tools: Read Bash(git log:*) Bash(*)\n---\nRead the log.\n";
//! let policy = ToolPolicy::from_skill_md(skill_md);
//! let log = ToolCall::new("Bash", json!({"command": "git log --oneline -20"}));
//! let wipe = ToolCall::new("Bash", json!({"command": "git log; rm -rf ~"}));
//! assert_eq!(policy.listing(&log), Some("Bash(git log:*)"));
//! assert_eq!(policy.listing(&wipe), None);
//! // `Bash(*)` would widen the list to every command: it grants nothing.
//! assert_eq!(policy.refused()[0].entry, "Bash(*)");
//! ```

mod pattern;
mod proxy;

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use skills_core::{ParseOptions, SkillMd};

pub use pattern::{
    ArgumentKind, MAX_ARGUMENT_CHARS, MAX_ENTRY_CHARS, RefusedEntry, ToolCall, ToolKinds,
    ToolPattern,
};
pub use proxy::{ActiveSkill, GatedTools, ToolCallOutcome};

/// The most entries one `allowed-tools` may have; the rest are refused.
pub const MAX_ENTRIES: usize = 256;

/// What a host does with tool calls a skill's `allowed-tools` does not list.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum AllowedToolsMode {
    /// The list only pre-approves: unlisted calls ask a person (the agent tools' own
    /// reading of the field).
    #[default]
    PreApprove,
    /// The list is all the skill may use: unlisted calls are refused, with the reason.
    Restrict,
}

/// The tool policy of an active skill: the entries of its `allowed-tools` that were
/// accepted, the ones refused, and the workspace its paths are relative to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolPolicy {
    declared: bool,
    patterns: Vec<ToolPattern>,
    disallowed: Vec<ToolPattern>,
    refused: Vec<RefusedEntry>,
    kinds: ToolKinds,
    workspace: Option<PathBuf>,
}

impl Default for ToolPolicy {
    fn default() -> Self {
        ToolPolicy::undeclared()
    }
}

impl ToolPolicy {
    /// The policy of a skill without `allowed-tools`: nothing is pre-approved.
    pub fn undeclared() -> ToolPolicy {
        ToolPolicy {
            declared: false,
            patterns: Vec::new(),
            disallowed: Vec::new(),
            refused: Vec::new(),
            kinds: ToolKinds::default(),
            workspace: None,
        }
    }

    /// Parses an `allowed-tools` value with the default [`ToolKinds`]. Entries are
    /// separated by whitespace or commas outside parentheses (`Read, Bash(git log:*)` and
    /// `Read Bash(git log:*)` are the same list; YAML lists arrive joined by spaces).
    pub fn parse(allowed_tools: &str) -> ToolPolicy {
        ToolPolicy::parse_with(allowed_tools, ToolKinds::default())
    }

    /// Parses an `allowed-tools` value, reading specifiers and calls as `kinds` says.
    pub fn parse_with(allowed_tools: &str, kinds: ToolKinds) -> ToolPolicy {
        let mut policy = ToolPolicy {
            declared: true,
            kinds,
            ..ToolPolicy::undeclared()
        };
        for (index, entry) in split_entries(allowed_tools).into_iter().enumerate() {
            if index >= MAX_ENTRIES {
                policy
                    .refused
                    .push(refused(&entry, format!("more than {MAX_ENTRIES} entries")));
                continue;
            }
            match ToolPattern::parse(&entry, &policy.kinds) {
                Ok(pattern) => policy.patterns.push(pattern),
                Err(reason) => policy.refused.push(refused(&entry, reason)),
            }
        }
        policy
    }

    /// The policy a `SKILL.md` declares (read leniently, as an agent loads skills: a YAML
    /// list of entries is accepted). A file whose frontmatter cannot be read declares
    /// nothing.
    pub fn from_skill_md(skill_md: &str) -> ToolPolicy {
        ToolPolicy::from_skill_md_with(skill_md, ToolKinds::default())
    }

    /// The same, with the host's [`ToolKinds`].
    pub fn from_skill_md_with(skill_md: &str, kinds: ToolKinds) -> ToolPolicy {
        let parsed = SkillMd::parse(skill_md.as_bytes(), None, &ParseOptions::default());
        let Some(doc) = parsed.document else {
            return ToolPolicy {
                kinds,
                ..ToolPolicy::undeclared()
            };
        };
        let disallowed = doc.frontmatter.claude_code().disallowed_tools;
        let policy = match doc.frontmatter.allowed_tools {
            Some(text) => ToolPolicy::parse_with(&text, kinds),
            None => ToolPolicy {
                kinds,
                ..ToolPolicy::undeclared()
            },
        };
        policy.disallow(&disallowed.join(" "))
    }

    /// Adds Claude Code's `disallowed-tools` entries: a call one of them matches is denied
    /// whatever `allowed-tools` or the host's rules say. Entries are read as `allowed-tools`
    /// entries are; one refused there (a widening such as `Bash(*)`) is listed in
    /// [`ToolPolicy::refused`] and denies nothing, so write deny entries as narrowly as
    /// allow entries.
    pub fn disallow(mut self, disallowed_tools: &str) -> ToolPolicy {
        for entry in split_entries(disallowed_tools)
            .into_iter()
            .take(MAX_ENTRIES)
        {
            match ToolPattern::parse(&entry, &self.kinds) {
                Ok(pattern) => self.disallowed.push(pattern),
                Err(reason) => self.refused.push(refused(&entry, reason)),
            }
        }
        self
    }

    /// The `disallowed-tools` entry `call` matches, if any.
    pub fn disallowing(&self, call: &ToolCall) -> Option<&str> {
        self.disallowed
            .iter()
            .find(|p| p.matches(call, &self.kinds, self.workspace.as_deref()))
            .map(ToolPattern::entry)
    }

    /// Paths in calls are relative to `root`, and absolute ones match only beneath it.
    pub fn workspace(mut self, root: impl Into<PathBuf>) -> ToolPolicy {
        self.workspace = Some(root.into());
        self
    }

    /// Whether the skill declared `allowed-tools` at all.
    pub fn declared(&self) -> bool {
        self.declared
    }

    /// The accepted entries, in order.
    pub fn patterns(&self) -> &[ToolPattern] {
        &self.patterns
    }

    /// The entries that grant nothing, with why.
    pub fn refused(&self) -> &[RefusedEntry] {
        &self.refused
    }

    /// The workspace root, if set.
    pub fn workspace_root(&self) -> Option<&Path> {
        self.workspace.as_deref()
    }

    /// The first entry that lists `call`, if any.
    pub fn listing(&self, call: &ToolCall) -> Option<&str> {
        self.patterns
            .iter()
            .find(|p| p.matches(call, &self.kinds, self.workspace.as_deref()))
            .map(ToolPattern::entry)
    }

    /// The accepted entries as one line (for reasons shown to people).
    pub fn summary(&self) -> String {
        if self.patterns.is_empty() {
            return "none".into();
        }
        let entries: Vec<&str> = self.patterns.iter().map(ToolPattern::entry).collect();
        entries.join(", ")
    }
}

fn refused(entry: &str, reason: String) -> RefusedEntry {
    RefusedEntry {
        entry: entry.chars().take(MAX_ENTRY_CHARS).collect(),
        reason,
    }
}

/// Splits on whitespace and commas outside parentheses. An unbalanced `)` is kept in its
/// entry (which the parser then refuses); an unclosed `(` runs to the end.
fn split_entries(text: &str) -> Vec<String> {
    let mut entries = Vec::new();
    let mut current = String::new();
    let mut depth = 0usize;
    for c in text.chars() {
        match c {
            '(' => depth += 1,
            ')' => depth = depth.saturating_sub(1),
            c if depth == 0 && (c.is_whitespace() || c == ',') => {
                if !current.is_empty() {
                    entries.push(std::mem::take(&mut current));
                }
                continue;
            }
            _ => {}
        }
        current.push(c);
    }
    if !current.is_empty() {
        entries.push(current);
    }
    entries
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn lists_split_on_spaces_and_commas_outside_parentheses() {
        assert_eq!(
            split_entries("Read, Bash(git log:*)  Write(src/**),mcp__a__b"),
            ["Read", "Bash(git log:*)", "Write(src/**)", "mcp__a__b"]
        );
        assert_eq!(split_entries("Bash(a, b) Read"), ["Bash(a, b)", "Read"]);
        assert_eq!(split_entries("Bash(a Read"), ["Bash(a Read"]);
        assert!(split_entries(" , ").is_empty());
    }

    #[test]
    fn skill_md_lists_and_strings_give_the_same_policy() {
        let list =
            "---\nname: a\ndescription: b\nallowed-tools:\n  - Bash(git log:*)\n  - Read\n---\nx\n";
        let string = "---\nname: a\ndescription: b\nallowed-tools: Bash(git log:*) Read\n---\nx\n";
        let (a, b) = (
            ToolPolicy::from_skill_md(list),
            ToolPolicy::from_skill_md(string),
        );
        assert_eq!(a, b);
        assert!(a.declared() && a.refused().is_empty());
        assert_eq!(a.summary(), "Bash(git log:*), Read");
        let none = ToolPolicy::from_skill_md("---\nname: a\ndescription: b\n---\nx\n");
        assert!(!none.declared());
        assert!(!ToolPolicy::from_skill_md("no frontmatter").declared());
    }

    #[test]
    fn refused_entries_never_list_a_call() {
        let policy = ToolPolicy::parse("Bash(*) Write(../**) Read");
        assert_eq!(policy.refused().len(), 2);
        assert_eq!(
            policy.listing(&ToolCall::new("Bash", json!({"command": "rm -rf /"}))),
            None
        );
        assert_eq!(
            policy.listing(&ToolCall::new("Write", json!({"file_path": "../x"}))),
            None
        );
        assert_eq!(
            policy.listing(&ToolCall::new("Read", json!({"file_path": "x"}))),
            Some("Read")
        );
    }

    #[test]
    fn too_many_entries_are_refused_past_the_limit() {
        let text = vec!["Read"; MAX_ENTRIES + 3].join(" ");
        let policy = ToolPolicy::parse(&text);
        assert_eq!(
            (policy.patterns().len(), policy.refused().len()),
            (MAX_ENTRIES, 3)
        );
    }
}
