//! Detonation's tests: what a run observed (credential reads, connections, a canary on the
//! wire, a dropped program, nothing at all) as findings and a verdict, each run pinned to
//! the bytes scanned.

use super::*;

fn run(observations: Vec<Observation>) -> ScriptRun {
    ScriptRun {
        script: "scripts/x.py".into(),
        status: Status::Success,
        tier: Some(Tier::Namespaced),
        observed: true,
        observations,
        observations_dropped: 0,
        duration_ms: 1,
    }
}

fn verdict(observations: Vec<Observation>) -> super::super::Verdict {
    ScanReport::from_findings(findings_for(&run(observations))).verdict
}

fn connect(address: &str, port: u16) -> Observation {
    Observation::Connect {
        family: "ipv4".into(),
        address: address.into(),
        port,
    }
}

fn read(path: &str) -> Observation {
    Observation::CredentialRead {
        path: path.into(),
        decoy: true,
    }
}

#[test]
fn credential_read_and_network_blocks_and_each_alone_does_not() {
    use super::super::Verdict;
    let key = read("~/.ssh/id_rsa");
    let out = connect("203.0.113.7", 443);
    assert_eq!(verdict(vec![key.clone(), out.clone()]), Verdict::Block);
    assert_eq!(verdict(vec![key]), Verdict::Review);
    assert_eq!(verdict(vec![out.clone()]), Verdict::Clean, "an API client");
    assert_eq!(verdict(vec![read(DOTENV), out.clone()]), Verdict::Review);
    assert_eq!(verdict(vec![read(DOTENV)]), Verdict::Clean);
    // A package manager reads its registry token, then reaches its registry: not theft
    // (the token going out would block, below); with a private key beside it, theft.
    let npmrc = read("~/.npmrc");
    assert_eq!(verdict(vec![npmrc.clone()]), Verdict::Clean);
    assert_eq!(verdict(vec![npmrc.clone(), out.clone()]), Verdict::Clean);
    assert_eq!(
        verdict(vec![npmrc, read("~/.aws/credentials"), out.clone()]),
        Verdict::Block
    );
    // Git's credential store and the cluster login are secrets wherever they go.
    for secret in ["~/.git-credentials", "~/.kube/config"] {
        assert_eq!(verdict(vec![read(secret), out.clone()]), Verdict::Block);
    }
    // A credential-looking path outside the decoys (refused) is never a tool's own.
    let outside = Observation::CredentialRead {
        path: "~/.npmrc".into(),
        decoy: false,
    };
    assert_eq!(verdict(vec![outside]), Verdict::Review);
    // The resolver's own loopback connect is not a connection.
    assert_eq!(
        verdict(vec![read("~/.ssh/id_rsa"), connect("127.0.0.1", 53)]),
        Verdict::Review
    );
    assert_eq!(verdict(vec![]), Verdict::Clean);
}

#[test]
fn a_canary_on_the_wire_blocks_and_a_dropped_program_asks_for_review() {
    use super::super::Verdict;
    let dns = Observation::DnsLookup {
        name: "abc.example".into(),
        carries_decoy: true,
    };
    assert_eq!(verdict(vec![dns]), Verdict::Block);
    let dropped = Observation::ProgramStarted {
        path: "/tmp/r/home/payload".into(),
        argv: vec!["payload".into()],
        dropped: true,
        allowed: true,
    };
    assert_eq!(verdict(vec![dropped]), Verdict::Review);
    let plain = Observation::ProgramStarted {
        path: "/usr/bin/ls".into(),
        argv: vec!["ls".into()],
        dropped: false,
        allowed: true,
    };
    assert_eq!(verdict(vec![plain]), Verdict::Clean);
}

#[test]
fn nothing_observed_is_never_a_clean_detonation() {
    let mut unobserved = run(Vec::new());
    unobserved.observed = false;
    unobserved.status = Status::SandboxUnavailable {
        reason: "no Landlock".into(),
    };
    let d = summarise(vec![unobserved]);
    assert!(
        matches!(d.state, DetonationState::NotDetonated { .. }),
        "{d:?}"
    );
    assert_eq!(summarise(Vec::new()).state, DetonationState::NoScripts);
}
#[test]
fn each_run_is_pinned_to_the_bytes_that_were_scanned() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let scripts = dir.path().join("scripts");
    std::fs::create_dir_all(&scripts).unwrap_or_else(|e| panic!("{e}"));
    std::fs::write(
        dir.path().join("SKILL.md"),
        "---\nname: s\ndescription: d\n---\nRun `scripts/a.py`.\n",
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let body = b"print('hi')\n";
    std::fs::write(scripts.join("a.py"), body).unwrap_or_else(|e| panic!("{e}"));
    let sandbox = crate::sandbox::ScriptedSandbox::new();
    sandbox.push(Status::Success, "", "");
    futures::executor::block_on(Scanner::new().detonate(
        dir.path(),
        &sandbox,
        &DetonationOptions::default(),
    ))
    .unwrap_or_else(|e| panic!("{e}"));
    let requests = sandbox.requests();
    let [request] = requests.as_slice() else {
        panic!("{requests:?}");
    };
    let Program::Script { path, sha256 } = &request.program else {
        panic!("{request:?}");
    };
    assert_eq!(path, "scripts/a.py");
    assert_eq!(
        sha256.as_deref(),
        Some(crate::audit::sha256_hex(body).as_str())
    );
}
