//! Finding the YAML frontmatter in SKILL.md text.
//!
//! The first line must be `---` (trailing spaces or tabs allowed); the frontmatter closes at
//! the next line that is `---` (trailing spaces or tabs allowed). A line such as `---x`, or
//! `---` inside a value (`a---b`), never closes it: the reference validator's substring split
//! gets both wrong. Input is expected with LF line endings (see [`crate::text`]).

use crate::diagnostic::Rule;

/// A SKILL.md split into its parts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Framed<'a> {
    /// The YAML between the two `---` lines (may be empty).
    pub yaml: &'a str,
    /// The 1-based file line on which `yaml` starts.
    pub yaml_first_line: usize,
    /// Everything after the closing `---` line.
    pub body: &'a str,
    /// The 1-based file line on which `body` starts.
    pub body_first_line: usize,
}

fn is_fence(line: &str) -> bool {
    line.trim_end_matches([' ', '\t']) == "---"
}

/// Splits `text` into frontmatter and body, or says which framing rule failed.
pub(crate) fn split(text: &str) -> Result<Framed<'_>, (Rule, usize, &'static str)> {
    let first_end = text.find('\n').unwrap_or(text.len());
    if !is_fence(&text[..first_end]) {
        return Err((
            Rule::FrontmatterMissing,
            1,
            "SKILL.md must start with a `---` line opening the YAML frontmatter",
        ));
    }
    if first_end == text.len() {
        return Err((
            Rule::FrontmatterUnclosed,
            1,
            "the frontmatter opened on line 1 is never closed by a `---` line",
        ));
    }
    let yaml_start = first_end + 1;
    let mut line_start = yaml_start;
    let mut line_no = 2;
    while line_start <= text.len() {
        let line_end = text[line_start..]
            .find('\n')
            .map_or(text.len(), |i| line_start + i);
        if is_fence(&text[line_start..line_end]) {
            let body_start = (line_end + 1).min(text.len());
            return Ok(Framed {
                yaml: &text[yaml_start..line_start],
                yaml_first_line: 2,
                body: &text[body_start..],
                body_first_line: line_no + 1,
            });
        }
        if line_end == text.len() {
            break;
        }
        line_start = line_end + 1;
        line_no += 1;
    }
    Err((
        Rule::FrontmatterUnclosed,
        1,
        "the frontmatter opened on line 1 is never closed by a `---` line",
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_a_plain_file() {
        let f = split("---\nname: a\n---\n# Body\n").unwrap();
        assert_eq!(f.yaml, "name: a\n");
        assert_eq!(f.body, "# Body\n");
        assert_eq!(f.body_first_line, 4);
    }

    #[test]
    fn fences_may_have_trailing_spaces() {
        let f = split("--- \t\nname: a\n---   \nbody").unwrap();
        assert_eq!(f.yaml, "name: a\n");
        assert_eq!(f.body, "body");
    }

    #[test]
    fn dashes_inside_text_never_close() {
        let f = split("---\ndescription: a---b\n---trailing\nx: y\n---\n").unwrap();
        assert_eq!(f.yaml, "description: a---b\n---trailing\nx: y\n");
        assert_eq!(f.body, "");
    }

    #[test]
    fn empty_frontmatter_and_missing_final_newline() {
        let f = split("---\n---").unwrap();
        assert_eq!(f.yaml, "");
        assert_eq!(f.body, "");
    }

    #[test]
    fn missing_and_unclosed() {
        assert_eq!(split("# title").unwrap_err().0, Rule::FrontmatterMissing);
        assert_eq!(split("").unwrap_err().0, Rule::FrontmatterMissing);
        assert_eq!(
            split(" ---\n---\n").unwrap_err().0,
            Rule::FrontmatterMissing
        );
        assert_eq!(
            split("----\n---\n").unwrap_err().0,
            Rule::FrontmatterMissing
        );
        assert_eq!(split("---").unwrap_err().0, Rule::FrontmatterUnclosed);
        assert_eq!(
            split("---\nname: a\n").unwrap_err().0,
            Rule::FrontmatterUnclosed
        );
        assert_eq!(
            split("---\nname: a\n---x\n").unwrap_err().0,
            Rule::FrontmatterUnclosed
        );
    }
}
