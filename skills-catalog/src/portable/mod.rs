//! The portable skill format, version 2 (seed 002 section 9): one JSON document with the
//! skill's metadata, its `SKILL.md` and every supporting file embedded; a `.tar.gz` of the
//! skill directory as the alternative ([`archive`]).
//!
//! Export reads the store only and is deterministic: the same skill gives the same bytes,
//! and export, import, export gives the same bytes again (files sorted by path, keys in a
//! fixed order, no timestamps unless the caller passes some in [`ExportMetadata`]).
//! Assignments are never exported.
//!
//! Threat: an imported document is untrusted input that may carry `../` or absolute paths,
//! oversized or binary content, invalid slugs, or a slug that clashes with an existing
//! skill. Guarantee: import checks everything (document size, version, every field and
//! path, per-file and per-skill sizes) before it writes anything, writes the skill and its
//! files in one store call, and resolves a slug clash only as the caller chose
//! ([`OnClash`]).

pub mod archive;
pub(crate) mod directory;

pub use directory::package_dir;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use skills_store_traits::{
    NewSkill, NewSkillFile, SkillRecord, SkillSourceKind, SkillStore, SkillUpdate, StoreLimits,
    TenantId, validate,
};

use crate::admin;
use crate::error::{Error, Result, prefixed};
use crate::stored::StoredSkill;
use skills_core::{ParseOptions, Profile, SkillMd};

/// The only format version this crate reads and writes.
pub const FORMAT_VERSION: u32 = 2;

/// A portable skill document.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[schemars(title = "Portable skill (format version 2)")]
pub struct PortableSkill {
    /// Always 2.
    pub format_version: u32,
    /// The skill.
    pub skill: PortableSkillBody,
    /// Where and when it was exported; informational.
    #[serde(default, skip_serializing_if = "ExportMetadata::is_empty")]
    pub metadata: ExportMetadata,
}

/// The skill inside a [`PortableSkill`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PortableSkillBody {
    /// Human-readable name, 1-128 characters.
    pub name: String,
    /// Slug: `^[a-z][a-z0-9-]*$`, at most 64 characters.
    #[schemars(regex(pattern = r"^[a-z][a-z0-9-]*$"), length(min = 1, max = 64))]
    pub slug: String,
    /// Short description.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// One of the predefined categories.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub category: Option<String>,
    /// Tags, each `^[a-z0-9-]+$`, at most 20.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tags: Vec<String>,
    /// Version.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// Tools the skill expects.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub requires_tools: Vec<String>,
    /// The `SKILL.md` text.
    #[schemars(length(min = 1))]
    pub content: String,
    /// Supporting files; empty or absent for a simple skill.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub files: Vec<PortableFile>,
}

/// An embedded supporting file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PortableFile {
    /// Relative path: no `..`, not absolute, at most 256 characters.
    #[schemars(length(min = 1, max = 256))]
    pub path: String,
    /// Text content.
    pub content: String,
    /// MIME type.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content_type: Option<String>,
}

/// Export provenance.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ExportMetadata {
    /// An RFC 3339 time, when the caller supplies one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exported_at: Option<String>,
    /// The exporting system.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exported_from: Option<String>,
    /// Who exported it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub author: Option<String>,
}

impl ExportMetadata {
    fn is_empty(&self) -> bool {
        self.exported_at.is_none() && self.exported_from.is_none() && self.author.is_none()
    }
}

/// The JSON Schema of the portable format, generated from the types above.
///
/// ```
/// let schema = skills_catalog::portable::json_schema();
/// assert_eq!(schema["title"], "Portable skill (format version 2)");
/// assert!(schema["required"].as_array().unwrap().iter().any(|k| k == "formatVersion"));
/// ```
pub fn json_schema() -> serde_json::Value {
    serde_json::to_value(schemars::schema_for!(PortableSkill)).unwrap_or_default()
}

/// What to do when an imported slug already exists.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum OnClash {
    /// Refuse with [`Error::SlugExists`] (the default).
    #[default]
    Error,
    /// Keep the existing skill and report [`ImportAction::Skipped`].
    Skip,
    /// Replace the existing skill's content, metadata and files (never a plugin skill's).
    Overwrite,
}

/// Import settings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImportOptions {
    /// Slug clash policy.
    pub on_clash: OnClash,
    /// Per-file and per-skill limits.
    pub limits: StoreLimits,
    /// The largest document (JSON bytes, or decompressed archive bytes) read at all
    /// (default 8 MiB).
    pub max_document_bytes: u64,
    /// The most entries an archive may hold (default 2000).
    pub max_entries: usize,
    /// The trust level imported skills run at (`core`, `verified`, `community`, `user`): the
    /// importing host's decision, never the document's (a document cannot vouch for itself).
    /// `None` (the default): unknown, so community.
    pub trust_level: Option<String>,
}

