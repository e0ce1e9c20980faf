//! Where a line sits in a file: Markdown prose, a fenced code block, an HTML comment, the
//! frontmatter, or a script. Rules weigh code more than prose: "never run `curl | sh`" in
//! prose is advice, the same text in a `bash` block or a `.sh` file is an instruction; and an
//! HTML comment is invisible when the Markdown is rendered, so what it says is weighed like
//! code.
//!
//! A fenced block can also be *documentation*: introduced by a line that calls it an example,
//! a bad or vulnerable pattern or an attack ("Example of a malicious install step:"), or
//! sitting under a heading that names attacks, payloads or detections. Such a block shows a
//! pattern rather than asking for it to be run; its findings weigh one step less (see
//! `Layout::doc`). Whole files can be documentation too ([`file_doc_level`]): reference
//! Markdown beside the SKILL.md, and rule bodies (YARA, Semgrep, Sigma, Snort) whose strings
//! are patterns to detect.
//!
//! Lines are grouped into *units* (a code block, a script, a paragraph, a comment) within
//! which signals combine: an environment dump and an HTTP POST in the same code block are
//! exfiltration, in two unrelated paragraphs they are not.

/// The kind of text a line is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Ctx {
    /// Markdown prose (including inline code spans) or plain text.
    Prose,
    /// The YAML frontmatter of a Markdown file.
    Frontmatter,
    /// A fenced code block, a script, or a configuration file.
    Code,
    /// A comment inside a script (`#`, `//`): read like prose.
    CodeComment,
    /// An HTML comment in Markdown: hidden when rendered.
    HtmlComment,
}

impl Ctx {
    /// Whether the line is executable or hidden (weighed fully).
    pub(crate) fn is_code_like(self) -> bool {
        matches!(self, Self::Code | Self::HtmlComment)
    }
}

/// What a file is, from its name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum FileKind {
    /// Markdown or plain text: prose with fenced code blocks.
    Markdown,
    /// A script or source file: every line is code (comments aside).
    Script,
    /// JSON, YAML, TOML and other configuration: code, without comment handling beyond `#`.
    Config,
}

/// Extensions whose files are scripts or source code.
pub(crate) const SCRIPT_EXTENSIONS: &[&str] = &[
    "sh",
    "bash",
    "zsh",
    "fish",
    "ksh",
    "py",
    "pyw",
    "js",
    "mjs",
    "cjs",
    "ts",
    "mts",
    "cts",
    "jsx",
    "tsx",
    "rb",
    "pl",
    "pm",
    "php",
    "ps1",
    "psm1",
    "bat",
    "cmd",
    "lua",
    "go",
    "rs",
    "java",
    "kt",
    "swift",
    "c",
    "h",
    "cc",
    "cpp",
    "cs",
    "r",
    "applescript",
    "scpt",
    "vbs",
];

/// The lower-cased extension of a path's last component, if any.
pub(crate) fn extension(path: &str) -> Option<String> {
    let name = path.rsplit('/').next().unwrap_or(path);
    let (stem, ext) = name.rsplit_once('.')?;
    if stem.is_empty() {
        return None;
    }
    Some(ext.to_ascii_lowercase())
}

/// What kind of file `path` holding `text` is.
pub(crate) fn file_kind(path: &str, text: &str) -> FileKind {
    let name = path.rsplit('/').next().unwrap_or(path);
    if text.starts_with("#!") {
        return FileKind::Script;
    }
    match extension(path).as_deref() {
        Some("md" | "markdown" | "mdx" | "txt" | "rst" | "adoc") => FileKind::Markdown,
        Some("json" | "jsonc" | "yaml" | "yml" | "toml" | "ini" | "cfg" | "conf" | "env") => {
            FileKind::Config
        }
        Some(ext) if SCRIPT_EXTENSIONS.contains(&ext) => FileKind::Script,
        None if matches!(name, "Makefile" | "Dockerfile" | "Justfile" | "Procfile") => {
            FileKind::Script
        }
        // Dotfiles (`.mcp.json` has an extension; `.bashrc`, `.env` do not) are configuration.
        None if name.starts_with('.') => FileKind::Config,
        _ => FileKind::Markdown,
    }
}

