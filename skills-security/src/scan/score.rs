//! The risk score and the verdict.
//!
//! Each finding has a weight by severity (`Info` 0, `Low` 5, `Medium` 20, `High` 40,
//! `Critical` 70, in percent). The first finding of a rule counts its full weight; further
//! findings of the same rule count a quarter, so a long file repeating one pattern does not
//! outweigh two different ones. The weights combine as independent probabilities:
//! `score = 100 × (1 − Π(1 − wᵢ))`, which never exceeds 100 and grows ever more slowly.
//!
//! | verdict | when |
//! |---|---|
//! | block | any `Critical` finding, or score ≥ [`BLOCK_SCORE`] (three `High`s of different rules) |
//! | review | score ≥ [`REVIEW_SCORE`] (one `High`, or two `Medium`s of different rules) |
//! | clean | otherwise (at most one `Medium` plus `Low`s) |

use std::collections::BTreeSet;

use super::report::{ScanFinding, Severity, Verdict};

/// Scores at or above this block the skill.
pub const BLOCK_SCORE: u32 = 75;
/// Scores at or above this ask for review.
pub const REVIEW_SCORE: u32 = 35;

fn weight(severity: Severity) -> f64 {
    match severity {
        Severity::Info => 0.0,
        Severity::Low => 0.05,
        Severity::Medium => 0.20,
        Severity::High => 0.40,
        Severity::Critical => 0.70,
    }
}

/// The score of a set of findings (0 to 100).
pub(crate) fn score(findings: &[ScanFinding]) -> u32 {
    let mut seen: BTreeSet<&'static str> = BTreeSet::new();
    // Highest severities first, so a rule's full weight goes to its worst finding.
    let mut ordered: Vec<&ScanFinding> = findings.iter().collect();
    ordered.sort_by(|a, b| b.severity.cmp(&a.severity).then(a.rule.cmp(b.rule)));
    let mut clean = 1.0_f64;
    for finding in ordered {
        let mut w = weight(finding.severity);
        if !seen.insert(finding.rule) {
            w /= 4.0;
        }
        clean *= 1.0 - w;
    }
    let raw = (100.0 * (1.0 - clean)).round();
    if raw <= 0.0 {
        0
    } else if raw >= 100.0 {
        100
    } else {
        // In range 1..=99 by the checks above.
        raw as u32
    }
}

/// The verdict for findings with this score.
pub(crate) fn verdict(findings: &[ScanFinding], score: u32) -> Verdict {
    if score >= BLOCK_SCORE || findings.iter().any(|f| f.severity == Severity::Critical) {
        Verdict::Block
    } else if score >= REVIEW_SCORE {
        Verdict::Review
    } else {
        Verdict::Clean
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scan::report::Category;

    fn finding(rule: &'static str, severity: Severity) -> ScanFinding {
        ScanFinding::new(
            Category::DangerousCommand,
            severity,
            rule,
            "SKILL.md",
            1,
            String::new(),
            String::new(),
        )
    }

    #[test]
    fn thresholds() {
        let one_high = [finding("a", Severity::High)];
        assert_eq!(score(&one_high), 40);
        assert_eq!(verdict(&one_high, 40), Verdict::Review);
        let one_medium = [finding("a", Severity::Medium)];
        assert_eq!(verdict(&one_medium, score(&one_medium)), Verdict::Clean);
        let two_medium = [
            finding("a", Severity::Medium),
            finding("b", Severity::Medium),
        ];
        assert_eq!(verdict(&two_medium, score(&two_medium)), Verdict::Review);
        let same_rule = [
            finding("a", Severity::Medium),
            finding("a", Severity::Medium),
        ];
        assert_eq!(verdict(&same_rule, score(&same_rule)), Verdict::Clean);
        let critical = [finding("a", Severity::Critical)];
        assert_eq!(verdict(&critical, score(&critical)), Verdict::Block);
        let three_high = [
            finding("a", Severity::High),
            finding("b", Severity::High),
            finding("c", Severity::High),
        ];
        assert_eq!(verdict(&three_high, score(&three_high)), Verdict::Block);
        assert_eq!(score(&[]), 0);
    }

    #[test]
    fn bounded_and_monotone() {
        let mut findings = Vec::new();
        let mut last = 0;
        for _ in 0..200 {
            findings.push(finding("x", Severity::Critical));
            let s = score(&findings);
            assert!(s >= last && s <= 100);
            last = s;
        }
        assert_eq!(last, 100);
    }
}
