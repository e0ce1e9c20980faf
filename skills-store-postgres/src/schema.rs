//! The schema and its versioned migrations.
//!
//! Every table has a `tenant_id` column, per-user tables a `user_id` column too, and
//! uniqueness is per tenant (a slug is unique in its tenant). Each record is kept whole as
//! a JSON document (`doc`, the record as `skills-store-traits` serializes it) beside the
//! columns the store looks it up, orders, locks or constrains it by; child rows reference
//! their parent by (tenant, id) with the cascades seed 002 declares. Text keys use the `C`
//! collation, so the database orders them byte-wise as the in-memory stores do.
//!
//! **Tenancy.** Every table has row-level security enabled *and forced* (so it applies to
//! the tables' owner, the role the store connects as), with one policy: a row is visible
//! and writable only when its `tenant_id` equals the transaction's `skills.tenant`
//! setting. A connection that did not set it sees nothing and can write nothing.
//! (PostgreSQL exempts superusers and `BYPASSRLS` roles from every policy: connect as an
//! ordinary role.)
//!
//! **Migrations.** `schema_migrations` lists the versions applied. Opening takes a
//! transaction-scoped advisory lock, so concurrent openers migrate one at a time, applies
//! the missing migrations and records them in the same transaction (all or nothing), and
//! refuses a database that a newer version of this crate migrated.

use deadpool_postgres::Object;

use crate::error::Error;

/// Migration `n` (from 1) takes the schema from version `n - 1` to `n`. Never edit one that
/// has shipped; add the next.
pub(crate) const MIGRATIONS: &[(&str, &str)] = &[
    ("every store's tables", V1),
    ("approval records", V2),
    ("resolve listings", V3),
    ("resolve stamps", V4),
    ("operator holds", V5),
];

/// The schema version this crate writes.
pub(crate) const LATEST: i64 = MIGRATIONS.len() as i64;

/// The advisory lock openers take while migrating (with the schema's name as second key).
const MIGRATION_LOCK: i32 = 0x5_1000;

/// The tables under the tenant policy.
pub(crate) const TENANT_TABLES: &[&str] = &[
    "skills",
    "skill_files",
    "skill_assignments",
    "skill_audit_log",
    "skill_trust_history",
    "skill_execution_plans",
    "skill_working_memory",
    "memory_episodes",
    "memory_facts",
    "memory_procedures",
    "memory_preferences",
    "skill_packages",
    "skill_package_versions",
    "skill_package_ratings",
    "learning_sequences",
    "learning_patterns",
    "permission_rules",
];

const V1: &str = r#"
CREATE TABLE skills (
    tenant_id TEXT COLLATE "C" NOT NULL,
    id TEXT COLLATE "C" NOT NULL,
    slug TEXT COLLATE "C" NOT NULL,
    category TEXT COLLATE "C" NOT NULL,
    enabled BOOLEAN NOT NULL,
    content_bytes BIGINT NOT NULL,
    doc JSONB NOT NULL,
    PRIMARY KEY (tenant_id, id),
    UNIQUE (tenant_id, slug)
);

CREATE TABLE skill_files (
    tenant_id TEXT COLLATE "C" NOT NULL,
    id TEXT COLLATE "C" NOT NULL,
    skill_id TEXT COLLATE "C" NOT NULL,
    relative_path TEXT COLLATE "C" NOT NULL,
    size_bytes BIGINT NOT NULL CHECK (size_bytes >= 0),
    doc JSONB NOT NULL,
    PRIMARY KEY (tenant_id, id),
    UNIQUE (tenant_id, skill_id, relative_path),
    FOREIGN KEY (tenant_id, skill_id) REFERENCES skills (tenant_id, id) ON DELETE CASCADE
);

