//! One module per subcommand; each returns the exit status of its work or an error.

pub mod audit;
pub mod audit_list;
pub mod install;
pub mod list;
pub mod operator;
pub mod run;
pub mod scan;
pub mod to_prompt;
pub mod validate;
