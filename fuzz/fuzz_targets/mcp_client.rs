//! What an MCP server sends, into skills-mcp's client parsing: the JSON-RPC line decoder
//! (rmcp's message type), a `skills/get` result through `check_entry`, each manifest file's
//! `resources/read` answer through `file_bytes`, and `parse_skill_uri`.
//!
//! Input layout: byte 0 selects the part (0: a JSON-RPC line; 1: a `skills/get` result and,
//! after `\n--\n`, one `resources/read` result checked against every manifest entry; 2: a
//! URI). Invariants: no panic; an accepted entry's every manifest path is a safe relative
//! path of the requested skill; accepted file bytes match their manifest size and digest.
#![no_main]

use libfuzzer_sys::fuzz_target;
use skills_mcp::protocol::{
    GetSkillResult, ReadResourceResult, ServerJsonRpcMessage, SkillResources, parse_skill_uri,
    relative_to_skill, sha256_digest,
};

const URI: &str = "skill://greeter/SKILL.md";

fuzz_target!(|data: &[u8]| {
    let Some((&selector, rest)) = data.split_first() else {
        return;
    };
    match selector % 3 {
        0 => {
            let _ = serde_json::from_slice::<ServerJsonRpcMessage>(rest);
        }
        1 => {
            let text = String::from_utf8_lossy(rest);
            let (entry, read) = text.split_once("\n--\n").unwrap_or((&text, ""));
            let Ok(result) = serde_json::from_str::<GetSkillResult>(entry) else {
                return;
            };
            let Ok(skill) = skills_mcp::client::check_entry(URI, result.skill) else {
                return;
            };
            let SkillResources::Files(files) = &skill.resources else {
                return;
            };
            for file in files {
                let path = relative_to_skill(URI, &file.uri).expect("checked entries are contained");
                assert!(skills_install::check_package_path(&path).is_ok(), "{path}");
            }
            let Ok(answer) = serde_json::from_str::<ReadResourceResult>(read) else {
                return;
            };
            for file in files.iter().take(16) {
                if let Ok(bytes) = skills_mcp::client::file_bytes(file, &answer, 1 << 20) {
                    assert_eq!(bytes.len() as u64, file.size);
                    assert_eq!(sha256_digest(&bytes), file.digest);
                }
            }
        }
        _ => {
            if let Ok((name, path)) = parse_skill_uri(&String::from_utf8_lossy(rest)) {
                assert!(!name.is_empty() && !name.contains('/'));
                assert!(path.is_empty() || skills_install::check_package_path(&path).is_ok());
            }
        }
    }
});
