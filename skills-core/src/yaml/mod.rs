//! YAML for frontmatter: a bounded tree reader on top of a maintained YAML parser.
//!
//! **Threat.** Frontmatter is untrusted input. A YAML "billion laughs" (nested aliases that
//! expand exponentially), deep nesting that exhausts the stack, or a huge document must not
//! exhaust memory or crash the host.
//!
//! **Guarantee.** Parsing uses `granit-parser` (the pure-Rust, panic-free parser underneath
//! `serde-saphyr`), whose own nesting limits stop it from recursing on deep input. On top of
//! its events this reader counts every node it builds and every byte of scalar text it
//! keeps, *including* the copies an alias expands to, and stops with a limit error once
//! [`YamlLimits::max_nodes`], [`YamlLimits::max_bytes`], [`YamlLimits::max_aliases`] or
//! [`YamlLimits::max_depth`] would be exceeded. The memory held is therefore at most a
//! constant factor of those limits (each anchored value is kept once more for its aliases),
//! whatever the expansion would have been, and the work is linear in the input.
//!
//! It reads the YAML 1.2 core schema: `null`, `~` and empty plain values are null; plain
//! `true`/`false` are booleans; plain numbers are numbers. Scalars always keep their source
//! text, so a number or boolean used where a string is expected (`version: 1.0`) reads as
//! the text written (`"1.0"`). Duplicate mapping keys are reported, not silently merged.

mod emit;
mod lenient;
mod value;

use std::collections::HashMap;

use serde_saphyr::granit_parser::{
    ErrorKind, Event, Options, Parser, ScalarStyle, ScanError, Span, Tag,
};

pub(crate) use emit::emit_mapping;
pub(crate) use lenient::quote_colon_values;
pub use value::YamlValue;

/// Limits that bound the work done on one YAML document.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct YamlLimits {
    /// Deepest nesting of sequences and mappings (the top-level mapping is depth 1).
    pub max_depth: usize,
    /// Most alias (`*name`) uses in one document.
    pub max_aliases: usize,
    /// Most nodes in the document after alias expansion.
    pub max_nodes: usize,
    /// Most bytes of scalar text (keys and values) in the document after alias expansion.
    pub max_bytes: usize,
}

impl Default for YamlLimits {
    /// 32 levels, 256 aliases, 50 000 nodes, 4 MiB of text: far above any real frontmatter.
    fn default() -> Self {
        YamlLimits {
            max_depth: 32,
            max_aliases: 256,
            max_nodes: 50_000,
            max_bytes: 4 * 1024 * 1024,
        }
    }
}

/// What a scalar resolves to under the YAML 1.2 core schema.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ScalarKind {
    Null,
    Bool(bool),
    Number,
    String,
}

/// A node of the document, with the 1-based line (relative to the YAML text) it starts on.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Node {
    pub line: usize,
    pub kind: NodeKind,
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) enum NodeKind {
    Scalar { text: String, kind: ScalarKind },
    Sequence(Vec<Node>),
    Mapping(Vec<Entry>),
}

/// One mapping entry; keys are always scalars (others are reported and dropped).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Entry {
    pub key: String,
    pub key_line: usize,
    pub value: Node,
}

/// A problem that does not stop the reader.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Problem {
    DuplicateKey {
        key: String,
        line: usize,
        first_line: usize,
    },
    NonScalarKey {
        line: usize,
    },
}

/// A problem that stops the reader.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Fatal {
    Syntax { line: usize, message: String },
    Limit { line: usize, message: String },
}

/// The document read, and the problems found on the way.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Document {
    /// `None` for an empty document.
    pub root: Option<Node>,
    pub problems: Vec<Problem>,
}

/// One YAML document as a value, within the default limits; `None` when it does not read
/// (syntax, a limit) or is empty.
pub(crate) fn parse_value(text: &str) -> Option<YamlValue> {
    read(text, &YamlLimits::default())
        .ok()
        .and_then(|doc| doc.root)
        .map(|root| YamlValue::from_node(&root))
}

