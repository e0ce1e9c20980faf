//! The tools for MCP clients without the skills extension: `use_skill` and
//! `read_skill_file` (skills-catalog's agent tools, answering from the same resolution the
//! server serves) and `load_skill` (seed 004 through skills-security's [`ScriptRunner`]:
//! referenced scripts only, one approval through the host's [`Approvals`] — for example the
//! option runtime — then the sandbox).
//!
//! Threat: a model driving the tools into other skills, other files, skills the snapshot
//! left out, or unapproved scripts; one client's session approval used by another.
//! Guarantee: every call is decided by the gate like the resources are (`govern.rs`):
//! `use_skill` and `read_skill_file` answer only from the snapshot's catalogued files of a
//! served skill (never from disk or the store directly, so a hidden, vendored or
//! left-out file is never read); `load_skill` runs scripts only through
//! [`ScriptRunner::load_skill`], after the gate allowed [`SkillAction::Load`], in an
//! approval session of this connection alone; failures and refusals are tool results with
//! `isError`, never protocol errors that hide the reason from the model, and never panics.

use std::path::PathBuf;
use std::sync::Arc;

use rmcp::ErrorData;
use rmcp::model::{
    CallToolRequestParams, CallToolResult, ContentBlock as Content, JsonObject, Tool,
};
use serde_json::Value;
use skills_catalog::agent_tools::{
    NO_SKILLS, READ_SKILL_FILE, READ_SKILL_FILE_DESCRIPTION, SkillFileReader, USE_SKILL, not_found,
    read_skill_file_schema, use_skill_description, use_skill_schema, use_skill_with_content,
};
use skills_core::SKILL_MD;
use skills_security::gate::{DenyCode, SkillAction};
use skills_security::sandbox::Sandbox;
use skills_security::{Approvals, ScriptRunner, SessionScope, TrustLevel};

use super::SkillsMcpServer;
use super::govern::{Governed, Granted, Target};

/// The `load_skill` tool's name.
pub const LOAD_SKILL: &str = "load_skill";

const LOAD_SKILL_DESCRIPTION: &str = "Load a skill: its instructions, the files they reference, and the output of the scripts they reference (each run in a sandbox after a person approves).";

/// What `load_skill` needs: the sandbox scripts run in, the approvals that decide them (for
/// the option runtime: `Approvals::new(Arc::new(OptionChannel::new(runtime)))`), the chat
/// the answers belong to, the most trust a skill gets here, and where runs keep scratch
/// files.
#[derive(Clone)]
pub struct LoadSkillParts {
    sandbox: Arc<dyn Sandbox>,
    approvals: Arc<Approvals>,
    scope: SessionScope,
    trust: TrustLevel,
    scratch_root: PathBuf,
}

impl std::fmt::Debug for LoadSkillParts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LoadSkillParts")
            .field("scope", &self.scope)
            .field("trust", &self.trust)
            .finish_non_exhaustive()
    }
}

impl LoadSkillParts {
    /// The parts [`ScriptRunner::load_skill`] runs with.
    pub fn new(
        sandbox: Arc<dyn Sandbox>,
        approvals: Arc<Approvals>,
        scope: SessionScope,
        trust: TrustLevel,
        scratch_root: impl Into<PathBuf>,
    ) -> Self {
        LoadSkillParts {
            sandbox,
            approvals,
            scope,
            trust,
            scratch_root: scratch_root.into(),
        }
    }
}

fn schema(value: Value) -> Arc<JsonObject> {
    match value {
        Value::Object(map) => Arc::new(map),
        _ => Arc::new(JsonObject::new()),
    }
}

fn text_result(result: Result<String, String>) -> CallToolResult {
    match result {
        Ok(text) => CallToolResult::success(vec![Content::text(text)]),
        Err(text) => CallToolResult::error(vec![Content::text(text)]),
    }
}

fn string_arg(args: Option<&JsonObject>, key: &str) -> Result<String, String> {
    args.and_then(|a| a.get(key))
        .and_then(Value::as_str)
        .map(str::to_owned)
        .ok_or_else(|| format!("`{key}` must be a string"))
}

impl SkillsMcpServer {
    /// The tools this server lists.
    pub(crate) fn tool_definitions(&self) -> Vec<Tool> {
        let mut tools = vec![
            Tool::new(
                USE_SKILL,
                use_skill_description(skills_catalog::DEFAULT_SANDBOX_SKILLS_DIR),
                schema(use_skill_schema()),
            ),
            Tool::new(
                READ_SKILL_FILE,
                READ_SKILL_FILE_DESCRIPTION,
                schema(read_skill_file_schema()),
            ),
        ];
        if self.inner.load.is_some() {
            tools.push(Tool::new(
                LOAD_SKILL,
                LOAD_SKILL_DESCRIPTION,
                schema(use_skill_schema()),
            ));
        }
        tools
    }

