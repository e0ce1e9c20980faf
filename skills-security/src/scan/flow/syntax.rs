//! The data-flow pass's reading of code: statements (lines joined while a bracket stays
//! open), what an assignment or binding defines, files a statement writes, and functions'
//! spans. Lexical, for Python, JavaScript/TypeScript and shell alike.

use super::super::context::Layout;
use super::MAX_STATEMENT_LINES;
use super::patterns::Patterns;

/// Words that are never variable names.
pub(super) const KEYWORDS: &[&str] = &[
    "const",
    "let",
    "var",
    "export",
    "local",
    "readonly",
    "declare",
    "await",
    "async",
    "new",
    "return",
    "self",
    "this",
    "true",
    "false",
    "None",
    "null",
    "undefined",
    "in",
    "of",
    "for",
    "if",
    "else",
    "not",
    "and",
    "or",
    "def",
    "function",
    "import",
    "from",
    "as",
    "with",
    "do",
    "done",
    "then",
    "fi",
    "echo",
    "print",
    "str",
    "int",
    "len",
    "list",
    "dict",
];

/// Byte ranges of `code` inside string literals that are plain text, where a word is not a
/// reference to a variable (`gql("{key:{eq:$k}}")` names no variable `key`). Interpolations
/// stay code: `{…}` in an f-string, `${…}` in a template literal; a `$name` or `${name}` in
/// any literal is judged live by [`plain_text_word`] (shell expands it in double quotes).
/// A literal left open runs to the end of `code`.
pub(super) fn plain_literal_spans(code: &[u8]) -> Vec<std::ops::Range<usize>> {
    let mut spans = Vec::new();
    let mut i = 0;
    while let Some(&quote) = code.get(i) {
        if !matches!(quote, b'"' | b'\'' | b'`') {
            i += 1;
            continue;
        }
        let template = quote == b'`';
        let formatted = !template && f_prefix(code, i);
        let mut j = i + 1;
        let mut start = j;
        let mut depth = 0usize;
        while let Some(&c) = code.get(j) {
            if depth == 0 {
                if c == b'\\' {
                    j += 2;
                    continue;
                }
                if c == quote {
                    break;
                }
                let opens = c == b'{'
                    && ((template && j > 0 && code.get(j - 1) == Some(&b'$'))
                        || (formatted && code.get(j + 1) != Some(&b'{')));
                if formatted && c == b'{' && code.get(j + 1) == Some(&b'{') {
                    j += 2;
                    continue;
                }
                if opens {
                    spans.push(start..j);
                    depth = 1;
                }
            } else if c == b'{' {
                depth += 1;
            } else if c == b'}' {
                depth -= 1;
                if depth == 0 {
                    start = j + 1;
                }
            }
            j += 1;
        }
        let end = j.min(code.len());
        if depth == 0 && start < end {
            spans.push(start..end);
        }
        i = j + 1;
    }
    spans
}

/// Whether the literal opening at `quote` has an `f` among its prefix letters (`f"…"`,
/// `rf'…'`).
fn f_prefix(code: &[u8], quote: usize) -> bool {
    let letters = code
        .get(..quote)
        .unwrap_or(b"")
        .iter()
        .rev()
        .take_while(|c| c.is_ascii_alphanumeric() || **c == b'_')
        .count();
    let prefix = code.get(quote - letters..quote).unwrap_or(b"");
    letters <= 2 && prefix.iter().any(|c| matches!(c, b'f' | b'F'))
}

/// Whether the word starting at `start` lies in plain literal text (`spans` from
/// [`plain_literal_spans`]) and is not expanded there as `$name` or `${name}`.
pub(super) fn plain_text_word(spans: &[std::ops::Range<usize>], code: &[u8], start: usize) -> bool {
    let expanded = start > 0
        && (code.get(start - 1) == Some(&b'$')
            || (start > 1
                && code.get(start - 1) == Some(&b'{')
                && code.get(start - 2) == Some(&b'$')));
    // The spans come out in order and never overlap: a binary search keeps a long line of
    // many literals linear in its words.
    let i = spans.partition_point(|r| r.end <= start);
    !expanded && spans.get(i).is_some_and(|r| r.contains(&start))
}

/// Whether the word `m` of `code` is a string prefix (`f"…"`, `rb'…'`), not a name.
pub(super) fn string_prefix(code: &[u8], start: usize, end: usize) -> bool {
    let word = code.get(start..end).unwrap_or(b"");
    let quote = code.get(end).is_some_and(|c| matches!(c, b'"' | b'\''));
    // `"$f"` ends a shell expansion of `f`, not a prefix.
    let expanded = start > 0 && code.get(start - 1) == Some(&b'$');
    quote && !expanded && word.len() <= 2 && word.iter().all(|c| b"fFbBrRuU".contains(c))
}

