//! Crash safety and sharing a file between processes.
//!
//! The child processes are this test binary run again (`current_exe`) with
//! `--exact child_process` and a role in the environment; `child_process` is a no-op in a
//! normal run. Nothing here asserts on time: the kill lands where it lands, and the
//! invariants must hold wherever that is.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use futures::executor::block_on;
use sha2::{Digest, Sha256};
use skills_store_sqlite::{SqliteOptions, SqliteStore, Synchronous};
use skills_store_traits::audit::{AuditRecord, AuditStore};
use skills_store_traits::memory::MemoryStore;
use skills_store_traits::trust::{TrustChange, TrustStore};
use skills_store_traits::{Error, NewSkill, SkillFilter, SkillStore, TenantId, UserScope};

const ROLE: &str = "SKILLS_SQLITE_TEST_ROLE";
const DB: &str = "SKILLS_SQLITE_TEST_DB";
const GENESIS: &str = "genesis";
/// Files per skill in the crash test, each just under the 100 KiB limit: a skill is close
/// to the 1 MiB per-skill limit, so its transaction writes hundreds of pages.
const CRASH_FILES: usize = 9;

/// The stand-in hash chain (the real one belongs to `skills-security`): `entry_hash` is the
/// SHA-256 of the record's JSON with `entry_hash` empty, and `previous_hash` names the prior
/// entry's `entry_hash`.
fn seal(mut record: AuditRecord, previous: &str) -> AuditRecord {
    record.previous_hash = previous.to_owned();
    record.entry_hash = String::new();
    record.entry_hash = hex::encode(Sha256::digest(serde_json::to_vec(&record).unwrap()));
    record
}

/// Walks the chain from its first entry: contiguous sequences, each `previous_hash` the prior
/// `entry_hash`, each `entry_hash` recomputed. Returns the records.
fn verify_chain(store: &SqliteStore, tenant: &TenantId, chain: &str) -> Vec<AuditRecord> {
    let entries = block_on(store.read_range(tenant, chain, 1, usize::MAX)).unwrap();
    let mut previous = GENESIS.to_owned();
    for (index, entry) in entries.iter().enumerate() {
        assert_eq!(entry.sequence, index as u64 + 1, "sequences are contiguous");
        assert_eq!(entry.record.previous_hash, previous, "the chain links up");
        let resealed = seal(entry.record.clone(), &previous);
        assert_eq!(
            resealed.entry_hash, entry.record.entry_hash,
            "entry {index} is intact"
        );
        previous = entry.record.entry_hash.clone();
    }
    entries.into_iter().map(|e| e.record).collect()
}

/// Appends `record` to `chain`, retrying on the head another writer moved.
async fn append_chained(store: &SqliteStore, tenant: &TenantId, chain: &str, record: AuditRecord) {
    loop {
        let head = store
            .head(tenant, chain)
            .await
            .unwrap()
            .map(|h| h.entry_hash);
        let sealed = seal(record.clone(), head.as_deref().unwrap_or(GENESIS));
        match store.append(tenant, chain, sealed, head.as_deref()).await {
            Ok(_) => return,
            Err(Error::Stale { .. }) => continue,
            Err(other) => panic!("append failed: {other}"),
        }
    }
}

fn crash_file(n: usize, i: usize) -> String {
    let line = format!("skill {n} file {i}: the same line again and again\n");
    line.repeat(100 * 1024 / line.len())
}

fn crash_skill(n: usize) -> NewSkill {
    let slug = format!("crash-{n:05}");
    (0..CRASH_FILES).fold(
        NewSkill::new(&slug, &slug, format!("# {slug}\n")),
        |skill, i| skill.with_file(format!("files/{i}.md"), crash_file(n, i)),
    )
}

/// The message of a line a child said with [`say`] (libtest may print its own text before
/// it on the same line).
fn said(line: std::io::Result<String>) -> Option<String> {
    let line = line.unwrap();
    line.split_once("@@").map(|(_, message)| message.to_owned())
}

fn spawn(role: &str, db: &Path) -> Child {
    Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "child_process",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(ROLE, role)
        .env(DB, db)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap()
}

