//! All or nothing: every store call an operation makes is made to fail in turn — before it
//! reaches the store, and after the store did the work (a lost acknowledgement) — and the
//! stores must then hold exactly what they held before. The sweep runs until an attempt
//! makes more calls than the failing index, so every call of every operation is covered.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod install_common;

use std::sync::Arc;

use install_common::{FixedScanner, Rig, run, scope, skill_md, write_skill};
use skills::install::{InstallRequest, Installer, LocalSource, UpdateOutcome};
use skills::security::audit::AuditTrail;
use skills::security::scan::Severity;
use skills::store::{AuditStore, SkillStore};

const BODY: &str = "Summarise the document in three bullet points.\n";

struct World {
    rig: Rig,
    installer: Installer,
    _root: tempfile::TempDir,
    source: LocalSource,
}

impl World {
    fn new(review: bool) -> World {
        let rig = Rig::new();
        let scanner: Option<Arc<dyn skills::install::PackageScanner>> = if review {
            Some(Arc::new(FixedScanner(Some(Severity::High))))
        } else {
            None
        };
        let installer = rig.installer(scanner);
        let root = tempfile::tempdir().unwrap();
        write_version(root.path(), "1.0.0", &[("references/a.md", "A.\n")]);
        let source = LocalSource::new(root.path());
        World {
            rig,
            installer,
            _root: root,
            source,
        }
    }

    fn installed(review: bool) -> World {
        let world = World::new(review);
        run(world.install()).unwrap();
        world
    }

    async fn install(&self) -> skills::install::Result<()> {
        self.installer
            .install(&scope(), &self.source, &InstallRequest::new("summary"))
            .await
            .map(drop)
    }

    async fn update(&self) -> skills::install::Result<UpdateOutcome> {
        self.installer
            .update(
                &scope(),
                &self.source,
                "summary",
                &InstallRequest::default(),
            )
            .await
    }

    fn root(&self) -> &std::path::Path {
        self._root.path()
    }
}

fn write_version(root: &std::path::Path, version: &str, extra: &[(&str, &str)]) {
    let md = skill_md("summary", "Summarises documents.", version, BODY);
    let mut files = vec![("SKILL.md", md.as_str())];
    files.extend_from_slice(extra);
    write_skill(root, "summary", &files);
}

/// Runs `op` on a fresh world from `setup` with call `n` failing, for every `n` until an
/// attempt completes without reaching the failing call; asserts each failed attempt left
/// the stores as they were. Returns how many calls the operation makes.
fn sweep<F>(label: &str, exact_file_ids: bool, setup: impl Fn() -> World, op: F) -> usize
where
    F: Fn(&World) -> skills::install::Result<()>,
{
    let tenant = &scope().tenant;
    let mut calls = 0;
    for after in [false, true] {
        let mode = if after { "after" } else { "before" };
        for n in 1.. {
            let world = setup();
            let rig = &world.rig;
            let before = run(rig.snapshot(tenant, exact_file_ids));
            let audit_before = run(rig.audit.head(tenant, "audit")).unwrap();
            rig.faults.arm(n, after);
            let result = op(&world);
            rig.faults.disarm();
            if !rig.faults.fired() {
                result.unwrap_or_else(|e| panic!("{label}: unfaulted run failed: {e}"));
                calls = calls.max(n - 1);
                assert!(n > 1, "{label}: the operation made no store call");
                break;
            }
            match result {
                // After the commit point (the audit record) an install only enables its
                // skill: failing there leaves the install standing, audited and disabled.
                Err(error) if error.to_string().contains("left disabled") => {
                    let head = run(rig.audit.head(tenant, "audit")).unwrap().unwrap();
                    let previous = audit_before.map_or(0, |h| h.sequence);
                    assert_eq!(head.sequence, previous + 1, "{label}: call {n}");
                    let skill = run(rig.skills.find_skill_by_slug(tenant, "summary"))
                        .unwrap()
                        .unwrap();
                    assert!(
                        !skill.enabled,
                        "{label}: call {n}: enabled without its step"
                    );
                }
                Err(error) => {
                    let after_snapshot = run(rig.snapshot(tenant, exact_file_ids));
                    assert_eq!(
                        after_snapshot, before,
                        "{label}: failing call {n} ({mode}) left a trace; the error was: {error}"
                    );
                }
                Ok(()) => {
                    // Only the commit point may fail after the fact and still stand: the
                    // audit record landed, so the operation did happen.
                    assert!(
                        after,
                        "{label}: call {n} failed before the store yet succeeded"
                    );
                    let head = run(rig.audit.head(tenant, "audit")).unwrap().unwrap();
                    let previous = audit_before.map_or(0, |h| h.sequence);
                    assert_eq!(head.sequence, previous + 1, "{label}: call {n}");
                }
            }
            let trail = AuditTrail::new(rig.audit.clone());
            assert!(
                run(trail.verify(tenant)).unwrap().is_intact(),
                "{label}: call {n}"
            );
        }
    }
    calls
}

