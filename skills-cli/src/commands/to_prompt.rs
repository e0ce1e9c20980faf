//! `skills to-prompt`: the reference validator's `to-prompt`, byte for byte.
//!
//! The reference (`skills-ref`'s `agentskills to-prompt`) takes skill directories (a
//! `SKILL.md` path stands for its directory), reads each one's frontmatter leniently, and
//! prints the `<available_skills>` block followed by a newline; any skill it cannot read
//! makes it print nothing on standard output, the error on standard error, and exit 1. The
//! block itself is `skills-core`'s `available_skills_xml`, which the repository's test
//! `catalog_xml_is_byte_identical_to_the_reference_to_prompt` holds to the reference's
//! recorded output.

use std::path::{Path, PathBuf};

use serde::Serialize;
use skills_core::catalog::available_skills_xml;
use skills_core::{LoadOptions, Profile, Skill};

use crate::cli::ToPromptArgs;
use crate::error::{CliError, Result, Status};
use crate::output::Output;

/// The directory a path names: a `SKILL.md` (any case) stands for its parent.
fn skill_dir(path: &Path) -> PathBuf {
    let names_entry = path
        .file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| n.eq_ignore_ascii_case("SKILL.md"));
    match path.parent() {
        Some(parent) if names_entry && path.is_file() => {
            if parent.as_os_str().is_empty() {
                PathBuf::from(".")
            } else {
                parent.to_path_buf()
            }
        }
        _ => path.to_path_buf(),
    }
}

#[derive(Serialize)]
struct JsonPrompt<'a> {
    prompt: &'a str,
    skills: Vec<&'a str>,
}

/// Prints the block; status 1 (and nothing on standard output) when a skill cannot be
/// loaded.
pub fn run(args: &ToPromptArgs, out: Output) -> Result<Status> {
    let options = LoadOptions::for_profile(Profile::Lenient);
    let mut skills = Vec::with_capacity(args.paths.len());
    for path in &args.paths {
        let dir = skill_dir(path);
        match Skill::load(&dir, &options) {
            Ok(skill) => skills.push(skill),
            Err(e) => {
                return Err(CliError::Skill(format!("{}: {e}", dir.display())));
            }
        }
    }
    let xml = available_skills_xml(&skills);
    out.text(&format!("{xml}\n"));
    out.json(&JsonPrompt {
        prompt: &xml,
        // The names the block lists (skills the model may not pick are left out of it).
        skills: skills
            .iter()
            .filter(|s| s.model_invocable())
            .map(Skill::name)
            .collect(),
    });
    Ok(Status::Ok)
}
