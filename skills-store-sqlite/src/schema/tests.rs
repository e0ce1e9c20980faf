//! The schema's migrations, applied one by one on in-memory databases.

use super::*;

#[test]
fn every_migration_applies_in_order_and_reopening_applies_none() {
    let mut conn = Connection::open_in_memory().unwrap();
    for target in 1..=LATEST {
        migrate_to(&mut conn, target).unwrap();
        assert_eq!(version(&conn).unwrap(), target);
    }
    migrate_to(&mut conn, LATEST).unwrap();
    assert_eq!(version(&conn).unwrap(), LATEST);
}

#[test]
fn the_audit_log_refuses_updates_and_deletes() {
    let mut conn = Connection::open_in_memory().unwrap();
    migrate_to(&mut conn, LATEST).unwrap();
    conn.execute_batch(
        "INSERT INTO skill_audit_log VALUES ('t', 'c', 1, 0, 'id', 0, 'u', 's', 'p', 'l', \
         NULL, NULL, NULL, NULL, '[]', '[]', 0, '[]', 'in', NULL, NULL, 1, NULL, 'null', \
         '[]', 'g', 'h')",
    )
    .unwrap();
    let update = conn.execute("UPDATE skill_audit_log SET entry_hash = 'x'", []);
    assert!(update.unwrap_err().to_string().contains("append-only"));
    let delete = conn.execute("DELETE FROM skill_audit_log", []);
    assert!(delete.unwrap_err().to_string().contains("append-only"));
}

/// A version-3 file gains the package and learning tables, keeps its rows, and the new
/// tables enforce their rules in SQL itself: ratings of 1 to 5 stars only, and deleting a
/// package deletes its versions and their ratings.
#[test]
fn version_4_adds_packages_with_cascades_and_checks() {
    let mut conn = Connection::open_in_memory().unwrap();
    conn.pragma_update(None, "foreign_keys", true).unwrap();
    migrate_to(&mut conn, 3).unwrap();
    conn.execute_batch(
        "INSERT INTO memory_preferences VALUES ('p', 't', 'u', 'c', 'k', '1', 0, 0)",
    )
    .unwrap();
    migrate_to(&mut conn, 4).unwrap();
    conn.execute_batch(
        "INSERT INTO skill_packages VALUES ('p1', 't', 's1', 'pdf', '{}', '1.0.0', \
         'community', 'd', 'clean', NULL, 0, 0);
         INSERT INTO skill_package_versions VALUES ('v1', 't', 'p1', '1.0.0', 'd', 'clean', \
         '{}', '[]', '[]', '[]', 'null', NULL, NULL, NULL, 0, 0, NULL);
         INSERT INTO skill_package_ratings VALUES ('t', 'p1', '1.0.0', 'alice', 5, 0);",
    )
    .unwrap();
    let six = conn.execute(
        "INSERT INTO skill_package_ratings VALUES ('t', 'p1', '1.0.0', 'bob', 6, 0)",
        [],
    );
    assert!(six.is_err(), "stars outside 1 to 5 are refused");
    let orphan = conn.execute(
        "INSERT INTO skill_package_ratings VALUES ('t', 'p1', '9.9.9', 'bob', 3, 0)",
        [],
    );
    assert!(orphan.is_err(), "a rating needs its version");
    let other_tenant = conn.execute(
        "INSERT INTO skill_package_versions VALUES ('v2', 'x', 'p1', '2.0.0', 'd', 'c', \
         '{}', '[]', '[]', '[]', 'null', NULL, NULL, NULL, 0, 0, NULL)",
        [],
    );
    assert!(
        other_tenant.is_err(),
        "a version cannot join another tenant's package"
    );
    conn.execute("DELETE FROM skill_packages WHERE id = 'p1'", [])
        .unwrap();
    let count = |table: &str| -> i64 {
        conn.query_row(&format!("SELECT COUNT(*) FROM {table}"), [], |r| r.get(0))
            .unwrap()
    };
    assert_eq!(count("skill_package_versions"), 0);
    assert_eq!(count("skill_package_ratings"), 0);
    assert_eq!(count("memory_preferences"), 1, "version-3 rows are kept");
}

