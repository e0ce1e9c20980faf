//! DECIDE's scoring (seed 000 section 2.3: generate options, evaluate each, keep the best
//! with its confidence, the alternatives considered and the reasoning).
//!
//! The options, in this order (ties go to the earlier one):
//!
//! | option | skills | base score |
//! |---|---|---|
//! | [`OptionKind::Plan`] | the orientation's selection | 80 chosen by the model at once, 70 after its corrective retry or by the keyword fallback |
//! | [`OptionKind::WithOptional`] | the selection plus its optional skills | the plan's, less 10 (more steps than needed) |
//! | [`OptionKind::KeywordMatch`] | the fallback selector's choice for the goal alone (no observations: they name failed skills) | 60 |
//! | [`OptionKind::NoSkill`] | none: answer without skills | 90 when no skill option exists or the selection needs none; 20 otherwise |
//!
//! A skill option loses `40 × (its steps whose skill failed or was denied earlier in this
//! loop) / (its steps)` (rounded down) and 5, 10 or 20 for a medium, high or critical plan
//! risk. Scores are whole points from 0 to 100, shown as 0.00 to 1.00; an option whose
//! skills are those of an earlier option is not scored twice. The winner's score is the
//! decision's confidence.
//!
//! Deterministic by construction: integer points, a fixed option order, stable ties, and
//! the keyword fallback's own deterministic ranking.

use std::collections::BTreeSet;

use serde::Serialize;

use crate::plan::{ExecutionPlan, RiskLevel};
use crate::select::{RequiredSkill, Selection, SelectionSource};

/// What kind of action an option is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum OptionKind {
    /// Run the plan for the orientation's selection.
    Plan,
    /// Run that plan with the selection's optional skills too.
    WithOptional,
    /// Run the keyword fallback's choice for the goal.
    KeywordMatch,
    /// Answer without skills.
    NoSkill,
}

impl OptionKind {
    /// `plan`, `with_optional`, `keyword_match` or `no_skill`.
    pub fn as_str(self) -> &'static str {
        match self {
            OptionKind::Plan => "plan",
            OptionKind::WithOptional => "with_optional",
            OptionKind::KeywordMatch => "keyword_match",
            OptionKind::NoSkill => "no_skill",
        }
    }
}

/// One option and how it scored.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct ScoredOption {
    /// The kind.
    pub kind: OptionKind,
    /// The skills its plan runs, in plan order (empty for [`OptionKind::NoSkill`]).
    pub skills: Vec<String>,
    /// Its plan's id.
    pub plan_id: Option<String>,
    /// The score, 0 to 1.
    pub score: f64,
    /// How the score was made: the base, then each deduction.
    pub reasons: Vec<String>,
}

impl ScoredOption {
    fn label(&self) -> String {
        if self.skills.is_empty() {
            self.kind.as_str().replace('_', " ")
        } else {
            format!(
                "{} [{}]",
                self.kind.as_str().replace('_', " "),
                self.skills.join(", ")
            )
        }
    }
}

/// What DECIDE chose (seed 000 section 2.3's `state.decision`).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct OodaDecision {
    /// The option chosen.
    pub selected: OptionKind,
    /// Its skills.
    pub skills: Vec<String>,
    /// Its score, 0 to 1.
    pub confidence: f64,
    /// How many options were scored, the chosen one included (the seed's
    /// `len(options)`).
    pub alternatives_considered: usize,
    /// Every option scored, in the order above.
    pub options: Vec<ScoredOption>,
    /// Why this one: its score and reasons against the others'.
    pub reasoning: String,
}

/// An option being scored, with what acting on it needs.
pub(super) struct Candidate {
    pub(super) option: ScoredOption,
    pub(super) selection: Selection,
    pub(super) plan: Option<ExecutionPlan>,
}

/// Whole points, shown as a fraction.
fn fraction(points: u32) -> f64 {
    f64::from(points.min(100)) / 100.0
}

/// The base points and reason of a skill option (see the module docs).
pub(super) fn skill_base(kind: OptionKind, source: SelectionSource) -> (u32, String) {
    let plan: (u32, String) = match source {
        SelectionSource::Model { attempts } if attempts <= 1 => {
            (80, "the model chose it".to_owned())
        }
        SelectionSource::Model { .. } => (70, "the model chose it after a retry".to_owned()),
        _ => (70, "the keyword fallback chose it".to_owned()),
    };
    match kind {
        OptionKind::WithOptional => (
            plan.0.saturating_sub(10),
            format!("{}, plus its optional skills", plan.1),
        ),
        OptionKind::KeywordMatch => (60, "a keyword match on the goal".to_owned()),
        _ => plan,
    }
}

