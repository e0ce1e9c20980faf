//! Properties of planning over random dependency graphs.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::{HashMap, HashSet};

use futures::executor::block_on;
use proptest::prelude::*;
use skills_orchestrate::Error;
use skills_orchestrate::plan::{
    DEFAULT_STEP_ESTIMATE_MS, ExecutionPlan, Planner, StepSpec, load_plan, save_plan,
};
use skills_store_traits::UserScope;
use skills_store_traits::in_memory::InMemoryPlanStore;

/// `n` steps with edges only from a lower to a higher index (a DAG), listed in `order`.
fn dag() -> impl Strategy<Value = Vec<StepSpec>> {
    (1usize..40)
        .prop_flat_map(|n| {
            let edges = proptest::collection::vec((0..n, 0..n), 0..n * 3);
            let order = Just((0..n).collect::<Vec<_>>()).prop_shuffle();
            (Just(n), edges, order)
        })
        .prop_map(|(n, edges, order)| {
            let mut specs: Vec<StepSpec> = (0..n)
                .map(|i| StepSpec::new(format!("s{i}"), format!("skill{}", i % 3), ""))
                .collect();
            for (a, b) in edges {
                let (low, high) = (a.min(b), a.max(b));
                if low != high {
                    specs[high] = specs[high].clone().after(format!("s{low}"));
                }
            }
            order.into_iter().map(|i| specs[i].clone()).collect()
        })
}

/// `n` steps with edges in any direction (maybe cycles), no self-dependency.
fn any_graph() -> impl Strategy<Value = Vec<StepSpec>> {
    (2usize..25)
        .prop_flat_map(|n| (Just(n), proptest::collection::vec((0..n, 0..n), 0..n * 2)))
        .prop_map(|(n, edges)| {
            let mut specs: Vec<StepSpec> = (0..n)
                .map(|i| StepSpec::new(format!("s{i}"), "skill", ""))
                .collect();
            for (from, to) in edges {
                if from != to {
                    specs[to] = specs[to].clone().after(format!("s{from}"));
                }
            }
            specs
        })
}

fn check_levels(specs: &[StepSpec], plan: &ExecutionPlan) {
    let group_of: HashMap<&str, usize> = plan
        .groups
        .iter()
        .enumerate()
        .flat_map(|(g, ids)| ids.iter().map(move |id| (id.as_str(), g)))
        .collect();
    // The groups partition the steps.
    let listed: usize = plan.groups.iter().map(Vec::len).sum();
    assert_eq!(listed, specs.len());
    assert_eq!(group_of.len(), specs.len());
    assert!(plan.groups.iter().all(|g| !g.is_empty()));
    let given: HashMap<&str, usize> = specs
        .iter()
        .enumerate()
        .map(|(i, s)| (s.id.as_str(), i))
        .collect();
    for spec in specs {
        let group = group_of[spec.id.as_str()];
        // After every dependency, and as early as possible.
        for dep in &spec.depends_on {
            assert!(group > group_of[dep.as_str()], "{} vs {dep}", spec.id);
        }
        if group > 0 {
            assert!(
                spec.depends_on
                    .iter()
                    .any(|d| group_of[d.as_str()] == group - 1)
            );
        } else {
            assert!(spec.depends_on.is_empty());
        }
    }
    // Steps are the groups concatenated, numbered from 1, in the given order within a group.
    let flat: Vec<&String> = plan.groups.iter().flatten().collect();
    let steps: Vec<&String> = plan.steps.iter().map(|s| &s.id).collect();
    assert_eq!(flat, steps);
    for (i, step) in plan.steps.iter().enumerate() {
        assert_eq!(step.number as usize, i + 1);
    }
    for group in &plan.groups {
        assert!(
            group
                .windows(2)
                .all(|w| given[w[0].as_str()] < given[w[1].as_str()])
        );
    }
    assert_eq!(
        plan.estimated_duration_ms,
        plan.groups.len() as u64 * DEFAULT_STEP_ESTIMATE_MS
    );
}

