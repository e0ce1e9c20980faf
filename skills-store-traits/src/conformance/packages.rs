//! The [`PackageStore`] contract.

use futures::future::join_all;
use serde_json::json;

use super::{assert_invalid, tenant};
use crate::error::{Error, Violation};
use crate::packages::{
    MAX_PACKAGE_FILES, NewPackage, NewPackageVersion, PackageFile, PackageSource, PackageStore,
    PackageUpdate, file_digest,
};
use crate::tenancy::{TenantId, UserId, UserScope};

/// A version with a SKILL.md and a script, digests computed, a scan report and a publisher.
fn version(number: &str, body: &str) -> NewPackageVersion {
    let files = vec![
        PackageFile::new("SKILL.md", format!("# {body}\n")),
        PackageFile::new("scripts/run.sh", format!("echo {body}\n")),
    ];
    let mut version = NewPackageVersion::new(
        number,
        file_digest(&format!("{number}/{body}")),
        "clean",
        files,
    );
    version.scripts = vec!["scripts/run.sh".into()];
    version.permissions = vec!["network:none".into()];
    version.scan_report = json!({"findings": [], "score": 0});
    version.publisher = Some("acme".into());
    version.changelog = Some(format!("{number}: {body}"));
    version
}

fn package(name: &str, number: &str) -> NewPackage {
    let source = PackageSource::new("git", format!("git.example/acme/{name}"));
    let mut new = NewPackage::new(
        format!("skill-{name}"),
        name,
        source,
        "community",
        version(number, name),
    );
    new.installed_by = Some(UserId::new("installer"));
    new
}

#[track_caller]
fn assert_not_found<T: std::fmt::Debug>(result: crate::Result<T>, contract: &str) {
    assert!(
        matches!(result, Err(Error::NotFound { .. })),
        "{contract}: expected NotFound, got {result:?}"
    );
}

/// Runs every package-store contract.
pub async fn run_all(store: &dyn PackageStore) {
    create_and_find(store).await;
    uniqueness(store).await;
    validation_rules(store).await;
    versions_and_order(store).await;
    upgrade_and_rollback(store).await;
    deprecation_and_approval(store).await;
    ratings(store).await;
    delete_cascades(store).await;
    delete_one_version(store).await;
    tenant_isolation(store).await;
    concurrent_writers(store).await;
    concurrent_version_deletes(store).await;
}

/// A package is stored with its first version as current; it is found by id, name and
/// skill, and listed by name.
pub async fn create_and_find(store: &dyn PackageStore) {
    let t = tenant();
    let new = package("pdf", "1.0.0");
    let (record, first) = store.create_package(&t, new.clone()).await.unwrap();
    assert!(
        !record.id.is_empty() && !first.id.is_empty(),
        "ids assigned"
    );
    assert_eq!(record.tenant, t);
    assert_eq!(
        (record.skill_id.as_str(), record.name.as_str()),
        ("skill-pdf", "pdf")
    );
    assert_eq!(record.source, new.source);
    assert_eq!(
        record.current_version, "1.0.0",
        "the first version is current"
    );
    assert_eq!(
        (record.digest.as_str(), record.verdict.as_str()),
        (new.version.digest.as_str(), "clean"),
        "digest and verdict are the current version's"
    );
    assert_eq!(record.trust_level, "community");
    assert_eq!(record.installed_by, Some(UserId::new("installer")));
    assert_eq!(record.created_at, record.updated_at);

    assert_eq!(first.package_id, record.id);
    assert_eq!(first.version, "1.0.0");
    assert_eq!(first.files, new.version.files, "content kept verbatim");
    assert_eq!(first.file_digests, new.version.file_digests);
    assert_eq!(first.scripts, new.version.scripts);
    assert_eq!(first.permissions, new.version.permissions);
    assert_eq!(first.scan_report, new.version.scan_report);
    assert_eq!(first.publisher.as_deref(), Some("acme"));
    assert_eq!(first.changelog, new.version.changelog);
    assert_eq!((first.deprecated.as_deref(), first.approved), (None, false));

    assert_eq!(
        store.get_package(&t, &record.id).await.unwrap(),
        Some(record.clone())
    );
    assert_eq!(
        store.find_package_by_name(&t, "pdf").await.unwrap(),
        Some(record.clone())
    );
    assert_eq!(
        store.find_package_by_skill(&t, "skill-pdf").await.unwrap(),
        Some(record.clone())
    );
    assert_eq!(
        store.get_version(&t, &record.id, "1.0.0").await.unwrap(),
        Some(first)
    );
    assert_eq!(store.get_package(&t, "missing").await.unwrap(), None);
    assert_eq!(store.find_package_by_name(&t, "PDF").await.unwrap(), None);
    assert_eq!(store.find_package_by_skill(&t, "pdf").await.unwrap(), None);

    for name in ["zip", "Alpha", "docx"] {
        store
            .create_package(&t, package(name, "0.1.0"))
            .await
            .unwrap();
    }
    let names: Vec<String> = store
        .list_packages(&t)
        .await
        .unwrap()
        .into_iter()
        .map(|p| p.name)
        .collect();
    assert_eq!(
        names,
        ["Alpha", "docx", "pdf", "zip"],
        "listed by name, bytewise"
    );
}

