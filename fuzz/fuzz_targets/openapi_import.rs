//! Arbitrary bytes into the OpenAPI and LangChain importers: never a panic, and every tool
//! they accept has a valid name, validates inputs and exports to every format (strict mode
//! may refuse a schema, with an error, never a panic).
#![no_main]

use libfuzzer_sys::fuzz_target;
use skills_core::tools::import::{from_langchain, from_openapi, ImportOptions};
use skills_core::tools::{export, is_valid_tool_name, ExportOptions, Tool, ToolFormat};

fn exercise(tools: &[Tool]) {
    for tool in tools {
        assert!(is_valid_tool_name(tool.name()));
        let _ = tool.validate_input(tool.input_schema());
        let _ = tool.strict_input_schema();
    }
    for format in ToolFormat::ALL {
        for strict in [false, true] {
            let options = ExportOptions::new().skill("fuzz").strict(strict);
            if let Ok(out) = export(tools, format, &options) {
                assert_eq!(out.as_array().map(Vec::len), Some(tools.len()));
            }
        }
    }
}

fuzz_target!(|data: &[u8]| {
    let options = ImportOptions::default();
    if let Ok(import) = from_openapi(data, &options) {
        exercise(&import.into_tools());
    }
    if let Ok(tools) = from_langchain(data, &options) {
        exercise(&tools);
    }
});
