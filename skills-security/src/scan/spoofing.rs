//! Lookalike names: a skill or package that imitates a known one to be chosen, installed or
//! trusted in its place.
//!
//! A candidate (the skill's directory name, the `name` its SKILL.md declares, packages its
//! install commands name) is compared with the known list after a *skeleton* mapping:
//! NFKC, lower case, confusable letters (Cyrillic `а`, Greek `ο`, digits `0`/`1`, `rn`)
//! to their Latin lookalikes, separators removed. The same skeleton as a known name but a
//! different spelling is a homoglyph spoof; one edit (two for long names) from a known name
//! is a typosquat; letters from two scripts in one name are suspicious on their own. A name
//! *equal* to a known one is that skill (whether its source may publish it is the
//! installer's question, not the scanner's).

use std::collections::BTreeSet;

use unicode_normalization::UnicodeNormalization;

use super::known::{COMMON_WORDS, POPULAR_PACKAGES};
use super::report::{Category, ScanFinding, Severity};

/// Brands whose npm scopes are imitated.
const KNOWN_SCOPES: &[&str] = &[
    "anthropic",
    "anthropic-ai",
    "modelcontextprotocol",
    "openai",
    "google",
    "microsoft",
    "github",
    "vercel",
    "aws",
    "azure",
    "cloudflare",
    "stripe",
    "types",
    "babel",
    "angular",
    "vue",
    "nestjs",
    "prisma",
    "supabase",
    "langchain",
];

/// The known names, with their skeletons.
#[derive(Debug)]
pub(crate) struct KnownNames {
    names: Vec<(String, String)>,
}

impl KnownNames {
    pub(crate) fn new(names: Vec<String>) -> Self {
        let mut set: BTreeSet<String> = BTreeSet::new();
        for n in names {
            let n = n.trim().to_lowercase();
            if !n.is_empty() {
                set.insert(n);
            }
        }
        Self {
            names: set.into_iter().map(|n| (skeleton(&n), n)).collect(),
        }
    }

    /// Findings for `skill_name` and the names the package declares or installs.
    pub(crate) fn check(&self, skill_name: &str, texts: &[(&str, &str)]) -> Vec<ScanFinding> {
        let mut out = Vec::new();
        let mut candidates: BTreeSet<(String, String, u32)> = BTreeSet::new();
        if !skill_name.is_empty() {
            candidates.insert((skill_name.to_owned(), String::new(), 0));
        }
        for (path, text) in texts {
            if (path.eq_ignore_ascii_case("SKILL.md") || path.ends_with("/SKILL.md"))
                && let Some((name, line)) = declared_name(text)
            {
                candidates.insert((name, (*path).to_owned(), line));
            }
        }
        let mut reported: BTreeSet<String> = BTreeSet::new();
        for (name, file, line) in candidates {
            if !reported.insert(name.to_lowercase()) {
                continue;
            }
            if let Some(f) = self.check_skill_name(&name, &file, line) {
                out.push(f);
            }
        }
        for (path, text) in texts {
            let mut packages = installed_packages(text);
            if let Some((commands, lines)) = super::mcp::command_lines(text) {
                for (package, i) in installed_packages(&commands) {
                    let line = usize::try_from(i)
                        .ok()
                        .and_then(|i| lines.get(i.saturating_sub(1)));
                    packages.push((package, line.copied().unwrap_or(0)));
                }
            }
            packages.sort();
            packages.dedup_by(|a, b| a.0 == b.0);
            for (package, line) in packages {
                if let Some(f) = check_package(&package, path, line) {
                    out.push(f);
                }
            }
        }
        out
    }

