//! The schema, its migrations, and how a connection is opened and configured.
//!
//! The schema follows seed 002 section 2 (`skills`, `skill_files`, `skill_assignments`) and
//! seed 000 section 5 (`skill_audit_log`, `skill_trust_history`, `skill_execution_plans`,
//! `skill_working_memory`), with a `tenant_id` column on every table, a `user_id` column on
//! every per-user table, and tables for agent memory. Times are milliseconds since the
//! epoch; lists and objects are JSON text. Uniqueness that the seeds declare per database is
//! per tenant here (a slug is unique in its tenant), and child rows reference their parent
//! by (tenant, id), so a file, an assignment or a step can never belong to another tenant's
//! parent. Deleting a skill cascades to its files and assignments, and deleting a plan to its
//! working memory, as seed 002 section 2 declares.
//!
//! Version 8 adds `permission_rules` (seed 003's `ExtensionPermission`, stored as JSON).
//! Version 9 adds `approvals` (approval requests and their decisions).
//! Version 10 adds what resolving reads in one row per skill: each skill's file listing and
//! `skill.json` text, kept by triggers on `skill_files`, and a covering assignment index.
//! Version 11 stamps every skill row with a number from a counter that never repeats,
//! restamped by triggers on every insert and update, under a covering `(tenant_id, id,
//! enabled, stamp)` index: what a resolution reads to reuse the skills it decoded before.
//! Version 12 adds `skills.held`, the operator's hold, which keeps a row disabled.
//!
//! Version 7 rebuilds `skill_working_memory` so a step's status may also be `denied`,
//! `skipped` or `cancelled` (every step of a run leaves an entry saying what became of it).
//!
//! Version 4 adds installed packages (a version's files are one JSON column, read whole
//! for a rollback; ratings cascade with their version, versions with their package) and the
//! learning engine's sequences and patterns.
//!
//! `PRAGMA user_version` is the number of migrations applied. Opening applies the missing
//! ones in one transaction; a file from a newer version of this crate is refused untouched.

use std::path::Path;
use std::time::Duration;

use rusqlite::{Connection, TransactionBehavior};

use crate::error::Error;
use crate::worker::transaction;

/// Migration `n` (from 1) takes the schema from version `n - 1` to `n`. Never edit one that
/// has shipped; add the next.
pub(crate) const MIGRATIONS: &[&str] = &[
    SKILLS,
    RECORDS,
    AGENT_MEMORY,
    PACKAGES_AND_LEARNING,
    SKILL_TRUST_LEVELS,
    MEMORY_CLASSES,
    STEP_OUTCOMES,
    PERMISSION_RULES,
    APPROVALS,
    RESOLVE_LISTINGS,
    RESOLVE_STAMPS,
    OPERATOR_HOLDS,
];

/// The schema version this crate writes.
pub(crate) const LATEST: i64 = MIGRATIONS.len() as i64;

/// What a skill's listing columns hold, computed from its `skill_files` rows (the tenant
/// and skill expressions are spliced in): `files_json`, a JSON array of `[path, content
/// type]` pairs in path order (bytewise; the reader sorts them again if they are not, since
/// SQLite does not promise an aggregate the order of its subquery, and `ORDER BY` inside an
/// aggregate would make the file unreadable to SQLite before 3.44), and `manifest`, the
/// text of its `skill.json` (NULL when it has none).
macro_rules! listing_update {
    ($tenant:literal, $skill:literal) => {
        concat!(
            "UPDATE skills SET files_json = (SELECT json_group_array(\
             json_array(relative_path, content_type)) FROM (SELECT relative_path, content_type \
             FROM skill_files WHERE tenant_id = ",
            $tenant,
            " AND skill_id = ",
            $skill,
            " ORDER BY relative_path)), \
             manifest = (SELECT content FROM skill_files WHERE tenant_id = ",
            $tenant,
            " AND skill_id = ",
            $skill,
            " AND relative_path = 'skill.json') \
             WHERE tenant_id = ",
            $tenant,
            " AND id = ",
            $skill,
            ";\n"
        )
    };
}

