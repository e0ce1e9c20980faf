//! A recorded history of 20 runs with known patterns (threshold 3), shared by the learning
//! tests. The answers are worked out by hand in the comments, not computed.
#![allow(dead_code)]

use skills_store_traits::learning::{ExecutedStep, NewExecutedSequence};

/// `skill`, succeeded, one attempt.
pub fn ok(skill: &str) -> ExecutedStep {
    ExecutedStep::new(skill, true, 1, 100)
}

/// `skill`, failed after one attempt.
pub fn failed(skill: &str) -> ExecutedStep {
    ExecutedStep::new(skill, false, 1, 100)
}

/// `skill` with `attempts` attempts and the given outcome.
pub fn tried(skill: &str, attempts: u32, success: bool) -> ExecutedStep {
    ExecutedStep::new(skill, success, attempts, 100 * u64::from(attempts))
}

/// A run of `task_type`; it succeeded when every skill's last step did (as the engine
/// records it).
pub fn run(task_type: &str, steps: Vec<ExecutedStep>) -> NewExecutedSequence {
    let success = skills_orchestrate::learn::final_outcome(&steps);
    NewExecutedSequence::new(task_type, steps, success)
}

/// The 20 runs, numbered as in the comments.
///
/// Expected at threshold 3:
/// * sequence `pdf-extract, summarize`: runs 5, 6, 8, 9, 10, 14 → 6, all 6 successful
///   (run 9 failed, but in `translate`, outside the sequence; run 10's failed
///   `pdf-extract` was re-run at once, which merges into one successful step);
///   task types digest, report.
/// * sequence `crm-lookup, enrich`: runs 1, 2, 3, 4, 18 → 5, all successful; follow-up,
///   misc. Kept although the three-step sequence contains it: run 18 has it alone.
/// * sequence `crm-lookup, enrich, draft-email`: runs 1–4 → 4, 3 successful (run 2's
///   `draft-email` failed); follow-up. `enrich, draft-email` occurs only inside it and is
///   dropped.
/// * retry `web-fetch`: runs 6 (2 attempts), 11 (3), 12 (2, still failed), 13 (failed,
///   later succeeded) → 4, 3 successful; report, research.
/// * composite follow-up {crm-lookup, draft-email, enrich}: runs 1, 2, 4 → 3, 2 successful
///   (run 3 also used `send`: another set).
/// * composite report {pdf-extract, summarize}: runs 5, 7 (reversed order), 8 → 3, 3.
///
/// Below threshold (found at 2): retry `pdf-extract` (runs 10, 14: 2 successful), sequence
/// `web-fetch, notes` (12, 13: 0 successful, `web-fetch` failed in both), composite digest
/// {pdf-extract, summarize} (10, 14: 2 successful, run 10's failure was made good), composite
/// research {notes, web-fetch} (12, 13: 1 successful, run 12's `web-fetch` never succeeded).
///
/// Noise (runs 15–20): `calendar` in four runs and `weather` in three, never in the same
/// order or set twice, so they make no pattern even at threshold 2.
pub fn history() -> Vec<NewExecutedSequence> {
    vec![
        // 1–4: follow-ups.
        run(
            "follow-up",
            vec![ok("crm-lookup"), ok("enrich"), ok("draft-email")],
        ),
        run(
            "follow-up",
            vec![ok("crm-lookup"), ok("enrich"), failed("draft-email")],
        ),
        run(
            "follow-up",
            vec![
                ok("crm-lookup"),
                ok("enrich"),
                ok("draft-email"),
                ok("send"),
            ],
        ),
        run(
            "follow-up",
            vec![ok("crm-lookup"), ok("enrich"), ok("draft-email")],
        ),
        // 5–8: reports.
        run("report", vec![ok("pdf-extract"), ok("summarize")]),
        run(
            "report",
            vec![
                tried("web-fetch", 2, true),
                ok("pdf-extract"),
                ok("summarize"),
            ],
        ),
        run("report", vec![ok("summarize"), ok("pdf-extract")]),
        run("report", vec![ok("pdf-extract"), ok("summarize")]),
        // 9–10: digests.
        run(
            "digest",
            vec![ok("pdf-extract"), ok("summarize"), failed("translate")],
        ),
        run(
            "digest",
            vec![failed("pdf-extract"), ok("pdf-extract"), ok("summarize")],
        ),
        // 11–13: research.
        run(
            "research",
            vec![tried("web-fetch", 3, true), ok("summarize")],
        ),
        run("research", vec![tried("web-fetch", 2, false), ok("notes")]),
        run(
            "research",
            vec![failed("web-fetch"), ok("notes"), ok("web-fetch")],
        ),
        // 14: another digest.
        run(
            "digest",
            vec![tried("pdf-extract", 2, true), ok("summarize")],
        ),
        // 15–20: noise.
        run("misc", vec![ok("calendar"), ok("weather")]),
        run("misc", vec![ok("weather"), ok("news")]),
        run("misc", vec![ok("news"), ok("calendar")]),
        run("misc", vec![ok("crm-lookup"), ok("enrich"), ok("notes")]),
        run("adhoc", vec![ok("calendar")]),
        run(
            "adhoc",
            vec![ok("stock-quote"), ok("weather"), ok("calendar")],
        ),
    ]
}
