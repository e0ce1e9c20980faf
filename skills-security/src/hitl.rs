//! The option runtime (seed 004 AD-6): a person answers a request from anywhere (a web
//! page, a chat message, a CLI prompt, another task), not through a blocking callback.
//!
//! A request carries any list of options (seed 004's `yes_once` / `yes_in_session` / `no`
//! is one preset, [`OptionRequest::approval`]) and a default. [`OptionRuntime::request`]
//! gives it an id unique in its world, emits it as a serializable `hitl-option-request`
//! [`OptionEvent`] to the host's [`OptionEvents`] (which forwards it to its UI), lists it in
//! [`pending`](OptionRuntime::pending), and waits. Whoever holds the answer calls
//! [`submit`](OptionRuntime::submit) with the world and id, and says who answered; a
//! request may be put to one party ([`OptionRequest::to`]).
//!
//! Threat: a run hanging on a request nobody answers; a late, repeated or forged answer
//! deciding something; an answer nobody can be named for, or from someone the question
//! was not put to (any task that learns a request id could otherwise answer it); an answer
//! naming an option that was never offered; a host forced onto one async runtime.
//! Guarantee: a request ends exactly once, by the first of an answer from a named party
//! (the one it was put to, when it names one) naming one of its options, its timeout (its
//! default, measured on the host's [`Timer`]), or its requester dropping the wait; the
//! answer records who gave it ([`AnsweredBy::Person`]). An answer naming nobody (no name,
//! an empty one, one with surrounding whitespace or control characters), from another
//! party than the addressee, a second answer, an answer to an unknown or ended id, or an
//! option not offered is a typed [`HitlError`] and changes nothing (a pending request
//! stays pending); in non-interactive mode every request ends at once with its default.
//! Nothing here picks a runtime. The runtime trusts the host's naming of the answerer:
//! authenticating the person is the host's (its session, its chat identity).
//!
//! ```
//! use std::sync::Arc;
//! use std::time::Duration;
//! use skills_security::hitl::{AnsweredBy, OptionRequest, OptionRuntime};
//! use skills_security::time::ThreadTimer;
//!
//! # futures::executor::block_on(async {
//! let runtime = Arc::new(OptionRuntime::new(Arc::new(ThreadTimer::new())));
//! let request = OptionRequest::approval("acme", "Run scripts/build.sh?", "sha256 9f86d0...")
//!     .id("req-1")
//!     .timeout(Duration::from_secs(60));
//! // Another task (a web handler, say) answers while this one waits.
//! let answerer = runtime.clone();
//! let answer = async move {
//!     while answerer.pending("acme").is_empty() {
//!         futures::future::ready(()).await; // (a real host answers when its user clicks)
//!     }
//!     answerer.submit("acme", "req-1", "yes_once", Some("alice"))
//! };
//! let (asked, submitted) = futures::join!(runtime.request(request), answer);
//! submitted?;
//! let asked = asked?;
//! assert_eq!(asked.option, "yes_once");
//! assert_eq!(asked.answered_by, AnsweredBy::Person { by: Some("alice".into()) });
//! // Answering again is an error, not a second decision.
//! assert!(runtime.submit("acme", "req-1", "no", Some("alice")).is_err());
//! # Ok::<(), skills_security::hitl::HitlError>(())
//! # }).unwrap();
//! ```

use std::collections::{HashMap, VecDeque};
use std::fmt;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use futures::channel::oneshot;
use futures::future::{Either, select};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::sandbox::neutralize;
use crate::time::Timer;

/// The event type of a request, as seed 004 names it.
pub const HITL_OPTION_REQUEST: &str = "hitl-option-request";

/// How long a person has by default.
pub const DEFAULT_OPTION_TIMEOUT: Duration = Duration::from_secs(120);

/// How many ended requests a runtime remembers (to tell a late answer from an unknown id).
const REMEMBERED_ENDED: usize = 4_096;

/// One answer a person can give.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OptionChoice {
    /// What `submit` names (`yes_once`).
    pub id: String,
    /// What to show (`Yes, this time`).
    pub label: String,
}

impl OptionChoice {
    /// An option.
    pub fn new(id: impl Into<String>, label: impl Into<String>) -> OptionChoice {
        OptionChoice {
            id: id.into(),
            label: label.into(),
        }
    }
}

/// A question for a person.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct OptionRequest {
    /// The world (tenant, workspace) it belongs to; ids are unique within it.
    pub world: String,
    /// The id to use; `None` lets the runtime make one.
    pub request_id: Option<String>,
    /// The question.
    pub title: String,
    /// Details (neutralised: no control, escape or bidi characters reach a screen).
    pub message: String,
    /// The answers offered, in order.
    pub options: Vec<OptionChoice>,
    /// The answer when nobody answers in time (one of `options`).
    pub default_option: String,
    /// How long a person has.
    pub timeout: Duration,
    /// Whatever the host's UI needs besides (the approval request, for instance).
    pub context: Value,
    /// The party the question is put to (`None`: any named party may answer).
    pub to: Option<String>,
}

