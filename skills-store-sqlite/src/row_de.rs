//! Rows straight into records: a serde `Deserializer` over a row's columns.
//!
//! The record types of `skills-store-traits` can only be built through their serde form.
//! Reading a row used to build that form first, a JSON object with an owned key and value
//! per field (and each JSON column parsed into a tree), then deserialize the record from
//! it: most of the time a read spent. Here the record's `Deserialize` reads each field
//! from its column directly (text borrowed from the row, JSON columns parsed in place), and
//! a join's row yields several records side by side the same way. The result is exactly
//! what the object path gives (`tests` compares them field for field).

use rusqlite::Row;
use rusqlite::types::{FromSql, ValueRef};
use serde::de::value::BorrowedStrDeserializer;
use serde::de::{self, DeserializeSeed, Deserializer, IntoDeserializer, MapAccess, Visitor};
use serde::forward_to_deserialize_any;
use serde_json::Error;

use crate::rows::{Field, Kind, i64_to_u64};

/// The record of `fields` in the columns of `row` from `offset`, as a serde deserializer.
pub(crate) struct RowRecord<'de, 'r> {
    pub(crate) row: &'de Row<'r>,
    pub(crate) offset: usize,
    pub(crate) fields: &'de [Field],
}

/// Several records side by side in one row (a join): a struct whose field `name` is the
/// record of `fields` starting at column `offset`, for each `(name, offset, fields)`.
pub(crate) struct RowRecords<'de, 'r> {
    pub(crate) row: &'de Row<'r>,
    pub(crate) parts: &'de [(&'static str, usize, &'de [Field])],
}

/// The value of one column, read as its field's kind says.
enum Cell<'de> {
    Null,
    Text(&'de str),
    Int(i64),
    UInt(u64),
    Bool(bool),
    Real(f64),
    Json(&'de str),
}

fn invalid(error: impl std::fmt::Display) -> Error {
    de::Error::custom(error)
}

/// Column `column` of `row` as `kind`; the same conversions as `rows::decode_object`.
fn cell<'de>(row: &'de Row<'_>, column: usize, kind: Kind) -> Result<Cell<'de>, Error> {
    let value = row.get_ref(column).map_err(invalid)?;
    if let ValueRef::Null = value {
        return Ok(Cell::Null);
    }
    Ok(match kind {
        Kind::Text => Cell::Text(value.as_str().map_err(invalid)?),
        Kind::Int => Cell::Int(i64::column_result(value).map_err(invalid)?),
        Kind::UInt => Cell::UInt(i64_to_u64(i64::column_result(value).map_err(invalid)?)),
        Kind::Bool => Cell::Bool(i64::column_result(value).map_err(invalid)? != 0),
        Kind::Real => Cell::Real(f64::column_result(value).map_err(invalid)?),
        Kind::Json => Cell::Json(value.as_str().map_err(invalid)?),
    })
}

/// Runs `read` on a JSON deserializer over `text`, which must hold one value and nothing
/// after it (as `serde_json::from_str` requires).
fn json<'de, T>(
    text: &'de str,
    read: impl FnOnce(&mut serde_json::Deserializer<serde_json::de::StrRead<'de>>) -> Result<T, Error>,
) -> Result<T, Error> {
    let mut de = serde_json::Deserializer::from_str(text);
    let value = read(&mut de)?;
    de.end()?;
    Ok(value)
}

impl<'de> Deserializer<'de> for Cell<'de> {
    type Error = Error;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        match self {
            Cell::Null => visitor.visit_unit(),
            Cell::Text(text) => visitor.visit_borrowed_str(text),
            Cell::Int(n) => visitor.visit_i64(n),
            Cell::UInt(n) => visitor.visit_u64(n),
            Cell::Bool(b) => visitor.visit_bool(b),
            Cell::Real(x) => visitor.visit_f64(x),
            Cell::Json(text) => json(text, |de| de.deserialize_any(visitor)),
        }
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        match self {
            Cell::Null => visitor.visit_none(),
            Cell::Json(text) => json(text, |de| de.deserialize_option(visitor)),
            other => visitor.visit_some(other),
        }
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        name: &'static str,
        variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Error> {
        match self {
            Cell::Text(text) => visitor.visit_enum(text.into_deserializer()),
            Cell::Json(text) => json(text, |de| de.deserialize_enum(name, variants, visitor)),
            other => other.deserialize_any(visitor),
        }
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        visitor: V,
    ) -> Result<V::Value, Error> {
        match self {
            Cell::Json(text) => json(text, |de| de.deserialize_newtype_struct(name, visitor)),
            other => visitor.visit_newtype_struct(other),
        }
    }

    forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf
        unit unit_struct seq tuple tuple_struct map struct identifier ignored_any
    }
}

