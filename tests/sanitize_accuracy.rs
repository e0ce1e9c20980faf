//! Accuracy regression on small labelled samples written for this repository, scored the
//! way `score.py` scores overlap matches: `tests/fixtures/pii/sample.jsonl` (our own
//! phrasing, including German and CJK, with decoys) and `sample_forms.jsonl` (the harder
//! forms: birth cues in six languages and table headers, trunk-prefixed and spaced phones,
//! identifier labels, bare SSNs, grouped and prefixed amounts, URL, XML, Basic and prose
//! credentials, `::1` and image tags). Each built-in type must keep an overlap F1 of at
//! least 0.95, and no decoy may be reported.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::BTreeMap;

use serde_json::Value;
use skills::security::Detector;

fn overlaps(a: (usize, usize), b: (usize, usize)) -> bool {
    a.0 < b.1 && b.0 < a.1
}

/// Type -> (gold, gold hit, predicted, predicted hit), and the decoys reported.
type Scores = (BTreeMap<String, [usize; 4]>, Vec<String>);

fn score(name: &str) -> Scores {
    let path = format!("{}/tests/fixtures/pii/{name}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(path).unwrap();
    let detector = Detector::new();
    // type -> (gold, gold hit, predicted, predicted hit)
    let mut stats: BTreeMap<String, [usize; 4]> = BTreeMap::new();
    let mut decoy_hits = Vec::new();
    for line in text.lines() {
        let doc: Value = serde_json::from_str(line).unwrap();
        let body = doc["text"].as_str().unwrap();
        let span = |s: &Value| {
            (
                s["byte_start"].as_u64().unwrap() as usize,
                s["byte_end"].as_u64().unwrap() as usize,
                s["type"].as_str().unwrap().to_owned(),
            )
        };
        let gold: Vec<_> = doc["spans"].as_array().unwrap().iter().map(span).collect();
        let decoys: Vec<_> = doc["decoys"].as_array().unwrap().iter().map(span).collect();
        let found = detector.detect(body);
        let pred: Vec<(usize, usize, String)> = found
            .values()
            .map(|f| (f.start, f.end, f.data_type.to_string()))
            .collect();
        for g in &gold {
            let e = stats.entry(g.2.clone()).or_default();
            e[0] += 1;
            e[1] += usize::from(
                pred.iter()
                    .any(|p| p.2 == g.2 && overlaps((p.0, p.1), (g.0, g.1))),
            );
        }
        for p in &pred {
            let e = stats.entry(p.2.clone()).or_default();
            e[2] += 1;
            e[3] += usize::from(
                gold.iter()
                    .any(|g| p.2 == g.2 && overlaps((p.0, p.1), (g.0, g.1))),
            );
            for d in &decoys {
                if overlaps((p.0, p.1), (d.0, d.1)) {
                    decoy_hits.push(format!(
                        "{} reported on decoy {} {:?}",
                        p.2,
                        d.2,
                        &body[d.0..d.1]
                    ));
                }
            }
        }
    }
    (stats, decoy_hits)
}

fn assert_f1(stats: &BTreeMap<String, [usize; 4]>) {
    for (ty, [gold, gold_hit, pred, pred_hit]) in stats {
        let r = *gold_hit as f64 / *gold as f64;
        let p = if *pred == 0 {
            0.0
        } else {
            *pred_hit as f64 / *pred as f64
        };
        let f1 = if p + r == 0.0 {
            0.0
        } else {
            2.0 * p * r / (p + r)
        };
        assert!(f1 >= 0.95, "{ty}: P {p:.3} R {r:.3} F1 {f1:.3}");
    }
}

#[test]
fn overlap_f1_per_type_on_the_vendored_sample() {
    let (stats, decoy_hits) = score("sample.jsonl");
    assert_eq!(stats.len(), 9, "{stats:?}");
    assert_f1(&stats);
    assert!(decoy_hits.is_empty(), "{decoy_hits:#?}");
}

#[test]
fn overlap_f1_per_type_on_the_harder_forms() {
    let (stats, decoy_hits) = score("sample_forms.jsonl");
    assert_eq!(stats.len(), 6, "{stats:?}");
    assert_f1(&stats);
    assert!(decoy_hits.is_empty(), "{decoy_hits:#?}");
}
