//! Shared fixtures of the install tests: a tiny HTTP/1.1 server on the loopback interface
//! serving canned answers, a minimal real `HttpClient` over `std::net::TcpStream` (loopback
//! only), tarball and base64 builders, stores that fail on the Nth call, and snapshots of
//! everything the stores hold.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use async_trait::async_trait;
use skills::install::{
    HttpClient, HttpError, HttpRequest, HttpResponse, Installer, PackageScanner,
};
use skills::security::scan::{Category, ScanFinding, ScanReport, Severity};
use skills::store::audit::{AuditEntry, AuditQuery, AuditRecord, ChainHead};
use skills::store::in_memory::{InMemoryAuditStore, InMemoryPackageStore, InMemorySkillStore};
use skills::store::packages::{
    NewPackage, NewPackageVersion, PackageRecord, PackageStore, PackageUpdate,
    PackageVersionRecord, RatingSummary,
};
use skills::store::{
    AssignedSkill, AssignmentFilter, AssignmentUpdate, AuditStore, Error, ManualClock,
    NewAssignment, NewSkill, NewSkillFile, Result, SkillAssignment, SkillFileRecord,
    SkillFileUpdate, SkillFilter, SkillRecord, SkillStore, SkillUpdate, TenantId, UserScope,
};

// ---------------------------------------------------------------------------------------
// The fake server.

/// A canned answer.
#[derive(Debug, Clone)]
pub struct Canned {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

/// A request the server saw.
#[derive(Debug, Clone)]
pub struct Seen {
    pub target: String,
    pub headers: Vec<(String, String)>,
}

impl Seen {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

/// An HTTP/1.1 server on 127.0.0.1 answering each request target (path and query, exactly)
/// with its canned answer, 404 otherwise; one connection at a time, `Connection: close`.
/// It stops when dropped.
pub struct FakeServer {
    addr: SocketAddr,
    routes: Arc<Mutex<BTreeMap<String, Canned>>>,
    seen: Arc<Mutex<Vec<Seen>>>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl FakeServer {
    pub fn start() -> FakeServer {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let routes: Arc<Mutex<BTreeMap<String, Canned>>> = Arc::default();
        let seen: Arc<Mutex<Vec<Seen>>> = Arc::default();
        let stop = Arc::new(AtomicBool::new(false));
        let thread = {
            let (routes, seen, stop) = (routes.clone(), seen.clone(), stop.clone());
            std::thread::spawn(move || {
                for stream in listener.incoming() {
                    if stop.load(Ordering::SeqCst) {
                        break;
                    }
                    let Ok(stream) = stream else { continue };
                    serve(stream, &routes, &seen);
                }
            })
        };
        FakeServer {
            addr,
            routes,
            seen,
            stop,
            thread: Some(thread),
        }
    }

    /// `http://127.0.0.1:<port>`.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    pub fn route(&self, target: &str, status: u16, headers: &[(&str, &str)], body: Vec<u8>) {
        let headers = headers
            .iter()
            .map(|(n, v)| ((*n).to_owned(), (*v).to_owned()))
            .collect();
        self.routes.lock().unwrap().insert(
            target.to_owned(),
            Canned {
                status,
                headers,
                body,
            },
        );
    }

    pub fn json(&self, target: &str, value: serde_json::Value) {
        self.route(target, 200, &[], serde_json::to_vec(&value).unwrap());
    }

