//! Benchmarks loading and validating the real-skills corpus (`real-skills/` of the folder
//! `SKILLS_CORPUS_DIR` names: 36 skills in 3 collections; without it, the 8 skills of
//! `tests/fixtures/collections`).
//!
//! Groups (each reports throughput in skills per second, `Throughput::Elements` of the skill count):
//!
//! * `parse_validate_in_memory/{spec,lenient}`: every SKILL.md pre-read into memory, then
//!   [`SkillMd::parse`] on each (no I/O). Comparable to the reference validator's
//!   parse + validate step.
//! * `load_skill_dirs/spec`: [`load_skill_dir`] on each skill directory (SKILL.md, every
//!   rule, walking and hashing every supporting file, digests).
//! * `validate_like_reference/spec`: per directory, read SKILL.md from disk and parse it with
//!   the Spec profile: what `skills_ref.validator.validate(dir)` does.
//! * `discover_corpus/lenient`: [`load_path`] on the corpus root (scan plus full load).
//!
//! The Python counterpart lives in `benches/reference/`.

// Bench code over fixed, checked-in inputs: a missing fixture should abort loudly.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::time::Duration;

use criterion::{Criterion, Throughput};
use skills::core::{
    LoadOptions, ParseOptions, Profile, SKILL_MD, SkillMd, load_path, load_skill_dir,
};

/// The corpus root: the published skills where `SKILLS_CORPUS_DIR` names them (third-party
/// skills stay out of the repository), else the collections we wrote.
fn corpus_root() -> PathBuf {
    skills_testenv::corpus_if_set()
        .map(|corpus| corpus.real_skills())
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/collections"))
}

/// Every skill directory in the corpus (`<root>/<collection>/<skill>/SKILL.md`), sorted.
fn skill_dirs(root: &Path) -> Vec<PathBuf> {
    skills_testenv::skill_dirs(root)
}

/// The name of a skill directory (for the name-matches-directory rule).
fn dir_name(dir: &Path) -> String {
    dir.file_name()
        .and_then(|n| n.to_str())
        .expect("utf-8 directory name")
        .to_owned()
}

/// Prints, once, how each workload judges the corpus, so the figures can be read alongside
/// the verdicts (and compared with the reference validator's).
fn print_verdicts(root: &Path, dirs: &[PathBuf]) {
    for profile in [Profile::Spec, Profile::Lenient] {
        let options = ParseOptions::for_profile(profile);
        let mut invalid = Vec::new();
        for dir in dirs {
            let bytes = std::fs::read(dir.join(SKILL_MD)).expect("read SKILL.md");
            let parsed = SkillMd::parse(&bytes, Some(&dir_name(dir)), &options);
            if !parsed.is_valid() {
                let codes: Vec<&str> = parsed
                    .diagnostics
                    .iter()
                    .filter(|d| d.severity == skills::core::Severity::Error)
                    .map(|d| d.code())
                    .collect();
                invalid.push(format!(
                    "{} {codes:?}",
                    dir.strip_prefix(root).unwrap_or(dir).display()
                ));
            }
        }
        eprintln!(
            "verdicts SkillMd::parse/{}: {} valid of {}; invalid: {invalid:?}",
            profile.as_str(),
            dirs.len() - invalid.len(),
            dirs.len()
        );
    }
    let spec = LoadOptions::for_profile(Profile::Spec);
    let valid = dirs
        .iter()
        .filter(|d| load_skill_dir(d, &spec).is_valid())
        .count();
    eprintln!(
        "verdicts load_skill_dir/spec: {valid} valid of {}",
        dirs.len()
    );
    let report = load_path(root, &LoadOptions::for_profile(Profile::Lenient));
    eprintln!(
        "verdicts load_path/lenient: {} reports, {} valid",
        report.reports.len(),
        report.skills().count()
    );
}

fn benches(c: &mut Criterion) {
    let root = corpus_root();
    let dirs = skill_dirs(&root);
    eprintln!(
        "load_corpus: {} skills under {}",
        dirs.len(),
        root.display()
    );
    let skills = u64::try_from(dirs.len()).expect("count fits u64");
    print_verdicts(&root, &dirs);

    // a. Parse + validate from memory.
    let in_memory: Vec<(String, Vec<u8>)> = dirs
        .iter()
        .map(|d| {
            (
                dir_name(d),
                std::fs::read(d.join(SKILL_MD)).expect("read SKILL.md"),
            )
        })
        .collect();
    {
        let mut group = c.benchmark_group("parse_validate_in_memory");
        group.throughput(Throughput::Elements(skills));
        for profile in [Profile::Spec, Profile::Lenient] {
            let options = ParseOptions::for_profile(profile);
            group.bench_function(profile.as_str(), |b| {
                b.iter(|| {
                    for (name, bytes) in &in_memory {
                        black_box(SkillMd::parse(
                            black_box(bytes),
                            Some(name.as_str()),
                            &options,
                        ));
                    }
                });
            });
        }
        group.finish();
    }

    // b. Full load of each skill directory.
    {
        let mut group = c.benchmark_group("load_skill_dirs");
        group.throughput(Throughput::Elements(skills));
        let options = LoadOptions::for_profile(Profile::Spec);
        group.bench_function("spec", |b| {
            b.iter(|| {
                for dir in &dirs {
                    black_box(load_skill_dir(black_box(dir), &options));
                }
            });
        });
        group.finish();
    }

    // c. Read SKILL.md from disk + parse + validate: the reference validator's workload.
    {
        let mut group = c.benchmark_group("validate_like_reference");
        group.throughput(Throughput::Elements(skills));
        let options = ParseOptions::for_profile(Profile::Spec);
        group.bench_function("spec", |b| {
            b.iter(|| {
                for dir in &dirs {
                    let bytes = std::fs::read(black_box(dir).join(SKILL_MD)).expect("read");
                    let name = dir.file_name().and_then(|n| n.to_str());
                    black_box(SkillMd::parse(&bytes, name, &options));
                }
            });
        });
        group.finish();
    }

    // d. Scan the corpus root and load everything.
    {
        let mut group = c.benchmark_group("discover_corpus");
        group.throughput(Throughput::Elements(skills));
        let options = LoadOptions::for_profile(Profile::Lenient);
        group.bench_function("lenient", |b| {
            b.iter(|| black_box(load_path(black_box(&root), &options)));
        });
        group.finish();
    }
}

fn main() {
    let mut criterion = Criterion::default()
        .measurement_time(Duration::from_secs(8))
        .configure_from_args();
    benches(&mut criterion);
    criterion.final_summary();
}