/// A name and a skill each have at most one package in a tenant; a refused create writes
/// nothing.
pub async fn uniqueness(store: &dyn PackageStore) {
    let t = tenant();
    let (original, _) = store
        .create_package(&t, package("pdf", "1.0.0"))
        .await
        .unwrap();

    let mut same_name = package("pdf", "2.0.0");
    same_name.skill_id = "skill-other".into();
    let result = store.create_package(&t, same_name).await;
    assert!(
        matches!(result, Err(Error::Conflict { .. })),
        "a second package of one name: {result:?}"
    );
    let mut same_skill = package("other", "2.0.0");
    same_skill.skill_id = "skill-pdf".into();
    let result = store.create_package(&t, same_skill).await;
    assert!(
        matches!(result, Err(Error::Conflict { .. })),
        "a second package of one skill: {result:?}"
    );
    assert_eq!(
        store.list_packages(&t).await.unwrap(),
        vec![original.clone()]
    );
    assert_eq!(
        store
            .find_package_by_skill(&t, "skill-other")
            .await
            .unwrap(),
        None
    );
    assert_eq!(
        store.list_versions(&t, &original.id).await.unwrap().len(),
        1,
        "the refused version was not added to the existing package"
    );
}

/// Spoils one field of a valid package.
type Spoil = fn(&mut NewPackage);

