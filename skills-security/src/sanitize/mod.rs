//! The sanitization pipeline (seed 000, section 1.4): classify, check the skill's
//! clearance, tokenize what it may not see, redact what cannot be tokenized, and validate
//! what it gives back.
//!
//! Threat: a skill seeing data above its clearance, leaking what it saw, or forging tokens
//! to have hidden values restored; the pipeline itself leaking through its results, errors
//! or logs. Guarantees: a sanitized text holds no finding of a class the skill is not
//! cleared for (and, when the item's source class itself is not cleared, nothing of the
//! item but one token); tokens are restored only from this execution's vault and only for a
//! recipient cleared for their class; redacted values are never restorable; errors, flags,
//! audit records and `Debug` output carry types, counts, token names and byte positions,
//! never a hidden value.

mod output;
mod vault;

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use serde::Serialize;
use serde_json::Value;

pub use output::{OutputIssue, ValidatedOutput};

use crate::Error;
use crate::classify::json::{detect_field, scalar_text};
use crate::classify::{
    ClassifiedData, Classifier, Context, DataClass, DataType, SourceRule, summarize_with,
};
use crate::detect::{Finding, FindingKind, Findings};
use crate::trust::{Clearance, RegulatedApproval, TrustLevel};
use vault::{TokenVault, parse_token};

/// JSON nesting beyond this is replaced whole rather than walked.
const MAX_JSON_DEPTH: usize = 128;

/// Runs the pipeline; one [`Execution`] per skill run.
///
/// ```
/// use skills_security::{Clearance, Context, Sanitizer, TrustLevel};
///
/// let sanitizer = Sanitizer::default();
/// let mut run = sanitizer.begin("exec-1", TrustLevel::Core, None)?;
/// let input = run.sanitize_text("Reach rbrown@example.com, SSN 224-30-8280, DOB: 1961-11-20.", &Context::default());
/// // A core skill sees the e-mail (confidential), but not regulated data without approval.
/// assert_eq!(input.text, "Reach rbrown@example.com, SSN [REDACTED: SSN], DOB: [DATE_OF_BIRTH_001].");
///
/// let output = run.validate_output("Born [DATE_OF_BIRTH_001]; wrote to rbrown@example.com.", Clearance::ALL)?;
/// assert_eq!(output.text, "Born 1961-11-20; wrote to rbrown@example.com.");
///
/// let audit = run.audit();
/// assert!(audit.data_redacted);
/// assert_eq!(audit.tokens_used, ["[DATE_OF_BIRTH_001]"]);
/// # Ok::<(), skills_security::Error>(())
/// ```
#[derive(Debug, Clone, Default)]
pub struct Sanitizer {
    classifier: Classifier,
}

impl Sanitizer {
    /// A pipeline over this classifier.
    pub fn new(classifier: Classifier) -> Sanitizer {
        Sanitizer { classifier }
    }

    /// The classifier.
    pub fn classifier(&self) -> &Classifier {
        &self.classifier
    }

    /// Starts execution `execution` of a skill at `trust`, with an optional regulated-data
    /// approval (see [`Clearance::for_skill`]).
    pub fn begin(
        &self,
        execution: impl Into<String>,
        trust: TrustLevel,
        approval: Option<&RegulatedApproval>,
    ) -> Result<Execution<'_>, Error> {
        let id: String = execution.into();
        let clearance = Clearance::for_skill(trust, &id, approval)?;
        let mut flags = Vec::new();
        if let Some(a) = approval {
            if clearance.allows(DataClass::Regulated) {
                flags.push(SecurityFlag::RegulatedApproved {
                    approved_by: a.approved_by().to_owned(),
                });
            } else {
                flags.push(SecurityFlag::ApprovalNotApplicable { trust });
            }
        }
        Ok(Execution {
            sanitizer: self,
            id,
            trust,
            clearance,
            vault: TokenVault::default(),
            requested: BTreeSet::new(),
            redactions: BTreeMap::new(),
            flags,
            scratch: Findings::default(),
        })
    }
}

