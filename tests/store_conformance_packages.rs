//! The package and learning stores' conformance suites against both backends: the
//! in-memory stores and SQLite (a fresh database file per contract), each contract on its
//! own store, then both suites at once on one shared store.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use skills::sqlite::{SqliteOptions, SqliteStore, Synchronous};
use skills::store::conformance::{learning, packages};
use skills::store::in_memory::{InMemoryLearningStore, InMemoryPackageStore};

/// A fresh SQLite file (`synchronous = NORMAL`: durability is not what these contracts test).
async fn sqlite() -> (tempfile::TempDir, SqliteStore) {
    let dir = tempfile::tempdir().unwrap();
    let options = SqliteOptions::default().synchronous(Synchronous::Normal);
    let store = SqliteStore::open_with(dir.path().join("store.sqlite3"), options)
        .await
        .unwrap();
    (dir, store)
}

/// One `#[tokio::test]` per contract function and backend, each on a fresh store.
macro_rules! contracts {
    ($tests:ident, $module:ident, $store:ty: $($contract:ident),+ $(,)?) => {
        mod $tests {
            use super::*;

            mod in_memory {
                use super::*;
                $(
                    #[tokio::test]
                    async fn $contract() {
                        $module::$contract(&<$store>::new()).await;
                    }
                )+
            }

            mod sqlite {
                use super::*;
                $(
                    #[tokio::test]
                    async fn $contract() {
                        let (_dir, store) = super::super::sqlite().await;
                        $module::$contract(&store).await;
                    }
                )+
            }
        }
    };
}

contracts!(package_contracts, packages, InMemoryPackageStore:
    create_and_find,
    uniqueness,
    validation_rules,
    versions_and_order,
    upgrade_and_rollback,
    deprecation_and_approval,
    ratings,
    delete_cascades,
    delete_one_version,
    tenant_isolation,
    concurrent_writers,
    concurrent_version_deletes,
);

contracts!(learning_contracts, learning, InMemoryLearningStore:
    sequences_record_and_list,
    sequence_validation,
    prune_sequences,
    patterns_upsert,
    pattern_validation,
    list_patterns_filters_and_order,
    status_life_cycle,
    tenant_isolation,
    concurrent_writers,
);

/// Both suites twice, concurrently, on one store per backend: the contracts make their own
/// tenants, so they must not disturb each other.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn both_suites_concurrently_on_shared_stores() {
    let package_store = InMemoryPackageStore::new();
    let learning_store = InMemoryLearningStore::new();
    let (_dir, sqlite) = sqlite().await;
    futures::join!(
        packages::run_all(&package_store),
        packages::run_all(&package_store),
        learning::run_all(&learning_store),
        learning::run_all(&learning_store),
        packages::run_all(&sqlite),
        learning::run_all(&sqlite),
    );
    assert!(sqlite.integrity_check().await.unwrap().is_empty());
}

/// The SQLite suites with the default `synchronous = FULL`, and on an in-memory database.
#[tokio::test]
async fn sqlite_run_all_durable_and_in_memory() {
    let dir = tempfile::tempdir().unwrap();
    let durable = SqliteStore::open(dir.path().join("full.sqlite3"))
        .await
        .unwrap();
    packages::run_all(&durable).await;
    learning::run_all(&durable).await;
    let memory = SqliteStore::open_in_memory().await.unwrap();
    packages::run_all(&memory).await;
    learning::run_all(&memory).await;
}
