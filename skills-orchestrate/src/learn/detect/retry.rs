//! Retry patterns: a skill that keeps needing another attempt.

use std::collections::BTreeMap;

use skills_store_traits::learning::PatternKind;

use super::{DetectedPattern, DetectorConfig, RecordedRun, Tally};

/// What one run did with one skill.
#[derive(Default)]
struct InRun {
    retried: bool,
    failed_before: bool,
    last_succeeded: bool,
}

pub(super) fn detect<R: RecordedRun>(
    history: &[R],
    config: &DetectorConfig,
) -> Vec<DetectedPattern> {
    let mut tallies: BTreeMap<&str, Tally<'_>> = BTreeMap::new();
    for (index, run) in history.iter().enumerate() {
        let mut skills: BTreeMap<&str, InRun> = BTreeMap::new();
        for step in run.steps() {
            let seen = skills.entry(step.skill_id.as_str()).or_default();
            // Retried inside the step, or run again after failing (fail, then succeed).
            seen.retried |= step.attempts > 1 || (step.success && seen.failed_before);
            seen.failed_before |= !step.success;
            seen.last_succeeded = step.success;
        }
        for (skill, seen) in skills {
            if seen.retried {
                tallies
                    .entry(skill)
                    .or_default()
                    .add(index, run.task_type(), seen.last_succeeded);
            }
        }
    }
    tallies
        .into_iter()
        .filter(|(_, tally)| tally.reaches(config))
        .map(|(skill, tally)| tally.into_pattern(PatternKind::Retry, &[skill], None))
        .collect()
}
