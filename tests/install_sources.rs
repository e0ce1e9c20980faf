//! Each skill source against its fake: a directory tree, archives, and a git host and an
//! npm registry served by a tiny HTTP/1.1 server on 127.0.0.1, reached through a minimal
//! real HTTP client. Hostile answers (traversal, links, oversized bodies, rate limits,
//! integrity mismatches, foreign tarball hosts) are refused with typed errors.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod install_common;

use std::sync::Arc;

use install_common::{Entry, FakeServer, LoopbackHttp, base64, run, skill_md, tar_gz, write_skill};
use serde_json::json;
use skills::install::digest::npm_integrity;
use skills::install::{
    ArchiveSource, Error, GitHubSource, LocalSource, NpmSource, PackageLimits, SkillSource,
    SourceKind,
};

fn paths(package: &skills::install::SkillPackage) -> Vec<&str> {
    package.files().iter().map(|f| f.path.as_str()).collect()
}

// ---------------------------------------------------------------------------------------
// Local directories.

#[test]
fn local_source_searches_fetches_and_lists_versions() {
    let root = tempfile::tempdir().unwrap();
    let pdf = skill_md(
        "pdf-tools",
        "Extract text from PDF files.",
        "1.4.0",
        "Use it.\n",
    );
    write_skill(
        root.path(),
        "pdf-tools",
        &[("SKILL.md", &pdf), ("scripts/extract.py", "print('x')\n")],
    );
    let csv = skill_md("csv-tools", "Clean CSV tables.", "0.1.0", "Use it.\n");
    write_skill(root.path(), "csv-tools", &[("SKILL.md", &csv)]);
    std::fs::create_dir(root.path().join("not-a-skill")).unwrap();
    let source = LocalSource::new(root.path());

    let found = run(source.search("pdf")).unwrap();
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].locator, "pdf-tools");
    assert_eq!(found[0].version.as_deref(), Some("1.4.0"));
    assert_eq!(found[0].kind, SourceKind::Local);
    let all = run(source.search("")).unwrap();
    let names: Vec<&str> = all.iter().map(|r| r.name.as_str()).collect();
    assert_eq!(names, ["csv-tools", "pdf-tools"], "sorted, skills only");

    let package = run(source.fetch("pdf-tools", None)).unwrap();
    assert_eq!(paths(&package), ["SKILL.md", "scripts/extract.py"]);
    assert_eq!(package.version(), Some("1.4.0"));
    assert_eq!(package.source().trust_path, "local/pdf-tools");
    assert_eq!(run(source.versions("pdf-tools")).unwrap(), ["1.4.0"]);
    assert!(matches!(
        run(source.fetch("pdf-tools", Some("9.9.9"))),
        Err(Error::NotFound { .. })
    ));
    assert!(matches!(
        run(source.fetch("missing", None)),
        Err(Error::NotFound { .. })
    ));
}

#[test]
fn local_source_refuses_escapes_and_symlinks() {
    let root = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    let md = skill_md("victim", "A skill.", "1.0.0", "x\n");
    write_skill(outside.path(), "victim", &[("SKILL.md", &md)]);
    let source = LocalSource::new(root.path());
    for bad in ["../victim", "/etc", "a\\..\\b", "./x"] {
        assert!(
            matches!(run(source.fetch(bad, None)), Err(Error::UnsafePath { .. })),
            "{bad}"
        );
    }
    // A skill directory that is a symlink is refused, and so is a symlink inside one.
    std::os::unix::fs::symlink(outside.path().join("victim"), root.path().join("linked")).unwrap();
    assert!(matches!(
        run(source.fetch("linked", None)),
        Err(Error::UnsupportedEntry { .. })
    ));
    write_skill(
        root.path(),
        "leaky",
        &[("SKILL.md", &skill_md("leaky", "Leaks.", "1.0.0", "x\n"))],
    );
    std::os::unix::fs::symlink("/etc/passwd", root.path().join("leaky/passwd")).unwrap();
    assert!(matches!(
        run(source.fetch("leaky", None)),
        Err(Error::Portable { .. })
    ));
}

// ---------------------------------------------------------------------------------------
// Archives.