/// A text split into lines with their context and unit.
#[derive(Debug)]
pub(crate) struct Layout {
    /// Byte offset where each line starts; one entry per line.
    pub starts: Vec<usize>,
    /// The context of each line.
    pub ctx: Vec<Ctx>,
    /// The unit of each line (lines of one code block, script, paragraph or comment share
    /// one).
    pub unit: Vec<u32>,
    /// How many severity steps a line's findings lose because it documents rather than
    /// instructs: 1 for a fenced block introduced or headed as an example, a bad pattern or
    /// an attack; [`RULE_BODY_LEVEL`] for a block that is a detection rule body; 0 otherwise.
    pub doc: Vec<u8>,
}

impl Layout {
    /// The 0-based line holding byte `offset`.
    pub(crate) fn line_of(&self, offset: usize) -> usize {
        match self.starts.binary_search(&offset) {
            Ok(i) => i,
            Err(i) => i.saturating_sub(1),
        }
    }

    /// The text of line `i` (without its newline).
    pub(crate) fn line_text<'t>(&self, text: &'t str, i: usize) -> &'t str {
        let start = self.starts.get(i).copied().unwrap_or(text.len());
        let end = self
            .starts
            .get(i + 1)
            .map_or(text.len(), |next| next.saturating_sub(1));
        let line = text.get(start..end.max(start)).unwrap_or("");
        line.strip_suffix('\r').unwrap_or(line)
    }
}

/// Splits `text` into lines and decides each line's context and unit.
pub(crate) fn layout(kind: FileKind, text: &str) -> Layout {
    let mut starts = vec![0usize];
    starts.extend(memchr::memchr_iter(b'\n', text.as_bytes()).map(|i| i + 1));
    if starts.len() > 1 && starts.last() == Some(&text.len()) {
        starts.pop();
    }
    let mut layout = Layout {
        ctx: Vec::with_capacity(starts.len()),
        unit: Vec::with_capacity(starts.len()),
        doc: Vec::with_capacity(starts.len()),
        starts,
    };
    match kind {
        FileKind::Markdown => markdown(text, &mut layout),
        FileKind::Script | FileKind::Config => code(text, &mut layout, kind),
    }
    layout
}

fn code(text: &str, layout: &mut Layout, kind: FileKind) {
    for i in 0..layout.starts.len() {
        let line = layout.line_text(text, i).trim_start();
        let comment = line.starts_with('#') && !line.starts_with("#!")
            || (kind == FileKind::Script
                && (line.starts_with("//") || line.starts_with("--") || line.starts_with("rem ")));
        layout
            .ctx
            .push(if comment { Ctx::CodeComment } else { Ctx::Code });
        layout.unit.push(0);
        layout.doc.push(0);
    }
}

