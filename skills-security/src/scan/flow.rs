//! Source-to-sink data flow inside one script or code block (issue 21): secrets, the
//! environment, credential files, browser stores and the user's own files read, then sent
//! over the network, followed through variables, functions, encodings and files written on
//! the way, in Python, JavaScript/TypeScript and shell.
//!
//! **Threat.** A collector that reads `~/.ssh` into one variable, base64-encodes it in a
//! helper function and posts the result with an ordinary `Content-Type` header shows no line
//! on which a secret meets a request, and the unit-wide signal combination (`signals.rs`)
//! takes any header for authentication. **Guarantee.** Within one unit every assignment,
//! `for`/`with` binding, mutation (`append`, `push`, `write`...), file written (`>`, `tar
//! …f`, `open(…, "w")`) and function return carries the kinds of data that reach it, to a
//! fixed point; a network sink (HTTP clients, sockets, `curl`/`wget`/`nc`/`scp`, mail, DNS
//! lookups) whose arguments carry a source kind is `exfiltration.source_to_sink`: `Critical`
//! for secrets, the environment and credential files, `High` for the user's files. A named
//! secret placed in an authentication position (an `Authorization` header, `token=`, a
//! bearer) is the request's own authentication, judged per occurrence, not per line or unit,
//! so an ordinary header beside the payload excuses nothing. Public keys (`.pub`) and the
//! home directory itself (its configuration files) are not sources; walking or listing it is.
//!
//! This is a lexical approximation, not a parser: names are matched as words, statements
//! are lines joined while brackets are open, and a function's name carries what any of its
//! `return`s carries. It over-approximates within a unit (a tainted name reused for
//! something else stays tainted) and never follows data across files.

use std::collections::{BTreeMap, BTreeSet};

use super::context::{Ctx, Layout};
use super::report::{Category, FindingContext, ScanFinding, Severity};
use super::weigh;

pub(crate) mod calls;
mod patterns;
mod syntax;

use patterns::{Patterns, patterns};
use syntax::{
    KEYWORDS, Statement, assignment_targets, functions, plain_literal_spans, plain_text_word,
    statements, string_prefix, write_targets,
};

/// A named secret (an environment variable whose name says it holds one).
const SECRET: u8 = 1;
/// The whole environment.
const ENV: u8 = 1 << 1;
/// A credential file or store: private keys, cloud and tool credentials, `.env`, browser
/// logins and cookies, wallets, the keychain.
const CRED: u8 = 1 << 2;
/// The user's own files: personal folders, shell history, a walk or listing of the home
/// directory.
const USER: u8 = 1 << 3;
/// The home directory itself (not a source: listing or walking it is).
const HOME: u8 = 1 << 4;
/// Names of secrets (`"GITHUB_TOKEN"`): a secret once looked up in the environment.
const NAME: u8 = 1 << 5;
/// What counts as a source at a sink.
const SOURCES: u8 = SECRET | ENV | CRED | USER;

/// Statements longer than this many lines (an unclosed bracket) are cut.
const MAX_STATEMENT_LINES: usize = 40;
/// Passes over a unit before the taint is taken as settled (each pass only adds).
const MAX_PASSES: usize = 4;
/// Units with more lines than this are not followed (bounded work per file).
const MAX_UNIT_LINES: usize = 5_000;

