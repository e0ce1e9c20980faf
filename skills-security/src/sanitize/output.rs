//! Step 5: validating a skill's output and restoring the tokens its recipient may see.
//!
//! Threat: a skill (or a prompt injection steering it) writing out data it was not cleared
//! for, echoing a value it obtained elsewhere, or inventing token names to fish for hidden
//! values. Guarantee: output holding a raw value of a class the skill may not see, any value
//! this execution hid from it, or a token this execution never issued is blocked with an
//! error naming only types and byte positions; otherwise only this execution's tokens are
//! restored, and only those whose class the recipient is cleared for.

use std::fmt;

use aho_corasick::{AhoCorasick, MatchKind};
use serde::Serialize;

use super::vault::parse_token;
use super::{Execution, SecurityFlag};
use crate::Error;
use crate::classify::{DataClass, DataType};
use crate::detect::FindingKind;
use crate::trust::Clearance;

/// Hidden values shorter than this are not searched for verbatim (`$53` would match too
/// much); recognizers still catch them by shape.
const MIN_ECHO_LEN: usize = 4;

/// Something that blocks a skill's output. Positions are byte offsets into the output.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "issue", rename_all = "snake_case")]
#[non_exhaustive]
pub enum OutputIssue {
    /// A value of a class the skill was not cleared for.
    RawValue {
        /// Its type.
        data_type: DataType,
        /// Its class.
        class: DataClass,
        /// Start byte.
        start: usize,
        /// End byte.
        end: usize,
    },
    /// A value this execution hid from the skill, appearing verbatim.
    HiddenValue {
        /// Its type.
        data_type: DataType,
        /// Start byte.
        start: usize,
        /// End byte.
        end: usize,
    },
    /// A token this execution never issued.
    UnknownToken {
        /// The token as written (only `[`, `A-Z`, `0-9`, `_`, `]`).
        token: String,
        /// Start byte.
        start: usize,
        /// End byte.
        end: usize,
    },
}

impl fmt::Display for OutputIssue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            OutputIssue::RawValue {
                data_type,
                class,
                start,
                end,
            } => write!(f, "raw {data_type} ({class}) at bytes {start}..{end}"),
            OutputIssue::HiddenValue {
                data_type,
                start,
                end,
            } => write!(f, "hidden {data_type} value at bytes {start}..{end}"),
            OutputIssue::UnknownToken { token, start, end } => {
                write!(f, "unknown token {token} at bytes {start}..{end}")
            }
        }
    }
}

/// An output that passed validation, with tokens restored for its recipient.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ValidatedOutput {
    /// The output for the recipient.
    pub text: String,
    /// Tokens replaced by their values.
    pub restored: Vec<String>,
    /// Tokens left in place because the recipient may not see their class.
    pub withheld: Vec<String>,
}

impl Execution<'_> {
    /// Step 5: checks `output` and restores the tokens `recipient` may see.
    ///
    /// ```
    /// use skills_security::{Clearance, Context, DataClass, Error, Sanitizer, SourceRules, Classifier, TrustLevel};
    ///
    /// let mut public = SourceRules::default();
    /// public.set_default_class(DataClass::Public);
    /// let sanitizer = Sanitizer::new(Classifier::new().with_sources(public));
    /// let mut run = sanitizer.begin("exec-2", TrustLevel::Community, None)?;
    /// let input = run.sanitize_text("Write to rbrown@example.com", &Context::default());
    /// assert_eq!(input.text, "Write to [EMAIL_001]");
    ///
    /// // The skill cannot hand back a raw address, or a token it made up.
    /// let err = run.validate_output("Sent to bob@example.com and [EMAIL_007]", Clearance::ALL).unwrap_err();
    /// let message = err.to_string();
    /// assert!(message.contains("EMAIL") && !message.contains("bob@example.com"));
    ///
    /// // Tokens are restored only for a recipient cleared for their class.
    /// let ok = run.validate_output("Sent to [EMAIL_001]", Clearance::up_to(DataClass::Internal))?;
    /// assert_eq!(ok.text, "Sent to [EMAIL_001]");
    /// let ok = run.validate_output("Sent to [EMAIL_001]", Clearance::ALL)?;
    /// assert_eq!(ok.text, "Sent to rbrown@example.com");
    /// # Ok::<(), Error>(())
    /// ```
    pub fn validate_output(
        &mut self,
        output: &str,
        recipient: Clearance,
    ) -> Result<ValidatedOutput, Error> {
        let mut issues = Vec::new();
        let findings = self.sanitizer.classifier.detector().detect(output);
        for f in findings.values() {
            if f.kind == FindingKind::Value && !self.clearance.allows(f.class) {
                issues.push(OutputIssue::RawValue {
                    data_type: f.data_type.clone(),
                    class: f.class,
                    start: f.start,
                    end: f.end,
                });
            }
        }
        self.echoes(output, &mut issues);
        let h = output.as_bytes();
        for i in memchr::memchr_iter(b'[', h) {
            if let Some(end) = parse_token(h, i) {
                let name = output.get(i..end).unwrap_or("");
                if self.vault.get(name).is_none() && !self.vault.is_reserved(name) {
                    issues.push(OutputIssue::UnknownToken {
                        token: name.to_owned(),
                        start: i,
                        end,
                    });
                }
            }
        }
        if !issues.is_empty() {
            issues.sort_by_key(|i| match i {
                OutputIssue::RawValue { start, .. }
                | OutputIssue::HiddenValue { start, .. }
                | OutputIssue::UnknownToken { start, .. } => *start,
            });
            let count = |pred: fn(&OutputIssue) -> bool| issues.iter().filter(|i| pred(i)).count();
            self.flags.push(SecurityFlag::OutputBlocked {
                raw_values: count(|i| matches!(i, OutputIssue::RawValue { .. })),
                hidden_values: count(|i| matches!(i, OutputIssue::HiddenValue { .. })),
                unknown_tokens: count(|i| matches!(i, OutputIssue::UnknownToken { .. })),
            });
            return Err(Error::OutputBlocked { issues });
        }
        let mut restored = Vec::new();
        let mut withheld = Vec::new();
        let mut text = self.restore(output, recipient, &mut restored, &mut withheld);
        // A whole-item token's value may itself hold the item's inner tokens.
        if !restored.is_empty() && text.contains('[') {
            text = self.restore(&text, recipient, &mut restored, &mut withheld);
        }
        Ok(ValidatedOutput {
            text,
            restored,
            withheld,
        })
    }

    /// Values hidden from the skill that appear verbatim in `output`, unless a recognizer
    /// already reported the same place.
    fn echoes(&self, output: &str, issues: &mut Vec<OutputIssue>) {
        let hidden: Vec<(&DataType, &str)> = self
            .vault
            .hidden()
            .filter(|(_, raw)| raw.len() >= MIN_ECHO_LEN)
            .collect();
        if hidden.is_empty() {
            return;
        }
        let Ok(ac) = AhoCorasick::builder()
            .match_kind(MatchKind::LeftmostLongest)
            .build(hidden.iter().map(|(_, r)| *r))
        else {
            return;
        };
        for m in ac.find_iter(output) {
            let covered = issues.iter().any(|i| matches!(i, OutputIssue::RawValue { start, end, .. } if *start <= m.start() && m.end() <= *end));
            if !covered && let Some((t, _)) = hidden.get(m.pattern().as_usize()) {
                issues.push(OutputIssue::HiddenValue {
                    data_type: (*t).clone(),
                    start: m.start(),
                    end: m.end(),
                });
            }
        }
    }

    fn restore(
        &self,
        text: &str,
        recipient: Clearance,
        restored: &mut Vec<String>,
        withheld: &mut Vec<String>,
    ) -> String {
        let h = text.as_bytes();
        let mut out = String::with_capacity(text.len());
        let mut last = 0;
        for i in memchr::memchr_iter(b'[', h) {
            if i < last {
                continue;
            }
            let Some(end) = parse_token(h, i) else {
                continue;
            };
            let name = text.get(i..end).unwrap_or("");
            let Some(entry) = self.vault.get(name) else {
                continue;
            };
            if recipient.allows(entry.class) {
                out.push_str(text.get(last..i).unwrap_or(""));
                out.push_str(&entry.raw);
                last = end;
                restored.push(entry.name.clone());
            } else {
                withheld.push(entry.name.clone());
            }
        }
        out.push_str(text.get(last..).unwrap_or(""));
        out
    }
}

