//! Skills in git repositories, through a git host's REST API (GitHub's shape): repository
//! search by topic, the contents API for a path at a ref, releases and tags for versions.
//!
//! Locators are `owner/repo` (the skill at the repository root) or `owner/repo/path/to/skill`.
//! Versions are git refs: a release tag, any tag, or a branch. With no version, the latest
//! release's tag is fetched, or the default branch when there is no release.
//!
//! Threat: a hostile host (or a repository it serves) answering with listings that name
//! paths outside the requested directory, `..` or absolute names, symlinks and submodules
//! pointing elsewhere, endless directory trees, huge files, or download URLs on other
//! hosts; exhausting the caller's rate limit. Guarantee: only files are fetched, through the
//! same API base (never an entry's `download_url`), each entry's path must be exactly the
//! listed directory joined with its own name, names are checked by
//! [`check_package_path`], symlinks and submodules are refused, depth, file count, entry
//! count, declared and actual sizes are capped; rate limiting surfaces as
//! [`Error::RateLimited`] with the server's retry hints, never as a retry loop.

use std::sync::Arc;

use async_trait::async_trait;
use serde_json::Value;

use super::{SkillSource, declared_version, describe};
use crate::base64;
use crate::error::{Error, Result, shown};
use crate::http::{self, HttpClient, HttpRequest, encode_component, trim_base};
use crate::package::{
    PackageFile, PackageLimits, SkillPackage, SkillRef, SourceIdentity, SourceKind,
    check_package_path, parse_version, sort_versions,
};

/// The repository topic searched by default (seed 003).
pub const DEFAULT_TOPIC: &str = "claude-skill";

/// A git host's REST API as a skill source.
///
/// ```
/// use std::sync::Arc;
/// use skills_install::{GitHubSource, HttpClient, HttpError, HttpRequest, HttpResponse};
///
/// struct Offline;
/// #[async_trait::async_trait]
/// impl HttpClient for Offline {
///     async fn request(&self, _: HttpRequest) -> Result<HttpResponse, HttpError> {
///         Err(HttpError::new("offline"))
///     }
/// }
/// let source = GitHubSource::new(Arc::new(Offline), "https://api.git.example")
///     .with_token("a-token")
///     .with_topic("agent-skill");
/// # let _ = source;
/// ```
#[derive(Clone)]
pub struct GitHubSource {
    http: Arc<dyn HttpClient>,
    base: String,
    token: Option<String>,
    topic: String,
    limits: PackageLimits,
}

impl std::fmt::Debug for GitHubSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GitHubSource")
            .field("base", &self.base)
            .field("token", &self.token.as_ref().map(|_| "<redacted>"))
            .field("topic", &self.topic)
            .finish_non_exhaustive()
    }
}

/// An `owner/repo[/path]` locator, checked.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Locator {
    owner: String,
    repo: String,
    path: String,
}

fn is_repo_part(part: &str) -> bool {
    !part.is_empty()
        && part != "."
        && part != ".."
        && part.len() <= 100
        && part
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
}

impl Locator {
    fn parse(text: &str) -> Result<Locator> {
        let invalid = |reason| Error::InvalidInput {
            what: "git locator",
            value: shown(text),
            reason,
        };
        let mut parts = text.splitn(3, '/');
        let owner = parts.next().unwrap_or_default();
        let repo = parts.next().unwrap_or_default();
        let path = parts.next().unwrap_or_default().trim_end_matches('/');
        if !is_repo_part(owner) || !is_repo_part(repo) {
            return Err(invalid(
                "expected `owner/repo[/path]` with owner and repository of A-Z, a-z, 0-9, `-`, `_`, `.`",
            ));
        }
        if !path.is_empty() && check_package_path(path).is_err() {
            return Err(invalid("the path is not a safe relative path"));
        }
        Ok(Locator {
            owner: owner.to_owned(),
            repo: repo.to_owned(),
            path: path.to_owned(),
        })
    }

    fn display(&self) -> String {
        if self.path.is_empty() {
            format!("{}/{}", self.owner, self.repo)
        } else {
            format!("{}/{}/{}", self.owner, self.repo, self.path)
        }
    }
}

/// A full commit id (40 or 64 hex digits): content that cannot change under it.
fn is_commit(git_ref: &str) -> bool {
    matches!(git_ref.len(), 40 | 64) && git_ref.bytes().all(|b| b.is_ascii_hexdigit())
}