#[test]
fn install_leaves_no_trace_when_any_call_fails() {
    let calls = sweep("install", true, || World::new(false), |w| run(w.install()));
    // Two lookups, the skill, the package, the audit head and append at least.
    assert!(calls >= 6, "{calls}");
}

#[test]
fn install_needing_review_leaves_no_trace_when_any_call_fails() {
    sweep(
        "install (review)",
        true,
        || World::new(true),
        |w| run(w.install()),
    );
}

#[test]
fn approving_an_install_is_undone_as_a_whole() {
    sweep(
        "approve install",
        false,
        || World::installed(true),
        |w| run(w.installer.approve(&scope(), "summary", "1.0.0")).map(drop),
    );
}

#[test]
fn rollback_and_upgrade_are_undone_as_a_whole() {
    let upgraded = || {
        let world = World::installed(false);
        write_version(world.root(), "1.1.0", &[("references/b.md", "B.\n")]);
        assert!(matches!(
            run(world.update()).unwrap(),
            UpdateOutcome::Upgraded(_)
        ));
        world
    };
    sweep("rollback", false, upgraded, |w| {
        run(w.installer.rollback(&scope(), "summary", "1.0.0")).map(drop)
    });
    let rolled_back = || {
        let world = upgraded();
        run(world.installer.rollback(&scope(), "summary", "1.0.0")).unwrap();
        world
    };
    sweep("upgrade", false, rolled_back, |w| {
        run(w.installer.upgrade(&scope(), "summary", "1.1.0")).map(drop)
    });
}

#[test]
fn approving_a_pending_update_is_undone_as_a_whole() {
    let pending = || {
        let world = World::installed(false);
        write_version(
            world.root(),
            "1.1.0",
            &[("scripts/run.sh", "echo summarising\n")],
        );
        assert!(matches!(
            run(world.update()).unwrap(),
            UpdateOutcome::PendingApproval(_)
        ));
        world
    };
    sweep("approve update", false, pending, |w| {
        run(w.installer.approve(&scope(), "summary", "1.1.0")).map(drop)
    });
}

#[test]
fn deprecation_is_undone_as_a_whole() {
    sweep(
        "deprecate",
        true,
        || World::installed(false),
        |w| {
            run(w
                .installer
                .deprecate(&scope(), "summary", "1.0.0", Some("old".into())))
            .map(drop)
        },
    );
}

/// An update adds a version, moves the skill's content and the current version (or, when
/// it needs review, only adds the version) and audits: a failure at any of those calls,
/// before or after the store did the work, leaves the stores exactly as they were — the
/// added version is deleted again, with nothing reported left over.
#[test]
fn updates_leave_no_trace_when_any_call_fails() {
    for (label, extra, pending) in [
        ("update (upgrade)", ("references/b.md", "B.\n"), false),
        (
            "update (pending)",
            ("scripts/run.sh", "echo summarising\n"),
            true,
        ),
    ] {
        let setup = || {
            let world = World::installed(false);
            write_version(world.root(), "1.1.0", &[extra]);
            world
        };
        let calls = sweep(label, false, setup, |w| {
            let outcome = run(w.update())?;
            let expected = if pending {
                matches!(outcome, UpdateOutcome::PendingApproval(_))
            } else {
                matches!(outcome, UpdateOutcome::Upgraded(_))
            };
            assert!(expected, "{label}: {outcome:?}");
            Ok(())
        });
        // The lookups, the version, the audit head and append at least.
        assert!(calls >= 5, "{label}: {calls}");
    }
}