/// Version 10: what resolving an agent's skills reads, without a row per file or a table
/// lookup per assignment (issue 20's bound: `resolvable_skills` was about 1,400 b-tree
/// searches per resolution of 228 skills).
///
/// * `skills.files_json` and `skills.manifest`: each skill's file listing (paths and types,
///   by path) and its `skill.json` text, kept by triggers on `skill_files` (every insert,
///   update and delete, the cascade of a skill's deletion included, whoever runs it: the
///   store or SQL beside it), so the listing cannot go stale. A file write recomputes its
///   skill's listing from the `(tenant_id, skill_id, relative_path)` index: the same order
///   of work as the size check every file write already makes over the skill's files (so a
///   skill's n files written one by one cost the square of n, and each rewrites the skill
///   row).
/// * `idx_skill_assignments_reach` covers the scope lookup with the fields resolve reads
///   (enabled, skill, priority, auto-inject): the assignments are read from the index
///   alone. It replaces `idx_skill_assignments_scope`, its prefix.
const RESOLVE_LISTINGS: &str = concat!(
    "ALTER TABLE skills ADD COLUMN files_json TEXT NOT NULL DEFAULT '[]';\n\
     ALTER TABLE skills ADD COLUMN manifest TEXT;\n\
     DROP INDEX idx_skill_assignments_scope;\n\
     CREATE INDEX idx_skill_assignments_reach ON skill_assignments \
     (tenant_id, scope, scope_id, enabled, skill_id, priority, auto_inject);\n\
     CREATE TRIGGER skill_files_listing_insert AFTER INSERT ON skill_files BEGIN\n",
    listing_update!("NEW.tenant_id", "NEW.skill_id"),
    "END;\n\
     CREATE TRIGGER skill_files_listing_delete AFTER DELETE ON skill_files BEGIN\n",
    listing_update!("OLD.tenant_id", "OLD.skill_id"),
    "END;\n\
     CREATE TRIGGER skill_files_listing_update AFTER UPDATE ON skill_files BEGIN\n",
    listing_update!("NEW.tenant_id", "NEW.skill_id"),
    "END;\n\
     CREATE TRIGGER skill_files_listing_move AFTER UPDATE ON skill_files \
     WHEN OLD.tenant_id IS NOT NEW.tenant_id OR OLD.skill_id IS NOT NEW.skill_id BEGIN\n",
    listing_update!("OLD.tenant_id", "OLD.skill_id"),
    "END;\n",
    // The listings of the files stored before this version: an update that changes
    // nothing fires the update trigger for every file (skills without files keep `[]`).
    "UPDATE skill_files SET relative_path = relative_path;\n",
);

/// Version 11: a stamp per skill row, for reusing decoded skills between resolutions
/// (`skills_store_traits::StampedProjections`).
///
/// * `skills.stamp`: the last value of `skill_stamps`' one counter when the row was
///   inserted or last updated. The triggers restamp every insert and every update that
///   does not set a new stamp itself (the store's own writes, the file-listing triggers,
///   SQL beside the store), so two versions of a row, or a deleted row and one recreated
///   with its id, never share a stamp. The `WHEN` lets through only the restamping
///   update itself (which writes the counter's latest value into a row whose stamp it
///   changes), so it does not restamp itself under `PRAGMA recursive_triggers = ON`, and an
///   update that writes some other stamp of its own is restamped. The last statement stamps
///   the rows stored
///   before this version (an update that changes no stamp fires the update trigger).
/// * `idx_skills_reach (tenant_id, id, enabled, stamp)`: a resolution reads which of its
///   skills are enabled and at which stamp from this index alone.
const RESOLVE_STAMPS: &str = "\
CREATE TABLE skill_stamps (one INTEGER PRIMARY KEY CHECK (one = 1), last INTEGER NOT NULL) STRICT;
INSERT INTO skill_stamps (one, last) VALUES (1, 0);
ALTER TABLE skills ADD COLUMN stamp INTEGER NOT NULL DEFAULT 0;
CREATE INDEX idx_skills_reach ON skills (tenant_id, id, enabled, stamp);
CREATE TRIGGER skills_stamp_insert AFTER INSERT ON skills BEGIN
    UPDATE skill_stamps SET last = last + 1 WHERE one = 1;
    UPDATE skills SET stamp = (SELECT last FROM skill_stamps WHERE one = 1) WHERE rowid = NEW.rowid;
