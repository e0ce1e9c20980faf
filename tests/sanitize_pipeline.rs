//! The pipeline end to end: trust, tokenization, redaction, output validation, JSON, host
//! recognizers and the audit record, with attacks on each guarantee.

use std::ops::Range;

use serde_json::json;
use skills::security::{
    Classifier, Clearance, Context, DataClass, DataType, Detector, Error, OutputIssue, Recognizer,
    RegulatedApproval, Sanitizer, SecurityFlag, SourceRules, TrustLevel,
};

const RECORD: &str = "Customer: Ana Lima\nEmail: ana@example.org\nPhone: 702.289.9674\nSSN: 224-30-8280\nDOB: 1961-11-20\nCard 5342-3511-6155-9409, balance $1,204.50\nDiagnosis: asthma.";

fn public_sanitizer() -> Sanitizer {
    let mut rules = SourceRules::default();
    rules.set_default_class(DataClass::Public);
    Sanitizer::new(Classifier::new().with_sources(rules))
}

#[test]
fn each_trust_level_sees_exactly_its_classes() {
    let s = public_sanitizer();
    let cases = [
        (
            TrustLevel::Community,
            "Customer: Ana Lima\nEmail: [EMAIL_001]\nPhone: [PHONE_001]\nSSN: [REDACTED: SSN]\nDOB: [DATE_OF_BIRTH_001]\nCard [CREDIT_CARD_001], balance [MONEY_001]\nDiagnosis: [HEALTH_001].",
        ),
        (
            TrustLevel::Verified,
            "Customer: Ana Lima\nEmail: [EMAIL_001]\nPhone: [PHONE_001]\nSSN: [REDACTED: SSN]\nDOB: [DATE_OF_BIRTH_001]\nCard [CREDIT_CARD_001], balance [MONEY_001]\nDiagnosis: [HEALTH_001].",
        ),
        (
            TrustLevel::Core,
            "Customer: Ana Lima\nEmail: ana@example.org\nPhone: 702.289.9674\nSSN: [REDACTED: SSN]\nDOB: [DATE_OF_BIRTH_001]\nCard [CREDIT_CARD_001], balance $1,204.50\nDiagnosis: [HEALTH_001].",
        ),
    ];
    for (level, expected) in cases {
        let mut run = s.begin("e", level, None).unwrap();
        assert_eq!(
            run.sanitize_text(RECORD, &Context::default()).text,
            expected,
            "{level}"
        );
    }
    let approval = RegulatedApproval::new("e", "dr.ortiz");
    let mut run = s.begin("e", TrustLevel::Core, Some(&approval)).unwrap();
    assert_eq!(run.sanitize_text(RECORD, &Context::default()).text, RECORD);
    assert!(
        run.audit()
            .security_flags
            .contains(&SecurityFlag::RegulatedApproved {
                approved_by: "dr.ortiz".into()
            })
    );
}

#[test]
fn default_sources_are_internal_so_community_skills_get_one_token() {
    let s = Sanitizer::default();
    let mut run = s.begin("e", TrustLevel::Community, None).unwrap();
    let out = run.sanitize_text(RECORD, &Context::default());
    assert_eq!(out.text, "[GENERAL_001]");
    // Restoring for a recipient cleared for internal data only gives back the inner
    // tokens, never the SSN (redacted before the whole item was tokenized).
    let back = run
        .validate_output("[GENERAL_001]", Clearance::up_to(DataClass::Internal))
        .unwrap();
    assert!(back.text.contains("[EMAIL_001]") && back.text.contains("[REDACTED: SSN]"));
    let all = run
        .validate_output("[GENERAL_001]", Clearance::ALL)
        .unwrap();
    assert!(all.text.contains("ana@example.org") && !all.text.contains("224-30-8280"));
}

#[test]
fn crm_deal_sources_are_confidential() {
    let s = Sanitizer::default();
    let mut run = s.begin("e", TrustLevel::Verified, None).unwrap();
    let out = run.sanitize_text("Acme renewal, stage 3", &Context::source("crm_deal"));
    assert_eq!(out.text, "[DEAL_INFO_001]");
    assert_eq!(out.classified.source, "crm");
}

