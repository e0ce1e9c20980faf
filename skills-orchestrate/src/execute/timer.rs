//! Time without a runtime: [`Timer`], [`ThreadTimer`] and [`timeout`] live in
//! `skills_security::time` (approvals wait on them too) and are re-exported here.

pub use skills_security::time::{ThreadTimer, Timer, timeout};