impl OptionRequest {
    /// A question in `world` offering `options`, `default_option` when nobody answers.
    pub fn new(
        world: impl Into<String>,
        title: impl Into<String>,
        message: impl Into<String>,
        options: Vec<OptionChoice>,
        default_option: impl Into<String>,
    ) -> OptionRequest {
        OptionRequest {
            world: world.into(),
            request_id: None,
            title: title.into(),
            message: message.into(),
            options,
            default_option: default_option.into(),
            timeout: DEFAULT_OPTION_TIMEOUT,
            context: Value::Null,
            to: None,
        }
    }

    /// Seed 004's preset: `yes_once`, `yes_in_session`, `no`, defaulting to `no`.
    pub fn approval(
        world: impl Into<String>,
        title: impl Into<String>,
        message: impl Into<String>,
    ) -> OptionRequest {
        OptionRequest::new(
            world,
            title,
            message,
            vec![
                OptionChoice::new("yes_once", "Yes, this time"),
                OptionChoice::new("yes_in_session", "Yes, for this session"),
                OptionChoice::new("no", "No"),
            ],
            "no",
        )
    }

    /// With this id.
    pub fn id(mut self, id: impl Into<String>) -> Self {
        self.request_id = Some(id.into());
        self
    }

    /// With this timeout.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// With this context for the UI.
    pub fn context(mut self, context: Value) -> Self {
        self.context = context;
        self
    }

    /// Put to `party`: only an answer `submit`ted by `party` ends it.
    pub fn to(mut self, party: impl Into<String>) -> Self {
        self.to = Some(party.into());
        self
    }

    fn check(&self) -> Result<(), HitlError> {
        let invalid = |reason: &str| {
            Err(HitlError::InvalidRequest {
                reason: reason.to_owned(),
            })
        };
        if self.options.is_empty() {
            return invalid("a request offers at least one option");
        }
        for (i, option) in self.options.iter().enumerate() {
            if option.id.is_empty() || self.options[..i].iter().any(|o| o.id == option.id) {
                return invalid("option ids are non-empty and unique");
            }
        }
        if !self.options.iter().any(|o| o.id == self.default_option) {
            return invalid("the default is one of the options");
        }
        if self.request_id.as_deref() == Some("") {
            return invalid("a request id is non-empty");
        }
        if self.to.as_deref().is_some_and(|to| !names_someone(to)) {
            return invalid("the party a request is put to is named");
        }
        Ok(())
    }
}

/// A request as the host's UI receives it (and as [`OptionRuntime::pending`] lists it).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct OptionEvent {
    /// Always [`HITL_OPTION_REQUEST`].
    pub event_type: String,
    /// The world.
    pub world: String,
    /// The id `submit` names.
    pub request_id: String,
    /// The question.
    pub title: String,
    /// Details, neutralised.
    pub message: String,
    /// The answers offered.
    pub options: Vec<OptionChoice>,
    /// The answer if nobody answers in time.
    pub default_option: String,
    /// How long a person has, in milliseconds.
    pub timeout_ms: u64,
    /// The request's context.
    pub context: Value,
    /// The party it is put to, when it names one (only their answer counts).
    #[serde(default)]
    pub to: Option<String>,
}

/// Where requests go as they are made: the host forwards them to its UI.
pub trait OptionEvents: Send + Sync {
    /// One new request. Called outside the runtime's lock; must not block for long.
    fn emit(&self, event: &OptionEvent);
}

/// Who ended a request.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum AnsweredBy {
    /// A person, through `submit`.
    Person {
        /// Who answered, as the host names them: always named (`submit` refuses an answer
        /// nobody is named for).
        by: Option<String>,
    },
    /// Nobody in time: the default.
    Timeout,
    /// The runtime is non-interactive: the default, at once.
    NonInteractive,
}

/// The answer a request got.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OptionAnswer {
    /// The request's id.
    pub request_id: String,
    /// The option's id.
    pub option: String,
    /// Who ended it.
    pub answered_by: AnsweredBy,
}

