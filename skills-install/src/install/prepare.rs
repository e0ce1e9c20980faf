//! The steps before anything is written: validate, scan, digest, trust. Pure apart from the
//! scanner, so a refusal here cannot leave anything behind.

use std::collections::BTreeMap;

use skills_core::{Diagnostic, LoadOptions, SKILL_JSON, SKILL_MD, SkillManifest, SkillMd};
use skills_security::scan::{ScanReport, Severity as ScanSeverity, Verdict};
use skills_security::{TrustLevel, TrustedSources};
use skills_store_traits::StoreLimits;

use super::InstallRequest;
use crate::digest::{file_digest, package_digest, parse_digest};
use crate::error::{Error, Result};
use crate::package::{SkillPackage, SourceIdentity, parse_version};
use crate::scan::PackageScanner;
use crate::validate::validate_package;

/// Extensions treated as scripts wherever they sit.
const SCRIPT_EXTENSIONS: &[&str] = &[
    "sh", "bash", "zsh", "fish", "py", "js", "mjs", "cjs", "ts", "mts", "rb", "pl", "php", "ps1",
    "bat", "cmd", "lua",
];

/// A package that passed every check, ready to store.
#[derive(Debug, Clone)]
pub(crate) struct Prepared {
    /// The skill's name, which is also its slug and the package name.
    pub slug: String,
    pub description: String,
    /// SKILL.md's text.
    pub content: String,
    /// Every other file, as text, sorted by path.
    pub files: Vec<(String, String)>,
    pub version: String,
    pub digest: String,
    /// `sha256:` digest per path.
    pub file_digests: BTreeMap<String, String>,
    pub report: ScanReport,
    pub trust: TrustLevel,
    /// The scan found nothing above low weight: the seed's `security_verified`.
    pub verified: bool,
    /// Review verdict, or a block let through by an override.
    pub needs_approval: bool,
    pub scripts: Vec<String>,
    pub permissions: Vec<String>,
    /// The frontmatter's `requires-tools`, then the tools Codex's `agents/openai.yaml`
    /// depends on.
    pub requires_tools: Vec<String>,
    pub warnings: Vec<Diagnostic>,
    pub source: SourceIdentity,
    pub override_reason: Option<String>,
}

/// Validates under `load` (normally Spec); any error refuses with every diagnostic.
pub(crate) fn validate(
    package: &SkillPackage,
    load: &LoadOptions,
    limits: &StoreLimits,
) -> Result<(SkillMd, Option<SkillManifest>, Vec<Diagnostic>)> {
    let found = validate_package(package, load, limits);
    if !found.is_valid() {
        return Err(Error::Invalid {
            skill: crate::error::shown(package.name()),
            diagnostics: found.diagnostics,
        });
    }
    match found.skill_md {
        Some(doc) => Ok((doc, found.manifest, found.diagnostics)),
        None => Err(Error::Invalid {
            skill: crate::error::shown(package.name()),
            diagnostics: found.diagnostics,
        }),
    }
}

/// Scans; a block verdict refuses unless the request overrides it.
pub(crate) fn scan(
    scanner: &dyn PackageScanner,
    package: &SkillPackage,
    request: &InstallRequest,
) -> Result<ScanReport> {
    let report = scanner.scan(package)?;
    if report.verdict == Verdict::Block && request.override_block.is_none() {
        let summary: Vec<String> = report
            .findings
            .iter()
            .filter(|f| f.severity >= ScanSeverity::High)
            .take(5)
            .map(|f| format!("{}:{}:{} ({})", f.category, f.file, f.line, f.rule))
            .collect();
        return Err(Error::Blocked {
            skill: crate::error::shown(package.name()),
            score: report.score,
            summary: summary.join(", "),
        });
    }
    Ok(report)
}

/// The package digest, checked against the caller's expectation.
pub(crate) fn digest(package: &SkillPackage, expected: Option<&str>) -> Result<String> {
    let actual = package_digest(package.files());
    if let Some(expected) = expected {
        let expected = parse_digest(expected)?;
        if expected != actual {
            return Err(Error::DigestMismatch {
                skill: crate::error::shown(package.name()),
                expected,
                actual,
            });
        }
    }
    Ok(actual)
}

/// Seed 000's assignment: a trusted source gives verified — but only while the scan does
/// not block, since the verdict feeds the verified flag; tenant-authored skills are the
/// user's; everything else is community.
pub(crate) fn trust(
    trusted: &TrustedSources,
    source: &SourceIdentity,
    tenant_authored: bool,
    verdict: Verdict,
) -> TrustLevel {
    // A trusted repository's moving refs (a branch, someone's pull request) and its mirrors
    // (another origin) do not vouch for what they serve.
    if trusted.is_trusted(&source.trust_path) && source.immutable && verdict != Verdict::Block {
        TrustLevel::Verified
    } else if tenant_authored {
        TrustLevel::User
    } else {
        TrustLevel::Community
    }
}

/// The version to store: the declared one in canonical semver form, or, when none was
/// declared, `0.0.0+sha256.<first 12 hex digits of the digest>` so unversioned content
/// still gets a distinct, stable version.
pub(crate) fn version(package: &SkillPackage, digest: &str) -> Result<String> {
    match package.version() {
        Some(declared) => parse_version(declared)
            .map(|v| v.to_string())
            .ok_or_else(|| Error::BadVersion {
                version: crate::error::shown(declared),
            }),
        None => {
            let hex = digest.strip_prefix("sha256:").unwrap_or(digest);
            Ok(format!("0.0.0+sha256.{}", &hex[..hex.len().min(12)]))
        }
    }
}

