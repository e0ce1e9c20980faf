//! Facade.
pub use skills_core as core;
