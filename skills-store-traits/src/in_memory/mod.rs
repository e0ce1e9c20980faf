//! In-memory implementations of every store trait: the reference backends and the test
//! default. Each is safe under concurrent use (one lock per store, never held across an
//! `.await`) and keeps nothing after it is dropped.

mod audit;
mod learning;
mod lock;
mod memory;
mod packages;
mod permissions;
mod plans;
mod skills;
mod trust;

pub use audit::InMemoryAuditStore;
pub use learning::InMemoryLearningStore;
pub use memory::InMemoryMemoryStore;
pub use packages::InMemoryPackageStore;
pub use permissions::InMemoryPermissionStore;
pub use plans::InMemoryPlanStore;
pub use skills::InMemorySkillStore;
pub use trust::InMemoryTrustStore;
