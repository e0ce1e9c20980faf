//! One `allowed-tools` entry: parsed into what it grants, and matched against a call.
//!
//! Threat: a skill's own declaration widening what it may do without asking (`Bash(*)`,
//! `Bash(git:*; rm -rf /)`, `Write(../**)`, `WebFetch(domain:*)`), or a call that looks
//! like a listed one to a string comparison but does something else to the shell, the file
//! system or the network (`git log; rm -rf /`, `src/../../etc/passwd`,
//! `https://docs.example.com@evil.test/`). Guarantee: an entry grants only what its plain
//! reading says, or nothing (a refused entry, with the reason); a call matches only when
//! its argument, read the way the shell, the file system or a URL parser reads it, is
//! covered:
//!
//! * commands: no shell operators, substitutions or redirections anywhere (`;`, `&`, `|`,
//!   `` ` ``, `$`, `(`, `)`, `<`, `>`, `\`, line breaks), neither in the entry nor in the
//!   call; no glob, brace, tilde or comment characters in an entry (`/???/?h` is `sh`), its
//!   first word a plain program name (no assignment), no quotes in a prefix entry; words
//!   split on spaces and tabs only; an exact entry equals the call word for word, a `:*`
//!   entry is a whole-word prefix of it (`git log:*` covers `git log -3`, not `git logx`;
//!   what follows the prefix is the call's own: `git log --output=FILE` is covered); the only
//!   wildcard is the trailing `:*`, and it needs a non-empty prefix;
//! * paths: relative to the workspace root, never absolute, `~` or `..` in an entry;
//!   `*` and `?` within one path segment, `**` across segments, a trailing `/` for
//!   everything beneath, none of them sweeping in hidden entries (`.git`); a call's path is
//!   read from its tool's own field, and every other path field it carries must stay inside
//!   the workspace too; paths are normalized lexically (`.` dropped, `..` popped, escaping
//!   the root never matches, an absolute path matches only beneath the workspace root the
//!   policy was given);
//! * URLs: `domain:host` (or `domain:*.host` for its subdomains, not the host itself) against the host of an
//!   `http`/`https` URL with no user info, no backslash and no percent-encoding in the
//!   authority.
//!
//! Lexical is the boundary: a symlink inside the workspace that points out of it is the
//! tool's to refuse (open beneath the root, as the sandbox does), not this matcher's.

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Component, Path};

use serde::Serialize;
use serde_json::Value;

/// The longest entry considered; longer ones are refused.
pub const MAX_ENTRY_CHARS: usize = 512;
/// The longest argument (command, path, URL) a call may have and still match.
pub const MAX_ARGUMENT_CHARS: usize = 8_192;

/// How a tool's calls name what they act on: the argument an entry's specifier is matched
/// against.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
#[non_exhaustive]
pub enum ArgumentKind {
    /// A shell command in the string field `field` (`Bash(git log:*)`).
    Command {
        /// The input field holding the command.
        field: String,
    },
    /// A file or directory path in the string field `field` (`Write(src/**)`). Each of
    /// `confined`, when present, must also be a path inside the workspace: the other path
    /// fields a call could smuggle in (a Write call's `notebook_path`), and paths the tool
    /// joins to `field` (Glob's `pattern`).
    Path {
        /// The input field holding the path the entry is about.
        field: String,
        /// Input fields that must stay inside the workspace when present.
        confined: Vec<String>,
    },
    /// A URL in the string field `field` (`WebFetch(domain:docs.rs)`).
    Url {
        /// The input field holding the URL.
        field: String,
    },
}

impl ArgumentKind {
    /// A command in `field`.
    pub fn command(field: impl Into<String>) -> ArgumentKind {
        ArgumentKind::Command {
            field: field.into(),
        }
    }