END;
CREATE TRIGGER skills_stamp_update AFTER UPDATE ON skills
WHEN NEW.stamp IS OLD.stamp OR NEW.stamp IS NOT (SELECT last FROM skill_stamps WHERE one = 1) BEGIN
    UPDATE skill_stamps SET last = last + 1 WHERE one = 1;
    UPDATE skills SET stamp = (SELECT last FROM skill_stamps WHERE one = 1) WHERE rowid = NEW.rowid;
END;
UPDATE skills SET stamp = 0;
";

/// Version 12: the operator's hold (`SkillRecord::held`): 1 while someone who runs the
/// catalog has switched the skill off, which only lifting the hold undoes (an installer's
/// update or approval re-enabling the skill must not). The store keeps a held row disabled
/// on every write; the CHECK refuses a held row that is enabled from SQL beside the store
/// too. Every row stored before is not held (the default).
const OPERATOR_HOLDS: &str = "\
ALTER TABLE skills ADD COLUMN held INTEGER NOT NULL DEFAULT 0
    CHECK (held IN (0, 1) AND NOT (held = 1 AND enabled = 1));
";

/// Version 9: approval requests and their decisions, one per (tenant, execution).
const APPROVALS: &str = r#"
CREATE TABLE approvals (
    tenant_id      TEXT NOT NULL,
    execution_id   TEXT NOT NULL,
    skill_id       TEXT NOT NULL,
    requested_by   TEXT NOT NULL,
    reason         TEXT NOT NULL,
    approver_roles TEXT NOT NULL CHECK (json_valid(approver_roles) AND json_type(approver_roles) = 'array'),
    rule           TEXT,
    status         TEXT NOT NULL CHECK (status IN ('pending', 'approved', 'refused')),
    decided_by     TEXT,
    requested_at   INTEGER NOT NULL,
    decided_at     INTEGER,
    PRIMARY KEY (tenant_id, execution_id)
) WITHOUT ROWID;
CREATE INDEX approvals_by_time ON approvals (tenant_id, requested_at, execution_id);
"#;

/// Version 8: permission rules (seed 003 `ExtensionPermission`), one JSON object per
/// (tenant, id), with a revision counted up on every write.
const PERMISSION_RULES: &str = r#"
CREATE TABLE permission_rules (
    tenant_id  TEXT NOT NULL,
    id         TEXT NOT NULL,
    rule       TEXT NOT NULL CHECK (json_valid(rule) AND json_type(rule) = 'object'),
    revision   INTEGER NOT NULL CHECK (revision >= 1),
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    PRIMARY KEY (tenant_id, id)
) WITHOUT ROWID;
"#;

/// Version 5: the trust level a skill runs at (NULL: unknown, treated as community).
const SKILL_TRUST_LEVELS: &str = r#"
ALTER TABLE skills ADD COLUMN trust_level TEXT
    CHECK (trust_level IS NULL OR trust_level IN ('core', 'verified', 'community', 'user'));
"#;

/// Version 6: the data class and sources of what produced a working-memory entry.
const MEMORY_CLASSES: &str = r#"
ALTER TABLE skill_working_memory ADD COLUMN data_class TEXT;
ALTER TABLE skill_working_memory ADD COLUMN sources_json TEXT NOT NULL DEFAULT '[]';
"#;

/// Version 7: a step's entry may also say `denied`, `skipped` or `cancelled`. SQLite cannot
/// change a column's CHECK, so the table is rebuilt with its rows, columns and index.
const STEP_OUTCOMES: &str = r#"
CREATE TABLE skill_working_memory_v7 (
    id TEXT PRIMARY KEY,
    tenant_id TEXT NOT NULL,
    user_id TEXT NOT NULL,
    plan_id TEXT NOT NULL,
    step_number INTEGER NOT NULL CHECK (step_number >= 0),
    skill_id TEXT NOT NULL CHECK (skill_id <> ''),
    status TEXT NOT NULL CHECK (status IN
        ('pending', 'running', 'complete', 'failed', 'denied', 'skipped', 'cancelled')),
    summary TEXT,
    artifacts_json TEXT NOT NULL,
    extracted_facts_json TEXT NOT NULL,
    next_step_hints_json TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    data_class TEXT,
    sources_json TEXT NOT NULL DEFAULT '[]',
    FOREIGN KEY (tenant_id, user_id, plan_id)
        REFERENCES skill_execution_plans (tenant_id, user_id, id) ON DELETE CASCADE
) STRICT;
INSERT INTO skill_working_memory_v7 (id, tenant_id, user_id, plan_id, step_number, skill_id,
    status, summary, artifacts_json, extracted_facts_json, next_step_hints_json, created_at,
    updated_at, data_class, sources_json)