impl Default for ImportOptions {
    fn default() -> Self {
        ImportOptions {
            on_clash: OnClash::Error,
            limits: StoreLimits::default(),
            max_document_bytes: 8 * 1024 * 1024,
            max_entries: 2000,
            trust_level: None,
        }
    }
}

impl ImportOptions {
    /// Default limits with a clash policy.
    pub fn on_clash(on_clash: OnClash) -> Self {
        ImportOptions {
            on_clash,
            ..Self::default()
        }
    }
}

/// What an import did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ImportAction {
    /// A new skill.
    Created,
    /// An existing skill was replaced.
    Overwritten,
    /// The slug existed and the caller chose to skip.
    Skipped,
}

/// The outcome of an import.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Imported {
    /// The skill as stored now.
    pub skill: SkillRecord,
    /// What happened.
    pub action: ImportAction,
}

/// Exports a stored skill.
pub async fn export(
    store: &dyn SkillStore,
    tenant: &TenantId,
    skill_id: &str,
    metadata: ExportMetadata,
) -> Result<PortableSkill> {
    let skill = StoredSkill::load(store, tenant, skill_id).await?;
    Ok(to_portable(&skill, metadata))
}

/// The portable form of a stored skill.
pub fn to_portable(skill: &StoredSkill, metadata: ExportMetadata) -> PortableSkill {
    let r = &skill.record;
    let mut files: Vec<PortableFile> = skill
        .files
        .iter()
        .map(|f| PortableFile {
            path: f.relative_path.clone(),
            content: f.content.clone(),
            content_type: Some(f.content_type.clone()),
        })
        .collect();
    files.sort_by(|a, b| a.path.as_bytes().cmp(b.path.as_bytes()));
    PortableSkill {
        format_version: FORMAT_VERSION,
        skill: PortableSkillBody {
            name: r.name.clone(),
            slug: r.slug.clone(),
            description: r.description.clone(),
            category: Some(r.category.clone()),
            tags: r.tags.clone(),
            version: r.version.clone(),
            requires_tools: r.requires_tools.clone(),
            content: r.content.clone(),
            files,
        },
        metadata,
    }
}

/// Serializes a document: pretty JSON with a trailing newline, keys in declaration order.
pub fn to_json(document: &PortableSkill) -> Result<String> {
    let mut text = serde_json::to_string_pretty(document).map_err(|e| Error::Malformed {
        format: "portable JSON",
        message: e.to_string(),
    })?;
    text.push('\n');
    Ok(text)
}

/// Parses a portable JSON document (size-capped, unknown fields and duplicate keys refused,
/// version checked) and validates every field; writes nothing.
pub fn parse_json(bytes: &[u8], options: &ImportOptions) -> Result<PortableSkill> {
    if bytes.len() as u64 > options.max_document_bytes {
        return Err(Error::TooLarge {
            what: format!("the document ({} bytes)", bytes.len()),
            limit: options.max_document_bytes,
        });
    }
    let probe: serde_json::Value = serde_json::from_slice(bytes).map_err(|e| Error::Malformed {
        format: "portable JSON",
        message: e.to_string(),
    })?;
    match probe
        .get("formatVersion")
        .and_then(serde_json::Value::as_u64)
    {
        Some(2) => {}
        Some(other) => {
            return Err(Error::Malformed {
                format: "portable JSON",
                message: format!("formatVersion {other} is not supported; expected 2"),
            });
        }
        None => {
            return Err(Error::Malformed {
                format: "portable JSON",
                message: "missing numeric `formatVersion`".into(),
            });
        }
    }
    let document: PortableSkill = serde_json::from_slice(bytes).map_err(|e| Error::Malformed {
        format: "portable JSON",
        message: e.to_string(),
    })?;
    to_new_skill(&document, &options.limits)?;
    Ok(document)
}

/// Converts and validates a document into the store's input, naming fields as
/// `skill.<field>`.
pub fn to_new_skill(document: &PortableSkill, limits: &StoreLimits) -> Result<NewSkill> {
    let body = &document.skill;
    let mut new = NewSkill::new(body.name.clone(), body.slug.clone(), body.content.clone());
    new.description = body.description.clone();
    new.category = body.category.clone();
    new.tags = body.tags.clone();
    new.version = body.version.clone();
    new.requires_tools = body.requires_tools.clone();
    new.source_kind = Some(SkillSourceKind::Admin);
    new.files = body
        .files
        .iter()
        .map(|f| {
            let mut file = NewSkillFile::new(f.path.clone(), f.content.clone());
            file.content_type = f.content_type.clone();
            file
        })
        .collect();
    new.is_directory = !new.files.is_empty();
    validate::check_new_skill(&new, limits).map_err(|e| prefixed("skill.", e))?;
    Ok(new)
}

