//! Time and identifiers as stores stamp them.

use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};

/// Milliseconds since the Unix epoch (UTC).
pub type Timestamp = i64;

/// Where a store reads the time from; tests use [`ManualClock`].
pub trait Clock: Send + Sync + std::fmt::Debug {
    /// Now, in milliseconds since the Unix epoch.
    fn now(&self) -> Timestamp;
}

/// The system clock.
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> Timestamp {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|elapsed| i64::try_from(elapsed.as_millis()).unwrap_or(i64::MAX))
            .unwrap_or(0)
    }
}

/// A clock that moves only when told to.
#[derive(Debug, Default)]
pub struct ManualClock(AtomicI64);

impl ManualClock {
    /// A clock reading `start`.
    pub fn new(start: Timestamp) -> Arc<Self> {
        Arc::new(ManualClock(AtomicI64::new(start)))
    }

    /// Moves the clock forward by `millis`.
    pub fn advance(&self, millis: i64) {
        self.0.fetch_add(millis, Ordering::SeqCst);
    }

    /// Sets the clock.
    pub fn set(&self, now: Timestamp) {
        self.0.store(now, Ordering::SeqCst);
    }
}

impl Clock for ManualClock {
    fn now(&self) -> Timestamp {
        self.0.load(Ordering::SeqCst)
    }
}

/// A fresh random record id (a UUID v4, hyphenated, lowercase).
pub fn new_id() -> String {
    uuid::Uuid::new_v4().to_string()
}
