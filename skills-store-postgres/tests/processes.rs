//! Many processes on one database: audit writers on one chain, workers on one plan, and a
//! worker killed in the middle of a step.
//!
//! The child processes are this test binary run again (`current_exe`) with
//! `--exact child_process` and a role in the environment; `child_process` is a no-op in a
//! normal run. Every child opens its own store (its own pool) on the parent's schema.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use sha2::{Digest, Sha256};
use skills_store_postgres::PostgresStore;
use skills_store_traits::audit::{AuditQuery, AuditRecord, AuditStore};
use skills_store_traits::plans::{NewPlan, NewStep, PlanStore, RiskLevel, StepStatus, StepUpdate};
use skills_store_traits::{Error, TenantId, UserScope};

const ROLE: &str = "SKILLS_PG_TEST_ROLE";
const SCHEMA: &str = "SKILLS_PG_TEST_SCHEMA";
const ARG: &str = "SKILLS_PG_TEST_ARG";
const GENESIS: &str = "genesis";
const TENANT: &str = "shared";

/// The stand-in hash chain (the real one belongs to `skills-security`): `entry_hash` is the
/// SHA-256 of the record's JSON with `entry_hash` empty, and `previous_hash` names the prior
/// entry's `entry_hash`.
fn seal(mut record: AuditRecord, previous: &str) -> AuditRecord {
    record.previous_hash = previous.to_owned();
    record.entry_hash = String::new();
    record.entry_hash = hex::encode(Sha256::digest(serde_json::to_vec(&record).unwrap()));
    record
}

/// Appends `record` to `chain`, retrying on the head another writer moved.
async fn append_chained(
    store: &PostgresStore,
    tenant: &TenantId,
    chain: &str,
    record: AuditRecord,
) {
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

/// Walks the chain from its first entry: contiguous sequences, each `previous_hash` the prior
/// `entry_hash`, each `entry_hash` recomputed. Returns the records.
async fn verify_chain(store: &PostgresStore, tenant: &TenantId, chain: &str) -> Vec<AuditRecord> {
    let entries = store
        .read_range(tenant, chain, 1, usize::MAX)
        .await
        .unwrap();
    let mut previous = GENESIS.to_owned();
    for (index, entry) in entries.iter().enumerate() {
        assert_eq!(entry.sequence, index as u64 + 1, "sequences are contiguous");
        assert_eq!(
            entry.record.previous_hash, previous,
            "the chain links up (no fork)"
        );
        let resealed = seal(entry.record.clone(), &previous);
        assert_eq!(
            resealed.entry_hash, entry.record.entry_hash,
            "entry {index} is intact"
        );
        previous = entry.record.entry_hash.clone();
    }
    entries.into_iter().map(|e| e.record).collect()
}

fn spawn(role: &str, schema: &str, arg: &str) -> Child {
    Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "child_process",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(ROLE, role)
        .env(SCHEMA, schema)
        .env(ARG, arg)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap()
}

fn say(line: &str) {
    let mut out = std::io::stdout().lock();
    writeln!(out, "@@{line}").unwrap();
    out.flush().unwrap();
}

/// The lines a child said with [`say`] (libtest may print its own text before them).
fn said(child: &mut Child) -> impl Iterator<Item = String> + '_ {
    let out = child.stdout.take().unwrap();
    BufReader::new(out)
        .lines()
        .map_while(Result::ok)
        .filter_map(|line| line.split_once("@@").map(|(_, m)| m.to_owned()))
}

fn wait_ok(mut child: Child) {
    let status = child.wait().unwrap();
    assert!(status.success(), "a child process failed: {status}");
}

/// Not a test of its own: the body of the child processes the tests below start. In a
/// normal run (no role in the environment) it returns at once.
#[test]
fn child_process() {
    let (Ok(role), Ok(schema), Ok(arg)) = (
        std::env::var(ROLE),
        std::env::var(SCHEMA),
        std::env::var(ARG),
    ) else {
        return;
    };
    let url = common::url().unwrap();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let store = common::open(&url, &schema, 2).await;
        match role.as_str() {
            "audit-writer" => audit_writer(&store, &arg).await,
            "throughput-writer" => throughput_writer(&store, &arg).await,
            "plan-worker" => plan_worker(&store, &arg, false).await,
            "plan-hang" => plan_worker(&store, &arg, true).await,
            other => panic!("unknown role {other}"),
        }
    });
}

/// `arg` is "name count": appends `count` records to the chain `one`.
async fn audit_writer(store: &PostgresStore, arg: &str) {
    let (name, count) = arg.split_once(' ').unwrap();
    let tenant = TenantId::new(TENANT);
    for i in 0..count.parse::<usize>().unwrap() {
        let mut record = AuditRecord::new(name, format!("skill-{i}"), "t/s", "core", "in", true);
        record.id = format!("{name}-{i}");
        append_chained(store, &tenant, "one", record).await;
    }
}

