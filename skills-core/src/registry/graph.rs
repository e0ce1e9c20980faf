//! The dependency graph: missing dependencies, cycles, layer rules and the load order.

use std::collections::{BTreeMap, BTreeSet};

use petgraph::algo::tarjan_scc;
use petgraph::graphmap::DiGraphMap;
use serde::Serialize;

use crate::diagnostic::{Diagnostic, Profile, Rule};

/// The layer rules of seed 001, configurable.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct LayerPolicy {
    /// The highest layer (default 4).
    pub max_layer: u8,
    /// Whether layer-0 (kernel) skills must have no dependencies (default true).
    pub kernel_has_no_dependencies: bool,
    /// The gateway layer and the one skill allowed in it (default layer 1, `api_client`);
    /// `None` turns the rule off.
    pub gateway: Option<Gateway>,
}

/// The layer reserved for a single gateway skill.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Gateway {
    /// The reserved layer.
    pub layer: u8,
    /// The one skill allowed in it.
    pub skill: String,
}

impl Gateway {
    /// A gateway rule.
    pub fn new(layer: u8, skill: impl Into<String>) -> Self {
        Gateway {
            layer,
            skill: skill.into(),
        }
    }
}

impl Default for LayerPolicy {
    fn default() -> Self {
        LayerPolicy {
            max_layer: 4,
            kernel_has_no_dependencies: true,
            gateway: Some(Gateway::new(1, "api_client")),
        }
    }
}

/// What the registry's structural check found.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
#[non_exhaustive]
pub struct RegistryCheck {
    /// Every usable skill, each after all of its dependencies; ties broken by layer, then
    /// name, so the order is the same on every run.
    pub load_order: Vec<String>,
    /// Skills left out of the load order: broken themselves, or depending on one that is.
    pub unavailable: BTreeSet<String>,
    /// Each dependency cycle as a path that starts and ends on the same skill.
    pub cycles: Vec<Vec<String>>,
    /// Every problem found.
    pub diagnostics: Vec<Diagnostic>,
}

impl RegistryCheck {
    /// True when nothing is wrong.
    pub fn is_ok(&self) -> bool {
        self.diagnostics.iter().all(|d| !d.is_error())
    }
}

/// One node of the graph.
pub(crate) struct Node<'a> {
    pub name: &'a str,
    pub layer: Option<u8>,
    pub dependencies: Vec<String>,
}

