//! The [`AuditStore`] contract.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use futures::future::join_all;
use sha2::{Digest, Sha256};

use super::tenant;
use crate::audit::{AuditCursor, AuditEntry, AuditQuery, AuditRecord, AuditStore};
use crate::error::{Error, Violation};
use crate::tenancy::TenantId;

const GENESIS: &str = "genesis";

/// Spoils one field of a valid input.
type Spoil = fn(&mut AuditRecord);

/// A record chained after `previous` with a stand-in hash (the real one is
/// `skills-security`'s business; any function of the previous hash and the content will do).
fn record(user: &str, previous: &str, payload: &str) -> AuditRecord {
    let mut record = AuditRecord::new(user, "pdf", "anthropics/skills/pdf", "verified", "in", true);
    record.previous_hash = previous.to_owned();
    record.trigger_reason = Some(payload.to_owned());
    record.entry_hash = hex::encode(Sha256::digest(
        format!("{previous}|{}|{payload}", record.id).as_bytes(),
    ));
    record
}

/// Appends `count` correctly chained records to `chain` and returns the entries.
async fn fill(
    store: &dyn AuditStore,
    tenant: &TenantId,
    chain: &str,
    user: &str,
    count: usize,
) -> Vec<AuditEntry> {
    let mut entries = Vec::new();
    let mut head: Option<String> = store
        .head(tenant, chain)
        .await
        .unwrap()
        .map(|h| h.entry_hash);
    for n in 0..count {
        let rec = record(
            user,
            head.as_deref().unwrap_or(GENESIS),
            &format!("{chain}-{n}"),
        );
        let entry = store
            .append(tenant, chain, rec, head.as_deref())
            .await
            .unwrap();
        head = Some(entry.record.entry_hash.clone());
        entries.push(entry);
    }
    entries
}

#[track_caller]
fn assert_stale<T: std::fmt::Debug>(result: crate::Result<T>, contract: &str) {
    assert!(
        matches!(result, Err(Error::Stale { .. })),
        "{contract}: expected Stale, got {result:?}"
    );
}

/// Resolves after being polled twice, so concurrent futures interleave between a read of
/// the head and the append conditioned on it.
struct YieldNow(bool);

impl Future for YieldNow {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if self.0 {
            return Poll::Ready(());
        }
        self.0 = true;
        cx.waker().wake_by_ref();
        Poll::Pending
    }
}

/// Runs every audit-store contract.
pub async fn run_all(store: &dyn AuditStore) {
    append_and_read(store).await;
    stale_head_is_refused(store).await;
    validation_and_uniqueness(store).await;
    query_filters_and_order(store).await;
    tenant_isolation(store).await;
    concurrent_appenders_never_fork(store).await;
    visit_range_lends_what_read_range_returns(store).await;
}

/// Appends get contiguous sequences from 1 and are read back verbatim by head, range and id.
pub async fn append_and_read(store: &dyn AuditStore) {
    let t = tenant();
    assert_eq!(
        store.head(&t, "c").await.unwrap(),
        None,
        "empty chain has no head"
    );
    assert!(store.read_range(&t, "c", 0, 10).await.unwrap().is_empty());
    assert!(
        store.chains(&t).await.unwrap().is_empty(),
        "new tenant has no chains"
    );

    let first = record("alice", GENESIS, "first");
    let entry = store.append(&t, "c", first.clone(), None).await.unwrap();
    assert_eq!(entry.sequence, 1, "first entry is sequence 1");
    assert_eq!(entry.chain, "c");
    assert_eq!(entry.record, first, "the record is stored verbatim");

    let mut entries = vec![entry];
    entries.extend(fill(store, &t, "c", "alice", 4).await);
    let sequences: Vec<u64> = entries.iter().map(|e| e.sequence).collect();
    assert_eq!(sequences, vec![1, 2, 3, 4, 5], "sequences are contiguous");

    let head = store.head(&t, "c").await.unwrap().unwrap();
    assert_eq!(head.sequence, 5, "head is the last entry");
    assert_eq!(head.entry_hash, entries[4].record.entry_hash);
    assert_eq!(head.record_id, entries[4].record.id);

    assert_eq!(store.read_range(&t, "c", 1, 100).await.unwrap(), entries);
    assert_eq!(store.read_range(&t, "c", 0, 100).await.unwrap(), entries);
    assert_eq!(
        store.read_range(&t, "c", 3, 2).await.unwrap(),
        entries[2..4].to_vec(),
        "read_range starts at from_sequence and honours the limit"
    );
    assert!(store.read_range(&t, "c", 6, 10).await.unwrap().is_empty());
    assert!(store.read_range(&t, "c", 1, 0).await.unwrap().is_empty());
    assert!(
        store
            .read_range(&t, "other", 1, 10)
            .await
            .unwrap()
            .is_empty()
    );

    for entry in &entries {
        assert_eq!(
            store
                .get_entry(&t, &entry.record.id)
                .await
                .unwrap()
                .as_ref(),
            Some(entry),
            "get_entry finds every record by id"
        );
    }
    assert_eq!(store.get_entry(&t, "missing").await.unwrap(), None);
    assert_eq!(store.chains(&t).await.unwrap(), vec!["c".to_owned()]);
}

