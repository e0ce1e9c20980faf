//! Tenancy in the database: row-level security keyed on the tenant.
//!
//! **Threat:** SQL that forgets (or is made to drop) its `tenant_id = $1` condition, run on
//! the store's own connections and role, reads or changes another tenant's rows.
//! **Guarantee:** every table's forced policy admits only rows whose `tenant_id` is the
//! transaction's `skills.tenant`; these tests connect as the store's role and try.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use skills_store_traits::audit::{AuditRecord, AuditStore};
use skills_store_traits::{NewSkill, SkillStore, TenantId};

/// Seeds tenant B's rows through the store; returns (store schema, B's skill id).
async fn seeded(url: &str) -> (String, String) {
    let schema = common::fresh_schema();
    let store = common::open(url, &schema, 2).await;
    let b = TenantId::new("tenant-b");
    let skill = store
        .create_skill(
            &b,
            NewSkill::new("Secret", "secret", "# B only\n").with_file("f.md", "x"),
        )
        .await
        .unwrap();
    let mut record = AuditRecord::new("bob", &skill.id, "b/secret", "core", "in", true);
    record.entry_hash = "h1".into();
    store.append(&b, "bob", record, None).await.unwrap();
    (schema, skill.id)
}

#[tokio::test]
async fn the_store_role_is_subject_to_row_level_security() {
    let Some(url) = common::url() else { return };
    let client = common::raw(&url, "public").await;
    let row = client
        .query_one(
            "SELECT rolsuper, rolbypassrls FROM pg_roles WHERE rolname = current_user",
            &[],
        )
        .await
        .unwrap();
    let (superuser, bypass): (bool, bool) = (row.get(0), row.get(1));
    assert!(
        !superuser && !bypass,
        "SKILLS_PG_URL must name an ordinary role: superusers and BYPASSRLS roles skip \
         every row-level security policy"
    );
}

/// A transaction for tenant A reads none of B's rows, even with no tenant condition at all.
#[tokio::test]
async fn tenant_a_cannot_read_tenant_b_rows() {
    let Some(url) = common::url() else { return };
    let (schema, skill_id) = seeded(&url).await;
    let mut client = common::raw(&url, &schema).await;
    let tx = client.transaction().await.unwrap();
    tx.execute("SELECT set_config('skills.tenant', 'tenant-a', true)", &[])
        .await
        .unwrap();
    for table in [
        "skills",
        "skill_files",
        "skill_audit_log",
        "skill_catalog_versions",
    ] {
        let n: i64 = tx
            .query_one(&format!("SELECT COUNT(*) FROM {table}"), &[])
            .await
            .unwrap()
            .get(0);
        assert_eq!(n, 0, "tenant A sees {n} rows of {table}");
    }
    let by_id = tx
        .query_opt("SELECT doc FROM skills WHERE id = $1", &[&skill_id])
        .await
        .unwrap();
    assert!(by_id.is_none());
    tx.rollback().await.unwrap();
    // With no tenant set at all, nothing is visible either.
    let n: i64 = client
        .query_one("SELECT COUNT(*) FROM skills", &[])
        .await
        .unwrap()
        .get(0);
    assert_eq!(n, 0, "a connection without a tenant sees rows");
    // Tenant B itself sees its rows (the policy is not simply denying everything).
    let tx = client.transaction().await.unwrap();
    tx.execute("SELECT set_config('skills.tenant', 'tenant-b', true)", &[])
        .await
        .unwrap();
    let n: i64 = tx
        .query_one("SELECT COUNT(*) FROM skills", &[])
        .await
        .unwrap()
        .get(0);
    assert_eq!(n, 1);
}

/// A transaction for tenant A can neither change nor delete B's rows, nor write a row in
/// B's name; the refused insert carries SQLSTATE 42501.
#[tokio::test]
async fn tenant_a_cannot_write_tenant_b_rows() {
    let Some(url) = common::url() else { return };
    let (schema, skill_id) = seeded(&url).await;
    let mut client = common::raw(&url, &schema).await;
    let tx = client.transaction().await.unwrap();
    tx.execute("SELECT set_config('skills.tenant', 'tenant-a', true)", &[])
        .await
        .unwrap();
    let updated = tx
        .execute(
            "UPDATE skills SET doc = jsonb_set(doc, '{name}', '\"pwned\"') WHERE id = $1",
            &[&skill_id],
        )
        .await
        .unwrap();
    assert_eq!(updated, 0, "tenant A updated B's skill");
    let deleted = tx.execute("DELETE FROM skill_files", &[]).await.unwrap();
    assert_eq!(deleted, 0, "tenant A deleted B's files");
    let forged = tx
        .execute(
            "INSERT INTO permission_rules (tenant_id, id, doc) VALUES ('tenant-b', 'r', '{}')",
            &[],
        )
        .await
        .unwrap_err();
    assert_eq!(forged.code().map(|c| c.code()), Some("42501"), "{forged}");
    drop(tx);
    // B's catalog version can be neither rewound (which could let B's readers serve skills
    // they decoded at an older version) nor planted.
    let tx = client.transaction().await.unwrap();
    tx.execute("SELECT set_config('skills.tenant', 'tenant-a', true)", &[])
        .await
        .unwrap();
    let rewound = tx
        .execute("UPDATE skill_catalog_versions SET version = 1", &[])
        .await
        .unwrap();
    assert_eq!(rewound, 0, "tenant A rewrote B's catalog version");
    let planted = tx
        .execute(
            "INSERT INTO skill_catalog_versions (tenant_id, version) VALUES ('tenant-b', 1)",
            &[],
        )
        .await
        .unwrap_err();
    assert_eq!(planted.code().map(|c| c.code()), Some("42501"), "{planted}");
    drop(tx);
    // Moving a row of A's into B is refused as well.
    let tx = client.transaction().await.unwrap();
    tx.execute("SELECT set_config('skills.tenant', 'tenant-a', true)", &[])
        .await
        .unwrap();
    tx.execute(
        "INSERT INTO permission_rules (tenant_id, id, doc) VALUES ('tenant-a', 'r', '{}')",
        &[],
    )
    .await
    .unwrap();
    let moved = tx
        .execute("UPDATE permission_rules SET tenant_id = 'tenant-b'", &[])
        .await
        .unwrap_err();
    assert_eq!(moved.code().map(|c| c.code()), Some("42501"), "{moved}");
    drop(tx);
    // B's rows are untouched.
    let store = common::open(&url, &schema, 1).await;
    let b = TenantId::new("tenant-b");
    let skill = store
        .find_skill_by_id(&b, &skill_id)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(skill.name, "Secret");
    assert_eq!(
        store.list_skill_files(&b, &skill_id).await.unwrap().len(),
        1
    );
}

