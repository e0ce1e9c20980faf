//! Arbitrary bytes into `SkillManifest::parse` under both profiles.
//!
//! Input layout: byte 0 selects the directory (odd: `Some("web_search")`, even: `None`); the
//! rest is the skill.json file. See `skills_core_fuzz::check_skill_json` for the invariants.
#![no_main]

use libfuzzer_sys::fuzz_target;
use skills_core_fuzz::{JSON_DIRECTORY, check_skill_json, split_selector};

fuzz_target!(|data: &[u8]| {
    let (directory, bytes) = split_selector(data, JSON_DIRECTORY);
    check_skill_json(bytes, directory);
});
