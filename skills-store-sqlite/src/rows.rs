//! Records to rows and back, through one table of fields per record type.
//!
//! The record types of `skills-store-traits` are `#[non_exhaustive]`, so another crate can
//! build them only through their serde form. Each record type here has one [`Field`] list
//! naming, in column order, the serde field, its column and how the value is stored; the
//! same list writes the `INSERT`/`UPDATE` and reads the row back, so the two directions
//! cannot drift apart.

use rusqlite::types::Value as Sql;
use rusqlite::{Connection, Row, ToSql, params_from_iter};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};
use skills_store_traits::Error as StoreError;

use crate::error::{Outcome, corrupt};
use crate::row_de::{RowRecord, RowRecords};

/// A serde object from `"key" => value` pairs; in a function returning [`Outcome`].
macro_rules! object {
    ($($key:literal => $value:expr),* $(,)?) => {{
        let mut object = serde_json::Map::new();
        $( object.insert($key.to_owned(), $crate::rows::value(&$value)?); )*
        object
    }};
}
pub(crate) use object;

/// A value's serde form.
pub(crate) fn value<T: Serialize + ?Sized>(value: &T) -> Outcome<Value> {
    serde_json::to_value(value).map_err(|error| {
        StoreError::Backend {
            message: format!("a value did not serialize: {error}"),
            source: Some(Box::new(error)),
        }
        .into()
    })
}

/// How a field is stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// TEXT (or NULL for `None`).
    Text,
    /// INTEGER: timestamps, priorities.
    Int,
    /// INTEGER holding a `u64` bit for bit, so every value round-trips (values above
    /// `i64::MAX` read as negative in raw SQL).
    UInt,
    /// INTEGER 0 or 1.
    Bool,
    /// REAL.
    Real,
    /// TEXT holding JSON: lists, objects, uninterpreted payloads.
    Json,
}

/// One field of a record and its column.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Field {
    /// The serde name of the field.
    pub(crate) name: &'static str,
    /// The column.
    pub(crate) column: &'static str,
    pub(crate) kind: Kind,
}

/// A field stored in a column of the same name.
pub(crate) const fn field(name: &'static str, kind: Kind) -> Field {
    Field {
        name,
        column: name,
        kind,
    }
}

/// A field stored in a column of another name.
pub(crate) const fn renamed(name: &'static str, column: &'static str, kind: Kind) -> Field {
    Field { name, column, kind }
}

/// The columns of `fields`, comma separated, each prefixed with `alias.` when given.
pub(crate) fn columns(fields: &[Field], alias: Option<&str>) -> String {
    let names: Vec<String> = fields
        .iter()
        .map(|f| match alias {
            Some(alias) => format!("{alias}.{}", f.column),
            None => f.column.to_owned(),
        })
        .collect();
    names.join(", ")
}

fn u64_to_i64(value: u64) -> i64 {
    i64::from_ne_bytes(value.to_ne_bytes())
}

pub(crate) fn i64_to_u64(value: i64) -> u64 {
    u64::from_ne_bytes(value.to_ne_bytes())
}

/// Reads `fields` from the row's columns starting at `offset` into a record, straight
/// from the columns (see [`crate::row_de`]); the same record [`decode_object`] and
/// [`from_object`] give.
pub(crate) fn decode<T: DeserializeOwned>(
    row: &Row<'_>,
    offset: usize,
    fields: &[Field],
) -> rusqlite::Result<T> {
    T::deserialize(RowRecord {
        row,
        offset,
        fields,
    })
    .map_err(|e| corrupt(offset, e))
}