SELECT id, tenant_id, user_id, plan_id, step_number, skill_id, status, summary, artifacts_json,
    extracted_facts_json, next_step_hints_json, created_at, updated_at, data_class, sources_json
FROM skill_working_memory;
DROP TABLE skill_working_memory;
ALTER TABLE skill_working_memory_v7 RENAME TO skill_working_memory;
CREATE UNIQUE INDEX idx_working_memory_step
    ON skill_working_memory (tenant_id, user_id, plan_id, step_number);
"#;

/// Version 1: skills, their files and their assignments (seed 002 section 2).
const SKILLS: &str = r#"
CREATE TABLE skills (
    id TEXT PRIMARY KEY,
    tenant_id TEXT NOT NULL,
    name TEXT NOT NULL,
    slug TEXT NOT NULL,
    description TEXT,
    category TEXT NOT NULL DEFAULT 'general',
    source_kind TEXT NOT NULL CHECK (source_kind IN ('admin', 'plugin')),
    plugin_id TEXT,
    source_ref TEXT,
    content TEXT NOT NULL,
    is_directory INTEGER NOT NULL DEFAULT 0 CHECK (is_directory IN (0, 1)),
    version TEXT,
    checksum TEXT NOT NULL,
    enabled INTEGER NOT NULL DEFAULT 1 CHECK (enabled IN (0, 1)),
    tags_json TEXT NOT NULL DEFAULT '[]',
    requires_tools_json TEXT NOT NULL DEFAULT '[]',
    metadata_json TEXT NOT NULL DEFAULT '{}',
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    UNIQUE (tenant_id, id)
) STRICT;
CREATE UNIQUE INDEX idx_skills_slug ON skills (tenant_id, slug);
CREATE INDEX idx_skills_source_kind ON skills (tenant_id, source_kind);
CREATE INDEX idx_skills_plugin_id ON skills (tenant_id, plugin_id);
CREATE INDEX idx_skills_category ON skills (tenant_id, category);
CREATE INDEX idx_skills_enabled ON skills (tenant_id, enabled);

CREATE TABLE skill_files (
    id TEXT PRIMARY KEY,
    tenant_id TEXT NOT NULL,
    skill_id TEXT NOT NULL,
    relative_path TEXT NOT NULL,
    content TEXT NOT NULL,
    content_type TEXT NOT NULL,
    size_bytes INTEGER NOT NULL CHECK (size_bytes >= 0),
    checksum TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    FOREIGN KEY (tenant_id, skill_id) REFERENCES skills (tenant_id, id) ON DELETE CASCADE
) STRICT;
CREATE UNIQUE INDEX idx_skill_files_path ON skill_files (tenant_id, skill_id, relative_path);

CREATE TABLE skill_assignments (
    id TEXT PRIMARY KEY,
    tenant_id TEXT NOT NULL,
    skill_id TEXT NOT NULL,
    skill_slug TEXT NOT NULL,
    scope TEXT NOT NULL CHECK (scope IN ('global', 'team', 'agent')),
    scope_id TEXT CHECK ((scope = 'global') = (scope_id IS NULL)),
    priority INTEGER NOT NULL DEFAULT 0,
    auto_inject INTEGER NOT NULL DEFAULT 0 CHECK (auto_inject IN (0, 1)),
    enabled INTEGER NOT NULL DEFAULT 1 CHECK (enabled IN (0, 1)),
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    FOREIGN KEY (tenant_id, skill_id) REFERENCES skills (tenant_id, id) ON DELETE CASCADE
) STRICT;
-- NULLs are distinct in a UNIQUE index, so the global scope's NULL id is folded to ''
-- (which team and agent ids may not be) to keep one global assignment per skill.
CREATE UNIQUE INDEX idx_skill_assignments_unique
    ON skill_assignments (tenant_id, skill_id, scope, IFNULL(scope_id, ''));
