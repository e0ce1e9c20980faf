//! The tools for MCP clients without the skills extension: `use_skill` and
//! `read_skill_file` (skills-catalog's agent tools, answering from the same resolution the
//! server serves) and `load_skill` (seed 004 through skills-security's [`ScriptRunner`]:
//! referenced scripts only, one approval through the host's [`Approvals`] — for example the
//! option runtime — then the sandbox).
//!
//! Threat: a model driving the tools into other skills, other files or unapproved scripts.
//! Guarantee: the tools resolve names only within the served resolution; files are read by
//! [`SkillFileReader`] (containment, size and text rules); a script runs only through
//! [`ScriptRunner::load_skill`]; failures are tool results with `isError`, never protocol
//! errors that hide the reason from the model, and never panics.

use std::path::PathBuf;
use std::sync::Arc;

use rmcp::ErrorData;
use rmcp::model::{
    CallToolRequestParams, CallToolResult, ContentBlock as Content, JsonObject, Tool,
};
use serde_json::Value;
use skills_catalog::agent_tools::{
    READ_SKILL_FILE, READ_SKILL_FILE_DESCRIPTION, SkillFileReader, USE_SKILL,
    read_skill_file_schema, use_skill_description, use_skill_schema,
};
use skills_security::sandbox::Sandbox;
use skills_security::{Approvals, ScriptRunner, SessionScope, TrustLevel};

use super::SkillsMcpServer;

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

    fn reader(&self) -> SkillFileReader<'_> {
        let reader = match &self.inner.store {
            Some((store, tenant)) => SkillFileReader::with_store(store.as_ref(), tenant),
            None => SkillFileReader::new(),
        };
        reader.max_bytes(self.inner.max_file_bytes)
    }

    /// Audits a tool's answer about the skill `name` names (when it names a served one).
    async fn audit_tool(
        &self,
        name: &str,
        tool: &str,
        target: &str,
        text: &str,
    ) -> Result<(), ErrorData> {
        let Some(resolved) = self.inner.snapshot.resolution.find(name) else {
            return Ok(());
        };
        match self.skill(&resolved.id) {
            Some(skill) => self.audited(skill, tool, target, text.as_bytes()).await,
            None => Ok(()),
        }
    }

    /// Runs one tool call.
    pub(crate) async fn call(
        &self,
        request: CallToolRequestParams,
    ) -> Result<CallToolResult, ErrorData> {
        let args = request.arguments.as_ref();
        let resolution = self.inner.snapshot.resolution.as_ref();
        match request.name.as_ref() {
            USE_SKILL => {
                let name = match string_arg(args, "skill_name") {
                    Ok(name) => name,
                    Err(e) => return Ok(text_result(Err(e))),
                };
                let answer = self.reader().use_skill(resolution, &name).await;
                if let Ok(text) = &answer {
                    self.audit_tool(&name, USE_SKILL, &name, text).await?;
                }
                Ok(text_result(answer))
            }
            READ_SKILL_FILE => {
                let (name, path) = match (string_arg(args, "skill_name"), string_arg(args, "path"))
                {
                    (Ok(name), Ok(path)) => (name, path),
                    (Err(e), _) | (_, Err(e)) => return Ok(text_result(Err(e))),
                };
                let answer = self
                    .reader()
                    .read(resolution, &name, &path)
                    .await
                    .map_err(|e| e.to_string());
                if let Ok(text) = &answer {
                    self.audit_tool(&name, READ_SKILL_FILE, &format!("{name}/{path}"), text)
                        .await?;
                }
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
                let runner = ScriptRunner::new(
                    parts.sandbox.as_ref(),
                    parts.approvals.as_ref(),
                    parts.scope.clone(),
                    parts.trust,
                    &parts.scratch_root,
                );
                let loaded = runner
                    .load_skill(resolution, &self.reader(), &name, None)
                    .await;
                self.audit_tool(&name, LOAD_SKILL, &name, &loaded.rendered)
                    .await?;
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
