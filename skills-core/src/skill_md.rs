//! Reading and writing SKILL.md: framing, YAML, and every frontmatter rule.

use crate::diagnostic::{Diagnostic, Profile, Rule, Sink, has_errors};
use crate::error::Error;
use crate::extensions::ExtensionSet;
use crate::frontmatter::{Frontmatter, STANDARD_KEYS};
use crate::yaml::{self, Entry, Fatal, Node, NodeKind, Problem, ScalarKind, YamlLimits, YamlValue};
use crate::{framing, name, text};

/// The most characters a description may have.
pub const MAX_DESCRIPTION_CHARS: usize = 1024;
/// The most characters `compatibility` may have.
pub const MAX_COMPATIBILITY_CHARS: usize = 500;
/// The most tags (seed 002, section 6.3).
pub const MAX_TAGS: usize = 20;

/// How to read a SKILL.md.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ParseOptions {
    /// The rules to apply.
    pub profile: Profile,
    /// Bounds on the YAML frontmatter.
    pub yaml_limits: YamlLimits,
    /// More lines than this in SKILL.md draw a warning (the standard recommends under 500).
    pub max_lines: usize,
    /// A body estimated above this many tokens draws a warning (the standard recommends
    /// under 5000). Tokens are estimated as one per four characters.
    pub max_body_tokens: usize,
    /// The extension sets whose fields are recognised; `None`: the profile's default (every
    /// set under Lenient, none under Spec). Under Spec a field of an enabled set is an
    /// `extension-field` warning naming the set, not an `unknown-field` error.
    pub extensions: Option<Vec<ExtensionSet>>,
}

impl Default for ParseOptions {
    fn default() -> Self {
        ParseOptions {
            profile: Profile::default(),
            yaml_limits: YamlLimits::default(),
            max_lines: 500,
            max_body_tokens: 5000,
            extensions: None,
        }
    }
}

impl ParseOptions {
    /// Default options under `profile`.
    pub fn for_profile(profile: Profile) -> Self {
        ParseOptions {
            profile,
            ..ParseOptions::default()
        }
    }

    /// The same options recognising exactly `sets`' fields.
    ///
    /// ```
    /// use skills_core::{ExtensionSet, ParseOptions, Profile, SkillMd};
    ///
    /// let text = "---\nname: deploy\ndescription: Ship it.\ndisable-model-invocation: true\n---\n";
    /// let plain = SkillMd::parse_str(text, None, &ParseOptions::for_profile(Profile::Spec));
    /// assert_eq!(plain.diagnostics[0].code(), "unknown-field");
    /// let options = ParseOptions::for_profile(Profile::Spec).with_extensions(&[ExtensionSet::ClaudeCode]);
    /// let with_set = SkillMd::parse_str(text, None, &options);
    /// assert!(with_set.is_valid());
    /// assert_eq!(with_set.diagnostics[0].code(), "extension-field");
    /// ```
    pub fn with_extensions(mut self, sets: &[ExtensionSet]) -> Self {
        self.extensions = Some(sets.to_vec());
        self
    }

    /// The extension sets in effect.
    pub fn extension_sets(&self) -> Vec<ExtensionSet> {
        match (&self.extensions, self.profile) {
            (Some(sets), _) => sets.clone(),
            (None, Profile::Lenient) => ExtensionSet::ALL.to_vec(),
            (None, Profile::Spec) => Vec::new(),
        }
    }
}

/// A SKILL.md: frontmatter and Markdown body.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[non_exhaustive]
pub struct SkillMd {
    /// The frontmatter.
    pub frontmatter: Frontmatter,
    /// The Markdown after the closing `---` line, with LF line endings.
    pub body: String,
}

/// The outcome of reading a SKILL.md: the document when the frontmatter could be read at all,
/// and every diagnostic.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ParsedSkillMd {
    /// The document, present whenever the frontmatter was a readable YAML mapping, even if
    /// some fields break rules (see `diagnostics`).
    pub document: Option<SkillMd>,
    /// Every problem found: file-level ones first, then by line.
    pub diagnostics: Vec<Diagnostic>,
}

impl ParsedSkillMd {
    /// True when no diagnostic is an error.
    pub fn is_valid(&self) -> bool {
        self.document.is_some() && !has_errors(&self.diagnostics)
    }