-- The global scope's id is '' (team and agent ids may not be), so one UNIQUE constraint
-- keeps one assignment per skill and target.
CREATE TABLE skill_assignments (
    tenant_id TEXT COLLATE "C" NOT NULL,
    id TEXT COLLATE "C" NOT NULL,
    skill_id TEXT COLLATE "C" NOT NULL,
    scope TEXT COLLATE "C" NOT NULL CHECK (scope IN ('global', 'team', 'agent')),
    scope_id TEXT COLLATE "C" NOT NULL,
    doc JSONB NOT NULL,
    PRIMARY KEY (tenant_id, id),
    UNIQUE (tenant_id, skill_id, scope, scope_id),
    FOREIGN KEY (tenant_id, skill_id) REFERENCES skills (tenant_id, id) ON DELETE CASCADE
);
CREATE INDEX idx_skill_assignments_target ON skill_assignments (tenant_id, scope, scope_id);

CREATE TABLE skill_audit_log (
    tenant_id TEXT COLLATE "C" NOT NULL,
    chain TEXT COLLATE "C" NOT NULL CHECK (chain <> ''),
    sequence BIGINT NOT NULL CHECK (sequence >= 1),
    id TEXT COLLATE "C" NOT NULL,
    entry_hash TEXT NOT NULL,
    doc JSONB NOT NULL,
    PRIMARY KEY (tenant_id, chain, sequence),
    UNIQUE (tenant_id, id)
);
-- The log is immutable (seed 000): even SQL run beside the store cannot rewrite history.
CREATE FUNCTION skill_audit_log_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'skill_audit_log is append-only' USING ERRCODE = 'insufficient_privilege';
END;
$$;
CREATE TRIGGER skill_audit_log_no_change BEFORE UPDATE OR DELETE ON skill_audit_log
    FOR EACH ROW EXECUTE FUNCTION skill_audit_log_append_only();
CREATE TRIGGER skill_audit_log_no_truncate BEFORE TRUNCATE ON skill_audit_log
    FOR EACH STATEMENT EXECUTE FUNCTION skill_audit_log_append_only();

CREATE TABLE skill_trust_history (
    tenant_id TEXT COLLATE "C" NOT NULL,
    user_id TEXT COLLATE "C" NOT NULL,
    skill_id TEXT COLLATE "C" NOT NULL,
    doc JSONB NOT NULL,
    PRIMARY KEY (tenant_id, user_id, skill_id)
);

CREATE TABLE skill_execution_plans (
    tenant_id TEXT COLLATE "C" NOT NULL,
    user_id TEXT COLLATE "C" NOT NULL,
    id TEXT COLLATE "C" NOT NULL,
    created_at BIGINT NOT NULL,
    doc JSONB NOT NULL,
    PRIMARY KEY (tenant_id, user_id, id)
);
CREATE INDEX idx_plans_created ON skill_execution_plans (tenant_id, user_id, created_at, id);

-- A step's lease: the worker that claimed it and until when (milliseconds since the
-- epoch); an expired lease may be claimed again.
CREATE TABLE skill_working_memory (
    tenant_id TEXT COLLATE "C" NOT NULL,
    user_id TEXT COLLATE "C" NOT NULL,
    plan_id TEXT COLLATE "C" NOT NULL,
    step_number BIGINT NOT NULL CHECK (step_number >= 0),
    status TEXT NOT NULL,
    lease_owner TEXT,
    lease_expires BIGINT,
    doc JSONB NOT NULL,
    PRIMARY KEY (tenant_id, user_id, plan_id, step_number),
    FOREIGN KEY (tenant_id, user_id, plan_id)
        REFERENCES skill_execution_plans (tenant_id, user_id, id) ON DELETE CASCADE
);

CREATE TABLE memory_episodes (
    tenant_id TEXT COLLATE "C" NOT NULL,
    user_id TEXT COLLATE "C" NOT NULL,
    id TEXT COLLATE "C" NOT NULL,
    doc JSONB NOT NULL,
    PRIMARY KEY (tenant_id, user_id, id)
);

CREATE TABLE memory_facts (
    tenant_id TEXT COLLATE "C" NOT NULL,
    user_id TEXT COLLATE "C" NOT NULL,
    id TEXT COLLATE "C" NOT NULL,
    doc JSONB NOT NULL,
    PRIMARY KEY (tenant_id, user_id, id)
);