    pub fn seen(&self) -> Vec<Seen> {
        self.seen.lock().unwrap().clone()
    }
}

impl Drop for FakeServer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        // Wake the accept loop so it sees the flag.
        let _ = TcpStream::connect(self.addr);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

fn serve(mut stream: TcpStream, routes: &Mutex<BTreeMap<String, Canned>>, seen: &Mutex<Vec<Seen>>) {
    stream.set_read_timeout(Some(Duration::from_secs(5))).ok();
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") && head.len() < 64 * 1024 {
        match stream.read(&mut byte) {
            Ok(1) => head.push(byte[0]),
            _ => return,
        }
    }
    let text = String::from_utf8_lossy(&head).into_owned();
    let mut lines = text.split("\r\n");
    let request_line = lines.next().unwrap_or_default();
    let target = request_line.split(' ').nth(1).unwrap_or("/").to_owned();
    let headers = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_owned(), v.trim().to_owned()))
        .collect();
    seen.lock().unwrap().push(Seen {
        target: target.clone(),
        headers,
    });
    let canned = routes
        .lock()
        .unwrap()
        .get(&target)
        .cloned()
        .unwrap_or(Canned {
            status: 404,
            headers: Vec::new(),
            body: b"{\"message\": \"Not Found\"}".to_vec(),
        });
    let mut out = format!(
        "HTTP/1.1 {} Canned\r\nContent-Length: {}\r\nConnection: close\r\n",
        canned.status,
        canned.body.len()
    );
    for (name, value) in &canned.headers {
        out.push_str(&format!("{name}: {value}\r\n"));
    }
    out.push_str("\r\n");
    let _ = stream.write_all(out.as_bytes());
    let _ = stream.write_all(&canned.body);
    let _ = stream.flush();
}

// ---------------------------------------------------------------------------------------
// A real, minimal HTTP client (tests only).

/// Plain HTTP/1.1 over `std::net::TcpStream`, to 127.0.0.1 only, with a read timeout; stops
/// reading a body past the request's limit (and reports it).
#[derive(Debug, Default, Clone, Copy)]
pub struct LoopbackHttp;

#[async_trait]
impl HttpClient for LoopbackHttp {
    async fn request(&self, request: HttpRequest) -> std::result::Result<HttpResponse, HttpError> {
        let rest = request
            .url
            .strip_prefix("http://")
            .ok_or_else(|| HttpError::new("only http:// URLs in tests"))?;
        let (authority, target) = match rest.find('/') {
            Some(i) => (&rest[..i], &rest[i..]),
            None => (rest, "/"),
        };
        if !authority.starts_with("127.0.0.1:") {
            return Err(HttpError::new(format!(
                "refusing non-loopback host {authority}"
            )));
        }
        let mut stream =
            TcpStream::connect(authority).map_err(|e| HttpError::new(e.to_string()))?;
        stream.set_read_timeout(Some(Duration::from_secs(10))).ok();
        let mut head = format!(
            "{} {target} HTTP/1.1\r\nHost: {authority}\r\nConnection: close\r\n",
            request.method.as_str()
        );
        for (name, value) in &request.headers {
            head.push_str(&format!("{name}: {value}\r\n"));
        }
        head.push_str("\r\n");
        stream
            .write_all(head.as_bytes())
            .map_err(|e| HttpError::new(e.to_string()))?;
        let mut raw = Vec::new();
        stream
            .take(request.max_body_bytes + 64 * 1024 + 1)
            .read_to_end(&mut raw)
            .map_err(|e| HttpError::new(e.to_string()))?;
        let split = raw
            .windows(4)
            .position(|w| w == b"\r\n\r\n")
            .ok_or_else(|| HttpError::new("no header end"))?;
        let head = String::from_utf8_lossy(&raw[..split]).into_owned();
        let body = raw[split + 4..].to_vec();
        let mut lines = head.split("\r\n");
        let status = lines
            .next()
            .and_then(|l| l.split(' ').nth(1))
            .and_then(|s| s.parse().ok())
            .ok_or_else(|| HttpError::new("bad status line"))?;
        let headers = lines
            .filter_map(|l| l.split_once(':'))
            .map(|(n, v)| (n.trim().to_owned(), v.trim().to_owned()))
            .collect();
        Ok(HttpResponse::new(status, headers, body))
    }
}

// ---------------------------------------------------------------------------------------
// Builders.

pub fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |acc, (i, b)| acc | (u32::from(*b) << (16 - 8 * i)));
        for i in 0..=chunk.len() {
            out.push(char::from(ALPHABET[((n >> (18 - 6 * i)) & 63) as usize]));
        }
        for _ in chunk.len()..3 {
            out.push('=');
        }
    }
    out
}