/// Whether `path` is a script: anything under `scripts/`, or a file with a script
/// extension anywhere.
pub(crate) fn is_script(path: &str) -> bool {
    if path.starts_with("scripts/") {
        return true;
    }
    let name = path.rsplit('/').next().unwrap_or(path);
    name.rsplit_once('.').is_some_and(|(stem, ext)| {
        !stem.is_empty() && SCRIPT_EXTENSIONS.contains(&ext.to_ascii_lowercase().as_str())
    })
}

/// The permissions a skill requests: each `allowed-tools` entry of SKILL.md as
/// `allowed-tools:<entry>`, and each entry of skill.json's `permissions` (strings as they
/// are, anything else as compact JSON) as `permissions:<entry>`; sorted, unique.
pub(crate) fn permissions(skill_md: &SkillMd, package: &SkillPackage) -> Vec<String> {
    let mut out: Vec<String> = skill_md
        .frontmatter
        .allowed_tools_list()
        .into_iter()
        .map(|t| format!("allowed-tools:{t}"))
        .collect();
    let declared = package
        .file(SKILL_JSON)
        .and_then(|f| serde_json::from_slice::<serde_json::Value>(&f.bytes).ok())
        .and_then(|json| json.get("permissions").cloned());
    let entries = match declared {
        Some(serde_json::Value::Array(items)) => items,
        Some(serde_json::Value::Null) | None => Vec::new(),
        Some(other) => vec![other],
    };
    for entry in entries {
        let text = match entry {
            serde_json::Value::String(s) => s,
            other => other.to_string(),
        };
        if !text.is_empty() {
            out.push(format!("permissions:{text}"));
        }
    }
    out.sort();
    out.dedup();
    out
}

/// Runs validate, scan, digest and trust on a fetched package.
pub(crate) fn prepare(
    package: &SkillPackage,
    request: &InstallRequest,
    ctx: &super::Installer,
) -> Result<Prepared> {
    let (skill_md, _manifest, warnings) = validate(package, &ctx.load, &ctx.limits)?;
    let report = scan(ctx.scanner.as_ref(), package, request)?;
    let digest = digest(package, request.expected_digest.as_deref())?;
    let trust = trust(
        &ctx.trusted,
        package.source(),
        request.tenant_authored,
        report.verdict,
    );
    finish(package, &skill_md, report, digest, trust, request, warnings)
}

/// Assembles a [`Prepared`] from checked parts.
pub(crate) fn finish(
    package: &SkillPackage,
    skill_md: &SkillMd,
    report: ScanReport,
    digest: String,
    trust: TrustLevel,
    request: &InstallRequest,
    warnings: Vec<Diagnostic>,
) -> Result<Prepared> {
    let version = version(package, &digest)?;
    let mut content = String::new();
    let mut files = Vec::new();
    let mut file_digests = BTreeMap::new();
    for file in package.files() {
        // Validation refused non-text files, so this never drops content.
        let text = String::from_utf8_lossy(&file.bytes).into_owned();
        file_digests.insert(file.path.clone(), file_digest(&file.bytes));
        if file.path == SKILL_MD {
            content = text;
        } else {
            files.push((file.path.clone(), text));
        }
    }
    let scripts: Vec<String> = package
        .files()
        .iter()
        .map(|f| f.path.clone())
        .filter(|p| is_script(p))
        .collect();
    let sidecar_tools = files
        .iter()
        .find(|(path, _)| path == skills_core::extensions::OPENAI_SIDECAR)
        .and_then(|(_, text)| skills_core::extensions::OpenAiSidecar::parse(text))
        .map(|sidecar| sidecar.dependency_tools)
        .unwrap_or_default();
    let requires_tools =
        skills_core::extensions::merge_tools(&skill_md.frontmatter.requires_tools, &sidecar_tools);
    let verdict = report.verdict;
    Ok(Prepared {
        requires_tools,
        slug: skill_md.frontmatter.name.clone(),
        description: skill_md.frontmatter.description.clone(),
        content,
        files,
        version,
        digest,
        file_digests,
        verified: verdict == Verdict::Clean,
        needs_approval: verdict != Verdict::Clean,
        report,
        trust,
        permissions: permissions(skill_md, package),
        scripts,
        warnings,
        source: package.source().clone(),
        override_reason: request.override_block.clone(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::package::SourceKind;

    #[test]
    fn scripts_are_recognised() {
        for yes in ["scripts/x", "run.sh", "a/b/tool.PY", "scripts/data.json"] {
            assert!(is_script(yes), "{yes}");
        }
        for no in ["SKILL.md", "references/a.md", ".sh", "data.json"] {
            assert!(!is_script(no), "{no}");
        }
    }

    #[test]
    fn trust_follows_source_authorship_and_verdict() {
        let trusted = TrustedSources::new(["acme/skills"]);
        let from = |path: &str| SourceIdentity::new(SourceKind::GitHub, path, path).immutable();
        let ours = from("acme/skills/pdf");
        // The same trusted path at a moving reference (a branch, a pull-request ref).
        let moving = SourceIdentity::new(SourceKind::GitHub, "acme/skills/pdf", "acme/skills/pdf");
        assert_eq!(
            trust(&trusted, &moving, false, Verdict::Clean),
            TrustLevel::Community
        );
        let theirs = from("evil/skills/pdf");
        assert_eq!(
            trust(&trusted, &ours, false, Verdict::Clean),
            TrustLevel::Verified
        );
        assert_eq!(
            trust(&trusted, &ours, false, Verdict::Review),
            TrustLevel::Verified
        );
        assert_eq!(
            trust(&trusted, &ours, false, Verdict::Block),
            TrustLevel::Community
        );
        assert_eq!(
            trust(&trusted, &theirs, true, Verdict::Clean),
            TrustLevel::User
        );
        assert_eq!(
            trust(&trusted, &theirs, false, Verdict::Clean),
            TrustLevel::Community
        );
    }
}