/// Reads one YAML document from `text` within `limits`.
pub(crate) fn read(text: &str, limits: &YamlLimits) -> Result<Document, Fatal> {
    // The parser's own limits sit above ours so that ours, with its clearer report, fires
    // first; theirs still bounds the parser on input nested far deeper.
    let mut options = Options::default();
    options.flow_nesting_limit = limits.max_depth.saturating_add(2);
    options.block_nesting_limit = limits.max_depth.saturating_add(2);
    let mut reader = Reader {
        parser: Parser::new_from_str_with_options(text, options),
        limits: *limits,
        anchors: HashMap::new(),
        aliases: 0,
        nodes: 0,
        bytes: 0,
        problems: Vec::new(),
        last_line: 1,
    };
    let root = reader.document()?;
    Ok(Document {
        root,
        problems: reader.problems,
    })
}

/// A node together with what it cost to build: how many nodes, how many bytes of text, and
/// how many levels of collections it holds (0 for a scalar).
struct Built {
    node: Node,
    cost: Cost,
}

#[derive(Debug, Clone, Copy, Default)]
struct Cost {
    nodes: usize,
    bytes: usize,
    height: usize,
}

impl Cost {
    fn add(&mut self, child: Cost) {
        self.nodes += child.nodes;
        self.bytes += child.bytes;
        self.height = self.height.max(child.height + 1);
    }
}

struct Reader<'a> {
    parser: Parser<'a, serde_saphyr::granit_parser::StrInput<'a>>,
    limits: YamlLimits,
    /// Anchored nodes by the parser's anchor id, with what they cost.
    anchors: HashMap<usize, (Node, Cost)>,
    aliases: usize,
    nodes: usize,
    bytes: usize,
    problems: Vec<Problem>,
    last_line: usize,
}

impl<'a> Reader<'a> {
    fn next(&mut self) -> Result<(Event<'a>, Span), Fatal> {
        match self.parser.next_event() {
            Some(Ok((event, span))) => {
                self.last_line = span.start.line();
                Ok((event, span))
            }
            Some(Err(err)) => Err(syntax(&err)),
            None => Err(Fatal::Syntax {
                line: self.last_line,
                message: "unexpected end of YAML".into(),
            }),
        }
    }

    fn document(&mut self) -> Result<Option<Node>, Fatal> {
        let mut root = None;
        let mut documents = 0usize;
        loop {
            let (event, span) = self.next()?;
            match event {
                Event::StreamStart | Event::DocumentEnd => {}
                Event::StreamEnd => return Ok(root),
                Event::DocumentStart(..) => {
                    documents += 1;
                    if documents > 1 {
                        return Err(Fatal::Syntax {
                            line: span.start.line(),
                            message: "the frontmatter holds more than one YAML document".into(),
                        });
                    }
                }
                event if event.is_node() || matches!(event, Event::Alias(_)) => {
                    let built = self.node(event, &span, 1)?;
                    root = Some(built.node);
                }
                _ => {}
            }
        }
    }

    /// Charges `nodes` nodes and `bytes` bytes of text to the document's budget.
    fn charge(&mut self, line: usize, nodes: usize, bytes: usize) -> Result<(), Fatal> {
        self.nodes = self.nodes.saturating_add(nodes);
        self.bytes = self.bytes.saturating_add(bytes);
        if self.nodes > self.limits.max_nodes {
            return Err(limit(
                line,
                format!("more than {} YAML nodes", self.limits.max_nodes),
            ));
        }
        if self.bytes > self.limits.max_bytes {
            return Err(limit(
                line,
                format!("more than {} bytes of YAML text", self.limits.max_bytes),
            ));
        }
        Ok(())
    }

