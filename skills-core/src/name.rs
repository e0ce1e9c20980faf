//! The rules for a skill's `name`.
//!
//! **Threat.** A skill name is how a user, a catalog and a model tell skills apart. A name
//! that merely *looks* like another (`ｐｄｆ` for `pdf`, `𝐩𝐝𝐟`, `ﬁle` for `file`) lets a
//! malicious skill impersonate a trusted one. The reference validator NFKC-normalises names
//! before checking them, which turns exactly those lookalikes into the names they imitate and
//! accepts them.
//!
//! **Guarantee.** A name is accepted only if it is already in its canonical form up to
//! canonical equivalence: NFKC(name) must equal NFC(name). Canonically equivalent spellings
//! (a decomposed `cafe\u{301}` against a composed `café` directory) are the same name;
//! compatibility variants are rejected with [`Rule::NameLookalike`].

use unicode_normalization::UnicodeNormalization;
use unicode_properties::{GeneralCategoryGroup, UnicodeGeneralCategory};

use crate::diagnostic::{Diagnostic, Profile, Rule, Sink, shown};

/// The most characters a name may have.
pub const MAX_NAME_CHARS: usize = 64;

/// Checks a skill name against every name rule, reporting all problems.
///
/// `raw` is the value as parsed; `directory` is the skill directory's own name as found (a
/// symlinked directory keeps its link name), when there is one. Returns the name trimmed and
/// in NFC, the form the library stores and compares.
pub(crate) fn check(
    raw: &str,
    line: Option<usize>,
    directory: Option<&str>,
    sink: &mut Sink,
) -> String {
    let trimmed = raw.trim();
    let name: String = trimmed.nfc().collect();
    if name.is_empty() {
        sink.push(Rule::NameMissing, line, "`name` must not be blank");
        return name;
    }

    let lookalikes = compatibility_characters(&name);
    if !lookalikes.is_empty() {
        let nfkc: String = name.nfkc().collect();
        sink.push(
            Rule::NameLookalike,
            line,
            format!(
                "skill name `{name}` contains compatibility characters ({}) that make it a \
                 lookalike of `{nfkc}`",
                describe(&lookalikes)
            ),
        );
    }

    if sink.profile == Profile::Lenient
        && lookalikes.is_empty()
        && let Some(id) = display_form(&name, directory)
    {
        sink.push(
            Rule::NameDisplayForm,
            line,
            format!("skill name `{name}` is a display name (capitals or spaces); loaded as `{id}`"),
        );
        return id;
    }

    let chars = name.chars().count();
    if chars > MAX_NAME_CHARS {
        sink.push(
            Rule::NameTooLong,
            line,
            format!("skill name is {chars} characters; the limit is {MAX_NAME_CHARS}"),
        );
    }

    if name != name.to_lowercase() {
        sink.push(
            Rule::NameNotLowercase,
            line,
            format!("skill name `{name}` must be lowercase"),
        );
    }

    if name.starts_with('-') || name.ends_with('-') {
        sink.push(
            Rule::NameHyphenEdge,
            line,
            "skill name must not start or end with a hyphen",
        );
    }

    if name.contains("--") {
        sink.push(
            Rule::NameConsecutiveHyphens,
            line,
            "skill name must not contain consecutive hyphens",
        );
    }

    let mut invalid: Vec<char> = name.chars().filter(|&c| !is_name_char(c)).collect();
    invalid.sort_unstable();
    invalid.dedup();
    if !invalid.is_empty() {
        sink.push(
            Rule::NameInvalidCharacters,
            line,
            format!(
                "skill name `{name}` contains {}; only letters, digits and hyphens are allowed",
                describe(&invalid)
            ),
        );
    }

    if let Some(directory) = directory {
        let directory: String = directory.nfc().collect();
        if directory != name {
            sink.push(
                Rule::NameDirectoryMismatch,
                line,
                format!("skill name `{name}` does not match its directory name `{directory}`"),
            );
        }
    }
    name
}