/// Not a test of its own: the body of the child processes the tests below start. In a
/// normal run (no role in the environment) it returns at once.
#[test]
fn child_process() {
    let (Ok(role), Ok(db)) = (std::env::var(ROLE), std::env::var(DB)) else {
        return;
    };
    match role.as_str() {
        "crash-writer" => crash_writer(Path::new(&db)),
        writer => shared_writer(Path::new(&db), writer),
    }
}

fn say(line: &str) {
    let mut out = std::io::stdout().lock();
    writeln!(out, "@@{line}").unwrap();
    out.flush().unwrap();
}

/// Writes large skills, each followed by an audit record naming it, until killed.
fn crash_writer(db: &Path) {
    block_on(async {
        let store = SqliteStore::open(db).await.unwrap();
        let tenant = TenantId::new("crash");
        let skills = store
            .list_skills(&tenant, &SkillFilter::default())
            .await
            .unwrap();
        // The last writer may have died between a skill and its audit record: record it
        // first, as a real writer reconciling its trail would.
        if let Some(last) = skills.last() {
            let head = store.head(&tenant, "writer").await.unwrap();
            let recorded = match head {
                Some(head) => store.get_entry(&tenant, &head.record_id).await.unwrap(),
                None => None,
            };
            if recorded.map(|entry| entry.record.skill_id) != Some(last.id.clone()) {
                let record = AuditRecord::new("writer", &last.id, &last.slug, "core", "in", true);
                append_chained(&store, &tenant, "writer", record).await;
            }
        }
        let mut n = skills.len();
        loop {
            say(&format!("begin {n}"));
            let started = Instant::now();
            let skill = store.create_skill(&tenant, crash_skill(n)).await.unwrap();
            let record = AuditRecord::new("writer", &skill.id, &skill.slug, "core", "in", true);
            append_chained(&store, &tenant, "writer", record).await;
            say(&format!("done {n} {}", started.elapsed().as_micros()));
            n += 1;
        }
    })
}

/// The write-ahead log a killed writer left: its bytes, where each commit frame of the
/// current generation ends, and how many frames follow the last commit (a transaction cut
/// short, which recovery discards).
struct Wal {
    bytes: Vec<u8>,
    frame: usize,
    commit_ends: Vec<usize>,
    unfinished: usize,
}

/// SQLite's default: a commit that leaves this many frames in the log checkpoints it into
/// the database file.
const AUTOCHECKPOINT_FRAMES: usize = 1000;

fn read_wal(db: &Path) -> Option<Wal> {
    let bytes = std::fs::read(db.with_extension("sqlite3-wal")).ok()?;
    let word = |at: usize| {
        bytes
            .get(at..at + 4)
            .map(|b| u32::from_be_bytes([b[0], b[1], b[2], b[3]]))
    };
    let (page_size, salt1, salt2) = (word(8)?, word(16)?, word(20)?);
    let frame = 24 + page_size as usize;
    let (mut commit_ends, mut unfinished, mut at) = (Vec::new(), 0, 32);
    // Frames of the current generation carry the header's salts; older ones do not.
    while at + frame <= bytes.len() && word(at + 8) == Some(salt1) && word(at + 12) == Some(salt2) {
        at += frame;
        if word(at - frame + 4) == Some(0) {
            unfinished += 1;
        } else {
            commit_ends.push(at);
            unfinished = 0;
        }
    }
    Some(Wal {
        bytes,
        frame,
        commit_ends,
        unfinished,
    })
}