/// One statement: its first line (in the layout) and its text (lines joined).
pub(super) struct Statement {
    pub(super) line: usize,
    pub(super) text: String,
    /// The text as written (`text` has calls' arguments removed, see `calls.rs`): where a
    /// send is recognised.
    pub(super) raw: String,
    /// The statement's physical lines, for judging each occurrence separately.
    pub(super) lines: Vec<String>,
}

/// The names an assignment or binding statement defines.
pub(super) fn assignment_targets(text: &str, p: &Patterns) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(caps) = p.binding.captures(text.as_bytes()) {
        if let Some(targets) = caps.get(1).or_else(|| caps.get(4)) {
            out.extend(words(p, &String::from_utf8_lossy(targets.as_bytes())));
        }
        return out;
    }
    let Some(eq) = top_level_assignment(text) else {
        return out;
    };
    let lhs = text.get(..eq).unwrap_or("");
    let lhs = lhs
        .trim_end_matches(['+', '|', ':', '-', '*', '.', '?'])
        .trim();
    let mut lhs = lhs;
    for keyword in [
        "export ",
        "local ",
        "readonly ",
        "declare ",
        "const ",
        "let ",
        "var ",
    ] {
        if let Some(rest) = lhs.strip_prefix(keyword) {
            lhs = rest.trim_start();
        }
    }
    if lhs.starts_with(['{', '[', '(']) || lhs.contains(',') {
        // Destructuring or a tuple: every name.
        out.extend(words(p, lhs));
        return out;
    }
    // A type annotation (`x: int`, `const x: Foo`) and any subscript or attribute: the base.
    let base = lhs.split([':', '.', '[', ' ']).next().unwrap_or("").trim();
    let valid = !base.is_empty()
        && base
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'$')
        && !base.bytes().next().is_some_and(|b| b.is_ascii_digit());
    // Anything but a name and its annotation before `=` (`curl -d a=b`) is no assignment.
    let rest_ok = lhs.len() == base.len()
        || lhs[base.len()..].starts_with(['.', '[', ':'])
        || lhs[base.len()..].trim_start().starts_with(':');
    if valid && rest_ok {
        out.push(base.trim_start_matches('$').to_owned());
    }
    out
}

/// The byte offset of the statement's assignment `=` at bracket depth 0, outside quotes
/// (not `==`, `!=`, `<=`, `>=`, `=>`).
pub(super) fn top_level_assignment(text: &str) -> Option<usize> {
    let bytes = text.as_bytes();
    let mut depth = 0i32;
    let mut quote: Option<u8> = None;
    for (i, &b) in bytes.iter().enumerate() {
        if let Some(q) = quote {
            if b == q && bytes.get(i.wrapping_sub(1)) != Some(&b'\\') {
                quote = None;
            }
            continue;
        }
        match b {
            b'"' | b'\'' | b'`' => quote = Some(b),
            b'(' | b'[' | b'{' => depth += 1,
            b')' | b']' | b'}' => depth -= 1,
            b'=' if depth == 0 => {
                let prev = if i > 0 {
                    bytes.get(i - 1).copied()
                } else {
                    None
                };
                let next = bytes.get(i + 1).copied();
                if matches!(prev, Some(b'=' | b'!' | b'<' | b'>'))
                    || matches!(next, Some(b'=' | b'>'))
                {
                    continue;
                }
                return Some(i);
            }
            b'#' if depth == 0 => return None,
            _ => {}
        }
    }
    None
}

/// Files (or the variables naming them) a statement writes: `> out`, `tar czf out`, `zip
/// out`, `cp src out`.
pub(super) fn write_targets(text: &str, p: &Patterns) -> Vec<String> {
    let mut out = Vec::new();
    for caps in p.write_target.captures_iter(text.as_bytes()) {
        let Some(m) = (1..=5).find_map(|g| caps.get(g)) else {
            continue;
        };
        let raw = String::from_utf8_lossy(m.as_bytes());
        let target = raw.trim_matches(['"', '\'']);
        if target.starts_with("/dev/") || target == "&2" || target == "&1" {
            continue;
        }
        if let Some(var) = shell_variable(target) {
            out.push(var);
        } else {
            out.push(target.to_owned());
        }
    }
    out
}

/// `$NAME` or `${NAME}` as the whole of `token`: `NAME`.
pub(super) fn shell_variable(token: &str) -> Option<String> {
    let rest = token.strip_prefix('$')?;
    let rest = rest.strip_prefix('{').unwrap_or(rest);
    let name: String = rest
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
        .collect();
    (!name.is_empty()).then_some(name)
}

