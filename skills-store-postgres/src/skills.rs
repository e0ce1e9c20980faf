//! [`SkillStore`] on PostgreSQL: skills, their files and their assignments.
//!
//! Writes take the tenant's skills lock (a transaction-scoped advisory lock), so a
//! check-then-write (slug free, total size within limits) sees every committed write of
//! every process; the UNIQUE constraints stand behind the checks.

use std::collections::{BTreeMap, BTreeSet};

use async_trait::async_trait;
use skills_store_traits::validate;
use skills_store_traits::{
    AgentSkills, AssignedSkill, AssignmentFilter, AssignmentScope, AssignmentUpdate, Error,
    NewAssignment, NewSkill, NewSkillFile, ResolvableSkill, Result, SkillAssignment,
    SkillFileRecord, SkillFileUpdate, SkillFilter, SkillRecord, SkillSourceKind, SkillStore,
    SkillUpdate, TenantId, Timestamp, assignment_order, new_id,
};
use tokio_postgres::types::Json;

use crate::PostgresStore;
use crate::agent_skills;
use crate::db::{Domain, Shared, Tx, doc};
use crate::error::Outcome;

const SKILL: &str = "SELECT doc FROM skills WHERE tenant_id = $1 AND id = $2";

fn file_record(skill_id: &str, file: &NewSkillFile, now: Timestamp) -> Outcome<SkillFileRecord> {
    Ok(record!(SkillFileRecord {
        "id": new_id(),
        "skill_id": skill_id.to_owned(),
        "relative_path": file.path.clone(),
        "content": file.content.clone(),
        "content_type": validate::content_type_or_guess(file),
        "size_bytes": file.content.len() as u64,
        "checksum": validate::checksum(&file.content),
        "created_at": now,
        "updated_at": now,
    }))
}

fn bytes(n: u64) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

async fn save_skill(tx: &Tx, skill: &SkillRecord) -> Outcome<()> {
    tx.execute(
        "INSERT INTO skills (tenant_id, id, slug, category, enabled, content_bytes, doc) \
         VALUES ($1, $2, $3, $4, $5, $6, $7) \
         ON CONFLICT (tenant_id, id) DO UPDATE SET slug = EXCLUDED.slug, \
         category = EXCLUDED.category, enabled = EXCLUDED.enabled, \
         content_bytes = EXCLUDED.content_bytes, doc = EXCLUDED.doc",
        &[
            &skill.tenant.as_str(),
            &skill.id,
            &skill.slug,
            &skill.category,
            &skill.enabled,
            &bytes(skill.content.len() as u64),
            &Json(skill),
        ],
    )
    .await?;
    Ok(())
}

async fn save_file(tx: &Tx, tenant: &str, file: &SkillFileRecord) -> Outcome<()> {
    tx.execute(
        "INSERT INTO skill_files (tenant_id, id, skill_id, relative_path, size_bytes, doc) \
         VALUES ($1, $2, $3, $4, $5, $6) \
         ON CONFLICT (tenant_id, id) DO UPDATE SET size_bytes = EXCLUDED.size_bytes, \
         doc = EXCLUDED.doc",
        &[
            &tenant,
            &file.id,
            &file.skill_id,
            &file.relative_path,
            &bytes(file.size_bytes),
            &Json(file),
        ],
    )
    .await?;
    Ok(())
}

async fn files_bytes(tx: &Tx, tenant: &str, skill_id: &str) -> Outcome<u64> {
    let row = tx
        .query_opt(
            "SELECT COALESCE(SUM(size_bytes), 0)::BIGINT FROM skill_files \
             WHERE tenant_id = $1 AND skill_id = $2",
            &[&tenant, &skill_id],
        )
        .await?;
    let total: i64 = match row {
        Some(row) => row.try_get(0)?,
        None => 0,
    };
    Ok(u64::try_from(total).unwrap_or(0))
}