    /// A path in `field`; each of `confined`, when present, must stay inside the workspace.
    pub fn path<I, S>(field: impl Into<String>, confined: I) -> ArgumentKind
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        ArgumentKind::Path {
            field: field.into(),
            confined: confined.into_iter().map(Into::into).collect(),
        }
    }

    /// A URL in `field`.
    pub fn url(field: impl Into<String>) -> ArgumentKind {
        ArgumentKind::Url {
            field: field.into(),
        }
    }
}

/// Which tools take a specifier in parentheses, and how their calls are read. The default
/// knows the agent tools skills name today, each with the one field it acts on: `Bash`
/// (`command`); `Read`, `Write`, `Edit`, `MultiEdit` (`file_path`); `NotebookEdit`
/// (`notebook_path`); `Glob` (`path`, its `pattern` confined), `Grep` (`path`, its `glob`
/// confined), `LS` (`path`); `WebFetch` (`url`). Every other known path field a call carries
/// must stay inside the workspace too. A host whose tools have other names or fields adds
/// them. A specifier on any other tool is refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolKinds {
    kinds: BTreeMap<String, ArgumentKind>,
}

impl Default for ToolKinds {
    fn default() -> Self {
        let mut kinds = BTreeMap::new();
        kinds.insert("Bash".to_owned(), ArgumentKind::command("command"));
        const PATHS: [&str; 3] = ["file_path", "notebook_path", "path"];
        let others = |field: &str, extra: &[&str]| -> Vec<String> {
            PATHS
                .iter()
                .chain(extra)
                .filter(|f| **f != field)
                .map(|f| (*f).to_owned())
                .collect()
        };
        let tools: [(&str, &str, &[&str]); 8] = [
            ("Read", "file_path", &[]),
            ("Write", "file_path", &[]),
            ("Edit", "file_path", &[]),
            ("MultiEdit", "file_path", &[]),
            ("NotebookEdit", "notebook_path", &[]),
            ("Glob", "path", &["pattern"]),
            ("Grep", "path", &["glob"]),
            ("LS", "path", &[]),
        ];
        for (tool, field, extra) in tools {
            kinds.insert(
                tool.to_owned(),
                ArgumentKind::path(field, others(field, extra)),
            );
        }
        kinds.insert("WebFetch".to_owned(), ArgumentKind::url("url"));
        ToolKinds { kinds }
    }
}

impl ToolKinds {
    /// The default table.
    pub fn new() -> ToolKinds {
        ToolKinds::default()
    }

    /// No tool takes a specifier.
    pub fn empty() -> ToolKinds {
        ToolKinds {
            kinds: BTreeMap::new(),
        }
    }

    /// Reads calls of `tool` as `kind` (replacing what was there).
    pub fn with(mut self, tool: impl Into<String>, kind: ArgumentKind) -> ToolKinds {
        self.kinds.insert(tool.into(), kind);
        self
    }

    /// How calls of `tool` are read, if it takes a specifier.
    pub fn get(&self, tool: &str) -> Option<&ArgumentKind> {
        self.kinds.get(tool)
    }
}

/// A tool call as the model made it: the tool's name and its JSON input.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct ToolCall {
    /// The tool's name (`Bash`, `mcp__github__create_issue`).
    pub name: String,
    /// Its input.
    pub input: Value,
}

impl ToolCall {
    /// A call of `name` with `input`.
    pub fn new(name: impl Into<String>, input: Value) -> ToolCall {
        ToolCall {
            name: name.into(),
            input,
        }
    }
}

/// What one parsed entry grants.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Grant {
    /// Every call of the tool.
    Tool,
    /// Every tool of an MCP server: names beginning with this prefix (`mcp__github__`).
    Server(String),
    /// Commands: these words exactly, or beginning with them.
    Command { words: Vec<String>, prefix: bool },
    /// Paths matching a glob, by segment.
    Path(Vec<Segment>),
    /// URLs on a host (and its subdomains).
    Domain { host: String, subdomains: bool },
}

