#![no_main]
//! The sanitizer on arbitrary input: no panic anywhere, every finding on character
//! boundaries and in bounds, and a sanitized text that passes its own output validation
//! restores to the input for a recipient cleared for everything (when nothing was redacted).

use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use skills_security::{
    Classifier, Clearance, Context, DataClass, Detector, Sanitizer, SourceRules, TrustLevel,
};

fn detector() -> &'static Detector {
    static D: OnceLock<Detector> = OnceLock::new();
    D.get_or_init(Detector::new)
}

fn sanitizer() -> &'static Sanitizer {
    static S: OnceLock<Sanitizer> = OnceLock::new();
    S.get_or_init(|| {
        let mut rules = SourceRules::default();
        rules.set_default_class(DataClass::Public);
        Sanitizer::new(Classifier::new().with_sources(rules))
    })
}

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let findings = detector().detect(&text);
    for f in findings.all() {
        assert!(f.start < f.end && f.end <= text.len(), "{f:?}");
        assert!(
            text.is_char_boundary(f.start) && text.is_char_boundary(f.end),
            "{f:?}"
        );
    }
    let level = data.first().map_or(0, |b| b % 4);
    let trust = [
        TrustLevel::Core,
        TrustLevel::Verified,
        TrustLevel::Community,
        TrustLevel::User,
    ][usize::from(level)];
    let Ok(mut run) = sanitizer().begin("fuzz", trust, None) else {
        return;
    };
    let out = run.sanitize_text(&text, &Context::default());
    if let Ok(back) = run.validate_output(&out.text, Clearance::ALL) {
        if !out.text.contains("[REDACTED: ") {
            assert_eq!(back.text, text);
        }
    }
});