pub(crate) fn check(nodes: &[Node<'_>], policy: &LayerPolicy) -> RegistryCheck {
    let mut out = RegistryCheck::default();
    let push = |out: &mut RegistryCheck, rule: Rule, message: String| {
        out.diagnostics
            .push(Diagnostic::new(rule, Profile::Spec, message));
    };
    let by_name: BTreeMap<&str, &Node<'_>> = nodes.iter().map(|n| (n.name, n)).collect();
    let mut broken: BTreeSet<&str> = BTreeSet::new();

    let mut graph: DiGraphMap<&str, ()> = DiGraphMap::new();
    for node in nodes {
        graph.add_node(node.name);
    }
    for node in nodes {
        for dependency in &node.dependencies {
            match by_name.get_key_value(dependency.as_str()) {
                Some((&target, _)) => {
                    graph.add_edge(node.name, target, ());
                }
                None => {
                    push(
                        &mut out,
                        Rule::DependencyMissing,
                        format!(
                            "skill `{}` depends on `{dependency}`, which is not registered",
                            node.name
                        ),
                    );
                    broken.insert(node.name);
                }
            }
        }
        if layer_problems(node, &by_name, policy, &mut out) {
            broken.insert(node.name);
        }
    }

    let mut cycles: Vec<Vec<String>> = tarjan_scc(&graph)
        .into_iter()
        .filter(|scc| scc.len() > 1 || graph.contains_edge(scc[0], scc[0]))
        .map(|scc| cycle_path(&graph, &scc))
        .collect();
    cycles.sort();
    for cycle in &cycles {
        push(
            &mut out,
            Rule::DependencyCycle,
            format!("dependency cycle: {}", cycle.join(" -> ")),
        );
        for name in cycle {
            if let Some((&name, _)) = by_name.get_key_value(name.as_str()) {
                broken.insert(name);
            }
        }
    }
    out.cycles = cycles;

    // Kahn's algorithm; `ready` orders ties by (layer, name). Skills without a layer sort
    // after every layered skill.
    let key = |name: &str| {
        let layer = by_name
            .get(name)
            .and_then(|n| n.layer)
            .map_or(u16::MAX, u16::from);
        (layer, name.to_owned())
    };
    let mut waiting: BTreeMap<&str, usize> = BTreeMap::new();
    let mut ready: BTreeSet<(u16, String)> = BTreeSet::new();
    for node in nodes {
        if broken.contains(node.name) {
            continue;
        }
        let count = graph.neighbors(node.name).count();
        if count == 0 {
            ready.insert(key(node.name));
        } else {
            waiting.insert(node.name, count);
        }
    }
    while let Some((layer, name)) = ready.pop_first() {
        let _ = layer;
        for dependent in graph.neighbors_directed(&name, petgraph::Direction::Incoming) {
            if let Some(count) = waiting.get_mut(dependent) {
                *count -= 1;
                if *count == 0 {
                    waiting.remove(dependent);
                    ready.insert(key(dependent));
                }
            }
        }
        out.load_order.push(name);
    }
    let ordered: BTreeSet<String> = out.load_order.iter().cloned().collect();
    for node in nodes {
        if !ordered.contains(node.name) {
            out.unavailable.insert(node.name.to_owned());
            if !broken.contains(node.name) {
                let blocked: Vec<&str> = node
                    .dependencies
                    .iter()
                    .map(String::as_str)
                    .filter(|d| !ordered.contains(*d))
                    .collect();
                push(
                    &mut out,
                    Rule::DependencyUnavailable,
                    format!(
                        "skill `{}` cannot load because its dependencies are unavailable: {}",
                        node.name,
                        blocked.join(", ")
                    ),
                );
            }
        }
    }
    out
}

/// Checks one node's layer rules; true if any failed.
fn layer_problems(
    node: &Node<'_>,
    by_name: &BTreeMap<&str, &Node<'_>>,
    policy: &LayerPolicy,
    out: &mut RegistryCheck,
) -> bool {
    let mut failed = false;
    let mut push = |rule: Rule, message: String| {
        out.diagnostics
            .push(Diagnostic::new(rule, Profile::Spec, message));
        failed = true;
    };
    let name = node.name;
    if let Some(gateway) = &policy.gateway {
        match node.layer {
            Some(layer) if layer == gateway.layer && name != gateway.skill => push(
                Rule::LayerGatewayReserved,
                format!(
                    "skill `{name}` is in layer {layer}, which is reserved for `{}`",
                    gateway.skill
                ),
            ),
            Some(layer) if layer != gateway.layer && name == gateway.skill => push(
                Rule::LayerGatewayReserved,
                format!(
                    "the gateway skill `{name}` must be in layer {}, not {layer}",
                    gateway.layer
                ),
            ),
            _ => {}
        }
    }
    let Some(layer) = node.layer else {
        return failed;
    };
    if layer > policy.max_layer {
        push(
            Rule::LayerOutOfRange,
            format!(
                "skill `{name}` is in layer {layer}; the highest layer is {}",
                policy.max_layer
            ),
        );
    }
    if layer == 0 && policy.kernel_has_no_dependencies && !node.dependencies.is_empty() {
        push(
            Rule::LayerKernelDependencies,
            format!(
                "layer-0 skill `{name}` must have no dependencies, but has: {}",
                node.dependencies.join(", ")
            ),
        );
    }
    for dependency in &node.dependencies {
        if let Some(dep_layer) = by_name.get(dependency.as_str()).and_then(|d| d.layer)
            && dep_layer > layer
        {
            push(
                Rule::LayerViolation,
                format!(
                    "skill `{name}` (layer {layer}) depends on `{dependency}` (layer {dep_layer}); a skill may only depend on its own or lower layers"
                ),
            );
        }
    }
    failed
}

/// A cycle through a strongly connected component, from its smallest name back to itself,
/// following the smallest-named edge that still leads home.
fn cycle_path(graph: &DiGraphMap<&str, ()>, scc: &[&str]) -> Vec<String> {
    let members: BTreeSet<&str> = scc.iter().copied().collect();
    let Some(&start) = members.first() else {
        return Vec::new();
    };
    // Breadth-first search for the shortest way back to `start` within the component.
    let mut previous: BTreeMap<&str, &str> = BTreeMap::new();
    let mut queue = std::collections::VecDeque::from([start]);
    let mut seen = BTreeSet::from([start]);
    let mut last = None;
    'search: while let Some(current) = queue.pop_front() {
        let mut next: Vec<&str> = graph
            .neighbors(current)
            .filter(|n| members.contains(n))
            .collect();
        next.sort_unstable();
        for n in next {
            if n == start {
                last = Some(current);
                break 'search;
            }
            if seen.insert(n) {
                previous.insert(n, current);
                queue.push_back(n);
            }
        }
    }
    let mut path = vec![start.to_owned()];
    let mut back = Vec::new();
    let mut at = last;
    while let Some(node) = at {
        if node == start {
            break;
        }
        back.push(node.to_owned());
        at = previous.get(node).copied();
    }
    back.reverse();
    path.extend(back);
    path.push(start.to_owned());
    path
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node<'a>(name: &'a str, layer: Option<u8>, deps: &[&str]) -> Node<'a> {
        Node {
            name,
            layer,
            dependencies: deps.iter().map(|d| (*d).to_owned()).collect(),
        }
    }

    fn rules(check: &RegistryCheck) -> Vec<Rule> {
        check.diagnostics.iter().map(|d| d.rule).collect()
    }

    #[test]
    fn orders_by_dependency_then_layer_then_name() {
        let nodes = [
            node("schedule", Some(4), &["research", "llm"]),
            node("research", Some(3), &["api_client", "llm"]),
            node("llm", Some(2), &["api_client"]),
            node("api_client", Some(1), &[]),
            node("input_guard", Some(0), &[]),
            node("notes", None, &[]),
        ];
        let check = check(&nodes, &LayerPolicy::default());
        assert!(check.is_ok(), "{:?}", check.diagnostics);
        assert_eq!(
            check.load_order,
            vec![
                "input_guard",
                "api_client",
                "llm",
                "research",
                "schedule",
                "notes"
            ]
        );
    }

    #[test]
    fn cycles_are_reported_with_their_path() {
        let nodes = [
            node("a", Some(3), &["b"]),
            node("b", Some(3), &["c"]),
            node("c", Some(3), &["a"]),
            node("d", Some(3), &["a"]),
            node("self", Some(3), &["self"]),
            node("ok", Some(3), &[]),
        ];
        let check = check(&nodes, &LayerPolicy::default());
        assert_eq!(
            check.cycles,
            vec![vec!["a", "b", "c", "a"], vec!["self", "self"]]
        );
        assert_eq!(check.load_order, vec!["ok"]);
        assert_eq!(
            check.unavailable.iter().collect::<Vec<_>>(),
            vec!["a", "b", "c", "d", "self"]
        );
        assert_eq!(
            rules(&check),
            vec![
                Rule::DependencyCycle,
                Rule::DependencyCycle,
                Rule::DependencyUnavailable
            ]
        );
        assert!(check.diagnostics[0].message.contains("a -> b -> c -> a"));
    }

    #[test]
    fn the_shortest_way_round_is_reported() {
        let nodes = [
            node("a", Some(3), &["b", "x"]),
            node("b", Some(3), &["c"]),
            node("c", Some(3), &["a"]),
            node("x", Some(3), &["a"]),
        ];
        assert_eq!(
            check(&nodes, &LayerPolicy::default()).cycles,
            vec![vec!["a", "x", "a"]]
        );
    }

    #[test]
    fn missing_dependencies_block_dependents() {
        let nodes = [node("a", Some(3), &["ghost"]), node("b", Some(3), &["a"])];
        let check = check(&nodes, &LayerPolicy::default());
        assert_eq!(
            rules(&check),
            vec![Rule::DependencyMissing, Rule::DependencyUnavailable]
        );
        assert!(check.load_order.is_empty());
    }

    #[test]
    fn layer_rules_both_sides() {
        let policy = LayerPolicy::default();
        // Same and lower layers are fine; higher is not.
        let ok = [node("x", Some(3), &["y"]), node("y", Some(3), &[])];
        assert!(check(&ok, &policy).is_ok());
        let up = [node("x", Some(2), &["y"]), node("y", Some(3), &[])];
        assert_eq!(rules(&check(&up, &policy)), vec![Rule::LayerViolation]);
        // Layer 0 has no dependencies.
        let kernel = [node("k", Some(0), &["z"]), node("z", Some(0), &[])];
        assert_eq!(
            rules(&check(&kernel, &policy)),
            vec![Rule::LayerKernelDependencies]
        );
        // Layer 1 is the gateway's alone, and the gateway lives there.
        let squatter = [node("other", Some(1), &[])];
        assert_eq!(
            rules(&check(&squatter, &policy)),
            vec![Rule::LayerGatewayReserved]
        );
        let moved = [node("api_client", Some(2), &[])];
        assert_eq!(
            rules(&check(&moved, &policy)),
            vec![Rule::LayerGatewayReserved]
        );
        let high = [node("x", Some(5), &[])];
        assert_eq!(rules(&check(&high, &policy)), vec![Rule::LayerOutOfRange]);
    }

    #[test]
    fn layer_rules_are_configurable() {
        let policy = LayerPolicy {
            max_layer: 9,
            kernel_has_no_dependencies: false,
            gateway: Some(Gateway::new(1, "db")),
        };
        let nodes = [
            node("k", Some(0), &["db"]),
            node("db", Some(1), &[]),
            node("x", Some(9), &[]),
        ];
        let check = check(&nodes, &policy);
        // The kernel rule is off, but `k` (layer 0) still may not depend on layer 1.
        assert_eq!(rules(&check), vec![Rule::LayerViolation]);
        let none = LayerPolicy {
            gateway: None,
            ..LayerPolicy::default()
        };
        assert!(super::check(&[node("anything", Some(1), &[])], &none).is_ok());
    }
}