/// Every field rule, named by field and rule, on create and on add_version; refusals write
/// nothing.
pub async fn validation_rules(store: &dyn PackageStore) {
    let t = tenant();
    let big = "x".repeat(100 * 1024 + 1);
    let near_limit = "y".repeat(100 * 1024);
    let cases: Vec<(&str, Spoil, fn(&Violation) -> bool)> = vec![
        (
            "skill_id",
            |p| p.skill_id.clear(),
            |v| *v == Violation::Empty,
        ),
        (
            "name",
            |p| p.name.clear(),
            |v| matches!(v, Violation::NameLength { chars: 0 }),
        ),
        (
            "source.kind",
            |p| p.source.kind = "Git Hub".into(),
            |v| *v == Violation::SlugFormat,
        ),
        (
            "source.locator",
            |p| p.source.locator.clear(),
            |v| *v == Violation::Empty,
        ),
        (
            "trust_level",
            |p| p.trust_level.clear(),
            |v| *v == Violation::Empty,
        ),
        (
            "version.version",
            |p| p.version.version = "v1.0.0".into(),
            |v| *v == Violation::Version,
        ),
        (
            "version.version",
            |p| p.version.version = "1.0".into(),
            |v| *v == Violation::Version,
        ),
        (
            "version.digest",
            |p| p.version.digest = "sha256:XYZ".into(),
            |v| *v == Violation::DigestFormat,
        ),
        (
            "version.verdict",
            |p| p.version.verdict.clear(),
            |v| *v == Violation::Empty,
        ),
        (
            "version.files[1].path",
            |p| respell(p, 1, "../escape.sh"),
            |v| matches!(v, Violation::Path(_)),
        ),
        (
            "version.files[1].path",
            |p| respell(p, 1, "/etc/passwd"),
            |v| matches!(v, Violation::Path(_)),
        ),
        (
            "version.files[1].path",
            |p| respell(p, 1, "SKILL.md"),
            |v| *v == Violation::DuplicatePath,
        ),
        (
            "version.files[0].content",
            |p| refill(p, 0, "a\0b"),
            |v| *v == Violation::Binary,
        ),
        (
            "version.file_digests[scripts/run.sh]",
            |p| p.version.files[1].content.push_str("rm -rf /\n"),
            |v| *v == Violation::DigestMismatch,
        ),
        (
            "version.file_digests[scripts/run.sh]",
            |p| {
                p.version.file_digests.remove("scripts/run.sh");
            },
            |v| *v == Violation::DigestMismatch,
        ),
        (
            "version.file_digests[extra.bin]",
            |p| {
                p.version
                    .file_digests
                    .insert("extra.bin".into(), "md5:abc".into());
            },
            |v| *v == Violation::DigestFormat,
        ),
        (
            "version.file_digests[../x]",
            |p| {
                p.version
                    .file_digests
                    .insert("../x".into(), file_digest("x"));
            },
            |v| matches!(v, Violation::Path(_)),
        ),
        (
            "version.scripts[0]",
            |p| p.version.scripts[0] = "/bin/sh".into(),
            |v| matches!(v, Violation::Path(_)),
        ),
        (
            "version.permissions[0]",
            |p| p.version.permissions[0].clear(),
            |v| *v == Violation::Empty,
        ),
        (
            "version.publisher",
            |p| p.version.publisher = Some(String::new()),
            |v| *v == Violation::Empty,
        ),
        (
            "version.files",
            |p| {
                let files = (0..=MAX_PACKAGE_FILES)
                    .map(|i| PackageFile::new(format!("f/{i}.md"), "x"))
                    .collect();
                p.version = NewPackageVersion::new("1.0.0", file_digest("x"), "clean", files);
            },
            |v| matches!(v, Violation::TooMany { .. }),
        ),
        (
            "version.changelog",
            |p| p.version.changelog = Some("c".repeat(100 * 1024 + 1)),
            |v| matches!(v, Violation::TooLarge { .. }),
        ),
    ];
    for (field, spoil, rule) in cases {
        let mut new = package("pdf", "1.0.0");
        spoil(&mut new);
        assert_invalid(store.create_package(&t, new).await, field, rule);
    }

    let too_big = |content: &str| {
        let mut new = package("big", "1.0.0");
        let files = vec![PackageFile::new("SKILL.md", content)];
        new.version = NewPackageVersion::new("1.0.0", file_digest("b"), "clean", files);
        new
    };
    assert_invalid(
        store.create_package(&t, too_big(&big)).await,
        "version.files[0].content",
        |v| matches!(v, Violation::FileTooLarge { limit: 102_400, .. }),
    );
    let mut whole = too_big("# big\n");
    whole.version = NewPackageVersion::new(
        "1.0.0",
        file_digest("b"),
        "clean",
        (0..11)
            .map(|i| PackageFile::new(format!("ref/{i}.md"), near_limit.as_str()))
            .collect(),
    );
    assert_invalid(
        store.create_package(&t, whole).await,
        "version.files",
        |v| matches!(v, Violation::SkillTooLarge { .. }),
    );
    assert!(
        store.list_packages(&t).await.unwrap().is_empty(),
        "no refused package was written"
    );

    let (record, _) = store
        .create_package(&t, package("pdf", "1.0.0"))
        .await
        .unwrap();
    let mut bad = version("1.1.0", "next");
    bad.files[0].path = "a/./b.md".into();
    bad.file_digests = bad
        .files
        .iter()
        .map(|f| (f.path.clone(), file_digest(&f.content)))
        .collect();
    assert_invalid(
        store.add_version(&t, &record.id, bad).await,
        "files[0].path",
        |v| matches!(v, Violation::Path(_)),
    );
    assert_invalid(
        store.add_version(&t, &record.id, version("1.1", "x")).await,
        "version",
        |v| *v == Violation::Version,
    );
    assert_eq!(
        store.list_versions(&t, &record.id).await.unwrap().len(),
        1,
        "refused versions are not stored"
    );
    let update = PackageUpdate::new().trust_level("");
    assert_invalid(
        store
            .set_current_version(&t, &record.id, "1.0.0", "1.0.0", update)
            .await,
        "trust_level",
        |v| *v == Violation::Empty,
    );
    let update = PackageUpdate::new().source(PackageSource::new("git", ""));
    assert_invalid(
        store
            .set_current_version(&t, &record.id, "1.0.0", "1.0.0", update)
            .await,
        "source.locator",
        |v| *v == Violation::Empty,
    );
    assert_invalid(
        store
            .deprecate_version(&t, &record.id, "1.0.0", Some(String::new()))
            .await,
        "message",
        |v| *v == Violation::Empty,
    );
    assert_eq!(
        store.get_package(&t, &record.id).await.unwrap(),
        Some(record),
        "refused updates change nothing"
    );
}

/// Renames a file, moving its digest along unless the new path already has one (a
/// duplicate must be refused as a duplicate, not as a digest mismatch).
fn respell(package: &mut NewPackage, index: usize, path: &str) {
    let file = &mut package.version.files[index];
    let digests = &mut package.version.file_digests;
    let digest = digests.remove(&file.path);
    file.path = path.to_owned();
    if let Some(digest) = digest {
        digests.entry(path.to_owned()).or_insert(digest);
    }
}

fn refill(package: &mut NewPackage, index: usize, content: &str) {
    let file = &mut package.version.files[index];
    file.content = content.to_owned();
    package
        .version
        .file_digests
        .insert(file.path.clone(), file_digest(content));
}