    fn check_skill_name(&self, name: &str, file: &str, line: u32) -> Option<ScanFinding> {
        let lower = name.trim().to_lowercase();
        let finding = |severity, message: String| {
            Some(ScanFinding::new(
                Category::NameSpoofing,
                severity,
                "name.lookalike",
                file,
                line,
                name.to_owned(),
                message,
            ))
        };
        if self.names.iter().any(|(_, n)| *n == lower) {
            return None;
        }
        let skel = skeleton(&lower);
        if mixed_scripts(&lower) {
            return finding(
                Severity::High,
                "the name mixes letters of different scripts (a homoglyph disguise)".to_owned(),
            );
        }
        for (known_skel, known) in &self.names {
            if *known_skel == skel {
                return finding(
                    Severity::High,
                    format!(
                        "the name is a lookalike of the known skill `{known}` (confusable characters or separators)"
                    ),
                );
            }
            let limit = if known.chars().count() >= 10 { 2 } else { 1 };
            if known.chars().count() >= 5 && edit_distance(&skel, known_skel, limit) <= limit {
                return finding(
                    Severity::High,
                    format!("the name is a near miss of the known skill `{known}`"),
                );
            }
        }
        // A familiar word misspelled inside the name (`json-parsre`, `confg-validator`).
        for token in lower.split(['-', '_', ' ', '.']) {
            if let Some((word, transposed)) = typo_of_common_word(token) {
                // Swapped neighbours are the typist's slip squatters imitate; another single
                // edit often spells a different real word (`lister`, `linter`), so it weighs
                // little.
                return finding(
                    if transposed {
                        Severity::High
                    } else {
                        Severity::Low
                    },
                    format!("`{token}` in the name imitates `{word}`"),
                );
            }
        }
        None
    }
}

/// The `name:` in a SKILL.md's frontmatter, with its line.
fn declared_name(text: &str) -> Option<(String, u32)> {
    let mut lines = text.lines();
    if lines.next()?.trim_end() != "---" {
        return None;
    }
    for (i, line) in lines.enumerate().take(200) {
        if line.trim_end() == "---" {
            return None;
        }
        if let Some(value) = line.strip_prefix("name:") {
            let value = value.trim().trim_matches(['"', '\'']).to_owned();
            return Some((value, u32::try_from(i + 2).unwrap_or(u32::MAX)));
        }
    }
    None
}

/// Install and run commands that name packages.
const VERBS: &[&str] = &[
    "pip install ",
    "pip3 install ",
    "uv pip install ",
    "uv add ",
    "pipx install ",
    "pipx run ",
    "uvx ",
    "npm install ",
    "npm i ",
    "npm add ",
    "yarn add ",
    "pnpm add ",
    "bun add ",
    "npx ",
    "bunx ",
    "\"-y\", \"",
    "\"--yes\", \"",
];

/// Verbs after which only the first word is a package (the rest are its arguments).
const RUNNERS: &[&str] = &[
    "npx ",
    "uvx ",
    "pipx run ",
    "bunx ",
    "\"-y\", \"",
    "\"--yes\", \"",
];

/// Packages named by install and run commands, with their lines: one automaton pass over
/// the text for the verbs.
fn installed_packages(text: &str) -> Vec<(String, u32)> {
    use std::sync::OnceLock;
    static VERB_AC: OnceLock<Option<aho_corasick::AhoCorasick>> = OnceLock::new();
    let Some(ac) = VERB_AC
        .get_or_init(|| {
            aho_corasick::AhoCorasick::builder()
                .match_kind(aho_corasick::MatchKind::LeftmostLongest)
                .build(VERBS)
                .ok()
        })
        .as_ref()
    else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let mut line_no = 1u32;
    let mut counted_to = 0usize;
    for m in ac.find_iter(text) {
        line_no = line_no.saturating_add(
            u32::try_from(
                memchr::memchr_iter(b'\n', &text.as_bytes()[counted_to..m.start()]).count(),
            )
            .unwrap_or(u32::MAX),
        );
        counted_to = m.start();
        let verb = VERBS.get(m.pattern().as_usize()).copied().unwrap_or("");
        let rest = text.get(m.end()..).unwrap_or("");
        let rest = rest.split('\n').next().unwrap_or("");
        for word in rest.split_whitespace().take(8) {
            let word = word.trim_matches(['"', '\'', ',', ']', '`', ';']);
            if word.starts_with('-') || word.is_empty() {
                continue;
            }
            if word.contains("://") || word.starts_with('.') || word.starts_with('/') {
                break;
            }
            // Strip a version or extras: `pkg==1.0`, `pkg@2`, `pkg[extra]`.
            let name = strip_version(word);
            if name.len() >= 3 {
                out.push((name.to_lowercase(), line_no));
            }
            if RUNNERS.contains(&verb) {
                break;
            }
        }
    }
    out.sort();
    out.dedup();
    out
}

