//! The canonical encoding of an audit entry, version 1, and the entry hash over it.
//!
//! Threat: two different entries (or one entry moved to another tenant, chain or position)
//! hashing alike, or an auditor unable to recompute a hash without this crate. Guarantee:
//! the encoding is injective (every variable-length item is length-prefixed, every optional
//! item tagged, the field order fixed), it binds the tenant, the chain, the sequence number
//! and every field of the record except `entry_hash`, and it is specified here completely.
//!
//! # Specification (`skills.audit.v1`)
//!
//! Primitives, all integers big-endian:
//!
//! | name | bytes |
//! |---|---|
//! | `u64(n)` | 8 bytes, unsigned |
//! | `i64(n)` | 8 bytes, two's complement |
//! | `bool(b)` | one byte, `0x00` or `0x01` |
//! | `str(s)` | `u64(byte length)` then the UTF-8 bytes |
//! | `opt(x)` | `0x00` for absent; `0x01` then `x` |
//! | `list(xs)` | `u64(count)` then `str(x)` for each item, in stored order |
//!
//! The encoding is the concatenation, in this order, of:
//!
//! ```text
//! str("skills.audit.v1")  str(tenant)  str(chain)  u64(sequence)
//! str(id)  i64(timestamp ms)  str(user_id)
//! str(skill_id)  str(skill_path)  str(skill_trust_level)  opt(str(skill_version))
//! opt(str(task_id))  opt(str(agent_id))  opt(str(trigger_reason))
//! list(data_classes_requested)  list(data_classes_granted)  bool(data_redacted)  list(tokens_used)
//! str(input_hash)  opt(str(output_hash))  opt(u64(execution_time_ms))  bool(success)  opt(str(error))
//! str(canonical_json(sandbox_config))  list(security_flags)
//! str(previous_hash)
//! ```
//!
//! `entry_hash` is the lowercase hex SHA-256 of those bytes. The first entry of a chain
//! names [`GENESIS_HASH`] (64 zeros) as its `previous_hash`.
//!
//! `canonical_json` writes JSON without whitespace, object keys sorted by their UTF-8 bytes
//! (a repeated key cannot occur in a parsed value), strings escaped as JSON requires and
//! nothing more (`"` `\` and control characters; `\b \f \n \r \t` short forms, other
//! controls as `\u00xx` lowercase), integers in decimal and other numbers in the shortest
//! form that reads back to the same double (what `serde_json` prints).

use sha2::{Digest, Sha256};

use skills_store_traits::TenantId;
use skills_store_traits::audit::AuditRecord;

/// The version tag every encoding starts with.
pub const ENCODING_VERSION: &str = "skills.audit.v1";

/// The `previous_hash` of a chain's first entry.
pub const GENESIS_HASH: &str = "0000000000000000000000000000000000000000000000000000000000000000";

/// The canonical bytes of `record` at `sequence` of `chain` in `tenant` (everything but
/// `entry_hash`); see the module documentation for the layout.
///
/// ```
/// use skills_security::audit::{GENESIS_HASH, canonical_bytes, entry_hash};
/// use skills_store_traits::{TenantId, audit::AuditRecord};
///
/// let mut record = AuditRecord::new("alice", "pdf", "anthropics/skills/pdf", "verified", "in", true);
/// record.previous_hash = GENESIS_HASH.into();
/// let tenant = TenantId::new("acme");
/// let bytes = canonical_bytes(&tenant, "audit", 1, &record);
/// assert!(bytes.starts_with(b"\0\0\0\0\0\0\0\x0fskills.audit.v1"));
/// assert_eq!(entry_hash(&tenant, "audit", 1, &record).len(), 64);
/// // The position is part of the hash: the same record elsewhere hashes differently.
/// assert_ne!(entry_hash(&tenant, "audit", 1, &record), entry_hash(&tenant, "audit", 2, &record));
/// ```
pub fn canonical_bytes(tenant: &TenantId, chain: &str, sequence: u64, r: &AuditRecord) -> Vec<u8> {
    let mut hasher = EntryHasher::new();
    hasher.encode(tenant, chain, sequence, r);
    hasher.bytes
}

/// The lowercase hex SHA-256 of [`canonical_bytes`]: what `entry_hash` must hold.
pub fn entry_hash(tenant: &TenantId, chain: &str, sequence: u64, record: &AuditRecord) -> String {
    hex::encode(EntryHasher::new().digest(tenant, chain, sequence, record))
}

