//! Working memory (seed 000 section 2.4): what a step hands to the steps after it.
//!
//! A step's output becomes a [`MemoryEntry`]: a summary no longer than the skill's
//! [`Verbosity`](crate::context::Verbosity) allows (300, 800 or 1,500 tokens; 500 when not
//! declared), plus the artifacts, extracted facts and next-step hints the step reported. A
//! dependent step's input is its dependencies' entries, in plan order, after the task input.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use skills_security::DataClass;
use skills_store_traits::plans::{NewStep, StepStatus, StepUpdate, WorkingMemoryEntry};

use crate::llm::{TokenCounter, TokenUsage};

/// A fact a step learned, as a triple (seed 000 section 2.2).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExtractedFact {
    /// What it is about.
    pub subject: String,
    /// The relation.
    pub predicate: String,
    /// The value.
    pub object: String,
}

impl ExtractedFact {
    /// A fact.
    pub fn new(
        subject: impl Into<String>,
        predicate: impl Into<String>,
        object: impl Into<String>,
    ) -> Self {
        ExtractedFact {
            subject: subject.into(),
            predicate: predicate.into(),
            object: object.into(),
        }
    }
}

/// What one attempt of a skill produced, before it is checked.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[non_exhaustive]
pub struct StepOutput {
    /// The answer.
    pub text: String,
    /// Files and the like it produced.
    pub artifacts: Vec<String>,
    /// Facts it learned.
    pub extracted_facts: Vec<ExtractedFact>,
    /// What the next step should know.
    pub next_step_hints: Vec<String>,
    /// Tokens it used.
    pub usage: TokenUsage,
}

impl StepOutput {
    /// An output of `text` alone.
    pub fn text(text: impl Into<String>) -> Self {
        StepOutput {
            text: text.into(),
            ..Self::default()
        }
    }

    /// Adds an artifact.
    pub fn artifact(mut self, artifact: impl Into<String>) -> Self {
        self.artifacts.push(artifact.into());
        self
    }

    /// Adds a fact.
    pub fn fact(mut self, fact: ExtractedFact) -> Self {
        self.extracted_facts.push(fact);
        self
    }

    /// Adds a next-step hint.
    pub fn hint(mut self, hint: impl Into<String>) -> Self {
        self.next_step_hints.push(hint.into());
        self
    }

    /// Sets the token usage.
    pub fn usage(mut self, usage: TokenUsage) -> Self {
        self.usage = usage;
        self
    }

    /// Reads a model's answer: the structured JSON object of the default output format when
    /// the answer is one (a `summary` string at least), else the whole text.
    pub fn from_answer(answer: &str) -> Self {
        #[derive(Deserialize)]
        struct Structured {
            summary: String,
            #[serde(default)]
            artifacts: Vec<String>,
            #[serde(default)]
            extracted_facts: Vec<ExtractedFact>,
            #[serde(default)]
            next_step_hints: Vec<String>,
        }
        let trimmed = answer.trim();
        let json = trimmed
            .strip_prefix("```json")
            .or_else(|| trimmed.strip_prefix("```"))
            .and_then(|rest| rest.strip_suffix("```"))
            .unwrap_or(trimmed);
        match serde_json::from_str::<Structured>(json) {
            Ok(s) => StepOutput {
                text: s.summary,
                artifacts: s.artifacts,
                extracted_facts: s.extracted_facts,
                next_step_hints: s.next_step_hints,
                usage: TokenUsage::default(),
            },
            Err(_) => StepOutput::text(answer),
        }
    }
}

/// One step's working memory (seed 000 section 2.4's entry, `status` included).
///
/// A step that completed hands its output on in it. A step that failed, was denied, skipped
/// or cancelled gets one too, with that status and the reason as its summary (never any of
/// its output: a blocked output stays blocked), so every step of a run says what became of
/// it, in the result and in the plan store. Only `complete` entries are ever read as a later
/// step's input or resumed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct MemoryEntry {
    /// The step's number in the plan.
    pub step: u32,
    /// The step's id.
    pub step_id: String,
    /// The skill it ran.
    pub skill_id: String,
    /// Where the step ended: `complete`, `failed`, `denied`, `skipped` or `cancelled`.
    pub status: StepStatus,
    /// The summary handed on, within the skill's verbosity; for a step that did not
    /// complete, why (the step's error).
    pub summary: String,
    /// Artifacts.
    pub artifacts: Vec<String>,
    /// Extracted facts.
    pub extracted_facts: Vec<ExtractedFact>,
    /// Next-step hints.
    pub next_step_hints: Vec<String>,
    /// The highest class of what produced the entry: every class the step's input held
    /// (the task input under its source, the dependencies under theirs), whether or not the
    /// skill was cleared to see it, since its output is restored for the recipient. A later
    /// step reads the entry as data of at least this class.
    pub data_class: DataClass,
    /// Where that data came from: the run's source (when the step had task input) and its
    /// dependencies' sources, sorted and without repeats.
    pub sources: Vec<String>,
}