CREATE TABLE memory_procedures (
    tenant_id TEXT COLLATE "C" NOT NULL,
    user_id TEXT COLLATE "C" NOT NULL,
    task_type TEXT COLLATE "C" NOT NULL,
    skill_sequence JSONB NOT NULL,
    doc JSONB NOT NULL,
    PRIMARY KEY (tenant_id, user_id, task_type, skill_sequence)
);

CREATE TABLE memory_preferences (
    tenant_id TEXT COLLATE "C" NOT NULL,
    user_id TEXT COLLATE "C" NOT NULL,
    context TEXT COLLATE "C" NOT NULL,
    key TEXT COLLATE "C" NOT NULL,
    doc JSONB NOT NULL,
    PRIMARY KEY (tenant_id, user_id, context, key)
);

CREATE TABLE skill_packages (
    tenant_id TEXT COLLATE "C" NOT NULL,
    id TEXT COLLATE "C" NOT NULL,
    name TEXT COLLATE "C" NOT NULL,
    skill_id TEXT COLLATE "C" NOT NULL,
    doc JSONB NOT NULL,
    PRIMARY KEY (tenant_id, id),
    UNIQUE (tenant_id, name),
    UNIQUE (tenant_id, skill_id)
);

CREATE TABLE skill_package_versions (
    tenant_id TEXT COLLATE "C" NOT NULL,
    package_id TEXT COLLATE "C" NOT NULL,
    version TEXT COLLATE "C" NOT NULL,
    doc JSONB NOT NULL,
    PRIMARY KEY (tenant_id, package_id, version),
    FOREIGN KEY (tenant_id, package_id) REFERENCES skill_packages (tenant_id, id) ON DELETE CASCADE
);

CREATE TABLE skill_package_ratings (
    tenant_id TEXT COLLATE "C" NOT NULL,
    package_id TEXT COLLATE "C" NOT NULL,
    version TEXT COLLATE "C" NOT NULL,
    user_id TEXT COLLATE "C" NOT NULL,
    stars INTEGER NOT NULL CHECK (stars BETWEEN 1 AND 5),
    PRIMARY KEY (tenant_id, package_id, version, user_id),
    FOREIGN KEY (tenant_id, package_id, version)
        REFERENCES skill_package_versions (tenant_id, package_id, version) ON DELETE CASCADE
);

-- `seq` keeps recording order, which breaks ties between equal timestamps.
CREATE TABLE learning_sequences (
    seq BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    tenant_id TEXT COLLATE "C" NOT NULL,
    id TEXT COLLATE "C" NOT NULL,
    recorded_at BIGINT NOT NULL,
    doc JSONB NOT NULL,
    UNIQUE (tenant_id, id)
);
CREATE INDEX idx_learning_sequences_time ON learning_sequences (tenant_id, recorded_at, seq);

CREATE TABLE learning_patterns (
    tenant_id TEXT COLLATE "C" NOT NULL,
    id TEXT COLLATE "C" NOT NULL,
    pattern_hash TEXT COLLATE "C" NOT NULL,
    doc JSONB NOT NULL,
    PRIMARY KEY (tenant_id, id),
    UNIQUE (tenant_id, pattern_hash)
);

CREATE TABLE permission_rules (
    tenant_id TEXT COLLATE "C" NOT NULL,
    id TEXT COLLATE "C" NOT NULL,
    doc JSONB NOT NULL,
    PRIMARY KEY (tenant_id, id)
);
"#;

