//! The MCP server: one agent's governed catalog over SEP-2640 (`skills/list`, `skills/get`,
//! `resources/read`, `resources/directory/read`) and, for clients without the extension,
//! the tools `use_skill`, `read_skill_file` and `load_skill`.
//!
//! Threat: a client reading skills the agent is not assigned, disabled skills, files outside
//! a skill, or reading without a trace; a network peer reaching the HTTP endpoint.
//! Guarantee: the server serves one [`Snapshot`] — the winners of
//! the agent's resolution, read under the catalog's containment and size rules — and
//! nothing else: an unknown or escaping URI is an `invalid params` / `resource not found`
//! error that names only the URI; every content read is audited when a [`ReadAudit`] is
//! configured, and refused when the audit fails; scripts run only through `load_skill`,
//! after approval ([`LoadSkillParts`]). HTTP: see [`http`].

mod audit;
pub mod http;
mod tools;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, GetSkillRequestParams, GetSkillResult, Implementation,
    ListResourcesResult, ListSkillsResult, ListToolsResult, PaginatedRequestParams,
    ReadResourceDirectoryRequestParams, ReadResourceDirectoryResult, ReadResourceRequestParams,
    ReadResourceResponse, ReadResourceResult, Resource, ResourceContents, ServerCapabilities,
    ServerConfig,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};
use skills_catalog::Resolver;
use skills_catalog::agent_tools::SkillFileReader;
use skills_core::{Discovery, LoadOptions, SKILL_MD};
use skills_store_traits::{SkillStore, TenantId};

pub use audit::ReadAudit;
pub use tools::LoadSkillParts;

use crate::content::{ServedSkill, Snapshot, SnapshotLimits};
use crate::error::{Error, Result};
use crate::protocol::{DIRECTORY_MIME_TYPE, directory_uri, parse_skill_uri, skill_uri};

/// Where the served skills come from.
enum Source {
    /// Skill directories below these roots, through skills-core discovery.
    Directory(Vec<PathBuf>),
    /// What the resolver resolves for one agent from the store (and the project's repo
    /// skills, when given).
    Agent {
        store: Arc<dyn SkillStore>,
        tenant: TenantId,
        agent: String,
        team: Option<String>,
        repo: Vec<skills_core::Skill>,
    },
}

/// Builds a [`SkillsMcpServer`].
#[must_use]
pub struct SkillsMcpServerBuilder {
    source: Source,
    audit: Option<ReadAudit>,
    load: Option<LoadSkillParts>,
    limits: SnapshotLimits,
    load_options: LoadOptions,
    info: Implementation,
}

impl SkillsMcpServerBuilder {
    /// Records every read on this audit trail (recommended; see [`ReadAudit`]).
    pub fn audit(mut self, audit: ReadAudit) -> Self {
        self.audit = Some(audit);
        self
    }

    /// Adds the `load_skill` tool, running referenced scripts with `parts` after approval.
    pub fn load_skill(mut self, parts: LoadSkillParts) -> Self {
        self.load = Some(parts);
        self
    }

    /// The agent's team, for team assignments (agent sources only; ignored otherwise).
    pub fn team(mut self, team: impl Into<String>) -> Self {
        if let Source::Agent { team: slot, .. } = &mut self.source {
            *slot = Some(team.into());
        }
        self
    }

    /// The project's repo skills, merged under the store's (agent sources only).
    pub fn repo_skills(mut self, skills: Vec<skills_core::Skill>) -> Self {
        if let Source::Agent { repo, .. } = &mut self.source {
            *repo = skills;
        }
        self
    }

    /// Other per-skill limits.
    pub fn limits(mut self, limits: SnapshotLimits) -> Self {
        self.limits = limits;
        self
    }

    /// How directory skills are loaded (default: skills-core's defaults).
    pub fn load_options(mut self, options: LoadOptions) -> Self {
        self.load_options = options;
        self
    }

    /// The name and version the server announces (default `skills-mcp` and this crate's
    /// version).
    pub fn server_info(mut self, name: impl Into<String>, version: impl Into<String>) -> Self {
        self.info = Implementation::new(name, version);
        self
    }

    /// Resolves the catalog and reads every served file.
    pub async fn build(self) -> Result<SkillsMcpServer> {
        let (snapshot, store) = match self.source {
            Source::Directory(roots) => {
                let mut discovery = Discovery::new(self.load_options.clone());
                for root in roots {
                    discovery = discovery.root(root);
                }
                let report = discovery.run();
                let skills = report.into_skills();
                let resolution = Resolver::new().resolve_repo(&skills);
                let reader = SkillFileReader::new().max_bytes(self.limits.max_file_bytes);
                (
                    Snapshot::build(resolution, &reader, self.limits).await,
                    None,
                )
            }
            Source::Agent {
                store,
                tenant,
                agent,
                team,
                repo,
            } => {
                let resolution = Resolver::new()
                    .resolve_for_agent(store.as_ref(), &tenant, &agent, team.as_deref(), &repo)
                    .await?;
                let reader = SkillFileReader::with_store(store.as_ref(), &tenant)
                    .max_bytes(self.limits.max_file_bytes);
                let snapshot = Snapshot::build(resolution, &reader, self.limits).await;
                (snapshot, Some((store, tenant)))
            }
        };
        let directories = directories(&snapshot);
        Ok(SkillsMcpServer {
            inner: Arc::new(Inner {
                snapshot,
                directories,
                store,
                audit: self.audit,
                load: self.load,
                info: self.info,
                max_file_bytes: self.limits.max_file_bytes,
            }),
        })
    }
}

