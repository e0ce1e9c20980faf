//! Properties: restore(tokenize(x)) == x for a recipient cleared for everything, and a
//! sanitized text never holds a raw value of a class the skill may not see.

use proptest::prelude::*;
use skills::security::{
    Classifier, Clearance, Context, DataClass, Detector, Sanitizer, SourceRules, TrustLevel,
};

const VALUES: [&str; 14] = [
    "ana@example.org",
    "702.289.9674",
    "+44 20 7946 0667",
    "SSN 224-30-8280",
    "4539 1488 0343 6467",
    "GB82 WEST 1234 5698 7654 32",
    "172.191.37.15",
    "DOB: 1961-11-20",
    "$1,204.50",
    "AKIAOJ3MRDZSY265UITA",
    "Diagnosis: asthma.",
    "revenue grew",
    "Order #646-804-5439",
    "version 5.13.2.232",
];

fn text_strategy() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        3 => proptest::sample::select(VALUES.to_vec()).prop_map(str::to_owned),
        2 => "[a-zA-Z ,.:;\\n]{0,12}",
        1 => "\\PC{0,6}",
        1 => Just("[EMAIL_001]".to_owned()),
    ];
    proptest::collection::vec(piece, 0..12).prop_map(|p| p.join(" "))
}

fn cases() -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(64)
}

fn sanitizer() -> Sanitizer {
    let mut rules = SourceRules::default();
    rules.set_default_class(DataClass::Public);
    Sanitizer::new(Classifier::new().with_sources(rules))
}

proptest! {
    // PROPTEST_CASES raises the count for a longer local run.
    #![proptest_config(ProptestConfig { cases: cases(), ..ProptestConfig::default() })]

    #[test]
    fn restore_inverts_tokenize_for_authorized_recipients(text in text_strategy()) {
        let s = sanitizer();
        let mut run = s.begin("p", TrustLevel::Community, None).unwrap();
        let out = run.sanitize_text(&text, &Context::default());
        // Redaction is not reversible by design; compare with redactions applied.
        let back = run.validate_output(&out.text, Clearance::ALL).unwrap();
        let redactions = out.text.matches("[REDACTED: ").count();
        if redactions == 0 {
            prop_assert_eq!(back.text, text);
        } else {
            prop_assert!(back.text.contains("[REDACTED: "));
        }
    }

    #[test]
    fn sanitized_text_holds_no_raw_value_above_clearance(text in text_strategy(), level in 0usize..4) {
        let trust = [TrustLevel::Core, TrustLevel::Verified, TrustLevel::Community, TrustLevel::User][level];
        let s = sanitizer();
        let mut run = s.begin("p", trust, None).unwrap();
        let clearance = run.clearance();
        let out = run.sanitize_text(&text, &Context::default());
        let detector = Detector::new();
        for f in detector.detect(&out.text).values() {
            prop_assert!(clearance.allows(f.class), "{} left in {:?}", f.data_type, out.text);
        }
        // And every hidden raw value is really gone.
        for f in detector.detect(&text).all() {
            if !clearance.allows(f.class) {
                let raw = &text[f.range()];
                if raw.len() >= 6 {
                    prop_assert!(!out.text.contains(raw), "{:?} survived in {:?}", raw, out.text);
                }
            }
        }
    }

    #[test]
    fn offsets_are_always_char_boundaries(text in "\\PC{0,64}|[0-9 .:@+$€£-]{0,40}") {
        let f = Detector::new().detect(&text);
        for x in f.all() {
            prop_assert!(x.start < x.end && x.end <= text.len());
            prop_assert!(text.is_char_boundary(x.start) && text.is_char_boundary(x.end));
        }
    }
}
