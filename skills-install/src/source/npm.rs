//! Skills published as npm packages: registry metadata (`GET /{package}`), search
//! (`GET /-/v1/search?text=`), and the version's `dist.tarball`, a `.tar.gz` with the skill
//! under `package/`.
//!
//! Threat: a registry (or a mirror in the middle) serving a tarball other than the one its
//! metadata describes, a tarball URL on another origin (a request to an internal address
//! on the registry's say-so), metadata for a different package than asked, a package name
//! that smuggles path segments into the URL, and everything a tarball can carry.
//! Guarantee: package names must follow npm's rules before they reach a URL; the metadata's
//! `name` must be the name asked for; the tarball must come from the registry's own origin
//! unless the host allows otherwise; its bytes must match every `dist.integrity` hash this
//! crate can compute (SHA-512, SHA-384, SHA-256) — a tarball with only a SHA-1 `shasum`
//! is refused ([`Error::UnverifiableIntegrity`]) unless the host accepts that, because no
//! SHA-1 implementation is a dependency; the tarball is read by `skills-catalog`'s safe
//! archive import (memory only, regular files only, capped).

use std::sync::Arc;

use async_trait::async_trait;
use serde_json::Value;
use sha2::Digest as _;
use skills_catalog::portable::{ImportOptions, archive};

use super::SkillSource;
use crate::base64;
use crate::error::{Error, Result, shown};
use crate::http::{self, HttpClient, HttpRequest, encode_component, origin, trim_base};
use crate::package::{
    PackageLimits, SkillPackage, SkillRef, SourceIdentity, SourceKind, sort_versions,
};

/// An npm registry as a skill source.
///
/// ```
/// use std::sync::Arc;
/// use skills_install::{HttpClient, HttpError, HttpRequest, HttpResponse, NpmSource};
///
/// struct Offline;
/// #[async_trait::async_trait]
/// impl HttpClient for Offline {
///     async fn request(&self, _: HttpRequest) -> Result<HttpResponse, HttpError> {
///         Err(HttpError::new("offline"))
///     }
/// }
/// let source = NpmSource::new(Arc::new(Offline), "https://registry.example");
/// # let _ = source;
/// ```
#[derive(Clone)]
pub struct NpmSource {
    http: Arc<dyn HttpClient>,
    base: String,
    limits: PackageLimits,
    import: ImportOptions,
    foreign_tarballs: bool,
    sha1_only: bool,
}

impl std::fmt::Debug for NpmSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NpmSource")
            .field("base", &self.base)
            .field("foreign_tarballs", &self.foreign_tarballs)
            .field("sha1_only", &self.sha1_only)
            .finish_non_exhaustive()
    }
}

/// Checks an npm package name: `name` or `@scope/name`, each part lowercase `a-z 0-9 - . _ ~`,
/// not starting with `.` or `_`, 214 characters at most.
pub(crate) fn check_package_name(name: &str) -> Result<()> {
    let invalid = |reason| Error::InvalidInput {
        what: "npm package name",
        value: shown(name),
        reason,
    };
    if name.is_empty() || name.len() > 214 {
        return Err(invalid("must be 1 to 214 characters"));
    }
    let part_ok = |part: &str| {
        !part.is_empty()
            && !part.starts_with(['.', '_'])
            && part.bytes().all(|b| {
                b.is_ascii_lowercase()
                    || b.is_ascii_digit()
                    || matches!(b, b'-' | b'.' | b'_' | b'~')
            })
    };
    let ok = match name.strip_prefix('@') {
        Some(scoped) => scoped
            .split_once('/')
            .is_some_and(|(scope, rest)| part_ok(scope) && part_ok(rest)),
        None => part_ok(name),
    };
    if ok {
        Ok(())
    } else {
        Err(invalid(
            "expected `name` or `@scope/name` in lowercase a-z, 0-9, `-`, `.`, `_`, `~`",
        ))
    }
}

/// Checks `bytes` against an npm `integrity` string (`<algo>-<base64>`, several allowed,
/// space-separated). Returns how many hashes were verified; a mismatch is an error.
fn check_integrity(what: &str, integrity: &str, bytes: &[u8]) -> Result<usize> {
    let mut verified = 0;
    for item in integrity.split_whitespace() {
        let Some((algorithm, encoded)) = item.split_once('-') else {
            continue;
        };
        // Options after `?` are allowed by the Subresource Integrity grammar.
        let encoded = encoded.split('?').next().unwrap_or(encoded);
        let actual = match algorithm {
            "sha512" => sha2::Sha512::digest(bytes).to_vec(),
            "sha384" => sha2::Sha384::digest(bytes).to_vec(),
            "sha256" => sha2::Sha256::digest(bytes).to_vec(),
            _ => continue,
        };
        let expected = base64::decode(encoded).ok_or_else(|| {
            Error::malformed(
                "npm dist.integrity",
                format!("`{}` is not base64", shown(item)),
            )
        })?;
        if expected != actual {
            return Err(Error::IntegrityMismatch {
                what: what.to_owned(),
                expected: shown(item),
                actual: format!("{algorithm}-{}", hex::encode(&actual)),
            });
        }
        verified += 1;
    }
    Ok(verified)
}

