//! Arbitrary bytes into the portable JSON importer: never a panic, and whatever it accepts
//! is valid for the store (it imports into an in-memory store and exports back to the same
//! document).
#![no_main]

use libfuzzer_sys::fuzz_target;
use skills_catalog::portable::{self, ExportMetadata, ImportOptions};
use skills_store_traits::{in_memory::InMemorySkillStore, TenantId};

fuzz_target!(|data: &[u8]| {
    let options = ImportOptions::default();
    let Ok(document) = portable::parse_json(data, &options) else {
        return;
    };
    let store = InMemorySkillStore::new();
    let tenant = TenantId::new("fuzz");
    futures::executor::block_on(async {
        let imported = portable::import(&store, &tenant, document.clone(), &options)
            .await
            .expect("a parsed document imports");
        let exported = portable::export(&store, &tenant, &imported.skill.id, ExportMetadata::default())
            .await
            .expect("an imported skill exports");
        assert_eq!(exported.skill.content, document.skill.content);
        assert_eq!(exported.skill.files.len(), document.skill.files.len());
    });
});