/// `arg` is "name seconds": appends for that long, then says how many it appended.
async fn throughput_writer(store: &PostgresStore, arg: &str) {
    let (name, seconds) = arg.split_once(' ').unwrap();
    let tenant = TenantId::new(TENANT);
    let until = Instant::now() + Duration::from_secs_f64(seconds.parse().unwrap());
    let mut n = 0u64;
    while Instant::now() < until {
        let mut record = AuditRecord::new(name, "s", "t/s", "core", "in", true);
        record.id = format!("{name}-{n}");
        append_chained(store, &tenant, "bench", record).await;
        n += 1;
    }
    say(&format!("appended {n}"));
}

/// `arg` is "name plan lease_ms": claims the plan's steps one by one and runs each (a run
/// is an audit record on the chain `runs` naming the step and the worker) until none is
/// left. A hanging worker claims one step, says so, and never finishes it.
async fn plan_worker(store: &PostgresStore, arg: &str, hang: bool) {
    let mut parts = arg.split(' ');
    let (name, plan) = (parts.next().unwrap(), parts.next().unwrap());
    let lease = Duration::from_millis(parts.next().unwrap().parse().unwrap());
    let scope = UserScope::new(TENANT, "planner");
    let tenant = TenantId::new(TENANT);
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        assert!(Instant::now() < deadline, "the plan did not finish in time");
        let Some(claim) = store.claim_step(&scope, plan, name, lease).await.unwrap() else {
            let steps = store.list_steps(&scope, plan).await.unwrap();
            if steps.iter().all(|s| s.status == StepStatus::Complete) {
                return;
            }
            // A step is held by someone else: wait for it to finish or its lease to expire.
            tokio::time::sleep(Duration::from_millis(50)).await;
            continue;
        };
        let number = claim.step.step_number;
        if hang {
            say(&format!("claimed {number}"));
            std::future::pending::<()>().await;
        }
        let mut record = AuditRecord::new(name, &claim.step.skill_id, "t/s", "core", "in", true);
        record.id = format!("{plan}#{number}@{name}");
        append_chained(store, &tenant, "runs", record).await;
        let done = StepUpdate::new().status(StepStatus::Complete).summary(name);
        store
            .finish_step(&scope, plan, number, name, done)
            .await
            .unwrap();
    }
}

/// N processes append to one tenant's chain at once: one chain with every record, no gap,
/// no fork, each entry's hash intact.
#[tokio::test]
async fn many_writer_processes_produce_one_chain_that_verifies() {
    let Some(url) = common::url() else { return };
    let schema = common::fresh_schema();
    let store = common::open(&url, &schema, 4).await;
    let (writers, each) = (6, 40);
    let children: Vec<Child> = (0..writers)
        .map(|w| spawn("audit-writer", &schema, &format!("w{w} {each}")))
        .collect();
    children.into_iter().for_each(wait_ok);
    let tenant = TenantId::new(TENANT);
    let records = verify_chain(&store, &tenant, "one").await;
    assert_eq!(records.len(), writers * each, "no record lost");
    let mut ids: Vec<&str> = records.iter().map(|r| r.id.as_str()).collect();
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), writers * each, "no record twice");
    let head = store.head(&tenant, "one").await.unwrap().unwrap();
    assert_eq!(head.sequence, (writers * each) as u64);
}

async fn plan_with_steps(store: &PostgresStore, steps: u32) -> String {
    let scope = UserScope::new(TENANT, "planner");
    let skills: Vec<String> = (0..steps).map(|n| format!("skill-{n}")).collect();
    let plan = store
        .create_plan(
            &scope,
            NewPlan::new("a shared plan", skills.clone(), RiskLevel::Low),
        )
        .await
        .unwrap();
    for (n, skill) in skills.iter().enumerate() {
        store
            .insert_step(&scope, &plan.id, NewStep::new(n as u32, skill))
            .await
            .unwrap();
    }
    plan.id
}

/// Who ran each step of `plan`, from the `runs` chain (which verifies).
async fn runs(store: &PostgresStore, plan: &str) -> BTreeMap<u32, Vec<String>> {
    let tenant = TenantId::new(TENANT);
    verify_chain(store, &tenant, "runs").await;
    let mut runs: BTreeMap<u32, Vec<String>> = BTreeMap::new();
    for entry in store
        .query(&tenant, &AuditQuery::new().chain("runs"))
        .await
        .unwrap()
    {
        let (step, worker) = entry
            .record
            .id
            .split_once('#')
            .unwrap()
            .1
            .split_once('@')
            .unwrap();
        if entry.record.id.starts_with(plan) {
            runs.entry(step.parse().unwrap())
                .or_default()
                .push(worker.to_owned());
        }
    }
    runs
}

