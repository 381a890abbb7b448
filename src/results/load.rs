//! Reading a results document: results.json, then the runs in results.journal that it does not
//! hold yet. Statistics and warnings are recomputed by this version's rules: the runs are the
//! record.

use super::journal::replay;
use super::{FILE_NAME, Results, SCHEMA_VERSION};
use serde::Deserialize;
use std::path::{Path, PathBuf};

/// Why a results file could not be read.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    /// The file or folder is missing or unreadable.
    #[error("cannot read {path}")]
    Unreadable {
        /// What was asked for.
        path: String,
        /// What the system said.
        source: std::io::Error,
    },
    /// The file is not a scalescope results document.
    #[error("{path} is not a scalescope results file: {reason}")]
    Invalid {
        /// What was asked for.
        path: String,
        /// What is wrong with it.
        reason: String,
    },
    /// Written by a newer scalescope.
    #[error(
        "{path} has results schema version {found}; this scalescope ({ours}) reads up to version {SCHEMA_VERSION}: install a newer scalescope to read it"
    )]
    TooNew {
        /// What was asked for.
        path: String,
        /// Its schema version.
        found: u64,
        /// This build's version.
        ours: &'static str,
    },
    /// Older than any layout this build reads.
    #[error(
        "{path} has results schema version {found}, older than this scalescope reads (versions {OLDEST_SCHEMA} to {SCHEMA_VERSION}): open it with the scalescope that wrote it (its scalescope_version), or run the sweep again"
    )]
    TooOld {
        /// What was asked for.
        path: String,
        /// Its schema version.
        found: u64,
    },
}

/// The oldest results layout this build reads.
pub const OLDEST_SCHEMA: u64 = 1;

/// Reads a results document from a file or from the results.json in a folder.
pub fn load(path: &Path) -> Result<(PathBuf, Results), LoadError> {
    let file = if path.is_dir() { path.join(FILE_NAME) } else { path.to_path_buf() };
    let shown = file.display().to_string();
    let bytes = std::fs::read(&file)
        .map_err(|source| LoadError::Unreadable { path: shown.clone(), source })?;
    let invalid =
        |e: serde_json::Error| LoadError::Invalid { path: shown.clone(), reason: e.to_string() };
    // The version first, without building the document: a large file is read into its types once.
    let object = bytes.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'{');
    let version = if object {
        serde_json::from_slice::<Head>(&bytes).map_err(invalid)?.schema_version
    } else {
        None
    };
    match version {
        None => {
            return Err(LoadError::Invalid {
                path: shown,
                reason: "it has no schema_version".into(),
            });
        }
        Some(v) if v > SCHEMA_VERSION as u64 => {
            return Err(LoadError::TooNew {
                path: shown,
                found: v,
                ours: env!("CARGO_PKG_VERSION"),
            });
        }
        Some(v) if v < OLDEST_SCHEMA => return Err(LoadError::TooOld { path: shown, found: v }),
        _ => {}
    }
    // The runs are the record: statistics and warnings are computed by this version's rules.
    let mut doc: Results = if version == Some(1) {
        // Version 1 stored the analysis and findings untyped, and no axis: they are made again.
        let mut value: serde_json::Value = serde_json::from_slice(&bytes).map_err(invalid)?;
        if let Some(o) = value.as_object_mut() {
            o.remove("analysis");
            o.remove("findings");
        }
        serde_json::from_value(value).map_err(invalid)?
    } else {
        serde_json::from_slice(&bytes).map_err(invalid)?
    };
    drop(bytes);
    // Read in this build's layout, it is written back in it.
    doc.schema_version = SCHEMA_VERSION;
    if doc.plan.axis.is_none() {
        // Written before the axis was stored: decided now by the same rules (none if they no longer hold).
        doc.plan.axis = doc.plan.axis_with(None, false, false).unwrap_or_default();
    }
    let dir = file.parent().map_or_else(|| PathBuf::from("."), Path::to_path_buf);
    replay(&dir, &mut doc);
    Ok((dir, doc))
}

/// What is read of a results file before the rest.
#[derive(Deserialize)]
struct Head {
    schema_version: Option<u64>,
}