/// `https://Host:8443/api/v3` → `host:8443`.
pub(crate) fn origin_of(base: &str) -> String {
    let rest = base.split_once("://").map_or(base, |(_, rest)| rest);
    let host = rest.split(['/', '?', '#']).next().unwrap_or(rest);
    let host = host.rsplit_once('@').map_or(host, |(_, h)| h);
    host.to_ascii_lowercase()
}

/// What a walk has gathered so far, for the caps.
struct Walk {
    files: Vec<PackageFile>,
    entries: usize,
    total: u64,
}

impl GitHubSource {
    /// A source on the API at `base_url` (`https://api.git.example`), unauthenticated,
    /// searching [`DEFAULT_TOPIC`].
    pub fn new(http: Arc<dyn HttpClient>, base_url: &str) -> Self {
        GitHubSource {
            http,
            base: trim_base(base_url),
            token: None,
            topic: DEFAULT_TOPIC.to_owned(),
            limits: PackageLimits::default(),
        }
    }

    /// Sends `Authorization: Bearer <token>` with every request.
    #[must_use]
    pub fn with_token(mut self, token: impl Into<String>) -> Self {
        self.token = Some(token.into());
        self
    }

    /// Searches repositories carrying `topic`.
    #[must_use]
    pub fn with_topic(mut self, topic: impl Into<String>) -> Self {
        self.topic = topic.into();
        self
    }

    /// Other limits.
    #[must_use]
    pub fn with_limits(mut self, limits: PackageLimits) -> Self {
        self.limits = limits;
        self
    }

    fn request(&self, url: String) -> HttpRequest {
        let mut request = HttpRequest::get(url, self.limits.max_response_bytes)
            .header("Accept", "application/vnd.github+json")
            .header("User-Agent", "skills-install");
        if let Some(token) = &self.token {
            request = request.header("Authorization", format!("Bearer {token}"));
        }
        request
    }

    async fn get_json(&self, url: String, what: &str) -> Result<Value> {
        let response = http::get(self.http.as_ref(), self.request(url), what).await?;
        http::json(&response, what)
    }

    fn repo_url(&self, locator: &Locator) -> String {
        format!(
            "{}/repos/{}/{}",
            self.base,
            encode_component(&locator.owner),
            encode_component(&locator.repo)
        )
    }

    fn contents_url(&self, locator: &Locator, path: &str, git_ref: Option<&str>) -> String {
        let encoded: Vec<String> = path
            .split('/')
            .filter(|p| !p.is_empty())
            .map(encode_component)
            .collect();
        let mut url = format!("{}/contents/{}", self.repo_url(locator), encoded.join("/"));
        if let Some(git_ref) = git_ref {
            url.push_str("?ref=");
            url.push_str(&encode_component(git_ref));
        }
        url
    }

    /// The latest release's tag, or `None` when the repository has no release.
    /// The origin trust paths begin with: the API's host (and port), lowercase.
    fn origin(&self) -> String {
        origin_of(&self.base)
    }

    /// Whether `tag` is one of the repository's releases (a maintainer published it).
    async fn is_release(&self, locator: &Locator, tag: &str) -> Result<bool> {
        let url = format!(
            "{}/releases/tags/{}",
            self.repo_url(locator),
            encode_component(tag)
        );
        match self.get_json(url, "the release").await {
            Ok(release) => Ok(release.get("tag_name").and_then(Value::as_str) == Some(tag)),
            Err(Error::NotFound { .. }) => Ok(false),
            Err(e) => Err(e),
        }
    }