/// The id a display name (`OpenAI Automation`) loads under in Lenient: when lowercasing it
/// and joining its words with `-` gives a name breaking no other rule, the directory's name
/// (when it is itself a valid name), else that folded form. `None` when the name breaks
/// other rules too, or none at all.
fn display_form(name: &str, directory: Option<&str>) -> Option<String> {
    let folded = name
        .to_lowercase()
        .split_whitespace()
        .collect::<Vec<_>>()
        .join("-");
    if folded == name || !plain_valid(&folded) {
        return None;
    }
    match directory {
        Some(dir) => {
            let dir: String = dir.nfc().collect();
            plain_valid(&dir).then_some(dir)
        }
        None => Some(folded),
    }
}

/// Every rule but the directory match holds.
fn plain_valid(name: &str) -> bool {
    !name.is_empty()
        && name.chars().count() <= MAX_NAME_CHARS
        && name == name.to_lowercase()
        && !name.starts_with('-')
        && !name.ends_with('-')
        && !name.contains("--")
        && name.chars().all(is_name_char)
        && compatibility_characters(name).is_empty()
}

/// What keeps `name` from being a native skill's name, empty when nothing does.
///
/// A native skill joins loaded skills under one namespace (and one dependency graph), so its
/// name must be one a skill directory could carry (seed 001: "all three naming systems must
/// agree"): either seed 001's snake_case directory name (`api_client`, the form manifests'
/// `<skill_name>` takes; kebab-case too) or an Agent Skills name (every rule of `check`),
/// at most [`MAX_NAME_CHARS`] characters, and written in the canonical form (trimmed, NFC)
/// the registry compares.
pub fn native_problems(name: &str) -> Vec<Diagnostic> {
    let mut sink = Sink::new(Profile::Spec, None);
    if crate::manifest::is_skill_name(name) {
        let chars = name.chars().count();
        if chars > MAX_NAME_CHARS {
            sink.push(
                Rule::NameTooLong,
                None,
                format!("skill name is {chars} characters; the limit is {MAX_NAME_CHARS}"),
            );
        }
        return sink.items;
    }
    let canonical = check(name, None, None, &mut sink);
    if canonical != name && !canonical.is_empty() {
        sink.push(
            Rule::NameInvalidCharacters,
            None,
            format!(
                "skill name `{}` must be written as `{canonical}` (trimmed, in NFC)",
                shown(name)
            ),
        );
    }
    sink.items
}

/// Letters and numbers (Unicode general categories L and N) and `-`.
pub(crate) fn is_name_char(c: char) -> bool {
    c == '-'
        || matches!(
            c.general_category_group(),
            GeneralCategoryGroup::Letter | GeneralCategoryGroup::Number
        )
}

/// Characters of an NFC string that change under NFKC.
fn compatibility_characters(nfc: &str) -> Vec<char> {
    let mut found: Vec<char> = nfc
        .chars()
        .filter(|&c| {
            let mut decomposed = std::iter::once(c).nfkc();
            !(decomposed.next() == Some(c) && decomposed.next().is_none())
        })
        .collect();
    found.sort_unstable();
    found.dedup();
    found
}