/// Versions are unique per package, listed in semantic-version order (pre-releases before
/// their release, build metadata tie-broken by text), and adding one leaves the current
/// version alone.
pub async fn versions_and_order(store: &dyn PackageStore) {
    let t = tenant();
    let (record, _) = store
        .create_package(&t, package("pdf", "1.0.0"))
        .await
        .unwrap();
    for number in [
        "1.10.0",
        "1.2.0",
        "1.0.0-rc.1",
        "0.9.0",
        "1.0.0+build.2",
        "1.0.0+build.10",
        "2.0.0-alpha",
        "1.0.0-rc.1+x",
    ] {
        let added = store
            .add_version(&t, &record.id, version(number, number))
            .await
            .unwrap();
        assert_eq!(
            (added.version.as_str(), added.package_id.as_str()),
            (number, record.id.as_str())
        );
        assert!(added.deprecated.is_none() && !added.approved);
    }
    let listed: Vec<String> = store
        .list_versions(&t, &record.id)
        .await
        .unwrap()
        .into_iter()
        .map(|v| v.version)
        .collect();
    assert_eq!(
        listed,
        [
            "0.9.0",
            "1.0.0-rc.1",
            "1.0.0-rc.1+x",
            "1.0.0",
            "1.0.0+build.10",
            "1.0.0+build.2",
            "1.2.0",
            "1.10.0",
            "2.0.0-alpha"
        ],
        "semantic-version order"
    );
    let result = store
        .add_version(&t, &record.id, version("1.2.0", "again"))
        .await;
    assert!(
        matches!(result, Err(Error::Conflict { .. })),
        "a version is stored once: {result:?}"
    );
    let kept = store
        .get_version(&t, &record.id, "1.2.0")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        kept.files[0].content, "# 1.2.0\n",
        "the clash changed nothing"
    );
    assert_eq!(
        store.get_package(&t, &record.id).await.unwrap(),
        Some(record.clone()),
        "adding versions leaves the current version alone"
    );
    assert_eq!(
        store.get_version(&t, &record.id, "3.0.0").await.unwrap(),
        None
    );
    assert_not_found(
        store
            .add_version(&t, "missing", version("1.0.0", "x"))
            .await,
        "add_version to a missing package",
    );
    assert_not_found(
        store.list_versions(&t, "missing").await,
        "list_versions of a missing package",
    );
}

/// Upgrade and rollback are one compare-and-set on the current version: digest and verdict
/// follow the version, the update's fields apply, and a stale expectation changes nothing.
pub async fn upgrade_and_rollback(store: &dyn PackageStore) {
    let t = tenant();
    let (installed, first) = store
        .create_package(&t, package("pdf", "1.0.0"))
        .await
        .unwrap();
    let mut next = version("1.1.0", "upgraded");
    next.verdict = "review".into();
    let second = store.add_version(&t, &installed.id, next).await.unwrap();

    let source = PackageSource::new("npm", "@acme/pdf");
    let update = PackageUpdate::new()
        .trust_level("verified")
        .source(source.clone());
    let upgraded = store
        .set_current_version(&t, &installed.id, "1.1.0", "1.0.0", update)
        .await
        .unwrap();
    assert_eq!(upgraded.current_version, "1.1.0");
    assert_eq!(
        (upgraded.digest.as_str(), upgraded.verdict.as_str()),
        (second.digest.as_str(), "review"),
        "digest and verdict follow the current version"
    );
    assert_eq!(upgraded.trust_level, "verified");
    assert_eq!(upgraded.source, source);
    assert_eq!(
        (upgraded.id.as_str(), upgraded.created_at),
        (installed.id.as_str(), installed.created_at)
    );
    assert!(upgraded.updated_at >= installed.updated_at);
    assert_eq!(
        store.get_package(&t, &installed.id).await.unwrap(),
        Some(upgraded.clone())
    );

    let stale = store
        .set_current_version(&t, &installed.id, "1.0.0", "1.0.0", PackageUpdate::new())
        .await;
    assert!(
        matches!(&stale, Err(Error::Stale { expected, found, .. }) if expected == "1.0.0" && found == "1.1.0"),
        "a stale expectation is refused: {stale:?}"
    );
    assert_not_found(
        store
            .set_current_version(&t, &installed.id, "9.9.9", "1.1.0", PackageUpdate::new())
            .await,
        "a missing version",
    );
    assert_not_found(
        store
            .set_current_version(&t, "missing", "1.0.0", "1.0.0", PackageUpdate::new())
            .await,
        "a missing package",
    );
    assert_eq!(
        store.get_package(&t, &installed.id).await.unwrap(),
        Some(upgraded),
        "refusals changed nothing"
    );

    let rolled_back = store
        .set_current_version(&t, &installed.id, "1.0.0", "1.1.0", PackageUpdate::new())
        .await
        .unwrap();
    assert_eq!(rolled_back.current_version, "1.0.0");
    assert_eq!(
        (rolled_back.digest.as_str(), rolled_back.verdict.as_str()),
        (first.digest.as_str(), "clean")
    );
    assert_eq!(rolled_back.trust_level, "verified", "unset fields stay");
    let restored = store
        .get_version(&t, &installed.id, &rolled_back.current_version)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        restored.files, first.files,
        "the rolled-back content is whole"
    );

    let same = store
        .set_current_version(
            &t,
            &installed.id,
            "1.0.0",
            "1.0.0",
            PackageUpdate::new().trust_level("user"),
        )
        .await
        .unwrap();
    assert_eq!(
        (same.current_version.as_str(), same.trust_level.as_str()),
        ("1.0.0", "user"),
        "re-setting the current version applies only the update"
    );
}

