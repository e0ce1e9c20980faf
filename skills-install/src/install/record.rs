//! What an install writes besides content: the skill's `install` metadata, the store's
//! version input, and the audit record.

use serde_json::{Map, Value, json};
use skills_security::TrustLevel;
use skills_store_traits::audit::AuditRecord;
use skills_store_traits::packages::{
    NewPackageVersion, PackageFile as StoredFile, PackageRecord, PackageSource,
    PackageVersionRecord,
};
use skills_store_traits::{
    NewSkillFile, SkillFileRecord, SkillRecord, SkillUpdate, Timestamp, UserScope,
};

use super::prepare::Prepared;

/// The key under which a skill's metadata holds its install facts.
pub const INSTALL_METADATA_KEY: &str = "install";

/// The `install` metadata of a skill installed from `prepared`; `nonce` marks this very
/// write so an ambiguous store failure can be cleaned up without touching anyone else's.
pub(crate) fn metadata(
    prepared: &Prepared,
    trust: TrustLevel,
    approved: bool,
    nonce: &str,
) -> Map<String, Value> {
    let source = &prepared.source;
    let mut map = Map::new();
    map.insert(
        INSTALL_METADATA_KEY.to_owned(),
        json!({
            "package": prepared.slug,
            "version": prepared.version,
            "digest": prepared.digest,
            "trustLevel": trust.as_str(),
            "securityVerified": prepared.verified,
            "verdict": prepared.report.verdict.as_str(),
            "score": prepared.report.score,
            "approved": approved,
            "source": {
                "kind": source.kind.as_str(),
                "locator": source.locator,
                "trustPath": source.trust_path,
                "revision": source.revision,
            },
            "nonce": nonce,
        }),
    );
    map
}

/// The nonce recorded in a skill's `install` metadata.
pub(crate) fn nonce_of(metadata: &Map<String, Value>) -> Option<&str> {
    metadata.get(INSTALL_METADATA_KEY)?.get("nonce")?.as_str()
}

/// The package source the store keeps.
pub(crate) fn package_source(prepared: &Prepared) -> PackageSource {
    PackageSource::new(
        prepared.source.kind.as_str(),
        prepared.source.locator.clone(),
    )
}

/// The store's input for the version `prepared` describes. Its `scan_report` (a shape
/// this crate owns) is `{"report": <ScanReport>, "trustLevel", "trustPath", "revision"}`,
/// so a later switch to this version restores the trust level it was assigned.
pub(crate) fn new_version(
    prepared: &Prepared,
    approved: bool,
    scope: &UserScope,
) -> NewPackageVersion {
    let mut files = vec![StoredFile::new(
        skills_core::SKILL_MD,
        prepared.content.clone(),
    )];
    files.extend(
        prepared
            .files
            .iter()
            .map(|(path, text)| StoredFile::new(path.clone(), text.clone())),
    );
    let mut version = NewPackageVersion::new(
        prepared.version.clone(),
        prepared.digest.clone(),
        prepared.report.verdict.as_str(),
        files,
    );
    version.file_digests = prepared.file_digests.clone();
    version.scripts = prepared.scripts.clone();
    version.permissions = prepared.permissions.clone();
    version.scan_report = json!({
        "report": serde_json::to_value(&prepared.report).unwrap_or(Value::Null),
        "trustLevel": prepared.trust.as_str(),
        "trustPath": prepared.source.trust_path,
        "revision": prepared.source.revision,
    });
    version.approved = approved;
    version.created_by = Some(scope.user.clone());
    version
}

/// The skill update that makes a stored skill hold `prepared`'s content (`enabled`: what
/// the caller decided, which for a held skill is false: see [`enabled_after`]).
pub(crate) fn content_update(
    prepared: &Prepared,
    metadata: Map<String, Value>,
    enabled: bool,
) -> SkillUpdate {
    SkillUpdate {
        name: Some(prepared.slug.clone()),
        description: Some(Some(prepared.description.clone())),
        content: Some(prepared.content.clone()),
        version: Some(Some(prepared.version.clone())),
        requires_tools: Some(prepared.requires_tools.clone()),
        enabled: Some(enabled),
        metadata: Some(metadata),
        trust_level: Some(Some(prepared.trust.as_str().to_owned())),
        files: Some(skill_files(&prepared.files)),
        ..SkillUpdate::default()
    }
}

/// Supporting files as the skill store takes them.
pub(crate) fn skill_files(files: &[(String, String)]) -> Vec<NewSkillFile> {
    files
        .iter()
        .map(|(path, text)| NewSkillFile::new(path.clone(), text.clone()))
        .collect()
}

/// Whether a skill whose content becomes an `approved` (or unapproved) version is enabled:
/// only when approved, and never while an operator holds it (the store keeps a held skill
/// disabled anyway; the installer does not even ask).
pub(crate) fn enabled_after(skill: &SkillRecord, approved: bool) -> bool {
    approved && !skill.held
}

/// What an audited operation was: a package operation, or an operator's action by hand.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Action {
    Install,
    Update,
    Approve,
    Switch,
    Deprecate,
    Uninstall,
    Disable,
    Enable,
    Trust,
    Assign,
    Unassign,
}

impl Action {
    /// The record's `trigger_reason`: `package:<operation>` or `operator:<action>`.
    fn trigger(self) -> &'static str {
        match self {
            Action::Install => "package:install",
            Action::Update => "package:update",
            Action::Approve => "package:approve",
            Action::Switch => "package:switch_version",
            Action::Deprecate => "package:deprecate",
            Action::Uninstall => "package:uninstall",
            Action::Disable => "operator:disable",
            Action::Enable => "operator:enable",
            Action::Trust => "operator:trust",
            Action::Assign => "operator:assign",
            Action::Unassign => "operator:unassign",
        }
    }
}

