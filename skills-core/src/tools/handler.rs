//! Executing tools: the handler trait and a registry that validates before it dispatches.

use std::collections::BTreeMap;
use std::future::Future;
use std::sync::Arc;

use async_trait::async_trait;
use serde_json::Value;

use super::Tool;
use super::error::{CallError, ToolError};

/// Executes one tool.
///
/// Object-safe, so a registry holds handlers of different types as
/// `Arc<dyn ToolHandler>`. A handler registered with a [`ToolRegistry`] only ever sees input
/// that passed the tool's input schema.
///
/// ```
/// use async_trait::async_trait;
/// use serde_json::{Value, json};
/// use skills_core::tools::{CallError, ToolHandler};
///
/// struct Echo;
///
/// #[async_trait]
/// impl ToolHandler for Echo {
///     async fn call(&self, input: Value) -> Result<Value, CallError> {
///         Ok(json!({"echo": input}))
///     }
/// }
///
/// let out = futures::executor::block_on(Echo.call(json!({"q": 1})))?;
/// assert_eq!(out, json!({"echo": {"q": 1}}));
/// # Ok::<(), CallError>(())
/// ```
#[async_trait]
pub trait ToolHandler: Send + Sync {
    /// Runs the tool on `input` and returns its result.
    ///
    /// # Errors
    ///
    /// Whatever the tool reports, typically [`CallError::Failed`].
    async fn call(&self, input: Value) -> Result<Value, CallError>;
}

/// A handler made from an async closure; see [`handler_fn`].
pub struct FnHandler<F>(F);

impl<F> std::fmt::Debug for FnHandler<F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("FnHandler")
    }
}

/// A handler from a closure returning a future.
///
/// ```
/// use serde_json::json;
/// use skills_core::tools::{ToolHandler, handler_fn};
///
/// let double = handler_fn(|input| async move {
///     Ok(json!(input["n"].as_i64().unwrap_or(0) * 2))
/// });
/// let out = futures::executor::block_on(double.call(json!({"n": 21})))?;
/// assert_eq!(out, json!(42));
/// # Ok::<(), skills_core::tools::CallError>(())
/// ```
pub fn handler_fn<F, Fut>(f: F) -> FnHandler<F>
where
    F: Fn(Value) -> Fut + Send + Sync,
    Fut: Future<Output = Result<Value, CallError>> + Send,
{
    FnHandler(f)
}

#[async_trait]
impl<F, Fut> ToolHandler for FnHandler<F>
where
    F: Fn(Value) -> Fut + Send + Sync,
    Fut: Future<Output = Result<Value, CallError>> + Send,
{
    async fn call(&self, input: Value) -> Result<Value, CallError> {
        (self.0)(input).await
    }
}

/// Tools and their handlers by name: validates every input against the tool's compiled
/// input schema before the handler runs, and every output against its output schema, if
/// it has one.
///
/// ```
/// use serde_json::json;
/// use skills_core::tools::{CallError, Tool, ToolRegistry, handler_fn};
///
/// let tool = Tool::new("add", "Add two numbers.", json!({
///     "type": "object",
///     "properties": {"a": {"type": "number"}, "b": {"type": "number"}},
///     "required": ["a", "b"]
/// }))?;
/// let mut registry = ToolRegistry::new();
/// registry.register(tool, handler_fn(|input| async move {
///     Ok(json!(input["a"].as_f64().unwrap_or(0.0) + input["b"].as_f64().unwrap_or(0.0)))
/// }))?;
///
/// let sum = futures::executor::block_on(registry.call("add", json!({"a": 1, "b": 2})));
/// assert_eq!(sum.unwrap(), json!(3.0));
/// let bad = futures::executor::block_on(registry.call("add", json!({"a": "1"})));
/// match bad {
///     Err(CallError::InvalidInput { violations, .. }) => assert_eq!(violations.len(), 2),
///     other => panic!("{other:?}"),
/// }
/// # Ok::<(), skills_core::tools::ToolError>(())
/// ```
#[derive(Clone, Default)]
pub struct ToolRegistry {
    tools: BTreeMap<String, (Tool, Arc<dyn ToolHandler>)>,
}

impl std::fmt::Debug for ToolRegistry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.tools.keys()).finish()
    }
}

impl ToolRegistry {
    /// An empty registry.
    pub fn new() -> Self {
        Self::default()
    }

    /// Registers a tool and its handler.
    ///
    /// # Errors
    ///
    /// [`ToolError::DuplicateName`] when a tool of that name is already registered.
    pub fn register(
        &mut self,
        tool: Tool,
        handler: impl ToolHandler + 'static,
    ) -> Result<(), ToolError> {
        self.register_arc(tool, Arc::new(handler))
    }

