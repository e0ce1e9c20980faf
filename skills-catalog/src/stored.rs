//! A stored skill with its files: what materialization, sync and export read.

use std::collections::BTreeMap;

use skills_store_traits::{SkillFileRecord, SkillRecord, SkillStore, TenantId};

use crate::error::{Error, Result};
use crate::tree;

/// A skill record and its supporting files, as read from the store.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct StoredSkill {
    /// The record (its `content` is `SKILL.md`).
    pub record: SkillRecord,
    /// Its files, ordered by path.
    pub files: Vec<SkillFileRecord>,
}

impl StoredSkill {
    /// Reads a skill and its files; [`skills_store_traits::Error::NotFound`] when absent.
    pub async fn load(store: &dyn SkillStore, tenant: &TenantId, skill_id: &str) -> Result<Self> {
        let record = store
            .find_skill_by_id(tenant, skill_id)
            .await?
            .ok_or_else(|| skills_store_traits::Error::not_found("skill", skill_id))?;
        Self::with_files(store, tenant, record).await
    }

    /// Reads the files of a record already in hand.
    pub async fn with_files(
        store: &dyn SkillStore,
        tenant: &TenantId,
        record: SkillRecord,
    ) -> Result<Self> {
        let files = store.list_skill_files(tenant, &record.id).await?;
        Ok(StoredSkill { record, files })
    }

    /// Every file to write, `SKILL.md` first, as (relative path, bytes). Paths are checked
    /// again here so a misbehaving backend cannot smuggle `..` into a write.
    pub fn file_bytes(&self) -> Result<Vec<(String, Vec<u8>)>> {
        let mut out = Vec::with_capacity(self.files.len() + 1);
        out.push((
            skills_core::SKILL_MD.to_owned(),
            self.record.content.clone().into_bytes(),
        ));
        for file in &self.files {
            skills_store_traits::validate::check_relative_path(
                "relative_path",
                &file.relative_path,
            )
            .map_err(Error::Store)?;
            out.push((
                file.relative_path.clone(),
                file.content.clone().into_bytes(),
            ));
        }
        Ok(out)
    }

    /// Path to SHA-256 of every file the skill's directory must hold, from the stored
    /// checksums.
    pub fn expected_hashes(&self) -> BTreeMap<String, String> {
        tree::expected_hashes(
            &self.record.checksum,
            self.files
                .iter()
                .map(|f| (f.relative_path.as_str(), f.checksum.as_str())),
        )
    }

    /// The skill's digest over all its files (skills-core's `skill_digest`), stable across
    /// backends: it changes exactly when a file's content or path changes.
    pub fn digest(&self) -> String {
        let content_size = self.record.content.len() as u64;
        let records = std::iter::once((
            skills_core::SKILL_MD,
            content_size,
            self.record.checksum.as_str(),
        ))
        .chain(
            self.files
                .iter()
                .map(|f| (f.relative_path.as_str(), f.size_bytes, f.checksum.as_str())),
        );
        skills_core::files::skill_digest(records)
    }
}