/// Facts for one audit record.
pub(crate) struct AuditFacts<'a> {
    pub action: Action,
    pub skill_id: &'a str,
    pub skill_path: &'a str,
    pub trust: &'a str,
    pub version: Option<&'a str>,
    pub digest: &'a str,
    pub flags: Vec<String>,
}

/// The audit record of an operation: the skill path is the source's trust path, the input
/// hash the package digest, the trigger `package:<operation>` or `operator:<action>`.
pub(crate) fn audit_record(
    scope: &UserScope,
    now: Timestamp,
    facts: AuditFacts<'_>,
) -> AuditRecord {
    let digest = if facts.digest.is_empty() {
        "none"
    } else {
        facts.digest
    };
    let mut record = AuditRecord::new(
        scope.user.clone(),
        facts.skill_id,
        facts.skill_path,
        facts.trust,
        digest,
        true,
    );
    record.timestamp = now;
    record.skill_version = facts.version.map(str::to_owned);
    record.trigger_reason = Some(facts.action.trigger().to_owned());
    record.security_flags = facts.flags;
    record
}

/// The security flags of a prepared package: its verdict and score, an override, whether
/// it awaits approval.
pub(crate) fn flags(prepared: &Prepared, approved: bool) -> Vec<String> {
    let mut flags = vec![
        format!("scan:{}", prepared.report.verdict.as_str()),
        format!("scan_score:{}", prepared.report.score),
    ];
    if let Some(reason) = &prepared.override_reason {
        flags.push(format!(
            "scan_override:{}",
            skills_core::diagnostic::shown(reason)
        ));
    }
    if !approved {
        flags.push("needs_approval".to_owned());
    }
    flags
}

/// The trust level a stored version was assigned (see [`new_version`]).
pub(crate) fn stored_trust(version: &PackageVersionRecord) -> Option<&str> {
    version.scan_report.get("trustLevel")?.as_str()
}

/// The trust path of the source a stored version came from (see [`new_version`]).
pub(crate) fn stored_trust_path(version: &PackageVersionRecord) -> Option<&str> {
    version.scan_report.get("trustPath")?.as_str()
}

/// The score of a stored version's scan.
pub(crate) fn stored_score(version: &PackageVersionRecord) -> u64 {
    version
        .scan_report
        .get("report")
        .and_then(|r| r.get("score"))
        .and_then(Value::as_u64)
        .unwrap_or(0)
}

/// The `install` metadata of a skill switched to a stored version.
pub(crate) fn metadata_for_version(
    package: &PackageRecord,
    version: &PackageVersionRecord,
    trust: &str,
    previous: &Map<String, Value>,
) -> Map<String, Value> {
    let mut map = previous.clone();
    let source = previous
        .get(INSTALL_METADATA_KEY)
        .and_then(|m| m.get("source"))
        .cloned()
        .unwrap_or(Value::Null);
    map.insert(
        INSTALL_METADATA_KEY.to_owned(),
        json!({
            "package": package.name,
            "version": version.version,
            "digest": version.digest,
            "trustLevel": trust,
            "securityVerified": version.verdict == "clean",
            "verdict": version.verdict,
            "score": stored_score(version),
            "approved": version.approved,
            "source": source,
            "nonce": previous.get(INSTALL_METADATA_KEY).and_then(|m| m.get("nonce")).cloned().unwrap_or(Value::Null),
        }),
    );
    map
}

/// The skill update that makes a stored skill hold a stored version's files (`enabled` as
/// [`enabled_after`] decides).
pub(crate) fn version_update(
    version: &PackageVersionRecord,
    metadata: Map<String, Value>,
    enabled: bool,
) -> SkillUpdate {
    let mut content = String::new();
    let mut files = Vec::new();
    for file in &version.files {
        if file.path == skills_core::SKILL_MD {
            content.clone_from(&file.content);
        } else {
            files.push(NewSkillFile::new(file.path.clone(), file.content.clone()));
        }
    }
    let description = skills_core::SkillMd::parse_str(
        &content,
        None,
        &skills_core::ParseOptions::for_profile(skills_core::Profile::Lenient),
    )
    .document
    .map(|d| d.frontmatter.description)
    .filter(|d| !d.is_empty());
    SkillUpdate {
        description: Some(description),
        content: Some(content),
        version: Some(Some(version.version.clone())),
        enabled: Some(enabled),
        metadata: Some(metadata),
        files: Some(files),
        ..SkillUpdate::default()
    }
}

/// The update that puts a skill back exactly as `skill` and `files` show it.
pub(crate) fn restore_update(skill: &SkillRecord, files: &[SkillFileRecord]) -> SkillUpdate {
    SkillUpdate {
        name: Some(skill.name.clone()),
        description: Some(skill.description.clone()),
        category: Some(skill.category.clone()),
        content: Some(skill.content.clone()),
        version: Some(skill.version.clone()),
        tags: Some(skill.tags.clone()),
        requires_tools: Some(skill.requires_tools.clone()),
        enabled: Some(skill.enabled),
        held: Some(skill.held),
        metadata: Some(skill.metadata.clone()),
        source_ref: Some(skill.source_ref.clone()),
        trust_level: Some(skill.trust_level.clone()),
        files: Some(
            files
                .iter()
                .map(|f| {
                    let mut file = NewSkillFile::new(f.relative_path.clone(), f.content.clone());
                    file.content_type = Some(f.content_type.clone());
                    file
                })
                .collect(),
        ),
    }
}
