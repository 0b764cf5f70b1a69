//! The file-system side of a SQLite journal: the one regular-file check every
//! reader and writer opens through, owner-only creation, the `file:` URI of a
//! read-only open, and the private copy a WAL journal on read-only media is read
//! from.

use std::path::{Path, PathBuf};

use crate::{Access, Error};

/// `path` with `suffix` appended (`journal.db-wal`).
pub(crate) fn sidecar(path: &Path, suffix: &str) -> PathBuf {
    let mut s = path.as_os_str().to_owned();
    s.push(suffix);
    PathBuf::from(s)
}

/// A private copy of a journal and its write-ahead log, removed on drop.
pub(crate) struct PrivateCopy {
    dir: PathBuf,
    pub(crate) db: PathBuf,
}

impl PrivateCopy {
    pub(super) fn make(path: &Path, wal: &Path) -> Result<Self, Error> {
        let mut nonce = [0u8; 8];
        let _ = getrandom::fill(&mut nonce);
        let dir = std::env::temp_dir().join(format!(
            "cairn-read-{}-{}",
            std::process::id(),
            hex::encode(nonce)
        ));
        let io = |p: &Path| {
            let p = p.to_owned();
            move |source| Error::Io { path: p, source }
        };
        #[cfg(unix)]
        {
            use std::os::unix::fs::DirBuilderExt;
            std::fs::DirBuilder::new()
                .mode(0o700)
                .create(&dir)
                .map_err(io(&dir))?;
        }
        #[cfg(not(unix))]
        std::fs::create_dir(&dir).map_err(io(&dir))?;
        let copy = Self {
            db: dir.join("journal.db"),
            dir,
        };
        std::fs::copy(path, &copy.db).map_err(io(path))?;
        std::fs::copy(wal, sidecar(&copy.db, "-wal")).map_err(io(wal))?;
        Ok(copy)
    }
}

impl Drop for PrivateCopy {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// The metadata of the journal file at `path`, refusing what a journal cannot be: a
/// symbolic link, a directory, anything but a regular file. A missing file is
/// [`Error::Missing`]; every reader and writer opens through this one check.
pub(super) fn regular_file(path: &Path) -> Result<std::fs::Metadata, Error> {
    let not_journal = |reason: &str| Error::NotAJournal {
        path: path.to_owned(),
        reason: reason.to_owned(),
    };
    match std::fs::symlink_metadata(path) {
        Ok(meta) if meta.file_type().is_symlink() => {
            Err(not_journal("it is a symbolic link; name the file itself"))
        }
        Ok(meta) if meta.is_dir() => Err(not_journal("it is a directory")),
        Ok(meta) if !meta.is_file() => Err(not_journal("it is not a regular file")),
        Ok(meta) => Ok(meta),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Err(Error::Missing {
            path: path.to_owned(),
        }),
        Err(source) => Err(Error::Io {
            path: path.to_owned(),
            source,
        }),
    }
}

/// `file:` URI of `path` for SQLite, percent-encoding what a URI reserves.
pub(super) fn file_uri(path: &Path, access: Access) -> String {
    let mut uri = String::from("file:");
    // The path's own bytes, each outside the safe set percent-encoded: a name
    // that is not UTF-8 is opened as itself (a lossy conversion opened the
    // file whose name has U+FFFD there instead: helper-47).
    #[cfg(unix)]
    let bytes = std::os::unix::ffi::OsStrExt::as_bytes(path.as_os_str()).to_vec();
    #[cfg(not(unix))]
    let bytes = path.to_string_lossy().into_owned().into_bytes();
    for b in bytes {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'/' | b'-' | b'_' | b'.' | b'~' => {
                uri.push(b as char)
            }
            other => uri.push_str(&format!("%{other:02X}")),
        }
    }
    uri.push_str(match access {
        Access::Immutable => "?mode=ro&immutable=1",
        Access::ReadOnly | Access::ReadWrite | Access::Copy => "?mode=ro",
    });
    uri
}

#[cfg(unix)]
pub(super) fn create_owner_only(path: &Path) -> Result<(), Error> {
    use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
    let io = |p: &Path| {
        let p = p.to_owned();
        move |source| Error::Io { path: p, source }
    };
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        if !parent.exists() {
            std::fs::DirBuilder::new()
                .recursive(true)
                .mode(0o700)
                .create(parent)
                .map_err(io(parent))?;
        }
    }
    match std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)
    {
        Ok(_) => Ok(()),
        // Another process created it first: fine, it is opened below like any existing file.
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(()),
        Err(e) => Err(io(path)(e)),
    }
}

#[cfg(not(unix))]
pub(super) fn create_owner_only(path: &Path) -> Result<(), Error> {
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent).map_err(|source| Error::Io {
            path: parent.to_owned(),
            source,
        })?;
    }
    std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .open(path)
        .map(|_| ())
        .map_err(|source| Error::Io {
            path: path.to_owned(),
            source,
        })
}
