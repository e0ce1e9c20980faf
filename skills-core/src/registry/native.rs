//! Skills implemented in Rust, after seed 001's skill class.

use std::fmt;

use async_trait::async_trait;
use serde::Serialize;

use crate::status::SkillStatus;

/// The error type a native skill's `initialize` may return.
pub type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// How a skill reports its health. Ordered from best to worst, so `max()` is the worst.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(tag = "status", content = "reason", rename_all = "lowercase")]
pub enum HealthStatus {
    /// Working.
    Healthy,
    /// Working with reduced capability.
    Degraded(String),
    /// Not working.
    Unhealthy(String),
}

impl HealthStatus {
    /// True for [`HealthStatus::Healthy`].
    pub fn is_healthy(&self) -> bool {
        matches!(self, HealthStatus::Healthy)
    }
}

impl fmt::Display for HealthStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            HealthStatus::Healthy => f.write_str("healthy"),
            HealthStatus::Degraded(reason) => write!(f, "degraded: {reason}"),
            HealthStatus::Unhealthy(reason) => write!(f, "unhealthy: {reason}"),
        }
    }
}

/// A skill implemented in Rust and registered beside skills loaded from disk.
///
/// Its [`name`](NativeSkill::name) must be one a skill directory could carry (seed 001's
/// snake_case `api_client`, or an Agent Skills name); registering any other is refused with
/// [`Error::InvalidName`](crate::Error::InvalidName).
///
/// Each call to [`SkillRegistry::initialize`](super::SkillRegistry::initialize) calls
/// [`initialize`](NativeSkill::initialize) once, after every dependency has initialized
/// (so a skill that is initialized twice should make the second call cheap), and
/// [`SkillRegistry::health`](super::SkillRegistry::health) calls
/// [`health_check`](NativeSkill::health_check).
///
/// ```
/// use async_trait::async_trait;
/// use skills_core::registry::{BoxError, HealthStatus, NativeSkill};
///
/// struct ApiClient;
///
/// #[async_trait]
/// impl NativeSkill for ApiClient {
///     fn name(&self) -> &str { "api_client" }
///     fn layer(&self) -> Option<u8> { Some(1) }
///     async fn initialize(&self) -> Result<(), BoxError> { Ok(()) }
///     async fn health_check(&self) -> HealthStatus { HealthStatus::Healthy }
/// }
/// ```
#[async_trait]
pub trait NativeSkill: Send + Sync {
    /// The skill's unique name.
    fn name(&self) -> &str;

    /// The skill's layer, if it has one.
    fn layer(&self) -> Option<u8> {
        None
    }

    /// The names of the skills this one needs initialized first.
    fn dependencies(&self) -> Vec<String> {
        Vec::new()
    }

    /// Its lifecycle status; `None` (the default) is an active skill. A deprecated skill
    /// stays registered and runnable by name, but is marked in listings and never chosen
    /// automatically.
    fn status(&self) -> Option<SkillStatus> {
        None
    }

    /// The agent focuses it suits (seed 001 `focus_affinity`), read by
    /// [`SkillRegistry::skills_for_focus`](super::SkillRegistry::skills_for_focus).
    fn focus_affinity(&self) -> Vec<String> {
        Vec::new()
    }

    /// Prepares the skill for use.
    async fn initialize(&self) -> Result<(), BoxError> {
        Ok(())
    }

    /// Reports whether the skill works.
    async fn health_check(&self) -> HealthStatus {
        HealthStatus::Healthy
    }
}
