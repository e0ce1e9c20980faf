//! The deterministic selector used when no model is configured (seed 003's trigger
//! matching, extended to names, tags and descriptions).
//!
//! Texts are compared as terms: lowercase runs of letters and digits, a trailing `s` dropped
//! from terms longer than three letters (not `ss`), so `reports` meets `report`. A phrase
//! (trigger, tag, name) matches when its terms occur consecutively in the task's terms.
//!
//! Scoring, per skill:
//!
//! | match | points |
//! |---|---|
//! | each trigger phrase found | 10 |
//! | the whole name (or id, hyphens as spaces) found | 8 |
//! | otherwise each name term found (not a stop word, 3+ letters) | 3 |
//! | each tag found | 4 |
//! | each description term found (not a stop word, 4+ letters), at most 5 | 1 |
//!
//! A skill scoring at least [`FallbackSelector::min_score`] is required (at most
//! [`FallbackSelector::max_skills`], highest score first, ties by id); it is critical when a
//! trigger or its whole name matched. Skills scoring above zero but below the bar are
//! optional. The required skills run in the order the task first mentions them (ties by
//! id), one after another: without a model nothing tells which could run in parallel.

use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};

use super::analysis::{ExecutionApproach, OptionalSkill, RequiredSkill, SkillAnalysis};
use super::candidate::SkillCandidate;
use super::task::Task;

const TRIGGER_POINTS: u32 = 10;
const NAME_POINTS: u32 = 8;
const NAME_TERM_POINTS: u32 = 3;
const TAG_POINTS: u32 = 4;
const DESCRIPTION_TERM_POINTS: u32 = 1;
const MAX_DESCRIPTION_TERMS: usize = 5;

const STOP_WORDS: &[&str] = &[
    "a", "about", "after", "all", "also", "an", "and", "any", "are", "as", "at", "be", "before",
    "by", "can", "data", "do", "does", "file", "files", "for", "from", "get", "has", "have", "how",
    "in", "into", "is", "it", "its", "make", "of", "on", "or", "other", "skill", "skills", "such",
    "that", "the", "their", "them", "then", "these", "this", "those", "to", "use", "used", "using",
    "when", "what", "which", "will", "with", "you", "your",
];

/// Why a skill scored.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", content = "text", rename_all = "snake_case")]
#[non_exhaustive]
pub enum MatchReason {
    /// A trigger phrase was found.
    Trigger(String),
    /// The whole name was found.
    Name(String),
    /// A term of the name was found.
    NameTerm(String),
    /// A tag was found.
    Tag(String),
    /// A term of the description was found.
    DescriptionTerm(String),
}

/// One skill's score against a task.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ScoredSkill {
    /// The skill's id.
    pub skill_id: String,
    /// Its points.
    pub score: u32,
    /// Where in the task (term index) it is first mentioned.
    pub first_mention: usize,
    /// What matched, in the order of the scoring table.
    pub matched: Vec<MatchReason>,
}

impl ScoredSkill {
    fn critical(&self) -> bool {
        self.matched
            .iter()
            .any(|m| matches!(m, MatchReason::Trigger(_) | MatchReason::Name(_)))
    }

    fn reason(&self) -> String {
        let parts: Vec<String> = self
            .matched
            .iter()
            .map(|m| match m {
                MatchReason::Trigger(t) => format!("trigger \"{t}\""),
                MatchReason::Name(n) => format!("name \"{n}\""),
                MatchReason::NameTerm(t) => format!("name word \"{t}\""),
                MatchReason::Tag(t) => format!("tag \"{t}\""),
                MatchReason::DescriptionTerm(t) => format!("description word \"{t}\""),
            })
            .collect();
        format!(
            "the task matches {} (score {})",
            parts.join(", "),
            self.score
        )
    }
}

fn stem(term: &str) -> String {
    match term.strip_suffix('s') {
        Some(stemmed) if term.chars().count() > 3 && !stemmed.ends_with('s') => stemmed.to_owned(),
        _ => term.to_owned(),
    }
}