struct Inner {
    snapshot: Snapshot,
    /// `resources/directory/read` answers by directory URI.
    directories: BTreeMap<String, Vec<Resource>>,
    store: Option<(Arc<dyn SkillStore>, TenantId)>,
    audit: Option<ReadAudit>,
    load: Option<LoadSkillParts>,
    info: Implementation,
    max_file_bytes: u64,
}

/// A governed skills catalog as an MCP server. Cheap to clone (one `Arc`).
///
/// ```
/// # tokio::runtime::Builder::new_current_thread().enable_all().build()?.block_on(async {
/// use skills_mcp::SkillsMcpServer;
///
/// let dir = tempfile::tempdir()?;
/// std::fs::create_dir(dir.path().join("greeter"))?;
/// std::fs::write(
///     dir.path().join("greeter/SKILL.md"),
///     "---\nname: greeter\ndescription: Greets people.\n---\nSay hello.\n",
/// )?;
/// let server = SkillsMcpServer::for_directory(dir.path()).build().await?;
/// assert_eq!(server.skill_names(), ["greeter"]);
/// // server.serve_stdio().await?;  or  server.serve_http(addr, token).await?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// # })?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone)]
pub struct SkillsMcpServer {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for SkillsMcpServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SkillsMcpServer")
            .field("skills", &self.inner.snapshot.skills.len())
            .field("audited", &self.inner.audit.is_some())
            .field("load_skill", &self.inner.load.is_some())
            .finish_non_exhaustive()
    }
}

impl SkillsMcpServer {
    fn builder(source: Source) -> SkillsMcpServerBuilder {
        SkillsMcpServerBuilder {
            source,
            audit: None,
            load: None,
            limits: SnapshotLimits::default(),
            load_options: LoadOptions::default(),
            info: Implementation::new("skills-mcp", env!("CARGO_PKG_VERSION")),
        }
    }

    /// Serves the skill directories below `root` (loaded through skills-core discovery).
    pub fn for_directory(root: impl Into<PathBuf>) -> SkillsMcpServerBuilder {
        Self::builder(Source::Directory(vec![root.into()]))
    }

    /// Serves the skill directories below each of `roots`; on a name clash the first wins.
    pub fn for_directories(roots: impl IntoIterator<Item = PathBuf>) -> SkillsMcpServerBuilder {
        Self::builder(Source::Directory(roots.into_iter().collect()))
    }

    /// Serves what [`Resolver::resolve_for_agent`] resolves for `agent` in `tenant`: only
    /// enabled skills with an enabled assignment reaching the agent (directly, by its team,
    /// or tenant-wide).
    pub fn for_agent(
        store: Arc<dyn SkillStore>,
        tenant: TenantId,
        agent: impl Into<String>,
    ) -> SkillsMcpServerBuilder {
        Self::builder(Source::Agent {
            store,
            tenant,
            agent: agent.into(),
            team: None,
            repo: Vec::new(),
        })
    }

    /// The served skills' names, sorted.
    pub fn skill_names(&self) -> Vec<String> {
        self.inner.snapshot.skills.keys().cloned().collect()
    }

    /// Skills and files left out of the catalog, and why.
    pub fn warnings(&self) -> &[String] {
        &self.inner.snapshot.warnings
    }

    /// Serves one client over standard input and output until it disconnects.
    pub async fn serve_stdio(self) -> Result<()> {
        self.serve_transport(rmcp::transport::stdio()).await
    }

    /// Serves one client over any rmcp transport (a duplex pipe, a child's pipes) until it
    /// disconnects.
    pub async fn serve_transport<T, E, A>(self, transport: T) -> Result<()>
    where
        T: rmcp::transport::IntoTransport<RoleServer, E, A>,
        E: std::error::Error + Send + Sync + 'static,
    {
        let running = self
            .serve(transport)
            .await
            .map_err(|e| Error::Transport(e.to_string()))?;
        running
            .waiting()
            .await
            .map(|_| ())
            .map_err(|e| Error::Transport(e.to_string()))
    }

    fn skill(&self, name: &str) -> Option<&ServedSkill> {
        self.inner.snapshot.skills.get(name)
    }

    async fn audited(
        &self,
        skill: &ServedSkill,
        method: &str,
        target: &str,
        served: &[u8],
    ) -> std::result::Result<(), ErrorData> {
        match &self.inner.audit {
            Some(audit) => audit
                .record(skill, method, target, served, true)
                .await
                .map_err(|e| ErrorData::internal_error(e.to_string(), None)),
            None => Ok(()),
        }
    }

