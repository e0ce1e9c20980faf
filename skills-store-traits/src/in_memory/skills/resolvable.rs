//! [`SkillStore::resolvable_skills`](crate::SkillStore::resolvable_skills) in memory: the
//! same walk as `assigned_to` (the target index), copying only the fields the projection
//! carries instead of whole records.

use std::collections::HashMap;

use super::Tenant;
use crate::skills::{AssignmentScope, ResolvableSkill, SkillRecord, sort_by_slug};

impl Tenant {
    /// The enabled skills an enabled assignment reaching the agent attaches, grouped by
    /// skill (highest priority, any auto-inject), with their files, ordered by slug.
    pub(super) fn resolvable(&self, agent_id: &str, team_id: Option<&str>) -> Vec<ResolvableSkill> {
        let mut targets = vec![
            (AssignmentScope::Global, None),
            (AssignmentScope::Agent, Some(agent_id.to_owned())),
        ];
        if let Some(team) = team_id {
            targets.push((AssignmentScope::Team, Some(team.to_owned())));
        }
        let mut reached: HashMap<&str, (&SkillRecord, i64, bool)> = HashMap::new();
        let assignments = targets
            .iter()
            .filter_map(|target| self.by_target.get(target))
            .flatten()
            .filter_map(|id| self.assignments.get(id))
            .filter(|a| a.enabled);
        for a in assignments {
            let Some(skill) = self.skills.get(&a.skill_id).filter(|s| s.enabled) else {
                continue;
            };
            reached
                .entry(skill.id.as_str())
                .and_modify(|(_, priority, auto_inject)| {
                    *priority = (*priority).max(a.priority);
                    *auto_inject |= a.auto_inject;
                })
                .or_insert((skill, a.priority, a.auto_inject));
        }
        let mut out: Vec<ResolvableSkill> = reached
            .into_values()
            .map(|(skill, priority, auto_inject)| {
                let mut entry = ResolvableSkill::of_record(skill);
                entry.priority = priority;
                entry.auto_inject = auto_inject;
                for file in self
                    .files
                    .get(&skill.id)
                    .into_iter()
                    .flat_map(|f| f.values())
                {
                    entry.push_file(file);
                }
                entry
            })
            .collect();
        sort_by_slug(&mut out);
        out
    }
}