/// One path-glob segment.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Segment {
    /// `**`: any number of segments, none included.
    AnyDepth,
    /// A segment with `*` and `?` wildcards.
    Glob(Vec<char>),
}

/// One `allowed-tools` entry the policy accepted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolPattern {
    entry: String,
    tool: String,
    grant: Grant,
}

/// Why an entry grants nothing.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct RefusedEntry {
    /// The entry as written (cut to [`MAX_ENTRY_CHARS`]).
    pub entry: String,
    /// Why it was refused.
    pub reason: String,
}

impl fmt::Display for RefusedEntry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "`{}`: {}", self.entry, self.reason)
    }
}

/// Characters that make a shell do more than run one command with arguments.
const SHELL_OPERATORS: &[char] = &[
    ';', '&', '|', '`', '$', '(', ')', '<', '>', '\\', '\n', '\r',
];

/// Characters the shell expands into other words (globs, braces, the home directory) or
/// that start a comment: never in an entry, so an entry runs what it reads.
const SHELL_EXPANSIONS: &[char] = &['?', '[', ']', '{', '}', '~', '#'];

impl ToolPattern {
    /// Parses one entry (`Read`, `Bash(git log:*)`, `Write(src/**)`, `mcp__server__tool`,
    /// `mcp__server__*`, `WebFetch(domain:docs.rs)`).
    ///
    /// # Errors
    ///
    /// The reason the entry grants nothing.
    pub fn parse(entry: &str, kinds: &ToolKinds) -> Result<ToolPattern, String> {
        let entry = entry.trim();
        if entry.is_empty() {
            return Err("empty entry".into());
        }
        if entry.chars().count() > MAX_ENTRY_CHARS {
            return Err(format!("longer than {MAX_ENTRY_CHARS} characters"));
        }
        if entry.chars().any(|c| c.is_control() && c != '\t') {
            return Err("control characters".into());
        }
        let (name, specifier) = match entry.find('(') {
            None => (entry, None),
            Some(open) => {
                let inner = entry
                    .get(open + 1..)
                    .and_then(|rest| rest.strip_suffix(')'))
                    .ok_or("a specifier must close with `)` at the end of the entry")?;
                if !balanced(inner) {
                    return Err("unbalanced parentheses in the specifier".into());
                }
                (entry.get(..open).unwrap_or(""), Some(inner))
            }
        };
        let grant = match specifier {
            None => name_grant(name)?,
            Some(inner) => {
                check_name(name)?;
                match kinds.get(name) {
                    Some(ArgumentKind::Command { .. }) => command_grant(inner)?,
                    Some(ArgumentKind::Path { .. }) => path_grant(inner)?,
                    Some(ArgumentKind::Url { .. }) => domain_grant(inner)?,
                    None => return Err(format!("`{name}` takes no specifier")),
                }
            }
        };
        Ok(ToolPattern {
            entry: entry.to_owned(),
            tool: name.to_owned(),
            grant,
        })
    }

    /// The entry as written.
    pub fn entry(&self) -> &str {
        &self.entry
    }

    /// The tool it names (`Bash`; `mcp__server__*` for a whole server).
    pub fn tool(&self) -> &str {
        &self.tool
    }

