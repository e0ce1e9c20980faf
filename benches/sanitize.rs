//! Placeholder: the sanitizer benchmarks land with the sanitization pipeline.
fn main() {}