/// A version-6 file keeps its working memory (class and sources included) through the
/// rebuild of version 7, which accepts the new statuses, still refuses unknown words and
/// still cascades from its plan.
#[test]
fn version_7_keeps_working_memory_and_accepts_the_new_statuses() {
    let mut conn = Connection::open_in_memory().unwrap();
    conn.pragma_update(None, "foreign_keys", true).unwrap();
    migrate_to(&mut conn, 6).unwrap();
    conn.execute_batch(
        "INSERT INTO skill_execution_plans (id, tenant_id, user_id, task_description, \
         skills_planned_json, dependency_graph_json, parallel_groups_json, risk_level, \
         created_at, updated_at) VALUES ('p', 't', 'u', 'task', '[]', '{}', '[]', 'low', 0, 0);
         INSERT INTO skill_working_memory (id, tenant_id, user_id, plan_id, step_number, \
         skill_id, status, summary, artifacts_json, extracted_facts_json, \
         next_step_hints_json, created_at, updated_at, data_class, sources_json) VALUES \
         ('w1', 't', 'u', 'p', 1, 'pdf', 'failed', 'boom', '[]', '[]', '[]', 1, 2, \
         'confidential', '[\"crm_deal\"]');",
    )
    .unwrap();
    let denied = "INSERT INTO skill_working_memory (id, tenant_id, user_id, plan_id, \
         step_number, skill_id, status, artifacts_json, extracted_facts_json, \
         next_step_hints_json, created_at, updated_at) VALUES ('w2', 't', 'u', 'p', 2, \
         'pdf', 'denied', '[]', '[]', '[]', 0, 0)";
    assert!(
        conn.execute(denied, []).is_err(),
        "version 6 refuses `denied`"
    );
    migrate_to(&mut conn, 7).unwrap();
    let kept: (String, String, Option<String>, String) = conn
        .query_row(
            "SELECT status, summary, data_class, sources_json FROM skill_working_memory \
             WHERE id = 'w1'",
            [],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
        )
        .unwrap();
    assert_eq!(
        kept,
        (
            "failed".to_owned(),
            "boom".to_owned(),
            Some("confidential".to_owned()),
            "[\"crm_deal\"]".to_owned()
        )
    );
    conn.execute(denied, []).unwrap();
    for (n, word) in [(3, "skipped"), (4, "cancelled")] {
        conn.execute(
            "INSERT INTO skill_working_memory (id, tenant_id, user_id, plan_id, \
             step_number, skill_id, status, artifacts_json, extracted_facts_json, \
             next_step_hints_json, created_at, updated_at) VALUES (?1, 't', 'u', 'p', ?2, \
             'pdf', ?3, '[]', '[]', '[]', 0, 0)",
            rusqlite::params![format!("w{n}"), n, word],
        )
        .unwrap();
    }
    let unknown = conn.execute(
        "INSERT INTO skill_working_memory (id, tenant_id, user_id, plan_id, step_number, \
         skill_id, status, artifacts_json, extracted_facts_json, next_step_hints_json, \
         created_at, updated_at) VALUES ('w9', 't', 'u', 'p', 9, 'pdf', 'done', '[]', '[]', \
         '[]', 0, 0)",
        [],
    );
    assert!(unknown.is_err(), "unknown words are still refused");
    let twice = conn.execute(
        "INSERT INTO skill_working_memory (id, tenant_id, user_id, plan_id, step_number, \
         skill_id, status, artifacts_json, extracted_facts_json, next_step_hints_json, \
         created_at, updated_at) VALUES ('w8', 't', 'u', 'p', 1, 'pdf', 'failed', '[]', \
         '[]', '[]', 0, 0)",
        [],
    );
    assert!(twice.is_err(), "one entry per step number, as before");
    conn.execute("DELETE FROM skill_execution_plans WHERE id = 'p'", [])
        .unwrap();
    let left: i64 = conn
        .query_row("SELECT COUNT(*) FROM skill_working_memory", [], |r| {
            r.get(0)
        })
        .unwrap();
    assert_eq!(left, 0, "steps still cascade with their plan");
}

