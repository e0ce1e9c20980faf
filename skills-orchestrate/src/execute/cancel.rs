//! Cancelling a run: a cheap handle the host keeps and triggers from anywhere.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// Stops a run from starting more steps. Clones share one flag.
///
/// The executor checks it before each group and before each step (and before each retry);
/// steps already running finish, steps not started are reported as cancelled.
///
/// ```
/// use skills_orchestrate::execute::CancelToken;
///
/// let token = CancelToken::new();
/// let handle = token.clone();
/// assert!(!token.is_cancelled());
/// handle.cancel();
/// assert!(token.is_cancelled());
/// ```
#[derive(Debug, Clone, Default)]
pub struct CancelToken {
    cancelled: Arc<AtomicBool>,
}

impl CancelToken {
    /// A token not cancelled.
    pub fn new() -> Self {
        Self::default()
    }

    /// Cancels every run holding a clone of this token.
    pub fn cancel(&self) {
        self.cancelled.store(true, Ordering::SeqCst);
    }

    /// Whether [`cancel`](CancelToken::cancel) was called.
    pub fn is_cancelled(&self) -> bool {
        self.cancelled.load(Ordering::SeqCst)
    }
}
