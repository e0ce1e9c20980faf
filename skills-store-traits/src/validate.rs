//! The validation rules every backend applies before it writes (seed 002 section 6.3 and the
//! limits of section 15.9).
//!
//! Threat: a caller (an admin form, an import archive, a plugin) handing the store a slug
//! that escapes a directory when used as a path, a file path with `..` or an absolute root,
//! binary or oversized content. Guarantee: a record that passes these checks has a slug that
//! is a single safe path component, file paths that stay under the skill directory, and text
//! content within the limits; a record that fails is refused with the field and rule named.
//! Backends call these functions; the conformance suite proves they do.

use std::collections::BTreeSet;

use crate::error::{Error, Result, Violation};
use crate::skills::{
    AssignmentScope, NewAssignment, NewSkill, NewSkillFile, SKILL_CATEGORIES, SkillUpdate,
};

/// The most characters in a slug.
pub const MAX_SLUG_CHARS: usize = 64;
/// The most characters in a name.
pub const MAX_NAME_CHARS: usize = 128;
/// The most tags on a skill.
pub const MAX_TAGS: usize = 20;

/// Size limits on stored skills (seed 002 section 15.9).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct StoreLimits {
    /// Largest supporting file in bytes (default 100 KB = 102,400 bytes).
    pub max_file_bytes: u64,
    /// Largest skill in bytes, `SKILL.md` included (default 1 MB = 1,048,576 bytes).
    pub max_skill_bytes: u64,
}

impl Default for StoreLimits {
    fn default() -> Self {
        let core = skills_core::files::FileLimits::default();
        StoreLimits {
            max_file_bytes: core.max_file_bytes,
            max_skill_bytes: core.max_skill_bytes,
        }
    }
}

/// Checks a slug: `^[a-z][a-z0-9-]*$`, at most 64 characters.
pub fn check_slug(field: &str, slug: &str) -> Result<()> {
    let chars = slug.chars().count();
    if chars == 0 {
        return Err(Error::invalid(field, Violation::Empty));
    }
    if chars > MAX_SLUG_CHARS {
        return Err(Error::invalid(field, Violation::SlugTooLong { chars }));
    }
    let mut bytes = slug.bytes();
    let first_ok = bytes.next().is_some_and(|b| b.is_ascii_lowercase());
    if !first_ok || !bytes.all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-') {
        return Err(Error::invalid(field, Violation::SlugFormat));
    }
    Ok(())
}

/// Checks a name: 1-128 characters.
pub fn check_name(field: &str, name: &str) -> Result<()> {
    let chars = name.chars().count();
    if chars == 0 || chars > MAX_NAME_CHARS {
        return Err(Error::invalid(field, Violation::NameLength { chars }));
    }
    Ok(())
}

/// Checks `SKILL.md` content: at least one character, text only.
pub fn check_content(field: &str, content: &str) -> Result<()> {
    if content.is_empty() {
        return Err(Error::invalid(field, Violation::Empty));
    }
    check_text(field, content)
}

fn check_text(field: &str, content: &str) -> Result<()> {
    if content.as_bytes().contains(&0) {
        return Err(Error::invalid(field, Violation::Binary));
    }
    Ok(())
}

/// Checks a category against [`SKILL_CATEGORIES`].
pub fn check_category(field: &str, category: &str) -> Result<()> {
    if !SKILL_CATEGORIES.contains(&category) {
        return Err(Error::invalid(field, Violation::UnknownCategory));
    }
    Ok(())
}

/// Checks a trust level against [`TRUST_LEVELS`](crate::TRUST_LEVELS).
pub fn check_trust_level(field: &str, level: &str) -> Result<()> {
    if !crate::TRUST_LEVELS.contains(&level) {
        return Err(Error::invalid(field, Violation::UnknownTrustLevel));
    }
    Ok(())
}

/// Checks tags: each `^[a-z0-9-]+$`, at most 20.
pub fn check_tags(field: &str, tags: &[String]) -> Result<()> {
    if tags.len() > MAX_TAGS {
        return Err(Error::invalid(
            field,
            Violation::TooManyTags { count: tags.len() },
        ));
    }
    for (index, tag) in tags.iter().enumerate() {
        let ok = !tag.is_empty()
            && tag
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-');
        if !ok {
            return Err(Error::invalid(
                format!("{field}[{index}]"),
                Violation::TagFormat,
            ));
        }
    }
    Ok(())
}

/// Checks a supporting file's path and content against the rules and the per-file limit.
pub fn check_file(field: &str, file: &NewSkillFile, limits: &StoreLimits) -> Result<()> {
    check_relative_path(&format!("{field}.path"), &file.path)?;
    check_text(&format!("{field}.content"), &file.content)?;
    let bytes = file.content.len() as u64;
    if bytes > limits.max_file_bytes {
        return Err(Error::invalid(
            format!("{field}.content"),
            Violation::FileTooLarge {
                bytes,
                limit: limits.max_file_bytes,
            },
        ));
    }
    Ok(())
}

/// Checks a relative path: seed 002's rules (via skills-core) and not `SKILL.md` itself.
pub fn check_relative_path(field: &str, path: &str) -> Result<()> {
    skills_core::files::check_relative_path(path)
        .map_err(|problem| Error::invalid(field, Violation::Path(problem)))?;
    if path == skills_core::SKILL_MD {
        return Err(Error::invalid(field, Violation::ReservedPath));
    }
    Ok(())
}

