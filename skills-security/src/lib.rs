//! Security for agent skills.
//!
//! This crate will hold data classification and the sanitization pipeline, trust levels and
//! the access matrix, the `Sandbox` trait with an OS process sandbox, human approvals,
//! graduated autonomy, the permission hierarchy, the tamper-evident audit trail and the skill
//! scanner. It depends on `skills-core` and `skills-store-traits`, never on
//! `skills-orchestrate`.
//!
//! It is intentionally empty until that work lands: see `ARCHITECTURE.md` at the repository
//! root for the crate family's layout.