fn markdown(text: &str, layout: &mut Layout) {
    let n = layout.starts.len();
    let mut unit = 0u32;
    let mut fence: Option<(u8, usize)> = None;
    let mut in_comment = false;
    let mut frontmatter = layout.line_text(text, 0).trim_end() == "---";
    let mut blank_before = true;
    // Whether the current section's heading marks what follows as documentation; the last
    // prose line (read for cues when a fence opens); whether the open fence is documentation.
    let mut section_doc = false;
    let mut last_prose: Option<usize> = None;
    let mut block_doc = false;
    let mut block_start = 0usize;
    for i in 0..n {
        let line = layout.line_text(text, i);
        let trimmed = line.trim_start();
        layout.doc.push(0);
        if frontmatter {
            layout.ctx.push(Ctx::Frontmatter);
            layout.unit.push(unit);
            if i > 0 && line.trim_end() == "---" {
                frontmatter = false;
                unit += 1;
                blank_before = true;
            }
            continue;
        }
        if let Some((ch, len)) = fence {
            layout.ctx.push(Ctx::Code);
            layout.unit.push(unit);
            if block_doc && let Some(d) = layout.doc.last_mut() {
                *d = 1;
            }
            let run = trimmed.bytes().take_while(|b| *b == ch).count();
            if run >= len && trimmed[run..].trim().is_empty() {
                // A rule body (YARA, Sigma, Semgrep, Snort) shown in a block lists patterns
                // to detect, like a rule file: it weighs three steps less.
                let body = (block_start + 1..i).map(|k| layout.line_text(text, k));
                if is_rule_block(body) {
                    for d in layout.doc.get_mut(block_start..=i).into_iter().flatten() {
                        *d = RULE_BODY_LEVEL;
                    }
                }
                fence = None;
                unit += 1;
                blank_before = true;
            }
            continue;
        }
        if in_comment {
            layout.ctx.push(Ctx::HtmlComment);
            layout.unit.push(unit);
            if line.contains("-->") {
                in_comment = false;
                unit += 1;
                blank_before = true;
            }
            continue;
        }
        let run_tick = trimmed.bytes().take_while(|b| *b == b'`').count();
        let run_tilde = trimmed.bytes().take_while(|b| *b == b'~').count();
        if run_tick >= 3 || run_tilde >= 3 {
            unit += 1;
            let (ch, len) = if run_tick >= 3 {
                (b'`', run_tick)
            } else {
                (b'~', run_tilde)
            };
            fence = Some((ch, len));
            block_start = i;
            // Only the line that introduces a block is read for cues (not every prose line).
            // An introduction that tells the reader to run the block makes it an instruction,
            // whatever it calls it ("Example (run it now):").
            let intro = last_prose.map(|p| layout.line_text(text, p));
            block_doc = (section_doc || intro.is_some_and(|l| doc_cue(l, INTRO_CUES)))
                && !intro.is_some_and(tells_to_run);
            last_prose = None;
            layout.ctx.push(Ctx::Code);
            layout.unit.push(unit);
            if block_doc && let Some(d) = layout.doc.last_mut() {
                *d = 1;
            }
            continue;
        }
        if let Some(pos) = line.find("<!--") {
            let closed = line[pos..].contains("-->");
            if !closed || pos == 0 || trimmed.starts_with("<!--") {
                unit += 1;
            }
            layout.ctx.push(Ctx::HtmlComment);
            layout.unit.push(unit);
            if closed {
                unit += 1;
                blank_before = true;
            } else {
                in_comment = true;
            }
            continue;
        }
        // Prose: a blank line or a heading starts a new paragraph unit.
        if trimmed.is_empty() {
            if !blank_before {
                unit += 1;
            }
            blank_before = true;
        } else if trimmed.starts_with('#') {
            unit += 1;
            blank_before = true;
            section_doc = doc_cue(trimmed, HEADING_CUES);
            last_prose = None;
        } else {
            blank_before = false;
            last_prose = Some(i);
        }
        layout.ctx.push(Ctx::Prose);
        layout.unit.push(unit);
    }
}

/// Words in a heading that make the section's code blocks documentation of attacks.
const HEADING_CUES: &[&str] = &[
    "attack",
    "exploit",
    "payload",
    "malicious",
    "vulnerab",
    "anti-pattern",
    "antipattern",
    "red flag",
    "indicator",
    "cheat sheet",
    "cheatsheet",
    "detection",
    "signature",
    "insecure",
    "bad example",
    "bad pattern",
    "what to look for",
    "what not to",
];

/// Words in the line before a fence that introduce the block as an example or a bad pattern.
const INTRO_CUES: &[&str] = &[
    "example",
    "e.g.",
    "for instance",
    "such as",
    "looks like",
    "look like",
    "bad",
    "vulnerable",
    "insecure",
    "unsafe",
    "malicious",
    "attack",
    "exploit",
    "payload",
    "dangerous",
    "anti-pattern",
    "never",
    "don't",
    "do not",
    "avoid",
    "wrong",
    "detect",
    "flag",
    "signature",
    "red flag",
    "\u{274c}",
];

/// Phrases that tell the reader to run what follows.
const RUN_PHRASES: &[&str] = &[
    "run it",
    "run this",
    "run these",
    "run that",
    "run the above",
    "run the following",
    "run the command",
    "run the script",
    "run now",
    "run immediately",
    "execute it",
    "execute this",
    "execute these",
    "execute the following",
    "paste it",
    "paste this",
    "keep it running",
    "keep it open",
];

