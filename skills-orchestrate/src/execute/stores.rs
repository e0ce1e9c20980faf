//! [`SkillStores`]: the host's stores a native skill reaches at run time, read-only for the
//! kernel layer.
//!
//! **Threat.** Seed 001's layer 0 (identity and security skills such as an input guard) "is
//! read-only at run time"; a kernel skill that writes agent memory, skills or plans could
//! plant facts, rewrite skills or edit a plan while it runs.
//! **Guarantee.** The executor hands every native skill its stores through
//! [`SkillInput::stores`](super::SkillInput::stores); for a skill whose definition is in the
//! kernel layer ([`SkillDefinition::is_kernel`](super::SkillDefinition::is_kernel)) each
//! store is behind [`ReadOnly`], so every write returns
//! [`skills_store_traits::Error::ReadOnly`] before the store sees it, and nothing in the view
//! gives the writable store back. What a host captures inside its own skill value is the
//! host's code and outside this guarantee.

use std::fmt;
use std::sync::Arc;

use skills_store_traits::{MemoryStore, PlanStore, ReadOnly, SkillStore};

/// The stores a native skill may use: agent memory, skills and plans, each optional.
///
/// ```
/// use std::sync::Arc;
/// use skills_orchestrate::execute::SkillStores;
/// use skills_store_traits::in_memory::InMemoryMemoryStore;
/// use skills_store_traits::memory::NewFact;
/// use skills_store_traits::{Error, UserScope};
///
/// # futures::executor::block_on(async {
/// let stores = SkillStores::new().with_memory(Arc::new(InMemoryMemoryStore::new()));
/// let scope = UserScope::new("acme", "alice");
/// let fact = || NewFact::new("Acme", "uses", "Rust", 0.9, "crm");
/// assert!(stores.memory().unwrap().add_fact(&scope, fact()).await.is_ok());
///
/// let kernel = stores.read_only();
/// assert!(kernel.is_read_only());
/// let refused = kernel.memory().unwrap().add_fact(&scope, fact()).await;
/// assert!(matches!(refused, Err(Error::ReadOnly { operation: "add_fact" })));
/// # });
/// ```
#[derive(Clone, Default)]
pub struct SkillStores {
    memory: Option<Arc<dyn MemoryStore>>,
    skills: Option<Arc<dyn SkillStore>>,
    plans: Option<Arc<dyn PlanStore>>,
    read_only: bool,
}

impl SkillStores {
    /// No stores.
    pub fn new() -> Self {
        Self::default()
    }

    /// Hands native skills the agent memory store.
    pub fn with_memory(mut self, store: Arc<dyn MemoryStore>) -> Self {
        self.memory = Some(self.guard_memory(store));
        self
    }

    /// Hands native skills the skill store.
    pub fn with_skills(mut self, store: Arc<dyn SkillStore>) -> Self {
        self.skills = Some(self.guard_skills(store));
        self
    }

    /// Hands native skills the plan store.
    pub fn with_plans(mut self, store: Arc<dyn PlanStore>) -> Self {
        self.plans = Some(self.guard_plans(store));
        self
    }

    /// The agent memory store, when the host gave one.
    pub fn memory(&self) -> Option<&Arc<dyn MemoryStore>> {
        self.memory.as_ref()
    }

    /// The skill store, when the host gave one.
    pub fn skills(&self) -> Option<&Arc<dyn SkillStore>> {
        self.skills.as_ref()
    }

    /// The plan store, when the host gave one.
    pub fn plans(&self) -> Option<&Arc<dyn PlanStore>> {
        self.plans.as_ref()
    }

    /// True when every store here refuses writes.
    pub fn is_read_only(&self) -> bool {
        self.read_only
    }

    /// The same stores, each refusing writes ([`ReadOnly`]); stores added to the result
    /// later are read-only too. There is no way back.
    pub fn read_only(&self) -> SkillStores {
        if self.read_only {
            return self.clone();
        }
        let mut view = SkillStores {
            read_only: true,
            ..SkillStores::default()
        };
        view.memory = self.memory.clone().map(|s| view.guard_memory(s));
        view.skills = self.skills.clone().map(|s| view.guard_skills(s));
        view.plans = self.plans.clone().map(|s| view.guard_plans(s));
        view
    }

    fn guard_memory(&self, store: Arc<dyn MemoryStore>) -> Arc<dyn MemoryStore> {
        if self.read_only {
            Arc::new(ReadOnly::new(store))
        } else {
            store
        }
    }

    fn guard_skills(&self, store: Arc<dyn SkillStore>) -> Arc<dyn SkillStore> {
        if self.read_only {
            Arc::new(ReadOnly::new(store))
        } else {
            store
        }
    }

    fn guard_plans(&self, store: Arc<dyn PlanStore>) -> Arc<dyn PlanStore> {
        if self.read_only {
            Arc::new(ReadOnly::new(store))
        } else {
            store
        }
    }
}

impl fmt::Debug for SkillStores {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SkillStores")
            .field("memory", &self.memory.is_some())
            .field("skills", &self.skills.is_some())
            .field("plans", &self.plans.is_some())
            .field("read_only", &self.read_only)
            .finish()
    }
}

/// Same handles (by identity) with the same access.
impl PartialEq for SkillStores {
    fn eq(&self, other: &Self) -> bool {
        fn same<T: ?Sized>(a: &Option<Arc<T>>, b: &Option<Arc<T>>) -> bool {
            match (a, b) {
                (Some(a), Some(b)) => Arc::ptr_eq(a, b),
                (None, None) => true,
                _ => false,
            }
        }
        self.read_only == other.read_only
            && same(&self.memory, &other.memory)
            && same(&self.skills, &other.skills)
            && same(&self.plans, &other.plans)
    }
}

impl Eq for SkillStores {}

#[cfg(test)]
mod tests {
    use super::*;
    use futures::executor::block_on;
    use skills_store_traits::in_memory::{
        InMemoryMemoryStore, InMemoryPlanStore, InMemorySkillStore,
    };
    use skills_store_traits::plans::{NewPlan, RiskLevel};
    use skills_store_traits::{Error, NewSkill, TenantId, UserScope};

    #[test]
    fn a_read_only_view_refuses_writes_to_every_store_and_stays_read_only() {
        let stores = SkillStores::new()
            .with_memory(Arc::new(InMemoryMemoryStore::new()))
            .with_skills(Arc::new(InMemorySkillStore::new()))
            .with_plans(Arc::new(InMemoryPlanStore::new()));
        let view = stores.read_only();
        assert!(!stores.is_read_only() && view.is_read_only());
        assert_eq!(view.read_only(), view);
        assert_ne!(view, stores);
        // A store added to a read-only view is read-only too.
        let view = view.with_plans(Arc::new(InMemoryPlanStore::new()));
        let scope = UserScope::new("acme", "alice");
        block_on(async {
            let skill = view
                .skills()
                .unwrap()
                .create_skill(&TenantId::new("acme"), NewSkill::new("X", "x", "# X\n"))
                .await;
            assert!(matches!(skill, Err(Error::ReadOnly { .. })));
            let plan = view
                .plans()
                .unwrap()
                .create_plan(&scope, NewPlan::new("t", vec![], RiskLevel::Low))
                .await;
            assert!(matches!(plan, Err(Error::ReadOnly { .. })));
            let writable = stores
                .plans()
                .unwrap()
                .create_plan(&scope, NewPlan::new("t", vec![], RiskLevel::Low))
                .await;
            assert!(writable.is_ok());
        });
        assert_eq!(
            format!("{view:?}"),
            "SkillStores { memory: true, skills: true, plans: true, read_only: true }"
        );
    }
}