/// Lowercase hex SHA-256 of `bytes` (for `input_hash` and `output_hash`).
pub fn sha256_hex(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

/// Hashes entry after entry into buffers it keeps, so checking a long chain allocates
/// nothing per entry: the same bytes and hashes as [`canonical_bytes`] and [`entry_hash`]
/// (which are written with it).
#[derive(Debug, Default)]
pub(crate) struct EntryHasher {
    bytes: Vec<u8>,
    json: String,
}

impl EntryHasher {
    pub(crate) fn new() -> Self {
        EntryHasher {
            bytes: Vec::with_capacity(1024),
            json: String::with_capacity(256),
        }
    }

    /// The SHA-256 of the canonical encoding.
    pub(crate) fn digest(
        &mut self,
        tenant: &TenantId,
        chain: &str,
        sequence: u64,
        record: &AuditRecord,
    ) -> [u8; 32] {
        self.encode(tenant, chain, sequence, record);
        Sha256::digest(&self.bytes).into()
    }

    /// Whether `expected` is the lowercase hex of the entry's hash: the same answer as
    /// `entry_hash(..) == expected`, without building the string.
    pub(crate) fn matches(
        &mut self,
        tenant: &TenantId,
        chain: &str,
        sequence: u64,
        record: &AuditRecord,
        expected: &str,
    ) -> bool {
        let digest = self.digest(tenant, chain, sequence, record);
        let mut text = [0u8; 64];
        hex::encode_to_slice(digest, &mut text).is_ok() && text == expected.as_bytes()
    }

    /// Replaces the buffer with the canonical encoding (layout in the module documentation).
    fn encode(&mut self, tenant: &TenantId, chain: &str, sequence: u64, r: &AuditRecord) {
        self.json.clear();
        canonical_json(&r.sandbox_config, &mut self.json);
        self.bytes.clear();
        let mut e = Encoder(&mut self.bytes);
        e.str(ENCODING_VERSION);
        e.str(tenant.as_str());
        e.str(chain);
        e.u64(sequence);
        e.str(&r.id);
        e.0.extend_from_slice(&r.timestamp.to_be_bytes());
        e.str(r.user_id.as_str());
        e.str(&r.skill_id);
        e.str(&r.skill_path);
        e.str(&r.skill_trust_level);
        e.opt_str(r.skill_version.as_deref());
        e.opt_str(r.task_id.as_deref());
        e.opt_str(r.agent_id.as_deref());
        e.opt_str(r.trigger_reason.as_deref());
        e.list(&r.data_classes_requested);
        e.list(&r.data_classes_granted);
        e.bool(r.data_redacted);
        e.list(&r.tokens_used);
        e.str(&r.input_hash);
        e.opt_str(r.output_hash.as_deref());
        match r.execution_time_ms {
            None => e.0.push(0),
            Some(ms) => {
                e.0.push(1);
                e.u64(ms);
            }
        }
        e.bool(r.success);
        e.opt_str(r.error.as_deref());
        e.str(&self.json);
        e.list(&r.security_flags);
        e.str(&r.previous_hash);
    }
}

struct Encoder<'a>(&'a mut Vec<u8>);

impl Encoder<'_> {
    fn u64(&mut self, n: u64) {
        self.0.extend_from_slice(&n.to_be_bytes());
    }

    fn str(&mut self, s: &str) {
        self.u64(s.len() as u64);
        self.0.extend_from_slice(s.as_bytes());
    }

    fn bool(&mut self, b: bool) {
        self.0.push(u8::from(b));
    }

    fn opt_str(&mut self, s: Option<&str>) {
        match s {
            None => self.0.push(0),
            Some(s) => {
                self.0.push(1);
                self.str(s);
            }
        }
    }

    fn list(&mut self, items: &[String]) {
        self.u64(items.len() as u64);
        for item in items {
            self.str(item);
        }
    }
}

/// How deep [`canonical_json`] recurses before it switches to its heap-stack walk.
const RECURSION_LIMIT: usize = 64;

/// Writes `value` as canonical JSON (sorted keys, no whitespace) onto `out`. Shallow values
/// (the usual sandbox configuration) are written recursively without allocating when their
/// keys are already in order; anything deeper than a fixed limit is written by an iterative
/// walk, so depth costs heap, not stack. Both give the same text.
pub fn canonical_json(value: &serde_json::Value, out: &mut String) {
    let start = out.len();
    if write_shallow(value, out, 0).is_err() {
        out.truncate(start);
        write_iterative(value, out);
    }
}

