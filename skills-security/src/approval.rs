//! Human approval of skill scripts (seed 004 AD-6, AD-7): `yes_once`, `yes_in_session`,
//! `no`, through the host's [`ApprovalChannel`]: a callback, or [`OptionChannel`] over the
//! [option runtime](crate::hitl), which any task (a web handler, a chat bot) answers.
//!
//! Threat: a script running without a person saying yes; an approval screen that a skill's
//! own text manipulates (escape sequences, bidi overrides, a fake prompt in a path or an
//! argument); an approval reused for a script that changed since; a host whose approval
//! channel hangs; a yes from nobody in particular, or from someone the question was not
//! put to; a model asking for an unsandboxed run. Guarantee: [`Approvals::decide`]
//! approves only on an explicit `yes_once` or `yes_in_session` answer from the host's
//! [`ApprovalChannel`] ([`OptionChannel`]: given by a named person, the one it was put to
//! when [`OptionChannel::to`] names one), or on a cached `yes_in_session` in the same (world, chat, skill)
//! that covered every script of the request as shown (path, interpreter, SHA-256,
//! arguments, inputs, trust level; [`ApprovalRequest::digests`]) — a changed script, or the
//! same script with other arguments or at another trust, asks again. One request lists
//! every script a call will run, and its answer holds for all of them. The pin covers each
//! entry script's bytes; files a script reads from its skill directory at run time (a
//! library it sources) are not part of the digest. The chat is the host's: put the user in
//! it (or in the world) when chats are not unique per user. No channel, `no`, a channel that fails or
//! does not answer within the timeout: not approved. Every skill-supplied string in an
//! [`ApprovalRequest`] is neutralised when the request is built. A request has no field
//! that could lower the sandbox's isolation.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use serde::Serialize;

use crate::hitl::{AnsweredBy, OptionRequest, OptionRuntime};
use crate::sandbox::neutralize;
use crate::time::{ThreadTimer, Timer, timeout};
use crate::trust::TrustLevel;

/// The three answers (seed 004 AD-7).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ApprovalOption {
    /// Run this once.
    YesOnce,
    /// Run, and run this very script (same hash) again in this session without asking.
    YesInSession,
    /// Do not run.
    No,
}

impl ApprovalOption {
    /// Every option, in the order shown to a person.
    pub const ALL: [ApprovalOption; 3] = [
        ApprovalOption::YesOnce,
        ApprovalOption::YesInSession,
        ApprovalOption::No,
    ];

    /// `yes_once`, `yes_in_session`, `no`.
    pub fn as_str(self) -> &'static str {
        match self {
            ApprovalOption::YesOnce => "yes_once",
            ApprovalOption::YesInSession => "yes_in_session",
            ApprovalOption::No => "no",
        }
    }

    /// Parses the wire form.
    pub fn parse(text: &str) -> Option<ApprovalOption> {
        ApprovalOption::ALL.into_iter().find(|o| o.as_str() == text)
    }
}

/// The session an approval belongs to: seed 004's `(world, chat)`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
pub struct SessionScope {
    /// The world (tenant, workspace).
    pub world: String,
    /// The chat (conversation).
    pub chat: String,
}

impl SessionScope {
    /// A scope.
    pub fn new(world: impl Into<String>, chat: impl Into<String>) -> SessionScope {
        SessionScope {
            world: world.into(),
            chat: chat.into(),
        }
    }
}

/// One script a person is asked to approve. Skill-supplied text is neutralised.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct ApprovalScript {
    /// The script's canonical absolute path.
    pub path: String,
    /// Its path relative to the skill.
    pub script: String,
    /// SHA-256 of its content (hex).
    pub sha256: String,
    /// The interpreter command (`python3 -I -B`).
    pub interpreter: String,
    /// The arguments.
    pub argv: Vec<String>,
    /// What else it is given: standard input and staged input files, each with its size
    /// (and digest for files), e.g. `stdin: 120 bytes`.
    pub inputs: Vec<String>,
    /// Scanner findings about the script (the host's scanner; may be empty).
    pub findings: Vec<String>,
}

impl ApprovalScript {
    /// A script to approve, neutralising every skill-supplied string.
    pub fn new(
        path: &str,
        script: &str,
        sha256: &str,
        interpreter: &str,
        argv: &[String],
        findings: &[String],
    ) -> ApprovalScript {
        ApprovalScript {
            path: clean(path),
            script: clean(script),
            sha256: clean(sha256),
            interpreter: clean(interpreter),
            argv: argv.iter().map(|a| clean(a)).collect(),
            inputs: Vec::new(),
            findings: findings.iter().map(|f| clean(f)).collect(),
        }
    }

