//! Validating a fetched package in memory under the Spec profile, collecting every
//! diagnostic: what `skills_core::load_skill_dir` checks for a directory, for files that
//! never touch the disk.
//!
//! Beyond the core rules, a package must be storable: `SKILL.md` must exist, the name must
//! be a store slug, and every file must be text within the store's per-file and per-skill
//! limits. The core rules report those last three as warnings (an agent may read such a
//! directory); here they are errors, because the store would refuse the write.

use skills_core::diagnostic::{Diagnostic, Profile, Rule, Severity, has_errors};
use skills_core::{LoadOptions, SKILL_JSON, SKILL_MD, SkillManifest, SkillMd};
use skills_store_traits::StoreLimits;

use crate::package::SkillPackage;

/// What validating a package found.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Validated {
    /// The parsed SKILL.md, when it could be read.
    pub skill_md: Option<SkillMd>,
    /// The parsed skill.json, when there is a valid one.
    pub manifest: Option<SkillManifest>,
    /// Every diagnostic, in the order found.
    pub diagnostics: Vec<Diagnostic>,
}

impl Validated {
    /// True when no diagnostic is an error.
    pub fn is_valid(&self) -> bool {
        self.skill_md.is_some() && !has_errors(&self.diagnostics)
    }
}

/// Validates `package` under `options` (normally the Spec profile) and the store's limits.
///
/// ```
/// use skills_install::{PackageFile, PackageLimits, SkillPackage, SourceIdentity, SourceKind};
/// use skills_install::validate::validate_package;
/// use skills_core::{LoadOptions, Profile};
///
/// let files = vec![PackageFile::new("SKILL.md", "---\nname: Bad Name\n---\n")];
/// let id = SourceIdentity::new(SourceKind::Local, "x", "local/x");
/// let package = SkillPackage::new("x", None, files, id, &PackageLimits::default())?;
/// let found = validate_package(&package, &LoadOptions::for_profile(Profile::Spec), &Default::default());
/// let codes: Vec<&str> = found.diagnostics.iter().map(|d| d.code()).collect();
/// assert!(codes.contains(&"name-not-lowercase"));
/// assert!(codes.contains(&"description-missing"));
/// # Ok::<(), skills_install::Error>(())
/// ```
pub fn validate_package(
    package: &SkillPackage,
    options: &LoadOptions,
    limits: &StoreLimits,
) -> Validated {
    let profile = options.profile();
    let mut diagnostics = Vec::new();
    let entry = package.file(SKILL_MD).or_else(|| {
        package
            .files()
            .iter()
            .find(|f| !f.path.contains('/') && f.path.eq_ignore_ascii_case(SKILL_MD))
    });
    let manifest_file = package.file(SKILL_JSON);
    let mut skill_md = None;
    match entry {
        None => diagnostics.push(
            Diagnostic::new(
                Rule::SkillMdMissing,
                profile,
                "missing required file: SKILL.md",
            )
            .in_file(SKILL_MD),
        ),
        Some(file) => {
            if file.path != SKILL_MD {
                diagnostics.push(
                    Diagnostic::new(
                        Rule::SkillMdLowercase,
                        profile,
                        format!(
                            "the entry file must be named exactly `SKILL.md`, not `{}`",
                            file.path
                        ),
                    )
                    .in_file(file.path.as_str()),
                );
            }
            if file.bytes.len() as u64 > options.max_skill_md_bytes {
                diagnostics.push(
                    Diagnostic::new(
                        Rule::SkillMdTooLarge,
                        profile,
                        format!(
                            "`SKILL.md` is {} bytes; files over {} bytes are not read",
                            file.bytes.len(),
                            options.max_skill_md_bytes
                        ),
                    )
                    .in_file(file.path.as_str()),
                );
            } else {
                let parsed = SkillMd::parse(&file.bytes, package.directory(), &options.parse);
                let documentation_only = manifest_file.is_some();
                for mut d in parsed.diagnostics {
                    if documentation_only && d.rule == Rule::FrontmatterMissing {
                        d = Diagnostic::new(
                            Rule::SkillMdDocumentationOnly,
                            profile,
                            "SKILL.md has no frontmatter; skill.json defines the skill",
                        )
                        .at_optional_line(d.line);
                    }
                    diagnostics.push(d.in_file(file.path.as_str()));
                }
                skill_md = parsed.document;
            }
        }
    }
    let mut manifest = None;
    if let Some(file) = manifest_file {
        let parsed =
            SkillManifest::parse(&file.bytes, package.directory(), &options.manifest, profile);
        diagnostics.extend(parsed.diagnostics);
        let json_name = parsed.name.as_deref().map(|n| {
            skills_core::strip_prefix(n, &options.manifest.prefix)
                .unwrap_or(n)
                .to_owned()
        });
        let md_name = skill_md.as_ref().map(|d| d.frontmatter.name.as_str());
        if let (Some(md), Some(json)) = (md_name.filter(|n| !n.is_empty()), &json_name)
            && md.replace('_', "-") != json.replace('_', "-")
        {
            diagnostics.push(
                Diagnostic::new(
                    Rule::ManifestNameDisagrees,
                    profile,
                    format!("SKILL.md names the skill `{md}` but skill.json names it `{json}`"),
                )
                .in_file(SKILL_JSON),
            );
        }
        manifest = parsed.manifest;
    }
    if let Some(doc) = &skill_md {
        let name = &doc.frontmatter.name;
        if !name.is_empty() && skills_store_traits::validate::check_slug("slug", name).is_err() {
            diagnostics.push(
                error(
                    Rule::NameInvalidCharacters,
                    profile,
                    format!("the name `{name}` cannot be a store slug (`^[a-z][a-z0-9-]*$`, at most 64 characters)"),
                )
                .in_file(SKILL_MD),
            );
        }
    }
    storable(package, limits, profile, &mut diagnostics);
    if skill_md.is_none() && !has_errors(&diagnostics) {
        diagnostics.push(
            Diagnostic::new(
                Rule::FrontmatterMissing,
                profile,
                "SKILL.md could not be read",
            )
            .in_file(SKILL_MD),
        );
    }
    Validated {
        skill_md,
        manifest,
        diagnostics,
    }
}

