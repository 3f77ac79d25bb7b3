//! The owner-only state layout: `<state>/` and `<state>/broker/` are 0700;
//! `broker/broker.db` with its `-wal`/`-shm`, `api-token` and `service-url` are 0600. Looser
//! modes of an existing install are tightened on open; if that fails, startup fails naming the
//! path. Every file and directory the service opens or tightens here is opened without following
//! a symlink and must belong to the user running it: a symlink or a foreign owner is refused,
//! naming the path (a local attacker must not redirect a chmod or a token read).

use std::fs::{self, OpenOptions, Permissions};
use std::io::Write;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

/// A path could not be created, read or made owner-only.
#[derive(Debug, thiserror::Error)]
pub enum PathError {
    /// The path is a symbolic link; the state directory holds none.
    #[error("{path} is a symbolic link; mcp-consent does not follow links in its state directory")]
    Symlink {
        /// The path concerned.
        path: PathBuf,
    },
    /// The path belongs to another user.
    #[error("{path} belongs to user {owner}, not to the user running mcp-consent")]
    ForeignOwner {
        /// The path concerned.
        path: PathBuf,
        /// Its owner's uid.
        owner: u32,
    },
    /// A secret file others may read or write (any group or other permission bit).
    #[error("{path} has mode {mode:04o}; a secret file must be owner-only (chmod 600 {path})")]
    NotOwnerOnly {
        /// The path concerned.
        path: PathBuf,
        /// Its permission bits.
        mode: u32,
    },
    /// A file (or a directory above one) that others may write, so they could change it or
    /// replace it.
    #[error("{path} has mode {mode:04o}; others may change it (chmod go-w {path})")]
    OthersMayWrite {
        /// The path concerned.
        path: PathBuf,
        /// Its permission bits.
        mode: u32,
    },
    /// A link that leads to another user's file.
    #[error("{link} is a link to {target}, which belongs to user {owner}")]
    LinkToForeign {
        /// The link.
        link: PathBuf,
        /// Where it leads.
        target: PathBuf,
        /// The target's owner's uid.
        owner: u32,
    },
    /// Not a regular file (a directory, a device, a pipe).
    #[error("{path} is not a regular file")]
    NotAFile {
        /// The path concerned.
        path: PathBuf,
    },
    /// No `--state-dir`, no `MCP_CONSENT_STATE_DIR`, and no home directory to derive one from.
    #[error("cannot find a state directory: set --state-dir or MCP_CONSENT_STATE_DIR")]
    NoStateDir,
    /// An I/O operation on `path` failed.
    #[error("{action} {path}")]
    Io {
        /// What was being done ("cannot create", "cannot tighten the mode of", …).
        action: &'static str,
        /// The path concerned.
        path: PathBuf,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
}

fn io(action: &'static str, path: &Path) -> impl FnOnce(std::io::Error) -> PathError {
    let path = path.to_path_buf();
    move |source| PathError::Io {
        action,
        path,
        source,
    }
}

/// The state directory of one user's service.
#[derive(Debug, Clone)]
pub struct StateDir {
    root: PathBuf,
}

impl StateDir {
    /// The default state directory: `$XDG_STATE_HOME/mcp-consent` (`~/.local/state/…`), on
    /// macOS `~/Library/Application Support/mcp-consent`.
    ///
    /// # Errors
    /// [`PathError::NoStateDir`] when no home directory is known.
    pub fn default_root() -> Result<PathBuf, PathError> {
        dirs::state_dir()
            .or_else(dirs::data_dir)
            .map(|d| d.join("mcp-consent"))
            .ok_or(PathError::NoStateDir)
    }

    /// Names the state directory without touching the disk (for client commands that only read
    /// `service-url` and `api-token`).
    pub fn at(root: PathBuf) -> StateDir {
        StateDir { root }
    }