/// Deprecation and approval are per version and change nothing else.
pub async fn deprecation_and_approval(store: &dyn PackageStore) {
    let t = tenant();
    let (record, first) = store
        .create_package(&t, package("pdf", "1.0.0"))
        .await
        .unwrap();
    store
        .add_version(&t, &record.id, version("1.1.0", "b"))
        .await
        .unwrap();

    let deprecated = store
        .deprecate_version(&t, &record.id, "1.0.0", Some("use 1.1.0".into()))
        .await
        .unwrap();
    assert_eq!(deprecated.deprecated.as_deref(), Some("use 1.1.0"));
    assert_eq!(
        (deprecated.id.as_str(), &deprecated.files),
        (first.id.as_str(), &first.files)
    );
    let other = store
        .get_version(&t, &record.id, "1.1.0")
        .await
        .unwrap()
        .unwrap();
    assert!(
        other.deprecated.is_none(),
        "only that version is deprecated"
    );
    assert_eq!(
        store.get_version(&t, &record.id, "1.0.0").await.unwrap(),
        Some(deprecated)
    );
    let restored = store
        .deprecate_version(&t, &record.id, "1.0.0", None)
        .await
        .unwrap();
    assert!(restored.deprecated.is_none(), "None un-deprecates");

    let approved = store
        .set_version_approved(&t, &record.id, "1.1.0", true)
        .await
        .unwrap();
    assert!(approved.approved);
    assert!(
        store
            .get_version(&t, &record.id, "1.1.0")
            .await
            .unwrap()
            .unwrap()
            .approved,
        "approval is stored"
    );
    assert!(
        !store
            .get_version(&t, &record.id, "1.0.0")
            .await
            .unwrap()
            .unwrap()
            .approved
    );
    let revoked = store
        .set_version_approved(&t, &record.id, "1.1.0", false)
        .await
        .unwrap();
    assert!(!revoked.approved);

    assert_not_found(
        store.deprecate_version(&t, &record.id, "2.0.0", None).await,
        "deprecating a missing version",
    );
    assert_not_found(
        store
            .set_version_approved(&t, &record.id, "2.0.0", true)
            .await,
        "approving a missing version",
    );
    assert_not_found(
        store
            .set_version_approved(&t, "missing", "1.0.0", true)
            .await,
        "approving in a missing package",
    );
    assert_eq!(
        store.get_package(&t, &record.id).await.unwrap(),
        Some(record),
        "the package record is untouched"
    );
}

/// One rating per (user, version), replaced on re-rating; summaries per version and over
/// all versions; stars outside 1 to 5 are refused.
pub async fn ratings(store: &dyn PackageStore) {
    let t = tenant();
    let (record, _) = store
        .create_package(&t, package("pdf", "1.0.0"))
        .await
        .unwrap();
    store
        .add_version(&t, &record.id, version("2.0.0", "b"))
        .await
        .unwrap();
    let user = |name: &str| UserScope::new(t.clone(), name);

    let empty = store.rating_summary(&t, &record.id, None).await.unwrap();
    assert_eq!(
        (empty.count, empty.mean),
        (0, 0.0),
        "no ratings: count 0, mean 0"
    );

    store
        .rate(&user("alice"), &record.id, "1.0.0", 5)
        .await
        .unwrap();
    store
        .rate(&user("bob"), &record.id, "1.0.0", 2)
        .await
        .unwrap();
    store
        .rate(&user("bob"), &record.id, "1.0.0", 4)
        .await
        .unwrap();
    store
        .rate(&user("alice"), &record.id, "2.0.0", 1)
        .await
        .unwrap();

    let v1 = store
        .rating_summary(&t, &record.id, Some("1.0.0"))
        .await
        .unwrap();
    assert_eq!(
        (v1.count, v1.mean),
        (2, 4.5),
        "re-rating replaces: (5 + 4) / 2"
    );
    let v2 = store
        .rating_summary(&t, &record.id, Some("2.0.0"))
        .await
        .unwrap();
    assert_eq!((v2.count, v2.mean), (1, 1.0));
    let all = store.rating_summary(&t, &record.id, None).await.unwrap();
    assert_eq!(all.count, 3);
    assert_eq!(all.mean, 10.0 / 3.0, "the mean over every version");

    for stars in [0, 6, 255] {
        assert_invalid(
            store.rate(&user("carol"), &record.id, "1.0.0", stars).await,
            "stars",
            |v| matches!(v, Violation::OutOfRange { .. }),
        );
    }
    assert_not_found(
        store.rate(&user("carol"), &record.id, "3.0.0", 3).await,
        "rating a missing version",
    );
    assert_not_found(
        store.rate(&user("carol"), "missing", "1.0.0", 3).await,
        "rating a missing package",
    );
    assert_not_found(
        store.rating_summary(&t, &record.id, Some("3.0.0")).await,
        "summary of a missing version",
    );
    assert_not_found(
        store.rating_summary(&t, "missing", None).await,
        "summary of a missing package",
    );
    assert_eq!(
        store
            .rating_summary(&t, &record.id, None)
            .await
            .unwrap()
            .count,
        3,
        "refused ratings wrote nothing"
    );
}

