//! Calls to the unit's own functions, and one-way digests, for the data-flow pass (issue 21,
//! third round).
//!
//! **Threat.** Before this, a line that called one of the script's own functions with a
//! secret (`sig = sign(body, os.environ["HOOK_SECRET"])`) carried the secret into whatever it
//! assigned, whatever the function did with it; a webhook tester that signs a sample body
//! with its secret and sends only the HMAC was blocked as exfiltration, while a secret handed
//! to a function that sends it (`def ship(d): requests.post(u, data=d)`) was not followed into
//! the function at all. **Guarantee.** Each argument of a call to a function defined in the
//! unit carries its kinds to the matching parameter (by position or keyword), and the call's
//! value carries what the function returns (its name's taint), not its arguments; a digest
//! (`hmac.new(…)`, `hashlib.sha256(…)`, `createHmac(…)`, `openssl dgst -hmac KEY`) carries
//! nothing of its input, since only a one-way value of it leaves. What the function returns
//! raw, or sends itself, is still followed: a secret passed through `def f(s): return s` and
//! sent is a flow, and so is a parameter that reaches a send inside the function.
//!
//! Lexical, like the rest of the pass: functions are found by name within the unit, calls
//! as `name(` (bare or on `self`/`this`), arguments split at top-level commas.

use std::ops::Range;

use crate::scan::context::Layout;

use regex::bytes::Regex;

use super::syntax::Statement;

/// One argument bound to a parameter of the unit's function: the parameter's name and the
/// argument's text (with digests and nested calls' arguments already removed).
pub(super) struct Binding {
    pub(super) param: String,
    pub(super) arg: String,
}

/// Calls and digests rewritten per statement. Each finds its closing bracket and each
/// argument is cut against the others, so a crafted line of deeply nested calls
/// (`f(f(f(…`) would cost the square of its length; beyond this many a statement's other
/// calls keep their arguments in the text (which only carries more, never less).
const MAX_CALLS_PER_STATEMENT: usize = 64;

/// Words that are never parameters a caller binds.
const RECEIVERS: &[&str] = &["self", "cls", "this"];

/// The parameter names of function `name` defined by `def` (a statement's text), in order;
/// an empty name keeps the position of a parameter that is not a plain name (destructuring).
pub(super) fn params(def: &str, name: &str) -> Vec<String> {
    let Some(at) = find_word(def, name, 0) else {
        return Vec::new();
    };
    let Some(open) = def.get(at..).and_then(|r| r.find('(')).map(|o| at + o) else {
        return Vec::new();
    };
    let close = matching(def, open);
    let inner = def.get(open + 1..close).unwrap_or("");
    let mut out = Vec::new();
    for piece in split_top(inner) {
        let piece = piece
            .trim()
            .trim_start_matches(['*', '&', '.'])
            .trim_start_matches("mut ")
            .trim_start();
        let name: String = piece
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == '$')
            .collect();
        if RECEIVERS.contains(&name.as_str()) {
            continue;
        }
        if piece.is_empty() && inner.trim().is_empty() {
            continue;
        }
        out.push(name);
    }
    out
}

