//! Diagnostics: what a load or validation run found, each tied to a stable rule.
//!
//! Every problem the library can report is a [`Rule`] with a stable kebab-case code. The
//! severity of a rule depends only on the [`Profile`] in force, so a host can rely on
//! `(code, profile) -> severity` never changing silently between runs.

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// Which set of rules a load or validation run applies.
///
/// * [`Profile::Spec`] is the Agent Skills standard applied strictly: what `validate` uses.
/// * [`Profile::Lenient`] is the default for loading skills into an agent: it follows the
///   standard's client guide so that real-world skills load with warnings instead of
///   vanishing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Profile {
    /// The standard, strictly.
    Spec,
    /// What an agent should load: the standard, with the client guide's leniencies.
    #[default]
    Lenient,
}

impl Profile {
    /// The profile's name as used on command lines and in JSON (`spec`, `lenient`).
    pub const fn as_str(self) -> &'static str {
        match self {
            Profile::Spec => "spec",
            Profile::Lenient => "lenient",
        }
    }
}

impl std::str::FromStr for Profile {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "spec" => Ok(Profile::Spec),
            "lenient" => Ok(Profile::Lenient),
            other => Err(format!(
                "unknown profile `{other}` (expected `spec` or `lenient`)"
            )),
        }
    }
}

/// How serious a diagnostic is.
///
/// Ordered from least to most serious, so `max()` over a set of diagnostics gives the worst.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// Worth knowing; nothing is wrong.
    Info,
    /// Something is off but the skill is usable.
    Warning,
    /// The skill is invalid under the profile in force and is not loaded.
    Error,
}

impl Severity {
    /// `error`, `warning` or `info`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Severity::Info => "info",
            Severity::Warning => "warning",
            Severity::Error => "error",
        }
    }
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

