//! Installing untrusted agent skills: from a source, through validation, a security scan
//! and an integrity digest, to a stored skill at a known trust level — with versions,
//! approval, rollback and publishing.
//!
//! # The pipeline
//!
//! [`Installer::install`] runs, in order:
//!
//! 1. **fetch** — a [`SkillSource`] returns a [`SkillPackage`]: paths checked, sizes and
//!    counts capped;
//! 2. **validate** — the Spec profile of `skills-core`, every diagnostic collected; any error
//!    refuses with the full list ([`Error::Invalid`]);
//! 3. **scan** — `skills-security`'s static scanner; a block verdict refuses unless an
//!    administrator overrides it, a review verdict stores the skill disabled until approved;
//! 4. **digest** — `sha256:` of every file and of the package ([`digest`]); an expected
//!    digest that differs refuses with both ([`Error::DigestMismatch`]);
//! 5. **trust** — a trusted source gives `verified` (only if the scan does not block), a
//!    tenant-authored skill `user`, anything else `community`;
//! 6. **store** — the skill and its files, then the package and its first version;
//! 7. **audit** — one record on the tenant's hash-chained trail.
//!
//! A failure at any step leaves the stores as they were: writes are undone in reverse
//! order. Updates, approvals, upgrades, rollbacks and deprecations follow the same rule;
//! see [`Installer`].
//!
//! An operator's own actions are audited one record each: [`Installer::disable`] (a hold
//! that every update, approval, upgrade and rollback keeps, lifted only by
//! [`Installer::enable`], which never switches on an install still awaiting approval),
//! [`Installer::set_trust`], [`Installer::assign`] and [`Installer::unassign`].
//!
//! # Sources
//!
//! | source | reads |
//! |---|---|
//! | [`LocalSource`] | `<root>/<name>/SKILL.md` directories |
//! | [`ArchiveSource`] | one portable JSON document or `.tar.gz` |
//! | [`GitHubSource`] | a git host's REST API through the host's [`HttpClient`] |
//! | [`NpmSource`] | an npm registry through the host's [`HttpClient`] |
//!
//! This crate opens no network connections itself and picks no async runtime.

mod base64;
pub mod digest;
mod error;
pub mod http;
mod install;
mod package;
pub mod publish;
pub mod scan;
pub mod source;
pub mod validate;

pub use error::{Error, Result};
pub use http::{HttpClient, HttpError, HttpRequest, HttpResponse, Method};
pub use install::{
    INSTALL_METADATA_KEY, InstallRequest, Installed, Installer, InstallerBuilder, Operated,
    SwitchOutcome, UpdateOutcome, Updated, install_metadata,
};
pub use package::{
    PackageFile, PackageLimits, SkillPackage, SkillRef, SourceIdentity, SourceKind,
    check_package_path,
};
pub use publish::PublishedPackage;
pub use scan::PackageScanner;
pub use source::{ArchiveSource, GitHubSource, LocalSource, NpmSource, SkillSource};