/// The fields of one record, in column order.
struct Fields<'de, 'r> {
    record: RowRecord<'de, 'r>,
    index: usize,
}

impl<'de> MapAccess<'de> for Fields<'de, '_> {
    type Error = Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, Error> {
        match self.record.fields.get(self.index) {
            Some(field) => seed
                .deserialize(BorrowedStrDeserializer::new(field.name))
                .map(Some),
            None => Ok(None),
        }
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, Error> {
        let field = self
            .record
            .fields
            .get(self.index)
            .ok_or_else(|| invalid("a value was asked for past the last field"))?;
        let column = self.record.offset + self.index;
        self.index += 1;
        seed.deserialize(cell(self.record.row, column, field.kind)?)
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.record.fields.len().saturating_sub(self.index))
    }
}

impl<'de, 'r> Deserializer<'de> for RowRecord<'de, 'r> {
    type Error = Error;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        visitor.visit_map(Fields {
            record: self,
            index: 0,
        })
    }

    forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf
        option unit unit_struct newtype_struct seq tuple tuple_struct map struct enum
        identifier ignored_any
    }
}

/// The records of a join's row, one per part.
struct Parts<'de, 'r> {
    records: RowRecords<'de, 'r>,
    index: usize,
}

impl<'de> MapAccess<'de> for Parts<'de, '_> {
    type Error = Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, Error> {
        match self.records.parts.get(self.index) {
            Some((name, _, _)) => seed
                .deserialize(BorrowedStrDeserializer::new(name))
                .map(Some),
            None => Ok(None),
        }
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, Error> {
        let (_, offset, fields) = *self
            .records
            .parts
            .get(self.index)
            .ok_or_else(|| invalid("a value was asked for past the last record"))?;
        self.index += 1;
        seed.deserialize(RowRecord {
            row: self.records.row,
            offset,
            fields,
        })
    }
}

impl<'de, 'r> Deserializer<'de> for RowRecords<'de, 'r> {
    type Error = Error;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        visitor.visit_map(Parts {
            records: self,
            index: 0,
        })
    }

    forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf
        option unit unit_struct newtype_struct seq tuple tuple_struct map struct enum
        identifier ignored_any
    }
}

#[cfg(test)]
mod tests {
    use rusqlite::Connection;
    use serde::Deserialize;
    use serde_json::{Map, Value};

    use crate::rows::{
        Field, Kind, columns, decode, decode_object, decode_parts, field, from_object,
    };

    #[derive(Debug, PartialEq, Deserialize)]
    #[serde(rename_all = "lowercase")]
    enum Scope {
        Global,
        Team,
    }

    #[derive(Debug, PartialEq, Deserialize)]
    #[serde(transparent)]
    struct Owner(String);

    #[derive(Debug, PartialEq, Deserialize)]
    struct Sample {
        id: String,
        owner: Owner,
        note: Option<String>,
        count: u64,
        at: i64,
        on: bool,
        share: Option<f64>,
        scope: Scope,
        tags: Vec<String>,
        meta: Map<String, Value>,
        maybe: Option<Vec<String>>,
        payload: Value,
    }

    #[derive(Debug, PartialEq, Deserialize)]
    struct Pair {
        left: Sample,
        right: Sample,
    }

    const FIELDS: &[Field] = &[
        field("id", Kind::Text),
        field("owner", Kind::Text),
        field("note", Kind::Text),
        field("count", Kind::UInt),
        field("at", Kind::Int),
        field("on", Kind::Bool),
        field("share", Kind::Real),
        field("scope", Kind::Text),
        field("tags", Kind::Json),
        field("meta", Kind::Json),
        field("maybe", Kind::Json),
        field("payload", Kind::Json),
    ];

