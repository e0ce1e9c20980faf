#![no_main]
// Placeholder: the sanitizer fuzz target lands with the sanitization pipeline.
libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let _ = data;
});
