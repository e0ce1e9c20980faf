//! Writing frontmatter back as YAML that reads back to the same values.
//!
//! Block style throughout. A string is written plain only when it is unambiguous to every
//! YAML reader we know of (including YAML 1.1 readers that take `no` for false and `0755`
//! for a number); otherwise it is double-quoted with every character outside YAML's
//! printable set escaped. Multi-line strings use a literal block when that is exact.

use std::fmt::Write as _;

use super::{ScalarKind, YamlValue, resolve_plain};

/// Writes `entries` as a top-level block mapping, one key per line.
pub(crate) fn emit_mapping(entries: &[(String, YamlValue)], out: &mut String) {
    for (key, value) in entries {
        write_key(key, out, 0);
        write_block(value, out, 2);
    }
}

/// The longest key written as an implicit `key:`; YAML caps implicit keys at 1024
/// characters, so longer ones use the explicit `? key` form.
const MAX_IMPLICIT_KEY: usize = 1000;

/// Writes `key:` (or `? key` then `:` on the next line), at `indent`.
fn write_key(key: &str, out: &mut String, indent: usize) {
    let start = out.len();
    write_string_scalar(key, out, indent, false);
    if out[start..].chars().count() > MAX_IMPLICIT_KEY {
        let rendered = out.split_off(start);
        out.push_str("? ");
        out.push_str(&rendered);
        out.push('\n');
        pad(out, indent);
    }
    out.push(':');
}

/// Writes `value` after a `key:` or `-` the caller has written; `indent` is the indentation
/// of nested lines.
fn write_block(value: &YamlValue, out: &mut String, indent: usize) {
    match value {
        YamlValue::Null => out.push_str(" null\n"),
        YamlValue::Bool(b) => {
            let _ = writeln!(out, " {b}");
        }
        YamlValue::Number(text) if resolve_plain(text) == ScalarKind::Number => {
            let _ = writeln!(out, " {text}");
        }
        YamlValue::Number(text) | YamlValue::String(text) => {
            out.push(' ');
            write_string_scalar(text, out, indent, true);
            out.push('\n');
        }
        YamlValue::Sequence(items) if items.is_empty() => out.push_str(" []\n"),
        YamlValue::Mapping(entries) if entries.is_empty() => out.push_str(" {}\n"),
        YamlValue::Sequence(items) => {
            out.push('\n');
            for item in items {
                pad(out, indent);
                out.push('-');
                write_block(item, out, indent + 2);
            }
        }
        YamlValue::Mapping(entries) => {
            out.push('\n');
            for (key, item) in entries {
                pad(out, indent);
                write_key(key, out, indent);
                write_block(item, out, indent + 2);
            }
        }
    }
}

fn pad(out: &mut String, indent: usize) {
    out.extend(std::iter::repeat_n(' ', indent));
}

/// Writes a string plain, as a literal block (values only), or double-quoted.
fn write_string_scalar(text: &str, out: &mut String, indent: usize, allow_block: bool) {
    if is_plain_safe(text) {
        out.push_str(text);
    } else if allow_block && is_literal_safe(text) {
        write_literal(text, out, indent);
    } else {
        write_double_quoted(text, out);
    }
}

/// Strings that YAML 1.1 readers resolve to something other than a string.
const YAML11_SPECIAL: &[&str] = &[
    "y", "Y", "yes", "Yes", "YES", "n", "N", "no", "No", "NO", "on", "On", "ON", "off", "Off",
    "OFF", "=", "<<",
];

fn is_plain_safe(text: &str) -> bool {
    let Some(first) = text.chars().next() else {
        return false;
    };
    let first_ok = first.is_alphabetic() || matches!(first, '_' | '/' | '(' | '$');
    first_ok
        && resolve_plain(text) == ScalarKind::String
        && !YAML11_SPECIAL.contains(&text)
        && !text.ends_with([' ', ':'])
        && !text.contains(": ")
        && !text.contains(" #")
        && text
            .chars()
            .all(|c| c != '\t' && is_printable(c) && !is_break(c))
}

fn is_break(c: char) -> bool {
    matches!(c, '\n' | '\r' | '\u{85}' | '\u{2028}' | '\u{2029}')
}

/// YAML's `c-printable`, less the byte-order mark.
fn is_printable(c: char) -> bool {
    matches!(c,
        '\t' | '\n' | '\r' | '\u{20}'..='\u{7E}' | '\u{85}' | '\u{A0}'..='\u{D7FF}'
        | '\u{E000}'..='\u{FEFE}' | '\u{FF00}'..='\u{FFFD}' | '\u{10000}'..='\u{10FFFF}')
}

