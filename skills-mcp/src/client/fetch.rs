//! Listing and fetching skills, and the `SkillSource` implementation.

use async_trait::async_trait;
use base64::Engine as _;
use rmcp::model::{
    GetSkillRequestParams, PaginatedRequestParams, ReadResourceRequestParams, ResourceContents,
    Skill, SkillResources,
};
use serde_json::Value;
use skills_core::SKILL_MD;
use skills_install::{
    PackageFile, SkillPackage, SkillRef, SkillSource, SourceIdentity, SourceKind,
};

use super::McpSkillSource;
use crate::error::{Error, Result, shown};
use crate::protocol::{parse_skill_uri, relative_to_skill, skill_uri};

/// The version a skill entry declares: `metadata.version`, else `version`.
fn declared_version(skill: &Skill) -> Option<String> {
    let extra = &skill.frontmatter.extra;
    extra
        .get("metadata")
        .and_then(|m| m.get("version"))
        .or_else(|| extra.get("version"))
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|v| !v.is_empty())
        .map(str::to_owned)
}

/// The `SKILL.md` URI a locator names: a skill name, or the URI itself.
fn locator_uri(locator: &str) -> Result<String> {
    if locator.starts_with(crate::protocol::SCHEME) {
        let (name, path) = parse_skill_uri(locator)?;
        if path != SKILL_MD {
            return Err(Error::UnsafePath {
                uri: shown(locator),
                reason: "a skill locator must name its SKILL.md".into(),
            });
        }
        Ok(skill_uri(&name, SKILL_MD))
    } else {
        let (name, path) = parse_skill_uri(&skill_uri(locator, SKILL_MD))?;
        debug_assert_eq!(path, SKILL_MD);
        Ok(skill_uri(&name, SKILL_MD))
    }
}

/// Checks a `skills/get` entry for `uri`: the URI it answers for, containment of every
/// manifest path (`Error::UnsafePath`), then SEP-2640's structural rules (rmcp's
/// `Skill::validate`: name, manifest holds `SKILL.md`, no duplicates, well-formed digests).
pub fn check_entry(uri: &str, skill: Skill) -> Result<Skill> {
    if skill.uri != uri {
        return Err(Error::Malformed {
            what: "skills/get".into(),
            message: format!("asked for {uri}, got {}", shown(&skill.uri)),
        });
    }
    // Containment first, so an escaping path is reported as such, not as a
    // structural fault of the entry.
    if let SkillResources::Files(files) = &skill.resources {
        for file in files {
            relative_to_skill(&skill.uri, &file.uri)?;
        }
    }
    skill.validate().map_err(|e| Error::Malformed {
        what: format!("the entry of {uri}"),
        message: shown(&e.to_string()),
    })?;
    Ok(skill)
}

/// The bytes of one `resources/read` answer for `file`, checked against its manifest entry
/// (one content block, text or base64 at most `limit` bytes, the promised size and digest).
pub fn file_bytes(
    file: &rmcp::model::SkillResource,
    result: &rmcp::model::ReadResourceResult,
    limit: u64,
) -> Result<Vec<u8>> {
    let [content] = result.contents.as_slice() else {
        return Err(Error::Malformed {
            what: format!("resources/read of {}", shown(&file.uri)),
            message: format!("expected one content block, got {}", result.contents.len()),
        });
    };
    let bytes = match content {
        ResourceContents::TextResourceContents { text, .. } => text.as_bytes().to_vec(),
        ResourceContents::BlobResourceContents { blob, .. } => {
            // Base64 is 4/3 of the bytes: refuse before decoding anything larger.
            if blob.len() as u64 > limit.saturating_mul(4) / 3 + 4 {
                return Err(Error::TooLarge {
                    what: shown(&file.uri),
                    limit,
                });
            }
            base64::engine::general_purpose::STANDARD
                .decode(blob)
                .map_err(|e| Error::Malformed {
                    what: format!("resources/read of {}", shown(&file.uri)),
                    message: e.to_string(),
                })?
        }
        _ => {
            return Err(Error::Malformed {
                what: format!("resources/read of {}", shown(&file.uri)),
                message: "not a text or blob content".into(),
            });
        }
    };
    file.verify(&bytes).map_err(|e| {
        let (expected, actual) = match e {
            rmcp::model::SkillIntegrityError::Size {
                expected, actual, ..
            } => (format!("{expected} bytes"), format!("{actual} bytes")),
            rmcp::model::SkillIntegrityError::Digest {
                expected, actual, ..
            } => (shown(&expected), actual),
            other => (String::new(), other.to_string()),
        };
        Error::DigestMismatch {
            uri: shown(&file.uri),
            expected,
            actual,
        }
    })?;
    Ok(bytes)
}

impl McpSkillSource {
    /// Every skill the server lists (`skills/list`, following pages), within the limits.
    pub async fn list(&self) -> Result<Vec<Skill>> {
        let mut skills = Vec::new();
        let mut cursor: Option<String> = None;
        for _ in 0..self.limits.max_pages {
            let params = PaginatedRequestParams::default().with_cursor(cursor.clone());
            let page = self
                .request("skills/list", self.peer().list_skills(Some(params)))
                .await?;
            skills.extend(page.skills);
            if skills.len() > self.limits.max_listed_skills {
                return Err(Error::TooLarge {
                    what: "the skills listed".into(),
                    limit: self.limits.max_listed_skills as u64,
                });
            }
            match page.next_cursor {
                Some(next) if Some(&next) != cursor.as_ref() => cursor = Some(next),
                _ => return Ok(skills),
            }
        }
        Err(Error::TooLarge {
            what: "the pages of skills/list".into(),
            limit: self.limits.max_pages as u64,
        })
    }