/// Version 2: approval requests and their decisions, one per (tenant, execution), under the
/// same tenant policy as every table.
const V2: &str = r#"
CREATE TABLE approvals (
    tenant_id TEXT COLLATE "C" NOT NULL,
    execution_id TEXT COLLATE "C" NOT NULL,
    status TEXT COLLATE "C" NOT NULL CHECK (status IN ('pending', 'approved', 'refused')),
    requested_at BIGINT NOT NULL,
    doc JSONB NOT NULL,
    PRIMARY KEY (tenant_id, execution_id)
);
CREATE INDEX idx_approvals_time ON approvals (tenant_id, requested_at, execution_id);
ALTER TABLE approvals ENABLE ROW LEVEL SECURITY;
ALTER TABLE approvals FORCE ROW LEVEL SECURITY;
CREATE POLICY approvals_tenant ON approvals
    USING (tenant_id = current_setting('skills.tenant', true))
    WITH CHECK (tenant_id = current_setting('skills.tenant', true));
"#;

/// Version 3: what resolving an agent's skills reads, without a row per file, a document
/// parsed per assignment or a heap visit per assignment (issue 20's bound).
///
/// * `skill_assignments.enabled`, `.priority`, `.auto_inject`: generated from the
///   document (always equal to it, whoever writes the row), under the covering index
///   `idx_skill_assignments_reach`, so the assignments reaching an agent are read from the
///   index (index-only once the table's pages are all-visible). It replaces
///   `idx_skill_assignments_target`, its key.
/// * `skills.name` ... `.metadata_layer`: the fields resolve lists, generated from the
///   document (so always equal to it) and stored, so reading them is a column fetch, not a
///   JSON operator per field per row (13 of them cost the server about 0.45 ms of a 1.3 ms
///   resolution of 228 skills). The `SKILL.md` text is thereby stored twice (document and
///   column; both compressed by TOAST when large).
/// * `skills.file_paths`, `.file_types`, `.manifest`: each skill's file listing (paths and
///   types, by path) and its `skill.json` text, kept by a trigger on `skill_files` (every
///   insert, update and delete, a skill's cascade included, whoever runs it). The store's
///   own writes cannot leave it stale (they are serialised per tenant); SQL run beside the
///   store can: two concurrent READ COMMITTED transactions adding files to one skill may
///   each relist from a snapshot without the other's file, and `TRUNCATE` fires no row
///   trigger. A file write costs a relist of its skill, so a skill's n files written one by
///   one cost the square of n (a statement-level trigger is the known next step). The
///   trigger runs as the writer, under the same tenant policy
///   (it can only reach the skill of the row it was fired by, which is the writer's tenant),
///   and with the schema's search path pinned, so a table of the same name elsewhere on the
///   path cannot stand in for `skills`. A file write recomputes its skill's listing from the
///   `(tenant_id, skill_id, relative_path)` index: the same order of work as the size check
///   every file write already makes over the skill's files.
const V3: &str = r#"
ALTER TABLE skill_assignments
    ADD COLUMN enabled BOOLEAN GENERATED ALWAYS AS ((doc->>'enabled')::BOOLEAN) STORED,
    ADD COLUMN priority BIGINT GENERATED ALWAYS AS ((doc->>'priority')::BIGINT) STORED,
    ADD COLUMN auto_inject BOOLEAN GENERATED ALWAYS AS ((doc->>'auto_inject')::BOOLEAN) STORED;
DROP INDEX idx_skill_assignments_target;
CREATE INDEX idx_skill_assignments_reach ON skill_assignments (tenant_id, scope, scope_id)
    INCLUDE (enabled, skill_id, priority, auto_inject);

