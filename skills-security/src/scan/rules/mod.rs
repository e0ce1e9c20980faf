//! The rule engine: each rule's expression (compiled without Unicode classes, so its lazy
//! DFA stays small, and skipping ahead with its literal prefilter) is run over the whole
//! file once, each match weighed by where it sits (code, prose, hidden
//! comment), cancelled by a nearby negation in prose, and its signals pooled per unit for
//! the combinations (a secret read plus a POST in one code block is exfiltration).

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, OnceLock};

use regex::bytes::{Regex, RegexBuilder};

use super::blobs;
use super::context::{self, Ctx, FileKind, Layout};
use super::flow;
use super::installers;
use super::report::{Category, FindingContext, ScanFinding, Severity};
pub(crate) use super::signals::FileSignals;
use super::signals::UnitSignals;
use super::weigh::{self, Conditions, Paragraphs};
use aho_corasick::{AhoCorasick, MatchKind};

use super::table::{AUTH_USE, RULES, RuleDef, SECRET_READ_CAPTURE, Scope, Soften};
use super::triggers::TRIGGERS;

/// Every rule's triggers: the table's and the behaviour rules'.
fn all_triggers() -> impl Iterator<Item = &'static (&'static str, &'static [&'static str])> {
    TRIGGERS
        .iter()
        .chain(super::behaviour::BEHAVIOUR_TRIGGERS)
        .chain(super::prose::PROSE_TRIGGERS)
        .chain(super::sinks::SINK_TRIGGERS)
}

/// Findings of one rule in one file beyond this many are dropped: they add nothing to the
/// score (repeats count a quarter) and would only bloat the report.
const MAX_PER_RULE_PER_FILE: usize = 20;

/// How deep encoded payloads are decoded and rescanned (a payload inside a payload).
pub(crate) const MAX_DECODE_DEPTH: u8 = 2;

/// A compiled rule.
#[derive(Debug)]
struct Compiled {
    def: &'static RuleDef,
    regex: Regex,
    also: Option<Regex>,
    also2: Option<Regex>,
    unless: Option<Regex>,
}

impl Compiled {
    fn conditions(&self) -> Conditions<'_> {
        Conditions {
            also: self.also.as_ref(),
            also2: self.also2.as_ref(),
            unless: self.unless.as_ref(),
            governed: self.def.governed,
        }
    }
}

/// One match of a rule: its line, and its byte range in the text.
struct Match<'t> {
    line: &'t str,
    start: usize,
    end: usize,
}

/// Every pattern rule, compiled.
#[derive(Debug)]
pub(crate) struct RuleSet {
    /// `Err` when a pattern failed to compile: every scan then reports it (fail closed).
    compiled: Result<Vec<Compiled>, String>,
    /// Every rule's triggers in one automaton, and for each of its patterns the rules it
    /// enables. `None` (it could not be built) runs every rule.
    triggers: Option<(AhoCorasick, Vec<Vec<usize>>)>,
    /// Rules without triggers: always run.
    untriggered: Vec<usize>,
    negation: Option<Regex>,
    secret_read: Option<Regex>,
    auth_use: Option<Regex>,
}

/// Makes `\s` outside character classes match spaces and tabs only, so a match never runs
/// onto the next line: every rule is about one line (units combine lines instead).
pub(crate) fn line_bound(pattern: &str) -> String {
    let mut out = String::with_capacity(pattern.len() + 16);
    let mut chars = pattern.chars().peekable();
    let mut in_class = false;
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                let next = chars.next();
                if next == Some('s') && !in_class {
                    out.push_str(r"[ \t\r\x0B\x0C]");
                } else {
                    out.push(c);
                    if let Some(n) = next {
                        out.push(n);
                    }
                }
            }
            '[' if !in_class => {
                in_class = true;
                out.push(c);
                // A `]` or `^]` right after the opening bracket is literal.
                if chars.peek() == Some(&'^') {
                    out.push('^');
                    chars.next();
                }
                if chars.peek() == Some(&']') {
                    out.push(']');
                    chars.next();
                }
            }
            ']' if in_class => {
                in_class = false;
                out.push(c);
            }
            _ => out.push(c),
        }
    }
    out
}