/// The unit's statements rewritten for reading taint, and each statement's bindings: the
/// arguments of calls to the unit's functions (`functions`: span, name and parameters) and
/// of digests are removed from the text (`f(a, b)` reads as `f()`), and so is each
/// function's own parameter list in its definition. Line boundaries are kept.
pub(super) fn rewrite(
    statements: &mut [Statement],
    functions: &[(Range<usize>, String, Vec<String>)],
    digest: &Regex,
) -> Vec<Vec<Binding>> {
    let mut all = Vec::with_capacity(statements.len());
    for (index, s) in statements.iter_mut().enumerate() {
        let mut ranges: Vec<Range<usize>> = Vec::new();
        let mut calls: Vec<(usize, Range<usize>, Vec<Range<usize>>)> = Vec::new();
        let text = s.text.as_str();
        // Digests: their input stays behind.
        for caps in digest.captures_iter(text.as_bytes()) {
            if ranges.len() >= MAX_CALLS_PER_STATEMENT {
                break;
            }
            let Some(whole) = caps.get(0) else { continue };
            if let Some(key) = caps.get(1).or_else(|| caps.get(2)) {
                ranges.push(key.start()..key.end());
            } else if whole.as_bytes().last() == Some(&b'(') {
                let open = whole.end() - 1;
                ranges.push(open + 1..matching(text, open));
            }
        }
        for (f, (span, name, params)) in functions.iter().enumerate() {
            let mut from = 0;
            while let Some(at) = find_word(text, name, from) {
                if ranges.len() >= MAX_CALLS_PER_STATEMENT {
                    break;
                }
                from = at + name.len();
                let after = text.get(from..).unwrap_or("");
                let gap = after.len() - after.trim_start().len();
                if !after.trim_start().starts_with('(') {
                    continue;
                }
                let open = from + gap;
                let close = matching(text, open);
                let before = text.get(..at).unwrap_or("");
                let defining = span.start == index
                    && ["def", "function", "function*", "fn"]
                        .iter()
                        .any(|k| before.trim_end().ends_with(k));
                let receiver = before.ends_with('.')
                    && !RECEIVERS.iter().any(|r| {
                        before
                            .strip_suffix('.')
                            .is_some_and(|b| b.ends_with(r) && word_start(b, b.len() - r.len()))
                    });
                if receiver {
                    continue;
                }
                ranges.push(open + 1..close);
                if defining || params.is_empty() {
                    continue;
                }
                let inner_start = open + 1;
                let inner = text.get(inner_start..close).unwrap_or("");
                let mut args = Vec::new();
                let mut offset = inner_start;
                for piece in split_top(inner) {
                    args.push(offset..offset + piece.len());
                    offset += piece.len() + 1;
                }
                calls.push((f, inner_start..close, args));
            }
        }
        // A definition's parameter list carries nothing: the parameters get what callers pass.
        if let Some((_, name, _)) = functions.iter().find(|(span, _, _)| span.start == index)
            && let Some(at) = find_word(text, name, 0)
            && let Some(open) = text.get(at..).and_then(|r| r.find('(')).map(|o| at + o)
        {
            ranges.push(open + 1..matching(text, open));
        }
        let mut bindings = Vec::new();
        for (f, own, args) in calls {
            let Some((_, _, params)) = functions.get(f) else {
                continue;
            };
            for (position, arg) in args.into_iter().enumerate() {
                let raw = text.get(arg.clone()).unwrap_or("");
                let (param, value) = match keyword(raw) {
                    Some((k, v)) if params.iter().any(|p| p == k) => {
                        (k.to_owned(), arg.end - v.len()..arg.end)
                    }
                    _ => match params.get(position) {
                        Some(p) => (p.clone(), arg),
                        None => continue,
                    },
                };
                if param.is_empty() {
                    continue;
                }
                let inside: Vec<Range<usize>> = ranges
                    .iter()
                    .filter(|r| **r != own && r.start >= value.start && r.end <= value.end)
                    .cloned()
                    .collect();
                let arg = remove(text, value, &inside);
                bindings.push(Binding { param, arg });
            }
        }
        if !ranges.is_empty() {
            apply(s, &ranges);
        }
        all.push(bindings);
    }
    all
}

/// `name=value` (a keyword argument, not `==`): the name and the value.
fn keyword(arg: &str) -> Option<(&str, &str)> {
    let (k, v) = arg.split_once('=')?;
    if v.starts_with(['=', '>']) || k.ends_with(['!', '<', '>', '=']) {
        return None;
    }
    let k = k.trim();
    let plain = !k.is_empty() && k.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_');
    plain.then_some((k, v))
}

/// The text of `span` in `text` without the `ranges` inside it.
fn remove(text: &str, span: Range<usize>, ranges: &[Range<usize>]) -> String {
    let mut out = String::new();
    let mut at = span.start;
    let mut sorted: Vec<&Range<usize>> = ranges.iter().collect();
    sorted.sort_by_key(|r| r.start);
    for r in sorted {
        if r.start > at {
            out.push_str(text.get(at..r.start).unwrap_or(""));
        }
        at = at.max(r.end);
    }
    if at < span.end {
        out.push_str(text.get(at..span.end).unwrap_or(""));
    }
    out
}