ALTER TABLE skills
    ADD COLUMN name TEXT GENERATED ALWAYS AS (doc->>'name') STORED,
    ADD COLUMN description TEXT GENERATED ALWAYS AS (doc->>'description') STORED,
    ADD COLUMN source_kind TEXT GENERATED ALWAYS AS (doc->>'source_kind') STORED,
    ADD COLUMN plugin_id TEXT GENERATED ALWAYS AS (doc->>'plugin_id') STORED,
    ADD COLUMN content TEXT GENERATED ALWAYS AS (doc->>'content') STORED,
    ADD COLUMN is_directory BOOLEAN GENERATED ALWAYS AS ((doc->>'is_directory')::BOOLEAN) STORED,
    ADD COLUMN version TEXT GENERATED ALWAYS AS (doc->>'version') STORED,
    ADD COLUMN tags JSONB GENERATED ALWAYS AS (doc->'tags') STORED,
    ADD COLUMN requires_tools JSONB GENERATED ALWAYS AS (doc->'requires_tools') STORED,
    ADD COLUMN trust_level TEXT GENERATED ALWAYS AS (doc->>'trust_level') STORED,
    ADD COLUMN metadata_status JSONB GENERATED ALWAYS AS (doc->'metadata'->'status') STORED,
    ADD COLUMN metadata_layer JSONB GENERATED ALWAYS AS (doc->'metadata'->'layer') STORED,
    ADD COLUMN file_paths TEXT[] NOT NULL DEFAULT '{}',
    ADD COLUMN file_types TEXT[] NOT NULL DEFAULT '{}',
    ADD COLUMN manifest TEXT;

CREATE FUNCTION skill_files_relist(t TEXT, sid TEXT) RETURNS void LANGUAGE sql
SET search_path FROM CURRENT AS $$
    UPDATE skills s SET (file_paths, file_types, manifest) = (
        SELECT COALESCE(array_agg(f.relative_path ORDER BY f.relative_path), '{}'),
               COALESCE(array_agg(f.doc->>'content_type' ORDER BY f.relative_path), '{}'),
               max(f.doc->>'content') FILTER (WHERE f.relative_path = 'skill.json')
        FROM skill_files f WHERE f.tenant_id = t AND f.skill_id = sid)
    WHERE s.tenant_id = t AND s.id = sid;
$$;
CREATE FUNCTION skill_files_listing() RETURNS trigger LANGUAGE plpgsql
SET search_path FROM CURRENT AS $$
BEGIN
    IF TG_OP = 'DELETE' THEN
        PERFORM skill_files_relist(OLD.tenant_id, OLD.skill_id);
    ELSIF TG_OP = 'INSERT' THEN
        PERFORM skill_files_relist(NEW.tenant_id, NEW.skill_id);
    ELSE
        PERFORM skill_files_relist(NEW.tenant_id, NEW.skill_id);
        IF (OLD.tenant_id, OLD.skill_id) IS DISTINCT FROM (NEW.tenant_id, NEW.skill_id) THEN
            PERFORM skill_files_relist(OLD.tenant_id, OLD.skill_id);
        END IF;
    END IF;
    RETURN NULL;
END;
$$;
CREATE TRIGGER skill_files_listing AFTER INSERT OR UPDATE OR DELETE ON skill_files
    FOR EACH ROW EXECUTE FUNCTION skill_files_listing();

-- The listings of the files stored before this version, of every tenant: the migration
-- sets no tenant, so under the forced policies it would see no row at all (the owner is
-- subject to them); the tables are exempted for this statement alone, inside the
-- migration's transaction, and forced again before it commits.
ALTER TABLE skills NO FORCE ROW LEVEL SECURITY;
ALTER TABLE skill_files NO FORCE ROW LEVEL SECURITY;
UPDATE skills s SET (file_paths, file_types, manifest) = (
    SELECT COALESCE(array_agg(f.relative_path ORDER BY f.relative_path), '{}'),
           COALESCE(array_agg(f.doc->>'content_type' ORDER BY f.relative_path), '{}'),
           max(f.doc->>'content') FILTER (WHERE f.relative_path = 'skill.json')
    FROM skill_files f WHERE f.tenant_id = s.tenant_id AND f.skill_id = s.id);
ALTER TABLE skills FORCE ROW LEVEL SECURITY;
ALTER TABLE skill_files FORCE ROW LEVEL SECURITY;
"#;