fn compile(def: &'static RuleDef) -> Result<Compiled, String> {
    let build_with = |p: &str, bound: bool| -> Result<Option<Regex>, String> {
        if p.is_empty() {
            Ok(None)
        } else {
            // Paragraph conditions read whole units: `\s` may cross lines there.
            let pattern = if bound { line_bound(p) } else { p.to_owned() };
            RegexBuilder::new(&pattern)
                .multi_line(true)
                .unicode(false)
                .size_limit(32 * 1024 * 1024)
                .build()
                .map(Some)
                .map_err(|e| format!("{}: {e}", def.id))
        }
    };
    let build = |p: &str| build_with(p, true);
    let condition = |p: &str| build_with(p, !def.paragraph);
    let regex = build(def.pattern)?.ok_or_else(|| format!("{}: empty pattern", def.id))?;
    Ok(Compiled {
        def,
        regex,
        also: condition(def.also)?,
        also2: condition(def.also2)?,
        unless: condition(def.unless)?,
    })
}

/// Rules match ASCII syntax (commands, paths, API names, English phrasing): compiled without
/// Unicode classes, `[^\n]{0,200}` is one byte class repeated instead of a UTF-8 automaton,
/// which keeps the lazy DFA small and the scan linear.
fn ascii(pattern: &str) -> Option<Regex> {
    RegexBuilder::new(pattern)
        .unicode(false)
        .size_limit(32 * 1024 * 1024)
        .build()
        .ok()
}

impl RuleSet {
    fn build() -> Self {
        let compiled = RULES.iter().map(compile).collect::<Result<Vec<_>, _>>();
        let mut patterns: Vec<&'static str> = Vec::new();
        let mut enables: Vec<Vec<usize>> = Vec::new();
        let mut untriggered = Vec::new();
        for (index, rule) in RULES.iter().enumerate() {
            let list = all_triggers()
                .find(|(id, _)| *id == rule.id)
                .map_or(&[][..], |(_, t)| *t);
            if list.is_empty() {
                untriggered.push(index);
            }
            for trigger in list {
                match patterns.iter().position(|p| p == trigger) {
                    Some(at) => enables.get_mut(at).into_iter().for_each(|e| e.push(index)),
                    None => {
                        patterns.push(trigger);
                        enables.push(vec![index]);
                    }
                }
            }
        }
        let triggers = AhoCorasick::builder()
            .ascii_case_insensitive(true)
            .match_kind(MatchKind::Standard)
            .build(&patterns)
            .ok()
            .map(|ac| (ac, enables));
        let negation = ascii(
            r"(?i)\b(?:never|don'?t|do not|does not|doesn'?t|avoid|must not|mustn'?t|should not|shouldn'?t|cannot|can'?t|won'?t|not|no|instead of|rather than|unsafe|dangerous|insecure|risky|warning|beware|prohibit\w*|forbid\w*|block\w*|refuse\w*|reject\w*|detect\w*|flag\w*|prevent\w*|protect\w*|against|malicious|attack\w*|suspicious|e\.g\.|example of|such as|says|asks you|tells you|phrases|untrusted|injection|jailbreak\w*)\b",
        );
        let secret_read = ascii(&line_bound(SECRET_READ_CAPTURE));
        let auth_use = ascii(&line_bound(AUTH_USE));
        Self {
            compiled,
            triggers,
            untriggered,
            negation,
            secret_read,
            auth_use,
        }
    }