    /// Rows that decode, and rows that must fail (a wrong type, malformed or trailing JSON,
    /// an unknown enum word, a NULL where a value is required), read both ways.
    const ROWS: &[&str] = &[
        "'a', 't', NULL, -1, -5, 1, 0.30000000000000004, 'global', '[\"x\",\"é\"]', '{\"k\":{\"n\":[1,2.5,null]}}', NULL, 'null'",
        "'b', 't', 'n', 3, 9223372036854775807, 0, NULL, 'team', '[]', '{}', '[\"y\"]', '{\"deep\":[true]}'",
        "'c', 't', 'n', 1, 1, 7, 2, 'team', '[]', '{}', 'null', '\"s\"'",
        "'d', 't', 'n', 1, 1, 1, 1.5, 'admin', '[]', '{}', NULL, '1'",
        "'e', 't', 'n', 1, 1, 1, 1.5, 'team', '[1]', '{}', NULL, '1'",
        "'f', 't', 'n', 1, 1, 1, 1.5, 'team', '[] x', '{}', NULL, '1'",
        "'g', 't', 'n', 1, 1, 1, 1.5, 'team', '[', '{}', NULL, '1'",
        "'h', NULL, 'n', 1, 1, 1, 1.5, 'team', '[]', '{}', NULL, '1'",
        "'i', 't', 'n', 'text', 1, 1, 1.5, 'team', '[]', '{}', NULL, '1'",
        "'j', 't', 'n', 1, 1, 1, 1.5, 'team', NULL, '{}', NULL, '1'",
        "'k', 't', 'n', 1, 1, 1, 1.5, 'team', '[]', '{}', NULL, NULL",
    ];

    fn table() -> Connection {
        let conn = Connection::open_in_memory().unwrap();
        conn.execute_batch(
            "CREATE TABLE t (id, owner, note, count, at, \"on\", share, scope, tags, meta, \
             maybe, payload)",
        )
        .unwrap();
        for row in ROWS {
            conn.execute_batch(&format!("INSERT INTO t VALUES ({row})"))
                .unwrap();
        }
        conn
    }

    fn quoted() -> String {
        columns(FIELDS, None).replace(" on,", " \"on\",")
    }

    #[test]
    fn direct_reading_equals_reading_through_the_serde_object() {
        let conn = table();
        let sql = format!("SELECT {} FROM t ORDER BY id", quoted());
        let mut statement = conn.prepare(&sql).unwrap();
        let mut rows = statement.query([]).unwrap();
        let (mut decoded, mut refused) = (0, 0);
        while let Some(row) = rows.next().unwrap() {
            let direct = decode::<Sample>(row, 0, FIELDS);
            let object: Result<Sample, String> = decode_object(row, 0, FIELDS)
                .map_err(|e| e.to_string())
                .and_then(|o| from_object(o).map_err(|e| e.to_string()));
            let id: String = row.get(0).unwrap();
            match (&direct, &object) {
                (Ok(a), Ok(b)) => {
                    assert_eq!(a, b, "row {id}");
                    decoded += 1;
                }
                (Err(_), Err(_)) => refused += 1,
                _ => panic!("row {id}: direct {direct:?}, through the object {object:?}"),
            }
        }
        assert_eq!((decoded, refused), (4, 7));
    }

    #[test]
    fn a_join_reads_each_record_from_its_columns() {
        let conn = table();
        let sql = format!(
            "SELECT {}, {} FROM t l JOIN t r ON r.id = 'b' WHERE l.id = 'a'",
            columns(FIELDS, Some("l")).replace("l.on", "l.\"on\""),
            columns(FIELDS, Some("r")).replace("r.on", "r.\"on\""),
        );
        let parts = [("left", 0, FIELDS), ("right", FIELDS.len(), FIELDS)];
        let pair: Pair = conn
            .query_row(&sql, [], |row| decode_parts(row, &parts))
            .unwrap();
        let one = |id: &str| -> Sample {
            conn.query_row(
                &format!("SELECT {} FROM t WHERE id = ?1", quoted()),
                [id],
                |row| decode(row, 0, FIELDS),
            )
            .unwrap()
        };
        assert_eq!(pair.left, one("a"));
        assert_eq!(pair.right, one("b"));
        assert_eq!(pair.left.count, u64::MAX, "the u64 bits round-trip");
        assert_eq!(pair.right.maybe, Some(vec!["y".to_owned()]));
    }
}