    /// Whether `call` is covered, reading its argument as `kinds` says; absolute paths
    /// match only beneath `workspace`.
    pub fn matches(&self, call: &ToolCall, kinds: &ToolKinds, workspace: Option<&Path>) -> bool {
        match &self.grant {
            Grant::Tool => call.name == self.tool,
            Grant::Server(prefix) => {
                call.name.len() > prefix.len() && call.name.starts_with(prefix.as_str())
            }
            grant => {
                if call.name != self.tool {
                    return false;
                }
                match (grant, kinds.get(&call.name)) {
                    (Grant::Command { words, prefix }, Some(ArgumentKind::Command { field })) => {
                        string_field(&call.input, field)
                            .and_then(command_words)
                            .is_some_and(|got| {
                                if *prefix {
                                    got.len() >= words.len() && got[..words.len()] == words[..]
                                } else {
                                    got == *words
                                }
                            })
                    }
                    (Grant::Path(glob), Some(ArgumentKind::Path { field, confined })) => {
                        let inside = |f: &String| match call.input.get(f) {
                            None => true,
                            Some(value) => value
                                .as_str()
                                .and_then(|p| normalize_call_path(p, workspace))
                                .is_some(),
                        };
                        confined.iter().all(inside)
                            && string_field(&call.input, field)
                                .and_then(|p| normalize_call_path(p, workspace))
                                .is_some_and(|segments| glob_matches(glob, &segments))
                    }
                    (Grant::Domain { host, subdomains }, Some(ArgumentKind::Url { field })) => {
                        string_field(&call.input, field)
                            .and_then(url_host)
                            .is_some_and(|got| {
                                (!*subdomains && got == *host)
                                    || (*subdomains
                                        && got.len() > host.len()
                                        && got.ends_with(host.as_str())
                                        && got[..got.len() - host.len()].ends_with('.'))
                            })
                    }
                    // The host changed how the tool's calls are read since the entry was
                    // parsed: nothing matches.
                    _ => false,
                }
            }
        }
    }
}

fn balanced(text: &str) -> bool {
    let mut depth = 0usize;
    for c in text.chars() {
        match c {
            '(' => depth += 1,
            ')' => match depth.checked_sub(1) {
                Some(d) => depth = d,
                None => return false,
            },
            _ => {}
        }
    }
    depth == 0
}

fn check_name(name: &str) -> Result<(), String> {
    let mut chars = name.chars();
    let first_ok = chars.next().is_some_and(|c| c.is_ascii_alphabetic());
    if !first_ok || !chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-') {
        return Err(if name.contains('*') {
            "a wildcard tool name would pre-approve every tool".into()
        } else {
            format!("`{name}` is not a tool name (letters, digits, `_` and `-`)")
        });
    }
    Ok(())
}

/// A bare name: the tool, or (`mcp__server`, `mcp__server__*`) every tool of a server.
fn name_grant(name: &str) -> Result<Grant, String> {
    if let Some(rest) = name.strip_prefix("mcp__") {
        if let Some(server) = rest.strip_suffix("__*") {
            check_name(server)?;
            if server.contains("__") {
                return Err("a server wildcard is `mcp__<server>__*`".into());
            }
            return Ok(Grant::Server(format!("mcp__{server}__")));
        }
        check_name(name)?;
        if !rest.is_empty() && !rest.contains("__") {
            return Ok(Grant::Server(format!("{name}__")));
        }
        if rest.is_empty() || rest.ends_with("__") || rest.starts_with("__") {
            return Err("an MCP tool is `mcp__<server>__<tool>`".into());
        }
        return Ok(Grant::Tool);
    }
    check_name(name)?;
    Ok(Grant::Tool)
}

fn command_grant(inner: &str) -> Result<Grant, String> {
    let inner = inner.trim();
    if inner.contains(SHELL_OPERATORS) {
        return Err(
            "shell operators, substitutions and redirections are never part of an entry".into(),
        );
    }
    let (body, prefix) = match inner.strip_suffix(":*") {
        Some(body) => (body.trim_end(), true),
        None => (inner, false),
    };
    if body.contains('*') {
        return Err(
            "the only wildcard is a trailing `:*` after a command prefix; write the bare tool name to allow every command"
                .into(),
        );
    }
    if body.contains(SHELL_EXPANSIONS) {
        return Err(
            "glob, brace, tilde and comment characters (`? [ ] { } ~ #`) would make the shell run something other than the entry reads"
                .into(),
        );
    }
    if prefix && body.contains(['\'', '"']) {
        return Err("a prefix entry cannot hold quotes (the call could close them)".into());
    }
    let words: Vec<String> = split_words(body).map(str::to_owned).collect();
    let Some(program) = words.first() else {
        return Err(
            "an empty command would allow every command; write the bare tool name for that".into(),
        );
    };
    if !program
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '/' | '+' | '-'))
    {
        return Err(format!(
            "`{program}` is not a program name (an assignment or quoting would change what runs)"
        ));
    }
    Ok(Grant::Command { words, prefix })
}

