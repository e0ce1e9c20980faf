//! The option runtime, one behaviour per test.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use futures::executor::block_on;

use super::*;
use crate::time::ThreadTimer;

fn runtime() -> Arc<OptionRuntime> {
    Arc::new(OptionRuntime::new(Arc::new(ThreadTimer::new())))
}

fn ask(id: &str) -> OptionRequest {
    OptionRequest::approval("w", "Run it?", "details").id(id)
}

/// Waits (on another thread) until `n` requests of `world` are pending.
fn wait_pending(runtime: &OptionRuntime, world: &str, n: usize) {
    for _ in 0..10_000 {
        if runtime.pending(world).len() >= n {
            return;
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    panic!("never saw {n} pending requests");
}

#[test]
fn an_answer_from_another_thread_ends_the_request_once() {
    let rt = runtime();
    let answerer = {
        let rt = rt.clone();
        std::thread::spawn(move || {
            wait_pending(&rt, "w", 1);
            // An option not offered is refused and the request stays pending.
            assert_eq!(
                rt.submit("w", "r1", "maybe", Some("bob")),
                Err(HitlError::OptionNotOffered {
                    id: "r1".into(),
                    option: "maybe".into()
                })
            );
            assert_eq!(rt.pending("w").len(), 1);
            rt.submit("w", "r1", "yes_in_session", Some("bob"))
        })
    };
    let answer = block_on(rt.request(ask("r1"))).unwrap();
    assert_eq!(answerer.join().unwrap(), Ok(()));
    assert_eq!(
        answer,
        OptionAnswer {
            request_id: "r1".into(),
            option: "yes_in_session".into(),
            answered_by: AnsweredBy::Person {
                by: Some("bob".into())
            },
        }
    );
    assert!(rt.pending("w").is_empty());
    assert_eq!(
        rt.submit("w", "r1", "no", Some("bob")),
        Err(HitlError::AlreadyAnswered { id: "r1".into() })
    );
    assert_eq!(
        rt.submit("w", "nope", "no", Some("bob")),
        Err(HitlError::UnknownRequest {
            world: "w".into(),
            id: "nope".into()
        })
    );
    // Ids are per world: the same id in another world is another request.
    assert!(matches!(
        rt.submit("other", "r1", "no", Some("bob")),
        Err(HitlError::UnknownRequest { .. })
    ));
}

#[test]
fn nobody_answering_gives_the_default_and_a_late_answer_is_refused() {
    let rt = runtime();
    let answer = block_on(rt.request(ask("r1").timeout(Duration::from_millis(20)))).unwrap();
    assert_eq!(
        (answer.option.as_str(), answer.answered_by),
        ("no", AnsweredBy::Timeout)
    );
    assert_eq!(
        rt.submit("w", "r1", "yes_once", Some("bob")),
        Err(HitlError::Expired { id: "r1".into() })
    );
}

#[test]
fn a_requester_that_stops_waiting_expires_its_request() {
    let rt = runtime();
    let mut future = Box::pin(rt.request(ask("r1")));
    // Poll once so it registers, then drop it.
    let waker = futures::task::noop_waker();
    let mut cx = std::task::Context::from_waker(&waker);
    assert!(future.as_mut().poll(&mut cx).is_pending());
    assert_eq!(rt.pending("w").len(), 1);
    drop(future);
    assert!(rt.pending("w").is_empty());
    assert_eq!(
        rt.submit("w", "r1", "yes_once", Some("bob")),
        Err(HitlError::Expired { id: "r1".into() })
    );
}

struct Recorder(std::sync::Mutex<Vec<OptionEvent>>);

impl OptionEvents for Recorder {
    fn emit(&self, event: &OptionEvent) {
        self.0.lock().unwrap().push(event.clone());
    }
}

#[test]
fn non_interactive_answers_the_default_at_once_and_still_emits() {
    let recorder = Arc::new(Recorder(Default::default()));
    let rt = OptionRuntime::new(Arc::new(ThreadTimer::new()))
        .events(recorder.clone())
        .non_interactive();
    let answer = block_on(rt.request(ask("r1"))).unwrap();
    assert_eq!(
        (answer.option.as_str(), answer.answered_by),
        ("no", AnsweredBy::NonInteractive)
    );
    let events = recorder.0.lock().unwrap().clone();
    assert_eq!(events.len(), 1);
    let json = serde_json::to_value(&events[0]).unwrap();
    assert_eq!(json["event_type"], "hitl-option-request");
    assert_eq!(json["request_id"], "r1");
    assert_eq!(json["options"][1]["id"], "yes_in_session");
    assert_eq!(
        rt.submit("w", "r1", "yes_once", Some("bob")),
        Err(HitlError::AlreadyAnswered { id: "r1".into() })
    );
}

#[test]
fn ids_are_unique_and_requests_are_checked() {
    let dup = OptionRuntime::new(Arc::new(ThreadTimer::new())).non_interactive();
    block_on(dup.request(ask("r1"))).unwrap();
    assert_eq!(
        block_on(dup.request(ask("r1"))),
        Err(HitlError::DuplicateRequest { id: "r1".into() })
    );
    let bad = [
        OptionRequest::new("w", "t", "m", vec![], "no"),
        OptionRequest::new(
            "w",
            "t",
            "m",
            vec![
                OptionChoice::new("a", "A"),
                OptionChoice::new("a", "A again"),
            ],
            "a",
        ),
        OptionRequest::new("w", "t", "m", vec![OptionChoice::new("a", "A")], "b"),
        OptionRequest::approval("w", "t", "m").id(""),
    ];
    for request in bad {
        assert!(matches!(
            block_on(dup.request(request)),
            Err(HitlError::InvalidRequest { .. })
        ));
    }
    // Made-up ids are unique.
    let a = block_on(dup.request(OptionRequest::approval("w", "t", "m"))).unwrap();
    let b = block_on(dup.request(OptionRequest::approval("w", "t", "m"))).unwrap();
    assert_ne!(a.request_id, b.request_id);
}

#[test]
fn shown_text_is_neutralised() {
    let rt = OptionRuntime::new(Arc::new(ThreadTimer::new())).non_interactive();
    let recorder = Arc::new(Recorder(Default::default()));
    let rt = rt.events(recorder.clone());
    block_on(rt.request(OptionRequest::approval("w", "Run\u{1b}[2J?", "a\u{202e}b").id("x")))
        .unwrap();
    let event = recorder.0.lock().unwrap()[0].clone();
    assert!(!event.title.contains('\u{1b}') && !event.message.contains('\u{202e}'));
}

#[test]
fn many_pending_requests_answered_out_of_order_each_get_their_own_answer() {
    const N: usize = 200;
    let rt = runtime();
    let answered = Arc::new(AtomicUsize::new(0));
    let answerer = {
        let (rt, answered) = (rt.clone(), answered.clone());
        std::thread::spawn(move || {
            wait_pending(&rt, "w", N);
            let mut ids: Vec<usize> = (0..N).collect();
            // A fixed shuffle: odd ids from the end, then even ones from the start.
            ids.sort_by_key(|i| if i % 2 == 1 { (0, N - i) } else { (1, *i) });
            for i in ids {
                let option = if i % 3 == 0 { "yes_once" } else { "no" };
                rt.submit("w", &format!("r{i}"), option, Some("bob"))
                    .unwrap();
                answered.fetch_add(1, Ordering::SeqCst);
            }
        })
    };
    let requests = (0..N).map(|i| rt.request(ask(&format!("r{i}"))));
    let answers = block_on(futures::future::join_all(requests));
    answerer.join().unwrap();
    assert_eq!(answered.load(Ordering::SeqCst), N);
    for (i, answer) in answers.into_iter().enumerate() {
        let answer = answer.unwrap();
        assert_eq!(answer.request_id, format!("r{i}"));
        let want = if i % 3 == 0 { "yes_once" } else { "no" };
        assert_eq!(answer.option, want, "r{i}");
        assert!(matches!(answer.answered_by, AnsweredBy::Person { .. }));
    }
    assert!(rt.pending("w").is_empty());
}

#[test]
fn an_answer_nobody_is_named_for_is_refused_and_the_request_waits() {
    let rt = runtime();
    let answerer = {
        let rt = rt.clone();
        std::thread::spawn(move || {
            wait_pending(&rt, "w", 1);
            for nobody in [None, Some(""), Some(" "), Some("bob "), Some("bo\u{0}b")] {
                assert_eq!(
                    rt.submit("w", "r1", "yes_once", nobody),
                    Err(HitlError::Unidentified { id: "r1".into() }),
                    "{nobody:?}"
                );
                assert_eq!(rt.pending("w").len(), 1, "still pending");
            }
            rt.submit("w", "r1", "no", Some("bob"))
        })
    };
    let answer = block_on(rt.request(ask("r1"))).unwrap();
    assert_eq!(answerer.join().unwrap(), Ok(()));
    assert_eq!(
        (answer.option.as_str(), answer.answered_by),
        (
            "no",
            AnsweredBy::Person {
                by: Some("bob".into())
            }
        )
    );
}

#[test]
fn a_question_put_to_someone_is_answered_by_them_only() {
    let rt = runtime();
    let answerer = {
        let rt = rt.clone();
        std::thread::spawn(move || {
            wait_pending(&rt, "w", 1);
            let event = rt.pending("w").remove(0);
            assert_eq!(event.to.as_deref(), Some("alice"));
            for other in ["mallory", "Alice", "alice2"] {
                assert_eq!(
                    rt.submit("w", "r1", "yes_once", Some(other)),
                    Err(HitlError::NotAddressee { id: "r1".into() }),
                    "{other}"
                );
            }
            assert_eq!(rt.pending("w").len(), 1, "still pending");
            rt.submit("w", "r1", "yes_in_session", Some("alice"))
        })
    };
    let answer = block_on(rt.request(ask("r1").to("alice"))).unwrap();
    assert_eq!(answerer.join().unwrap(), Ok(()));
    assert_eq!(answer.option, "yes_in_session");
    assert_eq!(
        answer.answered_by,
        AnsweredBy::Person {
            by: Some("alice".into())
        }
    );
    // A request is put to someone named, or to no one in particular.
    for nobody in ["", " alice"] {
        assert!(matches!(
            block_on(rt.request(ask("r2").to(nobody))),
            Err(HitlError::InvalidRequest { .. })
        ));
    }
}
