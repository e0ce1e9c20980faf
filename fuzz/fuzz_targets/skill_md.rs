//! Arbitrary bytes into `SkillMd::parse` under both profiles.
//!
//! Input layout: byte 0 selects the directory (odd: `Some("x")`, even: `None`); the rest is
//! the SKILL.md file. See `skills_core_fuzz::check_skill_md` for the invariants.
#![no_main]

use libfuzzer_sys::fuzz_target;
use skills_core_fuzz::{MD_DIRECTORY, check_skill_md, split_selector};

fuzz_target!(|data: &[u8]| {
    let (directory, bytes) = split_selector(data, MD_DIRECTORY);
    check_skill_md(bytes, directory);
});