/// Words that, shortly before a run phrase, negate it ("do not run this").
const RUN_NEGATIONS: &[&str] = &["not ", "never ", "n't ", "don't ", "avoid ", "without "];

/// Whether `line` tells the reader to run something (not "do not run this").
///
/// **Threat.** Calling a payload an example must not make it documentation when the same
/// line asks for it to be run. **Guarantee.** A run phrase ("run it", "run this", "execute
/// the following" ...) not preceded within 16 bytes by a negation cancels the block's
/// documentation cue.
pub(crate) fn tells_to_run(line: &str) -> bool {
    // Every run phrase holds one of these stems: most lines hold none, and are answered
    // without lower-casing them or searching for each phrase.
    if !["run", "execute", "paste", "keep it"]
        .iter()
        .any(|stem| contains_ignore_case(line.as_bytes(), stem.as_bytes()))
    {
        return false;
    }
    let lower = line.to_ascii_lowercase().replace('\u{2019}', "'");
    RUN_PHRASES.iter().any(|phrase| {
        lower.match_indices(phrase).any(|(at, _)| {
            let from = at.saturating_sub(16);
            let before = lower.get(from..at).unwrap_or("");
            !RUN_NEGATIONS.iter().any(|n| before.contains(n))
        })
    })
}

/// Whether `haystack` holds `needle` (lower-case ASCII), ignoring ASCII case.
fn contains_ignore_case(haystack: &[u8], needle: &[u8]) -> bool {
    let Some(&first) = needle.first() else {
        return true;
    };
    haystack
        .iter()
        .enumerate()
        .filter(|(_, b)| b.to_ascii_lowercase() == first)
        .any(|(at, _)| {
            haystack
                .get(at..at + needle.len())
                .is_some_and(|w| w.eq_ignore_ascii_case(needle))
        })
}

/// Whether `line` holds one of `cues` (ASCII case-insensitive; cues are lower case).
fn doc_cue(line: &str, cues: &[&str]) -> bool {
    let lower = line.to_ascii_lowercase();
    cues.iter().any(|c| {
        lower.match_indices(c).any(|(at, _)| {
            // A cue starts a word: "flag" in "flagged", not in "conflagration".
            at == 0
                || !lower
                    .as_bytes()
                    .get(at - 1)
                    .is_some_and(u8::is_ascii_alphanumeric)
        })
    })
}

/// The documentation level of a rule body (a file, or a fenced block): its patterns are
/// there to be detected, never run.
pub(crate) const RULE_BODY_LEVEL: u8 = 3;

/// The documentation level of a catalogue of payloads (see [`file_doc_level`]); its code
/// blocks count as documentation blocks too, one step more.
pub(crate) const CATALOGUE_LEVEL: u8 = 2;

/// Severity steps every finding of a file loses for what the file is: a rule body (YARA,
/// Semgrep, Sigma, Snort/Suricata) only lists patterns to detect and is never run: 3 (a
/// critical pattern weighs `Low`); reference Markdown beside the SKILL.md that is a
/// catalogue of payloads ([`is_catalogue`]): [`CATALOGUE_LEVEL`]; other reference Markdown
/// documents: 1; the SKILL.md, scripts and configuration: 0.
///
/// The guarantee is bounded: a file counts as a rule body by its structure (YARA's `rule`
/// with `condition:`, Semgrep's `rules:` list with `pattern` keys, Sigma's `detection:` with
/// `condition:`), not by its name alone, so renaming a script `.yar` does not lower it.
pub(crate) fn file_doc_level(path: &str, kind: FileKind, text: &str) -> u8 {
    if is_rule_body(path, text) {
        return RULE_BODY_LEVEL;
    }
    let name = path.rsplit('/').next().unwrap_or(path);
    if kind == FileKind::Markdown && !name.eq_ignore_ascii_case("SKILL.md") {
        return if is_catalogue(text) {
            CATALOGUE_LEVEL
        } else if gives_session_orders(text) {
            0
        } else {
            1
        };
    }
    0
}

