//! Storage for agent skills, behind traits the host implements.
//!
//! This crate will hold the object-safe async store traits (skills and their files and
//! assignments, audit records, trust history, execution plans and working memory, agent
//! memory), an in-memory implementation of each, and one conformance suite that every
//! backend must pass. It depends only on `skills-core`.
//!
//! It is intentionally empty until that work lands: see `ARCHITECTURE.md` at the repository
//! root for the crate family's layout.