    fn node(&mut self, event: Event<'a>, span: &Span, depth: usize) -> Result<Built, Fatal> {
        let line = span.start.line();
        match event {
            Event::Scalar(text, style, anchor, tag) => {
                self.charge(line, 1, text.len())?;
                let kind = scalar_kind(&text, style, tag.as_deref());
                let cost = Cost {
                    nodes: 1,
                    bytes: text.len(),
                    height: 0,
                };
                let node = Node {
                    line,
                    kind: NodeKind::Scalar {
                        text: text.into_owned(),
                        kind,
                    },
                };
                Ok(self.remember(anchor, node, cost))
            }
            Event::SequenceStart(_, anchor, _) => {
                self.enter(depth, line)?;
                let mut items = Vec::new();
                let mut cost = Cost {
                    nodes: 1,
                    bytes: 0,
                    height: 1,
                };
                loop {
                    let (event, span) = self.next()?;
                    if matches!(event, Event::SequenceEnd) {
                        break;
                    }
                    if !(event.is_node() || matches!(event, Event::Alias(_))) {
                        continue;
                    }
                    let built = self.node(event, &span, depth + 1)?;
                    cost.add(built.cost);
                    items.push(built.node);
                }
                let node = Node {
                    line,
                    kind: NodeKind::Sequence(items),
                };
                Ok(self.remember(anchor, node, cost))
            }
            Event::MappingStart(_, anchor, _) => {
                self.enter(depth, line)?;
                let mut entries: Vec<Entry> = Vec::new();
                let mut seen: HashMap<String, usize> = HashMap::new();
                let mut cost = Cost {
                    nodes: 1,
                    bytes: 0,
                    height: 1,
                };
                loop {
                    let (event, key_span) = self.next()?;
                    if matches!(event, Event::MappingEnd) {
                        break;
                    }
                    if !(event.is_node() || matches!(event, Event::Alias(_))) {
                        continue;
                    }
                    let key = self.node(event, &key_span, depth + 1)?;
                    let (value_event, value_span) = loop {
                        let (event, span) = self.next()?;
                        if event.is_node() || matches!(event, Event::Alias(_)) {
                            break (event, span);
                        }
                    };
                    let value = self.node(value_event, &value_span, depth + 1)?;
                    cost.add(key.cost);
                    cost.add(value.cost);
                    let key_line = key.node.line;
                    let NodeKind::Scalar { text: key, .. } = key.node.kind else {
                        self.problems.push(Problem::NonScalarKey { line: key_line });
                        continue;
                    };
                    if let Some(&first_line) = seen.get(&key) {
                        self.problems.push(Problem::DuplicateKey {
                            key,
                            line: key_line,
                            first_line,
                        });
                        continue;
                    }
                    seen.insert(key.clone(), key_line);
                    entries.push(Entry {
                        key,
                        key_line,
                        value: value.node,
                    });
                }
                let node = Node {
                    line,
                    kind: NodeKind::Mapping(entries),
                };
                Ok(self.remember(anchor, node, cost))
            }
            Event::Alias(id) => {
                self.aliases += 1;
                if self.aliases > self.limits.max_aliases {
                    return Err(limit(
                        line,
                        format!("more than {} YAML aliases", self.limits.max_aliases),
                    ));
                }
                let Some((node, cost)) = self.anchors.get(&id) else {
                    return Err(Fatal::Syntax {
                        line,
                        message: "an alias refers to an unknown anchor".into(),
                    });
                };
                let (node, cost) = (node.clone(), *cost);
                if cost.height > 0 && depth + cost.height - 1 > self.limits.max_depth {
                    return Err(limit(
                        line,
                        format!(
                            "an alias expands deeper than {} levels",
                            self.limits.max_depth
                        ),
                    ));
                }
                // Charged before the copy below is kept: an expansion over budget is refused
                // before it takes the memory.
                self.charge(line, cost.nodes, cost.bytes)?;
                let mut node = node;
                node.line = line;
                Ok(Built { node, cost })
            }
            _ => Err(Fatal::Syntax {
                line,
                message: "unexpected YAML event".into(),
            }),
        }
    }

    fn enter(&mut self, depth: usize, line: usize) -> Result<(), Fatal> {
        self.charge(line, 1, 0)?;
        if depth > self.limits.max_depth {
            return Err(limit(
                line,
                format!("YAML nested deeper than {} levels", self.limits.max_depth),
            ));
        }
        Ok(())
    }

