//! The SEP-2640 wire vocabulary (extension id `io.modelcontextprotocol/skills`) and the
//! `skill://` URIs this crate serves and accepts.
//!
//! The request, result and entry types are rmcp's own (re-exported here, so hosts need no
//! direct rmcp dependency to read them); nothing in this module opens a transport.
//!
//! Threat: a URI from a client or a remote server that names a file outside its skill
//! (`skill://a/../b/SKILL.md`, `skill://a/%2e%2e/x`, `skill://a//etc/passwd`, another
//! scheme, a query that hides a path). Guarantee: [`parse_skill_uri`] accepts only
//! `skill://<name>/<path>` where `<name>` is one path segment and the percent-decoded
//! `<path>` passes [`skills_install::check_package_path`] (no `..`, no `.`, no empty
//! segment, not absolute, no backslash, no control character); everything else is
//! [`Error::UnsafePath`].

pub use rmcp::model::{
    DIRECTORY_MIME_TYPE, GetSkillRequestParams, GetSkillResult, ListSkillsResult,
    ReadResourceResult, ResourceContents, SKILL_MD as SKILL_MD_FILE, SKILLS_EXTENSION_ID,
    ServerJsonRpcMessage, Skill, SkillFrontmatter, SkillResource, SkillResources, SkillsCapability,
    sha256_digest, validate_skills,
};

use crate::error::{Error, Result, shown};

/// The URI scheme of every served file.
pub const SCHEME: &str = "skill://";

/// `skill://<name>/<path>`, each byte of `path` outside `A-Z a-z 0-9 - . _ ~ /`
/// percent-encoded (the same form rmcp's directory catalog writes).
///
/// ```
/// assert_eq!(skills_mcp::protocol::skill_uri("pdf", "refs/a b.md"), "skill://pdf/refs/a%20b.md");
/// ```
pub fn skill_uri(name: &str, path: &str) -> String {
    let mut uri = String::with_capacity(SCHEME.len() + name.len() + path.len() + 1);
    uri.push_str(SCHEME);
    encode_into(name, &mut uri, false);
    uri.push('/');
    encode_into(path, &mut uri, true);
    uri
}

/// The URI of a skill's directory (or of a directory below it when `path` is not empty),
/// for `resources/directory/read`.
pub fn directory_uri(name: &str, path: &str) -> String {
    if path.is_empty() {
        let mut uri = String::from(SCHEME);
        encode_into(name, &mut uri, false);
        uri
    } else {
        skill_uri(name, path)
    }
}

fn encode_into(text: &str, out: &mut String, keep_slash: bool) {
    for byte in text.bytes() {
        if byte.is_ascii_alphanumeric()
            || matches!(byte, b'-' | b'.' | b'_' | b'~')
            || (keep_slash && byte == b'/')
        {
            out.push(char::from(byte));
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
}

/// Percent-decodes `text`; `None` for a broken escape or bytes that are not UTF-8.
pub(crate) fn percent_decode(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = bytes.get(i + 1..i + 3)?;
            let hex = std::str::from_utf8(hex).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

/// Splits `skill://<name>/<path>` into the skill's name and the file's relative path,
/// refusing every URI that leaves the skill (see the module docs). A URI naming only the
/// skill (`skill://<name>` or `skill://<name>/`) gives an empty path: the skill's directory.
///
/// ```
/// use skills_mcp::protocol::parse_skill_uri;
///
/// assert_eq!(parse_skill_uri("skill://pdf/refs/a%20b.md")?, ("pdf".into(), "refs/a b.md".into()));
/// assert!(parse_skill_uri("skill://pdf/../etc/passwd").is_err());
/// assert!(parse_skill_uri("skill://pdf/%2e%2e/x").is_err());
/// assert!(parse_skill_uri("file:///etc/passwd").is_err());
/// # Ok::<(), skills_mcp::Error>(())
/// ```
pub fn parse_skill_uri(uri: &str) -> Result<(String, String)> {
    let refuse = |reason: &str| Error::UnsafePath {
        uri: shown(uri),
        reason: reason.to_owned(),
    };
    let rest = uri
        .strip_prefix(SCHEME)
        .ok_or_else(|| refuse("not a skill:// URI"))?;
    if rest.contains(['?', '#', '\\']) {
        return Err(refuse("a query, fragment or backslash is not allowed"));
    }
    let (name, path) = rest.split_once('/').unwrap_or((rest, ""));
    let name = percent_decode(name).ok_or_else(|| refuse("broken percent-encoding"))?;
    if name.is_empty() || name.contains(['/', '\\']) || name == "." || name == ".." {
        return Err(refuse("the skill name is not one path segment"));
    }
    let path = percent_decode(path).ok_or_else(|| refuse("broken percent-encoding"))?;
    let path = path.strip_suffix('/').unwrap_or(&path).to_owned();
    if !path.is_empty() {
        skills_install::check_package_path(&path).map_err(|reason| refuse(&reason))?;
    }
    Ok((name, path))
}

/// The path of `file_uri` relative to the skill whose `SKILL.md` is `skill_uri`, refusing a
/// file of another skill or one that leaves the skill.
pub fn relative_to_skill(skill_uri: &str, file_uri: &str) -> Result<String> {
    let (skill, entry) = parse_skill_uri(skill_uri)?;
    if entry != rmcp::model::SKILL_MD {
        return Err(Error::UnsafePath {
            uri: shown(skill_uri),
            reason: "a skill's URI must name its SKILL.md".into(),
        });
    }
    let (owner, path) = parse_skill_uri(file_uri)?;
    if owner != skill {
        return Err(Error::UnsafePath {
            uri: shown(file_uri),
            reason: format!("it belongs to another skill than `{}`", shown(&skill)),
        });
    }
    if path.is_empty() {
        return Err(Error::UnsafePath {
            uri: shown(file_uri),
            reason: "it names a directory, not a file".into(),
        });
    }
    Ok(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_and_refuses_escapes() {
        let uri = skill_uri("pdf", "scripts/run me.sh");
        assert_eq!(
            parse_skill_uri(&uri).ok(),
            Some(("pdf".to_owned(), "scripts/run me.sh".to_owned()))
        );
        for bad in [
            "skill://pdf/../x",
            "skill://pdf/a/../../x",
            "skill://pdf/%2E%2E/x",
            "skill://pdf//etc/passwd",
            "skill://pdf/a%5Cb",
            "skill://pdf/a?x=../../y",
            "skill://../SKILL.md",
            "skill://%2e%2e/SKILL.md",
            "skill:///SKILL.md",
            "skill://pdf/%ZZ",
            "skill://pdf/%C3",
            "skill://pdf/a%00b",
            "https://pdf/SKILL.md",
        ] {
            assert!(parse_skill_uri(bad).is_err(), "{bad}");
        }
        assert_eq!(
            parse_skill_uri("skill://pdf").ok(),
            Some(("pdf".to_owned(), String::new()))
        );
    }

    #[test]
    fn files_must_belong_to_their_skill() {
        let skill = "skill://pdf/SKILL.md";
        assert_eq!(
            relative_to_skill(skill, "skill://pdf/a/b.md")
                .ok()
                .as_deref(),
            Some("a/b.md")
        );
        assert!(relative_to_skill(skill, "skill://other/a.md").is_err());
        assert!(relative_to_skill(skill, "skill://pdf/").is_err());
        assert!(relative_to_skill("skill://pdf/x.md", "skill://pdf/a.md").is_err());
    }
}