CREATE INDEX idx_skill_assignments_scope ON skill_assignments (tenant_id, scope, scope_id);
CREATE INDEX idx_skill_assignments_skill ON skill_assignments (tenant_id, skill_id);
"#;

/// Version 2: the audit log, trust history, execution plans and working memory (seed 000
/// section 5).
const RECORDS: &str = r#"
CREATE TABLE skill_audit_log (
    tenant_id TEXT NOT NULL,
    chain TEXT NOT NULL CHECK (chain <> ''),
    sequence INTEGER NOT NULL CHECK (sequence >= 1),
    recorded_at INTEGER NOT NULL,
    id TEXT NOT NULL,
    timestamp INTEGER NOT NULL,
    user_id TEXT NOT NULL,
    skill_id TEXT NOT NULL,
    skill_path TEXT NOT NULL,
    skill_trust_level TEXT NOT NULL,
    skill_version TEXT,
    task_id TEXT,
    agent_id TEXT,
    trigger_reason TEXT,
    data_classes_requested_json TEXT NOT NULL,
    data_classes_granted_json TEXT NOT NULL,
    data_redacted INTEGER NOT NULL CHECK (data_redacted IN (0, 1)),
    tokens_used_json TEXT NOT NULL,
    input_hash TEXT NOT NULL,
    output_hash TEXT,
    execution_time_ms INTEGER,
    success INTEGER NOT NULL CHECK (success IN (0, 1)),
    error TEXT,
    sandbox_config_json TEXT NOT NULL,
    security_flags_json TEXT NOT NULL,
    previous_hash TEXT NOT NULL,
    entry_hash TEXT NOT NULL,
    PRIMARY KEY (tenant_id, chain, sequence)
) STRICT, WITHOUT ROWID;
CREATE UNIQUE INDEX idx_audit_record_id ON skill_audit_log (tenant_id, id);
CREATE INDEX idx_audit_user ON skill_audit_log (tenant_id, user_id);
CREATE INDEX idx_audit_skill ON skill_audit_log (tenant_id, skill_id);
CREATE INDEX idx_audit_timestamp ON skill_audit_log (tenant_id, timestamp);
-- The log is immutable (seed 000): even SQL run beside the store cannot rewrite history.
CREATE TRIGGER skill_audit_log_no_update BEFORE UPDATE ON skill_audit_log
BEGIN SELECT RAISE(ABORT, 'skill_audit_log is append-only'); END;
CREATE TRIGGER skill_audit_log_no_delete BEFORE DELETE ON skill_audit_log
BEGIN SELECT RAISE(ABORT, 'skill_audit_log is append-only'); END;

CREATE TABLE skill_trust_history (
    id TEXT PRIMARY KEY,
    tenant_id TEXT NOT NULL,
    user_id TEXT NOT NULL,
    skill_id TEXT NOT NULL CHECK (skill_id <> ''),
    successful_executions INTEGER NOT NULL DEFAULT 0,
    failed_executions INTEGER NOT NULL DEFAULT 0,
    last_success INTEGER,
    last_failure INTEGER,
    session_trust_granted INTEGER NOT NULL DEFAULT 0 CHECK (session_trust_granted IN (0, 1)),
    session_trust_expires INTEGER,
    globally_approved INTEGER NOT NULL DEFAULT 0 CHECK (globally_approved IN (0, 1)),
    globally_approved_at INTEGER,
    trust_reset_count INTEGER NOT NULL DEFAULT 0,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    UNIQUE (tenant_id, user_id, skill_id)
) STRICT;