/// Too deep for the recursive writer.
struct TooDeep;

fn write_shallow(value: &serde_json::Value, out: &mut String, depth: usize) -> Result<(), TooDeep> {
    use serde_json::Value;
    if depth > RECURSION_LIMIT {
        return Err(TooDeep);
    }
    match value {
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_shallow(item, out, depth + 1)?;
            }
            out.push(']');
        }
        Value::Object(map) => {
            out.push('{');
            // serde_json's default map iterates sorted already; an insertion-ordered map
            // (its `preserve_order` feature, which another crate may turn on) needs sorting.
            let sorted = map
                .keys()
                .zip(map.keys().skip(1))
                .all(|(a, b)| a.as_bytes() < b.as_bytes());
            let mut write = |i: usize, k: &String, v: &Value| -> Result<(), TooDeep> {
                if i > 0 {
                    out.push(',');
                }
                write_string(k, out);
                out.push(':');
                write_shallow(v, out, depth + 1)
            };
            if sorted {
                for (i, (k, v)) in map.iter().enumerate() {
                    write(i, k, v)?;
                }
            } else {
                let mut keys: Vec<(&String, &Value)> = map.iter().collect();
                keys.sort_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
                for (i, (k, v)) in keys.into_iter().enumerate() {
                    write(i, k, v)?;
                }
            }
            out.push('}');
        }
        scalar => write_scalar(scalar, out),
    }
    Ok(())
}

fn write_scalar(value: &serde_json::Value, out: &mut String) {
    use serde_json::Value;
    use std::fmt::Write;
    match value {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        // `Number`'s Display is what `to_string` printed, written in place.
        Value::Number(n) => {
            let _ = write!(out, "{n}");
        }
        Value::String(s) => write_string(s, out),
        Value::Array(_) | Value::Object(_) => {}
    }
}