    async fn latest_release(&self, locator: &Locator) -> Result<Option<String>> {
        let url = format!("{}/releases/latest", self.repo_url(locator));
        match self.get_json(url, "the latest release").await {
            Ok(release) => Ok(release
                .get("tag_name")
                .and_then(Value::as_str)
                .map(str::to_owned)),
            Err(Error::NotFound { .. }) => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// Lists `dir` (relative to the repository root) and fetches every file below it.
    async fn walk(&self, locator: &Locator, git_ref: Option<&str>, walk: &mut Walk) -> Result<()> {
        let origin = format!("git source `{}`", shown(&locator.display()));
        let mut pending = vec![(locator.path.clone(), 0usize)];
        while let Some((dir, depth)) = pending.pop() {
            let what = format!(
                "`{}` at {}",
                shown(&dir),
                git_ref.unwrap_or("the default branch")
            );
            let listing = self
                .get_json(self.contents_url(locator, &dir, git_ref), &what)
                .await?;
            let Some(entries) = listing.as_array() else {
                return Err(Error::malformed(
                    "contents listing",
                    format!("`{}` is not a directory", shown(&dir)),
                ));
            };
            for entry in entries {
                walk.entries += 1;
                let cap = self.limits.max_files.saturating_mul(2);
                if walk.entries > cap {
                    return Err(Error::TooLarge {
                        what: format!("the entries of {origin}"),
                        limit: cap as u64,
                    });
                }
                let name = entry
                    .get("name")
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                let kind = entry
                    .get("type")
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                let full = if dir.is_empty() {
                    name.to_owned()
                } else {
                    format!("{dir}/{name}")
                };
                let unsafe_path = |reason: String| Error::UnsafePath {
                    path: shown(&full),
                    origin: origin.clone(),
                    reason,
                };
                if name.contains('/') {
                    return Err(unsafe_path("an entry name holds `/`".to_owned()));
                }
                check_package_path(name).map_err(unsafe_path)?;
                if entry.get("path").and_then(Value::as_str) != Some(full.as_str()) {
                    return Err(unsafe_path(
                        "the entry's path is not its directory joined with its name".to_owned(),
                    ));
                }
                if name.starts_with('.') {
                    continue;
                }
                match kind {
                    "dir" => {
                        if depth + 1 > self.limits.max_depth {
                            return Err(Error::TooLarge {
                                what: format!("the depth of `{}` in {origin}", shown(&full)),
                                limit: self.limits.max_depth as u64,
                            });
                        }
                        pending.push((full, depth + 1));
                    }
                    "file" => {
                        self.fetch_file(locator, git_ref, &full, entry, walk)
                            .await?
                    }
                    other => {
                        return Err(Error::UnsupportedEntry {
                            path: shown(&full),
                            origin,
                            kind: shown(other),
                        });
                    }
                }
            }
        }
        Ok(())
    }

    async fn fetch_file(
        &self,
        locator: &Locator,
        git_ref: Option<&str>,
        full: &str,
        entry: &Value,
        walk: &mut Walk,
    ) -> Result<()> {
        if walk.files.len() >= self.limits.max_files {
            return Err(Error::TooLarge {
                what: format!("the number of files in `{}`", shown(&locator.display())),
                limit: self.limits.max_files as u64,
            });
        }
        let too_large = |what: String| Error::TooLarge {
            what,
            limit: self.limits.max_file_bytes,
        };
        let declared = entry.get("size").and_then(Value::as_u64).unwrap_or(0);
        if declared > self.limits.max_file_bytes {
            return Err(too_large(format!("`{}` ({declared} bytes)", shown(full))));
        }
        let what = format!("file `{}`", shown(full));
        let file = self
            .get_json(self.contents_url(locator, full, git_ref), &what)
            .await?;
        if file.get("type").and_then(Value::as_str) != Some("file") {
            return Err(Error::malformed(
                what,
                "the contents API did not return a file",
            ));
        }
        if file.get("encoding").and_then(Value::as_str) != Some("base64") {
            return Err(Error::malformed(what, "the content is not base64-encoded"));
        }
        let text = file
            .get("content")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let bytes = base64::decode(text)
            .ok_or_else(|| Error::malformed(what.clone(), "the content is not valid base64"))?;
        if bytes.len() as u64 > self.limits.max_file_bytes {
            return Err(too_large(format!("`{}`", shown(full))));
        }
        walk.total = walk.total.saturating_add(bytes.len() as u64);
        if walk.total > self.limits.max_total_bytes {
            return Err(Error::TooLarge {
                what: format!("the files of `{}`", shown(&locator.display())),
                limit: self.limits.max_total_bytes,
            });
        }
        let relative = if locator.path.is_empty() {
            full
        } else {
            full.strip_prefix(&format!("{}/", locator.path))
                .unwrap_or(full)
        };
        walk.files.push(PackageFile::new(relative, bytes));
        Ok(())
    }

    async fn names_at(&self, url: String, key: &str, what: &str) -> Result<Vec<String>> {
        let list = match self.get_json(url, what).await {
            Ok(list) => list,
            Err(Error::NotFound { .. }) => return Ok(Vec::new()),
            Err(e) => return Err(e),
        };
        let Some(items) = list.as_array() else {
            return Err(Error::malformed(what, "expected an array"));
        };
        Ok(items
            .iter()
            .filter_map(|item| item.get(key).and_then(Value::as_str))
            .map(str::to_owned)
            .collect())
    }
}

#[async_trait]
impl SkillSource for GitHubSource {
    fn kind(&self) -> SourceKind {
        SourceKind::GitHub
    }

    async fn search(&self, query: &str) -> Result<Vec<SkillRef>> {
        let q = format!("{} topic:{}", query.trim(), self.topic);
        let url = format!(
            "{}/search/repositories?q={}&sort=stars&per_page={}",
            self.base,
            encode_component(q.trim()),
            self.limits.max_search_results
        );
        let found = self.get_json(url, "the repository search").await?;
        let Some(items) = found.get("items").and_then(Value::as_array) else {
            return Err(Error::malformed("repository search", "no `items` array"));
        };
        let mut refs = Vec::new();
        for item in items.iter().take(self.limits.max_search_results) {
            let Some(full_name) = item.get("full_name").and_then(Value::as_str) else {
                continue;
            };
            // A name that would not parse as a locator is skipped, not trusted.
            let Ok(locator) = Locator::parse(full_name) else {
                continue;
            };
            let mut reference = SkillRef::new(SourceKind::GitHub, locator.display(), locator.repo);
            reference.description = item
                .get("description")
                .and_then(Value::as_str)
                .map(str::to_owned);
            refs.push(reference);
        }
        Ok(refs)
    }

    async fn fetch(&self, locator: &str, version: Option<&str>) -> Result<SkillPackage> {
        let parsed = Locator::parse(locator)?;
        let version_given = version.is_some();
        let git_ref = match version {
            Some(v) => Some(v.to_owned()),
            None => self.latest_release(&parsed).await?,
        };
        let mut walk = Walk {
            files: Vec::new(),
            entries: 0,
            total: 0,
        };
        self.walk(&parsed, git_ref.as_deref(), &mut walk).await?;
        let skill_md = walk
            .files
            .iter()
            .find(|f| f.path == skills_core::SKILL_MD)
            .ok_or_else(|| Error::NotFound {
                what: format!("SKILL.md in `{}`", shown(&parsed.display())),
            })?;
        let skill_json = walk
            .files
            .iter()
            .find(|f| f.path == skills_core::SKILL_JSON)
            .map(|f| f.bytes.as_slice());
        let (declared_name, _) = describe(&skill_md.bytes);
        let dir_name = if parsed.path.is_empty() {
            parsed.repo.clone()
        } else {
            parsed
                .path
                .rsplit('/')
                .next()
                .unwrap_or(&parsed.path)
                .to_owned()
        };
        let version = git_ref
            .as_deref()
            .and_then(parse_version)
            .map(|v| v.to_string())
            .or_else(|| declared_version(&skill_md.bytes, skill_json));
        let trust_path = if parsed.path.is_empty() {
            format!(
                "{}/{}/{}/{}",
                self.origin(),
                parsed.owner,
                parsed.repo,
                dir_name
            )
        } else {
            format!("{}/{}", self.origin(), parsed.display())
        };
        let mut identity = SourceIdentity::new(SourceKind::GitHub, parsed.display(), trust_path);
        identity.immutable = match (&git_ref, version_given) {
            (None, _) => false,
            // The latest release's own tag.
            (Some(_), false) => true,
            (Some(r), true) => is_commit(r) || self.is_release(&parsed, r).await?,
        };
        identity.revision = git_ref.clone();
        let name = declared_name.unwrap_or_else(|| dir_name.clone());
        Ok(
            SkillPackage::new(name, version, walk.files, identity, &self.limits)?
                .in_directory(dir_name),
        )
    }

    async fn versions(&self, locator: &str) -> Result<Vec<String>> {
        let parsed = Locator::parse(locator)?;
        let repo = self.repo_url(&parsed);
        let mut versions = self
            .names_at(
                format!("{repo}/releases?per_page=100"),
                "tag_name",
                "releases",
            )
            .await?;
        versions.extend(
            self.names_at(format!("{repo}/tags?per_page=100"), "name", "tags")
                .await?,
        );
        let mut versions = sort_versions(versions);
        versions.truncate(self.limits.max_versions);
        Ok(versions)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn locators() {
        let l = Locator::parse("acme/skills/pdf/v2").unwrap();
        assert_eq!(
            (l.owner.as_str(), l.repo.as_str(), l.path.as_str()),
            ("acme", "skills", "pdf/v2")
        );
        assert_eq!(Locator::parse("acme/skills").unwrap().path, "");
        for bad in [
            "acme",
            "../x",
            "acme/..",
            "acme/skills/../x",
            "a b/c",
            "acme/skills/a\\b",
            "/x/y",
        ] {
            assert!(Locator::parse(bad).is_err(), "{bad}");
        }
    }
}
