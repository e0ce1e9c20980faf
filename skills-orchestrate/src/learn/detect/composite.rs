//! Composite patterns: the same skills used together for one kind of task, in any order.

use std::collections::{BTreeMap, BTreeSet};

use skills_store_traits::learning::PatternKind;

use super::{DetectedPattern, DetectorConfig, RecordedRun, Tally};

pub(super) fn detect<R: RecordedRun>(
    history: &[R],
    config: &DetectorConfig,
) -> Vec<DetectedPattern> {
    let mut tallies: BTreeMap<(&str, Vec<&str>), Tally<'_>> = BTreeMap::new();
    for (index, run) in history.iter().enumerate() {
        let skills: BTreeSet<&str> = run.steps().iter().map(|s| s.skill_id.as_str()).collect();
        if skills.len() < 2 {
            continue;
        }
        tallies
            .entry((run.task_type(), skills.into_iter().collect()))
            .or_default()
            .add(index, run.task_type(), run.succeeded());
    }
    tallies
        .into_iter()
        .filter(|(_, tally)| tally.reaches(config))
        .map(|((task_type, skills), tally)| {
            tally.into_pattern(PatternKind::Composite, &skills, Some(task_type))
        })
        .collect()
}
