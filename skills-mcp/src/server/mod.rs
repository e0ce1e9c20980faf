//! The MCP server: one agent's governed catalog over SEP-2640 (`skills/list`, `skills/get`,
//! `resources/read`, `resources/directory/read`) and, for clients without the extension,
//! the tools `use_skill`, `read_skill_file` and `load_skill`.
//!
//! Threat: a client reading skills the agent is not assigned, disabled, removed or
//! re-trusted skills, hidden or vendored files, files outside a skill, or reading without a
//! trace; one client's approvals reaching another; a network peer reaching the HTTP
//! endpoint. Guarantee: the server serves the catalogued files of one [`Snapshot`] (the
//! winners of the agent's resolution, read under the catalog's containment and size rules)
//! and nothing else, and every `skills/get`, `resources/read`, directory read and tool call
//! is decided by the host's [`PolicyGate`] ([`PolicyGate::authorize`]) against the skill's
//! state in the store at that request (see `govern.rs`), recorded on the tenant's chain
//! before anything is served (a failed record refuses); a server cannot be built without a
//! gate. Scripts run only through `load_skill`, after approval ([`LoadSkillParts`]), and
//! approvals given on one connection (one MCP session) never reach another. HTTP: see
//! [`http`].

mod govern;
pub mod http;
mod tools;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, RwLock};

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
use skills_security::gate::{DenyCode, PolicyGate, SkillAction};
use skills_security::permissions::Principal;
use skills_store_traits::{SkillStore, TenantId};

pub use tools::LoadSkillParts;

use crate::content::{Snapshot, SnapshotLimits};
use crate::error::{Error, Result};
use crate::protocol::{DIRECTORY_MIME_TYPE, directory_uri, parse_skill_uri, skill_uri};
use govern::{Governed, Granted, Target};

/// Where the served skills come from.
#[derive(Clone)]
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
    gate: Option<(Arc<PolicyGate>, Principal)>,
    load: Option<LoadSkillParts>,
    limits: SnapshotLimits,
    load_options: LoadOptions,
    info: Implementation,
}

impl SkillsMcpServerBuilder {
    /// The policy gate every request is decided by, for `principal` (tenant, user, agent):
    /// required. Each decision is recorded on the gate's audit trail in the principal's
    /// tenant. A host that decides elsewhere passes [`PolicyGate::allow_all`], which still
    /// refuses disabled, removed and uncatalogued content and still records.
    pub fn gate(mut self, gate: impl Into<Arc<PolicyGate>>, principal: Principal) -> Self {
        self.gate = Some((gate.into(), principal));
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

    /// Resolves the catalog and reads every served file. Fails without a
    /// [`gate`](Self::gate).
    pub async fn build(self) -> Result<SkillsMcpServer> {
        let Some((gate, principal)) = self.gate else {
            return Err(Error::Config(
                "an MCP server needs a policy gate: .gate(gate, principal) \
                 (PolicyGate::allow_all(trail) serves every enabled skill and still records)"
                    .into(),
            ));
        };
        let store = match &self.source {
            Source::Agent { store, tenant, .. } => Some((store.clone(), tenant.clone())),
            Source::Directory(_) => None,
        };
        let served = read_served(&self.source, &self.limits, &self.load_options).await?;
        Ok(SkillsMcpServer {
            inner: Arc::new(Inner {
                served: RwLock::new(Arc::new(served)),
                source: self.source,
                store,
                gate,
                principal,
                load: self.load,
                info: self.info,
                limits: self.limits,
                load_options: self.load_options,
            }),
            connection: next_connection(),
        })
    }
}

/// What one snapshot serves: the skills and, for `resources/directory/read`, their
/// directories.
pub(crate) struct Served {
    snapshot: Snapshot,
    /// `resources/directory/read` answers by directory URI.
    directories: BTreeMap<String, Vec<Resource>>,
    /// Stored skills asked for but not served, with the record stamp they had then: a
    /// request for one reads the catalog again only when its record changed.
    absent: std::sync::Mutex<BTreeMap<String, (i64, String)>>,
}

/// Most absent skills remembered (past it the oldest requests simply re-check).
const MAX_ABSENT: usize = 10_000;

impl Served {
    fn was_absent(&self, id: &str, stamp: &(i64, String)) -> bool {
        let absent = self.absent.lock().unwrap_or_else(|p| p.into_inner());
        absent.get(id) == Some(stamp)
    }