impl NpmSource {
    /// The origin trust paths begin with: the registry's host (and port), lowercase.
    fn origin(&self) -> String {
        super::github::origin_of(&self.base)
    }

    /// A source on the registry at `base_url` (`https://registry.example`).
    pub fn new(http: Arc<dyn HttpClient>, base_url: &str) -> Self {
        NpmSource {
            http,
            base: trim_base(base_url),
            limits: PackageLimits::default(),
            import: ImportOptions::default(),
            foreign_tarballs: false,
            sha1_only: false,
        }
    }

    /// Other limits.
    #[must_use]
    pub fn with_limits(mut self, limits: PackageLimits) -> Self {
        self.limits = limits;
        self
    }

    /// Accepts tarball URLs outside the registry's origin (a registry fronted by a separate
    /// download host). Off by default.
    #[must_use]
    pub fn allow_foreign_tarballs(mut self, allow: bool) -> Self {
        self.foreign_tarballs = allow;
        self
    }

    /// Accepts versions whose only checksum is a SHA-1 `shasum`, which this crate cannot
    /// verify: the tarball is then trusted on the transport alone (pin it with an expected
    /// `sha256:` package digest at install). Off by default.
    #[must_use]
    pub fn accept_sha1_only(mut self, accept: bool) -> Self {
        self.sha1_only = accept;
        self
    }

    fn package_url(&self, name: &str) -> String {
        // A scoped name's `/` is encoded: the registry addresses `@scope%2fname`.
        format!(
            "{}/{}",
            self.base,
            encode_component(name).replace("%40", "@")
        )
    }

    async fn get_json(&self, url: String, what: &str) -> Result<Value> {
        let request = HttpRequest::get(url, self.limits.max_response_bytes)
            .header("Accept", "application/json");
        let response = http::get(self.http.as_ref(), request, what).await?;
        http::json(&response, what)
    }

    async fn metadata(&self, name: &str) -> Result<Value> {
        check_package_name(name)?;
        let what = format!("npm package `{name}`");
        let metadata = self.get_json(self.package_url(name), &what).await?;
        if metadata.get("name").and_then(Value::as_str) != Some(name) {
            return Err(Error::malformed(
                format!("npm metadata for `{name}`"),
                "its `name` is not the package asked for",
            ));
        }
        Ok(metadata)
    }

    /// The exact version `wanted` names: a version key, or a dist-tag (`latest` by default).
    fn resolve<'a>(metadata: &'a Value, name: &str, wanted: Option<&str>) -> Result<&'a str> {
        let versions = metadata.get("versions").and_then(Value::as_object);
        let tag = wanted.unwrap_or("latest");
        if let Some((key, _)) = versions.and_then(|v| v.get_key_value(tag)) {
            return Ok(key.as_str());
        }
        metadata
            .get("dist-tags")
            .and_then(|t| t.get(tag))
            .and_then(Value::as_str)
            .filter(|v| versions.is_some_and(|all| all.contains_key(*v)))
            .ok_or_else(|| Error::NotFound {
                what: format!("version `{}` of npm package `{name}`", shown(tag)),
            })
    }

    async fn tarball(&self, name: &str, version: &str, dist: &Value) -> Result<Vec<u8>> {
        let what = format!("the tarball of `{name}@{}`", shown(version));
        let url = dist.get("tarball").and_then(Value::as_str).ok_or_else(|| {
            Error::malformed(format!("npm metadata for `{name}`"), "no dist.tarball")
        })?;
        let same_origin = origin(url).is_some() && origin(url) == origin(&self.base);
        if !same_origin && !self.foreign_tarballs {
            return Err(Error::InvalidInput {
                what: "npm tarball URL",
                value: shown(url),
                reason: "it is not on the registry's origin",
            });
        }
        let request = HttpRequest::get(url, self.limits.max_response_bytes);
        let bytes = http::get(self.http.as_ref(), request, &what).await?.body;
        let integrity = dist.get("integrity").and_then(Value::as_str).unwrap_or("");
        let verified = check_integrity(&what, integrity, &bytes)?;
        if verified == 0 {
            let has_sha1 = dist.get("shasum").and_then(Value::as_str).is_some();
            if !(has_sha1 && self.sha1_only) {
                return Err(Error::UnverifiableIntegrity {
                    what,
                    algorithm: if has_sha1 { "SHA-1" } else { "missing" }.to_owned(),
                });
            }
        }
        Ok(bytes)
    }
}