    /// The document if valid, or an [`Error::Invalid`] carrying every diagnostic.
    pub fn into_result(self) -> Result<SkillMd, Error> {
        match self.document {
            Some(document) if !has_errors(&self.diagnostics) => Ok(document),
            _ => Err(Error::Invalid {
                diagnostics: self.diagnostics,
            }),
        }
    }
}

impl SkillMd {
    /// A document from its parts.
    pub fn new(frontmatter: Frontmatter, body: impl Into<String>) -> Self {
        SkillMd {
            frontmatter,
            body: body.into(),
        }
    }

    /// Reads a SKILL.md from its bytes. `directory` is the name of the directory holding it,
    /// for the name-matches-directory rule; pass `None` to skip that rule.
    ///
    /// Never panics and never stops at the first problem.
    ///
    /// ```
    /// use skills_core::{ParseOptions, Profile, SkillMd};
    ///
    /// let text = "---\nname: pdf-tools\ndescription: Work with PDFs.\nversion: 1.0\n---\n# PDF\n";
    /// let lenient = SkillMd::parse(text.as_bytes(), Some("pdf-tools"), &ParseOptions::default());
    /// assert!(lenient.is_valid());
    /// let doc = lenient.document.unwrap();
    /// assert_eq!(doc.frontmatter.version.as_deref(), Some("1.0"));
    ///
    /// // `version` is not a standard key, so the Spec profile rejects it.
    /// let spec = SkillMd::parse(text.as_bytes(), Some("pdf-tools"), &ParseOptions::for_profile(Profile::Spec));
    /// assert_eq!(spec.diagnostics[0].code(), "unknown-field");
    /// assert_eq!(spec.diagnostics[0].line, Some(4));
    /// ```
    pub fn parse(bytes: &[u8], directory: Option<&str>, options: &ParseOptions) -> ParsedSkillMd {
        let mut sink = Sink::new(options.profile, Some("SKILL.md"));
        let document = text::decode(bytes, &mut sink)
            .and_then(|text| read_document(&text, directory, options, &mut sink));
        // File-level diagnostics first, then by line; stable, so ties keep the order found.
        sink.items.sort_by_key(|d| d.line);
        ParsedSkillMd {
            document,
            diagnostics: sink.items,
        }
    }

    /// Reads a SKILL.md from text; see [`SkillMd::parse`].
    pub fn parse_str(text: &str, directory: Option<&str>, options: &ParseOptions) -> ParsedSkillMd {
        SkillMd::parse(text.as_bytes(), directory, options)
    }

    /// The document as SKILL.md text: `---`, the frontmatter YAML, `---`, the body.
    /// [`SkillMd::parse`] reads it back to an equal document whenever the frontmatter meets
    /// the condition on [`Frontmatter::to_yaml`] and the body has no carriage returns (read
    /// text always has LF line endings) — so always for a document `parse` returned.
    pub fn to_markdown(&self) -> String {
        let yaml = self.frontmatter.to_yaml();
        let mut out = String::with_capacity(yaml.len() + self.body.len() + 8);
        out.push_str("---\n");
        out.push_str(&yaml);
        out.push_str("---\n");
        out.push_str(&self.body);
        out
    }
}