    /// Adds descriptions of what else the script is given (neutralised).
    pub fn inputs(mut self, inputs: &[String]) -> ApprovalScript {
        self.inputs = inputs.iter().map(|i| clean(i)).collect();
        self
    }

    /// One line for a person: `scripts/a.sh (bash, sha256 9f86d0…) arg1 arg2`.
    pub fn describe(&self) -> String {
        let mut line = format!(
            "{} with {} (sha256 {})",
            self.script, self.interpreter, self.sha256
        );
        if !self.argv.is_empty() {
            line.push_str(&format!(", arguments: {}", self.argv.join(" ")));
        }
        if !self.inputs.is_empty() {
            line.push_str(&format!(", input: {}", self.inputs.join(", ")));
        }
        line
    }
}

fn clean(text: &str) -> String {
    neutralize(text.as_bytes())
}

/// What a person is asked to approve: every script one call will run (seed 004 AD-7: one
/// question per `load_skill` call, before any of them runs). Skill-supplied text is
/// neutralised.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct ApprovalRequest {
    /// The session.
    pub scope: SessionScope,
    /// The skill's id.
    pub skill: String,
    /// The skill's trust level.
    pub trust: TrustLevel,
    /// The scripts, in the order they will run.
    pub scripts: Vec<ApprovalScript>,
    /// The options offered, always all three.
    pub options: [ApprovalOption; 3],
    /// The skill id as given (the session cache's key; `skill` is for display).
    #[serde(skip)]
    skill_key: String,
}

impl ApprovalRequest {
    /// A request for one script, neutralising every skill-supplied string.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        scope: SessionScope,
        skill: &str,
        trust: TrustLevel,
        path: &str,
        script: &str,
        sha256: &str,
        interpreter: &str,
        argv: &[String],
        findings: &[String],
    ) -> ApprovalRequest {
        ApprovalRequest::for_scripts(
            scope,
            skill,
            trust,
            vec![ApprovalScript::new(
                path,
                script,
                sha256,
                interpreter,
                argv,
                findings,
            )],
        )
    }

    /// A request for every script of one call.
    pub fn for_scripts(
        scope: SessionScope,
        skill: &str,
        trust: TrustLevel,
        scripts: Vec<ApprovalScript>,
    ) -> ApprovalRequest {
        ApprovalRequest {
            scope,
            skill: clean(skill),
            trust,
            scripts,
            options: ApprovalOption::ALL,
            skill_key: skill.to_owned(),
        }
    }

    /// What a `yes_in_session` answer covers, one fingerprint per script, sorted and
    /// without repeats: the SHA-256 of everything the person was shown about it (its path,
    /// interpreter, content digest, arguments and inputs) and the trust level it runs at. A
    /// change to any of them asks again.
    pub fn digests(&self) -> Vec<String> {
        use sha2::Digest;
        let mut digests: Vec<String> = self
            .scripts
            .iter()
            .map(|s| {
                let mut hash = sha2::Sha256::new();
                for part in [self.trust.as_str(), &s.script, &s.interpreter]
                    .into_iter()
                    .chain([s.sha256.to_ascii_lowercase().as_str()])
                {
                    hash.update(part.as_bytes());
                    hash.update([0u8]);
                }
                for list in [&s.argv, &s.inputs] {
                    hash.update(list.len().to_le_bytes());
                    for item in list {
                        hash.update(item.len().to_le_bytes());
                        hash.update(item.as_bytes());
                    }
                }
                hash.finalize().iter().map(|b| format!("{b:02x}")).collect()
            })
            .collect();
        digests.sort();
        digests.dedup();
        digests
    }
}

/// The host's way to ask a person (a UI prompt, a CLI question, a web modal).
#[async_trait]
pub trait ApprovalChannel: Send + Sync {
    /// Asks; `None` when no answer can be given (no person present, channel closed).
    async fn ask(&self, request: &ApprovalRequest) -> Option<ApprovalOption>;
}

/// A channel that always answers the same: seed 004's non-interactive default response
/// (pipelines), and a convenience for tests. The safe default is [`ApprovalOption::No`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NonInteractive(pub ApprovalOption);

impl Default for NonInteractive {
    fn default() -> Self {
        NonInteractive(ApprovalOption::No)
    }
}

#[async_trait]
impl ApprovalChannel for NonInteractive {
    async fn ask(&self, _request: &ApprovalRequest) -> Option<ApprovalOption> {
        Some(self.0)
    }
}

