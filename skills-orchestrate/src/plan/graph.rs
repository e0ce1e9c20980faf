//! The dependency graph: validation, cycle detection and topological levels.
//!
//! Everything here is O(V + E), except sorting each level by the order the steps were given
//! (O(V log V)): planning ten thousand steps never scans all steps per step.

use std::collections::{BTreeSet, HashMap, VecDeque};

use petgraph::algo::kosaraju_scc;
use petgraph::graph::{DiGraph, NodeIndex};
use petgraph::visit::EdgeRef;

use super::{PlanStep, StepSpec};
use crate::error::{Error, Result};

/// The specs in execution order, with each one's level (parallel group, from 0).
#[derive(Debug)]
pub(crate) struct Levels {
    /// Indexes into the specs, group by group, in the order the specs were given within a
    /// group.
    pub order: Vec<usize>,
    /// Each spec's level, by spec index.
    pub level: Vec<usize>,
    /// How many levels there are.
    pub count: usize,
}

fn invalid(reason: String) -> Error {
    Error::Invalid {
        what: "plan".into(),
        reason,
    }
}

/// Checks the specs (no empty plan, unique non-empty ids, known dependencies, no
/// self-dependency, no cycle) and assigns each step its level: 0 without dependencies, else 1
/// more than its deepest dependency.
pub(crate) fn levels(specs: &[StepSpec]) -> Result<Levels> {
    if specs.is_empty() {
        return Err(invalid("a plan needs at least one step".into()));
    }
    let mut index: HashMap<&str, usize> = HashMap::with_capacity(specs.len());
    for (i, spec) in specs.iter().enumerate() {
        if spec.id.is_empty() {
            return Err(invalid(format!("step {} has an empty id", i + 1)));
        }
        if spec.skill.is_empty() {
            return Err(invalid(format!("step `{}` names no skill", spec.id)));
        }
        if index.insert(spec.id.as_str(), i).is_some() {
            return Err(invalid(format!("duplicate step id `{}`", spec.id)));
        }
    }
    let mut graph: DiGraph<(), ()> = DiGraph::with_capacity(specs.len(), specs.len());
    for _ in specs {
        graph.add_node(());
    }
    for (i, spec) in specs.iter().enumerate() {
        for dep in &spec.depends_on {
            let Some(&d) = index.get(dep.as_str()) else {
                return Err(invalid(format!(
                    "step `{}` depends on unknown step `{dep}`",
                    spec.id
                )));
            };
            if d == i {
                return Err(invalid(format!("step `{}` depends on itself", spec.id)));
            }
            // Edges point from a dependency to the step that waits for it.
            graph.add_edge(NodeIndex::new(d), NodeIndex::new(i), ());
        }
    }
    kahn_levels(&graph).ok_or_else(|| Error::Cycle {
        cycle: find_cycle(&graph, specs),
    })
}

/// Kahn's algorithm, carrying each node's level; `None` when some node is on or behind a
/// cycle.
fn kahn_levels(graph: &DiGraph<(), ()>) -> Option<Levels> {
    let n = graph.node_count();
    let mut waiting: Vec<usize> = vec![0; n];
    for edge in graph.edge_references() {
        waiting[edge.target().index()] += 1;
    }
    let mut level = vec![0usize; n];
    let mut ready: VecDeque<usize> = (0..n).filter(|&i| waiting[i] == 0).collect();
    let mut visited = 0usize;
    while let Some(node) = ready.pop_front() {
        visited += 1;
        for next in graph.neighbors(NodeIndex::new(node)) {
            let next = next.index();
            level[next] = level[next].max(level[node] + 1);
            waiting[next] -= 1;
            if waiting[next] == 0 {
                ready.push_back(next);
            }
        }
    }
    if visited < n {
        return None;
    }
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by_key(|&i| (level[i], i));
    let count = level.iter().max().map_or(0, |deepest| deepest + 1);
    Some(Levels {
        order,
        level,
        count,
    })
}