/// Imports a parsed document into the store as an admin skill.
///
/// ```
/// # futures::executor::block_on(async {
/// use skills_catalog::portable::{self, ExportMetadata, ImportOptions, OnClash};
/// use skills_store_traits::{in_memory::InMemorySkillStore, NewSkill, SkillStore, TenantId};
///
/// let (from, to) = (InMemorySkillStore::new(), InMemorySkillStore::new());
/// let tenant = TenantId::new("acme");
/// let skill = from.create_skill(&tenant, NewSkill::new("Hi", "hi", "# Hi\n").with_file("a.md", "A")).await?;
/// let json = portable::to_json(&portable::export(&from, &tenant, &skill.id, ExportMetadata::default()).await?)?;
///
/// let options = ImportOptions::on_clash(OnClash::Error);
/// let imported = portable::import(&to, &tenant, portable::parse_json(json.as_bytes(), &options)?, &options).await?;
/// let again = portable::to_json(&portable::export(&to, &tenant, &imported.skill.id, ExportMetadata::default()).await?)?;
/// assert_eq!(json, again, "export, import, export gives the same bytes");
/// # Ok::<(), skills_catalog::Error>(())
/// # }).unwrap();
/// ```
pub async fn import(
    store: &dyn SkillStore,
    tenant: &TenantId,
    document: PortableSkill,
    options: &ImportOptions,
) -> Result<Imported> {
    let mut new = to_new_skill(&document, &options.limits)?;
    new.trust_level.clone_from(&options.trust_level);
    let existing = store.find_skill_by_slug(tenant, &new.slug).await?;
    let Some(existing) = existing else {
        let skill = store
            .create_skill(tenant, new)
            .await
            .map_err(|e| prefixed("skill.", e))?;
        return Ok(Imported {
            skill,
            action: ImportAction::Created,
        });
    };
    match options.on_clash {
        OnClash::Error => Err(Error::SlugExists { slug: new.slug }),
        OnClash::Skip => Ok(Imported {
            skill: existing,
            action: ImportAction::Skipped,
        }),
        OnClash::Overwrite => {
            admin::refuse_plugin(&existing)?;
            let update = SkillUpdate {
                name: Some(new.name),
                description: Some(new.description),
                category: Some(new.category.unwrap_or_else(|| "general".to_owned())),
                content: Some(new.content),
                version: Some(new.version),
                tags: Some(new.tags),
                requires_tools: Some(new.requires_tools),
                trust_level: Some(new.trust_level),
                files: Some(new.files),
                ..SkillUpdate::default()
            };
            let skill = store
                .update_skill(tenant, &existing.id, update)
                .await
                .map_err(|e| prefixed("skill.", e))?
                .ok_or_else(|| skills_store_traits::Error::not_found("skill", existing.id))?;
            Ok(Imported {
                skill,
                action: ImportAction::Overwritten,
            })
        }
    }
}

/// Builds a document from a `SKILL.md` and its files, taking name, description, tags,
/// category, version and required tools from the frontmatter (and the tools Codex's
/// `agents/openai.yaml` depends on, when the files hold one). The slug is the frontmatter
/// `name` when it is a valid slug (the Agent Skills format already restricts names to
/// one), otherwise `dir_name`. Validated, nothing written.
pub(crate) fn from_parts(
    content: String,
    files: Vec<PortableFile>,
    dir_name: Option<String>,
    limits: &StoreLimits,
) -> Result<PortableSkill> {
    let sidecar_tools = |files: &[PortableFile]| -> Vec<String> {
        files
            .iter()
            .find(|f| f.path == skills_core::extensions::OPENAI_SIDECAR)
            .and_then(|f| skills_core::extensions::OpenAiSidecar::parse(&f.content))
            .map(|s| s.dependency_tools)
            .unwrap_or_default()
    };
    let parsed = SkillMd::parse_str(
        &content,
        dir_name.as_deref(),
        &ParseOptions::for_profile(Profile::Lenient),
    );
    let front = parsed.document.map(|d| d.frontmatter);
    let name = front
        .as_ref()
        .map(|f| f.name.clone())
        .filter(|n| !n.is_empty());
    let slug = name
        .clone()
        .filter(|n| validate::check_slug("slug", n).is_ok())
        .or(dir_name)
        .unwrap_or_default();
    let document = PortableSkill {
        format_version: FORMAT_VERSION,
        skill: PortableSkillBody {
            name: name.unwrap_or_else(|| slug.clone()),
            slug,
            description: front
                .as_ref()
                .map(|f| f.description.clone())
                .filter(|d| !d.is_empty()),
            category: front.as_ref().and_then(|f| f.category.clone()),
            tags: front.as_ref().map(|f| f.tags.clone()).unwrap_or_default(),
            version: front.as_ref().and_then(|f| f.version.clone()),
            // The frontmatter's, then those Codex's `agents/openai.yaml` depends on.
            requires_tools: skills_core::extensions::merge_tools(
                front
                    .as_ref()
                    .map(|f| f.requires_tools.as_slice())
                    .unwrap_or_default(),
                &sidecar_tools(&files),
            ),
            content,
            files,
        },
        metadata: ExportMetadata::default(),
    };
    to_new_skill(&document, limits)?;
    Ok(document)
}