/// One tar entry to write.
pub enum Entry<'a> {
    File(&'a str, &'a [u8]),
    Dir(&'a str),
    Symlink(&'a str, &'a str),
    /// A regular file whose name is written raw, bypassing the tar crate's path checks.
    RawName(&'a [u8], &'a [u8]),
}

/// A gzip-compressed tar of `entries`.
pub fn tar_gz(entries: &[Entry<'_>]) -> Vec<u8> {
    let encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    let mut builder = tar::Builder::new(encoder);
    for entry in entries {
        let mut header = tar::Header::new_gnu();
        header.set_mode(0o644);
        header.set_mtime(0);
        match entry {
            Entry::File(path, bytes) => {
                header.set_entry_type(tar::EntryType::Regular);
                header.set_size(bytes.len() as u64);
                builder.append_data(&mut header, path, *bytes).unwrap();
            }
            Entry::Dir(path) => {
                header.set_entry_type(tar::EntryType::Directory);
                header.set_size(0);
                builder
                    .append_data(&mut header, path, std::io::empty())
                    .unwrap();
            }
            Entry::Symlink(path, target) => {
                header.set_entry_type(tar::EntryType::Symlink);
                header.set_size(0);
                builder.append_link(&mut header, path, target).unwrap();
            }
            Entry::RawName(name, bytes) => {
                header.set_entry_type(tar::EntryType::Regular);
                header.set_size(bytes.len() as u64);
                header.as_old_mut().name[..name.len()].copy_from_slice(name);
                header.set_cksum();
                builder.append(&header, *bytes).unwrap();
            }
        }
    }
    builder.into_inner().unwrap().finish().unwrap()
}

/// A Spec-valid SKILL.md.
pub fn skill_md(name: &str, description: &str, version: &str, body: &str) -> String {
    format!(
        "---\nname: {name}\ndescription: {description}\nmetadata:\n  version: {version}\n---\n{body}"
    )
}

/// Writes a skill directory `<root>/<name>/` with `files` (SKILL.md among them).
pub fn write_skill(root: &std::path::Path, name: &str, files: &[(&str, &str)]) {
    let dir = root.join(name);
    if dir.exists() {
        std::fs::remove_dir_all(&dir).unwrap();
    }
    for (path, content) in files {
        let path = dir.join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, content).unwrap();
    }
}

/// A scanner that answers with a report of one finding of `severity` (none for `None`).
pub struct FixedScanner(pub Option<Severity>);

impl PackageScanner for FixedScanner {
    fn scan(&self, _: &skills::install::SkillPackage) -> skills::install::Result<ScanReport> {
        let findings = self
            .0
            .map(|severity| {
                ScanFinding::new(
                    Category::RuntimeDependency,
                    severity,
                    "test.fixed",
                    "SKILL.md",
                    1,
                    "pip install x".to_owned(),
                    "fixed finding".to_owned(),
                )
            })
            .into_iter()
            .collect();
        Ok(ScanReport::from_findings(findings))
    }
}

/// Counts scans, delegating to the real scanner.
#[derive(Default)]
pub struct CountingScanner(pub AtomicUsize, pub skills::security::scan::Scanner);

impl PackageScanner for CountingScanner {
    fn scan(&self, package: &skills::install::SkillPackage) -> skills::install::Result<ScanReport> {
        self.0.fetch_add(1, Ordering::SeqCst);
        self.1.scan(package)
    }
}

// ---------------------------------------------------------------------------------------
// Stores that fail on the Nth call.

/// A shared call counter: the call numbered `fail_at` (from 1) fails, before it reaches the
/// store or — in `after` mode — after the store did the work (a lost acknowledgement).
#[derive(Debug, Default)]
pub struct Faults {
    calls: AtomicUsize,
    fail_at: AtomicUsize,
    after: AtomicBool,
    fired: AtomicBool,
}