/// The flows found in one unit whose lines are `lines` (layout indices, code only).
pub(crate) fn unit_flows(
    path: &str,
    text: &str,
    layout: &Layout,
    lines: &[usize],
    doc: u8,
    line_no: &dyn Fn(usize) -> u32,
) -> Vec<ScanFinding> {
    let Some(p) = patterns() else {
        return Vec::new();
    };
    if lines.is_empty() || lines.len() > MAX_UNIT_LINES {
        return Vec::new();
    }
    // No sink, no flow; no source, no flow: most code is skipped after one search of the
    // unit's whole span for each (line-anchored forms read in multi-line mode, so every
    // match on one of its lines is a match on the span; comment lines inside the span can
    // only let more through).
    let (Some(&first), Some(&last)) = (lines.first(), lines.last()) else {
        return Vec::new();
    };
    let from = layout.starts.get(first).copied().unwrap_or(0);
    let to = layout
        .starts
        .get(last + 1)
        .copied()
        .unwrap_or(text.len())
        .min(text.len());
    let span = text.as_bytes().get(from..to.max(from)).unwrap_or(b"");
    if !p.sink_gate.is_match(span) || !p.source_gate.is_match(span) {
        return Vec::new();
    }
    let mut statements = statements(text, layout, lines);
    // The unit's functions (read on the statements as written), their parameters, then the
    // statements rewritten so a call carries what its function returns, not its arguments,
    // and a digest nothing of its input (`calls.rs`).
    let functions: Vec<(std::ops::Range<usize>, String, Vec<String>)> = functions(&statements, p)
        .into_iter()
        .map(|(span, name)| {
            let params = statements
                .get(span.start)
                .map(|s| calls::params(&s.text, &name))
                .unwrap_or_default();
            (span, name, params)
        })
        .collect();
    let bindings = calls::rewrite(&mut statements, &functions, &p.digest);
    // The sources written in each statement's lines and in its joined text, read once (the
    // passes below only look them up).
    let direct: Vec<(Vec<u8>, u8)> = statements
        .iter()
        .map(|s| {
            let per_line: Vec<u8> = s.lines.iter().map(|l| direct_sources(p, l)).collect();
            let joined = if s.lines.len() > 1 {
                direct_sources(p, &s.text)
            } else {
                per_line.first().copied().unwrap_or(0)
            };
            (per_line, joined)
        })
        .collect();
    let bound: Vec<Vec<(&str, &str, u8)>> = bindings
        .iter()
        .map(|list| {
            list.iter()
                .map(|b| (b.param.as_str(), b.arg.as_str(), direct_sources(p, &b.arg)))
                .collect()
        })
        .collect();
    // Nor without anything a source could start from.
    if direct
        .iter()
        .all(|(lines, _)| lines.iter().all(|k| *k == 0))
        && bound.iter().flatten().all(|(_, _, k)| *k == 0)
    {
        return Vec::new();
    }
    let mut taint = Taint::default();
    let mut receivers: BTreeSet<String> = BTreeSet::new();
    let mut writers: BTreeMap<String, String> = BTreeMap::new();
    for s in &statements {
        for caps in p.receiver_def.captures_iter(s.raw.as_bytes()) {
            if let Some(name) = caps.get(1).or_else(|| caps.get(2)) {
                receivers.insert(String::from_utf8_lossy(name.as_bytes()).into_owned());
            }
        }
        for caps in p.writer_def.captures_iter(s.text.as_bytes()) {
            let (file, handle) = match (caps.get(1), caps.get(2), caps.get(3), caps.get(4)) {
                (Some(f), Some(h), _, _) => (f, h),
                (_, _, Some(h), Some(f)) => (f, h),
                _ => continue,
            };
            writers.insert(
                String::from_utf8_lossy(handle.as_bytes()).into_owned(),
                String::from_utf8_lossy(file.as_bytes()).into_owned(),
            );
        }
    }
    let mut found: Option<(usize, u8)> = None;
    for _ in 0..MAX_PASSES {
        let before = taint.size();
        found = None;
        for (index, s) in statements.iter().enumerate() {
            let d = direct.get(index);
            let kinds = taint.kinds_of(p, s, d, false);
            if kinds != 0 {
                for target in assignment_targets(&s.text, p) {
                    taint.add(&target, kinds);
                }
                for target in write_targets(&s.text, p) {
                    taint.add(&target, kinds);
                }
                if let Some((_, name, _)) = functions
                    .iter()
                    .find(|(span, _, _)| span.contains(&index) && is_return(&s.text))
                {
                    taint.add(name, kinds);
                }
            }
            // Arguments of calls to the unit's functions reach their parameters.
            for (param, arg, own) in bound.get(index).into_iter().flatten() {
                let k = taint.kinds_in(p, arg, *own);
                if k != 0 {
                    taint.add(param, k);
                }
            }
            // Mutations (`x.append(secret)`) carry what their arguments carry to the receiver,
            // and through a writer to the file or buffer it writes.
            for caps in p.mutation.captures_iter(s.text.as_bytes()) {
                let (Some(whole), Some(recv)) = (caps.get(0), caps.get(1)) else {
                    continue;
                };
                let args = s.text.get(whole.end()..).unwrap_or("");
                let arg_kinds = taint.kinds_in(p, args, direct_sources(p, args));
                if arg_kinds != 0 {
                    let recv = String::from_utf8_lossy(recv.as_bytes()).into_owned();
                    if let Some(file) = writers.get(&recv).cloned() {
                        taint.add(file.trim_matches(['"', '\'']), arg_kinds);
                    }
                    taint.add(&recv, arg_kinds);
                }
            }
            // The sink: a network call or a send on a connection, with a source in it.
            // The first sink, unless a later one carries worse (secrets over the user's files).
            let worse = |k: u8| k & (SECRET | ENV | CRED) != 0;
            if found.is_none_or(|(_, k)| !worse(k)) && is_sink(s, p, &receivers) {
                let reaching = taint.kinds_of(p, s, d, true) & SOURCES;
                if reaching != 0 && found.is_none_or(|_| worse(reaching)) {
                    found = Some((s.line, reaching));
                }
            }
        }
        // A pass that added nothing saw the settled taint: its sink is the answer.
        if taint.size() == before {
            break;
        }
    }
    let Some((line, kinds)) = found else {
        return Vec::new();
    };
    let (severity, what) = if kinds & (SECRET | ENV | CRED) != 0 {
        (
            Severity::Critical,
            "secrets, the environment or credential files",
        )
    } else {
        (Severity::High, "the user's own files")
    };
    let steps = doc.min(3);
    let sev = weigh::lower(severity, steps);
    vec![
        ScanFinding::new(
            Category::Exfiltration,
            sev,
            "exfiltration.source_to_sink",
            path,
            line_no(line),
            layout.line_text(text, line).to_owned(),
            format!("{what} are read and reach a network send in the same code (followed through variables, functions and files)"),
        )
        .in_context(if steps > 0 {
            FindingContext::Documentation
        } else {
            FindingContext::Code
        }),
    ]
}

