//! The record of wrapped entries, `<state>/hosts/wrapped.json` (0600): for each file, what each
//! wrapped entry was before (so `unwrap` restores keys the wrapped form had to drop), and for
//! each write, the backup of the text before it and the digest of the text it left, so that
//! unwrapping what one write wrapped, on a file nobody changed since, gives back the earlier
//! file byte for byte.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{EntryAt, HostId, HostsError};
use crate::paths;

/// The whole record.
#[derive(Debug, Default, Serialize, Deserialize)]
pub struct Manifest {
    /// Per file (its resolved path).
    pub files: BTreeMap<PathBuf, FileRecord>,
}

/// What was wrapped in one file.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct FileRecord {
    /// The host the file belongs to.
    pub host: HostId,
    /// The wrapped entries and what each was.
    pub entries: Vec<WrappedEntry>,
    /// The writes of `wrap`, oldest first.
    pub writes: Vec<Write>,
}

/// One wrapped entry.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct WrappedEntry {
    /// Where it is.
    pub at: EntryAt,
    /// The entry as it was before `wrap`.
    pub original: Value,
}

/// One write of `wrap`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Write {
    /// The backup holding the text before the write.
    pub backup: PathBuf,
    /// The digest of the text the write left.
    pub after: String,
    /// The entries it wrapped.
    pub entries: Vec<EntryAt>,
}

impl Manifest {
    /// `<state>/hosts/wrapped.json`.
    pub fn path(state: &Path) -> PathBuf {
        state.join("hosts").join("wrapped.json")
    }

    /// Loads the record (empty when there is none).
    ///
    /// # Errors
    /// [`HostsError::Manifest`] when it is unreadable or not valid.
    pub fn load(state: &Path) -> Result<Manifest, HostsError> {
        let path = Self::path(state);
        if !path.exists() {
            return Ok(Manifest::default());
        }
        let bad = |why: String| HostsError::Manifest {
            path: path.clone(),
            why,
        };
        let text = paths::read_private(&path).map_err(|e| bad(e.to_string()))?;
        serde_json::from_str(&text).map_err(|e| bad(e.to_string()))
    }

    /// Saves the record (0600, replaced atomically).
    ///
    /// # Errors
    /// [`HostsError::Manifest`] when it cannot be written.
    pub fn save(&self, state: &Path) -> Result<(), HostsError> {
        let path = Self::path(state);
        super::file::hosts_dir(state)?;
        let text = serde_json::to_string_pretty(self).map_err(|e| HostsError::Manifest {
            path: path.clone(),
            why: e.to_string(),
        })?;
        paths::write_private(&path, &text).map_err(|e| HostsError::Manifest {
            path,
            why: e.to_string(),
        })
    }

    /// The original of a wrapped entry, if recorded.
    pub fn original(&self, file: &Path, at: &EntryAt) -> Option<&Value> {
        let record = self.files.get(file)?;
        record
            .entries
            .iter()
            .find(|e| e.at == *at)
            .map(|e| &e.original)
    }
}