fn split_words(text: &str) -> impl Iterator<Item = &str> {
    text.split([' ', '\t']).filter(|w| !w.is_empty())
}

/// A call's command as words, or `None` when it is not one plain command.
fn command_words(command: &str) -> Option<Vec<String>> {
    if command.chars().count() > MAX_ARGUMENT_CHARS
        || command.contains(SHELL_OPERATORS)
        || command.chars().any(|c| c.is_control() && c != '\t')
    {
        return None;
    }
    Some(split_words(command).map(str::to_owned).collect())
}

fn path_grant(inner: &str) -> Result<Grant, String> {
    let inner = inner.trim();
    if inner.is_empty() {
        return Err("an empty path pattern".into());
    }
    if inner.starts_with('/') || inner.starts_with('~') {
        return Err(
            "a skill's paths are relative to the workspace: no absolute or home paths".into(),
        );
    }
    if inner.contains('\\') || inner.contains('\0') {
        return Err("backslashes are not path separators here".into());
    }
    let body = inner.strip_prefix("./").unwrap_or(inner);
    let mut segments: Vec<Segment> = Vec::new();
    for part in body.split('/') {
        match part {
            "" | "." => {}
            ".." => return Err("`..` would reach outside the workspace".into()),
            "**" => {
                if segments.last() != Some(&Segment::AnyDepth) {
                    segments.push(Segment::AnyDepth);
                }
            }
            glob => segments.push(Segment::Glob(glob.replace("**", "*").chars().collect())),
        }
    }
    if body.ends_with('/') && segments.last() != Some(&Segment::AnyDepth) {
        segments.push(Segment::AnyDepth);
    }
    if segments.iter().all(|s| *s == Segment::AnyDepth) {
        return Err(
            "a pattern matching every path; write the bare tool name to allow every path".into(),
        );
    }
    Ok(Grant::Path(segments))
}

/// The call's path as segments relative to the workspace, or `None` when it is outside it
/// (or cannot be read).
fn normalize_call_path(path: &str, workspace: Option<&Path>) -> Option<Vec<String>> {
    if path.is_empty() || path.chars().count() > MAX_ARGUMENT_CHARS || path.contains('\0') {
        return None;
    }
    if path.starts_with('~') {
        return None;
    }
    let path = Path::new(path);
    let relative: Vec<String> = if path.is_absolute() {
        let root = normalize_absolute(workspace?)?;
        let full = normalize_absolute(path)?;
        let rest = full.get(root.len()..)?;
        if full.get(..root.len())? != root.as_slice() {
            return None;
        }
        rest.to_vec()
    } else {
        let mut out: Vec<String> = Vec::new();
        for component in path.components() {
            match component {
                Component::Normal(part) => out.push(part.to_str()?.to_owned()),
                Component::CurDir => {}
                Component::ParentDir => {
                    out.pop()?;
                }
                Component::RootDir | Component::Prefix(_) => return None,
            }
        }
        out
    };
    Some(relative)
}

fn normalize_absolute(path: &Path) -> Option<Vec<String>> {
    if !path.is_absolute() {
        return None;
    }
    let mut out: Vec<String> = Vec::new();
    for component in path.components() {
        match component {
            Component::Normal(part) => out.push(part.to_str()?.to_owned()),
            Component::CurDir | Component::RootDir => {}
            Component::ParentDir => {
                out.pop()?;
            }
            Component::Prefix(_) => return None,
        }
    }
    Some(out)
}