    fn remember(&mut self, anchor: usize, node: Node, cost: Cost) -> Built {
        if anchor != 0 {
            self.anchors.insert(anchor, (node.clone(), cost));
        }
        Built { node, cost }
    }
}

fn syntax(err: &ScanError) -> Fatal {
    let line = err.marker().line().max(1);
    if matches!(err.kind(), ErrorKind::RecursionLimitExceeded) {
        return limit(line, "YAML nested too deeply".to_owned());
    }
    let info = err.info();
    let message = if info.is_empty() {
        "invalid YAML".to_owned()
    } else {
        format!("invalid YAML: {info}")
    };
    Fatal::Syntax { line, message }
}

fn limit(line: usize, what: String) -> Fatal {
    Fatal::Limit {
        line,
        message: format!("the YAML exceeds a safety limit: {what}"),
    }
}

/// Resolves a scalar under the YAML 1.2 core schema, honouring core tags.
fn scalar_kind(text: &str, style: ScalarStyle, tag: Option<&Tag>) -> ScalarKind {
    if let Some(tag) = tag {
        match tag.core_suffix() {
            Some("str") => return ScalarKind::String,
            Some("null") => return ScalarKind::Null,
            Some("bool") => {
                return match resolve_plain(text) {
                    kind @ ScalarKind::Bool(_) => kind,
                    _ => ScalarKind::String,
                };
            }
            // A number tag on text that is no number (`!!int true`) cannot be kept as a
            // number that writes back as one; it stays the text it is.
            Some("int" | "float") => {
                return if is_core_number(text) || matches!(text, ".nan" | ".NaN" | ".NAN") {
                    ScalarKind::Number
                } else {
                    ScalarKind::String
                };
            }
            Some(_) => return ScalarKind::String,
            // The non-specific tag `!` forces a string; custom tags resolve as untagged.
            None if tag.parts() == ("", "!") => return ScalarKind::String,
            None => {}
        }
    }
    if style == ScalarStyle::Plain {
        resolve_plain(text)
    } else {
        ScalarKind::String
    }
}

/// The YAML 1.2 core schema's resolution of a plain scalar.
pub(crate) fn resolve_plain(text: &str) -> ScalarKind {
    match text {
        "" | "~" | "null" | "Null" | "NULL" => return ScalarKind::Null,
        "true" | "True" | "TRUE" => return ScalarKind::Bool(true),
        "false" | "False" | "FALSE" => return ScalarKind::Bool(false),
        ".nan" | ".NaN" | ".NAN" => return ScalarKind::Number,
        _ => {}
    }
    if is_core_number(text) {
        ScalarKind::Number
    } else {
        ScalarKind::String
    }
}