#[async_trait]
impl SkillSource for NpmSource {
    fn kind(&self) -> SourceKind {
        SourceKind::Npm
    }

    async fn search(&self, query: &str) -> Result<Vec<SkillRef>> {
        let url = format!(
            "{}/-/v1/search?text={}&size={}",
            self.base,
            encode_component(query.trim()),
            self.limits.max_search_results
        );
        let found = self.get_json(url, "the npm search").await?;
        let Some(objects) = found.get("objects").and_then(Value::as_array) else {
            return Err(Error::malformed("npm search", "no `objects` array"));
        };
        let mut refs = Vec::new();
        for object in objects.iter().take(self.limits.max_search_results) {
            let Some(package) = object.get("package") else {
                continue;
            };
            let Some(name) = package.get("name").and_then(Value::as_str) else {
                continue;
            };
            if check_package_name(name).is_err() {
                continue;
            }
            let text = |key: &str| package.get(key).and_then(Value::as_str).map(str::to_owned);
            let mut reference = SkillRef::new(SourceKind::Npm, name, name);
            reference.description = text("description");
            reference.version = text("version");
            refs.push(reference);
        }
        Ok(refs)
    }

    async fn fetch(&self, locator: &str, version: Option<&str>) -> Result<SkillPackage> {
        let metadata = self.metadata(locator).await?;
        let exact = Self::resolve(&metadata, locator, version)?.to_owned();
        let dist = metadata
            .get("versions")
            .and_then(|v| v.get(&exact))
            .and_then(|v| v.get("dist"))
            .ok_or_else(|| {
                Error::malformed(
                    format!("npm metadata for `{locator}`"),
                    "the version has no dist",
                )
            })?;
        let bytes = self.tarball(locator, &exact, dist).await?;
        let document =
            archive::from_tar_gz(&bytes, &self.import).map_err(|source| Error::Portable {
                origin: format!("the tarball of `{locator}@{}`", shown(&exact)),
                source,
            })?;
        let url = dist
            .get("tarball")
            .and_then(Value::as_str)
            .unwrap_or_default();
        // A published npm version never changes: the revision is immutable.
        let identity = SourceIdentity::new(
            SourceKind::Npm,
            locator,
            format!("{}/{locator}", self.origin()),
        )
        .with_revision(url)
        .immutable();
        Ok(
            SkillPackage::from_portable(&document, identity, &self.limits)?
                .with_version(Some(exact)),
        )
    }

    async fn versions(&self, locator: &str) -> Result<Vec<String>> {
        let metadata = self.metadata(locator).await?;
        let versions: Vec<String> = metadata
            .get("versions")
            .and_then(Value::as_object)
            .map(|v| v.keys().cloned().collect())
            .unwrap_or_default();
        let mut versions = sort_versions(versions);
        versions.truncate(self.limits.max_versions);
        Ok(versions)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn package_names() {
        for good in ["pdf-skill", "@acme/pdf-skill", "a.b_c~d"] {
            assert!(check_package_name(good).is_ok(), "{good}");
        }
        for bad in [
            "",
            "PDF",
            "../x",
            "@acme",
            "@acme/../x",
            "a/b",
            ".hidden",
            "_x",
            "a%2fb",
            "@/x",
        ] {
            assert!(check_package_name(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn integrity_checks_what_it_can() {
        let bytes = b"tarball";
        let good = format!("sha512-{}", base64::encode(&sha2::Sha512::digest(bytes)));
        assert_eq!(check_integrity("t", &good, bytes).unwrap(), 1);
        assert!(matches!(
            check_integrity("t", &good, b"other"),
            Err(Error::IntegrityMismatch { .. })
        ));
        assert_eq!(check_integrity("t", "sha1-AAAA", bytes).unwrap(), 0);
        assert_eq!(check_integrity("t", "", bytes).unwrap(), 0);
    }

    #[test]
    fn package_urls_encode_the_scope_slash() {
        struct Never;
        #[async_trait]
        impl HttpClient for Never {
            async fn request(
                &self,
                _: HttpRequest,
            ) -> std::result::Result<http::HttpResponse, http::HttpError> {
                Err(http::HttpError::new("never"))
            }
        }
        let source = NpmSource::new(Arc::new(Never), "http://127.0.0.1:1/");
        assert_eq!(
            source.package_url("@acme/pdf"),
            "http://127.0.0.1:1/@acme%2Fpdf"
        );
        assert_eq!(source.package_url("pdf"), "http://127.0.0.1:1/pdf");
    }
}