    /// A reader for `load_skill`'s referenced files (the catalog's containment, catalogue
    /// and size rules; stored skills from the store).
    fn reader(&self) -> SkillFileReader<'_> {
        let reader = match &self.inner.store {
            Some((store, tenant)) => SkillFileReader::with_store(store.as_ref(), tenant),
            None => SkillFileReader::new(),
        };
        reader.max_bytes(self.inner.limits.max_file_bytes)
    }

    /// The served skill a tool's `skill_name` names (the catalog's matching: slug, then
    /// name, case-insensitively), or the name as given when none does.
    fn tool_skill_id(&self, name: &str) -> String {
        let served = self.current();
        served
            .snapshot
            .resolution
            .find(name)
            .filter(|resolved| served.snapshot.skills.contains_key(&resolved.id))
            .map_or_else(|| name.to_owned(), |resolved| resolved.id.clone())
    }

    /// The gate's answer for a tool, as the tool's error text when refused.
    async fn govern_tool(
        &self,
        action: SkillAction,
        name: &str,
        path: &str,
    ) -> Result<Result<Granted, String>, ErrorData> {
        let id = self.tool_skill_id(name);
        Ok(match self.govern(action, &id, Target::File(path)).await? {
            Governed::Granted(granted) => Ok(granted),
            Governed::Denied(DenyCode::UnknownSkill, _) => {
                let served = self.current();
                let resolution = &served.snapshot.resolution;
                Err(if served.snapshot.skills.is_empty() {
                    NO_SKILLS.to_owned()
                } else {
                    not_found(resolution, name)
                })
            }
            Governed::Denied(DenyCode::NotCatalogued, _) => Err(format!(
                "the skill `{id}` has no file `{}`",
                crate::error::shown(path)
            )),
            Governed::Denied(code, reason) => Err(format!("refused ({code}): {reason}")),
        })
    }

    /// Runs one tool call.
    pub(crate) async fn call(
        &self,
        request: CallToolRequestParams,
    ) -> Result<CallToolResult, ErrorData> {
        let args = request.arguments.as_ref();
        match request.name.as_ref() {
            USE_SKILL => {
                let name = match string_arg(args, "skill_name") {
                    Ok(name) => name,
                    Err(e) => return Ok(text_result(Err(e))),
                };
                let answer = match self
                    .govern_tool(SkillAction::Activate, &name, SKILL_MD)
                    .await?
                {
                    Ok(granted) => {
                        let content = granted
                            .text
                            .as_deref()
                            .ok_or_else(|| "unreadable".to_owned());
                        use_skill_with_content(
                            &granted.served.snapshot.resolution,
                            &granted.id,
                            content,
                        )
                    }
                    Err(refused) => Err(refused),
                };
                Ok(text_result(answer))
            }
            READ_SKILL_FILE => {
                let (name, path) = match (string_arg(args, "skill_name"), string_arg(args, "path"))
                {
                    (Ok(name), Ok(path)) => (name, path),
                    (Err(e), _) | (_, Err(e)) => return Ok(text_result(Err(e))),
                };
                let relative = path.strip_prefix("./").unwrap_or(&path);
                let answer = match self.govern_tool(SkillAction::Read, &name, relative).await? {
                    Ok(Granted {
                        text: Some(text), ..
                    }) => Ok(text.to_string()),
                    Ok(_) => Err(format!(
                        "`{}` could not be read",
                        crate::error::shown(&path)
                    )),
                    Err(refused) => Err(refused),
                };
                Ok(text_result(answer))
            }
            LOAD_SKILL => {
                let Some(parts) = &self.inner.load else {
                    return Err(ErrorData::invalid_params("unknown tool load_skill", None));
                };
                let name = match string_arg(args, "skill_name") {
                    Ok(name) => name,
                    Err(e) => return Ok(text_result(Err(e))),
                };
                let granted = match self.govern_tool(SkillAction::Load, &name, SKILL_MD).await? {
                    Ok(granted) => granted,
                    Err(refused) => return Ok(text_result(Err(refused))),
                };
                // Approvals are this connection's: "yes for this session" given here is
                // never another client's.
                let scope = SessionScope::new(
                    parts.scope.world.clone(),
                    format!("{}#mcp:{}", parts.scope.chat, self.connection),
                );
                let runner = ScriptRunner::new(
                    parts.sandbox.as_ref(),
                    parts.approvals.as_ref(),
                    scope,
                    parts.trust,
                    &parts.scratch_root,
                );
                let loaded = runner
                    .load_skill(
                        &granted.served.snapshot.resolution,
                        &self.reader(),
                        &granted.id,
                        None,
                    )
                    .await;
                let failed = loaded.activation.is_none();
                Ok(text_result(if failed {
                    Err(loaded.rendered)
                } else {
                    Ok(loaded.rendered)
                }))
            }
            other => Err(ErrorData::invalid_params(
                format!("unknown tool {}", crate::error::shown(other)),
                None,
            )),
        }
    }
}