CREATE TABLE skill_execution_plans (
    id TEXT PRIMARY KEY,
    tenant_id TEXT NOT NULL,
    user_id TEXT NOT NULL,
    task_description TEXT NOT NULL CHECK (task_description <> ''),
    skills_planned_json TEXT NOT NULL,
    dependency_graph_json TEXT NOT NULL,
    parallel_groups_json TEXT NOT NULL,
    estimated_duration_ms INTEGER,
    estimated_cost_level TEXT CHECK (estimated_cost_level IN ('low', 'medium', 'high')),
    risk_level TEXT NOT NULL CHECK (risk_level IN ('low', 'medium', 'high', 'critical')),
    approval_required INTEGER NOT NULL DEFAULT 0 CHECK (approval_required IN (0, 1)),
    approval_status TEXT CHECK (approval_status IN ('pending', 'approved', 'rejected')),
    approved_by TEXT,
    approved_at INTEGER,
    execution_started_at INTEGER,
    execution_completed_at INTEGER,
    success INTEGER CHECK (success IN (0, 1)),
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    UNIQUE (tenant_id, user_id, id)
) STRICT;
CREATE INDEX idx_plans_owner ON skill_execution_plans (tenant_id, user_id, created_at, id);

CREATE TABLE skill_working_memory (
    id TEXT PRIMARY KEY,
    tenant_id TEXT NOT NULL,
    user_id TEXT NOT NULL,
    plan_id TEXT NOT NULL,
    step_number INTEGER NOT NULL CHECK (step_number >= 0),
    skill_id TEXT NOT NULL CHECK (skill_id <> ''),
    status TEXT NOT NULL CHECK (status IN ('pending', 'running', 'complete', 'failed')),
    summary TEXT,
    artifacts_json TEXT NOT NULL,
    extracted_facts_json TEXT NOT NULL,
    next_step_hints_json TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    FOREIGN KEY (tenant_id, user_id, plan_id)
        REFERENCES skill_execution_plans (tenant_id, user_id, id) ON DELETE CASCADE
) STRICT;
CREATE UNIQUE INDEX idx_working_memory_step
    ON skill_working_memory (tenant_id, user_id, plan_id, step_number);
"#;

/// Version 3: agent memory (seed 000 section 2.2): episodes, facts, procedures, preferences.
const AGENT_MEMORY: &str = r#"
CREATE TABLE memory_episodes (
    id TEXT PRIMARY KEY,
    tenant_id TEXT NOT NULL,
    user_id TEXT NOT NULL,
    event_type TEXT NOT NULL CHECK (event_type <> ''),
    title TEXT NOT NULL CHECK (title <> ''),
    content TEXT NOT NULL,
    occurred_at INTEGER NOT NULL,
    recorded_at INTEGER NOT NULL,
    context_json TEXT NOT NULL
) STRICT;
CREATE INDEX idx_episodes_owner ON memory_episodes (tenant_id, user_id, event_type);

CREATE TABLE memory_facts (
    id TEXT PRIMARY KEY,
    tenant_id TEXT NOT NULL,
    user_id TEXT NOT NULL,
    subject TEXT NOT NULL CHECK (subject <> ''),
    predicate TEXT NOT NULL CHECK (predicate <> ''),
    object TEXT NOT NULL CHECK (object <> ''),
    confidence REAL NOT NULL CHECK (confidence BETWEEN 0 AND 1),
    source TEXT NOT NULL CHECK (source <> ''),
    valid_from INTEGER NOT NULL,
    valid_to INTEGER CHECK (valid_to IS NULL OR valid_to >= valid_from),
    recorded_at INTEGER NOT NULL
) STRICT;
CREATE INDEX idx_facts_owner ON memory_facts (tenant_id, user_id);

CREATE TABLE memory_procedures (
    id TEXT PRIMARY KEY,
    tenant_id TEXT NOT NULL,
    user_id TEXT NOT NULL,
    task_type TEXT NOT NULL CHECK (task_type <> ''),
    skill_sequence_json TEXT NOT NULL,
    outcome_json TEXT NOT NULL,
    success_count INTEGER NOT NULL,
    created_at INTEGER NOT NULL,
    last_success_at INTEGER NOT NULL,
    UNIQUE (tenant_id, user_id, task_type, skill_sequence_json)
) STRICT;

CREATE TABLE memory_preferences (
    id TEXT PRIMARY KEY,
    tenant_id TEXT NOT NULL,
    user_id TEXT NOT NULL,
    context TEXT NOT NULL CHECK (context <> ''),
    key TEXT NOT NULL CHECK (key <> ''),
    value_json TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    UNIQUE (tenant_id, user_id, context, key)
) STRICT;
"#;

