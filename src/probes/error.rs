//! Why a probe over files could not run: a size the user gave, a file it cannot open or read, or
//! a reader thread that failed.

use std::io;
use std::path::PathBuf;

/// What stopped `readspeed` or `overlap`.
#[derive(Debug, thiserror::Error)]
pub enum ProbeError {
    /// `--block` not a multiple of 4 KiB.
    #[error("--block {0}: give a multiple of 4 KiB, e.g. 256KiB")]
    Block(usize),
    /// `--chunk` not a multiple of the unit the probe reads in.
    #[error("--chunk {chunk}: give a multiple of {unit}")]
    Chunk {
        /// As given, in bytes.
        chunk: u64,
        /// The unit, in words (`the block size (4096)`).
        unit: String,
    },
    /// The filesystem refuses `O_DIRECT`.
    #[error(
        "the filesystem holding {0} refuses O_DIRECT (tmpfs does); use --mode pread or --mode mmap"
    )]
    NoDirect(PathBuf),
    /// A file could not be opened, measured or mapped.
    #[error("cannot {what} {path}")]
    Open {
        /// `open`, `map`, or `measure`.
        what: &'static str,
        /// The file.
        path: PathBuf,
        /// What the system said.
        #[source]
        source: io::Error,
    },
    /// Reading a file failed part-way.
    #[error("reading {path}")]
    Read {
        /// The file.
        path: PathBuf,
        /// What the system said.
        #[source]
        source: io::Error,
    },
    /// `overlap` met bytes that are not events.
    #[error(
        "{path} at byte {at}: not an event file (make some with: scalescope gen files --dir DIR)"
    )]
    NotEvents {
        /// The file.
        path: PathBuf,
        /// Offset of the first byte that is not an event.
        at: u64,
    },
    /// A reader or builder thread panicked.
    #[error("a {0} thread panicked")]
    Panicked(&'static str),
}

impl ProbeError {
    /// Whether the user can fix it by asking differently (exit code 2): a size, a mode the
    /// filesystem refuses, a file that is missing, unreadable or of the wrong kind.
    pub fn is_user_mistake(&self) -> bool {
        match self {
            ProbeError::Block(_)
            | ProbeError::Chunk { .. }
            | ProbeError::NoDirect(_)
            | ProbeError::NotEvents { .. } => true,
            ProbeError::Open { source, .. } => {
                matches!(
                    source.kind(),
                    io::ErrorKind::NotFound
                        | io::ErrorKind::PermissionDenied
                        | io::ErrorKind::IsADirectory
                )
            }
            ProbeError::Read { .. } | ProbeError::Panicked(_) => false,
        }
    }
}
