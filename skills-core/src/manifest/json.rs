//! Reading JSON while noticing repeated object keys, which `serde_json::Value` silently
//! resolves to the last one.

use std::cell::{Cell, RefCell};
use std::fmt;

use serde::de::{DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};

/// Parses `text` as one JSON value; also returns each repeated key as a JSON pointer with
/// the 1-based line where the repeated entry ends.
pub(super) fn read(text: &str) -> Result<(Value, Vec<(String, usize)>), serde_json::Error> {
    let repeats = RefCell::new(Vec::new());
    let position = Cell::new(0usize);
    let reader = CountingReader {
        rest: text.as_bytes(),
        position: &position,
    };
    let mut deserializer = serde_json::Deserializer::from_reader(reader);
    let value = ValueSeed {
        pointer: String::new(),
        repeats: &repeats,
        position: &position,
    }
    .deserialize(&mut deserializer)?;
    deserializer.end()?;
    let repeats = repeats
        .into_inner()
        .into_iter()
        .map(|(pointer, offset)| {
            let consumed = &text.as_bytes()[..offset.min(text.len())];
            // The reader may have looked one byte past the value (a newline after it).
            let consumed = consumed.strip_suffix(b"\n").unwrap_or(consumed);
            let line = 1 + consumed.iter().filter(|&&b| b == b'\n').count();
            (pointer, line)
        })
        .collect();
    Ok((value, repeats))
}

/// A byte reader that records how far it has read, so a visitor can tell where it is.
struct CountingReader<'a> {
    rest: &'a [u8],
    position: &'a Cell<usize>,
}

impl std::io::Read for CountingReader<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.rest.read(buf)?;
        self.position.set(self.position.get() + n);
        Ok(n)
    }
}

/// Escapes a key for a JSON pointer (RFC 6901).
fn escape(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

struct ValueSeed<'a> {
    pointer: String,
    /// Repeated keys, with the byte offset reached when each was seen.
    repeats: &'a RefCell<Vec<(String, usize)>>,
    position: &'a Cell<usize>,
}

impl<'de> DeserializeSeed<'de> for ValueSeed<'_> {
    type Value = Value;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for ValueSeed<'_> {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }

    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(Value::from(v))
    }

    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(Value::from(v))
    }

    fn visit_f64<E>(self, v: f64) -> Result<Value, E> {
        Ok(Value::from(v))
    }

    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_owned()))
    }

    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }

    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element_seed(ValueSeed {
            pointer: format!("{}/{}", self.pointer, items.len()),
            repeats: self.repeats,
            position: self.position,
        })? {
            items.push(item);
        }
        Ok(Value::Array(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut access: A) -> Result<Value, A::Error> {
        let mut map = Map::new();
        while let Some(key) = access.next_key::<String>()? {
            let pointer = format!("{}/{}", self.pointer, escape(&key));
            let value = access.next_value_seed(ValueSeed {
                pointer: pointer.clone(),
                repeats: self.repeats,
                position: self.position,
            })?;
            if map.insert(key, value).is_some() {
                self.repeats
                    .borrow_mut()
                    .push((pointer, self.position.get()));
            }
        }
        Ok(Value::Object(map))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_like_serde_json_and_finds_repeats() {
        let text = r#"{"a": [1, -2, 3.5, true, null, "s"], "b": {"c~/": 1, "c~/": 2}, "a": 0}"#;
        let (value, repeats) = read(text).unwrap();
        let expected: Value = serde_json::from_str(text).unwrap();
        assert_eq!(value, expected);
        let pointers: Vec<&str> = repeats.iter().map(|(p, _)| p.as_str()).collect();
        assert_eq!(pointers, vec!["/b/c~0~1", "/a"]);
        let (_, repeats) = read("{\n\"a\": 1,\n\"b\": 2,\n\"a\": 3\n}").unwrap();
        assert_eq!(repeats, vec![("/a".to_owned(), 4)]);
    }

    #[test]
    fn errors_and_trailing_input_are_errors() {
        assert!(read("{").is_err());
        assert!(read("{} x").is_err());
        assert!(read(&"[".repeat(10_000)).is_err());
    }
}
