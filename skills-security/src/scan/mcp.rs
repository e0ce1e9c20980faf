//! Commands inside JSON configuration (`.mcp.json`, `claude_desktop_config.json`, a
//! skill's `skill.json` hooks): an MCP server entry is `"command": "sh", "args": ["-c",
//! "curl ... | sh"]`, which no line-based rule sees as one command. Each object with a
//! string `command` becomes one synthesized shell line (`command arg arg ...`), followed by
//! its `env` entries as `NAME=value` lines, mapped back to the line of its `"command"` key.
//!
//! One check needs the structure itself: a server whose command is a raw network or DNS
//! tool (`curl`, `wget`, `nc`, `dig`...) and whose environment carries a secret hands that
//! secret to a program whose only job is to talk to a remote host.

use serde_json::Value;

use super::report::{Category, ScanFinding, Severity};

/// Programs whose only job is talking to a remote host.
const NETWORK_TOOLS: &[&str] = &[
    "curl", "wget", "nc", "ncat", "netcat", "socat", "telnet", "dig", "nslookup", "host", "ping",
    "scp", "sftp", "ftp", "rsync",
];

/// Whether an environment variable name holds a secret.
fn secret_name(name: &str) -> bool {
    let upper = name.to_ascii_uppercase();
    [
        "SECRET",
        "TOKEN",
        "PASSWORD",
        "PASSWD",
        "PASSPHRASE",
        "_KEY",
        "APIKEY",
        "CREDENTIAL",
        "DATABASE_URL",
        "_DSN",
    ]
    .iter()
    .any(|w| upper.contains(w))
}

/// Servers that give a secret to a network tool.
pub(crate) fn secret_to_network_tool(path: &str, text: &str) -> Vec<ScanFinding> {
    let Some((commands, lines)) = command_lines(text) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let all: Vec<&str> = commands.split('\n').collect();
    let mut i = 0usize;
    while i < all.len() {
        let command = all[i];
        let line = lines.get(i).copied().unwrap_or(0);
        let mut secrets = Vec::new();
        let mut j = i + 1;
        while j < all.len() && all[j] != "#" {
            if let Some((key, _)) = all[j].split_once('=')
                && secret_name(key)
            {
                secrets.push(key.to_owned());
            }
            j += 1;
        }
        let tool = command
            .split(|c: char| {
                c.is_whitespace() || matches!(c, '|' | ';' | '&' | '(' | '`' | '\'' | '"')
            })
            .map(|w| w.rsplit('/').next().unwrap_or(w))
            .any(|w| NETWORK_TOOLS.contains(&w));
        if tool && !secrets.is_empty() {
            out.push(ScanFinding::new(
                Category::Exfiltration,
                Severity::High,
                "exfiltration.secret_to_network_tool",
                path,
                line,
                command.to_owned(),
                format!(
                    "an MCP server that is a raw network tool receives secrets in its environment ({})",
                    secrets.join(", ")
                ),
            ));
        }
        i = j + 1;
    }
    out
}

/// Objects visited at most (a bound on hostile JSON).
const MAX_NODES: usize = 100_000;

/// The synthesized command text and, per synthesized line, the file line it came from;
/// `None` when the text is not JSON or holds no command.
pub(crate) fn command_lines(text: &str) -> Option<(String, Vec<u32>)> {
    if !text.contains("\"command\"") {
        return None;
    }
    let value: Value = serde_json::from_str(text).ok()?;
    let mut occurrences = key_lines(text, "\"command\"");
    let mut out = String::new();
    let mut map = Vec::new();
    let mut stack: Vec<&Value> = vec![&value];
    let mut visited = 0usize;
    while let Some(node) = stack.pop() {
        visited += 1;
        if visited > MAX_NODES {
            break;
        }
        match node {
            Value::Object(map_obj) => {
                if let Some(Value::String(command)) = map_obj.get("command") {
                    let line = take_line(text, &mut occurrences, command);
                    let mut synthesized = command.clone();
                    if let Some(Value::Array(args)) = map_obj.get("args") {
                        for arg in args {
                            if let Value::String(a) = arg {
                                synthesized.push(' ');
                                synthesized.push_str(a);
                            }
                        }
                    }
                    push_lines(&mut out, &mut map, &synthesized, line);
                    if let Some(Value::Object(env)) = map_obj.get("env") {
                        for (k, v) in env {
                            if let Value::String(v) = v {
                                push_lines(&mut out, &mut map, &format!("{k}={v}"), line);
                            }
                        }
                    }
                    // A blank line would split units; keep one server's lines together and
                    // separate servers by a marker line no rule matches.
                    push_lines(&mut out, &mut map, "#", line);
                }
                // Objects are visited in document order: push children reversed.
                let children: Vec<&Value> = map_obj.values().collect();
                stack.extend(children.into_iter().rev());
            }
            Value::Array(items) => stack.extend(items.iter().rev()),
            _ => {}
        }
    }
    if map.is_empty() {
        None
    } else {
        Some((out, map))
    }
}

fn push_lines(out: &mut String, map: &mut Vec<u32>, text: &str, line: u32) {
    for part in text.split('\n') {
        out.push_str(part);
        out.push('\n');
        map.push(line);
    }
}

/// The line of the first unused `"command": <value>` occurrence (the parsed map's order is
/// not the document's, so occurrences are matched by value).
fn take_line(text: &str, occurrences: &mut [(usize, u32, bool)], command: &str) -> u32 {
    let encoded = serde_json::to_string(command).unwrap_or_default();
    let key_len = "\"command\"".len();
    for (pos, line, used) in occurrences.iter_mut() {
        if *used {
            continue;
        }
        let rest = text.get(*pos + key_len..).unwrap_or("");
        let rest = rest
            .trim_start()
            .strip_prefix(':')
            .unwrap_or("")
            .trim_start();
        if rest.starts_with(&encoded) {
            *used = true;
            return *line;
        }
    }
    occurrences.first().map_or(1, |o| o.1)
}

/// The byte offset and 1-based line of each occurrence of `key`, in order.
fn key_lines(text: &str, key: &str) -> Vec<(usize, u32, bool)> {
    let mut lines = Vec::new();
    let mut line = 1u32;
    let mut last = 0usize;
    for (pos, _) in text.match_indices(key) {
        line = line.saturating_add(
            u32::try_from(memchr::memchr_iter(b'\n', &text.as_bytes()[last..pos]).count())
                .unwrap_or(u32::MAX),
        );
        last = pos;
        lines.push((pos, line, false));
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn synthesizes_commands() {
        let json = "{\n \"mcpServers\": {\n  \"x\": {\n   \"command\": \"sh\",\n   \"args\": [\"-c\", \"curl a | sh\"],\n   \"env\": {\"T\": \"${T}\"}\n  }\n }\n}";
        let (text, map) = command_lines(json).unwrap_or_default();
        assert_eq!(text, "sh -c curl a | sh\nT=${T}\n#\n");
        assert_eq!(map, vec![4, 4, 4]);
    }
}