/// The terms of `text`, lowercased and stemmed, in order.
fn terms(text: &str) -> Vec<String> {
    text.to_lowercase()
        .split(|c: char| !c.is_alphanumeric())
        .filter(|t| !t.is_empty())
        .map(stem)
        .collect()
}

/// The content terms of `text` (no stop words, at least `min_chars` long), distinct, in order.
fn content_terms(text: &str, min_chars: usize) -> Vec<String> {
    let mut seen = BTreeSet::new();
    text.to_lowercase()
        .split(|c: char| !c.is_alphanumeric())
        .filter(|t| t.chars().count() >= min_chars && !STOP_WORDS.contains(t))
        .map(stem)
        .filter(|t| seen.insert(t.clone()))
        .collect()
}

/// Where `phrase` first occurs in `haystack` as consecutive terms.
fn find_phrase(haystack: &[String], phrase: &[String]) -> Option<usize> {
    if phrase.is_empty() || phrase.len() > haystack.len() {
        return None;
    }
    haystack
        .windows(phrase.len())
        .position(|window| window == phrase)
}

/// Ranks and selects skills by matching their metadata against the task.
///
/// ```
/// use skills_orchestrate::select::{FallbackSelector, SkillCandidate, Task};
///
/// let candidates = [
///     SkillCandidate::new("pdf", "Extract text and tables from PDF files.").triggers(["read a pdf"]),
///     SkillCandidate::new("email-sequence", "Draft a sequence of outreach emails."),
///     SkillCandidate::new("calendar-management", "Schedule meetings."),
/// ];
/// let task = Task::new("Read a PDF of the proposal, then draft an email sequence");
/// let analysis = FallbackSelector::new().analyze(&task, &candidates);
/// let ids: Vec<_> = analysis.required_skills.iter().map(|s| s.skill_id.as_str()).collect();
/// assert_eq!(ids, ["pdf", "email-sequence"]);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct FallbackSelector {
    /// The score a skill needs to be required (default 4).
    pub min_score: u32,
    /// The most skills required (default 5).
    pub max_skills: usize,
}

impl Default for FallbackSelector {
    fn default() -> Self {
        FallbackSelector {
            min_score: 4,
            max_skills: 5,
        }
    }
}

impl FallbackSelector {
    /// The defaults: a score of 4 or more, at most 5 skills.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets the score a skill needs to be required (at least 1).
    pub fn min_score(mut self, score: u32) -> Self {
        self.min_score = score.max(1);
        self
    }

    /// Sets the most skills required.
    pub fn max_skills(mut self, count: usize) -> Self {
        self.max_skills = count;
        self
    }

