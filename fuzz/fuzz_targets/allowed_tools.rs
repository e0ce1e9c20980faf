#![no_main]
//! A skill's `allowed-tools` and one tool call, both arbitrary: no panic, and a call listed
//! by an entry with a specifier is one plain command (no shell operators) or a path that
//! stays inside the workspace. The input is the `allowed-tools` text, a NUL, the tool
//! name, a newline, and the call's argument (command, path or URL).

use libfuzzer_sys::fuzz_target;
use serde_json::json;
use skills_security::allowed_tools::{ToolCall, ToolPolicy};

const OPERATORS: &[char] = &[';', '&', '|', '`', '$', '(', ')', '<', '>', '\\', '\n', '\r'];

/// Lexical depth below the workspace root never goes negative.
fn stays_inside(path: &str) -> bool {
    let relative = path.strip_prefix("/work/project").unwrap_or(path);
    if path.starts_with('/') && relative.len() == path.len() {
        return false;
    }
    let mut depth = 0i64;
    for part in relative.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                depth -= 1;
                if depth < 0 {
                    return false;
                }
            }
            _ => depth += 1,
        }
    }
    true
}

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let (list, call) = text.split_once('\0').unwrap_or((&text, "Bash\ngit log"));
    let (tool, argument) = call.split_once('\n').unwrap_or((call, ""));
    let policy = ToolPolicy::parse(list).workspace("/work/project");
    for refused in policy.refused() {
        assert!(!refused.reason.is_empty());
    }
    let input = json!({
        "command": argument, "file_path": argument, "notebook_path": argument, "path": argument,
        "url": argument,
    });
    let call = ToolCall::new(tool, input);
    if let Some(entry) = policy.listing(&call) {
        if !entry.contains('(') {
            return; // a bare tool name covers every call of it, by design
        }
        match tool {
            "Bash" => assert!(!argument.contains(OPERATORS), "{entry} listed {argument:?}"),
            "Read" | "Write" | "Edit" | "MultiEdit" | "NotebookEdit" | "Glob" | "Grep" | "LS" => {
                assert!(stays_inside(argument), "{entry} listed {argument:?}")
            }
            _ => {}
        }
    }
});