pub(super) fn words(p: &Patterns, text: &str) -> Vec<String> {
    p.word
        .find_iter(text.as_bytes())
        .map(|m| String::from_utf8_lossy(m.as_bytes()).into_owned())
        .filter(|w| !KEYWORDS.contains(&w.as_str()))
        .collect()
}

/// The unit's lines joined into statements while a bracket stays open (a block's opening
/// brace does not hold a statement open: only a literal's does).
pub(super) fn statements(text: &str, layout: &Layout, lines: &[usize]) -> Vec<Statement> {
    let mut out = Vec::new();
    let mut k = 0;
    while let Some(&first) = lines.get(k) {
        let mut depth = 0i32;
        let mut joined = String::new();
        let mut physical = Vec::new();
        let mut taken = 0;
        while let Some(&i) = lines.get(k + taken) {
            let line = layout.line_text(text, i);
            depth += join_delta(line);
            if !joined.is_empty() {
                joined.push(' ');
            }
            joined.push_str(line.trim());
            physical.push(line.to_owned());
            taken += 1;
            if depth <= 0 || taken >= MAX_STATEMENT_LINES {
                break;
            }
        }
        out.push(Statement {
            line: first,
            raw: joined.clone(),
            text: joined,
            lines: physical,
        });
        k += taken.max(1);
    }
    out
}

/// Brackets a line leaves open for joining: parentheses, square brackets and the braces of
/// literals, but not a trailing brace that opens a block (after `)`, `=>`, `else`, a type).
pub(super) fn join_delta(line: &str) -> i32 {
    let (open, close) = brackets(line, b"([{", b")]}");
    let mut delta = open - close;
    let trimmed = line.trim_end();
    if let Some(before) = trimmed.strip_suffix('{') {
        let before = before.trim_end();
        let literal = before.ends_with(['=', '(', ',', ':', '[', '{', '?'])
            || before.ends_with("return")
            || before.is_empty();
        if !literal {
            delta -= 1;
        }
    }
    delta
}

/// Braces a line opens minus those it closes (block depth).
pub(super) fn block_delta(line: &str) -> i32 {
    let (open, close) = brackets(line, b"{", b"}");
    open - close
}

/// Opening and closing brackets of the given kinds on a line, outside quotes and comments.
pub(super) fn brackets(line: &str, opening: &[u8], closing: &[u8]) -> (i32, i32) {
    let (mut open, mut close) = (0, 0);
    let mut quote: Option<u8> = None;
    let bytes = line.as_bytes();
    for (i, &b) in bytes.iter().enumerate() {
        if let Some(q) = quote {
            if b == q && (i == 0 || bytes.get(i - 1) != Some(&b'\\')) {
                quote = None;
            }
            continue;
        }
        if b == b'"' || b == b'\'' {
            quote = Some(b);
        } else if opening.contains(&b) {
            open += 1;
        } else if closing.contains(&b) {
            close += 1;
        } else if b == b'#' && (i == 0 || bytes.get(i - 1) == Some(&b' ')) {
            break;
        }
    }
    (open, close)
}

/// Each function's statements (by index) and its name: Python by indentation, brace
/// languages by depth.
pub(super) fn functions(
    statements: &[Statement],
    p: &Patterns,
) -> Vec<(std::ops::Range<usize>, String)> {
    let mut out = Vec::new();
    for (index, s) in statements.iter().enumerate() {
        let Some(first) = s.lines.first() else {
            continue;
        };
        let Some(caps) = p.function_def.captures(first.as_bytes()) else {
            continue;
        };
        let (Some(indent), Some(name)) = (
            caps.get(1)
                .or_else(|| caps.get(3))
                .or_else(|| caps.get(5))
                .or_else(|| caps.get(7)),
            caps.get(2)
                .or_else(|| caps.get(4))
                .or_else(|| caps.get(6))
                .or_else(|| caps.get(8)),
        ) else {
            continue;
        };
        let indent = indent.len();
        let name = String::from_utf8_lossy(name.as_bytes()).into_owned();
        let mut end = index + 1;
        let mut depth = block_delta(&s.text);
        if depth > 0 {
            while depth > 0 {
                let Some(next) = statements.get(end) else {
                    break;
                };
                depth += block_delta(&next.text);
                end += 1;
            }
        } else {
            while let Some(next) = statements.get(end) {
                let line = next.lines.first().map_or("", String::as_str);
                let blank = line.trim().is_empty();
                let deeper = line.len() - line.trim_start().len() > indent;
                if !blank && !deeper {
                    break;
                }
                end += 1;
            }
        }
        out.push((index..end, name));
    }
    out
}