/// Version 4: what lets a resolution reuse the skills it decoded before
/// (`skills_store_traits::StampedProjections`).
///
/// * `skills.stamp`, drawn from the sequence `skill_stamps` by a BEFORE trigger on every
///   insert and update, whatever the statement set (the store's writes, the file-listing
///   trigger's, SQL beside the store): no two versions of any row share a stamp (a
///   sequence never hands a value out twice; adding the column stamps the stored rows one
///   by one). `idx_skills_reach` lets a resolution read which of its skills are enabled and
///   at which stamp from the index alone (once the pages are all-visible).
/// * `skill_catalog_versions`: one row per tenant, set to a fresh `skill_stamps` value by
///   an AFTER trigger on every insert, update and delete of the tenant's skills, in the
///   writing transaction: while a tenant's version is unchanged, none of its skill rows
///   changed, so a resolution that finds the version it last saw needs no stamps. The row
///   is locked until the writer commits, so a tenant's skill writers queue on it (the
///   store's writers already queue on the tenant's advisory lock; SQL beside the store
///   that writes skills of two tenants in one transaction can deadlock with another such
///   writer, and PostgreSQL then aborts one). Under the tenant policy like every table.
///
/// The price: every skill write also draws from the sequence and upserts the version row,
/// and a skill update is never a HOT update (`stamp` is indexed). A role other than the
/// store's own that writes skills needs `USAGE` on `skill_stamps` and `INSERT`/`UPDATE` on
/// `skill_catalog_versions`.
const V4: &str = r#"
CREATE SEQUENCE skill_stamps AS BIGINT;
ALTER TABLE skills ADD COLUMN stamp BIGINT NOT NULL DEFAULT nextval('skill_stamps');
CREATE FUNCTION skills_restamp() RETURNS trigger LANGUAGE plpgsql
SET search_path FROM CURRENT AS $$
BEGIN
    NEW.stamp := nextval('skill_stamps');
    RETURN NEW;
END;
$$;
CREATE TRIGGER skills_restamp BEFORE INSERT OR UPDATE ON skills
    FOR EACH ROW EXECUTE FUNCTION skills_restamp();
CREATE UNIQUE INDEX idx_skills_reach ON skills (tenant_id, id) INCLUDE (enabled, stamp);

CREATE TABLE skill_catalog_versions (
    tenant_id TEXT COLLATE "C" PRIMARY KEY,
    version BIGINT NOT NULL
);
CREATE FUNCTION skill_catalog_bump(t TEXT) RETURNS void LANGUAGE sql
SET search_path FROM CURRENT AS $$
    INSERT INTO skill_catalog_versions (tenant_id, version) VALUES (t, nextval('skill_stamps'))
    ON CONFLICT (tenant_id) DO UPDATE SET version = EXCLUDED.version;
$$;
CREATE FUNCTION skills_catalog_changed() RETURNS trigger LANGUAGE plpgsql
SET search_path FROM CURRENT AS $$
BEGIN
    IF TG_OP = 'DELETE' THEN
        PERFORM skill_catalog_bump(OLD.tenant_id);
    ELSE
        PERFORM skill_catalog_bump(NEW.tenant_id);
        IF TG_OP = 'UPDATE' AND OLD.tenant_id IS DISTINCT FROM NEW.tenant_id THEN
            PERFORM skill_catalog_bump(OLD.tenant_id);
        END IF;
    END IF;
    RETURN NULL;
END;
$$;
CREATE TRIGGER skills_catalog_changed AFTER INSERT OR UPDATE OR DELETE ON skills
    FOR EACH ROW EXECUTE FUNCTION skills_catalog_changed();
ALTER TABLE skill_catalog_versions ENABLE ROW LEVEL SECURITY;
ALTER TABLE skill_catalog_versions FORCE ROW LEVEL SECURITY;
CREATE POLICY skill_catalog_versions_tenant ON skill_catalog_versions
    USING (tenant_id = current_setting('skills.tenant', true))
    WITH CHECK (tenant_id = current_setting('skills.tenant', true));

-- Every tenant holding skills gets its first version (the migration sets no tenant, so
-- the table is exempted for this statement alone, as in version 3, and forced again).
ALTER TABLE skills NO FORCE ROW LEVEL SECURITY;
ALTER TABLE skill_catalog_versions NO FORCE ROW LEVEL SECURITY;
INSERT INTO skill_catalog_versions (tenant_id, version)
    SELECT tenant_id, nextval('skill_stamps') FROM (SELECT DISTINCT tenant_id FROM skills) t;
