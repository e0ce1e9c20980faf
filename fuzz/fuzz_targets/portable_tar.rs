//! Arbitrary bytes into the tar.gz importer, both as given and wrapped in a gzip header so
//! the tar reader is reached: never a panic, and an accepted archive is a valid skill.
#![no_main]

use libfuzzer_sys::fuzz_target;
use skills_catalog::portable::{archive, to_new_skill, ImportOptions};

fuzz_target!(|data: &[u8]| {
    let options = ImportOptions::default();
    if let Ok(document) = archive::from_tar_gz(data, &options) {
        to_new_skill(&document, &options.limits).expect("an accepted archive is valid");
    }
    // Most random bytes are not gzip: compress them so the tar parser sees them too.
    use std::io::Write;
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    if encoder.write_all(data).is_ok() {
        if let Ok(gz) = encoder.finish() {
            if let Ok(document) = archive::from_tar_gz(&gz, &options) {
                to_new_skill(&document, &options.limits).expect("an accepted archive is valid");
            }
        }
    }
});