    fn note_absent(&self, id: &str, stamp: (i64, String)) {
        let mut absent = self.absent.lock().unwrap_or_else(|p| p.into_inner());
        if absent.len() < MAX_ABSENT || absent.contains_key(id) {
            absent.insert(id.to_owned(), stamp);
        }
    }
}

/// Resolves `source` and reads every served file; stored skills carry their record's stamp,
/// read before their files (a change in between shows as stale on the next request).
async fn read_served(
    source: &Source,
    limits: &SnapshotLimits,
    load_options: &LoadOptions,
) -> Result<Served> {
    let snapshot = match source {
        Source::Directory(roots) => {
            let mut discovery = Discovery::new(load_options.clone());
            for root in roots {
                discovery = discovery.root(root.clone());
            }
            let skills = discovery.run().into_skills();
            let resolution = Resolver::new().resolve_repo(&skills);
            let reader = SkillFileReader::new().max_bytes(limits.max_file_bytes);
            Snapshot::build(resolution, &reader, *limits).await
        }
        Source::Agent {
            store,
            tenant,
            agent,
            team,
            repo,
        } => {
            let resolution = Resolver::new()
                .resolve_for_agent(store.as_ref(), tenant, agent, team.as_deref(), repo)
                .await?;
            let mut stamps = BTreeMap::new();
            for skill in resolution.winners() {
                if let Some(id) = &skill.store_id
                    && let Some(record) = store
                        .find_skill_by_id(tenant, id)
                        .await
                        .map_err(skills_catalog::Error::from)?
                {
                    stamps.insert(skill.id.clone(), (record.updated_at, record.checksum));
                }
            }
            let reader = SkillFileReader::with_store(store.as_ref(), tenant)
                .max_bytes(limits.max_file_bytes);
            let mut snapshot = Snapshot::build(resolution, &reader, *limits).await;
            for (id, skill) in &mut snapshot.skills {
                skill.stamp = stamps.remove(id);
            }
            snapshot
        }
    };
    let directories = directories(&snapshot);
    Ok(Served {
        snapshot,
        directories,
        absent: Default::default(),
    })
}

/// A fresh connection id: this process's id and a counter (`<pid>-<n>`).
fn next_connection() -> Arc<str> {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    format!("{}-{n}", std::process::id()).into()
}

struct Inner {
    /// The current snapshot; replaced whole when a request finds it stale.
    served: RwLock<Arc<Served>>,
    source: Source,
    store: Option<(Arc<dyn SkillStore>, TenantId)>,
    gate: Arc<PolicyGate>,
    principal: Principal,
    load: Option<LoadSkillParts>,
    info: Implementation,
    limits: SnapshotLimits,
    load_options: LoadOptions,
}

/// A governed skills catalog as an MCP server. Cheap to clone (one `Arc`); each connection
/// it serves gets a handler of its own ([`new_connection`](Self::new_connection)).
///
/// ```
/// # tokio::runtime::Builder::new_current_thread().enable_all().build()?.block_on(async {
/// use skills_mcp::SkillsMcpServer;
/// use skills_security::audit::AuditTrail;
/// use skills_security::gate::PolicyGate;
/// use skills_security::permissions::Principal;
///
/// let dir = tempfile::tempdir()?;
/// std::fs::create_dir(dir.path().join("greeter"))?;
/// std::fs::write(
///     dir.path().join("greeter/SKILL.md"),
///     "---\nname: greeter\ndescription: Greets people.\n---\nSay hello.\n",
/// )?;
/// // Every request is decided by the gate and recorded on its trail.
/// let gate = PolicyGate::allow_all(AuditTrail::in_memory());
/// let server = SkillsMcpServer::for_directory(dir.path())
///     .gate(gate, Principal::new("acme", "alice").agent("agent-7"))
///     .build()
///     .await?;
/// assert_eq!(server.skill_names(), ["greeter"]);
/// // server.serve_stdio().await?;  or  server.serve_http(addr, token).await?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// # })?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone)]
pub struct SkillsMcpServer {
    inner: Arc<Inner>,
    /// This handler's connection (the client in audit records, the chat of approvals).
    connection: Arc<str>,
}

impl std::fmt::Debug for SkillsMcpServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SkillsMcpServer")
            .field("skills", &self.current().snapshot.skills.len())
            .field("connection", &self.connection)
            .field("load_skill", &self.inner.load.is_some())
            .finish_non_exhaustive()
    }
}