    /// Creates (or tightens) `<root>` and `<root>/broker` as 0700 and tightens every file the
    /// service keeps there to 0600. Every directory above `<root>` must belong to the user or
    /// root and be writable by nobody else unless sticky (`/tmp`).
    ///
    /// # Errors
    /// [`PathError::Io`] naming the path that could not be created or tightened;
    /// [`PathError::ForeignOwner`] or [`PathError::OthersMayWrite`] for a directory above.
    pub fn prepare(root: PathBuf) -> Result<StateDir, PathError> {
        let dir = StateDir { root };
        // Another user who may rename what lies above the state directory could swap it for
        // one of theirs (clients would refuse it, but the service would be gone). Checked
        // before anything is created, and on the real path too: a link must not lead into
        // another user's directory.
        check_directories(&dir.root)?;
        check_real_directories(&dir.root)?;
        for d in [dir.root.clone(), dir.broker_dir()] {
            fs::create_dir_all(&d).map_err(io("cannot create", &d))?;
            tighten(&d, 0o700)?;
        }
        let real = fs::canonicalize(&dir.root).map_err(io("cannot resolve", &dir.root))?;
        check_directories(&real)?;
        let db = dir.db_file();
        if !db.exists() {
            // SQLite copies the db file's mode to -wal/-shm, so the file exists 0600 before
            // SQLite first opens it.
            OpenOptions::new()
                .create_new(true)
                .write(true)
                .mode(0o600)
                .open(&db)
                .map_err(io("cannot create", &db))?;
        }
        dir.tighten_files()?;
        Ok(dir)
    }

    /// Tightens every existing file of the store to 0600.
    ///
    /// # Errors
    /// [`PathError::Io`] naming the file.
    pub fn tighten_files(&self) -> Result<(), PathError> {
        let db = self.db_file();
        let mut files = vec![
            db.clone(),
            with_suffix(&db, "-wal"),
            with_suffix(&db, "-shm"),
            self.api_token_file(),
            self.service_url_file(),
        ];
        files.retain(|f| f.exists());
        for f in files {
            tighten(&f, 0o600)?;
        }
        Ok(())
    }

    /// `<state>`.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// `<state>/broker`.
    pub fn broker_dir(&self) -> PathBuf {
        self.root.join("broker")
    }

    /// `<state>/broker/broker.db`.
    pub fn db_file(&self) -> PathBuf {
        self.broker_dir().join("broker.db")
    }

    /// `<state>/broker/api.sock`: the owner-only Unix socket local clients use (0600, inside
    /// the 0700 directory).
    pub fn api_socket(&self) -> PathBuf {
        self.broker_dir().join("api.sock")
    }

    /// `<state>/api-token`: the local API bearer token (0600).
    pub fn api_token_file(&self) -> PathBuf {
        self.root.join("api-token")
    }