/// Version 4: installed packages with their versions and ratings (issue 9; seed 003's
/// marketplace tables folded per tenant), and the learning engine's executed sequences and
/// patterns (seed 003 `skill_learning_patterns`).
const PACKAGES_AND_LEARNING: &str = r#"
CREATE TABLE skill_packages (
    id TEXT PRIMARY KEY,
    tenant_id TEXT NOT NULL,
    skill_id TEXT NOT NULL CHECK (skill_id <> ''),
    name TEXT NOT NULL CHECK (name <> ''),
    source_json TEXT NOT NULL,
    current_version TEXT NOT NULL,
    trust_level TEXT NOT NULL CHECK (trust_level <> ''),
    digest TEXT NOT NULL,
    verdict TEXT NOT NULL,
    installed_by TEXT,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    UNIQUE (tenant_id, id)
) STRICT;
CREATE UNIQUE INDEX idx_packages_name ON skill_packages (tenant_id, name);
CREATE UNIQUE INDEX idx_packages_skill ON skill_packages (tenant_id, skill_id);

CREATE TABLE skill_package_versions (
    id TEXT PRIMARY KEY,
    tenant_id TEXT NOT NULL,
    package_id TEXT NOT NULL,
    version TEXT NOT NULL CHECK (version <> ''),
    digest TEXT NOT NULL,
    verdict TEXT NOT NULL,
    file_digests_json TEXT NOT NULL,
    files_json TEXT NOT NULL,
    scripts_json TEXT NOT NULL,
    permissions_json TEXT NOT NULL,
    scan_report_json TEXT NOT NULL,
    publisher TEXT,
    changelog TEXT,
    deprecated TEXT,
    approved INTEGER NOT NULL CHECK (approved IN (0, 1)),
    created_at INTEGER NOT NULL,
    created_by TEXT,
    UNIQUE (tenant_id, package_id, version),
    FOREIGN KEY (tenant_id, package_id) REFERENCES skill_packages (tenant_id, id) ON DELETE CASCADE
) STRICT;

CREATE TABLE skill_package_ratings (
    tenant_id TEXT NOT NULL,
    package_id TEXT NOT NULL,
    version TEXT NOT NULL,
    user_id TEXT NOT NULL,
    stars INTEGER NOT NULL CHECK (stars BETWEEN 1 AND 5),
    rated_at INTEGER NOT NULL,
    PRIMARY KEY (tenant_id, package_id, version, user_id),
    FOREIGN KEY (tenant_id, package_id, version)
        REFERENCES skill_package_versions (tenant_id, package_id, version) ON DELETE CASCADE
) STRICT, WITHOUT ROWID;

-- `seq` keeps recording order, which breaks ties between equal timestamps.
CREATE TABLE learning_sequences (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    id TEXT NOT NULL UNIQUE,
    tenant_id TEXT NOT NULL,
    task_type TEXT NOT NULL CHECK (task_type <> ''),
    steps_json TEXT NOT NULL,
    success INTEGER NOT NULL CHECK (success IN (0, 1)),
    recorded_at INTEGER NOT NULL
) STRICT;
CREATE INDEX idx_learning_sequences_time ON learning_sequences (tenant_id, recorded_at, seq);

CREATE TABLE learning_patterns (
    id TEXT PRIMARY KEY,
    tenant_id TEXT NOT NULL,
    pattern_hash TEXT NOT NULL CHECK (pattern_hash <> ''),
    kind TEXT NOT NULL CHECK (kind IN ('sequence', 'retry', 'composite')),
    skills_json TEXT NOT NULL,
    task_types_json TEXT NOT NULL,
    frequency INTEGER NOT NULL,
    success_rate REAL NOT NULL CHECK (success_rate BETWEEN 0 AND 1),
    status TEXT NOT NULL CHECK (status IN ('detected', 'validated', 'converted', 'dismissed')),
    draft_skill_id TEXT,
    first_seen INTEGER NOT NULL,
    last_seen INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    UNIQUE (tenant_id, pattern_hash)
) STRICT;
CREATE INDEX idx_learning_patterns_status ON learning_patterns (tenant_id, status, kind);
"#;

