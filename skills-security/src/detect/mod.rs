//! Finding sensitive values in text: the built-in recognizers, the [`Recognizer`] trait for
//! a host's own, and [`Detector`], which runs them all in one pass.

mod birth;
mod card;
mod compact;
mod credential;
mod date;
mod digit;
mod email;
mod escape;
mod iban;
mod ip;
mod keyword;
mod label;
mod lanes;
mod money;
mod pass;
mod phone;
mod phone_context;
mod phone_region;
mod random;
mod secret;
mod ssn;
mod table;
pub(crate) mod text;

use std::fmt;
use std::ops::Range;
use std::sync::Arc;

use crate::classify::{DataClass, DataType};

/// Whether a finding is a value or the context around one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FindingKind {
    /// A sensitive value itself: an address, a number, a key.
    Value,
    /// Text a keyword marks (a labelled diagnosis, a sentence about revenue). It raises the
    /// classification and is hidden from skills not cleared for it, but it is not a value a
    /// skill's output is checked for.
    Context,
}

/// One thing a recognizer found: a byte range of the text (always on character
/// boundaries) with its type and handling.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Finding {
    /// Start byte offset (inclusive).
    pub start: usize,
    /// End byte offset (exclusive).
    pub end: usize,
    /// What it is.
    pub data_type: DataType,
    /// How sensitive it is.
    pub class: DataClass,
    /// Whether it may be replaced by a restorable token (otherwise it is redacted).
    pub tokenizable: bool,
    /// Value or context.
    pub kind: FindingKind,
}

impl Finding {
    /// The byte range.
    pub fn range(&self) -> Range<usize> {
        self.start..self.end
    }
}

/// A host-supplied recognizer (a named-entity model for person names, an employee-ID
/// pattern...). Its findings join the built-ins' in the same [`Findings`], the same
/// classification and the same token vault.
///
/// ```
/// use std::ops::Range;
/// use skills_security::{DataClass, DataType, Detector, Recognizer};
///
/// struct EmployeeId;
/// impl Recognizer for EmployeeId {
///     fn name(&self) -> &str { "employee-id" }
///     fn data_type(&self) -> DataType { DataType::new("EMPLOYEE_ID").unwrap() }
///     fn class(&self) -> DataClass { DataClass::Confidential }
///     fn find(&self, text: &str, spans: &mut Vec<Range<usize>>) {
///         spans.extend(text.match_indices("EMP-").map(|(i, _)| i..(i + 10).min(text.len())));
///     }
/// }
///
/// let detector = Detector::new().with_recognizer(EmployeeId);
/// let findings = detector.detect("EMP-004211 wrote to a@example.com");
/// let types: Vec<&str> = findings.values().map(|f| f.data_type.as_str()).collect();
/// assert_eq!(types, ["EMPLOYEE_ID", "EMAIL"]);
/// ```
pub trait Recognizer: Send + Sync {
    /// A short name, for diagnostics.
    fn name(&self) -> &str;
    /// The type of what it finds.
    fn data_type(&self) -> DataType;
    /// The class of what it finds.
    fn class(&self) -> DataClass;
    /// Whether what it finds may be tokenized (default yes).
    fn tokenizable(&self) -> bool {
        true
    }
    /// Appends the byte ranges of what it finds in `text`. Ranges that are empty, out of
    /// bounds or not on character boundaries are dropped and counted
    /// ([`Findings::rejected_host_spans`]), never trusted.
    fn find(&self, text: &str, spans: &mut Vec<Range<usize>>);
}

/// Runs every recognizer over a text in one pass.
///
/// Built-ins: e-mail, phone, SSN, payment card, IBAN, IPv4/IPv6, date of birth, money,
/// secrets, and the keyword classes; see the crate documentation for their rules. Text that
/// arrives JSON- or C-escaped is read with its escapes (`\n`, `\t`, `\"`, `\u000a`...) as
/// the separators they stand for; offsets are always byte offsets into the text given.
///
/// ```
/// use skills_security::{DataType, Detector};
///
/// let detector = Detector::new();
/// let findings = detector.detect("Call 702.289.9674 or mail rbrown@example.com. Order #646-804-5439.");
/// let found: Vec<(&str, &DataType)> = findings.values().map(|f| (&"Call 702.289.9674 or mail rbrown@example.com. Order #646-804-5439."[f.range()], &f.data_type)).collect();
/// assert_eq!(found, [("702.289.9674", &DataType::PHONE), ("rbrown@example.com", &DataType::EMAIL)]);
/// ```
#[derive(Clone)]
pub struct Detector {
    pass: pass::TriggerPass,
    host: Vec<Arc<dyn Recognizer>>,
}

impl fmt::Debug for Detector {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names: Vec<&str> = self.host.iter().map(|r| r.name()).collect();
        f.debug_struct("Detector")
            .field("host_recognizers", &names)
            .finish()
    }
}

impl Default for Detector {
    fn default() -> Self {
        Detector::new()
    }
}

impl Detector {
    /// The built-in recognizers.
    pub fn new() -> Detector {
        Detector {
            pass: pass::TriggerPass::new(),
            host: Vec::new(),
        }
    }