/// Every stored skill is whole (all its files, each byte for byte), every audit record names
/// a stored skill, the chain verifies and SQLite finds the file sound.
fn verify_crash_db(db: &Path) -> (usize, usize) {
    let store = block_on(SqliteStore::open(db)).unwrap();
    let tenant = TenantId::new("crash");
    let skills = block_on(store.list_skills(&tenant, &SkillFilter::default())).unwrap();
    for (n, skill) in skills.iter().enumerate() {
        assert_eq!(
            skill.slug,
            format!("crash-{n:05}"),
            "skills are stored in order"
        );
        let files = block_on(store.list_skill_files(&tenant, &skill.id)).unwrap();
        assert_eq!(files.len(), CRASH_FILES, "{} is whole", skill.slug);
        for file in &files {
            let i: usize = file.relative_path["files/".len()..file.relative_path.len() - 3]
                .parse()
                .unwrap();
            assert_eq!(
                file.content,
                crash_file(n, i),
                "{} is intact",
                file.relative_path
            );
        }
    }
    let records = verify_chain(&store, &tenant, "writer");
    assert!(
        records.len() == skills.len() || records.len() + 1 == skills.len(),
        "one audit record per skill, but the last may be missing ({} records, {} skills)",
        records.len(),
        skills.len()
    );
    for (record, skill) in records.iter().zip(&skills) {
        assert_eq!(record.skill_id, skill.id);
    }
    assert_eq!(
        block_on(store.integrity_check()).unwrap(),
        Vec::<String>::new()
    );
    (skills.len(), records.len())
}

/// A writer process is killed (SIGKILL) in the middle of writing a multi-file skill, four
/// times over; each time the reopened file holds only whole skills and a sound audit chain,
/// and the next writer carries on where the last committed one stopped.
#[test]
fn a_writer_killed_mid_skill_leaves_no_partial_skill_and_a_chain_that_verifies() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("crash.sqlite3");
    let mut stored = 0;
    // Each round kills at another point of the write: a quarter, half, three quarters and
    // nine tenths of the median time a skill and its audit record take.
    for (round, fraction) in [0.25, 0.5, 0.75, 0.9].into_iter().enumerate() {
        let mut child = spawn("crash-writer", &db);
        let messages = BufReader::new(child.stdout.take().unwrap())
            .lines()
            .filter_map(said);
        let mut took = Vec::new();
        let mut killed_in = None;
        for message in messages {
            if let Some(done) = message.strip_prefix("done ") {
                took.push(done.split(' ').nth(1).unwrap().parse::<u64>().unwrap());
            } else if let Some(n) = message.strip_prefix("begin ")
                && took.len() >= 3
            {
                took.sort_unstable();
                let median = took[took.len() / 2] as f64;
                std::thread::sleep(Duration::from_micros((median * fraction) as u64));
                child.kill().unwrap();
                killed_in = Some(n.to_owned());
                break;
            }
        }
        let status = child.wait().unwrap();
        assert!(
            killed_in.is_some(),
            "the writer stopped on its own: {status}"
        );
        let wal = read_wal(&db);
        // A copy whose log loses the second half of its last commit: what a kill while
        // SQLite wrote that commit's frames leaves behind, made on purpose. Only while no
        // checkpoint can have copied that commit into the database file already.
        let torn = dir.path().join(format!("torn-{round}.sqlite3"));
        let cut = wal.as_ref().and_then(|wal| {
            let last = *wal.commit_ends.last()?;
            if (last - 32) / wal.frame >= AUTOCHECKPOINT_FRAMES {
                return None;
            }
            let before = wal.commit_ends.iter().rev().nth(1).copied().unwrap_or(32);
            std::fs::copy(&db, &torn).unwrap();
            let wal_path = torn.with_extension("sqlite3-wal");
            std::fs::write(wal_path, &wal.bytes[..before + (last - before) / 2]).unwrap();
            Some(())
        });
        let (skills, records) = verify_crash_db(&db);
        eprintln!(
            "round {round}: killed {fraction} into writing skill {}; the log ended in {} \
             frames of an unfinished transaction; reopened: {skills} whole skills, {records} \
             audit records, chain verified",
            killed_in.unwrap_or_default(),
            wal.as_ref().map_or(0, |wal| wal.unfinished),
        );
        assert!(
            skills >= stored + 3,
            "each writer's committed skills survive"
        );
        stored = skills;
        if cut.is_some() {
            let (torn_skills, torn_records) = verify_crash_db(&torn);
            assert_eq!(
                torn_skills + torn_records + 1,
                skills + records,
                "a torn last commit loses that transaction and nothing else"
            );
            eprintln!("round {round}: a copy with its last commit torn in half lost only that");
        }
    }
}