/// Removes `ranges` (byte ranges of the joined text) from the statement's text and from its
/// physical lines, which the joined text holds trimmed and separated by one space.
fn apply(s: &mut Statement, ranges: &[Range<usize>]) {
    let mut lines = Vec::with_capacity(s.lines.len());
    let mut offset = 0;
    for line in &s.lines {
        let trimmed = line.trim();
        let indent = line.len() - line.trim_start().len();
        let segment = offset..offset + trimmed.len();
        let inside: Vec<Range<usize>> = ranges
            .iter()
            .filter(|r| r.start < segment.end && r.end > segment.start)
            .map(|r| r.start.max(segment.start)..r.end.min(segment.end))
            .collect();
        let kept = remove(&s.text, segment, &inside);
        lines.push(format!("{}{kept}", line.get(..indent).unwrap_or("")));
        offset += trimmed.len() + 1;
    }
    s.text = remove(&s.text, 0..s.text.len(), ranges);
    s.lines = lines;
}

/// Visits each byte of `text` from `from` that stands outside quotes (a backslash inside a
/// quote skips the next byte) with the bracket depth after it; stops at the first byte
/// `visit` accepts and returns its offset.
fn walk_code(
    text: &str,
    from: usize,
    mut visit: impl FnMut(usize, u8, i32) -> bool,
) -> Option<usize> {
    let bytes = text.as_bytes();
    let mut depth = 0i32;
    let mut quote: Option<u8> = None;
    let mut i = from;
    while let Some(&b) = bytes.get(i) {
        if let Some(q) = quote {
            if b == b'\\' {
                i += 2;
                continue;
            }
            if b == q {
                quote = None;
            }
        } else {
            match b {
                b'"' | b'\'' | b'`' => quote = Some(b),
                b'(' | b'[' | b'{' => depth += 1,
                b')' | b']' | b'}' => depth -= 1,
                _ => {}
            }
            if visit(i, b, depth) {
                return Some(i);
            }
        }
        i += 1;
    }
    None
}

/// The byte offset of the bracket closing the one at `open` (outside quotes), or the end.
fn matching(text: &str, open: usize) -> usize {
    walk_code(text, open, |_, b, depth| {
        matches!(b, b')' | b']' | b'}') && depth <= 0
    })
    .unwrap_or(text.len())
}

/// `text` split at commas outside brackets and quotes.
fn split_top(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    walk_code(text, 0, |i, b, depth| {
        if b == b',' && depth == 0 {
            out.push(text.get(start..i).unwrap_or(""));
            start = i + 1;
        }
        false
    });
    if start <= text.len() {
        out.push(text.get(start..).unwrap_or(""));
    }
    out
}

/// Whether byte `at` of `text` starts a word.
fn word_start(text: &str, at: usize) -> bool {
    at == 0
        || !text
            .as_bytes()
            .get(at - 1)
            .is_some_and(|b| b.is_ascii_alphanumeric() || *b == b'_' || *b == b'$')
}

/// The first occurrence of the word `word` in `text` at or after `from`.
fn find_word(text: &str, word: &str, from: usize) -> Option<usize> {
    if word.is_empty() {
        return None;
    }
    let mut pos = from;
    while let Some(found) = text.get(pos..).and_then(|r| r.find(word)) {
        let at = pos + found;
        let end = at + word.len();
        let after_ok = !text
            .as_bytes()
            .get(end)
            .is_some_and(|b| b.is_ascii_alphanumeric() || *b == b'_' || *b == b'$');
        if word_start(text, at) && after_ok {
            return Some(at);
        }
        // The word is ASCII, so the byte after its first is a character boundary.
        pos = at + 1;
    }
    None
}