/// Something an execution's audit record should show.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "flag", rename_all = "snake_case")]
#[non_exhaustive]
pub enum SecurityFlag {
    /// Regulated data was approved for this execution.
    RegulatedApproved {
        /// Who approved.
        approved_by: String,
    },
    /// An approval was given to a skill whose trust level cannot use it.
    ApprovalNotApplicable {
        /// The skill's trust level.
        trust: TrustLevel,
    },
    /// A host recognizer returned invalid ranges, which were dropped.
    HostRecognizerSpansRejected {
        /// How many.
        count: usize,
    },
    /// The input held strings shaped like tokens; those names were not issued.
    TokenShapedInput {
        /// How many.
        count: usize,
    },
    /// JSON nested deeper than the walk allows was replaced whole.
    JsonTooDeep,
    /// A skill output was blocked.
    OutputBlocked {
        /// Raw values of classes the skill was not cleared for.
        raw_values: usize,
        /// Values hidden from the skill that appeared in its output anyway.
        hidden_values: usize,
        /// Tokens this execution never issued.
        unknown_tokens: usize,
    },
}

impl fmt::Display for SecurityFlag {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SecurityFlag::RegulatedApproved { approved_by } => {
                write!(f, "regulated data approved by {approved_by}")
            }
            SecurityFlag::ApprovalNotApplicable { trust } => {
                write!(f, "regulated-data approval ignored for a {trust} skill")
            }
            SecurityFlag::HostRecognizerSpansRejected { count } => {
                write!(f, "{count} invalid host recognizer ranges dropped")
            }
            SecurityFlag::TokenShapedInput { count } => {
                write!(f, "{count} token-shaped strings in input")
            }
            SecurityFlag::JsonTooDeep => f.write_str("JSON nested too deeply was replaced whole"),
            SecurityFlag::OutputBlocked {
                raw_values,
                hidden_values,
                unknown_tokens,
            } => write!(
                f,
                "output blocked: {raw_values} raw values, {hidden_values} hidden values, {unknown_tokens} unknown tokens"
            ),
        }
    }
}

/// The data-access part of the audit record of seed 000, section 1.6.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct DataAccess {
    /// The execution.
    pub execution: String,
    /// The skill's trust level.
    pub skill_trust_level: TrustLevel,
    /// Classes present in the data offered to the skill.
    pub data_classes_requested: Vec<DataClass>,
    /// Those it was allowed to see as they were.
    pub data_classes_granted: Vec<DataClass>,
    /// Whether anything was redacted.
    pub data_redacted: bool,
    /// Redactions by data type.
    pub redactions: BTreeMap<DataType, usize>,
    /// Token names issued, in order.
    pub tokens_used: Vec<String>,
    /// Security events.
    pub security_flags: Vec<SecurityFlag>,
}

/// A sanitized text and its classification (positions in `classified` refer to the input).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Sanitized {
    /// What the skill may see.
    pub text: String,
    /// The input's classification.
    pub classified: ClassifiedData,
}

/// A sanitized JSON value and the class of the whole input.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct SanitizedJson {
    /// What the skill may see.
    pub value: Value,
    /// The highest class in the input.
    pub classification: DataClass,
}

/// One skill run: its clearance, its token vault and its audit data.
pub struct Execution<'s> {
    sanitizer: &'s Sanitizer,
    id: String,
    trust: TrustLevel,
    clearance: Clearance,
    vault: TokenVault,
    requested: BTreeSet<DataClass>,
    redactions: BTreeMap<DataType, usize>,
    flags: Vec<SecurityFlag>,
    scratch: Findings,
}

impl fmt::Debug for Execution<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Execution")
            .field("id", &self.id)
            .field("trust", &self.trust)
            .field("clearance", &self.clearance)
            .field("vault", &self.vault)
            .finish_non_exhaustive()
    }
}

/// A run of overlapping findings to hide as one.
struct Group {
    start: usize,
    end: usize,
    data_type: DataType,
    class: DataClass,
    tokenizable: bool,
    rank: (DataClass, bool, usize),
}