/// The class an entry stored without one (or with a name this crate does not know) is read
/// as: restricted, the highest a non-core skill is never cleared for and that still
/// tokenizes, since nothing says what produced it.
pub const UNKNOWN_MEMORY_CLASS: DataClass = DataClass::Restricted;

impl MemoryEntry {
    /// The entry of a step that ended without completing: `status` and `reason`, nothing
    /// else; `data_class` is the class of what wrote the reason (public for the executor's
    /// own words, [`UNKNOWN_MEMORY_CLASS`] for a skill's error).
    pub(crate) fn ended(
        step: u32,
        step_id: &str,
        skill_id: &str,
        status: StepStatus,
        reason: String,
        data_class: DataClass,
    ) -> Self {
        MemoryEntry {
            step,
            step_id: step_id.to_owned(),
            skill_id: skill_id.to_owned(),
            status,
            summary: reason,
            artifacts: Vec::new(),
            extracted_facts: Vec::new(),
            next_step_hints: Vec::new(),
            data_class,
            sources: Vec::new(),
        }
    }

    /// Whether the step completed (its entry may be handed on).
    pub fn completed(&self) -> bool {
        self.status == StepStatus::Complete
    }

    /// The entry as a dependent step's input reads it.
    pub fn render(&self) -> String {
        let mut text = format!(
            "Step {} ({}, skill {}):\n{}",
            self.step, self.step_id, self.skill_id, self.summary
        );
        if !self.artifacts.is_empty() {
            text.push_str("\nArtifacts: ");
            text.push_str(&self.artifacts.join(", "));
        }
        for fact in &self.extracted_facts {
            text.push_str(&format!(
                "\nFact: {} | {} | {}",
                fact.subject, fact.predicate, fact.object
            ));
        }
        for hint in &self.next_step_hints {
            text.push_str("\nHint: ");
            text.push_str(hint);
        }
        text
    }

    /// The stored form of the entry.
    pub(crate) fn new_step(&self) -> NewStep {
        let mut step = NewStep::new(self.step, self.skill_id.clone());
        step.status = self.status;
        step.summary = Some(self.summary.clone());
        step.artifacts = to_value(&self.artifacts);
        step.extracted_facts = to_value(&self.extracted_facts);
        step.next_step_hints = to_value(&self.next_step_hints);
        step.data_class = Some(self.data_class.as_str().to_owned());
        step.sources = self.sources.clone();
        step
    }

    /// The update that records the entry.
    pub(crate) fn update(&self) -> StepUpdate {
        let mut update = StepUpdate::new()
            .status(self.status)
            .summary(self.summary.clone());
        update.artifacts = Some(to_value(&self.artifacts));
        update.extracted_facts = Some(to_value(&self.extracted_facts));
        update.next_step_hints = Some(to_value(&self.next_step_hints));
        update.data_class = Some(self.data_class.as_str().to_owned());
        update.sources = Some(self.sources.clone());
        update
    }

    /// Reads a stored entry back (resume). Payloads that do not parse read as empty; a
    /// missing or unknown class as [`UNKNOWN_MEMORY_CLASS`].
    pub(crate) fn from_stored(step_id: &str, stored: &WorkingMemoryEntry) -> Self {
        MemoryEntry {
            step: stored.step_number,
            step_id: step_id.to_owned(),
            skill_id: stored.skill_id.clone(),
            status: stored.status,
            summary: stored.summary.clone().unwrap_or_default(),
            artifacts: from_value(&stored.artifacts),
            extracted_facts: from_value(&stored.extracted_facts),
            next_step_hints: from_value(&stored.next_step_hints),
            data_class: stored
                .data_class
                .as_deref()
                .and_then(DataClass::parse)
                .unwrap_or(UNKNOWN_MEMORY_CLASS),
            sources: stored.sources.clone(),
        }
    }
}

fn to_value<T: Serialize>(items: &[T]) -> Value {
    serde_json::to_value(items).unwrap_or(Value::Array(Vec::new()))
}

fn from_value<T: serde::de::DeserializeOwned>(value: &Value) -> Vec<T> {
    serde_json::from_value(value.clone()).unwrap_or_default()
}

/// How summaries longer than the skill's verbosity are shortened.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum SummaryMode {
    /// Ask the model (when the executor has one) for a summary within the limit; fall back
    /// to truncation when there is no model, the call fails, or the summary is blocked.
    #[default]
    Model,
    /// Cut the text deterministically at the limit.
    Truncate,
}

/// The marker ending a truncated summary.
pub const TRUNCATION_MARKER: &str = " […]";