    /// Adds a host recognizer.
    pub fn with_recognizer(mut self, recognizer: impl Recognizer + 'static) -> Detector {
        self.host.push(Arc::new(recognizer));
        self
    }

    /// Everything found in `text`.
    pub fn detect(&self, text: &str) -> Findings {
        let mut findings = Findings::default();
        self.detect_into(text, &mut findings);
        findings
    }

    /// Like [`detect`](Self::detect), reusing `findings`' buffers: with no host recognizer
    /// and nothing found, this allocates nothing (a text holding a backslash is read
    /// through a copy kept in `findings`, allocated once).
    pub fn detect_into(&self, text: &str, findings: &mut Findings) {
        findings.items.clear();
        findings.resolved.clear();
        findings.rejected_host_spans = 0;
        // Escapes (`\n` written out) are read as the separators they stand for, in a copy
        // of the same length, so offsets stay offsets into `text`.
        let unescaped = findings.escapes.unescaped(text);
        self.pass.run(unescaped, &mut findings.items);
        if !self.host.is_empty() {
            let mut spans = Vec::new();
            for r in &self.host {
                spans.clear();
                r.find(text, &mut spans);
                let (data_type, class, tokenizable) = (r.data_type(), r.class(), r.tokenizable());
                for s in &spans {
                    if s.start < s.end
                        && s.end <= text.len()
                        && text.is_char_boundary(s.start)
                        && text.is_char_boundary(s.end)
                    {
                        findings.items.push(Finding {
                            start: s.start,
                            end: s.end,
                            data_type: data_type.clone(),
                            class,
                            tokenizable,
                            kind: FindingKind::Value,
                        });
                    } else {
                        findings.rejected_host_spans += 1;
                    }
                }
            }
        }
        if findings.items.is_empty() {
            return;
        }
        findings.items.sort_by(|a, b| {
            (
                a.start,
                std::cmp::Reverse(a.end),
                a.kind == FindingKind::Context,
                &a.data_type,
            )
                .cmp(&(
                    b.start,
                    std::cmp::Reverse(b.end),
                    b.kind == FindingKind::Context,
                    &b.data_type,
                ))
        });
        findings.items.dedup();
        resolve(&findings.items, &mut findings.resolved);
    }
}

/// Picks non-overlapping values: of two that overlap, the longer wins, then the more
/// sensitive, then the earlier.
fn resolve(items: &[Finding], out: &mut Vec<usize>) {
    for (i, f) in items.iter().enumerate() {
        if f.kind != FindingKind::Value {
            continue;
        }
        match out.last().map(|&j| (j, &items[j])) {
            Some((j, last)) if f.start < last.end => {
                let better = (f.end - f.start, f.class) > (last.end - last.start, last.class);
                if better {
                    let _ = j;
                    out.pop();
                    out.push(i);
                }
            }
            _ => out.push(i),
        }
    }
}

/// What a [`Detector`] found in one text, sorted by position.
#[derive(Debug, Clone, Default)]
pub struct Findings {
    items: Vec<Finding>,
    resolved: Vec<usize>,
    rejected_host_spans: usize,
    escapes: escape::EscapeBuffer,
}

impl Findings {
    /// Every finding, values and contexts, overlapping ones included, by start.
    pub fn all(&self) -> &[Finding] {
        &self.items
    }

    /// The values, with overlaps resolved (the longer, then the more sensitive, wins).
    pub fn values(&self) -> impl Iterator<Item = &Finding> {
        self.resolved.iter().filter_map(|&i| self.items.get(i))
    }

    /// The context findings (keyword classes).
    pub fn contexts(&self) -> impl Iterator<Item = &Finding> {
        self.items.iter().filter(|f| f.kind == FindingKind::Context)
    }

    /// True when nothing was found.
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// The highest class among the findings, if any.
    pub fn max_class(&self) -> Option<DataClass> {
        self.items.iter().map(|f| f.class).max()
    }

    /// Host recognizer ranges that were dropped as invalid.
    pub fn rejected_host_spans(&self) -> usize {
        self.rejected_host_spans
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Bad;
    impl Recognizer for Bad {
        fn name(&self) -> &str {
            "bad"
        }
        fn data_type(&self) -> DataType {
            DataType::GENERAL
        }
        fn class(&self) -> DataClass {
            DataClass::Public
        }
        fn find(&self, _text: &str, spans: &mut Vec<Range<usize>>) {
            spans.extend([0..1, Range { start: 3, end: 2 }, 0..999, 2..6]);
        }
    }

    #[test]
    fn host_spans_are_checked_not_trusted() {
        let d = Detector::new().with_recognizer(Bad);
        let f = d.detect("é and");
        // 0..1 splits `é`, 3..2 is reversed, 0..999 is out of bounds; 2..6 is fine.
        assert_eq!(f.rejected_host_spans(), 3);
        assert_eq!(f.values().count(), 1);
    }

    #[test]
    fn overlaps_resolve_to_the_longer_value() {
        let d = Detector::new();
        let text = "john.702.289.9674@example.com";
        let f = d.detect(text);
        let v: Vec<&str> = f.values().map(|x| &text[x.range()]).collect();
        assert_eq!(v, [text]);
    }
}