/// Deleting a package deletes its versions and ratings and frees its name and skill.
pub async fn delete_cascades(store: &dyn PackageStore) {
    let t = tenant();
    let (record, _) = store
        .create_package(&t, package("pdf", "1.0.0"))
        .await
        .unwrap();
    store
        .add_version(&t, &record.id, version("1.1.0", "b"))
        .await
        .unwrap();
    store
        .rate(&UserScope::new(t.clone(), "alice"), &record.id, "1.0.0", 5)
        .await
        .unwrap();
    let (kept, _) = store
        .create_package(&t, package("zip", "1.0.0"))
        .await
        .unwrap();

    assert!(store.delete_package(&t, &record.id).await.unwrap());
    assert_eq!(store.get_package(&t, &record.id).await.unwrap(), None);
    assert_eq!(
        store.get_version(&t, &record.id, "1.0.0").await.unwrap(),
        None
    );
    assert_not_found(
        store.list_versions(&t, &record.id).await,
        "versions of a deleted package",
    );
    assert_not_found(
        store.rating_summary(&t, &record.id, None).await,
        "ratings of a deleted package",
    );
    assert!(
        !store.delete_package(&t, &record.id).await.unwrap(),
        "deleting twice"
    );
    assert_eq!(store.find_package_by_name(&t, "pdf").await.unwrap(), None);
    assert_eq!(
        store.find_package_by_skill(&t, "skill-pdf").await.unwrap(),
        None
    );
    assert_eq!(store.list_packages(&t).await.unwrap(), vec![kept]);

    let (again, _) = store
        .create_package(&t, package("pdf", "1.0.0"))
        .await
        .unwrap();
    assert_ne!(again.id, record.id);
    assert_eq!(store.list_versions(&t, &again.id).await.unwrap().len(), 1);
    assert_eq!(
        store
            .rating_summary(&t, &again.id, None)
            .await
            .unwrap()
            .count,
        0,
        "no rating outlived its package"
    );
}

/// Deleting one version removes it and its ratings only, frees its number, refuses the
/// current version, reports a missing version as `false` and a missing package as
/// NotFound, and is refused to another tenant that knows the ids.
pub async fn delete_one_version(store: &dyn PackageStore) {
    let t = tenant();
    let (record, first) = store
        .create_package(&t, package("pdf", "1.0.0"))
        .await
        .unwrap();
    let doomed = store
        .add_version(&t, &record.id, version("1.1.0", "doomed"))
        .await
        .unwrap();
    let kept = store
        .add_version(&t, &record.id, version("1.2.0", "kept"))
        .await
        .unwrap();
    let (neighbour, _) = store
        .create_package(&t, package("zip", "1.0.0"))
        .await
        .unwrap();
    store
        .add_version(&t, &neighbour.id, version("1.1.0", "same number"))
        .await
        .unwrap();
    for (user, number, stars) in [("alice", "1.1.0", 1), ("bob", "1.1.0", 2)] {
        let scope = UserScope::new(t.clone(), user);
        store.rate(&scope, &record.id, number, stars).await.unwrap();
        store.rate(&scope, &neighbour.id, number, 5).await.unwrap();
    }
    store
        .rate(&UserScope::new(t.clone(), "alice"), &record.id, "1.2.0", 4)
        .await
        .unwrap();
    let neighbour_versions = store.list_versions(&t, &neighbour.id).await.unwrap();

    let intruder = tenant();
    assert_not_found(
        store.delete_version(&intruder, &record.id, "1.1.0").await,
        "another tenant deleting a version",
    );
    assert_eq!(
        store.get_version(&t, &record.id, "1.1.0").await.unwrap(),
        Some(doomed.clone()),
        "the intruder deleted nothing"
    );

    let current = store.delete_version(&t, &record.id, "1.0.0").await;
    assert!(
        matches!(current, Err(Error::Conflict { .. })),
        "the current version cannot be deleted: {current:?}"
    );
    assert_eq!(
        store.get_version(&t, &record.id, "1.0.0").await.unwrap(),
        Some(first.clone()),
        "the refused delete changed nothing"
    );
    assert_not_found(
        store.delete_version(&t, "missing", "1.1.0").await,
        "deleting a version of a missing package",
    );
    assert!(
        !store.delete_version(&t, &record.id, "9.9.9").await.unwrap(),
        "a missing version is `false`"
    );

    assert!(store.delete_version(&t, &record.id, "1.1.0").await.unwrap());
    assert_eq!(
        store.get_version(&t, &record.id, "1.1.0").await.unwrap(),
        None
    );
    assert_eq!(
        store.list_versions(&t, &record.id).await.unwrap(),
        vec![first, kept],
        "only that version went"
    );
    assert_not_found(
        store.rating_summary(&t, &record.id, Some("1.1.0")).await,
        "ratings of a deleted version",
    );
    let left = store.rating_summary(&t, &record.id, None).await.unwrap();
    assert_eq!(
        (left.count, left.mean),
        (1, 4.0),
        "its ratings went with it, the others stayed"
    );
    assert!(
        !store.delete_version(&t, &record.id, "1.1.0").await.unwrap(),
        "deleting twice"
    );
    assert_eq!(
        store.get_package(&t, &record.id).await.unwrap(),
        Some(record.clone()),
        "the package record is untouched"
    );
    assert_eq!(
        store.list_versions(&t, &neighbour.id).await.unwrap(),
        neighbour_versions,
        "another package's version of the same number is untouched"
    );
    let theirs = store
        .rating_summary(&t, &neighbour.id, Some("1.1.0"))
        .await
        .unwrap();
    assert_eq!(theirs.count, 2, "and so are its ratings");

    let again = store
        .add_version(&t, &record.id, version("1.1.0", "again"))
        .await
        .unwrap();
    assert_ne!(again.id, doomed.id, "the number is free again");
    assert_eq!(
        store
            .rating_summary(&t, &record.id, Some("1.1.0"))
            .await
            .unwrap()
            .count,
        0,
        "no rating outlived its version"
    );
}