#[cfg(test)]
mod tests {
    use crate::{Clearance, Context, DataClass, Error, Sanitizer, TrustLevel};

    #[test]
    fn echoed_hidden_values_are_caught_even_without_context() {
        let s = Sanitizer::default();
        let mut e = s.begin("x", TrustLevel::Core, None).unwrap();
        let _ = e.sanitize_text("DOB: 1961-11-20", &Context::default());
        // Without "DOB" before it a date is not a date of birth, but it is the hidden value.
        let err = e
            .validate_output("the date 1961-11-20 matters", Clearance::ALL)
            .unwrap_err();
        let Error::OutputBlocked { issues } = err else {
            panic!()
        };
        assert_eq!(issues.len(), 1);
        assert_eq!(
            issues[0].to_string(),
            "hidden DATE_OF_BIRTH value at bytes 9..19"
        );
    }

    #[test]
    fn errors_never_show_values() {
        let s = Sanitizer::default();
        let mut e = s.begin("x", TrustLevel::Verified, None).unwrap();
        let _ = e.sanitize_text("SSN 224-30-8280", &Context::default());
        let err = e
            .validate_output(
                "SSN is 224-30-8280, card 4539 1488 0343 6467",
                Clearance::ALL,
            )
            .unwrap_err();
        let shown = format!("{err} {err:?}");
        assert!(
            !shown.contains("224-30-8280") && !shown.contains("4539"),
            "{shown}"
        );
        assert!(shown.contains("SSN") && shown.contains("CREDIT_CARD"));
        assert!(
            e.audit()
                .security_flags
                .iter()
                .any(|f| matches!(f, crate::SecurityFlag::OutputBlocked { .. }))
        );
    }

    #[test]
    fn tokens_from_input_text_are_literals_not_tokens() {
        let mut rules = crate::SourceRules::default();
        rules.set_default_class(DataClass::Public);
        let s = Sanitizer::new(crate::Classifier::new().with_sources(rules));
        let mut e = s.begin("x", TrustLevel::Community, None).unwrap();
        let out = e.sanitize_text(
            "literal [EMAIL_001] then a@example.com",
            &Context::default(),
        );
        assert_eq!(out.text, "literal [EMAIL_001] then [EMAIL_002]");
        let back = e.validate_output(&out.text, Clearance::ALL).unwrap();
        assert_eq!(back.text, "literal [EMAIL_001] then a@example.com");
    }

    #[test]
    fn other_executions_tokens_are_unknown() {
        let s = Sanitizer::default();
        let mut a = s.begin("a", TrustLevel::Verified, None).unwrap();
        let t = a.sanitize_text("x@example.com", &Context::default());
        let mut b = s.begin("b", TrustLevel::Verified, None).unwrap();
        assert!(b.validate_output(&t.text, Clearance::ALL).is_err());
    }
}