#[test]
fn same_value_same_token_within_an_execution_only() {
    let s = public_sanitizer();
    let mut a = s.begin("a", TrustLevel::Community, None).unwrap();
    let t1 = a
        .sanitize_text("x ana@example.org", &Context::default())
        .text;
    let t2 = a
        .sanitize_text("y ana@example.org z bo@example.org", &Context::default())
        .text;
    assert_eq!(t1, "x [EMAIL_001]");
    assert_eq!(t2, "y [EMAIL_001] z [EMAIL_002]");
    let mut b = s.begin("b", TrustLevel::Community, None).unwrap();
    // Another execution cannot restore a's tokens: they are unknown there.
    let err = b.validate_output(&t2, Clearance::ALL).unwrap_err();
    assert!(
        matches!(err, Error::OutputBlocked { ref issues } if issues.iter().all(|i| matches!(i, OutputIssue::UnknownToken { .. })))
    );
}

#[test]
fn leaks_block_and_name_types_and_positions_only() {
    let s = public_sanitizer();
    let mut run = s.begin("e", TrustLevel::Community, None).unwrap();
    let _ = run.sanitize_text(RECORD, &Context::default());
    // The date has no birth context here: only the vault knows it was hidden.
    let output = "Summary: Ana (ana@example.org), date 1961-11-20; ref [EMAIL_042].";
    let err = run.validate_output(output, Clearance::ALL).unwrap_err();
    let Error::OutputBlocked { issues } = &err else {
        panic!("{err}")
    };
    let shown = format!(
        "{err} | {err:?} | {}",
        serde_json::to_string(issues).unwrap()
    );
    for secret in ["ana@example.org", "1961-11-20"] {
        assert!(!shown.contains(secret), "{shown}");
    }
    assert_eq!(
        issues.iter().map(ToString::to_string).collect::<Vec<_>>(),
        [
            "raw EMAIL (confidential) at bytes 14..29",
            "hidden DATE_OF_BIRTH value at bytes 37..47",
            "unknown token [EMAIL_042] at bytes 53..64",
        ]
    );
    let audit = run.audit();
    assert!(audit.security_flags.iter().any(|f| matches!(
        f,
        SecurityFlag::OutputBlocked {
            raw_values: 1,
            hidden_values: 1,
            unknown_tokens: 1
        }
    )));
    assert!(
        !serde_json::to_string(&audit)
            .unwrap()
            .contains("ana@example.org")
    );
}

#[test]
fn restore_only_what_the_recipient_may_see() {
    let s = public_sanitizer();
    let mut run = s.begin("e", TrustLevel::Community, None).unwrap();
    let input = run.sanitize_text(RECORD, &Context::default()).text;
    let reply = input.replace("Customer", "Client");
    let confidential = run
        .validate_output(&reply, Clearance::up_to(DataClass::Confidential))
        .unwrap();
    assert!(
        confidential.text.contains("ana@example.org") && confidential.text.contains("702.289.9674")
    );
    assert!(
        confidential.text.contains("[DATE_OF_BIRTH_001]")
            && confidential.text.contains("[MONEY_001]")
    );
    assert!(
        confidential
            .withheld
            .contains(&"[CREDIT_CARD_001]".to_owned())
    );
    let everyone = run.validate_output(&reply, Clearance::ALL).unwrap();
    assert_eq!(
        everyone.text,
        RECORD
            .replace("Customer", "Client")
            .replace("224-30-8280", "[REDACTED: SSN]")
    );
}

#[test]
fn forged_token_shapes_in_input_are_never_issued() {
    let s = public_sanitizer();
    let mut run = s.begin("e", TrustLevel::Community, None).unwrap();
    let out = run.sanitize_text("note [EMAIL_001] and ana@example.org", &Context::default());
    assert_eq!(out.text, "note [EMAIL_001] and [EMAIL_002]");
    let back = run.validate_output(&out.text, Clearance::ALL).unwrap();
    assert_eq!(back.text, "note [EMAIL_001] and ana@example.org");
    assert!(
        run.audit()
            .security_flags
            .contains(&SecurityFlag::TokenShapedInput { count: 1 })
    );
}