fn read_document(
    text: &str,
    directory: Option<&str>,
    options: &ParseOptions,
    sink: &mut Sink,
) -> Option<SkillMd> {
    let lines = count_lines(text);
    if lines > options.max_lines {
        sink.push(
            Rule::SkillMdTooManyLines,
            None,
            format!(
                "SKILL.md has {lines} lines; keep it under {} and move detail into referenced files",
                options.max_lines
            ),
        );
    }
    let framed = match framing::split(text) {
        Ok(framed) => framed,
        Err((rule, line, message)) => {
            sink.push(rule, Some(line), message);
            return None;
        }
    };
    let tokens = framed.body.chars().count().div_ceil(4);
    if tokens > options.max_body_tokens {
        sink.push(
            Rule::BodyTooManyTokens,
            Some(framed.body_first_line),
            format!(
                "the body is about {tokens} tokens; keep it under {} and move detail into referenced files",
                options.max_body_tokens
            ),
        );
    }
    let offset = framed.yaml_first_line - 1;
    let doc = match yaml::read(framed.yaml, &options.yaml_limits) {
        Ok(doc) => doc,
        Err(fatal) => retry_quoted(framed.yaml, fatal, offset, options, sink)?,
    };
    for problem in &doc.problems {
        match problem {
            Problem::DuplicateKey {
                key,
                line,
                first_line,
            } => sink.push(
                Rule::YamlDuplicateKey,
                Some(line + offset),
                format!(
                    "key `{key}` appears again (first on line {}); the first value is kept",
                    first_line + offset
                ),
            ),
            Problem::NonScalarKey { line } => sink.push(
                Rule::YamlNonScalarKey,
                Some(line + offset),
                "a mapping key must be a scalar, not a sequence or mapping; the entry is ignored",
            ),
        }
    }
    let entries = match doc.root {
        None => Vec::new(),
        Some(Node {
            kind: NodeKind::Mapping(entries),
            ..
        }) => entries,
        Some(node) => {
            sink.push(
                Rule::FrontmatterNotMapping,
                Some(node.line + offset),
                "the frontmatter must be a YAML mapping of keys to values",
            );
            return None;
        }
    };
    let frontmatter = FieldReader {
        sink,
        offset,
        directory,
        extensions: options.extension_sets(),
    }
    .read(entries);
    Some(SkillMd {
        frontmatter,
        body: framed.body.to_owned(),
    })
}

/// The Lenient profile's single retry after quoting plain values that contain `: `.
fn retry_quoted(
    yaml_text: &str,
    fatal: Fatal,
    offset: usize,
    options: &ParseOptions,
    sink: &mut Sink,
) -> Option<yaml::Document> {
    if let (Profile::Lenient, Fatal::Syntax { .. }) = (options.profile, &fatal)
        && let Some(quoted) = yaml::quote_colon_values(yaml_text)
        && let Ok(doc) = yaml::read(&quoted, &options.yaml_limits)
    {
        sink.push(
            Rule::YamlRetriedQuoted,
            None,
            "the frontmatter is not valid YAML as written; it was read after quoting \
                     values that contain `: `",
        );
        return Some(doc);
    }
    let (rule, line, message) = match fatal {
        Fatal::Syntax { line, message } => (Rule::YamlSyntax, line, message),
        Fatal::Limit { line, message } => (Rule::YamlLimitExceeded, line, message),
    };
    sink.push(rule, Some(line + offset), message);
    None
}

fn count_lines(text: &str) -> usize {
    let newlines = text.bytes().filter(|&b| b == b'\n').count();
    newlines + usize::from(!text.is_empty() && !text.ends_with('\n'))
}

