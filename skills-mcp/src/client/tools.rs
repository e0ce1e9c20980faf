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

/// Each MCP server's tools, imported once and kept for seed 003's 15 minutes
/// ([`MCP_TOOLS_TTL_MS`](skills_store_traits::cache::MCP_TOOLS_TTL_MS), the
/// `mcp:tools:{orgId}:{provider}` key: per tenant and server), with a bounded size; the host
/// calls [`McpToolCache::connection_changed`] when a server's connection changes (seed 003's
/// invalidation trigger) and the next call imports afresh.
///
/// A list imported while an invalidation happened is not kept (the cache's generation), so
/// a changed connection never gets its old tools back.
pub struct McpToolCache {
    cache: skills_store_traits::cache::TtlCache<
        (skills_store_traits::TenantId, String),
        std::sync::Arc<Vec<Tool>>,
    >,
}

impl std::fmt::Debug for McpToolCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpToolCache")
            .field("entries", &self.cache.len())
            .finish_non_exhaustive()
    }
}

impl McpToolCache {
    /// A cache on `clock` with seed 003's TTL and the family's default size.
    pub fn new(clock: std::sync::Arc<dyn skills_store_traits::Clock>) -> Self {
        Self::with_ttl(
            clock,
            skills_store_traits::cache::MCP_TOOLS_TTL_MS,
            skills_store_traits::cache::DEFAULT_CACHE_ENTRIES,
        )
    }

    /// A cache keeping each list `ttl_ms`, at most `capacity` lists (0 for either: none).
    pub fn with_ttl(
        clock: std::sync::Arc<dyn skills_store_traits::Clock>,
        ttl_ms: i64,
        capacity: usize,
    ) -> Self {
        McpToolCache {
            cache: skills_store_traits::cache::TtlCache::new(clock, ttl_ms, capacity),
        }
    }

    /// The tools of `source`'s server for `tenant`: the kept list while it lives, else
    /// [`import_tools`] (at most `max`) kept from now.
    ///
    /// # Errors
    ///
    /// [`import_tools`]'s; nothing is kept on an error.
    pub async fn tools(
        &self,
        tenant: &skills_store_traits::TenantId,
        source: &McpSkillSource,
        max: usize,
    ) -> Result<std::sync::Arc<Vec<Tool>>> {
        let key = (tenant.clone(), source.server_id().to_owned());
        if let Some(tools) = self.cache.get(&key) {
            return Ok(tools);
        }
        let generation = self.cache.generation();
        let tools = std::sync::Arc::new(import_tools(source, max).await?);
        self.cache
            .insert_if_unchanged(generation, key, tools.clone());
        Ok(tools)
    }

    /// Drops the list of `server_id` for `tenant` (its connection changed).
    pub fn connection_changed(&self, tenant: &skills_store_traits::TenantId, server_id: &str) {
        self.cache.remove(&(tenant.clone(), server_id.to_owned()));
    }

    /// Hits and misses so far.
    pub fn stats(&self) -> (u64, u64) {
        self.cache.stats()
    }
}