/// An append whose expected head is not the current head is refused and appends nothing.
pub async fn stale_head_is_refused(store: &dyn AuditStore) {
    let t = tenant();
    let rec = record("alice", GENESIS, "x");
    assert_stale(
        store.append(&t, "c", rec.clone(), Some("nothing")).await,
        "an empty chain refuses an expected head",
    );
    let entries = fill(store, &t, "c", "alice", 2).await;
    assert_stale(
        store.append(&t, "c", rec.clone(), None).await,
        "a non-empty chain refuses None",
    );
    assert_stale(
        store
            .append(&t, "c", rec.clone(), Some(&entries[0].record.entry_hash))
            .await,
        "an older entry's hash is stale",
    );
    assert_stale(
        store.append(&t, "c", rec, Some("made-up")).await,
        "an unknown hash is stale",
    );
    let head = store.head(&t, "c").await.unwrap().unwrap();
    assert_eq!(head.sequence, 2, "refused appends left the chain alone");
    assert_eq!(store.read_range(&t, "c", 1, 10).await.unwrap(), entries);
}

/// Required fields, a chain name and a tenant-unique record id are enforced; refusals
/// append nothing.
pub async fn validation_and_uniqueness(store: &dyn AuditStore) {
    let t = tenant();
    let entries = fill(store, &t, "c", "alice", 1).await;
    let head = Some(entries[0].record.entry_hash.as_str());

    let result = store.append(&t, "", record("alice", "h", "x"), None).await;
    assert!(
        matches!(&result, Err(Error::Invalid { field, violation: Violation::Empty }) if field == "chain"),
        "an empty chain name is refused: {result:?}"
    );
    let blank: [(&str, Spoil); 7] = [
        ("id", |r| r.id.clear()),
        ("user_id", |r| r.user_id = "".into()),
        ("skill_id", |r| r.skill_id.clear()),
        ("skill_path", |r| r.skill_path.clear()),
        ("skill_trust_level", |r| r.skill_trust_level.clear()),
        ("input_hash", |r| r.input_hash.clear()),
        ("entry_hash", |r| r.entry_hash.clear()),
    ];
    for (field, clear) in blank {
        let mut rec = record("alice", "h", "x");
        clear(&mut rec);
        let result = store.append(&t, "c", rec, head).await;
        assert!(
            matches!(&result, Err(Error::Invalid { field: f, violation: Violation::Empty }) if f == field),
            "an empty `{field}` is refused: {result:?}"
        );
    }

    let mut duplicate = record("alice", "h", "x");
    duplicate.id = entries[0].record.id.clone();
    let result = store.append(&t, "other-chain", duplicate, None).await;
    assert!(
        matches!(result, Err(Error::Conflict { .. })),
        "a record id is unique in the tenant, across chains: {result:?}"
    );
    assert_eq!(store.head(&t, "c").await.unwrap().unwrap().sequence, 1);
    assert_eq!(
        store.chains(&t).await.unwrap(),
        vec!["c".to_owned()],
        "no chain was created"
    );
}