/// Whether `path` segments match `glob`: dynamic programming over (glob, path) positions,
/// so no pattern can make matching exponential.
fn glob_matches(glob: &[Segment], path: &[String]) -> bool {
    let (m, n) = (glob.len(), path.len());
    // reach[i][j]: glob[..i] matches path[..j].
    let mut reach = vec![vec![false; n + 1]; m + 1];
    reach[0][0] = true;
    for i in 1..=m {
        for j in 0..=n {
            reach[i][j] = match &glob[i - 1] {
                // `**` never descends into hidden directories (`.git`, `.ssh`): like `*`, it
                // sweeps in only what does not start with a dot.
                Segment::AnyDepth => {
                    reach[i - 1][j] || (j > 0 && reach[i][j - 1] && !path[j - 1].starts_with('.'))
                }
                Segment::Glob(pattern) => {
                    j > 0 && reach[i - 1][j - 1] && segment_matches(pattern, &path[j - 1])
                }
            };
        }
    }
    reach[m][n]
}

/// `*` (any run of characters) and `?` (one) within one segment; a leading `.` is matched
/// only by a literal `.` (hidden files are not swept in by `*`).
fn segment_matches(pattern: &[char], name: &str) -> bool {
    let name: Vec<char> = name.chars().collect();
    if name.first() == Some(&'.') && pattern.first() != Some(&'.') {
        return false;
    }
    let (m, n) = (pattern.len(), name.len());
    let mut reach = vec![vec![false; n + 1]; m + 1];
    reach[0][0] = true;
    for i in 1..=m {
        for j in 0..=n {
            reach[i][j] = match pattern[i - 1] {
                '*' => reach[i - 1][j] || (j > 0 && reach[i][j - 1]),
                '?' => j > 0 && reach[i - 1][j - 1],
                c => j > 0 && reach[i - 1][j - 1] && name[j - 1] == c,
            };
        }
    }
    reach[m][n]
}

fn domain_grant(inner: &str) -> Result<Grant, String> {
    let host = inner
        .trim()
        .strip_prefix("domain:")
        .ok_or("a URL entry is `domain:<host>`")?
        .trim()
        .to_ascii_lowercase();
    let (host, subdomains) = match host.strip_prefix("*.") {
        Some(rest) => (rest.to_owned(), true),
        None => (host, false),
    };
    if !valid_host(&host) {
        return Err(if host.contains('*') {
            "the only wildcard is a leading `*.` before a domain".into()
        } else {
            format!("`{host}` is not a host name")
        });
    }
    if !host.contains('.') && subdomains {
        return Err("`*.` needs a registrable domain after it".into());
    }
    Ok(Grant::Domain { host, subdomains })
}

fn valid_host(host: &str) -> bool {
    !host.is_empty()
        && host.len() <= 253
        && host
            .split('.')
            .all(|label| !label.is_empty() && label.len() <= 63 && !label.starts_with('-'))
        && host
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '.')
}

/// The host of an `http`/`https` URL, lowercase, or `None` when the URL is anything a
/// parser could read two ways.
fn url_host(url: &str) -> Option<String> {
    if url.chars().count() > MAX_ARGUMENT_CHARS
        || url.chars().any(|c| c.is_control() || c.is_whitespace())
    {
        return None;
    }
    let (scheme, rest) = url.split_once("://")?;
    if !matches!(scheme.to_ascii_lowercase().as_str(), "http" | "https") {
        return None;
    }
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let authority = rest.get(..end)?;
    if authority.contains(['@', '\\', '%', '[', ']']) {
        return None;
    }
    let host = match authority.rsplit_once(':') {
        Some((host, port)) if port.chars().all(|c| c.is_ascii_digit()) => host,
        Some(_) => return None,
        None => authority,
    };
    let host = host.strip_suffix('.').unwrap_or(host).to_ascii_lowercase();
    valid_host(&host).then_some(host)
}

fn string_field<'v>(input: &'v Value, field: &str) -> Option<&'v str> {
    input.get(field)?.as_str()
}

#[cfg(test)]
mod tests;
