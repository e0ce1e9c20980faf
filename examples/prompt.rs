//! The catalog a model sees, and a skill's tools in a model API's format.
//!
//! ```text
//! cargo run --example prompt -- [--format agentskills-xml|available-skills|budget] [--budget-chars N] [PATH...]
//! cargo run --example prompt -- --tools mcp|openai-chat|openai-responses|anthropic SKILL_DIR
//! ```
//!
//! The first form discovers the skills under each PATH (default `examples/skills/`) and prints
//! them as the Agent Skills catalog XML (the default), as seed 002's "Available Skills"
//! section, or as the catalog XML within `--budget-chars` characters (default 2,000), with
//! what was left out on standard error. Locations are absolute. The second form prints the
//! tools of a skill.json skill as the chosen format's JSON (OpenAI formats in strict mode).
//! Exit 2 for usage errors, 1 when a skill cannot be loaded or its tools cannot be exported.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use skills::catalog::Resolver;
use skills::catalog::prompt::{
    Budget, CatalogOptions, agent_skills_xml, agent_skills_xml_within, available_skills_section,
};
use skills::core::tools::{ExportOptions, ToolFormat, export, skill_tools};
use skills::core::{Discovery, LoadOptions};

fn main() -> ExitCode {
    let stdout = std::io::stdout();
    let stderr = std::io::stderr();
    ExitCode::from(run(
        std::env::args().skip(1),
        &mut stdout.lock(),
        &mut stderr.lock(),
    ))
}

const USAGE: &str = "usage: prompt [--format agentskills-xml|available-skills|budget] [--budget-chars N] [PATH...]\n       prompt --tools mcp|openai-chat|openai-responses|anthropic SKILL_DIR";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Format {
    AgentSkillsXml,
    AvailableSkills,
    Budget,
}

