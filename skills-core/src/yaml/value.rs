//! The public form of a YAML value the library keeps without interpreting it.

use serde::ser::{SerializeMap, SerializeSeq};
use serde::{Serialize, Serializer};

use super::{Node, NodeKind, ScalarKind};

/// A YAML value from frontmatter, kept so that keys the library does not interpret survive a
/// round trip.
///
/// Numbers keep the text they were written with (`1.0` stays `1.0`, `0x1F` stays `0x1F`);
/// mappings keep their source order.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum YamlValue {
    /// `null`, `~`, or an empty value.
    Null,
    /// `true` or `false`.
    Bool(bool),
    /// A number, as written. Text that is not a YAML 1.2 core-schema number is written back
    /// quoted, and so reads back as a string.
    Number(String),
    /// A string.
    String(String),
    /// A sequence.
    Sequence(Vec<YamlValue>),
    /// A mapping with string keys, in source order.
    Mapping(Vec<(String, YamlValue)>),
}

impl YamlValue {
    /// The string, if this is a string.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            YamlValue::String(s) => Some(s),
            _ => None,
        }
    }

    /// The text of a string or a number as written, borrowed; `None` for booleans, null and
    /// collections.
    pub fn as_scalar_text(&self) -> Option<&str> {
        match self {
            YamlValue::String(s) | YamlValue::Number(s) => Some(s),
            _ => None,
        }
    }

    /// The text of any scalar (strings, numbers as written, `true`/`false`); `None` for null
    /// and collections.
    pub fn scalar_text(&self) -> Option<String> {
        match self {
            YamlValue::String(s) | YamlValue::Number(s) => Some(s.clone()),
            YamlValue::Bool(b) => Some(b.to_string()),
            _ => None,
        }
    }

    /// The value as JSON. Numbers that JSON cannot hold exactly as written (hex, octal,
    /// `.inf`, `.nan`) become strings holding their source text.
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::to_value(self).unwrap_or(serde_json::Value::Null)
    }

    pub(crate) fn from_node(node: &Node) -> YamlValue {
        match &node.kind {
            NodeKind::Scalar { text, kind } => match kind {
                ScalarKind::Null => YamlValue::Null,
                ScalarKind::Bool(b) => YamlValue::Bool(*b),
                ScalarKind::Number => YamlValue::Number(text.clone()),
                ScalarKind::String => YamlValue::String(text.clone()),
            },
            NodeKind::Sequence(items) => {
                YamlValue::Sequence(items.iter().map(YamlValue::from_node).collect())
            }
            NodeKind::Mapping(entries) => YamlValue::Mapping(
                entries
                    .iter()
                    .map(|e| (e.key.clone(), YamlValue::from_node(&e.value)))
                    .collect(),
            ),
        }
    }
}

fn json_number(text: &str) -> Option<serde_json::Number> {
    if let Ok(i) = text.parse::<i64>() {
        return Some(i.into());
    }
    if let Ok(u) = text.parse::<u64>() {
        return Some(u.into());
    }
    let f = text.parse::<f64>().ok()?;
    serde_json::Number::from_f64(f)
}

impl Serialize for YamlValue {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            YamlValue::Null => serializer.serialize_unit(),
            YamlValue::Bool(b) => serializer.serialize_bool(*b),
            YamlValue::Number(text) => match json_number(text) {
                Some(n) => n.serialize(serializer),
                None => serializer.serialize_str(text),
            },
            YamlValue::String(s) => serializer.serialize_str(s),
            YamlValue::Sequence(items) => {
                let mut seq = serializer.serialize_seq(Some(items.len()))?;
                for item in items {
                    seq.serialize_element(item)?;
                }
                seq.end()
            }
            YamlValue::Mapping(entries) => {
                let mut map = serializer.serialize_map(Some(entries.len()))?;
                for (k, v) in entries {
                    map.serialize_entry(k, v)?;
                }
                map.end()
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_keeps_what_json_can_hold() {
        let v = YamlValue::Mapping(vec![
            ("i".into(), YamlValue::Number("12".into())),
            ("f".into(), YamlValue::Number("1.5".into())),
            ("h".into(), YamlValue::Number("0x1F".into())),
            ("n".into(), YamlValue::Null),
            ("s".into(), YamlValue::Sequence(vec![YamlValue::Bool(true)])),
        ]);
        assert_eq!(
            v.to_json(),
            serde_json::json!({"i": 12, "f": 1.5, "h": "0x1F", "n": null, "s": [true]})
        );
    }

    #[test]
    fn scalar_text_of_each_kind() {
        assert_eq!(
            YamlValue::Number("1.0".into()).scalar_text().as_deref(),
            Some("1.0")
        );
        assert_eq!(
            YamlValue::Bool(false).scalar_text().as_deref(),
            Some("false")
        );
        assert_eq!(YamlValue::Null.scalar_text(), None);
        assert_eq!(YamlValue::Sequence(vec![]).scalar_text(), None);
    }
}