/// One of two writers sharing a file: skills of its own, and contended writes on the same
/// trust record, procedure and audit chain as the other writer.
fn shared_writer(db: &Path, name: &str) {
    let count: usize = std::env::var("SKILLS_SQLITE_TEST_COUNT")
        .unwrap()
        .parse()
        .unwrap();
    block_on(async {
        let options = SqliteOptions::default().synchronous(Synchronous::Normal);
        let store = SqliteStore::open_with(db, options).await.unwrap();
        say("ready");
        let mut go = String::new();
        std::io::stdin().read_line(&mut go).unwrap();
        let tenant = TenantId::new("shared");
        let alice = UserScope::new("shared", "alice");
        let sequence = vec!["pdf".to_owned(), "summarize".to_owned()];
        for i in 0..count {
            let slug = format!("{name}-{i:04}");
            let skill = NewSkill::new(&slug, &slug, format!("# {slug}\n"))
                .with_file("a.md", format!("{slug} a"))
                .with_file("b.md", format!("{slug} b"));
            let skill = store.create_skill(&tenant, skill).await.unwrap();
            store
                .apply(&alice, "pdf", TrustChange::Success)
                .await
                .unwrap();
            store
                .record_successful_procedure(&alice, "report", &sequence, serde_json::json!(i))
                .await
                .unwrap();
            let record = AuditRecord::new(name, &skill.id, &slug, "core", "in", true);
            append_chained(&store, &tenant, "shared", record).await;
        }
        say("finished");
    })
}

/// Two processes write to one file at the same time (after migrating it concurrently from
/// nothing): every write of both lands, contended counters count both, the shared audit
/// chain never forks, and SQLite finds the file sound.
#[test]
fn two_processes_share_one_file_without_losing_writes() {
    const EACH: usize = 60;
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("shared.sqlite3");
    let mut children: Vec<Child> = ["left", "right"]
        .iter()
        .map(|name| {
            let mut command = Command::new(std::env::current_exe().unwrap());
            command
                .args([
                    "--exact",
                    "child_process",
                    "--nocapture",
                    "--test-threads=1",
                ])
                .env(ROLE, name)
                .env(DB, &db)
                .env("SKILLS_SQLITE_TEST_COUNT", EACH.to_string())
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(Stdio::inherit());
            command.spawn().unwrap()
        })
        .collect();
    let mut outputs: Vec<_> = children
        .iter_mut()
        .map(|child| {
            BufReader::new(child.stdout.take().unwrap())
                .lines()
                .filter_map(said)
        })
        .collect();
    for output in &mut outputs {
        assert!(output.any(|message| message == "ready"));
    }
    for child in &mut children {
        child.stdin.as_mut().unwrap().write_all(b"go\n").unwrap();
    }
    for (child, output) in children.iter_mut().zip(&mut outputs) {
        assert!(output.any(|message| message == "finished"));
        assert!(child.wait().unwrap().success());
    }

    let store = block_on(SqliteStore::open(&db)).unwrap();
    let tenant = TenantId::new("shared");
    let alice = UserScope::new("shared", "alice");
    let skills = block_on(store.list_skills(&tenant, &SkillFilter::default())).unwrap();
    assert_eq!(skills.len(), 2 * EACH, "every skill of both writers");
    for skill in &skills {
        let files = block_on(store.list_skill_files(&tenant, &skill.id)).unwrap();
        assert_eq!(files.len(), 2);
    }
    let trust = block_on(store.get(&alice, "pdf")).unwrap().unwrap();
    assert_eq!(
        trust.successful_executions,
        2 * EACH as u64,
        "no lost increment"
    );
    let procedures = block_on(store.relevant_procedures(&alice, "report")).unwrap();
    assert_eq!(procedures.len(), 1);
    assert_eq!(
        procedures[0].success_count,
        2 * EACH as u64,
        "no lost upsert"
    );
    let records = verify_chain(&store, &tenant, "shared");
    assert_eq!(records.len(), 2 * EACH, "one chain, every append of both");
    let writers: std::collections::BTreeSet<_> =
        records.iter().map(|r| r.user_id.to_string()).collect();
    assert_eq!(writers.len(), 2);
    assert_eq!(
        block_on(store.integrity_check()).unwrap(),
        Vec::<String>::new()
    );
}