/// `query` filters by chain, user, skill, success, time and cursor, in (chain, sequence)
/// order, honouring the limit.
pub async fn query_filters_and_order(store: &dyn AuditStore) {
    let t = tenant();
    // Chain "b" is written first so store order differs from (chain, sequence) order.
    let mut all = Vec::new();
    for (chain, n) in [("b", 0), ("a", 0), ("b", 1), ("a", 1), ("a", 2), ("b", 2)] {
        let head = store.head(&t, chain).await.unwrap().map(|h| h.entry_hash);
        let user = if n % 2 == 0 { "alice" } else { "bob" };
        let mut rec = record(
            user,
            head.as_deref().unwrap_or(GENESIS),
            &format!("{chain}{n}"),
        );
        rec.timestamp = 1_000 + n;
        rec.skill_id = format!("skill-{chain}");
        rec.success = n != 1;
        all.push(store.append(&t, chain, rec, head.as_deref()).await.unwrap());
    }
    all.sort_by(|x, y| (&x.chain, x.sequence).cmp(&(&y.chain, y.sequence)));
    let select = |keep: &dyn Fn(&AuditEntry) -> bool| -> Vec<AuditEntry> {
        all.iter().filter(|e| keep(e)).cloned().collect()
    };

    let t = &t;
    let q = |query: AuditQuery| async move { store.query(t, &query).await.unwrap() };
    assert_eq!(
        q(AuditQuery::new()).await,
        all,
        "query orders by (chain, sequence)"
    );
    assert_eq!(
        q(AuditQuery::new().chain("a")).await,
        select(&|e| e.chain == "a")
    );
    assert_eq!(
        q(AuditQuery::new().user("bob")).await,
        select(&|e| e.record.user_id.as_str() == "bob"),
        "user filter"
    );
    assert_eq!(
        q(AuditQuery::new().skill_id("skill-b")).await,
        select(&|e| e.record.skill_id == "skill-b"),
        "skill filter"
    );
    assert_eq!(
        q(AuditQuery::new().success(false)).await,
        select(&|e| !e.record.success),
        "success filter"
    );
    assert_eq!(
        q(AuditQuery::new().between(1_001, 1_002)).await,
        select(&|e| e.record.timestamp == 1_001),
        "time range is [from, until)"
    );
    assert_eq!(
        q(AuditQuery::new().chain("b").user("alice").success(true)).await,
        select(&|e| e.chain == "b" && e.record.user_id.as_str() == "alice"),
        "conditions combine"
    );
    assert_eq!(
        q(AuditQuery::new().limit(4)).await,
        all[..4].to_vec(),
        "limit"
    );
    assert!(q(AuditQuery::new().user("nobody")).await.is_empty());

    let mut paged = Vec::new();
    let mut query = AuditQuery::new().limit(4);
    loop {
        let page = q(query.clone()).await;
        let Some(last) = page.last() else { break };
        query = query.after(AuditCursor::after(last));
        paged.extend(page);
    }
    assert_eq!(
        paged, all,
        "paging with a cursor visits every entry once, in order"
    );
    assert_eq!(
        store.chains(t).await.unwrap(),
        vec!["a".to_owned(), "b".to_owned()]
    );
}

/// No call reads, extends or reveals another tenant's chains.
pub async fn tenant_isolation(store: &dyn AuditStore) {
    let (owner, other) = (tenant(), tenant());
    let entries = fill(store, &owner, "alice", "alice", 3).await;
    let head = store.head(&owner, "alice").await.unwrap();

    assert_eq!(
        store.head(&other, "alice").await.unwrap(),
        None,
        "head is per tenant"
    );
    assert!(
        store
            .read_range(&other, "alice", 0, 10)
            .await
            .unwrap()
            .is_empty()
    );
    assert!(
        store
            .query(&other, &AuditQuery::new())
            .await
            .unwrap()
            .is_empty()
    );
    assert!(
        store
            .query(&other, &AuditQuery::new().chain("alice").user("alice"))
            .await
            .unwrap()
            .is_empty()
    );
    assert!(
        store.chains(&other).await.unwrap().is_empty(),
        "chains are per tenant"
    );
    for entry in &entries {
        assert_eq!(
            store.get_entry(&other, &entry.record.id).await.unwrap(),
            None,
            "get_entry does not reach into another tenant"
        );
    }
    let foreign_head = entries[2].record.entry_hash.as_str();
    assert_stale(
        store
            .append(
                &other,
                "alice",
                record("alice", foreign_head, "x"),
                Some(foreign_head),
            )
            .await,
        "another tenant's head does not extend this tenant's chain",
    );
    // Reusing another tenant's record id is not a conflict: that would reveal the id exists.
    let mut reused = record("mallory", GENESIS, "x");
    reused.id = entries[0].record.id.clone();
    let own = store.append(&other, "alice", reused, None).await.unwrap();
    assert_eq!(
        own.sequence, 1,
        "the other tenant's chain of the same name is its own"
    );

    assert_eq!(
        store.head(&owner, "alice").await.unwrap(),
        head,
        "owner's chain untouched"
    );
    assert_eq!(
        store.read_range(&owner, "alice", 1, 10).await.unwrap(),
        entries
    );
    assert_eq!(
        store
            .get_entry(&owner, &entries[0].record.id)
            .await
            .unwrap()
            .as_ref(),
        Some(&entries[0]),
        "the owner still gets its own record for the shared id"
    );
}

