//! Approvals: the session cache, the answers, neutralised text, the option channel.

use super::*;

fn request(sha: &str, chat: &str) -> ApprovalRequest {
    ApprovalRequest::new(
        SessionScope::new("w", chat),
        "skill\u{1b}[2J",
        TrustLevel::Community,
        "/s/scripts/a.sh",
        "scripts/a.sh",
        sha,
        "bash --noprofile --norc",
        &["\u{202e}x".to_owned()],
        &[],
    )
}

struct Counting(std::sync::atomic::AtomicUsize, ApprovalOption);

#[async_trait]
impl ApprovalChannel for Counting {
    async fn ask(&self, _r: &ApprovalRequest) -> Option<ApprovalOption> {
        self.0.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        Some(self.1)
    }
}

#[tokio::test]
async fn session_approval_is_scoped_to_chat_and_hash() {
    let channel = Arc::new(Counting(0.into(), ApprovalOption::YesInSession));
    let gate = Approvals::new(channel.clone());
    assert_eq!(
        gate.decide(&request("aa", "c1")).await,
        ApprovalDecision::ApprovedForSession
    );
    assert_eq!(
        gate.decide(&request("aa", "c1")).await,
        ApprovalDecision::ApprovedFromCache
    );
    assert_eq!(
        gate.decide(&request("bb", "c1")).await,
        ApprovalDecision::ApprovedForSession
    );
    assert_eq!(
        gate.decide(&request("aa", "c2")).await,
        ApprovalDecision::ApprovedForSession
    );
    assert_eq!(channel.0.load(std::sync::atomic::Ordering::SeqCst), 3);
    gate.end_session(&SessionScope::new("w", "c1"));
    assert_eq!(
        gate.decide(&request("aa", "c1")).await,
        ApprovalDecision::ApprovedForSession
    );
}

fn two(first: &str, second: &str) -> ApprovalRequest {
    let script = |name: &str, sha: &str| {
        ApprovalScript::new(&format!("/s/{name}"), name, sha, "bash", &[], &[])
    };
    ApprovalRequest::for_scripts(
        SessionScope::new("w", "c"),
        "skill",
        TrustLevel::User,
        vec![
            script("scripts/a.sh", first),
            script("scripts/b.sh", second),
        ],
    )
}

#[tokio::test]
async fn a_session_answer_covers_the_set_of_digests_and_a_changed_one_asks_again() {
    let channel = Arc::new(Counting(0.into(), ApprovalOption::YesInSession));
    let gate = Approvals::new(channel.clone());
    let asked = || channel.0.load(std::sync::atomic::Ordering::SeqCst);
    assert_eq!(
        gate.decide(&two("aa", "bb")).await,
        ApprovalDecision::ApprovedForSession
    );
    assert_eq!(asked(), 1, "one question for both scripts");
    assert_eq!(
        gate.decide(&two("aa", "bb")).await,
        ApprovalDecision::ApprovedFromCache
    );
    // One of the two changed: the whole call asks again.
    assert_eq!(
        gate.decide(&two("aa", "cc")).await,
        ApprovalDecision::ApprovedForSession
    );
    assert_eq!(asked(), 2);
    // Another skill in the same chat is not covered by this skill's answer.
    let mut other = two("aa", "bb");
    other.skill_key = "other".into();
    assert_eq!(
        gate.decide(&other).await,
        ApprovalDecision::ApprovedForSession
    );
    assert_eq!(asked(), 3);
    // Nothing to approve: declined without asking.
    let empty = ApprovalRequest::for_scripts(
        SessionScope::new("w", "c"),
        "skill",
        TrustLevel::User,
        Vec::new(),
    );
    assert_eq!(gate.decide(&empty).await, ApprovalDecision::Declined);
    assert_eq!(asked(), 3);
}