/// Reads several records side by side (a join's row) into the struct whose field `name`
/// is the record of `fields` from column `offset`, for each `(name, offset, fields)`.
pub(crate) fn decode_parts<T: DeserializeOwned>(
    row: &Row<'_>,
    parts: &[(&'static str, usize, &[Field])],
) -> rusqlite::Result<T> {
    T::deserialize(RowRecords { row, parts }).map_err(|e| corrupt(0, e))
}

/// A record from its serde object.
#[cfg(test)]
pub(crate) fn from_object<T: DeserializeOwned>(
    object: Map<String, Value>,
) -> serde_json::Result<T> {
    serde_json::from_value(Value::Object(object))
}

/// A record from its serde form, for records built by the store.
pub(crate) fn build<T: DeserializeOwned>(value: Value) -> Outcome<T> {
    serde_json::from_value(value).map_err(|error| {
        StoreError::Backend {
            message: format!("a record did not build: {error}"),
            source: Some(Box::new(error)),
        }
        .into()
    })
}

/// Reads `fields` from the row's columns starting at `offset` into the record's serde
/// object: how rows were read before [`decode`] read them directly, kept as the reference
/// the direct reading is tested against.
#[cfg(test)]
pub(crate) fn decode_object(
    row: &Row<'_>,
    offset: usize,
    fields: &[Field],
) -> rusqlite::Result<Map<String, Value>> {
    let mut object = Map::with_capacity(fields.len());
    for (index, field) in fields.iter().enumerate() {
        let column = offset + index;
        let value = match field.kind {
            Kind::Text => row
                .get::<_, Option<String>>(column)?
                .map_or(Value::Null, Value::String),
            Kind::Int => row
                .get::<_, Option<i64>>(column)?
                .map_or(Value::Null, Value::from),
            Kind::UInt => row
                .get::<_, Option<i64>>(column)?
                .map_or(Value::Null, |v| Value::from(i64_to_u64(v))),
            Kind::Bool => row
                .get::<_, Option<i64>>(column)?
                .map_or(Value::Null, |v| Value::Bool(v != 0)),
            Kind::Real => row
                .get::<_, Option<f64>>(column)?
                .map_or(Value::Null, Value::from),
            Kind::Json => match row.get_ref(column)?.as_str_or_null()? {
                Some(text) => serde_json::from_str(text).map_err(|e| corrupt(column, e))?,
                None => Value::Null,
            },
        };
        object.insert(field.name.to_owned(), value);
    }
    Ok(object)
}

/// The record as an object of its serde fields.
pub(crate) fn to_object<T: Serialize>(record: &T) -> Outcome<Map<String, Value>> {
    match serde_json::to_value(record) {
        Ok(Value::Object(object)) => Ok(object),
        Ok(_) => Err(StoreError::backend("a record did not serialize to an object").into()),
        Err(error) => Err(StoreError::Backend {
            message: format!("a record did not serialize: {error}"),
            source: Some(Box::new(error)),
        }
        .into()),
    }
}

/// The column values of `fields`, taken from the record's serde object.
pub(crate) fn encode(object: &Map<String, Value>, fields: &[Field]) -> Outcome<Vec<Sql>> {
    fields
        .iter()
        .map(|field| {
            let value = object.get(field.name).unwrap_or(&Value::Null);
            let sql = match (field.kind, value) {
                (_, Value::Null) if field.kind != Kind::Json => Sql::Null,
                (Kind::Text, Value::String(text)) => Sql::Text(text.clone()),
                (Kind::Int | Kind::UInt, Value::Number(n)) => n
                    .as_i64()
                    .or_else(|| n.as_u64().map(u64_to_i64))
                    .map_or(Sql::Null, Sql::Integer),
                (Kind::Bool, Value::Bool(b)) => Sql::Integer(i64::from(*b)),
                (Kind::Real, Value::Number(n)) => n.as_f64().map_or(Sql::Null, Sql::Real),
                (Kind::Json, value) => Sql::Text(value.to_string()),
                (kind, value) => {
                    return Err(StoreError::backend(format!(
                        "field `{}` does not fit a {kind:?} column: {value}",
                        field.name
                    ))
                    .into());
                }
            };
            Ok(sql)
        })
        .collect()
}

/// Inserts the record's `fields` plus the `extra` leading columns (owners the record does
/// not carry, such as a file's tenant) into `table`.
pub(crate) fn insert<T: Serialize>(
    conn: &Connection,
    table: &str,
    extra: &[(&str, &dyn ToSql)],
    fields: &[Field],
    record: &T,
) -> Outcome<()> {
    insert_object(conn, table, extra, fields, &to_object(record)?)
}

/// [`insert`] from the record's serde object.
pub(crate) fn insert_object(
    conn: &Connection,
    table: &str,
    extra: &[(&str, &dyn ToSql)],
    fields: &[Field],
    object: &Map<String, Value>,
) -> Outcome<()> {
    let values = encode(object, fields)?;
    let names: Vec<&str> = extra
        .iter()
        .map(|(name, _)| *name)
        .chain(fields.iter().map(|f| f.column))
        .collect();
    let marks: Vec<String> = (1..=names.len()).map(|n| format!("?{n}")).collect();
    let sql = format!(
        "INSERT INTO {table} ({}) VALUES ({})",
        names.join(", "),
        marks.join(", ")
    );
    let params: Vec<&dyn ToSql> = extra
        .iter()
        .map(|(_, value)| *value)
        .chain(values.iter().map(|v| v as &dyn ToSql))
        .collect();
    conn.prepare_cached(&sql)?
        .execute(params_from_iter(params))?;
    Ok(())
}

/// Rewrites the `fields` of the rows of `table` where every `keys` column equals its value
/// (the keys always include the owner columns); returns how many rows changed.
pub(crate) fn update<T: Serialize>(
    conn: &Connection,
    table: &str,
    fields: &[Field],
    record: &T,
    keys: &[(&str, &dyn ToSql)],
) -> Outcome<usize> {
    let values = encode(&to_object(record)?, fields)?;
    let sets: Vec<String> = fields
        .iter()
        .enumerate()
        .map(|(index, f)| format!("{} = ?{}", f.column, index + 1))
        .collect();
    let conditions: Vec<String> = keys
        .iter()
        .enumerate()
        .map(|(index, (column, _))| format!("{column} = ?{}", fields.len() + index + 1))
        .collect();
    let sql = format!(
        "UPDATE {table} SET {} WHERE {}",
        sets.join(", "),
        conditions.join(" AND ")
    );
    let params: Vec<&dyn ToSql> = values
        .iter()
        .map(|v| v as &dyn ToSql)
        .chain(keys.iter().map(|(_, value)| *value))
        .collect();
    Ok(conn
        .prepare_cached(&sql)?
        .execute(params_from_iter(params))?)
}

/// A list or object as JSON text, for a query parameter.
pub(crate) fn json_text<T: Serialize + ?Sized>(value: &T) -> Outcome<String> {
    serde_json::to_string(value).map_err(|error| {
        StoreError::Backend {
            message: format!("a value did not serialize: {error}"),
            source: Some(Box::new(error)),
        }
        .into()
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;

    #[derive(Debug, PartialEq, Serialize, Deserialize)]
    struct Sample {
        id: String,
        note: Option<String>,
        count: u64,
        at: i64,
        on: bool,
        share: f64,
        tags: Vec<String>,
    }

    const FIELDS: &[Field] = &[
        field("id", Kind::Text),
        field("note", Kind::Text),
        field("count", Kind::UInt),
        field("at", Kind::Int),
        field("on", Kind::Bool),
        field("share", Kind::Real),
        renamed("tags", "tags_json", Kind::Json),
    ];

    #[test]
    fn records_round_trip_through_their_columns() {
        let conn = Connection::open_in_memory().unwrap();
        conn.execute_batch(
            "CREATE TABLE t (tenant_id TEXT, id TEXT, note TEXT, count INTEGER, at INTEGER, \
             \"on\" INTEGER, share REAL, tags_json TEXT)",
        )
        .unwrap();
        let fields: Vec<Field> = FIELDS
            .iter()
            .map(|f| {
                if f.name == "on" {
                    renamed("on", "\"on\"", f.kind)
                } else {
                    *f
                }
            })
            .collect();
        let mut sample = Sample {
            id: "a".into(),
            note: None,
            count: u64::MAX,
            at: -5,
            on: true,
            share: 0.1 + 0.2,
            tags: vec!["x".into(), "é".into()],
        };
        insert(&conn, "t", &[("tenant_id", &"t1")], &fields, &sample).unwrap();
        let read = |conn: &Connection| -> Sample {
            conn.query_row(
                &format!("SELECT {} FROM t", columns(&fields, None)),
                [],
                |row| decode(row, 0, &fields),
            )
            .unwrap()
        };
        assert_eq!(read(&conn), sample);
        sample.note = Some("n".into());
        sample.count = 3;
        let (t1, t2, a) = ("t1", "t2", "a");
        let owner: [(&str, &dyn ToSql); 2] = [("tenant_id", &t1), ("id", &a)];
        assert_eq!(update(&conn, "t", &fields, &sample, &owner).unwrap(), 1);
        let other: [(&str, &dyn ToSql); 2] = [("tenant_id", &t2), ("id", &a)];
        assert_eq!(update(&conn, "t", &fields, &sample, &other).unwrap(), 0);
        assert_eq!(read(&conn), sample);
    }
}
