//! The SKILL.md frontmatter as data.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::yaml::{YamlValue, emit_mapping};

/// The keys the Agent Skills standard defines.
pub const STANDARD_KEYS: &[&str] = &[
    "name",
    "description",
    "license",
    "compatibility",
    "metadata",
    "allowed-tools",
];

/// Keys this library understands beyond the standard (the [`ExtensionSet::Library`] set).
///
/// [`ExtensionSet::Library`]: crate::extensions::ExtensionSet::Library
pub const EXTENSION_KEYS: &[&str] = crate::extensions::LIBRARY_KEYS;

/// Keys of the agent tools' extension sets (Claude Code's), recognised by the Lenient
/// profile; see [`crate::extensions`].
pub const CLIENT_KEYS: &[&str] = crate::extensions::CLAUDE_CODE_KEYS;

/// The frontmatter of a SKILL.md: the standard's fields, this library's extension fields, and
/// every other key kept as it was written.
///
/// ```
/// use skills_core::Frontmatter;
///
/// let mut fm = Frontmatter::new("pdf-tools", "Extract text and tables from PDF files.");
/// fm.license = Some("MIT".into());
/// fm.tags = vec!["pdf".into(), "documents".into()];
/// let text = fm.to_yaml();
/// assert!(text.starts_with("name: pdf-tools\n"));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct Frontmatter {
    /// The skill's name: trimmed and in Unicode NFC.
    pub name: String,
    /// What the skill does and when to use it, exactly as parsed.
    pub description: String,
    /// A licence name or the name of a bundled licence file.
    pub license: Option<String>,
    /// Environment requirements.
    pub compatibility: Option<String>,
    /// Free-form string metadata.
    pub metadata: BTreeMap<String, String>,
    /// The experimental `allowed-tools` string (space-separated, e.g. `Bash(git:*) Read`).
    pub allowed_tools: Option<String>,
    /// Extension: tags for search and grouping.
    pub tags: Vec<String>,
    /// Extension: a category.
    pub category: Option<String>,
    /// Extension: tools the skill needs the agent to have.
    pub requires_tools: Vec<String>,
    /// Extension: the skill's version, as written.
    pub version: Option<String>,
    /// Every other key, kept so the skill round-trips. An entry whose key is a standard or
    /// extension key is ignored on output: the typed field above is that key.
    pub extra: BTreeMap<String, YamlValue>,
}

/// Serialises as the frontmatter's keys: the same entries, in the same order, as
/// [`Frontmatter::to_yaml`] writes.
impl Serialize for Frontmatter {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let entries = self.entries();
        let mut map = serializer.serialize_map(Some(entries.len()))?;
        for (key, value) in &entries {
            map.serialize_entry(key, value)?;
        }
        map.end()
    }
}

impl Frontmatter {
    /// Frontmatter with the two required fields and nothing else.
    pub fn new(name: impl Into<String>, description: impl Into<String>) -> Self {
        Frontmatter {
            name: name.into(),
            description: description.into(),
            ..Frontmatter::default()
        }
    }

    /// Claude Code's fields, typed (see [`crate::extensions`]).
    pub fn claude_code(&self) -> crate::extensions::ClaudeCodeFields {
        crate::extensions::ClaudeCodeFields::from_frontmatter(self)
    }

    /// Codex's `metadata.short-description`, when set.
    pub fn short_description(&self) -> Option<&str> {
        self.metadata
            .get(crate::extensions::CODEX_SHORT_DESCRIPTION)
            .map(String::as_str)
    }

    /// Whether the model may pick the skill by itself: false when Claude Code's
    /// `disable-model-invocation` is true.
    pub fn model_invocable(&self) -> bool {
        !self.claude_code().disable_model_invocation
    }