macro_rules! rules {
    ($( $(#[doc = $doc:literal])+ $variant:ident = $code:literal, $spec:ident, $lenient:ident; )*) => {
        /// Every rule the library checks, each with a stable kebab-case [`code`](Rule::code).
        ///
        /// The severity of each rule under each profile is fixed by [`Rule::severity`]:
        ///
        #[doc = include_str!("../RULES.md")]
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        #[non_exhaustive]
        pub enum Rule {
            $( $(#[doc = $doc])+ $variant, )*
        }

        impl Rule {
            /// Every rule, in declaration order.
            pub const ALL: &'static [Rule] = &[ $( Rule::$variant, )* ];

            /// The rule's stable kebab-case code, e.g. `name-too-long`.
            pub const fn code(self) -> &'static str {
                match self { $( Rule::$variant => $code, )* }
            }

            /// The severity this rule carries under `profile`.
            pub const fn severity(self, profile: Profile) -> Severity {
                match profile {
                    Profile::Spec => match self { $( Rule::$variant => Severity::$spec, )* },
                    Profile::Lenient => match self { $( Rule::$variant => Severity::$lenient, )* },
                }
            }

            /// A one-line account of what the rule checks.
            pub const fn summary(self) -> &'static str {
                match self { $( Rule::$variant => concat!($($doc),+).trim_ascii_start(), )* }
            }

            /// Looks a rule up by its code.
            pub fn from_code(code: &str) -> Option<Rule> {
                match code {
                    $( $code => Some(Rule::$variant), )*
                    _ => None,
                }
            }
        }
    };
}

rules! {
    // ---- Finding and reading SKILL.md -------------------------------------------------
    /// The directory holds neither `SKILL.md` nor `skill.json`.
    SkillMdMissing = "skill-md-missing", Error, Error;
    /// The entry file is named `skill.md` (lowercase) instead of `SKILL.md`.
    SkillMdLowercase = "skill-md-lowercase", Error, Warning;
    /// `SKILL.md` exists but is a directory, a device, a FIFO or another non-file.
    SkillMdNotFile = "skill-md-not-file", Error, Error;
    /// `SKILL.md` could not be read (permissions, I/O error).
    SkillMdUnreadable = "skill-md-unreadable", Error, Error;
    /// `SKILL.md` is larger than the configured read limit; it is not read.
    SkillMdTooLarge = "skill-md-too-large", Error, Error;
    /// `SKILL.md` is a symlink whose target lies outside the skill directory.
    SkillMdSymlinkEscape = "skill-md-symlink-escape", Error, Error;
    /// The bytes (of SKILL.md or skill.json) are UTF-16 or UTF-32, not UTF-8.
    EncodingUtf16 = "encoding-utf16", Error, Error;
    /// The bytes (of SKILL.md or skill.json) are not valid UTF-8.
    EncodingInvalidUtf8 = "encoding-invalid-utf8", Error, Error;
    /// A UTF-8 byte-order mark was found and stripped.
    EncodingBom = "encoding-bom", Warning, Warning;
    /// `SKILL.md` has no frontmatter but a `skill.json` defines the skill (seed 001's layout,
    /// where SKILL.md is optional documentation); it is read as documentation.
    SkillMdDocumentationOnly = "skill-md-documentation-only", Warning, Warning;
    /// `SKILL.md` has more lines than recommended (500).
    SkillMdTooManyLines = "skill-md-too-many-lines", Warning, Warning;
    /// The Markdown body is over the recommended token budget (about 5000 tokens).
    BodyTooManyTokens = "body-too-many-tokens", Warning, Warning;

    // ---- Frontmatter and YAML ---------------------------------------------------------
    /// The file does not start with a `---` line.
    FrontmatterMissing = "frontmatter-missing", Error, Error;
    /// No closing `---` line follows the opening one.
    FrontmatterUnclosed = "frontmatter-unclosed", Error, Error;
    /// The frontmatter is YAML but not a mapping (a list, a scalar).
    FrontmatterNotMapping = "frontmatter-not-mapping", Error, Error;
    /// The frontmatter is not valid YAML.
    YamlSyntax = "yaml-syntax", Error, Error;
    /// A mapping repeats a key.
    YamlDuplicateKey = "yaml-duplicate-key", Error, Error;
    /// A mapping key is a sequence or a mapping.
    YamlNonScalarKey = "yaml-non-scalar-key", Error, Error;
    /// The YAML exceeds a safety limit (depth, aliases, expanded size): a likely YAML bomb.
    YamlLimitExceeded = "yaml-limit-exceeded", Error, Error;
    /// The frontmatter only parsed after quoting plain values containing `: ` (Lenient).
    YamlRetriedQuoted = "yaml-retried-quoted", Warning, Warning;

    // ---- Frontmatter fields -----------------------------------------------------------
    /// A top-level key the standard does not define.
    UnknownField = "unknown-field", Error, Warning;
    /// A top-level key of an extension set the host enabled (Claude Code's, Codex's, this
    /// library's), reported under Spec only.
    ExtensionField = "extension-field", Warning, Info;
    /// `name` is absent, null or blank.
    NameMissing = "name-missing", Error, Error;
    /// `name` is a sequence or a mapping.
    NameNotString = "name-not-string", Error, Error;
    /// `name` is longer than 64 characters.
    NameTooLong = "name-too-long", Error, Warning;
    /// `name` breaks only the lowercase and no-space rules (a display name such as
    /// `OpenAI Automation`): Lenient loads it under its directory's name.
    NameDisplayForm = "name-display-form", Error, Warning;
    /// `name` is not equal to its lowercase form.
    NameNotLowercase = "name-not-lowercase", Error, Error;
    /// `name` starts or ends with `-`.
    NameHyphenEdge = "name-hyphen-edge", Error, Error;
    /// `name` contains `--`.
    NameConsecutiveHyphens = "name-consecutive-hyphens", Error, Error;
    /// `name` contains a character that is not a Unicode letter, digit or `-`.
    NameInvalidCharacters = "name-invalid-characters", Error, Error;
    /// `name` changes under NFKC beyond canonical equivalence (fullwidth, math letters,
    /// ligatures...): a lookalike of another name.
    NameLookalike = "name-lookalike", Error, Error;
    /// `name` differs from the skill directory's name.
    NameDirectoryMismatch = "name-directory-mismatch", Error, Warning;
    /// `description` is absent, null or blank.
    DescriptionMissing = "description-missing", Error, Error;
    /// `description` is a sequence or a mapping.
    DescriptionNotString = "description-not-string", Error, Error;
    /// `description` is longer than 1024 characters.
    DescriptionTooLong = "description-too-long", Error, Warning;
    /// `compatibility` is present but empty.
    CompatibilityEmpty = "compatibility-empty", Error, Error;
    /// `compatibility` is longer than 500 characters.
    CompatibilityTooLong = "compatibility-too-long", Error, Error;
    /// `compatibility` is not a string.
    CompatibilityNotString = "compatibility-not-string", Error, Warning;
    /// `metadata` is not a mapping.
    MetadataNotMap = "metadata-not-map", Error, Warning;
    /// A `metadata` value is a sequence or a mapping.
    MetadataNestedValue = "metadata-nested-value", Error, Warning;
    /// A `metadata` value is null; the entry is dropped.
    MetadataNullValue = "metadata-null-value", Warning, Warning;
    /// `license` is a list of strings (Lenient joins it).
    LicenseList = "license-list", Error, Warning;
    /// `license` is neither a string nor a list of strings.
    LicenseNotString = "license-not-string", Error, Error;
    /// `allowed-tools` is a list of strings (Lenient joins it with spaces).
    AllowedToolsList = "allowed-tools-list", Error, Warning;
    /// `allowed-tools` is neither a string nor a list of strings.
    AllowedToolsNotString = "allowed-tools-not-string", Error, Error;
    /// An extension field (`tags`, `category`, `requires-tools`, `version`) has the wrong
    /// shape or content.
    ExtensionFieldInvalid = "extension-field-invalid", Warning, Warning;

    // ---- skill.json v2 manifest -------------------------------------------------------
    /// `skill.json` could not be read: not a file, a symlink out of the skill, or too large.
    ManifestUnreadable = "skill-json-unreadable", Error, Error;
    /// `skill.json` is not valid JSON.
    ManifestSyntax = "skill-json-syntax", Error, Error;
    /// `skill.json` is JSON but not an object.
    ManifestNotObject = "skill-json-not-object", Error, Error;
    /// A required key is missing from `skill.json`.
    ManifestMissingKey = "skill-json-missing-key", Error, Error;
    /// A `skill.json` key has the wrong JSON type.
    ManifestWrongType = "skill-json-wrong-type", Error, Error;
    /// `skill.json` exceeds a safety limit (too many tools or regular expressions).
    ManifestLimitExceeded = "skill-json-limit-exceeded", Error, Error;
    /// A JSON object in `skill.json` repeats a key.
    ManifestDuplicateKey = "skill-json-duplicate-key", Error, Error;
    /// A key `skill.json` v2 does not define (kept).
    ManifestUnknownKey = "skill-json-unknown-key", Warning, Info;
    /// The manifest name is not `<prefix>-<skill_name>`.
    ManifestNameFormat = "skill-json-name-format", Error, Error;
    /// The manifest's `<skill_name>` differs from the directory name.
    ManifestNameDirectoryMismatch = "skill-json-name-directory-mismatch", Error, Warning;
    /// `SKILL.md` and `skill.json` name different skills (`-` and `_` count as the same).
    ManifestNameDisagrees = "skill-json-name-disagrees", Error, Error;
    /// `version` is not a semantic version.
    ManifestVersionInvalid = "skill-json-version-invalid", Error, Warning;
    /// `layer` is not an integer from 0 to 4.
    ManifestLayerInvalid = "skill-json-layer-invalid", Error, Error;
    /// `status` is not one of `active`, `stub`, `deprecated`, `experimental`.
    ManifestStatusInvalid = "skill-json-status-invalid", Error, Warning;
    /// A `focus_affinity` entry is not a known focus.
    ManifestFocusUnknown = "skill-json-focus-unknown", Warning, Warning;
    /// A dependency is blank, repeated, or the skill itself.
    ManifestDependencyInvalid = "skill-json-dependency-invalid", Error, Warning;
    /// A tool's name is missing or not snake_case (at most 64 characters).
    ToolNameInvalid = "tool-name-invalid", Error, Error;
    /// Two tools share a name.
    ToolNameDuplicate = "tool-name-duplicate", Error, Error;
    /// A tool has no description.
    ToolDescriptionMissing = "tool-description-missing", Error, Error;
    /// A tool has neither `input_schema` nor `parameters`.
    ToolSchemaMissing = "tool-schema-missing", Error, Error;
    /// A tool uses the `parameters` alias instead of `input_schema`.
    ToolParametersAlias = "tool-parameters-alias", Warning, Warning;
    /// A tool has both `input_schema` and `parameters`.
    ToolSchemaConflict = "tool-schema-conflict", Error, Error;
    /// A tool's schema is not a JSON object with `"type": "object"`.
    ToolSchemaNotObject = "tool-schema-not-object", Error, Error;
    /// A tool's schema is not a valid JSON Schema.
    ToolSchemaInvalid = "tool-schema-invalid", Error, Error;
    /// A name in a tool schema's `required` is not in its `properties`.
    ToolRequiredUnknown = "tool-required-unknown", Error, Error;

    // ---- Supporting files -------------------------------------------------------------
    /// A file path is absolute, has `..`, control characters, is not UTF-8, or is over
    /// 256 characters. The file is left out of the manifest.
    FilePathInvalid = "file-path-invalid", Error, Error;
    /// A file is larger than the per-file limit (100 KB by default).
    FileTooLarge = "file-too-large", Warning, Warning;
    /// The skill's files together are larger than the per-skill limit (1 MB by default).
    SkillTooLarge = "skill-too-large", Warning, Warning;
    /// A file is not text (NUL bytes or invalid UTF-8).
    FileBinary = "file-binary", Warning, Warning;
    /// A symlink inside the skill points outside it; it is left out of the manifest.
    FileSymlinkEscape = "file-symlink-escape", Error, Warning;
    /// A supporting file could not be read; it is left out of the manifest.
    FileUnreadable = "file-unreadable", Warning, Warning;
    /// The skill has more files or deeper directories than the walk limits allow.
    FileWalkLimit = "file-walk-limit", Warning, Warning;

    // ---- Discovery ----------------------------------------------------------------------
    /// The path to validate or scan does not exist.
    PathNotFound = "path-not-found", Error, Error;
    /// The path exists but holds no skill at all.
    NoSkillFound = "no-skill-found", Error, Error;
    /// A scan root does not exist (roots are optional, so this is informational).
    ScanRootMissing = "scan-root-missing", Info, Info;
    /// A directory under a scan root could not be listed.
    ScanDirectoryUnreadable = "scan-directory-unreadable", Warning, Warning;
    /// The scan stopped descending at the depth limit.
    ScanDepthLimit = "scan-depth-limit", Warning, Warning;
    /// The scan stopped at the per-root directory limit.
    ScanDirectoryLimit = "scan-directory-limit", Warning, Warning;
    /// A directory symlink leads back to a directory already scanned; not followed again.
    ScanSymlinkCycle = "scan-symlink-cycle", Info, Info;

    // ---- Registry -----------------------------------------------------------------------
    /// Two skills share a name; the later one is not registered.
    DuplicateSkillName = "duplicate-skill-name", Error, Error;
    /// A skill depends on a skill that is not registered.
    DependencyMissing = "dependency-missing", Error, Error;
    /// Skills depend on each other in a cycle.
    DependencyCycle = "dependency-cycle", Error, Error;
    /// A skill depends on a skill in a higher layer.
    LayerViolation = "layer-violation", Error, Error;
    /// A layer-0 (kernel) skill has dependencies.
    LayerKernelDependencies = "layer-kernel-dependencies", Error, Error;
    /// A skill other than the gateway sits in the gateway layer, or the gateway sits elsewhere.
    LayerGatewayReserved = "layer-gateway-reserved", Error, Error;
    /// A skill's layer is above the policy's highest layer.
    LayerOutOfRange = "layer-out-of-range", Error, Error;
    /// A native skill's `initialize` failed.
    InitializationFailed = "initialization-failed", Error, Error;
    /// A skill was not initialized because a dependency is unavailable.
    DependencyUnavailable = "dependency-unavailable", Error, Error;
}

impl fmt::Display for Rule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.code())
    }
}

