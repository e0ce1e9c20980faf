//! Benchmarks the static skill scanner on the real-skills corpus: the 36 published skills
//! of `real-skills/` in the folder `SKILLS_CORPUS_DIR` names (`examples/skills` without it).
//!
//! Groups (throughput in skills per second):
//!
//! * `scan_dir/real_skills`: [`Scanner::scan_dir`] on every skill directory: the bounded,
//!   link-refusing read of each file plus the scan.
//! * `scan_files/real_skills`: every package read into memory first, then
//!   [`Scanner::scan_files`] on each: the scan alone.
//!
//! `cargo bench --bench scan`.

// Bench code over fixed inputs: a missing corpus should abort loudly.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::time::Duration;

use criterion::{Criterion, Throughput};
use skills::security::scan::{ScanFile, Scanner};

/// The published skills where `SKILLS_CORPUS_DIR` names them, else `examples/skills`.
fn corpus_root() -> PathBuf {
    skills_testenv::corpus_if_set()
        .map(|corpus| corpus.real_skills())
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/skills"))
}

/// Every directory below `root` holding a SKILL.md (not descending into skills), sorted.
fn skill_dirs(root: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        if dir.join("SKILL.md").is_file() {
            out.push(dir);
            continue;
        }
        for entry in std::fs::read_dir(&dir).expect("corpus dir") {
            let path = entry.expect("corpus entry").path();
            if path.is_dir() {
                stack.push(path);
            }
        }
    }
    out.sort();
    out
}

/// A package in memory: (relative path, bytes) per file.
type Package = Vec<(String, Vec<u8>)>;

/// A skill's files, read the plain way.
fn read_package(dir: &Path) -> Package {
    let mut files = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).expect("skill dir") {
            let path = entry.expect("skill entry").path();
            if path.is_dir() {
                stack.push(path);
            } else if path.is_file() {
                let rel = path
                    .strip_prefix(dir)
                    .expect("inside")
                    .to_string_lossy()
                    .into_owned();
                files.push((rel, std::fs::read(&path).expect("read")));
            }
        }
    }
    files.sort();
    files
}

fn benches(c: &mut Criterion) {
    let root = corpus_root();
    let dirs = skill_dirs(&root);
    let skills = u64::try_from(dirs.len()).expect("count");
    let scanner = Scanner::new();
    eprintln!("scan bench: {} skills under {}", dirs.len(), root.display());

    {
        let mut group = c.benchmark_group("scan_dir");
        group.throughput(Throughput::Elements(skills));
        group.bench_function("real_skills", |b| {
            b.iter(|| {
                for dir in &dirs {
                    black_box(scanner.scan_dir(black_box(dir)).expect("scan"));
                }
            });
        });
        group.finish();
    }

    {
        let packages: Vec<(String, Package)> = dirs
            .iter()
            .map(|d| {
                let name = d.file_name().unwrap().to_string_lossy().into_owned();
                (name, read_package(d))
            })
            .collect();
        let mut group = c.benchmark_group("scan_files");
        group.throughput(Throughput::Elements(skills));
        group.bench_function("real_skills", |b| {
            b.iter(|| {
                for (name, files) in &packages {
                    let files: Vec<ScanFile<'_>> = files
                        .iter()
                        .map(|(p, bytes)| ScanFile::new(p, bytes))
                        .collect();
                    black_box(scanner.scan_files(name, black_box(&files)));
                }
            });
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