impl Faults {
    pub fn arm(&self, fail_at: usize, after: bool) {
        self.calls.store(0, Ordering::SeqCst);
        self.fail_at.store(fail_at, Ordering::SeqCst);
        self.after.store(after, Ordering::SeqCst);
        self.fired.store(false, Ordering::SeqCst);
    }

    pub fn disarm(&self) {
        self.fail_at.store(0, Ordering::SeqCst);
    }

    pub fn fired(&self) -> bool {
        self.fired.load(Ordering::SeqCst)
    }

    pub fn calls(&self) -> usize {
        self.calls.load(Ordering::SeqCst)
    }

    async fn guard<T>(&self, call: impl std::future::Future<Output = Result<T>>) -> Result<T> {
        let n = self.calls.fetch_add(1, Ordering::SeqCst) + 1;
        let hit = n == self.fail_at.load(Ordering::SeqCst);
        let after = self.after.load(Ordering::SeqCst);
        if hit && !after {
            self.fired.store(true, Ordering::SeqCst);
            return Err(Error::backend(format!("injected failure at call {n}")));
        }
        let result = call.await;
        if hit && after {
            self.fired.store(true, Ordering::SeqCst);
            result?;
            return Err(Error::backend(format!("injected failure after call {n}")));
        }
        result
    }
}

pub struct FailingSkills {
    pub inner: Arc<InMemorySkillStore>,
    pub faults: Arc<Faults>,
}

