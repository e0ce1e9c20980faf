//! The Lenient profile's one retry: quote plain values that contain `: `.
//!
//! Hand-written frontmatter often says `description: Use when: the user asks` which strict
//! YAML rejects (a plain scalar cannot contain `: `). The Agent Skills client guide
//! recommends retrying once after quoting such values; this is that transformation.

/// Returns `yaml` with every `key: value` line whose plain value contains `: ` rewritten as
/// `key: 'value'`, or `None` if no line needed it. Lines inside a block scalar (`|`, `>`)
/// are content and are left alone; a trailing ` # comment` stays a comment.
pub(crate) fn quote_colon_values(yaml: &str) -> Option<String> {
    let mut changed = false;
    let mut out = String::with_capacity(yaml.len() + 16);
    // The indentation of the line that opened a block scalar, while inside it.
    let mut block_owner: Option<usize> = None;
    for line in yaml.split_inclusive('\n') {
        let (content, newline) = match line.strip_suffix('\n') {
            Some(content) => (content, "\n"),
            None => (line, ""),
        };
        let indent = content.len() - content.trim_start_matches(' ').len();
        if let Some(owner) = block_owner {
            if content.trim().is_empty() || indent > owner {
                out.push_str(line);
                continue;
            }
            block_owner = None;
        }
        if opens_block_scalar(content) {
            block_owner = Some(indent);
        }
        match quote_line(content) {
            Some(quoted) => {
                changed = true;
                out.push_str(&quoted);
            }
            None => out.push_str(content),
        }
        out.push_str(newline);
    }
    changed.then_some(out)
}

/// Whether a `key: |` / `key: >-` / `- |` line starts a block scalar.
fn opens_block_scalar(line: &str) -> bool {
    let value = strip_comment(line).trim_end();
    let last_token = value.rsplit([' ', '\t']).next().unwrap_or("");
    let rest = last_token.trim_start_matches(['|', '>']);
    last_token.len() > rest.len()
        && rest.chars().all(|c| matches!(c, '-' | '+' | '1'..='9'))
        && (value.len() == last_token.len()
            || value[..value.len() - last_token.len()]
                .trim_end()
                .ends_with([':', '-']))
}

/// The line without a trailing ` # comment` (a `#` after whitespace starts a comment in a
/// plain scalar).
fn strip_comment(line: &str) -> &str {
    let bytes = line.as_bytes();
    for (i, &b) in bytes.iter().enumerate() {
        if b == b'#' && i > 0 && (bytes[i - 1] == b' ' || bytes[i - 1] == b'\t') {
            return &line[..i];
        }
    }
    line
}

fn quote_line(line: &str) -> Option<String> {
    let indent = line.len() - line.trim_start_matches(' ').len();
    let mut rest = &line[indent..];
    let mut prefix_len = indent;
    // A mapping inside a block sequence entry: `- key: value`.
    while let Some(after) = rest.strip_prefix("- ") {
        let spaces = after.len() - after.trim_start_matches(' ').len();
        prefix_len += 2 + spaces;
        rest = &after[spaces..];
    }
    let first = rest.chars().next()?;
    if first.is_whitespace() || "#'\"[]{}|>&*!%@`,?-:".contains(first) {
        return None;
    }
    let colon = rest.find(": ")?;
    let after_key = &rest[colon + 2..];
    let uncommented = strip_comment(after_key);
    let value = uncommented.trim();
    let comment = &after_key[uncommented.len()..];
    let value_first = value.chars().next()?;
    if "'\"[{|>&*!#".contains(value_first) || !value.contains(": ") {
        return None;
    }
    let key_end = prefix_len + colon;
    let mut quoted = format!("{}: '{}'", &line[..key_end], value.replace('\'', "''"));
    if !comment.is_empty() {
        quoted.push(' ');
        quoted.push_str(comment);
    }
    Some(quoted)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quotes_only_plain_values_with_colon_space() {
        let input = "name: x\ndescription: Use when: the user asks\n  nested: a: b\n- item: c: d\n";
        assert_eq!(
            quote_colon_values(input).as_deref(),
            Some(
                "name: x\ndescription: 'Use when: the user asks'\n  nested: 'a: b'\n- item: 'c: d'\n"
            )
        );
    }

    #[test]
    fn leaves_quoted_blocks_and_clean_lines_alone() {
        for line in [
            "a: 'b: c'",
            "a: \"b: c\"",
            "a: |",
            "a: [b: c]",
            "a: b",
            "# c: d: e",
            "a:b: c",
            "a: b:c",
            "",
        ] {
            assert_eq!(quote_line(line), None, "{line}");
        }
        assert_eq!(quote_colon_values("a: b\n"), None);
    }

    #[test]
    fn block_scalar_content_is_left_alone() {
        let input = "description: |\n  Use when: asked: twice\n\n  Example: k: v\nnext: a: b\nfolded: >-\n  x: y: z\n- |\n  p: q: r\n";
        assert_eq!(
            quote_colon_values(input).as_deref(),
            Some(
                "description: |\n  Use when: asked: twice\n\n  Example: k: v\nnext: 'a: b'\nfolded: >-\n  x: y: z\n- |\n  p: q: r\n"
            )
        );
    }

    #[test]
    fn trailing_comments_stay_comments() {
        assert_eq!(
            quote_line("d: Use when: asked # internal note").as_deref(),
            Some("d: 'Use when: asked' # internal note")
        );
        assert_eq!(quote_line("d: a#b: c").as_deref(), Some("d: 'a#b: c'"));
    }

    #[test]
    fn block_scalar_openers() {
        for yes in ["a: |", "a: >", "a: |-", "a: >+2", "- |", "a: | # c", "|"] {
            assert!(opens_block_scalar(yes), "{yes}");
        }
        for no in ["a: b", "a: '|'", "a: x|", "a: |x", "a: |0"] {
            assert!(!opens_block_scalar(no), "{no}");
        }
    }

    #[test]
    fn escapes_single_quotes() {
        assert_eq!(
            quote_line("d: it's: here").as_deref(),
            Some("d: 'it''s: here'")
        );
    }
}
