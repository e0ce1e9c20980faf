//! The Agent Skills catalog block for a rig agent's preamble.

use skills_catalog::ResolvedSkill;
use skills_catalog::prompt::agent_skills_xml_within;
use skills_catalog::prompt::tokens::Budget;

/// A rendered preamble and what went into it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct Preamble {
    /// The text for the agent's preamble (empty when no skill fits).
    pub text: String,
    /// Ids of the skills listed, in order.
    pub listed: Vec<String>,
    /// Ids left out for the budget, highest priority first.
    pub omitted: Vec<String>,
}

/// The `<available_skills>` block of `skills` (highest priority first) within `budget`,
/// after one line telling the model how to load a skill with the `use_skill` tool.
///
/// ```
/// use skills_catalog::prompt::tokens::Budget;
/// use skills_rig::preamble;
///
/// let empty = preamble(&[], Budget::Chars(2_000));
/// assert!(empty.text.is_empty());
/// ```
pub fn preamble(skills: &[ResolvedSkill], budget: Budget<'_>) -> Preamble {
    const LEAD: &str = "Skills are available. When a task matches a skill's description, call \
                        the `use_skill` tool with its name before acting.\n";
    let lead_cost = budget.cost(LEAD);
    let rest = match budget {
        Budget::Chars(n) => Budget::Chars(n.saturating_sub(lead_cost)),
        Budget::Tokens(n, counter) => Budget::Tokens(n.saturating_sub(lead_cost), counter),
    };
    let rendered = agent_skills_xml_within(skills, rest);
    if rendered.listed.is_empty() {
        return Preamble {
            omitted: rendered.omitted,
            ..Preamble::default()
        };
    }
    Preamble {
        text: format!("{LEAD}{}", rendered.text),
        listed: rendered.listed,
        omitted: rendered.omitted,
    }
}