/// The longest prefix of `text`, cut at a char boundary, that costs at most `max_tokens`
/// with [`TRUNCATION_MARKER`] appended (the whole text when it fits). Deterministic.
pub fn truncate_to_tokens(text: &str, max_tokens: usize, counter: &dyn TokenCounter) -> String {
    if counter.count(text) <= max_tokens {
        return text.to_owned();
    }
    let room = max_tokens.saturating_sub(counter.count(TRUNCATION_MARKER));
    // Binary search over byte offsets, snapped to char boundaries: O(log n) counts.
    let (mut low, mut high) = (0usize, text.len());
    while low < high {
        let mid = floor_boundary(text, low + (high - low).div_ceil(2));
        if mid <= low {
            break;
        }
        if counter.count(&text[..mid]) <= room {
            low = mid
        } else {
            high = mid - 1
        }
    }
    let cut = floor_boundary(text, low);
    let kept = text[..cut].trim_end();
    format!("{kept}{TRUNCATION_MARKER}")
}

fn floor_boundary(text: &str, mut at: usize) -> usize {
    at = at.min(text.len());
    while at > 0 && !text.is_char_boundary(at) {
        at -= 1;
    }
    at
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::EstimatedTokens;
    use proptest::prelude::*;

    #[test]
    fn structured_answers_are_read_and_plain_ones_kept() {
        let answer = r#"```json
{"summary": "3 accounts", "artifacts": ["out.csv"], "extracted_facts": [{"subject": "ACME", "predicate": "renews", "object": "May"}], "next_step_hints": ["use out.csv"]}
```"#;
        let output = StepOutput::from_answer(answer);
        assert_eq!(output.text, "3 accounts");
        assert_eq!(output.artifacts, ["out.csv"]);
        assert_eq!(
            output.extracted_facts,
            [ExtractedFact::new("ACME", "renews", "May")]
        );
        assert_eq!(output.next_step_hints, ["use out.csv"]);
        assert_eq!(
            StepOutput::from_answer("{\"other\": 1}").text,
            "{\"other\": 1}"
        );
    }

    #[test]
    fn stored_entries_read_back() {
        let entry = MemoryEntry {
            step: 2,
            step_id: "b".into(),
            skill_id: "s".into(),
            status: StepStatus::Complete,
            summary: "done".into(),
            artifacts: vec!["a.txt".into()],
            extracted_facts: vec![ExtractedFact::new("x", "y", "z")],
            next_step_hints: vec!["h".into()],
            data_class: DataClass::Confidential,
            sources: vec!["crm_deal".into()],
        };
        let new = entry.new_step();
        // The record is non-exhaustive: build it the way a store hands it back.
        let stored: WorkingMemoryEntry = serde_json::from_value(serde_json::json!({
            "id": "1", "plan_id": "p", "step_number": new.step_number, "skill_id": new.skill_id,
            "status": new.status, "summary": new.summary, "artifacts": new.artifacts,
            "extracted_facts": new.extracted_facts, "next_step_hints": new.next_step_hints,
            "data_class": new.data_class, "sources": new.sources,
            "created_at": 0, "updated_at": 0,
        }))
        .unwrap();
        assert_eq!(MemoryEntry::from_stored("b", &stored), entry);
        // An entry from before classes were kept reads as restricted, never as internal.
        let old: WorkingMemoryEntry = serde_json::from_value(serde_json::json!({
            "id": "1", "plan_id": "p", "step_number": 1, "skill_id": "s", "status": "complete",
            "artifacts": [], "extracted_facts": [], "next_step_hints": [],
            "created_at": 0, "updated_at": 0,
        }))
        .unwrap();
        let read = MemoryEntry::from_stored("a", &old);
        assert_eq!(
            (read.data_class, read.sources),
            (DataClass::Restricted, vec![])
        );
    }

    #[test]
    fn an_ended_step_is_stored_with_its_status_and_reason_only() {
        let entry = MemoryEntry::ended(
            3,
            "c",
            "s",
            StepStatus::Denied,
            "denied: no".into(),
            DataClass::Public,
        );
        assert!(!entry.completed());
        let new = entry.new_step();
        assert_eq!(
            (new.status, new.summary.as_deref()),
            (StepStatus::Denied, Some("denied: no"))
        );
        assert_eq!(new.artifacts, serde_json::json!([]));
        let update = entry.update();
        assert_eq!(update.status, Some(StepStatus::Denied));
    }

    proptest! {
        #[test]
        fn truncation_fits_and_is_a_prefix(text in "\\PC{0,600}", max in 1usize..80) {
            let counter = EstimatedTokens;
            let cut = truncate_to_tokens(&text, max, &counter);
            if counter.count(&text) <= max {
                prop_assert_eq!(&cut, &text);
            } else {
                let kept = cut.strip_suffix(TRUNCATION_MARKER).unwrap_or(&cut);
                prop_assert!(text.starts_with(kept));
                prop_assert!(counter.count(&cut) <= max.max(counter.count(TRUNCATION_MARKER)));
            }
        }
    }
}
