//! Time without a runtime: the host's [`Timer`], a runtime-free default ([`ThreadTimer`]),
//! and [`timeout`], which races a future against it.
//!
//! The family's library code waits (approval timeouts, the executor's retry backoff and
//! step timeouts) without picking an async runtime for its caller, so sleeping goes through
//! a trait: a tokio host plugs in `tokio::time::sleep`, anyone else gets [`ThreadTimer`].
//! (`skills_orchestrate::execute` re-exports all three.)

use std::cmp::Ordering;
use std::collections::BinaryHeap;
use std::future::Future;
use std::sync::{Condvar, Mutex, OnceLock};
use std::time::{Duration, Instant};

use futures::channel::oneshot;
use futures::future::{BoxFuture, Either, FutureExt};

/// The host's sleep. Implementations complete the future after about `duration`;
/// dropping it early must be harmless (a timeout that lost the race).
pub trait Timer: Send + Sync {
    /// A future that completes after `duration`.
    fn sleep(&self, duration: Duration) -> BoxFuture<'static, ()>;
}

/// The runtime-free default: one background thread (started on the first sleep, shared by
/// every `ThreadTimer`) keeps the pending deadlines in a heap and completes each sleep's
/// oneshot when its time comes.
///
/// Good for what the family needs (approval timeouts, retry backoff, step timeouts); not a
/// high-resolution timer. If the thread cannot be started, sleeps complete at once: retries then happen
/// without backoff and timeouts fire immediately, which fails steps rather than hanging them.
///
/// ```
/// use std::time::Duration;
/// use skills_security::time::{ThreadTimer, Timer};
///
/// futures::executor::block_on(ThreadTimer::new().sleep(Duration::from_millis(1)));
/// ```
#[derive(Debug, Clone, Copy, Default)]
pub struct ThreadTimer;

impl ThreadTimer {
    /// The shared timer.
    pub fn new() -> Self {
        ThreadTimer
    }
}

impl Timer for ThreadTimer {
    fn sleep(&self, duration: Duration) -> BoxFuture<'static, ()> {
        let (sender, receiver) = oneshot::channel();
        match scheduler() {
            Some(scheduler) if !duration.is_zero() => {
                scheduler.push(Instant::now() + duration, sender);
            }
            _ => {
                let _ = sender.send(());
            }
        }
        // A dropped sender (never expected) also ends the sleep.
        receiver.map(|_| ()).boxed()
    }
}

/// Runs `future` until it completes or `limit` passes on `timer`; `None` on timeout (the
/// future is dropped, which is how a never-answering model is abandoned).
pub async fn timeout<F: Future>(
    timer: &dyn Timer,
    limit: Duration,
    future: F,
) -> Option<F::Output> {
    let sleep = timer.sleep(limit);
    futures::pin_mut!(future);
    match futures::future::select(future, sleep).await {
        Either::Left((output, _)) => Some(output),
        Either::Right(((), _)) => None,
    }
}

struct Pending {
    deadline: Instant,
    sequence: u64,
    sender: oneshot::Sender<()>,
}

impl PartialEq for Pending {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for Pending {}

impl PartialOrd for Pending {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Pending {
    // Reversed: `BinaryHeap` is a max-heap and the earliest deadline must come out first.
    fn cmp(&self, other: &Self) -> Ordering {
        (other.deadline, other.sequence).cmp(&(self.deadline, self.sequence))
    }
}

struct Queue {
    heap: BinaryHeap<Pending>,
    sequence: u64,
    prune_at: usize,
}

struct Scheduler {
    queue: Mutex<Queue>,
    wake: Condvar,
}

/// Below this many pending sleeps, abandoned ones (timeouts whose step finished first) are
/// left to expire; above it they are dropped on the next push, so the heap stays in
/// proportion to the sleeps still wanted.
const PRUNE_FLOOR: usize = 1024;

impl Scheduler {
    fn push(&self, deadline: Instant, sender: oneshot::Sender<()>) {
        let Ok(mut queue) = self.queue.lock() else {
            let _ = sender.send(());
            return;
        };
        if queue.heap.len() >= queue.prune_at.max(PRUNE_FLOOR) {
            queue.heap.retain(|p| !p.sender.is_canceled());
            queue.prune_at = queue.heap.len().saturating_mul(2);
        }
        queue.sequence = queue.sequence.wrapping_add(1);
        let sequence = queue.sequence;
        let earliest = queue.heap.peek().is_none_or(|p| deadline < p.deadline);
        queue.heap.push(Pending {
            deadline,
            sequence,
            sender,
        });
        drop(queue);
        if earliest {
            self.wake.notify_one();
        }
    }

    fn run(&self) {
        let Ok(mut queue) = self.queue.lock() else {
            return;
        };
        loop {
            let now = Instant::now();
            while queue.heap.peek().is_some_and(|p| p.deadline <= now) {
                if let Some(due) = queue.heap.pop() {
                    let _ = due.sender.send(());
                }
            }
            let wait = queue
                .heap
                .peek()
                .map(|p| p.deadline.saturating_duration_since(now));
            queue = match wait {
                Some(wait) => match self.wake.wait_timeout(queue, wait) {
                    Ok((queue, _)) => queue,
                    Err(_) => return,
                },
                None => match self.wake.wait(queue) {
                    Ok(queue) => queue,
                    Err(_) => return,
                },
            };
        }
    }
}

static SCHEDULER: Scheduler = Scheduler {
    queue: Mutex::new(Queue {
        heap: BinaryHeap::new(),
        sequence: 0,
        prune_at: 0,
    }),
    wake: Condvar::new(),
};

/// The shared scheduler, its thread started on first use; `None` if it cannot be started.
fn scheduler() -> Option<&'static Scheduler> {
    static STARTED: OnceLock<bool> = OnceLock::new();
    let started = *STARTED.get_or_init(|| {
        std::thread::Builder::new()
            .name("skills-timer".into())
            .spawn(|| SCHEDULER.run())
            .is_ok()
    });
    started.then_some(&SCHEDULER)
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures::executor::block_on;

    #[test]
    fn sleeps_complete_in_deadline_order_and_timeouts_drop_the_loser() {
        let timer = ThreadTimer::new();
        let order = std::sync::Arc::new(Mutex::new(Vec::new()));
        let sleeps: Vec<_> = [30u64, 1, 10]
            .into_iter()
            .map(|ms| {
                let order = order.clone();
                timer.sleep(Duration::from_millis(ms)).map(move |()| {
                    if let Ok(mut order) = order.lock() {
                        order.push(ms);
                    }
                })
            })
            .collect();
        block_on(futures::future::join_all(sleeps));
        assert_eq!(*order.lock().unwrap(), vec![1, 10, 30]);

        let never = futures::future::pending::<u8>();
        assert_eq!(
            block_on(timeout(&timer, Duration::from_millis(5), never)),
            None
        );
        let ready = futures::future::ready(7u8);
        assert_eq!(
            block_on(timeout(&timer, Duration::from_secs(60), ready)),
            Some(7)
        );
    }

    #[test]
    fn abandoned_sleeps_are_pruned() {
        let timer = ThreadTimer::new();
        for _ in 0..(PRUNE_FLOOR * 3) {
            drop(timer.sleep(Duration::from_secs(3_600)));
        }
        let pending = scheduler().map(|s| s.queue.lock().map(|q| q.heap.len()).unwrap_or(0));
        // Other tests may hold live sleeps; abandoned ones never exceed twice the floor.
        assert!(pending.unwrap_or(0) <= PRUNE_FLOOR * 2 + 64, "{pending:?}");
    }
}