#[test]
fn archive_source_reads_json_and_tar_gz() {
    let md = skill_md("hello", "Greets people.", "2.0.0", "Say hi.\n");
    let json = json!({
        "formatVersion": 2,
        "skill": {
            "name": "hello", "slug": "hello", "content": md,
            "files": [{"path": "references/tone.md", "content": "Be nice.\n"}]
        }
    });
    let source = ArchiveSource::from_bytes("hello.json", serde_json::to_vec(&json).unwrap());
    assert_eq!(
        run(source.versions("hello")).unwrap(),
        ["2.0.0"],
        "from metadata.version"
    );
    let package = run(source.fetch("hello", None)).unwrap();
    assert_eq!(paths(&package), ["SKILL.md", "references/tone.md"]);
    assert_eq!(package.source().trust_path, "archive/hello");
    assert_eq!(run(source.search("greets")).unwrap().len(), 1);
    assert!(run(source.search("nothing-like-it")).unwrap().is_empty());

    let tarball = tar_gz(&[
        Entry::Dir("hello/"),
        Entry::File("hello/SKILL.md", md.as_bytes()),
        Entry::File("hello/scripts/run.sh", b"echo hi\n"),
    ]);
    let source = ArchiveSource::from_bytes("hello.tar.gz", tarball);
    let package = run(source.fetch("hello", None)).unwrap();
    assert_eq!(paths(&package), ["SKILL.md", "scripts/run.sh"]);
    assert_eq!(package.version(), Some("2.0.0"));
}

#[test]
fn archive_source_refuses_hostile_tarballs() {
    let md = skill_md("evil", "Evil.", "1.0.0", "x\n");
    let cases: Vec<(&str, Vec<u8>)> = vec![
        (
            "symlink",
            tar_gz(&[
                Entry::File("evil/SKILL.md", md.as_bytes()),
                Entry::Symlink("evil/key", "/root/.ssh/id_rsa"),
            ]),
        ),
        (
            "traversal",
            tar_gz(&[
                Entry::File("evil/SKILL.md", md.as_bytes()),
                Entry::RawName(b"evil/../../etc/cron.d/x", b"* * * * * root sh\n"),
            ]),
        ),
        (
            "absolute",
            tar_gz(&[
                Entry::File("evil/SKILL.md", md.as_bytes()),
                Entry::RawName(b"/etc/passwd", b"root::0:0\n"),
            ]),
        ),
    ];
    for (what, bytes) in cases {
        let source = ArchiveSource::from_bytes("evil.tar.gz", bytes);
        let err = run(source.fetch("evil", None)).unwrap_err();
        assert!(matches!(err, Error::Portable { .. }), "{what}: {err:?}");
    }
    // An oversized entry is refused before it is read.
    let zeros = vec![b'a'; 9 * 1024 * 1024];
    let bomb = tar_gz(&[Entry::File("evil/SKILL.md", &zeros)]);
    assert!(bomb.len() < 100 * 1024);
    let err = run(ArchiveSource::from_bytes("bomb.tar.gz", bomb).fetch("evil", None)).unwrap_err();
    assert!(matches!(err, Error::Portable { .. }), "{err:?}");
}

// ---------------------------------------------------------------------------------------
// A git host.

fn contents_file(path: &str, bytes: &[u8]) -> serde_json::Value {
    json!({"type": "file", "name": path.rsplit('/').next().unwrap(), "path": path,
           "size": bytes.len(), "encoding": "base64", "content": base64(bytes)})
}

fn entry(kind: &str, path: &str, size: usize) -> serde_json::Value {
    json!({"type": kind, "name": path.rsplit('/').next().unwrap(), "path": path, "size": size})
}