/// How SQLite syncs commits to disk (`PRAGMA synchronous`), in write-ahead-log mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum Synchronous {
    /// Every commit is synced to disk before the call returns (`FULL`): an acknowledged
    /// write, an audit append included, survives a power loss or an OS crash. The default.
    #[default]
    Full,
    /// The log is synced only at checkpoints (`NORMAL`): an acknowledged write survives the
    /// process being killed, but the last commits may roll back after a power loss or OS
    /// crash. Much cheaper per commit; the database is never corrupted either way.
    Normal,
}

impl Synchronous {
    fn pragma(self) -> &'static str {
        match self {
            Synchronous::Full => "FULL",
            Synchronous::Normal => "NORMAL",
        }
    }
}

/// Opens and configures a connection, then migrates the schema to [`LATEST`].
pub(crate) fn open(
    path: Option<&Path>,
    synchronous: Synchronous,
    busy_timeout: Duration,
    cache_kib: u32,
) -> Result<Connection, Error> {
    let mut conn = match path {
        Some(path) => Connection::open(path),
        None => Connection::open_in_memory(),
    }
    .map_err(|e| Error::sqlite("opening the database", e))?;
    conn.busy_timeout(busy_timeout)
        .map_err(|e| Error::sqlite("setting the busy timeout", e))?;
    if path.is_some() {
        // Switching a new file to WAL needs its exclusive lock, and SQLite answers BUSY at
        // once (no busy handler) when another process opens the same new file in that
        // instant: look again until the busy timeout.
        let started = std::time::Instant::now();
        let mode: String = loop {
            match conn.pragma_update_and_check(None, "journal_mode", "WAL", |row| row.get(0)) {
                Err(rusqlite::Error::SqliteFailure(e, _))
                    if e.code == rusqlite::ErrorCode::DatabaseBusy
                        && started.elapsed() < busy_timeout =>
                {
                    std::thread::sleep(std::time::Duration::from_millis(5));
                }
                other => {
                    break other.map_err(|e| Error::sqlite("enabling write-ahead logging", e))?;
                }
            }
        };
        if !mode.eq_ignore_ascii_case("wal") {
            return Err(Error::Unsupported(format!(
                "write-ahead logging is unavailable here (journal mode `{mode}`)"
            )));
        }
    }
    conn.pragma_update(None, "synchronous", synchronous.pragma())
        .map_err(|e| Error::sqlite("setting the synchronous mode", e))?;
    conn.pragma_update(None, "foreign_keys", true)
        .map_err(|e| Error::sqlite("enabling foreign keys", e))?;
    // A negative cache size is in KiB.
    conn.pragma_update(None, "cache_size", -i64::from(cache_kib))
        .map_err(|e| Error::sqlite("sizing the page cache", e))?;
    migrate_to(&mut conn, LATEST)?;
    Ok(conn)
}

/// The schema version of the database (`PRAGMA user_version`).
pub(crate) fn version(conn: &Connection) -> rusqlite::Result<i64> {
    conn.pragma_query_value(None, "user_version", |row| row.get(0))
}

/// Applies the migrations after the database's version, up to `target`, in one write
/// transaction (so two processes opening a new file migrate it once).
pub(crate) fn migrate_to(conn: &mut Connection, target: i64) -> Result<(), Error> {
    let found = transaction(conn, TransactionBehavior::Immediate, |tx| {
        let found = version(tx)?;
        if (0..target).contains(&found) {
            for sql in MIGRATIONS
                .iter()
                .take(usize::try_from(target).unwrap_or(0))
                .skip(usize::try_from(found).unwrap_or(0))
            {
                tx.execute_batch(sql)?;
            }
            tx.pragma_update(None, "user_version", target)?;
        }
        Ok(found)
    })
    .map_err(|error| Error::Sqlite {
        message: format!("migrating the schema: {error}"),
        source: Box::new(error),
    })?;
    if found < 0 {
        return Err(Error::UnknownSchema { found });
    }
    if found > LATEST {
        return Err(Error::SchemaTooNew {
            found,
            supported: LATEST,
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests;