async fn replace_files(
    tx: &Tx,
    tenant: &str,
    skill_id: &str,
    files: &[NewSkillFile],
    now: Timestamp,
) -> Outcome<()> {
    tx.execute(
        "DELETE FROM skill_files WHERE tenant_id = $1 AND skill_id = $2",
        &[&tenant, &skill_id],
    )
    .await?;
    for file in files {
        save_file(tx, tenant, &file_record(skill_id, file, now)?).await?;
    }
    Ok(())
}

async fn touch(tx: &Tx, tenant: &str, skill_id: &str, now: Timestamp) -> Outcome<()> {
    if let Some(mut skill) = tx
        .doc_opt::<SkillRecord>(SKILL, &[&tenant, &skill_id])
        .await?
    {
        skill.updated_at = now;
        save_skill(tx, &skill).await?;
    }
    Ok(())
}

async fn create_skill(s: Shared, tenant: TenantId, new: NewSkill) -> Outcome<SkillRecord> {
    validate::check_new_skill(&new, &s.limits)?;
    let t = tenant.as_str();
    let tx = s.begin_write(t, Domain::Skills, "").await?;
    let now = s.clock.now();
    let taken = tx
        .query_opt(
            "SELECT 1 FROM skills WHERE tenant_id = $1 AND slug = $2",
            &[&t, &new.slug],
        )
        .await?;
    if taken.is_some() {
        return Err(Error::conflict("skill slug", new.slug).into());
    }
    let record = record!(SkillRecord {
        "id": new_id(),
        "tenant": tenant.clone(),
        "checksum": validate::checksum(&new.content),
        "name": new.name,
        "slug": new.slug,
        "description": new.description,
        "category": new.category.unwrap_or_else(|| "general".to_owned()),
        "source_kind": new.source_kind.unwrap_or(SkillSourceKind::Admin),
        "plugin_id": new.plugin_id,
        "source_ref": new.source_ref,
        "content": new.content,
        "is_directory": new.is_directory || !new.files.is_empty(),
        "version": new.version,
        "enabled": new.enabled.unwrap_or(true),
        "held": false,
        "tags": new.tags,
        "requires_tools": new.requires_tools,
        "metadata": new.metadata,
        "trust_level": new.trust_level,
        "created_at": now,
        "updated_at": now,
    });
    save_skill(&tx, &record).await?;
    for file in &new.files {
        save_file(&tx, t, &file_record(&record.id, file, now)?).await?;
    }
    tx.commit().await?;
    Ok(record)
}

async fn find_by_id(s: Shared, tenant: TenantId, id: String) -> Outcome<Option<SkillRecord>> {
    let tx = s.begin(tenant.as_str()).await?;
    tx.doc_opt(SKILL, &[&tenant.as_str(), &id]).await
}

async fn find_by_slug(s: Shared, tenant: TenantId, slug: String) -> Outcome<Option<SkillRecord>> {
    let tx = s.begin(tenant.as_str()).await?;
    tx.doc_opt(
        "SELECT doc FROM skills WHERE tenant_id = $1 AND slug = $2",
        &[&tenant.as_str(), &slug],
    )
    .await
}

async fn list_skills(
    s: Shared,
    tenant: TenantId,
    filter: SkillFilter,
) -> Outcome<Vec<SkillRecord>> {
    let tx = s.begin(tenant.as_str()).await?;
    // Category, `enabled`, tags (containment) and plugin narrow in SQL, so only candidates
    // are decoded; the filter's own `matches` decides, so the semantics are the in-memory
    // store's exactly (the text search, Unicode lowercase, is only applied there).
    let category = filter.category.clone();
    let enabled = filter.enabled;
    let tags = Json(&filter.tags);
    let plugin = filter.plugin_id.clone();
    let skills: Vec<SkillRecord> = tx
        .docs(
            "SELECT doc FROM skills WHERE tenant_id = $1 \
             AND ($2::TEXT IS NULL OR category = $2) \
             AND ($3::BOOLEAN IS NULL OR enabled = $3) \
             AND doc->'tags' @> $4::JSONB \
             AND ($5::TEXT IS NULL OR doc->>'plugin_id' = $5) ORDER BY slug",
            &[&tenant.as_str(), &category, &enabled, &tags, &plugin],
        )
        .await?;
    Ok(skills.into_iter().filter(|s| filter.matches(s)).collect())
}

