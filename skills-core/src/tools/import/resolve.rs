//! Following local `$ref`s in an OpenAPI document and turning its schemas into JSON
//! Schema 2020-12, within bounds.

use serde_json::{Map, Value, json};

use super::{ImportOptions, invalid, type_name};
use crate::tools::error::{ImportError, join};
use crate::tools::schema::{MAX_SCHEMA_DEPTH, Slot, slot};

/// Reads one OpenAPI document.
pub(super) struct Reader<'a> {
    pub(super) doc: &'a Value,
    pub(super) options: &'a ImportOptions,
    /// Schema objects built so far for the current operation.
    pub(super) nodes: usize,
    /// Schema objects built so far for the whole document.
    pub(super) total: usize,
}

impl<'a> Reader<'a> {
    /// Follows a `$ref` (to a parameter or a request body) to what it names.
    pub(super) fn deref(
        &self,
        value: &Value,
        path: &str,
        depth: usize,
    ) -> Result<(Value, String), ImportError> {
        let Some(reference) = value.get("$ref") else {
            return Ok((value.clone(), path.to_owned()));
        };
        if depth >= self.options.max_ref_depth {
            return Err(ImportError::Limit {
                path: path.to_owned(),
                message: "too long a chain of `$ref`s".into(),
            });
        }
        let (target, target_path) = self.target(reference, path)?;
        self.deref(target, &target_path, depth + 1)
    }

    /// The value a local `$ref` names, and its path.
    fn target(&self, reference: &Value, path: &str) -> Result<(&'a Value, String), ImportError> {
        let at = join(path, "$ref");
        let Value::String(reference) = reference else {
            return Err(invalid(&at, "`$ref` must be a string"));
        };
        let err = |message: &str| ImportError::Ref {
            path: at.clone(),
            reference: reference.clone(),
            message: message.into(),
        };
        let pointer = reference
            .strip_prefix('#')
            .filter(|p| p.is_empty() || p.starts_with('/'))
            .ok_or_else(|| err("only local references (`#/...`) are resolved"))?;
        let doc: &'a Value = self.doc;
        let target = doc
            .pointer(pointer)
            .ok_or_else(|| err("nothing in the document has this path"))?;
        Ok((target, pointer.to_owned()))
    }

    /// An OpenAPI schema as JSON Schema 2020-12, `$ref`s inlined.
    pub(super) fn schema(
        &mut self,
        value: &Value,
        path: &str,
        depth: usize,
        active: &mut Vec<String>,
    ) -> Result<Value, ImportError> {
        self.nodes += 1;
        self.total += 1;
        if self.total > self.options.max_document_schema_nodes {
            return Err(ImportError::Limit {
                path: path.to_owned(),
                message: format!(
                    "the document's resolved schemas hold more than {} schemas",
                    self.options.max_document_schema_nodes
                ),
            });
        }
        if self.nodes > self.options.max_schema_nodes {
            return Err(ImportError::Limit {
                path: path.to_owned(),
                message: format!(
                    "the resolved schema holds more than {} schemas",
                    self.options.max_schema_nodes
                ),
            });
        }
        if depth > MAX_SCHEMA_DEPTH / 2 {
            return Err(ImportError::Limit {
                path: path.to_owned(),
                message: "the schema nests too deeply".into(),
            });
        }
        let map = match value {
            Value::Bool(_) => return Ok(value.clone()),
            Value::Object(map) => map,
            other => {
                return Err(invalid(
                    path,
                    format!("a schema must be an object, found {}", type_name(other)),
                ));
            }
        };
        if let Some(reference) = map.get("$ref") {
            let (target, target_path) = self.target(reference, path)?;
            let name = target_path.clone();
            if active.contains(&name) {
                return Err(ImportError::RefCycle {
                    path: join(path, "$ref"),
                    reference: format!("#{name}"),
                });
            }
            if active.len() >= self.options.max_ref_depth {
                return Err(ImportError::Limit {
                    path: join(path, "$ref"),
                    message: "too long a chain of `$ref`s".into(),
                });
            }
            active.push(name);
            let resolved = self.schema(target, &target_path, depth, active);
            active.pop();
            let mut resolved = resolved?;
            // OpenAPI 3.1 lets a `$ref` carry its own description.
            if let (Value::Object(out), Some(d @ Value::String(_))) =
                (&mut resolved, map.get("description"))
            {
                out.insert("description".into(), d.clone());
            }
            return Ok(resolved);
        }
        let mut out = Map::new();
        for (key, v) in map {
            if key.starts_with("x-")
                || matches!(
                    key.as_str(),
                    "discriminator" | "xml" | "externalDocs" | "example" | "nullable"
                )
            {
                continue;
            }
            let at = join(path, key);
            let converted = match (slot(key), v) {
                (Some(Slot::One), Value::Array(items)) if key == "items" => {
                    Value::Array(self.list(items, &at, depth, active)?)
                }
                (Some(Slot::One), _) => self.schema(v, &at, depth + 1, active)?,
                (Some(Slot::List), Value::Array(items)) => {
                    Value::Array(self.list(items, &at, depth, active)?)
                }
                (Some(Slot::Map), Value::Object(entries)) => {
                    let mut m = Map::new();
                    for (name, sub) in entries {
                        let sub = match sub {
                            Value::Object(_) | Value::Bool(_) => {
                                self.schema(sub, &join(&at, name), depth + 1, active)?
                            }
                            // `dependencies` also maps names to arrays of names.
                            other => other.clone(),
                        };
                        m.insert(name.clone(), sub);
                    }
                    Value::Object(m)
                }
                _ => v.clone(),
            };
            out.insert(key.clone(), converted);
        }
        for bound in ["Minimum", "Maximum"] {
            let exclusive = format!("exclusive{bound}");
            if let Some(Value::Bool(flag)) = out.get(&exclusive) {
                let limit = bound.to_lowercase();
                match (flag, out.get(&limit).cloned()) {
                    (true, Some(n)) => {
                        out.insert(exclusive, n);
                        out.remove(&limit);
                    }
                    _ => {
                        out.remove(&exclusive);
                    }
                }
            }
        }
        if map.get("nullable") == Some(&Value::Bool(true)) {
            match out.get_mut("type") {
                Some(Value::String(t)) if t != "null" => {
                    let t = std::mem::take(t);
                    out.insert("type".into(), json!([t, "null"]));
                }
                Some(Value::Array(types)) if !types.contains(&json!("null")) => {
                    types.push(json!("null"))
                }
                _ => {}
            }
            if let Some(Value::Array(values)) = out.get_mut("enum")
                && !values.contains(&Value::Null)
            {
                values.push(Value::Null);
            }
        }
        Ok(Value::Object(out))
    }

    fn list(
        &mut self,
        items: &[Value],
        path: &str,
        depth: usize,
        active: &mut Vec<String>,
    ) -> Result<Vec<Value>, ImportError> {
        items
            .iter()
            .enumerate()
            .map(|(i, item)| self.schema(item, &format!("{path}/{i}"), depth + 1, active))
            .collect()
    }
}
