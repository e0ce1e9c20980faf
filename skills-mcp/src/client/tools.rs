//! An MCP server's tools as skills-core [`Tool`]s.
//!
//! Threat: a server listing thousands of tools, or tools whose names or schemas are not
//! valid. Guarantee: at most `max` tools are read (pages included); each becomes a [`Tool`]
//! only through [`Tool::new`], which checks the name and compiles the schema — a tool that
//! fails is refused with [`Error::Malformed`], never imported half-way.

use rmcp::model::PaginatedRequestParams;
use serde_json::Value;
use skills_core::tools::{Tool, ToolAnnotations};

use super::McpSkillSource;
use crate::error::{Error, Result, shown};

/// Every tool the server of `source` lists, as skills-core tools (with their MCP
/// annotations), in the server's order; more than `max` is [`Error::TooLarge`].
pub async fn import_tools(source: &McpSkillSource, max: usize) -> Result<Vec<Tool>> {
    let mut out = Vec::new();
    let mut cursor: Option<String> = None;
    for _ in 0..source.limits().max_pages {
        let params = PaginatedRequestParams::default().with_cursor(cursor.clone());
        let page = source
            .request("tools/list", source.peer().list_tools(Some(params)))
            .await?;
        for tool in page.tools {
            if out.len() >= max {
                return Err(Error::TooLarge {
                    what: "the tools listed".into(),
                    limit: max as u64,
                });
            }
            let malformed = |message: String| Error::Malformed {
                what: format!("tool `{}`", shown(&tool.name)),
                message,
            };
            let schema = Value::Object(tool.input_schema.as_ref().clone());
            let mut imported = Tool::new(
                tool.name.to_string(),
                tool.description.as_deref().unwrap_or_default(),
                schema,
            )
            .map_err(|e| malformed(e.to_string()))?;
            if let Some(title) = &tool.title {
                imported = imported.with_title(title.clone());
            }
            if let Some(a) = &tool.annotations {
                let mut annotations = ToolAnnotations::new();
                if let Some(v) = a.read_only_hint {
                    annotations = annotations.read_only(v);
                }
                if let Some(v) = a.destructive_hint {
                    annotations = annotations.destructive(v);
                }
                if let Some(v) = a.idempotent_hint {
                    annotations = annotations.idempotent(v);
                }
                if let Some(v) = a.open_world_hint {
                    annotations = annotations.open_world(v);
                }
                imported = imported.with_annotations(annotations);
            }
            if let Some(output) = &tool.output_schema {
                imported = imported
                    .with_output_schema(Value::Object(output.as_ref().clone()))
                    .map_err(|e| malformed(e.to_string()))?;
            }
            out.push(imported);
        }
        match page.next_cursor {
            Some(next) if Some(&next) != cursor.as_ref() => cursor = Some(next),
            _ => return Ok(out),
        }
    }
    Err(Error::TooLarge {
        what: "the pages of tools/list".into(),
        limit: source.limits().max_pages as u64,
    })
}
