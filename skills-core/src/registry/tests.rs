//! The registry's tests: registration, initialization order, health, native names, focus.

use super::*;
use async_trait::async_trait;
use futures::executor::block_on;
use std::sync::Mutex;

struct Probe {
    name: &'static str,
    layer: Option<u8>,
    deps: Vec<String>,
    fail: bool,
    health: HealthStatus,
    log: Arc<Mutex<Vec<String>>>,
}

#[async_trait]
impl NativeSkill for Probe {
    fn name(&self) -> &str {
        self.name
    }
    fn layer(&self) -> Option<u8> {
        self.layer
    }
    fn dependencies(&self) -> Vec<String> {
        self.deps.clone()
    }
    async fn initialize(&self) -> Result<(), BoxError> {
        self.log.lock().unwrap().push(self.name.to_owned());
        if self.fail {
            Err("boom".into())
        } else {
            Ok(())
        }
    }
    async fn health_check(&self) -> HealthStatus {
        self.health.clone()
    }
}

fn probe(
    log: &Arc<Mutex<Vec<String>>>,
    name: &'static str,
    layer: u8,
    deps: &[&str],
    fail: bool,
) -> Arc<Probe> {
    Arc::new(Probe {
        name,
        layer: Some(layer),
        deps: deps.iter().map(|d| (*d).to_owned()).collect(),
        fail,
        health: HealthStatus::Healthy,
        log: Arc::clone(log),
    })
}

#[test]
fn duplicates_are_refused() {
    let log = Arc::default();
    let mut registry = SkillRegistry::default();
    registry
        .register_native(probe(&log, "a", 3, &[], false))
        .unwrap();
    let err = registry
        .register_native(probe(&log, "a", 3, &[], false))
        .unwrap_err();
    assert!(matches!(err, Error::DuplicateSkill { name } if name == "a"));
    assert_eq!(registry.len(), 1);
    assert!(registry.remove("a").is_ok());
    assert!(matches!(
        registry.remove("a"),
        Err(Error::UnknownSkill { .. })
    ));
}

#[test]
fn initialization_follows_dependencies_and_stops_at_failures() {
    let log = Arc::new(Mutex::new(Vec::new()));
    let mut registry = SkillRegistry::default();
    for skill in [
        probe(&log, "schedule", 4, &["research"], false),
        probe(&log, "research", 3, &["llm"], false),
        probe(&log, "llm", 2, &["api_client"], true),
        probe(&log, "api_client", 1, &[], false),
        probe(&log, "guard", 0, &[], false),
    ] {
        registry.register_native(skill).unwrap();
    }
    let report = block_on(registry.initialize());
    // Ties go to the lower layer.
    assert_eq!(report.ready, vec!["guard", "api_client"]);
    assert_eq!(
        report.not_ready.iter().collect::<Vec<_>>(),
        vec!["llm", "research", "schedule"]
    );
    // `llm` ran and failed; nothing that depends on it was started.
    assert_eq!(*log.lock().unwrap(), vec!["guard", "api_client", "llm"]);
    let rules: Vec<Rule> = report.diagnostics.iter().map(|d| d.rule).collect();
    assert_eq!(
        rules,
        vec![
            Rule::InitializationFailed,
            Rule::DependencyUnavailable,
            Rule::DependencyUnavailable
        ]
    );
}

#[test]
fn health_is_the_worst_of_all() {
    let log: Arc<Mutex<Vec<String>>> = Arc::default();
    let mut registry = SkillRegistry::default();
    assert_eq!(block_on(registry.health()).overall, HealthStatus::Healthy);
    let statuses = [
        ("a", HealthStatus::Healthy),
        ("b", HealthStatus::Degraded("slow".into())),
        ("c", HealthStatus::Healthy),
    ];
    for (name, health) in statuses {
        registry
            .register_native(Arc::new(Probe {
                name,
                layer: None,
                deps: vec![],
                fail: false,
                health,
                log: Arc::clone(&log),
            }))
            .unwrap();
    }
    let report = block_on(registry.health());
    assert_eq!(report.overall, HealthStatus::Degraded("slow".into()));
    registry
        .register_native(probe(&log, "d", 3, &["ghost"], false))
        .unwrap();
    let report = block_on(registry.health());
    assert!(matches!(report.overall, HealthStatus::Unhealthy(_)));
    assert!(matches!(report.skills["d"], HealthStatus::Unhealthy(_)));
}

#[test]
fn native_names_outside_the_naming_agreement_are_refused() {
    let log = Arc::default();
    let mut registry = SkillRegistry::default();
    for bad in [
        "InputGuard",
        "input guard",
        "../guard",
        "guard-",
        "ｇｕａｒｄ",
        " guard",
        "",
    ] {
        let err = registry
            .register_native(probe(&log, bad, 0, &[], false))
            .unwrap_err();
        match err {
            Error::InvalidName { name, diagnostics } => {
                assert_eq!(name, bad);
                assert!(!diagnostics.is_empty(), "{bad:?}");
            }
            other => panic!("{bad:?}: {other}"),
        }
    }
    assert!(registry.is_empty());
    for good in ["input_guard", "input-guard", "guard"] {
        registry
            .register_native(probe(&log, good, 0, &[], false))
            .unwrap();
    }
    assert_eq!(registry.len(), 3);
}

struct Focused {
    name: &'static str,
    focuses: &'static [&'static str],
    status: Option<SkillStatus>,
}

#[async_trait]
impl NativeSkill for Focused {
    fn name(&self) -> &str {
        self.name
    }
    fn status(&self) -> Option<SkillStatus> {
        self.status
    }
    fn focus_affinity(&self) -> Vec<String> {
        self.focuses.iter().map(|f| (*f).to_owned()).collect()
    }
}

#[test]
fn skills_for_focus_lists_loaded_and_native_skills_by_name() {
    let mut registry = SkillRegistry::default();
    let dir = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../examples/skills/web-research"
    );
    let web = Skill::load(dir, &crate::LoadOptions::default()).unwrap();
    assert_eq!(web.focus_affinity(), ["journalist", "data"]);
    assert_eq!(web.status(), Some(SkillStatus::Active));
    registry.register_skill(web).unwrap();
    for (name, focuses, status) in [
        ("fact_check", &["journalist"][..], None),
        (
            "research",
            &["journalist"][..],
            Some(SkillStatus::Deprecated),
        ),
        ("market_data", &["trader"][..], None),
        (
            "knowledge_graph",
            &["data", "journalist"][..],
            Some(SkillStatus::Stub),
        ),
    ] {
        registry
            .register_native(Arc::new(Focused {
                name,
                focuses,
                status,
            }))
            .unwrap();
    }
    let names = |focus: &str| -> Vec<String> {
        registry
            .skills_for_focus(focus)
            .iter()
            .map(|s| s.name().to_owned())
            .collect()
    };
    assert_eq!(
        names("journalist"),
        ["fact_check", "knowledge_graph", "research", "web-research"]
    );
    assert_eq!(names(" DATA "), ["knowledge_graph", "web-research"]);
    assert_eq!(names("trader"), ["market_data"]);
    assert!(names("creative").is_empty());
    assert!(names("").is_empty());
    // Listed with their status, so a caller can show the marks.
    let research = registry.get("research").unwrap();
    assert_eq!(research.status(), Some(SkillStatus::Deprecated));
}
