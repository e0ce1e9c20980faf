//! The scan step: the installer asks a [`PackageScanner`] about every package before it is
//! stored. The default is `skills-security`'s static [`Scanner`]; a host may put its own (or
//! a remote service) behind the trait.

use skills_security::scan::{ScanFile, ScanReport, Scanner};

use crate::error::Result;
use crate::package::SkillPackage;

/// Scans a fetched package. Object-safe: held as `Arc<dyn PackageScanner>`.
pub trait PackageScanner: Send + Sync {
    /// The report on `package`; an `Err` stops the install (the package is not stored).
    fn scan(&self, package: &SkillPackage) -> Result<ScanReport>;
}

impl PackageScanner for Scanner {
    fn scan(&self, package: &SkillPackage) -> Result<ScanReport> {
        let files: Vec<ScanFile<'_>> = package
            .files()
            .iter()
            .map(|f| ScanFile::new(&f.path, &f.bytes))
            .collect();
        Ok(self.scan_files(package.name(), &files))
    }
}