/// 64 concurrent appenders retrying on `Stale` produce 64 entries forming one chain, with
/// every `previous_hash` equal to the prior entry's `entry_hash`.
pub async fn concurrent_appenders_never_fork(store: &dyn AuditStore) {
    const WRITERS: usize = 64;
    let t = tenant();
    let writers = (0..WRITERS).map(|n| {
        let t = &t;
        async move {
            for _attempt in 0..10 * WRITERS {
                let head = store.head(t, "c").await.unwrap().map(|h| h.entry_hash);
                let rec = record("alice", head.as_deref().unwrap_or(GENESIS), &n.to_string());
                YieldNow(false).await;
                match store.append(t, "c", rec, head.as_deref()).await {
                    Ok(entry) => return entry,
                    Err(Error::Stale { .. }) => continue,
                    Err(other) => panic!("concurrent append failed: {other}"),
                }
            }
            panic!("writer {n} never got its append in")
        }
    });
    let appended = join_all(writers).await;
    let entries = store.read_range(&t, "c", 1, WRITERS * 2).await.unwrap();
    assert_eq!(
        entries.len(),
        WRITERS,
        "every concurrent append landed exactly once"
    );
    let mut previous = GENESIS.to_owned();
    for (index, entry) in entries.iter().enumerate() {
        assert_eq!(
            entry.sequence,
            index as u64 + 1,
            "sequences stay contiguous"
        );
        assert_eq!(
            entry.record.previous_hash, previous,
            "the chain never forks"
        );
        previous = entry.record.entry_hash.clone();
    }
    let mut ids: Vec<_> = appended.iter().map(|e| e.record.id.clone()).collect();
    ids.sort();
    let mut stored: Vec<_> = entries.iter().map(|e| e.record.id.clone()).collect();
    stored.sort();
    assert_eq!(
        ids, stored,
        "what each writer was told it appended is what is stored"
    );
}

/// [`AuditStore::visit_range`] lends exactly the entries `read_range` returns for the same
/// arguments, in order, stops when told, and lends no other tenant's or chain's entries.
pub async fn visit_range_lends_what_read_range_returns(store: &dyn AuditStore) {
    let t = tenant();
    let entries = fill(store, &t, "visit", "alice", 12).await;
    fill(store, &t, "other-chain", "alice", 3).await;
    fill(store, &tenant(), "visit", "alice", 5).await;
    for (from, limit) in [
        (0, 100),
        (1, 12),
        (1, 5),
        (4, 3),
        (11, 10),
        (12, 1),
        (13, 5),
        (3, 0),
    ] {
        let read = store.read_range(&t, "visit", from, limit).await.unwrap();
        let mut seen = Vec::new();
        let lent = store
            .visit_range(&t, "visit", from, limit, &mut |run: &[AuditEntry]| {
                assert!(!run.is_empty(), "an empty slice was lent");
                seen.extend_from_slice(run);
                true
            })
            .await
            .unwrap();
        assert_eq!(
            seen, read,
            "visit_range({from}, {limit}) differs from read_range"
        );
        assert_eq!(lent, read.len());
    }
    let mut calls = 0;
    store
        .visit_range(&t, "visit", 1, 100, &mut |_: &[AuditEntry]| {
            calls += 1;
            false
        })
        .await
        .unwrap();
    assert_eq!(calls, 1, "lending went on after `false`");
    let mut stranger = 0;
    let lent = store
        .visit_range(&tenant(), "visit", 1, 100, &mut |run: &[AuditEntry]| {
            stranger += run.len();
            true
        })
        .await
        .unwrap();
    assert_eq!((lent, stranger), (0, 0), "another tenant's chain was lent");
    assert_eq!(entries.len(), 12);
}