/// One cycle, as step ids in dependency order with the first repeated last: each step must
/// finish before the next one on the list. Deterministic: of the strongly connected
/// components with more than one step, the one holding the smallest id; from that step, the
/// shortest way back to it (breadth first, neighbours by the order the steps were given).
fn find_cycle(graph: &DiGraph<(), ()>, specs: &[StepSpec]) -> Vec<String> {
    let id = |node: NodeIndex| specs[node.index()].id.clone();
    let Some(component) = kosaraju_scc(graph)
        .into_iter()
        .filter(|component| component.len() > 1)
        .min_by(|a, b| smallest_id(a, specs).cmp(smallest_id(b, specs)))
    else {
        // Unreachable when Kahn's algorithm failed; a graph without a cycle has none.
        return Vec::new();
    };
    let members: BTreeSet<usize> = component.iter().map(|n| n.index()).collect();
    let Some(start) = component
        .iter()
        .copied()
        .min_by(|a, b| specs[a.index()].id.cmp(&specs[b.index()].id))
    else {
        return Vec::new();
    };
    let mut came_from: HashMap<usize, usize> = HashMap::new();
    let mut queue = VecDeque::from([start.index()]);
    let mut closing = None;
    'search: while let Some(node) = queue.pop_front() {
        let mut next: Vec<usize> = graph
            .neighbors(NodeIndex::new(node))
            .map(|n| n.index())
            .filter(|n| members.contains(n))
            .collect();
        next.sort_unstable();
        next.dedup();
        for n in next {
            if n == start.index() {
                closing = Some(node);
                break 'search;
            }
            if let std::collections::hash_map::Entry::Vacant(slot) = came_from.entry(n) {
                slot.insert(node);
                queue.push_back(n);
            }
        }
    }
    let mut path = vec![start.index()];
    let mut at = closing;
    while let Some(node) = at {
        if node == start.index() {
            break;
        }
        path.push(node);
        at = came_from.get(&node).copied();
    }
    // `path` is start, then the cycle walked backwards; turn it to dependency order.
    path[1..].reverse();
    path.push(start.index());
    path.into_iter().map(|i| id(NodeIndex::new(i))).collect()
}

fn smallest_id<'a>(component: &[NodeIndex], specs: &'a [StepSpec]) -> &'a str {
    component
        .iter()
        .map(|n| specs[n.index()].id.as_str())
        .min()
        .unwrap_or("")
}

/// The ids of the steps that (transitively) depend on `id`, sorted.
pub(crate) fn transitive_dependents(steps: &[PlanStep], id: &str) -> Vec<String> {
    let mut dependents: HashMap<&str, Vec<&str>> = HashMap::new();
    for step in steps {
        for dep in &step.depends_on {
            dependents
                .entry(dep.as_str())
                .or_default()
                .push(step.id.as_str());
        }
    }
    let mut found: BTreeSet<&str> = BTreeSet::new();
    let mut queue = vec![id];
    while let Some(at) = queue.pop() {
        for &next in dependents.get(at).map(Vec::as_slice).unwrap_or_default() {
            if found.insert(next) {
                queue.push(next);
            }
        }
    }
    found.into_iter().map(str::to_owned).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn specs(edges: &[(&str, &[&str])]) -> Vec<StepSpec> {
        edges
            .iter()
            .map(|(id, deps)| {
                deps.iter()
                    .fold(StepSpec::new(*id, "skill", ""), |spec, dep| {
                        spec.after(*dep)
                    })
            })
            .collect()
    }

    #[test]
    fn levels_follow_the_deepest_dependency_and_the_given_order() {
        let levels = levels(&specs(&[
            ("d", &["a", "c"]),
            ("c", &["b"]),
            ("b", &["a"]),
            ("a", &[]),
            ("e", &[]),
        ]))
        .unwrap();
        assert_eq!(levels.level, [3, 2, 1, 0, 0]);
        assert_eq!(levels.order, [3, 4, 2, 1, 0]);
        assert_eq!(levels.count, 4);
    }

    #[test]
    fn the_cycle_is_the_one_with_the_smallest_id() {
        let err = levels(&specs(&[
            ("y", &["x"]),
            ("x", &["y"]),
            ("b", &["c"]),
            ("c", &["b"]),
        ]))
        .unwrap_err();
        assert!(matches!(err, Error::Cycle { ref cycle } if cycle == &["b", "c", "b"]));
    }
}