/// Hides every other occurrence of a hidden value too (as a whole word): context can make
/// one occurrence a finding and the next not (`172.191.37.15` after `v`), but a value
/// hidden once must not show elsewhere in the same text.
fn add_repeats(text: &str, groups: &mut Vec<Group>) {
    if groups.is_empty() {
        return;
    }
    let h = text.as_bytes();
    let mut extra: Vec<Group> = Vec::new();
    let mut consider = |g: &Group, at: usize, end: usize, groups: &[Group]| {
        let word = !matches!(h.get(at.wrapping_sub(1)), Some(b) if b.is_ascii_alphanumeric())
            && !matches!(h.get(end), Some(b) if b.is_ascii_alphanumeric());
        let taken = |o: &Group| at < o.end && o.start < end;
        if word && !groups.iter().any(taken) && !extra.iter().any(taken) {
            extra.push(Group {
                start: at,
                end,
                data_type: g.data_type.clone(),
                class: g.class,
                tokenizable: g.tokenizable,
                rank: g.rank,
            });
        }
    };
    let raws: Vec<(usize, &[u8])> = groups
        .iter()
        .enumerate()
        .filter_map(|(i, g)| h.get(g.start..g.end).map(|r| (i, r)))
        .filter(|(_, r)| r.len() >= 3)
        .collect();
    if raws.len() <= 4 || raws.len().saturating_mul(h.len()) <= 1 << 18 {
        // A few values or a short text: one memmem search each is cheaper than building an
        // automaton; past that, one automaton keeps the work linear in the text.
        for &(i, raw) in &raws {
            for at in memchr::memmem::find_iter(h, raw) {
                if let Some(g) = groups.get(i) {
                    consider(g, at, at + raw.len(), groups);
                }
            }
        }
    } else if let Ok(ac) = aho_corasick::AhoCorasick::builder()
        .match_kind(aho_corasick::MatchKind::LeftmostLongest)
        .build(raws.iter().map(|(_, r)| r))
    {
        // Many values: one pass over the text for all of them.
        for m in ac.find_iter(h) {
            if let Some(g) = raws
                .get(m.pattern().as_usize())
                .and_then(|&(i, _)| groups.get(i))
            {
                consider(g, m.start(), m.end(), groups);
            }
        }
    }
    if !extra.is_empty() {
        groups.extend(extra);
        groups.sort_by_key(|g| g.start);
    }
}

fn hide_groups(findings: &[Finding], clearance: Clearance) -> Vec<Group> {
    let mut groups: Vec<Group> = Vec::new();
    for f in findings.iter().filter(|f| !clearance.allows(f.class)) {
        let rank = (f.class, f.kind == FindingKind::Value, f.end - f.start);
        match groups.last_mut() {
            Some(g) if f.start < g.end => {
                g.end = g.end.max(f.end);
                g.tokenizable &= f.tokenizable;
                g.class = g.class.max(f.class);
                if rank > g.rank {
                    g.rank = rank;
                    g.data_type = f.data_type.clone();
                }
            }
            _ => groups.push(Group {
                start: f.start,
                end: f.end,
                data_type: f.data_type.clone(),
                class: f.class,
                tokenizable: f.tokenizable,
                rank,
            }),
        }
    }
    groups
}

impl<'s> Execution<'s> {
    /// The execution id.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// What the skill may see.
    pub fn clearance(&self) -> Clearance {
        self.clearance
    }

    /// Steps 1-4 for one text: classify it, then tokenize or redact everything the skill
    /// may not see.
    pub fn sanitize_text(&mut self, text: &str, context: &Context) -> Sanitized {
        let rule = self.sanitizer.classifier.sources().rule_for(context);
        let mut findings = std::mem::take(&mut self.scratch);
        self.sanitizer
            .classifier
            .detector()
            .detect_into(text, &mut findings);
        if findings.rejected_host_spans() > 0 {
            self.flags.push(SecurityFlag::HostRecognizerSpansRejected {
                count: findings.rejected_host_spans(),
            });
        }
        let classified = summarize_with(findings.all(), &rule);
        let out = self.hide(text, findings.all(), &rule);
        self.scratch = findings;
        Sanitized {
            text: out,
            classified,
        }
    }