fn describe(chars: &[char]) -> String {
    chars
        .iter()
        .map(|c| {
            if c.is_control() || c.is_whitespace() {
                format!("U+{:04X}", u32::from(*c))
            } else {
                format!("`{c}` (U+{:04X})", u32::from(*c))
            }
        })
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diagnostic::Profile;

    fn rules(name: &str, dir: Option<&str>) -> Vec<Rule> {
        let mut sink = Sink::new(Profile::Spec, None);
        check(name, Some(2), dir, &mut sink);
        sink.items.iter().map(|d| d.rule).collect()
    }

    #[test]
    fn valid_names() {
        for name in [
            "a",
            "pdf",
            "pdf-tools",
            "a1",
            "技能",
            "мой-навык",
            "навык",
            "café",
            "x2y",
        ] {
            assert_eq!(rules(name, Some(name)), vec![], "{name}");
        }
        assert_eq!(rules(&"a".repeat(64), None), vec![]);
    }

    #[test]
    fn length_boundary() {
        assert_eq!(rules(&"a".repeat(65), None), vec![Rule::NameTooLong]);
        // Counted in characters, not bytes.
        assert_eq!(rules(&"я".repeat(64), None), vec![]);
        assert_eq!(rules(&"я".repeat(65), None), vec![Rule::NameTooLong]);
    }

    #[test]
    fn each_character_rule() {
        assert_eq!(rules("MySkill", None), vec![Rule::NameNotLowercase]);
        assert_eq!(rules("НАВЫК", None), vec![Rule::NameNotLowercase]);
        assert_eq!(rules("-a", None), vec![Rule::NameHyphenEdge]);
        assert_eq!(rules("a-", None), vec![Rule::NameHyphenEdge]);
        assert_eq!(rules("a--b", None), vec![Rule::NameConsecutiveHyphens]);
        assert_eq!(rules("my_skill", None), vec![Rule::NameInvalidCharacters]);
        assert_eq!(rules("a b", None), vec![Rule::NameInvalidCharacters]);
        assert_eq!(rules("a.b", None), vec![Rule::NameInvalidCharacters]);
        assert_eq!(rules("   ", None), vec![Rule::NameMissing]);
    }

    #[test]
    fn all_problems_are_reported_together() {
        assert_eq!(
            rules("-My--Skill_-", Some("other")),
            vec![
                Rule::NameNotLowercase,
                Rule::NameHyphenEdge,
                Rule::NameConsecutiveHyphens,
                Rule::NameInvalidCharacters,
                Rule::NameDirectoryMismatch
            ]
        );
    }

    #[test]
    fn lookalikes_are_rejected() {
        for name in [
            "ｐｄｆ",  // fullwidth
            "𝐩𝐝𝐟",     // mathematical bold
            "pdf²",    // superscript
            "ⅻ-tools", // roman numeral
            "ﬁle",     // ligature
            "ǆ",       // digraph
        ] {
            assert!(rules(name, None).contains(&Rule::NameLookalike), "{name}");
        }
    }

    #[test]
    fn canonical_equivalents_are_the_same_name() {
        // Decomposed name against a composed directory, and the reverse.
        assert_eq!(rules("cafe\u{301}", Some("café")), vec![]);
        assert_eq!(rules("café", Some("cafe\u{301}")), vec![]);
        assert_eq!(
            check(
                "cafe\u{301}",
                None,
                None,
                &mut Sink::new(Profile::Spec, None)
            ),
            "café"
        );
    }

    #[test]
    fn directory_mismatch_and_trimming() {
        assert_eq!(
            rules("right", Some("wrong")),
            vec![Rule::NameDirectoryMismatch]
        );
        assert_eq!(rules("  padded  ", Some("padded")), vec![]);
    }

    #[test]
    fn combining_marks_that_do_not_compose_are_invalid() {
        // A Devanagari vowel sign (Mc) is neither a letter nor a digit.
        assert_eq!(rules("कि", None), vec![Rule::NameInvalidCharacters]);
    }

    #[test]
    fn native_names_are_the_names_a_directory_could_carry() {
        // Seed 001's snake_case, kebab-case, and Agent Skills names.
        for name in [
            "api_client",
            "input_guard",
            "web-search",
            "a1",
            "技能",
            "café",
        ] {
            assert_eq!(native_problems(name), vec![], "{name}");
        }
        assert_eq!(native_problems(&"a".repeat(64)), vec![]);
        let rules_of =
            |name: &str| -> Vec<Rule> { native_problems(name).iter().map(|d| d.rule).collect() };
        assert_eq!(rules_of(&"a_b".repeat(22)), vec![Rule::NameTooLong]);
        assert_eq!(rules_of(&"é".repeat(65)), vec![Rule::NameTooLong]);
        assert_eq!(rules_of("ApiClient"), vec![Rule::NameNotLowercase]);
        assert_eq!(rules_of("api client"), vec![Rule::NameInvalidCharacters]);
        assert_eq!(rules_of("../etc"), vec![Rule::NameInvalidCharacters]);
        assert_eq!(rules_of("_api"), vec![Rule::NameInvalidCharacters]);
        assert_eq!(rules_of("api__client"), vec![Rule::NameInvalidCharacters]);
        assert_eq!(rules_of("ｐｄｆ"), vec![Rule::NameLookalike]);
        assert_eq!(rules_of(""), vec![Rule::NameMissing]);
        // Not canonical: padded, or decomposed where the registry compares composed names.
        assert_eq!(rules_of(" api "), vec![Rule::NameInvalidCharacters]);
        assert_eq!(rules_of("cafe\u{301}"), vec![Rule::NameInvalidCharacters]);
    }
}
