//! What every test of this crate shares: the server from `SKILLS_PG_URL`, and a fresh
//! schema per store so tests run in parallel without seeing each other's rows.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use skills_store_postgres::{PgOptions, PostgresStore};

/// The server's URL, or `None` (after saying why) when there is none: under `CI=true` a
/// missing server fails the test instead.
pub fn url() -> Option<String> {
    skills_testenv::postgres_url()
}

/// A fresh schema name.
pub fn fresh_schema() -> String {
    format!("t_{}", uuid::Uuid::new_v4().simple())
}

/// A store on a fresh schema, or `None` when there is no server (outside CI).
pub async fn store() -> Option<PostgresStore> {
    let url = url()?;
    Some(open(&url, &fresh_schema(), 4).await)
}

/// A store on `schema` with `pool` connections.
pub async fn open(url: &str, schema: &str, pool: usize) -> PostgresStore {
    PostgresStore::open(PgOptions::new(url).schema(schema).pool_size(pool))
        .await
        .unwrap()
}

/// A plain connection (no store) with `schema` as its search path, for the tests that
/// attack the database directly.
pub async fn raw(url: &str, schema: &str) -> tokio_postgres::Client {
    let (client, connection) = tokio_postgres::connect(url, tokio_postgres::NoTls)
        .await
        .unwrap();
    tokio::spawn(connection);
    client
        .batch_execute(&format!("SET search_path = {schema}"))
        .await
        .unwrap();
    client
}