    /// Steps 1-4 for a JSON value: every string and number is classified with its key as
    /// context and sanitized like a text; object keys are kept unless they hold findings.
    pub fn sanitize_json(&mut self, value: &Value, context: &Context) -> SanitizedJson {
        let rule = self.sanitizer.classifier.sources().rule_for(context);
        let mut top = rule.class;
        let mut buf = String::new();
        let value = self.json_node(value, None, &rule, 0, &mut buf, &mut top);
        SanitizedJson {
            value,
            classification: top,
        }
    }

    fn json_node(
        &mut self,
        v: &Value,
        key: Option<&str>,
        rule: &SourceRule,
        depth: usize,
        buf: &mut String,
        top: &mut DataClass,
    ) -> Value {
        if depth > MAX_JSON_DEPTH {
            self.flags.push(SecurityFlag::JsonTooDeep);
            *top = (*top).max(DataClass::Regulated);
            let raw = v.to_string();
            return Value::String(self.redact(&DataType::GENERAL, &raw));
        }
        match v {
            Value::Object(map) => {
                let mut out = serde_json::Map::new();
                for (k, child) in map {
                    let new_key = self.sanitize_key(k, rule, top);
                    let new_child = self.json_node(child, Some(k), rule, depth + 1, buf, top);
                    out.insert(new_key, new_child);
                }
                Value::Object(out)
            }
            Value::Array(items) => Value::Array(
                items
                    .iter()
                    .map(|c| self.json_node(c, key, rule, depth + 1, buf, top))
                    .collect(),
            ),
            other => {
                let Some(text) = scalar_text(other) else {
                    return other.clone();
                };
                let mut scratch = std::mem::take(&mut self.scratch);
                let found = detect_field(
                    self.sanitizer.classifier.detector(),
                    key,
                    &text,
                    buf,
                    &mut scratch,
                );
                self.scratch = scratch;
                *top = (*top).max(found.iter().map(|f| f.class).max().unwrap_or(rule.class));
                let hidden = self.hide(&text, &found, rule);
                if hidden == text.as_ref() {
                    other.clone()
                } else {
                    Value::String(hidden)
                }
            }
        }
    }

    fn sanitize_key(&mut self, k: &str, rule: &SourceRule, top: &mut DataClass) -> String {
        let mut findings = std::mem::take(&mut self.scratch);
        self.sanitizer
            .classifier
            .detector()
            .detect_into(k, &mut findings);
        let out = if findings.is_empty() {
            k.to_owned()
        } else {
            *top = (*top).max(findings.max_class().unwrap_or(rule.class));
            let key_rule = SourceRule {
                class: DataClass::Public,
                ..rule.clone()
            };
            self.hide(k, findings.all(), &key_rule)
        };
        self.scratch = findings;
        out
    }

    fn redact(&mut self, data_type: &DataType, raw: &str) -> String {
        self.vault.remember_redacted(data_type, raw);
        *self.redactions.entry(data_type.clone()).or_insert(0) += 1;
        format!("[REDACTED: {}]", data_type.as_str())
    }

    /// Replaces the findings the skill may not see; then, if the source class itself is
    /// not cleared, the whole item.
    fn hide(&mut self, text: &str, findings: &[Finding], rule: &SourceRule) -> String {
        self.reserve_token_shapes(text);
        self.requested.insert(rule.class);
        for f in findings {
            self.requested.insert(f.class);
        }
        let mut groups = hide_groups(findings, self.clearance);
        add_repeats(text, &mut groups);
        let mut out = String::with_capacity(text.len());
        let mut last = 0;
        for g in &groups {
            let (Some(before), Some(raw)) = (text.get(last..g.start), text.get(g.start..g.end))
            else {
                continue;
            };
            out.push_str(before);
            if g.tokenizable {
                out.push_str(self.vault.token_for(&g.data_type, g.class, raw));
            } else {
                let marker = self.redact(&g.data_type, raw);
                out.push_str(&marker);
            }
            last = g.end;
        }
        out.push_str(text.get(last..).unwrap_or(""));
        if !self.clearance.allows(rule.class) && !text.is_empty() {
            return if rule.tokenizable {
                self.vault
                    .token_for(&rule.data_type, rule.class, &out)
                    .to_owned()
            } else {
                self.redact(&rule.data_type, &out)
            };
        }
        out
    }