async fn update_skill(
    s: Shared,
    tenant: TenantId,
    id: String,
    update: SkillUpdate,
) -> Outcome<Option<SkillRecord>> {
    let t = tenant.as_str();
    let tx = s.begin_write(t, Domain::Skills, "").await?;
    let now = s.clock.now();
    let Some(mut skill) = tx.doc_opt::<SkillRecord>(SKILL, &[&t, &id]).await? else {
        return Ok(None);
    };
    let files = files_bytes(&tx, t, &id).await?;
    validate::check_update(&update, skill.content.len() as u64, files, &s.limits)?;
    if let Some(files) = &update.files {
        replace_files(&tx, t, &id, files, now).await?;
    }
    update.apply_to(&mut skill, now);
    save_skill(&tx, &skill).await?;
    tx.commit().await?;
    Ok(Some(skill))
}

async fn delete_skill(s: Shared, tenant: TenantId, id: String) -> Outcome<bool> {
    let t = tenant.as_str();
    let tx = s.begin_write(t, Domain::Skills, "").await?;
    // Files and assignments go with it (ON DELETE CASCADE).
    let deleted = tx
        .execute(
            "DELETE FROM skills WHERE tenant_id = $1 AND id = $2",
            &[&t, &id],
        )
        .await?;
    tx.commit().await?;
    Ok(deleted > 0)
}

async fn is_slug_available(
    s: Shared,
    tenant: TenantId,
    slug: String,
    exclude: Option<String>,
) -> Outcome<bool> {
    let tx = s.begin(tenant.as_str()).await?;
    let holder = tx
        .query_opt(
            "SELECT id FROM skills WHERE tenant_id = $1 AND slug = $2",
            &[&tenant.as_str(), &slug],
        )
        .await?;
    Ok(match holder {
        None => true,
        Some(row) => exclude.as_deref() == Some(row.try_get::<_, &str>(0)?),
    })
}

async fn create_file(
    s: Shared,
    tenant: TenantId,
    skill_id: String,
    file: NewSkillFile,
) -> Outcome<SkillFileRecord> {
    validate::check_file("file", &file, &s.limits)?;
    let t = tenant.as_str();
    let tx = s.begin_write(t, Domain::Skills, "").await?;
    let now = s.clock.now();
    let Some(mut skill) = tx.doc_opt::<SkillRecord>(SKILL, &[&t, &skill_id]).await? else {
        return Err(Error::not_found("skill", skill_id).into());
    };
    let clash = tx
        .query_opt(
            "SELECT 1 FROM skill_files WHERE tenant_id = $1 AND skill_id = $2 \
             AND relative_path = $3",
            &[&t, &skill_id, &file.path],
        )
        .await?;
    if clash.is_some() {
        return Err(Error::conflict("skill file", file.path).into());
    }
    let total = (skill.content.len() as u64)
        .saturating_add(files_bytes(&tx, t, &skill_id).await?)
        .saturating_add(file.content.len() as u64);
    validate::check_total("file.content", total, &s.limits)?;
    let record = file_record(&skill_id, &file, now)?;
    save_file(&tx, t, &record).await?;
    skill.is_directory = true;
    skill.updated_at = now;
    save_skill(&tx, &skill).await?;
    tx.commit().await?;
    Ok(record)
}

async fn list_files(
    s: Shared,
    tenant: TenantId,
    skill_id: String,
) -> Outcome<Vec<SkillFileRecord>> {
    let tx = s.begin(tenant.as_str()).await?;
    tx.docs(
        "SELECT doc FROM skill_files WHERE tenant_id = $1 AND skill_id = $2 \
         ORDER BY relative_path",
        &[&tenant.as_str(), &skill_id],
    )
    .await
}

async fn find_file(
    s: Shared,
    tenant: TenantId,
    skill_id: String,
    path: String,
) -> Outcome<Option<SkillFileRecord>> {
    let tx = s.begin(tenant.as_str()).await?;
    tx.doc_opt(
        "SELECT doc FROM skill_files WHERE tenant_id = $1 AND skill_id = $2 \
         AND relative_path = $3",
        &[&tenant.as_str(), &skill_id, &path],
    )
    .await
}