/// Serves `acme/skills` with a skill at `pdf/`, release `v1.2.0`, tags `v1.2.0` and `v1.0.0`.
fn git_host() -> FakeServer {
    let server = FakeServer::start();
    let md = skill_md("pdf", "Read PDFs.", "1.2.0", "Run scripts/extract.py.\n");
    let script = b"print('text')\n";
    server.json(
        "/search/repositories?q=pdf%20topic%3Aclaude-skill&sort=stars&per_page=50",
        json!({"total_count": 2, "items": [
            {"full_name": "acme/skills", "name": "skills", "description": "PDF skills"},
            {"full_name": "../evil", "name": "evil", "description": "skipped"}
        ]}),
    );
    server.json(
        "/repos/acme/skills/releases/latest",
        json!({"tag_name": "v1.2.0"}),
    );
    server.json(
        "/repos/acme/skills/releases?per_page=100",
        json!([{"tag_name": "v1.2.0"}]),
    );
    server.json(
        "/repos/acme/skills/tags?per_page=100",
        json!([{"name": "v1.2.0"}, {"name": "v1.0.0"}, {"name": "nightly"}]),
    );
    server.json(
        "/repos/acme/skills/contents/pdf?ref=v1.2.0",
        json!([
            entry("file", "pdf/SKILL.md", md.len()),
            entry("dir", "pdf/scripts", 0),
            entry("file", "pdf/.hidden", 1),
        ]),
    );
    server.json(
        "/repos/acme/skills/contents/pdf/scripts?ref=v1.2.0",
        json!([entry("file", "pdf/scripts/extract.py", script.len())]),
    );
    server.json(
        "/repos/acme/skills/contents/pdf/SKILL.md?ref=v1.2.0",
        contents_file("pdf/SKILL.md", md.as_bytes()),
    );
    server.json(
        "/repos/acme/skills/contents/pdf/scripts/extract.py?ref=v1.2.0",
        contents_file("pdf/scripts/extract.py", script),
    );
    server
}

#[test]
fn git_source_searches_lists_versions_and_fetches_a_path_at_the_latest_release() {
    let server = git_host();
    let source = GitHubSource::new(Arc::new(LoopbackHttp), &server.url()).with_token("t0ken");

    let found = run(source.search("pdf")).unwrap();
    assert_eq!(found.len(), 1, "the unparsable repository name is skipped");
    assert_eq!(found[0].locator, "acme/skills");
    assert_eq!(found[0].description.as_deref(), Some("PDF skills"));

    let versions = run(source.versions("acme/skills")).unwrap();
    assert_eq!(versions, ["v1.0.0", "v1.2.0", "nightly"]);

    let package = run(source.fetch("acme/skills/pdf", None)).unwrap();
    assert_eq!(
        paths(&package),
        ["SKILL.md", "scripts/extract.py"],
        "hidden files skipped"
    );
    assert_eq!(package.version(), Some("1.2.0"));
    assert_eq!(package.name(), "pdf");
    let origin = server.url().trim_start_matches("http://").to_owned();
    assert_eq!(
        package.source().trust_path,
        format!("{origin}/acme/skills/pdf")
    );
    assert_eq!(package.source().revision.as_deref(), Some("v1.2.0"));
    assert!(package.source().immutable, "the latest release's tag");
    assert_eq!(
        package.file("scripts/extract.py").unwrap().bytes,
        b"print('text')\n"
    );

    let seen = server.seen();
    assert!(!seen.is_empty());
    for request in &seen {
        assert_eq!(
            request.header("authorization"),
            Some("Bearer t0ken"),
            "{}",
            request.target
        );
        assert_eq!(
            request.header("accept"),
            Some("application/vnd.github+json")
        );
    }
}

#[test]
fn git_source_without_token_sends_no_authorization_and_pins_a_ref() {
    let server = git_host();
    let source = GitHubSource::new(Arc::new(LoopbackHttp), &server.url());
    let package = run(source.fetch("acme/skills/pdf", Some("v1.2.0"))).unwrap();
    assert_eq!(package.files().len(), 2);
    assert!(
        server
            .seen()
            .iter()
            .all(|r| r.header("authorization").is_none())
    );
    assert!(
        !server
            .seen()
            .iter()
            .any(|r| r.target.contains("releases/latest")),
        "a pinned ref needs no release lookup"
    );
}

#[test]
fn git_source_reports_rate_limits_with_their_hints() {
    let server = FakeServer::start();
    server.route(
        "/repos/acme/skills/releases?per_page=100",
        403,
        &[
            ("x-ratelimit-remaining", "0"),
            ("x-ratelimit-reset", "1700000123"),
        ],
        b"{\"message\": \"API rate limit exceeded\"}".to_vec(),
    );
    let source = GitHubSource::new(Arc::new(LoopbackHttp), &server.url());
    let err = run(source.versions("acme/skills")).unwrap_err();
    assert!(
        matches!(
            err,
            Error::RateLimited {
                status: 403,
                reset_at: Some(1_700_000_123),
                ..
            }
        ),
        "{err:?}"
    );
    server.route(
        "/repos/acme/skills/releases/latest",
        429,
        &[("retry-after", "30")],
        Vec::new(),
    );
    let err = run(source.fetch("acme/skills", None)).unwrap_err();
    assert!(
        matches!(
            err,
            Error::RateLimited {
                status: 429,
                retry_after_secs: Some(30),
                ..
            }
        ),
        "{err:?}"
    );
    assert_eq!(err.kind(), "rate_limited");
    // A plain 403 (no quota header) is a status error, not a rate limit.
    server.route("/repos/acme/skills/tags?per_page=100", 403, &[], Vec::new());
    server.json("/repos/acme/skills/releases?per_page=100", json!([]));
    assert!(matches!(
        run(source.versions("acme/skills")),
        Err(Error::Status { status: 403, .. })
    ));
}