/// Why a script may or may not run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ApprovalDecision {
    /// Approved by `yes_once`.
    ApprovedOnce,
    /// Approved by `yes_in_session` now.
    ApprovedForSession,
    /// Approved by an earlier `yes_in_session` for the same script hash.
    ApprovedFromCache,
    /// The person said no.
    Declined,
    /// No answer in time.
    TimedOut,
    /// No channel, or the channel gave no answer.
    NoChannel,
}

impl ApprovalDecision {
    /// Whether the script may run.
    pub fn approved(self) -> bool {
        matches!(
            self,
            ApprovalDecision::ApprovedOnce
                | ApprovalDecision::ApprovedForSession
                | ApprovalDecision::ApprovedFromCache
        )
    }

    /// The snake_case name.
    pub fn as_str(self) -> &'static str {
        match self {
            ApprovalDecision::ApprovedOnce => "approved_once",
            ApprovalDecision::ApprovedForSession => "approved_for_session",
            ApprovalDecision::ApprovedFromCache => "approved_from_cache",
            ApprovalDecision::Declined => "declined",
            ApprovalDecision::TimedOut => "timed_out",
            ApprovalDecision::NoChannel => "no_channel",
        }
    }
}

/// (world, chat, skill): the digests a `yes_in_session` answer covered there.
type SessionKey = (String, String, String);

/// Asks a person through an [`OptionRuntime`]: each approval becomes a
/// `hitl-option-request` (seed 004's three options, default `no`, the request itself as the
/// event's context) that any task can answer with `OptionRuntime::submit`. The runtime's
/// own timeout is left to [`Approvals`] (whose timeout ends the wait and expires the
/// request). Only a named person's answer is a yes (the runtime refuses an answer nobody
/// is named for); with [`to`](OptionChannel::to), only that person's, every other answer
/// being refused by the runtime while the question waits.
///
/// ```
/// use std::sync::Arc;
/// use skills_security::approval::{ApprovalDecision, ApprovalRequest, Approvals, OptionChannel, SessionScope};
/// use skills_security::hitl::OptionRuntime;
/// use skills_security::time::ThreadTimer;
/// use skills_security::TrustLevel;
///
/// # futures::executor::block_on(async {
/// let runtime = Arc::new(OptionRuntime::new(Arc::new(ThreadTimer::new())));
/// let approvals = Approvals::new(Arc::new(OptionChannel::new(runtime.clone())));
/// let request = ApprovalRequest::new(
///     SessionScope::new("acme", "chat-1"), "report", TrustLevel::User,
///     "/skills/report/scripts/build.sh", "scripts/build.sh", "9f86d0", "bash", &[], &[],
/// );
/// // The UI (another task) sees the pending request and answers it.
/// let ui = async {
///     loop {
///         if let Some(event) = runtime.pending("acme").first() {
///             return runtime.submit("acme", &event.request_id, "yes_once", Some("alice"));
///         }
///         futures::future::ready(()).await;
///     }
/// };
/// let (decision, answered) = futures::join!(approvals.decide(&request), ui);
/// answered.unwrap();
/// assert_eq!(decision, ApprovalDecision::ApprovedOnce);
/// # });
/// ```
#[derive(Debug, Clone)]
pub struct OptionChannel {
    runtime: Arc<OptionRuntime>,
    to: Option<String>,
}

impl OptionChannel {
    /// Asks through `runtime`, anyone named answering.
    pub fn new(runtime: Arc<OptionRuntime>) -> OptionChannel {
        OptionChannel { runtime, to: None }
    }

    /// Puts every question to `person` ([`OptionRequest::to`]): only their answer counts.
    pub fn to(mut self, person: impl Into<String>) -> OptionChannel {
        self.to = Some(person.into());
        self
    }
}

#[async_trait]
impl ApprovalChannel for OptionChannel {
    async fn ask(&self, request: &ApprovalRequest) -> Option<ApprovalOption> {
        let mut message = format!(
            "{} ({} trust) wants to run {} script{}:",
            request.skill,
            request.trust,
            request.scripts.len(),
            if request.scripts.len() == 1 { "" } else { "s" }
        );
        for script in &request.scripts {
            message.push_str(&format!("\n- {}", script.describe()));
            for finding in &script.findings {
                message.push_str(&format!("\n  Scanner: {finding}"));
            }
        }
        let question = OptionRequest::approval(
            request.scope.world.clone(),
            format!("Run the scripts of skill {}?", request.skill),
            message,
        )
        // Approvals' own timeout ends the wait first; this only bounds a lost future.
        .timeout(Duration::from_secs(24 * 3_600))
        .context(serde_json::to_value(request).unwrap_or(serde_json::Value::Null));
        let question = match &self.to {
            Some(person) => question.to(person.clone()),
            None => question,
        };
        let answer = self.runtime.request(question).await.ok()?;
        let option = ApprovalOption::parse(&answer.option)?;
        // A yes is a named person's (the runtime ends a request otherwise only with `no`).
        let named = matches!(&answer.answered_by, AnsweredBy::Person { by: Some(by) }
            if crate::hitl::names_someone(by)
                && self.to.as_ref().is_none_or(|to| to == by));
        (option == ApprovalOption::No || named).then_some(option)
    }
}