async fn update_file(
    s: Shared,
    tenant: TenantId,
    file_id: String,
    update: SkillFileUpdate,
) -> Outcome<Option<SkillFileRecord>> {
    let t = tenant.as_str();
    let tx = s.begin_write(t, Domain::Skills, "").await?;
    let now = s.clock.now();
    let Some(mut file) = tx
        .doc_opt::<SkillFileRecord>(
            "SELECT doc FROM skill_files WHERE tenant_id = $1 AND id = $2",
            &[&t, &file_id],
        )
        .await?
    else {
        return Ok(None);
    };
    if let Some(content) = &update.content {
        let probe = NewSkillFile::new(file.relative_path.clone(), content.clone());
        validate::check_file("file", &probe, &s.limits)?;
        let content_bytes = tx
            .doc_opt::<SkillRecord>(SKILL, &[&t, &file.skill_id])
            .await?
            .map_or(0, |skill| skill.content.len() as u64);
        let others = files_bytes(&tx, t, &file.skill_id)
            .await?
            .saturating_sub(file.size_bytes);
        let total = content_bytes
            .saturating_add(others)
            .saturating_add(content.len() as u64);
        validate::check_total("file.content", total, &s.limits)?;
    }
    if let Some(content) = update.content {
        file.size_bytes = content.len() as u64;
        file.checksum = validate::checksum(&content);
        file.content = content;
    }
    if let Some(content_type) = update.content_type {
        file.content_type = content_type;
    }
    file.updated_at = now;
    save_file(&tx, t, &file).await?;
    touch(&tx, t, &file.skill_id, now).await?;
    tx.commit().await?;
    Ok(Some(file))
}

async fn delete_file(s: Shared, tenant: TenantId, file_id: String) -> Outcome<bool> {
    let t = tenant.as_str();
    let tx = s.begin_write(t, Domain::Skills, "").await?;
    let now = s.clock.now();
    let row = tx
        .query_opt(
            "DELETE FROM skill_files WHERE tenant_id = $1 AND id = $2 RETURNING skill_id",
            &[&t, &file_id],
        )
        .await?;
    let Some(row) = row else {
        return Ok(false);
    };
    let skill_id: String = row.try_get(0)?;
    touch(&tx, t, &skill_id, now).await?;
    tx.commit().await?;
    Ok(true)
}

async fn delete_files_of(s: Shared, tenant: TenantId, skill_id: String) -> Outcome<u64> {
    let t = tenant.as_str();
    let tx = s.begin_write(t, Domain::Skills, "").await?;
    let now = s.clock.now();
    let count = tx
        .execute(
            "DELETE FROM skill_files WHERE tenant_id = $1 AND skill_id = $2",
            &[&t, &skill_id],
        )
        .await?;
    if count > 0 {
        touch(&tx, t, &skill_id, now).await?;
    }
    tx.commit().await?;
    Ok(count)
}

async fn save_assignment(tx: &Tx, a: &SkillAssignment) -> Outcome<()> {
    tx.execute(
        "INSERT INTO skill_assignments (tenant_id, id, skill_id, scope, scope_id, doc) \
         VALUES ($1, $2, $3, $4, $5, $6) \
         ON CONFLICT (tenant_id, id) DO UPDATE SET doc = EXCLUDED.doc",
        &[
            &a.tenant.as_str(),
            &a.id,
            &a.skill_id,
            &a.scope.as_str(),
            &a.scope_id.as_deref().unwrap_or(""),
            &Json(a),
        ],
    )
    .await?;
    Ok(())
}