    /// The served file at `uri`.
    fn file(&self, uri: &str) -> std::result::Result<(&ServedSkill, String, Arc<str>), ErrorData> {
        let (name, path) =
            parse_skill_uri(uri).map_err(|e| ErrorData::invalid_params(e.to_string(), None))?;
        let not_found = || ErrorData::resource_not_found(format!("no resource {uri}"), None);
        let skill = self.skill(&name).ok_or_else(not_found)?;
        let text = skill.files.get(&path).cloned().ok_or_else(not_found)?;
        Ok((skill, path, text))
    }
}

/// Every directory of every served skill, with its immediate children.
fn directories(snapshot: &Snapshot) -> BTreeMap<String, Vec<Resource>> {
    let mut out = BTreeMap::new();
    for (name, skill) in &snapshot.skills {
        let mut children: BTreeMap<String, BTreeMap<String, Resource>> = BTreeMap::new();
        children.entry(String::new()).or_default();
        for (path, text) in &skill.files {
            let segments: Vec<&str> = path.split('/').collect();
            for depth in 0..segments.len() {
                let parent = segments[..depth].join("/");
                let child = segments[..=depth].join("/");
                let leaf = depth + 1 == segments.len();
                let resource = if leaf {
                    let mut r = Resource::new(skill_uri(name, &child), segments[depth])
                        .with_size(text.len() as u64);
                    r.mime_type = Some(mime_of(&child).to_owned());
                    r
                } else {
                    children.entry(child.clone()).or_default();
                    Resource::new(directory_uri(name, &child), segments[depth])
                        .with_mime_type(DIRECTORY_MIME_TYPE)
                };
                children.entry(parent).or_default().insert(child, resource);
            }
        }
        for (dir, entries) in children {
            out.insert(directory_uri(name, &dir), entries.into_values().collect());
        }
    }
    out
}

/// Text MIME types: every served file is text (the reader refuses anything else).
fn mime_of(path: &str) -> &'static str {
    match path
        .rsplit_once('.')
        .map(|(_, ext)| ext.to_ascii_lowercase())
        .as_deref()
    {
        Some("md" | "markdown") => "text/markdown",
        Some("json") => "application/json",
        Some("yaml" | "yml") => "application/yaml",
        Some("py") => "text/x-python",
        Some("sh" | "bash") => "application/x-sh",
        Some("js" | "mjs") => "text/javascript",
        _ => "text/plain",
    }
}

impl ServerHandler for SkillsMcpServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_resources()
                .enable_tools()
                .enable_skills_with_directory_read()
                .build(),
        )
        .with_server_info(self.inner.info.clone())
        .with_instructions(
            "Agent skills: list them with skills/list (or the use_skill tool), read their files \
             with resources/read (or read_skill_file).",
        )
    }

    async fn list_skills(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> std::result::Result<ListSkillsResult, ErrorData> {
        Ok(ListSkillsResult::with_all_items(
            self.inner.snapshot.entries(),
        ))
    }

    async fn get_skill(
        &self,
        request: GetSkillRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> std::result::Result<GetSkillResult, ErrorData> {
        let unknown = || ErrorData::invalid_params(format!("unknown skill {}", request.uri), None);
        let (name, path) = parse_skill_uri(&request.uri).map_err(|_| unknown())?;
        let skill = self
            .skill(&name)
            .filter(|_| path == SKILL_MD)
            .ok_or_else(unknown)?;
        if skill.entry.uri != request.uri {
            return Err(unknown());
        }
        Ok(GetSkillResult::new(skill.entry.clone()))
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> std::result::Result<ListResourcesResult, ErrorData> {
        let resources = self
            .inner
            .snapshot
            .skills
            .values()
            .map(|s| {
                let md = s.files.get(SKILL_MD).map_or(0, |t| t.len() as u64);
                Resource::new(&s.entry.uri, &s.entry.frontmatter.name)
                    .with_description(&s.entry.frontmatter.description)
                    .with_mime_type("text/markdown")
                    .with_size(md)
            })
            .collect();
        Ok(ListResourcesResult::with_all_items(resources))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> std::result::Result<ReadResourceResponse, ErrorData> {
        let (skill, path, text) = self.file(&request.uri)?;
        self.audited(skill, "resources/read", &request.uri, text.as_bytes())
            .await?;
        let contents =
            ResourceContents::text(text.as_ref(), &request.uri).with_mime_type(mime_of(&path));
        Ok(ReadResourceResult::new(vec![contents]).into())
    }

    async fn read_resource_directory(
        &self,
        request: ReadResourceDirectoryRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> std::result::Result<ReadResourceDirectoryResult, ErrorData> {
        let not_dir =
            || ErrorData::invalid_params(format!("not a directory: {}", request.uri), None);
        let (name, path) = parse_skill_uri(&request.uri).map_err(|_| not_dir())?;
        let children = self
            .inner
            .directories
            .get(&directory_uri(&name, &path))
            .ok_or_else(not_dir)?;
        Ok(ReadResourceDirectoryResult::with_all_items(
            children.clone(),
        ))
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> std::result::Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(self.tool_definitions()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> std::result::Result<CallToolResponse, ErrorData> {
        self.call(request).await.map(Into::into)
    }
}