/// Why a request or an answer was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum HitlError {
    /// The request cannot be asked (no options, duplicate option ids, a default not offered).
    #[error("invalid request: {reason}")]
    InvalidRequest {
        /// Why.
        reason: String,
    },
    /// The world already has a request with this id.
    #[error("request `{id}` already exists")]
    DuplicateRequest {
        /// The id.
        id: String,
    },
    /// No request with this id (in this world) was ever made, or it was long forgotten.
    #[error("no request `{id}` in world `{world}`")]
    UnknownRequest {
        /// The world.
        world: String,
        /// The id.
        id: String,
    },
    /// The request was answered already.
    #[error("request `{id}` was already answered")]
    AlreadyAnswered {
        /// The id.
        id: String,
    },
    /// The request ended without an answer (timed out, or its requester stopped waiting).
    #[error("request `{id}` has expired")]
    Expired {
        /// The id.
        id: String,
    },
    /// The answer names nobody: no name, an empty one, or one with surrounding whitespace
    /// or control characters.
    #[error("an answer to request `{id}` must say who gave it")]
    Unidentified {
        /// The id.
        id: String,
    },
    /// The answer comes from another party than the one the request was put to.
    #[error("request `{id}` was not put to this party")]
    NotAddressee {
        /// The id.
        id: String,
    },
    /// The answer names an option the request did not offer.
    #[error("request `{id}` does not offer `{option}`")]
    OptionNotOffered {
        /// The id.
        id: String,
        /// The option named.
        option: String,
    },
}

type Key = (String, String);
type Reply = (String, String);

/// Whether `id` names a party: non-empty, without surrounding whitespace or control
/// characters (`"alice "` is not a way to be someone other than `alice`).
pub(crate) fn names_someone(id: &str) -> bool {
    !id.is_empty() && id.trim() == id && !id.chars().any(char::is_control)
}

struct Pending {
    event: OptionEvent,
    sequence: u64,
    reply: oneshot::Sender<Reply>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ended {
    Answered,
    Expired,
}

#[derive(Default)]
struct State {
    pending: HashMap<Key, Pending>,
    ended: HashMap<Key, Ended>,
    order: VecDeque<Key>,
    sequence: u64,
}

impl State {
    fn end(&mut self, key: Key, how: Ended) {
        if self.ended.insert(key.clone(), how).is_none() {
            self.order.push_back(key);
        }
        while self.order.len() > REMEMBERED_ENDED {
            if let Some(old) = self.order.pop_front() {
                self.ended.remove(&old);
            }
        }
    }
}

/// Requests, pending answers and timeouts; see the module docs. Share it (`Arc`) between
/// the tasks that ask and those that answer.
pub struct OptionRuntime {
    timer: Arc<dyn Timer>,
    events: Option<Arc<dyn OptionEvents>>,
    interactive: bool,
    state: Mutex<State>,
}

impl fmt::Debug for OptionRuntime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OptionRuntime")
            .field("interactive", &self.interactive)
            .field("events", &self.events.is_some())
            .finish_non_exhaustive()
    }
}

/// Ends a request as expired if its requester stops waiting before it ended.
struct WaitGuard<'a> {
    runtime: &'a OptionRuntime,
    key: Option<Key>,
}

impl Drop for WaitGuard<'_> {
    fn drop(&mut self) {
        if let Some(key) = self.key.take() {
            let mut state = self.runtime.lock();
            if state.pending.remove(&key).is_some() {
                state.end(key, Ended::Expired);
            }
        }
    }
}

impl OptionRuntime {
    /// An interactive runtime timing requests out on `timer`.
    pub fn new(timer: Arc<dyn Timer>) -> OptionRuntime {
        OptionRuntime {
            timer,
            events: None,
            interactive: true,
            state: Mutex::new(State::default()),
        }
    }

    /// Emits every request to `events`.
    pub fn events(mut self, events: Arc<dyn OptionEvents>) -> OptionRuntime {
        self.events = Some(events);
        self
    }