#[async_trait]
impl SkillStore for FailingSkills {
    async fn create_skill(&self, t: &TenantId, s: NewSkill) -> Result<SkillRecord> {
        self.faults.guard(self.inner.create_skill(t, s)).await
    }
    async fn find_skill_by_id(&self, t: &TenantId, id: &str) -> Result<Option<SkillRecord>> {
        self.faults.guard(self.inner.find_skill_by_id(t, id)).await
    }
    async fn find_skill_by_slug(&self, t: &TenantId, slug: &str) -> Result<Option<SkillRecord>> {
        self.faults
            .guard(self.inner.find_skill_by_slug(t, slug))
            .await
    }
    async fn list_skills(&self, t: &TenantId, f: &SkillFilter) -> Result<Vec<SkillRecord>> {
        self.faults.guard(self.inner.list_skills(t, f)).await
    }
    async fn update_skill(
        &self,
        t: &TenantId,
        id: &str,
        u: SkillUpdate,
    ) -> Result<Option<SkillRecord>> {
        self.faults.guard(self.inner.update_skill(t, id, u)).await
    }
    async fn delete_skill(&self, t: &TenantId, id: &str) -> Result<bool> {
        self.faults.guard(self.inner.delete_skill(t, id)).await
    }
    async fn is_slug_available(&self, t: &TenantId, s: &str, e: Option<&str>) -> Result<bool> {
        self.faults
            .guard(self.inner.is_slug_available(t, s, e))
            .await
    }
    async fn create_skill_file(
        &self,
        t: &TenantId,
        id: &str,
        f: NewSkillFile,
    ) -> Result<SkillFileRecord> {
        self.faults
            .guard(self.inner.create_skill_file(t, id, f))
            .await
    }
    async fn list_skill_files(&self, t: &TenantId, id: &str) -> Result<Vec<SkillFileRecord>> {
        self.faults.guard(self.inner.list_skill_files(t, id)).await
    }
    async fn list_files_for_skills(
        &self,
        t: &TenantId,
        ids: &[String],
    ) -> Result<std::collections::BTreeMap<String, Vec<SkillFileRecord>>> {
        self.faults
            .guard(self.inner.list_files_for_skills(t, ids))
            .await
    }
    async fn assignments_for_agent_with_files(
        &self,
        t: &TenantId,
        agent: &str,
        team: Option<&str>,
    ) -> Result<skills::store::AgentSkills> {
        self.faults
            .guard(self.inner.assignments_for_agent_with_files(t, agent, team))
            .await
    }
    async fn resolvable_skills(
        &self,
        t: &TenantId,
        agent: &str,
        team: Option<&str>,
    ) -> Result<Vec<skills::store::ResolvableSkill>> {
        self.faults
            .guard(self.inner.resolvable_skills(t, agent, team))
            .await
    }
    async fn find_skill_file(
        &self,
        t: &TenantId,
        id: &str,
        p: &str,
    ) -> Result<Option<SkillFileRecord>> {
        self.faults
            .guard(self.inner.find_skill_file(t, id, p))
            .await
    }
    async fn update_skill_file(
        &self,
        t: &TenantId,
        id: &str,
        u: SkillFileUpdate,
    ) -> Result<Option<SkillFileRecord>> {
        self.faults
            .guard(self.inner.update_skill_file(t, id, u))
            .await
    }
    async fn delete_skill_file(&self, t: &TenantId, id: &str) -> Result<bool> {
        self.faults.guard(self.inner.delete_skill_file(t, id)).await
    }
    async fn delete_skill_files_by_skill_id(&self, t: &TenantId, id: &str) -> Result<u64> {
        self.faults
            .guard(self.inner.delete_skill_files_by_skill_id(t, id))
            .await
    }
    async fn create_assignment(&self, t: &TenantId, a: NewAssignment) -> Result<SkillAssignment> {
        self.faults.guard(self.inner.create_assignment(t, a)).await
    }
    async fn find_assignment(&self, t: &TenantId, id: &str) -> Result<Option<SkillAssignment>> {
        self.faults.guard(self.inner.find_assignment(t, id)).await
    }
    async fn list_assignments(
        &self,
        t: &TenantId,
        f: &AssignmentFilter,
    ) -> Result<Vec<SkillAssignment>> {
        self.faults.guard(self.inner.list_assignments(t, f)).await
    }
    async fn assignments_for_agent(
        &self,
        t: &TenantId,
        a: &str,
        team: Option<&str>,
    ) -> Result<Vec<AssignedSkill>> {
        self.faults
            .guard(self.inner.assignments_for_agent(t, a, team))
            .await
    }
    async fn update_assignment(
        &self,
        t: &TenantId,
        id: &str,
        u: AssignmentUpdate,
    ) -> Result<Option<SkillAssignment>> {
        self.faults
            .guard(self.inner.update_assignment(t, id, u))
            .await
    }
    async fn delete_assignment(&self, t: &TenantId, id: &str) -> Result<bool> {
        self.faults.guard(self.inner.delete_assignment(t, id)).await
    }
    async fn skills_with_assignment_counts(&self, t: &TenantId) -> Result<Vec<(SkillRecord, u64)>> {
        self.faults
            .guard(self.inner.skills_with_assignment_counts(t))
            .await
    }
    async fn list_categories(&self, t: &TenantId) -> Result<Vec<String>> {
        self.faults.guard(self.inner.list_categories(t)).await
    }
    async fn agent_ids_for_skill(&self, t: &TenantId, id: &str) -> Result<Vec<String>> {
        self.faults
            .guard(self.inner.agent_ids_for_skill(t, id))
            .await
    }
}

pub struct FailingPackages {
    pub inner: Arc<InMemoryPackageStore>,
    pub faults: Arc<Faults>,
}