fn strip_version(word: &str) -> &str {
    let scoped = word.starts_with('@');
    let body = if scoped { &word[1..] } else { word };
    let cut = body
        .find(['=', '<', '>', '~', '!', '[', ';', '@'])
        .unwrap_or(body.len());
    &word[..cut + usize::from(scoped)]
}

fn check_package(package: &str, path: &str, line: u32) -> Option<ScanFinding> {
    let finding = |message: String| {
        Some(ScanFinding::new(
            Category::NameSpoofing,
            Severity::High,
            "name.package_typosquat",
            path,
            line,
            package.to_owned(),
            message,
        ))
    };
    if POPULAR_PACKAGES.contains(&package) {
        return None;
    }
    if let Some(rest) = package.strip_prefix('@') {
        let (scope, name) = rest.split_once('/').unwrap_or((rest, ""));
        for known in KNOWN_SCOPES {
            let limit = if known.len() >= 9 { 2 } else { 1 };
            if scope != *known && known.len() >= 5 && edit_distance(scope, known, limit) <= limit {
                // `anthropic` vs `anthropic-ai` is the same brand, not a typo.
                if scope.starts_with(known)
                    || known.starts_with(scope) && scope.len() + 3 >= known.len() && scope.len() > 8
                {
                    continue;
                }
                return finding(format!("the package scope `@{scope}` imitates `@{known}`"));
            }
        }
        let _ = name;
    }
    for known in POPULAR_PACKAGES {
        let limit = if known.len() >= 12 { 2 } else { 1 };
        if known.len() >= 5 && edit_distance(package, known, limit) <= limit {
            return finding(format!(
                "the package `{package}` is a near miss of `{known}`"
            ));
        }
    }
    None
}

/// A token that is one typo away from a common word (and not a plural or other inflection
/// of it): the word, and whether the typo is a transposition.
fn typo_of_common_word(token: &str) -> Option<(&'static str, bool)> {
    if token.len() < 5 || COMMON_WORDS.contains(&token) {
        return None;
    }
    for word in COMMON_WORDS {
        if word.len() < 5 {
            continue;
        }
        let inflection = [
            ("s", ""),
            ("es", ""),
            ("ed", ""),
            ("ing", ""),
            ("er", ""),
            ("r", ""),
            ("d", ""),
            ("e", ""),
        ]
        .iter()
        .any(|(suffix, _)| {
            token.strip_suffix(suffix) == Some(word) || word.strip_suffix(suffix) == Some(token)
        });
        if inflection {
            continue;
        }
        if edit_distance(token, word, 1) == 1 {
            return Some((word, is_transposition(token, word)));
        }
    }
    None
}

fn is_transposition(a: &str, b: &str) -> bool {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    if a.len() != b.len() {
        return false;
    }
    let diffs: Vec<usize> = (0..a.len()).filter(|&i| a[i] != b[i]).collect();
    diffs.len() == 2
        && diffs[1] == diffs[0] + 1
        && a[diffs[0]] == b[diffs[1]]
        && a[diffs[1]] == b[diffs[0]]
}