async fn create_assignment(
    s: Shared,
    tenant: TenantId,
    new: NewAssignment,
) -> Outcome<SkillAssignment> {
    validate::check_assignment(&new)?;
    let t = tenant.as_str();
    let tx = s.begin_write(t, Domain::Skills, "").await?;
    let now = s.clock.now();
    let Some(skill) = tx
        .doc_opt::<SkillRecord>(SKILL, &[&t, &new.skill_id])
        .await?
    else {
        return Err(Error::not_found("skill", new.skill_id).into());
    };
    let clash = tx
        .query_opt(
            "SELECT 1 FROM skill_assignments WHERE tenant_id = $1 AND skill_id = $2 \
             AND scope = $3 AND scope_id = $4",
            &[
                &t,
                &new.skill_id,
                &new.scope.as_str(),
                &new.scope_id.as_deref().unwrap_or(""),
            ],
        )
        .await?;
    if clash.is_some() {
        return Err(Error::conflict(
            "assignment",
            format!(
                "{} {} {}",
                new.skill_id,
                new.scope.as_str(),
                new.scope_id.as_deref().unwrap_or("-")
            ),
        )
        .into());
    }
    let assignment = record!(SkillAssignment {
        "id": new_id(),
        "tenant": tenant.clone(),
        "skill_id": new.skill_id,
        "skill_slug": skill.slug,
        "scope": new.scope,
        "scope_id": new.scope_id,
        "priority": new.priority,
        "auto_inject": new.auto_inject,
        "enabled": new.enabled,
        "created_at": now,
        "updated_at": now,
    });
    save_assignment(&tx, &assignment).await?;
    tx.commit().await?;
    Ok(assignment)
}

async fn find_assignment(
    s: Shared,
    tenant: TenantId,
    id: String,
) -> Outcome<Option<SkillAssignment>> {
    let tx = s.begin(tenant.as_str()).await?;
    tx.doc_opt(
        "SELECT doc FROM skill_assignments WHERE tenant_id = $1 AND id = $2",
        &[&tenant.as_str(), &id],
    )
    .await
}

async fn list_assignments(
    s: Shared,
    tenant: TenantId,
    filter: AssignmentFilter,
) -> Outcome<Vec<SkillAssignment>> {
    let tx = s.begin(tenant.as_str()).await?;
    let scope = filter.scope.map(AssignmentScope::as_str);
    let mut list: Vec<SkillAssignment> = tx
        .docs(
            "SELECT doc FROM skill_assignments WHERE tenant_id = $1 \
             AND ($2::TEXT IS NULL OR skill_id = $2) \
             AND ($3::TEXT IS NULL OR scope = $3) \
             AND ($4::TEXT IS NULL OR (scope_id = $4 AND scope <> 'global'))",
            &[&tenant.as_str(), &filter.skill_id, &scope, &filter.scope_id],
        )
        .await?;
    list.sort_by(assignment_order);
    Ok(list)
}

async fn assignments_for_agent(
    s: Shared,
    tenant: TenantId,
    agent_id: String,
    team_id: Option<String>,
) -> Outcome<Vec<AssignedSkill>> {
    let tx = s.begin(tenant.as_str()).await?;
    let rows = tx
        .query(
            agent_skills::ASSIGNED,
            &[&tenant.as_str(), &agent_id, &team_id],
        )
        .await?;
    agent_skills::assigned(&rows)
}

async fn update_assignment(
    s: Shared,
    tenant: TenantId,
    id: String,
    update: AssignmentUpdate,
) -> Outcome<Option<SkillAssignment>> {
    let t = tenant.as_str();
    let tx = s.begin_write(t, Domain::Skills, "").await?;
    let now = s.clock.now();
    let Some(mut a) = tx
        .doc_opt::<SkillAssignment>(
            "SELECT doc FROM skill_assignments WHERE tenant_id = $1 AND id = $2",
            &[&t, &id],
        )
        .await?
    else {
        return Ok(None);
    };
    if let Some(enabled) = update.enabled {
        a.enabled = enabled;
    }
    if let Some(priority) = update.priority {
        a.priority = priority;
    }
    if let Some(auto_inject) = update.auto_inject {
        a.auto_inject = auto_inject;
    }
    a.updated_at = now;
    save_assignment(&tx, &a).await?;
    tx.commit().await?;
    Ok(Some(a))
}

async fn delete_assignment(s: Shared, tenant: TenantId, id: String) -> Outcome<bool> {
    let t = tenant.as_str();
    let tx = s.begin_write(t, Domain::Skills, "").await?;
    let deleted = tx
        .execute(
            "DELETE FROM skill_assignments WHERE tenant_id = $1 AND id = $2",
            &[&t, &id],
        )
        .await?;
    tx.commit().await?;
    Ok(deleted > 0)
}