impl Serialize for Rule {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.code())
    }
}

impl<'de> Deserialize<'de> for Rule {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let code = String::deserialize(deserializer)?;
        Rule::from_code(&code)
            .ok_or_else(|| serde::de::Error::custom(format!("unknown rule code `{code}`")))
    }
}

/// One problem (or note) found while loading or validating.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Diagnostic {
    /// The rule; serialised as its code.
    #[serde(rename = "code")]
    pub rule: Rule,
    /// The severity under the profile that produced the diagnostic.
    pub severity: Severity,
    /// A human-readable account of the problem.
    pub message: String,
    /// The 1-based line in [`file`](Self::file) where one applies.
    pub line: Option<usize>,
    /// The file the diagnostic concerns, relative to the skill directory (`SKILL.md`,
    /// `skill.json`, `scripts/run.sh`), or the path scanned for discovery diagnostics.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub file: Option<String>,
}

impl Diagnostic {
    /// A diagnostic for `rule` with the severity `profile` gives it. The message is passed
    /// through [`shown`], so skill-supplied text in it cannot carry terminal controls.
    pub fn new(rule: Rule, profile: Profile, message: impl Into<String>) -> Self {
        let message = message.into();
        let message = match shown(&message) {
            std::borrow::Cow::Borrowed(_) => message,
            std::borrow::Cow::Owned(escaped) => escaped,
        };
        Diagnostic {
            rule,
            severity: rule.severity(profile),
            message,
            line: None,
            file: None,
        }
    }