/// The approval gate: a channel, a timeout (on the host's [`Timer`]), and the
/// `yes_in_session` cache.
pub struct Approvals {
    channel: Option<Arc<dyn ApprovalChannel>>,
    timeout: Duration,
    timer: Arc<dyn Timer>,
    session: Mutex<HashMap<SessionKey, HashSet<String>>>,
}

impl std::fmt::Debug for Approvals {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Approvals")
            .field("channel", &self.channel.is_some())
            .field("timeout", &self.timeout)
            .finish_non_exhaustive()
    }
}

/// The default time a person has to answer.
pub const DEFAULT_APPROVAL_TIMEOUT: Duration = Duration::from_secs(120);

impl Approvals {
    /// A gate asking `channel`, with the default timeout.
    pub fn new(channel: Arc<dyn ApprovalChannel>) -> Approvals {
        Approvals {
            channel: Some(channel),
            timeout: DEFAULT_APPROVAL_TIMEOUT,
            timer: Arc::new(ThreadTimer::new()),
            session: Mutex::new(HashMap::new()),
        }
    }

    /// A gate without a channel: nothing is ever approved.
    pub fn without_channel() -> Approvals {
        Approvals {
            channel: None,
            timeout: DEFAULT_APPROVAL_TIMEOUT,
            timer: Arc::new(ThreadTimer::new()),
            session: Mutex::new(HashMap::new()),
        }
    }

    /// Sets the answer timeout (falls back to no).
    pub fn timeout(mut self, timeout: Duration) -> Approvals {
        self.timeout = timeout;
        self
    }

    /// Measures the timeout on `timer` (default [`ThreadTimer`]; a tokio host may pass its
    /// own). No runtime is required either way.
    pub fn timer(mut self, timer: Arc<dyn Timer>) -> Approvals {
        self.timer = timer;
        self
    }

    fn key(request: &ApprovalRequest) -> SessionKey {
        (
            request.scope.world.clone(),
            request.scope.chat.clone(),
            request.skill_key.clone(),
        )
    }

    /// Decides whether the scripts of `request` may run (all or none); see the module docs.
    /// A request with no script is declined without asking.
    pub async fn decide(&self, request: &ApprovalRequest) -> ApprovalDecision {
        let key = Self::key(request);
        let digests = request.digests();
        if digests.is_empty() {
            return ApprovalDecision::Declined;
        }
        // Covered when a `yes_in_session` in this (world, chat, skill) approved every one
        // of these digests: a changed script has a new digest and asks again.
        let covered = self.session.lock().is_ok_and(|s| {
            s.get(&key)
                .is_some_and(|approved| digests.iter().all(|d| approved.contains(d)))
        });
        if covered {
            return ApprovalDecision::ApprovedFromCache;
        }
        let Some(channel) = &self.channel else {
            return ApprovalDecision::NoChannel;
        };
        match timeout(self.timer.as_ref(), self.timeout, channel.ask(request)).await {
            None => ApprovalDecision::TimedOut,
            Some(None) => ApprovalDecision::NoChannel,
            Some(Some(ApprovalOption::No)) => ApprovalDecision::Declined,
            Some(Some(ApprovalOption::YesOnce)) => ApprovalDecision::ApprovedOnce,
            Some(Some(ApprovalOption::YesInSession)) => {
                if let Ok(mut s) = self.session.lock() {
                    s.entry(key).or_default().extend(digests);
                }
                ApprovalDecision::ApprovedForSession
            }
        }
    }

    /// Forgets the session approvals of `scope` (the chat ended).
    pub fn end_session(&self, scope: &SessionScope) {
        if let Ok(mut s) = self.session.lock() {
            s.retain(|(world, chat, _), _| !(world == &scope.world && chat == &scope.chat));
        }
    }
}

#[cfg(test)]
mod tests;