    /// The entries of `allowed-tools`: split on whitespace outside parentheses, so
    /// `Bash(git log:*) Read` gives `["Bash(git log:*)", "Read"]`.
    pub fn allowed_tools_list(&self) -> Vec<String> {
        let Some(text) = &self.allowed_tools else {
            return Vec::new();
        };
        let mut items = Vec::new();
        let mut current = String::new();
        let mut depth = 0usize;
        for c in text.chars() {
            match c {
                '(' => depth += 1,
                ')' => depth = depth.saturating_sub(1),
                c if c.is_whitespace() && depth == 0 => {
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

    /// The frontmatter as YAML (without the `---` fences). Standard keys come first in the
    /// standard's order, then the extension keys, then every other key in sorted order; empty
    /// optional fields are left out.
    ///
    /// Reading the result back gives an equal `Frontmatter` for every frontmatter that
    /// reading produces; that is, whenever `name` is trimmed and in NFC, every tag matches
    /// `[a-z0-9-]+` (at most 20), and `extra` holds no standard or extension key and nests
    /// no deeper than the YAML limits allow.
    pub fn to_yaml(&self) -> String {
        let mut out = String::new();
        emit_mapping(&self.entries(), &mut out);
        out
    }

    /// The keys and values written, in order.
    fn entries(&self) -> Vec<(String, YamlValue)> {
        let mut entries: Vec<(String, YamlValue)> = vec![
            ("name".into(), YamlValue::String(self.name.clone())),
            (
                "description".into(),
                YamlValue::String(self.description.clone()),
            ),
        ];
        let push_str = |entries: &mut Vec<(String, YamlValue)>, key: &str, v: &Option<String>| {
            if let Some(v) = v {
                entries.push((key.into(), YamlValue::String(v.clone())));
            }
        };
        push_str(&mut entries, "license", &self.license);
        push_str(&mut entries, "compatibility", &self.compatibility);
        if !self.metadata.is_empty() {
            entries.push((
                "metadata".into(),
                YamlValue::Mapping(
                    self.metadata
                        .iter()
                        .map(|(k, v)| (k.clone(), YamlValue::String(v.clone())))
                        .collect(),
                ),
            ));
        }
        push_str(&mut entries, "allowed-tools", &self.allowed_tools);
        let list = |items: &[String]| {
            YamlValue::Sequence(items.iter().cloned().map(YamlValue::String).collect())
        };
        if !self.tags.is_empty() {
            entries.push(("tags".into(), list(&self.tags)));
        }
        push_str(&mut entries, "category", &self.category);
        if !self.requires_tools.is_empty() {
            entries.push(("requires-tools".into(), list(&self.requires_tools)));
        }
        push_str(&mut entries, "version", &self.version);
        for (key, value) in &self.extra {
            if !STANDARD_KEYS.contains(&key.as_str()) && !EXTENSION_KEYS.contains(&key.as_str()) {
                entries.push((key.clone(), value.clone()));
            }
        }
        entries
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn allowed_tools_split_respects_parentheses() {
        let mut fm = Frontmatter::new("a", "b");
        fm.allowed_tools = Some("Bash(git log:*)  Read\tWrite(src/**)".into());
        assert_eq!(
            fm.allowed_tools_list(),
            vec!["Bash(git log:*)", "Read", "Write(src/**)"]
        );
        fm.allowed_tools = None;
        assert!(fm.allowed_tools_list().is_empty());
    }

    #[test]
    fn yaml_orders_keys_and_omits_empty_fields() {
        let mut fm = Frontmatter::new("a", "b");
        fm.extra.insert("zeta".into(), YamlValue::Bool(true));
        fm.extra
            .insert("argument-hint".into(), YamlValue::String("x".into()));
        fm.version = Some("1.0".into());
        assert_eq!(
            fm.to_yaml(),
            "name: a\ndescription: b\nversion: \"1.0\"\nargument-hint: x\nzeta: true\n"
        );
    }

    #[test]
    fn extra_never_shadows_a_typed_field() {
        let mut fm = Frontmatter::new("a", "b");
        fm.extra
            .insert("name".into(), YamlValue::String("evil".into()));
        fm.extra.insert("tags".into(), YamlValue::Null);
        fm.extra.insert("other".into(), YamlValue::Null);
        assert_eq!(fm.to_yaml(), "name: a\ndescription: b\nother: null\n");
        assert_eq!(
            serde_json::to_value(&fm).unwrap(),
            serde_json::json!({"name": "a", "description": "b", "other": null})
        );
    }

    #[test]
    fn json_uses_the_frontmatter_key_names() {
        let mut fm = Frontmatter::new("a", "b");
        fm.allowed_tools = Some("Read".into());
        fm.requires_tools = vec!["git".into()];
        let json = serde_json::to_value(&fm).unwrap();
        assert_eq!(
            json,
            serde_json::json!({"name": "a", "description": "b", "allowed-tools": "Read", "requires-tools": ["git"]})
        );
    }
}