#[async_trait]
impl PackageStore for FailingPackages {
    async fn create_package(
        &self,
        t: &TenantId,
        p: NewPackage,
    ) -> Result<(PackageRecord, PackageVersionRecord)> {
        self.faults.guard(self.inner.create_package(t, p)).await
    }
    async fn get_package(&self, t: &TenantId, id: &str) -> Result<Option<PackageRecord>> {
        self.faults.guard(self.inner.get_package(t, id)).await
    }
    async fn find_package_by_name(&self, t: &TenantId, n: &str) -> Result<Option<PackageRecord>> {
        self.faults
            .guard(self.inner.find_package_by_name(t, n))
            .await
    }
    async fn find_package_by_skill(&self, t: &TenantId, s: &str) -> Result<Option<PackageRecord>> {
        self.faults
            .guard(self.inner.find_package_by_skill(t, s))
            .await
    }
    async fn list_packages(&self, t: &TenantId) -> Result<Vec<PackageRecord>> {
        self.faults.guard(self.inner.list_packages(t)).await
    }
    async fn add_version(
        &self,
        t: &TenantId,
        p: &str,
        v: NewPackageVersion,
    ) -> Result<PackageVersionRecord> {
        self.faults.guard(self.inner.add_version(t, p, v)).await
    }
    async fn get_version(
        &self,
        t: &TenantId,
        p: &str,
        v: &str,
    ) -> Result<Option<PackageVersionRecord>> {
        self.faults.guard(self.inner.get_version(t, p, v)).await
    }
    async fn list_versions(&self, t: &TenantId, p: &str) -> Result<Vec<PackageVersionRecord>> {
        self.faults.guard(self.inner.list_versions(t, p)).await
    }
    async fn set_current_version(
        &self,
        t: &TenantId,
        p: &str,
        v: &str,
        e: &str,
        u: PackageUpdate,
    ) -> Result<PackageRecord> {
        self.faults
            .guard(self.inner.set_current_version(t, p, v, e, u))
            .await
    }
    async fn deprecate_version(
        &self,
        t: &TenantId,
        p: &str,
        v: &str,
        m: Option<String>,
    ) -> Result<PackageVersionRecord> {
        self.faults
            .guard(self.inner.deprecate_version(t, p, v, m))
            .await
    }
    async fn set_version_approved(
        &self,
        t: &TenantId,
        p: &str,
        v: &str,
        a: bool,
    ) -> Result<PackageVersionRecord> {
        self.faults
            .guard(self.inner.set_version_approved(t, p, v, a))
            .await
    }
    async fn delete_package(&self, t: &TenantId, id: &str) -> Result<bool> {
        self.faults.guard(self.inner.delete_package(t, id)).await
    }
    async fn delete_version(&self, t: &TenantId, p: &str, v: &str) -> Result<bool> {
        self.faults.guard(self.inner.delete_version(t, p, v)).await
    }
    async fn rate(&self, s: &UserScope, p: &str, v: &str, stars: u8) -> Result<()> {
        self.faults.guard(self.inner.rate(s, p, v, stars)).await
    }
    async fn rating_summary(
        &self,
        t: &TenantId,
        p: &str,
        v: Option<&str>,
    ) -> Result<RatingSummary> {
        self.faults.guard(self.inner.rating_summary(t, p, v)).await
    }
}

pub struct FailingAudit {
    pub inner: Arc<InMemoryAuditStore>,
    pub faults: Arc<Faults>,
}

#[async_trait]
impl AuditStore for FailingAudit {
    async fn append(
        &self,
        t: &TenantId,
        chain: &str,
        r: AuditRecord,
        head: Option<&str>,
    ) -> Result<AuditEntry> {
        self.faults
            .guard(self.inner.append(t, chain, r, head))
            .await
    }
    async fn head(&self, t: &TenantId, chain: &str) -> Result<Option<ChainHead>> {
        self.faults.guard(self.inner.head(t, chain)).await
    }
    async fn read_range(
        &self,
        t: &TenantId,
        chain: &str,
        from: u64,
        limit: usize,
    ) -> Result<Vec<AuditEntry>> {
        self.faults
            .guard(self.inner.read_range(t, chain, from, limit))
            .await
    }
    async fn get_entry(&self, t: &TenantId, id: &str) -> Result<Option<AuditEntry>> {
        self.faults.guard(self.inner.get_entry(t, id)).await
    }
    async fn query(&self, t: &TenantId, q: &AuditQuery) -> Result<Vec<AuditEntry>> {
        self.faults.guard(self.inner.query(t, q)).await
    }
    async fn chains(&self, t: &TenantId) -> Result<Vec<String>> {
        self.faults.guard(self.inner.chains(t)).await
    }
}