/// A diagnostic that is an error whatever the profile says: the store cannot hold it.
fn error(rule: Rule, profile: Profile, message: String) -> Diagnostic {
    let mut d = Diagnostic::new(rule, profile, message);
    d.severity = Severity::Error;
    d
}

fn storable(
    package: &SkillPackage,
    limits: &StoreLimits,
    profile: Profile,
    diagnostics: &mut Vec<Diagnostic>,
) {
    let mut total = 0u64;
    for file in package.files() {
        let len = file.bytes.len() as u64;
        total = total.saturating_add(len);
        let text = std::str::from_utf8(&file.bytes).is_ok() && !file.bytes.contains(&0);
        if !text {
            diagnostics.push(
                error(
                    Rule::FileBinary,
                    profile,
                    "the file is not UTF-8 text; the store holds text files only".to_owned(),
                )
                .in_file(file.path.as_str()),
            );
        }
        if file.path != SKILL_MD && len > limits.max_file_bytes {
            diagnostics.push(
                error(
                    Rule::FileTooLarge,
                    profile,
                    format!(
                        "the file is {len} bytes; the store's limit is {}",
                        limits.max_file_bytes
                    ),
                )
                .in_file(file.path.as_str()),
            );
        }
    }
    if total > limits.max_skill_bytes {
        diagnostics.push(
            error(
                Rule::SkillTooLarge,
                profile,
                format!(
                    "the skill's files total {total} bytes; the store's limit is {}",
                    limits.max_skill_bytes
                ),
            )
            .in_file("."),
        );
    }
}