    /// `<state>/service-url`: where the running service listens.
    pub fn service_url_file(&self) -> PathBuf {
        self.root.join("service-url")
    }
}

/// `<root>/config-path`: the absolute path of the config file the running service read (0600),
/// so a proxy that cannot reach the service judges tool calls by that same file. Absent while
/// the service runs on the defaults.
pub fn config_path_file(root: &Path) -> PathBuf {
    root.join("config-path")
}

fn with_suffix(path: &Path, suffix: &str) -> PathBuf {
    let mut s = path.as_os_str().to_owned();
    s.push(suffix);
    PathBuf::from(s)
}

/// Every directory above `path` must belong to the user or root and, when others may write
/// it, be sticky (so they cannot rename or replace what is in it).
///
/// # Errors
/// [`PathError::ForeignOwner`] or [`PathError::OthersMayWrite`] naming the directory.
pub fn check_directories(path: &Path) -> Result<(), PathError> {
    for dir in path.ancestors().skip(1) {
        if dir.as_os_str().is_empty() {
            continue;
        }
        let meta = fs::metadata(dir).map_err(io("cannot read", dir))?;
        if !trusted_owner(meta.uid()) {
            return Err(PathError::ForeignOwner {
                path: dir.to_path_buf(),
                owner: meta.uid(),
            });
        }
        let mode = meta.permissions().mode();
        if mode & 0o022 != 0 && mode & 0o1000 == 0 {
            return Err(PathError::OthersMayWrite {
                path: dir.to_path_buf(),
                mode: mode & 0o7777,
            });
        }
    }
    Ok(())
}

/// [`check_directories`] of where `path` really leads, before anything is created: the links
/// it names (and those they name) are followed, and the nearest part that exists and the
/// directories above it, as they really are, must be trusted.
///
/// # Errors
/// As [`check_directories`]; [`PathError::Io`] when a part cannot be resolved.
fn check_real_directories(path: &Path) -> Result<(), PathError> {
    let mut target = path.to_path_buf();
    // As the kernel does, give up on a chain of more than 40 links.
    for _ in 0..40 {
        let Ok(next) = fs::read_link(&target) else {
            break;
        };
        target = match target.parent() {
            Some(parent) => parent.join(next),
            None => next,
        };
    }
    let Some(existing) = target.ancestors().find(|a| a.exists()) else {
        return Ok(());
    };
    let real = fs::canonicalize(existing).map_err(io("cannot resolve", existing))?;
    if existing == target {
        // The directory itself exists: what lies above it (it is tightened itself).
        return check_directories(&real);
    }
    // Else the part that exists is checked too: what is created goes in it.
    check_directories(&real.join("state"))
}

/// Whether `uid` may own what the service trusts: the user running it, or root (the Nix store,
/// `/tmp`).
pub fn trusted_owner(uid: u32) -> bool {
    uid == my_uid() || uid == 0
}

/// The effective uid of the user running mcp-consent.
pub fn my_uid() -> u32 {
    // SAFETY: geteuid(2) has no preconditions and cannot fail.
    unsafe { libc::geteuid() }
}

/// Opens `path` for reading without following a final symlink, and checks that it belongs to
/// this user.
fn open_own(path: &Path, directory: bool) -> Result<fs::File, PathError> {
    let mut flags = libc::O_NOFOLLOW | libc::O_CLOEXEC;
    if directory {
        flags |= libc::O_DIRECTORY;
    }
    let file = OpenOptions::new()
        .read(true)
        .custom_flags(flags)
        .open(path)
        .map_err(|source| {
            if source.raw_os_error() == Some(libc::ELOOP) {
                PathError::Symlink {
                    path: path.to_path_buf(),
                }
            } else {
                io("cannot open", path)(source)
            }
        })?;
    let meta = file
        .metadata()
        .map_err(io("cannot read the mode of", path))?;
    if meta.uid() != my_uid() {
        return Err(PathError::ForeignOwner {
            path: path.to_path_buf(),
            owner: meta.uid(),
        });
    }
    Ok(file)
}

/// Sets `path` to `mode` if it is looser (any bit outside `mode`), through a descriptor opened
/// without following links (so the mode of a link's target is never changed).
fn tighten(path: &Path, mode: u32) -> Result<(), PathError> {
    let directory = fs::symlink_metadata(path)
        .map_err(io("cannot read the mode of", path))?
        .is_dir();
    let file = open_own(path, directory)?;
    let meta = file
        .metadata()
        .map_err(io("cannot read the mode of", path))?;
    if meta.permissions().mode() & 0o777 & !mode != 0 {
        file.set_permissions(Permissions::from_mode(mode))
            .map_err(io("cannot tighten the mode of", path))?;
    }
    Ok(())
}

/// Reads a small private file of the state directory (the API token, the service URL): not
/// through a symlink, and only if it belongs to this user.
///
/// # Errors
/// [`PathError::Symlink`], [`PathError::ForeignOwner`], or [`PathError::Io`] naming the file.
pub fn read_private(path: &Path) -> Result<String, PathError> {
    use std::io::Read;
    let mut file = open_own(path, false)?;
    let mut text = String::new();
    file.read_to_string(&mut text)
        .map_err(io("cannot read", path))?;
    Ok(text)
}

/// Writes `contents` to `path` as 0600, replacing it atomically (temp file + rename), so a
/// reader never sees a half-written token or URL; on failure the temp file is removed.
///
/// # Errors
/// [`PathError::Io`] naming the file.
pub fn write_private(path: &Path, contents: &str) -> Result<(), PathError> {
    let tmp = with_suffix(path, ".tmp");
    let _ = fs::remove_file(&tmp);
    let mut file = OpenOptions::new()
        .create_new(true)
        .write(true)
        .mode(0o600)
        .open(&tmp)
        .map_err(io("cannot create", &tmp))?;
    let written = file
        .write_all(contents.as_bytes())
        .and_then(|()| file.sync_all())
        .map_err(io("cannot write", &tmp))
        .and_then(|()| fs::rename(&tmp, path).map_err(io("cannot replace", path)));
    if written.is_err() {
        // A partial record (a secret's first bytes, say) must not stay behind.
        let _ = fs::remove_file(&tmp);
    }
    written
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mode(p: &Path) -> u32 {
        fs::metadata(p).unwrap().permissions().mode() & 0o777
    }

    #[test]
    fn prepare_creates_owner_only_layout_and_tightens_loose_modes() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("state");
        let dir = StateDir::prepare(root.clone()).unwrap();
        assert_eq!(mode(&root), 0o700);
        assert_eq!(mode(&dir.broker_dir()), 0o700);
        assert_eq!(mode(&dir.db_file()), 0o600);

        fs::set_permissions(&root, Permissions::from_mode(0o755)).unwrap();
        fs::set_permissions(dir.db_file(), Permissions::from_mode(0o644)).unwrap();
        fs::write(dir.api_token_file(), "x").unwrap();
        fs::set_permissions(dir.api_token_file(), Permissions::from_mode(0o644)).unwrap();
        StateDir::prepare(root.clone()).unwrap();
        assert_eq!(mode(&root), 0o700);
        assert_eq!(mode(&dir.db_file()), 0o600);
        assert_eq!(mode(&dir.api_token_file()), 0o600);
    }

