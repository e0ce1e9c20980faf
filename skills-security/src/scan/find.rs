//! Finding the skills to scan under a path: what the scan example and the `skills scan`
//! command both walk.
//!
//! Threat: a tree that loops through symbolic links or nests without end. Guarantee:
//! symbolic links are never followed (a link is neither a skill nor descended into), the
//! walk stops at [`MAX_FIND_DEPTH`] levels, and unreadable entries are skipped, never an
//! error or a panic.

use std::path::{Path, PathBuf};

/// How deep [`find_skills`] descends below its root.
pub const MAX_FIND_DEPTH: usize = 12;

/// Every skill under `path`, in sorted order: `path` itself when it is a regular file or a
/// skill directory (one holding a `SKILL.md` or `skill.json` regular file), else each
/// directory below it holding one (not descending into a skill, nor into `.git`). Empty
/// when `path` is missing, a symbolic link, or holds no skill.
///
/// ```
/// let root = tempfile::tempdir()?;
/// std::fs::create_dir_all(root.path().join("a/nested/b"))?;
/// std::fs::write(root.path().join("a/nested/b/SKILL.md"), "---\nname: b\n---\n")?;
/// let found = skills_security::scan::find_skills(root.path());
/// assert_eq!(found, [root.path().join("a/nested/b")]);
/// # Ok::<(), std::io::Error>(())
/// ```
pub fn find_skills(path: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![(path.to_path_buf(), 0usize)];
    while let Some((dir, depth)) = stack.pop() {
        let Ok(meta) = std::fs::symlink_metadata(&dir) else {
            continue;
        };
        if meta.is_file() || (meta.is_dir() && is_skill_dir(&dir)) {
            out.push(dir);
            continue;
        }
        if !meta.is_dir() || depth >= MAX_FIND_DEPTH {
            continue;
        }
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        let mut children: Vec<PathBuf> = entries
            .filter_map(Result::ok)
            .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
            .filter(|e| e.file_name() != ".git")
            .map(|e| e.path())
            .collect();
        children.sort();
        stack.extend(children.into_iter().rev().map(|c| (c, depth + 1)));
    }
    out
}

/// Whether `dir` holds a `SKILL.md` or `skill.json` regular file.
pub fn is_skill_dir(dir: &Path) -> bool {
    ["SKILL.md", "skill.json"]
        .iter()
        .any(|f| std::fs::symlink_metadata(dir.join(f)).is_ok_and(|m| m.is_file()))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn links_are_not_followed_and_depth_is_bounded() {
        let root = tempfile::tempdir().unwrap();
        let skill = root.path().join("real");
        std::fs::create_dir(&skill).unwrap();
        std::fs::write(skill.join("SKILL.md"), "x").unwrap();
        // A link to the skill and a link back to the root: neither is followed.
        std::os::unix::fs::symlink(&skill, root.path().join("link")).unwrap();
        std::os::unix::fs::symlink(root.path(), root.path().join("loop")).unwrap();
        assert_eq!(find_skills(root.path()), std::slice::from_ref(&skill));
        assert!(find_skills(&root.path().join("link")).is_empty());
        // Deeper than the limit: not found.
        let mut deep = root.path().join("deep");
        for i in 0..=MAX_FIND_DEPTH {
            deep.push(format!("d{i}"));
        }
        std::fs::create_dir_all(&deep).unwrap();
        std::fs::write(deep.join("SKILL.md"), "x").unwrap();
        assert_eq!(find_skills(root.path()), [skill]);
        assert!(find_skills(&root.path().join("missing")).is_empty());
    }
}