/// Whether statement `s` sends over the network.
fn is_sink(s: &Statement, p: &Patterns, receivers: &BTreeSet<String>) -> bool {
    if p.sink.is_match(s.raw.as_bytes()) {
        return true;
    }
    p.receiver_use.captures_iter(s.raw.as_bytes()).any(|c| {
        c.get(1)
            .is_some_and(|r| receivers.contains(String::from_utf8_lossy(r.as_bytes()).as_ref()))
    })
}

fn is_return(text: &str) -> bool {
    let t = text.trim_start();
    t.starts_with("return ") || t.starts_with("return(") || t.starts_with("yield ")
}

/// What each name (a variable, a function, a file path) carries.
#[derive(Default)]
struct Taint {
    names: BTreeMap<String, u8>,
    /// Literal paths written from a source (`/tmp/x.tgz`).
    paths: BTreeMap<String, u8>,
}

impl Taint {
    fn size(&self) -> usize {
        self.names
            .values()
            .map(|k| k.count_ones() as usize)
            .sum::<usize>()
            + self
                .paths
                .values()
                .map(|k| k.count_ones() as usize)
                .sum::<usize>()
    }

    fn add(&mut self, name: &str, kinds: u8) {
        let name = name.trim();
        if name.is_empty() || KEYWORDS.contains(&name) {
            return;
        }
        let is_path = name.contains('/') || name.contains('.');
        let map = if is_path {
            &mut self.paths
        } else {
            &mut self.names
        };
        *map.entry(name.to_owned()).or_insert(0) |= kinds;
    }

    /// The kinds a piece of code carries: its own sources (`direct`, from
    /// [`direct_sources`]) and the names it mentions.
    fn kinds_in(&self, p: &Patterns, code: &str, direct: u8) -> u8 {
        let mut kinds = direct;
        let literals = plain_literal_spans(code.as_bytes());
        for m in p.word.find_iter(code.as_bytes()) {
            if string_prefix(code.as_bytes(), m.start(), m.end())
                || plain_text_word(&literals, code.as_bytes(), m.start())
            {
                continue;
            }
            if let Some(k) = self
                .names
                .get(String::from_utf8_lossy(m.as_bytes()).as_ref())
            {
                kinds |= *k;
            }
        }
        for (path, k) in &self.paths {
            if code.contains(path.as_str()) {
                kinds |= *k;
            }
        }
        // A secret's name looked up in the environment is the secret.
        if kinds & NAME != 0 && p.env_lookup.is_match(code.as_bytes()) {
            kinds |= SECRET;
        }
        // Walking or listing the home directory reads the user's files.
        if kinds & HOME != 0 && p.walk.is_match(code.as_bytes()) {
            kinds |= USER;
        }
        kinds
    }

    /// The kinds statement `s` carries, line by line: a named secret counts only where it
    /// is not in an authentication position (judged per occurrence). At a sink only the
    /// sources count; elsewhere the markers read on the whole statement (a secret's name and
    /// the environment, the home directory and a walk) on different lines also combine.
    fn kinds_of(
        &self,
        p: &Patterns,
        s: &Statement,
        direct: Option<&(Vec<u8>, u8)>,
        at_sink: bool,
    ) -> u8 {
        let mut kinds = 0;
        for (i, line) in s.lines.iter().enumerate() {
            let own = direct
                .and_then(|(lines, _)| lines.get(i).copied())
                .unwrap_or(0);
            let k = self.kinds_in(p, line, own);
            kinds |= if k & SECRET != 0 && self.only_in_auth(p, line) {
                k & !SECRET
            } else {
                k
            };
        }
        if !at_sink && s.lines.len() > 1 {
            let own = direct.map_or(0, |(_, joined)| *joined);
            kinds |= self.kinds_in(p, &s.text, own) & (NAME | HOME | USER);
        }
        kinds
    }