/// The audit log is append-only even for the role that owns it.
#[tokio::test]
async fn the_audit_log_cannot_be_rewritten() {
    let Some(url) = common::url() else { return };
    let (schema, _) = seeded(&url).await;
    let mut client = common::raw(&url, &schema).await;
    let tx = client.transaction().await.unwrap();
    tx.execute("SELECT set_config('skills.tenant', 'tenant-b', true)", &[])
        .await
        .unwrap();
    let rewrite = tx
        .execute("UPDATE skill_audit_log SET entry_hash = 'forged'", &[])
        .await
        .unwrap_err();
    assert_eq!(rewrite.code().map(|c| c.code()), Some("42501"), "{rewrite}");
}

/// The per-skill file listing resolve reads (schema version 3, kept by a trigger on
/// `skill_files`) follows SQL run beside the store, and only within the writer's tenant:
/// tenant A, writing a skill with the very id of B's and a `skill.json` under it, changes
/// only its own listing; B renaming a path in SQL sees its own listing follow.
#[tokio::test]
async fn file_listings_follow_sql_writes_within_their_tenant() {
    use skills_store_traits::NewAssignment;
    let Some(url) = common::url() else { return };
    let (schema, skill_id) = seeded(&url).await;
    let store = common::open(&url, &schema, 1).await;
    let b = TenantId::new("tenant-b");
    store
        .create_assignment(&b, NewAssignment::global(&skill_id))
        .await
        .unwrap();
    let listing = |tenant: &'static str| {
        let store = &store;
        async move {
            let got = store
                .resolvable_skills(&TenantId::new(tenant), "agent", None)
                .await
                .unwrap();
            got.into_iter()
                .map(|s| {
                    let paths: Vec<String> = s.files.into_iter().map(|f| f.relative_path).collect();
                    (s.id, paths, s.manifest)
                })
                .collect::<Vec<_>>()
        }
    };
    assert_eq!(
        listing("tenant-b").await,
        [(skill_id.clone(), vec!["f.md".to_owned()], None)]
    );
    let mut client = common::raw(&url, &schema).await;
    let tx = client.transaction().await.unwrap();
    tx.execute("SELECT set_config('skills.tenant', 'tenant-a', true)", &[])
        .await
        .unwrap();
    tx.execute(
        "INSERT INTO skills (tenant_id, id, slug, category, enabled, content_bytes, doc) \
         SELECT 'tenant-a', $1, 'secret', 'general', true, 0, \
         jsonb_build_object('name', 'A', 'source_kind', 'admin', 'content', '# A', \
         'is_directory', false, 'tags', '[]'::jsonb, 'requires_tools', '[]'::jsonb, \
         'metadata', '{}'::jsonb)",
        &[&skill_id],
    )
    .await
    .unwrap();
    tx.execute(
        "INSERT INTO skill_files (tenant_id, id, skill_id, relative_path, size_bytes, doc) \
         VALUES ('tenant-a', 'fa', $1, 'skill.json', 2, \
         '{\"content\": \"{}\", \"content_type\": \"application/json\"}')",
        &[&skill_id],
    )
    .await
    .unwrap();
    let own: Vec<String> = tx
        .query_one("SELECT file_paths FROM skills WHERE id = $1", &[&skill_id])
        .await
        .unwrap()
        .get(0);
    assert_eq!(own, ["skill.json"], "A's own listing follows its insert");
    tx.commit().await.unwrap();
    assert_eq!(
        listing("tenant-b").await,
        [(skill_id.clone(), vec!["f.md".to_owned()], None)],
        "B's listing is untouched by A's writes"
    );
    let tx = client.transaction().await.unwrap();
    tx.execute("SELECT set_config('skills.tenant', 'tenant-b', true)", &[])
        .await
        .unwrap();
    let renamed = tx
        .execute(
            "UPDATE skill_files SET relative_path = 'skill.json', \
             doc = jsonb_set(doc, '{content}', '\"{\\\"layer\\\": 2}\"') WHERE skill_id = $1",
            &[&skill_id],
        )
        .await
        .unwrap();
    assert_eq!(renamed, 1);
    tx.commit().await.unwrap();
    assert_eq!(
        listing("tenant-b").await,
        [(
            skill_id.clone(),
            vec!["skill.json".to_owned()],
            Some("{\"layer\": 2}".to_owned())
        )]
    );
}