fn run(args: impl Iterator<Item = String>, out: &mut impl Write, err: &mut impl Write) -> u8 {
    let args: Vec<String> = args.collect();
    if args.first().map(String::as_str) == Some("--tools") {
        return match args.as_slice() {
            [_, format, dir] => tools(format, Path::new(dir), out, err),
            _ => usage(err),
        };
    }
    let mut format = Format::AgentSkillsXml;
    let mut budget = 2_000usize;
    let mut paths: Vec<PathBuf> = Vec::new();
    let mut iter = args.into_iter();
    while let Some(arg) = iter.next() {
        match arg.as_str() {
            "--format" => {
                format = match iter.next().as_deref() {
                    Some("agentskills-xml") => Format::AgentSkillsXml,
                    Some("available-skills") => Format::AvailableSkills,
                    Some("budget") => Format::Budget,
                    _ => return usage(err),
                }
            }
            "--budget-chars" => match iter.next().and_then(|n| n.parse().ok()) {
                Some(n) => budget = n,
                None => return usage(err),
            },
            "-h" | "--help" => {
                let _ = writeln!(out, "{USAGE}");
                return 0;
            }
            flag if flag.starts_with("--") => return usage(err),
            _ => paths.push(PathBuf::from(arg)),
        }
    }
    if paths.is_empty() {
        paths.push(Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/skills"));
    }
    let mut discovery = Discovery::new(LoadOptions::default());
    for path in &paths {
        discovery = discovery.root(path);
    }
    let report = discovery.run();
    for found in report.reports.iter().filter(|r| r.skill.is_none()) {
        for diagnostic in &found.diagnostics {
            let _ = writeln!(err, "{}: {diagnostic}", found.path.display());
        }
    }
    let resolution = Resolver::new().resolve_repo(&report.into_skills());
    let text = match format {
        Format::AgentSkillsXml => agent_skills_xml(&resolution.skills),
        Format::AvailableSkills => {
            available_skills_section(&resolution.skills, &CatalogOptions::default()).text
        }
        Format::Budget => {
            let rendered = agent_skills_xml_within(&resolution.skills, Budget::Chars(budget));
            if !rendered.omitted.is_empty() {
                let _ = writeln!(
                    err,
                    "left out to fit {budget} characters: {}",
                    rendered.omitted.join(", ")
                );
            }
            rendered.text
        }
    };
    let _ = writeln!(out, "{text}");
    0
}

fn usage(err: &mut impl Write) -> u8 {
    let _ = writeln!(err, "{USAGE}");
    2
}

/// Prints the tools of the skill in `dir` in `format`.
fn tools(format: &str, dir: &Path, out: &mut impl Write, err: &mut impl Write) -> u8 {
    let Ok(format) = format.parse::<ToolFormat>() else {
        return usage(err);
    };
    let report = skills::core::load_skill_dir(dir, &LoadOptions::default());
    let Some(skill) = report.skill else {
        for diagnostic in &report.diagnostics {
            let _ = writeln!(err, "{}: {diagnostic}", dir.display());
        }
        return 1;
    };
    let exported = skill_tools(&skill).and_then(|tools| {
        let strict = matches!(format, ToolFormat::OpenAiChat | ToolFormat::OpenAiResponses);
        export(
            &tools,
            format,
            &ExportOptions::new().skill(skill.name()).strict(strict),
        )
    });
    match exported.map(|value| serde_json::to_string_pretty(&value)) {
        Ok(Ok(json)) => {
            let _ = writeln!(out, "{json}");
            0
        }
        Ok(Err(e)) => {
            let _ = writeln!(err, "{e}");
            1
        }
        Err(e) => {
            let _ = writeln!(err, "{}: {e}", skill.name());
            1
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(args: &[&str]) -> (u8, String, String) {
        let (mut out, mut err) = (Vec::new(), Vec::new());
        let code = run(args.iter().map(|a| (*a).to_owned()), &mut out, &mut err);
        (
            code,
            String::from_utf8(out).unwrap(),
            String::from_utf8(err).unwrap(),
        )
    }

    #[test]
    fn formats() {
        let (code, xml, _) = call(&[]);
        assert_eq!(code, 0);
        assert!(
            xml.starts_with("<available_skills>\n<skill>\n<name>\nchangelog-writer\n</name>"),
            "{xml}"
        );
        let root =
            std::fs::canonicalize(concat!(env!("CARGO_MANIFEST_DIR"), "/examples/skills")).unwrap();
        assert!(xml.contains(&format!(
            "<location>\n{}/pdf-tools/SKILL.md\n</location>",
            root.display()
        )));
        let (_, section, _) = call(&["--format", "available-skills"]);
        assert!(section.starts_with("## Available Skills\n"));
        assert!(section.contains("Project skills (discovered from repo):"));
        let (code, budget, left_out) = call(&["--format", "budget", "--budget-chars", "700"]);
        assert_eq!(code, 0);
        assert!(budget.trim_end().chars().count() <= 700);
        assert!(
            left_out.starts_with("left out to fit 700 characters: "),
            "{left_out}"
        );
        assert_eq!(call(&["--format", "yaml"]).0, 2);
        let web = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/skills/web-research");
        for format in ["mcp", "openai-chat", "openai-responses", "anthropic"] {
            let (code, json, err) = call(&["--tools", format, web]);
            assert_eq!(code, 0, "{format}: {err}");
            let value: serde_json::Value = serde_json::from_str(&json).unwrap();
            let names: Vec<String> = value
                .as_array()
                .unwrap()
                .iter()
                .map(|t| {
                    t.pointer("/function/name")
                        .or_else(|| t.get("name"))
                        .unwrap()
                        .as_str()
                        .unwrap()
                        .to_owned()
                })
                .collect();
            assert!(
                names.iter().all(|n| n.starts_with("web-research__")),
                "{format}: {names:?}"
            );
        }
        assert_eq!(call(&["--tools", "xml", web]).0, 2);
        assert_eq!(call(&["--tools", "mcp", "/nonexistent"]).0, 1);
        assert_eq!(call(&["--budget-chars", "x"]).0, 2);
    }
}