/// The calls (`name(`) of the functions `text` defines (`def name(`, `function name(`) whose
/// body, up to the next definition at most 40 lines on, authenticates a request
/// (`AUTH_USE`): a secret handed to one of them is used to authenticate, not harvested.
///
/// **Threat.** Reading several services' keys at once is harvesting; a client that reads two
/// tokens and hands each to its own request helper is not. **Guarantee.** Only a read written
/// inside the argument list of such a function's call is excused; a read assigned, collected
/// or passed to any other function still counts.
pub(crate) fn authenticating_functions(
    text: &str,
    layout: &Layout,
    auth: &regex::bytes::Regex,
) -> Vec<String> {
    let mut out = Vec::new();
    // Definitions start their line (after indentation, `async`, `export`); at most
    // `MAX_DEFINITIONS` are read, each body at most 40 lines and `MAX_BODY` bytes, so a
    // file of definitions (or of `def ` inside one long string) costs a bounded amount.
    // Past the cap a read is simply not excused: it counts, as without this function.
    let mut seen = 0;
    for (line, &at) in layout.starts.iter().enumerate() {
        if seen >= MAX_DEFINITIONS {
            break;
        }
        let line_end = layout.starts.get(line + 1).copied().unwrap_or(text.len());
        let head = text.get(at..line_end).unwrap_or("").trim_start();
        let head = head.strip_prefix("export ").unwrap_or(head);
        let head = head.strip_prefix("async ").unwrap_or(head);
        let Some(after) = head
            .strip_prefix("def ")
            .or_else(|| head.strip_prefix("function "))
        else {
            continue;
        };
        let name: String = after
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect();
        if name.is_empty() || !after[name.len()..].starts_with('(') {
            continue;
        }
        seen += 1;
        // The body: from the next line to the next definition, at most 40 lines, searched
        // once as one span.
        let last = (line + 40).min(layout.starts.len());
        let start = layout.starts.get(line + 1).copied().unwrap_or(text.len());
        let mut end = layout
            .starts
            .get(last)
            .copied()
            .unwrap_or(text.len())
            .max(start)
            .min(start.saturating_add(MAX_BODY));
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        let body = text.get(start..end).unwrap_or("");
        if let Some(next) = [body.find("\ndef "), body.find("\nfunction ")]
            .into_iter()
            .flatten()
            .min()
        {
            end = start + next;
        }
        let authenticates = text
            .get(start..end)
            .is_some_and(|b| auth.is_match(b.as_bytes()));
        if authenticates {
            out.push(name);
        }
    }
    out
}

/// How many function definitions [`authenticating_functions`] reads per file.
const MAX_DEFINITIONS: usize = 256;
/// How many bytes of a function's body it searches.
const MAX_BODY: usize = 8 * 1024;

/// Whether a line up to a secret's read ends inside the open argument list of a call to one
/// of the file's authenticating functions (the name as a whole word: `requests.get(` is not
/// `get(`). Reads are asked about in order; the walk over a line resumes where the last
/// read on it stopped, so a line of many reads is read once.
#[derive(Debug, Default)]
pub(crate) struct OpenCalls {
    line_start: usize,
    pos: usize,
    /// A frame per `(` still open: true when it is a call of one of the functions.
    open: Vec<bool>,
    /// How many of `open` are true.
    calls: usize,
}

impl OpenCalls {
    /// Whether `text[line_start..at]` ends inside a call of one of `functions`.
    pub(crate) fn inside(
        &mut self,
        text: &str,
        line_start: usize,
        at: usize,
        functions: &[String],
    ) -> bool {
        if functions.is_empty() {
            return false;
        }
        if line_start != self.line_start || at < self.pos || self.pos < line_start {
            *self = OpenCalls {
                line_start,
                pos: line_start,
                open: Vec::new(),
                calls: 0,
            };
        }
        let Some(span) = text.get(self.pos..at) else {
            return false;
        };
        for (k, c) in span.char_indices() {
            let i = self.pos + k;
            match c {
                '(' => {
                    let line = &text[line_start..i];
                    let start = line
                        .rfind(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                        .map_or(0, |k| k + 1);
                    let name = &line[start..];
                    let word_start = line[..start].chars().next_back().is_none_or(|c| {
                        !(c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '$'))
                    });
                    let call =
                        word_start && !name.is_empty() && functions.iter().any(|f| f == name);
                    self.calls += usize::from(call);
                    self.open.push(call);
                }
                ')' => {
                    let popped = self.open.pop();
                    self.calls -= usize::from(popped == Some(true));
                }
                _ => {}
            }
        }
        self.pos = at;
        self.calls > 0
    }
}