/// A literal block reproduces the text exactly when it has more than one line, no carriage
/// returns or other breaks, no leading whitespace (which would need an indentation
/// indicator), no trailing-space-only lines, and only printable characters.
fn is_literal_safe(text: &str) -> bool {
    text.contains('\n')
        && !text.starts_with([' ', '\t', '\n'])
        && text
            .chars()
            .all(|c| (c == '\n' || !is_break(c)) && is_printable(c))
        && text.split('\n').all(|line| {
            // A line of only spaces would change block indentation detection.
            line.is_empty() || !line.chars().all(|c| c == ' ' || c == '\t')
        })
}

fn write_literal(text: &str, out: &mut String, indent: usize) {
    let body = text.trim_end_matches('\n');
    let trailing = text.len() - body.len();
    out.push('|');
    match trailing {
        0 => out.push('-'),
        1 => {}
        _ => out.push('+'),
    }
    for line in body.split('\n') {
        out.push('\n');
        if !line.is_empty() {
            pad(out, indent);
            out.push_str(line);
        }
    }
    // The newlines `|+` keeps beyond the last content line become empty lines.
    for _ in 1..trailing {
        out.push('\n');
    }
}

fn write_double_quoted(text: &str, out: &mut String) {
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\0' => out.push_str("\\0"),
            c if is_printable(c) && !is_break(c) => out.push(c),
            c if (c as u32) <= 0xFF => {
                let _ = write!(out, "\\x{:02X}", c as u32);
            }
            c if (c as u32) <= 0xFFFF => {
                let _ = write!(out, "\\u{:04X}", c as u32);
            }
            c => {
                let _ = write!(out, "\\U{:08X}", c as u32);
            }
        }
    }
    out.push('"');
}

#[cfg(test)]
mod tests {
    use super::super::{YamlLimits, read};
    use super::*;

    fn round_trip(value: YamlValue) {
        let entries = vec![("k".to_owned(), value.clone())];
        let mut text = String::new();
        emit_mapping(&entries, &mut text);
        let doc = read(&text, &YamlLimits::default()).unwrap();
        let back = YamlValue::from_node(&doc.root.unwrap());
        assert_eq!(back, YamlValue::Mapping(entries), "emitted:\n{text}");
    }

    #[test]
    fn strings_that_look_like_other_things_are_quoted() {
        for s in [
            "",
            "1.0",
            "true",
            "no",
            "null",
            "~",
            "-x",
            "a: b",
            "a #b",
            "x:",
            " lead",
            "trail ",
            "#c",
            "[a]",
            "{a}",
            "*a",
            "&a",
            "!a",
            "|",
            ">",
            "'q'",
            "\"q\"",
            "%p",
            "@a",
            "`b",
            "0755",
            "2001-12-14",
            "a\tb",
            "\u{85}",
            "\u{feff}x",
            "\u{7f}",
            "\u{1}",
        ] {
            round_trip(YamlValue::String(s.to_owned()));
        }
    }

    #[test]
    fn multi_line_strings_round_trip() {
        for s in [
            "line one\nline two",
            "line one\nline two\n",
            "a\n\n\nb\n\n\n",
            "a\n  indented\nb",
            "a\n   \nb",
            "\nleading newline",
            " leading space\nx",
            "a\r\nb",
            "tab\tinside\nx",
        ] {
            round_trip(YamlValue::String(s.to_owned()));
        }
    }

    #[test]
    fn collections_and_scalars_round_trip() {
        round_trip(YamlValue::Sequence(vec![
            YamlValue::String("a".into()),
            YamlValue::Mapping(vec![
                ("x".into(), YamlValue::Number("1.0".into())),
                ("y".into(), YamlValue::Sequence(vec![])),
            ]),
            YamlValue::Sequence(vec![YamlValue::Null, YamlValue::Bool(false)]),
            YamlValue::Mapping(vec![]),
        ]));
        round_trip(YamlValue::Mapping(vec![(
            "key: with colon".into(),
            YamlValue::Number("0x1F".into()),
        )]));
    }

    #[test]
    fn keys_longer_than_yaml_allows_implicitly_use_the_explicit_form() {
        for len in [999, 1000, 1001, 1024, 1025, 5000] {
            let key = "k".repeat(len);
            round_trip(YamlValue::Mapping(vec![
                (key.clone(), YamlValue::String("v".into())),
                (
                    format!("{key}2"),
                    YamlValue::Sequence(vec![YamlValue::Null]),
                ),
                (
                    format!("{key}3"),
                    YamlValue::Mapping(vec![(key.clone(), YamlValue::Bool(true))]),
                ),
            ]));
        }
        let mut text = String::new();
        emit_mapping(&[("k".repeat(2000), YamlValue::Null)], &mut text);
        assert!(text.starts_with("? kkk"));
    }

    #[test]
    fn a_number_that_is_not_a_number_degrades_to_a_string() {
        let entries = vec![("k".to_owned(), YamlValue::Number("abc".into()))];
        let mut text = String::new();
        emit_mapping(&entries, &mut text);
        assert_eq!(text, "k: abc\n");
    }
}
