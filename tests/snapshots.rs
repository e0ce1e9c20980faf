//! Snapshots of rendered text: SKILL.md written back, the catalog XML, and diagnostics as a
//! person reads them.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use skills::core::catalog::available_skills_xml;
use skills::core::yaml::YamlValue;
use skills::core::{Discovery, Frontmatter, LoadOptions, ParseOptions, Profile, SkillMd};

const EXAMPLES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/skills");

#[test]
fn skill_md_written_back() {
    let mut fm = Frontmatter::new(
        "pdf-tools",
        "Extract text from PDFs.\nUse when the user shares a PDF: even a scanned one.\n",
    );
    fm.license = Some("MIT".into());
    fm.compatibility = Some("Python 3.10+".into());
    fm.metadata.insert("author".into(), "skills".into());
    fm.metadata.insert("version".into(), "1.0".into());
    fm.allowed_tools = Some("Bash(python3:*) Read".into());
    fm.tags = vec!["pdf".into(), "documents".into()];
    fm.version = Some("2.0.0".into());
    fm.extra.insert(
        "argument-hint".into(),
        YamlValue::String("[file.pdf]".into()),
    );
    fm.extra.insert(
        "x-config".into(),
        YamlValue::Mapping(vec![
            ("retries".into(), YamlValue::Number("3".into())),
            (
                "modes".into(),
                YamlValue::Sequence(vec![YamlValue::String("fast".into()), YamlValue::Null]),
            ),
        ]),
    );
    let doc = SkillMd::new(fm, "# PDF tools\n\nRun the script.\n");
    insta::assert_snapshot!(doc.to_markdown());
}

#[test]
fn catalog_of_the_example_skills() {
    let report = Discovery::new(LoadOptions::default()).root(EXAMPLES).run();
    let xml = available_skills_xml(report.skills());
    let root = std::fs::canonicalize(EXAMPLES).unwrap();
    insta::assert_snapshot!(xml.replace(&root.display().to_string(), "[examples]"));
}

#[test]
fn diagnostics_for_a_broken_skill() {
    let text = "\u{feff}---\nname: PDF_Tools\ndescription: ''\nmetadata: [a]\nallowed-tools: [Read]\nargument-hint: x\nnonsense: 1\nnonsense: 2\n---\n";
    let mut out = String::new();
    for profile in [Profile::Spec, Profile::Lenient] {
        out.push_str(&format!("## {}\n", profile.as_str()));
        let parsed =
            SkillMd::parse_str(text, Some("pdf-tools"), &ParseOptions::for_profile(profile));
        for d in parsed.diagnostics {
            out.push_str(&format!("{d}\n"));
        }
    }
    insta::assert_snapshot!(out);
}