#[test]
fn a_negative_version_is_refused() {
    let mut conn = Connection::open_in_memory().unwrap();
    conn.pragma_update(None, "user_version", -1).unwrap();
    assert!(matches!(
        migrate_to(&mut conn, LATEST),
        Err(Error::UnknownSchema { found: -1 })
    ));
}

#[test]
fn the_page_cache_is_sized_as_asked() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("cache.sqlite3");
    for kib in [64, crate::DEFAULT_CACHE_KIB] {
        let conn = open(
            Some(&path),
            Synchronous::Normal,
            Duration::from_secs(1),
            kib,
        )
        .unwrap();
        let size: i64 = conn
            .pragma_query_value(None, "cache_size", |row| row.get(0))
            .unwrap();
        assert_eq!(size, -i64::from(kib), "negative: KiB");
    }
}

/// Version 10's listing columns: filled for the files a version-9 file already holds, then
/// kept by the triggers through SQL run beside the store too (a path renamed, a type
/// changed, a file moved to another skill, a file deleted, a skill deleted with its
/// files), per tenant: the same skill id and path in another tenant never mix in.
#[test]
fn version_10_listings_are_backfilled_and_kept_by_triggers() {
    let mut conn = Connection::open_in_memory().unwrap();
    conn.pragma_update(None, "foreign_keys", true).unwrap();
    migrate_to(&mut conn, 9).unwrap();
    let skill = |tenant: &str, id: &str| {
        format!(
            "INSERT INTO skills (id, tenant_id, name, slug, source_kind, content, checksum, \
             created_at, updated_at) VALUES ('{tenant}-{id}', '{tenant}', 'n', '{id}', \
             'admin', 'c', 'x', 0, 0);"
        )
    };
    let file = |tenant: &str, id: &str, skill: &str, path: &str, text: &str| {
        format!(
            "INSERT INTO skill_files VALUES ('{tenant}-{id}', '{tenant}', '{tenant}-{skill}', \
             '{path}', '{text}', 'text/plain', 1, 'x', 0, 0);"
        )
    };
    let mut setup = String::new();
    for tenant in ["t1", "t2"] {
        setup += &skill(tenant, "s1");
        setup += &skill(tenant, "s2");
        setup += &file(tenant, "f1", "s1", "z.md", "z");
        setup += &file(tenant, "f2", "s1", "skill.json", "{\"layer\": 1}");
        setup += &file(tenant, "f3", "s1", "B.md", "b");
    }
    conn.execute_batch(&setup).unwrap();
    migrate_to(&mut conn, 10).unwrap();
    let listing = |conn: &Connection, id: &str| -> (String, Option<String>) {
        conn.query_row(
            "SELECT files_json, manifest FROM skills WHERE id = ?1",
            [id],
            |row| Ok((row.get(0)?, row.get(1)?)),
        )
        .unwrap()
    };
    let backfilled = (
        r#"[["B.md","text/plain"],["skill.json","text/plain"],["z.md","text/plain"]]"#.to_owned(),
        Some("{\"layer\": 1}".to_owned()),
    );
    assert_eq!(listing(&conn, "t1-s1"), backfilled);
    assert_eq!(listing(&conn, "t1-s2"), ("[]".to_owned(), None));

    conn.execute_batch(
        "UPDATE skill_files SET relative_path = 'a.md', content_type = 'text/x' WHERE id = 't1-f1';
         UPDATE skill_files SET content = '{}' WHERE id = 't1-f2';",
    )
    .unwrap();
    assert_eq!(
        listing(&conn, "t1-s1"),
        (
            r#"[["B.md","text/plain"],["a.md","text/x"],["skill.json","text/plain"]]"#.to_owned(),
            Some("{}".to_owned())
        )
    );
    // Moved to the other skill: it leaves one listing and joins the other.
    conn.execute_batch("UPDATE skill_files SET skill_id = 't1-s2' WHERE id = 't1-f2'")
        .unwrap();
    assert_eq!(
        listing(&conn, "t1-s1"),
        (
            r#"[["B.md","text/plain"],["a.md","text/x"]]"#.to_owned(),
            None
        )
    );
    assert_eq!(
        listing(&conn, "t1-s2"),
        (
            r#"[["skill.json","text/plain"]]"#.to_owned(),
            Some("{}".to_owned())
        )
    );
    conn.execute_batch("DELETE FROM skill_files WHERE id = 't1-f3'")
        .unwrap();
    assert_eq!(
        listing(&conn, "t1-s1"),
        (r#"[["a.md","text/x"]]"#.to_owned(), None)
    );
    // A skill deleted with its files (the cascade fires the triggers on a skill that is
    // gone), then the other tenant, untouched throughout.
    conn.execute_batch("DELETE FROM skills WHERE id = 't1-s1'")
        .unwrap();
    let files: i64 = conn
        .query_row(
            "SELECT COUNT(*) FROM skill_files WHERE skill_id = 't1-s1'",
            [],
            |row| row.get(0),
        )
        .unwrap();
    assert_eq!(files, 0);
    assert_eq!(listing(&conn, "t2-s1"), backfilled);
    assert_eq!(listing(&conn, "t2-s2"), ("[]".to_owned(), None));
}

/// Resolve's assignment lookup reads the covering index alone (no table visit per
/// assignment), in both statements, and the stamp query reads the skills from their
/// covering index too: the plans name the covering indexes.
#[test]
fn resolve_reads_assignments_and_stamps_from_covering_indexes() {
    let mut conn = Connection::open_in_memory().unwrap();
    migrate_to(&mut conn, LATEST).unwrap();
    let plan = |sql: &str| -> Vec<String> {
        conn.prepare(&format!("EXPLAIN QUERY PLAN {sql}"))
            .unwrap()
            .query_map(["t", "a", "team"], |row| row.get::<_, String>(3))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap()
    };
    for sql in [
        crate::skills::resolvable::SKILLS,
        crate::skills::resolvable::REACHED,
    ] {
        let plan = plan(sql);
        let covering = plan
            .iter()
            .filter(|step| step.contains("COVERING INDEX idx_skill_assignments_reach"))
            .count();
        assert_eq!(covering, 3, "{plan:#?}");
    }
    let plan = plan(crate::skills::resolvable::REACHED);
    assert!(
        plan.iter()
            .any(|step| step.contains("COVERING INDEX idx_skills_reach")),
        "{plan:#?}"
    );
}

/// Version 11's stamps: the rows a version-10 file holds get distinct stamps, and every
/// later write restamps its row with a value no version of any row had before, whoever
/// writes (raw SQL, a file-listing trigger, a delete and an insert of the same id), with
/// recursive triggers on or off. A stale decoded skill could be served if a write kept a
/// stamp.
#[test]
fn version_11_stamps_every_version_of_a_skill_row_once() {
    for recursive in [false, true] {
        let mut conn = Connection::open_in_memory().unwrap();
        conn.pragma_update(None, "foreign_keys", true).unwrap();
        conn.pragma_update(None, "recursive_triggers", recursive)
            .unwrap();
        migrate_to(&mut conn, 10).unwrap();
        let insert = |id: &str| {
            format!(
                "INSERT INTO skills (id, tenant_id, name, slug, source_kind, content, checksum, \
                 created_at, updated_at) VALUES ('{id}', 't', 'n', '{id}', 'admin', 'c', 'x', \
                 0, 0);"
            )
        };
        conn.execute_batch(&(insert("s1") + &insert("s2"))).unwrap();
        migrate_to(&mut conn, 11).unwrap();
        let stamp = |conn: &Connection, id: &str| -> i64 {
            conn.query_row("SELECT stamp FROM skills WHERE id = ?1", [id], |row| {
                row.get(0)
            })
            .unwrap()
        };
        let mut seen = vec![stamp(&conn, "s1"), stamp(&conn, "s2")];
        assert!(seen.iter().all(|s| *s > 0), "{seen:?}");
        assert_ne!(seen[0], seen[1]);
        let mut expect_new = |conn: &Connection, id: &str, sql: &str| {
            conn.execute_batch(sql).unwrap();
            let now = stamp(conn, id);
            assert!(!seen.contains(&now), "{sql}: stamp {now} reused ({seen:?})");
            seen.push(now);
        };
        expect_new(
            &conn,
            "s1",
            "UPDATE skills SET trust_level = 'core' WHERE id = 's1'",
        );
        expect_new(
            &conn,
            "s1",
            "UPDATE skills SET enabled = enabled WHERE id = 's1'",
        );
        // Updates that write a stamp of their own (the next one, one ahead, an old one,
        // zero as an upsert's `excluded.stamp` would) are restamped from the counter, and
        // the counter's next stamp is still new.
        for own in ["stamp + 1", "stamp + 2", "1", "0"] {
            expect_new(
                &conn,
                "s1",
                &format!("UPDATE skills SET content = 'c{own}', stamp = {own} WHERE id = 's1'"),
            );
            expect_new(
                &conn,
                "s1",
                "UPDATE skills SET content = 'again' WHERE id = 's1'",
            );
        }
        expect_new(
            &conn,
            "s1",
            "INSERT INTO skill_files VALUES ('f1', 't', 's1', 'a.md', 'a', 'text/plain', 1, \
             'x', 0, 0);",
        );
        expect_new(
            &conn,
            "s1",
            "UPDATE skill_files SET content_type = 'text/x' WHERE id = 'f1'",
        );
        expect_new(&conn, "s1", "DELETE FROM skill_files WHERE id = 'f1'");
        // Deleted and recreated with the same id: still a new stamp.
        expect_new(
            &conn,
            "s2",
            &format!("DELETE FROM skills WHERE id = 's2'; {}", insert("s2")),
        );
        // An insert that names a stamp is restamped.
        expect_new(
            &conn,
            "s3",
            "INSERT INTO skills (id, tenant_id, name, slug, source_kind, content, checksum, \
             created_at, updated_at, stamp) VALUES ('s3', 't', 'n', 's3', 'admin', 'c', 'x', \
             0, 0, 1);",
        );
    }
}

/// Version 12's hold: the rows a version-11 file holds are not held, and a held row cannot
/// be enabled, not even by SQL beside the store (the store keeps it disabled itself; this
/// is what stops everyone else).
#[test]
fn version_12_keeps_a_held_row_disabled() {
    let mut conn = Connection::open_in_memory().unwrap();
    migrate_to(&mut conn, 11).unwrap();
    conn.execute_batch(
        "INSERT INTO skills (id, tenant_id, name, slug, source_kind, content, checksum, \
         created_at, updated_at) VALUES ('s1', 't', 'n', 's1', 'admin', 'c', 'x', 0, 0);",
    )
    .unwrap();
    migrate_to(&mut conn, 12).unwrap();
    let state = |conn: &Connection| -> (i64, i64) {
        conn.query_row(
            "SELECT held, enabled FROM skills WHERE id = 's1'",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap()
    };
    assert_eq!(state(&conn), (0, 1), "a stored row is not held");
    let enabled_and_held = conn.execute("UPDATE skills SET held = 1 WHERE id = 's1'", []);
    assert!(enabled_and_held.is_err(), "an enabled row was held");
    conn.execute_batch("UPDATE skills SET held = 1, enabled = 0 WHERE id = 's1'")
        .unwrap();
    let enable = conn.execute("UPDATE skills SET enabled = 1 WHERE id = 's1'", []);
    assert!(enable.is_err(), "a held row was enabled from SQL");
    assert_eq!(state(&conn), (1, 0));
    let not_a_flag = conn.execute("UPDATE skills SET held = 2 WHERE id = 's1'", []);
    assert!(not_a_flag.is_err());
    conn.execute_batch("UPDATE skills SET held = 0, enabled = 1 WHERE id = 's1'")
        .unwrap();
    assert_eq!(state(&conn), (0, 1), "lifted and enabled in one step");
}