async fn with_counts(s: Shared, tenant: TenantId) -> Outcome<Vec<(SkillRecord, u64)>> {
    let tx = s.begin(tenant.as_str()).await?;
    let rows = tx
        .query(
            "SELECT s.doc, (SELECT COUNT(*) FROM skill_assignments a \
             WHERE a.tenant_id = s.tenant_id AND a.skill_id = s.id) \
             FROM skills s WHERE s.tenant_id = $1 ORDER BY s.slug",
            &[&tenant.as_str()],
        )
        .await?;
    rows.iter()
        .map(|row| {
            let count: i64 = row.try_get(1)?;
            Ok((doc(row)?, u64::try_from(count).unwrap_or(0)))
        })
        .collect()
}

async fn categories(s: Shared, tenant: TenantId) -> Outcome<Vec<String>> {
    let tx = s.begin(tenant.as_str()).await?;
    let rows = tx
        .query(
            "SELECT DISTINCT category FROM skills WHERE tenant_id = $1 ORDER BY category",
            &[&tenant.as_str()],
        )
        .await?;
    rows.iter().map(|row| Ok(row.try_get(0)?)).collect()
}

async fn agent_ids(s: Shared, tenant: TenantId, skill_id: String) -> Outcome<Vec<String>> {
    let tx = s.begin(tenant.as_str()).await?;
    let rows = tx
        .query(
            "SELECT DISTINCT scope_id FROM skill_assignments WHERE tenant_id = $1 \
             AND skill_id = $2 AND scope = 'agent' ORDER BY scope_id",
            &[&tenant.as_str(), &skill_id],
        )
        .await?;
    let agents: BTreeSet<String> = rows
        .iter()
        .map(|row| row.try_get(0))
        .collect::<std::result::Result<_, _>>()?;
    Ok(agents.into_iter().collect())
}

async fn files_for_skills(
    s: Shared,
    tenant: TenantId,
    ids: Vec<String>,
) -> Outcome<BTreeMap<String, Vec<SkillFileRecord>>> {
    let tx = s.begin(tenant.as_str()).await?;
    let files: Vec<SkillFileRecord> = tx
        .docs(
            "SELECT doc FROM skill_files WHERE tenant_id = $1 AND skill_id = ANY($2) \
             ORDER BY skill_id, relative_path",
            &[&tenant.as_str(), &ids],
        )
        .await?;
    Ok(agent_skills::grouped(files))
}

#[async_trait]
impl SkillStore for PostgresStore {
    /// The files of many skills in one `skill_id = ANY($2)` query (the resolver's batch).
    async fn list_files_for_skills(
        &self,
        tenant: &TenantId,
        skill_ids: &[String],
    ) -> Result<BTreeMap<String, Vec<SkillFileRecord>>> {
        let task = files_for_skills(self.shared(), tenant.clone(), skill_ids.to_vec());
        self.call("list_files_for_skills", task).await
    }

    async fn create_skill(&self, tenant: &TenantId, skill: NewSkill) -> Result<SkillRecord> {
        self.call(
            "create_skill",
            create_skill(self.shared(), tenant.clone(), skill),
        )
        .await
    }

    async fn find_skill_by_id(&self, tenant: &TenantId, id: &str) -> Result<Option<SkillRecord>> {
        let task = find_by_id(self.shared(), tenant.clone(), id.to_owned());
        self.call("find_skill_by_id", task).await
    }

    async fn find_skill_by_slug(
        &self,
        tenant: &TenantId,
        slug: &str,
    ) -> Result<Option<SkillRecord>> {
        let task = find_by_slug(self.shared(), tenant.clone(), slug.to_owned());
        self.call("find_skill_by_slug", task).await
    }

    async fn list_skills(
        &self,
        tenant: &TenantId,
        filter: &SkillFilter,
    ) -> Result<Vec<SkillRecord>> {
        let task = list_skills(self.shared(), tenant.clone(), filter.clone());
        self.call("list_skills", task).await
    }

