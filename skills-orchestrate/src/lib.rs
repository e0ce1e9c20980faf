//! Orchestration of agent skills.
//!
//! This crate will hold the `LlmClient` trait, planning over a dependency DAG with parallel
//! groups, execution, working memory, context budgets, progress events and learning. It sits
//! at the top of the family and may depend on every other `skills-*` crate.
//!
//! It is intentionally empty until that work lands: see `ARCHITECTURE.md` at the repository
//! root for the crate family's layout.