proptest! {
    #[test]
    fn every_step_comes_after_its_dependencies_and_groups_partition_the_steps(specs in dag()) {
        let plan = block_on(Planner::new().plan("t", specs.clone())).unwrap();
        check_levels(&specs, &plan);
        // Transitive dependents are exactly the steps reachable forward.
        let first = &specs[0].id;
        let dependents: HashSet<String> = plan.dependents(first).into_iter().collect();
        for step in &plan.steps {
            if step.depends_on.contains(first) {
                prop_assert!(dependents.contains(&step.id));
            }
        }
        prop_assert!(!dependents.contains(first));
    }

    #[test]
    fn a_cycle_error_names_a_real_cycle(specs in any_graph()) {
        match block_on(Planner::new().plan("t", specs.clone())) {
            Ok(plan) => check_levels(&specs, &plan),
            Err(Error::Cycle { cycle }) => {
                prop_assert!(cycle.len() >= 3);
                prop_assert_eq!(cycle.first(), cycle.last());
                let inner: HashSet<&String> = cycle[..cycle.len() - 1].iter().collect();
                prop_assert_eq!(inner.len(), cycle.len() - 1);
                let deps: HashMap<&str, &Vec<String>> =
                    specs.iter().map(|s| (s.id.as_str(), &s.depends_on)).collect();
                for pair in cycle.windows(2) {
                    // Each step finishes before the next one on the cycle.
                    prop_assert!(deps[pair[1].as_str()].contains(&pair[0]));
                }
                // The first step has the smallest id of its cycle.
                prop_assert!(cycle.iter().all(|id| *id >= cycle[0]));
            }
            Err(other) => prop_assert!(false, "unexpected error {other}"),
        }
    }

    #[test]
    fn a_saved_plan_always_loads_back_equal(specs in dag()) {
        let plan = block_on(Planner::new().plan("t", specs)).unwrap();
        let store = InMemoryPlanStore::new();
        let scope = UserScope::new("acme", "alice");
        let loaded = block_on(async {
            let record = save_plan(&store, &scope, &plan).await.unwrap();
            load_plan(&store, &scope, &record.id).await.unwrap().unwrap()
        });
        prop_assert_eq!(loaded.0, plan.clone());
        prop_assert_eq!(loaded.1.len(), plan.steps.len());
    }
}

#[test]
fn ten_thousand_steps_plan_wide_and_deep() {
    let wide: Vec<StepSpec> = std::iter::once(StepSpec::new("root", "crm", ""))
        .chain((0..10_000).map(|i| StepSpec::new(format!("w{i}"), "pdf", "").after("root")))
        .collect();
    let plan = block_on(Planner::new().plan("wide", wide)).unwrap();
    assert_eq!(plan.groups.len(), 2);
    assert_eq!(plan.groups[1].len(), 10_000);

    let deep: Vec<StepSpec> = (0..10_000)
        .map(|i| {
            let step = StepSpec::new(format!("d{i}"), "pdf", "");
            if i == 0 {
                step
            } else {
                step.after(format!("d{}", i - 1))
            }
        })
        .collect();
    let plan = block_on(Planner::new().plan("deep", deep)).unwrap();
    assert_eq!(plan.groups.len(), 10_000);
    assert_eq!(plan.steps[9_999].id, "d9999");
    assert_eq!(plan.dependents("d0").len(), 9_999);

    // A cycle closing the deep chain is found without recursion.
    let mut cyclic: Vec<StepSpec> = (0..10_000)
        .map(|i| {
            StepSpec::new(format!("c{i:05}"), "pdf", "").after(format!("c{:05}", (i + 1) % 10_000))
        })
        .collect();
    cyclic.push(StepSpec::new("free", "pdf", ""));
    match block_on(Planner::new().plan("cyclic", cyclic)) {
        Err(Error::Cycle { cycle }) => {
            assert_eq!(cycle.len(), 10_001);
            assert_eq!(cycle[0], "c00000");
            assert_eq!(cycle[1], "c09999");
        }
        other => panic!("expected a cycle, got {other:?}"),
    }
}
