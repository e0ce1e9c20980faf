//! The Lenient profile's one retry: quote plain values that contain `: `.
//!
//! Hand-written frontmatter often says `description: Use when: the user asks` which strict
//! YAML rejects (a plain scalar cannot contain `: `). The Agent Skills client guide
//! recommends retrying once after quoting such values; this is that transformation.

/// Returns `yaml` with every `key: value` line whose plain value contains `: ` rewritten as
/// `key: 'value'`, or `None` if no line needed it.
pub(crate) fn quote_colon_values(yaml: &str) -> Option<String> {
    let mut changed = false;
    let mut out = String::with_capacity(yaml.len() + 16);
    for line in yaml.split_inclusive('\n') {
        let (content, newline) = match line.strip_suffix('\n') {
            Some(content) => (content, "\n"),
            None => (line, ""),
        };
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
    let value = rest[colon + 2..].trim();
    let value_first = value.chars().next()?;
    if "'\"[{|>&*!#".contains(value_first) || !value.contains(": ") {
        return None;
    }
    let key_end = prefix_len + colon;
    Some(format!(
        "{}: '{}'",
        &line[..key_end],
        value.replace('\'', "''")
    ))
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
    fn escapes_single_quotes() {
        assert_eq!(
            quote_line("d: it's: here").as_deref(),
            Some("d: 'it''s: here'")
        );
    }
}