fn write_iterative(value: &serde_json::Value, out: &mut String) {
    use serde_json::Value;
    enum Step<'a> {
        Value(&'a Value),
        Raw(&'static str),
        Key(&'a str),
    }
    let mut stack = vec![Step::Value(value)];
    while let Some(step) = stack.pop() {
        match step {
            Step::Raw(s) => out.push_str(s),
            Step::Key(k) => {
                write_string(k, out);
                out.push(':');
            }
            Step::Value(v) => match v {
                Value::Array(items) => {
                    out.push('[');
                    stack.push(Step::Raw("]"));
                    for (i, item) in items.iter().enumerate().rev() {
                        stack.push(Step::Value(item));
                        if i > 0 {
                            stack.push(Step::Raw(","));
                        }
                    }
                }
                Value::Object(map) => {
                    out.push('{');
                    stack.push(Step::Raw("}"));
                    let mut keys: Vec<(&String, &Value)> = map.iter().collect();
                    keys.sort_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
                    for (i, (k, v)) in keys.into_iter().enumerate().rev() {
                        stack.push(Step::Value(v));
                        stack.push(Step::Key(k));
                        if i > 0 {
                            stack.push(Step::Raw(","));
                        }
                    }
                }
                scalar => write_scalar(scalar, out),
            },
        }
    }
}

fn write_string(s: &str, out: &mut String) {
    use std::fmt::Write;
    out.push('"');
    // Runs of characters needing no escape are copied whole.
    let mut plain = 0;
    for (i, c) in s.char_indices() {
        let escape = match c {
            '"' => "\\\"",
            '\\' => "\\\\",
            '\u{8}' => "\\b",
            '\u{c}' => "\\f",
            '\n' => "\\n",
            '\r' => "\\r",
            '\t' => "\\t",
            c if (c as u32) < 0x20 => "",
            _ => continue,
        };
        out.push_str(&s[plain..i]);
        if escape.is_empty() {
            let _ = write!(out, "\\u{:04x}", c as u32);
        } else {
            out.push_str(escape);
        }
        plain = i + c.len_utf8();
    }
    out.push_str(&s[plain..]);
    out.push('"');
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn record() -> AuditRecord {
        let mut r = AuditRecord::new("alice", "pdf", "a/s/pdf", "core", "in", true);
        r.id = "id-1".into();
        r.timestamp = 1_700_000_000_000;
        r.previous_hash = GENESIS_HASH.into();
        r
    }

    #[test]
    fn canonical_json_sorts_keys_and_escapes() {
        let mut out = String::new();
        canonical_json(
            &json!({"b": [1, 2.5, null], "a": {"z": true, "é": "x\"\n\u{1}"}}),
            &mut out,
        );
        assert_eq!(
            out,
            r#"{"a":{"z":true,"é":"x\"\n\u0001"},"b":[1,2.5,null]}"#
        );
        let mut empty = String::new();
        canonical_json(&json!({"a": [], "b": {}}), &mut empty);
        assert_eq!(empty, r#"{"a":[],"b":{}}"#);
    }

    #[test]
    fn the_encoding_is_pinned() {
        // A known-answer test: an auditor's implementation must produce this hash.
        let t = TenantId::new("acme");
        let mut r = record();
        r.sandbox_config = json!({"timeout_seconds": 30, "network": false});
        r.security_flags = vec!["f".into()];
        let bytes = canonical_bytes(&t, "audit", 1, &r);
        let mut expected = Vec::new();
        let s = |v: &mut Vec<u8>, s: &str| {
            v.extend_from_slice(&(s.len() as u64).to_be_bytes());
            v.extend_from_slice(s.as_bytes());
        };
        s(&mut expected, "skills.audit.v1");
        s(&mut expected, "acme");
        s(&mut expected, "audit");
        expected.extend_from_slice(&1u64.to_be_bytes());
        s(&mut expected, "id-1");
        expected.extend_from_slice(&1_700_000_000_000i64.to_be_bytes());
        for f in ["alice", "pdf", "a/s/pdf", "core"] {
            s(&mut expected, f);
        }
        expected.extend_from_slice(&[0, 0, 0, 0]); // version, task, agent, trigger absent
        expected.extend_from_slice(&0u64.to_be_bytes()); // classes requested
        expected.extend_from_slice(&0u64.to_be_bytes()); // classes granted
        expected.push(0); // not redacted
        expected.extend_from_slice(&0u64.to_be_bytes()); // tokens
        s(&mut expected, "in");
        expected.extend_from_slice(&[0, 0, 1, 0]); // output, time absent; success; no error
        s(&mut expected, r#"{"network":false,"timeout_seconds":30}"#);
        expected.extend_from_slice(&1u64.to_be_bytes());
        s(&mut expected, "f");
        s(&mut expected, GENESIS_HASH);
        assert_eq!(bytes, expected);
        assert_eq!(entry_hash(&t, "audit", 1, &r), sha256_hex(&expected));
    }

    #[test]
    fn known_entry_hashes_are_pinned() {
        // Literal hashes computed by an independent implementation of the specification (a
        // short Python script): entries already stored must keep verifying, so no change to
        // the encoder may move them.
        let t = TenantId::new("acme");
        let mut r = record();
        r.sandbox_config = json!({"timeout_seconds": 30, "network": false});
        r.security_flags = vec!["f".into()];
        assert_eq!(
            entry_hash(&t, "audit", 1, &r),
            "425c92e4c850a246baf427fc27be099709895ab4b0004a395b34ba4222855e1c"
        );
        let mut full = AuditRecord::new(
            "user-3",
            "pdf",
            "anthropics/skills/pdf",
            "verified",
            "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
            false,
        );
        full.id = "rec-7".into();
        full.timestamp = -5;
        full.skill_version = Some("1.2.0".into());
        full.task_id = Some("task-1".into());
        full.agent_id = Some("agent-1".into());
        full.trigger_reason = Some("asked".into());
        full.data_classes_requested = vec!["confidential".into(), "internal".into()];
        full.data_classes_granted = vec!["internal".into()];
        full.data_redacted = true;
        full.tokens_used = vec!["[EMAIL_001]".into()];
        full.output_hash = Some("out".into());
        full.execution_time_ms = Some(120);
        full.error = Some("boom \"x\"".into());
        full.sandbox_config = json!({
            "z": [1, -3, 0.25, null, true, {"b": "é\n\t\u{1}\\", "a": []}],
            "network": false, "A": {}, "é": "x"
        });
        full.security_flags = vec!["f1".into(), "f2".into()];
        full.previous_hash = "ab".repeat(32);
        let mut json = String::new();
        canonical_json(&full.sandbox_config, &mut json);
        assert_eq!(
            json,
            r#"{"A":{},"network":false,"z":[1,-3,0.25,null,true,{"a":[],"b":"é\n\t\u0001\\"}],"é":"x"}"#
        );
        let pinned = "3f2b113ab7e086f0c7187d31130baedf8956d0bcd892132427eb1f059bd54147";
        assert_eq!(entry_hash(&t, "audit", 7, &full), pinned);
        // The reusing hasher agrees, entry after entry, and compares without allocating.
        let mut hasher = EntryHasher::new();
        for _ in 0..3 {
            assert!(hasher.matches(&t, "audit", 7, &full, pinned));
            assert!(!hasher.matches(&t, "audit", 7, &full, &pinned.to_uppercase()));
            assert!(!hasher.matches(&t, "audit", 8, &full, pinned));
            assert!(hasher.matches(&t, "audit", 1, &r, &entry_hash(&t, "audit", 1, &r)));
        }
        assert!(!hasher.matches(&t, "audit", 7, &full, ""));
    }

    #[test]
    fn deep_and_unsorted_json_take_the_slow_path_to_the_same_text() {
        // Deeper than the recursion limit: the iterative walk writes it, identically.
        let mut deep = json!(1);
        for i in 0..(RECURSION_LIMIT * 3) {
            deep = if i % 2 == 0 {
                json!([deep])
            } else {
                json!({"k": deep, "a": i})
            };
        }
        let mut fast = String::new();
        canonical_json(&deep, &mut fast);
        let mut slow = String::new();
        write_iterative(&deep, &mut slow);
        assert_eq!(fast, slow);
        // Text already in `out` is kept when the fast path gives up.
        let mut prefixed = String::from("x");
        canonical_json(&deep, &mut prefixed);
        assert_eq!(prefixed, format!("x{slow}"));
        let shallow = json!({"b": {"d": 1, "c": [true]}, "a": "\u{7f}\u{1f}"});
        let (mut fast, mut slow) = (String::new(), String::new());
        canonical_json(&shallow, &mut fast);
        write_iterative(&shallow, &mut slow);
        assert_eq!(fast, slow);
        assert_eq!(
            fast,
            "{\"a\":\"\u{7f}\\u001f\",\"b\":{\"c\":[true],\"d\":1}}"
        );
    }

    #[test]
    fn every_field_and_the_position_change_the_hash() {
        let t = TenantId::new("acme");
        let base = record();
        let h = entry_hash(&t, "audit", 1, &base);
        let mut variants: Vec<AuditRecord> = Vec::new();
        let mut push = |f: &dyn Fn(&mut AuditRecord)| {
            let mut r = base.clone();
            f(&mut r);
            variants.push(r);
        };
        push(&|r| r.id.push('x'));
        push(&|r| r.timestamp += 1);
        push(&|r| r.user_id = "bob".into());
        push(&|r| r.skill_id.push('x'));
        push(&|r| r.skill_path.push('x'));
        push(&|r| r.skill_trust_level.push('x'));
        push(&|r| r.skill_version = Some(String::new()));
        push(&|r| r.task_id = Some("t".into()));
        push(&|r| r.agent_id = Some("a".into()));
        push(&|r| r.trigger_reason = Some("r".into()));
        push(&|r| r.data_classes_requested.push("x".into()));
        push(&|r| r.data_classes_granted.push("x".into()));
        push(&|r| r.data_redacted = true);
        push(&|r| r.tokens_used.push("[A_001]".into()));
        push(&|r| r.input_hash.push('x'));
        push(&|r| r.output_hash = Some("o".into()));
        push(&|r| r.execution_time_ms = Some(0));
        push(&|r| r.success = false);
        push(&|r| r.error = Some(String::new()));
        push(&|r| r.sandbox_config = json!({}));
        push(&|r| r.security_flags.push(String::new()));
        push(&|r| r.previous_hash.push('x'));
        for v in &variants {
            assert_ne!(entry_hash(&t, "audit", 1, v), h, "{v:?}");
        }
        assert_ne!(entry_hash(&TenantId::new("other"), "audit", 1, &base), h);
        assert_ne!(entry_hash(&t, "other", 1, &base), h);
        // Moving bytes between adjacent fields does not collide (length prefixes).
        let mut a = base.clone();
        a.skill_id = "ab".into();
        a.skill_path = "c".into();
        let mut b = base.clone();
        b.skill_id = "a".into();
        b.skill_path = "bc".into();
        assert_ne!(
            entry_hash(&t, "audit", 1, &a),
            entry_hash(&t, "audit", 1, &b)
        );
    }
}