    /// Answers every request with its default at once (pipelines, CI): seed 004's
    /// non-interactive mode. Requests are still emitted, so a log shows them.
    pub fn non_interactive(mut self) -> OptionRuntime {
        self.interactive = false;
        self
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Asks `request` and waits for its end: an answer, the timeout (its default), or, in
    /// non-interactive mode, its default at once. Dropping the future ends the request as
    /// expired.
    ///
    /// # Errors
    ///
    /// [`HitlError::InvalidRequest`], [`HitlError::DuplicateRequest`].
    pub async fn request(&self, request: OptionRequest) -> Result<OptionAnswer, HitlError> {
        request.check()?;
        let request_id = request
            .request_id
            .clone()
            .unwrap_or_else(|| uuid::Uuid::new_v4().to_string());
        let key = (request.world.clone(), request_id.clone());
        let event = OptionEvent {
            event_type: HITL_OPTION_REQUEST.to_owned(),
            world: request.world.clone(),
            request_id: request_id.clone(),
            title: neutralize(request.title.as_bytes()),
            message: neutralize(request.message.as_bytes()),
            options: request.options.clone(),
            default_option: request.default_option.clone(),
            timeout_ms: u64::try_from(request.timeout.as_millis()).unwrap_or(u64::MAX),
            context: request.context.clone(),
            to: request.to.clone(),
        };
        let (sender, receiver) = oneshot::channel();
        {
            let mut state = self.lock();
            if state.pending.contains_key(&key) || state.ended.contains_key(&key) {
                return Err(HitlError::DuplicateRequest { id: request_id });
            }
            if !self.interactive {
                state.end(key.clone(), Ended::Answered);
            } else {
                state.sequence += 1;
                let sequence = state.sequence;
                state.pending.insert(
                    key.clone(),
                    Pending {
                        event: event.clone(),
                        sequence,
                        reply: sender,
                    },
                );
            }
        }
        if let Some(events) = &self.events {
            events.emit(&event);
        }
        let default = |answered_by| OptionAnswer {
            request_id: request_id.clone(),
            option: request.default_option.clone(),
            answered_by,
        };
        if !self.interactive {
            return Ok(default(AnsweredBy::NonInteractive));
        }
        let mut guard = WaitGuard {
            runtime: self,
            key: Some(key.clone()),
        };
        let answered = |(option, by): Reply| OptionAnswer {
            request_id: request_id.clone(),
            option,
            answered_by: AnsweredBy::Person { by: Some(by) },
        };
        let outcome = match select(receiver, self.timer.sleep(request.timeout)).await {
            Either::Left((Ok(reply), _)) => answered(reply),
            Either::Left((Err(_), _)) => default(AnsweredBy::Timeout),
            Either::Right(((), mut receiver)) => {
                let mut state = self.lock();
                if state.pending.remove(&key).is_some() {
                    state.end(key, Ended::Expired);
                    default(AnsweredBy::Timeout)
                } else {
                    // Answered between the timeout and the lock: the answer stands.
                    match receiver.try_recv() {
                        Ok(Some(reply)) => answered(reply),
                        _ => default(AnsweredBy::Timeout),
                    }
                }
            }
        };
        guard.key = None;
        Ok(outcome)
    }

    /// Answers request `request_id` of `world` with `option` on behalf of `by` (who, as
    /// the host names them; required). The waiting requester gets it.
    ///
    /// # Errors
    ///
    /// [`HitlError::Unidentified`] (checked first, whatever the id),
    /// [`HitlError::NotAddressee`], [`HitlError::OptionNotOffered`] (in those three the
    /// request stays pending), [`HitlError::AlreadyAnswered`], [`HitlError::Expired`],
    /// [`HitlError::UnknownRequest`].
    pub fn submit(
        &self,
        world: &str,
        request_id: &str,
        option: &str,
        by: Option<&str>,
    ) -> Result<(), HitlError> {
        let Some(by) = by.filter(|by| names_someone(by)) else {
            return Err(HitlError::Unidentified {
                id: request_id.to_owned(),
            });
        };
        let key = (world.to_owned(), request_id.to_owned());
        let mut state = self.lock();
        let Some(pending) = state.pending.get(&key) else {
            return Err(match state.ended.get(&key) {
                Some(Ended::Answered) => HitlError::AlreadyAnswered {
                    id: request_id.to_owned(),
                },
                Some(Ended::Expired) => HitlError::Expired {
                    id: request_id.to_owned(),
                },
                None => HitlError::UnknownRequest {
                    world: world.to_owned(),
                    id: request_id.to_owned(),
                },
            });
        };
        if pending.event.to.as_deref().is_some_and(|to| to != by) {
            return Err(HitlError::NotAddressee {
                id: request_id.to_owned(),
            });
        }
        if !pending.event.options.iter().any(|o| o.id == option) {
            return Err(HitlError::OptionNotOffered {
                id: request_id.to_owned(),
                option: option.to_owned(),
            });
        }
        let Some(pending) = state.pending.remove(&key) else {
            return Err(HitlError::UnknownRequest {
                world: world.to_owned(),
                id: request_id.to_owned(),
            });
        };
        state.end(key, Ended::Answered);
        drop(state);
        // A requester that stopped waiting in this instant has nobody to tell.
        let _ = pending.reply.send((option.to_owned(), by.to_owned()));
        Ok(())
    }

    /// The requests of `world` waiting for an answer, oldest first.
    pub fn pending(&self, world: &str) -> Vec<OptionEvent> {
        let state = self.lock();
        let mut pending: Vec<(u64, OptionEvent)> = state
            .pending
            .iter()
            .filter(|((w, _), _)| w == world)
            .map(|(_, p)| (p.sequence, p.event.clone()))
            .collect();
        pending.sort_by_key(|(sequence, _)| *sequence);
        pending.into_iter().map(|(_, event)| event).collect()
    }
}

#[cfg(test)]
mod tests;