    /// Scores one candidate; `None` when nothing matched.
    pub fn score(&self, task_terms: &[String], candidate: &SkillCandidate) -> Option<ScoredSkill> {
        let mut score = 0u32;
        let mut first = usize::MAX;
        let mut matched = Vec::new();
        let mut hit = |at: usize, points: u32, reason: MatchReason, score: &mut u32| {
            *score = score.saturating_add(points);
            first = first.min(at);
            matched.push(reason);
        };
        let mut seen = BTreeSet::new();
        for trigger in candidate
            .triggers
            .iter()
            .filter(|t| seen.insert(t.as_str()))
        {
            if let Some(at) = find_phrase(task_terms, &terms(trigger)) {
                hit(
                    at,
                    TRIGGER_POINTS,
                    MatchReason::Trigger(trigger.clone()),
                    &mut score,
                );
            }
        }
        let whole_name = [&candidate.name, &candidate.id]
            .into_iter()
            .find_map(|n| find_phrase(task_terms, &terms(n)).map(|at| (at, n.clone())));
        match whole_name {
            Some((at, name)) => hit(at, NAME_POINTS, MatchReason::Name(name), &mut score),
            None => {
                let name_terms = content_terms(&format!("{} {}", candidate.id, candidate.name), 3);
                for term in name_terms {
                    if let Some(at) = task_terms.iter().position(|t| *t == term) {
                        hit(
                            at,
                            NAME_TERM_POINTS,
                            MatchReason::NameTerm(term),
                            &mut score,
                        );
                    }
                }
            }
        }
        let tags: BTreeSet<&String> = candidate.tags.iter().collect();
        for tag in tags {
            if let Some(at) = find_phrase(task_terms, &terms(tag)) {
                hit(at, TAG_POINTS, MatchReason::Tag(tag.clone()), &mut score);
            }
        }
        let description_hits = content_terms(&candidate.description, 4)
            .into_iter()
            .filter_map(|term| {
                task_terms
                    .iter()
                    .position(|t| *t == term)
                    .map(|at| (at, term))
            })
            .take(MAX_DESCRIPTION_TERMS);
        for (at, term) in description_hits {
            hit(
                at,
                DESCRIPTION_TERM_POINTS,
                MatchReason::DescriptionTerm(term),
                &mut score,
            );
        }
        (score > 0).then(|| ScoredSkill {
            skill_id: candidate.id.clone(),
            score,
            first_mention: first,
            matched,
        })
    }

    /// Every candidate that scored, highest score first, ties by id. Deprecated candidates,
    /// those invoked only by name and those limited to paths the task's files do not match
    /// are left out: the fallback never picks one on its own.
    pub fn rank(&self, task: &Task, candidates: &[SkillCandidate]) -> Vec<ScoredSkill> {
        let task_terms = terms(&task.text());
        let mut scored: Vec<ScoredSkill> = candidates
            .iter()
            .filter(|c| c.auto_selectable_for(task))
            .filter_map(|c| self.score(&task_terms, c))
            .collect();
        scored.sort_by(|a, b| {
            b.score
                .cmp(&a.score)
                .then_with(|| a.skill_id.cmp(&b.skill_id))
        });
        scored.dedup_by(|later, earlier| later.skill_id == earlier.skill_id);
        scored
    }

    /// The analysis the scores give (see the module docs for the rules).
    pub fn analyze(&self, task: &Task, candidates: &[SkillCandidate]) -> SkillAnalysis {
        let ranked = self.rank(task, candidates);
        let (mut required, optional): (Vec<ScoredSkill>, Vec<ScoredSkill>) =
            ranked.into_iter().partition(|s| s.score >= self.min_score);
        let overflow = required.split_off(required.len().min(self.max_skills));
        required.sort_by(|a, b| {
            a.first_mention
                .cmp(&b.first_mention)
                .then_with(|| a.skill_id.cmp(&b.skill_id))
        });
        let optional_skills = overflow
            .into_iter()
            .chain(optional)
            .take(self.max_skills)
            .map(|s| OptionalSkill {
                benefit: format!("a partial match (score {})", s.score),
                reason: s.reason(),
                skill_id: s.skill_id,
            })
            .collect();
        SkillAnalysis {
            skills_needed: !required.is_empty(),
            required_skills: required
                .into_iter()
                .map(|s| RequiredSkill {
                    critical: s.critical(),
                    reason: s.reason(),
                    skill_id: s.skill_id,
                })
                .collect(),
            optional_skills,
            execution_approach: ExecutionApproach::Sequential,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn terms_are_stemmed_the_same_on_both_sides() {
        assert_eq!(terms("Reports, PDFs & class"), ["report", "pdf", "class"]);
        assert_eq!(stem("bus"), "bus");
    }

    #[test]
    fn phrases_match_only_consecutively() {
        let hay = terms("please read the pdf now");
        assert_eq!(find_phrase(&hay, &terms("read the pdf")), Some(1));
        assert_eq!(find_phrase(&hay, &terms("read pdf")), None);
        assert_eq!(find_phrase(&hay, &[]), None);
    }
}