    /// Sets the 1-based line.
    #[must_use]
    pub fn at_line(mut self, line: usize) -> Self {
        self.line = Some(line);
        self
    }

    /// Sets the 1-based line if there is one.
    #[must_use]
    pub fn at_optional_line(mut self, line: Option<usize>) -> Self {
        self.line = line;
        self
    }

    /// Sets the file the diagnostic concerns (passed through [`shown`]).
    #[must_use]
    pub fn in_file(mut self, file: impl Into<String>) -> Self {
        self.file = Some(shown(&file.into()).into_owned());
        self
    }

    /// The rule's stable code.
    pub fn code(&self) -> &'static str {
        self.rule.code()
    }

    /// Whether this diagnostic makes its subject invalid.
    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}[{}]", self.severity, self.rule.code())?;
        match (&self.file, self.line) {
            (Some(file), Some(line)) => write!(f, " {file}:{line}")?,
            (Some(file), None) => write!(f, " {file}")?,
            (None, Some(line)) => write!(f, " line {line}")?,
            (None, None) => {}
        }
        write!(f, ": {}", self.message)
    }
}

/// Text from a skill, made safe to put in a message.
///
/// **Threat.** Names, keys and paths come from untrusted skills, and diagnostics are printed
/// to terminals and logs. An escape sequence in a skill name (`\x1b]0;...\x07`, `\x1b[2J`)
/// would retitle or clear the reader's terminal; a bidirectional override (U+202E) would make
/// the message say something other than what it holds.
///
/// **Guarantee.** Every control character (Unicode category Cc) and format character (Cf:
/// bidirectional controls, zero-width characters, the BOM) is written as a `\u{..}`
/// escape; all other text is unchanged, and text without such characters is borrowed.
///
/// ```
/// use skills_core::diagnostic::shown;
///
/// assert_eq!(shown("pdf-tools"), "pdf-tools");
/// assert_eq!(shown("evil\u{1b}[2J\u{202e}"), "evil\\u{1b}[2J\\u{202e}");
/// ```
pub fn shown(text: &str) -> std::borrow::Cow<'_, str> {
    use unicode_properties::{GeneralCategory, UnicodeGeneralCategory};
    let unsafe_char = |c: char| c.is_control() || c.general_category() == GeneralCategory::Format;
    if !text.chars().any(unsafe_char) {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if unsafe_char(c) {
            out.push_str(&format!("\\u{{{:x}}}", u32::from(c)));
        } else {
            out.push(c);
        }
    }
    std::borrow::Cow::Owned(out)
}