/// The skeleton of a name: NFKC, lower case, confusables mapped to Latin, separators and
/// digits-as-letters folded.
pub(crate) fn skeleton(name: &str) -> String {
    let folded: String = name.nfkc().flat_map(char::to_lowercase).collect();
    let mut out = String::with_capacity(folded.len());
    for c in folded.chars() {
        let mapped = match c {
            '-' | '_' | ' ' | '.' => continue,
            'а' | 'α' => 'a',
            'в' | 'β' => 'b',
            'с' | 'ϲ' => 'c',
            'ԁ' => 'd',
            'е' | 'ε' | 'ё' | '3' => 'e',
            'ɡ' => 'g',
            'һ' => 'h',
            'і' | 'ι' | 'ı' | '1' | '!' | '|' => 'l',
            'ј' => 'j',
            'к' | 'κ' => 'k',
            'м' => 'm',
            'п' | 'η' => 'n',
            'о' | 'ο' | 'σ' | '0' => 'o',
            'р' | 'ρ' => 'p',
            'ѕ' | '5' | '$' => 's',
            'т' | 'τ' => 't',
            'υ' | 'ս' => 'u',
            'ν' => 'v',
            'ш' | 'ω' => 'w',
            'х' | 'χ' => 'x',
            'у' | 'γ' => 'y',
            '@' => 'a',
            other => other,
        };
        out.push(mapped);
    }
    // `i` and `l` look alike in many fonts; `rn` reads as `m`, `vv` as `w`.
    out.replace('i', "l").replace("rn", "m").replace("vv", "w")
}

/// Whether a name mixes Latin letters with Cyrillic or Greek ones.
fn mixed_scripts(name: &str) -> bool {
    let latin = name.chars().any(|c| c.is_ascii_alphabetic());
    let other = name
        .chars()
        .any(|c| matches!(u32::from(c), 0x0370..=0x052F));
    latin && other
}

/// Optimal-string-alignment distance between `a` and `b`, or `limit + 1` once it is
/// certain to exceed `limit`.
pub(crate) fn edit_distance(a: &str, b: &str, limit: usize) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    if a.len().abs_diff(b.len()) > limit {
        return limit + 1;
    }
    let width = b.len() + 1;
    let mut prev2 = vec![0usize; width];
    let mut prev: Vec<usize> = (0..width).collect();
    let mut cur = vec![0usize; width];
    for i in 1..=a.len() {
        cur[0] = i;
        let mut row_min = cur[0];
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut v = (prev[j] + 1).min(cur[j - 1] + 1).min(prev[j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                v = v.min(prev2[j - 2] + 1);
            }
            cur[j] = v;
            row_min = row_min.min(v);
        }
        if row_min > limit {
            return limit + 1;
        }
        std::mem::swap(&mut prev2, &mut prev);
        std::mem::swap(&mut prev, &mut cur);
    }
    prev[b.len()].min(limit + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn known() -> KnownNames {
        KnownNames::new(vec![
            "skill-creator".into(),
            "webapp-testing".into(),
            "pdf".into(),
        ])
    }

    #[test]
    fn lookalikes_fire() {
        let k = known();
        for name in [
            "skill-creat0r",
            "skil-creator",
            "webbapp-testing",
            "skill_creator",
            "ѕkill-creator",
        ] {
            let f = k.check(name, &[]);
            assert_eq!(f.len(), 1, "{name}");
            assert_eq!(f[0].severity, Severity::High, "{name}");
        }
    }

    #[test]
    fn near_misses_do_not() {
        let k = known();
        for name in [
            "skill-creator",
            "pdfs",
            "skill-reviewer",
            "web-testing-kit",
            "csv-parsers",
            "checkers",
        ] {
            assert!(k.check(name, &[]).is_empty(), "{name}");
        }
    }

    #[test]
    fn package_typosquats() {
        let found = |line: &str| {
            installed_packages(line)
                .into_iter()
                .filter_map(|(p, l)| check_package(&p, "a", l))
                .count()
        };
        assert_eq!(found("pip install reqeusts"), 1);
        assert_eq!(found("npx -y @modelcontextprotcol/server-memory"), 1);
        assert_eq!(found("pip install requests numpy==1.26"), 0);
        assert_eq!(found("npx -y @modelcontextprotocol/server-memory"), 0);
        assert_eq!(found("npm install @anthropic-ai/sdk"), 0);
    }

    #[test]
    fn distance() {
        assert_eq!(edit_distance("parser", "parsre", 2), 1);
        assert_eq!(edit_distance("abc", "abc", 1), 0);
        assert_eq!(edit_distance("kitten", "sitting", 1), 2);
    }
}