/// Another tenant, knowing the ids, sees and changes nothing; names and skills are unique
/// per tenant only.
pub async fn tenant_isolation(store: &dyn PackageStore) {
    let owner = tenant();
    let (record, first) = store
        .create_package(&owner, package("pdf", "1.0.0"))
        .await
        .unwrap();
    store
        .add_version(&owner, &record.id, version("1.1.0", "b"))
        .await
        .unwrap();
    store
        .rate(
            &UserScope::new(owner.clone(), "alice"),
            &record.id,
            "1.0.0",
            4,
        )
        .await
        .unwrap();
    let versions = store.list_versions(&owner, &record.id).await.unwrap();
    let intruder: TenantId = tenant();
    let id = &record.id.clone();

    assert_eq!(store.get_package(&intruder, id).await.unwrap(), None);
    assert_eq!(
        store.find_package_by_name(&intruder, "pdf").await.unwrap(),
        None
    );
    assert_eq!(
        store
            .find_package_by_skill(&intruder, "skill-pdf")
            .await
            .unwrap(),
        None
    );
    assert!(store.list_packages(&intruder).await.unwrap().is_empty());
    assert_eq!(
        store.get_version(&intruder, id, "1.0.0").await.unwrap(),
        None
    );
    assert_not_found(store.list_versions(&intruder, id).await, "list_versions");
    assert_not_found(
        store
            .add_version(&intruder, id, version("6.6.6", "evil"))
            .await,
        "add_version",
    );
    assert_not_found(
        store
            .set_current_version(&intruder, id, "1.1.0", "1.0.0", PackageUpdate::new())
            .await,
        "set_current_version",
    );
    assert_not_found(
        store
            .deprecate_version(&intruder, id, "1.0.0", Some("pwned".into()))
            .await,
        "deprecate_version",
    );
    assert_not_found(
        store
            .set_version_approved(&intruder, id, "1.1.0", true)
            .await,
        "set_version_approved",
    );
    assert_not_found(
        store
            .rate(&UserScope::new(intruder.clone(), "alice"), id, "1.0.0", 1)
            .await,
        "rate",
    );
    assert_not_found(
        store.rating_summary(&intruder, id, None).await,
        "rating_summary",
    );
    assert_not_found(
        store.delete_version(&intruder, id, "1.1.0").await,
        "delete_version",
    );
    assert!(
        !store.delete_package(&intruder, id).await.unwrap(),
        "delete"
    );

    let (theirs, _) = store
        .create_package(&intruder, package("pdf", "1.0.0"))
        .await
        .unwrap();
    assert_ne!(
        theirs.id, record.id,
        "the same name and skill in another tenant"
    );

    assert_eq!(store.get_package(&owner, id).await.unwrap(), Some(record));
    assert_eq!(store.list_versions(&owner, id).await.unwrap(), versions);
    assert_eq!(versions[0], first, "the owner's versions are untouched");
    let summary = store.rating_summary(&owner, id, None).await.unwrap();
    assert_eq!((summary.count, summary.mean), (1, 4.0));
}