    #[test]
    fn a_state_directory_others_could_swap_is_refused() {
        let tmp = tempfile::tempdir().unwrap();
        let shared = tmp.path().join("shared");
        fs::create_dir(&shared).unwrap();
        fs::set_permissions(&shared, Permissions::from_mode(0o777)).unwrap();
        let err = StateDir::prepare(shared.join("state")).unwrap_err();
        assert!(
            matches!(&err, PathError::OthersMayWrite { path, .. } if *path == shared),
            "{err}"
        );
        assert!(
            !shared.join("state").exists(),
            "created before it was refused"
        );
        // Reached through a link of the owner's own, the real path decides.
        let link = tmp.path().join("link");
        std::os::unix::fs::symlink(shared.join("target"), &link).unwrap();
        let err = StateDir::prepare(link).unwrap_err();
        assert!(
            matches!(&err, PathError::OthersMayWrite { path, .. } if *path == shared),
            "{err}"
        );
        assert!(
            !shared.join("target").exists(),
            "created before it was refused"
        );
        // Sticky, as /tmp is: nobody else can rename what is in it.
        fs::set_permissions(&shared, Permissions::from_mode(0o1777)).unwrap();
        StateDir::prepare(shared.join("state")).unwrap();
    }

    #[test]
    fn write_private_is_0600() {
        let tmp = tempfile::tempdir().unwrap();
        let f = tmp.path().join("token");
        write_private(&f, "secret").unwrap();
        assert_eq!(mode(&f), 0o600);
        assert_eq!(fs::read_to_string(&f).unwrap(), "secret");
    }

    #[test]
    fn symlinks_in_the_state_directory_are_refused_and_never_followed() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("state");
        let dir = StateDir::prepare(root.clone()).unwrap();
        let outside = tmp.path().join("outside");
        fs::write(&outside, "secret").unwrap();
        fs::set_permissions(&outside, Permissions::from_mode(0o644)).unwrap();
        std::os::unix::fs::symlink(&outside, dir.api_token_file()).unwrap();

        let err = StateDir::prepare(root).unwrap_err();
        assert!(
            matches!(err, PathError::Symlink { ref path } if *path == dir.api_token_file()),
            "{err}"
        );
        assert_eq!(mode(&outside), 0o644, "the link's target was not touched");
        assert!(matches!(
            read_private(&dir.api_token_file()),
            Err(PathError::Symlink { .. })
        ));
    }

    #[test]
    fn a_failed_write_leaves_no_temp_file() {
        let dir = tempfile::tempdir().unwrap();
        // A directory in the way: the rename fails after the secret was written to the temp.
        let target = dir.path().join("tokens.json");
        fs::create_dir(&target).unwrap();
        fs::write(target.join("keep"), "").unwrap();
        assert!(write_private(&target, "client-secret-1").is_err());
        assert!(!dir.path().join("tokens.json.tmp").exists());
    }
}
