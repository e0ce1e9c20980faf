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
    let mut e = Encoder(Vec::with_capacity(512));
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
    let mut json = String::new();
    canonical_json(&r.sandbox_config, &mut json);
    e.str(&json);
    e.list(&r.security_flags);
    e.str(&r.previous_hash);
    e.0
}

/// The lowercase hex SHA-256 of [`canonical_bytes`]: what `entry_hash` must hold.
pub fn entry_hash(tenant: &TenantId, chain: &str, sequence: u64, record: &AuditRecord) -> String {
    hex::encode(Sha256::digest(canonical_bytes(
        tenant, chain, sequence, record,
    )))
}

/// Lowercase hex SHA-256 of `bytes` (for `input_hash` and `output_hash`).
pub fn sha256_hex(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

struct Encoder(Vec<u8>);

impl Encoder {
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

/// Writes `value` as canonical JSON (sorted keys, no whitespace) onto `out`; iterative, so
/// depth costs heap, not stack.
pub fn canonical_json(value: &serde_json::Value, out: &mut String) {
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
                Value::Null => out.push_str("null"),
                Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
                Value::Number(n) => out.push_str(&n.to_string()),
                Value::String(s) => write_string(s, out),
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
            },
        }
    }
}

fn write_string(s: &str, out: &mut String) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => {
                out.push_str(&format!("\\u{:04x}", c as u32));
            }
            c => out.push(c),
        }
    }
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