    /// The shared compiled rules.
    pub(crate) fn shared() -> &'static Arc<RuleSet> {
        static SHARED: OnceLock<Arc<RuleSet>> = OnceLock::new();
        SHARED.get_or_init(|| Arc::new(RuleSet::build()))
    }

    /// Whether every rule compiled (a test pins this).
    #[cfg(test)]
    pub(crate) fn is_complete(&self) -> bool {
        self.compiled.is_ok()
            && self.negation.is_some()
            && self.secret_read.is_some()
            && self.auth_use.is_some()
    }

    /// The findings of one text file, and the signals its code raised (for the
    /// package-level combinations).
    pub(crate) fn scan_text(&self, path: &str, text: &str) -> (Vec<ScanFinding>, FileSignals) {
        let kind = context::file_kind(path, text);
        let (mut findings, mut signals) = self.scan_layout(path, text, kind, None, 0);
        if kind == FileKind::Config
            && context::extension(path).as_deref() == Some("json")
            && let Some((commands, lines)) = super::mcp::command_lines(text)
        {
            let (more, more_signals) =
                self.scan_layout(path, &commands, FileKind::Script, Some(&lines), 0);
            findings.extend(more);
            signals.merge(&more_signals);
            findings.extend(super::mcp::secret_to_network_tool(path, text));
        }
        // Steps of one procedure are often split over several code blocks of a Markdown
        // file: read `.env` in one, upload in the next.
        if kind == FileKind::Markdown {
            findings.extend(signals.across(&findings, "exfiltration.collect_then_send"));
        }
        (findings, signals)
    }

    /// Scans `text` laid out as `kind`. `line_map` maps its lines to the file's (for
    /// synthesized text); `depth` counts decoding levels.
    pub(crate) fn scan_layout(
        &self,
        path: &str,
        text: &str,
        kind: FileKind,
        line_map: Option<&[u32]>,
        depth: u8,
    ) -> (Vec<ScanFinding>, FileSignals) {
        let rules = match &self.compiled {
            Ok(compiled) => compiled,
            Err(e) => {
                return (
                    vec![ScanFinding::new(
                        Category::Obfuscation,
                        Severity::Critical,
                        "scan.rules_unavailable",
                        path,
                        0,
                        String::new(),
                        format!(
                            "the scanner's rules did not compile ({e}); nothing can be vouched for"
                        ),
                    )],
                    FileSignals::default(),
                );
            }
        };
        let layout = context::layout(kind, text);
        let file_doc = context::file_doc_level(path, kind, text);
        let mut paragraphs = Paragraphs::new(&layout);
        let line_no = |i: usize| -> u32 {
            match line_map {
                Some(map) => map.get(i).copied().unwrap_or(0),
                None => u32::try_from(i + 1).unwrap_or(u32::MAX),
            }
        };
        // A catalogue's code blocks are documentation blocks whatever introduces them.
        let line_doc = |i: usize, ctx: Ctx| -> u8 {
            let block = layout.doc.get(i).copied().unwrap_or(0);
            if file_doc == context::CATALOGUE_LEVEL && ctx == Ctx::Code {
                block.max(1)
            } else {
                block
            }
        };
        let mut findings = Vec::new();
        let mut units: BTreeMap<u32, UnitSignals> = BTreeMap::new();
        let candidates = self.candidate_lines(text, &layout, rules.len());
        for (index, (rule, lines)) in rules.iter().zip(&candidates).enumerate() {
            let mut count = 0usize;
            for &i in lines {
                let line = layout.line_text(text, i);
                let line_start = layout.starts.get(i).copied().unwrap_or(0);
                let ctx = layout.ctx.get(i).copied().unwrap_or(Ctx::Prose);
                // Paragraph rules read prose (and hidden comments): code has its combinations.
                if rule.def.paragraph
                    && (ctx.is_code_like() && ctx != Ctx::HtmlComment
                        || !paragraphs.hold(index, &rule.conditions(), &layout, text, i))
                {
                    continue;
                }
                let doc = file_doc.saturating_add(line_doc(i, ctx)).min(3);
                // The first match on a line that counts where it sits.
                let Some((severity, context)) =
                    rule.regex.find_iter(line.as_bytes()).find_map(|m| {
                        let at = Match {
                            line,
                            start: line_start + m.start(),
                            end: line_start + m.end(),
                        };
                        self.weigh(rule, &layout, text, i, ctx, doc, &at)
                    })
                else {
                    continue;
                };
                // Documentation shows patterns, and a known vendor installer is what it is:
                // neither combines into behaviours.
                if rule.def.signals != 0
                    && ctx != Ctx::CodeComment
                    && doc == 0
                    && !installers::only_known_installers(line)
                {
                    let unit = layout.unit.get(i).copied().unwrap_or(0);
                    units
                        .entry(unit)
                        .or_default()
                        .raise(rule.def.signals, i, ctx);
                }
                if rule.def.severity == Severity::Info || count >= MAX_PER_RULE_PER_FILE {
                    continue;
                }
                count += 1;
                findings.push(
                    ScanFinding::new(
                        rule.def.category,
                        severity,
                        rule.def.id,
                        path,
                        line_no(i),
                        line.to_owned(),
                        rule.def.message.to_owned(),
                    )
                    .in_context(context),
                );
            }
        }
        let mut file_signals = FileSignals::default();
        for signals in units.values() {
            findings.extend(signals.combinations(path, text, &layout, &line_no));
            for (bit, line) in signals.in_code() {
                file_signals.raise(bit, path, line_no(line));
            }
        }
        // Data followed from its source to a network send, within each code unit.
        for (lines, doc) in flow::code_units(&layout) {
            let extra = if file_doc == context::CATALOGUE_LEVEL {
                doc.max(1)
            } else {
                doc
            };
            let doc = file_doc.saturating_add(extra);
            findings.extend(flow::unit_flows(path, text, &layout, &lines, doc, &line_no));
            findings.extend(super::sequence::download_then_run(
                path, text, &layout, &lines, doc, &line_no,
            ));
            findings.extend(super::loops::request_loops(
                path, text, &layout, &lines, doc, &line_no,
            ));
        }
        findings.extend(self.secret_harvest(path, text, &layout, &line_no));
        if depth < MAX_DECODE_DEPTH {
            let doc_of = |i: usize| -> u8 {
                let ctx = layout.ctx.get(i).copied().unwrap_or(Ctx::Prose);
                file_doc.saturating_add(line_doc(i, ctx)).min(3)
            };
            findings.extend(blobs::scan_blobs(
                self, path, text, &layout, &line_no, &doc_of, depth,
            ));
        }
        (findings, file_signals)
    }

    /// The severity and context of a match where it sits, or `None` when it does not count
    /// there: line conditions, scope, negation in prose, then the rule's own softening, prose
    /// one step lower for `Any` rules, documentation (`doc` steps) and quotation lower still.
    #[allow(clippy::too_many_arguments)]
    fn weigh(
        &self,
        rule: &Compiled,
        layout: &Layout,
        text: &str,
        i: usize,
        ctx: Ctx,
        doc: u8,
        at: &Match<'_>,
    ) -> Option<(Severity, FindingContext)> {
        let line = at.line;
        if !rule.def.paragraph {
            if rule
                .also
                .as_ref()
                .is_some_and(|r| !r.is_match(line.as_bytes()))
            {
                return None;
            }
            if rule
                .unless
                .as_ref()
                .is_some_and(|r| r.is_match(line.as_bytes()))
            {
                return None;
            }
            if rule
                .also2
                .as_ref()
                .is_some_and(|r| !r.is_match(line.as_bytes()))
            {
                return None;
            }
        }
        if rule.def.soften == Soften::PublicKey && installers::only_public_keys(line) {
            return None;
        }
        if rule.def.soften == Soften::SameHost && super::sinks::same_host_rewrite(line) {
            return None;
        }
        let prose = !ctx.is_code_like();
        if rule.def.scope == Scope::Code && prose {
            return None;
        }
        if prose && rule.def.negatable && self.negated(layout, text, i, at.start) {
            return None;
        }
        // The command from the match to its end (`;`, `&`, `|`, the closing backtick of an
        // inline code span, or the line's end).
        let command = text.get(at.start..at.end.max(at.start)).map_or("", |m| {
            let rest = text.get(at.start..).unwrap_or(m);
            let line_rest = rest.split('\n').next().unwrap_or(rest);
            line_rest
                .split([';', '&', '|', '`'])
                .next()
                .unwrap_or(line_rest)
        });
        let base = weigh::soften(rule.def.soften, rule.def.severity, line, command);
        let base = match (rule.def.scope, prose) {
            (Scope::Any, true) => base.lowered(),
            _ => base,
        };
        let line_start = layout.starts.get(i).copied().unwrap_or(0);
        let quoted = if prose {
            weigh::quoted(line, at.start.saturating_sub(line_start))
        } else {
            0
        };
        let steps = doc.saturating_add(quoted).min(3);
        Some((weigh::lower(base, steps), weigh::context_of(ctx, steps > 0)))
    }

    /// For each rule, the lines it can match on: those holding one of its triggers (every
    /// rule is about one line, and every match contains a trigger), found in one pass of
    /// the trigger automaton; every line for a rule without triggers.
    fn candidate_lines(&self, text: &str, layout: &Layout, count: usize) -> Vec<Vec<usize>> {
        let all_lines = || (0..layout.starts.len()).collect::<Vec<usize>>();
        let Some((ac, enables)) = &self.triggers else {
            return vec![all_lines(); count];
        };
        let mut lines: Vec<Vec<usize>> = vec![Vec::new(); count];
        for &i in &self.untriggered {
            if let Some(slot) = lines.get_mut(i) {
                *slot = all_lines();
            }
        }
        // The last line each trigger was seen on, so a trigger repeated on a line is
        // recorded once.
        let mut last_seen = vec![usize::MAX; enables.len()];
        for m in ac.find_overlapping_iter(text) {
            let id = m.pattern().as_usize();
            let line = layout.line_of(m.start());
            match last_seen.get_mut(id) {
                Some(last) if *last != line => *last = line,
                _ => continue,
            }
            for &rule in enables.get(id).into_iter().flatten() {
                if let Some(list) = lines.get_mut(rule)
                    && list.last() != Some(&line)
                {
                    list.push(line);
                }
            }
        }
        for list in &mut lines {
            list.sort_unstable();
            list.dedup();
        }
        lines
    }

    /// Secrets of two or more services read as plain values in one unit: a skill with one
    /// job authenticates to one service; collecting several services' keys is harvesting.
    /// Reads on lines that use the secret for authentication do not count.
    fn secret_harvest(
        &self,
        path: &str,
        text: &str,
        layout: &Layout,
        line_no: &dyn Fn(usize) -> u32,
    ) -> Vec<ScanFinding> {
        let (Some(read), Some(auth)) = (&self.secret_read, &self.auth_use) else {
            return Vec::new();
        };
        const FALLBACK: [&str; 4] = [" or ", "||", "??", ":-"];
        // Computed once, and only when a read outside an authenticating line needs it.
        let mut authenticators: Option<Vec<String>> = None;
        let mut open_calls = flow::calls::OpenCalls::default();
        let mut auth_line: Option<(usize, bool)> = None;
        let mut fallback_line: Option<(usize, bool)> = None;
        let mut per_unit: BTreeMap<u32, (BTreeSet<String>, usize)> = BTreeMap::new();
        let mut last_line = usize::MAX;
        for caps in read.captures_iter(text.as_bytes()) {
            let (Some(whole), Some(name)) = (caps.get(0), caps.get(1)) else {
                continue;
            };
            let i = layout.line_of(whole.start());
            if layout.ctx.get(i).copied() != Some(Ctx::Code) {
                continue;
            }
            let line = layout.line_text(text, i);
            // Once per line: a long line of many reads is searched once.
            let authenticated = match auth_line {
                Some((l, yes)) if l == i => yes,
                _ => {
                    let yes = auth.is_match(line.as_bytes());
                    auth_line = Some((i, yes));
                    yes
                }
            };
            if authenticated {
                continue;
            }
            // Handed straight to one of the file's own functions that authenticates with it
            // (`get(url, os.environ.get("X_TOKEN"))` where `get` sets `Authorization`).
            let line_start = layout.starts.get(i).copied().unwrap_or(0);
            if open_calls.inside(
                text,
                line_start,
                whole.start(),
                authenticators.get_or_insert_with(|| {
                    flow::calls::authenticating_functions(text, layout, auth)
                }),
            ) {
                continue;
            }
            // `GITHUB_TOKEN or GH_TOKEN`: fallbacks for one credential on one line.
            if i == last_line {
                let fallback = match fallback_line {
                    Some((l, yes)) if l == i => yes,
                    _ => {
                        let yes = FALLBACK.iter().any(|f| line.contains(f));
                        fallback_line = Some((i, yes));
                        yes
                    }
                };
                if fallback {
                    continue;
                }
            }
            last_line = i;
            let name = String::from_utf8_lossy(name.as_bytes());
            let service = name
                .split('_')
                .find(|p| !p.is_empty())
                .unwrap_or("")
                .to_owned();
            let unit = layout.unit.get(i).copied().unwrap_or(0);
            let entry = per_unit.entry(unit).or_insert_with(|| (BTreeSet::new(), i));
            entry.0.insert(service);
            entry.1 = entry.1.max(i);
        }
        per_unit
            .into_values()
            .filter(|(services, _)| services.len() >= 2)
            .map(|(services, line)| {
                let names: Vec<&str> = services.iter().map(String::as_str).collect();
                ScanFinding::new(
                    Category::CredentialAccess,
                    Severity::High,
                    "credential.secret_harvest",
                    path,
                    line_no(line),
                    layout.line_text(text, line).to_owned(),
                    format!(
                        "secrets of several services are read together ({})",
                        names.join(", ")
                    ),
                )
            })
            .collect()
    }

    /// Whether the sentence before `start` on line `i` negates what follows ("never run",
    /// "do not pipe", "avoid").
    fn negated(&self, layout: &Layout, text: &str, i: usize, start: usize) -> bool {
        let Some(negation) = &self.negation else {
            return false;
        };
        let line_start = layout.starts.get(i).copied().unwrap_or(0);
        let before = text.get(line_start..start).unwrap_or("");
        let sentence = before
            .rfind(['.', '!', '?', ';'])
            .map_or(before, |p| before.get(p + 1..).unwrap_or(""));
        negation.is_match(sentence.as_bytes())
    }
}

#[cfg(test)]
mod tests;
