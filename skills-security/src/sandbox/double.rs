//! [`ScriptedSandbox`]: a test double that runs nothing.

use std::collections::VecDeque;
use std::sync::Mutex;

use async_trait::async_trait;

use super::{Outcome, Sandbox, SandboxRequest, Status, Tier, UntrustedOutput};

/// A [`Sandbox`] for unit tests: records every request and answers with queued outcomes
/// (then with a default success printing `ok`). Its outcomes say [`Tier::Simulated`], so a
/// double can never pass for isolation.
#[derive(Debug, Default)]
pub struct ScriptedSandbox {
    queued: Mutex<VecDeque<Outcome>>,
    requests: Mutex<Vec<SandboxRequest>>,
}

impl ScriptedSandbox {
    /// An empty double.
    pub fn new() -> ScriptedSandbox {
        ScriptedSandbox::default()
    }

    /// Queues the outcome of the next run.
    pub fn push(&self, status: Status, stdout: &str, stderr: &str) -> &ScriptedSandbox {
        let outcome = Outcome::finished(
            status,
            Tier::Simulated,
            UntrustedOutput::new(stdout.as_bytes().to_vec(), false),
            UntrustedOutput::new(stderr.as_bytes().to_vec(), false),
        );
        if let Ok(mut q) = self.queued.lock() {
            q.push_back(outcome);
        }
        self
    }

    /// The requests received so far.
    pub fn requests(&self) -> Vec<SandboxRequest> {
        self.requests.lock().map(|r| r.clone()).unwrap_or_default()
    }
}

#[async_trait]
impl Sandbox for ScriptedSandbox {
    async fn run(&self, request: SandboxRequest) -> Outcome {
        if let Ok(mut r) = self.requests.lock() {
            r.push(request);
        }
        let next = self.queued.lock().ok().and_then(|mut q| q.pop_front());
        next.unwrap_or_else(|| {
            Outcome::finished(
                Status::Success,
                Tier::Simulated,
                UntrustedOutput::new(b"ok\n".to_vec(), false),
                UntrustedOutput::default(),
            )
        })
    }
}