#[test]
fn json_fields_are_sanitized_by_path_with_key_context() {
    let s = public_sanitizer();
    let mut run = s.begin("e", TrustLevel::Community, None).unwrap();
    let doc = json!({"customer": {"name": "Beth", "ssn": "647 36 9554", "dob": "May 04, 1976",
        "email": "beth@example.net", "points": 85356, "cards": ["4539 1488 0343 6467"], "vip": true},
        "ana@example.org": "key holds an address"});
    let out = run.sanitize_json(&doc, &Context::default());
    assert_eq!(out.classification, DataClass::Regulated);
    assert_eq!(
        out.value,
        json!({"customer": {"name": "Beth", "ssn": "[REDACTED: SSN]", "dob": "[DATE_OF_BIRTH_001]",
            "email": "[EMAIL_002]", "points": 85356, "cards": ["[CREDIT_CARD_001]"], "vip": true},
            // Keys are visited in the map's order: "ana@..." sorts before "customer".
            "[EMAIL_001]": "key holds an address"})
    );
    let c = Classifier::new().classify_json(&doc, &Context::default());
    let ssn = c.fields.iter().find(|f| f.path == "/customer/ssn").unwrap();
    assert_eq!(ssn.classified.data_type, DataType::SSN);
    assert_eq!(c.overall.classification, DataClass::Regulated);
}

struct Names;
impl Recognizer for Names {
    fn name(&self) -> &str {
        "names"
    }
    fn data_type(&self) -> DataType {
        DataType::new("PERSON").unwrap_or(DataType::GENERAL)
    }
    fn class(&self) -> DataClass {
        DataClass::Confidential
    }
    fn find(&self, text: &str, spans: &mut Vec<Range<usize>>) {
        for name in ["Ana Lima", "Bo Berg"] {
            spans.extend(text.match_indices(name).map(|(i, n)| i..i + n.len()));
        }
        // A buggy model: out of bounds and inside a character.
        spans.push(0..usize::MAX);
        if let Some(i) = text.find('é') {
            spans.push(i + 1..i + 2);
        }
    }
}

#[test]
fn host_recognizers_share_the_pass_and_the_vault() {
    let mut rules = SourceRules::default();
    rules.set_default_class(DataClass::Public);
    let s = Sanitizer::new(
        Classifier::new()
            .with_sources(rules)
            .with_detector(Detector::new().with_recognizer(Names)),
    );
    let mut run = s.begin("e", TrustLevel::Community, None).unwrap();
    let out = run.sanitize_text(
        "Ana Lima (ana@example.org) met Bo Berg, then Ana Lima again. café",
        &Context::default(),
    );
    assert_eq!(
        out.text,
        "[PERSON_001] ([EMAIL_001]) met [PERSON_002], then [PERSON_001] again. café"
    );
    assert!(
        run.audit()
            .security_flags
            .contains(&SecurityFlag::HostRecognizerSpansRejected { count: 2 })
    );
    assert!(
        run.validate_output("Ana Lima says hi", Clearance::ALL)
            .is_err()
    );
}

#[test]
fn trusted_sources_decide_verified() {
    use skills::security::TrustedSources;
    let t = TrustedSources::default();
    assert_eq!(
        t.level_for("api.github.com/supabase/agent-skills/postgres"),
        TrustLevel::Verified
    );
    assert_eq!(
        t.level_for("api.github.com/supabase/agent-skills-fork/postgres"),
        TrustLevel::Community
    );
    // The same repository from another origin (a mirror) is not the trusted one.
    assert_eq!(
        t.level_for("mirror.example/supabase/agent-skills/postgres"),
        TrustLevel::Community
    );
    assert_eq!(
        t.level_for("api.github.com/expo/skills/../../evil/x"),
        TrustLevel::Community
    );
    let mine = TrustedSources::new(["acme/skills"]);
    assert_eq!(mine.level_for("acme/skills/deploy"), TrustLevel::Verified);
}

#[test]
fn approval_is_per_execution() {
    let s = Sanitizer::default();
    let approval = RegulatedApproval::new("run-1", "alice");
    assert!(matches!(
        s.begin("run-2", TrustLevel::Core, Some(&approval)),
        Err(Error::ApprovalMismatch { .. })
    ));
    let run = s
        .begin("run-1", TrustLevel::Community, Some(&approval))
        .unwrap();
    assert!(!run.clearance().allows(DataClass::Regulated));
    assert!(
        run.audit()
            .security_flags
            .contains(&SecurityFlag::ApprovalNotApplicable {
                trust: TrustLevel::Community
            })
    );
}