    async fn update_skill(
        &self,
        tenant: &TenantId,
        id: &str,
        update: SkillUpdate,
    ) -> Result<Option<SkillRecord>> {
        let task = update_skill(self.shared(), tenant.clone(), id.to_owned(), update);
        self.call("update_skill", task).await
    }

    async fn delete_skill(&self, tenant: &TenantId, id: &str) -> Result<bool> {
        let task = delete_skill(self.shared(), tenant.clone(), id.to_owned());
        self.call("delete_skill", task).await
    }

    async fn is_slug_available(
        &self,
        tenant: &TenantId,
        slug: &str,
        exclude_id: Option<&str>,
    ) -> Result<bool> {
        let task = is_slug_available(
            self.shared(),
            tenant.clone(),
            slug.to_owned(),
            exclude_id.map(str::to_owned),
        );
        self.call("is_slug_available", task).await
    }

    async fn create_skill_file(
        &self,
        tenant: &TenantId,
        skill_id: &str,
        file: NewSkillFile,
    ) -> Result<SkillFileRecord> {
        let task = create_file(self.shared(), tenant.clone(), skill_id.to_owned(), file);
        self.call("create_skill_file", task).await
    }

    async fn list_skill_files(
        &self,
        tenant: &TenantId,
        skill_id: &str,
    ) -> Result<Vec<SkillFileRecord>> {
        let task = list_files(self.shared(), tenant.clone(), skill_id.to_owned());
        self.call("list_skill_files", task).await
    }

    async fn find_skill_file(
        &self,
        tenant: &TenantId,
        skill_id: &str,
        relative_path: &str,
    ) -> Result<Option<SkillFileRecord>> {
        let task = find_file(
            self.shared(),
            tenant.clone(),
            skill_id.to_owned(),
            relative_path.to_owned(),
        );
        self.call("find_skill_file", task).await
    }

    async fn update_skill_file(
        &self,
        tenant: &TenantId,
        file_id: &str,
        update: SkillFileUpdate,
    ) -> Result<Option<SkillFileRecord>> {
        let task = update_file(self.shared(), tenant.clone(), file_id.to_owned(), update);
        self.call("update_skill_file", task).await
    }

    async fn delete_skill_file(&self, tenant: &TenantId, file_id: &str) -> Result<bool> {
        let task = delete_file(self.shared(), tenant.clone(), file_id.to_owned());
        self.call("delete_skill_file", task).await
    }

    async fn delete_skill_files_by_skill_id(
        &self,
        tenant: &TenantId,
        skill_id: &str,
    ) -> Result<u64> {
        let task = delete_files_of(self.shared(), tenant.clone(), skill_id.to_owned());
        self.call("delete_skill_files_by_skill_id", task).await
    }

    async fn create_assignment(
        &self,
        tenant: &TenantId,
        assignment: NewAssignment,
    ) -> Result<SkillAssignment> {
        let task = create_assignment(self.shared(), tenant.clone(), assignment);
        self.call("create_assignment", task).await
    }

    async fn find_assignment(
        &self,
        tenant: &TenantId,
        id: &str,
    ) -> Result<Option<SkillAssignment>> {
        let task = find_assignment(self.shared(), tenant.clone(), id.to_owned());
        self.call("find_assignment", task).await
    }

    async fn list_assignments(
        &self,
        tenant: &TenantId,
        filter: &AssignmentFilter,
    ) -> Result<Vec<SkillAssignment>> {
        let task = list_assignments(self.shared(), tenant.clone(), filter.clone());
        self.call("list_assignments", task).await
    }

    async fn assignments_for_agent(
        &self,
        tenant: &TenantId,
        agent_id: &str,
        team_id: Option<&str>,
    ) -> Result<Vec<AssignedSkill>> {
        let task = assignments_for_agent(
            self.shared(),
            tenant.clone(),
            agent_id.to_owned(),
            team_id.map(str::to_owned),
        );
        self.call("assignments_for_agent", task).await
    }

