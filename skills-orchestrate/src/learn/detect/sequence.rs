//! Recurring sequences: contiguous runs of skills, maximal ones preferred.

use std::collections::BTreeMap;

use skills_store_traits::learning::{ExecutedStep, PatternKind};

use super::{DetectedPattern, DetectorConfig, RecordedRun, Tally};

/// A run's steps as sequences see them: skill names and outcomes, retries merged.
struct Normalized<'a> {
    skills: Vec<&'a str>,
    succeeded: Vec<bool>,
}

/// Merges a failed step directly followed by the same skill into that later step, so an
/// immediate re-run reads as one step (a retry pattern), not as a sequence `x, x`.
fn normalize(steps: &[ExecutedStep]) -> Normalized<'_> {
    let mut out = Normalized {
        skills: Vec::with_capacity(steps.len()),
        succeeded: Vec::with_capacity(steps.len()),
    };
    for step in steps {
        let retry_of_last = out.skills.last() == Some(&step.skill_id.as_str())
            && out.succeeded.last() == Some(&false);
        if retry_of_last {
            if let Some(last) = out.succeeded.last_mut() {
                *last = step.success;
            }
            continue;
        }
        out.skills.push(&step.skill_id);
        out.succeeded.push(step.success);
    }
    out
}

pub(super) fn detect<R: RecordedRun>(
    history: &[R],
    config: &DetectorConfig,
) -> Vec<DetectedPattern> {
    let runs: Vec<Normalized<'_>> = history.iter().map(|run| normalize(run.steps())).collect();
    let mut tallies: BTreeMap<&[&str], Tally<'_>> = BTreeMap::new();
    for (index, (run, normalized)) in history.iter().zip(&runs).enumerate() {
        // Each window once per run; the run succeeds for it only if every occurrence did.
        let mut in_run: BTreeMap<&[&str], bool> = BTreeMap::new();
        let len = normalized.skills.len();
        for width in 2..=config.max_sequence_len.min(len) {
            for start in 0..=len - width {
                let window = &normalized.skills[start..start + width];
                let ok = normalized.succeeded[start..start + width]
                    .iter()
                    .all(|s| *s);
                in_run
                    .entry(window)
                    .and_modify(|all_ok| *all_ok &= ok)
                    .or_insert(ok);
            }
        }
        for (window, ok) in in_run {
            tallies
                .entry(window)
                .or_default()
                .add(index, run.task_type(), ok);
        }
    }

    let frequent: Vec<(&[&str], Tally<'_>)> = tallies
        .into_iter()
        .filter(|(_, tally)| tally.reaches(config))
        .collect();
    let dominated: Vec<bool> = frequent
        .iter()
        .map(|(sequence, tally)| {
            frequent.iter().any(|(longer, longer_tally)| {
                longer.len() > sequence.len()
                    // Every occurrence inside `longer` means the same runs; cheap filter first.
                    && longer_tally.runs == tally.runs
                    && contains(longer, sequence)
                    && tally
                        .runs
                        .iter()
                        .all(|&run| covered(&runs[run].skills, sequence, longer))
            })
        })
        .collect();
    frequent
        .into_iter()
        .zip(dominated)
        .filter(|(_, dominated)| !dominated)
        .map(|((sequence, tally), _)| tally.into_pattern(PatternKind::Sequence, sequence, None))
        .collect()
}

fn contains(longer: &[&str], sequence: &[&str]) -> bool {
    longer.windows(sequence.len()).any(|w| w == sequence)
}

fn positions<'s>(skills: &'s [&str], sequence: &'s [&str]) -> impl Iterator<Item = usize> + 's {
    skills
        .windows(sequence.len())
        .enumerate()
        .filter(move |(_, w)| *w == sequence)
        .map(|(at, _)| at)
}

/// Whether every occurrence of `sequence` in `skills` lies inside an occurrence of `longer`.
fn covered(skills: &[&str], sequence: &[&str], longer: &[&str]) -> bool {
    let outer: Vec<usize> = positions(skills, longer).collect();
    positions(skills, sequence).all(|at| {
        outer
            .iter()
            .any(|&start| start <= at && at + sequence.len() <= start + longer.len())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_immediate_rerun_after_a_failure_is_one_step() {
        let steps = [
            ExecutedStep::new("a", false, 1, 1),
            ExecutedStep::new("a", true, 1, 1),
            ExecutedStep::new("a", true, 1, 1),
            ExecutedStep::new("b", true, 1, 1),
        ];
        let normalized = normalize(&steps);
        assert_eq!(normalized.skills, ["a", "a", "b"]);
        assert_eq!(normalized.succeeded, [true, true, true]);
    }

    #[test]
    fn coverage_needs_every_occurrence() {
        let skills = ["a", "b", "c", "x", "a", "b"];
        assert!(!covered(&skills, &["a", "b"], &["a", "b", "c"]));
        assert!(covered(&skills[..3], &["a", "b"], &["a", "b", "c"]));
    }
}