    /// Registers a tool and a shared handler.
    ///
    /// # Errors
    ///
    /// As [`ToolRegistry::register`].
    pub fn register_arc(
        &mut self,
        tool: Tool,
        handler: Arc<dyn ToolHandler>,
    ) -> Result<(), ToolError> {
        if self.tools.contains_key(tool.name()) {
            return Err(ToolError::DuplicateName {
                name: tool.name().to_owned(),
            });
        }
        self.tools.insert(tool.name().to_owned(), (tool, handler));
        Ok(())
    }

    /// The tool of that name.
    pub fn get(&self, name: &str) -> Option<&Tool> {
        self.tools.get(name).map(|(tool, _)| tool)
    }

    /// Every tool, by name.
    pub fn tools(&self) -> impl Iterator<Item = &Tool> {
        self.tools.values().map(|(tool, _)| tool)
    }

    /// How many tools are registered.
    pub fn len(&self) -> usize {
        self.tools.len()
    }

    /// True when none is.
    pub fn is_empty(&self) -> bool {
        self.tools.is_empty()
    }

    /// Validates `input`, calls the tool's handler, and validates its output.
    ///
    /// # Errors
    ///
    /// [`CallError::UnknownTool`]; [`CallError::InvalidInput`] (the handler is not called);
    /// the handler's own error; [`CallError::InvalidOutput`].
    pub async fn call(&self, name: &str, input: Value) -> Result<Value, CallError> {
        let (tool, handler) = self
            .tools
            .get(name)
            .ok_or_else(|| CallError::UnknownTool(name.to_owned()))?;
        tool.validate_input(&input)
            .map_err(|violations| CallError::InvalidInput {
                tool: name.to_owned(),
                violations,
            })?;
        let output = handler.call(input).await?;
        tool.validate_output(&output)
            .map_err(|violations| CallError::InvalidOutput {
                tool: name.to_owned(),
                violations,
            })?;
        Ok(output)
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use futures::executor::block_on;
    use serde_json::json;

    use super::*;

    fn tool(name: &str) -> Tool {
        Tool::new(
            name,
            "d",
            json!({"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}),
        )
        .unwrap()
    }

    #[test]
    fn dispatches_valid_input_only() {
        let calls = Arc::new(AtomicUsize::new(0));
        let seen = calls.clone();
        let mut registry = ToolRegistry::new();
        registry
            .register(
                tool("inc"),
                handler_fn(move |input| {
                    let seen = seen.clone();
                    async move {
                        seen.fetch_add(1, Ordering::SeqCst);
                        Ok(json!(input["n"].as_i64().unwrap_or(0) + 1))
                    }
                }),
            )
            .unwrap();
        assert_eq!(
            block_on(registry.call("inc", json!({"n": 1}))).unwrap(),
            json!(2)
        );
        assert!(matches!(
            block_on(registry.call("inc", json!({"n": "1"}))),
            Err(CallError::InvalidInput { .. })
        ));
        assert!(matches!(
            block_on(registry.call("nope", json!({}))),
            Err(CallError::UnknownTool(_))
        ));
        assert_eq!(calls.load(Ordering::SeqCst), 1);
    }

    #[test]
    fn refuses_duplicates_and_checks_output() {
        let mut registry = ToolRegistry::new();
        let out = tool("t")
            .with_output_schema(json!({"type": "object", "required": ["ok"]}))
            .unwrap();
        registry
            .register(out, handler_fn(|_| async { Ok(json!({})) }))
            .unwrap();
        assert!(matches!(
            registry.register(tool("t"), handler_fn(|_| async { Ok(json!({})) })),
            Err(ToolError::DuplicateName { .. })
        ));
        assert!(matches!(
            block_on(registry.call("t", json!({"n": 1}))),
            Err(CallError::InvalidOutput { .. })
        ));
        assert_eq!(registry.len(), 1);
        assert_eq!(format!("{registry:?}"), "[\"t\"]");
    }

    #[test]
    fn handlers_are_object_safe() {
        let handlers: Vec<Arc<dyn ToolHandler>> = vec![
            Arc::new(handler_fn(|_| async { Ok(json!(1)) })),
            Arc::new(handler_fn(|_| async { Err(CallError::failed("no")) })),
        ];
        assert_eq!(block_on(handlers[0].call(json!({}))).unwrap(), json!(1));
        assert_eq!(
            block_on(handlers[1].call(json!({})))
                .unwrap_err()
                .to_string(),
            "no"
        );
    }
}