impl SkillsMcpServer {
    fn builder(source: Source) -> SkillsMcpServerBuilder {
        SkillsMcpServerBuilder {
            source,
            gate: None,
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
        self.current().snapshot.skills.keys().cloned().collect()
    }

    /// Skills and files left out of the catalog, and why.
    pub fn warnings(&self) -> Vec<String> {
        self.current().snapshot.warnings.clone()
    }

    /// The same server for another connection: its own client id in audit records and its
    /// own approval session, so one client's "yes for this session" never reaches another.
    /// Each transport served (and each HTTP session) gets one.
    pub fn new_connection(&self) -> SkillsMcpServer {
        SkillsMcpServer {
            inner: self.inner.clone(),
            connection: next_connection(),
        }
    }

    /// This handler's connection id.
    pub fn connection(&self) -> &str {
        &self.connection
    }

    /// The current snapshot.
    fn current(&self) -> Arc<Served> {
        match self.inner.served.read() {
            Ok(served) => served.clone(),
            Err(poisoned) => poisoned.into_inner().clone(),
        }
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
            .new_connection()
            .serve(transport)
            .await
            .map_err(|e| Error::Transport(e.to_string()))?;
        running
            .waiting()
            .await
            .map(|_| ())
            .map_err(|e| Error::Transport(e.to_string()))
    }
}

/// `resource not found`, naming only the URI.
fn not_served(uri: &str) -> ErrorData {
    ErrorData::resource_not_found(format!("no resource {}", crate::error::shown(uri)), None)
}

/// The protocol error for a refusal: not found for what is not served, else the reason.
fn refusal(uri: &str, code: DenyCode, reason: &str) -> ErrorData {
    match code {
        DenyCode::UnknownSkill | DenyCode::NotCatalogued => not_served(uri),
        _ => ErrorData::invalid_request(format!("refused ({code}): {reason}"), None),
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
        self.refresh_if_stale().await?;
        Ok(ListSkillsResult::with_all_items(
            self.current().snapshot.entries(),
        ))
    }

    async fn get_skill(
        &self,
        request: GetSkillRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> std::result::Result<GetSkillResult, ErrorData> {
        let unknown = || ErrorData::invalid_params(format!("unknown skill {}", request.uri), None);
        let (name, target) = match parse_skill_uri(&request.uri) {
            Ok((name, path)) if path == SKILL_MD => (name, Target::File(SKILL_MD)),
            Ok((name, _)) => (name, Target::Nothing(&request.uri)),
            Err(_) => (request.uri.clone(), Target::Nothing(&request.uri)),
        };
        let granted = match self.govern(SkillAction::Get, &name, target).await? {
            Governed::Granted(granted) => granted,
            Governed::Denied(..) => return Err(unknown()),
        };
        match granted.skill() {
            Some(skill) if skill.entry.uri == request.uri => {
                Ok(GetSkillResult::new(skill.entry.clone()))
            }
            _ => Err(unknown()),
        }
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> std::result::Result<ListResourcesResult, ErrorData> {
        self.refresh_if_stale().await?;
        let served = self.current();
        let resources = served
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
        let parsed = parse_skill_uri(&request.uri);
        let (name, target) = match &parsed {
            Ok((name, path)) => (name.clone(), Target::File(path)),
            Err(_) => (request.uri.clone(), Target::Nothing(&request.uri)),
        };
        let text = match self.govern(SkillAction::Read, &name, target).await? {
            Governed::Granted(Granted {
                text: Some(text), ..
            }) => text,
            Governed::Granted(_) => return Err(not_served(&request.uri)),
            Governed::Denied(code, reason) => {
                return Err(match parsed {
                    Err(e) => ErrorData::invalid_params(e.to_string(), None),
                    Ok(_) => refusal(&request.uri, code, &reason),
                });
            }
        };
        let path = parsed.map(|(_, path)| path).unwrap_or_default();
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
        let parsed = parse_skill_uri(&request.uri);
        let (name, target) = match &parsed {
            Ok((name, path)) => (name.clone(), Target::Directory(path)),
            Err(_) => (request.uri.clone(), Target::Nothing(&request.uri)),
        };
        let granted = match self.govern(SkillAction::Get, &name, target).await? {
            Governed::Granted(granted) => granted,
            Governed::Denied(DenyCode::NotCatalogued | DenyCode::UnknownSkill, _) => {
                return Err(not_dir());
            }
            Governed::Denied(code, reason) => return Err(refusal(&request.uri, code, &reason)),
        };
        let (_, path) = parsed.map_err(|_| not_dir())?;
        let children = granted
            .served
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