/// The shape of a value, for the type rules.
enum Shape<'a> {
    Null,
    Scalar(&'a str),
    Sequence(&'a [Node]),
    Mapping(&'a [Entry]),
}

fn shape(node: &Node) -> Shape<'_> {
    match &node.kind {
        NodeKind::Scalar {
            kind: ScalarKind::Null,
            ..
        } => Shape::Null,
        NodeKind::Scalar { text, .. } => Shape::Scalar(text),
        NodeKind::Sequence(items) => Shape::Sequence(items),
        NodeKind::Mapping(entries) => Shape::Mapping(entries),
    }
}

/// All items of a sequence as scalar text, or `None` if any item is not a scalar.
fn scalar_items(items: &[Node]) -> Option<Vec<String>> {
    items
        .iter()
        .map(|item| match shape(item) {
            Shape::Scalar(text) => Some(text.to_owned()),
            _ => None,
        })
        .collect()
}

struct FieldReader<'s, 'd> {
    sink: &'s mut Sink,
    offset: usize,
    directory: Option<&'d str>,
    extensions: Vec<ExtensionSet>,
}

impl FieldReader<'_, '_> {
    fn push(&mut self, rule: Rule, line: usize, message: impl Into<String>) {
        self.sink.push(rule, Some(line + self.offset), message);
    }

    fn read(mut self, entries: Vec<Entry>) -> Frontmatter {
        let mut fm = Frontmatter::default();
        let mut has_name = false;
        let mut has_description = false;
        for entry in entries {
            let line = entry.key_line;
            let key = entry.key.as_str();
            let is_standard = STANDARD_KEYS.contains(&key);
            if !is_standard {
                let set = ExtensionSet::of_key(key);
                match set {
                    Some(set) if self.extensions.contains(&set) => {
                        if self.sink.profile == Profile::Spec {
                            self.push(
                                Rule::ExtensionField,
                                line,
                                format!("`{key}` is a field of the {} extension set, not of the Agent Skills standard", set.as_str()),
                            );
                        }
                    }
                    _ => {
                        let hint = set
                            .map(|s| {
                                format!(
                                    "; it belongs to the {} extension set, which is not enabled",
                                    s.as_str()
                                )
                            })
                            .unwrap_or_default();
                        self.push(
                            Rule::UnknownField,
                            line,
                            format!(
                                "`{key}` is not a field of the Agent Skills standard (allowed: {}){hint}",
                                STANDARD_KEYS.join(", ")
                            ),
                        );
                    }
                }
            }
            match key {
                "name" => {
                    has_name = true;
                    self.name(&entry, &mut fm);
                }
                "description" => {
                    has_description = true;
                    self.description(&entry, &mut fm);
                }
                "license" => {
                    fm.license = self.string_or_list(
                        &entry,
                        Rule::LicenseList,
                        Rule::LicenseNotString,
                        ", ",
                    );
                }
                "compatibility" => self.compatibility(&entry, &mut fm),
                "metadata" => self.metadata(&entry, &mut fm),
                "allowed-tools" => {
                    fm.allowed_tools = self.string_or_list(
                        &entry,
                        Rule::AllowedToolsList,
                        Rule::AllowedToolsNotString,
                        " ",
                    );
                }
                "tags" => fm.tags = self.tags(&entry),
                "requires-tools" => fm.requires_tools = self.string_list(&entry),
                "category" => fm.category = self.extension_string(&entry),
                "version" => fm.version = self.extension_string(&entry),
                _ => {
                    fm.extra
                        .insert(entry.key.clone(), YamlValue::from_node(&entry.value));
                }
            }
        }
        if !has_name {
            self.sink
                .push(Rule::NameMissing, None, "missing required field `name`");
        }
        if !has_description {
            self.sink.push(
                Rule::DescriptionMissing,
                None,
                "missing required field `description`",
            );
        }
        fm
    }

    fn name(&mut self, entry: &Entry, fm: &mut Frontmatter) {
        let line = entry.key_line;
        match shape(&entry.value) {
            Shape::Null => self.push(Rule::NameMissing, line, "`name` is empty"),
            Shape::Scalar(text) => {
                fm.name = name::check(text, Some(line + self.offset), self.directory, self.sink);
            }
            Shape::Sequence(_) | Shape::Mapping(_) => self.push(
                Rule::NameNotString,
                line,
                "`name` must be a string, not a list or mapping",
            ),
        }
    }

    fn description(&mut self, entry: &Entry, fm: &mut Frontmatter) {
        let line = entry.key_line;
        match shape(&entry.value) {
            Shape::Null => self.push(Rule::DescriptionMissing, line, "`description` is empty"),
            Shape::Scalar(text) => {
                fm.description = text.to_owned();
                if text.trim().is_empty() {
                    self.push(
                        Rule::DescriptionMissing,
                        line,
                        "`description` must not be blank",
                    );
                }
                let chars = text.chars().count();
                if chars > MAX_DESCRIPTION_CHARS {
                    self.push(
                        Rule::DescriptionTooLong,
                        line,
                        format!(
                            "description is {chars} characters; the limit is {MAX_DESCRIPTION_CHARS}"
                        ),
                    );
                }
            }
            Shape::Sequence(_) | Shape::Mapping(_) => self.push(
                Rule::DescriptionNotString,
                line,
                "`description` must be a string, not a list or mapping",
            ),
        }
    }

    fn compatibility(&mut self, entry: &Entry, fm: &mut Frontmatter) {
        let line = entry.key_line;
        match shape(&entry.value) {
            Shape::Null => {}
            Shape::Scalar(text) => {
                let chars = text.chars().count();
                if text.trim().is_empty() {
                    self.push(
                        Rule::CompatibilityEmpty,
                        line,
                        "`compatibility` must be 1-500 characters when present; it is empty",
                    );
                } else if chars > MAX_COMPATIBILITY_CHARS {
                    self.push(
                        Rule::CompatibilityTooLong,
                        line,
                        format!(
                            "compatibility is {chars} characters; the limit is {MAX_COMPATIBILITY_CHARS}"
                        ),
                    );
                }
                fm.compatibility = Some(text.to_owned());
            }
            Shape::Sequence(_) | Shape::Mapping(_) => self.push(
                Rule::CompatibilityNotString,
                line,
                "`compatibility` must be a string; the value is ignored",
            ),
        }
    }

    fn metadata(&mut self, entry: &Entry, fm: &mut Frontmatter) {
        let entries = match shape(&entry.value) {
            Shape::Null => return,
            Shape::Mapping(entries) => entries,
            Shape::Scalar(_) | Shape::Sequence(_) => {
                self.push(
                    Rule::MetadataNotMap,
                    entry.key_line,
                    "`metadata` must be a mapping of string keys to string values; it is ignored",
                );
                return;
            }
        };
        for item in entries {
            let line = item.key_line;
            match shape(&item.value) {
                Shape::Scalar(text) => {
                    fm.metadata.insert(item.key.clone(), text.to_owned());
                }
                Shape::Null => self.push(
                    Rule::MetadataNullValue,
                    line,
                    format!("`metadata.{}` is null and is dropped", item.key),
                ),
                Shape::Sequence(_) | Shape::Mapping(_) => self.push(
                    Rule::MetadataNestedValue,
                    line,
                    format!(
                        "`metadata.{}` must be a string, not a list or mapping; it is dropped",
                        item.key
                    ),
                ),
            }
        }
    }

    /// A string field that Lenient also accepts as a list of strings, joined by `joiner`.
    fn string_or_list(
        &mut self,
        entry: &Entry,
        list_rule: Rule,
        type_rule: Rule,
        joiner: &str,
    ) -> Option<String> {
        let key = &entry.key;
        let line = entry.key_line;
        match shape(&entry.value) {
            Shape::Null => None,
            Shape::Scalar(text) => Some(text.to_owned()),
            Shape::Sequence(items) => match scalar_items(items) {
                Some(items) => {
                    self.push(
                        list_rule,
                        line,
                        format!("`{key}` must be a single string, not a list"),
                    );
                    Some(items.join(joiner))
                }
                None => {
                    self.push(
                        type_rule,
                        line,
                        format!("`{key}` must be a string; its list holds non-strings"),
                    );
                    None
                }
            },
            Shape::Mapping(_) => {
                self.push(
                    type_rule,
                    line,
                    format!("`{key}` must be a string, not a mapping"),
                );
                None
            }
        }
    }

    fn extension_string(&mut self, entry: &Entry) -> Option<String> {
        match shape(&entry.value) {
            Shape::Null => None,
            Shape::Scalar(text) => Some(text.to_owned()),
            Shape::Sequence(_) | Shape::Mapping(_) => {
                let message = format!("`{}` must be a string; it is ignored", entry.key);
                self.push(Rule::ExtensionFieldInvalid, entry.key_line, message);
                None
            }
        }
    }

    /// A list of strings; a single string is accepted as a comma-separated list.
    fn string_list(&mut self, entry: &Entry) -> Vec<String> {
        let line = entry.key_line;
        match shape(&entry.value) {
            Shape::Null => Vec::new(),
            Shape::Scalar(text) => text
                .split(',')
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(str::to_owned)
                .collect(),
            Shape::Sequence(items) => match scalar_items(items) {
                Some(items) => items,
                None => {
                    let message = format!("`{}` must be a list of strings", entry.key);
                    self.push(Rule::ExtensionFieldInvalid, line, message);
                    Vec::new()
                }
            },
            Shape::Mapping(_) => {
                let message = format!("`{}` must be a list of strings, not a mapping", entry.key);
                self.push(Rule::ExtensionFieldInvalid, line, message);
                Vec::new()
            }
        }
    }

    /// Tags: a list of `[a-z0-9-]+` strings, at most [`MAX_TAGS`]; bad tags are dropped.
    fn tags(&mut self, entry: &Entry) -> Vec<String> {
        let line = entry.key_line;
        let mut tags = self.string_list(entry);
        let bad: Vec<String> = tags
            .iter()
            .filter(|t| {
                t.is_empty()
                    || !t
                        .bytes()
                        .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
            })
            .cloned()
            .collect();
        if !bad.is_empty() {
            self.push(
                Rule::ExtensionFieldInvalid,
                line,
                format!(
                    "tags must match [a-z0-9-]+; dropped: {}",
                    bad.iter()
                        .map(|t| format!("`{t}`"))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            );
            tags.retain(|t| !bad.contains(t));
        }
        if tags.len() > MAX_TAGS {
            self.push(
                Rule::ExtensionFieldInvalid,
                line,
                format!("{} tags; at most {MAX_TAGS} are kept", tags.len()),
            );
            tags.truncate(MAX_TAGS);
        }
        tags
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diagnostic::Severity;

    fn parse(text: &str, profile: Profile) -> ParsedSkillMd {
        SkillMd::parse_str(text, Some("my-skill"), &ParseOptions::for_profile(profile))
    }

    fn codes(text: &str, profile: Profile) -> Vec<(&'static str, Severity, Option<usize>)> {
        parse(text, profile)
            .diagnostics
            .iter()
            .map(|d| (d.code(), d.severity, d.line))
            .collect()
    }

    const VALID: &str = "---\nname: my-skill\ndescription: A test skill\n---\n# Body\n";

    #[test]
    fn a_valid_skill_has_no_diagnostics() {
        for profile in [Profile::Spec, Profile::Lenient] {
            let parsed = parse(VALID, profile);
            assert!(parsed.is_valid());
            assert!(parsed.diagnostics.is_empty());
            let doc = parsed.document.unwrap();
            assert_eq!(doc.frontmatter.name, "my-skill");
            assert_eq!(doc.body, "# Body\n");
        }
    }

    #[test]
    fn crlf_and_cr_files_read_like_lf() {
        let crlf = VALID.replace('\n', "\r\n");
        let cr = VALID.replace('\n', "\r");
        for text in [crlf, cr] {
            let parsed = parse(&text, Profile::Spec);
            assert!(parsed.diagnostics.is_empty(), "{:?}", parsed.diagnostics);
            assert_eq!(parsed.document.unwrap().body, "# Body\n");
        }
    }

    #[test]
    fn missing_fields_are_both_reported() {
        assert_eq!(
            codes("---\nlicense: MIT\n---\n", Profile::Spec),
            vec![
                ("name-missing", Severity::Error, None),
                ("description-missing", Severity::Error, None)
            ]
        );
        assert_eq!(
            codes("---\nname: ~\ndescription: null\n---\n", Profile::Spec),
            vec![
                ("name-missing", Severity::Error, Some(2)),
                ("description-missing", Severity::Error, Some(3))
            ]
        );
    }

    #[test]
    fn lenient_retries_after_quoting() {
        let text = "---\nname: my-skill\ndescription: Use when: the user asks\n---\n";
        assert_eq!(
            codes(text, Profile::Lenient),
            vec![("yaml-retried-quoted", Severity::Warning, None)]
        );
        assert_eq!(
            parse(text, Profile::Lenient)
                .document
                .unwrap()
                .frontmatter
                .description,
            "Use when: the user asks"
        );
        assert_eq!(
            codes(text, Profile::Spec),
            vec![("yaml-syntax", Severity::Error, Some(3))]
        );
    }

    #[test]
    fn round_trip_preserves_everything() {
        let text = "---\nname: my-skill\ndescription: |\n  Multi\n  line\nlicense: MIT\n\
                    metadata:\n  version: 1.0\n  author: me\nallowed-tools: Bash(git:*) Read\n\
                    tags: [a, b]\nversion: 2.0\nargument-hint: '[file]'\ncustom:\n  nested: [1, x, ~]\n---\nBody\n";
        let doc = parse(text, Profile::Lenient).into_result().unwrap();
        assert_eq!(doc.frontmatter.metadata["version"], "1.0");
        assert_eq!(doc.frontmatter.version.as_deref(), Some("2.0"));
        let again = parse(&doc.to_markdown(), Profile::Lenient)
            .into_result()
            .unwrap();
        assert_eq!(again, doc);
    }
}
