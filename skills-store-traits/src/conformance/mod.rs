//! The store contract as tests: plain `pub async fn`s, one per contract, that every backend's
//! test suite calls (feature `conformance`).
//!
//! Each function creates its own tenants and users with fresh random ids, so all of them can
//! run against one store instance, in any order, even concurrently. A function panics (through
//! `assert!`) when the backend breaks the contract, naming what broke.
//!
//! ```ignore
//! #[tokio::test]
//! async fn my_backend_passes() {
//!     let store = MyBackend::open_temporary().await;
//!     skills_store_traits::conformance::skills::run_all(&store).await;
//! }
//! ```
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::type_complexity
)]

pub mod audit;
pub mod counting;
pub mod learning;
pub mod memory;
pub mod packages;
pub mod permissions;
pub mod plans;
pub mod skill_batches;
pub mod skills;
pub mod trust;

use crate::error::{Error, Violation};
use crate::tenancy::{TenantId, UserId, UserScope};
use crate::time::new_id;

/// A fresh tenant no other contract uses.
pub(crate) fn tenant() -> TenantId {
    TenantId::new(format!("tenant-{}", new_id()))
}

/// A fresh user in a fresh tenant.
pub(crate) fn user() -> UserScope {
    UserScope::new(tenant(), UserId::new(format!("user-{}", new_id())))
}

/// The same user id in another tenant, and another user of the same tenant: the two
/// neighbours every per-user contract attacks from.
pub(crate) fn neighbours(scope: &UserScope) -> [UserScope; 2] {
    [
        UserScope::new(tenant(), scope.user.clone()),
        UserScope::new(
            scope.tenant.clone(),
            UserId::new(format!("user-{}", new_id())),
        ),
    ]
}

/// Asserts `result` is a refusal of `field` under a rule `check` accepts.
#[track_caller]
pub(crate) fn assert_invalid<T: std::fmt::Debug>(
    result: crate::Result<T>,
    field: &str,
    check: impl Fn(&Violation) -> bool,
) {
    match result {
        Err(Error::Invalid {
            field: got,
            violation,
        }) => {
            assert_eq!(got, field, "refusal names the wrong field ({violation})");
            assert!(
                check(&violation),
                "unexpected rule for `{field}`: {violation:?}"
            );
        }
        other => panic!("expected Invalid `{field}`, got {other:?}"),
    }
}