/// Two processes execute one stored plan at once: every step runs exactly once, and the
/// work is shared.
#[tokio::test]
async fn two_worker_processes_never_run_a_step_twice() {
    let Some(url) = common::url() else { return };
    let schema = common::fresh_schema();
    let store = common::open(&url, &schema, 4).await;
    let steps = 40;
    let plan = plan_with_steps(&store, steps).await;
    let children: Vec<Child> = ["a", "b"]
        .iter()
        .map(|w| spawn("plan-worker", &schema, &format!("{w} {plan} 60000")))
        .collect();
    children.into_iter().for_each(wait_ok);
    let runs = runs(&store, &plan).await;
    assert_eq!(runs.len(), steps as usize, "every step ran");
    for (step, workers) in &runs {
        assert_eq!(
            workers.len(),
            1,
            "step {step} ran {} times: {workers:?}",
            workers.len()
        );
    }
    let scope = UserScope::new(TENANT, "planner");
    let listed = store.list_steps(&scope, &plan).await.unwrap();
    assert!(listed.iter().all(|s| s.status == StepStatus::Complete));
}

/// A worker process claims a step and is killed (SIGKILL) in the middle of it; another
/// process resumes the plan once the lease expires, runs that step (once) and finishes
/// the plan. The dead worker's claim cannot be finished by it any more.
#[tokio::test]
async fn a_plan_whose_worker_is_killed_mid_step_is_resumed_by_another_process() {
    let Some(url) = common::url() else { return };
    let schema = common::fresh_schema();
    let store = common::open(&url, &schema, 4).await;
    let steps = 5;
    let plan = plan_with_steps(&store, steps).await;
    let mut hanging = spawn("plan-hang", &schema, &format!("dead {plan} 1500"));
    let claimed: u32 = said(&mut hanging)
        .find_map(|line| line.strip_prefix("claimed ").map(|n| n.parse().unwrap()))
        .unwrap();
    hanging.kill().unwrap();
    hanging.wait().unwrap();
    let scope = UserScope::new(TENANT, "planner");
    let step = store
        .get_step(&scope, &plan, claimed)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        step.status,
        StepStatus::Running,
        "the dead worker's step is still claimed"
    );
    wait_ok(spawn(
        "plan-worker",
        &schema,
        &format!("rescuer {plan} 60000"),
    ));
    let runs = runs(&store, &plan).await;
    assert_eq!(runs.len(), steps as usize, "every step ran");
    assert_eq!(
        runs[&claimed],
        vec!["rescuer".to_owned()],
        "the killed step was resumed"
    );
    assert!(
        runs.values().all(|w| w.len() == 1),
        "no step ran twice: {runs:?}"
    );
    let stale = store
        .finish_step(
            &scope,
            &plan,
            claimed,
            "dead",
            StepUpdate::new().status(StepStatus::Failed),
        )
        .await;
    assert!(matches!(stale, Err(Error::Stale { .. })), "{stale:?}");
}

/// Audit appends per second with 1, 4 and 16 writer processes on one chain (each append
/// reads the head and appends with compare-and-append, retrying when another writer moved
/// it). A measurement, not a check: run it with
/// `cargo test --release -p skills-store-postgres --test processes -- --ignored --nocapture`.
#[tokio::test]
#[ignore = "a measurement; run by hand (see BENCHMARKS.md)"]
async fn audit_appends_per_second_with_1_4_and_16_writer_processes() {
    let Some(url) = common::url() else { return };
    let seconds = 5.0;
    for writers in [1, 4, 16] {
        let schema = common::fresh_schema();
        let store = common::open(&url, &schema, 2).await;
        let mut children: Vec<Child> = (0..writers)
            .map(|w| spawn("throughput-writer", &schema, &format!("w{w} {seconds}")))
            .collect();
        let mut total = 0u64;
        for child in &mut children {
            // Read to the end: a child whose stdout closed early would fail on its next line.
            let lines: Vec<String> = said(child).collect();
            let n: u64 = lines
                .iter()
                .find_map(|line| line.strip_prefix("appended ").map(|n| n.parse().unwrap()))
                .unwrap();
            total += n;
        }
        children.into_iter().for_each(wait_ok);
        let records = verify_chain(&store, &TenantId::new(TENANT), "bench").await;
        assert_eq!(records.len() as u64, total);
        println!(
            "{writers:>2} writer processes: {total} appends in {seconds} s = {:.0} appends/s",
            total as f64 / seconds
        );
    }
}