#[tokio::test]
async fn a_session_answer_covers_what_was_shown_not_just_the_digest() {
    let channel = Arc::new(Counting(0.into(), ApprovalOption::YesInSession));
    let gate = Approvals::new(channel.clone());
    let asked = || channel.0.load(std::sync::atomic::Ordering::SeqCst);
    let with = |skill: &str, trust: TrustLevel, script: &str, args: &[&str]| {
        let argv: Vec<String> = args.iter().map(|a| (*a).to_owned()).collect();
        ApprovalRequest::for_scripts(
            SessionScope::new("w", "c"),
            skill,
            trust,
            vec![ApprovalScript::new(
                "/s/x",
                script,
                "aa",
                "bash",
                &argv,
                &[],
            )],
        )
    };
    let dry = with("s", TrustLevel::Community, "scripts/a.sh", &["--dry-run"]);
    assert!(gate.decide(&dry).await.approved());
    assert_eq!(gate.decide(&dry).await, ApprovalDecision::ApprovedFromCache);
    assert_eq!(asked(), 1);
    // Same bytes, other arguments, another trust level, another path, or a skill id
    // that only looks the same once neutralised: each asks.
    for request in [
        with(
            "s",
            TrustLevel::Community,
            "scripts/a.sh",
            &["--delete-all"],
        ),
        with("s", TrustLevel::Core, "scripts/a.sh", &["--dry-run"]),
        with("s", TrustLevel::Community, "scripts/b.py", &["--dry-run"]),
        with(
            "s\u{1b}[0m",
            TrustLevel::Community,
            "scripts/a.sh",
            &["--dry-run"],
        ),
    ] {
        assert_eq!(
            gate.decide(&request).await,
            ApprovalDecision::ApprovedForSession
        );
    }
    assert_eq!(asked(), 5);
}

#[tokio::test]
async fn once_is_not_cached_and_no_is_no() {
    let gate = Approvals::new(Arc::new(NonInteractive(ApprovalOption::YesOnce)));
    assert_eq!(
        gate.decide(&request("aa", "c")).await,
        ApprovalDecision::ApprovedOnce
    );
    assert_eq!(
        gate.decide(&request("aa", "c")).await,
        ApprovalDecision::ApprovedOnce
    );
    let gate = Approvals::new(Arc::new(NonInteractive::default()));
    assert_eq!(
        gate.decide(&request("aa", "c")).await,
        ApprovalDecision::Declined
    );
    assert_eq!(
        Approvals::without_channel()
            .decide(&request("aa", "c"))
            .await,
        ApprovalDecision::NoChannel
    );
}

#[test]
fn skill_text_is_neutralised() {
    let r = request("aa", "c");
    assert_eq!(r.skill, "skill");
    assert_eq!(r.scripts[0].argv, ["\\u{202e}x"]);
    assert_eq!(
        ApprovalOption::parse("yes_in_session"),
        Some(ApprovalOption::YesInSession)
    );
    assert_eq!(ApprovalOption::parse("YES"), None);
}

/// Waits (on another thread) for the first pending request of `world`.
fn first_pending(runtime: &crate::hitl::OptionRuntime, world: &str) -> String {
    for _ in 0..10_000 {
        if let Some(event) = runtime.pending(world).first() {
            return event.request_id.clone();
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    panic!("nobody was asked");
}

#[test]
fn through_the_option_runtime_only_the_person_asked_approves() {
    use crate::hitl::{HitlError, OptionRuntime};
    let runtime = Arc::new(OptionRuntime::new(Arc::new(ThreadTimer::new())));
    let approvals = Approvals::new(Arc::new(OptionChannel::new(runtime.clone()).to("alice")));
    let answerer = {
        let runtime = runtime.clone();
        std::thread::spawn(move || {
            let id = first_pending(&runtime, "w");
            let event = runtime.pending("w").remove(0);
            assert_eq!(event.to.as_deref(), Some("alice"));
            // Nobody named, or somebody else: refused, the question still waits.
            assert_eq!(
                runtime.submit("w", &id, "yes_once", None),
                Err(HitlError::Unidentified { id: id.clone() })
            );
            assert_eq!(
                runtime.submit("w", &id, "yes_once", Some("mallory")),
                Err(HitlError::NotAddressee { id: id.clone() })
            );
            runtime.submit("w", &id, "yes_once", Some("alice"))
        })
    };
    let decision = futures::executor::block_on(approvals.decide(&request("aa", "c")));
    assert_eq!(answerer.join().unwrap(), Ok(()));
    assert_eq!(decision, ApprovalDecision::ApprovedOnce);
}