/// Scores a skill option: `base` less the deductions for earlier failures and risk.
pub(super) fn score_plan(
    kind: OptionKind,
    (base, why): (u32, String),
    selection: Selection,
    plan: ExecutionPlan,
    failed: &BTreeSet<String>,
) -> Candidate {
    let skills: Vec<String> = plan.steps.iter().map(|s| s.skill.clone()).collect();
    let mut reasons = vec![format!("{why} ({})", fraction(base))];
    let mut points = base;
    let failing: Vec<&str> = skills
        .iter()
        .filter(|s| failed.contains(*s))
        .map(String::as_str)
        .collect();
    if !failing.is_empty() {
        let lost = u32::try_from(40 * failing.len() / skills.len().max(1)).unwrap_or(40);
        points = points.saturating_sub(lost);
        reasons.push(format!(
            "-{}: {} of {} skills failed earlier ({})",
            fraction(lost),
            failing.len(),
            skills.len(),
            failing.join(", ")
        ));
    }
    let risk = match plan.risk {
        RiskLevel::Medium => 5,
        RiskLevel::High => 10,
        RiskLevel::Critical => 20,
        _ => 0,
    };
    if risk > 0 {
        points = points.saturating_sub(risk);
        reasons.push(format!("-{}: {} risk", fraction(risk), plan.risk));
    }
    Candidate {
        option: ScoredOption {
            kind,
            skills,
            plan_id: Some(plan.id.clone()),
            score: fraction(points),
            reasons,
        },
        selection,
        plan: Some(plan),
    }
}

/// The no-skill option: likely when nothing else is on the table or the selection needs no
/// skill, unlikely when it does.
pub(super) fn no_skill(selection: &Selection, others: usize) -> Candidate {
    let (points, why) = if others == 0 || !selection.analysis.skills_needed {
        (90, "no skill is needed or available")
    } else {
        (20, "the selection needs skills")
    };
    Candidate {
        option: ScoredOption {
            kind: OptionKind::NoSkill,
            skills: Vec::new(),
            plan_id: None,
            score: fraction(points),
            reasons: vec![format!("{why} ({})", fraction(points))],
        },
        selection: Selection::from_analysis(Default::default()),
        plan: None,
    }
}

/// The selection with its optional skills made required (after the required ones), if it
/// has any.
pub(super) fn with_optional(selection: &Selection) -> Option<Selection> {
    let optional = &selection.analysis.optional_skills;
    if optional.is_empty() || !selection.analysis.skills_needed {
        return None;
    }
    let mut analysis = selection.analysis.clone();
    analysis
        .required_skills
        .extend(optional.iter().map(|o| RequiredSkill {
            skill_id: o.skill_id.clone(),
            reason: o.reason.clone(),
            critical: false,
        }));
    analysis.optional_skills.clear();
    let mut wider = Selection::from_analysis(analysis);
    wider.source = selection.source;
    Some(wider)
}

/// Keeps the first option of each skill list, picks the best (ties to the earlier), and
/// writes the decision. `None` when there is no option at all.
pub(super) fn choose(
    candidates: Vec<Candidate>,
) -> Option<(OodaDecision, Selection, Option<ExecutionPlan>)> {
    let mut seen = BTreeSet::new();
    let candidates: Vec<Candidate> = candidates
        .into_iter()
        .filter(|c| seen.insert(c.option.skills.clone()))
        .collect();
    let best = candidates
        .iter()
        .enumerate()
        .fold(None::<(usize, f64)>, |best, (i, c)| match best {
            Some((_, score)) if score >= c.option.score => best,
            _ => Some((i, c.option.score)),
        })?
        .0;
    let options: Vec<ScoredOption> = candidates.iter().map(|c| c.option.clone()).collect();
    let chosen = &options[best];
    let others: Vec<String> = options
        .iter()
        .enumerate()
        .filter(|(i, _)| *i != best)
        .map(|(_, o)| format!("{} ({:.2})", o.label(), o.score))
        .collect();
    let reasoning = format!(
        "chose {} ({:.2}: {}){}",
        chosen.label(),
        chosen.score,
        chosen.reasons.join("; "),
        if others.is_empty() {
            ", the only option".to_owned()
        } else {
            format!(" over {}", others.join(", "))
        }
    );
    let decision = OodaDecision {
        selected: chosen.kind,
        skills: chosen.skills.clone(),
        confidence: chosen.score,
        alternatives_considered: options.len(),
        reasoning,
        options,
    };
    let winner = candidates.into_iter().nth(best)?;
    Some((decision, winner.selection, winner.plan))
}