fn is_core_number(text: &str) -> bool {
    if let Some(hex) = text.strip_prefix("0x") {
        return !hex.is_empty() && hex.bytes().all(|b| b.is_ascii_hexdigit());
    }
    if let Some(oct) = text.strip_prefix("0o") {
        return !oct.is_empty() && oct.bytes().all(|b| (b'0'..=b'7').contains(&b));
    }
    let unsigned = text.strip_prefix(['-', '+']).unwrap_or(text);
    if matches!(unsigned, ".inf" | ".Inf" | ".INF") {
        return true;
    }
    // [0-9]+ ( . [0-9]* )? | . [0-9]+ , then an optional exponent.
    let (mantissa, exponent) = match unsigned.find(['e', 'E']) {
        Some(i) => (&unsigned[..i], Some(&unsigned[i + 1..])),
        None => (unsigned, None),
    };
    let (int_part, frac_part) = match mantissa.split_once('.') {
        Some((i, f)) => (i, Some(f)),
        None => (mantissa, None),
    };
    let digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    let mantissa_ok = match frac_part {
        None => !int_part.is_empty() && digits(int_part),
        Some(frac) => digits(int_part) && digits(frac) && !(int_part.is_empty() && frac.is_empty()),
    };
    let exponent_ok = match exponent {
        None => true,
        Some(exp) => {
            let exp = exp.strip_prefix(['-', '+']).unwrap_or(exp);
            !exp.is_empty() && digits(exp)
        }
    };
    mantissa_ok && exponent_ok
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc(text: &str) -> Document {
        read(text, &YamlLimits::default()).unwrap()
    }

    fn entries(text: &str) -> Vec<Entry> {
        match doc(text).root.unwrap().kind {
            NodeKind::Mapping(entries) => entries,
            other => panic!("not a mapping: {other:?}"),
        }
    }

    fn scalar(node: &Node) -> (&str, ScalarKind) {
        match &node.kind {
            NodeKind::Scalar { text, kind } => (text, *kind),
            other => panic!("not a scalar: {other:?}"),
        }
    }

    #[test]
    fn core_schema_resolution_keeps_source_text() {
        let e = entries(
            "a: 1.0\nb: ~\nc: null\nd: true\ne: '1.0'\nf: 0x1F\ng: hello\nh:\ni: 1e5\nj: .inf\nk: 1.2.3\n",
        );
        let got: Vec<_> = e.iter().map(|e| scalar(&e.value)).collect();
        assert_eq!(
            got,
            vec![
                ("1.0", ScalarKind::Number),
                ("~", ScalarKind::Null),
                ("null", ScalarKind::Null),
                ("true", ScalarKind::Bool(true)),
                ("1.0", ScalarKind::String),
                ("0x1F", ScalarKind::Number),
                ("hello", ScalarKind::String),
                ("~", ScalarKind::Null),
                ("1e5", ScalarKind::Number),
                (".inf", ScalarKind::Number),
                ("1.2.3", ScalarKind::String),
            ]
        );
    }

    #[test]
    fn plain_number_forms() {
        for yes in [
            "0", "-1", "+12", "1.", ".5", "1.5e-3", "1E+2", "0o17", "-.inf",
        ] {
            assert_eq!(resolve_plain(yes), ScalarKind::Number, "{yes}");
        }
        for no in [
            ".", "-", "1e", "e5", "0x", "0o8", "1_000", "1.2.3", "--1", "inf",
        ] {
            assert_eq!(resolve_plain(no), ScalarKind::String, "{no}");
        }
    }

    #[test]
    fn tags_override_resolution() {
        let e = entries(
            "a: !!str 123\nb: !!int '7'\nc: ! 12\nd: !custom 12\ne: !!null x\nf: !!int true\ng: !!float .nan\n",
        );
        let got: Vec<_> = e.iter().map(|e| scalar(&e.value).1).collect();
        assert_eq!(
            got,
            vec![
                ScalarKind::String,
                ScalarKind::Number,
                ScalarKind::String,
                ScalarKind::Number,
                ScalarKind::Null,
                ScalarKind::String,
                ScalarKind::Number,
            ]
        );
    }

    #[test]
    fn flow_collections_anchors_and_lines() {
        let e = entries("a: &x {k: v, l: [1, 2]}\nb: *x\n");
        assert_eq!(e[1].value.line, 2);
        assert_eq!(
            e[0].value,
            Node {
                line: 1,
                ..e[1].value.clone()
            }
        );
        assert_eq!(e[1].key_line, 2);
    }

    #[test]
    fn duplicate_and_non_scalar_keys_are_reported_not_fatal() {
        let d = doc("a: 1\nb: 2\na: 3\n? [x]\n: 4\n");
        assert_eq!(
            d.problems,
            vec![
                Problem::DuplicateKey {
                    key: "a".into(),
                    line: 3,
                    first_line: 1
                },
                Problem::NonScalarKey { line: 4 },
            ]
        );
        let NodeKind::Mapping(entries) = d.root.unwrap().kind else {
            panic!()
        };
        assert_eq!(entries.len(), 2);
        assert_eq!(scalar(&entries[0].value).0, "1", "first value wins");
    }

    #[test]
    fn syntax_errors_carry_a_line() {
        let err = read("name: ok\ndescription: [unclosed\n", &YamlLimits::default()).unwrap_err();
        assert!(matches!(err, Fatal::Syntax { .. }), "{err:?}");
        let err = read("a: 1\n b: 2\n  - c\n", &YamlLimits::default()).unwrap_err();
        let Fatal::Syntax { line, .. } = err else {
            panic!("{err:?}")
        };
        assert!(line >= 2);
    }

    #[test]
    fn billion_laughs_is_stopped_by_the_node_budget() {
        let mut text = String::from("a0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n");
        for i in 1..10 {
            let prev = format!("*a{}", i - 1);
            text.push_str(&format!(
                "a{i}: &a{i} [{}]\n",
                [prev.as_str(); 9].join(", ")
            ));
        }
        let err = read(&text, &YamlLimits::default()).unwrap_err();
        assert!(
            matches!(&err, Fatal::Limit { message, .. } if message.contains("nodes") || message.contains("aliases")),
            "{err:?}"
        );
    }

    #[test]
    fn alias_count_limit_holds_even_for_cheap_aliases() {
        let limits = YamlLimits {
            max_aliases: 3,
            ..YamlLimits::default()
        };
        let ok = "a: &x 1\nb: [*x, *x, *x]\n";
        assert!(read(ok, &limits).is_ok());
        let too_many = "a: &x 1\nb: [*x, *x, *x, *x]\n";
        assert!(matches!(read(too_many, &limits), Err(Fatal::Limit { .. })));
    }

    #[test]
    fn depth_limit_holds_for_nesting_and_for_alias_expansion() {
        let limits = YamlLimits {
            max_depth: 4,
            ..YamlLimits::default()
        };
        // The top mapping is depth 1; a: [[[x]]] reaches depth 4.
        assert!(read("a: [[[x]]]\n", &limits).is_ok());
        assert!(read("a: [[[[x]]]]\n", &limits).is_err());
        // An anchor within the limit, expanded where it would overflow.
        assert!(read("a: &d [[x]]\nb: [[*d]]\n", &limits).is_err());
        assert!(read("a: &d [[x]]\nb: [*d]\n", &limits).is_ok());
        assert!(matches!(
            read("a: [[[[x]]]]\n", &limits),
            Err(Fatal::Limit { .. })
        ));
        assert!(matches!(
            read("a: &d [[x]]\nb: [[*d]]\n", &limits),
            Err(Fatal::Limit { .. })
        ));
        let block = "a:\n - - - - x\n";
        assert!(
            matches!(read(block, &limits), Err(Fatal::Limit { .. })),
            "{:?}",
            read(block, &limits)
        );
        // Very deep input never overflows the stack, and is reported as a limit.
        let deep = format!("a: {}{}\n", "[".repeat(100_000), "]".repeat(100_000));
        assert!(matches!(
            read(&deep, &YamlLimits::default()),
            Err(Fatal::Limit { .. })
        ));
    }

    #[test]
    fn byte_limit_holds_for_aliases_of_large_strings() {
        let limits = YamlLimits {
            max_bytes: 10_000,
            ..YamlLimits::default()
        };
        let big = "x".repeat(3_000);
        // 3000 bytes, then three more copies: 12 000 bytes in all, over the limit.
        let text = format!("a: &b {big}\nc: [*b, *b, *b]\n");
        assert!(matches!(read(&text, &limits), Err(Fatal::Limit { .. })));
        let two = format!("a: &b {big}\nc: [*b, *b]\n");
        assert!(read(&two, &limits).is_ok());
        // Without aliases, the text itself counts too.
        let plain = format!("a: {}\n", "y".repeat(10_001));
        assert!(matches!(read(&plain, &limits), Err(Fatal::Limit { .. })));
    }

    #[test]
    fn multiple_documents_and_empty_input() {
        assert!(read("a: 1\n...\n---\nb: 2\n", &YamlLimits::default()).is_err());
        assert_eq!(doc("").root, None);
        assert_eq!(doc("# only a comment\n").root, None);
    }
}