ALTER TABLE skills FORCE ROW LEVEL SECURITY;
ALTER TABLE skill_catalog_versions FORCE ROW LEVEL SECURITY;
"#;

/// Version 5: the operator's hold (`SkillRecord::held`, in the document): `skills.held`,
/// generated from it (a document written before the field existed is not held), and a
/// CHECK that a held row is not enabled. The store keeps a held skill disabled on every
/// write; the CHECK refuses SQL beside the store that would enable one (through the
/// `enabled` column, or a document saying so). Adding the column rewrites the table once.
const V5: &str = r#"
ALTER TABLE skills
    ADD COLUMN held BOOLEAN GENERATED ALWAYS AS (COALESCE((doc->>'held')::BOOLEAN, false)) STORED,
    ADD CONSTRAINT skills_held_is_disabled
        CHECK (NOT (held AND (enabled OR COALESCE((doc->>'enabled')::BOOLEAN, false))));
"#;

/// The row-level security statements for one table.
fn tenant_policy(table: &str) -> String {
    format!(
        "ALTER TABLE {table} ENABLE ROW LEVEL SECURITY;\n\
         ALTER TABLE {table} FORCE ROW LEVEL SECURITY;\n\
         CREATE POLICY {table}_tenant ON {table}\n\
         USING (tenant_id = current_setting('skills.tenant', true))\n\
         WITH CHECK (tenant_id = current_setting('skills.tenant', true));\n"
    )
}

/// Whether `name` is a plain lowercase identifier (safe to splice into SQL unquoted).
pub(crate) fn is_identifier(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_lowercase() || c == '_')
        && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
        && name.len() <= 63
}

/// Creates `schema` if asked, then applies the missing migrations in one transaction under
/// the migration lock. Returns the version found before migrating.
pub(crate) async fn migrate(conn: &mut Object, schema: Option<&str>) -> Result<i64, Error> {
    let op = "migrating the schema";
    let pg = |e| Error::postgres(op, e);
    let tx = conn.transaction().await.map_err(pg)?;
    let lock_name = schema.unwrap_or("public");
    tx.execute(
        "SELECT pg_advisory_xact_lock($1, hashtext($2))",
        &[&MIGRATION_LOCK, &lock_name],
    )
    .await
    .map_err(pg)?;
    if let Some(schema) = schema {
        // `is_identifier` was checked when the options were built.
        tx.batch_execute(&format!("CREATE SCHEMA IF NOT EXISTS {schema}"))
            .await
            .map_err(pg)?;
    }
    tx.batch_execute(
        "CREATE TABLE IF NOT EXISTS schema_migrations (\
             version BIGINT PRIMARY KEY, \
             name TEXT NOT NULL, \
             applied_at TIMESTAMPTZ NOT NULL DEFAULT now())",
    )
    .await
    .map_err(pg)?;
    let found: i64 = tx
        .query_one(
            "SELECT COALESCE(MAX(version), 0) FROM schema_migrations",
            &[],
        )
        .await
        .map_err(pg)?
        .try_get(0)
        .map_err(pg)?;
    if found > LATEST {
        return Err(Error::SchemaTooNew {
            found,
            supported: LATEST,
        });
    }
    for (index, (name, sql)) in MIGRATIONS.iter().enumerate() {
        let version = index as i64 + 1;
        if version <= found {
            continue;
        }
        tx.batch_execute(sql).await.map_err(pg)?;
        if version == 1 {
            let policies: String = TENANT_TABLES.iter().map(|t| tenant_policy(t)).collect();
            tx.batch_execute(&policies).await.map_err(pg)?;
        }
        tx.execute(
            "INSERT INTO schema_migrations (version, name) VALUES ($1, $2)",
            &[&version, name],
        )
        .await
        .map_err(pg)?;
    }
    tx.commit().await.map_err(pg)?;
    Ok(found)
}