/// Concurrent writers: one of many adds of one version wins, one of many compare-and-sets
/// from one expected version wins, one of many creates of one name wins, and no rating or
/// distinct version is lost.
pub async fn concurrent_writers(store: &dyn PackageStore) {
    let t = tenant();
    let (record, _) = store
        .create_package(&t, package("pdf", "1.0.0"))
        .await
        .unwrap();
    let id = record.id.as_str();
    let t = &t;

    let adds = (0..16).map(|i| store.add_version(t, id, version("1.1.0", &format!("racer {i}"))));
    let results = join_all(adds).await;
    let winners: Vec<_> = results.iter().filter_map(|r| r.as_ref().ok()).collect();
    assert_eq!(
        winners.len(),
        1,
        "exactly one add of a contested version wins"
    );
    assert!(
        results
            .iter()
            .filter_map(|r| r.as_ref().err())
            .all(|e| matches!(e, Error::Conflict { .. })),
        "the others clash"
    );
    let stored = store.get_version(t, id, "1.1.0").await.unwrap().unwrap();
    assert_eq!(
        &stored, winners[0],
        "the winner's content is what is stored"
    );

    let distinct = (0..24).map(|i| store.add_version(t, id, version(&format!("2.0.{i}"), "d")));
    assert!(join_all(distinct).await.iter().all(Result::is_ok));
    assert_eq!(store.list_versions(t, id).await.unwrap().len(), 26);

    let sets = (0..24).map(|i| {
        let target = format!("2.0.{i}");
        async move {
            store
                .set_current_version(t, id, &target, "1.0.0", PackageUpdate::new())
                .await
        }
    });
    let results = join_all(sets).await;
    let winners: Vec<_> = results.iter().filter_map(|r| r.as_ref().ok()).collect();
    assert_eq!(
        winners.len(),
        1,
        "exactly one compare-and-set from 1.0.0 wins"
    );
    assert!(
        results
            .iter()
            .filter_map(|r| r.as_ref().err())
            .all(|e| matches!(e, Error::Stale { .. })),
        "the others are stale"
    );
    let current = store.get_package(t, id).await.unwrap().unwrap();
    assert_eq!(current.current_version, winners[0].current_version);

    let ratings = (0..40).map(|i| {
        let scope = UserScope::new(t.clone(), format!("user-{i}"));
        async move { store.rate(&scope, id, "1.0.0", (i % 5 + 1) as u8).await }
    });
    assert!(join_all(ratings).await.iter().all(Result::is_ok));
    let summary = store.rating_summary(t, id, Some("1.0.0")).await.unwrap();
    assert_eq!(
        (summary.count, summary.mean),
        (40, 3.0),
        "no concurrent rating was lost"
    );

    let creates = (0..16).map(|i| {
        let mut new = package("contested", "1.0.0");
        new.skill_id = format!("skill-{i}");
        store.create_package(t, new)
    });
    let results = join_all(creates).await;
    assert_eq!(
        results.iter().filter(|r| r.is_ok()).count(),
        1,
        "exactly one create of a contested name wins"
    );
}

/// Of many concurrent deletes of one version exactly one returns `true`; deletes racing a
/// compare-and-set onto that version either delete it before it is current (and the
/// compare-and-set fails) or are refused because it is current, never both.
pub async fn concurrent_version_deletes(store: &dyn PackageStore) {
    let t = tenant();
    let (record, _) = store
        .create_package(&t, package("pdf", "1.0.0"))
        .await
        .unwrap();
    let (id, t) = (record.id.as_str(), &t);
    store
        .add_version(t, id, version("1.1.0", "contested"))
        .await
        .unwrap();
    store
        .rate(&UserScope::new(t.clone(), "alice"), id, "1.1.0", 3)
        .await
        .unwrap();

    let deletes = (0..16).map(|_| store.delete_version(t, id, "1.1.0"));
    let results = join_all(deletes).await;
    assert!(
        results.iter().all(Result::is_ok),
        "deleting a non-current version never fails: {results:?}"
    );
    assert_eq!(
        results.iter().filter(|r| matches!(r, Ok(true))).count(),
        1,
        "exactly one concurrent delete of a version wins"
    );
    assert_eq!(store.get_version(t, id, "1.1.0").await.unwrap(), None);
    assert_eq!(
        store.rating_summary(t, id, None).await.unwrap().count,
        0,
        "the winner took the ratings along"
    );

    store
        .add_version(t, id, version("2.0.0", "raced"))
        .await
        .unwrap();
    let delete = store.delete_version(t, id, "2.0.0");
    let promote = store.set_current_version(t, id, "2.0.0", "1.0.0", PackageUpdate::new());
    let (deleted, promoted) = futures::join!(delete, promote);
    let package = store.get_package(t, id).await.unwrap().unwrap();
    let stored = store.get_version(t, id, "2.0.0").await.unwrap();
    match (deleted, promoted) {
        (Ok(true), Err(Error::NotFound { .. })) => {
            assert_eq!(package.current_version, "1.0.0");
            assert_eq!(stored, None);
        }
        (Err(Error::Conflict { .. }), Ok(moved)) => {
            assert_eq!(moved.current_version, "2.0.0");
            assert_eq!(package.current_version, "2.0.0");
            assert!(stored.is_some(), "the current version survived");
        }
        other => panic!("a delete racing a compare-and-set: {other:?}"),
    }
}