/// Whether any diagnostic in `diagnostics` is an error.
pub fn has_errors(diagnostics: &[Diagnostic]) -> bool {
    diagnostics.iter().any(Diagnostic::is_error)
}

/// Collects diagnostics for one file under one profile.
#[derive(Debug)]
pub(crate) struct Sink {
    pub(crate) profile: Profile,
    file: Option<&'static str>,
    pub(crate) items: Vec<Diagnostic>,
}

impl Sink {
    pub(crate) fn new(profile: Profile, file: Option<&'static str>) -> Self {
        Sink {
            profile,
            file,
            items: Vec::new(),
        }
    }

    pub(crate) fn push(&mut self, rule: Rule, line: Option<usize>, message: impl Into<String>) {
        let mut diagnostic = Diagnostic::new(rule, self.profile, message).at_optional_line(line);
        if let Some(file) = self.file {
            diagnostic = diagnostic.in_file(file);
        }
        self.items.push(diagnostic);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_unique_kebab_case_and_round_trip() {
        let mut seen = std::collections::BTreeSet::new();
        for rule in Rule::ALL {
            let code = rule.code();
            assert!(seen.insert(code), "duplicate code {code}");
            assert!(
                code.chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-'),
                "{code} is not kebab-case"
            );
            assert!(!code.starts_with('-') && !code.ends_with('-') && !code.contains("--"));
            assert_eq!(Rule::from_code(code), Some(*rule));
        }
        assert_eq!(Rule::from_code("no-such-rule"), None);
    }

    /// The rules table in RULES.md (included in the docs) must match the code. Run with
    /// `UPDATE_RULES=1` to rewrite it.
    #[test]
    fn rules_table_matches_the_code() {
        let mut table =
            String::from("| code | Spec | Lenient | what it checks |\n|---|---|---|---|\n");
        for rule in Rule::ALL {
            table.push_str(&format!(
                "| `{}` | {} | {} | {} |\n",
                rule.code(),
                rule.severity(Profile::Spec),
                rule.severity(Profile::Lenient),
                rule.summary().replace('|', "\\|")
            ));
        }
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/RULES.md");
        if std::env::var_os("UPDATE_RULES").is_some() {
            std::fs::write(path, &table).unwrap();
        }
        let on_disk = std::fs::read_to_string(path).unwrap_or_default();
        assert!(
            on_disk == table,
            "RULES.md is stale; rerun with UPDATE_RULES=1"
        );
    }

    #[test]
    fn lenient_is_never_stricter_than_spec() {
        for rule in Rule::ALL {
            assert!(
                rule.severity(Profile::Lenient) <= rule.severity(Profile::Spec),
                "{rule} is stricter in Lenient"
            );
        }
    }

    #[test]
    fn diagnostic_serialises_with_code_key() {
        let d = Diagnostic::new(Rule::NameTooLong, Profile::Spec, "too long").at_line(2);
        let json = serde_json::to_value(&d).unwrap();
        assert_eq!(json["code"], "name-too-long");
        assert_eq!(json["severity"], "error");
        assert_eq!(json["line"], 2);
        let back: Diagnostic = serde_json::from_value(json).unwrap();
        assert_eq!(back, d);
        assert_eq!(
            Diagnostic::new(Rule::NameTooLong, Profile::Lenient, "x").severity,
            Severity::Warning
        );
    }

    #[test]
    fn messages_and_files_never_carry_terminal_controls() {
        let d = Diagnostic::new(
            Rule::NameNotLowercase,
            Profile::Spec,
            "name `a\u{1b}]0;x\u{7}\u{202e}b`",
        )
        .in_file("dir\u{1b}[2J/SKILL.md");
        assert_eq!(d.message, "name `a\\u{1b}]0;x\\u{7}\\u{202e}b`");
        assert_eq!(d.file.as_deref(), Some("dir\\u{1b}[2J/SKILL.md"));
        assert!(!d.to_string().chars().any(|c| c.is_control()));
        assert!(matches!(
            shown("plain é 技能"),
            std::borrow::Cow::Borrowed(_)
        ));
    }

    #[test]
    fn profile_parses_from_cli_names() {
        assert_eq!("spec".parse::<Profile>(), Ok(Profile::Spec));
        assert_eq!("lenient".parse::<Profile>(), Ok(Profile::Lenient));
        assert!("strict".parse::<Profile>().is_err());
    }
}