/// Phrases by which a text orders the agent about its session or its reply to the user.
const SESSION_ORDERS: &[&str] = &[
    "every session",
    "each session",
    "at session start",
    "start of the session",
    "in your reply",
    "in your response",
    "in your answer",
    "in your summary",
    "do not ask the user",
    "don't ask the user",
    "without asking the user",
];

/// Whether a reference file orders the agent about its session or its reply ("at the start of
/// every session…", "do not list these files in your reply"): such a file is instructions the
/// agent loads, not documentation, and is weighed like the SKILL.md.
///
/// **Threat.** A skill moves its standing order into `references/` so it is lowered as
/// documentation while the SKILL.md sends the agent there. **Guarantee.** A reference file
/// with any such phrase outside its code blocks is weighed at full weight (a catalogue of
/// payloads keeps its own level: its run-free structure is checked first).
fn gives_session_orders(text: &str) -> bool {
    // One pass over the whole text first: most reference files hold none of the phrases.
    let lower = text.to_ascii_lowercase();
    if !SESSION_ORDERS.iter().any(|p| lower.contains(p)) {
        return false;
    }
    let mut fenced = false;
    text.lines().any(|line| {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            return false;
        }
        if fenced {
            return false;
        }
        let lower = line.to_ascii_lowercase();
        SESSION_ORDERS.iter().any(|p| lower.contains(p))
    })
}

/// Imperative openings of a prose line that ask the reader to run or fetch something.
const IMPERATIVES: &[&str] = &[
    "run ",
    "execute ",
    "paste ",
    "download ",
    "install ",
    "launch ",
    "open a terminal",
    "you must ",
    "the agent must ",
    "always run",
    "before starting",
    "before anything",
];

/// Whether a reference Markdown file is a catalogue of payloads: a heading that names
/// attacks, payloads or detections; at least three items (table rows, list items, code
/// blocks) with explanatory prose; and no prose line that tells the reader to run, paste,
/// download or install anything.
///
/// **Threat.** Security skills ship payload lists that read as attacks; an attacker would
/// like a payload to pass as such a list. **Guarantee.** Only reference files (never the
/// SKILL.md, scripts or configuration) qualify, by structure and the absence of any
/// imperative to run; a catalogue is lowered, never dropped, and what the SKILL.md body
/// itself asks to run weighs in full.
pub(crate) fn is_catalogue(text: &str) -> bool {
    // The heading is required: without one naming attacks, payloads or a catalogue, nothing
    // else need be read (most reference files end here, before any line is searched for
    // imperatives).
    let cued = text.lines().any(|line| {
        let t = line.trim_start();
        t.starts_with('#') && (doc_cue(t, HEADING_CUES) || doc_cue(t, &["catalog"]))
    });
    if !cued {
        return false;
    }
    let mut heading = false;
    let mut items = 0usize;
    let mut prose = false;
    let mut in_fence = false;
    for line in text.lines() {
        let t = line.trim_start();
        if t.starts_with("```") || t.starts_with("~~~") {
            if !in_fence {
                items += 1;
            }
            in_fence = !in_fence;
            continue;
        }
        if in_fence || t.is_empty() {
            continue;
        }
        if t.starts_with('#') {
            heading |= doc_cue(t, HEADING_CUES) || doc_cue(t, &["catalog"]);
            continue;
        }
        let body = t
            .trim_start_matches(|c: char| c.is_ascii_digit())
            .trim_start_matches(['.', ')', '-', '*', '+', '|', '>', ' ']);
        let lower = body.to_ascii_lowercase();
        if IMPERATIVES.iter().any(|i| lower.starts_with(i)) || tells_to_run(body) {
            return false;
        }
        if t.starts_with('|') || t.starts_with("- ") || t.starts_with("* ") || t != body {
            items += 1;
        } else if body.split_whitespace().count() >= 4 {
            prose = true;
        }
    }
    heading && prose && items >= 3
}

mod bodies;

use bodies::{is_rule_block, is_rule_body};

#[cfg(test)]
mod tests;