    fn reserve_token_shapes(&mut self, text: &str) {
        let h = text.as_bytes();
        let mut count = 0;
        for i in memchr::memchr_iter(b'[', h) {
            if let Some(end) = parse_token(h, i)
                && let Some(name) = text.get(i..end)
                && self.vault.get(name).is_none()
            {
                self.vault.reserve(name);
                count += 1;
            }
        }
        if count > 0 {
            self.flags.push(SecurityFlag::TokenShapedInput { count });
        }
    }

    /// The audit record's data-access fields so far.
    pub fn audit(&self) -> DataAccess {
        let requested: Vec<DataClass> = self.requested.iter().copied().collect();
        DataAccess {
            execution: self.id.clone(),
            skill_trust_level: self.trust,
            data_classes_granted: requested
                .iter()
                .copied()
                .filter(|c| self.clearance.allows(*c))
                .collect(),
            data_classes_requested: requested,
            data_redacted: self.vault.redacted_count() > 0,
            redactions: self.redactions.clone(),
            tokens_used: self
                .vault
                .entries()
                .iter()
                .map(|e| e.name.clone())
                .collect(),
            security_flags: self.flags.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(trust: TrustLevel) -> (Sanitizer, TrustLevel) {
        (Sanitizer::default(), trust)
    }

    #[test]
    fn community_sees_nothing_internal() {
        let (s, t) = run(TrustLevel::Community);
        let mut e = s.begin("x", t, None).unwrap();
        let out = e.sanitize_text("mail rbrown@example.com now", &Context::default());
        assert_eq!(out.text, "[GENERAL_001]");
        let back = e
            .validate_output("got [GENERAL_001]", Clearance::ALL)
            .unwrap();
        assert_eq!(
            back.text,
            "got mail [EMAIL_001] now".replace("[EMAIL_001]", "rbrown@example.com")
        );
    }

    #[test]
    fn public_source_for_community() {
        let mut rules = crate::SourceRules::default();
        rules.set_default_class(DataClass::Public);
        let s = Sanitizer::new(Classifier::new().with_sources(rules));
        let mut e = s.begin("x", TrustLevel::Community, None).unwrap();
        let out = e.sanitize_text(
            "mail rbrown@example.com or bob@example.com; rbrown@example.com again",
            &Context::default(),
        );
        assert_eq!(
            out.text,
            "mail [EMAIL_001] or [EMAIL_002]; [EMAIL_001] again"
        );
    }

    #[test]
    fn labelled_health_value_is_hidden_label_kept() {
        let s = Sanitizer::default();
        let mut e = s.begin("x", TrustLevel::Core, None).unwrap();
        let out = e.sanitize_text(
            "Diagnosis: Major depressive disorder.\nRevenue: $4.2M",
            &Context::default(),
        );
        assert_eq!(out.text, "Diagnosis: [HEALTH_001].\nRevenue: $4.2M");
    }

    #[test]
    fn audit_lists_requested_and_granted() {
        let s = Sanitizer::default();
        let mut e = s.begin("x", TrustLevel::Verified, None).unwrap();
        let _ = e.sanitize_text("SSN 224-30-8280, a@example.com", &Context::source("press"));
        let a = e.audit();
        assert_eq!(
            a.data_classes_requested,
            [
                DataClass::Internal,
                DataClass::Confidential,
                DataClass::Regulated
            ]
        );
        assert_eq!(a.data_classes_granted, [DataClass::Internal]);
        assert!(a.data_redacted);
        assert_eq!(a.tokens_used, ["[EMAIL_001]"]);
        let json = serde_json::to_string(&a).unwrap();
        assert!(!json.contains("224-30-8280") && !json.contains("a@example.com"));
    }
}