    /// Both queries in one `REPEATABLE READ` transaction, sent with its BEGIN and COMMIT in
    /// one round trip.
    async fn assignments_for_agent_with_files(
        &self,
        tenant: &TenantId,
        agent_id: &str,
        team_id: Option<&str>,
    ) -> Result<AgentSkills> {
        let task = agent_skills::read(
            self.shared(),
            tenant.clone(),
            agent_id.to_owned(),
            team_id.map(str::to_owned),
        );
        self.call("assignments_for_agent_with_files", task).await
    }

    /// When the tenant's catalog version is the one every assigned skill was last seen at:
    /// the assignments alone, in one round trip (a `REPEATABLE READ` transaction sent with
    /// its BEGIN and COMMIT). Otherwise the stamps of the skills reaching the agent in one
    /// round trip, and the columns of the skills not held decoded at their stamps in
    /// another, by id.
    async fn resolvable_skills(
        &self,
        tenant: &TenantId,
        agent_id: &str,
        team_id: Option<&str>,
    ) -> Result<Vec<ResolvableSkill>> {
        let team = team_id.map(str::to_owned);
        let projections = &self.shared.projections;
        let key = tenant.as_str();
        if projections.enabled() {
            // The catalog version and the assignments: when no skill row of the tenant
            // changed since every assigned skill was last seen, no skill row is read.
            if projections.has_versions(key) {
                let task = crate::resolvable::assignments(
                    self.shared(),
                    tenant.clone(),
                    agent_id.to_owned(),
                    team.clone(),
                );
                let (version, assignments) = self.call("resolvable_skills", task).await?;
                if let Some(skills) =
                    version.and_then(|v| projections.at_version(key, v, &assignments))
                {
                    return Ok(skills);
                }
            }
            // The stamps: the skills held at theirs are reused, the others read by id.
            let task = crate::resolvable::reached(
                self.shared(),
                tenant.clone(),
                agent_id.to_owned(),
                team.clone(),
            );
            let reached = self.call("resolvable_skills", task).await?;
            // Looked up here, not on the store's runtime: the copies are made and later
            // freed by the caller's thread.
            let lookup = match reached.version {
                Some(version) => {
                    projections.lookup_at_version(key, version, reached.skills, reached.excluded)
                }
                None => projections.lookup(key, reached.skills),
            };
            let fetched = if lookup.is_complete() {
                Vec::new()
            } else {
                let ids = lookup.missing_ids();
                let task = crate::resolvable::by_id(self.shared(), tenant.clone(), ids);
                self.call("resolvable_skills", task).await?
            };
            // `None` when a missing row changed between the two reads: read it all again.
            if let Some(skills) = projections.complete(lookup, fetched) {
                return Ok(skills);
            }
        }
        let task =
            crate::resolvable::read(self.shared(), tenant.clone(), agent_id.to_owned(), team);
        self.call("resolvable_skills", task).await
    }

    async fn update_assignment(
        &self,
        tenant: &TenantId,
        id: &str,
        update: AssignmentUpdate,
    ) -> Result<Option<SkillAssignment>> {
        let task = update_assignment(self.shared(), tenant.clone(), id.to_owned(), update);
        self.call("update_assignment", task).await
    }

    async fn delete_assignment(&self, tenant: &TenantId, id: &str) -> Result<bool> {
        let task = delete_assignment(self.shared(), tenant.clone(), id.to_owned());
        self.call("delete_assignment", task).await
    }

    async fn skills_with_assignment_counts(
        &self,
        tenant: &TenantId,
    ) -> Result<Vec<(SkillRecord, u64)>> {
        let task = with_counts(self.shared(), tenant.clone());
        self.call("skills_with_assignment_counts", task).await
    }

    async fn list_categories(&self, tenant: &TenantId) -> Result<Vec<String>> {
        self.call("list_categories", categories(self.shared(), tenant.clone()))
            .await
    }

    async fn agent_ids_for_skill(&self, tenant: &TenantId, skill_id: &str) -> Result<Vec<String>> {
        let task = agent_ids(self.shared(), tenant.clone(), skill_id.to_owned());
        self.call("agent_ids_for_skill", task).await
    }
}