#[test]
fn git_source_refuses_hostile_listings() {
    let md = skill_md("pdf", "Read PDFs.", "1.0.0", "x\n");
    let base = |server: &FakeServer| {
        server.json(
            "/repos/acme/skills/releases/latest",
            json!({"tag_name": "v1.0.0"}),
        );
        server.json(
            "/repos/acme/skills/contents/pdf/SKILL.md?ref=v1.0.0",
            contents_file("pdf/SKILL.md", md.as_bytes()),
        );
    };
    type Case = (&'static str, serde_json::Value, fn(&Error) -> bool);
    let cases: Vec<Case> = vec![
        (
            "an entry whose path leaves the directory",
            json!([entry("file", "pdf/SKILL.md", 10),
                   {"type": "file", "name": "x", "path": "other/x", "size": 1}]),
            |e| matches!(e, Error::UnsafePath { .. }),
        ),
        (
            "a name with ..",
            json!([{"type": "file", "name": "..", "path": "pdf/..", "size": 1}]),
            |e| matches!(e, Error::UnsafePath { .. }),
        ),
        (
            "a name with a backslash",
            json!([{"type": "file", "name": "a\\b", "path": "pdf/a\\b", "size": 1}]),
            |e| matches!(e, Error::UnsafePath { .. }),
        ),
        (
            "a symlink",
            json!([
                entry("file", "pdf/SKILL.md", 10),
                entry("symlink", "pdf/key", 10)
            ]),
            |e| matches!(e, Error::UnsupportedEntry { .. }),
        ),
        (
            "a submodule",
            json!([entry("submodule", "pdf/vendor", 0)]),
            |e| matches!(e, Error::UnsupportedEntry { .. }),
        ),
        (
            "a file declared too large",
            json!([
                entry("file", "pdf/SKILL.md", 10),
                entry("file", "pdf/big.bin", 50_000_000)
            ]),
            |e| matches!(e, Error::TooLarge { .. }),
        ),
        (
            "a listing that is not an array",
            json!({"type": "file"}),
            |e| matches!(e, Error::Malformed { .. }),
        ),
    ];
    for (what, listing, expected) in cases {
        let server = FakeServer::start();
        base(&server);
        server.json("/repos/acme/skills/contents/pdf?ref=v1.0.0", listing);
        let source = GitHubSource::new(Arc::new(LoopbackHttp), &server.url());
        let err = run(source.fetch("acme/skills/pdf", None)).unwrap_err();
        assert!(expected(&err), "{what}: {err:?}");
    }
    // An endless tree stops at the depth limit.
    let server = FakeServer::start();
    base(&server);
    let mut dir = "pdf".to_owned();
    for _ in 0..12 {
        let child = format!("{dir}/d");
        server.json(
            &format!("/repos/acme/skills/contents/{dir}?ref=v1.0.0"),
            json!([entry("dir", &child, 0)]),
        );
        dir = child;
    }
    let source = GitHubSource::new(Arc::new(LoopbackHttp), &server.url());
    assert!(matches!(
        run(source.fetch("acme/skills/pdf", None)),
        Err(Error::TooLarge { .. })
    ));
    // Bad locators never reach the network.
    assert!(matches!(
        run(source.fetch("acme/../etc", None)),
        Err(Error::InvalidInput { .. })
    ));
}

#[test]
fn git_source_caps_response_bodies() {
    let server = FakeServer::start();
    server.route(
        "/repos/acme/skills/releases?per_page=100",
        200,
        &[],
        vec![b' '; 4096],
    );
    let mut limits = PackageLimits::default();
    limits.max_response_bytes = 1024;
    let source = GitHubSource::new(Arc::new(LoopbackHttp), &server.url()).with_limits(limits);
    assert!(matches!(
        run(source.versions("acme/skills")),
        Err(Error::TooLarge { limit: 1024, .. })
    ));
}

// ---------------------------------------------------------------------------------------
// An npm registry.

fn npm_tarball(version: &str) -> Vec<u8> {
    let md = skill_md("lint-helper", "Lints code.", version, "Lint it.\n");
    tar_gz(&[
        Entry::File(
            "package/package.json",
            b"{\"name\": \"@acme/lint-helper\"}\n",
        ),
        Entry::File("package/SKILL.md", md.as_bytes()),
    ])
}

/// A registry with `@acme/lint-helper` 1.0.0 and 1.1.0 (latest), each tarball served with a
/// correct sha512 integrity unless `dist` overrides 1.1.0's dist object.
fn registry(server: &FakeServer, dist: Option<serde_json::Value>) {
    let url = server.url();
    let (old, new) = (npm_tarball("1.0.0"), npm_tarball("1.1.0"));
    let dist_new = dist.unwrap_or_else(|| {
        json!({"tarball": format!("{url}/@acme/lint-helper/-/lint-helper-1.1.0.tgz"),
               "integrity": npm_integrity(&new)})
    });
    server.json(
        "/@acme%2Flint-helper",
        json!({
            "name": "@acme/lint-helper",
            "dist-tags": {"latest": "1.1.0", "beta": "1.0.0"},
            "versions": {
                "1.0.0": {"dist": {"tarball": format!("{url}/@acme/lint-helper/-/lint-helper-1.0.0.tgz"),
                                   "integrity": npm_integrity(&old)}},
                "1.1.0": {"dist": dist_new}
            }
        }),
    );
    server.route("/@acme/lint-helper/-/lint-helper-1.0.0.tgz", 200, &[], old);
    server.route("/@acme/lint-helper/-/lint-helper-1.1.0.tgz", 200, &[], new);
}

#[test]
fn npm_source_searches_lists_versions_and_fetches_checked_tarballs() {
    let server = FakeServer::start();
    registry(&server, None);
    server.json(
        "/-/v1/search?text=lint&size=50",
        json!({"objects": [
            {"package": {"name": "@acme/lint-helper", "version": "1.1.0", "description": "Lints."}},
            {"package": {"name": "../../evil", "version": "1.0.0"}}
        ]}),
    );
    let source = NpmSource::new(Arc::new(LoopbackHttp), &server.url());
    let found = run(source.search("lint")).unwrap();
    assert_eq!(found.len(), 1, "an invalid package name is skipped");
    assert_eq!(found[0].locator, "@acme/lint-helper");
    assert_eq!(found[0].version.as_deref(), Some("1.1.0"));

    assert_eq!(
        run(source.versions("@acme/lint-helper")).unwrap(),
        ["1.0.0", "1.1.0"]
    );

    let latest = run(source.fetch("@acme/lint-helper", None)).unwrap();
    assert_eq!(latest.version(), Some("1.1.0"));
    assert_eq!(
        paths(&latest),
        ["SKILL.md", "package.json"],
        "package/ stripped"
    );
    let origin = server.url().trim_start_matches("http://").to_owned();
    assert_eq!(
        latest.source().trust_path,
        format!("{origin}/@acme/lint-helper")
    );
    assert!(latest.source().immutable, "a published version");
    let beta = run(source.fetch("@acme/lint-helper", Some("beta"))).unwrap();
    assert_eq!(beta.version(), Some("1.0.0"), "dist-tags resolve");
    let exact = run(source.fetch("@acme/lint-helper", Some("1.0.0"))).unwrap();
    assert_eq!(exact.files(), beta.files());
    assert!(matches!(
        run(source.fetch("@acme/lint-helper", Some("3.0.0"))),
        Err(Error::NotFound { .. })
    ));
}

#[test]
fn npm_source_refuses_integrity_failures_and_foreign_tarballs() {
    let tampered = FakeServer::start();
    let url = tampered.url();
    registry(
        &tampered,
        Some(
            json!({"tarball": format!("{url}/@acme/lint-helper/-/lint-helper-1.1.0.tgz"),
                    "integrity": npm_integrity(b"what the publisher uploaded")}),
        ),
    );
    let source = NpmSource::new(Arc::new(LoopbackHttp), &url);
    let err = run(source.fetch("@acme/lint-helper", None)).unwrap_err();
    assert!(matches!(err, Error::IntegrityMismatch { .. }), "{err:?}");

    let sha1_only = FakeServer::start();
    let url = sha1_only.url();
    registry(
        &sha1_only,
        Some(
            json!({"tarball": format!("{url}/@acme/lint-helper/-/lint-helper-1.1.0.tgz"),
                    "shasum": "0000000000000000000000000000000000000000"}),
        ),
    );
    let source = NpmSource::new(Arc::new(LoopbackHttp), &url);
    let err = run(source.fetch("@acme/lint-helper", None)).unwrap_err();
    assert!(
        matches!(err, Error::UnverifiableIntegrity { .. }),
        "{err:?}"
    );
    let accepting = source.clone().accept_sha1_only(true);
    assert!(run(accepting.fetch("@acme/lint-helper", None)).is_ok());

    let foreign = FakeServer::start();
    let elsewhere = FakeServer::start();
    registry(
        &foreign,
        Some(json!({"tarball": format!("{}/x.tgz", elsewhere.url()),
                    "integrity": npm_integrity(b"x")})),
    );
    let source = NpmSource::new(Arc::new(LoopbackHttp), &foreign.url());
    let err = run(source.fetch("@acme/lint-helper", None)).unwrap_err();
    assert!(
        matches!(
            err,
            Error::InvalidInput {
                what: "npm tarball URL",
                ..
            }
        ),
        "{err:?}"
    );
    assert!(
        elsewhere.seen().is_empty(),
        "the foreign host was never contacted"
    );
}

#[test]
fn npm_source_refuses_bad_names_wrong_metadata_and_hostile_tarballs() {
    let server = FakeServer::start();
    let source = NpmSource::new(Arc::new(LoopbackHttp), &server.url());
    for bad in ["../x", "@acme/../../x", "UPPER", "a/b"] {
        assert!(
            matches!(
                run(source.fetch(bad, None)),
                Err(Error::InvalidInput { .. })
            ),
            "{bad}"
        );
    }
    assert!(
        server.seen().is_empty(),
        "bad names never reach the network"
    );

    server.json("/other", json!({"name": "something-else", "versions": {}}));
    assert!(matches!(
        run(source.fetch("other", None)),
        Err(Error::Malformed { .. })
    ));

    let md = skill_md("evil", "Evil.", "1.0.0", "x\n");
    let tarball = tar_gz(&[
        Entry::File("package/SKILL.md", md.as_bytes()),
        Entry::Symlink("package/id_rsa", "/root/.ssh/id_rsa"),
    ]);
    let url = server.url();
    server.json(
        "/evil",
        json!({"name": "evil", "dist-tags": {"latest": "1.0.0"},
               "versions": {"1.0.0": {"dist": {"tarball": format!("{url}/evil/-/evil-1.0.0.tgz"),
                                                "integrity": npm_integrity(&tarball)}}}}),
    );
    server.route("/evil/-/evil-1.0.0.tgz", 200, &[], tarball);
    let err = run(source.fetch("evil", None)).unwrap_err();
    assert!(matches!(err, Error::Portable { .. }), "{err:?}");
}

#[test]
fn git_source_falls_back_to_the_default_branch_without_releases() {
    let server = FakeServer::start();
    let md = skill_md("notes", "Takes notes.", "0.3.0", "Write it down.\n");
    server.json(
        "/repos/acme/notes/contents/",
        json!([entry("file", "SKILL.md", md.len())]),
    );
    server.json(
        "/repos/acme/notes/contents/SKILL.md",
        contents_file("SKILL.md", md.as_bytes()),
    );
    let source = GitHubSource::new(Arc::new(LoopbackHttp), &server.url());
    let package = run(source.fetch("acme/notes", None)).unwrap();
    assert_eq!(
        package.version(),
        Some("0.3.0"),
        "from the skill's metadata"
    );
    assert_eq!(package.source().revision, None, "the default branch");
    assert!(!package.source().immutable, "a branch moves");
    let origin = server.url().trim_start_matches("http://").to_owned();
    assert_eq!(
        package.source().trust_path,
        format!("{origin}/acme/notes/notes")
    );
    assert!(
        server
            .seen()
            .iter()
            .any(|r| r.target == "/repos/acme/notes/releases/latest")
    );
}