    /// Whether every secret-carrying occurrence on `line` stands in an authentication
    /// position: the argument it belongs to (back to the previous `,`, `(`, `[`, an opening
    /// `{` of a literal, or a shell option) names an authentication scheme or parameter.
    fn only_in_auth(&self, p: &Patterns, line: &str) -> bool {
        let bytes = line.as_bytes();
        let mut any = false;
        let mut occurrences: Vec<(usize, usize)> = Vec::new();
        let literals = plain_literal_spans(bytes);
        for m in p.word.find_iter(bytes) {
            if string_prefix(bytes, m.start(), m.end())
                || plain_text_word(&literals, bytes, m.start())
            {
                continue;
            }
            let name = String::from_utf8_lossy(m.as_bytes());
            if self
                .names
                .get(name.as_ref())
                .is_some_and(|k| k & SECRET != 0)
            {
                occurrences.push((m.start(), m.end()));
            }
        }
        for caps in p.secret.captures_iter(bytes) {
            if let Some(m) = caps.get(0) {
                occurrences.push((m.start(), m.end()));
            }
        }
        for (start, _) in occurrences {
            any = true;
            let argument = argument_before(line, start);
            if !p.auth.is_match(argument.as_bytes()) {
                return false;
            }
        }
        any
    }
}

/// The text of the argument that the byte at `at` belongs to, from its start up to `at`.
fn argument_before(line: &str, at: usize) -> &str {
    let bytes = line.as_bytes();
    let mut i = at.min(bytes.len());
    while i > 0 {
        let c = bytes.get(i - 1).copied().unwrap_or(b' ');
        let next = bytes.get(i).copied().unwrap_or(b' ');
        let delimiter = matches!(c, b',' | b'(' | b'[')
            || (c == b'{' && (next == b' ' || next == b'\'' || next == b'"' || next == b'\n'))
            || (c == b'-' && i >= 2 && bytes.get(i - 2) == Some(&b' '));
        if delimiter {
            break;
        }
        i -= 1;
    }
    line.get(i..at).unwrap_or("")
}

/// The source kinds written directly in `code`.
fn direct_sources(p: &Patterns, code: &str) -> u8 {
    let stripped;
    let code = if p.env_option.is_match(code.as_bytes()) {
        stripped = String::from_utf8_lossy(&p.env_option.replace_all(code.as_bytes(), &b""[..]))
            .into_owned();
        stripped.as_str()
    } else {
        code
    };
    let bytes = code.as_bytes();
    let mut kinds = 0;
    if p.secret.is_match(bytes) {
        kinds |= SECRET;
    }
    if p.env_dump.is_match(bytes) {
        kinds |= ENV;
    }
    // A public key is no secret: a credential match that is a `.pub` file does not count.
    // The whole path token is read: `~/.ssh/id_ed25519.pub` is a public key.
    if p.cred.find_iter(bytes).any(|m| {
        let rest = bytes.get(m.end()..).unwrap_or(b"");
        let tail = rest
            .iter()
            .take_while(|c| c.is_ascii_alphanumeric() || matches!(c, b'_' | b'.' | b'/' | b'-'))
            .count();
        let token = bytes.get(m.start()..m.end() + tail).unwrap_or(b"");
        !token.ends_with(b".pub")
    }) {
        kinds |= CRED;
    }
    if p.user.is_match(bytes) {
        kinds |= USER;
    }
    if p.home.is_match(bytes) {
        kinds |= HOME;
    }
    if p.name_literal.is_match(bytes) {
        kinds |= NAME;
    }
    kinds
}

/// The code units of a laid-out file: for each unit, its code lines (comments left out) and
/// its documentation level.
pub(crate) fn code_units(layout: &Layout) -> Vec<(Vec<usize>, u8)> {
    let mut units: BTreeMap<u32, (Vec<usize>, u8)> = BTreeMap::new();
    for (i, ctx) in layout.ctx.iter().enumerate() {
        if *ctx != Ctx::Code {
            continue;
        }
        let unit = layout.unit.get(i).copied().unwrap_or(0);
        let doc = layout.doc.get(i).copied().unwrap_or(0);
        let entry = units.entry(unit).or_default();
        entry.0.push(i);
        entry.1 = entry.1.max(doc);
    }
    units.into_values().collect()
}

#[cfg(test)]
mod tests;