/// Checks a skill's total size: `SKILL.md` plus every file.
pub fn check_total(field: &str, total: u64, limits: &StoreLimits) -> Result<()> {
    if total > limits.max_skill_bytes {
        return Err(Error::invalid(
            field,
            Violation::SkillTooLarge {
                bytes: total,
                limit: limits.max_skill_bytes,
            },
        ));
    }
    Ok(())
}

/// Checks a set of files: each file, no path twice, and the skill total with `content_bytes`
/// of `SKILL.md`.
pub fn check_files(files: &[NewSkillFile], content_bytes: u64, limits: &StoreLimits) -> Result<()> {
    let mut seen = BTreeSet::new();
    let mut total = content_bytes;
    for (index, file) in files.iter().enumerate() {
        let field = format!("files[{index}]");
        check_file(&field, file, limits)?;
        if !seen.insert(file.path.as_str()) {
            return Err(Error::invalid(
                format!("{field}.path"),
                Violation::DuplicatePath,
            ));
        }
        total = total.saturating_add(file.content.len() as u64);
    }
    check_total("files", total, limits)
}

/// Checks everything about a new skill except slug uniqueness (the store's job).
pub fn check_new_skill(skill: &NewSkill, limits: &StoreLimits) -> Result<()> {
    check_name("name", &skill.name)?;
    check_slug("slug", &skill.slug)?;
    check_content("content", &skill.content)?;
    if let Some(category) = &skill.category {
        check_category("category", category)?;
    }
    check_tags("tags", &skill.tags)?;
    if let Some(level) = &skill.trust_level {
        check_trust_level("trust_level", level)?;
    }
    check_files(&skill.files, skill.content.len() as u64, limits)
}

/// Checks the fields an update sets. `current_files_bytes` is the size of the files the
/// skill keeps when the update does not replace them.
pub fn check_update(
    update: &SkillUpdate,
    current_content_bytes: u64,
    current_files_bytes: u64,
    limits: &StoreLimits,
) -> Result<()> {
    if let Some(name) = &update.name {
        check_name("name", name)?;
    }
    if let Some(content) = &update.content {
        check_content("content", content)?;
    }
    if let Some(category) = &update.category {
        check_category("category", category)?;
    }
    if let Some(tags) = &update.tags {
        check_tags("tags", tags)?;
    }
    if let Some(Some(level)) = &update.trust_level {
        check_trust_level("trust_level", level)?;
    }
    let content_bytes = update
        .content
        .as_ref()
        .map_or(current_content_bytes, |c| c.len() as u64);
    match &update.files {
        Some(files) => check_files(files, content_bytes, limits),
        None => check_total(
            "content",
            content_bytes.saturating_add(current_files_bytes),
            limits,
        ),
    }
}

/// Checks an assignment's scope id: required for team and agent, absent for global.
pub fn check_assignment(assignment: &NewAssignment) -> Result<()> {
    if assignment.skill_id.is_empty() {
        return Err(Error::invalid("skill_id", Violation::Empty));
    }
    match (assignment.scope, assignment.scope_id.as_deref()) {
        (AssignmentScope::Global, None) => Ok(()),
        (AssignmentScope::Global, Some(_)) => {
            Err(Error::invalid("scope_id", Violation::ScopeIdForbidden))
        }
        (_, None) => Err(Error::invalid("scope_id", Violation::ScopeIdRequired)),
        (_, Some("")) => Err(Error::invalid("scope_id", Violation::Empty)),
        (_, Some(_)) => Ok(()),
    }
}

/// Lowercase hex SHA-256 of text: the checksum every backend stores.
pub fn checksum(text: &str) -> String {
    use sha2::{Digest, Sha256};
    hex::encode(Sha256::digest(text.as_bytes()))
}

/// The MIME type a file gets when none is given.
pub fn content_type_or_guess(file: &NewSkillFile) -> String {
    file.content_type
        .clone()
        .unwrap_or_else(|| skills_core::files::content_type_for(&file.path).to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slugs() {
        assert!(check_slug("slug", "a").is_ok());
        assert!(check_slug("slug", "jira-triage-2").is_ok());
        assert!(check_slug("slug", &"a".repeat(64)).is_ok());
        for bad in ["", "1abc", "-abc", "Abc", "a_b", "a/b", "..", "a b", "é"] {
            assert!(check_slug("slug", bad).is_err(), "{bad:?}");
        }
        assert_eq!(
            check_slug("slug", &"a".repeat(65)).unwrap_err().violation(),
            Some(&Violation::SlugTooLong { chars: 65 })
        );
    }

    #[test]
    fn tags_and_names() {
        assert!(check_tags("tags", &["a-1".into()]).is_ok());
        assert!(check_tags("tags", &["A".into()]).is_err());
        assert!(check_tags("tags", &[String::new()]).is_err());
        assert!(check_tags("tags", &vec!["a".to_owned(); 21]).is_err());
        assert!(check_name("name", &"n".repeat(128)).is_ok());
        assert!(check_name("name", &"n".repeat(129)).is_err());
        assert!(check_name("name", "").is_err());
    }
}