    /// The `skills/get` entry of the skill `locator` names, checked against SEP-2640's rules.
    pub async fn entry(&self, locator: &str) -> Result<Skill> {
        let uri = locator_uri(locator)?;
        let result = self
            .request(
                "skills/get",
                self.peer()
                    .get_skill(GetSkillRequestParams::new(uri.clone())),
            )
            .await?;
        check_entry(&uri, result.skill)
    }

    /// Reads one file and checks it against its manifest entry.
    async fn read_checked(&self, file: &rmcp::model::SkillResource) -> Result<Vec<u8>> {
        let result = self
            .request(
                "resources/read",
                self.peer()
                    .read_resource(ReadResourceRequestParams::new(file.uri.clone())),
            )
            .await?;
        file_bytes(file, &result, self.limits.package.max_file_bytes)
    }

    /// Fetches the skill `locator` names (a name or its `SKILL.md` URI), every file checked
    /// against the manifest; `version`, when given, must be the one the entry declares.
    pub async fn fetch_checked(
        &self,
        locator: &str,
        version: Option<&str>,
    ) -> Result<SkillPackage> {
        let skill = self.entry(locator).await?;
        let declared = declared_version(&skill);
        if let Some(wanted) = version
            && declared.as_deref() != Some(wanted)
        {
            return Err(Error::NotFound(format!(
                "version {} of `{}` on MCP server `{}`",
                shown(wanted),
                shown(skill.name()),
                self.server_id
            )));
        }
        let SkillResources::Files(manifest) = &skill.resources else {
            return Err(Error::Malformed {
                what: format!("the entry of {}", skill.uri),
                message: "a dynamic skill has no manifest to check its files against".into(),
            });
        };
        let limits = &self.limits.package;
        if manifest.len() > limits.max_files {
            return Err(Error::TooLarge {
                what: format!("the files of {}", skill.uri),
                limit: limits.max_files as u64,
            });
        }
        let mut total = 0u64;
        let mut paths = Vec::with_capacity(manifest.len());
        for file in manifest {
            let path = relative_to_skill(&skill.uri, &file.uri)?;
            if file.size > limits.max_file_bytes {
                return Err(Error::TooLarge {
                    what: shown(&file.uri),
                    limit: limits.max_file_bytes,
                });
            }
            total = total.saturating_add(file.size);
            paths.push(path);
        }
        if total > limits.max_total_bytes {
            return Err(Error::TooLarge {
                what: format!("the files of {}", skill.uri),
                limit: limits.max_total_bytes,
            });
        }
        let mut files = Vec::with_capacity(manifest.len());
        for (file, path) in manifest.iter().zip(paths) {
            let bytes = self.read_checked(file).await?;
            files.push(PackageFile::new(path, bytes));
        }
        let name = skill.name().to_owned();
        let manifest_digest = manifest_digest(manifest);
        // The manifest's digests pin exactly the bytes fetched: the content is what the
        // server vouched for at this revision, so a trusted server's skill may be verified.
        let identity = SourceIdentity::new(
            SourceKind::Mcp,
            locator,
            format!("mcp/{}/{name}", self.server_id),
        )
        .with_revision(manifest_digest)
        .immutable();
        let package = SkillPackage::new(name.clone(), declared, files, identity, limits)?;
        Ok(package.in_directory(name))
    }
}

/// `sha256:` over the manifest's lines `<digest> <uri>\n`, sorted: one value naming the
/// whole skill revision.
fn manifest_digest(manifest: &[rmcp::model::SkillResource]) -> String {
    let mut lines: Vec<String> = manifest
        .iter()
        .map(|f| format!("{} {}\n", f.digest, f.uri))
        .collect();
    lines.sort_unstable();
    rmcp::model::sha256_digest(lines.concat().as_bytes())
}

#[async_trait]
impl SkillSource for McpSkillSource {
    fn kind(&self) -> SourceKind {
        SourceKind::Mcp
    }

    async fn search(&self, query: &str) -> skills_install::Result<Vec<SkillRef>> {
        let origin = format!("mcp/{}", self.server_id);
        let skills = self.list().await.map_err(|e| e.into_install(&origin))?;
        let words: Vec<String> = query.split_whitespace().map(str::to_lowercase).collect();
        let mut found = Vec::new();
        for skill in skills {
            let name = skill.frontmatter.name.clone();
            let description = skill.frontmatter.description.clone();
            let haystack = format!("{name} {description}").to_lowercase();
            if !words.iter().all(|w| haystack.contains(w.as_str())) {
                continue;
            }
            let mut found_ref = SkillRef::new(SourceKind::Mcp, name.clone(), name);
            found_ref.description = Some(description).filter(|d| !d.is_empty());
            found_ref.version = declared_version(&skill);
            found.push(found_ref);
            if found.len() >= self.limits.package.max_search_results {
                break;
            }
        }
        found.sort_by(|a, b| a.name.cmp(&b.name));
        Ok(found)
    }

    async fn fetch(
        &self,
        locator: &str,
        version: Option<&str>,
    ) -> skills_install::Result<SkillPackage> {
        self.fetch_checked(locator, version)
            .await
            .map_err(|e| e.into_install(&format!("mcp/{}", self.server_id)))
    }

    async fn versions(&self, locator: &str) -> skills_install::Result<Vec<String>> {
        let skill = self
            .entry(locator)
            .await
            .map_err(|e| e.into_install(&format!("mcp/{}", self.server_id)))?;
        Ok(declared_version(&skill).into_iter().collect())
    }
}