/// In-memory stores on one frozen clock, each behind a fault injector sharing one counter.
pub struct Rig {
    pub skills: Arc<InMemorySkillStore>,
    pub packages: Arc<InMemoryPackageStore>,
    pub audit: Arc<InMemoryAuditStore>,
    pub faults: Arc<Faults>,
    pub clock: Arc<ManualClock>,
}

impl Rig {
    pub fn new() -> Rig {
        let clock = ManualClock::new(1_700_000_000_000);
        Rig {
            skills: Arc::new(InMemorySkillStore::with_clock(clock.clone())),
            packages: Arc::new(InMemoryPackageStore::with_clock(clock.clone())),
            audit: Arc::new(InMemoryAuditStore::with_clock(clock.clone())),
            faults: Arc::default(),
            clock,
        }
    }

    /// An installer over the failing wrappers, with `scanner` when given.
    pub fn installer(&self, scanner: Option<Arc<dyn PackageScanner>>) -> Installer {
        self.installer_trusting(scanner, &["trusted/skills"])
    }

    /// The same, trusting `trusted` (trust paths begin with the origin: `<host:port>/owner/repo`).
    pub fn installer_trusting(
        &self,
        scanner: Option<Arc<dyn PackageScanner>>,
        trusted: &[&str],
    ) -> Installer {
        let skills = Arc::new(FailingSkills {
            inner: self.skills.clone(),
            faults: self.faults.clone(),
        });
        let packages = Arc::new(FailingPackages {
            inner: self.packages.clone(),
            faults: self.faults.clone(),
        });
        let audit = Arc::new(FailingAudit {
            inner: self.audit.clone(),
            faults: self.faults.clone(),
        });
        let mut builder = Installer::builder(skills, packages, audit)
            .clock(self.clock.clone())
            .trusted_sources(skills::security::TrustedSources::new(
                trusted.iter().copied(),
            ));
        if let Some(scanner) = scanner {
            builder = builder.scanner(scanner);
        }
        builder.build()
    }

    /// Everything the three stores hold for `tenant`, as comparable text. With
    /// `file_ids: false`, skill file records are compared without their ids and
    /// timestamps (an undone update writes the old files back as new records).
    pub async fn snapshot(&self, tenant: &TenantId, file_ids: bool) -> String {
        let mut out = String::new();
        let skills = self
            .skills
            .list_skills(tenant, &SkillFilter::default())
            .await
            .unwrap();
        for skill in skills {
            out.push_str(&format!("{}\n", serde_json::to_string(&skill).unwrap()));
            for file in self
                .skills
                .list_skill_files(tenant, &skill.id)
                .await
                .unwrap()
            {
                let mut value = serde_json::to_value(&file).unwrap();
                if !file_ids {
                    let map = value.as_object_mut().unwrap();
                    map.remove("id");
                    map.remove("created_at");
                    map.remove("updated_at");
                }
                out.push_str(&format!("  file {value}\n"));
            }
        }
        for package in self.packages.list_packages(tenant).await.unwrap() {
            out.push_str(&format!("{}\n", serde_json::to_string(&package).unwrap()));
            for version in self
                .packages
                .list_versions(tenant, &package.id)
                .await
                .unwrap()
            {
                out.push_str(&format!(
                    "  version {}\n",
                    serde_json::to_string(&version).unwrap()
                ));
                let ratings = self
                    .packages
                    .rating_summary(tenant, &package.id, Some(&version.version))
                    .await
                    .unwrap();
                out.push_str(&format!("  ratings {ratings:?}\n"));
            }
        }
        for chain in self.audit.chains(tenant).await.unwrap() {
            for entry in self
                .audit
                .read_range(tenant, &chain, 1, usize::MAX)
                .await
                .unwrap()
            {
                out.push_str(&format!(
                    "audit {}\n",
                    serde_json::to_string(&entry).unwrap()
                ));
            }
        }
        out
    }
}

pub fn scope() -> UserScope {
    UserScope::new("acme", "alice")
}

pub fn run<F: std::future::Future>(future: F) -> F::Output {
    futures::executor::block_on(future)
}
